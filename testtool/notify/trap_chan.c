/*
 * The background trap channel (see trap_chan.h): fleet-wide setup, per
 * device pacing, building a catalog notification and handing it to the
 * worker's trap sender once per sink.
 */
#include "trap_chan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device.h"
#include "device_ctl.h"
#include "devview.h"
#include "dynamics.h"
#include "ledger.h"
#include "push_rate.h"
#include "push_window.h"
#include "trap.h"
#include "trap_catalog.h"
#include "trap_device.h"

/* Salts of the device's draws: which notification, which interface, the placeholders' bits, the phase. */
#define TC_SALT_TRAP  0x7451u
#define TC_SALT_IF    0x7452u
#define TC_SALT_VARS  0x7453u
#define TC_SALT_PHASE 0x7454u

/* One device's schedule. */
struct trap_chan_dev {
    struct loop_timer timer;       /* armed for the next arrival while the device's profile has one */
    struct rate_arrivals arrivals; /* when the next background trap is due (push_rate.h) */
    struct device *dev;            /* the device; NULL for devices without trap sinks */
};

/* The fleet's background trap state. */
struct trap_chan {
    struct trap_catalog **catalogs; /* per fleet group; NULL for groups without a rate */
    struct trap_chan_dev *devs;     /* per device of the process */
    uint32_t dev_count;             /* entries of devs */
};

static void tc_on_tick(struct loop *loop, struct loop_timer *timer);

/* Each trap sink's ledger series (process-wide, as the ledger's sub-windows are), [k] for --trap-sink k. */
static uint16_t tc_series[8];

struct trap_counters *
trap_chan_rows(struct device *dev)
{
    const struct fleet *fleet = dev->worker->fleet;

    if (!dev->trap_rows && fleet->cfg.trap_sink_count) {
        if (!(dev->trap_rows = calloc(fleet->cfg.trap_sink_count, sizeof *dev->trap_rows))) {
            return NULL;
        }
        for (uint32_t k = 0; k < fleet->cfg.trap_sink_count && k < 8; k++) {
            dev->trap_rows[k].ledger.series = tc_series[k];
        }
    }
    return dev->trap_rows;
}

/* (Re)start the device's schedule from now with the profile in force, and arm its timer. */
static void
tc_schedule(struct trap_chan_dev *td, monotime_us now)
{
    struct device *dev = td->dev;

    push_rate_start(&td->arrivals, dev, DEVCTL_RATE_TRAP, &dev->group->cfg.trap_rate, 1, TC_SALT_PHASE, 0,
                    now);
    if (td->arrivals.next_us != RATE_NEVER) {
        loop_timer_start(dev->worker->loop, &td->timer, td->arrivals.next_us, tc_on_tick);
    }
}

/* The built-in catalog of a device type: schemas/traps/<type>.json when there is one, else generic's. */
static void
tc_builtin_path(const struct device_type *type, char *buf, size_t len)
{
    if (type->name && !strchr(type->name, '/') && strlen(type->name) < 64) {
        snprintf(buf, len, "%s/traps/%s.json", FLEETSIM_SCHEMA_DIR, type->name);
        if (!access(buf, R_OK)) {
            return;
        }
    }
    snprintf(buf, len, "%s/traps/generic.json", FLEETSIM_SCHEMA_DIR);
}

