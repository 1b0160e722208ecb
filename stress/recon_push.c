/*
 * The push join (see recon_push.h). Sources live in one array, report
 * sources first in report order, then phantoms in the order the file shows
 * them; an open-addressing hash over "channel letter + ':' + name" finds
 * them, so a line costs one parse and one lookup (a million lines in well
 * under a second; bench/reconcile_bench.py).
 */
#include "recon_push.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "recv_csv.h"
#include "recv_snmptrapd.h"
#include "recv_syslog.h"
#include "sbuf.h"
#include "seq_order.h"
#include "stats.h"

/* A channel's letter in keys and its name in the output. */
enum rp_channel { RP_SYSLOG, RP_TRAP, RP_NETCONF, RP_HOSTNAME, RP_CHANNELS };
static const char rp_letters[RP_CHANNELS] = {'s', 't', 'n', 'h'};
static const char *const rp_names[RP_CHANNELS] = {"syslog", "trap", "netconf", "hostname"};

/* Bytes read from a file at once. */
#define RP_READ_BYTES (1u << 20)
/* A received sequence number this far below the previous one is the wrap of RFC 5424's
 * sequenceId (2147483647 -> 1), not an inversion. */
#define RP_SEQ_WRAP_GAP (1ull << 30)

/* One source of one channel. */
struct rp_source {
    char *key;           /* "c:name" (owned); name is the source as a collector writes it */
    enum rp_channel ch;  /* its channel; RP_HOSTNAME: an alias of a trap source (alias_of) */
    size_t alias_of;     /* RP_HOSTNAME: the trap source the host name stands for */
    int in_report;       /* 1: a report device has this source */
    uint64_t device;     /* the first report device with it (when in_report) */
    uint32_t devices;    /* report devices with it */
    uint32_t rows;       /* ledger rows (sinks) summed into sent */
    uint64_t sent;       /* the report's sent, summed */
    uint64_t received;   /* lines or notifications the collector persisted from it */
    uint64_t no_seq;     /* of those, lines without a sequence number */
    int seq_started;     /* 1 once a numbered line arrived; last_seq valid then */
    uint64_t last_seq;   /* the previous numbered line's number (file order) */
    uint64_t inversions; /* adjacent descents in file order */
    struct seqord order; /* duplicates (and gaps) of the numbers seen */
};

struct recon_push {
    struct recon_push_opts opts; /* as given */
    struct rp_source *src;       /* every source */
    size_t count, cap;           /* entries used and allocated in src */
    size_t *slots;               /* hash: index + 1 into src, 0 empty */
    size_t slot_count;           /* power of two, at least twice count */
    uint64_t broken;             /* report rows whose ledger does not add up */
    uint64_t lines;              /* lines read */
    uint64_t not_understood;     /* lines neither form (or too long, or a trap log's other lines) */
    uint64_t untagged;           /* syslog lines and trap records without --run-tag's tag */
    uint64_t line_no;            /* the current line's number (CSV messages) */
    size_t trap_open;            /* snmptrapd: the record in progress: its address's source, index + 1 */
    size_t trap_named;           /* snmptrapd: that record's sysName.0 stands for this source, index + 1 */
    int trap_tagged;             /* snmptrapd: 1 when that record carries --run-tag's tag */
};

static uint64_t
rp_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */

    for (size_t i = 0; i < n; i++) {
        h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
    }
    return h;
}

/* Build "c:name" into @p key (at least 2 + RECV_HOST_MAX_BYTES + 1 bytes). @return its length. */
static size_t
rp_key(enum rp_channel ch, const char *name, size_t len, char *key)
{
    if (len > RECV_HOST_MAX_BYTES) {
        len = RECV_HOST_MAX_BYTES;
    }
    key[0] = rp_letters[ch];
    key[1] = ':';
    memcpy(key + 2, name, len);
    key[2 + len] = '\0';
    return 2 + len;
}

/* The slot of @p key: its source's, or the empty one where it would go. */
static size_t
rp_slot(const struct recon_push *p, const char *key, size_t len)
{
    size_t mask = p->slot_count - 1;
    size_t i = (size_t)rp_hash(key, len) & mask;

    while (p->slots[i] && strcmp(p->src[p->slots[i] - 1].key, key)) {
        i = (i + 1) & mask;
    }
    return i;
}

