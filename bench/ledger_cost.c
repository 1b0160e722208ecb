/*
 * The ledger's cost per message (issue 29 item 6): one message queued and
 * then sent (ledger_queue + ledger_note_sent, what a syslog sink does per
 * line) over many devices' rows, in four set-ups side by side:
 *   bare        the counters alone, as the ledger was before the window
 *   no-window   today's ledger without --push-window: no clock is read
 *   window      --push-window set: the window's clock read at each send
 *   sub-windows --push-window set and the row in a series: its 10-s slot too
 * Prints CPU nanoseconds per message (best of --rounds) and the ratios.
 * Usage: bench_ledger_cost [messages] [rounds]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ledger.h"
#include "push_window.h"

#define LC_ROWS 10000u /* rows cycled through: devices whose rows do not all sit in L1 */

static double
cpu_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The counters alone, as ledger_queue and ledger_note_sent were before the run window. */
static void
lc_bare(struct ledger_row *rows, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        struct ledger_row *r = &rows[i % LC_ROWS];
        r->emitted++;
        r->queued++;
        r->queued--;
        r->in_window++;
        __asm__ volatile("" ::: "memory"); /* one message at a time, as a sink sends them */
    }
}

static void
lc_ledger(struct ledger_row *rows, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        struct ledger_row *r = &rows[i % LC_ROWS];
        ledger_queue(r);
        ledger_note_sent(r);
        __asm__ volatile("" ::: "memory");
    }
}

static double
lc_round(void (*fn)(struct ledger_row *, uint64_t), struct ledger_row *rows, uint64_t n, int rounds)
{
    double best = 0;

    for (int k = 0; k < rounds; k++) {
        double t0 = cpu_ns(), ns;
        fn(rows, n);
        ns = (cpu_ns() - t0) / (double)n;
        if (!k || ns < best) {
            best = ns;
        }
    }
    return best;
}

int
main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 20000000u;
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    struct ledger_row *rows = calloc(LC_ROWS, sizeof *rows);
    struct push_window w = {.start_us = 0, .end_us = PUSHWIN_OPEN, .set = 1};
    double bare, none, win, sub;
    uint64_t check = 0;

    if (!rows) {
        return 1;
    }
    bare = lc_round(lc_bare, rows, n, rounds);
    pushwin_configure(NULL);
    none = lc_round(lc_ledger, rows, n, rounds);
    pushwin_configure(&w);
    pushwin_mark_ready(pushwin_now_us());
    win = lc_round(lc_ledger, rows, n, rounds);
    for (uint32_t k = 0; k < LC_ROWS; k++) {
        rows[k].series =
            ledger_series_add(LEDGER_SYSLOG, k % 2 ? "udp://127.0.0.1:514" : "tcp://127.0.0.1:514");
    }
    if (ledger_book_start(1)) {
        return 1;
    }
    ledger_bind_thread(0);
    sub = lc_round(lc_ledger, rows, n, rounds);
    for (uint32_t k = 0; k < LC_ROWS; k++) {
        check += ledger_sent(&rows[k]) + rows[k].queued;
    }
    printf("messages %llu x %d rounds, %u rows (sanity: %llu sent)\n", (unsigned long long)n, rounds, LC_ROWS,
           (unsigned long long)check);
    printf("%-12s %8s %8s\n", "set-up", "ns/msg", "x bare");
    printf("%-12s %8.2f %8.2f\n", "bare", bare, 1.0);
    printf("%-12s %8.2f %8.2f\n", "no-window", none, none / bare);
    printf("%-12s %8.2f %8.2f\n", "window", win, win / bare);
    printf("%-12s %8.2f %8.2f\n", "sub-windows", sub, sub / bare);
    ledger_book_free();
    free(rows);
    return 0;
}
