/*
 * The simulator's side of every count (DESIGN.md decision 7): a JSON report
 * per device and per subscriber of notifications emitted, sent,
 * send_failures, dropped and suppressed, written at exit and on SIGUSR1.
 * `fleetsim-stress reconcile` joins it with what a client received.
 */
#ifndef FLEET_REPORT_H
#define FLEET_REPORT_H

#include "err.h"

struct fleet;
struct worker;
struct sbuf;

/* How long a running fleet's workers get to take their snapshot for a SIGUSR1 report. */
#define REPORT_SNAPSHOT_TIMEOUT_MS 5000

/**
 * @brief The report as JSON, appended to @p out (what report_write writes; GET /api/v1/report).
 * @param[in] running As for report_write.
 * @return FLEET_OK, FLEET_ERR_NOMEM, or FLEET_ERR_SYS when a worker did not take its snapshot in time.
 */
enum fleet_err report_json(struct fleet *fleet, int running, struct sbuf *out);

/**
 * @brief Write the report to @p path atomically (a temporary file renamed over it, so a reader never
 * sees half a report).
 * @param[in] running 1 while the workers run (each takes a snapshot of its own devices on its thread),
 * 0 after they stopped.
 */
enum fleet_err report_write(struct fleet *fleet, const char *path, int running);

#endif
