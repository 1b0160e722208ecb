/*
 * BER primitives for SNMP. Readers take a cursor (struct ber_reader) over
 * the bytes of one datagram and check every length against the cursor's end
 * before touching a byte, so no input can make them read out of bounds; they
 * never allocate and point into the input instead of copying it. Writers are
 * the opposite: they trust the caller to have measured the room with the
 * ber_*_size() functions (the encoders in spdu.c and susm.c do), so the
 * per-varbind hot path carries no bounds checks of its own. A size function
 * and its writer must agree byte for byte; the unit tests compare both
 * against net-snmp's encoder and parser.
 */
#include "ber.h"

#include <assert.h>
#include <string.h>

/* X.690 8.1.3.5: the long length form states how many length bytes follow; we take at most 4. */
#define BER_MAX_LENGTH_BYTES 4
/* The largest length a 4-byte length field holds. */
#define BER_MAX_LENGTH 0xffffffffu
/* INTEGER contents we accept: whatever fits in int64_t. */
#define BER_MAX_INT_BYTES 8
/* Unsigned contents: 8 value bytes plus the leading zero that keeps the top bit clear. */
#define BER_MAX_UINT_BYTES 9
/* RFC 2578 section 7.1.1: a sub-identifier is at most 2^32-1. */
#define BER_MAX_SUBID 0xffffffffu
/* The first encoded sub-identifier holds 40 * X + Y, with Y up to 2^32-1 when X is 2. */
#define BER_MAX_FIRST_SUBID (80ull + BER_MAX_SUBID)

enum fleet_err
ber_read_header(struct ber_reader *r, uint8_t *tag, size_t *len)
{
    const uint8_t *p = r->p;
    enum fleet_err rc = FLEET_ERR_PROTO;
    size_t n, i, l;
    uint8_t t, b;

    if (p >= r->end || r->end - p < 2) {
        goto cleanup;
    }
    t = *p++;
    /* Multi-byte tags (low five bits all set) never occur in SNMP. */
    if ((t & 0x1f) == 0x1f) {
        goto cleanup;
    }
    b = *p++;
    if (b < 0x80) {
        l = b;
    } else {
        /* 0x80 is the indefinite form, which SNMP forbids (RFC 3417 section 8). */
        n = b & 0x7f;
        if (n == 0 || n > BER_MAX_LENGTH_BYTES || (size_t)(r->end - p) < n) {
            goto cleanup;
        }
        l = 0;
        for (i = 0; i < n; i++) {
            l = (l << 8) | *p++;
        }
    }
    if (l > (size_t)(r->end - p)) {
        goto cleanup;
    }
    *tag = t;
    *len = l;
    r->p = p;
    rc = FLEET_OK;

cleanup:
    return rc;
}

enum fleet_err
ber_read_enter(struct ber_reader *r, uint8_t want, struct ber_reader *inner)
{
    struct ber_reader c = *r;
    enum fleet_err rc;
    uint8_t tag;
    size_t len;

    rc = ber_read_header(&c, &tag, &len);
    if (rc) {
        goto cleanup;
    }
    if (tag != want) {
        rc = FLEET_ERR_PROTO;
        goto cleanup;
    }
    inner->p = c.p;
    inner->end = c.p + len;
    r->p = c.p + len;

cleanup:
    return rc;
}

/* Read an element with tag @p want; @p value and @p len cover its contents. */
static enum fleet_err
ber_read_prim(struct ber_reader *r, uint8_t want, const uint8_t **value, size_t *len)
{
    struct ber_reader inner;
    enum fleet_err rc;

    rc = ber_read_enter(r, want, &inner);
    if (rc) {
        goto cleanup;
    }
    *value = inner.p;
    *len = (size_t)(inner.end - inner.p);

cleanup:
    return rc;
}

enum fleet_err
ber_read_int(struct ber_reader *r, uint8_t want, int64_t *value)
{
    struct ber_reader c = *r;
    const uint8_t *p;
    enum fleet_err rc;
    uint64_t u;
    size_t len, i;

    rc = ber_read_prim(&c, want, &p, &len);
    if (rc) {
        goto cleanup;
    }
    if (len == 0 || len > BER_MAX_INT_BYTES) {
        rc = FLEET_ERR_PROTO;
        goto cleanup;
    }
    /* Sign-extend in unsigned arithmetic, where shifts are defined for every value. */
    u = (p[0] & 0x80) ? UINT64_MAX : 0;
    for (i = 0; i < len; i++) {
        u = (u << 8) | p[i];
    }
    *value = (u >> 63) ? -(int64_t)(~u) - 1 : (int64_t)u;
    *r = c;

cleanup:
    return rc;
}

