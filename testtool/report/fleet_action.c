/*
 * The fleet's actions; see fleet_action.h. A request is resolved to a
 * sorted list of devices on the caller's thread, then one job goes to each
 * worker's inbox (fanout.h) with the list and the action: each worker acts
 * on its own devices only, and the caller waits, bounded by
 * METRICS_GATHER_TIMEOUT_MS. The job is reference-counted, so a worker that
 * finishes after the caller gave up writes into live memory.
 */
#include "fleet_action.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "action_log.h"
#include "action_params.h"
#include "capi_target.h"
#include "fanout.h"
#include "register.h"
#include "session.h"

/* One action at a time: the API's threads and a scenario's. */
static pthread_mutex_t fact_lock = PTHREAD_MUTEX_INITIALIZER;

/* One trip through the workers; freed by whoever drops the last reference. */
struct fact_job {
    struct fleet *fleet;            /* the fleet */
    const uint32_t *idx;            /* devices (sorted), owned */
    uint32_t count;                 /* entries in idx */
    int act;                        /* 1: apply params, 0: read into reads */
    struct devact_params params;    /* the action */
    struct fact_device_read *reads; /* count entries when reading */
    uint32_t *failed;               /* per worker: devices it could not act on */
    struct fanout f;                /* the trip to every worker */
};

#define JOB_OF(fo) ((struct fact_job *)((char *)(fo)-offsetof(struct fact_job, f)))

static void
job_free(struct fanout *f)
{
    struct fact_job *job = JOB_OF(f);

    free((void *)job->idx);
    free(job->reads);
    free(job->failed);
    free(job);
}

static void
read_device(const struct device *dev, struct fact_device_read *r)
{
    uint32_t open = 0;

    for (const struct session *s = dev->sessions; s; s = s->dev_next) {
        open += s->state < SESS_DEAD;
    }
    r->open = open;
    r->state = !dev->ctl || !dev->ctl->down ? 0 : dev->ctl->absent ? 3 : dev->ctl->rebooting ? 2 : 1;
    r->mode = dev->ctl && !dev->ctl->absent ? dev->ctl->down : 0;
    r->frozen = dev->ctl ? dev->ctl->frozen : 0;
    r->boot_ms = dev->boot_ms;
}

static void
on_worker(struct fanout *f, uint32_t worker)
{
    struct fact_job *job = JOB_OF(f);
    struct fleet *fleet = job->fleet;
    uint32_t threads = fleet->cfg.threads;

    for (uint32_t k = 0; k < job->count; k++) {
        struct device *dev = &fleet->devices[job->idx[k]];
        if (job->idx[k] % threads != worker) {
            continue;
        }
        if (job->act) {
            job->failed[worker] += devact_apply(dev, &job->params) ? 1u : 0u;
        } else {
            read_device(dev, &job->reads[k]);
        }
    }
}

/* A job over @p idx (taken, freed with the job even on failure); NULL when out of memory. */
static struct fact_job *
job_new(struct fleet *fleet, uint32_t *idx, uint32_t count, int act)
{
    struct fact_job *job = calloc(1, sizeof *job);

    if (!job || !(job->failed = calloc(fleet->cfg.threads, sizeof *job->failed)) ||
        (!act && !(job->reads = calloc(count ? count : 1, sizeof *job->reads)))) {
        if (job) {
            free(job->failed);
        }
        free(job);
        free(idx);
        return NULL;
    }
    job->fleet = fleet;
    job->idx = idx;
    job->count = count;
    job->act = act;
    return job;
}

/* Run @p job on every worker and wait. @return 0 (then *failed is their failure count), -1: not in time. */
static int
run_job(struct fact_job *job, uint32_t *failed)
{
    uint32_t threads = job->fleet->cfg.threads;

    if (!fanout_run(&job->f, job->fleet, METRICS_GATHER_TIMEOUT_MS, on_worker, job_free)) {
        return -1;
    }
    *failed = 0;
    for (uint32_t i = 0; i < threads; i++) {
        *failed += job->failed[i];
    }
    return 0;
}

int
fact_kind_of(const char *name)
{
    for (int k = 0; k < DEVACT_KINDS; k++) {
        if (!strcmp(name, action_log_kind_name((enum devact_kind)k))) {
            return k;
        }
    }
    return -1;
}

/* A number, or a string holding one (RFC 7951 writes decimal64 as a string). @return 0 when it is. */
static int
number_of(const struct jsonr_value *v, double *out)
{
    char *end;

    if (v->type == JSONR_NUMBER) {
        *out = v->num;
        return 0;
    }
    if (v->type == JSONR_STRING && *v->str) {
        *out = strtod(v->str, &end);
        return *end ? -1 : 0;
    }
    return -1;
}

/* An unsigned integer, as a number or (RFC 7951's uint64) a string. @return 0 when it is one. */
static int
seed_of(const struct jsonr_value *v, uint64_t *out)
{
    char *end;

    if (v->type == JSONR_NUMBER) {
        if (!(v->num >= 0 && v->num < 18446744073709551616.0) || v->num != (double)(uint64_t)v->num) {
            return -1;
        }
        *out = (uint64_t)v->num;
        return 0;
    }
    if (v->type != JSONR_STRING || !*v->str || *v->str == '-') {
        return -1;
    }
    *out = strtoull(v->str, &end, 10);
    return *end ? -1 : 0;
}

