/*
 * The live page of a running fleet on the --metrics server: GET / (an HTML
 * page with Chart.js inlined, built once at start) and GET /live.json (the
 * same data for scripts: the latest totals, devices by group and state, and
 * the per-second samples of the last 15 minutes). A sampler thread gathers
 * the fleet's totals once a second into a rate_ring; a request only formats
 * what the ring holds, so its cost does not grow with the fleet.
 */
#ifndef FLEET_LIVE_H
#define FLEET_LIVE_H

#include <microhttpd.h>

struct fleet;
struct live;

/* Milliseconds between two samples. */
#define LIVE_SAMPLE_INTERVAL_MS 1000

/**
 * @brief Take a first sample, start the once-a-second sampler and build the page (Chart.js read with
 * chartjs_load(); when it cannot be read the page answers 503 saying why, and a warning is logged).
 * Call after fleet_start().
 * @return The live state, or NULL (out of memory, no thread).
 */
struct live *live_start(struct fleet *fleet);

/** @brief Stop the sampler and free everything; call before fleet_stop(). Accepts NULL. */
void live_free(struct live *lv);

/**
 * @brief Answer GET / (the page) or GET /live.json[?since=SEQ] (the data). Call on the HTTP thread only.
 * @return MHD's result, or MHD_NO without queueing anything when @p url is neither (*handled is 0 then).
 */
enum MHD_Result live_handle(struct live *lv, struct MHD_Connection *conn, const char *url, int *handled);

/** @return The page's text (for tests), or NULL when Chart.js could not be read. */
const char *live_page_text(const struct live *lv);

/**
 * @brief Build the page: the HTML and its script around Chart.js's text.
 * @param[out] len Its length.
 * @return The page (malloc'd), or NULL with a message in @p err.
 */
char *live_page_build(size_t *len, char *err, size_t err_len);

#endif