/* @return The source of @p key, or NULL. */
static struct rp_source *
rp_find(const struct recon_push *p, enum rp_channel ch, const char *name, size_t len)
{
    char key[RECV_HOST_MAX_BYTES + 3];
    size_t klen = rp_key(ch, name, len, key);
    size_t i = rp_slot(p, key, klen);

    return p->slots[i] ? &p->src[p->slots[i] - 1] : NULL;
}

/* Double the hash; @return 0 or -1 (memory). */
static int
rp_grow(struct recon_push *p)
{
    size_t n = p->slot_count ? p->slot_count * 2 : 1024;
    size_t *old = p->slots;
    size_t old_count = p->slot_count;

    if (!(p->slots = calloc(n, sizeof *p->slots))) {
        p->slots = old;
        return -1;
    }
    p->slot_count = n;
    for (size_t i = 0; i < old_count; i++) {
        if (old[i]) {
            const char *k = p->src[old[i] - 1].key;
            p->slots[rp_slot(p, k, strlen(k))] = old[i];
        }
    }
    free(old);
    return 0;
}

/* The source of @p name, added when new. @return it, or NULL (memory). */
static struct rp_source *
rp_get(struct recon_push *p, enum rp_channel ch, const char *name, size_t len)
{
    char key[RECV_HOST_MAX_BYTES + 3];
    size_t klen = rp_key(ch, name, len, key);
    struct rp_source *s;
    size_t i;

    if ((p->count + 1) * 2 > p->slot_count && rp_grow(p)) {
        return NULL;
    }
    i = rp_slot(p, key, klen);
    if (p->slots[i]) {
        return &p->src[p->slots[i] - 1];
    }
    if (p->count == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 256;
        struct rp_source *grown = realloc(p->src, cap * sizeof *grown);
        if (!grown) {
            return NULL;
        }
        p->src = grown;
        p->cap = cap;
    }
    s = &p->src[p->count];
    memset(s, 0, sizeof *s);
    if (!(s->key = strdup(key))) {
        return NULL;
    }
    s->ch = ch;
    p->slots[i] = ++p->count;
    return s;
}

/* An address in one text per address ("fd00:0::1" and "fd00::1" meet). @return 0 or -1. */
static int
rp_canon_addr(const char *text, size_t len, char *out, size_t out_len)
{
    char tmp[INET6_ADDRSTRLEN];
    unsigned char bin[16];

    if (len >= sizeof tmp) {
        return -1;
    }
    memcpy(tmp, text, len);
    tmp[len] = '\0';
    if (inet_pton(AF_INET, tmp, bin) == 1) {
        return inet_ntop(AF_INET, bin, out, (socklen_t)out_len) ? 0 : -1;
    }
    if (inet_pton(AF_INET6, tmp, bin) == 1) {
        return inet_ntop(AF_INET6, bin, out, (socklen_t)out_len) ? 0 : -1;
    }
    return -1;
}

/* A host name as fleetsim writes it into HOSTNAME: bytes outside PRINTUSASCII as '_', at most 255. */
static size_t
rp_header_text(const char *name, char *out)
{
    size_t n = 0;

    for (; name[n] && n < RECV_HOST_MAX_BYTES; n++) {
        out[n] = name[n] > ' ' && name[n] < 127 ? name[n] : '_';
    }
    out[n] = '\0';
    return n;
}

/* Check emitted = sent + send_failures + dropped + suppressed_pre_window + queued of a syslog ledger row. */
static void
rp_check_row(struct recon_push *p, const struct jsonr_value *row, uint64_t device, FILE *out)
{
    static const char *const names[6] = {
        "emitted", "sent", "send_failures", "dropped", "suppressed_pre_window", "queued"};
    uint64_t v[6] = {0};
    const char *sink = jsonr_get_str(row, "sink");

    for (int i = 0; i < 6; i++) {
        if (jsonr_get_u64(row, names[i], &v[i])) {
            fprintf(out, "BROKEN  device %" PRIu64 " syslog sink %s: no \"%s\"\n", device, sink ? sink : "?",
                    names[i]);
            p->broken++;
            return;
        }
    }
    if (v[0] != v[1] + v[2] + v[3] + v[4] + v[5]) {
        fprintf(out,
                "BROKEN  device %" PRIu64 " syslog sink %s: emitted %" PRIu64 " != sent %" PRIu64
                " + send_failures %" PRIu64 " + dropped %" PRIu64 " + suppressed_pre_window %" PRIu64
                " + queued %" PRIu64 "\n",
                device, sink ? sink : "?", v[0], v[1], v[2], v[3], v[4], v[5]);
        p->broken++;
    }
}

