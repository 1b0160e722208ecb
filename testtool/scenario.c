/*
 * Running a scenario; see scenario.h. One thread keeps every event's next
 * offset, sleeps on a condition until the earliest one (or a stop), and
 * carries it out with fact_run(), as the control API would. The offsets
 * are taken from the start on the monotonic clock and are not shifted by
 * an action that takes long: an occurrence that is late runs at once, and
 * the log says how late. Every choice that could differ between two runs
 * (a share's devices, a Poisson gap) is drawn from the scenario's seed,
 * the event's name and the occurrence's number only.
 */
#include "scenario.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "action_log.h"
#include "log.h"
#include "loop.h"

/* splitmix64's finaliser. */
static uint64_t
mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

uint64_t
scenario_occurrence_seed(uint64_t seed, const char *name, uint32_t k)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a of the name */

    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        h = (h ^ *p) * 0x100000001b3ull;
    }
    return mix(mix(seed ^ h) + k);
}

uint64_t
scenario_next_offset(const struct scenario_event *ev, uint64_t seed, uint32_t k, uint64_t prev_ms)
{
    uint64_t next;

    if (ev->when == SCENARIO_AT || (ev->max_count && k + 1 >= ev->max_count)) {
        return UINT64_MAX;
    }
    if (ev->when == SCENARIO_EVERY) {
        next = ev->from_ms + (uint64_t)(k + 1) * ev->period_ms;
    } else {
        /* An exponential gap: -ln(1 - u) times the mean, u drawn for this occurrence. */
        double u =
            (double)(scenario_occurrence_seed(seed ^ 0x9015u, ev->name, k + 1) >> 11) / 9007199254740992.0;
        next = prev_ms + (uint64_t)(-log1p(-u) * (double)ev->period_ms);
    }
    return next > ev->until_ms ? UINT64_MAX : next;
}

/* The first occurrence's offset. */
static uint64_t
first_offset(const struct scenario_event *ev, uint64_t seed)
{
    uint64_t first;

    if (ev->when == SCENARIO_AT) {
        return ev->at_ms;
    }
    if (ev->when == SCENARIO_EVERY) {
        first = ev->from_ms;
    } else {
        double u = (double)(scenario_occurrence_seed(seed ^ 0x9015u, ev->name, 0) >> 11) / 9007199254740992.0;
        first = ev->from_ms + (uint64_t)(-log1p(-u) * (double)ev->period_ms);
    }
    return first > ev->until_ms ? UINT64_MAX : first;
}

static uint64_t
elapsed_ms(monotime_us start_us)
{
    return (uint64_t)((loop_clock_monotonic() - start_us) / 1000);
}

/* Sleep until offset @p due_ms or a stop. @return 1 when stopped. */
static int
sleep_until(struct scenario *sc, monotime_us start_us, uint64_t due_ms)
{
    struct timespec ts;
    int stop;

    pthread_mutex_lock(&sc->lock);
    while (!sc->stop && elapsed_ms(start_us) < due_ms) {
        uint64_t left_ms = due_ms - elapsed_ms(start_us);
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_sec += (time_t)(left_ms / 1000);
        ts.tv_nsec += (long)(left_ms % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&sc->cond, &sc->lock, &ts);
    }
    stop = sc->stop;
    pthread_mutex_unlock(&sc->lock);
    return stop;
}

/* Keep the devices a down took, to bring them up at @p due_ms. */
static void
remember_down(struct scenario *sc, uint32_t event, uint64_t due_ms, struct fact_outcome *done)
{
    struct scenario_pending *grown;

    if (sc->pending_count == SCENARIO_MAX_PENDING ||
        !(grown = realloc(sc->pending, (sc->pending_count + 1) * sizeof *grown))) {
        log_warn(
            "scenario: event \"%s\": too many downs waiting for their revert-after; these %u devices stay "
            "down",
            sc->events[event].name, (unsigned)done->count);
        return;
    }
    sc->pending = grown;
    sc->pending[sc->pending_count++] =
        (struct scenario_pending){.due_ms = due_ms, .idx = done->idx, .count = done->count, .event = event};
    done->idx = NULL; /* now the pending entry's */
}

