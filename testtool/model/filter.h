/*
 * Filters of get and get-config: RFC 6241 section 6 subtree filtering and
 * the :xpath capability's XPath filters. Both produce a new tree holding
 * copies of the selected nodes (with their ancestors and list keys), which
 * the caller prints and frees; the source tree is never modified.
 */
#ifndef FLEET_FILTER_H
#define FLEET_FILTER_H

#include <libyang/libyang.h>

#include "err.h"

/**
 * @brief Apply a subtree filter.
 *
 * The filter is the content of a <filter type="subtree"> element as libyang
 * parsed it inside the anyxml "filter" parameter: nodes the schema knows are
 * data nodes, others (selection nodes such as an empty <name/> of a typed leaf,
 * or nodes of unknown modules) are opaque nodes. Both kinds are matched by
 * local name, namespace (a filter node without namespace matches any) and,
 * for content-match nodes, by text value.
 *
 * Semantics (RFC 6241 6.2): a filter node with children is a containment
 * node; an empty leaf-like node is a selection node; a node with text and no
 * children is a content-match node. At one level, all content-match nodes
 * must match for the parent instance to be selected; if the level has only
 * content-match nodes the whole instance is selected, otherwise the
 * matching content-match nodes, the selection nodes' subtrees and what the
 * containment nodes select. A list entry in the result always carries its keys.
 * An empty filter selects nothing.
 *
 * @param[in] data First top-level sibling of the source tree (may be NULL).
 * @param[in] filter First top-level sibling of the filter (may be NULL).
 * @param[out] result First sibling of the new tree, NULL when nothing matched.
 * @return FLEET_OK, FLEET_ERR_NOMEM, or FLEET_ERR_INVAL if libyang refuses an insert or lookup.
 */
enum fleet_err filter_subtree(const struct lyd_node *data, const struct lyd_node *filter,
                              struct lyd_node **result);

/**
 * @brief Apply an XPath filter (the select attribute of <filter type="xpath">).
 * @param[in] data First top-level sibling of the source tree (may be NULL).
 * @param[in] xpath The expression; prefixes are module names (JSON style); callers translate a
 *            client's XML prefixes first.
 * @param[out] result New tree with the selected nodes (their subtrees, ancestors and keys).
 * @return FLEET_OK, FLEET_ERR_INVAL (expression does not compile; libyang's
 *         error message is in the context's log; or xmlguard_xpath_unsafe()
 *         refuses it) or FLEET_ERR_NOMEM.
 */
enum fleet_err filter_xpath(const struct lyd_node *data, const char *xpath, struct lyd_node **result);

/**
 * @brief Whether subtree filter node @p f is a selection node with a namespace (RFC 6241 6.2.5: no
 * children, no text), which selects every data node of that name and namespace with its whole subtree.
 * @param[out] ns Its namespace URI.
 * @param[out] name Its local name.
 */
int filter_is_selection(const struct lyd_node *f, const char **ns, const char **name);

#endif
