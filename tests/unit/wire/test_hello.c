/*
 * Unit tests of the <hello> builder and reader (wire/hello.c). Client hellos
 * are written the way real clients (ncclient, libnetconf2, hand-written
 * pretty-printed ones) send them, and every refusal is checked by its exact
 * error text, since that text ends up in the simulator's log.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hello.h"
#include "test_util.h"

/* Room for any error text hello_parse writes in these tests. */
#define TH_ERR_BYTES 256
/* Prefix every libyang-detected XML error carries; the rest is libyang's own wording. */
#define TH_XML_ERR_PREFIX "cannot parse hello XML: "

#define TH_NS       "urn:ietf:params:xml:ns:netconf:base:1.0"
#define TH_XML_DECL "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"

static int
th_setup(void **state)
{
    *state = tu_ctx_new(NULL);
    return 0;
}

static int
th_teardown(void **state)
{
    ly_ctx_destroy(*state);
    return 0;
}

/* Parse @p xml expecting success; the caller frees @p info. */
static void
th_parse_ok(void **state, const char *xml, struct hello_info *info)
{
    char err[TH_ERR_BYTES] = "";
    enum fleet_err rc = hello_parse(*state, xml, info, err, sizeof err);

    if (rc != FLEET_OK) {
        fail_msg("hello_parse failed (%d): %s", (int)rc, err);
    }
    assert_string_equal(err, "");
}

/* Parse @p xml expecting @p expected_rc and exactly @p expected_err; info must come back empty. */
static void
th_parse_fails(void **state, const char *xml, enum fleet_err expected_rc, const char *expected_err)
{
    char err[TH_ERR_BYTES] = "";
    struct hello_info info;

    memset(&info, 0xa5, sizeof info);
    assert_int_equal(hello_parse(*state, xml, &info, err, sizeof err), expected_rc);
    assert_string_equal(err, expected_err);
    assert_null(info.caps);
    assert_int_equal(info.cap_count, 0);
    assert_int_equal(info.has_session_id, 0);
}

/* A hello in the base namespace with the given inner XML. */
static char *
th_hello(const char *inner)
{
    char *xml = NULL;

    assert_true(asprintf(&xml, "<hello xmlns=\"" TH_NS "\">%s</hello>", inner) > 0);
    return xml;
}

static void
test_build_client_hello_exact_text(void **state)
{
    const char *caps[] = {HELLO_CAP_BASE10, HELLO_CAP_BASE11};
    char *xml = NULL;
    size_t len = 0;

    assert_int_equal(hello_build(caps, 2, 0, &xml, &len), FLEET_OK);
    assert_string_equal(xml, TH_XML_DECL "<hello xmlns=\"" TH_NS "\"><capabilities>"
                                         "<capability>urn:ietf:params:netconf:base:1.0</capability>"
                                         "<capability>urn:ietf:params:netconf:base:1.1</capability>"
                                         "</capabilities></hello>");
    assert_int_equal(len, strlen(xml));
    free(xml);
}

static void
test_build_server_hello_carries_session_id(void **state)
{
    const char *caps[] = {HELLO_CAP_BASE11};
    char *xml = NULL;
    size_t len = 0;

    assert_int_equal(hello_build(caps, 1, 4294967295u, &xml, &len), FLEET_OK);
    assert_string_equal(xml, TH_XML_DECL "<hello xmlns=\"" TH_NS "\"><capabilities>"
                                         "<capability>urn:ietf:params:netconf:base:1.1</capability>"
                                         "</capabilities><session-id>4294967295</session-id></hello>");
    assert_int_equal(len, strlen(xml));
    free(xml);
}

static void
test_build_escapes_markup_characters(void **state)
{
    const char *caps[] = {"urn:x?a=1&b=<2>&c=\"3\"&d='4'"};
    char *xml = NULL;
    size_t len = 0;

    assert_int_equal(hello_build(caps, 1, 0, &xml, &len), FLEET_OK);
    assert_non_null(strstr(xml,
                           "<capability>urn:x?a=1&amp;b=&lt;2&gt;&amp;c=&quot;3&quot;&amp;d=&apos;4&apos;"
                           "</capability>"));
    assert_int_equal(len, strlen(xml));
    free(xml);
}

