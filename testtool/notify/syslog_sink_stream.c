/*
 * Syslog over TCP (RFC 6587) and TLS (RFC 5425): one connection per worker
 * and sink, carrying the lines of all the worker's devices, each device's
 * in its own order. Messages wait framed in one byte buffer (at most
 * cfg.queue_msgs of them; more are dropped and counted) and a FIFO of
 * (ledger row, frame length) says whose bytes are whose, so a message is
 * counted sent when the kernel took its last byte. The buffer is written
 * at the start of the next loop iteration (a timer armed for "now"), then
 * whenever the socket is writable again.
 *
 * A connection that fails or goes away is retried after a backoff that
 * doubles from SYSLOG_BACKOFF_MIN_MS to SYSLOG_BACKOFF_MAX_MS and is reset
 * by a connection that works; meanwhile messages queue. A message half
 * written when its connection broke cannot be resumed (the collector saw a
 * partial frame): it counts as a send failure and the next connection
 * starts at the next whole message. Bytes the kernel took before a
 * connection broke are counted sent; TCP cannot say more.
 *
 * TLS is the same stream through OpenSSL's non-blocking SSL_connect,
 * SSL_write and SSL_read; the context (trusted CA, client certificate) is
 * the caller's. RFC 5425 requires octet counting, whatever cfg.framing says.
 */
#include "syslog_sink_internal.h"

#include <errno.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "loop.h"

/* The byte buffer's size: the queue's message bound times an average line, grown on demand up to this. */
#define SS_MAX_BUFFER_BYTES (32u * 1024u * 1024u)
/* Bytes read and thrown away per readiness event (a collector has nothing to say; only its close counts). */
#define SS_READ_BYTES 4096

enum ss_state {
    SS_WAITING,    /* no connection: the backoff timer runs */
    SS_CONNECTING, /* connect() in progress: waiting for writable */
    SS_HANDSHAKE,  /* TLS: SSL_connect in progress */
    SS_UP,         /* connected: bytes flow */
};

/* One queued message: whose it is and how many bytes its frame takes in the buffer. */
struct ss_entry {
    struct ledger_row *row; /* the device's row */
    uint32_t len;           /* frame bytes */
};

struct sink_stream {
    struct syslog_sink base; /* first: the generic part */
    int tls;                 /* 1: TLS on top */
    enum ss_state state;     /* where the connection is */
    int fd;                  /* the socket, -1 in SS_WAITING */
    SSL *ssl;                /* TLS: the session of fd, NULL otherwise */
    struct loop_timer timer; /* SS_WAITING: the reconnect; SS_UP: the flush for "now" */
    uint32_t backoff_ms;     /* the next wait after a failure */
    char *buf;               /* framed bytes waiting, from head to tail */
    size_t head, tail, cap;  /* offsets into buf; its size */
    struct ss_entry *fifo;   /* queued messages, a ring of cap_msgs */
    uint32_t fifo_head;      /* oldest entry */
    uint32_t fifo_count;     /* entries in use */
    uint32_t cap_msgs;       /* the ring's size (cfg.queue_msgs) */
    size_t front_done;       /* bytes of the oldest message already written */
    uint8_t tls_want_read;   /* TLS: the last call wants the socket readable before it can go on */
};

static void ss_connect(struct sink_stream *s);
static void ss_on_io(struct loop *loop, int fd, uint32_t events, void *data);

/* Drop the oldest entry from the FIFO (its bytes from the buffer) and give it @p outcome. */
static void
ss_pop(struct sink_stream *s, int sent)
{
    struct ss_entry *e = &s->fifo[s->fifo_head];

    if (sent) {
        ledger_note_sent(e->row);
    } else {
        ledger_note_failed(e->row);
    }
    s->head += e->len - s->front_done;
    s->front_done = 0;
    s->fifo_head = (s->fifo_head + 1) % s->cap_msgs;
    s->fifo_count--;
    s->base.stats.queued = s->fifo_count;
    if (!s->fifo_count) {
        s->head = s->tail = 0;
    }
}

/* @p n more bytes were written: complete the messages they finish. */
static void
ss_account(struct sink_stream *s, size_t n)
{
    while (n && s->fifo_count) {
        size_t left = s->fifo[s->fifo_head].len - s->front_done;
        if (n >= left) {
            n -= left;
            ss_pop(s, 1);
        } else {
            s->front_done += n;
            s->head += n;
            n = 0;
        }
    }
}

static void
ss_on_timer(struct loop *loop, struct loop_timer *timer)
{
    struct sink_stream *s = (struct sink_stream *)((char *)timer - offsetof(struct sink_stream, timer));

    (void)loop;
    if (s->state == SS_WAITING) {
        ss_connect(s);
    } else {
        syslog_sink_flush(&s->base);
    }
}

