/*
 * Recordings as SNMP data: a walk of a real device, read from an snmpsim
 * `.snmprec` file (`OID|TAG|VALUE`) or from net-snmp's `snmpwalk -On`
 * output (`.OID = TYPE: value`), kept sorted by OID and served by the agent
 * for every OID the live objects (mib_values.c) do not own. The table is
 * loaded once at start and shared read-only by every worker; each device
 * reads it with its own seed, so recorded counters move at a rate of their
 * own on every device. The exporter writes a device's whole view, live and
 * recorded, back out as `.snmprec`.
 */
#ifndef FLEET_RECORDING_H
#define FLEET_RECORDING_H

#include <stdint.h>
#include <stdio.h>

#include "ber.h"
#include "err.h"
#include "spdu.h"

struct device;

/* Longest line read; a longer one is refused (a recorded value is at most 64 KiB as hex is 128 KiB). */
#define REC_LINE_MAX_BYTES (160u * 1024u)
/* Largest recorded value in bytes: an OCTET STRING's SIZE limit (RFC 2578 section 7.1.2). */
#define REC_VALUE_MAX_BYTES 65535u
/* Most entries in one recording; a real device's full walk is well below 100,000. */
#define REC_MAX_ENTRIES 1000000u
/*
 * Band of rates, in units per second, at which a recorded Counter32 or Counter64 grows. A recording
 * does not say what a counter counts, so every counter is treated as octet-like: 1 kB/s to 10 MB/s,
 * drawn per (device seed, OID). Packet or error counters therefore move faster than a real device's;
 * the way out, if that matters, is a per-OID rate column in the recording.
 */
#define REC_COUNTER_RATE_MIN 1000u
#define REC_COUNTER_RATE_MAX 10000000u

/* One recorded variable. */
struct rec_entry {
    uint32_t oid_off; /* first arc of its name in rec_table.arcs */
    uint32_t line;    /* line of the file it came from (1-based), for error messages */
    uint16_t oid_len; /* arcs in its name, 2..OID_MAX_SUBIDS */
    uint8_t tag;      /* enum ber_tag of its value */
    uint8_t moves;    /* 1: a counter or an uptime, served as value + growth since the fleet started */
    union {
        int64_t i;  /* INTEGER */
        uint64_t u; /* Counter32, Gauge32, TimeTicks, Counter64 */
        struct {
            uint32_t off; /* first byte in rec_table.bytes (OCTET STRING, IpAddress, Opaque), or first
                             arc in rec_table.arcs (OBJECT IDENTIFIER) */
            uint32_t len; /* bytes, or arcs */
        } ref;
    } v; /* the recorded value, by tag */
};

/* A loaded recording: entries sorted by OID, no two equal. Read-only once loaded. */
struct rec_table {
    struct rec_entry *entries; /* count entries, ascending by OID */
    uint32_t count;            /* entries used */
    uint32_t cap;              /* entries allocated */
    uint32_t *arcs;            /* names and OID values, referenced by offset */
    uint32_t arcs_len;         /* arcs used */
    uint32_t arcs_cap;         /* arcs allocated */
    uint8_t *bytes;            /* string values, referenced by offset */
    uint32_t bytes_len;        /* bytes used */
    uint32_t bytes_cap;        /* bytes allocated */
};

/**
 * @brief Read a recording from @p path: `.snmprec` or `snmpwalk -On` output, told apart by the first
 * line that is neither blank nor a `#` comment.
 * @param[out] rec The new table (free with rec_free()); NULL on failure.
 * @param[out] err On failure, "path:line: problem".
 * @return FLEET_OK; FLEET_ERR_SYS when the file cannot be read; FLEET_ERR_INVAL for a malformed line or
 * a duplicate OID; FLEET_ERR_LIMIT past REC_LINE_MAX_BYTES or REC_MAX_ENTRIES; FLEET_ERR_NOMEM.
 */
enum fleet_err rec_load(const char *path, struct rec_table **rec, char *err, size_t err_len);

/** @brief Like rec_load(), from an open stream; @p name is the file name used in messages. */
enum fleet_err rec_read(FILE *in, const char *name, struct rec_table **rec, char *err, size_t err_len);

/** @brief Free a table; NULL is fine. */
void rec_free(struct rec_table *rec);

/** @brief The name of entry @p i. */
void rec_entry_oid(const struct rec_table *rec, uint32_t i, struct oid *oid);

/** @return <0, 0, >0 as entry @p i sorts before, equal to, after @p oid. */
int rec_entry_cmp(const struct rec_table *rec, uint32_t i, const struct oid *oid);

/** @return Index of the entry named @p oid, or rec->count. */
uint32_t rec_find(const struct rec_table *rec, const struct oid *oid);

/** @return Index of the first entry after @p oid, or rec->count. */
uint32_t rec_find_next(const struct rec_table *rec, const struct oid *oid);

/**
 * @brief Value of entry @p i on a device with @p seed, @p elapsed_ms after the fleet started.
 * Counters grow at a rate in [REC_COUNTER_RATE_MIN, REC_COUNTER_RATE_MAX] per second drawn from
 * (seed, OID) (Counter32 wraps at 2^32); sysUpTime.0 and hrSystemUptime.0 grow at 100 ticks per second.
 * @param[out] oid_scratch Holds an OBJECT IDENTIFIER value; @p value points at it.
 * @param[out] value Points into the table (strings) or @p oid_scratch; valid while both live.
 */
void rec_value(const struct rec_table *rec, uint32_t i, uint64_t seed, uint64_t elapsed_ms,
               struct oid *oid_scratch, struct spdu_value *value);

/**
 * @brief Drop every entry @p shadowed says yes to (the live objects own those OIDs). Call before the
 * table is shared. @return Entries dropped.
 */
uint32_t rec_drop(struct rec_table *rec, int (*shadowed)(const struct oid *oid, void *ctx), void *ctx);

/**
 * @brief Print one variable as a `.snmprec` line: `OID|TAG|VALUE`, strings that are not printable
 * ASCII as `4x|hex`. @return FLEET_OK, or FLEET_ERR_INVAL for a type `.snmprec` cannot hold.
 */
enum fleet_err rec_print_line(FILE *out, const struct oid *name, const struct spdu_value *value);

#endif
