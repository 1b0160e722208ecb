/*
 * Unit tests of recordings (testtool/snmp/recording.c): both formats read
 * into one sorted table (every SNMP type, hex strings, enums, multi-line
 * strings and wrapped Hex-STRING), malformed lines refused with a message
 * naming the file and line, duplicates refused naming both lines, lookups,
 * counters that move inside the documented band and wrap, and .snmprec
 * lines written back (printable strings as text, others as hex).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recording.h"

/* Read @p text as file "t.rec"; @return the code, table in @p rec, message in @p err. */
static enum fleet_err
read_text(const char *text, struct rec_table **rec, char *err, size_t err_len)
{
    FILE *in = fmemopen((void *)text, strlen(text), "r");
    enum fleet_err rc;

    assert_non_null(in);
    err[0] = '\0';
    rc = rec_read(in, "t.rec", rec, err, err_len);
    fclose(in);
    return rc;
}

static struct rec_table *
read_ok(const char *text)
{
    struct rec_table *rec;
    char err[512];
    enum fleet_err rc = read_text(text, &rec, err, sizeof err);

    if (rc) {
        fail_msg("unexpected failure: %s", err);
    }
    return rec;
}

static void
expect_error(const char *text, enum fleet_err want, const char *message)
{
    struct rec_table *rec;
    char err[512];
    enum fleet_err rc = read_text(text, &rec, err, sizeof err);

    if (rc != want || strcmp(err, message)) {
        fail_msg("expected %d \"%s\", got %d \"%s\"", want, message, rc, err);
    }
    assert_null(rec);
}

/* Entry @p i's OID as text. */
static const char *
oid_text(const struct rec_table *rec, uint32_t i, char *buf, size_t len)
{
    struct oid oid;
    rec_entry_oid(rec, i, &oid);
    return oid_format(&oid, buf, len);
}

/* Entry @p i's value printed as a .snmprec line at elapsed 0. */
static const char *
line_of(const struct rec_table *rec, uint32_t i, char *buf, size_t len)
{
    struct oid oid, scratch;
    struct spdu_value v;
    FILE *out = fmemopen(buf, len, "w");

    assert_non_null(out);
    rec_entry_oid(rec, i, &oid);
    rec_value(rec, i, 1, 0, &scratch, &v);
    assert_int_equal(rec_print_line(out, &oid, &v), FLEET_OK);
    fclose(out);
    buf[strcspn(buf, "\n")] = '\0';
    return buf;
}

static void
test_snmprec_every_type_sorted(void **state)
{
    (void)state;
    struct rec_table *rec = read_ok("# a comment\n"
                                    "1.3.6.1.4.1.99999.1.3.0|6|1.3.6.1.4.1.99999.7\n"
                                    "1.3.6.1.4.1.99999.1.1.0|2|-42\n"
                                    "1.3.6.1.4.1.99999.1.2.0|4|hello world\n"
                                    "\n"
                                    "1.3.6.1.4.1.99999.1.10.0|4x|00ff7c0a\n"
                                    "1.3.6.1.4.1.99999.1.4.0|64|10.1.2.3\n"
                                    "1.3.6.1.4.1.99999.1.5.0|65|4294967295\n"
                                    "1.3.6.1.4.1.99999.1.6.0|66|7\n"
                                    "1.3.6.1.4.1.99999.1.7.0|67|12345\n"
                                    "1.3.6.1.4.1.99999.1.8.0|70|18446744073709551615\n"
                                    "1.3.6.1.4.1.99999.1.9.0|5|\n"
                                    "1.3.6.1.4.1.99999.1.11.0|4|\n");
    static const char *const want[] = {
        "1.3.6.1.4.1.99999.1.1.0|2|-42",
        "1.3.6.1.4.1.99999.1.2.0|4|hello world",
        "1.3.6.1.4.1.99999.1.3.0|6|1.3.6.1.4.1.99999.7",
        "1.3.6.1.4.1.99999.1.4.0|64|10.1.2.3",
        "1.3.6.1.4.1.99999.1.5.0|65|4294967295",
        "1.3.6.1.4.1.99999.1.6.0|66|7",
        "1.3.6.1.4.1.99999.1.7.0|67|12345",
        "1.3.6.1.4.1.99999.1.8.0|70|18446744073709551615",
        "1.3.6.1.4.1.99999.1.9.0|5|",
        "1.3.6.1.4.1.99999.1.10.0|4x|00ff7c0a",
        "1.3.6.1.4.1.99999.1.11.0|4|",
    };
    char buf[256];

    assert_int_equal(rec->count, sizeof want / sizeof want[0]);
    for (uint32_t i = 0; i < rec->count; i++) {
        assert_string_equal(line_of(rec, i, buf, sizeof buf), want[i]);
    }
    rec_free(rec);
}

