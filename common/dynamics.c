/*
 * Values that move, as pure functions (see dynamics.h). An interface's
 * utilisation is
 *
 *     u(t) = mid + a1 sin(2 pi t / P1 + p1) + a2 sin(2 pi t / P2 + p2)
 *
 * with P1 the profile's period, P2 tens of seconds (the jitter, its share of
 * the amplitude the profile's jitter) and the phases drawn from (seed,
 * interface, direction), and a1 + a2 a little below the half-band, so u
 * stays in [util_min, util_max]. The octet counter is base + speed/8 times the
 * integral of u, in closed form, so a read costs the same after ten years as
 * after ten seconds.
 *
 * Monotonic by construction, not by luck. The linear part (mid times time) is
 * exact integer arithmetic in 128 bits with mid quantised to parts per
 * billion. Each wave's integral, K (cos p - cos(2 pi (t mod P) / P + p)), is
 * periodic, so time is reduced modulo its integer period first and the
 * double only ever holds a bounded angle and a bounded value; its error is a
 * few ulps of K. The waves keep a margin above util_min that is wider than
 * that error can eat in one millisecond (dyn_margin()), so the computed sum
 * still grows between any two instants a millisecond apart, and floor keeps
 * that order. Packet, error and discard counters are floors of integer
 * multiples of the octet counter, so they stay monotonic too. Counters wrap
 * modulo 2^64 like Counter64, which at 400 Gb/s takes over ten years.
 */
#include "dynamics.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

/* splitmix64 increment (the golden ratio in 64 bits). */
#define DYN_GAMMA UINT64_C(0x9e3779b97f4a7c15)
/* Base octet counters are below 2^40: Counter32 views wrap within hours at high rates from the start. */
#define DYN_BASE_OCTETS_MASK ((UINT64_C(1) << 40) - 1)
/* The utilisation mid-point is quantised to parts per billion, so the linear term is integer arithmetic. */
#define DYN_PPB 1000000000u
/* Bits per octet times milliseconds per second: speed_bps / 8000 = octets per millisecond at full speed. */
#define DYN_BITS_MS 8000u
/* Shares and per-million rates are quantised to 2^-40 (a relative error below 1e-12): floor(n * share)
 * is then a multiply and a shift, exact and non-decreasing in n, with no 128-bit division. */
#define DYN_SHARE_BITS 40
/* Jitter of a gauge changes this often. */
#define DYN_GAUGE_STEP_MS 5000u
/* Share of a gauge's half-band given to the jitter; the slow wave gets the rest. */
#define DYN_GAUGE_JITTER 0.2
/* The jitter wave of counters has a period in [DYN_JITTER_MIN_MS, DYN_JITTER_MIN_MS + DYN_JITTER_SPAN_MS). */
#define DYN_JITTER_MIN_MS  20000u
#define DYN_JITTER_SPAN_MS 100000u
/* Distinct jitter periods. */
#define DYN_JITTER_PERIODS 16u
/* Slots of the per-thread cache of wave angles (a prime, indexed by period). */
#define DYN_ANGLE_SLOTS 61u

#define DYN_TWO_PI 6.283185307179586476925286766559

/* Salts that keep the hashes of different uses apart. */
enum dyn_salt {
    DYN_SALT_DEVICE = 1, /* device seeds */
    DYN_SALT_BASE,       /* base octets */
    DYN_SALT_WAVE,       /* wave periods and phases: DYN_SALT_WAVE + 2 * wave (+1) */
    DYN_SALT_GAUGE = 16, /* gauge phase */
    DYN_SALT_GAUGE_JITTER,
};

/* Waves of one counter: the profile's period and the jitter (each costs one sincos per read). */
#define DYN_WAVES 2

struct dyn_wave {
    uint64_t period_ms; /* >= 1 */
    uint32_t phase_k;   /* phase = 2 pi phase_k / DYN_PHASE_STEPS */
    double amp;         /* share of speed, >= 0 */
};

/*
 * Phases come in DYN_PHASE_STEPS steps, so their sine and cosine are a table
 * lookup: a counter then costs one sincos per wave instead of two cosines.
 */
#define DYN_PHASE_STEPS 4096u

static double phase_cos[DYN_PHASE_STEPS];
static double phase_sin[DYN_PHASE_STEPS];
static pthread_once_t phase_once = PTHREAD_ONCE_INIT;

