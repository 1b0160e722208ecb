/*
 * Fuzz harness of the SNMP codec shared by the agent and the stress
 * client: BER (wire/ber.h), v1/v2c messages and PDUs (wire/spdu.h) and
 * SNMPv3 with USM (wire/susm.h), both the agent's and the client's side.
 *
 * Input: byte 0 is a control byte, the rest one datagram.
 *   bits 0-2  the user's authentication protocol (enum susm_auth; 7 is SHA-1)
 *   bit 3     the user has AES privacy (when it authenticates)
 *   bit 4     fix up the datagram first: encrypt its encryptedPDU contents and
 *             sign it as the user would, so that a mutated message still passes
 *             the digest and decrypts to the fuzzer's bytes and the checks
 *             behind them (time window, scopedPDU decoding) are reached
 *   bit 5     the agent's engine ID is the message's own (when 5..32 bytes)
 *   bit 6     the agent's clock is the message's (in the time window)
 * The user has the name the message carries, the passwords of the unit
 * tests ("maplesyrup", "privacy-pass"), and keys localized for the
 * agent's engine ID; without bits 5 and 6 the engine is a fixed one
 * (boots 7, time 1000).
 *
 * Checks: a v1/v2c message that decodes has only well-formed varbinds,
 * each name and value survives encoding and decoding again, and the
 * message echoed back decodes to the same PDU. A v3 message the agent
 * accepts is answered with a response the client side accepts with the
 * same request-id and varbinds; a failed one that wants a Report gets one
 * that fits SUSM_REPORT_MAX_BYTES and that the client reads back as the same
 * usmStats counter.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "ber.h"
#include "fuzz.h"
#include "spdu.h"
#include "susm.h"

/* Largest datagram looked at: a UDP payload. */
#define FZ_MAX_INPUT_BYTES 65508
/* Room the encoders get beyond the datagram's size. */
#define FZ_SLACK_BYTES 1024
/* Authentication protocols there are keys for (enum susm_auth values 1..6). */
#define FZ_AUTH_COUNT 7
/* AES-128 key and IV bytes (RFC 3826). */
#define FZ_AES_BYTES 16
/* Room for an OID printed as text. */
#define FZ_OID_TEXT_BYTES (OID_MAX_SUBIDS * 11 + 1)

static const uint8_t fz_auth_pw[] = "maplesyrup";
static const uint8_t fz_priv_pw[] = "privacy-pass";
static const uint8_t fz_engine_id[] = {0x80, 0x00, 0x1f, 0x88, 0x80, 0x66, 0x6c, 0x65, 0x65, 0x74, 0x01};
static const uint8_t fz_default_name[] = "fuzzuser";

/* Ku of both passwords per authentication protocol: derived once (1 MiB hashed each), then read only. */
static uint8_t fz_auth_ku[FZ_AUTH_COUNT][SUSM_KEY_MAX_BYTES];
static uint8_t fz_priv_ku[FZ_AUTH_COUNT][SUSM_KEY_MAX_BYTES];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    for (int a = SUSM_AUTH_MD5; a < FZ_AUTH_COUNT; a++) {
        fz_require(susm_password_to_key((enum susm_auth)a, fz_auth_pw, sizeof fz_auth_pw - 1,
                                        fz_auth_ku[a]) == FLEET_OK &&
                       susm_password_to_key((enum susm_auth)a, fz_priv_pw, sizeof fz_priv_pw - 1,
                                            fz_priv_ku[a]) == FLEET_OK,
                   "cannot derive keys");
    }
    return 0;
}

