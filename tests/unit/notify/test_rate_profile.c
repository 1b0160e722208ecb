/*
 * Rate profiles (issue 29, offered load shaped): every form parses, bad
 * text is refused naming the part that is wrong, paced arrivals in [0, T]
 * number exactly floor(integral) for every shape, Poisson arrivals have the
 * integral as their mean and repeat with their seed, a stretch at rate 0
 * is one wait, and a stalled schedule gives up what it missed, counted.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rate_profile.h"

static struct rate_profile
parse_ok(const char *text)
{
    struct rate_profile p;
    char err[256] = "";

    if (rate_profile_parse(text, &p, err, sizeof err)) {
        fail_msg("\"%s\" refused: %s", text, err);
    }
    assert_string_equal(p.text, text);
    return p;
}

/* Assert that @p text is refused with a message containing @p part. */
static void
parse_bad(const char *text, const char *part)
{
    struct rate_profile p;
    char err[256] = "";

    if (rate_profile_parse(text, &p, err, sizeof err) != FLEET_ERR_INVAL) {
        fail_msg("\"%s\" accepted", text);
    }
    if (!strstr(err, part)) {
        fail_msg("\"%s\": message \"%s\" does not name \"%s\"", text, err, part);
    }
}

static void
test_every_form_parses(void **state)
{
    struct rate_profile p;
    (void)state;

    p = parse_ok("12.5");
    assert_int_equal(p.shape, RATE_CONSTANT);
    assert_true(p.r0 == 12.5);
    p = parse_ok("0");
    assert_true(rate_profile_is_zero(&p));
    p = parse_ok("linear:1:10:2m");
    assert_int_equal(p.shape, RATE_LINEAR);
    assert_true(p.r0 == 1 && p.r1 == 10);
    assert_int_equal(p.span_us, 120000000);
    p = parse_ok("sine:10:5:60");
    assert_int_equal(p.shape, RATE_SINE);
    assert_true(p.r0 == 10 && p.r1 == 5);
    assert_int_equal(p.span_us, 60000000);
    p = parse_ok("staged:5@10s,0@1m,20@1h,0.5@1.5");
    assert_int_equal(p.shape, RATE_STAGED);
    assert_int_equal(p.stage_count, 4);
    assert_int_equal(p.stage_start_us[1], 10000000);
    assert_int_equal(p.stage_start_us[2], 70000000);
    assert_int_equal(p.stage_start_us[3], 3670000000ull);
    assert_true(p.stage_mass[2] == 50 && p.stage_rate[3] == 0.5);
    assert_false(rate_profile_is_zero(&p));
    p = parse_ok("staged:0@10,0@5");
    assert_true(rate_profile_is_zero(&p));
    /* After the last stage its rate holds. */
    p = parse_ok("staged:5@10,2@10");
    assert_true(rate_profile_rate(&p, 3600000000ull) == 2);
    assert_true(rate_profile_integral(&p, 30000000) == 50 + 20 + 20);
}

static void
test_bad_profiles_name_the_part(void **state)
{
    char long_text[300];
    char many[400] = "staged:";
    (void)state;

    parse_bad("", "empty");
    parse_bad("fast", "\"fast\" is neither a rate");
    parse_bad("-1", "\"-1\" is neither a rate");
    parse_bad("1e7", "\"1e7\" is neither a rate");
    parse_bad("nan", "neither a rate");
    parse_bad("inf", "neither a rate");
    parse_bad(" 5", "neither a rate");
    parse_bad("linear:1:2", "must be linear:FROM:TO:OVER");
    parse_bad("linear:1:2:3:4", "must be linear:FROM:TO:OVER");
    parse_bad("linear:x:2:3", "FROM \"x\"");
    parse_bad("linear:1:-2:3", "TO \"-2\"");
    parse_bad("linear:1:2:0", "OVER \"0\"");
    parse_bad("linear:1:2:5d", "OVER \"5d\"");
    parse_bad("sine:5:10:60", "AMPLITUDE 10 is above MEAN 5");
    parse_bad("sine:5:1:0s", "PERIOD \"0s\"");
    parse_bad("sine:5:y:60", "AMPLITUDE \"y\"");
    parse_bad("sine:5:1", "must be sine:MEAN:AMPLITUDE:PERIOD");
    parse_bad("staged:", "stage 1 \"\" must be RATE@DURATION");
    parse_bad("staged:5", "stage 1 \"5\" must be RATE@DURATION");
    parse_bad("staged:5@", "stage 1 duration \"\"");
    parse_bad("staged:5@10,x@3", "stage 2 rate \"x\"");
    parse_bad("staged:5@10,", "missing after the last comma");
    parse_bad("staged:5@10,1@31d", "stage 2 duration \"31d\"");
    parse_bad("staged:5@700h,5@100h", "more than 30 days");
    for (int i = 0; i < RATE_PROFILE_MAX_STAGES + 1; i++) {
        strcat(many, i ? ",1@1" : "1@1");
    }
    parse_bad(many, "at most 16 stages");
    memset(long_text, '1', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = '\0';
    parse_bad(long_text, "at most 191 characters");
}

/* The paced schedule of @p p from 0 to @p end_us: every arrival's time into @p t (at most @p cap). */
static size_t
paced_times(const struct rate_profile *p, uint64_t end_us, uint64_t *t, size_t cap)
{
    struct rate_arrivals a;
    size_t n = 0;

    rate_arrivals_init(&a, p, RATE_ARRIVALS_PACED, 1, 0, 0, 0);
    while (a.next_us <= end_us) {
        assert_true(n < cap);
        t[n++] = a.next_us;
        rate_arrivals_take(&a);
    }
    return n;
}

/* Arrivals at or before @p T in the sorted @p t. */
static size_t
count_by(const uint64_t *t, size_t n, uint64_t T)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t[mid] <= T) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

