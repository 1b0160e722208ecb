/*
 * SNMPv3 with USM. A received message is parsed once into positions inside
 * the datagram (susm_parse); the agent and the client then run the RFC 3414
 * section 3.2 checks in order (engine ID, user, security level, digest,
 * time window, decryption) and decode the scopedPDU with spdu_pdu_decode().
 * The HMAC covers the whole message with its authentication parameter
 * zeroed, so the digest is checked by zeroing those bytes in the datagram
 * and putting them back; decryption (AES-CFB keeps the length) happens in
 * place. Nothing is copied and nothing is allocated but libcrypto's
 * per-call contexts.
 *
 * libcrypto objects (the HMAC and cipher implementations, a keyless HMAC
 * context per digest) are fetched once, under pthread_once, and then only
 * read: a message costs EVP_MAC_CTX_dup() + init instead of fetching by
 * name. The way out if that shows in profiles is a keyed context cached per
 * user, duplicated per message (it saves hashing the key pads).
 */
#include "susm.h"

#include <assert.h>
#include <pthread.h>
#include <string.h>
#include <strings.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

/* RFC 3414 A.2.1: the password is repeated to fill this many bytes before hashing. */
#define SUSM_PASSWORD_HASH_BYTES 1048576u
/* Bytes hashed per EVP_DigestUpdate() call while doing so. */
#define SUSM_PASSWORD_CHUNK_BYTES 4096u
/* RFC 3412 msgSecurityModel of USM. */
#define SUSM_SECURITY_MODEL_USM 3
/* The v3 msgVersion. */
#define SUSM_VERSION 3
/* RFC 3826: AES-128 key and IV bytes. */
#define SUSM_AES_KEY_BYTES 16
#define SUSM_AES_IV_BYTES  16
/* Content bytes of an INTEGER in 0..2147483647 at most. */
#define SUSM_INT31_MAX_BYTES 4
/* Room for the Report PDU before it is wrapped: header, one usmStats varbind. */
#define SUSM_REPORT_PDU_BYTES 96
/* usmStats (RFC 3414 section 5): 1.3.6.1.6.3.15.1.1; a Report names usmStats.<kind>.0. */
static const uint32_t susm_usm_stats[] = {1, 3, 6, 1, 6, 3, 15, 1, 1};
#define SUSM_USM_STATS_LEN (sizeof susm_usm_stats / sizeof susm_usm_stats[0])

/* Per authentication protocol: the digest's libcrypto name, key and MAC sizes (RFC 3414, RFC 7860). */
static const struct {
    const char *digest; /* OpenSSL digest name */
    size_t key_bytes;   /* digest size = localized key size */
    size_t mac_bytes;   /* truncated HMAC carried in msgAuthenticationParameters */
} susm_auth_info[] = {
    [SUSM_AUTH_NONE] = {NULL, 0, 0},         [SUSM_AUTH_MD5] = {"MD5", 16, 12},
    [SUSM_AUTH_SHA1] = {"SHA1", 20, 12},     [SUSM_AUTH_SHA224] = {"SHA224", 28, 16},
    [SUSM_AUTH_SHA256] = {"SHA256", 32, 24}, [SUSM_AUTH_SHA384] = {"SHA384", 48, 32},
    [SUSM_AUTH_SHA512] = {"SHA512", 64, 48},
};
#define SUSM_AUTH_COUNT (sizeof susm_auth_info / sizeof susm_auth_info[0])

/* The names a user may write a protocol as, compared in any case. */
struct susm_names {
    const char *name;     /* ours, lower case, as printed */
    const char *netsnmp;  /* net-snmp's (snmpget -a / -x); NULL for none */
    const char *alias[2]; /* more accepted spellings, NULL when unused */
};

/* Names of the authentication protocols, indexed by enum susm_auth. */
static const struct susm_names susm_auth_names[] = {
    [SUSM_AUTH_NONE] = {"none", NULL, {NULL, NULL}},
    [SUSM_AUTH_MD5] = {"md5", "MD5", {NULL, NULL}},
    [SUSM_AUTH_SHA1] = {"sha", "SHA", {"SHA1", "SHA-1"}},
    [SUSM_AUTH_SHA224] = {"sha224", "SHA-224", {NULL, NULL}},
    [SUSM_AUTH_SHA256] = {"sha256", "SHA-256", {NULL, NULL}},
    [SUSM_AUTH_SHA384] = {"sha384", "SHA-384", {NULL, NULL}},
    [SUSM_AUTH_SHA512] = {"sha512", "SHA-512", {NULL, NULL}},
};
static_assert(sizeof susm_auth_names / sizeof susm_auth_names[0] == SUSM_AUTH_COUNT, "a name per protocol");

/* Names of the privacy protocols, indexed by enum susm_priv. */
static const struct susm_names susm_priv_names[] = {
    [SUSM_PRIV_NONE] = {"none", NULL, {NULL, NULL}},
    [SUSM_PRIV_AES128] = {"aes", "AES", {"AES-128", "AES128"}},
};
#define SUSM_PRIV_COUNT (sizeof susm_priv_names / sizeof susm_priv_names[0])

/* libcrypto objects, fetched once and read-only afterwards (NULL when this libcrypto lacks one). */
static struct {
    pthread_once_t once;
    EVP_MD *md[SUSM_AUTH_COUNT];        /* digests for key localization */
    EVP_MAC_CTX *hmac[SUSM_AUTH_COUNT]; /* keyless HMAC contexts with the digest set, to duplicate */
    EVP_CIPHER *aes_cfb;                /* AES-128-CFB (CFB128) */
} susm_crypto = {.once = PTHREAD_ONCE_INIT};

