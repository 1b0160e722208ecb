/*
 * A one-device fleet for unit tests, without sockets or threads: a device
 * type loaded from a profile, one group, a fleet whose clock stands still
 * (cfg.clock_fixed_ms), one worker and one device. Header-only so that only
 * the tests linked against the simulator's objects include it.
 */
#ifndef FLEET_TEST_DEVFIX_H
#define FLEET_TEST_DEVFIX_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ber.h"
#include "cli.h"
#include "device.h"
#include "devtype.h"
#include "devview.h"

/* The instant the fixture's fleet clock stands at (2024-01-01T00:00:00Z). */
#define DEVFIX_NOW_MS 1704067200000ull
/* The fixture device's index in the fleet (not 0, so index arithmetic shows). */
#define DEVFIX_INDEX 3u

/* Everything one device needs, owned by the test. */
struct devfix {
    struct fleet_config cfg;   /* the plan (cli_defaults() plus the profile) */
    struct device_type type;   /* loaded from cfg */
    struct device_group group; /* the one group */
    struct fleet fleet;        /* clock fixed at DEVFIX_NOW_MS */
    struct worker worker;      /* owns the device; only its fleet pointer is used */
    struct device dev;         /* the device under test */
};

/**
 * @brief Load @p profile ("minimal", "crs-x") over the vendor folder @p schemas_dir (NULL: none) and build
 * the one-device fleet; fails the test on error. The plan keeps pointing at @p schemas_dir.
 */
static inline struct devfix *
devfix_new_in(const char *profile, const char *schemas_dir)
{
    struct devfix *f = calloc(1, sizeof *f);
    char err[1024] = "";

    assert_non_null(f);
    cli_defaults(&f->cfg);
    f->cfg.profile = profile;
    f->cfg.schemas_dir = schemas_dir;
    f->cfg.seed = 42;
    f->cfg.clock_fixed_ms = DEVFIX_NOW_MS;
    f->cfg.device_count = DEVFIX_INDEX + 1;
    if (device_type_load(&f->type, &f->cfg, err, sizeof err)) {
        fail_msg("device_type_load(%s): %s", profile, err);
    }
    f->group.name = "default";
    f->group.cfg = f->cfg;
    f->group.type = &f->type;
    f->group.first = 0;
    f->fleet.cfg = f->cfg;
    f->fleet.groups = &f->group;
    f->fleet.group_count = 1;
    f->fleet.start_ms = DEVFIX_NOW_MS - 60000;
    f->fleet.workers = &f->worker;
    f->worker.fleet = &f->fleet;
    f->dev.index = DEVFIX_INDEX;
    f->dev.type = &f->type;
    f->dev.group = &f->group;
    f->dev.worker = &f->worker;
    f->dev.listen_fd = -1;
    f->dev.snmp_fd = -1;
    f->dev.flap_down_pos = -1;
    f->fleet.devices = &f->dev;
    devview_device_init(&f->dev, &f->fleet);
    return f;
}

/** @brief devfix_new_in() without a vendor folder. */
static inline struct devfix *
devfix_new(const char *profile)
{
    return devfix_new_in(profile, NULL);
}

/** @brief devfix_new() of moving-state test profile @p kind:
 * tests/integration/data/moving_state/profile-KIND.xml under $FLEETSIM_SOURCE_DIR (or the current folder). */
static inline struct devfix *
devfix_new_moving(const char *kind)
{
    const char *src = getenv("FLEETSIM_SOURCE_DIR");
    static char path[1024]; /* the plan keeps pointing at it */

    snprintf(path, sizeof path, "%s/tests/integration/data/moving_state/profile-%s.xml", src ? src : ".",
             kind);
    return devfix_new(path);
}

/** @brief Move the fleet's fixed clock to @p now_ms. */
static inline void
devfix_set_now(struct devfix *f, uint64_t now_ms)
{
    f->fleet.cfg.clock_fixed_ms = now_ms;
}

/**
 * @brief Write @p value at @p path (absolute) into the device's running tree as an edit would:
 * own the tree, set the leaf, bump running_gen and tell the view at the fleet clock's instant.
 */
static inline void
devfix_write_running(struct devfix *f, const char *path, const char *value)
{
    struct lyd_node **tree = NULL;

    assert_int_equal(ds_own(&f->dev.ds, f->type.template_tree, DS_RUNNING, &tree), FLEET_OK);
    if (lyd_new_path(*tree, f->type.schemas.ctx, path, value, LYD_NEW_PATH_UPDATE, NULL)) {
        fail_msg("cannot set %s to %s: %s", path, value, ly_errmsg(f->type.schemas.ctx));
    }
    *tree = lyd_first_sibling(*tree);
    f->dev.ds.running_gen++;
    devview_running_changed(&f->dev, devview_now_ms(&f->fleet));
}

/** @brief Free the fixture and everything it made. */
static inline void
devfix_free(struct devfix *f)
{
    if (!f) {
        return;
    }
    devview_state_free(f->dev.view);
    ds_close(&f->dev.ds);
    device_type_free(&f->type);
    free(f);
}

/* An OID from its arcs: OID(1, 3, 6, 1, 2, 1, 1, 5, 0). */
#define OID(...) oid_of((const uint32_t[]){__VA_ARGS__}, sizeof((uint32_t[]){__VA_ARGS__}) / sizeof(uint32_t))

static inline struct oid
oid_of(const uint32_t *sub, uint32_t len)
{
    struct oid o;

    o.len = len;
    memcpy(o.sub, sub, len * sizeof *sub);
    return o;
}

/* Two OIDs are the same. */
static inline void
assert_oid_equal(const struct oid *a, const struct oid *b)
{
    assert_int_equal(a->len, b->len);
    assert_memory_equal(a->sub, b->sub, a->len * sizeof *a->sub);
}

#endif
