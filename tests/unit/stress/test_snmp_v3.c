/*
 * Unit tests of fleetsim-stress snmp's SNMPv3 state (the walk_v3_* half of
 * stress/snmp_walk.c): keys derived once and localized per engine, the
 * engine's clock running on with ours, the msgID read before any key is
 * known, and what each message the agent can send means for a collection.
 * The agent's answers are real: wire/susm.c's agent side receives the
 * client's requests and encodes its Responses and Reports, as fleetsim does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "snmp_walk.h"
#include "susm.h"

/* Big enough for every message here. */
#define TV_BUF_BYTES 4096
/* The client's local clock when it discovered the engine, microseconds. */
#define TV_DISCOVERED_US 5000000u

static const uint8_t tv_engine_id[] = {0x80, 0x00, 0x1f, 0x88, 0x80, 0x66, 0x6c, 0x65, 0x65, 0x74, 0x07};

/* One agent engine with one user, as a fleetsim device configured with --snmp-v3-user. */
struct tv_agent {
    struct susm_engine engine; /* boots 3, time 1000 */
    struct susm_user user;     /* the only user */
};

/* One client: its user's keys, what it knows of the engine, the keys localized for it. */
struct tv_client {
    struct walk_v3_user user;     /* from the passwords */
    struct walk_v3_engine engine; /* discovered */
    struct susm_user keys;        /* localized */
};

static const struct susm_user *
tv_lookup(void *arg, const uint8_t *name, size_t name_len)
{
    const struct tv_agent *a = arg;

    return a->user.name_len == name_len && !memcmp(a->user.name, name, name_len) ? &a->user : NULL;
}

static void
tv_agent_init(struct tv_agent *a, const char *name, enum susm_auth auth, const char *auth_pw,
              enum susm_priv priv, const char *priv_pw)
{
    a->engine = (struct susm_engine){tv_engine_id, sizeof tv_engine_id, 3, 1000, 65507};
    assert_int_equal(susm_user_init(&a->user, (const uint8_t *)name, strlen(name), auth,
                                    (const uint8_t *)auth_pw, strlen(auth_pw), priv, (const uint8_t *)priv_pw,
                                    strlen(priv_pw), tv_engine_id, sizeof tv_engine_id),
                     FLEET_OK);
}

static void
tv_client_init(struct tv_client *c, const char *name, enum susm_auth auth, const char *auth_pw,
               enum susm_priv priv, const char *priv_pw)
{
    memset(c, 0, sizeof *c);
    assert_int_equal(walk_v3_user_init(&c->user, name, strlen(name), auth, auth_pw, strlen(auth_pw), priv,
                                       priv_pw, strlen(priv_pw)),
                     FLEET_OK);
}

/* Discovery against @p a: request, Report, classification. The client knows the engine afterwards. */
static void
tv_discover(struct tv_client *c, struct tv_agent *a)
{
    uint8_t req[TV_BUF_BYTES], rep[TV_BUF_BYTES];
    enum susm_report_kind kind, failure;
    struct susm_msg in, msg;
    const char *why;
    size_t len;

    assert_int_equal(susm_client_discovery(77, 77, 65507, req, sizeof req, &len), FLEET_OK);
    assert_int_equal(susm_agent_receive(req, len, &a->engine, tv_lookup, a, &in, &kind), FLEET_OK);
    assert_int_equal(kind, SUSM_REPORT_UNKNOWN_ENGINE_IDS);
    assert_int_equal(susm_encode_report(&in, &a->engine, kind, 1, rep, sizeof rep, &len), FLEET_OK);
    assert_int_equal(susm_client_receive(rep, len, NULL, &msg, &failure), FLEET_OK);
    assert_int_equal(
        walk_v3_classify(&c->engine, 1, SUSM_FLAG_REPORTABLE, &msg, failure, TV_DISCOVERED_US, &kind, &why),
        WALK_V3_DISCOVERED);
    assert_null(why);
    assert_int_equal(walk_v3_localize(&c->user, &c->engine, &c->keys), FLEET_OK);
}

