/*
 * Unit tests of the edit-config engine (testtool/model/edit.c), the
 * validation after an edit (validate.c) and the copy-on-write datastores
 * (datastore.c). The schemas are loaded with schema_set_load() from a temp
 * folder holding the two test modules below, so the validation plan is the
 * one the server builds. Every edit is a real <edit-config> RPC parsed with
 * lyd_parse_op(), and the engine gets the anyxml <config> content, with the
 * same mix of data nodes, opaque nodes and nc:operation metadata the server
 * sees. Every failed edit is checked to leave the tree byte-identical.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "datastore.h"
#include "edit.h"
#include "edit_err.h"
#include "schema.h"
#include "test_util.h"
#include "validate.h"

#define TE_IF_NS   "urn:ietf:params:xml:ns:yang:ietf-interfaces"
#define TE_IANA_NS "urn:ietf:params:xml:ns:yang:iana-if-type"
#define TE_NC_NS   "urn:ietf:params:xml:ns:netconf:base:1.0"
#define TE_NS      "urn:fleetsim:test:edit"
#define TE_REFS_NS "urn:fleetsim:test:edit-refs"
#define TE_YANG_NS "urn:ietf:params:xml:ns:yang:1"

/* Interfaces in the scale test, and how many each of its edits creates. */
#define TE_SCALE_COUNT    10000
#define TE_SCALE_PER_EDIT 100

/*
 * Constraints checked locally after an edit (validate.c): a list with a
 * mandatory leaf, leaves with defaults, a non-mandatory and a mandatory
 * choice, a user-ordered leaf-list, a presence container holding a
 * non-presence container with a mandatory leaf, a list with min- and
 * max-elements, and state data.
 */
static const char *te_yang = "module fleet-edit-test {\n"
                             "  yang-version 1.1;\n"
                             "  namespace \"" TE_NS "\";\n"
                             "  prefix fet;\n"
                             "  container system {\n"
                             "    leaf hostname { type string; }\n"
                             "    leaf mtu { type uint16 { range \"68..9000\"; } default \"1500\"; }\n"
                             "    leaf-list dns { type string; ordered-by user; }\n"
                             "    choice transport {\n"
                             "      case tcp { leaf tcp-port { type uint16; } }\n"
                             "      case udp {\n"
                             "        leaf udp-port { type uint16; }\n"
                             "        leaf udp-checksum { type boolean; }\n"
                             "      }\n"
                             "    }\n"
                             "    container logging {\n"
                             "      leaf level { type string; default \"info\"; }\n"
                             "      leaf facility { type string; default \"daemon\"; }\n"
                             "      leaf max-size { type uint32; default \"1024\"; }\n"
                             "      leaf rotate { type boolean; default \"true\"; }\n"
                             "    }\n"
                             "    list user {\n"
                             "      key name;\n"
                             "      leaf name { type string; }\n"
                             "      leaf uid { type uint32; mandatory true; }\n"
                             "      leaf shell { type string; default \"/bin/sh\"; }\n"
                             "    }\n"
                             "    container counters { config false; leaf hits { type uint64; } }\n"
                             "  }\n"
                             "  container profile {\n"
                             "    presence \"a profile is configured\";\n"
                             "    choice mode {\n"
                             "      mandatory true;\n"
                             "      leaf fast { type empty; }\n"
                             "      leaf safe { type empty; }\n"
                             "    }\n"
                             "    container auth { leaf secret { type string; mandatory true; } }\n"
                             "    list peer {\n"
                             "      key id;\n"
                             "      min-elements 1;\n"
                             "      max-elements 3;\n"
                             "      leaf id { type uint8; }\n"
                             "    }\n"
                             "  }\n"
                             "}\n";

/* Constraints that span the tree, left to libyang's module validation: leafref (into
 * ietf-interfaces), must, unique, and when on a leaf and on a container. */
static const char *te_refs_yang =
    "module fleet-edit-refs {\n"
    "  yang-version 1.1;\n"
    "  namespace \"" TE_REFS_NS "\";\n"
    "  prefix fer;\n"
    "  import ietf-interfaces { prefix if; }\n"
    "  container refs {\n"
    "    leaf uplink { type leafref { path \"/if:interfaces/if:interface/if:name\"; } }\n"
    "    leaf low { type uint32; }\n"
    "    leaf high {\n"
    "      type uint32;\n"
    "      must \". >= ../low\" { error-message \"high is below low\"; }\n"
    "    }\n"
    "    list route {\n"
    "      key prefix;\n"
    "      unique \"next-hop metric\";\n"
    "      leaf prefix { type string; }\n"
    "      leaf next-hop { type string; }\n"
    "      leaf metric { type uint32; }\n"
    "    }\n"
    "    leaf mode { type string; }\n"
    "    leaf turbo { when \"../mode = 'fast'\"; type boolean; }\n"
    "    leaf level { type string; }\n"
    "    container extras {\n"
    "      when \"../level = 'high'\";\n"
    "      leaf boost { type uint8; }\n"
    "      leaf burst { type uint8; }\n"
    "      leaf window { type uint8; }\n"
    "      leaf label { type string; }\n"
    "    }\n"
    "  }\n"
    "}\n";

/* A container with a when and four children (enough for libyang's child hash table). */
#define TE_EXTRAS "<extras><boost>3</boost><burst>4</burst><window>5</window><label>x</label></extras>"

/* The template every test edits (a device's initial configuration). */
static const char *te_template_xml =
    "<interfaces xmlns=\"" TE_IF_NS "\" xmlns:ianaift=\"" TE_IANA_NS "\">"
    "<interface><name>eth0</name><type>ianaift:ethernetCsmacd</type></interface>"
    "<interface><name>eth1</name><description>spare</description><type>ianaift:ethernetCsmacd</type></"
    "interface>"
    "</interfaces>"
    "<system xmlns=\"" TE_NS "\"><hostname>dev1</hostname><dns>10.0.0.1</dns><dns>10.0.0.2</dns>"
    "<tcp-port>22</tcp-port><user><name>root</name><uid>0</uid><shell>/bin/bash</shell></user></system>"
    "<refs xmlns=\"" TE_REFS_NS "\"><uplink>eth1</uplink><low>1</low><high>5</high>"
    "<route><prefix>10.0.0.0/8</prefix><next-hop>a</next-hop><metric>1</metric></route>"
    "<mode>fast</mode><turbo>true</turbo><level>high</level>" TE_EXTRAS "</refs>";

/* Pieces of the template as tu_print() writes them. */
#define TE_ETH_TYPE "<type xmlns:ianaift=\"" TE_IANA_NS "\">ianaift:ethernetCsmacd</type>"
#define TE_ETH0     "<interface><name>eth0</name>" TE_ETH_TYPE "</interface>"
#define TE_ETH1     "<interface><name>eth1</name><description>spare</description>" TE_ETH_TYPE "</interface>"
#define TE_IFS(x)   "<interfaces xmlns=\"" TE_IF_NS "\">" x "</interfaces>"
#define TE_SYS(x)   "<system xmlns=\"" TE_NS "\">" x "</system>"
#define TE_ROOT     "<user><name>root</name><uid>0</uid><shell>/bin/bash</shell></user>"
#define TE_SYS_BODY                                                                                          \
    "<hostname>dev1</hostname><dns>10.0.0.1</dns><dns>10.0.0.2</dns><tcp-port>22</tcp-port>" TE_ROOT
#define TE_REFS(x) "<refs xmlns=\"" TE_REFS_NS "\">" x "</refs>"
#define TE_ROUTE   "<route><prefix>10.0.0.0/8</prefix><next-hop>a</next-hop><metric>1</metric></route>"
#define TE_REFS_BODY                                                                                         \
    "<uplink>eth1</uplink><low>1</low><high>5</high>" TE_ROUTE                                               \
    "<mode>fast</mode><turbo>true</turbo><level>high</level>" TE_EXTRAS
/* libyang keeps top-level nodes grouped by module, the most recently loaded module first. */
#define TE_PRINTED_WITH(ifs, sys, refs) TE_REFS(refs) TE_SYS(sys) TE_IFS(ifs)
#define TE_TEMPLATE_PRINTED             TE_PRINTED_WITH(TE_ETH0 TE_ETH1, TE_SYS_BODY, TE_REFS_BODY)

/* Openers of config content; nc: is bound on the <rpc> element. */
#define TE_C_IFS "<interfaces xmlns=\"" TE_IF_NS "\" xmlns:ianaift=\"" TE_IANA_NS "\">"
#define TE_C_SYS "<system xmlns=\"" TE_NS "\">"
#define TE_C_PRO "<profile xmlns=\"" TE_NS "\">"
#define TE_C_REF "<refs xmlns=\"" TE_REFS_NS "\">"
/* A complete valid profile. */
#define TE_PROFILE "<fast/><auth><secret>s</secret></auth><peer><id>1</id></peer>"

/* Group state: the schema set and the template, read-only for all tests, and the trees of the running test.
 */
struct te_state {
    struct schema_set set;  /* schemas as the server loads them, plus the test modules */
    char dir[64];           /* temp folder holding the test modules */
    struct lyd_node *tmpl;  /* parsed te_template_xml */
    struct datastore ds;    /* the running test's device; closed by te_case_teardown() */
    struct datastore ds_b;  /* a second device sharing the template; closed likewise */
    struct lyd_node *loose; /* a tree outside any datastore; freed likewise */
};

/* One expected rpc-error; a NULL member must be NULL in the record too. */
struct te_err {
    enum edit_err_type type;
    const char *tag;
    const char *app_tag;
    const char *path;
    const char *message;
    const char *info;
};

