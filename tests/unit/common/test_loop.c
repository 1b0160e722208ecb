/*
 * Unit tests of the worker event loop (common/loop.c): timer order
 * and the collect-then-run rule, the replaceable clock, descriptor watches,
 * and the two calls other threads may make (loop_post, loop_stop). Timer
 * tests run on a fake clock, a static variable the test advances, so every
 * deadline is exact; only the cross-thread tests (bounded by a watchdog
 * timer) and the one sleep-length test use real time. Each test gets a fresh
 * loop and ends by asserting that no timer is left armed; the teardown frees
 * the loop.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "loop.h"

/* Descriptors the test loops index. */
#define TL_MAX_FDS 1024
/* Timers in the many-timers tests. */
#define TL_MANY_TIMERS 100000
/* Deadlines of the many-timers test are drawn from [0, TL_MANY_SPAN_US): many collide. */
#define TL_MANY_SPAN_US 40000
/* Clock steps the many-timers test advances in. */
#define TL_MANY_STEPS 97
/* How long a test waits for another thread before giving up (times FLEETSIM_TIMEOUT_MULTIPLIER). */
#define TL_WATCHDOG_US 5000000u
/* How soon the loop must react to another thread's post or stop (times the multiplier); the
 * other thread acts after 20 ms, so this is slack for a loaded machine, not a measurement. */
#define TL_REACT_US 1000000u
/* Upper bound of the timers an order test records. */
#define TL_MAX_FIRED 16

/* The fake clock: tests set it, the loop reads it through tl_fake_clock(). */
static monotime_us tl_now_us;

static monotime_us
tl_fake_clock(void)
{
    return tl_now_us;
}

/* Per-test state: the loop under test and what its callbacks saw. */
struct tl_state {
    struct loop *loop;       /* fresh for every test */
    int fired[TL_MAX_FIRED]; /* ids of timers in the order they ran */
    size_t fired_count;      /* entries of fired */
};

/* A timer the order tests start; the loop node is embedded. */
struct tl_timer {
    struct loop_timer node;  /* armed in the loop */
    int id;                  /* what the callback records */
    struct tl_state *st;     /* where it records */
    struct tl_timer *victim; /* a timer the callback stops, or NULL */
    int rearm_now;           /* 1: the callback starts itself again for "now" */
};

static struct tl_timer *
tl_timer_of(struct loop_timer *node)
{
    return (struct tl_timer *)((char *)node - offsetof(struct tl_timer, node));
}

static void
tl_record_cb(struct loop *loop, struct loop_timer *node)
{
    struct tl_timer *t = tl_timer_of(node);

    assert_true(t->st->fired_count < TL_MAX_FIRED);
    t->st->fired[t->st->fired_count++] = t->id;
    if (t->victim) {
        loop_timer_stop(loop, &t->victim->node);
    }
    if (t->rearm_now) {
        t->rearm_now = 0;
        loop_timer_start(loop, node, loop_now_us(loop), tl_record_cb);
    }
}

static void
tl_timer_init(struct tl_state *st, struct tl_timer *t, int id)
{
    memset(t, 0, sizeof *t);
    loop_timer_init(&t->node);
    t->id = id;
    t->st = st;
}

static void
tl_assert_fired(const struct tl_state *st, const int *want, size_t count)
{
    int same = st->fired_count == count && !memcmp(st->fired, want, count * sizeof *want);

    if (!same) {
        print_error("expected timers:");
        for (size_t i = 0; i < count; i++) {
            print_error(" %d", want[i]);
        }
        print_error("\nfired timers:   ");
        for (size_t i = 0; i < st->fired_count; i++) {
            print_error(" %d", st->fired[i]);
        }
        print_error("\n");
    }
    assert_true(same);
}

static int
tl_case_setup(void **state)
{
    struct tl_state *st = calloc(1, sizeof *st);

    assert_non_null(st);
    st->loop = loop_new(TL_MAX_FDS);
    assert_non_null(st->loop);
    tl_now_us = 1000000;
    loop_set_clock(st->loop, tl_fake_clock);
    *state = st;
    return 0;
}

