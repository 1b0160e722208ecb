/*
 * From message to reply. libyang parses the whole <rpc> (envelope and
 * operation, LYD_TYPE_RPC_NETCONF); the handler table maps the operation's
 * (module, name) to a handler; the reply echoes every attribute of <rpc>
 * (RFC 6241 section 4.2) and carries <ok/>, <data> or rpc-errors. When
 * libyang refuses a message, a second, schema-free parse tells a message
 * that is not XML from an unknown operation or a missing message-id.
 * Plain edit-config and get-schema messages are answered on fast paths
 * (rpc_fast.h) before libyang sees them.
 */
#include "rpc.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "device_ctl.h"
#include "devview.h"
#include "event_id.h"
#include "log.h"
#include "metrics_count.h"
#include "notif_file.h"
#include "ops.h"
#include "rpc_custom.h"
#include "rpc_fast.h"
#include "stream.h"
#include "syslog_chan.h"
#include "xmlguard.h"
#include "xmlscan.h"

#define NC_BASE_NS "urn:ietf:params:xml:ns:netconf:base:1.0"
/* The EXI capability draft's namespace (start-exi), which OpenDaylight's tools speak with --exi true. */
#define RPC_EXI_NS "urn:ietf:params:xml:ns:netconf:exi:1.0"
/* Deepest nesting unqualified_element() follows; deeper messages keep libyang's message. */
#define RPC_SCAN_MAX_DEPTH 32

struct rpc_entry {
    const char *module;  /* module defining the RPC */
    const char *name;    /* RPC name */
    rpc_handler handler; /* what answers it */
};

static const struct rpc_entry rpc_table[] = {
    {"ietf-netconf", "get", op_get},
    {"ietf-netconf", "get-config", op_get_config},
    {"ietf-netconf", "edit-config", op_edit_config},
    {"ietf-netconf", "copy-config", op_copy_config},
    {"ietf-netconf", "delete-config", op_delete_config},
    {"ietf-netconf", "validate", op_validate},
    {"ietf-netconf", "commit", op_commit},
    {"ietf-netconf", "discard-changes", op_discard_changes},
    {"ietf-netconf", "lock", op_lock},
    {"ietf-netconf", "unlock", op_unlock},
    {"ietf-netconf", "close-session", op_close_session},
    {"ietf-netconf", "kill-session", op_kill_session},
    {"ietf-netconf-monitoring", "get-schema", op_get_schema},
    {"ietf-netconf-nmda", "get-data", op_get_data},
    {"ietf-netconf-nmda", "edit-data", op_edit_data},
    {"notifications", "create-subscription", op_create_subscription},
    {"ietf-subscribed-notifications", "establish-subscription", op_establish_subscription},
    {"ietf-subscribed-notifications", "modify-subscription", op_modify_subscription},
    {"ietf-subscribed-notifications", "delete-subscription", op_delete_subscription},
    {"ietf-subscribed-notifications", "kill-subscription", op_kill_subscription},
    {"ietf-yang-push", "resync-subscription", op_resync_subscription},
};

static int
rpc_has_message_id(const struct lyd_node *envelope)
{
    for (const struct lyd_attr *a = ((const struct lyd_node_opaq *)envelope)->attr; a; a = a->next) {
        if (!strcmp(a->name.name, "message-id") && !a->name.prefix) {
            return 1;
        }
    }
    return 0;
}

static rpc_handler
find_handler(const struct lysc_node *schema)
{
    for (size_t i = 0; i < sizeof rpc_table / sizeof rpc_table[0]; i++) {
        if (!strcmp(rpc_table[i].name, schema->name) && !strcmp(rpc_table[i].module, schema->module->name)) {
            return rpc_table[i].handler;
        }
    }
    return NULL;
}

void
rpc_fail(struct rpc_call *call, struct edit_err *err)
{
    if (!err) {
        err = edit_err_resource_denied(EDIT_ERR_APP, "Out of memory.");
    }
    if (err) {
        edit_err_append(&call->errs, err);
    }
}

