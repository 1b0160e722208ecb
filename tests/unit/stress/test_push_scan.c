/*
 * Unit tests of "fleetsim-stress push"'s pure parts (stress/push_scan.c, issue 31): the scan of
 * push-update, push-change-update and the subscription-* notifications as RFC 8639 and RFC 8641 write
 * them, establish-subscription's reply, RFC 3339 times, and the slot arithmetic that finds missed and
 * duplicated periods and the offset of eventTime from its slot.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "push_scan.h"

#define NOTIF "<notification xmlns=\"urn:ietf:params:xml:ns:netconf:notification:1.0\">"

/* RFC 8641 appendix A.2's push-update, with the leaves of a one-interface counter subtree. */
static const char push_update[] =
    "<?xml version=\"1.0\"?>\n" NOTIF "<eventTime>2026-12-07T22:20:20.50Z</eventTime>"
    "<push-update xmlns=\"urn:ietf:params:xml:ns:yang:ietf-yang-push\"><id>1011</id>"
    "<datastore-contents><interfaces xmlns=\"urn:ietf:params:xml:ns:yang:ietf-interfaces\"><interface>"
    "<name>eth0</name><statistics><in-octets>128</in-octets><id>77</id></statistics></interface>"
    "</interfaces></datastore-contents></push-update></notification>";

/* RFC 8641 appendix A.3's push-change-update: a yang-patch replacing the editor's description. */
static const char push_change[] = NOTIF
    "<eventTime>2026-12-07T23:00:00.000123+01:00</eventTime>"
    "<yp:push-change-update xmlns:yp=\"urn:ietf:params:xml:ns:yang:ietf-yang-push\"><yp:id>89</yp:id>"
    "<yp:datastore-changes><yang-patch><patch-id>0</patch-id><edit><edit-id>edit1</edit-id>"
    "<operation>replace</operation><target>/ietf-interfaces:interfaces/interface=eth0/description</target>"
    "<value><description xmlns=\"urn:ietf:params:xml:ns:yang:ietf-interfaces\">"
    "fleetsim-stress-seq:41</description></value></edit><edit><edit-id>edit2</edit-id>"
    "<operation>replace</operation><target>/x</target><value>fleetsim-stress-seq:42</value></edit>"
    "</yang-patch></yp:datastore-changes></yp:push-change-update></notification>";

static void
test_push_update_gives_id_time_and_kind(void **state)
{
    struct pscan_info n;

    (void)state;
    assert_int_equal(pscan_scan(push_update, strlen(push_update), 1, &n), PSCAN_PUSH_UPDATE);
    assert_string_equal(n.event_time, "2026-12-07T22:20:20.50Z");
    assert_int_equal(n.has_time, 1);
    assert_true(n.event_us == 1796682020500000ll);
    assert_int_equal(n.has_id, 1);
    assert_int_equal(n.id, 1011); /* the subscription's, not the <id> inside the contents */
    assert_int_equal(n.has_seq, 0);
}

static void
test_push_change_update_gives_largest_editor_seq(void **state)
{
    struct pscan_info n;

    (void)state;
    assert_int_equal(pscan_scan(push_change, strlen(push_change), 1, &n), PSCAN_PUSH_CHANGE_UPDATE);
    assert_int_equal(n.has_id, 1);
    assert_int_equal(n.id, 89);
    assert_int_equal(n.has_seq, 1);
    assert_int_equal(n.seq, 42);
    /* +01:00: an hour earlier in UTC. */
    assert_true(n.event_us == 1796684400000123ll - 3600000000ll);
    assert_int_equal(pscan_scan(push_change, strlen(push_change), 0, &n), PSCAN_PUSH_CHANGE_UPDATE);
    assert_int_equal(n.has_seq, 0);
}

