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

struct datastore {
    struct lyd_node *tree[DS_COUNT]; /* own tree (first top-level sibling, NULL = empty); valid when own[] */
    uint8_t own[DS_COUNT];           /* 0: reads through (template, or running for the candidate) */
    uint8_t candidate_dirty;         /* 1 when the candidate was changed since the last commit or discard */
    uint32_t lock[DS_COUNT];         /* session-id holding the lock, 0 when unlocked */
    uint32_t lock_time[DS_COUNT]; /* when the lock was taken (seconds since the epoch); valid while locked */
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

/** @brief Commit: running becomes the candidate's content (moved, not copied); the candidate reads through
 * again. */
void ds_commit(struct datastore *ds);

/** @brief Free all own trees. */
void ds_close(struct datastore *ds);

#endif
