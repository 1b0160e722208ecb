/*
 * The edit-config engine. Walks the <config> tree against the datastore
 * tree, applying each node's effective operation (its nc:operation
 * attribute, else its parent's, else the default-operation). Every change
 * goes through one of three logged primitives (insert, unlink, set value),
 * so rollback is exact and costs what the edit cost. Lookups use libyang's
 * sibling hash tables: an edit of one entry in a 100,000-entry list touches
 * a handful of nodes.
 */
#include "edit.h"

#include <stdlib.h>
#include <string.h>

#include "undo.h"
#include "validate.h"
#include "ydata.h"

struct edit_ctx {
    const struct schema_set *set;        /* schemas */
    struct lyd_node **tree;              /* datastore root pointer */
    struct undo_log log;                 /* changes so far */
    struct edit_err **errs;              /* where protocol errors go */
    enum edit_error_option error_option; /* stop, continue or roll back */
    int failed;                          /* 1 once a protocol error was recorded */
    int nomem;                           /* 1 once memory ran out */
};

static const char *const op_names[] = {"merge", "replace", "create", "delete", "remove", "none"};

int
edit_op_parse(const char *name, enum edit_op *op)
{
    for (int i = 0; i <= EDIT_OP_NONE; i++) {
        if (!strcmp(name, op_names[i])) {
            *op = (enum edit_op)i;
            return 0;
        }
    }
    return -1;
}

static void
record(struct edit_ctx *ec, struct edit_err *err)
{
    if (!err) {
        ec->nomem = 1;
        return;
    }
    edit_err_append(ec->errs, err);
    ec->failed = 1;
}

static int
log_push(struct edit_ctx *ec, struct undo_entry entry)
{
    if (ec->log.count == ec->log.cap) {
        size_t cap = ec->log.cap ? ec->log.cap * 2 : 16;
        struct undo_entry *grown = realloc(ec->log.entries, cap * sizeof *grown);
        if (!grown) {
            ec->nomem = 1;
            return -1;
        }
        ec->log.entries = grown;
        ec->log.cap = cap;
    }
    ec->log.entries[ec->log.count++] = entry;
    return 0;
}

static struct lyd_node *
first_child(struct edit_ctx *ec, struct lyd_node *parent)
{
    return parent ? lyd_child(parent) : *ec->tree;
}

/* The path of a node for error-path; NULL when memory ran out. */
static char *
node_path(const struct lyd_node *node)
{
    return lyd_path(node, LYD_PATH_STD, NULL, 0);
}

/*
 * The datastore's instance of an edit node. Lists and leaf-lists match by
 * keys or value; any other node by schema alone (libyang's
 * lyd_find_sibling_first would compare a leaf's value when the parent keeps
 * no child hash table).
 */
static struct lyd_node *
find_match(struct edit_ctx *ec, const struct lyd_node *edit, struct lyd_node *parent)
{
    struct lyd_node *match = NULL;
    struct lyd_node *first = first_child(ec, parent);

    if (edit->schema->nodetype & (LYS_LIST | LYS_LEAFLIST)) {
        lyd_find_sibling_first(first, edit, &match);
    } else {
        lyd_find_sibling_val(first, edit->schema, NULL, 0, &match);
    }
    return match;
}

/* Changing or inserting a node clears the default flag of its non-presence ancestors: log them first. */
static int
log_ancestor_flags(struct edit_ctx *ec, struct lyd_node *parent)
{
    for (struct lyd_node *a = parent; a; a = lyd_parent(a)) {
        if (!(a->flags & LYD_DEFAULT)) {
            break;
        }
        if (log_push(ec, (struct undo_entry){.kind = UNDO_FLAGS, .node = a, .old_flags = a->flags})) {
            return -1;
        }
    }
    return 0;
}

