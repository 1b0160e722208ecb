/*
 * Unit tests of the <edit-config> fast path (testtool/netconf/rpc_fast.h).
 * The fast path may only answer where it answers exactly as the full path
 * would: the central test parses a corpus of varied edit-configs both ways
 * (the scanner plus a strict libyang parse of <config>, and lyd_parse_op()
 * with the anyxml <config> value) and requires the two config trees to
 * print identically, metadata included. The other tests pin the envelope
 * rules: which messages are eligible, what the parameters map to, which
 * attributes the reply repeats, and that every unusual or broken message
 * (down to every truncation of a valid one) is handed to the full path.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc_fast.h"
#include "test_util.h"

#define TRF_NC_NS   "urn:ietf:params:xml:ns:netconf:base:1.0"
#define TRF_IF_NS   "urn:ietf:params:xml:ns:yang:ietf-interfaces"
#define TRF_IANA_NS "urn:ietf:params:xml:ns:yang:iana-if-type"

/* The usual envelope around the parameters under test. */
#define TRF_RPC    "<rpc message-id=\"1\" xmlns=\"" TRF_NC_NS "\">"
#define TRF_EDIT   TRF_RPC "<edit-config>"
#define TRF_END    "</edit-config></rpc>"
#define TRF_TARGET "<target><running/></target>"
#define TRF_IF_ETH0                                                                                          \
    "<interfaces xmlns=\"" TRF_IF_NS "\"><interface><name>eth0</name></interface></interfaces>"

/* A small eligible message, for tests that only vary the envelope. */
#define TRF_VALID TRF_EDIT TRF_TARGET "<config>" TRF_IF_ETH0 "</config>" TRF_END

struct trf_state {
    struct ly_ctx *ctx; /* ietf-interfaces, iana-if-type, ietf-netconf */
};

/* One message of the equivalence corpus. */
struct trf_case {
    const char *name; /* what it exercises, printed on failure */
    const char *msg;  /* a valid, eligible edit-config */
};

