/*
 * Finding a device by the address a client dialled: a linear pass over the
 * groups, which are few (a fleet file lists them by hand), each a range of
 * consecutive addresses.
 */
#include "group.h"

struct device *
group_device_at(const struct fleet *fleet, uint32_t addr, uint16_t port, int snmp)
{
    for (uint32_t i = 0; i < fleet->group_count; i++) {
        const struct device_group *g = &fleet->groups[i];
        const struct fleet_config *c = &g->cfg;
        if (!c->ip_per_device ||
            (snmp ? !c->snmp || c->snmp_starting_port != port : c->starting_port != port)) {
            continue;
        }
        if (addr >= c->ip && addr - c->ip < c->device_count) {
            return &fleet->devices[g->first + (addr - c->ip)];
        }
    }
    return NULL;
}

int
group_port_slot(const uint16_t *ports, uint32_t count, uint16_t port)
{
    for (uint32_t i = 0; i < count; i++) {
        if (ports[i] == port) {
            return (int)i;
        }
    }
    return -1;
}