static int
tl_case_teardown(void **state)
{
    struct tl_state *st = *state;

    loop_free(st->loop);
    free(st);
    return 0;
}

static monotime_us
tl_multiplied(monotime_us us)
{
    const char *m = getenv("FLEETSIM_TIMEOUT_MULTIPLIER");
    long factor = m ? strtol(m, NULL, 10) : 1;

    return us * (monotime_us)(factor > 0 ? factor : 1);
}

/* ---- timers ---- */

static void
test_timers_fire_in_deadline_order_and_equal_deadlines_in_start_order(void **state)
{
    struct tl_state *st = *state;
    struct tl_timer t[12];
    /* Started in this order, with these deadlines (offsets from now); ties fire in start order. */
    static const monotime_us offset[12] = {300, 100, 200, 100, 0, 100, 300, 100, 0, 200, 100, 300};
    static const int want[12] = {4, 8, 1, 3, 5, 7, 10, 2, 9, 0, 6, 11};

    for (int i = 0; i < 12; i++) {
        tl_timer_init(st, &t[i], i);
        loop_timer_start(st->loop, &t[i].node, tl_now_us + offset[i], tl_record_cb);
    }
    assert_int_equal(loop_timer_count(st->loop), 12);
    tl_now_us += 300;
    loop_run_once(st->loop, 0);
    tl_assert_fired(st, want, 12);
    assert_int_equal(loop_timer_count(st->loop), 0);
}

static void
test_fake_clock_makes_deadlines_exact(void **state)
{
    struct tl_state *st = *state;
    struct tl_timer t;
    static const int want[1] = {7};
    monotime_us deadline = tl_now_us + 2500;

    tl_timer_init(st, &t, 7);
    loop_timer_start(st->loop, &t.node, deadline, tl_record_cb);
    tl_now_us = deadline - 1;
    loop_run_once(st->loop, 0);
    assert_int_equal(loop_now_us(st->loop), deadline - 1);
    assert_int_equal(st->fired_count, 0);
    assert_true(loop_timer_armed(&t.node));
    tl_now_us = deadline;
    loop_run_once(st->loop, 0);
    tl_assert_fired(st, want, 1);
    assert_false(loop_timer_armed(&t.node));
    assert_int_equal(loop_timer_count(st->loop), 0);
}

static void
test_set_clock_reads_new_clock_at_once(void **state)
{
    struct tl_state *st = *state;

    tl_now_us = 42;
    loop_set_clock(st->loop, tl_fake_clock);
    assert_int_equal(loop_now_us(st->loop), 42);
    /* NULL restores the monotonic clock. */
    loop_set_clock(st->loop, NULL);
    assert_true(loop_now_us(st->loop) <= loop_clock_monotonic());
    assert_true(loop_now_us(st->loop) > 42);
    assert_int_equal(loop_timer_count(st->loop), 0);
}

/* Records loop_now_us() and moves the fake clock on, as slow work would. */
static void
tl_slow_cb(struct loop *loop, struct loop_timer *node)
{
    struct tl_timer *t = tl_timer_of(node);

    t->st->fired[t->st->fired_count++] = (int)(loop_now_us(loop) % 1000000);
    tl_now_us += 777;
}

static void
test_clock_is_read_once_per_iteration(void **state)
{
    struct tl_state *st = *state;
    struct tl_timer a;
    struct tl_timer b;

    tl_now_us = 5000000;
    loop_set_clock(st->loop, tl_fake_clock);
    tl_timer_init(st, &a, 1);
    tl_timer_init(st, &b, 2);
    loop_timer_start(st->loop, &a.node, tl_now_us, tl_slow_cb);
    loop_timer_start(st->loop, &b.node, tl_now_us, tl_slow_cb);
    loop_run_once(st->loop, 0);
    /* Both callbacks saw the time of the iteration's start, though the first moved the clock. */
    assert_int_equal(st->fired_count, 2);
    assert_int_equal(st->fired[0], 0);
    assert_int_equal(st->fired[1], 0);
    assert_int_equal(loop_timer_count(st->loop), 0);
}

