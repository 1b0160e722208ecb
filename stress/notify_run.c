/*
 * "fleetsim-stress notify": a subscriber to a whole fleet. Every device
 * gets one session on the one event loop; up to --concurrency of them are
 * being set up (connect, hello, create-subscription) at once. Once a
 * subscription is accepted the session only reads: each message is
 * scanned (notif_scan.c), counted per device and in 1 s buckets, and with
 * --seq-element its sequence number goes through the order check
 * (seq_order.c). The run stops after --duration, when every device
 * delivered --count, when the subscriptions ended (--stop-time), or when
 * nothing arrived for --idle-timeout, or on SIGINT or SIGTERM; then the
 * summary and the manifest. Except on a signal, every live session is
 * first closed with close-session, and what arrives before its reply is
 * still counted (see drain_start()).
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conn.h"
#include "notif_scan.h"
#include "reply_scan.h"
#include "run.h"
#include "seq_order.h"
#include "stats.h"

#define NC_BASE_NS "urn:ietf:params:xml:ns:netconf:base:1.0"
#define NOTIF_CAP  "urn:ietf:params:netconf:capability:notification:1.0"
/* Idle, duration and progress are checked this often. */
#define NOTIFY_TICK_MS 200
/* The progress line is refreshed this often. */
#define NOTIFY_PROGRESS_MS 1000
/* Buckets kept: a year of seconds; later notifications count in the last one. */
#define NOTIFY_MAX_BUCKETS (366u * 86400u)
/* Buckets printed in the summary; the manifest has them all. */
#define NOTIFY_PRINT_BUCKETS 60
/* Failed devices listed one per line in the summary. */
#define NOTIFY_PRINT_FAILURES 20
/* Longest wait at the end for the close-session replies, ms; a server that does not answer is left. */
#define NOTIFY_DRAIN_MS 3000

/* Why a device failed: the connection's causes, then the subscription's own. */
enum notify_fail {
    NOTIFY_FAIL_NO_CAP = CONN_FAIL_COUNT, /* the hello lacks the notification capability */
    NOTIFY_FAIL_REFUSED,                  /* create-subscription answered with rpc-error */
    NOTIFY_FAIL_COUNT,
};

enum notify_state {
    NSUB_SETUP,      /* connecting, hello, or waiting for the subscription's reply */
    NSUB_SUBSCRIBED, /* the subscription is up; notifications are counted */
    NSUB_FAILED,     /* failed; failure says why */
};

struct notify_run;

struct notify_session {
    struct conn conn;            /* the connection */
    struct notify_run *run;      /* back pointer */
    uint32_t device;             /* device number */
    enum notify_state state;     /* lifecycle */
    struct net_family local_fam; /* our address's family of the session; valid once local_port is set */
    uint32_t local_addr;         /* its low 32 bits (all of IPv4), host order */
    uint16_t local_port;         /* our port of it; 0 until the hello is done */
    int completed;               /* 1 once notificationComplete arrived */
    uint64_t received;           /* data notifications */
    uint32_t replay_complete;    /* replayComplete notifications */
    uint32_t notif_complete;     /* notificationComplete notifications */
    uint64_t unnumbered;         /* data notifications without a sequence number (with --seq-element) */
    struct seqord order;         /* sequence numbers (with --seq-element) */
    char first_time[NSCAN_TIME_MAX_BYTES]; /* eventTime of the first data notification */
    char last_time[NSCAN_TIME_MAX_BYTES];  /* eventTime of the last one */
    char *failure;                         /* why it failed (malloc'd), NULL while it has not */
    int draining; /* 1 from the close-session sent at the run's end until its reply or the close */
};

