/*
 * The objects' values. System scalars come from the profile and the
 * device's running configuration (sysName/sysContact/sysLocation are
 * ietf-system's hostname/contact/location); IF-MIB columns from the device
 * view (admin status and ifAlias from running, oper status and counters
 * from the view at the request's instant; Counter32 columns are the low 32
 * bits of the 64-bit counters); HOST-RESOURCES-MIB rows from the profile's
 * processors and storage with gauges from dynamics.c. The engine ID lives
 * here too: snmpEngineID is one of the values, and the request handling
 * above (respond.c's USM) takes it from here rather than the other way.
 */
#include <stdio.h>
#include <string.h>

#include "device.h"
#include "devview.h"
#include "event.h"
#include "mib.h"

enum mib_id {
    ID_SYS_DESCR,
    ID_SYS_OBJECT_ID,
    ID_SYS_UPTIME,
    ID_SYS_CONTACT,
    ID_SYS_NAME,
    ID_SYS_LOCATION,
    ID_SYS_SERVICES,
    ID_SYS_OR_LAST_CHANGE,
    ID_IF_NUMBER,
    ID_HR_SYSTEM_UPTIME,
    ID_IF_INDEX,
    ID_IF_DESCR,
    ID_IF_TYPE,
    ID_IF_MTU,
    ID_IF_SPEED,
    ID_IF_PHYS_ADDRESS,
    ID_IF_ADMIN_STATUS,
    ID_IF_OPER_STATUS,
    ID_IF_LAST_CHANGE,
    ID_IF_IN_OCTETS,
    ID_IF_IN_UCAST,
    ID_IF_IN_NUCAST,
    ID_IF_IN_DISCARDS,
    ID_IF_IN_ERRORS,
    ID_IF_IN_UNKNOWN_PROTOS,
    ID_IF_OUT_OCTETS,
    ID_IF_OUT_UCAST,
    ID_IF_OUT_NUCAST,
    ID_IF_OUT_DISCARDS,
    ID_IF_OUT_ERRORS,
    ID_IF_OUT_QLEN,
    ID_IF_SPECIFIC,
    ID_IF_NAME,
    ID_IF_IN_MCAST,
    ID_IF_IN_BCAST,
    ID_IF_OUT_MCAST,
    ID_IF_OUT_BCAST,
    ID_IF_HC_IN_OCTETS,
    ID_IF_HC_IN_UCAST,
    ID_IF_HC_IN_MCAST,
    ID_IF_HC_IN_BCAST,
    ID_IF_HC_OUT_OCTETS,
    ID_IF_HC_OUT_UCAST,
    ID_IF_HC_OUT_MCAST,
    ID_IF_HC_OUT_BCAST,
    ID_IF_LINK_UP_DOWN_TRAP,
    ID_IF_HIGH_SPEED,
    ID_IF_PROMISCUOUS,
    ID_IF_CONNECTOR_PRESENT,
    ID_IF_ALIAS,
    ID_IF_COUNTER_DISCONTINUITY,
    ID_HR_PROC_FRW_ID,
    ID_HR_PROC_LOAD,
    ID_HR_STORAGE_INDEX,
    ID_HR_STORAGE_TYPE,
    ID_HR_STORAGE_DESCR,
    ID_HR_STORAGE_UNITS,
    ID_HR_STORAGE_SIZE,
    ID_HR_STORAGE_USED,
    ID_HR_STORAGE_FAILURES,
    ID_SNMP_IN_PKTS,
    ID_SNMP_OUT_PKTS,
    ID_SNMP_IN_BAD_VERSIONS,
    ID_SNMP_IN_BAD_COMMUNITY_NAMES,
    ID_SNMP_IN_BAD_COMMUNITY_USES,
    ID_SNMP_IN_ASN_PARSE_ERRS,
    ID_SNMP_ENABLE_AUTHEN_TRAPS,
    ID_SNMP_SILENT_DROPS,
    ID_SNMP_PROXY_DROPS,
    ID_ENGINE_ID,
    ID_ENGINE_BOOTS,
    ID_ENGINE_TIME,
    ID_ENGINE_MAX_MSG,
    ID_USM_STATS, /* ID_USM_STATS + 1..6: usmStats counters in enum susm_report_kind order */
};

