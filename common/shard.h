/*
 * One fleet served by N processes (--shard I/N): which contiguous part of
 * a count each part takes. Part I of N takes items floor(I*C/N) ..
 * floor((I+1)*C/N)-1 of C, so parts differ in size by at most one and
 * the parts 0..N-1 cover 0..C-1 exactly once, in order.
 * The simulator splits its devices this way and the stress client its
 * targets and totals.
 */
#ifndef FLEET_SHARD_H
#define FLEET_SHARD_H

#include <stdint.h>

/* Most parts one fleet is split into. */
#define SHARD_MAX_PARTS 100000u
/* Most devices of one fleet over all its parts (each part holds at most FLEET_MAX_DEVICES). */
#define SHARD_MAX_DEVICES 100000000u

/** @return The first item of part @p index of @p parts of @p total (the floor rule above). */
uint64_t shard_first(uint64_t total, uint32_t index, uint32_t parts);

/** @return How many items of @p total part @p index of @p parts takes. */
uint64_t shard_size(uint64_t total, uint32_t index, uint32_t parts);

/**
 * @brief Read "I/N" (I from 0 to N-1, N from 1 to SHARD_MAX_PARTS).
 * @return 0, or -1 when @p text is anything else.
 */
int shard_parse(const char *text, uint32_t *index, uint32_t *parts);

#endif
