/*
 * ietf-netconf-monitoring (RFC 6022): get-schema (its full path; the
 * fast one in rpc.c shares ops_schema_lookup() and the texts the schema
 * set escaped at load), and the netconf-state
 * subtree of get, built per request from the device's live counters,
 * sessions and locks (so the numbers are never stale and cost nothing
 * while nobody asks).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ops.h"
#include "transport.h"

#define NCM_NS OPS_NCM_NS

const struct schema_module *
ops_schema_lookup(const struct schema_set *set, const char *identifier, const char *version)
{
    const struct schema_module *m = schema_find(set, identifier, version);

    return m ? m : schema_find_submodule(set, identifier, version);
}

/*
 * A module of the context that is not among the advertised ones: libyang's own "yang" module, which
 * yang-library lists (every module of the context is there) and which yangcli, for one, fetches. It has no
 * file, so it is printed. @return 0 when answered, -1 when the context has no such module either.
 */
static int
context_module_text(struct rpc_call *call, const char *name, const char *revision, LYS_OUTFORMAT out)
{
    const struct ly_ctx *ctx = call->dev->type->schemas.ctx;
    const struct lys_module *mod =
        revision && *revision ? ly_ctx_get_module(ctx, name, revision) : ly_ctx_get_module_latest(ctx, name);
    char *text = NULL;

    if (!mod || lys_print_mem(&text, mod, out, 0)) {
        return -1;
    }
    call->has_data = 1;
    call->data_ns = NCM_NS;
    sbuf_add_xml(&call->data, text);
    free(text);
    return 0;
}

void
op_get_schema(struct rpc_call *call)
{
    const struct lyd_node *id = rpc_param(call, "identifier", 1);
    const struct lyd_node *version = rpc_param(call, "version", 0);
    const struct lyd_node *format = rpc_param(call, "format", 0);
    const struct schema_module *m;
    const char *fmt = format ? lyd_get_value(format) : "yang";
    LYS_OUTFORMAT out;
    char *text = NULL;

    if (!id) {
        return;
    }
    if (strstr(fmt, "yin")) {
        out = LYS_OUT_YIN;
    } else if (strstr(fmt, "yang")) {
        out = LYS_OUT_YANG;
    } else {
        rpc_fail(call,
                 edit_err_invalid_value(EDIT_ERR_APP, NULL, "Schema format \"%s\" is not supported.", fmt));
        return;
    }
    m = ops_schema_lookup(&call->dev->type->schemas, lyd_get_value(id),
                          version ? lyd_get_value(version) : NULL);
    if (!m && !context_module_text(call, lyd_get_value(id), version ? lyd_get_value(version) : NULL, out)) {
        return;
    }
    if (!m) {
        rpc_fail(call,
                 edit_err_invalid_value(EDIT_ERR_APP, NULL, "No schema \"%s\"%s%s.", lyd_get_value(id),
                                        version ? " revision " : "", version ? lyd_get_value(version) : ""));
        return;
    }
    if (out == LYS_OUT_YANG) {
        size_t len;
        const char *xml = schema_module_yang_xml(m, &len);
        call->has_data = 1;
        call->data_ns = NCM_NS;
        sbuf_add(&call->data, xml, len);
        return;
    }
    if (schema_module_text(m, out, &text)) {
        rpc_fail(call, NULL);
        return;
    }
    call->has_data = 1;
    call->data_ns = NCM_NS;
    sbuf_add_xml(&call->data, text);
    free(text);
}