/* The connection is gone (or never came): the half-written message fails, then wait and retry. */
static void
ss_drop_connection(struct sink_stream *s, const char *why)
{
    struct loop *loop = s->base.loop;
    char ep[NETADDR_TEXT_BYTES + 8];

    if (s->state == SS_UP) {
        s->base.stats.disconnects++;
        log_msg(LOGL_WARN, "syslog sink %s: connection lost (%s); reconnecting",
                syslog_sink_format(&s->base.cfg.spec, ep, sizeof ep), why);
    } else {
        s->base.stats.connect_failures++;
        log_msg(LOGL_DEBUG, "syslog sink %s: cannot connect (%s); retrying in %u ms",
                syslog_sink_format(&s->base.cfg.spec, ep, sizeof ep), why, s->backoff_ms);
    }
    if (s->front_done) {
        ss_pop(s, 0);
    }
    if (s->ssl) {
        SSL_free(s->ssl);
        s->ssl = NULL;
    }
    if (s->fd >= 0) {
        loop_unwatch(loop, s->fd);
        close(s->fd);
        s->fd = -1;
    }
    s->base.stats.up = 0;
    s->state = SS_WAITING;
    loop_timer_start(loop, &s->timer, loop_now_us(loop) + (monotime_us)s->backoff_ms * 1000, ss_on_timer);
    s->backoff_ms = s->backoff_ms * 2 > SYSLOG_BACKOFF_MAX_MS ? SYSLOG_BACKOFF_MAX_MS : s->backoff_ms * 2;
}

static void
ss_up(struct sink_stream *s)
{
    s->state = SS_UP;
    s->base.stats.up = 1;
    s->base.stats.connects++;
    s->backoff_ms = SYSLOG_BACKOFF_MIN_MS;
    loop_set_events(s->base.loop, s->fd, LOOP_READ | (s->fifo_count ? LOOP_WRITE : 0));
}

/* Drive the TLS handshake; @return 0 when it goes on or is done, -1 when it failed (connection dropped). */
static int
ss_handshake(struct sink_stream *s)
{
    int r = SSL_connect(s->ssl);

    if (r == 1) {
        ss_up(s);
        return 0;
    }
    switch (SSL_get_error(s->ssl, r)) {
    case SSL_ERROR_WANT_READ:
        loop_set_events(s->base.loop, s->fd, LOOP_READ);
        return 0;
    case SSL_ERROR_WANT_WRITE:
        loop_set_events(s->base.loop, s->fd, LOOP_WRITE);
        return 0;
    default: {
        char why[160];
        ERR_error_string_n(ERR_get_error(), why, sizeof why);
        ERR_clear_error();
        ss_drop_connection(s, why);
        return -1;
    }
    }
}

static void
ss_connect(struct sink_stream *s)
{
    const struct net_endpoint *ep = &s->base.cfg.spec.ep;

    s->fd = socket(ep->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->fd < 0) {
        ss_drop_connection(s, strerror(errno));
        return;
    }
    if (connect(s->fd, (const struct sockaddr *)&ep->sa, ep->len) < 0 && errno != EINPROGRESS) {
        ss_drop_connection(s, strerror(errno));
        return;
    }
    s->state = SS_CONNECTING;
    if (loop_watch(s->base.loop, s->fd, LOOP_WRITE, ss_on_io, s)) {
        ss_drop_connection(s, "cannot watch the socket");
    }
}

/* RFC 5425 section 5.2: the collector's certificate must name the address dialled (an iPAddress SAN). */
static int
ss_expect_address(SSL *ssl, const struct net_endpoint *ep)
{
    X509_VERIFY_PARAM *param = SSL_get0_param(ssl);

    if (ep->sa.ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&ep->sa;
        return X509_VERIFY_PARAM_set1_ip(param, (const unsigned char *)&a->sin6_addr, 16);
    }
    return X509_VERIFY_PARAM_set1_ip(
        param, (const unsigned char *)&((const struct sockaddr_in *)&ep->sa)->sin_addr, 4);
}

/* The socket is writable after connect(): did it work? Then TLS's handshake, or up. */
static void
ss_connected(struct sink_stream *s)
{
    int soerr = 0;
    socklen_t len = sizeof soerr;

    if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0 || soerr) {
        ss_drop_connection(s, strerror(soerr ? soerr : errno));
        return;
    }
    if (!s->tls) {
        ss_up(s);
        return;
    }
    if (!(s->ssl = SSL_new(s->base.cfg.tls_ctx)) || !SSL_set_fd(s->ssl, s->fd) ||
        !ss_expect_address(s->ssl, &s->base.cfg.spec.ep)) {
        ss_drop_connection(s, "out of memory for TLS");
        return;
    }
    s->state = SS_HANDSHAKE;
    ss_handshake(s);
}

