/*
 * Client connections for the stress client. Output is written at once when
 * the socket takes it (write first) and only a short write arms EPOLLOUT;
 * input is read in bulk and every complete message goes to the workload.
 * This file also holds the plain TCP transport; SSH is in conn_ssh.c, TLS in
 * conn_tls.c, the choice between them in conn_detect.c. None of them is
 * named here: a connection begins with the registered first transport
 * (conn_internal.h) and goes on with whatever c->tr points to.
 */
#include "conn.h"
#include "conn_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Bytes read per read(2); replies are small, a get-config or get-schema may not be. */
#define CONN_READ_BYTES (256 * 1024)
/* Reads per readiness event before yielding to other connections. */
#define CONN_MAX_READS_PER_EVENT 8

static const char *const failure_names[CONN_FAIL_COUNT] = {
    "none",    "refused",   "timeout", "bad-hello", "closed-by-server", "reset",
    "framing", "resources", "auth",    "ssh",       "wrong-transport",  "tls",
};

static char read_buf[CONN_READ_BYTES]; /* lent to the connection being read; one loop, one thread */
/* Where conn_start() begins: plain TCP until a transport registers (conn_transport_first()). */
static const struct conn_transport *first_transport = &conn_tcp_transport;

void
conn_transport_first(const struct conn_transport *tr)
{
    first_transport = tr;
}

char *
conn_read_buffer(size_t *len)
{
    *len = sizeof read_buf;
    return read_buf;
}

const char *
conn_failure_name(enum conn_failure why)
{
    return failure_names[why];
}

static void on_io(struct loop *loop, int fd, uint32_t events, void *data);

static void
teardown(struct conn *c)
{
    if (c->fd >= 0) {
        loop_unwatch(c->loop, c->fd);
    }
    if (c->tr && c->tr->close) {
        c->tr->close(c); /* may close the socket itself (libssh does) */
    }
    if (c->fd >= 0) {
        close(c->fd);
        c->fd = -1;
    }
    loop_timer_stop(c->loop, &c->timer);
    frame_decoder_close(&c->dec);
    outq_free(&c->out);
    c->state = CONN_CLOSED;
}

void
conn_fail(struct conn *c, enum conn_failure why, const char *detail)
{
    if (c->state == CONN_CLOSED) {
        return;
    }
    teardown(c);
    c->cb->failed(c, why, detail);
}

void
conn_close(struct conn *c)
{
    /* A failed connection keeps its server hello until here: the manifest reports it. */
    if (c->state != CONN_CLOSED && c->state != CONN_IDLE) {
        teardown(c);
    }
    c->state = CONN_CLOSED;
    hello_info_free(&c->server_hello);
}

static void
on_timeout(struct loop *loop, struct loop_timer *timer)
{
    struct conn *c = (struct conn *)((char *)timer - offsetof(struct conn, timer));
    char detail[192];

    (void)loop;
    snprintf(detail, sizeof detail, "no answer within %u ms%s", (unsigned)c->timeout_ms,
             c->state == CONN_HANDSHAKE && c->tr->timeout_hint ? c->tr->timeout_hint(c) : "");
    conn_fail(c, CONN_FAIL_TIMEOUT, detail);
}

static void
on_early_failure(struct loop *loop, struct loop_timer *timer)
{
    struct conn *c = (struct conn *)((char *)timer - offsetof(struct conn, timer));
    char detail[128];

    (void)loop;
    snprintf(detail, sizeof detail, "connect: %s", strerror(c->early_errno));
    conn_fail(c, c->early_failure, detail);
}

void
conn_expect(struct conn *c)
{
    /* The clock, not the loop's cached time: work done since the loop woke (building requests) is not
     * waiting. */
    loop_timer_start(c->loop, &c->timer, loop_clock_monotonic() + (monotime_us)c->timeout_ms * 1000u,
                     on_timeout);
}

void
conn_idle(struct conn *c)
{
    loop_timer_stop(c->loop, &c->timer);
}