struct notify_run {
    const struct stress_options *o;       /* parameters */
    struct loop *loop;                    /* the one loop */
    struct ly_ctx *xml_ctx;               /* hello parsing */
    char *preamble;                       /* --tcp-preamble content */
    size_t preamble_len;                  /* its length */
    struct sbuf rpc;                      /* the create-subscription rpc, unframed */
    struct notify_session *sessions;      /* one per device */
    uint32_t next;                        /* next device to start */
    int starting;                         /* 1 inside start_more(): a failure there must not recurse */
    uint32_t in_setup;                    /* sessions started, neither subscribed nor failed */
    uint32_t subscribed;                  /* subscriptions accepted (failed later or not) */
    uint32_t live;                        /* subscribed and not failed */
    uint32_t failed;                      /* failed devices */
    uint32_t reached_count;               /* live devices that delivered --count */
    uint32_t completed;                   /* live devices whose subscription ended (notificationComplete) */
    uint64_t failures[NOTIFY_FAIL_COUNT]; /* failed devices by cause */
    uint64_t total;                       /* data notifications, every device */
    uint64_t replay_complete;             /* replayComplete, every device */
    uint64_t notif_complete;              /* notificationComplete, every device */
    uint64_t *buckets;                    /* data notifications per second since first_us */
    size_t bucket_count;                  /* buckets used */
    size_t bucket_cap;                    /* buckets allocated */
    monotime_us start_us;                 /* first connect */
    monotime_us all_up_us;                /* every device subscribed or failed; 0 before */
    monotime_us first_us;                 /* first data notification; 0 before */
    monotime_us last_us;                  /* last data notification */
    monotime_us end_us;                   /* the run stopped */
    monotime_us progress_us;              /* progress line last printed (terminal) */
    monotime_us line_us;                  /* next progress line due (no terminal), 0 for none */
    uint64_t progress_total;              /* total then */
    const char *ended;                    /* why the run stopped: count, duration, ... */
    int as_asked;                         /* 1 when that is the end the options asked for */
    int progress;                         /* 1 when stderr is a terminal */
    struct loop_timer tick;               /* idle, progress */
    struct loop_timer duration_timer;     /* --duration */
    struct loop_timer drain_timer;        /* bound of the wait for close-session replies at the end */
    uint32_t draining;                    /* sessions still waiting for their close-session reply */
    double cpu_start_s;                   /* client CPU at the start */
    double user_s;                        /* client user CPU over the run */
    double system_s;                      /* client system CPU over the run */
};

static const struct conn_callbacks callbacks;

static const char *
fail_name(int why)
{
    if (why == NOTIFY_FAIL_NO_CAP) {
        return "no-notification-capability";
    }
    if (why == NOTIFY_FAIL_REFUSED) {
        return "subscription-refused";
    }
    return conn_failure_name((enum conn_failure)why);
}

static void drain_start(struct notify_run *run);

static void
finish(struct notify_run *run, const char *why, int as_asked)
{
    double start_user;
    double start_system;

    if (run->ended) {
        return;
    }
    run->ended = why;
    run->as_asked = as_asked;
    run->end_us = loop_clock_monotonic();
    start_user = run->user_s;
    start_system = run->system_s;
    stats_cpu_split(&run->user_s, &run->system_s);
    run->user_s -= start_user;
    run->system_s -= start_system;
    drain_start(run);
}

static void
drain_stop(struct notify_run *run)
{
    loop_timer_stop(run->loop, &run->drain_timer);
    loop_stop(run->loop);
}

static void
on_drain_timeout(struct loop *loop, struct loop_timer *timer)
{
    (void)timer;
    loop_stop(loop);
}

/* One session's close-session was answered (or the server closed it): what it sent is all counted. */
static void
drain_done(struct notify_session *s)
{
    struct notify_run *run = s->run;

    s->draining = 0;
    conn_close(&s->conn);
    if (!--run->draining) {
        drain_stop(run);
    }
}

/*
 * The end of a run that is not a signal's: close-session on every live subscription, counting what comes
 * before its reply. The server wrote those notifications before it read the close, so its --report counts
 * them as sent; stopping to read at once would show them as lost in reconcile (LOSS) although they arrived.
 */
static void
drain_start(struct notify_run *run)
{
    static const char close_rpc[] =
        "<rpc message-id=\"fleetsim-stress-close\" xmlns=\"" NC_BASE_NS "\"><close-session/></rpc>";

    for (uint32_t i = 0; !run_interrupted() && i < run->o->device_count; i++) {
        struct notify_session *s = &run->sessions[i];
        struct sbuf b = {0};
        if (s->state != NSUB_SUBSCRIBED || s->completed || s->conn.state != CONN_READY) {
            continue;
        }
        conn_frame(&s->conn, &b, close_rpc, sizeof close_rpc - 1);
        s->draining = !b.failed;
        run->draining += (uint32_t)s->draining;
        if (s->draining && conn_send(&s->conn, b.buf, b.len)) {
            s->draining = 0; /* the failure was reported; nothing more will come */
            run->draining--;
        }
        sbuf_free(&b);
    }
    if (!run->draining) {
        loop_stop(run->loop);
        return;
    }
    loop_timer_start(run->loop, &run->drain_timer, loop_clock_monotonic() + NOTIFY_DRAIN_MS * 1000u,
                     on_drain_timeout);
}

