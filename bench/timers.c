/*
 * Many timers on one loop: cost of starting, and of firing, N timers in
 * random order (the heap is what 30,000 devices' timers will live in).
 * Prints CPU nanoseconds per operation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "loop.h"

static size_t fired;

static void
on_fire(struct loop *loop, struct loop_timer *timer)
{
    (void)loop;
    (void)timer;
    fired++;
}

static double
cpu_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int
main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
    struct loop *loop = loop_new(64);
    struct loop_timer *timers = calloc(n, sizeof *timers);
    monotime_us base;
    double t0;
    double t1;
    double t2;

    if (!loop || !timers) {
        return 1;
    }
    srand(1);
    base = loop_now_us(loop);
    t0 = cpu_ns();
    for (size_t i = 0; i < n; i++) {
        loop_timer_init(&timers[i]);
        loop_timer_start(loop, &timers[i], base + 1 + (monotime_us)(rand() % 200000), on_fire);
    }
    t1 = cpu_ns();
    while (loop_timer_count(loop)) {
        loop_run_once(loop, 10);
    }
    t2 = cpu_ns();
    printf("%zu timers: start %.0f ns each, fire %.0f ns each (fired %zu)\n", n, (t1 - t0) / (double)n,
           (t2 - t1) / (double)n, fired);
    loop_free(loop);
    free(timers);
    return 0;
}
