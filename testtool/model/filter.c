/*
 * Filters of get and get-config (see filter.h).
 *
 * Subtree filtering walks the data and the filter together, one data
 * instance at a time. At each instance the filter is not one sibling set but
 * several: every containment node that matched the instance contributes its
 * children as an independent set, and the instance's output is their union.
 * Evaluating all sets against each data child in data order gives the union
 * in data order with no node copied twice, without merging trees afterwards.
 *
 * Filter nodes come in two shapes from libyang: data nodes (the schema knew
 * the element and its value validated) and opaque nodes (everything else,
 * including every descendant of an opaque node). The accessors below hide the
 * difference so that matching only sees name, namespace, text and children.
 *
 * The XPath filter leaves evaluation to libyang and merges copies of the
 * selected nodes, with their ancestors, into one tree.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "xmlguard.h"

/* Sibling sets or candidate nodes handled at one level stay inline up to this
 * count; a level with more (many containment nodes for one instance, many
 * list entries picked by key) spills to the heap. */
#define FLT_VEC_INLINE 4

/* Filter content inherits the default namespace of <rpc>, so an element the
 * client wrote without xmlns arrives in the NETCONF base namespace. No YANG
 * data node lives there (ietf-netconf defines only RPCs), so it is read as
 * "no namespace", the same as xmlns="". */
#define FLT_NS_NETCONF_BASE "urn:ietf:params:xml:ns:netconf:base:1.0"

/* RFC 6241 6.2: what a filter node asks for. */
enum flt_kind {
    FLT_SELECT,  /* no children, no text: the matching data subtrees */
    FLT_MATCH,   /* no children, text: a condition on the parent instance, and the matching node */
    FLT_CONTAIN, /* children: recurse into the matching data instances */
};

/* What a data instance contributes to the output. */
enum flt_sel {
    FLT_NONE,  /* nothing */
    FLT_PART,  /* the copy built while evaluating it */
    FLT_WHOLE, /* the instance with its whole subtree */
};

/* A growable array of node pointers, inline while small. Never copied by value:
 * item may point into the struct itself. */
struct flt_vec {
    const struct lyd_node **item;                       /* inline_item or a heap block; count entries valid */
    uint32_t count;                                     /* entries in use */
    uint32_t size;                                      /* capacity of item */
    const struct lyd_node *inline_item[FLT_VEC_INLINE]; /* storage until the first spill */
};

/* Where copies of selected data nodes go while one level is evaluated. */
struct flt_out {
    const struct lyd_node *src; /* data instance the copies belong under; NULL at top level */
    struct lyd_node *node;      /* copy of src, created by the first selected child; NULL before */
    struct lyd_node *first;     /* top level only: first output sibling, NULL while empty */
};

static enum fleet_err flt_instance(const struct lyd_node *inst, struct flt_vec *sets, struct lyd_node **copy,
                                   enum flt_sel *sel);

static void
flt_vec_init(struct flt_vec *vec)
{
    vec->item = vec->inline_item;
    vec->count = 0;
    vec->size = FLT_VEC_INLINE;
}

static void
flt_vec_close(struct flt_vec *vec)
{
    if (vec->item != vec->inline_item) {
        free(vec->item);
    }
    flt_vec_init(vec);
}

static enum fleet_err
flt_vec_push(struct flt_vec *vec, const struct lyd_node *node)
{
    enum fleet_err err = FLEET_OK;
    const struct lyd_node **grown;
    uint32_t size;

    if (vec->count == vec->size) {
        size = vec->size * 2;
        if (vec->item == vec->inline_item) {
            grown = malloc(size * sizeof *grown);
            if (grown) {
                memcpy(grown, vec->item, vec->count * sizeof *grown);
            }
        } else {
            grown = realloc(vec->item, size * sizeof *grown);
        }
        if (!grown) {
            err = FLEET_ERR_NOMEM;
            goto cleanup;
        }
        vec->item = grown;
        vec->size = size;
    }
    vec->item[vec->count++] = node;

cleanup:
    return err;
}

