/*
 * "fleetsim-stress push": a YANG-Push subscriber to a whole fleet (RFC 8639
 * subscribed notifications over NETCONF, RFC 8640; RFC 8641 datastore
 * subscriptions). Every device gets one session on the one event loop and on
 * it ONE establish-subscription: periodic, on-change, or to an event stream;
 * up to --concurrency are being set up at once. What arrives is scanned
 * (push_scan.c) and counted per subscription: push-updates, their slots
 * (anchor + k x period: missed, duplicated, late), eventTime's offset from
 * its slot, the latency from the slot (or, on-change, from eventTime) to
 * arrival, sizes, and the subscription-* notifications. With --change-rate
 * a second session per device (the editor) sets a watched description to a
 * sequence number at a fleet-wide pace, and each edit's rpc-reply is matched
 * to the push-change-update carrying its number. The run ends like notify's
 * (duration, SIGINT/SIGTERM, every subscription gone): close-session on every
 * subscriber, counting what comes before its reply, so that the fleet's
 * per-subscription counts reconcile exactly (push_recon.c).
 *
 * Latencies against eventTime need the fleet's clock: same host, or clocks
 * kept together.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "conn.h"
#include "push_recon.h"
#include "push_scan.h"
#include "reply_scan.h"
#include "run.h"
#include "stats.h"

#define NC_BASE_NS "urn:ietf:params:xml:ns:netconf:base:1.0"
#define IF_NS      "urn:ietf:params:xml:ns:yang:ietf-interfaces"
#define DS_NS      "urn:ietf:params:xml:ns:yang:ietf-datastores"
/* Idle checks, edit matching and progress are looked at this often. */
#define PUSH_TICK_MS 100
/* Failed devices listed one per line in the summary. */
#define PUSH_PRINT_FAILURES 20
/* Longest wait at the end for the close-session replies, ms; a server that does not answer is left. */
#define PUSH_DRAIN_MS 3000
/* A slot counts as missed at the end only when its time is this far behind the run's end, us: the update
 * of a slot just before the end may still be on its way. */
#define PUSH_SLOT_GRACE_US 200000u
/* An edit whose push-change-update has not come this long after its reply (plus the dampening period) is
 * counted unmatched, and the device's editor takes the next edit. */
#define PUSH_MATCH_WAIT_MS 5000u
/* The longest gap the editor's pacer catches up after (a stalled loop): older due edits are dropped. */
#define PUSH_EDIT_CATCHUP_US 1000000u

/* Why a device failed: the connection's causes, then the subscription's own. */
enum push_fail {
    PUSH_FAIL_REFUSED = CONN_FAIL_COUNT, /* establish-subscription answered with rpc-error */
    PUSH_FAIL_NO_ID,                     /* its reply holds no subscription id */
    PUSH_FAIL_TERMINATED,                /* subscription-terminated arrived */
    PUSH_FAIL_EDITOR,                    /* the editor's session failed */
    PUSH_FAIL_COUNT,
};

enum push_state {
    PSUB_SETUP,      /* connecting, hello, or waiting for establish-subscription's reply */
    PSUB_SUBSCRIBED, /* the subscription is up; what it pushes is counted */
    PSUB_ENDED,      /* subscription-completed: it ended as asked (stop-time) */
    PSUB_FAILED,     /* failed; failure says why */
};

/* The editor's state of one device. */
enum push_edit_state {
    PEDIT_OFF,      /* no editor (not on-change, or --change-rate 0) or it failed */
    PEDIT_SETUP,    /* connecting */
    PEDIT_IDLE,     /* ready for the next edit */
    PEDIT_SENT,     /* edit-config sent, its reply not yet here */
    PEDIT_AWAITING, /* reply here, its push-change-update not yet */
};

struct push_run;

struct push_dev {
    struct conn conn;      /* the subscriber's session */
    struct conn editor;    /* the editor's session (with --change-rate) */
    struct push_run *run;  /* back pointer */
    uint32_t device;       /* device number */
    enum push_state state; /* lifecycle */
    uint32_t sub_id;       /* subscription id from establish-subscription's reply; valid once subscribed */
    struct net_family local_fam;         /* our address's family; valid once local_port is set */
    uint32_t local_addr;                 /* its low 32 bits, host order */
    uint16_t local_port;                 /* our port of the subscriber's session; 0 until the hello is done */
    struct pslots slots;                 /* periodic: slot accounting */
    uint64_t counts[PSCAN_KIND_COUNT];   /* notifications by kind */
    uint64_t foreign;                    /* update notifications naming another subscription id */
    uint64_t bytes;                      /* bytes of push-update and push-change-update messages */
    uint32_t max_bytes;                  /* the largest of them */
    char reason[PSCAN_REASON_MAX_BYTES]; /* the last subscription-terminated or -suspended reason */
    char *failure;                       /* why it failed (malloc'd), NULL while it has not */
    int draining; /* 1 from the close-session at the run's end until its reply or close */
    /* editor */
    enum push_edit_state edit_state; /* lifecycle of the editor */
    uint64_t edit_seq;               /* the number of the edit in flight (PEDIT_SENT, PEDIT_AWAITING) */
    monotime_us edit_sent_us;        /* when it was sent */
    monotime_us edit_reply_us;       /* when its reply arrived (PEDIT_AWAITING) */
    monotime_us change_seen_us;      /* a change update carrying edit_seq arrived before the reply; 0 none */
    uint64_t edits_sent;             /* edit-configs sent */
    uint64_t edits_refused;          /* answered with rpc-error */
    uint64_t edits_matched;          /* followed by their push-change-update */
    uint64_t edits_unmatched;        /* none came within PUSH_MATCH_WAIT_MS after the reply */
    uint64_t stale_changes;          /* change updates carrying an older edit's number (after unmatched) */
};

