/*
 * fleetsim-stress merge; see merge.h. One walk over the parsed manifests,
 * all of them at once: at each member the rule of its name (merge_rules[],
 * else one by the value's type) writes the merged value from the N inputs'
 * values at the same place. The rules that need more than the values
 * (rates, percentiles, per-second alignment) read their siblings or the
 * window computed once before the walk.
 *
 * Percentiles of a merge come from the merged histogram (there is no other
 * source once the runs have ended), so they are to the bucket: the largest
 * value of the bucket holding the rank, at most 26 % above the exact value,
 * except max and min (exact) and a block only one run measured (copied).
 */
#include "merge.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "digest.h"
#include "json_read.h"
#include "merge_inventory.h"
#include "run.h"
#include "stats.h"

/* More manifests than this are refused: each level of the walk holds a pointer per input. */
#define MERGE_INPUTS_MAX 4096

enum merge_rule {
    MR_BY_TYPE,     /* by the values' type: objects walked, integers added, other numbers max, true if all */
    MR_ADD,         /* numbers added */
    MR_MAX,         /* the largest (objects: every number in them) */
    MR_MIN,         /* the smallest */
    MR_AND,         /* true when all are */
    MR_FIRST,       /* the first input's */
    MR_NONNULL,     /* the first that is not null */
    MR_KEPT,        /* the value when all agree, else the list of distinct values in input order */
    MR_KEPT_ALL,    /* an object whose every member is MR_KEPT (the parameters) */
    MR_SKIP,        /* left out (a merged input's own "merged_from": the new one replaces it) */
    MR_WSTART,      /* the window's start: the earliest started_unix_s */
    MR_WEND,        /* its end: the latest ended_unix_s */
    MR_WINDOW,      /* the window's length (elapsed_s and its kin) */
    MR_RATE,        /* count / duration, recomputed from the merged count and duration */
    MR_PER_REQUEST, /* CPU microseconds per request, recomputed */
    MR_HIST,        /* a latency histogram, added bucket by bucket (one layout only) */
    MR_PCT,         /* a block of percentiles, recomputed from the sibling histogram */
    MR_SERIES,      /* per-second counts, aligned by each run's start and added */
    MR_SERIES0,     /* the same aligned at their first second (counted from each run's own origin) */
    MR_CONCAT,      /* arrays joined (a shard's devices), else by type */
    MR_UNKNOWN,     /* what cannot be recomputed (a median, a mean): the one run's, else null */
};

struct merge_rule_row {
    const char *name;     /* member name */
    enum merge_rule rule; /* its rule */
    const char *count;    /* MR_RATE, MR_PER_REQUEST: the count (alternatives split by '|'); MR_PCT: the
                             histogram sibling, NULL when there is none */
    const char *per;      /* MR_RATE: the duration sibling; MR_PER_REQUEST: the CPU seconds sibling; MR_PCT:
                             "ms" when the block is in milliseconds (its histogram in microseconds) */
};

