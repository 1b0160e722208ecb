/*
 * The state tree as text with value slots (see state_text.h).
 *
 * The text comes from libyang's own printer, on a copy of the state tree
 * made as a get makes it, so nothing about namespaces, prefixes or which
 * nodes print has to be known here. The slots are found by walking the
 * printed elements and the tree's nodes together, depth first, with the one
 * XML scanner: each element must carry its node's name and each slot the
 * leaf's value as libyang holds it, or the subtree is left to libyang.
 */
#include "state_text.h"

#include <stdlib.h>
#include <string.h>

#include "movers.h"
#include "xmlscan.h"

/* Modules whose top-level nodes a get builds from elsewhere than the state tree. */
static const char *const generated_modules[] = {"ietf-interfaces", "ietf-system", "nc-notifications",
                                                "ietf-yang-library", "ietf-netconf-monitoring"};

#define NO_NODE UINT32_MAX

/* One moving leaf's value in a text. */
struct text_slot {
    uint32_t off;                 /* where the printed value starts */
    uint32_t len;                 /* its length */
    uint32_t mover;               /* index in the type's movers */
    const struct lysc_node *leaf; /* set when each value must pass libyang (restricted or not a number) */
};

/* One printed node: where its element lies in the text, and its place among its siblings. */
struct text_node {
    const struct lyd_node *node; /* the state tree's node, for its schema and keys */
    uint32_t start;              /* its '<' */
    uint32_t body;               /* after its start tag */
    uint32_t end;                /* after its end tag (an empty tag: body) */
    uint32_t first_child;        /* index in nodes, NO_NODE for none */
    uint32_t next;               /* the next sibling's index, NO_NODE for none */
    uint32_t slot;               /* the first slot at or after start */
    uint16_t rank;               /* its schema node's place among its schema siblings */
    uint8_t empty;               /* 1: printed as <name/> */
};

/* One top-level subtree. */
struct text_top {
    char *text;              /* printed with the reply's flags */
    size_t len;              /* strlen(text) */
    struct text_slot *slots; /* in text order */
    uint32_t slot_count;     /* entries in slots */
    struct text_node *nodes; /* depth first; nodes[0] is the top */
    uint32_t node_count;     /* entries in nodes */
};

struct state_text {
    const struct state_movers *movers; /* the type's moving leaves */
    const struct ly_ctx *ctx;          /* the type's context */
    struct text_top *tops;             /* in state tree order */
    uint32_t count;                    /* entries in tops */
};

/* The walk of one subtree's text and nodes. */
struct pairing {
    const struct state_movers *movers;
    const char *text;        /* the subtree's text */
    uint32_t pos;            /* depth-first position of the next node */
    uint32_t k;              /* next mover */
    struct text_top *top;    /* slots and nodes go here */
    uint32_t slot_cap;       /* capacity of top->slots */
    uint32_t node_cap;       /* capacity of top->nodes */
    struct movers_info info; /* mover k, when k < count */
};

static void
next_mover(struct pairing *w)
{
    w->k++;
    if (w->k < movers_count(w->movers)) {
        movers_get(w->movers, w->k, &w->info);
    }
}

static uint32_t
subtree_size(const struct lyd_node *n)
{
    const struct lyd_node *c;
    uint32_t size = 1;

    LY_LIST_FOR(lyd_child(n), c)
    {
        size += subtree_size(c);
    }
    return size;
}

/* Nodes from w->pos on that were not printed: the movers among them have no slot. */
static void
skip_nodes(struct pairing *w, uint32_t count)
{
    w->pos += count;
    while (w->k < movers_count(w->movers) && w->info.pos < w->pos) {
        next_mover(w);
    }
}

/* The place of @p schema among the data nodes its parent may hold, in schema order (the order libyang
 * keeps siblings in). */
static uint16_t
schema_rank(const struct lysc_node *schema)
{
    const struct lysc_node *parent = lysc_data_parent(schema), *it = NULL;
    const struct lys_module *mod = parent ? NULL : schema->module;
    uint16_t rank = 0;

    if (!parent) {
        return 0; /* top level: one subtree at a time */
    }
    while ((it = lys_getnext(it, parent, mod ? mod->compiled : NULL, 0)) && it != schema) {
        rank++;
    }
    return rank;
}

