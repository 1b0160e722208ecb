/*
 * The action parameter parser (report/action_params.c) for set,
 * notification-rate and flap: defaults, every member read, each wrong type
 * or value refused with a message, the well-formedness check of a set's
 * fragment (balanced tags, namespaces, text outside elements), the kept
 * fragment shared by equal texts, and the JSON the report shows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "action_log.h"
#include "action_params.h"
#include "json_read.h"

#define IF_NS "urn:ietf:params:xml:ns:yang:ietf-interfaces"

/* Parse @p json as @p kind's body; @return the problem or NULL. */
static const char *
parse(enum devact_kind kind, const char *json, struct devact_params *p)
{
    static char err[300];
    struct jsonr_value *body = NULL;
    const char *problem;

    assert_int_equal(jsonr_parse(json, strlen(json), &body, err, sizeof err), 0);
    problem = action_params_parse(kind, body, p, err, sizeof err);
    jsonr_free(body);
    return problem;
}

/* The report's "parameters" of one action. */
static char *
logged(const struct devact_params *p)
{
    struct action_log log;
    struct sbuf out = {0};
    uint32_t idx = 0;
    char *text, *start;

    action_log_init(&log);
    action_log_add(&log, p, 1.0, 0, &idx, 1, 0, 0, 0, NULL);
    action_log_json(&log, &out);
    action_log_free(&log);
    text = sbuf_take(&out, NULL);
    start = strstr(text, "\"parameters\":") + 13;
    *strstr(start, ",\"devices\"") = '\0';
    memmove(text, start, strlen(start) + 1);
    return text;
}

static void
test_set_reads_config_and_operation(void **state)
{
    struct devact_params p, q;
    char *j;
    (void)state;
    assert_null(parse(DEVACT_SET, "{\"config\":\"<interfaces xmlns='" IF_NS "'/>\"}", &p));
    assert_int_equal(p.kind, DEVACT_SET);
    assert_string_equal(p.config, "<interfaces xmlns='" IF_NS "'/>");
    assert_int_equal(p.set_op, DEVACT_SET_MERGE);
    assert_null(
        parse(DEVACT_SET, "{\"config\":\"<interfaces xmlns='" IF_NS "'/>\",\"operation\":\"replace\"}", &q));
    assert_int_equal(q.set_op, DEVACT_SET_REPLACE);
    assert_ptr_equal(p.config, q.config); /* one kept copy of one text */
    j = logged(&q);
    assert_string_equal(j, "{\"config\":\"<interfaces xmlns='" IF_NS "'/>\",\"operation\":\"replace\"}");
    free(j);
    assert_null(parse(DEVACT_SET, "{\"config\":\"<a xmlns='urn:x'/>\",\"operation\":\"none\"}", &p));
    assert_int_equal(p.set_op, DEVACT_SET_NONE);
}

static void
test_set_refuses_bad_members(void **state)
{
    struct devact_params p;
    (void)state;
    assert_non_null(parse(DEVACT_SET, "{}", &p));
    assert_non_null(parse(DEVACT_SET, "{\"config\":3}", &p));
    assert_non_null(parse(DEVACT_SET, "{\"config\":\"<a xmlns='urn:x'/>\",\"operation\":\"delete\"}", &p));
    assert_non_null(parse(DEVACT_SET, "{\"config\":\"<a xmlns='urn:x'/>\",\"operation\":1}", &p));
    assert_string_equal(parse(DEVACT_SET, "{\"config\":\"<a xmlns='urn:x'/>\",\"x\":1}", &p),
                        "set takes no member \"x\"");
    assert_non_null(strstr(parse(DEVACT_SET, "{\"config\":\"<a xmlns='urn:x'>\"}", &p), "not well-formed"));
}

