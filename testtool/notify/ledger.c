/*
 * Ledger rows (see ledger.h): the identity, the sums and the report's JSON;
 * and the sub-windows: per series (channel, sink), per 10-s slot since
 * ready, one table per counting thread.
 *
 * Memory: threads+1 tables of series x slots x LEDGER_STATES counters.
 * 2 workers, 4 sinks and the 1080 slots of an open window make
 * 3 x 4 x 1080 x 6 x 8 bytes = 0.6 MB, whatever the number of devices;
 * a window with an END keeps only END/10 s + LEDGER_DRAIN_SLOTS slots.
 * Per-device slots would cost 10^6 x 3 x 1080 x 48 bytes, which is why
 * devices keep totals only (their rows).
 */
#include "ledger.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* A registered series. */
struct lb_series {
    enum ledger_channel channel; /* its channel */
    char *sink;                  /* its sink's name (owned) */
};

/* The process's sub-windows. */
struct ledger_book {
    struct lb_series series[LEDGER_MAX_SERIES]; /* registered series, id = index + 1 */
    uint32_t series_count;                      /* entries used in series */
    uint32_t table_series;                      /* series the tables have room for (those at start) */
    uint32_t slots;                             /* slots per series; 0 before ledger_book_start() */
    uint32_t threads;                           /* bound threads' tables; tables[threads] is the shared one */
    uint64_t **tables;                          /* threads + 1 tables, or NULL before start */
};

static struct ledger_book lb;
static _Thread_local uint32_t lb_thread = UINT32_MAX; /* the calling thread's table, UINT32_MAX: unbound */

static const char *const lb_state_names[LEDGER_STATES] = {
    "emitted", "in_window", "drain", "send_failures", "dropped", "suppressed_pre_window"};

int
ledger_consistent(const struct ledger_row *row)
{
    return row->emitted == row->in_window + row->drain + row->send_failures + row->dropped +
                               row->suppressed_pre_window + row->queued;
}

void
ledger_add(struct ledger_row *sum, const struct ledger_row *row)
{
    sum->emitted += row->emitted;
    sum->in_window += row->in_window;
    sum->drain += row->drain;
    sum->send_failures += row->send_failures;
    sum->dropped += row->dropped;
    sum->suppressed_pre_window += row->suppressed_pre_window;
    sum->queued += row->queued;
}

void
ledger_json(struct sbuf *b, const struct ledger_row *row)
{
    sbuf_printf(b,
                "\"emitted\":%" PRIu64 ",\"sent\":%" PRIu64 ",\"in_window\":%" PRIu64 ",\"drain\":%" PRIu64
                ",\"send_failures\":%" PRIu64 ",\"dropped\":%" PRIu64 ",\"suppressed_pre_window\":%" PRIu64
                ",\"queued\":%" PRIu32,
                row->emitted, ledger_sent(row), row->in_window, row->drain, row->send_failures, row->dropped,
                row->suppressed_pre_window, row->queued);
}

const char *
ledger_channel_name(enum ledger_channel ch)
{
    static const char *const names[LEDGER_CHANNELS] = {"syslog", "trap", "netconf"};

    return (unsigned)ch < LEDGER_CHANNELS ? names[ch] : "unknown";
}

const char *
ledger_state_name(enum ledger_state st)
{
    return (unsigned)st < LEDGER_STATES ? lb_state_names[st] : "unknown";
}

