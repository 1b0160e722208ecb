/*
 * Syslog messages as bytes (issue 29): RFC 5424 and RFC 3164 lines written
 * exactly, PRI, the escaping of SD-PARAM values (RFC 5424 section 6.3.3),
 * header fields kept to PRINTUSASCII, text kept to one line, every cut
 * inside the buffer, and the RFC 6587 frames.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "syslog_msg.h"

/* 2023-11-14T22:13:20.123Z and 2023-11-03T08:26:40.000Z (a day below 10: 3164 pads it with a space). */
#define T_NOV14 1700000000123ull
#define T_NOV03 1699000000000ull

static struct syslog_fields
fields(const char *text)
{
    return (struct syslog_fields){.facility = 23,
                                  .severity = 3,
                                  .time_ms = T_NOV14,
                                  .hostname = "crs-x-0",
                                  .app_name = "ifmgr",
                                  .msgid = "UPDOWN",
                                  .seq = 7,
                                  .text = text,
                                  .text_len = strlen(text)};
}

static void
expect(enum syslog_format fmt, const struct syslog_fields *f, const char *want)
{
    char buf[SYSLOG_MAX_MSG_BYTES];
    size_t n = syslog_render(fmt, f, buf, sizeof buf);

    assert_int_equal(n, strlen(want));
    assert_memory_equal(buf, want, n);
}

static void
test_pri_is_facility_times_eight_plus_severity(void **state)
{
    (void)state;
    assert_int_equal(syslog_pri(0, 0), 0);
    assert_int_equal(syslog_pri(23, 3), 187);
    assert_int_equal(syslog_pri(23, 7), 191);
    assert_int_equal(syslog_pri(4, 2), 34); /* RFC 5424 section 6.5's first example */
}

static void
test_rfc5424_line_is_exact(void **state)
{
    struct syslog_fields f =
        fields("%PKT_INFRA-LINK-3-UPDOWN : Interface HundredGigE0/0/0/1, changed state to Down");

    (void)state;
    expect(SYSLOG_RFC5424, &f,
           "<187>1 2023-11-14T22:13:20.123Z crs-x-0 ifmgr - UPDOWN [meta sequenceId=\"7\"] "
           "%PKT_INFRA-LINK-3-UPDOWN : Interface HundredGigE0/0/0/1, changed state to Down");
    f.run_tag = "run-42";
    expect(SYSLOG_RFC5424, &f,
           "<187>1 2023-11-14T22:13:20.123Z crs-x-0 ifmgr - UPDOWN [meta sequenceId=\"7\"][fleetsim@32473 "
           "run=\"run-42\"] %PKT_INFRA-LINK-3-UPDOWN : Interface HundredGigE0/0/0/1, changed state to Down");
}

/* issue 29: an event's line carries its id beside the run's tag, in the one fleetsim@32473 element. */
static void
test_event_id_goes_into_the_fleetsim_element_issue_29(void **state)
{
    struct syslog_fields f = fields("%PKT_INFRA-LINK-3-UPDOWN : Interface Gi0/0/0/1, changed state to Down");

    (void)state;
    f.event_id = 4294967297ull; /* device 0's first event */
    expect(SYSLOG_RFC5424, &f,
           "<187>1 2023-11-14T22:13:20.123Z crs-x-0 ifmgr - UPDOWN [meta sequenceId=\"7\"][fleetsim@32473 "
           "eventId=\"4294967297\"] %PKT_INFRA-LINK-3-UPDOWN : Interface Gi0/0/0/1, changed state to Down");
    f.run_tag = "r1";
    f.event_id = UINT64_MAX; /* the widest id is written whole */
    expect(SYSLOG_RFC5424, &f,
           "<187>1 2023-11-14T22:13:20.123Z crs-x-0 ifmgr - UPDOWN [meta sequenceId=\"7\"][fleetsim@32473 "
           "run=\"r1\" eventId=\"18446744073709551615\"] %PKT_INFRA-LINK-3-UPDOWN : Interface Gi0/0/0/1, "
           "changed state to Down");
    expect(SYSLOG_RFC3164, &f,
           "<187>Nov 14 22:13:20 crs-x-0 ifmgr: seq=7 run=r1 event=18446744073709551615 "
           "%PKT_INFRA-LINK-3-UPDOWN : Interface Gi0/0/0/1, changed state to Down");
    f.run_tag = NULL;
    f.event_id = 12;
    expect(SYSLOG_RFC3164, &f,
           "<187>Nov 14 22:13:20 crs-x-0 ifmgr: seq=7 event=12 "
           "%PKT_INFRA-LINK-3-UPDOWN : Interface Gi0/0/0/1, changed state to Down");
}

static void
test_sd_param_values_are_escaped(void **state)
{
    struct syslog_fields f = fields("x");

    (void)state;
    /* '"', '\' and ']' get a backslash; anything else (']' aside) stays as it is, '[' included. */
    f.run_tag = "a\"b\\c]d[e=f";
    expect(SYSLOG_RFC5424, &f,
           "<187>1 2023-11-14T22:13:20.123Z crs-x-0 ifmgr - UPDOWN [meta sequenceId=\"7\"]"
           "[fleetsim@32473 run=\"a\\\"b\\\\c\\]d[e=f\"] x");
}

static void
test_nil_values_and_header_characters(void **state)
{
    struct syslog_fields f = fields("");

    (void)state;
    f.hostname = "";
    f.app_name = NULL;
    f.msgid = NULL;
    f.procid = NULL;
    /* No text: the message ends after the structured data. */
    expect(SYSLOG_RFC5424, &f, "<187>1 2023-11-14T22:13:20.123Z - - - - [meta sequenceId=\"7\"]");
    f.hostname = "core 1\x01";
    f.app_name = "my app";
    f.procid = "42";
    expect(SYSLOG_RFC5424, &f, "<187>1 2023-11-14T22:13:20.123Z core_1_ my_app 42 - [meta sequenceId=\"7\"]");
}

