/*
 * NETCONF sessions: reading and framing input, the hello exchange, queued
 * output flushed before the loop sleeps, and the session's end. The bytes
 * move through the session's transport (transport.h: TCP or SSH), called
 * only through its ops table. The read buffer belongs to the worker and is
 * lent to each session in turn; a session allocates only for a partial
 * message or unsent output.
 */
#include "session.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "device_ctl.h"
#include "hello.h"
#include "lock.h"
#include "log.h"
#include "outq.h"
#include "rpc.h"
#include "sbuf.h"
#include "stream.h"
#include "transport.h"
#include "yp.h"

static void on_io(struct loop *loop, int fd, uint32_t events, void *data);
static void close_now(struct session *s);

/* A reply held back by injected latency (--netconf-latency). */
struct sess_delayed {
    struct sess_delayed *next; /* later replies */
    monotime_us due_us;        /* when it may go out; never before an earlier reply's */
    size_t len;                /* bytes in xml */
    char xml[];                /* the reply, unframed */
};

static void
hello_timeout(struct loop *loop, struct loop_timer *timer)
{
    struct session *s = (struct session *)((char *)timer - offsetof(struct session, hello_timer));

    (void)loop;
    log_debug("device %u session %u: no hello within %u s, closing", s->dev->index, s->id,
              s->worker->fleet->cfg.hello_timeout_s);
    s->dev->stats.in_bad_hellos++;
    sess_close(s, 0);
}

static void
send_hello(struct session *s)
{
    const struct schema_set *set = &s->dev->type->schemas;
    struct sbuf b = {0};

    /* The capabilities are the fleet's: only the session-id is this session's. */
    sbuf_reserve(&b, set->hello_head_len + 64);
    sbuf_add(&b, set->hello_head, set->hello_head_len);
    sbuf_printf(&b, "<session-id>%u</session-id></hello>", (unsigned)s->id);
    if (b.failed) {
        log_error("device %u session %u: out of memory building the hello", s->dev->index, s->id);
        sbuf_free(&b);
        sess_close(s, 0);
        return;
    }
    sess_send(s, b.buf, b.len);
    sbuf_free(&b);
}

char *
sess_peer_text(const struct session *s, int with_port, char *buf, size_t len)
{
    struct sockaddr_storage sa;
    socklen_t sa_len = sizeof sa;
    struct net_endpoint e = {.len = 0};

    if (!getpeername(s->fd, (struct sockaddr *)&sa, &sa_len)) {
        netaddr_endpoint_set(&e, (struct sockaddr *)&sa, sa_len);
    }
    return netaddr_endpoint_text(&e, with_port, buf, len);
}

struct session *
sess_start(struct device *dev, int fd)
{
    struct worker *w = dev->worker;
    struct session *s = calloc(1, sizeof *s);

    if (!s) {
        log_error("device %u: out of memory for a new session", dev->index);
        close(fd);
        return NULL;
    }
    s->fd = fd;
    s->id = fleet_new_session_id(w->fleet);
    s->state = SESS_HELLO;
    s->dev = dev;
    s->worker = w;
    s->out_mode = FRAME_EOM;
    s->login_time = time(NULL);
    s->transport = transport_for(dev);
    /* Until the hello is done the peer is unknown: it gets a small message limit. */
    frame_decoder_init(&s->dec, w->fleet->cfg.max_msg_bytes < SESSION_HELLO_MAX_BYTES
                                    ? w->fleet->cfg.max_msg_bytes
                                    : SESSION_HELLO_MAX_BYTES);
    loop_timer_init(&s->hello_timer);
    loop_timer_init(&s->delay_timer);
    if (loop_watch(w->loop, fd, LOOP_READ, on_io, s)) {
        log_error("device %u: cannot watch a new connection: %m", dev->index);
        frame_decoder_close(&s->dec);
        close(fd);
        free(s);
        return NULL;
    }
    s->dev_next = dev->sessions;
    if (dev->sessions) {
        dev->sessions->dev_prev = s;
    }
    dev->sessions = s;
    w->session_count++;
    loop_timer_start(w->loop, &s->hello_timer,
                     loop_now_us(w->loop) + w->fleet->cfg.hello_timeout_s * 1000000ull, hello_timeout);
    log_debug("device %u: session %u opened", dev->index, s->id);
    /* The transport sends our hello, or first negotiates what it needs (sess_transport_ready()). */
    if (s->transport->start(s)) {
        close_now(s);
        return NULL;
    }
    return s->state < SESS_DEAD ? s : NULL;
}

