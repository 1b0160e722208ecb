/*
 * Unit tests of the BER primitives (wire/ber.c). net-snmp's own ASN.1 code
 * is the oracle: our writers must produce the bytes its writers produce, and
 * each side must read what the other wrote. The refusal tests feed the
 * malformed forms a hostile or broken peer sends (indefinite and overlong
 * lengths, padded sub-identifiers, values past their type's range).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <net-snmp/net-snmp-config.h>

#include <net-snmp/library/asn1.h>
#include <net-snmp/library/snmp_api.h>

#include "ber.h"

/* Room for any single element these tests encode. */
#define TB_BUF_BYTES 1024
/* Random cases per oracle comparison; the seed is fixed so a failure repeats. */
#define TB_RANDOM_CASES 20000
#define TB_SEED         12345u

/* A small deterministic generator (xorshift64), so runs are reproducible everywhere. */
static uint64_t tb_state = TB_SEED;

static uint64_t
tb_rand64(void)
{
    tb_state ^= tb_state << 13;
    tb_state ^= tb_state >> 7;
    tb_state ^= tb_state << 17;
    return tb_state;
}

/* A random value with a random bit length, so every encoded size shows up often. */
static uint64_t
tb_rand_sized(void)
{
    unsigned bits = (unsigned)(tb_rand64() % 65);

    return bits == 64 ? tb_rand64() : tb_rand64() & ((1ull << bits) - 1);
}

static void
tb_oid(struct oid *oid, const char *text)
{
    assert_int_equal(oid_parse(text, oid), FLEET_OK);
}

static struct ber_reader
tb_reader(const uint8_t *p, size_t len)
{
    struct ber_reader r = {p, p + len};

    return r;
}

static void
test_header_short_and_long_lengths(void **state)
{
    static const size_t lens[] = {0, 1, 127, 128, 255, 256, 65535, 65536, 70000};
    static uint8_t buf[80000];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        uint8_t *end = ber_put_header(buf, BER_OCTET_STRING, lens[i]);
        size_t hlen = (size_t)(end - buf);
        struct ber_reader r = tb_reader(buf, hlen + lens[i]);
        uint8_t tag;
        size_t len;

        assert_int_equal(hlen, 1 + ber_length_size(lens[i]));
        assert_int_equal(ber_read_header(&r, &tag, &len), FLEET_OK);
        assert_int_equal(tag, BER_OCTET_STRING);
        assert_int_equal(len, lens[i]);
        assert_ptr_equal(r.p, end);
    }
}

static void
test_header_nonminimal_long_length_is_accepted(void **state)
{
    /* net-snmp's forward encoder always writes sequence lengths as 0x82 xx xx. */
    static const uint8_t in[] = {0x30, 0x82, 0x00, 0x02, 0x05, 0x00};
    struct ber_reader r = tb_reader(in, sizeof in);
    uint8_t tag;
    size_t len;

    (void)state;
    assert_int_equal(ber_read_header(&r, &tag, &len), FLEET_OK);
    assert_int_equal(len, 2);
    assert_ptr_equal(r.p, in + 4);
}

static void
test_header_indefinite_length_is_refused(void **state)
{
    static const uint8_t in[] = {0x30, 0x80, 0x05, 0x00, 0x00, 0x00};
    struct ber_reader r = tb_reader(in, sizeof in);
    uint8_t tag;
    size_t len;

    (void)state;
    assert_int_equal(ber_read_header(&r, &tag, &len), FLEET_ERR_PROTO);
    assert_ptr_equal(r.p, in);
}

static void
test_header_length_of_five_bytes_is_refused(void **state)
{
    static const uint8_t in[] = {0x04, 0x85, 0x00, 0x00, 0x00, 0x00, 0x01, 0xaa};
    struct ber_reader r = tb_reader(in, sizeof in);
    uint8_t tag;
    size_t len;

    (void)state;
    assert_int_equal(ber_read_header(&r, &tag, &len), FLEET_ERR_PROTO);
}

static void
test_header_length_past_end_is_refused(void **state)
{
    static const uint8_t in[] = {0x04, 0x84, 0xff, 0xff, 0xff, 0xff, 0xaa};
    static const uint8_t in2[] = {0x04, 0x03, 0xaa, 0xbb};
    struct ber_reader r = tb_reader(in, sizeof in);
    uint8_t tag;
    size_t len;

    (void)state;
    assert_int_equal(ber_read_header(&r, &tag, &len), FLEET_ERR_PROTO);
    r = tb_reader(in2, sizeof in2);
    assert_int_equal(ber_read_header(&r, &tag, &len), FLEET_ERR_PROTO);
}

