/*
 * The control API; see control_api.h. A request is parsed and checked
 * whole on libmicrohttpd's thread before anything is done, so bad input
 * changes nothing. Then one message goes to each worker's inbox with the
 * list of devices and the action (as metrics.c gathers counters): each
 * worker acts on its own devices only, and the HTTP thread waits for all,
 * bounded by METRICS_GATHER_TIMEOUT_MS. The job is reference-counted, so a
 * worker that finishes after the caller gave up writes into live memory.
 */
#include "control_api.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "action_log.h"
#include "action_params.h"
#include "capi_target.h"
#include "device_actions.h"
#include "fanout.h"
#include "json_read.h"
#include "sbuf.h"
#include "session.h"
#include "ydata.h"

/* One request's state between libmicrohttpd's calls. */
struct capi_request {
    struct sbuf body; /* the body so far */
    int too_big;      /* 1 once it passed CAPI_MAX_BODY_BYTES (the rest is discarded) */
};

/* What a worker reads of one device for a GET. */
struct capi_device_read {
    uint8_t state;    /* 0 up, 1 down, 2 rebooting */
    uint8_t mode;     /* enum devact_down_mode */
    uint8_t frozen;   /* sessions frozen */
    uint32_t open;    /* sessions open */
    uint64_t boot_ms; /* its boot time (fleet clock) */
};

/* One trip through the workers; freed by whoever drops the last reference. */
struct capi_job {
    struct fleet *fleet;            /* the fleet */
    const uint32_t *idx;            /* devices (sorted), owned */
    uint32_t count;                 /* entries in idx */
    int act;                        /* 1: apply params, 0: read into reads */
    struct devact_params params;    /* the action */
    struct capi_device_read *reads; /* count entries when reading */
    uint32_t *failed;               /* per worker: devices it could not act on */
    struct fanout f;                /* the trip to every worker */
};

#define JOB_OF(fo) ((struct capi_job *)((char *)(fo)-offsetof(struct capi_job, f)))

static void
job_free(struct fanout *f)
{
    struct capi_job *job = JOB_OF(f);

    free((void *)job->idx);
    free(job->reads);
    free(job->failed);
    free(job);
}

static void
job_unref(struct capi_job *job)
{
    fanout_unref(&job->f);
}

static void
read_device(const struct device *dev, struct capi_device_read *r)
{
    uint32_t open = 0;

    for (const struct session *s = dev->sessions; s; s = s->dev_next) {
        open += s->state < SESS_DEAD;
    }
    r->open = open;
    r->state = !dev->ctl || !dev->ctl->down ? 0 : dev->ctl->rebooting ? 2 : 1;
    r->mode = dev->ctl ? dev->ctl->down : 0;
    r->frozen = dev->ctl ? dev->ctl->frozen : 0;
    r->boot_ms = dev->boot_ms;
}

static void
on_worker(struct fanout *f, uint32_t worker)
{
    struct capi_job *job = JOB_OF(f);
    struct fleet *fleet = job->fleet;
    uint32_t threads = fleet->cfg.threads;

    for (uint32_t k = 0; k < job->count; k++) {
        struct device *dev = &fleet->devices[job->idx[k]];
        if (job->idx[k] % threads != worker) {
            continue;
        }
        if (job->act) {
            job->failed[worker] += devact_apply(dev, &job->params) ? 1u : 0u;
        } else {
            read_device(dev, &job->reads[k]);
        }
    }
}

/*
 * Run @p job on every worker and wait. Takes ownership of @p job's idx.
 * @return 0 when every worker finished (then *failed is their failure count), -1 when one did not in time.
 */
static int
run_job(struct capi_job *job, uint32_t *failed)
{
    uint32_t threads = job->fleet->cfg.threads;

    if (!fanout_run(&job->f, job->fleet, METRICS_GATHER_TIMEOUT_MS, on_worker, job_free)) {
        return -1;
    }
    *failed = 0;
    for (uint32_t i = 0; i < threads; i++) {
        *failed += job->failed[i];
    }
    return 0;
}