/* A socket connecting to c's target over c->tr. Returns 0, or -1 when not even the socket could be made. */
static int
connect_socket(struct conn *c)
{
    struct sockaddr_storage sa;
    socklen_t sa_len = netaddr_sockaddr(c->fam, c->addr, c->port, &sa);
    struct loop *loop = c->loop;
    int one = 1;

    c->out_mode = FRAME_EOM;
    c->ssh = NULL;
    c->tls = NULL;
    loop_timer_init(&c->timer);
    frame_decoder_init(&c->dec, 0);
    c->fd = socket(netaddr_af(c->fam), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0) {
        frame_decoder_close(&c->dec);
        c->state = CONN_CLOSED;
        return -1;
    }
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->state = CONN_CONNECTING;
    if (loop_watch(loop, c->fd, LOOP_WRITE, on_io, c)) {
        close(c->fd);
        c->fd = -1;
        frame_decoder_close(&c->dec);
        c->state = CONN_CLOSED;
        return -1;
    }
    conn_expect(c);
    if (connect(c->fd, (struct sockaddr *)&sa, sa_len) < 0 && errno != EINPROGRESS) {
        /*
         * Reported from a timer, not from here: a caller that starts the next connection
         * from the failure callback would otherwise recurse once per device.
         */
        c->early_failure = errno == ECONNREFUSED ? CONN_FAIL_REFUSED : CONN_FAIL_RESET;
        c->early_errno = errno;
        loop_timer_start(loop, &c->timer, loop_clock_monotonic(), on_early_failure);
    }
    return 0;
}

int
conn_start(struct conn *c, struct loop *loop, struct ly_ctx *xml_ctx, const struct net_family *fam,
           uint32_t addr, uint16_t port, const struct conn_callbacks *cb, void *user)
{
    c->loop = loop;
    c->xml_ctx = xml_ctx;
    c->cb = cb;
    c->user = user;
    c->fam = fam;
    c->addr = addr;
    c->port = port;
    c->started_us = loop_clock_monotonic();
    c->tr = first_transport->choose ? first_transport->choose(c) : first_transport;
    return connect_socket(c);
}

void
conn_restart(struct conn *c, const struct conn_transport *tr)
{
    teardown(c);
    c->tr = tr;
    if (connect_socket(c)) {
        c->cb->failed(c, CONN_FAIL_RESOURCES, "socket: cannot reconnect");
    }
}

static void
fail_errno(struct conn *c, const char *call)
{
    char detail[128];

    snprintf(detail, sizeof detail, "%s: %s", call, strerror(errno));
    conn_fail(c, CONN_FAIL_RESET, detail);
}

/* Write what is queued; on a short write wait for EPOLLOUT. Returns -1 when the connection failed. */
static int
flush(struct conn *c)
{
    switch (outq_write(&c->out, c->fd)) {
    case OUTQ_ERROR:
        fail_errno(c, "send");
        return -1;
    case OUTQ_AGAIN:
        loop_set_events(c->loop, c->fd, LOOP_READ | LOOP_WRITE);
        return 0;
    case OUTQ_EMPTY:
        break;
    }
    loop_set_events(c->loop, c->fd, LOOP_READ);
    return 0;
}

int
conn_send(struct conn *c, const char *bytes, size_t len)
{
    if (c->state == CONN_CLOSED) {
        return -1;
    }
    return c->tr->send(c, bytes, len);
}

static int
tcp_send(struct conn *c, const char *bytes, size_t len)
{
    /* Nothing queued: write straight from the caller's bytes and queue only what the socket did not take. */
    if (c->state != CONN_CONNECTING && !outq_pending(&c->out)) {
        ssize_t n = send(c->fd, bytes, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n == (ssize_t)len) {
            return 0;
        }
        if (n > 0) {
            bytes += n;
            len -= (size_t)n;
        } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
            fail_errno(c, "send");
            return -1;
        }
    }
    if (outq_add(&c->out, bytes, len)) {
        conn_fail(c, CONN_FAIL_RESOURCES, "out of memory queueing a request");
        return -1;
    }
    if (c->state == CONN_CONNECTING) {
        return 0; /* written once connected */
    }
    return flush(c);
}

void
conn_frame(const struct conn *c, struct sbuf *b, const char *xml, size_t len)
{
    char head[FRAME_HEADER_MAX_BYTES];
    char tail[FRAME_HEADER_MAX_BYTES];
    size_t hlen = frame_header(c->out_mode, len, head);
    size_t tlen = frame_trailer(c->out_mode, tail);

    sbuf_add(b, head, hlen);
    sbuf_add(b, xml, len);
    sbuf_add(b, tail, tlen);
}

static void
send_client_hello(struct conn *c)
{
    const char *both[] = {HELLO_CAP_BASE10, HELLO_CAP_BASE11};
    char *xml = NULL;
    size_t len = 0;
    struct sbuf b = {0};

    if (hello_build(both, c->legacy_framing ? 1 : 2, 0, &xml, &len)) {
        conn_fail(c, CONN_FAIL_RESOURCES, "out of memory building the hello");
        return;
    }
    sbuf_add(&b, xml, len);
    sbuf_adds(&b, "]]>]]>");
    free(xml);
    if (b.failed) {
        sbuf_free(&b);
        conn_fail(c, CONN_FAIL_RESOURCES, "out of memory building the hello");
        return;
    }
    conn_send(c, b.buf, b.len);
    sbuf_free(&b);
}