static void
test_subscription_state_notifications_give_reason(void **state)
{
    static const struct {
        const char *xml;
        enum pscan_kind kind;
        uint32_t id;
        const char *reason;
    } cases[] = {
        {NOTIF "<eventTime>2026-12-07T22:20:20Z</eventTime><subscription-terminated xmlns=\"" PSCAN_SN_NS
               "\"><id>39</id><reason>no-such-subscription</reason></subscription-terminated></notification>",
         PSCAN_TERMINATED, 39, "no-such-subscription"},
        {NOTIF
         "<eventTime>2026-12-07T22:20:20Z</eventTime><sn:subscription-suspended xmlns:sn=\"" PSCAN_SN_NS
         "\"><sn:id>7</sn:id><sn:reason>sn:insufficient-resources</sn:reason></sn:subscription-suspended>"
         "</notification>",
         PSCAN_SUSPENDED, 7, "sn:insufficient-resources"},
        {NOTIF "<eventTime>2026-12-07T22:20:20Z</eventTime><subscription-resumed xmlns=\"" PSCAN_SN_NS
               "\"><id>7</id></subscription-resumed></notification>",
         PSCAN_RESUMED, 7, ""},
        {NOTIF "<eventTime>2026-12-07T22:20:20Z</eventTime><subscription-modified xmlns=\"" PSCAN_SN_NS
               "\"><id>39</id><datastore xmlns=\"" PSCAN_YP_NS "\">ds:operational</datastore>"
               "<periodic xmlns=\"" PSCAN_YP_NS "\"><period>500</period></periodic></subscription-modified>"
               "</notification>",
         PSCAN_MODIFIED, 39, ""},
        {NOTIF "<eventTime>2026-12-07T22:20:20Z</eventTime><replay-completed xmlns=\"" PSCAN_SN_NS
               "\"><id>3</id></replay-completed></notification>",
         PSCAN_REPLAY_COMPLETED, 3, ""},
    };

    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct pscan_info n;
        assert_int_equal(pscan_scan(cases[i].xml, strlen(cases[i].xml), 0, &n), cases[i].kind);
        assert_int_equal(n.has_id, 1);
        assert_int_equal(n.id, cases[i].id);
        assert_string_equal(n.reason, cases[i].reason);
    }
}

static void
test_same_names_in_other_namespaces_are_events_or_other(void **state)
{
    static const char event[] =
        NOTIF "<eventTime>2026-12-07T22:20:20Z</eventTime>"
              "<push-update xmlns=\"urn:example\"><id>1</id></push-update></notification>";
    static const char reply[] =
        "<rpc-reply message-id=\"1\" xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\">"
        "<ok/></rpc-reply>";
    static const char wrong_root[] =
        "<notification xmlns=\"urn:example\"><eventTime>x</eventTime>"
        "<push-update xmlns=\"" PSCAN_YP_NS "\"><id>1</id></push-update></notification>";
    struct pscan_info n;

    (void)state;
    assert_int_equal(pscan_scan(event, strlen(event), 1, &n), PSCAN_EVENT);
    assert_int_equal(n.has_id, 0);
    assert_int_equal(pscan_scan(reply, strlen(reply), 1, &n), PSCAN_OTHER);
    assert_int_equal(pscan_scan(wrong_root, strlen(wrong_root), 1, &n), PSCAN_OTHER);
    assert_int_equal(pscan_scan("", 0, 1, &n), PSCAN_OTHER);
    assert_int_equal(pscan_scan("<notification", 13, 1, &n), PSCAN_OTHER);
}

static void
test_bad_id_and_time_are_not_taken(void **state)
{
    static const char m[] = NOTIF "<eventTime>yesterday</eventTime><push-update xmlns=\"" PSCAN_YP_NS
                                  "\"><id>4294967296</id></push-update></notification>";
    struct pscan_info n;

    (void)state;
    assert_int_equal(pscan_scan(m, strlen(m), 0, &n), PSCAN_PUSH_UPDATE);
    assert_int_equal(n.has_id, 0);
    assert_int_equal(n.has_time, 0);
    assert_string_equal(n.event_time, "yesterday");
}

static void
test_establish_reply_id(void **state)
{
    static const char ok[] = "<rpc-reply message-id=\"1\" xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\">"
                             "<id xmlns=\"" PSCAN_SN_NS "\">2147483649</id></rpc-reply>";
    static const char foreign[] =
        "<rpc-reply message-id=\"1\" xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\">"
        "<id>5</id></rpc-reply>";
    uint32_t id = 0;

    (void)state;
    assert_int_equal(pscan_reply_id(ok, &id), 0);
    assert_int_equal(id, 2147483649u);
    assert_int_equal(pscan_reply_id(foreign, &id), -1);
}

static void
test_time_round_trip_and_offsets(void **state)
{
    char text[64];
    int64_t us = 0;

    (void)state;
    assert_int_equal(pscan_time_us("1970-01-01T00:00:00Z", &us), 0);
    assert_true(us == 0);
    assert_int_equal(pscan_time_us("2000-02-29T12:00:00.1234567-00:30", &us), 0);
    pscan_time_text(us, text, sizeof text);
    assert_string_equal(text, "2000-02-29T12:30:00.123456Z");
    assert_int_equal(pscan_time_us("2026-12-07T22:20:20", &us), -1);
    assert_int_equal(pscan_time_us("2026-13-07T22:20:20Z", &us), -1);
    assert_int_equal(pscan_time_us("2026-12-07T22:20:20.Z", &us), -1);
}

