/*
 * Unit tests of notify's and reconcile's pieces: the notification scanner
 * (stress/notif_scan.c) with messages split by the framing layer, the
 * sequence order check (stress/seq_order.c), the JSON reader
 * (stress/json_read.c) and reconcile's verdicts (stress/reconcile.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "frame.h"
#include "json_read.h"
#include "notif_scan.h"
#include "reconcile.h"
#include "sbuf.h"
#include "seq_order.h"

#define NS "urn:ietf:params:xml:ns:netconf:notification:1.0"

static const char data_notif[] =
    "<?xml version=\"1.0\"?><notification xmlns=\"" NS "\">"
    "<eventTime> 2026-01-01T00:00:01.5Z </eventTime>"
    "<ping xmlns=\"urn:example\"><!-- <seq>9</seq> --><seq>\n42 </seq><seq>7</seq></ping>"
    "</notification>";

static void
test_scan_finds_event_time_and_first_seq(void **state)
{
    struct nscan_info n;

    (void)state;
    assert_int_equal(nscan_scan(data_notif, strlen(data_notif), "seq", &n), NSCAN_DATA);
    assert_string_equal(n.event_time, "2026-01-01T00:00:01.5Z");
    assert_int_equal(n.has_seq, 1);
    assert_int_equal(n.seq, 42);
    assert_int_equal(nscan_scan(data_notif, strlen(data_notif), NULL, &n), NSCAN_DATA);
    assert_int_equal(n.has_seq, 0);
    assert_int_equal(nscan_scan(data_notif, strlen(data_notif), "nothere", &n), NSCAN_DATA);
    assert_int_equal(n.has_seq, 0);
}

static void
test_scan_seq_that_is_not_an_integer_is_not_a_number(void **state)
{
    static const char m[] = "<notification xmlns=\"" NS "\"><eventTime>t</eventTime><e><seq>4x</seq></e>"
                            "</notification>";
    static const char big[] = "<notification xmlns=\"" NS "\"><eventTime>t</eventTime><e><seq>"
                              "123456789012345678901</seq></e></notification>";
    struct nscan_info n;

    (void)state;
    assert_int_equal(nscan_scan(m, strlen(m), "seq", &n), NSCAN_DATA);
    assert_int_equal(n.has_seq, 0);
    assert_int_equal(nscan_scan(big, strlen(big), "seq", &n), NSCAN_DATA);
    assert_int_equal(n.has_seq, 0);
}

static void
test_scan_tells_replay_complete_and_notification_complete(void **state)
{
    static const char rc[] =
        "<notification xmlns=\"" NS "\"><eventTime>t1</eventTime>"
        "<replayComplete xmlns=\"urn:ietf:params:xml:ns:netmod:notification\"/></notification>";
    static const char nc[] =
        "<n:notification xmlns:n=\"" NS "\"><n:eventTime>t2</n:eventTime>"
        "<x:notificationComplete xmlns:x=\"urn:ietf:params:xml:ns:netmod:notification\"/>"
        "</n:notification>";
    struct nscan_info n;

    (void)state;
    assert_int_equal(nscan_scan(rc, strlen(rc), "seq", &n), NSCAN_REPLAY_COMPLETE);
    assert_string_equal(n.event_time, "t1");
    assert_int_equal(nscan_scan(nc, strlen(nc), NULL, &n), NSCAN_NOTIFICATION_COMPLETE);
    assert_string_equal(n.event_time, "t2");
}

static void
test_scan_checks_the_namespace_of_the_root(void **state)
{
    static const char none[] = "<notification><eventTime>t</eventTime><e/></notification>";
    static const char other[] =
        "<notification xmlns=\"urn:other\"><eventTime>t</eventTime><e/></notification>";
    static const char wrong_prefix[] =
        "<n:notification xmlns=\"" NS "\" xmlns:n=\"urn:other\"><e/></n:notification>";
    static const char prefixed[] = "<n:notification xmlns:n='" NS "'><e/></n:notification>";
    static const char reply[] =
        "<rpc-reply xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\" message-id=\"1\">"
        "<ok/></rpc-reply>";
    struct nscan_info n;

    (void)state;
    assert_int_equal(nscan_scan(none, strlen(none), NULL, &n), NSCAN_OTHER);
    assert_int_equal(nscan_scan(other, strlen(other), NULL, &n), NSCAN_OTHER);
    assert_int_equal(nscan_scan(wrong_prefix, strlen(wrong_prefix), NULL, &n), NSCAN_OTHER);
    assert_int_equal(nscan_scan(prefixed, strlen(prefixed), NULL, &n), NSCAN_DATA);
    assert_int_equal(nscan_scan(reply, strlen(reply), NULL, &n), NSCAN_OTHER);
    assert_int_equal(nscan_scan("", 0, NULL, &n), NSCAN_OTHER);
    assert_int_equal(nscan_scan("<notification xmlns=\"", 21, NULL, &n), NSCAN_OTHER);
}

/* A chunked stream of two notifications fed to the frame decoder one byte at a time, then scanned. */
static void
test_scan_after_framing_of_reads_split_anywhere(void **state)
{
    struct frame_decoder d;
    struct sbuf stream = {0};
    uint64_t seqs[2] = {0};
    int got = 0;

    (void)state;
    for (int i = 0; i < 2; i++) {
        char xml[256];
        int len = snprintf(xml, sizeof xml,
                           "<notification xmlns=\"" NS
                           "\"><eventTime>t</eventTime><e><seq>%d</seq></e></notification>",
                           i + 5);
        sbuf_printf(&stream, "\n#%d\n%.*s\n#%d\n%s\n##\n", 10, 10, xml, len - 10, xml + 10);
    }
    frame_decoder_init(&d, 0);
    frame_decoder_set_mode(&d, FRAME_CHUNKED);
    for (size_t off = 0; off < stream.len; off++) {
        size_t used = 0;
        enum frame_status st = frame_decode(&d, stream.buf + off, 1, &used);
        assert_int_not_equal(st, FRAME_ERROR);
        if (st == FRAME_MESSAGE) {
            size_t mlen;
            const char *msg = frame_decoder_message(&d, &mlen);
            struct nscan_info n;
            assert_int_equal(nscan_scan(msg, mlen, "seq", &n), NSCAN_DATA);
            assert_int_equal(n.has_seq, 1);
            seqs[got++] = n.seq;
            frame_decoder_next(&d);
        }
    }
    frame_decoder_close(&d);
    sbuf_free(&stream);
    assert_int_equal(got, 2);
    assert_int_equal(seqs[0], 5);
    assert_int_equal(seqs[1], 6);
}

