/*
 * Unit tests of the get/get-config filters (testtool/model/filter.c).
 * Subtree filters are not built by hand: each test parses a real
 * <get-config> RPC and hands the anyxml <filter> content to filter_subtree(),
 * so the filter has exactly the mix of data and opaque nodes the server
 * sees. Every test asserts the exact XML of the result.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "test_util.h"
#include "xmlguard.h"

#define TF_IF_NS   "urn:ietf:params:xml:ns:yang:ietf-interfaces"
#define TF_NS      "urn:fleetsim:test:filter"
#define TF_IANA_NS "urn:ietf:params:xml:ns:yang:iana-if-type"

/* Entries of the large list in test_subtree_key_match_in_10000_entries. */
#define TF_BIG_COUNT 10000

/* A module with a nested keyed list, a two-key list, a leaf-list, a presence
 * container, a top-level leaf and a top-level container that shares its name
 * with ietf-interfaces'. */
static const char *tf_yang = "module fleet-filter-test {\n"
                             "  yang-version 1.1;\n"
                             "  namespace \"" TF_NS "\";\n"
                             "  prefix fft;\n"
                             "  container top {\n"
                             "    leaf-list tag { type string; }\n"
                             "    list group {\n"
                             "      key name;\n"
                             "      leaf name { type string; }\n"
                             "      leaf descr { type string; }\n"
                             "      leaf size { type uint32; }\n"
                             "      list member {\n"
                             "        key \"id kind\";\n"
                             "        leaf id { type uint16; }\n"
                             "        leaf kind { type string; }\n"
                             "        leaf note { type string; }\n"
                             "      }\n"
                             "    }\n"
                             "    container settings {\n"
                             "      presence \"settings are configured\";\n"
                             "      leaf mode { type string; }\n"
                             "      leaf level { type uint8; }\n"
                             "    }\n"
                             "    container stats {\n"
                             "      leaf count { type uint32; }\n"
                             "      leaf state { type string; }\n"
                             "    }\n"
                             "  }\n"
                             "  container interfaces {\n"
                             "    leaf count { type uint32; }\n"
                             "  }\n"
                             "  leaf motd { type string; }\n"
                             "}\n";

/* Expected output pieces, as tu_print() writes them. */
#define TF_IFS_OPEN  "<interfaces xmlns=\"" TF_IF_NS "\">"
#define TF_IFS_CLOSE "</interfaces>"
#define TF_TOP_OPEN  "<top xmlns=\"" TF_NS "\">"
#define TF_ETH_TYPE  "<type xmlns:ianaift=\"" TF_IANA_NS "\">ianaift:ethernetCsmacd</type>"
#define TF_LOOP_TYPE "<type xmlns:ianaift=\"" TF_IANA_NS "\">ianaift:softwareLoopback</type>"
#define TF_ETH0                                                                                              \
    "<interface><name>eth0</name><description>uplink</description>" TF_ETH_TYPE                              \
    "<enabled>true</enabled></interface>"
#define TF_ETH1 "<interface><name>eth1</name>" TF_ETH_TYPE "<enabled>false</enabled></interface>"
#define TF_LO   "<interface><name>lo</name><description>loopback</description>" TF_LOOP_TYPE "</interface>"
#define TF_GROUP_A                                                                                           \
    "<group><name>a</name><descr>first</descr><size>3</size>"                                                \
    "<member><id>1</id><kind>x</kind><note>n1</note></member>"                                               \
    "<member><id>2</id><kind>y</kind></member></group>"
#define TF_GROUP_B                                                                                           \
    "<group><name>b</name><size>5</size><member><id>1</id><kind>y</kind><note>n3</note></member></group>"
#define TF_SETTINGS "<settings><mode>fast</mode><level>2</level></settings>"
#define TF_STATS    "<stats><count>7</count><state>up</state></stats>"
#define TF_TOP      TF_TOP_OPEN "<tag>red</tag><tag>blue</tag>" TF_GROUP_A TF_GROUP_B TF_SETTINGS TF_STATS "</top>"
#define TF_OWN_IFS  "<interfaces xmlns=\"" TF_NS "\"><count>4</count></interfaces>"
#define TF_MOTD     "<motd xmlns=\"" TF_NS "\">hello</motd>"

/* The data every test filters; libyang keeps top-level nodes ordered by module, so it prints as TF_ALL. */
static const char *tf_data_xml =
    "<interfaces xmlns=\"" TF_IF_NS "\" xmlns:ianaift=\"" TF_IANA_NS "\">"
    "<interface><name>eth0</name><description>uplink</description><type>ianaift:ethernetCsmacd</type>"
    "<enabled>true</enabled></interface>"
    "<interface><name>eth1</name><type>ianaift:ethernetCsmacd</type><enabled>false</enabled></interface>"
    "<interface><name>lo</name><description>loopback</description><type>ianaift:softwareLoopback</type>"
    "</interface>"
    "</interfaces>"
    "<top xmlns=\"" TF_NS "\">"
    "<tag>red</tag><tag>blue</tag>"
    "<group><name>a</name><descr>first</descr><size>3</size>"
    "<member><id>1</id><kind>x</kind><note>n1</note></member>"
    "<member><id>2</id><kind>y</kind></member></group>"
    "<group><name>b</name><size>5</size><member><id>1</id><kind>y</kind><note>n3</note></member></group>"
    "<settings><mode>fast</mode><level>2</level></settings>"
    "<stats><count>7</count><state>up</state></stats>"
    "</top>"
    "<interfaces xmlns=\"" TF_NS "\"><count>4</count></interfaces>"
    "<motd xmlns=\"" TF_NS "\">hello</motd>";
