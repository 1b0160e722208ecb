/*
 * The control API; see control_api.h. A request is parsed and checked
 * whole on libmicrohttpd's thread before anything is done, so bad input
 * changes nothing; then fleet_action.h carries it out through the workers,
 * as it does a scenario's events.
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
#include "capi_target.h"
#include "fleet_action.h"
#include "inventory.h"
#include "json_read.h"
#include "report.h"
#include "sbuf.h"
#include "scenario.h"
#include "token_file.h"
#include "ydata.h"

/* One request's state between libmicrohttpd's calls. */
struct capi_request {
    struct sbuf body; /* the body so far */
    int too_big;      /* 1 once it passed CAPI_MAX_BODY_BYTES (the rest is discarded) */
};

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

static const char *const state_names[4] = {"up", "down", "rebooting", "absent"};
static const char *const mode_names[3] = {"", "refuse", "blackhole"};

/* ------------------------------------------------------------------ GET */

/* A rate profile as configured: its text ("0" when none was given). */
static void
rate_json(struct sbuf *out, const struct rate_profile *r)
{
    json_str(out, r->text[0] ? r->text : "0");
}

/* A group's push channels as configured (what ceiling records as its controls): null where none is. */
static void
push_json(struct sbuf *out, const struct fleet_config *cfg)
{
    static const char *const syslog_schemes[] = {"udp", "tcp", "tls"};
    static const char *const trap_versions[] = {"v2c", "v1", "v3"};
    char addr[NETADDR_TEXT_BYTES + 16];

    sbuf_adds(out, ",\"push\":{\"syslog\":");
    if (cfg->syslog_sink_count) {
        sbuf_adds(out, "{\"sinks\":[");
        for (uint32_t i = 0; i < cfg->syslog_sink_count; i++) {
            const struct syslog_sink_spec *k = &cfg->syslog_sinks[i];
            netaddr_endpoint_text(&k->ep, 1, addr, sizeof addr);
            sbuf_printf(out, "%s\"%s://%s\"", i ? "," : "", syslog_schemes[k->proto % 3], addr);
        }
        sbuf_adds(out, "],\"format\":");
        json_str(out, cfg->syslog_format ? cfg->syslog_format : "rfc5424");
        sbuf_adds(out, ",\"framing\":");
        json_str(out, cfg->syslog_framing ? cfg->syslog_framing : "octet-counting");
        sbuf_adds(out, ",\"rate\":");
        rate_json(out, &cfg->syslog_rate);
        sbuf_adds(out, "}");
    } else {
        sbuf_adds(out, "null");
    }
    sbuf_adds(out, ",\"trap\":");
    if (cfg->trap_sink_count) {
        sbuf_adds(out, "{\"sinks\":[");
        for (uint32_t i = 0; i < cfg->trap_sink_count; i++) {
            netaddr_endpoint_text(&cfg->trap_sinks[i].ep, 1, addr, sizeof addr);
            sbuf_printf(out, "%s\"udp://%s\"", i ? "," : "", addr);
        }
        sbuf_printf(out, "],\"version\":\"%s\",\"inform\":%s,\"rate\":",
                    trap_versions[(unsigned)cfg->trap_version % 3], cfg->trap_inform ? "true" : "false");
        rate_json(out, &cfg->trap_rate);
        sbuf_adds(out, "}");
    } else {
        sbuf_adds(out, "null");
    }
    sbuf_adds(out, ",\"notification\":");
    if (cfg->notification_file) {
        sbuf_adds(out, "{\"file\":");
        json_str(out, cfg->notification_file);
        /* the file's own rates are in it already (fleet.c fills in a rate not given) */
        sbuf_adds(out, ",\"rate\":");
        rate_json(out, &cfg->notification_rate);
        sbuf_adds(out, "}");
    } else {
        sbuf_adds(out, "null");
    }
    sbuf_adds(out, "}");
}