/* Build @p t for @p dev and queue it to every sink. */
static void
tc_emit(struct device *dev, const struct trap_template *t, uint64_t n)
{
    struct fleet *fleet = dev->worker->fleet;
    const struct profile *p = dev->type->profile;
    uint64_t now_ms = devview_now_ms(fleet);
    struct trap_device_origin origin;
    struct trap_catalog_vars vars;
    struct trap_catalog_built built;
    uint32_t pos = p->if_count ? (uint32_t)(dyn_hash(dev->seed, TC_SALT_IF, n) % p->if_count) : 0;

    trap_device_origin(dev, now_ms, &origin);
    vars.host = origin.name;
    vars.ifname = p->if_count ? p->ifs[pos].name : NULL;
    vars.ifindex = pos + 1;
    vars.draw = dyn_hash(dev->seed, TC_SALT_VARS, n);
    if (trap_catalog_build(t, &vars, &built)) {
        return; /* cannot happen: every template was built with the extremes when it was read */
    }
    for (uint32_t k = 0; k < fleet->cfg.trap_sink_count; k++) {
        trap_send(dev->worker->traps, &origin.from, &fleet->cfg.trap_sinks[k],
                  (uint32_t)(((now_ms - dev->boot_ms) / 10) & 0xffffffffu), &t->trap_oid, built.varbinds,
                  built.varbind_count, &dev->trap_rows[k]);
    }
}

static void
tc_on_tick(struct loop *loop, struct loop_timer *timer)
{
    struct trap_chan_dev *td =
        (struct trap_chan_dev *)((char *)timer - offsetof(struct trap_chan_dev, timer));
    struct device *dev = td->dev;
    struct fleet *fleet = dev->worker->fleet;
    const struct trap_catalog *cat = fleet->trap_chan->catalogs[dev->group->index];
    monotime_us now = loop_now_us(loop);
    uint64_t skipped = rate_arrivals_skip_lag(&td->arrivals, now, TRAP_CHAN_MAX_LAG_US);
    enum pushwin_phase phase = pushwin_phase_now();

    /* After the run window's END the device sends nothing more on its own. */
    if (phase == PUSHWIN_AFTER) {
        return;
    }
    /* Traps a stalled loop could not send in time are given up, and counted: never silently lost. */
    for (uint32_t k = 0; skipped && k < fleet->cfg.trap_sink_count; k++) {
        if (phase == PUSHWIN_BEFORE) {
            ledger_suppress(&dev->trap_rows[k].ledger, skipped);
        } else {
            ledger_drop_now(&dev->trap_rows[k].ledger, skipped);
        }
    }
    for (uint32_t n = 0; n < TRAP_CHAN_MAX_PER_TICK && td->arrivals.next_us <= now; n++) {
        /* A device down or absent says nothing; its schedule goes on, so it resumes without a burst. */
        if (!devact_snmp_silent(dev) && phase == PUSHWIN_BEFORE) {
            /* Before the run window's START: counted as what would have gone out, never built. */
            for (uint32_t k = 0; k < fleet->cfg.trap_sink_count; k++) {
                ledger_suppress(&dev->trap_rows[k].ledger, 1);
            }
        } else if (!devact_snmp_silent(dev)) {
            tc_emit(dev, trap_catalog_pick(cat, dyn_hash(dev->seed, TC_SALT_TRAP, td->arrivals.count)),
                    td->arrivals.count);
        }
        rate_arrivals_take(&td->arrivals);
    }
    /* A profile at 0 from here on arms nothing: no wakeups until a trap-rate action. */
    if (td->arrivals.next_us != RATE_NEVER) {
        loop_timer_start(loop, timer, td->arrivals.next_us, tc_on_tick);
    }
}

void
trap_chan_rate_changed(struct device *dev)
{
    struct trap_chan *tc = dev->worker->fleet->trap_chan;
    struct trap_chan_dev *td = tc ? &tc->devs[dev - dev->worker->fleet->devices] : NULL;

    if (!td || !dev->worker->traps || !trap_chan_rows(dev)) {
        return;
    }
    if (td->dev) {
        loop_timer_stop(dev->worker->loop, &td->timer);
    } else {
        td->dev = dev; /* its first rate: the schedule is made now (calloc's untouched pages until then) */
        loop_timer_init(&td->timer);
    }
    tc_schedule(td, loop_now_us(dev->worker->loop));
}

