/*
 * Unit tests of the push-change-update's yang-patch (testtool/push/yp_patch.c): two snapshots of real
 * ietf-interfaces data (Debian's libyuma-base module) and a small test module, the exact XML of the edits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "yp.h"
#include "yp_patch.h"

#define TP_IF_NS   "urn:ietf:params:xml:ns:yang:ietf-interfaces"
#define TP_NS      "urn:fleetsim:test:yp-patch"
#define TP_IANA_NS "urn:ietf:params:xml:ns:yang:iana-if-type"

/* An augment of ietf-interfaces (a module change inside a target), a user-ordered list and a two-key list. */
static const char *tp_yang = "module fleet-yp-patch-test {\n"
                             "  yang-version 1.1;\n"
                             "  namespace \"" TP_NS "\";\n"
                             "  prefix fypt;\n"
                             "  import ietf-interfaces { prefix if; }\n"
                             "  augment \"/if:interfaces/if:interface\" {\n"
                             "    leaf weight { type uint8; }\n"
                             "  }\n"
                             "  container rules {\n"
                             "    list rule {\n"
                             "      key name;\n"
                             "      ordered-by user;\n"
                             "      leaf name { type string; }\n"
                             "      leaf action { type string; }\n"
                             "    }\n"
                             "    list peer {\n"
                             "      key \"addr port\";\n"
                             "      leaf addr { type string; }\n"
                             "      leaf port { type uint16; }\n"
                             "      leaf note { type string; }\n"
                             "    }\n"
                             "    leaf-list tag { type string; }\n"
                             "  }\n"
                             "}\n";

#define TP_ETH_TYPE  "<type xmlns:ianaift=\"" TP_IANA_NS "\">ianaift:ethernetCsmacd</type>"
#define TP_IFS(body) "<interfaces xmlns=\"" TP_IF_NS "\">" body "</interfaces>"
#define TP_IF(name, enabled)                                                                                 \
    "<interface><name>" name "</name>" TP_ETH_TYPE "<enabled>" enabled "</enabled></interface>"
#define TP_RULES(body)        "<rules xmlns=\"" TP_NS "\">" body "</rules>"
#define TP_RULE(name, action) "<rule><name>" name "</name><action>" action "</action></rule>"

#define TP_HEAD "<datastore-changes><yang-patch><patch-id>p1</patch-id>"
#define TP_TAIL "</yang-patch></datastore-changes>"

struct tp_state {
    struct ly_ctx *ctx;
};

static int
tp_setup(void **state)
{
    struct tp_state *st = calloc(1, sizeof *st);

    assert_non_null(st);
    st->ctx = tu_ctx_new(tp_yang);
    *state = st;
    return 0;
}

static int
tp_teardown(void **state)
{
    struct tp_state *st = *state;

    ly_ctx_destroy(st->ctx);
    free(st);
    return 0;
}

/* Parse without validation: a subscription's selection holds state too, and no defaults are added. */
static struct lyd_node *
tp_parse(struct ly_ctx *ctx, const char *xml)
{
    struct lyd_node *tree = NULL;

    if (!xml) {
        return NULL;
    }
    if (lyd_parse_data_mem(ctx, xml, LYD_XML, LYD_PARSE_STRICT | LYD_PARSE_ONLY, 0, &tree)) {
        fail_msg("cannot parse test data: %s", ly_errmsg(ctx));
    }
    return tree;
}

/* The patch from @p before to @p after (XML texts, NULL: nothing) with @p excluded; "" when none. */
static char *
tp_patch(struct ly_ctx *ctx, const char *before, const char *after, uint32_t excluded, uint32_t *edits)
{
    struct lyd_node *b = tp_parse(ctx, before), *a = tp_parse(ctx, after);
    struct sbuf out = {0};
    char *text;

    sbuf_adds(&out, ""); /* an empty buffer, so "nothing appended" reads as "" */
    assert_int_equal(yp_patch_write(b, a, excluded, "p1", &out, edits), FLEET_OK);
    text = sbuf_take(&out, NULL);
    assert_non_null(text);
    lyd_free_all(b);
    lyd_free_all(a);
    return text;
}

