/*
 * "fleetsim-stress controller-mount": a controller connecting to a fleet,
 * watched from outside. Every --interval the controller's RESTCONF
 * topology-netconf (operational data only) is read and its nodes counted by
 * connection status: connected, connecting, failed (unable-to-connect), and
 * absent (expected but not listed). The run ends as soon as --device-count
 * nodes are connected (exit 0) or when --timeout passes (exit 1). A poll
 * that fails (no connection, an HTTP error, an answer that is not a
 * topology) is counted and the polling goes on.
 *
 * One request at a time from one blocking libcurl handle, kept alive across
 * polls: there is nothing else to do while waiting. Polls keep to a grid of
 * --interval from the start; a poll that overruns skips the grid points it
 * missed rather than polling twice in a row. SIGINT or SIGTERM ends the
 * run with the summary and the manifest, exit 130 or 143 (run_util.c).
 *
 * With --events the fleet's event log (GET /api/v1/events on its HTTP
 * server, a second handle) is read before every poll: new events are
 * marked on the curve, and each poll's connected node-ids go to
 * event_recovery.c, which measures every event's loss and healing. Such a
 * run lasts until --timeout; it passes when at the end all are connected
 * and every event that took devices away had them back.
 */
#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "event_recovery.h"
#include "event_watch.h"
#include "fleet_events.h"
#include "http_body.h"
#include "loop.h"
#include "run.h"
#include "stats.h"
#include "topo_read.h"

/* RFC 8040 path of OpenDaylight's NETCONF topology, operational data only. */
#define CM_TOPOLOGY_PATH "/data/network-topology:network-topology/topology=topology-netconf?content=nonconfig"
#define CM_ACCEPT_HEADER "Accept: application/yang-data+json"
/* A poll's limit beyond the interval when --msg-timeout is not given. */
#define CM_POLL_MARGIN_MS 10000
/* Connecting to the controller, within the poll's limit. */
#define CM_CONNECT_TIMEOUT_MS 5000
/* A larger answer is refused (counted as a bad answer): 256 MiB is ~50 KiB per node for 5,000 nodes. */
#define CM_MAX_BODY_BYTES (256u * 1024u * 1024u)
/* Without a terminal, a line at least this often even when nothing changed, seconds. */
#define CM_HEARTBEAT_S 30.0
/* Room for one error's text. */
#define CM_ERROR_BYTES 256
/* Limit of one events fetch (within the poll's limit, when that is smaller), ms. */
#define CM_EVENTS_TIMEOUT_MS 5000

enum cm_result {
    CM_OK,        /* a topology (or "no such data": zero nodes) */
    CM_TRANSPORT, /* no HTTP answer: refused, timed out, reset */
    CM_HTTP,      /* an HTTP status other than 200, 404, or 409 data-missing */
    CM_BODY,      /* a 200 whose body is not a topology (or is too large) */
    CM_RESULT_COUNT,
};

static const char *const result_names[CM_RESULT_COUNT] = {"ok", "transport", "http_status", "bad_answer"};

struct cm_sample {
    double t_s;                         /* the poll's start since the run's start, seconds */
    uint32_t counts[TOPO_STATUS_COUNT]; /* matching nodes by status; valid when result is CM_OK */
    uint32_t absent;                    /* expected minus seen, 0 when as many or more were seen; CM_OK */
    long http_status;                   /* HTTP status of the answer, 0 when none arrived */
    enum cm_result result;              /* how the poll went */
};