/* Whether each value of @p leaf must be checked by libyang: not a plain integer type, or one with a range
 * of its own that a moving value may leave. */
static int
needs_check(const struct lysc_node *leaf)
{
    const struct lysc_type *type = ((const struct lysc_node_leaf *)leaf)->type;

    switch (type->basetype) {
    case LY_TYPE_UINT8:
    case LY_TYPE_UINT16:
    case LY_TYPE_UINT32:
    case LY_TYPE_UINT64:
    case LY_TYPE_INT8:
    case LY_TYPE_INT16:
    case LY_TYPE_INT32:
    case LY_TYPE_INT64:
        return ((const struct lysc_type_num *)type)->range != NULL;
    default:
        return 1;
    }
}

static int
add_slot(struct pairing *w, const char *value, size_t len, const struct lysc_node *leaf)
{
    struct text_top *top = w->top;

    if (top->slot_count == w->slot_cap) {
        uint32_t cap = w->slot_cap ? 2 * w->slot_cap : 16;
        struct text_slot *grown = realloc(top->slots, cap * sizeof *grown);
        if (!grown) {
            return -1;
        }
        top->slots = grown;
        w->slot_cap = cap;
    }
    top->slots[top->slot_count++] = (struct text_slot){
        .off = (uint32_t)(value - w->text),
        .len = (uint32_t)len,
        .mover = w->k,
        .leaf = needs_check(leaf) ? leaf : NULL,
    };
    return 0;
}

/* A new entry in w->top->nodes for state node @p orig, whose element starts at @p tag; NO_NODE when out of
 * memory. */
static uint32_t
add_node(struct pairing *w, const struct lyd_node *orig, const struct xmlscan_tag *tag)
{
    struct text_top *top = w->top;

    if (top->node_count == w->node_cap) {
        uint32_t cap = w->node_cap ? 2 * w->node_cap : 64;
        struct text_node *grown = realloc(top->nodes, cap * sizeof *grown);
        if (!grown) {
            return NO_NODE;
        }
        top->nodes = grown;
        w->node_cap = cap;
    }
    top->nodes[top->node_count] = (struct text_node){
        .node = orig,
        .start = (uint32_t)(tag->start - w->text),
        .body = (uint32_t)(tag->next - w->text),
        .first_child = NO_NODE,
        .next = NO_NODE,
        .slot = top->slot_count,
        .rank = schema_rank(orig->schema),
        .empty = (uint8_t)tag->empty,
    };
    return top->node_count++;
}

/*
 * Node @p n of the printed copy (@p orig the same node of the type's state tree) is the element at *@p p:
 * check it, take its slot and its entry, move *@p p past it. -1 when they differ.
 */
static int
pair_node(struct pairing *w, const struct lyd_node *n, const struct lyd_node *orig, const char **p,
          uint32_t *index)
{
    struct xmlscan_tag t, end;
    uint32_t me = w->pos++, self, prev = NO_NODE;

    if (!n->schema || (n->schema->nodetype & LYD_NODE_ANY) || xmlscan_next_tag(*p, &t) || t.end ||
        !xmlscan_eq(t.local, t.local_len, n->schema->name) || (self = add_node(w, orig, &t)) == NO_NODE) {
        return -1;
    }
    *index = self;
    if (n->schema->nodetype & LYD_NODE_TERM) {
        const char *value = t.next, *stop = t.empty ? t.next : strchr(t.next, '<');
        if (!stop ||
            (!t.empty && (xmlscan_read_tag(stop, &end) || !end.end || !xmlscan_same_qname(&t, &end)))) {
            return -1;
        }
        *p = t.empty ? t.next : end.next;
        if (w->k < movers_count(w->movers) && w->info.pos == me) {
            const char *held = lyd_get_value(n);
            size_t len = (size_t)(stop - value);
            if (!held || strlen(held) != len || memcmp(held, value, len) ||
                add_slot(w, value, len, n->schema)) {
                return -1;
            }
            next_mover(w);
        }
        w->top->nodes[self].end = (uint32_t)(*p - w->text);
        return 0;
    }
    if (w->k < movers_count(w->movers) && w->info.pos == me) {
        return -1; /* movers are leaves */
    }
    *p = t.next;
    {
        const struct lyd_node *c, *oc = lyd_child(orig);
        LY_LIST_FOR(lyd_child(n), c)
        {
            struct xmlscan_tag peek;
            uint32_t child;
            if (!oc || oc->schema != c->schema) {
                return -1;
            }
            if (!t.empty && !xmlscan_next_tag(*p, &peek) && !peek.end && c->schema &&
                xmlscan_eq(peek.local, peek.local_len, c->schema->name)) {
                if (pair_node(w, c, oc, p, &child)) {
                    return -1;
                }
                if (prev == NO_NODE) {
                    w->top->nodes[self].first_child = child;
                } else {
                    w->top->nodes[prev].next = child;
                }
                prev = child;
            } else {
                skip_nodes(w, subtree_size(c));
            }
            oc = oc->next;
        }
    }
    if (!t.empty) {
        if (xmlscan_next_tag(*p, &end) || !end.end || !xmlscan_same_qname(&t, &end)) {
            return -1;
        }
        *p = end.next;
    }
    w->top->nodes[self].end = (uint32_t)(*p - w->text);
    return 0;
}

