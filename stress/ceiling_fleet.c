/*
 * The fleet as ceiling drives it (ceiling_fleet.h): what it says about
 * itself (GET /api/v1/fleet), the channel's per-device rate set through the
 * control API, point 1 read from /metrics, and the control report. Each call
 * is one synchronous request (ceil_http_call); a refused one keeps the
 * fleet's own error text.
 */
#include <curl/curl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ceiling_fleet.h"
#include "ceiling_probe.h"
#include "json_read.h"
#include "token_file.h"

/* Largest /api/v1/fleet or action answer read. */
#define CEIL_FLEET_ANSWER_MAX_BYTES (16u * 1024u * 1024u)
/* Largest /metrics text read: a fleet's series are a few per sink, not per device. */
#define CEIL_FLEET_METRICS_MAX_BYTES (64u * 1024u * 1024u)
/* Largest control report read (a report of a large fleet lists every device). */
#define CEIL_FLEET_REPORT_MAX_BYTES (256u * 1024u * 1024u)
/* The push ledger's family in /metrics. */
#define CEIL_SENT_FAMILY "fleetsim_push_messages_total"

const char *
ceil_channel_name(enum ceil_channel c)
{
    switch (c) {
    case CEIL_CHANNEL_SYSLOG:
        return "syslog";
    case CEIL_CHANNEL_TRAP:
        return "trap";
    case CEIL_CHANNEL_NOTIFICATION:
        return "notification";
    }
    return "?";
}

/* The channel's name in the push ledger's metrics. */
static const char *
ledger_channel(enum ceil_channel c)
{
    return c == CEIL_CHANNEL_NOTIFICATION ? "netconf" : ceil_channel_name(c);
}

/* The value of label @p name in "{a="x",b="y"}" (starting after '{', ending before '}') is @p want. */
static int
label_is(const char *labels, size_t len, const char *name, const char *want)
{
    size_t nl = strlen(name), wl = strlen(want);
    const char *p = labels, *end = labels + len;

    while (p < end) {
        const char *eq = memchr(p, '=', (size_t)(end - p)), *v, *q;
        if (!eq || eq + 1 >= end || eq[1] != '"') {
            return 0;
        }
        v = eq + 2;
        for (q = v; q < end && *q != '"'; q++) {
            if (*q == '\\') {
                q++;
            }
        }
        if (q >= end) {
            return 0;
        }
        if ((size_t)(eq - p) == nl && !memcmp(p, name, nl)) {
            return (size_t)(q - v) == wl && !memcmp(v, want, wl);
        }
        p = q + 1;
        while (p < end && (*p == ',' || *p == ' ')) {
            p++;
        }
    }
    return 0;
}

int
ceil_metrics_sent(const char *text, size_t len, const char *ledger_channel_name, double *sent)
{
    const char *p = text, *end = text + len;
    size_t fl = strlen(CEIL_SENT_FAMILY);
    int family_seen = 0;

    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p)), *line = p;
        size_t n;
        if (!eol) {
            eol = end;
        }
        n = (size_t)(eol - line);
        p = eol + 1;
        if (n > 7 && !memcmp(line, "# TYPE ", 7) && n > 7 + fl && !memcmp(line + 7, CEIL_SENT_FAMILY, fl) &&
            line[7 + fl] == ' ') {
            family_seen = 1;
            continue;
        }
        if (n <= fl || memcmp(line, CEIL_SENT_FAMILY, fl) || line[fl] != '{') {
            continue;
        }
        {
            const char *close = memchr(line, '}', n), *v;
            char num[64], *num_end;
            size_t vl;
            double d;
            if (!close ||
                !label_is(line + fl + 1, (size_t)(close - line - fl - 1), "channel", ledger_channel_name) ||
                !label_is(line + fl + 1, (size_t)(close - line - fl - 1), "state", "sent")) {
                continue;
            }
            for (v = close + 1; v < eol && *v == ' '; v++) {
            }
            /* the text is not NUL-terminated: the value ends at a space or at the line's end */
            for (vl = 0; v + vl < eol && v[vl] != ' '; vl++) {
            }
            if (!vl || vl >= sizeof num) {
                return -1;
            }
            memcpy(num, v, vl);
            num[vl] = '\0';
            d = strtod(num, &num_end);
            if (num_end != num + vl || !(d >= 0) || !isfinite(d)) {
                return -1;
            }
            *sent = d;
            return 0;
        }
    }
    /* the family without the channel's series yet: nothing was sent on it (no sink had a message) */
    if (family_seen) {
        *sent = 0;
        return 0;
    }
    return -1;
}

