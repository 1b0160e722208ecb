/*
 * SNMPv3 messages (RFC 3412) with the User-based Security Model (RFC 3414):
 * HMAC-MD5-96, HMAC-SHA-96 and the HMAC-SHA-2 family of RFC 7860 for
 * authentication, AES-128 CFB (RFC 3826) for privacy, and password-to-key
 * localization (RFC 3414 A.2). The agent side turns a received datagram into
 * a decoded PDU or into the Report it must answer with; the client side
 * (the stress client) discovers an engine, builds authenticated and
 * encrypted requests and verifies the responses. Both sides encode with
 * susm_encode() around a PDU finished by spdu_enc_finish_pdu(). Decoding
 * points into the datagram, which it decrypts in place.
 */
#ifndef FLEET_SUSM_H
#define FLEET_SUSM_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "spdu.h"

/* RFC 3411 SnmpEngineID: 5..32 bytes (0 only in discovery). */
#define SUSM_ENGINE_ID_MAX_BYTES 32
/* RFC 3414 msgUserName: SnmpAdminString (SIZE(0..32)). */
#define SUSM_USER_NAME_MAX_BYTES 32
/* The longest localized key: a SHA-512 digest. */
#define SUSM_KEY_MAX_BYTES 64
/* The longest authentication parameter: HMAC-SHA-512 truncated to 384 bits (RFC 7860). */
#define SUSM_MAC_MAX_BYTES 48
/* RFC 3826 section 3.1.2.1: msgPrivacyParameters of AES is the 64-bit salt. */
#define SUSM_PRIV_PARAMS_BYTES 8
/* RFC 3412 msgMaxSize: INTEGER (484..2147483647). */
#define SUSM_MIN_MSG_SIZE 484
/* RFC 3414 section 3.2 step 7: a message more than 150 s off the engine's clock is refused. */
#define SUSM_TIME_WINDOW_S 150
/* RFC 3414: snmpEngineBoots and snmpEngineTime are INTEGER (0..2147483647); boots at the top is latched. */
#define SUSM_MAX_ENGINE_BOOTS 2147483647u
/* Buffer enough for any Report this module encodes (headers, 32-byte names, one varbind). */
#define SUSM_REPORT_MAX_BYTES 512

/* msgFlags bits (RFC 3412 section 6.4). */
#define SUSM_FLAG_AUTH       0x01u
#define SUSM_FLAG_PRIV       0x02u
#define SUSM_FLAG_REPORTABLE 0x04u

/* Authentication protocols. */
enum susm_auth {
    SUSM_AUTH_NONE = 0,
    SUSM_AUTH_MD5,    /* usmHMACMD5AuthProtocol, 12-byte MAC */
    SUSM_AUTH_SHA1,   /* usmHMACSHAAuthProtocol, 12-byte MAC */
    SUSM_AUTH_SHA224, /* usmHMAC128SHA224AuthProtocol (RFC 7860), 16-byte MAC */
    SUSM_AUTH_SHA256, /* usmHMAC192SHA256AuthProtocol, 24-byte MAC */
    SUSM_AUTH_SHA384, /* usmHMAC256SHA384AuthProtocol, 32-byte MAC */
    SUSM_AUTH_SHA512, /* usmHMAC384SHA512AuthProtocol, 48-byte MAC */
};

/* Privacy protocols. DES is not offered: OpenSSL 3 keeps it in the legacy provider. */
enum susm_priv {
    SUSM_PRIV_NONE = 0,
    SUSM_PRIV_AES128, /* usmAesCfb128Protocol (RFC 3826): first 16 bytes of the localized key */
};

/*
 * usmStats counters (RFC 3414 section 5), numbered as their OID's last arc
 * (1.3.6.1.6.3.15.1.1.<n>.0). SUSM_REPORT_NONE means the message passed.
 */
enum susm_report_kind {
    SUSM_REPORT_NONE = 0,
    SUSM_REPORT_UNSUPPORTED_SEC_LEVELS = 1,
    SUSM_REPORT_NOT_IN_TIME_WINDOWS = 2,
    SUSM_REPORT_UNKNOWN_USER_NAMES = 3,
    SUSM_REPORT_UNKNOWN_ENGINE_IDS = 4,
    SUSM_REPORT_WRONG_DIGESTS = 5,
    SUSM_REPORT_DECRYPTION_ERRORS = 6,
};

/* A USM user with keys localized for one engine ID. */
struct susm_user {
    uint8_t name[SUSM_USER_NAME_MAX_BYTES]; /* usmUserName (not NUL-terminated) */
    size_t name_len;                        /* bytes in name, 1..32 */
    enum susm_auth auth;                    /* authentication protocol, NONE for noAuthNoPriv only */
    enum susm_priv priv;                    /* privacy protocol; needs auth */
    uint8_t auth_key[SUSM_KEY_MAX_BYTES];   /* localized auth key, susm_auth_key_bytes(auth) used */
    uint8_t priv_key[SUSM_KEY_MAX_BYTES];   /* localized priv key (localized with the auth hash) */
};

