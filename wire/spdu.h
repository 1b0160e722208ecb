/*
 * SNMP messages and PDUs (RFC 3416 PDUs in RFC 1157 / RFC 1901 messages):
 * decode a v1 or v2c message, or a bare PDU from a v3 scoped PDU, without
 * copying its varbinds; encode a response or request by appending varbinds
 * forward into a buffer with headroom, checking each against the size
 * budget, and writing the headers in front at the end. Shared by the
 * agent and the stress client. v3 (USM) wraps these in susm.h.
 */
#ifndef FLEET_SPDU_H
#define FLEET_SPDU_H

#include <stddef.h>
#include <stdint.h>

#include "ber.h"
#include "err.h"

/* Message versions as carried in the message (RFC 3584 section 2.1). */
enum spdu_version {
    SPDU_V1 = 0,
    SPDU_V2C = 1,
    SPDU_V3 = 3,
};

/* PDU tags (context-specific, constructed). */
enum spdu_type {
    SPDU_GET = 0xa0,
    SPDU_GETNEXT = 0xa1,
    SPDU_RESPONSE = 0xa2,
    SPDU_SET = 0xa3,
    SPDU_TRAP_V1 = 0xa4,
    SPDU_GETBULK = 0xa5,
    SPDU_INFORM = 0xa6,
    SPDU_TRAP_V2 = 0xa7,
    SPDU_REPORT = 0xa8,
};

/* error-status values (RFC 3416 section 3; 0-5 are also SNMPv1's). */
enum spdu_error_status {
    SPDU_NO_ERROR = 0,
    SPDU_TOO_BIG = 1,
    SPDU_NO_SUCH_NAME = 2,
    SPDU_BAD_VALUE = 3,
    SPDU_READ_ONLY = 4,
    SPDU_GEN_ERR = 5,
    SPDU_NO_ACCESS = 6,
    SPDU_WRONG_TYPE = 7,
    SPDU_WRONG_LENGTH = 8,
    SPDU_WRONG_ENCODING = 9,
    SPDU_WRONG_VALUE = 10,
    SPDU_NO_CREATION = 11,
    SPDU_INCONSISTENT_VALUE = 12,
    SPDU_RESOURCE_UNAVAILABLE = 13,
    SPDU_COMMIT_FAILED = 14,
    SPDU_UNDO_FAILED = 15,
    SPDU_AUTHORIZATION_ERROR = 16,
    SPDU_NOT_WRITABLE = 17,
    SPDU_INCONSISTENT_NAME = 18,
};

/** @return The RFC 3416 name of an error-status ("genErr"), or NULL outside 0..18. */
const char *spdu_error_status_name(int status);

/* RFC 3416: max-repetitions and non-repeaters are INTEGER (0..2147483647). */
#define SPDU_MAX_BINDINGS_DECODED 2048 /* varbinds accepted in one request */

/* A decoded PDU. Pointers point into the message buffer, which must outlive it. */
struct spdu_pdu {
    uint8_t type;            /* enum spdu_type */
    int32_t request_id;      /* request-id */
    int32_t error_status;    /* error-status, or non-repeaters for GETBULK */
    int32_t error_index;     /* error-index, or max-repetitions for GETBULK */
    const uint8_t *bindings; /* contents of the variable-bindings SEQUENCE */
    size_t bindings_len;     /* bytes at bindings */
    uint32_t binding_count;  /* varbinds in it (checked well-formed while decoding) */
};

/* A decoded v1/v2c message. */
struct spdu_message {
    int32_t version;          /* enum spdu_version */
    const uint8_t *community; /* community string, not NUL-terminated */
    size_t community_len;     /* bytes at community */
    struct spdu_pdu pdu;      /* the PDU */
};

/* A value in a varbind: what a GET returns or a SET carries. */
struct spdu_value {
    uint8_t tag; /* enum ber_tag: the value's type, or an exception (noSuchObject, ...) */
    union {
        int64_t i;  /* INTEGER */
        uint64_t u; /* Counter32, Gauge32, TimeTicks, Counter64 */
        struct {
            const uint8_t *ptr; /* OCTET STRING, IpAddress (4 bytes), Opaque; or OID contents when decoded */
            size_t len;         /* bytes at ptr */
        } bytes;
        const struct oid *oid; /* OBJECT IDENTIFIER, when encoding */
    } v;
};

/* One varbind as decoded. */
struct spdu_binding {
    struct oid name;         /* the variable's OID */
    struct spdu_value value; /* its value (OIDs as bytes: ber_oid_decode them) */
    const uint8_t *raw;      /* the whole encoded varbind, for echoing it back */
    size_t raw_len;          /* bytes at raw */
};

/**
 * @brief Decode a v1 or v2c message and check its PDU and every varbind are well-formed.
 * @return FLEET_OK; FLEET_ERR_PROTO for malformed or truncated input; FLEET_ERR_NOTFOUND when the
 * version is 3 (hand the message to susm.h); FLEET_ERR_LIMIT past SPDU_MAX_BINDINGS_DECODED.
 */
enum fleet_err spdu_message_decode(const uint8_t *buf, size_t len, struct spdu_message *msg);

/** @brief Decode one PDU element (as found in a v3 scoped PDU); same checks as above. */
enum fleet_err spdu_pdu_decode(struct ber_reader *r, struct spdu_pdu *pdu);