static void
test_text_stays_on_one_line(void **state)
{
    struct syslog_fields f = fields("line one\nline two\r\tend");

    (void)state;
    expect(SYSLOG_RFC5424, &f,
           "<187>1 2023-11-14T22:13:20.123Z crs-x-0 ifmgr - UPDOWN [meta sequenceId=\"7\"] line one line two "
           " end");
}

static void
test_rfc3164_line_is_exact(void **state)
{
    struct syslog_fields f = fields("%PKT_INFRA-LINK-3-UPDOWN : Interface Gi0/0/0/1, changed state to Up");

    (void)state;
    expect(
        SYSLOG_RFC3164, &f,
        "<187>Nov 14 22:13:20 crs-x-0 ifmgr: seq=7 %PKT_INFRA-LINK-3-UPDOWN : Interface Gi0/0/0/1, changed "
        "state to Up");
    f.time_ms = T_NOV03;
    f.run_tag = "r1";
    f.seq = 1234;
    expect(
        SYSLOG_RFC3164, &f,
        "<187>Nov  3 08:26:40 crs-x-0 ifmgr: seq=1234 run=r1 %PKT_INFRA-LINK-3-UPDOWN : Interface Gi0/0/0/1, "
        "changed state to Up");
}

static void
test_long_text_is_cut_inside_the_buffer(void **state)
{
    char text[5000], buf[SYSLOG_MAX_MSG_BYTES + 16];
    struct syslog_fields f;
    size_t n;

    (void)state;
    memset(text, 'a', sizeof text);
    f = fields("");
    f.text = text;
    f.text_len = sizeof text;
    memset(buf, 0x55, sizeof buf);
    n = syslog_render(SYSLOG_RFC5424, &f, buf, SYSLOG_MAX_MSG_BYTES);
    assert_int_equal(n, SYSLOG_MAX_MSG_BYTES);
    assert_int_equal(buf[SYSLOG_MAX_MSG_BYTES], 0x55); /* nothing past the buffer */
    assert_int_equal(buf[n - 1], 'a');
    /* RFC 3164 messages stop at 1024 bytes whatever the buffer. */
    n = syslog_render(SYSLOG_RFC3164, &f, buf, SYSLOG_MAX_MSG_BYTES);
    assert_int_equal(n, SYSLOG_3164_MAX_BYTES);
    /* A buffer too small for the header gets a cut header, never more. */
    n = syslog_render(SYSLOG_RFC5424, &f, buf, 10);
    assert_int_equal(n, 10);
    assert_memory_equal(buf, "<187>1 202", 10);
}

static void
test_frames(void **state)
{
    char head[SYSLOG_FRAME_HEAD_BYTES];

    (void)state;
    assert_int_equal(syslog_frame_head(SYSLOG_FRAME_OCTETS, 57, head), 3);
    assert_memory_equal(head, "57 ", 3);
    assert_int_equal(syslog_frame_head(SYSLOG_FRAME_OCTETS, SYSLOG_MAX_MSG_BYTES, head), 5);
    assert_memory_equal(head, "2048 ", 5);
    assert_string_equal(syslog_frame_tail(SYSLOG_FRAME_OCTETS), "");
    assert_int_equal(syslog_frame_head(SYSLOG_FRAME_LF, 57, head), 0);
    assert_string_equal(syslog_frame_tail(SYSLOG_FRAME_LF), "\n");
}

static void
test_sequence_wraps_to_one(void **state)
{
    (void)state;
    assert_int_equal(syslog_seq_next(0), 1);
    assert_int_equal(syslog_seq_next(1), 2);
    assert_int_equal(syslog_seq_next(SYSLOG_SEQ_MAX - 1), SYSLOG_SEQ_MAX);
    assert_int_equal(syslog_seq_next(SYSLOG_SEQ_MAX), 1);
}

static void
test_words(void **state)
{
    enum syslog_format fmt;
    enum syslog_framing framing;

    (void)state;
    assert_int_equal(syslog_format_parse("rfc3164", &fmt), 0);
    assert_int_equal(fmt, SYSLOG_RFC3164);
    assert_int_equal(syslog_format_parse("rfc5424", &fmt), 0);
    assert_int_equal(fmt, SYSLOG_RFC5424);
    assert_int_equal(syslog_format_parse("5424", &fmt), -1);
    assert_int_equal(syslog_framing_parse("lf", &framing), 0);
    assert_int_equal(framing, SYSLOG_FRAME_LF);
    assert_int_equal(syslog_framing_parse("octet-counting", &framing), 0);
    assert_int_equal(framing, SYSLOG_FRAME_OCTETS);
    assert_int_equal(syslog_framing_parse("LF", &framing), -1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pri_is_facility_times_eight_plus_severity),
        cmocka_unit_test(test_rfc5424_line_is_exact),
        cmocka_unit_test(test_event_id_goes_into_the_fleetsim_element_issue_29),
        cmocka_unit_test(test_sd_param_values_are_escaped),
        cmocka_unit_test(test_nil_values_and_header_characters),
        cmocka_unit_test(test_text_stays_on_one_line),
        cmocka_unit_test(test_rfc3164_line_is_exact),
        cmocka_unit_test(test_long_text_is_cut_inside_the_buffer),
        cmocka_unit_test(test_frames),
        cmocka_unit_test(test_sequence_wraps_to_one),
        cmocka_unit_test(test_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
