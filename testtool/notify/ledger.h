/*
 * The ledger of what a push channel did with each message, one row per
 * (device, channel, sink), with the names collectors' tools use (DESIGN.md
 * decision 13): emitted, in_window, drain, send_failures, dropped,
 * suppressed_pre_window, and sent = in_window + drain, the number that
 * reached the wire and the one a collector's count is reconciled against.
 *
 * A row is plain counters kept by the caller (no allocation, no locking: a
 * device's rows are written by its worker only). The syslog channel and
 * traps (struct trap_counters embeds a row) use it; NETCONF notifications
 * keep struct notif_counts until they move onto it: their counts map one to
 * one (sent -> in_window, suppressed -> suppressed_pre_window's sibling).
 *
 * Until the run window exists (issue 29 item 5) every message that reaches
 * the wire is in_window; drain and suppressed_pre_window stay 0.
 *
 * Identity, at every moment between two calls into a channel:
 *   emitted == in_window + drain + send_failures + dropped + suppressed_pre_window + queued
 * and once the channel is closed (queued == 0) the identity of the issue holds.
 */
#ifndef FLEET_LEDGER_H
#define FLEET_LEDGER_H

#include <stdint.h>

#include "sbuf.h"

/* The push channels a ledger row can belong to (the report's and the metrics' channel label). */
enum ledger_channel {
    LEDGER_SYSLOG,  /* syslog lines (syslog_chan.h) */
    LEDGER_TRAP,    /* SNMP traps and informs (trap.h: struct trap_counters holds a row) */
    LEDGER_NETCONF, /* NETCONF notifications (not migrated yet) */
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
};

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
}

/** @brief A queued message reached the wire (inside the window: no window yet). */
static inline void
ledger_note_sent(struct ledger_row *row)
{
    row->queued--;
    row->in_window++;
}

/** @brief A queued message was refused by the kernel or lost with its connection. */
static inline void
ledger_note_failed(struct ledger_row *row)
{
    row->queued--;
    row->send_failures++;
}

/** @brief A queued message was dropped before the kernel saw it. */
static inline void
ledger_note_dropped(struct ledger_row *row)
{
    row->queued--;
    row->dropped++;
}

/** @brief @p n messages emitted and dropped at once (never queued: a full queue, a pacer behind). */
static inline void
ledger_drop_now(struct ledger_row *row, uint64_t n)
{
    row->emitted += n;
    row->dropped += n;
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

#endif
