/*
 * Notification encodings per SNMP version. v2c and v3 share the varbind
 * list of RFC 3416 section 4.2.6 (sysUpTime.0, snmpTrapOID.0, the objects,
 * then the device's identity); v1 carries the same event in the Trap-PDU's
 * own fields (RFC 3584 section 3.2) and keeps only the objects. Keys of a
 * v3 user are localized per message (one hash per key, RFC 3414 A.2):
 * cheaper than a per-device cache at 30k devices; cache per device if a
 * profile ever shows it.
 */
#include "trap_pdu.h"

#include <string.h>

/* sysUpTime.0 and snmpTrapOID.0 (RFC 3418), the first two varbinds of every v2 notification. */
static const struct oid trap_sysuptime_oid = {.len = 9, .sub = {1, 3, 6, 1, 2, 1, 1, 3, 0}};
static const struct oid trap_snmptrapoid_oid = {.len = 11, .sub = {1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0}};
/* The identity appended after a named origin's objects: snmpTrapAddress.0 (RFC 3584) and sysName.0. */
static const struct oid trap_snmptrapaddress_oid = {.len = 10, .sub = {1, 3, 6, 1, 6, 3, 18, 1, 3, 0}};
static const struct oid trap_sysname_oid = {.len = 9, .sub = {1, 3, 6, 1, 2, 1, 1, 5, 0}};
/* fleetsimRunTag.0 (beside fleetsimEventId.0, event_id.h): the run's --run-tag, so a shared collector's
 * traps can be picked out by run (reconcile --run-tag). */
static const struct oid trap_run_tag_oid = {.len = 10, .sub = {1, 3, 6, 1, 4, 1, 32473, 1, 2, 0}};
/* snmpTraps (SNMPv2-MIB): the generic traps are its arcs 1..6 and their v1 enterprise is snmpTraps. */
static const struct oid trap_snmptraps_oid = {.len = 9, .sub = {1, 3, 6, 1, 6, 3, 1, 1, 5}};
/* generic-trap of a notification that is none of the six generic ones (RFC 1157 enterpriseSpecific). */
#define TRAP_PDU_ENTERPRISE_SPECIFIC 6

enum fleet_err
trap_pdu_v1_map(const struct oid *trap_oid, struct oid *enterprise, int32_t *generic, int32_t *specific)
{
    uint32_t n = trap_snmptraps_oid.len;
    uint32_t last;

    if (trap_oid->len < 3 || trap_oid->sub[trap_oid->len - 1] > INT32_MAX) {
        return FLEET_ERR_INVAL;
    }
    last = trap_oid->sub[trap_oid->len - 1];
    if (trap_oid->len == n + 1 && !memcmp(trap_oid->sub, trap_snmptraps_oid.sub, n * sizeof *trap_oid->sub) &&
        last >= 1 && last <= 6) {
        *enterprise = trap_snmptraps_oid;
        *generic = (int32_t)last - 1;
        *specific = 0;
        return FLEET_OK;
    }
    /* RFC 3584 3.2 (1)(c): drop the last arc, and the 0 that v1-to-v2 mapping puts before it. */
    *enterprise = *trap_oid;
    enterprise->len--;
    if (enterprise->len > 2 && enterprise->sub[enterprise->len - 1] == 0) {
        enterprise->len--;
    }
    *generic = TRAP_PDU_ENTERPRISE_SPECIFIC;
    *specific = (int32_t)last;
    return FLEET_OK;
}

/* The objects, then the device's identity: sysName.0 always (named origin), snmpTrapAddress.0 only when
 * @p with_address (v2: it names the IPv4 device; v1 has agent-addr for that). */
static enum fleet_err
trap_pdu_objects(struct spdu_encoder *e, const struct trap_pdu_in *in, int with_address, int v1)
{
    enum fleet_err rc = FLEET_OK;

    for (size_t i = 0; !rc && i < in->varbind_count; i++) {
        if (v1 && in->varbinds[i].value.tag == BER_COUNTER64) {
            continue; /* RFC 3584 3.2 (4): v1 has no Counter64 */
        }
        rc = spdu_enc_binding(e, in->varbinds[i].name, &in->varbinds[i].value);
    }
    if (!rc && in->from->name && with_address && !in->v6) {
        /* Who sent it, whatever the datagram's source says (RFC 3416 4.2.6 allows further objects). */
        uint32_t a = in->from->addr;
        uint8_t addr[4] = {(uint8_t)(a >> 24), (uint8_t)(a >> 16), (uint8_t)(a >> 8), (uint8_t)a};
        struct spdu_value v = {.tag = BER_IPADDRESS, .v.bytes = {addr, sizeof addr}};
        rc = spdu_enc_binding(e, &trap_snmptrapaddress_oid, &v);
    }
    if (!rc && in->from->name) {
        /* snmpTrapAddress is an IpAddress (RFC 3584): an IPv6 device names itself by sysName.0 alone */
        struct spdu_value n = {.tag = BER_OCTET_STRING,
                               .v.bytes = {(const uint8_t *)in->from->name, strlen(in->from->name)}};
        rc = spdu_enc_binding(e, &trap_sysname_oid, &n);
    }
    if (!rc && in->from->name && in->from->run_tag) {
        struct spdu_value t = {.tag = BER_OCTET_STRING,
                               .v.bytes = {(const uint8_t *)in->from->run_tag, strlen(in->from->run_tag)}};
        rc = spdu_enc_binding(e, &trap_run_tag_oid, &t);
    }
    return rc;
}

