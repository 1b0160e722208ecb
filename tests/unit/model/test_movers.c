/*
 * Moving state (movers.c) on one-device fleets of the moving-state test
 * profiles (tests/integration/data/moving_state/): which leaves move, found
 * by typedef ancestry, and how their values follow the device and the
 * instant (deterministic, counters monotone and wrapping at 2^32, gauges
 * near the recorded value, timestamps after boot), and the interfaces of the
 * state data becoming the type's, with counters equal to the device view's.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <cmocka.h>

#include "devfix.h"
#include "movers.h"
#include "test_util.h"

#define VENDOR "/fleetsim-test-moving:vendor-stats/port[name='%s']/%s"
#define OCIF   "/fleetsim-test-oc-if:interfaces/interface[name='%s']/state"

static struct devfix *
fixture(const char *kind)
{
    return devfix_new_moving(kind);
}

/* The leaf at @p path of device @p dev's state at @p now_ms, as a number (or text in @p text). */
static uint64_t
value_at(struct devfix *f, const struct device *dev, uint64_t now_ms, const char *path, char *text,
         size_t len)
{
    struct lyd_node *dup = NULL, *n = NULL;
    uint64_t v;

    assert_int_equal(lyd_dup_siblings(f->type.state_tree, NULL, LYD_DUP_RECURSIVE, &dup), LY_SUCCESS);
    movers_apply(f->type.movers, dev, dup, now_ms);
    if (lyd_find_path(dup, path, 0, &n)) {
        fail_msg("no %s", path);
    }
    v = strtoull(lyd_get_value(n), NULL, 10);
    if (text) {
        snprintf(text, len, "%s", lyd_get_value(n));
    }
    lyd_free_all(dup);
    return v;
}

static uint64_t
vendor(struct devfix *f, uint64_t now_ms, const char *port, const char *leaf)
{
    char path[256];
    snprintf(path, sizeof path, VENDOR, port, leaf);
    return value_at(f, &f->dev, now_ms, path, NULL, 0);
}

/* The kind of the moving leaf at @p path (MOVERS_NONE if it does not move); @p info gets its entry. */
static enum movers_kind
kind_of(struct devfix *f, const char *path, struct movers_info *info)
{
    struct lyd_node *target = NULL, *top, *n;
    uint32_t pos = 0, want = UINT32_MAX;

    if (lyd_find_path(f->type.state_tree, path, 0, &target)) {
        fail_msg("no %s", path);
    }
    LY_LIST_FOR(f->type.state_tree, top)
    {
        LYD_TREE_DFS_BEGIN(top, n)
        {
            if (n == target) {
                want = pos;
            }
            pos++;
            LYD_TREE_DFS_END(top, n);
        }
    }
    for (uint32_t i = 0; i < movers_count(f->type.movers); i++) {
        movers_get(f->type.movers, i, info);
        if (info->pos == want) {
            return info->kind;
        }
    }
    return MOVERS_NONE;
}

