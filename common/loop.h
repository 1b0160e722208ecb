/*
 * One worker's event loop: epoll for descriptors, a min-heap of timers,
 * a thread-safe inbox for messages from other threads, and a before-sleep
 * hook where queued replies are flushed. A loop belongs to one thread;
 * only loop_post() and loop_stop() may be called from others.
 */
#ifndef FLEET_LOOP_H
#define FLEET_LOOP_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* Monotonic time in microseconds since an arbitrary origin. */
typedef uint64_t monotime_us;

enum loop_events {
    LOOP_READ = 1,  /* readable, or peer closed */
    LOOP_WRITE = 2, /* writable */
};

struct loop;
struct loop_timer;

/* Called with the events that fired; LOOP_READ also reports hang-up and errors. */
typedef void (*loop_io_cb)(struct loop *loop, int fd, uint32_t events, void *data);
typedef void (*loop_timer_cb)(struct loop *loop, struct loop_timer *timer);
typedef void (*loop_msg_cb)(struct loop *loop, void *arg);
typedef void (*loop_hook_cb)(struct loop *loop, void *data);
typedef monotime_us (*loop_clock_fn)(void);

/* A timer node, embedded in its owner; the heap links it by index. */
struct loop_timer {
    monotime_us deadline_us; /* when it fires; valid while armed */
    uint64_t seq;            /* start order, so equal deadlines fire in start order */
    size_t heap_index;       /* position in the loop's heap; SIZE_MAX when not armed */
    loop_timer_cb cb;        /* what to run */
};

/**
 * @brief Create a loop.
 * @param[in] max_fds Descriptors are indexed up to this value (RLIMIT_NOFILE).
 * @return The loop or NULL (errno set).
 */
struct loop *loop_new(int max_fds);

/** @brief Free a stopped loop; watched descriptors are not closed. Accepts NULL. */
void loop_free(struct loop *loop);

/**
 * @brief Watch @p fd for @p events, or change the events or the callback of a watched fd (no system
 *        call when the events are unchanged).
 * @return FLEET_OK or FLEET_ERR_SYS / FLEET_ERR_LIMIT (fd beyond max_fds).
 */
enum fleet_err loop_watch(struct loop *loop, int fd, uint32_t events, loop_io_cb cb, void *data);

/** @return 1 if @p fd is watched (its events in @p events), else 0. */
int loop_watching(const struct loop *loop, int fd, uint32_t *events);

/** @brief Change only the event mask of a watched fd. */
enum fleet_err loop_set_events(struct loop *loop, int fd, uint32_t events);

/** @brief Stop watching @p fd (call before closing it). */
void loop_unwatch(struct loop *loop, int fd);

/** @brief Arm @p timer to fire at @p deadline_us (re-arms if already armed). */
void loop_timer_start(struct loop *loop, struct loop_timer *timer, monotime_us deadline_us, loop_timer_cb cb);

/** @brief Disarm; harmless when not armed. */
void loop_timer_stop(struct loop *loop, struct loop_timer *timer);

/** @brief Initialise a timer node as not armed. */
void loop_timer_init(struct loop_timer *timer);

/** @return 1 when armed. */
int loop_timer_armed(const struct loop_timer *timer);

/** @return The loop's time, read once per iteration. */
monotime_us loop_now_us(const struct loop *loop);

/** @brief The process's monotonic clock (CLOCK_MONOTONIC). */
monotime_us loop_clock_monotonic(void);

/** @brief Replace the clock (tests); NULL restores the monotonic clock. */
void loop_set_clock(struct loop *loop, loop_clock_fn clock);

/** @brief Run @p cb before every sleep (flush queued output). */
void loop_set_before_sleep(struct loop *loop, loop_hook_cb cb, void *data);

/**
 * @brief Queue @p cb(arg) to run on the loop's thread. Thread-safe.
 * @return FLEET_OK or FLEET_ERR_NOMEM.
 */
enum fleet_err loop_post(struct loop *loop, loop_msg_cb cb, void *arg);

/** @brief Run what loop_post() queued, now (after the loop's thread ended: nothing posted is lost). */
void loop_run_posted(struct loop *loop);

/** @brief Run until loop_stop(). */
void loop_run(struct loop *loop);

/** @brief Run one iteration, waiting at most @p timeout_ms (-1: until an event). Tests use it. */
void loop_run_once(struct loop *loop, int timeout_ms);

/** @brief Make loop_run() return after the current iteration. Thread-safe. */
void loop_stop(struct loop *loop);

/** @return Number of armed timers (tests assert nothing is left). */
size_t loop_timer_count(const struct loop *loop);

#endif
