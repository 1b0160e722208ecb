/*
 * MIB-derived YANG modules served over SNMP with no code of their own:
 * every leaf of the state data whose schema node carries smiv2:oid (RFC
 * 6643, as `smidump -f yang` writes them) becomes an SNMP instance, its OID
 * the column's plus the list entry's keys encoded as SMI indexes (RFC 2578
 * section 7.7), or the scalar's plus .0, its type taken from the YANG type
 * (yang:counter32 is Counter32, and so on).
 */
#ifndef FLEET_SMIV2_H
#define FLEET_SMIV2_H

#include <stddef.h>

#include <libyang/libyang.h>

#include "err.h"

struct rec_table;

/**
 * @brief Build the SNMP instances of @p state (all top-level siblings).
 * @param[out] table The instances, sorted (NULL when there are none); rec_free() it.
 * @param[out] err Names the node that cannot be served, and why.
 * @return FLEET_OK, FLEET_ERR_INVAL or FLEET_ERR_NOMEM.
 */
enum fleet_err smiv2_build(const struct lyd_node *state, struct rec_table **table, char *err, size_t err_len);

#endif