static const struct trf_case trf_corpus[] = {
    {"merge of one entry, default namespace on <interfaces>",
     TRF_EDIT TRF_TARGET "<config><interfaces xmlns=\"" TRF_IF_NS "\"><interface><name>eth0</name>"
                         "<description>uplink</description><enabled>true</enabled></interface>"
                         "</interfaces></config>" TRF_END},
    {"create, nc prefix declared on <rpc>",
     "<rpc message-id=\"2\" xmlns=\"" TRF_NC_NS "\" xmlns:nc=\"" TRF_NC_NS "\"><edit-config>"
     "<target><candidate/></target><config><interfaces xmlns=\"" TRF_IF_NS "\">"
     "<interface nc:operation=\"create\"><name>eth1</name><type xmlns:ianaift=\"" TRF_IANA_NS "\">"
     "ianaift:ethernetCsmacd</type></interface></interfaces></config>" TRF_END},
    {"delete of one entry, nc prefix declared on <config>",
     TRF_EDIT TRF_TARGET "<config xmlns:nc=\"" TRF_NC_NS "\"><interfaces xmlns=\"" TRF_IF_NS "\">"
                         "<interface nc:operation=\"delete\"><name>eth0</name></interface></interfaces>"
                         "</config>" TRF_END},
    {"remove of a leaf, nc prefix declared on <edit-config>",
     TRF_RPC "<edit-config xmlns:nc=\"" TRF_NC_NS "\">" TRF_TARGET "<config><interfaces xmlns=\"" TRF_IF_NS
             "\"><interface><name>eth0</name>"
             "<description nc:operation=\"remove\"/></interface></interfaces></config>" TRF_END},
    {"replace of the container, nc prefix declared on the container itself",
     TRF_EDIT TRF_TARGET "<config><interfaces xmlns=\"" TRF_IF_NS "\" xmlns:nc=\"" TRF_NC_NS "\""
                         " nc:operation=\"replace\"><interface><name>lo</name>"
                         "<type xmlns:ianaift=\"" TRF_IANA_NS "\">ianaift:softwareLoopback</type>"
                         "</interface></interfaces></config>" TRF_END},
    {"several entries, each with another operation",
     "<rpc message-id=\"6\" xmlns=\"" TRF_NC_NS "\" xmlns:nc=\"" TRF_NC_NS "\" xmlns:ianaift=\"" TRF_IANA_NS
     "\"><edit-config>" TRF_TARGET "<config><interfaces xmlns=\"" TRF_IF_NS "\">"
     "<interface nc:operation=\"merge\"><name>eth0</name><enabled>false</enabled></interface>"
     "<interface nc:operation=\"delete\"><name>eth1</name></interface>"
     "<interface nc:operation=\"create\"><name>eth2</name><type>ianaift:ethernetCsmacd</type></interface>"
     "<interface nc:operation=\"replace\"><name>eth3</name><type>ianaift:other</type>"
     "<description>spare</description></interface>"
     "<interface nc:operation=\"remove\"><name>eth4</name></interface>"
     "</interfaces></config>" TRF_END},
    {"operations at three depths",
     "<rpc message-id=\"7\" xmlns=\"" TRF_NC_NS "\" xmlns:nc=\"" TRF_NC_NS "\"><edit-config>" TRF_TARGET
     "<config><interfaces xmlns=\"" TRF_IF_NS "\" nc:operation=\"merge\">"
     "<interface nc:operation=\"replace\"><name>eth0</name><description nc:operation=\"create\">new"
     "</description><enabled "
     "nc:operation=\"delete\">true</enabled></interface></interfaces></config>" TRF_END},
    {"description with character and entity references",
     TRF_EDIT TRF_TARGET "<config><interfaces xmlns=\"" TRF_IF_NS "\"><interface><name>eth0</name>"
                         "<description>R&amp;D &lt;lab&gt; &#x41;&#66; &quot;q&quot; &apos;a&apos;"
                         "</description></interface></interfaces></config>" TRF_END},
    {"description in CDATA that holds markup and the closing tags",
     TRF_EDIT TRF_TARGET "<config><interfaces xmlns=\"" TRF_IF_NS "\"><interface><name>eth0</name>"
                         "<description><![CDATA[</config></edit-config></rpc> & <b>]]></description>"
                         "</interface></interfaces></config>" TRF_END},
    {"single-quoted attributes and declarations everywhere",
     "<rpc message-id='10' xmlns='" TRF_NC_NS "'><edit-config><target><running/></target>"
     "<config xmlns:nc='" TRF_NC_NS "'><interfaces xmlns='" TRF_IF_NS "'><interface nc:operation='merge'>"
     "<name>eth0</name><type xmlns:ianaift='" TRF_IANA_NS "'>ianaift:ethernetCsmacd</type>"
     "<description>it's \"quoted\"</description></interface></interfaces></config>" TRF_END},
    {"prefixes declared on <rpc>, <edit-config> and <config>, identityref prefix from <rpc>",
     "<rpc message-id=\"11\" xmlns=\"" TRF_NC_NS "\" xmlns:ianaift=\"" TRF_IANA_NS "\">"
     "<edit-config xmlns:if=\"" TRF_IF_NS "\">" TRF_TARGET "<config xmlns:nc=\"" TRF_NC_NS "\">"
     "<if:interfaces><if:interface nc:operation=\"create\"><if:name>eth5</if:name>"
     "<if:type>ianaift:ethernetCsmacd</if:type></if:interface></if:interfaces></config>" TRF_END},
    {"prefixed envelope, operation with the envelope's prefix",
     "<nc:rpc xmlns:nc=\"" TRF_NC_NS "\" message-id=\"12\"><nc:edit-config><nc:target><nc:candidate/>"
     "</nc:target><nc:default-operation>replace</nc:default-operation><nc:config>"
     "<interfaces xmlns=\"" TRF_IF_NS "\"><interface nc:operation=\"replace\"><name>eth0</name>"
     "</interface></interfaces></nc:config></nc:edit-config></nc:rpc>"},
    {"prefix redeclared on <config> shadows the one on <rpc>",
     "<rpc message-id=\"13\" xmlns=\"" TRF_NC_NS "\" xmlns:x=\"urn:example:outer\"><edit-config>" TRF_TARGET
     "<config xmlns:x=\"" TRF_IF_NS "\"><x:interfaces><x:interface><x:name>eth0</x:name>"
     "</x:interface></x:interfaces></config>" TRF_END},
    {"default namespace declared on a prefixed <config>",
     "<nc:rpc xmlns:nc=\"" TRF_NC_NS "\" message-id=\"14\"><nc:edit-config><nc:target><nc:running/>"
     "</nc:target><nc:config xmlns=\"" TRF_IF_NS "\"><interfaces><interface nc:operation=\"merge\">"
     "<name>eth9</name></interface></interfaces></nc:config></nc:edit-config></nc:rpc>"},
    {"pretty-printed, with a comment and a processing instruction inside <config>",
     "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<rpc message-id=\"15\" xmlns=\"" TRF_NC_NS
     "\">\n  <edit-config>\n    <target>\n      <running/>\n    </target>\n    <config>\n"
     "      <!-- <interfaces> in a comment is no element -->\n"
     "      <interfaces xmlns=\"" TRF_IF_NS "\">\n        <?fleetsim ignore me?>\n"
     "        <interface>\n          <name>eth0</name>\n          <description>two\n lines</description>\n"
     "        </interface>\n      </interfaces>\n    </config>\n  </edit-config>\n</rpc>"},
    {"whitespace inside tags and an empty leaf", TRF_EDIT TRF_TARGET
     "<config ><interfaces\n xmlns=\"" TRF_IF_NS "\" ><interface ><name\t>eth0</name >"
     "<description/><enabled\n>false</enabled ></interface ></interfaces></config>" TRF_END},
    {"two top-level trees with a comment between them, prefixes inherited by both",
     "<rpc message-id=\"18\" xmlns=\"" TRF_NC_NS "\" xmlns:nc=\"" TRF_NC_NS "\"><edit-config>" TRF_TARGET
     "<config><interfaces xmlns=\"" TRF_IF_NS "\"><interface nc:operation=\"delete\"><name>eth0</name>"
     "</interface></interfaces><!-- between --><interfaces xmlns=\"" TRF_IF_NS "\"><interface "
     "nc:operation=\"create\"><name>eth1</name></interface></interfaces></config>" TRF_END},
    {"markup characters allowed raw in text", TRF_EDIT TRF_TARGET
     "<config><interfaces xmlns=\"" TRF_IF_NS "\"><interface><name>eth0</name>"
     "<description>a > b ]] c / d</description></interface></interfaces></config>" TRF_END},
};

static int
trf_setup(void **state)
{
    struct trf_state *st = calloc(1, sizeof *st);

    assert_non_null(st);
    st->ctx = tu_ctx_new(NULL);
    *state = st;
    return 0;
}

static int
trf_teardown(void **state)
{
    struct trf_state *st = *state;

    ly_ctx_destroy(st->ctx);
    free(st);
    return 0;
}

/* Scan @p msg; it must be eligible. The caller frees @p fe (freed here when the test fails). */
static void
trf_scan_ok(const char *msg, struct rpc_fast_edit *fe)
{
    int rc = rpc_fast_edit_scan(msg, fe);

    if (rc) {
        print_error("scan returned %d, expected 0, for: %s\n", rc, msg);
        rpc_fast_edit_free(fe);
    }
    assert_int_equal(rc, 0);
}

/* @p msg must not be eligible: the scan returns -1 (and frees cleanly). */
static void
trf_assert_not_eligible(const char *msg)
{
    struct rpc_fast_edit fe;
    int rc = rpc_fast_edit_scan(msg, &fe);

    if (rc != -1) {
        print_error("scan returned %d, expected -1, for: %s\n", rc, msg);
        print_error("config it would parse: %s\n", fe.config.buf ? fe.config.buf : "(none)");
    }
    rpc_fast_edit_free(&fe);
    assert_int_equal(rc, -1);
}

