/*
 * Unit tests of custom RPC replies (testtool/netconf/rpc_custom.h): which
 * requests match a configured input (namespace, name, attributes, child
 * order, leaf text, whitespace, prefixes, the envelope), the sequence of
 * outputs per device (in order, the last repeating, devices independent,
 * equal inputs merged), what an output turns into, and which files are
 * refused and with what message.
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

#include "rpc_custom.h"

#define TRC_NC_NS          "urn:ietf:params:xml:ns:netconf:base:1.0"
#define TRC_OPS            "urn:example:ops"
#define TRC_RPC            "<rpc message-id=\"7\" xmlns=\"" TRC_NC_NS "\">"
#define TRC_REPLY(content) "<rpc-reply xmlns=\"" TRC_NC_NS "\">" content "</rpc-reply>"
#define TRC_ERROR                                                                                            \
    "<rpc-error><error-type>application</error-type><error-tag>in-use</error-tag>"                           \
    "<error-severity>error</error-severity></rpc-error>"

/* Devices the tests' tables keep positions for. */
#define TRC_DEVICES 3

/* reboot: three outputs; get-config with one filter: one output; a prefixed input. */
static const char *const trc_file =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<!-- a comment before the root -->\n"
    "<rpcs>\n"
    "  <rpc>\n"
    "    <input>\n"
    "      <reboot xmlns=\"" TRC_OPS "\" mode=\"warm\">\n"
    "        <delay>300</delay>\n"
    "        <message>  maintenance window  </message>\n"
    "      </reboot>\n"
    "    </input>\n"
    "    <output>" TRC_REPLY(
        "<ok/>") "</output>\n"
                 "    <output>" TRC_REPLY(
                     "<data><uptime xmlns=\"" TRC_OPS
                     "\">2</uptime></data>") "</output>\n"
                                             "    <output>" TRC_REPLY(
                                                 TRC_ERROR) "</output>\n"
                                                            "  </rpc>\n"
                                                            "  <rpc>\n"
                                                            "    <input><get-config "
                                                            "xmlns=\"" TRC_NC_NS
                                                            "\"><source><running/></source>"
                                                            "<filter type=\"subtree\"><x "
                                                            "xmlns=\"urn:x\"/></filter></"
                                                            "get-config></input>\n"
                                                            "    <output>" TRC_REPLY(
                                                                "<data><x "
                                                                "xmlns=\"urn:x\">only</x></"
                                                                "data>") "</output>\n"
                                                                         "  </rpc>\n"
                                                                         "  <rpc>\n"
                                                                         "    <input><o:probe "
                                                                         "xmlns:o=\"" TRC_OPS "\" "
                                                                         "xmlns:q=\"urn:q\" "
                                                                         "q:level=\"2\"><o:a/"
                                                                         "><o:b>1</o:b></"
                                                                         "o:probe>"
                                                                         "</input>\n"
                                                                         "    "
                                                                         "<output>" TRC_REPLY(
                                                                             "<ok/>") "</"
                                                                                      "output>"
                                                                                      "\n"
                                                                                      "  "
                                                                                      "</"
                                                                                      "rpc>\n"
                                                                                      "</"
                                                                                      "rpcs>"
                                                                                      "\n";

#define TRC_REBOOT_BODY "<delay>300</delay><message>  maintenance window  </message>"
#define TRC_REBOOT      TRC_RPC "<reboot xmlns=\"" TRC_OPS "\" mode=\"warm\">" TRC_REBOOT_BODY "</reboot></rpc>"

struct trc_state {
    struct ly_ctx *ctx;    /* context without modules, as the fleet's bare_ctx */
    struct rpc_custom *rc; /* trc_file loaded */
    char path[64];         /* a temporary file */
};

static void
trc_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");

    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
}

static int
trc_setup(void **state)
{
    struct trc_state *st = calloc(1, sizeof *st);
    char err[512] = "";
    int fd;

    assert_non_null(st);
    ly_log_options(LY_LOSTORE_LAST); /* as fleetsim does: refused files and requests print nothing */
    assert_int_equal(ly_ctx_new(NULL, LY_CTX_NO_YANGLIBRARY, &st->ctx), LY_SUCCESS);
    snprintf(st->path, sizeof st->path, "/tmp/test_rpc_custom.XXXXXX");
    fd = mkstemp(st->path);
    assert_true(fd >= 0);
    close(fd);
    trc_write(st->path, trc_file);
    if (rpc_custom_load(st->path, st->ctx, TRC_DEVICES, &st->rc, err, sizeof err)) {
        fail_msg("the test file was refused: %s", err);
    }
    *state = st;
    return 0;
}