const char *
fact_parse_body(const struct fleet *fleet, enum devact_kind kind, const struct jsonr_value *body,
                struct fact_request *rq, char *err, size_t err_len)
{
    const struct jsonr_value *v;
    const char *problem;
    int sized = kind == DEVACT_GROW || kind == DEVACT_SHRINK;
    double d;

    memset(rq, 0, sizeof *rq);
    rq->share = 1.0;
    rq->seed = fleet->cfg.seed;
    if ((problem = action_params_parse(kind, body, &rq->params, err, err_len))) {
        return problem;
    }
    if ((v = jsonr_get(body, "share")) && (number_of(v, &d) || !(d > 0 && d <= 1))) {
        return "share must be a number above 0 and at most 1";
    }
    if (v) {
        rq->share = d;
    }
    if ((v = jsonr_get(body, "seed")) && seed_of(v, &rq->seed)) {
        return "seed must be an unsigned integer";
    }
    if ((v = jsonr_get(body, "devices")) && sized &&
        (number_of(v, &d) || d < 1 || d > FLEET_MAX_DEVICES || d != (double)(uint32_t)d)) {
        return "devices must be a whole number of devices, at least 1";
    }
    if (v && sized) {
        rq->count = (uint32_t)d;
    }
    if (sized && jsonr_get(body, "share")) {
        return "grow and shrink take devices (a count), not share";
    }
    return NULL;
}

static int
group_by_name(const struct fleet *fleet, const char *name)
{
    for (uint32_t g = 0; g < fleet->group_count; g++) {
        if (!strcmp(fleet->groups[g].name, name)) {
            return (int)g;
        }
    }
    return -1;
}

uint32_t
fact_group_present(const struct fleet *fleet, uint32_t g)
{
    uint32_t n;

    pthread_mutex_lock(&fact_lock);
    n = fleet->groups[g].present;
    pthread_mutex_unlock(&fact_lock);
    return n;
}

/*
 * Grow or shrink: the devices of the target's groups that join (the next absent indices) or leave (the
 * last present ones), at most rq->count over all (0: all that can). Updates the groups' present counts.
 */
static uint32_t *
pick_presence(struct fleet *fleet, const struct fact_request *rq, uint32_t g_first, uint32_t g_last,
              uint32_t *count)
{
    uint32_t want = rq->count ? rq->count : UINT32_MAX, n = 0, total = 0;
    int grow = rq->params.kind == DEVACT_GROW;
    uint32_t *idx;

    for (uint32_t g = g_first; g <= g_last; g++) {
        struct device_group *grp = &fleet->groups[g];
        total += grow ? grp->cfg.device_count - grp->present : grp->present;
    }
    if (want > total) {
        want = total;
    }
    if (!(idx = malloc((want ? want : 1) * sizeof *idx))) {
        return NULL;
    }
    for (uint32_t g = g_first; g <= g_last && n < want; g++) {
        struct device_group *grp = &fleet->groups[g];
        uint32_t room = grow ? grp->cfg.device_count - grp->present : grp->present;
        uint32_t take = want - n < room ? want - n : room;
        if (grow) {
            for (uint32_t i = 0; i < take; i++) {
                idx[n++] = grp->first + grp->present + i;
            }
            grp->present += take;
        } else {
            grp->present -= take;
            for (uint32_t i = 0; i < take; i++) {
                idx[n++] = grp->first + grp->present + i;
            }
        }
    }
    *count = n;
    return idx;
}

