/*
 * Handlers of ietf-netconf's operations other than lock and unlock:
 * get, get-config, edit-config, copy-config, delete-config, validate,
 * commit, discard-changes, close-session, kill-session. Each picks its
 * parameters from the parsed operation, applies the datastore rules, and
 * answers with data, ok, or rpc-errors.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "edit.h"
#include "filter.h"
#include "identity.h"
#include "lock.h"
#include "log.h"
#include "ops.h"
#include "validate.h"
#include "xmlguard.h"

#define NC_BASE_NS "urn:ietf:params:xml:ns:netconf:base:1.0"

/* The datastore named by the single child of a <target> or <source> container, or a <config> given inline. */
struct ds_ref {
    int is_config;                 /* 1: inline <config> */
    enum ds_id id;                 /* datastore when !is_config */
    const struct lyd_node *config; /* first sibling of the inline content (may be NULL) */
};

static int
pick_datastore(struct rpc_call *call, const char *param, int allow_config, struct ds_ref *ref)
{
    const struct lyd_node *container = rpc_param(call, param, 1);
    const struct lyd_node *child;

    memset(ref, 0, sizeof *ref);
    if (!container) {
        return -1;
    }
    child = lyd_child(container);
    if (!child) {
        rpc_fail(call, edit_err_missing_element(EDIT_ERR_PROTOCOL, param, NULL));
        return -1;
    }
    if (!strcmp(LYD_NAME(child), "running")) {
        ref->id = DS_RUNNING;
    } else if (!strcmp(LYD_NAME(child), "candidate")) {
        ref->id = DS_CANDIDATE;
    } else if (!strcmp(LYD_NAME(child), "startup")) {
        ref->id = DS_STARTUP;
    } else if (allow_config && !strcmp(LYD_NAME(child), "config")) {
        const struct lyd_node_any *any = (const struct lyd_node_any *)child;
        ref->is_config = 1;
        ref->config = any->value_type == LYD_ANYDATA_DATATREE ? any->value.tree : NULL;
    } else {
        rpc_fail(call, edit_err_operation_not_supported(
                           EDIT_ERR_PROTOCOL, "Datastore \"%s\" is not supported.", LYD_NAME(child)));
        return -1;
    }
    return 0;
}

static const struct lyd_node *
read_ds(struct rpc_call *call, enum ds_id id)
{
    return ds_read(&call->dev->ds, call->dev->type->template_tree, id);
}

static int
wd_print_option(struct rpc_call *call, uint32_t *opts)
{
    const struct lyd_node *wd = rpc_param(call, "with-defaults", 0);
    const char *mode = wd ? lyd_get_value(wd) : "explicit";

    if (!strcmp(mode, "explicit")) {
        *opts = LYD_PRINT_WD_EXPLICIT;
    } else if (!strcmp(mode, "report-all")) {
        *opts = LYD_PRINT_WD_ALL;
    } else if (!strcmp(mode, "report-all-tagged")) {
        *opts = LYD_PRINT_WD_ALL_TAG;
    } else if (!strcmp(mode, "trim")) {
        *opts = LYD_PRINT_WD_TRIM;
    } else {
        rpc_fail(call,
                 edit_err_invalid_value(EDIT_ERR_PROTOCOL, NULL, "Unknown with-defaults mode \"%s\".", mode));
        return -1;
    }
    return 0;
}

static ssize_t
write_to_sbuf(void *arg, const void *buf, size_t count)
{
    sbuf_add(arg, buf, count);
    return (ssize_t)count;
}

/* Print all siblings of @p tree into the reply's data, without a copy in between. */
static void
print_into_reply(struct rpc_call *call, const struct lyd_node *tree, uint32_t wd_opts)
{
    struct ly_out *out = NULL;

    call->has_data = 1;
    if (!tree) {
        return;
    }
    if (ly_out_new_clb(write_to_sbuf, &call->data, &out) ||
        lyd_print_all(out, tree, LYD_XML, LYD_PRINT_SHRINK | wd_opts)) {
        rpc_fail(call, edit_err_operation_failed(EDIT_ERR_APP, NULL, NULL, "Cannot print the data."));
    }
    ly_out_free(out, NULL, 0);
}

