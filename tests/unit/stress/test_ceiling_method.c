/*
 * Unit tests of the collector ceiling method (stress/ceiling_method.c) on
 * synthetic series that a wrong method would misjudge: a sawtooth queue of a
 * batching collector below capacity, a queue growing 2 % of the offered rate,
 * one that degrades in the second half of its window, one that grows then
 * drains, loss on the way in with a flat queue, a fleet that drifts from its
 * level, the search against model collectors of known capacity, a drain with
 * noise, the identity with the reference page's numbers, the loss-isolation
 * boundary and the silence check (issue 30).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ceiling_method.h"

/* Synthetic cells: this many devices, sampled every second over a 60 s window (samples at t 0..60). */
#define TEST_DEVICES     100
#define TEST_WINDOW_S    60
#define TEST_MAX_SAMPLES 256

/* cmocka's float assertions work in float: the checks here need double, and print what arrived. */
#define assert_near(a, b, eps) near_check((a), (b), (eps), #a, __FILE__, __LINE__)

static void
near_check(double a, double b, double eps, const char *what, const char *file, int line)
{
    if (!(fabs(a - b) <= eps)) {
        print_error("%s is %.9g, expected %.9g +- %.3g\n", what, a, b, eps);
        _fail(file, line);
    }
}

/* The queue depth a synthetic collector holds at time @p t of a cell offered @p offered messages/s. */
typedef double (*depth_fn)(double t, double offered, double arg);

/* A batching collector below capacity: messages wait for the next flush every 500 ms, so the depth is a
 * sawtooth between 0 and half a second of traffic. */
static double
depth_sawtooth(double t, double offered, double arg)
{
    (void)arg;
    return offered * fmod(t, 0.5);
}

/* A collector that keeps up with all but @p arg of the offered rate, on top of its sawtooth. */
static double
depth_growing(double t, double offered, double arg)
{
    return depth_sawtooth(t, offered, 0) + arg * offered * t;
}

/* Flat (sawtooth) for the first half of the window, then growing by @p arg messages per second. */
static double
depth_degrades(double t, double offered, double arg)
{
    double late = t - TEST_WINDOW_S / 2.0;

    return depth_sawtooth(t, offered, 0) + (late > 0 ? arg * late : 0);
}

/* Grows at @p arg per second for two thirds of the window (a burst of startup work), then drains at
 * the same pace. */
static double
depth_grows_then_drains(double t, double offered, double arg)
{
    double turn = TEST_WINDOW_S * 2.0 / 3.0;

    (void)offered;
    return t <= turn ? arg * t : arg * turn - arg * (t - turn);
}

/*
 * Fill @p s with a cell of @p level per device: the fleet sends at @p sent_share of the level, the
 * collector receives @p arrived_share of that and holds depth(t) of it in its queue. Sample times
 * carry a jitter of a few tenths of a second so a 500 ms flush is seen at every phase.
 * @return The number of samples, t 0 to @p until_s.
 */
static size_t
synth_cell(struct ceil_sample *s, double level, double sent_share, double arrived_share, depth_fn depth,
           double arg, double until_s)
{
    double offered = level * TEST_DEVICES;
    size_t n = 0;

    for (double base = 0; base <= until_s + 1e-9 && n < TEST_MAX_SAMPLES; base += 1.0) {
        double t = base == 0 ? 0 : base + 0.1 * (double)(n * 7 % 5) - 0.2;
        double sent = 1e6 + offered * sent_share * t; /* absolute readings: lifetime totals */
        double arrived = 5e5 + (sent - 1e6) * arrived_share;
        double d = depth(t, offered, arg);

        s[n].t_s = t;
        s[n].sent = sent;
        s[n].arrived = arrived;
        s[n].persisted = 2e5 + (arrived - 5e5) - d;
        s[n].queue = NAN;
        s[n].dropped = NAN;
        n++;
    }
    return n;
}

static void
judge(const struct ceil_sample *s, size_t n, double level, struct ceil_cell_result *res)
{
    struct ceil_rules r;
    struct ceil_cell_input in = {.per_device_rate = level,
                                 .devices = TEST_DEVICES,
                                 .window_s = TEST_WINDOW_S,
                                 .load = s,
                                 .load_count = n};

    ceil_rules_default(&r);
    ceil_cell_judge(&in, &r, res);
}