/* The v2 varbind list: sysUpTime.0, snmpTrapOID.0, the objects, the identity. */
static enum fleet_err
trap_pdu_bindings_v2(struct spdu_encoder *e, const struct trap_pdu_in *in)
{
    struct spdu_value uptime = {.tag = BER_TIMETICKS, .v.u = in->sysuptime_ticks};
    struct spdu_value oid = {.tag = BER_OID, .v.oid = in->trap_oid};
    enum fleet_err rc;

    rc = spdu_enc_binding(e, &trap_sysuptime_oid, &uptime);
    if (!rc) {
        rc = spdu_enc_binding(e, &trap_snmptrapoid_oid, &oid);
    }
    if (!rc) {
        rc = trap_pdu_objects(e, in, 1, 0);
    }
    return rc;
}

enum fleet_err
trap_pdu_encode_v2c(const struct trap_pdu_in *in, const uint8_t *community, size_t community_len,
                    uint8_t pdu_type, int32_t request_id, size_t max_msg_bytes, uint8_t *buf, size_t cap,
                    uint8_t **msg, size_t *msg_len)
{
    struct spdu_encoder e;
    enum fleet_err rc;

    spdu_enc_init(&e, buf, cap, SPDU_HEADROOM(community_len),
                  spdu_bindings_budget(max_msg_bytes, community_len, request_id));
    rc = trap_pdu_bindings_v2(&e, in);
    if (!rc) {
        spdu_enc_finish_message(&e, SPDU_V2C, community, community_len, pdu_type, request_id, 0, 0, msg,
                                msg_len);
    }
    return rc;
}

enum fleet_err
trap_pdu_encode_v1(const struct trap_pdu_in *in, const uint8_t *community, size_t community_len,
                   size_t max_msg_bytes, uint8_t *buf, size_t cap, uint8_t **msg, size_t *msg_len)
{
    struct oid enterprise;
    struct spdu_trap_v1 t = {.enterprise = &enterprise, .time_stamp = in->sysuptime_ticks};
    struct spdu_encoder e;
    enum fleet_err rc;

    rc = trap_pdu_v1_map(in->trap_oid, &enterprise, &t.generic, &t.specific);
    if (rc) {
        goto cleanup;
    }
    if (!in->v6) {
        uint32_t a = in->from->addr;
        t.agent_addr[0] = (uint8_t)(a >> 24);
        t.agent_addr[1] = (uint8_t)(a >> 16);
        t.agent_addr[2] = (uint8_t)(a >> 8);
        t.agent_addr[3] = (uint8_t)a;
    }
    spdu_enc_init(&e, buf, cap, SPDU_TRAP_V1_HEADROOM(community_len),
                  spdu_trap_v1_bindings_budget(max_msg_bytes, community_len, &t));
    rc = trap_pdu_objects(&e, in, 0, 1);
    if (!rc) {
        spdu_enc_finish_trap_v1(&e, community, community_len, &t, msg, msg_len);
    }
cleanup:
    return rc;
}

enum fleet_err
trap_pdu_localize(const struct respond_v3_user *user, const uint8_t *engine_id, size_t engine_id_len,
                  struct susm_user *out)
{
    memset(out, 0, sizeof *out);
    memcpy(out->name, user->name, user->name_len);
    out->name_len = user->name_len;
    out->auth = (enum susm_auth)user->auth;
    out->priv = (enum susm_priv)user->priv;
    if (out->auth != SUSM_AUTH_NONE &&
        (susm_localize_key(out->auth, user->auth_ku, engine_id, engine_id_len, out->auth_key) ||
         (out->priv != SUSM_PRIV_NONE &&
          susm_localize_key(out->auth, user->priv_ku, engine_id, engine_id_len, out->priv_key)))) {
        return FLEET_ERR_SYS;
    }
    return FLEET_OK;
}

