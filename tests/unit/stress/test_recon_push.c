/*
 * Unit tests of reconcile's push join (stress/recon_push.c, issue 29 item
 * 7): a report's syslog and trap ledgers joined with a collector's lines,
 * source by source: every class, duplicates told by sequence numbers,
 * inversions counted as adjacent descents, the run tag, CSV rows, broken
 * ledger rows, and the manifest rows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json_read.h"
#include "recon_push.h"
#include "sbuf.h"

/* Two devices with one syslog sink each (5 and 3 sent), their traps (2 and 0 sent). */
static const char report_text[] =
    "{\"devices\":["
    "{\"device\":0,\"address\":\"127.0.0.1\",\"port\":830,\"hostname\":\"crs-x-0\","
    "\"notifications\":{\"sent\":4},"
    "\"trap_sinks\":[{\"sink\":\"127.0.0.1:162\",\"sent\":2}],"
    "\"syslog_sinks\":[{\"sink\":\"tcp://127.0.0.1:514\",\"emitted\":5,\"sent\":5,\"send_failures\":0,"
    "\"dropped\":0,\"suppressed_pre_window\":0,\"queued\":0}]},"
    "{\"device\":1,\"address\":\"127.0.0.2\",\"port\":830,\"hostname\":\"crs x 1\","
    "\"notifications\":{\"sent\":0},"
    "\"trap_sinks\":[{\"sink\":\"127.0.0.1:162\",\"sent\":0}],"
    "\"syslog_sinks\":[{\"sink\":\"tcp://127.0.0.1:514\",\"emitted\":4,\"sent\":3,\"send_failures\":0,"
    "\"dropped\":1,\"suppressed_pre_window\":0,\"queued\":0}]}]}";

struct run {
    struct jsonr_value *report;
    struct recon_push *p;
    char *out;
    size_t out_len;
    FILE *f;
    struct recon_rows rows;
};

static void
run_start(struct run *r, enum recon_format fmt, const char *tag, int ordering, const char *report)
{
    struct recon_push_opts o = {.format = fmt, .run_tag = tag, .ordering = ordering, .tolerance = 0};
    char err[256];

    memset(r, 0, sizeof *r);
    assert_int_equal(jsonr_parse(report, strlen(report), &r->report, err, sizeof err), 0);
    r->f = open_memstream(&r->out, &r->out_len);
    assert_non_null(r->f);
    r->p = recon_push_new(r->report, &o, r->f, err, sizeof err);
    assert_non_null(r->p);
}

static void
feed(struct run *r, const char *line)
{
    char err[256];

    assert_int_equal(recon_push_line(r->p, line, strlen(line), err, sizeof err), 0);
}

/* Syslog line @p seq of @p host, 5424 form, with the run tag @p tag (NULL: none). */
static void
feed_syslog(struct run *r, const char *host, unsigned seq, const char *tag)
{
    char line[256];

    snprintf(line, sizeof line, "<13>1 2026-12-07T15:40:00Z %s app - - [meta sequenceId=\"%u\"]%s%s%s text",
             host, seq, tag ? "[fleetsim@32473 run=\"" : "", tag ? tag : "", tag ? "\"]" : "");
    feed(r, line);
}

static int
run_finish(struct run *r)
{
    int rc = recon_push_finish(r->p, r->f, &r->rows);

    fclose(r->f);
    return rc;
}

static void
run_free(struct run *r)
{
    recon_push_free(r->p);
    jsonr_free(r->report);
    sbuf_free(&r->rows.devices);
    free(r->out);
}