/* Logged primitive 1: insert a new node under parent (or at top level). */
static int
insert_node(struct edit_ctx *ec, struct lyd_node *parent, struct lyd_node *node)
{
    LY_ERR r;

    if (log_ancestor_flags(ec, parent)) {
        lyd_free_tree(node);
        return -1;
    }
    r = parent ? lyd_insert_child(parent, node) : lyd_insert_sibling(*ec->tree, node, ec->tree);
    if (r) {
        lyd_free_tree(node);
        ec->nomem = 1;
        return -1;
    }
    return log_push(ec, (struct undo_entry){.kind = UNDO_CREATED, .node = node});
}

/* Logged primitive 2: take a node out of the tree, keeping it for rollback. */
static int
unlink_node(struct edit_ctx *ec, struct lyd_node *node)
{
    struct undo_entry entry = {
        .kind = UNDO_UNLINKED, .node = node, .parent = lyd_parent(node), .next = node->next};

    if (*ec->tree == node) {
        *ec->tree = node->next;
    }
    lyd_unlink_tree(node);
    if (log_push(ec, entry)) {
        lyd_free_tree(node);
        return -1;
    }
    return 0;
}

/* Logged primitive 3: change a leaf's value (and drop its default flag). */
static int
set_value(struct edit_ctx *ec, struct lyd_node *leaf, const char *value)
{
    struct undo_entry entry = {.kind = UNDO_VALUE, .node = leaf, .old_flags = leaf->flags};

    if (!(leaf->flags & LYD_DEFAULT) && !strcmp(lyd_get_value(leaf), value)) {
        return 0;
    }
    if (log_ancestor_flags(ec, lyd_parent(leaf))) {
        return -1;
    }
    entry.old_value = strdup(lyd_get_value(leaf));
    if (!entry.old_value || log_push(ec, entry)) {
        free(entry.old_value);
        ec->nomem = 1;
        return -1;
    }
    if (lyd_change_term(leaf, value) > LY_EEXIST) {
        record(ec, edit_error_from_libyang(LYD_CTX(leaf)));
        return -1;
    }
    return 0;
}

/* yang:key holds XML-prefixed key names ("[ex:name='a']"); libyang's lookup wants them bare. */
static char *
bare_key_predicate(const char *keys)
{
    char *out = malloc(strlen(keys) + 1);
    char *o = out;
    char quote = 0;

    if (!out) {
        return NULL;
    }
    for (const char *p = keys; *p; p++) {
        if (quote) {
            quote = *p == quote ? 0 : quote;
        } else if (*p == '\'' || *p == '"') {
            quote = *p;
        } else if (*p == '[') {
            const char *colon = p + 1 + strcspn(p + 1, ":=]");
            *o++ = '[';
            if (*colon == ':') {
                p = colon;
            }
            continue;
        }
        *o++ = *p;
    }
    *o = '\0';
    return out;
}

/* The top-level root may change when a top-level node moves. */
static void
refresh_root(struct edit_ctx *ec, struct lyd_node *node)
{
    if (!lyd_parent(node)) {
        *ec->tree = lyd_first_sibling(node);
    }
}

/*
 * Logged primitive 4: put a user-ordered node where its yang:insert
 * attribute says (RFC 7950 section 7.8.6). A node created by this edit needs
 * no undo entry for the move: undoing its creation frees it.
 */
