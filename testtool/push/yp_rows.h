/*
 * The report's rows of a device's dynamic subscriptions (yp.h): one per live subscription and one per
 * ended one, what each sent, so that a client (`fleetsim-stress push`) reconciles what it received with
 * the device, subscription by subscription. A device keeps YP_ENDED_ROWS ended rows; later ones are summed.
 */
#ifndef FLEET_YP_ROWS_H
#define FLEET_YP_ROWS_H

#include <stdint.h>

#include "sbuf.h"
#include "yp.h"

/* Ended subscriptions a device keeps a row for (later ones are summed), as stream.c's STREAM_ENDED_ROWS. */
#define YP_ENDED_ROWS 16u

/* The report row of one subscription. */
struct yp_row {
    uint32_t id;             /* subscription id */
    uint32_t session;        /* session-id of its subscriber */
    uint8_t target;          /* enum yp_target */
    uint8_t update;          /* enum yp_update */
    uint32_t interval_cs;    /* period_cs (periodic) or dampening_cs (on-change); 0 for a stream */
    struct yp_counts counts; /* what it sent until it ended */
};

/* A device's ended subscriptions; allocated when its first one ends. */
struct yp_ended {
    struct yp_row rows[YP_ENDED_ROWS]; /* the first YP_ENDED_ROWS that ended, oldest first */
    uint32_t count;                    /* entries used in rows */
    uint32_t summed;                   /* subscriptions that ended after rows filled up */
    struct yp_counts sum;              /* their counts, summed */
};

/**
 * @brief @p sub ends (yp_end, kill, its session closing): keep its row on its device. Call before it is
 * freed, once per subscription, on the device's worker. Out of memory: the row is lost (logged nowhere
 * else), the subscription still ends.
 */
void yp_rows_ended(const struct yp_sub *sub);

/**
 * @brief Append the device's `"subscriptions":[...]` member (without a leading comma): its live
 * subscriptions, newest session first, then the ended rows; then `,"subscriptions_ended_summed":{...}`,
 * the counts of ended subscriptions without a row. Run on the device's worker (or after the workers
 * stopped).
 */
void yp_rows_json(const struct device *dev, struct sbuf *b);

/* The metrics' sums of a device's subscriptions (yp_rows_sum). */
enum yp_sum {
    YP_SUM_ACTIVE_STREAM,    /* live stream subscriptions */
    YP_SUM_ACTIVE_PERIODIC,  /* live periodic ones */
    YP_SUM_ACTIVE_ON_CHANGE, /* live on-change ones */
    YP_SUM_UPDATES,          /* push-update queued, ended subscriptions included */
    YP_SUM_CHANGE_UPDATES,   /* push-change-update queued */
    YP_SUM_EVENTS,           /* stream events queued */
    YP_SUM_MISSED_SLOTS,     /* periodic slots skipped */
    YP_SUM_SUSPENSIONS,      /* suspensions (insufficient-resources) */
    YP_SUMS
};

/** @brief Add the device's subscriptions, live and ended, into @p sums (YP_SUMS of them, enum yp_sum). Run
 * on the device's worker. */
void yp_rows_sum(const struct device *dev, uint64_t *sums);

/** @brief Free a device's ended rows; NULL is fine. */
void yp_rows_free(struct yp_ended *ended);

#endif