static void
test_header_truncated_is_refused(void **state)
{
    static const uint8_t in[] = {0x04, 0x82, 0x01, 0x00};
    size_t cut;

    (void)state;
    for (cut = 0; cut < sizeof in; cut++) {
        struct ber_reader r = tb_reader(in, cut);
        uint8_t tag;
        size_t len;

        assert_int_equal(ber_read_header(&r, &tag, &len), FLEET_ERR_PROTO);
    }
}

static void
test_header_multibyte_tag_is_refused(void **state)
{
    static const uint8_t in[] = {0x1f, 0x81, 0x00, 0x00};
    struct ber_reader r = tb_reader(in, sizeof in);
    uint8_t tag;
    size_t len;

    (void)state;
    assert_int_equal(ber_read_header(&r, &tag, &len), FLEET_ERR_PROTO);
}

static void
test_enter_wrong_tag_is_refused(void **state)
{
    static const uint8_t in[] = {0x31, 0x00};
    struct ber_reader r = tb_reader(in, sizeof in), inner;

    (void)state;
    assert_int_equal(ber_read_enter(&r, BER_SEQUENCE, &inner), FLEET_ERR_PROTO);
    assert_ptr_equal(r.p, in);
}

/* Our INTEGER writer against net-snmp's for @p v (which must fit in a long). */
static void
tb_check_int_against_netsnmp(int64_t v)
{
    uint8_t ours[16], theirs[16];
    size_t room = sizeof theirs, ours_len;
    long lv = (long)v, back = 0;
    uint8_t *end, type;
    struct ber_reader r;
    int64_t got;

    end = ber_put_int(ours, BER_INTEGER, v);
    ours_len = (size_t)(end - ours);
    assert_int_equal(ours_len, 2 + ber_int_size(v));
    assert_non_null(asn_build_int(theirs, &room, ASN_INTEGER, &lv, sizeof lv));
    assert_int_equal(sizeof theirs - room, ours_len);
    assert_memory_equal(ours, theirs, ours_len);

    room = ours_len;
    assert_non_null(asn_parse_int(ours, &room, &type, &back, sizeof back));
    assert_int_equal(back, lv);
    r = tb_reader(ours, ours_len);
    assert_int_equal(ber_read_int(&r, BER_INTEGER, &got), FLEET_OK);
    assert_int_equal(got, v);
    assert_ptr_equal(r.p, ours + ours_len);
}

static void
test_int_matches_netsnmp_for_int32_values(void **state)
{
    static const int64_t fixed[] = {0,       1,       -1,       127,      128,       -128,     -129,
                                    255,     256,     -256,     32767,    32768,     -32768,   -32769,
                                    8388607, 8388608, -8388608, -8388609, INT32_MAX, INT32_MIN};
    size_t i;

    (void)state;
    for (i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        tb_check_int_against_netsnmp(fixed[i]);
    }
    for (i = 0; i < TB_RANDOM_CASES; i++) {
        tb_check_int_against_netsnmp((int32_t)(uint32_t)tb_rand_sized());
    }
}

