/*
 * Unit tests of identity rules (testtool/model/identity.h): rules.json is
 * read with errors that name the file and the rule; text and printed XML
 * are rewritten with several rules and placeholders (leftmost, longest,
 * never rescanned; XML markup untouched, escaped forms matched); {MAC}
 * and {SERIAL} are deterministic per seed and index and distinct across a
 * thousand devices; a tree's leaves (keys included) are rewritten; a
 * device's own datastore copy gets its identity once, not twice; sysName
 * follows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devfix.h"
#include "identity.h"
#include "test_util.h"

#define RULES_JSON                                                                                           \
    "{\"rules\": [\n"                                                                                        \
    "  {\"name\": \"hostname\", \"match\": \"edge-rtr-01\", \"replace\": \"edge-rtr-{INDEX}\"},\n"           \
    "  {\"name\": \"fqdn\", \"match\": \"edge-rtr-01.example.net\", \"replace\": "                           \
    "\"r{INDEX}.example.net\"},\n"                                                                           \
    "  {\"name\": \"mgmt-address\", \"match\": \"192.0.2.17\", \"replace\": \"{ADDR}\"},\n"                  \
    "  {\"name\": \"base-mac\", \"match\": \"00:1b:21:3a:4f:10\", \"replace\": \"{MAC}\"},\n"                \
    "  {\"name\": \"serial\", \"match\": \"FOC1234X0AB\", \"replace\": \"{SERIAL}\"},\n"                     \
    "  {\"match\": \"A&B\", \"replace\": \"<{INDEX}>\"}\n"                                                   \
    "]}\n"

static struct identity_rules *
rules_of(const char *json)
{
    struct identity_rules *r = NULL;
    char err[256] = "";

    if (identity_rules_parse(json, strlen(json), "rules.json", &r, err, sizeof err)) {
        fail_msg("identity_rules_parse: %s", err);
    }
    return r;
}

/* The error text of parsing @p json, which must fail with FLEET_ERR_INVAL. */
static void
expect_error(const char *json, const char *want)
{
    struct identity_rules *r = NULL;
    char err[256] = "";

    assert_int_equal(identity_rules_parse(json, strlen(json), "dir/rules.json", &r, err, sizeof err),
                     FLEET_ERR_INVAL);
    assert_null(r);
    if (!strstr(err, want)) {
        fail_msg("error \"%s\" does not say \"%s\"", err, want);
    }
    assert_non_null(strstr(err, "dir/rules.json: "));
}

static char *
rewrite(const struct identity_rules *r, const struct identity_values *v, const char *in, int xml,
        size_t *count)
{
    struct sbuf out = {0};

    *count = xml ? identity_apply_xml(r, v, in, strlen(in), &out)
                 : identity_apply_text(r, v, in, strlen(in), &out);
    assert_false(out.failed);
    return out.buf ? sbuf_take(&out, NULL) : strdup("");
}

static void
test_parse(void **state)
{
    struct identity_rules *r = rules_of(RULES_JSON);

    (void)state;
    assert_int_equal(r->count, 6);
    assert_string_equal(r->rules[0].name, "hostname");
    assert_string_equal(r->rules[0].match, "edge-rtr-01");
    assert_string_equal(r->rules[0].replace, "edge-rtr-{INDEX}");
    assert_string_equal(r->rules[5].name, "");
    assert_string_equal(r->rules[5].match_xml, "A&amp;B");
    identity_rules_free(r);
    r = rules_of("{\"rules\": []}");
    assert_int_equal(r->count, 0);
    identity_rules_free(r);
}

static void
test_parse_errors(void **state)
{
    struct identity_rules *r = NULL;
    char err[256] = "";

    (void)state;
    expect_error("{\"rules\": [\n  {\"match\": \"a\",\n   \"replace\" \"b\"}]}", "line 3 column 14");
    expect_error("[]", "must be an object with a \"rules\" array");
    expect_error("{\"rules\": {}}", "must be an object with a \"rules\" array");
    expect_error("{\"rules\": [{\"match\": \"a\", \"replace\": \"b\"}, 7]}", "rule 2: must be an object");
    expect_error("{\"rules\": [{\"name\": \"serial\", \"match\": \"\", \"replace\": \"b\"}]}",
                 "rule 1 (serial): \"match\" must be a non-empty string");
    expect_error("{\"rules\": [{\"match\": \"a\"}]}", "rule 1: \"replace\" is missing");
    expect_error("{\"rules\": [{\"match\": \"a\", \"replce\": \"b\"}]}", "unknown member \"replce\"");
    expect_error("{\"rules\": [{\"match\": \"a\", \"replace\": 3}]}", "\"replace\" must be a string");
    expect_error("{\"rules\": [{\"name\": \"h\", \"match\": \"a\", \"replace\": \"x{IDX}\"}]}",
                 "rule 1 (h): unknown placeholder {IDX}");
    expect_error(
        "{\"rules\": [{\"match\": \"a\", \"replace\": \"b\"}, {\"match\": \"a\", \"replace\": \"c\"}]}",
        "rule 2: \"match\" \"a\" is rule 1's already");
    assert_int_equal(identity_rules_load("/nonexistent/rules.json", &r, err, sizeof err), FLEET_ERR_SYS);
    assert_non_null(strstr(err, "/nonexistent/rules.json: cannot open"));
    assert_null(r);
}

