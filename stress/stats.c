/*
 * Latency sets, error-tag counts, CPU time and JSON output; see stats.h.
 */
#include "stats.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

int
latency_reserve(struct latency *l, size_t n)
{
    uint32_t *grown;

    if (n > LATENCY_PENDING_MAX) {
        n = LATENCY_PENDING_MAX;
    }
    if (n <= l->cap) {
        return 0;
    }
    grown = realloc(l->us, n * sizeof *grown);
    if (!grown) {
        return -1;
    }
    l->us = grown;
    l->cap = n;
    return 0;
}

static int
cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a;
    uint32_t y = *(const uint32_t *)b;

    return (x > y) - (x < y);
}

/* Merge the sorted runs of values from a and b (each ascending, each value once) into out. */
static size_t
merge_values(const struct latency_value *a, size_t na, const struct latency_value *b, size_t nb,
             struct latency_value *out)
{
    size_t i = 0, j = 0, k = 0;

    while (i < na || j < nb) {
        if (j == nb || (i < na && a[i].us < b[j].us)) {
            out[k++] = a[i++];
        } else if (i == na || b[j].us < a[i].us) {
            out[k++] = b[j++];
        } else {
            out[k] = a[i++];
            out[k++].n += b[j++].n;
        }
    }
    return k;
}

/* Add the distinct values of b (ascending) to l's values. */
static int
add_values(struct latency *l, const struct latency_value *b, size_t nb)
{
    struct latency_value *merged;
    size_t need = l->value_count + nb;

    if (!nb) {
        return 0;
    }
    /* A fresh array each time keeps the merge simple; it costs one copy of the distinct values per fold,
     * LATENCY_PENDING_MAX adds apart, which is small beside the sort of those adds. */
    if (!(merged = malloc(need * sizeof *merged))) {
        return -1;
    }
    l->value_count = merge_values(l->values, l->value_count, b, nb, merged);
    l->value_cap = need;
    free(l->values);
    l->values = merged;
    return 0;
}

int
latency_sort(struct latency *l)
{
    struct latency_value *runs = NULL;
    size_t n = 0;
    int rc = 0;

    if (l->pending) {
        qsort(l->us, l->pending, sizeof *l->us, cmp_u32);
        if (!(runs = malloc(l->pending * sizeof *runs))) {
            return -1;
        }
        for (size_t i = 0; i < l->pending; i++) {
            if (n && runs[n - 1].us == l->us[i]) {
                runs[n - 1].n++;
            } else {
                runs[n++] = (struct latency_value){.us = l->us[i], .n = 1};
            }
        }
        rc = add_values(l, runs, n);
        free(runs);
        if (rc) {
            return -1;
        }
        l->pending = 0;
    }
    l->sorted = 1;
    return 0;
}

int
latency_add(struct latency *l, uint32_t us)
{
    if (l->pending == LATENCY_PENDING_MAX && latency_sort(l)) {
        return -1;
    }
    if (l->pending == l->cap && latency_reserve(l, l->cap ? l->cap * 2 : 1024)) {
        return -1;
    }
    l->us[l->pending++] = us;
    l->count++;
    l->sorted = 0;
    return 0;
}

int
latency_merge(struct latency *into, const struct latency *from)
{
    for (size_t i = 0; i < from->pending; i++) {
        if (latency_add(into, from->us[i])) {
            return -1;
        }
    }
    if (add_values(into, from->values, from->value_count)) {
        return -1;
    }
    into->count += from->count - from->pending;
    into->sorted = 0;
    return 0;
}

uint64_t
stats_nearest_rank(uint64_t count, double pct)
{
    /* Nearest rank: the smallest value with at least pct % of the set at or below it. */
    uint64_t rank = (uint64_t)((pct / 100.0) * (double)count + 0.999999);

    return rank < 1 ? 1 : rank > count ? count : rank;
}

uint32_t
latency_percentile(const struct latency *l, double pct)
{
    uint64_t rank, seen = 0;

    if (!l->count) {
        return 0;
    }
    /* Only folded values count: latency_sort() comes first, as the header says. */
    rank = stats_nearest_rank(l->count - l->pending, pct);
    for (size_t i = 0; i < l->value_count; i++) {
        seen += l->values[i].n;
        if (seen >= rank) {
            return l->values[i].us;
        }
    }
    return 0;
}