#define TF_ALL TF_TOP TF_OWN_IFS TF_MOTD TF_IFS_OPEN TF_ETH0 TF_ETH1 TF_LO TF_IFS_CLOSE

/* Group state: one context and one data tree for all tests. */
struct tf_state {
    struct ly_ctx *ctx;    /* test context with fleet-filter-test */
    struct lyd_node *data; /* parsed tf_data_xml, read-only for the tests */
};

/* A parsed <get-config> whose filter the tests use; the filter lives in op. */
struct tf_rpc {
    struct lyd_node *env;          /* the <rpc> envelope (opaque) */
    struct lyd_node *op;           /* the get-config operation */
    const struct lyd_node *filter; /* first node of the filter content, NULL if empty; owned by op */
};

static int
tf_setup(void **state)
{
    struct tf_state *st = calloc(1, sizeof *st);

    assert_non_null(st);
    st->ctx = tu_ctx_new(tf_yang);
    st->data = tu_parse_data(st->ctx, tf_data_xml);
    *state = st;
    return 0;
}

static int
tf_teardown(void **state)
{
    struct tf_state *st = *state;

    lyd_free_all(st->data);
    ly_ctx_destroy(st->ctx);
    free(st);
    return 0;
}

/* Parse a get-config carrying @p filter_xml as its subtree filter, the way the server receives it. */
static void
tf_rpc_parse(struct ly_ctx *ctx, const char *filter_xml, struct tf_rpc *rpc)
{
    static const char *fmt = "<rpc xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\" message-id=\"1\">"
                             "<get-config><source><running/></source>"
                             "<filter type=\"subtree\">%s</filter></get-config></rpc>";
    struct ly_in *in = NULL;
    struct lyd_node *node = NULL;
    const struct lyd_node_any *any;
    size_t len = strlen(fmt) + strlen(filter_xml) + 1;
    char *xml = malloc(len);

    assert_non_null(xml);
    snprintf(xml, len, fmt, filter_xml);
    memset(rpc, 0, sizeof *rpc);
    assert_int_equal(ly_in_new_memory(xml, &in), LY_SUCCESS);
    if (lyd_parse_op(ctx, NULL, in, LYD_XML, LYD_TYPE_RPC_NETCONF, &rpc->env, &rpc->op)) {
        fail_msg("cannot parse rpc: %s", ly_errmsg(ctx));
    }
    ly_in_free(in, 0);
    free(xml);

    assert_int_equal(lyd_find_path(rpc->op, "filter", 0, &node), LY_SUCCESS);
    any = (const struct lyd_node_any *)node;
    if (any->value_type == LYD_ANYDATA_DATATREE) {
        rpc->filter = any->value.tree;
    } else {
        /* whitespace-only or empty content */
        assert_null(any->value.str);
    }
}

static void
tf_rpc_free(struct tf_rpc *rpc)
{
    lyd_free_all(rpc->op);
    lyd_free_all(rpc->env);
}

/* Run a subtree filter over @p data and require the exact output (empty string: no result). */
static void
tf_check_subtree_on(struct ly_ctx *ctx, const struct lyd_node *data, const char *filter_xml,
                    const char *expected)
{
    struct tf_rpc rpc;
    struct lyd_node *result = (struct lyd_node *)1;
    char *printed;

    tf_rpc_parse(ctx, filter_xml, &rpc);
    assert_int_equal(filter_subtree(data, rpc.filter, &result), FLEET_OK);
    printed = tu_print(result);
    if (strcmp(printed, expected)) {
        print_error("filter:   %s\nexpected: %s\nactual:   %s\n", filter_xml, expected, printed);
    }
    assert_string_equal(printed, expected);
    free(printed);
    lyd_free_all(result);
    tf_rpc_free(&rpc);
}

static void
tf_check_subtree(void **state, const char *filter_xml, const char *expected)
{
    struct tf_state *st = *state;

    tf_check_subtree_on(st->ctx, st->data, filter_xml, expected);
}

static void
tf_check_xpath(void **state, const char *xpath, const char *expected)
{
    struct tf_state *st = *state;
    struct lyd_node *result = NULL;
    char *printed;

    assert_int_equal(filter_xpath(st->data, xpath, &result), FLEET_OK);
    printed = tu_print(result);
    if (strcmp(printed, expected)) {
        print_error("xpath:    %s\nexpected: %s\nactual:   %s\n", xpath, expected, printed);
    }
    assert_string_equal(printed, expected);
    free(printed);
    lyd_free_all(result);
}

