/*
 * Pacing, fan-out, replay and counts of a device's notifications. The
 * plan (a notification file) and the rate are the fleet's; the state here is
 * the device's and lives on its worker. A tick computes how many sends are
 * due from the origin with integer arithmetic, sends them (at most
 * STREAM_MAX_BURST, the rest next time), and re-arms for the next due tick;
 * a device that fell more than STREAM_MAX_LAG_US behind gives the missed
 * sends up and counts them as behind rather than bursting forever.
 */
#include "stream.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "device.h"
#include "device_ctl.h"
#include "devview.h"
#include "filter.h"
#include "notif_file.h"
#include "push_rate.h"
#include "sbuf.h"
#include "session.h"

#define NOTIF_NS "urn:ietf:params:xml:ns:netconf:notification:1.0"

static void on_tick(struct loop *loop, struct loop_timer *timer);

/* Salt of the streams' arrival draws (Poisson), apart from the other push channels'. */
#define STREAM_SALT_ARRIVALS 0x57a1u

/* The ledger's series of every subscriber (one per process, as the ledger's sub-windows are). */
static uint16_t stream_series;

void
stream_ledger_init(void)
{
    stream_series = ledger_series_add(LEDGER_NETCONF, "subscribers");
}

/* 1 while the control API's notification-rate 0 holds the device's stream. */
static int
device_paused(const struct device *dev)
{
    return dev->ctl && dev->ctl->rate[DEVCTL_RATE_NOTIF] &&
           rate_profile_is_zero(dev->ctl->rate[DEVCTL_RATE_NOTIF]);
}

/* 1 when a rate paces the device's stream: the control API's override, else its group's (fleet.c makes a
 * rate plan's own rate the group's profile); 0: the plan's own delays (or paused). */
static int
device_rated(const struct device *dev)
{
    return !rate_profile_is_zero(
        push_rate_profile(dev, DEVCTL_RATE_NOTIF, &dev->group->cfg.notification_rate));
}

/* Schedule the stream from @p now_us by the profile in force, the first send at once. */
static void
start_arrivals(struct notif_stream *st, const struct device *dev, monotime_us now_us)
{
    const struct notif_plan *plan = dev->group->notif_plan;

    push_rate_start(&st->arrivals, dev, DEVCTL_RATE_NOTIF, &dev->group->cfg.notification_rate,
                    plan && plan->kind == NOTIF_PLAN_RATE ? plan->burst : 1, STREAM_SALT_ARRIVALS, 1, now_us);
}

/* Which of the plan's notifications the send with sequence number @p seq carries. */
static uint32_t
pick_item(const struct device_group *g, struct notif_stream *st, uint64_t seq)
{
    const struct notif_plan *p = g->notif_plan;

    if (p->kind == NOTIF_PLAN_ODL) {
        /* File order, each entry its number of times. */
        while (st->item < p->item_count && !st->item_left) {
            if (++st->item < p->item_count) {
                st->item_left = p->items[st->item].times;
            }
        }
        if (st->item >= p->item_count) {
            return UINT32_MAX;
        }
        st->item_left--;
        return st->item;
    }
    return g->notif_mix[(seq - 1) % g->notif_mix_len];
}

/*
 * Keep the last sends for replay; a slot's buffer is reused, so a busy stream does not malloc per send.
 * Every slot grows to the largest text the stream has logged, not only to its own largest: the ring
 * reaches its final size within one turn after the stream's largest kind of notification first
 * appears, instead of whenever each slot happens to hold one (memory that rose for a long time).
 */
