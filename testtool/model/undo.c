/*
 * Rolling an edit back (newest change first) or keeping it.
 */
#include "undo.h"

#include <stdlib.h>

#include "ydata.h"

/*
 * Put an unlinked node back where it was. libyang inserts before a sibling
 * only in user-ordered lists; elsewhere it appends a node after the last
 * instance of its schema, so the instances that followed it are appended
 * again behind it (cost: the instances after it, paid only on rollback).
 */
static void
restore_unlinked(struct undo_entry *e, struct lyd_node **tree)
{
    struct lyd_node *node = e->node;
    struct lyd_node *follow = e->next && e->next->schema == node->schema ? e->next : NULL;

    if (follow && ydata_user_ordered(node)) {
        lyd_insert_before(follow, node);
    } else if (e->parent) {
        lyd_insert_child(e->parent, node);
    } else {
        lyd_insert_sibling(*tree, node, tree);
    }
    while (follow && follow->schema == node->schema && !ydata_user_ordered(node)) {
        struct lyd_node *next = follow->next;
        if (*tree == follow) {
            *tree = next;
        }
        lyd_unlink_tree(follow);
        if (e->parent) {
            lyd_insert_child(e->parent, follow);
        } else {
            lyd_insert_sibling(*tree, follow, tree);
        }
        follow = next != node ? next : NULL;
    }
    if (!e->parent) {
        *tree = lyd_first_sibling(node);
    }
}

/* Move a user-ordered node back in front of its former next sibling, or to the end of its instances. */
static void
restore_moved(struct undo_entry *e, struct lyd_node **tree)
{
    struct lyd_node *node = e->node;
    struct lyd_node *first;
    struct lyd_node *last;

    if (e->next && e->next->schema == node->schema) {
        lyd_insert_before(e->next, node);
    } else {
        ydata_instance_range(node, &first, &last);
        if (last != node) {
            lyd_insert_after(last, node);
        }
    }
    if (!e->parent) {
        *tree = lyd_first_sibling(node);
    }
}

void
undo_rollback(struct undo_log *log, struct lyd_node **tree)
{
    while (log->count) {
        struct undo_entry *e = &log->entries[--log->count];
        switch (e->kind) {
        case UNDO_CREATED:
            if (*tree == e->node) {
                *tree = e->node->next;
            }
            lyd_free_tree(e->node);
            break;
        case UNDO_UNLINKED:
            restore_unlinked(e, tree);
            break;
        case UNDO_VALUE:
            lyd_change_term(e->node, e->old_value);
            e->node->flags = e->old_flags;
            free(e->old_value);
            break;
        case UNDO_FLAGS:
            e->node->flags = e->old_flags;
            break;
        case UNDO_MOVED:
            restore_moved(e, tree);
            break;
        }
    }
}

void
undo_commit(struct undo_log *log)
{
    for (size_t i = 0; i < log->count; i++) {
        struct undo_entry *e = &log->entries[i];
        if (e->kind == UNDO_UNLINKED) {
            lyd_free_tree(e->node);
        } else if (e->kind == UNDO_VALUE) {
            free(e->old_value);
        }
    }
    log->count = 0;
}

void
undo_log_free(struct undo_log *log)
{
    free(log->entries);
    memset(log, 0, sizeof *log);
}
