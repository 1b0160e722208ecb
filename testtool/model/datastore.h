/*
 * A device's datastores (running, candidate, startup) as copy-on-write
 * views of the fleet's template. An untouched datastore holds no tree of
 * its own: running and startup read the template, the candidate reads
 * running. The first write copies what the datastore reads through to,
 * once; every later edit changes the device's own tree in place.
 */
#ifndef FLEET_DATASTORE_H
#define FLEET_DATASTORE_H

#include <stdint.h>

#include <libyang/libyang.h>

#include "err.h"

enum ds_id {
    DS_RUNNING = 0,
    DS_CANDIDATE,
    DS_STARTUP,
    DS_COUNT,
};

/* Most candidate edits remembered for replay at commit; beyond it commit moves the tree instead. */
#define DS_CANDIDATE_LOG_MAX 100000

/* One edit-config applied to the candidate, kept so commit can replay it onto running. */
struct ds_logged_edit {
    struct lyd_node *config; /* copy of the <config> content, owned */
    uint8_t default_op;      /* index into merge, replace, none */
    uint8_t error_option;    /* index into stop-on-error, continue-on-error, rollback-on-error */
};

struct ds_candidate_log {
    struct ds_logged_edit *edits; /* in order */
    size_t count;                 /* entries used */
    size_t cap;                   /* entries allocated */
};

struct datastore {
    struct lyd_node *tree[DS_COUNT]; /* own tree (first top-level sibling, NULL = empty); valid when own[] */
    uint8_t own[DS_COUNT];           /* 0: reads through (template, or running for the candidate) */
    uint8_t candidate_dirty;         /* 1 when the candidate was changed since the last commit or discard */
    uint32_t lock[DS_COUNT];         /* session-id holding the lock, 0 when unlocked */
    uint32_t lock_time[DS_COUNT]; /* when the lock was taken (seconds since the epoch); valid while locked */
    uint32_t running_gen;         /* bumped on every write to running */
    uint32_t candidate_base_gen;  /* running_gen the candidate's own tree started from */
    struct ds_candidate_log *candidate_log; /* edits since then; NULL when none or not replayable */
    uint8_t candidate_log_valid; /* 1 while candidate_log describes every change of the candidate */
};

/** @return Name of a datastore as in NETCONF ("running", ...). */
const char *ds_name(enum ds_id id);

/**
 * @brief The tree a datastore shows.
 * @param[in] tmpl The fleet's template tree (initial configuration).
 * @return First top-level sibling, or NULL when empty. Read-only.
 */
const struct lyd_node *ds_read(const struct datastore *ds, const struct lyd_node *tmpl, enum ds_id id);

/**
 * @brief Make a datastore hold its own tree (copying what it read through to) and return it for editing.
 * @param[out] tree Address of the own tree's root pointer; edits update it in place.
 * @return FLEET_OK or FLEET_ERR_NOMEM.
 */
enum fleet_err ds_own(struct datastore *ds, const struct lyd_node *tmpl, enum ds_id id,
                      struct lyd_node ***tree);

/** @brief Give a datastore a new tree, taking ownership of @p tree and freeing the old one. */
void ds_replace(struct datastore *ds, enum ds_id id, struct lyd_node *tree);

/** @brief Drop a datastore's own tree so that it reads through again. */
void ds_reset(struct datastore *ds, enum ds_id id);

/**
 * @brief Commit by moving: running becomes the candidate's tree (not copied); the candidate reads
 * through again.
 */
void ds_commit(struct datastore *ds);

/**
 * @brief Remember an edit that changed the candidate, for replay at commit.
 * When memory runs out or the log is full, replay is given up (commit then moves the tree).
 */
void ds_candidate_log_edit(struct datastore *ds, const struct lyd_node *config, int default_op,
                           int error_option);

/**
 * @brief The candidate's edits, when replaying them onto running gives exactly the candidate:
 * running has not changed since the candidate's tree was copied from it and every change is logged.
 * @return The edits (count in @p count), or NULL when commit must move the tree.
 */
const struct ds_logged_edit *ds_candidate_replay(const struct datastore *ds, size_t *count);

/** @brief After a successful replay: running and candidate are equal again; the log starts over. */
void ds_commit_replayed(struct datastore *ds);

/** @brief Free all own trees. */
void ds_close(struct datastore *ds);

#endif
