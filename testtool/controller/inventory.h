/*
 * The fleet as its consumers see it, from the plan alone (no socket is
 * opened): each device's node name and the address and ports a controller
 * or a collector connects to, OpenDaylight's topology-netconf document
 * (sent by registration, written by --emit-inventory odl-json), and the
 * --emit-inventory writer for the other formats (an OpenNMS requisition,
 * Prometheus file-based service discovery, CSV).
 */
#ifndef FLEET_INVENTORY_H
#define FLEET_INVENTORY_H

#include <stddef.h>
#include <stdint.h>

struct fleet_config;
struct fleet_group_spec;
struct sbuf;

/* Longest host name accepted for --generate-config-address and --controller-ip (RFC 1035 name). */
#define INVENTORY_HOST_MAX 253
/* ODL's node names: "<port>-sim-device", or "<address>-sim-device" with --ip-per-device; with
 * --devices-per-port N the device's other nodes add "-1" ... "-(N-1)", as OpenDaylight's releases did. */
#define INVENTORY_NODE_SUFFIX "-sim-device"

/* Where one device is reached, as written for a consumer: one node (one mount; with --devices-per-port N,
 * a device is N nodes). */
struct inventory_device {
    uint32_t index;                    /* the device's position in the whole fleet, 0-based */
    uint32_t node;                     /* the node's number in the whole fleet's inventory */
    char host[INVENTORY_HOST_MAX + 1]; /* address (or name) the consumer connects to */
    char node_id[INVENTORY_HOST_MAX + sizeof INVENTORY_NODE_SUFFIX + 8]; /* ODL node-id, also node label */
    uint16_t netconf_port;                                               /* NETCONF port at host */
    uint16_t snmp_port;             /* SNMP agent's UDP port at host; 0 with --snmp false */
    const char *group;              /* its group's name */
    char type[128];                 /* its device type (device_type_label()) */
    const struct fleet_config *cfg; /* its group's plan: login, transport, SNMP */
};

/** @return 1 when @p s may be a host name or an address (letters, digits, '.', '-', ':', '_'; 1-253). */
int inventory_host_valid(const char *s);

/**
 * @brief Check that the plan can be written for a consumer: the address given to consumers
 * (--generate-config-address, an IPv4 address with --ip-per-device), the port and address ranges.
 * Called before anything listens, for registration and for --emit-inventory.
 * @param[in] cfg The plan of one group.
 * @param[out] err On failure, a message naming the option.
 * @return 0, or -1 (the process should exit with 2).
 */
int inventory_check(const struct fleet_config *cfg, char *err, size_t err_len);

/** @return The fleet's nodes: every group's devices times its --devices-per-port. */
uint32_t inventory_node_count(const struct fleet_group_spec *groups, uint32_t group_count);

/** @return The node number of fleet device @p index's first node (devices before it times their copies). */
uint32_t inventory_first_node(const struct fleet_group_spec *groups, uint32_t group_count, uint32_t index);

/**
 * @brief Fill @p out with node @p node's (of the whole fleet, groups in order, each device's
 * --devices-per-port nodes together) name, address, ports, group and type. Every group must have passed
 * inventory_check() and @p node be below inventory_node_count().
 */
void inventory_device_get(const struct fleet_group_spec *groups, uint32_t group_count, uint32_t node,
                          struct inventory_device *out);

/**
 * @brief Append OpenDaylight's topology-netconf document (RFC 8040 JSON of network-topology with
 * netconf-node-topology's netconf-node container) for nodes @p first to @p first + @p count - 1.
 * The body of one registration PATCH; with every device, the odl-json inventory.
 * @param[in] groups The fleet's groups, each passed inventory_check().
 * @param[in,out] out Receives the document; check out->failed afterwards.
 */
void inventory_odl_topology(const struct fleet_group_spec *groups, uint32_t group_count, uint32_t first,
                            uint32_t count, struct sbuf *out);

/**
 * @brief Write cfg->emit_inventory in cfg->inventory_format (the fleet-wide plan @p cfg), atomically (a
 * temporary file in the same folder, renamed over the target), for every device of @p groups. Opens no
 * socket. @return 0, or -1 with a message in @p err (the process should exit with 2).
 */
int inventory_emit(const struct fleet_config *cfg, const struct fleet_group_spec *groups,
                   uint32_t group_count, char *err, size_t err_len);

#endif