static void
test_syslog_ok_then_loss_dup_missing_phantom(void **state)
{
    struct run r;

    (void)state;
    /* All sent, in order: OK for both (device 1's host name as written into HOSTNAME: spaces as '_'). */
    run_start(&r, RECON_FMT_SYSLOG, NULL, 1, report_text);
    for (unsigned s = 1; s <= 5; s++) {
        feed_syslog(&r, "crs-x-0", s, NULL);
    }
    for (unsigned s = 1; s <= 3; s++) {
        feed_syslog(&r, "crs_x_1", s, NULL);
    }
    feed(&r, "rsyslogd: a line of the collector's own");
    assert_int_equal(run_finish(&r), 0);
    assert_non_null(strstr(r.out, "OK      syslog crs-x-0 (device 0) sent 5 received 5 inversions 0\n"));
    assert_non_null(strstr(r.out, "OK      syslog crs_x_1 (device 1) sent 3 received 3 inversions 0\n"));
    assert_non_null(strstr(r.out, "lines 9, not understood 1"));
    assert_int_equal(r.rows.counts[RECON_OK], 2);
    assert_int_equal(r.rows.sent, 8);
    assert_int_equal(r.rows.received, 8);
    run_free(&r);

    /* Device 0 loses one, device 1 gets one twice, a stranger sends. */
    run_start(&r, RECON_FMT_SYSLOG, NULL, 0, report_text);
    for (unsigned s = 1; s <= 4; s++) {
        feed_syslog(&r, "crs-x-0", s, NULL);
    }
    for (unsigned s = 1; s <= 3; s++) {
        feed_syslog(&r, "crs_x_1", s, NULL);
    }
    feed_syslog(&r, "crs_x_1", 2, NULL);
    feed_syslog(&r, "stranger", 1, NULL);
    assert_int_equal(run_finish(&r), 1);
    assert_non_null(strstr(r.out, "LOSS    syslog crs-x-0 (device 0) sent 5 received 4\n"));
    assert_non_null(strstr(r.out, "DUP     syslog crs_x_1 (device 1) sent 3 received 4 duplicates 1\n"));
    assert_non_null(strstr(r.out, "PHANTOM syslog stranger (not in the report) sent 0 received 1\n"));
    assert_non_null(strstr(r.rows.devices.buf, "\"source\":\"stranger\",\"device\":null"));
    run_free(&r);

    /* Nothing received from device 1: MISSING. */
    run_start(&r, RECON_FMT_SYSLOG, NULL, 0, report_text);
    for (unsigned s = 1; s <= 5; s++) {
        feed_syslog(&r, "crs-x-0", s, NULL);
    }
    assert_int_equal(run_finish(&r), 1);
    assert_non_null(strstr(r.out, "MISSING syslog crs_x_1 (device 1) sent 3 received 0\n"));
    assert_int_equal(r.rows.counts[RECON_MISSING], 1);
    run_free(&r);
}

static void
test_ordering_counts_adjacent_descents(void **state)
{
    static const unsigned order[] = {1, 3, 2, 5, 4}; /* two adjacent descents: 3>2, 5>4 */
    struct run r;

    (void)state;
    run_start(&r, RECON_FMT_SYSLOG, NULL, 1, report_text);
    for (size_t i = 0; i < 5; i++) {
        feed_syslog(&r, "crs-x-0", order[i], NULL);
    }
    for (unsigned s = 1; s <= 3; s++) {
        feed_syslog(&r, "crs_x_1", s, NULL);
    }
    /* The classes stay OK; the inversions make the exit 1. */
    assert_int_equal(run_finish(&r), 1);
    assert_non_null(strstr(r.out, "OK      syslog crs-x-0 (device 0) sent 5 received 5 inversions 2\n"));
    assert_non_null(strstr(r.out, "inversions (adjacent descents) 2"));
    assert_int_equal(r.rows.counts[RECON_OK], 2);
    assert_int_equal(r.rows.inversions, 2);
    run_free(&r);
}

