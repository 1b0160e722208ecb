/*
 * Output queue; see outq.h. A segment is freed as soon as it is written,
 * and the queue holds nothing once it drains.
 *
 * Copies go into the newest copy segment while it has room, else into a new
 * one of at least OUTQ_MIN_BYTES: a reply interleaved with references costs
 * a few small segments, and a multi-megabyte copy one exact allocation (the
 * old single buffer realloc'd and moved its whole content to grow).
 */
#include "outq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* Smallest copy segment; replies and requests are usually smaller. */
#define OUTQ_MIN_BYTES 4096
/* References to spans up to this long are copied: a segment of its own would cost more than the copy. */
#define OUTQ_REF_COPY_MAX_BYTES 512
/* Segments handed to one sendmsg(); well below IOV_MAX (1024 on Linux). */
#define OUTQ_IOV_MAX 64

struct outq_seg {
    struct outq_seg *next; /* the next younger segment, NULL for the tail */
    const char *data;      /* the bytes: own for a copy, the caller's for a reference */
    size_t len;            /* bytes in data */
    size_t cap;            /* bytes own can hold; 0 for a reference */
    char own[];            /* a copy's bytes */
};

static void
append(struct outq *q, struct outq_seg *seg)
{
    seg->next = NULL;
    if (q->head) {
        q->tail->next = seg;
    } else {
        q->head = seg;
        q->off = 0;
    }
    q->tail = seg;
}

int
outq_reserve(struct outq *q, size_t n)
{
    struct outq_seg *seg;
    size_t cap = n > OUTQ_MIN_BYTES ? n : OUTQ_MIN_BYTES;

    if (q->head && q->tail->cap >= q->tail->len && n <= q->tail->cap - q->tail->len) {
        return 0; /* a reference has cap 0 and len > 0: only a copy segment can have room */
    }
    if (cap > (size_t)-1 - sizeof *seg || !(seg = malloc(sizeof *seg + cap))) {
        return -1;
    }
    seg->data = seg->own;
    seg->len = 0;
    seg->cap = cap;
    append(q, seg);
    return 0;
}

int
outq_add(struct outq *q, const void *bytes, size_t n)
{
    if (!n) {
        return 0;
    }
    if (outq_reserve(q, n)) {
        return -1;
    }
    memcpy(q->tail->own + q->tail->len, bytes, n);
    q->tail->len += n;
    q->pending += n;
    return 0;
}

int
outq_add_ref(struct outq *q, const void *bytes, size_t n)
{
    struct outq_seg *seg;

    if (n <= OUTQ_REF_COPY_MAX_BYTES) {
        return outq_add(q, bytes, n);
    }
    if (!(seg = malloc(sizeof *seg))) {
        return -1;
    }
    seg->data = bytes;
    seg->len = n;
    seg->cap = 0;
    append(q, seg);
    q->pending += n;
    return 0;
}

size_t
outq_peek(const struct outq *q, const char **data)
{
    const struct outq_seg *seg = q->head;
    size_t off = q->off;

    while (seg && seg->len == off) {
        seg = seg->next; /* room reserved and not used, before a reference */
        off = 0;
    }
    if (!seg) {
        *data = NULL;
        return 0;
    }
    *data = seg->data + off;
    return seg->len - off;
}

void
outq_consume(struct outq *q, size_t n)
{
    q->pending -= n < q->pending ? n : q->pending;
    while (q->head && n) {
        struct outq_seg *seg = q->head;
        size_t left = seg->len - q->off;
        if (n < left) {
            q->off += n;
            return;
        }
        n -= left;
        q->head = seg->next;
        q->off = 0;
        free(seg);
    }
    /* Segments that only ever reserved room (nothing written into them) go too once the rest drained. */
    if (!q->pending) {
        outq_free(q);
    }
}

enum outq_status
outq_write(struct outq *q, int fd)
{
    while (q->pending) {
        struct iovec iov[OUTQ_IOV_MAX];
        struct msghdr mh = {.msg_iov = iov};
        size_t off = q->off;
        ssize_t n;

        for (const struct outq_seg *seg = q->head; seg && mh.msg_iovlen < OUTQ_IOV_MAX; seg = seg->next) {
            if (seg->len > off) {
                iov[mh.msg_iovlen].iov_base = (void *)(seg->data + off);
                iov[mh.msg_iovlen].iov_len = seg->len - off;
                mh.msg_iovlen++;
            }
            off = 0;
        }
        n = sendmsg(fd, &mh, MSG_NOSIGNAL);
        if (n > 0) {
            outq_consume(q, (size_t)n);
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
    return q->pending;
}

void
outq_free(struct outq *q)
{
    while (q->head) {
        struct outq_seg *seg = q->head;
        q->head = seg->next;
        free(seg);
    }
    memset(q, 0, sizeof *q);
}