const struct lyd_node *
rpc_param(struct rpc_call *call, const char *name, int required)
{
    const struct lyd_node *child;

    LY_LIST_FOR(lyd_child(call->op), child)
    {
        if (!strcmp(LYD_NAME(child), name)) {
            return child;
        }
    }
    if (required) {
        rpc_fail(call, edit_err_missing_element(EDIT_ERR_PROTOCOL, name, NULL));
    }
    return NULL;
}

/* The attributes of <rpc>, to repeat on <rpc-reply>; prefixed ones bring their namespace. */
static void
print_rpc_attrs(struct sbuf *b, const struct lyd_node *envelope)
{
    const struct lyd_attr *a;

    if (!envelope || envelope->schema) {
        return;
    }
    for (a = ((const struct lyd_node_opaq *)envelope)->attr; a; a = a->next) {
        const struct lyd_attr *same = ((const struct lyd_node_opaq *)envelope)->attr;
        /* An attribute given twice is repeated once: a tag may not carry it twice. */
        while (same != a && (strcmp(same->name.name, a->name.name) ||
                             (same->name.prefix ? !a->name.prefix || strcmp(same->name.prefix, a->name.prefix)
                                                : !!a->name.prefix))) {
            same = same->next;
        }
        if (same != a) {
            continue;
        }
        if (a->name.prefix && a->name.module_ns) {
            const struct lyd_attr *earlier = ((const struct lyd_node_opaq *)envelope)->attr;
            /* Each prefix is declared once: a repeated xmlns:p is not XML. */
            while (earlier != a && !(earlier->name.prefix && !strcmp(earlier->name.prefix, a->name.prefix))) {
                earlier = earlier->next;
            }
            if (earlier == a) {
                sbuf_printf(b, " xmlns:%s=\"", a->name.prefix);
                sbuf_add_xml(b, a->name.module_ns);
                sbuf_adds(b, "\"");
            }
            sbuf_printf(b, " %s:%s=\"", a->name.prefix, a->name.name);
        } else {
            sbuf_printf(b, " %s=\"", a->name.name);
        }
        sbuf_add_xml(b, a->value);
        sbuf_adds(b, "\"");
    }
}

/*
 * The attributes of the <rpc> start tag read from the text, for the reply to a message libyang could not
 * read: RFC 6241 4.2 wants them repeated whenever they can be read. Attributes a well-formed tag could
 * not carry are left out; nothing is added when the first tag is not an <rpc>.
 */
static void
scan_rpc_attrs(const char *msg, struct sbuf *out)
{
    struct xmlscan_scope scope = {.count = 0};
    struct xmlscan_tag t;

    if (xmlscan_read_tag(xmlscan_skip_misc(msg), &t) || t.end || !xmlscan_eq(t.local, t.local_len, "rpc")) {
        return;
    }
    (void)xmlscan_push_decls(&scope, &t);                /* what it read before any trouble is in scope */
    (void)xmlscan_print_attrs(&scope, &t, 0, out, NULL); /* lenient: what it printed is whole */
}

/*
 * An element without any XML namespace, which libyang refuses ("Missing XML namespace."): the error
 * naming it, or NULL when the scan finds none (or cannot follow the text). Elements that belong to the
 * base namespace (an operation's parameters, such as <config>) say so.
 */
