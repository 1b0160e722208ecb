/*
 * --scenario FILE: a timeline of the control API's actions on the running
 * fleet (schemas/fleetsim-scenario.yang). scenario_file.c loads and checks
 * a file against the fleet; scenario.c runs it from a thread of its own,
 * through fleet_action.h as the API does, so a scenario can do nothing the
 * API cannot and is recorded the same way.
 */
#ifndef FLEET_SCENARIO_H
#define FLEET_SCENARIO_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "fleet_action.h"
#include "sbuf.h"

/* The YANG module a scenario file is an instance of. */
#define SCENARIO_MODULE "fleetsim-scenario"
/* Largest scenario file read. */
#define SCENARIO_MAX_FILE_BYTES (4u * 1024u * 1024u)
/* Downs waiting for their revert-after at once; later ones are reverted at once with a warning. */
#define SCENARIO_MAX_PENDING 4096

enum scenario_when {
    SCENARIO_AT,      /* once, at at_ms */
    SCENARIO_EVERY,   /* from from_ms every period_ms */
    SCENARIO_POISSON, /* from from_ms, exponential gaps of mean period_ms */
};

/* One event of the file. */
struct scenario_event {
    char *name;               /* its name: reports, logs, seeds */
    enum scenario_when when;  /* how it repeats */
    uint64_t at_ms;           /* SCENARIO_AT: the offset */
    uint64_t from_ms;         /* EVERY, POISSON: the first possible offset */
    uint64_t period_ms;       /* EVERY: the period; POISSON: the mean gap */
    uint64_t until_ms;        /* EVERY, POISSON: no occurrence after it; UINT64_MAX: none */
    uint32_t max_count;       /* EVERY, POISSON: most occurrences; 0: unbounded */
    char *target;             /* the request's target text (a range or a group name), owned */
    struct fact_request rq;   /* the action (target, params, share); seed set per occurrence */
    uint64_t revert_after_ms; /* down: the same devices come up after it; 0: never */
    /* the run's state */
    uint64_t next_ms;     /* offset of the next occurrence; UINT64_MAX: no more */
    uint32_t occurrences; /* occurrences so far */
};

/* A down to revert at due_ms. */
struct scenario_pending {
    uint64_t due_ms; /* offset it is due at */
    uint32_t *idx;   /* the devices, owned */
    uint32_t count;  /* entries in idx */
    uint32_t event;  /* index of the event that took them down */
};

struct scenario {
    char *path;                       /* the file as given */
    char sha256[65];                  /* SHA-256 of its bytes, hex */
    uint64_t seed;                    /* its seed (or the fleet's --seed) */
    struct scenario_event *events;    /* events in file order */
    uint32_t event_count;             /* entries in events */
    struct scenario_pending *pending; /* downs waiting for their revert-after (unordered) */
    uint32_t pending_count;           /* entries in pending */
    struct fleet *fleet;              /* the fleet it runs on; valid while started */
    pthread_t thread;                 /* the runner; valid while started */
    int started;                      /* 1 between scenario_start() and scenario_stop() */
    int stop;                         /* set by scenario_stop(), under lock */
    pthread_mutex_t lock;             /* guards stop */
    pthread_cond_t cond;              /* wakes the runner to stop */
    uint64_t done;                    /* occurrences carried out */
    uint64_t failed;                  /* occurrences refused or not answered in time */
};

/**
 * @brief Load @p path, validate it against SCENARIO_MODULE and check it against @p fleet (groups, ranges,
 * every action's parameters with the control API's checks), and set each group's start_present.
 * Call after fleet_init() and before fleet_start().
 * @return The scenario (scenario_free()), or NULL with @p err naming the file and the problem.
 */
struct scenario *scenario_load(const char *path, struct fleet *fleet, char *err, size_t err_len);

/** @brief Start running @p sc on @p fleet; its offsets count from now. @return 0, or -1 (no thread). */
int scenario_start(struct scenario *sc, struct fleet *fleet);

/** @brief Stop the runner (an action in flight finishes) and join it. Safe twice and unstarted. */
void scenario_stop(struct scenario *sc);

/** @brief Free @p sc (stopped first). Accepts NULL. */
void scenario_free(struct scenario *sc);

/**
 * @brief The seed of occurrence @p k of event @p name in a scenario of seed @p seed: what its share is
 * drawn with, so every run of the file hits the same devices.
 */
uint64_t scenario_occurrence_seed(uint64_t seed, const char *name, uint32_t k);

/**
 * @brief Offset of occurrence @p k + 1 of @p ev after occurrence @p k at @p prev_ms (k from 0), in a
 * scenario of seed @p seed; UINT64_MAX when there is none.
 */
uint64_t scenario_next_offset(const struct scenario_event *ev, uint64_t seed, uint32_t k, uint64_t prev_ms);

/**
 * @brief Append `"seed":N,"scenario":{"file":...,"sha256":...,"seed":N}` (or `"scenario":null`) for the
 * fleet's reports and answers; @p sc may be NULL.
 */
void scenario_json(const struct scenario *sc, uint64_t fleet_seed, struct sbuf *out);

#endif