/* --- subtree --- */

static void
test_subtree_empty_filter_selects_nothing(void **state)
{
    struct tf_state *st = *state;
    struct lyd_node *result = (struct lyd_node *)1;

    assert_int_equal(filter_subtree(st->data, NULL, &result), FLEET_OK);
    assert_null(result);

    /* <filter type="subtree"/> parses to no tree at all */
    tf_check_subtree(state, "", "");

    result = (struct lyd_node *)1;
    assert_int_equal(filter_subtree(NULL, NULL, &result), FLEET_OK);
    assert_null(result);
}

static void
test_subtree_no_data_selects_nothing(void **state)
{
    struct tf_state *st = *state;

    tf_check_subtree_on(st->ctx, NULL, "<top xmlns=\"" TF_NS "\"/>", "");
}

/* RFC 6241 6.4.2: a selection node at top level selects the whole subtree. */
static void
test_subtree_selection_selects_whole_subtree(void **state)
{
    tf_check_subtree(state, "<top xmlns=\"" TF_NS "\"/>", TF_TOP);
    tf_check_subtree(state, "<interfaces xmlns=\"" TF_IF_NS "\"/>",
                     TF_IFS_OPEN TF_ETH0 TF_ETH1 TF_LO TF_IFS_CLOSE);
}

/* RFC 6241 6.4.5: one leaf of every entry; list entries keep their keys, an entry without the leaf is
 * dropped. */
static void
test_subtree_containment_and_selection(void **state)
{
    tf_check_subtree(
        state, "<interfaces xmlns=\"" TF_IF_NS "\"><interface><description/></interface></interfaces>",
        TF_IFS_OPEN "<interface><name>eth0</name><description>uplink</description></interface>"
                    "<interface><name>lo</name><description>loopback</description></interface>" TF_IFS_CLOSE);
    /* an empty key is a selection node too: every entry with just its key */
    tf_check_subtree(state, "<interfaces xmlns=\"" TF_IF_NS "\"><interface><name/></interface></interfaces>",
                     TF_IFS_OPEN
                     "<interface><name>eth0</name></interface><interface><name>eth1</name></interface>"
                     "<interface><name>lo</name></interface>" TF_IFS_CLOSE);
    /* <description/> of a string leaf parses as a data node with an empty value; <type/> stays opaque */
    tf_check_subtree(state,
                     "<interfaces xmlns=\"" TF_IF_NS "\"><interface><name/><description/><type/></interface>"
                     "</interfaces>",
                     TF_IFS_OPEN "<interface><name>eth0</name><description>uplink</description>" TF_ETH_TYPE
                                 "</interface><interface><name>eth1</name>" TF_ETH_TYPE "</interface>"
                                 "<interface><name>lo</name><description>loopback</description>" TF_LOOP_TYPE
                                 "</interface>" TF_IFS_CLOSE);
    tf_check_subtree(state, "<top xmlns=\"" TF_NS "\"><stats><state/></stats><settings/></top>",
                     TF_TOP_OPEN TF_SETTINGS "<stats><state>up</state></stats></top>");
}

/* RFC 6241 6.4.6/6.4.8: a key content match alone selects the whole entry. */
static void
test_subtree_content_match_by_key(void **state)
{
    tf_check_subtree(
        state, "<interfaces xmlns=\"" TF_IF_NS "\"><interface><name>eth1</name></interface></interfaces>",
        TF_IFS_OPEN TF_ETH1 TF_IFS_CLOSE);
    /* with a selection node beside it, only the key and the selected leaf */
    tf_check_subtree(state,
                     "<interfaces xmlns=\"" TF_IF_NS
                     "\"><interface><name>eth0</name><type/></interface></interfaces>",
                     TF_IFS_OPEN "<interface><name>eth0</name>" TF_ETH_TYPE "</interface>" TF_IFS_CLOSE);
    /* two entries by key come out in data order, whatever the filter order */
    tf_check_subtree(state,
                     "<interfaces xmlns=\"" TF_IF_NS "\"><interface><name>lo</name></interface>"
                     "<interface><name>eth0</name></interface></interfaces>",
                     TF_IFS_OPEN TF_ETH0 TF_LO TF_IFS_CLOSE);
    tf_check_subtree(
        state, "<interfaces xmlns=\"" TF_IF_NS "\"><interface><name>eth9</name></interface></interfaces>",
        "");
}

