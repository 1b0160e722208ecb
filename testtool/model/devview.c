/*
 * The device view: configuration read from running (cached per running
 * generation), oper status and its changes, and counters from dynamics.c.
 * Untouched devices share the template's cache; a device allocates its own
 * only after its running tree was written.
 */
#include "devview.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "identity.h"
#include "ydata.h"
#include "yp.h"

/* Longest a device's boot may lie before the fleet's start: uptimes differ by up to 30 days. */
#define DEVVIEW_MAX_BOOT_SPREAD_MS (30ull * 24 * 3600 * 1000)

static uint32_t
name_hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++) {
        h = (h ^ (uint8_t)*s) * 16777619u;
    }
    return h;
}

int32_t
devview_if_pos(const struct device_type *type, const char *name)
{
    const struct devview_type *v = &type->view;

    if (!v->name_slots) {
        return -1;
    }
    for (uint32_t i = name_hash(name) & v->slot_mask;; i = (i + 1) & v->slot_mask) {
        uint32_t s = v->name_slots[i];
        if (!s) {
            return -1;
        }
        if (!strcmp(type->profile->ifs[s - 1].name, name)) {
            return (int32_t)(s - 1);
        }
    }
}

/* Read enabled, description and the system leaves of @p tree into @p cfg (arrays already allocated). */
static void
read_cfg(const struct device_type *type, const struct lyd_node *tree, struct devview_cfg *cfg)
{
    uint32_t count = type->profile->if_count;
    const struct lyd_node *top;

    memset(cfg->enabled, 1, count);
    memset(cfg->alias, 0, count * sizeof *cfg->alias);
    cfg->hostname = cfg->contact = cfg->location = NULL;
    LY_LIST_FOR(tree, top)
    {
        const struct lyd_node *n;
        if (!top->schema) {
            continue;
        }
        if (!strcmp(top->schema->name, "interfaces") &&
            !strcmp(top->schema->module->name, "ietf-interfaces")) {
            LY_LIST_FOR(lyd_child(top), n)
            {
                const char *name =
                    n->schema && !strcmp(n->schema->name, "interface") ? ydata_str(n, "name") : NULL;
                int32_t pos = name ? devview_if_pos(type, name) : -1;
                const char *en;
                if (pos < 0) {
                    continue;
                }
                en = ydata_str(n, "enabled");
                cfg->enabled[pos] = !en || !strcmp(en, "true");
                cfg->alias[pos] = ydata_str(n, "description");
            }
        } else if (!strcmp(top->schema->name, "system") &&
                   !strcmp(top->schema->module->name, "ietf-system")) {
            cfg->hostname = ydata_str(top, "hostname");
            cfg->contact = ydata_str(top, "contact");
            cfg->location = ydata_str(top, "location");
        }
    }
}

static enum fleet_err
cfg_alloc(struct devview_cfg *cfg, uint32_t count)
{
    cfg->enabled = malloc(count ? count : 1);
    cfg->alias = calloc(count ? count : 1, sizeof *cfg->alias);
    return cfg->enabled && cfg->alias ? FLEET_OK : FLEET_ERR_NOMEM;
}

static void
cfg_free(struct devview_cfg *cfg)
{
    free(cfg->enabled);
    free(cfg->alias);
    memset(cfg, 0, sizeof *cfg);
}

enum fleet_err
devview_type_init(struct device_type *type)
{
    struct devview_type *v = &type->view;
    const struct profile *p = type->profile;
    uint32_t slots = 16;

    while (slots < 2 * p->if_count) {
        slots *= 2;
    }
    v->slot_mask = slots - 1;
    v->name_slots = calloc(slots, sizeof *v->name_slots);
    if (!v->name_slots || cfg_alloc(&v->template_cfg, p->if_count)) {
        return FLEET_ERR_NOMEM;
    }
    for (uint32_t pos = 0; pos < p->if_count; pos++) {
        uint32_t i = name_hash(p->ifs[pos].name) & v->slot_mask;
        while (v->name_slots[i]) {
            i = (i + 1) & v->slot_mask;
        }
        v->name_slots[i] = pos + 1;
    }
    read_cfg(type, type->template_tree, &v->template_cfg);
    return FLEET_OK;
}

void
devview_type_close(struct device_type *type)
{
    cfg_free(&type->view.template_cfg);
    free(type->view.name_slots);
    type->view.name_slots = NULL;
}

void
devview_state_free(struct devview_state *st)
{
    if (!st) {
        return;
    }
    free(st->link_down);
    cfg_free(&st->cfg);
    free(st->changes);
    free(st);
}