/* The fast path's config tree, printed; fails the test when the message is not handled by it. */
static char *
trf_fast_config(const struct ly_ctx *ctx, const char *name, const char *msg)
{
    struct rpc_fast_edit fe;
    struct lyd_node *tree = NULL;
    char *out;

    if (rpc_fast_edit_scan(msg, &fe)) {
        rpc_fast_edit_free(&fe);
        fail_msg("%s: not eligible for the fast path: %s", name, msg);
    }
    if (rpc_fast_edit_config(&fe, ctx, &tree)) {
        print_error("%s: config refused (%s): %s\n", name, ly_errmsg(ctx), fe.config.buf);
        rpc_fast_edit_free(&fe);
        fail();
    }
    rpc_fast_edit_free(&fe);
    out = tu_print(tree);
    lyd_free_all(tree);
    return out;
}

/* The full path's config tree: the anyxml value of <config> from lyd_parse_op(), printed. */
static char *
trf_full_config(struct ly_ctx *ctx, const char *name, const char *msg)
{
    struct ly_in *in = NULL;
    struct lyd_node *env = NULL;
    struct lyd_node *op = NULL;
    const struct lyd_node *child;
    const struct lyd_node_any *config = NULL;
    char *out;

    assert_int_equal(ly_in_new_memory(msg, &in), LY_SUCCESS);
    if (lyd_parse_op(ctx, NULL, in, LYD_XML, LYD_TYPE_RPC_NETCONF, &env, &op) || !op) {
        fail_msg("%s: lyd_parse_op() refused it (%s): %s", name, ly_errmsg(ctx), msg);
    }
    LY_LIST_FOR(lyd_child(op), child)
    {
        if (child->schema && !strcmp(child->schema->name, "config")) {
            config = (const struct lyd_node_any *)child;
        }
    }
    if (!config) {
        fail_msg("%s: no <config> in the parsed operation", name);
    }
    if (config->value_type != LYD_ANYDATA_DATATREE) {
        fail_msg("%s: <config> value type %d, expected a data tree (%d)", name, (int)config->value_type,
                 (int)LYD_ANYDATA_DATATREE);
    }
    out = tu_print(config->value.tree);
    lyd_free_all(op);
    lyd_free_all(env);
    ly_in_free(in, 0);
    return out;
}

/*
 * Put @p attrs on an <rpc-reply> and read them back with libyang's XML
 * parser: "prefix:{namespace}name=value" per attribute, space-separated,
 * values unescaped. NULL when the reply would not be well-formed XML.
 */
static char *
trf_reparse_attrs(const struct ly_ctx *ctx, const char *attrs)
{
    char *xml = NULL;
    struct lyd_node *tree = NULL;
    char *out = NULL;
    size_t len = 0;
    FILE *f;

    assert_true(asprintf(&xml, "<rpc-reply xmlns=\"" TRF_NC_NS "\"%s><ok/></rpc-reply>", attrs) > 0);
    if (lyd_parse_data_mem((struct ly_ctx *)ctx, xml, LYD_XML, LYD_PARSE_OPAQ | LYD_PARSE_ONLY, 0, &tree) ||
        !tree) {
        print_error("reply not well-formed (%s): %s\n", ly_errmsg(ctx), xml);
        free(xml);
        return NULL;
    }
    f = open_memstream(&out, &len);
    assert_non_null(f);
    for (const struct lyd_attr *a = ((const struct lyd_node_opaq *)tree)->attr; a; a = a->next) {
        fprintf(f, "%s%s:{%s}%s=%s", a == ((const struct lyd_node_opaq *)tree)->attr ? "" : " ",
                a->name.prefix ? a->name.prefix : "", a->name.module_ns ? a->name.module_ns : "",
                a->name.name, a->value);
    }
    fclose(f);
    lyd_free_all(tree);
    free(xml);
    return out;
}

/* How many times @p attrs declares one prefix at most ("xmlns:p=" as a whole attribute name). */
static int
trf_max_declarations(const char *attrs)
{
    int max = 0;

    for (const char *p = attrs; (p = strstr(p, " xmlns:")); p++) {
        size_t name_len = strcspn(p + 1, "=");
        int n = 0;

        for (const char *q = attrs; (q = strstr(q, " xmlns:")); q++) {
            n += !strncmp(q + 1, p + 1, name_len + 1);
        }
        max = n > max ? n : max;
    }
    return max;
}

/*
 * The reply attributes of @p msg (which must be eligible) must read back as
 * @p want_parsed (see trf_reparse_attrs()), declare no prefix twice, and,
 * when @p want_exact is not NULL, be exactly that text.
 */
static void
trf_assert_reply_attrs(const struct ly_ctx *ctx, const char *msg, const char *want_exact,
                       const char *want_parsed)
{
    struct rpc_fast_edit fe;
    char *back = NULL;
    int ok;

    trf_scan_ok(msg, &fe);
    back = trf_reparse_attrs(ctx, fe.reply_attrs.buf);
    ok = back && !strcmp(back, want_parsed) && trf_max_declarations(fe.reply_attrs.buf) <= 1 &&
         (!want_exact || !strcmp(fe.reply_attrs.buf, want_exact));
    if (!ok) {
        print_error("reply attributes: [%s]\n", fe.reply_attrs.buf);
        print_error("  read back as:   %s\n  want:           %s\n", back ? back : "(not well-formed)",
                    want_parsed);
        print_error("  most declarations of one prefix: %d\n", trf_max_declarations(fe.reply_attrs.buf));
        if (want_exact) {
            print_error("  want exactly:     [%s]\n", want_exact);
        }
    }
    free(back);
    rpc_fast_edit_free(&fe);
    assert_true(ok);
}

/* ---- eligible messages ---- */

static void
test_scan_target_running_empty_element(void **state)
{
    struct rpc_fast_edit fe;

    (void)state;
    trf_scan_ok(TRF_VALID, &fe);
    assert_int_equal(fe.target, DS_RUNNING);
    assert_int_equal(fe.has_config, 1);
    assert_int_equal(fe.default_op, 0);
    assert_int_equal(fe.test_option, 0);
    assert_int_equal(fe.error_option, 0);
    rpc_fast_edit_free(&fe);
}

