/*
 * What a notification is made of, on its own so the sender (trap.h) and
 * the encoders (trap_pdu.h) share it without including each other: where
 * it comes from and its objects.
 */
#ifndef FLEET_TRAP_TYPES_H
#define FLEET_TRAP_TYPES_H

#include <stdint.h>

#include "oid.h"
#include "spdu.h"

struct susm_engine;

/* Who a notification is from: where it leaves from and what names it. */
struct trap_origin {
    uint32_t addr;    /* the device's address (low 32 bits of the sender's fam): the source with fd -1
                         (IP_PKTINFO, IPV6_PKTINFO; the wildcard: the socket's choice) and, for IPv4, the value
                         of snmpTrapAddress.0 (an IpAddress: IPv6 devices leave it out) */
    int fd;           /* a UDP socket bound to the device's address and port (its SNMP agent's) to send from,
                         on the sender's loop; -1: the sender's own socket */
    const char *name; /* the device's sysName.0; not NULL: snmpTrapAddress.0 (addr) and sysName.0 (name)
                         follow the notification's objects; NULL: nothing follows */
    const char *run_tag; /* --run-tag: fleetsimRunTag.0 follows sysName.0 (named origins only); NULL: none */
    const struct susm_engine *engine; /* TRAP_VERSION_3: the device's engine, authoritative for its traps
                                         (RFC 3412 6: the sender of an unconfirmed PDU); else may be NULL */
};

/* One of a notification's objects (after sysUpTime.0 and snmpTrapOID.0). */
struct trap_varbind {
    const struct oid *name;  /* the object instance */
    struct spdu_value value; /* its value (OIDs through v.oid) */
};

#endif