uint64_t
devview_now_ms(const struct fleet *fleet)
{
    if (fleet->cfg.clock_fixed_ms) {
        return fleet->cfg.clock_fixed_ms;
    }
    return fleet->clock_base_ms + (loop_clock_monotonic() - fleet->clock_base_us) / 1000;
}

uint64_t
devview_seed(const struct device *dev)
{
    return dev->seed;
}

uint64_t
devview_boot_ms(const struct device *dev)
{
    return dev->boot_ms;
}

void
devview_device_init(struct device *dev, const struct fleet *fleet)
{
    dev->seed = dyn_device_seed(fleet->cfg.seed, dev->index);
    dev->boot_ms = fleet->start_ms - dyn_hash(dev->seed, 0xb007, 0) % DEVVIEW_MAX_BOOT_SPREAD_MS;
}

/* Oper status from configuration alone: admin up and the profile's link up. */
static int
profile_up(const struct device_type *type, const struct devview_cfg *cfg, uint32_t pos)
{
    return cfg->enabled[pos] && type->profile->ifs[pos].link_up;
}

static uint64_t traffic_ms(const struct device *dev, uint32_t pos, uint64_t now_ms);

int
devview_link_up(const struct device *dev, uint32_t pos)
{
    const struct devview_state *st = dev->view;
    return dev->type->profile->ifs[pos].link_up && !(st && st->link_down && st->link_down[pos]);
}

/* Oper status from configuration and the link: enabled and the link up. */
static int
device_up(const struct device *dev, const struct devview_cfg *cfg, uint32_t pos)
{
    return cfg->enabled[pos] && devview_link_up(dev, pos);
}

/*
 * Record the status changes between what the interfaces were and what the freshly read @p cfg says,
 * as happening at @p when_ms.
 */
static void
apply_transitions(struct device *dev, const struct devview_cfg *cfg, uint64_t when_ms)
{
    const struct device_type *type = dev->type;
    struct devview_state *st = dev->view;
    uint32_t count = type->profile->if_count;

    if (!st->changes) {
        uint32_t pos;
        for (pos = 0;
             pos < count && device_up(dev, cfg, pos) == profile_up(type, &type->view.template_cfg, pos);
             pos++) {
        }
        if (pos == count) {
            return; /* nothing changed status: keep reading the profile */
        }
        /* First change: start from the profile's statuses, as they were since boot. */
        if (!(st->changes = calloc(count, sizeof *st->changes))) {
            return;
        }
        for (pos = 0; pos < count; pos++) {
            st->changes[pos] =
                (struct devview_if_change){.changed_ms = devview_boot_ms(dev),
                                           .traffic_ms = 0,
                                           .up = (uint8_t)profile_up(type, &type->view.template_cfg, pos)};
        }
    }
    for (uint32_t pos = 0; pos < count; pos++) {
        struct devview_if_change *c = &st->changes[pos];
        int up = device_up(dev, cfg, pos);
        if (up != c->up) {
            c->traffic_ms = traffic_ms(dev, pos, when_ms);
            c->changed_ms = when_ms;
            c->up = (uint8_t)up;
        }
    }
}

const struct devview_cfg *
devview_cfg(struct device *dev)
{
    const struct device_type *type = dev->type;
    struct devview_state *st = dev->view;

    if (!dev->ds.own[DS_RUNNING]) {
        /* Running reads the template again (after a reset): statuses follow it. */
        if (st && st->dirty) {
            apply_transitions(dev, &type->view.template_cfg, st->dirty_ms);
            st->dirty = 0;
        }
        return &type->view.template_cfg;
    }
    if (!st) {
        if (!(st = dev->view = calloc(1, sizeof *st))) {
            return NULL;
        }
    }
    if (!st->cfg.enabled && cfg_alloc(&st->cfg, type->profile->if_count)) {
        return NULL;
    }
    if (!st->cfg_valid || st->cfg.gen != dev->ds.running_gen) {
        read_cfg(type, dev->ds.tree[DS_RUNNING], &st->cfg);
        st->cfg.gen = dev->ds.running_gen;
        st->cfg_valid = 1;
        apply_transitions(dev, &st->cfg, st->dirty ? st->dirty_ms : devview_now_ms(dev->worker->fleet));
        st->dirty = 0;
    }
    return &st->cfg;
}

