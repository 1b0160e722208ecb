/*
 * Unit tests of SNMPv3 / USM (wire/susm.c). Key localization is checked
 * against the published values of RFC 3414 A.3 and against net-snmp's
 * generate_Ku()/generate_kul() for every hash. The agent and client halves
 * then talk to each other (discovery, authPriv requests and responses for
 * every authentication protocol), and every RFC 3414 failure is provoked on
 * purpose: unknown engine and user, unsupported level, wrong digest, time
 * window, decryption error. Finally net-snmp's own SNMPv3 engine builds a
 * request that our agent side must accept, and parses our response.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ftw.h>
#include <sys/stat.h>

#include <net-snmp/net-snmp-config.h>

#include <net-snmp/net-snmp-includes.h>

#include <net-snmp/library/keytools.h>
#include <net-snmp/library/lcd_time.h>
#include <net-snmp/library/snmpusm.h>
#include <net-snmp/library/transform_oids.h>

#include "susm.h"

/* Big enough for every message here. */
#define TV_BUF_BYTES 4096
/* Random bit-flip rounds; fixed seed so a failure repeats. */
#define TV_FLIP_ROUNDS 3000
#define TV_SEED        77777u
/* Users an agent in these tests knows. */
#define TV_MAX_USERS 8

static const uint8_t tv_engine_id[] = {0x80, 0x00, 0x1f, 0x88, 0x80, 0x66, 0x6c, 0x65, 0x65, 0x74, 0x01};
static const uint8_t tv_auth_pw[] = "maplesyrup";
static const uint8_t tv_priv_pw[] = "privacy-pass";
#define TV_PW_LEN(pw) (sizeof(pw) - 1)

static uint64_t tv_state = TV_SEED;

static uint64_t
tv_rand64(void)
{
    tv_state ^= tv_state << 13;
    tv_state ^= tv_state >> 7;
    tv_state ^= tv_state << 17;
    return tv_state;
}

/* The agent's configured users, searched by the lookup callback. */
struct tv_users {
    struct susm_user user[TV_MAX_USERS];
    size_t count;
};

static const struct susm_user *
tv_lookup(void *arg, const uint8_t *name, size_t name_len)
{
    struct tv_users *users = arg;
    size_t i;

    for (i = 0; i < users->count; i++) {
        if (users->user[i].name_len == name_len && memcmp(users->user[i].name, name, name_len) == 0) {
            return &users->user[i];
        }
    }
    return NULL;
}

static struct susm_engine
tv_engine(void)
{
    struct susm_engine e = {tv_engine_id, sizeof tv_engine_id, 7, 1000, 65507};

    return e;
}

static void
tv_user(struct susm_user *u, const char *name, enum susm_auth auth, enum susm_priv priv,
        const uint8_t *auth_pw, const uint8_t *priv_pw)
{
    assert_int_equal(susm_user_init(u, (const uint8_t *)name, strlen(name), auth, auth_pw,
                                    auth_pw ? strlen((const char *)auth_pw) : 0, priv, priv_pw,
                                    priv_pw ? strlen((const char *)priv_pw) : 0, tv_engine_id,
                                    sizeof tv_engine_id),
                     FLEET_OK);
}

static void
tv_hex(const char *hex, uint8_t *out, size_t *len)
{
    size_t n = 0;

    while (*hex) {
        unsigned v;

        if (*hex == ' ') {
            hex++;
            continue;
        }
        assert_int_equal(sscanf(hex, "%2x", &v), 1);
        out[n++] = (uint8_t)v;
        hex += 2;
    }
    *len = n;
}