/* Every member of every mode's manifest that the type alone would merge wrongly. */
static const struct merge_rule_row merge_rules[] = {
    {"tool", MR_KEPT, NULL, NULL},
    {"generated_at", MR_MAX, NULL, NULL},
    {"seed", MR_KEPT, NULL, NULL},
    {"mode", MR_KEPT, NULL, NULL},
    {"version", MR_KEPT, NULL, NULL},
    {"parameters", MR_KEPT_ALL, NULL, NULL},
    {"server", MR_FIRST, NULL, NULL},
    {"scenario", MR_KEPT, NULL, NULL},
    {"fleet_seed", MR_KEPT, NULL, NULL},
    {"merged_from", MR_SKIP, NULL, NULL},
    {"started_unix_s", MR_WSTART, NULL, NULL},
    {"ended_unix_s", MR_WEND, NULL, NULL},
    {"elapsed_s", MR_WINDOW, NULL, NULL},
    {"run_s", MR_WINDOW, NULL, NULL},
    {"all_done_s", MR_WINDOW, NULL, NULL},
    {"complete", MR_AND, NULL, NULL},
    {"ended_as_asked", MR_AND, NULL, NULL},
    {"all_connected", MR_AND, NULL, NULL},
    {"interrupted", MR_NONNULL, NULL, NULL},
    {"failure", MR_NONNULL, NULL, NULL},
    {"first_failure", MR_NONNULL, NULL, NULL},
    {"first_error", MR_NONNULL, NULL, NULL},
    {"events_first_error", MR_NONNULL, NULL, NULL},
    {"requests_per_second", MR_RATE, "edits_answered|requests_answered", "elapsed_s"},
    {"sessions_per_second", MR_RATE, "mounted", "all_done_s"},
    {"notifications_per_second", MR_RATE, "total_received", "first_to_last_s"},
    {"collections_per_second", MR_RATE, "collections", "elapsed_s"},
    {"samples_per_second", MR_RATE, "samples", "elapsed_s"},
    {"client_cpu_us_per_edit", MR_PER_REQUEST, "edits_answered", "client_cpu_s"},
    {"client_cpu_us_per_request", MR_PER_REQUEST, "requests_answered|responses", "client_cpu_s"},
    {"client_cpu_s", MR_ADD, NULL, NULL},
    {"client_cpu_user_s", MR_ADD, NULL, NULL},
    {"client_user_s", MR_ADD, NULL, NULL},
    {"client_system_s", MR_ADD, NULL, NULL},
    {"latency_us", MR_PCT, "latency_histogram", NULL},
    {"time_to_hello_us", MR_PCT, "time_to_hello_histogram", NULL},
    {"time_to_mounted_us", MR_PCT, "time_to_mounted_histogram", NULL},
    {"time_to_reconnect_us", MR_PCT, NULL, NULL},
    {"collection_time_ms", MR_PCT, "collection_time_histogram", "ms"},
    {"response_time_ms", MR_PCT, "response_time_histogram", "ms"},
    {"latency_histogram", MR_HIST, NULL, NULL},
    {"time_to_hello_histogram", MR_HIST, NULL, NULL},
    {"time_to_mounted_histogram", MR_HIST, NULL, NULL},
    {"per_second", MR_SERIES, NULL, NULL},
    {"buckets", MR_SERIES0, NULL, NULL},
    {"first_to_last_s", MR_MAX, NULL, NULL},
    {"setup_s", MR_MAX, NULL, NULL},
    {"time_to_all_connected_s", MR_MAX, NULL, NULL},
    {"first_listed_s", MR_MIN, NULL, NULL},
    {"first_connected_s", MR_MIN, NULL, NULL},
    {"min", MR_MIN, NULL, NULL},
    {"max", MR_MAX, NULL, NULL},
    {"median", MR_UNKNOWN, NULL, NULL},
    {"mean", MR_UNKNOWN, NULL, NULL},
    {"devices", MR_CONCAT, NULL, NULL},
    {"not_connected", MR_CONCAT, NULL, NULL},
    {"failed_devices", MR_CONCAT, NULL, NULL},
    {"errors", MR_CONCAT, NULL, NULL},
    {"events", MR_CONCAT, NULL, NULL},
    {"curve", MR_FIRST, NULL, NULL},
    {"fit", MR_FIRST, NULL, NULL},
    {"fit_points", MR_FIRST, NULL, NULL},
    {"reconnect", MR_KEPT, NULL, NULL},
    {"checked", MR_KEPT, NULL, NULL},
    {"ended", MR_KEPT, NULL, NULL},
    {"bucket_s", MR_KEPT, NULL, NULL},
};

/* The main count of each mode, for the summary lines and "merged_from". */
static const char *const merge_main_counts[][2] = {
    {"edit", "edits_sent"},  {"mount", "mounted"},          {"notify", "total_received"},
    {"snmp", "collections"}, {"restconf", "requests_sent"}, {"controller-mount", "polls"},
};

/* One merge: the inputs, their window, the output. */
struct merge {
    size_t n;                            /* inputs */
    const struct merge_input *in;        /* their names and texts */
    struct jsonr_value **docs;           /* their trees */
    double *started_s;                   /* each one's started_unix_s, valid unless fallback */
    double *elapsed_s;                   /* each one's elapsed_s (or run_s, all_done_s), 0 when absent */
    size_t *offset_s;                    /* each one's per-second offset in the merged series */
    int fallback;                        /* 1: an input has no window: window_s is the longest run */
    double window_start_s, window_end_s; /* the common window, valid unless fallback */
    double window_s;                     /* its length */
    size_t series_len;                   /* length of the series being written (inside MR_SERIES) */
    int series_zero;                     /* 1 inside MR_SERIES0: offsets 0 */
    struct sbuf *out;                    /* the merged manifest */
    char *err;                           /* the caller's message buffer */
    size_t err_len;                      /* its size */
    int failed;                          /* 1 once an error was recorded */
};

static const struct merge_rule_row *
rule_of(const char *name)
{
    for (size_t i = 0; name && i < sizeof merge_rules / sizeof merge_rules[0]; i++) {
        if (!strcmp(merge_rules[i].name, name)) {
            return &merge_rules[i];
        }
    }
    return NULL;
}

static const char *
main_count(const char *mode)
{
    for (size_t i = 0; mode && i < sizeof merge_main_counts / sizeof merge_main_counts[0]; i++) {
        if (!strcmp(merge_main_counts[i][0], mode)) {
            return merge_main_counts[i][1];
        }
    }
    return NULL;
}