static void
test_walk_every_type_and_continuations(void **state)
{
    (void)state;
    struct rec_table *rec = read_ok(
        ".1.3.6.1.2.1.1.1.0 = STRING: \"Linux box\n"
        "second line \\\"quoted\\\"\"\n"
        ".1.3.6.1.2.1.1.2.0 = OID: .1.3.6.1.4.1.8072.3.2.10\n"
        ".1.3.6.1.2.1.1.3.0 = Timeticks: (123456) 0:20:34.56\n"
        ".1.3.6.1.2.1.2.2.1.3.1 = INTEGER: softwareLoopback(24)\n"
        ".1.3.6.1.2.1.2.2.1.4.1 = INTEGER: 65536 octets\n"
        ".1.3.6.1.2.1.2.2.1.6.2 = Hex-STRING: 00 11 22 33 44 55 66 77 88 99 AA BB CC DD EE FF \n"
        "01 02 \n"
        ".1.3.6.1.2.1.2.2.1.10.1 = Counter32: 1000\n"
        ".1.3.6.1.2.1.2.2.1.5.1 = Gauge32: 10000000\n"
        ".1.3.6.1.2.1.4.20.1.1.10.0.0.1 = IpAddress: 10.0.0.1\n"
        ".1.3.6.1.2.1.31.1.1.1.6.1 = Counter64: 123456789012\n"
        ".1.3.6.1.2.1.1.4.0 = \"\"\n"
        ".1.3.6.1.2.1.1.5.0 = STRING: plain text\n"
        ".1.3.6.1.2.1.1.6.0 = NULL\n"
        ".1.3.6.1.6.3.1 = No more variables left in this MIB View (It is past the end of the MIB tree)\n");
    static const char *const want[] = {
        "1.3.6.1.2.1.1.1.0|4x|4c696e757820626f780a7365636f6e64206c696e65202271756f74656422",
        "1.3.6.1.2.1.1.2.0|6|1.3.6.1.4.1.8072.3.2.10",
        "1.3.6.1.2.1.1.3.0|67|123456",
        "1.3.6.1.2.1.1.4.0|4|",
        "1.3.6.1.2.1.1.5.0|4|plain text",
        "1.3.6.1.2.1.1.6.0|5|",
        "1.3.6.1.2.1.2.2.1.3.1|2|24",
        "1.3.6.1.2.1.2.2.1.4.1|2|65536",
        "1.3.6.1.2.1.2.2.1.5.1|66|10000000",
        "1.3.6.1.2.1.2.2.1.6.2|4x|00112233445566778899aabbccddeeff0102",
        "1.3.6.1.2.1.2.2.1.10.1|65|1000",
        "1.3.6.1.2.1.4.20.1.1.10.0.0.1|64|10.0.0.1",
        "1.3.6.1.2.1.31.1.1.1.6.1|70|123456789012",
    };
    char buf[256];

    assert_int_equal(rec->count, sizeof want / sizeof want[0]);
    for (uint32_t i = 0; i < rec->count; i++) {
        assert_string_equal(line_of(rec, i, buf, sizeof buf), want[i]);
    }
    rec_free(rec);
}