enum fleet_err
ber_read_uint(struct ber_reader *r, uint8_t want, uint64_t *value)
{
    struct ber_reader c = *r;
    const uint8_t *p;
    enum fleet_err rc;
    uint64_t u = 0;
    size_t len, i;

    rc = ber_read_prim(&c, want, &p, &len);
    if (rc) {
        goto cleanup;
    }
    /* A set top bit makes the value negative, which no unsigned type holds. */
    if (len == 0 || len > BER_MAX_UINT_BYTES || (p[0] & 0x80) || (len == BER_MAX_UINT_BYTES && p[0] != 0)) {
        rc = FLEET_ERR_PROTO;
        goto cleanup;
    }
    for (i = 0; i < len; i++) {
        u = (u << 8) | p[i];
    }
    if (want != BER_COUNTER64 && u > UINT32_MAX) {
        rc = FLEET_ERR_PROTO;
        goto cleanup;
    }
    *value = u;
    *r = c;

cleanup:
    return rc;
}

enum fleet_err
ber_read_bytes(struct ber_reader *r, uint8_t want, const uint8_t **value, size_t *len)
{
    return ber_read_prim(r, want, value, len);
}

/*
 * Walk OID contents; store the sub-identifiers in @p oid unless it is NULL
 * (the well-formedness check of a whole PDU needs no copy).
 */
static enum fleet_err
ber_oid_walk(const uint8_t *p, size_t len, struct oid *oid)
{
    enum fleet_err rc = FLEET_ERR_PROTO;
    uint64_t v = 0, limit = BER_MAX_FIRST_SUBID;
    uint32_t count = 0;
    int in_subid = 0;
    size_t i;

    if (len == 0) {
        goto cleanup;
    }
    for (i = 0; i < len; i++) {
        uint8_t b = p[i];

        /* X.690 8.19.2: a leading 0x80 byte pads a sub-identifier, which is not allowed. */
        if (!in_subid && b == 0x80) {
            goto cleanup;
        }
        v = (v << 7) | (b & 0x7f);
        if (v > limit) {
            goto cleanup;
        }
        if (b & 0x80) {
            in_subid = 1;
            continue;
        }
        in_subid = 0;
        if (count == 0) {
            if (oid) {
                /* X.690 8.19.4: split 40 * X + Y back into X (0, 1 or 2) and Y. */
                oid->sub[0] = v < 40 ? 0 : v < 80 ? 1 : 2;
                oid->sub[1] = (uint32_t)(v - 40u * oid->sub[0]);
            }
            count = 2;
            limit = BER_MAX_SUBID;
        } else {
            if (count >= OID_MAX_SUBIDS) {
                goto cleanup;
            }
            if (oid) {
                oid->sub[count] = (uint32_t)v;
            }
            count++;
        }
        v = 0;
    }
    /* The last byte must close its sub-identifier. */
    if (in_subid) {
        goto cleanup;
    }
    if (oid) {
        oid->len = count;
    }
    rc = FLEET_OK;

cleanup:
    return rc;
}

enum fleet_err
ber_oid_decode(const uint8_t *p, size_t len, struct oid *oid)
{
    return ber_oid_walk(p, len, oid);
}

enum fleet_err
ber_oid_check(const uint8_t *p, size_t len)
{
    return ber_oid_walk(p, len, NULL);
}

enum fleet_err
ber_read_oid(struct ber_reader *r, struct oid *oid)
{
    struct ber_reader c = *r;
    const uint8_t *p;
    enum fleet_err rc;
    size_t len;

    rc = ber_read_prim(&c, BER_OID, &p, &len);
    if (rc) {
        goto cleanup;
    }
    rc = ber_oid_decode(p, len, oid);
    if (rc) {
        goto cleanup;
    }
    *r = c;

cleanup:
    return rc;
}

size_t
ber_length_size(size_t len)
{
    if (len < 0x80) {
        return 1;
    }
    if (len <= 0xff) {
        return 2;
    }
    if (len <= 0xffff) {
        return 3;
    }
    if (len <= 0xffffff) {
        return 4;
    }
    return 5;
}

