/*
 * "fleetsim-stress reconcile --format syslog|snmptrapd|csv": what the
 * fleet's report says each device sent on a push channel (the ledger's
 * sent, summed over the device's sinks) against what a collector persisted
 * from that source, read from the collector's own file.
 *
 * A source is what a collector knows a device by: for syslog its host name
 * (the report's "hostname", as fleetsim writes it into HOSTNAME), for traps
 * its address (the report's "address"; the sysName.0 varbind when the
 * address is not one of the report's), for NETCONF notifications (csv
 * only) its address. Devices sharing a source (one address without
 * --ip-per-device) are one line. Each source gets one verdict of
 * recon_classify(): OK, LOSS, DUP (more than sent, or a sequence number
 * seen twice from a source with one device and one sink), MISSING, PHANTOM
 * (a source the report does not list). With ordering, the sequence numbers
 * of each source are read in the file's order and every adjacent descent
 * (a number lower than the one before it) is an inversion.
 *
 * Used as an object: recon_push_new() from the report, recon_push_line()
 * for every line of the collector's files, recon_push_finish() to print.
 */
#ifndef STRESS_RECON_PUSH_H
#define STRESS_RECON_PUSH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json_read.h"
#include "recon_format.h"
#include "reconcile.h"

/* Longest line of a collector's file looked at; a longer one is counted as not understood. */
#define RECON_PUSH_LINE_MAX_BYTES 65536

/* What a push join is asked. */
struct recon_push_opts {
    enum recon_format format; /* RECON_FMT_SYSLOG, _SNMPTRAPD or _CSV */
    const char *run_tag;      /* keep only lines with this run tag (syslog), or NULL */
    int ordering;             /* 1: count inversions per source; any makes the exit 1 */
    double tolerance;         /* allowed |sent - received| as a share of sent */
};

struct recon_push;

/**
 * @brief Take every device's sources and sent counts from a parsed report.
 * @param[in] report fleetsim's --report document (kept by the caller while the object lives).
 * @param[out] out Where report rows whose ledger does not add up are printed (BROKEN lines).
 * @return The object, or NULL with @p err set (the report lacks what the join needs, or memory).
 */
struct recon_push *recon_push_new(const struct jsonr_value *report, const struct recon_push_opts *opts,
                                  FILE *out, char *err, size_t err_len);

/** @brief Free @p p (NULL: nothing). */
void recon_push_free(struct recon_push *p);

/**
 * @brief Account one line of the collector's file (without its LF).
 * @return 0, or -1 for a malformed CSV row (@p err says which and why; the caller stops).
 */
int recon_push_line(struct recon_push *p, const char *line, size_t len, char *err, size_t err_len);

/**
 * @brief Account a line longer than RECON_PUSH_LINE_MAX_BYTES (not parsed: counted as not understood).
 */
void recon_push_overlong(struct recon_push *p);

/**
 * @brief Print one line per source and the totals; with @p rows, add them there as for recon_compare().
 * @return 0 when every source is OK (and, with ordering, no inversion), else 1.
 */
int recon_push_finish(struct recon_push *p, FILE *out, struct recon_rows *rows);

/**
 * @brief Read the files @p paths (in order) into @p p line by line.
 * @return 0, or -1 with a message on stderr (a file unreadable, a malformed CSV row).
 */
int recon_push_read_files(struct recon_push *p, const char *const *paths, uint32_t count);

#endif