/* Stop when the asked-for end is reached: every live device delivered --count, or every subscription ended.
 */
static void
check_end(struct notify_run *run)
{
    const struct stress_options *o = run->o;

    if (!run->all_up_us || run->ended) {
        return;
    }
    if (!run->live) {
        /* Nothing left to listen to. Subscriptions that ended by themselves end the run as asked. */
        finish(run, run->subscribed && !run->failed ? "subscriptions-complete" : "no-subscription-left",
               run->subscribed && !run->failed);
        return;
    }
    if (o->count && run->reached_count >= run->live) {
        finish(run, "count", 1);
    } else if (run->completed >= run->live) {
        finish(run, "subscriptions-complete", 1);
    }
}

static void
on_duration(struct loop *loop, struct loop_timer *timer)
{
    struct notify_run *run =
        (struct notify_run *)((char *)timer - offsetof(struct notify_run, duration_timer));

    (void)loop;
    finish(run, "duration", 1);
}

static void
check_all_up(struct notify_run *run)
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

static void start_more(struct notify_run *run);

/* Record a device's failure, once. */
static void
device_failed(struct notify_session *s, int why, const char *detail)
{
    struct notify_run *run = s->run;
    size_t len = strlen(fail_name(why)) + strlen(detail) + 4;

    if (s->state == NSUB_FAILED) {
        return;
    }
    if (s->state == NSUB_SETUP) {
        run->in_setup--;
    } else {
        run->live--;
        if (run->o->count && s->received >= run->o->count) {
            run->reached_count--;
        }
        if (s->completed) {
            run->completed--;
        }
    }
    s->state = NSUB_FAILED;
    run->failed++;
    run->failures[why]++;
    s->failure = malloc(len);
    if (s->failure) {
        snprintf(s->failure, len, "%s: %s", fail_name(why), detail);
    }
    start_more(run);
    check_all_up(run);
    check_end(run);
}

static void
on_ready(struct conn *c)
{
    struct notify_session *s = c->user;
    struct notify_run *run = s->run;
    struct sockaddr_storage local;
    socklen_t local_len = sizeof local;
    struct sbuf b = {0};

    if (getsockname(c->fd, (struct sockaddr *)&local, &local_len) ||
        netaddr_split((struct sockaddr *)&local, &s->local_fam, &s->local_addr, &s->local_port)) {
        s->local_port = 0;
    }
    if (!hello_has_cap(&c->server_hello, NOTIF_CAP)) {
        conn_close(c);
        device_failed(s, NOTIFY_FAIL_NO_CAP, "the server's hello does not advertise " NOTIF_CAP);
        return;
    }
    /* The capabilities are not needed any more; 10k hellos of a few dozen URIs each add up. */
    hello_info_free(&c->server_hello);
    conn_frame(c, &b, run->rpc.buf, run->rpc.len);
    if (b.failed) {
        sbuf_free(&b);
        conn_close(c);
        device_failed(s, CONN_FAIL_RESOURCES, "out of memory framing create-subscription");
        return;
    }
    conn_expect(c);
    conn_send(c, b.buf, b.len);
    sbuf_free(&b);
}

static void
count_bucket(struct notify_run *run, monotime_us now)
{
    size_t i;

    if (!run->first_us) {
        run->first_us = now;
    }
    run->last_us = now;
    i = (size_t)((now - run->first_us) / 1000000u);
    if (i >= NOTIFY_MAX_BUCKETS) {
        i = NOTIFY_MAX_BUCKETS - 1;
    }
    if (i >= run->bucket_cap) {
        size_t cap = run->bucket_cap ? run->bucket_cap * 2 : 64;
        uint64_t *grown;
        while (cap <= i) {
            cap *= 2;
        }
        grown = realloc(run->buckets, cap * sizeof *grown);
        if (!grown) {
            return; /* the total still counts; the rate list is short of this one */
        }
        memset(grown + run->bucket_cap, 0, (cap - run->bucket_cap) * sizeof *grown);
        run->buckets = grown;
        run->bucket_cap = cap;
    }
    run->buckets[i]++;
    if (i + 1 > run->bucket_count) {
        run->bucket_count = i + 1;
    }
}