/* The options of one edit. */
struct te_opts {
    enum edit_op dflt;
    enum edit_test_option test;
    enum edit_error_option error;
};

static const struct te_opts te_merge = {EDIT_OP_MERGE, EDIT_TEST_THEN_SET, EDIT_STOP_ON_ERROR};

static void
te_write_file(const char *dir, const char *name, const char *text)
{
    char path[128];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

static void
te_remove_file(const char *dir, const char *name)
{
    char path[128];

    snprintf(path, sizeof path, "%s/%s", dir, name);
    unlink(path);
}

static int
te_setup(void **state)
{
    struct te_state *st = calloc(1, sizeof *st);
    const char *src = getenv("FLEETSIM_SOURCE_DIR");
    char schemas[4096];
    char err[512] = "";

    assert_non_null(st);
    /* The project's own modules come from the checkout under test (else the compile-time default). */
    if (src) {
        snprintf(schemas, sizeof schemas, "%s/schemas", src);
        setenv("FLEETSIM_SCHEMA_DIR", schemas, 1);
    }
    snprintf(st->dir, sizeof st->dir, "/tmp/fleet-edit-XXXXXX");
    assert_non_null(mkdtemp(st->dir));
    te_write_file(st->dir, "fleet-edit-test.yang", te_yang);
    te_write_file(st->dir, "fleet-edit-refs.yang", te_refs_yang);
    if (schema_set_load(&st->set, st->dir, err, sizeof err)) {
        fail_msg("schema_set_load: %s", err);
    }
    /* Parsed as fleet.c parses an initial configuration. */
    if (lyd_parse_data_mem(st->set.ctx, te_template_xml, LYD_XML, LYD_PARSE_STRICT | LYD_PARSE_NO_STATE,
                           LYD_VALIDATE_NO_STATE, &st->tmpl)) {
        fail_msg("cannot parse the template: %s", ly_errmsg(st->set.ctx));
    }
    *state = st;
    return 0;
}

static int
te_teardown(void **state)
{
    struct te_state *st = *state;

    lyd_free_all(st->tmpl);
    schema_set_free(&st->set);
    te_remove_file(st->dir, "fleet-edit-test.yang");
    te_remove_file(st->dir, "fleet-edit-refs.yang");
    rmdir(st->dir);
    free(st);
    return 0;
}

/* A parsed <edit-config>; the config content lives in op. */
struct te_rpc {
    struct lyd_node *env;          /* <rpc> envelope (opaque) */
    struct lyd_node *op;           /* the edit-config operation */
    const struct lyd_node *config; /* first node of the <config> content, NULL when empty */
};

static void
te_rpc_parse(struct ly_ctx *ctx, const char *config_xml, struct te_rpc *rpc)
{
    static const char *fmt =
        "<rpc message-id=\"1\" xmlns=\"" TE_NC_NS "\" xmlns:nc=\"" TE_NC_NS "\">"
        "<edit-config><target><running/></target><config>%s</config></edit-config></rpc>";
    struct ly_in *in = NULL;
    struct lyd_node *node = NULL;
    const struct lyd_node_any *any;
    char *xml = NULL;

    memset(rpc, 0, sizeof *rpc);
    assert_int_not_equal(asprintf(&xml, fmt, config_xml), -1);
    assert_int_equal(ly_in_new_memory(xml, &in), LY_SUCCESS);
    if (lyd_parse_op(ctx, NULL, in, LYD_XML, LYD_TYPE_RPC_NETCONF, &rpc->env, &rpc->op)) {
        fail_msg("cannot parse rpc: %s\n%s", ly_errmsg(ctx), xml);
    }
    ly_in_free(in, 0);
    free(xml);
    assert_int_equal(lyd_find_path(rpc->op, "config", 0, &node), LY_SUCCESS);
    any = (const struct lyd_node_any *)node;
    if (any->value_type == LYD_ANYDATA_DATATREE) {
        rpc->config = any->value.tree;
    }
}

static void
te_rpc_free(struct te_rpc *rpc)
{
    lyd_free_all(rpc->op);
    lyd_free_all(rpc->env);
}

/* The test device's running datastore, owned (copied from the template) the way op_edit_config does it. */
static struct lyd_node **
te_own(struct te_state *st)
{
    struct lyd_node **tree = NULL;

    assert_int_equal(ds_own(&st->ds, st->tmpl, DS_RUNNING, &tree), FLEET_OK);
    return tree;
}

/* After every test, failed or not: drop what it built, so a failure cannot leak into the next one. */
static int
te_case_teardown(void **state)
{
    struct te_state *st = *state;
    static const struct datastore empty;

    ds_close(&st->ds);
    ds_close(&st->ds_b);
    lyd_free_all(st->loose);
    st->loose = NULL;
    assert_memory_equal(&st->ds, &empty, sizeof empty);
    assert_memory_equal(&st->ds_b, &empty, sizeof empty);
    return 0;
}

/* Apply one edit; returns the rpc-errors (caller frees) and sets *changed. */
static struct edit_err *
te_edit(struct te_state *st, struct lyd_node **tree, const struct te_opts *o, const char *config_xml,
        int *changed)
{
    struct te_rpc rpc;
    struct edit_request req;
    struct edit_err *errs = NULL;

    te_rpc_parse(st->set.ctx, config_xml, &rpc);
    req = (struct edit_request){
        .config = rpc.config, .default_op = o->dflt, .test_option = o->test, .error_option = o->error};
    *changed = -1;
    assert_int_equal(edit_apply(&st->set, tree, &req, &errs, changed), FLEET_OK);
    te_rpc_free(&rpc);
    return errs;
}

static void
te_print_errs(const struct edit_err *e)
{
    if (!e) {
        print_error("  (no rpc-error)\n");
    }
    for (; e; e = e->next) {
        print_error("  rpc-error type=%s tag=%s app-tag=%s\n    path=%s\n    message=%s\n    info=%s\n",
                    edit_err_type_name(e->type), e->tag, e->app_tag ? e->app_tag : "(null)",
                    e->path ? e->path : "(null)", e->message ? e->message : "(null)",
                    e->info_xml ? e->info_xml : "(null)");
    }
}

static int
te_str_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

static void
te_print_err_mismatch(const struct edit_err *errs, const struct te_err *want)
{
    print_error("expected one rpc-error type=%s tag=%s app-tag=%s\n    path=%s\n    message=%s\n    "
                "info=%s\nactual:\n",
                edit_err_type_name(want->type), want->tag, want->app_tag ? want->app_tag : "(null)",
                want->path ? want->path : "(null)", want->message ? want->message : "(null)",
                want->info ? want->info : "(null)");
    te_print_errs(errs);
}

/* Exactly one rpc-error, equal in every field to @p want? */
static int
te_err_matches(const struct edit_err *errs, const struct te_err *want)
{
    return edit_err_count(errs) == 1 && errs->type == want->type && !strcmp(errs->tag, want->tag) &&
           te_str_eq(errs->app_tag, want->app_tag) && te_str_eq(errs->path, want->path) &&
           te_str_eq(errs->message, want->message) && te_str_eq(errs->info_xml, want->info);
}

/* Require te_err_matches(); takes and frees @p errs. */
static void
te_assert_one_err(struct edit_err *errs, const struct te_err *want)
{
    int same = te_err_matches(errs, want);

    if (!same) {
        te_print_err_mismatch(errs, want);
    }
    edit_err_free(errs);
    assert_true(same);
}

/* Print where two long XML strings part (cmocka cuts long messages). */
static void
te_print_diff(const char *what_a, const char *a, const char *what_b, const char *b)
{
    size_t i = 0;
    size_t from;

    while (a[i] && a[i] == b[i]) {
        i++;
    }
    from = i > 100 ? i - 100 : 0;
    print_error("first difference at byte %zu:\n%s ...%.300s\n%s ...%.300s\n", i, what_a, a + from, what_b,
                b + from);
}

static void
te_assert_tree(const struct lyd_node *tree, const char *expected)
{
    char *printed = tu_print(tree);
    int same = !strcmp(printed, expected);

    if (!same) {
        te_print_diff("expected:", expected, "actual:  ", printed);
    }
    free(printed);
    assert_true(same);
}

/* An edit that must succeed and change the tree. */
static void
te_apply_ok(struct te_state *st, struct lyd_node **tree, const struct te_opts *o, const char *config_xml)
{
    int changed;
    struct edit_err *errs = te_edit(st, tree, o, config_xml, &changed);

    if (errs) {
        print_error("edit %s\nfailed with:\n", config_xml);
        te_print_errs(errs);
        edit_err_free(errs);
        fail();
    }
    assert_int_equal(changed, 1);
}

/* An edit that must fail with exactly @p want and leave the tree byte-identical. */
static void
te_apply_err(struct te_state *st, struct lyd_node **tree, const struct te_opts *o, const char *config_xml,
             const struct te_err *want)
{
    char *before = tu_print(*tree);
    int changed;
    struct edit_err *errs = te_edit(st, tree, o, config_xml, &changed);
    char *after = tu_print(*tree);
    int bad = 0;

    /* Every mismatch is printed before failing, so one run shows all that is wrong. */
    if (!te_err_matches(errs, want)) {
        te_print_err_mismatch(errs, want);
        bad = 1;
    }
    if (changed != 0) {
        print_error("changed is %d after a failed edit\n", changed);
        bad = 1;
    }
    if (strcmp(before, after)) {
        print_error("the failed edit changed the tree\n");
        te_print_diff("before:", before, "after: ", after);
        bad = 1;
    }
    edit_err_free(errs);
    free(before);
    free(after);
    if (bad) {
        fail_msg("edit %s", config_xml);
    }
}

static int
te_exists(const struct lyd_node *tree, const char *path)
{
    struct lyd_node *node = NULL;

    return lyd_find_path(tree, path, 0, &node) == LY_SUCCESS;
}

/* An edit that must succeed without changing anything. */
static void
te_apply_noop(struct te_state *st, struct lyd_node **tree, const struct te_opts *o, const char *config_xml)
{
    char *before = tu_print(*tree);
    int changed;
    struct edit_err *errs = te_edit(st, tree, o, config_xml, &changed);

    char *after = tu_print(*tree);
    int same = !strcmp(before, after);

    if (errs) {
        print_error("edit %s\nfailed with:\n", config_xml);
        te_print_errs(errs);
    }
    if (!same) {
        te_print_diff("before:", before, "after: ", after);
    }
    edit_err_free(errs);
    free(before);
    free(after);
    assert_null(errs);
    assert_int_equal(changed, 0);
    assert_true(same);
}

/* ---- the validation plan ---- */

static void
test_plan_flags_only_modules_with_tree_spanning_constraints(void **state)
{
    struct te_state *st = *state;
    const struct schema_module *refs = schema_find(&st->set, "fleet-edit-refs", NULL);
    const struct schema_module *local = schema_find(&st->set, "fleet-edit-test", NULL);
    const struct schema_module *ifs = schema_find(&st->set, "ietf-interfaces", NULL);

    assert_non_null(refs);
    assert_non_null(local);
    assert_non_null(ifs);
    assert_int_equal(refs->needs_module_validation, 1);
    assert_int_equal(local->needs_module_validation, 0);
    assert_int_equal(ifs->needs_module_validation, 0);
    assert_int_equal(st->set.any_module_validation, 1);
}

static void
test_template_parses_to_the_tree_the_tests_expect(void **state)
{
    struct te_state *st = *state;

    te_assert_tree(st->tmpl, TE_TEMPLATE_PRINTED);
}

/* ---- operations ---- */

static void
test_merge_changes_leaf_value(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);

    te_apply_ok(st, tree, &te_merge, TE_C_SYS "<hostname>dev2</hostname></system>");
    te_assert_tree(*tree, TE_PRINTED_WITH(TE_ETH0 TE_ETH1,
                                          "<hostname>dev2</hostname><dns>10.0.0.1</dns><dns>10.0.0.2</dns>"
                                          "<tcp-port>22</tcp-port>" TE_ROOT,
                                          TE_REFS_BODY));
}