static int
trc_teardown(void **state)
{
    struct trc_state *st = *state;

    rpc_custom_free(st->rc);
    ly_ctx_destroy(st->ctx);
    unlink(st->path);
    free(st);
    return 0;
}

/* The entry @p msg matches, or -1. */
static int
trc_match(const struct trc_state *st, const char *msg)
{
    struct lyd_node *envelope = NULL;
    uint32_t entry = 0;
    int rc = rpc_custom_match(st->rc, msg, &envelope, &entry);

    if (rc) {
        assert_null(envelope);
        return -1;
    }
    assert_non_null(envelope);
    lyd_free_all(envelope);
    return (int)entry;
}

static void
trc_assert_matches(const struct trc_state *st, const char *msg, int entry)
{
    int got = trc_match(st, msg);

    if (got != entry) {
        fail_msg("expected entry %d, got %d for: %s", entry, got, msg);
    }
}

static void
test_identical_request_matches(void **state)
{
    struct trc_state *st = *state;

    assert_int_equal(rpc_custom_count(st->rc), 3);
    trc_assert_matches(st, TRC_REBOOT, 0);
    trc_assert_matches(st,
                       TRC_RPC
                       "<get-config><source><running/></source><filter type=\"subtree\"><x xmlns=\"urn:x\"/>"
                       "</filter></get-config></rpc>",
                       1);
}

static void
test_whitespace_and_message_id_ignored(void **state)
{
    struct trc_state *st = *state;

    /* Indentation between elements, surrounding whitespace of leaf text, another message-id, an XML
     * declaration: all irrelevant. */
    trc_assert_matches(st,
                       "<?xml version=\"1.0\"?>\n<rpc message-id=\"abc-99\" xmlns=\"" TRC_NC_NS "\">\n"
                       "  <reboot mode=\"warm\" xmlns=\"" TRC_OPS "\">\n    <delay>\n300\n</delay>\n"
                       "    <message>maintenance window</message>\n  </reboot>\n</rpc>",
                       0);
    /* Whitespace inside leaf text is not. */
    trc_assert_matches(st,
                       TRC_RPC "<reboot xmlns=\"" TRC_OPS "\" mode=\"warm\"><delay>300</delay>"
                               "<message>maintenance  window</message></reboot></rpc>",
                       -1);
}

static void
test_prefixes_irrelevant(void **state)
{
    struct trc_state *st = *state;

    /* The file writes reboot unprefixed; a prefix in the request changes nothing. */
    trc_assert_matches(st,
                       TRC_RPC "<z:reboot xmlns:z=\"" TRC_OPS "\" mode=\"warm\"><z:delay>300</z:delay>"
                               "<z:message>maintenance window</z:message></z:reboot></rpc>",
                       0);
    /* The file writes probe and its attribute with prefixes; the request uses others or none. */
    trc_assert_matches(st,
                       TRC_RPC "<probe xmlns=\"" TRC_OPS "\" xmlns:lvl=\"urn:q\" lvl:level=\"2\"><a/><b>1</b>"
                               "</probe></rpc>",
                       2);
    /* An <rpc> written with a prefix is an <rpc>. */
    trc_assert_matches(st,
                       "<nc:rpc xmlns:nc=\"" TRC_NC_NS "\" message-id=\"1\"><reboot xmlns=\"" TRC_OPS
                       "\" mode=\"warm\">" TRC_REBOOT_BODY "</reboot></nc:rpc>",
                       0);
}

static void
test_namespace_must_match(void **state)
{
    struct trc_state *st = *state;

    trc_assert_matches(
        st, TRC_RPC "<reboot xmlns=\"urn:example:other\" mode=\"warm\">" TRC_REBOOT_BODY "</reboot></rpc>",
        -1);
    /* A child in another namespace. */
    trc_assert_matches(st,
                       TRC_RPC "<reboot xmlns=\"" TRC_OPS
                               "\" mode=\"warm\"><delay xmlns=\"urn:y\">300</delay>"
                               "<message>maintenance window</message></reboot></rpc>",
                       -1);
    /* The prefixed attribute in another namespace. */
    trc_assert_matches(st,
                       TRC_RPC "<probe xmlns=\"" TRC_OPS "\" xmlns:q=\"urn:other\" q:level=\"2\"><a/><b>1</b>"
                               "</probe></rpc>",
                       -1);
}

