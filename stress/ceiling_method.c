/*
 * The collector ceiling method as pure functions over sample series: the
 * queue-depth line fit, a cell's verdict (incomplete, discarded for drift,
 * lossy, positive, flat), the search over per-device rates, the drain fit
 * that gives a service rate, loss isolation, the identity and the silence
 * check. Nothing here reads a clock, a socket or a global: ceiling_run.c
 * feeds it what the fleet and the probes said, and the unit tests feed it
 * synthetic series.
 */
#include "ceiling_method.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A cell needs this many load samples before a line through them means anything. */
#define CEIL_MIN_CELL_SAMPLES 3
/* Readings under load a cell needs before it may be cut short: a probe that lags by its collector's stats
 * interval makes a fit of three readings swing by that interval's traffic per sample. */
#define CEIL_EARLY_MIN_POINTS 5

/* The drain fit keeps samples while the backlog is above this share of its value at the stop: near the
 * end a nearly empty queue drains slower than the service rate (batches no longer fill). */
#define CEIL_DRAIN_KEEP_SHARE 0.10

/* The backlog counts as gone once it is at most this share of its value at the stop. */
#define CEIL_DRAIN_GONE_SHARE 0.01

void
ceil_rules_default(struct ceil_rules *r)
{
    r->slope_share = 0.01;
    r->slope_floor = 0.5;
    r->drift = 0.05;
    r->tolerance = 0.005;
    r->identity_tolerance = 0.15;
    r->precision = 0.05;
    r->early_factor = 4;
    r->early_min_share = 0.33;
}

void
ceil_fit_line(const double *x, const double *y, size_t n, struct ceil_fit *out)
{
    double mx = 0, my = 0, sxx = 0, sxy = 0;
    size_t k = 0;

    /* Means first, then centred sums: the raw-sum formula loses digits on counters in the millions. */
    for (size_t i = 0; i < n; i++) {
        if (isfinite(x[i]) && isfinite(y[i])) {
            mx += x[i];
            my += y[i];
            k++;
        }
    }
    out->points = k;
    out->slope = 0;
    out->intercept = 0;
    if (k == 0) {
        return;
    }
    mx /= (double)k;
    my /= (double)k;
    for (size_t i = 0; i < n; i++) {
        if (isfinite(x[i]) && isfinite(y[i])) {
            sxx += (x[i] - mx) * (x[i] - mx);
            sxy += (x[i] - mx) * (y[i] - my);
        }
    }
    if (k >= 2 && sxx > 0) {
        out->slope = sxy / sxx;
    }
    out->intercept = my - out->slope * mx;
}

double
ceil_queue_depth(const struct ceil_sample *s0, const struct ceil_sample *s)
{
    double persisted = s->persisted - s0->persisted;

    if (isfinite(s->queue)) {
        return s->queue;
    }
    if (isfinite(s->arrived) && isfinite(s0->arrived) && isfinite(persisted)) {
        return (s->arrived - s0->arrived) - persisted;
    }
    if (isfinite(s->sent) && isfinite(s0->sent) && isfinite(persisted)) {
        return (s->sent - s0->sent) - persisted;
    }
    return NAN;
}

const char *
ceil_verdict_name(enum ceil_verdict v)
{
    switch (v) {
    case CEIL_FLAT:
        return "flat";
    case CEIL_POSITIVE:
        return "positive";
    case CEIL_LOSSY:
        return "lossy";
    case CEIL_DISCARDED:
        return "discarded";
    case CEIL_INCOMPLETE:
        return "incomplete";
    }
    return "unknown";
}

/* @return b - a when both are finite, else NAN. */
static double
ceil_diff(double a, double b)
{
    return isfinite(a) && isfinite(b) ? b - a : NAN;
}

static double
ceil_threshold(const struct ceil_cell_input *in, const struct ceil_rules *r)
{
    double t = r->slope_share * in->per_device_rate * (double)in->devices;

    return t > r->slope_floor ? t : r->slope_floor;
}

