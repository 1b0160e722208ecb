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

/**
 * @brief Read the parameters of action @p kind from @p body (a JSON object; its members "share" and
 * "seed" are the target's and are skipped here). Defaults fill what is not given.
 * @param[out] p The parameters (zeroed first).
 * @param[out] err Room for a message naming a member.
 * @return NULL, or what is wrong (a constant or @p err).
 */
const char *action_params_parse(enum devact_kind kind, const struct jsonr_value *body,
                                struct devact_params *p, char *err, size_t err_len);

#endif
