/*
 * The live view's ring of per-second samples: empty, partly filled, full and
 * wrapped many times over; since= returns only newer samples, oldest first,
 * and never more than the capacity, so memory stays bounded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "rate_ring.h"

static struct rate_ring ring;
static struct rate_sample out[RATE_RING_CAPACITY];

static void
push_n(uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        struct rate_sample s = {.seq = 12345, .t_ms = 1000 * (ring.last_seq + 1), .rpcs = ring.last_seq + 1};
        uint64_t seq = rate_ring_push(&ring, &s);
        assert_int_equal(seq, ring.last_seq);
    }
}

static int
setup(void **state)
{
    (void)state;
    rate_ring_init(&ring);
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    rate_ring_close(&ring);
    return 0;
}

static void
test_empty_ring_has_nothing(void **state)
{
    (void)state;
    assert_int_equal(rate_ring_since(&ring, 0, out), 0);
    assert_int_equal(rate_ring_since(&ring, 5, out), 0);
}

static void
test_partly_filled_all_and_since(void **state)
{
    (void)state;
    push_n(10);
    assert_int_equal(rate_ring_since(&ring, 0, out), 10);
    for (uint32_t i = 0; i < 10; i++) {
        assert_int_equal(out[i].seq, i + 1); /* the ring numbers samples, whatever the caller put there */
        assert_int_equal(out[i].rpcs, i + 1);
    }
    assert_int_equal(rate_ring_since(&ring, 7, out), 3);
    assert_int_equal(out[0].seq, 8);
    assert_int_equal(out[2].seq, 10);
    assert_int_equal(rate_ring_since(&ring, 10, out), 0);
    assert_int_equal(rate_ring_since(&ring, 99, out), 0);
}

static void
test_wrapped_ring_keeps_the_newest_capacity(void **state)
{
    (void)state;
    push_n(3 * RATE_RING_CAPACITY + 17);
    assert_int_equal(rate_ring_since(&ring, 0, out), RATE_RING_CAPACITY);
    assert_int_equal(out[0].seq, 2 * RATE_RING_CAPACITY + 18);
    assert_int_equal(out[RATE_RING_CAPACITY - 1].seq, 3 * RATE_RING_CAPACITY + 17);
    for (uint32_t i = 1; i < RATE_RING_CAPACITY; i++) {
        assert_int_equal(out[i].seq, out[i - 1].seq + 1);
        assert_int_equal(out[i].rpcs, out[i].seq);
        assert_int_equal(out[i].t_ms, 1000 * out[i].seq);
    }
    /* A since older than what is held: everything held, no more. */
    assert_int_equal(rate_ring_since(&ring, 5, out), RATE_RING_CAPACITY);
    assert_int_equal(rate_ring_since(&ring, 3 * RATE_RING_CAPACITY + 15, out), 2);
    assert_int_equal(out[0].seq, 3 * RATE_RING_CAPACITY + 16);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_empty_ring_has_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_partly_filled_all_and_since, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrapped_ring_keeps_the_newest_capacity, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
