/*
 * Unit tests of the trap catalog reader and builder
 * (testtool/notify/trap_catalog.c, issue 29 item 3): the built-in catalogs
 * load, weights draw in proportion, placeholders fill OIDs and typed
 * values, and every kind of bad file is refused with the trap and field
 * named.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ber.h"
#include "trap_catalog.h"

static struct trap_catalog *
tc_parse_ok(const char *text)
{
    struct trap_catalog *cat = NULL;
    char err[256] = "";

    if (trap_catalog_parse(text, strlen(text), &cat, err, sizeof err) != FLEET_OK) {
        fail_msg("refused: %s", err);
    }
    return cat;
}

static void
tc_refused(const char *text, const char *why)
{
    struct trap_catalog *cat = NULL;
    char err[256] = "";

    assert_int_not_equal(trap_catalog_parse(text, strlen(text), &cat, err, sizeof err), FLEET_OK);
    assert_null(cat);
    if (!strstr(err, why)) {
        fail_msg("error \"%s\" does not say \"%s\"", err, why);
    }
}

/* Both built-in catalogs load, and every template in them builds. */
static void
test_builtin_catalogs_load(void **state)
{
    static const char *const names[] = {"generic", "crs-x"};
    char path[512], err[256];
    struct trap_catalog *cat;

    (void)state;
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/traps/%s.json", FLEETSIM_SCHEMA_DIR, names[i]);
        if (trap_catalog_load(path, &cat, err, sizeof err)) {
            fail_msg("%s", err);
        }
        assert_non_null(trap_catalog_find(cat, "link-down"));
        assert_non_null(trap_catalog_find(cat, "link-up"));
        assert_true(cat->count >= 6);
        trap_catalog_free(cat);
    }
}

/* Placeholders fill the OIDs and the typed values: ifIndex in an OID and an integer, a name in a string, a
 * drawn address as an IpAddress and as four OID arcs, negative integers, Counter64. */
static void
test_build_fills_oids_and_typed_values(void **state)
{
    struct trap_catalog *cat = tc_parse_ok(
        "{\"traps\":[{\"id\":\"t\",\"oid\":\"1.3.6.1.4.1.99.0.7\",\"objects\":["
        "{\"oid\":\"1.3.6.1.2.1.2.2.1.1.{ifindex}\",\"type\":\"integer\",\"value\":\"{ifindex}\"},"
        "{\"oid\":\"1.3.6.1.2.1.31.1.1.1.1.{ifindex}\",\"type\":\"string\",\"value\":\"{if} on {host}\"},"
        "{\"oid\":\"1.3.6.1.2.1.15.3.1.7.{peer}\",\"type\":\"ipaddress\",\"value\":\"{peer}\"},"
        "{\"oid\":\"1.3.6.1.4.1.99.1.{num}\",\"type\":\"integer\",\"value\":-5},"
        "{\"oid\":\"1.3.6.1.4.1.99.2\",\"type\":\"counter64\",\"value\":\"18446744073709551615\"},"
        "{\"oid\":\"1.3.6.1.4.1.99.3\",\"type\":\"oid\",\"value\":\"1.3.6.1.4.1.99.{num}\"}]}]}");
    struct trap_catalog_vars vars = {.host = "r1", .ifname = "Gi0/0/0/3", .ifindex = 4, .draw = 0};
    struct trap_catalog_built *b = malloc(sizeof *b);
    const struct trap_template *t = trap_catalog_pick(cat, 12345);
    struct oid want;

    (void)state;
    assert_non_null(b);
    assert_int_equal(trap_catalog_build(t, &vars, b), FLEET_OK);
    assert_int_equal(b->varbind_count, 6);
    assert_int_equal(oid_parse("1.3.6.1.2.1.2.2.1.1.4", &want), FLEET_OK);
    assert_int_equal(oid_cmp(b->varbinds[0].name, &want), 0);
    assert_int_equal(b->varbinds[0].value.tag, BER_INTEGER);
    assert_int_equal(b->varbinds[0].value.v.i, 4);
    assert_int_equal(b->varbinds[1].value.tag, BER_OCTET_STRING);
    assert_int_equal(b->varbinds[1].value.v.bytes.len, strlen("Gi0/0/0/3 on r1"));
    assert_memory_equal(b->varbinds[1].value.v.bytes.ptr, "Gi0/0/0/3 on r1", strlen("Gi0/0/0/3 on r1"));
    /* draw 0: {peer} is 192.0.2.1, {num} is 1 */
    assert_int_equal(oid_parse("1.3.6.1.2.1.15.3.1.7.192.0.2.1", &want), FLEET_OK);
    assert_int_equal(oid_cmp(b->varbinds[2].name, &want), 0);
    assert_int_equal(b->varbinds[2].value.tag, BER_IPADDRESS);
    assert_memory_equal(b->varbinds[2].value.v.bytes.ptr, "\xc0\x00\x02\x01", 4);
    assert_int_equal(oid_parse("1.3.6.1.4.1.99.1.1", &want), FLEET_OK);
    assert_int_equal(oid_cmp(b->varbinds[3].name, &want), 0);
    assert_int_equal(b->varbinds[3].value.v.i, -5);
    assert_int_equal(b->varbinds[4].value.tag, BER_COUNTER64);
    assert_true(b->varbinds[4].value.v.u == UINT64_MAX);
    assert_int_equal(b->varbinds[5].value.tag, BER_OID);
    assert_int_equal(oid_parse("1.3.6.1.4.1.99.1", &want), FLEET_OK);
    assert_int_equal(oid_cmp(b->varbinds[5].value.v.oid, &want), 0);
    free(b);
    trap_catalog_free(cat);
}