static struct edit_err *
unqualified_element(const char *msg)
{
    struct xmlscan_scope scope = {.count = 0};
    struct xmlscan_tag open[RPC_SCAN_MAX_DEPTH];
    size_t marks[RPC_SCAN_MAX_DEPTH];
    int base[RPC_SCAN_MAX_DEPTH]; /* 1: the open element holds base-namespace parameters */
    size_t depth = 0;
    struct xmlscan_tag t;
    const char *p = msg;

    while (!xmlscan_next_tag(p, &t)) {
        const struct xmlscan_ns *ns;
        p = t.next;
        if (t.end) {
            if (!depth || !xmlscan_same_qname(&open[depth - 1], &t)) {
                return NULL;
            }
            scope.count = marks[--depth];
            continue;
        }
        if (depth == RPC_SCAN_MAX_DEPTH) {
            return NULL;
        }
        marks[depth] = scope.count;
        if (xmlscan_push_decls(&scope, &t)) {
            return NULL;
        }
        ns = xmlscan_resolve(&scope, t.prefix, t.prefix_len);
        if (!ns && !t.prefix) {
            char name[64];
            struct edit_err *err;
            snprintf(name, sizeof name, "%.*s", (int)(t.local_len < 63 ? t.local_len : 63), t.local);
            if (!depth) {
                return edit_err_malformed_message(
                    "The message is not a NETCONF <rpc>: <%s> has no XML namespace "
                    "(an <rpc> is in the base namespace " NC_BASE_NS ").",
                    name);
            }
            err = edit_err_unknown_element(EDIT_ERR_PROTOCOL, name, NULL);
            if (err) {
                char parent[64];
                char text[400];
                snprintf(parent, sizeof parent, "%.*s",
                         (int)(open[depth - 1].local_len < 63 ? open[depth - 1].local_len : 63),
                         open[depth - 1].local);
                if (base[depth - 1]) {
                    snprintf(text, sizeof text,
                             "<%s> must be in the base namespace " NC_BASE_NS
                             " (it has no XML namespace: write <%s xmlns=\"" NC_BASE_NS "\">).",
                             name, name);
                } else {
                    snprintf(text, sizeof text,
                             "Element <%s> (in <%s>) has no XML namespace: it needs the namespace of the "
                             "module that defines it.",
                             name, parent);
                }
                free(err->message);
                err->message = strdup(text);
            }
            return err;
        }
        if (!t.empty) {
            /* Below <rpc> and an operation of the base namespace, parameters are base elements too;
             * the content of <config>, <filter> and the like is data. */
            int is_base = ns && xmlscan_eq(ns->uri, ns->uri_len, NC_BASE_NS);
            base[depth] =
                is_base && depth &&
                (xmlscan_eq(open[depth - 1].local, open[depth - 1].local_len, "rpc") ||
                 xmlscan_eq(t.local, t.local_len, "source") || xmlscan_eq(t.local, t.local_len, "target"));
            open[depth++] = t;
        } else {
            scope.count = marks[depth];
        }
    }
    return NULL;
}

/* RFC 6241 appendix A: malformed-message is new in base:1.1 and never sent to base:1.0 sessions. */
static const char *
tag_for_session(const struct session *s, const char *tag)
{
    if (s->out_mode == FRAME_EOM && !strcmp(tag, "malformed-message")) {
        return "operation-failed";
    }
    return tag;
}

static void
print_errors(struct sbuf *b, const struct session *s, const struct edit_err *e)
{
    for (; e; e = e->next) {
        sbuf_printf(b,
                    "<rpc-error><error-type>%s</error-type><error-tag>%s</error-tag>"
                    "<error-severity>error</error-severity>",
                    edit_err_type_name(e->type), tag_for_session(s, e->tag));
        if (e->app_tag) {
            sbuf_adds(b, "<error-app-tag>");
            sbuf_add_xml(b, e->app_tag);
            sbuf_adds(b, "</error-app-tag>");
        }
        if (e->path) {
            sbuf_adds(b, "<error-path>");
            sbuf_add_xml(b, e->path);
            sbuf_adds(b, "</error-path>");
        }
        if (e->message) {
            sbuf_adds(b, "<error-message xml:lang=\"en\">");
            sbuf_add_xml(b, e->message);
            sbuf_adds(b, "</error-message>");
        }
        if (e->info_xml) {
            sbuf_printf(b, "<error-info>%s</error-info>", e->info_xml);
        }
        sbuf_adds(b, "</rpc-error>");
    }
}

