/*
 * The run's push window (see push_window.h): parsing, the arithmetic, and
 * the process's one window.
 */
#include "push_window.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct push_window pw_window;    /* written before the workers start, then read only */
static _Atomic monotime_us pw_ready_us; /* 0 until pushwin_mark_ready() */
static _Atomic(loop_clock_fn) pw_clock; /* NULL (static zero): the coarse monotonic clock */

/* One offset in seconds; @p end is where it stopped. -1 when it is no number in range. */
static int
pw_offset(const char *text, const char **end, uint64_t *out_us)
{
    char *stop = NULL;
    double s = strtod(text, &stop);

    if (stop == text || !isfinite(s) || s < 0 || s > PUSHWIN_MAX_OFFSET_S) {
        return -1;
    }
    *end = stop;
    *out_us = (uint64_t)llround(s * 1e6);
    return 0;
}

int
pushwin_parse(const char *text, struct push_window *out)
{
    struct push_window w = {.end_us = PUSHWIN_OPEN, .set = 1};
    const char *p = text;

    if (!text || text[0] == '-' || text[0] == '+' || pw_offset(p, &p, &w.start_us) || *p != ',') {
        return -1;
    }
    p++;
    if (*p) {
        if (*p == '-' || *p == '+' || pw_offset(p, &p, &w.end_us) || *p || w.end_us <= w.start_us) {
            return -1;
        }
    }
    *out = w;
    return 0;
}

enum pushwin_phase
pushwin_phase_at(const struct push_window *w, monotime_us ready_us, monotime_us now_us)
{
    uint64_t since;

    if (!w->set) {
        return PUSHWIN_INSIDE;
    }
    if (!ready_us || now_us < ready_us) {
        /* The workers run a moment before the ready line: START 0 means from the start, that moment too. */
        return w->start_us ? PUSHWIN_BEFORE : PUSHWIN_INSIDE;
    }
    since = now_us - ready_us;
    if (since < w->start_us) {
        return PUSHWIN_BEFORE;
    }
    return w->end_us != PUSHWIN_OPEN && since >= w->end_us ? PUSHWIN_AFTER : PUSHWIN_INSIDE;
}

uint32_t
pushwin_slot_at(monotime_us ready_us, monotime_us now_us)
{
    uint64_t slot;

    if (!ready_us || now_us < ready_us) {
        return 0;
    }
    slot = (now_us - ready_us) / PUSHWIN_SLOT_US;
    return slot > UINT32_MAX ? UINT32_MAX : (uint32_t)slot;
}

void
pushwin_configure(const struct push_window *w)
{
    pw_window = w ? *w : (struct push_window){0};
}

const struct push_window *
pushwin_get(void)
{
    return &pw_window;
}

void
pushwin_mark_ready(monotime_us now_us)
{
    atomic_store(&pw_ready_us, now_us ? now_us : 1);
}

monotime_us
pushwin_ready_us(void)
{
    return atomic_load_explicit(&pw_ready_us, memory_order_relaxed);
}

monotime_us
pushwin_now_us(void)
{
    loop_clock_fn clock = atomic_load_explicit(&pw_clock, memory_order_relaxed);
    struct timespec ts;

    if (clock) {
        return clock();
    }
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (monotime_us)ts.tv_sec * 1000000u + (monotime_us)ts.tv_nsec / 1000u;
}

void
pushwin_set_clock(loop_clock_fn clock)
{
    atomic_store(&pw_clock, clock);
}

enum pushwin_phase
pushwin_phase_now(void)
{
    /* No window: no clock to read on the hot path. */
    if (!pw_window.set) {
        return PUSHWIN_INSIDE;
    }
    return pushwin_phase_at(&pw_window, pushwin_ready_us(), pushwin_now_us());
}

uint32_t
pushwin_slot_now(void)
{
    return pushwin_slot_at(pushwin_ready_us(), pushwin_now_us());
}