static void
test_build_refuses_bad_arguments(void **state)
{
    const char *caps[] = {HELLO_CAP_BASE10, NULL};
    char *xml = (char *)"untouched";
    size_t len = 7;

    assert_int_equal(hello_build(caps, 0, 0, &xml, &len), FLEET_ERR_INVAL);
    assert_null(xml);
    assert_int_equal(len, 0);
    assert_int_equal(hello_build(caps, 2, 0, &xml, &len), FLEET_ERR_INVAL);
    assert_null(xml);
    assert_int_equal(hello_build(NULL, 1, 0, &xml, &len), FLEET_ERR_INVAL);
    assert_int_equal(hello_build(caps, HELLO_MAX_CAPS + 1, 0, &xml, &len), FLEET_ERR_INVAL);
}

static void
test_build_then_parse_roundtrip(void **state)
{
    const char *caps[] = {
        HELLO_CAP_BASE10,
        HELLO_CAP_BASE11,
        "urn:ietf:params:netconf:capability:with-defaults:1.0?basic-mode=explicit&also-supported=report-all",
        "urn:ietf:params:xml:ns:yang:ietf-interfaces?module=ietf-interfaces&revision=2018-02-20",
        "urn:odd:<tag>\"quoted\"'apos'&amp;",
    };
    struct hello_info info;
    char *xml = NULL;
    size_t len = 0;
    size_t i;

    assert_int_equal(hello_build(caps, 5, 77, &xml, &len), FLEET_OK);
    th_parse_ok(state, xml, &info);
    assert_int_equal(info.cap_count, 5);
    for (i = 0; i < 5; i++) {
        assert_string_equal(info.caps[i], caps[i]);
    }
    assert_true(info.has_session_id);
    assert_int_equal(info.session_id, 77);
    assert_true(info.base10);
    assert_true(info.base11);
    hello_info_free(&info);
    free(xml);
}

static void
test_build_then_parse_max_capabilities(void **state)
{
    const char **caps = calloc(HELLO_MAX_CAPS, sizeof *caps);
    char(*names)[32] = calloc(HELLO_MAX_CAPS, sizeof *names);
    struct hello_info info;
    char *xml = NULL;
    size_t len = 0;
    size_t i;

    assert_non_null(caps);
    assert_non_null(names);
    for (i = 0; i < HELLO_MAX_CAPS; i++) {
        snprintf(names[i], sizeof names[i], "urn:cap:%zu", i);
        caps[i] = names[i];
    }
    assert_int_equal(hello_build(caps, HELLO_MAX_CAPS, 0, &xml, &len), FLEET_OK);
    th_parse_ok(state, xml, &info);
    assert_int_equal(info.cap_count, HELLO_MAX_CAPS);
    assert_string_equal(info.caps[HELLO_MAX_CAPS - 1], names[HELLO_MAX_CAPS - 1]);
    assert_false(info.has_session_id);
    hello_info_free(&info);
    free(xml);
    free(names);
    free(caps);
}

