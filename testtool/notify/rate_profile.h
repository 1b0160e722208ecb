/*
 * Offered load, shaped: a rate profile says how many messages per second a
 * device pushes at each instant of a run, and an arrival schedule turns it
 * into the instants of the messages themselves.
 *
 * Profiles: `R` (constant), `linear:FROM:TO:OVER` (from FROM to TO over
 * OVER, then TO holds), `sine:MEAN:AMPLITUDE:PERIOD` (AMPLITUDE <= MEAN, so
 * the rate is never negative), `staged:R1@D1,R2@D2,...` (R1 for D1, then R2
 * for D2, ...; after the last stage its rate holds). Durations are seconds,
 * or with an s, m or h suffix. Rates are per device per second.
 *
 * Arrivals: paced puts the k-th message at the first microsecond where the
 * integral of the rate reaches k (minus the device's phase), computed from
 * k, never from the previous arrival, so nothing drifts and the count in
 * [0, T] is exactly floor(integral + phase). Poisson is the
 * non-homogeneous Poisson process made by inverting the integral at sums
 * of exponential gaps, each device drawing from its own seeded stream.
 * Every shape's integral has a closed form (sine's inverse takes a few
 * Newton steps): one arrival costs O(1) whatever the run's length, and a
 * stretch at rate 0 is one long wait, not a loop.
 */
#ifndef FLEET_RATE_PROFILE_H
#define FLEET_RATE_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "loop.h"

/* Most stages of a staged profile: a profile is copied into configs and control actions, so it is bounded. */
#define RATE_PROFILE_MAX_STAGES 16
/* Highest rate any profile reaches, per device per second (as --notification-rate's bound). */
#define RATE_PROFILE_MAX_RATE 1e6
/* Longest duration in a profile: 30 days, in microseconds (keeps every time well inside 64 bits). */
#define RATE_PROFILE_MAX_SPAN_US (30ull * 86400ull * 1000000ull)
/* Longest profile text kept (for reports and the action log), without the NUL. */
#define RATE_PROFILE_MAX_TEXT 191
/* An arrival that never comes (a profile that stays at 0). */
#define RATE_NEVER UINT64_MAX

enum rate_shape {
    RATE_CONSTANT = 0, /* r0 per second */
    RATE_LINEAR,       /* r0 to r1 over span_us, then r1 */
    RATE_SINE,         /* r0 + r1 * sin(2 pi t / span_us) */
    RATE_STAGED,       /* stage_rate[i] from stage_start_us[i]; the last one holds */
};

struct rate_profile {
    enum rate_shape shape;                            /* which formula */
    double r0;                                        /* constant: the rate; linear: FROM; sine: MEAN */
    double r1;                                        /* linear: TO; sine: AMPLITUDE (<= MEAN) */
    uint64_t span_us;                                 /* linear: OVER; sine: PERIOD (> 0 for both) */
    uint32_t stage_count;                             /* staged: stages used (>= 1) */
    double stage_rate[RATE_PROFILE_MAX_STAGES];       /* staged: each stage's rate */
    uint64_t stage_start_us[RATE_PROFILE_MAX_STAGES]; /* staged: when each starts (the first at 0) */
    double stage_mass[RATE_PROFILE_MAX_STAGES];       /* staged: the integral where each starts */
    char text[RATE_PROFILE_MAX_TEXT + 1];             /* the profile as given (reports, action log) */
};

enum rate_arrival_kind {
    RATE_ARRIVALS_PACED = 0, /* exact: the k-th where the integral reaches k */
    RATE_ARRIVALS_POISSON,   /* non-homogeneous Poisson, seeded */
};

