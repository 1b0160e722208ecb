/*
 * The yang-patch of a push-change-update. libyang's lyd_diff_siblings() compares the two snapshots and
 * marks each changed node create, delete or replace (and its unchanged ancestors none); this file walks
 * that diff and writes one RFC 8072 edit per marked node. The values come from the new snapshot, found by
 * walking it alongside the diff, so the diff's own annotations never reach the subscriber.
 */
#include "yp_patch.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "yp.h"

/* What one walk over a diff carries. */
struct patch_walk {
    struct sbuf *out;  /* where edits go */
    uint32_t excluded; /* YP_CHANGE_* bits left out */
    uint32_t edits;    /* edits written so far: numbers the edit-ids */
    int nomem;         /* 1 once printing a value ran out of memory */
};

/* RFC 3986 unreserved characters pass; everything else (RFC 8040 3.5.3's reserved set among it) is %XX. */
static void
add_percent_encoded(struct sbuf *out, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";

    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
            c == '.' || c == '_' || c == '~') {
            sbuf_add(out, s, 1);
        } else {
            char esc[3] = {'%', hex[c >> 4], hex[c & 15]};
            sbuf_add(out, esc, sizeof esc);
        }
    }
}

void
yp_patch_target(const struct lyd_node *node, struct sbuf *out)
{
    const struct lyd_node *parent = node->parent ? &node->parent->node : NULL;
    const struct lys_module *mod = node->schema ? node->schema->module : NULL;

    if (parent) {
        yp_patch_target(parent, out);
    }
    sbuf_adds(out, "/");
    if (mod && (!parent || !parent->schema || parent->schema->module != mod)) {
        sbuf_adds(out, mod->name);
        sbuf_adds(out, ":");
    }
    sbuf_adds(out, LYD_NAME(node));
    if (!node->schema) {
        return;
    }
    if (node->schema->nodetype == LYS_LEAFLIST) {
        sbuf_adds(out, "=");
        add_percent_encoded(out, lyd_get_value(node));
    } else if (node->schema->nodetype == LYS_LIST && !(node->schema->flags & LYS_KEYLESS)) {
        const struct lyd_node *key;
        int first = 1;
        LY_LIST_FOR(lyd_child(node), key)
        {
            if (!key->schema || !lysc_is_key(key->schema)) {
                break; /* keys come first, in schema order */
            }
            sbuf_adds(out, first ? "=" : ",");
            add_percent_encoded(out, lyd_get_value(key));
            first = 0;
        }
    }
}

/* The diff's operation of @p node: "create", "delete", "replace" or "none"; NULL when inherited. */
static const char *
diff_op(const struct lyd_node *node)
{
    const struct lyd_meta *meta;

    LY_LIST_FOR(node->meta, meta)
    {
        if (!strcmp(meta->name, "operation") && !strcmp(meta->annotation->module->name, "yang")) {
            return lyd_get_meta_value(meta);
        }
    }
    return NULL;
}

/* The node of @p after_siblings that @p diff_node stands for (same schema, keys or value), or NULL. */
static const struct lyd_node *
find_in_after(const struct lyd_node *after_siblings, const struct lyd_node *diff_node)
{
    struct lyd_node *match = NULL;

    if (!after_siblings || lyd_find_sibling_first(after_siblings, diff_node, &match)) {
        return NULL;
    }
    return match;
}

/* One edit: target from @p diff_node, value @p value (NULL: none), a move's where and point. */
static void
write_edit(struct patch_walk *pw, const char *op, const struct lyd_node *diff_node,
           const struct lyd_node *value, const struct lyd_node *move_after, int move)
{
    pw->edits++;
    sbuf_printf(pw->out, "<edit><edit-id>edit%" PRIu32 "</edit-id><operation>%s</operation><target>",
                pw->edits, op);
    yp_patch_target(diff_node, pw->out);
    sbuf_adds(pw->out, "</target>");
    if (move) {
        /* The entry follows its new predecessor, or leads when it has none. */
        if (move_after) {
            sbuf_adds(pw->out, "<point>");
            yp_patch_target(move_after, pw->out);
            sbuf_adds(pw->out, "</point><where>after</where>");
        } else {
            sbuf_adds(pw->out, "<where>first</where>");
        }
    }
    if (value) {
        char *text = NULL;
        if (lyd_print_mem(&text, value, LYD_XML, LYD_PRINT_SHRINK) || !text) {
            pw->nomem = 1;
        } else {
            sbuf_adds(pw->out, "<value>");
            sbuf_adds(pw->out, text);
            sbuf_adds(pw->out, "</value>");
        }
        free(text);
    }
    sbuf_adds(pw->out, "</edit>");
}

