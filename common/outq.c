/*
 * Output queue; see outq.h. Geometric growth, and the memory is given back
 * as soon as the queue drains.
 */
#include "outq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* First allocation; replies and requests are usually smaller. */
#define OUTQ_MIN_BYTES 4096

int
outq_reserve(struct outq *q, size_t n)
{
    size_t cap;
    char *grown;

    if (q->len + n <= q->cap) {
        return 0;
    }
    cap = q->cap ? q->cap : OUTQ_MIN_BYTES;
    while (cap < q->len + n) {
        cap *= 2;
    }
    grown = realloc(q->buf, cap);
    if (!grown) {
        return -1;
    }
    q->buf = grown;
    q->cap = cap;
    return 0;
}

int
outq_add(struct outq *q, const void *bytes, size_t n)
{
    if (outq_reserve(q, n)) {
        return -1;
    }
    memcpy(q->buf + q->len, bytes, n);
    q->len += n;
    return 0;
}

enum outq_status
outq_write(struct outq *q, int fd)
{
    while (q->off < q->len) {
        ssize_t n = send(fd, q->buf + q->off, q->len - q->off, MSG_NOSIGNAL);
        if (n > 0) {
            q->off += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && errno == EAGAIN) {
            return OUTQ_AGAIN;
        } else {
            if (n == 0) {
                errno = EPIPE;
            }
            return OUTQ_ERROR;
        }
    }
    outq_free(q);
    return OUTQ_EMPTY;
}

size_t
outq_pending(const struct outq *q)
{
    return q->len - q->off;
}

void
outq_free(struct outq *q)
{
    free(q->buf);
    memset(q, 0, sizeof *q);
}

size_t
outq_peek(const struct outq *q, const char **data)
{
    *data = q->buf ? q->buf + q->off : NULL;
    return q->len - q->off;
}

void
outq_consume(struct outq *q, size_t n)
{
    q->off += n;
    if (q->off >= q->len) {
        outq_free(q);
    }
}