static void
test_key_localization_matches_rfc3414_a3(void **state)
{
    static const uint8_t engine[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
    static const struct {
        enum susm_auth auth;
        const char *ku, *kul;
    } cases[] = {
        {SUSM_AUTH_MD5, "9f af 32 83 88 4e 92 83 4e bc 98 47 d8 ed d9 63",
         "52 6f 5e ed 9f cc e2 6f 89 64 c2 93 07 87 d8 2b"},
        {SUSM_AUTH_SHA1, "9f b5 cc 03 81 49 7b 37 93 52 89 39 ff 78 8d 5d 79 14 52 11",
         "66 95 fe bc 92 88 e3 62 82 23 5f c7 15 1f 12 84 97 b3 8f 3f"},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t want[SUSM_KEY_MAX_BYTES], got[SUSM_KEY_MAX_BYTES];
        size_t want_len;

        tv_hex(cases[i].ku, want, &want_len);
        assert_int_equal(susm_auth_key_bytes(cases[i].auth), want_len);
        assert_int_equal(susm_password_to_key(cases[i].auth, tv_auth_pw, TV_PW_LEN(tv_auth_pw), got),
                         FLEET_OK);
        assert_memory_equal(got, want, want_len);
        tv_hex(cases[i].kul, want, &want_len);
        /* In place, as the agent's key cache does it. */
        assert_int_equal(susm_localize_key(cases[i].auth, got, engine, sizeof engine, got), FLEET_OK);
        assert_memory_equal(got, want, want_len);
    }
}

/* net-snmp's OID for each of our protocols. */
static const oid *
tv_netsnmp_auth(enum susm_auth auth, size_t *len)
{
    *len = USM_AUTH_PROTO_SHA_LEN;
    switch (auth) {
    case SUSM_AUTH_MD5:
        return usmHMACMD5AuthProtocol;
    case SUSM_AUTH_SHA1:
        return usmHMACSHA1AuthProtocol;
    case SUSM_AUTH_SHA224:
        return usmHMAC128SHA224AuthProtocol;
    case SUSM_AUTH_SHA256:
        return usmHMAC192SHA256AuthProtocol;
    case SUSM_AUTH_SHA384:
        return usmHMAC256SHA384AuthProtocol;
    case SUSM_AUTH_SHA512:
        return usmHMAC384SHA512AuthProtocol;
    default:
        fail();
    }
    return NULL;
}

static void
test_key_localization_matches_netsnmp_for_every_hash(void **state)
{
    static const enum susm_auth auths[] = {SUSM_AUTH_MD5,    SUSM_AUTH_SHA1,   SUSM_AUTH_SHA224,
                                           SUSM_AUTH_SHA256, SUSM_AUTH_SHA384, SUSM_AUTH_SHA512};
    uint8_t long_pw[5000];
    size_t i, k;

    (void)state;
    /* Longer than one hashing chunk, and not a divisor of 1 MiB, to exercise the other path. */
    for (k = 0; k < sizeof long_pw; k++) {
        long_pw[k] = (uint8_t)('a' + k % 23);
    }
    for (i = 0; i < sizeof auths / sizeof auths[0]; i++) {
        const uint8_t *pws[] = {tv_auth_pw, (const uint8_t *)"12345678901234567890123", long_pw};
        const size_t pw_lens[] = {TV_PW_LEN(tv_auth_pw), 23, sizeof long_pw};

        for (k = 0; k < 3; k++) {
            uint8_t ours[SUSM_KEY_MAX_BYTES], theirs[SUSM_KEY_MAX_BYTES], theirs_l[SUSM_KEY_MAX_BYTES];
            size_t n = susm_auth_key_bytes(auths[i]), theirs_len = sizeof theirs,
                   theirs_l_len = sizeof theirs_l;
            size_t proto_len;
            const oid *proto = tv_netsnmp_auth(auths[i], &proto_len);

            assert_int_equal(susm_password_to_key(auths[i], pws[k], pw_lens[k], ours), FLEET_OK);
            assert_int_equal(generate_Ku(proto, (u_int)proto_len, pws[k], pw_lens[k], theirs, &theirs_len),
                             SNMPERR_SUCCESS);
            assert_int_equal(theirs_len, n);
            assert_memory_equal(ours, theirs, n);
            assert_int_equal(susm_localize_key(auths[i], ours, tv_engine_id, sizeof tv_engine_id, ours),
                             FLEET_OK);
            assert_int_equal(generate_kul(proto, (u_int)proto_len, tv_engine_id, sizeof tv_engine_id, theirs,
                                          n, theirs_l, &theirs_l_len),
                             SNMPERR_SUCCESS);
            assert_int_equal(theirs_l_len, n);
            assert_memory_equal(ours, theirs_l, n);
        }
    }
}

static void
test_user_init_refuses_bad_parameters(void **state)
{
    struct susm_user u;
    uint8_t ku[SUSM_KEY_MAX_BYTES];

    (void)state;
    assert_int_equal(susm_user_init(&u, (const uint8_t *)"", 0, SUSM_AUTH_NONE, NULL, 0, SUSM_PRIV_NONE, NULL,
                                    0, tv_engine_id, sizeof tv_engine_id),
                     FLEET_ERR_INVAL);
    assert_int_equal(susm_user_init(&u, (const uint8_t *)"123456789012345678901234567890123", 33,
                                    SUSM_AUTH_NONE, NULL, 0, SUSM_PRIV_NONE, NULL, 0, tv_engine_id,
                                    sizeof tv_engine_id),
                     FLEET_ERR_INVAL);
    assert_int_equal(susm_user_init(&u, (const uint8_t *)"u", 1, SUSM_AUTH_NONE, NULL, 0, SUSM_PRIV_AES128,
                                    tv_priv_pw, 4, tv_engine_id, sizeof tv_engine_id),
                     FLEET_ERR_INVAL);
    assert_int_equal(susm_user_init(&u, (const uint8_t *)"u", 1, SUSM_AUTH_SHA1, tv_auth_pw, 0,
                                    SUSM_PRIV_NONE, NULL, 0, tv_engine_id, sizeof tv_engine_id),
                     FLEET_ERR_INVAL);
    assert_int_equal(susm_password_to_key(SUSM_AUTH_NONE, tv_auth_pw, 4, ku), FLEET_ERR_INVAL);
}

/* A GET of sysDescr.0 and sysUpTime.0 from the client side, as PDU bytes in @p buf. */
static void
tv_request_pdu(uint8_t *buf, size_t cap, uint8_t type, int32_t request_id, uint8_t **pdu, size_t *pdu_len)
{
    struct spdu_value null = {.tag = BER_NULL};
    struct spdu_encoder e;
    struct oid name;

    spdu_enc_init(&e, buf, cap, SPDU_HEADROOM(0), cap - SPDU_HEADROOM(0));
    assert_int_equal(oid_parse("1.3.6.1.2.1.1.1.0", &name), FLEET_OK);
    assert_int_equal(spdu_enc_binding(&e, &name, &null), FLEET_OK);
    assert_int_equal(oid_parse("1.3.6.1.2.1.1.3.0", &name), FLEET_OK);
    assert_int_equal(spdu_enc_binding(&e, &name, &null), FLEET_OK);
    spdu_enc_finish_pdu(&e, type, request_id, 0, 0, pdu, pdu_len);
}

/* The peer as the client would know it after discovery. */
static struct susm_peer
tv_peer(void)
{
    struct susm_peer peer;

    memset(&peer, 0, sizeof peer);
    memcpy(peer.engine_id, tv_engine_id, sizeof tv_engine_id);
    peer.engine_id_len = sizeof tv_engine_id;
    peer.boots = 7;
    peer.time_s = 1000;
    peer.latest_time_s = 1000;
    return peer;
}

/* Client side: encode a request as @p user at @p flags to the peer. */
static size_t
tv_client_request(const struct susm_peer *peer, const struct susm_user *user, uint8_t flags, int32_t msg_id,
                  int32_t request_id, uint8_t *out)
{
    uint8_t pdu_buf[512], *pdu;
    struct susm_out o;
    size_t pdu_len, len;

    tv_request_pdu(pdu_buf, sizeof pdu_buf, SPDU_GET, request_id, &pdu, &pdu_len);
    susm_request_out(peer, user, flags, msg_id, 65507, 0x1122334455667788ull + (uint64_t)msg_id, &o);
    assert_int_equal(susm_encode(&o, pdu, pdu_len, out, TV_BUF_BYTES, &len), FLEET_OK);
    return len;
}

/* Agent side: a response with sysDescr.0 = "fleetsim" to @p req. */
static size_t
tv_agent_response(const struct susm_msg *req, const struct susm_engine *engine, uint8_t *out)
{
    uint8_t pdu_buf[512], *pdu;
    struct spdu_value v = {.tag = BER_OCTET_STRING, .v.bytes = {(const uint8_t *)"fleetsim", 8}};
    struct spdu_encoder e;
    struct oid name;
    struct susm_out o;
    size_t pdu_len, len;

    susm_response_out(req, engine, 99, &o);
    spdu_enc_init(&e, pdu_buf, sizeof pdu_buf, SPDU_HEADROOM(0),
                  susm_bindings_budget(1400, &o, req->pdu.request_id));
    assert_int_equal(oid_parse("1.3.6.1.2.1.1.1.0", &name), FLEET_OK);
    assert_int_equal(spdu_enc_binding(&e, &name, &v), FLEET_OK);
    spdu_enc_finish_pdu(&e, SPDU_RESPONSE, req->pdu.request_id, 0, 0, &pdu, &pdu_len);
    assert_int_equal(susm_encode(&o, pdu, pdu_len, out, TV_BUF_BYTES, &len), FLEET_OK);
    return len;
}

static void
tv_round_trip(enum susm_auth auth, enum susm_priv priv)
{
    struct susm_engine engine = tv_engine();
    struct susm_peer peer = tv_peer();
    uint8_t flags = SUSM_FLAG_REPORTABLE | SUSM_FLAG_AUTH | (priv ? SUSM_FLAG_PRIV : 0);
    uint8_t req[TV_BUF_BYTES], resp[TV_BUF_BYTES];
    struct tv_users users = {.count = 1};
    enum susm_report_kind kind;
    struct spdu_binding_iter it;
    struct spdu_binding b;
    struct susm_msg msg, back;
    size_t len;

    tv_user(&users.user[0], "ops", auth, priv, tv_auth_pw, priv ? tv_priv_pw : NULL);
    len = tv_client_request(&peer, &users.user[0], flags, 4242, 0x10203, req);
    /* Encrypted requests must not show their varbinds' OIDs in clear. */
    if (priv) {
        static const uint8_t sys_descr[] = {0x2b, 0x06, 0x01, 0x02, 0x01, 0x01, 0x01, 0x00};

        assert_null(memmem(req, len, sys_descr, sizeof sys_descr));
    }
    assert_int_equal(susm_agent_receive(req, len, &engine, tv_lookup, &users, &msg, &kind), FLEET_OK);
    assert_int_equal(kind, SUSM_REPORT_NONE);
    assert_true(msg.authenticated);
    assert_ptr_equal(msg.user, &users.user[0]);
    assert_int_equal(msg.msg_id, 4242);
    assert_int_equal(msg.max_size, 65507);
    assert_int_equal(msg.flags, flags);
    assert_true(msg.scoped_ok);
    assert_int_equal(msg.context_engine_id_len, sizeof tv_engine_id);
    assert_memory_equal(msg.context_engine_id, tv_engine_id, sizeof tv_engine_id);
    assert_int_equal(msg.context_name_len, 0);
    assert_int_equal(msg.pdu.type, SPDU_GET);
    assert_int_equal(msg.pdu.request_id, 0x10203);
    assert_int_equal(msg.pdu.binding_count, 2);

    len = tv_agent_response(&msg, &engine, resp);
    assert_int_equal(susm_client_receive(resp, len, &users.user[0], &back, &kind), FLEET_OK);
    assert_int_equal(kind, SUSM_REPORT_NONE);
    assert_true(back.authenticated);
    assert_int_equal(back.msg_id, 4242);
    assert_int_equal(back.flags, flags & ~SUSM_FLAG_REPORTABLE);
    assert_int_equal(back.pdu.type, SPDU_RESPONSE);
    assert_int_equal(back.pdu.request_id, 0x10203);
    assert_int_equal(susm_peer_update(&peer, &back), FLEET_OK);
    spdu_binding_iter_init(&it, &back.pdu);
    assert_int_equal(spdu_binding_next(&it, &b), FLEET_OK);
    assert_int_equal(b.value.tag, BER_OCTET_STRING);
    assert_int_equal(b.value.v.bytes.len, 8);
    assert_memory_equal(b.value.v.bytes.ptr, "fleetsim", 8);
}

static void
test_authpriv_round_trip_for_every_auth_protocol(void **state)
{
    static const enum susm_auth auths[] = {SUSM_AUTH_MD5,    SUSM_AUTH_SHA1,   SUSM_AUTH_SHA224,
                                           SUSM_AUTH_SHA256, SUSM_AUTH_SHA384, SUSM_AUTH_SHA512};
    size_t i;

    (void)state;
    for (i = 0; i < sizeof auths / sizeof auths[0]; i++) {
        tv_round_trip(auths[i], SUSM_PRIV_AES128);
        tv_round_trip(auths[i], SUSM_PRIV_NONE);
    }
}

static void
test_discovery_gets_unknown_engine_id_report(void **state)
{
    struct susm_engine engine = tv_engine();
    struct tv_users users = {.count = 0};
    uint8_t req[TV_BUF_BYTES], rep[SUSM_REPORT_MAX_BYTES];
    enum susm_report_kind kind;
    struct susm_peer peer;
    struct susm_msg msg, back;
    uint32_t counter = 0;
    size_t len;

    (void)state;
    assert_int_equal(susm_client_discovery(1, 77, 65507, req, sizeof req, &len), FLEET_OK);
    assert_int_equal(susm_agent_receive(req, len, &engine, tv_lookup, &users, &msg, &kind), FLEET_OK);
    assert_int_equal(kind, SUSM_REPORT_UNKNOWN_ENGINE_IDS);
    assert_true(msg.report_wanted);
    assert_int_equal(msg.engine_id_len, 0);
    assert_int_equal(msg.flags, SUSM_FLAG_REPORTABLE);

    assert_int_equal(susm_encode_report(&msg, &engine, kind, 5, rep, sizeof rep, &len), FLEET_OK);
    assert_int_equal(susm_client_receive(rep, len, NULL, &back, &kind), FLEET_OK);
    assert_int_equal(kind, SUSM_REPORT_NONE);
    assert_int_equal(back.msg_id, 1);
    assert_int_equal(back.flags, 0);
    assert_int_equal(back.pdu.type, SPDU_REPORT);
    assert_int_equal(back.pdu.request_id, 77);
    assert_int_equal(susm_report_kind_of(&back.pdu, &counter), SUSM_REPORT_UNKNOWN_ENGINE_IDS);
    assert_int_equal(counter, 5);
    memset(&peer, 0, sizeof peer);
    susm_peer_discovered(&peer, &back);
    assert_int_equal(peer.engine_id_len, sizeof tv_engine_id);
    assert_memory_equal(peer.engine_id, tv_engine_id, sizeof tv_engine_id);
    assert_int_equal(peer.boots, 7);
    assert_int_equal(peer.time_s, 1000);
}

/* Send @p len bytes of @p req to the agent and expect @p want and a Report for it, parsed by the client. */
static void
tv_expect_report(uint8_t *req, size_t len, struct tv_users *users, const struct susm_engine *engine,
                 enum susm_report_kind want, const struct susm_user *client_user, int want_authenticated)
{
    uint8_t rep[SUSM_REPORT_MAX_BYTES];
    enum susm_report_kind kind, failure;
    struct susm_msg msg, back;
    uint32_t counter = 0;
    size_t rep_len;

    assert_int_equal(susm_agent_receive(req, len, engine, tv_lookup, users, &msg, &kind), FLEET_OK);
    if (kind != want) {
        fail_msg("got usmStats %d, want %d", kind, want);
    }
    assert_true(msg.report_wanted);
    assert_int_equal(susm_encode_report(&msg, engine, kind, 1234, rep, sizeof rep, &rep_len), FLEET_OK);
    assert_int_equal(susm_client_receive(rep, rep_len, client_user, &back, &failure), FLEET_OK);
    assert_int_equal(failure, SUSM_REPORT_NONE);
    assert_int_equal(back.authenticated, want_authenticated);
    assert_int_equal(back.msg_id, msg.msg_id);
    assert_int_equal(susm_report_kind_of(&back.pdu, &counter), want);
    assert_int_equal(counter, 1234);
}

static void
test_wrong_key_gives_wrong_digests(void **state)
{
    struct susm_engine engine = tv_engine();
    struct susm_peer peer = tv_peer();
    struct tv_users users = {.count = 1};
    struct susm_user intruder;
    uint8_t req[TV_BUF_BYTES], copy[TV_BUF_BYTES];
    size_t len;

    (void)state;
    tv_user(&users.user[0], "ops", SUSM_AUTH_SHA256, SUSM_PRIV_AES128, tv_auth_pw, tv_priv_pw);
    tv_user(&intruder, "ops", SUSM_AUTH_SHA256, SUSM_PRIV_AES128, (const uint8_t *)"maplesyrup2", tv_priv_pw);
    len = tv_client_request(&peer, &intruder, SUSM_FLAG_AUTH | SUSM_FLAG_REPORTABLE, 9, 9, req);
    memcpy(copy, req, len);
    tv_expect_report(req, len, &users, &engine, SUSM_REPORT_WRONG_DIGESTS, NULL, 0);
    /* The digest is zeroed while checking and put back: the datagram is as it came. */
    assert_memory_equal(req, copy, len);

    /* The same with a digest of the wrong length (SHA-1's 12 bytes for a SHA-256 user). */
    tv_user(&intruder, "ops", SUSM_AUTH_SHA1, SUSM_PRIV_NONE, tv_auth_pw, NULL);
    len = tv_client_request(&peer, &intruder, SUSM_FLAG_AUTH | SUSM_FLAG_REPORTABLE, 10, 10, req);
    tv_expect_report(req, len, &users, &engine, SUSM_REPORT_WRONG_DIGESTS, NULL, 0);
}

static void
test_unknown_user_gives_report(void **state)
{
    struct susm_engine engine = tv_engine();
    struct susm_peer peer = tv_peer();
    struct tv_users users = {.count = 1};
    struct susm_user stranger;
    uint8_t req[TV_BUF_BYTES];
    size_t len;

    (void)state;
    tv_user(&users.user[0], "ops", SUSM_AUTH_SHA1, SUSM_PRIV_AES128, tv_auth_pw, tv_priv_pw);
    tv_user(&stranger, "opz", SUSM_AUTH_SHA1, SUSM_PRIV_AES128, tv_auth_pw, tv_priv_pw);
    len = tv_client_request(&peer, &stranger, SUSM_FLAG_AUTH | SUSM_FLAG_PRIV | SUSM_FLAG_REPORTABLE, 3, 3,
                            req);
    tv_expect_report(req, len, &users, &engine, SUSM_REPORT_UNKNOWN_USER_NAMES, NULL, 0);
}

static void
test_level_the_user_lacks_gives_unsupported_sec_levels(void **state)
{
    struct susm_engine engine = tv_engine();
    struct susm_peer peer = tv_peer();
    struct tv_users users = {.count = 2};
    struct susm_user client;
    uint8_t req[TV_BUF_BYTES];
    size_t len;

    (void)state;
    /* The agent's "ops" has no privacy key; the client believes it has. */
    tv_user(&users.user[0], "ops", SUSM_AUTH_SHA1, SUSM_PRIV_NONE, tv_auth_pw, NULL);
    tv_user(&users.user[1], "ro", SUSM_AUTH_NONE, SUSM_PRIV_NONE, NULL, NULL);
    tv_user(&client, "ops", SUSM_AUTH_SHA1, SUSM_PRIV_AES128, tv_auth_pw, tv_priv_pw);
    len =
        tv_client_request(&peer, &client, SUSM_FLAG_AUTH | SUSM_FLAG_PRIV | SUSM_FLAG_REPORTABLE, 4, 4, req);
    tv_expect_report(req, len, &users, &engine, SUSM_REPORT_UNSUPPORTED_SEC_LEVELS, NULL, 0);
    tv_user(&client, "ro", SUSM_AUTH_MD5, SUSM_PRIV_NONE, tv_auth_pw, NULL);
    len = tv_client_request(&peer, &client, SUSM_FLAG_AUTH | SUSM_FLAG_REPORTABLE, 5, 5, req);
    tv_expect_report(req, len, &users, &engine, SUSM_REPORT_UNSUPPORTED_SEC_LEVELS, NULL, 0);
}

static void
test_time_window_is_150_seconds_and_same_boots(void **state)
{
    static const struct {
        uint32_t boots, time_s;
        int in_window;
    } cases[] = {
        {7, 1000, 1}, {7, 1150, 1}, {7, 850, 1}, {7, 1151, 0}, {7, 849, 0}, {6, 1000, 0}, {8, 1000, 0},
    };
    struct susm_engine engine = tv_engine();
    struct tv_users users = {.count = 1};
    size_t i;

    (void)state;
    tv_user(&users.user[0], "ops", SUSM_AUTH_SHA256, SUSM_PRIV_AES128, tv_auth_pw, tv_priv_pw);
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct susm_peer peer = tv_peer();
        uint8_t req[TV_BUF_BYTES];
        struct susm_msg msg;
        enum susm_report_kind kind;
        size_t len;

        peer.boots = cases[i].boots;
        peer.time_s = cases[i].time_s;
        len = tv_client_request(&peer, &users.user[0], SUSM_FLAG_AUTH | SUSM_FLAG_PRIV | SUSM_FLAG_REPORTABLE,
                                6, 6, req);
        if (cases[i].in_window) {
            assert_int_equal(susm_agent_receive(req, len, &engine, tv_lookup, &users, &msg, &kind), FLEET_OK);
            assert_int_equal(kind, SUSM_REPORT_NONE);
        } else {
            /* The Report is authenticated, so the client may trust the clock it carries. */
            tv_expect_report(req, len, &users, &engine, SUSM_REPORT_NOT_IN_TIME_WINDOWS, &users.user[0], 1);
        }
    }
}

