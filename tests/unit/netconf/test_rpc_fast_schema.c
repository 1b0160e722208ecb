/*
 * Unit tests of the <get-schema> fast path's scanner (rpc_fast_get_schema_scan(),
 * testtool/netconf/rpc_fast.h). It may only take a message whose meaning it
 * reads exactly as libyang would: the tests pin what it reads (identifier,
 * version, the <rpc> attributes the reply repeats) for the usual spellings,
 * prefixes included, and that everything else (another format, comments,
 * whitespace around a value, entities, CDATA, extra or repeated parameters,
 * every truncation of a valid message) is handed to the full path.
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

#define TRS_NC_NS  "urn:ietf:params:xml:ns:netconf:base:1.0"
#define TRS_NCM_NS "urn:ietf:params:xml:ns:yang:ietf-netconf-monitoring"

/* The envelope fleetsim-stress sends, around the parameters under test. */
#define TRS_OPEN  "<rpc message-id=\"7\" xmlns=\"" TRS_NC_NS "\"><get-schema xmlns=\"" TRS_NCM_NS "\">"
#define TRS_CLOSE "</get-schema></rpc>"
#define TRS_ID    "<identifier>ietf-interfaces</identifier>"

/* Scan @p msg, which must be eligible, and check what was read. */
static void
trs_assert_eligible(const char *msg, const char *identifier, const char *version, const char *attrs)
{
    struct rpc_fast_get_schema gs;
    int rc = rpc_fast_get_schema_scan(msg, &gs);

    if (rc) {
        rpc_fast_get_schema_free(&gs);
        fail_msg("not eligible, expected to be: %s", msg);
    }
    assert_string_equal(gs.identifier, identifier);
    assert_string_equal(gs.version, version);
    assert_non_null(gs.reply_attrs.buf);
    assert_string_equal(gs.reply_attrs.buf, attrs);
    rpc_fast_get_schema_free(&gs);
}

static void
trs_assert_not_eligible(const char *msg)
{
    struct rpc_fast_get_schema gs;
    int rc = rpc_fast_get_schema_scan(msg, &gs);

    rpc_fast_get_schema_free(&gs);
    if (!rc) {
        fail_msg("eligible, expected the full path: %s", msg);
    }
}

static void
test_get_schema_with_version_is_read(void **state)
{
    (void)state;
    trs_assert_eligible(TRS_OPEN TRS_ID "<version>2018-02-20</version><format>yang</format>" TRS_CLOSE,
                        "ietf-interfaces", "2018-02-20", " message-id=\"7\"");
    /* Parameters in another order. */
    trs_assert_eligible(TRS_OPEN "<format>yang</format><version>2018-02-20</version>" TRS_ID TRS_CLOSE,
                        "ietf-interfaces", "2018-02-20", " message-id=\"7\"");
}

static void
test_get_schema_without_version_reads_an_empty_version(void **state)
{
    (void)state;
    trs_assert_eligible(TRS_OPEN TRS_ID TRS_CLOSE, "ietf-interfaces", "", " message-id=\"7\"");
    trs_assert_eligible(TRS_OPEN TRS_ID "<version/>" TRS_CLOSE, "ietf-interfaces", "", " message-id=\"7\"");
    trs_assert_eligible(TRS_OPEN TRS_ID "<version></version>" TRS_CLOSE, "ietf-interfaces", "",
                        " message-id=\"7\"");
}

static void
test_format_yang_in_the_monitoring_namespace_is_eligible(void **state)
{
    (void)state;
    trs_assert_eligible(TRS_OPEN TRS_ID "<format>yang</format>" TRS_CLOSE, "ietf-interfaces", "",
                        " message-id=\"7\"");
    /* A prefixed value, its prefix declared on <rpc>, on <get-schema> or on <format> itself. */
    trs_assert_eligible("<rpc message-id=\"7\" xmlns=\"" TRS_NC_NS "\" xmlns:m=\"" TRS_NCM_NS "\">"
                        "<get-schema xmlns=\"" TRS_NCM_NS "\">" TRS_ID "<format>m:yang</format>" TRS_CLOSE,
                        "ietf-interfaces", "", " message-id=\"7\"");
    trs_assert_eligible(TRS_OPEN TRS_ID "<format xmlns:x=\"" TRS_NCM_NS "\">x:yang</format>" TRS_CLOSE,
                        "ietf-interfaces", "", " message-id=\"7\"");
}

