/*
 * fleetsim-stress report: reads each manifest with the project's JSON reader, refuses what is not a
 * fleetsim-stress manifest of a version it knows, and writes one HTML page: a style, Chart.js (read
 * from Debian's libjs-chart.js, common/chartjs.c), the runs' data as JSON, and the page's script
 * (stress/report_page.js, compiled in). The data is what the charts need, not the whole manifest:
 * notify's per-device objects become columns of numbers, reconcile's rows are sorted by loss (the
 * worst REPORT_RECON_MAX kept), long lists of objects are cut; a ceiling manifest keeps its first
 * REPORT_CELLS_MAX cells, each with its samples thinned evenly to REPORT_SAMPLES_MAX.
 */
#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chartjs.h"
#include "json_read.h"
#include "stats.h"

/* The page's script (generated from stress/report_page.js at build time). */
extern const char report_page_js[];
extern const size_t report_page_js_len;

/* Lists of objects inside "results" (failed devices, nodes not connected) keep this many in the page. */
#define REPORT_LIST_MAX 50
/* restconf's "devices" (one per stream) are kept up to this many. */
#define REPORT_DEVICES_MAX 100
/* reconcile's devices drawn: the worst losses first, up to this many. */
#define REPORT_RECON_MAX 1000

static const char *const known_modes[] = {"edit",     "mount",     "notify", "snmp", "controller-mount",
                                          "restconf", "reconcile", "ceiling"};

static const char page_head[] =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; "
    "style-src 'unsafe-inline'; img-src data:\">\n"
    "<title>fleetsim-stress report</title>\n<style>\n"
    "body{font:14px/1.4 sans-serif;margin:16px 24px;color:#222;background:#fff}\n"
    "h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;margin-top:28px}h3{font-size:14px}\n"
    "table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #ddd;padding:2px 8px;text-align:left;"
    "font-weight:normal}th{background:#f4f4f4}\n"
    ".run{display:inline-block;vertical-align:top;margin:0 16px 8px 0}.run.ok h3{color:#2a7a2a}"
    ".run.bad h3{color:#b22}\n"
    ".flag{background:#fde8e8;border:1px solid #b22;padding:6px 10px;color:#900;font-weight:bold}\n"
    ".note{color:#666}.chart{margin:10px 0 18px}\n"
    ".cell-charts .chart{display:inline-block;vertical-align:top;margin-right:14px;max-width:560px}\n"
    ".answer{font-size:18px;font-weight:bold}\n"
    "</style>\n</head><body>\n<div id=\"report\"></div>\n<script>\n";

/* Append s as a JSON string; "<", ">" and "&" as \u escapes, so the text cannot close the script. */
static void
put_string(struct sbuf *b, const char *s)
{
    sbuf_adds(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            sbuf_printf(b, "\\%c", *p);
        } else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&') {
            sbuf_printf(b, "\\u%04x", *p);
        } else {
            sbuf_printf(b, "%c", *p);
        }
    }
    sbuf_adds(b, "\"");
}

/* Append value v; arrays of objects longer than @p cut (0: no limit) keep their first @p cut. */
static void
put_value(struct sbuf *b, const struct jsonr_value *v, size_t cut)
{
    const struct jsonr_value *c;
    size_t n = 0;

    switch (v->type) {
    case JSONR_NULL:
    case JSONR_BOOL:
    case JSONR_NUMBER:
        jsonr_print(b, v); /* only strings need the page's escaping */
        break;
    case JSONR_STRING:
        put_string(b, v->str);
        break;
    case JSONR_ARRAY:
        sbuf_adds(b, "[");
        for (c = v->child; c; c = c->next) {
            if (cut && n == cut && c->type == JSONR_OBJECT) {
                break;
            }
            sbuf_adds(b, n++ ? "," : "");
            put_value(b, c, cut);
        }
        sbuf_adds(b, "]");
        break;
    case JSONR_OBJECT:
        sbuf_adds(b, "{");
        for (c = v->child; c; c = c->next) {
            sbuf_adds(b, n++ ? "," : "");
            put_string(b, c->key);
            sbuf_adds(b, ":");
            put_value(b, c, cut);
        }
        sbuf_adds(b, "}");
        break;
    }
}