static void
test_latched_boots_is_never_in_time_window(void **state)
{
    struct susm_engine engine = tv_engine();
    struct susm_peer peer = tv_peer();
    struct tv_users users = {.count = 1};
    uint8_t req[TV_BUF_BYTES];
    size_t len;

    (void)state;
    engine.boots = SUSM_MAX_ENGINE_BOOTS;
    peer.boots = SUSM_MAX_ENGINE_BOOTS;
    tv_user(&users.user[0], "ops", SUSM_AUTH_SHA1, SUSM_PRIV_NONE, tv_auth_pw, NULL);
    len = tv_client_request(&peer, &users.user[0], SUSM_FLAG_AUTH | SUSM_FLAG_REPORTABLE, 6, 6, req);
    tv_expect_report(req, len, &users, &engine, SUSM_REPORT_NOT_IN_TIME_WINDOWS, &users.user[0], 1);
}

static void
test_client_learns_clock_from_authenticated_report(void **state)
{
    struct susm_engine engine = tv_engine();
    struct susm_peer peer = tv_peer();
    struct tv_users users = {.count = 1};
    uint8_t req[TV_BUF_BYTES], rep[SUSM_REPORT_MAX_BYTES];
    enum susm_report_kind kind;
    struct susm_msg msg, back;
    size_t len;

    (void)state;
    tv_user(&users.user[0], "ops", SUSM_AUTH_SHA1, SUSM_PRIV_AES128, tv_auth_pw, tv_priv_pw);
    /* The agent rebooted: boots 8, time 20. The client still thinks 7 / 1000. */
    engine.boots = 8;
    engine.time_s = 20;
    len = tv_client_request(&peer, &users.user[0], SUSM_FLAG_AUTH | SUSM_FLAG_PRIV | SUSM_FLAG_REPORTABLE, 11,
                            11, req);
    assert_int_equal(susm_agent_receive(req, len, &engine, tv_lookup, &users, &msg, &kind), FLEET_OK);
    assert_int_equal(kind, SUSM_REPORT_NOT_IN_TIME_WINDOWS);
    assert_int_equal(susm_encode_report(&msg, &engine, kind, 1, rep, sizeof rep, &len), FLEET_OK);
    assert_int_equal(susm_client_receive(rep, len, &users.user[0], &back, &kind), FLEET_OK);
    assert_int_equal(kind, SUSM_REPORT_NONE);
    assert_int_equal(susm_peer_update(&peer, &back), FLEET_OK);
    assert_int_equal(peer.boots, 8);
    assert_int_equal(peer.time_s, 20);
    /* Retried with the learned clock, the request passes. */
    len = tv_client_request(&peer, &users.user[0], SUSM_FLAG_AUTH | SUSM_FLAG_PRIV | SUSM_FLAG_REPORTABLE, 12,
                            12, req);
    assert_int_equal(susm_agent_receive(req, len, &engine, tv_lookup, &users, &msg, &kind), FLEET_OK);
    assert_int_equal(kind, SUSM_REPORT_NONE);
    /* An old message (boots 7) is refused by the client from now on. */
    back.engine_boots = 7;
    assert_int_equal(susm_peer_update(&peer, &back), FLEET_ERR_PROTO);
}