static void
test_paced_count_is_floor_of_the_integral_for_every_shape(void **state)
{
    static const char *const profiles[] = {"7.77",
                                           "linear:0:50:40",
                                           "linear:80:3:25",
                                           "linear:5:5:10",
                                           "sine:40:40:17",
                                           "sine:33.3:10:7.5",
                                           "staged:10@3,0@4.5,99.9@2,0.3@10,13@1"};
    enum { CAP = 20000 };
    uint64_t *t = calloc(CAP, sizeof *t);
    const uint64_t end_us = 60000000;
    (void)state;

    assert_non_null(t);
    for (size_t i = 0; i < sizeof profiles / sizeof profiles[0]; i++) {
        struct rate_profile p = parse_ok(profiles[i]);
        size_t n = paced_times(&p, end_us, t, CAP);
        uint64_t draw = 12345;
        assert_true(n > 100);
        /* Exactly at, and just before, every arrival: the count steps from k-1 to k there. */
        for (size_t k = 1; k <= n; k++) {
            uint64_t at = t[k - 1];
            assert_int_equal(count_by(t, n, at), (size_t)floor(rate_profile_integral(&p, at)));
            assert_int_equal(count_by(t, n, at - 1), (size_t)floor(rate_profile_integral(&p, at - 1)));
        }
        /* And anywhere in between. */
        for (int j = 0; j < 2000; j++) {
            uint64_t T;
            draw = draw * 6364136223846793005ull + 1442695040888963407ull;
            T = (draw >> 20) % end_us;
            if ((size_t)floor(rate_profile_integral(&p, T)) != count_by(t, n, T)) {
                fail_msg("%s: %zu arrivals by %llu us, integral %.9f", profiles[i], count_by(t, n, T),
                         (unsigned long long)T, rate_profile_integral(&p, T));
            }
        }
    }
    free(t);
}

static void
test_paced_holds_exactly_after_a_day(void **state)
{
    struct rate_profile p = parse_ok("sine:1000:900:61");
    struct rate_arrivals a;
    const uint64_t day_us = 86400ull * 1000000ull;
    uint64_t k = (uint64_t)rate_profile_integral(&p, day_us); /* the count by then */
    (void)state;

    /* Jump the schedule to arrival k (what taking k-1 would reach) and check its time is the first
     * microsecond where the integral reaches k: no drift however far into the run. */
    rate_arrivals_init(&a, &p, RATE_ARRIVALS_PACED, 1, 0, 0, 0);
    a.count = k - 1;
    rate_arrivals_take(&a);
    assert_true(rate_profile_integral(&p, a.next_us) >= (double)k + 1);
    assert_true(rate_profile_integral(&p, a.next_us - 1) < (double)k + 1);
    assert_true(a.next_us > day_us && a.next_us < day_us + 10000);
}

