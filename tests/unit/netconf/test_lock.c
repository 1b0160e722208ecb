/*
 * Unit tests of the datastore lock rules (testtool/netconf/lock.h, RFC 6241
 * sections 7.5 and 7.6), applied to a bare device datastore record. Every
 * refusal is checked for its exact error-tag, error-type, message and
 * error-info, and for leaving the lock table as it was.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "datastore.h"
#include "edit_err.h"
#include "lock.h"
#include "test_util.h"

#define TL_IF_NS "urn:ietf:params:xml:ns:yang:ietf-interfaces"

/* Session-ids used by the tests. */
#define TL_SID_A 5
#define TL_SID_B 7

/* Group state: a context and a template; per test, one device record. */
struct tl_state {
    struct ly_ctx *ctx;    /* standard modules */
    struct lyd_node *tmpl; /* the fleet template the datastores read through to */
    struct datastore ds;   /* the device under test; closed by tl_case_teardown() */
};

/* One expected rpc-error. */
struct tl_err {
    enum edit_err_type type;
    const char *tag;
    const char *message;
    const char *info; /* error-info XML, or NULL */
};

static int
tl_setup(void **state)
{
    struct tl_state *st = calloc(1, sizeof *st);

    assert_non_null(st);
    st->ctx = tu_ctx_new(NULL);
    st->tmpl =
        tu_parse_data(st->ctx, "<interfaces xmlns=\"" TL_IF_NS "\" xmlns:ianaift="
                               "\"urn:ietf:params:xml:ns:yang:iana-if-type\"><interface><name>eth0</name>"
                               "<type>ianaift:ethernetCsmacd</type></interface></interfaces>");
    *state = st;
    return 0;
}

static int
tl_teardown(void **state)
{
    struct tl_state *st = *state;

    lyd_free_all(st->tmpl);
    ly_ctx_destroy(st->ctx);
    free(st);
    return 0;
}

static int
tl_case_setup(void **state)
{
    struct tl_state *st = *state;

    memset(&st->ds, 0, sizeof st->ds);
    return 0;
}

/* Free the device's trees even after a failure; nothing may be left. */
static int
tl_case_teardown(void **state)
{
    struct tl_state *st = *state;
    static const struct datastore empty;

    ds_close(&st->ds);
    assert_memory_equal(&st->ds, &empty, sizeof empty);
    return 0;
}

static int
tl_str_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* @p err must be exactly one rpc-error equal to @p want (no app-tag, no path); frees it. */
static void
tl_assert_err(struct edit_err *err, const struct tl_err *want)
{
    int same = edit_err_count(err) == 1 && err->type == want->type && !strcmp(err->tag, want->tag) &&
               !err->app_tag && !err->path && tl_str_eq(err->message, want->message) &&
               tl_str_eq(err->info_xml, want->info);

    if (!same) {
        print_error("expected: type=%s tag=%s message=%s info=%s\n", edit_err_type_name(want->type),
                    want->tag, want->message, want->info ? want->info : "(null)");
        for (const struct edit_err *e = err; e; e = e->next) {
            print_error("actual:   type=%s tag=%s app-tag=%s path=%s message=%s info=%s\n",
                        edit_err_type_name(e->type), e->tag, e->app_tag ? e->app_tag : "(null)",
                        e->path ? e->path : "(null)", e->message ? e->message : "(null)",
                        e->info_xml ? e->info_xml : "(null)");
        }
        if (!err) {
            print_error("actual:   no error\n");
        }
    }
    edit_err_free(err);
    assert_true(same);
}

/* A call that must succeed; prints the error it got otherwise. */
static void
tl_assert_ok(struct edit_err *err)
{
    if (err) {
        print_error("unexpected rpc-error: tag=%s message=%s\n", err->tag,
                    err->message ? err->message : "(null)");
    }
    edit_err_free(err);
    assert_null(err);
}

/* Give the candidate its own, changed tree, as an edit-config of the candidate leaves it. */
static struct lyd_node *
tl_dirty_candidate(struct tl_state *st)
{
    struct lyd_node **tree = NULL;

    assert_int_equal(ds_own(&st->ds, st->tmpl, DS_CANDIDATE, &tree), FLEET_OK);
    assert_non_null(*tree);
    st->ds.candidate_dirty = 1;
    return *tree;
}