static void
susm_crypto_init(void)
{
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    size_t i;

    for (i = 1; i < SUSM_AUTH_COUNT; i++) {
        OSSL_PARAM params[2];

        susm_crypto.md[i] = EVP_MD_fetch(NULL, susm_auth_info[i].digest, NULL);
        if (!mac || !susm_crypto.md[i]) {
            continue;
        }
        susm_crypto.hmac[i] = EVP_MAC_CTX_new(mac);
        params[0] =
            OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)susm_auth_info[i].digest, 0);
        params[1] = OSSL_PARAM_construct_end();
        if (susm_crypto.hmac[i] && !EVP_MAC_CTX_set_params(susm_crypto.hmac[i], params)) {
            EVP_MAC_CTX_free(susm_crypto.hmac[i]);
            susm_crypto.hmac[i] = NULL;
        }
    }
    /* Each context holds its own reference to the implementation. */
    EVP_MAC_free(mac);
    susm_crypto.aes_cfb = EVP_CIPHER_fetch(NULL, "AES-128-CFB", NULL);
}

static void
susm_crypto_ready(void)
{
    pthread_once(&susm_crypto.once, susm_crypto_init);
}

static int
susm_auth_valid(enum susm_auth auth)
{
    return auth > SUSM_AUTH_NONE && (size_t)auth < SUSM_AUTH_COUNT;
}

size_t
susm_auth_key_bytes(enum susm_auth auth)
{
    return susm_auth_valid(auth) ? susm_auth_info[auth].key_bytes : 0;
}

size_t
susm_auth_mac_bytes(enum susm_auth auth)
{
    return susm_auth_valid(auth) ? susm_auth_info[auth].mac_bytes : 0;
}

/* 1 when @p s (@p len bytes, not NUL-terminated) spells @p name in any case; NULL @p name never matches. */
static int
susm_name_is(const char *s, size_t len, const char *name)
{
    return name && strlen(name) == len && !strncasecmp(s, name, len);
}

/* @return The index of the entry of @p names (@p count of them) that @p s spells, or -1. */
static int
susm_names_find(const struct susm_names *names, size_t count, const char *s, size_t len)
{
    for (size_t i = 0; i < count; i++) {
        const struct susm_names *n = &names[i];

        if (susm_name_is(s, len, n->name) || susm_name_is(s, len, n->netsnmp) ||
            susm_name_is(s, len, n->alias[0]) || susm_name_is(s, len, n->alias[1])) {
            return (int)i;
        }
    }
    return -1;
}

enum fleet_err
susm_auth_parse(const char *s, size_t len, enum susm_auth *auth)
{
    int i = susm_names_find(susm_auth_names, SUSM_AUTH_COUNT, s, len);

    *auth = i < 0 ? *auth : (enum susm_auth)i;
    return i < 0 ? FLEET_ERR_INVAL : FLEET_OK;
}

enum fleet_err
susm_priv_parse(const char *s, size_t len, enum susm_priv *priv)
{
    int i = susm_names_find(susm_priv_names, SUSM_PRIV_COUNT, s, len);

    *priv = i < 0 ? *priv : (enum susm_priv)i;
    return i < 0 ? FLEET_ERR_INVAL : FLEET_OK;
}

const char *
susm_auth_name(enum susm_auth auth)
{
    return (size_t)auth < SUSM_AUTH_COUNT ? susm_auth_names[auth].name : "";
}

const char *
susm_auth_netsnmp_name(enum susm_auth auth)
{
    return susm_auth_valid(auth) ? susm_auth_names[auth].netsnmp : "";
}

const char *
susm_priv_name(enum susm_priv priv)
{
    return (size_t)priv < SUSM_PRIV_COUNT ? susm_priv_names[priv].name : "";
}

enum fleet_err
susm_password_to_key(enum susm_auth auth, const uint8_t *password, size_t password_len, uint8_t *ku)
{
    uint8_t chunk[SUSM_PASSWORD_CHUNK_BYTES + SUSM_PASSWORD_CHUNK_BYTES];
    enum fleet_err rc = FLEET_ERR_INVAL;
    EVP_MD_CTX *ctx = NULL;
    size_t i, done;
    unsigned int out_len = 0;

    susm_crypto_ready();
    if (!susm_auth_valid(auth) || password_len == 0) {
        goto cleanup;
    }
    rc = FLEET_ERR_SYS;
    ctx = EVP_MD_CTX_new();
    if (!susm_crypto.md[auth] || !ctx || !EVP_DigestInit_ex2(ctx, susm_crypto.md[auth], NULL)) {
        goto cleanup;
    }
    /*
     * The stream is the password repeated. A chunk twice the step long, filled
     * with it, holds every window of one step: the window for stream offset
     * `done` starts at done % password_len (passwords longer than a step are
     * hashed straight from the caller's buffer the same way).
     */
    if (password_len <= SUSM_PASSWORD_CHUNK_BYTES) {
        for (i = 0; i < sizeof chunk; i++) {
            chunk[i] = password[i % password_len];
        }
    }
    for (done = 0; done < SUSM_PASSWORD_HASH_BYTES;) {
        size_t off = done % password_len;
        size_t n = SUSM_PASSWORD_HASH_BYTES - done;
        const uint8_t *src;

        if (password_len <= SUSM_PASSWORD_CHUNK_BYTES) {
            src = chunk + off;
            n = n < SUSM_PASSWORD_CHUNK_BYTES ? n : SUSM_PASSWORD_CHUNK_BYTES;
        } else {
            src = password + off;
            n = n < password_len - off ? n : password_len - off;
        }
        if (!EVP_DigestUpdate(ctx, src, n)) {
            goto cleanup;
        }
        done += n;
    }
    if (!EVP_DigestFinal_ex(ctx, ku, &out_len) || out_len != susm_auth_info[auth].key_bytes) {
        goto cleanup;
    }
    rc = FLEET_OK;

cleanup:
    EVP_MD_CTX_free(ctx);
    return rc;
}

