/*
 * push's --fleet-report: what the fleet says each subscription sent (the
 * per-subscription rows of its --report, or of GET /api/v1/report when
 * given the fleet's URL) against what "fleetsim-stress push" received,
 * device by device and subscription id by id, exactly: updates,
 * change_updates and events must be equal; missed slots are shown side by
 * side (the fleet counts the slots it skipped, the client the slots without
 * an update: equal when nothing was lost on the way).
 */
#ifndef STRESS_PUSH_RECON_H
#define STRESS_PUSH_RECON_H

#include <stdint.h>
#include <stdio.h>

#include "netaddr.h"
#include "sbuf.h"

/* What push received from one device's subscription. */
struct push_recon_row {
    uint32_t device;         /* device number */
    uint32_t addr;           /* its address (low 32 bits), host order */
    uint16_t port;           /* its port */
    int subscribed;          /* 1 when the subscription was accepted (id valid) */
    uint32_t id;             /* subscription id */
    uint64_t updates;        /* push-update received */
    uint64_t change_updates; /* push-change-update received */
    uint64_t events;         /* event notifications received (stream subscriptions) */
    uint64_t missed;         /* slots without an update, as the client counted them */
};

/* The verdict. */
struct push_recon {
    uint64_t matched;          /* subscriptions whose counts are equal on both sides */
    uint64_t mismatched;       /* subscriptions found on both sides with a count that differs */
    uint64_t missing;          /* subscriptions push had that the report does not list */
    uint64_t unknown;          /* report subscriptions of the devices pushed to that push did not have */
    uint64_t sent_updates;     /* the report's totals over the matched and mismatched ones */
    uint64_t sent_changes;     /* ... change_updates */
    uint64_t sent_events;      /* ... events */
    uint64_t fleet_missed;     /* ... missed_slots */
    uint64_t received_updates; /* push's over the same ones */
    uint64_t received_changes; /* ... change_updates */
    uint64_t received_events;  /* ... events */
};

/**
 * @brief Read the fleet's report and compare; print a line per subscription that differs (at most a few
 * dozen) and a verdict on @p out.
 * @param[out] r The verdict (zeroed first).
 * @param[in] source The report's file, or the fleet's http://HOST:PORT (GET /api/v1/report).
 * @param[in] token_path The bearer token's file for the URL (--api-token-file), or NULL.
 * @param[in] fam Address family of the rows' addresses.
 * @param[in] rows What arrived, one per device.
 * @param[in] count Entries of @p rows.
 * @param[in] out Where the lines go.
 * @return 0 when every subscription matched, 1 when any did not, -1 when the report could not be read
 *         (a message printed on stderr).
 */
int push_recon_run(struct push_recon *r, const char *source, const char *token_path,
                   const struct net_family *fam, const struct push_recon_row *rows, uint32_t count,
                   FILE *out);

/**
 * @brief Compare one report subscription's counts with what arrived.
 * @return 1 when updates, change_updates and events are all equal.
 */
int push_recon_equal(const struct push_recon_row *got, uint64_t updates, uint64_t change_updates,
                     uint64_t events);

/** @brief Append the verdict as a JSON object. */
void push_recon_json(struct sbuf *b, const struct push_recon *r);

#endif
