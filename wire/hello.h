/*
 * NETCONF <hello> (RFC 6241 section 8.1): building our hello and reading the
 * peer's. Shared by the simulator (server side) and the stress client.
 * XML is read with libyang's opaque parser, so no schema is needed.
 */
#ifndef FLEET_HELLO_H
#define FLEET_HELLO_H

#include <stddef.h>
#include <stdint.h>

#include <libyang/libyang.h>

#include "err.h"

#define HELLO_CAP_BASE10 "urn:ietf:params:netconf:base:1.0"
#define HELLO_CAP_BASE11 "urn:ietf:params:netconf:base:1.1"
/* Most capabilities we keep from one hello; more is refused as malformed. */
#define HELLO_MAX_CAPS 4096

/* What a peer's hello said. */
struct hello_info {
    char **caps;         /* capability URIs, trimmed of surrounding whitespace, owned */
    size_t cap_count;    /* entries in caps */
    uint32_t session_id; /* session-id element (server hellos), 0 when absent */
    int has_session_id;  /* 1 when a session-id element was present */
    int base10;          /* 1 when base:1.0 was offered */
    int base11;          /* 1 when base:1.1 was offered */
};

/**
 * @brief Print a hello message (XML only, no framing).
 * @param[in] caps Capability URIs; they are XML-escaped on output.
 * @param[in] cap_count Number of entries.
 * @param[in] session_id Server hellos carry it; 0 prints no session-id (client hello).
 * @param[out] out Malloc'd NUL-terminated XML; the caller frees it.
 * @param[out] out_len Its length.
 */
enum fleet_err hello_build(const char *const *caps, size_t cap_count, uint32_t session_id, char **out,
                           size_t *out_len);

/**
 * @brief Read a peer's hello.
 * @param[in] ctx Any libyang context (used for its opaque XML parser only).
 * @param[in] xml The message, NUL-terminated.
 * @param[out] info Filled on success; release with hello_info_free().
 * @param[out] err On failure, a message naming the problem (not well-formed XML,
 *             not a hello in the base namespace, no capabilities, a session-id that
 *             is not a number in 1..4294967295, too many capabilities).
 * @param[in] err_len Size of @p err.
 * @return FLEET_OK, FLEET_ERR_INVAL or FLEET_ERR_NOMEM.
 */
enum fleet_err hello_parse(struct ly_ctx *ctx, const char *xml, struct hello_info *info, char *err,
                           size_t err_len);

/** @brief Free what hello_parse() filled. Accepts NULL and zeroed structs. */
void hello_info_free(struct hello_info *info);

/** @return 1 when @p info lists capability @p uri (compared up to any '?' query part of the listed one). */
int hello_has_cap(const struct hello_info *info, const char *uri);

#endif