/* notify's "devices": one array per counter, device i at index i. */
static void
put_device_columns(struct sbuf *b, const struct jsonr_value *devices)
{
    static const char *const cols[] = {"received", "gaps", "missing", "duplicates", "reordered"};
    const struct jsonr_value *d;
    size_t n;

    sbuf_adds(b, ",\"device_columns\":{");
    for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++) {
        sbuf_printf(b, "%s\"%s\":[", k ? "," : "", cols[k]);
        for (d = devices->child, n = 0; d; d = d->next, n++) {
            uint64_t v = 0;
            (void)jsonr_get_u64(d, cols[k], &v); /* absent or null: 0 */
            sbuf_printf(b, "%s%" PRIu64, n ? "," : "", v);
        }
        sbuf_adds(b, "]");
    }
    sbuf_adds(b, ",\"failed\":[");
    for (d = devices->child, n = 0; d; d = d->next) {
        const char *why = jsonr_get_str(d, "failure");
        uint64_t dev = 0;
        if (why && n < REPORT_LIST_MAX) {
            (void)jsonr_get_u64(d, "device", &dev);
            sbuf_printf(b, "%s{\"device\":%" PRIu64 ",\"failure\":", n++ ? "," : "", dev);
            put_string(b, why);
            sbuf_adds(b, "}");
        }
    }
    sbuf_adds(b, "]}");
}

/* One reconcile row and its loss, for sorting. */
struct recon_pick {
    const struct jsonr_value *row; /* the manifest's device object */
    double loss;                   /* sent - received (sent absent: 0) */
    size_t index;                  /* its place in the manifest: ties keep that order */
};

static int
cmp_loss(const void *a, const void *b)
{
    const struct recon_pick *x = a;
    const struct recon_pick *y = b;

    if (x->loss != y->loss) {
        return x->loss < y->loss ? 1 : -1;
    }
    return (x->index > y->index) - (x->index < y->index);
}

/* reconcile's "devices": the REPORT_RECON_MAX worst losses, worst first, and how many there were. */
static void
put_recon_devices(struct sbuf *b, const struct jsonr_value *devices)
{
    struct recon_pick *picks = calloc(devices->count ? devices->count : 1, sizeof *picks);
    size_t n = 0;

    if (!picks) {
        b->failed = 1;
        return;
    }
    for (const struct jsonr_value *d = devices->child; d; d = d->next) {
        uint64_t sent = 0, received = 0;
        if (d->type != JSONR_OBJECT) {
            continue;
        }
        (void)jsonr_get_u64(d, "sent", &sent); /* null: a device only notify lists */
        (void)jsonr_get_u64(d, "received", &received);
        picks[n] = (struct recon_pick){.row = d, .loss = (double)sent - (double)received, .index = n};
        n++;
    }
    qsort(picks, n, sizeof *picks, cmp_loss);
    sbuf_printf(b, ",\"recon_devices_total\":%zu,\"recon_devices\":[", n);
    for (size_t i = 0; i < n && i < REPORT_RECON_MAX; i++) {
        sbuf_adds(b, i ? "," : "");
        put_value(b, picks[i].row, 0);
    }
    sbuf_adds(b, "]");
    free(picks);
}

/* Append array @p a keeping at most @p max of its elements, evenly spread, the first and last among them. */
static void
put_thinned(struct sbuf *b, const struct jsonr_value *a, size_t max)
{
    size_t n = 0, kept = 0, next = 0;

    sbuf_adds(b, "[");
    for (const struct jsonr_value *c = a->child; c; c = c->next, n++) {
        /* The k-th kept element is element round(k x (count - 1) / (max - 1)). */
        if (a->count > max) {
            next = max > 1 ? (size_t)(((double)kept * (double)(a->count - 1)) / (double)(max - 1) + 0.5) : 0;
            if (n != next || kept == max) {
                continue;
            }
        }
        sbuf_adds(b, kept++ ? "," : "");
        put_value(b, c, 0);
    }
    sbuf_adds(b, "]");
}