/* A GETBULK of sysDescr from the client at local time @p now_us, msgID and request-id @p id. */
static size_t
tv_request(struct tv_client *c, int32_t id, uint64_t now_us, uint8_t *out)
{
    uint8_t pdu_buf[256], *pdu;
    struct spdu_value null = {.tag = BER_NULL};
    struct spdu_encoder e;
    struct oid name;
    struct susm_out o;
    size_t pdu_len, len;

    walk_v3_request_out(&c->engine, &c->user, &c->keys, id, 65507, 0x0102030405060708ull + (uint64_t)id,
                        now_us, &o);
    spdu_enc_init(&e, pdu_buf, sizeof pdu_buf, SPDU_HEADROOM(0), susm_bindings_budget(65507, &o, id));
    assert_int_equal(oid_parse("1.3.6.1.2.1.1.1", &name), FLEET_OK);
    assert_int_equal(spdu_enc_binding(&e, &name, &null), FLEET_OK);
    spdu_enc_finish_pdu(&e, SPDU_GETBULK, id, 0, 10, &pdu, &pdu_len);
    assert_int_equal(susm_encode(&o, pdu, pdu_len, out, TV_BUF_BYTES, &len), FLEET_OK);
    return len;
}

/* The agent's answer to @p req: its Response (sysDescr.0 = "fleetsim"), or the Report it owes. */
static size_t
tv_answer(struct tv_agent *a, uint8_t *req, size_t req_len, uint8_t *out)
{
    uint8_t pdu_buf[256], *pdu;
    struct spdu_value v = {.tag = BER_OCTET_STRING, .v.bytes = {(const uint8_t *)"fleetsim", 8}};
    enum susm_report_kind kind;
    struct spdu_encoder e;
    struct oid name;
    struct susm_msg msg;
    struct susm_out o;
    size_t pdu_len, len;

    assert_int_equal(susm_agent_receive(req, req_len, &a->engine, tv_lookup, a, &msg, &kind), FLEET_OK);
    if (kind != SUSM_REPORT_NONE) {
        assert_true(msg.report_wanted);
        assert_int_equal(susm_encode_report(&msg, &a->engine, kind, 1, out, TV_BUF_BYTES, &len), FLEET_OK);
        return len;
    }
    susm_response_out(&msg, &a->engine, 99, &o);
    spdu_enc_init(&e, pdu_buf, sizeof pdu_buf, SPDU_HEADROOM(0),
                  susm_bindings_budget(1400, &o, msg.pdu.request_id));
    assert_int_equal(oid_parse("1.3.6.1.2.1.1.1.0", &name), FLEET_OK);
    assert_int_equal(spdu_enc_binding(&e, &name, &v), FLEET_OK);
    spdu_enc_finish_pdu(&e, SPDU_RESPONSE, msg.pdu.request_id, 0, 0, &pdu, &pdu_len);
    assert_int_equal(susm_encode(&o, pdu, pdu_len, out, TV_BUF_BYTES, &len), FLEET_OK);
    return len;
}

/* Receive @p len bytes as the client that sent a request at its user's level, and classify them. */
static enum walk_v3_verdict
tv_receive(struct tv_client *c, uint8_t *buf, size_t len, uint64_t now_us, struct susm_msg *msg,
           enum susm_report_kind *kind, const char **why)
{
    enum susm_report_kind failure;

    assert_int_equal(susm_client_receive(buf, len, &c->keys, msg, &failure), FLEET_OK);
    return walk_v3_classify(&c->engine, 0, c->user.flags, msg, failure, now_us, kind, why);
}