/* Where the fields of a v3 datagram are, found independently of susm.c. */
struct fz_v3 {
    uint8_t flags;              /* msgFlags */
    const uint8_t *engine_id;   /* msgAuthoritativeEngineID */
    size_t engine_id_len;       /* its bytes */
    int64_t boots;              /* msgAuthoritativeEngineBoots */
    int64_t time_s;             /* msgAuthoritativeEngineTime */
    const uint8_t *user_name;   /* msgUserName */
    size_t user_name_len;       /* its bytes */
    uint8_t *auth_params;       /* msgAuthenticationParameters contents */
    size_t auth_params_len;     /* its bytes */
    const uint8_t *priv_params; /* msgPrivacyParameters contents */
    size_t priv_params_len;     /* its bytes */
    uint8_t *encrypted;         /* encryptedPDU contents when msgData is an OCTET STRING, else NULL */
    size_t encrypted_len;       /* its bytes */
};

/* @return 0 when @p buf looks enough like a v3 message to find its fields. */
static int
fz_locate(uint8_t *buf, size_t len, struct fz_v3 *v)
{
    struct ber_reader r = {buf, buf + len}, seq, global, sec_r, usm;
    const uint8_t *flags, *sec, *ap, *enc;
    size_t flags_len, sec_len;
    int64_t n;

    memset(v, 0, sizeof *v);
    if (ber_read_enter(&r, BER_SEQUENCE, &seq) || ber_read_int(&seq, BER_INTEGER, &n) || n != SPDU_V3 ||
        ber_read_enter(&seq, BER_SEQUENCE, &global) || ber_read_int(&global, BER_INTEGER, &n) ||
        ber_read_int(&global, BER_INTEGER, &n) ||
        ber_read_bytes(&global, BER_OCTET_STRING, &flags, &flags_len) || flags_len != 1 ||
        ber_read_bytes(&seq, BER_OCTET_STRING, &sec, &sec_len)) {
        return -1;
    }
    v->flags = flags[0];
    sec_r.p = sec;
    sec_r.end = sec + sec_len;
    if (ber_read_enter(&sec_r, BER_SEQUENCE, &usm) ||
        ber_read_bytes(&usm, BER_OCTET_STRING, &v->engine_id, &v->engine_id_len) ||
        ber_read_int(&usm, BER_INTEGER, &v->boots) || ber_read_int(&usm, BER_INTEGER, &v->time_s) ||
        ber_read_bytes(&usm, BER_OCTET_STRING, &v->user_name, &v->user_name_len) ||
        ber_read_bytes(&usm, BER_OCTET_STRING, &ap, &v->auth_params_len) ||
        ber_read_bytes(&usm, BER_OCTET_STRING, &v->priv_params, &v->priv_params_len)) {
        return -1;
    }
    v->auth_params = buf + (ap - buf);
    if (!ber_read_bytes(&seq, BER_OCTET_STRING, &enc, &v->encrypted_len)) {
        v->encrypted = buf + (enc - buf);
    }
    return 0;
}

/* Encrypt and sign @p buf in place as @p user would have sent it (RFC 3826 IV, RFC 3414 HMAC). */
static void
fz_fixup(uint8_t *buf, size_t len, const struct fz_v3 *v, const struct susm_user *user)
{
    static const char *const digests[FZ_AUTH_COUNT] = {NULL,     "MD5",    "SHA1",  "SHA224",
                                                       "SHA256", "SHA384", "SHA512"};
    uint8_t iv[FZ_AES_BYTES], mac[EVP_MAX_MD_SIZE];
    size_t mac_len = 0;
    size_t want = susm_auth_mac_bytes(user->auth);

    if ((v->flags & SUSM_FLAG_PRIV) && user->priv == SUSM_PRIV_AES128 && v->encrypted &&
        v->priv_params_len == SUSM_PRIV_PARAMS_BYTES && v->encrypted_len <= INT32_MAX) {
        EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
        int out_len = 0, final_len = 0;
        uint32_t boots = (uint32_t)v->boots, time_s = (uint32_t)v->time_s;

        for (int i = 0; i < 4; i++) {
            iv[i] = (uint8_t)(boots >> (24 - 8 * i));
            iv[4 + i] = (uint8_t)(time_s >> (24 - 8 * i));
        }
        memcpy(iv + 8, v->priv_params, SUSM_PRIV_PARAMS_BYTES);
        fz_require(ctx && EVP_EncryptInit_ex(ctx, EVP_aes_128_cfb128(), NULL, user->priv_key, iv) &&
                       EVP_EncryptUpdate(ctx, v->encrypted, &out_len, v->encrypted, (int)v->encrypted_len) &&
                       EVP_EncryptFinal_ex(ctx, v->encrypted + out_len, &final_len),
                   "AES failed");
        EVP_CIPHER_CTX_free(ctx);
    }
    if ((v->flags & SUSM_FLAG_AUTH) && want && v->auth_params_len == want) {
        memset(v->auth_params, 0, want);
        fz_require(EVP_Q_mac(NULL, "HMAC", NULL, digests[user->auth], NULL, user->auth_key,
                             susm_auth_key_bytes(user->auth), buf, len, mac, sizeof mac, &mac_len) != NULL &&
                       mac_len >= want,
                   "HMAC failed");
        memcpy(v->auth_params, mac, want);
    }
}

