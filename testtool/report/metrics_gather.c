/*
 * Gathering the devices' counters; see metrics_gather.h. A device's
 * counters are plain integers written by its worker, so nothing here reads
 * them from another thread: a gathering posts one message per worker, each
 * worker sums its own devices (and fills their rows when per-device series
 * are asked for), and the caller waits, bounded by METRICS_GATHER_TIMEOUT_MS.
 * The job is reference-counted, so a worker that answers after the caller
 * gave up writes into memory that is still there.
 */
#include "metrics_gather.h"

#include <stdlib.h>
#include <string.h>

#include "device_ctl.h"
#include "fanout.h"
#include "fleet_action.h"
#include "session.h"
#include "stream.h"
#include "syslog_chan.h"
#include "trap.h"
#include "yp_rows.h"

_Static_assert(YP_SUMS == sizeof((struct metrics_sums *)0)->yang_push / sizeof(uint64_t),
               "a YANG-Push sum per enum yp_sum");

struct gather_job {
    struct fleet *fleet;             /* the fleet */
    struct metrics_device_row *rows; /* device_count rows when per-device rows are asked for, else NULL */
    struct metrics_sums *sums;       /* one per worker, written by that worker */
    uint32_t *states;                /* when asked: per worker, group_count x 4 device states; else NULL */
    struct fanout f;                 /* the trip to every worker */
};

#define GATHER_OF(fo) ((struct gather_job *)((char *)(fo)-offsetof(struct gather_job, f)))

static void
add_notif(uint64_t *to, const struct notif_counts *c)
{
    to[0] += c->ledger.emitted - c->ledger.suppressed_pre_window + c->suppressed; /* as the report's */
    to[1] += ledger_sent(&c->ledger);
    to[2] += c->ledger.send_failures;
    to[3] += c->ledger.dropped;
    to[4] += c->suppressed;
}

/* A ledger row into the 8 sums of struct metrics_sums' push ledger (emitted, sent, ..., queued). */
static void
add_ledger(uint64_t *to, const struct ledger_row *l)
{
    to[0] += l->emitted;
    to[1] += ledger_sent(l);
    to[2] += l->in_window;
    to[3] += l->drain;
    to[4] += l->send_failures;
    to[5] += l->dropped;
    to[6] += l->suppressed_pre_window;
    to[7] += l->queued;
}

/* Sum worker @p w's devices into @p sums (and their rows). Runs on that worker's thread. */
static void
sum_worker(const struct fleet *fleet, const struct worker *w, struct metrics_sums *sums,
           struct metrics_device_row *rows, uint32_t *states)
{
    const struct fleet_config *cfg = &fleet->cfg;

    sums->sessions_open = w->session_count;
    sums->ssh_sessions_open = w->ssh_session_count;
    sums->tls_sessions_open = w->tls_session_count;
    sums->by_op = w->metrics;
    _Static_assert(LISTEN_REFUSED_KINDS == sizeof sums->connections_refused / sizeof(uint64_t),
                   "a refusal counter per reason");
    for (int k = 0; k < LISTEN_REFUSED_KINDS; k++) {
        sums->connections_refused[k] = w->refused[k];
    }
    {
        uint32_t up = 0, sinks = 0;
        syslog_chan_sink_stats(fleet, w->index, &sums->syslog_sinks[0], &sums->syslog_sinks[1], &up, &sinks);
        sums->syslog_sinks[2] = up;
        sums->syslog_sinks[3] = sinks;
    }
    for (uint32_t i = w->index; i < cfg->device_count; i += cfg->threads) {
        const struct device *dev = &fleet->devices[i];
        const struct device_stats *st = &dev->stats;
        const struct respond_stats *sn = &dev->snmp_stats;
        struct notif_counts nc = {0};
        uint32_t tls_refused = 0;

        if (states) {
            /* As devact_state_name(): up, down, rebooting, absent. */
            unsigned k = !dev->ctl || !dev->ctl->down ? 0
                         : dev->ctl->absent           ? 3
                         : dev->ctl->rebooting        ? 2
                                                      : 1;
            states[dev->group->index * 4u + k]++;
        }
        sums->sessions_started += st->in_sessions;
        sums->sessions_dropped += st->dropped_sessions;
        sums->hello_failures += st->in_bad_hellos;
        sums->ssh_auth_failures += st->auth_failures;
        for (int k = 0; k < TLS_REFUSED_KINDS; k++) {
            sums->tls_refused[k] += st->tls_refused[k];
            tls_refused += st->tls_refused[k];
        }
        sums->rpcs_received += (uint64_t)st->in_rpcs + st->in_bad_rpcs;
        sums->rpc_errors += st->out_rpc_errors;
        sums->snmp_in_pkts += sn->in_pkts;
        sums->snmp_out_pkts += sn->out_pkts;
        sums->snmp_too_big += sn->out_too_bigs;
        sums->snmp_bad_versions += sn->in_bad_versions;
        sums->snmp_parse_errors += sn->in_asn_parse_errs;
        sums->snmp_bad_communities += sn->in_bad_community_names;
        sums->snmp_bad_uses += sn->in_bad_community_uses;
        sums->snmp_denied_v3_sets += sn->in_denied_v3_sets;
        sums->snmp_silent_drops += sn->silent_drops;
        sums->snmp_injected_drops += sn->injected_drops;
        for (int k = 0; k < 7; k++) {
            sums->snmp_usm[k] += sn->usm_stats[k];
        }
        yp_rows_sum(dev, sums->yang_push);
        if (dev->stream) {
            stream_device_counts(dev, &nc);
            add_notif(sums->notif, &nc);
            add_ledger(sums->netconf, &nc.ledger);
        }
        for (uint32_t k = 0; dev->trap_rows && k < cfg->trap_sink_count; k++) {
            const struct trap_counters *t = &dev->trap_rows[k];
            sums->traps[0] += t->ledger.emitted;
            sums->traps[1] += ledger_sent(&t->ledger);
            sums->traps[2] += t->ledger.send_failures;
            sums->traps[3] += t->ledger.dropped;
            sums->traps[4] += t->ledger.suppressed_pre_window;
            sums->traps[5] += t->acknowledged;
            sums->traps[6] += t->timed_out;
            sums->traps[7] += t->retries;
            add_ledger(sums->trap_ledger, &t->ledger);
        }
        if (dev->syslog) {
            struct ledger_row l = {0};
            syslog_chan_sum(dev, &l);
            add_ledger(sums->syslog, &l);
        }
        if (rows) {
            struct metrics_device_row *r = &rows[i];
            uint32_t open = 0;
            for (const struct session *s = dev->sessions; s; s = s->dev_next) {
                open++;
            }
            *r = (struct metrics_device_row){.index = i,
                                             .sessions_open = open,
                                             .sessions_started = st->in_sessions,
                                             .hello_failures = st->in_bad_hellos,
                                             .ssh_auth_failures = st->auth_failures,
                                             .tls_refused = tls_refused,
                                             .rpcs_received = st->in_rpcs + st->in_bad_rpcs,
                                             .rpc_errors = st->out_rpc_errors,
                                             .snmp_in_pkts = sn->in_pkts,
                                             .notif_sent = ledger_sent(&nc.ledger),
                                             .notif_dropped = nc.ledger.dropped};
            syslog_chan_sum(dev, &r->ledger[LEDGER_SYSLOG]);
            for (uint32_t k = 0; dev->trap_rows && k < cfg->trap_sink_count; k++) {
                ledger_add(&r->ledger[LEDGER_TRAP], &dev->trap_rows[k].ledger);
            }
            r->ledger[LEDGER_NETCONF] = nc.ledger;
            r->ledger_channels =
                (uint8_t)((dev->syslog ? 1u << LEDGER_SYSLOG : 0) | (dev->trap_rows ? 1u << LEDGER_TRAP : 0) |
                          (dev->stream ? 1u << LEDGER_NETCONF : 0));
        }
    }
}