struct cm_run {
    const struct stress_options *o;   /* parameters */
    CURL *curl;                       /* one handle for every poll (the connection is reused) */
    struct curl_slist *headers;       /* Accept */
    char *url;                        /* base + CM_TOPOLOGY_PATH, malloc'd */
    char *userpwd;                    /* "user:password", malloc'd */
    char curl_err[CURL_ERROR_SIZE];   /* libcurl's text of the last transport failure */
    struct http_body body;            /* the current answer (CM_MAX_BODY_BYTES); emptied before each poll */
    long poll_timeout_ms;             /* limit of one poll */
    FILE *csv;                        /* --csv, or NULL */
    struct cm_sample *samples;        /* every poll, in order */
    size_t sample_count;              /* entries used */
    size_t sample_cap;                /* entries allocated */
    struct topo_counts last;          /* the last CM_OK poll; valid with have_last */
    int have_last;                    /* 1 once a poll was CM_OK */
    uint32_t max[TOPO_STATUS_COUNT];  /* highest count of each status in a poll */
    uint32_t max_seen;                /* highest matching nodes in a poll */
    uint64_t errors[CM_RESULT_COUNT]; /* failed polls by kind (errors[CM_OK] stays 0) */
    char first_error[CM_ERROR_BYTES]; /* text of the first failed poll, "" when none */
    char prev_error[CM_ERROR_BYTES];  /* text of the previous poll's failure, "" when it was CM_OK */
    double reached_s;                 /* time of the first poll with all connected; valid with reached */
    int reached;                      /* 1 once --device-count nodes were connected */
    double first_seen_s;              /* first poll listing a matching node, < 0 until then */
    double first_connected_s;         /* first poll with a connected node, < 0 until then */
    double elapsed_s;                 /* the run's length, set when it ends */
    monotime_us start_us;             /* when the run's clock started (the first poll) */
    monotime_us end_us;               /* when it stopped: elapsed_s after start_us */
    int tty;                          /* 1 when stderr is a terminal: a progress line there */
    struct cm_sample printed;         /* the last sample printed as a line (no terminal) */
    int have_printed;                 /* 1 once a line was printed */
    uint64_t ignored_max;             /* most nodes without the suffix in a poll */
    uint32_t unknown_max;             /* most nodes without a known status in a poll */
    /* --events */
    int events;             /* 1 with --events: evf and evl are set up */
    struct evw_fetcher evf; /* the fleet's event log, fetched before every poll */
    struct evw_log evl;     /* the events taken and their recovery */
    size_t new_from;        /* evl.tr.events from here on came with the current poll's fetch */
};

static double
since_start_s(monotime_us start_us)
{
    return (double)(loop_clock_monotonic() - start_us) / 1e6;
}

