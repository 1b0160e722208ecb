/*
 * Unit tests of the reply scanner (wire/reply_scan.c): what a load client
 * learns from an rpc-reply without parsing it into a tree.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reply_scan.h"

static struct reply_info
scan(const char *xml)
{
    struct reply_info info;

    reply_scan(xml, strlen(xml), &info);
    return info;
}

static void
test_ok_reply_gives_message_id_and_ok(void **state)
{
    struct reply_info r =
        scan("<rpc-reply xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\" message-id=\"4711\">"
             "<ok/></rpc-reply>");

    (void)state;
    assert_int_equal(r.kind, REPLY_RPC_REPLY);
    assert_true(r.has_message_id);
    assert_int_equal(r.message_id, 4711);
    assert_true(r.ok);
    assert_int_equal(r.error_count, 0);
    assert_string_equal(r.error_tag, "");
}

static void
test_prefixed_elements_and_xml_declaration_are_understood(void **state)
{
    struct reply_info r = scan("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                               "<nc:rpc-reply xmlns:nc=\"urn:ietf:params:xml:ns:netconf:base:1.0\" "
                               "nc:message-id='12'>\n  <nc:ok/>\n</nc:rpc-reply>");

    (void)state;
    assert_int_equal(r.kind, REPLY_RPC_REPLY);
    assert_int_equal(r.message_id, 12);
    assert_true(r.ok);
}

static void
test_errors_are_counted_and_first_tag_kept(void **state)
{
    struct reply_info r = scan(
        "<rpc-reply message-id=\"3\" xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\">"
        "<rpc-error><error-type>application</error-type><error-tag> data-exists </error-tag>"
        "<error-severity>error</error-severity></rpc-error>"
        "<rpc-error><error-type>protocol</error-type><error-tag>in-use</error-tag></rpc-error></rpc-reply>");

    (void)state;
    assert_int_equal(r.error_count, 2);
    assert_string_equal(r.error_tag, "data-exists");
    assert_false(r.ok);
}

static void
test_data_reply_is_seen_and_ok_inside_cdata_or_comment_is_not(void **state)
{
    struct reply_info r =
        scan("<rpc-reply message-id=\"9\"><!-- <ok/> --><data><x><![CDATA[<ok/>]]></x></data>"
             "</rpc-reply>");

    (void)state;
    assert_true(r.data);
    assert_false(r.ok);
    assert_int_equal(r.message_id, 9);
}

static void
test_attribute_that_only_ends_in_message_id_is_not_taken(void **state)
{
    struct reply_info r = scan("<rpc-reply xmessage-id=\"5\"><ok/></rpc-reply>");

    (void)state;
    assert_false(r.has_message_id);
}

static void
test_missing_or_non_numeric_message_id(void **state)
{
    struct reply_info a = scan("<rpc-reply><ok/></rpc-reply>");
    struct reply_info b = scan("<rpc-reply message-id=\"abc\"><ok/></rpc-reply>");

    (void)state;
    assert_false(a.has_message_id);
    assert_false(b.has_message_id);
    assert_true(b.ok);
}

static void
test_notification_and_other_roots_are_told_apart(void **state)
{
    struct reply_info n = scan("<notification xmlns=\"urn:ietf:params:xml:ns:netconf:notification:1.0\">"
                               "<eventTime>2026-01-01T00:00:00Z</eventTime></notification>");
    struct reply_info o = scan("<hello><capabilities/></hello>");
    struct reply_info m = scan("no xml here");

    (void)state;
    assert_int_equal(n.kind, REPLY_NOTIFICATION);
    assert_int_equal(o.kind, REPLY_OTHER);
    assert_int_equal(m.kind, REPLY_MALFORMED);
}

static void
test_truncated_reply_does_not_read_past_its_length(void **state)
{
    const char *xml = "<rpc-reply message-id=\"77\"><rpc-error><error-tag>too-big</error-tag>";
    struct reply_info r;

    (void)state;
    /* Cut inside the error-tag text: no tag text without its closing '<', and no overread. */
    reply_scan(xml, strlen(xml) - strlen("too-big</error-tag>") + 3, &r);
    assert_int_equal(r.message_id, 77);
    assert_int_equal(r.error_count, 1);
    assert_string_equal(r.error_tag, "");
}

static void
test_long_error_tag_is_cut_to_the_buffer(void **state)
{
    struct reply_info r =
        scan("<rpc-reply message-id=\"1\"><rpc-error><error-tag>"
             "a-very-long-error-tag-that-no-rfc-defines-at-all</error-tag></rpc-error></rpc-reply>");

    (void)state;
    assert_int_equal(strlen(r.error_tag), REPLY_TAG_MAX_BYTES - 1);
    assert_memory_equal(r.error_tag, "a-very-long-error-tag-that-no-r", REPLY_TAG_MAX_BYTES - 1);
}

/* Found by fuzzing: "<!" at the very end of a buffer that is not NUL-terminated was read past. */
static void
test_markup_opener_at_the_end_is_not_read_past(void **state)
{
    char *buf = malloc(2);
    struct reply_info r;

    (void)state;
    memcpy(buf, "<!", 2);
    assert_int_equal(reply_scan(buf, 2, &r), REPLY_MALFORMED);
    free(buf);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ok_reply_gives_message_id_and_ok),
        cmocka_unit_test(test_prefixed_elements_and_xml_declaration_are_understood),
        cmocka_unit_test(test_errors_are_counted_and_first_tag_kept),
        cmocka_unit_test(test_data_reply_is_seen_and_ok_inside_cdata_or_comment_is_not),
        cmocka_unit_test(test_attribute_that_only_ends_in_message_id_is_not_taken),
        cmocka_unit_test(test_missing_or_non_numeric_message_id),
        cmocka_unit_test(test_notification_and_other_roots_are_told_apart),
        cmocka_unit_test(test_truncated_reply_does_not_read_past_its_length),
        cmocka_unit_test(test_long_error_tag_is_cut_to_the_buffer),
        cmocka_unit_test(test_markup_opener_at_the_end_is_not_read_past),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