static void
test_text(void **state)
{
    struct identity_rules *r = rules_of(RULES_JSON);
    struct identity_values v;
    size_t n;
    char *s;

    (void)state;
    identity_values_of(42, 7, 0x0a000107, &v);
    s = rewrite(r, &v, "host edge-rtr-01 at 192.0.2.17 mac 00:1b:21:3a:4f:10 sn FOC1234X0AB", 0, &n);
    assert_int_equal(n, 4);
    {
        char want[200];
        snprintf(want, sizeof want, "host edge-rtr-7 at 10.0.1.7 mac %s sn %s", v.mac, v.serial);
        assert_string_equal(s, want);
    }
    free(s);
    /* Overlapping rules: the longest match where several begin; adjacent matches both replaced. */
    s = rewrite(r, &v, "edge-rtr-01.example.net edge-rtr-01edge-rtr-01.", 0, &n);
    assert_int_equal(n, 3);
    assert_string_equal(s, "r7.example.net edge-rtr-7edge-rtr-7.");
    free(s);
    /* Placeholders written in the data; an unknown one and a half match stay. */
    s = rewrite(r, &v, "{INDEX}/{ADDR}/{FOO}/{MAC/edge-rtr-0", 0, &n);
    assert_int_equal(n, 2);
    assert_string_equal(s, "7/10.0.1.7/{FOO}/{MAC/edge-rtr-0");
    free(s);
    /* Replaced text is not scanned again: a replacement holding a match stays as written. */
    identity_rules_free(r);
    r = rules_of("{\"rules\": [{\"match\": \"rtr\", \"replace\": \"rtr-{INDEX}-rtr\"}]}");
    s = rewrite(r, &v, "rtr", 0, &n);
    assert_string_equal(s, "rtr-7-rtr");
    free(s);
    /* Nothing to replace: counted 0, the text is copied as it is; NULL rules fill placeholders only. */
    s = rewrite(r, &v, "nothing here", 0, &n);
    assert_int_equal(n, 0);
    assert_string_equal(s, "nothing here");
    free(s);
    s = rewrite(NULL, &v, "rtr {SERIAL}", 0, &n);
    assert_int_equal(n, 1);
    assert_int_equal(strlen(s), 4 + 12);
    free(s);
    identity_rules_free(r);
}

/* {MAC+N}: a device's further MACs (its interfaces'), distinct from each other and from every other
 * device's, across 200 devices x 8; N beyond the limit or 0 is no placeholder (refused in a rule). */
static void
test_mac_offsets(void **state)
{
    enum { DEVICES = 200, PER = 8 };
    char(*seen)[18] = calloc(DEVICES * PER, sizeof *seen);
    struct identity_values v;
    size_t n;
    char *s;

    (void)state;
    assert_non_null(seen);
    for (uint32_t d = 0; d < DEVICES; d++) {
        identity_values_of(42, d, 0x7f000001u + d, &v);
        s = rewrite(NULL, &v, "{MAC} {MAC+1} {MAC+2} {MAC+3} {MAC+4} {MAC+5} {MAC+6} {MAC+255}", 0, &n);
        assert_int_equal(n, PER);
        for (int k = 0; k < PER; k++) {
            memcpy(seen[d * PER + k], s + k * 18, 17);
            seen[d * PER + k][17] = '\0';
            assert_int_equal(seen[d * PER + k][0], '0');
            assert_int_equal(seen[d * PER + k][1], '2');
        }
        assert_string_equal(seen[d * PER], v.mac); /* {MAC} is the device's base */
        free(s);
    }
    for (int i = 0; i < DEVICES * PER; i++) {
        for (int j = i + 1; j < DEVICES * PER; j++) {
            if (!strcmp(seen[i], seen[j])) {
                fail_msg("MAC %s appears twice (%d and %d)", seen[i], i, j);
            }
        }
    }
    free(seen);
    s = rewrite(NULL, &v, "{MAC+0} {MAC+256}", 0, &n);
    assert_int_equal(n, 0);
    assert_string_equal(s, "{MAC+0} {MAC+256}");
    free(s);
    expect_error("{\"rules\": [{\"match\": \"a\", \"replace\": \"{MAC+256}\"}]}",
                 "unknown placeholder {MAC+256}");
}

