/*
 * fleetsim-stress merge: the manifests of runs made at once (several client
 * hosts, or several processes on one) joined into one manifest of the same
 * shape, so that report and the scripts that read one manifest read it
 * unchanged. The merge walks the parsed documents member by member and
 * picks a rule by the member's name (merge.c's table): counts added,
 * histograms added bucket by bucket, percentiles and rates recomputed over
 * the common wall-clock window, per-second series aligned by each run's
 * start, parameters kept or listed.
 */
#ifndef STRESS_MERGE_H
#define STRESS_MERGE_H

#include <stddef.h>
#include <stdio.h>

#include "merge_inventory.h"
#include "options.h"
#include "sbuf.h"

/**
 * @brief Merge @p n manifests into one, written to @p out.
 * @param[in] warn Where warnings go (a manifest without its window), or NULL.
 * @param[out] err On failure: what is wrong, naming the file.
 * @return 0, or -1 (not JSON, not a fleetsim-stress manifest, tools or modes differ, histograms of
 * different layouts, out of memory).
 */
int merge_manifests(const struct merge_input *in, size_t n, struct sbuf *out, FILE *warn, char *err,
                    size_t err_len);

/**
 * @brief fleetsim-stress merge RUN.json ... -o MERGED.json: read, merge, write, and print a line per input
 * and one for the total. @return 0, 2 for unreadable or unmergeable input, 1 when the output cannot be
 * written.
 */
int merge_run(const struct stress_options *opts);

#endif
