/*
 * Unit tests of the report's per-subscription rows (yp_rows.c, issue 31): live subscriptions and ended
 * ones each get a row with their kind, target, interval and counts; past YP_ENDED_ROWS ended ones are
 * summed, nothing is lost; the member is JSON a reader parses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json_read.h"
#include "session.h"
#include "yp_rows.h"

/* The device's rows as the report prints them, parsed:
 * {"subscriptions":[...],"subscriptions_ended_summed":{}}.
 */
static struct jsonr_value *
rows_of(const struct device *dev)
{
    struct sbuf b = {0};
    struct jsonr_value *v = NULL;
    char err[128];

    sbuf_adds(&b, "{");
    yp_rows_json(dev, &b);
    sbuf_adds(&b, "}");
    assert_false(b.failed);
    if (jsonr_parse(b.buf, b.len, &v, err, sizeof err)) {
        fail_msg("not JSON (%s): %s", err, b.buf);
    }
    sbuf_free(&b);
    return v;
}

static uint64_t
u64_of(const struct jsonr_value *obj, const char *key)
{
    uint64_t n = UINT64_MAX;

    if (jsonr_get_u64(obj, key, &n)) {
        fail_msg("no integer member %s", key);
    }
    return n;
}

static void
test_live_subscriptions_each_have_a_row(void **state)
{
    struct device dev = {0};
    struct session s = {.id = 7, .dev = &dev};
    struct yp_sub periodic = {.sess = &s,
                              .id = 3,
                              .target = YP_TARGET_OPERATIONAL,
                              .update = YP_UPDATE_PERIODIC,
                              .period_cs = 100,
                              .counts = {.updates = 12, .missed_slots = 1}};
    struct yp_sub events = {.next = &periodic,
                            .sess = &s,
                            .id = 4,
                            .target = YP_TARGET_STREAM,
                            .update = YP_UPDATE_EVENTS,
                            .counts = {.events = 40, .suppressed = 2}};
    struct jsonr_value *v;
    const struct jsonr_value *row;

    (void)state;
    s.subs = &events;
    dev.sessions = &s;
    v = rows_of(&dev);
    assert_int_equal(jsonr_get(v, "subscriptions")->count, 2);
    row = jsonr_get(v, "subscriptions")->child;
    assert_int_equal(u64_of(row, "id"), 4);
    assert_int_equal(u64_of(row, "session"), 7);
    assert_string_equal(jsonr_get_str(row, "kind"), "stream");
    assert_string_equal(jsonr_get_str(row, "target"), "NETCONF");
    assert_null(jsonr_get(row, "period_cs"));
    assert_int_equal(u64_of(row, "events"), 40);
    assert_int_equal(u64_of(row, "suppressed"), 2);
    assert_null(jsonr_get(row, "ended"));
    row = row->next;
    assert_int_equal(u64_of(row, "id"), 3);
    assert_string_equal(jsonr_get_str(row, "kind"), "periodic");
    assert_string_equal(jsonr_get_str(row, "target"), "ietf-datastores:operational");
    assert_int_equal(u64_of(row, "period_cs"), 100);
    assert_int_equal(u64_of(row, "updates"), 12);
    assert_int_equal(u64_of(row, "missed_slots"), 1);
    assert_int_equal(u64_of(jsonr_get(v, "subscriptions_ended_summed"), "subscriptions"), 0);
    jsonr_free(v);
}

static void
test_ended_rows_are_bounded_and_the_rest_summed(void **state)
{
    struct device dev = {0};
    struct session s = {.id = 9, .dev = &dev};
    const uint32_t ended = YP_ENDED_ROWS + 3;
    struct jsonr_value *v;
    const struct jsonr_value *row, *sum;
    uint64_t updates = 0;

    (void)state;
    for (uint32_t i = 1; i <= ended; i++) {
        struct yp_sub sub = {.sess = &s,
                             .id = i,
                             .target = YP_TARGET_RUNNING,
                             .update = YP_UPDATE_ON_CHANGE,
                             .dampening_cs = 5,
                             .counts = {.change_updates = i, .updates = 1, .suspensions = 1}};
        yp_rows_ended(&sub);
    }
    v = rows_of(&dev);
    assert_int_equal(jsonr_get(v, "subscriptions")->count, YP_ENDED_ROWS);
    row = jsonr_get(v, "subscriptions")->child;
    assert_int_equal(u64_of(row, "id"), 1); /* oldest first */
    assert_string_equal(jsonr_get_str(row, "kind"), "on-change");
    assert_int_equal(u64_of(row, "dampening_cs"), 5);
    assert_true(jsonr_get(row, "ended")->boolean);
    for (; row; row = row->next) {
        updates += u64_of(row, "change_updates");
    }
    sum = jsonr_get(v, "subscriptions_ended_summed");
    assert_int_equal(u64_of(sum, "subscriptions"), 3);
    /* Nothing is lost: rows and sum together hold every change update sent (1 + 2 + ... + ended). */
    assert_int_equal(updates + u64_of(sum, "change_updates"), (uint64_t)ended * (ended + 1) / 2);
    assert_int_equal(u64_of(sum, "suspensions"), 3);
    jsonr_free(v);
    yp_rows_free(dev.yp_ended);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_live_subscriptions_each_have_a_row),
        cmocka_unit_test(test_ended_rows_are_bounded_and_the_rest_summed),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