static void
test_int_extremes_of_int64_round_trip(void **state)
{
    static const struct {
        int64_t v;
        uint8_t enc[10];
        size_t len;
    } cases[] = {
        {INT64_MAX, {0x02, 0x08, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 10},
        {INT64_MIN, {0x02, 0x08, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, 10},
        {-1, {0x02, 0x01, 0xff}, 3},
        {(int64_t)1 << 31, {0x02, 0x05, 0x00, 0x80, 0x00, 0x00, 0x00}, 7},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t buf[16];
        uint8_t *end = ber_put_int(buf, BER_INTEGER, cases[i].v);
        struct ber_reader r;
        int64_t got;

        assert_int_equal(end - buf, cases[i].len);
        assert_memory_equal(buf, cases[i].enc, cases[i].len);
        r = tb_reader(buf, cases[i].len);
        assert_int_equal(ber_read_int(&r, BER_INTEGER, &got), FLEET_OK);
        assert_true(got == cases[i].v);
    }
}

static void
test_int_refuses_empty_overlong_and_wrong_tag(void **state)
{
    static const uint8_t empty[] = {0x02, 0x00};
    static const uint8_t nine[] = {0x02, 0x09, 0x00, 0x80, 0, 0, 0, 0, 0, 0, 0};
    static const uint8_t wrong[] = {0x04, 0x01, 0x05};
    struct ber_reader r;
    int64_t v;

    (void)state;
    r = tb_reader(empty, sizeof empty);
    assert_int_equal(ber_read_int(&r, BER_INTEGER, &v), FLEET_ERR_PROTO);
    r = tb_reader(nine, sizeof nine);
    assert_int_equal(ber_read_int(&r, BER_INTEGER, &v), FLEET_ERR_PROTO);
    r = tb_reader(wrong, sizeof wrong);
    assert_int_equal(ber_read_int(&r, BER_INTEGER, &v), FLEET_ERR_PROTO);
    assert_ptr_equal(r.p, wrong);
}

static void
test_uint32_matches_netsnmp(void **state)
{
    static const uint32_t fixed[] = {0, 1, 127, 128, 255, 256, 0x7fffffff, 0x80000000u, UINT32_MAX};
    size_t i;

    (void)state;
    for (i = 0; i < sizeof fixed / sizeof fixed[0] + TB_RANDOM_CASES; i++) {
        uint32_t v = i < sizeof fixed / sizeof fixed[0] ? fixed[i] : (uint32_t)tb_rand_sized();
        uint8_t ours[16], theirs[16], type;
        size_t room = sizeof theirs, ours_len;
        u_long uv = v, back = 0;
        struct ber_reader r;
        uint64_t got;

        ours_len = (size_t)(ber_put_uint(ours, BER_GAUGE32, v) - ours);
        assert_int_equal(ours_len, 2 + ber_uint_size(v));
        assert_non_null(asn_build_unsigned_int(theirs, &room, ASN_GAUGE, &uv, sizeof uv));
        assert_int_equal(sizeof theirs - room, ours_len);
        assert_memory_equal(ours, theirs, ours_len);
        room = ours_len;
        assert_non_null(asn_parse_unsigned_int(ours, &room, &type, &back, sizeof back));
        assert_int_equal(back, v);
        r = tb_reader(ours, ours_len);
        assert_int_equal(ber_read_uint(&r, BER_GAUGE32, &got), FLEET_OK);
        assert_int_equal(got, v);
    }
}

static void
test_uint64_matches_netsnmp(void **state)
{
    static const uint64_t fixed[] = {0,         0x7f,       0x80,      0xffffffffull, 0x100000000ull,
                                     INT64_MAX, 1ull << 63, UINT64_MAX};
    size_t i;

    (void)state;
    for (i = 0; i < sizeof fixed / sizeof fixed[0] + TB_RANDOM_CASES; i++) {
        uint64_t v = i < sizeof fixed / sizeof fixed[0] ? fixed[i] : tb_rand_sized();
        uint8_t ours[16], theirs[16], type;
        size_t room = sizeof theirs, ours_len;
        struct counter64 c = {v >> 32, v & 0xffffffffu}, back = {0, 0};
        struct ber_reader r;
        uint64_t got;

        ours_len = (size_t)(ber_put_uint(ours, BER_COUNTER64, v) - ours);
        assert_int_equal(ours_len, 2 + ber_uint_size(v));
        assert_non_null(asn_build_unsigned_int64(theirs, &room, ASN_COUNTER64, &c, sizeof c));
        assert_int_equal(sizeof theirs - room, ours_len);
        assert_memory_equal(ours, theirs, ours_len);
        room = ours_len;
        assert_non_null(asn_parse_unsigned_int64(ours, &room, &type, &back, sizeof back));
        assert_int_equal(back.high, c.high);
        assert_int_equal(back.low, c.low);
        r = tb_reader(ours, ours_len);
        assert_int_equal(ber_read_uint(&r, BER_COUNTER64, &got), FLEET_OK);
        assert_true(got == v);
    }
}

static void
test_uint_refuses_out_of_range(void **state)
{
    static const uint8_t c32_big[] = {0x41, 0x05, 0x01, 0x00, 0x00, 0x00, 0x00};
    static const uint8_t negative[] = {0x41, 0x01, 0x80};
    static const uint8_t c64_nine_nonzero[] = {0x46, 0x09, 0x01, 0xff, 0xff, 0xff,
                                               0xff, 0xff, 0xff, 0xff, 0xff};
    static const uint8_t c64_ten[] = {0x46, 0x0a, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    static const uint8_t empty[] = {0x43, 0x00};
    static const uint8_t c32_max[] = {0x41, 0x05, 0x00, 0xff, 0xff, 0xff, 0xff};
    struct ber_reader r;
    uint64_t v;

    (void)state;
    r = tb_reader(c32_big, sizeof c32_big);
    assert_int_equal(ber_read_uint(&r, BER_COUNTER32, &v), FLEET_ERR_PROTO);
    r = tb_reader(negative, sizeof negative);
    assert_int_equal(ber_read_uint(&r, BER_COUNTER32, &v), FLEET_ERR_PROTO);
    r = tb_reader(c64_nine_nonzero, sizeof c64_nine_nonzero);
    assert_int_equal(ber_read_uint(&r, BER_COUNTER64, &v), FLEET_ERR_PROTO);
    r = tb_reader(c64_ten, sizeof c64_ten);
    assert_int_equal(ber_read_uint(&r, BER_COUNTER64, &v), FLEET_ERR_PROTO);
    r = tb_reader(empty, sizeof empty);
    assert_int_equal(ber_read_uint(&r, BER_TIMETICKS, &v), FLEET_ERR_PROTO);
    r = tb_reader(c32_max, sizeof c32_max);
    assert_int_equal(ber_read_uint(&r, BER_COUNTER32, &v), FLEET_OK);
    assert_int_equal(v, UINT32_MAX);
}

/* Our OID writer against net-snmp's, and each reader on the other's bytes. */
static void
tb_check_oid_against_netsnmp(const struct oid *o)
{
    uint8_t ours[TB_BUF_BYTES], theirs[TB_BUF_BYTES], type;
    oid in[OID_MAX_SUBIDS], back[OID_MAX_SUBIDS];
    size_t room = sizeof theirs, back_len = OID_MAX_SUBIDS, ours_len;
    struct ber_reader r;
    struct oid got;
    uint32_t i;

    for (i = 0; i < o->len; i++) {
        in[i] = o->sub[i];
    }
    ours_len = (size_t)(ber_put_oid(ours, o) - ours);
    assert_int_equal(ours_len, 1 + ber_length_size(ber_oid_size(o)) + ber_oid_size(o));
    assert_non_null(asn_build_objid(theirs, &room, ASN_OBJECT_ID, in, o->len));
    assert_int_equal(sizeof theirs - room, ours_len);
    assert_memory_equal(ours, theirs, ours_len);

    room = ours_len;
    assert_non_null(asn_parse_objid(ours, &room, &type, back, &back_len));
    assert_int_equal(back_len, o->len);
    assert_int_equal(snmp_oid_compare(in, o->len, back, back_len), 0);
    r = tb_reader(ours, ours_len);
    assert_int_equal(ber_read_oid(&r, &got), FLEET_OK);
    assert_int_equal(oid_cmp(&got, o), 0);
}

static void
test_oid_matches_netsnmp(void **state)
{
    static const char *texts[] = {
        "1.3.6.1.2.1.1.1.0",
        "0.0",
        "0.39",
        "1.0",
        "1.39",
        "2.0",
        "2.39",
        "2.40",
        "2.47",
        "2.48",
        "2.999.1",
        "1.3.6.1.4.1.4294967295.127.128.16383.16384.2097151.2097152.268435455.268435456",
        "2.4294967215",
    };
    struct oid o;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        tb_oid(&o, texts[i]);
        tb_check_oid_against_netsnmp(&o);
    }
    /* The longest OID SNMP allows, with sub-identifiers of every size. */
    o.len = OID_MAX_SUBIDS;
    o.sub[0] = 1;
    o.sub[1] = 3;
    for (i = 2; i < OID_MAX_SUBIDS; i++) {
        o.sub[i] = (uint32_t)tb_rand_sized();
    }
    tb_check_oid_against_netsnmp(&o);
    for (i = 0; i < TB_RANDOM_CASES / 10; i++) {
        uint32_t j;

        o.len = 2 + (uint32_t)(tb_rand64() % (OID_MAX_SUBIDS - 1));
        o.sub[0] = (uint32_t)(tb_rand64() % 3);
        o.sub[1] = (uint32_t)(tb_rand64() % 40);
        for (j = 2; j < o.len; j++) {
            o.sub[j] = (uint32_t)tb_rand_sized();
        }
        tb_check_oid_against_netsnmp(&o);
    }
}

static void
test_oid_first_arcs_are_split_per_x690(void **state)
{
    static const struct {
        uint8_t enc[3];
        size_t len;
        uint32_t a, b;
    } cases[] = {
        {{0x00}, 1, 0, 0}, {{0x27}, 1, 0, 39}, {{0x28}, 1, 1, 0},        {{0x4f}, 1, 1, 39},
        {{0x50}, 1, 2, 0}, {{0x7f}, 1, 2, 47}, {{0x81, 0x00}, 2, 2, 48}, {{0x2b, 0x06}, 2, 1, 3},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct oid o;

        assert_int_equal(ber_oid_decode(cases[i].enc, cases[i].len, &o), FLEET_OK);
        assert_true(o.len >= 2);
        assert_int_equal(o.sub[0], cases[i].a);
        assert_int_equal(o.sub[1], cases[i].b);
    }
}

static void
test_oid_decode_refuses_malformed(void **state)
{
    static const uint8_t padded[] = {0x2b, 0x80, 0x01};
    static const uint8_t unfinished[] = {0x2b, 0x06, 0x81};
    static const uint8_t too_big[] = {0x2b, 0x90, 0x80, 0x80, 0x80, 0x00}; /* 2^32 */
    static const uint8_t max_ok[] = {0x2b, 0x8f, 0xff, 0xff, 0xff, 0x7f};  /* 2^32-1 */
    static const uint8_t first_too_big[] = {0x90, 0x80, 0x80, 0x80, 0x80, 0x00};
    uint8_t many[OID_MAX_SUBIDS + 1];
    struct oid o;

    (void)state;
    assert_int_equal(ber_oid_decode(padded, 0, &o), FLEET_ERR_PROTO);
    assert_int_equal(ber_oid_decode(padded, sizeof padded, &o), FLEET_ERR_PROTO);
    assert_int_equal(ber_oid_decode(unfinished, sizeof unfinished, &o), FLEET_ERR_PROTO);
    assert_int_equal(ber_oid_decode(too_big, sizeof too_big, &o), FLEET_ERR_PROTO);
    assert_int_equal(ber_oid_check(too_big, sizeof too_big), FLEET_ERR_PROTO);
    assert_int_equal(ber_oid_decode(first_too_big, sizeof first_too_big, &o), FLEET_ERR_PROTO);
    assert_int_equal(ber_oid_decode(max_ok, sizeof max_ok, &o), FLEET_OK);
    assert_int_equal(o.sub[2], UINT32_MAX);

    /* 1.3 plus 126 more is the limit; one more sub-identifier is refused. */
    memset(many, 0x01, sizeof many);
    many[0] = 0x2b;
    assert_int_equal(ber_oid_decode(many, OID_MAX_SUBIDS - 1, &o), FLEET_OK);
    assert_int_equal(o.len, OID_MAX_SUBIDS);
    assert_int_equal(ber_oid_decode(many, OID_MAX_SUBIDS, &o), FLEET_ERR_PROTO);
    assert_int_equal(ber_oid_check(many, OID_MAX_SUBIDS), FLEET_ERR_PROTO);
    assert_int_equal(ber_oid_check(many, OID_MAX_SUBIDS - 1), FLEET_OK);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_short_and_long_lengths),
        cmocka_unit_test(test_header_nonminimal_long_length_is_accepted),
        cmocka_unit_test(test_header_indefinite_length_is_refused),
        cmocka_unit_test(test_header_length_of_five_bytes_is_refused),
        cmocka_unit_test(test_header_length_past_end_is_refused),
        cmocka_unit_test(test_header_truncated_is_refused),
        cmocka_unit_test(test_header_multibyte_tag_is_refused),
        cmocka_unit_test(test_enter_wrong_tag_is_refused),
        cmocka_unit_test(test_int_matches_netsnmp_for_int32_values),
        cmocka_unit_test(test_int_extremes_of_int64_round_trip),
        cmocka_unit_test(test_int_refuses_empty_overlong_and_wrong_tag),
        cmocka_unit_test(test_uint32_matches_netsnmp),
        cmocka_unit_test(test_uint64_matches_netsnmp),
        cmocka_unit_test(test_uint_refuses_out_of_range),
        cmocka_unit_test(test_oid_matches_netsnmp),
        cmocka_unit_test(test_oid_first_arcs_are_split_per_x690),
        cmocka_unit_test(test_oid_decode_refuses_malformed),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