static struct capi_job *
job_new(struct fleet *fleet, uint32_t *idx, uint32_t count, int act)
{
    struct capi_job *job = calloc(1, sizeof *job);

    if (!job || !(job->failed = calloc(fleet->cfg.threads, sizeof *job->failed)) ||
        (!act && !(job->reads = calloc(count ? count : 1, sizeof *job->reads)))) {
        if (job) {
            free(job->failed);
        }
        free(job);
        free(idx);
        return NULL;
    }
    job->fleet = fleet;
    job->idx = idx;
    job->count = count;
    job->act = act;
    return job;
}

/* ------------------------------------------------------------------ answers */

static void
json_str(struct sbuf *out, const char *s)
{
    sbuf_add(out, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            sbuf_printf(out, "\\%c", c);
        } else if (c < 0x20) {
            sbuf_printf(out, "\\u%04x", c);
        } else {
            sbuf_add(out, s, 1);
        }
    }
    sbuf_add(out, "\"", 1);
}

static enum MHD_Result
send_json(struct MHD_Connection *conn, unsigned status, struct sbuf *out)
{
    size_t len = 0;
    char *body;
    struct MHD_Response *r;
    enum MHD_Result rc;

    sbuf_add(out, "\n", 1);
    if (!(body = sbuf_take(out, &len))) {
        return MHD_NO;
    }
    if (!(r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE))) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED) {
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, POST");
    } else if (status == MHD_HTTP_UNAUTHORIZED) {
        MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    }
    rc = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result send_error(struct MHD_Connection *conn, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static enum MHD_Result
send_error(struct MHD_Connection *conn, unsigned status, const char *fmt, ...)
{
    struct sbuf out = {0};
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sbuf_adds(&out, "{\"error\":");
    json_str(&out, msg);
    sbuf_adds(&out, "}");
    return send_json(conn, status, &out);
}

static void
ipv4_text(uint32_t addr, char *buf, size_t len)
{
    struct in_addr a = {.s_addr = htonl(addr)};

    inet_ntop(AF_INET, &a, buf, (socklen_t)len);
}

static const char *const state_names[3] = {"up", "down", "rebooting"};
static const char *const mode_names[3] = {"", "refuse", "blackhole"};

/* ------------------------------------------------------------------ GET */

static enum MHD_Result
get_fleet(struct fleet *fleet, struct MHD_Connection *conn)
{
    uint32_t n = fleet->cfg.device_count, failed, by_state[3] = {0};
    uint64_t open = 0;
    uint32_t *idx = malloc((n ? n : 1) * sizeof *idx);
    struct capi_job *job;
    struct sbuf out = {0};
    char addr[INET_ADDRSTRLEN];

    if (!idx) {
        return send_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    }
    for (uint32_t i = 0; i < n; i++) {
        idx[i] = i;
    }
    if (!(job = job_new(fleet, idx, n, 0))) {
        return send_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    }
    if (run_job(job, &failed)) {
        job_unref(job);
        return send_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "the workers did not answer in time");
    }
    for (uint32_t i = 0; i < n; i++) {
        by_state[job->reads[i].state]++;
        open += job->reads[i].open;
    }
    job_unref(job);
    sbuf_printf(&out, "{\"devices\":%" PRIu32 ",\"groups\":[", n);
    for (uint32_t g = 0; g < fleet->group_count; g++) {
        const struct device_group *grp = &fleet->groups[g];
        const struct device *d0 = &fleet->devices[grp->first];
        const struct device *dl = &fleet->devices[grp->first + grp->cfg.device_count - 1];
        sbuf_adds(&out, g ? ",{\"name\":" : "{\"name\":");
        json_str(&out, grp->name);
        sbuf_adds(&out, ",\"type\":");
        json_str(&out, grp->type->name);
        sbuf_printf(&out, ",\"first\":%" PRIu32 ",\"last\":%" PRIu32 ",\"count\":%" PRIu32, grp->first,
                    grp->first + grp->cfg.device_count - 1, grp->cfg.device_count);
        ipv4_text(d0->addr, addr, sizeof addr);
        sbuf_printf(&out, ",\"address_first\":\"%s\"", addr);
        ipv4_text(dl->addr, addr, sizeof addr);
        sbuf_printf(&out, ",\"address_last\":\"%s\",\"netconf_port_first\":%u,\"netconf_port_last\":%u}",
                    addr, (unsigned)d0->port, (unsigned)dl->port);
    }
    sbuf_printf(&out,
                "],\"states\":{\"up\":%" PRIu32 ",\"down\":%" PRIu32 ",\"rebooting\":%" PRIu32
                "},\"sessions_open\":%" PRIu64 "}",
                by_state[0], by_state[1], by_state[2], open);
    return send_json(conn, MHD_HTTP_OK, &out);
}

