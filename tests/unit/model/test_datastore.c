/*
 * Unit tests of the copy-on-write datastores (testtool/model/datastore.h)
 * and of the candidate's edit log that lets commit replay edits onto
 * running instead of moving the tree. The rules pinned here: what an
 * untouched datastore reads, that ds_own() copies exactly once, which calls
 * count as writes to running, and every event that must make
 * ds_candidate_replay() give up (running changed, candidate replaced,
 * discarded or reading through, log full). Each test ends with ds_close()
 * and a zeroed record, and the ASan build checks that nothing leaks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datastore.h"
#include "test_util.h"

#define TDS_IF_NS   "urn:ietf:params:xml:ns:yang:ietf-interfaces"
#define TDS_IANA_NS "urn:ietf:params:xml:ns:yang:iana-if-type"

/* The template: one interface. */
#define TDS_TMPL_XML                                                                                         \
    "<interfaces xmlns=\"" TDS_IF_NS "\"><interface><name>eth0</name>"                                       \
    "<type xmlns:ianaift=\"" TDS_IANA_NS "\">ianaift:ethernetCsmacd</type></interface></interfaces>"

/* An edit's <config> content as the log receives it. */
#define TDS_EDIT_XML(name)                                                                                   \
    "<interfaces xmlns=\"" TDS_IF_NS "\"><interface><name>" name "</name>"                                   \
    "<type xmlns:ianaift=\"" TDS_IANA_NS "\">ianaift:other</type></interface></interfaces>"

struct tds_state {
    struct ly_ctx *ctx;    /* standard modules */
    struct lyd_node *tmpl; /* the fleet template */
    char *tmpl_printed;    /* the template as printed before any test ran */
    struct datastore ds;   /* the device under test; closed by tds_case_teardown() */
};

static int
tds_setup(void **state)
{
    struct tds_state *st = calloc(1, sizeof *st);

    assert_non_null(st);
    st->ctx = tu_ctx_new(NULL);
    st->tmpl = tu_parse_data(st->ctx, TDS_TMPL_XML);
    st->tmpl_printed = tu_print(st->tmpl);
    *state = st;
    return 0;
}

static int
tds_teardown(void **state)
{
    struct tds_state *st = *state;

    free(st->tmpl_printed);
    lyd_free_all(st->tmpl);
    ly_ctx_destroy(st->ctx);
    free(st);
    return 0;
}

static int
tds_case_setup(void **state)
{
    struct tds_state *st = *state;

    memset(&st->ds, 0, sizeof st->ds);
    return 0;
}

/* Close the device even after a failure; the template must be untouched by every test. */
static int
tds_case_teardown(void **state)
{
    struct tds_state *st = *state;
    static const struct datastore empty;
    char *now;

    ds_close(&st->ds);
    assert_memory_equal(&st->ds, &empty, sizeof empty);
    now = tu_print(st->tmpl);
    if (strcmp(now, st->tmpl_printed)) {
        print_error("template changed:\n  was: %s\n  now: %s\n", st->tmpl_printed, now);
    }
    assert_string_equal(now, st->tmpl_printed);
    free(now);
    return 0;
}

/* ds_own() that must succeed; returns the own tree's root pointer. */
static struct lyd_node **
tds_own(struct tds_state *st, enum ds_id id)
{
    struct lyd_node **tree = NULL;

    assert_int_equal(ds_own(&st->ds, st->tmpl, id, &tree), FLEET_OK);
    assert_non_null(tree);
    return tree;
}

/* Add interface @p name to an own tree, as an edit would. */
static void
tds_add_interface(struct tds_state *st, struct lyd_node **tree, const char *name)
{
    char path[128];

    snprintf(path, sizeof path, "/ietf-interfaces:interfaces/interface[name='%s']/description", name);
    assert_int_equal(lyd_new_path(*tree, st->ctx, path, "added", 0, NULL), LY_SUCCESS);
}

/* @p tree must print as @p want. */
static void
tds_assert_prints(const struct lyd_node *tree, const char *want)
{
    char *got = tu_print(tree);

    if (strcmp(got, want)) {
        print_error("tree differs:\n  got:  %s\n  want: %s\n", got, want);
    }
    assert_string_equal(got, want);
    free(got);
}