static void
test_scan_target_running_start_and_end_tag(void **state)
{
    struct rpc_fast_edit fe;

    (void)state;
    trf_scan_ok(TRF_EDIT "<target><running></running></target><config>" TRF_IF_ETH0 "</config>" TRF_END, &fe);
    assert_int_equal(fe.target, DS_RUNNING);
    rpc_fast_edit_free(&fe);
}

static void
test_scan_target_candidate(void **state)
{
    struct rpc_fast_edit fe;

    (void)state;
    trf_scan_ok(TRF_EDIT "<target><candidate/></target><config>" TRF_IF_ETH0 "</config>" TRF_END, &fe);
    assert_int_equal(fe.target, DS_CANDIDATE);
    rpc_fast_edit_free(&fe);

    trf_scan_ok(TRF_EDIT "<target><candidate></candidate></target><config/>" TRF_END, &fe);
    assert_int_equal(fe.target, DS_CANDIDATE);
    rpc_fast_edit_free(&fe);
}

/* Each value of @p param must give its index in @p values (also with whitespace around it). */
static void
trf_check_enum(const char *param, const char *const *values, int count, size_t field)
{
    for (int i = 0; i < count; i++) {
        struct rpc_fast_edit fe;
        char *msg = NULL;
        int got;

        assert_true(
            asprintf(&msg, TRF_EDIT TRF_TARGET "<%s>%s</%s><config/>" TRF_END, param, values[i], param) > 0);
        trf_scan_ok(msg, &fe);
        memcpy(&got, (const char *)&fe + field, sizeof got);
        if (got != i) {
            print_error("%s: got index %d, expected %d, for: %s\n", param, got, i, msg);
        }
        rpc_fast_edit_free(&fe);
        free(msg);
        assert_int_equal(got, i);

        /* libyang refuses an enumeration value with whitespace around it, and so must the fast path. */
        assert_true(asprintf(&msg, TRF_EDIT TRF_TARGET "<%s>\n  %s \t</%s><config/>" TRF_END, param,
                             values[i], param) > 0);
        trf_assert_not_eligible(msg);
        free(msg);
    }
}

static void
test_scan_default_operation_maps_to_index(void **state)
{
    static const char *const values[] = {"merge", "replace", "none"};

    (void)state;
    trf_check_enum("default-operation", values, 3, offsetof(struct rpc_fast_edit, default_op));
}

static void
test_scan_test_option_maps_to_index(void **state)
{
    static const char *const values[] = {"test-then-set", "set", "test-only"};

    (void)state;
    trf_check_enum("test-option", values, 3, offsetof(struct rpc_fast_edit, test_option));
}

static void
test_scan_error_option_maps_to_index(void **state)
{
    static const char *const values[] = {"stop-on-error", "continue-on-error", "rollback-on-error"};

    (void)state;
    trf_check_enum("error-option", values, 3, offsetof(struct rpc_fast_edit, error_option));
}

static void
test_scan_parameters_in_any_order(void **state)
{
    struct rpc_fast_edit fe;

    (void)state;
    trf_scan_ok(TRF_EDIT "<config>" TRF_IF_ETH0 "</config><error-option>rollback-on-error</error-option>"
                         "<target><candidate/></target><test-option>set</test-option>"
                         "<default-operation>none</default-operation>" TRF_END,
                &fe);
    assert_int_equal(fe.target, DS_CANDIDATE);
    assert_int_equal(fe.default_op, 2);
    assert_int_equal(fe.test_option, 1);
    assert_int_equal(fe.error_option, 2);
    assert_int_equal(fe.has_config, 1);
    rpc_fast_edit_free(&fe);
}

static void
test_scan_skips_declaration_comments_and_whitespace_between_elements(void **state)
{
    struct rpc_fast_edit fe;

    (void)state;
    trf_scan_ok("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- before -->\n"
                "<rpc message-id=\"1\" xmlns=\"" TRF_NC_NS "\">\n<!-- a -->\n<edit-config>"
                "<!-- b --><target><!-- c --><candidate/><!-- d --></target>\n"
                "<!-- e --><default-operation>replace</default-operation><!-- f -->\n"
                "<config>" TRF_IF_ETH0
                "</config>\n<!-- g --></edit-config>\n<!-- h -->\n</rpc>\n<!-- after -->\n",
                &fe);
    assert_int_equal(fe.target, DS_CANDIDATE);
    assert_int_equal(fe.default_op, 1);
    rpc_fast_edit_free(&fe);
}

static void
test_empty_config_element_is_eligible_with_null_tree(void **state)
{
    struct trf_state *st = *state;
    const char *msgs[] = {TRF_EDIT TRF_TARGET "<config/>" TRF_END,
                          TRF_EDIT TRF_TARGET "<config></config>" TRF_END};

    for (size_t i = 0; i < sizeof msgs / sizeof *msgs; i++) {
        struct rpc_fast_edit fe;
        struct lyd_node *tree = (struct lyd_node *)&fe; /* must be overwritten */

        trf_scan_ok(msgs[i], &fe);
        assert_int_equal(fe.has_config, 1);
        assert_int_equal(rpc_fast_edit_config(&fe, st->ctx, &tree), 0);
        assert_null(tree);
        rpc_fast_edit_free(&fe);
    }
}

/* ---- namespaces ---- */

static void
test_operation_prefix_declared_on_rpc_is_inherited_by_config(void **state)
{
    struct trf_state *st = *state;
    struct rpc_fast_edit fe;
    struct lyd_node *tree = NULL;
    struct lyd_node *entry = NULL;
    const struct lyd_meta *meta;

    trf_scan_ok("<rpc message-id=\"1\" xmlns=\"" TRF_NC_NS "\" xmlns:nc=\"" TRF_NC_NS
                "\"><edit-config>" TRF_TARGET "<config><interfaces xmlns=\"" TRF_IF_NS
                "\"><interface nc:operation=\"create\">"
                "<name>eth7</name></interface></interfaces></config>" TRF_END,
                &fe);
    if (rpc_fast_edit_config(&fe, st->ctx, &tree)) {
        fail_msg("config refused (%s): %s", ly_errmsg(st->ctx), fe.config.buf);
    }
    assert_int_equal(lyd_find_path(tree, "/ietf-interfaces:interfaces/interface[name='eth7']", 0, &entry),
                     LY_SUCCESS);
    meta = entry->meta;
    assert_non_null(meta);
    assert_string_equal(meta->annotation->module->name, "ietf-netconf");
    assert_string_equal(meta->name, "operation");
    assert_string_equal(lyd_get_meta_value(meta), "create");
    assert_null(meta->next);
    lyd_free_all(tree);
    rpc_fast_edit_free(&fe);
}

