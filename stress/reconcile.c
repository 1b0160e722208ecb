/*
 * Reconciling sent and received notifications; see reconcile.h. notify's
 * devices are sorted by address:port once, so each report device finds
 * its partner by binary search: 10k devices join in milliseconds. Each
 * device line printed can also go to a struct recon_rows, from which
 * recon_run() (reconcile_run.c) writes the --json manifest (the same join,
 * not a second one).
 */
#include "reconcile.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "stats.h"

static const char *const class_names[RECON_CLASS_COUNT] = {"OK", "LOSS", "DUP", "MISSING", "PHANTOM"};

const char *
recon_class_name(enum recon_class c)
{
    return class_names[c];
}

enum recon_class
recon_classify(const struct recon_facts *f, double tolerance)
{
    double allowed = tolerance * (double)f->sent;

    if (!f->in_report) {
        return RECON_PHANTOM;
    }
    if (!f->in_received) {
        return f->sent ? RECON_MISSING : RECON_OK;
    }
    if (!f->subscriber_known) {
        return f->received ? RECON_PHANTOM : f->sent ? RECON_MISSING : RECON_OK;
    }
    if (f->sent && !f->received) {
        return RECON_MISSING;
    }
    if (f->duplicates) {
        return RECON_DUP;
    }
    if (f->received > f->sent && (double)(f->received - f->sent) > allowed) {
        return RECON_DUP;
    }
    if (f->received < f->sent && (double)(f->sent - f->received) > allowed) {
        return RECON_LOSS;
    }
    return RECON_OK;
}

/* One device line, for the manifest. */
struct recon_line {
    enum recon_class c;  /* its verdict */
    int has_device;      /* device is known (the report's, or notify's index) */
    uint64_t device;     /* the device's index, when has_device */
    const char *address; /* its address, NULL when unknown (restconf knows only the port) */
    uint64_t port;       /* its port */
    int has_sent;        /* sent is known (not a device only notify lists) */
    uint64_t sent;       /* sent, or the edits restconf had accepted */
    uint64_t received;   /* received, or the edit-configs the report counts */
    uint64_t duplicates; /* notify's duplicates (0 for restconf) */
    const char *note;    /* the line's parenthesis without its brackets, or NULL */
};

/* Count @p l in @p rows (NULL: nothing) and keep it as a row while under RECON_ROWS_MAX. */
static void
rows_add(struct recon_rows *rows, const struct recon_line *l)
{
    struct sbuf *b;

    if (!rows) {
        return;
    }
    rows->counts[l->c]++;
    if (rows->total++ >= RECON_ROWS_MAX) {
        return;
    }
    b = &rows->devices;
    sbuf_adds(b, rows->kept++ ? ",{\"device\":" : "{\"device\":");
    if (l->has_device) {
        sbuf_printf(b, "%" PRIu64, l->device);
    } else {
        sbuf_adds(b, "null");
    }
    sbuf_adds(b, ",\"address\":");
    json_string_or_null(b, l->address);
    sbuf_printf(b, ",\"port\":%" PRIu64 ",\"class\":\"%s\",\"sent\":", l->port, recon_class_name(l->c));
    if (l->has_sent) {
        sbuf_printf(b, "%" PRIu64, l->sent);
    } else {
        sbuf_adds(b, "null");
    }
    sbuf_printf(b, ",\"received\":%" PRIu64 ",\"duplicates\":%" PRIu64 ",\"note\":", l->received,
                l->duplicates);
    json_string_or_null(b, l->note);
    sbuf_adds(b, "}");
}

/* Set the totals of @p rows (NULL: nothing). */
static void
rows_totals(struct recon_rows *rows, uint64_t broken, uint64_t sent, uint64_t received)
{
    if (rows) {
        rows->broken = broken;
        rows->sent = sent;
        rows->received = received;
    }
}

/* A device's line: "device N ADDR:PORT", an IPv6 ADDR in brackets ("device 3 [fd00::4]:830"). */
static void
report_where(const struct jsonr_value *d, char *where, size_t len)
{
    uint64_t index = 0;
    uint64_t port = 0;
    const char *addr = jsonr_get_str(d, "address");
    int v6 = addr && strchr(addr, ':');

    jsonr_get_u64(d, "device", &index);
    jsonr_get_u64(d, "port", &port);
    snprintf(where, len, "device %" PRIu64 " %s%s%s:%" PRIu64, index, v6 ? "[" : "", addr ? addr : "?",
             v6 ? "]" : "", port);
}

