/*
 * Unit tests of reconcile's readers of collectors' files (issue 29 item 7):
 * syslog lines in RFC 5424 form (SD with escaped quotes, an octet count in
 * front) and in the traditional forms rsyslog writes by default
 * (stress/recv_syslog.c), snmptrapd's log lines (stress/recv_snmptrapd.c)
 * and channel,source,count rows (stress/recv_csv.c), hostile lines included.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "recv_csv.h"
#include "recv_snmptrapd.h"
#include "recv_syslog.h"

static int
parse(const char *line, struct recv_msg *m)
{
    return recv_syslog_parse(line, strlen(line), m);
}

static void
assert_source(const struct recv_msg *m, const char *want)
{
    assert_int_equal(m->source_len, strlen(want));
    assert_memory_equal(m->source, want, m->source_len);
}

static void
test_5424_with_meta_and_run_tag(void **state)
{
    static const char line[] =
        "<187>1 2026-12-07T15:40:00.123Z crs-x-3 ifmgr 42 LINK "
        "[meta sequenceId=\"17\"][fleetsim@32473 run=\"itest-29\"] %PKT_INFRA-LINK-3-UPDOWN "
        ": Interface GigabitEthernet0/0/0/1, changed state to Down";
    struct recv_msg m;

    (void)state;
    assert_int_equal(parse(line, &m), 0);
    assert_source(&m, "crs-x-3");
    assert_int_equal(m.has_seq, 1);
    assert_int_equal(m.seq, 17);
    assert_int_equal(recv_tag_equal(&m, "itest-29"), 1);
    assert_int_equal(recv_tag_equal(&m, "itest-2"), 0);
    assert_int_equal(recv_tag_equal(&m, "itest-290"), 0);
}

static void
test_5424_escaped_quotes_and_brackets_in_sd(void **state)
{
    /* A run tag with '"', ']' and '\' escaped (RFC 5424 section 6.3.3), another SD element first. */
    static const char line[] =
        "<14>1 2026-12-07T15:40:00Z host-a app - - [origin ip=\"10.0.0.1\" x=\"a\\\"]b\"]"
        "[fleetsim@32473 run=\"q\\\"t\\]x\\\\y\"][meta sequenceId=\"5\"] text";
    struct recv_msg m;

    (void)state;
    assert_int_equal(parse(line, &m), 0);
    assert_source(&m, "host-a");
    assert_int_equal(m.has_seq, 1);
    assert_int_equal(m.seq, 5);
    assert_int_equal(recv_tag_equal(&m, "q\"t]x\\y"), 1);
    assert_int_equal(recv_tag_equal(&m, "q\"t]x\\"), 0);
}

static void
test_5424_octet_count_nil_sd_and_3164_text(void **state)
{
    /* syslog-ng may keep the frame's octet count; a 3164 message rewritten as 5424 has its seq in MSG. */
    static const char framed[] =
        "97 <13>1 2026-12-07T15:40:00Z dev-9 app - - [meta sequenceId=\"2147483647\"]";
    static const char nil_sd[] = "<13>1 2026-12-07T15:40:00Z dev-9 app - - - seq=8 run=r1 hello";
    static const char bare[] = "<13>1 2026-12-07T15:40:00Z dev-9 app - - - hello seq=8";
    struct recv_msg m;

    (void)state;
    assert_int_equal(parse(framed, &m), 0);
    assert_source(&m, "dev-9");
    assert_int_equal(m.seq, 2147483647u);
    assert_int_equal(parse(nil_sd, &m), 0);
    assert_int_equal(m.has_seq, 1);
    assert_int_equal(m.seq, 8);
    assert_int_equal(recv_tag_equal(&m, "r1"), 1);
    assert_int_equal(parse(bare, &m), 0);
    assert_int_equal(m.has_seq, 0);
    assert_null(m.tag);
}