static void
on_notification(struct notify_session *s, const struct nscan_info *n)
{
    struct notify_run *run = s->run;
    const struct stress_options *o = run->o;

    switch (n->kind) {
    case NSCAN_REPLAY_COMPLETE:
        s->replay_complete++;
        run->replay_complete++;
        return;
    case NSCAN_NOTIFICATION_COMPLETE:
        s->notif_complete++;
        run->notif_complete++;
        if (!s->completed && s->state == NSUB_SUBSCRIBED) {
            s->completed = 1;
            run->completed++;
            check_end(run);
        }
        return;
    case NSCAN_DATA:
        break;
    case NSCAN_OTHER:
        return;
    }
    count_bucket(run, loop_clock_monotonic());
    s->received++;
    run->total++;
    if (!s->first_time[0]) {
        memcpy(s->first_time, n->event_time, sizeof s->first_time);
    }
    memcpy(s->last_time, n->event_time, sizeof s->last_time);
    if (o->seq_element) {
        if (n->has_seq) {
            seqord_add(&s->order, n->seq);
        } else {
            s->unnumbered++;
        }
    }
    if (o->count && s->received == o->count && s->state == NSUB_SUBSCRIBED) {
        run->reached_count++;
        check_end(run);
    }
}

static void
on_message(struct conn *c, const char *msg, size_t len)
{
    struct notify_session *s = c->user;
    struct notify_run *run = s->run;
    struct nscan_info n;
    struct reply_info r;

    if (run->ended && !s->draining) {
        return;
    }
    if (nscan_scan(msg, len, run->o->seq_element, &n) != NSCAN_OTHER) {
        on_notification(s, &n);
        return;
    }
    if (s->draining) {
        if (reply_scan(msg, len, &r) == REPLY_RPC_REPLY) {
            drain_done(s);
        }
        return;
    }
    if (s->state != NSUB_SETUP || reply_scan(msg, len, &r) != REPLY_RPC_REPLY) {
        return; /* not ours to judge: an unexpected message is ignored */
    }
    if (r.error_count || !r.ok) {
        conn_close(c);
        device_failed(s, NOTIFY_FAIL_REFUSED,
                      r.error_count ? (r.error_tag[0] ? r.error_tag : "(no error-tag)")
                                    : "reply without <ok/>");
        return;
    }
    conn_idle(c);
    s->state = NSUB_SUBSCRIBED;
    run->in_setup--;
    run->subscribed++;
    run->live++;
    if (run->o->count && s->received >= run->o->count) {
        run->reached_count++;
    }
    start_more(run);
    check_all_up(run);
    check_end(run);
}

static void
on_failed(struct conn *c, enum conn_failure why, const char *detail)
{
    struct notify_session *s = c->user;

    if (s->draining) {
        drain_done(s); /* closed at our close-session, with or without its reply: all it sent is read */
        return;
    }
    /* A server may close once it said notificationComplete: the subscription is over, nothing is lost. */
    if (s->completed && why == CONN_FAIL_CLOSED) {
        return;
    }
    device_failed(s, why, detail);
}

static const struct conn_callbacks callbacks = {on_ready, on_message, on_failed, NULL};

static void
start_more(struct notify_run *run)
{
    const struct stress_options *o = run->o;

    if (run->starting) {
        return;
    }
    run->starting = 1;
    while (!run->ended && run->in_setup < o->concurrency && run->next < o->device_count) {
        struct notify_session *s = &run->sessions[run->next++];
        uint32_t addr;
        uint16_t port;
        run_conn_prepare(o, &s->conn, s->device, run->preamble, run->preamble_len, &addr, &port);
        run->in_setup++;
        if (conn_start(&s->conn, run->loop, run->xml_ctx, &o->ip_fam, addr, port, &callbacks, s)) {
            device_failed(s, CONN_FAIL_RESOURCES, "cannot create a socket");
        }
    }
    run->starting = 0;
}

static void
on_tick(struct loop *loop, struct loop_timer *timer)
{
    struct notify_run *run = (struct notify_run *)((char *)timer - offsetof(struct notify_run, tick));
    const struct stress_options *o = run->o;
    monotime_us now = loop_clock_monotonic();

    if (run->all_up_us && o->idle_timeout_s) {
        monotime_us since = run->last_us > run->all_up_us ? run->last_us : run->all_up_us;
        if (now - since >= o->idle_timeout_s * 1000000ull) {
            /* Idle is the asked-for end only when nothing else was asked for. */
            finish(run, "idle", !o->count && !o->duration_s && !o->stop_time);
            return;
        }
    }
    if (run->progress && now - run->progress_us >= NOTIFY_PROGRESS_MS * 1000u) {
        double dt = (double)(now - run->progress_us) / 1e6;
        fprintf(stderr, "\rsubscribed %u/%u failed %u  received %" PRIu64 "  %.0f/s   ", (unsigned)run->live,
                (unsigned)o->device_count, (unsigned)run->failed, run->total,
                dt > 0 ? (double)(run->total - run->progress_total) / dt : 0.0);
        run->progress_us = now;
        run->progress_total = run->total;
    } else if (run->line_us && now >= run->line_us) {
        double dt = (double)(now - run->progress_us) / 1e6;
        run_progress_line(run->start_us,
                          "%u of %u subscribed, %u failed, %" PRIu64 " notifications received (%.1f/s)",
                          (unsigned)run->live, (unsigned)o->device_count, (unsigned)run->failed, run->total,
                          dt > 0 ? (double)(run->total - run->progress_total) / dt : 0.0);
        run->progress_us = now;
        run->progress_total = run->total;
        run->line_us += RUN_PROGRESS_LINE_US;
    }
    loop_timer_start(loop, timer, loop_now_us(loop) + NOTIFY_TICK_MS * 1000u, on_tick);
}