static enum MHD_Result
get_device(struct fleet *fleet, struct MHD_Connection *conn, const char *which)
{
    uint32_t first, last, failed, *idx;
    struct capi_job *job;
    struct capi_device_read r;
    const struct device *dev;
    struct sbuf out = {0};
    char addr[INET_ADDRSTRLEN], boot[40];
    int rc = capi_parse_range(which, fleet->cfg.device_count, &first, &last);

    if (rc == -2) {
        return send_error(conn, MHD_HTTP_NOT_FOUND,
                          "no device %s: the fleet has %" PRIu32 " (0 to %" PRIu32 ")", which,
                          fleet->cfg.device_count, fleet->cfg.device_count - 1);
    }
    if (rc || first != last) {
        return send_error(conn, MHD_HTTP_BAD_REQUEST, "\"%s\" is not a device index", which);
    }
    if (!(idx = malloc(sizeof *idx))) {
        return send_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    }
    *idx = first;
    if (!(job = job_new(fleet, idx, 1, 0))) {
        return send_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    }
    if (run_job(job, &failed)) {
        job_unref(job);
        return send_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "the workers did not answer in time");
    }
    r = job->reads[0];
    job_unref(job);
    dev = &fleet->devices[first];
    ipv4_text(dev->addr, addr, sizeof addr);
    ydata_datetime(r.boot_ms, boot, sizeof boot);
    sbuf_printf(&out, "{\"index\":%" PRIu32 ",\"group\":", first);
    json_str(&out, dev->group->name);
    sbuf_adds(&out, ",\"type\":");
    json_str(&out, dev->type->name);
    sbuf_printf(&out, ",\"address\":\"%s\",\"netconf_port\":%u,\"snmp_port\":", addr, (unsigned)dev->port);
    if (dev->group->cfg.snmp) {
        unsigned snmp_port = dev->group->cfg.ip_per_device
                                 ? dev->group->cfg.snmp_starting_port
                                 : dev->group->cfg.snmp_starting_port + (first - dev->group->first);
        sbuf_printf(&out, "%u", snmp_port);
    } else {
        sbuf_adds(&out, "null");
    }
    sbuf_printf(&out, ",\"state\":\"%s\",\"sessions_open\":%" PRIu32 ",\"boot_time\":\"%s\"",
                state_names[r.state], r.open, boot);
    if (r.mode) {
        sbuf_printf(&out, ",\"down_mode\":\"%s\",\"sessions\":\"%s\"", mode_names[r.mode],
                    r.frozen ? "freeze" : "reset");
    }
    sbuf_adds(&out, "}");
    return send_json(conn, MHD_HTTP_OK, &out);
}

/* ------------------------------------------------------------------ POST */

