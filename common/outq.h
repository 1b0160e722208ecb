/*
 * Bytes waiting to be written to a non-blocking socket. A queue holds memory
 * only while something waits: an idle connection costs its struct only.
 * The NETCONF session (server side) and the stress client's connection
 * both queue through it.
 */
#ifndef FLEET_OUTQ_H
#define FLEET_OUTQ_H

#include <stddef.h>

struct outq {
    char *buf;  /* waiting bytes from buf + off to buf + len; NULL when empty */
    size_t len; /* bytes stored */
    size_t off; /* bytes of buf already written */
    size_t cap; /* allocated */
};

enum outq_status {
    OUTQ_EMPTY, /* everything was written; the buffer is released */
    OUTQ_AGAIN, /* the socket is full: wait until it is writable */
    OUTQ_ERROR, /* the connection failed; errno says why */
};

/** @brief Make room for @p n more bytes. @return 0, or -1 when memory ran out (nothing changes). */
int outq_reserve(struct outq *q, size_t n);

/** @brief Append @p n bytes. @return 0, or -1 when memory ran out (nothing is appended). */
int outq_add(struct outq *q, const void *bytes, size_t n);

/** @brief What waits, for a writer other than a socket (an SSH channel). @return Its length. */
size_t outq_peek(const struct outq *q, const char **data);

/** @brief @p n bytes of what outq_peek() showed were written. */
void outq_consume(struct outq *q, size_t n);

/** @brief Write what waits, until done or the socket is full (EINTR is retried). */
enum outq_status outq_write(struct outq *q, int fd);

/** @return Bytes waiting. */
size_t outq_pending(const struct outq *q);

/** @brief Drop everything. Accepts an empty queue. */
void outq_free(struct outq *q);

#endif
