/*
 * Unit tests of the value dynamics (common/dynamics.c). The promises pinned
 * here: every counter field is monotonic in time (over random instants up to
 * ten years, and millisecond by millisecond, at 1 Mb/s and at 400 Gb/s, with
 * a band reaching down to zero), the rate over a minute stays inside the
 * utilisation band and does move, devices, interfaces and directions differ,
 * the same inputs give the same outputs, a speed of 0 or a zero band keeps
 * counters at their base, and gauges stay within bounds and move. Random
 * instants come from a fixed-seed generator, so a failure replays.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dynamics.h"

/* Ten years of milliseconds. */
#define TD_TEN_YEARS_MS (UINT64_C(3650) * 24 * 3600 * 1000)
/* Random instants per configuration in the sorted-instants test. */
#define TD_INSTANTS 20000
/* Random start points, and 1 ms steps from each, in the step test. */
#define TD_STEP_POINTS 300
#define TD_STEPS       400
/* Minute-long windows the rate test checks. */
#define TD_RATE_WINDOWS 3000

static const uint64_t td_speeds[] = {UINT64_C(1000000), UINT64_C(1000000000), UINT64_C(100000000000),
                                     UINT64_C(400000000000)};

/* Bands: realistic, the whole range (u reaches 0), tiny, flat, all jitter, short period. */
static const struct profile_traffic td_traffic[] = {
    {0.05, 0.30, 86400, 0.10, 800, 0.01, 0.005, 1, 10}, {0.00, 1.00, 86400, 0.50, 64, 0.20, 0.10, 1000, 100},
    {0.00, 0.0001, 86400, 0.10, 1500, 0.0, 0.0, 0, 0},  {0.50, 0.50, 3600, 0.10, 700, 0.01, 0.01, 1, 1},
    {0.10, 0.90, 600, 1.00, 100, 0.3, 0.3, 5, 5},       {0.00, 0.50, 31536000, 0.05, 1000, 0.01, 0.01, 1, 1},
};

#define TD_NELEMS(a) (sizeof(a) / sizeof(a)[0])

/* xorshift64*: fixed seed, so every run draws the same instants. */
static uint64_t td_rng = UINT64_C(0x243f6a8885a308d3);

static uint64_t
td_rand(void)
{
    td_rng ^= td_rng >> 12;
    td_rng ^= td_rng << 25;
    td_rng ^= td_rng >> 27;
    return td_rng * UINT64_C(2685821657736338717);
}

static int
td_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a;
    uint64_t y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/* The 13 fields in order, for field-by-field comparison. */
static void
td_fields(const struct dyn_if_counters *c, uint64_t f[13])
{
    const uint64_t v[13] = {c->in_octets,   c->in_ucast,      c->in_multicast,      c->in_broadcast,
                            c->in_discards, c->in_errors,     c->in_unknown_protos, c->out_octets,
                            c->out_ucast,   c->out_multicast, c->out_broadcast,     c->out_discards,
                            c->out_errors};

    memcpy(f, v, sizeof v);
}

/* Every field of @p later is at least that of @p earlier; on failure, say which and where. */
static void
td_assert_not_less(const struct dyn_if_counters *earlier, const struct dyn_if_counters *later, uint64_t t1,
                   uint64_t t2, size_t cfg, uint64_t speed)
{
    uint64_t a[13], b[13];

    td_fields(earlier, a);
    td_fields(later, b);
    for (int i = 0; i < 13; i++) {
        if (b[i] < a[i]) {
            fail_msg("field %d went back: %" PRIu64 " at %" PRIu64 " ms, %" PRIu64 " at %" PRIu64
                     " ms (traffic %zu, speed %" PRIu64 ")",
                     i, a[i], t1, b[i], t2, cfg, speed);
        }
    }
}