static void
test_kinds_follow_typedef_ancestry_not_names(void **state)
{
    (void)state;
    struct devfix *f = fixture("oc");
    struct movers_info in;
    char p[256];

#define VK(leaf) (snprintf(p, sizeof p, VENDOR, "p0", leaf), kind_of(f, p, &in))
    assert_int_equal(VK("rx-octets"), MOVERS_COUNTER); /* vendor-octets -> yang:counter64 */
    assert_true(in.wide);
    assert_int_equal(in.rate, MOVERS_RATE_OCTETS);
    assert_int_equal(in.recorded, 5000000000u);
    assert_int_equal(VK("rx-pkts"), MOVERS_COUNTER); /* vendor-packets -> vendor-octets -> counter64 */
    assert_int_equal(in.rate, MOVERS_RATE_PACKETS);
    assert_int_equal(VK("rx-errors"), MOVERS_COUNTER); /* zero-based-counter32 */
    assert_false(in.wide);
    assert_int_equal(in.rate, MOVERS_RATE_ERRORS);
    assert_int_equal(VK("drops"), MOVERS_COUNTER);
    assert_false(in.wide);
    assert_int_equal(VK("temperature"), MOVERS_GAUGE); /* vendor-level -> gauge32 */
    assert_false(in.wide);
    assert_int_equal(VK("buffer-use"), MOVERS_GAUGE);
    assert_true(in.wide);
    assert_int_equal(VK("last-clear"), MOVERS_TIMESTAMP);
    assert_int_equal(VK("last-change"), MOVERS_TIMESTAMP);
    assert_int_equal(VK("discontinuity-time"), MOVERS_TIMESTAMP);
    assert_int_equal(VK("created"), MOVERS_NONE);   /* a date-and-time, but not an event's */
    assert_int_equal(VK("in-octets"), MOVERS_NONE); /* a counter's name, a uint64's type */
    assert_int_equal(VK("note"), MOVERS_NONE);
#undef VK
    /* The stand-in openconfig-yang-types / openconfig-types, by module and typedef name. */
    snprintf(p, sizeof p, OCIF "/counters/in-octets", "eth-1/2");
    assert_int_equal(kind_of(f, p, &in), MOVERS_COUNTER);
    assert_int_equal(in.if_pos, 1);
    snprintf(p, sizeof p, OCIF "/counters/in-fcs-errors", "eth-1/2");
    assert_int_equal(kind_of(f, p, &in), MOVERS_COUNTER); /* oc-counter -> oc-yang:counter64 */
    assert_int_equal(in.if_pos, -1);                      /* no device-view counterpart */
    snprintf(p, sizeof p, OCIF "/last-change", "eth-1/3");
    assert_int_equal(kind_of(f, p, &in), MOVERS_TIMESTAMP); /* oc-types:timeticks64 */
    assert_int_equal(in.if_pos, 2);
    snprintf(p, sizeof p, OCIF "/oper-status", "eth-1/3");
    assert_int_equal(kind_of(f, p, &in), MOVERS_STATUS); /* an enumeration, by its place */
    assert_int_equal(in.if_pos, 2);
    snprintf(p, sizeof p, OCIF "/admin-status", "eth-1/3");
    assert_int_equal(kind_of(f, p, &in), MOVERS_NONE);
    assert_int_equal(movers_count(f->type.movers), 2 * 10 + 3 * 19);
    devfix_free(f);
}

/* The schema of the leaf at @p path of the fixture's state tree moves (on-change's check, issue 31). */
static int
schema_moves(struct devfix *f, const char *path)
{
    struct lyd_node *n = NULL;

    if (lyd_find_path(f->type.state_tree, path, 0, &n)) {
        fail_msg("no %s", path);
    }
    return movers_schema_moves(n->schema);
}

static void
test_schema_moves_for_counters_gauges_and_clocks_only_issue_31(void **state)
{
    (void)state;
    struct devfix *f = fixture("oc");
    char p[256];

#define SM(leaf) (snprintf(p, sizeof p, VENDOR, "p0", leaf), schema_moves(f, p))
    assert_true(SM("rx-octets"));    /* vendor-octets -> yang:counter64 */
    assert_true(SM("rx-pkts"));      /* two typedefs deep */
    assert_true(SM("rx-errors"));    /* zero-based-counter32 */
    assert_true(SM("temperature"));  /* a gauge */
    assert_false(SM("last-change")); /* an event's timestamp moves only when the event happens */
    assert_false(SM("last-clear"));  /* an event's date-and-time likewise */
    assert_false(SM("created"));
    assert_false(SM("in-octets")); /* a counter's name, a uint64's type */
    assert_false(SM("note"));
#undef SM
    snprintf(p, sizeof p, OCIF "/counters/in-octets", "eth-1/2");
    assert_true(schema_moves(f, p));
    snprintf(p, sizeof p, OCIF "/last-change", "eth-1/3");
    assert_false(schema_moves(f, p)); /* timeticks64 of an event */
    snprintf(p, sizeof p, OCIF "/oper-status", "eth-1/3");
    assert_false(schema_moves(f, p)); /* changes with flaps: on-change material */
    assert_false(movers_schema_moves(NULL));
    devfix_free(f);
}