static void
format_time(time_t t, char *buf, size_t len)
{
    struct tm tm;

    /* Not strftime(): glibc's calls tzset(), which frees and copies the zone name on every call (under a
     * lock of libc's own), for a time that is UTC anyway. */
    gmtime_r(&t, &tm);
    snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
             tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* lyd_new_path with printf-style path; returns -1 on failure. */
static int put(struct lyd_node *root, const struct ly_ctx *ctx, const char *value, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int
put(struct lyd_node *root, const struct ly_ctx *ctx, const char *value, const char *fmt, ...)
{
    char path[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(path, sizeof path, fmt, ap);
    va_end(ap);
    return lyd_new_path(root, (struct ly_ctx *)ctx, path, value, 0, NULL) ? -1 : 0;
}

#define NS_ROOT "/ietf-netconf-monitoring:netconf-state"

enum fleet_err
monitoring_state(struct rpc_call *call, struct lyd_node **tree)
{
    const struct schema_set *set = &call->dev->type->schemas;
    const struct ly_ctx *ctx = set->ctx;
    struct device *dev = call->dev;
    struct lyd_node *root = NULL;
    char buf[64];
    int bad = 0;

    *tree = NULL;
    if (lyd_new_path(NULL, (struct ly_ctx *)ctx, NS_ROOT, NULL, 0, &root)) {
        return FLEET_ERR_NOMEM;
    }
    for (size_t i = 0; i < set->cap_count; i++) {
        bad |= put(root, ctx, set->caps[i], NS_ROOT "/capabilities/capability");
    }
    for (int i = 0; i < DS_COUNT; i++) {
        bad |= put(root, ctx, NULL, NS_ROOT "/datastores/datastore[name='%s']", ds_name((enum ds_id)i));
        if (dev->ds.lock[i]) {
            snprintf(buf, sizeof buf, "%u", (unsigned)dev->ds.lock[i]);
            bad |= put(root, ctx, buf,
                       NS_ROOT "/datastores/datastore[name='%s']/locks/global-lock/locked-by-session",
                       ds_name((enum ds_id)i));
            format_time((time_t)dev->ds.lock_time[i], buf, sizeof buf);
            bad |=
                put(root, ctx, buf, NS_ROOT "/datastores/datastore[name='%s']/locks/global-lock/locked-time",
                    ds_name((enum ds_id)i));
        }
    }
    /* Modules, then submodules (namespace: their main module's). */
    for (size_t i = 0; i < set->module_count + set->submodule_count; i++) {
        const struct schema_module *m =
            i < set->module_count ? &set->modules[i] : &set->submodules[i - set->module_count];
        const char *rev = m->revision ? m->revision : "";
        for (int f = 0; f < 2; f++) {
            const char *format = f ? "ietf-netconf-monitoring:yin" : "ietf-netconf-monitoring:yang";
            bad |= put(root, ctx, m->mod->ns,
                       NS_ROOT "/schemas/schema[identifier='%s'][version='%s'][format='%s']/namespace",
                       m->name, rev, format);
            bad |= put(root, ctx, "NETCONF",
                       NS_ROOT "/schemas/schema[identifier='%s'][version='%s'][format='%s']/location",
                       m->name, rev, format);
        }
    }
    for (struct session *s = dev->sessions; s; s = s->dev_next) {
        if (s->state != SESS_ACTIVE) {
            continue;
        }
#define SESSION_LEAF(leaf, value)                                                                            \
    bad |= put(root, ctx, value, NS_ROOT "/sessions/session[session-id='%u']/" leaf, (unsigned)s->id)
        SESSION_LEAF("transport", s->transport->monitoring_identity);
        SESSION_LEAF("username", s->username ? s->username : "anonymous");
        SESSION_LEAF("source-host", sess_peer_text(s, 0, buf, sizeof buf));
        format_time(s->login_time, buf, sizeof buf);
        SESSION_LEAF("login-time", buf);
        snprintf(buf, sizeof buf, "%u", (unsigned)s->in_rpcs);
        SESSION_LEAF("in-rpcs", buf);
        snprintf(buf, sizeof buf, "%u", (unsigned)s->in_bad_rpcs);
        SESSION_LEAF("in-bad-rpcs", buf);
        snprintf(buf, sizeof buf, "%u", (unsigned)s->out_rpc_errors);
        SESSION_LEAF("out-rpc-errors", buf);
        snprintf(buf, sizeof buf, "%u", (unsigned)s->out_notifications);
        SESSION_LEAF("out-notifications", buf);
#undef SESSION_LEAF
    }
    /* A device rebooted through the control API started its server again then. */
    format_time(dev->reboots ? (time_t)(dev->boot_ms / 1000) : call->fleet->start_time, buf, sizeof buf);
    bad |= put(root, ctx, buf, NS_ROOT "/statistics/netconf-start-time");
#define STAT_LEAF(leaf, field)                                                                               \
    snprintf(buf, sizeof buf, "%u", (unsigned)dev->stats.field);                                             \
    bad |= put(root, ctx, buf, NS_ROOT "/statistics/" leaf)
    STAT_LEAF("in-bad-hellos", in_bad_hellos);
    STAT_LEAF("in-sessions", in_sessions);
    STAT_LEAF("dropped-sessions", dropped_sessions);
    STAT_LEAF("in-rpcs", in_rpcs);
    STAT_LEAF("in-bad-rpcs", in_bad_rpcs);
    STAT_LEAF("out-rpc-errors", out_rpc_errors);
    STAT_LEAF("out-notifications", out_notifications);
#undef STAT_LEAF
    if (bad) {
        lyd_free_all(root);
        return FLEET_ERR_NOMEM;
    }
    *tree = root;
    return FLEET_OK;
}
