/*
 * The pacing arithmetic of notification streams: exact over long runs (no
 * drift), right at the edges of each tick, bounded catch-up with the skipped
 * sends counted, and a resume that does not burst.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "pacer.h"

/* Ticks due at or before @p now: what a stream that keeps up has sent by then. */
static uint64_t
due_by(const struct pacer *p, monotime_us now)
{
    uint64_t k = 0;
    while (pacer_due(p, k) <= now) {
        k++;
    }
    return k;
}

static void
test_ticks_are_exact_after_an_hour_at_odd_rates(void **state)
{
    static const double rates[] = {0.01, 1, 3, 7.77, 100, 333.33, 10000, 999999.99};
    (void)state;
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
        struct pacer p;
        uint64_t hour_us = 3600ull * 1000000ull;
        pacer_init(&p, 5000, rates[i], 1);
        /* Tick k is due at k / rate exactly (floor to the microsecond): no accumulated error. */
        uint64_t k = (uint64_t)(rates[i] * 3600);
        monotime_us due = pacer_due(&p, k);
        assert_true(due <= 5000 + hour_us);
        assert_true(5000 + hour_us - due < 1 + 1000000 / (rates[i] * 1000) * 1000);
        /* Consecutive ticks never come closer than the period's floor nor further than its ceiling. */
        for (uint64_t j = k; j < k + 100; j++) {
            uint64_t gap = pacer_due(&p, j + 1) - pacer_due(&p, j);
            uint64_t period_floor = (uint64_t)(1e6 / rates[i]);
            assert_true(gap >= period_floor && gap <= period_floor + 1);
        }
    }
}

static void
test_a_tick_is_due_exactly_at_its_microsecond(void **state)
{
    struct pacer p;

    (void)state;
    pacer_init(&p, 1000, 4, 1); /* every 250 ms */
    assert_int_equal(pacer_due(&p, 0), 1000);
    assert_int_equal(pacer_due(&p, 1), 251000);
    assert_int_equal(due_by(&p, 250999), 1);
    assert_int_equal(due_by(&p, 251000), 2);
    assert_int_equal(due_by(&p, 1000 + 60000000), 241); /* 60 s at 4/s, tick 0 included */
}

static void
test_burst_spreads_ticks_not_sends(void **state)
{
    struct pacer p;

    (void)state;
    pacer_init(&p, 0, 1000, 10); /* 1,000 sends/s in ticks of 10: a tick every 10 ms */
    assert_int_equal(pacer_due(&p, 1), 10000);
    assert_int_equal(due_by(&p, 999999) * 10, 1000);
}

static void
test_far_behind_skips_and_counts_only_the_missed_sends(void **state)
{
    struct pacer p;

    (void)state;
    pacer_init(&p, 0, 100, 1);
    p.tick = 50; /* sent up to 0.5 s */
    /* Half a second late with a one-second bound: nothing is given up. */
    assert_int_equal(pacer_skip_lag(&p, 1000000, 1000000), 0);
    assert_int_equal(p.tick, 50);
    /* Three seconds late: ticks up to now are given up and counted, none sent twice, none lost twice. */
    assert_int_equal(pacer_skip_lag(&p, 3500000, 1000000), 300);
    assert_int_equal(p.tick, 350);
    assert_int_equal(pacer_skip_lag(&p, 3500000, 1000000), 0);
    assert_true(pacer_due(&p, p.tick) <= 3500000);
}

static void
test_resume_moves_the_origin_without_a_burst(void **state)
{
    struct pacer p;

    (void)state;
    pacer_init(&p, 0, 10, 1);
    p.tick = 20;               /* next due at 2 s */
    pacer_resume(&p, 9000000); /* resumed at 9 s after a pause */
    assert_int_equal(pacer_due(&p, p.tick), 9000000);
    assert_int_equal(pacer_due(&p, p.tick + 1), 9100000);
    assert_int_equal(pacer_skip_lag(&p, 9000000, 1000000), 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ticks_are_exact_after_an_hour_at_odd_rates),
        cmocka_unit_test(test_a_tick_is_due_exactly_at_its_microsecond),
        cmocka_unit_test(test_burst_spreads_ticks_not_sends),
        cmocka_unit_test(test_far_behind_skips_and_counts_only_the_missed_sends),
        cmocka_unit_test(test_resume_moves_the_origin_without_a_burst),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