static void
test_oc_oper_status_follows_the_device_views_flaps(void **state)
{
    (void)state;
    struct devfix *f = fixture("oc");
    uint64_t now = DEVFIX_NOW_MS + 1000;
    char p1[256], p3[256], text[64];

    snprintf(p1, sizeof p1, OCIF "/oper-status", "eth-1/1");
    snprintf(p3, sizeof p3, OCIF "/oper-status", "eth-1/3");
    value_at(f, &f->dev, now, p1, text, sizeof text);
    assert_string_equal(text, "UP"); /* recorded UP, the view up */
    value_at(f, &f->dev, now, p3, text, sizeof text);
    assert_string_equal(text, "DOWN"); /* recorded DOWN */
    /* a flap takes eth-1/1 down and back: NETCONF says what SNMP's ifOperStatus says at each instant */
    devview_set_link(&f->dev, 0, 0, now);
    assert_int_equal(devview_oper(&f->dev, 0), DEVVIEW_OPER_DOWN);
    value_at(f, &f->dev, now + 1, p1, text, sizeof text);
    assert_string_equal(text, "DOWN");
    value_at(f, &f->dev, now + 1, p3, text, sizeof text);
    assert_string_equal(text, "DOWN"); /* a link the recording has down stays down */
    devview_set_link(&f->dev, 0, 1, now + 2);
    assert_int_equal(devview_oper(&f->dev, 0), DEVVIEW_OPER_UP);
    value_at(f, &f->dev, now + 3, p1, text, sizeof text);
    assert_string_equal(text, "UP");
    devfix_free(f);
}

static void
test_counter_types_restricted_on_the_leaf_move_too(void **state)
{
    (void)state;
    struct devfix *f = fixture("text");
    struct movers_info in;

    /* a type statement with a range of its own compiles to a type of its own: its typedef is found
     * through the parsed leaf, on the leaf and in a grouping alike */
    assert_int_equal(kind_of(f, "/fleetsim-test-text:bounded/restricted-here", &in), MOVERS_COUNTER);
    assert_false(in.wide);
    assert_int_equal(in.recorded, 7);
    assert_int_equal(kind_of(f, "/fleetsim-test-text:bounded/in-grouping", &in), MOVERS_COUNTER);
    assert_true(in.wide);
    assert_int_equal(kind_of(f, "/fleetsim-test-text:bounded/hits", &in), MOVERS_COUNTER); /* a typedef */
    devfix_free(f);
}

static void
test_oc_interfaces_become_the_type_interfaces(void **state)
{
    (void)state;
    struct devfix *f = fixture("oc");
    const struct profile *p = f->type.profile;

    assert_int_equal(p->if_count, 3);
    assert_string_equal(p->ifs[0].name, "eth-1/1");
    assert_string_equal(p->ifs[2].name, "eth-1/3");
    assert_string_equal(p->ifs[0].type, "ethernetCsmacd");
    assert_int_equal(p->ifs[0].iftype, 6);
    assert_int_equal(p->ifs[0].speed_bps, 10000000000ull);
    assert_int_equal(p->ifs[1].speed_bps, 1000000000ull);
    assert_int_equal(p->ifs[0].mtu, 9000);
    assert_string_equal(p->ifs[1].description, "uplink eth-1/2");
    assert_int_equal(p->ifs[1].link_up, 1);
    assert_int_equal(p->ifs[2].link_up, 0);
    assert_int_equal(devview_oper(&f->dev, 2), DEVVIEW_OPER_DOWN);
    devfix_free(f);
}