struct push_run {
    const struct stress_options *o;     /* parameters */
    struct loop *loop;                  /* the one loop */
    struct ly_ctx *xml_ctx;             /* hello parsing */
    char *preamble;                     /* --tcp-preamble content */
    size_t preamble_len;                /* its length */
    struct sbuf rpc;                    /* the establish-subscription rpc, unframed */
    struct push_dev *devs;              /* one per device */
    uint32_t next;                      /* next device to start */
    int starting;                       /* 1 inside start_more(): a failure there must not recurse */
    uint32_t in_setup;                  /* devices started, neither subscribed nor failed */
    uint32_t subscribed;                /* subscriptions accepted (failed later or not) */
    uint32_t live;                      /* subscribed, neither failed nor ended */
    uint32_t failed;                    /* failed devices */
    uint32_t ended_count;               /* subscriptions that completed (stop-time) */
    uint64_t failures[PUSH_FAIL_COUNT]; /* failed devices by cause */
    uint64_t totals[PSCAN_KIND_COUNT];  /* notifications by kind, every device */
    uint64_t updates_total;             /* push-update + push-change-update + events: what is "received" */
    struct latency slot_late;           /* periodic: arrival minus slot time, us (negative clamped to 0) */
    struct latency slot_offset;         /* periodic: |eventTime - slot|, us */
    struct latency event_late;          /* arrival minus eventTime, us (every update) */
    struct latency change_latency;      /* on-change: edit's reply to its push-change-update, us */
    struct latency sizes;               /* bytes per update message */
    uint64_t arrived_before_slot;       /* periodic updates that arrived before their slot's time (clocks) */
    uint64_t edits_skipped;             /* pacer's edits with no idle editor to take them */
    uint64_t edit_counter;              /* edits numbered so far (the sequence numbers) */
    uint32_t edit_cursor;               /* the device the pacer tries next */
    monotime_us next_edit_us;           /* the pacer's next deadline */
    monotime_us start_us;               /* first connect */
    monotime_us all_up_us;              /* every device subscribed or failed; 0 before */
    monotime_us first_us;               /* first update; 0 before */
    monotime_us last_us;                /* last update */
    monotime_us end_us;                 /* the run stopped */
    int64_t end_wall_us;                /* the same on the wall clock (for trailing slots) */
    monotime_us progress_us;            /* progress line last printed */
    monotime_us line_us;                /* next progress line due (no terminal), 0 for none */
    uint64_t progress_total;            /* updates_total then */
    const char *ended;                  /* why the run stopped */
    int as_asked;                       /* 1 when that is the end the options asked for */
    int progress;                       /* 1 when stderr is a terminal */
    struct loop_timer tick;             /* progress, edit matching */
    struct loop_timer duration_timer;   /* --duration */
    struct loop_timer drain_timer;      /* bound of the wait for close-session replies */
    struct loop_timer edit_timer;       /* the editor's pacer */
    uint32_t draining;                  /* sessions still waiting for their close-session reply */
    double user_s;                      /* client user CPU over the run */
    double system_s;                    /* client system CPU over the run */
    struct push_recon recon;            /* --fleet-report's verdict */
    int reconciled;                     /* 1 when recon holds a verdict */
};

static const struct conn_callbacks sub_callbacks;
static const struct conn_callbacks edit_callbacks;

static int64_t
wall_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static uint32_t
clamp_us(int64_t us)
{
    return us < 0 ? 0 : us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
}

static const char *
fail_name(int why)
{
    switch (why) {
    case PUSH_FAIL_REFUSED:
        return "subscription-refused";
    case PUSH_FAIL_NO_ID:
        return "reply-without-id";
    case PUSH_FAIL_TERMINATED:
        return "subscription-terminated";
    case PUSH_FAIL_EDITOR:
        return "editor-failed";
    default:
        return conn_failure_name((enum conn_failure)why);
    }
}

/* ------------------------------------------------------------------ the end */

static void drain_start(struct push_run *run);

static void
finish(struct push_run *run, const char *why, int as_asked)
{
    double start_user, start_system;

    if (run->ended) {
        return;
    }
    run->ended = why;
    run->as_asked = as_asked;
    run->end_us = loop_clock_monotonic();
    run->end_wall_us = wall_us();
    start_user = run->user_s;
    start_system = run->system_s;
    stats_cpu_split(&run->user_s, &run->system_s);
    run->user_s -= start_user;
    run->system_s -= start_system;
    loop_timer_stop(run->loop, &run->edit_timer);
    drain_start(run);
}

static void
on_drain_timeout(struct loop *loop, struct loop_timer *timer)
{
    (void)timer;
    loop_stop(loop);
}

static void
drain_done(struct push_dev *d)
{
    struct push_run *run = d->run;

    d->draining = 0;
    conn_close(&d->conn);
    if (!--run->draining) {
        loop_timer_stop(run->loop, &run->drain_timer);
        loop_stop(run->loop);
    }
}

/*
 * close-session on every live subscription, counting what comes before its reply: the server queued those
 * updates before it read the close, and its report counts them as sent (as notify does, see there).
 */
static void
drain_start(struct push_run *run)
{
    static const char close_rpc[] =
        "<rpc message-id=\"fleetsim-stress-close\" xmlns=\"" NC_BASE_NS "\"><close-session/></rpc>";

    for (uint32_t i = 0; i < run->o->device_count; i++) {
        struct push_dev *d = &run->devs[i];
        struct sbuf b = {0};
        conn_close(&d->editor); /* no more edits; one in flight is left unmatched by design */
        if (run_interrupted() || d->state != PSUB_SUBSCRIBED || d->conn.state != CONN_READY) {
            continue;
        }
        conn_frame(&d->conn, &b, close_rpc, sizeof close_rpc - 1);
        d->draining = !b.failed;
        run->draining += (uint32_t)d->draining;
        if (d->draining && conn_send(&d->conn, b.buf, b.len)) {
            d->draining = 0; /* the failure was reported; nothing more will come */
            run->draining--;
        }
        sbuf_free(&b);
    }
    if (!run->draining) {
        loop_stop(run->loop);
        return;
    }
    loop_timer_start(run->loop, &run->drain_timer, loop_clock_monotonic() + PUSH_DRAIN_MS * 1000u,
                     on_drain_timeout);
}

static void
check_end(struct push_run *run)
{
    if (!run->all_up_us || run->ended || run->live) {
        return;
    }
    /* Nothing left to listen to: subscriptions that completed (stop-time) end the run as asked. */
    finish(run, run->ended_count && !run->failed ? "subscriptions-complete" : "no-subscription-left",
           run->ended_count && !run->failed);
}

static void
on_duration(struct loop *loop, struct loop_timer *timer)
{
    struct push_run *run = (struct push_run *)((char *)timer - offsetof(struct push_run, duration_timer));

    (void)loop;
    finish(run, "duration", 1);
}

static void start_more(struct push_run *run);

static void
check_all_up(struct push_run *run)
{
    if (run->all_up_us || run->next < run->o->device_count || run->in_setup) {
        return;
    }
    run->all_up_us = loop_clock_monotonic();
    if (run->o->duration_s) {
        loop_timer_start(run->loop, &run->duration_timer, run->all_up_us + run->o->duration_s * 1000000ull,
                         on_duration);
    }
    check_end(run);
}

/* Record a device's failure, once. */
static void
device_failed(struct push_dev *d, int why, const char *detail)
{
    struct push_run *run = d->run;
    size_t len = strlen(fail_name(why)) + strlen(detail) + 4;

    if (d->state == PSUB_FAILED) {
        return;
    }
    if (d->state == PSUB_SETUP) {
        run->in_setup--;
    } else if (d->state == PSUB_SUBSCRIBED) {
        run->live--;
    } else {
        run->ended_count--;
    }
    d->state = PSUB_FAILED;
    run->failed++;
    run->failures[why]++;
    d->failure = malloc(len);
    if (d->failure) {
        snprintf(d->failure, len, "%s: %s", fail_name(why), detail);
    }
    conn_close(&d->editor);
    d->edit_state = PEDIT_OFF;
    start_more(run);
    check_all_up(run);
    check_end(run);
}

/* ------------------------------------------------------------------ the subscriber */