static void
test_rules_default_are_the_methods(void **state)
{
    struct ceil_rules r;

    (void)state;
    ceil_rules_default(&r);
    assert_true(r.slope_share == 0.01 && r.slope_floor == 0.5 && r.drift == 0.05);
    assert_true(r.tolerance == 0.005 && r.identity_tolerance == 0.15 && r.precision == 0.05);
    assert_true(r.early_factor == 4 && r.early_min_share == 0.33);
}

static void
test_fit_line_least_squares_skips_nan(void **state)
{
    double x[] = {0, 1, 2, 3, 4, 5};
    double y[] = {3, 5, NAN, 9, 11, 13};
    double noisy[] = {0, 2, 1, 3, 2, 4}; /* by hand: sxy 11 / sxx 17.5 */
    struct ceil_fit f;

    (void)state;
    ceil_fit_line(x, y, 6, &f);
    assert_int_equal(f.points, 5);
    assert_near(f.slope, 2, 1e-12);
    assert_near(f.intercept, 3, 1e-12);
    ceil_fit_line(x, noisy, 6, &f);
    assert_near(f.slope, 11.0 / 17.5, 1e-12);
    ceil_fit_line(x, y, 1, &f);
    assert_int_equal(f.points, 1);
    assert_true(f.slope == 0);
    ceil_fit_line(x, y, 0, &f);
    assert_int_equal(f.points, 0);
    assert_true(f.slope == 0);
}

static void
test_queue_depth_probe_then_arrived_then_sent(void **state)
{
    struct ceil_sample s0 = {0, 100, 50, 10, NAN, NAN};
    struct ceil_sample s = {1, 300, 200, 60, NAN, NAN};

    (void)state;
    /* arrived 150 - persisted 50 */
    assert_near(ceil_queue_depth(&s0, &s), 100, 1e-12);
    s.queue = 7;
    assert_near(ceil_queue_depth(&s0, &s), 7, 1e-12);
    s.queue = NAN;
    s.arrived = NAN;
    /* sent 200 - persisted 50 */
    assert_near(ceil_queue_depth(&s0, &s), 150, 1e-12);
    s.persisted = NAN;
    assert_true(isnan(ceil_queue_depth(&s0, &s)));
}

static void
test_sawtooth_below_capacity_is_flat(void **state)
{
    struct ceil_sample s[TEST_MAX_SAMPLES];
    struct ceil_cell_result res;
    size_t n = synth_cell(s, 10, 1, 1, depth_sawtooth, 0, TEST_WINDOW_S);

    (void)state;
    judge(s, n, 10, &res);
    assert_string_equal(ceil_verdict_name(res.verdict), "flat");
    assert_near(res.threshold, 10, 1e-9); /* 1 % of 1000/s */
    assert_true(fabs(res.slope_all.slope) < res.threshold);
    assert_true(res.peak_depth > 300 && res.peak_depth <= 500); /* the sawtooth was seen, not aliased */
    assert_near(res.observed_per_device_rate, 10, 1e-9);
    assert_near(res.persisted_rate, 1000, 20);
    assert_true(isnan(res.loss_inside)); /* not settled */
    assert_non_null(strstr(res.why, "threshold 10.0/s"));
}

static void
test_queue_growing_two_percent_of_offered_is_positive(void **state)
{
    struct ceil_sample s[TEST_MAX_SAMPLES];
    struct ceil_cell_result res;
    size_t n = synth_cell(s, 10, 1, 1, depth_growing, 0.02, TEST_WINDOW_S);

    (void)state;
    judge(s, n, 10, &res);
    assert_string_equal(ceil_verdict_name(res.verdict), "positive");
    assert_near(res.slope_all.slope, 20, 2);
    assert_near(res.slope_last_half.slope, 20, 3);
    assert_non_null(strstr(res.why, "queue +"));
}

/* Degrading in the second half at g/s gives a whole-window slope of about g/2 (the hockey stick's
 * least-squares line): positive only when both the whole window and its second half pass the threshold. */