/* OIDs written as the arcs below a base, so the table stays readable. */
#define SYSTEM           1, 3, 6, 1, 2, 1, 1
#define IF_ENTRY         1, 3, 6, 1, 2, 1, 2, 2, 1
#define IFX_ENTRY        1, 3, 6, 1, 2, 1, 31, 1, 1, 1
#define HR_PROC_ENTRY    1, 3, 6, 1, 2, 1, 25, 3, 3, 1
#define HR_STORAGE_ENTRY 1, 3, 6, 1, 2, 1, 25, 2, 3, 1
#define SNMP_GROUP       1, 3, 6, 1, 2, 1, 11
#define SNMP_ENGINE      1, 3, 6, 1, 6, 3, 10, 2, 1
#define USM_STATS        1, 3, 6, 1, 6, 3, 15, 1, 1
#define OBJ(tbl, ident, type, wr, ...)                                                                       \
    {                                                                                                        \
        .oid = {.len = sizeof((uint32_t[]){__VA_ARGS__}) / sizeof(uint32_t), .sub = {__VA_ARGS__}},          \
        .table = (tbl), .id = (ident), .tag = (type), .writable = (wr)                                       \
    }

static struct mib_object object_table[] = {
    OBJ(MIB_SCALAR, ID_SYS_DESCR, BER_OCTET_STRING, 0, SYSTEM, 1),
    OBJ(MIB_SCALAR, ID_SYS_OBJECT_ID, BER_OID, 0, SYSTEM, 2),
    OBJ(MIB_SCALAR, ID_SYS_UPTIME, BER_TIMETICKS, 0, SYSTEM, 3),
    OBJ(MIB_SCALAR, ID_SYS_CONTACT, BER_OCTET_STRING, 1, SYSTEM, 4),
    OBJ(MIB_SCALAR, ID_SYS_NAME, BER_OCTET_STRING, 1, SYSTEM, 5),
    OBJ(MIB_SCALAR, ID_SYS_LOCATION, BER_OCTET_STRING, 1, SYSTEM, 6),
    OBJ(MIB_SCALAR, ID_SYS_SERVICES, BER_INTEGER, 0, SYSTEM, 7),
    OBJ(MIB_SCALAR, ID_SYS_OR_LAST_CHANGE, BER_TIMETICKS, 0, SYSTEM, 8),
    OBJ(MIB_SCALAR, ID_IF_NUMBER, BER_INTEGER, 0, 1, 3, 6, 1, 2, 1, 2, 1),
    OBJ(MIB_IF_TABLE, ID_IF_INDEX, BER_INTEGER, 0, IF_ENTRY, 1),
    OBJ(MIB_IF_TABLE, ID_IF_DESCR, BER_OCTET_STRING, 0, IF_ENTRY, 2),
    OBJ(MIB_IF_TABLE, ID_IF_TYPE, BER_INTEGER, 0, IF_ENTRY, 3),
    OBJ(MIB_IF_TABLE, ID_IF_MTU, BER_INTEGER, 0, IF_ENTRY, 4),
    OBJ(MIB_IF_TABLE, ID_IF_SPEED, BER_GAUGE32, 0, IF_ENTRY, 5),
    OBJ(MIB_IF_TABLE, ID_IF_PHYS_ADDRESS, BER_OCTET_STRING, 0, IF_ENTRY, 6),
    OBJ(MIB_IF_TABLE, ID_IF_ADMIN_STATUS, BER_INTEGER, 1, IF_ENTRY, 7),
    OBJ(MIB_IF_TABLE, ID_IF_OPER_STATUS, BER_INTEGER, 0, IF_ENTRY, 8),
    OBJ(MIB_IF_TABLE, ID_IF_LAST_CHANGE, BER_TIMETICKS, 0, IF_ENTRY, 9),
    OBJ(MIB_IF_TABLE, ID_IF_IN_OCTETS, BER_COUNTER32, 0, IF_ENTRY, 10),
    OBJ(MIB_IF_TABLE, ID_IF_IN_UCAST, BER_COUNTER32, 0, IF_ENTRY, 11),
    OBJ(MIB_IF_TABLE, ID_IF_IN_NUCAST, BER_COUNTER32, 0, IF_ENTRY, 12),
    OBJ(MIB_IF_TABLE, ID_IF_IN_DISCARDS, BER_COUNTER32, 0, IF_ENTRY, 13),
    OBJ(MIB_IF_TABLE, ID_IF_IN_ERRORS, BER_COUNTER32, 0, IF_ENTRY, 14),
    OBJ(MIB_IF_TABLE, ID_IF_IN_UNKNOWN_PROTOS, BER_COUNTER32, 0, IF_ENTRY, 15),
    OBJ(MIB_IF_TABLE, ID_IF_OUT_OCTETS, BER_COUNTER32, 0, IF_ENTRY, 16),
    OBJ(MIB_IF_TABLE, ID_IF_OUT_UCAST, BER_COUNTER32, 0, IF_ENTRY, 17),
    OBJ(MIB_IF_TABLE, ID_IF_OUT_NUCAST, BER_COUNTER32, 0, IF_ENTRY, 18),
    OBJ(MIB_IF_TABLE, ID_IF_OUT_DISCARDS, BER_COUNTER32, 0, IF_ENTRY, 19),
    OBJ(MIB_IF_TABLE, ID_IF_OUT_ERRORS, BER_COUNTER32, 0, IF_ENTRY, 20),
    OBJ(MIB_IF_TABLE, ID_IF_OUT_QLEN, BER_GAUGE32, 0, IF_ENTRY, 21),
    OBJ(MIB_IF_TABLE, ID_IF_SPECIFIC, BER_OID, 0, IF_ENTRY, 22),
    OBJ(MIB_IF_TABLE, ID_IF_NAME, BER_OCTET_STRING, 0, IFX_ENTRY, 1),
    OBJ(MIB_IF_TABLE, ID_IF_IN_MCAST, BER_COUNTER32, 0, IFX_ENTRY, 2),
    OBJ(MIB_IF_TABLE, ID_IF_IN_BCAST, BER_COUNTER32, 0, IFX_ENTRY, 3),
    OBJ(MIB_IF_TABLE, ID_IF_OUT_MCAST, BER_COUNTER32, 0, IFX_ENTRY, 4),
    OBJ(MIB_IF_TABLE, ID_IF_OUT_BCAST, BER_COUNTER32, 0, IFX_ENTRY, 5),
    OBJ(MIB_IF_TABLE, ID_IF_HC_IN_OCTETS, BER_COUNTER64, 0, IFX_ENTRY, 6),
    OBJ(MIB_IF_TABLE, ID_IF_HC_IN_UCAST, BER_COUNTER64, 0, IFX_ENTRY, 7),
    OBJ(MIB_IF_TABLE, ID_IF_HC_IN_MCAST, BER_COUNTER64, 0, IFX_ENTRY, 8),
    OBJ(MIB_IF_TABLE, ID_IF_HC_IN_BCAST, BER_COUNTER64, 0, IFX_ENTRY, 9),
    OBJ(MIB_IF_TABLE, ID_IF_HC_OUT_OCTETS, BER_COUNTER64, 0, IFX_ENTRY, 10),
    OBJ(MIB_IF_TABLE, ID_IF_HC_OUT_UCAST, BER_COUNTER64, 0, IFX_ENTRY, 11),
    OBJ(MIB_IF_TABLE, ID_IF_HC_OUT_MCAST, BER_COUNTER64, 0, IFX_ENTRY, 12),
    OBJ(MIB_IF_TABLE, ID_IF_HC_OUT_BCAST, BER_COUNTER64, 0, IFX_ENTRY, 13),
    OBJ(MIB_IF_TABLE, ID_IF_LINK_UP_DOWN_TRAP, BER_INTEGER, 0, IFX_ENTRY, 14),
    OBJ(MIB_IF_TABLE, ID_IF_HIGH_SPEED, BER_GAUGE32, 0, IFX_ENTRY, 15),
    OBJ(MIB_IF_TABLE, ID_IF_PROMISCUOUS, BER_INTEGER, 0, IFX_ENTRY, 16),
    OBJ(MIB_IF_TABLE, ID_IF_CONNECTOR_PRESENT, BER_INTEGER, 0, IFX_ENTRY, 17),
    OBJ(MIB_IF_TABLE, ID_IF_ALIAS, BER_OCTET_STRING, 1, IFX_ENTRY, 18),
    OBJ(MIB_IF_TABLE, ID_IF_COUNTER_DISCONTINUITY, BER_TIMETICKS, 0, IFX_ENTRY, 19),
    OBJ(MIB_SCALAR, ID_HR_SYSTEM_UPTIME, BER_TIMETICKS, 0, 1, 3, 6, 1, 2, 1, 25, 1, 1),
    OBJ(MIB_HR_STORAGE, ID_HR_STORAGE_INDEX, BER_INTEGER, 0, HR_STORAGE_ENTRY, 1),
    OBJ(MIB_HR_STORAGE, ID_HR_STORAGE_TYPE, BER_OID, 0, HR_STORAGE_ENTRY, 2),
    OBJ(MIB_HR_STORAGE, ID_HR_STORAGE_DESCR, BER_OCTET_STRING, 0, HR_STORAGE_ENTRY, 3),
    OBJ(MIB_HR_STORAGE, ID_HR_STORAGE_UNITS, BER_INTEGER, 0, HR_STORAGE_ENTRY, 4),
    OBJ(MIB_HR_STORAGE, ID_HR_STORAGE_SIZE, BER_INTEGER, 0, HR_STORAGE_ENTRY, 5),
    OBJ(MIB_HR_STORAGE, ID_HR_STORAGE_USED, BER_INTEGER, 0, HR_STORAGE_ENTRY, 6),
    OBJ(MIB_HR_STORAGE, ID_HR_STORAGE_FAILURES, BER_COUNTER32, 0, HR_STORAGE_ENTRY, 7),
    OBJ(MIB_HR_PROC, ID_HR_PROC_FRW_ID, BER_OID, 0, HR_PROC_ENTRY, 1),
    OBJ(MIB_HR_PROC, ID_HR_PROC_LOAD, BER_INTEGER, 0, HR_PROC_ENTRY, 2),
    OBJ(MIB_SCALAR, ID_SNMP_IN_PKTS, BER_COUNTER32, 0, SNMP_GROUP, 1),
    OBJ(MIB_SCALAR, ID_SNMP_OUT_PKTS, BER_COUNTER32, 0, SNMP_GROUP, 2),
    OBJ(MIB_SCALAR, ID_SNMP_IN_BAD_VERSIONS, BER_COUNTER32, 0, SNMP_GROUP, 3),
    OBJ(MIB_SCALAR, ID_SNMP_IN_BAD_COMMUNITY_NAMES, BER_COUNTER32, 0, SNMP_GROUP, 4),
    OBJ(MIB_SCALAR, ID_SNMP_IN_BAD_COMMUNITY_USES, BER_COUNTER32, 0, SNMP_GROUP, 5),
    OBJ(MIB_SCALAR, ID_SNMP_IN_ASN_PARSE_ERRS, BER_COUNTER32, 0, SNMP_GROUP, 6),
    OBJ(MIB_SCALAR, ID_SNMP_ENABLE_AUTHEN_TRAPS, BER_INTEGER, 1, SNMP_GROUP, 30),
    OBJ(MIB_SCALAR, ID_SNMP_SILENT_DROPS, BER_COUNTER32, 0, SNMP_GROUP, 31),
    OBJ(MIB_SCALAR, ID_SNMP_PROXY_DROPS, BER_COUNTER32, 0, SNMP_GROUP, 32),
    OBJ(MIB_SCALAR, ID_ENGINE_ID, BER_OCTET_STRING, 0, SNMP_ENGINE, 1),
    OBJ(MIB_SCALAR, ID_ENGINE_BOOTS, BER_INTEGER, 0, SNMP_ENGINE, 2),
    OBJ(MIB_SCALAR, ID_ENGINE_TIME, BER_INTEGER, 0, SNMP_ENGINE, 3),
    OBJ(MIB_SCALAR, ID_ENGINE_MAX_MSG, BER_INTEGER, 0, SNMP_ENGINE, 4),
    OBJ(MIB_SCALAR, ID_USM_STATS + 1, BER_COUNTER32, 0, USM_STATS, 1),
    OBJ(MIB_SCALAR, ID_USM_STATS + 2, BER_COUNTER32, 0, USM_STATS, 2),
    OBJ(MIB_SCALAR, ID_USM_STATS + 3, BER_COUNTER32, 0, USM_STATS, 3),
    OBJ(MIB_SCALAR, ID_USM_STATS + 4, BER_COUNTER32, 0, USM_STATS, 4),
    OBJ(MIB_SCALAR, ID_USM_STATS + 5, BER_COUNTER32, 0, USM_STATS, 5),
    OBJ(MIB_SCALAR, ID_USM_STATS + 6, BER_COUNTER32, 0, USM_STATS, 6),
};