static void
test_wrong_privacy_key_gives_decryption_errors(void **state)
{
    struct susm_engine engine = tv_engine();
    struct susm_peer peer = tv_peer();
    struct tv_users users = {.count = 1};
    struct susm_user client;
    uint8_t req[TV_BUF_BYTES];
    size_t len;

    (void)state;
    tv_user(&users.user[0], "ops", SUSM_AUTH_SHA1, SUSM_PRIV_AES128, tv_auth_pw, tv_priv_pw);
    tv_user(&client, "ops", SUSM_AUTH_SHA1, SUSM_PRIV_AES128, tv_auth_pw, (const uint8_t *)"another-secret");
    len = tv_client_request(&peer, &client, SUSM_FLAG_AUTH | SUSM_FLAG_PRIV | SUSM_FLAG_REPORTABLE, 13, 13,
                            req);
    tv_expect_report(req, len, &users, &engine, SUSM_REPORT_DECRYPTION_ERRORS, NULL, 0);
}

static void
test_client_refuses_response_with_wrong_digest(void **state)
{
    struct susm_engine engine = tv_engine();
    struct susm_peer peer = tv_peer();
    struct tv_users users = {.count = 1};
    uint8_t req[TV_BUF_BYTES], resp[TV_BUF_BYTES];
    enum susm_report_kind kind;
    struct susm_user other;
    struct susm_msg msg, back;
    size_t len;

    (void)state;
    tv_user(&users.user[0], "ops", SUSM_AUTH_SHA512, SUSM_PRIV_AES128, tv_auth_pw, tv_priv_pw);
    tv_user(&other, "ops", SUSM_AUTH_SHA512, SUSM_PRIV_AES128, (const uint8_t *)"not-maplesyrup", tv_priv_pw);
    len = tv_client_request(&peer, &users.user[0], SUSM_FLAG_AUTH | SUSM_FLAG_PRIV, 14, 14, req);
    assert_int_equal(susm_agent_receive(req, len, &engine, tv_lookup, &users, &msg, &kind), FLEET_OK);
    assert_int_equal(kind, SUSM_REPORT_NONE);
    len = tv_agent_response(&msg, &engine, resp);
    assert_int_equal(susm_client_receive(resp, len, &other, &back, &kind), FLEET_OK);
    assert_int_equal(kind, SUSM_REPORT_WRONG_DIGESTS);
    assert_false(back.authenticated);
    assert_int_equal(susm_client_receive(resp, len, NULL, &back, &kind), FLEET_OK);
    assert_int_equal(kind, SUSM_REPORT_UNSUPPORTED_SEC_LEVELS);
}