/* Fit the depth series of in->load over the samples with t_s >= @p from_t. */
static void
ceil_fit_depth(const struct ceil_cell_input *in, double from_t, struct ceil_fit *out, double *peak)
{
    double *x = malloc((in->load_count ? in->load_count : 1) * sizeof *x);
    double *y = malloc((in->load_count ? in->load_count : 1) * sizeof *y);
    size_t k = 0;

    if (peak) {
        *peak = NAN;
    }
    if (!x || !y) {
        /* Out of memory: a fit of no points (slope 0, points 0) the caller can see. */
        memset(out, 0, sizeof *out);
        goto cleanup;
    }
    for (size_t i = 0; i < in->load_count; i++) {
        double d = ceil_queue_depth(&in->load[0], &in->load[i]);

        if (in->load[i].t_s < from_t) {
            continue;
        }
        x[k] = in->load[i].t_s;
        y[k] = d;
        k++;
        if (peak && isfinite(d) && !(*peak >= d)) {
            *peak = d;
        }
    }
    ceil_fit_line(x, y, k, out);
cleanup:
    free(x);
    free(y);
}

/* Where a cell's slope fit starts: its second reading (the first is taken before the load starts). */
static double
ceil_fit_start(const struct ceil_cell_input *in)
{
    return in->load_count > 1 ? in->load[1].t_s : -INFINITY;
}