/* Namespace prefixes declared anywhere in the message, to read an XPath filter's prefixes. */
static const char *
xmlns_lookup(const char *raw, const char *prefix, size_t plen, size_t *ns_len)
{
    const char *p = raw;

    while ((p = strstr(p, "xmlns:"))) {
        const char *name = p + 6;
        p = name;
        if (strncmp(name, prefix, plen) || name[plen] != '=') {
            continue;
        }
        name += plen + 1;
        if (*name != '"' && *name != '\'') {
            continue;
        }
        {
            const char *end = strchr(name + 1, *name);
            if (!end) {
                return NULL;
            }
            *ns_len = (size_t)(end - name - 1);
            return name + 1;
        }
    }
    return NULL;
}

/*
 * Rewrite the XML prefixes of an XPath filter into module names (libyang's
 * JSON-style prefixes). Prefixes are looked up in the message's xmlns
 * declarations; a prefix that already is a module name stays.
 */
char *
ops_xpath_to_module_prefixes(struct rpc_call *call, const char *xpath)
{
    struct sbuf b = {0};
    const struct ly_ctx *ctx = call->dev->type->schemas.ctx;
    char quote = 0;

    for (const char *p = xpath; *p;) {
        if (quote) {
            if (*p == quote) {
                quote = 0;
            }
            sbuf_add(&b, p++, 1);
            continue;
        }
        if (*p == '"' || *p == '\'') {
            quote = *p;
            sbuf_add(&b, p++, 1);
            continue;
        }
        if (isalpha((unsigned char)*p) || *p == '_') {
            const char *start = p;
            while (isalnum((unsigned char)*p) || *p == '_' || *p == '-' || *p == '.') {
                p++;
            }
            if (*p == ':' && p[1] != ':') {
                size_t ns_len = 0;
                const char *ns = xmlns_lookup(call->raw, start, (size_t)(p - start), &ns_len);
                char *uri = ns ? strndup(ns, ns_len) : NULL;
                const struct lys_module *mod = uri ? ly_ctx_get_module_implemented_ns(ctx, uri) : NULL;
                free(uri);
                if (mod) {
                    sbuf_adds(&b, mod->name);
                    continue;
                }
            }
            sbuf_add(&b, start, (size_t)(p - start));
            continue;
        }
        sbuf_add(&b, p++, 1);
    }
    return sbuf_take(&b, NULL);
}

/* Apply the <filter> parameter (if any) to @p tree and print the outcome. */
static void
filter_and_print(struct rpc_call *call, const struct lyd_node *filter, const struct lyd_node *tree,
                 uint32_t wd)
{
    struct lyd_meta *type = filter ? lyd_find_meta(filter->meta, NULL, "ietf-netconf:type") : NULL;

    if (type && !strcmp(lyd_get_meta_value(type), "xpath")) {
        struct lyd_meta *select = lyd_find_meta(filter->meta, NULL, "ietf-netconf:select");
        char *xpath;
        if (!select) {
            rpc_fail(call, edit_err_missing_attribute(EDIT_ERR_PROTOCOL, "select", "filter"));
            return;
        }
        if (!(xpath = ops_xpath_to_module_prefixes(call, lyd_get_meta_value(select)))) {
            rpc_fail(call, NULL);
            return;
        }
        ops_filter_print(call, NULL, xpath, tree, wd);
        free(xpath);
        return;
    }
    ops_filter_print(call, filter, NULL, tree, wd);
}