/* A device's address and port for the join: either family, IPv4 as IPv4-mapped IPv6 (RFC 4291 2.5.5.2), so
 * two texts of one address ("fd00::1", "fd00:0::1") meet. */
struct recon_key {
    uint8_t addr[16]; /* the address, network order */
    uint16_t port;    /* the port */
};

/* One of notify's devices, keyed for the join. */
struct recv_entry {
    struct recon_key key;            /* its address and port */
    const struct jsonr_value *value; /* its object */
    int matched;                     /* 1 once a report device took it */
};

static int
cmp_entry(const void *a, const void *b)
{
    const struct recon_key *x = &((const struct recv_entry *)a)->key;
    const struct recon_key *y = &((const struct recv_entry *)b)->key;
    int c = memcmp(x->addr, y->addr, sizeof x->addr);

    return c ? c : (x->port > y->port) - (x->port < y->port);
}

/* address:port of a device object into a key; @return 0 or -1. */
static int
device_key(const struct jsonr_value *d, struct recon_key *key)
{
    static const uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    const char *addr = jsonr_get_str(d, "address");
    struct net_family fam;
    uint32_t low;
    uint64_t port;

    if (!addr || netaddr_parse(addr, &fam, &low) || jsonr_get_u64(d, "port", &port) || port > 65535) {
        return -1;
    }
    memcpy(key->addr, fam.v6 ? fam.prefix : v4_mapped, sizeof fam.prefix);
    key->addr[12] = (uint8_t)(low >> 24);
    key->addr[13] = (uint8_t)(low >> 16);
    key->addr[14] = (uint8_t)(low >> 8);
    key->addr[15] = (uint8_t)low;
    key->port = (uint16_t)port;
    return 0;
}

/* Check emitted = sent + send_failures + dropped + suppressed of one row; print it when broken. @return 1
 * when broken. */
static int
check_identity(const struct jsonr_value *row, FILE *out, const char *where)
{
    uint64_t v[5] = {0};
    static const char *const names[5] = {"emitted", "sent", "send_failures", "dropped", "suppressed"};
    int present = 0;

    for (int i = 0; i < 5; i++) {
        present += !jsonr_get_u64(row, names[i], &v[i]);
    }
    if (present == 5 && v[0] == v[1] + v[2] + v[3] + v[4]) {
        return 0;
    }
    if (present < 5) {
        fprintf(out,
                "BROKEN  %s: counters missing (needs emitted, sent, send_failures, dropped, suppressed)\n",
                where);
        return 1;
    }
    fprintf(out,
            "BROKEN  %s: emitted %" PRIu64 " != sent %" PRIu64 " + send_failures %" PRIu64
            " + dropped %" PRIu64 " + suppressed %" PRIu64 "\n",
            where, v[0], v[1], v[2], v[3], v[4]);
    return 1;
}

