/*
 * State that moves: the counters, gauges and timestamps of a device type's
 * state tree (a profile's state data or a recorded state.xml), found once at
 * load by their types' typedef ancestry, and set in each get's copy of the
 * tree from (device seed, leaf, instant). Interfaces of the state tree
 * (ietf-interfaces, openconfig-interfaces) become the type's interfaces, so
 * SNMP's IF-MIB and NETCONF show the same counters at one instant.
 */
#ifndef FLEET_MOVERS_H
#define FLEET_MOVERS_H

#include <stdint.h>

#include <libyang/libyang.h>

#include "device.h"
#include "dynamics.h"
#include "err.h"

/* What a moving leaf is. */
enum movers_kind {
    MOVERS_NONE = 0,      /* does not move */
    MOVERS_COUNTER = 1,   /* counter32/64, zero-based-counter32/64 and types derived from them */
    MOVERS_GAUGE = 2,     /* gauge32/64: near the recorded value */
    MOVERS_TIMESTAMP = 3, /* date-and-time, timeticks, timestamp, timeticks64 under an event's name */
    MOVERS_STATUS = 4,    /* an openconfig interface's state/oper-status: the device view's link state */
};

/* How fast a counter runs (its name is only a hint for this). */
enum movers_rate {
    MOVERS_RATE_OCTETS = 0,  /* names with "octets" or "bytes" */
    MOVERS_RATE_PACKETS = 1, /* "pkts", "packets" and everything else */
    MOVERS_RATE_ERRORS = 2,  /* "errors", "discards", "drops" */
    MOVERS_RATES = 3
};

/* One moving leaf as the tests see it. */
struct movers_info {
    uint32_t pos;          /* depth-first position in the state tree */
    enum movers_kind kind; /* counter, gauge or timestamp */
    enum movers_rate rate; /* rate class (counters) */
    int wide;              /* 1: 64-bit value, 0: 32-bit (wraps at 2^32) */
    int32_t if_pos;        /* an openconfig-interfaces counter: the interface's position, else -1 */
    uint64_t recorded;     /* the value in the state tree (numbers) */
};

/**
 * @brief Make the state tree's interfaces the type's interfaces: ietf-interfaces' interfaces-state or
 * interfaces (with statistics), else an openconfig-interfaces-like interfaces/interface/state/counters.
 * Name, type, speed, MTU, description and link state come from the recorded leaves. The recorded
 * ietf-interfaces nodes are dropped from the state tree (get generates them). Call after the state tree
 * is loaded and before the profile's interfaces are used (configuration, device view).
 * @return FLEET_OK (also when the tree has none), FLEET_ERR_NOMEM.
 */
enum fleet_err movers_adopt_interfaces(struct device_type *type, char *err, size_t err_len);

/**
 * @brief Find the moving leaves of @p type's state tree. Call after devview_type_init() (openconfig
 * counters are matched to interfaces by name).
 * @param[out] out The table (movers_free()), or NULL when nothing moves.
 * @return FLEET_OK, FLEET_ERR_NOMEM.
 */
enum fleet_err movers_build(const struct device_type *type, struct state_movers **out);

/**
 * @brief Set every moving leaf of @p tree, a copy (lyd_dup_siblings()) of the type's state tree, to its
 * value for device @p dev at @p now_ms. Deterministic: one instant gives one value.
 */
void movers_apply(const struct state_movers *m, const struct device *dev, struct lyd_node *tree,
                  uint64_t now_ms);

/* Room for any moving leaf's text: a 64-bit number or a date-and-time with milliseconds. */
#define MOVERS_TEXT_MAX 64

/* What movers_text() keeps between the leaves of one reply: the last interface's counters. */
struct movers_cursor {
    int32_t if_pos;                  /* interface whose counters are held, -1 for none */
    struct dyn_if_counters counters; /* its counters at the reply's instant */
};

/** @brief Start a reply's cursor. */
void movers_cursor_init(struct movers_cursor *cur);

/**
 * @brief The text of moving leaf @p i (< movers_count()) for device @p dev at @p now_ms, as
 * movers_apply() would set it. Leaves of one reply go through one @p cur, in depth-first order.
 */
void movers_text(const struct state_movers *m, uint32_t i, const struct device *dev, uint64_t now_ms,
                 struct movers_cursor *cur, char *buf, size_t len);

/** @return The number of moving leaves; 0 for NULL. */
uint32_t movers_count(const struct state_movers *m);

/** @brief Describe moving leaf @p i (< movers_count()). */
void movers_get(const struct state_movers *m, uint32_t i, struct movers_info *info);

/** @brief Free a table; NULL is fine. */
void movers_free(struct state_movers *m);

/**
 * @brief Whether state leaf (or leaf-list) @p node changes every instant, by its schema alone: its type
 * derives from a counter or a gauge, from timeticks or timestamp not named as an event's time (last-change,
 * discontinuity, boot...), or it is a clock (a date-and-time or timeticks64 named like "current-datetime").
 * Event times and configuration never move by themselves. For
 * YANG-Push's on-change check, which walks the schema a filter selects. Needs a context made with
 * LY_CTX_SET_PRIV_PARSED (schema.c's are).
 * @return 1 when it moves, 0 otherwise.
 */
int movers_schema_moves(const struct lysc_node *node);

#endif
