/*
 * --controller-ip: every device registered with a RESTCONF controller
 * (OpenDaylight's topology-netconf), in batches, from a thread of its own
 * once the fleet listens.
 */
#ifndef FLEET_REGISTER_H
#define FLEET_REGISTER_H

#include <stddef.h>
#include <stdint.h>

struct fleet;
struct fleet_config;
struct fleet_group_spec;

/* Attempts per batch when the controller answers with a status that may pass (5xx, 408, 429). */
#define REGISTER_ATTEMPTS 3
/* While nothing answers (refused, no route, timeout): the first pause, doubled after each attempt up to
 * the most. */
#define REGISTER_BACKOFF_FIRST_MS 500
#define REGISTER_BACKOFF_MAX_MS   30000
/* While nothing answers, a "still unreachable" line at most this often. */
#define REGISTER_UNREACHABLE_REPORT_MS 30000
/* --time-out's default: the bound on the whole registration, seconds (OpenDaylight testtool's). */
#define REGISTER_DEFAULT_TIMEOUT_S 20

/**
 * @brief Check the registration options (--controller-ip, --generate-config-address and the address
 * ranges) before anything listens. Nothing to check without --controller-ip.
 * @param[out] err On failure, a message naming the option.
 * @return 0, or -1 (the process should exit with 2).
 */
int controller_register_check(const struct fleet_config *cfg, char *err, size_t err_len);

/**
 * @brief Start registering every device when cfg.controller_ip is set; otherwise do nothing. Call once,
 * from the main thread, after the fleet listens and before any other thread uses libcurl. Registering
 * ends after every batch or at cfg.register_timeout_s (0: no bound). Outcomes are logged (each refused
 * attempt; an unreachable controller once, now and then while it lasts, and when it is back; then one
 * summary line); the fleet serves whatever the controller says.
 * @return 0, or -1 when the thread cannot start.
 */
int controller_register_start(struct fleet *fleet);

/**
 * @brief --register-only: register every device of @p groups (present or not) with cfg.controller_ip, in
 * batches, from the calling thread, and return when done or at cfg.register_timeout_s; nothing listens.
 * Logged as controller_register_start's registration is.
 * @return 0 when every device was registered, -1 otherwise.
 */
int controller_register_once(const struct fleet_config *cfg, const struct fleet_group_spec *groups,
                             uint32_t group_count);

/**
 * @brief Register devices @p first .. @p first + @p count - 1 (fleet indices, one group's run) that joined
 * the fleet (grow), after what is queued; from any thread. Nothing without --controller-ip.
 * @return 0, or -1 when out of memory (logged).
 */
int controller_register_devices(const struct fleet *fleet, uint32_t first, uint32_t count);

/**
 * @brief Stop registering (an exchange in flight is abandoned at once) and join the thread, if any.
 * Safe to call when nothing was started, and twice.
 */
void controller_register_stop(struct fleet *fleet);

#endif