static void
on_sub_ready(struct conn *c)
{
    struct push_dev *d = c->user;
    struct push_run *run = d->run;
    struct sockaddr_storage local;
    socklen_t local_len = sizeof local;
    struct sbuf b = {0};

    if (getsockname(c->fd, (struct sockaddr *)&local, &local_len) ||
        netaddr_split((struct sockaddr *)&local, &d->local_fam, &d->local_addr, &d->local_port)) {
        d->local_port = 0;
    }
    /* The capabilities are not needed any more; 10k hellos of a few dozen URIs each add up. */
    hello_info_free(&c->server_hello);
    conn_frame(c, &b, run->rpc.buf, run->rpc.len);
    if (b.failed) {
        sbuf_free(&b);
        conn_close(c);
        device_failed(d, CONN_FAIL_RESOURCES, "out of memory framing establish-subscription");
        return;
    }
    conn_expect(c);
    conn_send(c, b.buf, b.len);
    sbuf_free(&b);
}

static void
count_update(struct push_dev *d, const struct pscan_info *n, size_t len, int64_t arrival_wall_us)
{
    struct push_run *run = d->run;
    const struct stress_options *o = run->o;

    run->updates_total++;
    run->last_us = loop_clock_monotonic();
    if (!run->first_us) {
        run->first_us = run->last_us;
    }
    d->bytes += len;
    if (len > d->max_bytes) {
        d->max_bytes = (uint32_t)(len > UINT32_MAX ? UINT32_MAX : len);
    }
    latency_add(&run->sizes, clamp_us((int64_t)len));
    if (!n->has_time) {
        return;
    }
    latency_add(&run->event_late, clamp_us(arrival_wall_us - n->event_us));
    if (n->kind == PSCAN_PUSH_UPDATE && o->period_cs) {
        uint64_t k;
        int64_t offset;
        if (pslots_add(&d->slots, n->event_us, &k, &offset) != PSLOT_EARLY) {
            int64_t late = arrival_wall_us - pslots_slot_us(&d->slots, k);
            latency_add(&run->slot_offset, clamp_us(offset < 0 ? -offset : offset));
            latency_add(&run->slot_late, clamp_us(late));
            run->arrived_before_slot += late < 0;
        }
    }
}

/* A push-change-update carrying edit number @p seq arrived on @p d's subscription. */
static void
match_change(struct push_dev *d, uint64_t seq, monotime_us now)
{
    struct push_run *run = d->run;

    if ((d->edit_state != PEDIT_SENT && d->edit_state != PEDIT_AWAITING) || seq != d->edit_seq) {
        if (seq < d->edit_seq || d->edit_state == PEDIT_IDLE) {
            d->stale_changes++;
        }
        return;
    }
    if (d->edit_state == PEDIT_SENT) {
        d->change_seen_us = now; /* before the reply: latency 0, taken when the reply comes */
        return;
    }
    latency_add(&run->change_latency, clamp_us((int64_t)(now - d->edit_reply_us)));
    d->edits_matched++;
    d->edit_state = PEDIT_IDLE;
}

static void
on_notification(struct push_dev *d, const struct pscan_info *n, size_t len)
{
    struct push_run *run = d->run;
    int64_t arrival = wall_us();

    d->counts[n->kind]++;
    run->totals[n->kind]++;
    switch (n->kind) {
    case PSCAN_PUSH_UPDATE:
    case PSCAN_PUSH_CHANGE_UPDATE:
        if (n->has_id && d->state != PSUB_SETUP && n->id != d->sub_id) {
            d->foreign++;
            return;
        }
        count_update(d, n, len, arrival);
        if (n->kind == PSCAN_PUSH_CHANGE_UPDATE && n->has_seq) {
            match_change(d, n->seq, loop_clock_monotonic());
        }
        return;
    case PSCAN_EVENT:
        count_update(d, n, len, arrival);
        return;
    case PSCAN_TERMINATED:
        memcpy(d->reason, n->reason, sizeof d->reason);
        if (!n->has_id || n->id == d->sub_id) {
            char detail[PSCAN_REASON_MAX_BYTES + 32];
            snprintf(detail, sizeof detail, "reason %s", n->reason[0] ? n->reason : "(none)");
            if (!run->ended) {
                conn_close(&d->conn);
                device_failed(d, PUSH_FAIL_TERMINATED, detail);
            }
        }
        return;
    case PSCAN_SUSPENDED:
        memcpy(d->reason, n->reason, sizeof d->reason);
        return;
    case PSCAN_COMPLETED:
        if (d->state == PSUB_SUBSCRIBED && (!n->has_id || n->id == d->sub_id)) {
            d->state = PSUB_ENDED;
            run->live--;
            run->ended_count++;
            conn_close(&d->editor);
            d->edit_state = PEDIT_OFF;
            check_end(run);
        }
        return;
    default:
        return;
    }
}

/* The text of the first element of an rpc-reply whose start tag ends in @p name ("error-app-tag>"), cut at
 * its first '<' and at @p len, or "": shown as written, references and all. */
static void
reply_text(const char *msg, const char *name, char *buf, size_t len)
{
    const char *p = strstr(msg, name);
    const char *end;
    size_t n;

    buf[0] = '\0';
    if (!p || !(end = strchr(p += strlen(name), '<'))) {
        return;
    }
    n = (size_t)(end - p) < len ? (size_t)(end - p) : len - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
}

static void
on_sub_message(struct conn *c, const char *msg, size_t len)
{
    struct push_dev *d = c->user;
    struct push_run *run = d->run;
    struct pscan_info n;
    struct reply_info r;

    if (run->ended && !d->draining) {
        return;
    }
    if (pscan_scan(msg, len, run->o->change_rate > 0, &n) != PSCAN_OTHER) {
        on_notification(d, &n, len);
        return;
    }
    if (d->draining) {
        if (reply_scan(msg, len, &r) == REPLY_RPC_REPLY) {
            drain_done(d);
        }
        return;
    }
    if (d->state != PSUB_SETUP || reply_scan(msg, len, &r) != REPLY_RPC_REPLY) {
        return; /* not ours to judge: an unexpected message is ignored */
    }
    if (r.error_count) {
        char app[PSCAN_REASON_MAX_BYTES * 3 + REPLY_TAG_MAX_BYTES + 8];
        char tag[PSCAN_REASON_MAX_BYTES];
        char text[PSCAN_REASON_MAX_BYTES * 2];
        reply_text(msg, "error-app-tag>", tag, sizeof tag);
        reply_text(msg, "error-message xml:lang=\"en\">", text, sizeof text);
        if (!text[0]) {
            reply_text(msg, "error-message>", text, sizeof text);
        }
        snprintf(app, sizeof app, "%s%s%s%s%s", r.error_tag[0] ? r.error_tag : "(no error-tag)",
                 tag[0] ? " " : "", tag, text[0] ? ": " : "", text);
        conn_close(c);
        device_failed(d, PUSH_FAIL_REFUSED, app);
        return;
    }
    if (pscan_reply_id(msg, &d->sub_id)) {
        conn_close(c);
        device_failed(d, PUSH_FAIL_NO_ID, "establish-subscription's reply holds no <id>");
        return;
    }
    conn_idle(c);
    d->state = PSUB_SUBSCRIBED;
    run->in_setup--;
    run->subscribed++;
    run->live++;
    if (run->o->change_rate > 0) {
        uint32_t addr;
        uint16_t port;
        run_conn_prepare(run->o, &d->editor, d->device, run->preamble, run->preamble_len, &addr, &port);
        d->edit_state = PEDIT_SETUP;
        if (conn_start(&d->editor, run->loop, run->xml_ctx, &run->o->ip_fam, addr, port, &edit_callbacks,
                       d)) {
            d->edit_state = PEDIT_OFF;
        }
    }
    start_more(run);
    check_all_up(run);
}

