/*
 * Reading validated YANG data trees by leaf name: the few accessors the
 * file loaders (profiles, notification files) and the device view share.
 * A tree that libyang validated holds canonical text, so these parse plain
 * digits without further checks.
 */
#ifndef FLEET_YDATA_H
#define FLEET_YDATA_H

#include <stdint.h>

#include <libyang/libyang.h>

/** @return The first child of @p parent whose schema node is named @p name, or NULL. */
const struct lyd_node *ydata_child(const struct lyd_node *parent, const char *name);

/** @return The canonical value of leaf @p name under @p parent, or NULL when absent. */
const char *ydata_str(const struct lyd_node *parent, const char *name);

/** @return The value of integer leaf @p name under @p parent, 0 when absent. */
uint64_t ydata_u64(const struct lyd_node *parent, const char *name);

/** @return 1 when @p node is an instance of a user-ordered list or leaf-list. */
int ydata_user_ordered(const struct lyd_node *node);

/** @brief The first and last sibling instances of @p node's schema (NULL both when none). */
void ydata_instance_range(const struct lyd_node *node, struct lyd_node **first, struct lyd_node **last);

/** @brief @p ms (since the epoch) as ietf-yang-types date-and-time, UTC with milliseconds. */
void ydata_datetime(uint64_t ms, char *buf, size_t len);

#endif
