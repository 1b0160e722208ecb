/*
 * The worker event loop. Each iteration: read the clock once, collect and
 * run due timers, run the before-sleep hook (flush output), sleep in
 * epoll_wait until the earliest timer, then dispatch descriptor events
 * and cross-thread messages. Timers live in a binary min-heap of pointers
 * to nodes embedded in their owners, ordered by (deadline, start order).
 */
#include "loop.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

/* Events taken from the kernel per epoll_wait; more simply wait for the next round. */
#define LOOP_MAX_EVENTS 256
/* heap_index of a timer not armed, and of one collected as due but not yet run. */
#define TIMER_IDLE      SIZE_MAX
#define TIMER_COLLECTED (SIZE_MAX - 1)

struct loop_fd {
    loop_io_cb cb;   /* handler; NULL when the fd is not watched */
    void *data;      /* handler's argument */
    uint32_t events; /* LOOP_READ | LOOP_WRITE currently requested */
};

struct loop_msg {
    loop_msg_cb cb;        /* runs on the loop's thread */
    void *arg;             /* its argument */
    struct loop_msg *next; /* inbox order */
};

struct loop {
    int epfd;                    /* epoll instance */
    int wakefd;                  /* eventfd that wakes the loop for posts and stop */
    int max_fds;                 /* size of fds[] */
    struct loop_fd *fds;         /* indexed by descriptor */
    struct loop_timer **heap;    /* min-heap of armed timers */
    size_t heap_len;             /* armed timers */
    size_t heap_cap;             /* allocated heap slots */
    uint64_t timer_seq;          /* next start order */
    monotime_us now_us;          /* clock read at the start of the iteration */
    loop_clock_fn clock;         /* time source, replaceable by tests */
    loop_hook_cb before_sleep;   /* flush hook */
    void *before_sleep_data;     /* its argument */
    atomic_int stop;             /* set by loop_stop() */
    pthread_mutex_t inbox_lock;  /* guards inbox_head/tail */
    struct loop_msg *inbox_head; /* messages from other threads, oldest first */
    struct loop_msg *inbox_tail; /* last message */
};

monotime_us
loop_clock_monotonic(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (monotime_us)ts.tv_sec * 1000000u + (monotime_us)ts.tv_nsec / 1000u;
}

struct loop *
loop_new(int max_fds)
{
    struct loop *loop = calloc(1, sizeof *loop);
    struct epoll_event ev = {.events = EPOLLIN};

    if (!loop) {
        return NULL;
    }
    loop->epfd = -1;
    loop->wakefd = -1;
    loop->max_fds = max_fds;
    loop->clock = loop_clock_monotonic;
    pthread_mutex_init(&loop->inbox_lock, NULL);
    loop->fds = calloc((size_t)max_fds, sizeof *loop->fds);
    if (!loop->fds) {
        goto error;
    }
    loop->epfd = epoll_create1(EPOLL_CLOEXEC);
    loop->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (loop->epfd < 0 || loop->wakefd < 0) {
        goto error;
    }
    /* The wake fd is not in fds[]: it is recognised by its data.fd value. */
    ev.data.fd = loop->wakefd;
    if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, loop->wakefd, &ev) < 0) {
        goto error;
    }
    loop->now_us = loop->clock();
    return loop;

error:
    loop_free(loop);
    return NULL;
}

void
loop_free(struct loop *loop)
{
    struct loop_msg *m;

    if (!loop) {
        return;
    }
    while ((m = loop->inbox_head)) {
        loop->inbox_head = m->next;
        free(m);
    }
    if (loop->epfd >= 0) {
        close(loop->epfd);
    }
    if (loop->wakefd >= 0) {
        close(loop->wakefd);
    }
    pthread_mutex_destroy(&loop->inbox_lock);
    free(loop->fds);
    free(loop->heap);
    free(loop);
}

static uint32_t
to_epoll(uint32_t events)
{
    return (events & LOOP_READ ? EPOLLIN | EPOLLRDHUP : 0) | (events & LOOP_WRITE ? EPOLLOUT : 0);
}

enum fleet_err
loop_watch(struct loop *loop, int fd, uint32_t events, loop_io_cb cb, void *data)
{
    struct epoll_event ev = {.events = to_epoll(events), .data.fd = fd};
    int op;

    if (fd < 0 || fd >= loop->max_fds) {
        return FLEET_ERR_LIMIT;
    }
    op = loop->fds[fd].cb ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    /* The same events for a new owner need no system call (libcurl hands a connection from transfer to
     * transfer this way). */
    if ((op == EPOLL_CTL_ADD || loop->fds[fd].events != events) && epoll_ctl(loop->epfd, op, fd, &ev) < 0) {
        return FLEET_ERR_SYS;
    }
    loop->fds[fd] = (struct loop_fd){.cb = cb, .data = data, .events = events};
    return FLEET_OK;
}