static void
test_malformed_lines_name_file_and_line(void **state)
{
    (void)state;
    expect_error("1.3.6.1.2.1.1.1.0|4|ok\n1.3.6.1.2.1.1.2.0|4:numeric|x\n", FLEET_ERR_INVAL,
                 "t.rec:2: tag \"4:numeric\" is not supported (a number with an optional x; variation "
                 "modules and other suffixes are not)");
    expect_error("1.3.6.1.2.1.1.1.0|4|ok\n\n1.3.6.1.2.1.1.2.0|2|12a\n", FLEET_ERR_INVAL,
                 "t.rec:3: bad INTEGER value \"12a\"");
    expect_error("1.3.6.1.2.1.1.1.0|4x|0g\n", FLEET_ERR_INVAL, "t.rec:1: bad hex value \"0g\"");
    expect_error("1.3.6.1.2.1.1.1.0|4x|abc\n", FLEET_ERR_INVAL, "t.rec:1: bad hex value \"abc\"");
    expect_error("1.3.6.1.2.1.1.1.0|65|4294967296\n", FLEET_ERR_INVAL,
                 "t.rec:1: bad 32-bit unsigned value \"4294967296\"");
    expect_error("1.3.6.1.2.1.1.1.0|99|1\n", FLEET_ERR_INVAL, "t.rec:1: unknown tag 99");
    expect_error("1.3.6.1.2.1.1.1.0|4|ok\nno bars here\n", FLEET_ERR_INVAL,
                 "t.rec:2: expected OID|TAG|VALUE");
    expect_error("1.3.x.1|4|ok\n", FLEET_ERR_INVAL,
                 "t.rec:1: bad OID \"1.3.x.1\" (numeric, e.g. 1.3.6.1.2.1.1.1.0)");
    expect_error("1.3.6.1.2.1.1.1.0|2x|01\n", FLEET_ERR_INVAL,
                 "t.rec:1: tag 2 cannot be hex (x is for strings)");
    expect_error("SNMPv2-MIB::sysDescr.0 = STRING: x\n", FLEET_ERR_INVAL,
                 "t.rec:1: neither .snmprec (OID|TAG|VALUE) nor snmpwalk -On output (.OID = TYPE: value)");
    expect_error(".1.3.6.1.2.1.1.1.0 = STRING: \"x\"\ngarbage\n", FLEET_ERR_INVAL,
                 "t.rec:2: expected \".OID = TYPE: value\" (snmpwalk -On output)");
    expect_error(".1.3.6.1.2.1.1.1.0 = INTEGER: 1\n.1.3.6.1.2.1.1.2.0 = Network Address: 0a\n",
                 FLEET_ERR_INVAL, "t.rec:2: type \"Network Address\" is not supported");
    expect_error(".1.3.6.1.2.1.1.1.0 = Timeticks: 5\n", FLEET_ERR_INVAL,
                 "t.rec:1: bad Timeticks value \"5\" (expected (ticks) ...)");
    expect_error(".1.3.6.1.2.1.1.1.0 = STRING: \"never closed\n.1.3.6.1.2.1.1.2.0 = INTEGER: 1\n",
                 FLEET_ERR_INVAL, "t.rec:1: bad STRING value (unterminated or over 65535 bytes)");
}

static void
test_duplicates_refused_with_both_lines(void **state)
{
    (void)state;
    expect_error("1.3.6.1.2.1.1.2.0|4|b\n1.3.6.1.2.1.1.1.0|4|a\n1.3.6.1.2.1.1.2.0|4|c\n", FLEET_ERR_INVAL,
                 "t.rec:3: duplicate OID 1.3.6.1.2.1.1.2.0 (first on line 1)");
    expect_error(".1.3.6.1.2.1.1.1.0 = INTEGER: 1\n.1.3.6.1.2.1.1.1.0 = INTEGER: 2\n", FLEET_ERR_INVAL,
                 "t.rec:2: duplicate OID 1.3.6.1.2.1.1.1.0 (first on line 1)");
}

static void
test_line_too_long_refused(void **state)
{
    (void)state;
    size_t n = REC_LINE_MAX_BYTES + 100;
    char *text = malloc(n + 1);
    struct rec_table *rec;
    char err[256];

    assert_non_null(text);
    memset(text, 'a', n);
    memcpy(text, "1.3.6.1.2.1.1.1.0|4|", 20);
    text[n] = '\0';
    assert_int_equal(read_text(text, &rec, err, sizeof err), FLEET_ERR_LIMIT);
    assert_string_equal(err, "t.rec:1: line longer than 163840 bytes");
    free(text);
}

static void
test_find_and_find_next(void **state)
{
    (void)state;
    struct rec_table *rec =
        read_ok("1.3.6.1.4.1.9.2.0|2|2\n1.3.6.1.4.1.9.1.0|2|1\n1.3.6.1.4.1.9.10.0|2|10\n");
    struct oid oid;
    char buf[128];

    assert_int_equal(oid_parse("1.3.6.1.4.1.9.2.0", &oid), FLEET_OK);
    assert_int_equal(rec_find(rec, &oid), 1);
    assert_string_equal(oid_text(rec, rec_find_next(rec, &oid), buf, sizeof buf), "1.3.6.1.4.1.9.10.0");
    assert_int_equal(oid_parse("1.3.6.1.4.1.9.2", &oid), FLEET_OK);
    assert_int_equal(rec_find(rec, &oid), rec->count);
    assert_int_equal(rec_find_next(rec, &oid), 1);
    assert_int_equal(oid_parse("0.0", &oid), FLEET_OK);
    assert_int_equal(rec_find_next(rec, &oid), 0);
    assert_int_equal(oid_parse("1.3.6.1.4.1.9.10.0", &oid), FLEET_OK);
    assert_int_equal(rec_find_next(rec, &oid), rec->count);
    rec_free(rec);
}

static int
under_9_2(const struct oid *oid, void *ctx)
{
    (void)ctx;
    return oid->len > 7 && oid->sub[6] == 9 && oid->sub[7] == 2;
}

