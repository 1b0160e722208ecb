/*
 * Where an error is: the path of a node that is not in the tree, and
 * libyang's last error as an rpc-error with its error-path. Shared by the
 * edit engine and full validation, which both report errors this way.
 */
#ifndef FLEET_EDIT_PATH_H
#define FLEET_EDIT_PATH_H

#include <libyang/libyang.h>

#include "edit_err.h"

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
struct edit_err *edit_error_from_libyang(const struct ly_ctx *ctx);

#endif
