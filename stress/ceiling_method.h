/*
 * The collector ceiling method (three points, sustained ceiling against
 * service rate, queue slope over a window, loss isolation, the identity) as
 * pure functions over sample series: no I/O, no clock, so every rule is
 * unit-tested on synthetic series (tests/unit/stress/test_ceiling_method.c).
 * ceiling_run.c feeds it what the fleet and the probes said.
 *
 * Counters in samples are absolute readings (a probe's lifetime total); the
 * functions work on their differences from a cell's first sample. A value
 * the run has no probe for is NAN.
 */
#ifndef STRESS_CEILING_METHOD_H
#define STRESS_CEILING_METHOD_H

#include <stddef.h>
#include <stdint.h>

/* One reading of every point, taken at once. */
struct ceil_sample {
    double t_s;       /* seconds since the cell's load started (negative: before it) */
    double sent;      /* point 1: the fleet's sent counter for the channel */
    double arrived;   /* point 2: the collector's arrival counter, NAN without --arrived */
    double persisted; /* point 3: the collector's persisted counter */
    double queue;     /* the --queue probe's depth, NAN without it */
    double dropped;   /* the sum of the --dropped counters, NAN without any */
};

/* The rules of a run, decided before it starts (they go in the manifest). */
struct ceil_rules {
    double slope_share; /* a queue slope above this share of the offered rate is positive (0.01) */
    double slope_floor; /* and above this many messages per second (absolute floor, 0.5) */
    double drift;       /* a cell whose observed per-device rate is off its level by more is discarded */
    double tolerance;   /* loss allowed between two points, as a share of sent (0.005) */
    double identity_tolerance; /* predicted against measured throughput, as a share (0.15) */
    double precision;          /* the search ends when (hi - lo) <= precision * lo (0.05) */
    double early_factor; /* a cell is cut short as positive when its slope passes early_factor x threshold */
    double early_min_share; /* ... after at least this share of its window (0.33) */
};

/** @brief The method's defaults (the values in the comments of struct ceil_rules). */
void ceil_rules_default(struct ceil_rules *r);

/* A least-squares line y = intercept + slope * x. */
struct ceil_fit {
    double slope;     /* per second */
    double intercept; /* at x = 0 */
    size_t points;    /* points used; slope is 0 when fewer than 2 */
};

/** @brief Fit a line through @p n points (NAN y values are skipped). */
void ceil_fit_line(const double *x, const double *y, size_t n, struct ceil_fit *out);

/**
 * @brief The queue depth of sample @p s relative to the cell's first sample @p s0: the --queue probe
 * when there is one, else the backlog arrived - persisted, else sent - persisted (both as differences from
 * @p s0, so a collector drained at the start reads 0 there).
 */
double ceil_queue_depth(const struct ceil_sample *s0, const struct ceil_sample *s);

/* What a cell turned out to be. */
enum ceil_verdict {
    CEIL_FLAT,       /* queue bounded for the whole window, no loss: at or below the ceiling */
    CEIL_POSITIVE,   /* queue slope positive and staying so: above the ceiling */
    CEIL_LOSSY,      /* loss between two points or a drop counter moved: above the ceiling, not a result */
    CEIL_DISCARDED,  /* the observed per-device rate drifted from the level: not the cell it claims */
    CEIL_INCOMPLETE, /* ended before its window (interrupted): no verdict */
};

/** @return "flat", "positive", "lossy", "discarded" or "incomplete". */
const char *ceil_verdict_name(enum ceil_verdict v);

/* A cell's samples and what it was asked to be. */
struct ceil_cell_input {
    double per_device_rate;         /* the level offered, messages per second per device */
    uint32_t devices;               /* devices offering it */
    double window_s;                /* the window asked */
    const struct ceil_sample *load; /* samples while the load ran, load[0] at t 0 (the start) */
    size_t load_count;              /* how many */
    const struct ceil_sample
        *settled;    /* the reading once the load stopped and the counters settled, or NULL */
    int interrupted; /* 1: the cell was cut short by the user */
    int cut_short;   /* 1: the run stopped it early as clearly positive (ceil_cell_early) */
};

/* A cell's verdict and the numbers behind it. */
struct ceil_cell_result {
    enum ceil_verdict verdict;
    char why[200];                   /* one line saying why (for the manifest and the table) */
    double threshold;                /* the slope threshold applied, messages per second */
    struct ceil_fit slope_all;       /* queue depth over the whole window */
    struct ceil_fit slope_last_half; /* over its second half */
    double observed_per_device_rate; /* sent during the load / elapsed / devices */
    double offered_rate;             /* per_device_rate x devices */
    double sent, arrived, persisted; /* differences from load[0] to settled (or the last load sample) */
    double dropped;                  /* the drop counters' difference, NAN without any */
    double loss_in;                  /* (sent - arrived) / sent, NAN without arrived */
    double loss_inside;              /* (arrived - persisted) / arrived once settled, or (sent - persisted) /
                                        sent without arrived; NAN without settled */
    double persisted_rate; /* persisted during the load / elapsed: what the collector kept up with */
    double peak_depth;     /* the deepest queue seen during the load */
};

