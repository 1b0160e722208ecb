/*
 * Growing buffer: geometric growth, one failure flag instead of a return
 * code on every append.
 */
#include "sbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
sbuf_reserve(struct sbuf *b, size_t extra)
{
    size_t need;
    size_t cap;
    char *p;

    if (b->failed) {
        return;
    }
    need = b->len + extra + 1;
    if (need <= b->cap) {
        return;
    }
    cap = b->cap ? b->cap : 256;
    while (cap < need) {
        cap *= 2;
    }
    p = realloc(b->buf, cap);
    if (!p) {
        b->failed = 1;
        return;
    }
    p[b->len] = '\0'; /* reserved room alone already reads as the (possibly empty) content */
    b->buf = p;
    b->cap = cap;
}

void
sbuf_add(struct sbuf *b, const char *s, size_t n)
{
    sbuf_reserve(b, n);
    if (b->failed) {
        return;
    }
    memcpy(b->buf + b->len, s, n);
    b->len += n;
    b->buf[b->len] = '\0';
}

void
sbuf_adds(struct sbuf *b, const char *s)
{
    sbuf_add(b, s, strlen(s));
}

void
sbuf_printf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
        return;
    }
    sbuf_reserve(b, (size_t)n);
    if (b->failed) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void
sbuf_add_json(struct sbuf *b, const char *s)
{
    sbuf_add(b, "\"", 1);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            sbuf_add(b, esc, 2);
        } else if (c < 0x20) {
            sbuf_printf(b, "\\u%04x", c);
        } else {
            sbuf_add(b, s, 1);
        }
    }
    sbuf_add(b, "\"", 1);
}

void
sbuf_add_xml(struct sbuf *b, const char *s)
{
    const char *run = s;

    for (; *s; s++) {
        const char *esc;
        switch (*s) {
        case '&':
            esc = "&amp;";
            break;
        case '<':
            esc = "&lt;";
            break;
        case '>':
            esc = "&gt;";
            break;
        case '"':
            esc = "&quot;";
            break;
        case '\'':
            esc = "&apos;";
            break;
        default:
            continue;
        }
        sbuf_add(b, run, (size_t)(s - run));
        sbuf_adds(b, esc);
        run = s + 1;
    }
    sbuf_add(b, run, (size_t)(s - run));
}

char *
sbuf_take(struct sbuf *b, size_t *len)
{
    char *out = b->failed ? NULL : b->buf;

    if (len) {
        *len = b->len;
    }
    if (!out) {
        free(b->buf);
    } else if (!b->buf) {
        out = calloc(1, 1);
    }
    memset(b, 0, sizeof *b);
    return out;
}

void
sbuf_free(struct sbuf *b)
{
    free(b->buf);
    memset(b, 0, sizeof *b);
}