static void
test_other_formats_are_not_eligible(void **state)
{
    (void)state;
    trs_assert_not_eligible(TRS_OPEN TRS_ID "<format>yin</format>" TRS_CLOSE);
    trs_assert_not_eligible(TRS_OPEN TRS_ID "<format>xsd</format>" TRS_CLOSE);
    trs_assert_not_eligible(TRS_OPEN TRS_ID "<format>YANG</format>" TRS_CLOSE);
    trs_assert_not_eligible(TRS_OPEN TRS_ID "<format></format>" TRS_CLOSE);
    trs_assert_not_eligible(TRS_OPEN TRS_ID "<format>ncm:yang</format>" TRS_CLOSE); /* unbound prefix */
    trs_assert_not_eligible(TRS_OPEN TRS_ID "<format xmlns:o=\"urn:other\">o:yang</format>" TRS_CLOSE);
    trs_assert_not_eligible(TRS_OPEN TRS_ID "<format>yang-ish</format>" TRS_CLOSE);
    trs_assert_not_eligible(TRS_OPEN TRS_ID "<format>a-very-long-format-name-indeed</format>" TRS_CLOSE);
}

static void
test_prefixed_envelope_is_read(void **state)
{
    (void)state;
    /* As ncclient writes it: prefixes everywhere, no default namespace (then no format). */
    trs_assert_eligible("<?xml version=\"1.0\" encoding=\"UTF-8\"?><nc:rpc xmlns:nc=\"" TRS_NC_NS
                        "\" message-id=\"urn:uuid:1\"><ns0:get-schema xmlns:ns0=\"" TRS_NCM_NS "\">"
                        "<ns0:identifier>openconfig-interfaces</ns0:identifier>"
                        "<ns0:version>2021-04-06</ns0:version></ns0:get-schema></nc:rpc>",
                        "openconfig-interfaces", "2021-04-06", " message-id=\"urn:uuid:1\"");
    /* A prefixed format value under prefixed elements. */
    trs_assert_eligible(
        "<nc:rpc xmlns:nc=\"" TRS_NC_NS "\" message-id=\"3\"><m:get-schema xmlns:m=\"" TRS_NCM_NS
        "\"><m:identifier>a</m:identifier><m:format>m:yang</m:format></m:get-schema></nc:rpc>",
        "a", "", " message-id=\"3\"");
    /* Unprefixed "yang" with no default namespace in scope: libyang's to judge. */
    trs_assert_not_eligible(
        "<nc:rpc xmlns:nc=\"" TRS_NC_NS "\" message-id=\"3\"><m:get-schema xmlns:m=\"" TRS_NCM_NS
        "\"><m:identifier>a</m:identifier><m:format>yang</m:format></m:get-schema></nc:rpc>");
    /* Other attributes of <rpc> are repeated, their prefix declared. */
    trs_assert_eligible("<rpc message-id=\"9\" xmlns=\"" TRS_NC_NS "\" xmlns:ex=\"urn:ex\" ex:user=\"ann\">"
                        "<get-schema xmlns=\"" TRS_NCM_NS "\">" TRS_ID TRS_CLOSE,
                        "ietf-interfaces", "", " message-id=\"9\" xmlns:ex=\"urn:ex\" ex:user=\"ann\"");
}

static void
test_whitespace_between_elements_is_eligible(void **state)
{
    (void)state;
    trs_assert_eligible(
        "<rpc message-id=\"7\" xmlns=\"" TRS_NC_NS "\">\n  <get-schema xmlns=\"" TRS_NCM_NS
        "\">\n    <identifier>ietf-interfaces</identifier>\n\t<version>2018-02-20</version>\r\n"
        "  </get-schema>\n</rpc>\n",
        "ietf-interfaces", "2018-02-20", " message-id=\"7\"");
}