/* The agent's lookup: the one harness user, under whatever name it has. */
static const struct susm_user *
fz_lookup(void *arg, const uint8_t *name, size_t name_len)
{
    const struct susm_user *user = arg;

    return user->name_len == name_len && !memcmp(user->name, name, name_len) ? user : NULL;
}

/* Two decoded values must be equal (OIDs compared as their contents). */
static void
fz_same_value(const struct spdu_value *a, const struct spdu_value *b)
{
    fz_require(a->tag == b->tag, "value tag changed");
    switch (a->tag) {
    case BER_INTEGER:
        fz_require(a->v.i == b->v.i, "INTEGER changed");
        break;
    case BER_COUNTER32:
    case BER_GAUGE32:
    case BER_TIMETICKS:
    case BER_COUNTER64:
        fz_require(a->v.u == b->v.u, "unsigned value changed");
        break;
    default:
        fz_require(a->v.bytes.len == b->v.bytes.len &&
                       (!a->v.bytes.len || !memcmp(a->v.bytes.ptr, b->v.bytes.ptr, a->v.bytes.len)),
                   "bytes changed");
        break;
    }
}

/* Encode one decoded varbind alone and decode it back: name and value must survive. */
static void
fz_binding_roundtrip(const struct spdu_binding *b)
{
    uint8_t buf[SPDU_HEADROOM(0) + 4096], *pdu, text_buf[FZ_OID_TEXT_BYTES];
    struct spdu_value value = b->value;
    struct oid value_oid, parsed;
    struct spdu_binding_iter it;
    struct spdu_binding back;
    struct ber_reader r;
    struct spdu_encoder e;
    struct spdu_pdu p;
    size_t pdu_len;

    /* The name's text form parses back to it. */
    oid_format(&b->name, (char *)text_buf, sizeof text_buf);
    fz_require(oid_parse((char *)text_buf, &parsed) == FLEET_OK && oid_cmp(&parsed, &b->name) == 0,
               "OID text does not parse back");

    if (b->raw_len > sizeof buf - SPDU_HEADROOM(0)) {
        return;
    }
    if (value.tag == BER_OID) {
        fz_require(ber_oid_decode(value.v.bytes.ptr, value.v.bytes.len, &value_oid) == FLEET_OK,
                   "checked OID value does not decode");
        value.v.oid = &value_oid;
    }
    spdu_enc_init(&e, buf, sizeof buf, SPDU_HEADROOM(0), sizeof buf - SPDU_HEADROOM(0));
    fz_require(spdu_enc_binding(&e, &b->name, &value) == FLEET_OK, "decoded varbind does not encode");
    spdu_enc_finish_pdu(&e, SPDU_RESPONSE, 1, 0, 0, &pdu, &pdu_len);
    r.p = pdu;
    r.end = pdu + pdu_len;
    fz_require(spdu_pdu_decode(&r, &p) == FLEET_OK && p.binding_count == 1,
               "encoded varbind does not decode");
    spdu_binding_iter_init(&it, &p);
    fz_require(spdu_binding_next(&it, &back) == FLEET_OK, "encoded varbind does not iterate");
    fz_require(oid_cmp(&back.name, &b->name) == 0, "name changed");
    if (b->value.tag == BER_OID) {
        struct oid again;
        fz_require(ber_oid_decode(back.value.v.bytes.ptr, back.value.v.bytes.len, &again) == FLEET_OK &&
                       oid_cmp(&again, &value_oid) == 0,
                   "OID value changed");
    } else {
        fz_same_value(&b->value, &back.value);
    }
}