static void
test_unreportable_failure_is_not_reported(void **state)
{
    struct susm_engine engine = tv_engine();
    struct susm_peer peer = tv_peer();
    struct tv_users users = {.count = 1};
    struct susm_user stranger;
    uint8_t req[TV_BUF_BYTES];
    enum susm_report_kind kind;
    struct susm_msg msg;
    size_t len;

    (void)state;
    tv_user(&users.user[0], "ops", SUSM_AUTH_SHA1, SUSM_PRIV_AES128, tv_auth_pw, tv_priv_pw);
    tv_user(&stranger, "opz", SUSM_AUTH_SHA1, SUSM_PRIV_AES128, tv_auth_pw, tv_priv_pw);
    /* Encrypted and not reportable: the PDU type is unknown, so no Report (RFC 3412 7.1 step 3b). */
    len = tv_client_request(&peer, &stranger, SUSM_FLAG_AUTH | SUSM_FLAG_PRIV, 3, 3, req);
    assert_int_equal(susm_agent_receive(req, len, &engine, tv_lookup, &users, &msg, &kind), FLEET_OK);
    assert_int_equal(kind, SUSM_REPORT_UNKNOWN_USER_NAMES);
    assert_false(msg.report_wanted);
}

/* Valid v3 messages for the robustness tests: a discovery, an authPriv request, an authNoPriv response. */
static size_t
tv_samples(uint8_t msgs[][TV_BUF_BYTES], size_t *lens, struct tv_users *users)
{
    struct susm_engine engine = tv_engine();
    struct susm_peer peer = tv_peer();
    enum susm_report_kind kind;
    struct susm_msg msg;
    uint8_t work[TV_BUF_BYTES];

    users->count = 1;
    tv_user(&users->user[0], "ops", SUSM_AUTH_SHA256, SUSM_PRIV_AES128, tv_auth_pw, tv_priv_pw);
    assert_int_equal(susm_client_discovery(1, 2, 1500, msgs[0], TV_BUF_BYTES, &lens[0]), FLEET_OK);
    lens[1] = tv_client_request(&peer, &users->user[0],
                                SUSM_FLAG_AUTH | SUSM_FLAG_PRIV | SUSM_FLAG_REPORTABLE, 21, 21, msgs[1]);
    lens[2] = tv_client_request(&peer, &users->user[0], SUSM_FLAG_AUTH, 22, 22, work);
    assert_int_equal(susm_agent_receive(work, lens[2], &engine, tv_lookup, users, &msg, &kind), FLEET_OK);
    lens[2] = tv_agent_response(&msg, &engine, msgs[2]);
    return 3;
}

/* Run both receivers over a heap copy of exactly @p len bytes; returns the agent's result. */
static enum fleet_err
tv_receive_exact(const uint8_t *in, size_t len, struct tv_users *users, enum susm_report_kind *kind)
{
    struct susm_engine engine = tv_engine();
    uint8_t *copy = malloc(len ? len : 1);
    enum susm_report_kind failure;
    struct susm_msg msg;
    enum fleet_err rc;

    assert_non_null(copy);
    memcpy(copy, in, len);
    rc = susm_agent_receive(copy, len, &engine, tv_lookup, users, &msg, kind);
    if (rc == FLEET_OK && msg.report_wanted && *kind != SUSM_REPORT_NONE) {
        uint8_t rep[SUSM_REPORT_MAX_BYTES];
        size_t rep_len;

        assert_int_equal(susm_encode_report(&msg, &engine, *kind, 1, rep, sizeof rep, &rep_len), FLEET_OK);
    }
    memcpy(copy, in, len);
    (void)susm_client_receive(copy, len, &users->user[0], &msg, &failure);
    free(copy);
    return rc;
}

static void
test_truncated_v3_at_every_length_is_refused(void **state)
{
    static uint8_t msgs[3][TV_BUF_BYTES];
    struct tv_users users;
    size_t lens[3], n = tv_samples(msgs, lens, &users), i, cut;

    (void)state;
    for (i = 0; i < n; i++) {
        for (cut = 0; cut < lens[i]; cut++) {
            enum susm_report_kind kind;

            if (tv_receive_exact(msgs[i], cut, &users, &kind) != FLEET_ERR_PROTO) {
                fail_msg("message %zu cut to %zu of %zu bytes was not refused", i, cut, lens[i]);
            }
        }
    }
}

static void
test_any_changed_byte_of_authpriv_request_is_caught(void **state)
{
    static uint8_t msgs[3][TV_BUF_BYTES];
    struct tv_users users;
    size_t lens[3], at;
    int bit;

    (void)state;
    tv_samples(msgs, lens, &users);
    for (at = 0; at < lens[1]; at++) {
        for (bit = 0; bit < 8; bit++) {
            uint8_t work[TV_BUF_BYTES];
            enum susm_report_kind kind = SUSM_REPORT_NONE;
            enum fleet_err rc;

            memcpy(work, msgs[1], lens[1]);
            work[at] ^= (uint8_t)(1u << bit);
            rc = tv_receive_exact(work, lens[1], &users, &kind);
            if (rc == FLEET_OK && kind == SUSM_REPORT_NONE) {
                fail_msg("flipping bit %d of byte %zu went unnoticed", bit, at);
            }
        }
    }
}

static void
test_random_bit_flips_v3_never_crash(void **state)
{
    static uint8_t msgs[3][TV_BUF_BYTES];
    struct tv_users users;
    size_t lens[3], n = tv_samples(msgs, lens, &users), round;

    (void)state;
    for (round = 0; round < TV_FLIP_ROUNDS; round++) {
        size_t which = round % n, flips = 1 + tv_rand64() % 4, k;
        uint8_t work[TV_BUF_BYTES];
        enum susm_report_kind kind;

        memcpy(work, msgs[which], lens[which]);
        for (k = 0; k < flips; k++) {
            work[tv_rand64() % lens[which]] ^= (uint8_t)(1u << (tv_rand64() % 8));
        }
        tv_receive_exact(work, lens[which], &users, &kind);
    }
}

static void
test_malformed_headers_are_dropped(void **state)
{
    static uint8_t msgs[3][TV_BUF_BYTES];
    struct susm_engine engine = tv_engine();
    struct tv_users users;
    enum susm_report_kind kind;
    struct susm_msg msg;
    size_t lens[3];
    uint8_t work[TV_BUF_BYTES];
    uint8_t *flags;

    (void)state;
    tv_samples(msgs, lens, &users);
    /* The discovery: 30 len 02 01 03 30 len 02 01 <msgID> 02 02 <maxSize> 04 01 <flags> 02 01 03 ... */
    memcpy(work, msgs[0], lens[0]);
    flags = memchr(work + 4, 0x04, 16);
    assert_non_null(flags);
    assert_int_equal(flags[1], 1);
    flags[2] = SUSM_FLAG_PRIV | SUSM_FLAG_REPORTABLE; /* privacy without authentication */
    assert_int_equal(susm_agent_receive(work, lens[0], &engine, tv_lookup, &users, &msg, &kind),
                     FLEET_ERR_PROTO);
    flags[2] = SUSM_FLAG_REPORTABLE;
    flags[5] = 2; /* msgSecurityModel 2 (v2c) */
    assert_int_equal(susm_agent_receive(work, lens[0], &engine, tv_lookup, &users, &msg, &kind),
                     FLEET_ERR_PROTO);
    memcpy(work, msgs[0], lens[0]);
    work[4] = 1; /* msgVersion 1 */
    assert_int_equal(susm_agent_receive(work, lens[0], &engine, tv_lookup, &users, &msg, &kind),
                     FLEET_ERR_PROTO);
    /* Trailing garbage after the message. */
    memcpy(work, msgs[0], lens[0]);
    work[lens[0]] = 0;
    assert_int_equal(susm_agent_receive(work, lens[0] + 1, &engine, tv_lookup, &users, &msg, &kind),
                     FLEET_ERR_PROTO);
    /* msgMaxSize below 484 (the discovery says 1500, 05 dc, right before the flags). */
    memcpy(work, msgs[0], lens[0]);
    assert_int_equal(flags[-2], 0x05);
    assert_int_equal(flags[-1], 0xdc);
    flags[-2] = 0x01;
    flags[-1] = 0xe3;
    assert_int_equal(susm_agent_receive(work, lens[0], &engine, tv_lookup, &users, &msg, &kind),
                     FLEET_ERR_PROTO);
    flags[-1] = 0xe4;
    assert_int_equal(susm_agent_receive(work, lens[0], &engine, tv_lookup, &users, &msg, &kind), FLEET_OK);
    assert_int_equal(kind, SUSM_REPORT_UNKNOWN_ENGINE_IDS);
}