static void
log_keep(struct notif_stream *st, const char *xml, size_t len, uint64_t event_ms)
{
    uint32_t slot;

    if (!st->log_cap) {
        return;
    }
    if (st->log_count == st->log_cap) {
        slot = st->log_head;
        st->log_head = (st->log_head + 1) % st->log_cap;
        /* The oldest event leaves the ring: a replay can reach back to the next one only. */
        st->log_since_ms = st->log_ms[st->log_head];
    } else {
        slot = (st->log_head + st->log_count) % st->log_cap;
        st->log_count++;
    }
    if (len + 1 > st->log_slot_bytes) {
        st->log_slot_bytes = (uint32_t)(len + 1);
    }
    if (st->log_size[slot] < st->log_slot_bytes) {
        char *grown = realloc(st->log[slot], st->log_slot_bytes);
        if (!grown) {
            st->log_size[slot] = 0;
            free(st->log[slot]);
            st->log[slot] = NULL; /* a hole in the replay, not a crash */
            st->log_ms[slot] = event_ms;
            return;
        }
        st->log[slot] = grown;
        st->log_size[slot] = st->log_slot_bytes;
    }
    memcpy(st->log[slot], xml, len);
    st->log[slot][len] = '\0';
    st->log_ms[slot] = event_ms;
}

/* Resuming after a pause: the origin moves so that no burst makes up for the time paused. */
static void
resume_origin(struct notif_stream *st, const struct device *dev, monotime_us now)
{
    if (device_rated(dev)) {
        rate_arrivals_resume(&st->arrivals, now);
    } else if (st->item_due_us < now) {
        st->item_due_us = now;
    }
}

/* The event's content as a tree: one parse per event, whatever the number of subscribers with a filter. */
static const struct lyd_node *
event_tree(struct stream_event *ev)
{
    struct ly_in *in = NULL;

    if (!ev->parsed) {
        ev->parsed = 1;
        if (!ly_in_new_memory(ev->xml, &in)) {
            lyd_parse_op(ev->dev->type->schemas.ctx, NULL, in, LYD_XML, LYD_TYPE_NOTIF_NETCONF, &ev->envelope,
                         &ev->tree);
            ly_in_free(in, 0);
        }
    }
    return ev->tree;
}

int
stream_event_passes(struct stream_event *ev, const struct lyd_node *subtree, const char *xpath)
{
    const struct lyd_node *tree;
    struct lyd_node *result = NULL;
    enum fleet_err rc;

    if (!subtree && !xpath) {
        return 1;
    }
    if (!(tree = event_tree(ev))) {
        return 0;
    }
    rc = xpath ? filter_xpath(tree, xpath, &result) : filter_subtree(tree, subtree, &result);
    lyd_free_all(result);
    return !rc && result;
}

/* Offer @p ev to the taps in the order they joined. A tap may remove itself meanwhile: it is only marked,
 * and the array is compacted once every tap had its turn. */
static void
offer_taps(struct notif_stream *st, struct stream_event *ev)
{
    uint32_t kept = 0;

    st->offering = 1;
    for (uint32_t i = 0; i < st->tap_count; i++) {
        if (st->taps[i].offer) {
            st->taps[i].offer(st->taps[i].owner, ev);
        }
    }
    st->offering = 0;
    for (uint32_t i = 0; i < st->tap_count; i++) {
        if (st->taps[i].offer) {
            st->taps[kept++] = st->taps[i];
        }
    }
    st->tap_count = kept;
}

static void
send_complete(struct session *s, const char *what, uint64_t now_ms)
{
    char time_text[40], xml[256];
    int n;

    notif_format_time(now_ms, time_text, sizeof time_text);
    n = snprintf(xml, sizeof xml,
                 "<notification xmlns=\"" NOTIF_NS "\"><eventTime>%s</eventTime>"
                 "<%s xmlns=\"urn:ietf:params:xml:ns:netmod:notification\"/></notification>",
                 time_text, what);
    sess_send(s, xml, (size_t)n);
}