static void
test_prefixed_envelope_is_eligible(void **state)
{
    struct trf_state *st = *state;
    struct rpc_fast_edit fe;
    struct lyd_node *tree = NULL;
    char *printed;

    trf_scan_ok("<nc:rpc message-id=\"5\" xmlns:nc=\"" TRF_NC_NS
                "\"><nc:edit-config><nc:target><nc:candidate/>"
                "</nc:target><nc:error-option>continue-on-error</nc:error-option><nc:config>" TRF_IF_ETH0
                "</nc:config></nc:edit-config></nc:rpc>",
                &fe);
    assert_int_equal(fe.target, DS_CANDIDATE);
    assert_int_equal(fe.error_option, 1);
    assert_string_equal(fe.reply_attrs.buf, " message-id=\"5\"");
    assert_int_equal(rpc_fast_edit_config(&fe, st->ctx, &tree), 0);
    printed = tu_print(tree);
    assert_string_equal(printed, TRF_IF_ETH0);
    free(printed);
    lyd_free_all(tree);
    rpc_fast_edit_free(&fe);
}

static void
test_config_child_without_xmlns_inherits_base_namespace_and_is_refused(void **state)
{
    struct trf_state *st = *state;
    struct rpc_fast_edit fe;
    struct lyd_node *tree = (struct lyd_node *)&fe; /* must be reset to NULL */
    int rc;

    trf_scan_ok(TRF_EDIT TRF_TARGET
                "<config><interfaces><interface><name>eth0</name></interface></interfaces>"
                "</config>" TRF_END,
                &fe);
    rc = rpc_fast_edit_config(&fe, st->ctx, &tree);
    if (rc != -1) {
        print_error("config accepted in the base namespace: %s\n", fe.config.buf);
    }
    assert_int_equal(rc, -1);
    assert_null(tree);
    rpc_fast_edit_free(&fe);
}

/* ---- equivalence with lyd_parse_op() ---- */

static void
test_fast_config_prints_exactly_like_lyd_parse_op_config(void **state)
{
    struct trf_state *st = *state;
    int mismatches = 0;

    for (size_t i = 0; i < sizeof trf_corpus / sizeof *trf_corpus; i++) {
        const struct trf_case *c = &trf_corpus[i];
        char *fast = trf_fast_config(st->ctx, c->name, c->msg);
        char *full = trf_full_config(st->ctx, c->name, c->msg);

        if (strcmp(fast, full)) {
            print_error("corpus %zu (%s) differs\n  fast: %s\n  full: %s\n", i, c->name, fast, full);
            mismatches++;
        } else if (!*fast) {
            print_error("corpus %zu (%s): empty config proves nothing\n", i, c->name);
            mismatches++;
        }
        free(fast);
        free(full);
    }
    assert_int_equal(mismatches, 0);
}

/* ---- reply attributes ---- */

static void
test_reply_attrs_repeat_every_rpc_attribute(void **state)
{
    struct trf_state *st = *state;

    trf_assert_reply_attrs(st->ctx,
                           "<rpc message-id=\"101\" xmlns=\"" TRF_NC_NS "\" xmlns:ex=\"urn:example\""
                           " ex:user-id=\"fred\" foo='bar'><edit-config>" TRF_TARGET "<config/>" TRF_END,
                           " message-id=\"101\" xmlns:ex=\"urn:example\" ex:user-id=\"fred\" foo=\"bar\"",
                           ":{}message-id=101 ex:{urn:example}user-id=fred :{}foo=bar");
}

/*
 * Attribute values the fast path would have to re-escape (entities, a '"' in
 * single quotes) take the full path, which prints them from libyang's tree.
 */
static void
test_reply_attrs_with_entities_or_quotes_take_the_full_path(void **state)
{
    (void)state;
    trf_assert_not_eligible("<rpc message-id=\"a&amp;b&lt;c\" xmlns=\"" TRF_NC_NS
                            "\"><edit-config>" TRF_TARGET "<config/>" TRF_END);
    trf_assert_not_eligible("<rpc message-id=\"1\" xmlns=\"" TRF_NC_NS
                            "\" foo='say \"hi\"'><edit-config>" TRF_TARGET "<config/>" TRF_END);
}

