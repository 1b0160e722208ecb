/*
 * Dynamic subscription records (RFC 8639 over NETCONF, RFC 8640): their ids, their session's list, the
 * filters the worker shares among them, sending with suspension when the session's output backs up, the
 * subscription-* state notifications, and their end. Everything runs on the device's worker thread.
 *
 * A record is one calloc (sizeof(struct yp_sub): 160 bytes on x86-64, build/bench_sizes); its filter is
 * shared by every subscription of the worker with the same filter text, so 100,000 subscriptions with one
 * filter cost one filter.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devview.h"
#include "filter.h"
#include "log.h"
#include "notif_file.h"
#include "ops.h"
#include "session.h"
#include "yp.h"
#include "yp_rows.h"

#define YP_NOTIF_NS "urn:ietf:params:xml:ns:netconf:notification:1.0"

/* FNV-1a over @p len bytes, continuing from @p h. */
static uint64_t
fnv1a(uint64_t h, const void *bytes, size_t len)
{
    const unsigned char *p = bytes;

    for (size_t i = 0; i < len; i++) {
        h = (h ^ p[i]) * 0x100000001b3ull;
    }
    return h;
}

struct yp_sub *
yp_sub_new(struct session *s)
{
    struct yp_sub *sub = calloc(1, sizeof *sub);

    if (!sub) {
        return NULL;
    }
    sub->sess = s;
    /* Ids are unique on the worker, so on each of its devices; 0 is never given. */
    if (++s->worker->yp_next_id == 0) {
        ++s->worker->yp_next_id;
    }
    sub->id = s->worker->yp_next_id;
    return sub;
}

void
yp_sub_link(struct yp_sub *sub)
{
    sub->next = sub->sess->subs;
    sub->sess->subs = sub;
    /* The lateness logged at exit is the steady state's: a client setting up thousands of subscriptions
     * competes with the updates of the first ones. */
    memset(sub->sess->worker->yp_late_ms, 0, sizeof sub->sess->worker->yp_late_ms);
}

/* Give back the worker's share of @p f. */
static void
filter_put(struct worker *w, struct yp_filter *f)
{
    struct yp_filter **pp;

    if (!f || --f->refs) {
        return;
    }
    for (pp = &w->yp_filters; *pp && *pp != f; pp = &(*pp)->next) {
    }
    if (*pp) {
        *pp = f->next;
    }
    lyd_free_all(f->subtree);
    free(f->xpath);
    free(f);
}

void
yp_sub_free(struct yp_sub *sub)
{
    if (!sub) {
        return;
    }
    filter_put(sub->sess->worker, sub->filter);
    free(sub);
}

enum fleet_err
yp_sub_set_filter(struct yp_sub *sub, const struct lyd_node *subtree, const char *xpath)
{
    struct worker *w = sub->sess->worker;
    const struct ly_ctx *ctx = sub->sess->dev->type->schemas.ctx;
    struct yp_filter *f;
    char *text = NULL;
    uint64_t h = 0xcbf29ce484222325ull;

    if (!subtree && !xpath) {
        filter_put(w, sub->filter);
        sub->filter = NULL;
        return FLEET_OK;
    }
    /* The key: the context, the kind, and the filter's text. */
    h = fnv1a(h, &ctx, sizeof ctx);
    if (xpath) {
        h = fnv1a(h, "x", 1);
        h = fnv1a(h, xpath, strlen(xpath));
    } else {
        if (lyd_print_mem(&text, subtree, LYD_XML, LYD_PRINT_SHRINK | LYD_PRINT_WITHSIBLINGS)) {
            return FLEET_ERR_NOMEM;
        }
        h = fnv1a(h, "s", 1);
        h = fnv1a(h, text ? text : "", text ? strlen(text) : 0);
        free(text);
    }
    for (f = w->yp_filters; f; f = f->next) {
        if (f->hash == h && f->ctx == ctx && !f->xpath == !xpath &&
            (xpath ? !strcmp(f->xpath, xpath)
                   : lyd_compare_siblings(f->subtree, subtree, LYD_COMPARE_FULL_RECURSION) == LY_SUCCESS)) {
            break;
        }
    }
    if (!f) {
        if (!(f = calloc(1, sizeof *f))) {
            return FLEET_ERR_NOMEM;
        }
        if ((xpath && !(f->xpath = strdup(xpath))) ||
            (subtree && lyd_dup_siblings(subtree, NULL, LYD_DUP_RECURSIVE, &f->subtree))) {
            free(f->xpath);
            free(f);
            return FLEET_ERR_NOMEM;
        }
        f->ctx = ctx;
        f->hash = h;
        f->next = w->yp_filters;
        w->yp_filters = f;
    }
    f->refs++;
    filter_put(w, sub->filter);
    sub->filter = f;
    return FLEET_OK;
}