static int
generated(const struct lyd_node *top)
{
    for (size_t i = 0; i < sizeof generated_modules / sizeof generated_modules[0]; i++) {
        if (!strcmp(top->schema->module->name, generated_modules[i])) {
            return 1;
        }
    }
    return 0;
}

static void
top_clear(struct text_top *top)
{
    free(top->text);
    free(top->slots);
    free(top->nodes);
    memset(top, 0, sizeof *top);
}

enum fleet_err
state_text_build(const struct device_type *type, struct state_text **out)
{
    struct state_text *st;
    struct lyd_node *copy = NULL, *top;
    const struct lyd_node *orig = type->state_tree;
    struct pairing w = {.movers = type->movers};
    uint32_t tops = 0;

    *out = NULL;
    if (!type->state_tree) {
        return FLEET_OK;
    }
    /* The copy a get prints: made the same way, so that the same nodes print. */
    if (lyd_dup_siblings(type->state_tree, NULL, LYD_DUP_RECURSIVE, &copy)) {
        return FLEET_ERR_NOMEM;
    }
    LY_LIST_FOR(copy, top)
    {
        tops++;
    }
    st = calloc(1, sizeof *st);
    if (!st || !(st->tops = calloc(tops, sizeof *st->tops))) {
        free(st);
        lyd_free_all(copy);
        return FLEET_ERR_NOMEM;
    }
    st->movers = type->movers;
    st->ctx = type->schemas.ctx;
    if (movers_count(w.movers)) {
        movers_get(w.movers, 0, &w.info);
    }
    for (top = copy; top; top = top->next, orig = orig->next) {
        struct text_top *t = &st->tops[st->count];
        uint32_t first = w.pos, size = subtree_size(top), k0 = w.k, index;
        const char *p;

        if (!top->schema || generated(top)) {
            skip_nodes(&w, size);
            continue;
        }
        if (lyd_print_mem(&t->text, top, LYD_XML, LYD_PRINT_SHRINK | LYD_PRINT_WD_EXPLICIT)) {
            state_text_free(st);
            lyd_free_all(copy);
            return FLEET_ERR_NOMEM;
        }
        t->len = strlen(t->text);
        w.text = p = t->text;
        w.top = t;
        w.slot_cap = w.node_cap = 0;
        if (pair_node(&w, top, orig, &p, &index) || *xmlscan_skip_misc(p)) {
            /* Not matched: this subtree stays with libyang; the walk resumes after it. */
            top_clear(t);
            w.pos = first;
            w.k = k0;
            if (w.k < movers_count(w.movers)) {
                movers_get(w.movers, w.k, &w.info);
            }
            skip_nodes(&w, size);
            continue;
        }
        st->count++;
    }
    lyd_free_all(copy);
    *out = st;
    return FLEET_OK;
}

int
state_text_find(const struct state_text *st, const char *ns, const char *name)
{
    for (uint32_t i = 0; st && i < st->count; i++) {
        const struct lysc_node *s = st->tops[i].nodes[0].node->schema;
        if (!strcmp(s->name, name) && !strcmp(s->module->ns, ns)) {
            return (int)i;
        }
    }
    return -1;
}

