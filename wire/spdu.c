/*
 * SNMP v1/v2c messages and PDUs. Decoding walks the datagram once to check
 * every varbind (so a handler never meets a malformed one halfway through a
 * response it has half built) and keeps only pointers into it; handlers then
 * iterate the varbinds a second time, decoding each name as they go. The
 * check pass skips storing OIDs, so the second walk is the only copy.
 *
 * Encoding appends varbinds forward after a headroom and writes the headers
 * last, in front of them: the lengths are known by then, so nothing is
 * measured twice or moved. The cost is that the caller must reserve the
 * headroom (SPDU_HEADROOM, or more for v3) up front. Each append is checked
 * against a byte budget that spdu_bindings_budget() derives from the
 * message size limit, so the finished message never exceeds that limit
 * whatever the varbinds turn out to be.
 */
#include "spdu.h"

#include <assert.h>
#include <string.h>

/* Bytes an int32 INTEGER's contents take at most. */
#define SPDU_INT32_MAX_BYTES 4
/* RFC 3416 msgMaxSize and the largest length we ever encode: INTEGER (484..2147483647). */
#define SPDU_MAX_MSG_BYTES 2147483647u
/* An IpAddress is exactly 4 bytes (RFC 2578 section 7.1.5). */
#define SPDU_IPADDRESS_BYTES 4

/* Read an INTEGER that must fit in int32_t (request-id, error-status, error-index, version). */
static enum fleet_err
spdu_read_int32(struct ber_reader *r, int32_t *value)
{
    enum fleet_err rc;
    int64_t v;

    rc = ber_read_int(r, BER_INTEGER, &v);
    if (rc) {
        goto cleanup;
    }
    if (v < INT32_MIN || v > INT32_MAX) {
        rc = FLEET_ERR_PROTO;
        goto cleanup;
    }
    *value = (int32_t)v;

cleanup:
    return rc;
}

/* Read a value whose contents must be exactly @p want_len bytes (NULL, exceptions, IpAddress). */
static enum fleet_err
spdu_read_fixed(struct ber_reader *r, uint8_t tag, size_t want_len, struct spdu_value *v)
{
    enum fleet_err rc;

    rc = ber_read_bytes(r, tag, &v->v.bytes.ptr, &v->v.bytes.len);
    if (!rc && v->v.bytes.len != want_len) {
        rc = FLEET_ERR_PROTO;
    }
    return rc;
}

/*
 * Read one varbind. With @p b NULL only check it (the name is validated,
 * not stored); otherwise fill @p b.
 */
static enum fleet_err
spdu_read_binding(struct ber_reader *r, struct spdu_binding *b)
{
    struct spdu_value scratch;
    struct spdu_value *v = b ? &b->value : &scratch;
    const uint8_t *start = r->p;
    const uint8_t *name;
    struct ber_reader vb;
    enum fleet_err rc;
    size_t name_len;
    uint8_t tag;

    rc = ber_read_enter(r, BER_SEQUENCE, &vb);
    if (rc) {
        goto cleanup;
    }
    rc = ber_read_bytes(&vb, BER_OID, &name, &name_len);
    if (rc) {
        goto cleanup;
    }
    rc = b ? ber_oid_decode(name, name_len, &b->name) : ber_oid_check(name, name_len);
    if (rc) {
        goto cleanup;
    }
    if (vb.p >= vb.end) {
        rc = FLEET_ERR_PROTO;
        goto cleanup;
    }
    tag = *vb.p;
    v->tag = tag;
    switch (tag) {
    case BER_INTEGER:
        rc = ber_read_int(&vb, tag, &v->v.i);
        break;
    case BER_COUNTER32:
    case BER_GAUGE32:
    case BER_TIMETICKS:
    case BER_COUNTER64:
        rc = ber_read_uint(&vb, tag, &v->v.u);
        break;
    case BER_OCTET_STRING:
    case BER_OPAQUE:
        rc = ber_read_bytes(&vb, tag, &v->v.bytes.ptr, &v->v.bytes.len);
        break;
    case BER_OID:
        rc = ber_read_bytes(&vb, tag, &v->v.bytes.ptr, &v->v.bytes.len);
        if (!rc) {
            rc = ber_oid_check(v->v.bytes.ptr, v->v.bytes.len);
        }
        break;
    case BER_IPADDRESS:
        rc = spdu_read_fixed(&vb, tag, SPDU_IPADDRESS_BYTES, v);
        break;
    case BER_NULL:
    case BER_NO_SUCH_OBJECT:
    case BER_NO_SUCH_INSTANCE:
    case BER_END_OF_MIB_VIEW:
        rc = spdu_read_fixed(&vb, tag, 0, v);
        break;
    default:
        rc = FLEET_ERR_PROTO;
        break;
    }
    if (rc) {
        goto cleanup;
    }
    /* A varbind holds a name and one value, nothing after them. */
    if (vb.p != vb.end) {
        rc = FLEET_ERR_PROTO;
        goto cleanup;
    }
    if (b) {
        b->raw = start;
        b->raw_len = (size_t)(r->p - start);
    }

cleanup:
    return rc;
}