void
ops_filter_print(struct rpc_call *call, const struct lyd_node *subtree, const char *xpath,
                 const struct lyd_node *tree, uint32_t wd)
{
    struct lyd_node *result = NULL;
    const char *unsafe;
    enum fleet_err rc;

    if (!subtree && !xpath) {
        print_into_reply(call, tree, wd);
        return;
    }
    if (xpath && (unsafe = xmlguard_xpath_unsafe(xpath))) {
        rpc_fail(call, edit_err_invalid_value(EDIT_ERR_PROTOCOL, NULL, OPS_XPATH_REFUSED, xpath, unsafe));
        return;
    }
    if (xpath) {
        rc = filter_xpath(tree, xpath, &result);
        if (rc == FLEET_ERR_INVAL) {
            rpc_fail(call, edit_err_invalid_value(EDIT_ERR_PROTOCOL, NULL, "Invalid XPath filter \"%s\": %s",
                                                  xpath, ly_errmsg(call->dev->type->schemas.ctx)));
        }
    } else {
        const struct lyd_node_any *any = (const struct lyd_node_any *)subtree;
        const struct lyd_node *spec = any->value_type == LYD_ANYDATA_DATATREE ? any->value.tree : NULL;
        rc = filter_subtree(tree, spec, &result);
    }
    if (rc == FLEET_ERR_NOMEM) {
        rpc_fail(call, NULL);
    } else if (!rc) {
        print_into_reply(call, result, wd);
    }
    lyd_free_all(result);
}

/* The device's identity into a view's parts made from shared data: the state, and running when untouched. */
static int
identity_view(struct rpc_call *call, const struct lyd_node *running, struct lyd_node *running_copy,
              struct lyd_node *dstate)
{
    const struct device_type *type = call->dev->type;
    struct identity_values vals;

    if (!type->identity) {
        return 0;
    }
    identity_values(call->dev, &vals);
    if (running && running == type->template_tree &&
        identity_apply_tree(type->identity, &vals, running_copy, NULL) < 0) {
        return -1;
    }
    return identity_apply_tree(type->identity, &vals, dstate, NULL) < 0 ? -1 : 0;
}

enum fleet_err
ops_operational_view(struct rpc_call *call, struct lyd_node **view)
{
    const struct lyd_node *running = read_ds(call, DS_RUNNING);
    struct lyd_node *dstate = NULL;

    *view = NULL;
    if (device_state(call, running, &dstate) ||
        (running && lyd_dup_siblings(running, NULL, LYD_DUP_RECURSIVE | LYD_DUP_WITH_FLAGS, view)) ||
        identity_view(call, running, *view, dstate) ||
        (dstate && lyd_merge_siblings(view, dstate, LYD_MERGE_DESTRUCT))) {
        lyd_free_all(dstate);
        lyd_free_all(*view);
        *view = NULL;
        return FLEET_ERR_NOMEM;
    }
    return FLEET_OK;
}

const struct lyd_node *
ops_read_ds(struct rpc_call *call, enum ds_id id)
{
    return read_ds(call, id);
}

int
ops_wd_option(struct rpc_call *call, uint32_t *opts)
{
    return wd_print_option(call, opts);
}

void
op_get_config(struct rpc_call *call)
{
    const struct lyd_node *tree, *filter;
    struct ds_ref src;
    uint32_t wd;

    if (pick_datastore(call, "source", 0, &src) || wd_print_option(call, &wd)) {
        return;
    }
    tree = read_ds(call, src.id);
    filter = rpc_param(call, "filter", 0);
    if (call->dev->type->identity && tree && tree == call->dev->type->template_tree) {
        /* The shared template: rewrite as printed, or (a filter may select by an identity value) filter a
         * rewritten copy. */
        if (!filter) {
            size_t from = call->data.len;
            filter_and_print(call, NULL, tree, wd);
            identity_rewrite_reply(call->dev, &call->data, from);
        } else {
            struct identity_values vals;
            struct lyd_node *copy = NULL;
            identity_values(call->dev, &vals);
            if (lyd_dup_siblings(tree, NULL, LYD_DUP_RECURSIVE | LYD_DUP_WITH_FLAGS, &copy) ||
                identity_apply_tree(call->dev->type->identity, &vals, copy, NULL) < 0) {
                rpc_fail(call, NULL);
            } else {
                filter_and_print(call, filter, copy, wd);
            }
            lyd_free_all(copy);
        }
        return;
    }
    filter_and_print(call, filter, tree, wd);
}

