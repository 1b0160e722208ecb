/*
 * SNMP SET of the writable objects (sysContact, sysName, sysLocation,
 * ifAdminStatus, ifAlias) as an edit of the device's running configuration.
 */
#ifndef FLEET_MIB_SET_H
#define FLEET_MIB_SET_H

#include <stdint.h>

#include "mib.h"

/* Most varbinds one SET may carry (checked before anything is decoded into the stack arrays). */
#define MIB_SET_MAX_BINDINGS 64

/**
 * @brief Apply a SET atomically.
 * @param[out] error_index 1-based index of the varbind that failed, 0 on success.
 * @return An RFC 3416 error-status (SNMPv2 numbering; the caller maps it for SNMPv1), 0 on success.
 */
int mib_set(struct mib_req *rq, const struct spdu_pdu *pdu, uint32_t *error_index);

#endif
