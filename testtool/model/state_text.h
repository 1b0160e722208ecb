/*
 * A device type's state tree printed once as XML text, with a slot at each
 * moving leaf's value and the place of each node's element. A get whose
 * filter selects whole top-level subtrees of the state tree is answered
 * from it: the text is copied and each slot takes the device's value at the
 * reply's instant, with no copy of the tree and no libyang printer per
 * reply; configuration of running under the same node (openconfig's
 * interface/config beside interface/state) is joined in as the text is
 * copied, and only running's own nodes go through libyang's printer. The
 * result is what the libyang path (copy, merge, print) gives for the same
 * device at the same instant, byte for byte
 * (tests/unit/model/test_state_text.c holds them side by side).
 */
#ifndef FLEET_STATE_TEXT_H
#define FLEET_STATE_TEXT_H

#include <stdint.h>

#include <libyang/libyang.h>

#include "device.h"
#include "err.h"
#include "sbuf.h"

struct state_text;

/**
 * @brief Print every top-level subtree of @p type's state tree that the type's state alone holds (not
 * ietf-interfaces, ietf-system, nc-notifications, yang-library or netconf-monitoring, which get
 * generates) and find its moving leaves' values in the text. A subtree whose text cannot be matched
 * to its nodes (anydata in state, say) is left out: get then takes the libyang path for it.
 * Call after movers_build().
 * @param[out] out The texts (state_text_free()), or NULL when the type has no state tree.
 * @return FLEET_OK, FLEET_ERR_NOMEM.
 */
enum fleet_err state_text_build(const struct device_type *type, struct state_text **out);

/** @return The index of the top-level subtree named @p name in namespace @p ns, or -1 when none. */
int state_text_find(const struct state_text *st, const char *ns, const char *name);

/** @return The index of the top-level subtree of schema node @p schema, or -1 when none. */
int state_text_find_schema(const struct state_text *st, const struct lysc_node *schema);

/** @return The number of top-level subtrees held; 0 for NULL. */
uint32_t state_text_count(const struct state_text *st);

/** @return The schema node of top-level subtree @p i (< state_text_count()). */
const struct lysc_node *state_text_schema(const struct state_text *st, uint32_t i);

/**
 * @brief Append top-level subtree @p i as device @p dev has it at @p now_ms (its moving leaves as
 * movers_apply() sets them, before identity rules), joined with @p running, the same top-level node of
 * the device's running configuration (NULL for none), as lyd_merge_siblings() would join them:
 * instances in both printed once with both sides' children, in schema order.
 * @return FLEET_OK, FLEET_ERR_NOMEM (the output is then incomplete).
 */
enum fleet_err state_text_print(const struct state_text *st, uint32_t i, const struct lyd_node *running,
                                const struct device *dev, uint64_t now_ms, struct sbuf *out);

/** @brief Free the texts; NULL is fine. */
void state_text_free(struct state_text *st);

#endif