static void
test_callback_stopping_another_due_timer_prevents_it(void **state)
{
    struct tl_state *st = *state;
    struct tl_timer first;
    struct tl_timer second;
    struct tl_timer third;
    static const int want[2] = {1, 3};

    tl_timer_init(st, &first, 1);
    tl_timer_init(st, &second, 2);
    tl_timer_init(st, &third, 3);
    first.victim = &second;
    loop_timer_start(st->loop, &first.node, tl_now_us + 10, tl_record_cb);
    loop_timer_start(st->loop, &second.node, tl_now_us + 20, tl_record_cb);
    loop_timer_start(st->loop, &third.node, tl_now_us + 30, tl_record_cb);
    /* All three are due in the same iteration; the first stops the second. */
    tl_now_us += 30;
    loop_run_once(st->loop, 0);
    tl_assert_fired(st, want, 2);
    assert_false(loop_timer_armed(&second.node));
    tl_now_us += 1000;
    loop_run_once(st->loop, 0);
    tl_assert_fired(st, want, 2);
    assert_int_equal(loop_timer_count(st->loop), 0);
}

static void
test_callback_rearming_itself_for_now_runs_next_iteration(void **state)
{
    struct tl_state *st = *state;
    struct tl_timer t;
    static const int want[2] = {9, 9};

    tl_timer_init(st, &t, 9);
    t.rearm_now = 1;
    loop_timer_start(st->loop, &t.node, tl_now_us, tl_record_cb);
    loop_run_once(st->loop, 0);
    tl_assert_fired(st, want, 1);
    assert_true(loop_timer_armed(&t.node));
    assert_int_equal(loop_timer_count(st->loop), 1);
    /* The clock did not move: it is due, and runs in the next iteration. */
    loop_run_once(st->loop, 0);
    tl_assert_fired(st, want, 2);
    assert_int_equal(loop_timer_count(st->loop), 0);
}

static void
test_restart_of_armed_timer_moves_it(void **state)
{
    struct tl_state *st = *state;
    struct tl_timer a;
    struct tl_timer b;
    static const int want[2] = {2, 1};

    tl_timer_init(st, &a, 1);
    tl_timer_init(st, &b, 2);
    loop_timer_start(st->loop, &a.node, tl_now_us + 10, tl_record_cb);
    loop_timer_start(st->loop, &b.node, tl_now_us + 20, tl_record_cb);
    loop_timer_start(st->loop, &a.node, tl_now_us + 30, tl_record_cb);
    assert_int_equal(loop_timer_count(st->loop), 2);
    tl_now_us += 30;
    loop_run_once(st->loop, 0);
    tl_assert_fired(st, want, 2);
    /* Stopping a timer that is not armed is harmless. */
    loop_timer_stop(st->loop, &a.node);
    assert_int_equal(loop_timer_count(st->loop), 0);
}

static void
test_far_future_timer_waits_the_full_max_timeout(void **state)
{
    struct tl_state *st = *state;
    struct tl_timer t;
    monotime_us start;
    monotime_us waited;

    tl_now_us = 0;
    loop_set_clock(st->loop, tl_fake_clock);
    tl_timer_init(st, &t, 1);
    loop_timer_start(st->loop, &t.node, UINT64_MAX, tl_record_cb);
    /* Nothing is due for ages, so the iteration sleeps its whole 50 ms (real time). */
    start = loop_clock_monotonic();
    loop_run_once(st->loop, 50);
    waited = loop_clock_monotonic() - start;
    if (waited < 45000) {
        print_error("loop_run_once(50 ms) returned after %llu us with a timer due at UINT64_MAX\n",
                    (unsigned long long)waited);
    }
    assert_true(waited >= 45000);
    assert_int_equal(st->fired_count, 0);
    loop_timer_stop(st->loop, &t.node);
    assert_int_equal(loop_timer_count(st->loop), 0);
}

/* ---- many timers ---- */