static void
test_encode_refuses_inconsistent_parameters(void **state)
{
    struct susm_peer peer = tv_peer();
    struct susm_user noauth, nopriv;
    uint8_t pdu_buf[256], out[TV_BUF_BYTES], *pdu;
    struct susm_out o;
    size_t pdu_len, len;

    (void)state;
    tv_user(&noauth, "ro", SUSM_AUTH_NONE, SUSM_PRIV_NONE, NULL, NULL);
    tv_user(&nopriv, "rw", SUSM_AUTH_SHA1, SUSM_PRIV_NONE, tv_auth_pw, NULL);
    tv_request_pdu(pdu_buf, sizeof pdu_buf, SPDU_GET, 1, &pdu, &pdu_len);
    susm_request_out(&peer, &noauth, SUSM_FLAG_AUTH, 1, 1500, 0, &o);
    assert_int_equal(susm_encode(&o, pdu, pdu_len, out, sizeof out, &len), FLEET_ERR_INVAL);
    susm_request_out(&peer, &nopriv, SUSM_FLAG_AUTH | SUSM_FLAG_PRIV, 1, 1500, 0, &o);
    assert_int_equal(susm_encode(&o, pdu, pdu_len, out, sizeof out, &len), FLEET_ERR_INVAL);
    susm_request_out(&peer, &nopriv, SUSM_FLAG_PRIV, 1, 1500, 0, &o);
    assert_int_equal(susm_encode(&o, pdu, pdu_len, out, sizeof out, &len), FLEET_ERR_INVAL);
    susm_request_out(&peer, &nopriv, SUSM_FLAG_AUTH, 1, 1500, 0, &o);
    assert_int_equal(susm_encode(&o, pdu, pdu_len, out, 40, &len), FLEET_ERR_LIMIT);
    assert_int_equal(susm_encode(&o, pdu, pdu_len, out, sizeof out, &len), FLEET_OK);
}

/* Fill a response to the budget for @p max bytes at the level of @p user / @p flags; it must fit. */
static void
tv_fill_v3(size_t max, const struct susm_user *user, uint8_t flags)
{
    struct susm_engine engine = tv_engine();
    struct susm_peer peer = tv_peer();
    uint8_t *buf = malloc(max + 256), *out = malloc(max + 256), *pdu, *copy;
    struct spdu_value v = {.tag = BER_COUNTER64};
    struct tv_users users = {.count = 1};
    struct spdu_encoder e;
    struct oid name;
    struct susm_out o;
    struct susm_msg msg;
    enum susm_report_kind kind;
    size_t pdu_len, len;
    uint32_t n = 0;

    assert_non_null(buf);
    assert_non_null(out);
    users.user[0] = *user;
    susm_request_out(&peer, user, flags, 31, 1500, 5, &o);
    o.context_name = (const uint8_t *)"ctx";
    o.context_name_len = 3;
    spdu_enc_init(&e, buf, max + 256, SPDU_HEADROOM(0), susm_bindings_budget(max, &o, INT32_MIN));
    assert_int_equal(oid_parse("1.3.6.1.2.1.31.1.1.1.6.1", &name), FLEET_OK);
    do {
        name.sub[name.len - 1] = n++;
        v.v.u = tv_rand64() >> (tv_rand64() % 64);
    } while (spdu_enc_binding(&e, &name, &v) == FLEET_OK);
    spdu_enc_finish_pdu(&e, SPDU_GETBULK, INT32_MIN, INT32_MAX, INT32_MAX, &pdu, &pdu_len);
    assert_int_equal(susm_encode(&o, pdu, pdu_len, out, max + 256, &len), FLEET_OK);
    if (len > max || len + 40 < max) {
        fail_msg("max %zu: v3 message of %zu bytes", max, len);
    }
    copy = malloc(len);
    assert_non_null(copy);
    memcpy(copy, out, len);
    /* Our own decoder refuses more varbinds than a request carries, after the security checks. */
    if (e.count > SPDU_MAX_BINDINGS_DECODED) {
        assert_int_equal(susm_agent_receive(copy, len, &engine, tv_lookup, &users, &msg, &kind),
                         FLEET_ERR_LIMIT);
        assert_int_equal(kind, SUSM_REPORT_NONE);
        assert_int_equal(msg.pdu.request_id, INT32_MIN);
    } else {
        assert_int_equal(susm_agent_receive(copy, len, &engine, tv_lookup, &users, &msg, &kind), FLEET_OK);
        assert_int_equal(kind, SUSM_REPORT_NONE);
        assert_int_equal(msg.pdu.binding_count, e.count);
    }
    free(copy);
    free(out);
    free(buf);
}

static void
test_v3_filled_to_budget_stays_within_max(void **state)
{
    static const size_t maxes[] = {484, 1472, 65507, 70000};
    struct susm_user sha512, md5, none;
    size_t i;

    (void)state;
    tv_user(&sha512, "a-long-user-name-of-32-bytes-xxx", SUSM_AUTH_SHA512, SUSM_PRIV_AES128, tv_auth_pw,
            tv_priv_pw);
    tv_user(&md5, "m", SUSM_AUTH_MD5, SUSM_PRIV_NONE, tv_auth_pw, NULL);
    tv_user(&none, "n", SUSM_AUTH_NONE, SUSM_PRIV_NONE, NULL, NULL);
    for (i = 0; i < sizeof maxes / sizeof maxes[0]; i++) {
        tv_fill_v3(maxes[i], &sha512, SUSM_FLAG_AUTH | SUSM_FLAG_PRIV);
        tv_fill_v3(maxes[i], &md5, SUSM_FLAG_AUTH);
        tv_fill_v3(maxes[i], &none, 0);
    }
}

/*
 * net-snmp's own v3 engine as the oracle. Its USM keeps users and engine
 * clocks in process-wide lists, so this test sets them up once: the user
 * comes from a session (usm_create_user_from_session localizes its keys;
 * set_enginetime records our engine's boots and time), then snmp_build() makes the request
 * and snmp_parse() checks our response with its own HMAC and AES code.
 */
