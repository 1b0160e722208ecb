/*
 * The run window and the ledger's sub-windows (issue 29 item 5 and 6): the
 * window's arithmetic, ledger_note_sent telling in_window from drain, the
 * suppressed count before START, and every count placed in its 10-s slot
 * of its (channel, sink) series, with a clock the test moves.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ledger.h"
#include "push_window.h"
#include "sbuf.h"

#define S 1000000ull /* one second in microseconds */

static monotime_us fake_now;

static monotime_us
fake_clock(void)
{
    return fake_now;
}

static int
setup(void **state)
{
    (void)state;
    fake_now = 1000 * S;
    pushwin_set_clock(fake_clock);
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    ledger_book_free();
    pushwin_configure(NULL);
    pushwin_set_clock(NULL);
    return 0;
}

static void
test_parse_start_end_and_open_end(void **state)
{
    struct push_window w = {0};

    (void)state;
    assert_int_equal(pushwin_parse("3,10", &w), 0);
    assert_true(w.set);
    assert_int_equal(w.start_us, 3 * S);
    assert_int_equal(w.end_us, 10 * S);
    assert_int_equal(pushwin_parse("0.5,", &w), 0);
    assert_int_equal(w.start_us, 500000);
    assert_true(w.end_us == PUSHWIN_OPEN);
}

static void
test_parse_refuses_bad_windows(void **state)
{
    static const char *const bad[] = {"",     "3",   ",5",  "5,5",  "6,5",  "-1,5", "3,x",
                                      "3,5x", "x,5", "3;5", "1e9,", "nan,", "3,+5"};
    struct push_window w = {.start_us = 42};

    (void)state;
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        if (pushwin_parse(bad[k], &w) != -1) {
            fail_msg("\"%s\" was accepted", bad[k]);
        }
        assert_int_equal(w.start_us, 42); /* untouched */
    }
}

static void
test_phase_at_the_edges(void **state)
{
    struct push_window w = {.start_us = 3 * S, .end_us = 10 * S, .set = 1};
    struct push_window open = {.start_us = 3 * S, .end_us = PUSHWIN_OPEN, .set = 1};
    struct push_window none = {0};
    struct push_window from_zero = {.start_us = 0, .end_us = 2 * S, .set = 1};
    monotime_us ready = 500 * S;

    (void)state;
    assert_int_equal(pushwin_phase_at(&w, 0, 900 * S), PUSHWIN_BEFORE); /* not ready yet */
    assert_int_equal(pushwin_phase_at(&w, ready, ready), PUSHWIN_BEFORE);
    assert_int_equal(pushwin_phase_at(&w, ready, ready + 3 * S - 1), PUSHWIN_BEFORE);
    assert_int_equal(pushwin_phase_at(&w, ready, ready + 3 * S), PUSHWIN_INSIDE);
    assert_int_equal(pushwin_phase_at(&w, ready, ready + 10 * S - 1), PUSHWIN_INSIDE);
    assert_int_equal(pushwin_phase_at(&w, ready, ready + 10 * S), PUSHWIN_AFTER);
    assert_int_equal(pushwin_phase_at(&open, ready, ready + 86400 * S), PUSHWIN_INSIDE);
    assert_int_equal(pushwin_phase_at(&none, 0, 0), PUSHWIN_INSIDE); /* no window: always inside */
    /* START 0: the moment the workers run before the ready line is inside too, END still counts. */
    assert_int_equal(pushwin_phase_at(&from_zero, 0, 900 * S), PUSHWIN_INSIDE);
    assert_int_equal(pushwin_phase_at(&from_zero, ready, ready - 1), PUSHWIN_INSIDE);
    assert_int_equal(pushwin_phase_at(&from_zero, ready, ready + 2 * S), PUSHWIN_AFTER);
}

static void
test_slot_is_ten_seconds_since_ready(void **state)
{
    (void)state;
    assert_int_equal(pushwin_slot_at(0, 5000 * S), 0);
    assert_int_equal(pushwin_slot_at(100 * S, 99 * S), 0);
    assert_int_equal(pushwin_slot_at(100 * S, 109 * S + 999999), 0);
    assert_int_equal(pushwin_slot_at(100 * S, 110 * S), 1);
    assert_int_equal(pushwin_slot_at(100 * S, 235 * S), 13);
}

static void
test_note_sent_is_in_window_inside_and_drain_outside(void **state)
{
    struct push_window w = {.start_us = 3 * S, .end_us = 10 * S, .set = 1};
    struct ledger_row r = {0};

    (void)state;
    pushwin_configure(&w);
    pushwin_mark_ready(fake_now);
    /* An explicit message before START reaches the wire outside the window: drain. */
    ledger_queue(&r);
    ledger_note_sent(&r);
    fake_now += 3 * S;
    ledger_queue(&r);
    ledger_queue(&r);
    ledger_note_sent(&r);
    fake_now += 7 * S; /* END: the second one was queued inside and drains */
    ledger_note_sent(&r);
    assert_int_equal(r.in_window, 1);
    assert_int_equal(r.drain, 2);
    assert_int_equal(ledger_sent(&r), 3);
    assert_true(ledger_consistent(&r));
}

static void
test_suppressed_counts_as_emitted_and_keeps_the_identity(void **state)
{
    struct ledger_row r = {0};

    (void)state;
    ledger_suppress(&r, 5);
    ledger_queue(&r);
    ledger_note_failed(&r);
    assert_int_equal(r.emitted, 6);
    assert_int_equal(r.suppressed_pre_window, 5);
    assert_int_equal(ledger_sent(&r), 0);
    assert_true(ledger_consistent(&r));
}

