/*
 * Unit tests of OIDs as values (common/oid.c): dotted text both ways, the
 * forms the parser refuses, and the order, with net-snmp's comparison as
 * the oracle. The BER encoding of OIDs is tested in wire/test_ber.c.
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

#include <net-snmp/library/snmp_api.h>

#include "oid.h"

/* Random cases per oracle comparison; the seed is fixed so a failure repeats. */
#define TO_RANDOM_CASES 20000
#define TO_SEED         12345u

/* A small deterministic generator (xorshift64), so runs are reproducible everywhere. */
static uint64_t to_state = TO_SEED;

static uint64_t
to_rand64(void)
{
    to_state ^= to_state << 13;
    to_state ^= to_state >> 7;
    to_state ^= to_state << 17;
    return to_state;
}

static void
to_oid(struct oid *oid, const char *text)
{
    assert_int_equal(oid_parse(text, oid), FLEET_OK);
}

static void
test_oid_parse_and_format_round_trip(void **state)
{
    static const char *texts[] = {"1.3.6.1.2.1.2.2.1.10.1", "0.0", "2.4294967295", "1.3.6.1.4.1.4294967295"};
    char buf[OID_MAX_SUBIDS * 11 + 1];
    struct oid o;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        to_oid(&o, texts[i]);
        assert_string_equal(oid_format(&o, buf, sizeof buf), texts[i]);
    }
    to_oid(&o, ".1.3.6");
    assert_int_equal(o.len, 3);
    assert_string_equal(oid_format(&o, buf, sizeof buf), "1.3.6");
}

static void
test_oid_parse_refuses_malformed(void **state)
{
    static const char *bad[] = {"",      ".",    "1",    "1..3",           "1.3.",
                                "..1.3", "3.1",  "1.40", "0.40",           "1.3.4294967296",
                                "1.3.a", "1.3 ", "-1.3", "1.3.99999999999"};
    char many[OID_MAX_SUBIDS * 2 + 8];
    struct oid o;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (oid_parse(bad[i], &o) != FLEET_ERR_INVAL) {
            fail_msg("\"%s\" was accepted", bad[i]);
        }
    }
    /* 128 components pass, 129 do not. */
    strcpy(many, "1");
    for (i = 1; i < OID_MAX_SUBIDS; i++) {
        strcat(many, ".1");
    }
    assert_int_equal(oid_parse(many, &o), FLEET_OK);
    assert_int_equal(o.len, OID_MAX_SUBIDS);
    strcat(many, ".1");
    assert_int_equal(oid_parse(many, &o), FLEET_ERR_INVAL);
}

static void
test_oid_format_truncates_and_terminates(void **state)
{
    struct oid o;
    char buf[8];
    size_t n;

    (void)state;
    to_oid(&o, "1.3.6.1.2.1.1.1.0");
    for (n = 1; n <= sizeof buf; n++) {
        memset(buf, 'x', sizeof buf);
        oid_format(&o, buf, n);
        assert_int_equal(strlen(buf), n - 1);
        assert_memory_equal(buf, "1.3.6.1.2.1.1.1.0", n - 1);
    }
    assert_ptr_equal(oid_format(&o, buf, 0), buf);
}

static void
test_oid_cmp_orders_like_netsnmp(void **state)
{
    struct oid a, b;
    size_t i;

    (void)state;
    to_oid(&a, "1.3.6.1");
    to_oid(&b, "1.3.6.1.0");
    assert_true(oid_cmp(&a, &b) < 0);
    assert_true(oid_cmp(&b, &a) > 0);
    assert_int_equal(oid_cmp(&a, &a), 0);
    to_oid(&a, "1.3.6.1.4294967295");
    to_oid(&b, "1.3.6.2");
    assert_true(oid_cmp(&a, &b) < 0);

    for (i = 0; i < TO_RANDOM_CASES; i++) {
        oid x[8], y[8];
        uint32_t j;
        int ours, theirs;

        /* Small alphabets and lengths, so equal prefixes and ties are common. */
        a.len = 1 + (uint32_t)(to_rand64() % 8);
        b.len = 1 + (uint32_t)(to_rand64() % 8);
        for (j = 0; j < 8; j++) {
            a.sub[j] = (uint32_t)(to_rand64() % 3) * 0x7fffffffu;
            b.sub[j] = (uint32_t)(to_rand64() % 3) * 0x7fffffffu;
            x[j] = a.sub[j];
            y[j] = b.sub[j];
        }
        ours = oid_cmp(&a, &b);
        theirs = snmp_oid_compare(x, a.len, y, b.len);
        assert_int_equal(ours < 0, theirs < 0);
        assert_int_equal(ours > 0, theirs > 0);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oid_parse_and_format_round_trip),
        cmocka_unit_test(test_oid_parse_refuses_malformed),
        cmocka_unit_test(test_oid_format_truncates_and_terminates),
        cmocka_unit_test(test_oid_cmp_orders_like_netsnmp),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