static void
test_merge_same_value_reports_no_change(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);

    te_apply_noop(st, tree, &te_merge, TE_C_SYS "<hostname>dev1</hostname></system>");
    te_assert_tree(*tree, TE_TEMPLATE_PRINTED);
}

static void
test_merge_changes_leaf_of_entry_with_few_children(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);

    /* root has two non-key children, below libyang's child hash table threshold. */
    te_apply_ok(st, tree, &te_merge, TE_C_SYS "<user><name>root</name><uid>5</uid></user></system>");
    te_assert_tree(*tree, TE_PRINTED_WITH(TE_ETH0 TE_ETH1,
                                          "<hostname>dev1</hostname><dns>10.0.0.1</dns><dns>10.0.0.2</dns>"
                                          "<tcp-port>22</tcp-port><user><name>root</name><uid>5</uid>"
                                          "<shell>/bin/bash</shell></user>",
                                          TE_REFS_BODY));
}

static void
test_merge_creates_list_entry_with_its_defaults(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    struct lyd_node *shell = NULL;

    te_apply_ok(st, tree, &te_merge, TE_C_SYS "<user><name>bob</name><uid>7</uid></user></system>");
    te_assert_tree(*tree,
                   TE_PRINTED_WITH(TE_ETH0 TE_ETH1, TE_SYS_BODY "<user><name>bob</name><uid>7</uid></user>",
                                   TE_REFS_BODY));
    /* The new entry got its default, flagged as one (so it is not printed). */
    assert_int_equal(lyd_find_path(*tree, "/fleet-edit-test:system/user[name='bob']/shell", 0, &shell),
                     LY_SUCCESS);
    assert_string_equal(lyd_get_value(shell), "/bin/sh");
    assert_true(shell->flags & LYD_DEFAULT);
}

static void
test_replace_list_entry_drops_its_old_children(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);

    te_apply_ok(st, tree, &te_merge,
                TE_C_SYS "<user nc:operation=\"replace\"><name>root</name><uid>1</uid></user></system>");
    te_assert_tree(*tree, TE_PRINTED_WITH(TE_ETH0 TE_ETH1,
                                          "<hostname>dev1</hostname><dns>10.0.0.1</dns><dns>10.0.0.2</dns>"
                                          "<tcp-port>22</tcp-port><user><name>root</name><uid>1</uid></user>",
                                          TE_REFS_BODY));
}

static void
test_default_operation_replace_drops_unmentioned_top_level_nodes(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    struct te_opts o = {EDIT_OP_REPLACE, EDIT_TEST_THEN_SET, EDIT_STOP_ON_ERROR};

    te_apply_ok(st, tree, &o, TE_C_SYS "<hostname>fresh</hostname></system>");
    te_assert_tree(*tree, TE_SYS("<hostname>fresh</hostname>"));
}

static void
test_create_new_list_entry(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);

    te_apply_ok(st, tree, &te_merge,
                TE_C_IFS
                "<interface nc:operation=\"create\"><name>eth2</name><type>ianaift:ethernetCsmacd</type>"
                "</interface></interfaces>");
    te_assert_tree(*tree,
                   TE_PRINTED_WITH(TE_ETH0 TE_ETH1 "<interface><name>eth2</name>" TE_ETH_TYPE "</interface>",
                                   TE_SYS_BODY, TE_REFS_BODY));
}

static void
test_create_existing_entry_is_data_exists(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    const struct te_err want = {EDIT_ERR_APP,
                                "data-exists",
                                NULL,
                                "/ietf-interfaces:interfaces/interface[name='eth1']",
                                "Data \"/ietf-interfaces:interfaces/interface[name='eth1']\" already exists.",
                                NULL};

    te_apply_err(st, tree, &te_merge,
                 TE_C_IFS "<interface nc:operation=\"create\"><name>eth1</name></interface></interfaces>",
                 &want);
}

static void
test_create_existing_leaf_of_entry_with_few_children_is_data_exists(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    const struct te_err want = {EDIT_ERR_APP,
                                "data-exists",
                                NULL,
                                "/fleet-edit-test:system/user[name='root']/uid",
                                "Data \"/fleet-edit-test:system/user[name='root']/uid\" already exists.",
                                NULL};

    te_apply_err(st, tree, &te_merge,
                 TE_C_SYS "<user><name>root</name><uid nc:operation=\"create\">5</uid></user></system>",
                 &want);
}

static void
test_create_leaf_holding_only_its_default_succeeds(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);

    /* RFC 6243 basic-mode explicit: a default the client never set does not exist. */
    te_apply_ok(st, tree, &te_merge, TE_C_SYS "<mtu nc:operation=\"create\">1500</mtu></system>");
    te_assert_tree(*tree, TE_PRINTED_WITH(TE_ETH0 TE_ETH1,
                                          "<hostname>dev1</hostname><mtu>1500</mtu><dns>10.0.0.1</dns>"
                                          "<dns>10.0.0.2</dns><tcp-port>22</tcp-port>" TE_ROOT,
                                          TE_REFS_BODY));
}

static void
test_delete_existing_entry(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);

    te_apply_ok(st, tree, &te_merge,
                TE_C_IFS "<interface nc:operation=\"delete\"><name>eth0</name></interface></interfaces>");
    te_assert_tree(*tree, TE_PRINTED_WITH(TE_ETH1, TE_SYS_BODY, TE_REFS_BODY));
}

static void
test_delete_missing_entry_is_data_missing(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    const struct te_err want = {
        EDIT_ERR_APP,
        "data-missing",
        NULL,
        "/ietf-interfaces:interfaces/interface[name='eth9']",
        "Data \"/ietf-interfaces:interfaces/interface[name='eth9']\" to delete does not exist.",
        NULL};

    te_apply_err(st, tree, &te_merge,
                 TE_C_IFS "<interface nc:operation=\"delete\"><name>eth9</name></interface></interfaces>",
                 &want);
}

static void
test_remove_existing_entry(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);

    te_apply_ok(st, tree, &te_merge,
                TE_C_IFS "<interface nc:operation=\"remove\"><name>eth0</name></interface></interfaces>");
    te_assert_tree(*tree, TE_PRINTED_WITH(TE_ETH1, TE_SYS_BODY, TE_REFS_BODY));
}

static void
test_remove_missing_entry_is_ok_and_changes_nothing(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);

    te_apply_noop(st, tree, &te_merge,
                  TE_C_IFS "<interface nc:operation=\"remove\"><name>eth9</name></interface></interfaces>");
    te_assert_tree(*tree, TE_TEMPLATE_PRINTED);
}

static void
test_none_with_missing_parent_and_nested_delete_is_data_missing(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = &st->loose;
    struct te_opts o = {EDIT_OP_NONE, EDIT_TEST_THEN_SET, EDIT_STOP_ON_ERROR};
    const struct te_err want = {EDIT_ERR_APP,
                                "data-missing",
                                NULL,
                                "/ietf-interfaces:interfaces/interface[name='eth9']",
                                "Data \"/ietf-interfaces:interfaces/interface[name='eth9']\" does not exist.",
                                NULL};

    /* RFC 6241 7.2: with "none", a level missing from the datastore is data-missing, so a delete never
     * creates its parents (the non-presence container interfaces has no existence of its own and is no such
     * level). */
    te_apply_err(
        st, tree, &o,
        TE_C_IFS
        "<interface><name>eth9</name><description nc:operation=\"delete\"/></interface></interfaces>",
        &want);
    assert_null(*tree);
}