static void
test_parse_ncclient_hello_with_prefixes(void **state)
{
    /* ncclient prefixes every element with "nc:" and offers a long list, base first. */
    const char xml[] = TH_XML_DECL
        "<nc:hello xmlns:nc=\"" TH_NS "\"><nc:capabilities>"
        "<nc:capability>urn:ietf:params:netconf:base:1.0</nc:capability>"
        "<nc:capability>urn:ietf:params:netconf:base:1.1</nc:capability>"
        "<nc:capability>urn:ietf:params:netconf:capability:writable-running:1.0</nc:capability>"
        "<nc:capability>urn:ietf:params:netconf:capability:candidate:1.0</nc:capability>"
        "<nc:capability>urn:ietf:params:netconf:capability:confirmed-commit:1.0</nc:capability>"
        "<nc:capability>urn:ietf:params:netconf:capability:rollback-on-error:1.0</nc:capability>"
        "<nc:capability>urn:ietf:params:netconf:capability:startup:1.0</nc:capability>"
        "<nc:capability>urn:ietf:params:netconf:capability:url:1.0?scheme=http,ftp,file,https,sftp</"
        "nc:capability>"
        "<nc:capability>urn:ietf:params:netconf:capability:validate:1.0</nc:capability>"
        "<nc:capability>urn:ietf:params:netconf:capability:xpath:1.0</nc:capability>"
        "<nc:capability>urn:ietf:params:netconf:capability:notification:1.0</nc:capability>"
        "<nc:capability>urn:liberouter:params:netconf:capability:power-control:1.0</nc:capability>"
        "<nc:capability>urn:ietf:params:netconf:capability:interleave:1.0</nc:capability>"
        "<nc:capability>urn:ietf:params:netconf:capability:with-defaults:1.0</nc:capability>"
        "</nc:capabilities></nc:hello>";
    struct hello_info info;

    th_parse_ok(state, xml, &info);
    assert_int_equal(info.cap_count, 14);
    assert_string_equal(info.caps[0], HELLO_CAP_BASE10);
    assert_string_equal(info.caps[7],
                        "urn:ietf:params:netconf:capability:url:1.0?scheme=http,ftp,file,https,sftp");
    assert_true(info.base10);
    assert_true(info.base11);
    assert_false(info.has_session_id);
    assert_int_equal(info.session_id, 0);
    assert_true(hello_has_cap(&info, "urn:ietf:params:netconf:capability:url:1.0"));
    hello_info_free(&info);
}

static void
test_parse_libnetconf2_hello(void **state)
{
    const char xml[] = "<hello xmlns=\"" TH_NS "\"><capabilities>"
                       "<capability>urn:ietf:params:netconf:base:1.0</capability>"
                       "<capability>urn:ietf:params:netconf:base:1.1</capability>"
                       "</capabilities></hello>";
    struct hello_info info;

    th_parse_ok(state, xml, &info);
    assert_int_equal(info.cap_count, 2);
    assert_true(info.base10);
    assert_true(info.base11);
    hello_info_free(&info);
}

static void
test_parse_pretty_printed_hello_trims_whitespace(void **state)
{
    const char xml[] =
        TH_XML_DECL "\n<hello xmlns=\"" TH_NS "\">\n"
                    "  <capabilities>\n"
                    "    <capability>\n      urn:ietf:params:netconf:base:1.0\n    </capability>\n"
                    "    <capability>\turn:example:cap:1.0 \r\n</capability>\n"
                    "  </capabilities>\n"
                    "  <session-id>\n    42\n  </session-id>\n"
                    "</hello>\n";
    struct hello_info info;

    th_parse_ok(state, xml, &info);
    assert_int_equal(info.cap_count, 2);
    assert_string_equal(info.caps[0], HELLO_CAP_BASE10);
    assert_string_equal(info.caps[1], "urn:example:cap:1.0");
    assert_true(info.base10);
    assert_false(info.base11);
    assert_true(info.has_session_id);
    assert_int_equal(info.session_id, 42);
    hello_info_free(&info);
}

static void
test_parse_server_hello_with_session_id(void **state)
{
    const char xml[] =
        "<hello xmlns=\"" TH_NS "\"><capabilities>"
        "<capability>urn:ietf:params:netconf:base:1.1</capability>"
        "<capability>urn:ietf:params:netconf:capability:with-defaults:1.0?basic-mode=explicit&amp;"
        "also-supported=report-all,report-all-tagged,trim</capability>"
        "<capability>urn:ietf:params:xml:ns:yang:ietf-interfaces?module=ietf-interfaces&amp;revision=2018-02-"
        "20"
        "</capability>"
        "</capabilities><session-id>1</session-id></hello>";
    struct hello_info info;

    th_parse_ok(state, xml, &info);
    assert_int_equal(info.cap_count, 3);
    assert_string_equal(
        info.caps[2],
        "urn:ietf:params:xml:ns:yang:ietf-interfaces?module=ietf-interfaces&revision=2018-02-20");
    assert_true(info.has_session_id);
    assert_int_equal(info.session_id, 1);
    assert_false(info.base10);
    assert_true(info.base11);
    hello_info_free(&info);
}