static void
test_attributes_must_match(void **state)
{
    struct trc_state *st = *state;

    /* Missing, different value, extra, renamed. */
    trc_assert_matches(st, TRC_RPC "<reboot xmlns=\"" TRC_OPS "\">" TRC_REBOOT_BODY "</reboot></rpc>", -1);
    trc_assert_matches(
        st, TRC_RPC "<reboot xmlns=\"" TRC_OPS "\" mode=\"cold\">" TRC_REBOOT_BODY "</reboot></rpc>", -1);
    trc_assert_matches(st,
                       TRC_RPC "<reboot xmlns=\"" TRC_OPS "\" mode=\"warm\" force=\"1\">" TRC_REBOOT_BODY
                               "</reboot></rpc>",
                       -1);
    trc_assert_matches(
        st, TRC_RPC "<reboot xmlns=\"" TRC_OPS "\" kind=\"warm\">" TRC_REBOOT_BODY "</reboot></rpc>", -1);
    /* Attribute order is free; a filter type differing is a different request. */
    trc_assert_matches(st,
                       TRC_RPC "<probe xmlns=\"" TRC_OPS "\" xmlns:q=\"urn:q\" q:level=\"2\"><a/><b>1</b>"
                               "</probe></rpc>",
                       2);
    trc_assert_matches(st,
                       TRC_RPC
                       "<get-config><source><running/></source><filter type=\"xpath\"><x xmlns=\"urn:x\"/>"
                       "</filter></get-config></rpc>",
                       -1);
}

static void
test_children_order_and_text_must_match(void **state)
{
    struct trc_state *st = *state;

    /* Swapped children. */
    trc_assert_matches(st,
                       TRC_RPC "<reboot xmlns=\"" TRC_OPS
                               "\" mode=\"warm\"><message>maintenance window</message>"
                               "<delay>300</delay></reboot></rpc>",
                       -1);
    /* One leaf differs. */
    trc_assert_matches(st,
                       TRC_RPC "<reboot xmlns=\"" TRC_OPS "\" mode=\"warm\"><delay>301</delay>"
                               "<message>maintenance window</message></reboot></rpc>",
                       -1);
    /* A child missing, a child more. */
    trc_assert_matches(
        st, TRC_RPC "<reboot xmlns=\"" TRC_OPS "\" mode=\"warm\"><delay>300</delay></reboot></rpc>", -1);
    trc_assert_matches(
        st, TRC_RPC "<reboot xmlns=\"" TRC_OPS "\" mode=\"warm\">" TRC_REBOOT_BODY "<now/></reboot></rpc>",
        -1);
    /* A leaf that became a container. */
    trc_assert_matches(st,
                       TRC_RPC "<reboot xmlns=\"" TRC_OPS "\" mode=\"warm\"><delay><s>300</s></delay>"
                               "<message>maintenance window</message></reboot></rpc>",
                       -1);
    /* What the text scan leaves to the XML parser still matches: a comment, CDATA, CR LF line ends. */
    trc_assert_matches(st,
                       TRC_RPC "<reboot xmlns=\"" TRC_OPS "\" mode=\"warm\"><!-- why --><delay>300</delay>"
                               "<message>maintenance window</message></reboot></rpc>",
                       0);
    trc_assert_matches(st,
                       TRC_RPC "<reboot xmlns=\"" TRC_OPS "\" mode=\"warm\"><delay><![CDATA[300]]></delay>"
                               "<message>maintenance window</message></reboot></rpc>",
                       0);
    trc_assert_matches(st,
                       TRC_RPC "\r\n<reboot xmlns=\"" TRC_OPS
                               "\" mode=\"warm\">\r\n<delay>300\r\n</delay>\r\n"
                               "<message>maintenance window</message></reboot></rpc>",
                       0);
    /* Entities decode before comparing. */
    trc_assert_matches(st,
                       TRC_RPC "<reboot xmlns=\"" TRC_OPS "\" mode=\"warm\"><delay>&#51;00</delay>"
                               "<message>maintenance window</message></reboot></rpc>",
                       0);
}