/* One ceiling cell: its members, "samples" and "settle" thinned, with how many there were when cut. */
static void
put_ceiling_cell(struct sbuf *b, const struct jsonr_value *cell)
{
    size_t n = 0;

    sbuf_adds(b, "{");
    for (const struct jsonr_value *c = cell->child; c; c = c->next) {
        int thin = (!strcmp(c->key, "samples") || !strcmp(c->key, "settle")) && c->type == JSONR_ARRAY;
        sbuf_adds(b, n++ ? "," : "");
        put_string(b, c->key);
        sbuf_adds(b, ":");
        if (!thin) {
            put_value(b, c, 0);
            continue;
        }
        put_thinned(b, c, REPORT_SAMPLES_MAX);
        if (c->count > REPORT_SAMPLES_MAX) {
            sbuf_printf(b, ",\"%s_total\":%zu", c->key, c->count);
        }
    }
    sbuf_adds(b, "}");
}

/* A ceiling manifest: everything but the cells as written, the first REPORT_CELLS_MAX cells, their count. */
static void
put_ceiling(struct sbuf *b, const struct jsonr_value *m)
{
    const struct jsonr_value *cells = jsonr_get(m, "cells");
    size_t n = 0;

    for (const struct jsonr_value *c = m->child; c; c = c->next) {
        if (!strcmp(c->key, "file") || !strcmp(c->key, "label") || !strcmp(c->key, "cells")) {
            continue; /* file and label are the page's own */
        }
        sbuf_adds(b, ",");
        put_string(b, c->key);
        sbuf_adds(b, ":");
        put_value(b, c, !strcmp(c->key, "discarded") ? REPORT_CELLS_MAX : 0);
    }
    sbuf_printf(b, ",\"cells_total\":%zu,\"cells\":[", cells->count);
    for (const struct jsonr_value *c = cells->child; c && n < REPORT_CELLS_MAX; c = c->next) {
        sbuf_adds(b, n++ ? "," : "");
        put_ceiling_cell(b, c);
    }
    sbuf_adds(b, "]");
}

void
report_run_data(struct sbuf *b, const struct jsonr_value *m, const char *file, const char *label)
{
    static const char *const kept[] = {"tool",       "version", "mode",  "parameters", "scenario",  "results",
                                       "per_second", "buckets", "curve", "events",     "fleet_seed"};
    const char *mode = jsonr_get_str(m, "mode");

    sbuf_adds(b, "{\"file\":");
    put_string(b, file);
    sbuf_adds(b, ",\"label\":");
    put_string(b, label);
    if (mode && !strcmp(mode, "ceiling")) {
        put_ceiling(b, m);
        sbuf_adds(b, "}");
        return;
    }
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
        const struct jsonr_value *v = jsonr_get(m, kept[i]);
        if (!v) {
            continue;
        }
        sbuf_printf(b, ",\"%s\":", kept[i]);
        put_value(b, v, !strcmp(kept[i], "results") ? REPORT_LIST_MAX : 0);
    }
    {
        const struct jsonr_value *devices = jsonr_get(m, "devices");
        if (devices && devices->type == JSONR_ARRAY) {
            if (mode && !strcmp(mode, "notify")) {
                put_device_columns(b, devices);
            } else if (mode && !strcmp(mode, "reconcile")) {
                put_recon_devices(b, devices);
            } else {
                sbuf_adds(b, ",\"devices\":");
                put_value(b, devices, REPORT_DEVICES_MAX);
            }
        }
    }
    sbuf_adds(b, "}");
}

/* The first @p words dot-separated numbers of @p version, as text ("0.1"). */
static void
version_prefix(const char *version, int words, char *out, size_t len)
{
    size_t n = 0;

    for (const char *p = version; *p && n + 1 < len; p++) {
        if (*p == '.' && --words == 0) {
            break;
        }
        out[n++] = *p;
    }
    out[n] = '\0';
}

/* A ceiling manifest: "measured_quantity" named, "result" an object, "cells" an array of objects whose
 * "samples" and "settle" (when present) are arrays of objects. */