static void
test_counters_monotonic_over_sorted_random_instants(void **state)
{
    uint64_t *t = malloc(TD_INSTANTS * sizeof *t);

    assert_non_null(t);
    for (size_t c = 0; c < TD_NELEMS(td_traffic); c++) {
        for (size_t s = 0; s < TD_NELEMS(td_speeds); s++) {
            struct dyn_if_counters prev, cur;
            uint64_t seed = dyn_device_seed(7, (uint32_t)(c * 10 + s));
            for (size_t i = 0; i < TD_INSTANTS; i++) {
                /* Half spread over ten years, half within the first day. */
                t[i] = td_rand() % (i % 2 ? TD_TEN_YEARS_MS : UINT64_C(86400000));
            }
            qsort(t, TD_INSTANTS, sizeof *t, td_cmp_u64);
            dyn_if_counters(&td_traffic[c], seed, 3, td_speeds[s], t[0], &prev);
            for (size_t i = 1; i < TD_INSTANTS; i++) {
                dyn_if_counters(&td_traffic[c], seed, 3, td_speeds[s], t[i], &cur);
                td_assert_not_less(&prev, &cur, t[i - 1], t[i], c, td_speeds[s]);
                prev = cur;
            }
        }
    }
    free(t);
}

static void
test_counters_monotonic_in_1ms_steps(void **state)
{
    for (size_t c = 0; c < TD_NELEMS(td_traffic); c++) {
        for (size_t s = 0; s < TD_NELEMS(td_speeds); s++) {
            uint64_t seed = dyn_device_seed(11, (uint32_t)(c * 10 + s));
            for (int p = 0; p < TD_STEP_POINTS; p++) {
                struct dyn_if_counters prev, cur;
                uint64_t t0 = td_rand() % TD_TEN_YEARS_MS;
                uint32_t if_pos = (uint32_t)(td_rand() % 144);
                if (p == 0) {
                    t0 = TD_TEN_YEARS_MS - TD_STEPS; /* the far end itself */
                }
                dyn_if_counters(&td_traffic[c], seed, if_pos, td_speeds[s], t0, &prev);
                for (uint64_t k = 1; k <= TD_STEPS; k++) {
                    dyn_if_counters(&td_traffic[c], seed, if_pos, td_speeds[s], t0 + k, &cur);
                    td_assert_not_less(&prev, &cur, t0 + k - 1, t0 + k, c, td_speeds[s]);
                    prev = cur;
                }
            }
        }
    }
}

static void
test_rate_over_a_minute_stays_in_band_and_moves(void **state)
{
    for (size_t c = 0; c < TD_NELEMS(td_traffic); c++) {
        const struct profile_traffic *tr = &td_traffic[c];
        for (size_t s = 0; s < TD_NELEMS(td_speeds); s++) {
            double speed = (double)td_speeds[s];
            /* One octet of floor at each end, as a share of a minute at this speed, plus float slack. */
            double slack = 2 * 8 / (60 * speed) + 1e-6;
            double lowest = 2, highest = -1;
            uint64_t seed = dyn_device_seed(13, (uint32_t)s);
            for (int w = 0; w < TD_RATE_WINDOWS; w++) {
                struct dyn_if_counters a, b;
                uint64_t t = td_rand() % TD_TEN_YEARS_MS;
                double in_u, out_u;
                dyn_if_counters(tr, seed, 5, td_speeds[s], t, &a);
                dyn_if_counters(tr, seed, 5, td_speeds[s], t + 60000, &b);
                in_u = (double)(b.in_octets - a.in_octets) * 8 / 60 / speed;
                out_u = (double)(b.out_octets - a.out_octets) * 8 / 60 / speed;
                if (in_u < tr->util_min - slack || in_u > tr->util_max + slack ||
                    out_u < tr->util_min - slack || out_u > tr->util_max + slack) {
                    fail_msg("traffic %zu speed %.0f at %" PRIu64 " ms: utilisation in %.9f out %.9f outside "
                             "[%.4f, %.4f]",
                             c, speed, t, in_u, out_u, tr->util_min, tr->util_max);
                }
                lowest = in_u < lowest ? in_u : lowest;
                highest = in_u > highest ? in_u : highest;
            }
            /*
             * The slow waves use the band: over many minutes, at least a third of it is seen. Not for a
             * flat band, nor when jitter has most of the band (a minute averages fast waves out).
             */
            if (tr->util_max - tr->util_min > 0.01 && tr->jitter <= 0.5) {
                assert_true(highest - lowest > (tr->util_max - tr->util_min) / 3);
            }
        }
    }
}