static void
test_xml(void **state)
{
    struct identity_rules *r =
        rules_of("{\"rules\": [{\"match\": \"edge-rtr-01\", \"replace\": \"e{INDEX}\"},"
                 " {\"match\": \"A&B\", \"replace\": \"<{INDEX}&>\"},"
                 " {\"match\": \"hostname\", \"replace\": \"HOST\"}]}");
    struct identity_values v;
    size_t n;
    char *s;

    (void)state;
    identity_values_of(1, 12, 0x7f000001, &v);
    /* Names, attributes and namespaces are markup, not values; escaped text matches and is written escaped.
     */
    s = rewrite(r, &v,
                "<system xmlns=\"urn:x:hostname\" a='edge-rtr-01>'><hostname>edge-rtr-01</hostname>"
                "<d>A&amp;B hostname</d><e>A&B</e></system>",
                1, &n);
    assert_int_equal(n, 3);
    assert_string_equal(s, "<system xmlns=\"urn:x:hostname\" a='edge-rtr-01>'><hostname>e12</hostname>"
                           "<d>&lt;12&amp;&gt; HOST</d><e>A&B</e></system>");
    free(s);
    identity_rules_free(r);
}

static void
test_values(void **state)
{
    struct identity_values a, b;
    char(*macs)[18] = calloc(1000, sizeof *macs);
    char(*serials)[13] = calloc(1000, sizeof *serials);

    (void)state;
    assert_non_null(macs);
    assert_non_null(serials);
    identity_values_of(42, 5, 0xc0000211, &a);
    identity_values_of(42, 5, 0xc0000211, &b);
    assert_string_equal(a.mac, b.mac);
    assert_string_equal(a.serial, b.serial);
    assert_string_equal(a.index, "5");
    assert_string_equal(a.addr, "192.0.2.17");
    assert_int_equal(strlen(a.mac), 17);
    assert_memory_equal(a.mac, "02:", 3);
    for (int i = 3; i < 17; i++) {
        assert_true(i % 3 == 2 ? a.mac[i] == ':' : strchr("0123456789abcdef", a.mac[i]) != NULL);
    }
    assert_int_equal(strlen(a.serial), 12);
    assert_memory_equal(a.serial, "FS", 2);
    for (int i = 2; i < 12; i++) {
        assert_non_null(strchr("0123456789ABCDEF", a.serial[i]));
    }
    /* Another seed, other values. */
    identity_values_of(43, 5, 0xc0000211, &b);
    assert_string_not_equal(a.mac, b.mac);
    assert_string_not_equal(a.serial, b.serial);
    for (uint32_t i = 0; i < 1000; i++) {
        identity_values_of(42, i, 0x0a000000 + i, &a);
        memcpy(macs[i], a.mac, sizeof a.mac);
        memcpy(serials[i], a.serial, sizeof a.serial);
    }
    for (uint32_t i = 0; i < 1000; i++) {
        for (uint32_t j = i + 1; j < 1000; j++) {
            if (!strcmp(macs[i], macs[j]) || !strcmp(serials[i], serials[j])) {
                fail_msg("devices %u and %u share %s / %s", i, j, macs[i], serials[i]);
            }
        }
    }
    free(macs);
    free(serials);
}

#define SYS_NS "urn:ietf:params:xml:ns:yang:ietf-system"
#define IF_NS  "urn:ietf:params:xml:ns:yang:ietf-interfaces"
#define TEMPLATE_XML                                                                                         \
    "<system xmlns=\"" SYS_NS "\"><hostname>rtr</hostname><location>rack {INDEX}</location></system>"        \
    "<interfaces xmlns=\"" IF_NS "\"><interface><name>lo-rtr</name>"                                         \
    "<type xmlns:ianaift=\"urn:ietf:params:xml:ns:yang:iana-if-type\">ianaift:softwareLoopback</type>"       \
    "<description>loopback of rtr</description></interface></interfaces>"

/* A device whose type has rules whose replacement holds the match: applying twice would show. */
static struct devfix *
fixture(void)
{
    struct devfix *f = devfix_new("minimal");
    struct lyd_node *t = NULL;

    if (lyd_parse_data_mem(f->type.schemas.ctx, TEMPLATE_XML, LYD_XML, LYD_PARSE_STRICT | LYD_PARSE_NO_STATE,
                           LYD_VALIDATE_NO_STATE, &t)) {
        fail_msg("template: %s", ly_errmsg(f->type.schemas.ctx));
    }
    lyd_free_all(f->type.template_tree);
    f->type.template_tree = t;
    devview_type_close(&f->type); /* the untouched device's view is read from the template */
    if (devview_type_init(&f->type)) {
        fail_msg("devview_type_init");
    }
    f->type.identity = rules_of("{\"rules\": [{\"match\": \"rtr\", \"replace\": \"rtr-{INDEX}\"}]}");
    f->dev.addr = 0x0a000003;
    return f;
}