/* Replay must be refused: NULL and a count of 0. */
static void
tds_assert_no_replay(const struct datastore *ds)
{
    size_t count = 12345;
    const struct ds_logged_edit *edits = ds_candidate_replay(ds, &count);

    if (edits || count) {
        print_error("replay offered %zu edits (log %p, valid %u, base gen %u, running gen %u, own %u)\n",
                    count, (void *)ds->candidate_log, ds->candidate_log_valid, ds->candidate_base_gen,
                    ds->running_gen, ds->own[DS_CANDIDATE]);
    }
    assert_null(edits);
    assert_int_equal(count, 0);
}

/* Replay must offer exactly @p want edits; returns them. */
static const struct ds_logged_edit *
tds_assert_replay(const struct datastore *ds, size_t want)
{
    size_t count = 12345;
    const struct ds_logged_edit *edits = ds_candidate_replay(ds, &count);

    if (!edits || count != want) {
        print_error("replay: edits %p count %zu, want %zu (valid %u, base gen %u, running gen %u)\n",
                    (const void *)edits, count, want, ds->candidate_log_valid, ds->candidate_base_gen,
                    ds->running_gen);
    }
    assert_non_null(edits);
    assert_int_equal(count, want);
    return edits;
}

/* Log the <config> content @p xml, then free it, as edit-config of the candidate does. */
static void
tds_log_edit(struct tds_state *st, const char *xml, int default_op, int error_option)
{
    struct lyd_node *config = NULL;

    assert_int_equal(lyd_parse_data_mem(st->ctx, xml, LYD_XML,
                                        LYD_PARSE_ONLY | LYD_PARSE_STRICT | LYD_PARSE_NO_STATE, 0, &config),
                     LY_SUCCESS);
    ds_candidate_log_edit(&st->ds, config, default_op, error_option);
    lyd_free_all(config);
}

static void
test_name_is_the_netconf_name(void **state)
{
    (void)state;
    assert_string_equal(ds_name(DS_RUNNING), "running");
    assert_string_equal(ds_name(DS_CANDIDATE), "candidate");
    assert_string_equal(ds_name(DS_STARTUP), "startup");
}

static void
test_untouched_datastores_read_the_template_itself(void **state)
{
    struct tds_state *st = *state;

    assert_ptr_equal(ds_read(&st->ds, st->tmpl, DS_RUNNING), st->tmpl);
    assert_ptr_equal(ds_read(&st->ds, st->tmpl, DS_STARTUP), st->tmpl);
    assert_ptr_equal(ds_read(&st->ds, st->tmpl, DS_CANDIDATE), st->tmpl);
    assert_null(ds_read(&st->ds, NULL, DS_RUNNING));
}

static void
test_untouched_candidate_reads_running_own_tree(void **state)
{
    struct tds_state *st = *state;
    struct lyd_node **running = tds_own(st, DS_RUNNING);

    assert_ptr_not_equal(*running, st->tmpl);
    assert_ptr_equal(ds_read(&st->ds, st->tmpl, DS_CANDIDATE), *running);
    assert_ptr_equal(ds_read(&st->ds, st->tmpl, DS_STARTUP), st->tmpl);
}

static void
test_own_copies_once_and_returns_the_same_tree_after(void **state)
{
    struct tds_state *st = *state;
    struct lyd_node **first = tds_own(st, DS_RUNNING);
    struct lyd_node *root = *first;
    struct lyd_node **second;

    assert_non_null(root);
    assert_ptr_not_equal(root, st->tmpl);
    tds_assert_prints(root, st->tmpl_printed);
    second = tds_own(st, DS_RUNNING);
    assert_ptr_equal(second, first);
    assert_ptr_equal(*second, root);
    assert_ptr_equal(ds_read(&st->ds, st->tmpl, DS_RUNNING), root);
}