static enum MHD_Result
get_fleet(struct fleet *fleet, struct MHD_Connection *conn)
{
    uint32_t n = fleet->cfg.device_count, by_state[4] = {0};
    uint64_t open = 0;
    uint32_t *idx = malloc((n ? n : 1) * sizeof *idx);
    struct fact_device_read *reads = malloc((n ? n : 1) * sizeof *reads);
    struct sbuf out = {0};
    char addr[NETADDR_TEXT_BYTES];
    int rc = idx && reads ? 0 : -2;

    for (uint32_t i = 0; !rc && i < n; i++) {
        idx[i] = i;
    }
    if (!rc) {
        rc = fact_read(fleet, idx, n, reads);
    }
    for (uint32_t i = 0; !rc && i < n; i++) {
        by_state[reads[i].state]++;
        open += reads[i].open;
    }
    free(idx);
    free(reads);
    if (rc) {
        return rc == -2
                   ? send_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory")
                   : send_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "the workers did not answer in time");
    }
    sbuf_adds(&out, "{\"version\":\"" FLEETSIM_VERSION "\",");
    sbuf_printf(&out,
                "\"devices\":%" PRIu32 ",\"present\":%" PRIu32 ",\"first_device\":%" PRIu32
                ",\"fleet_devices\":%" PRIu32 ",\"groups\":[",
                n, n - by_state[3], fleet->cfg.device_offset, fleet->cfg.fleet_devices);
    for (uint32_t g = 0; g < fleet->group_count; g++) {
        const struct device_group *grp = &fleet->groups[g];
        const struct device *d0 = &fleet->devices[grp->first];
        const struct device *dl = &fleet->devices[grp->first + grp->cfg.device_count - 1];
        sbuf_adds(&out, g ? ",{\"name\":" : "{\"name\":");
        json_str(&out, grp->name);
        sbuf_adds(&out, ",\"type\":");
        json_str(&out, grp->type->name);
        sbuf_printf(&out,
                    ",\"first\":%" PRIu32 ",\"last\":%" PRIu32 ",\"count\":%" PRIu32 ",\"present\":%" PRIu32,
                    d0->index, dl->index, grp->cfg.device_count, fact_group_present(fleet, g));
        netaddr_text(&grp->cfg.ip_fam, d0->addr, addr, sizeof addr);
        sbuf_printf(&out, ",\"address_first\":\"%s\"", addr);
        netaddr_text(&grp->cfg.ip_fam, dl->addr, addr, sizeof addr);
        sbuf_printf(&out, ",\"address_last\":\"%s\",\"netconf_port_first\":%u,\"netconf_port_last\":%u", addr,
                    (unsigned)d0->port, (unsigned)dl->port);
        push_json(&out, &grp->cfg);
        sbuf_adds(&out, "}");
    }
    sbuf_printf(&out,
                "],\"states\":{\"up\":%" PRIu32 ",\"down\":%" PRIu32 ",\"rebooting\":%" PRIu32
                ",\"absent\":%" PRIu32 "},\"sessions_open\":%" PRIu64,
                by_state[0], by_state[1], by_state[2], by_state[3], open);
    sbuf_adds(&out, ",");
    scenario_json(fleet->scenario, fleet->cfg.seed, &out);
    sbuf_adds(&out, "}");
    return send_json(conn, MHD_HTTP_OK, &out);
}

static enum MHD_Result
get_device(struct fleet *fleet, struct MHD_Connection *conn, const char *which)
{
    uint32_t first, last, elsewhere;
    struct fact_device_read r;
    const struct device *dev;
    struct sbuf out = {0};
    char addr[NETADDR_TEXT_BYTES], boot[40];
    int rc = capi_range_here(which, fleet->cfg.fleet_devices, fleet->cfg.device_offset,
                             fleet->cfg.device_count, &first, &last, &elsewhere);

    if (rc == -2) {
        return send_error(conn, MHD_HTTP_NOT_FOUND,
                          "no device %s: the fleet has %" PRIu32 " (0 to %" PRIu32 ")", which,
                          fleet->cfg.fleet_devices, fleet->cfg.fleet_devices - 1);
    }
    if (rc || (first != last && !elsewhere) || elsewhere > 1) {
        return send_error(conn, MHD_HTTP_BAD_REQUEST, "\"%s\" is not a device index", which);
    }
    if (elsewhere) {
        return send_error(conn, MHD_HTTP_NOT_FOUND,
                          "device %s is another shard's: this process serves devices %" PRIu32 " to %" PRIu32,
                          which, fleet->cfg.device_offset,
                          fleet->cfg.device_offset + fleet->cfg.device_count - 1);
    }
    if (fact_read(fleet, &first, 1, &r)) {
        return send_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "the workers did not answer in time");
    }
    dev = &fleet->devices[first];
    netaddr_text(&dev->group->cfg.ip_fam, dev->addr, addr, sizeof addr);
    ydata_datetime(r.boot_ms, boot, sizeof boot);
    sbuf_printf(&out, "{\"index\":%" PRIu32 ",\"group\":", dev->index);
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
    struct jsonr_value *body = NULL;
    struct fact_request rq;
    struct fact_outcome done;
    int kind, is_group = 0;
    unsigned status;
    struct sbuf out = {0};

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
    if ((kind = fact_kind_of(action)) < 0) {
        return send_error(conn, MHD_HTTP_NOT_FOUND,
                          "unknown action \"%s\": kill-sessions, down, up, reboot, latency, drop-rate, set, "
                          "notification-rate, syslog-rate, trap-rate, flap, grow or shrink",
                          action);
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
    problem = fact_parse_body(fleet, (enum devact_kind)kind, body, &rq, err, sizeof err);
    jsonr_free(body);
    if (problem) {
        return send_error(conn, MHD_HTTP_BAD_REQUEST, "%s", problem);
    }
    rq.target_kind = is_group ? FACT_GROUP : FACT_DEVICES;
    rq.target = target;
    if ((status = fact_run(fleet, &rq, &done, err, sizeof err))) {
        fact_outcome_free(&done);
        return send_error(conn, status, "%s", err);
    }
    sbuf_adds(&out, "{\"action\":");
    json_str(&out, action_log_kind_name((enum devact_kind)kind));
    sbuf_printf(&out,
                ",\"seq\":%" PRIu64 ",\"devices\":%" PRIu32 ",\"failed\":%" PRIu32 ",\"elsewhere\":%" PRIu32
                ",\"ranges\":[",
                done.seq, done.count - done.failed, done.failed, done.elsewhere);
    action_log_ranges(&out, done.idx, done.count, fleet->cfg.device_offset, CAPI_MAX_RANGES_SHOWN);
    sbuf_adds(&out, "}");
    fact_outcome_free(&done);
    return send_json(conn, MHD_HTTP_OK, &out);
}

