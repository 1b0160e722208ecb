/*
 * The live view: --metrics serves the fleet's counters in Prometheus text
 * format over HTTP (libmicrohttpd), and the status line (status.h) prints a
 * summary of the same counters. Devices belong to their workers, so every
 * read asks each worker, through its inbox, to sum its own devices into a
 * snapshot; the caller waits (bounded) for all of them and formats.
 */
#ifndef FLEET_METRICS_H
#define FLEET_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "metrics_count.h"
#include "metrics_gather.h"

struct fleet;
struct sbuf;
struct worker;

/**
 * @brief Format @p snap in Prometheus text format (version 0.0.4), appended to @p out.
 * @param[in] rows 1: the per-device families too.
 */
void metrics_format(const struct fleet *fleet, const struct metrics_snapshot *snap, int rows,
                    struct sbuf *out);

/**
 * @brief Start the HTTP server when cfg.metrics_addr is set ("PORT", ":PORT" or "ADDR:PORT", ADDR an
 * IPv4 address, 127.0.0.1 when left out). Call after fleet_start(): scrapes ask the workers.
 * @return 0, or -1 with a message in @p err (bad address, port taken).
 */
int metrics_start(struct fleet *fleet, char *err, size_t err_len);

/** @brief Stop the HTTP server, if any; call before fleet_stop(). Safe to call twice. */
void metrics_stop(struct fleet *fleet);

#endif
