/*
 * Background traps (--trap-rate, --trap-catalog; issue 29 item 3): each
 * device whose rate profile (the group's, or a trap-rate action's) is not
 * zero sends notifications drawn from its catalog on the arrival schedule
 * every push channel uses (push_rate.h), to every --trap-sink through its
 * worker's trap sender, counted in the device's trap rows (the ledger,
 * one series per sink). The run window (push_window.h) holds them: before
 * START they are counted suppressed_pre_window, after END none is made.
 */
#ifndef FLEET_TRAP_CHAN_H
#define FLEET_TRAP_CHAN_H

#include <stddef.h>

#include "err.h"

struct fleet;
struct device;

/* Ticks a stalled device may fall behind before they are given up (and counted dropped). */
#define TRAP_CHAN_MAX_LAG_US 1000000u
/* Notifications one device sends per timer callback at most (bounded work per wakeup). */
#define TRAP_CHAN_MAX_PER_TICK 64u

/**
 * @brief Load the catalogs of the groups with a trap rate and start their devices' pacing. Call after
 * the trap senders exist (flap_start_all()); a fleet without trap sinks or rates does nothing.
 * @return FLEET_OK; FLEET_ERR_INVAL for a bad catalog (@p err names the file and the trap), FLEET_ERR_NOMEM.
 */
enum fleet_err trap_chan_start_all(struct fleet *fleet, char *err, size_t err_len);

/**
 * @brief Send the catalog notification @p id from @p dev now, to every trap sink.
 * @return 1 when the device's catalog has it and it was handed to the sender, else 0.
 */
int trap_chan_event(struct device *dev, const char *id);

/** @brief Stop every device's pacing and free the catalogs; before the trap senders are freed. */
/**
 * @brief The device's per-sink trap counters (struct trap_counters, one per --trap-sink), made on first
 * use with each row in its sink's ledger series. Every trap a device sends (events, flaps, the catalog)
 * counts in them. Runs on the device's worker.
 * @return The rows, or NULL when out of memory or the fleet has no trap sink.
 */
struct trap_counters *trap_chan_rows(struct device *dev);

/**
 * @brief The device's trap rate profile changed (the control API's trap-rate): schedule its background
 * traps from now on by the profile in force, nothing made up for the time at the old one. Runs on the
 * device's worker; nothing for a fleet without trap sinks.
 */
void trap_chan_rate_changed(struct device *dev);

void trap_chan_close_all(struct fleet *fleet);

#endif
