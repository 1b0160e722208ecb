/*
 * The reconcile mode (run.h's recon_run()): read --sent and --received
 * (several files of one kind are joined, as merge does), hand them to the
 * join their form asks for (reconcile.h for notify's and restconf's
 * manifests, recon_push.h for a collector's files) and write the --json
 * manifest of what it found.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recon_push.h"
#include "reconcile.h"
#include "run.h"
#include "sbuf.h"
#include "stats.h"

/* Read and parse one file; @return the tree or NULL with a message on stderr. */
static struct jsonr_value *
load(const char *path, const char *what)
{
    size_t len = 0;
    char *text = run_read_file(path, &len);
    struct jsonr_value *v = NULL;
    char err[256];

    if (!text) {
        return NULL;
    }
    if (jsonr_parse(text, len, &v, err, sizeof err)) {
        fprintf(stderr, "fleetsim-stress: %s %s is not valid JSON: %s\n", what, path, err);
    }
    free(text);
    return v;
}

/* A device of one of several files, for the join of shards' files. */
struct joined_device {
    char key[128];                   /* node_id, node, address:port or port: what names it */
    const struct jsonr_value *value; /* its object */
    size_t order;                    /* its place in the files, in order */
    int dropped;                     /* 1: the same device, the same counts, in an earlier file */
};

static int
cmp_joined(const void *a, const void *b)
{
    const struct joined_device *x = a, *y = b;
    int c = strcmp(x->key, y->key);

    return c ? c : (x->order > y->order) - (x->order < y->order);
}

static void
joined_key(const struct jsonr_value *d, char *key, size_t len)
{
    const char *id = jsonr_get_str(d, "node_id") ? jsonr_get_str(d, "node_id") : jsonr_get_str(d, "node");
    const char *addr = jsonr_get_str(d, "address");
    uint64_t port = 0;

    jsonr_get_u64(d, "port", &port);
    if (id && *id) {
        snprintf(key, len, "node %s", id);
    } else if (addr) {
        snprintf(key, len, "%s:%" PRIu64, addr, port);
    } else {
        snprintf(key, len, "port %" PRIu64, port);
    }
}

/*
 * The files @p f (one per shard) as one document: their "devices" joined in order, the first file's "mode".
 * A device named by two files is an error unless both give the same counts (it is then kept once).
 * @return the tree, or NULL with a message on stderr.
 */
static struct jsonr_value *
load_joined(const struct stress_files *f, const char *what)
{
    struct jsonr_value **docs = calloc(f->count, sizeof *docs);
    struct joined_device *devs = NULL;
    struct jsonr_value *joined = NULL;
    struct sbuf b = {0};
    size_t n = 0, cap = 0;
    char err[256];

    if (f->count == 1) {
        free(docs);
        return load(f->paths[0], what);
    }
    if (!docs) {
        goto oom;
    }
    for (uint32_t i = 0; i < f->count; i++) {
        const struct jsonr_value *arr;
        if (!(docs[i] = load(f->paths[i], what))) {
            goto cleanup;
        }
        if (!(arr = jsonr_get(docs[i], "devices")) || arr->type != JSONR_ARRAY) {
            fprintf(stderr, "fleetsim-stress: %s %s has no \"devices\" array\n", what, f->paths[i]);
            goto cleanup;
        }
        for (const struct jsonr_value *d = arr->child; d; d = d->next) {
            if (n == cap) {
                struct joined_device *grown = realloc(devs, (cap = cap ? cap * 2 : 1024) * sizeof *grown);
                if (!grown) {
                    goto oom;
                }
                devs = grown;
            }
            devs[n] = (struct joined_device){.value = d, .order = n};
            joined_key(d, devs[n].key, sizeof devs[n].key);
            n++;
        }
    }
    /* Sorted by key: a device named twice sits next to itself; the earlier stays. */
    qsort(devs, n, sizeof *devs, cmp_joined);
    for (size_t i = 1; i < n; i++) {
        struct sbuf x = {0}, y = {0};
        int same;
        if (strcmp(devs[i].key, devs[i - 1].key)) {
            continue;
        }
        jsonr_print(&x, devs[i - 1].value);
        jsonr_print(&y, devs[i].value);
        same = x.len == y.len && !memcmp(x.buf, y.buf, x.len);
        sbuf_free(&x);
        sbuf_free(&y);
        if (!same) {
            fprintf(
                stderr,
                "fleetsim-stress: %s: device %s is in two files with different counts: each shard's report "
                "holds its own devices\n",
                what, devs[i].key);
            goto cleanup;
        }
        devs[i].dropped = 1;
    }
    {
        /* Back in the files' order, the order of the lines printed. */
        const struct jsonr_value **ordered = calloc(n ? n : 1, sizeof *ordered);
        const char *mode = jsonr_get_str(docs[0], "mode");
        if (!ordered) {
            goto oom;
        }
        for (size_t i = 0; i < n; i++) {
            ordered[devs[i].order] = devs[i].dropped ? NULL : devs[i].value;
        }
        sbuf_adds(&b, "{\"mode\":");
        json_string_or_null(&b, mode);
        sbuf_adds(&b, ",\"devices\":[");
        for (size_t i = 0, k = 0; i < n; i++) {
            if (ordered[i]) {
                sbuf_adds(&b, k++ ? "," : "");
                jsonr_print(&b, ordered[i]);
            }
        }
        sbuf_adds(&b, "]}");
        free(ordered);
    }
    if (b.failed || jsonr_parse(b.buf, b.len, &joined, err, sizeof err)) {
        goto oom;
    }
    goto cleanup;

oom:
    fprintf(stderr, "fleetsim-stress: %s: out of memory joining the files\n", what);
cleanup:
    for (uint32_t i = 0; docs && i < f->count; i++) {
        jsonr_free(docs[i]);
    }
    free(docs);
    free(devs);
    sbuf_free(&b);
    return joined;
}