static void
test_parse_ignores_foreign_elements(void **state)
{
    const char xml[] =
        "<hello xmlns=\"" TH_NS "\" xmlns:v=\"urn:vendor\"><v:banner>hi</v:banner><capabilities>"
        "<v:capability>urn:not-counted</v:capability>"
        "<capability>urn:ietf:params:netconf:base:1.0</capability>"
        "<v:note/></capabilities><v:session-id>0</v:session-id></hello>";
    struct hello_info info;

    th_parse_ok(state, xml, &info);
    assert_int_equal(info.cap_count, 1);
    assert_string_equal(info.caps[0], HELLO_CAP_BASE10);
    assert_false(info.has_session_id);
    hello_info_free(&info);
}

static void
test_parse_works_with_empty_context(void **state)
{
    struct ly_ctx *bare = NULL;
    struct hello_info info;
    char err[TH_ERR_BYTES] = "";
    const char xml[] = "<hello xmlns=\"" TH_NS "\"><capabilities>"
                       "<capability>urn:ietf:params:netconf:base:1.1</capability>"
                       "</capabilities><session-id>9</session-id></hello>";

    assert_int_equal(ly_ctx_new(NULL, 0, &bare), LY_SUCCESS);
    assert_int_equal(hello_parse(bare, xml, &info, err, sizeof err), FLEET_OK);
    assert_int_equal(info.session_id, 9);
    assert_true(info.base11);
    hello_info_free(&info);
    ly_ctx_destroy(bare);
}

static void
test_parse_missing_capabilities(void **state)
{
    char *xml = th_hello("<session-id>3</session-id>");

    th_parse_fails(state, xml, FLEET_ERR_INVAL, "hello has no <capabilities>");
    free(xml);
}

static void
test_parse_capabilities_in_wrong_namespace(void **state)
{
    char *xml = th_hello("<capabilities xmlns=\"urn:other\"><capability>urn:x</capability></capabilities>");

    th_parse_fails(state, xml, FLEET_ERR_INVAL, "hello has no <capabilities>");
    free(xml);
}

static void
test_parse_empty_capabilities(void **state)
{
    char *xml = th_hello("<capabilities>\n  </capabilities>");

    th_parse_fails(state, xml, FLEET_ERR_INVAL, "hello lists no <capability>");
    free(xml);
}

static void
test_parse_empty_capability(void **state)
{
    char *xml = th_hello("<capabilities><capability>urn:ietf:params:netconf:base:1.0</capability>"
                         "<capability> \n </capability></capabilities>");

    th_parse_fails(state, xml, FLEET_ERR_INVAL, "hello has an empty <capability>");
    free(xml);
}

static void
test_parse_duplicate_capabilities(void **state)
{
    char *xml = th_hello("<capabilities><capability>urn:a</capability></capabilities>"
                         "<capabilities><capability>urn:b</capability></capabilities>");

    th_parse_fails(state, xml, FLEET_ERR_INVAL, "hello has more than one <capabilities>");
    free(xml);
}

static void
test_parse_too_many_capabilities(void **state)
{
    const char cap[] = "<capability>urn:c</capability>";
    size_t inner_len = (HELLO_MAX_CAPS + 1) * (sizeof cap - 1) + 64;
    char *inner = malloc(inner_len);
    char *xml;
    size_t off;
    size_t i;

    assert_non_null(inner);
    off = (size_t)sprintf(inner, "<capabilities>");
    for (i = 0; i < HELLO_MAX_CAPS + 1; i++) {
        memcpy(inner + off, cap, sizeof cap - 1);
        off += sizeof cap - 1;
    }
    strcpy(inner + off, "</capabilities>");
    xml = th_hello(inner);
    th_parse_fails(state, xml, FLEET_ERR_INVAL, "hello lists more than 4096 capabilities");
    free(xml);
    free(inner);
}

