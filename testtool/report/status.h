/*
 * --status-interval: while the main thread waits for signals, it prints a
 * one-line summary of the fleet on stderr every N seconds, gathered like a
 * scrape (metrics.h), with the rates since the previous line.
 */
#ifndef FLEET_STATUS_H
#define FLEET_STATUS_H

#include <signal.h>
#include <stdint.h>

#include "loop.h"

struct fleet;

/* Where the status line stands; owned by the main thread. */
struct status_clock {
    uint32_t interval_s; /* seconds between lines, 0: no lines */
    monotime_us next_us; /* when the next line is due (monotonic clock) */
    monotime_us last_us; /* when the previous line (or the start) was */
    uint64_t last_rpcs;  /* rpc-replies counted at last_us */
    uint64_t last_snmp;  /* SNMP datagrams counted at last_us */
};

/** @brief Start the clock: the first line comes cfg.status_interval_s seconds from now. */
void status_init(struct status_clock *st, const struct fleet *fleet);

/**
 * @brief Wait for one of @p signals (blocked in every thread), printing the status line whenever one is due.
 * Call from the main thread only, after the workers started.
 * @return The signal taken.
 */
int status_wait_signal(struct status_clock *st, struct fleet *fleet, const sigset_t *signals);

#endif
