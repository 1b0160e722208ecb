/*
 * One request to every worker, waited for with a bound: the metrics scrape
 * (each worker sums its own devices) and the control API (each worker acts
 * on its own devices) both post a part to each worker's inbox and wait on a
 * condition until all have answered or the bound passes. A worker that
 * answers late still finds its job: the job is freed by whoever drops the
 * last reference, the waiting thread or the last worker.
 */
#ifndef FLEET_FANOUT_H
#define FLEET_FANOUT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

struct fleet;
struct fanout;

/* Worker @p worker's part of the job; runs on that worker's thread. */
typedef void (*fanout_work_fn)(struct fanout *f, uint32_t worker);
/* Free the job that embeds @p f; called once, by whoever drops the last reference. */
typedef void (*fanout_free_fn)(struct fanout *f);

/* Embedded in a job (first or anywhere: callbacks get it back and find their job with offsetof). */
struct fanout {
    fanout_work_fn work;  /* each worker's part */
    fanout_free_fn free;  /* frees the enclosing job */
    pthread_mutex_t lock; /* guards done */
    pthread_cond_t cond;  /* signalled as each worker finishes */
    uint32_t done;        /* workers finished */
    atomic_uint refs;     /* the caller plus each part not yet run */
};

/**
 * @brief Post @p f's work to every worker of @p fleet and wait, at most @p timeout_ms, for all that got
 * it. The caller keeps one reference and drops it with fanout_unref() when it no longer reads the job.
 * @return 1 when every worker finished (their results are complete and nobody writes them any more),
 *         0 when one could not be posted or did not answer in time.
 */
int fanout_run(struct fanout *f, struct fleet *fleet, uint32_t timeout_ms, fanout_work_fn work,
               fanout_free_fn free_job);

/** @brief Drop a reference; the last one frees the job. */
void fanout_unref(struct fanout *f);

#endif