static void
test_xml_check(void **state)
{
    (void)state;
    assert_null(action_params_check_xml("<a xmlns='urn:x'><b>t &amp; u</b><c/></a>"));
    assert_null(
        action_params_check_xml("  <?xml version='1.0'?><!-- c --><a xmlns='urn:x'/>\n<p:b xmlns:p='urn:y'>"
                                "<p:c/></p:b> "));
    assert_null(action_params_check_xml("<a xmlns='urn:x'><![CDATA[<not a tag>]]></a>"));
    assert_non_null(action_params_check_xml(""));
    assert_non_null(action_params_check_xml("   "));
    assert_non_null(action_params_check_xml("text"));
    assert_non_null(action_params_check_xml("<a xmlns='urn:x'/>tail"));
    assert_non_null(action_params_check_xml("<a xmlns='urn:x'>"));
    assert_non_null(action_params_check_xml("<a xmlns='urn:x'></b>"));
    assert_non_null(action_params_check_xml("<a xmlns='urn:x'><b></a></b>"));
    assert_non_null(action_params_check_xml("</a>"));
    assert_non_null(action_params_check_xml("<a/>"));                   /* no namespace */
    assert_non_null(action_params_check_xml("<p:a xmlns:q='urn:x'/>")); /* undeclared prefix */
    assert_non_null(action_params_check_xml("<a xmlns=''/>"));          /* empty namespace */
    assert_non_null(action_params_check_xml("<a xmlns='urn:x' k='1' k='2'/>"));
    assert_non_null(action_params_check_xml("<a xmlns='urn:x'><!-- open </a>"));
    /* The namespace of an element ends with it. */
    assert_non_null(action_params_check_xml("<a xmlns='urn:x'/><b/>"));
}

static void
test_xml_check_depth(void **state)
{
    char deep[70 * 8 + 64];
    size_t n = 0;
    (void)state;
    n += (size_t)sprintf(deep + n, "<a xmlns='urn:x'>");
    for (int i = 0; i < 70; i++) {
        n += (size_t)sprintf(deep + n, "<b>");
    }
    assert_non_null(action_params_check_xml(deep));
}

static void
test_notification_rate(void **state)
{
    struct devact_params p;
    char *j;
    (void)state;
    assert_null(parse(DEVACT_NOTIF_RATE, "{\"rate\":12.5}", &p));
    assert_int_equal(p.rate_reset, 0);
    assert_true(p.rate.shape == RATE_CONSTANT && p.rate.r0 == 12.5);
    j = logged(&p);
    assert_string_equal(j, "{\"rate\":12.5}");
    free(j);
    assert_null(parse(DEVACT_NOTIF_RATE, "{\"rate\":0}", &p));
    assert_true(rate_profile_is_zero(&p.rate) && !p.rate_reset);
    assert_null(parse(DEVACT_NOTIF_RATE, "{\"rate\":null}", &p));
    assert_int_equal(p.rate_reset, 1);
    j = logged(&p);
    assert_string_equal(j, "{\"rate\":null}");
    free(j);
    assert_non_null(parse(DEVACT_NOTIF_RATE, "{}", &p));
    assert_non_null(parse(DEVACT_NOTIF_RATE, "{\"rate\":-0.5}", &p));
    assert_non_null(parse(DEVACT_NOTIF_RATE, "{\"rate\":1000001}", &p));
    assert_non_null(parse(DEVACT_NOTIF_RATE, "{\"rate\":true}", &p));
    assert_non_null(parse(DEVACT_NOTIF_RATE, "{\"rate\":1,\"reset\":true}", &p));
}

/* issue 29: notification-rate, syslog-rate and trap-rate take a rate profile's text; a bad one is refused
 * with the part that is wrong, and the action log keeps the profile as given. */