static void
test_envelope_must_be_a_proper_rpc(void **state)
{
    struct trc_state *st = *state;

    /* No message-id: left to the built-in path (which answers missing-attribute). */
    trc_assert_matches(st,
                       "<rpc xmlns=\"" TRC_NC_NS "\"><reboot xmlns=\"" TRC_OPS
                       "\" mode=\"warm\">" TRC_REBOOT_BODY "</reboot></rpc>",
                       -1);
    /* Not the base namespace, not an rpc, two operations, not XML. */
    trc_assert_matches(st,
                       "<rpc message-id=\"1\" xmlns=\"urn:x\"><reboot xmlns=\"" TRC_OPS
                       "\" mode=\"warm\">" TRC_REBOOT_BODY "</reboot></rpc>",
                       -1);
    trc_assert_matches(st,
                       "<notification xmlns=\"" TRC_NC_NS "\"><reboot xmlns=\"" TRC_OPS
                       "\" mode=\"warm\">" TRC_REBOOT_BODY "</reboot></notification>",
                       -1);
    trc_assert_matches(st,
                       TRC_RPC "<reboot xmlns=\"" TRC_OPS "\" mode=\"warm\">" TRC_REBOOT_BODY "</reboot>"
                               "<reboot xmlns=\"" TRC_OPS "\" mode=\"warm\">" TRC_REBOOT_BODY
                               "</reboot></rpc>",
                       -1);
    trc_assert_matches(st, TRC_RPC "<reboot xmlns=\"" TRC_OPS "\" mode=\"warm\">" TRC_REBOOT_BODY "</rpc>",
                       -1);
    trc_assert_matches(st, "", -1);
    /* An operation no input names is turned down before any parse, even inside odd text. */
    trc_assert_matches(st, TRC_RPC "<get><filter/></get></rpc>", -1);
    trc_assert_matches(st,
                       "<rpc message-id='>' xmlns=\"" TRC_NC_NS "\"><!-- c --><reboot xmlns=\"" TRC_OPS
                       "\" mode=\"warm\">" TRC_REBOOT_BODY "</reboot></rpc>",
                       0);
}

static void
test_every_truncation_is_refused(void **state)
{
    struct trc_state *st = *state;
    const char *msg = TRC_REBOOT;
    size_t len = strlen(msg);

    for (size_t cut = 0; cut < len; cut++) {
        char *part = strndup(msg, cut);
        assert_non_null(part);
        if (trc_match(st, part) != -1) {
            fail_msg("a message cut at %zu matched: %s", cut, part);
        }
        free(part);
    }
}

static void
test_sequence_last_repeats(void **state)
{
    struct trc_state *st = *state;
    const struct rpc_custom_output *out;

    out = rpc_custom_next(st->rc, 0, 0);
    assert_string_equal(out->xml, "<ok xmlns=\"" TRC_NC_NS "\"/>");
    assert_int_equal(out->xml_len, strlen(out->xml));
    assert_false(out->is_error);
    out = rpc_custom_next(st->rc, 0, 0);
    assert_string_equal(out->xml,
                        "<data xmlns=\"" TRC_NC_NS "\"><uptime xmlns=\"" TRC_OPS "\">2</uptime></data>");
    assert_false(out->is_error);
    for (int i = 0; i < 4; i++) {
        out = rpc_custom_next(st->rc, 0, 0);
        assert_non_null(strstr(out->xml, "<error-tag>in-use</error-tag>"));
        assert_true(out->is_error);
    }
    /* A single output always. */
    for (int i = 0; i < 3; i++) {
        out = rpc_custom_next(st->rc, 0, 1);
        assert_string_equal(out->xml, "<data xmlns=\"" TRC_NC_NS "\"><x xmlns=\"urn:x\">only</x></data>");
    }
}

static void
test_devices_independent(void **state)
{
    struct trc_state *st = *state;

    /* Device 2 is at its last output; devices 0 and 1 are still at their first. */
    rpc_custom_next(st->rc, 2, 0);
    rpc_custom_next(st->rc, 2, 0);
    assert_true(rpc_custom_next(st->rc, 2, 0)->is_error);
    assert_string_equal(rpc_custom_next(st->rc, 1, 0)->xml, "<ok xmlns=\"" TRC_NC_NS "\"/>");
    assert_string_equal(rpc_custom_next(st->rc, 0, 0)->xml, "<ok xmlns=\"" TRC_NC_NS "\"/>");
    assert_non_null(strstr(rpc_custom_next(st->rc, 1, 0)->xml, "uptime"));
    assert_true(rpc_custom_next(st->rc, 2, 0)->is_error);
}

