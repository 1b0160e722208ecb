/*
 * The first-run banner of fleetsim (banner.c).
 */
#ifndef FLEET_BANNER_H
#define FLEET_BANNER_H

#include "fleet.h"

/**
 * @brief Log, after the readiness line, how to reach each service of @p fleet: NETCONF (login and a command
 * to paste), SNMP (communities, users, snmpwalk) and the metrics URL when on.
 * @param[in] fleet A fleet whose devices listen.
 */
void banner_log(const struct fleet *fleet);

#endif