/* Gauge identities for dyn_gauge(): processor and storage rows must not move together. */
#define GAUGE_PROC    0x10000u
#define GAUGE_STORAGE 0x20000u
/* Period of the processor and memory waves. */
#define HOST_GAUGE_PERIOD_S 900u

struct mib_object *
mib_objects(uint32_t *count)
{
    *count = sizeof object_table / sizeof object_table[0];
    return object_table;
}

/* TimeTicks (hundredths of a second, wrapping at 2^32) from @p from_ms to @p to_ms. */
static uint64_t
ticks(uint64_t from_ms, uint64_t to_ms)
{
    return to_ms > from_ms ? ((to_ms - from_ms) / 10) & 0xffffffffu : 0;
}

static void
set_string(struct spdu_value *v, const char *s)
{
    size_t len = s ? strlen(s) : 0;
    v->tag = BER_OCTET_STRING;
    v->v.bytes.ptr = (const uint8_t *)(s ? s : "");
    v->v.bytes.len = len > MIB_VALUE_MAX_BYTES ? MIB_VALUE_MAX_BYTES : len;
}

static void
set_int(struct spdu_value *v, uint8_t tag, int64_t value)
{
    v->tag = tag;
    v->v.i = value;
}

static void
set_uint(struct spdu_value *v, uint8_t tag, uint64_t value)
{
    v->tag = tag;
    v->v.u = value;
}