static void
test_own_of_empty_template_is_an_empty_own_tree(void **state)
{
    struct tds_state *st = *state;
    struct lyd_node **tree = NULL;

    assert_int_equal(ds_own(&st->ds, NULL, DS_STARTUP, &tree), FLEET_OK);
    assert_null(*tree);
    assert_int_equal(st->ds.own[DS_STARTUP], 1);
    /* Owned, so it no longer reads the template through. */
    assert_null(ds_read(&st->ds, st->tmpl, DS_STARTUP));
}

static void
test_editing_own_copy_leaves_template_unchanged(void **state)
{
    struct tds_state *st = *state;
    struct lyd_node **tree = tds_own(st, DS_STARTUP);
    char *edited;

    tds_add_interface(st, tree, "eth1");
    edited = tu_print(*tree);
    assert_non_null(strstr(edited, "<name>eth1</name>"));
    tds_assert_prints(st->tmpl, st->tmpl_printed);
    assert_ptr_equal(ds_read(&st->ds, st->tmpl, DS_RUNNING), st->tmpl);
    free(edited);
}

static void
test_own_candidate_copies_running_not_the_template(void **state)
{
    struct tds_state *st = *state;
    struct lyd_node **running = tds_own(st, DS_RUNNING);
    struct lyd_node **candidate;
    char *running_printed;

    tds_add_interface(st, running, "eth1");
    running_printed = tu_print(*running);
    candidate = tds_own(st, DS_CANDIDATE);
    assert_ptr_not_equal(*candidate, *running);
    tds_assert_prints(*candidate, running_printed);
    /* From now on the two are independent. */
    tds_add_interface(st, candidate, "eth2");
    tds_assert_prints(*running, running_printed);
    free(running_printed);
}

static void
test_running_gen_increases_on_every_write_to_running(void **state)
{
    struct tds_state *st = *state;
    struct lyd_node *copy = NULL;

    assert_int_equal(st->ds.running_gen, 0);
    tds_own(st, DS_RUNNING);
    assert_int_equal(st->ds.running_gen, 1);
    tds_own(st, DS_RUNNING); /* every ds_own() of running is a write, not only the copying one */
    assert_int_equal(st->ds.running_gen, 2);
    assert_int_equal(lyd_dup_siblings(st->tmpl, NULL, LYD_DUP_RECURSIVE, &copy), LY_SUCCESS);
    ds_replace(&st->ds, DS_RUNNING, copy);
    assert_int_equal(st->ds.running_gen, 3);
    ds_reset(&st->ds, DS_RUNNING);
    assert_int_equal(st->ds.running_gen, 4);
    tds_own(st, DS_CANDIDATE);
    ds_commit(&st->ds);
    assert_int_equal(st->ds.running_gen, 5);
}

static void
test_running_gen_ignores_writes_to_candidate_and_startup(void **state)
{
    struct tds_state *st = *state;

    tds_own(st, DS_CANDIDATE);
    tds_own(st, DS_STARTUP);
    ds_replace(&st->ds, DS_CANDIDATE, NULL);
    ds_replace(&st->ds, DS_STARTUP, NULL);
    ds_reset(&st->ds, DS_CANDIDATE);
    ds_reset(&st->ds, DS_STARTUP);
    assert_int_equal(st->ds.running_gen, 0);
}

static void
test_commit_of_candidate_reading_through_changes_nothing(void **state)
{
    struct tds_state *st = *state;

    ds_commit(&st->ds);
    assert_int_equal(st->ds.running_gen, 0);
    assert_int_equal(st->ds.own[DS_RUNNING], 0);
    assert_ptr_equal(ds_read(&st->ds, st->tmpl, DS_RUNNING), st->tmpl);
}

static void
test_own_candidate_records_running_gen_and_starts_valid_empty_log(void **state)
{
    struct tds_state *st = *state;

    tds_own(st, DS_RUNNING);
    tds_own(st, DS_RUNNING);
    tds_own(st, DS_CANDIDATE);
    assert_int_equal(st->ds.candidate_base_gen, 2);
    assert_int_equal(st->ds.candidate_log_valid, 1);
    assert_null(st->ds.candidate_log); /* allocated on the first logged edit */
    /* Owning it again is no fresh copy: the base stays. */
    tds_own(st, DS_RUNNING);
    tds_own(st, DS_CANDIDATE);
    assert_int_equal(st->ds.candidate_base_gen, 2);
}

