/*
 * Unit tests of the periodic slot arithmetic of YANG-Push (yp_periodic.c, issue 31): slot k of a
 * subscription is at anchor + k x period, the first slot served is the one at or after now, whether the
 * anchor is in the past or in the future, and the k-th slot never depends on when the worker got there.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "yp.h"

/* An anchor of 2026-12-07T10:00:00.250Z, in ms since the epoch. */
#define TS_ANCHOR_MS 1796637600250ull

static void
test_now_on_a_slot_is_that_slot(void **state)
{
    (void)state;
    assert_int_equal(yp_slot_at_or_after(TS_ANCHOR_MS, 1000, TS_ANCHOR_MS), 0);
    assert_int_equal(yp_slot_at_or_after(TS_ANCHOR_MS, 1000, TS_ANCHOR_MS + 5000), 5);
}

static void
test_now_between_slots_is_the_next_slot(void **state)
{
    (void)state;
    assert_int_equal(yp_slot_at_or_after(TS_ANCHOR_MS, 1000, TS_ANCHOR_MS + 1), 1);
    assert_int_equal(yp_slot_at_or_after(TS_ANCHOR_MS, 1000, TS_ANCHOR_MS + 4999), 5);
    assert_int_equal(yp_slot_at_or_after(TS_ANCHOR_MS, 100, TS_ANCHOR_MS + 3600000 + 1), 36001);
}

static void
test_anchor_in_the_future_counts_back_to_the_first_slot_after_now(void **state)
{
    (void)state;
    /* RFC 8641: slots are anchor + k x period for any k; the first one at or after now is served. */
    assert_int_equal(yp_slot_at_or_after(TS_ANCHOR_MS, 1000, TS_ANCHOR_MS - 2500), -2);
    assert_int_equal(yp_slot_at_or_after(TS_ANCHOR_MS, 1000, TS_ANCHOR_MS - 3000), -3);
    assert_int_equal(yp_slot_at_or_after(TS_ANCHOR_MS, 1000, TS_ANCHOR_MS - 1), 0);
}

static void
test_an_hour_of_slots_does_not_drift(void **state)
{
    (void)state;
    /* Whatever instant in slot k's period the worker wakes, the next slot is anchor + (k+1) x period. */
    for (int64_t k = 0; k < 3600; k++) {
        uint64_t slot = TS_ANCHOR_MS + (uint64_t)k * 1000;
        assert_int_equal(yp_slot_at_or_after(TS_ANCHOR_MS, 1000, slot), k);
        assert_int_equal(yp_slot_at_or_after(TS_ANCHOR_MS, 1000, slot + 1 + (uint64_t)(k * 7 % 999)), k + 1);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_now_on_a_slot_is_that_slot),
        cmocka_unit_test(test_now_between_slots_is_the_next_slot),
        cmocka_unit_test(test_anchor_in_the_future_counts_back_to_the_first_slot_after_now),
        cmocka_unit_test(test_an_hour_of_slots_does_not_drift),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
