/*
 * Per-subscription rows of the report. A live subscription is read where it lives (its session's list);
 * an ended one is copied into its device's bounded table when it ends. The counts are exactly what
 * yp_send queued, which is what a client can count.
 */
#include "yp_rows.h"

#include <inttypes.h>
#include <stdlib.h>

#include "session.h"

void
yp_rows_ended(const struct yp_sub *sub)
{
    struct device *dev = sub->sess->dev;
    struct yp_ended *e = dev->yp_ended;
    struct yp_counts *sum;

    if (!e && !(e = dev->yp_ended = calloc(1, sizeof *e))) {
        return;
    }
    if (e->count < YP_ENDED_ROWS) {
        e->rows[e->count++] = (struct yp_row){
            .id = sub->id,
            .session = sub->sess->id,
            .target = sub->target,
            .update = sub->update,
            .interval_cs = sub->update == YP_UPDATE_PERIODIC ? sub->period_cs : sub->dampening_cs,
            .counts = sub->counts,
        };
        return;
    }
    e->summed++;
    sum = &e->sum;
    sum->updates += sub->counts.updates;
    sum->change_updates += sub->counts.change_updates;
    sum->events += sub->counts.events;
    sum->missed_slots += sub->counts.missed_slots;
    sum->suppressed += sub->counts.suppressed;
    sum->suspensions += sub->counts.suspensions;
}

static const char *
kind_name(uint8_t update)
{
    switch (update) {
    case YP_UPDATE_PERIODIC:
        return "periodic";
    case YP_UPDATE_ON_CHANGE:
        return "on-change";
    default:
        return "stream";
    }
}

static const char *
target_name(uint8_t target)
{
    switch (target) {
    case YP_TARGET_RUNNING:
        return "ietf-datastores:running";
    case YP_TARGET_OPERATIONAL:
        return "ietf-datastores:operational";
    default:
        return "NETCONF";
    }
}

static void
counts_json(struct sbuf *b, const struct yp_counts *c)
{
    sbuf_printf(b,
                "\"updates\":%" PRIu64 ",\"change_updates\":%" PRIu64 ",\"events\":%" PRIu64
                ",\"suppressed\":%" PRIu64 ",\"missed_slots\":%" PRIu64 ",\"suspensions\":%" PRIu32,
                c->updates, c->change_updates, c->events, c->suppressed, c->missed_slots, c->suspensions);
}

static void
row_json(struct sbuf *b, const struct yp_row *r, int ended, int first)
{
    sbuf_printf(b, "%s{\"id\":%" PRIu32 ",\"session\":%" PRIu32 ",\"kind\":\"%s\",\"target\":\"%s\",",
                first ? "" : ",", r->id, r->session, kind_name(r->update), target_name(r->target));
    if (r->update == YP_UPDATE_PERIODIC) {
        sbuf_printf(b, "\"period_cs\":%" PRIu32 ",", r->interval_cs);
    } else if (r->update == YP_UPDATE_ON_CHANGE) {
        sbuf_printf(b, "\"dampening_cs\":%" PRIu32 ",", r->interval_cs);
    }
    counts_json(b, &r->counts);
    sbuf_adds(b, ended ? ",\"ended\":true}" : "}");
}

void
yp_rows_json(const struct device *dev, struct sbuf *b)
{
    const struct yp_ended *e = dev->yp_ended;
    int first = 1;

    sbuf_adds(b, "\"subscriptions\":[");
    for (const struct session *s = dev->sessions; s; s = s->dev_next) {
        for (const struct yp_sub *sub = s->subs; sub; sub = sub->next) {
            struct yp_row r = {
                .id = sub->id,
                .session = s->id,
                .target = sub->target,
                .update = sub->update,
                .interval_cs = sub->update == YP_UPDATE_PERIODIC ? sub->period_cs : sub->dampening_cs,
                .counts = sub->counts,
            };
            row_json(b, &r, 0, first);
            first = 0;
        }
    }
    for (uint32_t i = 0; e && i < e->count; i++) {
        row_json(b, &e->rows[i], 1, first);
        first = 0;
    }
    sbuf_printf(b, "],\"subscriptions_ended_summed\":{\"subscriptions\":%" PRIu32 ",", e ? e->summed : 0);
    counts_json(b, e ? &e->sum : &(struct yp_counts){0});
    sbuf_adds(b, "}");
}

static void
sum_counts(uint64_t *sums, const struct yp_counts *c)
{
    sums[YP_SUM_UPDATES] += c->updates;
    sums[YP_SUM_CHANGE_UPDATES] += c->change_updates;
    sums[YP_SUM_EVENTS] += c->events;
    sums[YP_SUM_MISSED_SLOTS] += c->missed_slots;
    sums[YP_SUM_SUSPENSIONS] += c->suspensions;
}

void
yp_rows_sum(const struct device *dev, uint64_t *sums)
{
    const struct yp_ended *e = dev->yp_ended;

    for (const struct session *s = dev->sessions; s; s = s->dev_next) {
        for (const struct yp_sub *sub = s->subs; sub; sub = sub->next) {
            sums[sub->update == YP_UPDATE_PERIODIC    ? YP_SUM_ACTIVE_PERIODIC
                 : sub->update == YP_UPDATE_ON_CHANGE ? YP_SUM_ACTIVE_ON_CHANGE
                                                      : YP_SUM_ACTIVE_STREAM]++;
            sum_counts(sums, &sub->counts);
        }
    }
    for (uint32_t i = 0; e && i < e->count; i++) {
        sum_counts(sums, &e->rows[i].counts);
    }
    if (e) {
        sum_counts(sums, &e->sum);
    }
}

void
yp_rows_free(struct yp_ended *ended)
{
    free(ended);
}
