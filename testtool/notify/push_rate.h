/*
 * The rate of a device's push channel (notifications, syslog, traps): the
 * control API's per-device profile when it set one, else the group's, and
 * the device's arrival schedule started from it with the group's
 * --push-arrivals and a draw of its own (seed and index), so every channel
 * shapes its load the same way. The channels keep their schedules; this
 * only starts them.
 */
#ifndef FLEET_PUSH_RATE_H
#define FLEET_PUSH_RATE_H

#include <stdint.h>

#include "device.h"
#include "device_ctl.h"
#include "loop.h"
#include "rate_profile.h"

/**
 * @return The profile in force for channel @p r of @p dev: the control API's override, else
 * @p group_profile (the group's option, e.g. &dev->group->cfg.syslog_rate). Valid until the next rate
 * action on the device (which restarts the channel's schedule).
 */
const struct rate_profile *push_rate_profile(const struct device *dev, enum devctl_rate r,
                                             const struct rate_profile *group_profile);

/**
 * @brief (Re)start @p a, @p dev's schedule of channel @p r, at @p now_us with the profile in force.
 * @param[in] group_profile The group's profile of the channel (used without an override).
 * @param[in] unit Messages per arrival (a burst), >= 1.
 * @param[in] salt The channel's own salt: its phase and Poisson stream differ from the other channels'.
 * @param[in] first_at_origin Paced: 1 sends the first at once (a stream that starts), 0 spreads the
 * devices' phases evenly over one arrival (rate_phase_spread()).
 * Runs on the device's worker. The trap catalog calls it with DEVCTL_RATE_TRAP at start and whenever the
 * device's trap-rate action changes the profile.
 */
void push_rate_start(struct rate_arrivals *a, const struct device *dev, enum devctl_rate r,
                     const struct rate_profile *group_profile, uint32_t unit, uint64_t salt,
                     int first_at_origin, monotime_us now_us);

#endif
