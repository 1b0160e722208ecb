/*
 * Recovery of a fleet's events as the controller's topology shows it: for
 * every event (fleet_events.h) the nodes it affected, how many of them a
 * poll after it found not connected (lost), and when the first poll came in
 * which all were connected again (healed). A node table maps each affected
 * node-id to a slot, so a poll marks the connected ones in one pass over the
 * topology (topo_count_each()) and each open event then looks at its slots.
 */
#ifndef STRESS_EVENT_RECOVERY_H
#define STRESS_EVENT_RECOVERY_H

#include <stddef.h>
#include <stdint.h>

#include "fleet_events.h"
#include "topo_read.h"

/* How an event's recovery stands. */
enum evr_state {
    EVR_MARK,         /* an action that does not change connection status: not measured */
    EVR_PENDING,      /* measured, not healed (yet): with the run over, "not-healed" */
    EVR_HEALED,       /* all affected connected again at healed_s */
    EVR_NO_LOSS_SEEN, /* a loss action whose loss no poll saw (set when the run ends) */
};

struct evr_event {
    struct fev_event ev;    /* the event as the fleet answered it (owns its node-ids) */
    double t_s;             /* its time on the run's clock (negative: before the run began) */
    enum fev_expect expect; /* what its action leads the controller to show */
    uint32_t *slots;        /* the node table slot of each of ev.node_ids */
    uint8_t *lost_bits;     /* a bit per affected node: seen not connected in a poll after t_s */
    uint32_t lost;          /* bits set in lost_bits */
    enum evr_state state;   /* how its recovery stands */
    double healed_s;        /* healed: from t_s to the start of the poll with all connected, seconds */
    uint64_t polls;         /* polls that looked at it */
};

struct evr_tracker {
    int64_t start_wall_ms;    /* the wall clock at the run's start (t_s 0), ms since 1970 */
    char **keys;              /* node table: node-id per bucket, NULL when free */
    uint32_t *bucket_slot;    /* the slot of each bucket's node-id */
    size_t bucket_cap;        /* buckets (a power of two), 0 before the first node */
    uint32_t slot_count;      /* distinct node-ids in the table */
    uint64_t *connected_poll; /* per slot: the last poll that listed it connected */
    size_t slot_cap;          /* entries allocated in connected_poll */
    uint64_t poll;            /* the current poll's number, from 1 */
    struct evr_event *events; /* every event taken, in seq order */
    size_t event_count;       /* entries used */
    size_t event_cap;         /* entries allocated */
    uint64_t last_seq;        /* highest seq taken (an event again is ignored) */
};

/** @brief An empty tracker whose t_s 0 is the wall clock @p start_wall_ms. */
void evr_init(struct evr_tracker *tr, int64_t start_wall_ms);

/** @brief Free everything the tracker holds. */
void evr_free(struct evr_tracker *tr);

/**
 * @brief Take an event: its node-ids go into the node table. The event is moved (its node-ids are the
 * tracker's afterwards, @p ev is left empty), also when it is refused.
 * @return 1 taken, 0 ignored (a seq already taken), -1 out of memory.
 */
int evr_add(struct evr_tracker *tr, struct fev_event *ev);

/** @brief Begin a poll: the nodes topo_count_each() reports through evr_on_node() are this poll's. */
void evr_poll_begin(struct evr_tracker *tr);

/** @brief topo_node_fn for a poll: @p user is the tracker; a connected node of the table is marked. */
void evr_on_node(void *user, const char *id, enum topo_status status);

/**
 * @brief End a poll that answered a topology, started at @p t_s on the run's clock: every measured event
 * not healed with t_s at or before it counts its affected nodes not connected (lost) and heals when all
 * are connected (a loss action only once some loss was seen).
 */
void evr_poll_end(struct evr_tracker *tr, double t_s);

/** @brief At the run's end: loss actions still pending that never saw a loss become EVR_NO_LOSS_SEEN. */
void evr_finish(struct evr_tracker *tr);

/** @return "mark", "pending"/"not-healed" (@p final 0/1), "healed" or "no-loss-seen". */
const char *evr_state_name(enum evr_state state, int final);

#endif