/* Run occurrence of event @p e now (offset @p now_ms, due at @p due_ms). */
static void
run_occurrence(struct scenario *sc, uint32_t e, uint64_t due_ms, uint64_t now_ms)
{
    struct scenario_event *ev = &sc->events[e];
    struct fact_request rq = ev->rq;
    struct fact_outcome done;
    char err[300];
    unsigned status;

    rq.seed = scenario_occurrence_seed(sc->seed, ev->name, ev->occurrences);
    status = fact_run(sc->fleet, &rq, &done, err, sizeof err);
    if (status) {
        sc->failed++;
        log_warn("scenario: event \"%s\" #%u (%s): %s", ev->name, (unsigned)ev->occurrences + 1,
                 action_log_kind_name(rq.params.kind), err);
    } else {
        sc->done++;
        log_info("scenario: event \"%s\" #%u at %.3f s: %s on %u devices%s%s", ev->name,
                 (unsigned)ev->occurrences + 1, (double)now_ms / 1000.0, action_log_kind_name(rq.params.kind),
                 (unsigned)(done.count - done.failed), done.failed ? " (some failed)" : "",
                 now_ms > due_ms + 100 ? " (late)" : "");
        if (ev->revert_after_ms && done.count) {
            remember_down(sc, e, now_ms + ev->revert_after_ms, &done);
        }
    }
    fact_outcome_free(&done);
    ev->next_ms = scenario_next_offset(ev, sc->seed, ev->occurrences, due_ms);
    ev->occurrences++;
}

/* Bring up the devices of pending entry @p i and forget it. */
static void
run_revert(struct scenario *sc, uint32_t i)
{
    struct scenario_pending p = sc->pending[i];
    struct fact_request rq = {.share = 1.0, .idx = p.idx, .idx_count = p.count};
    struct fact_outcome done;
    char err[300];

    sc->pending[i] = sc->pending[--sc->pending_count];
    rq.params.kind = DEVACT_UP;
    rq.origin_event = sc->events[p.event].name;
    if (fact_run(sc->fleet, &rq, &done, err, sizeof err)) {
        sc->failed++;
        log_warn("scenario: event \"%s\": revert-after: %s", sc->events[p.event].name, err);
    } else {
        log_info("scenario: event \"%s\": revert-after: up on %u devices", sc->events[p.event].name,
                 (unsigned)done.count);
    }
    fact_outcome_free(&done);
    free(p.idx);
}

static void *
run(void *arg)
{
    struct scenario *sc = arg;
    monotime_us start_us = loop_clock_monotonic();

    for (uint32_t e = 0; e < sc->event_count; e++) {
        sc->events[e].next_ms = first_offset(&sc->events[e], sc->seed);
        sc->events[e].occurrences = 0;
    }
    for (;;) {
        uint64_t due = UINT64_MAX;
        uint32_t which = UINT32_MAX, revert = UINT32_MAX;
        for (uint32_t e = 0; e < sc->event_count; e++) {
            if (sc->events[e].next_ms < due) {
                due = sc->events[e].next_ms;
                which = e;
            }
        }
        for (uint32_t i = 0; i < sc->pending_count; i++) {
            if (sc->pending[i].due_ms <= due) { /* a revert due at the same time goes first */
                due = sc->pending[i].due_ms;
                revert = i;
            }
        }
        if (due == UINT64_MAX) {
            log_info("scenario: %s: every event done (%" PRIu64 " carried out, %" PRIu64 " failed)", sc->path,
                     sc->done, sc->failed);
            return NULL;
        }
        if (sleep_until(sc, start_us, due)) {
            return NULL;
        }
        if (revert != UINT32_MAX) {
            run_revert(sc, revert);
        } else {
            run_occurrence(sc, which, due, elapsed_ms(start_us));
        }
    }
}

int
scenario_start(struct scenario *sc, struct fleet *fleet)
{
    if (!sc || sc->started) {
        return 0;
    }
    sc->fleet = fleet;
    sc->stop = 0;
    if (pthread_create(&sc->thread, NULL, run, sc)) {
        return -1;
    }
    sc->started = 1;
    {
        uint32_t present = 0;
        for (uint32_t g = 0; g < fleet->group_count; g++) {
            present += fleet->groups[g].start_present;
        }
        if (present < fleet->cfg.device_count) {
            log_info(
                "scenario: %u of the %u devices are present at start; the others are absent (connections "
                "refused, SNMP silent) until the scenario or the API grows the fleet",
                (unsigned)present, (unsigned)fleet->cfg.device_count);
        }
    }
    log_info("scenario: %s (sha256 %.12s..., seed %" PRIu64 "): %u events", sc->path, sc->sha256, sc->seed,
             (unsigned)sc->event_count);
    return 0;
}

void
scenario_stop(struct scenario *sc)
{
    if (!sc || !sc->started) {
        return;
    }
    pthread_mutex_lock(&sc->lock);
    sc->stop = 1;
    pthread_cond_signal(&sc->cond);
    pthread_mutex_unlock(&sc->lock);
    pthread_join(sc->thread, NULL);
    sc->started = 0;
}
