/*
 * fleetsim-stress ceiling: the collector ceiling method as one command. It
 * drives a running fleet's per-device rate of one channel through the
 * control API (the device count fixed, the rate the one variable), reads
 * point 1 from the fleet's /metrics and points 2 and 3 (and the queue, the
 * drop counters, the identity's inputs) through the collector's probes, one
 * reading of everything every --sample, and leaves every judgement to
 * ceiling_method.c. Each cell is: the rate set, the window sampled, the rate
 * back to 0, the collector left to drain until its counters stop (so a cell
 * starts on an empty queue and its loss is counted once everything landed).
 * Order of --measure all: silence, service rate, search, loss isolation,
 * baseline again.
 */
#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ceiling_fleet.h"
#include "ceiling_method.h"
#include "ceiling_probe.h"
#include "json_read.h"
#include "loop.h"
#include "recon_push.h"
#include "run.h"
#include "sbuf.h"
#include "stats.h"
#include "ydata.h"

/* Consecutive failed readings of the fleet or of point 3 that end the run. */
#define CR_READ_FAILURES_MAX 3
/* Samples a cell may hold: --window / --sample is refused above it (options.c). */
#define CR_SAMPLES_MAX 100000u
/* Cells a run may hold (a search converges in far fewer). */
#define CR_CELLS_MAX 200u
/* The silence check lasts this many --sample periods, and at least CR_SILENCE_MIN_S. */
#define CR_SILENCE_SAMPLES 3
#define CR_SILENCE_MIN_S   5.0

/* What one reading gave beyond the method's sample. */
struct cr_extra {
    double drop[CEILING_DROPPED_MAX]; /* each drop counter, NAN when it failed */
    double service_ms;                /* --service-time, NAN when none */
    double batch;                     /* --batch-size */
    double workers;                   /* --workers */
};

/* A series of readings. */
struct cr_series {
    struct ceil_sample *s;
    struct cr_extra *x;
    size_t n, cap;
};

/* One cell as it ran. */
struct cr_cell {
    unsigned index;
    const char *phase; /* baseline, search, service-rate, loss-isolation, baseline-again */
    double level;      /* per-device rate */
    uint64_t started_ms;
    double elapsed_s;
    struct cr_series load, settle;
    struct ceil_cell_input in;
    struct ceil_cell_result res;
    struct ceil_drain drain; /* service-rate only */
    int judged;
};

struct cr_run {
    const struct stress_options *o;
    struct ceil_rules rules;
    struct ceil_fleet fleet;
    struct ceil_probe arrived, persisted, queue, dropped[CEILING_DROPPED_MAX], service, batch, workers;
    int has_arrived, has_queue, has_service, has_batch, has_workers;
    unsigned ndropped;
    struct cr_cell *cells[CR_CELLS_MAX];
    unsigned ncells;
    monotime_us start_us, end_us;
    uint64_t started_ms, ended_ms;
    unsigned failed_reads; /* consecutive */
    int broken;            /* 1: the fleet or point 3 stopped answering */
    char broken_why[300];
    /* silence */
    int silence_checked, silent;
    double silence_s, silence_before, silence_after;
    /* results */
    struct ceil_search search;
    int searched;
    struct cr_cell *service_cell, *loss_cell, *baseline_first, *baseline_last, *answer_cell;
    struct ceil_loss_check loss;
    int ordering_checked;
    struct recon_rows ordering;
    char ordering_error[300];
    struct ceil_identity identity;
    int identity_checked;
    const char *identity_against;
    struct ceil_stats service_stats, batch_stats;
    double workers_seen;
};

static uint64_t
wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)(ts.tv_nsec / 1000000);
}

static double
since_s(monotime_us from)
{
    return (double)(loop_clock_monotonic() - from) / 1e6;
}

/* ------------------------------------------------------------------ probes */

static int
probe_setup(struct ceil_probe *p, const char *name, const char *spec, double timeout_s, int *has)
{
    char err[300];

    if (!spec) {
        return 0;
    }
    if (ceil_probe_parse(name, spec, timeout_s, p, err, sizeof err)) {
        fprintf(stderr, "fleetsim-stress: --%s: %s\n", name, err);
        return -1;
    }
    *has = 1;
    return 0;
}

/* One read; NAN when it failed (the failure is counted by the probe and said once per change). */
static double
probe_value(struct ceil_probe *p)
{
    double v;

    if (ceil_probe_read(p, &v)) {
        if (!run_interrupted()) {
            fprintf(stderr, "fleetsim-stress: probe %s: %s\n", p->name, p->last_error);
        }
        return NAN;
    }
    return v;
}

static void
probes_free(struct cr_run *r)
{
    ceil_probe_free(&r->arrived);
    ceil_probe_free(&r->persisted);
    ceil_probe_free(&r->queue);
    for (unsigned i = 0; i < r->ndropped; i++) {
        ceil_probe_free(&r->dropped[i]);
    }
    ceil_probe_free(&r->service);
    ceil_probe_free(&r->batch);
    ceil_probe_free(&r->workers);
}

static int
probes_setup(struct cr_run *r)
{
    const struct stress_options *o = r->o;
    int has_persisted = 0, one = 0;

    if (probe_setup(&r->arrived, "arrived", o->probe_arrived, o->probe_timeout_s, &r->has_arrived) ||
        probe_setup(&r->persisted, "persisted", o->probe_persisted, o->probe_timeout_s, &has_persisted) ||
        probe_setup(&r->queue, "queue", o->probe_queue, o->probe_timeout_s, &r->has_queue) ||
        probe_setup(&r->service, "service-time", o->probe_service_time, o->probe_timeout_s,
                    &r->has_service) ||
        probe_setup(&r->batch, "batch-size", o->probe_batch_size, o->probe_timeout_s, &r->has_batch) ||
        probe_setup(&r->workers, "workers", o->probe_workers, o->probe_timeout_s, &r->has_workers)) {
        return -1;
    }
    for (uint32_t i = 0; i < o->dropped.count; i++) {
        const char *spec = o->dropped.paths[i], *eq = strchr(spec, '=');
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(eq - spec), spec);
        for (unsigned k = 0; k < r->ndropped; k++) {
            if (!strcmp(r->dropped[k].name, name)) {
                fprintf(stderr, "fleetsim-stress: --dropped %s is given twice\n", name);
                return -1;
            }
        }
        if (probe_setup(&r->dropped[r->ndropped], name, eq + 1, o->probe_timeout_s, &one)) {
            return -1;
        }
        r->ndropped++;
    }
    return 0;
}

