/*
 * Bytes waiting to be written to a non-blocking socket. A queue holds memory
 * only while something waits: an idle connection costs its struct only.
 * The NETCONF session (server side) and the stress client's connection
 * both queue through it.
 *
 * What waits is a list of segments, oldest first: copies (outq_add(), which
 * fill the newest copy segment before starting another) and references to
 * bytes that are not the queue's (outq_add_ref()), such as a get-schema
 * reply body shared by every session of the fleet. A reference costs one
 * small segment instead of a copy of megabytes; outq_write() hands every
 * segment to one sendmsg().
 */
#ifndef FLEET_OUTQ_H
#define FLEET_OUTQ_H

#include <stddef.h>

struct outq_seg;

struct outq {
    struct outq_seg *head; /* oldest segment, NULL when empty */
    struct outq_seg *tail; /* newest segment; valid when head */
    size_t off;            /* bytes of head already written */
    size_t pending;        /* bytes waiting, over every segment */
};

enum outq_status {
    OUTQ_EMPTY, /* everything was written; the memory is released */
    OUTQ_AGAIN, /* the socket is full: wait until it is writable */
    OUTQ_ERROR, /* the connection failed; errno says why */
};

/** @brief Make room for @p n more copied bytes. @return 0, or -1 when memory ran out (nothing changes). */
int outq_reserve(struct outq *q, size_t n);

/** @brief Append a copy of @p n bytes. @return 0, or -1 when memory ran out (nothing is appended). */
int outq_add(struct outq *q, const void *bytes, size_t n);

/**
 * @brief Append @p n bytes by reference, without copying them (small spans are copied all the same).
 *
 * The bytes stay the caller's: they must neither change nor be freed until the queue has written them
 * or was freed. Meant for immutable data that outlives every queue (the schema set's reply bodies, built
 * at load and freed after every session). Several queues, on several threads, may hold the same bytes.
 * @return 0, or -1 when memory ran out (nothing is appended).
 */
int outq_add_ref(struct outq *q, const void *bytes, size_t n);

/**
 * @brief The oldest contiguous run of what waits, for a writer other than a socket (an SSH channel): call
 * again after outq_consume() for the next run.
 * @return Its length (0 when empty, *data NULL then).
 */
size_t outq_peek(const struct outq *q, const char **data);

/** @brief @p n bytes, at most what outq_peek() showed, were written. */
void outq_consume(struct outq *q, size_t n);

/** @brief Write what waits, until done or the socket is full (EINTR is retried). */
enum outq_status outq_write(struct outq *q, int fd);

/** @return Bytes waiting. */
size_t outq_pending(const struct outq *q);

/** @brief Drop everything. Accepts an empty queue. */
void outq_free(struct outq *q);

#endif