static int
place_user_ordered(struct edit_ctx *ec, const struct lyd_node *edit, struct lyd_node *node, int is_new)
{
    struct lyd_meta *insert = lyd_find_meta(edit->meta, NULL, "yang:insert");
    const int is_list = node->schema->nodetype == LYS_LIST;
    struct lyd_node *first;
    struct lyd_node *last;
    struct lyd_node *anchor = NULL;
    const char *where;
    int after = 0;
    LY_ERR r;

    if (!insert || !ydata_user_ordered(node)) {
        return 0;
    }
    where = lyd_get_meta_value(insert);
    ydata_instance_range(node, &first, &last);
    if (!strcmp(where, "first")) {
        anchor = first;
    } else if (!strcmp(where, "last")) {
        anchor = last;
        after = 1;
    } else {
        struct lyd_meta *ref = lyd_find_meta(edit->meta, NULL, is_list ? "yang:key" : "yang:value");
        char *bare = NULL;
        if (!ref) {
            record(ec,
                   edit_err_missing_attribute(EDIT_ERR_PROTOCOL, is_list ? "key" : "value", LYD_NAME(edit)));
            return -1;
        }
        bare = is_list ? bare_key_predicate(lyd_get_meta_value(ref)) : NULL;
        if (is_list && !bare) {
            ec->nomem = 1;
            return -1;
        }
        lyd_find_sibling_val(first, node->schema, is_list ? bare : lyd_get_meta_value(ref), 0, &anchor);
        free(bare);
        if (!anchor) {
            struct edit_err *err =
                edit_err_bad_attribute(EDIT_ERR_PROTOCOL, is_list ? "key" : "value", LYD_NAME(edit),
                                       "No instance \"%s\" to insert %s.", lyd_get_meta_value(ref), where);
            if (err) {
                err->app_tag = strdup("missing-instance");
            }
            record(ec, err);
            return -1;
        }
        after = !strcmp(where, "after");
    }
    if (!anchor || anchor == node) {
        return 0;
    }
    if (!is_new &&
        log_push(ec, (struct undo_entry){
                         .kind = UNDO_MOVED, .node = node, .parent = lyd_parent(node), .next = node->next})) {
        return -1;
    }
    if (*ec->tree == node) {
        *ec->tree = node->next;
    }
    r = after ? lyd_insert_after(anchor, node) : lyd_insert_before(anchor, node);
    refresh_root(ec, node);
    if (r) {
        ec->nomem = 1;
        return -1;
    }
    return 0;
}

/* After a leaf with a default was deleted, its default value applies again. */
static void
restore_default(struct edit_ctx *ec, struct lyd_node *parent, const struct lysc_node *schema)
{
    const struct lysc_node_leaf *leaf = (const struct lysc_node_leaf *)schema;
    struct lyd_node *dflt = NULL;

    if (!parent || schema->nodetype != LYS_LEAF || !leaf->dflt) {
        return;
    }
    if (lyd_find_sibling_val(lyd_child(parent), schema, NULL, 0, NULL) == LY_SUCCESS) {
        return; /* replaced by a new explicit instance */
    }
    if (lyd_new_term(parent, schema->module, schema->name,
                     lyd_value_get_canonical(schema->module->ctx, leaf->dflt), 0, &dflt)) {
        ec->nomem = 1;
        return;
    }
    dflt->flags |= LYD_DEFAULT;
    if (lyd_parent(dflt) == parent) {
        log_push(ec, (struct undo_entry){.kind = UNDO_CREATED, .node = dflt});
    }
}

/* The case a schema node sits in (directly or through nested schema-only nodes), or NULL. */
static const struct lysc_node *
case_of(const struct lysc_node *schema)
{
    for (const struct lysc_node *s = schema->parent; s; s = s->parent) {
        if (s->nodetype == LYS_CASE) {
            return s;
        }
        if (s->nodetype & (LYS_CONTAINER | LYS_LIST)) {
            return NULL;
        }
    }
    return NULL;
}

/* Creating a node of one case implicitly deletes the nodes of the choice's other cases (RFC 7950 7.9). */
static void
drop_other_cases(struct edit_ctx *ec, struct lyd_node *parent, const struct lyd_node *created)
{
    const struct lysc_node *cas = case_of(created->schema);
    struct lyd_node *sib;
    struct lyd_node *next;

    if (!cas) {
        return;
    }
    for (sib = first_child(ec, parent); sib; sib = next) {
        const struct lysc_node *other;
        next = sib->next;
        if (!sib->schema || sib == created || !(other = case_of(sib->schema))) {
            continue;
        }
        if (other != cas && other->parent == cas->parent && unlink_node(ec, sib)) {
            return;
        }
    }
}