/* Copy @p s (may be NULL) into @p out. */
static void
copy_text(char *out, size_t size, const char *s)
{
    snprintf(out, size, "%s", s ? s : "");
}

/* The scheme of a sink URL ("udp://..."): "udp". */
static void
sink_scheme(const struct jsonr_value *channel, char *out, size_t size)
{
    const struct jsonr_value *sinks = jsonr_get(channel, "sinks");
    const char *first =
        sinks && sinks->type == JSONR_ARRAY && sinks->child && sinks->child->type == JSONR_STRING
            ? sinks->child->str
            : "";
    const char *colon = strstr(first, "://");
    size_t n = colon ? (size_t)(colon - first) : 0;

    snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), first);
}

/* The format and transport of @p channel in a group's "push" object; 1 when the group has the channel. */
static int
group_channel(const struct jsonr_value *grp, enum ceil_channel channel, char *format, size_t format_len,
              char *transport, size_t transport_len)
{
    const struct jsonr_value *push = jsonr_get(grp, "push");
    const struct jsonr_value *c;

    format[0] = transport[0] = '\0';
    switch (channel) {
    case CEIL_CHANNEL_SYSLOG:
        c = jsonr_get(push, "syslog");
        if (!c || c->type != JSONR_OBJECT) {
            return 0;
        }
        copy_text(format, format_len, jsonr_get_str(c, "format"));
        sink_scheme(c, transport, transport_len);
        return 1;
    case CEIL_CHANNEL_TRAP:
        c = jsonr_get(push, "trap");
        if (!c || c->type != JSONR_OBJECT) {
            return 0;
        }
        copy_text(format, format_len, jsonr_get_str(c, "version"));
        sink_scheme(c, transport, transport_len);
        return 1;
    case CEIL_CHANNEL_NOTIFICATION:
        c = jsonr_get(push, "notification");
        if (!c || c->type != JSONR_OBJECT) {
            return 0;
        }
        copy_text(transport, transport_len, "netconf");
        return 1;
    }
    return 0;
}

int
ceil_fleet_info_parse(const char *body, size_t len, const char *group, enum ceil_channel channel,
                      struct ceil_fleet_info *info, char *err, size_t err_len)
{
    struct jsonr_value *root = NULL;
    const struct jsonr_value *groups, *g;
    uint64_t present, first, last, fleet_devices;
    char jerr[128], format[32], transport[32];
    int rc = -1, found = 0;