static void
feed(struct seqord *s, const uint64_t *v, size_t n)
{
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < n; i++) {
        seqord_add(s, v[i]);
    }
}

static void
test_order_in_sequence_has_no_problems(void **state)
{
    uint64_t v[] = {7, 8, 9, 10};
    struct seqord s;

    (void)state;
    feed(&s, v, 4);
    assert_int_equal(seqord_problems(&s), 0);
    assert_int_equal(s.first, 7);
    assert_int_equal(s.last, 10);
}

static void
test_order_gap_counts_missing_numbers(void **state)
{
    uint64_t v[] = {1, 2, 5, 6, 10};
    struct seqord s;

    (void)state;
    feed(&s, v, 5);
    assert_int_equal(s.gaps, 2);
    assert_int_equal(s.missing, 5);
    assert_int_equal(s.duplicates, 0);
    assert_int_equal(s.reordered, 0);
}

static void
test_order_duplicate_and_late_arrival_are_told_apart(void **state)
{
    uint64_t v[] = {1, 2, 4, 3, 3, 4, 5};
    struct seqord s;

    (void)state;
    feed(&s, v, 7);
    assert_int_equal(s.gaps, 1);
    assert_int_equal(s.missing, 0); /* 3 arrived late */
    assert_int_equal(s.reordered, 1);
    assert_int_equal(s.duplicates, 2);
    assert_int_equal(s.last, 5);
}

static void
test_order_window_follows_large_jumps(void **state)
{
    uint64_t v[] = {1, 100, 1000, 999, 999, 1001, 100, 1};
    struct seqord s;

    (void)state;
    feed(&s, v, 8);
    assert_int_equal(s.gaps, 2);
    assert_int_equal(s.duplicates, 1);         /* 999 again, inside the window */
    assert_int_equal(s.reordered, 3);          /* 999 late; 100 and 1 too old to tell */
    assert_int_equal(s.missing, 98 + 899 - 1); /* 999 is no longer missing */
    assert_int_equal(s.last, 1);
}

static void
test_json_reads_values_and_exact_integers(void **state)
{
    static const char text[] = " {\"a\": [1, -2.5, 1e3, 18446744073709551615, true, false, null],\n"
                               "  \"s\": \"x\\\"\\u00e9\\ud83d\\ude00\\n\", \"o\": {}} ";
    struct jsonr_value *v = NULL;
    const struct jsonr_value *a;
    char err[128];
    uint64_t u = 0;

    (void)state;
    assert_int_equal(jsonr_parse(text, strlen(text), &v, err, sizeof err), 0);
    a = jsonr_get(v, "a");
    assert_non_null(a);
    assert_int_equal(a->type, JSONR_ARRAY);
    assert_int_equal(a->count, 7);
    assert_int_equal(a->child->is_u64, 1);
    assert_int_equal(a->child->next->is_u64, 0);
    assert_true(a->child->next->num == -2.5);
    assert_int_equal(a->child->next->next->is_u64, 0);
    assert_true(a->child->next->next->num == 1000.0);
    assert_true(a->child->next->next->next->u64 == UINT64_MAX);
    assert_int_equal(a->child->next->next->next->next->type, JSONR_BOOL);
    assert_string_equal(jsonr_get_str(v, "s"), "x\"\xc3\xa9\xf0\x9f\x98\x80\n");
    assert_int_equal(jsonr_get(v, "o")->type, JSONR_OBJECT);
    assert_int_equal(jsonr_get_u64(v, "s", &u), -1);
    assert_null(jsonr_get(v, "missing"));
    jsonr_free(v);
}