void
sess_transport_ready(struct session *s)
{
    send_hello(s);
}

void
sess_mark_pending(struct session *s)
{
    if (!s->in_pending) {
        s->in_pending = 1;
        s->pending_next = s->worker->pending;
        s->worker->pending = s;
    }
}

void
sess_send(struct session *s, const char *xml, size_t len)
{
    char head[FRAME_HEADER_MAX_BYTES];
    char tail[FRAME_HEADER_MAX_BYTES];
    size_t hlen;
    size_t tlen;

    if (s->state >= SESS_DEAD) {
        return;
    }
    hlen = frame_header(s->out_mode, len, head);
    tlen = frame_trailer(s->out_mode, tail);
    /* Reserved first, so the three appends below cannot fail half-way through a message. */
    if (outq_reserve(&s->out, hlen + len + tlen)) {
        log_error("device %u session %u: out of memory queueing %zu bytes, closing", s->dev->index, s->id,
                  len);
        sess_close(s, 0);
        return;
    }
    outq_add(&s->out, head, hlen);
    outq_add(&s->out, xml, len);
    outq_add(&s->out, tail, tlen);
    sess_mark_pending(s);
}

void
sess_send_shared(struct session *s, const char *head, size_t head_len, const char *body, size_t body_len,
                 const char *tail, size_t tail_len)
{
    char fhead[FRAME_HEADER_MAX_BYTES];
    char ftail[FRAME_HEADER_MAX_BYTES];
    size_t hlen;
    size_t tlen;

    if (s->state >= SESS_DEAD) {
        return;
    }
    hlen = frame_header(s->out_mode, head_len + body_len + tail_len, fhead);
    tlen = frame_trailer(s->out_mode, ftail);
    /* A failure half-way leaves part of a message queued: the session then closes at once, unflushed. */
    if (outq_reserve(&s->out, hlen + head_len) || outq_add(&s->out, fhead, hlen) ||
        outq_add(&s->out, head, head_len) || outq_add_ref(&s->out, body, body_len) ||
        outq_add(&s->out, tail, tail_len) || outq_add(&s->out, ftail, tlen)) {
        log_error("device %u session %u: out of memory queueing %zu bytes, closing", s->dev->index, s->id,
                  head_len + body_len + tail_len);
        sess_close(s, 0);
        return;
    }
    sess_mark_pending(s);
}

static void
on_delay_due(struct loop *loop, struct loop_timer *timer)
{
    struct session *s = (struct session *)((char *)timer - offsetof(struct session, delay_timer));
    monotime_us now = loop_now_us(loop);
    struct sess_delayed *d;

    while ((d = s->delayed_head) && d->due_us <= now && s->state < SESS_DEAD) {
        s->delayed_head = d->next;
        sess_send(s, d->xml, d->len);
        free(d);
    }
    if (s->state >= SESS_DEAD) {
        return; /* the rest is freed with the session */
    }
    if (s->delayed_head) {
        loop_timer_start(loop, &s->delay_timer, s->delayed_head->due_us, on_delay_due);
    } else if (s->close_when_sent) {
        sess_close(s, 1);
    }
}

void
sess_send_delayed(struct session *s, const char *xml, size_t len, uint32_t delay_ms)
{
    struct sess_delayed *d;
    monotime_us due = loop_now_us(s->worker->loop) + (monotime_us)delay_ms * 1000;

    if (s->state >= SESS_DEAD) {
        return;
    }
    if (!(d = malloc(sizeof *d + len))) {
        sess_send(s, xml, len); /* out of memory: late is better than lost */
        return;
    }
    if (s->delayed_head && due < s->delayed_tail->due_us) {
        due = s->delayed_tail->due_us; /* never overtake an earlier reply */
    }
    d->next = NULL;
    d->due_us = due;
    d->len = len;
    memcpy(d->xml, xml, len);
    if (s->delayed_head) {
        s->delayed_tail->next = d;
    } else {
        s->delayed_head = d;
        loop_timer_start(s->worker->loop, &s->delay_timer, due, on_delay_due);
    }
    s->delayed_tail = d;
}