static void
test_leaf_change_is_replace(void **state)
{
    struct tp_state *st = *state;
    uint32_t edits;
    char *p = tp_patch(st->ctx, TP_IFS(TP_IF("eth0", "true") TP_IF("eth1", "true")),
                       TP_IFS(TP_IF("eth0", "false") TP_IF("eth1", "true")), 0, &edits);

    assert_int_equal(edits, 1);
    assert_string_equal(p, TP_HEAD "<edit><edit-id>edit1</edit-id><operation>replace</operation>"
                                   "<target>/ietf-interfaces:interfaces/interface=eth0/enabled</target>"
                                   "<value><enabled xmlns=\"" TP_IF_NS
                                   "\">false</enabled></value></edit>" TP_TAIL);
    free(p);
}

static void
test_new_entry_is_create_with_subtree(void **state)
{
    struct tp_state *st = *state;
    uint32_t edits;
    char *p = tp_patch(st->ctx, TP_IFS(TP_IF("eth0", "true")),
                       TP_IFS(TP_IF("eth0", "true") TP_IF("eth9", "false")), 0, &edits);

    assert_int_equal(edits, 1);
    assert_string_equal(p, TP_HEAD "<edit><edit-id>edit1</edit-id><operation>create</operation>"
                                   "<target>/ietf-interfaces:interfaces/interface=eth9</target>"
                                   "<value><interface xmlns=\"" TP_IF_NS "\"><name>eth9</name>" TP_ETH_TYPE
                                   "<enabled>false</enabled></interface></value></edit>" TP_TAIL);
    free(p);
}

static void
test_removed_entry_is_delete_without_value(void **state)
{
    struct tp_state *st = *state;
    uint32_t edits;
    char *p = tp_patch(st->ctx, TP_IFS(TP_IF("eth0", "true") TP_IF("eth1", "true")),
                       TP_IFS(TP_IF("eth1", "true")), 0, &edits);

    assert_int_equal(edits, 1);
    assert_string_equal(p,
                        TP_HEAD "<edit><edit-id>edit1</edit-id><operation>delete</operation>"
                                "<target>/ietf-interfaces:interfaces/interface=eth0</target></edit>" TP_TAIL);
    free(p);
}

static void
test_keys_are_percent_encoded(void **state)
{
    struct tp_state *st = *state;
    uint32_t edits;
    char *p = tp_patch(st->ctx,
                       TP_IFS(TP_IF("Gi0/1 a,b=c&amp;d", "true"))
                           TP_RULES("<peer><addr>fd5e::7</addr><port>830</port><note>x</note></peer>"),
                       TP_IFS(TP_IF("Gi0/1 a,b=c&amp;d", "false"))
                           TP_RULES("<peer><addr>fd5e::7</addr><port>830</port><note>y</note></peer>"),
                       0, &edits);

    assert_int_equal(edits, 2);
    /* libyang keeps top-level siblings in module order: the test module's rules come first. */
    assert_string_equal(
        p, TP_HEAD "<edit><edit-id>edit1</edit-id><operation>replace</operation>"
                   "<target>/fleet-yp-patch-test:rules/peer=fd5e%3A%3A7,830/note</target>"
                   "<value><note xmlns=\"" TP_NS "\">y</note></value></edit>"
                   "<edit><edit-id>edit2</edit-id><operation>replace</operation>"
                   "<target>/ietf-interfaces:interfaces/interface=Gi0%2F1%20a%2Cb%3Dc%26d/enabled</target>"
                   "<value><enabled xmlns=\"" TP_IF_NS "\">false</enabled></value></edit>" TP_TAIL);
    free(p);
}