/* GET /api/v1/events: one recent action as its report object with every node-id it touched. */
struct events_writer {
    struct fleet *fleet; /* for the node-ids */
    struct sbuf *out;    /* the answer */
    uint32_t written;    /* events so far */
};

static void
write_event(const struct action_recent *r, void *user)
{
    struct events_writer *w = user;
    const struct fleet *fleet = w->fleet;
    size_t len = strlen(r->json);
    struct inventory_device dev;

    sbuf_adds(w->out, w->written++ ? ",\n" : "\n");
    sbuf_add(w->out, r->json, len - 1); /* without its closing brace */
    sbuf_adds(w->out, ",\"node_ids\":[");
    for (uint32_t k = 0; k < r->count; k++) {
        uint32_t node = inventory_first_node(fleet->specs, fleet->group_count, r->idx[k]);
        uint32_t copies = fleet->devices[r->idx[k]].group->cfg.devices_per_port;
        for (uint32_t c = 0; c < (copies ? copies : 1); c++) {
            inventory_device_get(fleet->specs, fleet->group_count, node + c, &dev);
            sbuf_adds(w->out, k || c ? "," : "");
            sbuf_add_json(w->out, dev.node_id);
        }
    }
    sbuf_adds(w->out, "]}");
}

static enum MHD_Result
get_events(struct fleet *fleet, struct MHD_Connection *conn)
{
    const char *since_text = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "since");
    uint64_t since = 0, next = 0, missed = 0;
    struct sbuf out = {0};
    struct events_writer w = {.fleet = fleet, .out = &out};
    char *end;

    if (since_text) {
        since = strtoull(since_text, &end, 10);
        if (!*since_text || *end || *since_text == '-') {
            return send_error(conn, MHD_HTTP_BAD_REQUEST, "since must be an event sequence number");
        }
    }
    sbuf_adds(&out, "{");
    scenario_json(fleet->scenario, fleet->cfg.seed, &out);
    sbuf_adds(&out, ",\"events\":[");
    if (fleet->actions) {
        action_log_each_recent(fleet->actions, since, write_event, &w, &next, &missed);
    }
    sbuf_printf(&out, "],\"next\":%" PRIu64 ",\"dropped\":%" PRIu64 "}", next, missed);
    if (out.failed) {
        sbuf_free(&out);
        return send_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    }
    return send_json(conn, MHD_HTTP_OK, &out);
}

/* ------------------------------------------------------------------ HTTP */

/* Compare without an early exit, so the time does not tell how much of a token was right. */
/* GET /api/v1/report: what --report writes at exit, now (each worker snapshots its own devices), so that
 * the shards of a fleet on hosts without a shared folder can be merged (fleetsim-stress merge). */
static enum MHD_Result
get_report(struct fleet *fleet, struct MHD_Connection *conn)
{
    struct sbuf out = {0};
    enum fleet_err rc = report_json(fleet, 1, &out);

    if (rc) {
        sbuf_free(&out);
        return send_error(
            conn, rc == FLEET_ERR_NOMEM ? MHD_HTTP_INTERNAL_SERVER_ERROR : MHD_HTTP_SERVICE_UNAVAILABLE,
            rc == FLEET_ERR_NOMEM ? "out of memory" : "a worker did not take its snapshot in time");
    }
    out.len--; /* send_json ends the body with its own newline */
    return send_json(conn, MHD_HTTP_OK, &out);
}

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
    return token_file_read(path, "--api-token-file", err, err_len);
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
    if (!strcmp(url, "/api/v1/report")) {
        return is_get ? get_report(fleet, conn)
                      : send_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "%s: only GET", url);
    }
    if (!strcmp(url, "/api/v1/events")) {
        return is_get ? get_events(fleet, conn)
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
                      "not found: /api/v1/fleet, /api/v1/devices/N, /api/v1/events, /api/v1/report, POST "
                      "/api/v1/devices/N[-M]/ACTION or "
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