static void
test_none_with_missing_parent_and_nested_merge_is_data_missing(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = &st->loose;
    struct te_opts o = {EDIT_OP_NONE, EDIT_TEST_THEN_SET, EDIT_STOP_ON_ERROR};
    const struct te_err want = {EDIT_ERR_APP,
                                "data-missing",
                                NULL,
                                "/ietf-interfaces:interfaces/interface[name='eth9']",
                                "Data \"/ietf-interfaces:interfaces/interface[name='eth9']\" does not exist.",
                                NULL};

    te_apply_err(st, tree, &o,
                 TE_C_IFS "<interface><name>eth9</name><description nc:operation=\"merge\">x</description>"
                          "</interface></interfaces>",
                 &want);
    assert_null(*tree);
}

static void
test_none_with_nested_create_creates_parent(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = &st->loose;
    struct te_opts o = {EDIT_OP_NONE, EDIT_TEST_THEN_SET, EDIT_STOP_ON_ERROR};

    te_apply_ok(st, tree, &o,
                TE_C_IFS
                "<interface nc:operation=\"create\"><name>eth5</name><type>ianaift:ethernetCsmacd</type>"
                "</interface></interfaces>");
    te_assert_tree(*tree, TE_IFS("<interface><name>eth5</name>" TE_ETH_TYPE "</interface>"));
}

static void
test_none_applies_only_the_nested_operations(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    struct te_opts o = {EDIT_OP_NONE, EDIT_TEST_THEN_SET, EDIT_STOP_ON_ERROR};

    /* mtu carries operation none (inherited): only hostname, with its own merge, changes. */
    te_apply_ok(st, tree, &o,
                TE_C_SYS "<mtu>9000</mtu><hostname nc:operation=\"merge\">dev9</hostname></system>");
    te_assert_tree(*tree, TE_PRINTED_WITH(TE_ETH0 TE_ETH1,
                                          "<hostname>dev9</hostname><dns>10.0.0.1</dns><dns>10.0.0.2</dns>"
                                          "<tcp-port>22</tcp-port>" TE_ROOT,
                                          TE_REFS_BODY));
}

static void
test_user_ordered_leaf_list_keeps_order_on_merge_delete_and_rollback(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    const struct te_err want = {EDIT_ERR_APP,
                                "data-missing",
                                NULL,
                                "/fleet-edit-test:system/dns[.='9.9.9.9']",
                                "Data \"/fleet-edit-test:system/dns[.='9.9.9.9']\" to delete does not exist.",
                                NULL};

    te_apply_ok(st, tree, &te_merge, TE_C_SYS "<dns>10.0.0.0</dns></system>");
    te_apply_ok(st, tree, &te_merge, TE_C_SYS "<dns nc:operation=\"delete\">10.0.0.2</dns></system>");
    te_assert_tree(*tree, TE_PRINTED_WITH(TE_ETH0 TE_ETH1,
                                          "<hostname>dev1</hostname><dns>10.0.0.1</dns><dns>10.0.0.0</dns>"
                                          "<tcp-port>22</tcp-port>" TE_ROOT,
                                          TE_REFS_BODY));
    /* The first entry is taken out and must come back first when the edit fails. */
    te_apply_err(st, tree, &te_merge,
                 TE_C_SYS
                 "<dns nc:operation=\"delete\">10.0.0.1</dns><dns nc:operation=\"delete\">9.9.9.9</dns>"
                 "</system>",
                 &want);
}

static void
test_user_ordered_insert_first_puts_entry_first(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);

    te_apply_ok(st, tree, &te_merge,
                TE_C_SYS "<dns xmlns:yang=\"" TE_YANG_NS "\" yang:insert=\"first\">9.9.9.9</dns></system>");
    te_assert_tree(*tree, TE_PRINTED_WITH(TE_ETH0 TE_ETH1,
                                          "<hostname>dev1</hostname><dns>9.9.9.9</dns><dns>10.0.0.1</dns>"
                                          "<dns>10.0.0.2</dns><tcp-port>22</tcp-port>" TE_ROOT,
                                          TE_REFS_BODY));
}

static void
test_user_ordered_insert_after_puts_entry_after_named_one(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);

    te_apply_ok(st, tree, &te_merge,
                TE_C_SYS "<dns xmlns:yang=\"" TE_YANG_NS
                         "\" yang:insert=\"after\" yang:value=\"10.0.0.1\">9.9.9.9</dns>"
                         "</system>");
    te_assert_tree(*tree, TE_PRINTED_WITH(TE_ETH0 TE_ETH1,
                                          "<hostname>dev1</hostname><dns>10.0.0.1</dns><dns>9.9.9.9</dns>"
                                          "<dns>10.0.0.2</dns><tcp-port>22</tcp-port>" TE_ROOT,
                                          TE_REFS_BODY));
}

static void
test_presence_container_create_and_delete(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);

    te_apply_ok(st, tree, &te_merge,
                "<profile xmlns=\"" TE_NS "\" nc:operation=\"create\">" TE_PROFILE "</profile>");
    te_assert_tree(*tree, TE_REFS(TE_REFS_BODY) TE_SYS(TE_SYS_BODY) "<profile xmlns=\"" TE_NS "\">" TE_PROFILE
                                                                    "</profile>" TE_IFS(TE_ETH0 TE_ETH1));
    te_apply_ok(st, tree, &te_merge, "<profile xmlns=\"" TE_NS "\" nc:operation=\"delete\"/>");
    te_assert_tree(*tree, TE_TEMPLATE_PRINTED);
}

static void
test_choice_case_switch_deletes_other_case_nodes(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);

    te_apply_ok(st, tree, &te_merge, TE_C_SYS "<udp-port>53</udp-port></system>");
    te_assert_tree(*tree, TE_PRINTED_WITH(TE_ETH0 TE_ETH1,
                                          "<hostname>dev1</hostname><dns>10.0.0.1</dns><dns>10.0.0.2</dns>"
                                          "<udp-port>53</udp-port>" TE_ROOT,
                                          TE_REFS_BODY));
}

static void
test_choice_case_switch_in_failed_edit_keeps_other_case(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    const struct te_err want = {EDIT_ERR_APP,
                                "unknown-element",
                                NULL,
                                "/fleet-edit-test:system/bogus",
                                "Unknown element \"bogus\".",
                                "<bad-element>bogus</bad-element>"};

    te_apply_err(st, tree, &te_merge, TE_C_SYS "<udp-port>53</udp-port><bogus>1</bogus></system>", &want);
}

static void
test_both_cases_of_a_choice_in_one_edit_is_bad_element(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    const struct te_err want = {EDIT_ERR_APP,
                                "bad-element",
                                NULL,
                                "/fleet-edit-test:system/udp-port",
                                "More than one case of choice \"transport\" in the request.",
                                "<bad-element>udp-port</bad-element>"};

    /* RFC 7950 section 8.3.1: data of more than one case branch is refused, not resolved. */
    te_apply_err(st, tree, &te_merge, TE_C_SYS "<tcp-port>23</tcp-port><udp-port>53</udp-port></system>",
                 &want);
}

static void
test_delete_leaf_with_default_brings_default_back(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    struct lyd_node *mtu = NULL;

    te_apply_ok(st, tree, &te_merge, TE_C_SYS "<mtu>9000</mtu></system>");
    te_apply_ok(st, tree, &te_merge, TE_C_SYS "<mtu nc:operation=\"delete\">9000</mtu></system>");
    te_assert_tree(*tree, TE_TEMPLATE_PRINTED);
    assert_int_equal(lyd_find_path(*tree, "/fleet-edit-test:system/mtu", 0, &mtu), LY_SUCCESS);
    assert_string_equal(lyd_get_value(mtu), "1500");
    assert_true(mtu->flags & LYD_DEFAULT);
}

static void
test_delete_of_empty_leaf_element_deletes_the_leaf(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    struct lyd_node *mtu = NULL;

    /* <mtu/> is how clients name a leaf to delete; "" is no uint16, but delete needs no value. */
    te_apply_ok(st, tree, &te_merge, TE_C_SYS "<mtu>9000</mtu></system>");
    te_apply_ok(st, tree, &te_merge, TE_C_SYS "<mtu nc:operation=\"delete\"/></system>");
    te_assert_tree(*tree, TE_TEMPLATE_PRINTED);
    assert_int_equal(lyd_find_path(*tree, "/fleet-edit-test:system/mtu", 0, &mtu), LY_SUCCESS);
    assert_string_equal(lyd_get_value(mtu), "1500");
    assert_true(mtu->flags & LYD_DEFAULT);
}

static void
test_remove_of_empty_leaf_element_removes_the_leaf(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);

    te_apply_ok(st, tree, &te_merge, TE_C_SYS "<tcp-port nc:operation=\"remove\"/></system>");
    te_assert_tree(*tree,
                   TE_PRINTED_WITH(TE_ETH0 TE_ETH1,
                                   "<hostname>dev1</hostname><dns>10.0.0.1</dns><dns>10.0.0.2</dns>" TE_ROOT,
                                   TE_REFS_BODY));
}