static void
test_drop_keeps_order(void **state)
{
    (void)state;
    struct rec_table *rec = read_ok(
        "1.3.6.1.4.1.9.2.0|2|2\n1.3.6.1.4.1.9.1.0|2|1\n1.3.6.1.4.1.9.10.0|2|10\n1.3.6.1.4.1.9.2.1|2|3\n");
    char buf[128];

    assert_int_equal(rec_drop(rec, under_9_2, NULL), 2);
    assert_int_equal(rec->count, 2);
    assert_string_equal(oid_text(rec, 0, buf, sizeof buf), "1.3.6.1.4.1.9.1.0");
    assert_string_equal(oid_text(rec, 1, buf, sizeof buf), "1.3.6.1.4.1.9.10.0");
    rec_free(rec);
}

static void
test_counters_move_in_band_and_wrap(void **state)
{
    (void)state;
    struct rec_table *rec = read_ok("1.3.6.1.4.1.9.1.0|65|4294967000\n"
                                    "1.3.6.1.4.1.9.2.0|70|100\n"
                                    "1.3.6.1.4.1.9.3.0|66|100\n"
                                    "1.3.6.1.2.1.1.3.0|67|100\n"
                                    "1.3.6.1.4.1.9.4.0|67|100\n");
    struct oid scratch;
    struct spdu_value a, b;
    uint64_t rate;

    /* Counter64: grows by its rate per second, inside the band; other devices grow differently. */
    rec_value(rec, 2, 7, 0, &scratch, &a);
    rec_value(rec, 2, 7, 1000, &scratch, &b);
    assert_int_equal(a.v.u, 100);
    rate = b.v.u - a.v.u;
    assert_true(rate >= REC_COUNTER_RATE_MIN && rate <= REC_COUNTER_RATE_MAX);
    rec_value(rec, 2, 7, 10000, &scratch, &b);
    assert_int_equal(b.v.u - a.v.u, 10 * rate);
    rec_value(rec, 2, 8, 1000, &scratch, &b);
    assert_int_not_equal(b.v.u - a.v.u, rate);
    /* Counter32 near 2^32 wraps. */
    rec_value(rec, 1, 7, 1000, &scratch, &b);
    assert_int_equal(b.tag, BER_COUNTER32);
    assert_true(b.v.u < 4294967000u);
    /* Gauge32 and an ordinary TimeTicks stand still; sysUpTime.0 counts hundredths. */
    rec_value(rec, 3, 7, 5000, &scratch, &b);
    assert_int_equal(b.v.u, 100);
    rec_value(rec, 4, 7, 5000, &scratch, &b);
    assert_int_equal(b.v.u, 100);
    rec_value(rec, 0, 7, 5000, &scratch, &b);
    assert_int_equal(b.tag, BER_TIMETICKS);
    assert_int_equal(b.v.u, 600);
    rec_free(rec);
}

static void
test_print_line_hex_for_unprintable(void **state)
{
    (void)state;
    struct oid name;
    struct spdu_value v = {.tag = BER_OCTET_STRING};
    char buf[128];
    FILE *out;

    assert_int_equal(oid_parse("1.3.6.1.2.1.1.1.0", &name), FLEET_OK);
    v.v.bytes.ptr = (const uint8_t *)"a|b c";
    v.v.bytes.len = 5;
    out = fmemopen(buf, sizeof buf, "w");
    assert_int_equal(rec_print_line(out, &name, &v), FLEET_OK);
    v.v.bytes.ptr = (const uint8_t *)"\x01\xff";
    v.v.bytes.len = 2;
    name.sub[name.len - 1] = 1;
    assert_int_equal(rec_print_line(out, &name, &v), FLEET_OK);
    fclose(out);
    assert_string_equal(buf, "1.3.6.1.2.1.1.1.0|4|a|b c\n1.3.6.1.2.1.1.1.1|4x|01ff\n");
    /* The text form reads back unchanged, bars and all. */
    {
        struct rec_table *rec = read_ok(buf);
        assert_int_equal(rec->count, 2);
        rec_free(rec);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_snmprec_every_type_sorted),
        cmocka_unit_test(test_walk_every_type_and_continuations),
        cmocka_unit_test(test_malformed_lines_name_file_and_line),
        cmocka_unit_test(test_duplicates_refused_with_both_lines),
        cmocka_unit_test(test_line_too_long_refused),
        cmocka_unit_test(test_find_and_find_next),
        cmocka_unit_test(test_drop_keeps_order),
        cmocka_unit_test(test_counters_move_in_band_and_wrap),
        cmocka_unit_test(test_print_line_hex_for_unprintable),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
