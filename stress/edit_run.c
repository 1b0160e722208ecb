/*
 * "fleetsim-stress edit": edit-config throughput. Sessions are opened and
 * their hellos completed first; then the clock starts. Requests go out in
 * windows (1 when synchronous, --pipeline when asynchronous). Each session
 * builds its requests (framed, placeholders expanded) a window ahead of
 * what it sent, between writes: after a write, while the server works on
 * it, the next window is built, so the following write is one contiguous
 * run of ready bytes, and memory holds a window or two of requests whatever
 * --edits is (issue 28: prebuilding every request took gigabytes before the
 * first one went out). Each reply is matched to its request by message-id,
 * in order; anything unanswered fails the run. SIGINT or SIGTERM ends it in
 * any phase with the report of what was answered so far.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conn.h"
#include "reply_scan.h"
#include "run.h"
#include "stats.h"
#include "template.h"

#define NC_BASE_NS "urn:ietf:params:xml:ns:netconf:base:1.0"
/* Progress line refresh on a terminal. */
#define EDIT_PROGRESS_INTERVAL_MS 250
/* What of an unmatched reply the failure quotes. */
#define EDIT_QUOTE_BYTES 200
/* Requests in flight per session with --pipeline 0 ("no limit"): without a bound the whole run would be
 * built and queued at once. A window this wide already keeps any server's input busy. */
#define EDIT_UNLIMITED_WINDOW 65536u
/* Requests built ahead of the sender per session, at most (the window, when smaller). */
#define EDIT_AHEAD_MAX 4096u
/* Sent bytes at the front of a session's build buffer before it is compacted: moving the unsent rest
 * once per this many bytes keeps the copy small beside building. */
#define EDIT_COMPACT_BYTES (256u * 1024u)

/* Used when --edit-content is not given: one new ietf-interfaces entry per edit. */
static const char default_content[] =
    "<interfaces "
    "xmlns=\"urn:ietf:params:xml:ns:yang:ietf-interfaces\"><interface><name>stress-{SESSION}-{INDEX}"
    "</name><type xmlns:ianaift=\"urn:ietf:params:xml:ns:yang:iana-if-type\">ianaift:ethernetCsmacd</type>"
    "<description>{PHYS_ADDR}</description></interface></interfaces>";

struct edit_run;

/* One request between being built and being answered; slot r % ring_cap of its session's ring. */
struct edit_slot {
    size_t end;          /* built, not sent: end of its bytes in the session's build buffer */
    monotime_us sent_at; /* sent, not answered: when it went out */
    uint8_t is_commit;   /* 1 for a commit, 0 for an edit-config */
};

struct edit_session {
    struct conn conn;       /* the connection */
    struct edit_run *run;   /* back pointer */
    uint32_t index;         /* session number */
    uint32_t device;        /* device it talks to */
    uint64_t first_edit;    /* global number of its first edit */
    uint64_t edit_count;    /* its edits */
    uint64_t batch;         /* edits per commit with the candidate datastore, else edit_count */
    uint64_t req_count;     /* requests (edits and commits) */
    uint64_t edits_built;   /* edits among the requests built */
    int commit_due;         /* 1 when the next request to build is the commit of a batch */
    uint64_t built;         /* requests built: [sent, built) wait in ahead */
    uint64_t sent;          /* requests handed to the connection */
    uint64_t answered;      /* replies received, in order */
    uint64_t edits_sent;    /* edit-configs among the sent */
    uint64_t commits_sent;  /* commits among the sent */
    struct sbuf ahead;      /* framed requests; bytes from ahead_off on are the unsent ones, in order */
    size_t ahead_off;       /* bytes of ahead already sent */
    struct edit_slot *ring; /* requests [answered, built), at r % ring_cap */
    uint64_t ring_cap;      /* slots: the window plus what is built ahead of it */
    uint64_t ahead_target;  /* requests to keep built ahead of the sender */
    struct sbuf msg;        /* one request before framing; reused */
    uint64_t edit_ok;       /* edits answered <ok/> */
    uint64_t edit_errors;   /* edits answered with rpc-error */
    uint64_t commit_ok;     /* commits answered <ok/> */
    uint64_t commit_errors; /* commits answered with rpc-error */
    struct tag_counts tags; /* rpc-errors by error-tag */
    int done;               /* 1 when every request is answered */
};

