/*
 * "fleetsim-stress mount": what a controller does when it mounts a fleet.
 * Up to --concurrency sessions are being set up at once; a session counts
 * as mounted when its hello is done and its on-mount work (every schema
 * fetched, or the configuration read) is answered. Mounted sessions stay
 * open until every device is done, then for --hold seconds more.
 * SIGINT or SIGTERM ends the run there with the report so far.
 *
 * With --reconnect it behaves as a controller's connector: a session that
 * fails, or is lost after mounting, is connected again after a backoff
 * (OpenDaylight's defaults: 2 s, growing 1.5 times, here bounded at 60 s,
 * with jitter so that a fleet's reconnects spread), forever; the run holds
 * for --hold seconds after every device mounted once (0: until a signal)
 * and reports the losses and the time from each loss to mounted again.
 *
 * With --events too the fleet's event log is watched (mount_events.c: a
 * fetch thread of its own, so that the sessions never wait on it) and
 * every --events-interval the sessions' state is a poll of the events'
 * recovery; the summary and the manifest list each event as
 * controller-mount does, and an event whose devices did not all come back
 * by the end fails the run.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "conn.h"
#include "mount_events.h"
#include "reply_scan.h"
#include "run.h"
#include "stats.h"

#define NC_BASE_NS "urn:ietf:params:xml:ns:netconf:base:1.0"

/* --reconnect's backoff, as OpenDaylight's connector (between-attempts-timeout-millis 2000, sleep-factor
 * 1.5), bounded; each wait is drawn in [w/2, w] so that devices lost together do not return together. */
#define RECONNECT_FIRST_MS 2000u
#define RECONNECT_MAX_MS   60000u
#define NCM_NS             "urn:ietf:params:xml:ns:yang:ietf-netconf-monitoring"

struct mount_run;

struct mount_session {
    struct conn conn;              /* the connection */
    struct mount_run *run;         /* back pointer */
    uint32_t device;               /* device number */
    uint32_t requests;             /* on-mount requests sent */
    uint32_t answered;             /* on-mount replies received */
    uint32_t rpc_errors;           /* on-mount replies with rpc-error */
    int mounted;                   /* 1 once mounted */
    int failed;                    /* 1 once failed */
    int ever_mounted;              /* --reconnect: 1 once mounted the first time */
    uint32_t backoff_ms;           /* --reconnect: the next wait's bound */
    monotime_us lost_us;           /* --reconnect: when the mounted session was lost, 0 while mounted */
    struct loop_timer retry_timer; /* --reconnect: the wait before connecting again */
};

struct mount_run {
    const struct stress_options *o;     /* parameters */
    struct loop *loop;                  /* the one loop */
    struct ly_ctx *xml_ctx;             /* hello parsing */
    char *preamble;                     /* --tcp-preamble content */
    size_t preamble_len;                /* its length */
    struct mount_session *sessions;     /* one per device */
    uint32_t next;                      /* next device to start */
    uint32_t in_setup;                  /* sessions started, not yet mounted or failed */
    uint32_t mounted;                   /* mounted sessions */
    uint32_t failed;                    /* failed sessions */
    uint64_t failures[CONN_FAIL_COUNT]; /* failed sessions by cause */
    uint64_t rpc_errors;                /* on-mount replies with rpc-error */
    uint64_t schemas;                   /* get-schema replies received */
    struct latency to_hello;            /* connect to hello done, per session, us */
    struct latency to_mount;            /* connect to mounted, per session, us */
    struct latency to_reconnect;        /* --reconnect: loss to mounted again, per loss, us */
    struct persec mounted_per_s;        /* sessions that became mounted, by second of the run */
    struct persec lost_per_s;           /* --reconnect: mounted sessions lost, by second */
    struct persec failed_per_s;         /* attempts that failed (any cause), by second */
    uint32_t first_mounted;             /* --reconnect: devices mounted at least once */
    uint64_t losses;                    /* --reconnect: mounted sessions lost */
    uint64_t reconnects;                /* --reconnect: of them mounted again */
    uint64_t retries;                   /* --reconnect: connection attempts after a failure or loss */
    monotime_us start_us;               /* first connect */
    monotime_us all_done_us;            /* last session mounted or failed */
    double cpu_start_s;                 /* client CPU at the start */
    double cpu_end_s;                   /* client CPU when all were done */
    struct loop_timer hold_timer;       /* --hold */
    struct loop_timer line_timer;       /* progress lines when stderr is not a terminal */
    struct mev *events;                 /* --events: the fleet's events and their recovery, else NULL */
    struct loop_timer events_timer;     /* --events: a poll of the sessions every --events-interval */
    int events_oom;                     /* --events: 1 when a poll ran out of memory (the run stops) */
    char first_failure[256];            /* for the report */
};

