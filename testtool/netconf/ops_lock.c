/*
 * Locks: the rules of RFC 6241 sections 7.5-7.6 (lock_*) and the lock and
 * unlock handlers that apply them to the calling device.
 */
#include <string.h>
#include <time.h>

#include "lock.h"
#include "ops.h"

struct edit_err *
lock_acquire(struct datastore *ds, enum ds_id id, uint32_t sid)
{
    if (ds->lock[id]) {
        return edit_err_lock_denied(ds->lock[id], "Datastore %s is already locked by session %u.",
                                    ds_name(id), (unsigned)ds->lock[id]);
    }
    if (id == DS_CANDIDATE && ds->candidate_dirty) {
        /* Session-id 0: the changes are not tied to a lock holder. */
        return edit_err_lock_denied(0, "The candidate has uncommitted changes.");
    }
    ds->lock[id] = sid;
    ds->lock_time[id] = (uint32_t)time(NULL);
    return NULL;
}

struct edit_err *
lock_release(struct datastore *ds, enum ds_id id, uint32_t sid)
{
    if (!ds->lock[id]) {
        return edit_err_operation_failed(EDIT_ERR_PROTOCOL, NULL, NULL, "Datastore %s is not locked.",
                                         ds_name(id));
    }
    if (ds->lock[id] != sid) {
        return edit_err_operation_failed(EDIT_ERR_PROTOCOL, NULL, NULL,
                                         "Datastore %s is locked by session %u.", ds_name(id),
                                         (unsigned)ds->lock[id]);
    }
    ds->lock[id] = 0;
    return NULL;
}

struct edit_err *
lock_check_write(const struct datastore *ds, enum ds_id id, uint32_t sid)
{
    if (ds->lock[id] && ds->lock[id] != sid) {
        return edit_err_in_use(EDIT_ERR_PROTOCOL, "Datastore %s is locked by session %u.", ds_name(id),
                               (unsigned)ds->lock[id]);
    }
    return NULL;
}

void
lock_release_session(struct datastore *ds, uint32_t sid)
{
    for (int i = 0; i < DS_COUNT; i++) {
        if (ds->lock[i] != sid) {
            continue;
        }
        ds->lock[i] = 0;
        /* RFC 6241 7.5: a candidate locked by a session that ends loses its uncommitted changes. */
        if (i == DS_CANDIDATE) {
            ds_reset(ds, DS_CANDIDATE);
        }
    }
}

static int
lock_target(struct rpc_call *call, enum ds_id *id)
{
    const struct lyd_node *target = rpc_param(call, "target", 1);
    const struct lyd_node *child = target ? lyd_child(target) : NULL;
    static const char *const names[] = {"running", "candidate", "startup"};

    if (!target) {
        return -1;
    }
    for (int i = 0; child && i < DS_COUNT; i++) {
        if (!strcmp(LYD_NAME(child), names[i])) {
            *id = (enum ds_id)i;
            return 0;
        }
    }
    rpc_fail(call, edit_err_missing_element(EDIT_ERR_PROTOCOL, "target", NULL));
    return -1;
}

void
op_lock(struct rpc_call *call)
{
    enum ds_id id;

    if (!lock_target(call, &id)) {
        struct edit_err *err = lock_acquire(&call->dev->ds, id, call->sess->id);
        if (err) {
            rpc_fail(call, err);
        }
    }
}

void
op_unlock(struct rpc_call *call)
{
    enum ds_id id;

    if (!lock_target(call, &id)) {
        struct edit_err *err = lock_release(&call->dev->ds, id, call->sess->id);
        if (err) {
            rpc_fail(call, err);
        }
    }
}
