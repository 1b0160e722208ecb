/*
 * Fuzz harness of what reconcile does with a collector's file (issue 29
 * item 7): the syslog line parser (stress/recv_syslog.h) above all, and
 * with it the snmptrapd and CSV line readers and the push join they feed
 * (stress/recon_push.h), over a fixed two-device report.
 *
 * Input: byte 0 chooses the join's format (bits 0-1: syslog, snmptrapd,
 * csv) and whether a run tag is asked (bit 2); the rest is lines separated
 * by LF. Each line is copied to a heap block of exactly its size (no NUL)
 * and parsed by all three readers; what they return must lie inside the
 * line and obey their headers' bounds, and a second parse gives the same
 * answer. Then the line goes to the join, and the join's totals must add
 * up: every line is read, none counted twice.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "json_read.h"
#include "recon_push.h"
#include "recv_csv.h"
#include "recv_snmptrapd.h"
#include "recv_syslog.h"
#include "sbuf.h"

/* Longest input looked at. */
#define FZ_MAX_INPUT_BYTES 65536

static const char fz_report[] =
    "{\"devices\":[{\"device\":0,\"address\":\"127.0.0.1\",\"hostname\":\"crs-x-0\",\"notifications\":{"
    "\"sent\":1},"
    "\"trap_sinks\":[{\"sent\":1}],\"syslog_sinks\":[{\"sink\":\"udp://"
    "127.0.0.1:514\",\"emitted\":2,\"sent\":2,"
    "\"send_failures\":0,\"dropped\":0,\"suppressed_pre_window\":0,\"queued\":0}]},"
    "{\"device\":1,\"address\":\"fd00::1\",\"hostname\":\"crs-x-1\",\"notifications\":{\"sent\":0},"
    "\"trap_sinks\":[{\"sent\":3}],\"syslog_sinks\":[{\"sink\":\"udp://"
    "127.0.0.1:514\",\"emitted\":1,\"sent\":1,"
    "\"send_failures\":0,\"dropped\":0,\"suppressed_pre_window\":0,\"queued\":0}]}]}";

static int
fz_inside(const char *p, size_t n, const char *line, size_t len)
{
    return p >= line && n <= len && p + n <= line + len;
}

static void
fz_line(const uint8_t *bytes, size_t len, struct recon_push *p)
{
    char *line = malloc(len ? len : 1);
    struct recv_msg m, again;
    struct recv_csv_row row;
    const char *v, *why = NULL;
    size_t n;
    char err[256];

    fz_require(line != NULL, "out of memory");
    memcpy(line, bytes, len);
    if (!recv_syslog_parse(line, len, &m)) {
        fz_require(m.source && fz_inside(m.source, m.source_len, line, len), "source outside the line");
        fz_require(m.source_len >= 1 && m.source_len <= RECV_HOST_MAX_BYTES, "source length out of bounds");
        for (size_t i = 0; i < m.source_len; i++) {
            fz_require(m.source[i] > ' ' && m.source[i] < 127, "a source byte that is not PRINTUSASCII");
        }
        fz_require(!m.tag || fz_inside(m.tag, m.tag_len, line, len), "tag outside the line");
        fz_require(m.has_seq || m.seq == 0, "a sequence value without has_seq");
        fz_require(recv_tag_equal(&m, "") == (m.tag && m.tag_len == 0), "empty tag matched wrongly");
        recv_tag_equal(&m, "run\"]\\x");
        fz_require(!recv_syslog_parse(line, len, &again) && !memcmp(&m, &again, sizeof m),
                   "a second parse gives another answer");
    } else {
        fz_require(m.source == NULL && !m.has_seq && !m.tag, "a refused line reports content");
    }
    if (recv_trapd_header(line, len, &v, &n)) {
        fz_require(fz_inside(v, n, line, len) && n >= 1 && n <= RECV_TRAPD_ADDR_MAX_BYTES, "trap address");
    }
    if (recv_trapd_sysname(line, len, &v, &n)) {
        fz_require(fz_inside(v, n, line, len) && n >= 1 && n <= 255, "sysName");
    }
    switch (recv_csv_parse(line, len, &row, &why)) {
    case 0:
        fz_require(row.source[0] && strlen(row.source) <= RECV_CSV_FIELD_MAX_BYTES, "csv source");
        break;
    case -1:
        fz_require(why != NULL, "a refused row without a reason");
        break;
    default:
        break;
    }
    recon_push_line(p, line, len, err, sizeof err);
    free(line);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const enum recon_format formats[4] = {RECON_FMT_SYSLOG, RECON_FMT_SNMPTRAPD, RECON_FMT_CSV,
                                                 RECON_FMT_SYSLOG};
    struct jsonr_value *report = NULL;
    struct recon_push_opts o = {0};
    struct recon_rows rows = {0};
    struct recon_push *p;
    uint64_t lines = 0;
    size_t off = 1;
    char err[256];
    FILE *out;

    if (size < 1 || size > FZ_MAX_INPUT_BYTES) {
        return 0;
    }
    o.format = formats[data[0] & 3];
    o.run_tag = (data[0] & 4) ? "r1" : NULL;
    o.ordering = 1;
    fz_require(!jsonr_parse(fz_report, strlen(fz_report), &report, err, sizeof err), "the report parses");
    out = fopen("/dev/null", "w");
    fz_require(out != NULL, "/dev/null");
    p = recon_push_new(report, &o, out, err, sizeof err);
    fz_require(p != NULL, "the join takes the report");
    while (off <= size) {
        const uint8_t *lf = memchr(data + off, '\n', size - off);
        size_t len = lf ? (size_t)(lf - (data + off)) : size - off;
        fz_line(data + off, len, p);
        lines++;
        if (!lf) {
            break;
        }
        off += len + 1;
    }
    recon_push_finish(p, out, &rows);
    fz_require(rows.lines == lines, "a line read not counted, or counted twice");
    fz_require(rows.not_understood + rows.untagged <= rows.lines, "more lines left out than read");
    fz_require(o.format != RECON_FMT_SYSLOG ||
                   rows.received + rows.not_understood + rows.untagged == rows.lines,
               "a syslog line neither received nor left out");
    fclose(out);
    sbuf_free(&rows.devices);
    recon_push_free(p);
    jsonr_free(report);
    return 0;
}