/* Many-timers state: every timer records its index into one shared log. */
struct tl_many {
    struct loop_timer node; /* armed in the loop */
    monotime_us deadline;   /* what it was started with */
    uint32_t start_order;   /* when it was started */
    uint8_t stopped;        /* 1 when the test stopped it */
};

static uint32_t *tl_many_log;    /* indices in firing order */
static size_t tl_many_log_count; /* entries of tl_many_log */

static void
tl_many_cb(struct loop *loop, struct loop_timer *node)
{
    struct tl_many *m = (struct tl_many *)((char *)node - offsetof(struct tl_many, node));

    (void)loop;
    tl_many_log[tl_many_log_count++] = m->start_order;
}

/* xorshift: deterministic "random" order, the same on every run. */
static uint32_t
tl_rand(uint32_t *seed)
{
    *seed ^= *seed << 13;
    *seed ^= *seed >> 17;
    *seed ^= *seed << 5;
    return *seed;
}

/*
 * Start TL_MANY_TIMERS timers with colliding deadlines in a shuffled order,
 * stop every @p stop_every-th (0: none), advance the clock in steps and
 * require that exactly the due, unstopped timers fire, by (deadline, start order).
 */
static void
tl_run_many(struct tl_state *st, uint32_t stop_every)
{
    struct tl_many *timers = calloc(TL_MANY_TIMERS, sizeof *timers);
    uint32_t *perm = malloc(TL_MANY_TIMERS * sizeof *perm);
    uint32_t seed = 2463534242u;
    monotime_us base = tl_now_us;
    size_t expected_total = 0;

    assert_non_null(timers);
    assert_non_null(perm);
    tl_many_log = calloc(TL_MANY_TIMERS, sizeof *tl_many_log);
    assert_non_null(tl_many_log);
    tl_many_log_count = 0;
    for (uint32_t i = 0; i < TL_MANY_TIMERS; i++) {
        perm[i] = i;
    }
    for (uint32_t i = TL_MANY_TIMERS - 1; i > 0; i--) {
        uint32_t j = tl_rand(&seed) % (i + 1);
        uint32_t tmp = perm[i];
        perm[i] = perm[j];
        perm[j] = tmp;
    }
    /* timers[k] is the k-th started; its deadline comes from the shuffle. */
    for (uint32_t k = 0; k < TL_MANY_TIMERS; k++) {
        timers[k].deadline = base + 1 + perm[k] % TL_MANY_SPAN_US;
        timers[k].start_order = k;
        loop_timer_init(&timers[k].node);
        loop_timer_start(st->loop, &timers[k].node, timers[k].deadline, tl_many_cb);
    }
    if (stop_every) {
        for (uint32_t k = 0; k < TL_MANY_TIMERS; k++) {
            if (tl_rand(&seed) % stop_every == 0) {
                loop_timer_stop(st->loop, &timers[k].node);
                timers[k].stopped = 1;
            }
        }
    }
    for (uint32_t k = 0; k < TL_MANY_TIMERS; k++) {
        expected_total += !timers[k].stopped;
    }
    assert_int_equal(loop_timer_count(st->loop), expected_total);

    for (int step = 1; step <= TL_MANY_STEPS; step++) {
        size_t due = 0;
        tl_now_us = base + (monotime_us)step * (TL_MANY_SPAN_US + 1) / TL_MANY_STEPS;
        loop_run_once(st->loop, 0);
        for (uint32_t k = 0; k < TL_MANY_TIMERS; k++) {
            due += !timers[k].stopped && timers[k].deadline <= tl_now_us;
        }
        if (tl_many_log_count != due) {
            print_error("at step %d: %zu timers fired, %zu were due\n", step, tl_many_log_count, due);
        }
        assert_int_equal(tl_many_log_count, due);
    }
    assert_int_equal(tl_many_log_count, expected_total);
    for (size_t i = 0; i < tl_many_log_count; i++) {
        const struct tl_many *cur = &timers[tl_many_log[i]];
        assert_false(cur->stopped);
        if (i > 0) {
            const struct tl_many *prev = &timers[tl_many_log[i - 1]];
            int in_order = prev->deadline < cur->deadline ||
                           (prev->deadline == cur->deadline && prev->start_order < cur->start_order);
            if (!in_order) {
                print_error("fired #%zu (deadline %llu, start %u) after #%zu (deadline %llu, start %u)\n", i,
                            (unsigned long long)cur->deadline, cur->start_order, i - 1,
                            (unsigned long long)prev->deadline, prev->start_order);
            }
            assert_true(in_order);
        }
    }
    assert_int_equal(loop_timer_count(st->loop), 0);
    free(tl_many_log);
    tl_many_log = NULL;
    free(perm);
    free(timers);
}