static int
check_ceiling(const struct jsonr_value *m, char *why, size_t why_len)
{
    const struct jsonr_value *cells = jsonr_get(m, "cells");
    const struct jsonr_value *result = jsonr_get(m, "result");
    static const char *const lists[] = {"samples", "settle"};
    size_t i = 0;

    if (!jsonr_get_str(m, "measured_quantity") || !result || result->type != JSONR_OBJECT) {
        snprintf(why, why_len, "a ceiling manifest without \"measured_quantity\" and a \"result\" object");
        return -1;
    }
    if (!cells || cells->type != JSONR_ARRAY) {
        snprintf(why, why_len, "a ceiling manifest whose \"cells\" is %s, not an array of cells",
                 cells ? "not an array" : "absent");
        return -1;
    }
    for (const struct jsonr_value *c = cells->child; c; c = c->next, i++) {
        if (c->type != JSONR_OBJECT) {
            snprintf(why, why_len, "a ceiling manifest whose cell %zu (of \"cells\") is not an object", i);
            return -1;
        }
        for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++) {
            const struct jsonr_value *l = jsonr_get(c, lists[k]);
            if (!l || l->type == JSONR_NULL) {
                continue;
            }
            if (l->type != JSONR_ARRAY) {
                snprintf(why, why_len, "a ceiling manifest whose cell %zu has \"%s\" that is not an array", i,
                         lists[k]);
                return -1;
            }
            for (const struct jsonr_value *s = l->child; s; s = s->next) {
                if (s->type != JSONR_OBJECT) {
                    snprintf(why, why_len,
                             "a ceiling manifest whose cell %zu has a \"%s\" element that is not "
                             "an object",
                             i, lists[k]);
                    return -1;
                }
            }
        }
    }
    return 0;
}

int
report_check(const struct jsonr_value *m, char *why, size_t why_len)
{
    const char *tool = jsonr_get_str(m, "tool");
    const char *version = jsonr_get_str(m, "version");
    const char *mode = jsonr_get_str(m, "mode");
    char theirs[32], ours[32];
    size_t i;

    if (!m || m->type != JSONR_OBJECT || !tool || strcmp(tool, "fleetsim-stress")) {
        snprintf(why, why_len,
                 "not a fleetsim-stress manifest (its \"tool\" is %s%s%s, not \"fleetsim-stress\")",
                 tool ? "\"" : "", tool ? tool : "absent", tool ? "\"" : "");
        return -1;
    }
    version_prefix(version ? version : "", REPORT_VERSION_WORDS, theirs, sizeof theirs);
    version_prefix(FLEETSIM_VERSION, REPORT_VERSION_WORDS, ours, sizeof ours);
    if (!version || strcmp(theirs, ours)) {
        snprintf(why, why_len,
                 "manifest version %s%s%s is unknown to this fleetsim-stress %s (it reads %s.x manifests)",
                 version ? "\"" : "", version ? version : "(absent)", version ? "\"" : "", FLEETSIM_VERSION,
                 ours);
        return -1;
    }
    for (i = 0; mode && i < sizeof known_modes / sizeof known_modes[0] && strcmp(mode, known_modes[i]); i++) {
    }
    if (!mode || i == sizeof known_modes / sizeof known_modes[0]) {
        snprintf(
            why, why_len,
            "mode %s%s%s has no report (edit, mount, notify, snmp, controller-mount, restconf, reconcile, "
            "ceiling)",
            mode ? "\"" : "", mode ? mode : "(absent)", mode ? "\"" : "");
        return -1;
    }
    if (!strcmp(mode, "ceiling")) {
        return check_ceiling(m, why, why_len);
    }
    if (!jsonr_get(m, "parameters") || !jsonr_get(m, "results")) {
        snprintf(why, why_len, "a %s manifest without \"parameters\" and \"results\"", mode);
        return -1;
    }
    return 0;
}

/* Read and check one manifest. @return The tree, or NULL with "FILE: why" printed. */
static struct jsonr_value *
load_manifest(const char *path)
{
    struct jsonr_value *m = NULL;
    char why[512];
    char *text = NULL;
    size_t len = 0, cap = 0;
    FILE *f = fopen(path, "rb");

    if (!f) {
        fprintf(stderr, "fleetsim-stress: report: %s: %s\n", path, strerror(errno));
        return NULL;
    }
    for (;;) {
        size_t got;
        if (len == cap) {
            char *grown;
            cap = cap ? cap * 2 : 65536;
            if (cap > JSONR_MAX_BYTES || !(grown = realloc(text, cap))) {
                fprintf(stderr, "fleetsim-stress: report: %s: larger than %u bytes or out of memory\n", path,
                        JSONR_MAX_BYTES);
                fclose(f);
                free(text);
                return NULL;
            }
            text = grown;
        }
        got = fread(text + len, 1, cap - len, f);
        len += got;
        if (!got) {
            break;
        }
    }
    if (ferror(f)) {
        fprintf(stderr, "fleetsim-stress: report: %s: read error\n", path);
    } else if (jsonr_parse(text, len, &m, why, sizeof why)) {
        fprintf(stderr, "fleetsim-stress: report: %s: not a whole JSON manifest (truncated?): %s\n", path,
                why);
    } else if (report_check(m, why, sizeof why)) {
        fprintf(stderr, "fleetsim-stress: report: %s: %s\n", path, why);
        jsonr_free(m);
        m = NULL;
    }
    fclose(f);
    free(text);
    return m;
}

