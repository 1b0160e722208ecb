/*
 * One request to every worker, waited for with a bound (see fanout.h).
 */
#include "fanout.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "device.h"
#include "loop.h"

/* What a worker gets with its message. */
struct fanout_part {
    struct fanout *f; /* the job */
    uint32_t worker;  /* which worker this part is for */
};

static void
on_worker(struct loop *loop, void *arg)
{
    struct fanout_part *part = arg;
    struct fanout *f = part->f;

    (void)loop;
    f->work(f, part->worker);
    pthread_mutex_lock(&f->lock);
    f->done++;
    pthread_cond_signal(&f->cond);
    pthread_mutex_unlock(&f->lock);
    free(part);
    fanout_unref(f);
}

void
fanout_unref(struct fanout *f)
{
    if (atomic_fetch_sub(&f->refs, 1) != 1) {
        return;
    }
    pthread_cond_destroy(&f->cond);
    pthread_mutex_destroy(&f->lock);
    f->free(f);
}

int
fanout_run(struct fanout *f, struct fleet *fleet, uint32_t timeout_ms, fanout_work_fn work,
           fanout_free_fn free_job)
{
    uint32_t threads = fleet->cfg.threads, posted = 0;
    pthread_condattr_t attr;
    struct timespec deadline;
    int all;

    f->work = work;
    f->free = free_job;
    f->done = 0;
    pthread_mutex_init(&f->lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&f->cond, &attr);
    pthread_condattr_destroy(&attr);
    atomic_init(&f->refs, 1 + threads);
    for (uint32_t i = 0; i < threads; i++) {
        struct fanout_part *part = malloc(sizeof *part);
        if (part) {
            *part = (struct fanout_part){f, i};
        }
        if (!part || loop_post(fleet->workers[i].loop, on_worker, part)) {
            free(part);
            atomic_fetch_sub(&f->refs, 1); /* never the last: the caller holds one */
            continue;
        }
        posted++;
    }
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&f->lock);
    while (f->done < posted) {
        if (pthread_cond_timedwait(&f->cond, &f->lock, &deadline) == ETIMEDOUT) {
            break;
        }
    }
    all = f->done == threads;
    pthread_mutex_unlock(&f->lock);
    return all;
}