static void
test_packets_follow_octets_and_shares(void **state)
{
    const struct profile_traffic *tr = &td_traffic[1];
    struct dyn_if_counters c;
    uint64_t pkts, sum;

    dyn_if_counters(tr, dyn_device_seed(1, 1), 0, UINT64_C(10000000000), UINT64_C(86400000), &c);
    pkts = c.in_octets / tr->packet_bytes;
    sum = c.in_ucast + c.in_multicast + c.in_broadcast;
    assert_true(sum <= pkts && pkts - sum < 3);
    assert_true(c.in_multicast >= c.in_broadcast); /* 20 % against 10 % */
    assert_true(c.in_errors > 0 && c.in_errors <= pkts / 1000);
    assert_true(c.in_discards > 0 && c.in_discards <= pkts / 10000 + 1);
    assert_true(c.in_unknown_protos <= c.in_errors);
}

static void
test_devices_interfaces_and_directions_differ(void **state)
{
    const struct profile_traffic *tr = &td_traffic[0];
    uint64_t s1 = dyn_device_seed(42, 1);
    uint64_t s2 = dyn_device_seed(42, 2);
    uint64_t t = UINT64_C(3600000);
    struct dyn_if_counters a, b, c, a0, a1;

    assert_true(s1 != s2);
    dyn_if_counters(tr, s1, 0, UINT64_C(1000000000), t, &a);
    dyn_if_counters(tr, s2, 0, UINT64_C(1000000000), t, &b);
    dyn_if_counters(tr, s1, 1, UINT64_C(1000000000), t, &c);
    assert_true(a.in_octets != b.in_octets);
    assert_true(a.in_octets != c.in_octets);
    assert_true(a.in_octets != a.out_octets);
    /* Not just a different base: the traffic in an hour differs too. */
    dyn_if_counters(tr, s1, 0, UINT64_C(1000000000), 0, &a0);
    dyn_if_counters(tr, s1, 1, UINT64_C(1000000000), 0, &a1);
    assert_true(a.in_octets - a0.in_octets != c.in_octets - a1.in_octets);
    assert_true(a.in_octets - a0.in_octets != a.out_octets - a0.out_octets);
}

static void
test_same_inputs_same_outputs(void **state)
{
    for (int i = 0; i < 1000; i++) {
        struct dyn_if_counters a, b;
        uint64_t seed = td_rand() | 1;
        uint64_t t = td_rand() % TD_TEN_YEARS_MS;
        uint32_t pos = (uint32_t)(td_rand() % 1000);
        dyn_if_counters(&td_traffic[i % TD_NELEMS(td_traffic)], seed, pos, UINT64_C(400000000000), t, &a);
        dyn_if_counters(&td_traffic[i % TD_NELEMS(td_traffic)], seed, pos, UINT64_C(400000000000), t, &b);
        assert_memory_equal(&a, &b, sizeof a);
        assert_int_equal(dyn_gauge(seed, pos, 0, 100, 300, t), dyn_gauge(seed, pos, 0, 100, 300, t));
    }
    assert_int_equal(dyn_hash(1, 2, 3), dyn_hash(1, 2, 3));
    assert_true(dyn_hash(1, 2, 3) != dyn_hash(1, 3, 2));
    assert_true(dyn_hash(0, 0, 0) != 0);
}