static void
test_run_tag_keeps_only_the_run(void **state)
{
    struct run r;

    (void)state;
    run_start(&r, RECON_FMT_SYSLOG, "run-a", 0, report_text);
    for (unsigned s = 1; s <= 5; s++) {
        feed_syslog(&r, "crs-x-0", s, "run-a");
        feed_syslog(&r, "crs-x-0", s, "run-b"); /* another run on the same collector */
    }
    for (unsigned s = 1; s <= 3; s++) {
        feed_syslog(&r, "crs_x_1", s, "run-a");
    }
    feed_syslog(&r, "crs_x_1", 4, NULL);
    assert_int_equal(run_finish(&r), 0);
    assert_non_null(strstr(r.out, "without the run tag 6"));
    assert_int_equal(r.rows.untagged, 6);
    run_free(&r);
}

static void
test_broken_ledger_row_is_listed(void **state)
{
    static const char broken[] =
        "{\"devices\":[{\"device\":0,\"address\":\"127.0.0.1\",\"hostname\":\"h\","
        "\"syslog_sinks\":[{\"sink\":\"udp://127.0.0.1:514\",\"emitted\":5,\"sent\":3,\"send_failures\":0,"
        "\"dropped\":0,\"suppressed_pre_window\":0,\"queued\":0}]}]}";
    struct run r;

    (void)state;
    run_start(&r, RECON_FMT_SYSLOG, NULL, 0, broken);
    for (unsigned s = 1; s <= 3; s++) {
        feed_syslog(&r, "h", s, NULL);
    }
    assert_int_equal(run_finish(&r), 1);
    assert_non_null(strstr(r.out, "BROKEN  device 0 syslog sink udp://127.0.0.1:514: emitted 5 != sent 3"));
    assert_int_equal(r.rows.broken, 1);
    run_free(&r);
}

static void
test_report_without_host_names_is_refused(void **state)
{
    static const char old[] =
        "{\"devices\":[{\"device\":0,\"address\":\"127.0.0.1\",\"syslog_sinks\":[{\"sent\":1}]}]}";
    struct recon_push_opts o = {.format = RECON_FMT_SYSLOG};
    struct jsonr_value *report = NULL;
    char err[256];

    (void)state;
    assert_int_equal(jsonr_parse(old, strlen(old), &report, err, sizeof err), 0);
    assert_null(recon_push_new(report, &o, stdout, err, sizeof err));
    assert_non_null(strstr(err, "no \"hostname\""));
    jsonr_free(report);
}

static void
test_snmptrapd_sources_by_address_and_sysname(void **state)
{
    struct run r;

    (void)state;
    run_start(&r, RECON_FMT_SNMPTRAPD, NULL, 0, report_text);
    feed(&r, "2026-12-07 15:40:00 <UNKNOWN> [UDP: [127.0.0.1]:40000->[127.0.0.1]:162]:");
    feed(&r, ".1.3.6.1.2.1.1.3.0 = Timeticks: (5) 0:00:00.05\t.1.3.6.1.2.1.1.5.0 = STRING: crs-x-0");
    /* From an address the report does not know, naming device 0 by sysName.0: device 0's. */
    feed(&r, "2026-12-07 15:40:01 <UNKNOWN> [UDP: [10.9.9.9]:40000->[127.0.0.1]:162]:");
    feed(&r, ".1.3.6.1.2.1.1.5.0 = STRING: crs-x-0");
    assert_int_equal(run_finish(&r), 0);
    assert_non_null(strstr(r.out, "OK      trap 127.0.0.1 (device 0) sent 2 received 2\n"));
    run_free(&r);

    /* A third from a stranger: PHANTOM under its address. */
    run_start(&r, RECON_FMT_SNMPTRAPD, NULL, 0, report_text);
    feed(&r, "2026-12-07 15:40:00 <UNKNOWN> [UDP: [127.0.0.1]:40000->[127.0.0.1]:162]:");
    feed(&r, "2026-12-07 15:40:00 <UNKNOWN> [UDP: [127.0.0.1]:40000->[127.0.0.1]:162]:");
    feed(&r, "2026-12-07 15:40:00 <UNKNOWN> [UDP: [10.9.9.9]:40000->[127.0.0.1]:162]:");
    assert_int_equal(run_finish(&r), 1);
    assert_non_null(strstr(r.out, "PHANTOM trap 10.9.9.9 (not in the report) sent 0 received 1\n"));
    run_free(&r);
}