static void
test_parse_wrong_root_element(void **state)
{
    th_parse_fails(state, "<capabilities xmlns=\"" TH_NS "\"><capability>urn:a</capability></capabilities>",
                   FLEET_ERR_INVAL, "root element is <capabilities>, not <hello>");
}

static void
test_parse_schema_data_as_root(void **state)
{
    /* ietf-interfaces is in the test context, so this root is a schema node, not opaque. */
    th_parse_fails(state, "<interfaces xmlns=\"urn:ietf:params:xml:ns:yang:ietf-interfaces\"/>",
                   FLEET_ERR_INVAL, "root element is <interfaces>, not <hello>");
}

static void
test_parse_hello_in_wrong_namespace(void **state)
{
    th_parse_fails(state,
                   "<hello xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.1\"><capabilities>"
                   "<capability>urn:ietf:params:netconf:base:1.1</capability></capabilities></hello>",
                   FLEET_ERR_INVAL,
                   "<hello> is in namespace \"urn:ietf:params:xml:ns:netconf:base:1.1\", not " TH_NS);
}

static void
test_parse_two_root_elements(void **state)
{
    th_parse_fails(state,
                   "<hello xmlns=\"" TH_NS
                   "\"><capabilities><capability>urn:a</capability></capabilities></hello>"
                   "<hello xmlns=\"" TH_NS "\"/>",
                   FLEET_ERR_INVAL, "hello message has more than one top-level element");
}

static void
test_parse_empty_document(void **state)
{
    th_parse_fails(state, "", FLEET_ERR_INVAL, "hello message has no XML element");
    th_parse_fails(state, TH_XML_DECL "\n  \n", FLEET_ERR_INVAL, "hello message has no XML element");
}

static void
test_parse_not_well_formed_xml(void **state)
{
    static const char *const inputs[] = {
        "<hello xmlns=\"" TH_NS "\"><capabilities>",         /* truncated */
        "<hello xmlns=\"" TH_NS "\"><capabilities></hello>", /* mismatched end tag */
        "<hello xmlns=\"" TH_NS "\"><capabilities><capability>a&bogus;</capability></capabilities></hello>",
        "<hello><capabilities><capability>urn:a</capability></capabilities></hello>", /* no namespace at all
                                                                                       */
        "hello",
    };
    size_t i;

    for (i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        char err[TH_ERR_BYTES] = "";
        struct hello_info info;

        assert_int_equal(hello_parse(*state, inputs[i], &info, err, sizeof err), FLEET_ERR_INVAL);
        /* Our prefix is exact; libyang's detail after it must be present but is libyang's wording. */
        if (strncmp(err, TH_XML_ERR_PREFIX, strlen(TH_XML_ERR_PREFIX))) {
            fail_msg("input %zu: unexpected error \"%s\"", i, err);
        }
        assert_true(strlen(err) > strlen(TH_XML_ERR_PREFIX));
        assert_null(info.caps);
        assert_int_equal(info.cap_count, 0);
    }
}

static void
test_parse_truncated_xml_names_libyang_error(void **state)
{
    /* Pinned to libyang 2.1's wording, to show the detail reaches the caller. */
    th_parse_fails(state, "<hello xmlns=\"" TH_NS "\"><capabilities>", FLEET_ERR_INVAL,
                   TH_XML_ERR_PREFIX "Unexpected end-of-input.");
}

