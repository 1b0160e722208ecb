/*
 * The control API's target and duration parsers: device ranges against the
 * fleet's size (one device, a span, reversed, past the end, garbage), durations
 * and duration ranges with their one unit, and the seeded draw of a share of
 * devices (reproducible per seed, different across seeds, exact at 0 and 1,
 * close to share x N in count).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "capi_target.h"

static void
test_range_one_device_and_a_span(void **state)
{
    uint32_t a = 99, b = 99;
    (void)state;
    assert_int_equal(capi_parse_range("0", 10, &a, &b), 0);
    assert_int_equal(a, 0);
    assert_int_equal(b, 0);
    assert_int_equal(capi_parse_range("7", 10, &a, &b), 0);
    assert_int_equal(a, 7);
    assert_int_equal(b, 7);
    assert_int_equal(capi_parse_range("2-9", 10, &a, &b), 0);
    assert_int_equal(a, 2);
    assert_int_equal(b, 9);
    assert_int_equal(capi_parse_range("4-4", 10, &a, &b), 0);
    assert_int_equal(a, 4);
    assert_int_equal(b, 4);
    assert_int_equal(capi_parse_range("0-9999", 10000, &a, &b), 0);
    assert_int_equal(a, 0);
    assert_int_equal(b, 9999);
}

static void
test_range_reversed_is_not_a_range(void **state)
{
    uint32_t a = 99, b = 99;
    (void)state;
    assert_int_equal(capi_parse_range("5-3", 10, &a, &b), -1);
    assert_int_equal(capi_parse_range("1-0", 10, &a, &b), -1);
    /* Outputs untouched on failure. */
    assert_int_equal(a, 99);
    assert_int_equal(b, 99);
}

static void
test_range_past_the_fleet(void **state)
{
    uint32_t a = 99, b = 99;
    (void)state;
    assert_int_equal(capi_parse_range("10", 10, &a, &b), -2);
    assert_int_equal(capi_parse_range("5-10", 10, &a, &b), -2);
    assert_int_equal(capi_parse_range("0", 0, &a, &b), -2);
    assert_int_equal(capi_parse_range("4294967295", 10, &a, &b), -2);
    assert_int_equal(a, 99);
    assert_int_equal(b, 99);
    /* The last device is still in. */
    assert_int_equal(capi_parse_range("9", 10, &a, &b), 0);
    assert_int_equal(a, 9);
}

static void
test_range_garbage(void **state)
{
    static const char *const bad[] = {
        "",      "-",  "-3",   "3-",  "a",          "3a",          " 3",           "3 ",  "3--4",
        "3-4-5", "+3", "0x10", "3.0", "4294967296", "99999999999", "1-4294967296", "3,4", "٣",
    };
    uint32_t a = 99, b = 99;
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (capi_parse_range(bad[i], 1000, &a, &b) != -1) {
            fail_msg("range \"%s\" was accepted", bad[i]);
        }
    }
    assert_int_equal(a, 99);
    assert_int_equal(b, 99);
}

static void
test_durations(void **state)
{
    uint32_t lo = 1, hi = 1;
    (void)state;
    assert_int_equal(capi_parse_ms_range("5s", &lo, &hi), 0);
    assert_int_equal(lo, 5000);
    assert_int_equal(hi, 5000);
    assert_int_equal(capi_parse_ms_range("50ms", &lo, &hi), 0);
    assert_int_equal(lo, 50);
    assert_int_equal(hi, 50);
    assert_int_equal(capi_parse_ms_range("0s", &lo, &hi), 0);
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 0);
    assert_int_equal(capi_parse_ms_range("10-20ms", &lo, &hi), 0);
    assert_int_equal(lo, 10);
    assert_int_equal(hi, 20);
    /* One unit for both ends: "1-2s" is 1000..2000 ms. */
    assert_int_equal(capi_parse_ms_range("1-2s", &lo, &hi), 0);
    assert_int_equal(lo, 1000);
    assert_int_equal(hi, 2000);
    /* The ceiling, one day, is allowed exactly. */
    assert_int_equal(capi_parse_ms_range("86400s", &lo, &hi), 0);
    assert_int_equal(hi, CAPI_MAX_DURATION_MS);
    assert_int_equal(capi_parse_ms_range("86400000ms", &lo, &hi), 0);
    assert_int_equal(hi, CAPI_MAX_DURATION_MS);
}