static void
test_degrades_in_second_half_positive_only_when_whole_window_passes(void **state)
{
    struct ceil_sample s[TEST_MAX_SAMPLES];
    struct ceil_cell_result res;
    size_t n = synth_cell(s, 10, 1, 1, depth_degrades, 30, TEST_WINDOW_S);

    (void)state;
    judge(s, n, 10, &res); /* threshold 10/s: second half +30/s, whole window about +15/s */
    assert_string_equal(ceil_verdict_name(res.verdict), "positive");
    assert_near(res.slope_all.slope, 15, 2);
    assert_near(res.slope_last_half.slope, 30, 3);

    n = synth_cell(s, 10, 1, 1, depth_degrades, 15, TEST_WINDOW_S);
    judge(s, n, 10, &res); /* second half +15/s passes, whole window about +7.5/s does not */
    assert_true(res.slope_last_half.slope > res.threshold);
    assert_true(res.slope_all.slope < res.threshold);
    assert_string_equal(ceil_verdict_name(res.verdict), "flat");
}

static void
test_grows_then_drains_is_flat(void **state)
{
    struct ceil_sample s[TEST_MAX_SAMPLES];
    struct ceil_cell_result res;
    size_t n = synth_cell(s, 10, 1, 1, depth_grows_then_drains, 30, TEST_WINDOW_S);

    (void)state;
    judge(s, n, 10, &res);
    assert_true(res.slope_all.slope > res.threshold); /* the whole window alone would call it positive */
    assert_true(res.slope_last_half.slope < 0);
    assert_string_equal(ceil_verdict_name(res.verdict), "flat");
    assert_near(res.peak_depth, 1200, 30);
}

static void
test_udp_overrun_is_lossy_even_with_flat_queue(void **state)
{
    struct ceil_sample s[TEST_MAX_SAMPLES];
    struct ceil_cell_result res;
    size_t n = synth_cell(s, 10, 1, 0.929, depth_sawtooth, 0, TEST_WINDOW_S);

    (void)state;
    judge(s, n, 10, &res);
    assert_string_equal(ceil_verdict_name(res.verdict), "lossy");
    assert_near(res.loss_in, 0.071, 1e-9);
    assert_true(fabs(res.slope_all.slope) < res.threshold);
    assert_string_equal(res.why, "lost 7.1% between sent and arrived (tolerance 0.5%)");

    /* 0.4 % lost is within the tolerance: flat */
    n = synth_cell(s, 10, 1, 0.996, depth_sawtooth, 0, TEST_WINDOW_S);
    judge(s, n, 10, &res);
    assert_string_equal(ceil_verdict_name(res.verdict), "flat");
}

static void
test_drop_counter_moving_is_lossy(void **state)
{
    struct ceil_sample s[TEST_MAX_SAMPLES];
    struct ceil_cell_result res;
    size_t n = synth_cell(s, 10, 1, 1, depth_sawtooth, 0, TEST_WINDOW_S);

    (void)state;
    for (size_t i = 0; i < n; i++) {
        s[i].dropped = 40 + (double)(i > n / 2 ? 3 : 0);
    }
    judge(s, n, 10, &res);
    assert_string_equal(ceil_verdict_name(res.verdict), "lossy");
    assert_near(res.dropped, 3, 1e-12);
    for (size_t i = 0; i < n; i++) {
        s[i].dropped = 40;
    }
    judge(s, n, 10, &res);
    assert_string_equal(ceil_verdict_name(res.verdict), "flat");
}

static void
test_drift_from_level_discards(void **state)
{
    struct ceil_sample s[TEST_MAX_SAMPLES];
    struct ceil_cell_result res;
    size_t n = synth_cell(s, 16, 14.2 / 16, 1, depth_sawtooth, 0, TEST_WINDOW_S);

    (void)state;
    judge(s, n, 16, &res);
    assert_string_equal(ceil_verdict_name(res.verdict), "discarded");
    assert_near(res.observed_per_device_rate, 14.2, 1e-9);
    assert_string_equal(res.why, "observed 14.2/s per device, 11% off 16/s (drift 5%)");

    /* 4 % off is within the drift: judged on its queue */
    n = synth_cell(s, 16, 0.96, 1, depth_sawtooth, 0, TEST_WINDOW_S);
    judge(s, n, 16, &res);
    assert_string_equal(ceil_verdict_name(res.verdict), "flat");
}