/* Regression, CESNET/libyang#2181: libyang 2.1 crashes on same-named siblings after xmlns="". */
static void
test_parse_refuses_empty_namespace_libyang_2181(void **state)
{
    static const char *const inputs[] = {
        "<a xmlns=\"\">1</a><a xmlns=\"\">1</a>",
        "<hello xmlns=\"" TH_NS "\"><capabilities xmlns=\"\"><capability>urn:a</capability>"
        "<capability>urn:b</capability></capabilities></hello>",
        "<hello xmlns=\"" TH_NS "\"><x xmlns = '' >1</x><x xmlns=\n''>2</x></hello>",
        "<p:a xmlns:p=\"\">1</p:a><p:a xmlns:p=\"\">1</p:a>",
    };
    size_t i;

    for (i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        th_parse_fails(state, inputs[i], FLEET_ERR_INVAL, "hello declares an empty XML namespace");
    }
}

static void
test_parse_bad_session_id(void **state)
{
    static const struct {
        const char *value;
        const char *err;
    } cases[] = {
        {"0", "session-id \"0\" is not a number in 1..4294967295"},
        {"4294967296", "session-id \"4294967296\" is not a number in 1..4294967295"},
        {"99999999999999999999", "session-id \"99999999999999999999\" is not a number in 1..4294967295"},
        {"-1", "session-id \"-1\" is not a number in 1..4294967295"},
        {"+1", "session-id \"+1\" is not a number in 1..4294967295"},
        {"12a", "session-id \"12a\" is not a number in 1..4294967295"},
        {"1 2", "session-id \"1 2\" is not a number in 1..4294967295"},
        {"0x10", "session-id \"0x10\" is not a number in 1..4294967295"},
        {"", "session-id \"\" is not a number in 1..4294967295"},
        {"  \n ", "session-id \"\" is not a number in 1..4294967295"},
        {"123456789012345678901234567890123456789",
         "session-id \"12345678901234567890123456789012\" is not a number in 1..4294967295"},
    };
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char inner[256];
        char *xml;

        snprintf(inner, sizeof inner,
                 "<capabilities><capability>urn:ietf:params:netconf:base:1.1</capability></capabilities>"
                 "<session-id>%s</session-id>",
                 cases[i].value);
        xml = th_hello(inner);
        th_parse_fails(state, xml, FLEET_ERR_INVAL, cases[i].err);
        free(xml);
    }
}

static void
test_parse_session_id_edge_values(void **state)
{
    static const struct {
        const char *value;
        uint32_t id;
    } cases[] = {{"1", 1}, {"4294967295", 4294967295u}, {" 42\n", 42}, {"007", 7}};
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char inner[256];
        char *xml;
        struct hello_info info;

        snprintf(inner, sizeof inner,
                 "<capabilities><capability>urn:ietf:params:netconf:base:1.1</capability></capabilities>"
                 "<session-id>%s</session-id>",
                 cases[i].value);
        xml = th_hello(inner);
        th_parse_ok(state, xml, &info);
        assert_true(info.has_session_id);
        assert_int_equal(info.session_id, cases[i].id);
        hello_info_free(&info);
        free(xml);
    }
}

static void
test_parse_duplicate_session_id(void **state)
{
    char *xml = th_hello("<capabilities><capability>urn:a</capability></capabilities>"
                         "<session-id>1</session-id><session-id>2</session-id>");

    th_parse_fails(state, xml, FLEET_ERR_INVAL, "hello has more than one <session-id>");
    free(xml);
}

static void
test_parse_tolerates_null_err_buffer(void **state)
{
    struct hello_info info;

    assert_int_equal(hello_parse(*state, "<nothello xmlns=\"urn:x\"/>", &info, NULL, 0), FLEET_ERR_INVAL);
    assert_null(info.caps);
}