static void
test_100000_timers_started_in_random_order_fire_sorted(void **state)
{
    tl_run_many(*state, 0);
}

static void
test_100000_timers_with_random_third_stopped_fire_sorted(void **state)
{
    tl_run_many(*state, 3);
}

/* ---- descriptors ---- */

/* What an io callback saw. */
struct tl_io {
    int calls;       /* callbacks so far */
    int fd;          /* descriptor of the last call */
    uint32_t events; /* events of the last call */
    int other_fd;    /* a descriptor the callback unwatches, or -1 */
};

static void
tl_io_cb(struct loop *loop, int fd, uint32_t events, void *data)
{
    struct tl_io *io = data;

    io->calls++;
    io->fd = fd;
    io->events = events;
    if (io->other_fd >= 0) {
        loop_unwatch(loop, io->other_fd);
    }
}

static void
tl_pipe(int p[2])
{
    assert_int_equal(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
}

static void
test_watched_pipe_calls_back_with_read(void **state)
{
    struct tl_state *st = *state;
    struct tl_io io = {.other_fd = -1};
    int p[2];
    char byte = 'x';

    tl_pipe(p);
    assert_int_equal(loop_watch(st->loop, p[0], LOOP_READ, tl_io_cb, &io), FLEET_OK);
    loop_run_once(st->loop, 0);
    assert_int_equal(io.calls, 0);
    assert_int_equal(write(p[1], &byte, 1), 1);
    loop_run_once(st->loop, 0);
    assert_int_equal(io.calls, 1);
    assert_int_equal(io.fd, p[0]);
    assert_int_equal(io.events, LOOP_READ);
    loop_unwatch(st->loop, p[0]);
    close(p[0]);
    close(p[1]);
    assert_int_equal(loop_timer_count(st->loop), 0);
}

static void
test_watched_eventfd_calls_back_with_read(void **state)
{
    struct tl_state *st = *state;
    struct tl_io io = {.other_fd = -1};
    int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    uint64_t one = 1;

    assert_true(efd >= 0);
    assert_int_equal(loop_watch(st->loop, efd, LOOP_READ, tl_io_cb, &io), FLEET_OK);
    assert_int_equal(write(efd, &one, sizeof one), sizeof one);
    loop_run_once(st->loop, 0);
    assert_int_equal(io.calls, 1);
    assert_int_equal(io.fd, efd);
    assert_int_equal(io.events, LOOP_READ);
    loop_unwatch(st->loop, efd);
    close(efd);
    assert_int_equal(loop_timer_count(st->loop), 0);
}

static void
test_set_events_to_write_reports_writable(void **state)
{
    struct tl_state *st = *state;
    struct tl_io io = {.other_fd = -1};
    int p[2];

    tl_pipe(p);
    /* The write end never becomes readable. */
    assert_int_equal(loop_watch(st->loop, p[1], LOOP_READ, tl_io_cb, &io), FLEET_OK);
    loop_run_once(st->loop, 0);
    assert_int_equal(io.calls, 0);
    assert_int_equal(loop_set_events(st->loop, p[1], LOOP_WRITE), FLEET_OK);
    loop_run_once(st->loop, 0);
    assert_int_equal(io.calls, 1);
    assert_int_equal(io.fd, p[1]);
    assert_int_equal(io.events, LOOP_WRITE);
    /* Back to reading only: writability is no longer reported. */
    assert_int_equal(loop_set_events(st->loop, p[1], LOOP_READ), FLEET_OK);
    loop_run_once(st->loop, 0);
    assert_int_equal(io.calls, 1);
    loop_unwatch(st->loop, p[1]);
    close(p[0]);
    close(p[1]);
    assert_int_equal(loop_timer_count(st->loop), 0);
}

static void
test_unwatch_stops_callbacks(void **state)
{
    struct tl_state *st = *state;
    struct tl_io io = {.other_fd = -1};
    int p[2];
    char byte = 'x';

    tl_pipe(p);
    assert_int_equal(loop_watch(st->loop, p[0], LOOP_READ, tl_io_cb, &io), FLEET_OK);
    assert_int_equal(write(p[1], &byte, 1), 1);
    loop_unwatch(st->loop, p[0]);
    loop_run_once(st->loop, 0);
    assert_int_equal(io.calls, 0);
    /* Unwatching twice is harmless, and the fd can be watched again. */
    loop_unwatch(st->loop, p[0]);
    assert_int_equal(loop_watch(st->loop, p[0], LOOP_READ, tl_io_cb, &io), FLEET_OK);
    loop_run_once(st->loop, 0);
    assert_int_equal(io.calls, 1);
    loop_unwatch(st->loop, p[0]);
    close(p[0]);
    close(p[1]);
    assert_int_equal(loop_timer_count(st->loop), 0);
}

static void
test_rewatch_with_same_events_moves_callbacks_to_new_owner(void **state)
{
    struct tl_state *st = *state;
    struct tl_io first = {.other_fd = -1};
    struct tl_io second = {.other_fd = -1};
    uint32_t events = 0;
    int p[2];
    char byte = 'x';

    tl_pipe(p);
    assert_int_equal(loop_watching(st->loop, p[0], &events), 0);
    assert_int_equal(loop_watch(st->loop, p[0], LOOP_READ, tl_io_cb, &first), FLEET_OK);
    assert_int_equal(loop_watching(st->loop, p[0], &events), 1);
    assert_int_equal(events, LOOP_READ);
    /* Same events, new owner (no epoll_ctl): the next event goes to the new owner only. */
    assert_int_equal(loop_watch(st->loop, p[0], LOOP_READ, tl_io_cb, &second), FLEET_OK);
    assert_int_equal(write(p[1], &byte, 1), 1);
    loop_run_once(st->loop, 0);
    assert_int_equal(first.calls, 0);
    assert_int_equal(second.calls, 1);
    /* Other events still change the registration: the read end never becomes writable. */
    assert_int_equal(loop_watch(st->loop, p[0], LOOP_WRITE, tl_io_cb, &second), FLEET_OK);
    loop_run_once(st->loop, 0);
    assert_int_equal(second.calls, 1);
    loop_unwatch(st->loop, p[0]);
    assert_int_equal(loop_watching(st->loop, p[0], &events), 0);
    close(p[0]);
    close(p[1]);
}

static void
test_callback_unwatching_other_ready_fd_prevents_its_callback(void **state)
{
    struct tl_state *st = *state;
    struct tl_io io_a = {0};
    struct tl_io io_b = {0};
    int a[2];
    int b[2];
    char byte = 'x';

    tl_pipe(a);
    tl_pipe(b);
    io_a.other_fd = b[0];
    io_b.other_fd = a[0];
    assert_int_equal(loop_watch(st->loop, a[0], LOOP_READ, tl_io_cb, &io_a), FLEET_OK);
    assert_int_equal(loop_watch(st->loop, b[0], LOOP_READ, tl_io_cb, &io_b), FLEET_OK);
    assert_int_equal(write(a[1], &byte, 1), 1);
    assert_int_equal(write(b[1], &byte, 1), 1);
    /* Both are ready in one epoll batch; whichever runs first unwatches the other. */
    loop_run_once(st->loop, 0);
    assert_int_equal(io_a.calls + io_b.calls, 1);
    loop_unwatch(st->loop, a[0]);
    loop_unwatch(st->loop, b[0]);
    close(a[0]);
    close(a[1]);
    close(b[0]);
    close(b[1]);
    assert_int_equal(loop_timer_count(st->loop), 0);
}

static void
test_watch_beyond_max_fds_is_limit(void **state)
{
    struct tl_state *st = *state;
    struct tl_io io = {.other_fd = -1};

    assert_int_equal(loop_watch(st->loop, TL_MAX_FDS, LOOP_READ, tl_io_cb, &io), FLEET_ERR_LIMIT);
    assert_int_equal(loop_watch(st->loop, -1, LOOP_READ, tl_io_cb, &io), FLEET_ERR_LIMIT);
    assert_int_equal(loop_timer_count(st->loop), 0);
}

/* ---- before-sleep hook ---- */

static void
tl_hook_cb(struct loop *loop, void *data)
{
    struct tl_state *st = data;

    (void)loop;
    /* -1 marks the hook in the same log the timers write; the last slot keeps the latest call. */
    if (st->fired_count == TL_MAX_FIRED) {
        st->fired_count--;
    }
    st->fired[st->fired_count++] = -1;
}

static void
test_before_sleep_runs_after_due_timers_every_iteration(void **state)
{
    struct tl_state *st = *state;
    struct tl_timer t;
    static const int want[3] = {4, -1, -1};

    tl_timer_init(st, &t, 4);
    loop_set_before_sleep(st->loop, tl_hook_cb, st);
    loop_timer_start(st->loop, &t.node, tl_now_us, tl_record_cb);
    loop_run_once(st->loop, 0);
    loop_run_once(st->loop, 0);
    tl_assert_fired(st, want, 3);
    assert_int_equal(loop_timer_count(st->loop), 0);
}

/* ---- other threads ---- */

/* What the cross-thread tests share; written by the loop thread, read after the join. */
struct tl_cross {
    struct loop *loop;     /* the loop under test */
    pthread_t loop_thread; /* the thread running the loop */
    pthread_t ran_on[3];   /* thread each posted message ran on */
    int order[3];          /* message args in the order they ran */
    int ran;               /* messages run */
    int watchdog_fired;    /* 1 when the loop had to be stopped by the watchdog */
    int post_failed;       /* 1 when loop_post refused a message (set by the poster thread) */
};

static struct tl_cross tl_cross;

static void
tl_msg_cb(struct loop *loop, void *arg)
{
    tl_cross.ran_on[tl_cross.ran] = pthread_self();
    tl_cross.order[tl_cross.ran++] = (int)(intptr_t)arg;
    if (tl_cross.ran == 3) {
        loop_stop(loop);
    }
}

static void
tl_watchdog_cb(struct loop *loop, struct loop_timer *timer)
{
    (void)timer;
    tl_cross.watchdog_fired = 1;
    loop_stop(loop);
}

static void
tl_sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) && errno == EINTR) {
    }
}