static void
test_rate_actions_take_a_profile(void **state)
{
    static const enum devact_kind kinds[] = {DEVACT_NOTIF_RATE, DEVACT_SYSLOG_RATE, DEVACT_TRAP_RATE};
    struct devact_params p;
    char *j;
    const char *why;
    (void)state;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        assert_null(parse(kinds[i], "{\"rate\":\"staged:5@10s,0@1m\"}", &p));
        assert_int_equal(p.rate.shape, RATE_STAGED);
        assert_int_equal(p.rate.stage_count, 2);
        j = logged(&p);
        assert_string_equal(j, "{\"rate\":\"staged:5@10s,0@1m\"}");
        free(j);
        assert_null(parse(kinds[i], "{\"rate\":\"5\"}", &p));
        assert_true(p.rate.shape == RATE_CONSTANT && p.rate.r0 == 5);
    }
    why = parse(DEVACT_SYSLOG_RATE, "{\"rate\":\"sine:10:20:60\"}", &p);
    assert_non_null(why);
    assert_string_equal(
        why, "syslog-rate: sine profile: AMPLITUDE 20 is above MEAN 10 (the rate would go below 0)");
    why = parse(DEVACT_TRAP_RATE, "{\"rate\":\"linear:1:2\"}", &p);
    assert_string_equal(why, "trap-rate: linear profile \"linear:1:2\" must be linear:FROM:TO:OVER");
    why = parse(DEVACT_SYSLOG_RATE, "{\"rate\":true}", &p);
    assert_non_null(strstr(why, "syslog-rate needs rate: a number from 0 to 1000000 per second"));
    assert_non_null(parse(DEVACT_SYSLOG_RATE, "{\"rate\":1,\"catalog\":\"x\"}", &p));
}

static void
test_flap(void **state)
{
    struct devact_params p;
    char *j;
    (void)state;
    assert_null(parse(DEVACT_FLAP, "{}", &p));
    assert_string_equal(p.if_name, "");
    assert_int_equal(p.for_ms, 2000);
    assert_int_equal(p.flap_count, 1);
    j = logged(&p);
    assert_string_equal(j, "{\"for\":\"2000ms\",\"count\":1}");
    free(j);
    assert_null(
        parse(DEVACT_FLAP, "{\"interface\":\"eth\\\"0\",\"for\":\"500ms\",\"count\":3,\"share\":0.5}", &p));
    assert_string_equal(p.if_name, "eth\"0");
    assert_int_equal(p.for_ms, 500);
    assert_int_equal(p.flap_count, 3);
    j = logged(&p);
    assert_string_equal(j, "{\"interface\":\"eth\\\"0\",\"for\":\"500ms\",\"count\":3}");
    free(j);
    assert_null(parse(DEVACT_FLAP, "{\"interface\":\"*\",\"count\":1000}", &p));
    assert_string_equal(p.if_name, "*");
    assert_non_null(parse(DEVACT_FLAP, "{\"interface\":\"\"}", &p));
    assert_non_null(parse(DEVACT_FLAP, "{\"interface\":7}", &p));
    assert_non_null(
        parse(DEVACT_FLAP,
              "{\"interface\":\"0123456789012345678901234567890123456789012345678901234567890123\"}", &p));
    assert_non_null(parse(DEVACT_FLAP, "{\"for\":\"0ms\"}", &p));
    assert_non_null(parse(DEVACT_FLAP, "{\"for\":\"1-2s\"}", &p));
    assert_non_null(parse(DEVACT_FLAP, "{\"for\":5}", &p));
    assert_non_null(parse(DEVACT_FLAP, "{\"count\":0}", &p));
    assert_non_null(parse(DEVACT_FLAP, "{\"count\":1001}", &p));
    assert_non_null(parse(DEVACT_FLAP, "{\"count\":2.5}", &p));
    assert_non_null(parse(DEVACT_FLAP, "{\"count\":\"2\"}", &p));
    assert_non_null(parse(DEVACT_FLAP, "{\"times\":2}", &p));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_reads_config_and_operation),
        cmocka_unit_test(test_set_refuses_bad_members),
        cmocka_unit_test(test_xml_check),
        cmocka_unit_test(test_xml_check_depth),
        cmocka_unit_test(test_notification_rate),
        cmocka_unit_test(test_rate_actions_take_a_profile),
        cmocka_unit_test(test_flap),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    action_params_free_kept();
    return rc;
}
