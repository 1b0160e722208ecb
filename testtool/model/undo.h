/*
 * The undo log of one edit: every change the edit engine makes to a tree,
 * in order, so that a failed edit is rolled back exactly and full
 * validation looks only at what changed.
 */
#ifndef FLEET_UNDO_H
#define FLEET_UNDO_H

#include <stddef.h>
#include <stdint.h>

#include <libyang/libyang.h>

enum undo_kind {
    UNDO_CREATED,  /* node was inserted; undo frees it */
    UNDO_UNLINKED, /* node was taken out; undo puts it back, success frees it */
    UNDO_VALUE,    /* a leaf's value changed; undo restores old_value and old_flags */
    UNDO_FLAGS,    /* an ancestor lost its default flag; undo restores old_flags */
    UNDO_MOVED,    /* a user-ordered node moved; undo puts it back before next (or last under parent) */
};

struct undo_entry {
    enum undo_kind kind;     /* what happened */
    struct lyd_node *node;   /* the node concerned */
    struct lyd_node *parent; /* UNLINKED: former parent (NULL at top level) */
    struct lyd_node *next;   /* UNLINKED: former next sibling (NULL when it was last) */
    char *old_value;         /* VALUE: former canonical value, owned */
    uint32_t old_flags;      /* VALUE: former node flags (LYD_DEFAULT) */
};

/* The changes of one edit, in order; also what local validation inspects. */
struct undo_log {
    struct undo_entry *entries; /* log, oldest first */
    size_t count;               /* entries used */
    size_t cap;                 /* entries allocated */
};

/** @brief Undo every logged change, newest first, and empty the log. */
void undo_rollback(struct undo_log *log, struct lyd_node **tree);

/** @brief Keep the changes: free unlinked nodes and empty the log. */
void undo_commit(struct undo_log *log);

/** @brief Free the log's memory (after rollback or commit). */
void undo_log_free(struct undo_log *log);

#endif