/* A device's schedule of one push stream. */
struct rate_arrivals {
    const struct rate_profile *profile; /* the rate (not owned: outlives the schedule) */
    monotime_us origin_us;              /* the profile's time 0 */
    monotime_us next_us;                /* when the pending arrival is due, RATE_NEVER: none will come */
    double mass;                        /* the integral at which the pending arrival falls */
    double phase;                       /* paced: the device's offset in arrivals, [0, 1] */
    uint64_t rng;                       /* Poisson: the device's draw state */
    uint64_t count;                     /* arrivals taken (rate_arrivals_take()) */
    uint32_t unit; /* integral per arrival (a burst of N messages per arrival: N), >= 1 */
    uint8_t kind;  /* enum rate_arrival_kind */
};

/**
 * @brief Parse a profile: "R", "linear:FROM:TO:OVER", "sine:MEAN:AMPLITUDE:PERIOD", "staged:R1@D1,...".
 * @param[in] text The profile.
 * @param[out] out The profile (text kept in out->text); untouched on error.
 * @param[out] err On error, what is wrong and which part ("sine AMPLITUDE 12 is above MEAN 10").
 * @return FLEET_OK or FLEET_ERR_INVAL.
 */
enum fleet_err rate_profile_parse(const char *text, struct rate_profile *out, char *err, size_t err_len);

/** @brief Make @p out the constant profile @p rate (>= 0), its text the number. */
void rate_profile_constant(struct rate_profile *out, double rate);

/** @return 1 when @p p never sends (the constant 0, or every stage and the last one at 0). */
int rate_profile_is_zero(const struct rate_profile *p);

/** @return The rate (per second) at @p t_us after the profile's start. */
double rate_profile_rate(const struct rate_profile *p, uint64_t t_us);

/** @return The integral of the rate over [0, @p t_us]: the messages expected by then. */
double rate_profile_integral(const struct rate_profile *p, uint64_t t_us);

/**
 * @return The first microsecond at which the integral reaches @p mass (0 for mass <= 0), RATE_NEVER when
 * it never does. Closed form, then a few steps that make it exact for rate_profile_integral().
 */
uint64_t rate_profile_time_of(const struct rate_profile *p, double mass);

/** @brief Parse "paced" or "poisson" into @p out. @return FLEET_OK or FLEET_ERR_INVAL. */
enum fleet_err rate_arrivals_kind_parse(const char *text, enum rate_arrival_kind *out);

/**
 * @brief Start a schedule of @p p at @p origin_us.
 * @param[in] p The profile; must outlive the schedule (start a new schedule to change it).
 * @param[in] kind Paced or Poisson.
 * @param[in] unit Messages per arrival (>= 1): each arrival stands for that much of the integral.
 * @param[in] draw Any 64 bits of the device (from the seed and its index): Poisson's stream.
 * @param[in] phase Paced: the k-th arrival (k >= 1) where the integral reaches (k - phase) * unit; 0: one
 * unit in, 1: the first at the origin, rate_phase_spread(): a fleet spread evenly. Poisson ignores it.
 */
void rate_arrivals_init(struct rate_arrivals *a, const struct rate_profile *p, enum rate_arrival_kind kind,
                        uint32_t unit, uint64_t draw, double phase, monotime_us origin_us);

/**
 * @return The paced phase of device @p index, in [0, 1): the fractional parts of index times the golden
 * ratio (plus @p salt's fixed share), so any run of devices covers [0, 1) about evenly. A fleet's paced
 * count per second then stays within a few messages of the profile's, where independent draws would
 * scatter it by about sqrt(devices) / 2.
 */
double rate_phase_spread(uint32_t index, uint64_t salt);

/** @brief The pending arrival was sent: schedule the next one (a->next_us). O(1). */
void rate_arrivals_take(struct rate_arrivals *a);

/**
 * @brief Give up the arrivals more than @p max_lag_us overdue at @p now_us (a loop that stalled).
 * @return The arrivals given up (Poisson: the expected number), 0 when not that far behind.
 */
uint64_t rate_arrivals_skip_lag(struct rate_arrivals *a, monotime_us now_us, uint64_t max_lag_us);

/** @brief After a pause: shift the profile's time so that an overdue arrival is due at @p now_us, no burst.
 */
void rate_arrivals_resume(struct rate_arrivals *a, monotime_us now_us);

#endif
