/*
 * The workloads of fleetsim-stress. Each returns the process exit
 * code: 0 when every request was answered, 1 when the run failed (a
 * connection lost, a timeout, unanswered requests), 2 for a setup problem,
 * 130 or 143 when SIGINT or SIGTERM ended it (after its summary and
 * manifest, as at a normal end).
 */
#ifndef STRESS_RUN_H
#define STRESS_RUN_H

#include <stdint.h>

#include "conn.h"
#include "loop.h"
#include "options.h"
#include "sbuf.h"

/* Without a terminal on stderr, a progress line is printed this often. */
#define RUN_PROGRESS_LINE_US (10u * 1000000u)

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

/**
 * @brief YANG-Push subscriber (push_run.c): establish-subscription (periodic, on-change or to a stream) on
 * every device, count and time what arrives, optionally edit a watched leaf (--change-rate) and reconcile
 * with the fleet's report (--fleet-report). Returns 1 when a device failed (connect, hello, subscription
 * refused, terminated, lost), periods were missed or duplicated, edits went unmatched, the reconciliation
 * found a difference, or the run did not end as asked.
 */
int push_run(const struct stress_options *opts);

/** @brief Sent against received: the simulator's report joined with notify's manifest (reconcile.c). */
int recon_run(const struct stress_options *opts);

/**
 * @brief A controller connecting to a fleet, watched through RESTCONF (controller_mount.c): polls
 * topology-netconf every --interval and reports the nodes connected, connecting and failed over time.
 * Returns 0 when all --device-count nodes were connected before --timeout, 1 when not (or a file could
 * not be written), 2 when the CSV file or HTTP client cannot be set up, 130 or 143 when interrupted.
 */
int cmount_run(const struct stress_options *opts);

/**
 * @brief RESTCONF edits through a controller, as OpenDaylight's REST perf client (restconf_run.c).
 * Returns 0 when every request was answered (whatever the status: other statuses are counted), 1 when a
 * transfer failed (refused, closed, no answer), --timeout passed or the manifest could not be written, 2
 * when the content or libcurl cannot be set up, 130 or 143 when interrupted.
 */
int restconf_run(const struct stress_options *opts);

/**
 * @brief A collector's ingest ceiling (ceiling_run.c): drives a fleet's per-device rate through its control
 * API, reads the collector's probes, and applies the three-point method (ceiling_method.h). Returns 0 when
 * the asked quantity was measured and every verdict passed, 1 when it could not be measured or a check
 * failed (loss isolation, ordering, silence), 2 when the fleet or a probe cannot be set up, 130 or 143 when
 * interrupted (the cells so far and the manifest written).
 */
int ceiling_run(const struct stress_options *opts);

/** @brief Address and port of device @p device under the options' addressing. */
void run_target(const struct stress_options *opts, uint32_t device, uint32_t *addr, uint16_t *port);

/** @brief Device @p device's "ADDR:PORT" ("192.0.2.1:830", "[fd00::1]:830") into @p buf. @return @p buf. */
char *run_target_text(const struct stress_options *opts, uint32_t device, char *buf, size_t len);

/**
 * @brief Prepare @p c for conn_start() to device @p device as the options ask (message timeout, framing,
 * @p preamble of @p preamble_len bytes, not owned) and give the device's address and port.
 */
void run_conn_prepare(const struct stress_options *opts, struct conn *c, uint32_t device,
                      const char *preamble, size_t preamble_len, uint32_t *addr, uint16_t *port);

/**
 * @brief Read a whole file (the edit content, the preamble).
 * @return Malloc'd NUL-terminated content, or NULL with a message printed on stderr.
 */
char *run_read_file(const char *path, size_t *len);

/**
 * @brief The bytes sent before the hello: the --tcp-preamble file, or the --tcp-header text as
 * OpenDaylight's stress client sends it (its double quotes removed, trimmed of blanks and control
 * characters at both ends, then a newline).
 * @param[out] out Malloc'd bytes, NULL when neither option was given.
 * @param[out] len Their length.
 * @return 0, or -1 with a message printed on stderr.
 */
int run_preamble(const struct stress_options *opts, char **out, size_t *len);

/**
 * @brief Read --scenario (if given) once: its SHA-256 and seed, for every manifest.
 * @return 0, or -1 with a message printed on stderr (unreadable, or not a scenario's JSON).
 */
int run_scenario_read(const struct stress_options *opts);

/**
 * @brief Add `"scenario":{"file","sha256","seed"}` (or null without --scenario) to the manifest @p b, a
 * complete JSON object: the member goes before its closing brace.
 */
void run_manifest_scenario(struct sbuf *b);

/**
 * @brief Write the manifest @p b (a complete JSON object) to @p path, with the run's wall-clock window
 * added at its top level: `"started_unix_s"` and `"ended_unix_s"`, seconds since the epoch of the
 * monotonic instants @p start_us and @p end_us that bound its elapsed_s, so that the manifests of runs
 * made at once on several hosts line up (fleetsim-stress merge).
 * @return 0, or -1 with errno set.
 */
int run_manifest_write(const char *path, struct sbuf *b, monotime_us start_us, monotime_us end_us);

/** @brief Write the `"scenario":...` member alone (no comma), for a manifest that places it itself. */
void run_manifest_scenario_member(struct sbuf *b);

/** @brief Raise the descriptor limit to the hard limit; @return the limit. */
int run_raise_fd_limit(void);

/**
 * @brief Catch SIGINT and SIGTERM for the run: the first one is recorded and stops @p loop (NULL: only
 * recorded, for a run without a loop, whose sleeps and transfers the signal cuts short), and puts back the
 * default action of both, so a second one ends the process at once.
 */
void run_signals_catch(struct loop *loop);

/** @return The signal (SIGINT, SIGTERM) that interrupted the run, 0 while none did. */
int run_interrupted(void);

/** @return "SIGINT" or "SIGTERM" when the run was interrupted, else NULL. */
const char *run_interrupted_name(void);

/**
 * @brief End of the run: put back the actions run_signals_catch() replaced.
 * @return 128 + the signal when one interrupted the run (130 SIGINT, 143 SIGTERM), else @p rc.
 */
int run_signals_release(int rc);

/**
 * @brief Sleep until @p until_us on the monotonic clock, or until SIGINT or SIGTERM asks the run to stop
 * (for a run without a loop: run_signals_catch(NULL)).
 */
void run_sleep_until(monotime_us until_us);

/** @return 1 when progress goes out as lines every RUN_PROGRESS_LINE_US (stderr is not a terminal). */
int run_progress_lines(void);

/**
 * @brief Print one progress line on stderr: "t 10.0 s: " (seconds since @p origin_us), then @p fmt.
 */
void run_progress_line(monotime_us origin_us, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
