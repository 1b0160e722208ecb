/*
 * OIDs as values: comparison and dotted text. The parser accepts what the
 * BER encoder can carry unchanged (X.690 8.19.4), so an OID read from a
 * profile always goes out on the wire as written.
 */
#include "oid.h"

/* RFC 2578 section 7.1.1: a sub-identifier is at most 2^32-1. */
#define OID_MAX_SUBID 0xffffffffu
/* Longest decimal sub-identifier ("4294967295"). */
#define OID_SUBID_MAX_DIGITS 10

int
oid_cmp(const struct oid *a, const struct oid *b)
{
    uint32_t n = a->len < b->len ? a->len : b->len;
    uint32_t i;

    for (i = 0; i < n; i++) {
        if (a->sub[i] != b->sub[i]) {
            return a->sub[i] < b->sub[i] ? -1 : 1;
        }
    }
    if (a->len == b->len) {
        return 0;
    }
    return a->len < b->len ? -1 : 1;
}

enum fleet_err
oid_parse(const char *text, struct oid *oid)
{
    enum fleet_err rc = FLEET_ERR_INVAL;
    const char *s = text;
    uint32_t count = 0;

    if (*s == '.') {
        s++;
    }
    for (;;) {
        uint64_t v = 0;
        int digits = 0;

        while (*s >= '0' && *s <= '9') {
            if (++digits > OID_SUBID_MAX_DIGITS) {
                goto cleanup;
            }
            v = v * 10 + (uint64_t)(*s - '0');
            s++;
        }
        if (digits == 0 || v > OID_MAX_SUBID || count >= OID_MAX_SUBIDS) {
            goto cleanup;
        }
        oid->sub[count++] = (uint32_t)v;
        if (*s == '\0') {
            break;
        }
        if (*s != '.') {
            goto cleanup;
        }
        s++;
    }
    /* X.690 8.19.4: only these first two arcs can be encoded and decoded back unchanged. */
    if (count < 2 || oid->sub[0] > 2 || (oid->sub[0] < 2 && oid->sub[1] >= 40)) {
        goto cleanup;
    }
    oid->len = count;
    rc = FLEET_OK;

cleanup:
    return rc;
}

char *
oid_format(const struct oid *oid, char *buf, size_t buf_len)
{
    size_t pos = 0;
    uint32_t i;

    if (buf_len == 0) {
        return buf;
    }
    for (i = 0; i < oid->len; i++) {
        char digits[OID_SUBID_MAX_DIGITS];
        uint32_t v = oid->sub[i];
        size_t n = 0;

        if (i > 0) {
            if (pos + 1 >= buf_len) {
                break;
            }
            buf[pos++] = '.';
        }
        do {
            digits[n++] = (char)('0' + v % 10);
            v /= 10;
        } while (v);
        while (n > 0 && pos + 1 < buf_len) {
            buf[pos++] = digits[--n];
        }
        if (n > 0) {
            break;
        }
    }
    buf[pos] = '\0';
    return buf;
}