/* --json: the manifest of one join (its rows and totals in @p rows, its exit code @p rc). @return 0 or -1. */
static int
write_manifest(const struct stress_options *o, const struct recon_rows *rows, int rc)
{
    static const char *const formats[] = {"notify", "syslog", "snmptrapd", "csv"};
    int restconf = o->report_path != NULL;
    int push = o->recv_format != RECON_FMT_NOTIFY;
    struct sbuf b = {0};
    int wrc;

    sbuf_adds(&b, "{\"tool\":\"fleetsim-stress\",\"version\":");
    sbuf_add_json(&b, FLEETSIM_VERSION);
    sbuf_printf(&b, ",\"mode\":\"reconcile\",\"parameters\":{\"join\":\"%s\",\"report\":",
                restconf ? "restconf" : formats[o->recv_format]);
    sbuf_add_json(&b, restconf ? o->report_path : o->sent_path);
    sbuf_adds(&b, restconf ? ",\"sent\":" : ",\"received\":");
    sbuf_add_json(&b, restconf ? o->sent_path : o->received_path);
    if (push) {
        sbuf_adds(&b, ",\"run_tag\":");
        json_string_or_null(&b, o->recv_run_tag);
        sbuf_printf(&b, ",\"ordering\":%s", o->recv_ordering ? "true" : "false");
    }
    sbuf_printf(&b, ",\"tolerance\":%g},\"results\":{\"counts\":{", o->tolerance);
    for (int c = 0; c < RECON_CLASS_COUNT; c++) {
        sbuf_printf(&b, "%s\"%s\":%" PRIu64, c ? "," : "", recon_class_name(c), rows->counts[c]);
    }
    sbuf_printf(&b,
                "},\"broken_report_rows\":%" PRIu64 ",\"sent\":%" PRIu64 ",\"received\":%" PRIu64
                ",\"devices\":%" PRIu64 ",\"devices_kept\":%" PRIu64 ",\"devices_truncated\":%s,\"exit\":%d",
                rows->broken, rows->sent, rows->received, rows->total, rows->kept,
                rows->total > rows->kept ? "true" : "false", rc);
    if (push) {
        sbuf_printf(&b,
                    ",\"inversions\":%" PRIu64 ",\"lines\":%" PRIu64 ",\"not_understood\":%" PRIu64
                    ",\"without_run_tag\":%" PRIu64,
                    rows->inversions, rows->lines, rows->not_understood, rows->untagged);
    }
    sbuf_adds(&b, "},\"devices\":[");
    if (rows->devices.len) {
        sbuf_add(&b, rows->devices.buf, rows->devices.len);
    }
    sbuf_adds(&b, "]}");
    run_manifest_scenario(&b);
    wrc = b.failed || rows->devices.failed ? -1 : json_write_file(o->json_path, &b);
    sbuf_free(&b);
    return wrc;
}

int
recon_run(const struct stress_options *o)
{
    struct jsonr_value *report = NULL;
    struct jsonr_value *received = NULL;
    struct recon_rows rows = {0};
    struct recon_rows *sink = o->json_path ? &rows : NULL;
    char err[256];
    int rc = 2;

    if (o->recv_format != RECON_FMT_NOTIFY) {
        /* A collector's file: the report's push ledger, source by source (recon_push.h). */
        struct recon_push_opts po = {.format = (enum recon_format)o->recv_format,
                                     .run_tag = o->recv_run_tag,
                                     .ordering = o->recv_ordering,
                                     .tolerance = o->tolerance};
        struct recon_push *p = NULL;
        if ((report = load_joined(&o->sent_files, "--sent"))) {
            if (!(p = recon_push_new(report, &po, stdout, err, sizeof err))) {
                fprintf(stderr, "fleetsim-stress: reconcile: %s\n", err);
            } else if (!recon_push_read_files(p, o->received_files.paths, o->received_files.count)) {
                rc = recon_push_finish(p, stdout, sink);
            }
        }
        recon_push_free(p);
    } else if (o->report_path) {
        /* restconf's form: --sent is restconf's manifest, --report the simulator's. */
        if ((received = load_joined(&o->sent_files, "--sent")) &&
            (report = load_joined(&o->report_files, "--report"))) {
            rc = recon_compare_restconf(report, received, o->tolerance, stdout, sink, err, sizeof err);
            if (rc == 2) {
                fprintf(stderr, "fleetsim-stress: reconcile: %s\n", err);
            }
        }
    } else if ((report = load_joined(&o->sent_files, "--sent")) &&
               (received = load_joined(&o->received_files, "--received"))) {
        rc = recon_compare(report, received, o->tolerance, stdout, sink, err, sizeof err);
        if (rc == 2) {
            fprintf(stderr, "fleetsim-stress: reconcile: %s\n", err);
        }
    }
    /* Nothing was joined (2): no manifest, as for unreadable input. */
    if (sink && rc != 2 && write_manifest(o, &rows, rc)) {
        fprintf(stderr, "fleetsim-stress: FAILED: cannot write %s: %m\n", o->json_path);
        rc = 1;
    }
    sbuf_free(&rows.devices);
    jsonr_free(report);
    jsonr_free(received);
    return rc;
}