enum fleet_err
spdu_pdu_decode(struct ber_reader *r, struct spdu_pdu *pdu)
{
    struct ber_reader in, vbl;
    enum fleet_err rc = FLEET_ERR_PROTO;
    uint32_t count = 0;
    uint8_t tag;

    if (r->p >= r->end) {
        goto cleanup;
    }
    tag = *r->p;
    /* The v1 Trap has another layout; neither the agent nor the stress client ever receives one. */
    if (tag < SPDU_GET || tag > SPDU_REPORT || tag == SPDU_TRAP_V1) {
        goto cleanup;
    }
    rc = ber_read_enter(r, tag, &in);
    if (rc) {
        goto cleanup;
    }
    pdu->type = tag;
    rc = spdu_read_int32(&in, &pdu->request_id);
    if (rc) {
        goto cleanup;
    }
    rc = spdu_read_int32(&in, &pdu->error_status);
    if (rc) {
        goto cleanup;
    }
    rc = spdu_read_int32(&in, &pdu->error_index);
    if (rc) {
        goto cleanup;
    }
    rc = ber_read_enter(&in, BER_SEQUENCE, &vbl);
    if (rc) {
        goto cleanup;
    }
    if (in.p != in.end) {
        rc = FLEET_ERR_PROTO;
        goto cleanup;
    }
    pdu->bindings = vbl.p;
    pdu->bindings_len = (size_t)(vbl.end - vbl.p);
    pdu->binding_count = 0;
    while (vbl.p < vbl.end) {
        if (count == SPDU_MAX_BINDINGS_DECODED) {
            rc = FLEET_ERR_LIMIT;
            goto cleanup;
        }
        rc = spdu_read_binding(&vbl, NULL);
        if (rc) {
            goto cleanup;
        }
        count++;
    }
    pdu->binding_count = count;

cleanup:
    return rc;
}

enum fleet_err
spdu_message_decode(const uint8_t *buf, size_t len, struct spdu_message *msg)
{
    struct ber_reader r = {buf, buf + len};
    struct ber_reader seq;
    enum fleet_err rc;

    rc = ber_read_enter(&r, BER_SEQUENCE, &seq);
    if (rc) {
        goto cleanup;
    }
    rc = spdu_read_int32(&seq, &msg->version);
    if (rc) {
        goto cleanup;
    }
    if (msg->version == SPDU_V3) {
        rc = FLEET_ERR_NOTFOUND;
        goto cleanup;
    }
    /* One datagram is one message: bytes after it mean it was not built by an SNMP engine. */
    if ((msg->version != SPDU_V1 && msg->version != SPDU_V2C) || r.p != r.end) {
        rc = FLEET_ERR_PROTO;
        goto cleanup;
    }
    rc = ber_read_bytes(&seq, BER_OCTET_STRING, &msg->community, &msg->community_len);
    if (rc) {
        goto cleanup;
    }
    rc = spdu_pdu_decode(&seq, &msg->pdu);
    if (rc) {
        goto cleanup;
    }
    if (seq.p != seq.end) {
        rc = FLEET_ERR_PROTO;
        goto cleanup;
    }

cleanup:
    return rc;
}

