/*
 * The control API's record of what it did: every action, with its time,
 * parameters and the devices it touched, for the --report file, and a
 * count per action for /metrics. Written by the HTTP thread(s), read by the
 * report's writer and the metrics scrape, so it is behind a mutex; actions
 * are rare (one per request), so the lock is never contended in earnest.
 */
#ifndef FLEET_ACTION_LOG_H
#define FLEET_ACTION_LOG_H

#include <pthread.h>
#include <stdint.h>

#include "device_actions.h"
#include "sbuf.h"

/* Actions kept for the report; later ones are counted (actions_dropped) and still in the metrics. */
#define ACTION_LOG_MAX_ENTRIES 10000
/* Device ranges listed per action in the report; ranges_truncated says when there were more. */
#define ACTION_LOG_MAX_RANGES 1024

/* Recent actions kept with every device they touched, for GET /api/v1/events (a controller's recovery). */
#define ACTION_LOG_RECENT 256

/* One recent action. */
struct action_recent {
    uint64_t seq;     /* its sequence number (from 0) */
    uint64_t wall_ms; /* when (wall clock, ms since the epoch) */
    char *json;       /* its report object (as in "actions"), NUL-terminated */
    uint32_t *idx;    /* every device it touched, ascending */
    uint32_t count;   /* entries in idx */
};

/* Called for each recent action by action_log_each_recent(), the log locked. */
typedef void (*action_recent_fn)(const struct action_recent *r, void *user);

struct action_log {
    pthread_mutex_t lock;                           /* guards everything below */
    uint64_t next_seq;                              /* the next action's sequence number */
    struct action_recent recent[ACTION_LOG_RECENT]; /* the last actions, slot seq % ACTION_LOG_RECENT */
    struct sbuf entries;                            /* the kept actions: JSON objects separated by commas */
    uint32_t entry_count;                           /* actions in entries */
    uint64_t dropped;              /* actions past ACTION_LOG_MAX_ENTRIES (or out of memory), not kept */
    uint64_t totals[DEVACT_KINDS]; /* actions carried out, by kind (kept or not) */
    uint64_t scenario_totals[DEVACT_KINDS]; /* of them, asked for by scenario events */
};

/** @return The action's name as the API spells it ("kill-sessions", "down", ...). */
const char *action_log_kind_name(enum devact_kind kind);

/** @brief Make @p log empty. */
void action_log_init(struct action_log *log);

/** @brief Free what @p log holds (it may be initialised again). */
void action_log_free(struct action_log *log);

/**
 * @brief Record one action carried out on @p count devices.
 * @param params The action's parameters as the API understood them.
 * @param share The share asked for (1 when the whole target), @p seed its seed.
 * @param idx The devices acted on (slots of the process), sorted ascending.
 * @param base The global index of slot 0 (a shard's offset): the log names global indices.
 * @param failed Of them, how many could not be acted on.
 * @param wall_ms When (wall clock, ms since the epoch).
 * @param event The scenario event that asked for it, or NULL (the control API).
 * @return Its sequence number.
 */
uint64_t action_log_add(struct action_log *log, const struct devact_params *params, double share,
                        uint64_t seed, const uint32_t *idx, uint32_t count, uint32_t base, uint32_t failed,
                        uint64_t wall_ms, const char *event);

/**
 * @brief Write the runs of @p idx[0..count) (ascending slots) as "[A,B],..." of global indices
 * (slot + @p base), at most @p most runs, then "],\"ranges_truncated\":BOOL" closes the list.
 */
void action_log_ranges(struct sbuf *b, const uint32_t *idx, uint32_t count, uint32_t base, uint32_t most);

/**
 * @brief Call @p fn for each recent action with a sequence number from @p since on, oldest first.
 * @param[out] next The sequence number of the next action to come.
 * @param[out] missed Actions from @p since on no longer held.
 */
void action_log_each_recent(struct action_log *log, uint64_t since, action_recent_fn fn, void *user,
                            uint64_t *next, uint64_t *missed);

/** @brief Append `"actions":[...],"actions_dropped":N` (the kept actions, oldest first) to @p out. */
void action_log_json(struct action_log *log, struct sbuf *out);

/** @brief Copy the per-kind totals into @p totals. */
void action_log_totals(struct action_log *log, uint64_t totals[DEVACT_KINDS]);

/** @brief Copy the per-kind totals of the actions scenario events asked for into @p totals. */
void action_log_totals_of_scenario(struct action_log *log, uint64_t totals[DEVACT_KINDS]);

#endif