/* Sum the "sent" of every row of array @p arr; @return the rows, or -1 when one has no sent. */
static int64_t
rp_sum_sent(const struct jsonr_value *arr, uint64_t *sent)
{
    int64_t rows = 0;

    *sent = 0;
    for (const struct jsonr_value *r = arr ? arr->child : NULL; r; r = r->next, rows++) {
        uint64_t v;
        if (jsonr_get_u64(r, "sent", &v)) {
            return -1;
        }
        *sent += v;
    }
    return rows;
}

/* Count one report device's @p sent from @p rows sinks into its source. @return 0 or -1 (memory). */
static int
rp_add_device(struct recon_push *p, enum rp_channel ch, const char *name, size_t len, uint64_t device,
              uint64_t sent, uint32_t rows)
{
    struct rp_source *s = rp_get(p, ch, name, len);

    if (!s) {
        return -1;
    }
    if (!s->in_report) {
        s->in_report = 1;
        s->device = device;
    }
    s->devices++;
    s->rows += rows;
    s->sent += sent;
    return 0;
}

/* One canonical trap address per report device with trap sinks, sorted: devices sharing an address (a fleet
 * without --ip-per-device) are told apart by the sysName.0 their traps carry. */
struct rp_addr {
    char text[INET6_ADDRSTRLEN];
};

static int
rp_addr_cmp(const void *a, const void *b)
{
    return strcmp(((const struct rp_addr *)a)->text, ((const struct rp_addr *)b)->text);
}

/* The report's trap addresses, sorted, into *@p out (@p count entries; the caller frees). @return 0 or -1. */
static int
rp_trap_addrs(const struct jsonr_value *devs, struct rp_addr **out, size_t *count)
{
    size_t n = 0;

    *out = malloc((devs->count ? devs->count : 1) * sizeof **out);
    if (!*out) {
        return -1;
    }
    for (const struct jsonr_value *d = devs->child; d; d = d->next) {
        const struct jsonr_value *traps = jsonr_get(d, "trap_sinks");
        const char *addr = jsonr_get_str(d, "address");
        if (traps && traps->count && addr &&
            !rp_canon_addr(addr, strlen(addr), (*out)[n].text, sizeof(*out)[n].text)) {
            n++;
        }
    }
    qsort(*out, n, sizeof **out, rp_addr_cmp);
    *count = n;
    return 0;
}

/* 1 when more than one report device sends traps from @p canon. */
static int
rp_addr_shared(const struct rp_addr *addrs, size_t count, const char *canon)
{
    struct rp_addr key;
    const struct rp_addr *hit;

    snprintf(key.text, sizeof key.text, "%s", canon);
    hit = bsearch(&key, addrs, count, sizeof *addrs, rp_addr_cmp);
    return hit && ((hit > addrs && !strcmp(hit[-1].text, canon)) ||
                   (hit + 1 < addrs + count && !strcmp(hit[1].text, canon)));
}

