/*
 * The ledger of what a push channel did with each message, one row per
 * (device, channel, sink), with the names collectors' tools use (DESIGN.md
 * decision 13): emitted, in_window, drain, send_failures, dropped,
 * suppressed_pre_window, and sent = in_window + drain, the number that
 * reached the wire and the one a collector's count is reconciled against.
 *
 * A row is plain counters kept by the caller (no allocation, no locking: a
 * device's rows are written by its worker only). Syslog (a row per device
 * and sink), traps (struct trap_counters embeds a row per device and sink)
 * and NETCONF notifications (a row per subscriber, in struct notif_counts)
 * use it.
 *
 * The run window (push_window.h) decides, when a message reaches the wire,
 * whether it counts in_window (inside [START, END)) or drain (outside it:
 * after END, what was queued draining; at any time, what a user asked for
 * explicitly outside the window). Without --push-window every message is
 * in_window. What the fleet would have emitted on its own before START is
 * counted suppressed_pre_window (ledger_suppress), never built.
 *
 * Sub-windows: besides the per-device rows, every count also lands in its
 * 10-second slot (counted from ready) of the row's series, one series per
 * (channel, sink) and not per device, so memory does not grow with the
 * fleet: each thread that counts has its own slot table (no sharing, no
 * atomics), summed when the report or /metrics reads them.
 *
 * Identity, at every moment between two calls into a channel:
 *   emitted == in_window + drain + send_failures + dropped + suppressed_pre_window + queued
 * and once the channel is closed (queued == 0) the identity of the issue holds.
 */
#ifndef FLEET_LEDGER_H
#define FLEET_LEDGER_H

#include <stdint.h>

#include "push_window.h"
#include "sbuf.h"

/* The push channels a ledger row can belong to (the report's and the metrics' channel label). */
enum ledger_channel {
    LEDGER_SYSLOG,  /* syslog lines (syslog_chan.h) */
    LEDGER_TRAP,    /* SNMP traps and informs (trap.h: struct trap_counters holds a row) */
    LEDGER_NETCONF, /* NETCONF notifications (a row per subscriber) */
    LEDGER_CHANNELS
};

/* One (device, channel, sink): what happened to every message offered to it. */
struct ledger_row {
    uint64_t emitted;               /* messages the device produced for this sink */
    uint64_t in_window;             /* reached the wire (the kernel took them) inside the run window */
    uint64_t drain;                 /* reached the wire after the window ended (queued before its end) */
    uint64_t send_failures;         /* the kernel refused them, or the connection broke while writing */
    uint64_t dropped;               /* refused before the kernel: queue full, or the pacer fell behind */
    uint64_t suppressed_pre_window; /* not sent: the run window had not started (reserved) */
    uint32_t queued;                /* gauge: emitted and waiting in a sink's queue, no outcome yet */
    uint16_t series;                /* its (channel, sink) for the sub-windows (ledger_series_add); 0: none */
};

/* The states a sub-window counts (the row's counters but queued, which is a gauge). */
enum ledger_state {
    LEDGER_ST_EMITTED,
    LEDGER_ST_IN_WINDOW,
    LEDGER_ST_DRAIN,
    LEDGER_ST_SEND_FAILURES,
    LEDGER_ST_DROPPED,
    LEDGER_ST_SUPPRESSED_PRE_WINDOW,
    LEDGER_STATES
};

/* Most series (channel, sink) the sub-windows tell apart; more are counted in the rows only. */
#define LEDGER_MAX_SERIES 255u
/* Most sub-windows kept per series: 3 hours of 10-s slots; later counts land in the last one. */
#define LEDGER_MAX_SLOTS 1080u
/* Sub-windows kept after a window's END for the drain. */
#define LEDGER_DRAIN_SLOTS 6u

/** @brief Count @p n of @p state in the calling thread's current sub-window of @p series (not 0). */
void ledger_slot_add(uint16_t series, enum ledger_state state, uint64_t n);

/**
 * @brief Count one message of @p row that reached the wire: in_window inside the run window, else drain,
 * and in its sub-window; one clock read at most, none without a window and a series.
 */
void ledger_count_sent(struct ledger_row *row);

/** @return The messages of @p row that reached the wire: in_window + drain. */
static inline uint64_t
ledger_sent(const struct ledger_row *row)
{
    return row->in_window + row->drain;
}

/** @brief One message emitted and queued for the sink; its outcome follows with one of the calls below. */
static inline void
ledger_queue(struct ledger_row *row)
{
    row->emitted++;
    row->queued++;
    if (row->series) {
        ledger_slot_add(row->series, LEDGER_ST_EMITTED, 1);
    }
}

/** @brief A queued message reached the wire: in_window inside the run window, else drain. */
static inline void
ledger_note_sent(struct ledger_row *row)
{
    row->queued--;
    ledger_count_sent(row);
}

