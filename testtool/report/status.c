/*
 * The one-line status. It runs on the main thread between signals, so it
 * never competes with a scrape for anything but the workers' inboxes: each
 * line costs one gathering (metrics_gather, without per-device rows).
 * Deadlines follow one another by the interval from the first, so the lines
 * do not drift; a line that could not be printed in time (a slow gathering)
 * is skipped, not bunched up.
 */
#include "status.h"

#include <errno.h>
#include <inttypes.h>
#include <time.h>

#include "device.h"
#include "log.h"
#include "metrics.h"
#include "trap.h"

/* "ssh", "tcp", "tls", or a mix when the groups differ. */
static const char *
transports(const struct fleet *fleet)
{
    int ssh = 0, tcp = 0, tls = 0;

    for (uint32_t i = 0; i < fleet->group_count; i++) {
        ssh |= fleet->groups[i].cfg.ssh;
        tls |= fleet->groups[i].cfg.tls;
        tcp |= !fleet->groups[i].cfg.ssh && !fleet->groups[i].cfg.tls;
    }
    if (tls) {
        return ssh || tcp ? "tls and others" : "tls";
    }
    return ssh && tcp ? "ssh and tcp" : ssh ? "ssh" : "tcp";
}

void
status_init(struct status_clock *st, const struct fleet *fleet)
{
    monotime_us now = loop_clock_monotonic();

    *st = (struct status_clock){.interval_s = fleet->cfg.status_interval_s, .last_us = now};
    st->next_us = now + (monotime_us)st->interval_s * 1000000u;
}

static double
rate(uint64_t now, uint64_t before, double seconds)
{
    return seconds > 0 && now >= before ? (double)(now - before) / seconds : 0.0;
}

static void
print_line(struct status_clock *st, struct fleet *fleet, monotime_us now)
{
    struct metrics_snapshot snap;
    const struct metrics_sums *s = &snap.sums;
    uint64_t rpcs = 0, snmp;
    double seconds = (double)(now - st->last_us) / 1e6;
    char tls[40] = "";

    if (metrics_gather(fleet, 0, &snap)) {
        log_warn("status: the workers did not answer within %d ms", METRICS_GATHER_TIMEOUT_MS);
        return;
    }
    for (unsigned op = 0; op < METRICS_RPC_OPS; op++) {
        rpcs += s->by_op.rpcs[op][0] + s->by_op.rpcs[op][1];
    }
    snmp = s->snmp_in_pkts;
    if (fleet->tls_ctx) {
        snprintf(tls, sizeof tls, ", tls handshakes refused %" PRIu64, metrics_tls_refused(s));
    }
    log_info("status: %" PRIu32 " devices, %" PRIu64 " sessions (%s), rpcs %" PRIu64 " (%.1f/s, %" PRIu64
             " errors), snmp %" PRIu64 " (%.1f/s), notifications sent %" PRIu64 " dropped %" PRIu64
             ", auth failures ssh %" PRIu64 " snmp %" PRIu64 "%s",
             fleet->cfg.device_count, s->sessions_open, transports(fleet), rpcs,
             rate(rpcs, st->last_rpcs, seconds), s->rpc_errors, snmp, rate(snmp, st->last_snmp, seconds),
             s->notif[1], s->notif[3], s->ssh_auth_failures,
             s->snmp_bad_communities + s->snmp_bad_uses + s->snmp_usm[3] + s->snmp_usm[5], tls);
    st->last_us = now;
    st->last_rpcs = rpcs;
    st->last_snmp = snmp;
    metrics_snapshot_clear(&snap);
}

int
status_wait_signal(struct status_clock *st, struct fleet *fleet, const sigset_t *signals)
{
    for (;;) {
        monotime_us now = loop_clock_monotonic(), left;
        struct timespec wait;
        int sig;

        if (!st->interval_s) {
            if (!sigwait(signals, &sig)) {
                return sig;
            }
            continue;
        }
        if (now >= st->next_us) {
            print_line(st, fleet, now);
            while (st->next_us <= loop_clock_monotonic()) {
                st->next_us += (monotime_us)st->interval_s * 1000000u;
            }
            continue;
        }
        left = st->next_us - now;
        wait.tv_sec = (time_t)(left / 1000000u);
        wait.tv_nsec = (long)(left % 1000000u) * 1000;
        sig = sigtimedwait(signals, NULL, &wait);
        if (sig > 0) {
            return sig;
        }
        /* EAGAIN: the line is due; EINTR: wait again. */
    }
}
