/*
 * "fleetsim-stress reconcile": what the simulator says it sent (its
 * --report) against what notify says it received (notify's --json), device
 * by device. Devices are joined on address:port, and within a device the
 * subscriber whose peer is notify's local address of that session. Each
 * device gets one verdict; report rows whose counters do not add up
 * (emitted = sent + send_failures + dropped + suppressed) are listed too.
 *
 * With --report instead of --received, the sent side is restconf's manifest:
 * the edits a controller accepted (HTTP 200/201/204) for each device port,
 * against the edit-configs the report says each device received.
 */
#ifndef STRESS_RECONCILE_H
#define STRESS_RECONCILE_H

#include <stdint.h>
#include <stdio.h>

#include "json_read.h"
#include "sbuf.h"

/* A reconcile manifest keeps at most this many device rows (the first ones printed). */
#define RECON_ROWS_MAX 100000

enum recon_class {
    RECON_OK,      /* received what was sent (within the tolerance) */
    RECON_LOSS,    /* received fewer than sent, beyond the tolerance */
    RECON_DUP,     /* duplicates seen, or received more than sent beyond the tolerance */
    RECON_MISSING, /* sent > 0, but the device is absent from notify's manifest or received nothing */
    RECON_PHANTOM, /* a device the report does not list, or a subscriber it does not know, delivered */
    RECON_CLASS_COUNT,
};

/* What is known of one device on both sides. */
struct recon_facts {
    int in_report;        /* the report lists the device */
    int in_received;      /* notify's manifest lists it */
    int subscriber_known; /* the report knows notify's session (a subscriber with that peer, or none listed)
                           */
    uint64_t sent;        /* the report's sent: of that subscriber, else of the device */
    uint64_t received;    /* notify's received */
    uint64_t duplicates;  /* notify's duplicates */
};

/* What one join found, for the --json manifest: a row per device line printed, and the totals. */
struct recon_rows {
    struct sbuf devices;                /* the "devices" array's members, comma-separated, in print order */
    uint64_t kept;                      /* rows in devices (at most RECON_ROWS_MAX) */
    uint64_t total;                     /* device lines printed (kept plus those past the bound) */
    uint64_t counts[RECON_CLASS_COUNT]; /* device lines by class */
    uint64_t broken;                    /* BROKEN report rows (the notify join only) */
    uint64_t sent;                      /* sent total: the report's, or the edits restconf had accepted */
    uint64_t received;                  /* received total: notify's, or the report's edit-configs */
    /* The push join only (recon_push.h), 0 otherwise: */
    uint64_t inversions;     /* adjacent descents of sequence numbers (with --ordering) */
    uint64_t lines;          /* lines read from the collector's files */
    uint64_t not_understood; /* of those, lines neither parsed nor counted */
    uint64_t untagged;       /* of those, lines without --run-tag's tag */
};

/** @return The verdict for @p f; @p tolerance is the allowed |sent - received| as a share of sent. */
enum recon_class recon_classify(const struct recon_facts *f, double tolerance);

/** @return "OK", "LOSS", "DUP", "MISSING" or "PHANTOM". */
const char *recon_class_name(enum recon_class c);

/**
 * @brief Join a parsed report with a parsed notify manifest and print one line per device, broken report
 * rows, and totals to @p out. With @p rows (NULL: none; zeroed by the caller), every device line is also
 * added there as a manifest row and the totals are set; its devices buffer is the caller's to free.
 * @return 0 when every line is OK, 1 otherwise, 2 when either document lacks what the join needs (@p err
 * says what; nothing useful was printed).
 */
int recon_compare(const struct jsonr_value *report, const struct jsonr_value *received, double tolerance,
                  FILE *out, struct recon_rows *rows, char *err, size_t err_len);

/**
 * @brief Join restconf's manifest (edits the controller accepted, per device port) with a parsed report
 * (edit-configs each device received) and print one line per device edited or receiving, and totals.
 * Devices are matched by port: restconf knows a device only by the port its URL names, so a report
 * listing one port on several addresses (--ip-per-device) cannot be joined (2). @p rows as for
 * recon_compare() (sent is what restconf had accepted, received the report's edit-configs).
 * @return 0 when every line is OK, 1 otherwise, 2 when a document lacks what the join needs.
 */
int recon_compare_restconf(const struct jsonr_value *report, const struct jsonr_value *sent, double tolerance,
                           FILE *out, struct recon_rows *rows, char *err, size_t err_len);

#endif
