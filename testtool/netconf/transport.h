/*
 * The byte stream under a NETCONF session: plain TCP (transport_tcp.c),
 * SSH (ssh_link.c) or TLS (transport_tls.c), each an ops table (as the stress client's
 * stress/conn_internal.h, after Redis's src/connection.h). session.c owns
 * the socket's watch, the timers, the hello, the framing and the output
 * queue; a transport moves bytes between the socket and the session, and
 * session.c calls it only through this table. Which one a session runs on
 * is the device group's choice (transport_for()), accepted or dialled.
 * A leaf header: it names struct session without including session.h.
 */
#ifndef FLEET_TRANSPORT_H
#define FLEET_TRANSPORT_H

#include <stdint.h>

struct device;
struct session;

struct transport_ops {
    /* Begin on s->fd (the session is set up and watched for reading): send the server's first bytes (TCP:
     * the hello; SSH: the version line, the hello waits for the netconf subsystem) and set s->link.
     * 0, or -1 when the transport cannot start (session.c then closes the session). */
    int (*start)(struct session *s);
    /* The socket is ready (LOOP_READ / LOOP_WRITE), after session.c flushed what was pending: read what
     * came, feed it to sess_consume(), close the session on the peer's end. Called while not SESS_DEAD. */
    void (*on_io)(struct session *s, uint32_t events);
    /* Write what the session's output queue holds, as far as the peer takes it now.
     * 0 when all is out, 1 when some waits (for writability), -1 when the connection failed. */
    int (*flush)(struct session *s);
    /* The session closes now (maybe inside the transport's own callbacks): release the socket, unless the
     * transport closes it itself in free(). */
    void (*close)(struct session *s);
    /* Free s->link at the loop's safe point, after close(); NULL when there is nothing to free. */
    void (*free)(struct session *s);
    /* 1: while output waits the transport must keep reading for its writes to progress (SSH's window
     * adjusts arrive as packets), so a large backlog does not pause reading. 0: back-pressure pauses it. */
    uint8_t reads_to_write;
    /* ietf-netconf-monitoring's transport identity of its sessions (RFC 6022; TCP's is fleetsim's own). */
    const char *monitoring_identity;
};

/* NETCONF over plain TCP (transport_tcp.c). */
extern const struct transport_ops transport_tcp;

/* NETCONF over SSH, RFC 6242 (ssh_link.c). */
extern const struct transport_ops transport_ssh;

/* NETCONF over TLS, RFC 7589 (transport_tls.c). */
extern const struct transport_ops transport_tls;

/** @return The transport @p dev's sessions run on: its group's --transport (or --ssh). */
const struct transport_ops *transport_for(const struct device *dev);

#endif