void
stream_emit(struct device *dev, const char *xml, size_t len, uint64_t event_ms)
{
    struct stream_event ev = {.xml = xml, .len = len, .event_ms = event_ms, .dev = dev};

    if (dev->stream) {
        dev->stream->generated++;
        log_keep(dev->stream, xml, len, event_ms);
    }
    for (struct session *s = dev->sessions; s; s = s->dev_next) {
        struct notif_sub *sub = s->sub;
        if (!sub || sub->done || s->state != SESS_ACTIVE) {
            continue;
        }
        if (sub->stop_ms && event_ms >= sub->stop_ms) {
            sub->done = 1;
            send_complete(s, "notificationComplete", event_ms);
            continue;
        }
        if (!stream_event_passes(&ev, sub->filter, sub->xpath)) {
            sub->counts.suppressed++;
            continue;
        }
        ledger_queue(&sub->counts.ledger);
        if (outq_pending(&s->out) + len > STREAM_SUBSCRIBER_QUEUE_MAX_BYTES) {
            ledger_note_dropped(&sub->counts.ledger); /* a slow reader: its queue stays bounded */
        } else {
            sess_send(s, xml, len);
            if (s->state >= SESS_CLOSING && !outq_pending(&s->out)) {
                ledger_note_failed(&sub->counts.ledger);
            } else {
                ledger_note_sent(&sub->counts.ledger);
            }
        }
    }
    if (dev->stream && dev->stream->tap_count) {
        offer_taps(dev->stream, &ev);
    }
    lyd_free_all(ev.tree);
    lyd_free_all(ev.envelope);
}

/* @p n notifications of the plan not sent before the run window: counted on every live subscriber's row. */
static void
suppress_pre_window(struct device *dev, uint64_t n)
{
    for (struct session *s = dev->sessions; n && s; s = s->dev_next) {
        if (s->sub && !s->sub->done && s->state == SESS_ACTIVE) {
            ledger_suppress(&s->sub->counts.ledger, n);
        }
    }
}

/* Build and emit one notification of the plan. @return 0, or -1 when the plan is exhausted. */
static int
emit_one(struct notif_stream *st, struct sbuf *b, uint64_t now_ms)
{
    struct device *dev = st->dev;
    const struct profile *p = dev->type->profile;
    uint64_t seq = st->seq + 1;
    uint32_t item = pick_item(dev->group, st, seq);
    struct notif_vars v;

    if (item == UINT32_MAX) {
        return -1;
    }
    v.device = dev->index;
    v.seq = seq;
    v.time_ms = now_ms;
    v.ifindex = p->if_count ? (uint32_t)((seq - 1) % p->if_count) + 1 : 0;
    v.ifname = p->if_count ? p->ifs[v.ifindex - 1].name : "";
    b->len = 0;
    notif_expand(&dev->group->notif_plan->items[item], &v, b);
    if (b->failed) {
        return 0;
    }
    st->seq = seq;
    stream_emit(dev, b->buf, b->len, now_ms);
    return 0;
}

int
stream_has_subscribers(const struct device *dev)
{
    for (const struct session *s = dev->sessions; s; s = s->dev_next) {
        if (s->sub && !s->sub->done) {
            return 1;
        }
    }
    return dev->stream && dev->stream->tap_count;
}