/* The local engine of one simulated device (agent side). */
struct susm_engine {
    const uint8_t *id;     /* snmpEngineID, 5..32 bytes */
    size_t id_len;         /* bytes at id */
    uint32_t boots;        /* snmpEngineBoots, 0..SUSM_MAX_ENGINE_BOOTS */
    uint32_t time_s;       /* snmpEngineTime: seconds since boots last changed */
    int32_t max_msg_bytes; /* msgMaxSize this engine announces, >= SUSM_MIN_MSG_SIZE */
};

/**
 * @brief Find a configured user of the device by name; returns NULL when there is none.
 * Called at most once per received message, on the loop that owns the device.
 */
typedef const struct susm_user *(*susm_user_lookup_fn)(void *arg, const uint8_t *name, size_t name_len);

/* A received v3 message. Pointers point into the (decrypted) datagram, which must outlive it. */
struct susm_msg {
    int32_t msg_id;                   /* msgID */
    int32_t max_size;                 /* msgMaxSize of the sender */
    uint8_t flags;                    /* msgFlags (SUSM_FLAG_*) */
    const uint8_t *engine_id;         /* msgAuthoritativeEngineID */
    size_t engine_id_len;             /* bytes at engine_id, 0..32 */
    uint32_t engine_boots;            /* msgAuthoritativeEngineBoots */
    uint32_t engine_time;             /* msgAuthoritativeEngineTime */
    const uint8_t *user_name;         /* msgUserName */
    size_t user_name_len;             /* bytes at user_name, 0..32 */
    const struct susm_user *user;     /* the user that authenticated it; NULL until found */
    int authenticated;                /* 1 once the HMAC was checked (SUSM_FLAG_AUTH messages) */
    int scoped_ok;                    /* 1 when the scopedPDU was decoded: the fields below are valid */
    const uint8_t *context_engine_id; /* contextEngineID */
    size_t context_engine_id_len;     /* bytes at context_engine_id */
    const uint8_t *context_name;      /* contextName */
    size_t context_name_len;          /* bytes at context_name */
    struct spdu_pdu pdu;              /* the PDU (varbinds checked well-formed) */
    int report_wanted;                /* agent: 1 when a failed message is to be answered by a Report */
};

/* What susm_encode() wraps around a PDU. */
struct susm_out {
    int32_t msg_id;                   /* msgID, 0..2147483647 */
    int32_t max_size;                 /* msgMaxSize, >= SUSM_MIN_MSG_SIZE */
    uint8_t flags;                    /* SUSM_FLAG_*; PRIV needs AUTH */
    const uint8_t *engine_id;         /* msgAuthoritativeEngineID (the agent's) */
    size_t engine_id_len;             /* bytes at engine_id, 0..32 */
    uint32_t engine_boots;            /* msgAuthoritativeEngineBoots */
    uint32_t engine_time;             /* msgAuthoritativeEngineTime */
    const uint8_t *user_name;         /* msgUserName */
    size_t user_name_len;             /* bytes at user_name, 0..32 */
    const struct susm_user *user;     /* keys; needed when flags has AUTH */
    const uint8_t *context_engine_id; /* contextEngineID */
    size_t context_engine_id_len;     /* bytes at context_engine_id */
    const uint8_t *context_name;      /* contextName */
    size_t context_name_len;          /* bytes at context_name */
    uint64_t salt;                    /* PRIV: AES salt; never reuse one with the same key, boots and time */
};

/* Client side: what the stress client knows of one agent's engine. */
struct susm_peer {
    uint8_t engine_id[SUSM_ENGINE_ID_MAX_BYTES]; /* the agent's snmpEngineID */
    size_t engine_id_len;                        /* bytes in engine_id; 0 before discovery */
    uint32_t boots;                              /* its snmpEngineBoots as last learned */
    uint32_t time_s;        /* its snmpEngineTime as last learned; the caller advances it */
    uint32_t latest_time_s; /* latestReceivedEngineTime (RFC 3414 section 2.3) */
};

/*
 * The names susm_auth_parse() and susm_priv_parse() accept, for error messages (which should add that
 * case does not matter).
 */
#define SUSM_AUTH_NAMES                                                                                      \
    "none, md5, sha (sha1, SHA-1), sha224 (SHA-224), sha256 (SHA-256), sha384 (SHA-384) or sha512 (SHA-512)"
