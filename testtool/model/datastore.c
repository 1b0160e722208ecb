/*
 * Copy-on-write datastores. The cost model: a device that was never edited
 * costs sizeof(struct datastore); the first edit of a datastore copies the
 * tree it read through to (the template is usually small), later edits are
 * in place. A commit moves the candidate's tree into running without a copy.
 */
#include "datastore.h"

#include <stdlib.h>
#include <string.h>

static void
candidate_log_clear(struct datastore *ds)
{
    struct ds_candidate_log *log = ds->candidate_log;

    if (log) {
        for (size_t i = 0; i < log->count; i++) {
            lyd_free_siblings(log->edits[i].config);
        }
        free(log->edits);
        free(log);
    }
    ds->candidate_log = NULL;
}

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
        if (id == DS_CANDIDATE) {
            /* A fresh copy of running: replaying its later edits onto running reproduces it. */
            candidate_log_clear(ds);
            ds->candidate_base_gen = ds->running_gen;
            ds->candidate_log_valid = 1;
        }
    }
    if (id == DS_RUNNING) {
        ds->running_gen++;
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
    if (id == DS_RUNNING) {
        ds->running_gen++;
    } else if (id == DS_CANDIDATE) {
        candidate_log_clear(ds);
        ds->candidate_log_valid = 0;
    }
}

void
ds_reset(struct datastore *ds, enum ds_id id)
{
    lyd_free_siblings(ds->tree[id]);
    ds->tree[id] = NULL;
    ds->own[id] = 0;
    if (id == DS_CANDIDATE) {
        ds->candidate_dirty = 0;
        candidate_log_clear(ds);
        ds->candidate_log_valid = 0;
    } else if (id == DS_RUNNING) {
        ds->running_gen++;
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
    ds->running_gen++;
    candidate_log_clear(ds);
    ds->candidate_log_valid = 0;
}

void
ds_candidate_log_edit(struct datastore *ds, const struct lyd_node *config, int default_op, int error_option)
{
    struct ds_candidate_log *log = ds->candidate_log;
    struct lyd_node *copy = NULL;

    if (!ds->candidate_log_valid) {
        return;
    }
    if (!log && !(log = ds->candidate_log = calloc(1, sizeof *log))) {
        goto give_up;
    }
    if (log->count == DS_CANDIDATE_LOG_MAX) {
        goto give_up;
    }
    if (log->count == log->cap) {
        size_t cap = log->cap ? log->cap * 2 : 16;
        struct ds_logged_edit *grown = realloc(log->edits, cap * sizeof *grown);
        if (!grown) {
            goto give_up;
        }
        log->edits = grown;
        log->cap = cap;
    }
    if (config && lyd_dup_siblings(config, NULL, LYD_DUP_RECURSIVE | LYD_DUP_WITH_FLAGS, &copy)) {
        goto give_up;
    }
    log->edits[log->count++] = (struct ds_logged_edit){
        .config = copy, .default_op = (uint8_t)default_op, .error_option = (uint8_t)error_option};
    return;

give_up:
    candidate_log_clear(ds);
    ds->candidate_log_valid = 0;
}

const struct ds_logged_edit *
ds_candidate_replay(const struct datastore *ds, size_t *count)
{
    *count = 0;
    if (!ds->own[DS_CANDIDATE] || !ds->candidate_log_valid || ds->candidate_base_gen != ds->running_gen ||
        !ds->candidate_log) {
        return NULL;
    }
    *count = ds->candidate_log->count;
    return ds->candidate_log->edits;
}

void
ds_commit_replayed(struct datastore *ds)
{
    candidate_log_clear(ds);
    ds->candidate_base_gen = ds->running_gen;
    ds->candidate_log_valid = 1;
    ds->candidate_dirty = 0;
}

void
ds_close(struct datastore *ds)
{
    candidate_log_clear(ds);
    for (int i = 0; i < DS_COUNT; i++) {
        lyd_free_siblings(ds->tree[i]);
    }
    memset(ds, 0, sizeof *ds);
}