enum fleet_err
susm_localize_key(enum susm_auth auth, const uint8_t *ku, const uint8_t *engine_id, size_t engine_id_len,
                  uint8_t *kul)
{
    uint8_t key[SUSM_KEY_MAX_BYTES];
    enum fleet_err rc = FLEET_ERR_INVAL;
    EVP_MD_CTX *ctx = NULL;
    unsigned int out_len = 0;
    size_t n;

    susm_crypto_ready();
    if (!susm_auth_valid(auth) || engine_id_len > SUSM_ENGINE_ID_MAX_BYTES) {
        goto cleanup;
    }
    n = susm_auth_info[auth].key_bytes;
    /* Ku may be the output buffer too. */
    memcpy(key, ku, n);
    rc = FLEET_ERR_SYS;
    ctx = EVP_MD_CTX_new();
    if (!susm_crypto.md[auth] || !ctx || !EVP_DigestInit_ex2(ctx, susm_crypto.md[auth], NULL) ||
        !EVP_DigestUpdate(ctx, key, n) ||
        (engine_id_len && !EVP_DigestUpdate(ctx, engine_id, engine_id_len)) ||
        !EVP_DigestUpdate(ctx, key, n) || !EVP_DigestFinal_ex(ctx, kul, &out_len) || out_len != n) {
        goto cleanup;
    }
    rc = FLEET_OK;

cleanup:
    OPENSSL_cleanse(key, sizeof key);
    EVP_MD_CTX_free(ctx);
    return rc;
}

enum fleet_err
susm_user_init(struct susm_user *user, const uint8_t *name, size_t name_len, enum susm_auth auth,
               const uint8_t *auth_password, size_t auth_password_len, enum susm_priv priv,
               const uint8_t *priv_password, size_t priv_password_len, const uint8_t *engine_id,
               size_t engine_id_len)
{
    enum fleet_err rc = FLEET_ERR_INVAL;

    memset(user, 0, sizeof *user);
    if (name_len == 0 || name_len > SUSM_USER_NAME_MAX_BYTES ||
        (priv != SUSM_PRIV_NONE && auth == SUSM_AUTH_NONE) ||
        (priv != SUSM_PRIV_NONE && priv != SUSM_PRIV_AES128)) {
        goto cleanup;
    }
    memcpy(user->name, name, name_len);
    user->name_len = name_len;
    user->auth = auth;
    user->priv = priv;
    if (auth != SUSM_AUTH_NONE) {
        rc = susm_password_to_key(auth, auth_password, auth_password_len, user->auth_key);
        if (!rc) {
            rc = susm_localize_key(auth, user->auth_key, engine_id, engine_id_len, user->auth_key);
        }
        if (rc) {
            goto cleanup;
        }
    }
    if (priv != SUSM_PRIV_NONE) {
        /* RFC 3414 / RFC 3826: the privacy key is localized with the authentication protocol's hash. */
        rc = susm_password_to_key(auth, priv_password, priv_password_len, user->priv_key);
        if (!rc) {
            rc = susm_localize_key(auth, user->priv_key, engine_id, engine_id_len, user->priv_key);
        }
        if (rc) {
            goto cleanup;
        }
    }
    rc = FLEET_OK;

cleanup:
    return rc;
}

/* Full HMAC of @p data with the user's auth key into @p mac (susm_auth_key_bytes() bytes). */
static enum fleet_err
susm_hmac(const struct susm_user *user, const uint8_t *data, size_t len, uint8_t *mac)
{
    enum fleet_err rc = FLEET_ERR_SYS;
    EVP_MAC_CTX *ctx = NULL;
    size_t out_len = 0;

    susm_crypto_ready();
    if (!susm_auth_valid(user->auth) || !susm_crypto.hmac[user->auth]) {
        goto cleanup;
    }
    ctx = EVP_MAC_CTX_dup(susm_crypto.hmac[user->auth]);
    if (!ctx || !EVP_MAC_init(ctx, user->auth_key, susm_auth_info[user->auth].key_bytes, NULL) ||
        !EVP_MAC_update(ctx, data, len) || !EVP_MAC_final(ctx, mac, &out_len, SUSM_KEY_MAX_BYTES) ||
        out_len != susm_auth_info[user->auth].key_bytes) {
        goto cleanup;
    }
    rc = FLEET_OK;

cleanup:
    EVP_MAC_CTX_free(ctx);
    return rc;
}

/* RFC 3826 section 3.1.2.1: IV = engineBoots (4) || engineTime (4) || salt (8), all big-endian. */
static void
susm_aes_iv(uint32_t boots, uint32_t time_s, const uint8_t *salt, uint8_t *iv)
{
    size_t i;

    for (i = 0; i < 4; i++) {
        iv[i] = (uint8_t)(boots >> (24 - 8 * i));
        iv[4 + i] = (uint8_t)(time_s >> (24 - 8 * i));
    }
    memcpy(iv + 8, salt, SUSM_PRIV_PARAMS_BYTES);
}

/* AES-128-CFB over @p data in place; @p encrypt 1 or 0. */
static enum fleet_err
susm_aes_cfb(const struct susm_user *user, uint32_t boots, uint32_t time_s, const uint8_t *salt,
             uint8_t *data, size_t len, int encrypt)
{
    uint8_t iv[SUSM_AES_IV_BYTES];
    enum fleet_err rc = FLEET_ERR_SYS;
    EVP_CIPHER_CTX *ctx = NULL;
    int out_len = 0, final_len = 0;

    susm_crypto_ready();
    if (len > INT32_MAX || !susm_crypto.aes_cfb) {
        goto cleanup;
    }
    susm_aes_iv(boots, time_s, salt, iv);
    ctx = EVP_CIPHER_CTX_new();
    if (!ctx || !EVP_CipherInit_ex2(ctx, susm_crypto.aes_cfb, user->priv_key, iv, encrypt, NULL) ||
        !EVP_CipherUpdate(ctx, data, &out_len, data, (int)len) ||
        !EVP_CipherFinal_ex(ctx, data + out_len, &final_len) || (size_t)(out_len + final_len) != len) {
        goto cleanup;
    }
    rc = FLEET_OK;

cleanup:
    EVP_CIPHER_CTX_free(ctx);
    return rc;
}