static void *
tl_poster_main(void *arg)
{
    (void)arg;
    /* Let the loop block in epoll_wait first, so the post has to wake it. */
    tl_sleep_ms(20);
    /* cmocka's asserts must not run off the test's thread: report through a flag. */
    for (intptr_t i = 1; i <= 3; i++) {
        if (loop_post(tl_cross.loop, tl_msg_cb, (void *)i) != FLEET_OK) {
            tl_cross.post_failed = 1;
        }
    }
    return NULL;
}

static void *
tl_stopper_main(void *arg)
{
    (void)arg;
    tl_sleep_ms(20);
    loop_stop(tl_cross.loop);
    return NULL;
}

/* Run the loop on this thread with a real clock and a watchdog, while @p other runs. */
static void
tl_run_with_thread(struct tl_state *st, void *(*other)(void *))
{
    struct loop_timer watchdog;
    pthread_t thread;
    monotime_us start;
    monotime_us took;

    memset(&tl_cross, 0, sizeof tl_cross);
    tl_cross.loop = st->loop;
    tl_cross.loop_thread = pthread_self();
    loop_set_clock(st->loop, NULL);
    loop_timer_init(&watchdog);
    loop_timer_start(st->loop, &watchdog, loop_now_us(st->loop) + tl_multiplied(TL_WATCHDOG_US),
                     tl_watchdog_cb);
    start = loop_clock_monotonic();
    assert_int_equal(pthread_create(&thread, NULL, other, NULL), 0);
    loop_run(st->loop);
    took = loop_clock_monotonic() - start;
    assert_int_equal(pthread_join(thread, NULL), 0);
    loop_timer_stop(st->loop, &watchdog);
    /* A loop that missed the wake-up only returns when the watchdog's deadline ends its sleep. */
    if (tl_cross.watchdog_fired || took > tl_multiplied(TL_REACT_US)) {
        print_error("the loop took %llu us to react to the other thread (watchdog fired: %d)\n",
                    (unsigned long long)took, tl_cross.watchdog_fired);
    }
    assert_false(tl_cross.watchdog_fired);
    assert_true(took <= tl_multiplied(TL_REACT_US));
}

