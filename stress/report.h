/*
 * "fleetsim-stress report RUN.json [RUN.json ...] -o FILE": one self-contained HTML page of the
 * manifests the runs wrote with --json (Chart.js from Debian inlined, the data inside, no network).
 */
#ifndef STRESS_REPORT_H
#define STRESS_REPORT_H

#include "options.h"
#include "sbuf.h"

struct jsonr_value;

/* Manifest "version"s read: the same MAJOR.MINOR as this program's (before 1.0 the minor is the format). */
#define REPORT_VERSION_WORDS 2

/* ceiling: cells kept (a search to 5 % from 1/s to 100000/s runs about 40; more is a runaway run). */
#define REPORT_CELLS_MAX 200
/* ceiling: samples kept per cell, and settle samples, evenly thinned (a 15 min window at 5 s is 180;
 * a chart does not show more than a few thousand points per line anyway). */
#define REPORT_SAMPLES_MAX 2000

/**
 * @brief Write the report of opts->report_inputs to opts->out_dir (a temporary file, then renamed).
 * @return 0, 2 when a manifest is unreadable, truncated, of an unknown version or not fleetsim-stress's
 * (one line on stderr naming the file; nothing written), 1 when the page cannot be written.
 */
int report_run(const struct stress_options *opts);

/**
 * @brief Check one parsed manifest: tool "fleetsim-stress", a version this program reads, a known mode, and
 * what that mode's page reads (ceiling: "measured_quantity", a "result" object, "cells" an array of objects
 * whose "samples" and "settle" are arrays of objects; the others: "parameters" and "results").
 * @param[out] why What is wrong, for "FILE: why".
 * @return 0, or -1.
 */
int report_check(const struct jsonr_value *m, char *why, size_t why_len);

/**
 * @brief Append the page's data of one manifest as a JSON object: the members the charts read
 * (long lists cut, notify's devices as columns; ceiling: at most REPORT_CELLS_MAX cells, each cell's
 * samples thinned evenly to REPORT_SAMPLES_MAX, with "cells_total" and "samples_total" saying how many there
 * were), every "<" escaped so it cannot end the script element. @p m must have passed report_check().
 */
void report_run_data(struct sbuf *b, const struct jsonr_value *m, const char *file, const char *label);

#endif