static void
set_oid(struct mib_req *rq, struct spdu_value *v, const uint32_t *arcs, uint32_t len)
{
    rq->oid_scratch.len = len;
    memcpy(rq->oid_scratch.sub, arcs, len * sizeof *arcs);
    v->tag = BER_OID;
    v->v.oid = &rq->oid_scratch;
}

/*
 * One direction's counters of interface @p pos, computed once per request and direction; the packet
 * counters only when asked (@p packets), since a walk of an octet column needs none.
 */
static const struct dyn_direction_counters *
direction(struct mib_req *rq, uint32_t pos, int out, int packets)
{
    if (rq->dir_pos[out] != (int32_t)pos) {
        rq->dir[out].octets = devview_octets(rq->dev, rq->seed, pos, rq->now_ms, out);
        rq->dir_pos[out] = (int32_t)pos;
        rq->dir_derived[out] = 0;
    }
    if (packets && !rq->dir_derived[out]) {
        dyn_prep_derive(&rq->dev->type->traffic, rq->dir[out].octets, out, &rq->dir[out]);
        rq->dir_derived[out] = 1;
    }
    return &rq->dir[out];
}

/* The agent's own counters and engine (SNMPv2-MIB snmp group, SNMP-FRAMEWORK-MIB, SNMP-USER-BASED-SM-MIB). */
static void
agent_value(struct mib_req *rq, const struct mib_object *o, struct spdu_value *v)
{
    const struct respond_stats *st = &rq->dev->snmp_stats;

    switch (o->id) {
    case ID_SNMP_IN_PKTS:
        set_uint(v, BER_COUNTER32, st->in_pkts);
        return;
    case ID_SNMP_OUT_PKTS:
        set_uint(v, BER_COUNTER32, st->out_pkts);
        return;
    case ID_SNMP_IN_BAD_VERSIONS:
        set_uint(v, BER_COUNTER32, st->in_bad_versions);
        return;
    case ID_SNMP_IN_BAD_COMMUNITY_NAMES:
        set_uint(v, BER_COUNTER32, st->in_bad_community_names);
        return;
    case ID_SNMP_IN_BAD_COMMUNITY_USES:
        set_uint(v, BER_COUNTER32, st->in_bad_community_uses);
        return;
    case ID_SNMP_IN_ASN_PARSE_ERRS:
        set_uint(v, BER_COUNTER32, st->in_asn_parse_errs);
        return;
    case ID_SNMP_ENABLE_AUTHEN_TRAPS:
        set_int(v, BER_INTEGER, event_authen_traps_enabled(rq->dev) ? 1 : 2); /* what event.c obeys */
        return;
    case ID_SNMP_SILENT_DROPS:
        set_uint(v, BER_COUNTER32, st->silent_drops);
        return;
    case ID_SNMP_PROXY_DROPS:
        set_uint(v, BER_COUNTER32, 0);
        return;
    case ID_ENGINE_ID:
        v->tag = BER_OCTET_STRING;
        v->v.bytes.ptr = rq->scratch;
        v->v.bytes.len = mib_engine_id(rq->dev, rq->scratch);
        return;
    case ID_ENGINE_BOOTS:
        set_int(v, BER_INTEGER, 1 + (int64_t)rq->dev->reboots);
        return;
    case ID_ENGINE_TIME:
        set_int(v, BER_INTEGER, (int64_t)((rq->now_ms - devview_boot_ms(rq->dev)) / 1000) & 0x7fffffff);
        return;
    case ID_ENGINE_MAX_MSG:
        set_int(v, BER_INTEGER, rq->dev->group->cfg.snmp_max_msg_bytes);
        return;
    default:
        if (o->id > ID_USM_STATS && o->id <= ID_USM_STATS + 6) {
            set_uint(v, BER_COUNTER32, st->usm_stats[o->id - ID_USM_STATS]);
        }
        return;
    }
}