static int
flt_ptr_cmp(const void *a, const void *b)
{
    const struct lyd_node *const *pa = a, *const *pb = b;

    return (*pa > *pb) - (*pa < *pb);
}

static enum fleet_err
flt_err_of(LY_ERR r)
{
    return r == LY_EMEM ? FLEET_ERR_NOMEM : FLEET_ERR_INVAL;
}

/* --- accessors over data and opaque nodes --- */

static const char *
flt_name(const struct lyd_node *node)
{
    /* LYD_NAME() would cast away const */
    return node->schema ? node->schema->name : ((const struct lyd_node_opaq *)node)->name.name;
}

/* Namespace URI of a node; NULL or "" when an opaque node has none. */
static const char *
flt_ns(const struct lyd_node *node)
{
    const struct lyd_node_opaq *opaq = (const struct lyd_node_opaq *)node;
    const struct lys_module *mod = NULL;
    const char *ns;

    if (node->schema) {
        /* the schema node's own module, not the owner's: augmented nodes carry the augmenting namespace */
        ns = node->schema->module->ns;
    } else if (opaq->format == LY_VALUE_XML) {
        ns = opaq->name.module_ns;
    } else {
        /* a JSON-parsed opaque node names its module instead; an unknown name then matches nothing */
        if (opaq->name.module_name) {
            mod = ly_ctx_get_module_implemented(opaq->ctx, opaq->name.module_name);
        }
        ns = mod ? mod->ns : opaq->name.module_name;
    }
    return ns;
}

static int
flt_ns_any(const char *ns)
{
    return !ns || !ns[0] || !strcmp(ns, FLT_NS_NETCONF_BASE);
}

/* Text content: the canonical value of a term, the raw text of an opaque node, "" for inner nodes. */
static const char *
flt_text(const struct lyd_node *node)
{
    const char *text;

    if (node->schema) {
        text = (node->schema->nodetype & LYD_NODE_TERM) ? lyd_get_value(node) : NULL;
    } else {
        text = ((const struct lyd_node_opaq *)node)->value;
    }
    return text ? text : "";
}

static int
flt_blank(const char *text)
{
    while (*text && isspace((unsigned char)*text)) {
        text++;
    }
    return !*text;
}

static enum flt_kind
flt_kind_of(const struct lyd_node *f)
{
    enum flt_kind kind = FLT_CONTAIN;

    if (!lyd_child(f)) {
        kind = flt_blank(flt_text(f)) ? FLT_SELECT : FLT_MATCH;
    }
    return kind;
}

/* Filter node f names data node x (RFC 6241 6.2.2: a filter node without namespace matches any). */
static int
flt_names(const struct lyd_node *f, const struct lyd_node *x)
{
    const char *fns, *xns;
    int match;

    if (f->schema && (f->schema == x->schema)) {
        /* the common case: both resolved to the same schema node */
        match = 1;
    } else if (strcmp(flt_name(f), flt_name(x))) {
        match = 0;
    } else {
        fns = flt_ns(f);
        xns = flt_ns(x);
        match = flt_ns_any(fns) || (xns && !strcmp(fns, xns));
    }
    return match;
}

/* Part of an identity value after its prefix (a JSON module name or an XML prefix). */
static const char *
flt_ident_local(const char *text)
{
    const char *colon = strchr(text, ':');

    return colon ? colon + 1 : text;
}

/*
 * Content match of filter node f against data node x. Values are compared as
 * canonical text: a filter data node is canonical already, and an opaque one
 * is taken as written. An identityref is compared without its prefix on both
 * sides, because an opaque filter value keeps the client's XML prefix while
 * the data says the module name; the cost is that equal identity names of two
 * modules match each other. Non-canonical spellings in opaque nodes ("01"
 * for 1) do not match: canonizing them would log a validation error for every
 * instance tried.
 */