static void
test_whitespace_around_a_value_is_not_eligible(void **state)
{
    (void)state;
    trs_assert_not_eligible(TRS_OPEN "<identifier> ietf-interfaces</identifier>" TRS_CLOSE);
    trs_assert_not_eligible(TRS_OPEN "<identifier>ietf-interfaces\n</identifier>" TRS_CLOSE);
    trs_assert_not_eligible(TRS_OPEN TRS_ID "<version>2018-02-20 </version>" TRS_CLOSE);
    trs_assert_not_eligible(TRS_OPEN TRS_ID "<format> yang</format>" TRS_CLOSE);
}

static void
test_comments_and_instructions_inside_rpc_are_not_eligible(void **state)
{
    (void)state;
    trs_assert_not_eligible(TRS_OPEN "<!-- c -->" TRS_ID TRS_CLOSE);
    trs_assert_not_eligible(TRS_OPEN TRS_ID "<!-- c -->" TRS_CLOSE);
    trs_assert_not_eligible("<rpc message-id=\"7\" xmlns=\"" TRS_NC_NS
                            "\"><!-- c --><get-schema xmlns=\"" TRS_NCM_NS "\">" TRS_ID TRS_CLOSE);
    trs_assert_not_eligible(TRS_OPEN "<identifier>ietf-<!-- c -->interfaces</identifier>" TRS_CLOSE);
    trs_assert_not_eligible(TRS_OPEN "<?pi x?>" TRS_ID TRS_CLOSE);
    /* Before <rpc> and after </rpc> they are not inside the message: eligible, as with edit-config. */
    trs_assert_eligible("<!-- before -->" TRS_OPEN TRS_ID TRS_CLOSE "<!-- after -->", "ietf-interfaces", "",
                        " message-id=\"7\"");
}

static void
test_references_and_cdata_are_not_eligible(void **state)
{
    (void)state;
    trs_assert_not_eligible(TRS_OPEN "<identifier>ietf&#45;interfaces</identifier>" TRS_CLOSE);
    trs_assert_not_eligible(TRS_OPEN "<identifier>a&amp;b</identifier>" TRS_CLOSE);
    trs_assert_not_eligible(TRS_OPEN "<identifier><![CDATA[ietf-interfaces]]></identifier>" TRS_CLOSE);
}

static void
test_missing_repeated_or_unknown_parameters_are_not_eligible(void **state)
{
    (void)state;
    trs_assert_not_eligible(TRS_OPEN TRS_CLOSE);
    trs_assert_not_eligible(TRS_OPEN "<version>2018-02-20</version>" TRS_CLOSE);
    trs_assert_not_eligible(TRS_OPEN "<identifier/>" TRS_CLOSE);
    trs_assert_not_eligible(TRS_OPEN TRS_ID TRS_ID TRS_CLOSE);
    trs_assert_not_eligible(TRS_OPEN TRS_ID "<version>1</version><version>2</version>" TRS_CLOSE);
    trs_assert_not_eligible(TRS_OPEN TRS_ID "<format>yang</format><format>yang</format>" TRS_CLOSE);
    trs_assert_not_eligible(TRS_OPEN TRS_ID "<location>NETCONF</location>" TRS_CLOSE);
    trs_assert_not_eligible(TRS_OPEN "<identifier><name>x</name></identifier>" TRS_CLOSE);
    /* A parameter in another namespace. */
    trs_assert_not_eligible(TRS_OPEN
                            "<identifier xmlns=\"urn:other\">ietf-interfaces</identifier>" TRS_CLOSE);
    trs_assert_not_eligible(TRS_OPEN "<identifier xmlns=\"" TRS_NC_NS
                                     "\">ietf-interfaces</identifier>" TRS_CLOSE);
}