static void
test_traditional_forms_rsyslog_writes(void **state)
{
    /* RSYSLOG_TraditionalFileFormat (day padded with a space), RSYSLOG_FileFormat (RFC 3339 stamp). */
    static const char trad[] = "Dec  7 15:40:00 device-1 ifmgr: seq=12 run=my_tag %LINK-3-UPDOWN: down";
    static const char file_fmt[] = "2026-12-07T15:40:00.123456+00:00 device-2 ifmgr[7]: seq=3 text";
    static const char from_5424[] = "Dec 17 15:40:00 crs-x-0 ifmgr %LINK-3-UPDOWN: text";
    static const char host_only[] = "Dec 17 15:40:00 crs-x-0";
    struct recv_msg m;

    (void)state;
    assert_int_equal(parse(trad, &m), 0);
    assert_source(&m, "device-1");
    assert_int_equal(m.seq, 12);
    /* fleetsim writes a tag's space as '_' in 3164 text. */
    assert_int_equal(recv_tag_equal(&m, "my tag"), 1);
    assert_int_equal(recv_tag_equal(&m, "my_tag"), 1);
    assert_int_equal(recv_tag_equal(&m, "my"), 0);
    assert_int_equal(parse(file_fmt, &m), 0);
    assert_source(&m, "device-2");
    assert_int_equal(m.seq, 3);
    assert_null(m.tag);
    assert_int_equal(parse(from_5424, &m), 0);
    assert_source(&m, "crs-x-0");
    assert_int_equal(m.has_seq, 0);
    assert_int_equal(parse(host_only, &m), 0);
    assert_source(&m, "crs-x-0");
}

static void
test_hostile_lines_are_refused_without_reading_past_them(void **state)
{
    static const char *const bad[] = {"",
                                      "<",
                                      "<13>",
                                      "<13>1",
                                      "<13>1 2026",
                                      "<1234>1 t h a p m -",
                                      "Dec  7 15:40",
                                      "Foo  7 15:40:00 host x",
                                      "hello world",
                                      "2026-12-07T15:40:00Z",
                                      "<13>Dec  7 15:40:00 "};
    char *exact;
    char big[70000];
    struct recv_msg m;

    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        /* A heap block of exactly the line's bytes: a read past its end shows under ASan. */
        size_t n = strlen(bad[i]);
        exact = malloc(n ? n : 1);
        assert_non_null(exact);
        memcpy(exact, bad[i], n);
        assert_int_equal(recv_syslog_parse(exact, n, &m), -1);
        assert_null(m.source);
        free(exact);
    }
    /* Cut inside the SD: the source counts, the sequence is not made up. */
    {
        static const char cut[] = "<13>1 2026-12-07T15:40:00Z h a - - [meta sequenceId=\"4";
        assert_int_equal(parse(cut, &m), 0);
        assert_source(&m, "h");
        assert_int_equal(m.has_seq, 0);
    }
    /* A NUL and high bytes inside, and a host name past 255 bytes. */
    {
        static const char nul[] = "<13>1 2026-12-07T15:40:00Z h\0st a - - - x";
        assert_int_equal(recv_syslog_parse(nul, sizeof nul - 1, &m), -1);
    }
    memset(big, 'a', sizeof big);
    memcpy(big, "<13>1 t ", 8);
    assert_int_equal(recv_syslog_parse(big, sizeof big, &m), -1);
}

