/*
 * Rate profiles and arrival schedules (see rate_profile.h). Times are
 * integer microseconds from the profile's start; the integral is a double
 * (53 bits: a microsecond's share of a message stays exact for years at a
 * million per second), and every inverse is made exact against it by
 * stepping to the first microsecond where it reaches the target, so the
 * paced count in [0, T] is floor(integral) whatever rounding the closed
 * forms did.
 */
#include "rate_profile.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RP_US_PER_S 1e6
#define RP_TWO_PI   6.283185307179586476925
/* Newton steps of sine's inverse at most (it converges in about five; bisection guards the rest). */
#define RP_SINE_MAX_STEPS 60

/* ------------------------------------------------------------------ parsing */

/* A finite number of at least 0, the whole of [s, e) (no sign, no spaces). */
static int
parse_number(const char *s, const char *e, double *out)
{
    char buf[64], *end;
    size_t n = (size_t)(e - s);
    double v;

    if (!n || n >= sizeof buf || !(isdigit((unsigned char)*s) || *s == '.')) {
        return -1;
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    v = strtod(buf, &end);
    if (end == buf || *end || !isfinite(v) || v < 0) {
        return -1;
    }
    *out = v;
    return 0;
}

/* A rate: a number from 0 to RATE_PROFILE_MAX_RATE. */
static int
parse_rate(const char *s, const char *e, double *out)
{
    double v;

    if (parse_number(s, e, &v) || v > RATE_PROFILE_MAX_RATE) {
        return -1;
    }
    *out = v;
    return 0;
}

/* A duration: seconds, or a number with s, m or h; at least 1 us and at most RATE_PROFILE_MAX_SPAN_US. */
static int
parse_span(const char *s, const char *e, uint64_t *out_us)
{
    double unit = 1, v;

    if (e > s && (e[-1] == 's' || e[-1] == 'm' || e[-1] == 'h')) {
        unit = e[-1] == 'h' ? 3600 : e[-1] == 'm' ? 60 : 1;
        e--;
    }
    if (parse_number(s, e, &v)) {
        return -1;
    }
    v *= unit * RP_US_PER_S;
    if (v < 1 || v > (double)RATE_PROFILE_MAX_SPAN_US) {
        return -1;
    }
    *out_us = (uint64_t)(v + 0.5);
    return 0;
}

/* The fields of "a:b:c" after the shape's name: exactly @p want of them, their bounds in @p f. */
static int
split_fields(const char *s, const char **f, const char **fe, int want)
{
    int n = 0;

    for (;;) {
        const char *c = strchr(s, ':');
        if (n == want) {
            return -1;
        }
        f[n] = s;
        fe[n] = c ? c : s + strlen(s);
        n++;
        if (!c) {
            break;
        }
        s = c + 1;
    }
    return n == want ? 0 : -1;
}

static void
field_text(const char *s, const char *e, char *buf, size_t len)
{
    snprintf(buf, len, "%.*s", (int)(e - s > 40 ? 40 : e - s), s);
}

#define BAD_RATE_TEXT "must be a number from 0 to 1000000 per second"
#define BAD_SPAN_TEXT "must be a duration above 0 (seconds, or with s, m or h), at most 30 days"

static enum fleet_err
parse_staged(const char *s, struct rate_profile *p, char *err, size_t err_len)
{
    char part[48];
    uint64_t start_us = 0;
    double mass = 0;

    p->shape = RATE_STAGED;
    p->stage_count = 0;
    while (*s || !p->stage_count) {
        const char *end = strchr(s, ','), *at;
        uint64_t d_us;
        double r;
        end = end ? end : s + strlen(s);
        at = memchr(s, '@', (size_t)(end - s));
        if (p->stage_count == RATE_PROFILE_MAX_STAGES) {
            snprintf(err, err_len, "staged profile: at most %d stages", RATE_PROFILE_MAX_STAGES);
            return FLEET_ERR_INVAL;
        }
        if (!at) {
            field_text(s, end, part, sizeof part);
            snprintf(err, err_len, "staged profile: stage %u \"%s\" must be RATE@DURATION",
                     p->stage_count + 1, part);
            return FLEET_ERR_INVAL;
        }
        if (parse_rate(s, at, &r)) {
            field_text(s, at, part, sizeof part);
            snprintf(err, err_len, "staged profile: stage %u rate \"%s\" " BAD_RATE_TEXT, p->stage_count + 1,
                     part);
            return FLEET_ERR_INVAL;
        }
        if (parse_span(at + 1, end, &d_us)) {
            field_text(at + 1, end, part, sizeof part);
            snprintf(err, err_len, "staged profile: stage %u duration \"%s\" " BAD_SPAN_TEXT,
                     p->stage_count + 1, part);
            return FLEET_ERR_INVAL;
        }
        if (start_us + d_us > RATE_PROFILE_MAX_SPAN_US) {
            snprintf(err, err_len, "staged profile: the stages last more than 30 days");
            return FLEET_ERR_INVAL;
        }
        p->stage_rate[p->stage_count] = r;
        p->stage_start_us[p->stage_count] = start_us;
        p->stage_mass[p->stage_count] = mass;
        p->stage_count++;
        mass += r * (double)d_us / RP_US_PER_S;
        start_us += d_us;
        if (!*end) {
            break;
        }
        s = end + 1;
        if (!*s) {
            snprintf(err, err_len, "staged profile: a stage is missing after the last comma");
            return FLEET_ERR_INVAL;
        }
    }
    return FLEET_OK;
}

enum fleet_err
rate_profile_parse(const char *text, struct rate_profile *out, char *err, size_t err_len)
{
    struct rate_profile p;
    const char *f[3], *fe[3];
    char part[48];
    enum fleet_err rc = FLEET_OK;

    memset(&p, 0, sizeof p);
    if (!text || !*text) {
        snprintf(err, err_len,
                 "a rate profile is empty: give R, linear:FROM:TO:OVER, sine:MEAN:AMPLITUDE:PERIOD "
                 "or staged:R1@D1,R2@D2,...");
        return FLEET_ERR_INVAL;
    }
    if (strlen(text) > RATE_PROFILE_MAX_TEXT) {
        snprintf(err, err_len, "a rate profile is at most %d characters", RATE_PROFILE_MAX_TEXT);
        return FLEET_ERR_INVAL;
    }
    if (!strncmp(text, "linear:", 7)) {
        p.shape = RATE_LINEAR;
        if (split_fields(text + 7, f, fe, 3)) {
            snprintf(err, err_len, "linear profile \"%s\" must be linear:FROM:TO:OVER", text);
            return FLEET_ERR_INVAL;
        }
        if (parse_rate(f[0], fe[0], &p.r0) || parse_rate(f[1], fe[1], &p.r1)) {
            int bad = parse_rate(f[0], fe[0], &p.r0) ? 0 : 1;
            field_text(f[bad], fe[bad], part, sizeof part);
            snprintf(err, err_len, "linear profile: %s \"%s\" " BAD_RATE_TEXT, bad ? "TO" : "FROM", part);
            return FLEET_ERR_INVAL;
        }
        if (parse_span(f[2], fe[2], &p.span_us)) {
            field_text(f[2], fe[2], part, sizeof part);
            snprintf(err, err_len, "linear profile: OVER \"%s\" " BAD_SPAN_TEXT, part);
            return FLEET_ERR_INVAL;
        }
    } else if (!strncmp(text, "sine:", 5)) {
        p.shape = RATE_SINE;
        if (split_fields(text + 5, f, fe, 3)) {
            snprintf(err, err_len, "sine profile \"%s\" must be sine:MEAN:AMPLITUDE:PERIOD", text);
            return FLEET_ERR_INVAL;
        }
        if (parse_rate(f[0], fe[0], &p.r0) || parse_rate(f[1], fe[1], &p.r1)) {
            int bad = parse_rate(f[0], fe[0], &p.r0) ? 0 : 1;
            field_text(f[bad], fe[bad], part, sizeof part);
            snprintf(err, err_len, "sine profile: %s \"%s\" " BAD_RATE_TEXT, bad ? "AMPLITUDE" : "MEAN",
                     part);
            return FLEET_ERR_INVAL;
        }
        if (p.r1 > p.r0) {
            snprintf(err, err_len, "sine profile: AMPLITUDE %g is above MEAN %g (the rate would go below 0)",
                     p.r1, p.r0);
            return FLEET_ERR_INVAL;
        }
        if (parse_span(f[2], fe[2], &p.span_us)) {
            field_text(f[2], fe[2], part, sizeof part);
            snprintf(err, err_len, "sine profile: PERIOD \"%s\" " BAD_SPAN_TEXT, part);
            return FLEET_ERR_INVAL;
        }
    } else if (!strncmp(text, "staged:", 7)) {
        if ((rc = parse_staged(text + 7, &p, err, err_len))) {
            return rc;
        }
    } else {
        p.shape = RATE_CONSTANT;
        if (parse_rate(text, text + strlen(text), &p.r0)) {
            field_text(text, text + strlen(text), part, sizeof part);
            snprintf(err, err_len,
                     "rate profile \"%s\" is neither a rate (a number from 0 to 1000000 per second) nor "
                     "linear:FROM:TO:OVER, sine:MEAN:AMPLITUDE:PERIOD or staged:R1@D1,R2@D2,...",
                     part);
            return FLEET_ERR_INVAL;
        }
    }
    snprintf(p.text, sizeof p.text, "%s", text);
    *out = p;
    return FLEET_OK;
}

void
rate_profile_constant(struct rate_profile *out, double rate)
{
    memset(out, 0, sizeof *out);
    out->shape = RATE_CONSTANT;
    out->r0 = rate > 0 ? rate : 0;
    snprintf(out->text, sizeof out->text, "%.17g", out->r0);
}

int
rate_profile_is_zero(const struct rate_profile *p)
{
    switch (p->shape) {
    case RATE_CONSTANT:
    case RATE_SINE:
        return p->r0 <= 0;
    case RATE_LINEAR:
        return p->r0 <= 0 && p->r1 <= 0;
    case RATE_STAGED:
        for (uint32_t i = 0; i < p->stage_count; i++) {
            if (p->stage_rate[i] > 0) {
                return 0;
            }
        }
        return 1;
    }
    return 1;
}

/* ------------------------------------------------------------------ the rate and its integral */

/* The stage in force at @p t_us. */
static uint32_t
stage_at(const struct rate_profile *p, uint64_t t_us)
{
    uint32_t i = p->stage_count - 1;

    while (i && p->stage_start_us[i] > t_us) {
        i--;
    }
    return i;
}

double
rate_profile_rate(const struct rate_profile *p, uint64_t t_us)
{
    switch (p->shape) {
    case RATE_CONSTANT:
        return p->r0;
    case RATE_LINEAR:
        return t_us >= p->span_us ? p->r1 : p->r0 + (p->r1 - p->r0) * (double)t_us / (double)p->span_us;
    case RATE_SINE:
        return p->r0 + p->r1 * sin(RP_TWO_PI * (double)(t_us % p->span_us) / (double)p->span_us);
    case RATE_STAGED:
        return p->stage_rate[stage_at(p, t_us)];
    }
    return 0;
}

/* Sine's integral over [0, t_s] within one period (the periods before add MEAN * PERIOD each). */
static double
sine_part(const struct rate_profile *p, double t_s)
{
    double period_s = (double)p->span_us / RP_US_PER_S;

    return p->r0 * t_s + p->r1 * period_s / RP_TWO_PI * (1 - cos(RP_TWO_PI * t_s / period_s));
}

double
rate_profile_integral(const struct rate_profile *p, uint64_t t_us)
{
    double t_s = (double)t_us / RP_US_PER_S;

    switch (p->shape) {
    /* Products before quotients: 100 per second times 5,020,000 us is 502 exactly, not 501.99999... */
    case RATE_CONSTANT:
        return p->r0 * (double)t_us / RP_US_PER_S;
    case RATE_LINEAR: {
        double over_s = (double)p->span_us / RP_US_PER_S;
        if (t_us >= p->span_us) {
            return (p->r0 + p->r1) * over_s / 2 + p->r1 * (double)(t_us - p->span_us) / RP_US_PER_S;
        }
        return p->r0 * (double)t_us / RP_US_PER_S + (p->r1 - p->r0) * t_s * t_s / (2 * over_s);
    }
    case RATE_SINE:
        /* Whole periods apart from the rest, so that cos() sees a small argument on long runs. */
        return p->r0 * (double)(t_us / p->span_us) * ((double)p->span_us / RP_US_PER_S) +
               sine_part(p, (double)(t_us % p->span_us) / RP_US_PER_S);
    case RATE_STAGED: {
        uint32_t i = stage_at(p, t_us);
        return p->stage_mass[i] + p->stage_rate[i] * (double)(t_us - p->stage_start_us[i]) / RP_US_PER_S;
    }
    }
    return 0;
}

/* ------------------------------------------------------------------ the inverse */

/* Sine within one period: the t_s in [0, PERIOD] where sine_part() reaches @p rem. Newton, bisection-guarded.
 */
static double
sine_invert(const struct rate_profile *p, double rem)
{
    double period_s = (double)p->span_us / RP_US_PER_S, lo = 0, hi = period_s, t = rem / p->r0;

    if (t > hi) {
        t = hi;
    }
    for (int i = 0; i < RP_SINE_MAX_STEPS; i++) {
        double g = sine_part(p, t) - rem;
        double slope = p->r0 + p->r1 * sin(RP_TWO_PI * t / period_s);
        double next;
        if (g < 0) {
            lo = t;
        } else {
            hi = t;
        }
        next = slope > 0 ? t - g / slope : (lo + hi) / 2;
        if (next <= lo || next >= hi) {
            next = (lo + hi) / 2; /* Newton left the bracket (near a trough where the slope is ~0) */
        }
        if (fabs(next - t) < 1e-9) {
            return next;
        }
        t = next;
    }
    return t;
}

/* The closed form's estimate in seconds, or a negative number when the integral never reaches @p m. */
static double
estimate_s(const struct rate_profile *p, double m)
{
    switch (p->shape) {
    case RATE_CONSTANT:
        return p->r0 > 0 ? m / p->r0 : -1;
    case RATE_LINEAR: {
        double over_s = (double)p->span_us / RP_US_PER_S, ramp = (p->r0 + p->r1) * over_s / 2;
        double a = (p->r1 - p->r0) / (2 * over_s), disc;
        if (m > ramp) {
            return p->r1 > 0 ? over_s + (m - ramp) / p->r1 : -1;
        }
        if (fabs(a) < 1e-300) {
            return m / p->r0;
        }
        /* a t^2 + r0 t = m, in the form that does not cancel when a is small. */
        disc = p->r0 * p->r0 + 4 * a * m;
        return 2 * m / (p->r0 + sqrt(disc > 0 ? disc : 0));
    }
    case RATE_SINE: {
        double period_s = (double)p->span_us / RP_US_PER_S, per = p->r0 * period_s, k;
        if (p->r0 <= 0) {
            return -1;
        }
        k = floor(m / per);
        return k * period_s + sine_invert(p, m - k * per);
    }
    case RATE_STAGED: {
        uint32_t j = 0;
        while (j + 1 < p->stage_count && p->stage_mass[j + 1] < m) {
            j++;
        }
        if (p->stage_rate[j] <= 0) {
            return -1;
        }
        return (double)p->stage_start_us[j] / RP_US_PER_S + (m - p->stage_mass[j]) / p->stage_rate[j];
    }
    }
    return -1;
}

uint64_t
rate_profile_time_of(const struct rate_profile *p, double m)
{
    double est;
    uint64_t lo, hi, step;

    if (m <= 0) {
        return 0;
    }
    /* Not a number comes from rates so small that a period's mass underflows (sine:1e-311:0:50): never. */
    est = estimate_s(p, m);
    if (!(est >= 0) || est * RP_US_PER_S > 4e18) {
        return RATE_NEVER;
    }
    /* Bracket the first microsecond where the integral reaches m around the estimate (a step or two
     * away), then halve: exact against rate_profile_integral(), whatever the closed form rounded.
     * Invariant of the halving: integral(lo) < m <= integral(hi); integral(0) = 0 < m bounds the search. */
    hi = (uint64_t)ceil(est * RP_US_PER_S);
    for (step = 1; rate_profile_integral(p, hi) < m; step *= 2) {
        if (hi > RATE_PROFILE_MAX_SPAN_US * 1000000ull) {
            return RATE_NEVER; /* rounding said it comes, the integral says it never does */
        }
        hi += step;
    }
    lo = hi ? hi - 1 : 0;
    for (step = 2; rate_profile_integral(p, lo) >= m; step *= 2) {
        hi = lo;
        lo = lo > step ? lo - step : 0;
    }
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (rate_profile_integral(p, mid) >= m) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    return hi;
}

/* ------------------------------------------------------------------ arrivals */

enum fleet_err
rate_arrivals_kind_parse(const char *text, enum rate_arrival_kind *out)
{
    if (!strcmp(text, "paced")) {
        *out = RATE_ARRIVALS_PACED;
    } else if (!strcmp(text, "poisson")) {
        *out = RATE_ARRIVALS_POISSON;
    } else {
        return FLEET_ERR_INVAL;
    }
    return FLEET_OK;
}

/* splitmix64's finaliser. */
static uint64_t
mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* splitmix64: a fast, well-mixed stream per device. */
static uint64_t
next_draw(uint64_t *state)
{
    return mix64(*state += 0x9e3779b97f4a7c15ull);
}

/* An exponential gap of mean 1. */
static double
exp_gap(uint64_t *state)
{
    double u = (double)(next_draw(state) >> 11) / 9007199254740992.0; /* [0, 1) */
    return -log1p(-u);
}

static void
schedule(struct rate_arrivals *a)
{
    uint64_t t = rate_profile_time_of(a->profile, a->mass);

    a->next_us = t == RATE_NEVER ? RATE_NEVER : a->origin_us + t;
}

void
rate_arrivals_init(struct rate_arrivals *a, const struct rate_profile *p, enum rate_arrival_kind kind,
                   uint32_t unit, uint64_t draw, double phase, monotime_us origin_us)
{
    memset(a, 0, sizeof *a);
    a->profile = p;
    a->origin_us = origin_us;
    a->kind = (uint8_t)kind;
    a->unit = unit ? unit : 1;
    /* Mixed: devices' draws a fixed step apart would otherwise walk one stream, shifted. */
    a->rng = mix64(draw ^ 0x5eed5eed5eed5eedull);
    if (kind == RATE_ARRIVALS_POISSON) {
        a->mass = (double)a->unit * exp_gap(&a->rng);
    } else {
        a->phase = phase < 0 ? 0 : phase > 1 ? 1 : phase;
        a->mass = (1 - a->phase) * (double)a->unit;
    }
    schedule(a);
}

double
rate_phase_spread(uint32_t index, uint64_t salt)
{
    /* 2^64 / golden ratio: index times it, modulo 2^64, is the fractional part in fixed point. */
    uint64_t frac = (uint64_t)index * 0x9e3779b97f4a7c15ull + mix64(salt);

    return (double)(frac >> 11) / 9007199254740992.0;
}

void
rate_arrivals_take(struct rate_arrivals *a)
{
    a->count++;
    if (a->kind == RATE_ARRIVALS_POISSON) {
        a->mass += (double)a->unit * exp_gap(&a->rng);
    } else {
        /* From the count, never from the last arrival: no error accumulates. */
        a->mass = ((double)a->count + 1 - a->phase) * (double)a->unit;
    }
    schedule(a);
}

uint64_t
rate_arrivals_skip_lag(struct rate_arrivals *a, monotime_us now_us, uint64_t max_lag_us)
{
    double m_now;
    uint64_t skipped = 0;

    if (a->next_us == RATE_NEVER || now_us <= a->next_us + max_lag_us) {
        return 0;
    }
    m_now = rate_profile_integral(a->profile, now_us - a->origin_us);
    if (a->kind == RATE_ARRIVALS_POISSON) {
        /* Memoryless: the expected number lost, and a fresh gap from now. */
        skipped = (uint64_t)((m_now - a->mass) / (double)a->unit) + 1;
        a->count += skipped;
        a->mass = m_now + (double)a->unit * exp_gap(&a->rng);
    } else {
        /* The last arrival due by now stays pending (it goes out at once); those before it are given up. */
        double last = floor(m_now / (double)a->unit + a->phase) - 1;
        if (last > (double)a->count) {
            skipped = (uint64_t)last - a->count;
            a->count = (uint64_t)last;
            a->mass = ((double)a->count + 1 - a->phase) * (double)a->unit;
        }
    }
    schedule(a);
    return skipped;
}

void
rate_arrivals_resume(struct rate_arrivals *a, monotime_us now_us)
{
    if (a->next_us != RATE_NEVER && a->next_us < now_us) {
        a->origin_us += now_us - a->next_us;
        a->next_us = now_us;
    }
}
