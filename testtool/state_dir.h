/*
 * The state folder: --state-dir, else $XDG_STATE_HOME/fleetsim, else
 * ~/.local/state/fleetsim, else /tmp/fleetsim-state-UID; created (0700)
 * on first use. SSH host keys, the fleet's TLS CA and certificates live
 * there, so a fleet's identity survives restarts.
 */
#ifndef FLEET_STATE_DIR_H
#define FLEET_STATE_DIR_H

#include <stddef.h>

#include "err.h"
#include "plan.h"

/** @brief The state folder of @p cfg into @p buf, created. @return FLEET_OK, or FLEET_ERR_SYS with @p err. */
enum fleet_err state_dir(const struct fleet_config *cfg, char *buf, size_t len, char *err, size_t err_len);

#endif