/* The v3 header around a notification PDU of @p user, for @p engine. */
static void
trap_pdu_v3_out(const struct susm_user *user, const struct susm_engine *engine, uint8_t pdu_type,
                int32_t request_id, uint64_t salt, size_t max_msg_bytes, struct susm_out *o)
{
    memset(o, 0, sizeof *o);
    o->msg_id = request_id;
    o->max_size = (int32_t)max_msg_bytes < SUSM_MIN_MSG_SIZE ? SUSM_MIN_MSG_SIZE : (int32_t)max_msg_bytes;
    o->flags = (uint8_t)((user->auth != SUSM_AUTH_NONE ? SUSM_FLAG_AUTH : 0) |
                         (user->priv != SUSM_PRIV_NONE ? SUSM_FLAG_PRIV : 0) |
                         (pdu_type == SPDU_INFORM ? SUSM_FLAG_REPORTABLE : 0));
    o->engine_id = engine->id;
    o->engine_id_len = engine->id_len;
    o->engine_boots = engine->boots;
    o->engine_time = engine->time_s;
    o->user_name = user->name;
    o->user_name_len = user->name_len;
    o->user = user;
    /* The context is the authoritative engine's default context. */
    o->context_engine_id = engine->id;
    o->context_engine_id_len = engine->id_len;
    o->salt = salt;
}

enum fleet_err
trap_pdu_encode_v3_pdu(const struct trap_pdu_in *in, const struct respond_v3_user *user, uint8_t pdu_type,
                       int32_t request_id, size_t max_msg_bytes, uint8_t *buf, size_t cap, uint8_t **pdu,
                       size_t *pdu_len)
{
    /* The receiver's engine is not known yet: budget for the longest engine ID (RFC 3411: 32 bytes). */
    static const uint8_t longest_id[SUSM_ENGINE_ID_MAX_BYTES] = {0x80};
    struct susm_engine longest = {.id = longest_id, .id_len = sizeof longest_id};
    struct susm_user u = {.auth = (enum susm_auth)user->auth, .priv = (enum susm_priv)user->priv};
    struct susm_out o;
    struct spdu_encoder e;
    enum fleet_err rc;

    memcpy(u.name, user->name, user->name_len);
    u.name_len = user->name_len;
    trap_pdu_v3_out(&u, &longest, pdu_type, request_id, 0, max_msg_bytes, &o);
    spdu_enc_init(&e, buf, cap, TRAP_PDU_V3_HEADROOM, susm_bindings_budget(max_msg_bytes, &o, request_id));
    rc = trap_pdu_bindings_v2(&e, in);
    if (!rc) {
        spdu_enc_finish_pdu(&e, pdu_type, request_id, 0, 0, pdu, pdu_len);
    }
    return rc;
}

enum fleet_err
trap_pdu_wrap_v3(const uint8_t *pdu, size_t pdu_len, const struct susm_user *user,
                 const struct susm_engine *engine, uint8_t pdu_type, int32_t request_id, uint64_t salt,
                 size_t max_msg_bytes, uint8_t *buf, size_t cap, size_t *msg_len)
{
    struct susm_out o;

    trap_pdu_v3_out(user, engine, pdu_type, request_id, salt, max_msg_bytes, &o);
    return susm_encode(&o, pdu, pdu_len, buf, cap < max_msg_bytes ? cap : max_msg_bytes, msg_len);
}

enum fleet_err
trap_pdu_encode_v3(const struct trap_pdu_in *in, const struct respond_v3_user *user,
                   const struct susm_engine *engine, uint8_t pdu_type, int32_t request_id, uint64_t salt,
                   size_t max_msg_bytes, uint8_t *scratch, size_t scratch_cap, uint8_t *buf, size_t cap,
                   uint8_t **msg, size_t *msg_len)
{
    struct susm_user u;
    struct susm_out o;
    struct spdu_encoder e;
    uint8_t *pdu;
    size_t pdu_len;
    enum fleet_err rc;

    /* Step 1: the user's keys, localized for the authoritative engine. */
    rc = trap_pdu_localize(user, engine->id, engine->id_len, &u);
    if (rc) {
        goto cleanup;
    }
    /* Step 2: the PDU, within what the v3 headers leave of the message size, then wrapped. */
    trap_pdu_v3_out(&u, engine, pdu_type, request_id, salt, max_msg_bytes, &o);
    spdu_enc_init(&e, scratch, scratch_cap, TRAP_PDU_V3_HEADROOM,
                  susm_bindings_budget(max_msg_bytes, &o, request_id));
    rc = trap_pdu_bindings_v2(&e, in);
    if (rc) {
        goto cleanup;
    }
    spdu_enc_finish_pdu(&e, pdu_type, request_id, 0, 0, &pdu, &pdu_len);
    rc = susm_encode(&o, pdu, pdu_len, buf, cap < max_msg_bytes ? cap : max_msg_bytes, msg_len);
    if (!rc) {
        *msg = buf;
    }
cleanup:
    return rc;
}
