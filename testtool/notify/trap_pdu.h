/*
 * The bytes of one notification in each SNMP version the trap sender
 * speaks (--trap-version): an SNMPv1 Trap-PDU mapped from the v2 form as
 * RFC 3584 section 3.2 says, an SNMPv2-Trap-PDU or InformRequest-PDU in a
 * v2c message (RFC 1901), or the same PDU in an SNMPv3 message with USM
 * (RFC 3412, RFC 3414). The sender (trap.c) decides what to send and when;
 * this file only encodes, so the encodings can be tested byte by byte.
 */
#ifndef FLEET_TRAP_PDU_H
#define FLEET_TRAP_PDU_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "oid.h"
#include "plan.h"
#include "spdu.h"
#include "susm.h"
#include "trap_types.h"

/* Bytes of PDU headers kept in front of a v3 notification's varbinds (PDU tag, ids, varbind list). */
#define TRAP_PDU_V3_HEADROOM 64

/* What a notification says, whatever the version. */
struct trap_pdu_in {
    const struct trap_origin *from; /* the device: its address and name go into the message */
    int v6;                         /* 1: the device's address is IPv6 (no snmpTrapAddress, agent-addr 0) */
    uint32_t sysuptime_ticks;       /* the device's sysUpTime, hundredths of a second */
    const struct oid *trap_oid;     /* snmpTrapOID.0 */
    const struct trap_varbind *varbinds; /* the notification's objects, in order */
    size_t varbind_count;                /* entries at varbinds */
};

/**
 * @brief The RFC 3584 section 3.2 mapping of a v2 notification OID onto the v1 Trap-PDU's fields: one of
 * the six generic traps of SNMPv2-MIB (snmpTraps.1..6: coldStart .. egpNeighborLoss) gets generic-trap
 * 0..5, specific 0 and enterprise snmpTraps; any other gets enterpriseSpecific (6), its last arc as
 * specific-trap and the OID without its last arc (and without a 0 before it) as enterprise.
 * @param[out] enterprise The enterprise OID.
 * @param[out] generic generic-trap.
 * @param[out] specific specific-trap.
 * @return FLEET_OK; FLEET_ERR_INVAL for an OID v1 cannot carry (fewer than 3 arcs, or a last arc above
 * 2147483647).
 */
enum fleet_err trap_pdu_v1_map(const struct oid *trap_oid, struct oid *enterprise, int32_t *generic,
                               int32_t *specific);

/**
 * @brief Encode a v2c message: SNMPv2-Trap-PDU or InformRequest-PDU (@p pdu_type) holding sysUpTime.0,
 * snmpTrapOID.0, the objects, then (named origin) snmpTrapAddress.0 (IPv4) and sysName.0.
 * @param[in] buf Buffer of @p cap bytes with SPDU_HEADROOM(community_len) in front of @p max_msg_bytes.
 * @param[out] msg Start of the message in @p buf; @param[out] msg_len its length.
 * @return FLEET_OK; FLEET_ERR_LIMIT when it would pass @p max_msg_bytes; FLEET_ERR_INVAL for a value the
 * encoder refuses.
 */
enum fleet_err trap_pdu_encode_v2c(const struct trap_pdu_in *in, const uint8_t *community,
                                   size_t community_len, uint8_t pdu_type, int32_t request_id,
                                   size_t max_msg_bytes, uint8_t *buf, size_t cap, uint8_t **msg,
                                   size_t *msg_len);

/**
 * @brief Encode a v1 Trap-PDU message (RFC 1157 section 4.1.6): fields from trap_pdu_v1_map(), agent-addr
 * the device's IPv4 address (0.0.0.0 for an IPv6 device), time-stamp its sysUpTime; then the objects
 * except Counter64 ones (RFC 3584 section 3.2 step 4) and, for a named origin, sysName.0.
 * @param[in] buf Buffer of @p cap bytes with SPDU_TRAP_V1_HEADROOM(community_len) in front.
 * @return As trap_pdu_encode_v2c().
 */
enum fleet_err trap_pdu_encode_v1(const struct trap_pdu_in *in, const uint8_t *community,
                                  size_t community_len, size_t max_msg_bytes, uint8_t *buf, size_t cap,
                                  uint8_t **msg, size_t *msg_len);

/**
 * @brief Encode an SNMPv3 message (RFC 3412 section 6) with USM: the v2 PDU of trap_pdu_encode_v2c(),
 * as @p user localized for @p engine (the device's own engine for a trap, the receiver's for an inform),
 * at the user's level (authPriv, authNoPriv or noAuthNoPriv), reportable for an inform only.
 * @param[in] engine The authoritative engine: its ID, boots and time go into the message and its ID
 * localizes the keys (RFC 3414 A.2, one hash per key).
 * @param[in] salt AES salt; never reuse one with the same key, boots and time.
 * @param[in] scratch Buffer of @p scratch_cap bytes for the PDU before it is wrapped.
 * @param[out] buf Where the message goes, at most @p max_msg_bytes of its @p cap bytes.
 * @return As trap_pdu_encode_v2c(); FLEET_ERR_SYS when libcrypto fails.
 */
enum fleet_err trap_pdu_encode_v3(const struct trap_pdu_in *in, const struct respond_v3_user *user,
                                  const struct susm_engine *engine, uint8_t pdu_type, int32_t request_id,
                                  uint64_t salt, size_t max_msg_bytes, uint8_t *scratch, size_t scratch_cap,
                                  uint8_t *buf, size_t cap, uint8_t **msg, size_t *msg_len);

/**
 * @brief @p user's keys localized for the engine @p engine_id (RFC 3414 A.2: one hash per key).
 * @return FLEET_OK, FLEET_ERR_SYS when libcrypto fails.
 */
enum fleet_err trap_pdu_localize(const struct respond_v3_user *user, const uint8_t *engine_id,
                                 size_t engine_id_len, struct susm_user *out);

/**
 * @brief The PDU of a v3 notification alone (an inform's, kept until its receiver's engine is known): the
 * varbinds of trap_pdu_encode_v2c() within what a v3 message with the longest engine ID leaves of
 * @p max_msg_bytes, so trap_pdu_wrap_v3() never finds it too big.
 * @param[in] buf Buffer of @p cap bytes with TRAP_PDU_V3_HEADROOM in front.
 * @param[out] pdu Start of the PDU in @p buf; @param[out] pdu_len its length.
 * @return As trap_pdu_encode_v2c().
 */
enum fleet_err trap_pdu_encode_v3_pdu(const struct trap_pdu_in *in, const struct respond_v3_user *user,
                                      uint8_t pdu_type, int32_t request_id, size_t max_msg_bytes,
                                      uint8_t *buf, size_t cap, uint8_t **pdu, size_t *pdu_len);

/**
 * @brief Wrap a PDU from trap_pdu_encode_v3_pdu() into a v3 message for @p engine as @p user (keys
 * localized for it), at the user's level, reportable for an inform. The message starts at @p buf.
 * @return FLEET_OK; FLEET_ERR_LIMIT past @p max_msg_bytes or @p cap; FLEET_ERR_SYS when libcrypto fails.
 */
enum fleet_err trap_pdu_wrap_v3(const uint8_t *pdu, size_t pdu_len, const struct susm_user *user,
                                const struct susm_engine *engine, uint8_t pdu_type, int32_t request_id,
                                uint64_t salt, size_t max_msg_bytes, uint8_t *buf, size_t cap,
                                size_t *msg_len);

#endif