static void
test_interrupted_or_too_few_samples_is_incomplete(void **state)
{
    struct ceil_sample s[TEST_MAX_SAMPLES];
    struct ceil_cell_result res;
    struct ceil_rules r;
    size_t n = synth_cell(s, 10, 1, 1, depth_growing, 0.5, 20);
    struct ceil_cell_input in = {.per_device_rate = 10,
                                 .devices = TEST_DEVICES,
                                 .window_s = TEST_WINDOW_S,
                                 .load = s,
                                 .load_count = n,
                                 .interrupted = 1};

    (void)state;
    ceil_rules_default(&r);
    ceil_cell_judge(&in, &r, &res);
    assert_string_equal(ceil_verdict_name(res.verdict), "incomplete");
    assert_non_null(strstr(res.why, "interrupted"));
    in.interrupted = 0;
    in.load_count = 2;
    ceil_cell_judge(&in, &r, &res);
    assert_string_equal(ceil_verdict_name(res.verdict), "incomplete");
    in.load_count = 0;
    ceil_cell_judge(&in, &r, &res);
    assert_string_equal(ceil_verdict_name(res.verdict), "incomplete");
}

/* A cell is flat only when it held for its whole window and its queue was seen. */
static void
test_short_or_unseen_cell_is_not_flat(void **state)
{
    struct ceil_sample s[TEST_MAX_SAMPLES];
    struct ceil_cell_result res;
    struct ceil_rules r;
    size_t n = synth_cell(s, 10, 1, 1, depth_sawtooth, 0, 30);
    struct ceil_cell_input in = {.per_device_rate = 10,
                                 .devices = TEST_DEVICES,
                                 .window_s = TEST_WINDOW_S,
                                 .load = s,
                                 .load_count = n};

    (void)state;
    ceil_rules_default(&r);
    ceil_cell_judge(&in, &r, &res);
    assert_string_equal(ceil_verdict_name(res.verdict), "incomplete");
    assert_non_null(strstr(res.why, "of its 60.0 s window"));

    /* the whole window, but the persisted probe never answered: no depth, no verdict */
    in.load_count = synth_cell(s, 10, 1, 1, depth_sawtooth, 0, TEST_WINDOW_S);
    for (size_t i = 0; i < in.load_count; i++) {
        s[i].persisted = NAN;
    }
    ceil_cell_judge(&in, &r, &res);
    assert_string_equal(ceil_verdict_name(res.verdict), "incomplete");
    assert_non_null(strstr(res.why, "queue depth readings"));
}

/* A collector that persists every message 300 ms after it was sent: nothing in flight before the load, a
 * constant 300 ms of traffic in flight once it runs. */
static double
depth_in_flight(double t, double offered, double arg)
{
    (void)arg;
    return t > 0 ? offered * 0.3 : 0;
}

/* The messages in flight when the load starts are an offset, not growth: neither the verdict nor the
 * early stop may read the step from the empty queue before the load as a slope (a 10-s cell of an
 * instantaneous-enough collector was cut short as positive, issue 30). */
static void
test_in_flight_step_at_the_start_is_not_growth(void **state)
{
    struct ceil_sample s[TEST_MAX_SAMPLES];
    struct ceil_cell_result res;
    struct ceil_rules r;
    struct ceil_cell_input in = {.per_device_rate = 10, .devices = TEST_DEVICES, .window_s = 10, .load = s};

    (void)state;
    ceil_rules_default(&r);
    in.load_count = synth_cell(s, 10, 1, 1, depth_in_flight, 0, 4);
    assert_false(ceil_cell_early(&in, &r));
    in.load_count = synth_cell(s, 10, 1, 1, depth_in_flight, 0, 10);
    ceil_cell_judge(&in, &r, &res);
    assert_string_equal(ceil_verdict_name(res.verdict), "flat");
    assert_near(res.slope_all.slope, 0, 1e-6);
    assert_near(res.peak_depth, 300, 1e-6);
}

