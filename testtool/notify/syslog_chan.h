/*
 * The syslog channel: every device of a group with --syslog-sink sends its
 * lines to each of the group's sinks, RFC 5424 or 3164, with its host
 * name, its own sequence ([meta sequenceId]) and the run's tag.
 *
 * Background lines come at --syslog-rate per device (a rate profile,
 * rate_profile.h; the control API's syslog-rate overrides it per device),
 * drawn from the group's catalog (--syslog-catalog, else the built-in one
 * of the device's kind: schemas/syslog/<type>.json, else
 * schemas/syslog/generic.json), scheduled on the device's worker by its
 * arrival schedule (paced or Poisson, --push-arrivals): no sleeping, no
 * drift; devices' paced phases are spread over one arrival so a fleet does
 * not send in lockstep. Events (syslog_chan_event()) send a named catalog line
 * when they happen. A device down or absent sends nothing.
 *
 * State: one struct syslog_chan per worker (its sinks: one per group and
 * --syslog-sink), one struct syslog_dev per device of a group with sinks
 * (its timer, arrival schedule, sequence and ledger rows), nothing for the others.
 */
#ifndef FLEET_SYSLOG_CHAN_H
#define FLEET_SYSLOG_CHAN_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "ledger.h"
#include "loop.h"
#include "rate_profile.h"

struct device;
struct fleet;
struct sbuf;

/* A schedule further behind than this gives the missed lines up, counted as dropped (a loop that stalled). */
#define SYSLOG_MAX_LAG_US 1000000u
/* Background lines one device sends per timer event at most: a device that is behind catches up in steps. */
#define SYSLOG_MAX_PER_TICK 64u

/* One device's syslog state (only devices of groups with sinks have one). */
struct syslog_dev {
    struct loop_timer timer;       /* the next background line, armed while one is scheduled */
    struct rate_arrivals arrivals; /* when the next background line is due (the profile in force) */
    struct device *dev;            /* the device (the timer's callback needs it) */
    struct ledger_row *rows;       /* one per sink of the device's group, in --syslog-sink order */
    uint32_t seq;                  /* the last sequenceId sent, 0 before the first */
};

/**
 * @brief Load the groups' catalogs, create each worker's sinks and every device's state, and arm the
 * background lines. Nothing happens for a fleet without --syslog-sink. Call before the workers start.
 * @return FLEET_OK, or why not in @p err (a catalog refused, a socket that cannot be made).
 */
enum fleet_err syslog_start_all(struct fleet *fleet, char *err, size_t err_len);

/**
 * @brief After the workers stopped: stop every device's timer, write what the sockets take and count
 * what is left as send failures, close the sinks. The ledger rows stay for the report. Idempotent.
 */
void syslog_settle_all(struct fleet *fleet);

/** @brief Free everything syslog_start_all() made (settles first). Accepts a fleet without syslog. */
void syslog_close_all(struct fleet *fleet);

/* Who an event's line names, when the event knows: {user} and {peer}; NULL members are drawn. */
struct syslog_who {
    const char *user; /* who logged in or committed */
    const char *peer; /* the address they came from */
};

/**
 * @brief The device's syslog rate profile changed (the control API's syslog-rate): schedule its background
 * lines from now on by the profile in force, nothing made up for the time at the old one. Runs on the
 * device's worker; nothing for a device without syslog.
 */
void syslog_chan_rate_changed(struct device *dev);

/**
 * @brief Send the catalog lines of event @p id (a flap's "link-down", ...) from @p dev to every sink of its
 * group, now: the line named @p id and those named @p id "." anything ("boot.1", "boot.2"), in catalog
 * order, filling {if} and {ifindex} with interface @p if_pos (-1: none) and {user} and {peer} from @p who
 * (NULL: drawn), each with @p event_id (event.h; 0: none). Runs on the device's worker.
 * @return The lines sent: 0 when the device has no syslog or its catalog has no such line.
 */
int syslog_chan_event(struct device *dev, const char *id, int32_t if_pos, uint64_t event_id,
                      const struct syslog_who *who);

/**
 * @brief Count one line @p dev would have sent on its own before the run window as suppressed_pre_window
 * on each of its sinks, without building it. Runs on the device's worker. Nothing when it has no syslog.
 */
void syslog_chan_suppress(struct device *dev);

/**
 * @brief Append the device's "syslog_sinks":[...] member (ledger rows with their sinks' names) to @p b;
 * nothing when the device has no syslog. Runs on the device's worker, or after the workers stopped.
 */
void syslog_chan_report(const struct device *dev, struct sbuf *b);

/** @brief Add the device's rows into @p sum (every sink). */
void syslog_chan_sum(const struct device *dev, struct ledger_row *sum);

/** @brief Reconnects and connected sinks of worker @p w's sinks into @p connects and @p up (metrics). */
void syslog_chan_sink_stats(const struct fleet *fleet, uint32_t w, uint64_t *connects, uint64_t *disconnects,
                            uint32_t *up, uint32_t *sinks);

#endif
