/*
 * What a run measures: latencies (exact, one entry per reply, percentiles
 * by nearest rank after sorting), rpc-errors counted by error-tag, and the
 * client's own CPU time; plus the JSON helpers the manifests are written with.
 */
#ifndef STRESS_STATS_H
#define STRESS_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "reply_scan.h"
#include "sbuf.h"

struct latency {
    uint32_t *us; /* one latency per answered request, microseconds */
    size_t count; /* entries used */
    size_t cap;   /* entries allocated */
    int sorted;   /* 1 once latency_sort() ran and nothing was added since */
};

struct tag_count {
    char tag[REPLY_TAG_MAX_BYTES]; /* error-tag */
    uint64_t count;                /* replies carrying it first */
};

struct tag_counts {
    struct tag_count *items; /* distinct tags in order of first sight */
    size_t count;            /* entries */
};

/** @brief Reserve room for @p n entries up front (no allocation while measuring). @return 0 or -1. */
int latency_reserve(struct latency *l, size_t n);

/** @brief Record one latency. @return 0 or -1 when memory ran out. */
int latency_add(struct latency *l, uint32_t us);

/** @brief Append every entry of @p from. @return 0 or -1. */
int latency_merge(struct latency *into, const struct latency *from);

/** @brief Sort, for percentiles. */
void latency_sort(struct latency *l);

/** @return The nearest-rank percentile @p pct (0-100] of a sorted set, 0 when empty. */
uint32_t latency_percentile(const struct latency *l, double pct);

/**
 * @brief The percentile @p pct of a sorted set, divided by @p div, as text with @p decimals decimals;
 * "n/a" when the set is empty (nothing was measured: 0 would read as a measurement).
 * @return @p buf.
 */
const char *latency_text(const struct latency *l, double pct, double div, int decimals, char *buf,
                         size_t len);

/** @brief Append the percentile as latency_text() does, as a JSON number, or null when the set is empty. */
void latency_json(struct sbuf *b, const struct latency *l, double pct, double div, int decimals);

void latency_free(struct latency *l);

/** @brief Count one reply whose first rpc-error has @p tag. @return 0 or -1. */
int tags_add(struct tag_counts *t, const char *tag, uint64_t n);

void tags_free(struct tag_counts *t);

/** @return User plus system CPU seconds of this process so far. */
double stats_cpu_seconds(void);

/** @brief User and system CPU seconds of this process so far, apart. */
void stats_cpu_split(double *user_s, double *system_s);

/** @brief Append @p s as a JSON string, or null when @p s is NULL or empty. */
void json_string_or_null(struct sbuf *b, const char *s);

/** @brief Write @p b to @p path (replacing it atomically). @return 0 or -1 with errno set. */
int json_write_file(const char *path, const struct sbuf *b);

#endif