void
ceil_cell_judge(const struct ceil_cell_input *in, const struct ceil_rules *r, struct ceil_cell_result *out)
{
    const struct ceil_sample *first, *last, *end;
    double elapsed, level = in->per_device_rate;

    memset(out, 0, sizeof *out);
    out->offered_rate = level * (double)in->devices;
    out->threshold = ceil_threshold(in, r);
    out->observed_per_device_rate = NAN;
    out->sent = out->arrived = out->persisted = out->dropped = NAN;
    out->loss_in = out->loss_inside = out->persisted_rate = out->peak_depth = NAN;
    if (in->load_count == 0) {
        out->verdict = CEIL_INCOMPLETE;
        snprintf(out->why, sizeof out->why, "no load samples");
        return;
    }
    first = &in->load[0];
    last = &in->load[in->load_count - 1];
    end = in->settled ? in->settled : last;
    elapsed = last->t_s - first->t_s;

    /* The numbers, whatever the verdict: the manifest keeps them for every cell. */
    /* The fit starts at the first reading under load: the step from the empty queue before the load to
     * the messages in flight (offered rate x the collector's latency) is an offset, not growth. */
    ceil_fit_depth(in, ceil_fit_start(in), &out->slope_all, &out->peak_depth);
    ceil_fit_depth(in, first->t_s + elapsed / 2, &out->slope_last_half, NULL);
    if (elapsed > 0 && in->devices > 0) {
        out->observed_per_device_rate = ceil_diff(first->sent, last->sent) / elapsed / (double)in->devices;
    }
    out->sent = ceil_diff(first->sent, end->sent);
    out->arrived = ceil_diff(first->arrived, end->arrived);
    out->persisted = ceil_diff(first->persisted, end->persisted);
    out->dropped = ceil_diff(first->dropped, end->dropped);
    if (isfinite(out->arrived) && out->sent > 0) {
        out->loss_in = (out->sent - out->arrived) / out->sent;
    }
    if (in->settled) {
        if (isfinite(out->arrived)) {
            out->loss_inside = out->arrived > 0 ? (out->arrived - out->persisted) / out->arrived : NAN;
        } else {
            out->loss_inside = out->sent > 0 ? (out->sent - out->persisted) / out->sent : NAN;
        }
    }
    if (elapsed > 0) {
        out->persisted_rate = ceil_diff(first->persisted, last->persisted) / elapsed;
    }

    /* The verdict, in the header's order. */
    if (in->interrupted) {
        out->verdict = CEIL_INCOMPLETE;
        snprintf(out->why, sizeof out->why, "interrupted after %.1f s of its %.1f s window", elapsed,
                 in->window_s);
    } else if (in->load_count < CEIL_MIN_CELL_SAMPLES) {
        out->verdict = CEIL_INCOMPLETE;
        snprintf(out->why, sizeof out->why, "only %zu load samples (%d needed for a slope)", in->load_count,
                 CEIL_MIN_CELL_SAMPLES);
    } else if (out->slope_all.points < CEIL_MIN_CELL_SAMPLES) {
        /* Without depth readings a queue is not bounded, only unseen: no verdict rather than a false flat. */
        out->verdict = CEIL_INCOMPLETE;
        snprintf(out->why, sizeof out->why, "only %zu queue depth readings of %zu samples (%d needed)",
                 out->slope_all.points, in->load_count, CEIL_MIN_CELL_SAMPLES);
    } else if (!in->cut_short && in->window_s > 0 &&
               elapsed + elapsed / (double)(in->load_count - 1) < in->window_s) {
        /* More than one sample interval short of the window: the rate did not hold for all of it. */
        out->verdict = CEIL_INCOMPLETE;
        snprintf(out->why, sizeof out->why, "ran %.1f s of its %.1f s window", elapsed, in->window_s);
    } else if (level > 0 && isfinite(out->observed_per_device_rate) &&
               fabs(out->observed_per_device_rate / level - 1) > r->drift) {
        out->verdict = CEIL_DISCARDED;
        snprintf(out->why, sizeof out->why, "observed %.4g/s per device, %.0f%% off %.4g/s (drift %.0f%%)",
                 out->observed_per_device_rate, 100 * fabs(out->observed_per_device_rate / level - 1), level,
                 100 * r->drift);
    } else if (out->loss_in > r->tolerance) {
        out->verdict = CEIL_LOSSY;
        snprintf(out->why, sizeof out->why, "lost %.1f%% between sent and arrived (tolerance %.1f%%)",
                 100 * out->loss_in, 100 * r->tolerance);
    } else if (out->dropped > 0) {
        out->verdict = CEIL_LOSSY;
        snprintf(out->why, sizeof out->why, "drop counters moved by %.0f (loss inside the collector)",
                 out->dropped);
    } else if (in->cut_short) {
        out->verdict = CEIL_POSITIVE;
        snprintf(out->why, sizeof out->why,
                 "cut short at %.1f s of %.1f s: queue %+.1f/s, over %.0f x threshold %.1f/s", elapsed,
                 in->window_s, out->slope_all.slope, r->early_factor, out->threshold);
    } else {
        int positive = out->slope_all.slope > out->threshold && out->slope_last_half.slope > out->threshold;

        out->verdict = positive ? CEIL_POSITIVE : CEIL_FLAT;
        snprintf(out->why, sizeof out->why,
                 "queue %+.1f/s over the window, %+.1f/s over its second half, threshold %.1f/s",
                 out->slope_all.slope, out->slope_last_half.slope, out->threshold);
    }
}

void
ceil_cell_slope_so_far(const struct ceil_cell_input *in, struct ceil_fit *out)
{
    ceil_fit_depth(in, ceil_fit_start(in), out, NULL);
}

int
ceil_cell_early(const struct ceil_cell_input *in, const struct ceil_rules *r)
{
    struct ceil_fit fit;
    double elapsed;

    if (in->load_count < CEIL_MIN_CELL_SAMPLES) {
        return 0;
    }
    elapsed = in->load[in->load_count - 1].t_s - in->load[0].t_s;
    if (!(elapsed >= r->early_min_share * in->window_s)) {
        return 0;
    }
    ceil_cell_slope_so_far(in, &fit);
    return fit.points >= CEIL_EARLY_MIN_POINTS && fit.slope > r->early_factor * ceil_threshold(in, r);
}

void
ceil_search_init(struct ceil_search *s, double from, double to, double precision)
{
    memset(s, 0, sizeof *s);
    s->from = from;
    s->to = to >= from ? to : from;
    s->precision = precision;
    s->next = from;
    s->done = !(from > 0);
    if (s->done) {
        s->no_answer = 1;
        snprintf(s->why_done, sizeof s->why_done, "no search: the first level %g is not positive", from);
    }
}

