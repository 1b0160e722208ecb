/*
 * --controller-ip: every device registered with a RESTCONF controller
 * (OpenDaylight's topology-netconf), in batches, from a thread of its own
 * once the fleet listens.
 */
#ifndef FLEET_REGISTER_H
#define FLEET_REGISTER_H

#include <stddef.h>

struct fleet;
struct fleet_config;

/* Attempts per batch before it is reported failed (refused connections, timeouts, 5xx, 408, 429). */
#define REGISTER_ATTEMPTS 3

/**
 * @brief Check the registration options (--controller-ip, --generate-config-address and the address
 * ranges) before anything listens. Nothing to check without --controller-ip.
 * @param[out] err On failure, a message naming the option.
 * @return 0, or -1 (the process should exit with 2).
 */
int controller_register_check(const struct fleet_config *cfg, char *err, size_t err_len);

/**
 * @brief Start registering every device when cfg.controller_ip is set; otherwise do nothing. Call once,
 * from the main thread, after the fleet listens and before any other thread uses libcurl. Outcomes are
 * logged (each failed attempt, then one summary line); the fleet serves whatever the controller says.
 * @return 0, or -1 when the thread cannot start.
 */
int controller_register_start(struct fleet *fleet);

/**
 * @brief Stop registering (an exchange in flight is abandoned at once) and join the thread, if any.
 * Safe to call when nothing was started, and twice.
 */
void controller_register_stop(struct fleet *fleet);

#endif