/* RFC 6241 6.2.5: sibling content-match nodes are ANDed; identityref values match across prefixes. */
static void
test_subtree_multiple_content_matches_must_all_match(void **state)
{
    /* no key in the filter: <interface> and all below it are opaque nodes */
    tf_check_subtree(state,
                     "<interfaces xmlns=\"" TF_IF_NS "\"><interface>"
                     "<type xmlns:ift=\"" TF_IANA_NS "\">ift:ethernetCsmacd</type><enabled>false</enabled>"
                     "</interface></interfaces>",
                     TF_IFS_OPEN TF_ETH1 TF_IFS_CLOSE);
    tf_check_subtree(state,
                     "<interfaces xmlns=\"" TF_IF_NS "\"><interface>"
                     "<type xmlns:ift=\"" TF_IANA_NS "\">ift:ethernetCsmacd</type></interface></interfaces>",
                     TF_IFS_OPEN TF_ETH0 TF_ETH1 TF_IFS_CLOSE);
    /* content matches plus a selection: the matched leaves and the selected one. lo matches through its
     * implicit default enabled=true, which the explicit-mode print then leaves out */
    tf_check_subtree(
        state,
        "<interfaces xmlns=\"" TF_IF_NS "\"><interface><enabled>true</enabled><description/>"
        "</interface></interfaces>",
        TF_IFS_OPEN "<interface><name>eth0</name><description>uplink</description>"
                    "<enabled>true</enabled></interface>"
                    "<interface><name>lo</name><description>loopback</description></interface>" TF_IFS_CLOSE);
}

/* RFC 6241 6.2.5: one failing content match excludes the entry, and with it an otherwise empty parent. */
static void
test_subtree_content_match_failure_excludes_entry(void **state)
{
    tf_check_subtree(state,
                     "<interfaces xmlns=\"" TF_IF_NS "\"><interface><name>eth0</name><enabled>false</enabled>"
                     "</interface></interfaces>",
                     "");
    tf_check_subtree(state,
                     "<interfaces xmlns=\"" TF_IF_NS "\"><interface><name>eth0</name><enabled>false</enabled>"
                     "</interface><interface><name>lo</name></interface></interfaces>",
                     TF_IFS_OPEN TF_LO TF_IFS_CLOSE);
}

static void
test_subtree_selection_of_missing_node_is_empty(void **state)
{
    tf_check_subtree(state, "<top xmlns=\"" TF_NS "\"><nosuch/></top>", "");
    tf_check_subtree(state, "<nosuch xmlns=\"" TF_NS "\"/>", "");
    /* the entry matched by key still comes back, with its key (RFC 6241 6.2.5: matched content is output) */
    tf_check_subtree(state,
                     "<interfaces xmlns=\"" TF_IF_NS
                     "\"><interface><name>eth1</name><description/></interface>"
                     "</interfaces>",
                     TF_IFS_OPEN "<interface><name>eth1</name></interface>" TF_IFS_CLOSE);
}

/* RFC 6241 6.2.2: a filter node without namespace matches nodes of any module. */
static void
test_subtree_namespace_less_node_matches_any(void **state)
{
    /* top-level order is libyang's, by module, whatever the filter order */
    tf_check_subtree(state, "<interfaces xmlns=\"\"/>",
                     TF_OWN_IFS TF_IFS_OPEN TF_ETH0 TF_ETH1 TF_LO TF_IFS_CLOSE);
    /* without xmlns the element inherits the <rpc> default namespace, which is read the same way */
    tf_check_subtree(state, "<interfaces><count/></interfaces>", TF_OWN_IFS);
    tf_check_subtree(state, "<top xmlns=\"\"><stats><count>7</count></stats></top>",
                     TF_TOP_OPEN TF_STATS "</top>");
}

static void
test_subtree_wrong_namespace_excludes(void **state)
{
    tf_check_subtree(state, "<interfaces xmlns=\"" TF_NS "\"/>", TF_OWN_IFS);
    tf_check_subtree(state, "<top xmlns=\"urn:example:other\"/>", "");
    tf_check_subtree(
        state, "<top xmlns=\"" TF_NS "\"><stats><count xmlns=\"urn:example:other\"/></stats></top>", "");
}

static void
test_subtree_leaf_list_content_match(void **state)
{
    tf_check_subtree(state, "<top xmlns=\"" TF_NS "\"><tag>blue</tag><stats/></top>",
                     TF_TOP_OPEN "<tag>blue</tag>" TF_STATS "</top>");
    tf_check_subtree(state, "<top xmlns=\"" TF_NS "\"><tag>green</tag><stats/></top>", "");
    /* two content matches on one leaf-list: both values must be present */
    tf_check_subtree(state,
                     "<top xmlns=\"" TF_NS "\"><tag>red</tag><tag>blue</tag><stats><count/></stats></top>",
                     TF_TOP_OPEN "<tag>red</tag><tag>blue</tag><stats><count>7</count></stats></top>");
    tf_check_subtree(state, "<top xmlns=\"" TF_NS "\"><tag>red</tag><tag>green</tag><stats/></top>", "");
    /* content matches only: the whole instance */
    tf_check_subtree(state, "<top xmlns=\"" TF_NS "\"><tag>blue</tag></top>", TF_TOP);
    /* a selection node picks every instance */
    tf_check_subtree(state, "<top xmlns=\"" TF_NS "\"><tag/></top>",
                     TF_TOP_OPEN "<tag>red</tag><tag>blue</tag></top>");
}