/* Every varbind of a decoded PDU iterates, as many as counted; each survives a roundtrip. */
static void
fz_check_bindings(const struct spdu_pdu *pdu, int roundtrip)
{
    struct spdu_binding_iter it;
    struct spdu_binding b;
    uint32_t n = 0;
    enum fleet_err rc;

    spdu_binding_iter_init(&it, pdu);
    while ((rc = spdu_binding_next(&it, &b)) == FLEET_OK) {
        n++;
        if (roundtrip) {
            fz_binding_roundtrip(&b);
        }
    }
    fz_require(rc == FLEET_ERR_NOTFOUND, "a checked varbind failed to iterate");
    fz_require(n == pdu->binding_count, "varbind count differs from the check pass");
}

/* Echo the varbinds of @p pdu into @p e; @return 0, or -1 when they do not fit. */
static int
fz_echo(struct spdu_encoder *e, const struct spdu_pdu *pdu)
{
    struct spdu_binding_iter it;
    struct spdu_binding b;

    spdu_binding_iter_init(&it, pdu);
    while (spdu_binding_next(&it, &b) == FLEET_OK) {
        if (spdu_enc_raw(e, b.raw, b.raw_len)) {
            return -1;
        }
    }
    return 0;
}

static void
fz_v1v2c(const uint8_t *data, size_t len)
{
    struct spdu_message m, back;
    struct spdu_encoder e;
    size_t cap, out_len;
    uint8_t *buf, *out;
    enum fleet_err rc;

    rc = spdu_message_decode(data, len, &m);
    if (rc) {
        fz_require(rc == FLEET_ERR_PROTO || rc == FLEET_ERR_NOTFOUND || rc == FLEET_ERR_LIMIT,
                   "bad return code");
        return;
    }
    fz_require(m.version == SPDU_V1 || m.version == SPDU_V2C, "version out of range");
    fz_check_bindings(&m.pdu, 1);

    /* The whole message echoed back decodes to the same PDU. */
    cap = SPDU_HEADROOM(m.community_len) + len;
    buf = malloc(cap);
    fz_require(buf != NULL, "out of memory");
    spdu_enc_init(&e, buf, cap, SPDU_HEADROOM(m.community_len), len);
    fz_require(!fz_echo(&e, &m.pdu), "echoed varbinds do not fit");
    spdu_enc_finish_message(&e, m.version, m.community, m.community_len, m.pdu.type, m.pdu.request_id,
                            m.pdu.error_status, m.pdu.error_index, &out, &out_len);
    fz_require(out_len <= len, "re-encoding grew the message");
    fz_require(spdu_message_decode(out, out_len, &back) == FLEET_OK, "echoed message does not decode");
    fz_require(back.version == m.version && back.community_len == m.community_len &&
                   !memcmp(back.community, m.community, m.community_len) && back.pdu.type == m.pdu.type &&
                   back.pdu.request_id == m.pdu.request_id && back.pdu.error_status == m.pdu.error_status &&
                   back.pdu.error_index == m.pdu.error_index &&
                   back.pdu.binding_count == m.pdu.binding_count &&
                   back.pdu.bindings_len == m.pdu.bindings_len &&
                   !memcmp(back.pdu.bindings, m.pdu.bindings, m.pdu.bindings_len),
               "echoed message differs");
    free(buf);
}

