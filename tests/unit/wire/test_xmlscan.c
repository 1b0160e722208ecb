/*
 * Unit tests of the textual XML scanner (wire/xmlscan.c): the parts the
 * custom-reply text hash and OpenDaylight's notification reader use
 * (names that end where XML says, trimming, references, text content).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sbuf.h"
#include "xmlscan.h"

static void
test_tag_name_ends_at_space_slash_or_close(void **state)
{
    struct xmlscan_tag t;

    (void)state;
    assert_int_equal(xmlscan_read_tag("<nc:get-config a=\"1\">", &t), 0);
    assert_int_equal(t.prefix_len, 2);
    assert_memory_equal(t.prefix, "nc", 2);
    assert_int_equal(t.local_len, 10);
    assert_memory_equal(t.local, "get-config", 10);
    assert_int_equal(xmlscan_read_tag("<a/>", &t), 0);
    assert_true(t.empty);
    assert_int_equal(xmlscan_read_tag("</a >", &t), 0);
    assert_true(t.end);
    /* A non-ASCII byte once cut the name short ("cl" for "cl\xc3\xa9..."): the tag is refused now. */
    assert_int_equal(xmlscan_read_tag("<cl\xc3\xa9ose-session/>", &t), -1);
    assert_int_equal(xmlscan_read_tag("<a=b>", &t), -1);
    assert_int_equal(xmlscan_read_tag("<a:b:c>", &t), -1);
    assert_int_equal(xmlscan_read_tag("<:a>", &t), -1);
    assert_int_equal(xmlscan_read_tag("<a:>", &t), -1);
    assert_int_equal(xmlscan_read_tag("</a b=\"1\">", &t), -1);
}

static void
test_attributes_and_repeats(void **state)
{
    struct xmlscan_tag t;
    struct xmlscan_scope scope = {.count = 0};
    const struct xmlscan_ns *ns;

    (void)state;
    assert_int_equal(xmlscan_read_tag("<x:r a = 'v>' xmlns:x=\"urn:x\" xmlns=\"urn:d\">", &t), 0);
    assert_int_equal(xmlscan_push_decls(&scope, &t), 0);
    assert_int_equal(scope.count, 2);
    assert_non_null(ns = xmlscan_resolve(&scope, "x", 1));
    assert_true(xmlscan_eq(ns->uri, ns->uri_len, "urn:x"));
    assert_non_null(ns = xmlscan_resolve(&scope, NULL, 0));
    assert_true(xmlscan_eq(ns->uri, ns->uri_len, "urn:d"));
    assert_true(xmlscan_is_elem(&scope, &t, "urn:x", "r"));
    /* A repeat is refused wherever it stands, also past the first eight attributes. */
    scope.count = 0;
    assert_int_equal(xmlscan_read_tag("<r a=\"1\" b=\"2\" a=\"3\">", &t), 0);
    assert_int_equal(xmlscan_push_decls(&scope, &t), -1);
    assert_int_equal(xmlscan_read_tag("<r a1='' a2='' a3='' a4='' a5='' a6='' a7='' a8='' a9='' a2=''>", &t),
                     0);
    assert_int_equal(xmlscan_push_decls(&scope, &t), -1);
    assert_int_equal(
        xmlscan_read_tag("<r a1='' a2='' a3='' a4='' a5='' a6='' a7='' a8='' a9='' x:a2=''>", &t), 0);
    assert_int_equal(xmlscan_push_decls(&scope, &t), 0);
}

static void
test_trim(void **state)
{
    const char *s = " \t\r\n ab c\n ";
    size_t len = strlen(s);

    (void)state;
    xmlscan_trim(&s, &len);
    assert_int_equal(len, 4);
    assert_memory_equal(s, "ab c", 4);
    s = "  ";
    len = 2;
    xmlscan_trim(&s, &len);
    assert_int_equal(len, 0);
}

static char *
ref(const char *text, const char **next)
{
    struct sbuf out = {0};

    *next = xmlscan_read_ref(text, &out);
    sbuf_add(&out, "", 0);
    return sbuf_take(&out, NULL);
}

static void
test_references_decode_to_utf8(void **state)
{
    static const struct {
        const char *text; /* the reference, then a marker */
        const char *want; /* what it decodes to, NULL: refused */
    } cases[] = {
        {"&lt;|", "<"},
        {"&gt;|", ">"},
        {"&amp;|", "&"},
        {"&quot;|", "\""},
        {"&apos;|", "'"},
        {"&#65;|", "A"},
        {"&#x41;|", "A"},
        {"&#xe9;|", "\xc3\xa9"},
        {"&#x20AC;|", "\xe2\x82\xac"},
        {"&#x1F600;|", "\xf0\x9f\x98\x80"},
        {"&#0;|", NULL},
        {"&#xD800;|", NULL},
        {"&#x110000;|", NULL},
        {"&nbsp;|", NULL},
        {"&lt|", NULL},
        {"&#;|", NULL},
        {"&#x41|", NULL},
        {"x|", NULL},
    };

    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *next;
        char *got = ref(cases[i].text, &next);
        if (!cases[i].want) {
            assert_null(next);
            assert_string_equal(got, "");
        } else {
            assert_non_null(next);
            assert_int_equal(*next, '|');
            assert_string_equal(got, cases[i].want);
        }
        free(got);
    }
}

/* xmlscan_read_text() into a string; the stop offset in @p stop_at, -1 and the reason in @p why on failure.
 */
static char *
text(const char *xml, long *stop_at, const char **why)
{
    struct sbuf out = {0};
    const char *stop = NULL;

    *why = NULL;
    *stop_at = xmlscan_read_text(xml, &out, &stop, why) ? -1 : (long)(stop - xml);
    return sbuf_take(&out, NULL);
}

static void
test_text_mixes_cdata_references_and_comments(void **state)
{
    const char *why;
    long stop;
    char *got;

    (void)state;
    got = text(" a&lt;<![CDATA[<x>&amp;]]><!-- c -->&#x41; </content>", &stop, &why);
    assert_string_equal(got, " a<<x>&amp;A ");
    assert_int_equal(stop, 43);
    free(got);
    /* An empty text is "" and stops at once. */
    got = text("</t>", &stop, &why);
    assert_non_null(got);
    assert_string_equal(got, "");
    assert_int_equal(stop, 0);
    free(got);
}

static void
test_text_refuses_what_is_not_text(void **state)
{
    static const struct {
        const char *xml; /* what stands in the element */
        const char *why; /* a word of the reason */
    } cases[] = {
        {"a<b/></t>", "element"},   {"a<?pi x?></t>", "element"}, {"<![CDATA[x</t>", "CDATA"},
        {"<!-- x </t>", "comment"}, {"a &bogus; </t>", "entity"}, {"no end", "no end tag"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *why;
        long stop;
        free(text(cases[i].xml, &stop, &why));
        assert_int_equal(stop, -1);
        assert_non_null(why);
        assert_non_null(strstr(why, cases[i].why));
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tag_name_ends_at_space_slash_or_close),
        cmocka_unit_test(test_attributes_and_repeats),
        cmocka_unit_test(test_trim),
        cmocka_unit_test(test_references_decode_to_utf8),
        cmocka_unit_test(test_text_mixes_cdata_references_and_comments),
        cmocka_unit_test(test_text_refuses_what_is_not_text),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