/* Count @p n of @p state in @p series's slot of @p now_us (the series is in the tables). */
static void
lb_slot_count(uint16_t series, enum ledger_state state, uint64_t n, monotime_us now_us)
{
    uint32_t slot = pushwin_slot_at(pushwin_ready_us(), now_us), t;

    if (slot >= lb.slots) {
        slot = lb.slots - 1; /* past the kept slots: the last one holds the rest of the run */
    }
    t = lb_thread < lb.threads ? lb_thread : lb.threads;
    /* One writer per table (its thread), read while the run goes on (a report, a scrape): relaxed atomics, a
     * plain load and store on the machines we run on, no lock. */
    uint64_t *cell = &lb.tables[t][((size_t)(series - 1) * lb.slots + slot) * LEDGER_STATES + state];
    __atomic_store_n(cell, __atomic_load_n(cell, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

void
ledger_slot_add(uint16_t series, enum ledger_state state, uint64_t n)
{
    if (series && lb.tables && series <= lb.table_series) {
        lb_slot_count(series, state, n, pushwin_now_us());
    }
}

void
ledger_count_sent(struct ledger_row *row)
{
    const struct push_window *w = pushwin_get();
    int slotted = row->series && lb.tables && row->series <= lb.table_series;
    monotime_us now = w->set || slotted ? pushwin_now_us() : 0;
    enum ledger_state st = LEDGER_ST_IN_WINDOW;

    if (w->set && pushwin_phase_at(w, pushwin_ready_us(), now) != PUSHWIN_INSIDE) {
        st = LEDGER_ST_DRAIN;
    }
    if (st == LEDGER_ST_IN_WINDOW) {
        row->in_window++;
    } else {
        row->drain++;
    }
    if (slotted) {
        lb_slot_count(row->series, st, 1, now);
    }
}

uint16_t
ledger_series_add(enum ledger_channel ch, const char *sink)
{
    for (uint32_t k = 0; k < lb.series_count; k++) {
        if (lb.series[k].channel == ch && !strcmp(lb.series[k].sink, sink)) {
            return (uint16_t)(k + 1);
        }
    }
    if (lb.series_count == LEDGER_MAX_SERIES || !(lb.series[lb.series_count].sink = strdup(sink))) {
        return 0;
    }
    lb.series[lb.series_count].channel = ch;
    return (uint16_t)++lb.series_count;
}

int
ledger_book_start(uint32_t threads)
{
    const struct push_window *w = pushwin_get();
    uint32_t slots = LEDGER_MAX_SLOTS;

    if (lb.tables) {
        return 0;
    }
    if (w->set && w->end_us != PUSHWIN_OPEN) {
        uint64_t want = w->end_us / PUSHWIN_SLOT_US + 1 + LEDGER_DRAIN_SLOTS;
        slots = want < LEDGER_MAX_SLOTS ? (uint32_t)want : LEDGER_MAX_SLOTS;
    }
    if (!lb.series_count) {
        return 0; /* nothing to count */
    }
    if (!(lb.tables = calloc((size_t)threads + 1, sizeof *lb.tables))) {
        return -1;
    }
    for (uint32_t t = 0; t <= threads; t++) {
        if (!(lb.tables[t] = calloc((size_t)lb.series_count * slots * LEDGER_STATES, sizeof(uint64_t)))) {
            for (uint32_t k = 0; k < t; k++) {
                free(lb.tables[k]);
            }
            free(lb.tables);
            lb.tables = NULL;
            return -1;
        }
    }
    lb.threads = threads;
    lb.slots = slots;
    lb.table_series = lb.series_count;
    return 0;
}

void
ledger_bind_thread(uint32_t thread)
{
    lb_thread = thread;
}

void
ledger_book_free(void)
{
    for (uint32_t t = 0; lb.tables && t <= lb.threads; t++) {
        free(lb.tables[t]);
    }
    free(lb.tables);
    for (uint32_t k = 0; k < lb.series_count; k++) {
        free(lb.series[k].sink);
    }
    memset(&lb, 0, sizeof lb);
}

uint32_t
ledger_book_slots(void)
{
    return lb.tables ? lb.slots : 0;
}

uint32_t
ledger_book_series(void)
{
    return lb.series_count;
}

void
ledger_book_counts(uint16_t series, uint32_t slot, uint64_t out[LEDGER_STATES])
{
    memset(out, 0, LEDGER_STATES * sizeof out[0]);
    if (!series || !lb.tables || series > lb.table_series) {
        return;
    }
    for (uint32_t t = 0; t <= lb.threads; t++) {
        const uint64_t *base = &lb.tables[t][(size_t)(series - 1) * lb.slots * LEDGER_STATES];
        for (uint32_t s = slot == UINT32_MAX ? 0 : slot; s < lb.slots && (slot == UINT32_MAX || s == slot);
             s++) {
            for (int k = 0; k < LEDGER_STATES; k++) {
                out[k] += __atomic_load_n(&base[(size_t)s * LEDGER_STATES + k], __ATOMIC_RELAXED);
            }
        }
    }
}

const char *
ledger_series_sink(uint16_t series, enum ledger_channel *ch)
{
    if (!series || series > lb.series_count) {
        return NULL;
    }
    *ch = lb.series[series - 1].channel;
    return lb.series[series - 1].sink;
}

/* The counts of one sub-window or total as JSON members. */
static void
lb_counts_json(struct sbuf *b, const uint64_t c[LEDGER_STATES])
{
    for (int k = 0; k < LEDGER_STATES; k++) {
        sbuf_printf(b, "%s\"%s\":%" PRIu64, k ? "," : "", lb_state_names[k], c[k]);
    }
    sbuf_printf(b, ",\"sent\":%" PRIu64, c[LEDGER_ST_IN_WINDOW] + c[LEDGER_ST_DRAIN]);
}

void
ledger_book_json(struct sbuf *b)
{
    const struct push_window *w = pushwin_get();
    uint32_t now_slot = pushwin_slot_now();

    sbuf_printf(b, "\"ledger\":{\"slot_seconds\":%u,\"slots_kept\":%" PRIu32 ",\"window\":",
                (unsigned)(PUSHWIN_SLOT_US / 1000000u), ledger_book_slots());
    if (!w->set) {
        sbuf_adds(b, "null");
    } else if (w->end_us == PUSHWIN_OPEN) {
        sbuf_printf(b, "{\"start_s\":%.3f,\"end_s\":null}", (double)w->start_us / 1e6);
    } else {
        sbuf_printf(b, "{\"start_s\":%.3f,\"end_s\":%.3f}", (double)w->start_us / 1e6,
                    (double)w->end_us / 1e6);
    }
    sbuf_adds(b, ",\"series\":[");
    for (uint32_t k = 0; k < lb.series_count; k++) {
        uint64_t c[LEDGER_STATES];
        int first = 1;
        sbuf_printf(b, "%s{\"channel\":\"%s\",\"sink\":", k ? "," : "",
                    ledger_channel_name(lb.series[k].channel));
        sbuf_add_json(b, lb.series[k].sink);
        sbuf_adds(b, ",\"total\":{");
        ledger_book_counts((uint16_t)(k + 1), UINT32_MAX, c);
        lb_counts_json(b, c);
        sbuf_adds(b, "},\"slots\":[");
        /* Only the slots that counted something, each with its start (seconds from ready). */
        for (uint32_t s = 0; s < ledger_book_slots() && s <= now_slot; s++) {
            uint64_t any = 0;
            ledger_book_counts((uint16_t)(k + 1), s, c);
            for (int j = 0; j < LEDGER_STATES; j++) {
                any |= c[j];
            }
            if (!any) {
                continue;
            }
            sbuf_printf(b, "%s{\"t\":%" PRIu64 ",", first ? "" : ",",
                        (uint64_t)s * (uint64_t)(PUSHWIN_SLOT_US / 1000000u));
            lb_counts_json(b, c);
            sbuf_adds(b, "}");
            first = 0;
        }
        sbuf_adds(b, "]}");
    }
    sbuf_adds(b, "]}");
}