struct recon_push *
recon_push_new(const struct jsonr_value *report, const struct recon_push_opts *opts, FILE *out, char *err,
               size_t err_len)
{
    const struct jsonr_value *devs = jsonr_get(report, "devices");
    struct recon_push *p = calloc(1, sizeof *p);
    struct rp_addr *addrs = NULL;
    size_t addr_count = 0;
    int want_syslog = opts->format == RECON_FMT_SYSLOG || opts->format == RECON_FMT_CSV;
    int want_trap = opts->format == RECON_FMT_SNMPTRAPD || opts->format == RECON_FMT_CSV;
    int want_netconf = opts->format == RECON_FMT_CSV;

    if (!p || rp_grow(p)) {
        snprintf(err, err_len, "out of memory");
        goto fail;
    }
    p->opts = *opts;
    if (!devs || devs->type != JSONR_ARRAY) {
        snprintf(err, err_len, "the report has no \"devices\" array");
        goto fail;
    }
    if (want_trap && rp_trap_addrs(devs, &addrs, &addr_count)) {
        goto oom;
    }
    for (const struct jsonr_value *d = devs->child; d; d = d->next) {
        const struct jsonr_value *syslog = jsonr_get(d, "syslog_sinks");
        const struct jsonr_value *traps = jsonr_get(d, "trap_sinks");
        const char *host = jsonr_get_str(d, "hostname");
        const char *addr = jsonr_get_str(d, "address");
        char name[RECV_HOST_MAX_BYTES + 1], canon[INET6_ADDRSTRLEN];
        uint64_t device = 0, sent;
        int64_t rows;

        jsonr_get_u64(d, "device", &device);
        if (!addr || rp_canon_addr(addr, strlen(addr), canon, sizeof canon)) {
            snprintf(err, err_len, "the report's device %" PRIu64 " has no \"address\"", device);
            goto fail;
        }
        if (want_syslog && syslog && syslog->count) {
            if (!host || !*host) {
                snprintf(err, err_len,
                         "the report's device %" PRIu64 " has syslog sinks but no \"hostname\" (a report "
                         "of a fleetsim before issue 29's reconcile)",
                         device);
                goto fail;
            }
            if ((rows = rp_sum_sent(syslog, &sent)) < 0) {
                snprintf(err, err_len, "the report's device %" PRIu64 ": a syslog sink without \"sent\"",
                         device);
                goto fail;
            }
            for (const struct jsonr_value *r = syslog->child; r; r = r->next) {
                rp_check_row(p, r, device, out);
            }
            if (rp_add_device(p, RP_SYSLOG, name, rp_header_text(host, name), device, sent, (uint32_t)rows)) {
                goto oom;
            }
        }
        if (want_trap && traps && traps->count) {
            struct rp_source *t, *alias;
            const char *key;
            if ((rows = rp_sum_sent(traps, &sent)) < 0) {
                snprintf(err, err_len, "the report's device %" PRIu64 ": a trap sink without \"sent\"",
                         device);
                goto fail;
            }
            /* Its address names it, or, shared with other devices, its host name (the traps' sysName.0). */
            key = host && *host && rp_addr_shared(addrs, addr_count, canon) ? host : canon;
            if (rp_add_device(p, RP_TRAP, key, strlen(key), device, sent, (uint32_t)rows)) {
                goto oom;
            }
            /* Its host name, for a trap whose sysName.0 names it when its address does not. */
            t = rp_find(p, RP_TRAP, key, strlen(key));
            if (host && *host) {
                if (!(alias = rp_get(p, RP_HOSTNAME, host, strlen(host)))) {
                    goto oom;
                }
                alias->alias_of = (size_t)(t - p->src);
            }
        }
        if (want_netconf) {
            const struct jsonr_value *n = jsonr_get(d, "notifications");
            if (n && !jsonr_get_u64(n, "sent", &sent) &&
                rp_add_device(p, RP_NETCONF, canon, strlen(canon), device, sent, 1)) {
                goto oom;
            }
        }
    }
    free(addrs);
    return p;

oom:
    snprintf(err, err_len, "out of memory");
fail:
    free(addrs);
    recon_push_free(p);
    return NULL;
}

void
recon_push_free(struct recon_push *p)
{
    if (!p) {
        return;
    }
    for (size_t i = 0; i < p->count; i++) {
        free(p->src[i].key);
    }
    free(p->src);
    free(p->slots);
    free(p);
}

/* One message received from @p s, with its sequence number when @p has_seq. */
static void
rp_receive(struct rp_source *s, int has_seq, uint64_t seq)
{
    s->received++;
    if (!has_seq) {
        s->no_seq++;
        return;
    }
    if (s->seq_started && seq < s->last_seq && s->last_seq - seq < RP_SEQ_WRAP_GAP) {
        s->inversions++;
    }
    s->seq_started = 1;
    s->last_seq = seq;
    seqord_add(&s->order, seq);
}

