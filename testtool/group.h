/*
 * The groups of a running fleet, seen from a socket: which device answers
 * at an address on a port that address-per-device groups share.
 */
#ifndef FLEET_GROUP_H
#define FLEET_GROUP_H

#include <stdint.h>

#include "device.h"

/**
 * @brief The device of an address-per-device group at @p addr (IPv4, host order) on shared port @p port.
 * @param snmp 0: a NETCONF port (starting-port), 1: an SNMP one (snmp-starting-port).
 * @return The device, or NULL when no group of the fleet claims that address on that port.
 */
struct device *group_device_at(const struct fleet *fleet, uint32_t addr, uint16_t port, int snmp);

/** @return Slot of @p port in @p ports (count entries), or -1. */
int group_port_slot(const uint16_t *ports, uint32_t count, uint16_t port);

#endif