void
op_get(struct rpc_call *call)
{
    const struct lyd_node *filter = rpc_param(call, "filter", 0);
    struct lyd_node *state = NULL;
    uint32_t wd;

    if (wd_print_option(call, &wd) || (wd == LYD_PRINT_WD_EXPLICIT && ops_state_text_reply(call, filter))) {
        return;
    }
    {
        /* Configuration and the device's state as one tree: interfaces carry both. */
        struct lyd_node *view = NULL;
        if (ops_operational_view(call, &view)) {
            rpc_fail(call, NULL);
            return;
        }
        filter_and_print(call, filter, view, wd);
        lyd_free_all(view);
    }
    if (!call->errs) {
        filter_and_print(call, filter, call->dev->type->yanglib_tree, wd);
    }
    if (!call->errs && !monitoring_state(call, &state)) {
        filter_and_print(call, filter, state, wd);
    }
    lyd_free_all(state);
    if (call->errs) {
        call->has_data = 0;
    }
}

static int
parse_enum_param(struct rpc_call *call, const char *name, const char *const *names, int count, int dflt)
{
    const struct lyd_node *node = rpc_param(call, name, 0);

    if (!node) {
        return dflt;
    }
    for (int i = 0; i < count; i++) {
        if (!strcmp(lyd_get_value(node), names[i])) {
            return i;
        }
    }
    rpc_fail(call, edit_err_invalid_value(EDIT_ERR_PROTOCOL, NULL, "Invalid %s \"%s\".", name,
                                          lyd_get_value(node)));
    return -1;
}

void
ops_edit_config_apply(struct rpc_call *call, const struct ops_edit_params *p)
{
    static const enum edit_op default_op_values[] = {EDIT_OP_MERGE, EDIT_OP_REPLACE, EDIT_OP_NONE};
    struct device *dev = call->dev;
    struct edit_request req = {
        .config = p->config,
        .default_op = default_op_values[p->default_op],
        .test_option = (enum edit_test_option)p->test_option,
        .error_option = (enum edit_error_option)p->error_option,
    };
    struct lyd_node **tree;
    int changed = 0;

    /* Locks: another session's lock makes the target in use. */
    if (req.test_option != EDIT_TEST_ONLY) {
        struct edit_err *busy = lock_check_write(&dev->ds, p->target, call->sess->id);
        if (busy) {
            rpc_fail(call, busy);
            return;
        }
    }

    /* Apply to the device's own copy (made on its first edit). */
    if (identity_ds_own(dev, p->target, &tree)) {
        rpc_fail(call, NULL);
        return;
    }
    if (edit_apply(&call->dev->type->schemas, tree, &req, &call->errs, &changed)) {
        rpc_fail(call, NULL);
        return;
    }
    if (changed && p->target == DS_CANDIDATE) {
        dev->ds.candidate_dirty = 1;
        ds_candidate_log_edit(&dev->ds, p->config, p->default_op, p->error_option);
    }
}

void
op_edit_config(struct rpc_call *call)
{
    static const char *const default_ops[] = {"merge", "replace", "none"};
    static const char *const test_options[] = {"test-then-set", "set", "test-only"};
    static const char *const error_options[] = {"stop-on-error", "continue-on-error", "rollback-on-error"};
    struct ops_edit_params params = {0};
    const struct lyd_node *config;
    struct ds_ref target;

    if (pick_datastore(call, "target", 0, &target)) {
        return;
    }
    if (target.id == DS_STARTUP) {
        rpc_fail(call, edit_err_operation_not_supported(EDIT_ERR_PROTOCOL,
                                                        "edit-config of startup is not supported."));
        return;
    }
    params.target = target.id;
    params.default_op = parse_enum_param(call, "default-operation", default_ops, 3, 0);
    params.test_option = parse_enum_param(call, "test-option", test_options, 3, 0);
    params.error_option = parse_enum_param(call, "error-option", error_options, 3, 0);
    if (params.default_op < 0 || params.test_option < 0 || params.error_option < 0) {
        return;
    }
    if (rpc_param(call, "url", 0)) {
        rpc_fail(call, edit_err_operation_not_supported(EDIT_ERR_PROTOCOL,
                                                        "The :url capability is not supported."));
        return;
    }
    config = rpc_param(call, "config", 1);
    if (!config) {
        return;
    }
    params.config = ((const struct lyd_node_any *)config)->value_type == LYD_ANYDATA_DATATREE
                        ? ((const struct lyd_node_any *)config)->value.tree
                        : NULL;
    ops_edit_config_apply(call, &params);
}

