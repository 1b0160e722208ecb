/*
 * Where generated data lands per revision (issue 28): the ietf-interfaces
 * layout chosen for each revision, the one a context implements, and what
 * get's state holds for a device over a folder with the pre-NMDA revision
 * 2014-05-08 (state under /interfaces-state only, valid, counters moving)
 * beside the default 2018-02-20 one (state beside the configuration too).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "devfix.h"
#include "ops.h"
#include "rpc.h"
#include "std_revisions.h"
#include "test_util.h"

/* A temporary vendor folder holding Debian's ietf-interfaces 2014-05-08 and iana-if-type 2014-05-08. */
static char folder[64];

static void
copy_file(const char *from, const char *dir)
{
    char cmd[512];

    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, dir);
    assert_int_equal(system(cmd), 0);
}

static int
setup_folder(void **state)
{
    (void)state;
    snprintf(folder, sizeof folder, "/tmp/fleetsim-stdrev-XXXXXX");
    if (!mkdtemp(folder)) {
        return -1;
    }
    copy_file(TU_YUMA_IETF_DIR "/ietf-interfaces@2014-05-08.yang", folder);
    copy_file(TU_YUMA_IETF_DIR "/iana-if-type@2014-05-08.yang", folder);
    return 0;
}

static int
teardown_folder(void **state)
{
    char cmd[128];

    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", folder);
    return system(cmd) ? -1 : 0;
}

static void
test_layout_by_revision(void **state)
{
    (void)state;
    const struct stdrev_interfaces *l;

    l = stdrev_interfaces_layout("2014-05-08");
    assert_string_equal(l->revision, "2014-05-08");
    assert_int_equal(l->config_state, 0);
    assert_int_equal(l->state_list, 1);
    l = stdrev_interfaces_layout("2018-02-20");
    assert_string_equal(l->revision, "2018-02-20");
    assert_int_equal(l->config_state, 1);
    assert_int_equal(l->state_list, 1);
    /* Unknown revisions take the newest layout not newer than them; older than all, the oldest. */
    assert_string_equal(stdrev_interfaces_layout("2016-01-01")->revision, "2014-05-08");
    assert_string_equal(stdrev_interfaces_layout("2030-12-31")->revision, "2018-02-20");
    assert_string_equal(stdrev_interfaces_layout("2013-12-23")->revision, "2014-05-08");
    assert_string_equal(stdrev_interfaces_layout(NULL)->revision, "2014-05-08");
}

static void
test_context_decides_layout(void **state)
{
    (void)state;
    struct devfix *old = devfix_new_in("minimal", folder);
    struct devfix *nmda = devfix_new("minimal");

    assert_non_null(old->type.if_layout);
    assert_string_equal(old->type.if_layout->revision, "2014-05-08");
    assert_ptr_equal(old->type.if_layout, stdrev_interfaces_of(old->type.schemas.ctx));
    assert_non_null(nmda->type.if_layout);
    assert_string_equal(nmda->type.if_layout->revision, "2018-02-20");
    devfix_free(old);
    devfix_free(nmda);
}

/* get's state of the fixture device at its clock's instant; the caller frees it. */
static struct lyd_node *
state_now(struct devfix *f)
{
    struct rpc_call call = {.dev = &f->dev, .fleet = &f->fleet};
    struct lyd_node *tree = NULL;

    assert_int_equal(device_state(&call, f->type.template_tree, &tree), FLEET_OK);
    assert_non_null(tree);
    return tree;
}

static uint64_t
u64_at(const struct lyd_node *tree, const char *path)
{
    struct lyd_node *n = NULL;

    if (lyd_find_path(tree, path, 0, &n)) {
        fail_msg("no node at %s", path);
    }
    return strtoull(lyd_get_value(n), NULL, 10);
}

#define IF0_STATE "/ietf-interfaces:interfaces-state/interface[name='%s']"

static void
test_2014_state_lands_under_interfaces_state(void **state)
{
    (void)state;
    struct devfix *f = devfix_new_in("crs-x", folder);
    const char *name = f->type.profile->ifs[8].name;
    struct lyd_node *t1, *t2, *all = NULL, *n = NULL;
    char path[256];

    t1 = state_now(f);
    /* Every leaf fits the 2014 schema: the state merged with running validates as operational data. */
    assert_int_equal(lyd_dup_siblings(f->type.template_tree, NULL, LYD_DUP_RECURSIVE, &all), LY_SUCCESS);
    {
        struct lyd_node *copy = NULL;
        assert_int_equal(lyd_dup_siblings(t1, NULL, LYD_DUP_RECURSIVE, &copy), LY_SUCCESS);
        assert_int_equal(lyd_merge_siblings(&all, copy, LYD_MERGE_DESTRUCT), LY_SUCCESS);
    }
    if (lyd_validate_all(&all, NULL, LYD_VALIDATE_PRESENT, NULL)) {
        fail_msg("state does not validate: %s", ly_errmsg(f->type.schemas.ctx));
    }
    /* Configured interfaces carry no state under /interfaces in 2014 (the nodes do not exist there). */
    if (!lyd_find_path(t1, "/ietf-interfaces:interfaces", 0, &n)) {
        assert_null(lyd_child(n));
    }
    snprintf(path, sizeof path, IF0_STATE "/oper-status", name);
    assert_int_equal(lyd_find_path(t1, path, 0, &n), LY_SUCCESS);
    assert_string_equal(lyd_get_value(n), "up");
    snprintf(path, sizeof path, IF0_STATE "/speed", name);
    assert_int_equal(u64_at(t1, path), f->type.profile->ifs[8].speed_bps);
    snprintf(path, sizeof path, IF0_STATE "/if-index", name);
    assert_int_equal(u64_at(t1, path), 9);
    /* Counters move there as under 2018-02-20. */
    devfix_set_now(f, DEVFIX_NOW_MS + 10000);
    t2 = state_now(f);
    snprintf(path, sizeof path, IF0_STATE "/statistics/in-octets", name);
    assert_true(u64_at(t2, path) > u64_at(t1, path));
    lyd_free_all(all);
    lyd_free_all(t1);
    lyd_free_all(t2);
    devfix_free(f);
}

static void
test_2018_state_also_beside_configuration(void **state)
{
    (void)state;
    struct devfix *f = devfix_new("crs-x");
    const char *name = f->type.profile->ifs[8].name;
    struct lyd_node *t = state_now(f);
    char path[256];

    snprintf(path, sizeof path, "/ietf-interfaces:interfaces/interface[name='%s']/statistics/in-octets",
             name);
    assert_true(u64_at(t, path) > 0);
    snprintf(path, sizeof path, IF0_STATE "/statistics/in-octets", name);
    assert_true(u64_at(t, path) > 0);
    lyd_free_all(t);
    devfix_free(f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_by_revision),
        cmocka_unit_test(test_context_decides_layout),
        cmocka_unit_test(test_2014_state_lands_under_interfaces_state),
        cmocka_unit_test(test_2018_state_also_beside_configuration),
    };
    return cmocka_run_group_tests(tests, setup_folder, teardown_folder);
}