static int
flt_value_eq(const struct lyd_node *f, const struct lyd_node *x)
{
    const struct lyd_node_term *term = (const struct lyd_node_term *)x;
    const char *ftext = flt_text(f), *xtext = flt_text(x);
    int eq = 0;

    /* only leaf-like data has content to match */
    if (x->schema ? (x->schema->nodetype & LYD_NODE_TERM) : !lyd_child(x)) {
        eq = !strcmp(ftext, xtext);
        if (!eq && x->schema && term->value.realtype && (term->value.realtype->basetype == LY_TYPE_IDENT)) {
            eq = !strcmp(flt_ident_local(ftext), flt_ident_local(xtext));
        }
    }
    return eq;
}

/* Does some sibling of first satisfy content-match node f? Hashes when f is a data node. */
static enum fleet_err
flt_find_match(const struct lyd_node *first, const struct lyd_node *f, int *found)
{
    enum fleet_err err = FLEET_OK;
    struct lyd_node *x = NULL;
    const struct lyd_node *iter;
    LY_ERR r;

    *found = 0;
    if (!first) {
        goto cleanup;
    }
    if (f->schema && (LYD_CTX(f) == LYD_CTX(first)) && (f->schema->nodetype & LYD_NODE_TERM)) {
        if (f->schema->nodetype == LYS_LEAF) {
            r = lyd_find_sibling_val(first, f->schema, NULL, 0, &x);
        } else {
            /* leaf-list: instances hash by value */
            r = lyd_find_sibling_first(first, f, &x);
        }
        if (r && (r != LY_ENOTFOUND)) {
            err = flt_err_of(r);
            goto cleanup;
        }
        *found = x && flt_value_eq(f, x);
        goto cleanup;
    }
    for (iter = first; iter && !*found; iter = iter->next) {
        *found = flt_names(f, iter) && flt_value_eq(f, iter);
    }

cleanup:
    return err;
}

/* --- output --- */

/* Create the copy of the instance on first use. */
static enum fleet_err
flt_out_ensure(struct flt_out *out)
{
    enum fleet_err err = FLEET_OK;

    /* not recursive: the copy of a list entry gets its keys anyway */
    if (out->src && !out->node && lyd_dup_single(out->src, NULL, 0, &out->node)) {
        err = FLEET_ERR_NOMEM;
    }
    return err;
}

/* Append a copy to the output; takes ownership of copy in every case. */
static enum fleet_err
flt_emit(struct flt_out *out, struct lyd_node *copy)
{
    enum fleet_err err = FLEET_OK;
    LY_ERR r = LY_SUCCESS;

    if (!out->src) {
        r = lyd_insert_sibling(out->first, copy, &out->first);
    } else {
        err = flt_out_ensure(out);
        if (err) {
            goto cleanup;
        }
        r = lyd_insert_child(out->node, copy);
    }
    if (r) {
        err = flt_err_of(r);
        goto cleanup;
    }
    copy = NULL;

cleanup:
    lyd_free_tree(copy);
    return err;
}

/* --- evaluation --- */

/*
 * Drop the sets whose content-match nodes do not all match a child of the
 * instance (RFC 6241 6.2.5). Reports whether a surviving set has content-match
 * nodes (the instance is then selected even if nothing else is) and whether
 * one has nothing else (the whole instance is then selected).
 */
