/*
 * A trap log as snmptrapd -Lf writes it with its default formats: each
 * notification begins with a line "YYYY-MM-DD hh:mm:ss HOST [UDP: [ADDR]:PORT
 * ->[ADDR]:PORT]:" (v1: "... HOST [UDP: [ADDR]:PORT->...]: ..." with the
 * trap on the same line; IPv6: "UDP/IPv6: [ADDR]:PORT"), and its varbinds
 * follow, tab-separated, on the next line. The source of a notification is
 * the UDP source address, or the sysName.0 varbind when it carries one
 * (fleetsim appends it to a named origin's objects); with fleetsim's
 * --run-tag, fleetsimRunTag.0 (1.3.6.1.4.1.32473.1.2.0) follows it.
 */
#ifndef STRESS_RECV_SNMPTRAPD_H
#define STRESS_RECV_SNMPTRAPD_H

#include <stddef.h>

/* Longest address text accepted between the brackets (an IPv6 address with an IPv4 tail is 45). */
#define RECV_TRAPD_ADDR_MAX_BYTES 45

/**
 * @brief Whether @p line begins a notification, and from which address.
 * @param[out] addr The source address's text (into @p line), on success.
 * @param[out] addr_len Its bytes.
 * @return 1 for a notification's first line, 0 for any other line.
 */
int recv_trapd_header(const char *line, size_t len, const char **addr, size_t *addr_len);

/**
 * @brief Find the sysName.0 varbind (symbolic or -On numeric, "STRING: x" or "STRING: \"x\"") in a line.
 * @param[out] name Its value (into @p line, quotes left out), on success.
 * @param[out] name_len Its bytes (1..255).
 * @return 1 when found, else 0.
 */
int recv_trapd_sysname(const char *line, size_t len, const char **name, size_t *name_len);

/**
 * @brief Find fleetsimRunTag.0 (1.3.6.1.4.1.32473.1.2.0, however snmptrapd names the enterprise arc) in a
 * line, as recv_trapd_sysname() finds sysName.0.
 * @return 1 when found (@p tag and @p tag_len set), else 0.
 */
int recv_trapd_run_tag(const char *line, size_t len, const char **tag, size_t *tag_len);

#endif