int
state_text_find_schema(const struct state_text *st, const struct lysc_node *schema)
{
    for (uint32_t i = 0; st && i < st->count; i++) {
        if (st->tops[i].nodes[0].node->schema == schema) {
            return (int)i;
        }
    }
    return -1;
}

uint32_t
state_text_count(const struct state_text *st)
{
    return st ? st->count : 0;
}

const struct lysc_node *
state_text_schema(const struct state_text *st, uint32_t i)
{
    return st->tops[i].nodes[0].node->schema;
}

/* What one reply's printing carries along. */
struct reply {
    const struct state_text *st;
    const struct text_top *top;
    const struct device *dev;
    uint64_t now_ms;
    struct movers_cursor cur;
    struct sbuf *out;
    uint8_t *used; /* merging: the state nodes already printed with a running node */
};

/* Text [from, to) of the top, each slot in it with its value; @p slot is the first slot at or after from. */
static void
emit_span(struct reply *r, uint32_t from, uint32_t to, uint32_t slot)
{
    const struct text_top *top = r->top;
    char buf[MOVERS_TEXT_MAX];

    for (; slot < top->slot_count && top->slots[slot].off < to; slot++) {
        const struct text_slot *s = &top->slots[slot];
        sbuf_add(r->out, top->text + from, s->off - from);
        from = s->off + s->len;
        movers_text(r->st->movers, s->mover, r->dev, r->now_ms, &r->cur, buf, sizeof buf);
        if (!s->leaf) {
            sbuf_adds(r->out, buf);
            continue;
        }
        {
            /* As lyd_change_term(): the canonical value, or the recorded one when the type refuses it. */
            const char *canon = NULL;
            if (lyd_value_validate(r->st->ctx, s->leaf, buf, strlen(buf), NULL, NULL, &canon) == LY_SUCCESS) {
                sbuf_adds(r->out, canon ? canon : buf);
            } else {
                sbuf_add(r->out, top->text + s->off, s->len);
            }
            lydict_remove(r->st->ctx, canon);
        }
    }
    sbuf_add(r->out, top->text + from, to - from);
}

static void
emit_node(struct reply *r, uint32_t i)
{
    const struct text_node *n = &r->top->nodes[i];
    emit_span(r, n->start, n->end, n->slot);
}

/* A running node that no state node matches, printed as libyang prints it inside its parent: without the
 * default namespace its parent already declares. */
static enum fleet_err
emit_running(struct reply *r, const struct lyd_node *x)
{
    char *text = NULL, decl[512];
    const char *cut = NULL;
    int n;

    if (lyd_print_mem(&text, x, LYD_XML, LYD_PRINT_SHRINK | LYD_PRINT_WD_EXPLICIT)) {
        return FLEET_ERR_NOMEM;
    }
    if (!text) {
        return FLEET_OK; /* nothing prints */
    }
    if (lyd_parent(x) && lyd_parent(x)->schema->module == x->schema->module) {
        n = snprintf(decl, sizeof decl, " xmlns=\"%s\"", x->schema->module->ns);
        cut = n > 0 && (size_t)n < sizeof decl ? strstr(text, decl) : NULL;
        if (cut && cut > strchr(text, '>')) {
            cut = NULL; /* not in the first tag */
        }
    }
    if (cut) {
        sbuf_add(r->out, text, (size_t)(cut - text));
        sbuf_adds(r->out, cut + n);
    } else {
        sbuf_adds(r->out, text);
    }
    free(text);
    return FLEET_OK;
}

static uint32_t
group_end(const struct text_node *nodes, uint32_t s)
{
    const struct lysc_node *schema = nodes[s].node->schema;
    while (s != NO_NODE && nodes[s].node->schema == schema) {
        s = nodes[s].next;
    }
    return s;
}