static int
rp_syslog_line(struct recon_push *p, const char *line, size_t len)
{
    struct recv_msg m;
    struct rp_source *s;

    if (recv_syslog_parse(line, len, &m)) {
        p->not_understood++;
        return 0;
    }
    if (p->opts.run_tag && !recv_tag_equal(&m, p->opts.run_tag)) {
        p->untagged++;
        return 0;
    }
    if (!(s = rp_get(p, RP_SYSLOG, m.source, m.source_len))) {
        return -1;
    }
    rp_receive(s, m.has_seq, m.seq);
    return 0;
}

/* The trap source of a notification from @p addr: its address's, else a phantom. NULL: memory. */
static struct rp_source *
rp_trap_source(struct recon_push *p, const char *addr, size_t len)
{
    char canon[INET6_ADDRSTRLEN];

    if (!rp_canon_addr(addr, len, canon, sizeof canon)) {
        addr = canon;
        len = strlen(canon);
    }
    return rp_get(p, RP_TRAP, addr, len);
}

/* The snmptrapd record in progress is complete: count it (to its sysName's device when its address is not
 * the report's), or as untagged when --run-tag asks for a tag it does not carry. */
static void
rp_trapd_close(struct recon_push *p)
{
    struct rp_source *s;

    if (!p->trap_open) {
        return;
    }
    s = &p->src[p->trap_open - 1];
    p->trap_open = 0;
    if (p->opts.run_tag && !p->trap_tagged) {
        p->untagged++;
        return;
    }
    /* The sysName counts only when the address is not the report's (a NAT, a relay, a shared address). */
    rp_receive(!s->in_report && p->trap_named ? &p->src[p->trap_named - 1] : s, 0, 0);
}

static int
rp_trapd_line(struct recon_push *p, const char *line, size_t len)
{
    const char *v;
    size_t vlen;

    if (recv_trapd_header(line, len, &v, &vlen)) {
        struct rp_source *s;
        rp_trapd_close(p);
        if (!(s = rp_trap_source(p, v, vlen))) {
            return -1;
        }
        p->trap_open = (size_t)(s - p->src) + 1;
        p->trap_named = 0;
        p->trap_tagged = 0;
        /* A v1 trap's varbinds may share its first line: read on. */
    } else if (!p->trap_open) {
        p->not_understood++;
        return 0;
    }
    if (!p->trap_named && recv_trapd_sysname(line, len, &v, &vlen)) {
        const struct rp_source *alias = rp_find(p, RP_HOSTNAME, v, vlen);
        p->trap_named = alias ? alias->alias_of + 1 : 0;
    }
    if (p->opts.run_tag && !p->trap_tagged && recv_trapd_run_tag(line, len, &v, &vlen)) {
        p->trap_tagged = vlen == strlen(p->opts.run_tag) && !memcmp(v, p->opts.run_tag, vlen);
    }
    return 0;
}

static int
rp_csv_line(struct recon_push *p, const char *line, size_t len, char *err, size_t err_len)
{
    struct recv_csv_row row;
    struct rp_source *s = NULL;
    const char *why = NULL;
    int rc = recv_csv_parse(line, len, &row, &why);
    size_t slen;

    if (rc == 1) {
        return 0;
    }
    if (rc < 0) {
        snprintf(err, err_len, "line %" PRIu64 ": %s", p->line_no, why);
        return -1;
    }
    slen = strlen(row.source);
    if (!strcmp(row.channel, "syslog")) {
        s = rp_get(p, RP_SYSLOG, row.source, slen);
    } else if (!strcmp(row.channel, "trap") || !strcmp(row.channel, "netconf")) {
        enum rp_channel ch = row.channel[0] == 't' ? RP_TRAP : RP_NETCONF;
        char canon[INET6_ADDRSTRLEN];
        struct rp_source *alias;
        if (!rp_canon_addr(row.source, slen, canon, sizeof canon)) {
            s = rp_get(p, ch, canon, strlen(canon));
        } else if (ch == RP_TRAP && (alias = rp_find(p, RP_HOSTNAME, row.source, slen))) {
            s = &p->src[alias->alias_of];
        } else {
            s = rp_get(p, ch, row.source, slen);
        }
    } else {
        snprintf(err, err_len, "line %" PRIu64 ": channel \"%s\" is none of syslog, trap, netconf",
                 p->line_no, row.channel);
        return -1;
    }
    if (!s) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    s->received += row.count;
    s->no_seq += row.count;
    return 0;
}