static void
expect_error(const char *text, const char *want)
{
    struct jsonr_value *v = (struct jsonr_value *)1;
    char err[128] = "";

    if (jsonr_parse(text, strlen(text), &v, err, sizeof err) != -1 || v || strcmp(err, want)) {
        fail_msg("parsing %s: expected error \"%s\", got \"%s\"", text, want, err);
    }
}

static void
test_json_truncated_and_bad_input_are_refused_with_a_position(void **state)
{
    char deep[JSONR_MAX_DEPTH + 3];

    (void)state;
    expect_error("", "line 1 column 1: unexpected end: expected a value");
    expect_error("{\"devices\": [", "line 1 column 14: unexpected end: expected a value");
    expect_error("{\"a\":1", "line 1 column 7: unexpected end: missing '}'");
    expect_error("{\"a\" 1}", "line 1 column 6: expected ':'");
    expect_error("[1,]", "line 1 column 4: unexpected character ']'");
    expect_error("\n [01]", "line 2 column 4: expected ',' or ']'");
    expect_error("\"abc", "line 1 column 2: unterminated string");
    expect_error("\"\\ud800\"", "line 1 column 7: lone surrogate in a \\u escape");
    expect_error("{} x", "line 1 column 4: unexpected text after the document");
    expect_error("tru", "line 1 column 1: unexpected character 't'");
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = '\0';
    expect_error(deep, "line 1 column 65: nested deeper than 64");
}

static void
test_reconcile_classification(void **state)
{
    struct recon_facts f = {
        .in_report = 1, .in_received = 1, .subscriber_known = 1, .sent = 100, .received = 100};

    (void)state;
    assert_int_equal(recon_classify(&f, 0), RECON_OK);
    f.received = 99;
    assert_int_equal(recon_classify(&f, 0), RECON_LOSS);
    assert_int_equal(recon_classify(&f, 0.01), RECON_OK);
    f.received = 101;
    assert_int_equal(recon_classify(&f, 0), RECON_DUP);
    assert_int_equal(recon_classify(&f, 0.01), RECON_OK);
    f.received = 100;
    f.duplicates = 1;
    assert_int_equal(recon_classify(&f, 0.5), RECON_DUP);
    f.duplicates = 0;
    f.received = 0;
    assert_int_equal(recon_classify(&f, 1.0), RECON_MISSING);
    f.in_received = 0;
    assert_int_equal(recon_classify(&f, 0), RECON_MISSING);
    f.sent = 0;
    assert_int_equal(recon_classify(&f, 0), RECON_OK);
    f.in_received = 1;
    f.subscriber_known = 0;
    f.received = 5;
    assert_int_equal(recon_classify(&f, 0), RECON_PHANTOM);
    f.in_report = 0;
    assert_int_equal(recon_classify(&f, 0), RECON_PHANTOM);
    assert_string_equal(recon_class_name(RECON_MISSING), "MISSING");
}

static struct jsonr_value *
parse(const char *text)
{
    struct jsonr_value *v = NULL;
    char err[128];

    if (jsonr_parse(text, strlen(text), &v, err, sizeof err)) {
        fail_msg("%s: %s", text, err);
    }
    return v;
}