static void
test_keys_derived_once_and_localized_per_engine_match_the_agents(void **state)
{
    struct tv_client c;
    struct susm_user direct;

    (void)state;
    tv_client_init(&c, "ops", SUSM_AUTH_SHA1, "authpass1", SUSM_PRIV_AES128, "privpass1");
    assert_int_equal(c.user.flags, SUSM_FLAG_REPORTABLE | SUSM_FLAG_AUTH | SUSM_FLAG_PRIV);
    assert_string_equal(walk_v3_level_name(c.user.flags), "authPriv");
    /* No engine yet: nothing to localize for. */
    assert_int_equal(walk_v3_localize(&c.user, &c.engine, &c.keys), FLEET_ERR_INVAL);

    memcpy(c.engine.peer.engine_id, tv_engine_id, sizeof tv_engine_id);
    c.engine.peer.engine_id_len = sizeof tv_engine_id;
    assert_int_equal(walk_v3_localize(&c.user, &c.engine, &c.keys), FLEET_OK);
    assert_int_equal(susm_user_init(&direct, (const uint8_t *)"ops", 3, SUSM_AUTH_SHA1,
                                    (const uint8_t *)"authpass1", 9, SUSM_PRIV_AES128,
                                    (const uint8_t *)"privpass1", 9, tv_engine_id, sizeof tv_engine_id),
                     FLEET_OK);
    assert_memory_equal(&c.keys, &direct, sizeof direct);
}

static void
test_levels_follow_the_protocols_and_privacy_needs_authentication(void **state)
{
    struct walk_v3_user u;

    (void)state;
    assert_int_equal(walk_v3_user_init(&u, "adm", 3, SUSM_AUTH_SHA256, "authpass2", 9, SUSM_PRIV_NONE, "", 0),
                     FLEET_OK);
    assert_string_equal(walk_v3_level_name(u.flags), "authNoPriv");
    assert_int_equal(walk_v3_user_init(&u, "mon", 3, SUSM_AUTH_NONE, "", 0, SUSM_PRIV_NONE, "", 0), FLEET_OK);
    assert_int_equal(u.flags, SUSM_FLAG_REPORTABLE);
    assert_string_equal(walk_v3_level_name(u.flags), "noAuthNoPriv");
    assert_int_equal(walk_v3_user_init(&u, "x", 1, SUSM_AUTH_NONE, "", 0, SUSM_PRIV_AES128, "privpass1", 9),
                     FLEET_ERR_INVAL);
    assert_int_equal(walk_v3_user_init(&u, "", 0, SUSM_AUTH_SHA1, "authpass1", 9, SUSM_PRIV_NONE, "", 0),
                     FLEET_ERR_INVAL);
    assert_int_equal(walk_v3_user_init(&u, "x", 1, SUSM_AUTH_SHA1, "", 0, SUSM_PRIV_NONE, "", 0),
                     FLEET_ERR_INVAL);
    assert_string_equal(walk_v3_report_name(SUSM_REPORT_WRONG_DIGESTS), "usmStatsWrongDigests");
    assert_string_equal(walk_v3_report_name(SUSM_REPORT_UNKNOWN_USER_NAMES), "usmStatsUnknownUserNames");
    assert_string_equal(walk_v3_report_name(SUSM_REPORT_NONE), "usmStats");
}

static void
test_msg_id_is_read_from_v3_only(void **state)
{
    static const uint8_t v2c[] = {0x30, 0x0b, 0x02, 0x01, 0x01, 0x04, 0x06, 'p', 'u', 'b', 'l', 'i', 'c'};
    uint8_t buf[TV_BUF_BYTES];
    int32_t id = -1;
    size_t len;

    (void)state;
    assert_int_equal(susm_client_discovery(0x12345, 1, 65507, buf, sizeof buf, &len), FLEET_OK);
    assert_int_equal(walk_v3_peek_msg_id(buf, len, &id), FLEET_OK);
    assert_int_equal(id, 0x12345);
    assert_int_equal(walk_v3_peek_msg_id(v2c, sizeof v2c, &id), FLEET_ERR_PROTO);
    for (size_t cut = 0; cut < 8; cut++) {
        assert_int_equal(walk_v3_peek_msg_id(buf, cut, &id), FLEET_ERR_PROTO);
    }
}

