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

#include "edit_err.h"
#include "edit_path.h"
#include "err.h"
#include "schema.h"
#include "undo.h"

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
                          const struct edit_request *req, struct edit_err **errs, int *changed);

#endif