static void
test_oc_counters_are_the_device_view_counters(void **state)
{
    (void)state;
    struct devfix *f = fixture("oc");
    struct dyn_if_counters c;
    char p[256], text[64];
    uint64_t now = DEVFIX_NOW_MS + 12345;

    for (uint32_t pos = 0; pos < 3; pos++) {
        const char *name = f->type.profile->ifs[pos].name;
        devview_counters(&f->dev, pos, now, &c);
        snprintf(p, sizeof p, OCIF "/counters/in-octets", name);
        assert_int_equal(value_at(f, &f->dev, now, p, NULL, 0), c.in_octets);
        snprintf(p, sizeof p, OCIF "/counters/out-unicast-pkts", name);
        assert_int_equal(value_at(f, &f->dev, now, p, NULL, 0), c.out_ucast);
        snprintf(p, sizeof p, OCIF "/counters/in-pkts", name);
        assert_int_equal(value_at(f, &f->dev, now, p, NULL, 0), c.in_ucast + c.in_multicast + c.in_broadcast);
        snprintf(p, sizeof p, OCIF "/counters/in-errors", name);
        assert_int_equal(value_at(f, &f->dev, now, p, NULL, 0), c.in_errors);
        snprintf(p, sizeof p, OCIF "/last-change", name);
        assert_int_equal(value_at(f, &f->dev, now, p, text, sizeof text),
                         devview_last_change_ms(&f->dev, pos) * 1000000u);
    }
    devfix_free(f);
}

static void
test_same_instant_gives_same_tree(void **state)
{
    (void)state;
    struct devfix *f = fixture("oc");
    struct lyd_node *a = NULL, *b = NULL;
    char *ta, *tb, *orig;

    assert_int_equal(lyd_dup_siblings(f->type.state_tree, NULL, LYD_DUP_RECURSIVE, &a), LY_SUCCESS);
    assert_int_equal(lyd_dup_siblings(f->type.state_tree, NULL, LYD_DUP_RECURSIVE, &b), LY_SUCCESS);
    movers_apply(f->type.movers, &f->dev, a, DEVFIX_NOW_MS + 5000);
    movers_apply(f->type.movers, &f->dev, b, DEVFIX_NOW_MS + 5000);
    ta = tu_print(a);
    tb = tu_print(b);
    orig = tu_print(f->type.state_tree);
    assert_string_equal(ta, tb);
    assert_string_not_equal(ta, orig);
    /* The note and the non-moving numbers are the recorded ones. */
    assert_non_null(strstr(ta, "<note>kept</note>"));
    assert_non_null(strstr(ta, "<in-octets>777</in-octets>"));
    free(ta);
    free(tb);
    free(orig);
    lyd_free_all(a);
    lyd_free_all(b);
    devfix_free(f);
}

static void
test_counters_grow_monotonically_from_the_scaled_recorded_value(void **state)
{
    (void)state;
    struct devfix *f = fixture("oc");
    const char *leaves[] = {"rx-octets", "rx-pkts", "rx-errors"};

    for (size_t l = 0; l < 3; l++) {
        uint64_t prev = 0;
        for (uint64_t t = 0; t <= 4000000; t += 9973) {
            uint64_t v = vendor(f, DEVFIX_NOW_MS + t, "p0", leaves[l]);
            assert_true(v >= prev);
            prev = v;
        }
    }
    /* Never below half the recorded value (the device scale is 0.5 .. 1.5), and moving. */
    assert_true(vendor(f, DEVFIX_NOW_MS, "p0", "rx-octets") >= 2500000000u);
    assert_true(vendor(f, DEVFIX_NOW_MS + 60000, "p0", "rx-octets") >
                vendor(f, DEVFIX_NOW_MS, "p0", "rx-octets") + 60 * 1000);
    assert_true(vendor(f, DEVFIX_NOW_MS + 60000, "p1", "rx-pkts") >
                vendor(f, DEVFIX_NOW_MS, "p1", "rx-pkts"));
    /* Octets run faster than packets, packets faster than errors. */
    {
        uint64_t o = vendor(f, DEVFIX_NOW_MS + 600000, "p1", "rx-octets") -
                     vendor(f, DEVFIX_NOW_MS, "p1", "rx-octets");
        uint64_t k =
            vendor(f, DEVFIX_NOW_MS + 600000, "p1", "rx-pkts") - vendor(f, DEVFIX_NOW_MS, "p1", "rx-pkts");
        uint64_t e = vendor(f, DEVFIX_NOW_MS + 600000, "p1", "rx-errors") -
                     vendor(f, DEVFIX_NOW_MS, "p1", "rx-errors");
        assert_true(o > k);
        assert_true(k > e);
        assert_true(e > 0);
    }
    devfix_free(f);
}