#define SUSM_PRIV_NAMES "none or aes (AES-128, aes128)"

/**
 * @brief An authentication protocol from its name, in any case: ours (none, md5, sha, sha224 .. sha512),
 * net-snmp's (MD5, SHA, SHA-224 .. SHA-512) or SHA1 and SHA-1. The one table of these names is in susm.c.
 * @param[in] s The name, @p len bytes (need not be NUL-terminated).
 * @param[out] auth Set on success only.
 * @return FLEET_OK, FLEET_ERR_INVAL for any other name.
 */
enum fleet_err susm_auth_parse(const char *s, size_t len, enum susm_auth *auth);

/**
 * @brief A privacy protocol from its name, in any case: none, aes (net-snmp's AES), AES-128 or AES128.
 * @param[in] s The name, @p len bytes (need not be NUL-terminated).
 * @param[out] priv Set on success only.
 * @return FLEET_OK, FLEET_ERR_INVAL for any other name.
 */
enum fleet_err susm_priv_parse(const char *s, size_t len, enum susm_priv *priv);

/** @return Our lower-case name of @p auth ("none", "sha", "sha256"), static; "" for a value out of range. */
const char *susm_auth_name(enum susm_auth auth);

/** @return net-snmp's name of @p auth (snmpwalk -a: "SHA", "SHA-256"), static; "" for SUSM_AUTH_NONE. */
const char *susm_auth_netsnmp_name(enum susm_auth auth);

/** @return Our lower-case name of @p priv ("none", "aes"), static; "" for a value out of range. */
const char *susm_priv_name(enum susm_priv priv);

/** @return Bytes of a localized key (the digest size) for @p auth, 0 for SUSM_AUTH_NONE. */
size_t susm_auth_key_bytes(enum susm_auth auth);

/** @return Bytes of the authentication parameter (truncated HMAC) for @p auth, 0 for SUSM_AUTH_NONE. */
size_t susm_auth_mac_bytes(enum susm_auth auth);

/**
 * @brief RFC 3414 A.2 password to key: hash 1 MiB of the repeated password (Ku).
 * Costs a few milliseconds: do it once per user and password, then localize per engine.
 * @param[out] ku susm_auth_key_bytes(auth) bytes.
 * @return FLEET_OK; FLEET_ERR_INVAL for SUSM_AUTH_NONE or an empty password; FLEET_ERR_SYS if libcrypto
 * fails.
 */
enum fleet_err susm_password_to_key(enum susm_auth auth, const uint8_t *password, size_t password_len,
                                    uint8_t *ku);

/**
 * @brief RFC 3414 A.2 localization: Kul = H(Ku || engineID || Ku). Cheap (one hash).
 * @param[out] kul susm_auth_key_bytes(auth) bytes; may be @p ku.
 */
enum fleet_err susm_localize_key(enum susm_auth auth, const uint8_t *ku, const uint8_t *engine_id,
                                 size_t engine_id_len, uint8_t *kul);

/**
 * @brief Fill @p user from passwords: both keys localized for @p engine_id with the auth hash.
 * @param[in] priv_password Ignored when @p priv is SUSM_PRIV_NONE.
 * @return FLEET_OK, FLEET_ERR_INVAL (name of 0 or >32 bytes, priv without auth, empty password).
 */
enum fleet_err susm_user_init(struct susm_user *user, const uint8_t *name, size_t name_len,
                              enum susm_auth auth, const uint8_t *auth_password, size_t auth_password_len,
                              enum susm_priv priv, const uint8_t *priv_password, size_t priv_password_len,
                              const uint8_t *engine_id, size_t engine_id_len);

/**
 * @brief Agent: process a received v3 message (RFC 3412 section 7.2, RFC 3414 section 3.2).
 * @param[in,out] buf The datagram. Modified: an encrypted scopedPDU is decrypted in place.
 * @param[in] engine This device's engine.
 * @param[in] lookup Finds the device's users by name.
 * @param[out] msg What was decoded; valid as far as the checks went (see scoped_ok).
 * @param[out] report SUSM_REPORT_NONE when msg->pdu is ready for the handler; otherwise the usmStats
 * counter the caller must increment, and when msg->report_wanted the caller answers with
 * susm_encode_report() passing the incremented value.
 * @return FLEET_OK (with or without a report); FLEET_ERR_LIMIT for an authentic message whose PDU has more
 * than SPDU_MAX_BINDINGS_DECODED varbinds (msg->pdu's type and request-id are set, to answer tooBig);
 * FLEET_ERR_PROTO for a message to drop (malformed: count snmpInASNParseErrs; or an unknown security
 * model or priv without auth: snmpInvalidMsgs).
 */
