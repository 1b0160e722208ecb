/*
 * The fleet's actions, whoever asks for them: the control API (one per
 * request) and a scenario (one per event). A target (a device range, a
 * group or the whole fleet), a seeded share of it, and an action with its
 * parameters become one trip through the workers (fanout.h): each worker
 * acts on its own devices, and the action is recorded (action_log.h).
 * Actions run one at a time, so the API and a scenario never interleave on
 * a device, and a group's count of present devices (grow, shrink) is only
 * read and changed here.
 */
#ifndef FLEET_FLEET_ACTION_H
#define FLEET_FLEET_ACTION_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "device_actions.h"
#include "json_read.h"

/* What an action is aimed at. */
enum fact_target_kind {
    FACT_FLEET,   /* every device */
    FACT_DEVICES, /* a range "N" or "N-M" */
    FACT_GROUP,   /* a group by name */
};

/* One action as asked for, parsed and checked. */
struct fact_request {
    enum fact_target_kind target_kind; /* what target names */
    const char *target;                /* FACT_DEVICES: "N[-M]"; FACT_GROUP: the name; FACT_FLEET: unused */
    struct devact_params params;       /* the action and its parameters */
    double share;                      /* share of the target picked (1: all) */
    uint64_t seed;                     /* seed of the pick */
    uint32_t count;                    /* grow / shrink: devices to add or remove; 0: all that can be */
    const char *origin_event;          /* a scenario event's name, NULL for the API */
    const uint32_t *idx;               /* when set: exactly these present devices (ascending), no target */
    uint32_t idx_count;                /* entries in idx */
};

/* What an action did. */
struct fact_outcome {
    uint32_t *idx;      /* the devices acted on, ascending (free() with fact_outcome_free) */
    uint32_t count;     /* entries in idx */
    uint32_t failed;    /* of them, how many could not be acted on */
    uint64_t seq;       /* its sequence number in the action log */
    uint32_t elsewhere; /* devices of the target range other processes (shards) serve */
};

/* What a worker reads of one device. */
struct fact_device_read {
    uint8_t state;    /* 0 up, 1 down, 2 rebooting, 3 absent */
    uint8_t mode;     /* enum devact_down_mode */
    uint8_t frozen;   /* sessions frozen */
    uint32_t open;    /* sessions open */
    uint64_t boot_ms; /* its boot time (fleet clock) */
};

/**
 * @brief Parse an action's body: its parameters (action_params.h), "share", "seed", and for grow and
 * shrink "devices".
 * @param[out] rq Filled but for target_kind, target and origin_event; the seed defaults to --seed.
 * @return NULL, or what is wrong (a constant or @p err).
 */
const char *fact_parse_body(const struct fleet *fleet, enum devact_kind kind, const struct jsonr_value *body,
                            struct fact_request *rq, char *err, size_t err_len);

/** @return The action kind named @p name ("reboot", ...), or -1. */
int fact_kind_of(const char *name);

/**
 * @brief Carry out @p rq on the fleet and record it. Call from any thread but a worker's.
 * @param[out] out What was done (free with fact_outcome_free()); empty on failure.
 * @param[out] err On failure, a message.
 * @return 0, or an HTTP status saying why nothing (or, for 503, not all) was done: 400 a bad target,
 * 404 no such device or group, 500 out of memory, 503 the workers did not answer in time.
 */
unsigned fact_run(struct fleet *fleet, const struct fact_request *rq, struct fact_outcome *out, char *err,
                  size_t err_len);

/** @brief Free what fact_run() returned. */
void fact_outcome_free(struct fact_outcome *out);

/**
 * @brief Read devices @p idx[0..count) through their workers into @p reads.
 * @return 0, or -1 when out of memory or the workers did not answer in time.
 */
int fact_read(struct fleet *fleet, const uint32_t *idx, uint32_t count, struct fact_device_read *reads);

/**
 * @brief Make absent the devices of each group beyond its start_present (a scenario's start), before
 * anyone can reach them: call after fleet_start() and before the fleet is announced.
 * @return 0, or -1 when some device could not be made absent.
 */
int fact_apply_start(struct fleet *fleet);

/** @return Devices present in group @p g now. */
uint32_t fact_group_present(const struct fleet *fleet, uint32_t g);

#endif