void
spdu_binding_iter_init(struct spdu_binding_iter *it, const struct spdu_pdu *pdu)
{
    it->r.p = pdu->bindings;
    it->r.end = pdu->bindings + pdu->bindings_len;
}

enum fleet_err
spdu_binding_next(struct spdu_binding_iter *it, struct spdu_binding *b)
{
    if (it->r.p >= it->r.end) {
        return FLEET_ERR_NOTFOUND;
    }
    return spdu_read_binding(&it->r, b);
}

void
spdu_enc_init(struct spdu_encoder *e, uint8_t *buf, size_t cap, size_t headroom, size_t budget)
{
    assert(headroom <= cap);
    e->buf = buf;
    e->cap = cap;
    e->headroom = headroom;
    e->pos = headroom;
    e->budget = budget;
    e->count = 0;
}

size_t
spdu_bindings_budget(size_t max_msg_bytes, size_t community_len, int32_t request_id)
{
    size_t max = max_msg_bytes < SPDU_MAX_MSG_BYTES ? max_msg_bytes : SPDU_MAX_MSG_BYTES;
    /* Every enclosing length is at most the whole message's. */
    size_t seq_header = 1 + ber_length_size(max);
    size_t header;

    header = seq_header                                           /* message SEQUENCE */
             + 2 + 1                                              /* version */
             + 1 + ber_length_size(community_len) + community_len /* community */
             + seq_header                                         /* PDU */
             + 2 + ber_int_size(request_id)                       /* request-id */
             + 2 * (2 + SPDU_INT32_MAX_BYTES)                     /* error-status, error-index */
             + seq_header;                                        /* variable-bindings */
    return max > header ? max - header : 0;
}

/* Room for @p n more bytes of varbinds, under both the budget and the buffer. */
static int
spdu_enc_fits(const struct spdu_encoder *e, size_t n)
{
    size_t used = e->pos - e->headroom;

    return n <= e->budget - (used < e->budget ? used : e->budget) && n <= e->cap - e->pos;
}