const char *
latency_text(const struct latency *l, double pct, double div, int decimals, char *buf, size_t len)
{
    if (!l->count) {
        snprintf(buf, len, "n/a");
    } else {
        snprintf(buf, len, "%.*f", decimals, latency_percentile(l, pct) / div);
    }
    return buf;
}

void
latency_json(struct sbuf *b, const struct latency *l, double pct, double div, int decimals)
{
    if (!l->count) {
        sbuf_adds(b, "null");
    } else {
        sbuf_printf(b, "%.*f", decimals, latency_percentile(l, pct) / div);
    }
}

void
latency_free(struct latency *l)
{
    free(l->us);
    free(l->values);
    memset(l, 0, sizeof *l);
}

int
tags_add(struct tag_counts *t, const char *tag, uint64_t n)
{
    struct tag_count *grown;

    for (size_t i = 0; i < t->count; i++) {
        if (!strcmp(t->items[i].tag, tag)) {
            t->items[i].count += n;
            return 0;
        }
    }
    grown = realloc(t->items, (t->count + 1) * sizeof *grown);
    if (!grown) {
        return -1;
    }
    t->items = grown;
    memset(&t->items[t->count], 0, sizeof t->items[t->count]);
    snprintf(t->items[t->count].tag, sizeof t->items[t->count].tag, "%s", tag[0] ? tag : "(no error-tag)");
    t->items[t->count].count = n;
    t->count++;
    return 0;
}

void
tags_free(struct tag_counts *t)
{
    free(t->items);
    memset(t, 0, sizeof *t);
}

double
stats_cpu_seconds(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec / 1e6;
}

void
stats_cpu_split(double *user_s, double *system_s)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    *user_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
    *system_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

void
json_string_or_null(struct sbuf *b, const char *s)
{
    if (s && *s) {
        sbuf_add_json(b, s);
    } else {
        sbuf_adds(b, "null");
    }
}

