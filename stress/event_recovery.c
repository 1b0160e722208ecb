/*
 * The recovery of fleet events; see event_recovery.h. The node table is
 * open addressing on an FNV-1a hash of the node-id, kept under half full;
 * only node-ids events named are in it, so a poll's other nodes cost one
 * failed lookup each and only runs with --events pay even that.
 */
#include "event_recovery.h"

#include <stdlib.h>
#include <string.h>

static uint64_t
hash_id(const char *s)
{
    uint64_t h = 1469598103934665603ull;

    for (; *s; s++) {
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    }
    return h;
}

/* The bucket of @p id, or of the free bucket where it would go. */
static size_t
find_bucket(const struct evr_tracker *tr, const char *id)
{
    size_t mask = tr->bucket_cap - 1;
    size_t i = (size_t)hash_id(id) & mask;

    while (tr->keys[i] && strcmp(tr->keys[i], id)) {
        i = (i + 1) & mask;
    }
    return i;
}

static int
grow_table(struct evr_tracker *tr)
{
    size_t cap = tr->bucket_cap ? tr->bucket_cap * 2 : 1024;
    char **old_keys = tr->keys;
    uint32_t *old_slot = tr->bucket_slot;
    size_t old_cap = tr->bucket_cap;

    tr->keys = calloc(cap, sizeof *tr->keys);
    tr->bucket_slot = calloc(cap, sizeof *tr->bucket_slot);
    if (!tr->keys || !tr->bucket_slot) {
        free(tr->keys);
        free(tr->bucket_slot);
        tr->keys = old_keys;
        tr->bucket_slot = old_slot;
        return -1;
    }
    tr->bucket_cap = cap;
    for (size_t i = 0; i < old_cap; i++) {
        if (old_keys[i]) {
            size_t b = find_bucket(tr, old_keys[i]);
            tr->keys[b] = old_keys[i];
            tr->bucket_slot[b] = old_slot[i];
        }
    }
    free(old_keys);
    free(old_slot);
    return 0;
}

/* The slot of @p id, added when new. @return 0 or -1 out of memory. */
static int
slot_of(struct evr_tracker *tr, const char *id, uint32_t *slot)
{
    size_t b;

    if ((size_t)tr->slot_count * 2 + 2 > tr->bucket_cap && grow_table(tr)) {
        return -1;
    }
    b = find_bucket(tr, id);
    if (tr->keys[b]) {
        *slot = tr->bucket_slot[b];
        return 0;
    }
    if (tr->slot_count == tr->slot_cap) {
        size_t cap = tr->slot_cap ? tr->slot_cap * 2 : 1024;
        uint64_t *more = realloc(tr->connected_poll, cap * sizeof *more);
        if (!more) {
            return -1;
        }
        tr->connected_poll = more;
        tr->slot_cap = cap;
    }
    tr->keys[b] = strdup(id);
    if (!tr->keys[b]) {
        return -1;
    }
    tr->bucket_slot[b] = tr->slot_count;
    tr->connected_poll[tr->slot_count] = 0;
    *slot = tr->slot_count++;
    return 0;
}

void
evr_init(struct evr_tracker *tr, int64_t start_wall_ms)
{
    memset(tr, 0, sizeof *tr);
    tr->start_wall_ms = start_wall_ms;
}

void
evr_free(struct evr_tracker *tr)
{
    for (size_t i = 0; i < tr->bucket_cap; i++) {
        free(tr->keys[i]);
    }
    for (size_t i = 0; i < tr->event_count; i++) {
        fev_event_free(&tr->events[i].ev);
        free(tr->events[i].slots);
        free(tr->events[i].lost_bits);
    }
    free(tr->keys);
    free(tr->bucket_slot);
    free(tr->connected_poll);
    free(tr->events);
    memset(tr, 0, sizeof *tr);
}

int
evr_add(struct evr_tracker *tr, struct fev_event *ev)
{
    struct evr_event *e;

    if (tr->event_count && ev->seq <= tr->last_seq) {
        fev_event_free(ev);
        return 0;
    }
    if (tr->event_count == tr->event_cap) {
        size_t cap = tr->event_cap ? tr->event_cap * 2 : 64;
        struct evr_event *more = realloc(tr->events, cap * sizeof *more);
        if (!more) {
            fev_event_free(ev);
            return -1;
        }
        tr->events = more;
        tr->event_cap = cap;
    }
    e = &tr->events[tr->event_count];
    memset(e, 0, sizeof *e);
    e->ev = *ev;
    memset(ev, 0, sizeof *ev);
    tr->event_count++; /* from here on evr_free() frees it */
    tr->last_seq = e->ev.seq;
    e->t_s = (double)(e->ev.time_ms - tr->start_wall_ms) / 1e3;
    e->expect = fev_expect_of(e->ev.action);
    e->state = e->expect == FEV_MARK ? EVR_MARK : EVR_PENDING;
    if (e->state == EVR_MARK) {
        return 1;
    }
    e->slots = calloc(e->ev.node_count ? e->ev.node_count : 1, sizeof *e->slots);
    e->lost_bits = calloc(e->ev.node_count / 8 + 1, 1);
    if (!e->slots || !e->lost_bits) {
        return -1;
    }
    for (size_t i = 0; i < e->ev.node_count; i++) {
        if (slot_of(tr, e->ev.node_ids[i], &e->slots[i])) {
            return -1;
        }
    }
    return 1;
}

void
evr_poll_begin(struct evr_tracker *tr)
{
    tr->poll++;
}

void
evr_on_node(void *user, const char *id, enum topo_status status)
{
    struct evr_tracker *tr = user;
    size_t b;

    if (status != TOPO_CONNECTED || !tr->bucket_cap) {
        return;
    }
    b = find_bucket(tr, id);
    if (tr->keys[b]) {
        tr->connected_poll[tr->bucket_slot[b]] = tr->poll;
    }
}

void
evr_poll_end(struct evr_tracker *tr, double t_s)
{
    for (size_t i = 0; i < tr->event_count; i++) {
        struct evr_event *e = &tr->events[i];
        size_t down = 0;

        if (e->state != EVR_PENDING || t_s < e->t_s) {
            continue;
        }
        e->polls++;
        for (size_t n = 0; n < e->ev.node_count; n++) {
            if (tr->connected_poll[e->slots[n]] == tr->poll) {
                continue;
            }
            down++;
            if (!(e->lost_bits[n / 8] & (1u << (n % 8)))) {
                e->lost_bits[n / 8] |= (uint8_t)(1u << (n % 8));
                e->lost++;
            }
        }
        if (!down && (e->expect == FEV_UP || e->lost)) {
            e->state = EVR_HEALED;
            e->healed_s = t_s - e->t_s;
        }
    }
}

void
evr_finish(struct evr_tracker *tr)
{
    for (size_t i = 0; i < tr->event_count; i++) {
        struct evr_event *e = &tr->events[i];
        if (e->state == EVR_PENDING && e->expect == FEV_LOSS && !e->lost) {
            e->state = EVR_NO_LOSS_SEEN;
        }
    }
}

const char *
evr_state_name(enum evr_state state, int final)
{
    switch (state) {
    case EVR_MARK:
        return "mark";
    case EVR_PENDING:
        return final ? "not-healed" : "pending";
    case EVR_HEALED:
        return "healed";
    case EVR_NO_LOSS_SEEN:
        return "no-loss-seen";
    }
    return "?";
}
