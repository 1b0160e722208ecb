/*
 * On-change subscriptions (RFC 8641 3.3). Each keeps a snapshot of its selection as last pushed. Every
 * change of a device's data passes yp_data_changed() (devview.c calls it where running is written and
 * where an interface's link changes), which takes the selection again, diffs it with the snapshot
 * (yp_patch.c) and queues a push-change-update at once, in the same loop pass as the edit's rpc-reply.
 * A dampening period is the subscription's wheel entry: changes inside it only mark the subscription
 * dirty, and one patch for all of them goes out when it ends.
 *
 * The device keeps a list of its on-change subscriptions, so a change on a device without any costs one
 * pointer test. The snapshot is a full copy of the selection: fine for the interface or config subtrees
 * subscribers ask for, bounded by YP_ONCHANGE_MAX_NODES at establishment (sync-too-big above it).
 */
#include "yp.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devview.h"
#include "log.h"
#include "movers.h"
#include "notif_file.h"
#include "sbuf.h"
#include "session.h"
#include "yp_patch.h"

#define YP_NOTIF_NS "urn:ietf:params:xml:ns:netconf:notification:1.0"

/* Largest selection an on-change subscription keeps a snapshot of, in data nodes (a libyang node is
 * 100-200 bytes: a few MB). Above it establish-subscription answers sync-too-big. A selection that grows
 * past it afterwards is still kept: only edits of the subscriber's own peers make it grow. */
#define YP_ONCHANGE_MAX_NODES 20000u

/* While suspended (its session's output backed up), how often a subscription looks whether the output
 * drained (yp_try_resume()): nothing else wakes an on-change subscription, which has no slots. */
#define YP_ONCHANGE_RESUME_POLL_MS 100u

/* Deepest schema walked by the on-change check (a loop in broken modules ends here). */
#define YP_ONCHANGE_MAX_DEPTH 64

/* One on-change subscription's state. */
struct yp_onchange {
    struct yp_sub *sub;           /* its subscription */
    struct yp_onchange *dev_next; /* the device's on-change subscriptions (dev->yp_onchange) */
    struct lyd_node *snapshot;    /* the selection as the subscriber last learnt it; NULL: empty */
    uint32_t patches;             /* push-change-updates queued: the next patch-id */
    uint8_t dirty; /* data changed while dampened or suspended, or a push failed: push when it can */
};

/* ------------------------------------------------------------------ the check (schema) */

/* The first moving state leaf at or under schema node @p snode, or NULL. */
static const struct lysc_node *
first_mover(const struct lysc_node *snode, int depth)
{
    const struct lysc_node *child = NULL, *found;

    if (movers_schema_moves(snode)) {
        return snode;
    }
    if (depth > YP_ONCHANGE_MAX_DEPTH) {
        return NULL;
    }
    while ((child = lys_getnext(child, snode, NULL, 0))) {
        if ((found = first_mover(child, depth + 1))) {
            return found;
        }
    }
    return NULL;
}

/* The first moving leaf of every module's data (no filter), or NULL. */
static const struct lysc_node *
first_mover_all(const struct ly_ctx *ctx)
{
    const struct lys_module *mod;
    uint32_t idx = 0;

    while ((mod = ly_ctx_get_module_iter(ctx, &idx))) {
        const struct lysc_node *top = NULL, *found;
        if (!mod->implemented || !mod->compiled) {
            continue;
        }
        while ((top = lys_getnext(top, NULL, mod->compiled, 0))) {
            if ((found = first_mover(top, 0))) {
                return found;
            }
        }
    }
    return NULL;
}

/* The schema node a subtree filter node names (under @p parent, NULL at the top), or NULL. */
static const struct lysc_node *
filter_schema(const struct ly_ctx *ctx, const struct lysc_node *parent, const struct lyd_node *fnode)
{
    const struct lys_module *mod;

    if (fnode->schema) {
        return fnode->schema;
    }
    mod = ((const struct lyd_node_opaq *)fnode)->name.module_ns
              ? ly_ctx_get_module_implemented_ns(ctx, ((const struct lyd_node_opaq *)fnode)->name.module_ns)
              : NULL;
    if (!mod && parent) {
        mod = parent->module;
    }
    return mod ? lys_find_child(parent, mod, LYD_NAME(fnode), 0, 0, 0) : NULL;
}

