/*
 * What conn.c shares with its transports: the byte stream under a NETCONF
 * connection is plain TCP (conn.c) or an SSH channel (conn_ssh.c), each an
 * ops table like redis's ConnectionType. conn.c owns the socket's connect,
 * the timers, the hello and the framing; a transport moves bytes once the
 * TCP connection is up. Workload code never sees which one runs.
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
};

/* NETCONF over SSH (conn_ssh.c). */
extern const struct conn_transport conn_ssh_transport;

/** @return 1 when conn_ssh_setup() enabled SSH for every connection of this process. */
int conn_ssh_enabled(void);

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