/* Regressions found by fuzzing against lyd_parse_op as the oracle: each is refused by the full parser. */
static void
test_fuzz_found_forms_are_not_eligible(void **state)
{
    (void)state;
    /* A raw '&', and a byte that is not UTF-8, in an <rpc> attribute. */
    trf_assert_not_eligible("<rpc message-id=\"1&\" xmlns=\"" TRF_NC_NS "\"><edit-config>" TRF_TARGET
                            "<config/>" TRF_END);
    trf_assert_not_eligible("<rpc message-id=\"\xb1\" xmlns=\"" TRF_NC_NS "\"><edit-config>" TRF_TARGET
                            "<config/>" TRF_END);
    /* The same attribute twice. */
    trf_assert_not_eligible("<rpc message-id=\"1\" message-id=\"2\" xmlns=\"" TRF_NC_NS
                            "\"><edit-config>" TRF_TARGET "<config/>" TRF_END);
    /* <config> in another namespace through its own default declaration, or with another attribute. */
    trf_assert_not_eligible(
        "<rpc message-id=\"1\" xmlns=\"" TRF_NC_NS "\"><edit-config>" TRF_TARGET
        "<config xmlns=\"urn:ietf:params:xml:ns:yang:ietf-interfaces\"><interfaces/></config>" TRF_END);
    trf_assert_not_eligible("<rpc message-id=\"1\" xmlns=\"" TRF_NC_NS "\"><edit-config>" TRF_TARGET
                            "<config foo=\"bar\"/>" TRF_END);
    /* End tags with another qualified name than their start tags. */
    trf_assert_not_eligible("<nc:rpc xmlns:nc=\"" TRF_NC_NS "\" xmlns=\"" TRF_NC_NS
                            "\" message-id=\"1\"><edit-config>" TRF_TARGET "<config/></edit-config></rpc>");
    /* Attributes without white space between them, a name that is not ASCII, a declaration given twice. */
    trf_assert_not_eligible("<rpc message-id=\"1\"xmlns=\"" TRF_NC_NS "\"><edit-config>" TRF_TARGET
                            "<config/>" TRF_END);
    trf_assert_not_eligible("<rpc message-id=\"1\" xmlns=\"" TRF_NC_NS "\" \xff"
                            "a=\"1\"><edit-config>" TRF_TARGET "<config/>" TRF_END);
    trf_assert_not_eligible("<rpc message-id=\"1\" xmlns=\"urn:x\" xmlns=\"" TRF_NC_NS
                            "\"><edit-config>" TRF_TARGET "<config/>" TRF_END);
    /* An empty prefix in an end tag. */
    trf_assert_not_eligible("<rpc message-id=\"1\" xmlns=\"" TRF_NC_NS "\"><edit-config>" TRF_TARGET
                            "<config/></:edit-config></rpc>");
    /* A namespace URI holding a '"' would be re-declared unescaped on the content: refused. */
    trf_assert_not_eligible("<rpc message-id=\"1\" xmlns=\"" TRF_NC_NS "\" xmlns:nc=\"" TRF_NC_NS "\""
                            " xmlns:if='urn:ietf:params:xml:ns:yang:ietf-interfaces\" nc:operation=\"delete'>"
                            "<edit-config>" TRF_TARGET "<config><if:interfaces/></config>" TRF_END);
}

/* XML 1.0 "Unique Att Spec": one tag may declare a prefix only once, however many attributes use it. */
static void
test_reply_attrs_declare_a_shared_prefix_once(void **state)
{
    struct trf_state *st = *state;

    trf_assert_reply_attrs(st->ctx,
                           "<rpc message-id=\"1\" xmlns=\"" TRF_NC_NS "\" xmlns:ex=\"urn:example\""
                           " ex:a=\"1\" ex:b=\"2\"><edit-config>" TRF_TARGET "<config/>" TRF_END,
                           NULL, ":{}message-id=1 ex:{urn:example}a=1 ex:{urn:example}b=2");
}

/* ---- not eligible ---- */

static void
test_no_message_id_is_not_eligible(void **state)
{
    (void)state;
    trf_assert_not_eligible("<rpc xmlns=\"" TRF_NC_NS "\"><edit-config>" TRF_TARGET "<config/>" TRF_END);
}

static void
test_other_operations_are_not_eligible(void **state)
{
    (void)state;
    trf_assert_not_eligible(TRF_RPC "<get-config><source><running/></source></get-config></rpc>");
    trf_assert_not_eligible(TRF_RPC "<commit/></rpc>");
    trf_assert_not_eligible(TRF_RPC "<commit></commit></rpc>");
}

static void
test_url_parameter_is_not_eligible(void **state)
{
    (void)state;
    trf_assert_not_eligible(TRF_EDIT TRF_TARGET "<url>file:///tmp/x.xml</url>" TRF_END);
    trf_assert_not_eligible(TRF_EDIT "<target><url>file:///tmp/x.xml</url></target><config/>" TRF_END);
}

static void
test_unknown_parameter_is_not_eligible(void **state)
{
    (void)state;
    trf_assert_not_eligible(TRF_EDIT TRF_TARGET "<with-defaults>trim</with-defaults><config/>" TRF_END);
    trf_assert_not_eligible(TRF_EDIT TRF_TARGET "<config/><extra/>" TRF_END);
}

static void
test_text_inside_edit_config_is_not_eligible(void **state)
{
    (void)state;
    trf_assert_not_eligible(TRF_EDIT "stray" TRF_TARGET "<config/>" TRF_END);
    trf_assert_not_eligible(TRF_EDIT TRF_TARGET "<config/>stray" TRF_END);
}

static void
test_bogus_parameter_values_are_not_eligible(void **state)
{
    (void)state;
    trf_assert_not_eligible(TRF_EDIT TRF_TARGET
                            "<default-operation>bogus</default-operation><config/>" TRF_END);
    trf_assert_not_eligible(TRF_EDIT TRF_TARGET
                            "<default-operation>Merge</default-operation><config/>" TRF_END);
    trf_assert_not_eligible(TRF_EDIT TRF_TARGET "<default-operation></default-operation><config/>" TRF_END);
    trf_assert_not_eligible(TRF_EDIT TRF_TARGET "<default-operation/><config/>" TRF_END);
    trf_assert_not_eligible(TRF_EDIT TRF_TARGET "<test-option>merge</test-option><config/>" TRF_END);
    trf_assert_not_eligible(TRF_EDIT TRF_TARGET "<error-option>stop</error-option><config/>" TRF_END);
    trf_assert_not_eligible(TRF_EDIT "<target><startup/></target><config/>" TRF_END);
}

static void
test_two_configs_are_not_eligible(void **state)
{
    (void)state;
    trf_assert_not_eligible(TRF_EDIT TRF_TARGET "<config/><config/>" TRF_END);
    trf_assert_not_eligible(TRF_EDIT TRF_TARGET "<config>" TRF_IF_ETH0 "</config><config/>" TRF_END);
}

/*
 * The full path reads the first instance of a parameter, so a fast path
 * that keeps the last one would apply another default-operation than the
 * full path for the same message. Repeats must go to the full path.
 */
static void
test_repeated_parameter_is_not_eligible(void **state)
{
    (void)state;
    trf_assert_not_eligible(TRF_EDIT TRF_TARGET "<target><candidate/></target><config/>" TRF_END);
    trf_assert_not_eligible(TRF_EDIT TRF_TARGET "<test-option>set</test-option><test-option>test-only"
                                                "</test-option><config/>" TRF_END);
    trf_assert_not_eligible(TRF_EDIT TRF_TARGET
                            "<default-operation>none</default-operation>"
                            "<default-operation>replace</default-operation><config/>" TRF_END);
}