static void
on_tick(struct loop *loop, struct loop_timer *timer)
{
    struct notif_stream *st = (struct notif_stream *)((char *)timer - offsetof(struct notif_stream, timer));
    struct device *dev = st->dev;
    struct fleet *fleet = dev->worker->fleet;
    const struct notif_plan *plan = dev->group->notif_plan;
    struct sbuf *b = &dev->worker->notif_buf;
    monotime_us now = loop_now_us(loop);
    uint64_t now_ms = devview_now_ms(fleet);
    int rated = device_rated(dev);
    uint32_t sent = 0;
    enum pushwin_phase phase;

    st->running = 0;
    if (!stream_has_subscribers(dev) || device_paused(dev)) {
        return; /* paused until the next subscription (or notification-rate) */
    }
    phase = pushwin_phase_now();
    if (phase == PUSHWIN_AFTER) {
        return; /* the run window ended: nothing more on its own (stream_emit's events still go out) */
    }
    if ((phase == PUSHWIN_BEFORE && !rated) ||
        atomic_load_explicit(&fleet->streams_paused, memory_order_relaxed)) {
        /* Held by SIGUSR2, or an OpenDaylight plan before the run window: nothing is generated (so nothing
         * counts) until the streams resume; the plan then starts from there, without a burst. */
        st->held = 1;
        loop_timer_start(loop, &st->timer, now + STREAM_PAUSE_POLL_US, on_tick);
        st->running = 1;
        return;
    }
    if (st->held) {
        st->held = 0;
        resume_origin(st, dev, now);
    }
    if (phase == PUSHWIN_BEFORE) {
        /* A paced plan before START: each due tick is counted as suppressed for every subscriber, never
         * built, and the plan itself waits (its first notification goes out at START, without a burst). */
        uint64_t due = rate_arrivals_skip_lag(&st->arrivals, now, STREAM_MAX_LAG_US) * st->arrivals.unit;
        for (uint32_t n = 0; n < STREAM_MAX_BURST && st->arrivals.next_us <= now; n++) {
            due += st->arrivals.unit;
            rate_arrivals_take(&st->arrivals);
        }
        suppress_pre_window(dev, due);
        if (st->arrivals.next_us != RATE_NEVER) {
            loop_timer_start(loop, &st->timer, st->arrivals.next_us, on_tick);
            st->running = 1;
        }
        return;
    }
    if (plan->kind == NOTIF_PLAN_RATE && plan->duration_ms &&
        now - st->start_us >= plan->duration_ms * 1000) {
        st->finished = 1;
    }
    /* The worker's streaming budget for this loop pass: the rest waits one pass, so connections and
     * other devices are served between (1,000 overdue devices once held a worker for a second). */
    if (dev->worker->stream_pass_us != now) {
        dev->worker->stream_pass_us = now;
        dev->worker->stream_pass_sent = 0;
    }
    if (dev->worker->stream_pass_sent >= STREAM_WORKER_PASS_BUDGET) {
        /* Just before the devices that sent in this pass (they re-arm at now): first in the next pass. */
        loop_timer_start(loop, &st->timer, now - 1, on_tick);
        st->running = 1;
        return;
    }
    if (rated) {
        uint32_t burst = st->arrivals.unit;
        /* Too far behind: give the missed arrivals up, count their sends, and go on from now. */
        st->behind += rate_arrivals_skip_lag(&st->arrivals, now, STREAM_MAX_LAG_US) * burst;
        while (!st->finished && st->arrivals.next_us <= now && sent < STREAM_MAX_BURST) {
            for (uint32_t i = 0; i < burst && !st->finished; i++) {
                if ((plan->kind == NOTIF_PLAN_RATE && plan->count && st->seq >= plan->count) ||
                    emit_one(st, b, now_ms)) {
                    st->finished = 1;
                }
                sent++;
            }
            rate_arrivals_take(&st->arrivals);
        }
        dev->worker->stream_pass_sent += sent;
        /* A profile at 0 from here on arms nothing: the stream idles until a notification-rate action. */
        if (!st->finished && st->arrivals.next_us != RATE_NEVER) {
            /* Still behind: go to the back of this instant's timers (equal deadlines fire in start order),
             * so devices that are behind take turns instead of the most behind taking every pass. */
            monotime_us next = st->arrivals.next_us;
            loop_timer_start(loop, &st->timer, next > now ? next : now, on_tick);
            st->running = 1;
        }
        return;
    }
    /* OpenDaylight's plan by its own delays: each entry after its delay, its copies back to back. */
    while (!st->finished && now >= st->item_due_us && sent < STREAM_MAX_BURST) {
        if (emit_one(st, b, now_ms)) {
            st->finished = 1;
            break;
        }
        sent++;
        if (!st->item_left) {
            /* the entry is done: the next one starts after its own delay */
            if (st->item + 1 < plan->item_count) {
                st->item++;
                st->item_left = plan->items[st->item].times;
                st->item_due_us += plan->items[st->item].delay_ms * 1000;
            } else {
                st->finished = 1;
            }
        }
    }
    dev->worker->stream_pass_sent += sent;
    if (!st->finished) {
        loop_timer_start(loop, &st->timer, st->item_due_us > now ? st->item_due_us : now + 1000, on_tick);
        st->running = 1;
    }
}