static void
test_delete_leaf_holding_only_its_default_is_data_missing(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    const struct te_err want = {EDIT_ERR_APP,
                                "data-missing",
                                NULL,
                                "/fleet-edit-test:system/mtu",
                                "Data \"/fleet-edit-test:system/mtu\" to delete does not exist.",
                                NULL};

    te_apply_err(st, tree, &te_merge, TE_C_SYS "<mtu nc:operation=\"delete\">1500</mtu></system>", &want);
}

/* ---- errors found while applying ---- */

static void
test_unknown_element_is_unknown_element_with_bad_element(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    const struct te_err want = {EDIT_ERR_APP,
                                "unknown-element",
                                NULL,
                                "/fleet-edit-test:system/bogus",
                                "Unknown element \"bogus\".",
                                "<bad-element>bogus</bad-element>"};

    te_apply_err(st, tree, &te_merge, TE_C_SYS "<hostname>x</hostname><bogus>1</bogus></system>", &want);
}

static void
test_unknown_namespace_is_unknown_namespace(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    const struct te_err want = {
        EDIT_ERR_APP,
        "unknown-namespace",
        NULL,
        NULL,
        "Unknown namespace \"urn:nowhere\" of element \"gadget\".",
        "<bad-element>gadget</bad-element><bad-namespace>urn:nowhere</bad-namespace>"};

    te_apply_err(st, tree, &te_merge,
                 TE_C_SYS "<hostname>x</hostname></system><gadget xmlns=\"urn:nowhere\"/>", &want);
}

static void
test_invalid_value_is_invalid_value(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    const struct te_err want = {EDIT_ERR_APP,
                                "invalid-value",
                                NULL,
                                "/fleet-edit-test:system/mtu",
                                "Unsatisfied range - value \"10\" is out of the allowed range.",
                                NULL};

    te_apply_err(st, tree, &te_merge, TE_C_SYS "<hostname>x</hostname><mtu>10</mtu></system>", &want);
}

static void
test_state_node_in_config_is_invalid_value(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    const struct te_err want = {EDIT_ERR_APP,
                                "invalid-value",
                                NULL,
                                "/fleet-edit-test:system/counters",
                                "Node \"counters\" is not configuration.",
                                NULL};

    te_apply_err(st, tree, &te_merge,
                 TE_C_SYS "<hostname>x</hostname><counters><hits>5</hits></counters></system>", &want);
}

static void
test_bad_operation_attribute_is_refused_before_the_engine(void **state)
{
    struct te_state *st = *state;
    struct ly_in *in = NULL;
    struct lyd_node *env = NULL;
    struct lyd_node *op = NULL;
    const char *xml = "<rpc message-id=\"1\" xmlns=\"" TE_NC_NS "\" xmlns:nc=\"" TE_NC_NS "\">"
                      "<edit-config><target><running/></target><config>" TE_C_SYS
                      "<hostname nc:operation=\"bogus\">x</hostname></system></config></edit-config></rpc>";

    /*
     * nc:operation is an enumeration annotation of ietf-netconf: libyang refuses the
     * whole RPC, so the engine never sees the value and rpc.c owes the client the
     * bad-attribute error (RFC 6241 appendix A).
     */
    assert_int_equal(ly_in_new_memory(xml, &in), LY_SUCCESS);
    assert_int_equal(lyd_parse_op(st->set.ctx, NULL, in, LYD_XML, LYD_TYPE_RPC_NETCONF, &env, &op),
                     LY_EVALID);
    assert_string_equal(ly_errmsg(st->set.ctx), "Invalid enumeration value \"bogus\".");
    ly_in_free(in, 0);
    lyd_free_all(env);
    lyd_free_all(op);
}

/* ---- errors found by validation ---- */

static void
test_deleting_np_container_with_mandatory_leaf_is_data_missing(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    const struct te_err want = {EDIT_ERR_APP,
                                "data-missing",
                                NULL,
                                "/fleet-edit-test:profile/auth/secret",
                                "Mandatory node \"secret\" instance does not exist.",
                                NULL};

    te_apply_ok(st, tree, &te_merge, TE_C_PRO TE_PROFILE "</profile>");
    te_apply_err(st, tree, &te_merge, TE_C_PRO "<auth nc:operation=\"delete\"/></profile>", &want);
}

static void
test_deleting_only_case_of_mandatory_choice_is_missing_choice(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    const struct te_err want = {EDIT_ERR_APP,
                                "data-missing",
                                "missing-choice",
                                "/fleet-edit-test:profile/mode",
                                "Missing mandatory choice \"mode\".",
                                NULL};

    te_apply_ok(st, tree, &te_merge, TE_C_PRO TE_PROFILE "</profile>");
    te_apply_err(st, tree, &te_merge, TE_C_PRO "<fast nc:operation=\"delete\"/></profile>", &want);
    /* Switching to the other case keeps the choice satisfied. */
    te_apply_ok(st, tree, &te_merge, TE_C_PRO "<safe/></profile>");
    te_assert_tree(*tree,
                   TE_REFS(TE_REFS_BODY) TE_SYS(
                       TE_SYS_BODY) "<profile xmlns=\"" TE_NS "\"><safe/>"
                                    "<auth><secret>s</secret></auth><peer><id>1</id></peer></profile>" TE_IFS(
                                        TE_ETH0 TE_ETH1));
}

static void
test_list_entry_without_mandatory_leaf_is_data_missing(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    const struct te_err want = {EDIT_ERR_APP,
                                "data-missing",
                                NULL,
                                "/fleet-edit-test:system/user[name='bob']/uid",
                                "Mandatory node \"uid\" instance does not exist.",
                                NULL};

    te_apply_err(st, tree, &te_merge, TE_C_SYS "<user><name>bob</name></user></system>", &want);
}

static void
test_deleting_mandatory_leaf_is_data_missing(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    const struct te_err want = {EDIT_ERR_APP,
                                "data-missing",
                                NULL,
                                "/fleet-edit-test:system/user[name='root']/uid",
                                "Mandatory node \"uid\" instance does not exist.",
                                NULL};

    te_apply_err(st, tree, &te_merge,
                 TE_C_SYS "<user><name>root</name><uid nc:operation=\"delete\">0</uid></user></system>",
                 &want);
}

static void
test_presence_container_without_mandatory_choice_is_missing_choice(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    const struct te_err want = {EDIT_ERR_APP,
                                "data-missing",
                                "missing-choice",
                                "/fleet-edit-test:profile/mode",
                                "Missing mandatory choice \"mode\".",
                                NULL};

    te_apply_err(st, tree, &te_merge,
                 TE_C_PRO "<auth><secret>s</secret></auth><peer><id>1</id></peer></profile>", &want);
}

static void
test_np_container_without_mandatory_leaf_is_data_missing(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    const struct te_err want = {EDIT_ERR_APP,
                                "data-missing",
                                NULL,
                                "/fleet-edit-test:profile/auth/secret",
                                "Mandatory node \"secret\" instance does not exist.",
                                NULL};

    te_apply_err(st, tree, &te_merge, TE_C_PRO "<fast/><peer><id>1</id></peer></profile>", &want);
}

static void
test_too_few_elements_is_operation_failed(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    const struct te_err want = {EDIT_ERR_APP,
                                "operation-failed",
                                "too-few-elements",
                                "/fleet-edit-test:profile/peer",
                                "Too few \"peer\" instances.",
                                NULL};

    te_apply_err(st, tree, &te_merge, TE_C_PRO "<fast/><auth><secret>s</secret></auth></profile>", &want);
    /* Deleting the last entry of an existing profile falls under min-elements too. */
    te_apply_ok(st, tree, &te_merge, TE_C_PRO TE_PROFILE "</profile>");
    te_apply_err(st, tree, &te_merge, TE_C_PRO "<peer nc:operation=\"delete\"><id>1</id></peer></profile>",
                 &want);
}

static void
test_too_many_elements_is_operation_failed(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    const struct te_err want = {EDIT_ERR_APP,
                                "operation-failed",
                                "too-many-elements",
                                "/fleet-edit-test:profile/peer[id='4']",
                                "Too many \"peer\" instances.",
                                NULL};

    te_apply_ok(st, tree, &te_merge,
                TE_C_PRO TE_PROFILE "<peer><id>2</id></peer><peer><id>3</id></peer></profile>");
    te_apply_err(st, tree, &te_merge, TE_C_PRO "<peer><id>4</id></peer></profile>", &want);
}

static void
test_leafref_to_missing_target_is_data_missing_instance_required(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    const struct te_err want = {EDIT_ERR_APP,
                                "data-missing",
                                "instance-required",
                                "/fleet-edit-refs:refs/uplink",
                                "Invalid leafref value \"eth9\" - no target instance "
                                "\"/if:interfaces/if:interface/if:name\" with the same "
                                "value.",
                                NULL};

    te_apply_err(st, tree, &te_merge, TE_C_REF "<uplink>eth9</uplink></refs>", &want);
}

static void
test_deleting_leafref_target_is_data_missing_instance_required(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    const struct te_err want = {EDIT_ERR_APP,
                                "data-missing",
                                "instance-required",
                                "/fleet-edit-refs:refs/uplink",
                                "Invalid leafref value \"eth1\" - no target instance "
                                "\"/if:interfaces/if:interface/if:name\" with the same "
                                "value.",
                                NULL};

    /* The edit touches only ietf-interfaces; the reference lives in another module. */
    te_apply_err(st, tree, &te_merge,
                 TE_C_IFS "<interface nc:operation=\"delete\"><name>eth1</name></interface></interfaces>",
                 &want);
}