static void
test_post_from_other_thread_runs_on_loop_thread_in_order(void **state)
{
    struct tl_state *st = *state;

    tl_run_with_thread(st, tl_poster_main);
    assert_false(tl_cross.post_failed);
    assert_int_equal(tl_cross.ran, 3);
    for (int i = 0; i < 3; i++) {
        assert_true(pthread_equal(tl_cross.ran_on[i], tl_cross.loop_thread));
        assert_int_equal(tl_cross.order[i], i + 1);
    }
    assert_int_equal(loop_timer_count(st->loop), 0);
}

static void
test_stop_from_other_thread_makes_run_return(void **state)
{
    struct tl_state *st = *state;

    /* Before-sleep still runs once more after the stop, to flush output. */
    loop_set_before_sleep(st->loop, tl_hook_cb, st);
    tl_run_with_thread(st, tl_stopper_main);
    assert_true(st->fired_count >= 2);
    assert_int_equal(st->fired[st->fired_count - 1], -1);
    assert_int_equal(loop_timer_count(st->loop), 0);
}

static void
test_free_with_unrun_posted_message_releases_it(void **state)
{
    struct tl_state *st = *state;

    /* The message never runs; loop_free (in the teardown) must free it (ASan checks). */
    assert_int_equal(loop_post(st->loop, tl_msg_cb, NULL), FLEET_OK);
    assert_int_equal(loop_timer_count(st->loop), 0);
}