int
ceil_search_next(const struct ceil_search *s, double *level)
{
    if (s->done) {
        return 0;
    }
    *level = s->next;
    return 1;
}

static void
ceil_search_finish(struct ceil_search *s, int no_answer)
{
    s->done = 1;
    s->no_answer = no_answer;
}

void
ceil_search_record(struct ceil_search *s, double level, enum ceil_verdict v)
{
    if (s->done) {
        return;
    }
    s->cells++;
    switch (v) {
    case CEIL_INCOMPLETE:
        /* What was found so far stands as found, but the search did not converge. */
        ceil_search_finish(s, 0);
        snprintf(s->why_done, sizeof s->why_done,
                 "the cell at %.4g/s per device did not complete (interrupted); highest flat so far %.4g/s",
                 level, s->lo);
        return;
    case CEIL_DISCARDED:
        if (++s->discards >= 2) {
            ceil_search_finish(s, 1);
            snprintf(s->why_done, sizeof s->why_done,
                     "the cell at %.4g/s per device was discarded twice in a row (the fleet did not hold the "
                     "rate): no answer",
                     level);
            return;
        }
        s->next = level; /* the same level once more */
        return;
    case CEIL_FLAT:
        s->discards = 0;
        if (level > s->lo) {
            s->lo = level;
        }
        break;
    case CEIL_POSITIVE:
    case CEIL_LOSSY:
        s->discards = 0;
        if (s->hi == 0 || level < s->hi) {
            s->hi = level;
        }
        break;
    }

    if (s->hi == 0) {
        /* Going up: every cell so far held flat. */
        if (level >= s->to) {
            ceil_search_finish(s, 0);
            snprintf(s->why_done, sizeof s->why_done,
                     "the highest level tried, %.4g/s per device, held flat: the ceiling is at least that",
                     s->to);
            return;
        }
        s->next = level * 2 < s->to ? level * 2 : s->to;
    } else if (s->lo == 0) {
        /* Going down: no cell has held flat yet. */
        s->next = level / 2;
        if (s->next < s->from * CEIL_SEARCH_FLOOR_SHARE) {
            ceil_search_finish(s, 1);
            snprintf(s->why_done, sizeof s->why_done,
                     "no level held flat down to %.4g/s per device: no answer", level);
        }
    } else if (s->lo >= s->hi || s->hi - s->lo <= s->precision * s->lo || (s->lo + s->hi) / 2 <= s->lo ||
               (s->lo + s->hi) / 2 >= s->hi) {
        /* lo >= hi only for a collector that is flat above a level it was not flat at, and no midpoint
         * between them only for a precision of 0: stop there either way. */
        ceil_search_finish(s, 0);
        snprintf(s->why_done, sizeof s->why_done,
                 "flat at %.4g/s per device, above the ceiling at %.4g/s (within %.1f%%)", s->lo, s->hi,
                 100 * s->precision);
    } else {
        s->next = (s->lo + s->hi) / 2;
    }
}

double
ceil_search_answer(const struct ceil_search *s)
{
    return s->no_answer ? 0 : s->lo;
}

void
ceil_drain_fit(const struct ceil_sample *samples, size_t n, double t_stop, double min_backlog,
               struct ceil_drain *out)
{
    double *x = NULL, *y = NULL;
    double at_stop;
    size_t k = 0, from = n;
    struct ceil_fit fit;

    memset(out, 0, sizeof *out);
    out->peak_depth = NAN;
    for (size_t i = 0; i < n; i++) {
        if (samples[i].t_s >= t_stop) {
            from = i;
            break;
        }
    }
    if (from == n) {
        snprintf(out->why, sizeof out->why, "no sample at or after the stop (%.1f s)", t_stop);
        goto cleanup;
    }
    at_stop = ceil_queue_depth(&samples[0], &samples[from]);
    out->peak_depth = at_stop;
    if (!isfinite(at_stop) || at_stop < min_backlog) {
        snprintf(out->why, sizeof out->why, "no backlog built: %.0f messages at the stop, %.0f needed",
                 at_stop, min_backlog);
        goto cleanup;
    }