/* The create-subscription rpc every session sends (RFC 5277 section 2.1.1). */
static int
build_rpc(struct notify_run *run)
{
    const struct stress_options *o = run->o;
    char *subtree = NULL;

    if (o->filter_subtree && !(subtree = run_read_file(o->filter_subtree, NULL))) {
        return -1;
    }
    sbuf_adds(&run->rpc, "<rpc message-id=\"1\" xmlns=\"" NC_BASE_NS
                         "\"><create-subscription xmlns=\"" NSCAN_NOTIF_NS "\"><stream>");
    sbuf_add_xml(&run->rpc, o->stream);
    sbuf_adds(&run->rpc, "</stream>");
    if (o->filter_xpath) {
        sbuf_adds(&run->rpc, "<filter type=\"xpath\" select=\"");
        sbuf_add_xml(&run->rpc, o->filter_xpath);
        sbuf_adds(&run->rpc, "\"/>");
    }
    if (subtree) {
        sbuf_adds(&run->rpc, "<filter type=\"subtree\">");
        sbuf_adds(&run->rpc, subtree);
        sbuf_adds(&run->rpc, "</filter>");
    }
    if (o->start_time) {
        sbuf_adds(&run->rpc, "<startTime>");
        sbuf_add_xml(&run->rpc, o->start_time);
        sbuf_adds(&run->rpc, "</startTime>");
    }
    if (o->stop_time) {
        sbuf_adds(&run->rpc, "<stopTime>");
        sbuf_add_xml(&run->rpc, o->stop_time);
        sbuf_adds(&run->rpc, "</stopTime>");
    }
    sbuf_adds(&run->rpc, "</create-subscription></rpc>");
    free(subtree);
    return run->rpc.failed ? -1 : 0;
}

static int
cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a;
    uint64_t y = *(const uint64_t *)b;

    return (x > y) - (x < y);
}

struct notify_totals {
    uint64_t min, median, max;                            /* received per device */
    uint64_t gaps, missing, duplicates, reordered, unnum; /* order problems, every device */
    double span_s;                                        /* first to last data notification */
    double rate;                                          /* total / span_s */
};

static void
totals(const struct notify_run *run, struct notify_totals *t)
{
    uint32_t n = run->o->device_count;
    uint64_t *per = malloc(n * sizeof *per);

    memset(t, 0, sizeof *t);
    for (uint32_t i = 0; i < n; i++) {
        const struct notify_session *s = &run->sessions[i];
        if (per) {
            per[i] = s->received;
        }
        t->gaps += s->order.gaps;
        t->missing += s->order.missing;
        t->duplicates += s->order.duplicates;
        t->reordered += s->order.reordered;
        t->unnum += s->unnumbered;
    }
    if (per) {
        qsort(per, n, sizeof *per, cmp_u64);
        t->min = per[0];
        t->median = per[(n - 1) / 2];
        t->max = per[n - 1];
        free(per);
    }
    t->span_s = run->total ? (double)(run->last_us - run->first_us) / 1e6 : 0.0;
    t->rate = t->span_s > 0 ? (double)run->total / t->span_s : 0.0;
}