static void
test_subtree_presence_container_content_match(void **state)
{
    tf_check_subtree(state, "<top xmlns=\"" TF_NS "\"><settings><mode>fast</mode></settings></top>",
                     TF_TOP_OPEN TF_SETTINGS "</top>");
    tf_check_subtree(state, "<top xmlns=\"" TF_NS "\"><settings><mode>slow</mode></settings></top>", "");
    tf_check_subtree(state, "<top xmlns=\"" TF_NS "\"><settings><mode>fast</mode><level/></settings></top>",
                     TF_TOP_OPEN TF_SETTINGS "</top>");
    tf_check_subtree(state,
                     "<top xmlns=\"" TF_NS "\"><settings><level>2</level><mode/></settings><stats/></top>",
                     TF_TOP_OPEN TF_SETTINGS TF_STATS "</top>");
}

static void
test_subtree_nested_lists(void **state)
{
    /* both levels keyed: data list nodes, found by hash */
    tf_check_subtree(state,
                     "<top xmlns=\"" TF_NS "\"><group><name>a</name><member><id>2</id><kind>y</kind></member>"
                     "</group></top>",
                     TF_TOP_OPEN
                     "<group><name>a</name><member><id>2</id><kind>y</kind></member></group></top>");
    /* a two-key list needs both keys to match */
    tf_check_subtree(
        state, "<top xmlns=\"" TF_NS "\"><group><member><id>1</id><kind>z</kind></member></group></top>", "");
    /* the matched key is output even though its containment sibling selects nothing */
    tf_check_subtree(state,
                     "<top xmlns=\"" TF_NS "\"><group><name>b</name><member><id>1</id><kind>x</kind></member>"
                     "</group></top>",
                     TF_TOP_OPEN "<group><name>b</name></group></top>");
    /* no keys: every group, every member with a note */
    tf_check_subtree(state, "<top xmlns=\"" TF_NS "\"><group><member><note/></member></group></top>",
                     TF_TOP_OPEN
                     "<group><name>a</name><member><id>1</id><kind>x</kind><note>n1</note></member>"
                     "</group><group><name>b</name><member><id>1</id><kind>y</kind><note>n3</note>"
                     "</member></group></top>");
    /* a content match deep down selects its entry in each group */
    tf_check_subtree(state, "<top xmlns=\"" TF_NS "\"><group><member><kind>y</kind></member></group></top>",
                     TF_TOP_OPEN
                     "<group><name>a</name><member><id>2</id><kind>y</kind></member></group>"
                     "<group><name>b</name><member><id>1</id><kind>y</kind><note>n3</note></member>"
                     "</group></top>");
    tf_check_subtree(state, "<top xmlns=\"" TF_NS "\"><group><size>5</size><descr/></group></top>",
                     TF_TOP_OPEN "<group><name>b</name><size>5</size></group></top>");
}

static void
test_subtree_top_level_multiple_filters(void **state)
{
    tf_check_subtree(state,
                     "<interfaces xmlns=\"" TF_IF_NS "\"><interface><name>lo</name></interface></interfaces>"
                     "<top xmlns=\"" TF_NS "\"><stats/></top>",
                     TF_TOP_OPEN TF_STATS "</top>" TF_IFS_OPEN TF_LO TF_IFS_CLOSE);
    tf_check_subtree(state, "<top xmlns=\"" TF_NS "\"><stats/></top><nosuch xmlns=\"" TF_NS "\"/>",
                     TF_TOP_OPEN TF_STATS "</top>");
    /* a top-level content match selects the equal leaf and does not gate its siblings */
    tf_check_subtree(state, "<motd xmlns=\"" TF_NS "\">hello</motd><top xmlns=\"" TF_NS "\"><stats/></top>",
                     TF_TOP_OPEN TF_STATS "</top>" TF_MOTD);
    tf_check_subtree(state, "<motd xmlns=\"" TF_NS "\">bye</motd><top xmlns=\"" TF_NS "\"><stats/></top>",
                     TF_TOP_OPEN TF_STATS "</top>");
}

/* Two filter nodes selecting the same data give the union, each node once, in data order. */
static void
test_subtree_overlapping_filters_merge(void **state)
{
    tf_check_subtree(state,
                     "<interfaces xmlns=\"" TF_IF_NS "\"><interface><name>eth0</name><type/></interface>"
                     "<interface><name>eth0</name><description/></interface></interfaces>",
                     TF_IFS_OPEN "<interface><name>eth0</name><description>uplink</description>" TF_ETH_TYPE
                                 "</interface>" TF_IFS_CLOSE);
    tf_check_subtree(state, "<top xmlns=\"" TF_NS "\"><stats/><stats><count/></stats></top>",
                     TF_TOP_OPEN TF_STATS "</top>");
    tf_check_subtree(state, "<top xmlns=\"" TF_NS "\"/><top xmlns=\"" TF_NS "\"><stats/></top>", TF_TOP);
    /* the same entry twice by key */
    tf_check_subtree(state,
                     "<interfaces xmlns=\"" TF_IF_NS "\"><interface><name>lo</name></interface>"
                     "<interface><name>lo</name></interface></interfaces>",
                     TF_IFS_OPEN TF_LO TF_IFS_CLOSE);
    tf_check_subtree(
        state,
        "<interfaces xmlns=\"" TF_IF_NS "\"><interface><name>lo</name></interface>"
        "<interface><description/></interface></interfaces>",
        TF_IFS_OPEN
        "<interface><name>eth0</name><description>uplink</description></interface>" TF_LO TF_IFS_CLOSE);
}

