/*
 * A growing byte buffer for building replies and requests. Appends never
 * fail silently: on allocation failure the buffer is marked failed and every
 * later append is a no-op, so a builder checks once at the end.
 */
#ifndef FLEET_SBUF_H
#define FLEET_SBUF_H

#include <stddef.h>

struct sbuf {
    char *buf;  /* NUL-terminated content, NULL until the first append */
    size_t len; /* bytes of content */
    size_t cap; /* allocated bytes */
    int failed; /* 1 after an allocation failed; content is then incomplete */
};

/** @brief Append @p n bytes. */
void sbuf_add(struct sbuf *b, const char *s, size_t n);

/** @brief Append a NUL-terminated string. */
void sbuf_adds(struct sbuf *b, const char *s);

/** @brief Append formatted text. */
void sbuf_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** @brief Append @p s XML-escaped (&, <, >, ", '). */
void sbuf_add_xml(struct sbuf *b, const char *s);

/* Append @p s as a JSON string: quoted, with quotes, backslashes and control characters escaped (NULL: "").
 */
void sbuf_add_json(struct sbuf *b, const char *s);

/** @brief Make sure @p extra more bytes fit without another allocation. */
void sbuf_reserve(struct sbuf *b, size_t extra);

/** @brief Take the content (caller frees); the buffer becomes empty. NULL if failed. */
char *sbuf_take(struct sbuf *b, size_t *len);

/** @brief Free the content. Accepts a zeroed buffer. */
void sbuf_free(struct sbuf *b);

#endif
