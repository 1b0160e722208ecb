/*
 * The live page's sampler and its JSON; see live.h. The sampler thread
 * wakes every LIVE_SAMPLE_INTERVAL_MS on a monotonic deadline (a late
 * sample moves the next deadline on, so samples are never bunched up),
 * makes one gathering through the workers (metrics_gather_states: the
 * totals and each group's devices by state, one trip) and pushes one
 * struct rate_sample into the ring. At 10,000 devices that gathering costs
 * the fleet well under a millisecond a second (bench/RESULTS.md).
 */
#include "live.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device.h"
#include "log.h"
#include "metrics_gather.h"
#include "rate_ring.h"
#include "sbuf.h"

/* The live view's state, owned by the metrics server. */
struct live {
    struct fleet *fleet;             /* the fleet sampled */
    struct rate_ring ring;           /* the last RATE_RING_CAPACITY samples */
    pthread_mutex_t lock;            /* guards stop and group_states */
    pthread_cond_t cond;             /* signalled by live_free() to stop the sampler (monotonic clock) */
    int stop;                        /* 1: the sampler ends */
    int started;                     /* 1 once the sampler thread runs */
    pthread_t thread;                /* the sampler */
    uint32_t *group_states;          /* group_count x 4: the latest sample's devices by group and state */
    uint32_t *gather_states;         /* the sampler's scratch of the same size */
    struct rate_sample *scratch;     /* RATE_RING_CAPACITY samples; the HTTP thread's, for one reply */
    char *page;                      /* the page, or NULL when Chart.js could not be read */
    size_t page_len;                 /* its length */
    struct MHD_Response *page_reply; /* one response over page, queued for every GET / */
    char page_err[512];              /* why there is no page */
};

/* Column names of struct rate_sample, in member order (all uint64_t). */
static const char *const columns[] = {
    "seq",           "t_ms",          "sessions_tcp",  "sessions_ssh",  "sessions_tls",
    "rpcs",          "rpc_errors",    "snmp_requests", "notifications", "traps",
    "auth_failures", "session_drops", "notif_drops",   "snmp_drops",    "up",
    "down",          "rebooting",     "absent"};
#define COLUMN_COUNT (sizeof columns / sizeof columns[0])
_Static_assert(sizeof(struct rate_sample) == COLUMN_COUNT * sizeof(uint64_t), "a column per member");

static const char *const state_names[4] = {"up", "down", "rebooting", "absent"};

static uint64_t
wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* One gathering into one sample; @return 0, or -1 when the workers did not answer. */
static int
sample_once(struct live *lv)
{
    const struct fleet *fleet = lv->fleet;
    size_t cells = (size_t)fleet->group_count * 4u;
    struct metrics_snapshot snap;
    const struct metrics_sums *s = &snap.sums;
    struct rate_sample r = {0};

    if (metrics_gather_states(lv->fleet, &snap, lv->gather_states)) {
        return -1;
    }
    r.t_ms = wall_ms();
    r.sessions_ssh = s->ssh_sessions_open;
    r.sessions_tls = s->tls_sessions_open;
    r.sessions_tcp = s->sessions_open - s->ssh_sessions_open - s->tls_sessions_open;
    r.rpcs = s->rpcs_received;
    r.rpc_errors = s->rpc_errors;
    r.snmp_requests = s->snmp_in_pkts;
    r.notifications = s->notif[1];
    r.traps = s->traps[1];
    /* As fleetsim_ssh_auth_failures_total, fleetsim_tls_handshake_failures_total and
     * fleetsim_snmp_auth_failures_total. */
    r.auth_failures = s->ssh_auth_failures + metrics_tls_refused(s) + s->snmp_bad_communities +
                      s->snmp_bad_uses + s->snmp_denied_v3_sets + s->snmp_usm[3] + s->snmp_usm[5];
    r.session_drops = s->sessions_dropped;
    r.notif_drops = s->notif[3] + s->traps[3];
    r.snmp_drops = s->snmp_bad_versions + s->snmp_parse_errors + s->snmp_bad_communities +
                   s->snmp_silent_drops + s->snmp_injected_drops;
    for (size_t c = 0; c < cells; c++) {
        r.states[c % 4] += lv->gather_states[c];
    }
    metrics_snapshot_clear(&snap);
    pthread_mutex_lock(&lv->lock);
    memcpy(lv->group_states, lv->gather_states, cells * sizeof *lv->group_states);
    pthread_mutex_unlock(&lv->lock);
    rate_ring_push(&lv->ring, &r);
    return 0;
}

static void
add_ms(struct timespec *t, long ms)
{
    t->tv_nsec += ms * 1000000L;
    t->tv_sec += t->tv_nsec / 1000000000L;
    t->tv_nsec %= 1000000000L;
}