void
sess_close_after_replies(struct session *s)
{
    if (s->delayed_head) {
        s->close_when_sent = 1;
    } else {
        sess_close(s, 1);
    }
}

static void
unlink_from_device(struct session *s)
{
    if (s->dev_prev) {
        s->dev_prev->dev_next = s->dev_next;
    } else if (s->dev->sessions == s) {
        s->dev->sessions = s->dev_next;
    }
    if (s->dev_next) {
        s->dev_next->dev_prev = s->dev_prev;
    }
    s->dev_next = s->dev_prev = NULL;
}

/* Immediate close: descriptor, timer, locks; the memory goes at the safe point. */
static void
close_now(struct session *s)
{
    struct worker *w = s->worker;

    if (s->state == SESS_DEAD) {
        return;
    }
    if (s->state != SESS_HELLO && !s->terminated) {
        s->dev->stats.dropped_sessions++;
    }
    s->state = SESS_DEAD;
    loop_timer_stop(w->loop, &s->hello_timer);
    loop_timer_stop(w->loop, &s->delay_timer);
    stream_unsubscribed(s);
    yp_session_closed(s);
    loop_unwatch(w->loop, s->fd);
    s->transport->close(s); /* we may be inside one of the transport's callbacks now */
    s->fd = -1;
    lock_release_session(&s->dev->ds, s->id);
    unlink_from_device(s);
    w->session_count--;
    s->closing_next = w->closing;
    w->closing = s;
    log_debug("device %u: session %u closed", s->dev->index, s->id);
    if (s->on_closed) {
        s->on_closed(s);
    }
}

void
sess_close(struct session *s, int graceful)
{
    if (s->state >= SESS_CLOSING && !(s->state == SESS_CLOSING && !graceful)) {
        return;
    }
    if (graceful && outq_pending(&s->out)) {
        s->state = SESS_CLOSING;
        lock_release_session(&s->dev->ds, s->id);
        loop_set_events(s->worker->loop, s->fd, LOOP_WRITE);
        sess_mark_pending(s);
        return;
    }
    close_now(s);
}

struct session *
sess_find(struct device *dev, uint32_t id)
{
    for (struct session *s = dev->sessions; s; s = s->dev_next) {
        if (s->id == id && s->state < SESS_DEAD) {
            return s;
        }
    }
    return NULL;
}

static void
on_hello(struct session *s, const char *msg)
{
    struct hello_info info = {0};
    char err[256];

    if (hello_parse(s->worker->fleet->bare_ctx, msg, &info, err, sizeof err)) {
        log_warn("device %u session %u: bad hello: %s", s->dev->index, s->id, err);
        s->dev->stats.in_bad_hellos++;
        sess_close(s, 0);
        goto cleanup;
    }
    if (info.has_session_id) {
        /* RFC 6241 8.1: a client hello with a session-id is an error; the session ends. */
        log_warn("device %u session %u: client hello carries a session-id", s->dev->index, s->id);
        s->dev->stats.in_bad_hellos++;
        sess_close(s, 0);
        goto cleanup;
    }
    if (!info.base10 && !info.base11) {
        log_warn("device %u session %u: no common base capability", s->dev->index, s->id);
        s->dev->stats.in_bad_hellos++;
        sess_close(s, 0);
        goto cleanup;
    }
    if (info.base11) {
        frame_decoder_set_mode(&s->dec, FRAME_CHUNKED);
        s->out_mode = FRAME_CHUNKED;
    }
    loop_timer_stop(s->worker->loop, &s->hello_timer);
    s->dec.max_msg_bytes = s->worker->fleet->cfg.max_msg_bytes;
    s->state = SESS_ACTIVE;
    s->dev->stats.in_sessions++;
    log_debug("device %u session %u: hello done, %s framing", s->dev->index, s->id,
              info.base11 ? "chunked" : "end-of-message");

cleanup:
    hello_info_free(&info);
}