/* Weights draw in proportion over the whole range; weight 0 is never drawn but can be found. */
static void
test_weights_draw_in_proportion(void **state)
{
    struct trap_catalog *cat = tc_parse_ok("{\"traps\":["
                                           "{\"id\":\"a\",\"oid\":\"1.3.6.1.4.1.1.1\",\"weight\":1},"
                                           "{\"id\":\"event\",\"oid\":\"1.3.6.1.4.1.1.2\",\"weight\":0},"
                                           "{\"id\":\"b\",\"oid\":\"1.3.6.1.4.1.1.3\",\"weight\":3}]}");
    uint32_t a = 0, b = 0;

    (void)state;
    assert_int_equal(cat->total_weight, 4);
    for (uint64_t d = 0; d < 400; d++) {
        const struct trap_template *t = trap_catalog_pick(cat, d);
        a += !strcmp(t->id, "a");
        b += !strcmp(t->id, "b");
    }
    assert_int_equal(a, 100);
    assert_int_equal(b, 300);
    assert_non_null(trap_catalog_find(cat, "event"));
    assert_null(trap_catalog_find(cat, "nope"));
    trap_catalog_free(cat);
}

/* Bad files: refused, the trap and the field named, nothing leaked (ASan builds check). */
static void
test_bad_catalogs_are_refused_with_the_field_named(void **state)
{
    (void)state;
    tc_refused("", "line");
    tc_refused("{}", "non-empty \"traps\" array");
    tc_refused("{\"traps\":[]}", "non-empty \"traps\" array");
    tc_refused("{\"traps\":[{\"oid\":\"1.3.6.1.4.1.1\"}]}", "trap 0: \"id\"");
    tc_refused("{\"traps\":[{\"id\":\"a\",\"oid\":\"not.an.oid\"}]}", "trap 0: \"oid\"");
    tc_refused("{\"traps\":[{\"id\":\"a\",\"oid\":\"1.3.6.1.4.1.1\",\"colour\":1}]}",
               "unknown member \"colour\"");
    tc_refused("{\"traps\":[{\"id\":\"a\",\"oid\":\"1.3.6.1.4.1.1\",\"weight\":2000000}]}", "\"weight\"");
    tc_refused(
        "{\"traps\":[{\"id\":\"a\",\"oid\":\"1.3.6.1.4.1.1\"},{\"id\":\"a\",\"oid\":\"1.3.6.1.4.1.2\"}]}",
        "trap 1: id \"a\" is trap 0's too");
    tc_refused("{\"traps\":[{\"id\":\"a\",\"oid\":\"1.3.6.1.4.1.1\",\"weight\":0}]}", "weight 0");
    tc_refused(
        "{\"traps\":[{\"id\":\"a\",\"oid\":\"1.3.6.1.4.1.1\",\"objects\":[{\"oid\":\"1.3.6.1\",\"type\":"
        "\"float\",\"value\":1}]}]}",
        "trap 0 object 0: \"type\"");
    tc_refused(
        "{\"traps\":[{\"id\":\"a\",\"oid\":\"1.3.6.1.4.1.1\",\"objects\":[{\"oid\":\"1.3.6.{if}\",\"type\":"
        "\"integer\",\"value\":1}]}]}",
        "trap 0 object 0");
    tc_refused(
        "{\"traps\":[{\"id\":\"a\",\"oid\":\"1.3.6.1.4.1.1\",\"objects\":[{\"oid\":\"1.3.6.1\",\"type\":"
        "\"integer\",\"value\":\"{if}\"}]}]}",
        "does not build");
    tc_refused(
        "{\"traps\":[{\"id\":\"a\",\"oid\":\"1.3.6.1.4.1.1\",\"objects\":[{\"oid\":\"1.3.6.1\",\"type\":"
        "\"integer\",\"value\":4294967296}]}]}",
        "does not build");
    tc_refused(
        "{\"traps\":[{\"id\":\"a\",\"oid\":\"1.3.6.1.4.1.1\",\"objects\":[{\"oid\":\"1.3.6.1\",\"type\":"
        "\"ipaddress\",\"value\":\"300.1.1.1\"}]}]}",
        "does not build");
    tc_refused(
        "{\"traps\":[{\"id\":\"a\",\"oid\":\"1.3.6.1.4.1.1\",\"objects\":[{\"oid\":\"1.3.6.1\",\"type\":"
        "\"string\",\"value\":\"{nope}\"}]}]}",
        "does not build");
    tc_refused("{\"traps\":[{\"id\":\"a\",\"oid\":\"1.3.6.1.4.1.1\",\"objects\":[{\"oid\":\"1.3.6.1\"}]}]}",
               "\"oid\", \"type\" and \"value\"");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin_catalogs_load),
        cmocka_unit_test(test_build_fills_oids_and_typed_values),
        cmocka_unit_test(test_weights_draw_in_proportion),
        cmocka_unit_test(test_bad_catalogs_are_refused_with_the_field_named),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