static void
test_a_stretch_at_zero_is_one_wait_and_a_zero_profile_never_sends(void **state)
{
    struct rate_profile p = parse_ok("staged:0@3600,5@10,0@10");
    struct rate_arrivals a;
    uint64_t n = 0;
    (void)state;

    rate_arrivals_init(&a, &p, RATE_ARRIVALS_PACED, 1, 0, 0, 1000);
    assert_int_equal(a.next_us, 1000 + 3600000000ull + 200000); /* the first at 3600.2 s */
    while (a.next_us != RATE_NEVER) {
        rate_arrivals_take(&a);
        n++;
    }
    assert_int_equal(n, 50); /* then the last stage's 0 holds: never again */
    p = parse_ok("0");
    rate_arrivals_init(&a, &p, RATE_ARRIVALS_POISSON, 1, 99, 0.5, 0);
    assert_int_equal(a.next_us, RATE_NEVER);
    p = parse_ok("linear:4:0:10");
    n = 0;
    for (rate_arrivals_init(&a, &p, RATE_ARRIVALS_PACED, 1, 0, 0, 0); a.next_us != RATE_NEVER; n++) {
        rate_arrivals_take(&a);
    }
    assert_int_equal(n, 20);
}

/* Poisson arrivals of @p p over [0, end_us] for @p devices devices of seeds base, base+1, ... */
static uint64_t
poisson_total(const struct rate_profile *p, uint64_t end_us, uint32_t devices, uint64_t base)
{
    uint64_t total = 0;

    for (uint32_t d = 0; d < devices; d++) {
        struct rate_arrivals a;
        rate_arrivals_init(&a, p, RATE_ARRIVALS_POISSON, 1, base + d * 0x9e3779b97f4a7c15ull, 0.5, 0);
        while (a.next_us <= end_us) {
            total++;
            rate_arrivals_take(&a);
        }
    }
    return total;
}

static void
test_poisson_mean_is_the_integral_and_repeats_with_its_seed(void **state)
{
    static const char *const profiles[] = {"5", "linear:0:10:100", "sine:5:5:20", "staged:10@50,0@25,2@25"};
    (void)state;

    for (size_t i = 0; i < sizeof profiles / sizeof profiles[0]; i++) {
        struct rate_profile p = parse_ok(profiles[i]);
        double expect = rate_profile_integral(&p, 100000000) * 200;
        uint64_t got = poisson_total(&p, 100000000, 200, 7);
        /* About 100,000 expected: one standard deviation is ~0.3 %, so 2 % is more than 6 of them
         * (and the seed is fixed: the same draws every run). */
        if (fabs((double)got - expect) > 0.02 * expect) {
            fail_msg("%s: %llu Poisson arrivals, %.0f expected", profiles[i], (unsigned long long)got,
                     expect);
        }
        assert_int_equal(poisson_total(&p, 100000000, 200, 7), got);
    }
    {
        struct rate_profile p = parse_ok("50");
        struct rate_arrivals a, b, c;
        int differ = 0;
        rate_arrivals_init(&a, &p, RATE_ARRIVALS_POISSON, 1, 42, 0.5, 0);
        rate_arrivals_init(&b, &p, RATE_ARRIVALS_POISSON, 1, 42, 0.5, 0);
        rate_arrivals_init(&c, &p, RATE_ARRIVALS_POISSON, 1, 43, 0.5, 0);
        for (int k = 0; k < 1000; k++) {
            assert_int_equal(a.next_us, b.next_us);
            differ |= a.next_us != c.next_us;
            rate_arrivals_take(&a);
            rate_arrivals_take(&b);
            rate_arrivals_take(&c);
        }
        assert_true(differ);
    }
}

static void
test_phases_spread_devices_over_one_arrival(void **state)
{
    struct rate_profile p = parse_ok("1");
    uint64_t first[4];
    (void)state;

    /* Each device its phase: the first arrival anywhere in the first second, then exactly one a second. */
    for (uint64_t d = 0; d < 4; d++) {
        struct rate_arrivals a;
        rate_arrivals_init(&a, &p, RATE_ARRIVALS_PACED, 1, 0, rate_phase_spread((uint32_t)d, 7), 0);
        first[d] = a.next_us;
        assert_true(a.next_us <= 1000000);
        for (int k = 0; k < 100; k++) {
            rate_arrivals_take(&a);
        }
        /* 100 s later, to the microsecond (the phase's rounding may move either by one). */
        assert_true(a.next_us + 1 >= first[d] + 100000000ull && a.next_us <= first[d] + 100000001ull);
    }
    assert_true(first[0] != first[1] && first[1] != first[2]);
}

/* issue 29 (found by fuzz_rate_profile): a rate so small that a sine period's mass underflows gave a NaN
 * time (undefined behaviour converting it); such arrivals never come. */
