/*
 * Validation after an edit, sized to the edit. For every subtree the edit
 * created: mandatory leaves and choices, min-elements, inside it (through
 * non-presence containers too) and max-elements among its siblings. For
 * every node the edit removed: whether its former parent, still in the tree,
 * lost a mandatory node or fell under min-elements. Types were checked when
 * the edit was parsed. Constraints that span the tree are left to libyang's
 * module validation, run only for modules the schema scan flagged.
 */
#include "validate.h"

#include <stdlib.h>
#include <string.h>

struct vctx {
    const struct ly_ctx *ctx; /* for messages */
    struct edit_err **errs;   /* where failures go */
    int failed;               /* 1 after the first failure */
    int nomem;                /* 1 when memory ran out */
};

static void
fail(struct vctx *v, struct edit_err *err)
{
    if (!err) {
        v->nomem = 1;
        return;
    }
    edit_err_append(v->errs, err);
    v->failed = 1;
}

/* Instances of @p schema among the children of @p parent (NULL: top level starting at @p first). */
static uint32_t
count_instances(const struct lyd_node *first, const struct lysc_node *schema, uint32_t stop_at)
{
    const struct lyd_node *it = NULL;
    uint32_t n = 0;

    if (lyd_find_sibling_val(first, schema, NULL, 0, (struct lyd_node **)&it)) {
        return 0;
    }
    /* Instances of one schema node are adjacent in libyang's sibling order. */
    for (; it && it->schema == schema && n < stop_at; it = it->next) {
        n++;
    }
    return n;
}

/* Path of a missing node @p schema under @p parent (or under the missing node at @p parent_path). */
static char *
child_path(const struct lyd_node *parent, const char *parent_path, const struct lysc_node *schema)
{
    const struct lysc_node *pschema = schema->parent;

    /* The parent's module is its data node's; choice and case are not data. */
    while (pschema && (pschema->nodetype & (LYS_CHOICE | LYS_CASE))) {
        pschema = pschema->parent;
    }
    return edit_child_path(parent, parent_path, pschema ? pschema->module : NULL, schema->module,
                           schema->name);
}

/* Does any data child of @p first (siblings) belong to @p choice? */
static int
choice_has_data(const struct lyd_node *first, const struct lysc_node *choice)
{
    const struct lyd_node *it;

    LY_LIST_FOR(first, it)
    {
        for (const struct lysc_node *s = it->schema ? it->schema->parent : NULL; s; s = s->parent) {
            if (s == choice) {
                return 1;
            }
            if (s->nodetype & (LYS_CONTAINER | LYS_LIST)) {
                break;
            }
        }
    }
    return 0;
}

static void check_children(struct vctx *v, const struct lyd_node *parent, const struct lysc_node *pschema,
                           const char *missing_path);

/* One schema child of an existing parent: mandatory, min-elements, recursing into what exists. */
static void
check_schema_child(struct vctx *v, const struct lyd_node *parent, const struct lysc_node *s)
{
    const struct lyd_node *first = lyd_child(parent);
    struct lyd_node *inst = NULL;
    char *path;

    if (s->flags & LYS_CONFIG_R) {
        return;
    }
    switch (s->nodetype) {
    case LYS_CHOICE:
        if ((s->flags & LYS_MAND_TRUE) && !choice_has_data(first, s)) {
            path = child_path(parent, NULL, s);
            fail(v,
                 edit_err_data_missing(path, "missing-choice", "Missing mandatory choice \"%s\".", s->name));
            free(path);
        }
        break;
    case LYS_LEAF:
    case LYS_ANYDATA:
    case LYS_ANYXML:
        if ((s->flags & LYS_MAND_TRUE) && lyd_find_sibling_val(first, s, NULL, 0, NULL)) {
            path = child_path(parent, NULL, s);
            fail(v, edit_err_data_missing(path, NULL, "Mandatory node \"%s\" instance does not exist.",
                                          s->name));
            free(path);
        }
        break;
    case LYS_LIST:
    case LYS_LEAFLIST: {
        uint32_t min = s->nodetype == LYS_LIST ? ((const struct lysc_node_list *)s)->min
                                               : ((const struct lysc_node_leaflist *)s)->min;
        if (min && count_instances(first, s, min) < min) {
            path = child_path(parent, NULL, s);
            fail(v, edit_err_operation_failed(EDIT_ERR_APP, "too-few-elements", path,
                                              "Too few \"%s\" instances.", s->name));
            free(path);
        }
        if (s->nodetype == LYS_LIST && !lyd_find_sibling_val(first, s, NULL, 0, &inst)) {
            for (; inst && inst->schema == s && !v->failed; inst = inst->next) {
                check_children(v, inst, s, NULL);
            }
        }
        break;
    }
    case LYS_CONTAINER:
        if (!lyd_find_sibling_val(first, s, NULL, 0, &inst)) {
            check_children(v, inst, s, NULL);
        } else if (!(s->flags & LYS_PRESENCE)) {
            /* A missing non-presence container still exists in meaning: its mandatory nodes must be there. */
            path = child_path(parent, NULL, s);
            check_children(v, NULL, s, path);
            free(path);
        }
        break;
    default:
        break;
    }
}

/*
 * All constraints local to the subtree of @p parent (an instance of @p pschema,
 * or NULL for a non-presence container with no instance at @p missing_path,
 * where any mandatory descendant is missing by definition).
 */