/* Load @p text; returns the result and leaves the message in @p err. */
static enum fleet_err
trc_load(struct trc_state *st, const char *text, struct rpc_custom **rc, char *err, size_t err_len)
{
    trc_write(st->path, text);
    err[0] = '\0';
    return rpc_custom_load(st->path, st->ctx, TRC_DEVICES, rc, err, err_len);
}

static void
test_equal_inputs_merge_in_file_order(void **state)
{
    struct trc_state *st = *state;
    struct rpc_custom *rc = NULL;
    char err[512];

    /* As in OpenDaylight: two rpcs with equal inputs are one sequence (whitespace and prefixes aside). */
    if (trc_load(st,
                 "<rpcs><rpc><input><p xmlns=\"urn:p\"><v>1</v></p></input>"
                 "<output>" TRC_REPLY(
                     "<data>one</data>") "</output></rpc>"
                                         "<rpc><input><p:p xmlns:p=\"urn:p\"> <p:v> 1 </p:v> </p:p></input>"
                                         "<output>" TRC_REPLY("<data>two</data>") "</output></rpc></rpcs>",
                 &rc, err, sizeof err)) {
        fail_msg("refused: %s", err);
    }
    assert_int_equal(rpc_custom_count(rc), 1);
    assert_non_null(strstr(rpc_custom_next(rc, 0, 0)->xml, "one"));
    assert_non_null(strstr(rpc_custom_next(rc, 0, 0)->xml, "two"));
    assert_non_null(strstr(rpc_custom_next(rc, 0, 0)->xml, "two"));
    rpc_custom_free(rc);
}

static void
test_output_keeps_namespaces(void **state)
{
    struct trc_state *st = *state;
    struct rpc_custom *rc = NULL;
    struct lyd_node *tree = NULL;
    char err[512];
    char *reply;
    const struct rpc_custom_output *out;

    /* Prefixes declared on <rpc-reply> and on <output>, a prefixed value: the content must stand alone. */
    if (trc_load(st,
                 "<rpcs><rpc><input><p xmlns=\"urn:p\"/></input>"
                 "<output xmlns:t=\"urn:t\"><rpc-reply xmlns=\"" TRC_NC_NS "\" xmlns:if=\"urn:if\" "
                 "message-id=\"42\"><data><if:a t:k=\"v\"><if:type>if:eth</if:type></if:a></data>"
                 "</rpc-reply></output></rpc></rpcs>",
                 &rc, err, sizeof err)) {
        fail_msg("refused: %s", err);
    }
    out = rpc_custom_next(rc, 0, 0);
    assert_false(out->is_error);
    assert_null(strstr(out->xml, "message-id"));
    assert_int_not_equal(
        asprintf(&reply, "<rpc-reply xmlns=\"%s\" message-id=\"1\">%s</rpc-reply>", TRC_NC_NS, out->xml), -1);
    /* Reparsed on its own, the reply carries the same namespaces. */
    assert_int_equal(lyd_parse_data_mem(st->ctx, reply, LYD_XML, LYD_PARSE_OPAQ | LYD_PARSE_ONLY, 0, &tree),
                     LY_SUCCESS);
    {
        const struct lyd_node_opaq *data = (const struct lyd_node_opaq *)lyd_child(tree);
        const struct lyd_node_opaq *a = (const struct lyd_node_opaq *)data->child;
        assert_string_equal(a->name.module_ns, "urn:if");
        assert_string_equal(a->attr->name.module_ns, "urn:t");
    }
    assert_non_null(strstr(out->xml, "xmlns:if=\"urn:if\""));
    lyd_free_all(tree);
    free(reply);
    rpc_custom_free(rc);
}

