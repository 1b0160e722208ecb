/*
 * Background traps (--trap-rate, --trap-catalog; issue 29 item 3): each
 * device of a group with a rate sends notifications drawn from its
 * catalog, paced exactly (pacer.h, as the syslog channel paces lines), to
 * every --trap-sink through its worker's trap sender, counted in the
 * device's trap rows (the ledger). The rate is read through one function,
 * so a rate profile can take its place.
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
void trap_chan_close_all(struct fleet *fleet);

#endif