static enum fleet_err
flt_keep_matching(const struct lyd_node *children, struct flt_vec *sets, int *has_match, int *match_only)
{
    enum fleet_err err = FLEET_OK;
    const struct lyd_node *f;
    uint32_t i, kept = 0, matches, others;
    int ok;

    *has_match = 0;
    *match_only = 0;
    for (i = 0; i < sets->count; i++) {
        ok = 1;
        matches = 0;
        others = 0;
        for (f = sets->item[i]; f && ok; f = f->next) {
            if (flt_kind_of(f) != FLT_MATCH) {
                others++;
                continue;
            }
            matches++;
            err = flt_find_match(children, f, &ok);
            if (err) {
                goto cleanup;
            }
        }
        if (!ok) {
            continue;
        }
        sets->item[kept++] = sets->item[i];
        *has_match |= matches > 0;
        *match_only |= !others;
    }
    sets->count = kept;

cleanup:
    return err;
}

/* Evaluate data node x against all filter sets of its level and emit what it contributes. */
static enum fleet_err
flt_child(const struct lyd_node *x, const struct flt_vec *sets, struct flt_out *out)
{
    enum fleet_err err = FLEET_OK;
    struct flt_vec sub;
    struct lyd_node *copy = NULL;
    const struct lyd_node *f;
    enum flt_sel sel = FLT_NONE;
    uint32_t i;

    flt_vec_init(&sub);
    for (i = 0; (i < sets->count) && (sel != FLT_WHOLE); i++) {
        for (f = sets->item[i]; f && (sel != FLT_WHOLE); f = f->next) {
            if (!flt_names(f, x)) {
                continue;
            }
            switch (flt_kind_of(f)) {
            case FLT_SELECT:
                sel = FLT_WHOLE;
                break;
            case FLT_MATCH:
                if (flt_value_eq(f, x)) {
                    sel = FLT_WHOLE;
                }
                break;
            case FLT_CONTAIN:
                err = flt_vec_push(&sub, lyd_child(f));
                if (err) {
                    goto cleanup;
                }
                break;
            }
        }
    }
    if ((sel != FLT_WHOLE) && sub.count) {
        err = flt_instance(x, &sub, &copy, &sel);
        if (err) {
            goto cleanup;
        }
    }
    if (sel == FLT_NONE) {
        goto cleanup;
    }

    if (out->src && x->schema && (x->schema->flags & LYS_KEY)) {
        /* a key already sits in the copy of its list entry; selecting it only selects the entry */
        err = flt_out_ensure(out);
        goto cleanup;
    }
    if (sel == FLT_WHOLE) {
        lyd_free_tree(copy);
        copy = NULL;
        if (lyd_dup_single(x, NULL, LYD_DUP_RECURSIVE, &copy)) {
            err = FLEET_ERR_NOMEM;
            goto cleanup;
        }
    }
    err = flt_emit(out, copy);
    copy = NULL;

cleanup:
    lyd_free_tree(copy);
    flt_vec_close(&sub);
    return err;
}

/* Can the data child a filter node asks for be found by hash instead of by scanning? */
static int
flt_hashable(const struct lyd_node *f)
{
    const struct lyd_node *key;
    int hashable = 0;

    switch (f->schema ? f->schema->nodetype : 0) {
    case LYS_CONTAINER:
    case LYS_LEAF:
    case LYS_ANYDATA:
    case LYS_ANYXML:
        /* one instance at most: found by schema alone */
        hashable = 1;
        break;
    case LYS_LIST:
        /* the parser made a data list node only with all keys present; an empty one is a selection */
        hashable = !(f->schema->flags & LYS_KEYLESS);
        for (key = lyd_child(f); hashable && key && key->schema && (key->schema->flags & LYS_KEY);
             key = key->next) {
            hashable = !flt_blank(flt_text(key));
        }
        break;
    default:
        /* leaf-lists and opaque nodes: several instances or no schema to hash by */
        break;
    }
    return hashable;
}

/*
 * Collect the data children the sets can select, by hash, when every filter
 * node allows it. Content-match nodes need a scan anyway (they are checked on
 * each candidate), so a level with any of them is not hashed.
 */