enum fleet_err susm_agent_receive(uint8_t *buf, size_t len, const struct susm_engine *engine,
                                  susm_user_lookup_fn lookup, void *lookup_arg, struct susm_msg *msg,
                                  enum susm_report_kind *report);

/**
 * @brief Agent: the susm_out of a response to @p req (same msgID, user, security level and context).
 * @param[in] salt Unique per message when the request was encrypted (a per-engine counter).
 */
void susm_response_out(const struct susm_msg *req, const struct susm_engine *engine, uint64_t salt,
                       struct susm_out *out);

/**
 * @brief Agent: encode the Report for a failed @p req (RFC 3412 section 7.1 step 3): one varbind,
 * usmStats.<kind>.0 = @p counter, request-id of the request when it could be read, else 0; sent
 * noAuthNoPriv, except notInTimeWindow which is authenticated (authNoPriv) with the request's user.
 * @param[out] out At least SUSM_REPORT_MAX_BYTES is always enough.
 * @return FLEET_OK, FLEET_ERR_LIMIT if @p out_cap is too small.
 */
enum fleet_err susm_encode_report(const struct susm_msg *req, const struct susm_engine *engine,
                                  enum susm_report_kind kind, uint32_t counter, uint8_t *out, size_t out_cap,
                                  size_t *out_len);

/**
 * @brief Wrap a PDU (from spdu_enc_finish_pdu()) into a whole v3 message: scopedPDU, encryption, HMAC.
 * @param[in] pdu The encoded PDU; not modified.
 * @param[out] out Caller's buffer for the message; must not overlap @p pdu.
 * @return FLEET_OK; FLEET_ERR_LIMIT if it does not fit in @p out_cap; FLEET_ERR_INVAL for inconsistent
 * parameters (PRIV without AUTH, a level the user lacks, oversized names); FLEET_ERR_SYS if libcrypto fails.
 */
enum fleet_err susm_encode(const struct susm_out *o, const uint8_t *pdu, size_t pdu_len, uint8_t *out,
                           size_t out_cap, size_t *out_len);

/**
 * @return Bytes left for variable-bindings contents when the v3 message built with @p o may take at most
 * @p max_msg_bytes (lengths counted at their largest; error-status and error-index at 4 bytes).
 */
size_t susm_bindings_budget(size_t max_msg_bytes, const struct susm_out *o, int32_t request_id);

/**
 * @brief Client: encode an engine discovery request (RFC 3414 section 4): an empty GET, noAuthNoPriv,
 * reportable, with empty engine ID, user name and context.
 */
enum fleet_err susm_client_discovery(int32_t msg_id, int32_t request_id, int32_t max_size, uint8_t *out,
                                     size_t out_cap, size_t *out_len);

/**
 * @brief Client: decode a response or report, verifying its HMAC with @p user's key and decrypting it
 * in place when its flags say so.
 * @param[in] user The user the request was sent as; may be NULL for a noAuthNoPriv exchange.
 * @param[out] failure SUSM_REPORT_NONE, or why the message cannot be trusted (WRONG_DIGESTS,
 * DECRYPTION_ERRORS, UNSUPPORTED_SEC_LEVELS when it is protected and @p user lacks the keys).
 * @return FLEET_OK (check @p failure), FLEET_ERR_PROTO if malformed, FLEET_ERR_LIMIT past
 * SPDU_MAX_BINDINGS_DECODED varbinds.
 */
enum fleet_err susm_client_receive(uint8_t *buf, size_t len, const struct susm_user *user,
                                   struct susm_msg *msg, enum susm_report_kind *failure);

/**
 * @brief Which usmStats counter a Report PDU carries.
 * @param[out] counter Its value (may be NULL).
 * @return The kind, or SUSM_REPORT_NONE when the PDU is no Report or carries another OID.
 */
enum susm_report_kind susm_report_kind_of(const struct spdu_pdu *pdu, uint32_t *counter);

/** @brief Client: take the engine ID, boots and time from a discovery Report (unauthenticated). */
void susm_peer_discovered(struct susm_peer *peer, const struct susm_msg *msg);

/**
 * @brief Client: RFC 3414 section 3.2 step 7b for an authenticated message from the peer: move the
 * peer's clock forward when the message is newer, then check the time window.
 * @return FLEET_OK when the message is in the time window, FLEET_ERR_PROTO when it is too old
 * (possibly replayed) or the engine ID differs.
 */
enum fleet_err susm_peer_update(struct susm_peer *peer, const struct susm_msg *msg);

/**
 * @brief Client: the susm_out for a request to @p peer as @p user at the level of @p flags.
 */
void susm_request_out(const struct susm_peer *peer, const struct susm_user *user, uint8_t flags,
                      int32_t msg_id, int32_t max_size, uint64_t salt, struct susm_out *out);

#endif