static int
is_null(const struct jsonr_value *v)
{
    return !v || v->type == JSONR_NULL;
}

/* A number member of @p obj; @return 0 or -1 when absent or not a number. */
static int
get_num(const struct jsonr_value *obj, const char *key, double *out)
{
    const struct jsonr_value *v = jsonr_get(obj, key);

    if (!v || v->type != JSONR_NUMBER) {
        return -1;
    }
    *out = v->is_u64 ? (double)v->u64 : v->num;
    return 0;
}

static double
num_of(const struct jsonr_value *v)
{
    return v->is_u64 ? (double)v->u64 : v->num;
}

static void merge_value(struct merge *m, const char *name, const struct jsonr_value *const *parents,
                        const struct jsonr_value *const *vals, enum merge_rule force);

/* The key, when the value is an object member. */
static void
put_key(struct merge *m, const char *name)
{
    if (name) {
        sbuf_add_json(m->out, name);
        sbuf_adds(m->out, ":");
    }
}

/* The values that agree, or the list of distinct ones in input order. */
static void
put_kept(struct merge *m, const struct jsonr_value *const *vals)
{
    struct sbuf *texts = calloc(m->n, sizeof *texts);
    size_t distinct = 0;

    if (!texts) {
        m->out->failed = 1;
        return;
    }
    for (size_t i = 0; i < m->n; i++) {
        size_t k;
        if (!vals[i]) {
            continue;
        }
        jsonr_print(&texts[distinct], vals[i]);
        for (k = 0; k < distinct && (texts[k].len != texts[distinct].len ||
                                     memcmp(texts[k].buf, texts[distinct].buf, texts[k].len));
             k++) {
        }
        if (k == distinct) {
            distinct++;
        } else {
            sbuf_free(&texts[distinct]);
        }
    }
    if (distinct > 1) {
        sbuf_adds(m->out, "[");
    }
    for (size_t k = 0; k < distinct; k++) {
        if (k) {
            sbuf_adds(m->out, ",");
        }
        sbuf_add(m->out, texts[k].buf, texts[k].len);
        sbuf_free(&texts[k]);
    }
    if (distinct > 1) {
        sbuf_adds(m->out, "]");
    }
    free(texts);
}

/* The members of the objects @p vals (the union, in order of first sight), each merged. */
static void
put_members(struct merge *m, const struct jsonr_value *const *vals, enum merge_rule force)
{
    const struct jsonr_value **sub = calloc(m->n, sizeof *sub);
    int first = 1;

    if (!sub) {
        m->out->failed = 1;
        return;
    }
    for (size_t i = 0; i < m->n && !m->failed; i++) {
        if (!vals[i] || vals[i]->type != JSONR_OBJECT) {
            continue;
        }
        for (const struct jsonr_value *k = vals[i]->child; k && !m->failed; k = k->next) {
            const struct merge_rule_row *r = rule_of(k->key);
            size_t seen;
            for (seen = 0; seen < i && !jsonr_get(vals[seen], k->key); seen++) {
            }
            if (seen < i || jsonr_get(vals[i], k->key) != k || (!force && r && r->rule == MR_SKIP)) {
                continue; /* written at its first sight; a repeated key once */
            }
            for (size_t j = 0; j < m->n; j++) {
                sub[j] = jsonr_get(vals[j], k->key);
            }
            if (!first) {
                sbuf_adds(m->out, ",");
            }
            first = 0;
            merge_value(m, k->key, vals, sub, force);
        }
    }
    free(sub);
}

/* Sum of the first of @p names ('|'-separated) that a parent has, over every parent. */
static double
sum_of(const struct merge *m, const struct jsonr_value *const *parents, const char *names)
{
    char one[64];
    const char *p = names;

    while (p && *p) {
        size_t len = strcspn(p, "|");
        double sum = 0;
        int found = 0;
        snprintf(one, sizeof one, "%.*s", (int)len, p);
        for (size_t i = 0; i < m->n; i++) {
            double v;
            if (!get_num(parents[i], one, &v)) {
                sum += v;
                found = 1;
            }
        }
        if (found) {
            return sum;
        }
        p += len + (p[len] == '|');
    }
    return 0;
}

/* The merged value of the duration sibling @p name: the window, or the longest. */
static double
duration_of(const struct merge *m, const struct jsonr_value *const *parents, const char *name)
{
    const struct merge_rule_row *r = rule_of(name);
    double longest = 0;

    if (r && r->rule == MR_WINDOW) {
        return m->window_s;
    }
    for (size_t i = 0; i < m->n; i++) {
        double v;
        if (!get_num(parents[i], name, &v) && v > longest) {
            longest = v;
        }
    }
    return longest;
}

/* The histogram siblings @p name added into @p counts (STATS_HIST_BUCKETS); @return buckets used, or -1
 * (with m->err) when one has another layout. */
