/*
 * Unit tests of fleetsim-stress merge's rules (stress/merge.c) on small
 * manifests written here the way the modes write theirs: counts added,
 * histograms added and percentiles recomputed as from one run with all the
 * samples, per-second counts aligned by start, parameters that differ
 * listed, and manifests of different modes or bucket layouts refused.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json_read.h"
#include "merge.h"
#include "stats.h"

/* One edit manifest of the latencies @p us (@p n of them), started at @p start_s, per-second ok @p ok. */
static char *
edit_manifest(const char *mode, unsigned port, const uint32_t *us, size_t n, double start_s, double end_s,
              const char *ok, const char *more)
{
    struct latency l = {0};
    struct sbuf b = {0};
    static const double pcts[] = {50, 90, 99, 100};
    static const char *const names[] = {"p50", "p90", "p99", "max"};

    for (size_t i = 0; i < n; i++) {
        assert_int_equal(latency_add(&l, us[i]), 0);
    }
    latency_sort(&l);
    sbuf_printf(
        &b,
        "{\"tool\":\"fleetsim-stress\",\"mode\":\"%s\",\"parameters\":{\"ip\":\"127.0.0.1\",\"port\":%u,"
        "\"edits\":100},\"results\":{\"complete\":true,\"interrupted\":null,\"requests_per_second\":1.0,"
        "\"elapsed_s\":%.6f,\"edits_sent\":%zu,\"edits_answered\":%zu,\"errors_by_tag\":{\"in-use\":%zu},"
        "\"client_cpu_s\":0.5,\"client_cpu_us_per_edit\":1.0,\"latency_us\":{",
        mode, port, end_s - start_s, n, n, n % 3);
    for (size_t i = 0; i < 4; i++) {
        sbuf_printf(&b, "%s\"%s\":", i ? "," : "", names[i]);
        latency_json(&b, &l, pcts[i], 1, 0);
    }
    sbuf_adds(&b, "},");
    latency_histogram_json(&b, "latency_histogram", &l);
    sbuf_printf(
        &b, "%s},\"per_second\":{\"bucket_s\":1,\"ok\":%s},\"started_unix_s\":%.6f,\"ended_unix_s\":%.6f}",
        more ? more : "", ok, start_s, end_s);
    latency_free(&l);
    assert_false(b.failed);
    return b.buf;
}

/* Merge the texts; @return the parsed result (NULL when refused, with @p err set). */
static struct jsonr_value *
merge_texts(char **texts, size_t n, char *err, size_t err_len)
{
    struct merge_input in[4];
    struct sbuf out = {0};
    struct jsonr_value *doc = NULL;
    char perr[256];

    for (size_t i = 0; i < n; i++) {
        in[i] =
            (struct merge_input){.file = i ? "b.json" : "a.json", .text = texts[i], .len = strlen(texts[i])};
    }
    if (merge_manifests(in, n, &out, NULL, err, err_len)) {
        sbuf_free(&out);
        return NULL;
    }
    if (jsonr_parse(out.buf, out.len, &doc, perr, sizeof perr)) {
        fail_msg("merged manifest is not JSON: %s\n%s", perr, out.buf);
    }
    sbuf_free(&out);
    return doc;
}

static uint64_t
u64_at(const struct jsonr_value *obj, const char *key)
{
    uint64_t v = 0;

    if (jsonr_get_u64(obj, key, &v)) {
        fail_msg("\"%s\" is not a whole number", key);
    }
    return v;
}

