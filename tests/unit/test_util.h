/*
 * Helpers shared by the unit tests: a libyang context with the standard
 * modules the simulator loads, and paths into the source tree.
 */
#ifndef FLEET_TEST_UTIL_H
#define FLEET_TEST_UTIL_H

#include <libyang/libyang.h>

/* Where Debian's libyuma-base keeps the IETF modules. */
#define TU_YUMA_IETF_DIR "/usr/share/yuma/modules/ietf"
#define TU_YUMA_NMDA_DIR "/usr/share/yuma/nmda-modules/ietf"

/**
 * @brief New context with ietf-interfaces@2018-02-20, iana-if-type and
 * ietf-netconf (with its features) implemented, plus @p extra_yang if not NULL.
 * Fails the running test on error. Free with ly_ctx_destroy().
 */
struct ly_ctx *tu_ctx_new(const char *extra_yang);

/** @brief Parse XML data (LYD_PARSE_ONLY-free, fully validated); fails the test on error. */
struct lyd_node *tu_parse_data(struct ly_ctx *ctx, const char *xml);

/** @brief Print a tree (all siblings) to a malloc'd XML string without whitespace. */
char *tu_print(const struct lyd_node *tree);

#endif