static void
phase_table_init(void)
{
    for (uint32_t k = 0; k < DYN_PHASE_STEPS; k++) {
        sincos(DYN_TWO_PI * (double)k / DYN_PHASE_STEPS, &phase_sin[k], &phase_cos[k]);
    }
}

/* splitmix64's finaliser, after its increment. */
static uint64_t
dyn_mix(uint64_t z)
{
    z += DYN_GAMMA;
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

uint64_t
dyn_hash(uint64_t seed, uint64_t a, uint64_t b)
{
    return dyn_mix(dyn_mix(dyn_mix(seed) ^ a) ^ b);
}

uint64_t
dyn_device_seed(uint64_t fleet_seed, uint32_t index)
{
    uint64_t s = dyn_hash(fleet_seed, index, DYN_SALT_DEVICE);

    return s ? s : DYN_GAMMA;
}

/* A hash as a double in [0, 1). */
static double
dyn_unit(uint64_t h)
{
    return (double)(h >> 11) * 0x1.0p-53;
}

static double
dyn_clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/*
 * How far above the band's floor the waves must keep u. Evaluating one wave's
 * integral errs by a few ulps of K = c a P / (2 pi) (c octets per ms at full
 * speed); two reads together by at most ~1e-15 c half P1 (the sum of a is
 * below half, P1 is the longest period). Over one millisecond, u >= floor +
 * margin adds at least c * margin, so a margin of 1e-13 half P1 (100 times
 * the error) keeps every later read at or above every earlier one. The 2e-9
 * covers the ppb quantisation of mid. At a daily period this is a
 * millionth of the band; the longest period allowed (a year) costs 0.3 %.
 */
static double
dyn_margin(double half, uint64_t p1_ms)
{
    return half * 1e-13 * (double)p1_ms + 2e-9;
}

/* The waves of one counter: periods and phases from its two hashes, amplitudes from the prepared band. */
static void
dyn_waves(const struct dyn_traffic *dt, uint64_t h_wave, uint64_t h_base, struct dyn_wave w[DYN_WAVES])
{
    /* Two hashes feed everything (they are a good part of a read's cost): bits 11-30 of h_wave are the
     * jitter's period, the top 12 bits of h_wave and of h_base the phases. */
    double f2 = (double)((h_wave >> 11) & 0xfffff) * 0x1.0p-20;

    w[0].period_ms = dt->p1_ms;
    /* Jitter periods come in DYN_JITTER_PERIODS steps, so one request's interfaces share a few sincos. */
    w[1].period_ms =
        DYN_JITTER_MIN_MS + (uint64_t)(f2 * DYN_JITTER_PERIODS) * (DYN_JITTER_SPAN_MS / DYN_JITTER_PERIODS);
    if (w[1].period_ms > dt->p1_ms) {
        w[1].period_ms = dt->p1_ms;
    }
    w[0].amp = dt->amp[0];
    w[1].amp = dt->amp[1];
    w[0].phase_k = (uint32_t)(h_wave >> 52);
    w[1].phase_k = (uint32_t)(h_base >> 52);
}

/* A share (0..1) in steps of 2^-40. */
static uint64_t
dyn_share_q(double share)
{
    return (uint64_t)llround(dyn_clamp(share, 0.0, 1.0) * 0x1.0p40);
}

void
dyn_traffic_prepare(const struct profile_traffic *tr, struct dyn_traffic *dt)
{
    double lo = dyn_clamp(tr->util_min, 0.0, 1.0);
    double hi = dyn_clamp(tr->util_max, lo, 1.0);
    double mid, half, total, jitter = dyn_clamp(tr->jitter, 0.0, 1.0);
    double m = dyn_clamp(tr->multicast_share, 0.0, 1.0);
    double b = dyn_clamp(tr->broadcast_share, 0.0, 1.0 - m);

    memset(dt, 0, sizeof *dt);
    dt->moving = hi > 0;
    dt->mid_ppb = (uint64_t)llround((lo + hi) / 2 * DYN_PPB);
    mid = (double)dt->mid_ppb / DYN_PPB;
    half = fmin(mid - lo, hi - mid);
    dt->p1_ms = (uint64_t)(tr->period_s ? tr->period_s : 1) * 1000u;
    total = half > 0 ? half - dyn_margin(half, dt->p1_ms) : 0;
    if (total < 0) {
        total = 0;
    }
    dt->waves = half > 0;
    dt->amp[0] = total * (1.0 - jitter);
    dt->amp[1] = total * jitter;
    dt->packet_bytes = tr->packet_bytes ? tr->packet_bytes : 1;
    dt->q_mcast = dyn_share_q(m);
    dt->q_bcast = dyn_share_q(b);
    dt->q_ucast = dyn_share_q(1.0 - m - b);
    dt->q_errors = dyn_share_q(tr->error_ppm / 1e6);
    dt->q_discards = dyn_share_q(tr->discard_ppm / 1e6);
    dt->q_unknown = dyn_share_q(tr->error_ppm / 4e6);
}

/*
 * sin and cos of 2 pi tmod / period. Every interface of a device shares the main period and the
 * instant, and jitter periods come in a few steps, so a per-thread cache answers most calls of one
 * request; the values are the same as computing them, so caching changes no result.
 */
static void
dyn_angle(uint64_t period_ms, uint64_t tmod, double *s, double *c)
{
    static _Thread_local struct {
        uint64_t period_ms; /* 0: empty */
        uint64_t tmod;
        double s, c;
    } cache[DYN_ANGLE_SLOTS];
    uint32_t slot = (uint32_t)(period_ms % DYN_ANGLE_SLOTS);

    if (cache[slot].period_ms != period_ms || cache[slot].tmod != tmod) {
        cache[slot].period_ms = period_ms;
        cache[slot].tmod = tmod;
        sincos(DYN_TWO_PI * (double)tmod / (double)period_ms, &cache[slot].s, &cache[slot].c);
    }
    *s = cache[slot].s;
    *c = cache[slot].c;
}

/*
 * Octets of one direction after @p t_ms, unwrapped (the caller truncates to 64 bits). @p key is
 * (interface position, direction).
 */
static unsigned __int128
dyn_octets(const struct dyn_traffic *dt, uint64_t seed, uint64_t key, uint64_t speed_bps, uint64_t t_ms)
{
    const unsigned __int128 den = (unsigned __int128)DYN_BITS_MS * DYN_PPB;
    uint64_t h_base = dyn_hash(seed, key, DYN_SALT_BASE);
    uint64_t base = h_base & DYN_BASE_OCTETS_MASK;
    double c, wave = 0;
    unsigned __int128 s, sq, sr, x, xq, q;
    struct dyn_wave w[DYN_WAVES];
    __int128 total;

    if (!speed_bps || !dt->moving) {
        return base;
    }
    /*
     * Linear part: floor(speed * mid_ppb * t / (8000 * 10^9)) exactly. Split speed * mid_ppb
     * (< 2^94) by the denominator so no product exceeds 2^115: q = sq t + floor(sr t / den).
     */
    s = (unsigned __int128)speed_bps * dt->mid_ppb;
    sq = s / den;
    sr = s - sq * den;
    x = sr * t_ms;
    xq = x / den;
    q = sq * t_ms + xq;

    /* Waves: each integral is periodic, so only t mod P enters the double arithmetic. */
    if (dt->waves) {
        c = (double)speed_bps / DYN_BITS_MS;
        dyn_waves(dt, dyn_hash(seed, key, DYN_SALT_WAVE), h_base, w);
        pthread_once(&phase_once, phase_table_init);
        for (int i = 0; i < DYN_WAVES; i++) {
            double p = (double)w[i].period_ms;
            double k = c * w[i].amp * p / DYN_TWO_PI;
            double sa, ca;
            /* cos(ph) - cos(alpha + ph), expanded so that only alpha needs a trigonometric call */
            dyn_angle(w[i].period_ms, t_ms % w[i].period_ms, &sa, &ca);
            wave += k * (phase_cos[w[i].phase_k] * (1.0 - ca) + phase_sin[w[i].phase_k] * sa);
        }
    }
    wave = floor((double)(x - xq * den) / (double)den + wave);
    /* Beyond 2^62 octets of wave (speeds far past any interface) precision is gone anyway; stay defined. */
    wave = dyn_clamp(wave, -0x1.0p62, 0x1.0p62);
    total = (__int128)base + (__int128)q + (__int128)(int64_t)wave;
    return total > 0 ? (unsigned __int128)total : 0;
}

/* floor(n * share) with the share in steps of 2^-40: exact, and non-decreasing in n (n < 2^88). */
static uint64_t
dyn_share(uint64_t n, uint64_t q)
{
    return (uint64_t)(((unsigned __int128)n * q) >> DYN_SHARE_BITS);
}

uint64_t
dyn_prep_octets(const struct dyn_traffic *dt, uint64_t seed, uint32_t if_pos, uint64_t speed_bps,
                uint64_t traffic_ms, int out)
{
    return (uint64_t)dyn_octets(dt, seed, ((uint64_t)if_pos << 1) | (out ? 1u : 0u), speed_bps, traffic_ms);
}

void
dyn_prep_derive(const struct dyn_traffic *dt, uint64_t octets, int out, struct dyn_direction_counters *d)
{
    uint64_t pkts = octets / dt->packet_bytes;

    d->octets = octets;
    /* Each a floor of its own non-decreasing function; their sum may trail pkts by up to 2. */
    d->multicast = dyn_share(pkts, dt->q_mcast);
    d->broadcast = dyn_share(pkts, dt->q_bcast);
    d->ucast = dyn_share(pkts, dt->q_ucast);
    d->errors = dyn_share(pkts, dt->q_errors);
    d->discards = dyn_share(pkts, dt->q_discards);
    /* Unknown protocols: a quarter of the error rate, inbound only. */
    d->unknown_protos = out ? 0 : dyn_share(pkts, dt->q_unknown);
}

void
dyn_if_direction(const struct profile_traffic *tr, uint64_t seed, uint32_t if_pos, uint64_t speed_bps,
                 uint64_t traffic_ms, int out, struct dyn_direction_counters *d)
{
    struct dyn_traffic dt;

    dyn_traffic_prepare(tr, &dt);
    dyn_prep_derive(&dt, dyn_prep_octets(&dt, seed, if_pos, speed_bps, traffic_ms, out), out, d);
}

void
dyn_if_counters(const struct profile_traffic *tr, uint64_t seed, uint32_t if_pos, uint64_t speed_bps,
                uint64_t traffic_ms, struct dyn_if_counters *out)
{
    struct dyn_direction_counters in, o;
    struct dyn_traffic dt;

    dyn_traffic_prepare(tr, &dt);
    dyn_prep_derive(&dt, dyn_prep_octets(&dt, seed, if_pos, speed_bps, traffic_ms, 0), 0, &in);
    dyn_prep_derive(&dt, dyn_prep_octets(&dt, seed, if_pos, speed_bps, traffic_ms, 1), 1, &o);
    *out = (struct dyn_if_counters){
        .in_octets = in.octets,
        .in_ucast = in.ucast,
        .in_multicast = in.multicast,
        .in_broadcast = in.broadcast,
        .in_discards = in.discards,
        .in_errors = in.errors,
        .in_unknown_protos = in.unknown_protos,
        .out_octets = o.octets,
        .out_ucast = o.ucast,
        .out_multicast = o.multicast,
        .out_broadcast = o.broadcast,
        .out_discards = o.discards,
        .out_errors = o.errors,
    };
}

uint32_t
dyn_gauge(uint64_t seed, uint32_t object, uint32_t min, uint32_t max, uint32_t period_s, uint64_t t_ms)
{
    uint64_t period_ms = (uint64_t)(period_s ? period_s : 1) * 1000u;
    double phase, slow, jit, mid, half, v;

    if (max <= min) {
        return min;
    }
    phase = DYN_TWO_PI * dyn_unit(dyn_hash(seed, object, DYN_SALT_GAUGE));
    slow = sin(DYN_TWO_PI * (double)(t_ms % period_ms) / (double)period_ms + phase);
    jit = 2 * dyn_unit(dyn_hash(dyn_hash(seed, object, DYN_SALT_GAUGE_JITTER), t_ms / DYN_GAUGE_STEP_MS, 0)) -
          1;
    mid = ((double)min + (double)max) / 2;
    half = ((double)max - (double)min) / 2;
    v = llround(mid + half * ((1 - DYN_GAUGE_JITTER) * slow + DYN_GAUGE_JITTER * jit));
    return (uint32_t)dyn_clamp(v, min, max);
}