enum fleet_err
trap_chan_start_all(struct fleet *fleet, char *err, size_t err_len)
{
    struct trap_chan *tc = NULL;
    enum fleet_err rc = FLEET_OK;
    char path[700];

    /* Every trap sink's series, whether or not a group has a rate: events' traps count in it too. */
    for (uint32_t k = 0; k < fleet->cfg.trap_sink_count && k < 8; k++) {
        char name[NETADDR_TEXT_BYTES + 8];
        tc_series[k] =
            ledger_series_add(LEDGER_TRAP, trap_sink_format(&fleet->cfg.trap_sinks[k], name, sizeof name));
    }
    /* Devices of every group get a schedule: a trap-rate action can give any of them a rate. */
    if (!fleet->cfg.trap_sink_count) {
        goto cleanup;
    }
    if (!(tc = calloc(1, sizeof *tc)) || !(tc->catalogs = calloc(fleet->group_count, sizeof *tc->catalogs)) ||
        !(tc->devs = calloc(fleet->cfg.device_count, sizeof *tc->devs))) {
        snprintf(err, err_len, "out of memory for background traps");
        rc = FLEET_ERR_NOMEM;
        goto cleanup;
    }
    tc->dev_count = fleet->cfg.device_count;
    fleet->trap_chan = tc; /* from here on trap_chan_close_all() frees whatever is made */
    /* Step 1: every group's catalog (a rate action may start any group's devices). */
    for (uint32_t g = 0; g < fleet->group_count; g++) {
        const struct device_group *grp = &fleet->groups[g];
        if (grp->cfg.trap_catalog) {
            snprintf(path, sizeof path, "%s", grp->cfg.trap_catalog);
        } else {
            tc_builtin_path(grp->type, path, sizeof path);
        }
        if ((rc = trap_catalog_load(path, &tc->catalogs[g], err, err_len))) {
            goto cleanup;
        }
    }
    /* Step 2: every device of a group with a rate (the others get theirs from a trap-rate action); the
     * schedule spreads the devices' phases over one arrival. */
    for (uint32_t i = 0; i < fleet->cfg.device_count; i++) {
        struct device *dev = &fleet->devices[i];
        struct trap_chan_dev *td = &tc->devs[i];
        if (!dev->worker->traps || rate_profile_is_zero(&dev->group->cfg.trap_rate)) {
            continue;
        }
        if (!trap_chan_rows(dev)) {
            snprintf(err, err_len, "out of memory for background traps");
            rc = FLEET_ERR_NOMEM;
            goto cleanup;
        }
        td->dev = dev;
        loop_timer_init(&td->timer);
        /* The real clock: the loop's time was read when it was made, before the model loaded. */
        tc_schedule(td, loop_clock_monotonic());
    }
cleanup:
    if (rc && tc && fleet->trap_chan != tc) {
        free(tc->catalogs);
        free(tc->devs);
        free(tc);
    }
    return rc;
}

int
trap_chan_event(struct device *dev, const char *id)
{
    struct trap_chan *tc = dev->worker->fleet->trap_chan;
    const struct trap_template *t;

    if (!tc || !dev->worker->traps || !dev->trap_rows || !tc->catalogs[dev->group->index] ||
        !(t = trap_catalog_find(tc->catalogs[dev->group->index], id))) {
        return 0;
    }
    tc_emit(dev, t, dyn_hash(dev->seed, TC_SALT_TRAP, (uint64_t)-1));
    return 1;
}

void
trap_chan_close_all(struct fleet *fleet)
{
    struct trap_chan *tc = fleet->trap_chan;

    if (!tc) {
        return;
    }
    for (uint32_t i = 0; tc->devs && i < tc->dev_count; i++) {
        if (tc->devs[i].dev) {
            loop_timer_stop(fleet->devices[i].worker->loop, &tc->devs[i].timer);
        }
    }
    for (uint32_t g = 0; tc->catalogs && g < fleet->group_count; g++) {
        trap_catalog_free(tc->catalogs[g]);
    }
    free(tc->catalogs);
    free(tc->devs);
    free(tc);
    fleet->trap_chan = NULL;
}
