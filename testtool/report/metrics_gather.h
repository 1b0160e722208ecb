/*
 * A gathering of the devices' counters: devices belong to their workers, so
 * each worker, through its inbox (fanout.h), sums its own devices into a
 * snapshot, and the caller waits, bounded, for all of them. The scrape
 * (metrics.c), the status line (status.c) and the live page's sampler
 * (live.c) read the fleet this way.
 */
#ifndef FLEET_METRICS_GATHER_H
#define FLEET_METRICS_GATHER_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "ledger.h"

struct fleet;

/* The devices' counters summed (fleet-wide once gathered). */
struct metrics_sums {
    uint64_t sessions_open;                  /* sessions accepted and not yet closed (handshake included) */
    uint64_t ssh_sessions_open;              /* those of them over SSH */
    uint64_t tls_sessions_open;              /* those of them over TLS */
    uint64_t sessions_started;               /* hellos completed (netconf-state in-sessions) */
    uint64_t sessions_dropped;               /* sessions ended without close-session */
    uint64_t hello_failures;                 /* bad hellos, failed SSH handshakes and hello timeouts */
    uint64_t ssh_auth_failures;              /* SSH authentications refused */
    uint64_t tls_refused[TLS_REFUSED_KINDS]; /* TLS handshakes refused, by enum tls_refused */
    uint64_t connections_refused[2];         /* closed at once: out of descriptors, outside the fleet */
    uint64_t rpcs_received;                  /* rpc messages received (in-rpcs + in-bad-rpcs) */
    uint64_t rpc_errors;                     /* rpc-replies carrying rpc-error */
    struct metrics_worker by_op;             /* replies by NETCONF operation, responses by SNMP type */
    uint64_t snmp_in_pkts;                   /* SNMP datagrams received */
    uint64_t snmp_out_pkts;                  /* SNMP responses sent */
    uint64_t snmp_too_big;                   /* tooBig responses */
    uint64_t snmp_bad_versions;              /* dropped: unknown version */
    uint64_t snmp_parse_errors;              /* dropped: malformed */
    uint64_t snmp_bad_communities;           /* dropped: unknown community */
    uint64_t snmp_bad_uses;                  /* SETs denied (noAccess): with the read community */
    uint64_t snmp_denied_v3_sets; /* SETs denied (noAccess): by an SNMPv3 user without write access */
    uint64_t snmp_silent_drops;   /* dropped: not a request */
    uint64_t snmp_injected_drops; /* dropped on purpose (--snmp-drop-rate, timeout faults) */
    uint64_t snmp_usm[7];         /* SNMPv3 reports by usmStats counter (enum susm_report_kind) */
    uint64_t notif[5];            /* emitted, sent, send_failures, dropped, suppressed */
    uint64_t traps[8];            /* emitted, sent, send_failures, dropped, suppressed, acknowledged,
                                     timed_out, retries (all trap sinks) */
    uint64_t syslog[8];           /* the syslog ledger over every sink: emitted, sent, in_window, drain,
                                     send_failures, dropped, suppressed_pre_window, queued */
    uint64_t netconf[8];          /* the NETCONF notifications' ledger over every subscriber, as syslog */
    uint64_t syslog_sinks[4];     /* syslog sinks: connects, disconnects, connected now, sinks */
    uint64_t trap_ledger[8];      /* the trap ledger over every sink, in the order of syslog */
    uint64_t yang_push[8];        /* YANG-Push subscriptions: live ones by kind, then what they sent and
                                     missed, ended ones included (enum yp_sum) */
};

/** @return TLS handshakes refused for any reason. */
uint64_t metrics_tls_refused(const struct metrics_sums *s);

/* One device's row of the per-device series. */
struct metrics_device_row {
    uint32_t index;                            /* device index */
    uint32_t sessions_open;                    /* sessions open now */
    uint32_t sessions_started;                 /* hellos completed */
    uint32_t hello_failures;                   /* as in struct metrics_sums */
    uint32_t ssh_auth_failures;                /* SSH authentications refused */
    uint32_t tls_refused;                      /* TLS handshakes refused, for any reason */
    uint32_t rpcs_received;                    /* rpc messages received */
    uint32_t rpc_errors;                       /* rpc-replies carrying rpc-error */
    uint32_t snmp_in_pkts;                     /* SNMP datagrams received */
    uint64_t notif_sent;                       /* notifications queued to subscribers */
    uint64_t notif_dropped;                    /* notifications dropped for slow subscribers */
    struct ledger_row ledger[LEDGER_CHANNELS]; /* per push channel: its ledger rows (every sink), summed */
    uint8_t ledger_channels; /* bit (1 << channel) for each channel the device pushes on (has a row of) */
};

/* What one gathering found. */
struct metrics_snapshot {
    struct metrics_sums sums;        /* the whole fleet */
    struct metrics_device_row *rows; /* per device (only when asked), by worker then index; malloc'd */
    uint32_t row_count;              /* entries in rows */
};

/**
 * @brief Gather the counters of every device of a running fleet (each worker sums its own devices).
 * @param[in] per_device 1: fill the per-device rows too.
 * @param[out] snap Filled; free with metrics_snapshot_clear().
 * @return 0, or -1 when a worker did not answer within METRICS_GATHER_TIMEOUT_MS or memory ran out.
 */
int metrics_gather(struct fleet *fleet, int per_device, struct metrics_snapshot *snap);

/**
 * @brief metrics_gather() without rows, counting on the same trip each group's devices by state.
 * @param[out] group_states group_count x 4 counts: [g * 4 + k], k 0 up, 1 down, 2 rebooting, 3 absent.
 * @return As metrics_gather().
 */
int metrics_gather_states(struct fleet *fleet, struct metrics_snapshot *snap, uint32_t *group_states);

/** @brief Free what metrics_gather() allocated. Accepts a zeroed snapshot. */
void metrics_snapshot_clear(struct metrics_snapshot *snap);

#endif