static long
hist_sum(struct merge *m, const struct jsonr_value *const *hists, uint64_t *counts, const char *name)
{
    long used = 0;

    memset(counts, 0, STATS_HIST_BUCKETS * sizeof *counts);
    for (size_t i = 0; i < m->n; i++) {
        const struct jsonr_value *h = hists[i];
        const struct jsonr_value *c = jsonr_get(h, "counts");
        const char *unit = jsonr_get_str(h, "unit");
        uint64_t per_decade = 0, first_upper = 0;
        long k = 0;
        if (!h) {
            continue;
        }
        if (!unit || strcmp(unit, "us") || jsonr_get_u64(h, "buckets_per_decade", &per_decade) ||
            per_decade != STATS_HIST_PER_DECADE || jsonr_get_u64(h, "first_upper", &first_upper) ||
            first_upper != 1 || !c || c->type != JSONR_ARRAY || c->count > STATS_HIST_BUCKETS) {
            snprintf(m->err, m->err_len,
                     "%s: \"%s\" has another bucket layout (this merge adds unit \"us\", %d buckets per "
                     "decade from 1, at most %d buckets)",
                     m->in[i].file, name, STATS_HIST_PER_DECADE, STATS_HIST_BUCKETS);
            m->failed = 1;
            return -1;
        }
        for (const struct jsonr_value *e = c->child; e; e = e->next, k++) {
            if (e->type != JSONR_NUMBER || !e->is_u64) {
                snprintf(m->err, m->err_len, "%s: \"%s\" counts must be whole numbers", m->in[i].file, name);
                m->failed = 1;
                return -1;
            }
            counts[k] += e->u64;
        }
        used = k > used ? k : used;
    }
    return used;
}

/* A block of percentiles ("p50", ..., "max"): max and min exact, the others from the merged histogram. */
static void
put_percentiles(struct merge *m, const struct jsonr_value *const *parents,
                const struct jsonr_value *const *vals, const char *hist_name, int in_ms)
{
    uint64_t counts[STATS_HIST_BUCKETS];
    const struct jsonr_value **hists = calloc(m->n, sizeof *hists);
    const struct jsonr_value **sub = calloc(m->n, sizeof *sub);
    long used = -1;
    size_t measured = 0, only = 0;
    int first = 1;

    if (!hists || !sub) {
        m->out->failed = 1;
        goto cleanup;
    }
    for (size_t i = 0; i < m->n; i++) {
        hists[i] = hist_name ? jsonr_get(parents[i], hist_name) : NULL;
    }
    if (hist_name && (used = hist_sum(m, hists, counts, hist_name)) < 0) {
        goto cleanup;
    }
    /* The runs that measured something: one alone gives its exact values. */
    for (size_t i = m->n; i-- > 0;) {
        only = vals[i] ? i : only;
    }
    for (size_t i = 0; i < m->n; i++) {
        double p50;
        if (vals[i] && !get_num(vals[i], "max", &p50)) {
            measured++;
            only = i;
        }
    }
    sbuf_adds(m->out, "{");
    for (const struct jsonr_value *k = vals[only] ? vals[only]->child : NULL; k; k = k->next) {
        const struct merge_rule_row *r = rule_of(k->key);
        sbuf_adds(m->out, first ? "" : ",");
        first = 0;
        if (measured == 1 || (r && (r->rule == MR_MAX || r->rule == MR_MIN))) {
            for (size_t j = 0; j < m->n; j++) {
                sub[j] = measured == 1 ? (j == only ? jsonr_get(vals[j], k->key) : NULL)
                                       : jsonr_get(vals[j], k->key);
            }
            merge_value(m, k->key, vals, sub, measured == 1 ? MR_FIRST : MR_BY_TYPE);
            continue;
        }
        put_key(m, k->key);
        if (k->key[0] == 'p' && used > 0 && measured > 1) {
            double pct = strtod(k->key + 1, NULL);
            double hi = INFINITY;
            double v = (double)stats_hist_percentile(counts, (size_t)used, pct) / (in_ms ? 1e3 : 1);
            for (size_t j = 0; j < m->n; j++) {
                double x;
                if (!get_num(vals[j], "max", &x) && (hi == INFINITY || x > hi)) {
                    hi = x;
                }
            }
            sbuf_printf(m->out, "%.*f", in_ms ? 3 : 0, hi != INFINITY && v > hi ? hi : v);
        } else {
            sbuf_adds(m->out, "null"); /* nothing to recompute it from */
        }
    }
    sbuf_adds(m->out, "}");

cleanup:
    free(hists);
    free(sub);
}