/* Bytes of a TLV whose contents take @p len. */
static size_t
susm_tlv_size(size_t len)
{
    return 1 + ber_length_size(len) + len;
}

/* Where the parts of a received message are (all inside the datagram). */
struct susm_parsed {
    uint8_t *auth_params;       /* msgAuthenticationParameters contents */
    size_t auth_params_len;     /* bytes at auth_params */
    const uint8_t *priv_params; /* msgPrivacyParameters contents */
    size_t priv_params_len;     /* bytes at priv_params */
    uint8_t *data;              /* encryptedPDU contents, or the whole plaintext scopedPDU element */
    size_t data_len;            /* bytes at data */
};

/* Read an INTEGER in 0..2147483647. */
static enum fleet_err
susm_read_int31(struct ber_reader *r, int64_t min, int32_t *value)
{
    enum fleet_err rc;
    int64_t v;

    rc = ber_read_int(r, BER_INTEGER, &v);
    if (!rc && (v < min || v > INT32_MAX)) {
        rc = FLEET_ERR_PROTO;
    }
    if (!rc) {
        *value = (int32_t)v;
    }
    return rc;
}

/*
 * RFC 3412 section 6 and RFC 3414 section 2.4: split a datagram into its
 * fields. Everything but the scopedPDU is checked here; msg gets the header.
 */
static enum fleet_err
susm_parse(uint8_t *buf, size_t len, struct susm_msg *msg, struct susm_parsed *p)
{
    struct ber_reader r = {buf, buf + len}, seq, global, usm_r, usm;
    const uint8_t *flags, *sec, *ap;
    size_t flags_len, sec_len;
    enum fleet_err rc;
    int32_t v;

    memset(msg, 0, sizeof *msg);
    memset(p, 0, sizeof *p);
    rc = ber_read_enter(&r, BER_SEQUENCE, &seq);
    if (rc) {
        goto cleanup;
    }
    rc = FLEET_ERR_PROTO;
    if (r.p != r.end) {
        goto cleanup;
    }
    if (susm_read_int31(&seq, 0, &v) || v != SUSM_VERSION) {
        goto cleanup;
    }
    /* msgGlobalData */
    if (ber_read_enter(&seq, BER_SEQUENCE, &global) || susm_read_int31(&global, 0, &msg->msg_id) ||
        susm_read_int31(&global, SUSM_MIN_MSG_SIZE, &msg->max_size) ||
        ber_read_bytes(&global, BER_OCTET_STRING, &flags, &flags_len) || flags_len != 1 ||
        susm_read_int31(&global, 1, &v) || global.p != global.end) {
        goto cleanup;
    }
    msg->flags = flags[0];
    /* RFC 3412 section 7.2 step 3: only USM, and never privacy without authentication (snmpInvalidMsgs). */
    if (v != SUSM_SECURITY_MODEL_USM || (msg->flags & (SUSM_FLAG_AUTH | SUSM_FLAG_PRIV)) == SUSM_FLAG_PRIV) {
        goto cleanup;
    }
    /* msgSecurityParameters: an OCTET STRING holding UsmSecurityParameters. */
    if (ber_read_bytes(&seq, BER_OCTET_STRING, &sec, &sec_len)) {
        goto cleanup;
    }
    usm_r.p = sec;
    usm_r.end = sec + sec_len;
    if (ber_read_enter(&usm_r, BER_SEQUENCE, &usm) || usm_r.p != usm_r.end ||
        ber_read_bytes(&usm, BER_OCTET_STRING, &msg->engine_id, &msg->engine_id_len) ||
        susm_read_int31(&usm, 0, &v)) {
        goto cleanup;
    }
    msg->engine_boots = (uint32_t)v;
    if (susm_read_int31(&usm, 0, &v)) {
        goto cleanup;
    }
    msg->engine_time = (uint32_t)v;
    if (ber_read_bytes(&usm, BER_OCTET_STRING, &msg->user_name, &msg->user_name_len) ||
        msg->user_name_len > SUSM_USER_NAME_MAX_BYTES ||
        ber_read_bytes(&usm, BER_OCTET_STRING, &ap, &p->auth_params_len) ||
        ber_read_bytes(&usm, BER_OCTET_STRING, &p->priv_params, &p->priv_params_len) || usm.p != usm.end) {
        goto cleanup;
    }
    /* The digest is zeroed in place while checking it; ap points into buf, which is ours to modify. */
    p->auth_params = buf + (ap - buf);
    /* msgData: encryptedPDU or a plaintext scopedPDU, and nothing after it. */
    if (msg->flags & SUSM_FLAG_PRIV) {
        const uint8_t *enc;

        if (ber_read_bytes(&seq, BER_OCTET_STRING, &enc, &p->data_len)) {
            goto cleanup;
        }
        p->data = buf + (enc - buf);
    } else {
        struct ber_reader scoped;
        const uint8_t *start = seq.p;

        if (ber_read_enter(&seq, BER_SEQUENCE, &scoped)) {
            goto cleanup;
        }
        p->data = buf + (start - buf);
        p->data_len = (size_t)(seq.p - start);
    }
    if (seq.p != seq.end) {
        goto cleanup;
    }
    rc = FLEET_OK;

cleanup:
    return rc;
}

/*
 * Decode a scopedPDU from @p data. @p trailing_ok allows bytes after it
 * (decrypted data: a privacy protocol may pad).
 */