static void
system_value(struct mib_req *rq, const struct mib_object *o, struct spdu_value *v)
{
    const struct profile *p = rq->dev->type->profile;
    static const uint32_t zero_dot_zero[] = {0, 0};

    switch (o->id) {
    case ID_SYS_DESCR:
        set_string(v, p->sys_descr);
        break;
    case ID_SYS_OBJECT_ID:
        if (p->sys_object_id.len) {
            v->tag = BER_OID;
            v->v.oid = &p->sys_object_id;
        } else {
            set_oid(rq, v, zero_dot_zero, 2);
        }
        break;
    case ID_SYS_UPTIME:
    case ID_HR_SYSTEM_UPTIME:
        set_uint(v, BER_TIMETICKS, ticks(devview_boot_ms(rq->dev), rq->now_ms));
        break;
    case ID_SYS_CONTACT:
        set_string(v, rq->cfg->contact);
        break;
    case ID_SYS_NAME:
        devview_hostname(rq->dev, (char *)rq->scratch, sizeof rq->scratch);
        set_string(v, (const char *)rq->scratch);
        break;
    case ID_SYS_LOCATION:
        set_string(v, rq->cfg->location);
        break;
    case ID_SYS_SERVICES:
        set_int(v, BER_INTEGER, p->sys_services);
        break;
    case ID_SYS_OR_LAST_CHANGE:
        set_uint(v, BER_TIMETICKS, 0);
        break;
    case ID_IF_NUMBER:
        set_int(v, BER_INTEGER, p->if_count);
        break;
    default:
        agent_value(rq, o, v);
        break;
    }
}