/* The client side reads what the agent side wrote: same counter in a Report, same PDU in a Response. */
static void
fz_client_reads(uint8_t *wire, size_t wire_len, const struct susm_user *user, const struct susm_msg *req,
                enum susm_report_kind report)
{
    enum susm_report_kind failure = SUSM_REPORT_NONE;
    struct susm_msg got;

    fz_require(susm_client_receive(wire, wire_len, user, &got, &failure) == FLEET_OK,
               "client refuses our message");
    fz_require(failure == SUSM_REPORT_NONE && got.scoped_ok, "client cannot verify our message");
    fz_require(got.msg_id == req->msg_id, "msgID not echoed");
    if (report) {
        uint32_t counter = 0;
        fz_require(got.pdu.type == SPDU_REPORT && susm_report_kind_of(&got.pdu, &counter) == report &&
                       counter == 1,
                   "Report names another counter");
        fz_require(got.pdu.request_id == (req->scoped_ok ? req->pdu.request_id : 0), "Report request-id");
    } else {
        fz_require(got.pdu.type == SPDU_RESPONSE && got.pdu.request_id == req->pdu.request_id &&
                       got.pdu.binding_count == req->pdu.binding_count &&
                       got.pdu.bindings_len == req->pdu.bindings_len &&
                       !memcmp(got.pdu.bindings, req->pdu.bindings, req->pdu.bindings_len),
                   "Response differs from the request's varbinds");
        fz_require((got.flags & (SUSM_FLAG_AUTH | SUSM_FLAG_PRIV)) ==
                       (req->flags & (SUSM_FLAG_AUTH | SUSM_FLAG_PRIV)),
                   "Response at another security level");
    }
}