/* Longest array under @p v (a series object or array). */
static size_t
longest_array(const struct jsonr_value *v)
{
    size_t len = 0;

    if (!v) {
        return 0;
    }
    if (v->type == JSONR_ARRAY) {
        return v->count;
    }
    for (const struct jsonr_value *c = v->type == JSONR_OBJECT ? v->child : NULL; c; c = c->next) {
        size_t l = longest_array(c);
        len = l > len ? l : len;
    }
    return len;
}

/* Arrays of counts by second, each input's shifted by its offset and added, m->series_len long. */
static void
put_series_array(struct merge *m, const struct jsonr_value *const *vals)
{
    uint64_t *sum = calloc(m->series_len ? m->series_len : 1, sizeof *sum);

    if (!sum) {
        m->out->failed = 1;
        return;
    }
    for (size_t i = 0; i < m->n; i++) {
        size_t at = m->series_zero ? 0 : m->offset_s[i];
        for (const struct jsonr_value *e = vals[i] ? vals[i]->child : NULL; e; e = e->next, at++) {
            if (at < m->series_len && e->type == JSONR_NUMBER && e->is_u64) {
                sum[at] += e->u64;
            }
        }
    }
    sbuf_adds(m->out, "[");
    for (size_t s = 0; s < m->series_len; s++) {
        sbuf_printf(m->out, "%s%" PRIu64, s ? "," : "", sum[s]);
    }
    sbuf_adds(m->out, "]");
    free(sum);
}

/* Present values of one type: @return it, or -1 when they differ (nulls left out unless all are). */
static int
common_type(const struct merge *m, const struct jsonr_value *const *vals, int *all_u64)
{
    int type = -1;

    *all_u64 = 1;
    for (size_t i = 0; i < m->n; i++) {
        if (is_null(vals[i])) {
            continue;
        }
        if (type >= 0 && (int)vals[i]->type != type) {
            return -1;
        }
        type = (int)vals[i]->type;
        *all_u64 &= vals[i]->type == JSONR_NUMBER && vals[i]->is_u64;
    }
    return type < 0 ? (int)JSONR_NULL : type;
}

static void
put_numbers(struct merge *m, const struct jsonr_value *const *vals, enum merge_rule rule, int all_u64)
{
    const struct jsonr_value *pick = NULL;
    uint64_t sum_u64 = 0;
    double sum = 0;

    for (size_t i = 0; i < m->n; i++) {
        if (is_null(vals[i])) {
            continue;
        }
        sum_u64 += vals[i]->u64;
        sum += num_of(vals[i]);
        if (!pick || (rule == MR_MAX && num_of(vals[i]) > num_of(pick)) ||
            (rule == MR_MIN && num_of(vals[i]) < num_of(pick))) {
            pick = vals[i];
        }
    }
    if (rule != MR_ADD) {
        jsonr_print(m->out, pick);
    } else if (all_u64) {
        sbuf_printf(m->out, "%" PRIu64, sum_u64);
    } else {
        sbuf_printf(m->out, "%.6f", sum);
    }
}

