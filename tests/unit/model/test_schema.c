/*
 * The YANG-Push modules in every device's schema set (issue 31): the
 * default set implements ietf-subscribed-notifications with exactly the
 * features fleetsim serves and ietf-yang-push with on-change, their imports
 * only as imported modules (but ietf-network-instance, whose leaf in every
 * interface is deviated away), ietf-datastores implemented (an
 * establish-subscription naming a datastore parses), all advertised and
 * served as the bytes of schemas/ietf/. A vendor folder with the pre-NMDA
 * ietf-interfaces, or with its own copy of one of these modules, still loads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "schema.h"
#include "test_util.h"

#define SN_NS "urn:ietf:params:xml:ns:yang:ietf-subscribed-notifications"
#define YP_NS "urn:ietf:params:xml:ns:yang:ietf-yang-push"

static char folder[64];

static void
make_folder(const char *const *files)
{
    char cmd[512];

    snprintf(folder, sizeof folder, "/tmp/fleetsim-schema-XXXXXX");
    assert_non_null(mkdtemp(folder));
    for (; *files; files++) {
        snprintf(cmd, sizeof cmd, "cp '%s' '%s'", *files, folder);
        assert_int_equal(system(cmd), 0);
    }
}

static void
remove_folder(void)
{
    char cmd[128];

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", folder);
    assert_int_equal(system(cmd), 0);
}

static void
load(struct schema_set *set, const char *dir)
{
    char err[512] = "";

    memset(set, 0, sizeof *set);
    if (schema_set_load(set, dir, err, sizeof err)) {
        fail_msg("schema_set_load: %s", err);
    }
}

static char *
slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *text;
    long n;

    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    rewind(f);
    text = malloc((size_t)n + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
    text[n] = '\0';
    fclose(f);
    return text;
}

/* @p text with &, <, >, " and ' escaped, as get-schema's reply carries it. */
static char *
xml_escaped(const char *text)
{
    char *out = malloc(strlen(text) * 5 + 1);
    char *o = out;

    assert_non_null(out);
    for (const char *p = text; *p; p++) {
        const char *esc = *p == '&'    ? "&amp;"
                          : *p == '<'  ? "&lt;"
                          : *p == '>'  ? "&gt;"
                          : *p == '"'  ? "&quot;"
                          : *p == '\'' ? "&apos;"
                                       : NULL;
        if (esc) {
            o = stpcpy(o, esc);
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
    return out;
}

static int
has_cap(const struct schema_set *set, const char *cap)
{
    for (size_t i = 0; i < set->cap_count; i++) {
        if (!strcmp(set->caps[i], cap)) {
            return 1;
        }
    }
    return 0;
}

static void
test_default_set_implements_yang_push(void **state)
{
    static const char *const sn_on[] = {"encode-xml", "replay", "subtree", "xpath"};
    static const char *const sn_off[] = {"configured", "dscp",        "encode-json", "interface-designation",
                                         "qos",        "supports-vrf"};
    static const char *const imported[] = {"ietf-yang-patch", "ietf-restconf"};
    struct schema_set set;
    const struct schema_module *sn, *yp, *ds, *m;
    const struct lysc_node *list;
    int children = 0;

    (void)state;
    load(&set, NULL);
    sn = schema_find(&set, "ietf-subscribed-notifications", "2019-09-09");
    yp = schema_find(&set, "ietf-yang-push", "2019-09-09");
    ds = schema_find(&set, "ietf-datastores", "2018-02-14");
    assert_non_null(sn);
    assert_non_null(yp);
    assert_non_null(ds);
    assert_true(sn->implemented);
    assert_true(yp->implemented);
    assert_true(ds->implemented);
    for (size_t i = 0; i < sizeof sn_on / sizeof sn_on[0]; i++) {
        assert_int_equal(lys_feature_value(sn->mod, sn_on[i]), LY_SUCCESS);
    }
    for (size_t i = 0; i < sizeof sn_off / sizeof sn_off[0]; i++) {
        assert_int_equal(lys_feature_value(sn->mod, sn_off[i]), LY_ENOT);
    }
    assert_int_equal(lys_feature_value(yp->mod, "on-change"), LY_SUCCESS);
    for (size_t i = 0; i < sizeof imported / sizeof imported[0]; i++) {
        m = schema_find(&set, imported[i], NULL);
        assert_non_null(m);
        if (m->implemented) {
            fail_msg("%s is implemented", imported[i]);
        }
    }
    /* libyang implements ietf-network-instance for sn's leafref into it; its leaf in every interface is
     * deviated away, so that an edit of the interfaces stays validated locally (no leafref in them). */
    m = schema_find(&set, "ietf-network-instance", NULL);
    assert_non_null(m);
    assert_true(m->implemented);
    list = lys_find_path(set.ctx, NULL, "/ietf-interfaces:interfaces/interface", 0);
    assert_non_null(list);
    for (const struct lysc_node *c = NULL; (c = lys_getnext(c, list, NULL, 0));) {
        assert_string_not_equal(c->name, "bind-ni-name");
        children++;
    }
    assert_true(children > 3);
    assert_false(schema_module_needs_validation(&set, schema_find(&set, "ietf-interfaces", NULL)->mod));
    assert_true(has_cap(&set, SN_NS "?module=ietf-subscribed-notifications&revision=2019-09-09"
                                    "&features=encode-xml,replay,subtree,xpath"));
    assert_true(has_cap(&set, YP_NS "?module=ietf-yang-push&revision=2019-09-09&features=on-change"));
    assert_true(has_cap(&set, "urn:ietf:params:xml:ns:yang:ietf-yang-patch?module=ietf-yang-patch"
                              "&revision=2017-02-22"));
    schema_set_free(&set);
}

static void
test_get_schema_text_is_the_file(void **state)
{
    static const char *const files[][2] = {
        {"ietf-subscribed-notifications", "2019-09-09"},
        {"ietf-yang-push", "2019-09-09"},
        {"ietf-yang-patch", "2017-02-22"},
        {"ietf-restconf", "2017-01-26"},
        {"ietf-network-instance", "2019-01-21"},
    };
    struct schema_set set;

    (void)state;
    load(&set, NULL);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[512];
        char *text, *want;
        const char *have;
        size_t len;
        const struct schema_module *m = schema_find(&set, files[i][0], NULL);
        assert_non_null(m);
        assert_string_equal(m->revision, files[i][1]);
        snprintf(path, sizeof path, "%s/ietf/%s@%s.yang", FLEETSIM_SCHEMA_DIR, files[i][0], files[i][1]);
        text = slurp(path);
        want = xml_escaped(text);
        have = schema_module_yang_xml(m, &len);
        assert_int_equal(len, strlen(want));
        assert_string_equal(have, want);
        free(want);
        free(text);
    }
    schema_set_free(&set);
}

/* The datastore leaf is an identityref to ietf-datastores: with that module only imported, libyang refuses
 * "ds:operational" and no datastore subscription could be parsed. */
static void
test_establish_subscription_parses(void **state)
{
    static const char *const rpcs[] = {
        "<establish-subscription xmlns=\"" SN_NS "\" xmlns:yp=\"" YP_NS "\""
        " xmlns:ds=\"urn:ietf:params:xml:ns:yang:ietf-datastores\">"
        "<yp:datastore>ds:operational</yp:datastore>"
        "<yp:datastore-xpath-filter xmlns:if=\"urn:ietf:params:xml:ns:yang:ietf-interfaces\">"
        "/if:interfaces</yp:datastore-xpath-filter>"
        "<yp:periodic><yp:period>500</yp:period></yp:periodic></establish-subscription>",
        "<establish-subscription xmlns=\"" SN_NS "\" xmlns:yp=\"" YP_NS "\""
        " xmlns:ds=\"urn:ietf:params:xml:ns:yang:ietf-datastores\">"
        "<yp:datastore>ds:running</yp:datastore>"
        "<yp:on-change><yp:dampening-period>0</yp:dampening-period>"
        "<yp:excluded-change>replace</yp:excluded-change></yp:on-change></establish-subscription>",
        "<establish-subscription xmlns=\"" SN_NS "\"><stream>NETCONF</stream>"
        "<replay-start-time>2026-01-01T00:00:00Z</replay-start-time></establish-subscription>",
        "<kill-subscription xmlns=\"" SN_NS "\"><id>7</id></kill-subscription>",
        "<resync-subscription xmlns=\"" YP_NS "\"><id>7</id></resync-subscription>",
    };
    struct schema_set set;

    (void)state;
    load(&set, NULL);
    for (size_t i = 0; i < sizeof rpcs / sizeof rpcs[0]; i++) {
        struct ly_in *in = NULL;
        struct lyd_node *op = NULL;
        assert_int_equal(ly_in_new_memory(rpcs[i], &in), LY_SUCCESS);
        if (lyd_parse_op(set.ctx, NULL, in, LYD_XML, LYD_TYPE_RPC_YANG, NULL, &op)) {
            fail_msg("rpc %zu does not parse: %s", i, ly_errmsg(set.ctx));
        }
        lyd_free_all(op);
        ly_in_free(in, 0);
    }
    schema_set_free(&set);
}

/* ietf-subscribed-notifications imports ietf-interfaces without a revision: a folder's 2014-05-08 serves it.
 */
static void
test_folder_with_pre_nmda_interfaces(void **state)
{
    static const char *const files[] = {TU_YUMA_IETF_DIR "/ietf-interfaces@2014-05-08.yang",
                                        TU_YUMA_IETF_DIR "/iana-if-type@2014-05-08.yang", NULL};
    struct schema_set set;
    const struct schema_module *m;

    (void)state;
    make_folder(files);
    load(&set, folder);
    m = schema_find(&set, "ietf-interfaces", NULL);
    assert_non_null(m);
    assert_string_equal(m->revision, "2014-05-08");
    assert_true(m->implemented);
    m = schema_find(&set, "ietf-yang-push", NULL);
    assert_non_null(m);
    assert_true(m->implemented);
    assert_int_equal(lys_feature_value(m->mod, "on-change"), LY_SUCCESS);
    schema_set_free(&set);
    remove_folder();
}

/* A folder shipping ietf-subscribed-notifications itself: the folder's file is the one implemented and
 * served, with every feature (as any module of a folder), and ietf-yang-push loads against it. */
static void
test_folder_with_its_own_subscribed_notifications(void **state)
{
    static const char *const files[] = {
        FLEETSIM_SCHEMA_DIR "/ietf/ietf-subscribed-notifications@2019-09-09.yang", NULL};
    struct schema_set set;
    const struct schema_module *m;
    int count = 0;

    (void)state;
    make_folder(files);
    load(&set, folder);
    for (size_t i = 0; i < set.module_count; i++) {
        count += !strcmp(set.modules[i].name, "ietf-subscribed-notifications");
    }
    assert_int_equal(count, 1);
    m = schema_find(&set, "ietf-subscribed-notifications", NULL);
    assert_non_null(m);
    assert_true(m->implemented);
    assert_int_equal(lys_feature_value(m->mod, "configured"), LY_SUCCESS);
    m = schema_find(&set, "ietf-yang-push", NULL);
    assert_non_null(m);
    assert_true(m->implemented);
    schema_set_free(&set);
    remove_folder();
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_set_implements_yang_push),
        cmocka_unit_test(test_get_schema_text_is_the_file),
        cmocka_unit_test(test_establish_subscription_parses),
        cmocka_unit_test(test_folder_with_pre_nmda_interfaces),
        cmocka_unit_test(test_folder_with_its_own_subscribed_notifications),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
