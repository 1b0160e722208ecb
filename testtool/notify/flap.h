/*
 * Interface flaps (--flap-rate R, per device per second, a Poisson process
 * drawn from the device's seed): each event takes a link down, or the one
 * it took down back up. The oper status changes in both views (devview.c),
 * subscribers get fleetsim-if-events:if-state-change, and every trap sink
 * gets IF-MIB linkDown or linkUp (or an inform) from the device's address.
 */
#ifndef FLEET_FLAP_H
#define FLEET_FLAP_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct device;
struct fleet;

/* Most trap sinks (--trap-sink) one fleet takes. */
#define FLAP_MAX_SINKS 8

/**
 * @brief Create each worker's trap sender (when sinks are configured) and arm every device's first
 * flap (when --flap-rate is set). Call before the workers start.
 */
enum fleet_err flap_start_all(struct fleet *fleet, char *err, size_t err_len);

/**
 * @brief One flap transition, the --flap-rate flaps' and the control API's: interface @p pos of @p dev
 * has its link taken down (@p up 0) or back up at @p now_ms; subscribers get if-state-change and every
 * trap sink linkDown or linkUp. Runs on the device's worker.
 * @return 0, or -1 when memory ran out (nothing changed, nothing sent).
 */
int flap_link(struct device *dev, uint32_t pos, int up, uint64_t now_ms);

/** @brief Disarm the flaps and free the trap senders (after the workers stopped). */
void flap_close_all(struct fleet *fleet);

#endif