#define TL_TEST(f) cmocka_unit_test_setup_teardown(f, tl_case_setup, tl_case_teardown)

int
main(void)
{
    const struct CMUnitTest tests[] = {
        TL_TEST(test_timers_fire_in_deadline_order_and_equal_deadlines_in_start_order),
        TL_TEST(test_fake_clock_makes_deadlines_exact),
        TL_TEST(test_set_clock_reads_new_clock_at_once),
        TL_TEST(test_clock_is_read_once_per_iteration),
        TL_TEST(test_callback_stopping_another_due_timer_prevents_it),
        TL_TEST(test_callback_rearming_itself_for_now_runs_next_iteration),
        TL_TEST(test_restart_of_armed_timer_moves_it),
        TL_TEST(test_far_future_timer_waits_the_full_max_timeout),
        TL_TEST(test_100000_timers_started_in_random_order_fire_sorted),
        TL_TEST(test_100000_timers_with_random_third_stopped_fire_sorted),
        TL_TEST(test_watched_pipe_calls_back_with_read),
        TL_TEST(test_watched_eventfd_calls_back_with_read),
        TL_TEST(test_set_events_to_write_reports_writable),
        TL_TEST(test_unwatch_stops_callbacks),
        TL_TEST(test_rewatch_with_same_events_moves_callbacks_to_new_owner),
        TL_TEST(test_callback_unwatching_other_ready_fd_prevents_its_callback),
        TL_TEST(test_watch_beyond_max_fds_is_limit),
        TL_TEST(test_before_sleep_runs_after_due_timers_every_iteration),
        TL_TEST(test_post_from_other_thread_runs_on_loop_thread_in_order),
        TL_TEST(test_stop_from_other_thread_makes_run_return),
        TL_TEST(test_free_with_unrun_posted_message_releases_it),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