static const struct conn_callbacks callbacks;

static void
on_hold_over(struct loop *loop, struct loop_timer *timer)
{
    (void)timer;
    loop_stop(loop);
}

/* Every device mounted or failed: the measurement ends here, once; then hold, or stop. */
static void
all_done_check(struct mount_run *run)
{
    if (run->all_done_us ||
        (run->o->reconnect ? run->first_mounted : run->mounted + run->failed) < run->o->device_count) {
        return;
    }
    run->all_done_us = loop_clock_monotonic();
    run->cpu_end_s = stats_cpu_seconds();
    if (run->o->reconnect && !run->o->hold_s) {
        return; /* a controller stays: until SIGINT or SIGTERM */
    }
    if (!run->o->hold_s) {
        loop_stop(run->loop);
        return;
    }
    loop_timer_start(run->loop, &run->hold_timer, loop_clock_monotonic() + run->o->hold_s * 1000000ull,
                     on_hold_over);
}

static void start_more(struct mount_run *run);
static void retry_later(struct mount_session *s);

/* Count one in @p p for the second of the run now is in (the report's curves; out of memory: not counted). */
static void
tally_now(const struct mount_run *run, struct persec *p)
{
    persec_add(p, (size_t)((loop_clock_monotonic() - run->start_us) / 1000000u), 1);
}

static void
session_mounted(struct mount_session *s)
{
    struct mount_run *run = s->run;
    monotime_us now = loop_clock_monotonic();

    s->mounted = 1;
    run->mounted++;
    tally_now(run, &run->mounted_per_s);
    run->in_setup--;
    s->backoff_ms = 0;
    if (!s->ever_mounted) {
        s->ever_mounted = 1;
        run->first_mounted++;
        latency_add(&run->to_mount, (uint32_t)(now - s->conn.started_us));
    }
    if (s->lost_us) {
        run->reconnects++;
        latency_add(&run->to_reconnect, (uint32_t)(now - s->lost_us));
        s->lost_us = 0;
    }
    conn_idle(&s->conn);
    start_more(run);
    all_done_check(run);
}

/* get-schema of every module the hello lists (module=NAME&revision=REV). */
static void
request_schemas(struct mount_session *s)
{
    const struct hello_info *h = &s->conn.server_hello;
    struct sbuf all = {0};
    struct sbuf msg = {0};

    for (size_t i = 0; i < h->cap_count; i++) {
        const char *mod = strstr(h->caps[i], "?module=");
        const char *rev = strstr(h->caps[i], "revision=");
        size_t mod_len;
        mod = mod ? mod + 8 : strstr(h->caps[i], "&module=") ? strstr(h->caps[i], "&module=") + 8 : NULL;
        if (!mod) {
            continue;
        }
        mod_len = strcspn(mod, "&");
        msg.len = 0;
        sbuf_printf(&msg,
                    "<rpc message-id=\"%u\" xmlns=\"" NC_BASE_NS "\"><get-schema xmlns=\"" NCM_NS "\">"
                    "<identifier>%.*s</identifier>",
                    (unsigned)(s->requests + 1), (int)mod_len, mod);
        if (rev) {
            sbuf_printf(&msg, "<version>%.*s</version>", (int)strcspn(rev + 9, "&"), rev + 9);
        }
        sbuf_adds(&msg, "<format>yang</format></get-schema></rpc>");
        conn_frame(&s->conn, &all, msg.buf, msg.len);
        s->requests++;
    }
    if (s->requests && !all.failed) {
        conn_expect(&s->conn);
        conn_send(&s->conn, all.buf, all.len);
    }
    sbuf_free(&all);
    sbuf_free(&msg);
}