static enum MHD_Result
post_action(struct fleet *fleet, struct MHD_Connection *conn, const char *url, const char *body_text,
            size_t body_len)
{
    char target[256], err[300];
    const char *rest, *slash, *action, *problem;
    uint32_t first = 0, last = 0, failed = 0, count = 0, *idx = NULL;
    struct jsonr_value *body = NULL;
    const struct jsonr_value *v;
    struct devact_params params;
    double share = 1.0;
    uint64_t seed = fleet->cfg.seed;
    int kind = -1, is_group = 0;
    struct capi_job *job;
    struct sbuf out = {0};
    enum MHD_Result rc;

    if (!strncmp(url, "/api/v1/devices/", 16)) {
        rest = url + 16;
    } else {
        rest = url + 15; /* "/api/v1/groups/" */
        is_group = 1;
    }
    if (!(slash = strchr(rest, '/')) || (size_t)(slash - rest) >= sizeof target || slash == rest ||
        strchr(slash + 1, '/')) {
        return send_error(conn, MHD_HTTP_NOT_FOUND, "expected POST /api/v1/%s/%s/ACTION",
                          is_group ? "groups" : "devices", is_group ? "NAME" : "N[-M]");
    }
    memcpy(target, rest, (size_t)(slash - rest));
    target[slash - rest] = '\0';
    action = slash + 1;
    for (int k = 0; k < DEVACT_KINDS; k++) {
        if (!strcmp(action, action_log_kind_name((enum devact_kind)k))) {
            kind = k;
        }
    }
    if (kind >= DEVACT_GROW) {
        kind = -1; /* named, not served yet */
    }
    if (kind < 0) {
        return send_error(conn, MHD_HTTP_NOT_FOUND,
                          "unknown action \"%s\": kill-sessions, down, up, reboot, latency or drop-rate",
                          action);
    }
    if (is_group) {
        uint32_t g = 0;
        for (; g < fleet->group_count && strcmp(fleet->groups[g].name, target); g++) {
        }
        if (g == fleet->group_count) {
            return send_error(conn, MHD_HTTP_NOT_FOUND, "no group \"%s\"", target);
        }
        first = fleet->groups[g].first;
        last = first + fleet->groups[g].cfg.device_count - 1;
    } else {
        int r = capi_parse_range(target, fleet->cfg.device_count, &first, &last);
        if (r == -2) {
            return send_error(conn, MHD_HTTP_NOT_FOUND,
                              "devices %s: past the fleet's %" PRIu32 " devices (0 to %" PRIu32 ")", target,
                              fleet->cfg.device_count, fleet->cfg.device_count - 1);
        }
        if (r) {
            return send_error(conn, MHD_HTTP_BAD_REQUEST, "\"%s\" is not a device index or range N-M",
                              target);
        }
    }
    if (body_len && jsonr_parse(body_text, body_len, &body, err, sizeof err)) {
        return send_error(conn, MHD_HTTP_BAD_REQUEST, "the body is not JSON: %s", err);
    }
    if (body && body->type != JSONR_OBJECT) {
        jsonr_free(body);
        return send_error(conn, MHD_HTTP_BAD_REQUEST, "the body must be a JSON object");
    }
    if (!body && jsonr_parse("{}", 2, &body, err, sizeof err)) {
        return send_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    }
    problem = action_params_parse((enum devact_kind)kind, body, &params, err, sizeof err);
    if (!problem && (v = jsonr_get(body, "share")) &&
        (v->type != JSONR_NUMBER || !(v->num > 0 && v->num <= 1) || ((share = v->num), 0))) {
        problem = "share must be a number above 0 and at most 1";
    }
    if (!problem && jsonr_get(body, "seed") && jsonr_get_u64(body, "seed", &seed)) {
        problem = "seed must be an unsigned integer";
    }
    jsonr_free(body);
    if (problem) {
        return send_error(conn, MHD_HTTP_BAD_REQUEST, "%s", problem);
    }
    if (!(idx = malloc(((size_t)last - first + 1) * sizeof *idx))) {
        return send_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    }
    for (uint32_t i = first; i <= last; i++) {
        if (share >= 1.0 || capi_share_pick(seed, i, share)) {
            idx[count++] = i;
        }
    }
    if (!(job = job_new(fleet, idx, count, 1))) {
        return send_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    }
    job->params = params;
    if (run_job(job, &failed)) {
        job_unref(job);
        return send_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
                          "the workers did not answer in time; the action may be partly done");
    }
    {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        action_log_add(fleet->actions, &params, share, seed, job->idx, count, failed,
                       (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000);
    }
    sbuf_adds(&out, "{\"action\":");
    json_str(&out, action_log_kind_name(kind));
    sbuf_printf(&out, ",\"devices\":%" PRIu32 ",\"failed\":%" PRIu32 ",\"ranges\":[", count - failed, failed);
    {
        uint32_t shown = 0, k = 0;
        while (k < count && shown < CAPI_MAX_RANGES_SHOWN) {
            uint32_t a = job->idx[k];
            while (k + 1 < count && job->idx[k + 1] == job->idx[k] + 1) {
                k++;
            }
            sbuf_printf(&out, "%s[%" PRIu32 ",%" PRIu32 "]", shown ? "," : "", a, job->idx[k]);
            shown++;
            k++;
        }
        sbuf_printf(&out, "],\"ranges_truncated\":%s}", k < count ? "true" : "false");
    }
    job_unref(job);
    rc = send_json(conn, MHD_HTTP_OK, &out);
    return rc;
}

