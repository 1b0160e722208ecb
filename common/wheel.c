/*
 * A hashed timing wheel of 1 ms slots (wheel.h). Each slot is a circular list with a sentinel, so an entry
 * unlinks itself in O(1) without knowing its slot; a bitmap says which slots may hold entries, so finding
 * the next one to arm the loop's timer for skips empty slots 64 at a time. An entry lives in the slot of
 * its due millisecond (of whatever turn); one due beyond a turn is met once per turn (every
 * WHEEL_SLOTS ms) and stays until its own turn: cheap for the periods we schedule (seconds), and the way
 * out for long ones is a second, coarser level.
 *
 * Due entries are first moved to a ready list, then run one by one, so a callback may add or remove any
 * entry (a removed ready entry is simply unlinked; an entry added for "now" waits for the next pass).
 */
#include "wheel.h"

#include <assert.h>
#include <stddef.h>
#include <stdlib.h>

/* Slots of one turn (a power of two): 4096 ms. Bigger turns cost 24 bytes a slot per worker. */
#define WHEEL_SLOTS 4096u
#define WHEEL_MASK  (WHEEL_SLOTS - 1u)
#define WHEEL_WORDS (WHEEL_SLOTS / 64u)

struct wheel {
    struct loop *loop;                     /* the worker's loop; its clock is the wheel's */
    struct loop_timer timer;               /* armed at the earliest due entry found, when any is scheduled */
    wheel_cb cb;                           /* called for each due entry */
    void *data;                            /* passed to cb */
    uint64_t cursor_ms;                    /* every entry due before this ms has been moved to ready */
    uint64_t count;                        /* entries scheduled (slots and ready list) */
    uint64_t used[WHEEL_WORDS];            /* bit per slot: 1 when the slot may hold entries */
    struct wheel_entry ready;              /* sentinel of the due entries not yet run */
    struct wheel_entry slots[WHEEL_SLOTS]; /* sentinels of the slot lists */
};

static void
list_init(struct wheel_entry *head)
{
    head->next = head->prev = head;
}

static void
list_push(struct wheel_entry *head, struct wheel_entry *e)
{
    e->prev = head->prev;
    e->next = head;
    head->prev->next = e;
    head->prev = e;
}

static void
list_unlink(struct wheel_entry *e)
{
    e->prev->next = e->next;
    e->next->prev = e->prev;
    e->next = e->prev = NULL;
}

static uint32_t
slot_of_ms(uint64_t ms)
{
    return (uint32_t)(ms & WHEEL_MASK);
}

/* The next slot at or after @p from (circularly) whose bit is set, or -1 when none is. */
static int64_t
next_used_slot(const struct wheel *w, uint32_t from)
{
    for (uint32_t step = 0; step <= WHEEL_WORDS; step++) {
        uint32_t word = ((from / 64u) + step) % WHEEL_WORDS;
        uint64_t bits = w->used[word];
        if (step == 0) {
            bits &= ~0ull << (from % 64u);
        } else if (step == WHEEL_WORDS) {
            bits &= (from % 64u) ? ~(~0ull << (from % 64u)) : 0;
        }
        if (bits) {
            return (int64_t)(word * 64u + (uint32_t)__builtin_ctzll(bits));
        }
    }
    return -1;
}

static void wheel_timer_cb(struct loop *loop, struct loop_timer *timer);

/* Arm the loop's timer for the earliest entry of the turn starting at the cursor (or for the turn's end
 * when every entry waits for a later turn); stop it when nothing is scheduled. */
static void
rearm(struct wheel *w)
{
    uint64_t turn_end_ms = w->cursor_ms + WHEEL_SLOTS;
    uint32_t from = slot_of_ms(w->cursor_ms);

    if (w->ready.next != &w->ready) {
        loop_timer_start(w->loop, &w->timer, loop_now_us(w->loop), wheel_timer_cb);
        return;
    }
    if (!w->count) {
        loop_timer_stop(w->loop, &w->timer);
        return;
    }
    for (uint32_t scanned = 0; scanned < WHEEL_SLOTS;) {
        int64_t found = next_used_slot(w, (from + scanned) & WHEEL_MASK);
        uint32_t s, dist;
        monotime_us best = 0;
        int any = 0;
        if (found < 0) {
            break;
        }
        s = (uint32_t)found;
        dist = (s - from) & WHEEL_MASK;
        if (dist < scanned) {
            break; /* wrapped around: the whole turn was looked at */
        }
        /* The slot's millisecond in this turn; entries due by its end are this turn's. */
        uint64_t slot_ms = w->cursor_ms + dist;
        struct wheel_entry *head = &w->slots[s];
        if (head->next == head) {
            w->used[s / 64u] &= ~(1ull << (s % 64u));
        }
        for (struct wheel_entry *e = head->next; e != head; e = e->next) {
            if (e->due_us / 1000u <= slot_ms && (!any || e->due_us < best)) {
                best = e->due_us;
                any = 1;
            }
        }
        if (any) {
            loop_timer_start(w->loop, &w->timer, best, wheel_timer_cb);
            return;
        }
        scanned = dist + 1;
    }
    loop_timer_start(w->loop, &w->timer, turn_end_ms * 1000u, wheel_timer_cb);
}

