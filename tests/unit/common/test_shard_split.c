/*
 * Unit tests of common/shard.c: the parts of any count tile it exactly
 * (each item in one part, in order, sizes differing by at most one), the rule is floor(I*C/N) at the largest
 * counts the simulator takes, and "I/N" is read strictly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "shard.h"

static void
test_parts_tile_the_count(void **state)
{
    static const uint64_t totals[] = {0, 1, 2, 3, 7, 10, 40, 99, 1000, 200000, 1000001};
    static const uint32_t parts[] = {1, 2, 3, 4, 7, 10, 64, 1000};

    (void)state;
    for (size_t t = 0; t < sizeof totals / sizeof totals[0]; t++) {
        for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
            uint64_t next = 0, smallest = UINT64_MAX, largest = 0;
            for (uint32_t i = 0; i < parts[p]; i++) {
                uint64_t size = shard_size(totals[t], i, parts[p]);
                assert_int_equal(shard_first(totals[t], i, parts[p]), next);
                next += size;
                smallest = size < smallest ? size : smallest;
                largest = size > largest ? size : largest;
            }
            assert_int_equal(next, totals[t]);
            assert_true(largest - smallest <= 1);
        }
    }
}

static void
test_floor_rule(void **state)
{
    (void)state;
    /* 40 in 4: ten each; 10 in 4: 2, 3, 2, 3 (floor(I*10/4) = 0, 2, 5, 7) */
    assert_int_equal(shard_first(40, 1, 4), 10);
    assert_int_equal(shard_size(40, 3, 4), 10);
    assert_int_equal(shard_first(10, 1, 4), 2);
    assert_int_equal(shard_first(10, 2, 4), 5);
    assert_int_equal(shard_first(10, 3, 4), 7);
    assert_int_equal(shard_size(10, 0, 4), 2);
    assert_int_equal(shard_size(10, 1, 4), 3);
    /* 200,000 in 10, and the products near the largest whole fleet do not overflow */
    assert_int_equal(shard_first(200000, 1, 10), 20000);
    assert_int_equal(shard_first(SHARD_MAX_DEVICES, SHARD_MAX_PARTS - 1, SHARD_MAX_PARTS),
                     (uint64_t)SHARD_MAX_DEVICES / SHARD_MAX_PARTS * (SHARD_MAX_PARTS - 1));
    /* more parts than items: some parts are empty */
    assert_int_equal(shard_size(2, 0, 3), 0);
    assert_int_equal(shard_size(2, 1, 3), 1);
}

static void
test_parse(void **state)
{
    static const char *const bad[] = {"0/0",  "4/4",  "5/4", "1/2/3",    "text",
                                      "",     "/4",   "1/",  "-1/4",     "1/-4",
                                      "1 /4", "1/4x", "a/4", "1/100001", "99999999999999999999/4"};
    uint32_t i, n;

    (void)state;
    assert_int_equal(shard_parse("0/1", &i, &n), 0);
    assert_int_equal(i, 0);
    assert_int_equal(n, 1);
    assert_int_equal(shard_parse("3/4", &i, &n), 0);
    assert_int_equal(i, 3);
    assert_int_equal(n, 4);
    assert_int_equal(shard_parse("99999/100000", &i, &n), 0);
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        assert_int_equal(shard_parse(bad[k], &i, &n), -1);
    }
    assert_int_equal(shard_parse(NULL, &i, &n), -1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parts_tile_the_count),
        cmocka_unit_test(test_floor_rule),
        cmocka_unit_test(test_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