/** @brief A queued message was refused by the kernel or lost with its connection. */
static inline void
ledger_note_failed(struct ledger_row *row)
{
    row->queued--;
    row->send_failures++;
    if (row->series) {
        ledger_slot_add(row->series, LEDGER_ST_SEND_FAILURES, 1);
    }
}

/** @brief A queued message was dropped before the kernel saw it. */
static inline void
ledger_note_dropped(struct ledger_row *row)
{
    row->queued--;
    row->dropped++;
    if (row->series) {
        ledger_slot_add(row->series, LEDGER_ST_DROPPED, 1);
    }
}

/** @brief One message emitted and handed to the kernel at once (never queued): in_window or drain. */
static inline void
ledger_emit_sent(struct ledger_row *row)
{
    ledger_queue(row);
    ledger_note_sent(row);
}

/** @brief One message emitted and refused at once (the kernel said no, its sink never became known). */
static inline void
ledger_emit_failed(struct ledger_row *row)
{
    ledger_queue(row);
    ledger_note_failed(row);
}

/** @brief @p n messages emitted and dropped at once (never queued: a full queue, a pacer behind). */
static inline void
ledger_drop_now(struct ledger_row *row, uint64_t n)
{
    row->emitted += n;
    row->dropped += n;
    if (row->series) {
        ledger_slot_add(row->series, LEDGER_ST_EMITTED, n);
    }
    if (row->series) {
        ledger_slot_add(row->series, LEDGER_ST_DROPPED, n);
    }
}

/** @brief @p n messages the fleet would have emitted on its own before the window: counted, never built. */
static inline void
ledger_suppress(struct ledger_row *row, uint64_t n)
{
    row->emitted += n;
    row->suppressed_pre_window += n;
    if (row->series) {
        ledger_slot_add(row->series, LEDGER_ST_EMITTED, n);
    }
    if (row->series) {
        ledger_slot_add(row->series, LEDGER_ST_SUPPRESSED_PRE_WINDOW, n);
    }
}

/** @return 1 when the identity holds for @p row, else 0. */
int ledger_consistent(const struct ledger_row *row);

/** @brief Add @p row's counts into @p sum (the metrics' totals). */
void ledger_add(struct ledger_row *sum, const struct ledger_row *row);

/**
 * @brief Append @p row's members as JSON ("emitted":N,"sent":N,... without braces), the names of the
 * report: emitted, sent, in_window, drain, send_failures, dropped, suppressed_pre_window, queued.
 */
void ledger_json(struct sbuf *b, const struct ledger_row *row);

/** @return The channel's name in the report and the metrics ("syslog", "trap", "netconf"). */
const char *ledger_channel_name(enum ledger_channel ch);

/**
 * @brief Register the series (@p ch, @p sink) for the sub-windows, or find it when it exists. Call before
 * ledger_book_start(), from one thread.
 * @return Its id for ledger_row.series; 0 when LEDGER_MAX_SERIES are taken (the rows still count).
 */
uint16_t ledger_series_add(enum ledger_channel ch, const char *sink);

/**
 * @brief Allocate the sub-windows: one slot table per thread that counts (@p threads workers, plus one
 * shared by threads that never called ledger_bind_thread(), the main thread after the workers stopped).
 * The number of slots follows the run window (its END and LEDGER_DRAIN_SLOTS), else LEDGER_MAX_SLOTS.
 * Call after the series are registered and before the workers start.
 * @return 0, or -1 when out of memory (the sub-windows are then not counted; the rows are).
 */
int ledger_book_start(uint32_t threads);

/** @brief The calling thread (worker @p thread, < the threads of ledger_book_start()) counts in its table. */
void ledger_bind_thread(uint32_t thread);

/** @brief Free the sub-windows and forget the series (tests, and the end of a run). */
void ledger_book_free(void);

/** @return The number of slots of each series (0 before ledger_book_start()). */
uint32_t ledger_book_slots(void);

/** @return The number of registered series. */
uint32_t ledger_book_series(void);

/**
 * @brief Sum the series @p series (1-based) over every thread: @p slot's counts into @p out
 * (LEDGER_STATES of them), or, with @p slot UINT32_MAX, every slot's.
 */
void ledger_book_counts(uint16_t series, uint32_t slot, uint64_t out[LEDGER_STATES]);

/** @return The channel and the sink name of @p series (1-based); NULL name when there is no such series. */
const char *ledger_series_sink(uint16_t series, enum ledger_channel *ch);

/**
 * @brief Append the report's "ledger" member (without a leading comma): the window, the slot length
 * and, per series, its totals and every sub-window up to now that counted something.
 */
void ledger_book_json(struct sbuf *b);

/** @return The name of sub-window state @p st ("emitted", "in_window", ...). */
const char *ledger_state_name(enum ledger_state st);

#endif