static void
tv_netsnmp_exchange(enum susm_auth auth, const char *user_name)
{
    struct susm_engine engine = tv_engine();
    struct tv_users users = {.count = 1};
    static const oid sys_descr[] = {1, 3, 6, 1, 2, 1, 1, 1, 0};
    uint8_t resp[TV_BUF_BYTES];
    size_t pkt_len = TV_BUF_BYTES, offset = 0, len, proto_len;
    u_char *pkt = malloc(pkt_len), *in;
    netsnmp_session sess;
    netsnmp_pdu *pdu, *back;
    enum susm_report_kind kind;
    struct susm_msg msg;
    const oid *proto = tv_netsnmp_auth(auth, &proto_len);

    assert_non_null(pkt);
    tv_user(&users.user[0], user_name, auth, SUSM_PRIV_AES128, tv_auth_pw, tv_priv_pw);
    snmp_sess_init(&sess);
    sess.version = SNMP_VERSION_3;
    sess.securityModel = SNMP_SEC_MODEL_USM;
    sess.securityName = (char *)user_name;
    sess.securityNameLen = strlen(user_name);
    sess.securityLevel = SNMP_SEC_LEVEL_AUTHPRIV;
    sess.securityAuthProto = (oid *)proto;
    sess.securityAuthProtoLen = proto_len;
    sess.securityAuthKeyLen = USM_AUTH_KU_LEN;
    assert_int_equal(generate_Ku(proto, (u_int)proto_len, tv_auth_pw, TV_PW_LEN(tv_auth_pw),
                                 sess.securityAuthKey, &sess.securityAuthKeyLen),
                     SNMPERR_SUCCESS);
    sess.securityPrivProto = usmAESPrivProtocol;
    sess.securityPrivProtoLen = USM_PRIV_PROTO_AES_LEN;
    sess.securityPrivKeyLen = USM_PRIV_KU_LEN;
    assert_int_equal(generate_Ku(proto, (u_int)proto_len, tv_priv_pw, TV_PW_LEN(tv_priv_pw),
                                 sess.securityPrivKey, &sess.securityPrivKeyLen),
                     SNMPERR_SUCCESS);
    sess.contextName = (char *)"";
    sess.contextNameLen = 0;
    sess.securityEngineID = (u_char *)tv_engine_id;
    sess.securityEngineIDLen = sizeof tv_engine_id;
    sess.engineBoots = engine.boots;
    sess.engineTime = engine.time_s;
    assert_int_equal(usm_create_user_from_session(&sess), SNMPERR_SUCCESS);
    /* The session's boots and time did not reach the request without this (they went out as 0 / 0). */
    assert_int_equal(set_enginetime(tv_engine_id, sizeof tv_engine_id, engine.boots, engine.time_s, TRUE),
                     SNMPERR_SUCCESS);

    /* net-snmp's request, our agent. */
    pdu = snmp_pdu_create(SNMP_MSG_GET);
    pdu->version = SNMP_VERSION_3;
    pdu->reqid = 0x5151;
    pdu->msgid = 0x6161;
    snmp_add_null_var(pdu, sys_descr, sizeof sys_descr / sizeof sys_descr[0]);
    netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_REVERSE_ENCODE, 1);
    pdu->flags &= ~UCD_MSG_FLAG_FORWARD_ENCODE;
    if (snmp_build(&pkt, &pkt_len, &offset, &sess, pdu) != 0) {
        fail_msg("snmp_build: %s", snmp_api_errstring(sess.s_snmp_errno));
    }
    snmp_free_pdu(pdu);
    in = pkt + pkt_len - offset;
    len = offset;
    assert_int_equal(susm_agent_receive(in, len, &engine, tv_lookup, &users, &msg, &kind), FLEET_OK);
    assert_int_equal(kind, SUSM_REPORT_NONE);
    assert_int_equal(msg.flags & (SUSM_FLAG_AUTH | SUSM_FLAG_PRIV), SUSM_FLAG_AUTH | SUSM_FLAG_PRIV);
    assert_int_equal(msg.pdu.type, SPDU_GET);
    assert_int_equal(msg.pdu.request_id, 0x5151);
    assert_int_equal(msg.msg_id, 0x6161);
    assert_int_equal(msg.pdu.binding_count, 1);

    /* Our response, net-snmp's parser (HMAC, time window as a manager, AES). */
    len = tv_agent_response(&msg, &engine, resp);
    back = snmp_pdu_create(SNMP_MSG_GET);
    if (snmp_parse(NULL, &sess, back, resp, len) != 0) {
        fail_msg("snmp_parse: %s", snmp_api_errstring(sess.s_snmp_errno));
    }
    assert_int_equal(back->command, SNMP_MSG_RESPONSE);
    assert_int_equal(back->reqid, 0x5151);
    assert_int_equal(back->securityLevel, SNMP_SEC_LEVEL_AUTHPRIV);
    assert_non_null(back->variables);
    assert_int_equal(back->variables->type, ASN_OCTET_STR);
    assert_int_equal(back->variables->val_len, 8);
    assert_memory_equal(back->variables->val.string, "fleetsim", 8);
    snmp_free_pdu(back);
    free(pkt);
}

static void
test_netsnmp_v3_request_and_response_interoperate(void **state)
{
    (void)state;
    tv_netsnmp_exchange(SUSM_AUTH_SHA1, "nsha1");
    tv_netsnmp_exchange(SUSM_AUTH_SHA256, "nsha256");
    tv_netsnmp_exchange(SUSM_AUTH_MD5, "nmd5");
    tv_netsnmp_exchange(SUSM_AUTH_SHA512, "nsha512");
}

/* An empty directory for net-snmp's configuration and persistent state, removed at teardown. */
static char tv_snmp_dir[] = "/tmp/test_susm.XXXXXX";

static int
tv_netsnmp_setup(void **state)
{
    (void)state;
    if (!mkdtemp(tv_snmp_dir)) {
        return -1;
    }
    /* No configuration files, no persistent state, no MIBs: only the library's USM. */
    setenv("SNMPCONFPATH", tv_snmp_dir, 1);
    setenv("SNMP_PERSISTENT_DIR", tv_snmp_dir, 1);
    setenv("MIBS", "", 1);
    netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DISABLE_PERSISTENT_LOAD, 1);
    netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DISABLE_PERSISTENT_SAVE, 1);
    netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DONT_READ_CONFIGS, 1);
    netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_QUICK_PRINT, 1);
    init_snmp("test_susm");
    return 0;
}