static void
test_must_violation_is_operation_failed(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    const struct te_err want = {EDIT_ERR_APP,        "operation-failed",
                                "must-violation",    "/fleet-edit-refs:refs/high",
                                "high is below low", NULL};

    te_apply_err(st, tree, &te_merge, TE_C_REF "<low>10</low></refs>", &want);
}

static void
test_unique_violation_is_operation_failed_data_not_unique(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    const struct te_err want = {EDIT_ERR_APP,
                                "operation-failed",
                                "data-not-unique",
                                "/fleet-edit-refs:refs/route[prefix='192.168.0.0/16']",
                                "Unique data leaf(s) \"next-hop metric\" not satisfied in "
                                "\"/fleet-edit-refs:refs/route[prefix='10.0.0.0/8']\" "
                                "and \"/fleet-edit-refs:refs/route[prefix='192.168.0.0/16']\".",
                                NULL};

    te_apply_err(st, tree, &te_merge,
                 TE_C_REF
                 "<route><prefix>192.168.0.0/16</prefix><next-hop>a</next-hop><metric>1</metric></route>"
                 "</refs>",
                 &want);
}

/* ---- error-option and test-option ---- */

/* Many kinds of change in one edit, failing at its last node. */
#define TE_BIG_FAILING_EDIT                                                                                  \
    TE_C_IFS                                                                                                 \
    "<interface nc:operation=\"delete\"><name>eth1</name></interface>"                                       \
    "<interface><name>eth7</name><type>ianaift:ethernetCsmacd</type></interface></interfaces>" TE_C_SYS      \
    "<hostname>other</hostname><mtu>9000</mtu><dns "                                                         \
    "nc:operation=\"delete\">10.0.0.1</dns><dns>1.1.1.1</dns>"                                               \
    "<udp-port>53</udp-port><user nc:operation=\"replace\"><name>root</name><uid>3</uid></user>"             \
    "<user><name>eve</name><uid>4</uid></user></system>" TE_C_PRO TE_PROFILE "</profile>" TE_C_REF           \
    "<low>2</low><route nc:operation=\"remove\"><prefix>10.0.0.0/8</prefix></route></refs>"                  \
    "<gadget xmlns=\"urn:nowhere\"/>"

static void
test_stop_on_error_failed_edit_leaves_tree_identical(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    struct te_opts o = {EDIT_OP_MERGE, EDIT_TEST_THEN_SET, EDIT_STOP_ON_ERROR};
    const struct te_err want = {
        EDIT_ERR_APP,
        "unknown-namespace",
        NULL,
        NULL,
        "Unknown namespace \"urn:nowhere\" of element \"gadget\".",
        "<bad-element>gadget</bad-element><bad-namespace>urn:nowhere</bad-namespace>"};

    te_apply_err(st, tree, &o, TE_BIG_FAILING_EDIT, &want);
    te_assert_tree(*tree, TE_TEMPLATE_PRINTED);
}

static void
test_rollback_on_error_failed_validation_leaves_tree_identical(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    struct te_opts o = {EDIT_OP_MERGE, EDIT_TEST_THEN_SET, EDIT_ROLLBACK_ON_ERROR};
    const struct te_err want = {EDIT_ERR_APP,
                                "data-missing",
                                NULL,
                                "/fleet-edit-test:system/user[name='eve']/uid",
                                "Mandatory node \"uid\" instance does not exist.",
                                NULL};

    /* Everything applies; validation then finds eve without her mandatory uid. */
    te_apply_err(
        st, tree, &o,
        TE_C_IFS
        "<interface nc:operation=\"delete\"><name>eth1</name></interface>"
        "<interface><name>eth7</name><type>ianaift:ethernetCsmacd</type></interface></interfaces>" TE_C_SYS
        "<hostname>other</hostname><mtu>9000</mtu><dns nc:operation=\"delete\">10.0.0.1</dns>"
        "<udp-port>53</udp-port><user nc:operation=\"replace\"><name>root</name><uid>3</uid></user>"
        "<user><name>eve</name></user></system>" TE_C_PRO TE_PROFILE "</profile>" TE_C_REF
        "<low>2</low><route nc:operation=\"remove\"><prefix>10.0.0.0/8</prefix></route></refs>",
        &want);
    te_assert_tree(*tree, TE_TEMPLATE_PRINTED);
}

static void
test_failed_delete_of_first_list_entry_keeps_entry_order(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    const struct te_err want = {EDIT_ERR_APP,
                                "unknown-element",
                                NULL,
                                "/ietf-interfaces:interfaces/bogus",
                                "Unknown element \"bogus\".",
                                "<bad-element>bogus</bad-element>"};

    /* eth0 comes back in front of eth1, not after it. */
    te_apply_err(st, tree, &te_merge,
                 TE_C_IFS
                 "<interface nc:operation=\"delete\"><name>eth0</name></interface><bogus/></interfaces>",
                 &want);
}

static void
test_rollback_restores_default_flag_of_np_container(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    struct lyd_node *logging = NULL;
    const struct te_err bogus = {EDIT_ERR_APP,
                                 "unknown-element",
                                 NULL,
                                 "/fleet-edit-test:system/bogus",
                                 "Unknown element \"bogus\".",
                                 "<bad-element>bogus</bad-element>"};
    const struct te_err missing = {EDIT_ERR_APP,
                                   "data-missing",
                                   NULL,
                                   "/fleet-edit-test:system/logging",
                                   "Data \"/fleet-edit-test:system/logging\" to delete does not exist.",
                                   NULL};

    /* logging holds only default leaves (four: enough for libyang's child hash table), so it is a default
     * container. */
    assert_int_equal(lyd_find_path(*tree, "/fleet-edit-test:system/logging", 0, &logging), LY_SUCCESS);
    assert_true(logging->flags & LYD_DEFAULT);
    te_apply_err(st, tree, &te_merge, TE_C_SYS "<logging><level>debug</level></logging><bogus/></system>",
                 &bogus);
    assert_int_equal(lyd_find_path(*tree, "/fleet-edit-test:system/logging", 0, &logging), LY_SUCCESS);
    if (!(logging->flags & LYD_DEFAULT)) {
        print_error("the failed edit left logging without its LYD_DEFAULT flag\n");
    }
    assert_true(logging->flags & LYD_DEFAULT);
    /* What the flag means on the wire: the container still does not exist for delete. */
    te_apply_err(st, tree, &te_merge, TE_C_SYS "<logging nc:operation=\"delete\"/></system>", &missing);
}

static void
test_test_only_valid_edit_changes_nothing(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    struct te_opts o = {EDIT_OP_MERGE, EDIT_TEST_ONLY, EDIT_STOP_ON_ERROR};

    te_apply_noop(st, tree, &o,
                  TE_C_SYS "<hostname>other</hostname><udp-port>1</udp-port></system>" TE_C_PRO TE_PROFILE
                           "</profile>");
    te_assert_tree(*tree, TE_TEMPLATE_PRINTED);
}

static void
test_test_only_invalid_edit_reports_error_and_changes_nothing(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    struct te_opts o = {EDIT_OP_MERGE, EDIT_TEST_ONLY, EDIT_STOP_ON_ERROR};
    const struct te_err want = {EDIT_ERR_APP,
                                "data-missing",
                                NULL,
                                "/fleet-edit-test:system/user[name='bob']/uid",
                                "Mandatory node \"uid\" instance does not exist.",
                                NULL};

    te_apply_err(st, tree, &o, TE_C_SYS "<hostname>other</hostname><user><name>bob</name></user></system>",
                 &want);
    te_assert_tree(*tree, TE_TEMPLATE_PRINTED);
}

/*
 * An edit that would make the "when" of existing data false is refused
 * (libyang would delete that data implicitly, outside the undo log); the
 * tree stays exactly as it was, for test-only too.
 */
static void
test_test_only_turning_when_false_is_refused(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    struct te_opts o = {EDIT_OP_MERGE, EDIT_TEST_ONLY, EDIT_STOP_ON_ERROR};
    const struct te_err want = {EDIT_ERR_APP,
                                "unknown-element",
                                NULL,
                                "/fleet-edit-refs:refs/extras",
                                "When condition \"../level = 'high'\" not satisfied.",
                                "<bad-element>extras</bad-element>"};

    te_apply_err(st, tree, &o, TE_C_REF "<mode>slow</mode><level>low</level></refs>", &want);
    te_assert_tree(*tree, TE_TEMPLATE_PRINTED);
}

static void
test_edit_turning_when_false_is_refused_and_keeps_node(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    const struct te_err want = {EDIT_ERR_APP,
                                "unknown-element",
                                NULL,
                                "/fleet-edit-refs:refs/turbo",
                                "When condition \"../mode = 'fast'\" not satisfied.",
                                "<bad-element>turbo</bad-element>"};

    te_apply_err(st, tree, &te_merge, TE_C_REF "<mode>slow</mode><low>10</low></refs>", &want);
}

static void
test_node_whose_when_is_false_is_unknown_element(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    const struct te_err want = {EDIT_ERR_APP,
                                "unknown-element",
                                NULL,
                                "/fleet-edit-refs:refs/turbo",
                                "When condition \"../mode = 'fast'\" not satisfied.",
                                "<bad-element>turbo</bad-element>"};

    /* RFC 7950 section 8.3.1: data for a node whose when is false is an unknown element. */
    te_apply_err(st, tree, &te_merge, TE_C_REF "<mode>slow</mode><turbo>false</turbo></refs>", &want);
}

