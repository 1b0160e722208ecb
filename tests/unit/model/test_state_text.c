/*
 * The text path of get (state_text.c) against libyang's: for the
 * moving-state test profiles, every held top-level subtree printed from its
 * text with value slots must be byte for byte what libyang prints for a
 * copy of the state tree set by movers_apply(), at several instants
 * (counters grown, 32-bit ones wrapped, a ranged counter past its range),
 * and, with configuration in running under the same nodes, what libyang
 * prints after lyd_merge_siblings() of running and state. Subtrees the
 * text cannot stand for (anydata) are left to libyang.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "datastore.h"
#include "devfix.h"
#include "movers.h"
#include "state_text.h"

#define HOUR_MS (3600ull * 1000)
#define DAY_MS  (24 * HOUR_MS)

static struct devfix *
fixture(const char *kind)
{
    return devfix_new_moving(kind);
}

static const struct lyd_node *
running(struct devfix *f)
{
    return ds_read(&f->dev.ds, f->type.template_tree, DS_RUNNING);
}

/* Top-level subtree @p i of the text path for the fixture device at @p now_ms, joined with running's
 * node of the same schema as ops_state_text_reply() finds it. */
static char *
text_path(struct devfix *f, uint32_t i, uint64_t now_ms)
{
    const struct lyd_node *config = NULL, *n;
    struct sbuf out = {0};

    LY_LIST_FOR(running(f), n)
    {
        if (n->schema == state_text_schema(f->type.state_text, i) && !(n->flags & LYD_DEFAULT)) {
            config = n;
        }
    }
    assert_int_equal(state_text_print(f->type.state_text, i, config, &f->dev, now_ms, &out), FLEET_OK);
    assert_false(out.failed);
    return sbuf_take(&out, NULL);
}

/* The same subtree as get's libyang path prints it: running copied, a copy of the state tree moved and
 * merged into it, printed. */
static char *
libyang_path(struct devfix *f, const struct lysc_node *schema, uint64_t now_ms)
{
    struct lyd_node *dup = NULL, *view = NULL, *top;
    char *text = NULL;

    assert_int_equal(lyd_dup_siblings(f->type.state_tree, NULL, LYD_DUP_RECURSIVE, &dup), LY_SUCCESS);
    movers_apply(f->type.movers, &f->dev, dup, now_ms);
    if (running(f)) {
        assert_int_equal(lyd_dup_siblings(running(f), NULL, LYD_DUP_RECURSIVE | LYD_DUP_WITH_FLAGS, &view),
                         LY_SUCCESS);
    }
    assert_int_equal(lyd_merge_siblings(&view, dup, LYD_MERGE_DESTRUCT), LY_SUCCESS);
    dup = view;
    LY_LIST_FOR(dup, top)
    {
        if (top->schema == schema) {
            assert_int_equal(lyd_print_mem(&text, top, LYD_XML, LYD_PRINT_SHRINK | LYD_PRINT_WD_EXPLICIT),
                             LY_SUCCESS);
        }
    }
    lyd_free_all(dup);
    assert_non_null(text);
    return text;
}

static void
check_paths_agree(struct devfix *f, const char *kind)
{
    static const uint64_t later[] = {0, 1000, HOUR_MS, 3 * DAY_MS, 40 * DAY_MS, 400 * DAY_MS};
    uint32_t count = state_text_count(f->type.state_text);

    assert_true(count > 0);
    for (size_t t = 0; t < sizeof later / sizeof later[0]; t++) {
        uint64_t now_ms = DEVFIX_NOW_MS + later[t];
        for (uint32_t i = 0; i < count; i++) {
            char *fast = text_path(f, i, now_ms);
            char *slow = libyang_path(f, state_text_schema(f->type.state_text, i), now_ms);
            if (strcmp(fast, slow)) {
                fail_msg("%s, %s at +%llu ms:\ntext path: %s\nlibyang:   %s", kind,
                         state_text_schema(f->type.state_text, i)->name, (unsigned long long)later[t], fast,
                         slow);
            }
            free(fast);
            free(slow);
        }
    }
}

static void
assert_paths_agree(const char *kind)
{
    struct devfix *f = fixture(kind);
    check_paths_agree(f, kind);
    devfix_free(f);
}

/* Running as a validated edit leaves it: the writes, then the defaults they bring. */
static void
write_config(struct devfix *f, const char *const *paths, const char *const *values, size_t count)
{
    struct lyd_node **tree = NULL;

    for (size_t i = 0; i < count; i++) {
        devfix_write_running(f, paths[i], values[i]);
    }
    assert_int_equal(ds_own(&f->dev.ds, f->type.template_tree, DS_RUNNING, &tree), FLEET_OK);
    assert_int_equal(lyd_validate_all(tree, NULL, LYD_VALIDATE_PRESENT | LYD_VALIDATE_NO_STATE, NULL),
                     LY_SUCCESS);
}

static void
test_openconfig_and_vendor_state_print_as_libyang_prints_them(void **state)
{
    (void)state;
    assert_paths_agree("oc");
}