struct edit_run {
    const struct stress_options *o;   /* parameters */
    struct loop *loop;                /* the one loop */
    struct ly_ctx *xml_ctx;           /* hello parsing */
    struct template tpl;              /* edit content */
    char *preamble;                   /* --tcp-preamble content or NULL */
    size_t preamble_len;              /* its length */
    struct edit_session *sessions;    /* o->threads sessions */
    struct latency latency;           /* per answered edit, every session */
    uint32_t ready;                   /* sessions whose hello is done */
    uint32_t done;                    /* sessions with every request answered */
    int measuring;                    /* 1 once the clock started */
    int failed;                       /* 1 once anything failed */
    char failure[512];                /* the first failure, for the report */
    monotime_us start_us;             /* clock start */
    monotime_us end_us;               /* last reply */
    double cpu_start_s;               /* client CPU at clock start */
    double cpu_end_s;                 /* client CPU at the last reply */
    double user_start_s;              /* of cpu_start_s, the user time */
    double user_end_s;                /* of cpu_end_s, the user time */
    int progress;                     /* 1 when stderr is a terminal */
    int progress_lines;               /* 1 when it is not: a line every RUN_PROGRESS_LINE_US */
    monotime_us launch_us;            /* the first connect, origin of the progress lines */
    struct loop_timer progress_timer; /* refreshes the progress line, or prints the next */
    uint64_t progress_last_answered;  /* for the current rate */
    monotime_us progress_last_us;     /* idem */
    struct persec ok_per_s;           /* requests answered <ok/>, per second since start_us */
    struct persec errors_per_s;       /* requests answered with rpc-error, per second */
    struct persec_names tags_per_s;   /* those by error-tag, per second */
};

static uint64_t
window(const struct edit_run *run)
{
    if (!run->o->async) {
        return 1;
    }
    return run->o->pipeline ? run->o->pipeline : EDIT_UNLIMITED_WINDOW;
}

