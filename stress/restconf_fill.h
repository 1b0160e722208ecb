/*
 * What "fleetsim-stress restconf" sends: the request body and URL filled as
 * OpenDaylight's REST perf client fills them. Body: the first {PEERID} is
 * the stream's number and the first {INTLEAF} the request's number within
 * its stream (both only when the content holds {PEERID}); the first
 * {DEVICE_PORT} is the stream's device port; every {PHYS_ADDR} is a MAC
 * address, aa:bb:cc:dd:00:00 onwards, one per occurrence. URL: the first
 * {DEVICE_PORT} of --destination. Later occurrences of the first three stay
 * as written, as there.
 */
#ifndef STRESS_RESTCONF_FILL_H
#define STRESS_RESTCONF_FILL_H

#include <stddef.h>
#include <stdint.h>

#include "netaddr.h"
#include "sbuf.h"

/* The MAC address the first {PHYS_ADDR} gets (OpenDaylight's macStart). */
#define RFILL_PHYS_ADDR_BASE 0xaabbccdd0000ull

enum rfill_kind {
    RFILL_TEXT,        /* literal bytes */
    RFILL_PEERID,      /* the first {PEERID}: stream number */
    RFILL_INTLEAF,     /* the first {INTLEAF} (with {PEERID} present): request number in the stream */
    RFILL_DEVICE_PORT, /* the first {DEVICE_PORT}: the stream's device port */
    RFILL_PHYS_ADDR,   /* each {PHYS_ADDR}: the next MAC address */
};

struct rfill_part {
    enum rfill_kind kind; /* what to emit */
    const char *text;     /* RFILL_TEXT: start of the run inside the content */
    size_t len;           /* RFILL_TEXT: its length */
};

struct rfill {
    char *text;               /* the content, owned */
    struct rfill_part *parts; /* in order */
    size_t part_count;        /* entries in parts */
    uint32_t phys_addr_count; /* {PHYS_ADDR} occurrences: MAC addresses per request */
};

struct rfill_vars {
    uint32_t stream;      /* {PEERID}: the stream (OpenDaylight's thread id), from 0 */
    uint64_t request;     /* {INTLEAF}: the request's number in its stream, from 0 */
    uint32_t device_port; /* {DEVICE_PORT} */
    uint64_t mac_first;   /* the request's first {PHYS_ADDR} value; the next ones follow */
};

/**
 * @brief Take @p text (ownership passes) and split it into parts.
 * @return 0, or -1 when memory ran out (text is freed).
 */
int rfill_init(struct rfill *f, char *text);

/** @brief Free it. Accepts a zeroed one. */
void rfill_free(struct rfill *f);

/** @brief Append the body for @p v to @p b. */
void rfill_expand(const struct rfill *f, const struct rfill_vars *v, struct sbuf *b);

/** @brief "aa:bb:cc:dd:00:00" for @p mac (lower-case, 12 hex digits) into @p out (18 bytes). */
void rfill_mac(uint64_t mac, char out[18]);

/**
 * @brief The URL of a stream: "http://IP:PORT" (an IPv6 @p ip of @p fam in brackets) then @p destination
 * with its first {DEVICE_PORT} replaced by @p device_port.
 * @return Malloc'd text or NULL.
 */
char *rfill_url(const struct net_family *fam, uint32_t ip, uint32_t port, const char *destination,
                uint32_t device_port);

/**
 * @brief The node a URL names: the text after "node=" up to the next '/' (or the end), else "".
 * @param[out] out Up to @p len - 1 bytes of it, NUL-terminated.
 */
void rfill_node(const char *url, char *out, size_t len);

#endif