    memset(info, 0, sizeof *info);
    if (jsonr_parse(body, len, &root, jerr, sizeof jerr)) {
        snprintf(err, err_len, "/api/v1/fleet: not JSON (%s)", jerr);
        goto cleanup;
    }
    groups = jsonr_get(root, "groups");
    if (!groups || groups->type != JSONR_ARRAY || jsonr_get_u64(root, "present", &present) ||
        jsonr_get_u64(root, "fleet_devices", &fleet_devices)) {
        snprintf(err, err_len, "/api/v1/fleet: no \"groups\", \"present\" or \"fleet_devices\"");
        goto cleanup;
    }
    copy_text(info->version, sizeof info->version, jsonr_get_str(root, "version"));
    if (group) {
        for (g = groups->child; g; g = g->next) {
            const char *name = jsonr_get_str(g, "name");
            if (name && !strcmp(name, group)) {
                break;
            }
        }
        if (!g) {
            snprintf(err, err_len, "the fleet has no group \"%s\"", group);
            goto cleanup;
        }
        if (jsonr_get_u64(g, "present", &present) || jsonr_get_u64(g, "first", &first) ||
            jsonr_get_u64(g, "last", &last) || first > UINT32_MAX || last > UINT32_MAX || last < first) {
            snprintf(err, err_len, "/api/v1/fleet: group \"%s\" has no valid present, first and last", group);
            goto cleanup;
        }
        copy_text(info->group_type, sizeof info->group_type, jsonr_get_str(g, "type"));
        group_channel(g, channel, info->format, sizeof info->format, info->transport, sizeof info->transport);
    } else {
        if (!fleet_devices || fleet_devices > (uint64_t)UINT32_MAX + 1) {
            snprintf(err, err_len, "/api/v1/fleet: fleet_devices is out of range");
            goto cleanup;
        }
        first = 0;
        last = fleet_devices - 1;
        /* the fleet's format and transport: the groups' when they agree, "mixed" when they do not */
        for (g = groups->child; g; g = g->next) {
            if (!group_channel(g, channel, format, sizeof format, transport, sizeof transport)) {
                continue;
            }
            if (!found) {
                copy_text(info->format, sizeof info->format, format);
                copy_text(info->transport, sizeof info->transport, transport);
                found = 1;
            } else {
                if (strcmp(info->format, format)) {
                    copy_text(info->format, sizeof info->format, "mixed");
                }
                if (strcmp(info->transport, transport)) {
                    copy_text(info->transport, sizeof info->transport, "mixed");
                }
            }
        }
    }
    if (!present || present > UINT32_MAX) {
        snprintf(err, err_len, "%s%s%s has no present device", group ? "group \"" : "the fleet",
                 group ? group : "", group ? "\"" : "");
        goto cleanup;
    }
    info->devices = (uint32_t)present;
    info->first = (uint32_t)first;
    info->last = (uint32_t)last;
    rc = 0;
cleanup:
    jsonr_free(root);
    return rc;
}

/* One request to the fleet: @p path after the base URL; @p post_body NULL for a GET. */
static int
fleet_call(struct ceil_fleet *f, const char *path, const char *post_body, size_t max_bytes,
           struct sbuf *answer)
{
    char auth[TOKEN_FILE_MAX_BYTES + 32] = "";
    struct sbuf url = {0};
    int rc;

    if (f->token) {
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", f->token);
    }
    sbuf_printf(&url, "%s%s", f->base_url, path);
    if (url.failed) {
        snprintf(f->last_error, sizeof f->last_error, "out of memory");
        return -1;
    }
    rc = ceil_http_call(url.buf, post_body, f->token ? auth : NULL, f->timeout_s, max_bytes, answer, NULL,
                        f->last_error, sizeof f->last_error);
    memset(auth, 0, sizeof auth);
    sbuf_free(&url);
    return rc;
}

int
ceil_fleet_open(struct ceil_fleet *f, const char *base_url, const char *token_file, const char *group,
                enum ceil_channel channel, double timeout_s, char *err, size_t err_len)
{
    struct sbuf answer = {0};
    size_t n = strlen(base_url);
    int rc = -1;

    memset(f, 0, sizeof *f);
    f->channel = channel;
    f->timeout_s = timeout_s > 0 ? timeout_s : 10;
    while (n && base_url[n - 1] == '/') {
        n--;
    }
    if (strncmp(base_url, "http://", 7) && strncmp(base_url, "https://", 8)) {
        snprintf(err, err_len, "--fleet \"%s\": expected http://HOST:PORT, the fleet's --metrics server",
                 base_url);
        goto cleanup;
    }
    if (!(f->base_url = strndup(base_url, n)) || (group && !(f->group = strdup(group)))) {
        snprintf(err, err_len, "out of memory");
        goto cleanup;
    }
    if (token_file && !(f->token = token_file_read(token_file, "--api-token-file", err, err_len))) {
        goto cleanup;
    }
    if (fleet_call(f, "/api/v1/fleet", NULL, CEIL_FLEET_ANSWER_MAX_BYTES, &answer)) {
        snprintf(err, err_len, "%s", f->last_error);
        goto cleanup;
    }
    if (ceil_fleet_info_parse(answer.buf ? answer.buf : "", answer.len, group, channel, &f->info, err,
                              err_len)) {
        goto cleanup;
    }
    rc = 0;
cleanup:
    sbuf_free(&answer);
    if (rc) {
        ceil_fleet_close(f);
    }
    return rc;
}