int
loop_watching(const struct loop *loop, int fd, uint32_t *events)
{
    if (fd < 0 || fd >= loop->max_fds || !loop->fds[fd].cb) {
        return 0;
    }
    *events = loop->fds[fd].events;
    return 1;
}

enum fleet_err
loop_set_events(struct loop *loop, int fd, uint32_t events)
{
    struct epoll_event ev = {.events = to_epoll(events), .data.fd = fd};

    if (loop->fds[fd].events == events) {
        return FLEET_OK;
    }
    if (epoll_ctl(loop->epfd, EPOLL_CTL_MOD, fd, &ev) < 0) {
        return FLEET_ERR_SYS;
    }
    loop->fds[fd].events = events;
    return FLEET_OK;
}

void
loop_unwatch(struct loop *loop, int fd)
{
    if (fd < 0 || fd >= loop->max_fds || !loop->fds[fd].cb) {
        return;
    }
    epoll_ctl(loop->epfd, EPOLL_CTL_DEL, fd, NULL);
    memset(&loop->fds[fd], 0, sizeof loop->fds[fd]);
}

/* Heap order: earlier deadline first, then earlier start. */
static int
timer_less(const struct loop_timer *a, const struct loop_timer *b)
{
    return a->deadline_us < b->deadline_us || (a->deadline_us == b->deadline_us && a->seq < b->seq);
}

static void
heap_place(struct loop *loop, size_t i, struct loop_timer *t)
{
    loop->heap[i] = t;
    t->heap_index = i;
}

static void
heap_sift_up(struct loop *loop, size_t i)
{
    struct loop_timer *t = loop->heap[i];

    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!timer_less(t, loop->heap[parent])) {
            break;
        }
        heap_place(loop, i, loop->heap[parent]);
        i = parent;
    }
    heap_place(loop, i, t);
}

static void
heap_sift_down(struct loop *loop, size_t i)
{
    struct loop_timer *t = loop->heap[i];

    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= loop->heap_len) {
            break;
        }
        if (child + 1 < loop->heap_len && timer_less(loop->heap[child + 1], loop->heap[child])) {
            child++;
        }
        if (!timer_less(loop->heap[child], t)) {
            break;
        }
        heap_place(loop, i, loop->heap[child]);
        i = child;
    }
    heap_place(loop, i, t);
}

void
loop_timer_init(struct loop_timer *timer)
{
    memset(timer, 0, sizeof *timer);
    timer->heap_index = TIMER_IDLE;
}

int
loop_timer_armed(const struct loop_timer *timer)
{
    return timer->heap_index != TIMER_IDLE;
}

void
loop_timer_stop(struct loop *loop, struct loop_timer *timer)
{
    size_t i = timer->heap_index;
    struct loop_timer *last;

    timer->heap_index = TIMER_IDLE;
    if (i == TIMER_IDLE || i == TIMER_COLLECTED) {
        return;
    }
    last = loop->heap[--loop->heap_len];
    if (last == timer) {
        return;
    }
    heap_place(loop, i, last);
    heap_sift_down(loop, i);
    heap_sift_up(loop, last->heap_index);
}

void
loop_timer_start(struct loop *loop, struct loop_timer *timer, monotime_us deadline_us, loop_timer_cb cb)
{
    loop_timer_stop(loop, timer);
    if (loop->heap_len == loop->heap_cap) {
        size_t cap = loop->heap_cap ? loop->heap_cap * 2 : 64;
        struct loop_timer **heap = realloc(loop->heap, cap * sizeof *heap);
        /* Losing a timer silently would stall a device: out of memory here is fatal. */
        if (!heap) {
            abort();
        }
        loop->heap = heap;
        loop->heap_cap = cap;
    }
    timer->deadline_us = deadline_us;
    timer->seq = loop->timer_seq++;
    timer->cb = cb;
    heap_place(loop, loop->heap_len++, timer);
    heap_sift_up(loop, timer->heap_index);
}

size_t
loop_timer_count(const struct loop *loop)
{
    return loop->heap_len;
}

monotime_us
loop_now_us(const struct loop *loop)
{
    return loop->now_us;
}

void
loop_set_clock(struct loop *loop, loop_clock_fn clock)
{
    loop->clock = clock ? clock : loop_clock_monotonic;
    loop->now_us = loop->clock();
}

void
loop_set_before_sleep(struct loop *loop, loop_hook_cb cb, void *data)
{
    loop->before_sleep = cb;
    loop->before_sleep_data = data;
}

static void
wake(struct loop *loop)
{
    uint64_t one = 1;

    /* EAGAIN means the counter is already non-zero: the loop will wake anyway. */
    if (write(loop->wakefd, &one, sizeof one) < 0 && errno != EAGAIN) {
        abort();
    }
}