static void
test_discovery_report_teaches_engine_id_boots_and_time(void **state)
{
    struct tv_agent a;
    struct tv_client c;

    (void)state;
    tv_agent_init(&a, "ops", SUSM_AUTH_SHA1, "authpass1", SUSM_PRIV_AES128, "privpass1");
    tv_client_init(&c, "ops", SUSM_AUTH_SHA1, "authpass1", SUSM_PRIV_AES128, "privpass1");
    tv_discover(&c, &a);
    assert_int_equal(c.engine.peer.engine_id_len, sizeof tv_engine_id);
    assert_memory_equal(c.engine.peer.engine_id, tv_engine_id, sizeof tv_engine_id);
    assert_int_equal(c.engine.peer.boots, 3);
    assert_int_equal(c.engine.peer.latest_time_s, 1000);
    assert_int_equal(c.engine.synced_us, TV_DISCOVERED_US);
    assert_memory_equal(c.keys.auth_key, a.user.auth_key, susm_auth_key_bytes(SUSM_AUTH_SHA1));
    assert_memory_equal(c.keys.priv_key, a.user.priv_key, 16);
}

static void
test_engine_time_runs_on_with_the_local_clock(void **state)
{
    struct tv_agent a;
    struct tv_client c;
    struct susm_out o;

    (void)state;
    tv_agent_init(&a, "ops", SUSM_AUTH_SHA1, "authpass1", SUSM_PRIV_NONE, "");
    tv_client_init(&c, "ops", SUSM_AUTH_SHA1, "authpass1", SUSM_PRIV_NONE, "");
    tv_discover(&c, &a);
    walk_v3_request_out(&c.engine, &c.user, &c.keys, 5, 65507, 1, TV_DISCOVERED_US + 7900000u, &o);
    assert_int_equal(o.engine_time, 1007);
    assert_int_equal(o.engine_boots, 3);
    assert_int_equal(o.flags, SUSM_FLAG_REPORTABLE | SUSM_FLAG_AUTH);
    assert_int_equal(o.engine_id_len, sizeof tv_engine_id);
    /* A clock that reads earlier than the discovery (it cannot, but) never moves the engine back. */
    walk_v3_request_out(&c.engine, &c.user, &c.keys, 6, 65507, 2, 0, &o);
    assert_int_equal(o.engine_time, 1000);
}

static void
test_authpriv_response_is_verified_decrypted_and_moves_the_clock(void **state)
{
    uint8_t req[TV_BUF_BYTES], resp[TV_BUF_BYTES];
    enum susm_report_kind kind;
    struct tv_agent a;
    struct tv_client c;
    struct susm_msg msg;
    const char *why;
    size_t len;

    (void)state;
    tv_agent_init(&a, "ops", SUSM_AUTH_SHA1, "authpass1", SUSM_PRIV_AES128, "privpass1");
    tv_client_init(&c, "ops", SUSM_AUTH_SHA1, "authpass1", SUSM_PRIV_AES128, "privpass1");
    tv_discover(&c, &a);
    a.engine.time_s = 1030; /* 30 s later on both sides */
    len = tv_answer(&a, req, tv_request(&c, 4242, TV_DISCOVERED_US + 30000000u, req), resp);
    assert_int_equal(tv_receive(&c, resp, len, TV_DISCOVERED_US + 30000000u, &msg, &kind, &why),
                     WALK_V3_RESPONSE);
    assert_int_equal(msg.msg_id, 4242);
    assert_int_equal(msg.pdu.type, SPDU_RESPONSE);
    assert_int_equal(msg.pdu.request_id, 4242);
    assert_int_equal(msg.pdu.binding_count, 1);
    assert_int_equal(c.engine.peer.latest_time_s, 1030);
    assert_int_equal(c.engine.synced_us, TV_DISCOVERED_US + 30000000u);
}