static void *
sampler(void *arg)
{
    struct live *lv = arg;
    struct timespec next, now;
    int warned = 0;

    clock_gettime(CLOCK_MONOTONIC, &next);
    pthread_mutex_lock(&lv->lock);
    while (!lv->stop) {
        add_ms(&next, LIVE_SAMPLE_INTERVAL_MS);
        while (!lv->stop && pthread_cond_timedwait(&lv->cond, &lv->lock, &next) != ETIMEDOUT) {
        }
        if (lv->stop) {
            break;
        }
        pthread_mutex_unlock(&lv->lock);
        if (sample_once(lv) && !warned) {
            log_warn("live view: the workers did not answer within %d ms; that second has no sample",
                     METRICS_GATHER_TIMEOUT_MS);
            warned = 1;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > next.tv_sec + 1) {
            next = now; /* fell behind (a slow gathering): the next sample one interval from now */
        }
        pthread_mutex_lock(&lv->lock);
    }
    pthread_mutex_unlock(&lv->lock);
    return NULL;
}

struct live *
live_start(struct fleet *fleet)
{
    struct live *lv = calloc(1, sizeof *lv);
    size_t cells = (size_t)fleet->group_count * 4u;
    pthread_condattr_t attr;

    if (!lv) {
        return NULL;
    }
    lv->fleet = fleet;
    rate_ring_init(&lv->ring);
    pthread_mutex_init(&lv->lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&lv->cond, &attr);
    pthread_condattr_destroy(&attr);
    if (!(lv->group_states = calloc(cells ? cells : 1, sizeof *lv->group_states)) ||
        !(lv->gather_states = calloc(cells ? cells : 1, sizeof *lv->gather_states)) ||
        !(lv->scratch = malloc(RATE_RING_CAPACITY * sizeof *lv->scratch))) {
        live_free(lv);
        return NULL;
    }
    if ((lv->page = live_page_build(&lv->page_len, lv->page_err, sizeof lv->page_err))) {
        lv->page_reply = MHD_create_response_from_buffer(lv->page_len, lv->page, MHD_RESPMEM_PERSISTENT);
        if (lv->page_reply) {
            MHD_add_response_header(lv->page_reply, MHD_HTTP_HEADER_CONTENT_TYPE, "text/html; charset=utf-8");
            MHD_add_response_header(lv->page_reply, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
        }
    } else {
        log_warn("live page: %s; / answers 503, /live.json and /metrics work", lv->page_err);
    }
    /* The first sample now, so that the page and the JSON never start empty. */
    if (sample_once(lv)) {
        log_warn("live view: the workers did not answer the first sample within %d ms",
                 METRICS_GATHER_TIMEOUT_MS);
    }
    if (pthread_create(&lv->thread, NULL, sampler, lv)) {
        live_free(lv);
        return NULL;
    }
    lv->started = 1;
    return lv;
}

void
live_free(struct live *lv)
{
    if (!lv) {
        return;
    }
    if (lv->started) {
        pthread_mutex_lock(&lv->lock);
        lv->stop = 1;
        pthread_cond_signal(&lv->cond);
        pthread_mutex_unlock(&lv->lock);
        pthread_join(lv->thread, NULL);
    }
    if (lv->page_reply) {
        MHD_destroy_response(lv->page_reply);
    }
    free(lv->page);
    free(lv->scratch);
    free(lv->gather_states);
    free(lv->group_states);
    pthread_cond_destroy(&lv->cond);
    pthread_mutex_destroy(&lv->lock);
    rate_ring_close(&lv->ring);
    free(lv);
}

const char *
live_page_text(const struct live *lv)
{
    return lv->page;
}

/* ------------------------------------------------------------------ HTTP */

/* Decimal @p v appended (by hand: a full reply is 15,000 numbers). */
static void
add_u64(struct sbuf *out, uint64_t v)
{
    char num[24], *p = num + sizeof num;

    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    sbuf_add(out, p, (size_t)(num + sizeof num - p));
}

static enum MHD_Result
queue(struct MHD_Connection *conn, unsigned status, const char *type, struct sbuf *out)
{
    size_t len = 0;
    char *body = sbuf_take(out, &len);
    struct MHD_Response *r;
    enum MHD_Result rc;

    if (!body) {
        return MHD_NO;
    }
    if (!(r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE))) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    rc = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result
reply_error(struct MHD_Connection *conn, unsigned status, const char *msg)
{
    struct sbuf out = {0};

    sbuf_adds(&out, "{\"error\":");
    sbuf_add_json(&out, msg);
    sbuf_adds(&out, "}\n");
    return queue(conn, status, "application/json", &out);
}

static void
sample_array(struct sbuf *out, const struct rate_sample *s)
{
    const uint64_t *v = (const uint64_t *)s;

    sbuf_add(out, "[", 1);
    for (size_t c = 0; c < COLUMN_COUNT; c++) {
        if (c) {
            sbuf_add(out, ",", 1);
        }
        add_u64(out, v[c]);
    }
    sbuf_add(out, "]", 1);
}

static enum MHD_Result
get_json(struct live *lv, struct MHD_Connection *conn)
{
    const struct fleet *fleet = lv->fleet;
    const char *since_text = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "since");
    uint64_t since = 0;
    uint32_t n, last;
    struct sbuf out = {0};
    const uint64_t *now;

    if (since_text) {
        char *end;
        errno = 0;
        since = strtoull(since_text, &end, 10);
        if (!*since_text || *end || errno || *since_text == '-') {
            return reply_error(conn, MHD_HTTP_BAD_REQUEST,
                               "since: expected a sample's seq, a whole number from 0 (all samples held)");
        }
    }
    /* The newest sample is always returned as "now", so ask for everything after since or the newest. */
    n = rate_ring_since(&lv->ring, 0, lv->scratch);
    if (!n) {
        return reply_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "no sample yet: the workers did not answer");
    }
    last = n - 1;
    now = (const uint64_t *)&lv->scratch[last];
    sbuf_reserve(&out, 4096 + (size_t)n * COLUMN_COUNT * 8);
    sbuf_adds(&out, "{\"interval_ms\":");
    add_u64(&out, LIVE_SAMPLE_INTERVAL_MS);
    sbuf_adds(&out, ",\"capacity\":");
    add_u64(&out, RATE_RING_CAPACITY);
    sbuf_adds(&out, ",\"devices\":");
    add_u64(&out, fleet->cfg.device_count);
    sbuf_adds(&out, ",\"now\":{");
    for (size_t c = 0; c < COLUMN_COUNT; c++) {
        sbuf_adds(&out, c ? ",\"" : "\"");
        sbuf_adds(&out, columns[c]);
        sbuf_adds(&out, "\":");
        add_u64(&out, now[c]);
    }
    sbuf_adds(&out, "},\"groups\":[");
    pthread_mutex_lock(&lv->lock);
    for (uint32_t g = 0; g < fleet->group_count; g++) {
        sbuf_adds(&out, g ? ",{\"name\":" : "{\"name\":");
        sbuf_add_json(&out, fleet->groups[g].name);
        sbuf_adds(&out, ",\"type\":");
        sbuf_add_json(&out, fleet->groups[g].type->name);
        sbuf_adds(&out, ",\"devices\":");
        add_u64(&out, fleet->groups[g].cfg.device_count);
        for (int k = 0; k < 4; k++) {
            sbuf_adds(&out, ",\"");
            sbuf_adds(&out, state_names[k]);
            sbuf_adds(&out, "\":");
            add_u64(&out, lv->group_states[g * 4u + (unsigned)k]);
        }
        sbuf_adds(&out, "}");
    }
    pthread_mutex_unlock(&lv->lock);
    sbuf_adds(&out, "],\"columns\":[");
    for (size_t c = 0; c < COLUMN_COUNT; c++) {
        sbuf_adds(&out, c ? ",\"" : "\"");
        sbuf_adds(&out, columns[c]);
        sbuf_adds(&out, "\"");
    }
    sbuf_adds(&out, "],\"samples\":[");
    for (uint32_t i = 0, first = 1; i < n; i++) {
        if (lv->scratch[i].seq <= since) {
            continue;
        }
        if (!first) {
            sbuf_add(&out, ",", 1);
        }
        first = 0;
        sample_array(&out, &lv->scratch[i]);
    }
    sbuf_adds(&out, "]}\n");
    if (out.failed) {
        sbuf_free(&out);
        return reply_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    }
    return queue(conn, MHD_HTTP_OK, "application/json", &out);
}

enum MHD_Result
live_handle(struct live *lv, struct MHD_Connection *conn, const char *url, int *handled)
{
    *handled = 1;
    if (!strcmp(url, "/live.json")) {
        return get_json(lv, conn);
    }
    if (!strcmp(url, "/")) {
        struct sbuf out = {0};
        if (lv->page_reply) {
            return MHD_queue_response(conn, MHD_HTTP_OK, lv->page_reply);
        }
        sbuf_printf(&out, "the live page is not available: %s\n", lv->page_err);
        return queue(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain; charset=utf-8", &out);
    }
    *handled = 0;
    return MHD_NO;
}