/* Write what waits until done or the socket is full. @return 0, or -1 when the connection was dropped. */
static int
ss_write(struct sink_stream *s)
{
    while (s->tail > s->head) {
        size_t n = s->tail - s->head;
        ssize_t w;
        if (s->tls) {
            size_t done = 0;
            int r = SSL_write_ex(s->ssl, s->buf + s->head, n, &done);
            if (r <= 0) {
                int e = SSL_get_error(s->ssl, r);
                if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) {
                    s->tls_want_read = e == SSL_ERROR_WANT_READ;
                    loop_set_events(s->base.loop, s->fd,
                                    LOOP_READ | (e == SSL_ERROR_WANT_WRITE ? LOOP_WRITE : 0));
                    return 0;
                }
                ERR_clear_error();
                ss_drop_connection(s, "TLS write failed");
                return -1;
            }
            w = (ssize_t)done;
        } else {
            w = send(s->fd, s->buf + s->head, n, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (w < 0) {
                if (errno == EINTR) {
                    continue;
                }
                if (errno == EAGAIN || errno == EWOULDBLOCK) {
                    loop_set_events(s->base.loop, s->fd, LOOP_READ | LOOP_WRITE);
                    return 0;
                }
                ss_drop_connection(s, strerror(errno));
                return -1;
            }
        }
        s->base.stats.batches++;
        ss_account(s, (size_t)w);
    }
    loop_set_events(s->base.loop, s->fd, LOOP_READ);
    return 0;
}

/* Read and discard; @return -1 when the collector closed the connection (dropped then). */
static int
ss_read(struct sink_stream *s)
{
    char junk[SS_READ_BYTES];

    for (int rounds = 0; rounds < 4; rounds++) {
        if (s->tls) {
            size_t got = 0;
            int r = SSL_read_ex(s->ssl, junk, sizeof junk, &got);
            if (r <= 0) {
                int e = SSL_get_error(s->ssl, r);
                if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
                    return 0;
                }
                ERR_clear_error();
                ss_drop_connection(s, e == SSL_ERROR_ZERO_RETURN ? "closed by the collector"
                                                                 : "TLS read failed");
                return -1;
            }
        } else {
            ssize_t r = recv(s->fd, junk, sizeof junk, MSG_DONTWAIT);
            if (r == 0) {
                ss_drop_connection(s, "closed by the collector");
                return -1;
            }
            if (r < 0) {
                if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                    return 0;
                }
                ss_drop_connection(s, strerror(errno));
                return -1;
            }
        }
    }
    return 0;
}

static void
ss_on_io(struct loop *loop, int fd, uint32_t events, void *data)
{
    struct sink_stream *s = data;

    (void)loop;
    (void)fd;
    switch (s->state) {
    case SS_CONNECTING:
        ss_connected(s);
        break;
    case SS_HANDSHAKE:
        ss_handshake(s);
        break;
    case SS_UP:
        if ((events & LOOP_READ) && ss_read(s)) {
            break;
        }
        if ((events & LOOP_WRITE) || s->tls_want_read) {
            s->tls_want_read = 0;
            ss_write(s);
        }
        break;
    default:
        break;
    }
}

static void
ss_flush(struct syslog_sink *base)
{
    struct sink_stream *s = (struct sink_stream *)base;

    if (s->state == SS_UP) {
        if (loop_timer_armed(&s->timer)) {
            loop_timer_stop(base->loop, &s->timer);
        }
        ss_write(s);
    }
}

/* Room for @p n more bytes at the tail; @return 0, or -1 when the buffer cannot grow (the message drops). */
static int
ss_room(struct sink_stream *s, size_t n)
{
    size_t live = s->tail - s->head;

    if (s->cap - s->tail >= n) {
        return 0;
    }
    if (s->head && s->cap - live >= n) {
        /* Move what waits to the front: amortised, each byte moves at most once per buffer's worth. */
        memmove(s->buf, s->buf + s->head, live);
        s->head = 0;
        s->tail = live;
        return 0;
    }
    {
        size_t cap = s->cap ? s->cap : 64 * 1024;
        char *grown;
        while (cap - live < n) {
            cap *= 2;
        }
        if (cap > SS_MAX_BUFFER_BYTES || !(grown = malloc(cap))) {
            return -1;
        }
        if (live) {
            memcpy(grown, s->buf + s->head, live); /* the first growth has no buffer to offset into */
        }
        free(s->buf);
        s->buf = grown;
        s->cap = cap;
        s->head = 0;
        s->tail = live;
    }
    return 0;
}