static void
test_augmented_leaf_names_its_module(void **state)
{
    struct tp_state *st = *state;
    uint32_t edits;
    char *p = tp_patch(st->ctx, TP_IFS(TP_IF("eth0", "true")),
                       TP_IFS("<interface><name>eth0</name>" TP_ETH_TYPE "<enabled>true</enabled>"
                              "<weight xmlns=\"" TP_NS "\">7</weight></interface>"),
                       0, &edits);

    assert_int_equal(edits, 1);
    assert_string_equal(p, TP_HEAD
                        "<edit><edit-id>edit1</edit-id><operation>create</operation>"
                        "<target>/ietf-interfaces:interfaces/interface=eth0/fleet-yp-patch-test:weight"
                        "</target><value><weight xmlns=\"" TP_NS "\">7</weight></value></edit>" TP_TAIL);
    free(p);
}

static void
test_nothing_changed_writes_nothing(void **state)
{
    struct tp_state *st = *state;
    uint32_t edits = 99;
    char *p = tp_patch(st->ctx, TP_IFS(TP_IF("eth0", "true")), TP_IFS(TP_IF("eth0", "true")), 0, &edits);

    assert_int_equal(edits, 0);
    assert_string_equal(p, "");
    free(p);
    p = tp_patch(st->ctx, NULL, NULL, 0, &edits);
    assert_int_equal(edits, 0);
    assert_string_equal(p, "");
    free(p);
}

static void
test_from_and_to_nothing(void **state)
{
    struct tp_state *st = *state;
    uint32_t edits;
    char *p = tp_patch(st->ctx, NULL, TP_RULES("<tag>a</tag>"), 0, &edits);

    assert_int_equal(edits, 1);
    assert_string_equal(p, TP_HEAD "<edit><edit-id>edit1</edit-id><operation>create</operation>"
                                   "<target>/fleet-yp-patch-test:rules</target><value>" TP_RULES(
                                       "<tag>a</tag>") "</value></edit>" TP_TAIL);
    free(p);
    p = tp_patch(st->ctx, TP_RULES("<tag>a</tag>"), NULL, 0, &edits);
    assert_int_equal(edits, 1);
    assert_string_equal(p, TP_HEAD "<edit><edit-id>edit1</edit-id><operation>delete</operation>"
                                   "<target>/fleet-yp-patch-test:rules</target></edit>" TP_TAIL);
    free(p);
}

static void
test_leaf_list_values_are_targets(void **state)
{
    struct tp_state *st = *state;
    uint32_t edits;
    char *p = tp_patch(st->ctx, TP_RULES("<tag>a b</tag><tag>c</tag>"),
                       TP_RULES("<tag>c</tag><tag>d/e</tag>"), 0, &edits);

    assert_int_equal(edits, 2);
    assert_string_equal(p, TP_HEAD "<edit><edit-id>edit1</edit-id><operation>delete</operation>"
                                   "<target>/fleet-yp-patch-test:rules/tag=a%20b</target></edit>"
                                   "<edit><edit-id>edit2</edit-id><operation>create</operation>"
                                   "<target>/fleet-yp-patch-test:rules/tag=d%2Fe</target>"
                                   "<value><tag xmlns=\"" TP_NS "\">d/e</tag></value></edit>" TP_TAIL);
    free(p);
}