static void
test_counts_added_histogram_added_percentiles_as_one_run(void **state)
{
    uint32_t a[200], b[300], all[500];
    struct latency one = {0};
    struct sbuf want = {0}, got = {0};
    char *texts[2];
    char err[256];
    struct jsonr_value *doc;
    const struct jsonr_value *r, *lat;
    uint64_t counts[STATS_HIST_BUCKETS] = {0};
    size_t used = 0;

    (void)state;
    for (size_t i = 0; i < 200; i++) {
        a[i] = all[i] = (uint32_t)(50 + i * 7 % 400);
    }
    for (size_t i = 0; i < 300; i++) {
        b[i] = all[200 + i] = (uint32_t)(900 + i * 13 % 5000);
    }
    texts[0] = edit_manifest("edit", 830, a, 200, 1000.0, 1002.0, "[100,100]", NULL);
    texts[1] = edit_manifest("edit", 900, b, 300, 1000.3, 1003.5, "[10,20,30]", NULL);
    doc = merge_texts(texts, 2, err, sizeof err);
    assert_non_null(doc);
    r = jsonr_get(doc, "results");
    assert_int_equal(u64_at(r, "edits_sent"), 500);
    assert_int_equal(u64_at(r, "edits_answered"), 500);
    assert_int_equal(u64_at(jsonr_get(r, "errors_by_tag"), "in-use"), 200 % 3 + 300 % 3);

    /* The merged histogram is the histogram of all 500 samples, text for text. */
    for (size_t i = 0; i < 500; i++) {
        assert_int_equal(latency_add(&one, all[i]), 0);
        counts[stats_hist_bucket(all[i])]++;
        used = stats_hist_bucket(all[i]) + 1 > used ? stats_hist_bucket(all[i]) + 1 : used;
    }
    latency_sort(&one);
    latency_histogram_json(&want, "latency_histogram", &one);
    sbuf_adds(&got, "\"latency_histogram\":");
    jsonr_print(&got, jsonr_get(r, "latency_histogram"));
    assert_string_equal(got.buf, want.buf);

    /* Percentiles: the histogram's of all samples; max exact; each within one bucket of the exact value. */
    lat = jsonr_get(r, "latency_us");
    assert_int_equal(u64_at(lat, "max"), latency_percentile(&one, 100));
    {
        static const char *const names[] = {"p50", "p90", "p99"};
        static const double pcts[] = {50, 90, 99};
        for (size_t i = 0; i < 3; i++) {
            uint64_t v = u64_at(lat, names[i]);
            uint64_t exact = latency_percentile(&one, pcts[i]);
            uint64_t from_hist = stats_hist_percentile(counts, used, pcts[i]);
            uint64_t max = latency_percentile(&one, 100);
            /* the bucket's top, unless the exact max is below it */
            assert_int_equal(v, from_hist < max ? from_hist : max);
            assert_true(v >= exact);
            assert_int_equal(stats_hist_bucket(v), stats_hist_bucket(exact));
        }
    }
    /* Window [1000, 1003.5]; rate and CPU per edit recomputed from the sums. */
    {
        double v;
        const struct jsonr_value *e = jsonr_get(r, "elapsed_s");
        assert_non_null(e);
        v = e->num;
        assert_true(v > 3.499 && v < 3.501);
        assert_true(fabs(jsonr_get(r, "requests_per_second")->num - 500 / 3.5) < 0.01);
        assert_true(fabs(jsonr_get(r, "client_cpu_s")->num - 1.0) < 1e-9);
        assert_true(fabs(jsonr_get(r, "client_cpu_us_per_edit")->num - 1e6 / 500) < 0.01);
        assert_true(fabs(jsonr_get(doc, "started_unix_s")->num - 1000.0) < 1e-6);
        assert_true(fabs(jsonr_get(doc, "ended_unix_s")->num - 1003.5) < 1e-6);
    }
    assert_true(jsonr_get(r, "complete")->boolean);
    assert_int_equal(jsonr_get(doc, "merged_from")->count, 2);
    assert_string_equal(jsonr_get_str(jsonr_get(doc, "merged_from")->child, "file"), "a.json");
    jsonr_free(doc);
    latency_free(&one);
    sbuf_free(&want);
    sbuf_free(&got);
    free(texts[0]);
    free(texts[1]);
}