static void
test_log_edit_is_ignored_while_candidate_reads_through(void **state)
{
    struct tds_state *st = *state;

    tds_log_edit(st, TDS_EDIT_XML("eth1"), 0, 0);
    assert_null(st->ds.candidate_log);
    tds_assert_no_replay(&st->ds);
}

static void
test_log_edit_keeps_its_own_copy_of_the_config(void **state)
{
    struct tds_state *st = *state;
    const struct ds_logged_edit *edits;

    tds_own(st, DS_CANDIDATE);
    tds_log_edit(st, TDS_EDIT_XML("eth1"), 1, 2); /* frees its config right after logging it */
    edits = tds_assert_replay(&st->ds, 1);
    tds_assert_prints(edits[0].config, TDS_EDIT_XML("eth1"));
    assert_int_equal(edits[0].default_op, 1);
    assert_int_equal(edits[0].error_option, 2);
}

static void
test_replay_returns_edits_in_order_while_running_is_unchanged(void **state)
{
    struct tds_state *st = *state;
    const struct ds_logged_edit *edits;

    tds_own(st, DS_RUNNING);
    tds_own(st, DS_CANDIDATE);
    tds_log_edit(st, TDS_EDIT_XML("eth1"), 0, 0);
    ds_candidate_log_edit(&st->ds, NULL, 2, 1);
    tds_log_edit(st, TDS_EDIT_XML("eth3"), 1, 2);
    edits = tds_assert_replay(&st->ds, 3);
    tds_assert_prints(edits[0].config, TDS_EDIT_XML("eth1"));
    assert_int_equal(edits[0].default_op, 0);
    assert_int_equal(edits[0].error_option, 0);
    assert_null(edits[1].config);
    assert_int_equal(edits[1].default_op, 2);
    assert_int_equal(edits[1].error_option, 1);
    tds_assert_prints(edits[2].config, TDS_EDIT_XML("eth3"));
    assert_int_equal(edits[2].default_op, 1);
    assert_int_equal(edits[2].error_option, 2);
}

static void
test_replay_is_refused_after_running_is_owned_again(void **state)
{
    struct tds_state *st = *state;

    tds_own(st, DS_CANDIDATE);
    tds_log_edit(st, TDS_EDIT_XML("eth1"), 0, 0);
    tds_assert_replay(&st->ds, 1);
    tds_own(st, DS_RUNNING);
    tds_assert_no_replay(&st->ds);
}

static void
test_replay_is_refused_after_running_is_replaced(void **state)
{
    struct tds_state *st = *state;

    tds_own(st, DS_CANDIDATE);
    tds_log_edit(st, TDS_EDIT_XML("eth1"), 0, 0);
    ds_replace(&st->ds, DS_RUNNING, NULL);
    tds_assert_no_replay(&st->ds);
}

static void
test_replay_is_refused_after_running_is_reset(void **state)
{
    struct tds_state *st = *state;

    tds_own(st, DS_RUNNING);
    tds_own(st, DS_CANDIDATE);
    tds_log_edit(st, TDS_EDIT_XML("eth1"), 0, 0);
    ds_reset(&st->ds, DS_RUNNING);
    tds_assert_no_replay(&st->ds);
}

static void
test_replay_is_refused_after_candidate_is_replaced(void **state)
{
    struct tds_state *st = *state;
    struct lyd_node *copy = NULL;

    tds_own(st, DS_CANDIDATE);
    tds_log_edit(st, TDS_EDIT_XML("eth1"), 0, 0);
    assert_int_equal(lyd_dup_siblings(st->tmpl, NULL, LYD_DUP_RECURSIVE, &copy), LY_SUCCESS);
    ds_replace(&st->ds, DS_CANDIDATE, copy);
    assert_ptr_equal(ds_read(&st->ds, st->tmpl, DS_CANDIDATE), copy);
    assert_null(st->ds.candidate_log);
    tds_assert_no_replay(&st->ds);
    /* Later edits cannot make the replaced tree replayable again. */
    tds_own(st, DS_CANDIDATE);
    tds_log_edit(st, TDS_EDIT_XML("eth2"), 0, 0);
    tds_assert_no_replay(&st->ds);
}