void
yp_send_state(struct yp_sub *sub, const char *what, const char *body, uint64_t event_ms)
{
    struct session *s = sub->sess;
    struct sbuf b = {0};
    char time_text[40];

    if (s->state != SESS_ACTIVE) {
        return;
    }
    notif_format_time(event_ms, time_text, sizeof time_text);
    sbuf_printf(&b,
                "<notification xmlns=\"" YP_NOTIF_NS "\"><eventTime>%s</eventTime><%s xmlns=\"" YP_SN_NS
                "\"><id>%" PRIu32 "</id>%s</%s></notification>",
                time_text, what, sub->id, body ? body : "", what);
    if (!b.failed) {
        sess_send(s, b.buf, b.len);
        s->out_notifications++;
        s->dev->stats.out_notifications++;
    }
    sbuf_free(&b);
}

/* "<reason>" with an identity "module:name" of either module, its prefix declared. */
static void
reason_xml(const char *identity, char *buf, size_t len)
{
    const char *colon = strchr(identity, ':');
    const char *name = colon ? colon + 1 : identity;
    int yp = colon && !strncmp(identity, "ietf-yang-push", (size_t)(colon - identity));

    snprintf(buf, len, "<reason xmlns:%s=\"%s\">%s:%s</reason>", yp ? "yp" : "sn", yp ? YP_YP_NS : YP_SN_NS,
             yp ? "yp" : "sn", name);
}

int
yp_try_resume(struct yp_sub *sub, uint64_t now_ms)
{
    if (sub->state != YP_STATE_SUSPENDED) {
        return 1;
    }
    if (outq_pending(&sub->sess->out) >= YP_RESUME_BYTES) {
        return 0;
    }
    sub->state = YP_STATE_ACTIVE;
    yp_send_state(sub, "subscription-resumed", NULL, now_ms);
    return 1;
}

int
yp_send(struct yp_sub *sub, const char *xml, size_t len)
{
    struct session *s = sub->sess;

    if (s->state != SESS_ACTIVE || sub->state == YP_STATE_SUSPENDED) {
        return -1;
    }
    if (outq_pending(&s->out) + len > YP_SUSPEND_BYTES) {
        /* RFC 8639 2.7.5: a subscriber that cannot keep up is suspended, not buffered without bound. */
        char reason[200];
        sub->state = YP_STATE_SUSPENDED;
        sub->counts.suspensions++;
        reason_xml("ietf-subscribed-notifications:insufficient-resources", reason, sizeof reason);
        yp_send_state(sub, "subscription-suspended", reason, devview_now_ms(s->worker->fleet));
        return -1;
    }
    sess_send(s, xml, len);
    s->out_notifications++;
    s->dev->stats.out_notifications++;
    return 0;
}

enum fleet_err
yp_view(struct yp_sub *sub, struct lyd_node **tree)
{
    struct session *s = sub->sess;
    struct rpc_call call = {.sess = s, .dev = s->dev, .fleet = s->worker->fleet};
    struct lyd_node *full = NULL;
    const struct lyd_node *src;
    enum fleet_err rc = FLEET_OK;

    *tree = NULL;
    /* The same trees get reads: running, or running merged with the device's state at this instant. */
    if (sub->target == YP_TARGET_OPERATIONAL) {
        if (ops_operational_view(&call, &full)) {
            return FLEET_ERR_NOMEM;
        }
        src = full;
    } else {
        src = ops_read_ds(&call, DS_RUNNING);
    }
    if (!sub->filter) {
        if (full) {
            *tree = full;
            return FLEET_OK;
        }
        if (src && lyd_dup_siblings(src, NULL, LYD_DUP_RECURSIVE | LYD_DUP_WITH_FLAGS, tree)) {
            rc = FLEET_ERR_NOMEM;
        }
    } else if (sub->filter->xpath) {
        rc = filter_xpath(src, sub->filter->xpath, tree);
    } else {
        rc = filter_subtree(src, sub->filter->subtree, tree);
    }
    lyd_free_all(full);
    return rc;
}

