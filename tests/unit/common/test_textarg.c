/*
 * Unit tests of the duration values of the command line
 * (textarg_duration_s, common/textarg.c): a number with a unit "ms", "s",
 * "m" or "h", or a bare number of seconds, in a range; no sign, no space,
 * no other unit, nothing that is not a finite number (issue 30: --window,
 * --sample, --burst of fleetsim-stress ceiling).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>

#include "textarg.h"

/* The range the tests give unless they test the range: 1 ms to a day. */
#define TT_MIN_S 0.001
#define TT_MAX_S 86400.0

/* @return the seconds textarg_duration_s() read from @p s, failing the test when it refused. */
static double
accepted(const char *s, double min_s, double max_s)
{
    double out = -1;

    if (textarg_duration_s(s, min_s, max_s, &out)) {
        print_error("\"%s\" was refused\n", s);
        fail();
    }
    return out;
}

/* Fails the test unless @p s is refused and the output left as it was. */
static void
refused(const char *s, double min_s, double max_s)
{
    double out = -7;

    if (!textarg_duration_s(s, min_s, max_s, &out) || out != -7) {
        print_error("\"%s\" was accepted as %g\n", s ? s : "(null)", out);
        fail();
    }
}

static void
test_duration_units_and_bare_seconds(void **state)
{
    (void)state;
    assert_true(fabs(accepted("500ms", TT_MIN_S, TT_MAX_S) - 0.5) < 1e-12);
    assert_true(accepted("1.5s", TT_MIN_S, TT_MAX_S) == 1.5);
    assert_true(accepted("15m", TT_MIN_S, TT_MAX_S) == 900);
    assert_true(accepted("1h", TT_MIN_S, TT_MAX_S) == 3600);
    assert_true(accepted("30", TT_MIN_S, TT_MAX_S) == 30);
    assert_true(accepted("0.25", TT_MIN_S, TT_MAX_S) == 0.25);
    assert_true(accepted("24h", TT_MIN_S, TT_MAX_S) == 86400); /* the bounds are inclusive */
    assert_true(fabs(accepted("1ms", TT_MIN_S, TT_MAX_S) - 0.001) < 1e-15);
}

static void
test_duration_refuses_empty_signed_and_unknown_units(void **state)
{
    (void)state;
    refused(NULL, TT_MIN_S, TT_MAX_S);
    refused("", TT_MIN_S, TT_MAX_S);
    refused("-1s", TT_MIN_S, TT_MAX_S);
    refused("+1s", TT_MIN_S, TT_MAX_S);
    refused("5x", TT_MIN_S, TT_MAX_S);
    refused("5 s", TT_MIN_S, TT_MAX_S);
    refused(" 5s", TT_MIN_S, TT_MAX_S);
    refused("5sec", TT_MIN_S, TT_MAX_S);
    refused("5S", TT_MIN_S, TT_MAX_S);
    refused("s", TT_MIN_S, TT_MAX_S);
    refused("1h30m", TT_MIN_S, TT_MAX_S);
}

static void
test_duration_refuses_what_is_not_a_finite_number(void **state)
{
    (void)state;
    /* the widest finite range, so only the value itself can refuse them */
    refused("nan", 0, DBL_MAX);
    refused("nans", 0, DBL_MAX);
    refused("inf", 0, DBL_MAX);
    refused("infinity", 0, DBL_MAX);
    refused("1e400", 0, DBL_MAX);
    refused("1e306h", 0, DBL_MAX); /* finite as written, infinite in seconds */
}

static void
test_duration_refuses_out_of_range(void **state)
{
    (void)state;
    refused("0", TT_MIN_S, TT_MAX_S);
    refused("0.5ms", TT_MIN_S, TT_MAX_S);
    refused("25h", TT_MIN_S, TT_MAX_S);
    refused("1441m", TT_MIN_S, TT_MAX_S);
    refused("86401", TT_MIN_S, TT_MAX_S);
    assert_true(accepted("0", 0, TT_MAX_S) == 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_duration_units_and_bare_seconds),
        cmocka_unit_test(test_duration_refuses_empty_signed_and_unknown_units),
        cmocka_unit_test(test_duration_refuses_what_is_not_a_finite_number),
        cmocka_unit_test(test_duration_refuses_out_of_range),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