/* Queue a whole reply, after the injected latency if any (--netconf-latency). */
static void
send_message(struct session *s, const struct sbuf *b)
{
    if (b->failed) {
        log_error("device %u session %u: out of memory printing a reply, closing", s->dev->index, s->id);
        sess_close(s, 0);
    } else if (s->dev->ctl && s->dev->ctl->has_nc_latency) {
        const struct device_ctl *ctl = s->dev->ctl;
        uint32_t span = ctl->nc_max_ms - ctl->nc_min_ms + 1;
        uint64_t draw = dyn_hash(devview_seed(s->dev), ++s->replies_delayed, 0x1a7e2c);
        sess_send_delayed(s, b->buf, b->len, ctl->nc_min_ms + (uint32_t)(draw % span));
    } else if (s->dev->group->cfg.netconf_latency_max_ms) {
        const struct fleet_config *cfg = &s->dev->group->cfg;
        uint32_t span = cfg->netconf_latency_max_ms - cfg->netconf_latency_min_ms + 1;
        uint64_t draw = dyn_hash(devview_seed(s->dev), ++s->replies_delayed, 0x1a7e2c);
        sess_send_delayed(s, b->buf, b->len, cfg->netconf_latency_min_ms + (uint32_t)(draw % span));
    } else {
        sess_send(s, b->buf, b->len);
    }
}

/* @p attrs: the <rpc> attributes to repeat, ready to print (see print_rpc_attrs()). */
static void
send_reply(struct session *s, const char *attrs, size_t attrs_len, struct rpc_call *call)
{
    struct sbuf b = {0};

    sbuf_reserve(&b, call->data.len + attrs_len + 256);
    sbuf_adds(&b, "<rpc-reply xmlns=\"" NC_BASE_NS "\"");
    sbuf_add(&b, attrs ? attrs : "", attrs_len);
    sbuf_adds(&b, ">");
    if (call->errs) {
        print_errors(&b, s, call->errs);
        s->out_rpc_errors++;
        s->dev->stats.out_rpc_errors++;
    } else if (call->has_data && call->output) {
        sbuf_add(&b, call->data.buf ? call->data.buf : "", call->data.len);
    } else if (call->has_data) {
        if (call->data_ns) {
            sbuf_printf(&b, "<data xmlns=\"%s\">", call->data_ns);
        } else {
            sbuf_adds(&b, "<data>");
        }
        sbuf_add(&b, call->data.buf ? call->data.buf : "", call->data.len);
        sbuf_adds(&b, "</data>");
    } else {
        sbuf_adds(&b, "<ok/>");
    }
    sbuf_adds(&b, "</rpc-reply>");
    send_message(s, &b);
    sbuf_free(&b);
}

/*
 * An nc:operation attribute with a value that is not an operation: libyang
 * refuses the whole message for it; RFC 6241 wants bad-attribute naming the
 * attribute and its element. Returns the error or NULL when none is found.
 */
static struct edit_err *
find_bad_operation_attr(const char *msg)
{
    static const char *const ops[] = {"merge", "replace", "create", "delete", "remove"};
    const char *p = msg;

    while ((p = strstr(p, ":operation="))) {
        const char *value = p + sizeof ":operation=" - 1;
        const char *end;
        const char *tag;
        size_t tag_len;
        int known = 0;

        p = value;
        if (*value != '"' && *value != '\'') {
            continue;
        }
        end = strchr(value + 1, *value);
        if (!end) {
            break;
        }
        for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
            known |=
                strlen(ops[i]) == (size_t)(end - value - 1) && !strncmp(value + 1, ops[i], strlen(ops[i]));
        }
        if (known) {
            continue;
        }
        /* The element carrying it: back to its '<', then its local name. */
        for (tag = p; tag > msg && *tag != '<'; tag--) {
        }
        tag++;
        tag_len = strcspn(tag, " \t\r\n/>");
        if (memchr(tag, ':', tag_len)) {
            const char *colon = memchr(tag, ':', tag_len);
            tag_len -= (size_t)(colon + 1 - tag);
            tag = colon + 1;
        }
        {
            char *elem = strndup(tag, tag_len);
            char *val = strndup(value + 1, (size_t)(end - value - 1));
            struct edit_err *err = edit_err_bad_attribute(EDIT_ERR_PROTOCOL, "operation", elem ? elem : "",
                                                          "Unknown operation \"%s\".", val ? val : "");
            free(elem);
            free(val);
            return err;
        }
    }
    return NULL;
}