/* The HTTP client: URL, basic authentication, Accept, limits. @return 0 or -1 with a message printed. */
static int
setup_curl(struct cm_run *run)
{
    const struct stress_options *o = run->o;
    size_t base_len = strlen(o->url);
    size_t up_len = strlen(o->username) + 1 + strlen(o->password) + 1;
    long connect_ms;

    while (base_len && o->url[base_len - 1] == '/') {
        base_len--;
    }
    run->url = malloc(base_len + sizeof CM_TOPOLOGY_PATH);
    run->userpwd = malloc(up_len);
    run->headers = curl_slist_append(NULL, CM_ACCEPT_HEADER);
    run->curl = curl_easy_init();
    if (!run->url || !run->userpwd || !run->headers || !run->curl) {
        fprintf(stderr, "fleetsim-stress: cannot set up the HTTP client\n");
        return -1;
    }
    memcpy(run->url, o->url, base_len);
    memcpy(run->url + base_len, CM_TOPOLOGY_PATH, sizeof CM_TOPOLOGY_PATH);
    snprintf(run->userpwd, up_len, "%s:%s", o->username, o->password);
    run->poll_timeout_ms =
        o->msg_timeout_s ? (long)o->msg_timeout_s * 1000 : (long)(o->interval_s * 1000.0) + CM_POLL_MARGIN_MS;
    connect_ms = run->poll_timeout_ms < CM_CONNECT_TIMEOUT_MS ? run->poll_timeout_ms : CM_CONNECT_TIMEOUT_MS;
    if (curl_easy_setopt(run->curl, CURLOPT_URL, run->url) != CURLE_OK ||
        curl_easy_setopt(run->curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC) != CURLE_OK ||
        curl_easy_setopt(run->curl, CURLOPT_USERPWD, run->userpwd) != CURLE_OK ||
        curl_easy_setopt(run->curl, CURLOPT_HTTPHEADER, run->headers) != CURLE_OK ||
        curl_easy_setopt(run->curl, CURLOPT_WRITEFUNCTION, http_body_write) != CURLE_OK ||
        curl_easy_setopt(run->curl, CURLOPT_WRITEDATA, &run->body) != CURLE_OK ||
        curl_easy_setopt(run->curl, CURLOPT_XFERINFOFUNCTION, http_abort_on_signal) != CURLE_OK ||
        curl_easy_setopt(run->curl, CURLOPT_NOPROGRESS, 0L) != CURLE_OK ||
        curl_easy_setopt(run->curl, CURLOPT_ERRORBUFFER, run->curl_err) != CURLE_OK ||
        curl_easy_setopt(run->curl, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
        curl_easy_setopt(run->curl, CURLOPT_CONNECTTIMEOUT_MS, connect_ms) != CURLE_OK ||
        curl_easy_setopt(run->curl, CURLOPT_TIMEOUT_MS, run->poll_timeout_ms) != CURLE_OK ||
        curl_easy_setopt(run->curl, CURLOPT_ACCEPT_ENCODING, "") != CURLE_OK ||
        curl_easy_setopt(run->curl, CURLOPT_USERAGENT, "fleetsim-stress/" FLEETSIM_VERSION) != CURLE_OK) {
        fprintf(stderr, "fleetsim-stress: this libcurl lacks an option controller-mount needs\n");
        return -1;
    }
    return 0;
}

/* One GET of the fleet's new events into the tracker. @return 0, or -1 when memory ran out. */
static int
fetch_events(struct cm_run *run, double t_s)
{
    struct fev_answer a;

    run->new_from = run->evl.tr.event_count;
    if (!evw_fetch(&run->evf, t_s, &a)) {
        return 0;
    }
    return evw_take(&run->evl, &a);
}

/* One GET of the topology into @p s and @p tc; on failure @p err says why. */
static enum cm_result
poll_once(struct cm_run *run, struct cm_sample *s, struct topo_counts *tc, char *err, size_t err_len)
{
    char why[200];
    CURLcode cc;

    http_body_reset(&run->body);
    run->curl_err[0] = '\0';
    memset(tc, 0, sizeof *tc);
    if (run->events) {
        evr_poll_begin(&run->evl.tr); /* before any way to CM_OK: a 404 lists no node connected */
    }
    cc = curl_easy_perform(run->curl);
    s->http_status = 0;
    curl_easy_getinfo(run->curl, CURLINFO_RESPONSE_CODE, &s->http_status);
    if (run->body.too_large) {
        snprintf(err, err_len, "answer larger than %u bytes (HTTP %ld)", CM_MAX_BODY_BYTES, s->http_status);
        return CM_BODY;
    }
    if (cc != CURLE_OK) {
        snprintf(err, err_len, "%s", run->curl_err[0] ? run->curl_err : curl_easy_strerror(cc));
        return CM_TRANSPORT;
    }
    /* No topology yet: RFC 8040 says 404; OpenDaylight answers 409 with error-tag data-missing. */
    if (s->http_status == 404 ||
        (s->http_status == 409 && topo_is_data_missing(http_body_text(&run->body), run->body.buf.len))) {
        return CM_OK;
    }
    if (s->http_status != 200) {
        snprintf(err, err_len, "HTTP %ld", s->http_status);
        return CM_HTTP;
    }
    if (topo_count_each(http_body_text(&run->body), run->body.buf.len, run->o->node_suffix, tc,
                        run->events ? evr_on_node : NULL, &run->evl.tr, why, sizeof why)) {
        snprintf(err, err_len, "bad answer (HTTP 200): %s", why);
        return CM_BODY;
    }
    return CM_OK;
}

static int
same_counts(const struct cm_sample *a, const struct cm_sample *b)
{
    return a->result == b->result && a->http_status == b->http_status && a->absent == b->absent &&
           !memcmp(a->counts, b->counts, sizeof a->counts);
}

/* What a poll shows while the run goes on: a progress line on a terminal, else a line per change. */
static void
show(struct cm_run *run, const struct cm_sample *s, const char *err)
{
    const struct stress_options *o = run->o;
    uint64_t errors = 0;

    for (int i = 0; i < CM_RESULT_COUNT; i++) {
        errors += run->errors[i];
    }
    if (s->result != CM_OK && strcmp(err, run->prev_error)) {
        /* Each new kind of failure once, not every poll of a controller that stays down. */
        fprintf(stderr, "%sfleetsim-stress: poll at %.3f s: %s\n", run->tty ? "\r\033[K" : "", s->t_s, err);
    }
    if (run->tty) {
        if (s->result == CM_OK) {
            fprintf(stderr,
                    "\r%8.1f s  connected %" PRIu32 "/%" PRIu32 "  connecting %" PRIu32 "  failed %" PRIu32
                    "  absent %" PRIu32 "  errors %" PRIu64 "  \033[K",
                    s->t_s, s->counts[TOPO_CONNECTED], o->device_count, s->counts[TOPO_CONNECTING],
                    s->counts[TOPO_FAILED], s->absent, errors);
        }
        return;
    }
    if (s->result != CM_OK) {
        return;
    }
    if (run->have_printed && same_counts(s, &run->printed) && s->t_s - run->printed.t_s < CM_HEARTBEAT_S) {
        return;
    }
    printf("t %.3f s: connected %" PRIu32 " connecting %" PRIu32 " failed %" PRIu32 " absent %" PRIu32
           " (HTTP %ld)\n",
           s->t_s, s->counts[TOPO_CONNECTED], s->counts[TOPO_CONNECTING], s->counts[TOPO_FAILED], s->absent,
           s->http_status);
    fflush(stdout);
    run->printed = *s;
    run->have_printed = 1;
}

/* Keep one poll: the curve, the maxima, the errors, the CSV row. @return 0 or -1 when memory ran out. */
static int
record(struct cm_run *run, struct cm_sample *s, const struct topo_counts *tc, const char *err)
{
    const struct stress_options *o = run->o;

    if (run->sample_count == run->sample_cap) {
        size_t cap = run->sample_cap ? run->sample_cap * 2 : 256;
        struct cm_sample *more = realloc(run->samples, cap * sizeof *more);
        if (!more) {
            return -1;
        }
        run->samples = more;
        run->sample_cap = cap;
    }
    if (s->result == CM_OK) {
        memcpy(s->counts, tc->by_status, sizeof s->counts);
        s->absent = tc->seen < o->device_count ? o->device_count - tc->seen : 0;
        run->last = *tc;
        run->have_last = 1;
        for (int i = 0; i < TOPO_STATUS_COUNT; i++) {
            run->max[i] = tc->by_status[i] > run->max[i] ? tc->by_status[i] : run->max[i];
        }
        run->max_seen = tc->seen > run->max_seen ? tc->seen : run->max_seen;
        run->ignored_max = tc->ignored > run->ignored_max ? tc->ignored : run->ignored_max;
        run->unknown_max = tc->unknown > run->unknown_max ? tc->unknown : run->unknown_max;
        if (tc->seen && run->first_seen_s < 0) {
            run->first_seen_s = s->t_s;
        }
        if (tc->by_status[TOPO_CONNECTED] && run->first_connected_s < 0) {
            run->first_connected_s = s->t_s;
        }
        if (tc->by_status[TOPO_CONNECTED] >= o->device_count && !run->reached) {
            run->reached = 1;
            run->reached_s = s->t_s;
        }
    } else {
        run->errors[s->result]++;
        if (!run->first_error[0]) {
            /* The message is cut to leave room for the time (its start says what failed); gcc's
             * MinSizeRel build, which sees both buffers, warns of an uncut %s. */
            snprintf(run->first_error, sizeof run->first_error, "at %.3f s: %.*s", s->t_s,
                     (int)sizeof run->first_error - 64, err);
        }
    }
    run->samples[run->sample_count++] = *s;
    if (run->csv) {
        if (s->result == CM_OK) {
            fprintf(run->csv, "%.3f,%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%ld", s->t_s,
                    s->counts[TOPO_CONNECTED], s->counts[TOPO_CONNECTING], s->counts[TOPO_FAILED], s->absent,
                    s->http_status);
        } else {
            fprintf(run->csv, "%.3f,,,,,%ld", s->t_s, s->http_status);
        }
        if (run->events) {
            /* The seqs of the events the fetch just before this poll brought, space-separated. */
            fputc(',', run->csv);
            for (size_t i = run->new_from; i < run->evl.tr.event_count; i++) {
                fprintf(run->csv, "%s%" PRIu64, i > run->new_from ? " " : "", run->evl.tr.events[i].ev.seq);
            }
        }
        fputc('\n', run->csv);
        fflush(run->csv); /* a row per poll, for tail -f or a plot while it runs */
    }
    show(run, s, err);
    snprintf(run->prev_error, sizeof run->prev_error, "%s", s->result == CM_OK ? "" : err);
    return 0;
}

/* Poll until all are connected, --timeout passes or a signal arrives. @return 0 or -1 (out of memory). */
static int
poll_loop(struct cm_run *run)
{
    const struct stress_options *o = run->o;
    monotime_us interval_us = (monotime_us)(o->interval_s * 1e6);
    monotime_us start_us = loop_clock_monotonic();
    struct timespec wall;
    monotime_us deadline_us = start_us + (monotime_us)(o->run_timeout_s * 1e6);
    monotime_us next_us = start_us;
    struct topo_counts tc;
    char err[CM_ERROR_BYTES];

    clock_gettime(CLOCK_REALTIME, &wall); /* the fleet's event times are wall-clock */
    evw_log_init(&run->evl, (int64_t)wall.tv_sec * 1000 + wall.tv_nsec / 1000000, run->tty);
    for (;;) {
        struct cm_sample s = {0};
        monotime_us now;

        /* Events first: those that happened before this poll began are known when it is judged. */
        if (run->events && fetch_events(run, since_start_s(start_us))) {
            return -1;
        }
        if (run_interrupted()) {
            break;
        }
        s.t_s = since_start_s(start_us);
        err[0] = '\0';
        s.result = poll_once(run, &s, &tc, err, sizeof err);
        if (run_interrupted()) {
            break; /* a transfer cut short by the signal is not a poll */
        }
        if (run->events && s.result == CM_OK) {
            evr_poll_end(&run->evl.tr, s.t_s);
        }
        if (record(run, &s, &tc, err)) {
            return -1;
        }
        now = loop_clock_monotonic();
        /* With --events the run watches until --timeout: recoveries come after all were connected. */
        if ((run->reached && !run->events) || next_us >= deadline_us || now >= deadline_us) {
            break;
        }
        /* On the grid from the start; grid points a slow poll overran are skipped. */
        do {
            next_us += interval_us;
        } while (next_us < now);
        if (next_us > deadline_us) {
            next_us = deadline_us; /* one last look when the time is up */
        }
        run_sleep_until(next_us);
        if (run_interrupted()) {
            break;
        }
    }
    run->end_us = loop_clock_monotonic();
    run->start_us = start_us;
    run->elapsed_s = (double)(run->end_us - start_us) / 1e6;
    evr_finish(&run->evl.tr);
    return 0;
}

static void
print_not_connected(FILE *f, const struct topo_counts *tc)
{
    for (uint32_t i = 0; i < tc->not_connected_count; i++) {
        fprintf(f, "%s%s (%s)", i ? ", " : "", tc->not_connected[i].id,
                topo_status_name(tc->not_connected[i].status));
    }
    if (tc->by_status[TOPO_CONNECTING] + tc->by_status[TOPO_FAILED] > tc->not_connected_count) {
        fprintf(f, ", ...");
    }
}

static void
print_summary(const struct cm_run *run)
{
    const struct stress_options *o = run->o;
    const struct topo_counts *tc = &run->last;
    uint64_t errors = 0;

    for (int i = 0; i < CM_RESULT_COUNT; i++) {
        errors += run->errors[i];
    }
    printf("fleetsim-stress controller-mount: %" PRIu32 " nodes expected (node-id ending in \"%s\") at %s, "
           "interval %.3f s, timeout %.3f s\n",
           o->device_count, o->node_suffix, o->url, o->interval_s, o->run_timeout_s);
    if (run->reached) {
        printf("all %" PRIu32 " connected after %.3f s\n", o->device_count, run->reached_s);
    } else {
        printf("NOT all %" PRIu32 " connected: gave up after %.3f s%s%s%s\n", o->device_count, run->elapsed_s,
               run_interrupted() ? " (interrupted by " : "", run_interrupted() ? run_interrupted_name() : "",
               run_interrupted() ? ")" : "");
    }
    if (run->first_seen_s >= 0) {
        printf("first node listed after %.3f s", run->first_seen_s);
        if (run->first_connected_s >= 0) {
            printf(", first connected after %.3f s", run->first_connected_s);
        }
        printf("\n");
    }
    if (run->have_last) {
        printf("last answer: connected %" PRIu32 ", connecting %" PRIu32 ", failed %" PRIu32
               ", absent %" PRIu32 ", other nodes ignored %" PRIu32 "\n",
               tc->by_status[TOPO_CONNECTED], tc->by_status[TOPO_CONNECTING], tc->by_status[TOPO_FAILED],
               tc->seen < o->device_count ? o->device_count - tc->seen : 0, tc->ignored);
        if (tc->not_connected_count) {
            printf("not connected: ");
            print_not_connected(stdout, tc);
            printf("\n");
        }
    } else {
        printf("last answer: none (no poll was answered with a topology)\n");
    }
    printf("max: connected %" PRIu32 ", connecting %" PRIu32 ", failed %" PRIu32 ", listed %" PRIu32 "\n",
           run->max[TOPO_CONNECTED], run->max[TOPO_CONNECTING], run->max[TOPO_FAILED], run->max_seen);
    printf("polls %zu, errors %" PRIu64 " (transport %" PRIu64 ", HTTP status %" PRIu64
           ", bad answer %" PRIu64 ")%s%s\n",
           run->sample_count, errors, run->errors[CM_TRANSPORT], run->errors[CM_HTTP], run->errors[CM_BODY],
           run->first_error[0] ? "; first " : "", run->first_error);
    if (run->events) {
        evw_print(&run->evl, &run->evf);
    }
    fflush(stdout);
}

static void
json_seconds_or_null(struct sbuf *b, int valid, double s)
{
    if (valid) {
        sbuf_printf(b, "%.6f", s);
    } else {
        sbuf_adds(b, "null");
    }
}

static int
write_manifest(const struct cm_run *run)
{
    const struct stress_options *o = run->o;
    const struct topo_counts *tc = &run->last;
    struct sbuf b = {0};
    uint64_t errors = 0;
    int rc;

    for (int i = 0; i < CM_RESULT_COUNT; i++) {
        errors += run->errors[i];
    }
    sbuf_adds(&b, "{\"tool\":\"fleetsim-stress\",\"version\":");
    sbuf_add_json(&b, FLEETSIM_VERSION);
    sbuf_adds(&b, ",\"mode\":\"controller-mount\",\"parameters\":{\"url\":");
    sbuf_add_json(&b, o->url);
    sbuf_adds(&b, ",\"topology_url\":");
    sbuf_add_json(&b, run->url);
    sbuf_adds(&b, ",\"username\":");
    sbuf_add_json(&b, o->username);
    sbuf_printf(&b, ",\"device_count\":%" PRIu32 ",\"node_suffix\":", o->device_count);
    sbuf_add_json(&b, o->node_suffix);
    sbuf_printf(&b, ",\"interval_s\":%.6f,\"timeout_s\":%.6f,\"poll_timeout_s\":%.3f,\"events_url\":",
                o->interval_s, o->run_timeout_s, (double)run->poll_timeout_ms / 1e3);
    json_string_or_null(&b, o->events_url);
    sbuf_adds(&b, "},");
    if (run->events) {
        evw_manifest(&b, &run->evl, &run->evf);
    }
    sbuf_adds(&b, "\"results\":{");
    sbuf_printf(&b, "\"all_connected\":%s,\"time_to_all_connected_s\":", run->reached ? "true" : "false");
    json_seconds_or_null(&b, run->reached, run->reached_s);
    sbuf_adds(&b, ",\"first_listed_s\":");
    json_seconds_or_null(&b, run->first_seen_s >= 0, run->first_seen_s);
    sbuf_adds(&b, ",\"first_connected_s\":");
    json_seconds_or_null(&b, run->first_connected_s >= 0, run->first_connected_s);
    sbuf_printf(&b, ",\"elapsed_s\":%.6f,\"interrupted\":", run->elapsed_s);
    json_string_or_null(&b, run_interrupted_name());
    sbuf_printf(&b, ",\"polls\":%zu,\"errors\":%" PRIu64, run->sample_count, errors);
    for (int i = CM_TRANSPORT; i < CM_RESULT_COUNT; i++) {
        sbuf_printf(&b, ",\"errors_%s\":%" PRIu64, result_names[i], run->errors[i]);
    }
    sbuf_adds(&b, ",\"first_error\":");
    json_string_or_null(&b, run->first_error);
    if (run->have_last) {
        sbuf_printf(&b,
                    ",\"last\":{\"connected\":%" PRIu32 ",\"connecting\":%" PRIu32 ",\"failed\":%" PRIu32
                    ",\"absent\":%" PRIu32 ",\"listed\":%" PRIu32 ",\"ignored\":%" PRIu32
                    ",\"unknown_status\":%" PRIu32 "}",
                    tc->by_status[TOPO_CONNECTED], tc->by_status[TOPO_CONNECTING], tc->by_status[TOPO_FAILED],
                    tc->seen < o->device_count ? o->device_count - tc->seen : 0, tc->seen, tc->ignored,
                    tc->unknown);
    } else {
        sbuf_adds(&b, ",\"last\":null");
    }
    sbuf_printf(&b,
                ",\"max\":{\"connected\":%" PRIu32 ",\"connecting\":%" PRIu32 ",\"failed\":%" PRIu32
                ",\"listed\":%" PRIu32 ",\"ignored\":%" PRIu64 ",\"unknown_status\":%" PRIu32 "}",
                run->max[TOPO_CONNECTED], run->max[TOPO_CONNECTING], run->max[TOPO_FAILED], run->max_seen,
                run->ignored_max, run->unknown_max);
    sbuf_adds(&b, ",\"not_connected\":[");
    for (uint32_t i = 0; run->have_last && i < tc->not_connected_count; i++) {
        sbuf_adds(&b, i ? ",{\"node_id\":" : "{\"node_id\":");
        sbuf_add_json(&b, tc->not_connected[i].id);
        sbuf_printf(&b, ",\"status\":\"%s\"}", topo_status_name(tc->not_connected[i].status));
    }
    sbuf_adds(&b, "]},\"curve\":[");
    for (size_t i = 0; i < run->sample_count; i++) {
        const struct cm_sample *s = &run->samples[i];
        sbuf_printf(&b, "%s{\"t_s\":%.6f,", i ? "," : "", s->t_s);
        if (s->result == CM_OK) {
            sbuf_printf(&b,
                        "\"connected\":%" PRIu32 ",\"connecting\":%" PRIu32 ",\"failed\":%" PRIu32
                        ",\"absent\":%" PRIu32 ",",
                        s->counts[TOPO_CONNECTED], s->counts[TOPO_CONNECTING], s->counts[TOPO_FAILED],
                        s->absent);
        } else {
            sbuf_adds(&b, "\"connected\":null,\"connecting\":null,\"failed\":null,\"absent\":null,");
        }
        sbuf_printf(&b, "\"http_status\":%ld,\"result\":\"%s\"}", s->http_status, result_names[s->result]);
    }
    sbuf_adds(&b, "]}");
    rc = b.failed ? -1 : run_manifest_write(o->json_path, &b, run->start_us, run->end_us);
    sbuf_free(&b);
    return rc;
}

int
cmount_run(const struct stress_options *o)
{
    struct cm_run run = {.o = o, .first_seen_s = -1, .first_connected_s = -1, .body.max = CM_MAX_BODY_BYTES};
    int curl_ready = 0;
    int connected_ok;
    int rc = 2;

    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fprintf(stderr, "fleetsim-stress: libcurl cannot start\n");
        return 2;
    }
    curl_ready = 1;
    run.tty = isatty(STDERR_FILENO);
    if (setup_curl(&run)) {
        goto cleanup;
    }
    if (o->events_url) {
        long limit_ms =
            run.poll_timeout_ms < CM_EVENTS_TIMEOUT_MS ? run.poll_timeout_ms : CM_EVENTS_TIMEOUT_MS;
        if (evw_fetcher_init(&run.evf, o->events_url, o->events_token_file, limit_ms, run.tty)) {
            goto cleanup;
        }
        run.events = 1;
    }
    if (o->csv_path) {
        run.csv = fopen(o->csv_path, "w");
        if (!run.csv) {
            fprintf(stderr, "fleetsim-stress: cannot write \"%s\": %s\n", o->csv_path, strerror(errno));
            goto cleanup;
        }
        fputs(o->events_url ? "t_s,connected,connecting,failed,absent,http_status,events\n"
                            : "t_s,connected,connecting,failed,absent,http_status\n",
              run.csv);
    }
    /* No loop: the signal cuts the sleep (nanosleep) or the transfer (http_abort_on_signal) short. */
    run_signals_catch(NULL);
    rc = poll_loop(&run);
    if (run.tty) {
        fprintf(stderr, "\r\033[K");
    }
    if (rc) {
        fprintf(stderr, "fleetsim-stress: FAILED: out of memory for the curve\n");
        rc = 1;
        goto cleanup;
    }
    print_summary(&run);
    rc = 0;
    if (run.csv && (ferror(run.csv) || fclose(run.csv))) {
        fprintf(stderr, "fleetsim-stress: FAILED: cannot write %s\n", o->csv_path);
        rc = 1;
    }
    run.csv = NULL;
    if (o->json_path && write_manifest(&run)) {
        fprintf(stderr, "fleetsim-stress: FAILED: cannot write %s: %s\n", o->json_path, strerror(errno));
        rc = 1;
    }
    /* With --events: all connected at the end (the last answered poll), and every loss healed. */
    connected_ok =
        o->events_url ? run.have_last && run.last.by_status[TOPO_CONNECTED] >= o->device_count : run.reached;
    if (evw_report_unhealed(&run.evl)) {
        rc = 1;
    }
    if (!connected_ok) {
        const struct topo_counts *tc = &run.last;
        fprintf(stderr, "fleetsim-stress: FAILED: %s%s%s%" PRIu32 " of %" PRIu32 " connected %s %.3f s",
                run_interrupted() ? "interrupted by " : "", run_interrupted() ? run_interrupted_name() : "",
                run_interrupted() ? ": " : "", run.have_last ? tc->by_status[TOPO_CONNECTED] : 0,
                o->device_count, o->events_url ? "at the end, after" : "after", run.elapsed_s);
        if (run.have_last) {
            fprintf(stderr, " (connecting %" PRIu32 ", failed %" PRIu32 ", absent %" PRIu32 ")",
                    tc->by_status[TOPO_CONNECTING], tc->by_status[TOPO_FAILED],
                    tc->seen < o->device_count ? o->device_count - tc->seen : 0);
            if (tc->not_connected_count) {
                fprintf(stderr, "; not connected: ");
                print_not_connected(stderr, tc);
            }
        } else {
            fprintf(stderr, "; the controller never answered with a topology");
        }
        fprintf(stderr, "\n");
        rc = 1;
    }

cleanup:
    rc = run_signals_release(rc);
    if (run.csv) {
        fclose(run.csv);
    }
    free(run.samples);
    sbuf_free(&run.body.buf);
    evw_log_free(&run.evl);
    evw_fetcher_close(&run.evf);
    curl_easy_cleanup(run.curl);
    curl_slist_free_all(run.headers);
    free(run.url);
    free(run.userpwd);
    if (curl_ready) {
        curl_global_cleanup();
    }
    return rc;
}