static void
test_snmptrapd_header_and_sysname(void **state)
{
    static const char v2[] = "2026-12-07 15:40:00 <UNKNOWN> [UDP: [127.0.0.3]:40123->[127.0.0.1]:16200]:";
    static const char v6[] = "2026-12-07 15:40:00 localhost [UDP/IPv6: [fd00::4]:40123->[::1]:16200]:";
    static const char v1[] =
        "2026-12-07 15:40:00 10.0.0.1(via UDP: [10.0.0.1]:161->[127.0.0.1]:162) TRAP, SNMP "
        "v1, community public";
    static const char vars[] =
        ".1.3.6.1.2.1.1.3.0 = Timeticks: (5) 0:00:00.05\t.1.3.6.1.6.3.1.1.4.1.0 = OID: "
        ".1.3.6.1.6.3.1.1.5.3\t.1.3.6.1.2.1.1.5.0 = STRING: \"crs-x-3\"\tx = INTEGER: 1";
    static const char vars_sym[] = "SNMPv2-MIB::sysName.0 = STRING: device-7\tIF-MIB::ifIndex.2 = INTEGER: 2";
    /* snmptrapd without MIBs (Debian's default: no MIB files) prints 1 as "iso". */
    static const char vars_iso[] = "iso.3.6.1.6.3.18.1.3.0 = IpAddress: 127.0.0.1\t"
                                   "iso.3.6.1.2.1.1.5.0 = STRING: \"device-1\"";
    const char *v;
    size_t n;

    (void)state;
    assert_int_equal(recv_trapd_header(v2, strlen(v2), &v, &n), 1);
    assert_int_equal(n, strlen("127.0.0.3"));
    assert_memory_equal(v, "127.0.0.3", n);
    assert_int_equal(recv_trapd_header(v6, strlen(v6), &v, &n), 1);
    assert_memory_equal(v, "fd00::4", n);
    assert_int_equal(recv_trapd_header(v1, strlen(v1), &v, &n), 1);
    assert_memory_equal(v, "10.0.0.1", n);
    assert_int_equal(recv_trapd_header(vars, strlen(vars), &v, &n), 0);
    assert_int_equal(recv_trapd_header(v2, strlen(v2) - 30, &v, &n), 0); /* cut inside the address */
    assert_int_equal(recv_trapd_sysname(vars, strlen(vars), &v, &n), 1);
    assert_int_equal(n, strlen("crs-x-3"));
    assert_memory_equal(v, "crs-x-3", n);
    assert_int_equal(recv_trapd_sysname(vars_sym, strlen(vars_sym), &v, &n), 1);
    assert_memory_equal(v, "device-7", n);
    assert_int_equal(n, strlen("device-7"));
    assert_int_equal(recv_trapd_sysname(vars_iso, strlen(vars_iso), &v, &n), 1);
    assert_int_equal(n, strlen("device-1"));
    assert_memory_equal(v, "device-1", n);
    assert_int_equal(recv_trapd_sysname(v2, strlen(v2), &v, &n), 0);
    /* fleetsimRunTag.0, however the enterprise arc is printed. */
    {
        static const char tag_iso[] = "iso.3.6.1.4.1.32473.1.2.0 = STRING: \"r 1\"\tx = INTEGER: 1";
        static const char tag_sym[] = "SNMPv2-SMI::enterprises.32473.1.2.0 = STRING: r2";
        static const char tag_id[] = "iso.3.6.1.4.1.32473.1.1.0 = STRING: \"8589934593\"";
        assert_int_equal(recv_trapd_run_tag(tag_iso, strlen(tag_iso), &v, &n), 1);
        assert_int_equal(n, 3);
        assert_memory_equal(v, "r 1", n);
        assert_int_equal(recv_trapd_run_tag(tag_sym, strlen(tag_sym), &v, &n), 1);
        assert_memory_equal(v, "r2", n);
        assert_int_equal(recv_trapd_run_tag(tag_id, strlen(tag_id), &v, &n),
                         0); /* the event id, not the tag */
    }
}

static void
test_csv_rows(void **state)
{
    struct recv_csv_row r;
    const char *why = NULL;

    (void)state;
    assert_int_equal(recv_csv_parse("channel,source,count", 20, &r, &why), 1);
    assert_int_equal(recv_csv_parse("", 0, &r, &why), 1);
    assert_int_equal(recv_csv_parse("# comment", 9, &r, &why), 1);
    assert_int_equal(recv_csv_parse("syslog,crs-x-1,42\r", 18, &r, &why), 0);
    assert_string_equal(r.channel, "syslog");
    assert_string_equal(r.source, "crs-x-1");
    assert_int_equal(r.count, 42);
    assert_int_equal(recv_csv_parse("trap,\"a,\"\"b\",7", 14, &r, &why), 0);
    assert_string_equal(r.source, "a,\"b");
    assert_int_equal(r.count, 7);
    assert_int_equal(recv_csv_parse("syslog,h", 8, &r, &why), -1);
    assert_non_null(why);
    assert_int_equal(recv_csv_parse("syslog,h,1,2", 12, &r, &why), -1);
    assert_int_equal(recv_csv_parse("syslog,h,-1", 11, &r, &why), -1);
    assert_int_equal(recv_csv_parse("syslog,h,99999999999999999999", 29, &r, &why), -1);
    assert_int_equal(recv_csv_parse("syslog,,1", 9, &r, &why), -1);
    assert_int_equal(recv_csv_parse("syslog,\"h,1", 11, &r, &why), -1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_5424_with_meta_and_run_tag),
        cmocka_unit_test(test_5424_escaped_quotes_and_brackets_in_sd),
        cmocka_unit_test(test_5424_octet_count_nil_sd_and_3164_text),
        cmocka_unit_test(test_traditional_forms_rsyslog_writes),
        cmocka_unit_test(test_hostile_lines_are_refused_without_reading_past_them),
        cmocka_unit_test(test_snmptrapd_header_and_sysname),
        cmocka_unit_test(test_csv_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