enum devview_oper
devview_oper(const struct device *dev, uint32_t pos)
{
    const struct devview_state *st = dev->view;

    if (st && st->changes) {
        return st->changes[pos].up ? DEVVIEW_OPER_UP : DEVVIEW_OPER_DOWN;
    }
    return profile_up(dev->type, &dev->type->view.template_cfg, pos) ? DEVVIEW_OPER_UP : DEVVIEW_OPER_DOWN;
}

uint64_t
devview_last_change_ms(const struct device *dev, uint32_t pos)
{
    const struct devview_state *st = dev->view;
    return st && st->changes ? st->changes[pos].changed_ms : devview_boot_ms(dev);
}

static uint64_t
traffic_ms(const struct device *dev, uint32_t pos, uint64_t now_ms)
{
    const struct devview_state *st = dev->view;
    const struct devview_if_change *c;

    if (!st || !st->changes) {
        uint64_t boot = devview_boot_ms(dev);
        if (!profile_up(dev->type, &dev->type->view.template_cfg, pos)) {
            return 0;
        }
        return now_ms > boot ? now_ms - boot : 0;
    }
    c = &st->changes[pos];
    return c->up && now_ms > c->changed_ms ? c->traffic_ms + (now_ms - c->changed_ms) : c->traffic_ms;
}

void
devview_counters(const struct device *dev, uint32_t pos, uint64_t now_ms, struct dyn_if_counters *out)
{
    const struct profile *p = dev->type->profile;
    dyn_if_counters(&p->traffic, devview_seed(dev), pos, p->ifs[pos].speed_bps, traffic_ms(dev, pos, now_ms),
                    out);
}

uint64_t
devview_octets(const struct device *dev, uint64_t seed, uint32_t pos, uint64_t now_ms, int out)
{
    const struct device_type *type = dev->type;
    return dyn_prep_octets(&type->traffic, seed, pos, type->profile->ifs[pos].speed_bps,
                           traffic_ms(dev, pos, now_ms), out);
}

void
devview_running_changed(struct device *dev, uint64_t now_ms)
{
    struct devview_state *st = dev->view;

    /*
     * Cheap on purpose (edits must not pay for a scan of running): note the instant; the next read
     * compares statuses and dates the changes it finds to the first write since the last read.
     */
    if (!st && !(st = dev->view = calloc(1, sizeof *st))) {
        return;
    }
    if (!st->dirty) {
        st->dirty = 1;
        st->dirty_ms = now_ms;
    }
    /* Every write of running passes here (NETCONF from any session, the control API, SNMP SET). */
    yp_data_changed(dev);
}

int
devview_set_link(struct device *dev, uint32_t pos, int up, uint64_t now_ms)
{
    const struct device_type *type = dev->type;
    struct devview_state *st = dev->view;
    const struct devview_cfg *cfg;

    if (!st && !(st = dev->view = calloc(1, sizeof *st))) {
        return -1;
    }
    if (!st->link_down && !(st->link_down = calloc(type->profile->if_count, 1))) {
        return -1;
    }
    if (!(cfg = devview_cfg(dev))) {
        return -1;
    }
    st->link_down[pos] = (uint8_t)!up;
    apply_transitions(dev, cfg, now_ms);
    yp_data_changed(dev); /* oper-status and last-change moved: on-change subscribers hear of it */
    return 0;
}

void
devview_hostname(struct device *dev, char *buf, size_t buf_len)
{
    const struct devview_cfg *cfg = devview_cfg(dev);
    const char *fmt = dev->type->profile->hostname_format;
    const char *mark;

    if (cfg && cfg->hostname) {
        size_t n = dev->ds.own[DS_RUNNING] || !buf_len
                       ? (size_t)-1
                       : identity_rewrite_value(dev, cfg->hostname, strlen(cfg->hostname), buf, buf_len - 1);
        if (n != (size_t)-1) {
            buf[n] = '\0'; /* the template's host name with the device's identity (an own copy has it) */
        } else {
            snprintf(buf, buf_len, "%s", cfg->hostname);
        }
        return;
    }
    if (!fmt) {
        fmt = "device-{DEVICE}";
    }
    if ((mark = strstr(fmt, "{DEVICE}"))) {
        snprintf(buf, buf_len, "%.*s%u%s", (int)(mark - fmt), fmt, (unsigned)dev->index, mark + 8);
    } else {
        /* A fixed name (a recorded device's sysName): the device's identity rules make it its own. */
        size_t n = buf_len ? identity_rewrite_value(dev, fmt, strlen(fmt), buf, buf_len - 1) : (size_t)-1;
        if (n != (size_t)-1) {
            buf[n] = '\0';
        } else {
            snprintf(buf, buf_len, "%s", fmt);
        }
    }
}
