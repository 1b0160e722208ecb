/*
 * The fleet's event log as controller-mount reads it: the answer of
 * fleetsim's GET /api/v1/events?since=SEQ (the actions the control API and a
 * scenario applied, each with the node-ids it affected) parsed into plain
 * structs, and what each action leads a controller to do: lose the devices
 * (kill-sessions, down, reboot), connect them (up, grow), or nothing the
 * topology shows (the others: marks on the curve only).
 */
#ifndef STRESS_FLEET_EVENTS_H
#define STRESS_FLEET_EVENTS_H

#include <stddef.h>
#include <stdint.h>

/* Longest action, origin and scenario event name kept (longer ones are cut). */
#define FEV_NAME_BYTES 64
/* Longest "time" text kept (RFC 3339 with milliseconds is 24). */
#define FEV_TIME_BYTES 40

/* What an action leads the controller to show for the devices it affected. */
enum fev_expect {
    FEV_MARK, /* nothing in connection status: latency, drop-rate, set, notification-rate, flap, shrink,
                 unknown */
    FEV_LOSS, /* sessions end, then come back: kill-sessions, down, reboot */
    FEV_UP,   /* all affected connected: up, grow */
};

struct fev_event {
    uint64_t seq;                /* the fleet's sequence number */
    int64_t time_ms;             /* when it was applied, the fleet's wall clock, ms since 1970 */
    char time[FEV_TIME_BYTES];   /* the same as the fleet wrote it (RFC 3339) */
    char action[FEV_NAME_BYTES]; /* "reboot", "down", ... */
    char origin[FEV_NAME_BYTES]; /* "api" or "scenario" */
    char event[FEV_NAME_BYTES];  /* the scenario event's name, "" when none was given */
    uint32_t devices;            /* devices the action was applied to */
    uint32_t failed;             /* devices it could not be applied to */
    char **node_ids;             /* every affected node-id, malloc'd strings */
    size_t node_count;           /* entries of node_ids */
};

struct fev_answer {
    int have_seed;            /* 1 when "seed" is a number */
    uint64_t seed;            /* the fleet's --seed */
    int have_scenario;        /* 1 when "scenario" is an object */
    char scenario_file[256];  /* its "file", cut to fit */
    char scenario_sha256[72]; /* its "sha256" */
    int have_scenario_seed;   /* 1 when the scenario has a numeric "seed" */
    uint64_t scenario_seed;   /* that seed */
    uint64_t next;            /* the seq to ask for next time */
    uint64_t dropped;         /* events before "since" the fleet no longer holds */
    struct fev_event *events; /* oldest first, malloc'd */
    size_t event_count;       /* entries of events */
};

/**
 * @brief Parse an answer of GET /api/v1/events.
 * @param[in] body The JSON text (need not be NUL-terminated).
 * @param[in] len Its length.
 * @param[out] out The answer (zeroed first; free with fev_answer_free() whatever the result).
 * @param[out] err On error, what is wrong.
 * @param[in] err_len Size of @p err.
 * @return 0, or -1 when the body is not JSON or lacks "next" or "events", or an event lacks seq, time_ms,
 * action or node_ids.
 */
int fev_parse(const char *body, size_t len, struct fev_answer *out, char *err, size_t err_len);

/** @brief Free what fev_parse() filled in @p a (the events and their node-ids), leaving it empty. */
void fev_answer_free(struct fev_answer *a);

/** @brief Free one event's node-ids (an event moved out of an answer). */
void fev_event_free(struct fev_event *e);

/** @return What @p action leads the controller to show (FEV_MARK for an unknown action). */
enum fev_expect fev_expect_of(const char *action);

#endif
