/*
 * An action's parameters from its JSON object, as the control API's body
 * and a scenario's event give them ({"for": "30s"}, {"mode": "blackhole"},
 * ...). One parser for both, so a scenario is checked with the API's words.
 */
#ifndef FLEET_ACTION_PARAMS_H
#define FLEET_ACTION_PARAMS_H

#include <stddef.h>

#include "device_actions.h"
#include "json_read.h"

/* Most bytes of set fragments kept for the process's life (each distinct text once). */
#define ACTION_PARAMS_MAX_KEPT_BYTES (16u * 1024u * 1024u)
/* Highest notification-rate (per device per second), as --notification-rate. */
#define ACTION_PARAMS_MAX_NOTIF_RATE 1e6
/* Most flaps one flap action asks for. */
#define ACTION_PARAMS_MAX_FLAPS 1000

/**
 * @brief Read the parameters of action @p kind from @p body (a JSON object; its members "share" and
 * "seed" are the target's and are skipped here). Defaults fill what is not given.
 * @param[out] p The parameters (zeroed first).
 * @param[out] err Room for a message naming a member.
 * @return NULL, or what is wrong (a constant or @p err).
 */
const char *action_params_parse(enum devact_kind kind, const struct jsonr_value *body,
                                struct devact_params *p, char *err, size_t err_len);

/**
 * @brief Whether @p xml is a well-formed fragment for a set: one or more elements, each top-level one in
 * a namespace, tags balanced, prefixes declared, nothing but white space, comments and processing
 * instructions between them (the shared scanner xmlscan.h; libyang judges the rest on each device).
 * @return NULL when it is, else a phrase saying what is not.
 */
const char *action_params_check_xml(const char *xml);

/** @brief Free the set fragments kept so far (at exit: params that point at them become invalid). */
void action_params_free_kept(void);

#endif