static void
fz_v3(uint8_t control, const uint8_t *data, size_t len)
{
    enum susm_auth auth = (enum susm_auth)(control & 7) == 7 ? SUSM_AUTH_SHA1 : (enum susm_auth)(control & 7);
    struct susm_engine engine = {fz_engine_id, sizeof fz_engine_id, 7, 1000, 65507};
    enum susm_report_kind report = SUSM_REPORT_NONE, failure = SUSM_REPORT_NONE;
    size_t cap = len + FZ_SLACK_BYTES, out_len = 0;
    uint8_t *agent_buf = NULL, *client_buf = NULL, *enc_buf = NULL, *out = NULL;
    uint8_t engine_copy[SUSM_ENGINE_ID_MAX_BYTES];
    struct susm_user user;
    struct susm_msg msg;
    struct fz_v3 v;
    enum fleet_err rc;

    agent_buf = malloc(len ? len : 1);
    fz_require(agent_buf != NULL, "out of memory");
    memcpy(agent_buf, data, len);

    /* The user: the message's name, keys for the agent's engine. */
    memset(&user, 0, sizeof user);
    memcpy(user.name, fz_default_name, sizeof fz_default_name - 1);
    user.name_len = sizeof fz_default_name - 1;
    if (!fz_locate(agent_buf, len, &v)) {
        if (v.user_name_len >= 1 && v.user_name_len <= SUSM_USER_NAME_MAX_BYTES) {
            memcpy(user.name, v.user_name, v.user_name_len);
            user.name_len = v.user_name_len;
        }
        if ((control & 0x20) && v.engine_id_len >= 5 && v.engine_id_len <= SUSM_ENGINE_ID_MAX_BYTES) {
            engine.id = v.engine_id;
            engine.id_len = v.engine_id_len;
        }
        if ((control & 0x40) && v.boots >= 0 && v.boots < SUSM_MAX_ENGINE_BOOTS && v.time_s >= 0 &&
            v.time_s <= INT32_MAX) {
            engine.boots = (uint32_t)v.boots;
            engine.time_s = (uint32_t)v.time_s;
        }
    }
    user.auth = auth;
    user.priv = (auth != SUSM_AUTH_NONE && (control & 8)) ? SUSM_PRIV_AES128 : SUSM_PRIV_NONE;
    if (auth != SUSM_AUTH_NONE) {
        /* engine.id points into agent_buf, which the fixup and the agent modify: localize first. */
        fz_require(susm_localize_key(auth, fz_auth_ku[auth], engine.id, engine.id_len, user.auth_key) ==
                       FLEET_OK,
                   "cannot localize");
        if (user.priv) {
            fz_require(susm_localize_key(auth, fz_priv_ku[auth], engine.id, engine.id_len, user.priv_key) ==
                           FLEET_OK,
                       "cannot localize");
        }
    }
    /* The engine ID must stay as it was when the agent compares it: keep a copy. */
    memcpy(engine_copy, engine.id, engine.id_len);
    engine.id = engine_copy;
    if ((control & 0x10) && !fz_locate(agent_buf, len, &v)) {
        fz_fixup(agent_buf, len, &v, &user);
    }
    client_buf = malloc(len ? len : 1);
    fz_require(client_buf != NULL, "out of memory");
    memcpy(client_buf, agent_buf, len);

    /* Agent side. */
    rc = susm_agent_receive(agent_buf, len, &engine, fz_lookup, &user, &msg, &report);
    fz_require(rc == FLEET_OK || rc == FLEET_ERR_PROTO || rc == FLEET_ERR_LIMIT, "agent: bad return code");
    out = malloc(cap);
    enc_buf = malloc(cap + SPDU_HEADROOM(0));
    fz_require(out && enc_buf, "out of memory");
    if (rc == FLEET_OK && report != SUSM_REPORT_NONE) {
        fz_require(report >= SUSM_REPORT_UNSUPPORTED_SEC_LEVELS && report <= SUSM_REPORT_DECRYPTION_ERRORS,
                   "report kind out of range");
        if (msg.report_wanted) {
            uint8_t report_buf[SUSM_REPORT_MAX_BYTES];

            fz_require(susm_encode_report(&msg, &engine, report, 1, report_buf, sizeof report_buf,
                                          &out_len) == FLEET_OK,
                       "Report does not fit SUSM_REPORT_MAX_BYTES");
            fz_client_reads(report_buf, out_len,
                            report == SUSM_REPORT_NOT_IN_TIME_WINDOWS && msg.authenticated ? &user : NULL,
                            &msg, report);
        }
    } else if (rc == FLEET_OK) {
        struct spdu_encoder e;
        struct susm_out o;
        uint8_t *pdu;
        size_t pdu_len;

        fz_require(msg.scoped_ok, "accepted without a scopedPDU");
        fz_check_bindings(&msg.pdu, 0);
        susm_response_out(&msg, &engine, 42, &o);
        spdu_enc_init(&e, enc_buf, cap + SPDU_HEADROOM(0), SPDU_HEADROOM(0), cap);
        fz_require(!fz_echo(&e, &msg.pdu), "echoed varbinds do not fit");
        spdu_enc_finish_pdu(&e, SPDU_RESPONSE, msg.pdu.request_id, 0, 0, &pdu, &pdu_len);
        fz_require(susm_encode(&o, pdu, pdu_len, out, cap, &out_len) == FLEET_OK, "response refused");
        fz_client_reads(out, out_len, msg.user, &msg, SUSM_REPORT_NONE);
    }

    /* Client side, on the same bytes. */
    rc = susm_client_receive(client_buf, len, &user, &msg, &failure);
    fz_require(rc == FLEET_OK || rc == FLEET_ERR_PROTO || rc == FLEET_ERR_LIMIT, "client: bad return code");
    if (rc == FLEET_OK && failure == SUSM_REPORT_NONE && msg.scoped_ok) {
        fz_check_bindings(&msg.pdu, 0);
        susm_report_kind_of(&msg.pdu, NULL);
    }

    free(out);
    free(enc_buf);
    free(client_buf);
    free(agent_buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > FZ_MAX_INPUT_BYTES) {
        return 0;
    }
    fz_v1v2c(data + 1, size - 1);
    fz_v3(data[0], data + 1, size - 1);
    return 0;
}