static void
ss_send(struct syslog_sink *base, uint32_t src_low, const char *msg, size_t len, struct ledger_row *row)
{
    struct sink_stream *s = (struct sink_stream *)base;
    enum syslog_framing framing = s->tls ? SYSLOG_FRAME_OCTETS : base->cfg.framing;
    char head[SYSLOG_FRAME_HEAD_BYTES];
    size_t head_len = syslog_frame_head(framing, len, head);
    const char *tail = syslog_frame_tail(framing);
    size_t tail_len = strlen(tail), n = head_len + len + tail_len;

    (void)src_low;
    if (s->fifo_count == s->cap_msgs || ss_room(s, n)) {
        ledger_drop_now(row, 1);
        return;
    }
    memcpy(s->buf + s->tail, head, head_len);
    memcpy(s->buf + s->tail + head_len, msg, len);
    memcpy(s->buf + s->tail + head_len + len, tail, tail_len);
    s->tail += n;
    s->fifo[(s->fifo_head + s->fifo_count) % s->cap_msgs] = (struct ss_entry){.row = row, .len = (uint32_t)n};
    s->fifo_count++;
    base->stats.queued = s->fifo_count;
    ledger_queue(row);
    if (s->state == SS_UP && !loop_timer_armed(&s->timer)) {
        loop_timer_start(base->loop, &s->timer, loop_now_us(base->loop), ss_on_timer);
    }
}

static void
ss_close(struct syslog_sink *base)
{
    struct sink_stream *s = (struct sink_stream *)base;

    if (s->state == SS_UP) {
        ss_write(s);
    }
    /* What could not go before the end: a send failure each, so the ledger closes. */
    while (s->fifo_count) {
        ss_pop(s, 0);
    }
    loop_timer_stop(base->loop, &s->timer);
    if (s->ssl) {
        SSL_shutdown(s->ssl);
        SSL_free(s->ssl);
    }
    if (s->fd >= 0) {
        loop_unwatch(base->loop, s->fd);
        close(s->fd);
    }
    free(s->fifo);
    free(s->buf);
    free(s);
}

static enum fleet_err
ss_open(struct loop *loop, const struct syslog_sink_config *cfg, struct syslog_sink **out, char *err,
        size_t err_len, int tls, const struct syslog_sink_ops *ops)
{
    struct sink_stream *s = calloc(1, sizeof *s);

    if (!s) {
        snprintf(err, err_len, "out of memory for a syslog sink");
        return FLEET_ERR_NOMEM;
    }
    if (tls && !cfg->tls_ctx) {
        snprintf(err, err_len, "a TLS syslog sink needs a TLS context");
        free(s);
        return FLEET_ERR_INVAL;
    }
    s->base.ops = ops;
    s->base.loop = loop;
    s->base.cfg = *cfg;
    s->tls = tls;
    s->fd = -1;
    s->cap_msgs = cfg->queue_msgs ? cfg->queue_msgs : SYSLOG_STREAM_QUEUE_MSGS;
    s->backoff_ms = SYSLOG_BACKOFF_MIN_MS;
    loop_timer_init(&s->timer);
    if (!(s->fifo = calloc(s->cap_msgs, sizeof *s->fifo))) {
        snprintf(err, err_len, "out of memory for a syslog sink");
        free(s);
        return FLEET_ERR_NOMEM;
    }
    ss_connect(s);
    *out = &s->base;
    return FLEET_OK;
}

static enum fleet_err
ss_open_tcp(struct loop *loop, const struct syslog_sink_config *cfg, struct syslog_sink **out, char *err,
            size_t err_len)
{
    return ss_open(loop, cfg, out, err, err_len, 0, &syslog_sink_tcp_ops);
}

static enum fleet_err
ss_open_tls(struct loop *loop, const struct syslog_sink_config *cfg, struct syslog_sink **out, char *err,
            size_t err_len)
{
    return ss_open(loop, cfg, out, err, err_len, 1, &syslog_sink_tls_ops);
}

const struct syslog_sink_ops syslog_sink_tcp_ops = {
    .scheme = "tcp",
    .open = ss_open_tcp,
    .send = ss_send,
    .flush = ss_flush,
    .close = ss_close,
};

const struct syslog_sink_ops syslog_sink_tls_ops = {
    .scheme = "tls",
    .open = ss_open_tls,
    .send = ss_send,
    .flush = ss_flush,
    .close = ss_close,
};
