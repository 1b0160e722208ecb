/*
 * ietf-netconf-nmda (RFC 8526): get-data from any datastore, operational
 * included (running merged with the device's state at one instant, the same
 * view get shows, plus yang-library and netconf-state), with subtree or
 * XPath filters, config-filter and with-defaults; edit-data of running or
 * the candidate through the edit-config engine.
 */
#include <string.h>

#include "device.h"
#include "edit_err.h"
#include "identity.h"
#include "ops.h"

#define NMDA_NS "urn:ietf:params:xml:ns:yang:ietf-netconf-nmda"

/* Which datastore an identity names ("ietf-datastores:running"); -1 for operational, -2 unknown. */
static int
datastore_id(const char *identity)
{
    const char *colon = strchr(identity, ':');
    const char *name = colon ? colon + 1 : identity;

    if (!strcmp(name, "running") || !strcmp(name, "intended")) {
        return DS_RUNNING; /* no templates or inactive nodes here: intended is running */
    }
    if (!strcmp(name, "candidate")) {
        return DS_CANDIDATE;
    }
    if (!strcmp(name, "startup")) {
        return DS_STARTUP;
    }
    if (!strcmp(name, "operational")) {
        return -1;
    }
    return -2;
}

/* Keep only configuration (@p want_config) or only state nodes; keys stay with their entries. */
static void
config_filter(struct lyd_node **tree, int want_config)
{
    struct lyd_node *n = *tree, *next;

    for (; n; n = next) {
        next = n->next;
        int config = n->schema && (n->schema->flags & LYS_CONFIG_W);
        if (n->schema && lysc_is_key(n->schema)) {
            continue;
        }
        if (n->schema && (n->schema->nodetype & (LYS_LEAF | LYS_LEAFLIST | LYS_ANYDATA))) {
            if (config != want_config) {
                if (n == *tree) {
                    *tree = next;
                }
                lyd_free_tree(n);
            }
            continue;
        }
        if (n->schema && !config && want_config) {
            /* a config false container or list holds no configuration */
            if (n == *tree) {
                *tree = next;
            }
            lyd_free_tree(n);
            continue;
        }
        {
            struct lyd_node *child = lyd_child(n);
            if (child) {
                config_filter(&child, want_config);
            }
        }
        /* an emptied container or list entry (only keys left) goes too */
        if (n->schema && (n->schema->nodetype & (LYS_CONTAINER | LYS_LIST))) {
            struct lyd_node *c = lyd_child(n);
            while (c && c->schema && lysc_is_key(c->schema)) {
                c = c->next;
            }
            if (!c) {
                if (n == *tree) {
                    *tree = next;
                }
                lyd_free_tree(n);
            }
        }
    }
}

void
op_get_data(struct rpc_call *call)
{
    const struct lyd_node *ds = rpc_param(call, "datastore", 1);
    const struct lyd_node *subtree = rpc_param(call, "subtree-filter", 0);
    const struct lyd_node *xpath = rpc_param(call, "xpath-filter", 0);
    const struct lyd_node *cfg_filter = rpc_param(call, "config-filter", 0);
    const struct lyd_node *depth = rpc_param(call, "max-depth", 0);
    struct lyd_node *view = NULL, *extra = NULL;
    uint32_t wd;
    int id;

    if (!ds || ops_wd_option(call, &wd)) {
        return;
    }
    if ((id = datastore_id(lyd_get_value(ds))) == -2) {
        rpc_fail(call, edit_err_invalid_value(EDIT_ERR_PROTOCOL, NULL, "Datastore \"%s\" is not implemented.",
                                              lyd_get_value(ds)));
        return;
    }
    if (depth && strcmp(lyd_get_value(depth), "unbounded")) {
        rpc_fail(call, edit_err_operation_not_supported(EDIT_ERR_PROTOCOL, "max-depth is not supported."));
        return;
    }
    call->data_ns = NMDA_NS;
    if (id == -1) {
        /* operational: configuration in use and state, plus the server's own state */
        if (ops_operational_view(call, &view) ||
            (call->dev->type->yanglib_tree &&
             lyd_dup_siblings(call->dev->type->yanglib_tree, NULL, LYD_DUP_RECURSIVE, &extra)) ||
            (extra && lyd_merge_siblings(&view, extra, LYD_MERGE_DESTRUCT))) {
            lyd_free_all(extra);
            lyd_free_all(view);
            rpc_fail(call, NULL);
            return;
        }
        extra = NULL;
        if (!monitoring_state(call, &extra) && extra) {
            lyd_merge_siblings(&view, extra, LYD_MERGE_DESTRUCT);
        }
    } else {
        const struct lyd_node *src = ops_read_ds(call, (enum ds_id)id);
        if (src && lyd_dup_siblings(src, NULL, LYD_DUP_RECURSIVE | LYD_DUP_WITH_FLAGS, &view)) {
            rpc_fail(call, NULL);
            return;
        }
        identity_fix_copy(call->dev, src, view); /* a copy of the shared template: the device's identity */
    }
    if (cfg_filter) {
        config_filter(&view, !strcmp(lyd_get_value(cfg_filter), "true"));
    }
    ops_filter_print(call, subtree, xpath ? lyd_get_value(xpath) : NULL, view, wd);
    lyd_free_all(view);
}

void
op_edit_data(struct rpc_call *call)
{
    static const char *const default_ops[] = {"merge", "replace", "none"};
    const struct lyd_node *ds = rpc_param(call, "datastore", 1);
    const struct lyd_node *op = rpc_param(call, "default-operation", 0);
    const struct lyd_node *config = rpc_param(call, "config", 0);
    struct ops_edit_params params = {0};
    int id;

    if (!ds) {
        return;
    }
    id = datastore_id(lyd_get_value(ds));
    if (id != DS_RUNNING && id != DS_CANDIDATE) {
        rpc_fail(call, edit_err_invalid_value(EDIT_ERR_PROTOCOL, NULL,
                                              "edit-data of \"%s\" is not supported.", lyd_get_value(ds)));
        return;
    }
    if (!config) {
        rpc_fail(call, edit_err_operation_not_supported(EDIT_ERR_PROTOCOL,
                                                        "The :url capability is not supported."));
        return;
    }
    params.target = (enum ds_id)id;
    for (int i = 0; op && i < 3; i++) {
        if (!strcmp(lyd_get_value(op), default_ops[i])) {
            params.default_op = i;
        }
    }
    params.error_option = 2; /* RFC 8526: edit-data is all or nothing */
    params.config = ((const struct lyd_node_any *)config)->value_type == LYD_ANYDATA_DATATREE
                        ? ((const struct lyd_node_any *)config)->value.tree
                        : NULL;
    ops_edit_config_apply(call, &params);
}