static void
test_reconcile_joins_on_address_port_and_peer(void **state)
{
    struct jsonr_value *report = parse(
        "{\"devices\":[{\"device\":0,\"address\":\"10.0.0.1\",\"port\":830,\"notifications\":{\"emitted\":5,"
        "\"sent\":5,\"send_failures\":0,\"dropped\":0,\"suppressed\":0},\"subscribers\":[{\"session\":1,"
        "\"peer\":\"10.9.0.1:4000\",\"emitted\":5,\"sent\":5,\"send_failures\":0,\"dropped\":0,"
        "\"suppressed\":0}]},"
        "{\"device\":1,\"address\":\"10.0.0.2\",\"port\":830,\"notifications\":{\"emitted\":3,\"sent\":2,"
        "\"send_failures\":0,\"dropped\":0,\"suppressed\":0}}]}");
    struct jsonr_value *received = parse(
        "{\"devices\":[{\"device\":1,\"address\":\"10.0.0.2\",\"port\":830,\"local\":\"x\",\"received\":2},"
        "{\"device\":0,\"address\":\"10.0.0.1\",\"port\":830,\"local\":\"10.9.0.1:4000\",\"received\":5,"
        "\"duplicates\":0}]}");
    char *out = NULL;
    size_t out_len = 0;
    FILE *f = open_memstream(&out, &out_len);
    char err[128];

    (void)state;
    assert_int_equal(recon_compare(report, received, 0, f, NULL, err, sizeof err), 1);
    fclose(f);
    assert_non_null(strstr(out, "OK      device 0 10.0.0.1:830 local 10.9.0.1:4000 sent 5 received 5"));
    /* No subscribers listed: the device's own sent counts. */
    assert_non_null(strstr(out, "OK      device 1 10.0.0.2:830 local x sent 2 received 2"));
    assert_non_null(strstr(out, "BROKEN  device 1 10.0.0.2:830: emitted 3 != sent 2"));
    assert_non_null(strstr(out, "totals: OK 2, LOSS 0, DUP 0, MISSING 0, PHANTOM 0; broken report rows 1"));
    free(out);
    jsonr_free(report);
    jsonr_free(received);
}

/* The restconf join with a row sink: the same lines, and a row per line with the report's device. */
static void
test_reconcile_rows_follow_the_printed_lines(void **state)
{
    struct jsonr_value *report = parse(
        "{\"devices\":[{\"device\":3,\"address\":\"10.0.0.1\",\"port\":830,\"edits\":{\"edit_config\":4,"
        "\"commit\":0}},{\"device\":4,\"address\":\"10.0.0.1\",\"port\":831,\"edits\":{\"edit_config\":2}}]"
        "}");
    struct jsonr_value *sent = parse("{\"mode\":\"restconf\",\"devices\":[{\"port\":830,\"accepted\":5},"
                                     "{\"port\":900,\"accepted\":1}]}");
    struct recon_rows rows = {0};
    char *plain = NULL, *with = NULL;
    size_t plain_len = 0, with_len = 0;
    FILE *f1 = open_memstream(&plain, &plain_len);
    FILE *f2 = open_memstream(&with, &with_len);
    char err[128];

    (void)state;
    assert_int_equal(recon_compare_restconf(report, sent, 0, f1, NULL, err, sizeof err), 1);
    assert_int_equal(recon_compare_restconf(report, sent, 0, f2, &rows, err, sizeof err), 1);
    fclose(f1);
    fclose(f2);
    assert_string_equal(plain, with);
    assert_int_equal(rows.total, 3);
    assert_int_equal(rows.kept, 3);
    assert_int_equal(rows.counts[RECON_LOSS], 1);
    assert_int_equal(rows.counts[RECON_MISSING], 1);
    assert_int_equal(rows.counts[RECON_DUP], 1);
    assert_int_equal(rows.sent, 6);
    assert_int_equal(rows.received, 6);
    assert_string_equal(rows.devices.buf,
                        "{\"device\":3,\"address\":\"10.0.0.1\",\"port\":830,\"class\":\"LOSS\",\"sent\":5,"
                        "\"received\":4,\"duplicates\":0,\"note\":null},"
                        "{\"device\":null,\"address\":null,\"port\":900,\"class\":\"MISSING\",\"sent\":1,"
                        "\"received\":0,\"duplicates\":0,\"note\":\"not in the report\"},"
                        "{\"device\":4,\"address\":\"10.0.0.1\",\"port\":831,\"class\":\"DUP\",\"sent\":0,"
                        "\"received\":2,\"duplicates\":0,\"note\":\"not in the restconf manifest\"}");
    sbuf_free(&rows.devices);
    free(plain);
    free(with);
    jsonr_free(report);
    jsonr_free(sent);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scan_finds_event_time_and_first_seq),
        cmocka_unit_test(test_scan_seq_that_is_not_an_integer_is_not_a_number),
        cmocka_unit_test(test_scan_tells_replay_complete_and_notification_complete),
        cmocka_unit_test(test_scan_checks_the_namespace_of_the_root),
        cmocka_unit_test(test_scan_after_framing_of_reads_split_anywhere),
        cmocka_unit_test(test_order_in_sequence_has_no_problems),
        cmocka_unit_test(test_order_gap_counts_missing_numbers),
        cmocka_unit_test(test_order_duplicate_and_late_arrival_are_told_apart),
        cmocka_unit_test(test_order_window_follows_large_jumps),
        cmocka_unit_test(test_json_reads_values_and_exact_integers),
        cmocka_unit_test(test_json_truncated_and_bad_input_are_refused_with_a_position),
        cmocka_unit_test(test_reconcile_classification),
        cmocka_unit_test(test_reconcile_joins_on_address_port_and_peer),
        cmocka_unit_test(test_reconcile_rows_follow_the_printed_lines),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
