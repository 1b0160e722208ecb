/*
 * What conn.c shares with its transports: the byte stream under a NETCONF
 * connection is plain TCP (conn.c), an SSH channel (conn_ssh.c) or a TLS
 * session (conn_tls.c), each an ops table like redis's ConnectionType;
 * without --ssh or --tls another one (conn_detect.c) looks at the server's
 * first bytes and hands the connection to one of them. conn.c owns the
 * socket's connect, the timers, the hello and the framing; a transport moves
 * bytes once the TCP connection is up. Workload code never sees which one
 * runs.
 *
 * conn.c reaches the transports only through this table: the one a
 * connection begins with is registered (conn_transport_first(); the
 * detection registers itself when conn_transport_set() runs), and what a
 * timeout says about the set-up is the transport's own hint. The transports
 * build on conn.c (conn_fail(), conn_input(), ...), never the other way.
 */
#ifndef STRESS_CONN_INTERNAL_H
#define STRESS_CONN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "conn.h"

struct conn_transport {
    /* The TCP connect completed: start the transport. 0, or -1 after a failure was reported. */
    int (*open)(struct conn *c);
    /* Readiness of the socket after the TCP connect (LOOP_READ / LOOP_WRITE). */
    void (*io)(struct conn *c, uint32_t events);
    /* Queue @p bytes (already framed) and write what the peer takes now. 0, or -1 after a reported failure.
     */
    int (*send)(struct conn *c, const char *bytes, size_t len);
    /* Release the transport's state; may close c->fd (then sets it to -1). NULL when nothing to release. */
    void (*close)(struct conn *c);
    /* conn_start() of the registered first transport: the transport this connection begins with (this one
     * or one it chooses for it). NULL: this one. */
    const struct conn_transport *(*choose)(struct conn *c);
    /* Words appended to a timeout's detail in CONN_HANDSHAKE (what the server did not send), or "". NULL:
     * none. */
    const char *(*timeout_hint)(const struct conn *c);
};

/**
 * @brief Register the transport every later conn_start() begins with (through its choose(), if any);
 * plain TCP until then. Call before any conn_start().
 */
void conn_transport_first(const struct conn_transport *tr);

/* NETCONF over SSH (conn_ssh.c). */
extern const struct conn_transport conn_ssh_transport;

/* NETCONF over TLS (conn_tls.c). */
extern const struct conn_transport conn_tls_transport;

/* NETCONF over plain TCP (conn.c). */
extern const struct conn_transport conn_tcp_transport;

/* What a server's first bytes say (conn_detect_classify()). */
enum conn_detect_kind {
    CONN_DETECT_UNKNOWN, /* neither (or nothing yet) */
    CONN_DETECT_SSH,     /* an SSH version line "SSH-..." (or a prefix of one), maybe after other lines */
    CONN_DETECT_XML,     /* XML: a NETCONF server over plain TCP sending its hello */
};

/** @brief Classify the first @p len bytes a server sent. */
enum conn_detect_kind conn_detect_classify(const char *buf, size_t len);

/**
 * @brief Quote the first line of @p buf for a message: printable ASCII only, at most 48 characters then
 * "...". @return The length written to @p out (NUL-terminated when @p out_len > 0).
 */
size_t conn_detect_quote(const char *buf, size_t len, char *out, size_t out_len);

/**
 * @brief Close the socket and connect again, over @p tr this time (the callbacks, the target and the start
 * time stay). A failure to do so is reported through the callback.
 */
void conn_restart(struct conn *c, const struct conn_transport *tr);

/** @brief Report a failure once: tear the connection down, then call the workload's failed callback. */
void conn_fail(struct conn *c, enum conn_failure why, const char *detail);

/** @brief The transport carries NETCONF now: send the preamble and the client hello (state CONN_HELLO). */
void conn_stream_up(struct conn *c);

/**
 * @brief Hand received bytes to the framing; complete messages go to the workload (the caller calls
 * drained() once a read is consumed). The connection may be closed (even restarted) when this returns:
 * callers check before going on.
 */
void conn_input(struct conn *c, const char *buf, size_t len);

/**
 * @brief The loop's read buffer, lent to whichever connection is reading (one thread, one loop).
 * @param[out] len Its size in bytes.
 */
char *conn_read_buffer(size_t *len);

#endif