static void
test_counter32_wraps_at_2_32(void **state)
{
    (void)state;
    struct devfix *f = fixture("oc");
    uint64_t prev = vendor(f, DEVFIX_NOW_MS, "p1", "tx-octets32");
    uint64_t prev64 = vendor(f, DEVFIX_NOW_MS, "p1", "rx-octets");
    int wraps = 0;

    for (uint64_t t = 10000; t <= 2000000; t += 10000) {
        uint64_t v = vendor(f, DEVFIX_NOW_MS + t, "p1", "tx-octets32");
        assert_true(v <= 0xffffffffu);
        if (v < prev) {
            wraps++;
            /* What it advanced by, modulo 2^32, is ten seconds' worth: a wrap, not a reset. */
            assert_true(((v - prev) & 0xffffffffu) < 10ull * 100000000u);
        }
        prev = v;
    }
    assert_true(wraps >= 2);
    assert_true(vendor(f, DEVFIX_NOW_MS + 2000000, "p1", "rx-octets") > prev64 + 0xffffffffull);
    devfix_free(f);
}

static void
test_gauges_stay_within_ten_percent_and_vary_slowly(void **state)
{
    (void)state;
    struct devfix *f = fixture("oc");
    uint64_t lo = UINT64_MAX, hi = 0, prev = 0;

    for (uint64_t t = 0; t <= 86400000; t += 61000) {
        uint64_t temp = vendor(f, DEVFIX_NOW_MS + t, "p0", "temperature");
        uint64_t buf = vendor(f, DEVFIX_NOW_MS + t, "p0", "buffer-use");
        assert_true(temp >= 45 && temp <= 55);
        assert_true(buf >= 900000000000ull && buf <= 1100000000000ull);
        lo = buf < lo ? buf : lo;
        hi = buf > hi ? buf : hi;
        if (t) {
            /* At most 2 * 10 % over one 5-minute step: 61 s moves it by well under 10 %. */
            uint64_t d = buf > prev ? buf - prev : prev - buf;
            assert_true(d <= 100000000000ull * 61 * 2 / 300 + 1);
        }
        prev = buf;
    }
    assert_true(hi - lo > 50000000000ull); /* it does move */
    assert_int_equal(vendor(f, DEVFIX_NOW_MS, "p1", "buffer-use"), 0);
    devfix_free(f);
}