static void
merge_value(struct merge *m, const char *name, const struct jsonr_value *const *parents,
            const struct jsonr_value *const *vals, enum merge_rule force)
{
    const struct merge_rule_row *r = rule_of(name);
    enum merge_rule rule = force ? force : r ? r->rule : MR_BY_TYPE;
    const struct jsonr_value *first = NULL;
    int all_u64;
    int type = common_type(m, vals, &all_u64);

    for (size_t i = 0; i < m->n && !first; i++) {
        first = vals[i];
    }
    /* Inside a series or a max block, a member with a rule of its own keeps it (bucket_s). */
    if ((force == MR_SERIES || force == MR_SERIES0 || force == MR_MAX) && r && r->rule == MR_KEPT) {
        rule = MR_KEPT;
    }
    if (rule == MR_HIST) {
        uint64_t counts[STATS_HIST_BUCKETS];
        long used = hist_sum(m, vals, counts, name);
        if (used >= 0) {
            stats_hist_counts_json(m->out, name, counts, (size_t)used);
        }
        return;
    }
    put_key(m, name);
    if (rule == MR_BY_TYPE || rule == MR_ADD || rule == MR_MAX || rule == MR_MIN || rule == MR_AND ||
        rule == MR_CONCAT || rule == MR_SERIES || rule == MR_SERIES0) {
        if (type < 0) {
            put_kept(m, vals); /* of several types: listed */
            return;
        }
        if (rule == MR_SERIES || rule == MR_SERIES0) {
            if (force != MR_SERIES && force != MR_SERIES0) {
                m->series_len = 0;
                m->series_zero = rule == MR_SERIES0;
                for (size_t i = 0; i < m->n; i++) {
                    size_t end = (m->series_zero ? 0 : m->offset_s[i]) + longest_array(vals[i]);
                    m->series_len = end > m->series_len ? end : m->series_len;
                }
            }
            if (type == JSONR_ARRAY) {
                put_series_array(m, vals);
                return;
            }
            if (type == JSONR_OBJECT) {
                sbuf_adds(m->out, "{");
                put_members(m, vals, rule);
                sbuf_adds(m->out, "}");
                return;
            }
            put_kept(m, vals);
            return;
        }
        switch (type) {
        case JSONR_OBJECT:
            sbuf_adds(m->out, "{");
            put_members(m, vals, rule == MR_MAX || rule == MR_MIN ? rule : MR_BY_TYPE);
            sbuf_adds(m->out, "}");
            return;
        case JSONR_NUMBER:
            put_numbers(m, vals, rule == MR_BY_TYPE ? (all_u64 ? MR_ADD : MR_MAX) : rule, all_u64);
            return;
        case JSONR_BOOL: {
            int all = 1;
            for (size_t i = 0; i < m->n; i++) {
                all &= is_null(vals[i]) || vals[i]->boolean;
            }
            sbuf_adds(m->out, all ? "true" : "false");
            return;
        }
        case JSONR_ARRAY: {
            int any = 0;
            sbuf_adds(m->out, "[");
            for (size_t i = 0; i < m->n; i++) {
                for (const struct jsonr_value *e = vals[i] ? vals[i]->child : NULL; e; e = e->next) {
                    sbuf_adds(m->out, any++ ? "," : "");
                    jsonr_print(m->out, e);
                }
            }
            sbuf_adds(m->out, "]");
            return;
        }
        case JSONR_NULL:
            sbuf_adds(m->out, "null");
            return;
        default:
            put_kept(m, vals);
            return;
        }
    }
    switch (rule) {
    case MR_FIRST:
        jsonr_print(m->out, first);
        break;
    case MR_NONNULL: {
        const struct jsonr_value *v = NULL;
        for (size_t i = 0; i < m->n && !v; i++) {
            v = is_null(vals[i]) ? NULL : vals[i];
        }
        jsonr_print(m->out, v ? v : first);
        break;
    }
    case MR_KEPT_ALL:
        if (type == JSONR_OBJECT) {
            sbuf_adds(m->out, "{");
            put_members(m, vals, MR_KEPT);
            sbuf_adds(m->out, "}");
        } else {
            put_kept(m, vals);
        }
        break;
    case MR_WSTART:
    case MR_WEND:
        if (m->fallback) {
            sbuf_adds(m->out, "null");
        } else {
            sbuf_printf(m->out, "%.6f", rule == MR_WSTART ? m->window_start_s : m->window_end_s);
        }
        break;
    case MR_WINDOW:
        sbuf_printf(m->out, "%.6f", m->window_s);
        break;
    case MR_RATE: {
        double per = duration_of(m, parents, r->per);
        sbuf_printf(m->out, "%.3f", per > 0 ? sum_of(m, parents, r->count) / per : 0.0);
        break;
    }
    case MR_PER_REQUEST: {
        double count = sum_of(m, parents, r->count);
        sbuf_printf(m->out, "%.3f", count > 0 ? sum_of(m, parents, r->per) * 1e6 / count : 0.0);
        break;
    }
    case MR_PCT:
        if (type == JSONR_OBJECT) {
            put_percentiles(m, parents, vals, r ? r->count : NULL, r && r->per && !strcmp(r->per, "ms"));
        } else {
            put_kept(m, vals);
        }
        break;
    case MR_UNKNOWN: {
        size_t have = 0;
        const struct jsonr_value *v = NULL;
        for (size_t i = 0; i < m->n; i++) {
            if (!is_null(vals[i])) {
                have++;
                v = vals[i];
            }
        }
        if (have == 1) {
            jsonr_print(m->out, v);
        } else {
            sbuf_adds(m->out, "null");
        }
        break;
    }
    default:
        put_kept(m, vals);
        break;
    }
}

/* Where a manifest keeps a member: at its top level, else in its results. */
static int
doc_num(const struct jsonr_value *doc, const char *key, double *out)
{
    return get_num(doc, key, out) && get_num(jsonr_get(doc, "results"), key, out) ? -1 : 0;
}