static void
test_edit_changing_node_whose_when_turns_false_is_refused_and_restored(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    const struct te_err want = {EDIT_ERR_APP,
                                "unknown-element",
                                NULL,
                                "/fleet-edit-refs:refs/extras",
                                "When condition \"../level = 'high'\" not satisfied.",
                                "<bad-element>extras</bad-element>"};

    /* boost is changed by the edit (so it is in the undo log); its when turning false must not free it. */
    te_apply_err(st, tree, &te_merge,
                 TE_C_REF "<extras><boost>9</boost></extras><level>low</level><low>10</low></refs>", &want);
}

/*
 * Found by fuzzing: with default-operation replace, <config> holding an
 * opaque top-level node (a container with text) crashed libyang's sibling
 * search. It must be an error, and the tree must stay as it was.
 */
static void
test_replace_with_opaque_top_level_node_is_an_error_not_a_crash(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    struct te_opts o = {EDIT_OP_REPLACE, EDIT_TEST_THEN_SET, EDIT_STOP_ON_ERROR};
    const struct te_err want = {EDIT_ERR_APP,
                                "bad-element",
                                NULL,
                                "/ietf-interfaces:interfaces",
                                "Invalid element \"interfaces\".",
                                "<bad-element>interfaces</bad-element>"};

    te_apply_err(st, tree, &o, "<interfaces xmlns=\"" TE_IF_NS "\">p</interfaces>", &want);
}

static void
test_continue_on_error_keeps_valid_part_and_reports_error(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    struct te_opts o = {EDIT_OP_MERGE, EDIT_TEST_THEN_SET, EDIT_CONTINUE_ON_ERROR};
    const struct te_err want = {EDIT_ERR_APP,
                                "unknown-element",
                                NULL,
                                "/fleet-edit-test:system/bogus",
                                "Unknown element \"bogus\".",
                                "<bad-element>bogus</bad-element>"};
    int changed;
    struct edit_err *errs =
        te_edit(st, tree, &o, TE_C_SYS "<bogus>1</bogus><hostname>kept</hostname></system>", &changed);

    te_assert_one_err(errs, &want);
    assert_int_equal(changed, 1);
    te_assert_tree(*tree, TE_PRINTED_WITH(TE_ETH0 TE_ETH1,
                                          "<hostname>kept</hostname><dns>10.0.0.1</dns><dns>10.0.0.2</dns>"
                                          "<tcp-port>22</tcp-port>" TE_ROOT,
                                          TE_REFS_BODY));
}

/* ---- copy-on-write datastores ---- */

static void
test_ds_read_of_untouched_device_is_template_pointer(void **state)
{
    struct te_state *st = *state;
    struct datastore *ds = &st->ds;

    assert_ptr_equal(ds_read(ds, st->tmpl, DS_RUNNING), st->tmpl);
    assert_ptr_equal(ds_read(ds, st->tmpl, DS_STARTUP), st->tmpl);
    assert_ptr_equal(ds_read(ds, st->tmpl, DS_CANDIDATE), st->tmpl);
    for (int i = 0; i < DS_COUNT; i++) {
        assert_int_equal(ds->own[i], 0);
        assert_null(ds->tree[i]);
    }
}

static void
test_ds_own_copies_once(void **state)
{
    struct te_state *st = *state;
    struct datastore *ds = &st->ds;
    struct lyd_node **first = NULL;
    struct lyd_node **second = NULL;
    struct lyd_node *copy;

    assert_int_equal(ds_own(ds, st->tmpl, DS_RUNNING, &first), FLEET_OK);
    copy = *first;
    assert_non_null(copy);
    assert_ptr_not_equal(copy, st->tmpl);
    assert_ptr_equal(ds_read(ds, st->tmpl, DS_RUNNING), copy);
    te_assert_tree(copy, TE_TEMPLATE_PRINTED);
    assert_int_equal(ds_own(ds, st->tmpl, DS_RUNNING, &second), FLEET_OK);
    assert_ptr_equal(second, first);
    assert_ptr_equal(*second, copy);
    /* The candidate now reads through to running's own tree. */
    assert_ptr_equal(ds_read(ds, st->tmpl, DS_CANDIDATE), copy);
}

static void
test_ds_edit_on_one_device_does_not_show_on_another(void **state)
{
    struct te_state *st = *state;
    struct datastore *a = &st->ds;
    struct datastore *b = &st->ds_b;
    struct lyd_node **tree = NULL;

    assert_int_equal(ds_own(a, st->tmpl, DS_RUNNING, &tree), FLEET_OK);
    te_apply_ok(st, tree, &te_merge, TE_C_SYS "<hostname>only-a</hostname></system>");
    assert_ptr_equal(ds_read(b, st->tmpl, DS_RUNNING), st->tmpl);
    te_assert_tree(ds_read(b, st->tmpl, DS_RUNNING), TE_TEMPLATE_PRINTED);
    te_assert_tree(st->tmpl, TE_TEMPLATE_PRINTED);
    te_assert_tree(ds_read(a, st->tmpl, DS_RUNNING),
                   TE_PRINTED_WITH(TE_ETH0 TE_ETH1,
                                   "<hostname>only-a</hostname><dns>10.0.0.1</dns><dns>10.0.0.2</dns>"
                                   "<tcp-port>22</tcp-port>" TE_ROOT,
                                   TE_REFS_BODY));
}

static void
test_ds_commit_moves_candidate_into_running(void **state)
{
    struct te_state *st = *state;
    struct datastore *ds = &st->ds;
    struct lyd_node **tree = NULL;
    struct lyd_node *cand;
    const char *edited = TE_PRINTED_WITH(TE_ETH0 TE_ETH1,
                                         "<hostname>cand</hostname><dns>10.0.0.1</dns><dns>10.0.0.2</dns>"
                                         "<tcp-port>22</tcp-port>" TE_ROOT,
                                         TE_REFS_BODY);

    assert_int_equal(ds_own(ds, st->tmpl, DS_CANDIDATE, &tree), FLEET_OK);
    te_apply_ok(st, tree, &te_merge, TE_C_SYS "<hostname>cand</hostname></system>");
    ds->candidate_dirty = 1;
    cand = *tree;
    /* Running is untouched until the commit. */
    assert_ptr_equal(ds_read(ds, st->tmpl, DS_RUNNING), st->tmpl);
    te_assert_tree(ds_read(ds, st->tmpl, DS_CANDIDATE), edited);
    ds_commit(ds);
    /* Moved, not copied; the candidate reads through to the new running. */
    assert_ptr_equal(ds_read(ds, st->tmpl, DS_RUNNING), cand);
    assert_ptr_equal(ds_read(ds, st->tmpl, DS_CANDIDATE), cand);
    assert_int_equal(ds->own[DS_CANDIDATE], 0);
    assert_null(ds->tree[DS_CANDIDATE]);
    assert_int_equal(ds->candidate_dirty, 0);
    te_assert_tree(ds_read(ds, st->tmpl, DS_RUNNING), edited);
    te_assert_tree(st->tmpl, TE_TEMPLATE_PRINTED);
}

static void
test_ds_reset_candidate_reads_running_again(void **state)
{
    struct te_state *st = *state;
    struct datastore *ds = &st->ds;
    struct lyd_node **run = NULL;
    struct lyd_node **cand = NULL;

    assert_int_equal(ds_own(ds, st->tmpl, DS_RUNNING, &run), FLEET_OK);
    te_apply_ok(st, run, &te_merge, TE_C_SYS "<hostname>run</hostname></system>");
    assert_int_equal(ds_own(ds, st->tmpl, DS_CANDIDATE, &cand), FLEET_OK);
    te_apply_ok(st, cand, &te_merge, TE_C_SYS "<hostname>cand</hostname></system>");
    ds->candidate_dirty = 1;
    assert_ptr_not_equal(ds_read(ds, st->tmpl, DS_CANDIDATE), *run);
    ds_reset(ds, DS_CANDIDATE);
    assert_ptr_equal(ds_read(ds, st->tmpl, DS_CANDIDATE), *run);
    assert_int_equal(ds->own[DS_CANDIDATE], 0);
    assert_int_equal(ds->candidate_dirty, 0);
    te_assert_tree(ds_read(ds, st->tmpl, DS_CANDIDATE),
                   TE_PRINTED_WITH(TE_ETH0 TE_ETH1,
                                   "<hostname>run</hostname><dns>10.0.0.1</dns><dns>10.0.0.2</dns>"
                                   "<tcp-port>22</tcp-port>" TE_ROOT,
                                   TE_REFS_BODY));
}

/* ---- scale ---- */

