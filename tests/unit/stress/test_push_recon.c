/*
 * Unit tests of push's reconciliation with the fleet's report (stress/push_recon.c, issue 31): devices
 * joined by address and port, subscriptions by id, counts compared exactly; a report that is not JSON or
 * lists no devices is refused. Reports are written to a temporary file in the report's shape
 * ("devices"[]."subscriptions"[] with id, updates, change_updates, events, missed_slots).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "netaddr.h"
#include "push_recon.h"

#define LOOPBACK 0x7f000001u

static char path[64];

static int
write_report(const char *text)
{
    FILE *f;
    int fd;

    strcpy(path, "/tmp/test_push_recon_XXXXXX");
    fd = mkstemp(path);
    if (fd < 0 || !(f = fdopen(fd, "w"))) {
        return -1;
    }
    fputs(text, f);
    return fclose(f);
}

static int
teardown(void **state)
{
    (void)state;
    unlink(path);
    return 0;
}

static const char report[] =
    "{\"devices\":[{\"device\":0,\"address\":\"127.0.0.1\",\"port\":17830,\"subscriptions\":["
    "{\"id\":7,\"session\":1,\"kind\":\"periodic\",\"updates\":10,\"change_updates\":0,\"events\":0,"
    "\"missed_slots\":0},"
    "{\"id\":9,\"session\":2,\"kind\":\"periodic\",\"updates\":4,\"change_updates\":0,\"events\":0,"
    "\"missed_slots\":0,\"ended\":true}]},"
    "{\"device\":1,\"address\":\"127.0.0.1\",\"port\":17831,\"subscriptions\":["
    "{\"id\":3,\"updates\":1,\"change_updates\":25,\"events\":0,\"missed_slots\":0}]},"
    "{\"device\":2,\"address\":\"127.0.0.1\",\"port\":17832,\"subscriptions\":[]}]}";

static void
test_exact_counts_match_and_others_are_listed(void **state)
{
    struct net_family fam = {0};
    struct push_recon r;
    struct push_recon_row rows[2] = {
        {.device = 0, .addr = LOOPBACK, .port = 17830, .subscribed = 1, .id = 7, .updates = 10},
        {.device = 1,
         .addr = LOOPBACK,
         .port = 17831,
         .subscribed = 1,
         .id = 3,
         .updates = 1,
         .change_updates = 25},
    };
    FILE *out = tmpfile();

    (void)state;
    assert_int_equal(write_report(report), 0);
    assert_int_equal(push_recon_run(&r, path, NULL, &fam, rows, 2, out), 0);
    assert_int_equal(r.matched, 2);
    assert_int_equal(r.mismatched, 0);
    assert_int_equal(r.missing, 0);
    assert_int_equal(r.unknown, 1); /* subscription 9 of another session */
    assert_int_equal(r.sent_updates, 11);
    assert_int_equal(r.received_changes, 25);
    fclose(out);
}

static void
test_one_update_less_differs_and_a_missing_subscription_is_named(void **state)
{
    struct net_family fam = {0};
    struct push_recon r;
    struct push_recon_row rows[3] = {
        {.device = 0, .addr = LOOPBACK, .port = 17830, .subscribed = 1, .id = 7, .updates = 9},
        {.device = 1,
         .addr = LOOPBACK,
         .port = 17831,
         .subscribed = 1,
         .id = 3,
         .updates = 1,
         .change_updates = 25},
        {.device = 2, .addr = LOOPBACK, .port = 17832, .subscribed = 1, .id = 1, .updates = 3},
    };
    char line[512];
    FILE *out = tmpfile();

    (void)state;
    assert_int_equal(write_report(report), 0);
    assert_int_equal(push_recon_run(&r, path, NULL, &fam, rows, 3, out), 1);
    assert_int_equal(r.matched, 1);
    assert_int_equal(r.mismatched, 1);
    assert_int_equal(r.missing, 1);
    rewind(out);
    assert_non_null(fgets(line, sizeof line, out));
    assert_non_null(strstr(line, "DIFFERS device 0 subscription 7: sent updates 10"));
    assert_non_null(fgets(line, sizeof line, out));
    assert_non_null(strstr(line, "MISSING device 2 subscription 1"));
    fclose(out);
}

static void
test_unreadable_reports_are_refused(void **state)
{
    struct net_family fam = {0};
    struct push_recon r;
    struct push_recon_row row = {.addr = LOOPBACK, .port = 17830, .subscribed = 1, .id = 7};
    FILE *out = tmpfile();

    (void)state;
    assert_int_equal(write_report("{\"devices\": [ {\"address\": }"), 0);
    assert_int_equal(push_recon_run(&r, path, NULL, &fam, &row, 1, out), -1);
    assert_int_equal(write_report("{\"fleet\": {}}"), 0);
    assert_int_equal(push_recon_run(&r, path, NULL, &fam, &row, 1, out), -1);
    assert_int_equal(push_recon_run(&r, "/nonexistent/report.json", NULL, &fam, &row, 1, out), -1);
    fclose(out);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_exact_counts_match_and_others_are_listed, teardown),
        cmocka_unit_test_teardown(test_one_update_less_differs_and_a_missing_subscription_is_named, teardown),
        cmocka_unit_test_teardown(test_unreadable_reports_are_refused, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