static void
on_sub_failed(struct conn *c, enum conn_failure why, const char *detail)
{
    struct push_dev *d = c->user;

    if (d->draining) {
        drain_done(d); /* closed at our close-session, with or without its reply: all it sent is read */
        return;
    }
    if (d->state == PSUB_ENDED && why == CONN_FAIL_CLOSED) {
        return; /* a server may close once the subscription completed */
    }
    device_failed(d, why, detail);
}

static const struct conn_callbacks sub_callbacks = {on_sub_ready, on_sub_message, on_sub_failed, NULL};

/* ------------------------------------------------------------------ the editor */

static void
on_edit_ready(struct conn *c)
{
    struct push_dev *d = c->user;

    hello_info_free(&c->server_hello);
    conn_idle(c);
    d->edit_state = PEDIT_IDLE;
}

static void
on_edit_message(struct conn *c, const char *msg, size_t len)
{
    struct push_dev *d = c->user;
    struct push_run *run = d->run;
    struct reply_info r;

    if (d->edit_state != PEDIT_SENT || reply_scan(msg, len, &r) != REPLY_RPC_REPLY) {
        return;
    }
    conn_idle(c);
    if (r.error_count || !r.ok) {
        d->edits_refused++;
        d->edit_state = PEDIT_IDLE;
        return;
    }
    d->edit_reply_us = loop_clock_monotonic();
    if (d->change_seen_us) {
        latency_add(&run->change_latency, 0);
        d->edits_matched++;
        d->edit_state = PEDIT_IDLE;
        return;
    }
    d->edit_state = PEDIT_AWAITING;
}

static void
on_edit_failed(struct conn *c, enum conn_failure why, const char *detail)
{
    struct push_dev *d = c->user;
    char text[256];

    d->edit_state = PEDIT_OFF;
    if (d->run->ended || d->state != PSUB_SUBSCRIBED) {
        return;
    }
    snprintf(text, sizeof text, "%s: %s", conn_failure_name(why), detail);
    conn_close(&d->conn);
    device_failed(d, PUSH_FAIL_EDITOR, text);
}

static const struct conn_callbacks edit_callbacks = {on_edit_ready, on_edit_message, on_edit_failed, NULL};

/* Send edit number @p seq on @p d's editor: the watched description set to PSCAN_SEQ_MARK and the number. */
static void
edit_send(struct push_run *run, struct push_dev *d, uint64_t seq)
{
    struct sbuf x = {0};
    struct sbuf b = {0};

    sbuf_printf(&x,
                "<rpc message-id=\"%" PRIu64 "\" xmlns=\"" NC_BASE_NS
                "\"><edit-config><target><running/></target>"
                "<config><interfaces xmlns=\"" IF_NS "\"><interface><name>",
                seq);
    sbuf_add_xml(&x, run->o->change_interface);
    sbuf_printf(&x,
                "</name><description>" PSCAN_SEQ_MARK "%" PRIu64 "</description></interface></interfaces>"
                "</config></edit-config></rpc>",
                seq);
    conn_frame(&d->editor, &b, x.buf, x.len);
    if (!x.failed && !b.failed) {
        d->edit_seq = seq;
        d->edit_sent_us = loop_clock_monotonic();
        d->change_seen_us = 0;
        d->edit_state = PEDIT_SENT;
        d->edits_sent++;
        conn_expect(&d->editor);
        conn_send(&d->editor, b.buf, b.len);
    }
    sbuf_free(&x);
    sbuf_free(&b);
}

/* The pacer: --change-rate edits a second over the fleet, deadlines from the previous one (no drift). */
static void
on_edit_timer(struct loop *loop, struct loop_timer *timer)
{
    struct push_run *run = (struct push_run *)((char *)timer - offsetof(struct push_run, edit_timer));
    uint64_t interval_us = (uint64_t)(1e6 / run->o->change_rate);
    monotime_us now = loop_clock_monotonic();
    uint32_t n = run->o->device_count;

    if (!interval_us) {
        interval_us = 1;
    }
    if (now - run->next_edit_us > PUSH_EDIT_CATCHUP_US) {
        run->next_edit_us = now; /* a stalled loop: do not burst what was missed */
    }
    while (run->next_edit_us <= now) {
        uint32_t tried;
        for (tried = 0; tried < n; tried++) {
            struct push_dev *d = &run->devs[run->edit_cursor];
            run->edit_cursor = (run->edit_cursor + 1) % n;
            if (d->edit_state == PEDIT_IDLE && d->state == PSUB_SUBSCRIBED) {
                edit_send(run, d, ++run->edit_counter);
                break;
            }
        }
        if (tried == n) {
            run->edits_skipped++;
        }
        run->next_edit_us += interval_us;
    }
    loop_timer_start(loop, timer, run->next_edit_us, on_edit_timer);
}

/* Edits whose change update did not come in time are unmatched; the editor goes on. */
static void
edits_expire(struct push_run *run, monotime_us now)
{
    uint64_t wait_us = (PUSH_MATCH_WAIT_MS + run->o->dampening_cs * 10u) * 1000ull;

    for (uint32_t i = 0; i < run->o->device_count; i++) {
        struct push_dev *d = &run->devs[i];
        if (d->edit_state == PEDIT_AWAITING && now - d->edit_reply_us > wait_us) {
            d->edits_unmatched++;
            d->edit_state = PEDIT_IDLE;
        }
    }
}

/* ------------------------------------------------------------------ setup */

static void
start_more(struct push_run *run)
{
    const struct stress_options *o = run->o;

    if (run->starting) {
        return;
    }
    run->starting = 1;
    while (!run->ended && run->in_setup < o->concurrency && run->next < o->device_count) {
        struct push_dev *d = &run->devs[run->next++];
        uint32_t addr;
        uint16_t port;
        run_conn_prepare(o, &d->conn, d->device, run->preamble, run->preamble_len, &addr, &port);
        run->in_setup++;
        if (conn_start(&d->conn, run->loop, run->xml_ctx, &o->ip_fam, addr, port, &sub_callbacks, d)) {
            device_failed(d, CONN_FAIL_RESOURCES, "cannot create a socket");
        }
    }
    run->starting = 0;
}

static void
on_tick(struct loop *loop, struct loop_timer *timer)
{
    struct push_run *run = (struct push_run *)((char *)timer - offsetof(struct push_run, tick));
    const struct stress_options *o = run->o;
    monotime_us now = loop_clock_monotonic();
    double dt = (double)(now - run->progress_us) / 1e6;
    double rate = dt > 0 ? (double)(run->updates_total - run->progress_total) / dt : 0.0;

    if (o->change_rate > 0) {
        edits_expire(run, now);
        if (run->all_up_us && !loop_timer_armed(&run->edit_timer) && !run->ended) {
            run->next_edit_us = now;
            loop_timer_start(loop, &run->edit_timer, now, on_edit_timer);
        }
    }
    if (run->progress && now - run->progress_us >= 1000000u) {
        fprintf(stderr, "\rsubscribed %u/%u failed %u  updates %" PRIu64 "  %.0f/s   ", (unsigned)run->live,
                (unsigned)o->device_count, (unsigned)run->failed, run->updates_total, rate);
        run->progress_us = now;
        run->progress_total = run->updates_total;
    } else if (run->line_us && now >= run->line_us) {
        run_progress_line(run->start_us, "%u of %u subscribed, %u failed, %" PRIu64 " updates (%.1f/s)",
                          (unsigned)run->live, (unsigned)o->device_count, (unsigned)run->failed,
                          run->updates_total, rate);
        run->progress_us = now;
        run->progress_total = run->updates_total;
        run->line_us += RUN_PROGRESS_LINE_US;
    }
    loop_timer_start(loop, timer, loop_now_us(loop) + PUSH_TICK_MS * 1000u, on_tick);
}