int
json_write_file(const char *path, const struct sbuf *b)
{
    char tmp[4096];
    FILE *f;

    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    f = fopen(tmp, "w");
    if (!f) {
        return -1;
    }
    if (fwrite(b->buf ? b->buf : "", 1, b->len, f) != b->len || fputc('\n', f) == EOF) {
        fclose(f);
        unlink(tmp);
        return -1;
    }
    if (fclose(f) || rename(tmp, path)) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* Bound of bucket i: the smallest whole number of microseconds above it (ceil of 10^((i+1)/10)). */
static uint64_t
hist_bound(unsigned i)
{
    return (uint64_t)ceil(pow(10.0, (double)(i + 1) / STATS_HIST_PER_DECADE) - 1e-9);
}

unsigned
stats_hist_bucket(uint64_t us)
{
    double guess = us ? floor(STATS_HIST_PER_DECADE * log10((double)us)) : 0;
    unsigned k = guess < 0 ? 0 : guess >= STATS_HIST_BUCKETS ? STATS_HIST_BUCKETS - 1 : (unsigned)guess;

    /* log10's rounding near a bound: settle on the first bucket whose bound is above us. */
    while (k > 0 && us < hist_bound(k - 1)) {
        k--;
    }
    while (k + 1 < STATS_HIST_BUCKETS && us >= hist_bound(k)) {
        k++;
    }
    return k;
}

uint64_t
stats_hist_upper(unsigned bucket)
{
    return hist_bound(bucket < STATS_HIST_BUCKETS ? bucket : STATS_HIST_BUCKETS - 1) - 1;
}

uint64_t
stats_hist_percentile(const uint64_t *counts, size_t used, double pct)
{
    uint64_t total = 0;
    uint64_t rank;
    uint64_t seen = 0;

    for (size_t i = 0; i < used; i++) {
        total += counts[i];
    }
    if (!total) {
        return 0;
    }
    rank = stats_nearest_rank(total, pct);
    for (size_t i = 0; i < used; i++) {
        seen += counts[i];
        if (seen >= rank) {
            return stats_hist_upper((unsigned)i);
        }
    }
    return stats_hist_upper((unsigned)(used - 1));
}

void
stats_hist_counts_json(struct sbuf *b, const char *name, const uint64_t *counts, size_t used)
{
    sbuf_printf(b, "\"%s\":{\"unit\":\"us\",\"buckets_per_decade\":%d,\"first_upper\":1,\"counts\":[", name,
                STATS_HIST_PER_DECADE);
    for (size_t i = 0; i < used; i++) {
        sbuf_printf(b, "%s%" PRIu64, i ? "," : "", counts[i]);
    }
    sbuf_adds(b, "]}");
}

void
latency_histogram_json(struct sbuf *b, const char *name, const struct latency *l)
{
    uint64_t counts[STATS_HIST_BUCKETS] = {0};
    size_t used = 0;

    for (size_t i = 0; i < l->pending; i++) {
        unsigned k = stats_hist_bucket(l->us[i]);
        counts[k]++;
        if (k + 1 > used) {
            used = k + 1;
        }
    }
    for (size_t i = 0; i < l->value_count; i++) {
        unsigned k = stats_hist_bucket(l->values[i].us);
        counts[k] += l->values[i].n;
        if (k + 1 > used) {
            used = k + 1;
        }
    }
    stats_hist_counts_json(b, name, counts, used);
}

int
persec_add(struct persec *p, size_t sec, uint64_t n)
{
    if (sec >= p->cap) {
        size_t cap = p->cap ? p->cap : 64;
        uint64_t *grown;
        while (cap <= sec) {
            cap *= 2;
        }
        grown = realloc(p->v, cap * sizeof *grown);
        if (!grown) {
            return -1;
        }
        memset(grown + p->cap, 0, (cap - p->cap) * sizeof *grown);
        p->v = grown;
        p->cap = cap;
    }
    p->v[sec] += n;
    if (sec + 1 > p->len) {
        p->len = sec + 1;
    }
    return 0;
}

void
persec_json(struct sbuf *b, const struct persec *p, size_t len)
{
    sbuf_adds(b, "[");
    for (size_t i = 0; i < len; i++) {
        sbuf_printf(b, "%s%" PRIu64, i ? "," : "", i < p->len ? p->v[i] : 0);
    }
    sbuf_adds(b, "]");
}

void
persec_free(struct persec *p)
{
    free(p->v);
    memset(p, 0, sizeof *p);
}

int
persec_names_add(struct persec_names *t, const char *name, size_t sec, uint64_t n)
{
    struct persec_named *grown;
    const char *shown = name && name[0] ? name : "(no error-tag)";

    for (size_t i = 0; i < t->count; i++) {
        if (!strcmp(t->items[i].name, shown)) {
            return persec_add(&t->items[i].s, sec, n);
        }
    }
    grown = realloc(t->items, (t->count + 1) * sizeof *grown);
    if (!grown) {
        return -1;
    }
    t->items = grown;
    memset(&t->items[t->count], 0, sizeof t->items[t->count]);
    snprintf(t->items[t->count].name, sizeof t->items[t->count].name, "%s", shown);
    t->count++;
    return persec_add(&t->items[t->count - 1].s, sec, n);
}

void
persec_names_json(struct sbuf *b, const struct persec_names *t, size_t len)
{
    sbuf_adds(b, "{");
    for (size_t i = 0; i < t->count; i++) {
        if (i) {
            sbuf_adds(b, ",");
        }
        sbuf_add_json(b, t->items[i].name);
        sbuf_adds(b, ":");
        persec_json(b, &t->items[i].s, len);
    }
    sbuf_adds(b, "}");
}

void
persec_names_free(struct persec_names *t)
{
    for (size_t i = 0; i < t->count; i++) {
        persec_free(&t->items[i].s);
    }
    free(t->items);
    memset(t, 0, sizeof *t);
}

void
persec_requests_json(struct sbuf *b, const struct persec *ok, const struct persec *errors,
                     const struct persec_names *by_tag)
{
    size_t secs = ok->len > errors->len ? ok->len : errors->len;

    sbuf_adds(b, "\"per_second\":{\"bucket_s\":1,\"ok\":");
    persec_json(b, ok, secs);
    sbuf_adds(b, ",\"errors\":");
    persec_json(b, errors, secs);
    sbuf_adds(b, ",\"errors_by_tag\":");
    persec_names_json(b, by_tag, secs);
}