static void
test_tampered_or_downgraded_response_is_unverified(void **state)
{
    uint8_t req[TV_BUF_BYTES], resp[TV_BUF_BYTES], pdu_buf[64], *pdu;
    enum susm_report_kind kind;
    struct spdu_encoder e;
    struct tv_agent a;
    struct tv_client c;
    struct susm_msg msg;
    struct susm_out o;
    const char *why;
    size_t len, pdu_len;

    (void)state;
    tv_agent_init(&a, "ops", SUSM_AUTH_SHA256, "authpass2", SUSM_PRIV_NONE, "");
    tv_client_init(&c, "ops", SUSM_AUTH_SHA256, "authpass2", SUSM_PRIV_NONE, "");
    tv_discover(&c, &a);
    len = tv_answer(&a, req, tv_request(&c, 9, TV_DISCOVERED_US, req), resp);
    resp[len - 1] ^= 1; /* the last byte of the sysDescr value */
    assert_int_equal(tv_receive(&c, resp, len, TV_DISCOVERED_US, &msg, &kind, &why), WALK_V3_UNVERIFIED);
    assert_string_equal(why, "its digest does not verify");

    /* A Response sent noAuthNoPriv to an authenticated request. */
    memset(&o, 0, sizeof o);
    o.msg_id = 10;
    o.max_size = 65507;
    o.engine_id = tv_engine_id;
    o.engine_id_len = sizeof tv_engine_id;
    o.user_name = (const uint8_t *)"ops";
    o.user_name_len = 3;
    spdu_enc_init(&e, pdu_buf, sizeof pdu_buf, SPDU_HEADROOM(0), sizeof pdu_buf - SPDU_HEADROOM(0));
    spdu_enc_finish_pdu(&e, SPDU_RESPONSE, 10, 0, 0, &pdu, &pdu_len);
    assert_int_equal(susm_encode(&o, pdu, pdu_len, resp, sizeof resp, &len), FLEET_OK);
    assert_int_equal(tv_receive(&c, resp, len, TV_DISCOVERED_US, &msg, &kind, &why), WALK_V3_UNVERIFIED);
    assert_string_equal(why, "a Response below the security level of its request");
}

static void
test_wrong_password_unknown_user_and_level_end_the_collection_by_report(void **state)
{
    static const struct {
        const char *name;               /* client's user */
        const char *auth_pw;            /* client's auth password */
        enum susm_priv priv;            /* client's privacy */
        const char *priv_pw;            /* client's privacy password */
        enum susm_report_kind expected; /* the Report */
    } cases[] = {
        {"ops", "wrongpass1", SUSM_PRIV_AES128, "privpass1", SUSM_REPORT_WRONG_DIGESTS},
        {"ops", "authpass1", SUSM_PRIV_AES128, "wrongpriv1", SUSM_REPORT_DECRYPTION_ERRORS},
        {"nobody", "authpass1", SUSM_PRIV_AES128, "privpass1", SUSM_REPORT_UNKNOWN_USER_NAMES},
    };
    uint8_t req[TV_BUF_BYTES], resp[TV_BUF_BYTES];
    enum susm_report_kind kind;
    struct tv_agent a;
    struct tv_client c;
    struct susm_msg msg;
    const char *why;
    size_t len;

    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tv_agent_init(&a, "ops", SUSM_AUTH_SHA1, "authpass1", SUSM_PRIV_AES128, "privpass1");
        tv_client_init(&c, cases[i].name, SUSM_AUTH_SHA1, cases[i].auth_pw, cases[i].priv, cases[i].priv_pw);
        tv_discover(&c, &a);
        len = tv_answer(&a, req, tv_request(&c, 11, TV_DISCOVERED_US, req), resp);
        assert_int_equal(tv_receive(&c, resp, len, TV_DISCOVERED_US, &msg, &kind, &why), WALK_V3_REPORT);
        assert_int_equal(kind, cases[i].expected);
        /* Reports to encrypted requests cannot echo the request-id; the msgID still matches. */
        assert_int_equal(msg.msg_id, 11);
        assert_int_equal(msg.pdu.request_id, 0);
    }

    /* The agent's user allows authNoPriv only. */
    tv_agent_init(&a, "adm", SUSM_AUTH_SHA256, "authpass2", SUSM_PRIV_NONE, "");
    tv_client_init(&c, "adm", SUSM_AUTH_SHA256, "authpass2", SUSM_PRIV_AES128, "privpass2");
    tv_discover(&c, &a);
    len = tv_answer(&a, req, tv_request(&c, 12, TV_DISCOVERED_US, req), resp);
    assert_int_equal(tv_receive(&c, resp, len, TV_DISCOVERED_US, &msg, &kind, &why), WALK_V3_REPORT);
    assert_int_equal(kind, SUSM_REPORT_UNSUPPORTED_SEC_LEVELS);
}