static void
test_a_flapped_interface_prints_as_libyang_prints_it(void **state)
{
    struct devfix *f = fixture("oc");

    (void)state;
    devview_set_link(&f->dev, 0, 0, DEVFIX_NOW_MS); /* eth-1/1 down: its oper-status slot says DOWN */
    check_paths_agree(f, "oc, flapped");
    devfix_free(f);
}

static void
test_ietf_profile_state_prints_as_libyang_prints_it(void **state)
{
    (void)state;
    assert_paths_agree("ietf");
}

static void
test_ranged_counter_timestamp_and_default_print_as_libyang_prints_them(void **state)
{
    (void)state;
    assert_paths_agree("text");
}

static void
test_running_config_joins_the_state_as_libyang_merges_them(void **state)
{
    /* Port a in both (config and state side by side), c in running only, b and d in state only; leaves
     * of the container before and after the list; the openconfig-like list with a key-only entry in
     * both and one in running only. */
    static const char *const paths[] = {
        "/fleetsim-test-text:ports/port[name='c']/config/descr",
        "/fleetsim-test-text:ports/port[name='a']/config/descr",
        "/fleetsim-test-text:ports/port[name='a']/tag",
        "/fleetsim-test-text:ports/site",
        "/fleetsim-test-text:ports/owner",
        "/fleetsim-test-oc-if:interfaces/interface[name='eth-1/2']",
        "/fleetsim-test-oc-if:interfaces/interface[name='eth-9/9']",
    };
    static const char *const values[] = {"only in running", "configured a", "blue", "lab", "ops", NULL, NULL};
    struct devfix *f = fixture("text");
    char *text;
    int i;

    (void)state;
    write_config(f, paths, values, sizeof paths / sizeof paths[0]);
    check_paths_agree(f, "text, with running");
    /* and the join is there: config and state of port a in one entry, running's c, the default mtu not */
    i = state_text_find(f->type.state_text, "urn:fleetsim:test:text", "ports");
    assert_true(i >= 0);
    text = text_path(f, (uint32_t)i, DEVFIX_NOW_MS);
    assert_non_null(strstr(text, "<port><name>a</name><config><descr>configured a</descr></config><state>"));
    assert_non_null(
        strstr(text, "<port><name>c</name><config><descr>only in running</descr></config></port>"));
    assert_null(strstr(text, "<mtu>"));
    assert_null(strstr(text, "xmlns=\"urn:fleetsim:test:text\"><descr"));
    free(text);
    devfix_free(f);
}

static int
held(struct devfix *f, const char *ns, const char *name)
{
    return state_text_find(f->type.state_text, ns, name) >= 0;
}

static void
test_anydata_subtree_is_left_to_libyang(void **state)
{
    struct devfix *f = fixture("text");

    (void)state;
    assert_true(held(f, "urn:fleetsim:test:oc-if", "interfaces"));
    assert_true(held(f, "urn:fleetsim:test:moving", "vendor-stats"));
    assert_true(held(f, "urn:fleetsim:test:text", "bounded"));
    assert_true(held(f, "urn:fleetsim:test:text", "defaults"));
    assert_false(held(f, "urn:fleetsim:test:text", "blob"));
    assert_false(held(f, "urn:fleetsim:test:text", "nothing"));
    assert_false(held(f, "urn:fleetsim:test:moving", "bounded")); /* the name, in another namespace */
    assert_true(held(f, "urn:fleetsim:test:text", "ports"));
    assert_int_equal(state_text_count(f->type.state_text), 5);
    devfix_free(f);
}

static void
test_values_move_and_a_refused_value_keeps_the_recorded_one(void **state)
{
    struct devfix *f = fixture("text");
    int i = state_text_find(f->type.state_text, "urn:fleetsim:test:text", "bounded");
    char *soon, *late;

    (void)state;
    assert_true(i >= 0);
    soon = text_path(f, (uint32_t)i, DEVFIX_NOW_MS);
    late = text_path(f, (uint32_t)i, DEVFIX_NOW_MS + 400 * DAY_MS);
    assert_string_not_equal(soon, late); /* drops moved */
    /* hits starts at 990 and counts past its range of 0..1000 within the days: the recorded value stays */
    assert_non_null(strstr(late, "<hits>990</hits>"));
    assert_null(strstr(late, "<drops>5</drops>"));
    free(soon);
    free(late);
    devfix_free(f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_openconfig_and_vendor_state_print_as_libyang_prints_them),
        cmocka_unit_test(test_ietf_profile_state_prints_as_libyang_prints_it),
        cmocka_unit_test(test_a_flapped_interface_prints_as_libyang_prints_it),
        cmocka_unit_test(test_ranged_counter_timestamp_and_default_print_as_libyang_prints_them),
        cmocka_unit_test(test_running_config_joins_the_state_as_libyang_merges_them),
        cmocka_unit_test(test_anydata_subtree_is_left_to_libyang),
        cmocka_unit_test(test_values_move_and_a_refused_value_keeps_the_recorded_one),
    };
    ly_log_options(LY_LOSTORE_LAST); /* refused values are expected; their messages are not output */
    return cmocka_run_group_tests(tests, NULL, NULL);
}