/* The first quoted word of a libyang message ('Node "bogus" not found ...'), for bad-element. */
static char *
first_quoted(const char *msg)
{
    const char *start = strchr(msg, '"');
    const char *end = start ? strchr(start + 1, '"') : NULL;

    return end ? strndup(start + 1, (size_t)(end - start - 1)) : NULL;
}

/* A known operation with bad parameters: the error-tag from libyang's reason. */
static struct edit_err *
parameter_error(const char *msg, const char *why)
{
    struct edit_err *err = find_bad_operation_attr(msg);
    char *name;

    if (err) {
        return err;
    }
    if (strstr(why, "not found as a child") || strstr(why, "not found in the")) {
        name = first_quoted(why);
        err = edit_err_unknown_element(EDIT_ERR_PROTOCOL, name ? name : "", NULL);
        if (err) {
            free(err->message);
            err->message = strdup(why);
        }
        free(name);
        return err;
    }
    if (strstr(why, "Mandatory") || strstr(why, "Missing")) {
        name = first_quoted(why);
        err = edit_err_missing_element(EDIT_ERR_PROTOCOL, name ? name : "", NULL);
        free(name);
        return err;
    }
    return edit_err_invalid_value(EDIT_ERR_PROTOCOL, NULL, "%s", why);
}

/*
 * The message did not parse as an RPC of the loaded schemas: find out why,
 * for the right error. The second parse uses a context without modules, so
 * every element is opaque and only XML itself can fail; the envelope it
 * yields carries the attributes the reply must echo.
 */
static struct edit_err *
diagnose(struct session *s, const char *msg, struct lyd_node **envelope)
{
    struct fleet *fleet = s->worker->fleet;
    struct ly_ctx *ctx = s->dev->type->schemas.ctx;
    const char *why = ly_errmsg(ctx);
    char *why_copy = strdup(why ? why : "invalid message");
    struct lyd_node *tree = NULL;
    const struct lyd_node_opaq *root;
    const struct lyd_node_opaq *op;
    const struct lys_module *mod;
    struct edit_err *err = NULL;

    *envelope = NULL;
    if (!why_copy) {
        goto cleanup;
    }
    if (lyd_parse_data_mem(fleet->bare_ctx, msg, LYD_XML, LYD_PARSE_OPAQ | LYD_PARSE_ONLY, 0, &tree) ||
        !tree) {
        err = unqualified_element(msg);
        if (!err) {
            err = edit_err_malformed_message("Malformed message: %s", why_copy);
        }
        goto cleanup;
    }
    root = (const struct lyd_node_opaq *)tree;
    if (tree->schema || tree->next || strcmp(root->name.name, "rpc") || !root->name.module_ns ||
        strcmp(root->name.module_ns, NC_BASE_NS)) {
        err = edit_err_malformed_message("The message is not a NETCONF <rpc>.");
        goto cleanup;
    }
    if (!rpc_has_message_id(tree)) {
        err = edit_err_missing_attribute(EDIT_ERR_RPC, "message-id", "rpc");
        goto cleanup;
    }
    /* The envelope is usable for the reply's attributes from here on. */
    *envelope = tree;
    tree = NULL;
    op = (const struct lyd_node_opaq *)lyd_child(*envelope);
    if (!op) {
        err = edit_err_missing_element(EDIT_ERR_RPC, "operation", NULL);
    } else if (op->name.module_ns && !strcmp(op->name.module_ns, RPC_EXI_NS)) {
        /* EXI: known, never advertised, not spoken; a clear refusal rather than an unknown namespace */
        err = edit_err_operation_not_supported(EDIT_ERR_PROTOCOL, "EXI is not supported: \"%s\" is refused.",
                                               op->name.name);
    } else if (!op->name.module_ns || !(mod = ly_ctx_get_module_implemented_ns(ctx, op->name.module_ns))) {
        err = edit_err_unknown_namespace(EDIT_ERR_PROTOCOL, op->name.name, op->name.module_ns);
    } else if (!lys_find_child(NULL, mod, op->name.name, 0, LYS_RPC, 0)) {
        err = edit_err_operation_not_supported(EDIT_ERR_PROTOCOL, "Operation \"%s\" is not supported.",
                                               op->name.name);
    } else {
        err = parameter_error(msg, why_copy);
    }

cleanup:
    lyd_free_all(tree);
    free(why_copy);
    return err;
}