struct yp_sub *
yp_find(struct device *dev, uint32_t id)
{
    for (struct session *s = dev->sessions; s; s = s->dev_next) {
        for (struct yp_sub *sub = s->subs; sub; sub = sub->next) {
            if (sub->id == id) {
                return sub;
            }
        }
    }
    return NULL;
}

/* Stop whatever drives @p sub and take it off its session's list. */
static void
unhook(struct yp_sub *sub)
{
    struct yp_sub **pp;

    wheel_remove(sub->sess->worker->wheel, &sub->tick);
    yp_rows_ended(sub); /* every end (delete, kill, session closed, terminated) keeps its report row */
    if (sub->update == YP_UPDATE_ON_CHANGE) {
        yp_onchange_stop(sub);
    } else if (sub->target == YP_TARGET_STREAM) {
        yp_stream_stop(sub);
    }
    for (pp = &sub->sess->subs; *pp && *pp != sub; pp = &(*pp)->next) {
    }
    if (*pp) {
        *pp = sub->next;
    }
}

void
yp_end(struct yp_sub *sub, const char *reason)
{
    if (reason) {
        char xml[200];
        reason_xml(reason, xml, sizeof xml);
        yp_send_state(sub, "subscription-terminated", xml, devview_now_ms(sub->sess->worker->fleet));
    }
    unhook(sub);
    yp_sub_free(sub);
}

void
yp_session_closed(struct session *s)
{
    while (s->subs) {
        struct yp_sub *sub = s->subs;
        unhook(sub);
        yp_sub_free(sub);
    }
}

void
yp_wheel_due(struct wheel *w, struct wheel_entry *e, void *data)
{
    struct yp_sub *sub = (struct yp_sub *)((char *)e - offsetof(struct yp_sub, tick));

    (void)w;
    (void)data;
    if (sub->update == YP_UPDATE_PERIODIC) {
        yp_periodic_due(sub);
    } else if (sub->update == YP_UPDATE_ON_CHANGE) {
        yp_onchange_due(sub);
    } else if (sub->target == YP_TARGET_STREAM) {
        yp_stream_due(sub);
    }
}

/* The lateness below which @p share of the worker's periodic updates went out, in ms (64: 64 or more). */
static unsigned
late_percentile(const struct worker *w, uint64_t total, double share)
{
    uint64_t seen = 0;

    for (unsigned ms = 0; ms < 65; ms++) {
        seen += w->yp_late_ms[ms];
        if ((double)seen >= share * (double)total) {
            return ms;
        }
    }
    return 64;
}

void
yp_worker_close(struct worker *w)
{
    uint64_t total = 0;

    for (unsigned ms = 0; ms < 65; ms++) {
        total += w->yp_late_ms[ms];
    }
    if (total) {
        /* bench/push_slots.py reads this line: the server's own lateness, without the client's. */
        log_info("worker %u: %" PRIu64 " periodic push-updates since its last establish-subscription, sent "
                 "after their slot: p50 < %u ms, p99 < %u ms, "
                 "p99.9 < %u ms (65: 64 or more)",
                 w->index, total, late_percentile(w, total, 0.5) + 1, late_percentile(w, total, 0.99) + 1,
                 late_percentile(w, total, 0.999) + 1);
    }
    while (w->yp_filters) {
        struct yp_filter *f = w->yp_filters;
        w->yp_filters = f->next;
        lyd_free_all(f->subtree);
        free(f->xpath);
        free(f);
    }
}