/* Feed bytes to the decoder and act on every complete message. */
int
sess_consume(struct session *s, const char *buf, size_t len)
{
    while (len && s->state < SESS_CLOSING) {
        size_t used = 0;
        enum frame_status st = frame_decode(&s->dec, buf, len, &used);
        buf += used;
        len -= used;
        if (st == FRAME_ERROR) {
            log_warn("device %u session %u: framing error: %s, closing", s->dev->index, s->id,
                     frame_decoder_error(&s->dec));
            if (s->state == SESS_HELLO) {
                s->dev->stats.in_bad_hellos++;
            }
            sess_close(s, 0);
            return -1;
        }
        if (st == FRAME_NEED_MORE) {
            break;
        }
        {
            size_t mlen;
            const char *msg = frame_decoder_message(&s->dec, &mlen);
            if (s->state == SESS_HELLO) {
                on_hello(s, msg);
            } else {
                rpc_process(s, msg, mlen);
            }
            frame_decoder_next(&s->dec);
        }
    }
    return 0;
}

/* Write what is queued; returns -1 when the session died. */
static int
flush(struct session *s)
{
    int rc;

    if (devact_frozen(s->dev)) {
        loop_set_events(s->worker->loop, s->fd, 0); /* no byte either way until the device is up */
        return 0;
    }
    rc = s->transport->flush(s);
    if (rc < 0) {
        close_now(s);
        return -1;
    }
    if (!rc) {
        if (s->state == SESS_CLOSING) {
            close_now(s);
            return -1;
        }
        s->read_paused = 0;
        loop_set_events(s->worker->loop, s->fd, LOOP_READ);
        return 0;
    }
    if (s->transport->reads_to_write) {
        /* Reading stays on: the transport needs it to write (SSH's window adjusts arrive as packets). */
        s->read_paused = 0;
        loop_set_events(s->worker->loop, s->fd, LOOP_READ | LOOP_WRITE);
        return 0;
    }
    /* Short write: wait for room; stop reading while the backlog is large. */
    s->read_paused = outq_pending(&s->out) > SESSION_OUTPUT_HIGH_WATER_BYTES;
    loop_set_events(s->worker->loop, s->fd,
                    LOOP_WRITE | (s->read_paused || s->state == SESS_CLOSING ? 0 : LOOP_READ));
    return 0;
}

static void
on_io(struct loop *loop, int fd, uint32_t events, void *data)
{
    struct session *s = data;

    (void)loop;
    (void)fd;
    if (devact_frozen(s->dev)) {
        loop_set_events(s->worker->loop, s->fd, 0);
        return;
    }
    if ((events & LOOP_WRITE) && flush(s)) {
        return;
    }
    if (s->state < SESS_DEAD) {
        s->transport->on_io(s, events);
    }
}

void
sess_worker_before_sleep(struct loop *loop, void *data)
{
    struct worker *w = data;
    struct session *s;

    (void)loop;
    while ((s = w->pending)) {
        w->pending = s->pending_next;
        s->in_pending = 0;
        if (s->state < SESS_DEAD) {
            flush(s);
        }
    }
    while ((s = w->closing)) {
        w->closing = s->closing_next;
        while (s->delayed_head) {
            struct sess_delayed *d = s->delayed_head;
            s->delayed_head = d->next;
            free(d);
        }
        if (s->transport->free) {
            s->transport->free(s);
        }
        frame_decoder_close(&s->dec);
        outq_free(&s->out);
        free(s);
    }
}

void
sess_close_all(struct worker *w)
{
    for (uint32_t i = w->index; i < w->fleet->cfg.device_count; i += w->fleet->cfg.threads) {
        struct device *dev = &w->fleet->devices[i];
        while (dev->sessions) {
            dev->sessions->terminated = 1;
            close_now(dev->sessions);
        }
    }
    sess_worker_before_sleep(w->loop, w);
}