static void
test_replay_is_refused_after_candidate_is_reset(void **state)
{
    struct tds_state *st = *state;
    struct lyd_node **running = tds_own(st, DS_RUNNING);

    tds_own(st, DS_CANDIDATE);
    st->ds.candidate_dirty = 1;
    tds_log_edit(st, TDS_EDIT_XML("eth1"), 0, 0);
    ds_reset(&st->ds, DS_CANDIDATE);
    assert_int_equal(st->ds.candidate_dirty, 0);
    assert_null(st->ds.candidate_log);
    assert_ptr_equal(ds_read(&st->ds, st->tmpl, DS_CANDIDATE), *running);
    tds_assert_no_replay(&st->ds);
    /* A new own copy starts a new, replayable log. */
    tds_own(st, DS_CANDIDATE);
    tds_log_edit(st, TDS_EDIT_XML("eth2"), 0, 0);
    tds_assert_replay(&st->ds, 1);
}

static void
test_replay_is_refused_while_candidate_reads_through(void **state)
{
    struct tds_state *st = *state;

    tds_assert_no_replay(&st->ds);
    tds_own(st, DS_CANDIDATE);
    tds_log_edit(st, TDS_EDIT_XML("eth1"), 0, 0);
    ds_commit(&st->ds);
    tds_assert_no_replay(&st->ds);
    ds_candidate_log_edit(&st->ds, NULL, 0, 0); /* ignored: nothing to replay onto */
    tds_assert_no_replay(&st->ds);
}

static void
test_commit_replayed_starts_a_new_log_on_the_same_candidate(void **state)
{
    struct tds_state *st = *state;
    struct lyd_node **candidate;
    struct lyd_node *candidate_root;

    tds_own(st, DS_RUNNING);
    candidate = tds_own(st, DS_CANDIDATE);
    candidate_root = *candidate;
    st->ds.candidate_dirty = 1;
    tds_log_edit(st, TDS_EDIT_XML("eth1"), 0, 0);
    tds_log_edit(st, TDS_EDIT_XML("eth2"), 0, 0);
    tds_assert_replay(&st->ds, 2);
    /* What commit does: write running, then declare both equal. */
    tds_own(st, DS_RUNNING);
    ds_commit_replayed(&st->ds);
    assert_null(st->ds.candidate_log);
    assert_int_equal(st->ds.own[DS_CANDIDATE], 1);
    assert_ptr_equal(ds_read(&st->ds, st->tmpl, DS_CANDIDATE), candidate_root);
    assert_int_equal(st->ds.candidate_dirty, 0);
    assert_int_equal(st->ds.candidate_log_valid, 1);
    assert_int_equal(st->ds.candidate_base_gen, st->ds.running_gen);
    /* The next edit is replayable against the running written by the replay. */
    tds_log_edit(st, TDS_EDIT_XML("eth3"), 1, 0);
    tds_assert_prints(tds_assert_replay(&st->ds, 1)[0].config, TDS_EDIT_XML("eth3"));
}

static void
test_commit_moves_candidate_tree_into_running(void **state)
{
    struct tds_state *st = *state;
    struct lyd_node **running = tds_own(st, DS_RUNNING);
    struct lyd_node **candidate;
    struct lyd_node *moved;
    uint32_t gen;

    tds_add_interface(st, running, "old");
    candidate = tds_own(st, DS_CANDIDATE);
    tds_add_interface(st, candidate, "eth1");
    moved = *candidate;
    st->ds.candidate_dirty = 1;
    tds_log_edit(st, TDS_EDIT_XML("eth1"), 0, 0);
    gen = st->ds.running_gen;
    ds_commit(&st->ds); /* frees running's old tree: ASan would report a use or a leak */
    assert_ptr_equal(st->ds.tree[DS_RUNNING], moved);
    assert_ptr_equal(ds_read(&st->ds, st->tmpl, DS_RUNNING), moved);
    assert_int_equal(st->ds.own[DS_CANDIDATE], 0);
    assert_null(st->ds.tree[DS_CANDIDATE]);
    assert_ptr_equal(ds_read(&st->ds, st->tmpl, DS_CANDIDATE), moved);
    assert_int_equal(st->ds.candidate_dirty, 0);
    assert_null(st->ds.candidate_log);
    assert_int_equal(st->ds.running_gen, gen + 1);
}

