/*
 * The operations of ietf-subscribed-notifications (RFC 8639: establish-, modify-, delete- and
 * kill-subscription) and ietf-yang-push (RFC 8641: resync-subscription, and the datastore, periodic and
 * on-change inputs it adds), over NETCONF (RFC 8640). They read the input, answer errors the way
 * RFC 8639 section 2.4.6 and RFC 8640 section 5 write them (error-app-tag the identity, error-info the
 * yang-data with the reason and hints), and hand the records to testtool/push/.
 *
 * Error-tag: invalid-value for every refusal, resource-denied for insufficient-resources (RFC 8640's
 * examples). The smallest period is YP_PERIOD_MIN_CS; a smaller one answers period-unsupported with it as
 * period-hint.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devview.h"
#include "edit_err.h"
#include "filter.h"
#include "notif_file.h"
#include "ops.h"
#include "session.h"
#include "xmlguard.h"
#include "yp.h"

#define SN_MOD "ietf-subscribed-notifications"
#define YP_MOD "ietf-yang-push"

/* What an establish- or modify-subscription asked, before it is applied. */
struct push_input {
    const struct lyd_node *subtree;   /* subtree filter content (top-level siblings), or NULL */
    char *xpath;                      /* XPath filter with module-name prefixes, malloc'd, or NULL */
    int has_filter;                   /* 1: a filter (or its absence) was given */
    int64_t stop_ms;                  /* stop-time, -1 when not given */
    const struct lyd_node *periodic;  /* the periodic container, or NULL */
    const struct lyd_node *on_change; /* the on-change container, or NULL */
    uint32_t period_cs;               /* periodic: period */
    int64_t anchor_ms;                /* periodic: anchor-time, -1 when not given */
    int has_dampening;                /* on-change: dampening-period given */
    uint32_t dampening_cs;            /* on-change: dampening-period */
};

/* The child of @p parent named @p name, or NULL. */
static const struct lyd_node *
child(const struct lyd_node *parent, const char *name)
{
    const struct lyd_node *c;

    LY_LIST_FOR(lyd_child(parent), c)
    {
        if (!strcmp(LYD_NAME(c), name)) {
            return c;
        }
    }
    return NULL;
}

/*
 * An RFC 8639 refusal: error-app-tag @p identity ("module:name"), error-info the yang-data @p info
 * (of @p info_ns) with the reason and @p hints (XML or NULL); @p fmt the message.
 */