static void
test_device_seed_never_zero(void **state)
{
    for (uint32_t i = 0; i < 100000; i++) {
        assert_true(dyn_device_seed(0, i) != 0);
        assert_true(dyn_device_seed(UINT64_MAX, i) != 0);
    }
}

static void
test_speed_0_or_zero_band_stays_at_base(void **state)
{
    struct profile_traffic zero = td_traffic[0];
    struct dyn_if_counters a, b;
    uint64_t seed = dyn_device_seed(5, 5);

    dyn_if_counters(&td_traffic[0], seed, 2, 0, 0, &a);
    dyn_if_counters(&td_traffic[0], seed, 2, 0, TD_TEN_YEARS_MS, &b);
    assert_memory_equal(&a, &b, sizeof a);
    assert_true(a.in_octets > 0 && a.in_octets < (UINT64_C(1) << 40));

    zero.util_min = 0;
    zero.util_max = 0;
    dyn_if_counters(&zero, seed, 2, UINT64_C(400000000000), 0, &a);
    dyn_if_counters(&zero, seed, 2, UINT64_C(400000000000), TD_TEN_YEARS_MS, &b);
    assert_memory_equal(&a, &b, sizeof a);
}

static void
test_gauge_within_bounds_and_moves(void **state)
{
    static const uint32_t bands[][2] = {{0, 100}, {5, 40}, {35, 36}, {1000, 16777216}, {0, UINT32_MAX}};

    for (size_t b = 0; b < TD_NELEMS(bands); b++) {
        uint32_t lo = bands[b][0], hi = bands[b][1];
        uint32_t seen_min = UINT32_MAX, seen_max = 0;
        uint32_t changes = 0, prev = 0;
        uint64_t seed = dyn_device_seed(3, (uint32_t)b);
        for (uint64_t t = 0; t < UINT64_C(2) * 86400000; t += 7000) {
            uint32_t v = dyn_gauge(seed, 1, lo, hi, 3600, t);
            if (v < lo || v > hi) {
                fail_msg("gauge %" PRIu32 " outside [%" PRIu32 ", %" PRIu32 "] at %" PRIu64 " ms", v, lo, hi,
                         t);
            }
            changes += t > 0 && v != prev;
            prev = v;
            seen_min = v < seen_min ? v : seen_min;
            seen_max = v > seen_max ? v : seen_max;
        }
        assert_true(changes > 0);
        assert_true(seen_max > seen_min);
        if (hi - lo >= 10) {
            assert_true((uint64_t)(seen_max - seen_min) * 2 >
                        (uint64_t)(hi - lo)); /* the slow wave spans the band */
        }
    }
    /* Random instants, including far ones. */
    for (int i = 0; i < 100000; i++) {
        uint32_t v = dyn_gauge(td_rand(), (uint32_t)i, 8, 35, (uint32_t)(td_rand() % 100000), td_rand());
        assert_true(v >= 8 && v <= 35);
    }
    /* A degenerate band is its value; objects of one device differ. */
    assert_int_equal(dyn_gauge(1, 1, 7, 7, 60, 12345), 7);
    assert_int_equal(dyn_gauge(1, 1, 9, 3, 60, 12345), 9);
    assert_true(dyn_gauge(1, 1, 0, 1000000, 3600, 0) != dyn_gauge(1, 2, 0, 1000000, 3600, 0));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counters_monotonic_over_sorted_random_instants),
        cmocka_unit_test(test_counters_monotonic_in_1ms_steps),
        cmocka_unit_test(test_rate_over_a_minute_stays_in_band_and_moves),
        cmocka_unit_test(test_packets_follow_octets_and_shares),
        cmocka_unit_test(test_devices_interfaces_and_directions_differ),
        cmocka_unit_test(test_same_inputs_same_outputs),
        cmocka_unit_test(test_device_seed_never_zero),
        cmocka_unit_test(test_speed_0_or_zero_band_stays_at_base),
        cmocka_unit_test(test_gauge_within_bounds_and_moves),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