static void
test_missing_target_or_config_is_not_eligible(void **state)
{
    (void)state;
    trf_assert_not_eligible(TRF_EDIT "<config>" TRF_IF_ETH0 "</config>" TRF_END);
    trf_assert_not_eligible(TRF_EDIT TRF_TARGET TRF_END);
    trf_assert_not_eligible(TRF_EDIT "<target/><config/>" TRF_END);
    trf_assert_not_eligible(TRF_EDIT "<target></target><config/>" TRF_END);
    trf_assert_not_eligible(TRF_RPC "<edit-config/></rpc>");
}

static void
test_trailing_garbage_after_rpc_is_not_eligible(void **state)
{
    (void)state;
    trf_assert_not_eligible(TRF_VALID "x");
    trf_assert_not_eligible(TRF_VALID "<rpc/>");
    trf_assert_not_eligible(TRF_VALID "<!-- unterminated");
    trf_assert_not_eligible(TRF_VALID TRF_VALID);
}

static void
test_element_in_other_namespace_is_not_eligible(void **state)
{
    (void)state;
    /* The operation, a parameter, the target datastore, the closing tags. */
    trf_assert_not_eligible("<rpc message-id=\"1\" xmlns=\"urn:example\"><edit-config>" TRF_TARGET
                            "<config/></edit-config></rpc>");
    trf_assert_not_eligible(TRF_RPC "<edit-config xmlns=\"urn:example\">" TRF_TARGET "<config/>" TRF_END);
    trf_assert_not_eligible("<rpc message-id=\"1\" xmlns=\"" TRF_NC_NS
                            "\" xmlns:x=\"urn:example\"><edit-config>"
                            "<x:target><running/></x:target><config/>" TRF_END);
    trf_assert_not_eligible("<rpc message-id=\"1\" xmlns=\"" TRF_NC_NS
                            "\" xmlns:x=\"urn:example\"><edit-config>"
                            "<target><x:running/></target><config/>" TRF_END);
    trf_assert_not_eligible("<rpc message-id=\"1\" xmlns=\"" TRF_NC_NS
                            "\" xmlns:x=\"urn:example\"><edit-config>" TRF_TARGET "<x:config/>" TRF_END);
    trf_assert_not_eligible("<rpc message-id=\"1\" xmlns=\"" TRF_NC_NS
                            "\" xmlns:x=\"urn:example\"><edit-config>" TRF_TARGET
                            "<config/></edit-config></x:rpc>");
}

/* <running xmlns="urn:example"/> is not the running datastore; lyd_parse_op() refuses it. */
static void
test_target_datastore_with_own_namespace_is_not_eligible(void **state)
{
    (void)state;
    trf_assert_not_eligible(TRF_EDIT "<target><running xmlns=\"urn:example\"/></target><config/>" TRF_END);
}

/* A declaration on <config> ends with </config>; lyd_parse_op() reports the prefix as unknown after it. */
static void
test_config_declarations_do_not_outlive_config(void **state)
{
    (void)state;
    trf_assert_not_eligible(TRF_EDIT "<config xmlns:n=\"" TRF_NC_NS "\">" TRF_IF_ETH0 "</config>"
                                     "<n:target><n:running/></n:target>" TRF_END);
}

/* Not well-formed XML (XML 1.0 "Element Type Match"); lyd_parse_op() reports the tag mismatch. */
static void
test_mismatched_end_tag_is_not_eligible(void **state)
{
    (void)state;
    trf_assert_not_eligible("<rpc message-id=\"1\" xmlns=\"" TRF_NC_NS
                            "\" xmlns:x=\"urn:example\"><edit-config>" TRF_TARGET
                            "<default-operation>merge</x:default-operation><config/>" TRF_END);
    trf_assert_not_eligible(TRF_EDIT TRF_TARGET "<default-operation>merge</error-option><config/>" TRF_END);
    trf_assert_not_eligible(TRF_EDIT "<target><running></candidate></target><config/>" TRF_END);
    trf_assert_not_eligible(TRF_EDIT "<target><running/></config><config/>" TRF_END);
}

static void
test_truncated_messages_are_not_eligible(void **state)
{
    (void)state;
    trf_assert_not_eligible("");
    trf_assert_not_eligible(TRF_RPC);
    trf_assert_not_eligible(TRF_EDIT TRF_TARGET "<config>" TRF_IF_ETH0);
    trf_assert_not_eligible(TRF_EDIT TRF_TARGET "<config>" TRF_IF_ETH0 "</config></edit-config>");
}

static void
test_parameter_with_attributes_is_not_eligible(void **state)
{
    (void)state;
    trf_assert_not_eligible(TRF_EDIT TRF_TARGET
                            "<default-operation a=\"1\">merge</default-operation><config/>" TRF_END);
    trf_assert_not_eligible(TRF_EDIT "<target xmlns=\"" TRF_NC_NS "\"><running/></target><config/>" TRF_END);
    trf_assert_not_eligible(TRF_EDIT TRF_TARGET
                            "<test-option xmlns:x=\"urn:x\">set</test-option><config/>" TRF_END);
}

static void
test_entity_in_parameter_text_is_not_eligible(void **state)
{
    (void)state;
    trf_assert_not_eligible(TRF_EDIT TRF_TARGET
                            "<default-operation>&#109;erge</default-operation><config/>" TRF_END);
    trf_assert_not_eligible(TRF_EDIT TRF_TARGET
                            "<error-option>stop-on-error&amp;</error-option><config/>" TRF_END);
    trf_assert_not_eligible(TRF_EDIT TRF_TARGET "<test-option><!-- c -->set</test-option><config/>" TRF_END);
}

/* An edit-config whose <rpc> declares the default namespace plus @p extra prefixes; @p config_attrs go
 * on <config>. */