/* The establish-subscription every session sends (RFC 8639 section 2.4.2, RFC 8641 section 4.4.1). */
static int
build_rpc(struct push_run *run)
{
    static const char *const change_types[] = {"create", "delete", "insert", "move", "replace"};
    const struct stress_options *o = run->o;
    struct sbuf *b = &run->rpc;
    char *subtree = NULL;
    char bad[200];

    if (o->push_subtree && !(subtree = run_read_file(o->push_subtree, NULL))) {
        return -1;
    }
    sbuf_adds(b, "<rpc message-id=\"1\" xmlns=\"" NC_BASE_NS "\"><establish-subscription xmlns=\"" PSCAN_SN_NS
                 "\" xmlns:yp=\"" PSCAN_YP_NS "\" xmlns:ds=\"" DS_NS "\"");
    if (o->push_xpath && pscan_xpath_ns_decls(o->push_xpath, b, bad, sizeof bad)) {
        fprintf(stderr,
                "fleetsim-stress: --xpath: the namespace of prefix \"%s\" is not known (prefixes are module "
                "names; ietf-* and iana-* are known): give the filter with --subtree FILE\n",
                bad);
        free(subtree);
        return -1;
    }
    sbuf_adds(b, ">");
    if (o->push_stream) {
        sbuf_adds(b, "<stream>");
        sbuf_add_xml(b, o->push_stream);
        sbuf_adds(b, "</stream>");
        if (o->push_xpath) {
            sbuf_adds(b, "<stream-xpath-filter>");
            sbuf_add_xml(b, o->push_xpath);
            sbuf_adds(b, "</stream-xpath-filter>");
        } else if (subtree) {
            sbuf_printf(b, "<stream-subtree-filter>%s</stream-subtree-filter>", subtree);
        }
        if (o->start_time) {
            sbuf_adds(b, "<replay-start-time>");
            sbuf_add_xml(b, o->start_time);
            sbuf_adds(b, "</replay-start-time>");
        }
    } else {
        sbuf_printf(b, "<yp:datastore>ds:%s</yp:datastore>",
                    o->push_datastore == PUSH_DS_RUNNING ? "running" : "operational");
        if (o->push_xpath) {
            sbuf_adds(b, "<yp:datastore-xpath-filter>");
            sbuf_add_xml(b, o->push_xpath);
            sbuf_adds(b, "</yp:datastore-xpath-filter>");
        } else if (subtree) {
            sbuf_printf(b, "<yp:datastore-subtree-filter>%s</yp:datastore-subtree-filter>", subtree);
        }
    }
    if (o->stop_time) {
        sbuf_adds(b, "<stop-time>");
        sbuf_add_xml(b, o->stop_time);
        sbuf_adds(b, "</stop-time>");
    }
    if (o->period_cs) {
        sbuf_printf(b, "<yp:periodic><yp:period>%u</yp:period>", (unsigned)o->period_cs);
        if (o->anchor_time) {
            sbuf_adds(b, "<yp:anchor-time>");
            sbuf_add_xml(b, o->anchor_time);
            sbuf_adds(b, "</yp:anchor-time>");
        }
        sbuf_adds(b, "</yp:periodic>");
    } else if (o->on_change) {
        sbuf_printf(b, "<yp:on-change><yp:dampening-period>%u</yp:dampening-period>",
                    (unsigned)o->dampening_cs);
        sbuf_printf(b, "<yp:sync-on-start>%s</yp:sync-on-start>", o->sync_on_start ? "true" : "false");
        for (size_t i = 0; o->excluded_change && i < sizeof change_types / sizeof change_types[0]; i++) {
            const char *p = o->excluded_change;
            size_t n = strlen(change_types[i]);
            for (; *p; p += strcspn(p, ","), p += *p == ',') {
                if (strcspn(p, ",") == n && !strncmp(p, change_types[i], n)) {
                    sbuf_printf(b, "<yp:excluded-change>%s</yp:excluded-change>", change_types[i]);
                    break;
                }
            }
        }
        sbuf_adds(b, "</yp:on-change>");
    }
    sbuf_adds(b, "</establish-subscription></rpc>");
    free(subtree);
    return b->failed ? -1 : 0;
}

/* ------------------------------------------------------------------ results */

struct push_totals {
    uint64_t missed, duplicates, late, early; /* periodic slots, every device */
    uint64_t trailing;                        /* of missed: slots due before the end after the last update */
    uint64_t edits_sent, edits_refused, edits_matched, edits_unmatched, edits_in_flight, stale_changes;
    uint64_t foreign;            /* updates naming another subscription id */
    uint64_t suspended, resumed; /* subscription-suspended, -resumed */
    uint64_t bytes;              /* update bytes */
    double span_s;               /* first to last update */
    double rate;                 /* updates per second over that span */
};

static void
totals(struct push_run *run, struct push_totals *t)
{
    memset(t, 0, sizeof *t);
    for (uint32_t i = 0; i < run->o->device_count; i++) {
        struct push_dev *d = &run->devs[i];
        if (run->o->period_cs && d->state != PSUB_SETUP && d->state != PSUB_FAILED && !run_interrupted()) {
            t->trailing += pslots_finish(&d->slots, run->end_wall_us, PUSH_SLOT_GRACE_US);
        }
        t->missed += d->slots.missed;
        t->duplicates += d->slots.duplicates;
        t->late += d->slots.late;
        t->early += d->slots.early;
        t->edits_sent += d->edits_sent;
        t->edits_refused += d->edits_refused;
        t->edits_matched += d->edits_matched;
        t->edits_unmatched += d->edits_unmatched;
        t->edits_in_flight += d->edit_state == PEDIT_SENT || d->edit_state == PEDIT_AWAITING;
        t->stale_changes += d->stale_changes;
        t->foreign += d->foreign;
        t->bytes += d->bytes;
    }
    t->suspended = run->totals[PSCAN_SUSPENDED];
    t->resumed = run->totals[PSCAN_RESUMED];
    t->span_s = run->updates_total ? (double)(run->last_us - run->first_us) / 1e6 : 0.0;
    t->rate = t->span_s > 0 ? (double)run->updates_total / t->span_s : 0.0;
}

static const char *
kind_text(const struct stress_options *o)
{
    return o->push_stream ? "stream" : o->period_cs ? "periodic" : "on-change";
}