static void
test_scale_10000_interfaces_then_one_more_edit(void **state)
{
    struct te_state *st = *state;
    struct lyd_node **tree = te_own(st);
    struct lyd_node *ifs = NULL;
    struct lyd_node *node = NULL;
    const struct lyd_node *it;
    char *xml = NULL;
    size_t cap = 128 * TE_SCALE_PER_EDIT + 256;
    size_t count = 0;
    char *desc = NULL;

    xml = malloc(cap);
    assert_non_null(xml);
    for (int base = 0; base < TE_SCALE_COUNT; base += TE_SCALE_PER_EDIT) {
        size_t len = (size_t)snprintf(xml, cap, "%s", TE_C_IFS);
        for (int i = base; i < base + TE_SCALE_PER_EDIT; i++) {
            len += (size_t)snprintf(xml + len, cap - len,
                                    "<interface nc:operation=\"create\"><name>if%d</name>"
                                    "<type>ianaift:ethernetCsmacd</type></interface>",
                                    i);
        }
        snprintf(xml + len, cap - len, "</interfaces>");
        te_apply_ok(st, tree, &te_merge, xml);
    }
    /* One more edit touching the big list three ways. */
    te_apply_ok(st, tree, &te_merge,
                TE_C_IFS "<interface><name>if5000</name><description>mid</description></interface>"
                         "<interface nc:operation=\"delete\"><name>if0</name></interface>"
                         "<interface nc:operation=\"create\"><name>if10000</name>"
                         "<type>ianaift:ethernetCsmacd</type></interface></interfaces>");
    assert_int_equal(lyd_find_path(*tree, "/ietf-interfaces:interfaces", 0, &ifs), LY_SUCCESS);
    LY_LIST_FOR(lyd_child(ifs), it)
    {
        count++;
    }
    assert_int_equal(count, 2 + TE_SCALE_COUNT);
    assert_int_equal(
        lyd_find_path(*tree, "/ietf-interfaces:interfaces/interface[name='if5000']/description", 0, &node),
        LY_SUCCESS);
    assert_string_equal(lyd_get_value(node), "mid");
    assert_false(te_exists(*tree, "/ietf-interfaces:interfaces/interface[name='if0']"));
    assert_true(te_exists(*tree, "/ietf-interfaces:interfaces/interface[name='if10000']"));
    /* A failing edit still leaves the big tree exactly as it was. */
    desc = tu_print(*tree);
    {
        const struct te_err want = {
            EDIT_ERR_APP,
            "data-exists",
            NULL,
            "/ietf-interfaces:interfaces/interface[name='if9999']",
            "Data \"/ietf-interfaces:interfaces/interface[name='if9999']\" already exists.",
            NULL};
        te_apply_err(st, tree, &te_merge,
                     TE_C_IFS
                     "<interface nc:operation=\"delete\"><name>if10000</name></interface>"
                     "<interface nc:operation=\"create\"><name>if9999</name></interface></interfaces>",
                     &want);
    }
    te_assert_tree(*tree, desc);
    free(desc);
    free(xml);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_plan_flags_only_modules_with_tree_spanning_constraints,
                                  te_case_teardown),
        cmocka_unit_test_teardown(test_template_parses_to_the_tree_the_tests_expect, te_case_teardown),
        cmocka_unit_test_teardown(test_merge_changes_leaf_value, te_case_teardown),
        cmocka_unit_test_teardown(test_merge_same_value_reports_no_change, te_case_teardown),
        cmocka_unit_test_teardown(test_merge_changes_leaf_of_entry_with_few_children, te_case_teardown),
        cmocka_unit_test_teardown(test_merge_creates_list_entry_with_its_defaults, te_case_teardown),
        cmocka_unit_test_teardown(test_replace_list_entry_drops_its_old_children, te_case_teardown),
        cmocka_unit_test_teardown(test_default_operation_replace_drops_unmentioned_top_level_nodes,
                                  te_case_teardown),
        cmocka_unit_test_teardown(test_create_new_list_entry, te_case_teardown),
        cmocka_unit_test_teardown(test_create_existing_entry_is_data_exists, te_case_teardown),
        cmocka_unit_test_teardown(test_create_existing_leaf_of_entry_with_few_children_is_data_exists,
                                  te_case_teardown),
        cmocka_unit_test_teardown(test_create_leaf_holding_only_its_default_succeeds, te_case_teardown),
        cmocka_unit_test_teardown(test_delete_existing_entry, te_case_teardown),
        cmocka_unit_test_teardown(test_delete_missing_entry_is_data_missing, te_case_teardown),
        cmocka_unit_test_teardown(test_remove_existing_entry, te_case_teardown),
        cmocka_unit_test_teardown(test_remove_missing_entry_is_ok_and_changes_nothing, te_case_teardown),
        cmocka_unit_test_teardown(test_none_with_missing_parent_and_nested_delete_is_data_missing,
                                  te_case_teardown),
        cmocka_unit_test_teardown(test_none_with_missing_parent_and_nested_merge_is_data_missing,
                                  te_case_teardown),
        cmocka_unit_test_teardown(test_none_with_nested_create_creates_parent, te_case_teardown),
        cmocka_unit_test_teardown(test_none_applies_only_the_nested_operations, te_case_teardown),
        cmocka_unit_test_teardown(test_user_ordered_leaf_list_keeps_order_on_merge_delete_and_rollback,
                                  te_case_teardown),
        cmocka_unit_test_teardown(test_user_ordered_insert_first_puts_entry_first, te_case_teardown),
        cmocka_unit_test_teardown(test_user_ordered_insert_after_puts_entry_after_named_one,
                                  te_case_teardown),
        cmocka_unit_test_teardown(test_presence_container_create_and_delete, te_case_teardown),
        cmocka_unit_test_teardown(test_choice_case_switch_deletes_other_case_nodes, te_case_teardown),
        cmocka_unit_test_teardown(test_choice_case_switch_in_failed_edit_keeps_other_case, te_case_teardown),
        cmocka_unit_test_teardown(test_both_cases_of_a_choice_in_one_edit_is_bad_element, te_case_teardown),
        cmocka_unit_test_teardown(test_delete_leaf_with_default_brings_default_back, te_case_teardown),
        cmocka_unit_test_teardown(test_delete_of_empty_leaf_element_deletes_the_leaf, te_case_teardown),
        cmocka_unit_test_teardown(test_remove_of_empty_leaf_element_removes_the_leaf, te_case_teardown),
        cmocka_unit_test_teardown(test_delete_leaf_holding_only_its_default_is_data_missing,
                                  te_case_teardown),
        cmocka_unit_test_teardown(test_unknown_element_is_unknown_element_with_bad_element, te_case_teardown),
        cmocka_unit_test_teardown(test_unknown_namespace_is_unknown_namespace, te_case_teardown),
        cmocka_unit_test_teardown(test_invalid_value_is_invalid_value, te_case_teardown),
        cmocka_unit_test_teardown(test_state_node_in_config_is_invalid_value, te_case_teardown),
        cmocka_unit_test_teardown(test_bad_operation_attribute_is_refused_before_the_engine,
                                  te_case_teardown),
        cmocka_unit_test_teardown(test_deleting_np_container_with_mandatory_leaf_is_data_missing,
                                  te_case_teardown),
        cmocka_unit_test_teardown(test_deleting_only_case_of_mandatory_choice_is_missing_choice,
                                  te_case_teardown),
        cmocka_unit_test_teardown(test_list_entry_without_mandatory_leaf_is_data_missing, te_case_teardown),
        cmocka_unit_test_teardown(test_deleting_mandatory_leaf_is_data_missing, te_case_teardown),
        cmocka_unit_test_teardown(test_presence_container_without_mandatory_choice_is_missing_choice,
                                  te_case_teardown),
        cmocka_unit_test_teardown(test_np_container_without_mandatory_leaf_is_data_missing, te_case_teardown),
        cmocka_unit_test_teardown(test_too_few_elements_is_operation_failed, te_case_teardown),
        cmocka_unit_test_teardown(test_too_many_elements_is_operation_failed, te_case_teardown),
        cmocka_unit_test_teardown(test_leafref_to_missing_target_is_data_missing_instance_required,
                                  te_case_teardown),
        cmocka_unit_test_teardown(test_deleting_leafref_target_is_data_missing_instance_required,
                                  te_case_teardown),
        cmocka_unit_test_teardown(test_must_violation_is_operation_failed, te_case_teardown),
        cmocka_unit_test_teardown(test_unique_violation_is_operation_failed_data_not_unique,
                                  te_case_teardown),
        cmocka_unit_test_teardown(test_node_whose_when_is_false_is_unknown_element, te_case_teardown),
        cmocka_unit_test_teardown(test_stop_on_error_failed_edit_leaves_tree_identical, te_case_teardown),
        cmocka_unit_test_teardown(test_rollback_on_error_failed_validation_leaves_tree_identical,
                                  te_case_teardown),
        cmocka_unit_test_teardown(test_failed_delete_of_first_list_entry_keeps_entry_order, te_case_teardown),
        cmocka_unit_test_teardown(test_rollback_restores_default_flag_of_np_container, te_case_teardown),
        cmocka_unit_test_teardown(test_test_only_valid_edit_changes_nothing, te_case_teardown),
        cmocka_unit_test_teardown(test_test_only_invalid_edit_reports_error_and_changes_nothing,
                                  te_case_teardown),
        cmocka_unit_test_teardown(test_replace_with_opaque_top_level_node_is_an_error_not_a_crash,
                                  te_case_teardown),
        cmocka_unit_test_teardown(test_continue_on_error_keeps_valid_part_and_reports_error,
                                  te_case_teardown),
        cmocka_unit_test_teardown(test_ds_read_of_untouched_device_is_template_pointer, te_case_teardown),
        cmocka_unit_test_teardown(test_ds_own_copies_once, te_case_teardown),
        cmocka_unit_test_teardown(test_ds_edit_on_one_device_does_not_show_on_another, te_case_teardown),
        cmocka_unit_test_teardown(test_ds_commit_moves_candidate_into_running, te_case_teardown),
        cmocka_unit_test_teardown(test_ds_reset_candidate_reads_running_again, te_case_teardown),
        cmocka_unit_test_teardown(test_scale_10000_interfaces_then_one_more_edit, te_case_teardown),
        /* Last: under ASan the use-after-free these expose aborts the run. */
        cmocka_unit_test_teardown(test_test_only_turning_when_false_is_refused, te_case_teardown),
        cmocka_unit_test_teardown(test_edit_turning_when_false_is_refused_and_keeps_node, te_case_teardown),
        cmocka_unit_test_teardown(test_edit_changing_node_whose_when_turns_false_is_refused_and_restored,
                                  te_case_teardown),
    };

    return cmocka_run_group_tests(tests, te_setup, te_teardown);
}