static enum fleet_err
susm_decode_scoped(const uint8_t *data, size_t len, int trailing_ok, struct susm_msg *msg)
{
    struct ber_reader r = {data, data + len}, scoped;
    enum fleet_err rc = FLEET_ERR_PROTO;

    if (ber_read_enter(&r, BER_SEQUENCE, &scoped) || (!trailing_ok && r.p != r.end) ||
        ber_read_bytes(&scoped, BER_OCTET_STRING, &msg->context_engine_id, &msg->context_engine_id_len) ||
        ber_read_bytes(&scoped, BER_OCTET_STRING, &msg->context_name, &msg->context_name_len)) {
        goto cleanup;
    }
    rc = spdu_pdu_decode(&scoped, &msg->pdu);
    if (rc) {
        goto cleanup;
    }
    if (scoped.p != scoped.end) {
        rc = FLEET_ERR_PROTO;
        goto cleanup;
    }
    msg->scoped_ok = 1;

cleanup:
    return rc;
}

/* RFC 3414 section 3.2 step 6: check the truncated HMAC over the message with the parameter zeroed. */
static enum susm_report_kind
susm_check_digest(uint8_t *buf, size_t len, const struct susm_user *user, const struct susm_parsed *p)
{
    uint8_t got[SUSM_MAC_MAX_BYTES], want[SUSM_KEY_MAX_BYTES];
    size_t mac_len = susm_auth_mac_bytes(user->auth);
    enum susm_report_kind kind = SUSM_REPORT_WRONG_DIGESTS;
    enum fleet_err rc;

    if (mac_len == 0 || p->auth_params_len != mac_len) {
        goto cleanup;
    }
    memcpy(got, p->auth_params, mac_len);
    memset(p->auth_params, 0, mac_len);
    rc = susm_hmac(user, buf, len, want);
    memcpy(p->auth_params, got, mac_len);
    if (rc || CRYPTO_memcmp(got, want, mac_len) != 0) {
        goto cleanup;
    }
    kind = SUSM_REPORT_NONE;

cleanup:
    return kind;
}

/*
 * RFC 3414 section 3.2 step 8: decrypt in place and decode; any failure is a
 * decryption error, except a well-formed PDU with too many varbinds, which
 * leaves *rc at FLEET_ERR_LIMIT.
 */
static enum susm_report_kind
susm_decrypt(const struct susm_user *user, const struct susm_parsed *p, struct susm_msg *msg,
             enum fleet_err *rc)
{
    if (p->priv_params_len != SUSM_PRIV_PARAMS_BYTES ||
        susm_aes_cfb(user, msg->engine_boots, msg->engine_time, p->priv_params, p->data, p->data_len, 0)) {
        return SUSM_REPORT_DECRYPTION_ERRORS;
    }
    *rc = susm_decode_scoped(p->data, p->data_len, 1, msg);
    if (*rc == FLEET_ERR_LIMIT) {
        return SUSM_REPORT_NONE;
    }
    if (*rc) {
        *rc = FLEET_OK;
        return SUSM_REPORT_DECRYPTION_ERRORS;
    }
    return SUSM_REPORT_NONE;
}

/* RFC 3416 section 2.8 / RFC 3412 section 7.1 step 3b: only requests of the Confirmed Class are reported. */
static int
susm_confirmed_class(uint8_t type)
{
    return type == SPDU_GET || type == SPDU_GETNEXT || type == SPDU_GETBULK || type == SPDU_SET ||
           type == SPDU_INFORM;
}

enum fleet_err
susm_agent_receive(uint8_t *buf, size_t len, const struct susm_engine *engine, susm_user_lookup_fn lookup,
                   void *lookup_arg, struct susm_msg *msg, enum susm_report_kind *report)
{
    enum susm_report_kind kind = SUSM_REPORT_NONE;
    enum fleet_err rc, pdu_rc = FLEET_OK;
    const struct susm_user *user;
    struct susm_parsed p;
    int64_t skew;

    *report = SUSM_REPORT_NONE;
    rc = susm_parse(buf, len, msg, &p);
    if (rc) {
        goto cleanup;
    }
    /*
     * A plaintext scopedPDU is read now: a Report echoes its request-id, and a
     * malformed one is dropped. Too many varbinds is answered, but only once
     * the message has passed the security checks.
     */
    if (!(msg->flags & SUSM_FLAG_PRIV)) {
        pdu_rc = susm_decode_scoped(p.data, p.data_len, 0, msg);
        if (pdu_rc && pdu_rc != FLEET_ERR_LIMIT) {
            rc = FLEET_ERR_PROTO;
            goto cleanup;
        }
    }
    /* Step 3: the engine ID must be ours (an empty one is discovery). */
    if (msg->engine_id_len != engine->id_len || memcmp(msg->engine_id, engine->id, engine->id_len) != 0) {
        kind = SUSM_REPORT_UNKNOWN_ENGINE_IDS;
        goto report;
    }
    /* Step 4: the user. */
    user = lookup(lookup_arg, msg->user_name, msg->user_name_len);
    if (!user) {
        kind = SUSM_REPORT_UNKNOWN_USER_NAMES;
        goto report;
    }
    /* Step 5: the level asked for must be one the user has keys for. */
    if (((msg->flags & SUSM_FLAG_AUTH) && user->auth == SUSM_AUTH_NONE) ||
        ((msg->flags & SUSM_FLAG_PRIV) && user->priv == SUSM_PRIV_NONE)) {
        kind = SUSM_REPORT_UNSUPPORTED_SEC_LEVELS;
        goto report;
    }
    if (msg->flags & SUSM_FLAG_AUTH) {
        /* Step 6: the digest. */
        kind = susm_check_digest(buf, len, user, &p);
        if (kind) {
            goto report;
        }
        msg->user = user;
        msg->authenticated = 1;
        /* Step 7a: the time window of the authoritative engine. */
        skew = (int64_t)msg->engine_time - (int64_t)engine->time_s;
        if (engine->boots >= SUSM_MAX_ENGINE_BOOTS || msg->engine_boots != engine->boots ||
            skew > SUSM_TIME_WINDOW_S || skew < -SUSM_TIME_WINDOW_S) {
            kind = SUSM_REPORT_NOT_IN_TIME_WINDOWS;
            goto report;
        }
    }
    msg->user = user;
    /* Step 8: privacy. */
    if (msg->flags & SUSM_FLAG_PRIV) {
        kind = susm_decrypt(user, &p, msg, &pdu_rc);
        if (kind) {
            goto report;
        }
    }
    rc = pdu_rc;
    goto cleanup;

report:
    *report = kind;
    /* RFC 3412 section 7.1 step 3b: no Report for a non-confirmed PDU, nor for an unreadable unreportable
     * one. */
    if (msg->scoped_ok) {
        msg->report_wanted = susm_confirmed_class(msg->pdu.type);
    } else {
        msg->report_wanted = (msg->flags & SUSM_FLAG_REPORTABLE) != 0;
    }

cleanup:
    return rc;
}

