/*
 * A shard's plan: the part of one fleet's groups (the command line's one
 * group, or a fleet file's, in order) this process serves with --shard I/N
 * or --device-offset K. The part may cut groups; each part of a group is a
 * group of its own whose addresses and ports start where the whole group's
 * would be at that device, and which remembers the whole group's size and
 * where the part starts in it, so every device keeps its whole-fleet index,
 * name, address and identity. Only the part's devices are allocated.
 */
#ifndef FLEET_SHARD_PLAN_H
#define FLEET_SHARD_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "plan.h"

/**
 * @brief The groups of this process's part of the fleet @p whole (all of it without --shard or
 * --device-offset), numbered in the whole fleet (first_index, first_node, skip).
 * @param cfg The command line: shard_index/shard_count, device_offset and device_count; device_offset is
 * set to the global index of the part's first device, fleet_devices to the whole fleet's.
 * @param out Set to a new array of @p out_count groups (free() it); their strings are @p whole's.
 * @return FLEET_OK, or FLEET_ERR_INVAL (an empty part, an offset past the fleet: @p err says) or
 * FLEET_ERR_NOMEM.
 */
enum fleet_err shard_plan_slice(struct fleet_config *cfg, const struct fleet_group_spec *whole,
                                uint32_t whole_count, struct fleet_group_spec **out, uint32_t *out_count,
                                char *err, size_t err_len);

#endif
