/*
 * What a run measures: latencies (exact, percentiles by nearest rank; kept
 * as counts per distinct microsecond value so that a run of any length holds
 * them in bounded memory), rpc-errors counted by error-tag, and the
 * client's own CPU time; plus the JSON helpers the manifests are written with.
 */
#ifndef STRESS_STATS_H
#define STRESS_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "reply_scan.h"
#include "sbuf.h"

/* Latencies added since the last fold, at most: folding sorts them into the counts per value, so memory
 * follows the number of distinct values (bounded by the message timeout in us), not the number of replies. */
#define LATENCY_PENDING_MAX 16384

struct latency_value {
    uint32_t us; /* one distinct latency, microseconds */
    uint64_t n;  /* how many times it was seen */
};

struct latency {
    uint32_t *us;                 /* latencies added and not folded yet, microseconds, in arrival order */
    size_t pending;               /* entries of us used, at most LATENCY_PENDING_MAX */
    size_t cap;                   /* entries of us allocated */
    struct latency_value *values; /* folded ones: ascending by us, each us once */
    size_t value_count;           /* entries of values used */
    size_t value_cap;             /* entries of values allocated */
    uint64_t count;               /* every latency added (pending and folded) */
    int sorted;                   /* 1 once latency_sort() ran and nothing was added since (pending is 0) */
};

struct tag_count {
    char tag[REPLY_TAG_MAX_BYTES]; /* error-tag */
    uint64_t count;                /* replies carrying it first */
};

struct tag_counts {
    struct tag_count *items; /* distinct tags in order of first sight */
    size_t count;            /* entries */
};

/**
 * @brief Reserve room for @p n entries up front (no allocation while measuring), up to LATENCY_PENDING_MAX:
 * past that, memory grows with the distinct values only. @return 0 or -1.
 */
int latency_reserve(struct latency *l, size_t n);

/** @brief Record one latency. @return 0 or -1 when memory ran out. */
int latency_add(struct latency *l, uint32_t us);

/** @brief Add every entry of @p from (sorted or not) to @p into. @return 0 or -1. */
int latency_merge(struct latency *into, const struct latency *from);

/** @brief Fold what was added into the counts per value, for percentiles. @return 0 or -1 (out of memory). */
int latency_sort(struct latency *l);

/** @return The nearest rank (1..@p count) of percentile @p pct (0-100] in a set of @p count > 0 values. */
uint64_t stats_nearest_rank(uint64_t count, double pct);

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

/** @brief Free what @p l holds and zero it; accepts a zeroed one. */
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

/* The manifests' histogram: fixed logarithmic buckets, STATS_HIST_PER_DECADE per decade from 1 us;
 * bucket i holds the values below 10^((i+1)/STATS_HIST_PER_DECADE) (and at or above the previous bound). */
#define STATS_HIST_PER_DECADE 10
/* Buckets up to 10^10 us, past UINT32_MAX (the largest latency kept). */
#define STATS_HIST_BUCKETS 100

/** @return The histogram bucket of @p us (0..STATS_HIST_BUCKETS-1). */
unsigned stats_hist_bucket(uint64_t us);

/**
 * @brief Append `"NAME":{"unit":"us","buckets_per_decade":10,"first_upper":1,"counts":[...]}` for every
 * entry of @p l (sorted or not); counts end at the last bucket that is not empty ([] for an empty set).
 */
void latency_histogram_json(struct sbuf *b, const char *name, const struct latency *l);

/** @return The largest whole number of microseconds histogram bucket @p bucket holds. */
uint64_t stats_hist_upper(unsigned bucket);

/**
 * @brief The nearest-rank percentile @p pct of a histogram's @p used buckets @p counts, to the bucket: the
 * largest value of the bucket that holds that rank (stats_hist_upper()), 0 when the counts are all 0. It is
 * at most one bucket (a factor of 10^(1/STATS_HIST_PER_DECADE), 26 %) above the exact percentile.
 */
uint64_t stats_hist_percentile(const uint64_t *counts, size_t used, double pct);

/** @brief Append `"NAME":{"unit":"us",...,"counts":[...]}` of @p used buckets @p counts, as the manifests do.
 */
void stats_hist_counts_json(struct sbuf *b, const char *name, const uint64_t *counts, size_t used);

/* Counts per second of a run: v[s] is what happened in second s since the run's origin. */
struct persec {
    uint64_t *v; /* counts by second */
    size_t len;  /* seconds up to the last counted one */
    size_t cap;  /* entries allocated */
};

/* Per-second counts by a name (an error-tag, an HTTP status). */
struct persec_named {
    char name[REPLY_TAG_MAX_BYTES]; /* the name */
    struct persec s;                /* its counts */
};

struct persec_names {
    struct persec_named *items; /* in order of first sight */
    size_t count;               /* entries */
};

/** @brief Count @p n in second @p sec. @return 0 or -1 when memory ran out. */
int persec_add(struct persec *p, size_t sec, uint64_t n);

/** @brief Append the counts as a JSON array of @p len entries (zeros past p->len). */
void persec_json(struct sbuf *b, const struct persec *p, size_t len);

void persec_free(struct persec *p);

/** @brief Count @p n for @p name in second @p sec. @return 0 or -1. */
int persec_names_add(struct persec_names *t, const char *name, size_t sec, uint64_t n);

/** @brief Append `{"name":[...],...}`, each array @p len entries. */
void persec_names_json(struct sbuf *b, const struct persec_names *t, size_t len);

void persec_names_free(struct persec_names *t);

/**
 * @brief Append `"per_second":{"bucket_s":1,"ok":[...],"errors":[...],"errors_by_tag":{...}}`, every array
 * as long as the longest: the request modes' (edit, restconf) curves.
 */
void persec_requests_json(struct sbuf *b, const struct persec *ok, const struct persec *errors,
                          const struct persec_names *by_tag);

#endif