static enum fleet_err
flt_candidates(const struct lyd_node *first, const struct flt_vec *sets, struct flt_vec *cand, int *hashed)
{
    enum fleet_err err = FLEET_OK;
    const struct lyd_node *f;
    struct lyd_node *x;
    uint32_t i;
    LY_ERR r;

    *hashed = 0;
    for (i = 0; i < sets->count; i++) {
        for (f = sets->item[i]; f; f = f->next) {
            if ((flt_kind_of(f) == FLT_MATCH) || !flt_hashable(f) || (LYD_CTX(f) != LYD_CTX(first))) {
                goto cleanup;
            }
        }
    }
    for (i = 0; i < sets->count; i++) {
        for (f = sets->item[i]; f; f = f->next) {
            x = NULL;
            if (f->schema->nodetype == LYS_LIST) {
                r = lyd_find_sibling_first(first, f, &x);
            } else {
                r = lyd_find_sibling_val(first, f->schema, NULL, 0, &x);
            }
            if (r && (r != LY_ENOTFOUND)) {
                err = flt_err_of(r);
                goto cleanup;
            }
            if (x) {
                err = flt_vec_push(cand, x);
                if (err) {
                    goto cleanup;
                }
            }
        }
    }
    *hashed = 1;

cleanup:
    return err;
}

/*
 * Evaluate the siblings starting at first against the sets, in data order.
 * Below the top level, when every filter node can be looked up by hash, only
 * the nodes found are evaluated. With more than one found, data order is
 * restored by one walk over the siblings that compares pointers only: O(n log k)
 * instead of O(n) full matches. A per-level position index would remove the
 * walk if picking many entries out of huge lists ever shows up in profiles.
 */
static enum fleet_err
flt_level(const struct lyd_node *first, const struct flt_vec *sets, struct flt_out *out)
{
    enum fleet_err err = FLEET_OK;
    struct flt_vec cand;
    const struct lyd_node *x;
    int hashed = 0;

    flt_vec_init(&cand);
    if (!first) {
        goto cleanup;
    }
    if (out->src) {
        /* top-level siblings have no hash table in libyang 2.1; their lookup would scan anyway */
        err = flt_candidates(first, sets, &cand, &hashed);
        if (err) {
            goto cleanup;
        }
    }
    if (!hashed) {
        for (x = first; x && !err; x = x->next) {
            err = flt_child(x, sets, out);
        }
    } else if (cand.count == 1) {
        err = flt_child(cand.item[0], sets, out);
    } else if (cand.count > 1) {
        qsort(cand.item, cand.count, sizeof *cand.item, flt_ptr_cmp);
        for (x = first; x && !err; x = x->next) {
            if (bsearch(&x, cand.item, cand.count, sizeof *cand.item, flt_ptr_cmp)) {
                err = flt_child(x, sets, out);
            }
        }
    }

cleanup:
    flt_vec_close(&cand);
    return err;
}

/*
 * Evaluate data instance inst against the children sets of the containment
 * nodes that matched it. sets is filtered in place. On FLT_PART, *copy is the
 * new copy of inst holding what was selected; the caller owns it.
 */
static enum fleet_err
flt_instance(const struct lyd_node *inst, struct flt_vec *sets, struct lyd_node **copy, enum flt_sel *sel)
{
    enum fleet_err err = FLEET_OK;
    struct flt_out out = {.src = inst};
    const struct lyd_node *children = lyd_child(inst);
    int has_match, match_only;

    *copy = NULL;
    *sel = FLT_NONE;

    /* step 1: content-match nodes decide whether the instance takes part at all */
    err = flt_keep_matching(children, sets, &has_match, &match_only);
    if (err || !sets->count) {
        goto cleanup;
    }
    if (match_only) {
        *sel = FLT_WHOLE;
        goto cleanup;
    }
    if (has_match) {
        /* the matched content-match nodes themselves are output, so the instance is too */
        err = flt_out_ensure(&out);
        if (err) {
            goto cleanup;
        }
    }

    /* step 2: selection and containment nodes pick the children */
    err = flt_level(children, sets, &out);
    if (err) {
        goto cleanup;
    }
    if (out.node) {
        *sel = FLT_PART;
        *copy = out.node;
        out.node = NULL;
    }

cleanup:
    lyd_free_tree(out.node);
    return err;
}