/* One latency line: p50 p90 p99 p99.9 max, in ms with @p decimals. */
static void
print_latency(const char *name, const struct latency *l, double div, int decimals, const char *unit)
{
    static const double pcts[] = {50, 90, 99, 99.9, 100};
    char v[5][32];

    for (int i = 0; i < 5; i++) {
        latency_text(l, pcts[i], div, decimals, v[i], sizeof v[i]);
    }
    printf("%s (%s, %" PRIu64 "): p50 %s p90 %s p99 %s p99.9 %s max %s\n", name, unit, l->count, v[0], v[1],
           v[2], v[3], v[4]);
}

static void
print_summary(const struct push_run *run, const struct push_totals *t)
{
    const struct stress_options *o = run->o;
    int any = 0, listed = 0;

    printf("fleetsim-stress push: %u devices, %s", (unsigned)o->device_count, kind_text(o));
    if (o->push_stream) {
        printf(" to stream %s", o->push_stream);
    } else {
        printf(" of %s", o->push_datastore == PUSH_DS_RUNNING ? "running" : "operational");
    }
    if (o->period_cs) {
        printf(", period %.2f s", o->period_cs / 100.0);
    } else if (o->on_change) {
        printf(", dampening %.2f s", o->dampening_cs / 100.0);
    }
    printf("%s, concurrency %u\n", o->push_xpath || o->push_subtree ? ", filtered" : "",
           (unsigned)o->concurrency);
    printf("subscribed: %u of %u in %.3f s\n", (unsigned)run->subscribed, (unsigned)o->device_count,
           (double)((run->all_up_us ? run->all_up_us : run->end_us) - run->start_us) / 1e6);
    if (run_interrupted()) {
        printf("ended: interrupted by %s after %.3f s\n", run_interrupted_name(),
               (double)(run->end_us - run->start_us) / 1e6);
    } else {
        printf("ended: %s%s after %.3f s\n", run->ended, run->as_asked ? "" : " (not as asked)",
               (double)(run->end_us - run->start_us) / 1e6);
    }
    printf("Updates per second: %.1f\n", t->rate);
    printf("received: push-update %" PRIu64 ", push-change-update %" PRIu64 ", events %" PRIu64 " in %.3f s; "
           "%" PRIu64 " bytes\n",
           run->totals[PSCAN_PUSH_UPDATE], run->totals[PSCAN_PUSH_CHANGE_UPDATE], run->totals[PSCAN_EVENT],
           t->span_s, t->bytes);
    printf("subscription notifications: modified %" PRIu64 ", suspended %" PRIu64 ", resumed %" PRIu64
           ", terminated %" PRIu64 ", completed %" PRIu64 ", replay-completed %" PRIu64 "\n",
           run->totals[PSCAN_MODIFIED], t->suspended, t->resumed, run->totals[PSCAN_TERMINATED],
           run->totals[PSCAN_COMPLETED], run->totals[PSCAN_REPLAY_COMPLETED]);
    if (o->period_cs) {
        printf("periods: missed %" PRIu64 " (of which after the last update %" PRIu64 "), duplicated %" PRIu64
               ", late %" PRIu64 ", before the anchor %" PRIu64 "\n",
               t->missed, t->trailing, t->duplicates, t->late, t->early);
        print_latency("eventTime off its slot", &run->slot_offset, 1000, 3, "ms");
        print_latency("arrival after slot", &run->slot_late, 1000, 3, "ms");
        if (run->arrived_before_slot) {
            printf("  %" PRIu64 " updates arrived before their slot: the clocks differ\n",
                   run->arrived_before_slot);
        }
    } else {
        print_latency("arrival after eventTime", &run->event_late, 1000, 3, "ms");
    }
    print_latency("update size", &run->sizes, 1, 0, "bytes");
    if (o->change_rate > 0) {
        printf("edits: sent %" PRIu64 ", refused %" PRIu64 ", matched %" PRIu64 ", unmatched %" PRIu64
               ", in flight at the end %" PRIu64 ", skipped (no idle editor) %" PRIu64
               ", stale changes %" PRIu64 "\n",
               t->edits_sent, t->edits_refused, t->edits_matched, t->edits_unmatched, t->edits_in_flight,
               run->edits_skipped, t->stale_changes);
        print_latency("edit reply to push-change-update", &run->change_latency, 1000, 3, "ms");
    }
    if (t->foreign) {
        printf("updates naming another subscription id: %" PRIu64 "\n", t->foreign);
    }
    printf("failures:");
    for (int i = 1; i < PUSH_FAIL_COUNT; i++) {
        if (run->failures[i]) {
            printf(" %s %" PRIu64, fail_name(i), run->failures[i]);
            any = 1;
        }
    }
    printf("%s\n", any ? "" : " none");
    for (uint32_t i = 0; i < o->device_count && listed < PUSH_PRINT_FAILURES; i++) {
        const struct push_dev *d = &run->devs[i];
        char where[NETADDR_TEXT_BYTES];
        if (d->state != PSUB_FAILED) {
            continue;
        }
        printf("  device %u %s: %s\n", (unsigned)i, run_target_text(o, i, where, sizeof where),
               d->failure ? d->failure : "(out of memory)");
        listed++;
    }
    if (run->failed > (uint32_t)listed) {
        printf("  ... %u more in --json\n", (unsigned)(run->failed - (uint32_t)listed));
    }
    printf("client CPU: %.3f s (user %.3f, system %.3f)\n", run->user_s + run->system_s, run->user_s,
           run->system_s);
}

static void
json_latency(struct sbuf *b, const char *name, const struct latency *l)
{
    static const double pcts[] = {50, 90, 99, 99.9, 100};
    static const char *const names[] = {"p50", "p90", "p99", "p99_9", "max"};

    sbuf_printf(b, ",\"%s\":{\"count\":%" PRIu64, name, l->count);
    for (int i = 0; i < 5; i++) {
        sbuf_printf(b, ",\"%s\":", names[i]);
        latency_json(b, l, pcts[i], 1, 0);
    }
    sbuf_adds(b, "}");
}

static void
json_opt_string(struct sbuf *b, const char *name, const char *value)
{
    sbuf_printf(b, ",\"%s\":", name);
    json_string_or_null(b, value);
}