static void
test_early_stop_needs_share_of_window_and_steep_slope(void **state)
{
    struct ceil_sample s[TEST_MAX_SAMPLES];
    struct ceil_cell_result res;
    struct ceil_rules r;
    struct ceil_cell_input in = {
        .per_device_rate = 10, .devices = TEST_DEVICES, .window_s = TEST_WINDOW_S, .load = s};

    (void)state;
    ceil_rules_default(&r);
    /* +50/s against a 10/s threshold: past 4 x, but only after a third of the window */
    in.load_count = synth_cell(s, 10, 1, 1, depth_growing, 0.05, 10);
    assert_false(ceil_cell_early(&in, &r));
    in.load_count = synth_cell(s, 10, 1, 1, depth_growing, 0.05, 21);
    assert_true(ceil_cell_early(&in, &r));
    in.cut_short = 1;
    ceil_cell_judge(&in, &r, &res);
    assert_string_equal(ceil_verdict_name(res.verdict), "positive");
    assert_non_null(strstr(res.why, "cut short"));
    /* +30/s is positive but not 4 x the threshold: the cell runs its window */
    in.load_count = synth_cell(s, 10, 1, 1, depth_growing, 0.03, 40);
    assert_false(ceil_cell_early(&in, &r));
}

static void
test_threshold_has_a_floor_and_settled_gives_loss_inside(void **state)
{
    struct ceil_sample s[TEST_MAX_SAMPLES];
    struct ceil_cell_result res;
    struct ceil_rules r;
    struct ceil_sample settled;
    size_t n = synth_cell(s, 0.2, 1, 1, depth_sawtooth, 0, TEST_WINDOW_S);
    struct ceil_cell_input in = {.per_device_rate = 0.2,
                                 .devices = TEST_DEVICES,
                                 .window_s = TEST_WINDOW_S,
                                 .load = s,
                                 .load_count = n,
                                 .settled = &settled};

    (void)state;
    ceil_rules_default(&r);
    /* settled: 1200 sent, 1200 arrived, 1194 persisted (0.5 % inside) */
    settled = s[0];
    settled.t_s = TEST_WINDOW_S + 5;
    settled.sent += 1200;
    settled.arrived += 1200;
    settled.persisted += 1194;
    ceil_cell_judge(&in, &r, &res);
    assert_near(res.threshold, 0.5, 1e-12); /* 1 % of 20/s is 0.2: the floor */
    assert_near(res.sent, 1200, 1e-9);
    assert_near(res.arrived, 1200, 1e-9);
    assert_near(res.persisted, 1194, 1e-9);
    assert_near(res.loss_in, 0, 1e-12);
    assert_near(res.loss_inside, 0.005, 1e-12);
    assert_true(isnan(res.dropped));

    /* without an arrival probe, loss inside is sent against persisted and loss in unknown */
    for (size_t i = 0; i < n; i++) {
        s[i].arrived = NAN;
    }
    settled.arrived = NAN;
    ceil_cell_judge(&in, &r, &res);
    assert_true(isnan(res.loss_in));
    assert_near(res.loss_inside, 0.005, 1e-12);
}

/* Drive a search against a model collector: a cell is flat iff level x devices <= capacity. */
static double
search_model(double capacity, double from, double to, double precision, double *levels, size_t max_levels,
             size_t *count)
{
    struct ceil_search s;
    double level;

    ceil_search_init(&s, from, to, precision);
    *count = 0;
    while (ceil_search_next(&s, &level)) {
        assert_true(*count < max_levels); /* bounded: a search that does not end fails here */
        levels[(*count)++] = level;
        ceil_search_record(&s, level, level * TEST_DEVICES <= capacity ? CEIL_FLAT : CEIL_POSITIVE);
    }
    assert_true(s.done);
    assert_true(strlen(s.why_done) > 0);
    assert_int_equal(s.cells, *count);
    return ceil_search_answer(&s);
}

static void
test_search_converges_within_precision_never_above(void **state)
{
    static const double capacities[] = {137, 1000, 4321, 25000, 99999};
    double levels[128];
    size_t count;

    (void)state;
    for (size_t i = 0; i < sizeof capacities / sizeof capacities[0]; i++) {
        double truth = capacities[i] / TEST_DEVICES;
        double answer = search_model(capacities[i], 1, 10000, 0.05, levels, 128, &count);

        assert_true(answer <= truth);
        assert_true(answer * 1.05 >= truth);
        assert_true(count < 30);
        /* a precision of 0 still ends, where no midpoint is left */
        answer = search_model(capacities[i], 1, 10000, 0, levels, 128, &count);
        assert_true(answer <= truth && answer * 1.000001 >= truth);
        for (size_t k = 0; k < count; k++) {
            assert_true(levels[k] <= 10000); /* never past --to */
        }
    }
}