void
susm_response_out(const struct susm_msg *req, const struct susm_engine *engine, uint64_t salt,
                  struct susm_out *out)
{
    memset(out, 0, sizeof *out);
    out->msg_id = req->msg_id;
    out->max_size = engine->max_msg_bytes;
    out->flags = req->flags & (SUSM_FLAG_AUTH | SUSM_FLAG_PRIV);
    out->engine_id = engine->id;
    out->engine_id_len = engine->id_len;
    out->engine_boots = engine->boots;
    out->engine_time = engine->time_s;
    out->user_name = req->user_name;
    out->user_name_len = req->user_name_len;
    out->user = req->user;
    out->context_engine_id = req->context_engine_id;
    out->context_engine_id_len = req->context_engine_id_len;
    out->context_name = req->context_name;
    out->context_name_len = req->context_name_len;
    out->salt = salt;
}

/* Sizes of the parts of a message built with @p o around a scopedPDU whose contents take @p scoped_content.
 */
struct susm_layout {
    size_t mac_len;     /* authentication parameter bytes */
    size_t priv_len;    /* privacy parameter bytes */
    size_t usm_content; /* UsmSecurityParameters SEQUENCE contents */
    size_t usm_seq;     /* that SEQUENCE whole = msgSecurityParameters contents */
    size_t global;      /* msgGlobalData contents */
    size_t head;        /* version + msgGlobalData + msgSecurityParameters, whole */
};

static void
susm_layout(const struct susm_out *o, struct susm_layout *l)
{
    l->mac_len = (o->flags & SUSM_FLAG_AUTH) ? susm_auth_mac_bytes(o->user->auth) : 0;
    l->priv_len = (o->flags & SUSM_FLAG_PRIV) ? SUSM_PRIV_PARAMS_BYTES : 0;
    l->usm_content = susm_tlv_size(o->engine_id_len) + 2 + ber_int_size(o->engine_boots) + 2 +
                     ber_int_size(o->engine_time) + susm_tlv_size(o->user_name_len) +
                     susm_tlv_size(l->mac_len) + susm_tlv_size(l->priv_len);
    l->usm_seq = susm_tlv_size(l->usm_content);
    l->global = 2 + ber_int_size(o->msg_id) + 2 + ber_int_size(o->max_size) + 3 + 3;
    l->head = 3 + susm_tlv_size(l->global) + susm_tlv_size(l->usm_seq);
}

/* Parameters susm_encode() refuses. */
static int
susm_out_valid(const struct susm_out *o)
{
    int auth = (o->flags & SUSM_FLAG_AUTH) != 0, priv = (o->flags & SUSM_FLAG_PRIV) != 0;

    if (priv && !auth) {
        return 0;
    }
    if (auth && (!o->user || !susm_auth_valid(o->user->auth))) {
        return 0;
    }
    if (priv && o->user->priv != SUSM_PRIV_AES128) {
        return 0;
    }
    return o->msg_id >= 0 && o->max_size >= SUSM_MIN_MSG_SIZE &&
           o->engine_id_len <= SUSM_ENGINE_ID_MAX_BYTES && o->user_name_len <= SUSM_USER_NAME_MAX_BYTES &&
           o->engine_boots <= SUSM_MAX_ENGINE_BOOTS && o->engine_time <= SUSM_MAX_ENGINE_BOOTS;
}

