/*
 * Periodic push-update (RFC 8641 section 3.1) on the worker's wheel. Slot k of a subscription is at
 * anchor + k x period on the fleet clock; the next slot is always computed from k, never from "now +
 * period", so a late pass never shifts the ones after it. The fleet clock is mapped to the loop's clock
 * when a slot is scheduled (both read then), so the mapping's error does not add up either. eventTime is
 * the slot, not the send time. A slot the worker reaches more than a period late, or one that falls
 * while the subscription is suspended, is skipped and counted (missed_slots).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "devview.h"
#include "notif_file.h"
#include "ops.h"
#include "session.h"
#include "yp.h"

int64_t
yp_slot_at_or_after(uint64_t anchor_ms, uint64_t period_ms, uint64_t now_ms)
{
    if (now_ms <= anchor_ms) {
        return -(int64_t)((anchor_ms - now_ms) / period_ms);
    }
    return (int64_t)((now_ms - anchor_ms + period_ms - 1) / period_ms);
}

static uint64_t
period_ms_of(const struct yp_sub *sub)
{
    return (uint64_t)sub->period_cs * 10u;
}

static uint64_t
slot_ms(const struct yp_sub *sub, int64_t k)
{
    return (uint64_t)((int64_t)sub->anchor_ms + k * (int64_t)period_ms_of(sub));
}

/* Put @p sub on the wheel for its next slot (or its stop-time, when that comes first). */
static void
schedule(struct yp_sub *sub)
{
    struct worker *w = sub->sess->worker;
    uint64_t at_ms = slot_ms(sub, (int64_t)sub->next_slot);
    uint64_t now_ms = devview_now_ms(w->fleet);
    monotime_us now_us = loop_clock_monotonic();

    if (sub->stop_ms && at_ms > sub->stop_ms) {
        at_ms = sub->stop_ms;
    }
    wheel_add(w->wheel, &sub->tick, at_ms > now_ms ? now_us + (at_ms - now_ms) * 1000u : now_us);
}

void
yp_periodic_start(struct yp_sub *sub)
{
    uint64_t now_ms = devview_now_ms(sub->sess->worker->fleet);

    sub->next_slot = (uint64_t)yp_slot_at_or_after(sub->anchor_ms, period_ms_of(sub), now_ms);
    schedule(sub);
}

/* Print @p tree's siblings into @p out (ly_out callback). */
static ssize_t
write_sbuf(void *arg, const void *buf, size_t count)
{
    sbuf_add(arg, buf, count);
    return (ssize_t)count;
}

enum fleet_err
yp_print_update(struct yp_sub *sub, uint64_t event_ms, struct sbuf *out)
{
    struct session *s = sub->sess;
    char time_text[40];
    enum fleet_err rc = FLEET_OK;
    int done = 0;

    notif_format_time(event_ms, time_text, sizeof time_text);
    sbuf_printf(out,
                "<notification xmlns=\"urn:ietf:params:xml:ns:netconf:notification:1.0\"><eventTime>%s"
                "</eventTime><push-update xmlns=\"" YP_YP_NS "\"><id>%" PRIu32 "</id><datastore-contents>",
                time_text, sub->id);
    if (sub->target == YP_TARGET_OPERATIONAL && sub->filter && sub->filter->subtree) {
        /* get's text path: whole state subtrees printed from their text with value slots, no tree. */
        struct rpc_call call = {.sess = s, .dev = s->dev, .fleet = s->worker->fleet, .data = *out};
        done = ops_state_text_print(&call, sub->filter->subtree) ||
               ops_if_stats_text(&call, sub->filter->subtree);
        *out = call.data;
    }
    if (!done) {
        struct lyd_node *tree = NULL;
        struct ly_out *lo = NULL;
        rc = yp_view(sub, &tree);
        if (!rc && tree &&
            (ly_out_new_clb(write_sbuf, out, &lo) ||
             lyd_print_all(lo, tree, LYD_XML, LYD_PRINT_SHRINK | LYD_PRINT_WD_EXPLICIT))) {
            rc = FLEET_ERR_NOMEM;
        }
        ly_out_free(lo, NULL, 0);
        lyd_free_all(tree);
    }
    sbuf_adds(out, "</datastore-contents></push-update></notification>");
    if (out->failed && !rc) {
        rc = FLEET_ERR_NOMEM;
    }
    return rc;
}

void
yp_periodic_due(struct yp_sub *sub)
{
    struct worker *w = sub->sess->worker;
    uint64_t now_ms = devview_now_ms(w->fleet);
    uint64_t period_ms = period_ms_of(sub);
    uint64_t at_ms = slot_ms(sub, (int64_t)sub->next_slot);
    struct sbuf *b = &w->notif_buf;

    /* Past the stop-time: the subscription is complete (RFC 8639 2.7.4). */
    if (sub->stop_ms && at_ms > sub->stop_ms) {
        if (now_ms >= sub->stop_ms) {
            yp_send_state(sub, "subscription-completed", NULL, sub->stop_ms);
            yp_end(sub, NULL);
        } else {
            schedule(sub);
        }
        return;
    }
    if (now_ms < at_ms) {
        schedule(sub); /* the clocks' mapping moved: not yet */
        return;
    }
    /* A whole period late: the slots that passed are lost, the latest one is pushed. */
    if (now_ms - at_ms >= period_ms) {
        int64_t latest = yp_slot_at_or_after(sub->anchor_ms, period_ms, now_ms);
        if (slot_ms(sub, latest) > now_ms) {
            latest--;
        }
        sub->counts.missed_slots += (uint64_t)(latest - (int64_t)sub->next_slot);
        sub->next_slot = (uint64_t)latest;
        at_ms = slot_ms(sub, latest);
    }
    if (!yp_try_resume(sub, now_ms)) {
        sub->counts.missed_slots++;
    } else {
        b->len = 0;
        b->failed = 0;
        if (yp_print_update(sub, at_ms, b)) {
            sub->counts.missed_slots++;
        } else if (!yp_send(sub, b->buf, b->len)) {
            uint64_t late_ms = devview_now_ms(w->fleet) - at_ms;
            sub->counts.updates++;
            w->yp_late_ms[late_ms < 64 ? late_ms : 64]++;
        } else {
            sub->counts.missed_slots++; /* it was suspended by this one */
        }
    }
    sub->next_slot++;
    schedule(sub);
}