static void
test_bad_durations(void **state)
{
    static const char *const bad[] = {
        "",          "5",    "s",      "ms",         "5m",       "5h",           "5 s",   " 5s",   "5s ",
        "5S",        "5MS",  "5sec",   "5mss",       "-5s",      "20-10ms",      "10-ms", "-20ms", "10-20",
        "10ms-20ms", "1.5s", "86401s", "86400001ms", "1-86401s", "4294967296ms", "0x5s",  "5s5",
    };
    uint32_t lo = 7, hi = 7;
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (capi_parse_ms_range(bad[i], &lo, &hi) != -1) {
            fail_msg("duration \"%s\" was accepted", bad[i]);
        }
    }
    assert_int_equal(lo, 7);
    assert_int_equal(hi, 7);
}

#define SHARE_N 10000u

static void
test_same_seed_same_devices(void **state)
{
    (void)state;
    for (uint32_t i = 0; i < SHARE_N; i++) {
        assert_int_equal(capi_share_pick(42, i, 0.3), capi_share_pick(42, i, 0.3));
    }
    /* Order does not matter: drawing backwards picks the same devices. */
    int forward[64], backward[64];
    for (uint32_t i = 0; i < 64; i++) {
        forward[i] = capi_share_pick(7, i, 0.5);
    }
    for (uint32_t i = 64; i-- > 0;) {
        backward[i] = capi_share_pick(7, i, 0.5);
    }
    assert_memory_equal(forward, backward, sizeof forward);
}

static void
test_different_seed_different_devices(void **state)
{
    unsigned differ = 0, both = 0;
    (void)state;
    for (uint32_t i = 0; i < SHARE_N; i++) {
        int x = capi_share_pick(1, i, 0.5), y = capi_share_pick(2, i, 0.5);
        differ += x != y;
        both += x && y;
    }
    /* Independent draws of one half: about half the devices differ, a quarter are in both. */
    assert_in_range(differ, SHARE_N * 4 / 10, SHARE_N * 6 / 10);
    assert_in_range(both, SHARE_N * 2 / 10, SHARE_N * 3 / 10);
}

static void
test_share_zero_and_one(void **state)
{
    (void)state;
    for (uint64_t seed = 0; seed < 5; seed++) {
        for (uint32_t i = 0; i < SHARE_N; i++) {
            assert_int_equal(capi_share_pick(seed, i, 0.0), 0);
            assert_int_equal(capi_share_pick(seed, i, 1.0), 1);
        }
    }
}

static void
test_counts_close_to_share_times_n(void **state)
{
    static const double shares[] = {0.01, 0.1, 0.25, 0.5, 0.9, 0.99};
    (void)state;
    for (size_t s = 0; s < sizeof shares / sizeof shares[0]; s++) {
        for (uint64_t seed = 1; seed <= 3; seed++) {
            unsigned picked = 0;
            for (uint32_t i = 0; i < SHARE_N; i++) {
                picked += (unsigned)capi_share_pick(seed, i, shares[s]);
            }
            /* A binomial's sd at N=10000 is at most 50; allow 5 sd. */
            double expect = shares[s] * SHARE_N;
            if (picked < expect - 250 || picked > expect + 250) {
                fail_msg("share %.2f seed %u picked %u of %u", shares[s], (unsigned)seed, picked, SHARE_N);
            }
        }
    }
    /* A larger share picks a superset of a smaller one with the same seed. */
    for (uint32_t i = 0; i < SHARE_N; i++) {
        if (capi_share_pick(9, i, 0.2)) {
            assert_int_equal(capi_share_pick(9, i, 0.6), 1);
        }
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_range_one_device_and_a_span),
        cmocka_unit_test(test_range_reversed_is_not_a_range),
        cmocka_unit_test(test_range_past_the_fleet),
        cmocka_unit_test(test_range_garbage),
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_bad_durations),
        cmocka_unit_test(test_same_seed_same_devices),
        cmocka_unit_test(test_different_seed_different_devices),
        cmocka_unit_test(test_share_zero_and_one),
        cmocka_unit_test(test_counts_close_to_share_times_n),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
