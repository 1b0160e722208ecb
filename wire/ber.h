/*
 * BER (X.690) primitives for SNMP: the few types SNMP uses, definite
 * lengths only, bounded by the buffer given. Decoding never reads past the
 * end and never allocates; encoding writes forward into a caller's buffer.
 * Shared by the simulator's agent and the stress client.
 */
#ifndef FLEET_BER_H
#define FLEET_BER_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "oid.h"

/* Bytes an encoded tag and length take at most here (tag 1, length 1 + 4). */
#define BER_HEADER_MAX_BYTES 6

/* Universal and SNMP application tags (RFC 2578, RFC 3416). */
enum ber_tag {
    BER_INTEGER = 0x02,
    BER_OCTET_STRING = 0x04,
    BER_NULL = 0x05,
    BER_OID = 0x06,
    BER_SEQUENCE = 0x30,
    BER_IPADDRESS = 0x40,
    BER_COUNTER32 = 0x41,
    BER_GAUGE32 = 0x42,
    BER_TIMETICKS = 0x43,
    BER_OPAQUE = 0x44,
    BER_COUNTER64 = 0x46,
    BER_NO_SUCH_OBJECT = 0x80,   /* [0] IMPLICIT NULL in a v2 varbind */
    BER_NO_SUCH_INSTANCE = 0x81, /* [1] IMPLICIT NULL */
    BER_END_OF_MIB_VIEW = 0x82,  /* [2] IMPLICIT NULL */
};

/* A read cursor over a byte range. */
struct ber_reader {
    const uint8_t *p;   /* next byte */
    const uint8_t *end; /* one past the last readable byte */
};

/**
 * @brief Read one tag and definite length; the value is the next @p len bytes, all inside the reader.
 * Only single-byte tags (SNMP uses no others) and lengths of at most 4 bytes are accepted.
 * @param[in,out] r Cursor; on success it points at the value.
 * @param[out] tag The tag byte.
 * @param[out] len The value's length.
 * @return FLEET_OK, or FLEET_ERR_PROTO for a truncated, indefinite or overlong header.
 */
enum fleet_err ber_read_header(struct ber_reader *r, uint8_t *tag, size_t *len);

/**
 * @brief Read an element that must have tag @p want and enter it: @p inner covers its value and
 * @p r moves past it.
 */
enum fleet_err ber_read_enter(struct ber_reader *r, uint8_t want, struct ber_reader *inner);

/** @brief Read an INTEGER (or any tag in @p want) that fits in int64_t. Accepts 1..8 content bytes. */
enum fleet_err ber_read_int(struct ber_reader *r, uint8_t want, int64_t *value);

/** @brief Read an unsigned application type (Counter32, Gauge32, TimeTicks, Counter64) into uint64_t.
 * Refuses negative encodings, values above 2^64-1 for BER_COUNTER64 and above 2^32-1 for any other tag. */
enum fleet_err ber_read_uint(struct ber_reader *r, uint8_t want, uint64_t *value);

/** @brief Read an OCTET STRING (or tag @p want); @p value points into the reader's buffer. */
enum fleet_err ber_read_bytes(struct ber_reader *r, uint8_t want, const uint8_t **value, size_t *len);

/** @brief Decode the contents (no header) of an OBJECT IDENTIFIER. Refuses more than 128 sub-ids,
 * sub-ids above 2^32-1 and non-minimal encodings. */
enum fleet_err ber_oid_decode(const uint8_t *p, size_t len, struct oid *oid);

/** @brief Check OID contents like ber_oid_decode() without storing them (no 516-byte copy). */
enum fleet_err ber_oid_check(const uint8_t *p, size_t len);

/** @brief Read a whole OBJECT IDENTIFIER element. */
enum fleet_err ber_read_oid(struct ber_reader *r, struct oid *oid);

/** @return Bytes the length field for @p len takes (1..5). */
size_t ber_length_size(size_t len);

/** @return Bytes the contents of INTEGER @p value take (minimal two's complement, 1..8). */
size_t ber_int_size(int64_t value);

/** @return Bytes the contents of unsigned @p value take (1..9, a leading 0 when the top bit is set). */
size_t ber_uint_size(uint64_t value);

/** @return Bytes the contents of @p oid take. */
size_t ber_oid_size(const struct oid *oid);

/*
 * Encoders write at @p p (room checked by the caller with the size functions) and return the
 * position after what they wrote.
 */
uint8_t *ber_put_header(uint8_t *p, uint8_t tag, size_t len);
uint8_t *ber_put_int(uint8_t *p, uint8_t tag, int64_t value);
uint8_t *ber_put_uint(uint8_t *p, uint8_t tag, uint64_t value);
uint8_t *ber_put_bytes(uint8_t *p, uint8_t tag, const void *value, size_t len);
uint8_t *ber_put_oid(uint8_t *p, const struct oid *oid);
/** @brief Write only the contents of @p oid (ber_oid_size() bytes), for a caller that wrote the header. */
uint8_t *ber_put_oid_contents(uint8_t *p, const struct oid *oid);

#endif