static void
test_not_in_time_window_resyncs_only_when_authenticated(void **state)
{
    uint8_t req[TV_BUF_BYTES], resp[TV_BUF_BYTES];
    enum susm_report_kind kind, failure;
    struct tv_agent a;
    struct tv_client c;
    struct susm_msg msg, in;
    const char *why;
    size_t len, req_len;

    (void)state;
    tv_agent_init(&a, "ops", SUSM_AUTH_SHA1, "authpass1", SUSM_PRIV_AES128, "privpass1");
    tv_client_init(&c, "ops", SUSM_AUTH_SHA1, "authpass1", SUSM_PRIV_AES128, "privpass1");
    tv_discover(&c, &a);
    /* The agent's clock stood still while ours ran 200 s: the request is out of the window. */
    req_len = tv_request(&c, 13, TV_DISCOVERED_US + 200000000u, req);
    len = tv_answer(&a, req, req_len, resp);
    assert_int_equal(tv_receive(&c, resp, len, TV_DISCOVERED_US + 200000000u, &msg, &kind, &why),
                     WALK_V3_RESYNC);
    assert_int_equal(kind, SUSM_REPORT_NOT_IN_TIME_WINDOWS);
    assert_int_equal(c.engine.peer.latest_time_s, 1000);
    assert_int_equal(c.engine.synced_us, TV_DISCOVERED_US + 200000000u);
    /* Sent again with the clock learned, it is answered. */
    len = tv_answer(&a, req, tv_request(&c, 14, TV_DISCOVERED_US + 200000000u, req), resp);
    assert_int_equal(tv_receive(&c, resp, len, TV_DISCOVERED_US + 200000000u, &msg, &kind, &why),
                     WALK_V3_RESPONSE);

    /* The same Report without authentication moves nothing. */
    req_len = tv_request(&c, 15, TV_DISCOVERED_US + 400000000u, req);
    assert_int_equal(susm_agent_receive(req, req_len, &a.engine, tv_lookup, &a, &in, &kind), FLEET_OK);
    assert_int_equal(kind, SUSM_REPORT_NOT_IN_TIME_WINDOWS);
    in.authenticated = 0;
    assert_int_equal(susm_encode_report(&in, &a.engine, kind, 1, resp, sizeof resp, &len), FLEET_OK);
    assert_int_equal(susm_client_receive(resp, len, &c.keys, &msg, &failure), FLEET_OK);
    assert_int_equal(walk_v3_classify(&c.engine, 0, c.user.flags, &msg, failure,
                                      TV_DISCOVERED_US + 400000000u, &kind, &why),
                     WALK_V3_UNVERIFIED);
    assert_int_equal(c.engine.synced_us, TV_DISCOVERED_US + 200000000u);
}