/* A collector serving @p arg messages per second: above it, the queue grows by the excess. */
static double
depth_capacity(double t, double offered, double arg)
{
    return depth_sawtooth(t, offered, 0) + (offered > arg ? (offered - arg) * t : 0);
}

/* The whole method on a model collector: each cell's series judged, the verdicts driving the search. The
 * slope threshold (1 % of offered) lets a level up to 1 % above capacity pass as flat, and no more. */
static void
test_judged_cells_find_capacity_of_model_collector(void **state)
{
    static const double capacities[] = {450, 2000, 7777, 31000};
    struct ceil_sample s[TEST_MAX_SAMPLES];

    (void)state;
    for (size_t i = 0; i < sizeof capacities / sizeof capacities[0]; i++) {
        struct ceil_search search;
        struct ceil_cell_result res;
        double level, answer;

        ceil_search_init(&search, 1, 1000, 0.05);
        while (ceil_search_next(&search, &level)) {
            size_t n = synth_cell(s, level, 1, 1, depth_capacity, capacities[i], TEST_WINDOW_S);

            assert_true(search.cells < 40);
            judge(s, n, level, &res);
            ceil_search_record(&search, level, res.verdict);
        }
        answer = ceil_search_answer(&search) * TEST_DEVICES;
        if (!(answer <= capacities[i] * 1.01 && answer * 1.06 >= capacities[i])) {
            print_error("capacity %.0f/s: answer %.1f/s (%s)\n", capacities[i], answer, search.why_done);
            fail();
        }
    }
}

static void
test_search_first_cell_above_capacity_walks_down(void **state)
{
    double levels[128];
    size_t count;
    double answer = search_model(700, 100, 1000, 0.05, levels, 128, &count);

    (void)state;
    assert_true(count >= 5);
    assert_true(levels[0] == 100 && levels[1] == 50 && levels[2] == 25 && levels[3] == 12.5);
    assert_true(levels[4] == 6.25); /* flat: bisection between 6.25 and 12.5 from here */
    assert_true(levels[5] == 9.375);
    assert_true(answer <= 7 && answer * 1.05 >= 7);
}

static void
test_search_ends_without_answer_when_nothing_holds(void **state)
{
    double levels[128];
    size_t count;
    double answer = search_model(0, 1, 100, 0.05, levels, 128, &count);

    (void)state;
    assert_true(answer == 0);
    assert_int_equal(count, 11); /* 1, 1/2, ... 1/1024 */
    assert_true(levels[count - 1] >= CEIL_SEARCH_FLOOR_SHARE);
}

static void
test_search_top_level_flat_answers_at_least_to(void **state)
{
    struct ceil_search s;
    double level;
    double levels[128];
    size_t count;

    (void)state;
    assert_true(search_model(1e9, 1, 100, 0.05, levels, 128, &count) == 100);
    assert_int_equal(count, 8); /* 1 2 4 8 16 32 64 100 */
    assert_true(levels[7] == 100);
    ceil_search_init(&s, 3, 3, 0.05);
    assert_true(ceil_search_next(&s, &level) && level == 3);
    ceil_search_record(&s, level, CEIL_FLAT);
    assert_false(ceil_search_next(&s, &level));
    assert_non_null(strstr(s.why_done, "at least"));
    assert_true(ceil_search_answer(&s) == 3);
}

static void
test_search_retries_a_discarded_cell_once(void **state)
{
    struct ceil_search s;
    double level;

    (void)state;
    ceil_search_init(&s, 4, 64, 0.05);
    assert_true(ceil_search_next(&s, &level) && level == 4);
    ceil_search_record(&s, level, CEIL_DISCARDED);
    assert_true(ceil_search_next(&s, &level) && level == 4);
    ceil_search_record(&s, level, CEIL_FLAT);
    assert_true(ceil_search_next(&s, &level) && level == 8);
    ceil_search_record(&s, level, CEIL_DISCARDED); /* not in a row with the first */
    assert_true(ceil_search_next(&s, &level) && level == 8);
    ceil_search_record(&s, level, CEIL_DISCARDED);
    assert_false(ceil_search_next(&s, &level));
    assert_true(s.done && s.no_answer);
    assert_true(ceil_search_answer(&s) == 0);
    assert_non_null(strstr(s.why_done, "discarded twice"));
}