/* A content match node (RFC 6241 6.2.5): a leaf filter node with a value. */
static int
is_content_match(const struct lyd_node *fnode)
{
    const char *v;

    if (lyd_child(fnode)) {
        return 0;
    }
    v = fnode->schema ? lyd_get_value(fnode) : ((const struct lyd_node_opaq *)fnode)->value;
    return v && *v;
}

/* The first moving leaf a subtree filter's siblings @p fnodes select under @p parent, or NULL. */
static const struct lysc_node *
first_mover_subtree(const struct ly_ctx *ctx, const struct lysc_node *parent, const struct lyd_node *fnodes,
                    int depth)
{
    const struct lyd_node *f;
    const struct lysc_node *found;

    if (depth > YP_ONCHANGE_MAX_DEPTH) {
        return NULL;
    }
    LY_LIST_FOR(fnodes, f)
    {
        const struct lysc_node *snode = filter_schema(ctx, parent, f);
        const struct lyd_node *c;
        int narrows = 0;
        if (!snode) {
            continue; /* names nothing of the device's: selects nothing */
        }
        /* Children that are not content matches narrow the selection; otherwise all of it is selected. */
        LY_LIST_FOR(lyd_child(f), c)
        {
            narrows |= !is_content_match(c);
        }
        found =
            narrows ? first_mover_subtree(ctx, snode, lyd_child(f), depth + 1) : first_mover(snode, depth);
        if (found) {
            return found;
        }
    }
    return NULL;
}

/* The first moving leaf an XPath filter selects (nodes it names and their subtrees), or NULL. */
static const struct lysc_node *
first_mover_xpath(const struct ly_ctx *ctx, const char *xpath)
{
    struct ly_set *set = NULL;
    const struct lysc_node *found = NULL;

    if (lys_find_xpath(ctx, NULL, xpath, 0, &set)) {
        /* Not resolvable on the schema alone (the filter was validated already): nothing to refuse. */
        return NULL;
    }
    for (uint32_t i = 0; !found && i < set->count; i++) {
        found = first_mover(set->snodes[i], 0);
    }
    ly_set_free(set, NULL);
    return found;
}

/* Data nodes of @p tree (all siblings), counting up to @p max + 1. */
static uint32_t
count_nodes(const struct lyd_node *tree, uint32_t max)
{
    const struct lyd_node *top, *n;
    uint32_t count = 0;

    LY_LIST_FOR(tree, top)
    {
        LYD_TREE_DFS_BEGIN(top, n)
        {
            if (++count > max) {
                return count;
            }
            LYD_TREE_DFS_END(top, n);
        }
    }
    return count;
}

struct edit_err *
yp_onchange_check(struct yp_sub *sub)
{
    const struct ly_ctx *ctx = sub->sess->dev->type->schemas.ctx;
    const struct lysc_node *mover = NULL;
    struct lyd_node *view = NULL;
    struct edit_err *err = NULL;

    /*
     * RFC 8641 excluded-change: creates, deletes, replaces and moves are reported or left out one by one,
     * and a new user-ordered entry is reported as a create, never an insert: every combination can be
     * honoured, so cant-exclude is never answered.
     */
    if (sub->target == YP_TARGET_OPERATIONAL) {
        /* Running holds configuration only: nothing there moves by itself. */
        if (!sub->filter) {
            mover = first_mover_all(ctx);
        } else if (sub->filter->xpath) {
            mover = first_mover_xpath(ctx, sub->filter->xpath);
        } else {
            mover = first_mover_subtree(ctx, NULL, sub->filter->subtree, 0);
        }
    }
    if (mover) {
        char path[512];
        lysc_path(mover, LYSC_PATH_DATA, path, sizeof path);
        return edit_err_operation_failed(EDIT_ERR_APP, "ietf-yang-push:on-change-unsupported", NULL,
                                         "On-change is not supported for %s: it changes every instant; "
                                         "leave it out of the filter or subscribe periodically.",
                                         path);
    }
    if (yp_view(sub, &view)) {
        return edit_err_operation_failed(EDIT_ERR_APP, "ietf-subscribed-notifications:insufficient-resources",
                                         NULL, "The selection could not be read (out of memory).");
    }
    if (count_nodes(view, YP_ONCHANGE_MAX_NODES) > YP_ONCHANGE_MAX_NODES) {
        err = edit_err_operation_failed(EDIT_ERR_APP, "ietf-yang-push:sync-too-big", NULL,
                                        "The selection has more than %u data nodes, more than an on-change "
                                        "subscription keeps; narrow the filter.",
                                        YP_ONCHANGE_MAX_NODES);
    }
    lyd_free_all(view);
    return err;
}