/* ---- lock ---- */

static void
test_acquire_free_lock_grants_it(void **state)
{
    struct tl_state *st = *state;
    uint32_t before = (uint32_t)time(NULL);

    tl_assert_ok(lock_acquire(&st->ds, DS_RUNNING, TL_SID_A));
    assert_int_equal(st->ds.lock[DS_RUNNING], TL_SID_A);
    assert_in_range(st->ds.lock_time[DS_RUNNING], before, (uint32_t)time(NULL));
    /* Only that datastore is locked. */
    assert_int_equal(st->ds.lock[DS_CANDIDATE], 0);
    assert_int_equal(st->ds.lock[DS_STARTUP], 0);
}

static void
test_acquire_held_by_other_session_is_lock_denied_naming_holder(void **state)
{
    struct tl_state *st = *state;
    const struct tl_err want = {EDIT_ERR_PROTOCOL, "lock-denied",
                                "Datastore running is already locked by session 5.",
                                "<session-id>5</session-id>"};

    tl_assert_ok(lock_acquire(&st->ds, DS_RUNNING, TL_SID_A));
    tl_assert_err(lock_acquire(&st->ds, DS_RUNNING, TL_SID_B), &want);
    assert_int_equal(st->ds.lock[DS_RUNNING], TL_SID_A);
}

static void
test_acquire_again_by_holder_is_lock_denied(void **state)
{
    struct tl_state *st = *state;
    const struct tl_err want = {EDIT_ERR_PROTOCOL, "lock-denied",
                                "Datastore startup is already locked by session 5.",
                                "<session-id>5</session-id>"};

    tl_assert_ok(lock_acquire(&st->ds, DS_STARTUP, TL_SID_A));
    tl_assert_err(lock_acquire(&st->ds, DS_STARTUP, TL_SID_A), &want);
    assert_int_equal(st->ds.lock[DS_STARTUP], TL_SID_A);
}

static void
test_acquire_of_candidate_with_uncommitted_changes_is_lock_denied_session_0(void **state)
{
    struct tl_state *st = *state;
    const struct tl_err want = {EDIT_ERR_PROTOCOL, "lock-denied", "The candidate has uncommitted changes.",
                                "<session-id>0</session-id>"};

    tl_dirty_candidate(st);
    tl_assert_err(lock_acquire(&st->ds, DS_CANDIDATE, TL_SID_A), &want);
    assert_int_equal(st->ds.lock[DS_CANDIDATE], 0);
    assert_int_equal(st->ds.candidate_dirty, 1);
}

static void
test_acquire_of_running_ignores_dirty_candidate(void **state)
{
    struct tl_state *st = *state;

    tl_dirty_candidate(st);
    tl_assert_ok(lock_acquire(&st->ds, DS_RUNNING, TL_SID_A));
    assert_int_equal(st->ds.lock[DS_RUNNING], TL_SID_A);
}

static void
test_acquire_of_clean_candidate_grants_it(void **state)
{
    struct tl_state *st = *state;

    tl_assert_ok(lock_acquire(&st->ds, DS_CANDIDATE, TL_SID_B));
    assert_int_equal(st->ds.lock[DS_CANDIDATE], TL_SID_B);
}

/* ---- write checks ---- */

static void
test_check_write_by_other_session_is_in_use(void **state)
{
    struct tl_state *st = *state;
    const struct tl_err want = {EDIT_ERR_PROTOCOL, "in-use", "Datastore running is locked by session 5.",
                                NULL};

    tl_assert_ok(lock_acquire(&st->ds, DS_RUNNING, TL_SID_A));
    tl_assert_err(lock_check_write(&st->ds, DS_RUNNING, TL_SID_B), &want);
}

static void
test_check_write_by_holder_is_allowed(void **state)
{
    struct tl_state *st = *state;

    tl_assert_ok(lock_acquire(&st->ds, DS_RUNNING, TL_SID_A));
    tl_assert_ok(lock_check_write(&st->ds, DS_RUNNING, TL_SID_A));
}