static void
on_ready(struct conn *c)
{
    struct mount_session *s = c->user;
    struct mount_run *run = s->run;
    struct sbuf b = {0};
    static const char get_config[] = "<rpc message-id=\"1\" xmlns=\"" NC_BASE_NS
                                     "\"><get-config><source><running/></source></get-config></rpc>";

    latency_add(&run->to_hello, (uint32_t)(c->ready_us - c->started_us));
    switch (run->o->on_mount) {
    case MOUNT_NONE:
        break;
    case MOUNT_GET_SCHEMA:
        request_schemas(s);
        break;
    case MOUNT_GET_CONFIG:
        conn_frame(c, &b, get_config, sizeof get_config - 1);
        s->requests = 1;
        conn_expect(c);
        conn_send(c, b.buf, b.len);
        sbuf_free(&b);
        break;
    }
    if (!s->requests && c->state == CONN_READY) {
        session_mounted(s);
    }
}

static void
on_message(struct conn *c, const char *msg, size_t len)
{
    struct mount_session *s = c->user;
    struct reply_info r;

    if (reply_scan(msg, len, &r) != REPLY_RPC_REPLY || s->mounted) {
        return;
    }
    s->answered++;
    if (r.error_count) {
        s->rpc_errors++;
        s->run->rpc_errors++;
    } else if (s->run->o->on_mount == MOUNT_GET_SCHEMA) {
        s->run->schemas++;
    }
    if (s->answered == s->requests) {
        session_mounted(s);
    }
}

static void
on_failed(struct conn *c, enum conn_failure why, const char *detail)
{
    struct mount_session *s = c->user;
    struct mount_run *run = s->run;

    if (!s->mounted) {
        run->in_setup--;
    } else {
        run->mounted--; /* lost after mounting: it no longer counts as held */
    }
    run->failures[why]++;
    tally_now(run, &run->failed_per_s);
    if (run->o->reconnect) {
        if (s->mounted) {
            run->losses++;
            tally_now(run, &run->lost_per_s);
            s->lost_us = loop_clock_monotonic();
        }
        s->mounted = 0;
        retry_later(s);
        start_more(run);
        return;
    }
    s->failed = 1;
    run->failed++;
    if (!run->first_failure[0]) {
        snprintf(run->first_failure, sizeof run->first_failure, "device %u: %s (%s)", (unsigned)s->device,
                 conn_failure_name(why), detail);
    }
    start_more(run);
    all_done_check(run);
}

static const struct conn_callbacks callbacks = {on_ready, on_message, on_failed, NULL};

/* Connect session @p s (again): a fresh connection to its device. */
static void
session_start(struct mount_session *s)
{
    struct mount_run *run = s->run;
    const struct stress_options *o = run->o;
    uint32_t addr;
    uint16_t port;

    conn_close(&s->conn); /* a retry: the last connection's hello goes */
    memset(&s->conn, 0, sizeof s->conn);
    s->conn.fd = -1;
    s->requests = s->answered = s->rpc_errors = 0;
    run_conn_prepare(o, &s->conn, s->device, run->preamble, run->preamble_len, &addr, &port);
    run->in_setup++;
    if (conn_start(&s->conn, run->loop, run->xml_ctx, &o->ip_fam, addr, port, &callbacks, s)) {
        run->in_setup--;
        run->failures[CONN_FAIL_RESOURCES]++;
        if (!run->first_failure[0]) {
            snprintf(run->first_failure, sizeof run->first_failure, "device %u: cannot create a socket",
                     (unsigned)s->device);
        }
        if (o->reconnect) {
            retry_later(s);
            return;
        }
        s->failed = 1;
        run->failed++;
    }
}

static void
on_retry(struct loop *loop, struct loop_timer *timer)
{
    struct mount_session *s =
        (struct mount_session *)((char *)timer - offsetof(struct mount_session, retry_timer));

    (void)loop;
    s->run->retries++;
    session_start(s);
}

