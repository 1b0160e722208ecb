/*
 * The walk of one SNMP collection, without sockets or clocks: which OIDs
 * the next GETBULK asks for, what a response adds (values and numeric
 * samples inside each walked subtree), when a column ends (an OID outside
 * its subtree, or endOfMibView), and the fit of collection time against
 * requests x response time that the report prints. fleetsim-stress snmp
 * drives it (snmp_run.c); unit tests drive it with hand-made PDUs.
 *
 * A collection walks "roots": table columns, whole tables or subtrees, or
 * scalars. Up to max_vars roots are walked together, one varbind each per
 * GETBULK; the window of roots being walked keeps only their cursors, so
 * an in-flight collection costs max_vars cursors however many roots it has.
 */
#ifndef STRESS_SNMP_WALK_H
#define STRESS_SNMP_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "ber.h"
#include "err.h"
#include "spdu.h"

/* What every collection walks; read-only once built, shared by every collection. */
struct walk_plan {
    struct ber_oid *roots;  /* subtrees to walk, in order; a value belongs to root r when r is its prefix */
    struct ber_oid *starts; /* OID the walk of each root starts after: the root, or for a root ending
                               in .0 (a scalar) its parent, so that the scalar itself is returned */
    uint32_t count;         /* entries in roots and starts */
    uint32_t max_vars;      /* roots walked together in one GETBULK, >= 1 */
};

/* One root in the window of a walk. */
struct walk_column {
    uint32_t root;         /* index in the plan's roots */
    struct ber_oid cursor; /* last OID received inside the root's subtree, or the root's start OID */
};

/* The state of one collection's walk; valid between walk_start() and walk_finished(). */
struct walk {
    const struct walk_plan *plan; /* what to walk */
    struct walk_column *cols;     /* window, plan->max_vars entries lent by the caller; first active used */
    uint32_t active;              /* roots being walked, in plan order; 0 when the walk is finished */
    uint32_t next_root;           /* first root not yet taken into the window */
    uint64_t values;              /* varbinds received inside a walked subtree */
    uint64_t samples;             /* those with a numeric value (INTEGER, Counter32, Gauge32, TimeTicks,
                                     Counter64) */
};

/**
 * @brief Build a plan from @p count OIDs (copied).
 * @return FLEET_OK, FLEET_ERR_INVAL when @p count or @p max_vars is 0 or an OID has fewer than 2
 * sub-identifiers, FLEET_ERR_NOMEM.
 */
enum fleet_err walk_plan_init(struct walk_plan *plan, const struct ber_oid *oids, uint32_t count,
                              uint32_t max_vars);

/** @brief Free what walk_plan_init() allocated; a zeroed plan is fine. */
void walk_plan_close(struct walk_plan *plan);

/**
 * @brief Start a walk of every root of @p plan.
 * @param[in] cols Window storage of plan->max_vars entries, owned by the caller, used until the walk ends.
 */
void walk_start(struct walk *w, const struct walk_plan *plan, struct walk_column *cols);

/** @return 1 when every root has been walked to its end. */
int walk_finished(const struct walk *w);

/**
 * @brief The OIDs the next GETBULK asks for, one per active root, in window order.
 * @param[out] names w->plan->max_vars entries; each points into the walk, valid until walk_response().
 * @return How many (w->active).
 */
uint32_t walk_request(const struct walk *w, const struct ber_oid **names);

/**
 * @brief Take in the response to the request walk_request() described. Varbind k answers window
 * column k mod n (n = the request's varbind count), repetition k / n. A column ends at the first
 * OID outside its root's subtree, at endOfMibView (or another exception); its later varbinds are
 * ignored. Ended columns leave the window and the next roots take their places.
 * @param[out] why On failure, a static description.
 * @return FLEET_OK; FLEET_ERR_PROTO for malformed varbinds, an OID inside the subtree that does not
 * increase (the agent would loop), or a response that neither advances nor ends any column.
 */
enum fleet_err walk_response(struct walk *w, const struct spdu_pdu *pdu, const char **why);

/** @return 1 when @p tag is one of the numeric types a sample is counted for. */
int walk_is_numeric(uint8_t tag);

/** @return 1 when @p root is a prefix of (or equal to) @p oid. */
int walk_in_subtree(const struct ber_oid *root, const struct ber_oid *oid);

/*
 * How well T = P x R + c describes collection times: T the collection time, P its requests, R one
 * response time for every request (the mean over all requests), c a constant fitted by least
 * squares with the slope held at 1. For comparison an ordinary least-squares line T = a (P x R) + b
 * is fitted too, when P x R varies at all.
 */
struct walk_fit {
    size_t n;              /* collections fitted */
    double r_us;           /* R, microseconds */
    double c_us;           /* c, microseconds: mean of T - P x R */
    double r_squared;      /* 1 - SS_res / SS_tot of T = P x R + c (0 when every P is equal: the model
                              then explains only the mean); valid when r_squared_valid */
    int r_squared_valid;   /* 0 when n < 2 or every T is equal */
    double mean_rel_error; /* mean of |T - (P x R + c)| / T over collections with T > 0 */
    double slope;          /* a of the free line; valid when line_valid */
    double intercept_us;   /* b of the free line, microseconds; valid when line_valid */
    double line_r_squared; /* R^2 of the free line; valid when line_valid and r_squared_valid */
    int line_valid;        /* 0 when n < 2 or every P x R is equal */
};

/**
 * @brief Fit T = P x R + c.
 * @param[in] t_us Collection times, microseconds.
 * @param[in] requests Requests of each collection (P).
 * @param[in] n Entries in both.
 * @param[in] r_us R, microseconds.
 * @param[out] fit The result; all zero when @p n is 0.
 */
void walk_fit_compute(const double *t_us, const uint32_t *requests, size_t n, double r_us,
                      struct walk_fit *fit);

#endif