/**
 * @brief Judge a cell by the rules. Order: incomplete, discarded (drift), lossy (loss_in above the
 * tolerance or a drop counter moved), positive (slope_all and slope_last_half both above the threshold,
 * or cut_short), flat. Incomplete: interrupted, fewer than 3 load samples or 3 depth readings (a queue
 * not seen is not bounded), or, unless cut short, ended more than one sample interval before window_s
 * (a cell is flat only when it held for its whole window).
 * @param[in] in The cell's samples (not kept).
 * @param[in] r The run's rules.
 * @param[out] out The verdict and every number behind it, filled whatever the verdict.
 */
void ceil_cell_judge(const struct ceil_cell_input *in, const struct ceil_rules *r,
                     struct ceil_cell_result *out);

/**
 * @brief The fit of a running cell's queue depth so far, as ceil_cell_judge() fits it (from the first
 * reading under load): what progress lines show.
 */
void ceil_cell_slope_so_far(const struct ceil_cell_input *in, struct ceil_fit *out);

/**
 * @return 1 when a running cell may stop now as positive: at least early_min_share of its window has
 * passed, five readings under load were taken, and their fit passes early_factor x the threshold.
 */
int ceil_cell_early(const struct ceil_cell_input *in, const struct ceil_rules *r);

/* The search for the sustained ceiling over per-device rates: up by doubling from the first level while
 * cells are flat (down by halving while they are not), then bisection between the highest flat and the
 * lowest non-flat level to the precision. */
struct ceil_search {
    double from, to;    /* the first level and the highest one tried */
    double precision;   /* as in struct ceil_rules */
    double lo;          /* highest level found flat, 0 while none */
    double hi;          /* lowest level found above the ceiling, 0 while none */
    double next;        /* the level ceil_search_next() gives */
    unsigned discards;  /* discarded cells at the current level in a row */
    unsigned cells;     /* cells recorded */
    int done;           /* 1: no more cells */
    int no_answer;      /* 1 once done without an answer (nothing flat, or two discards in a row) */
    char why_done[160]; /* why it ended */
};

/* The lowest level the search goes down to, as a share of from. */
#define CEIL_SEARCH_FLOOR_SHARE (1.0 / 1024.0)

/** @brief Start a search at level @p from (> 0), going no higher than @p to (>= from). */
void ceil_search_init(struct ceil_search *s, double from, double to, double precision);

/** @return 1 and the level of the next cell in @p level, or 0 when the search is over. */
int ceil_search_next(const struct ceil_search *s, double *level);

/**
 * @brief Record the verdict of the cell at @p level (the one ceil_search_next() gave). A discarded cell is
 * tried again once; a second discard in a row ends the search (no answer). An incomplete cell ends it.
 */
void ceil_search_record(struct ceil_search *s, double level, enum ceil_verdict v);

/** @return The answer, the highest level found flat (per device), or 0 when there is none (no_answer). */
double ceil_search_answer(const struct ceil_search *s);

/* A service rate measured from a drain: the burst stopped at t_stop, then the persisted counter's slope
 * while a backlog remained. */
struct ceil_drain {
    double rate;       /* messages per second drained, 0 when not measured */
    double peak_depth; /* backlog when the load stopped */
    double drain_s;    /* seconds from the stop until the backlog was gone (at most 1 % of its value at the
                          stop), or until the last sample */
    size_t points;     /* samples in the fit */
    char why[160];     /* when rate is 0: why it was not measured (no backlog built, too few samples) */
};

/**
 * @brief Fit the drain of @p samples (the burst's and the drain's, t_s from the burst's start) after
 * @p t_stop: the persisted counter over the samples from t_stop while the depth stayed above
 * 10 % of its value at t_stop. Not measured when the depth at the stop was under @p min_backlog
 * messages or fewer than 3 samples fall in the drain.
 */
void ceil_drain_fit(const struct ceil_sample *samples, size_t n, double t_stop, double min_backlog,
                    struct ceil_drain *out);

/* Loss isolation: (1) against (3) over a sustained run at about half the ceiling. */
struct ceil_loss_check {
    double sent, persisted; /* the differences compared */
    double share;           /* |sent - persisted| / sent */
    int within_tolerance;   /* 1 when share <= tolerance (and sent > 0) */
};

/** @brief Compare @p sent and @p persisted (differences over the run) within @p tolerance. */
void ceil_loss_isolation(double sent, double persisted, double tolerance, struct ceil_loss_check *out);

/* Summary statistics of a probe's samples. */
struct ceil_stats {
    size_t count;               /* finite values */
    double mean, p50, min, max; /* NAN when count is 0 */
};

/** @brief Statistics of the finite values of @p v (@p n of them; the array is not changed). */
void ceil_stats_of(const double *v, size_t n, struct ceil_stats *out);

/* The identity: throughput = messages per work unit / service time per work unit x workers. */
struct ceil_identity {
    double predicted; /* messages per second the identity gives */
    double measured;  /* the throughput it is compared with */
    double error;     /* (predicted - measured) / measured */
    int reproduces;   /* 1 when |error| <= the identity tolerance */
};

/**
 * @brief Check the identity with @p per_unit messages per work unit, @p service_ms milliseconds per work
 * unit and @p workers workers (1 when NAN) against @p measured messages per second.
 * @return 0, or -1 when an input is missing or not positive (nothing to check).
 */
int ceil_identity_check(double per_unit, double service_ms, double workers, double measured, double tolerance,
                        struct ceil_identity *out);

/**
 * @return 1 when the fleet was silent: its sent counter moved by no more than @p allowed between two
 * readings taken while no load was offered.
 */
int ceil_silent(double sent_before, double sent_after, double allowed);

#endif