/* A subscriber of either kind arrived: make the device's stream at the first, and run it unless it is
 * running, finished or held. @return the stream, or NULL when out of memory. */
static struct notif_stream *
stream_attach(struct device *dev)
{
    struct fleet *fleet = dev->worker->fleet;
    struct notif_stream *st = dev->stream;
    struct loop *loop = dev->worker->loop;

    if (!st) {
        if (!(st = dev->stream = calloc(1, sizeof *st))) {
            return NULL;
        }
        st->dev = dev;
        st->tap_counts.ledger.series = stream_series;
        st->log_since_ms = devview_now_ms(fleet);
        loop_timer_init(&st->timer);
        st->log_cap = fleet->cfg.replay_log;
        if (st->log_cap && (!(st->log = calloc(st->log_cap, sizeof *st->log)) ||
                            !(st->log_ms = calloc(st->log_cap, sizeof *st->log_ms)) ||
                            !(st->log_size = calloc(st->log_cap, sizeof *st->log_size)))) {
            free(st->log);
            free(st->log_ms);
            st->log = NULL;
            st->log_ms = NULL;
            st->log_cap = 0; /* no replay for this device rather than no stream */
        }
        st->start_us = loop_now_us(loop);
        start_arrivals(st, dev, st->start_us);
        if (dev->group->notif_plan) {
            st->item_left = dev->group->notif_plan->items[0].times;
            st->item_due_us = st->start_us + dev->group->notif_plan->items[0].delay_ms * 1000;
        } else {
            st->finished = 1;
        }
    }
    if (!st->running && !st->finished && dev->group->notif_plan && !device_paused(dev)) {
        if (st->arrivals.count || st->seq) {
            resume_origin(st, dev, loop_now_us(loop));
        }
        loop_timer_start(loop, &st->timer, loop_now_us(loop), on_tick);
        st->running = 1;
    }
    return st;
}

void
stream_subscribed(struct session *s)
{
    s->sub->counts.ledger.series = stream_series;
    stream_attach(s->dev);
}

enum fleet_err
stream_tap_add(struct device *dev, stream_tap_fn offer, void *owner)
{
    struct notif_stream *st = stream_attach(dev);

    if (!st) {
        return FLEET_ERR_NOMEM;
    }
    if (st->tap_count == st->tap_cap) {
        uint32_t cap = st->tap_cap ? st->tap_cap * 2 : 2;
        struct stream_tap *grown = realloc(st->taps, cap * sizeof *grown);
        if (!grown) {
            return FLEET_ERR_NOMEM; /* a stream started for nobody pauses at its first tick */
        }
        st->taps = grown;
        st->tap_cap = cap;
    }
    st->taps[st->tap_count++] = (struct stream_tap){.offer = offer, .owner = owner};
    return FLEET_OK;
}

void
stream_tap_remove(struct device *dev, void *owner)
{
    struct notif_stream *st = dev->stream;

    for (uint32_t i = 0; st && i < st->tap_count; i++) {
        if (st->taps[i].owner != owner || !st->taps[i].offer) {
            continue;
        }
        if (st->offering) {
            st->taps[i].offer = NULL; /* offer_taps compacts after the event */
        } else {
            memmove(&st->taps[i], &st->taps[i + 1], (st->tap_count - i - 1) * sizeof *st->taps);
            st->tap_count--;
        }
        return;
    }
}

struct notif_counts *
stream_tap_counts(struct device *dev)
{
    return dev->stream ? &dev->stream->tap_counts : NULL;
}

