/*
 * The JSON reader; see json_read.h. A recursive descent over the text,
 * bounded by JSONR_MAX_DEPTH; the position of an error is computed from
 * its offset only when one occurs.
 */
#include "json_read.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct jparser {
    const char *text; /* the document */
    const char *p;    /* current position */
    const char *end;  /* past its last byte */
    char *err;        /* the caller's message buffer */
    size_t err_len;   /* its size */
    int failed;       /* 1 once an error was recorded (the first one is kept) */
};

__attribute__((format(printf, 2, 3))) static void
perr(struct jparser *j, const char *fmt, ...)
{
    unsigned line = 1;
    unsigned col = 1;
    char what[160];
    va_list ap;

    if (j->failed) {
        return;
    }
    j->failed = 1;
    for (const char *q = j->text; q < j->p && q < j->end; q++) {
        if (*q == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(j->err, j->err_len, "line %u column %u: %s", line, col, what);
}

static void
skip_ws(struct jparser *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) {
        j->p++;
    }
}

static int
hex4(const char *p, unsigned *out)
{
    unsigned v = 0;

    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') {
            v |= (unsigned)(c - '0');
        } else if (c >= 'a' && c <= 'f') {
            v |= (unsigned)(c - 'a' + 10);
        } else if (c >= 'A' && c <= 'F') {
            v |= (unsigned)(c - 'A' + 10);
        } else {
            return -1;
        }
    }
    *out = v;
    return 0;
}