uint64_t
metrics_tls_refused(const struct metrics_sums *s)
{
    uint64_t n = 0;

    for (int k = 0; k < TLS_REFUSED_KINDS; k++) {
        n += s->tls_refused[k];
    }
    return n;
}

static void
gather_free(struct fanout *f)
{
    struct gather_job *job = GATHER_OF(f);

    free(job->rows);
    free(job->sums);
    free(job->states);
    free(job);
}

static void
gather_on_worker(struct fanout *f, uint32_t worker)
{
    struct gather_job *job = GATHER_OF(f);

    sum_worker(job->fleet, &job->fleet->workers[worker], &job->sums[worker], job->rows,
               job->states ? job->states + (size_t)worker * job->fleet->group_count * 4u : NULL);
}

static void
add_sums(struct metrics_sums *to, const struct metrics_sums *from)
{
    /* Every member is a uint64_t (or an array of them): add them as one array. */
    uint64_t *t = (uint64_t *)to;
    const uint64_t *f = (const uint64_t *)from;
    _Static_assert(sizeof(struct metrics_sums) % sizeof(uint64_t) == 0, "metrics_sums holds uint64_t only");

    for (size_t i = 0; i < sizeof *to / sizeof *t; i++) {
        t[i] += f[i];
    }
}

/* One gathering; @p group_states (group_count x 4) is filled when not NULL. */
static int
gather(struct fleet *fleet, int per_device, struct metrics_snapshot *snap, uint32_t *group_states)
{
    uint32_t threads = fleet->cfg.threads;
    size_t cells = (size_t)fleet->group_count * 4u;
    struct gather_job *job = calloc(1, sizeof *job);
    int rc = -1;

    memset(snap, 0, sizeof *snap);
    if (!job || !(job->sums = calloc(threads, sizeof *job->sums)) ||
        (per_device && !(job->rows = calloc(fleet->cfg.device_count, sizeof *job->rows))) ||
        (group_states && !(job->states = calloc(threads * cells, sizeof *job->states)))) {
        if (job) {
            free(job->sums);
            free(job->rows);
        }
        free(job);
        return -1;
    }
    job->fleet = fleet;
    if (fanout_run(&job->f, fleet, METRICS_GATHER_TIMEOUT_MS, gather_on_worker, gather_free)) {
        /* Every worker has written its part: the rows and sums are complete and nobody writes any more. */
        for (uint32_t i = 0; i < threads; i++) {
            add_sums(&snap->sums, &job->sums[i]);
        }
        if (group_states) {
            memset(group_states, 0, cells * sizeof *group_states);
            for (size_t c = 0; c < threads * cells; c++) {
                group_states[c % cells] += job->states[c];
            }
        }
        snap->rows = job->rows;
        snap->row_count = job->rows ? fleet->cfg.device_count : 0;
        job->rows = NULL;
        rc = 0;
    }
    fanout_unref(&job->f);
    return rc;
}

int
metrics_gather(struct fleet *fleet, int per_device, struct metrics_snapshot *snap)
{
    return gather(fleet, per_device, snap, NULL);
}

int
metrics_gather_states(struct fleet *fleet, struct metrics_snapshot *snap, uint32_t *group_states)
{
    return gather(fleet, 0, snap, group_states);
}

void
metrics_snapshot_clear(struct metrics_snapshot *snap)
{
    free(snap->rows);
    memset(snap, 0, sizeof *snap);
}