static void
test_subtree_source_tree_unchanged(void **state)
{
    struct tf_state *st = *state;
    char *before = tu_print(st->data), *after;

    assert_string_equal(before, TF_ALL);
    tf_check_subtree(
        state, "<interfaces xmlns=\"" TF_IF_NS "\"><interface><name>eth0</name></interface></interfaces>",
        TF_IFS_OPEN TF_ETH0 TF_IFS_CLOSE);
    after = tu_print(st->data);
    assert_string_equal(before, after);
    free(before);
    free(after);
}

/* Build TF_BIG_COUNT interfaces named if0..if9999. */
static struct lyd_node *
tf_big_data(struct ly_ctx *ctx)
{
    static const char *entry = "<interface><name>if%u</name><type>ianaift:ethernetCsmacd</type></interface>";
    static const char *open = "<interfaces xmlns=\"" TF_IF_NS "\" xmlns:ianaift=\"" TF_IANA_NS "\">";
    size_t cap = strlen(open) + TF_BIG_COUNT * (strlen(entry) + 8) + 32, len;
    char *xml = malloc(cap);
    struct lyd_node *data;
    unsigned i;

    assert_non_null(xml);
    len = (size_t)snprintf(xml, cap, "%s", open);
    for (i = 0; i < TF_BIG_COUNT; i++) {
        len += (size_t)snprintf(xml + len, cap - len, entry, i);
    }
    snprintf(xml + len, cap - len, "</interfaces>");
    data = tu_parse_data(ctx, xml);
    free(xml);
    return data;
}

static void
test_subtree_key_match_in_10000_entries(void **state)
{
    struct tf_state *st = *state;
    struct lyd_node *big = tf_big_data(st->ctx), *result = NULL, *iter;
    struct tf_rpc rpc;
    uint32_t count = 0;

    tf_check_subtree_on(st->ctx, big,
                        "<interfaces xmlns=\"" TF_IF_NS
                        "\"><interface><name>if5000</name></interface></interfaces>",
                        TF_IFS_OPEN "<interface><name>if5000</name>" TF_ETH_TYPE "</interface>" TF_IFS_CLOSE);
    tf_check_subtree_on(st->ctx, big,
                        "<interfaces xmlns=\"" TF_IF_NS "\"><interface><name>if9999</name><type/></interface>"
                        "<interface><name>if3</name></interface></interfaces>",
                        TF_IFS_OPEN "<interface><name>if3</name>" TF_ETH_TYPE "</interface>"
                                    "<interface><name>if9999</name>" TF_ETH_TYPE "</interface>" TF_IFS_CLOSE);

    /* selecting everything keeps every entry */
    tf_rpc_parse(st->ctx, "<interfaces xmlns=\"" TF_IF_NS "\"><interface><name/></interface></interfaces>",
                 &rpc);
    assert_int_equal(filter_subtree(big, rpc.filter, &result), FLEET_OK);
    assert_non_null(result);
    LY_LIST_FOR(lyd_child(result), iter)
    {
        count++;
    }
    assert_int_equal(count, TF_BIG_COUNT);
    lyd_free_all(result);
    tf_rpc_free(&rpc);
    lyd_free_all(big);
}

/* --- xpath --- */

static void
test_xpath_selects_node_with_ancestors_and_keys(void **state)
{
    tf_check_xpath(state, "/ietf-interfaces:interfaces/interface[name='eth0']/description",
                   TF_IFS_OPEN
                   "<interface><name>eth0</name><description>uplink</description></interface>" TF_IFS_CLOSE);
    tf_check_xpath(state, "/fleet-filter-test:top/stats", TF_TOP_OPEN TF_STATS "</top>");
    tf_check_xpath(state, "/ietf-interfaces:interfaces/interface[enabled='false']",
                   TF_IFS_OPEN TF_ETH1 TF_IFS_CLOSE);
    tf_check_xpath(state, "/ietf-interfaces:interfaces/interface[name='eth9']", "");
}