static void
test_user_ordered_move(void **state)
{
    struct tp_state *st = *state;
    uint32_t edits;
    char *p =
        tp_patch(st->ctx, TP_RULES(TP_RULE("r1", "deny") TP_RULE("r2", "permit") TP_RULE("r3", "log")),
                 TP_RULES(TP_RULE("r1", "deny") TP_RULE("r3", "log") TP_RULE("r2", "permit")), 0, &edits);

    /* libyang reports the move of one entry; whichever it picks, the edit places it after its new
     * predecessor. */
    assert_int_equal(edits, 1);
    if (strstr(p, "rule=r3</target>")) {
        assert_string_equal(
            p,
            TP_HEAD "<edit><edit-id>edit1</edit-id><operation>move</operation>"
                    "<target>/fleet-yp-patch-test:rules/rule=r3</target>"
                    "<point>/fleet-yp-patch-test:rules/rule=r1</point><where>after</where></edit>" TP_TAIL);
    } else {
        assert_string_equal(
            p,
            TP_HEAD "<edit><edit-id>edit1</edit-id><operation>move</operation>"
                    "<target>/fleet-yp-patch-test:rules/rule=r2</target>"
                    "<point>/fleet-yp-patch-test:rules/rule=r3</point><where>after</where></edit>" TP_TAIL);
    }
    free(p);
    p = tp_patch(st->ctx, TP_RULES(TP_RULE("r1", "deny") TP_RULE("r2", "permit")),
                 TP_RULES(TP_RULE("r2", "permit") TP_RULE("r1", "deny")), 0, &edits);
    assert_int_equal(edits, 1);
    assert_true(strstr(p, "<where>first</where>") ||
                strstr(p, "<point>/fleet-yp-patch-test:rules/rule=r2</point>"));
    free(p);
}

static void
test_excluded_changes_are_left_out(void **state)
{
    struct tp_state *st = *state;
    uint32_t edits;
    const char *before = TP_IFS(TP_IF("eth0", "true") TP_IF("eth1", "true"));
    const char *after = TP_IFS(TP_IF("eth0", "false") TP_IF("eth2", "true"));
    char *p = tp_patch(st->ctx, before, after, YP_CHANGE_CREATE, &edits);

    assert_int_equal(edits, 2);
    assert_null(strstr(p, "<operation>create</operation>"));
    assert_non_null(strstr(
        p, "<operation>replace</operation><target>/ietf-interfaces:interfaces/interface=eth0/enabled"));
    assert_non_null(
        strstr(p, "<operation>delete</operation><target>/ietf-interfaces:interfaces/interface=eth1<"));
    free(p);
    p = tp_patch(st->ctx, before, after, YP_CHANGE_DELETE | YP_CHANGE_REPLACE, &edits);
    assert_int_equal(edits, 1);
    assert_non_null(
        strstr(p, "<operation>create</operation><target>/ietf-interfaces:interfaces/interface=eth2<"));
    free(p);
    p = tp_patch(st->ctx, before, after, YP_CHANGE_CREATE | YP_CHANGE_DELETE | YP_CHANGE_REPLACE, &edits);
    assert_int_equal(edits, 0);
    assert_string_equal(p, "");
    free(p);
}

static void
test_patch_id_is_escaped(void **state)
{
    struct tp_state *st = *state;
    struct lyd_node *b = tp_parse(st->ctx, TP_RULES("<tag>a</tag>"));
    struct sbuf out = {0};
    uint32_t edits;

    assert_int_equal(yp_patch_write(b, NULL, 0, "a<b&c", &out, &edits), FLEET_OK);
    assert_int_equal(edits, 1);
    assert_non_null(strstr(out.buf, "<patch-id>a&lt;b&amp;c</patch-id>"));
    sbuf_free(&out);
    lyd_free_all(b);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_leaf_change_is_replace),
        cmocka_unit_test(test_new_entry_is_create_with_subtree),
        cmocka_unit_test(test_removed_entry_is_delete_without_value),
        cmocka_unit_test(test_keys_are_percent_encoded),
        cmocka_unit_test(test_augmented_leaf_names_its_module),
        cmocka_unit_test(test_nothing_changed_writes_nothing),
        cmocka_unit_test(test_from_and_to_nothing),
        cmocka_unit_test(test_leaf_list_values_are_targets),
        cmocka_unit_test(test_user_ordered_move),
        cmocka_unit_test(test_excluded_changes_are_left_out),
        cmocka_unit_test(test_patch_id_is_escaped),
    };
    return cmocka_run_group_tests(tests, tp_setup, tp_teardown);
}