static void
test_search_lossy_is_above_and_incomplete_ends(void **state)
{
    struct ceil_search s;
    double level;

    (void)state;
    ceil_search_init(&s, 10, 100, 0.05);
    assert_true(ceil_search_next(&s, &level) && level == 10);
    ceil_search_record(&s, level, CEIL_LOSSY);
    assert_true(ceil_search_next(&s, &level) && level == 5);
    ceil_search_record(&s, level, CEIL_FLAT);
    assert_true(ceil_search_next(&s, &level) && level == 7.5);
    ceil_search_record(&s, level, CEIL_INCOMPLETE);
    assert_false(ceil_search_next(&s, &level));
    assert_non_null(strstr(s.why_done, "interrupted"));
    assert_true(ceil_search_answer(&s) == 5);
}

/* A burst at 2000/s for 30 s into a collector serving 800/s, persisted readings off by up to +-20. */
static size_t
synth_drain(struct ceil_sample *s, double arrive_rate, double service_rate)
{
    size_t n = 0;

    for (double t = 0; t <= 120 && n < TEST_MAX_SAMPLES; t += 1, n++) {
        double arrived = arrive_rate * (t < 30 ? t : 30);
        double done = service_rate * t < arrived ? service_rate * t : arrived;
        double noise = 20.0 * ((double)(n * 37 % 11) - 5) / 5.0;

        s[n] = (struct ceil_sample){t, 1e6 + arrived, 4e5 + arrived, 3e5 + done + noise, NAN, NAN};
    }
    return n;
}

static void
test_drain_fit_recovers_service_rate_from_noisy_drain(void **state)
{
    struct ceil_sample s[TEST_MAX_SAMPLES];
    struct ceil_drain d;
    size_t n = synth_drain(s, 2000, 800);

    (void)state;
    ceil_drain_fit(s, n, 30, 1000, &d);
    assert_near(d.rate, 800, 8);          /* within 1 % */
    assert_near(d.peak_depth, 36000, 45); /* two noisy readings */
    assert_near(d.drain_s, 45, 1.5);
    assert_true(d.points >= 30);

    /* a collector faster than the burst builds no backlog: not measured, and says so */
    n = synth_drain(s, 2000, 3000);
    ceil_drain_fit(s, n, 30, 1000, &d);
    assert_true(d.rate == 0);
    assert_non_null(strstr(d.why, "no backlog"));

    /* a drain of two samples is too short to fit */
    n = synth_drain(s, 2000, 800);
    ceil_drain_fit(s, 32, 30, 1000, &d);
    assert_true(d.rate == 0);
    assert_non_null(strstr(d.why, "in the drain (3 needed)"));
}

static void
test_identity_reproduces_reference_numbers(void **state)
{
    struct ceil_identity id;

    (void)state;
    /* one consumer, 4 messages per record, 30 ms per dispatch: 133/s, measured ~130/s */
    assert_int_equal(ceil_identity_check(4, 30, NAN, 130, 0.15, &id), 0);
    assert_near(id.predicted, 133.333, 0.001);
    assert_true(id.reproduces);
    /* four workers at batch 1 (3 ms + 6.7 ms): 412/s predicted against 144/s measured */
    assert_int_equal(ceil_identity_check(1, 9.7, 4, 144, 0.15, &id), 0);
    assert_near(id.predicted, 412.37, 0.01);
    assert_true(id.error > 1.8);
    assert_false(id.reproduces);
    /* nothing to check without a service time or with no workers */
    assert_int_equal(ceil_identity_check(4, NAN, 1, 130, 0.15, &id), -1);
    assert_int_equal(ceil_identity_check(4, 30, 0, 130, 0.15, &id), -1);
    assert_int_equal(ceil_identity_check(4, 30, 1, 0, 0.15, &id), -1);
}

