/*
 * --emit-inventory: the fleet written for a consumer (OpenDaylight's
 * topology JSON, an OpenNMS requisition, Prometheus file-based service
 * discovery, CSV), from the plan alone: no socket is opened.
 */
#ifndef FLEET_INVENTORY_H
#define FLEET_INVENTORY_H

#include <stddef.h>

struct fleet_config;

/* Writes cfg->emit_inventory in cfg->inventory_format. @return 0, or -1 with a message in @p err. */
int inventory_emit(const struct fleet_config *cfg, char *err, size_t err_len);

#endif