static void
if_value(struct mib_req *rq, const struct mib_object *o, uint32_t pos, struct spdu_value *v)
{
    const struct profile_interface *pi = &rq->dev->type->profile->ifs[pos];
    static const uint32_t zero_dot_zero[] = {0, 0};
    uint32_t dev_index = rq->dev->index;

    switch (o->id) {
    case ID_IF_INDEX:
        set_int(v, BER_INTEGER, pos + 1);
        return;
    case ID_IF_DESCR:
    case ID_IF_NAME:
        set_string(v, pi->name);
        return;
    case ID_IF_TYPE:
        set_int(v, BER_INTEGER, pi->iftype);
        return;
    case ID_IF_MTU:
        set_int(v, BER_INTEGER, pi->mtu);
        return;
    case ID_IF_SPEED:
        set_uint(v, BER_GAUGE32, pi->speed_bps > 0xffffffffu ? 0xffffffffu : pi->speed_bps);
        return;
    case ID_IF_HIGH_SPEED:
        set_uint(v, BER_GAUGE32, pi->speed_bps / 1000000);
        return;
    case ID_IF_PHYS_ADDRESS:
        /* Locally administered, unique per (device, interface): 02:dd:dd:dd:ii:ii. */
        rq->scratch[0] = 0x02;
        rq->scratch[1] = (uint8_t)(dev_index >> 16);
        rq->scratch[2] = (uint8_t)(dev_index >> 8);
        rq->scratch[3] = (uint8_t)dev_index;
        rq->scratch[4] = (uint8_t)(pos >> 8);
        rq->scratch[5] = (uint8_t)pos;
        v->tag = BER_OCTET_STRING;
        v->v.bytes.ptr = rq->scratch;
        v->v.bytes.len = 6;
        return;
    case ID_IF_ADMIN_STATUS:
        set_int(v, BER_INTEGER, rq->cfg->enabled[pos] ? 1 : 2);
        return;
    case ID_IF_OPER_STATUS:
        set_int(v, BER_INTEGER, devview_oper(rq->dev, pos));
        return;
    case ID_IF_LAST_CHANGE:
        set_uint(v, BER_TIMETICKS, ticks(devview_boot_ms(rq->dev), devview_last_change_ms(rq->dev, pos)));
        return;
    case ID_IF_OUT_QLEN:
        set_uint(v, BER_GAUGE32, 0);
        return;
    case ID_IF_SPECIFIC:
        set_oid(rq, v, zero_dot_zero, 2);
        return;
    case ID_IF_LINK_UP_DOWN_TRAP:
        set_int(v, BER_INTEGER, 1); /* enabled */
        return;
    case ID_IF_PROMISCUOUS:
        set_int(v, BER_INTEGER, 2); /* false */
        return;
    case ID_IF_CONNECTOR_PRESENT:
        set_int(v, BER_INTEGER, strcmp(pi->type, "softwareLoopback") ? 1 : 2);
        return;
    case ID_IF_ALIAS:
        set_string(v, rq->cfg->alias[pos]);
        return;
    case ID_IF_COUNTER_DISCONTINUITY:
        set_uint(v, BER_TIMETICKS, 0);
        return;
    }

    const struct dyn_direction_counters *c;
    uint64_t value = 0;
    switch (o->id) {
    case ID_IF_IN_OCTETS:
    case ID_IF_HC_IN_OCTETS:
    case ID_IF_OUT_OCTETS:
    case ID_IF_HC_OUT_OCTETS:
        c = direction(rq, pos, o->id == ID_IF_OUT_OCTETS || o->id == ID_IF_HC_OUT_OCTETS, 0);
        value = c->octets;
        break;
    case ID_IF_IN_UCAST:
    case ID_IF_HC_IN_UCAST:
    case ID_IF_OUT_UCAST:
    case ID_IF_HC_OUT_UCAST:
        c = direction(rq, pos, o->id == ID_IF_OUT_UCAST || o->id == ID_IF_HC_OUT_UCAST, 1);
        value = c->ucast;
        break;
    case ID_IF_IN_NUCAST:
    case ID_IF_OUT_NUCAST:
        c = direction(rq, pos, o->id == ID_IF_OUT_NUCAST, 1);
        value = c->multicast + c->broadcast;
        break;
    case ID_IF_IN_MCAST:
    case ID_IF_HC_IN_MCAST:
    case ID_IF_OUT_MCAST:
    case ID_IF_HC_OUT_MCAST:
        c = direction(rq, pos, o->id == ID_IF_OUT_MCAST || o->id == ID_IF_HC_OUT_MCAST, 1);
        value = c->multicast;
        break;
    case ID_IF_IN_BCAST:
    case ID_IF_HC_IN_BCAST:
    case ID_IF_OUT_BCAST:
    case ID_IF_HC_OUT_BCAST:
        c = direction(rq, pos, o->id == ID_IF_OUT_BCAST || o->id == ID_IF_HC_OUT_BCAST, 1);
        value = c->broadcast;
        break;
    case ID_IF_IN_DISCARDS:
    case ID_IF_OUT_DISCARDS:
        value = direction(rq, pos, o->id == ID_IF_OUT_DISCARDS, 1)->discards;
        break;
    case ID_IF_IN_ERRORS:
    case ID_IF_OUT_ERRORS:
        value = direction(rq, pos, o->id == ID_IF_OUT_ERRORS, 1)->errors;
        break;
    case ID_IF_IN_UNKNOWN_PROTOS:
        value = direction(rq, pos, 0, 1)->unknown_protos;
        break;
    }
    set_uint(v, o->tag, o->tag == BER_COUNTER64 ? value : (value & 0xffffffffu));
}

