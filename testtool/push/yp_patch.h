/*
 * The yang-patch of a push-change-update (RFC 8641 3.7): what turns one snapshot of a subscription's
 * selection into the next, as RFC 8072 edits whose targets are RFC 8040 data-resource identifiers. Pure:
 * two libyang trees in, XML text out; yp_onchange.c decides when to call it.
 */
#ifndef FLEET_YP_PATCH_H
#define FLEET_YP_PATCH_H

#include <stdint.h>

#include <libyang/libyang.h>

#include "err.h"
#include "sbuf.h"

/**
 * @brief Append `<datastore-changes><yang-patch><patch-id>..</patch-id><edit>..</edit>...</yang-patch>
 * </datastore-changes>` (elements of ietf-yang-push's namespace, which the caller's push-change-update
 * declares) for the changes from @p before to @p after: one edit per changed node, create (the whole new
 * subtree as value), delete (no value), replace (a leaf's new value) or move (a user-ordered entry, with
 * where and point). Nothing is appended when nothing changed or every change is excluded.
 * @param[in] before Previous selection (top-level siblings), or NULL for none.
 * @param[in] after Current selection (top-level siblings, same context), or NULL for none.
 * @param[in] excluded YP_CHANGE_* bits (yp.h) of the change types to leave out.
 * @param[in] patch_id Text of patch-id (XML-escaped here).
 * @param[in,out] out Buffer appended to.
 * @param[out] edits Edits written (0: nothing appended).
 * @return FLEET_OK, FLEET_ERR_NOMEM (then nothing was appended, or @p out is marked failed).
 */
enum fleet_err yp_patch_write(const struct lyd_node *before, const struct lyd_node *after, uint32_t excluded,
                              const char *patch_id, struct sbuf *out, uint32_t *edits);

/**
 * @brief Append the RFC 8040 data-resource identifier of data node @p node ("/ietf-interfaces:interfaces/
 * interface=eth0%2F1/enabled"): the module name where it differs from the parent's, list keys and
 * leaf-list values after '=', percent-encoded. A list without keys (state only) has no identifier of its
 * own; its entries are written without keys.
 */
void yp_patch_target(const struct lyd_node *node, struct sbuf *out);

#endif