static void
test_a_vanishing_rate_never_arrives(void **state)
{
    static const char *const tiny[] = {"sine:25e-312:0:50", "linear:1e-320:0:5", "staged:1e-315@1,3e-310@2"};
    (void)state;
    for (size_t i = 0; i < sizeof tiny / sizeof tiny[0]; i++) {
        struct rate_profile p = parse_ok(tiny[i]);
        struct rate_arrivals a;
        assert_int_equal(rate_profile_time_of(&p, 1), RATE_NEVER);
        rate_arrivals_init(&a, &p, RATE_ARRIVALS_POISSON, 1, 3, 0, 0);
        assert_int_equal(a.next_us, RATE_NEVER);
    }
}

static void
test_spread_phases_keep_a_fleets_count_per_interval_within_a_few(void **state)
{
    enum { N = 10000 };
    struct rate_profile p = parse_ok("sine:1:0.5:20");
    uint64_t *t = calloc((size_t)N * 40, sizeof *t);
    size_t n = 0;
    (void)state;

    /* 10,000 devices on one sine profile for 30 s, phases by rate_phase_spread(): every 100 ms the fleet
     * sends the profile's integral over it within 5 messages (independent draws would be off by ~25). */
    assert_non_null(t);
    for (uint32_t d = 0; d < N; d++) {
        struct rate_arrivals a;
        rate_arrivals_init(&a, &p, RATE_ARRIVALS_PACED, 1, 0, rate_phase_spread(d, 0x5954), 0);
        for (; a.next_us < 30000000; rate_arrivals_take(&a)) {
            t[n++] = a.next_us;
        }
    }
    for (uint64_t from = 0; from < 30000000; from += 100000) {
        double want = N * (rate_profile_integral(&p, from + 100000) - rate_profile_integral(&p, from));
        size_t got = 0;
        for (size_t i = 0; i < n; i++) {
            got += t[i] >= from && t[i] < from + 100000;
        }
        if (fabs((double)got - want) > 5) {
            fail_msg("[%llu us, +100 ms): %zu sent, %.1f in the profile", (unsigned long long)from, got,
                     want);
        }
    }
    free(t);
}

static void
test_a_stalled_schedule_gives_up_what_it_missed_counted(void **state)
{
    struct rate_profile p = parse_ok("100");
    struct rate_arrivals a;
    (void)state;

    rate_arrivals_init(&a, &p, RATE_ARRIVALS_PACED, 1, 0, 0, 0);
    assert_int_equal(rate_arrivals_skip_lag(&a, 500000, 1000000), 0); /* behind, but not that far */
    /* 5 s late: arrivals 1..500 were due; all but the last due are given up, that one goes out now. */
    assert_int_equal(rate_arrivals_skip_lag(&a, 5000000, 1000000), 499);
    assert_int_equal(a.next_us, 5000000);
    rate_arrivals_take(&a);
    assert_int_equal(a.next_us, 5010000);
    /* A pause: resuming moves the profile's time, no burst. */
    rate_arrivals_resume(&a, 9000000);
    assert_int_equal(a.next_us, 9000000);
    rate_arrivals_take(&a);
    assert_int_equal(a.next_us, 9010000);
}

static void
test_arrival_kinds_parse(void **state)
{
    enum rate_arrival_kind k;
    (void)state;

    assert_int_equal(rate_arrivals_kind_parse("paced", &k), FLEET_OK);
    assert_int_equal(k, RATE_ARRIVALS_PACED);
    assert_int_equal(rate_arrivals_kind_parse("poisson", &k), FLEET_OK);
    assert_int_equal(k, RATE_ARRIVALS_POISSON);
    assert_int_equal(rate_arrivals_kind_parse("Poisson!", &k), FLEET_ERR_INVAL);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_form_parses),
        cmocka_unit_test(test_bad_profiles_name_the_part),
        cmocka_unit_test(test_paced_count_is_floor_of_the_integral_for_every_shape),
        cmocka_unit_test(test_paced_holds_exactly_after_a_day),
        cmocka_unit_test(test_a_stretch_at_zero_is_one_wait_and_a_zero_profile_never_sends),
        cmocka_unit_test(test_poisson_mean_is_the_integral_and_repeats_with_its_seed),
        cmocka_unit_test(test_phases_spread_devices_over_one_arrival),
        cmocka_unit_test(test_a_vanishing_rate_never_arrives),
        cmocka_unit_test(test_spread_phases_keep_a_fleets_count_per_interval_within_a_few),
        cmocka_unit_test(test_a_stalled_schedule_gives_up_what_it_missed_counted),
        cmocka_unit_test(test_arrival_kinds_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