static void
test_sub_windows_place_counts_per_series_and_slot(void **state)
{
    struct push_window w = {.start_us = 0, .end_us = 25 * S, .set = 1};
    struct ledger_row a = {0}, b = {0}, a2 = {0};
    uint64_t c[LEDGER_STATES];

    (void)state;
    pushwin_configure(&w);
    a.series = ledger_series_add(LEDGER_SYSLOG, "udp://127.0.0.1:5514");
    b.series = ledger_series_add(LEDGER_SYSLOG, "tcp://127.0.0.1:5514");
    a2.series = ledger_series_add(LEDGER_SYSLOG, "udp://127.0.0.1:5514"); /* the same sink: the same series */
    assert_int_equal(a.series, 1);
    assert_int_equal(b.series, 2);
    assert_int_equal(a2.series, 1);
    assert_int_equal(ledger_book_start(2), 0);
    /* 25 s of window: 3 slots and the drain's. */
    assert_int_equal(ledger_book_slots(), 3 + LEDGER_DRAIN_SLOTS);
    pushwin_mark_ready(fake_now);

    ledger_queue(&a);
    ledger_note_sent(&a); /* slot 0, the shared table (this thread is not bound) */
    fake_now += 12 * S;
    ledger_bind_thread(1);
    ledger_queue(&a2);
    ledger_queue(&b);
    ledger_note_sent(&a2); /* slot 1 */
    ledger_note_dropped(&b);
    fake_now += 15 * S; /* 27 s: after END, slot 2 */
    ledger_queue(&a);
    ledger_note_sent(&a);
    fake_now += 3600 * S; /* past the kept slots: the last one holds it */
    ledger_drop_now(&b, 4);

    ledger_book_counts(1, 0, c);
    assert_int_equal(c[LEDGER_ST_EMITTED], 1);
    assert_int_equal(c[LEDGER_ST_IN_WINDOW], 1);
    ledger_book_counts(1, 1, c);
    assert_int_equal(c[LEDGER_ST_EMITTED], 1);
    assert_int_equal(c[LEDGER_ST_IN_WINDOW], 1);
    ledger_book_counts(1, 2, c);
    assert_int_equal(c[LEDGER_ST_DRAIN], 1);
    assert_int_equal(c[LEDGER_ST_IN_WINDOW], 0);
    ledger_book_counts(2, 1, c);
    assert_int_equal(c[LEDGER_ST_DROPPED], 1);
    ledger_book_counts(2, ledger_book_slots() - 1, c);
    assert_int_equal(c[LEDGER_ST_DROPPED], 4);
    assert_int_equal(c[LEDGER_ST_EMITTED], 4);
    /* The totals of a series are its rows' sums. */
    ledger_book_counts(1, UINT32_MAX, c);
    assert_int_equal(c[LEDGER_ST_EMITTED], a.emitted + a2.emitted);
    assert_int_equal(c[LEDGER_ST_IN_WINDOW] + c[LEDGER_ST_DRAIN], ledger_sent(&a) + ledger_sent(&a2));
    ledger_book_counts(2, UINT32_MAX, c);
    assert_int_equal(c[LEDGER_ST_EMITTED], b.emitted);
    assert_int_equal(c[LEDGER_ST_DROPPED], b.dropped);
    ledger_bind_thread(UINT32_MAX);
}

static void
test_book_json_names_window_series_and_slots(void **state)
{
    struct push_window w = {.start_us = 3 * S, .end_us = PUSHWIN_OPEN, .set = 1};
    struct ledger_row r = {0};
    struct sbuf out = {0};

    (void)state;
    pushwin_configure(&w);
    r.series = ledger_series_add(LEDGER_SYSLOG, "udp://[::1]:514");
    assert_int_equal(ledger_book_start(1), 0);
    assert_int_equal(ledger_book_slots(), LEDGER_MAX_SLOTS);
    pushwin_mark_ready(fake_now);
    ledger_suppress(&r, 2);
    fake_now += 21 * S;
    ledger_queue(&r);
    ledger_note_sent(&r);
    ledger_book_json(&out);
    assert_non_null(strstr(out.buf, "\"window\":{\"start_s\":3.000,\"end_s\":null}"));
    assert_non_null(strstr(out.buf, "\"channel\":\"syslog\",\"sink\":\"udp://[::1]:514\""));
    assert_non_null(strstr(out.buf, "{\"t\":0,\"emitted\":2,\"in_window\":0,\"drain\":0,\"send_failures\":0,"
                                    "\"dropped\":0,\"suppressed_pre_window\":2,\"sent\":0}"));
    assert_non_null(strstr(out.buf, "{\"t\":20,\"emitted\":1,\"in_window\":1,\"drain\":0"));
    assert_null(strstr(out.buf, "\"t\":10")); /* an empty slot is left out */
    sbuf_free(&out);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_parse_start_end_and_open_end, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parse_refuses_bad_windows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_phase_at_the_edges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slot_is_ten_seconds_since_ready, setup, teardown),
        cmocka_unit_test_setup_teardown(test_note_sent_is_in_window_inside_and_drain_outside, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_suppressed_counts_as_emitted_and_keeps_the_identity, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sub_windows_place_counts_per_series_and_slot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_book_json_names_window_series_and_slots, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
