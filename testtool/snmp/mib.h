/*
 * The SNMP view of a device: the objects a profile serves (SNMPv2-MIB
 * system group, IF-MIB ifNumber/ifTable/ifXTable, HOST-RESOURCES-MIB
 * processor load and storage), sorted by OID once per fleet, and the GET /
 * GETNEXT resolution over them. Tables are indexed by one integer with
 * dense rows 1..N, so "next row" is arithmetic, not a search. Values are
 * computed for the request's instant (mib_values.c) and never stored.
 */
#ifndef FLEET_MIB_H
#define FLEET_MIB_H

#include <stddef.h>
#include <stdint.h>

#include "ber.h"
#include "devview.h"
#include "err.h"
#include "spdu.h"

struct device;
struct fleet;

/* Which table an object belongs to: decides its rows. */
enum mib_table {
    MIB_SCALAR,     /* one instance, .0 */
    MIB_IF_TABLE,   /* ifTable and ifXTable: rows 1..interfaces */
    MIB_HR_PROC,    /* hrProcessorTable: rows 1..processors */
    MIB_HR_STORAGE, /* hrStorageTable: rows 1..storage entries */
};

/* One scalar or column. */
struct mib_object {
    struct oid oid;   /* the object's OID (without instance) */
    uint8_t table;    /* enum mib_table */
    uint8_t id;       /* which object, enum mib_id in mib_values.c */
    uint8_t tag;      /* its SNMP type (enum ber_tag) */
    uint8_t writable; /* 1 when SET may change it */
};

/* Largest string value the agent produces (sysDescr and the like are cut here). */
#define MIB_VALUE_MAX_BYTES 1024

/* One request's context: the device, the instant, and caches valid for this request only. */
struct mib_req {
    struct device *dev;            /* the device asked */
    uint64_t now_ms;               /* the request's instant (fleet clock) */
    int v1;                        /* 1 for SNMPv1: Counter64 objects are invisible (RFC 3584 4.2.2.1) */
    const struct devview_cfg *cfg; /* the device's configuration view */
    int32_t dir_pos[2];            /* interface whose inbound [0] / outbound [1] octets are cached, -1 none */
    uint8_t dir_derived[2];        /* 1 when dir[] also holds the packet counters */
    struct dyn_direction_counters dir[2]; /* those counters at now_ms */
    uint8_t scratch[MIB_VALUE_MAX_BYTES]; /* bytes of a value built for one varbind */
    struct oid oid_scratch;               /* an OID value built for one varbind */
    struct oid next_scratch;              /* GETNEXT: the live candidate while data tables are compared */
    uint64_t seed;                        /* the device's seed */
};

struct mib_view;

/** @brief A device type's live objects, sorted. @return FLEET_ERR_NOMEM when out of memory. */
enum fleet_err mib_view_init(struct mib_view *view);

/** @brief Free what mib_view_init() made. Accepts a zeroed view. */
void mib_view_free(struct mib_view *view);

/** @brief Start a request on @p dev at @p now_ms. @return FLEET_ERR_NOMEM when the view cannot be built. */
enum fleet_err mib_req_init(struct mib_req *rq, struct device *dev, uint64_t now_ms, int v1);

/**
 * @brief GET one instance.
 * @param[out] value The value, or noSuchObject / noSuchInstance.
 */
void mib_get(struct mib_req *rq, const struct oid *name, struct spdu_value *value);

/**
 * @brief GETNEXT: the first instance after @p name.
 * @param[out] next Its OID (unchanged name on endOfMibView).
 * @param[out] value Its value, or endOfMibView.
 */
void mib_next(struct mib_req *rq, const struct oid *name, struct oid *next, struct spdu_value *value);

/**
 * @brief mib_next() for a walk: @p hint (start it at UINT32_MAX) remembers the object the walk is in,
 * so the next step of the same walk needs no search.
 */
void mib_next_hinted(struct mib_req *rq, const struct oid *name, struct oid *next, struct spdu_value *value,
                     uint32_t *hint);

/**
 * @brief Find the object and row of an instance.
 * @return The object, or NULL (then *is_object tells whether the OID names an object without a valid
 * instance).
 */
const struct mib_object *mib_find(struct mib_req *rq, const struct oid *name, uint32_t *row, int *is_object);

/** @return Rows of @p table on the request's device. */
uint32_t mib_rows(const struct mib_req *rq, enum mib_table table);

struct rec_table;

/**
 * @brief Let the live objects own their OIDs: drop every recorded entry inside a live object's column
 * or at a live scalar of @p view. Call before the recording is shared; the type then serves the rest of
 * it from every device (type->recording). @return Entries dropped.
 */
uint32_t mib_attach_recording(const struct mib_view *view, struct rec_table *rec);

/** @brief Drop from @p rec every OID that @p above (a table of higher precedence) serves. @return How many.
 */
uint32_t mib_attach_below(struct rec_table *rec, const struct rec_table *above);

/* mib_values.c */

/** @brief Objects served, in any order; @p count set to their number. */
struct mib_object *mib_objects(uint32_t *count);

/** @brief Value of object @p o at @p row (1-based; 0 for scalars), computed at rq->now_ms. */
void mib_value(struct mib_req *rq, const struct mib_object *o, uint32_t row, struct spdu_value *value);

/** @return The object's MIB name ("ifAlias", ...), for messages and the SET mapping. */
const char *mib_object_name(const struct mib_object *o);

/**
 * @brief This device's SNMPv3 engine ID: RFC 3411 format 5 (octets), "fleet" and the device index.
 * The agent's USM and the snmpEngineID object both use it.
 * @param[out] id At least 14 bytes. @return Its length.
 */
size_t mib_engine_id(const struct device *dev, uint8_t *id);

#endif