static int
write_manifest(const struct push_run *run, const struct push_totals *t)
{
    const struct stress_options *o = run->o;
    char ip_text[NETADDR_TEXT_BYTES];
    struct sbuf b = {0};
    int rc;

    sbuf_adds(&b, "{\"tool\":\"fleetsim-stress\",\"version\":");
    sbuf_add_json(&b, FLEETSIM_VERSION);
    sbuf_printf(&b,
                ",\"mode\":\"push\",\"parameters\":{\"ip\":\"%s\",\"port\":%u,\"device_count\":%u,"
                "\"ip_per_device\":%s,\"concurrency\":%u,\"kind\":\"%s\",\"datastore\":\"%s\"",
                netaddr_text(&o->ip_fam, o->ip, ip_text, sizeof ip_text), (unsigned)o->port,
                (unsigned)o->device_count, o->ip_per_device ? "true" : "false", (unsigned)o->concurrency,
                kind_text(o), o->push_datastore == PUSH_DS_RUNNING ? "running" : "operational");
    json_opt_string(&b, "stream", o->push_stream);
    sbuf_printf(&b, ",\"period_cs\":%u,\"dampening_cs\":%u,\"sync_on_start\":%s", (unsigned)o->period_cs,
                (unsigned)o->dampening_cs, o->on_change && o->sync_on_start ? "true" : "false");
    json_opt_string(&b, "anchor_time", o->anchor_time);
    json_opt_string(&b, "excluded_change", o->excluded_change);
    json_opt_string(&b, "xpath", o->push_xpath);
    json_opt_string(&b, "subtree", o->push_subtree);
    json_opt_string(&b, "start_time", o->start_time);
    json_opt_string(&b, "stop_time", o->stop_time);
    sbuf_printf(&b, ",\"duration_s\":%u,\"change_rate\":%.6f", (unsigned)o->duration_s, o->change_rate);
    json_opt_string(&b, "change_interface", o->change_rate > 0 ? o->change_interface : NULL);
    json_opt_string(&b, "fleet_report", o->fleet_report);
    sbuf_printf(&b, ",\"msg_timeout_s\":%u,\"legacy_framing\":%s,%s", (unsigned)o->msg_timeout_s,
                o->legacy_framing ? "true" : "false", conn_transport_json());
    json_opt_string(&b, "tcp_preamble", o->preamble_path);
    sbuf_adds(&b, "},\"results\":{\"interrupted\":");
    json_string_or_null(&b, run_interrupted_name());
    sbuf_printf(&b,
                ",\"subscribed\":%u,\"failed\":%u,\"ended\":\"%s\",\"ended_as_asked\":%s,\"run_s\":%.6f,"
                "\"setup_s\":%.6f,\"first_to_last_s\":%.6f,\"updates_per_second\":%.3f,\"received\":{",
                (unsigned)run->subscribed, (unsigned)run->failed, run->ended,
                run->as_asked ? "true" : "false", (double)(run->end_us - run->start_us) / 1e6,
                run->all_up_us ? (double)(run->all_up_us - run->start_us) / 1e6 : 0.0, t->span_s, t->rate);
    for (int k = 0; k < PSCAN_KIND_COUNT; k++) {
        sbuf_printf(&b, "%s\"%s\":%" PRIu64, k ? "," : "", pscan_kind_name((enum pscan_kind)k),
                    run->totals[k]);
    }
    sbuf_printf(&b,
                "},\"bytes\":%" PRIu64 ",\"periods\":{\"missed\":%" PRIu64 ",\"missed_after_last\":%" PRIu64
                ",\"duplicated\":%" PRIu64 ",\"late\":%" PRIu64 ",\"before_anchor\":%" PRIu64
                ",\"arrived_before_slot\":%" PRIu64 "},\"latency_us\":{",
                t->bytes, t->missed, t->trailing, t->duplicates, t->late, t->early, run->arrived_before_slot);
    sbuf_printf(&b, "\"unit\":\"us\"");
    json_latency(&b, "slot_offset", &run->slot_offset);
    json_latency(&b, "arrival_after_slot", &run->slot_late);
    json_latency(&b, "arrival_after_event_time", &run->event_late);
    json_latency(&b, "edit_reply_to_change_update", &run->change_latency);
    sbuf_adds(&b, "}");
    json_latency(&b, "update_bytes", &run->sizes);
    sbuf_printf(&b,
                ",\"edits\":{\"sent\":%" PRIu64 ",\"refused\":%" PRIu64 ",\"matched\":%" PRIu64
                ",\"unmatched\":%" PRIu64 ",\"in_flight\":%" PRIu64 ",\"skipped\":%" PRIu64
                ",\"stale_changes\":%" PRIu64 "},\"foreign_id_updates\":%" PRIu64 ",\"failures\":{",
                t->edits_sent, t->edits_refused, t->edits_matched, t->edits_unmatched, t->edits_in_flight,
                run->edits_skipped, t->stale_changes, t->foreign);
    for (int i = 1; i < PUSH_FAIL_COUNT; i++) {
        sbuf_printf(&b, "%s\"%s\":%" PRIu64, i > 1 ? "," : "", fail_name(i), run->failures[i]);
    }
    sbuf_printf(&b, "},\"client_cpu_s\":%.6f,\"client_user_s\":%.6f,\"client_system_s\":%.6f",
                run->user_s + run->system_s, run->user_s, run->system_s);
    sbuf_adds(&b, ",\"reconciliation\":");
    if (run->reconciled) {
        push_recon_json(&b, &run->recon);
    } else {
        sbuf_adds(&b, "null");
    }
    sbuf_adds(&b, "},\"devices\":[");
    for (uint32_t i = 0; i < o->device_count && !b.failed; i++) {
        const struct push_dev *d = &run->devs[i];
        char text[NETADDR_TEXT_BYTES];
        uint32_t addr;
        uint16_t port;
        run_target(o, i, &addr, &port);
        sbuf_printf(&b, "%s{\"device\":%u,\"address\":\"%s\",\"port\":%u,\"local\":", i ? "," : "",
                    (unsigned)i, netaddr_text(&o->ip_fam, addr, text, sizeof text), (unsigned)port);
        if (d->local_port) {
            sbuf_printf(&b, "\"%s:%u\"", netaddr_host(&d->local_fam, d->local_addr, text, sizeof text),
                        (unsigned)d->local_port);
        } else {
            sbuf_adds(&b, "null");
        }
        if (d->state == PSUB_SETUP ||
            (d->state == PSUB_FAILED && !d->sub_id && !d->counts[PSCAN_PUSH_UPDATE])) {
            sbuf_adds(&b, ",\"id\":null");
        } else {
            sbuf_printf(&b, ",\"id\":%u", (unsigned)d->sub_id);
        }
        sbuf_printf(&b,
                    ",\"updates\":%" PRIu64 ",\"change_updates\":%" PRIu64 ",\"events\":%" PRIu64
                    ",\"missed\":%" PRIu64 ",\"duplicated\":%" PRIu64 ",\"late\":%" PRIu64
                    ",\"suspended\":%" PRIu64 ",\"resumed\":%" PRIu64 ",\"modified\":%" PRIu64
                    ",\"terminated\":%" PRIu64 ",\"bytes\":%" PRIu64
                    ",\"max_bytes\":%u,\"edits_sent\":%" PRIu64 ",\"edits_matched\":%" PRIu64
                    ",\"edits_unmatched\":%" PRIu64,
                    d->counts[PSCAN_PUSH_UPDATE], d->counts[PSCAN_PUSH_CHANGE_UPDATE], d->counts[PSCAN_EVENT],
                    d->slots.missed, d->slots.duplicates, d->slots.late, d->counts[PSCAN_SUSPENDED],
                    d->counts[PSCAN_RESUMED], d->counts[PSCAN_MODIFIED], d->counts[PSCAN_TERMINATED],
                    d->bytes, (unsigned)d->max_bytes, d->edits_sent, d->edits_matched, d->edits_unmatched);
        json_opt_string(&b, "reason", d->reason[0] ? d->reason : NULL);
        sbuf_adds(&b, ",\"failure\":");
        json_string_or_null(&b,
                            d->state == PSUB_FAILED ? (d->failure ? d->failure : "(out of memory)") : NULL);
        sbuf_adds(&b, "}");
    }
    sbuf_adds(&b, "]}");
    run_manifest_scenario(&b);
    rc = b.failed ? -1 : run_manifest_write(o->json_path, &b, run->start_us, run->end_us);
    sbuf_free(&b);
    return rc;
}