int
recon_compare(const struct jsonr_value *report, const struct jsonr_value *received, double tolerance,
              FILE *out, struct recon_rows *rows, char *err, size_t err_len)
{
    const struct jsonr_value *rdevs = jsonr_get(report, "devices");
    const struct jsonr_value *ndevs = jsonr_get(received, "devices");
    struct recv_entry *entries = NULL;
    uint64_t counts[RECON_CLASS_COUNT] = {0};
    uint64_t broken = 0;
    uint64_t sent_total = 0;
    uint64_t received_total = 0;
    size_t n = 0;
    int rc = 2;

    if (!rdevs || rdevs->type != JSONR_ARRAY) {
        snprintf(err, err_len, "the report has no \"devices\" array");
        goto cleanup;
    }
    if (!ndevs || ndevs->type != JSONR_ARRAY) {
        snprintf(err, err_len, "the received manifest has no \"devices\" array");
        goto cleanup;
    }
    entries = calloc(ndevs->count ? ndevs->count : 1, sizeof *entries);
    if (!entries) {
        snprintf(err, err_len, "out of memory");
        goto cleanup;
    }
    for (const struct jsonr_value *d = ndevs->child; d; d = d->next, n++) {
        uint64_t received_n;
        if (device_key(d, &entries[n].key) || jsonr_get_u64(d, "received", &received_n)) {
            snprintf(err, err_len,
                     "received manifest, device entry %zu: needs \"address\", \"port\" and \"received\"", n);
            goto cleanup;
        }
        entries[n].value = d;
    }
    qsort(entries, n, sizeof *entries, cmp_entry);

    /* Every report device, with its partner in notify's manifest. */
    for (const struct jsonr_value *d = rdevs->child; d; d = d->next) {
        const struct jsonr_value *notif = jsonr_get(d, "notifications");
        const struct jsonr_value *subs = jsonr_get(d, "subscribers");
        const struct jsonr_value *sub = NULL;
        struct recv_entry probe;
        struct recv_entry *e;
        struct recon_facts f = {.in_report = 1, .subscriber_known = 1};
        const char *local = NULL;
        const char *failure = NULL;
        uint64_t index = 0;
        const char *note;
        char where[160];
        enum recon_class c;

        if (device_key(d, &probe.key) || !notif || jsonr_get_u64(notif, "sent", &f.sent)) {
            snprintf(err, err_len,
                     "the report's devices need \"address\", \"port\" and \"notifications\".\"sent\"");
            rc = 2;
            goto cleanup;
        }
        jsonr_get_u64(d, "device", &index);
        report_where(d, where, sizeof where);
        broken += (uint64_t)check_identity(notif, out, where);
        for (const struct jsonr_value *s = subs ? subs->child : NULL; s; s = s->next) {
            char sub_where[256];
            const char *peer = jsonr_get_str(s, "peer");
            snprintf(sub_where, sizeof sub_where, "%s subscriber %s", where, peer ? peer : "(no peer)");
            broken += (uint64_t)check_identity(s, out, sub_where);
        }
        e = bsearch(&probe, entries, n, sizeof *entries, cmp_entry);
        if (e) {
            e->matched = 1;
            f.in_received = 1;
            jsonr_get_u64(e->value, "received", &f.received);
            jsonr_get_u64(e->value, "duplicates", &f.duplicates);
            local = jsonr_get_str(e->value, "local");
            failure = jsonr_get_str(e->value, "failure");
            if (subs && subs->type == JSONR_ARRAY) {
                for (const struct jsonr_value *s = subs->child; s && !sub; s = s->next) {
                    const char *peer = jsonr_get_str(s, "peer");
                    if (local && peer && !strcmp(peer, local)) {
                        sub = s;
                    }
                }
                f.subscriber_known = sub != NULL;
                if (sub) {
                    jsonr_get_u64(sub, "sent", &f.sent);
                }
            }
        }
        c = recon_classify(&f, tolerance);
        counts[c]++;
        sent_total += f.sent;
        received_total += f.received;
        note = !f.in_received        ? "not in the received manifest"
               : !f.subscriber_known ? "subscriber unknown to the report"
                                     : NULL;
        fprintf(out,
                "%-7s %s local %s sent %" PRIu64 " received %" PRIu64 " duplicates %" PRIu64 "%s%s%s%s%s\n",
                recon_class_name(c), where, local ? local : "-", f.sent, f.received, f.duplicates,
                note ? " (" : "", note ? note : "", note ? ")" : "", failure ? "; notify: " : "",
                failure ? failure : "");
        rows_add(rows, &(struct recon_line){.c = c,
                                            .has_device = 1,
                                            .device = index,
                                            .address = jsonr_get_str(d, "address"),
                                            .port = probe.key.port,
                                            .has_sent = 1,
                                            .sent = f.sent,
                                            .received = f.received,
                                            .duplicates = f.duplicates,
                                            .note = note});
    }
    /* notify's devices the report does not list. */
    for (size_t i = 0; i < n; i++) {
        struct recon_facts f = {.in_received = 1};
        uint64_t index = 0;
        char where[160];
        if (entries[i].matched) {
            continue;
        }
        jsonr_get_u64(entries[i].value, "received", &f.received);
        jsonr_get_u64(entries[i].value, "duplicates", &f.duplicates);
        jsonr_get_u64(entries[i].value, "device", &index);
        counts[recon_classify(&f, tolerance)]++;
        received_total += f.received;
        report_where(entries[i].value, where, sizeof where);
        fprintf(out,
                "%-7s %s local %s sent - received %" PRIu64 " duplicates %" PRIu64 " (not in the report)\n",
                recon_class_name(RECON_PHANTOM), where,
                jsonr_get_str(entries[i].value, "local") ? jsonr_get_str(entries[i].value, "local") : "-",
                f.received, f.duplicates);
        rows_add(rows, &(struct recon_line){.c = RECON_PHANTOM,
                                            .has_device = 1,
                                            .device = index,
                                            .address = jsonr_get_str(entries[i].value, "address"),
                                            .port = entries[i].key.port,
                                            .received = f.received,
                                            .duplicates = f.duplicates,
                                            .note = "not in the report"});
    }
    rows_totals(rows, broken, sent_total, received_total);
    fprintf(out,
            "totals: OK %" PRIu64 ", LOSS %" PRIu64 ", DUP %" PRIu64 ", MISSING %" PRIu64 ", PHANTOM %" PRIu64
            "; broken report rows %" PRIu64 "; sent %" PRIu64 ", received %" PRIu64 ", tolerance %g%%\n",
            counts[RECON_OK], counts[RECON_LOSS], counts[RECON_DUP], counts[RECON_MISSING],
            counts[RECON_PHANTOM], broken, sent_total, received_total, tolerance * 100.0);
    rc = broken || counts[RECON_LOSS] || counts[RECON_DUP] || counts[RECON_MISSING] || counts[RECON_PHANTOM];

cleanup:
    free(entries);
    return rc;
}

