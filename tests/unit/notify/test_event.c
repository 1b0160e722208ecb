/*
 * Event ids and what each channel writes of them (issue 29 item 2): the id's
 * halves (device index + 1, the device's own count, wrapping to 1), its text,
 * the trap object (fleetsimEventId.0 as an OCTET STRING, bytes exact) and the
 * NETCONF leaf, which the device's own YANG context accepts inside
 * if-state-change and netconf-config-change (schemas/fleetsim-events.yang).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "devfix.h"
#include "event.h"
#include "sbuf.h"
#include "spdu.h"
#include "trap.h"

static void
test_id_is_device_index_plus_one_then_its_count_issue_29(void **state)
{
    struct devfix *f = devfix_new("minimal");

    (void)state;
    assert_int_equal(event_next_id(&f->dev), ((uint64_t)DEVFIX_INDEX + 1) << 32 | 1);
    assert_int_equal(event_next_id(&f->dev), ((uint64_t)DEVFIX_INDEX + 1) << 32 | 2);
    /* After 2^32 - 1 events the count starts at 1 again: never 0, never another device's half. */
    f->dev.event_count = UINT32_MAX;
    assert_int_equal(event_next_id(&f->dev), ((uint64_t)DEVFIX_INDEX + 1) << 32 | 1);
    f->dev.index = 9999; /* the high half is the index + 1, whatever the shard or worker */
    assert_int_equal(event_next_id(&f->dev), (uint64_t)10000 << 32 | 2);
    devfix_free(f);
}

static void
test_id_text_is_decimal(void **state)
{
    char buf[EVENT_ID_TEXT_BYTES];

    (void)state;
    assert_string_equal(event_id_text(4294967297ull, buf, sizeof buf), "4294967297");
    assert_string_equal(event_id_text(UINT64_MAX, buf, sizeof buf), "18446744073709551615");
}

static void
test_trap_object_is_fleetsim_event_id_as_an_octet_string(void **state)
{
    /* SEQUENCE { OID 1.3.6.1.4.1.32473.1.1.0, OCTET STRING "4294967297" } */
    static const uint8_t want[] = {0x30, 0x19, 0x06, 0x0B, 0x2B, 0x06, 0x01, 0x04, 0x01,
                                   0x81, 0xFD, 0x59, 0x01, 0x01, 0x00, 0x04, 0x0A, '4',
                                   '2',  '9',  '4',  '9',  '6',  '7',  '2',  '9',  '7'};
    uint8_t buf[256];
    struct spdu_encoder e;
    struct trap_varbind vb;

    (void)state;
    event_trap_varbind("4294967297", &vb);
    spdu_enc_init(&e, buf, sizeof buf, 0, sizeof buf);
    assert_int_equal(spdu_enc_binding(&e, vb.name, &vb.value), FLEET_OK);
    assert_int_equal(e.pos, sizeof want);
    assert_memory_equal(buf, want, sizeof want);
}

/* Parse @p xml as a notification of @p f's device type: 0 when its YANG context accepts it. */
static int
parse_notification(struct devfix *f, const char *xml)
{
    struct ly_in *in = NULL;
    struct lyd_node *tree = NULL, *op = NULL;
    LY_ERR rc;

    assert_int_equal(ly_in_new_memory(xml, &in), LY_SUCCESS);
    rc = lyd_parse_op(f->type.schemas.ctx, NULL, in, LYD_XML, LYD_TYPE_NOTIF_NETCONF, &tree, &op);
    if (rc) {
        print_message("refused: %s\n", ly_errmsg(f->type.schemas.ctx));
    }
    lyd_free_all(tree);
    lyd_free_all(op);
    ly_in_free(in, 0);
    return rc != LY_SUCCESS;
}

static void
test_leaf_is_accepted_by_the_device_schemas_issue_29(void **state)
{
    struct devfix *f = devfix_new("minimal");
    struct sbuf b = {0};
    char *xml = NULL;

    (void)state;
    event_add_leaf(&b, 4294967297ull, NULL);
    assert_false(b.failed);
    assert_string_equal(b.buf, "<event-id xmlns=\"urn:fleetsim:events\">4294967297</event-id>");
    sbuf_free(&b);
    /* With a run tag: its own leaf, XML-escaped. */
    event_add_leaf(&b, 4294967297ull, "run<&>1");
    assert_false(b.failed);
    assert_string_equal(b.buf, "<event-id xmlns=\"urn:fleetsim:events\">4294967297</event-id>"
                               "<run-tag xmlns=\"urn:fleetsim:events\">run&lt;&amp;&gt;1</run-tag>");
    xml = sbuf_take(&b, NULL);
    {
        char doc[1024];
        snprintf(
            doc, sizeof doc,
            "<notification xmlns=\"urn:ietf:params:xml:ns:netconf:notification:1.0\">"
            "<eventTime>2026-12-07T15:00:00Z</eventTime>"
            "<if-state-change xmlns=\"urn:fleetsim:if-events\"><if-name>eth0</if-name><if-index>1</if-index>"
            "<admin-status>up</admin-status><oper-status>down</oper-status>%s</if-state-change>"
            "</notification>",
            xml);
        assert_int_equal(parse_notification(f, doc), 0);
        snprintf(doc, sizeof doc,
                 "<notification xmlns=\"urn:ietf:params:xml:ns:netconf:notification:1.0\">"
                 "<eventTime>2026-12-07T15:00:00Z</eventTime>"
                 "<netconf-config-change xmlns=\"urn:ietf:params:xml:ns:yang:ietf-netconf-notifications\">"
                 "<changed-by><server/></changed-by><datastore>running</datastore>%s</netconf-config-change>"
                 "</notification>",
                 xml);
        assert_int_equal(parse_notification(f, doc), 0);
        /* 0 is never an id: the type refuses it, so a collector validating can tell. */
        snprintf(doc, sizeof doc,
                 "<notification xmlns=\"urn:ietf:params:xml:ns:netconf:notification:1.0\">"
                 "<eventTime>2026-12-07T15:00:00Z</eventTime>"
                 "<if-state-change xmlns=\"urn:fleetsim:if-events\"><if-name>eth0</if-name>"
                 "<oper-status>down</oper-status><event-id xmlns=\"urn:fleetsim:events\">0</event-id>"
                 "</if-state-change></notification>");
        assert_int_equal(parse_notification(f, doc), 1);
    }
    free(xml);
    devfix_free(f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_id_is_device_index_plus_one_then_its_count_issue_29),
        cmocka_unit_test(test_id_text_is_decimal),
        cmocka_unit_test(test_trap_object_is_fleetsim_event_id_as_an_octet_string),
        cmocka_unit_test(test_leaf_is_accepted_by_the_device_schemas_issue_29),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
