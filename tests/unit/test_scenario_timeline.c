/*
 * A scenario's timeline (scenario.c): the offsets of "every" (exact, bounded
 * by count and until), of a Poisson process (the same for the same seed and
 * name, different for another seed, a mean gap close to the one asked for,
 * bounded by until), and the per-occurrence seeds that pick a share's devices
 * (the same across runs, different between occurrences and events).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "scenario.h"

static void
test_every_is_exact_and_bounded_by_count(void **state)
{
    struct scenario_event ev = {.name = "ramp",
                                .when = SCENARIO_EVERY,
                                .from_ms = 0,
                                .period_ms = 60000,
                                .until_ms = UINT64_MAX,
                                .max_count = 20};
    uint64_t t = 0;
    uint32_t k = 0;
    (void)state;
    for (; k < 100; k++) {
        uint64_t next = scenario_next_offset(&ev, 1, k, t);
        if (next == UINT64_MAX) {
            break;
        }
        assert_int_equal(next, (uint64_t)(k + 1) * 60000);
        t = next;
    }
    assert_int_equal(k + 1, 20); /* 20 occurrences: the first at 0 and 19 more */
    assert_int_equal(t, 19u * 60000u);
}

static void
test_every_stops_at_until(void **state)
{
    struct scenario_event ev = {
        .name = "e", .when = SCENARIO_EVERY, .from_ms = 1000, .period_ms = 500, .until_ms = 2600};
    (void)state;
    assert_int_equal(scenario_next_offset(&ev, 1, 0, 1000), 1500);
    assert_int_equal(scenario_next_offset(&ev, 1, 2, 2000), 2500);
    assert_true(scenario_next_offset(&ev, 1, 3, 2500) == UINT64_MAX); /* 3000 is past until */
}

static void
test_at_happens_once(void **state)
{
    struct scenario_event ev = {.name = "once", .when = SCENARIO_AT, .at_ms = 60000, .until_ms = UINT64_MAX};
    (void)state;
    assert_true(scenario_next_offset(&ev, 1, 0, 60000) == UINT64_MAX);
}

static void
test_poisson_is_reproducible_with_the_asked_mean(void **state)
{
    struct scenario_event ev = {
        .name = "storm", .when = SCENARIO_POISSON, .period_ms = 1000, .until_ms = UINT64_MAX};
    uint64_t t1 = 0, t2 = 0, t3 = 0;
    uint32_t n = 20000, same_other_seed = 0;
    (void)state;
    for (uint32_t k = 0; k < n; k++) {
        uint64_t a = scenario_next_offset(&ev, 7, k, t1);
        uint64_t b = scenario_next_offset(&ev, 7, k, t2);
        uint64_t c = scenario_next_offset(&ev, 8, k, t3);
        assert_int_equal(a, b);
        same_other_seed += a - t1 == c - t3;
        t1 = a;
        t2 = b;
        t3 = c;
    }
    /* The mean gap of 20,000 exponential draws is within 3 % of 1,000 ms (its sd is 0.7 %). */
    assert_true(fabs((double)t1 / n - 1000.0) < 30.0);
    assert_true(same_other_seed < n / 100);
    ev.until_ms = 5000;
    assert_true(scenario_next_offset(&ev, 7, 0, 4999) >= 4999);
    {
        uint64_t t = 0;
        uint32_t k = 0;
        while ((t = scenario_next_offset(&ev, 7, k, t)) != UINT64_MAX) {
            assert_true(t <= 5000);
            k++;
        }
        assert_true(k > 0 && k < 20); /* about 5 occurrences in 5 s */
    }
}

static void
test_occurrence_seeds_differ_by_event_and_occurrence(void **state)
{
    (void)state;
    assert_true(scenario_occurrence_seed(7, "reboot-edge", 0) ==
                scenario_occurrence_seed(7, "reboot-edge", 0));
    assert_true(scenario_occurrence_seed(7, "reboot-edge", 0) !=
                scenario_occurrence_seed(7, "reboot-edge", 1));
    assert_true(scenario_occurrence_seed(7, "reboot-edge", 0) !=
                scenario_occurrence_seed(7, "reboot-core", 0));
    assert_true(scenario_occurrence_seed(7, "reboot-edge", 0) !=
                scenario_occurrence_seed(8, "reboot-edge", 0));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_is_exact_and_bounded_by_count),
        cmocka_unit_test(test_every_stops_at_until),
        cmocka_unit_test(test_at_happens_once),
        cmocka_unit_test(test_poisson_is_reproducible_with_the_asked_mean),
        cmocka_unit_test(test_occurrence_seeds_differ_by_event_and_occurrence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