/* One report device, keyed by port for restconf's join. */
struct port_entry {
    uint64_t port;                   /* its port */
    const struct jsonr_value *value; /* its object */
    int matched;                     /* 1 once a manifest device took it */
};

static int
cmp_port(const void *a, const void *b)
{
    uint64_t x = ((const struct port_entry *)a)->port;
    uint64_t y = ((const struct port_entry *)b)->port;

    return (x > y) - (x < y);
}

int
recon_compare_restconf(const struct jsonr_value *report, const struct jsonr_value *sent, double tolerance,
                       FILE *out, struct recon_rows *rows, char *err, size_t err_len)
{
    const struct jsonr_value *rdevs = jsonr_get(report, "devices");
    const struct jsonr_value *sdevs = jsonr_get(sent, "devices");
    const char *mode = jsonr_get_str(sent, "mode");
    struct port_entry *entries = NULL;
    uint64_t counts[RECON_CLASS_COUNT] = {0};
    uint64_t accepted_total = 0;
    uint64_t received_total = 0;
    size_t n = 0;
    int rc = 2;

    if (!mode || strcmp(mode, "restconf")) {
        snprintf(err, err_len,
                 "--sent with --report must be a manifest of fleetsim-stress restconf (\"mode\":"
                 "\"restconf\")");
        goto cleanup;
    }
    if (!rdevs || rdevs->type != JSONR_ARRAY || !sdevs || sdevs->type != JSONR_ARRAY) {
        snprintf(err, err_len, "the %s has no \"devices\" array",
                 !rdevs || rdevs->type != JSONR_ARRAY ? "report" : "restconf manifest");
        goto cleanup;
    }
    entries = calloc(rdevs->count ? rdevs->count : 1, sizeof *entries);
    if (!entries) {
        snprintf(err, err_len, "out of memory");
        goto cleanup;
    }
    for (const struct jsonr_value *d = rdevs->child; d; d = d->next, n++) {
        const struct jsonr_value *edits = jsonr_get(d, "edits");
        uint64_t ignored;
        if (jsonr_get_u64(d, "port", &entries[n].port) || !edits ||
            jsonr_get_u64(edits, "edit_config", &ignored)) {
            snprintf(err, err_len,
                     "the report's devices need \"port\" and \"edits\".\"edit_config\" (a fleetsim "
                     "that counts edits)");
            goto cleanup;
        }
        entries[n].value = d;
    }
    qsort(entries, n, sizeof *entries, cmp_port);
    for (size_t i = 1; i < n; i++) {
        if (entries[i].port == entries[i - 1].port) {
            snprintf(err, err_len,
                     "the report lists port %" PRIu64 " on several addresses (--ip-per-device): restconf "
                     "knows a device by port only",
                     entries[i].port);
            goto cleanup;
        }
    }
    /* Every device restconf edited, with its report device. */
    for (const struct jsonr_value *d = sdevs->child; d; d = d->next) {
        struct recon_facts f = {.in_report = 1, .subscriber_known = 1};
        struct port_entry probe;
        struct port_entry *e;
        const char *node = jsonr_get_str(d, "node");
        uint64_t commits = 0;
        uint64_t errors = 0;
        char where[160];
        enum recon_class c;

        if (jsonr_get_u64(d, "port", &probe.port) || jsonr_get_u64(d, "accepted", &f.sent)) {
            snprintf(err, err_len, "the restconf manifest's devices need \"port\" and \"accepted\"");
            rc = 2;
            goto cleanup;
        }
        e = bsearch(&probe, entries, n, sizeof *entries, cmp_port);
        if (e) {
            const struct jsonr_value *edits = jsonr_get(e->value, "edits");
            e->matched = 1;
            f.in_received = 1;
            jsonr_get_u64(edits, "edit_config", &f.received);
            jsonr_get_u64(edits, "edit_config_errors", &errors);
            jsonr_get_u64(edits, "commit", &commits);
            report_where(e->value, where, sizeof where);
        } else {
            snprintf(where, sizeof where, "port %" PRIu64, probe.port);
        }
        c = recon_classify(&f, tolerance);
        counts[c]++;
        accepted_total += f.sent;
        received_total += f.received;
        fprintf(out,
                "%-7s %s node %s accepted %" PRIu64 " edit-config received %" PRIu64 " (rpc-error %" PRIu64
                ") commit %" PRIu64 "%s\n",
                recon_class_name(c), where, node && *node ? node : "-", f.sent, f.received, errors, commits,
                e ? "" : " (not in the report)");
        {
            struct recon_line l = {.c = c,
                                   .port = probe.port,
                                   .has_sent = 1,
                                   .sent = f.sent,
                                   .received = f.received,
                                   .note = e ? NULL : "not in the report"};
            if (e) {
                l.has_device = !jsonr_get_u64(e->value, "device", &l.device);
                l.address = jsonr_get_str(e->value, "address");
            }
            rows_add(rows, &l);
        }
    }
    /* Devices restconf did not edit that received edit-configs all the same. */
    for (size_t i = 0; i < n; i++) {
        const struct jsonr_value *edits = jsonr_get(entries[i].value, "edits");
        struct recon_facts f = {.in_report = 1, .in_received = 1, .subscriber_known = 1};
        uint64_t commits = 0;
        char where[160];
        if (entries[i].matched) {
            continue;
        }
        jsonr_get_u64(edits, "edit_config", &f.received);
        jsonr_get_u64(edits, "commit", &commits);
        if (!f.received) {
            continue; /* untouched on both sides */
        }
        counts[recon_classify(&f, tolerance)]++;
        received_total += f.received;
        report_where(entries[i].value, where, sizeof where);
        fprintf(out,
                "%-7s %s node - accepted 0 edit-config received %" PRIu64 " commit %" PRIu64
                " (not in the restconf manifest)\n",
                recon_class_name(recon_classify(&f, tolerance)), where, f.received, commits);
        {
            struct recon_line l = {.c = recon_classify(&f, tolerance),
                                   .address = jsonr_get_str(entries[i].value, "address"),
                                   .port = entries[i].port,
                                   .has_sent = 1,
                                   .received = f.received,
                                   .note = "not in the restconf manifest"};
            l.has_device = !jsonr_get_u64(entries[i].value, "device", &l.device);
            rows_add(rows, &l);
        }
    }
    rows_totals(rows, 0, accepted_total, received_total);
    fprintf(out,
            "totals: OK %" PRIu64 ", LOSS %" PRIu64 ", DUP %" PRIu64 ", MISSING %" PRIu64
            "; accepted %" PRIu64 ", edit-config received %" PRIu64 ", tolerance %g%%\n",
            counts[RECON_OK], counts[RECON_LOSS], counts[RECON_DUP], counts[RECON_MISSING], accepted_total,
            received_total, tolerance * 100.0);
    rc = counts[RECON_LOSS] || counts[RECON_DUP] || counts[RECON_MISSING] || counts[RECON_PHANTOM];

cleanup:
    free(entries);
    return rc;
}
