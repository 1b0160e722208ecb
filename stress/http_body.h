/*
 * What libcurl answers, kept up to a bound, for the modes that read a
 * server's answer whole (controller-mount's topology, the fleet's events):
 * one write callback and one progress callback that ends a transfer when
 * SIGINT or SIGTERM came (run_util.c).
 */
#ifndef STRESS_HTTP_BODY_H
#define STRESS_HTTP_BODY_H

#include <curl/curl.h>
#include <stddef.h>

#include "sbuf.h"

/* An answer being received. */
struct http_body {
    struct sbuf buf; /* the answer so far */
    size_t max;      /* most bytes kept; a larger answer ends the transfer */
    int too_large;   /* 1 when the answer passed max (the transfer ended with CURLE_WRITE_ERROR) */
};

/** @brief CURLOPT_WRITEFUNCTION with CURLOPT_WRITEDATA a struct http_body. */
size_t http_body_write(char *data, size_t size, size_t n, void *body);

/** @brief CURLOPT_XFERINFOFUNCTION: 1 (abort) once the run was interrupted. */
int http_abort_on_signal(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                         curl_off_t ulnow);

/** @brief Empty @p b for the next answer (its buffer is kept unless it failed). */
void http_body_reset(struct http_body *b);

/** @return The answer as text ("" when none). */
static inline const char *
http_body_text(const struct http_body *b)
{
    return b->buf.buf ? b->buf.buf : "";
}

#endif