static void
test_check_write_of_unlocked_or_other_datastore_is_allowed(void **state)
{
    struct tl_state *st = *state;

    tl_assert_ok(lock_check_write(&st->ds, DS_RUNNING, TL_SID_B));
    tl_assert_ok(lock_acquire(&st->ds, DS_CANDIDATE, TL_SID_A));
    tl_assert_ok(lock_check_write(&st->ds, DS_RUNNING, TL_SID_B));
}

/* ---- unlock ---- */

static void
test_release_by_holder_frees_lock_for_others(void **state)
{
    struct tl_state *st = *state;

    tl_assert_ok(lock_acquire(&st->ds, DS_RUNNING, TL_SID_A));
    tl_assert_ok(lock_release(&st->ds, DS_RUNNING, TL_SID_A));
    assert_int_equal(st->ds.lock[DS_RUNNING], 0);
    tl_assert_ok(lock_acquire(&st->ds, DS_RUNNING, TL_SID_B));
    assert_int_equal(st->ds.lock[DS_RUNNING], TL_SID_B);
}

static void
test_release_by_non_holder_is_operation_failed(void **state)
{
    struct tl_state *st = *state;
    const struct tl_err want = {EDIT_ERR_PROTOCOL, "operation-failed",
                                "Datastore running is locked by session 5.", NULL};

    tl_assert_ok(lock_acquire(&st->ds, DS_RUNNING, TL_SID_A));
    tl_assert_err(lock_release(&st->ds, DS_RUNNING, TL_SID_B), &want);
    assert_int_equal(st->ds.lock[DS_RUNNING], TL_SID_A);
}

static void
test_release_when_unlocked_is_operation_failed(void **state)
{
    struct tl_state *st = *state;
    const struct tl_err want = {EDIT_ERR_PROTOCOL, "operation-failed", "Datastore candidate is not locked.",
                                NULL};

    tl_assert_err(lock_release(&st->ds, DS_CANDIDATE, TL_SID_A), &want);
    assert_int_equal(st->ds.lock[DS_CANDIDATE], 0);
}

static void
test_release_does_not_discard_candidate_changes(void **state)
{
    struct tl_state *st = *state;
    struct lyd_node *cand;

    tl_assert_ok(lock_acquire(&st->ds, DS_CANDIDATE, TL_SID_A));
    cand = tl_dirty_candidate(st);
    tl_assert_ok(lock_release(&st->ds, DS_CANDIDATE, TL_SID_A));
    /* An explicit unlock keeps the changes; only a session that ends loses them. */
    assert_int_equal(st->ds.candidate_dirty, 1);
    assert_ptr_equal(ds_read(&st->ds, st->tmpl, DS_CANDIDATE), cand);
}

/* ---- session end ---- */

static void
test_release_session_frees_all_its_locks(void **state)
{
    struct tl_state *st = *state;

    tl_assert_ok(lock_acquire(&st->ds, DS_RUNNING, TL_SID_A));
    tl_assert_ok(lock_acquire(&st->ds, DS_CANDIDATE, TL_SID_A));
    tl_assert_ok(lock_acquire(&st->ds, DS_STARTUP, TL_SID_A));
    lock_release_session(&st->ds, TL_SID_A);
    for (int i = 0; i < DS_COUNT; i++) {
        assert_int_equal(st->ds.lock[i], 0);
    }
}

static void
test_release_session_keeps_other_sessions_locks_and_candidate(void **state)
{
    struct tl_state *st = *state;
    struct lyd_node *cand;

    tl_assert_ok(lock_acquire(&st->ds, DS_RUNNING, TL_SID_A));
    tl_assert_ok(lock_acquire(&st->ds, DS_CANDIDATE, TL_SID_B));
    cand = tl_dirty_candidate(st);
    lock_release_session(&st->ds, TL_SID_A);
    assert_int_equal(st->ds.lock[DS_RUNNING], 0);
    assert_int_equal(st->ds.lock[DS_CANDIDATE], TL_SID_B);
    assert_int_equal(st->ds.candidate_dirty, 1);
    assert_int_equal(st->ds.own[DS_CANDIDATE], 1);
    assert_ptr_equal(ds_read(&st->ds, st->tmpl, DS_CANDIDATE), cand);
}

