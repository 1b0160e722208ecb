/*
 * The run's push window (--push-window START,END, offsets from ready):
 * what the fleet emits on its own (catalog rates, notification files,
 * --flap-rate, start-up lines) goes out only inside it; what a user asks
 * for (a control API action, a scenario's event) goes out whenever it
 * happens. The ledger (ledger.h) reads the window to tell in_window from
 * drain and to place every count in its 10-second sub-window.
 *
 * One window per process: configured before the workers start, "ready"
 * marked once by the main thread, then only read. Without --push-window
 * every moment is inside the window (the fleet behaves as before), and
 * ready is still marked so sub-windows count from it.
 *
 * Time is CLOCK_MONOTONIC_COARSE (a few ns through the vDSO, 1-4 ms
 * resolution), read where a message is counted: a 10-s slot and a window
 * edge do not need more, and the ledger needs no loop to ask.
 */
#ifndef FLEET_PUSH_WINDOW_H
#define FLEET_PUSH_WINDOW_H

#include <stdint.h>

#include "loop.h"

/* Length of one sub-window of the ledger. */
#define PUSHWIN_SLOT_US UINT64_C(10000000)
/* An end that never comes (--push-window START, with END left empty). */
#define PUSHWIN_OPEN UINT64_MAX
/* The longest offset --push-window accepts: 30 days, in seconds. */
#define PUSHWIN_MAX_OFFSET_S 2592000.0

/* A run window, as offsets from ready. */
struct push_window {
    uint64_t start_us; /* opens this long after ready */
    uint64_t end_us;   /* closes this long after ready (> start_us); PUSHWIN_OPEN: never */
    uint8_t set;       /* 1 when --push-window was given; 0: always inside */
};

/* Where a moment falls relative to the window. */
enum pushwin_phase {
    PUSHWIN_BEFORE, /* before START (or before ready, START > 0): what the fleet would emit on its own is
                     * suppressed */
    PUSHWIN_INSIDE, /* inside [START, END): emitted, and counted in_window when it reaches the wire */
    PUSHWIN_AFTER,  /* at or after END: nothing new on its own; what reaches the wire counts as drain */
};

/**
 * @brief Parse "START,END" or "START," (seconds from ready, decimals allowed, END > START).
 * @return 0 and @p out set, or -1 (@p out untouched).
 */
int pushwin_parse(const char *text, struct push_window *out);

/**
 * @return Where @p now_us falls in @p w for a fleet ready at @p ready_us (0: not ready yet, before
 * any window). Pure: the tests' arithmetic.
 */
enum pushwin_phase pushwin_phase_at(const struct push_window *w, monotime_us ready_us, monotime_us now_us);

/** @return The sub-window @p now_us falls in, counted from @p ready_us (0 before ready). Pure. */
uint32_t pushwin_slot_at(monotime_us ready_us, monotime_us now_us);

/** @brief Set the process's window (a copy); call before the workers start. NULL: no window. */
void pushwin_configure(const struct push_window *w);

/** @brief The process's window, as configured. */
const struct push_window *pushwin_get(void);

/** @brief The fleet is ready now: the window's offsets and the sub-windows count from @p now_us. */
void pushwin_mark_ready(monotime_us now_us);

/** @return When the fleet became ready (pushwin_now_us() clock), 0 before. Any thread. */
monotime_us pushwin_ready_us(void);

/** @return The clock of the window and the ledger (CLOCK_MONOTONIC_COARSE unless a test replaced it). */
monotime_us pushwin_now_us(void);

/** @brief Replace the clock (unit tests); NULL restores the coarse monotonic clock. */
void pushwin_set_clock(loop_clock_fn clock);

/** @return The process's phase now. Any thread. */
enum pushwin_phase pushwin_phase_now(void);

/** @return The process's sub-window now. Any thread. */
uint32_t pushwin_slot_now(void);

#endif
