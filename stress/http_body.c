/*
 * libcurl's answer, bounded; see http_body.h.
 */
#include "http_body.h"

#include "run.h"

size_t
http_body_write(char *data, size_t size, size_t n, void *body)
{
    struct http_body *b = body;
    size_t len = size * n;

    if (b->buf.len + len > b->max) {
        b->too_large = 1;
        return 0; /* libcurl ends the transfer with CURLE_WRITE_ERROR */
    }
    sbuf_add(&b->buf, data, len);
    return b->buf.failed ? 0 : len;
}

int
http_abort_on_signal(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    (void)user;
    (void)dltotal;
    (void)dlnow;
    (void)ultotal;
    (void)ulnow;
    return run_interrupted() ? 1 : 0;
}

void
http_body_reset(struct http_body *b)
{
    if (b->buf.failed) {
        sbuf_free(&b->buf);
    }
    b->buf.len = 0;
    b->too_large = 0;
}