/* State node @p i and running node @p x are one instance: print them as lyd_merge_siblings() joins them. */
static enum fleet_err
emit_merged(struct reply *r, uint32_t i, const struct lyd_node *x)
{
    const struct text_node *nodes = r->top->nodes, *n = &nodes[i];
    const struct lyd_node *rc = lyd_child(x);
    uint32_t s = n->first_child;
    enum fleet_err rc_err = FLEET_OK;

    if (n->node->schema->nodetype & LYD_NODE_TERM) {
        emit_node(r, i); /* a key: the same value on both sides */
        return FLEET_OK;
    }
    while (rc && (rc->flags & LYD_DEFAULT)) {
        rc = rc->next;
    }
    if (!rc) {
        emit_node(r, i);
        return FLEET_OK;
    }
    if (n->empty) {
        sbuf_add(r->out, r->top->text + n->start, n->body - n->start - 2);
        sbuf_adds(r->out, ">");
    } else {
        sbuf_add(r->out, r->top->text + n->start, n->body - n->start);
    }
    /* Sibling groups (the instances of one schema node) in schema order; within a group running's
     * instances first, each with the state instance it matches, then the state instances left. */
    while (!rc_err && (s != NO_NODE || rc)) {
        uint16_t rrank = rc ? schema_rank(rc->schema) : UINT16_MAX;
        if (s != NO_NODE && (!rc || nodes[s].rank < rrank)) {
            uint32_t stop = group_end(nodes, s);
            for (; s != stop; s = nodes[s].next) {
                emit_node(r, s);
            }
            continue;
        }
        {
            const struct lysc_node *schema = rc->schema;
            uint32_t first = (s != NO_NODE && nodes[s].node->schema == schema) ? s : NO_NODE;
            uint32_t stop = first == NO_NODE ? NO_NODE : group_end(nodes, first), guess = first;
            for (; rc && rc->schema == schema && !rc_err; rc = rc->next) {
                uint32_t m = NO_NODE;
                if (rc->flags & LYD_DEFAULT) {
                    continue;
                }
                /* Both sides usually list the instances in one order: try the next one first. */
                if (guess != stop && !r->used[guess] && !lyd_compare_single(rc, nodes[guess].node, 0)) {
                    m = guess;
                } else {
                    for (uint32_t t = first; t != stop; t = nodes[t].next) {
                        if (!r->used[t] && !lyd_compare_single(rc, nodes[t].node, 0)) {
                            m = t;
                            break;
                        }
                    }
                }
                if (m == NO_NODE) {
                    rc_err = emit_running(r, rc);
                    continue;
                }
                r->used[m] = 1;
                guess = nodes[m].next;
                rc_err = emit_merged(r, m, rc);
            }
            for (uint32_t t = first; t != stop; t = nodes[t].next) {
                if (!r->used[t]) {
                    emit_node(r, t);
                }
            }
            s = first == NO_NODE ? s : stop;
            while (rc && (rc->flags & LYD_DEFAULT) && rc->schema == schema) {
                rc = rc->next;
            }
        }
    }
    sbuf_add(r->out, "</", 2);
    {
        /* the end tag: the start tag's name, as written */
        struct xmlscan_tag t;
        if (!xmlscan_read_tag(r->top->text + n->start, &t)) {
            if (t.prefix) {
                sbuf_add(r->out, t.prefix, t.prefix_len);
                sbuf_add(r->out, ":", 1);
            }
            sbuf_add(r->out, t.local, t.local_len);
        }
    }
    sbuf_add(r->out, ">", 1);
    return rc_err;
}

enum fleet_err
state_text_print(const struct state_text *st, uint32_t i, const struct lyd_node *running,
                 const struct device *dev, uint64_t now_ms, struct sbuf *out)
{
    const struct text_top *top = &st->tops[i];
    struct reply r = {.st = st, .top = top, .dev = dev, .now_ms = now_ms, .out = out};
    enum fleet_err rc;

    movers_cursor_init(&r.cur);
    sbuf_reserve(out, top->len + top->slot_count * 4);
    if (!running || (running->flags & LYD_DEFAULT)) {
        emit_node(&r, 0);
        return FLEET_OK;
    }
    if (!(r.used = calloc(top->node_count, 1))) {
        return FLEET_ERR_NOMEM;
    }
    rc = emit_merged(&r, 0, running);
    free(r.used);
    return rc;
}

void
state_text_free(struct state_text *st)
{
    if (!st) {
        return;
    }
    for (uint32_t i = 0; i < st->count; i++) {
        top_clear(&st->tops[i]);
    }
    free(st->tops);
    free(st);
}