static void
test_xpath_nested_list_keys(void **state)
{
    tf_check_xpath(state, "/fleet-filter-test:top/group[name='a']/member[id='2'][kind='y']",
                   TF_TOP_OPEN
                   "<group><name>a</name><member><id>2</id><kind>y</kind></member></group></top>");
    tf_check_xpath(state, "/fleet-filter-test:top/group/member/note",
                   TF_TOP_OPEN "<group><name>a</name><member><id>1</id><kind>x</kind><note>n1</note></member>"
                               "</group><group><name>b</name><member><id>1</id><kind>y</kind><note>n3</note>"
                               "</member></group></top>");
    /* selecting keys themselves does not copy them twice */
    tf_check_xpath(state, "/ietf-interfaces:interfaces/interface/name",
                   TF_IFS_OPEN
                   "<interface><name>eth0</name></interface><interface><name>eth1</name></interface>"
                   "<interface><name>lo</name></interface>" TF_IFS_CLOSE);
}

static void
test_xpath_ancestor_and_descendant_not_duplicated(void **state)
{
    tf_check_xpath(state, "/fleet-filter-test:top/stats | /fleet-filter-test:top/stats/count",
                   TF_TOP_OPEN TF_STATS "</top>");
    tf_check_xpath(state, "/fleet-filter-test:top/stats/count | /fleet-filter-test:top/stats/state",
                   TF_TOP_OPEN TF_STATS "</top>");
    tf_check_xpath(state, "/fleet-filter-test:top/tag | /fleet-filter-test:top/tag[.='blue']",
                   TF_TOP_OPEN "<tag>red</tag><tag>blue</tag></top>");
    tf_check_xpath(state, "//ietf-interfaces:name | /ietf-interfaces:interfaces/interface[name='lo']",
                   TF_IFS_OPEN
                   "<interface><name>eth0</name></interface><interface><name>eth1</name></interface>" TF_LO
                       TF_IFS_CLOSE);
}

static void
test_xpath_bad_expression_is_inval(void **state)
{
    struct tf_state *st = *state;
    struct lyd_node *result = (struct lyd_node *)1;

    assert_int_equal(filter_xpath(st->data, "/ietf-interfaces:interfaces/interface[", &result),
                     FLEET_ERR_INVAL);
    assert_null(result);
    assert_non_null(ly_errmsg(st->ctx));

    result = (struct lyd_node *)1;
    assert_int_equal(filter_xpath(st->data, "/no-such-module:x", &result), FLEET_ERR_INVAL);
    assert_null(result);

    result = (struct lyd_node *)1;
    assert_int_equal(filter_xpath(st->data, NULL, &result), FLEET_ERR_INVAL);
    assert_null(result);
}

/*
 * libyang 2.1.30 raises SIGFPE on "x mod 0" and leaks on "a = b = c": every expression in which mod may
 * be the operator, and every chained comparison, is refused before libyang sees it.
 */
static void
test_xpath_unsafe_for_libyang_is_refused_before_it(void **state)
{
    struct tf_state *st = *state;
    static const char *const refused[] = {
        "/ietf-interfaces:interfaces/interface[1 mod 0]",
        "/ietf-interfaces:interfaces/interface[-9223372036854775808 mod -1]",
        "/ietf-interfaces:interfaces/*module",     /* "*", "mod", "ule": what the fuzzer found */
        "/ietf-interfaces:*mod 0",                 /* "prefix:*" is one name test */
        "/ietf-interfaces:interfaces[1div0mod 0]", /* "div" and "mod" need no spaces */
        "/ietf-interfaces:interfaces[. mod 2]",
        "/ietf-interfaces:interfaces[(1) mod 2]",
        "/ietf-interfaces:interfaces['a' mod 2]",
        "/ietf-interfaces:interfaces[1 and 2 mod 0]",
        "/ietf-interfaces:interfaces[5mod 0]",
        "/*>*>x", /* leaked 208 bytes in libyang per evaluation */
        "/*=*=x",
        "/*!=*!=x",
        "/x>/*>/*",
        "/*[a = b = c]",
        "/*[a and b = c = d]",
        "/*[f(a, b = c = d)]",
        /* issue 28: O(data^2) filters, the fuzzer's and their kin */
        "//./*//*<.",
        "//*[. < /]",
        "//*[. = //*]",
        "/*/*[. = /*]",
        "//*[contains(/, 'x')]",
        "//*[count(//*) > 1]",
        "/ietf-interfaces:interfaces/interface[name = /ietf-interfaces:interfaces/interface/name]",
        "//*[descendant::* = 'x']",
        "//*[ancestor-or-self::*]",
        "//*[following::* = .]",
        "/*[.//x = 1]",
        "/ietf-interfaces:interfaces = 1",
    };
    static const char *const allowed[] = {
        "/ietf-interfaces:interfaces/interface/module",
        "/ietf-interfaces:interfaces/interface[name='mod']",
        "/ietf-interfaces:interfaces/interface[name=\"1 mod 0\"]",
        "/ietf-interfaces:interfaces/mod:x",
        "/ietf-interfaces:interfaces/interface[module-name='x']",
        "//module",
        "/ietf-interfaces:interfaces/child::module",
        "/ietf-interfaces:interfaces/@mod",
        "/ietf-interfaces:interfaces[count(module) = 0]",
        "/ietf-interfaces:interfaces/my-module",
        "/ietf-interfaces:interfaces[1 div 0]",
        "/*[a = 1 and b = 2]",
        "/*[a = 1 or b != 2]",
        "/*[(a = 1) = true()]",
        "/*[f(a = 1, b = 2)]",
        "/*[a = 1][b = 2]",
        "/*[a[b = 1] = 2]",
        "/ietf-interfaces:interfaces/interface[name='a=b=c']",
        "//ietf-interfaces:interface[ietf-interfaces:name='eth0']",
        "//*",
        "/ietf-interfaces:interfaces | /ietf-interfaces:interfaces-state",
        "/ietf-interfaces:interfaces/interface[starts-with(name, 'Gig')]/description",
        "/ietf-interfaces:interfaces-state/interface[statistics/in-octets > 100]",
        "/ietf-interfaces:interfaces/interface[../interface/name = 'x']",
        "/ietf-interfaces:interfaces/interface[current()/name]",
        "/ietf-interfaces:interfaces/interface[position() < 3]",
        "/x:leaf-list[. = 'a']",
        "/ietf-interfaces:interfaces/interface[following-sibling::interface/name = name]",
    };

    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        struct lyd_node *result = (struct lyd_node *)1;
        if (!xmlguard_xpath_unsafe(refused[i])) {
            fail_msg("not refused: %s", refused[i]);
        }
        assert_int_equal(filter_xpath(st->data, refused[i], &result), FLEET_ERR_INVAL);
        assert_null(result);
    }
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++) {
        if (xmlguard_xpath_unsafe(allowed[i])) {
            fail_msg("refused: %s", allowed[i]);
        }
    }
}