/*
 * After an operation wrote running: tell the device view (interface statuses may have changed), and report
 * the change as one event (event.h): the device's subscribers get RFC 6470 netconf-config-change, its syslog
 * sinks the catalog's config-commit line, both with the event's id.
 */
static void
note_running_write(struct session *s, uint32_t gen_before)
{
    struct device *dev = s->dev;
    uint64_t now_ms, event_id;

    if (dev->ds.running_gen == gen_before) {
        return;
    }
    now_ms = devview_now_ms(dev->worker->fleet);
    devview_running_changed(dev, now_ms);
    event_id = event_next_id(dev);
    if (stream_has_subscribers(dev)) {
        char time_text[40], peer[NETADDR_TEXT_BYTES];
        struct sbuf b = {0};
        notif_format_time(now_ms, time_text, sizeof time_text);
        sbuf_printf(&b,
                    "<notification "
                    "xmlns=\"urn:ietf:params:xml:ns:netconf:notification:1.0\"><eventTime>%s</eventTime>"
                    "<netconf-config-change xmlns=\"urn:ietf:params:xml:ns:yang:ietf-netconf-notifications\">"
                    "<changed-by><username>anonymous</username><session-id>%u</session-id>"
                    "<source-host>%s</source-host></changed-by><datastore>running</datastore>",
                    time_text, (unsigned)s->id, sess_peer_text(s, 0, peer, sizeof peer));
        event_add_leaf(&b, event_id, dev->worker->fleet->cfg.run_tag);
        sbuf_adds(&b, "</netconf-config-change></notification>");
        if (!b.failed) {
            stream_emit(dev, b.buf, b.len, now_ms);
        }
        sbuf_free(&b);
    }
    {
        char peer[NETADDR_TEXT_BYTES];
        /* As the notification names it: the transport's user (TLS), else anonymous. */
        struct syslog_who who = {.user = s->username ? s->username : "anonymous",
                                 .peer = sess_peer_text(s, 0, peer, sizeof peer)};
        syslog_chan_event(dev, "config-commit", -1, event_id, &who);
    }
}

/* Count an answered edit-config or commit on its device (the report's "edits"), beside the worker's metrics.
 */
static void
count_device_edit(struct device *dev, const char *name, int error)
{
    if (!name) {
        return;
    }
    if (!strcmp(name, "edit-config")) {
        dev->edits.edit_configs++;
        dev->edits.edit_config_errors += error != 0;
    } else if (!strcmp(name, "commit")) {
        dev->edits.commits++;
        dev->edits.commit_errors += error != 0;
    }
}

/*
 * --rpc-config: a request matching a configured input gets its device's next configured output, before any
 * built-in operation (edit-config's fast path included). Returns -1 when the message is not one of them.
 */