/* --reconnect: connect @p s again after its backoff, drawn in [w/2, w], w growing 1.5 times to the bound. */
static void
retry_later(struct mount_session *s)
{
    struct mount_run *run = s->run;
    uint32_t w = s->backoff_ms ? s->backoff_ms : RECONNECT_FIRST_MS;
    uint64_t draw = (uint64_t)s->device * 0x9E3779B97F4A7C15ull + run->retries * 0xBF58476D1CE4E5B9ull;
    uint32_t wait_ms = w / 2 + (uint32_t)((draw >> 33) % (w / 2 + 1));

    s->backoff_ms = w + w / 2 > RECONNECT_MAX_MS ? RECONNECT_MAX_MS : w + w / 2;
    loop_timer_start(run->loop, &s->retry_timer, loop_clock_monotonic() + (monotime_us)wait_ms * 1000u,
                     on_retry);
}

static void
start_more(struct mount_run *run)
{
    const struct stress_options *o = run->o;

    while (run->in_setup < o->concurrency && run->next < o->device_count) {
        session_start(&run->sessions[run->next++]);
    }
}

/* mev_up_fn: device @p device's session has its hello done (and is not lost since). */
static int
session_up(void *user, uint32_t device)
{
    const struct mount_run *run = user;

    return run->sessions[device].conn.state == CONN_READY;
}

static void
on_events_poll(struct loop *loop, struct loop_timer *timer)
{
    struct mount_run *run = (struct mount_run *)((char *)timer - offsetof(struct mount_run, events_timer));

    if (mev_poll(run->events, session_up, run)) {
        run->events_oom = 1;
        loop_stop(loop);
        return;
    }
    loop_timer_start(loop, timer, loop_now_us(loop) + (monotime_us)(run->o->events_interval_s * 1e6),
                     on_events_poll);
}

static void
report(struct mount_run *run)
{
    const struct stress_options *o = run->o;
    double all_s = (double)(run->all_done_us - run->start_us) / 1e6;
    static const char *const actions[] = {"none", "get-schema", "get-config"};
    char pct[3][24];
    int any = 0;

    latency_sort(&run->to_hello);
    latency_sort(&run->to_mount);
    printf("fleetsim-stress mount: %u devices, concurrency %u, on-mount %s\n", (unsigned)o->device_count,
           (unsigned)o->concurrency, actions[o->on_mount]);
    printf("mounted: %u of %u in %.3f s (%.1f sessions/s)\n", (unsigned)run->mounted,
           (unsigned)o->device_count, all_s, all_s > 0 ? (double)run->mounted / all_s : 0.0);
    if (run_interrupted()) {
        printf("interrupted by %s after %.3f s%s\n", run_interrupted_name(),
               (double)(loop_clock_monotonic() - run->start_us) / 1e6,
               run->mounted + run->failed < o->device_count ? ", before every device was done" : ", holding");
    }
    printf("time to hello ms: p50 %s p99 %s max %s\n", latency_text(&run->to_hello, 50, 1e3, 3, pct[0], 24),
           latency_text(&run->to_hello, 99, 1e3, 3, pct[1], 24),
           latency_text(&run->to_hello, 100, 1e3, 3, pct[2], 24));
    printf("time to mounted ms: p50 %s p99 %s max %s\n", latency_text(&run->to_mount, 50, 1e3, 3, pct[0], 24),
           latency_text(&run->to_mount, 99, 1e3, 3, pct[1], 24),
           latency_text(&run->to_mount, 100, 1e3, 3, pct[2], 24));
    if (o->on_mount == MOUNT_GET_SCHEMA) {
        printf("schemas fetched: %" PRIu64 "\n", run->schemas);
    }
    printf("failures:");
    for (int i = 1; i < CONN_FAIL_COUNT; i++) {
        if (run->failures[i]) {
            printf(" %s %" PRIu64, conn_failure_name((enum conn_failure)i), run->failures[i]);
            any = 1;
        }
    }
    if (run->rpc_errors) {
        printf(" rpc-error %" PRIu64, run->rpc_errors);
        any = 1;
    }
    printf("%s\n", any ? "" : " none");
    if (o->reconnect) {
        latency_sort(&run->to_reconnect);
        printf("reconnect: %" PRIu64 " lost, %" PRIu64 " mounted again, %u not mounted now, %" PRIu64
               " attempts after a failure or loss\n",
               run->losses, run->reconnects, (unsigned)(o->device_count - run->mounted), run->retries);
        printf("time to reconnect ms: p50 %s p99 %s max %s\n",
               latency_text(&run->to_reconnect, 50, 1e3, 3, pct[0], 24),
               latency_text(&run->to_reconnect, 99, 1e3, 3, pct[1], 24),
               latency_text(&run->to_reconnect, 100, 1e3, 3, pct[2], 24));
    }
    printf("client CPU: %.3f s, %.1f us per session\n", run->cpu_end_s - run->cpu_start_s,
           o->device_count ? (run->cpu_end_s - run->cpu_start_s) * 1e6 / o->device_count : 0.0);
    if (run->events) {
        mev_print(run->events);
    }
}