int
recon_push_line(struct recon_push *p, const char *line, size_t len, char *err, size_t err_len)
{
    int rc = 0;

    p->lines++;
    p->line_no++;
    switch (p->opts.format) {
    case RECON_FMT_SYSLOG:
        rc = rp_syslog_line(p, line, len);
        break;
    case RECON_FMT_SNMPTRAPD:
        rc = rp_trapd_line(p, line, len);
        break;
    case RECON_FMT_CSV:
        return rp_csv_line(p, line, len, err, err_len);
    default:
        break;
    }
    if (rc) {
        snprintf(err, err_len, "out of memory");
    }
    return rc;
}

void
recon_push_overlong(struct recon_push *p)
{
    p->lines++;
    p->line_no++;
    p->not_understood++;
}

/* One source's manifest row. */
static void
rp_row(struct recon_rows *rows, const struct rp_source *s, enum recon_class c, uint64_t dups)
{
    struct sbuf *b = &rows->devices;

    rows->counts[c]++;
    if (rows->total++ >= RECON_ROWS_MAX) {
        return;
    }
    sbuf_printf(b, "%s{\"channel\":\"%s\",\"source\":", rows->kept++ ? "," : "", rp_names[s->ch]);
    sbuf_add_json(b, s->key + 2);
    if (s->in_report) {
        sbuf_printf(b, ",\"device\":%" PRIu64 ",\"devices\":%" PRIu32, s->device, s->devices);
    } else {
        sbuf_adds(b, ",\"device\":null,\"devices\":0");
    }
    sbuf_printf(b,
                ",\"class\":\"%s\",\"sent\":%" PRIu64 ",\"received\":%" PRIu64 ",\"duplicates\":%" PRIu64
                ",\"inversions\":%" PRIu64 ",\"without_sequence\":%" PRIu64 "}",
                recon_class_name(c), s->sent, s->received, dups, s->inversions, s->no_seq);
}

int
recon_push_finish(struct recon_push *p, FILE *out, struct recon_rows *rows)
{
    uint64_t counts[RECON_CLASS_COUNT] = {0};
    uint64_t sent = 0, received = 0, inversions = 0;
    int rc;

    rp_trapd_close(p); /* a record fed by recon_push_line() that no header closed */
    for (size_t i = 0; i < p->count; i++) {
        const struct rp_source *s = &p->src[i];
        /* A sequence number twice means a duplicate only when one device sent each number once. */
        uint64_t dups = s->devices == 1 && s->rows == 1 ? s->order.duplicates : 0;
        struct recon_facts f = {.in_report = s->in_report,
                                .in_received = s->received > 0,
                                .subscriber_known = 1,
                                .sent = s->sent,
                                .received = s->received,
                                .duplicates = dups};
        enum recon_class c;

        if (s->ch == RP_HOSTNAME || (!s->sent && !s->received)) {
            continue; /* an alias; or a source silent on both sides (a trap moved to its sysName's) */
        }
        c = recon_classify(&f, p->opts.tolerance);
        counts[c]++;
        sent += s->sent;
        received += s->received;
        inversions += s->inversions;
        fprintf(out, "%-7s %s %s", recon_class_name(c), rp_names[s->ch], s->key + 2);
        if (!s->in_report) {
            fprintf(out, " (not in the report)");
        } else if (s->devices == 1) {
            fprintf(out, " (device %" PRIu64 ")", s->device);
        } else {
            fprintf(out, " (device %" PRIu64 " and %" PRIu32 " more)", s->device, s->devices - 1);
        }
        fprintf(out, " sent %" PRIu64 " received %" PRIu64, s->sent, s->received);
        if (dups) {
            fprintf(out, " duplicates %" PRIu64, dups);
        }
        if (p->opts.ordering) {
            fprintf(out, " inversions %" PRIu64, s->inversions);
            if (s->no_seq) {
                fprintf(out, " (%" PRIu64 " without a sequence number)", s->no_seq);
            }
        }
        fputc('\n', out);
        if (rows) {
            rp_row(rows, s, c, dups);
        }
    }
    fprintf(out,
            "totals: OK %" PRIu64 ", LOSS %" PRIu64 ", DUP %" PRIu64 ", MISSING %" PRIu64 ", PHANTOM %" PRIu64
            "; sent %" PRIu64 ", received %" PRIu64 ", tolerance %g%%; lines %" PRIu64
            ", not understood %" PRIu64,
            counts[RECON_OK], counts[RECON_LOSS], counts[RECON_DUP], counts[RECON_MISSING],
            counts[RECON_PHANTOM], sent, received, p->opts.tolerance * 100.0, p->lines, p->not_understood);
    if (p->opts.run_tag) {
        fprintf(out, ", without the run tag %" PRIu64, p->untagged);
    }
    if (p->opts.ordering) {
        fprintf(out, "; inversions (adjacent descents) %" PRIu64, inversions);
    }
    if (p->broken) {
        fprintf(out, "; BROKEN report rows %" PRIu64, p->broken);
    }
    fputc('\n', out);
    rc = counts[RECON_LOSS] || counts[RECON_DUP] || counts[RECON_MISSING] || counts[RECON_PHANTOM] ||
         (p->opts.ordering && inversions) || p->broken;
    if (rows) {
        rows->broken = p->broken;
        rows->sent = sent;
        rows->received = received;
        rows->inversions = inversions;
        rows->lines = p->lines;
        rows->not_understood = p->not_understood;
        rows->untagged = p->untagged;
    }
    return rc;
}