static size_t
utf8_put(char *out, unsigned cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* A string at j->p ('"'); @return its decoded text (malloc'd) or NULL on error. */
static char *
parse_string(struct jparser *j)
{
    const char *start = ++j->p;
    const char *q = start;
    char *out;
    size_t n = 0;

    /* Decoded text is never longer than the escaped one. */
    while (q < j->end && *q != '"') {
        q += *q == '\\' && q + 1 < j->end ? 2 : 1;
    }
    if (q >= j->end) {
        perr(j, "unterminated string");
        return NULL;
    }
    out = malloc((size_t)(q - start) + 1);
    if (!out) {
        perr(j, "out of memory");
        return NULL;
    }
    while (j->p < q) {
        unsigned char c = (unsigned char)*j->p;
        if (c < 0x20) {
            perr(j, "control character in a string");
            goto fail;
        }
        if (c != '\\') {
            out[n++] = (char)c;
            j->p++;
            continue;
        }
        j->p++;
        switch (*j->p) {
        case '"':
        case '\\':
        case '/':
            out[n++] = *j->p;
            break;
        case 'b':
            out[n++] = '\b';
            break;
        case 'f':
            out[n++] = '\f';
            break;
        case 'n':
            out[n++] = '\n';
            break;
        case 'r':
            out[n++] = '\r';
            break;
        case 't':
            out[n++] = '\t';
            break;
        case 'u': {
            unsigned cp;
            unsigned lo;
            if (q - j->p < 5 || hex4(j->p + 1, &cp)) {
                perr(j, "bad \\u escape");
                goto fail;
            }
            j->p += 4;
            /* A high surrogate followed by a low one is one code point; a lone one is refused. */
            if (cp >= 0xd800 && cp <= 0xdbff && q - j->p >= 7 && j->p[1] == '\\' && j->p[2] == 'u' &&
                !hex4(j->p + 3, &lo) && lo >= 0xdc00 && lo <= 0xdfff) {
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                j->p += 6;
            } else if (cp >= 0xd800 && cp <= 0xdfff) {
                perr(j, "lone surrogate in a \\u escape");
                goto fail;
            }
            n += utf8_put(out + n, cp);
            break;
        }
        default:
            perr(j, "bad escape \\%c", *j->p);
            goto fail;
        }
        j->p++;
    }
    j->p = q + 1;
    out[n] = '\0';
    return out;

fail:
    free(out);
    return NULL;
}

static int
parse_number(struct jparser *j, struct jsonr_value *v)
{
    const char *s = j->p;
    const char *q = s;
    int integer = 1;
    char buf[64];
    size_t len;

    if (q < j->end && *q == '-') {
        q++;
        integer = 0;
    }
    if (q >= j->end || *q < '0' || *q > '9') {
        perr(j, "bad number");
        return -1;
    }
    if (*q == '0') {
        q++;
    } else {
        while (q < j->end && *q >= '0' && *q <= '9') {
            q++;
        }
    }
    if (q < j->end && *q == '.') {
        integer = 0;
        q++;
        if (q >= j->end || *q < '0' || *q > '9') {
            perr(j, "bad number: digits must follow '.'");
            return -1;
        }
        while (q < j->end && *q >= '0' && *q <= '9') {
            q++;
        }
    }
    if (q < j->end && (*q == 'e' || *q == 'E')) {
        integer = 0;
        q++;
        if (q < j->end && (*q == '+' || *q == '-')) {
            q++;
        }
        if (q >= j->end || *q < '0' || *q > '9') {
            perr(j, "bad number: digits must follow the exponent");
            return -1;
        }
        while (q < j->end && *q >= '0' && *q <= '9') {
            q++;
        }
    }
    len = (size_t)(q - s);
    if (len >= sizeof buf) {
        perr(j, "number too long");
        return -1;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    v->type = JSONR_NUMBER;
    v->num = strtod(buf, NULL);
    if (integer) {
        errno = 0;
        v->u64 = strtoull(buf, NULL, 10);
        v->is_u64 = errno == 0;
    }
    j->p = q;
    return 0;
}

static int
literal(struct jparser *j, const char *word)
{
    size_t n = strlen(word);

    if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n)) {
        perr(j, "unexpected character '%c'", *j->p);
        return -1;
    }
    j->p += n;
    return 0;
}

static struct jsonr_value *parse_value(struct jparser *j, int depth);

/* Elements or members up to the closing bracket, appended to @p v. */
static int
parse_container(struct jparser *j, struct jsonr_value *v, int depth)
{
    int object = v->type == JSONR_OBJECT;
    char closer = object ? '}' : ']';
    struct jsonr_value **tail = &v->child;

    if (depth >= JSONR_MAX_DEPTH) {
        perr(j, "nested deeper than %d", JSONR_MAX_DEPTH);
        return -1;
    }
    j->p++;
    skip_ws(j);
    if (j->p < j->end && *j->p == closer) {
        j->p++;
        return 0;
    }
    for (;;) {
        char *key = NULL;
        struct jsonr_value *item;

        skip_ws(j);
        if (object) {
            if (j->p >= j->end || *j->p != '"') {
                perr(j, j->p >= j->end ? "unexpected end inside an object" : "expected a member name");
                return -1;
            }
            if (!(key = parse_string(j))) {
                return -1;
            }
            skip_ws(j);
            if (j->p >= j->end || *j->p != ':') {
                free(key);
                perr(j, "expected ':'");
                return -1;
            }
            j->p++;
        }
        item = parse_value(j, depth + 1);
        if (!item) {
            free(key);
            return -1;
        }
        item->key = key;
        *tail = item;
        tail = &item->next;
        v->count++;
        skip_ws(j);
        if (j->p >= j->end) {
            perr(j, "unexpected end: missing '%c'", closer);
            return -1;
        }
        if (*j->p == closer) {
            j->p++;
            return 0;
        }
        if (*j->p != ',') {
            perr(j, "expected ',' or '%c'", closer);
            return -1;
        }
        j->p++;
    }
}

static struct jsonr_value *
parse_value(struct jparser *j, int depth)
{
    struct jsonr_value *v;
    int rc = 0;

    skip_ws(j);
    if (j->p >= j->end) {
        perr(j, "unexpected end: expected a value");
        return NULL;
    }
    v = calloc(1, sizeof *v);
    if (!v) {
        perr(j, "out of memory");
        return NULL;
    }
    switch (*j->p) {
    case '{':
        v->type = JSONR_OBJECT;
        rc = parse_container(j, v, depth);
        break;
    case '[':
        v->type = JSONR_ARRAY;
        rc = parse_container(j, v, depth);
        break;
    case '"':
        v->type = JSONR_STRING;
        v->str = parse_string(j);
        rc = v->str ? 0 : -1;
        break;
    case 't':
        v->type = JSONR_BOOL;
        v->boolean = 1;
        rc = literal(j, "true");
        break;
    case 'f':
        v->type = JSONR_BOOL;
        rc = literal(j, "false");
        break;
    case 'n':
        rc = literal(j, "null");
        break;
    default:
        if (*j->p == '-' || (*j->p >= '0' && *j->p <= '9')) {
            rc = parse_number(j, v);
        } else {
            perr(j, "unexpected character '%c'", *j->p);
            rc = -1;
        }
        break;
    }
    if (rc) {
        jsonr_free(v);
        return NULL;
    }
    return v;
}

int
jsonr_parse(const char *text, size_t len, struct jsonr_value **out, char *err, size_t err_len)
{
    struct jparser j = {.text = text, .p = text, .end = text + len, .err = err, .err_len = err_len};
    struct jsonr_value *v = NULL;

    *out = NULL;
    if (len > JSONR_MAX_BYTES) {
        snprintf(err, err_len, "larger than %u bytes", JSONR_MAX_BYTES);
        return -1;
    }
    v = parse_value(&j, 0);
    if (!v) {
        return -1;
    }
    skip_ws(&j);
    if (j.p < j.end) {
        perr(&j, "unexpected text after the document");
        jsonr_free(v);
        return -1;
    }
    *out = v;
    return 0;
}

void
jsonr_free(struct jsonr_value *v)
{
    /* Siblings iteratively, children recursively: depth is bounded, array length is not. */
    while (v) {
        struct jsonr_value *next = v->next;
        jsonr_free(v->child);
        free(v->key);
        free(v->str);
        free(v);
        v = next;
    }
}

const struct jsonr_value *
jsonr_get(const struct jsonr_value *obj, const char *key)
{
    if (!obj || obj->type != JSONR_OBJECT) {
        return NULL;
    }
    for (const struct jsonr_value *m = obj->child; m; m = m->next) {
        if (!strcmp(m->key, key)) {
            return m;
        }
    }
    return NULL;
}

int
jsonr_get_u64(const struct jsonr_value *obj, const char *key, uint64_t *out)
{
    const struct jsonr_value *m = jsonr_get(obj, key);

    if (!m || m->type != JSONR_NUMBER || !m->is_u64) {
        return -1;
    }
    *out = m->u64;
    return 0;
}

const char *
jsonr_get_str(const struct jsonr_value *obj, const char *key)
{
    const struct jsonr_value *m = jsonr_get(obj, key);

    return m && m->type == JSONR_STRING ? m->str : NULL;
}

void
jsonr_print_number(struct sbuf *b, double num)
{
    char text[40];

    /* The shortest text that reads back as the same double, and a fraction kept as one: "2.0" stays a
     * number that is not an integer (is_u64) when it is read again. */
    snprintf(text, sizeof text, "%.15g", num);
    if (strtod(text, NULL) != num) {
        snprintf(text, sizeof text, "%.17g", num);
    }
    sbuf_adds(b, text);
    if (!strpbrk(text, ".eEni")) {
        sbuf_adds(b, ".0");
    }
}

void
jsonr_print(struct sbuf *b, const struct jsonr_value *v)
{
    switch (v->type) {
    case JSONR_NULL:
        sbuf_adds(b, "null");
        break;
    case JSONR_BOOL:
        sbuf_adds(b, v->boolean ? "true" : "false");
        break;
    case JSONR_NUMBER:
        if (v->is_u64) {
            sbuf_printf(b, "%" PRIu64, v->u64);
        } else {
            jsonr_print_number(b, v->num);
        }
        break;
    case JSONR_STRING:
        sbuf_add_json(b, v->str);
        break;
    case JSONR_ARRAY:
    case JSONR_OBJECT:
        sbuf_adds(b, v->type == JSONR_ARRAY ? "[" : "{");
        for (const struct jsonr_value *m = v->child; m; m = m->next) {
            if (m != v->child) {
                sbuf_adds(b, ",");
            }
            if (v->type == JSONR_OBJECT) {
                sbuf_add_json(b, m->key);
                sbuf_adds(b, ":");
            }
            jsonr_print(b, m);
        }
        sbuf_adds(b, v->type == JSONR_ARRAY ? "]" : "}");
        break;
    }
}
