/*
 * mount --reconnect --events (mount_events.h): the fetch thread, the hand
 * over of its answers to the loop's thread, and the polls of the run's own
 * sessions. The thread owns the fetcher (its handle and counters, read by
 * the loop's thread only after the join); the lock guards only the answer
 * being handed over; the log and its tracker are the loop's thread's.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "event_watch.h"
#include "loop.h"
#include "mount_events.h"
#include "run.h"

/* Limit of one events fetch: the fleet is on a LAN or loopback; the thread's join waits at most this. */
#define MEV_FETCH_LIMIT_MS 2000L
/* Longest node-id: an IPv6 address's text and "-sim-device". */
#define MEV_NODE_ID_BYTES (NETADDR_TEXT_BYTES + 16)

struct mev {
    const struct stress_options *o; /* parameters */
    struct evw_fetcher evf;         /* the fetch thread's; read by others after the join */
    struct evw_log evl;             /* the events taken and their recovery; the loop's thread's */
    char **node_ids;                /* per device, its node-id */
    monotime_us start_us;           /* the run's clock's 0 */
    pthread_t thread;               /* the fetch thread; valid with running */
    int running;                    /* 1 while the thread was started and not joined */
    pthread_mutex_t lock;           /* guards pend, have_pend and stop */
    pthread_cond_t wake;            /* the thread's sleep, cut short by stop */
    struct fev_answer pend;         /* answers fetched not yet taken, events appended; under lock */
    int have_pend;                  /* 1 when pend holds an answer; under lock */
    int stop;                       /* 1: the thread ends; under lock */
};

static double
since_start_s(const struct mev *m)
{
    return (double)(loop_clock_monotonic() - m->start_us) / 1e6;
}

/* Append @p a's events to the pending answer and keep its seed and scenario; @p a is emptied. Under lock. */
static void
hand_over(struct mev *m, struct fev_answer *a)
{
    struct fev_event *more = NULL;
    struct fev_event *events = m->pend.events;
    size_t count = m->pend.event_count;

    if (a->event_count) {
        more = realloc(events, (count + a->event_count) * sizeof *more);
        if (!more) {
            fev_answer_free(a); /* these events are lost; the tracker never saw them */
            return;
        }
        memcpy(more + count, a->events, a->event_count * sizeof *more);
        events = more;
        count += a->event_count;
        free(a->events);
        a->events = NULL;
        a->event_count = 0;
    }
    m->pend = *a; /* the newest seed and scenario */
    m->pend.events = events;
    m->pend.event_count = count;
    m->have_pend = 1;
}

static void *
fetch_main(void *arg)
{
    struct mev *m = arg;
    monotime_us interval_us = (monotime_us)(m->o->events_interval_s * 1e6);
    monotime_us next_us = m->start_us;

    pthread_mutex_lock(&m->lock);
    while (!m->stop && !run_interrupted()) {
        struct fev_answer a;
        struct timespec ts;
        monotime_us now;

        pthread_mutex_unlock(&m->lock);
        if (evw_fetch(&m->evf, since_start_s(m), &a)) {
            pthread_mutex_lock(&m->lock);
            hand_over(m, &a);
            pthread_mutex_unlock(&m->lock);
        }
        fev_answer_free(&a);
        now = loop_clock_monotonic();
        do {
            next_us += interval_us;
        } while (next_us < now);
        ts.tv_sec = (time_t)(next_us / 1000000u);
        ts.tv_nsec = (long)(next_us % 1000000u) * 1000;
        pthread_mutex_lock(&m->lock);
        while (!m->stop && loop_clock_monotonic() < next_us) {
            pthread_cond_timedwait(&m->wake, &m->lock, &ts); /* on CLOCK_MONOTONIC (mev_start) */
        }
    }
    pthread_mutex_unlock(&m->lock);
    return NULL;
}

static void
join(struct mev *m)
{
    if (!m->running) {
        return;
    }
    pthread_mutex_lock(&m->lock);
    m->stop = 1;
    pthread_cond_signal(&m->wake);
    pthread_mutex_unlock(&m->lock);
    pthread_join(m->thread, NULL);
    m->running = 0;
}