static void
on_progress_line(struct loop *loop, struct loop_timer *timer)
{
    struct mount_run *run = (struct mount_run *)((char *)timer - offsetof(struct mount_run, line_timer));

    if (run->all_done_us) {
        run_progress_line(run->start_us, "%u of %u mounted, %u failed, holding", (unsigned)run->mounted,
                          (unsigned)run->o->device_count, (unsigned)run->failed);
    } else {
        run_progress_line(run->start_us, "%u of %u mounted, %u failed, %u being set up",
                          (unsigned)run->mounted, (unsigned)run->o->device_count, (unsigned)run->failed,
                          (unsigned)run->in_setup);
    }
    loop_timer_start(loop, timer, loop_now_us(loop) + RUN_PROGRESS_LINE_US, on_progress_line);
}

static int
write_manifest(struct mount_run *run)
{
    char ip_text[NETADDR_TEXT_BYTES];
    const struct stress_options *o = run->o;
    double all_s = (double)(run->all_done_us - run->start_us) / 1e6;
    static const char *const actions[] = {"none", "get-schema", "get-config"};
    const struct hello_info *hello = NULL;
    struct sbuf b = {0};
    int rc;

    for (uint32_t i = 0; i < o->device_count && !hello; i++) {
        if (run->sessions[i].conn.server_hello.cap_count) {
            hello = &run->sessions[i].conn.server_hello;
        }
    }
    sbuf_adds(&b, "{\"tool\":\"fleetsim-stress\",\"version\":");
    sbuf_add_json(&b, FLEETSIM_VERSION);
    sbuf_printf(
        &b,
        ",\"mode\":\"mount\",\"parameters\":{\"ip\":\"%s\",\"port\":%u,\"device_count\":%u,"
        "\"ip_per_device\":%s,\"concurrency\":%u,\"on_mount\":\"%s\",\"hold_s\":%u,\"msg_timeout_s\":%u,"
        "\"legacy_framing\":%s,%s},\"server\":{\"capabilities\":[",
        netaddr_text(&o->ip_fam, o->ip, ip_text, sizeof ip_text), (unsigned)o->port,
        (unsigned)o->device_count, o->ip_per_device ? "true" : "false", (unsigned)o->concurrency,
        actions[o->on_mount], (unsigned)o->hold_s, (unsigned)o->msg_timeout_s,
        o->legacy_framing ? "true" : "false", conn_transport_json());
    for (size_t i = 0; hello && i < hello->cap_count; i++) {
        if (i) {
            sbuf_adds(&b, ",");
        }
        sbuf_add_json(&b, hello->caps[i]);
    }
    sbuf_adds(&b, "]},");
    if (run->events) {
        mev_manifest(&b, run->events); /* the fleet's scenario, or --scenario's: one "scenario" member */
    }
    sbuf_adds(&b, "\"results\":{\"interrupted\":");
    json_string_or_null(&b, run_interrupted_name());
    sbuf_printf(&b, ",\"mounted\":%u,\"failed\":%u,\"all_done_s\":%.6f,\"sessions_per_second\":%.3f,",
                (unsigned)run->mounted, (unsigned)run->failed, all_s, all_s > 0 ? run->mounted / all_s : 0.0);
    for (int l = 0; l < 2; l++) {
        const struct latency *lat = l ? &run->to_mount : &run->to_hello;
        sbuf_printf(&b, "\"%s\":{\"p50\":", l ? "time_to_mounted_us" : "time_to_hello_us");
        latency_json(&b, lat, 50, 1, 0);
        sbuf_adds(&b, ",\"p99\":");
        latency_json(&b, lat, 99, 1, 0);
        sbuf_adds(&b, ",\"max\":");
        latency_json(&b, lat, 100, 1, 0);
        sbuf_adds(&b, "},");
    }
    sbuf_printf(&b, "\"schemas_fetched\":%" PRIu64 ",\"rpc_errors\":%" PRIu64 ",\"failures\":{", run->schemas,
                run->rpc_errors);
    for (int i = 1; i < CONN_FAIL_COUNT; i++) {
        sbuf_printf(&b, "%s\"%s\":%" PRIu64, i > 1 ? "," : "", conn_failure_name((enum conn_failure)i),
                    run->failures[i]);
    }
    sbuf_printf(&b,
                "},\"reconnect\":%s,\"losses\":%" PRIu64 ",\"reconnects\":%" PRIu64 ",\"retries\":%" PRIu64
                ",\"mounted_at_end\":%u,\"time_to_reconnect_us\":{\"p50\":",
                run->o->reconnect ? "true" : "false", run->losses, run->reconnects, run->retries,
                (unsigned)run->mounted);
    latency_sort(&run->to_reconnect);
    latency_json(&b, &run->to_reconnect, 50, 1, 0);
    sbuf_adds(&b, ",\"p99\":");
    latency_json(&b, &run->to_reconnect, 99, 1, 0);
    sbuf_adds(&b, ",\"max\":");
    latency_json(&b, &run->to_reconnect, 100, 1, 0);
    sbuf_printf(&b, "},\"client_cpu_s\":%.6f,\"first_failure\":", run->cpu_end_s - run->cpu_start_s);
    json_string_or_null(&b, run->first_failure);
    sbuf_adds(&b, ",");
    latency_histogram_json(&b, "time_to_hello_histogram", &run->to_hello);
    sbuf_adds(&b, ",");
    latency_histogram_json(&b, "time_to_mounted_histogram", &run->to_mount);
    {
        /* The run's seconds: up at the end of second s is the sum of mounted minus lost up to s. */
        size_t secs = run->mounted_per_s.len;
        secs = run->lost_per_s.len > secs ? run->lost_per_s.len : secs;
        secs = run->failed_per_s.len > secs ? run->failed_per_s.len : secs;
        sbuf_adds(&b, "},\"per_second\":{\"bucket_s\":1,\"mounted\":");
        persec_json(&b, &run->mounted_per_s, secs);
        sbuf_adds(&b, ",\"lost\":");
        persec_json(&b, &run->lost_per_s, secs);
        sbuf_adds(&b, ",\"failed\":");
        persec_json(&b, &run->failed_per_s, secs);
    }
    sbuf_adds(&b, "}}");
    if (!run->events) {
        run_manifest_scenario(&b);
    }
    rc = b.failed ? -1 : run_manifest_write(o->json_path, &b, run->start_us, run->all_done_us);
    sbuf_free(&b);
    return rc;
}