/* ------------------------------------------------------------------ pushing */

/* "<notification ...><eventTime>..</eventTime><@p what xmlns=yang-push><id>N</id>" into @p b. */
static void
open_notification(struct sbuf *b, const struct yp_sub *sub, const char *what, uint64_t event_ms)
{
    char time_text[40];

    notif_format_time(event_ms, time_text, sizeof time_text);
    sbuf_printf(b,
                "<notification xmlns=\"" YP_NOTIF_NS "\"><eventTime>%s</eventTime><%s xmlns=\"" YP_YP_NS
                "\"><id>%" PRIu32 "</id>",
                time_text, what, sub->id);
}

/* Queue a push-update of @p tree (sync-on-start, resync). @return 0 when queued. */
static int
push_update(struct yp_sub *sub, const struct lyd_node *tree)
{
    struct sbuf b = {0};
    char *text = NULL;
    int rc = -1;

    if (tree && (lyd_print_mem(&text, tree, LYD_XML, LYD_PRINT_WITHSIBLINGS | LYD_PRINT_SHRINK) || !text)) {
        goto cleanup;
    }
    open_notification(&b, sub, "push-update", devview_now_ms(sub->sess->worker->fleet));
    if (text) {
        sbuf_adds(&b, "<datastore-contents>");
        sbuf_adds(&b, text);
        sbuf_adds(&b, "</datastore-contents>");
    } else {
        sbuf_adds(&b, "<datastore-contents/>");
    }
    sbuf_adds(&b, "</push-update></notification>");
    if (!b.failed && !yp_send(sub, b.buf, b.len)) {
        sub->counts.updates++;
        rc = 0;
    }

cleanup:
    free(text);
    sbuf_free(&b);
    return rc;
}

/*
 * Take the selection again and push what changed since the snapshot. The snapshot moves on only when
 * the subscriber was told (or nothing it is told of changed): a push that could not be queued leaves it,
 * so the next push carries those changes too. @return 1 when a push-change-update was queued.
 */
static int
push_changes(struct yp_onchange *oc)
{
    struct yp_sub *sub = oc->sub;
    struct lyd_node *view = NULL;
    struct sbuf b = {0};
    char patch_id[16];
    uint32_t edits = 0;
    int pushed = 0;

    oc->dirty = 0;
    if (yp_view(sub, &view)) {
        oc->dirty = 1;
        goto cleanup;
    }
    open_notification(&b, sub, "push-change-update", devview_now_ms(sub->sess->worker->fleet));
    snprintf(patch_id, sizeof patch_id, "%" PRIu32, oc->patches);
    if (yp_patch_write(oc->snapshot, view, sub->excluded, patch_id, &b, &edits)) {
        oc->dirty = 1;
        goto cleanup;
    }
    if (!edits) {
        /* Nothing the subscriber hears of changed (or only excluded kinds): the snapshot follows. */
        lyd_free_all(oc->snapshot);
        oc->snapshot = view;
        view = NULL;
        goto cleanup;
    }
    sbuf_adds(&b, "</push-change-update></notification>");
    if (b.failed || yp_send(sub, b.buf, b.len)) {
        oc->dirty = 1; /* suspended or out of memory: these changes go with the next push */
        goto cleanup;
    }
    sub->counts.change_updates++;
    oc->patches++;
    lyd_free_all(oc->snapshot);
    oc->snapshot = view;
    view = NULL;
    pushed = 1;

cleanup:
    lyd_free_all(view);
    sbuf_free(&b);
    return pushed;
}

/* A suspended subscription's wheel entry: look again for the session's output to drain. */
static void
poll_resume(struct yp_sub *sub)
{
    struct worker *w = sub->sess->worker;

    wheel_add(w->wheel, &sub->tick, loop_now_us(w->loop) + (monotime_us)YP_ONCHANGE_RESUME_POLL_MS * 1000u);
}