void
ceil_fleet_close(struct ceil_fleet *f)
{
    if (!f) {
        return;
    }
    free(f->base_url);
    if (f->token) {
        memset(f->token, 0, strlen(f->token));
    }
    free(f->token);
    free(f->group);
    f->base_url = f->token = f->group = NULL;
}

int
ceil_fleet_set_rate(struct ceil_fleet *f, double per_device_rate)
{
    struct sbuf path = {0}, answer = {0};
    struct jsonr_value *root = NULL;
    char body[64], *group = NULL, jerr[128];
    uint64_t failed = 0, devices = 0;
    int rc = -1;

    if (per_device_rate < 0) {
        snprintf(body, sizeof body, "{\"rate\": null}");
    } else {
        snprintf(body, sizeof body, "{\"rate\": %.17g}", per_device_rate);
    }
    if (f->group) {
        /* a group's name goes into the path: escaped, whatever it holds */
        CURL *c = curl_easy_init();
        group = c ? curl_easy_escape(c, f->group, 0) : NULL;
        curl_easy_cleanup(c);
        sbuf_printf(&path, "/api/v1/groups/%s/%s-rate", group ? group : "", ceil_channel_name(f->channel));
    } else {
        sbuf_printf(&path, "/api/v1/devices/%" PRIu32 "-%" PRIu32 "/%s-rate", f->info.first, f->info.last,
                    ceil_channel_name(f->channel));
    }
    if (path.failed || (f->group && !group)) {
        snprintf(f->last_error, sizeof f->last_error, "out of memory");
        goto cleanup;
    }
    if (fleet_call(f, path.buf, body, CEIL_FLEET_ANSWER_MAX_BYTES, &answer)) {
        goto cleanup;
    }
    if (jsonr_parse(answer.buf ? answer.buf : "", answer.len, &root, jerr, sizeof jerr) ||
        jsonr_get_u64(root, "failed", &failed)) {
        snprintf(f->last_error, sizeof f->last_error, "%s: the answer names no \"failed\" count", path.buf);
        goto cleanup;
    }
    if (jsonr_get_u64(root, "devices", &devices) || !devices) {
        snprintf(f->last_error, sizeof f->last_error, "%s: no device took the rate (all absent?)", path.buf);
        goto cleanup;
    }
    if (failed) {
        snprintf(f->last_error, sizeof f->last_error, "%s: %" PRIu64 " devices did not take the rate",
                 path.buf, failed);
        goto cleanup;
    }
    rc = 0;
cleanup:
    curl_free(group);
    jsonr_free(root);
    sbuf_free(&path);
    sbuf_free(&answer);
    return rc;
}

int
ceil_fleet_sent(struct ceil_fleet *f, double *sent)
{
    struct sbuf answer = {0};
    int rc = -1;

    if (fleet_call(f, "/metrics", NULL, CEIL_FLEET_METRICS_MAX_BYTES, &answer)) {
        goto cleanup;
    }
    if (ceil_metrics_sent(answer.buf ? answer.buf : "", answer.len, ledger_channel(f->channel), sent)) {
        snprintf(f->last_error, sizeof f->last_error,
                 "%s/metrics has no " CEIL_SENT_FAMILY
                 "{channel=\"%s\",state=\"sent\"} (a fleetsim without the "
                 "push ledger?)",
                 f->base_url, ledger_channel(f->channel));
        goto cleanup;
    }
    rc = 0;
cleanup:
    sbuf_free(&answer);
    return rc;
}

int
ceil_fleet_report(struct ceil_fleet *f, char **out, size_t *len)
{
    struct sbuf answer = {0};

    *out = NULL;
    *len = 0;
    if (fleet_call(f, "/api/v1/report", NULL, CEIL_FLEET_REPORT_MAX_BYTES, &answer)) {
        sbuf_free(&answer);
        return -1;
    }
    if (!answer.buf) {
        sbuf_adds(&answer, "");
    }
    *out = sbuf_take(&answer, len);
    if (!*out) {
        snprintf(f->last_error, sizeof f->last_error, "out of memory");
        return -1;
    }
    return 0;
}