struct mev *
mev_start(const struct stress_options *o)
{
    struct mev *m = calloc(1, sizeof *m);
    pthread_condattr_t attr;
    struct timespec wall;

    if (!m) {
        fprintf(stderr, "fleetsim-stress: out of memory for --events\n");
        return NULL;
    }
    m->o = o;
    pthread_mutex_init(&m->lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&m->wake, &attr);
    pthread_condattr_destroy(&attr);
    m->node_ids = calloc(o->device_count ? o->device_count : 1, sizeof *m->node_ids);
    for (uint32_t i = 0; m->node_ids && i < o->device_count; i++) {
        uint32_t addr;
        uint16_t port;
        run_target(o, i, &addr, &port);
        m->node_ids[i] = malloc(MEV_NODE_ID_BYTES);
        if (!m->node_ids[i]) {
            break;
        }
        if (o->ip_per_device) {
            char text[NETADDR_TEXT_BYTES];
            snprintf(m->node_ids[i], MEV_NODE_ID_BYTES, "%s-sim-device",
                     netaddr_text(&o->ip_fam, addr, text, sizeof text));
        } else {
            snprintf(m->node_ids[i], MEV_NODE_ID_BYTES, "%u-sim-device", (unsigned)port);
        }
    }
    if (!m->node_ids || (o->device_count && !m->node_ids[o->device_count - 1])) {
        fprintf(stderr, "fleetsim-stress: out of memory for --events\n");
        mev_free(m);
        return NULL;
    }
    if (evw_fetcher_init(&m->evf, o->events_url, o->events_token_file, MEV_FETCH_LIMIT_MS, 0)) {
        mev_free(m);
        return NULL;
    }
    clock_gettime(CLOCK_REALTIME, &wall); /* the fleet's event times are wall-clock */
    m->start_us = loop_clock_monotonic();
    evw_log_init(&m->evl, (int64_t)wall.tv_sec * 1000 + wall.tv_nsec / 1000000, 0);
    if (pthread_create(&m->thread, NULL, fetch_main, m)) {
        fprintf(stderr, "fleetsim-stress: cannot start the --events thread\n");
        mev_free(m);
        return NULL;
    }
    m->running = 1;
    return m;
}

/* Take what the thread handed over. @return 0 or -1 when memory ran out. */
static int
take(struct mev *m)
{
    struct fev_answer a;
    int have;

    pthread_mutex_lock(&m->lock);
    a = m->pend;
    have = m->have_pend;
    memset(&m->pend, 0, sizeof m->pend);
    m->have_pend = 0;
    pthread_mutex_unlock(&m->lock);
    return have ? evw_take(&m->evl, &a) : 0;
}

int
mev_poll(struct mev *m, mev_up_fn up, void *user)
{
    double t_s;

    if (take(m)) {
        return -1;
    }
    t_s = since_start_s(m);
    evr_poll_begin(&m->evl.tr);
    for (uint32_t i = 0; i < m->o->device_count; i++) {
        evr_on_node(&m->evl.tr, m->node_ids[i], up(user, i) ? TOPO_CONNECTED : TOPO_CONNECTING);
    }
    evr_poll_end(&m->evl.tr, t_s);
    return 0;
}

int
mev_stop(struct mev *m, mev_up_fn up, void *user)
{
    int rc;

    join(m);
    rc = mev_poll(m, up, user);
    evr_finish(&m->evl.tr);
    return rc;
}

void
mev_print(const struct mev *m)
{
    evw_print(&m->evl, &m->evf);
}

void
mev_manifest(struct sbuf *b, const struct mev *m)
{
    evw_manifest(b, &m->evl, &m->evf);
}

uint32_t
mev_unhealed(const struct mev *m)
{
    return evw_report_unhealed(&m->evl);
}

void
mev_free(struct mev *m)
{
    if (!m) {
        return;
    }
    join(m);
    for (uint32_t i = 0; m->node_ids && i < m->o->device_count; i++) {
        free(m->node_ids[i]);
    }
    free(m->node_ids);
    fev_answer_free(&m->pend);
    evw_log_free(&m->evl);
    evw_fetcher_close(&m->evf);
    pthread_mutex_destroy(&m->lock);
    pthread_cond_destroy(&m->wake);
    free(m);
}