static void
test_unknown_engine_report_forgets_the_engine(void **state)
{
    uint8_t req[TV_BUF_BYTES], resp[TV_BUF_BYTES];
    static const uint8_t other_id[] = {0x80, 0x00, 0x1f, 0x88, 0x80, 0x99, 0x99, 0x99, 0x99};
    enum susm_report_kind kind;
    struct tv_agent a;
    struct tv_client c;
    struct susm_msg msg;
    const char *why;
    size_t len;

    (void)state;
    tv_agent_init(&a, "ops", SUSM_AUTH_SHA1, "authpass1", SUSM_PRIV_NONE, "");
    tv_client_init(&c, "ops", SUSM_AUTH_SHA1, "authpass1", SUSM_PRIV_NONE, "");
    tv_discover(&c, &a);
    a.engine.id = other_id; /* the device came back as another engine */
    a.engine.id_len = sizeof other_id;
    len = tv_answer(&a, req, tv_request(&c, 16, TV_DISCOVERED_US, req), resp);
    assert_int_equal(tv_receive(&c, resp, len, TV_DISCOVERED_US, &msg, &kind, &why), WALK_V3_REPORT);
    assert_int_equal(kind, SUSM_REPORT_UNKNOWN_ENGINE_IDS);
    assert_int_equal(c.engine.peer.engine_id_len, 0);
}

static void
test_discovery_answered_without_report_is_unusable(void **state)
{
    uint8_t resp[TV_BUF_BYTES], pdu_buf[64], *pdu;
    enum susm_report_kind kind, failure;
    struct walk_v3_engine engine = {0};
    struct spdu_encoder e;
    struct susm_msg msg;
    struct susm_out o;
    const char *why;
    size_t len, pdu_len;

    (void)state;
    memset(&o, 0, sizeof o);
    o.msg_id = 1;
    o.max_size = 65507;
    o.engine_id = tv_engine_id;
    o.engine_id_len = sizeof tv_engine_id;
    spdu_enc_init(&e, pdu_buf, sizeof pdu_buf, SPDU_HEADROOM(0), sizeof pdu_buf - SPDU_HEADROOM(0));
    spdu_enc_finish_pdu(&e, SPDU_RESPONSE, 1, 0, 0, &pdu, &pdu_len);
    assert_int_equal(susm_encode(&o, pdu, pdu_len, resp, sizeof resp, &len), FLEET_OK);
    assert_int_equal(susm_client_receive(resp, len, NULL, &msg, &failure), FLEET_OK);
    assert_int_equal(walk_v3_classify(&engine, 1, SUSM_FLAG_REPORTABLE, &msg, failure, 0, &kind, &why),
                     WALK_V3_UNUSABLE);
    assert_string_equal(why, "the discovery request was answered without a Report");
    assert_int_equal(engine.peer.engine_id_len, 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys_derived_once_and_localized_per_engine_match_the_agents),
        cmocka_unit_test(test_levels_follow_the_protocols_and_privacy_needs_authentication),
        cmocka_unit_test(test_msg_id_is_read_from_v3_only),
        cmocka_unit_test(test_discovery_report_teaches_engine_id_boots_and_time),
        cmocka_unit_test(test_engine_time_runs_on_with_the_local_clock),
        cmocka_unit_test(test_authpriv_response_is_verified_decrypted_and_moves_the_clock),
        cmocka_unit_test(test_tampered_or_downgraded_response_is_unverified),
        cmocka_unit_test(test_wrong_password_unknown_user_and_level_end_the_collection_by_report),
        cmocka_unit_test(test_not_in_time_window_resyncs_only_when_authenticated),
        cmocka_unit_test(test_unknown_engine_report_forgets_the_engine),
        cmocka_unit_test(test_discovery_answered_without_report_is_unusable),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