/* Why an opaque node in <config> is not data of the loaded schemas. */
static void
diagnose_opaque(struct edit_ctx *ec, const struct lyd_node *node)
{
    const struct lyd_node_opaq *o = (const struct lyd_node_opaq *)node;
    const struct ly_ctx *ctx = LYD_CTX(node);
    const struct lyd_node *eparent = lyd_parent(node);
    const struct lysc_node *pschema = eparent ? eparent->schema : NULL;
    const char *ns = o->format == LY_VALUE_XML ? o->name.module_ns : NULL;
    const struct lys_module *mod = ns ? ly_ctx_get_module_implemented_ns(ctx, ns) : NULL;
    const struct lysc_node *snode;
    char *path = NULL;

    if (eparent && !pschema) {
        goto cleanup; /* the opaque parent was reported already */
    }
    if (!mod) {
        record(ec, edit_err_unknown_namespace(EDIT_ERR_APP, o->name.name, ns ? ns : ""));
        goto cleanup;
    }
    path = edit_child_path(eparent, NULL, pschema ? pschema->module : NULL, mod, o->name.name);
    snode = lys_find_child(pschema, mod, o->name.name, 0, 0, 0);
    if (!snode) {
        record(ec, edit_err_unknown_element(EDIT_ERR_APP, o->name.name, path));
    } else if (snode->nodetype & (LYS_LEAF | LYS_LEAFLIST)) {
        if (lyd_value_validate(ctx, snode, o->value, strlen(o->value), NULL, NULL, NULL)) {
            record(ec, edit_err_invalid_value(EDIT_ERR_APP, path, "%s", ly_errmsg(ctx)));
        } else {
            record(ec, edit_err_bad_element(EDIT_ERR_APP, o->name.name, path, "Invalid element \"%s\".",
                                            o->name.name));
        }
    } else if (snode->nodetype == LYS_LIST) {
        const struct lysc_node *key = lysc_node_child(snode);
        const char *missing = o->name.name;
        for (; key && lysc_is_key(key); key = key->next) {
            const struct lyd_node *c;
            int found = 0;
            LY_LIST_FOR(lyd_child(node), c)
            {
                found |= !strcmp(LYD_NAME(c), key->name);
            }
            if (!found) {
                missing = key->name;
                break;
            }
        }
        record(ec, edit_err_missing_element(EDIT_ERR_APP, missing, path));
    } else {
        record(ec, edit_err_bad_element(EDIT_ERR_APP, o->name.name, path, "Invalid element \"%s\".",
                                        o->name.name));
    }

cleanup:
    free(path);
}

static int
effective_op(struct edit_ctx *ec, const struct lyd_node *node, enum edit_op inherited, enum edit_op *op)
{
    struct lyd_meta *meta = lyd_find_meta(node->meta, NULL, "ietf-netconf:operation");

    *op = inherited;
    if (meta && edit_op_parse(lyd_get_meta_value(meta), op)) {
        record(ec, edit_err_bad_attribute(EDIT_ERR_PROTOCOL, "operation", LYD_NAME(node),
                                          "Unknown operation \"%s\".", lyd_get_meta_value(meta)));
        return -1;
    }
    return 0;
}

static int apply_siblings(struct edit_ctx *ec, const struct lyd_node *first, struct lyd_node *target_parent,
                          enum edit_op inherited);

/* RFC 7950 section 8.3.1: nodes of two cases of one choice in one request are an error. */
static int
check_case_conflicts(struct edit_ctx *ec, const struct lyd_node *first)
{
    const struct lyd_node *a;
    const struct lyd_node *b;

    LY_LIST_FOR(first, a)
    {
        const struct lysc_node *ca = a->schema ? case_of(a->schema) : NULL;
        if (!ca) {
            continue;
        }
        for (b = a->next; b; b = b->next) {
            const struct lysc_node *cb = b->schema ? case_of(b->schema) : NULL;
            if (cb && cb != ca && cb->parent == ca->parent) {
                char *path = lyd_path(b, LYD_PATH_STD, NULL, 0);
                record(ec, edit_err_bad_element(EDIT_ERR_APP, LYD_NAME(b), path,
                                                "More than one case of choice \"%s\" in the request.",
                                                ca->parent->name));
                free(path);
                return -1;
            }
        }
    }
    return 0;
}