void
stream_rate_changed(struct device *dev)
{
    struct notif_stream *st = dev->stream;
    struct loop *loop = dev->worker->loop;
    monotime_us now = loop_now_us(loop);

    if (!st) {
        return; /* no subscription yet: the first one starts at the rate in force */
    }
    if (st->running) {
        loop_timer_stop(loop, &st->timer);
        st->running = 0;
    }
    if (device_rated(dev)) {
        /* The new profile from now on: the first send now, nothing made up for the time at the old rate. */
        start_arrivals(st, dev, now);
    } else if (st->item_due_us < now) {
        st->item_due_us = now; /* the plan's own delays again, from now */
    }
    if (!st->finished && dev->group->notif_plan && !device_paused(dev) && stream_has_subscribers(dev)) {
        loop_timer_start(loop, &st->timer, now, on_tick);
        st->running = 1;
    }
}

void
stream_unsubscribed(struct session *s)
{
    struct notif_sub *sub = s->sub;
    /* A subscriber's device has its stream (made at the subscription; only out of memory leaves none). */
    struct notif_counts *c = s->dev->stream ? &s->dev->stream->closed : NULL;

    if (!sub) {
        return;
    }
    if (s->dev->stream && s->dev->stream->ended_count < STREAM_ENDED_ROWS) {
        struct notif_ended *row = &s->dev->stream->ended[s->dev->stream->ended_count++];
        socklen_t len = sizeof row->peer;

        *row = (struct notif_ended){.session = s->id, .counts = sub->counts};
        getpeername(s->fd, (struct sockaddr *)&row->peer, &len);
    }
    if (c) {
        ledger_add(&c->ledger, &sub->counts.ledger);
        c->suppressed += sub->counts.suppressed;
    }
    lyd_free_all(sub->filter);
    free(sub->xpath);
    free(sub);
    s->sub = NULL;
}

void
stream_log_each(const struct device *dev, uint64_t start_ms, uint64_t stop_ms, stream_log_fn fn, void *arg)
{
    const struct notif_stream *st = dev->stream;

    for (uint32_t i = 0; st && i < st->log_count; i++) {
        uint32_t slot = (st->log_head + i) % st->log_cap;
        if (!st->log[slot] || st->log_ms[slot] < start_ms || (stop_ms && st->log_ms[slot] >= stop_ms)) {
            continue;
        }
        fn(arg, st->log[slot], strlen(st->log[slot]), st->log_ms[slot]);
    }
}

uint64_t
stream_log_since_ms(const struct device *dev, uint64_t now_ms)
{
    const struct notif_stream *st = dev->stream;

    return st && st->log_cap ? st->log_since_ms : now_ms;
}

static void
replay_one(void *arg, const char *xml, size_t len, uint64_t event_ms)
{
    (void)event_ms;
    sess_send(arg, xml, len);
}

void
stream_replay(struct session *s, uint64_t start_ms, uint64_t stop_ms)
{
    uint64_t now_ms = devview_now_ms(s->dev->worker->fleet);

    stream_log_each(s->dev, start_ms, stop_ms, replay_one, s);
    send_complete(s, "replayComplete", now_ms);
    if (stop_ms && stop_ms <= now_ms) {
        s->sub->done = 1;
        send_complete(s, "notificationComplete", now_ms);
    }
}

void
stream_free(struct notif_stream *st, struct loop *loop)
{
    if (!st) {
        return;
    }
    if (loop) {
        loop_timer_stop(loop, &st->timer);
    }
    for (uint32_t i = 0; i < st->log_cap; i++) {
        free(st->log[i]);
    }
    free(st->log);
    free(st->log_ms);
    free(st->log_size);
    free(st->taps);
    free(st);
}

void
stream_device_counts(const struct device *dev, struct notif_counts *out)
{
    *out = dev->stream ? dev->stream->closed : (struct notif_counts){0};
    if (dev->stream) {
        ledger_add(&out->ledger, &dev->stream->tap_counts.ledger);
        out->suppressed += dev->stream->tap_counts.suppressed;
    }
    for (const struct session *s = dev->sessions; s; s = s->dev_next) {
        if (s->sub) {
            ledger_add(&out->ledger, &s->sub->counts.ledger);
            out->suppressed += s->sub->counts.suppressed;
        }
    }
}