static void
host_value(struct mib_req *rq, const struct mib_object *o, uint32_t row, struct spdu_value *v)
{
    const struct profile *p = rq->dev->type->profile;
    static const uint32_t zero_dot_zero[] = {0, 0};
    uint64_t seed = rq->seed;

    if (o->table == MIB_HR_PROC) {
        const struct profile_processor *cpu = &p->cpus[row - 1];
        if (o->id == ID_HR_PROC_FRW_ID) {
            set_oid(rq, v, zero_dot_zero, 2);
        } else {
            set_int(v, BER_INTEGER,
                    dyn_gauge(seed, GAUGE_PROC + row, cpu->load_min, cpu->load_max, HOST_GAUGE_PERIOD_S,
                              rq->now_ms));
        }
        return;
    }
    const struct profile_storage *st = &p->storages[row - 1];
    switch (o->id) {
    case ID_HR_STORAGE_INDEX:
        set_int(v, BER_INTEGER, row);
        break;
    case ID_HR_STORAGE_TYPE: {
        const uint32_t arcs[] = {1, 3, 6, 1, 2, 1, 25, 2, 1, st->type};
        set_oid(rq, v, arcs, sizeof arcs / sizeof arcs[0]);
        break;
    }
    case ID_HR_STORAGE_DESCR:
        set_string(v, st->descr);
        break;
    case ID_HR_STORAGE_UNITS:
        set_int(v, BER_INTEGER, st->unit_bytes);
        break;
    case ID_HR_STORAGE_SIZE:
        set_int(v, BER_INTEGER, st->size_units);
        break;
    case ID_HR_STORAGE_USED: {
        uint32_t pct = dyn_gauge(seed, GAUGE_STORAGE + row, st->used_min_pct, st->used_max_pct,
                                 HOST_GAUGE_PERIOD_S, rq->now_ms);
        set_int(v, BER_INTEGER, (int64_t)((uint64_t)st->size_units * pct / 100));
        break;
    }
    case ID_HR_STORAGE_FAILURES:
        set_uint(v, BER_COUNTER32, 0);
        break;
    }
}

