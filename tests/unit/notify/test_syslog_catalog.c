/*
 * The syslog catalog reader (issue 29): the file format of
 * docs/SYSLOG_CATALOG.md read and checked (names and numbers of facilities
 * and severities, defaults, limits, clear refusals naming the message), the
 * weighted draw, the placeholders, and the built-in catalogs under
 * schemas/syslog/ (the same files the simulator loads).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "syslog_catalog.h"

static struct syslog_catalog *
parse_ok(const char *text)
{
    struct syslog_catalog *cat = NULL;
    char err[256] = "";

    if (syslog_catalog_parse(text, strlen(text), &cat, err, sizeof err)) {
        fail_msg("refused: %s", err);
    }
    assert_non_null(cat);
    return cat;
}

/* @p text is refused with an error containing @p why. */
static void
refused(const char *text, const char *why)
{
    struct syslog_catalog *cat = (struct syslog_catalog *)1;
    char err[256] = "";

    assert_int_not_equal(syslog_catalog_parse(text, strlen(text), &cat, err, sizeof err), 0);
    assert_null(cat);
    if (!strstr(err, why)) {
        fail_msg("error \"%s\" does not say \"%s\"", err, why);
    }
}

static void
test_fields_by_name_and_number(void **state)
{
    struct syslog_catalog *cat =
        parse_ok("{\"app-name\":\"rtr\",\"messages\":["
                 "{\"id\":\"a\",\"facility\":\"local7\",\"severity\":\"error\",\"text\":\"A\"},"
                 "{\"id\":\"b\",\"facility\":4,\"severity\":\"warn\",\"weight\":3,\"app-name\":\"sshd\","
                 "\"msgid\":\"AUTH\",\"text\":\"B\"},"
                 "{\"id\":\"c\",\"facility\":\"kern\",\"severity\":0,\"weight\":0,\"text\":\"C\"}]}");

    (void)state;
    assert_int_equal(cat->count, 3);
    assert_int_equal(cat->msgs[0].facility, 23);
    assert_int_equal(cat->msgs[0].severity, 3);
    assert_int_equal(cat->msgs[0].weight, 1); /* the default */
    assert_string_equal(cat->msgs[0].app_name, "rtr");
    assert_null(cat->msgs[0].msgid);
    assert_int_equal(cat->msgs[1].facility, 4);
    assert_int_equal(cat->msgs[1].severity, 4);
    assert_string_equal(cat->msgs[1].app_name, "sshd");
    assert_string_equal(cat->msgs[1].msgid, "AUTH");
    assert_int_equal(cat->msgs[2].severity, 0);
    assert_int_equal(cat->total_weight, 4);
    assert_ptr_equal(syslog_catalog_find(cat, "c"), &cat->msgs[2]);
    assert_null(syslog_catalog_find(cat, "d"));
    syslog_catalog_free(cat);
}

static void
test_draw_follows_the_weights(void **state)
{
    struct syslog_catalog *cat =
        parse_ok("{\"app-name\":\"x\",\"messages\":[{\"id\":\"a\",\"facility\":1,\"severity\":1,\"weight\":1,"
                 "\"text\":\"\"},"
                 "{\"id\":\"never\",\"facility\":1,\"severity\":1,\"weight\":0,\"text\":\"\"},"
                 "{\"id\":\"b\",\"facility\":1,\"severity\":1,\"weight\":3,\"text\":\"\"}]}");
    uint32_t hits[3] = {0};

    (void)state;
    /* Draws 0..3 modulo the total weight 4: a once, b three times, the weight-0 line never. */
    assert_string_equal(syslog_catalog_pick(cat, 0)->id, "a");
    assert_string_equal(syslog_catalog_pick(cat, 1)->id, "b");
    assert_string_equal(syslog_catalog_pick(cat, 3)->id, "b");
    assert_string_equal(syslog_catalog_pick(cat, 4)->id, "a");
    for (uint64_t d = 0; d < 4000; d++) {
        hits[syslog_catalog_pick(cat, d * 0x9e3779b97f4a7c15ull) - cat->msgs]++;
    }
    assert_int_equal(hits[1], 0);
    assert_in_range(hits[2], 2800, 3200);
    syslog_catalog_free(cat);
}