static void
test_full_log_gives_replay_up(void **state)
{
    struct tds_state *st = *state;

    tds_own(st, DS_CANDIDATE);
    for (size_t i = 0; i < DS_CANDIDATE_LOG_MAX; i++) {
        ds_candidate_log_edit(&st->ds, NULL, 0, 0);
    }
    tds_assert_replay(&st->ds, DS_CANDIDATE_LOG_MAX);
    ds_candidate_log_edit(&st->ds, NULL, 0, 0);
    tds_assert_no_replay(&st->ds);
    assert_null(st->ds.candidate_log);
    assert_int_equal(st->ds.candidate_log_valid, 0);
    /* Once given up, further edits are not logged. */
    tds_log_edit(st, TDS_EDIT_XML("eth1"), 0, 0);
    assert_null(st->ds.candidate_log);
}

static void
test_close_frees_every_tree_and_the_log(void **state)
{
    struct tds_state *st = *state;

    tds_add_interface(st, tds_own(st, DS_RUNNING), "eth1");
    tds_add_interface(st, tds_own(st, DS_CANDIDATE), "eth2");
    tds_add_interface(st, tds_own(st, DS_STARTUP), "eth3");
    tds_log_edit(st, TDS_EDIT_XML("eth2"), 0, 0);
    tds_log_edit(st, TDS_EDIT_XML("eth4"), 0, 0);
    assert_non_null(st->ds.candidate_log);
    /* The teardown closes it, checks the record is zeroed; ASan checks nothing leaked. */
}

#define TDS_TEST(f) cmocka_unit_test_setup_teardown(f, tds_case_setup, tds_case_teardown)

int
main(void)
{
    const struct CMUnitTest tests[] = {
        TDS_TEST(test_name_is_the_netconf_name),
        TDS_TEST(test_untouched_datastores_read_the_template_itself),
        TDS_TEST(test_untouched_candidate_reads_running_own_tree),
        TDS_TEST(test_own_copies_once_and_returns_the_same_tree_after),
        TDS_TEST(test_own_of_empty_template_is_an_empty_own_tree),
        TDS_TEST(test_editing_own_copy_leaves_template_unchanged),
        TDS_TEST(test_own_candidate_copies_running_not_the_template),
        TDS_TEST(test_running_gen_increases_on_every_write_to_running),
        TDS_TEST(test_running_gen_ignores_writes_to_candidate_and_startup),
        TDS_TEST(test_commit_of_candidate_reading_through_changes_nothing),
        TDS_TEST(test_own_candidate_records_running_gen_and_starts_valid_empty_log),
        TDS_TEST(test_log_edit_is_ignored_while_candidate_reads_through),
        TDS_TEST(test_log_edit_keeps_its_own_copy_of_the_config),
        TDS_TEST(test_replay_returns_edits_in_order_while_running_is_unchanged),
        TDS_TEST(test_replay_is_refused_after_running_is_owned_again),
        TDS_TEST(test_replay_is_refused_after_running_is_replaced),
        TDS_TEST(test_replay_is_refused_after_running_is_reset),
        TDS_TEST(test_replay_is_refused_after_candidate_is_replaced),
        TDS_TEST(test_replay_is_refused_after_candidate_is_reset),
        TDS_TEST(test_replay_is_refused_while_candidate_reads_through),
        TDS_TEST(test_commit_replayed_starts_a_new_log_on_the_same_candidate),
        TDS_TEST(test_commit_moves_candidate_tree_into_running),
        TDS_TEST(test_full_log_gives_replay_up),
        TDS_TEST(test_close_frees_every_tree_and_the_log),
    };

    return cmocka_run_group_tests(tests, tds_setup, tds_teardown);
}
