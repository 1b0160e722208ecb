/*
 * Copy-on-write datastores. The cost model: a device that was never edited
 * costs sizeof(struct datastore); the first edit of a datastore copies the
 * tree it read through to (the template is usually small), later edits are
 * in place. A commit moves the candidate's tree into running without a copy.
 */
#include "datastore.h"

#include <string.h>

const char *
ds_name(enum ds_id id)
{
    static const char *const names[] = {"running", "candidate", "startup"};

    return names[id];
}

const struct lyd_node *
ds_read(const struct datastore *ds, const struct lyd_node *tmpl, enum ds_id id)
{
    if (ds->own[id]) {
        return ds->tree[id];
    }
    if (id == DS_CANDIDATE) {
        return ds_read(ds, tmpl, DS_RUNNING);
    }
    return tmpl;
}

enum fleet_err
ds_own(struct datastore *ds, const struct lyd_node *tmpl, enum ds_id id, struct lyd_node ***tree)
{
    if (!ds->own[id]) {
        const struct lyd_node *src = ds_read(ds, tmpl, id);
        struct lyd_node *copy = NULL;
        if (src && lyd_dup_siblings(src, NULL, LYD_DUP_RECURSIVE | LYD_DUP_WITH_FLAGS, &copy)) {
            return FLEET_ERR_NOMEM;
        }
        ds->tree[id] = copy;
        ds->own[id] = 1;
    }
    *tree = &ds->tree[id];
    return FLEET_OK;
}

void
ds_replace(struct datastore *ds, enum ds_id id, struct lyd_node *tree)
{
    lyd_free_siblings(ds->tree[id]);
    ds->tree[id] = tree;
    ds->own[id] = 1;
}

void
ds_reset(struct datastore *ds, enum ds_id id)
{
    lyd_free_siblings(ds->tree[id]);
    ds->tree[id] = NULL;
    ds->own[id] = 0;
    if (id == DS_CANDIDATE) {
        ds->candidate_dirty = 0;
    }
}

void
ds_commit(struct datastore *ds)
{
    if (!ds->own[DS_CANDIDATE]) {
        return; /* the candidate shows running: nothing to do */
    }
    /* Move, not copy: the candidate's tree becomes running's. */
    lyd_free_siblings(ds->tree[DS_RUNNING]);
    ds->tree[DS_RUNNING] = ds->tree[DS_CANDIDATE];
    ds->own[DS_RUNNING] = 1;
    ds->tree[DS_CANDIDATE] = NULL;
    ds->own[DS_CANDIDATE] = 0;
    ds->candidate_dirty = 0;
}

void
ds_close(struct datastore *ds)
{
    for (int i = 0; i < DS_COUNT; i++) {
        lyd_free_siblings(ds->tree[i]);
    }
    memset(ds, 0, sizeof *ds);
}