enum fleet_err
susm_encode(const struct susm_out *o, const uint8_t *pdu, size_t pdu_len, uint8_t *out, size_t out_cap,
            size_t *out_len)
{
    uint8_t salt[SUSM_PRIV_PARAMS_BYTES], mac[SUSM_KEY_MAX_BYTES];
    size_t scoped_content, scoped_len, data_len, msg_content, total, i;
    int priv = (o->flags & SUSM_FLAG_PRIV) != 0;
    uint8_t *p, *auth_at = NULL, *scoped_at;
    enum fleet_err rc = FLEET_ERR_INVAL;
    struct susm_layout l;

    if (!susm_out_valid(o)) {
        goto cleanup;
    }
    susm_layout(o, &l);
    scoped_content = susm_tlv_size(o->context_engine_id_len) + susm_tlv_size(o->context_name_len) + pdu_len;
    scoped_len = susm_tlv_size(scoped_content);
    data_len = priv ? susm_tlv_size(scoped_len) : scoped_len;
    msg_content = l.head + data_len;
    total = susm_tlv_size(msg_content);
    if (total > out_cap || total > INT32_MAX) {
        rc = FLEET_ERR_LIMIT;
        goto cleanup;
    }
    for (i = 0; i < SUSM_PRIV_PARAMS_BYTES; i++) {
        salt[i] = (uint8_t)(o->salt >> (56 - 8 * i));
    }

    /* Headers, with the authentication parameter zero until the HMAC is known. */
    p = ber_put_header(out, BER_SEQUENCE, msg_content);
    p = ber_put_int(p, BER_INTEGER, SUSM_VERSION);
    p = ber_put_header(p, BER_SEQUENCE, l.global);
    p = ber_put_int(p, BER_INTEGER, o->msg_id);
    p = ber_put_int(p, BER_INTEGER, o->max_size);
    p = ber_put_bytes(p, BER_OCTET_STRING, &o->flags, 1);
    p = ber_put_int(p, BER_INTEGER, SUSM_SECURITY_MODEL_USM);
    p = ber_put_header(p, BER_OCTET_STRING, l.usm_seq);
    p = ber_put_header(p, BER_SEQUENCE, l.usm_content);
    p = ber_put_bytes(p, BER_OCTET_STRING, o->engine_id, o->engine_id_len);
    p = ber_put_int(p, BER_INTEGER, o->engine_boots);
    p = ber_put_int(p, BER_INTEGER, o->engine_time);
    p = ber_put_bytes(p, BER_OCTET_STRING, o->user_name, o->user_name_len);
    p = ber_put_header(p, BER_OCTET_STRING, l.mac_len);
    auth_at = p;
    memset(p, 0, l.mac_len);
    p += l.mac_len;
    p = ber_put_bytes(p, BER_OCTET_STRING, salt, l.priv_len);
    if (priv) {
        p = ber_put_header(p, BER_OCTET_STRING, scoped_len);
    }
    /* The scopedPDU, encrypted in place when asked. */
    scoped_at = p;
    p = ber_put_header(p, BER_SEQUENCE, scoped_content);
    p = ber_put_bytes(p, BER_OCTET_STRING, o->context_engine_id, o->context_engine_id_len);
    p = ber_put_bytes(p, BER_OCTET_STRING, o->context_name, o->context_name_len);
    memcpy(p, pdu, pdu_len);
    p += pdu_len;
    assert((size_t)(p - out) == total);
    if (priv) {
        rc = susm_aes_cfb(o->user, o->engine_boots, o->engine_time, salt, scoped_at, scoped_len, 1);
        if (rc) {
            goto cleanup;
        }
    }
    if (o->flags & SUSM_FLAG_AUTH) {
        rc = susm_hmac(o->user, out, total, mac);
        if (rc) {
            goto cleanup;
        }
        memcpy(auth_at, mac, l.mac_len);
    }
    *out_len = total;
    rc = FLEET_OK;

cleanup:
    return rc;
}

size_t
susm_bindings_budget(size_t max_msg_bytes, const struct susm_out *o, int32_t request_id)
{
    size_t max = max_msg_bytes < (size_t)INT32_MAX ? max_msg_bytes : (size_t)INT32_MAX;
    /* Every enclosing length is at most the whole message's. */
    size_t big = 1 + ber_length_size(max);
    struct susm_layout l;
    size_t header;

    if (!susm_out_valid(o)) {
        return 0;
    }
    susm_layout(o, &l);
    header = big + l.head                              /* message SEQUENCE, headers */
             + ((o->flags & SUSM_FLAG_PRIV) ? big : 0) /* encryptedPDU */
             + big                                     /* scopedPDU SEQUENCE */
             + susm_tlv_size(o->context_engine_id_len) + susm_tlv_size(o->context_name_len) + big /* PDU */
             + 2 + ber_int_size(request_id) + 2 * (2 + SUSM_INT31_MAX_BYTES) /* request-id, error-* */
             + big;                                                          /* variable-bindings */
    return max > header ? max - header : 0;
}

enum fleet_err
susm_encode_report(const struct susm_msg *req, const struct susm_engine *engine, enum susm_report_kind kind,
                   uint32_t counter, uint8_t *out, size_t out_cap, size_t *out_len)
{
    uint8_t buf[SUSM_REPORT_PDU_BYTES], *pdu;
    struct spdu_value value = {.tag = BER_COUNTER32, .v.u = counter};
    struct spdu_encoder e;
    struct susm_out o;
    struct oid name;
    enum fleet_err rc;
    size_t pdu_len;

    assert(kind > SUSM_REPORT_NONE && kind <= SUSM_REPORT_DECRYPTION_ERRORS);
    memcpy(name.sub, susm_usm_stats, sizeof susm_usm_stats);
    name.sub[SUSM_USM_STATS_LEN] = (uint32_t)kind;
    name.sub[SUSM_USM_STATS_LEN + 1] = 0;
    name.len = SUSM_USM_STATS_LEN + 2;
    spdu_enc_init(&e, buf, sizeof buf, SPDU_HEADROOM(0), sizeof buf - SPDU_HEADROOM(0));
    rc = spdu_enc_binding(&e, &name, &value);
    assert(rc == FLEET_OK);
    spdu_enc_finish_pdu(&e, SPDU_REPORT, req->scoped_ok ? req->pdu.request_id : 0, 0, 0, &pdu, &pdu_len);

    /* RFC 3412 section 7.1 step 3d: our engine as context, the default context, noAuthNoPriv... */
    memset(&o, 0, sizeof o);
    o.msg_id = req->msg_id;
    o.max_size = engine->max_msg_bytes;
    o.engine_id = engine->id;
    o.engine_id_len = engine->id_len;
    o.engine_boots = engine->boots;
    o.engine_time = engine->time_s;
    o.user_name = req->user_name;
    o.user_name_len = req->user_name_len;
    o.context_engine_id = engine->id;
    o.context_engine_id_len = engine->id_len;
    /* ...but RFC 3414 section 3.2 step 7a: notInTimeWindow goes authNoPriv, so the manager can trust our
     * clock. */
    if (kind == SUSM_REPORT_NOT_IN_TIME_WINDOWS && req->authenticated) {
        o.flags = SUSM_FLAG_AUTH;
        o.user = req->user;
    }
    rc = susm_encode(&o, pdu, pdu_len, out, out_cap, out_len);
    return rc;
}