/* b started 2.4 s after a: its second 0 is a's second 2; arrays padded to the longest. */
static void
test_per_second_series_align_by_start(void **state)
{
    uint32_t one = 100;
    char *texts[2];
    char err[256];
    struct jsonr_value *doc;
    struct sbuf got = {0};

    (void)state;
    texts[0] = edit_manifest("edit", 1, &one, 1, 50.0, 53.0, "[1,2,3]", NULL);
    texts[1] = edit_manifest("edit", 1, &one, 1, 52.4, 54.0, "[10,20]", NULL);
    doc = merge_texts(texts, 2, err, sizeof err);
    assert_non_null(doc);
    jsonr_print(&got, jsonr_get(jsonr_get(doc, "per_second"), "ok"));
    assert_string_equal(got.buf, "[1,2,13,20]");
    /* The same parameters are kept as they are. */
    assert_int_equal(u64_at(jsonr_get(doc, "parameters"), "port"), 1);
    jsonr_free(doc);
    sbuf_free(&got);
    free(texts[0]);
    free(texts[1]);
}

static void
test_differing_parameters_become_lists_in_input_order(void **state)
{
    uint32_t one = 100;
    char *texts[2];
    char err[256];
    struct jsonr_value *doc;
    struct sbuf got = {0};

    (void)state;
    texts[0] = edit_manifest("edit", 830, &one, 1, 1.0, 2.0, "[1]", NULL);
    texts[1] = edit_manifest("edit", 17830, &one, 1, 1.0, 2.0, "[1]", NULL);
    doc = merge_texts(texts, 2, err, sizeof err);
    assert_non_null(doc);
    jsonr_print(&got, jsonr_get(doc, "parameters"));
    assert_string_equal(got.buf, "{\"ip\":\"127.0.0.1\",\"port\":[830,17830],\"edits\":100}");
    jsonr_free(doc);
    sbuf_free(&got);
    free(texts[0]);
    free(texts[1]);
}

static void
test_different_modes_are_refused_naming_the_file(void **state)
{
    uint32_t one = 100;
    char *texts[2];
    char err[256] = "";

    (void)state;
    texts[0] = edit_manifest("edit", 1, &one, 1, 1.0, 2.0, "[1]", NULL);
    texts[1] = edit_manifest("mount", 1, &one, 1, 1.0, 2.0, "[1]", NULL);
    assert_null(merge_texts(texts, 2, err, sizeof err));
    assert_string_equal(err,
                        "b.json is a manifest of fleetsim-stress mount, but a.json is of fleetsim-stress "
                        "edit: only runs of one tool and mode merge");
    free(texts[0]);
    free(texts[1]);
}

static void
test_another_bucket_layout_is_refused(void **state)
{
    uint32_t one = 100;
    char *texts[2];
    char err[256] = "";

    (void)state;
    texts[0] = edit_manifest("edit", 1, &one, 1, 1.0, 2.0, "[1]", NULL);
    texts[1] = edit_manifest("edit", 1, &one, 1, 1.0, 2.0, "[1]",
                             ",\"time_to_hello_histogram\":{\"unit\":\"us\",\"buckets_per_decade\":20,"
                             "\"first_upper\":1,\"counts\":[1]}");
    {
        /* the first one has the member too, in the usual layout */
        char *grown = malloc(strlen(texts[0]) + 200);
        char *cut = strstr(texts[0], "},\"per_second\"");
        assert_non_null(grown);
        assert_non_null(cut);
        sprintf(grown,
                "%.*s,\"time_to_hello_histogram\":{\"unit\":\"us\",\"buckets_per_decade\":10,"
                "\"first_upper\":1,\"counts\":[1]}%s",
                (int)(cut - texts[0]), texts[0], cut);
        free(texts[0]);
        texts[0] = grown;
    }
    assert_null(merge_texts(texts, 2, err, sizeof err));
    assert_string_equal(err, "b.json: \"time_to_hello_histogram\" has another bucket layout (this merge adds "
                             "unit \"us\", 10 buckets per decade from 1, at most 100 buckets)");
    free(texts[0]);
    free(texts[1]);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_added_histogram_added_percentiles_as_one_run),
        cmocka_unit_test(test_per_second_series_align_by_start),
        cmocka_unit_test(test_differing_parameters_become_lists_in_input_order),
        cmocka_unit_test(test_different_modes_are_refused_naming_the_file),
        cmocka_unit_test(test_another_bucket_layout_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