/* The nc:operation attribute of an opaque node (libyang keeps attributes, not metadata, there). */
static int
opaque_op(const struct lyd_node *node, enum edit_op inherited, enum edit_op *op)
{
    const struct lyd_attr *a;

    *op = inherited;
    for (a = ((const struct lyd_node_opaq *)node)->attr; a; a = a->next) {
        if (!strcmp(a->name.name, "operation") && a->name.module_ns &&
            !strcmp(a->name.module_ns, "urn:ietf:params:xml:ns:netconf:base:1.0")) {
            return edit_op_parse(a->value, op);
        }
    }
    return 0;
}

/*
 * An empty element naming a leaf whose type cannot be empty (<mtu
 * nc:operation="delete"/>) reaches us opaque. For delete and remove the
 * value does not matter: find the leaf by schema. Returns 1 when handled.
 */
static int
delete_opaque_leaf(struct edit_ctx *ec, const struct lyd_node *edit, struct lyd_node *parent,
                   enum edit_op inherited)
{
    const struct lyd_node_opaq *o = (const struct lyd_node_opaq *)edit;
    const struct lyd_node *eparent = lyd_parent(edit);
    const char *ns = o->format == LY_VALUE_XML ? o->name.module_ns : NULL;
    const struct lys_module *mod = ns ? ly_ctx_get_module_implemented_ns(LYD_CTX(edit), ns) : NULL;
    const struct lysc_node *snode;
    struct lyd_node *match = NULL;
    enum edit_op op;

    if (!mod || (eparent && !eparent->schema) || opaque_op(edit, inherited, &op) ||
        (op != EDIT_OP_DELETE && op != EDIT_OP_REMOVE) || (o->value && o->value[0])) {
        return 0;
    }
    snode = lys_find_child(eparent ? eparent->schema : NULL, mod, o->name.name, 0, LYS_LEAF, 0);
    if (!snode) {
        return 0;
    }
    lyd_find_sibling_val(first_child(ec, parent), snode, NULL, 0, &match);
    if (match && !(match->flags & LYD_DEFAULT)) {
        if (!unlink_node(ec, match)) {
            restore_default(ec, parent, snode);
        }
    } else if (op == EDIT_OP_DELETE) {
        char *path = edit_child_path(parent, NULL, parent ? parent->schema->module : NULL, mod, snode->name);
        record(ec,
               edit_err_data_missing(path, NULL, "Data \"%s\" to delete does not exist.", path ? path : ""));
        free(path);
    }
    return 1;
}

/* Replace of an existing container or list entry: its children go, the edit's come, its place stays. */
static int
clear_children(struct edit_ctx *ec, struct lyd_node *node)
{
    struct lyd_node *child;
    struct lyd_node *next;

    for (child = lyd_child(node); child; child = next) {
        next = child->next;
        if (child->schema && lysc_is_key(child->schema)) {
            continue;
        }
        if (unlink_node(ec, child)) {
            return -1;
        }
        /* Logged, unlike libyang's implicit nodes: rollback must not find a default beside the restored leaf.
         */
        restore_default(ec, node, child->schema);
    }
    return 0;
}

static int
stop_now(const struct edit_ctx *ec)
{
    return ec->nomem || (ec->failed && ec->error_option != EDIT_CONTINUE_ON_ERROR);
}