int
mount_run(const struct stress_options *o)
{
    struct mount_run run = {0};
    int fd_limit = run_raise_fd_limit();
    int curl_ready = 0;
    int rc = 2;

    run.o = o;
    loop_timer_init(&run.hold_timer);
    loop_timer_init(&run.line_timer);
    loop_timer_init(&run.events_timer);
    if (o->concurrency + 64 > (uint32_t)fd_limit && o->device_count + 64 > (uint32_t)fd_limit) {
        fprintf(stderr,
                "fleetsim-stress: %u sessions need more descriptors than the limit of %d (ulimit -Hn)\n",
                (unsigned)o->device_count, fd_limit);
        return 2;
    }
    if (o->device_count + 64 > (uint32_t)fd_limit) {
        fprintf(
            stderr,
            "fleetsim-stress: holding %u sessions open needs %u descriptors; the limit is %d (ulimit -Hn)\n",
            (unsigned)o->device_count, (unsigned)o->device_count + 64, fd_limit);
        return 2;
    }
    run.loop = loop_new(fd_limit);
    run.sessions = calloc(o->device_count, sizeof *run.sessions);
    for (uint32_t i = 0; run.sessions && i < o->device_count; i++) {
        run.sessions[i].run = &run;
        run.sessions[i].device = i;
        run.sessions[i].conn.fd = -1;
        loop_timer_init(&run.sessions[i].retry_timer);
    }
    if (!run.loop || !run.sessions || ly_ctx_new(NULL, LY_CTX_NO_YANGLIBRARY, &run.xml_ctx) ||
        latency_reserve(&run.to_hello, o->device_count) || latency_reserve(&run.to_mount, o->device_count)) {
        fprintf(stderr, "fleetsim-stress: out of memory for %u sessions\n", (unsigned)o->device_count);
        goto cleanup;
    }
    if (run_preamble(o, &run.preamble, &run.preamble_len)) {
        goto cleanup;
    }
    if (o->events_url) {
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
            fprintf(stderr, "fleetsim-stress: libcurl cannot start\n");
            goto cleanup;
        }
        curl_ready = 1;
        run.events = mev_start(o);
        if (!run.events) {
            goto cleanup;
        }
        loop_timer_start(run.loop, &run.events_timer,
                         loop_clock_monotonic() + (monotime_us)(o->events_interval_s * 1e6), on_events_poll);
    }
    run_signals_catch(run.loop);
    run.cpu_start_s = stats_cpu_seconds();
    run.start_us = loop_clock_monotonic();
    if (run_progress_lines()) {
        loop_timer_start(run.loop, &run.line_timer, loop_now_us(run.loop) + RUN_PROGRESS_LINE_US,
                         on_progress_line);
    }
    start_more(&run);
    all_done_check(&run);
    loop_run(run.loop);
    if (!run.all_done_us) { /* interrupted before every device was done: measured until now */
        run.all_done_us = loop_clock_monotonic();
        run.cpu_end_s = stats_cpu_seconds();
    }
    if (run.events && (mev_stop(run.events, session_up, &run) || run.events_oom)) {
        fprintf(stderr, "fleetsim-stress: FAILED: out of memory for the events\n");
        rc = 1;
        goto cleanup;
    }
    report(&run);
    fflush(stdout); /* the report before any FAILED line on stderr, when both go to one file */
    rc = 0;
    if (o->json_path && write_manifest(&run)) {
        fprintf(stderr, "fleetsim-stress: FAILED: cannot write %s: %m\n", o->json_path);
        rc = 1;
    }
    if (run.failed) {
        fprintf(stderr, "fleetsim-stress: FAILED: %u of %u sessions failed; first: %s\n",
                (unsigned)run.failed, (unsigned)o->device_count, run.first_failure);
        rc = 1;
    } else if (o->reconnect && run.mounted < o->device_count) {
        fprintf(stderr, "fleetsim-stress: FAILED: %u of %u devices not mounted at the end (reconnecting)\n",
                (unsigned)(o->device_count - run.mounted), (unsigned)o->device_count);
        rc = 1;
    } else if (run.rpc_errors) {
        fprintf(stderr, "fleetsim-stress: FAILED: %" PRIu64 " on-mount requests answered with rpc-error\n",
                run.rpc_errors);
        rc = 1;
    }
    if (run.events && mev_unhealed(run.events)) {
        rc = 1;
    }
    if (run_interrupted()) {
        fprintf(stderr, "fleetsim-stress: interrupted by %s: %u of %u mounted\n", run_interrupted_name(),
                (unsigned)run.mounted, (unsigned)o->device_count);
    }

cleanup:
    rc = run_signals_release(rc);
    for (uint32_t i = 0; run.sessions && i < o->device_count; i++) {
        conn_close(&run.sessions[i].conn);
        if (run.loop) {
            loop_timer_stop(run.loop, &run.sessions[i].retry_timer);
        }
    }
    if (run.loop) {
        loop_timer_stop(run.loop, &run.hold_timer);
        loop_timer_stop(run.loop, &run.line_timer);
        loop_timer_stop(run.loop, &run.events_timer);
    }
    mev_free(run.events);
    if (curl_ready) {
        curl_global_cleanup();
    }
    free(run.sessions);
    free(run.preamble);
    latency_free(&run.to_hello);
    latency_free(&run.to_mount);
    latency_free(&run.to_reconnect);
    persec_free(&run.mounted_per_s);
    persec_free(&run.lost_per_s);
    persec_free(&run.failed_per_s);
    loop_free(run.loop);
    ly_ctx_destroy(run.xml_ctx);
    return rc;
}