/* Move the entries of slot @p s due by @p now_us to the ready list. */
static void
collect_slot(struct wheel *w, uint32_t s, monotime_us now_us)
{
    struct wheel_entry *head = &w->slots[s], *e, *next;

    for (e = head->next; e != head; e = next) {
        next = e->next;
        if (e->due_us <= now_us) {
            list_unlink(e);
            list_push(&w->ready, e);
        }
    }
    if (head->next == head) {
        w->used[s / 64u] &= ~(1ull << (s % 64u));
    }
}

static void
wheel_timer_cb(struct loop *loop, struct loop_timer *timer)
{
    struct wheel *w = (struct wheel *)((char *)timer - offsetof(struct wheel, timer));
    monotime_us now_us = loop_now_us(loop);
    uint64_t now_ms = now_us / 1000u;
    uint64_t span = now_ms >= w->cursor_ms ? now_ms - w->cursor_ms + 1 : 1;
    uint32_t from = slot_of_ms(w->cursor_ms);

    /* Collect: every slot from the cursor to now (one whole turn at most covers them all). */
    if (span > WHEEL_SLOTS) {
        span = WHEEL_SLOTS;
    }
    for (uint32_t scanned = 0; scanned < span;) {
        int64_t found = next_used_slot(w, (from + scanned) & WHEEL_MASK);
        uint32_t dist;
        if (found < 0) {
            break;
        }
        dist = ((uint32_t)found - from) & WHEEL_MASK;
        if (dist < scanned || dist >= span) {
            break;
        }
        collect_slot(w, (uint32_t)found, now_us);
        scanned = dist + 1;
    }
    /* The current millisecond stays under the cursor: entries due later in it are met next time. */
    if (now_ms > w->cursor_ms) {
        w->cursor_ms = now_ms;
    }
    /* Run: each entry leaves the ready list before its callback, which may add or remove any entry. */
    while (w->ready.next != &w->ready) {
        struct wheel_entry *e = w->ready.next;
        list_unlink(e);
        w->count--;
        w->cb(w, e, w->data);
    }
    rearm(w);
}

struct wheel *
wheel_new(struct loop *loop, wheel_cb cb, void *data)
{
    struct wheel *w = calloc(1, sizeof *w);

    if (!w) {
        return NULL;
    }
    w->loop = loop;
    w->cb = cb;
    w->data = data;
    w->cursor_ms = loop_now_us(loop) / 1000u;
    loop_timer_init(&w->timer);
    list_init(&w->ready);
    for (uint32_t i = 0; i < WHEEL_SLOTS; i++) {
        list_init(&w->slots[i]);
    }
    return w;
}

void
wheel_free(struct wheel *w)
{
    if (!w) {
        return;
    }
    loop_timer_stop(w->loop, &w->timer);
    free(w);
}

void
wheel_add(struct wheel *w, struct wheel_entry *e, monotime_us due_us)
{
    uint64_t due_ms = due_us / 1000u;
    uint32_t s;

    wheel_remove(w, e);
    if (!w->count) {
        /* An idle wheel's cursor may be far behind: nothing is due before now. */
        uint64_t now_ms = loop_now_us(w->loop) / 1000u;
        if (now_ms > w->cursor_ms) {
            w->cursor_ms = now_ms;
        }
    }
    /* A time already past goes under the cursor, so the next pass collects it. */
    s = slot_of_ms(due_ms < w->cursor_ms ? w->cursor_ms : due_ms);
    e->due_us = due_us;
    list_push(&w->slots[s], e);
    w->used[s / 64u] |= 1ull << (s % 64u);
    w->count++;
    if (!loop_timer_armed(&w->timer) || due_us < w->timer.deadline_us) {
        loop_timer_start(w->loop, &w->timer, due_us, wheel_timer_cb);
    }
}

void
wheel_remove(struct wheel *w, struct wheel_entry *e)
{
    if (!e->next) {
        return;
    }
    assert(w->count > 0);
    list_unlink(e);
    w->count--;
    /* The timer may now fire for nothing; it then re-arms (cheaper than a scan on every removal). */
}

int
wheel_scheduled(const struct wheel_entry *e)
{
    return e->next != NULL;
}

uint64_t
wheel_count(const struct wheel *w)
{
    return w->count;
}
