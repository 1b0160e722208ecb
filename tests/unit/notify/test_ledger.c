/*
 * The push ledger (issue 29): every outcome keeps the identity
 * emitted = in_window + drain + send_failures + dropped + suppressed_pre_window + queued,
 * sent is in_window + drain, and the report's JSON names every field.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ledger.h"

static void
test_every_outcome_keeps_the_identity(void **state)
{
    struct ledger_row r = {0};

    (void)state;
    for (int i = 0; i < 10; i++) {
        ledger_queue(&r);
        assert_true(ledger_consistent(&r));
    }
    assert_int_equal(r.queued, 10);
    ledger_note_sent(&r);
    ledger_note_sent(&r);
    ledger_note_failed(&r);
    ledger_note_dropped(&r);
    assert_true(ledger_consistent(&r));
    ledger_drop_now(&r, 5);
    assert_true(ledger_consistent(&r));
    assert_int_equal(r.emitted, 15);
    assert_int_equal(ledger_sent(&r), 2);
    assert_int_equal(r.send_failures, 1);
    assert_int_equal(r.dropped, 6);
    assert_int_equal(r.queued, 6);
    /* A row whose counts do not add up is caught. */
    r.emitted++;
    assert_false(ledger_consistent(&r));
}

static void
test_sent_is_in_window_plus_drain(void **state)
{
    struct ledger_row r = {.emitted = 10, .in_window = 6, .drain = 3, .suppressed_pre_window = 1};

    (void)state;
    assert_int_equal(ledger_sent(&r), 9);
    assert_true(ledger_consistent(&r));
}

static void
test_sums_and_json(void **state)
{
    struct ledger_row a = {.emitted = 5, .in_window = 3, .send_failures = 1, .dropped = 1};
    struct ledger_row b = {.emitted = 4, .in_window = 2, .drain = 1, .queued = 1};
    struct ledger_row sum = {0};
    struct sbuf out = {0};

    (void)state;
    ledger_add(&sum, &a);
    ledger_add(&sum, &b);
    assert_true(ledger_consistent(&sum));
    ledger_json(&out, &sum);
    assert_false(out.failed);
    assert_string_equal(out.buf, "\"emitted\":9,\"sent\":6,\"in_window\":5,\"drain\":1,\"send_failures\":1,"
                                 "\"dropped\":1,\"suppressed_pre_window\":0,\"queued\":1");
    sbuf_free(&out);
    assert_string_equal(ledger_channel_name(LEDGER_SYSLOG), "syslog");
    assert_string_equal(ledger_channel_name(LEDGER_TRAP), "trap");
    assert_string_equal(ledger_channel_name(LEDGER_NETCONF), "netconf");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_outcome_keeps_the_identity),
        cmocka_unit_test(test_sent_is_in_window_plus_drain),
        cmocka_unit_test(test_sums_and_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