static int
process_custom(struct session *s, const char *msg)
{
    struct rpc_custom *table = s->dev->group->rpc_custom;
    struct lyd_node *envelope = NULL;
    const struct rpc_custom_output *out;
    struct sbuf b = {0};
    uint32_t entry;

    if (!table || rpc_custom_match(table, msg, &envelope, &entry)) {
        return -1;
    }
    out = rpc_custom_next(table, device_group_pos(s->dev), entry);
    s->in_rpcs++;
    s->dev->stats.in_rpcs++;
    sbuf_reserve(&b, out->xml_len + 256);
    sbuf_adds(&b, "<rpc-reply xmlns=\"" NC_BASE_NS "\"");
    print_rpc_attrs(&b, envelope);
    sbuf_adds(&b, ">");
    sbuf_add(&b, out->xml, out->xml_len);
    sbuf_adds(&b, "</rpc-reply>");
    if (out->is_error) {
        s->out_rpc_errors++;
        s->dev->stats.out_rpc_errors++;
    }
    send_message(s, &b);
    metrics_count_rpc(s->worker, LYD_NAME(lyd_child(envelope)), out->is_error);
    count_device_edit(s->dev, LYD_NAME(lyd_child(envelope)), out->is_error);
    sbuf_free(&b);
    lyd_free_all(envelope);
    return 0;
}

/* The <edit-config> fast path (rpc_fast.h); returns -1 when the message needs the full path. */
static int
process_fast_edit(struct session *s, const char *msg)
{
    struct fleet *fleet = s->worker->fleet;
    struct rpc_call call = {.sess = s, .dev = s->dev, .fleet = fleet, .raw = msg};
    struct rpc_fast_edit fe;
    struct lyd_node *config = NULL;
    struct ops_edit_params params;
    int rc = -1;

    if (rpc_fast_edit_scan(msg, &fe) || rpc_fast_edit_config(&fe, s->dev->type->schemas.ctx, &config)) {
        goto cleanup;
    }
    s->in_rpcs++;
    s->dev->stats.in_rpcs++;
    params = (struct ops_edit_params){fe.target, fe.default_op, fe.test_option, fe.error_option, config};
    {
        uint32_t gen = s->dev->ds.running_gen;
        ops_edit_config_apply(&call, &params);
        note_running_write(s, gen);
    }
    send_reply(s, fe.reply_attrs.buf, fe.reply_attrs.len, &call);
    metrics_count_rpc(s->worker, "edit-config", call.errs != NULL);
    count_device_edit(s->dev, "edit-config", call.errs != NULL);
    rc = 0;

cleanup:
    edit_err_free(call.errs);
    sbuf_free(&call.data);
    lyd_free_all(config);
    rpc_fast_edit_free(&fe);
    return rc;
}

/*
 * The <get-schema> fast path (rpc_fast.h): the module's text, escaped once at load and shared by the whole
 * fleet, is queued by reference. Returns -1 when the message needs the full path, which also answers
 * every error (an unknown module among them).
 */
static int
process_fast_get_schema(struct session *s, const char *msg)
{
    static const char tail[] = "</data></rpc-reply>";
    struct rpc_fast_get_schema gs;
    const struct schema_module *m;
    struct sbuf head = {0};
    const char *body;
    size_t body_len;
    int rc = -1;

    if (rpc_fast_get_schema_scan(msg, &gs) ||
        !(m = ops_schema_lookup(&s->dev->type->schemas, gs.identifier, gs.version))) {
        goto cleanup;
    }
    s->in_rpcs++;
    s->dev->stats.in_rpcs++;
    body = schema_module_yang_xml(m, &body_len);
    sbuf_adds(&head, "<rpc-reply xmlns=\"" NC_BASE_NS "\"");
    sbuf_add(&head, gs.reply_attrs.buf ? gs.reply_attrs.buf : "", gs.reply_attrs.len);
    sbuf_adds(&head, "><data xmlns=\"" OPS_NCM_NS "\">");
    if (s->dev->worker->fleet->cfg.netconf_latency_max_ms || (s->dev->ctl && s->dev->ctl->has_nc_latency) ||
        head.failed) {
        /* A held reply is a copy (sess_send_delayed()); send_message() also handles the failure. */
        sbuf_add(&head, body, body_len);
        sbuf_add(&head, tail, sizeof tail - 1);
        send_message(s, &head);
    } else {
        sess_send_shared(s, head.buf, head.len, body, body_len, tail, sizeof tail - 1);
    }
    metrics_count_rpc(s->worker, "get-schema", 0);
    rc = 0;

cleanup:
    sbuf_free(&head);
    rpc_fast_get_schema_free(&gs);
    return rc;
}