/* Read one file into @p p. @return 0 or -1 (message printed). */
static int
rp_read_file(struct recon_push *p, const char *path, char *buf)
{
    FILE *f = fopen(path, "rb");
    size_t have = 0;
    int skipping = 0; /* 1: inside a line past RECON_PUSH_LINE_MAX_BYTES, until its LF */
    char err[256];
    int rc = -1;

    if (!f) {
        fprintf(stderr, "fleetsim-stress: cannot read %s: %s\n", path, strerror(errno));
        return -1;
    }
    p->line_no = 0;
    p->trap_open = 0;
    for (;;) {
        size_t n = fread(buf + have, 1, RP_READ_BYTES - have, f);
        size_t start = 0;
        int eof = n == 0;
        have += n;
        for (;;) {
            char *lf = memchr(buf + start, '\n', have - start);
            size_t len;
            if (!lf) {
                break;
            }
            len = (size_t)(lf - (buf + start));
            if (skipping || len > RECON_PUSH_LINE_MAX_BYTES) {
                if (!skipping) {
                    recon_push_overlong(p);
                }
                skipping = 0;
            } else if (recon_push_line(p, buf + start, len, err, sizeof err)) {
                fprintf(stderr, "fleetsim-stress: %s: %s\n", path, err);
                goto cleanup;
            }
            start += len + 1;
        }
        /* What is left is a partial line: keep it unless it is already too long. */
        memmove(buf, buf + start, have - start);
        have -= start;
        if (have > RECON_PUSH_LINE_MAX_BYTES) {
            if (!skipping) {
                recon_push_overlong(p);
            }
            skipping = 1;
            have = 0;
        }
        if (eof) {
            break;
        }
    }
    if (ferror(f)) {
        fprintf(stderr, "fleetsim-stress: cannot read %s: %s\n", path, strerror(errno));
        goto cleanup;
    }
    /* A last line without its LF (a file cut short) still counts. */
    if (have && !skipping && recon_push_line(p, buf, have, err, sizeof err)) {
        fprintf(stderr, "fleetsim-stress: %s: %s\n", path, err);
        goto cleanup;
    }
    rp_trapd_close(p); /* the file's last record */
    rc = 0;

cleanup:
    fclose(f);
    return rc;
}

int
recon_push_read_files(struct recon_push *p, const char *const *paths, uint32_t count)
{
    char *buf = malloc(RP_READ_BYTES);
    int rc = 0;

    if (!buf) {
        fprintf(stderr, "fleetsim-stress: out of memory\n");
        return -1;
    }
    for (uint32_t i = 0; i < count && !rc; i++) {
        rc = rp_read_file(p, paths[i], buf);
    }
    free(buf);
    return rc;
}