static struct edit_err *sn_error(const char *identity, const char *info, const char *info_ns,
                                 const char *hints, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static struct edit_err *
sn_error(const char *identity, const char *info, const char *info_ns, const char *hints, const char *fmt, ...)
{
    struct edit_err *err;
    char message[512];
    const char *colon = strchr(identity, ':');
    int yp = colon && !strncmp(identity, YP_MOD, (size_t)(colon - identity));
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    err = !strcmp(identity, SN_MOD ":insufficient-resources")
              ? edit_err_resource_denied(EDIT_ERR_APP, "%s", message)
              : edit_err_invalid_value(EDIT_ERR_APP, NULL, "%s", message);
    if (!err) {
        return NULL;
    }
    err->app_tag = strdup(identity);
    if (info) {
        struct sbuf b = {0};
        sbuf_printf(&b, "<%s xmlns=\"%s\"><reason xmlns:%s=\"%s\">%s:%s</reason>%s</%s>", info, info_ns,
                    yp ? "yp" : "sn", yp ? YP_YP_NS : YP_SN_NS, yp ? "yp" : "sn",
                    colon ? colon + 1 : identity, hints ? hints : "", info);
        err->info_xml = sbuf_take(&b, NULL);
    }
    return err;
}

/* The yang-data of an establish- or modify-subscription error, by target. */
static const char *
info_of(int datastore, int modify, const char **ns)
{
    *ns = datastore ? YP_YP_NS : YP_SN_NS;
    if (datastore) {
        return modify ? "modify-subscription-datastore-error-info"
                      : "establish-subscription-datastore-error-info";
    }
    return modify ? "modify-subscription-stream-error-info" : "establish-subscription-stream-error-info";
}

/* Refuse with filter-unsupported, the reason in filter-failure-hint. */
static void
fail_filter(struct rpc_call *call, int datastore, int modify, const char *why)
{
    const char *ns, *info = info_of(datastore, modify, &ns);
    struct sbuf hint = {0};

    sbuf_adds(&hint, "<filter-failure-hint>");
    sbuf_add_xml(&hint, why);
    sbuf_adds(&hint, "</filter-failure-hint>");
    rpc_fail(call, sn_error(SN_MOD ":filter-unsupported", info, ns, hint.buf, "%s", why));
    sbuf_free(&hint);
}

/* The filters, stop-time and update trigger of @p call's input. @return 0, or -1 after answering. */
static int
read_input(struct rpc_call *call, int datastore, int modify, struct push_input *in)
{
    const struct lyd_node *n;
    const char *ns, *info = info_of(datastore, modify, &ns);
    char hint[128];

    memset(in, 0, sizeof *in);
    in->stop_ms = -1;
    in->anchor_ms = -1;
    /* Filters: named ones are not configured on these devices. */
    if ((n = rpc_param(call, "stream-filter-name", 0)) || (n = rpc_param(call, "selection-filter-ref", 0))) {
        char why[300];
        snprintf(why, sizeof why, "No filter named \"%s\" is configured on this device.", lyd_get_value(n));
        fail_filter(call, datastore, modify, why);
        return -1;
    }
    if ((n = rpc_param(call, datastore ? "datastore-subtree-filter" : "stream-subtree-filter", 0))) {
        const struct lyd_node_any *any = (const struct lyd_node_any *)n;
        in->has_filter = 1;
        in->subtree = any->value_type == LYD_ANYDATA_DATATREE ? any->value.tree : NULL;
        if (!in->subtree) {
            fail_filter(call, datastore, modify, "The subtree filter is empty or not XML.");
            return -1;
        }
    } else if ((n = rpc_param(call, datastore ? "datastore-xpath-filter" : "stream-xpath-filter", 0))) {
        const char *unsafe;
        in->has_filter = 1;
        if (!(in->xpath = ops_xpath_to_module_prefixes(call, lyd_get_value(n)))) {
            rpc_fail(call, NULL);
            return -1;
        }
        if ((unsafe = xmlguard_xpath_unsafe(in->xpath))) {
            char why[512];
            snprintf(why, sizeof why, OPS_XPATH_REFUSED, lyd_get_value(n), unsafe);
            fail_filter(call, datastore, modify, why);
            return -1;
        }
    }
    if ((n = rpc_param(call, "stop-time", 0)) && (in->stop_ms = ops_parse_time_ms(lyd_get_value(n))) < 0) {
        rpc_fail(call, edit_err_invalid_value(EDIT_ERR_PROTOCOL, NULL,
                                              "stop-time \"%s\" is not a date-and-time.", lyd_get_value(n)));
        return -1;
    }
    /* Update trigger (RFC 8641 section 3). */
    in->periodic = rpc_param(call, "periodic", 0);
    in->on_change = rpc_param(call, "on-change", 0);
    if (in->periodic) {
        const struct lyd_node *period = child(in->periodic, "period");
        const struct lyd_node *anchor = child(in->periodic, "anchor-time");
        in->period_cs = period ? (uint32_t)strtoul(lyd_get_value(period), NULL, 10) : 0;
        if (!modify && !period) {
            rpc_fail(call, edit_err_missing_element(EDIT_ERR_APP, "period", NULL));
            return -1;
        }
        if (period && in->period_cs < YP_PERIOD_MIN_CS) {
            snprintf(hint, sizeof hint, "<period-hint>%u</period-hint>", YP_PERIOD_MIN_CS);
            rpc_fail(call, sn_error(YP_MOD ":period-unsupported", datastore ? info : NULL, ns, hint,
                                    "Period %" PRIu32 " cs is below this device's smallest, %u cs.",
                                    in->period_cs, YP_PERIOD_MIN_CS));
            return -1;
        }
        if (anchor && (in->anchor_ms = ops_parse_time_ms(lyd_get_value(anchor))) < 0) {
            rpc_fail(call,
                     edit_err_invalid_value(EDIT_ERR_APP, NULL, "anchor-time \"%s\" is not a date-and-time.",
                                            lyd_get_value(anchor)));
            return -1;
        }
    }
    if (in->on_change && (n = child(in->on_change, "dampening-period"))) {
        in->has_dampening = 1;
        in->dampening_cs = (uint32_t)strtoul(lyd_get_value(n), NULL, 10);
    }
    return 0;
}

/* The subscription of the calling session with the input's id; answers no-such-subscription when none. */
static struct yp_sub *
own_sub(struct rpc_call *call, const char *app_tag, const char *info, const char *info_ns)
{
    const struct lyd_node *id = rpc_param(call, "id", 1);
    uint32_t want;

    if (!id) {
        return NULL;
    }
    want = (uint32_t)strtoul(lyd_get_value(id), NULL, 10);
    for (struct yp_sub *sub = call->sess->subs; sub; sub = sub->next) {
        if (sub->id == want) {
            return sub;
        }
    }
    rpc_fail(call,
             sn_error(app_tag, info, info_ns, NULL, "No subscription %" PRIu32 " on this session.", want));
    return NULL;
}

/* After establish-subscription's reply was queued: start what drives it. */
static void
start_after_reply(void *arg)
{
    struct yp_sub *sub = arg;

    if (sub->update == YP_UPDATE_PERIODIC) {
        yp_periodic_start(sub);
    } else if (sub->update == YP_UPDATE_ON_CHANGE) {
        yp_onchange_start(sub);
    } else {
        yp_stream_start(sub);
    }
}

/* Check a datastore subscription's XPath filter by compiling it once, on running (cheap, unlike the
 * operational view): one that does not compile is refused now rather than at every update. A subtree
 * filter cannot fail that way. */
static int
check_selection(struct rpc_call *call, struct yp_sub *sub, int modify)
{
    struct lyd_node *tree = NULL;
    enum fleet_err rc;

    if (!sub->filter || !sub->filter->xpath) {
        return 0;
    }
    rc = filter_xpath(ops_read_ds(call, DS_RUNNING), sub->filter->xpath, &tree);
    lyd_free_all(tree);
    if (rc == FLEET_ERR_INVAL) {
        char why[512];
        snprintf(why, sizeof why, "Invalid XPath filter \"%s\": %s", sub->filter->xpath,
                 ly_errmsg(call->dev->type->schemas.ctx));
        fail_filter(call, 1, modify, why);
        return -1;
    }
    if (rc) {
        rpc_fail(call, NULL);
        return -1;
    }
    return 0;
}

void
op_establish_subscription(struct rpc_call *call)
{
    struct session *s = call->sess;
    const struct lyd_node *stream = rpc_param(call, "stream", 0);
    const struct lyd_node *datastore = rpc_param(call, "datastore", 0);
    const struct lyd_node *encoding = rpc_param(call, "encoding", 0);
    const struct lyd_node *replay = rpc_param(call, "replay-start-time", 0);
    const char *ns, *info = info_of(datastore != NULL, 0, &ns);
    uint64_t now_ms = devview_now_ms(call->fleet);
    struct push_input in;
    struct yp_sub *sub = NULL;
    struct edit_err *err;

    /* RFC 8640 section 3: a session with an RFC 5277 subscription does not take RFC 8639 ones. */
    if (s->sub) {
        rpc_fail(call, edit_err_operation_failed(EDIT_ERR_PROTOCOL, NULL, NULL,
                                                 "The session has a create-subscription (RFC 5277) "
                                                 "subscription; RFC 8640 forbids establish-subscription on "
                                                 "it: open another session."));
        return;
    }
    if (encoding && strcmp(lyd_get_value(encoding), SN_MOD ":encode-xml")) {
        rpc_fail(call, sn_error(SN_MOD ":encoding-unsupported", info, ns, NULL,
                                "Encoding \"%s\" is not supported; this device encodes XML (encode-xml).",
                                lyd_get_value(encoding)));
        return;
    }
    if (stream && datastore) {
        rpc_fail(call, edit_err_invalid_value(EDIT_ERR_APP, NULL,
                                              "A subscription is to a stream or to a datastore, not both."));
        return;
    }
    if (!stream && !datastore) {
        rpc_fail(call, edit_err_missing_element(EDIT_ERR_APP, "stream", NULL));
        return;
    }
    if (read_input(call, datastore != NULL, 0, &in)) {
        goto cleanup;
    }
    if (!(sub = yp_sub_new(s))) {
        rpc_fail(call, NULL);
        goto cleanup;
    }
    /* Target: the NETCONF stream, or running / operational (RFC 8342 identities). */
    if (stream) {
        sub->target = YP_TARGET_STREAM;
        sub->update = YP_UPDATE_EVENTS;
        if ((err = yp_stream_name_check(lyd_get_value(stream)))) {
            rpc_fail(call, sn_error(err->app_tag, info, ns, NULL, "%s", err->message ? err->message : ""));
            edit_err_free(err);
            goto cleanup;
        }
        if (in.periodic || in.on_change) {
            rpc_fail(call,
                     edit_err_invalid_value(EDIT_ERR_APP, NULL,
                                            "periodic and on-change apply to datastore subscriptions."));
            goto cleanup;
        }
        if (replay) {
            int64_t replay_ms = ops_parse_time_ms(lyd_get_value(replay));
            if (replay_ms < 0) {
                rpc_fail(call, edit_err_invalid_value(EDIT_ERR_APP, NULL,
                                                      "replay-start-time \"%s\" is not a date-and-time.",
                                                      lyd_get_value(replay)));
                goto cleanup;
            }
            sub->replay = 1;
            sub->replay_start_ms = (uint64_t)replay_ms;
        }
    } else {
        const char *ds = lyd_get_value(datastore);
        if (!strcmp(ds, "ietf-datastores:running")) {
            sub->target = YP_TARGET_RUNNING;
        } else if (!strcmp(ds, "ietf-datastores:operational")) {
            sub->target = YP_TARGET_OPERATIONAL;
        } else {
            rpc_fail(call,
                     sn_error(YP_MOD ":datastore-not-subscribable", info, ns, NULL,
                              "Datastore \"%s\" cannot be subscribed to; running and operational can.", ds));
            goto cleanup;
        }
        if (!in.periodic == !in.on_change) {
            rpc_fail(call, edit_err_missing_element(EDIT_ERR_APP, "periodic", NULL));
            goto cleanup;
        }
        sub->update = in.periodic ? YP_UPDATE_PERIODIC : YP_UPDATE_ON_CHANGE;
    }
    if (in.stop_ms >= 0) {
        if ((uint64_t)in.stop_ms <= now_ms) {
            rpc_fail(call, edit_err_invalid_value(EDIT_ERR_APP, NULL, "stop-time is in the past."));
            goto cleanup;
        }
        sub->stop_ms = (uint64_t)in.stop_ms;
    }
    if (yp_sub_set_filter(sub, in.subtree, in.xpath)) {
        rpc_fail(call, NULL);
        goto cleanup;
    }
    /* Update trigger. */
    if (sub->update == YP_UPDATE_PERIODIC) {
        sub->period_cs = in.period_cs;
        sub->anchor_ms = in.anchor_ms >= 0 ? (uint64_t)in.anchor_ms : now_ms;
    } else if (sub->update == YP_UPDATE_ON_CHANGE) {
        const struct lyd_node *sync = child(in.on_change, "sync-on-start");
        const struct lyd_node *n;
        sub->dampening_cs = in.dampening_cs;
        sub->sync_on_start = !sync || !strcmp(lyd_get_value(sync), "true");
        LY_LIST_FOR(lyd_child(in.on_change), n)
        {
            static const char *const kinds[] = {"create", "delete", "insert", "move", "replace"};
            if (strcmp(LYD_NAME(n), "excluded-change")) {
                continue;
            }
            for (unsigned k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
                if (!strcmp(lyd_get_value(n), kinds[k])) {
                    sub->excluded |= (uint8_t)(1u << k);
                }
            }
        }
    }
    /* Checks that need the record: the selection, then the trigger's or the stream's own. */
    if (sub->target != YP_TARGET_STREAM && check_selection(call, sub, 0)) {
        goto cleanup;
    }
    err = sub->update == YP_UPDATE_ON_CHANGE ? yp_onchange_check(sub)
          : sub->target == YP_TARGET_STREAM  ? yp_stream_check(sub)
                                             : NULL;
    if (err) {
        if (!err->info_xml && err->app_tag) {
            /* The error-info the RFC defines, around the check's reason. */
            struct edit_err *full =
                sn_error(err->app_tag, info, ns, NULL, "%s", err->message ? err->message : "");
            if (full) {
                edit_err_free(err);
                err = full;
            }
        }
        rpc_fail(call, err);
        goto cleanup;
    }
    /* Answer the id; the subscription starts once the reply is queued. */
    yp_sub_link(sub);
    call->has_data = 1;
    call->output = 1;
    sbuf_printf(&call->data, "<id xmlns=\"" YP_SN_NS "\">%" PRIu32 "</id>", sub->id);
    if (sub->target == YP_TARGET_STREAM && sub->replay_from_ms) {
        /* RFC 8639 2.4.2.1: the log starts later than asked; the replay starts there. */
        char from[40];
        notif_format_time(sub->replay_from_ms, from, sizeof from);
        sbuf_printf(&call->data,
                    "<replay-start-time-revision xmlns=\"" YP_SN_NS "\">%s</replay-start-time-revision>",
                    from);
    }
    call->then = start_after_reply;
    call->then_arg = sub;
    sub = NULL;

cleanup:
    if (sub) {
        if (sub->update == YP_UPDATE_ON_CHANGE) {
            yp_onchange_stop(sub);
        }
        yp_sub_free(sub);
    }
    free(in.xpath);
}

/* The xmlns of each module name @p xpath uses as a prefix (it holds module names, see
 * ops_xpath_to_module_prefixes()), so that XML readers resolve them; each is declared once. */
static void
xpath_prefixes(struct sbuf *b, const struct ly_ctx *ctx, const char *xpath)
{
    const char *p = xpath;
    size_t from = b->len;

    while (*p) {
        const char *start = p;
        if (*p == '\'' || *p == '"') {
            const char *end = strchr(p + 1, *p);
            p = end ? end + 1 : p + strlen(p);
            continue;
        }
        if (!isalpha((unsigned char)*p) && *p != '_') {
            p++;
            continue;
        }
        while (isalnum((unsigned char)*p) || *p == '_' || *p == '-' || *p == '.') {
            p++;
        }
        if (*p == ':' && p[1] != ':') {
            size_t len = (size_t)(p - start);
            char name[128], decl[140];
            const struct lys_module *mod;
            if (len < sizeof name) {
                memcpy(name, start, len);
                name[len] = '\0';
                mod = ly_ctx_get_module_implemented(ctx, name);
                snprintf(decl, sizeof decl, " xmlns:%s=\"", name);
                /* Declared once: an earlier use of the same name already did. */
                if (mod && (b->len == from || !strstr(b->buf + from, decl))) {
                    sbuf_printf(b, "%s%s\"", decl, mod->ns);
                }
            }
        }
    }
}

/* subscription-modified's body: the subscription as it now is (RFC 8639 2.7.2). */
static void
print_modified(const struct yp_sub *sub, struct sbuf *b)
{
    if (sub->target == YP_TARGET_STREAM) {
        sbuf_adds(b, "<stream>NETCONF</stream>");
    } else {
        sbuf_printf(b,
                    "<datastore xmlns=\"" YP_YP_NS
                    "\" xmlns:ds=\"urn:ietf:params:xml:ns:yang:ietf-datastores\">%s"
                    "</datastore>",
                    sub->target == YP_TARGET_RUNNING ? "ds:running" : "ds:operational");
    }
    if (sub->filter && sub->filter->xpath) {
        sbuf_printf(b, "<%s%s",
                    sub->target == YP_TARGET_STREAM ? "stream-xpath-filter" : "datastore-xpath-filter",
                    sub->target == YP_TARGET_STREAM ? "" : " xmlns=\"" YP_YP_NS "\"");
        xpath_prefixes(b, sub->sess->dev->type->schemas.ctx, sub->filter->xpath);
        sbuf_adds(b, ">");
        sbuf_add_xml(b, sub->filter->xpath);
        sbuf_printf(b, "</%s>",
                    sub->target == YP_TARGET_STREAM ? "stream-xpath-filter" : "datastore-xpath-filter");
    } else if (sub->filter && sub->filter->subtree) {
        char *text = NULL;
        const char *name =
            sub->target == YP_TARGET_STREAM ? "stream-subtree-filter" : "datastore-subtree-filter";
        lyd_print_mem(&text, sub->filter->subtree, LYD_XML, LYD_PRINT_SHRINK | LYD_PRINT_WITHSIBLINGS);
        sbuf_printf(b, "<%s%s>%s</%s>", name,
                    sub->target == YP_TARGET_STREAM ? "" : " xmlns=\"" YP_YP_NS "\"", text ? text : "", name);
        free(text);
    }
    if (sub->stop_ms) {
        char t[40];
        notif_format_time(sub->stop_ms, t, sizeof t);
        sbuf_printf(b, "<stop-time>%s</stop-time>", t);
    }
    sbuf_adds(b, "<encoding>encode-xml</encoding>");
    if (sub->update == YP_UPDATE_PERIODIC) {
        char t[40];
        notif_format_time(sub->anchor_ms, t, sizeof t);
        sbuf_printf(b,
                    "<periodic xmlns=\"" YP_YP_NS "\"><period>%" PRIu32
                    "</period><anchor-time>%s</anchor-time>"
                    "</periodic>",
                    sub->period_cs, t);
    } else if (sub->update == YP_UPDATE_ON_CHANGE) {
        sbuf_printf(b,
                    "<on-change xmlns=\"" YP_YP_NS "\"><dampening-period>%" PRIu32
                    "</dampening-period></on-change>",
                    sub->dampening_cs);
    }
}

/* After modify-subscription's ok: subscription-modified, then the subscription goes on as modified. */
static void
modified_after_reply(void *arg)
{
    struct yp_sub *sub = arg;
    uint64_t now_ms = devview_now_ms(sub->sess->worker->fleet);
    struct sbuf b = {0};

    print_modified(sub, &b);
    if (!b.failed) {
        yp_send_state(sub, "subscription-modified", b.buf, now_ms);
    }
    sbuf_free(&b);
    /* RFC 8639 2.4.3: a modified suspended subscription is resumed. */
    if (sub->state == YP_STATE_SUSPENDED) {
        sub->state = YP_STATE_ACTIVE;
        yp_send_state(sub, "subscription-resumed", NULL, now_ms);
    }
    if (sub->update == YP_UPDATE_PERIODIC) {
        yp_periodic_start(sub);
    }
}

void
op_modify_subscription(struct rpc_call *call)
{
    struct yp_sub *sub;
    struct push_input in;
    uint64_t now_ms = devview_now_ms(call->fleet);
    const char *ns, *info;

    if (!(sub = own_sub(call, SN_MOD ":no-such-subscription", NULL, NULL))) {
        if (call->errs && call->errs->app_tag) {
            /* Which yang-data carries the reason is not known without the subscription: the stream one. */
            info = info_of(0, 1, &ns);
            edit_err_free(call->errs);
            call->errs = NULL;
            rpc_fail(call, sn_error(SN_MOD ":no-such-subscription", info, ns, NULL,
                                    "No subscription with this id on this session."));
        }
        return;
    }
    if (read_input(call, sub->target != YP_TARGET_STREAM, 1, &in)) {
        goto cleanup;
    }
    if ((in.periodic && sub->update != YP_UPDATE_PERIODIC) ||
        (in.on_change && sub->update != YP_UPDATE_ON_CHANGE)) {
        rpc_fail(call,
                 edit_err_invalid_value(EDIT_ERR_APP, NULL,
                                        "modify-subscription cannot change a subscription between periodic "
                                        "and on-change; delete it and establish another."));
        goto cleanup;
    }
    if (in.stop_ms >= 0 && (uint64_t)in.stop_ms <= now_ms) {
        rpc_fail(call, edit_err_invalid_value(EDIT_ERR_APP, NULL, "stop-time is in the past."));
        goto cleanup;
    }
    /* The new filter is tried on a copy of the record; the subscription takes it only when it passes. */
    if (in.has_filter) {
        struct yp_sub probe = *sub;
        struct edit_err *err = NULL;
        probe.filter = NULL;
        if (yp_sub_set_filter(&probe, in.subtree, in.xpath)) {
            rpc_fail(call, NULL);
            goto cleanup;
        }
        if ((sub->target != YP_TARGET_STREAM && check_selection(call, &probe, 1)) ||
            (sub->update == YP_UPDATE_ON_CHANGE && (err = yp_onchange_check(&probe)))) {
            if (err) {
                rpc_fail(call, err);
            }
            yp_sub_set_filter(&probe, NULL, NULL);
            goto cleanup;
        }
        yp_sub_set_filter(sub, NULL, NULL);
        sub->filter = probe.filter; /* the probe's reference becomes the subscription's */
    }
    if (in.stop_ms >= 0) {
        sub->stop_ms = (uint64_t)in.stop_ms;
    }
    if (in.periodic) {
        if (in.period_cs) {
            sub->period_cs = in.period_cs;
        }
        if (in.anchor_ms >= 0) {
            sub->anchor_ms = (uint64_t)in.anchor_ms;
        }
    }
    if (in.has_dampening) {
        sub->dampening_cs = in.dampening_cs;
    }
    if (sub->update == YP_UPDATE_PERIODIC) {
        wheel_remove(sub->sess->worker->wheel, &sub->tick);
    }
    call->then = modified_after_reply;
    call->then_arg = sub;
    goto cleanup;

cleanup:
    free(in.xpath);
}

void
op_delete_subscription(struct rpc_call *call)
{
    struct yp_sub *sub =
        own_sub(call, SN_MOD ":no-such-subscription", "delete-subscription-error-info", YP_SN_NS);

    /* RFC 8639 2.4.4: the deleter has its ok; no notification. */
    if (sub) {
        yp_end(sub, NULL);
    }
}

void
op_kill_subscription(struct rpc_call *call)
{
    const struct lyd_node *id = rpc_param(call, "id", 1);
    struct yp_sub *sub;
    uint32_t want;

    if (!id) {
        return;
    }
    want = (uint32_t)strtoul(lyd_get_value(id), NULL, 10);
    if (!(sub = yp_find(call->dev, want))) {
        rpc_fail(call, sn_error(SN_MOD ":no-such-subscription", "delete-subscription-error-info", YP_SN_NS,
                                NULL, "No subscription %" PRIu32 " on this device.", want));
        return;
    }
    /* Any session may kill (RFC 8639 2.4.5); the subscriber learns it from subscription-terminated. */
    yp_end(sub, SN_MOD ":no-such-subscription");
}

/* After resync-subscription's ok: a push-update of the whole selection. */
static void
resync_after_reply(void *arg)
{
    yp_onchange_resync(arg);
}

void
op_resync_subscription(struct rpc_call *call)
{
    struct yp_sub *sub =
        own_sub(call, YP_MOD ":no-such-subscription-resync", "resync-subscription-error", YP_YP_NS);

    if (!sub) {
        return;
    }
    if (sub->update != YP_UPDATE_ON_CHANGE) {
        rpc_fail(call, sn_error(YP_MOD ":no-such-subscription-resync", "resync-subscription-error", YP_YP_NS,
                                NULL, "Subscription %" PRIu32 " is not an on-change subscription.", sub->id));
        return;
    }
    call->then = resync_after_reply;
    call->then_arg = sub;
}
