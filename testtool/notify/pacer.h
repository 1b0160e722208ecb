/*
 * The pacing arithmetic of a stream, on its own so it can be tested
 * exactly: tick k is due at origin + k * burst / rate, computed in integer
 * microseconds from the origin (the rate in thousandths per second), never
 * as "last tick + period", so no error accumulates; a pacer that fell more
 * than a given lag behind gives the missed ticks up and counts them.
 */
#ifndef FLEET_PACER_H
#define FLEET_PACER_H

#include <stdint.h>

#include "loop.h"

struct pacer {
    monotime_us origin_us; /* when tick 0 was due */
    uint64_t tick;         /* ticks done */
    uint64_t rate_milli;   /* sends per second, in thousandths (>= 1) */
    uint32_t burst;        /* sends per tick (>= 1) */
};

/** @brief Start at @p now_us with @p rate sends per second in ticks of @p burst. */
void pacer_init(struct pacer *p, monotime_us now_us, double rate, uint32_t burst);

/** @return When tick @p k is due. */
monotime_us pacer_due(const struct pacer *p, uint64_t k);

/**
 * @brief Give up the ticks more than @p max_lag_us overdue at @p now_us.
 * @return The sends given up (ticks times burst), 0 when not that far behind.
 */
uint64_t pacer_skip_lag(struct pacer *p, monotime_us now_us, uint64_t max_lag_us);

/** @brief Move the origin so that the next tick is due at @p now_us (after a pause: no catch-up burst). */
void pacer_resume(struct pacer *p, monotime_us now_us);

#endif