static void
print_summary(const struct notify_run *run, const struct notify_totals *t)
{
    const struct stress_options *o = run->o;
    int any = 0;
    int listed = 0;

    printf("fleetsim-stress notify: %u devices, stream %s, concurrency %u%s%s\n", (unsigned)o->device_count,
           o->stream, (unsigned)o->concurrency, o->filter_xpath || o->filter_subtree ? ", filtered" : "",
           o->start_time ? ", replay" : "");
    printf("subscribed: %u of %u in %.3f s\n", (unsigned)run->subscribed, (unsigned)o->device_count,
           run->all_up_us ? (double)(run->all_up_us - run->start_us) / 1e6
                          : (double)(run->end_us - run->start_us) / 1e6);
    if (run_interrupted()) {
        printf("ended: interrupted by %s after %.3f s\n", run_interrupted_name(),
               (double)(run->end_us - run->start_us) / 1e6);
    } else {
        printf("ended: %s%s after %.3f s\n", run->ended, run->as_asked ? "" : " (not as asked)",
               (double)(run->end_us - run->start_us) / 1e6);
    }
    printf("Notifications per second: %.1f\n", t->rate);
    printf("received: %" PRIu64 " in %.3f s (first to last); per device min %" PRIu64 " median %" PRIu64
           " max %" PRIu64 "\n",
           run->total, t->span_s, t->min, t->median, t->max);
    printf("replayComplete: %" PRIu64 ", notificationComplete: %" PRIu64 "\n", run->replay_complete,
           run->notif_complete);
    if (o->seq_element) {
        printf("order (%s): gaps %" PRIu64 " (missing %" PRIu64 "), duplicates %" PRIu64
               ", reordered %" PRIu64 ", without a number %" PRIu64 "\n",
               o->seq_element, t->gaps, t->missing, t->duplicates, t->reordered, t->unnum);
    } else {
        printf("order: not checked (no --seq-element)\n");
    }
    printf("rate per second:");
    for (size_t i = 0; i < run->bucket_count && i < NOTIFY_PRINT_BUCKETS; i++) {
        printf(" %" PRIu64, run->buckets[i]);
    }
    if (run->bucket_count > NOTIFY_PRINT_BUCKETS) {
        printf(" ... (%zu seconds in all, every one in --json)", run->bucket_count);
    }
    printf("%s\n", run->bucket_count ? "" : " none");
    printf("failures:");
    for (int i = 1; i < NOTIFY_FAIL_COUNT; i++) {
        if (run->failures[i]) {
            printf(" %s %" PRIu64, fail_name(i), run->failures[i]);
            any = 1;
        }
    }
    printf("%s\n", any ? "" : " none");
    for (uint32_t i = 0; i < o->device_count && listed < NOTIFY_PRINT_FAILURES; i++) {
        const struct notify_session *s = &run->sessions[i];
        char where[NETADDR_TEXT_BYTES];
        if (s->state != NSUB_FAILED) {
            continue;
        }
        printf("  device %u %s: %s\n", (unsigned)i, run_target_text(o, i, where, sizeof where),
               s->failure ? s->failure : "(out of memory)");
        listed++;
    }
    if (run->failed > (uint32_t)listed) {
        printf("  ... %u more in --json\n", (unsigned)(run->failed - (uint32_t)listed));
    }
    printf("client CPU: %.3f s (user %.3f, system %.3f)\n", run->user_s + run->system_s, run->user_s,
           run->system_s);
}

static void
json_opt_string(struct sbuf *b, const char *name, const char *value)
{
    sbuf_printf(b, ",\"%s\":", name);
    json_string_or_null(b, value);
}