enum fleet_err
loop_post(struct loop *loop, loop_msg_cb cb, void *arg)
{
    struct loop_msg *m = malloc(sizeof *m);

    if (!m) {
        return FLEET_ERR_NOMEM;
    }
    *m = (struct loop_msg){.cb = cb, .arg = arg};
    pthread_mutex_lock(&loop->inbox_lock);
    if (loop->inbox_tail) {
        loop->inbox_tail->next = m;
    } else {
        loop->inbox_head = m;
    }
    loop->inbox_tail = m;
    pthread_mutex_unlock(&loop->inbox_lock);
    wake(loop);
    return FLEET_OK;
}

void
loop_stop(struct loop *loop)
{
    atomic_store(&loop->stop, 1);
    wake(loop);
}

static void
drain_inbox(struct loop *loop)
{
    uint64_t count;
    struct loop_msg *m;

    if (read(loop->wakefd, &count, sizeof count) < 0 && errno != EAGAIN) {
        abort();
    }
    pthread_mutex_lock(&loop->inbox_lock);
    m = loop->inbox_head;
    loop->inbox_head = loop->inbox_tail = NULL;
    pthread_mutex_unlock(&loop->inbox_lock);
    while (m) {
        struct loop_msg *next = m->next;
        m->cb(loop, m->arg);
        free(m);
        m = next;
    }
}

void
loop_run_posted(struct loop *loop)
{
    drain_inbox(loop);
}

/*
 * Collect every due timer first, then run them: a callback may start or stop
 * any timer (itself included) without disturbing this round. A timer started
 * for "now" by a callback runs in the next iteration, which bounds the work.
 */
static void
run_timers(struct loop *loop)
{
    struct loop_timer *due_small[64];
    struct loop_timer **due = due_small;
    size_t n = 0;
    size_t cap = sizeof due_small / sizeof due_small[0];

    while (loop->heap_len && loop->heap[0]->deadline_us <= loop->now_us) {
        struct loop_timer *t = loop->heap[0];
        loop_timer_stop(loop, t);
        if (n == cap) {
            struct loop_timer **bigger = malloc(cap * 2 * sizeof *bigger);
            if (!bigger) {
                abort();
            }
            memcpy(bigger, due, n * sizeof *due);
            if (due != due_small) {
                free(due);
            }
            due = bigger;
            cap *= 2;
        }
        /* Mark as "collected" so that a stop from an earlier callback can cancel it. */
        t->heap_index = TIMER_COLLECTED;
        due[n++] = t;
    }
    for (size_t i = 0; i < n; i++) {
        struct loop_timer *t = due[i];
        if (t->heap_index != TIMER_COLLECTED) {
            continue; /* stopped or re-armed by an earlier callback */
        }
        t->heap_index = TIMER_IDLE;
        t->cb(loop, t);
    }
    if (due != due_small) {
        free(due);
    }
}

static int
timeout_ms(const struct loop *loop, int max_ms)
{
    monotime_us wait_us;

    if (!loop->heap_len) {
        return max_ms;
    }
    if (loop->heap[0]->deadline_us <= loop->now_us) {
        return 0;
    }
    wait_us = loop->heap[0]->deadline_us - loop->now_us;
    /* Round up (without overflow): waking early only to find nothing due would spin. */
    wait_us = wait_us / 1000 + (wait_us % 1000 != 0);
    if (wait_us > INT_MAX) {
        wait_us = INT_MAX;
    }
    if (max_ms >= 0 && (int)wait_us > max_ms) {
        return max_ms;
    }
    return (int)wait_us;
}

void
loop_run_once(struct loop *loop, int max_timeout_ms)
{
    struct epoll_event events[LOOP_MAX_EVENTS];
    int n;

    loop->now_us = loop->clock();
    run_timers(loop);
    if (loop->before_sleep) {
        loop->before_sleep(loop, loop->before_sleep_data);
    }
    n = epoll_wait(loop->epfd, events, LOOP_MAX_EVENTS,
                   atomic_load(&loop->stop) ? 0 : timeout_ms(loop, max_timeout_ms));
    if (n < 0) {
        if (errno == EINTR) {
            return;
        }
        abort();
    }
    loop->now_us = loop->clock();
    for (int i = 0; i < n; i++) {
        int fd = events[i].data.fd;
        uint32_t fired = 0;
        struct loop_fd *entry;

        if (fd == loop->wakefd) {
            drain_inbox(loop);
            continue;
        }
        /* Refetch: an earlier callback may have unwatched this fd. */
        entry = &loop->fds[fd];
        if (!entry->cb) {
            continue;
        }
        if (events[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
            fired |= LOOP_READ;
        }
        if (events[i].events & (EPOLLOUT | EPOLLHUP | EPOLLERR)) {
            fired |= LOOP_WRITE;
        }
        fired &= entry->events | ((events[i].events & (EPOLLHUP | EPOLLERR)) ? LOOP_READ : 0);
        if (fired) {
            entry->cb(loop, fd, fired, entry->data);
        }
    }
}

void
loop_run(struct loop *loop)
{
    while (!atomic_load(&loop->stop)) {
        loop_run_once(loop, -1);
    }
    if (loop->before_sleep) {
        loop->before_sleep(loop, loop->before_sleep_data);
    }
}