enum fleet_err
filter_subtree(const struct lyd_node *data, const struct lyd_node *filter, struct lyd_node **result)
{
    enum fleet_err err = FLEET_OK;
    struct flt_vec sets;
    struct flt_out out = {0};

    *result = NULL;
    flt_vec_init(&sets);
    if (!data || !filter) {
        goto cleanup;
    }

    /*
     * The top level has no parent instance for content-match nodes to qualify,
     * so each top-level filter node stands alone: a content-match node there
     * selects the equal top-level leaf and excludes nothing else.
     */
    err = flt_vec_push(&sets, filter);
    if (err) {
        goto cleanup;
    }
    err = flt_level(data, &sets, &out);
    if (err) {
        goto cleanup;
    }
    *result = out.first;
    out.first = NULL;

cleanup:
    lyd_free_siblings(out.first);
    flt_vec_close(&sets);
    return err;
}

/* Is anc a proper ancestor of node? */
static int
flt_is_ancestor(const struct lyd_node *anc, const struct lyd_node *node)
{
    const struct lyd_node *iter = lyd_parent(node);

    while (iter && (iter != anc)) {
        iter = lyd_parent(iter);
    }
    return iter != NULL;
}

int
filter_is_selection(const struct lyd_node *f, const char **ns, const char **name)
{
    *ns = flt_ns(f);
    *name = flt_name(f);
    return flt_kind_of(f) == FLT_SELECT && !flt_ns_any(*ns);
}

enum fleet_err
filter_xpath(const struct lyd_node *data, const char *xpath, struct lyd_node **result)
{
    enum fleet_err err = FLEET_OK;
    struct ly_set *set = NULL;
    struct lyd_node *res = NULL, *copy = NULL;
    const struct lyd_node *node, *kept = NULL;
    uint32_t i;
    LY_ERR r;

    *result = NULL;
    if (!xpath) {
        err = FLEET_ERR_INVAL;
        goto cleanup;
    }
    if (xmlguard_xpath_unsafe(xpath)) {
        err = FLEET_ERR_INVAL; /* callers that answer a client say why first (ops_filter_print) */
        goto cleanup;
    }
    if (!data) {
        /* without a tree there is no context to compile the expression in; nothing can match anyway */
        goto cleanup;
    }

    /* no context node: the expression is evaluated from the root, as a select attribute is */
    r = lyd_find_xpath3(NULL, data, xpath, NULL, &set);
    if (r) {
        err = flt_err_of(r);
        goto cleanup;
    }

    for (i = 0; i < set->count; i++) {
        node = set->dnodes[i];
        /*
         * libyang returns nodes in document order (unions are sorted), so a descendant of a node
         * already copied with its subtree follows it directly; skipping it saves
         * a copy and a merge. In any other order the merge below still keeps
         * every node once.
         */
        if (kept && flt_is_ancestor(kept, node)) {
            continue;
        }
        if (lyd_dup_single(node, NULL, LYD_DUP_RECURSIVE | LYD_DUP_WITH_PARENTS, &copy)) {
            err = FLEET_ERR_NOMEM;
            goto cleanup;
        }
        while (lyd_parent(copy)) {
            copy = lyd_parent(copy);
        }
        /* the merge spends the copy, error or not */
        r = lyd_merge_tree(&res, copy, LYD_MERGE_DESTRUCT);
        copy = NULL;
        if (r) {
            err = flt_err_of(r);
            goto cleanup;
        }
        kept = node;
    }
    *result = res;
    res = NULL;

cleanup:
    ly_set_free(set, NULL);
    lyd_free_siblings(res);
    return err;
}
