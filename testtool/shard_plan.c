/*
 * Cutting a fleet's groups to a shard's part; see shard_plan.h.
 */
#include "shard_plan.h"

#include <stdio.h>
#include <stdlib.h>

#include "shard.h"

/* Nodes per device of an inventory (--devices-per-port; 0 counts as 1). */
static uint32_t
copies_of(const struct fleet_config *cfg)
{
    return cfg->devices_per_port ? cfg->devices_per_port : 1;
}

/* @p part: devices @p skip .. @p skip + @p count - 1 of group @p g, whose first device is global @p start. */
static void
cut_group(const struct fleet_group_spec *g, uint32_t start, uint32_t node, uint32_t skip, uint32_t count,
          struct fleet_group_spec *part)
{
    *part = *g;
    if (g->cfg.schema_opts.features == g->cfg.feature_pins) {
        part->cfg.schema_opts.features = part->cfg.feature_pins; /* the copy's own pins */
    }
    part->skip = skip;
    part->whole_count = g->cfg.device_count;
    part->first_index = start + skip;
    part->first_node = node + skip * copies_of(&g->cfg);
    part->cfg.device_count = count;
    if (g->cfg.ip_per_device) {
        part->cfg.ip += skip; /* device i of the group is on ip + i, every one on the shared ports */
    } else if (!g->cfg.shard_own_ports) {
        part->cfg.starting_port += skip;
        part->cfg.snmp_starting_port += skip;
    }
}

enum fleet_err
shard_plan_slice(struct fleet_config *cfg, const struct fleet_group_spec *whole, uint32_t whole_count,
                 struct fleet_group_spec **out, uint32_t *out_count, char *err, size_t err_len)
{
    struct fleet_group_spec one;
    uint64_t total = 0, first, count;
    uint32_t start = 0, node = 0, n = 0;

    for (uint32_t i = 0; i < whole_count; i++) {
        total += whole[i].cfg.device_count;
    }
    if (cfg->shard_count) {
        first = shard_first(total, cfg->shard_index, cfg->shard_count);
        count = shard_size(total, cfg->shard_index, cfg->shard_count);
        if (!count) {
            snprintf(err, err_len, "--shard %u/%u: the fleet's %llu devices leave part %u empty",
                     (unsigned)cfg->shard_index, (unsigned)cfg->shard_count, (unsigned long long)total,
                     (unsigned)cfg->shard_index);
            return FLEET_ERR_INVAL;
        }
    } else if (cfg->device_offset_given && !cfg->fleet_file) {
        /* One group: the fleet's first offset devices run elsewhere. */
        one = whole[0];
        one.cfg.device_count = cfg->device_offset + cfg->device_count;
        whole = &one;
        first = cfg->device_offset;
        count = cfg->device_count;
        total = first + count;
    } else if (cfg->device_offset_given) {
        first = cfg->device_offset;
        count = cfg->device_count;
        if (first + count > total) {
            snprintf(err, err_len,
                     "--device-offset %u --device-count %u: the groups of %s hold %llu devices (0 to %llu)",
                     (unsigned)first, (unsigned)count, cfg->fleet_file, (unsigned long long)total,
                     (unsigned long long)total - 1);
            return FLEET_ERR_INVAL;
        }
    } else {
        first = 0;
        count = total;
    }
    if (total > SHARD_MAX_DEVICES) {
        snprintf(err, err_len, "the whole fleet of %llu devices is more than %u", (unsigned long long)total,
                 (unsigned)SHARD_MAX_DEVICES);
        return FLEET_ERR_INVAL;
    }
    if (!(*out = calloc(whole_count, sizeof **out))) {
        snprintf(err, err_len, "out of memory");
        return FLEET_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < whole_count; i++) {
        uint64_t lo = first > start ? first : start;
        uint64_t end = start + (uint64_t)whole[i].cfg.device_count;
        uint64_t hi = first + count < end ? first + count : end;
        if (lo < hi) {
            cut_group(&whole[i], start, node, (uint32_t)(lo - start), (uint32_t)(hi - lo), &(*out)[n++]);
        }
        start = (uint32_t)end;
        node += whole[i].cfg.device_count * copies_of(&whole[i].cfg);
    }
    *out_count = n;
    cfg->device_offset = (uint32_t)first;
    cfg->fleet_devices = (uint32_t)total;
    return FLEET_OK;
}