/* Push now, and start the dampening period when the subscription has one and something went out; a push
 * that suspended the subscription starts polling for its resumption instead. */
static void
push_and_dampen(struct yp_onchange *oc)
{
    struct yp_sub *sub = oc->sub;
    struct worker *w = sub->sess->worker;
    int pushed = push_changes(oc);

    if (sub->state == YP_STATE_SUSPENDED) {
        poll_resume(sub);
    } else if (pushed && sub->dampening_cs) {
        wheel_add(w->wheel, &sub->tick, loop_now_us(w->loop) + (monotime_us)sub->dampening_cs * 10000u);
    }
}

void
yp_onchange_start(struct yp_sub *sub)
{
    struct device *dev = sub->sess->dev;
    struct yp_onchange *oc = sub->oc;

    if (!oc) {
        if (!(oc = calloc(1, sizeof *oc))) {
            log_warn("device %u: on-change subscription %" PRIu32 " ends: out of memory", dev->index,
                     sub->id);
            yp_end(sub, "ietf-subscribed-notifications:filter-unavailable");
            return;
        }
        oc->sub = sub;
        oc->dev_next = dev->yp_onchange;
        dev->yp_onchange = oc;
        sub->oc = oc;
    }
    /* A modified subscription starts over from its new selection. */
    lyd_free_all(oc->snapshot);
    oc->snapshot = NULL;
    oc->dirty = 0;
    if (yp_view(sub, &oc->snapshot)) {
        oc->dirty = 1; /* the first change pushes the whole selection as created */
        return;
    }
    if (sub->sync_on_start && push_update(sub, oc->snapshot) && sub->state == YP_STATE_SUSPENDED) {
        oc->dirty = 1; /* the subscriber lacks the selection: all of it goes as creates once resumed */
        lyd_free_all(oc->snapshot);
        oc->snapshot = NULL;
        poll_resume(sub);
    }
}

void
yp_onchange_stop(struct yp_sub *sub)
{
    struct yp_onchange *oc = sub->oc, **pp;

    if (!oc) {
        return;
    }
    for (pp = &sub->sess->dev->yp_onchange; *pp && *pp != oc; pp = &(*pp)->dev_next) {
    }
    if (*pp) {
        *pp = oc->dev_next;
    }
    lyd_free_all(oc->snapshot);
    free(oc);
    sub->oc = NULL;
}

void
yp_onchange_resync(struct yp_sub *sub)
{
    struct yp_onchange *oc = sub->oc;
    struct lyd_node *view = NULL;

    if (!oc || yp_view(sub, &view)) {
        return;
    }
    if (push_update(sub, view)) {
        lyd_free_all(view);
        if (sub->state == YP_STATE_SUSPENDED) {
            oc->dirty = 1; /* what changed since the snapshot goes once resumed */
            poll_resume(sub);
        }
        return;
    }
    /* The subscriber now holds the whole selection: changes are counted from it. */
    lyd_free_all(oc->snapshot);
    oc->snapshot = view;
    oc->dirty = 0;
}

void
yp_onchange_due(struct yp_sub *sub)
{
    struct yp_onchange *oc = sub->oc;

    if (!oc) {
        return;
    }
    if (sub->state == YP_STATE_SUSPENDED && !yp_try_resume(sub, devview_now_ms(sub->sess->worker->fleet))) {
        poll_resume(sub);
        return;
    }
    /* The dampening period ended, or the subscription resumed: one patch for what changed meanwhile. */
    if (oc->dirty) {
        push_and_dampen(oc);
    }
}

void
yp_data_changed(struct device *dev)
{
    struct yp_onchange *oc, *next;

    for (oc = dev->yp_onchange; oc; oc = next) {
        struct yp_sub *sub = oc->sub;
        next = oc->dev_next; /* taken first: a push may end the subscription (out of memory) */
        if (sub->state != YP_STATE_ACTIVE || (sub->dampening_cs && wheel_scheduled(&sub->tick))) {
            /* One patch for all of it when the period ends or the subscription resumes. */
            oc->dirty = 1;
            if (sub->state == YP_STATE_SUSPENDED && !wheel_scheduled(&sub->tick)) {
                poll_resume(sub);
            }
            continue;
        }
        push_and_dampen(oc);
    }
}