static void
test_snmptrapd_run_tag_keeps_only_the_runs_records(void **state)
{
    struct run r;

    (void)state;
    run_start(&r, RECON_FMT_SNMPTRAPD, "run-7", 0, report_text);
    /* Two of the run (the tag after sysName.0, as fleetsim sends it; printed without MIBs, then -On), one
     * of another run, one without a tag: device 0 sent 2, received 2; two records set aside. */
    feed(&r, "2026-12-07 15:40:00 <UNKNOWN> [UDP: [127.0.0.1]:40000->[127.0.0.1]:162]:");
    feed(&r, "iso.3.6.1.2.1.1.5.0 = STRING: \"crs-x-0\"\tiso.3.6.1.4.1.32473.1.2.0 = STRING: \"run-7\"");
    feed(&r, "2026-12-07 15:40:00 <UNKNOWN> [UDP: [127.0.0.1]:40000->[127.0.0.1]:162]:");
    feed(&r, ".1.3.6.1.4.1.32473.1.2.0 = STRING: run-7\t.1.3.6.1.2.1.1.3.0 = Timeticks: (5) 0:00:00.05");
    feed(&r, "2026-12-07 15:40:01 <UNKNOWN> [UDP: [127.0.0.1]:40000->[127.0.0.1]:162]:");
    feed(&r, "iso.3.6.1.4.1.32473.1.2.0 = STRING: \"run-77\"");
    feed(&r, "2026-12-07 15:40:01 <UNKNOWN> [UDP: [127.0.0.1]:40000->[127.0.0.1]:162]:");
    assert_int_equal(run_finish(&r), 0);
    assert_non_null(strstr(r.out, "OK      trap 127.0.0.1 (device 0) sent 2 received 2\n"));
    assert_non_null(strstr(r.out, "without the run tag 2"));
    run_free(&r);
}

static void
test_csv_rows_per_channel(void **state)
{
    struct run r;
    char err[256];

    (void)state;
    run_start(&r, RECON_FMT_CSV, NULL, 0, report_text);
    feed(&r, "channel,source,count");
    feed(&r, "syslog,crs-x-0,5");
    feed(&r, "syslog,crs_x_1,2");
    feed(&r, "trap,127.0.0.1,2");
    feed(&r, "netconf,127.0.0.1,4");
    assert_int_equal(run_finish(&r), 1);
    assert_non_null(strstr(r.out, "LOSS    syslog crs_x_1 (device 1) sent 3 received 2\n"));
    assert_non_null(strstr(r.out, "OK      trap 127.0.0.1 (device 0) sent 2 received 2\n"));
    assert_non_null(strstr(r.out, "OK      netconf 127.0.0.1 (device 0) sent 4 received 4\n"));
    run_free(&r);

    run_start(&r, RECON_FMT_CSV, NULL, 0, report_text);
    assert_int_equal(recon_push_line(r.p, "fax,crs-x-0,5", 13, err, sizeof err), -1);
    assert_non_null(strstr(err, "line 1: channel \"fax\""));
    assert_int_equal(recon_push_line(r.p, "syslog,crs-x-0", 14, err, sizeof err), -1);
    assert_non_null(strstr(err, "line 2: fewer than three fields"));
    fclose(r.f);
    run_free(&r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_syslog_ok_then_loss_dup_missing_phantom),
        cmocka_unit_test(test_ordering_counts_adjacent_descents),
        cmocka_unit_test(test_run_tag_keeps_only_the_run),
        cmocka_unit_test(test_broken_ledger_row_is_listed),
        cmocka_unit_test(test_report_without_host_names_is_refused),
        cmocka_unit_test(test_snmptrapd_sources_by_address_and_sysname),
        cmocka_unit_test(test_snmptrapd_run_tag_keeps_only_the_runs_records),
        cmocka_unit_test(test_csv_rows_per_channel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