/* Create @p edit (without its children) under @p parent; its children are applied by the caller. */
static struct lyd_node *
create_node(struct edit_ctx *ec, const struct lyd_node *edit, struct lyd_node *parent)
{
    struct lyd_node *node = NULL;

    if (lyd_dup_single(edit, NULL, LYD_DUP_NO_META, &node)) {
        ec->nomem = 1;
        return NULL;
    }
    if (insert_node(ec, parent, node)) {
        return NULL;
    }
    drop_other_cases(ec, parent, node);
    return ec->nomem ? NULL : node;
}

/* Defaults of a new or replaced subtree, once its explicit children are in place. */
static int
apply_children_defaults(struct edit_ctx *ec, struct lyd_node *node)
{
    if (lyd_new_implicit_tree(node, LYD_IMPLICIT_NO_STATE, NULL)) {
        ec->nomem = 1;
        return -1;
    }
    return 0;
}

static int
apply_children_of_new(struct edit_ctx *ec, const struct lyd_node *edit, struct lyd_node *node,
                      enum edit_op op)
{
    if (!(node->schema->nodetype & (LYS_CONTAINER | LYS_LIST))) {
        return 0;
    }
    if (apply_siblings(ec, lyd_child(edit), node, op)) {
        return -1;
    }
    return apply_children_defaults(ec, node);
}

static int
apply_node(struct edit_ctx *ec, const struct lyd_node *edit, struct lyd_node *parent, enum edit_op inherited)
{
    struct lyd_node *match = NULL;
    struct lyd_node *created;
    enum edit_op op;
    int exists;
    int inner;
    char *path = NULL;
    int rc = 0;

    if (!edit->schema) {
        if (!delete_opaque_leaf(ec, edit, parent, inherited)) {
            diagnose_opaque(ec, edit);
        }
        return stop_now(ec) ? -1 : 0;
    }
    if (edit->schema->flags & LYS_CONFIG_R || edit->schema->nodetype & (LYS_RPC | LYS_ACTION | LYS_NOTIF)) {
        path = node_path(edit);
        record(ec, edit_err_invalid_value(EDIT_ERR_APP, path, "Node \"%s\" is not configuration.",
                                          LYD_NAME(edit)));
        goto cleanup;
    }
    if (effective_op(ec, edit, inherited, &op)) {
        goto cleanup;
    }
    match = find_match(ec, edit, parent);
    /* A node that only holds its schema default does not exist for create and delete (RFC 6243). */
    exists = match && !(match->flags & LYD_DEFAULT);
    inner = (edit->schema->nodetype & (LYS_CONTAINER | LYS_LIST)) != 0;

    switch (op) {
    case EDIT_OP_CREATE:
        if (exists) {
            path = node_path(match);
            record(ec, edit_err_data_exists(path));
            break;
        }
        /* fall through */
    case EDIT_OP_MERGE:
    case EDIT_OP_REPLACE:
        if (!match) {
            if ((created = create_node(ec, edit, parent)) && !apply_children_of_new(ec, edit, created, op)) {
                place_user_ordered(ec, edit, created, 1);
            }
            break;
        }
        if (edit->schema->nodetype == LYS_LEAF) {
            set_value(ec, match, lyd_get_value(edit));
        } else if (inner && op == EDIT_OP_REPLACE) {
            if (!clear_children(ec, match)) {
                apply_siblings(ec, lyd_child(edit), match, op);
            }
        } else if (inner) {
            apply_siblings(ec, lyd_child(edit), match, op);
        }
        if (!stop_now(ec)) {
            place_user_ordered(ec, edit, match, 0);
        }
        break;
    case EDIT_OP_DELETE:
        if (!exists) {
            path = node_path(edit);
            record(ec, edit_err_data_missing(path, NULL, "Data \"%s\" to delete does not exist.",
                                             path ? path : ""));
            break;
        }
        /* fall through */
    case EDIT_OP_REMOVE:
        if (exists) {
            struct lyd_node *was_parent = lyd_parent(match);
            const struct lysc_node *schema = match->schema;
            if (!unlink_node(ec, match)) {
                restore_default(ec, was_parent, schema);
            }
        }
        break;
    case EDIT_OP_NONE:
        /*
         * RFC 6241 7.2: with "none", data without a corresponding level in the
         * datastore is data-missing (so a delete never creates its parents). A
         * non-presence container has no existence of its own: it is made, and
         * dropped again if the edit puts nothing in it. A missing leaf is left alone.
         */
        if (match) {
            if (inner) {
                apply_siblings(ec, lyd_child(edit), match, op);
            }
        } else if (edit->schema->nodetype == LYS_CONTAINER && !(edit->schema->flags & LYS_PRESENCE)) {
            if ((created = create_node(ec, edit, parent)) &&
                !apply_siblings(ec, lyd_child(edit), created, op) && !lyd_child(created)) {
                unlink_node(ec, created);
            }
        } else if (inner) {
            path = node_path(edit);
            record(ec, edit_err_data_missing(path, NULL, "Data \"%s\" does not exist.", path ? path : ""));
        }
        break;
    }

cleanup:
    free(path);
    if (stop_now(ec)) {
        rc = -1;
    }
    return rc;
}