/* The entry before @p node among the instances of its list or leaf-list, or NULL when it is the first. */
static const struct lyd_node *
previous_instance(const struct lyd_node *node)
{
    const struct lyd_node *prev = node->prev;

    /* prev of a first sibling wraps to the last one: that one is never before it. */
    if (prev == node || !prev->next || prev->schema != node->schema) {
        return NULL;
    }
    return prev;
}

static void
walk_diff(struct patch_walk *pw, const struct lyd_node *diff_siblings, const struct lyd_node *after_siblings)
{
    const struct lyd_node *d;

    LY_LIST_FOR(diff_siblings, d)
    {
        const char *op = diff_op(d);
        const struct lyd_node *a;

        /* No operation of its own: it inherits its parent's, "none" (a create or delete is written whole). */
        if (!op || !strcmp(op, "none")) {
            a = find_in_after(after_siblings, d);
            walk_diff(pw, lyd_child(d), a ? lyd_child(a) : NULL);
        } else if (!strcmp(op, "create")) {
            if (!(pw->excluded & YP_CHANGE_CREATE) && (a = find_in_after(after_siblings, d))) {
                write_edit(pw, "create", d, a, NULL, 0);
            }
        } else if (!strcmp(op, "delete")) {
            if (!(pw->excluded & YP_CHANGE_DELETE)) {
                write_edit(pw, "delete", d, NULL, NULL, 0);
            }
        } else if (!strcmp(op, "replace")) {
            a = find_in_after(after_siblings, d);
            if (!a) {
                continue;
            }
            if (d->schema && (d->schema->nodetype & (LYS_LIST | LYS_LEAFLIST))) {
                /* A user-ordered entry changed place (its value, if a leaf-list, is the same). */
                if (!(pw->excluded & YP_CHANGE_MOVE)) {
                    write_edit(pw, "move", d, NULL, previous_instance(a), 1);
                }
                if (d->schema->nodetype == LYS_LIST) {
                    walk_diff(pw, lyd_child(d), lyd_child(a)); /* and its contents may have changed too */
                }
            } else if (!(pw->excluded & YP_CHANGE_REPLACE)) {
                write_edit(pw, "replace", d, a, NULL, 0);
            }
        }
    }
}

enum fleet_err
yp_patch_write(const struct lyd_node *before, const struct lyd_node *after, uint32_t excluded,
               const char *patch_id, struct sbuf *out, uint32_t *edits)
{
    struct lyd_node *diff = NULL;
    struct sbuf b = {0};
    struct patch_walk pw = {.out = &b, .excluded = excluded};
    enum fleet_err err = FLEET_OK;

    *edits = 0;
    if (lyd_diff_siblings(before, after, 0, &diff)) {
        err = FLEET_ERR_NOMEM; /* both trees come from one context: only memory can fail it */
        goto cleanup;
    }
    if (!diff) {
        goto cleanup;
    }
    sbuf_adds(&b, "<datastore-changes><yang-patch><patch-id>");
    sbuf_add_xml(&b, patch_id);
    sbuf_adds(&b, "</patch-id>");
    walk_diff(&pw, diff, after);
    sbuf_adds(&b, "</yang-patch></datastore-changes>");
    if (pw.nomem || b.failed) {
        err = FLEET_ERR_NOMEM;
        goto cleanup;
    }
    if (pw.edits) {
        sbuf_add(out, b.buf, b.len);
        if (out->failed) {
            err = FLEET_ERR_NOMEM;
            goto cleanup;
        }
        *edits = pw.edits;
    }

cleanup:
    lyd_free_all(diff);
    sbuf_free(&b);
    return err;
}