static void
on_server_hello(struct conn *c, const char *msg)
{
    char err[256];

    if (hello_parse(c->xml_ctx, msg, &c->server_hello, err, sizeof err)) {
        conn_fail(c, CONN_FAIL_BAD_HELLO, err);
        return;
    }
    if (!c->server_hello.has_session_id) {
        conn_fail(c, CONN_FAIL_BAD_HELLO, "server hello without session-id");
        return;
    }
    if (!c->server_hello.base10 && !c->server_hello.base11) {
        conn_fail(c, CONN_FAIL_BAD_HELLO, "server offers no base capability");
        return;
    }
    if (c->server_hello.base11 && !c->legacy_framing) {
        c->out_mode = FRAME_CHUNKED;
        frame_decoder_set_mode(&c->dec, FRAME_CHUNKED);
    }
    c->state = CONN_READY;
    c->ready_us = loop_clock_monotonic();
    conn_idle(c);
    c->cb->ready(c);
}

void
conn_input(struct conn *c, const char *buf, size_t len)
{
    while (len && c->state >= CONN_HELLO && c->state < CONN_CLOSED) {
        size_t used = 0;
        enum frame_status st = frame_decode(&c->dec, buf, len, &used);
        buf += used;
        len -= used;
        if (st == FRAME_ERROR) {
            conn_fail(c, CONN_FAIL_FRAMING, frame_decoder_error(&c->dec));
            return;
        }
        if (st == FRAME_NEED_MORE) {
            return;
        }
        {
            size_t mlen;
            const char *msg = frame_decoder_message(&c->dec, &mlen);
            if (c->state == CONN_HELLO) {
                if (c->hello_seen) {
                    c->hello_seen(c, msg, mlen);
                }
                on_server_hello(c, msg);
            } else {
                c->cb->message(c, msg, mlen);
            }
            if (c->state != CONN_CLOSED) {
                frame_decoder_next(&c->dec);
            }
        }
    }
}

static void
on_connected(struct conn *c)
{
    int err = 0;
    socklen_t len = sizeof err;

    getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err) {
        char detail[128];
        snprintf(detail, sizeof detail, "connect: %s", strerror(err));
        conn_fail(c, err == ECONNREFUSED ? CONN_FAIL_REFUSED : CONN_FAIL_RESET, detail);
        return;
    }
    c->tr->open(c);
}

void
conn_stream_up(struct conn *c)
{
    c->state = CONN_HELLO;
    if (c->preamble && conn_send(c, c->preamble, c->preamble_len)) {
        return;
    }
    /* RFC 6241 8.1: both sides send their hello at once; ours does not wait for the server's. */
    send_client_hello(c);
}

static int
tcp_open(struct conn *c)
{
    loop_set_events(c->loop, c->fd, LOOP_READ);
    conn_stream_up(c);
    return c->state == CONN_CLOSED ? -1 : 0;
}

static void
on_io(struct loop *loop, int fd, uint32_t events, void *data)
{
    struct conn *c = data;

    (void)loop;
    (void)fd;
    if (c->state == CONN_CONNECTING) {
        on_connected(c);
        return;
    }
    c->tr->io(c, events);
}

static void
tcp_io(struct conn *c, uint32_t events)
{
    char *buf = read_buf;

    if ((events & LOOP_WRITE) && flush(c)) {
        return;
    }
    if (!(events & LOOP_READ)) {
        return;
    }
    for (int i = 0; i < CONN_MAX_READS_PER_EVENT && c->state != CONN_CLOSED; i++) {
        ssize_t n = read(c->fd, buf, sizeof read_buf);
        if (n > 0) {
            conn_input(c, buf, (size_t)n);
            if (c->state == CONN_READY && c->cb->drained) {
                c->cb->drained(c);
            }
            if ((size_t)n < sizeof read_buf) {
                return;
            }
            continue;
        }
        if (n == 0) {
            conn_fail(c, CONN_FAIL_CLOSED,
                      frame_decoder_partial(&c->dec) ? "server closed the connection mid-message"
                                                     : "server closed the connection");
        } else if (errno != EAGAIN && errno != EINTR) {
            fail_errno(c, "read");
        }
        return;
    }
}

const struct conn_transport conn_tcp_transport = {
    .open = tcp_open,
    .io = tcp_io,
    .send = tcp_send,
    .close = NULL,
    .choose = NULL,
    .timeout_hint = NULL,
};