/* Inline <config> content as a complete, validated configuration tree. */
static struct lyd_node *
config_from_inline(struct rpc_call *call, const struct lyd_node *content)
{
    struct ly_ctx *ctx = call->dev->type->schemas.ctx;
    struct lyd_node *tree = NULL;
    char *xml = NULL;

    if (!content) {
        return NULL;
    }
    /* Reparse strictly: opaque nodes (unknown elements, bad values) become precise errors. */
    if (lyd_print_mem(&xml, content, LYD_XML, LYD_PRINT_WITHSIBLINGS | LYD_PRINT_SHRINK)) {
        rpc_fail(call, NULL);
        return NULL;
    }
    if (lyd_parse_data_mem(ctx, xml, LYD_XML, LYD_PARSE_STRICT | LYD_PARSE_NO_STATE, LYD_VALIDATE_NO_STATE,
                           &tree)) {
        rpc_fail(call, edit_error_from_libyang(ctx));
        tree = NULL;
    }
    free(xml);
    return tree;
}

void
op_copy_config(struct rpc_call *call)
{
    struct device *dev = call->dev;
    struct ds_ref target;
    struct ds_ref source;
    struct lyd_node *copy = NULL;
    struct edit_err *busy;

    if (pick_datastore(call, "target", 0, &target) || pick_datastore(call, "source", 1, &source)) {
        return;
    }
    if (!source.is_config && source.id == target.id) {
        rpc_fail(call, edit_err_invalid_value(EDIT_ERR_PROTOCOL, NULL,
                                              "Source and target are the same datastore."));
        return;
    }
    if ((busy = lock_check_write(&dev->ds, target.id, call->sess->id))) {
        rpc_fail(call, busy);
        return;
    }
    if (source.is_config) {
        copy = config_from_inline(call, source.config);
        if (call->errs) {
            return;
        }
    } else if (read_ds(call, source.id) && lyd_dup_siblings(read_ds(call, source.id), NULL,
                                                            LYD_DUP_RECURSIVE | LYD_DUP_WITH_FLAGS, &copy)) {
        rpc_fail(call, NULL);
        return;
    }
    if (!source.is_config) {
        identity_fix_copy(dev, read_ds(call, source.id), copy);
    }
    ds_replace(&dev->ds, target.id, copy);
    if (target.id == DS_CANDIDATE) {
        dev->ds.candidate_dirty = 1;
    }
}

void
op_delete_config(struct rpc_call *call)
{
    struct ds_ref target;
    struct edit_err *busy;

    if (pick_datastore(call, "target", 0, &target)) {
        return;
    }
    if (target.id != DS_STARTUP) {
        rpc_fail(call, edit_err_operation_not_supported(EDIT_ERR_PROTOCOL, "Only startup can be deleted."));
        return;
    }
    if ((busy = lock_check_write(&call->dev->ds, target.id, call->sess->id))) {
        rpc_fail(call, busy);
        return;
    }
    ds_replace(&call->dev->ds, DS_STARTUP, NULL);
}