static void
test_placeholders_are_filled(void **state)
{
    struct syslog_catalog *cat =
        parse_ok("{\"app-name\":\"x\",\"messages\":[{\"id\":\"a\",\"facility\":1,\"severity\":1,"
                 "\"text\":\"{host} {addr} {if}/{ifindex} {{literal}} {peer} {num} {user}\"}]}");
    struct syslog_vars vars = {
        .host = "r1", .addr = "192.0.2.9", .ifname = "Gi0/0/0/1", .ifindex = 3, .draw = 0};
    char buf[256];
    size_t n;

    (void)state;
    n = syslog_catalog_expand(&cat->msgs[0], &vars, buf, sizeof buf);
    buf[n] = '\0';
    assert_string_equal(buf, "r1 192.0.2.9 Gi0/0/0/1/3 {literal} 192.0.2.1 1 admin");
    /* No interface: "-"; and a short buffer cuts, never overflows. */
    vars.ifname = NULL;
    memset(buf, 0x55, sizeof buf);
    n = syslog_catalog_expand(&cat->msgs[0], &vars, buf, 12);
    assert_int_equal(n, 12);
    assert_memory_equal(buf, "r1 192.0.2.9", 12);
    assert_int_equal((unsigned char)buf[12], 0x55);
    /* issue 29: an event that knows who and from where names them; the rest is drawn as before. */
    vars.user = "ops";
    vars.peer = "2001:db8::7";
    n = syslog_catalog_expand(&cat->msgs[0], &vars, buf, sizeof buf);
    buf[n] = '\0';
    assert_string_equal(buf, "r1 192.0.2.9 -/3 {literal} 2001:db8::7 1 ops");
    syslog_catalog_free(cat);
}

static void
test_refusals_name_what_is_wrong(void **state)
{
    char *big;
    size_t len = 0;

    (void)state;
    refused("{\"messages\":[", "line 1");
    refused("[]", "non-empty \"messages\"");
    refused("{\"messages\":[]}", "non-empty \"messages\"");
    refused("{\"messages\":[{\"id\":\"a\",\"facility\":1,\"severity\":1,\"text\":\"x\"}]}",
            "\"app-name\" is missing");
    refused("{\"app-name\":\"x\",\"messages\":[{\"facility\":1,\"severity\":1,\"text\":\"x\"}]}",
            "\"id\" is missing");
    refused(
        "{\"app-name\":\"x\",\"messages\":[{\"id\":\"a\",\"facility\":24,\"severity\":1,\"text\":\"x\"}]}",
        "message 0: \"facility\"");
    refused("{\"app-name\":\"x\",\"messages\":[{\"id\":\"a\",\"facility\":\"local8\",\"severity\":1,\"text\":"
            "\"x\"}]}",
            "message 0: \"facility\"");
    refused("{\"app-name\":\"x\",\"messages\":[{\"id\":\"a\",\"facility\":1,\"severity\":\"loud\",\"text\":"
            "\"x\"}]}",
            "message 0: \"severity\"");
    refused("{\"app-name\":\"x\",\"messages\":[{\"id\":\"a\",\"facility\":1,\"severity\":1,\"text\":\"{"
            "ifname}\"}]}",
            "unknown placeholder");
    refused(
        "{\"app-name\":\"x\",\"messages\":[{\"id\":\"a\",\"facility\":1,\"severity\":1,\"text\":\"a}b\"}]}",
        "lone '}'");
    refused("{\"app-name\":\"x\",\"messages\":[{\"id\":\"a\",\"facility\":1,\"severity\":1,\"text\":\"x\","
            "\"sev\":1}]}",
            "unknown member \"sev\"");
    refused("{\"app-name\":\"x\",\"messages\":[{\"id\":\"a\",\"facility\":1,\"severity\":1,\"text\":\"x\"},"
            "{\"id\":\"a\",\"facility\":1,\"severity\":1,\"text\":\"y\"}]}",
            "message 1: id \"a\"");
    refused("{\"app-name\":\"x\",\"messages\":[{\"id\":\"a\",\"facility\":1,\"severity\":1,\"weight\":0,"
            "\"text\":\"x\"}]}",
            "weight 0");
    refused(
        "{\"app-name\":\"x\",\"messages\":[{\"id\":\"a\",\"facility\":1,\"severity\":1,\"weight\":1000001,"
        "\"text\":\"x\"}]}",
        "\"weight\"");
    refused("{\"app-name\":\"two "
            "words\",\"messages\":[{\"id\":\"a\",\"facility\":1,\"severity\":1,\"text\":\"x\"}]}",
            "\"app-name\"");
    /* Limits: more than SYSLOG_CATALOG_MAX_MESSAGES messages; a text over SYSLOG_CATALOG_MAX_TEXT_BYTES. */
    big = malloc(SYSLOG_CATALOG_MAX_BYTES);
    assert_non_null(big);
    len += (size_t)sprintf(big, "{\"app-name\":\"x\",\"messages\":[");
    for (uint32_t i = 0; i <= SYSLOG_CATALOG_MAX_MESSAGES; i++) {
        len += (size_t)sprintf(big + len, "%s{\"id\":\"m%u\",\"facility\":1,\"severity\":1,\"text\":\"\"}",
                               i ? "," : "", i);
    }
    sprintf(big + len, "]}");
    refused(big, "more than 4096 messages");
    len = (size_t)sprintf(
        big, "{\"app-name\":\"x\",\"messages\":[{\"id\":\"a\",\"facility\":1,\"severity\":1,\"text\":\"");
    memset(big + len, 'a', SYSLOG_CATALOG_MAX_TEXT_BYTES + 1);
    sprintf(big + len + SYSLOG_CATALOG_MAX_TEXT_BYTES + 1, "\"}]}");
    refused(big, "at most 1024 bytes");
    free(big);
}