static void
test_slots_count_missed_duplicated_and_late(void **state)
{
    struct pslots s;
    uint64_t k;
    int64_t off;
    const int64_t anchor = 1796682020000000ll;

    (void)state;
    pslots_init(&s, 500000, 1, anchor); /* period 0.5 s from a given anchor */
    assert_int_equal(pslots_add(&s, anchor + 1000000, &k, &off), PSLOT_NEXT);
    assert_int_equal(k, 2);
    assert_true(off == 0);
    assert_int_equal(pslots_add(&s, anchor + 1500000 + 1200, &k, &off), PSLOT_NEXT);
    assert_int_equal(k, 3);
    assert_true(off == 1200); /* jitter: eventTime is not its slot */
    assert_int_equal(pslots_add(&s, anchor + 3000000, &k, &off), PSLOT_GAP); /* 4 and 5 missed */
    assert_int_equal(k, 6);
    assert_int_equal(s.missed, 2);
    assert_int_equal(pslots_add(&s, anchor + 3000000, &k, &off), PSLOT_DUPLICATE);
    assert_int_equal(pslots_add(&s, anchor + 2000000 - 100, &k, &off), PSLOT_LATE); /* slot 4 after all */
    assert_int_equal(k, 4);
    assert_true(off == -100);
    assert_int_equal(s.missed, 1);
    assert_int_equal(pslots_add(&s, anchor + 2000000, &k, &off), PSLOT_DUPLICATE);
    assert_int_equal(pslots_add(&s, anchor - 400000, &k, &off), PSLOT_EARLY);
    assert_int_equal(s.updates, 6); /* duplicates are updates too; the early one is not */
    assert_int_equal(s.duplicates, 2);
    assert_int_equal(s.late, 1);
    assert_int_equal(s.early, 1);
    /* At the end (slot 6 at +3 s): slots 7 and 8 are due before +4.3 s less 0.2 s of grace, 9 is not. */
    assert_int_equal(pslots_finish(&s, anchor + 4300000, 200000), 2);
    assert_int_equal(s.missed, 3);
    assert_int_equal(pslots_finish(&s, anchor + 4300000, 200000), 0);
}

static void
test_slots_without_anchor_start_at_the_first_update(void **state)
{
    struct pslots s;
    uint64_t k;
    int64_t off;

    (void)state;
    pslots_init(&s, 1000000, 0, 0);
    assert_int_equal(pslots_add(&s, 5000123, &k, &off), PSLOT_NEXT);
    assert_int_equal(k, 0);
    assert_true(pslots_slot_us(&s, 3) == 8000123);
    assert_int_equal(pslots_add(&s, 6000123, &k, &off), PSLOT_NEXT);
    assert_int_equal(k, 1);
    /* A jump of more than the 64-slot window: all between are missed, nothing earlier is known. */
    assert_int_equal(pslots_add(&s, 106000123, &k, &off), PSLOT_GAP);
    assert_int_equal(s.missed, 99);
    assert_int_equal(pslots_add(&s, 6000123, &k, &off), PSLOT_DUPLICATE);
}

static void
test_xpath_prefixes_are_declared_once_and_unknown_ones_refused(void **state)
{
    struct sbuf b = {0};
    char bad[64];

    (void)state;
    assert_int_equal(pscan_xpath_ns_decls("/ietf-interfaces:interfaces/ietf-interfaces:interface[name='a:b']"
                                          "/ancestor::node()|/iana-x:y",
                                          &b, bad, sizeof bad),
                     0);
    assert_string_equal(b.buf, " xmlns:ietf-interfaces=\"urn:ietf:params:xml:ns:yang:ietf-interfaces\""
                               " xmlns:iana-x=\"urn:ietf:params:xml:ns:yang:iana-x\"");
    assert_string_equal(bad, "");
    assert_int_equal(pscan_xpath_ns_decls("/openconfig-interfaces:interfaces", &b, bad, sizeof bad), -1);
    assert_string_equal(bad, "openconfig-interfaces");
    sbuf_free(&b);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_push_update_gives_id_time_and_kind),
        cmocka_unit_test(test_push_change_update_gives_largest_editor_seq),
        cmocka_unit_test(test_subscription_state_notifications_give_reason),
        cmocka_unit_test(test_same_names_in_other_namespaces_are_events_or_other),
        cmocka_unit_test(test_bad_id_and_time_are_not_taken),
        cmocka_unit_test(test_establish_reply_id),
        cmocka_unit_test(test_time_round_trip_and_offsets),
        cmocka_unit_test(test_slots_count_missed_duplicated_and_late),
        cmocka_unit_test(test_slots_without_anchor_start_at_the_first_update),
        cmocka_unit_test(test_xpath_prefixes_are_declared_once_and_unknown_ones_refused),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
