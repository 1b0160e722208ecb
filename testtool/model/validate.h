/*
 * Validation after an edit. Local checks cover what an edit can break
 * inside the subtrees it touched (mandatory leaves and choices, min- and
 * max-elements); modules whose constraints span the tree (must, when,
 * leafref, unique, instance-identifier) are revalidated whole with libyang,
 * which costs O(size of that module's data) per edit.
 */
#ifndef FLEET_VALIDATE_H
#define FLEET_VALIDATE_H

#include <libyang/libyang.h>

#include "edit_err.h"
#include "edit_path.h"
#include "schema.h"
#include "undo.h"

/**
 * @brief Validate the result of an edit.
 * @param[in] set Schemas and validation plan.
 * @param[in,out] tree Datastore root pointer (libyang may add default nodes).
 * @param[in] log The edit's changes.
 * @param[out] errs rpc-error records appended on failure.
 * @return FLEET_OK when valid, FLEET_ERR_INVAL when not (see @p errs), FLEET_ERR_NOMEM.
 */
enum fleet_err validate_edit(const struct schema_set *set, struct lyd_node **tree, const struct undo_log *log,
                             struct edit_err **errs);

/**
 * @brief Full validation of a whole configuration tree (copy-config, validate, start-up).
 * @return FLEET_OK, FLEET_ERR_INVAL (see @p errs) or FLEET_ERR_NOMEM.
 */
enum fleet_err validate_full(const struct ly_ctx *ctx, struct lyd_node **tree, struct edit_err **errs);

#endif