static void
test_tree(void **state)
{
    struct devfix *f = fixture();
    struct identity_values v;
    struct lyd_node *copy = NULL;
    uint32_t refused = 9;
    char *xml;

    (void)state;
    identity_values(&f->dev, &v);
    assert_string_equal(v.index, "3");
    assert_int_equal(lyd_dup_siblings(f->type.template_tree, NULL, LYD_DUP_RECURSIVE, &copy), LY_SUCCESS);
    assert_int_equal(identity_apply_tree(f->type.identity, &v, copy, &refused), 4);
    assert_int_equal(refused, 0);
    xml = tu_print(copy);
    assert_non_null(strstr(xml, "<hostname>rtr-3</hostname><location>rack 3</location>"));
    assert_non_null(strstr(xml, "<name>lo-rtr-3</name>"));
    assert_non_null(strstr(xml, "<description>loopback of rtr-3</description>"));
    free(xml);
    /* The key changed: the list entry is found by its new name. */
    {
        struct lyd_node *found = NULL;
        assert_int_equal(
            lyd_find_path(copy, "/ietf-interfaces:interfaces/interface[name='lo-rtr-3']", 0, &found),
            LY_SUCCESS);
    }
    lyd_free_all(copy);
    devfix_free(f);
}

static void
test_ds_own(void **state)
{
    struct devfix *f = fixture();
    struct lyd_node **tree = NULL;
    char host[64];
    char *xml;

    (void)state;
    /* Untouched: sysName is the template's host name with the device's identity. */
    devview_running_changed(&f->dev, DEVFIX_NOW_MS);
    devview_hostname(&f->dev, host, sizeof host);
    assert_string_equal(host, "rtr-3");
    assert_int_equal(identity_ds_own(&f->dev, DS_RUNNING, &tree), FLEET_OK);
    xml = tu_print(*tree);
    assert_non_null(strstr(xml, "<hostname>rtr-3</hostname>"));
    free(xml);
    /* The candidate copies running (already the device's): not rewritten a second time. */
    assert_int_equal(identity_ds_own(&f->dev, DS_CANDIDATE, &tree), FLEET_OK);
    xml = tu_print(*tree);
    assert_non_null(strstr(xml, "<hostname>rtr-3</hostname>"));
    assert_null(strstr(xml, "rtr-3-3"));
    free(xml);
    /* Owning again is no new copy and no new rewrite. */
    assert_int_equal(identity_ds_own(&f->dev, DS_RUNNING, &tree), FLEET_OK);
    xml = tu_print(*tree);
    assert_null(strstr(xml, "rtr-3-3"));
    free(xml);
    devview_running_changed(&f->dev, DEVFIX_NOW_MS);
    devview_hostname(&f->dev, host, sizeof host);
    assert_string_equal(host, "rtr-3");
    /* Startup still reads the template; its copy (copy-config) gets the identity too. */
    {
        struct lyd_node *copy = NULL;
        const struct lyd_node *src = ds_read(&f->dev.ds, f->type.template_tree, DS_STARTUP);
        assert_int_equal(lyd_dup_siblings(src, NULL, LYD_DUP_RECURSIVE, &copy), LY_SUCCESS);
        identity_fix_copy(&f->dev, src, copy);
        xml = tu_print(copy);
        assert_non_null(strstr(xml, "<hostname>rtr-3</hostname>"));
        free(xml);
        lyd_free_all(copy);
    }
    devfix_free(f);
}

static void
test_rewrite_value(void **state)
{
    struct devfix *f = fixture();
    char buf[8];

    (void)state;
    assert_int_equal(identity_rewrite_value(&f->dev, "nothing", 7, buf, sizeof buf), (size_t)-1);
    assert_int_equal(identity_rewrite_value(&f->dev, "a rtr", 5, buf, sizeof buf), 7);
    assert_memory_equal(buf, "a rtr-3", 7);
    /* Cut to the buffer. */
    assert_int_equal(identity_rewrite_value(&f->dev, "rtr rtr", 7, buf, 8), 8);
    assert_memory_equal(buf, "rtr-3 rt", 8);
    devfix_free(f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),       cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_text),        cmocka_unit_test(test_xml),
        cmocka_unit_test(test_values),      cmocka_unit_test(test_tree),
        cmocka_unit_test(test_ds_own),      cmocka_unit_test(test_rewrite_value),
        cmocka_unit_test(test_mac_offsets),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