/* ------------------------------------------------------------------ HTTP */

/* Compare without an early exit, so the time does not tell how much of a token was right. */
static int
token_ok(const char *token, const char *given)
{
    size_t tl = strlen(token), gl = strlen(given);
    unsigned char diff = (unsigned char)(tl != gl);

    for (size_t i = 0; i < gl; i++) {
        diff |= (unsigned char)(given[i] ^ token[i % (tl ? tl : 1)]);
    }
    return !diff;
}

char *
capi_read_token(const char *path, char *err, size_t err_len)
{
    FILE *f = fopen(path, "r");
    char buf[CAPI_MAX_TOKEN_BYTES + 2];
    size_t n;

    if (!f) {
        snprintf(err, err_len, "--api-token-file %s: %s", path, strerror(errno));
        return NULL;
    }
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ' || buf[n - 1] == '\t')) {
        buf[--n] = '\0';
    }
    if (n > CAPI_MAX_TOKEN_BYTES || !n || strpbrk(buf, " \t\r\n")) {
        snprintf(err, err_len, "--api-token-file %s: expected one token of 1 to %d characters without spaces",
                 path, CAPI_MAX_TOKEN_BYTES);
        return NULL;
    }
    return strdup(buf);
}

enum MHD_Result
capi_handle(struct fleet *fleet, const char *token, struct MHD_Connection *conn, const char *url,
            const char *method, const char *upload_data, size_t *upload_data_size, void **req_cls)
{
    struct capi_request *rq = *req_cls;
    int is_get = !strcmp(method, MHD_HTTP_METHOD_GET), is_post = !strcmp(method, MHD_HTTP_METHOD_POST);

    if (!rq) {
        if (!(rq = calloc(1, sizeof *rq))) {
            return MHD_NO;
        }
        *req_cls = rq;
        return MHD_YES;
    }
    if (*upload_data_size) {
        if (!rq->too_big && rq->body.len + *upload_data_size > CAPI_MAX_BODY_BYTES) {
            rq->too_big = 1;
            sbuf_free(&rq->body);
        }
        if (!rq->too_big) {
            sbuf_add(&rq->body, upload_data, *upload_data_size);
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (token) {
        const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
        if (!auth || strncmp(auth, "Bearer ", 7) || !token_ok(token, auth + 7)) {
            return send_error(conn, MHD_HTTP_UNAUTHORIZED,
                              auth ? "wrong bearer token"
                                   : "a bearer token is required (Authorization: Bearer ...)");
        }
    }
    if (rq->too_big) {
        return send_error(conn, MHD_HTTP_CONTENT_TOO_LARGE, "the body is over %d bytes", CAPI_MAX_BODY_BYTES);
    }
    if (rq->body.failed) {
        return send_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    }
    if (!strcmp(url, "/api/v1/fleet")) {
        return is_get ? get_fleet(fleet, conn)
                      : send_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "%s: only GET", url);
    }
    if (!strncmp(url, "/api/v1/devices/", 16) && !strchr(url + 16, '/')) {
        return is_get ? get_device(fleet, conn, url + 16)
                      : send_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "%s: only GET", url);
    }
    if (!strncmp(url, "/api/v1/devices/", 16) || !strncmp(url, "/api/v1/groups/", 15)) {
        return is_post ? post_action(fleet, conn, url, rq->body.buf, rq->body.len)
                       : send_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "%s: only POST", url);
    }
    return send_error(conn, MHD_HTTP_NOT_FOUND,
                      "not found: /api/v1/fleet, /api/v1/devices/N, POST /api/v1/devices/N[-M]/ACTION or "
                      "/api/v1/groups/NAME/ACTION");
}

void
capi_request_done(void *req_cls)
{
    struct capi_request *rq = req_cls;

    if (rq) {
        sbuf_free(&rq->body);
        free(rq);
    }
}