enum fleet_err
spdu_enc_binding(struct spdu_encoder *e, const struct oid *name, const struct spdu_value *value)
{
    enum fleet_err rc = FLEET_OK;
    size_t name_len, value_len, seq_len, total;
    uint8_t *p;

    switch (value->tag) {
    case BER_INTEGER:
        value_len = ber_int_size(value->v.i);
        break;
    case BER_COUNTER32:
    case BER_GAUGE32:
    case BER_TIMETICKS:
        if (value->v.u > UINT32_MAX) {
            rc = FLEET_ERR_INVAL;
            goto cleanup;
        }
        value_len = ber_uint_size(value->v.u);
        break;
    case BER_COUNTER64:
        value_len = ber_uint_size(value->v.u);
        break;
    case BER_OCTET_STRING:
    case BER_OPAQUE:
        value_len = value->v.bytes.len;
        break;
    case BER_IPADDRESS:
        if (value->v.bytes.len != SPDU_IPADDRESS_BYTES) {
            rc = FLEET_ERR_INVAL;
            goto cleanup;
        }
        value_len = SPDU_IPADDRESS_BYTES;
        break;
    case BER_OID:
        value_len = ber_oid_size(value->v.oid);
        break;
    case BER_NULL:
    case BER_NO_SUCH_OBJECT:
    case BER_NO_SUCH_INSTANCE:
    case BER_END_OF_MIB_VIEW:
        value_len = 0;
        break;
    default:
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    if (value_len > SPDU_MAX_MSG_BYTES) {
        rc = FLEET_ERR_LIMIT;
        goto cleanup;
    }
    name_len = ber_oid_size(name);
    seq_len = 1 + ber_length_size(name_len) + name_len + 1 + ber_length_size(value_len) + value_len;
    total = 1 + ber_length_size(seq_len) + seq_len;
    if (!spdu_enc_fits(e, total)) {
        rc = FLEET_ERR_LIMIT;
        goto cleanup;
    }

    p = ber_put_header(e->buf + e->pos, BER_SEQUENCE, seq_len);
    p = ber_put_header(p, BER_OID, name_len);
    p = ber_put_oid_contents(p, name);
    switch (value->tag) {
    case BER_INTEGER:
        p = ber_put_int(p, value->tag, value->v.i);
        break;
    case BER_COUNTER32:
    case BER_GAUGE32:
    case BER_TIMETICKS:
    case BER_COUNTER64:
        p = ber_put_uint(p, value->tag, value->v.u);
        break;
    case BER_OID:
        p = ber_put_header(p, BER_OID, value_len);
        p = ber_put_oid_contents(p, value->v.oid);
        break;
    default:
        p = ber_put_bytes(p, value->tag, value->v.bytes.ptr, value_len);
        break;
    }
    assert((size_t)(p - (e->buf + e->pos)) == total);
    e->pos += total;
    e->count++;

cleanup:
    return rc;
}

enum fleet_err
spdu_enc_raw(struct spdu_encoder *e, const uint8_t *raw, size_t raw_len)
{
    if (!spdu_enc_fits(e, raw_len)) {
        return FLEET_ERR_LIMIT;
    }
    memcpy(e->buf + e->pos, raw, raw_len);
    e->pos += raw_len;
    e->count++;
    return FLEET_OK;
}

void
spdu_enc_reset(struct spdu_encoder *e)
{
    e->pos = e->headroom;
    e->count = 0;
}

/*
 * Write the PDU header ending exactly at the varbinds; @p extra bytes (the
 * message header) must still fit in front of it. Returns the PDU's start.
 */
static uint8_t *
spdu_enc_pdu_header(struct spdu_encoder *e, size_t extra, uint8_t type, int32_t request_id,
                    int32_t error_status, int32_t error_index)
{
    size_t vb_len = e->pos - e->headroom;
    size_t ints =
        2 + ber_int_size(request_id) + 2 + ber_int_size(error_status) + 2 + ber_int_size(error_index);
    size_t vb_header = 1 + ber_length_size(vb_len);
    size_t pdu_len = ints + vb_header + vb_len;
    size_t front = 1 + ber_length_size(pdu_len) + ints + vb_header;
    uint8_t *start, *p;

    /* The headroom is the caller's promise (SPDU_HEADROOM); running out is our bug, not the peer's. */
    assert(front + extra <= e->headroom);
    start = e->buf + e->headroom - front;
    p = ber_put_header(start, type, pdu_len);
    p = ber_put_int(p, BER_INTEGER, request_id);
    p = ber_put_int(p, BER_INTEGER, error_status);
    p = ber_put_int(p, BER_INTEGER, error_index);
    p = ber_put_header(p, BER_SEQUENCE, vb_len);
    assert(p == e->buf + e->headroom);
    return start;
}

void
spdu_enc_finish_pdu(struct spdu_encoder *e, uint8_t type, int32_t request_id, int32_t error_status,
                    int32_t error_index, uint8_t **out, size_t *out_len)
{
    uint8_t *start = spdu_enc_pdu_header(e, 0, type, request_id, error_status, error_index);

    *out = start;
    *out_len = (size_t)(e->buf + e->pos - start);
}

void
spdu_enc_finish_message(struct spdu_encoder *e, int32_t version, const uint8_t *community,
                        size_t community_len, uint8_t type, int32_t request_id, int32_t error_status,
                        int32_t error_index, uint8_t **out, size_t *out_len)
{
    size_t inner = 2 + ber_int_size(version) + 1 + ber_length_size(community_len) + community_len;
    uint8_t *pdu, *start, *p;
    size_t seq_len;

    pdu = spdu_enc_pdu_header(e, inner + BER_HEADER_MAX_BYTES, type, request_id, error_status, error_index);
    seq_len = inner + (size_t)(e->buf + e->pos - pdu);
    start = pdu - inner - 1 - ber_length_size(seq_len);
    p = ber_put_header(start, BER_SEQUENCE, seq_len);
    p = ber_put_int(p, BER_INTEGER, version);
    p = ber_put_bytes(p, BER_OCTET_STRING, community, community_len);
    assert(p == pdu);
    *out = start;
    *out_len = (size_t)(e->buf + e->pos - start);
}

/* Bytes of a Trap-PDU's fields before its variable-bindings (each with its tag and length). */
static size_t
spdu_trap_v1_fields_size(const struct spdu_trap_v1 *t)
{
    size_t oid_len = ber_oid_size(t->enterprise);

    return 1 + ber_length_size(oid_len) + oid_len /* enterprise */
           + 2 + SPDU_IPADDRESS_BYTES             /* agent-addr */
           + 2 + ber_int_size(t->generic)         /* generic-trap */
           + 2 + ber_int_size(t->specific)        /* specific-trap */
           + 2 + ber_uint_size(t->time_stamp);    /* time-stamp */
}

size_t
spdu_trap_v1_bindings_budget(size_t max_msg_bytes, size_t community_len, const struct spdu_trap_v1 *trap)
{
    size_t max = max_msg_bytes < SPDU_MAX_MSG_BYTES ? max_msg_bytes : SPDU_MAX_MSG_BYTES;
    size_t seq_header = 1 + ber_length_size(max);
    size_t header = seq_header                                           /* message SEQUENCE */
                    + 2 + 1                                              /* version */
                    + 1 + ber_length_size(community_len) + community_len /* community */
                    + seq_header                                         /* Trap-PDU */
                    + spdu_trap_v1_fields_size(trap) + seq_header;       /* fields, variable-bindings */

    return max > header ? max - header : 0;
}

void
spdu_enc_finish_trap_v1(struct spdu_encoder *e, const uint8_t *community, size_t community_len,
                        const struct spdu_trap_v1 *trap, uint8_t **out, size_t *out_len)
{
    size_t vb_len = e->pos - e->headroom;
    size_t oid_len = ber_oid_size(trap->enterprise);
    size_t fields = spdu_trap_v1_fields_size(trap);
    size_t vb_header = 1 + ber_length_size(vb_len);
    size_t pdu_len = fields + vb_header + vb_len;
    size_t pdu_front = 1 + ber_length_size(pdu_len) + fields + vb_header;
    size_t inner = 2 + ber_int_size(SPDU_V1) + 1 + ber_length_size(community_len) + community_len;
    size_t seq_len = inner + 1 + ber_length_size(pdu_len) + pdu_len;
    size_t front = 1 + ber_length_size(seq_len) + inner + pdu_front;
    uint8_t *start, *p;

    /* The headroom is the caller's promise (SPDU_TRAP_V1_HEADROOM); running out is our bug. */
    assert(front <= e->headroom);
    start = e->buf + e->headroom - front;
    p = ber_put_header(start, BER_SEQUENCE, seq_len);
    p = ber_put_int(p, BER_INTEGER, SPDU_V1);
    p = ber_put_bytes(p, BER_OCTET_STRING, community, community_len);
    p = ber_put_header(p, SPDU_TRAP_V1, pdu_len);
    p = ber_put_header(p, BER_OID, oid_len);
    p = ber_put_oid_contents(p, trap->enterprise);
    p = ber_put_bytes(p, BER_IPADDRESS, trap->agent_addr, SPDU_IPADDRESS_BYTES);
    p = ber_put_int(p, BER_INTEGER, trap->generic);
    p = ber_put_int(p, BER_INTEGER, trap->specific);
    p = ber_put_uint(p, BER_TIMETICKS, trap->time_stamp);
    p = ber_put_header(p, BER_SEQUENCE, vb_len);
    assert(p == e->buf + e->headroom);
    *out = start;
    *out_len = (size_t)(e->buf + e->pos - start);
}

static const char *const error_status_names[] = {
    "noError",
    "tooBig",
    "noSuchName",
    "badValue",
    "readOnly",
    "genErr",
    "noAccess",
    "wrongType",
    "wrongLength",
    "wrongEncoding",
    "wrongValue",
    "noCreation",
    "inconsistentValue",
    "resourceUnavailable",
    "commitFailed",
    "undoFailed",
    "authorizationError",
    "notWritable",
    "inconsistentName",
};

const char *
spdu_error_status_name(int status)
{
    return status >= 0 && status < (int)(sizeof error_status_names / sizeof error_status_names[0])
               ? error_status_names[status]
               : NULL;
}