size_t
ber_int_size(int64_t value)
{
    /* Bytes needed are those of the magnitude with the sign bit: ~value for negatives. */
    uint64_t u = value < 0 ? ~(uint64_t)value : (uint64_t)value;
    size_t n = 1;

    while (n < BER_MAX_INT_BYTES && (u >> (8 * n - 1)) != 0) {
        n++;
    }
    return n;
}

size_t
ber_uint_size(uint64_t value)
{
    size_t n = 1;

    while (n < BER_MAX_INT_BYTES && (value >> (8 * n - 1)) != 0) {
        n++;
    }
    if (n == BER_MAX_INT_BYTES && (value >> 63) != 0) {
        n = BER_MAX_UINT_BYTES;
    }
    return n;
}

/* Bytes of the base-128 form of @p v. */
static size_t
ber_subid_size(uint64_t v)
{
    size_t n = 1;

    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/*
 * The first encoded sub-identifier. Like net-snmp, an OID of fewer than two
 * arcs is encoded as if padded with zeros (it then decodes with two).
 */
static uint64_t
ber_oid_first(const struct oid *oid)
{
    if (oid->len == 0) {
        return 0;
    }
    if (oid->len == 1) {
        return 40ull * oid->sub[0];
    }
    return 40ull * oid->sub[0] + oid->sub[1];
}

size_t
ber_oid_size(const struct oid *oid)
{
    size_t n = ber_subid_size(ber_oid_first(oid));
    uint32_t i;

    for (i = 2; i < oid->len; i++) {
        uint32_t v = oid->sub[i];

        /* Most sub-identifiers of MIB OIDs are below 128. */
        n += v < 0x80 ? 1 : ber_subid_size(v);
    }
    return n;
}

uint8_t *
ber_put_header(uint8_t *p, uint8_t tag, size_t len)
{
    size_t n, i;

    assert(len <= BER_MAX_LENGTH);
    *p++ = tag;
    if (len < 0x80) {
        *p++ = (uint8_t)len;
        return p;
    }
    n = ber_length_size(len) - 1;
    *p++ = (uint8_t)(0x80 | n);
    for (i = n; i > 0; i--) {
        *p++ = (uint8_t)(len >> (8 * (i - 1)));
    }
    return p;
}

/* Write the low @p n bytes of @p u big-endian. */
static uint8_t *
ber_put_be(uint8_t *p, uint64_t u, size_t n)
{
    size_t i;

    for (i = n; i > 0; i--) {
        /* A 9-byte unsigned starts with a zero byte: shifts of 64 are undefined, so spell it. */
        *p++ = i > 8 ? 0 : (uint8_t)(u >> (8 * (i - 1)));
    }
    return p;
}

uint8_t *
ber_put_int(uint8_t *p, uint8_t tag, int64_t value)
{
    size_t n = ber_int_size(value);

    *p++ = tag;
    *p++ = (uint8_t)n;
    return ber_put_be(p, (uint64_t)value, n);
}

uint8_t *
ber_put_uint(uint8_t *p, uint8_t tag, uint64_t value)
{
    size_t n = ber_uint_size(value);

    *p++ = tag;
    *p++ = (uint8_t)n;
    return ber_put_be(p, value, n);
}

uint8_t *
ber_put_bytes(uint8_t *p, uint8_t tag, const void *value, size_t len)
{
    p = ber_put_header(p, tag, len);
    if (len) {
        memcpy(p, value, len);
    }
    return p + len;
}

/* Write @p v in base 128, most significant group first. */
static uint8_t *
ber_put_subid(uint8_t *p, uint64_t v)
{
    size_t n, i;

    if (v < 0x80) {
        *p++ = (uint8_t)v;
        return p;
    }
    n = ber_subid_size(v);
    for (i = n; i > 0; i--) {
        uint8_t b = (uint8_t)((v >> (7 * (i - 1))) & 0x7f);

        *p++ = i > 1 ? (uint8_t)(b | 0x80) : b;
    }
    return p;
}

uint8_t *
ber_put_oid_contents(uint8_t *p, const struct oid *oid)
{
    uint32_t i;

    p = ber_put_subid(p, ber_oid_first(oid));
    for (i = 2; i < oid->len; i++) {
        p = ber_put_subid(p, oid->sub[i]);
    }
    return p;
}

uint8_t *
ber_put_oid(uint8_t *p, const struct oid *oid)
{
    p = ber_put_header(p, BER_OID, ber_oid_size(oid));
    return ber_put_oid_contents(p, oid);
}