void
rpc_process(struct session *s, const char *msg, size_t len)
{
    struct fleet *fleet = s->worker->fleet;
    struct ly_in *in = NULL;
    struct lyd_node *envelope = NULL;
    struct lyd_node *op = NULL;
    struct rpc_call call = {.sess = s, .dev = s->dev, .fleet = fleet, .raw = msg};
    rpc_handler handler;

    (void)len;
    if (xmlguard_empty_namespace(msg)) {
        s->in_bad_rpcs++;
        s->dev->stats.in_bad_rpcs++;
        rpc_fail(&call,
                 edit_err_malformed_message("Empty XML namespace declarations (xmlns=\"\") are refused: "
                                            "the XML parser cannot take them safely."));
        goto reply;
    }
    if (!process_custom(s, msg) || !process_fast_edit(s, msg) || !process_fast_get_schema(s, msg)) {
        return;
    }
    if (ly_in_new_memory(msg, &in)) {
        sess_close(s, 0);
        return;
    }
    if (lyd_parse_op(s->dev->type->schemas.ctx, NULL, in, LYD_XML, LYD_TYPE_RPC_NETCONF, &envelope, &op) ||
        !op) {
        lyd_free_all(envelope);
        lyd_free_all(op);
        op = NULL;
        s->in_bad_rpcs++;
        s->dev->stats.in_bad_rpcs++;
        rpc_fail(&call, diagnose(s, msg, &envelope));
        goto reply;
    }
    if (!envelope || !rpc_has_message_id(envelope)) {
        /* RFC 6241 4.1: no message-id, no execution. */
        s->in_bad_rpcs++;
        s->dev->stats.in_bad_rpcs++;
        rpc_fail(&call, edit_err_missing_attribute(EDIT_ERR_RPC, "message-id", "rpc"));
        goto reply;
    }
    s->in_rpcs++;
    s->dev->stats.in_rpcs++;
    call.op = op;
    handler = op->schema ? find_handler(op->schema) : NULL;
    if (!handler) {
        rpc_fail(&call, edit_err_operation_not_supported(EDIT_ERR_PROTOCOL,
                                                         "Operation \"%s\" is not supported.", LYD_NAME(op)));
    } else {
        uint32_t gen = s->dev->ds.running_gen;
        handler(&call);
        note_running_write(s, gen);
    }

reply:
    if (s->state < SESS_CLOSING) {
        struct sbuf attrs = {0};
        if (envelope) {
            print_rpc_attrs(&attrs, envelope);
        } else {
            scan_rpc_attrs(msg, &attrs);
        }
        send_reply(s, attrs.buf, attrs.len, &call);
        metrics_count_rpc(s->worker, call.op ? LYD_NAME(call.op) : NULL, call.errs != NULL);
        count_device_edit(s->dev, call.op ? LYD_NAME(call.op) : NULL, call.errs != NULL);
        sbuf_free(&attrs);
        if (call.close_after_reply) {
            s->terminated = 1;
            sess_close_after_replies(s);
        } else if (call.after_reply && !call.errs) {
            ops_subscription_after_reply(s);
        } else if (call.then && !call.errs) {
            call.then(call.then_arg);
        }
    }
    sbuf_free(&call.data);
    edit_err_free(call.errs);
    lyd_free_all(envelope);
    lyd_free_all(op);
    ly_in_free(in, 0);
}