static int
write_manifest(const struct notify_run *run, const struct notify_totals *t)
{
    char ip_text[NETADDR_TEXT_BYTES];
    const struct stress_options *o = run->o;
    struct sbuf b = {0};
    int rc;

    sbuf_adds(&b, "{\"tool\":\"fleetsim-stress\",\"version\":");
    sbuf_add_json(&b, FLEETSIM_VERSION);
    sbuf_printf(&b,
                ",\"mode\":\"notify\",\"parameters\":{\"ip\":\"%s\",\"port\":%u,\"device_count\":%u,"
                "\"ip_per_device\":%s,\"concurrency\":%u,\"stream\":",
                netaddr_text(&o->ip_fam, o->ip, ip_text, sizeof ip_text), (unsigned)o->port,
                (unsigned)o->device_count, o->ip_per_device ? "true" : "false", (unsigned)o->concurrency);
    sbuf_add_json(&b, o->stream);
    json_opt_string(&b, "filter_xpath", o->filter_xpath);
    json_opt_string(&b, "filter_subtree", o->filter_subtree);
    json_opt_string(&b, "start_time", o->start_time);
    json_opt_string(&b, "stop_time", o->stop_time);
    sbuf_printf(&b, ",\"duration_s\":%u,\"count\":%" PRIu64 ",\"idle_timeout_s\":%u", (unsigned)o->duration_s,
                o->count, (unsigned)o->idle_timeout_s);
    json_opt_string(&b, "seq_element", o->seq_element);
    sbuf_printf(&b, ",\"msg_timeout_s\":%u,\"legacy_framing\":%s,%s", (unsigned)o->msg_timeout_s,
                o->legacy_framing ? "true" : "false", conn_transport_json());
    json_opt_string(&b, "tcp_preamble", o->preamble_path);
    sbuf_adds(&b, "},\"results\":{\"interrupted\":");
    json_string_or_null(&b, run_interrupted_name());
    sbuf_printf(
        &b,
        ",\"subscribed\":%u,\"failed\":%u,\"ended\":\"%s\",\"ended_as_"
        "asked\":%s,"
        "\"run_s\":%.6f,\"setup_s\":%.6f,\"total_received\":%" PRIu64 ",\"first_to_last_s\":%.6f,"
        "\"notifications_per_second\":%.3f,\"replay_complete\":%" PRIu64 ",\"notification_complete\":%" PRIu64
        ",\"received_per_device\":{\"min\":%" PRIu64 ",\"median\":%" PRIu64 ",\"max\":%" PRIu64 "},"
        "\"order\":{\"checked\":%s,\"gaps\":%" PRIu64 ",\"missing\":%" PRIu64 ",\"duplicates\":%" PRIu64
        ",\"reordered\":%" PRIu64 ",\"unnumbered\":%" PRIu64 "},\"failures\":{",
        (unsigned)run->subscribed, (unsigned)run->failed, run->ended, run->as_asked ? "true" : "false",
        (double)(run->end_us - run->start_us) / 1e6,
        run->all_up_us ? (double)(run->all_up_us - run->start_us) / 1e6 : 0.0, run->total, t->span_s, t->rate,
        run->replay_complete, run->notif_complete, t->min, t->median, t->max,
        o->seq_element ? "true" : "false", t->gaps, t->missing, t->duplicates, t->reordered, t->unnum);
    for (int i = 1; i < NOTIFY_FAIL_COUNT; i++) {
        sbuf_printf(&b, "%s\"%s\":%" PRIu64, i > 1 ? "," : "", fail_name(i), run->failures[i]);
    }
    sbuf_printf(&b, "},\"client_cpu_s\":%.6f,\"client_user_s\":%.6f,\"client_system_s\":%.6f},\"buckets\":[",
                run->user_s + run->system_s, run->user_s, run->system_s);
    for (size_t i = 0; i < run->bucket_count; i++) {
        sbuf_printf(&b, "%s%" PRIu64, i ? "," : "", run->buckets[i]);
    }
    sbuf_adds(&b, "],\"devices\":[");
    for (uint32_t i = 0; i < o->device_count && !b.failed; i++) {
        const struct notify_session *s = &run->sessions[i];
        char text[NETADDR_TEXT_BYTES];
        uint32_t addr;
        uint16_t port;
        run_target(o, i, &addr, &port);
        sbuf_printf(&b, "%s{\"device\":%u,\"address\":\"%s\",\"port\":%u,\"local\":", i ? "," : "",
                    (unsigned)i, netaddr_text(&o->ip_fam, addr, text, sizeof text), (unsigned)port);
        if (s->local_port) {
            sbuf_printf(&b, "\"%s:%u\"", netaddr_host(&s->local_fam, s->local_addr, text, sizeof text),
                        (unsigned)s->local_port);
        } else {
            sbuf_adds(&b, "null");
        }
        sbuf_printf(&b, ",\"received\":%" PRIu64 ",\"replay_complete\":%u,\"notification_complete\":%u",
                    s->received, (unsigned)s->replay_complete, (unsigned)s->notif_complete);
        if (s->order.started) {
            sbuf_printf(&b, ",\"first_seq\":%" PRIu64 ",\"last_seq\":%" PRIu64, s->order.first,
                        s->order.last);
        } else {
            sbuf_adds(&b, ",\"first_seq\":null,\"last_seq\":null");
        }
        sbuf_printf(&b,
                    ",\"gaps\":%" PRIu64 ",\"missing\":%" PRIu64 ",\"duplicates\":%" PRIu64
                    ",\"reordered\":%" PRIu64 ",\"unnumbered\":%" PRIu64,
                    s->order.gaps, s->order.missing, s->order.duplicates, s->order.reordered, s->unnumbered);
        json_opt_string(&b, "first_event_time", s->first_time);
        json_opt_string(&b, "last_event_time", s->last_time);
        sbuf_adds(&b, ",\"failure\":");
        json_string_or_null(&b,
                            s->state == NSUB_FAILED ? (s->failure ? s->failure : "(out of memory)") : NULL);
        sbuf_adds(&b, "}");
    }
    sbuf_adds(&b, "]}");
    run_manifest_scenario(&b);
    rc = b.failed ? -1 : run_manifest_write(o->json_path, &b, run->start_us, run->end_us);
    sbuf_free(&b);
    return rc;
}

