/*
 * Datastore locks (RFC 6241 section 7.5 and 7.6), as rules over a device's
 * datastore record, separate from the RPC handlers so they can be tested
 * alone. Session-ids identify holders; 0 means unlocked.
 */
#ifndef FLEET_LOCK_H
#define FLEET_LOCK_H

#include <stdint.h>

#include "datastore.h"
#include "edit_err.h"

/**
 * @brief Take the lock of @p id for session @p sid.
 * Refused (lock-denied naming the holder) when another session holds it, when the
 * same session holds it already, or for the candidate when it has uncommitted changes.
 * @return NULL when granted, else the error.
 */
struct edit_err *lock_acquire(struct datastore *ds, enum ds_id id, uint32_t sid);

/**
 * @brief Release the lock of @p id held by @p sid.
 * @return NULL when released; operation-failed when not locked or held by another session.
 */
struct edit_err *lock_release(struct datastore *ds, enum ds_id id, uint32_t sid);

/**
 * @brief May session @p sid change datastore @p id?
 * @return NULL when allowed; in-use when another session holds the lock.
 */
struct edit_err *lock_check_write(const struct datastore *ds, enum ds_id id, uint32_t sid);

/**
 * @brief A session ended: free its locks; a candidate it held locked loses its uncommitted changes.
 */
void lock_release_session(struct datastore *ds, uint32_t sid);

#endif