static int
tv_remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int
tv_netsnmp_teardown(void **state)
{
    (void)state;
    snmp_shutdown("test_susm");
    return nftw(tv_snmp_dir, tv_remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* ------------------------------------------------------------ protocol names */

/* Every spelling a user may write, in mixed case, and what it means. */
static const struct {
    const char *text;    /* as written */
    enum susm_auth auth; /* what susm_auth_parse() makes of it */
} tv_auth_spellings[] = {
    {"none", SUSM_AUTH_NONE},      {"NONE", SUSM_AUTH_NONE},      {"None", SUSM_AUTH_NONE},
    {"md5", SUSM_AUTH_MD5},        {"MD5", SUSM_AUTH_MD5},        {"mD5", SUSM_AUTH_MD5},
    {"sha", SUSM_AUTH_SHA1},       {"SHA", SUSM_AUTH_SHA1},       {"Sha", SUSM_AUTH_SHA1},
    {"sha1", SUSM_AUTH_SHA1},      {"SHA1", SUSM_AUTH_SHA1},      {"sha-1", SUSM_AUTH_SHA1},
    {"SHA-1", SUSM_AUTH_SHA1},     {"sha224", SUSM_AUTH_SHA224},  {"SHA224", SUSM_AUTH_SHA224},
    {"SHA-224", SUSM_AUTH_SHA224}, {"sha-224", SUSM_AUTH_SHA224}, {"Sha-224", SUSM_AUTH_SHA224},
    {"sha256", SUSM_AUTH_SHA256},  {"SHA256", SUSM_AUTH_SHA256},  {"SHA-256", SUSM_AUTH_SHA256},
    {"sHa-256", SUSM_AUTH_SHA256}, {"sha384", SUSM_AUTH_SHA384},  {"SHA384", SUSM_AUTH_SHA384},
    {"SHA-384", SUSM_AUTH_SHA384}, {"sha-384", SUSM_AUTH_SHA384}, {"sha512", SUSM_AUTH_SHA512},
    {"SHA512", SUSM_AUTH_SHA512},  {"SHA-512", SUSM_AUTH_SHA512}, {"Sha-512", SUSM_AUTH_SHA512},
};

/* Every spelling of AES-128 (and, first, of none) a user may write. */
static const char *const tv_aes_spellings[] = {"aes",    "AES",     "Aes",     "aes128",
                                               "AES128", "AES-128", "aes-128", "Aes-128"};
static const char *const tv_priv_none_spellings[] = {"none", "NONE", "nOnE"};

/* net-snmp's number (NETSNMP_USMAUTH_*) of one of our authentication protocols: its OID's last arc. */
static int
tv_netsnmp_auth_type(enum susm_auth auth)
{
    size_t len;
    const oid *proto = tv_netsnmp_auth(auth, &len);

    return (int)proto[len - 1];
}

static enum fleet_err
tv_auth(const char *text, enum susm_auth *auth)
{
    return susm_auth_parse(text, strlen(text), auth);
}

static enum fleet_err
tv_priv(const char *text, enum susm_priv *priv)
{
    return susm_priv_parse(text, strlen(text), priv);
}

static void
test_protocol_names_are_taken_in_every_spelling_and_case(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof tv_auth_spellings / sizeof tv_auth_spellings[0]; i++) {
        enum susm_auth auth = (enum susm_auth)99;

        assert_int_equal(tv_auth(tv_auth_spellings[i].text, &auth), FLEET_OK);
        assert_int_equal(auth, tv_auth_spellings[i].auth);
        /* Every name but none is one net-snmp takes too, for the same protocol (snmpwalk -a). */
        if (auth != SUSM_AUTH_NONE) {
            assert_int_equal(usm_lookup_auth_type(tv_auth_spellings[i].text), tv_netsnmp_auth_type(auth));
        }
    }
    for (size_t i = 0; i < sizeof tv_aes_spellings / sizeof tv_aes_spellings[0]; i++) {
        enum susm_priv priv = SUSM_PRIV_NONE;

        assert_int_equal(tv_priv(tv_aes_spellings[i], &priv), FLEET_OK);
        assert_int_equal(priv, SUSM_PRIV_AES128);
        assert_int_equal(usm_lookup_priv_type(tv_aes_spellings[i]), USM_CREATE_USER_PRIV_AES);
    }
    for (size_t i = 0; i < sizeof tv_priv_none_spellings / sizeof tv_priv_none_spellings[0]; i++) {
        enum susm_priv priv = SUSM_PRIV_AES128;

        assert_int_equal(tv_priv(tv_priv_none_spellings[i], &priv), FLEET_OK);
        assert_int_equal(priv, SUSM_PRIV_NONE);
    }
}

static void
test_protocol_names_are_read_by_length_not_to_the_nul(void **state)
{
    enum susm_auth auth = SUSM_AUTH_NONE;
    enum susm_priv priv = SUSM_PRIV_NONE;

    (void)state;
    /* The stress client hands over a field of "NAME:AUTH:KEY:PRIV:KEY" by its length. */
    assert_int_equal(susm_auth_parse("SHA-256:authpass1", 7, &auth), FLEET_OK);
    assert_int_equal(auth, SUSM_AUTH_SHA256);
    assert_int_equal(susm_auth_parse("SHA-256:authpass1", 3, &auth), FLEET_OK);
    assert_int_equal(auth, SUSM_AUTH_SHA1);
    assert_int_equal(susm_auth_parse("SHA-256:authpass1", 8, &auth), FLEET_ERR_INVAL);
    assert_int_equal(susm_priv_parse("AES-128:x", 7, &priv), FLEET_OK);
    assert_int_equal(priv, SUSM_PRIV_AES128);
    assert_int_equal(susm_priv_parse("AES-128:x", 5, &priv), FLEET_ERR_INVAL);
}

static void
test_other_protocol_names_are_refused_and_leave_the_output(void **state)
{
    static const char *const auths[] = {"",        "SHA-",    "sha-",    "sha-1024", "SHA-2560", "sha2",
                                        "sha-2",   "sha_256", "sha 256", " sha",     "sha ",     "md",
                                        "md5x",    "md-5",    "noauth",  "NOAUTH",   "sha-512x", "sha3-256",
                                        "hmacsha", "aes",     "none-"};
    static const char *const privs[] = {
        "",     "aes-",   "AES-",   "aes-256",  "AES-256", "aes256", "AES192", "aes-192", "DES",  "des",
        "3DES", "nopriv", "NOPRIV", "aes-1280", "aes 128", "aes12",  "sha",    " aes",    "aes ", "none-"};

    (void)state;
    for (size_t i = 0; i < sizeof auths / sizeof auths[0]; i++) {
        enum susm_auth auth = SUSM_AUTH_SHA384;

        assert_int_equal(tv_auth(auths[i], &auth), FLEET_ERR_INVAL);
        assert_int_equal(auth, SUSM_AUTH_SHA384);
    }
    for (size_t i = 0; i < sizeof privs / sizeof privs[0]; i++) {
        enum susm_priv priv = SUSM_PRIV_AES128;

        assert_int_equal(tv_priv(privs[i], &priv), FLEET_ERR_INVAL);
        assert_int_equal(priv, SUSM_PRIV_AES128);
    }
}

/* Each word of @p text (split at ", ()" and leaving out "or") is an AUTH name (@p auth) or a PRIV name. */
static void
tv_every_listed_name_parses(const char *text, int auth)
{
    enum susm_auth a;
    enum susm_priv p;
    int words = 0;

    for (const char *c = text; *c;) {
        size_t len = strcspn(c, ", ()");

        if (len && !(len == 2 && !strncmp(c, "or", 2))) {
            assert_int_equal(auth ? susm_auth_parse(c, len, &a) : susm_priv_parse(c, len, &p), FLEET_OK);
            words++;
        }
        c += len + (c[len] != '\0');
    }
    assert_true(words >= 2);
}

static void
test_protocol_names_print_and_list_what_parses(void **state)
{
    (void)state;
    for (int a = SUSM_AUTH_NONE; a <= SUSM_AUTH_SHA512; a++) {
        enum susm_auth back = (enum susm_auth)99;

        /* Our name is lower case and reads back; net-snmp's is the one its tools print. */
        assert_int_equal(tv_auth(susm_auth_name((enum susm_auth)a), &back), FLEET_OK);
        assert_int_equal(back, a);
        for (const char *c = susm_auth_name((enum susm_auth)a); *c; c++) {
            assert_false(*c >= 'A' && *c <= 'Z');
        }
        if (a == SUSM_AUTH_NONE) {
            assert_string_equal(susm_auth_netsnmp_name((enum susm_auth)a), "");
            continue;
        }
        assert_string_equal(susm_auth_netsnmp_name((enum susm_auth)a),
                            usm_lookup_auth_str(tv_netsnmp_auth_type((enum susm_auth)a)));
        assert_int_equal(tv_auth(usm_lookup_auth_str(tv_netsnmp_auth_type((enum susm_auth)a)), &back),
                         FLEET_OK);
        assert_int_equal(back, a);
    }
    assert_string_equal(susm_auth_name(SUSM_AUTH_SHA256), "sha256");
    assert_string_equal(susm_auth_netsnmp_name(SUSM_AUTH_SHA256), "SHA-256");
    assert_string_equal(susm_priv_name(SUSM_PRIV_NONE), "none");
    assert_string_equal(susm_priv_name(SUSM_PRIV_AES128), "aes");
    assert_string_equal(susm_auth_name((enum susm_auth)99), "");
    /* The lists error messages show hold only names that are taken. */
    tv_every_listed_name_parses(SUSM_AUTH_NAMES, 1);
    tv_every_listed_name_parses(SUSM_PRIV_NAMES, 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_localization_matches_rfc3414_a3),
        cmocka_unit_test(test_key_localization_matches_netsnmp_for_every_hash),
        cmocka_unit_test(test_user_init_refuses_bad_parameters),
        cmocka_unit_test(test_authpriv_round_trip_for_every_auth_protocol),
        cmocka_unit_test(test_discovery_gets_unknown_engine_id_report),
        cmocka_unit_test(test_wrong_key_gives_wrong_digests),
        cmocka_unit_test(test_unknown_user_gives_report),
        cmocka_unit_test(test_level_the_user_lacks_gives_unsupported_sec_levels),
        cmocka_unit_test(test_time_window_is_150_seconds_and_same_boots),
        cmocka_unit_test(test_latched_boots_is_never_in_time_window),
        cmocka_unit_test(test_client_learns_clock_from_authenticated_report),
        cmocka_unit_test(test_wrong_privacy_key_gives_decryption_errors),
        cmocka_unit_test(test_client_refuses_response_with_wrong_digest),
        cmocka_unit_test(test_unreportable_failure_is_not_reported),
        cmocka_unit_test(test_truncated_v3_at_every_length_is_refused),
        cmocka_unit_test(test_any_changed_byte_of_authpriv_request_is_caught),
        cmocka_unit_test(test_random_bit_flips_v3_never_crash),
        cmocka_unit_test(test_malformed_headers_are_dropped),
        cmocka_unit_test(test_encode_refuses_inconsistent_parameters),
        cmocka_unit_test(test_v3_filled_to_budget_stays_within_max),
        cmocka_unit_test(test_netsnmp_v3_request_and_response_interoperate),
        cmocka_unit_test(test_protocol_names_are_taken_in_every_spelling_and_case),
        cmocka_unit_test(test_protocol_names_are_read_by_length_not_to_the_nul),
        cmocka_unit_test(test_other_protocol_names_are_refused_and_leave_the_output),
        cmocka_unit_test(test_protocol_names_print_and_list_what_parses),
    };

    return cmocka_run_group_tests(tests, tv_netsnmp_setup, tv_netsnmp_teardown);
}