static void
test_release_session_discards_candidate_it_held_locked(void **state)
{
    struct tl_state *st = *state;
    struct lyd_node **run = NULL;

    assert_int_equal(ds_own(&st->ds, st->tmpl, DS_RUNNING, &run), FLEET_OK);
    tl_assert_ok(lock_acquire(&st->ds, DS_CANDIDATE, TL_SID_A));
    tl_dirty_candidate(st);
    assert_ptr_not_equal(ds_read(&st->ds, st->tmpl, DS_CANDIDATE), *run);
    lock_release_session(&st->ds, TL_SID_A);
    assert_int_equal(st->ds.lock[DS_CANDIDATE], 0);
    assert_int_equal(st->ds.candidate_dirty, 0);
    assert_int_equal(st->ds.own[DS_CANDIDATE], 0);
    assert_null(st->ds.tree[DS_CANDIDATE]);
    /* The candidate shows running again, and running kept its own tree. */
    assert_ptr_equal(ds_read(&st->ds, st->tmpl, DS_CANDIDATE), *run);
    assert_int_equal(st->ds.own[DS_RUNNING], 1);
    /* A clean candidate can be locked again at once. */
    tl_assert_ok(lock_acquire(&st->ds, DS_CANDIDATE, TL_SID_B));
}

static void
test_release_session_without_candidate_lock_keeps_candidate_changes(void **state)
{
    struct tl_state *st = *state;
    struct lyd_node *cand;

    tl_assert_ok(lock_acquire(&st->ds, DS_RUNNING, TL_SID_A));
    cand = tl_dirty_candidate(st);
    lock_release_session(&st->ds, TL_SID_A);
    assert_int_equal(st->ds.lock[DS_RUNNING], 0);
    assert_int_equal(st->ds.candidate_dirty, 1);
    assert_int_equal(st->ds.own[DS_CANDIDATE], 1);
    assert_ptr_equal(ds_read(&st->ds, st->tmpl, DS_CANDIDATE), cand);
}

static void
test_release_session_holding_nothing_changes_nothing(void **state)
{
    struct tl_state *st = *state;
    struct datastore before;

    tl_assert_ok(lock_acquire(&st->ds, DS_CANDIDATE, TL_SID_B));
    tl_dirty_candidate(st);
    before = st->ds;
    lock_release_session(&st->ds, TL_SID_A);
    assert_memory_equal(&st->ds, &before, sizeof before);
}

#define TL_TEST(f) cmocka_unit_test_setup_teardown(f, tl_case_setup, tl_case_teardown)

int
main(void)
{
    const struct CMUnitTest tests[] = {
        TL_TEST(test_acquire_free_lock_grants_it),
        TL_TEST(test_acquire_held_by_other_session_is_lock_denied_naming_holder),
        TL_TEST(test_acquire_again_by_holder_is_lock_denied),
        TL_TEST(test_acquire_of_candidate_with_uncommitted_changes_is_lock_denied_session_0),
        TL_TEST(test_acquire_of_running_ignores_dirty_candidate),
        TL_TEST(test_acquire_of_clean_candidate_grants_it),
        TL_TEST(test_check_write_by_other_session_is_in_use),
        TL_TEST(test_check_write_by_holder_is_allowed),
        TL_TEST(test_check_write_of_unlocked_or_other_datastore_is_allowed),
        TL_TEST(test_release_by_holder_frees_lock_for_others),
        TL_TEST(test_release_by_non_holder_is_operation_failed),
        TL_TEST(test_release_when_unlocked_is_operation_failed),
        TL_TEST(test_release_does_not_discard_candidate_changes),
        TL_TEST(test_release_session_frees_all_its_locks),
        TL_TEST(test_release_session_keeps_other_sessions_locks_and_candidate),
        TL_TEST(test_release_session_discards_candidate_it_held_locked),
        TL_TEST(test_release_session_without_candidate_lock_keeps_candidate_changes),
        TL_TEST(test_release_session_holding_nothing_changes_nothing),
    };

    return cmocka_run_group_tests(tests, tl_setup, tl_teardown);
}