static void
test_other_envelopes_are_not_eligible(void **state)
{
    (void)state;
    /* No message-id: the full path's missing-attribute. */
    trs_assert_not_eligible("<rpc xmlns=\"" TRS_NC_NS "\"><get-schema xmlns=\"" TRS_NCM_NS
                            "\">" TRS_ID TRS_CLOSE);
    /* get-schema in the base namespace, <rpc> in the monitoring one, another operation. */
    trs_assert_not_eligible("<rpc message-id=\"7\" xmlns=\"" TRS_NC_NS "\"><get-schema>" TRS_ID TRS_CLOSE);
    trs_assert_not_eligible("<rpc message-id=\"7\" xmlns=\"" TRS_NCM_NS "\"><get-schema>" TRS_ID TRS_CLOSE);
    trs_assert_not_eligible("<rpc message-id=\"7\" xmlns=\"" TRS_NC_NS "\"><get/></rpc>");
    /* Two operations, or text, or another element after the operation. */
    trs_assert_not_eligible(TRS_OPEN TRS_ID "</get-schema><get-schema xmlns=\"" TRS_NCM_NS
                                            "\">" TRS_ID TRS_CLOSE);
    trs_assert_not_eligible(TRS_OPEN TRS_ID "</get-schema>x</rpc>");
    trs_assert_not_eligible(TRS_OPEN TRS_ID TRS_CLOSE "<rpc/>");
    /* Attributes other than declarations on the operation or a parameter. */
    trs_assert_not_eligible("<rpc message-id=\"7\" xmlns=\"" TRS_NC_NS "\"><get-schema xmlns=\"" TRS_NCM_NS
                            "\" a=\"1\">" TRS_ID TRS_CLOSE);
    trs_assert_not_eligible(TRS_OPEN "<identifier a=\"1\">ietf-interfaces</identifier>" TRS_CLOSE);
    /* Mismatched end tags. */
    trs_assert_not_eligible(TRS_OPEN "<identifier>ietf-interfaces</version>" TRS_CLOSE);
    trs_assert_not_eligible(TRS_OPEN TRS_ID "</get-schemas></rpc>");
}

static void
test_too_long_identifier_is_not_eligible(void **state)
{
    char msg[2 * RPC_FAST_SCHEMA_NAME_MAX + 512];
    char name[RPC_FAST_SCHEMA_NAME_MAX + 1];

    (void)state;
    memset(name, 'a', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    snprintf(msg, sizeof msg, TRS_OPEN "<identifier>%s</identifier>" TRS_CLOSE, name);
    trs_assert_not_eligible(msg);
    name[sizeof name - 2] = '\0'; /* RPC_FAST_SCHEMA_NAME_MAX - 1 characters fit */
    snprintf(msg, sizeof msg, TRS_OPEN "<identifier>%s</identifier>" TRS_CLOSE, name);
    trs_assert_eligible(msg, name, "", " message-id=\"7\"");
}

static void
test_every_truncation_of_a_valid_message_is_not_eligible(void **state)
{
    static const char valid[] =
        TRS_OPEN TRS_ID "<version>2018-02-20</version><format>yang</format>" TRS_CLOSE;
    char buf[sizeof valid];

    (void)state;
    for (size_t n = 0; n + 1 < sizeof valid; n++) {
        memcpy(buf, valid, n);
        buf[n] = '\0';
        trs_assert_not_eligible(buf);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_get_schema_with_version_is_read),
        cmocka_unit_test(test_get_schema_without_version_reads_an_empty_version),
        cmocka_unit_test(test_format_yang_in_the_monitoring_namespace_is_eligible),
        cmocka_unit_test(test_other_formats_are_not_eligible),
        cmocka_unit_test(test_prefixed_envelope_is_read),
        cmocka_unit_test(test_whitespace_between_elements_is_eligible),
        cmocka_unit_test(test_whitespace_around_a_value_is_not_eligible),
        cmocka_unit_test(test_comments_and_instructions_inside_rpc_are_not_eligible),
        cmocka_unit_test(test_references_and_cdata_are_not_eligible),
        cmocka_unit_test(test_missing_repeated_or_unknown_parameters_are_not_eligible),
        cmocka_unit_test(test_other_envelopes_are_not_eligible),
        cmocka_unit_test(test_too_long_identifier_is_not_eligible),
        cmocka_unit_test(test_every_truncation_of_a_valid_message_is_not_eligible),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