/* A date-and-time as produced ("2024-01-01T00:00:00.000Z") in ms since the epoch. */
static uint64_t
datetime_ms(const char *s)
{
    struct tm tm = {0};
    unsigned ms = 0;

    assert_int_equal(sscanf(s, "%d-%d-%dT%d:%d:%d.%uZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                            &tm.tm_min, &tm.tm_sec, &ms),
                     7);
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (uint64_t)timegm(&tm) * 1000 + ms;
}

static void
test_timestamps_lie_at_or_after_boot(void **state)
{
    (void)state;
    struct devfix *f = fixture("oc");
    uint64_t boot = devview_boot_ms(&f->dev), now = DEVFIX_NOW_MS;
    char p[256], text[64];

    snprintf(p, sizeof p, VENDOR, "p0", "discontinuity-time");
    value_at(f, &f->dev, now, p, text, sizeof text);
    assert_int_equal(datetime_ms(text), boot);
    snprintf(p, sizeof p, VENDOR, "p0", "last-clear");
    value_at(f, &f->dev, now, p, text, sizeof text);
    assert_true(datetime_ms(text) >= boot && datetime_ms(text) <= now);
    snprintf(p, sizeof p, VENDOR, "p0", "last-change"); /* yang:timestamp: hundredths since boot */
    assert_true(value_at(f, &f->dev, now, p, NULL, 0) <= (now - boot) / 10);
    /* An event does not move once it happened. */
    assert_int_equal(value_at(f, &f->dev, now + 99000, p, NULL, 0), value_at(f, &f->dev, now, p, NULL, 0));
    snprintf(p, sizeof p, OCIF "/counters/last-clear", "eth-1/1");
    value_at(f, &f->dev, now, p, text, sizeof text);
    assert_true(datetime_ms(text) >= boot);
    devfix_free(f);
}

static void
test_devices_differ(void **state)
{
    (void)state;
    struct devfix *f = fixture("oc");
    struct device other = f->dev;
    char p[256];

    other.index = DEVFIX_INDEX + 1;
    devview_device_init(&other, &f->fleet);
    snprintf(p, sizeof p, VENDOR, "p0", "rx-octets");
    assert_int_not_equal(value_at(f, &other, DEVFIX_NOW_MS, p, NULL, 0),
                         value_at(f, &f->dev, DEVFIX_NOW_MS, p, NULL, 0));
    snprintf(p, sizeof p, OCIF "/counters/in-octets", "eth-1/1");
    assert_int_not_equal(value_at(f, &other, DEVFIX_NOW_MS, p, NULL, 0),
                         value_at(f, &f->dev, DEVFIX_NOW_MS, p, NULL, 0));
    devfix_free(f);
}

static void
test_ietf_interfaces_state_becomes_the_type_interfaces(void **state)
{
    (void)state;
    struct devfix *f = fixture("ietf");
    const struct profile *p = f->type.profile;
    const struct lyd_node *n;

    assert_int_equal(p->if_count, 2);
    assert_string_equal(p->ifs[0].name, "ge-0/0/0");
    assert_int_equal(p->ifs[1].speed_bps, 10000000000ull);
    assert_int_equal(p->ifs[0].link_up, 1);
    assert_int_equal(p->ifs[1].link_up, 0);
    /* The recorded ietf-interfaces state is gone: get generates it from these interfaces. */
    LY_LIST_FOR(f->type.state_tree, n)
    {
        assert_string_not_equal(n->schema->module->name, "ietf-interfaces");
    }
    assert_int_equal(movers_count(f->type.movers), 2 * 10);
    devfix_free(f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kinds_follow_typedef_ancestry_not_names),
        cmocka_unit_test(test_schema_moves_for_counters_gauges_and_clocks_only_issue_31),
        cmocka_unit_test(test_counter_types_restricted_on_the_leaf_move_too),
        cmocka_unit_test(test_oc_interfaces_become_the_type_interfaces),
        cmocka_unit_test(test_oc_counters_are_the_device_view_counters),
        cmocka_unit_test(test_oc_oper_status_follows_the_device_views_flaps),
        cmocka_unit_test(test_same_instant_gives_same_tree),
        cmocka_unit_test(test_counters_grow_monotonically_from_the_scaled_recorded_value),
        cmocka_unit_test(test_counter32_wraps_at_2_32),
        cmocka_unit_test(test_gauges_stay_within_ten_percent_and_vary_slowly),
        cmocka_unit_test(test_timestamps_lie_at_or_after_boot),
        cmocka_unit_test(test_devices_differ),
        cmocka_unit_test(test_ietf_interfaces_state_becomes_the_type_interfaces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