static void
check_children(struct vctx *v, const struct lyd_node *parent, const struct lysc_node *pschema,
               const char *missing_path)
{
    const struct lysc_node *s = NULL;

    while (!v->failed && (s = lys_getnext(s, pschema, NULL, LYS_GETNEXT_WITHCHOICE))) {
        char *path;
        if (parent) {
            check_schema_child(v, parent, s);
            continue;
        }
        if (s->flags & LYS_CONFIG_R) {
            continue;
        }
        path = child_path(NULL, missing_path, s);
        if (s->flags & LYS_MAND_TRUE) {
            if (s->nodetype == LYS_CHOICE) {
                fail(v, edit_err_data_missing(path, "missing-choice", "Missing mandatory choice \"%s\".",
                                              s->name));
            } else {
                fail(v, edit_err_data_missing(path, NULL, "Mandatory node \"%s\" instance does not exist.",
                                              s->name));
            }
        } else if (s->nodetype == LYS_CONTAINER && !(s->flags & LYS_PRESENCE)) {
            check_children(v, NULL, s, path);
        }
        free(path);
    }
}

static void
check_max_elements(struct vctx *v, const struct lyd_node *node)
{
    const struct lysc_node *s = node->schema;
    uint32_t max;
    char *path;

    if (!(s->nodetype & (LYS_LIST | LYS_LEAFLIST))) {
        return;
    }
    max = s->nodetype == LYS_LIST ? ((const struct lysc_node_list *)s)->max
                                  : ((const struct lysc_node_leaflist *)s)->max;
    if (max == UINT32_MAX) {
        return; /* unbounded: no count needed */
    }
    if (count_instances(lyd_first_sibling(node), s, max + 1) > max) {
        path = lyd_path(node, LYD_PATH_STD, NULL, 0);
        fail(v, edit_err_operation_failed(EDIT_ERR_APP, "too-many-elements", path,
                                          "Too many \"%s\" instances.", s->name));
        free(path);
    }
}

/* Still in the datastore, or removed with an ancestor by the same edit? */
static int
attached_fast(const struct lyd_node *node, const struct lyd_node *root)
{
    while (lyd_parent(node)) {
        node = lyd_parent(node);
    }
    return root && lyd_first_sibling(node) == root;
}

static void
check_removed(struct vctx *v, const struct undo_entry *e, const struct lyd_node *root)
{
    const struct lysc_node *s = e->node->schema;

    if (!e->parent || !attached_fast(e->parent, root)) {
        return; /* top level or gone with its parent: nothing local to check */
    }
    check_schema_child(v, e->parent, s);
    for (const struct lysc_node *c = s->parent; c && !(c->nodetype & (LYS_CONTAINER | LYS_LIST));
         c = c->parent) {
        if (c->nodetype == LYS_CHOICE) {
            check_schema_child(v, e->parent, c);
        }
    }
}

/*
 * libyang deletes a node whose "when" turned false if it was true before
 * (LYD_WHEN_TRUE) and frees it, outside the edit's undo log: a rollback
 * would then touch freed memory and lose data. Clearing the flag makes
 * libyang report the false "when" as an error instead, so an edit that
 * would make existing data disappear implicitly is refused, and the tree
 * stays exactly as the log knows it.
 */
static void
forget_when_results(struct lyd_node *tree, const struct lys_module *mod)
{
    struct lyd_node *top;
    struct lyd_node *it;

    LY_LIST_FOR(tree, top)
    {
        if (lyd_owner_module(top) != mod) {
            continue;
        }
        LYD_TREE_DFS_BEGIN(top, it)
        {
            it->flags &= ~LYD_WHEN_TRUE;
            LYD_TREE_DFS_END(top, it);
        }
    }
}

static enum fleet_err
validate_flagged_modules(const struct schema_set *set, struct lyd_node **tree, struct edit_err **errs)
{
    for (size_t i = 0; i < set->module_count; i++) {
        if (!set->modules[i].needs_module_validation) {
            continue;
        }
        forget_when_results(*tree, set->modules[i].mod);
        if (lyd_validate_module(tree, set->modules[i].mod, LYD_VALIDATE_NO_STATE, NULL)) {
            struct edit_err *err = edit_error_from_libyang(set->ctx);
            if (!err) {
                return FLEET_ERR_NOMEM;
            }
            edit_err_append(errs, err);
            return FLEET_ERR_INVAL;
        }
    }
    return FLEET_OK;
}

enum fleet_err
validate_edit(const struct schema_set *set, struct lyd_node **tree, const struct undo_log *log,
              struct edit_err **errs)
{
    struct vctx v = {.ctx = set->ctx, .errs = errs};

    for (size_t i = 0; i < log->count && !v.failed && !v.nomem; i++) {
        const struct undo_entry *e = &log->entries[i];
        if (e->kind == UNDO_CREATED) {
            if (!attached_fast(e->node, *tree) || (e->node->flags & LYD_DEFAULT)) {
                continue;
            }
            if (e->node->schema->nodetype & (LYS_CONTAINER | LYS_LIST)) {
                check_children(&v, e->node, e->node->schema, NULL);
            }
            if (!v.failed) {
                check_max_elements(&v, e->node);
            }
        } else if (e->kind == UNDO_UNLINKED) {
            check_removed(&v, e, *tree);
        }
    }
    if (v.nomem) {
        return FLEET_ERR_NOMEM;
    }
    if (v.failed) {
        return FLEET_ERR_INVAL;
    }
    return set->any_module_validation ? validate_flagged_modules(set, tree, errs) : FLEET_OK;
}

enum fleet_err
validate_full(const struct ly_ctx *ctx, struct lyd_node **tree, struct edit_err **errs)
{
    struct edit_err *err;

    if (!lyd_validate_all(tree, ctx, LYD_VALIDATE_NO_STATE, NULL)) {
        return FLEET_OK;
    }
    err = edit_error_from_libyang(ctx);
    if (!err) {
        return FLEET_ERR_NOMEM;
    }
    edit_err_append(errs, err);
    return FLEET_ERR_INVAL;
}
