/*
 * A collector's counts as CSV rows "channel,source,count": the channel
 * (syslog, trap or netconf), the source as the collector names it (a host
 * name or an address) and how many it persisted. A header row whose first
 * field is "channel", blank lines and lines starting with '#' are skipped.
 * A field may be double-quoted (RFC 4180, "" for a quote inside).
 */
#ifndef STRESS_RECV_CSV_H
#define STRESS_RECV_CSV_H

#include <stddef.h>
#include <stdint.h>

/* Longest field kept (a source's name or address). */
#define RECV_CSV_FIELD_MAX_BYTES 255

/* One row. */
struct recv_csv_row {
    char channel[16];                          /* the channel, NUL-terminated */
    char source[RECV_CSV_FIELD_MAX_BYTES + 1]; /* the source, NUL-terminated, quotes undone */
    uint64_t count;                            /* messages the collector persisted from it */
};

/**
 * @brief Parse one line (without its LF; a trailing CR is ignored).
 * @param[out] row The row, on 0.
 * @param[out] why What is wrong, on -1 (a static string).
 * @return 0 for a row, 1 for a line to skip, -1 for a malformed row.
 */
int recv_csv_parse(const char *line, size_t len, struct recv_csv_row *row, const char **why);

#endif
