/*
 * Subscriptions to the NETCONF event stream (RFC 8639 over NETCONF, RFC 8640). A stream subscription is
 * a tap on its device's stream (notify/stream.c): it gets every event the RFC 5277 subscribers get, in
 * the same order, filtered by its own subtree or XPath filter, and queues what passes through yp_send, so
 * suspension (insufficient-resources) applies to it as to a push. Its counts land in its own row
 * (events, suppressed) and in the device's netconf ledger row of the taps, so that for the device
 * emitted = sent + send_failures + dropped + suppressed holds with these subscribers too.
 *
 * Replay (the feature replay) reads the device's replay log; a start older than what the log holds is
 * served from the log's start and answered with replay-start-time-revision. stop-time ends the
 * subscription with subscription-completed (RFC 8639 2.7.4, not -terminated): at the first event at or
 * after it, or when its entry on the worker's wheel fires (yp_stream_due), or right after the replay when
 * it is already past. Like the others, a stream subscription holds no timer of its own.
 */
#include <string.h>

#include "devview.h"
#include "ledger.h"
#include "session.h"
#include "stream.h"
#include "yp.h"
#include "yp_rows.h"

/* The only stream a device has (RFC 8639 4.2: NETCONF is the default stream). */
#define YP_STREAM_NETCONF "NETCONF"

struct edit_err *
yp_stream_name_check(const char *stream)
{
    if (stream && strcmp(stream, YP_STREAM_NETCONF)) {
        return edit_err_operation_failed(
            EDIT_ERR_APP, "ietf-subscribed-notifications:stream-unavailable", NULL,
            "Stream \"%s\" does not exist; this device has the NETCONF stream.", stream);
    }
    return NULL;
}

struct edit_err *
yp_stream_check(struct yp_sub *sub)
{
    struct device *dev = sub->sess->dev;
    uint64_t now_ms = devview_now_ms(dev->worker->fleet);

    sub->replay_from_ms = 0;
    if (sub->replay) {
        uint64_t since_ms = stream_log_since_ms(dev, now_ms);
        if (sub->stop_ms && sub->stop_ms < sub->replay_start_ms) {
            return edit_err_invalid_value(EDIT_ERR_APP, NULL, "stop-time is earlier than replay-start-time.");
        }
        if (sub->replay_start_ms > now_ms) {
            return edit_err_invalid_value(EDIT_ERR_APP, NULL, "replay-start-time is in the future.");
        }
        if (sub->replay_start_ms < since_ms) {
            sub->replay_from_ms = since_ms; /* the log holds nothing older: the replay starts there */
        }
    } else if (sub->stop_ms && sub->stop_ms <= now_ms) {
        /* Without a replay, nothing could be sent before a stop-time in the past. */
        return edit_err_invalid_value(EDIT_ERR_APP, NULL,
                                      "stop-time is in the past and no replay-start-time "
                                      "was given.");
    }
    return NULL;
}

/* stop-time reached: subscription-completed (RFC 8639 2.7.4; not -terminated), then the subscription ends
 * (freed: do not touch it after). */
static void
complete(struct yp_sub *sub, uint64_t event_ms)
{
    yp_send_state(sub, "subscription-completed", NULL, event_ms);
    yp_end(sub, NULL);
}

void
yp_stream_due(struct yp_sub *sub)
{
    complete(sub, sub->stop_ms);
}

/* stop-time on the worker's wheel, so that subscription-completed comes at it even when no event does;
 * an event at or after it completes the subscription first when the clocks disagree by a little. */
static void
schedule_stop(struct yp_sub *sub, uint64_t now_ms)
{
    struct worker *w = sub->sess->worker;

    if (sub->stop_ms && w->wheel) {
        uint64_t wait_ms = sub->stop_ms > now_ms ? sub->stop_ms - now_ms : 0;
        wheel_add(w->wheel, &sub->tick, loop_clock_monotonic() + wait_ms * 1000u);
    }
}

/* The stream's tap: one live event. */
static void
offer(void *owner, struct stream_event *ev)
{
    struct yp_sub *sub = owner;
    struct notif_counts *row = stream_tap_counts(sub->sess->dev);
    const struct yp_filter *f = sub->filter;

    if (sub->sess->state != SESS_ACTIVE) {
        return; /* closing: it ends with its session */
    }
    if (sub->stop_ms && ev->event_ms >= sub->stop_ms) {
        complete(sub, ev->event_ms);
        return;
    }
    if (f && !stream_event_passes(ev, f->subtree, f->xpath)) {
        sub->counts.suppressed++;
        row->suppressed++;
        return;
    }
    ledger_queue(&row->ledger);
    /* A suspended subscription resumes at the first event after its session drained. */
    if (yp_try_resume(sub, ev->event_ms) && !yp_send(sub, ev->xml, ev->len)) {
        sub->counts.events++;
        ledger_note_sent(&row->ledger);
    } else if (sub->state == YP_STATE_SUSPENDED) {
        ledger_note_dropped(&row->ledger); /* a slow reader: not queued while suspended */
    } else {
        ledger_note_failed(&row->ledger);
    }
}

/* What a replay needs of each logged event. */
struct replay_ctx {
    struct yp_sub *sub;       /* the replaying subscription */
    const struct device *dev; /* its device (parses the events) */
};

/* One logged event of a replay: filtered like a live one; counted in the subscription's events (what it
 * queued) but not in the device's ledger, which counted it when it was emitted. */
static void
replay_one(void *arg, const char *xml, size_t len, uint64_t event_ms)
{
    struct replay_ctx *ctx = arg;
    struct yp_sub *sub = ctx->sub;
    const struct yp_filter *f = sub->filter;
    struct stream_event ev = {.xml = xml, .len = len, .event_ms = event_ms, .dev = ctx->dev};
    int passes = !f || stream_event_passes(&ev, f->subtree, f->xpath);

    if (passes && !yp_send(sub, xml, len)) {
        sub->counts.events++;
    }
    lyd_free_all(ev.tree);
    lyd_free_all(ev.envelope);
}

void
yp_stream_start(struct yp_sub *sub)
{
    struct device *dev = sub->sess->dev;
    uint64_t now_ms = devview_now_ms(dev->worker->fleet);

    if (sub->replay) {
        struct replay_ctx ctx = {.sub = sub, .dev = dev};
        /* The log before the stream: nothing is sent twice or lost, both run on the device's worker. */
        stream_log_each(dev, sub->replay_from_ms ? sub->replay_from_ms : sub->replay_start_ms, sub->stop_ms,
                        replay_one, &ctx);
        yp_send_state(sub, "replay-completed", NULL, now_ms);
        if (sub->stop_ms && sub->stop_ms <= now_ms) {
            complete(sub, now_ms);
            return;
        }
    }
    if (stream_tap_add(dev, offer, sub)) {
        yp_end(sub, "ietf-subscribed-notifications:insufficient-resources");
        return;
    }
    schedule_stop(sub, now_ms);
}

void
yp_stream_stop(struct yp_sub *sub)
{
    /* yp_sub.c calls this once, when the subscription ends however it ends (and keeps its report row). */
    stream_tap_remove(sub->sess->dev, sub);
}