/* Each input's window and elapsed time, the common window and the series offsets. */
static void
merge_window(struct merge *m, FILE *warn)
{
    static const char *const lengths[] = {"elapsed_s", "run_s", "all_done_s"};

    m->window_start_s = INFINITY;
    m->window_end_s = -INFINITY;
    for (size_t i = 0; i < m->n; i++) {
        double end;
        for (size_t k = 0; k < 3 && doc_num(m->docs[i], lengths[k], &m->elapsed_s[i]); k++) {
        }
        if (doc_num(m->docs[i], "started_unix_s", &m->started_s[i]) ||
            doc_num(m->docs[i], "ended_unix_s", &end)) {
            if (warn) {
                fprintf(warn,
                        "fleetsim-stress: merge: %s has no started_unix_s (an older manifest): the window is "
                        "the longest run, and per-second counts line up at their first second\n",
                        m->in[i].file);
            }
            m->fallback = 1;
            continue;
        }
        m->window_start_s = m->started_s[i] < m->window_start_s ? m->started_s[i] : m->window_start_s;
        m->window_end_s = end > m->window_end_s ? end : m->window_end_s;
    }
    m->window_s = 0;
    for (size_t i = 0; i < m->n; i++) {
        if (m->fallback) {
            m->window_s = m->elapsed_s[i] > m->window_s ? m->elapsed_s[i] : m->window_s;
        } else {
            /* Whole seconds: a run started 0.4 s after the first counts in the first one's second. */
            m->offset_s[i] = (size_t)llround(m->started_s[i] - m->window_start_s);
        }
    }
    if (!m->fallback) {
        m->window_s = m->window_end_s - m->window_start_s;
    }
}

/* "merged_from": one entry per input. */
static void
put_merged_from(struct merge *m, const char *mode)
{
    const char *count = main_count(mode);

    sbuf_adds(m->out, ",\"merged_from\":[");
    for (size_t i = 0; i < m->n; i++) {
        char sha[DIGEST_SHA256_HEX_BYTES];
        const struct jsonr_value *c = count ? jsonr_get(jsonr_get(m->docs[i], "results"), count) : NULL;
        digest_sha256_hex(m->in[i].text, m->in[i].len, sha);
        sbuf_adds(m->out, i ? ",{\"file\":" : "{\"file\":");
        sbuf_add_json(m->out, m->in[i].file);
        sbuf_printf(m->out, ",\"sha256\":\"%s\",\"mode\":", sha);
        sbuf_add_json(m->out, mode);
        if (m->fallback) {
            sbuf_adds(m->out, ",\"started_unix_s\":null");
        } else {
            sbuf_printf(m->out, ",\"started_unix_s\":%.6f", m->started_s[i]);
        }
        sbuf_printf(m->out, ",\"elapsed_s\":%.6f", m->elapsed_s[i]);
        if (count) {
            sbuf_printf(m->out, ",\"%s\":", count);
            if (c) {
                jsonr_print(m->out, c);
            } else {
                sbuf_adds(m->out, "null");
            }
        }
        sbuf_adds(m->out, "}");
    }
    sbuf_adds(m->out, "]");
}

int
merge_manifests(const struct merge_input *in, size_t n, struct sbuf *out, FILE *warn, char *err,
                size_t err_len)
{
    struct merge m = {.n = n, .in = in, .out = out, .err = err, .err_len = err_len};
    const char *tool = NULL, *mode = NULL;
    int rc = -1;

    if (!n || n > MERGE_INPUTS_MAX) {
        snprintf(err, err_len, "merge takes 1 to %d manifests", MERGE_INPUTS_MAX);
        return -1;
    }
    m.docs = calloc(n, sizeof *m.docs);
    m.started_s = calloc(n, sizeof *m.started_s);
    m.elapsed_s = calloc(n, sizeof *m.elapsed_s);
    m.offset_s = calloc(n, sizeof *m.offset_s);
    if (!m.docs || !m.started_s || !m.elapsed_s || !m.offset_s) {
        snprintf(err, err_len, "out of memory");
        goto cleanup;
    }
    for (size_t i = 0; i < n; i++) {
        char why[256];
        const char *t, *md;
        if (jsonr_parse(in[i].text, in[i].len, &m.docs[i], why, sizeof why)) {
            snprintf(err, err_len, "%s is not JSON: %s", in[i].file, why);
            goto cleanup;
        }
        t = jsonr_get_str(m.docs[i], "tool");
        md = jsonr_get_str(m.docs[i], "mode");
        if (t && !strcmp(t, "fleetsim") && !md && jsonr_get(m.docs[i], "devices")) {
            md = "report"; /* a shard's --report: its devices are joined, its counts added */
        } else if (!t || !md || !jsonr_get(m.docs[i], "results")) {
            snprintf(err, err_len,
                     "%s is not a fleetsim-stress manifest (no \"tool\", \"mode\" and \"results\") nor a "
                     "fleetsim report",
                     in[i].file);
            goto cleanup;
        }
        if (!tool) {
            tool = t;
            mode = md;
        } else if (strcmp(t, tool) || strcmp(md, mode)) {
            snprintf(err, err_len,
                     "%s is a manifest of %s %s, but %s is of %s %s: only runs of one tool and mode merge",
                     in[i].file, t, md, in[0].file, tool, mode);
            goto cleanup;
        }
    }
    merge_window(&m, strcmp(mode, "report") ? warn : NULL); /* a report is a state, not a run: no window */
    sbuf_adds(out, "{");
    put_members(&m, (const struct jsonr_value *const *)m.docs, MR_BY_TYPE);
    if (!m.failed) {
        put_merged_from(&m, mode);
        sbuf_adds(out, "}");
        if (out->failed) {
            snprintf(err, err_len, "out of memory");
        } else {
            rc = 0;
        }
    }

cleanup:
    for (size_t i = 0; m.docs && i < n; i++) {
        jsonr_free(m.docs[i]);
    }
    free(m.docs);
    free(m.started_s);
    free(m.elapsed_s);
    free(m.offset_s);
    return rc;
}