static int
apply_siblings(struct edit_ctx *ec, const struct lyd_node *first, struct lyd_node *target_parent,
               enum edit_op inherited)
{
    const struct lyd_node *edit;

    if (check_case_conflicts(ec, first)) {
        return -1;
    }
    LY_LIST_FOR(first, edit)
    {
        /* Keys identify their list entry; they are not edited on their own. */
        if (target_parent && edit->schema && lysc_is_key(edit->schema)) {
            continue;
        }
        if (apply_node(ec, edit, target_parent, inherited)) {
            return -1;
        }
    }
    return 0;
}

/*
 * default-operation replace: <config> replaces the whole datastore, so the
 * top-level nodes it does not mention go (the ones it mentions are replaced
 * node by node).
 */
static void
drop_unmentioned_top(struct edit_ctx *ec, const struct lyd_node *config)
{
    struct lyd_node *node;
    struct lyd_node *next;

    for (node = *ec->tree; node; node = next) {
        const struct lyd_node *c;
        int mentioned = 0;
        next = node->next;
        /* Compared one by one: <config> may hold opaque nodes, which libyang's sibling search cannot take. */
        LY_LIST_FOR(config, c)
        {
            if (c->schema == node->schema && !lyd_compare_single(c, node, 0)) {
                mentioned = 1;
                break;
            }
        }
        if (!mentioned && unlink_node(ec, node)) {
            return;
        }
    }
}

enum fleet_err
edit_apply(const struct schema_set *set, struct lyd_node **tree, const struct edit_request *req,
           struct edit_err **errs, int *changed)
{
    struct edit_ctx ec = {.set = set, .tree = tree, .errs = errs, .error_option = req->error_option};
    enum fleet_err rc = FLEET_OK;

    *changed = 0;
    if (req->default_op == EDIT_OP_REPLACE) {
        drop_unmentioned_top(&ec, req->config);
    }
    apply_siblings(&ec, req->config, NULL, req->default_op);
    if (ec.nomem) {
        rc = FLEET_ERR_NOMEM;
        undo_rollback(&ec.log, tree);
        goto cleanup;
    }
    if (ec.failed && ec.error_option != EDIT_CONTINUE_ON_ERROR) {
        undo_rollback(&ec.log, tree);
        goto cleanup;
    }
    /* Validation always runs, also for test-option "set": an invalid running would fail every later edit. */
    if (ec.log.count) {
        rc = validate_edit(set, tree, &ec.log, errs);
        if (rc) {
            undo_rollback(&ec.log, tree);
            rc = rc == FLEET_ERR_INVAL ? FLEET_OK : rc;
            goto cleanup;
        }
    }
    if (req->test_option == EDIT_TEST_ONLY) {
        undo_rollback(&ec.log, tree);
        goto cleanup;
    }
    *changed = ec.log.count > 0;
    undo_commit(&ec.log);

cleanup:
    undo_log_free(&ec.log);
    return rc;
}