/* Every probe answers once before the run starts, or the run does not start. */
static int
probes_check(struct cr_run *r)
{
    struct ceil_probe *all[7 + CEILING_DROPPED_MAX];
    unsigned n = 0;
    double v;

    all[n++] = &r->persisted;
    if (r->has_arrived) {
        all[n++] = &r->arrived;
    }
    if (r->has_queue) {
        all[n++] = &r->queue;
    }
    for (unsigned i = 0; i < r->ndropped; i++) {
        all[n++] = &r->dropped[i];
    }
    if (r->has_service) {
        all[n++] = &r->service;
    }
    if (r->has_batch) {
        all[n++] = &r->batch;
    }
    if (r->has_workers) {
        all[n++] = &r->workers;
    }
    for (unsigned i = 0; i < n; i++) {
        if (ceil_probe_read(all[i], &v)) {
            fprintf(stderr, "fleetsim-stress: probe %s (%s) gives no number: %s\n", all[i]->name,
                    all[i]->text, all[i]->last_error);
            return -1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ readings */

static int
series_add(struct cr_series *s, const struct ceil_sample *v, const struct cr_extra *x)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        struct ceil_sample *ns = realloc(s->s, cap * sizeof *ns);
        struct cr_extra *nx;
        if (!ns) {
            return -1;
        }
        s->s = ns;
        if (!(nx = realloc(s->x, cap * sizeof *nx))) {
            return -1;
        }
        s->x = nx;
        s->cap = cap;
    }
    s->s[s->n] = *v;
    s->x[s->n++] = *x;
    return 0;
}

static void
series_free(struct cr_series *s)
{
    free(s->s);
    free(s->x);
}

/* One reading of the fleet and every probe, at @p t_s of its cell. @return 0, or -1 when the run broke. */
static int
read_all(struct cr_run *r, double t_s, struct ceil_sample *s, struct cr_extra *x)
{
    double sent = NAN, dsum = 0;
    int dany = 0;

    if (ceil_fleet_sent(&r->fleet, &sent)) {
        sent = NAN;
        if (!run_interrupted()) {
            fprintf(stderr, "fleetsim-stress: the fleet's sent counter: %s\n", r->fleet.last_error);
        }
    }
    s->t_s = t_s;
    s->sent = sent;
    s->arrived = r->has_arrived ? probe_value(&r->arrived) : NAN;
    s->persisted = probe_value(&r->persisted);
    s->queue = r->has_queue ? probe_value(&r->queue) : NAN;
    for (unsigned i = 0; i < r->ndropped; i++) {
        x->drop[i] = probe_value(&r->dropped[i]);
        if (isfinite(x->drop[i])) {
            dsum += x->drop[i];
            dany = 1;
        }
    }
    s->dropped = dany ? dsum : NAN;
    x->service_ms = r->has_service ? probe_value(&r->service) : NAN;
    x->batch = r->has_batch ? probe_value(&r->batch) : NAN;
    x->workers = r->has_workers ? probe_value(&r->workers) : NAN;
    if (run_interrupted()) {
        return 0; /* a transfer cut short by the signal is not a failure of the fleet */
    }
    if (!isfinite(sent) || !isfinite(s->persisted)) {
        if (++r->failed_reads >= CR_READ_FAILURES_MAX) {
            snprintf(r->broken_why, sizeof r->broken_why, "%s gave no number %d times in a row",
                     !isfinite(sent) ? "the fleet's sent counter" : "--persisted", CR_READ_FAILURES_MAX);
            r->broken = 1;
            return -1;
        }
    } else {
        r->failed_reads = 0;
    }
    return 0;
}

/* ------------------------------------------------------------------ cells */

static struct cr_cell *
cell_new(struct cr_run *r, const char *phase, double level)
{
    struct cr_cell *c;

    if (r->ncells == CR_CELLS_MAX || !(c = calloc(1, sizeof *c))) {
        return NULL;
    }
    c->index = r->ncells;
    c->phase = phase;
    c->level = level;
    r->cells[r->ncells++] = c;
    return c;
}

static int
set_rate(struct cr_run *r, double level)
{
    if (ceil_fleet_set_rate(&r->fleet, level)) {
        if (!run_interrupted()) {
            snprintf(r->broken_why, sizeof r->broken_why, "the fleet refused the rate %.6g: %s", level,
                     r->fleet.last_error);
            r->broken = 1;
        }
        return -1;
    }
    return 0;
}

/* Whether a settle reading shows the collector done: the queue empty (or no longer falling) and the
 * counters the same as at the reading before. */
static int
settled(const struct cr_series *st, const struct ceil_sample *s0)
{
    const struct ceil_sample *a, *b;
    double depth;

    if (st->n < 2) {
        return 0;
    }
    a = &st->s[st->n - 2];
    b = &st->s[st->n - 1];
    depth = ceil_queue_depth(s0, b);
    if (b->persisted != a->persisted || b->sent != a->sent) {
        return 0;
    }
    if (isfinite(b->arrived) && b->arrived != a->arrived) {
        return 0;
    }
    /* A probe queue may hold a residue the run did not put there: no longer moving is enough. */
    return isfinite(b->queue) ? b->queue <= a->queue : depth <= 0.5 || !isfinite(depth);
}

static void
progress(struct cr_run *r, const struct cr_cell *c, const char *what, double t, double window)
{
    const struct cr_series *s = &c->load;
    double depth = s->n ? ceil_queue_depth(&s->s[0], &s->s[s->n - 1]) : NAN;
    struct ceil_fit fit;

    /* The slope the verdict will judge, not one of its own (the method's fit skips the reading before the
     * load). */
    ceil_cell_slope_so_far(&c->in, &fit);
    run_progress_line(
        r->start_us, "cell %u %s %.6g/s per device (%.6g/s): %s %.0f/%.0f s, queue %.0f, slope %+.2f/s",
        c->index, c->phase, c->level, c->level * r->fleet.info.devices, what, t, window, depth, fit.slope);
}

/*
 * Run one cell: @p level for @p window_s (cut short when clearly above the ceiling if @p may_cut), then no
 * load until the collector settles, then the verdict. @return the cell, or NULL when the run broke.
 */
static struct cr_cell *
run_cell(struct cr_run *r, const char *phase, double level, double window_s, int may_cut)
{
    const struct stress_options *o = r->o;
    struct cr_cell *c = cell_new(r, phase, level);
    monotime_us t0, next;
    struct ceil_sample s;
    struct cr_extra x;
    uint64_t k = 0;

    if (!c) {
        snprintf(r->broken_why, sizeof r->broken_why, "more than %u cells", CR_CELLS_MAX);
        r->broken = 1;
        return NULL;
    }
    c->in.per_device_rate = level;
    c->in.devices = r->fleet.info.devices;
    c->in.window_s = window_s;
    if (run_interrupted()) {
        c->in.interrupted = 1;
        ceil_cell_judge(&c->in, &r->rules, &c->res);
        c->judged = 1;
        return c;
    }
    t0 = loop_clock_monotonic();
    c->started_ms = wall_ms();
    if (read_all(r, 0, &s, &x) || series_add(&c->load, &s, &x) || set_rate(r, level)) {
        goto broke;
    }
    /* The load phase: a reading every --sample, the last one at the window's end. */
    for (k = 1; !run_interrupted(); k++) {
        double t = (double)k * o->sample_s;
        if (t > window_s) {
            t = window_s;
        }
        next = t0 + (monotime_us)(t * 1e6);
        run_sleep_until(next);
        if (run_interrupted()) {
            break;
        }
        if (read_all(r, since_s(t0), &s, &x) || series_add(&c->load, &s, &x)) {
            goto broke;
        }
        c->in.load = c->load.s;
        c->in.load_count = c->load.n;
        progress(r, c, "t", s.t_s, window_s);
        if (t >= window_s) {
            break;
        }
        if (may_cut && ceil_cell_early(&c->in, &r->rules)) {
            c->in.cut_short = 1;
            break;
        }
    }
    c->elapsed_s = since_s(t0);
    if (run_interrupted()) {
        c->in.interrupted = 1;
    }
    /* Rate 0 (even after a signal: the fleet must not go on at the cell's rate), then the drain. */
    if (set_rate(r, 0) && !run_interrupted()) {
        goto broke;
    }
    for (k = 1; !run_interrupted(); k++) {
        double t = c->elapsed_s + (double)k * o->sample_s;
        run_sleep_until(t0 + (monotime_us)(t * 1e6));
        if (run_interrupted()) {
            break;
        }
        if (read_all(r, since_s(t0), &s, &x) || series_add(&c->settle, &s, &x)) {
            goto broke;
        }
        if (settled(&c->settle, &c->load.s[0])) {
            break;
        }
        if ((double)k * o->sample_s >= o->settle_s) {
            fprintf(
                stderr,
                "fleetsim-stress: cell %u: the collector did not settle within --settle %.6gs (queue %.0f); "
                "the next cell starts on its backlog\n",
                c->index, o->settle_s, ceil_queue_depth(&c->load.s[0], &s));
            break;
        }
        progress(r, c, "settling", (double)k * o->sample_s, o->settle_s);
    }
    c->in.load = c->load.s;
    c->in.load_count = c->load.n;
    c->in.settled = c->settle.n ? &c->settle.s[c->settle.n - 1] : NULL;
    if (run_interrupted()) {
        c->in.interrupted = 1;
    }
    ceil_cell_judge(&c->in, &r->rules, &c->res);
    c->judged = 1;
    printf("cell %u %-14s %10.6g/s per device %10.6g/s  %-10s %s\n", c->index, c->phase, level,
           level * r->fleet.info.devices, ceil_verdict_name(c->res.verdict), c->res.why);
    fflush(stdout);
    return c;

broke:
    c->elapsed_s = since_s(t0);
    c->in.load = c->load.s;
    c->in.load_count = c->load.n;
    c->in.interrupted = 1;
    ceil_cell_judge(&c->in, &r->rules, &c->res);
    c->judged = 1;
    if (!r->broken) {
        snprintf(r->broken_why, sizeof r->broken_why, "out of memory");
        r->broken = 1;
    }
    return NULL;
}

/* ------------------------------------------------------------------ the phases */

/* The fleet's sent counter must not move while no load is offered. @return 0 (silent), 1 (not), -1. */
static int
check_silence(struct cr_run *r)
{
    double wait_s = r->o->sample_s * CR_SILENCE_SAMPLES;

    if (wait_s < CR_SILENCE_MIN_S) {
        wait_s = CR_SILENCE_MIN_S;
    }
    if (set_rate(r, 0)) {
        return -1;
    }
    /* What was already on its way (a rate the fleet had before) lands first. */
    run_sleep_until(loop_clock_monotonic() + (monotime_us)(r->o->sample_s * 1e6));
    if (run_interrupted() || ceil_fleet_sent(&r->fleet, &r->silence_before)) {
        return run_interrupted() ? 0 : -1;
    }
    run_sleep_until(loop_clock_monotonic() + (monotime_us)(wait_s * 1e6));
    if (run_interrupted() || ceil_fleet_sent(&r->fleet, &r->silence_after)) {
        return run_interrupted() ? 0 : -1;
    }
    r->silence_checked = 1;
    r->silence_s = wait_s;
    r->silent = ceil_silent(r->silence_before, r->silence_after, 0);
    printf("silence: the fleet's %s sent %s over %.3g s while idle (%.0f -> %.0f)\n",
           ceil_channel_name(r->fleet.channel), r->silent ? "did not move" : "MOVED", wait_s,
           r->silence_before, r->silence_after);
    return r->silent ? 0 : 1;
}

/* Service rate: burst, stop, fit the drain over the cell's load and settle readings. */
static void
measure_service_rate(struct cr_run *r)
{
    const struct stress_options *o = r->o;
    struct cr_cell *c = run_cell(r, "service-rate", o->burst_rate, o->burst_s, 0);
    struct ceil_sample *all;
    size_t n;

    if (!c || !c->judged || c->in.interrupted) {
        return;
    }
    r->service_cell = c;
    n = c->load.n + c->settle.n;
    if (!(all = malloc(n * sizeof *all))) {
        return;
    }
    memcpy(all, c->load.s, c->load.n * sizeof *all);
    memcpy(all + c->load.n, c->settle.s, c->settle.n * sizeof *all);
    ceil_drain_fit(all, n, c->elapsed_s, fmax(10, c->res.offered_rate * o->sample_s), &c->drain);
    free(all);
    if (c->drain.rate > 0) {
        printf("service rate: %.6g messages/s drained (backlog %.0f at the stop, drained in %.3g s)\n",
               c->drain.rate, c->drain.peak_depth, c->drain.drain_s);
    } else {
        printf("service rate: not measured: %s\n", c->drain.why);
    }
}

static void
measure_sustained(struct cr_run *r)
{
    const struct stress_options *o = r->o;
    double level;

    ceil_search_init(&r->search, o->rate_from, o->rate_to, o->precision);
    r->searched = 1;
    while (!run_interrupted() && !r->broken && ceil_search_next(&r->search, &level)) {
        const char *phase = r->baseline_first ? "search" : "baseline";
        struct cr_cell *c = run_cell(r, phase, level, o->window_s, 1);
        if (!c) {
            break;
        }
        if (!r->baseline_first) {
            r->baseline_first = c;
        }
        ceil_search_record(&r->search, level, c->res.verdict);
        if (c->res.verdict == CEIL_FLAT && (!r->answer_cell || level > r->answer_cell->level)) {
            r->answer_cell = c;
        }
    }
    if (r->search.done) {
        printf("search: %s\n", r->search.why_done);
    }
}

static void
measure_loss_isolation(struct cr_run *r, double ceiling_level)
{
    struct cr_cell *c;

    if (!(ceiling_level > 0)) {
        return;
    }
    c = run_cell(r, "loss-isolation", ceiling_level / 2, r->o->window_s, 0);
    if (!c || c->in.interrupted) {
        return;
    }
    r->loss_cell = c;
    ceil_loss_isolation(c->res.sent, c->res.persisted, r->o->tolerance, &r->loss);
    printf("loss isolation at %.6g/s per device: sent %.0f, persisted %.0f, %.3f%% apart (tolerance %.3g%%): "
           "%s, queue %s\n",
           c->level, r->loss.sent, r->loss.persisted, 100 * r->loss.share, 100 * r->o->tolerance,
           r->loss.within_tolerance ? "within" : "NOT within", ceil_verdict_name(c->res.verdict));
}

/* The identity, against the drain (the pipeline flat out) or else the cells above the ceiling. */
static void
check_identity(struct cr_run *r)
{
    double *svc, *bat, measured = 0, wk = NAN;
    size_t n = 0, cap = 0, cells = 0;

    if (!r->has_service || !r->has_batch) {
        return;
    }
    for (unsigned i = 0; i < r->ncells; i++) {
        cap += r->cells[i]->load.n + r->cells[i]->settle.n;
    }
    svc = malloc((cap ? cap : 1) * sizeof *svc);
    bat = malloc((cap ? cap : 1) * sizeof *bat);
    if (!svc || !bat) {
        free(svc);
        free(bat);
        return;
    }
    for (unsigned i = 0; i < r->ncells; i++) {
        struct cr_cell *c = r->cells[i];
        int saturated =
            c == r->service_cell ? c->drain.rate > 0 : !r->service_cell && c->res.verdict == CEIL_POSITIVE;
        if (!saturated) {
            continue;
        }
        /* The drain's readings for the service rate, the load's for a cell above the ceiling. */
        const struct cr_series *s = c == r->service_cell ? &c->settle : &c->load;
        for (size_t k = 0; k < s->n; k++) {
            svc[n] = s->x[k].service_ms;
            bat[n++] = s->x[k].batch;
            if (isfinite(s->x[k].workers)) {
                wk = s->x[k].workers;
            }
        }
        measured += c == r->service_cell ? c->drain.rate : c->res.persisted_rate;
        cells++;
    }
    if (cells) {
        measured /= (double)cells;
        ceil_stats_of(svc, n, &r->service_stats);
        ceil_stats_of(bat, n, &r->batch_stats);
        r->workers_seen = wk;
        r->identity_against = r->service_cell ? "service_rate" : "cells_above_ceiling";
        if (!ceil_identity_check(r->batch_stats.mean, r->service_stats.mean, wk, measured,
                                 r->rules.identity_tolerance, &r->identity)) {
            r->identity_checked = 1;
            printf("identity: %.4g messages per work unit / %.4g ms (mean) x %.4g workers = %.6g/s against "
                   "%.6g/s measured (%s): %s\n",
                   r->batch_stats.mean, r->service_stats.mean, isfinite(wk) ? wk : 1.0, r->identity.predicted,
                   measured, r->identity_against,
                   r->identity.reproduces ? "reproduces"
                                          : "DOES NOT reproduce: the mechanism is not understood");
        }
    }
    free(svc);
    free(bat);
}

/* --ordering FILE: the fleet's report joined with the collector's file, inversions counted. */
static void
check_ordering(struct cr_run *r)
{
    const struct stress_options *o = r->o;
    struct recon_push_opts po = {
        .format = RECON_FMT_SYSLOG, .run_tag = o->recv_run_tag, .ordering = 1, .tolerance = o->tolerance};
    struct jsonr_value *doc = NULL;
    struct recon_push *p = NULL;
    char *text = NULL, err[256];
    size_t len = 0;
    FILE *sink = fopen("/dev/null", "w");

    if (!o->ordering_path) {
        return;
    }
    if (ceil_fleet_report(&r->fleet, &text, &len)) {
        snprintf(r->ordering_error, sizeof r->ordering_error, "the fleet's report: %s", r->fleet.last_error);
    } else if (jsonr_parse(text, len, &doc, err, sizeof err)) {
        snprintf(r->ordering_error, sizeof r->ordering_error, "the fleet's report: %s", err);
    } else if (!sink || !(p = recon_push_new(doc, &po, sink, err, sizeof err))) {
        snprintf(r->ordering_error, sizeof r->ordering_error, "%s", sink ? err : strerror(errno));
    } else if (recon_push_read_files(p, &o->ordering_path, 1)) {
        snprintf(r->ordering_error, sizeof r->ordering_error, "cannot read %s", o->ordering_path);
    } else {
        recon_push_finish(p, sink, &r->ordering);
        /* An empty file (or one of another run) proves no order: it is no check. */
        if (r->ordering.lines <= r->ordering.not_understood + r->ordering.untagged) {
            snprintf(r->ordering_error, sizeof r->ordering_error,
                     "%s has no line of the run to check (%" PRIu64 " lines, %" PRIu64
                     " not understood, %" PRIu64 " without the run tag)",
                     o->ordering_path, r->ordering.lines, r->ordering.not_understood, r->ordering.untagged);
        } else {
            r->ordering_checked = 1;
        }
    }
    if (r->ordering_checked) {
        printf("ordering: %" PRIu64 " lines of %s, %" PRIu64 " inversions (adjacent descents of a device's "
               "sequence numbers)%s\n",
               r->ordering.lines, o->ordering_path, r->ordering.inversions,
               r->ordering.inversions ? ": a REGRESSION, whatever the throughput" : "");
    }
    if (r->ordering_error[0]) {
        fprintf(stderr, "fleetsim-stress: --ordering: %s\n", r->ordering_error);
    }
    recon_push_free(p);
    jsonr_free(doc);
    free(text);
    if (sink) {
        fclose(sink);
    }
}

/* ------------------------------------------------------------------ the result */

struct cr_result {
    const char *quantity; /* "sustained_ceiling" or "service_rate" */
    double per_device;    /* 0: none */
    double rate;
    int valid, regression;
    char why[400];
};

static void
why_add(struct cr_result *res, const char *fmt, ...)
{
    size_t n = strlen(res->why);
    va_list ap;

    if (n && n + 2 < sizeof res->why) {
        strcpy(res->why + n, "; ");
        n += 2;
    }
    va_start(ap, fmt);
    vsnprintf(res->why + n, sizeof res->why - n, fmt, ap);
    va_end(ap);
}

static void
decide(struct cr_run *r, struct cr_result *res)
{
    const struct stress_options *o = r->o;
    uint32_t devices = r->fleet.info.devices;

    memset(res, 0, sizeof *res);
    res->quantity = o->measure == CEILING_SERVICE_RATE ? "service_rate" : "sustained_ceiling";
    res->valid = 1;
    if (o->measure == CEILING_SERVICE_RATE) {
        if (r->service_cell && r->service_cell->drain.rate > 0) {
            res->rate = r->service_cell->drain.rate;
            res->per_device = res->rate / devices;
            why_add(res,
                    "the drain rate after a burst of %.6g/s per device: a service rate, not a sustained "
                    "ceiling",
                    o->burst_rate);
        } else {
            res->valid = 0;
            why_add(res, "no service rate: %s",
                    r->service_cell ? r->service_cell->drain.why : "the burst did not run");
        }
    } else if (o->measure == CEILING_LOSS_ISOLATION) {
        res->per_device = o->ceiling_rate;
        res->rate = o->ceiling_rate * devices;
        why_add(res, "the ceiling given (--ceiling), checked by loss isolation");
    } else if (r->answer_cell) {
        res->per_device = r->answer_cell->level;
        res->rate = res->per_device * devices;
        why_add(res, "the highest level whose queue held flat for its whole window (%s)", r->search.why_done);
    } else {
        res->valid = 0;
        why_add(res, "no level held flat: %s", r->searched ? r->search.why_done : "the search did not run");
    }
    if (r->silence_checked && !r->silent) {
        res->valid = 0;
        why_add(res, "the fleet was not silent while idle (%.0f messages in %.3g s): something else emits",
                r->silence_after - r->silence_before, r->silence_s);
    }
    if (o->measure == CEILING_ALL || o->measure == CEILING_LOSS_ISOLATION) {
        if (!r->loss_cell) {
            res->valid = 0;
            why_add(res, "loss isolation did not run");
        } else if (!r->loss.within_tolerance || r->loss_cell->res.verdict != CEIL_FLAT) {
            res->valid = 0;
            why_add(
                res,
                "loss isolation failed at %.6g/s per device (sent %.0f, persisted %.0f, %.3f%% apart, queue "
                "%s): the pipeline is lossy at any rate and the ceiling is invalid",
                r->loss_cell->level, r->loss.sent, r->loss.persisted, 100 * r->loss.share,
                ceil_verdict_name(r->loss_cell->res.verdict));
        }
    }
    if (r->baseline_first && r->baseline_last && r->baseline_last->judged &&
        r->baseline_last->res.verdict != r->baseline_first->res.verdict) {
        res->valid = 0;
        why_add(res, "the baseline drifted: %s first, %s last",
                ceil_verdict_name(r->baseline_first->res.verdict),
                ceil_verdict_name(r->baseline_last->res.verdict));
    }
    if (o->ordering_path && !r->ordering_checked) {
        res->valid = 0;
        why_add(res, "ordering not checked: %s", r->ordering_error[0] ? r->ordering_error : "interrupted");
    }
    if (r->ordering_checked && r->ordering.inversions) {
        res->regression = 1;
        why_add(res, "ordering broken: %" PRIu64 " inversions in the collector's output (a regression)",
                r->ordering.inversions);
    }
    if (r->broken) {
        res->valid = 0;
        why_add(res, "the run broke: %s", r->broken_why);
    }
    if (run_interrupted()) {
        res->valid = 0;
        why_add(res, "interrupted by %s", run_interrupted_name());
    }
}

/* ------------------------------------------------------------------ the manifest */

static void
json_num(struct sbuf *b, double v)
{
    if (isfinite(v)) {
        sbuf_printf(b, "%.10g", v);
    } else {
        sbuf_adds(b, "null");
    }
}

static void
json_time(struct sbuf *b, uint64_t ms)
{
    char t[40];

    ydata_datetime(ms, t, sizeof t);
    sbuf_add_json(b, t);
}

/* The readings of @p s; each one's queue depth is taken from @p base, the cell's first reading. */
static void
json_samples(struct sbuf *b, const struct cr_run *r, const struct cr_series *s,
             const struct ceil_sample *base)
{
    sbuf_adds(b, "[");
    for (size_t i = 0; i < s->n; i++) {
        const struct ceil_sample *v = &s->s[i];
        sbuf_printf(b, "%s{\"t\":%.3f,\"sent\":", i ? "," : "", v->t_s);
        json_num(b, v->sent);
        sbuf_adds(b, ",\"arrived\":");
        json_num(b, v->arrived);
        sbuf_adds(b, ",\"persisted\":");
        json_num(b, v->persisted);
        sbuf_adds(b, ",\"queue\":");
        json_num(b, base ? ceil_queue_depth(base, v) : NAN);
        sbuf_adds(b, ",\"dropped\":");
        json_num(b, v->dropped);
        if (r->has_service || r->has_batch) {
            sbuf_adds(b, ",\"service_time_ms\":");
            json_num(b, s->x[i].service_ms);
            sbuf_adds(b, ",\"batch_size\":");
            json_num(b, s->x[i].batch);
        }
        sbuf_adds(b, "}");
    }
    sbuf_adds(b, "]");
}

/* Each drop counter's difference over the cell (first load reading to the settled one). */
static void
json_cell_drops(struct sbuf *b, const struct cr_run *r, const struct cr_cell *c)
{
    const struct cr_series *end = c->settle.n ? &c->settle : &c->load;

    sbuf_adds(b, "{");
    for (unsigned i = 0; i < r->ndropped; i++) {
        sbuf_printf(b, "%s", i ? "," : "");
        sbuf_add_json(b, r->dropped[i].name);
        sbuf_adds(b, ":");
        json_num(b, c->load.n && end->n ? end->x[end->n - 1].drop[i] - c->load.x[0].drop[i] : NAN);
    }
    sbuf_adds(b, "}");
}

static void
json_cell(struct sbuf *b, const struct cr_run *r, const struct cr_cell *c)
{
    const struct ceil_cell_result *x = &c->res;

    sbuf_printf(b, "{\"index\":%u,\"phase\":\"%s\",\"per_device_rate\":", c->index, c->phase);
    json_num(b, c->level);
    sbuf_adds(b, ",\"offered_rate\":");
    json_num(b, c->level * r->fleet.info.devices);
    sbuf_printf(b, ",\"devices\":%" PRIu32 ",\"verdict\":\"%s\",\"why\":", r->fleet.info.devices,
                ceil_verdict_name(x->verdict));
    sbuf_add_json(b, x->why);
    sbuf_adds(b, ",\"threshold\":");
    json_num(b, x->threshold);
    sbuf_adds(b, ",\"slope\":");
    json_num(b, x->slope_all.slope);
    sbuf_adds(b, ",\"intercept\":");
    json_num(b, x->slope_all.intercept);
    sbuf_adds(b, ",\"slope_last_half\":");
    json_num(b, x->slope_last_half.slope);
    sbuf_adds(b, ",\"observed_per_device_rate\":");
    json_num(b, x->observed_per_device_rate);
    sbuf_adds(b, ",\"persisted_rate\":");
    json_num(b, x->persisted_rate);
    sbuf_adds(b, ",\"peak_depth\":");
    json_num(b, x->peak_depth);
    sbuf_adds(b, ",\"sent\":");
    json_num(b, x->sent);
    sbuf_adds(b, ",\"arrived\":");
    json_num(b, x->arrived);
    sbuf_adds(b, ",\"persisted\":");
    json_num(b, x->persisted);
    sbuf_adds(b, ",\"dropped\":");
    json_cell_drops(b, r, c);
    sbuf_adds(b, ",\"loss_in\":");
    json_num(b, x->loss_in);
    sbuf_adds(b, ",\"loss_inside\":");
    json_num(b, x->loss_inside);
    sbuf_adds(b, ",\"window_s\":");
    json_num(b, c->in.window_s);
    sbuf_adds(b, ",\"elapsed_s\":");
    json_num(b, c->elapsed_s);
    sbuf_printf(b, ",\"cut_short\":%s,\"started\":", c->in.cut_short ? "true" : "false");
    json_time(b, c->started_ms);
    sbuf_adds(b, ",\"samples\":");
    json_samples(b, r, &c->load, c->load.n ? &c->load.s[0] : NULL);
    sbuf_adds(b, ",\"settle\":");
    json_samples(b, r, &c->settle, c->load.n ? &c->load.s[0] : NULL);
    sbuf_adds(b, "}");
}

static void
json_probe(struct sbuf *b, const char *name, const struct ceil_probe *p, int has, int comma)
{
    sbuf_printf(b, "%s\"%s\":", comma ? "," : "", name);
    json_string_or_null(b, has ? p->text : NULL);
}

static const char *const measure_names[] = {"sustained", "service-rate", "loss-isolation", "all"};

static int
write_manifest(struct cr_run *r, const struct cr_result *res)
{
    const struct stress_options *o = r->o;
    const struct ceil_fleet_info *fi = &r->fleet.info;
    double sent = 0, arrived = 0, persisted = 0;
    int have_arrived = r->has_arrived;
    struct sbuf b = {0};
    unsigned ndiscarded = 0;
    int rc;

    for (unsigned i = 0; i < r->ncells; i++) {
        const struct cr_cell *c = r->cells[i];
        if (c->judged && c->res.verdict != CEIL_INCOMPLETE) {
            sent += isfinite(c->res.sent) ? c->res.sent : 0;
            arrived += isfinite(c->res.arrived) ? c->res.arrived : 0;
            persisted += isfinite(c->res.persisted) ? c->res.persisted : 0;
        }
    }
    sbuf_adds(&b, "{\"tool\":\"fleetsim-stress\",\"mode\":\"ceiling\",\"version\":");
    sbuf_add_json(&b, FLEETSIM_VERSION);
    sbuf_adds(&b, ",\"started\":");
    json_time(&b, r->started_ms);
    sbuf_adds(&b, ",\"ended\":");
    json_time(&b, r->ended_ms);
    sbuf_printf(&b,
                ",\"elapsed_s\":%.3f,\"interrupted\":%s,\"signal\":", (double)(r->end_us - r->start_us) / 1e6,
                run_interrupted() ? "true" : "false");
    json_string_or_null(&b, run_interrupted_name());
    sbuf_printf(&b, ",\"measure\":\"%s\",\"measured_quantity\":\"%s\",\"sut\":{\"collector_version\":",
                measure_names[o->measure], res->quantity);
    json_string_or_null(&b, o->collector_version);
    for (uint32_t i = 0; i < o->sut.count; i++) {
        const char *kv = o->sut.paths[i], *eq = strchr(kv, '=');
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
        sbuf_adds(&b, ",");
        sbuf_add_json(&b, key);
        sbuf_adds(&b, ":");
        sbuf_add_json(&b, eq + 1);
    }
    sbuf_adds(&b, "},\"controls\":{\"generator\":\"fleetsim\",\"generator_version\":");
    json_string_or_null(&b, fi->version[0] ? fi->version : NULL);
    sbuf_printf(&b,
                ",\"stress_version\":\"%s\",\"devices\":%" PRIu32 ",\"first_device\":%" PRIu32
                ",\"last_device\":%" PRIu32 ",\"group\":",
                FLEETSIM_VERSION, fi->devices, fi->first, fi->last);
    json_string_or_null(&b, o->group);
    sbuf_printf(&b, ",\"channel\":\"%s\",\"format\":", ceil_channel_name(r->fleet.channel));
    json_string_or_null(&b, fi->format[0] ? fi->format : NULL);
    sbuf_adds(&b, ",\"transport\":");
    json_string_or_null(&b, fi->transport[0] ? fi->transport : NULL);
    sbuf_adds(&b, ",\"collector_version\":");
    json_string_or_null(&b, o->collector_version);
    sbuf_adds(&b, ",\"fleet\":");
    sbuf_add_json(&b, o->fleet_url);
    sbuf_adds(&b, "},\"rules\":{");
    sbuf_printf(
        &b,
        "\"window_s\":%.6g,\"sample_s\":%.6g,\"precision\":%.6g,\"slope_share\":%.6g,\"slope_floor\":%.6g,"
        "\"drift\":%.6g,\"tolerance\":%.6g,\"identity_tolerance\":%.6g,\"early_factor\":%.6g,"
        "\"early_min_share\":%.6g,\"settle_s\":%.6g,\"from\":%.10g,\"to\":%.10g,\"burst_rate\":%.10g,"
        "\"burst_s\":%.6g,\"slope_test\":",
        o->window_s, o->sample_s, r->rules.precision, r->rules.slope_share, r->rules.slope_floor,
        r->rules.drift, r->rules.tolerance, r->rules.identity_tolerance, r->rules.early_factor,
        r->rules.early_min_share, o->settle_s, o->rate_from, o->rate_to, o->burst_rate, o->burst_s);
    sbuf_add_json(&b,
                  "positive when the least-squares slope of the queue depth over the whole window and over "
                  "its second half both exceed max(slope_share x offered rate, slope_floor) messages/s; "
                  "lossy when sent and arrived differ by more than tolerance or a drop counter moves; "
                  "discarded when the observed per-device rate is off its level by more than drift");
    sbuf_adds(&b, "},\"probes\":{");
    json_probe(&b, "arrived", &r->arrived, r->has_arrived, 0);
    json_probe(&b, "persisted", &r->persisted, 1, 1);
    json_probe(&b, "queue", &r->queue, r->has_queue, 1);
    sbuf_adds(&b, ",\"dropped\":{");
    for (unsigned i = 0; i < r->ndropped; i++) {
        json_probe(&b, r->dropped[i].name, &r->dropped[i], 1, i > 0);
    }
    sbuf_adds(&b, "}");
    json_probe(&b, "service_time", &r->service, r->has_service, 1);
    json_probe(&b, "batch_size", &r->batch, r->has_batch, 1);
    json_probe(&b, "workers", &r->workers, r->has_workers, 1);
    sbuf_adds(&b, "},\"silence\":");
    if (r->silence_checked) {
        sbuf_printf(
            &b, "{\"checked\":true,\"seconds\":%.3f,\"sent_before\":%.0f,\"sent_after\":%.0f,\"silent\":%s}",
            r->silence_s, r->silence_before, r->silence_after, r->silent ? "true" : "false");
    } else {
        sbuf_adds(&b, "{\"checked\":false}");
    }
    sbuf_adds(&b, ",\"reconciliation\":{\"sent\":");
    json_num(&b, sent);
    sbuf_adds(&b, ",\"arrived\":");
    json_num(&b, have_arrived ? arrived : NAN);
    sbuf_adds(&b, ",\"persisted\":");
    json_num(&b, persisted);
    sbuf_adds(&b, ",\"drop_counters\":{");
    for (unsigned i = 0; i < r->ndropped; i++) {
        double total = 0;
        for (unsigned k = 0; k < r->ncells; k++) {
            const struct cr_cell *c = r->cells[k];
            const struct cr_series *end = c->settle.n ? &c->settle : &c->load;
            if (c->load.n && end->n && isfinite(end->x[end->n - 1].drop[i] - c->load.x[0].drop[i])) {
                total += end->x[end->n - 1].drop[i] - c->load.x[0].drop[i];
            }
        }
        sbuf_printf(&b, "%s", i ? "," : "");
        sbuf_add_json(&b, r->dropped[i].name);
        sbuf_adds(&b, ":");
        json_num(&b, total);
    }
    sbuf_adds(&b, "},\"loss_isolation_run\":");
    if (r->loss_cell) {
        const struct cr_cell *c = r->loss_cell;
        sbuf_adds(&b, "{\"per_device_rate\":");
        json_num(&b, c->level);
        sbuf_adds(&b, ",\"rate\":");
        json_num(&b, c->res.offered_rate);
        sbuf_adds(&b, ",\"sent\":");
        json_num(&b, r->loss.sent);
        sbuf_adds(&b, ",\"arrived\":");
        json_num(&b, c->res.arrived);
        sbuf_adds(&b, ",\"persisted\":");
        json_num(&b, r->loss.persisted);
        sbuf_adds(&b, ",\"share\":");
        json_num(&b, r->loss.share);
        sbuf_printf(&b, ",\"within_tolerance\":%s,\"queue_slope\":\"%s\",\"cell\":%u}",
                    r->loss.within_tolerance ? "true" : "false",
                    c->res.verdict == CEIL_FLAT ? "flat" : ceil_verdict_name(c->res.verdict), c->index);
    } else {
        sbuf_adds(&b, "null");
    }
    sbuf_adds(&b, "},\"observed\":{\"service_time_ms\":");
    if (r->service_stats.count) {
        sbuf_printf(&b, "{\"statistic_used\":\"mean\",\"count\":%zu,\"p50\":", r->service_stats.count);
        json_num(&b, r->service_stats.p50);
        sbuf_adds(&b, ",\"mean\":");
        json_num(&b, r->service_stats.mean);
        sbuf_adds(&b, ",\"min\":");
        json_num(&b, r->service_stats.min);
        sbuf_adds(&b, ",\"max\":");
        json_num(&b, r->service_stats.max);
        sbuf_adds(&b, "}");
    } else {
        sbuf_adds(&b, "null");
    }
    sbuf_adds(&b, ",\"messages_per_work_unit\":");
    json_num(&b, r->batch_stats.count ? r->batch_stats.mean : NAN);
    sbuf_adds(&b, ",\"concurrent_workers\":");
    json_num(&b, r->has_workers ? r->workers_seen : NAN);
    sbuf_adds(&b, ",\"queue_slope\":");
    if (o->measure == CEILING_SERVICE_RATE) {
        json_string_or_null(&b, r->service_cell ? "positive" : NULL);
    } else {
        json_string_or_null(&b, r->answer_cell ? "flat" : NULL);
    }
    sbuf_adds(&b, ",\"ordering_preserved\":");
    sbuf_adds(&b, !r->ordering_checked ? "null" : r->ordering.inversions ? "false" : "true");
    sbuf_adds(&b, ",\"ordering\":");
    if (r->ordering_checked) {
        sbuf_adds(&b, "{\"file\":");
        sbuf_add_json(&b, o->ordering_path);
        sbuf_printf(&b,
                    ",\"sources\":%" PRIu64 ",\"lines\":%" PRIu64 ",\"inversions\":%" PRIu64
                    ",\"not_understood\":%" PRIu64 ",\"untagged\":%" PRIu64 ",\"run_tag\":",
                    r->ordering.total, r->ordering.lines, r->ordering.inversions, r->ordering.not_understood,
                    r->ordering.untagged);
        json_string_or_null(&b, o->recv_run_tag);
        sbuf_adds(&b, "}");
    } else {
        sbuf_adds(&b, "null");
    }
    sbuf_adds(&b, ",\"identity\":");
    if (r->identity_checked) {
        sbuf_adds(&b, "{\"predicted\":");
        json_num(&b, r->identity.predicted);
        sbuf_adds(&b, ",\"measured\":");
        json_num(&b, r->identity.measured);
        sbuf_adds(&b, ",\"error\":");
        json_num(&b, r->identity.error);
        sbuf_printf(&b, ",\"reproduces\":%s,\"against\":\"%s\",\"statistic_used\":\"mean\"}",
                    r->identity.reproduces ? "true" : "false", r->identity_against);
    } else {
        sbuf_adds(&b, "null");
    }
    sbuf_adds(&b, "},\"service_rate\":");
    if (r->service_cell) {
        const struct ceil_drain *d = &r->service_cell->drain;
        sbuf_adds(&b, "{\"rate\":");
        json_num(&b, d->rate > 0 ? d->rate : NAN);
        sbuf_adds(&b, ",\"per_device_burst_rate\":");
        json_num(&b, r->service_cell->level);
        sbuf_printf(&b, ",\"burst_s\":%.6g,\"peak_depth\":", o->burst_s);
        json_num(&b, d->peak_depth);
        sbuf_adds(&b, ",\"drain_s\":");
        json_num(&b, d->drain_s);
        sbuf_printf(&b, ",\"points\":%zu,\"cell\":%u,\"why\":", d->points, r->service_cell->index);
        json_string_or_null(&b, d->rate > 0 ? NULL : d->why);
        sbuf_adds(&b, "}");
    } else {
        sbuf_adds(&b, "null");
    }
    sbuf_printf(&b, ",\"result\":{\"quantity\":\"%s\",\"rate\":", res->quantity);
    json_num(&b, res->per_device > 0 ? res->rate : NAN);
    sbuf_adds(&b, ",\"per_device_rate\":");
    json_num(&b, res->per_device > 0 ? res->per_device : NAN);
    sbuf_printf(&b, ",\"devices\":%" PRIu32 ",\"valid\":%s,\"regression\":%s,\"why\":", fi->devices,
                res->valid ? "true" : "false", res->regression ? "true" : "false");
    sbuf_add_json(&b, res->why);
    sbuf_adds(&b, ",\"answer_cell\":");
    if (r->answer_cell && o->measure != CEILING_SERVICE_RATE && o->measure != CEILING_LOSS_ISOLATION) {
        sbuf_printf(&b, "%u", r->answer_cell->index);
    } else {
        sbuf_adds(&b, "null");
    }
    sbuf_adds(&b, "},\"cells\":[");
    for (unsigned i = 0; i < r->ncells; i++) {
        sbuf_adds(&b, i ? "," : "");
        json_cell(&b, r, r->cells[i]);
    }
    sbuf_adds(&b, "],\"discarded\":[");
    for (unsigned i = 0; i < r->ncells; i++) {
        const struct cr_cell *c = r->cells[i];
        if (c->res.verdict != CEIL_DISCARDED) {
            continue;
        }
        sbuf_printf(&b, "%s{\"index\":%u,\"per_device_rate\":", ndiscarded++ ? "," : "", c->index);
        json_num(&b, c->level);
        sbuf_adds(&b, ",\"why\":");
        sbuf_add_json(&b, c->res.why);
        sbuf_adds(&b, "}");
    }
    sbuf_adds(&b, "]}");
    if (b.failed) {
        sbuf_free(&b);
        errno = ENOMEM;
        return -1;
    }
    rc = run_manifest_write(o->json_path, &b, r->start_us, r->end_us);
    sbuf_free(&b);
    return rc;
}

/* ------------------------------------------------------------------ the run */

static void
print_table(const struct cr_run *r, const struct cr_result *res)
{
    printf("\n%-5s %-14s %12s %12s %-10s %10s %10s %12s %12s %12s\n", "cell", "phase", "per device",
           "offered/s", "verdict", "slope/s", "threshold", "sent", "arrived", "persisted");
    for (unsigned i = 0; i < r->ncells; i++) {
        const struct cr_cell *c = r->cells[i];
        printf("%-5u %-14s %12.6g %12.6g %-10s %+10.2f %10.2f %12.0f %12.0f %12.0f%s\n", c->index, c->phase,
               c->level, c->level * r->fleet.info.devices, ceil_verdict_name(c->res.verdict),
               c->res.slope_all.slope, c->res.threshold, c->res.sent, c->res.arrived, c->res.persisted,
               c == r->answer_cell ? "  <- answer" : "");
    }
    if (res->per_device > 0) {
        printf("\n%s: %.6g messages/s for %" PRIu32 " devices at %.6g/s each (%s)%s\n",
               !strcmp(res->quantity, "service_rate") ? "service rate" : "sustained ceiling", res->rate,
               r->fleet.info.devices, res->per_device, res->valid ? "valid" : "NOT VALID",
               res->regression ? ", a REGRESSION (ordering)" : "");
    } else {
        printf("\n%s: not found\n",
               !strcmp(res->quantity, "service_rate") ? "service rate" : "sustained ceiling");
    }
    printf("why: %s\n", res->why);
}

static void
cells_free(struct cr_run *r)
{
    for (unsigned i = 0; i < r->ncells; i++) {
        series_free(&r->cells[i]->load);
        series_free(&r->cells[i]->settle);
        free(r->cells[i]);
    }
    sbuf_free(&r->ordering.devices);
}

int
ceiling_run(const struct stress_options *o)
{
    struct cr_run *r = calloc(1, sizeof *r);
    struct cr_result res;
    char err[400];
    int rc = 0, silence;

    if (!r) {
        fprintf(stderr, "fleetsim-stress: out of memory\n");
        return 2;
    }
    r->o = o;
    ceil_rules_default(&r->rules);
    r->rules.slope_share = o->slope_share;
    r->rules.drift = o->drift;
    r->rules.tolerance = o->tolerance;
    r->rules.precision = o->precision;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) || probes_setup(r)) {
        rc = 2;
        goto out;
    }
    if (ceil_fleet_open(&r->fleet, o->fleet_url, o->api_token_file, o->group, (enum ceil_channel)o->channel,
                        o->probe_timeout_s, err, sizeof err)) {
        fprintf(stderr, "fleetsim-stress: the fleet at %s: %s\n", o->fleet_url, err);
        rc = 2;
        goto out_fleet;
    }
    if (probes_check(r)) {
        rc = 2;
        goto out_fleet;
    }
    run_signals_catch(NULL);
    r->start_us = loop_clock_monotonic();
    r->started_ms = wall_ms();
    printf("ceiling: %s of the %s channel, %" PRIu32 " devices (%s), window %.6g s, sample %.6g s\n",
           measure_names[o->measure], ceil_channel_name(r->fleet.channel), r->fleet.info.devices,
           o->group ? o->group : "the whole fleet", o->window_s, o->sample_s);
    fflush(stdout);
    silence = check_silence(r);
    if (silence < 0 && !r->broken) {
        snprintf(r->broken_why, sizeof r->broken_why, "the fleet's sent counter: %s", r->fleet.last_error);
        r->broken = 1;
    }
    if (!silence && !run_interrupted()) {
        if (o->measure == CEILING_SERVICE_RATE || o->measure == CEILING_ALL) {
            measure_service_rate(r);
        }
        if ((o->measure == CEILING_SUSTAINED || o->measure == CEILING_ALL) && !r->broken) {
            measure_sustained(r);
        }
        if ((o->measure == CEILING_LOSS_ISOLATION || o->measure == CEILING_ALL) && !r->broken) {
            measure_loss_isolation(r, o->measure == CEILING_ALL ? (r->answer_cell ? r->answer_cell->level : 0)
                                                                : o->ceiling_rate);
        }
        if ((o->measure == CEILING_SUSTAINED || o->measure == CEILING_ALL) && r->baseline_first &&
            !r->broken && !run_interrupted()) {
            r->baseline_last = run_cell(r, "baseline-again", r->baseline_first->level, o->window_s, 1);
        }
        check_identity(r);
        if (!run_interrupted() && !r->broken) {
            check_ordering(r);
        }
    }
    /* The fleet's own rate back, whatever happened (a signal included). */
    if (ceil_fleet_set_rate(&r->fleet, -1)) {
        fprintf(stderr, "fleetsim-stress: could not put the fleet's own %s rate back: %s\n",
                ceil_channel_name(r->fleet.channel), r->fleet.last_error);
    }
    r->end_us = loop_clock_monotonic();
    r->ended_ms = wall_ms();
    decide(r, &res);
    print_table(r, &res);
    if (o->json_path && write_manifest(r, &res)) {
        fprintf(stderr, "fleetsim-stress: FAILED: cannot write %s: %s\n", o->json_path, strerror(errno));
        rc = 1;
    }
    if (!res.valid || res.regression || !(res.per_device > 0)) {
        rc = 1;
    }
    rc = run_signals_release(rc);
out_fleet:
    ceil_fleet_close(&r->fleet);
    curl_global_cleanup();
out:
    probes_free(r);
    cells_free(r);
    free(r);
    return rc;
}