/* One summary line: "NAME: MODE, WINDOW, COUNT". */
static void
summary_line(const char *label, const struct jsonr_value *doc)
{
    const char *mode = jsonr_get_str(doc, "mode");
    const char *count = main_count(mode);
    const struct jsonr_value *results = jsonr_get(doc, "results");
    static const char *const lengths[] = {"elapsed_s", "run_s", "all_done_s"};
    const struct jsonr_value *devices = jsonr_get(doc, "devices");
    double started, length = 0;
    uint64_t c = 0;

    if (!mode && devices) { /* a fleetsim report: a state, no run */
        printf("%s: fleetsim report, %zu devices\n", label, devices->count);
        return;
    }
    printf("%s: %s", label, mode ? mode : "?");
    if (!doc_num(doc, "started_unix_s", &started)) {
        time_t t = (time_t)started;
        struct tm tm;
        char when[32];
        gmtime_r(&t, &tm);
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
        printf(", started %s.%03dZ", when, (int)((started - floor(started)) * 1000));
    } else {
        printf(", no window");
    }
    for (size_t k = 0; k < 3 && get_num(results, lengths[k], &length); k++) {
    }
    printf(", %.3f s", length);
    if (count && !jsonr_get_u64(results, count, &c)) {
        printf(", %s %" PRIu64, count, c);
    }
    printf("\n");
}

int
merge_run(const struct stress_options *o)
{
    struct merge_input *in = calloc((size_t)o->report_count, sizeof *in);
    char **texts = calloc((size_t)o->report_count, sizeof *texts);
    struct sbuf out = {0};
    struct jsonr_value *doc = NULL;
    char err[1024];
    int rc = 2;

    if (!in || !texts) {
        fprintf(stderr, "fleetsim-stress: merge: out of memory\n");
        goto cleanup;
    }
    for (int i = 0; i < o->report_count; i++) {
        in[i].file = o->report_inputs[i];
        if (!(texts[i] = run_read_file(in[i].file, &in[i].len))) {
            goto cleanup;
        }
        in[i].text = texts[i];
    }
    if (merge_inventory_format(in[0].text, in[0].len)) {
        if (merge_inventories(in, (size_t)o->report_count, &out, err, sizeof err)) {
            fprintf(stderr, "fleetsim-stress: merge: %s\n", err);
            goto cleanup;
        }
        if (merge_inventory_write(o->json_path, &out)) {
            fprintf(stderr, "fleetsim-stress: FAILED: cannot write %s: %m\n", o->json_path);
            rc = 1;
            goto cleanup;
        }
        printf("merged %d %s inventories: %s\n", o->report_count,
               merge_inventory_format(in[0].text, in[0].len), o->json_path);
        rc = 0;
        goto cleanup;
    }
    if (merge_manifests(in, (size_t)o->report_count, &out, stderr, err, sizeof err)) {
        fprintf(stderr, "fleetsim-stress: merge: %s\n", err);
        goto cleanup;
    }
    for (int i = 0; i < o->report_count; i++) {
        struct jsonr_value *one = NULL;
        if (!jsonr_parse(in[i].text, in[i].len, &one, err, sizeof err)) {
            summary_line(in[i].file, one);
        }
        jsonr_free(one);
    }
    if (jsonr_parse(out.buf, out.len, &doc, err, sizeof err)) {
        fprintf(stderr, "fleetsim-stress: merge: the merged manifest does not read back: %s\n", err);
        rc = 1;
        goto cleanup;
    }
    {
        char label[64];
        snprintf(label, sizeof label, "merged %d runs", o->report_count);
        summary_line(label, doc);
    }
    if (json_write_file(o->json_path, &out)) {
        fprintf(stderr, "fleetsim-stress: FAILED: cannot write %s: %m\n", o->json_path);
        rc = 1;
        goto cleanup;
    }
    printf("merged manifest: %s\n", o->json_path);
    rc = 0;

cleanup:
    for (int i = 0; texts && i < o->report_count; i++) {
        free(texts[i]);
    }
    free(texts);
    free(in);
    jsonr_free(doc);
    sbuf_free(&out);
    return rc;
}