int
notify_run(const struct stress_options *o)
{
    struct notify_run run = {0};
    struct notify_totals t;
    int fd_limit = run_raise_fd_limit();
    int rc = 2;

    run.o = o;
    loop_timer_init(&run.tick);
    loop_timer_init(&run.duration_timer);
    loop_timer_init(&run.drain_timer);
    /* Sessions stay open for the whole run: one descriptor each, plus the loop's and stdio's. */
    if (o->device_count + 64 > (uint32_t)fd_limit) {
        fprintf(stderr,
                "fleetsim-stress: %u subscriptions need %u descriptors; the limit is %d (ulimit -Hn)\n",
                (unsigned)o->device_count, (unsigned)o->device_count + 64, fd_limit);
        return 2;
    }
    run.loop = loop_new(fd_limit);
    run.sessions = calloc(o->device_count, sizeof *run.sessions);
    if (!run.loop || !run.sessions || ly_ctx_new(NULL, LY_CTX_NO_YANGLIBRARY, &run.xml_ctx)) {
        fprintf(stderr, "fleetsim-stress: out of memory for %u sessions\n", (unsigned)o->device_count);
        goto cleanup;
    }
    if (run_preamble(o, &run.preamble, &run.preamble_len)) {
        goto cleanup;
    }
    if (build_rpc(&run)) {
        fprintf(stderr, "fleetsim-stress: cannot build the create-subscription request\n");
        goto cleanup;
    }
    for (uint32_t i = 0; i < o->device_count; i++) {
        run.sessions[i].run = &run;
        run.sessions[i].device = i;
        run.sessions[i].conn.fd = -1;
    }
    run_signals_catch(run.loop);
    run.progress = isatty(STDERR_FILENO);
    stats_cpu_split(&run.user_s, &run.system_s);
    run.start_us = run.progress_us = loop_clock_monotonic();
    if (!run.progress && run_progress_lines()) {
        run.line_us = run.start_us + RUN_PROGRESS_LINE_US;
    }
    loop_timer_start(run.loop, &run.tick, loop_now_us(run.loop) + NOTIFY_TICK_MS * 1000u, on_tick);
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
    totals(&run, &t);
    print_summary(&run, &t);
    fflush(stdout);
    rc = 0;
    if (o->json_path && write_manifest(&run, &t)) {
        fprintf(stderr, "fleetsim-stress: FAILED: cannot write %s: %m\n", o->json_path);
        rc = 1;
    }
    if (run.failed) {
        fprintf(stderr, "fleetsim-stress: FAILED: %u of %u devices failed\n", (unsigned)run.failed,
                (unsigned)o->device_count);
        rc = 1;
    }
    if (t.gaps || t.duplicates || t.reordered) {
        fprintf(stderr,
                "fleetsim-stress: FAILED: order problems: %" PRIu64 " gaps, %" PRIu64 " duplicates, %" PRIu64
                " reordered\n",
                t.gaps, t.duplicates, t.reordered);
        rc = 1;
    }
    if (run_interrupted()) {
        fprintf(stderr,
                "fleetsim-stress: interrupted by %s: %" PRIu64 " notifications from %u of %u devices\n",
                run_interrupted_name(), run.total, (unsigned)run.subscribed, (unsigned)o->device_count);
    } else if (!run.as_asked) {
        fprintf(stderr, "fleetsim-stress: FAILED: the run ended by %s, not as asked\n", run.ended);
        rc = 1;
    }

cleanup:
    rc = run_signals_release(rc);
    for (uint32_t i = 0; run.sessions && i < o->device_count; i++) {
        conn_close(&run.sessions[i].conn);
        free(run.sessions[i].failure);
    }
    if (run.loop) {
        loop_timer_stop(run.loop, &run.tick);
        loop_timer_stop(run.loop, &run.duration_timer);
        loop_timer_stop(run.loop, &run.drain_timer);
    }
    free(run.sessions);
    free(run.preamble);
    free(run.buckets);
    sbuf_free(&run.rpc);
    loop_free(run.loop);
    ly_ctx_destroy(run.xml_ctx);
    return rc;
}