static void
test_has_cap_ignores_query_of_listed_capability(void **state)
{
    char *caps[] = {
        (char *)"urn:ietf:params:netconf:capability:with-defaults:1.0?basic-mode=explicit",
        (char *)"urn:ietf:params:xml:ns:yang:ietf-interfaces?module=ietf-interfaces&revision=2018-02-20",
        (char *)"urn:ietf:params:netconf:base:1.1",
        (char *)"urn:empty-query?",
    };
    struct hello_info info = {.caps = caps, .cap_count = 4};

    assert_true(hello_has_cap(&info, "urn:ietf:params:netconf:capability:with-defaults:1.0"));
    assert_true(
        hello_has_cap(&info, "urn:ietf:params:netconf:capability:with-defaults:1.0?basic-mode=explicit"));
    assert_true(hello_has_cap(&info, "urn:ietf:params:xml:ns:yang:ietf-interfaces"));
    assert_true(hello_has_cap(&info, "urn:ietf:params:netconf:base:1.1"));
    assert_true(hello_has_cap(&info, "urn:empty-query"));
    /* Prefixes, extensions and a query only on the asked side do not match. */
    assert_false(hello_has_cap(&info, "urn:ietf:params:netconf:capability:with-defaults"));
    assert_false(
        hello_has_cap(&info, "urn:ietf:params:netconf:capability:with-defaults:1.0?basic-mode=trim"));
    assert_false(hello_has_cap(&info, "urn:ietf:params:netconf:base:1.1?x=1"));
    assert_false(hello_has_cap(&info, "urn:ietf:params:netconf:base:1"));
    assert_false(hello_has_cap(&info, "urn:ietf:params:netconf:base:1.10"));
    assert_false(hello_has_cap(&info, HELLO_CAP_BASE10));
    assert_false(hello_has_cap(&info, ""));
    assert_false(hello_has_cap(NULL, HELLO_CAP_BASE11));
}

static void
test_info_free_accepts_null_and_zeroed(void **state)
{
    struct hello_info info;

    memset(&info, 0, sizeof info);
    hello_info_free(NULL);
    hello_info_free(&info);
    hello_info_free(&info);
    assert_false(hello_has_cap(&info, HELLO_CAP_BASE10));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_client_hello_exact_text),
        cmocka_unit_test(test_build_server_hello_carries_session_id),
        cmocka_unit_test(test_build_escapes_markup_characters),
        cmocka_unit_test(test_build_refuses_bad_arguments),
        cmocka_unit_test(test_build_then_parse_roundtrip),
        cmocka_unit_test(test_build_then_parse_max_capabilities),
        cmocka_unit_test(test_parse_ncclient_hello_with_prefixes),
        cmocka_unit_test(test_parse_libnetconf2_hello),
        cmocka_unit_test(test_parse_pretty_printed_hello_trims_whitespace),
        cmocka_unit_test(test_parse_server_hello_with_session_id),
        cmocka_unit_test(test_parse_ignores_foreign_elements),
        cmocka_unit_test(test_parse_works_with_empty_context),
        cmocka_unit_test(test_parse_missing_capabilities),
        cmocka_unit_test(test_parse_capabilities_in_wrong_namespace),
        cmocka_unit_test(test_parse_empty_capabilities),
        cmocka_unit_test(test_parse_empty_capability),
        cmocka_unit_test(test_parse_duplicate_capabilities),
        cmocka_unit_test(test_parse_too_many_capabilities),
        cmocka_unit_test(test_parse_wrong_root_element),
        cmocka_unit_test(test_parse_schema_data_as_root),
        cmocka_unit_test(test_parse_hello_in_wrong_namespace),
        cmocka_unit_test(test_parse_two_root_elements),
        cmocka_unit_test(test_parse_empty_document),
        cmocka_unit_test(test_parse_not_well_formed_xml),
        cmocka_unit_test(test_parse_truncated_xml_names_libyang_error),
        cmocka_unit_test(test_parse_refuses_empty_namespace_libyang_2181),
        cmocka_unit_test(test_parse_bad_session_id),
        cmocka_unit_test(test_parse_session_id_edge_values),
        cmocka_unit_test(test_parse_duplicate_session_id),
        cmocka_unit_test(test_parse_tolerates_null_err_buffer),
        cmocka_unit_test(test_has_cap_ignores_query_of_listed_capability),
        cmocka_unit_test(test_info_free_accepts_null_and_zeroed),
    };

    return cmocka_run_group_tests(tests, th_setup, th_teardown);
}
