/*
 * Fuzz harness of the JSON reader (stress/json_read.h) that fleetsim-stress
 * uses for the simulator's --report, notify's --json and controller answers.
 *
 * Input: a document (copied to a heap block of exactly its size, no NUL).
 * A parsed tree must be consistent (counts match the children, keys only
 * and always inside objects, strings present), the accessors must agree
 * with it, and the tree printed back as JSON must parse to an equal tree.
 * A refused document comes with "line L column C: ..." in the error text.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "json_read.h"

/* Longest input looked at. */
#define FZ_MAX_INPUT_BYTES 65536
/* Room for the reader's error text. */
#define FZ_ERR_BYTES 256

/* A growing output buffer. */
struct fz_out {
    char *buf;  /* the text */
    size_t len; /* bytes used */
    size_t cap; /* bytes allocated */
};

static void
fz_put(struct fz_out *o, const char *s, size_t n)
{
    if (o->len + n > o->cap) {
        size_t cap = (o->len + n) * 2 + 64;
        char *p = realloc(o->buf, cap);

        fz_require(p != NULL, "out of memory");
        o->buf = p;
        o->cap = cap;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

static void
fz_put_string(struct fz_out *o, const char *s)
{
    fz_put(o, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[8];

        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            fz_put(o, esc, 2);
        } else if (c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            fz_put(o, esc, 6);
        } else {
            fz_put(o, (const char *)&c, 1);
        }
    }
    fz_put(o, "\"", 1);
}

/* Print @p v as JSON. Numbers that are not finite print as 0.0 (and are not compared). */
static void
fz_print(struct fz_out *o, const struct jsonr_value *v)
{
    char num[64];
    int n;

    switch (v->type) {
    case JSONR_NULL:
        fz_put(o, "null", 4);
        break;
    case JSONR_BOOL:
        fz_put(o, v->boolean ? "true" : "false", v->boolean ? 4 : 5);
        break;
    case JSONR_NUMBER:
        if (v->is_u64) {
            n = snprintf(num, sizeof num, "%llu", (unsigned long long)v->u64);
        } else if (isfinite(v->num)) {
            /* Keep it a non-integer in the text too, or it would read back as a u64. */
            n = snprintf(num, sizeof num, "%.17g", v->num);
            if (!strpbrk(num, ".eEn")) {
                n += snprintf(num + n, sizeof num - (size_t)n, ".0");
            }
        } else {
            n = snprintf(num, sizeof num, "0.0");
        }
        fz_put(o, num, (size_t)n);
        break;
    case JSONR_STRING:
        fz_put_string(o, v->str);
        break;
    case JSONR_ARRAY:
    case JSONR_OBJECT:
        fz_put(o, v->type == JSONR_ARRAY ? "[" : "{", 1);
        for (const struct jsonr_value *c = v->child; c; c = c->next) {
            if (c != v->child) {
                fz_put(o, ",", 1);
            }
            if (v->type == JSONR_OBJECT) {
                fz_put_string(o, c->key);
                fz_put(o, ":", 1);
            }
            fz_print(o, c);
        }
        fz_put(o, v->type == JSONR_ARRAY ? "]" : "}", 1);
        break;
    }
}

/* Tree consistency and accessor agreement; @return the depth below @p v. */
static int
fz_check(const struct jsonr_value *v, int in_object)
{
    int depth = 0;
    size_t count = 0;

    fz_require(in_object ? v->key != NULL : v->key == NULL, "key where none belongs, or none where one does");
    fz_require(v->type != JSONR_STRING || v->str != NULL, "string without text");
    fz_require(v->type == JSONR_STRING || v->str == NULL, "text on a non-string");
    fz_require(v->type == JSONR_NUMBER || !v->is_u64, "u64 on a non-number");
    fz_require(v->type == JSONR_ARRAY || v->type == JSONR_OBJECT || (v->child == NULL && v->count == 0),
               "children on a scalar");
    for (const struct jsonr_value *c = v->child; c; c = c->next) {
        int d = fz_check(c, v->type == JSONR_OBJECT);

        depth = d + 1 > depth ? d + 1 : depth;
        count++;
        if (v->type == JSONR_OBJECT) {
            /* jsonr_get finds the first member of a name: never a later one. */
            const struct jsonr_value *first = jsonr_get(v, c->key);
            uint64_t u = 0;

            fz_require(first != NULL, "member not found by its name");
            if (first == c) {
                fz_require((jsonr_get_str(v, c->key) != NULL) == (c->type == JSONR_STRING),
                           "get_str disagrees");
                fz_require((jsonr_get_u64(v, c->key, &u) == 0) == (c->type == JSONR_NUMBER && c->is_u64),
                           "get_u64 disagrees");
                fz_require(c->type != JSONR_NUMBER || !c->is_u64 || u == c->u64, "get_u64 value disagrees");
            }
        }
    }
    fz_require(count == v->count, "count differs from the children");
    fz_require(depth <= JSONR_MAX_DEPTH, "nested deeper than the limit");
    return depth;
}

/* Two trees are equal (numbers compared exactly when integers, else when finite). */
static void
fz_same(const struct jsonr_value *a, const struct jsonr_value *b)
{
    fz_require(a->type == b->type, "reprinted tree: type changed");
    fz_require((a->key == NULL) == (b->key == NULL) && (!a->key || !strcmp(a->key, b->key)),
               "reprinted tree: key changed");
    switch (a->type) {
    case JSONR_BOOL:
        fz_require(a->boolean == b->boolean, "reprinted tree: boolean changed");
        break;
    case JSONR_NUMBER:
        if (isfinite(a->num) || a->is_u64) {
            fz_require(a->is_u64 == b->is_u64 && (!a->is_u64 || a->u64 == b->u64),
                       "reprinted tree: integer changed");
            fz_require(a->is_u64 || a->num == b->num, "reprinted tree: number changed");
        }
        break;
    case JSONR_STRING:
        fz_require(!strcmp(a->str, b->str), "reprinted tree: string changed");
        break;
    default:
        break;
    }
    fz_require(a->count == b->count, "reprinted tree: count changed");
    for (const struct jsonr_value *x = a->child, *y = b->child; x || y; x = x->next, y = y->next) {
        fz_require(x && y, "reprinted tree: children differ");
        fz_same(x, y);
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct jsonr_value *tree = NULL, *again = NULL;
    struct fz_out out = {NULL, 0, 0};
    char err[FZ_ERR_BYTES];
    char *text;

    if (size > FZ_MAX_INPUT_BYTES) {
        return 0;
    }
    text = fz_copy_input(data, size);

    err[0] = '\0';
    if (jsonr_parse(text, size, &tree, err, sizeof err)) {
        fz_require(tree == NULL, "refused document left a tree");
        fz_require(!strncmp(err, "line ", 5) && strstr(err, " column ") != NULL,
                   "error text without a position");
        free(text);
        return 0;
    }
    fz_require(tree != NULL, "accepted document without a tree");
    fz_check(tree, 0);

    fz_print(&out, tree);
    if (jsonr_parse(out.buf, out.len, &again, err, sizeof err)) {
        fprintf(stderr, "fuzz_json_read: reprinted document refused: %s\n%.*s\n", err, (int)out.len, out.buf);
        abort();
    }
    fz_same(tree, again);

    jsonr_free(again);
    jsonr_free(tree);
    free(out.buf);
    free(text);
    return 0;
}
