/*
 * A small JSON reader, shared by the stress client (the simulator's --report,
 * notify's --json) and the simulator (identity rules, rules.json): RFC 8259 values into a tree of nodes,
 * with bounded nesting and clear errors ("line 3 column 14: expected ':'").
 * Numbers keep their exact unsigned 64-bit value when they are integers.
 */
#ifndef STRESS_JSON_READ_H
#define STRESS_JSON_READ_H

#include <stddef.h>
#include <stdint.h>

#include "sbuf.h"

/* Deepest nesting of arrays and objects accepted; both formats need 4. */
#define JSONR_MAX_DEPTH 64
/* Largest input accepted: a report of a million devices fits. */
#define JSONR_MAX_BYTES (1024u * 1024u * 1024u)

enum jsonr_type {
    JSONR_NULL,
    JSONR_BOOL,
    JSONR_NUMBER,
    JSONR_STRING,
    JSONR_ARRAY,
    JSONR_OBJECT,
};

struct jsonr_value {
    enum jsonr_type type;      /* what it is */
    char *key;                 /* member name inside an object (NUL-terminated, owned), else NULL */
    char *str;                 /* JSONR_STRING: the decoded text (UTF-8, NUL-terminated, owned) */
    double num;                /* JSONR_NUMBER: the value */
    int is_u64;                /* JSONR_NUMBER: 1 when it is an integer in 0..UINT64_MAX, kept in u64 */
    uint64_t u64;              /* its exact value, valid with is_u64 */
    int boolean;               /* JSONR_BOOL: 0 or 1 */
    struct jsonr_value *child; /* JSONR_ARRAY/OBJECT: first element or member, NULL when empty */
    struct jsonr_value *next;  /* next sibling in the parent, NULL for the last */
    size_t count;              /* JSONR_ARRAY/OBJECT: elements or members */
};

/**
 * @brief Parse a whole document (one value, surrounding whitespace allowed).
 * @param[in] text The document (need not be NUL-terminated).
 * @param[in] len Its length, at most JSONR_MAX_BYTES.
 * @param[out] out The tree, owned by the caller (jsonr_free()); NULL on error.
 * @param[out] err On error, "line L column C: what is wrong".
 * @param[in] err_len Size of @p err.
 * @return 0, or -1 when the text is not JSON, nests too deep, or memory ran out.
 */
int jsonr_parse(const char *text, size_t len, struct jsonr_value **out, char *err, size_t err_len);

/** @brief Free a tree; accepts NULL. */
void jsonr_free(struct jsonr_value *v);

/** @return The member @p key of object @p obj (the first when repeated), or NULL. Accepts NULL. */
const struct jsonr_value *jsonr_get(const struct jsonr_value *obj, const char *key);

/** @brief Member @p key as an unsigned integer. @return 0, or -1 when absent or not one. */
int jsonr_get_u64(const struct jsonr_value *obj, const char *key, uint64_t *out);

/** @return Member @p key's text when it is a string, else NULL. */
const char *jsonr_get_str(const struct jsonr_value *obj, const char *key);

/**
 * @brief Append @p v as compact JSON (member order kept; integers exact; other numbers as the shortest text
 * that reads back as the same double, with a fraction or exponent, so they stay non-integers).
 */
void jsonr_print(struct sbuf *b, const struct jsonr_value *v);

/** @brief Append @p num as jsonr_print() writes a number that is not an integer. */
void jsonr_print_number(struct sbuf *b, double num);

#endif