/* The run's label: the file's base name, numbered when two runs would share one. */
static void
run_label(const struct stress_options *o, int i, char *out, size_t len)
{
    const char *base = strrchr(o->report_inputs[i], '/');
    int clash = 0;

    base = base ? base + 1 : o->report_inputs[i];
    for (int j = 0; j < o->report_count; j++) {
        const char *other = strrchr(o->report_inputs[j], '/');
        other = other ? other + 1 : o->report_inputs[j];
        clash |= j != i && !strcmp(other, base);
    }
    if (clash) {
        snprintf(out, len, "%d: %s", i + 1, base);
    } else {
        snprintf(out, len, "%s", base);
    }
}

/* Write the page to path through a temporary file in its folder. @return 0 or -1 with errno. */
static int
write_page(const char *path, const struct sbuf *page)
{
    char tmp[4096];
    FILE *f;

    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (!(f = fopen(tmp, "w"))) {
        return -1;
    }
    if (fwrite(page->buf, 1, page->len, f) != page->len) {
        int e = errno;
        fclose(f);
        unlink(tmp);
        errno = e;
        return -1;
    }
    if (fclose(f) || rename(tmp, path)) {
        int e = errno;
        unlink(tmp);
        errno = e;
        return -1;
    }
    return 0;
}

int
report_run(const struct stress_options *o)
{
    struct jsonr_value **ms = calloc((size_t)o->report_count, sizeof *ms);
    struct sbuf page = {0};
    char err[512];
    char *chartjs = NULL;
    size_t chartjs_len = 0;
    int rc = 2;

    if (!ms) {
        fprintf(stderr, "fleetsim-stress: report: out of memory\n");
        return 2;
    }
    for (int i = 0; i < o->report_count; i++) {
        if (!(ms[i] = load_manifest(o->report_inputs[i]))) {
            goto cleanup;
        }
    }
    if (!(chartjs = chartjs_load(&chartjs_len, err, sizeof err))) {
        fprintf(stderr, "fleetsim-stress: report: %s\n", err);
        goto cleanup;
    }
    sbuf_adds(&page, page_head);
    sbuf_add(&page, chartjs, chartjs_len);
    sbuf_adds(&page, "\n</script>\n<script type=\"application/json\" id=\"fleetsim-runs\">[");
    for (int i = 0; i < o->report_count; i++) {
        char label[256];
        run_label(o, i, label, sizeof label);
        sbuf_adds(&page, i ? ",\n" : "\n");
        report_run_data(&page, ms[i], o->report_inputs[i], label);
    }
    sbuf_adds(&page, "]\n</script>\n<script>\n");
    sbuf_add(&page, report_page_js, report_page_js_len);
    sbuf_adds(&page, "</script>\n</body></html>\n");
    rc = 1;
    if (page.failed) {
        fprintf(stderr, "fleetsim-stress: report: out of memory building the page\n");
    } else if (write_page(o->out_dir, &page)) {
        fprintf(stderr, "fleetsim-stress: report: cannot write %s: %s\n", o->out_dir, strerror(errno));
    } else {
        printf("fleetsim-stress report: %d run(s), %zu bytes written to %s\n", o->report_count, page.len,
               o->out_dir);
        rc = 0;
    }

cleanup:
    for (int i = 0; i < o->report_count; i++) {
        jsonr_free(ms[i]);
    }
    free(ms);
    free(chartjs);
    sbuf_free(&page);
    return rc;
}