enum fleet_err
susm_client_discovery(int32_t msg_id, int32_t request_id, int32_t max_size, uint8_t *out, size_t out_cap,
                      size_t *out_len)
{
    uint8_t buf[SPDU_HEADROOM(0)], *pdu;
    struct spdu_encoder e;
    struct susm_out o;
    size_t pdu_len;

    spdu_enc_init(&e, buf, sizeof buf, sizeof buf, 0);
    spdu_enc_finish_pdu(&e, SPDU_GET, request_id, 0, 0, &pdu, &pdu_len);
    memset(&o, 0, sizeof o);
    o.msg_id = msg_id;
    o.max_size = max_size;
    o.flags = SUSM_FLAG_REPORTABLE;
    return susm_encode(&o, pdu, pdu_len, out, out_cap, out_len);
}

enum fleet_err
susm_client_receive(uint8_t *buf, size_t len, const struct susm_user *user, struct susm_msg *msg,
                    enum susm_report_kind *failure)
{
    struct susm_parsed p;
    enum fleet_err rc;

    *failure = SUSM_REPORT_NONE;
    rc = susm_parse(buf, len, msg, &p);
    if (rc) {
        goto cleanup;
    }
    if (!(msg->flags & SUSM_FLAG_PRIV)) {
        rc = susm_decode_scoped(p.data, p.data_len, 0, msg);
        if (rc && rc != FLEET_ERR_LIMIT) {
            rc = FLEET_ERR_PROTO;
            goto cleanup;
        }
    }
    if (msg->flags & SUSM_FLAG_AUTH) {
        if (!user || user->auth == SUSM_AUTH_NONE || msg->user_name_len != user->name_len ||
            memcmp(msg->user_name, user->name, user->name_len) != 0 ||
            ((msg->flags & SUSM_FLAG_PRIV) && user->priv == SUSM_PRIV_NONE)) {
            *failure = SUSM_REPORT_UNSUPPORTED_SEC_LEVELS;
            goto cleanup;
        }
        *failure = susm_check_digest(buf, len, user, &p);
        if (*failure) {
            goto cleanup;
        }
        msg->user = user;
        msg->authenticated = 1;
    }
    if (msg->flags & SUSM_FLAG_PRIV) {
        *failure = susm_decrypt(user, &p, msg, &rc);
    }

cleanup:
    return rc;
}

enum susm_report_kind
susm_report_kind_of(const struct spdu_pdu *pdu, uint32_t *counter)
{
    enum susm_report_kind kind = SUSM_REPORT_NONE;
    struct spdu_binding_iter it;
    struct spdu_binding b;
    uint32_t arc;

    if (pdu->type != SPDU_REPORT) {
        goto cleanup;
    }
    spdu_binding_iter_init(&it, pdu);
    if (spdu_binding_next(&it, &b) != FLEET_OK || b.name.len != SUSM_USM_STATS_LEN + 2 ||
        memcmp(b.name.sub, susm_usm_stats, sizeof susm_usm_stats) != 0 ||
        b.name.sub[SUSM_USM_STATS_LEN + 1] != 0) {
        goto cleanup;
    }
    arc = b.name.sub[SUSM_USM_STATS_LEN];
    if (arc < SUSM_REPORT_UNSUPPORTED_SEC_LEVELS || arc > SUSM_REPORT_DECRYPTION_ERRORS) {
        goto cleanup;
    }
    kind = (enum susm_report_kind)arc;
    if (counter) {
        *counter = b.value.tag == BER_COUNTER32 ? (uint32_t)b.value.v.u : 0;
    }

cleanup:
    return kind;
}

void
susm_peer_discovered(struct susm_peer *peer, const struct susm_msg *msg)
{
    size_t n = msg->engine_id_len < SUSM_ENGINE_ID_MAX_BYTES ? msg->engine_id_len : SUSM_ENGINE_ID_MAX_BYTES;

    memcpy(peer->engine_id, msg->engine_id, n);
    peer->engine_id_len = n;
    peer->boots = msg->engine_boots;
    peer->time_s = msg->engine_time;
    peer->latest_time_s = msg->engine_time;
}

enum fleet_err
susm_peer_update(struct susm_peer *peer, const struct susm_msg *msg)
{
    if (!msg->authenticated || msg->engine_id_len != peer->engine_id_len ||
        memcmp(msg->engine_id, peer->engine_id, peer->engine_id_len) != 0) {
        return FLEET_ERR_PROTO;
    }
    /* Step 7b1: a newer boots, or a later time in the same boots, moves our notion forward. */
    if (msg->engine_boots > peer->boots ||
        (msg->engine_boots == peer->boots && msg->engine_time > peer->latest_time_s)) {
        peer->boots = msg->engine_boots;
        peer->time_s = msg->engine_time;
        peer->latest_time_s = msg->engine_time;
    }
    /* Step 7b2: too old is unauthentic. */
    if (peer->boots >= SUSM_MAX_ENGINE_BOOTS || msg->engine_boots < peer->boots ||
        (msg->engine_boots == peer->boots &&
         (int64_t)msg->engine_time < (int64_t)peer->time_s - SUSM_TIME_WINDOW_S)) {
        return FLEET_ERR_PROTO;
    }
    return FLEET_OK;
}

void
susm_request_out(const struct susm_peer *peer, const struct susm_user *user, uint8_t flags, int32_t msg_id,
                 int32_t max_size, uint64_t salt, struct susm_out *out)
{
    memset(out, 0, sizeof *out);
    out->msg_id = msg_id;
    out->max_size = max_size;
    out->flags = flags;
    out->engine_id = peer->engine_id;
    out->engine_id_len = peer->engine_id_len;
    out->engine_boots = peer->boots;
    out->engine_time = peer->time_s;
    out->user_name = user ? user->name : NULL;
    out->user_name_len = user ? user->name_len : 0;
    out->user = user;
    out->context_engine_id = peer->engine_id;
    out->context_engine_id_len = peer->engine_id_len;
    out->salt = salt;
}