    /* drain_s: until the backlog was gone, or the last sample when it never was. */
    out->drain_s = samples[n - 1].t_s - t_stop;
    for (size_t i = from; i < n; i++) {
        if (ceil_queue_depth(&samples[0], &samples[i]) <= CEIL_DRAIN_GONE_SHARE * at_stop) {
            out->drain_s = samples[i].t_s - t_stop;
            break;
        }
    }

    x = malloc((n - from) * sizeof *x);
    y = malloc((n - from) * sizeof *y);
    if (!x || !y) {
        snprintf(out->why, sizeof out->why, "out of memory");
        goto cleanup;
    }
    for (size_t i = from; i < n; i++) {
        if (!(ceil_queue_depth(&samples[0], &samples[i]) > CEIL_DRAIN_KEEP_SHARE * at_stop)) {
            break;
        }
        x[k] = samples[i].t_s;
        y[k] = samples[i].persisted;
        k++;
    }
    ceil_fit_line(x, y, k, &fit);
    out->points = fit.points;
    if (fit.points < 3) {
        snprintf(out->why, sizeof out->why,
                 "only %zu samples with a persisted reading in the drain (3 needed)", fit.points);
        goto cleanup;
    }
    out->rate = fit.slope > 0 ? fit.slope : 0;
    if (out->rate == 0) {
        snprintf(out->why, sizeof out->why, "the persisted counter did not rise during the drain");
    }
cleanup:
    free(x);
    free(y);
}

void
ceil_loss_isolation(double sent, double persisted, double tolerance, struct ceil_loss_check *out)
{
    out->sent = sent;
    out->persisted = persisted;
    out->share = sent > 0 && isfinite(persisted) ? fabs(sent - persisted) / sent : NAN;
    out->within_tolerance = out->share <= tolerance;
}

static int
ceil_double_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

void
ceil_stats_of(const double *v, size_t n, struct ceil_stats *out)
{
    double *sorted = NULL;
    double sum = 0;

    out->count = 0;
    out->mean = out->p50 = out->min = out->max = NAN;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(v[i])) {
            continue;
        }
        sum += v[i];
        if (!out->count || v[i] < out->min) {
            out->min = v[i];
        }
        if (!out->count || v[i] > out->max) {
            out->max = v[i];
        }
        out->count++;
    }
    if (!out->count) {
        return;
    }
    out->mean = sum / (double)out->count;
    sorted = malloc(out->count * sizeof *sorted);
    if (!sorted) {
        return; /* p50 stays NAN: the caller sees it was not computed */
    }
    for (size_t i = 0, k = 0; i < n; i++) {
        if (isfinite(v[i])) {
            sorted[k++] = v[i];
        }
    }
    qsort(sorted, out->count, sizeof *sorted, ceil_double_cmp);
    /* Nearest rank: the ceil(count / 2)-th smallest, a value that was measured (no interpolation). */
    out->p50 = sorted[(out->count + 1) / 2 - 1];
    free(sorted);
}

int
ceil_identity_check(double per_unit, double service_ms, double workers, double measured, double tolerance,
                    struct ceil_identity *out)
{
    memset(out, 0, sizeof *out);
    out->predicted = out->error = NAN;
    out->measured = measured;
    if (isnan(workers)) {
        workers = 1;
    }
    if (!(per_unit > 0 && isfinite(per_unit)) || !(service_ms > 0 && isfinite(service_ms)) ||
        !(workers > 0 && isfinite(workers)) || !(measured > 0 && isfinite(measured))) {
        return -1;
    }
    out->predicted = per_unit / (service_ms / 1000.0) * workers;
    out->error = (out->predicted - measured) / measured;
    out->reproduces = fabs(out->error) <= tolerance;
    return 0;
}

int
ceil_silent(double sent_before, double sent_after, double allowed)
{
    double moved = sent_after - sent_before;

    return isfinite(moved) && fabs(moved) <= allowed;
}