static void
test_bad_files_refused(void **state)
{
    struct trc_state *st = *state;
    static const struct {
        const char *text; /* file content */
        const char *why;  /* part of the expected message */
    } bad[] = {
        {"this is not XML", "not well-formed XML"},
        {"<rpcs><rpc><input><a xmlns=\"urn:a\"/></input>\n<output></rpc></rpcs>", "Line number 2"},
        {"", "not well-formed XML"},
        {"<rpc-list/>", "the root element is not <rpcs>"},
        {"<rpcs/>", "<rpcs> holds no <rpc>"},
        {"<rpcs><rpc><output>" TRC_REPLY("<ok/>") "</output></rpc></rpcs>", "<rpc> number 1 has no <input>"},
        {"<rpcs><rpc><input><a xmlns=\"urn:a\"/></input><output>" TRC_REPLY(
             "<ok/>") "</output></rpc>"
                      "<rpc><input><b xmlns=\"urn:a\"/></input></rpc></rpcs>",
         "<rpc> number 2 has no <output>"},
        {"<rpcs><rpc><input/><output>" TRC_REPLY("<ok/>") "</output></rpc></rpcs>",
         "<input> must hold one element, not 0"},
        {"<rpcs><rpc><input><a xmlns=\"urn:a\"/><b xmlns=\"urn:a\"/></input><output>" TRC_REPLY(
             "<ok/>") "</output></rpc></rpcs>",
         "<input> must hold one element, not 2"},
        {"<rpcs><rpc><input><a xmlns=\"urn:a\"/></input><input><a "
         "xmlns=\"urn:a\"/></input><output>" TRC_REPLY("<ok/>") "</output></rpc></rpcs>",
         "more than one <input>"},
        {"<rpcs><rpc><input><a xmlns=\"urn:a\"/></input><output><ok xmlns=\"" TRC_NC_NS
         "\"/></output></rpc></rpcs>",
         "<output> number 1 holds <ok>, not an <rpc-reply>"},
        {"<rpcs><rpc><input><a xmlns=\"urn:a\"/></input><output><rpc-reply "
         "xmlns=\"urn:x\"/></output></rpc></rpcs>",
         "not an <rpc-reply> in the namespace"},
        {"<rpcs><rpc><input><a xmlns=\"urn:a\"/></input><output/></rpc></rpcs>",
         "<output> number 1 must hold one <rpc-reply>, not 0 elements"},
        {"<rpcs><rpc><input><a xmlns=\"urn:a\"/></input><output><nc:rpc-reply xmlns:nc=\"" TRC_NC_NS
         "\"><ok/></nc:rpc-reply></output></rpc></rpcs>",
         "<ok> has no namespace"},
        {"<rpcs><rpc><input><a xmlns=\"\"/></input><output>" TRC_REPLY("<ok/>") "</output></rpc></rpcs>",
         "empty namespace declarations"},
    };
    char err[512];

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct rpc_custom *rc = NULL;
        enum fleet_err ret = trc_load(st, bad[i].text, &rc, err, sizeof err);
        if (ret == FLEET_OK || rc || !strstr(err, bad[i].why) || !strstr(err, st->path)) {
            fail_msg("file %zu: result %d, message \"%s\", expected one naming the file and \"%s\"", i,
                     (int)ret, err, bad[i].why);
        }
    }
    {
        struct rpc_custom *rc = NULL;
        snprintf(err, sizeof err, "unset");
        assert_int_equal(rpc_custom_load("/nonexistent/rpcs.xml", st->ctx, 1, &rc, err, sizeof err),
                         FLEET_ERR_INVAL);
        assert_null(rc);
        assert_non_null(strstr(err, "/nonexistent/rpcs.xml"));
        assert_non_null(strstr(err, "No such file"));
    }
}

int
main(void)
{
    /* Each test gets a fresh table: positions never carry over. */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_identical_request_matches, trc_setup, trc_teardown),
        cmocka_unit_test_setup_teardown(test_whitespace_and_message_id_ignored, trc_setup, trc_teardown),
        cmocka_unit_test_setup_teardown(test_prefixes_irrelevant, trc_setup, trc_teardown),
        cmocka_unit_test_setup_teardown(test_namespace_must_match, trc_setup, trc_teardown),
        cmocka_unit_test_setup_teardown(test_attributes_must_match, trc_setup, trc_teardown),
        cmocka_unit_test_setup_teardown(test_children_order_and_text_must_match, trc_setup, trc_teardown),
        cmocka_unit_test_setup_teardown(test_envelope_must_be_a_proper_rpc, trc_setup, trc_teardown),
        cmocka_unit_test_setup_teardown(test_every_truncation_is_refused, trc_setup, trc_teardown),
        cmocka_unit_test_setup_teardown(test_sequence_last_repeats, trc_setup, trc_teardown),
        cmocka_unit_test_setup_teardown(test_devices_independent, trc_setup, trc_teardown),
        cmocka_unit_test_setup_teardown(test_equal_inputs_merge_in_file_order, trc_setup, trc_teardown),
        cmocka_unit_test_setup_teardown(test_output_keeps_namespaces, trc_setup, trc_teardown),
        cmocka_unit_test_setup_teardown(test_bad_files_refused, trc_setup, trc_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