void
mib_value(struct mib_req *rq, const struct mib_object *o, uint32_t row, struct spdu_value *v)
{
    switch (o->table) {
    case MIB_SCALAR:
        system_value(rq, o, v);
        break;
    case MIB_IF_TABLE:
        if_value(rq, o, row - 1, v);
        break;
    default:
        host_value(rq, o, row, v);
        break;
    }
}

const char *
mib_object_name(const struct mib_object *o)
{
    switch (o->id) {
    case ID_SYS_CONTACT:
        return "sysContact";
    case ID_SYS_NAME:
        return "sysName";
    case ID_SYS_LOCATION:
        return "sysLocation";
    case ID_IF_ADMIN_STATUS:
        return "ifAdminStatus";
    case ID_IF_ALIAS:
        return "ifAlias";
    case ID_SNMP_ENABLE_AUTHEN_TRAPS:
        return "snmpEnableAuthenTraps";
    }
    return "read-only object";
}

size_t
mib_engine_id(const struct device *dev, uint8_t *id)
{
    static const uint8_t head[] = {0x80, 0x00, 0x00, 0x00, 0x05, 'f', 'l', 'e', 'e', 't'};
    memcpy(id, head, sizeof head);
    id[10] = (uint8_t)(dev->index >> 24);
    id[11] = (uint8_t)(dev->index >> 16);
    id[12] = (uint8_t)(dev->index >> 8);
    id[13] = (uint8_t)dev->index;
    return 14;
}