void
op_validate(struct rpc_call *call)
{
    struct ds_ref source;
    struct lyd_node *copy = NULL;

    if (pick_datastore(call, "source", 1, &source)) {
        return;
    }
    if (source.is_config) {
        copy = config_from_inline(call, source.config);
    } else if (read_ds(call, source.id)) {
        /* libyang's validation may add defaults: validate a copy, the datastore is read-only here. */
        if (lyd_dup_siblings(read_ds(call, source.id), NULL, LYD_DUP_RECURSIVE | LYD_DUP_WITH_FLAGS, &copy)) {
            rpc_fail(call, NULL);
            return;
        }
        validate_full(call->dev->type->schemas.ctx, &copy, &call->errs);
    }
    lyd_free_all(copy);
}

/*
 * Replay the candidate's edits onto running: O(edits since the last
 * commit), where moving the candidate's tree would make the next candidate
 * edit copy the whole datastore again. Returns -1 when replay does not
 * apply or an edit does not replay cleanly (then the tree is moved).
 */
static int
commit_by_replay(struct rpc_call *call)
{
    static const enum edit_op default_op_values[] = {EDIT_OP_MERGE, EDIT_OP_REPLACE, EDIT_OP_NONE};
    struct datastore *ds = &call->dev->ds;
    const struct ds_logged_edit *edits;
    struct lyd_node **tree;
    size_t count;

    edits = ds_candidate_replay(ds, &count);
    if (!edits || identity_ds_own(call->dev, DS_RUNNING, &tree)) {
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        struct edit_request req = {.config = edits[i].config,
                                   .default_op = default_op_values[edits[i].default_op],
                                   .test_option = EDIT_TEST_THEN_SET,
                                   .error_option = (enum edit_error_option)edits[i].error_option};
        struct edit_err *errs = NULL;
        int changed;
        enum fleet_err rc = edit_apply(&call->dev->type->schemas, tree, &req, &errs, &changed);
        int clean = !rc && (!errs || req.error_option == EDIT_CONTINUE_ON_ERROR);
        edit_err_free(errs);
        if (!clean) {
            return -1; /* running is partly updated; moving the candidate's tree still gives the right result
                        */
        }
    }
    ds_commit_replayed(ds);
    return 0;
}

void
op_commit(struct rpc_call *call)
{
    struct device *dev = call->dev;
    struct edit_err *busy;

    if (rpc_param(call, "confirmed", 0)) {
        rpc_fail(call,
                 edit_err_operation_not_supported(EDIT_ERR_PROTOCOL, "Confirmed commit is not supported."));
        return;
    }
    if ((busy = lock_check_write(&dev->ds, DS_RUNNING, call->sess->id))) {
        rpc_fail(call, busy);
        return;
    }
    if (commit_by_replay(call)) {
        ds_commit(&dev->ds);
    }
}

void
op_discard_changes(struct rpc_call *call)
{
    struct edit_err *busy;

    if ((busy = lock_check_write(&call->dev->ds, DS_CANDIDATE, call->sess->id))) {
        rpc_fail(call, busy);
        return;
    }
    ds_reset(&call->dev->ds, DS_CANDIDATE);
}

void
op_close_session(struct rpc_call *call)
{
    call->close_after_reply = 1;
}

void
op_kill_session(struct rpc_call *call)
{
    const struct lyd_node *param = rpc_param(call, "session-id", 1);
    struct session *victim;
    uint32_t id;

    if (!param) {
        return;
    }
    id = (uint32_t)strtoul(lyd_get_value(param), NULL, 10);
    if (id == call->sess->id) {
        rpc_fail(call, edit_err_invalid_value(EDIT_ERR_PROTOCOL, NULL, "A session cannot kill itself."));
        return;
    }
    victim = sess_find(call->dev, id);
    if (!victim) {
        rpc_fail(call, edit_err_invalid_value(EDIT_ERR_PROTOCOL, NULL, "No session %u on this device.",
                                              (unsigned)id));
        return;
    }
    log_debug("device %u: session %u kills session %u", call->dev->index, call->sess->id, id);
    /* RFC 6022: a killed session is not a dropped one. */
    victim->terminated = 1;
    sess_close(victim, 0);
}
