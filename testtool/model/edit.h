/*
 * edit-config semantics (RFC 6241 section 7.2) applied in place to one
 * datastore tree, atomically: every change is written to an undo log, the
 * result is validated (validate.h), and on failure the log is replayed
 * backwards so the tree is exactly as before. Cost is proportional to the
 * edit, not to the datastore, unless the schema needs module validation.
 */
#ifndef FLEET_EDIT_H
#define FLEET_EDIT_H

#include <stddef.h>

#include <libyang/libyang.h>

#include "err.h"
#include "ncerr.h"
#include "schema.h"

enum edit_op {
    EDIT_OP_MERGE = 0,
    EDIT_OP_REPLACE,
    EDIT_OP_CREATE,
    EDIT_OP_DELETE,
    EDIT_OP_REMOVE,
    EDIT_OP_NONE,
};

enum edit_test_option {
    EDIT_TEST_THEN_SET = 0,
    EDIT_SET,
    EDIT_TEST_ONLY,
};

enum edit_error_option {
    EDIT_STOP_ON_ERROR = 0,
    EDIT_CONTINUE_ON_ERROR,
    EDIT_ROLLBACK_ON_ERROR,
};

struct edit_request {
    const struct lyd_node
        *config;             /* first top-level sibling of the <config> content; may hold opaque nodes */
    enum edit_op default_op; /* default-operation (merge, replace or none) */
    enum edit_test_option test_option;   /* test-option */
    enum edit_error_option error_option; /* error-option */
};

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

/**
 * @brief Parse the operation name of an nc:operation attribute or default-operation.
 * @return 0 on success, -1 for an unknown name.
 */
int edit_op_parse(const char *name, enum edit_op *op);

/**
 * @brief Apply an edit to a datastore tree.
 *
 * With test-only, or when anything fails under stop-on-error or
 * rollback-on-error, the tree is left as it was. Under continue-on-error the
 * parts that succeeded stay, provided the result validates.
 *
 * @param[in] set Schemas (for the validation plan).
 * @param[in,out] tree Root pointer of the datastore tree; may change.
 * @param[in] req The edit.
 * @param[out] errs rpc-error records, appended; the edit failed when any are present.
 * @param[out] changed Set to 1 when the tree was modified and kept.
 * @return FLEET_OK (look at @p errs for protocol errors) or FLEET_ERR_NOMEM.
 */
enum fleet_err edit_apply(const struct schema_set *set, struct lyd_node **tree,
                          const struct edit_request *req, struct ncerr **errs, int *changed);

/** @brief Undo every logged change, newest first, and empty the log. */
void undo_rollback(struct undo_log *log, struct lyd_node **tree);

/** @brief Keep the changes: free unlinked nodes and empty the log. */
void undo_commit(struct undo_log *log);

/** @brief Free the log's memory (after rollback or commit). */
void undo_log_free(struct undo_log *log);

/**
 * @brief Path of a node that is not in the tree (missing or unknown), in libyang's form:
 * the parent's path, then the name, prefixed with its module when that differs from the parent's.
 * @param[in] parent Data parent, or NULL.
 * @param[in] parent_path Used when @p parent is NULL (a parent that is itself missing), may be NULL (top
 * level).
 * @param[in] parent_mod Module of the parent node, NULL at top level.
 * @param[in] mod Module of the node.
 * @param[in] name Its name.
 * @return Malloc'd path or NULL when memory ran out.
 */
char *edit_child_path(const struct lyd_node *parent, const char *parent_path,
                      const struct lys_module *parent_mod, const struct lys_module *mod, const char *name);

/**
 * @brief Map libyang's last error of @p ctx to an rpc-error (for full validation).
 * @return New record, or NULL when memory ran out.
 */
struct ncerr *edit_error_from_libyang(const struct ly_ctx *ctx);

#endif