static uint64_t
wall_ms(void)
{
    struct timespec now;

    clock_gettime(CLOCK_REALTIME, &now);
    return (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000;
}

unsigned
fact_run(struct fleet *fleet, const struct fact_request *rq, struct fact_outcome *out, char *err,
         size_t err_len)
{
    uint32_t first = 0, last = fleet->cfg.device_count - 1, g_first = 0, g_last = fleet->group_count - 1;
    uint32_t count = 0, failed = 0, *idx = NULL;
    int presence = rq->params.kind == DEVACT_GROW || rq->params.kind == DEVACT_SHRINK;
    struct fact_job *job;
    unsigned status = 0;

    memset(out, 0, sizeof *out);
    if (rq->idx) {
        /* an explicit list (a scenario's revert): no target to resolve */
    } else if (rq->target_kind == FACT_GROUP) {
        int g = group_by_name(fleet, rq->target);
        if (g < 0) {
            snprintf(err, err_len, "no group \"%s\"", rq->target);
            return 404;
        }
        g_first = g_last = (uint32_t)g;
        first = fleet->groups[g].first;
        last = first + fleet->groups[g].cfg.device_count - 1;
    } else if (rq->target_kind == FACT_DEVICES) {
        int r = capi_range_here(rq->target, fleet->cfg.fleet_devices, fleet->cfg.device_offset,
                                fleet->cfg.device_count, &first, &last, &out->elsewhere);
        if (r == -2) {
            snprintf(err, err_len, "devices %s: past the fleet's %" PRIu32 " devices (0 to %" PRIu32 ")",
                     rq->target, fleet->cfg.fleet_devices, fleet->cfg.fleet_devices - 1);
            return 404;
        }
        if (r) {
            snprintf(err, err_len, "\"%s\" is not a device index or range N-M", rq->target);
            return 400;
        }
        if (presence) {
            snprintf(err, err_len,
                     "%s takes a group or the fleet, not devices: devices join a group at its "
                     "next indices and leave from its last",
                     action_log_kind_name(rq->params.kind));
            return 400;
        }
    }
    pthread_mutex_lock(&fact_lock);
    if (rq->idx) {
        if ((idx = malloc((rq->idx_count ? rq->idx_count : 1) * sizeof *idx))) {
            for (uint32_t k = 0; k < rq->idx_count; k++) {
                const struct device_group *grp = fleet->devices[rq->idx[k]].group;
                if (rq->idx[k] - grp->first < grp->present) {
                    idx[count++] = rq->idx[k];
                }
            }
        }
    } else if (presence) {
        idx = pick_presence(fleet, rq, g_first, g_last, &count);
    } else if ((idx = malloc((first <= last ? (size_t)last - first + 1 : 1) * sizeof *idx))) {
        for (uint32_t i = first; i <= last && first <= last; i++) {
            const struct device *dev = &fleet->devices[i];
            if (i - dev->group->first < dev->group->present &&
                capi_share_pick(rq->seed, dev->index, rq->share)) {
                idx[count++] = i; /* present devices only: the absent are not in the fleet */
            }
        }
    }
    if (!idx || !(job = job_new(fleet, idx, count, 1))) {
        pthread_mutex_unlock(&fact_lock);
        snprintf(err, err_len, "out of memory");
        return 500;
    }
    job->params = rq->params;
    if (run_job(job, &failed)) {
        snprintf(err, err_len, "the workers did not answer in time; the action may be partly done");
        status = 503;
    }
    if ((out->idx = malloc((count ? count : 1) * sizeof *out->idx))) {
        memcpy(out->idx, job->idx, count * sizeof *out->idx);
        out->count = count;
    }
    out->failed = status ? 0 : failed;
    if (fleet->actions) {
        out->seq = action_log_add(fleet->actions, &rq->params, rq->share, rq->seed, job->idx, count,
                                  fleet->cfg.device_offset, out->failed, wall_ms(), rq->origin_event);
    }
    fanout_unref(&job->f);
    pthread_mutex_unlock(&fact_lock);
    if (!status && rq->params.kind == DEVACT_GROW && count) {
        /* The joined devices are a run of each group's indices; registration takes runs. */
        for (uint32_t k = 0; k < count;) {
            uint32_t a = k;
            while (k + 1 < count && out->idx[k + 1] == out->idx[k] + 1) {
                k++;
            }
            controller_register_devices(fleet, out->idx[a], out->idx[k] - out->idx[a] + 1);
            k++;
        }
    }
    return status;
}

void
fact_outcome_free(struct fact_outcome *out)
{
    free(out->idx);
    memset(out, 0, sizeof *out);
}

int
fact_read(struct fleet *fleet, const uint32_t *idx, uint32_t count, struct fact_device_read *reads)
{
    uint32_t failed, *copy = malloc((count ? count : 1) * sizeof *copy);
    struct fact_job *job;
    int rc = 0;

    if (!copy) {
        return -1;
    }
    memcpy(copy, idx, count * sizeof *copy);
    if (!(job = job_new(fleet, copy, count, 0))) {
        return -1;
    }
    if (run_job(job, &failed)) {
        rc = -1;
    } else {
        memcpy(reads, job->reads, count * sizeof *reads);
    }
    fanout_unref(&job->f);
    return rc;
}

int
fact_apply_start(struct fleet *fleet)
{
    uint32_t absent = 0, n = 0, failed = 0, *idx;
    struct fact_job *job;

    for (uint32_t g = 0; g < fleet->group_count; g++) {
        fleet->groups[g].present = fleet->groups[g].start_present;
        absent += fleet->groups[g].cfg.device_count - fleet->groups[g].start_present;
    }
    if (!absent) {
        return 0;
    }
    if (!(idx = malloc(absent * sizeof *idx))) {
        return -1;
    }
    for (uint32_t g = 0; g < fleet->group_count; g++) {
        const struct device_group *grp = &fleet->groups[g];
        for (uint32_t i = grp->start_present; i < grp->cfg.device_count; i++) {
            idx[n++] = grp->first + i;
        }
    }
    if (!(job = job_new(fleet, idx, n, 1))) {
        return -1;
    }
    job->params.kind = DEVACT_SHRINK;
    if (run_job(job, &failed)) {
        failed = 1;
    }
    fanout_unref(&job->f);
    return failed ? -1 : 0;
}