/* What arrived per device, for the reconciliation. */
static int
reconcile(struct push_run *run)
{
    const struct stress_options *o = run->o;
    struct push_recon_row *rows = calloc(o->device_count, sizeof *rows);
    int rc;

    if (!rows) {
        return -1;
    }
    for (uint32_t i = 0; i < o->device_count; i++) {
        const struct push_dev *d = &run->devs[i];
        run_target(o, i, &rows[i].addr, &rows[i].port);
        rows[i].device = i;
        rows[i].subscribed = d->state != PSUB_SETUP && (d->state != PSUB_FAILED || d->sub_id);
        rows[i].id = d->sub_id;
        rows[i].updates = d->counts[PSCAN_PUSH_UPDATE];
        rows[i].change_updates = d->counts[PSCAN_PUSH_CHANGE_UPDATE];
        rows[i].events = d->counts[PSCAN_EVENT];
        rows[i].missed = d->slots.missed;
    }
    rc = push_recon_run(&run->recon, o->fleet_report, o->api_token_file, &o->ip_fam, rows, o->device_count,
                        stdout);
    run->reconciled = rc == 0;
    free(rows);
    return rc;
}

int
push_run(const struct stress_options *o)
{
    struct push_run run = {0};
    struct push_totals t;
    int fd_limit = run_raise_fd_limit();
    uint32_t sessions = o->device_count * (o->change_rate > 0 ? 2u : 1u);
    int64_t anchor_us = 0;
    int rc = 2;

    run.o = o;
    loop_timer_init(&run.tick);
    loop_timer_init(&run.duration_timer);
    loop_timer_init(&run.drain_timer);
    loop_timer_init(&run.edit_timer);
    if (sessions + 64 > (uint32_t)fd_limit) {
        fprintf(stderr, "fleetsim-stress: %u sessions need %u descriptors; the limit is %d (ulimit -Hn)\n",
                (unsigned)sessions, (unsigned)sessions + 64, fd_limit);
        return 2;
    }
    if (o->anchor_time && pscan_time_us(o->anchor_time, &anchor_us)) {
        fprintf(stderr, "fleetsim-stress: --anchor-time \"%s\" is not an RFC 3339 date-time\n",
                o->anchor_time);
        return 2;
    }
    run.loop = loop_new(fd_limit);
    run.devs = calloc(o->device_count, sizeof *run.devs);
    if (!run.loop || !run.devs || ly_ctx_new(NULL, LY_CTX_NO_YANGLIBRARY, &run.xml_ctx)) {
        fprintf(stderr, "fleetsim-stress: out of memory for %u sessions\n", (unsigned)o->device_count);
        goto cleanup;
    }
    if (run_preamble(o, &run.preamble, &run.preamble_len)) {
        goto cleanup;
    }
    if (build_rpc(&run)) {
        fprintf(stderr, "fleetsim-stress: cannot build the establish-subscription request\n");
        goto cleanup;
    }
    for (uint32_t i = 0; i < o->device_count; i++) {
        run.devs[i].run = &run;
        run.devs[i].device = i;
        run.devs[i].conn.fd = -1;
        run.devs[i].editor.fd = -1;
        pslots_init(&run.devs[i].slots, o->period_cs * 10000ull, o->anchor_time != NULL, anchor_us);
    }
    run_signals_catch(run.loop);
    run.progress = isatty(STDERR_FILENO);
    stats_cpu_split(&run.user_s, &run.system_s);
    run.start_us = run.progress_us = loop_clock_monotonic();
    if (!run.progress && run_progress_lines()) {
        run.line_us = run.start_us + RUN_PROGRESS_LINE_US;
    }
    loop_timer_start(run.loop, &run.tick, loop_now_us(run.loop) + PUSH_TICK_MS * 1000u, on_tick);
    start_more(&run);
    check_all_up(&run);
    if (!run.ended) {
        loop_run(run.loop);
    }
    if (!run.ended) {
        finish(&run, "interrupted", 0); /* only a signal stops the loop without an end */
    }
    if (run.progress) {
        fprintf(stderr, "\r%*s\r", 79, "");
    }
    if (latency_sort(&run.slot_offset) || latency_sort(&run.slot_late) || latency_sort(&run.event_late) ||
        latency_sort(&run.change_latency) || latency_sort(&run.sizes)) {
        fprintf(stderr, "fleetsim-stress: out of memory sorting the latencies\n");
    }
    totals(&run, &t);
    print_summary(&run, &t);
    rc = 0;
    if (o->fleet_report && !run_interrupted()) {
        int r = reconcile(&run);
        if (r) {
            fprintf(stderr, "fleetsim-stress: FAILED: %s\n",
                    r < 0 ? "cannot read --fleet-report" : "the fleet's report differs from what arrived");
            rc = 1;
        }
    }
    fflush(stdout);
    if (o->json_path && write_manifest(&run, &t)) {
        fprintf(stderr, "fleetsim-stress: FAILED: cannot write %s: %m\n", o->json_path);
        rc = 1;
    }
    if (run.failed) {
        fprintf(stderr, "fleetsim-stress: FAILED: %u of %u devices failed\n", (unsigned)run.failed,
                (unsigned)o->device_count);
        rc = 1;
    }
    if (t.missed || t.duplicates) {
        fprintf(stderr, "fleetsim-stress: FAILED: %" PRIu64 " periods missed, %" PRIu64 " duplicated\n",
                t.missed, t.duplicates);
        rc = 1;
    }
    if (t.edits_unmatched || t.edits_refused) {
        fprintf(stderr,
                "fleetsim-stress: FAILED: %" PRIu64 " edits without their push-change-update, %" PRIu64
                " refused\n",
                t.edits_unmatched, t.edits_refused);
        rc = 1;
    }
    if (run_interrupted()) {
        fprintf(stderr, "fleetsim-stress: interrupted by %s: %" PRIu64 " updates from %u of %u devices\n",
                run_interrupted_name(), run.updates_total, (unsigned)run.subscribed,
                (unsigned)o->device_count);
    } else if (!run.as_asked) {
        fprintf(stderr, "fleetsim-stress: FAILED: the run ended by %s, not as asked\n", run.ended);
        rc = 1;
    }

cleanup:
    rc = run_signals_release(rc);
    for (uint32_t i = 0; run.devs && i < o->device_count; i++) {
        conn_close(&run.devs[i].conn);
        conn_close(&run.devs[i].editor);
        free(run.devs[i].failure);
    }
    if (run.loop) {
        loop_timer_stop(run.loop, &run.tick);
        loop_timer_stop(run.loop, &run.duration_timer);
        loop_timer_stop(run.loop, &run.drain_timer);
        loop_timer_stop(run.loop, &run.edit_timer);
    }
    free(run.devs);
    free(run.preamble);
    sbuf_free(&run.rpc);
    latency_free(&run.slot_offset);
    latency_free(&run.slot_late);
    latency_free(&run.event_late);
    latency_free(&run.change_latency);
    latency_free(&run.sizes);
    loop_free(run.loop);
    ly_ctx_destroy(run.xml_ctx);
    return rc;
}