static void
test_xpath_non_node_set_is_inval(void **state)
{
    struct tf_state *st = *state;
    struct lyd_node *result = (struct lyd_node *)1;

    assert_int_equal(filter_xpath(st->data, "count(/ietf-interfaces:interfaces/interface)", &result),
                     FLEET_ERR_INVAL);
    assert_null(result);
}

static void
test_xpath_no_data(void **state)
{
    struct lyd_node *result = (struct lyd_node *)1;

    (void)state;
    assert_int_equal(filter_xpath(NULL, "/ietf-interfaces:interfaces", &result), FLEET_OK);
    assert_null(result);
}

static void
test_xpath_key_lookup_in_10000_entries(void **state)
{
    struct tf_state *st = *state;
    struct lyd_node *big = tf_big_data(st->ctx), *result = NULL;
    char *printed;

    assert_int_equal(filter_xpath(big, "/ietf-interfaces:interfaces/interface[name='if1234']", &result),
                     FLEET_OK);
    printed = tu_print(result);
    assert_string_equal(printed,
                        TF_IFS_OPEN "<interface><name>if1234</name>" TF_ETH_TYPE "</interface>" TF_IFS_CLOSE);
    free(printed);
    lyd_free_all(result);
    lyd_free_all(big);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_subtree_empty_filter_selects_nothing),
        cmocka_unit_test(test_subtree_no_data_selects_nothing),
        cmocka_unit_test(test_subtree_selection_selects_whole_subtree),
        cmocka_unit_test(test_subtree_containment_and_selection),
        cmocka_unit_test(test_subtree_content_match_by_key),
        cmocka_unit_test(test_subtree_multiple_content_matches_must_all_match),
        cmocka_unit_test(test_subtree_content_match_failure_excludes_entry),
        cmocka_unit_test(test_subtree_selection_of_missing_node_is_empty),
        cmocka_unit_test(test_subtree_namespace_less_node_matches_any),
        cmocka_unit_test(test_subtree_wrong_namespace_excludes),
        cmocka_unit_test(test_subtree_leaf_list_content_match),
        cmocka_unit_test(test_subtree_presence_container_content_match),
        cmocka_unit_test(test_subtree_nested_lists),
        cmocka_unit_test(test_subtree_top_level_multiple_filters),
        cmocka_unit_test(test_subtree_overlapping_filters_merge),
        cmocka_unit_test(test_subtree_source_tree_unchanged),
        cmocka_unit_test(test_subtree_key_match_in_10000_entries),
        cmocka_unit_test(test_xpath_selects_node_with_ancestors_and_keys),
        cmocka_unit_test(test_xpath_nested_list_keys),
        cmocka_unit_test(test_xpath_ancestor_and_descendant_not_duplicated),
        cmocka_unit_test(test_xpath_bad_expression_is_inval),
        cmocka_unit_test(test_xpath_unsafe_for_libyang_is_refused_before_it),
        cmocka_unit_test(test_xpath_non_node_set_is_inval),
        cmocka_unit_test(test_xpath_no_data),
        cmocka_unit_test(test_xpath_key_lookup_in_10000_entries),
    };

    return cmocka_run_group_tests(tests, tf_setup, tf_teardown);
}