static void
test_builtin_catalogs_read_like_the_device(void **state)
{
    struct syslog_catalog *cat = NULL;
    struct syslog_vars vars = {
        .host = "crs-x-0", .addr = "127.0.0.1", .ifname = "HundredGigE0/0/0/1", .ifindex = 2};
    char err[256], buf[512];
    size_t n;

    (void)state;
    assert_int_equal(syslog_catalog_load(FLEETSIM_SCHEMA_DIR "/syslog/crs-x.json", &cat, err, sizeof err), 0);
    n = syslog_catalog_expand(syslog_catalog_find(cat, "link-down"), &vars, buf, sizeof buf - 1);
    buf[n] = '\0';
    assert_string_equal(buf,
                        "%PKT_INFRA-LINK-3-UPDOWN : Interface HundredGigE0/0/0/1, changed state to Down");
    assert_non_null(syslog_catalog_find(cat, "link-up"));
    /* Event lines are never drawn as background. */
    assert_int_equal(syslog_catalog_find(cat, "link-down")->weight, 0);
    syslog_catalog_free(cat);
    assert_int_equal(syslog_catalog_load(FLEETSIM_SCHEMA_DIR "/syslog/generic.json", &cat, err, sizeof err),
                     0);
    assert_non_null(syslog_catalog_find(cat, "link-down"));
    assert_non_null(syslog_catalog_find(cat, "link-up"));
    syslog_catalog_free(cat);
    /* issue 29: every built-in catalog has a line for each event, never drawn as background. */
    for (int k = 0; k < 2; k++) {
        static const char *const events[] = {"link-down", "link-up", "config-commit", "login-failure",
                                             "boot.1"};
        assert_int_equal(syslog_catalog_load(k ? FLEETSIM_SCHEMA_DIR "/syslog/generic.json"
                                               : FLEETSIM_SCHEMA_DIR "/syslog/crs-x.json",
                                             &cat, err, sizeof err),
                         0);
        for (size_t i = 0; i < sizeof events / sizeof events[0]; i++) {
            assert_non_null(syslog_catalog_find(cat, events[i]));
        }
        assert_int_equal(syslog_catalog_find(cat, "boot.1")->weight, 0);
        syslog_catalog_free(cat);
    }
    /* A missing file is named. */
    assert_int_not_equal(syslog_catalog_load("/nonexistent/c.json", &cat, err, sizeof err), 0);
    assert_non_null(strstr(err, "/nonexistent/c.json"));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fields_by_name_and_number),
        cmocka_unit_test(test_draw_follows_the_weights),
        cmocka_unit_test(test_placeholders_are_filled),
        cmocka_unit_test(test_refusals_name_what_is_wrong),
        cmocka_unit_test(test_builtin_catalogs_read_like_the_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
