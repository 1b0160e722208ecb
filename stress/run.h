/*
 * The workloads of fleetsim-stress. Each returns the process exit
 * code: 0 when every request was answered, 1 when the run failed (a
 * connection lost, a timeout, unanswered requests), 2 for a setup problem.
 */
#ifndef STRESS_RUN_H
#define STRESS_RUN_H

#include <stdint.h>

#include "options.h"

/** @brief edit-config throughput. */
int edit_run(const struct stress_options *opts);

/** @brief Mount storm. */
int mount_run(const struct stress_options *opts);

/**
 * @brief SNMP collection: GETBULK walks of every device like a poller (snmp_run.c). Returns 1 when any
 * collection failed (timeout after retries, error-status, unusable response, v3 usmStats Report), 2 when the
 * plan (profile or --oids) or the sockets cannot be set up.
 */
int snmprun_run(const struct stress_options *opts);

/**
 * @brief Notification subscriber: create-subscription on every device, count what arrives (notify_run.c).
 * Returns 1 when a device failed (connect, hello, no notification capability, subscription refused, lost),
 * order problems were found (--seq-element), or the run did not end as asked.
 */
int notify_run(const struct stress_options *opts);

/** @brief Sent against received: the simulator's report joined with notify's manifest (reconcile.c). */
int recon_run(const struct stress_options *opts);

/**
 * @brief A controller connecting to a fleet, watched through RESTCONF (controller_mount.c): polls
 * topology-netconf every --interval and reports the nodes connected, connecting and failed over time.
 * Returns 0 when all --device-count nodes were connected before --timeout, 1 when not (or interrupted,
 * or a file could not be written), 2 when the CSV file or HTTP client cannot be set up.
 */
int cmount_run(const struct stress_options *opts);

/** @brief Address and port of device @p device under the options' addressing. */
void run_target(const struct stress_options *opts, uint32_t device, uint32_t *addr, uint16_t *port);

/**
 * @brief Read a whole file (the edit content, the preamble).
 * @return Malloc'd NUL-terminated content, or NULL with a message printed on stderr.
 */
char *run_read_file(const char *path, size_t *len);

/** @brief Raise the descriptor limit to the hard limit; @return the limit. */
int run_raise_fd_limit(void);

#endif