static void
test_loss_isolation_half_percent_boundary(void **state)
{
    struct ceil_loss_check c;

    (void)state;
    ceil_loss_isolation(10000, 9950, 0.005, &c);
    assert_true(c.within_tolerance);
    assert_near(c.share, 0.005, 1e-15);
    ceil_loss_isolation(10000, 9949, 0.005, &c);
    assert_false(c.within_tolerance);
    ceil_loss_isolation(10000, 10051, 0.005, &c); /* persisted above sent: background emission */
    assert_false(c.within_tolerance);
    ceil_loss_isolation(0, 0, 0.005, &c);
    assert_false(c.within_tolerance);
    ceil_loss_isolation(10000, NAN, 0.005, &c);
    assert_false(c.within_tolerance);
}

static void
test_silence_only_when_sent_does_not_move(void **state)
{
    (void)state;
    assert_true(ceil_silent(5000, 5000, 0));
    assert_false(ceil_silent(5000, 5001, 0));
    assert_true(ceil_silent(5000, 5002, 2));
    assert_false(ceil_silent(5000, NAN, 0));
}

static void
test_stats_nearest_rank_median_of_finite_values(void **state)
{
    double v[] = {5, NAN, 1, 3, 2, INFINITY};
    struct ceil_stats st;

    (void)state;
    ceil_stats_of(v, 6, &st);
    assert_int_equal(st.count, 4);
    assert_near(st.mean, 2.75, 1e-12);
    assert_true(st.p50 == 2 && st.min == 1 && st.max == 5);
    assert_true(v[0] == 5 && v[2] == 1); /* not sorted in place */
    ceil_stats_of(v, 1, &st);
    assert_true(st.count == 1 && st.p50 == 5);
    ceil_stats_of(v + 1, 1, &st);
    assert_int_equal(st.count, 0);
    assert_true(isnan(st.mean) && isnan(st.p50));
}

static void
test_verdict_names(void **state)
{
    (void)state;
    assert_string_equal(ceil_verdict_name(CEIL_FLAT), "flat");
    assert_string_equal(ceil_verdict_name(CEIL_POSITIVE), "positive");
    assert_string_equal(ceil_verdict_name(CEIL_LOSSY), "lossy");
    assert_string_equal(ceil_verdict_name(CEIL_DISCARDED), "discarded");
    assert_string_equal(ceil_verdict_name(CEIL_INCOMPLETE), "incomplete");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules_default_are_the_methods),
        cmocka_unit_test(test_fit_line_least_squares_skips_nan),
        cmocka_unit_test(test_queue_depth_probe_then_arrived_then_sent),
        cmocka_unit_test(test_sawtooth_below_capacity_is_flat),
        cmocka_unit_test(test_queue_growing_two_percent_of_offered_is_positive),
        cmocka_unit_test(test_degrades_in_second_half_positive_only_when_whole_window_passes),
        cmocka_unit_test(test_grows_then_drains_is_flat),
        cmocka_unit_test(test_udp_overrun_is_lossy_even_with_flat_queue),
        cmocka_unit_test(test_drop_counter_moving_is_lossy),
        cmocka_unit_test(test_drift_from_level_discards),
        cmocka_unit_test(test_interrupted_or_too_few_samples_is_incomplete),
        cmocka_unit_test(test_short_or_unseen_cell_is_not_flat),
        cmocka_unit_test(test_early_stop_needs_share_of_window_and_steep_slope),
        cmocka_unit_test(test_in_flight_step_at_the_start_is_not_growth),
        cmocka_unit_test(test_threshold_has_a_floor_and_settled_gives_loss_inside),
        cmocka_unit_test(test_search_converges_within_precision_never_above),
        cmocka_unit_test(test_judged_cells_find_capacity_of_model_collector),
        cmocka_unit_test(test_search_first_cell_above_capacity_walks_down),
        cmocka_unit_test(test_search_ends_without_answer_when_nothing_holds),
        cmocka_unit_test(test_search_top_level_flat_answers_at_least_to),
        cmocka_unit_test(test_search_retries_a_discarded_cell_once),
        cmocka_unit_test(test_search_lossy_is_above_and_incomplete_ends),
        cmocka_unit_test(test_drain_fit_recovers_service_rate_from_noisy_drain),
        cmocka_unit_test(test_identity_reproduces_reference_numbers),
        cmocka_unit_test(test_loss_isolation_half_percent_boundary),
        cmocka_unit_test(test_silence_only_when_sent_does_not_move),
        cmocka_unit_test(test_stats_nearest_rank_median_of_finite_values),
        cmocka_unit_test(test_verdict_names),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