static void run_fail(struct edit_run *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
run_fail(struct edit_run *run, const char *fmt, ...)
{
    va_list ap;

    if (!run->failed) {
        va_start(ap, fmt);
        vsnprintf(run->failure, sizeof run->failure, fmt, ap);
        va_end(ap);
    }
    run->failed = 1;
    loop_stop(run->loop);
}

/* Room for a session's window and what is built ahead of it. @return 0 or -1 (out of memory). */
static int
session_alloc(struct edit_session *s)
{
    uint64_t w = window(s->run);

    s->ahead_target = w < EDIT_AHEAD_MAX ? w : EDIT_AHEAD_MAX;
    s->ring_cap = (w < s->req_count ? w : s->req_count) + s->ahead_target;
    s->ring = calloc(s->ring_cap, sizeof *s->ring);
    return s->ring ? 0 : -1;
}

/* Build the next request of a session at the end of its build buffer. */
static void
build_one(struct edit_session *s)
{
    const struct stress_options *o = s->run->o;
    struct edit_slot *slot = &s->ring[s->built % s->ring_cap];
    uint64_t id = s->built + 1;
    int commit = s->commit_due;

    s->msg.len = 0;
    if (commit) {
        sbuf_printf(&s->msg, "<rpc message-id=\"%" PRIu64 "\" xmlns=\"" NC_BASE_NS "\"><commit/></rpc>", id);
    } else {
        struct template_vars v = {
            .index = s->first_edit + s->edits_built, .msg_id = id, .session = s->index, .device = s->device};
        sbuf_printf(&s->msg,
                    "<rpc message-id=\"%" PRIu64 "\" xmlns=\"" NC_BASE_NS "\"><edit-config><target><%s/>"
                    "</target><config>",
                    id, o->candidate ? "candidate" : "running");
        template_expand(&s->run->tpl, &v, &s->msg);
        sbuf_adds(&s->msg, "</config></edit-config></rpc>");
        s->edits_built++;
    }
    /* A commit ends each batch of edits, the last one too however short. */
    s->commit_due =
        !commit && o->candidate && (s->edits_built % s->batch == 0 || s->edits_built == s->edit_count);
    conn_frame(&s->conn, &s->ahead, s->msg.buf, s->msg.len);
    slot->end = s->ahead.len;
    slot->is_commit = (uint8_t)commit;
    s->built++;
}

/* Build until ahead_target requests wait unsent (or the session has none left). @return 0 or -1. */
static int
build_ahead(struct edit_session *s)
{
    if (s->ahead_off == s->ahead.len) {
        s->ahead.len = s->ahead_off = 0; /* everything built went out: start over at the front */
    } else if (s->ahead_off >= EDIT_COMPACT_BYTES) {
        memmove(s->ahead.buf, s->ahead.buf + s->ahead_off, s->ahead.len - s->ahead_off);
        s->ahead.len -= s->ahead_off;
        for (uint64_t r = s->sent; r < s->built; r++) {
            s->ring[r % s->ring_cap].end -= s->ahead_off;
        }
        s->ahead_off = 0;
    }
    while (s->built < s->req_count && s->built - s->sent < s->ahead_target) {
        build_one(s);
    }
    return s->ahead.failed || s->msg.failed ? -1 : 0;
}

/* Send the next run of requests so that at most window() are outstanding, then build the next ones. */
static void
pump(struct edit_session *s)
{
    uint64_t in_flight = s->sent - s->answered;
    uint64_t room = window(s->run) - in_flight;
    uint64_t last;
    size_t start, end;
    monotime_us now;

    if (s->sent >= s->req_count || in_flight >= window(s->run)) {
        return;
    }
    if (s->built == s->sent && build_ahead(s)) {
        run_fail(s->run, "out of memory building the requests of session %u", (unsigned)s->index);
        return;
    }
    last = s->built - s->sent < room ? s->built - 1 : s->sent + room - 1;
    start = s->ahead_off;
    end = s->ring[last % s->ring_cap].end;
    now = loop_clock_monotonic();
    for (uint64_t i = s->sent; i <= last; i++) {
        struct edit_slot *slot = &s->ring[i % s->ring_cap];
        slot->sent_at = now;
        slot->is_commit ? s->commits_sent++ : s->edits_sent++;
    }
    s->sent = last + 1;
    s->ahead_off = end;
    conn_expect(&s->conn);
    if (conn_send(&s->conn, s->ahead.buf + start, end - start)) {
        return; /* the failure was reported */
    }
    /* While the server works on what just went out. */
    if (build_ahead(s)) {
        run_fail(s->run, "out of memory building the requests of session %u", (unsigned)s->index);
    }
}

static void
finish_if_done(struct edit_run *run)
{
    if (run->done + 0u == run->o->threads) {
        double sys_s;
        run->end_us = loop_clock_monotonic();
        stats_cpu_split(&run->user_end_s, &sys_s);
        run->cpu_end_s = run->user_end_s + sys_s;
        loop_stop(run->loop);
    }
}

static void
start_measuring(struct edit_run *run)
{
    /* The first window of each session, before the clock as before; the rest is built as it goes. */
    for (uint32_t i = 0; i < run->o->threads; i++) {
        if (build_ahead(&run->sessions[i])) {
            run_fail(run, "out of memory building the requests of session %u", (unsigned)i);
            return;
        }
    }
    run->measuring = 1;
    {
        double sys_s;
        stats_cpu_split(&run->user_start_s, &sys_s);
        run->cpu_start_s = run->user_start_s + sys_s;
    }
    run->start_us = run->progress_last_us = loop_clock_monotonic();
    for (uint32_t i = 0; i < run->o->threads && !run->failed; i++) {
        pump(&run->sessions[i]);
    }
}

static void
on_ready(struct conn *c)
{
    struct edit_session *s = c->user;

    if (++s->run->ready == s->run->o->threads) {
        start_measuring(s->run);
    }
}

/* The first EDIT_QUOTE_BYTES of what the server sent, on one line (control characters as spaces). */
static const char *
quote(const char *msg, size_t len, char *buf, size_t size)
{
    size_t n = len < size - 1 ? len : size - 1;

    for (size_t i = 0; i < n; i++) {
        buf[i] = (unsigned char)msg[i] < 0x20 ? ' ' : msg[i];
    }
    buf[n] = '\0';
    return buf;
}

static void
on_message(struct conn *c, const char *msg, size_t len)
{
    struct edit_session *s = c->user;
    struct edit_run *run = s->run;
    struct reply_info r;
    uint64_t i = s->answered;
    char said[EDIT_QUOTE_BYTES + 1];

    if (reply_scan(msg, len, &r) == REPLY_NOTIFICATION) {
        return;
    }
    if (r.kind != REPLY_RPC_REPLY || i >= s->sent) {
        run_fail(run, "session %u: unexpected message from the server: %s", (unsigned)s->index,
                 quote(msg, len, said, sizeof said));
        return;
    }
    if (!r.has_message_id || r.message_id != i + 1) {
        char id[32] = "no message-id";
        if (r.has_message_id) {
            snprintf(id, sizeof id, "message-id %" PRIu64, r.message_id);
        }
        run_fail(run, "session %u: reply with %s where %" PRIu64 " was due; the server answered: %s",
                 (unsigned)s->index, id, i + 1, quote(msg, len, said, sizeof said));
        return;
    }
    s->answered++;
    {
        monotime_us now = loop_clock_monotonic();
        size_t sec = now > run->start_us ? (size_t)((now - run->start_us) / 1000000u) : 0;
        if ((r.error_count && (tags_add(&s->tags, r.error_tag, 1) ||
                               persec_names_add(&run->tags_per_s, r.error_tag, sec, 1))) ||
            persec_add(r.error_count ? &run->errors_per_s : &run->ok_per_s, sec, 1)) {
            run_fail(run, "out of memory");
            return;
        }
    }
    if (s->ring[i % s->ring_cap].is_commit) {
        r.error_count ? s->commit_errors++ : s->commit_ok++;
    } else {
        monotime_us now = loop_clock_monotonic();
        uint64_t us = now - s->ring[i % s->ring_cap].sent_at;
        if (latency_add(&run->latency, us > UINT32_MAX ? UINT32_MAX : (uint32_t)us)) {
            run_fail(run, "out of memory");
            return;
        }
        r.error_count ? s->edit_errors++ : s->edit_ok++;
    }
    if (s->answered == s->req_count) {
        conn_idle(c);
        s->done = 1;
        run->done++;
        finish_if_done(run);
        return;
    }
    if (s->answered == s->sent) {
        conn_idle(c);
    } else {
        conn_expect(c); /* the timeout counts from the last sign of life, not from the last send */
    }
}

/* After a read's replies: refill the window in one write rather than one per reply. */
static void
on_drained(struct conn *c)
{
    struct edit_session *s = c->user;

    if (!s->done && !s->run->failed) {
        pump(s);
    }
}

static void
on_failed(struct conn *c, enum conn_failure why, const char *detail)
{
    struct edit_session *s = c->user;

    if (s->sent > s->answered) {
        run_fail(s->run,
                 "session %u (device %u): %s (%s); requests with message-id %" PRIu64 " to %" PRIu64
                 " were sent and not answered, %" PRIu64 " not sent",
                 (unsigned)s->index, (unsigned)s->device, conn_failure_name(why), detail, s->answered + 1,
                 s->sent, s->req_count - s->sent);
    } else {
        run_fail(s->run, "session %u (device %u): %s (%s)", (unsigned)s->index, (unsigned)s->device,
                 conn_failure_name(why), detail);
    }
}

static const struct conn_callbacks callbacks = {on_ready, on_message, on_failed, on_drained};

static uint64_t
total_answered(const struct edit_run *run)
{
    uint64_t n = 0;

    for (uint32_t i = 0; i < run->o->threads; i++) {
        n += run->sessions[i].answered;
    }
    return n;
}

static uint64_t
total_requests(const struct edit_run *run)
{
    uint64_t n = 0;

    for (uint32_t i = 0; i < run->o->threads; i++) {
        n += run->sessions[i].req_count;
    }
    return n;
}

static void
on_progress(struct loop *loop, struct loop_timer *timer)
{
    struct edit_run *run = (struct edit_run *)((char *)timer - offsetof(struct edit_run, progress_timer));
    monotime_us now = loop_clock_monotonic();

    if (run->measuring) {
        uint64_t answered = total_answered(run);
        uint64_t total = total_requests(run);
        double dt = (double)(now - run->progress_last_us) / 1e6;
        double rate = dt > 0 ? (double)(answered - run->progress_last_answered) / dt : 0;
        int width = 30;
        int filled = total ? (int)((double)answered / (double)total * width) : 0;
        fprintf(stderr, "\r[%.*s%*s] %" PRIu64 "/%" PRIu64 " %.0f/s ETA %.1f s  ", filled,
                "##############################", width - filled, "", answered, total, rate,
                rate > 0 ? (double)(total - answered) / rate : 0.0);
        run->progress_last_answered = answered;
        run->progress_last_us = now;
    }
    loop_timer_start(loop, timer, loop_now_us(loop) + EDIT_PROGRESS_INTERVAL_MS * 1000u, on_progress);
}

/* Without a terminal: a line every RUN_PROGRESS_LINE_US, for a log. */
static void
on_progress_line(struct loop *loop, struct loop_timer *timer)
{
    struct edit_run *run = (struct edit_run *)((char *)timer - offsetof(struct edit_run, progress_timer));
    monotime_us now = loop_clock_monotonic();

    if (run->measuring) {
        uint64_t answered = total_answered(run);
        double dt = (double)(now - run->progress_last_us) / 1e6;
        run_progress_line(run->launch_us, "%" PRIu64 " of %" PRIu64 " requests answered (%.1f/s)", answered,
                          total_requests(run),
                          dt > 0 ? (double)(answered - run->progress_last_answered) / dt : 0.0);
        run->progress_last_answered = answered;
        run->progress_last_us = now;
    } else {
        run_progress_line(run->launch_us, "%u of %u sessions ready, the clock has not started",
                          (unsigned)run->ready, (unsigned)run->o->threads);
    }
    loop_timer_start(loop, timer, loop_now_us(loop) + RUN_PROGRESS_LINE_US, on_progress_line);
}

static void
print_report(struct edit_run *run, struct latency *all, struct tag_counts *tags, uint64_t *totals)
{
    const struct stress_options *o = run->o;
    double elapsed_s = (double)(run->end_us - run->start_us) / 1e6;
    double cpu_s = run->cpu_end_s - run->cpu_start_s;
    char pct[5][24];

    printf("fleetsim-stress edit: %" PRIu64 " edits over %u session(s) to %u device(s), %s, %s", o->edits,
           (unsigned)o->threads, (unsigned)(o->device_count < o->threads ? o->device_count : o->threads),
           o->candidate ? "candidate" : "running", o->async ? "async" : "sync");
    if (o->async) {
        printf(" (pipeline %u)", (unsigned)o->pipeline);
    }
    printf("\n");
    /* OpenDaylight's two lines, which scripts parse (its execution time is a Guava Stopwatch's, whose
     * unit varies from ns to days; here always seconds, to the microsecond of the clock); a failed or
     * interrupted run gets neither, so no script takes its number. */
    if (!run->failed && !run_interrupted()) {
        printf("FINISHED. Execution time: %.6f s\n", elapsed_s);
        printf("Requests per second: %.3f\n", elapsed_s > 0 ? (double)o->edits / elapsed_s : 0.0);
    } else if (run_interrupted()) {
        printf("interrupted by %s: %" PRIu64 " of %" PRIu64 " edits answered, %.3f per second\n",
               run_interrupted_name(), totals[1], o->edits,
               elapsed_s > 0 ? (double)totals[1] / elapsed_s : 0.0);
    }
    printf("elapsed: %.3f s\n", elapsed_s);
    printf("edits: %" PRIu64 " sent, %" PRIu64 " answered: %" PRIu64 " ok, %" PRIu64 " rpc-error\n",
           totals[0], totals[1], totals[2], totals[3]);
    if (o->candidate) {
        printf("commits: %" PRIu64 " sent, %" PRIu64 " ok, %" PRIu64 " rpc-error\n", totals[4], totals[5],
               totals[6]);
    }
    printf("latency us: p50 %s p90 %s p99 %s p99.9 %s max %s\n",
           latency_text(all, 50, 1, 0, pct[0], sizeof pct[0]),
           latency_text(all, 90, 1, 0, pct[1], sizeof pct[1]),
           latency_text(all, 99, 1, 0, pct[2], sizeof pct[2]),
           latency_text(all, 99.9, 1, 0, pct[3], sizeof pct[3]),
           latency_text(all, 100, 1, 0, pct[4], sizeof pct[4]));
    if (tags->count) {
        printf("errors by error-tag:");
        for (size_t i = 0; i < tags->count; i++) {
            printf(" %s %" PRIu64, tags->items[i].tag, tags->items[i].count);
        }
        printf("\n");
    }
    /* The system part is mostly the kernel's TCP work for each request sent (on loopback it includes
     * delivery). */
    printf("client CPU: %.3f s (user %.3f, system %.3f), %.2f us per edit\n", cpu_s,
           run->user_end_s - run->user_start_s, cpu_s - (run->user_end_s - run->user_start_s),
           totals[1] ? cpu_s * 1e6 / (double)totals[1] : 0.0);
}

static int
write_manifest(struct edit_run *run, struct latency *all, struct tag_counts *tags, uint64_t *totals)
{
    char ip_text[NETADDR_TEXT_BYTES];
    const struct stress_options *o = run->o;
    const struct hello_info *hello = &run->sessions[0].conn.server_hello;
    double elapsed_s = (double)(run->end_us - run->start_us) / 1e6;
    int complete = !run->failed && !run_interrupted();
    /* A complete run answered every edit; one cut short is rated by what was answered. */
    double edits_done = complete ? (double)o->edits : (double)totals[1];
    struct sbuf b = {0};
    int rc;

    sbuf_printf(&b, "{\"tool\":\"fleetsim-stress\",\"version\":");
    sbuf_add_json(&b, FLEETSIM_VERSION);
    sbuf_printf(&b,
                ",\"mode\":\"edit\",\"parameters\":{\"ip\":\"%s\",\"port\":%u,\"device_count\":%u,"
                "\"ip_per_device\":%s,\"edits\":%" PRIu64 ",\"edit_content\":",
                netaddr_text(&o->ip_fam, o->ip, ip_text, sizeof ip_text), (unsigned)o->port,
                (unsigned)o->device_count, o->ip_per_device ? "true" : "false", o->edits);
    sbuf_add_json(&b, o->edit_content ? o->edit_content : "(built-in ietf-interfaces entry)");
    sbuf_printf(&b,
                ",\"edit_batch_size\":%" PRIu64 ",\"candidate_datastore\":%s,\"async_requests\":%s,"
                "\"thread_amount\":%u,\"pipeline\":%u,\"msg_timeout_s\":%u,\"legacy_framing\":%s,%s},",
                o->batch_size, o->candidate ? "true" : "false", o->async ? "true" : "false",
                (unsigned)o->threads, (unsigned)o->pipeline, (unsigned)o->msg_timeout_s,
                o->legacy_framing ? "true" : "false", conn_transport_json());
    sbuf_printf(&b, "\"server\":{\"session_id\":%u,\"framing\":\"%s\",\"capabilities\":[",
                (unsigned)hello->session_id,
                run->sessions[0].conn.out_mode == FRAME_CHUNKED ? "base:1.1" : "base:1.0");
    for (size_t i = 0; i < hello->cap_count; i++) {
        if (i) {
            sbuf_adds(&b, ",");
        }
        sbuf_add_json(&b, hello->caps[i]);
    }
    sbuf_printf(&b, "]},\"results\":{\"complete\":%s,\"interrupted\":", complete ? "true" : "false");
    json_string_or_null(&b, run_interrupted_name());
    sbuf_printf(&b,
                ",\"requests_per_second\":%.3f,\"elapsed_s\":%.6f,"
                "\"edits_sent\":%" PRIu64 ",\"edits_answered\":%" PRIu64 ",\"edits_ok\":%" PRIu64
                ",\"edits_rpc_error\":%" PRIu64 ",\"commits_sent\":%" PRIu64 ",\"commits_ok\":%" PRIu64
                ",\"commits_rpc_error\":%" PRIu64 ",",
                elapsed_s > 0 ? edits_done / elapsed_s : 0.0, elapsed_s, totals[0], totals[1], totals[2],
                totals[3], totals[4], totals[5], totals[6]);
    {
        static const double pcts[] = {50, 90, 99, 99.9, 100};
        static const char *const names[] = {"p50", "p90", "p99", "p99.9", "max"};
        sbuf_adds(&b, "\"latency_us\":{");
        for (size_t i = 0; i < 5; i++) {
            sbuf_printf(&b, "%s\"%s\":", i ? "," : "", names[i]);
            latency_json(&b, all, pcts[i], 1, 0);
        }
        sbuf_adds(&b, "},");
    }
    sbuf_adds(&b, "\"errors_by_tag\":{");
    for (size_t i = 0; i < tags->count; i++) {
        if (i) {
            sbuf_adds(&b, ",");
        }
        sbuf_add_json(&b, tags->items[i].tag);
        sbuf_printf(&b, ":%" PRIu64, tags->items[i].count);
    }
    sbuf_printf(
        &b, "},\"client_cpu_s\":%.6f,\"client_cpu_user_s\":%.6f,\"client_cpu_us_per_edit\":%.3f,\"failure\":",
        run->cpu_end_s - run->cpu_start_s, run->user_end_s - run->user_start_s,
        totals[1] ? (run->cpu_end_s - run->cpu_start_s) * 1e6 / (double)totals[1] : 0.0);
    json_string_or_null(&b, run->failed ? run->failure : NULL);
    sbuf_adds(&b, ",");
    latency_histogram_json(&b, "latency_histogram", all);
    sbuf_adds(&b, "},");
    persec_requests_json(&b, &run->ok_per_s, &run->errors_per_s, &run->tags_per_s);
    sbuf_adds(&b, "}}");
    run_manifest_scenario(&b);
    rc = b.failed ? -1 : run_manifest_write(o->json_path, &b, run->start_us, run->end_us);
    sbuf_free(&b);
    return rc;
}

static int
setup(struct edit_run *run, const struct stress_options *o)
{
    char *text;

    run->o = o;
    loop_timer_init(&run->progress_timer);
    run->loop = loop_new(run_raise_fd_limit());
    if (!run->loop || ly_ctx_new(NULL, LY_CTX_NO_YANGLIBRARY, &run->xml_ctx)) {
        fprintf(stderr, "fleetsim-stress: cannot set up the event loop\n");
        return -1;
    }
    text = o->edit_content ? run_read_file(o->edit_content, NULL) : strdup(default_content);
    if (!text || template_init(&run->tpl, text)) {
        return -1;
    }
    {
        char why[512];
        if (template_check(&run->tpl, run->xml_ctx, why, sizeof why)) {
            fprintf(stderr, "fleetsim-stress: --edit-content \"%s\" is not well-formed XML: %s\n",
                    o->edit_content ? o->edit_content : "(built-in)", why);
            return -1;
        }
    }
    if (run_preamble(o, &run->preamble, &run->preamble_len)) {
        return -1;
    }
    run->sessions = calloc(o->threads, sizeof *run->sessions);
    if (!run->sessions) {
        fprintf(stderr, "fleetsim-stress: out of memory for %u sessions\n", (unsigned)o->threads);
        return -1;
    }
    for (uint32_t i = 0; i < o->threads; i++) {
        struct edit_session *s = &run->sessions[i];
        uint64_t per = o->edits / o->threads;
        s->run = run;
        s->index = i;
        s->device = i % o->device_count;
        s->first_edit = per * i;
        s->edit_count = i + 1 == o->threads ? o->edits - per * i : per;
        s->batch = o->candidate && o->batch_size ? o->batch_size : s->edit_count;
        s->req_count =
            s->edit_count + (o->candidate && s->batch ? (s->edit_count + s->batch - 1) / s->batch : 0);
        s->conn.fd = -1;
        if (session_alloc(s)) {
            fprintf(stderr, "fleetsim-stress: out of memory for session %u\n", (unsigned)i);
            return -1;
        }
    }
    if (latency_reserve(&run->latency, LATENCY_PENDING_MAX)) {
        fprintf(stderr, "fleetsim-stress: out of memory\n");
        return -1;
    }
    return 0;
}

static void
teardown(struct edit_run *run)
{
    for (uint32_t i = 0; run->sessions && i < run->o->threads; i++) {
        struct edit_session *s = &run->sessions[i];
        conn_close(&s->conn);
        sbuf_free(&s->ahead);
        sbuf_free(&s->msg);
        free(s->ring);
        tags_free(&s->tags);
    }
    free(run->sessions);
    free(run->preamble);
    latency_free(&run->latency);
    persec_free(&run->ok_per_s);
    persec_free(&run->errors_per_s);
    persec_names_free(&run->tags_per_s);
    template_free(&run->tpl);
    if (run->loop) {
        loop_timer_stop(run->loop, &run->progress_timer);
    }
    loop_free(run->loop);
    ly_ctx_destroy(run->xml_ctx);
}

int
edit_run(const struct stress_options *o)
{
    struct edit_run run = {0};
    struct latency all = {0};
    struct tag_counts tags = {0};
    uint64_t totals[7] = {0};
    int rc = 2;

    if (setup(&run, o)) {
        goto cleanup;
    }
    run_signals_catch(run.loop);
    run.launch_us = loop_clock_monotonic();
    for (uint32_t i = 0; i < o->threads; i++) {
        struct edit_session *s = &run.sessions[i];
        uint32_t addr;
        uint16_t port;
        run_conn_prepare(o, &s->conn, s->device, run.preamble, run.preamble_len, &addr, &port);
        if (conn_start(&s->conn, run.loop, run.xml_ctx, &o->ip_fam, addr, port, &callbacks, s)) {
            fprintf(stderr, "fleetsim-stress: cannot create socket %u: %m\n", (unsigned)i);
            goto cleanup;
        }
    }
    run.progress = isatty(STDERR_FILENO);
    run.progress_lines = !run.progress && run_progress_lines();
    if (run.progress) {
        loop_timer_start(run.loop, &run.progress_timer, loop_now_us(run.loop), on_progress);
    } else if (run.progress_lines) {
        loop_timer_start(run.loop, &run.progress_timer, loop_now_us(run.loop) + RUN_PROGRESS_LINE_US,
                         on_progress_line);
    }
    loop_run(run.loop);
    if (run.progress) {
        fprintf(stderr, "\r%*s\r", 79, "");
    }
    if (!run.end_us) { /* failed, interrupted, or the clock never started */
        double sys_s;
        run.end_us = loop_clock_monotonic();
        stats_cpu_split(&run.user_end_s, &sys_s);
        run.cpu_end_s = run.user_end_s + sys_s;
        if (!run.measuring) {
            /* The clock never started: nothing was measured. */
            run.start_us = run.end_us;
            run.cpu_start_s = run.cpu_end_s;
            run.user_start_s = run.user_end_s;
        }
    }

    for (uint32_t i = 0; i < o->threads; i++) {
        struct edit_session *s = &run.sessions[i];
        totals[0] += s->edits_sent;
        totals[4] += s->commits_sent;
        totals[1] += s->edit_ok + s->edit_errors;
        totals[2] += s->edit_ok;
        totals[3] += s->edit_errors;
        totals[5] += s->commit_ok;
        totals[6] += s->commit_errors;
        for (size_t t = 0; t < s->tags.count; t++) {
            tags_add(&tags, s->tags.items[t].tag, s->tags.items[t].count);
        }
    }
    if (latency_merge(&all, &run.latency) || latency_sort(&all)) {
        fprintf(stderr, "fleetsim-stress: out of memory for the latencies\n");
    }
    if (run.measuring || run_interrupted()) {
        print_report(&run, &all, &tags, totals);
    }
    fflush(stdout); /* the report before any FAILED line on stderr, when both go to one file */
    rc = 0;
    if (o->json_path && write_manifest(&run, &all, &tags, totals)) {
        /* The manifest is part of the result: a run that cannot record it did not complete. */
        fprintf(stderr, "fleetsim-stress: FAILED: cannot write %s: %m\n", o->json_path);
        rc = 1;
    }
    if (run.failed) {
        fprintf(stderr, "fleetsim-stress: FAILED: %s\n", run.failure);
        rc = 1;
    }
    if (run_interrupted()) {
        fprintf(stderr, "fleetsim-stress: interrupted by %s: %" PRIu64 " of %" PRIu64 " edits answered\n",
                run_interrupted_name(), totals[1], o->edits);
    }

cleanup:
    rc = run_signals_release(rc);
    latency_free(&all);
    tags_free(&tags);
    teardown(&run);
    return rc;
}
