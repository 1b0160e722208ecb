/*
 * The fleet's life: build it from its plan (groups of devices of their
 * types), start the worker loops, stop them and take it all down again.
 * The structures are in device.h.
 */
#ifndef FLEET_FLEET_H
#define FLEET_FLEET_H

#include "device.h"

/**
 * @brief Check the plan, load each device type, open every listening socket. Nothing runs yet.
 * @param cfg The fleet-wide plan (threads, reports, controller, ...), and the one group's without
 * @p groups.
 * @param groups The groups (a fleet file's), in device order, or NULL for one group planned by @p cfg.
 * Their strings must outlive the fleet.
 * On failure @p err names the problem; the process should exit with 2.
 */
enum fleet_err fleet_init(struct fleet *fleet, const struct fleet_config *cfg,
                          const struct fleet_group_spec *groups, uint32_t group_count, char *err,
                          size_t err_len);

/** @brief Start the worker threads. */
enum fleet_err fleet_start(struct fleet *fleet);

/** @brief Stop the worker threads (sessions and counts stay for a last report). Safe to call twice. */
void fleet_stop(struct fleet *fleet);

/** @brief Stop the workers, close every session and free everything. Accepts a fleet that never started. */
void fleet_close(struct fleet *fleet);

#endif