/* Iterator over a PDU's varbinds. */
struct spdu_binding_iter {
    struct ber_reader r; /* what is left of the variable-bindings */
};

void spdu_binding_iter_init(struct spdu_binding_iter *it, const struct spdu_pdu *pdu);

/** @return FLEET_OK with @p b filled, FLEET_ERR_NOTFOUND at the end, FLEET_ERR_PROTO if malformed. */
enum fleet_err spdu_binding_next(struct spdu_binding_iter *it, struct spdu_binding *b);

/*
 * Encoder: varbinds go forward from buf + headroom; spdu_enc_finish_*() writes the headers
 * backwards into the headroom, so nothing is moved or measured twice.
 */
struct spdu_encoder {
    uint8_t *buf;    /* caller's buffer */
    size_t cap;      /* its size */
    size_t headroom; /* bytes kept before the varbinds for the headers */
    size_t pos;      /* end of the varbinds written so far (offset in buf) */
    size_t budget;   /* most bytes the variable-bindings contents may take */
    uint32_t count;  /* varbinds written */
};

/* Headroom that is always enough for a v1/v2c message header with a community of @p community_len. */
#define SPDU_HEADROOM(community_len) (64u + (community_len))

/**
 * @brief Start an encoding.
 * @param[in] budget Most bytes the variable-bindings contents may take (the caller derives it from
 * the message size limit with spdu_bindings_budget()).
 */
void spdu_enc_init(struct spdu_encoder *e, uint8_t *buf, size_t cap, size_t headroom, size_t budget);

/**
 * @return Bytes left for variable-bindings contents when a v1/v2c message may take at most
 * @p max_msg_bytes with this community and request-id (lengths counted at their largest).
 */
size_t spdu_bindings_budget(size_t max_msg_bytes, size_t community_len, int32_t request_id);

/**
 * @brief Append one varbind.
 * @return FLEET_OK, or FLEET_ERR_LIMIT when it would pass the budget or the buffer (nothing written).
 */
enum fleet_err spdu_enc_binding(struct spdu_encoder *e, const struct oid *name,
                                const struct spdu_value *value);

/** @brief Append an already encoded varbind (for echoing a request's). Same limits. */
enum fleet_err spdu_enc_raw(struct spdu_encoder *e, const uint8_t *raw, size_t raw_len);

/** @brief Drop every varbind written (for a tooBig answer). */
void spdu_enc_reset(struct spdu_encoder *e);

/**
 * @brief Write the PDU header in front of the varbinds.
 * @param[in] error_status error-status (or non-repeaters for GETBULK).
 * @param[in] error_index error-index (or max-repetitions for GETBULK).
 * @param[out] out Start of the encoded PDU in e->buf.
 * @param[out] out_len Its length.
 */
void spdu_enc_finish_pdu(struct spdu_encoder *e, uint8_t type, int32_t request_id, int32_t error_status,
                         int32_t error_index, uint8_t **out, size_t *out_len);

/** @brief Write the PDU and v1/v2c message headers in front of the varbinds; same outputs. */
void spdu_enc_finish_message(struct spdu_encoder *e, int32_t version, const uint8_t *community,
                             size_t community_len, uint8_t type, int32_t request_id, int32_t error_status,
                             int32_t error_index, uint8_t **out, size_t *out_len);

/* An RFC 1157 Trap-PDU's fields before its variable-bindings. */
struct spdu_trap_v1 {
    const struct oid *enterprise; /* enterprise: the notification's source, 2..OID_MAX_SUBIDS arcs */
    uint8_t agent_addr[4];        /* agent-addr: the IPv4 address of the sending agent, network order */
    int32_t generic;              /* generic-trap: 0 coldStart .. 5 egpNeighborLoss, 6 enterpriseSpecific */
    int32_t specific;             /* specific-trap: the enterprise's code (generic 6), else 0 */
    uint32_t time_stamp;          /* time-stamp: sysUpTime at the event, hundredths of a second */
};

/* Headroom always enough for a v1 Trap-PDU message header: the community and an enterprise OID of up to
 * OID_MAX_SUBIDS arcs of 5 bytes each, beside the fixed fields. */
#define SPDU_TRAP_V1_HEADROOM(community_len) (SPDU_HEADROOM(community_len) + 8u + 5u * OID_MAX_SUBIDS)

/**
 * @return Bytes left for variable-bindings contents when a v1 Trap-PDU message with this community and
 * @p trap's fields may take at most @p max_msg_bytes (lengths counted at their largest).
 */
size_t spdu_trap_v1_bindings_budget(size_t max_msg_bytes, size_t community_len,
                                    const struct spdu_trap_v1 *trap);

/**
 * @brief Write the Trap-PDU (RFC 1157 section 4.1.6, tag SPDU_TRAP_V1) and the v1 message headers in
 * front of the varbinds. The encoder must have been started with SPDU_TRAP_V1_HEADROOM(community_len).
 * @param[out] out Start of the encoded message in e->buf.
 * @param[out] out_len Its length.
 */
void spdu_enc_finish_trap_v1(struct spdu_encoder *e, const uint8_t *community, size_t community_len,
                             const struct spdu_trap_v1 *trap, uint8_t **out, size_t *out_len);

#endif
