/*
 * NETCONF over plain TCP: the session's socket carries the framed
 * messages as they are. Input is read into the worker's buffer and
 * handed to the session's framing; output is written from the session's
 * queue with writev (outq_write()). The socket is the session's to close.
 */
#include <errno.h>
#include <stddef.h>
#include <sys/types.h>
#include <unistd.h>

#include "frame.h"
#include "log.h"
#include "outq.h"
#include "session.h"
#include "transport.h"

static int
tcp_start(struct session *s)
{
    sess_transport_ready(s); /* nothing to negotiate: the hello goes first */
    return 0;
}

static void
tcp_on_io(struct session *s, uint32_t events)
{
    char *buf = s->worker->read_buf;

    if (!(events & LOOP_READ)) {
        return;
    }
    for (int i = 0; i < SESSION_MAX_READS_PER_EVENT && s->state < SESS_CLOSING; i++) {
        ssize_t n = read(s->fd, buf, SESSION_READ_BUF_BYTES);
        if (n > 0) {
            if (sess_consume(s, buf, (size_t)n)) {
                return;
            }
            if ((size_t)n < SESSION_READ_BUF_BYTES) {
                return;
            }
            if (outq_pending(&s->out) > SESSION_OUTPUT_HIGH_WATER_BYTES) {
                return; /* let the flush run; back-pressure is applied there */
            }
            continue;
        }
        if (n == 0) {
            if (frame_decoder_partial(&s->dec)) {
                log_debug("device %u session %u: peer left mid-message", s->dev->index, s->id);
            }
            /* A half-closed peer may still read: the replies it asked for go out first. */
            sess_close(s, 1);
        } else if (errno != EAGAIN && errno != EINTR) {
            sess_close(s, 0);
        }
        return;
    }
}

static int
tcp_flush(struct session *s)
{
    switch (outq_write(&s->out, s->fd)) {
    case OUTQ_ERROR:
        return -1;
    case OUTQ_EMPTY:
        return 0;
    case OUTQ_AGAIN:
        break;
    }
    return 1;
}

static void
tcp_close(struct session *s)
{
    close(s->fd);
}

const struct transport_ops transport_tcp = {
    .start = tcp_start,
    .on_io = tcp_on_io,
    .flush = tcp_flush,
    .close = tcp_close,
    .free = NULL,
    .reads_to_write = 0,
    .monitoring_identity = "fleetsim-netconf-transport:netconf-tcp",
};