static char *
trf_rpc_with_declarations(int extra, const char *config_attrs)
{
    char *msg = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&msg, &len);

    assert_non_null(f);
    fputs("<rpc message-id=\"1\" xmlns=\"" TRF_NC_NS "\"", f);
    for (int i = 0; i < extra; i++) {
        fprintf(f, " xmlns:p%d=\"urn:example:%d\"", i, i);
    }
    fprintf(f, "><edit-config>" TRF_TARGET "<config%s>" TRF_IF_ETH0 "</config>" TRF_END, config_attrs);
    fclose(f);
    return msg;
}

static void
test_sixteen_namespace_declarations_are_eligible(void **state)
{
    struct trf_state *st = *state;
    char *msg = trf_rpc_with_declarations(XMLSCAN_MAX_NS - 1, "");
    struct rpc_fast_edit fe;
    struct lyd_node *tree = NULL;

    trf_scan_ok(msg, &fe);
    assert_int_equal(fe.scope.count, XMLSCAN_MAX_NS);
    assert_int_equal(rpc_fast_edit_config(&fe, st->ctx, &tree), 0);
    assert_non_null(tree);
    lyd_free_all(tree);
    rpc_fast_edit_free(&fe);
    free(msg);
}

static void
test_more_than_sixteen_namespace_declarations_are_not_eligible(void **state)
{
    char *msg = trf_rpc_with_declarations(XMLSCAN_MAX_NS, "");

    (void)state;
    trf_assert_not_eligible(msg);
    free(msg);
    /* The limit counts declarations on every level down to <config>. */
    msg = trf_rpc_with_declarations(XMLSCAN_MAX_NS - 1, " xmlns:q=\"urn:q\"");
    trf_assert_not_eligible(msg);
    free(msg);
}

/* ---- robustness ---- */

/* Every proper prefix of @p msg, in a buffer of exactly its size, must be refused. */
static int
trf_check_prefixes(const char *name, const char *msg)
{
    size_t len = strlen(msg);
    int failures = 0;

    for (size_t cut = 0; cut < len; cut++) {
        char *part = malloc(cut + 1);
        struct rpc_fast_edit fe;
        int rc;

        assert_non_null(part);
        memcpy(part, msg, cut);
        part[cut] = '\0';
        rc = rpc_fast_edit_scan(part, &fe);
        rpc_fast_edit_free(&fe);
        if (rc != -1) {
            print_error("%s: prefix of %zu bytes scanned as %d: %s\n", name, cut, rc, part);
            failures++;
        }
        free(part);
    }
    return failures;
}

static void
test_every_truncation_of_valid_messages_is_not_eligible(void **state)
{
    int failures = 0;

    (void)state;
    for (size_t i = 0; i < sizeof trf_corpus / sizeof *trf_corpus; i++) {
        failures += trf_check_prefixes(trf_corpus[i].name, trf_corpus[i].msg);
    }
    failures +=
        trf_check_prefixes("parameters", TRF_EDIT "<target><candidate></candidate></target>"
                                                  "<default-operation>none</default-operation>"
                                                  "<test-option>set</test-option><error-option>"
                                                  "continue-on-error</error-option><config/>" TRF_END);
    assert_int_equal(failures, 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scan_target_running_empty_element),
        cmocka_unit_test(test_scan_target_running_start_and_end_tag),
        cmocka_unit_test(test_scan_target_candidate),
        cmocka_unit_test(test_scan_default_operation_maps_to_index),
        cmocka_unit_test(test_scan_test_option_maps_to_index),
        cmocka_unit_test(test_scan_error_option_maps_to_index),
        cmocka_unit_test(test_scan_parameters_in_any_order),
        cmocka_unit_test(test_scan_skips_declaration_comments_and_whitespace_between_elements),
        cmocka_unit_test(test_empty_config_element_is_eligible_with_null_tree),
        cmocka_unit_test(test_operation_prefix_declared_on_rpc_is_inherited_by_config),
        cmocka_unit_test(test_prefixed_envelope_is_eligible),
        cmocka_unit_test(test_config_child_without_xmlns_inherits_base_namespace_and_is_refused),
        cmocka_unit_test(test_fast_config_prints_exactly_like_lyd_parse_op_config),
        cmocka_unit_test(test_reply_attrs_repeat_every_rpc_attribute),
        cmocka_unit_test(test_reply_attrs_with_entities_or_quotes_take_the_full_path),
        cmocka_unit_test(test_fuzz_found_forms_are_not_eligible),
        cmocka_unit_test(test_reply_attrs_declare_a_shared_prefix_once),
        cmocka_unit_test(test_no_message_id_is_not_eligible),
        cmocka_unit_test(test_other_operations_are_not_eligible),
        cmocka_unit_test(test_url_parameter_is_not_eligible),
        cmocka_unit_test(test_unknown_parameter_is_not_eligible),
        cmocka_unit_test(test_text_inside_edit_config_is_not_eligible),
        cmocka_unit_test(test_bogus_parameter_values_are_not_eligible),
        cmocka_unit_test(test_two_configs_are_not_eligible),
        cmocka_unit_test(test_repeated_parameter_is_not_eligible),
        cmocka_unit_test(test_missing_target_or_config_is_not_eligible),
        cmocka_unit_test(test_trailing_garbage_after_rpc_is_not_eligible),
        cmocka_unit_test(test_element_in_other_namespace_is_not_eligible),
        cmocka_unit_test(test_target_datastore_with_own_namespace_is_not_eligible),
        cmocka_unit_test(test_config_declarations_do_not_outlive_config),
        cmocka_unit_test(test_mismatched_end_tag_is_not_eligible),
        cmocka_unit_test(test_truncated_messages_are_not_eligible),
        cmocka_unit_test(test_parameter_with_attributes_is_not_eligible),
        cmocka_unit_test(test_entity_in_parameter_text_is_not_eligible),
        cmocka_unit_test(test_sixteen_namespace_declarations_are_eligible),
        cmocka_unit_test(test_more_than_sixteen_namespace_declarations_are_not_eligible),
        cmocka_unit_test(test_every_truncation_of_valid_messages_is_not_eligible),
    };

    return cmocka_run_group_tests(tests, trf_setup, trf_teardown);
}
