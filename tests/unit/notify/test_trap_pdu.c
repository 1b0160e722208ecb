/*
 * Unit tests of the notification encodings per SNMP version
 * (testtool/notify/trap_pdu.c, issue 29 item 3). The v1 Trap-PDU is checked
 * against bytes derived by hand from RFC 1157 section 4.1.6 and RFC 3584
 * section 3.2, and parsed by net-snmp's library (the oracle for agent-addr,
 * enterprise, generic and specific trap); the v2->v1 mapping against the
 * RFC's cases. The v3 message is decoded by the agent side of the USM code
 * (wire/susm.c, itself checked against net-snmp's tools elsewhere), which
 * verifies the HMAC and decrypts: a wrong password must fail the digest.
 * snmptrapd receiving all of them is tests/integration/test_trap_versions.py.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <net-snmp/net-snmp-config.h>

#include <net-snmp/net-snmp-includes.h>

#include "respond.h"
#include "spdu.h"
#include "susm.h"
#include "trap.h"
#include "trap_pdu.h"

/* Room for any notification the tests encode, with the largest headroom in front. */
#define TP_BUF_BYTES (TRAP_MAX_MSG_BYTES + SPDU_TRAP_V1_HEADROOM(TRAP_MAX_COMMUNITY_BYTES))

static const struct oid tp_link_down = {.len = 10, .sub = {1, 3, 6, 1, 6, 3, 1, 1, 5, 3}};
static const struct oid tp_if_index_3 = {.len = 11, .sub = {1, 3, 6, 1, 2, 1, 2, 2, 1, 1, 3}};

static void
tp_oid(const char *text, struct oid *o)
{
    assert_int_equal(oid_parse(text, o), FLEET_OK);
}

static void
tp_assert_map(const char *trap_oid, const char *enterprise, int32_t generic, int32_t specific)
{
    struct oid in, want, got;
    int32_t g = -1, s = -1;

    tp_oid(trap_oid, &in);
    tp_oid(enterprise, &want);
    assert_int_equal(trap_pdu_v1_map(&in, &got, &g, &s), FLEET_OK);
    assert_int_equal(oid_cmp(&got, &want), 0);
    assert_int_equal(g, generic);
    assert_int_equal(s, specific);
}

/* RFC 3584 3.2: the six generic traps of SNMPv2-MIB, then enterprise-specific ones (with and without the
 * 0 arc the v1-to-v2 mapping inserts). */
static void
test_v1_map_follows_rfc3584(void **state)
{
    struct oid in, ent;
    int32_t g, s;

    (void)state;
    tp_assert_map("1.3.6.1.6.3.1.1.5.1", "1.3.6.1.6.3.1.1.5", 0, 0); /* coldStart */
    tp_assert_map("1.3.6.1.6.3.1.1.5.2", "1.3.6.1.6.3.1.1.5", 1, 0); /* warmStart */
    tp_assert_map("1.3.6.1.6.3.1.1.5.3", "1.3.6.1.6.3.1.1.5", 2, 0); /* linkDown */
    tp_assert_map("1.3.6.1.6.3.1.1.5.4", "1.3.6.1.6.3.1.1.5", 3, 0); /* linkUp */
    tp_assert_map("1.3.6.1.6.3.1.1.5.5", "1.3.6.1.6.3.1.1.5", 4, 0); /* authenticationFailure */
    tp_assert_map("1.3.6.1.6.3.1.1.5.6", "1.3.6.1.6.3.1.1.5", 5, 0); /* egpNeighborLoss */
    tp_assert_map("1.3.6.1.6.3.1.1.5.7", "1.3.6.1.6.3.1.1.5", 6, 7); /* not generic: enterpriseSpecific */
    tp_assert_map("1.3.6.1.4.1.9.9.41.2.0.1", "1.3.6.1.4.1.9.9.41.2", 6, 1); /* clogMessageGenerated */
    tp_assert_map("1.3.6.1.2.1.15.7.2", "1.3.6.1.2.1.15.7", 6, 2);           /* bgpBackwardTransition */
    tp_oid("1.3", &in);
    assert_int_equal(trap_pdu_v1_map(&in, &ent, &g, &s), FLEET_ERR_INVAL);
    tp_oid("1.3.6.1.4.1.1.4294967295", &in);
    assert_int_equal(trap_pdu_v1_map(&in, &ent, &g, &s), FLEET_ERR_INVAL);
}

/* linkDown from 10.0.0.1, sysUpTime 100, community "public", ifIndex.3 = 3: every byte from RFC 1157 4.1.6.
 */
static void
test_v1_link_down_bytes_by_hand(void **state)
{
    static const uint8_t want[] = {
        0x30, 0x39,                                      /* Message, 57 bytes */
        0x02, 0x01, 0x00,                                /* version-1 (0) */
        0x04, 0x06, 'p',  'u', 'b', 'l', 'i', 'c',       /* community */
        0xa4, 0x2c,                                      /* Trap-PDU, 44 bytes */
        0x06, 0x08, 0x2b, 6,   1,   6,   3,   1,   1, 5, /* enterprise snmpTraps */
        0x40, 0x04, 10,   0,   0,   1,                   /* agent-addr 10.0.0.1 */
        0x02, 0x01, 0x02,                                /* generic-trap linkDown (2) */
        0x02, 0x01, 0x00,                                /* specific-trap 0 */
        0x43, 0x01, 0x64,                                /* time-stamp 100 */
        0x30, 0x11,                                      /* variable-bindings */
        0x30, 0x0f,                                      /* ifIndex.3 = 3 */
        0x06, 0x0a, 0x2b, 6,   1,   2,   1,   2,   2, 1, 1, 3, 0x02, 0x01, 0x03,
    };
    struct trap_origin from = {.addr = 0x0a000001u, .fd = -1};
    struct trap_varbind vb = {.name = &tp_if_index_3, .value = {.tag = BER_INTEGER, .v.i = 3}};
    struct trap_pdu_in in = {.from = &from,
                             .sysuptime_ticks = 100,
                             .trap_oid = &tp_link_down,
                             .varbinds = &vb,
                             .varbind_count = 1};
    uint8_t *buf = malloc(TP_BUF_BYTES), *msg;
    size_t len;

    (void)state;
    assert_non_null(buf);
    assert_int_equal(trap_pdu_encode_v1(&in, (const uint8_t *)"public", 6, TRAP_MAX_MSG_BYTES, buf,
                                        TP_BUF_BYTES, &msg, &len),
                     FLEET_OK);
    assert_int_equal(len, sizeof want);
    assert_memory_equal(msg, want, sizeof want);
    free(buf);
}

/* net-snmp reads an enterprise-specific v1 trap from a named device: agent-addr, enterprise, generic 6 and
 * the specific number; sysName.0 follows the objects, snmpTrapAddress.0 does not (agent-addr says it), and
 * a Counter64 object is left out (RFC 3584 3.2 step 4). */
static void
test_v1_enterprise_trap_parses_with_netsnmp(void **state)
{
    struct oid trap_oid, c64_name, str_name;
    struct trap_origin from = {.addr = 0xc0a80a07u, .fd = -1, .name = "edge-7"};
    struct trap_varbind vb[2];
    struct trap_pdu_in in = {
        .from = &from, .sysuptime_ticks = 4242, .trap_oid = &trap_oid, .varbinds = vb, .varbind_count = 2};
    uint8_t *buf = malloc(TP_BUF_BYTES), *msg;
    size_t len;
    netsnmp_session sess;
    netsnmp_pdu *pdu = snmp_pdu_create(SNMP_MSG_GET);
    const netsnmp_variable_list *v;
    static const oid want_ent[] = {1, 3, 6, 1, 4, 1, 9, 9, 41, 2};

    (void)state;
    tp_oid("1.3.6.1.4.1.9.9.41.2.0.1", &trap_oid);
    tp_oid("1.3.6.1.2.1.31.1.1.1.6.1", &c64_name);
    tp_oid("1.3.6.1.4.1.9.9.41.1.2.3.1.5.1", &str_name);
    vb[0] = (struct trap_varbind){.name = &c64_name, .value = {.tag = BER_COUNTER64, .v.u = 1ull << 40}};
    vb[1] = (struct trap_varbind){
        .name = &str_name,
        .value = {.tag = BER_OCTET_STRING, .v.bytes = {(const uint8_t *)"LINK-3-UPDOWN", 13}}};
    assert_non_null(buf);
    assert_non_null(pdu);
    assert_int_equal(trap_pdu_encode_v1(&in, (const uint8_t *)"traps", 5, TRAP_MAX_MSG_BYTES, buf,
                                        TP_BUF_BYTES, &msg, &len),
                     FLEET_OK);
    snmp_sess_init(&sess);
    assert_int_equal(snmp_parse(NULL, &sess, pdu, msg, len), 0);
    assert_int_equal(pdu->version, SNMP_VERSION_1);
    assert_int_equal(pdu->command, SNMP_MSG_TRAP);
    assert_int_equal(pdu->trap_type, 6);
    assert_int_equal(pdu->specific_type, 1);
    assert_int_equal(pdu->time, 4242);
    assert_int_equal(pdu->enterprise_length, sizeof want_ent / sizeof want_ent[0]);
    assert_memory_equal(pdu->enterprise, want_ent, sizeof want_ent);
    assert_memory_equal(pdu->agent_addr, "\xc0\xa8\x0a\x07", 4);
    assert_int_equal(pdu->community_len, 5);
    assert_memory_equal(pdu->community, "traps", 5);
    v = pdu->variables;
    assert_non_null(v);
    assert_int_equal(v->type, ASN_OCTET_STR);
    assert_memory_equal(v->val.string, "LINK-3-UPDOWN", 13);
    v = v->next_variable;
    assert_non_null(v);
    assert_int_equal(v->name_length, 9); /* sysName.0 */
    assert_int_equal(v->name[7], 5);
    assert_memory_equal(v->val.string, "edge-7", 6);
    assert_null(v->next_variable);
    snmp_free_pdu(pdu);
    free(buf);
}

/* An IPv6 device has no IPv4 address to put in agent-addr: 0.0.0.0 (RFC 3584 3.2 (2)). */
static void
test_v1_ipv6_device_has_zero_agent_addr(void **state)
{
    struct trap_origin from = {.addr = 0x00000005u, .fd = -1};
    struct trap_pdu_in in = {.from = &from, .v6 = 1, .sysuptime_ticks = 1, .trap_oid = &tp_link_down};
    uint8_t *buf = malloc(TP_BUF_BYTES), *msg;
    size_t len;
    netsnmp_session sess;
    netsnmp_pdu *pdu = snmp_pdu_create(SNMP_MSG_GET);

    (void)state;
    assert_int_equal(trap_pdu_encode_v1(&in, (const uint8_t *)"public", 6, TRAP_MAX_MSG_BYTES, buf,
                                        TP_BUF_BYTES, &msg, &len),
                     FLEET_OK);
    snmp_sess_init(&sess);
    assert_int_equal(snmp_parse(NULL, &sess, pdu, msg, len), 0);
    assert_memory_equal(pdu->agent_addr, "\0\0\0\0", 4);
    assert_int_equal(pdu->trap_type, 2);
    snmp_free_pdu(pdu);
    free(buf);
}

/* A v1 trap whose objects pass the message size is refused with FLEET_ERR_LIMIT, not cut. */
static void
test_v1_oversized_is_refused(void **state)
{
    static uint8_t big[TRAP_MAX_MSG_BYTES];
    struct trap_origin from = {.addr = 0x0a000001u, .fd = -1};
    struct trap_varbind vb = {.name = &tp_if_index_3,
                              .value = {.tag = BER_OCTET_STRING, .v.bytes = {big, sizeof big - 40}}};
    struct trap_pdu_in in = {
        .from = &from, .sysuptime_ticks = 1, .trap_oid = &tp_link_down, .varbinds = &vb, .varbind_count = 1};
    uint8_t *buf = malloc(TP_BUF_BYTES), *msg;
    size_t len;

    (void)state;
    assert_int_equal(trap_pdu_encode_v1(&in, (const uint8_t *)"public", 6, TRAP_MAX_MSG_BYTES, buf,
                                        TP_BUF_BYTES, &msg, &len),
                     FLEET_ERR_LIMIT);
    free(buf);
}

/* The receiving side of the v3 test: the user, localized for the sending device's engine. */
struct tp_lookup {
    const struct respond_v3_user *user; /* the configured user (Ku) */
    const struct susm_engine *engine;   /* the device's engine */
    struct susm_user localized;         /* filled by the lookup */
};

static const struct susm_user *
tp_find_user(void *arg, const uint8_t *name, size_t name_len)
{
    struct tp_lookup *l = arg;
    const struct respond_v3_user *u = l->user;

    if (name_len != u->name_len || memcmp(name, u->name, name_len)) {
        return NULL;
    }
    assert_int_equal(susm_user_init(&l->localized, u->name, u->name_len, (enum susm_auth)u->auth,
                                    (const uint8_t *)"auth-pass-1", 11, (enum susm_priv)u->priv,
                                    (const uint8_t *)"priv-pass-1", 11, l->engine->id, l->engine->id_len),
                     FLEET_OK);
    return &l->localized;
}

/* Encode linkDown as an authPriv v3 trap from a device's engine. */
static size_t
tp_encode_v3(const char *user_spec, const struct susm_engine *engine, uint8_t *buf,
             struct respond_v3_user *user)
{
    char err[256];
    struct trap_origin from = {.addr = 0x0a000001u, .fd = -1, .name = "core-1", .engine = engine};
    struct trap_varbind vb = {.name = &tp_if_index_3, .value = {.tag = BER_INTEGER, .v.i = 3}};
    struct trap_pdu_in in = {.from = &from,
                             .sysuptime_ticks = 777,
                             .trap_oid = &tp_link_down,
                             .varbinds = &vb,
                             .varbind_count = 1};
    uint8_t scratch[TRAP_MAX_MSG_BYTES + TRAP_PDU_V3_HEADROOM], *msg;
    size_t len;

    assert_int_equal(respond_v3_user_parse(user_spec, user, err, sizeof err), FLEET_OK);
    assert_int_equal(trap_pdu_encode_v3(&in, user, engine, SPDU_TRAP_V2, 4711, 0x1122334455667788ull,
                                        TRAP_MAX_MSG_BYTES, scratch, sizeof scratch, buf, TP_BUF_BYTES, &msg,
                                        &len),
                     FLEET_OK);
    assert_ptr_equal(msg, buf);
    assert_true(len <= TRAP_MAX_MSG_BYTES);
    return len;
}

/* The v3 trap as the device's engine sends it: authPriv with the keys localized for that engine, not
 * reportable (a trap is unconfirmed), its engine's ID, boots and time, and the v2 varbind list. */
static void
test_v3_auth_priv_trap_decodes_and_verifies(void **state)
{
    static const uint8_t id[] = {0x80, 0, 0, 0, 5, 'f', 'l', 'e', 'e', 't', 0, 0, 0, 9};
    struct susm_engine engine = {
        .id = id, .id_len = sizeof id, .boots = 3, .time_s = 1234, .max_msg_bytes = 1472};
    struct respond_v3_user user;
    struct tp_lookup lookup = {.user = &user, .engine = &engine};
    struct susm_msg m;
    enum susm_report_kind report;
    struct spdu_binding_iter it;
    struct spdu_binding b;
    struct oid want;
    uint8_t *buf = malloc(TP_BUF_BYTES);
    size_t len;

    (void)state;
    len = tp_encode_v3("trapper:sha256:auth-pass-1:aes:priv-pass-1", &engine, buf, &user);
    assert_int_equal(susm_agent_receive(buf, len, &engine, tp_find_user, &lookup, &m, &report), FLEET_OK);
    assert_int_equal(report, SUSM_REPORT_NONE);
    assert_int_equal(m.flags, SUSM_FLAG_AUTH | SUSM_FLAG_PRIV);
    assert_true(m.authenticated);
    assert_int_equal(m.engine_id_len, sizeof id);
    assert_memory_equal(m.engine_id, id, sizeof id);
    assert_int_equal(m.engine_boots, 3);
    assert_int_equal(m.engine_time, 1234);
    assert_int_equal(m.user_name_len, 7);
    assert_memory_equal(m.user_name, "trapper", 7);
    assert_int_equal(m.pdu.type, SPDU_TRAP_V2);
    assert_int_equal(m.pdu.request_id, 4711);
    assert_int_equal(m.pdu.binding_count,
                     5); /* sysUpTime, snmpTrapOID, ifIndex.3, snmpTrapAddress, sysName */
    spdu_binding_iter_init(&it, &m.pdu);
    assert_int_equal(spdu_binding_next(&it, &b), FLEET_OK);
    assert_int_equal(b.value.tag, BER_TIMETICKS);
    assert_int_equal(b.value.v.u, 777);
    assert_int_equal(spdu_binding_next(&it, &b), FLEET_OK);
    assert_int_equal(ber_oid_decode(b.value.v.bytes.ptr, b.value.v.bytes.len, &want), FLEET_OK);
    assert_int_equal(oid_cmp(&want, &tp_link_down), 0);
    free(buf);
}

/* The same trap, received with another password: the digest fails (what snmptrapd does with it: drop). */
static void
test_v3_wrong_password_fails_digest(void **state)
{
    static const uint8_t id[] = {0x80, 0, 0, 0, 5, 'f', 'l', 'e', 'e', 't', 0, 0, 0, 1};
    struct susm_engine engine = {
        .id = id, .id_len = sizeof id, .boots = 1, .time_s = 5, .max_msg_bytes = 1472};
    struct respond_v3_user user;
    struct tp_lookup lookup = {.user = &user, .engine = &engine};
    struct susm_msg m;
    enum susm_report_kind report;
    uint8_t *buf = malloc(TP_BUF_BYTES);
    size_t len;

    (void)state;
    len = tp_encode_v3("trapper:sha:other-pass-9:aes:priv-pass-1", &engine, buf, &user);
    assert_int_equal(susm_agent_receive(buf, len, &engine, tp_find_user, &lookup, &m, &report), FLEET_OK);
    assert_int_equal(report, SUSM_REPORT_WRONG_DIGESTS);
    free(buf);
}

/* authNoPriv: the flags say auth only and the scopedPDU is in the clear. */
static void
test_v3_auth_no_priv_trap(void **state)
{
    static const uint8_t id[] = {0x80, 0, 0, 0, 5, 'f', 'l', 'e', 'e', 't', 0, 0, 0, 2};
    struct susm_engine engine = {
        .id = id, .id_len = sizeof id, .boots = 1, .time_s = 5, .max_msg_bytes = 1472};
    struct respond_v3_user user;
    struct tp_lookup lookup = {.user = &user, .engine = &engine};
    struct susm_msg m;
    enum susm_report_kind report;
    uint8_t *buf = malloc(TP_BUF_BYTES);
    size_t len;

    (void)state;
    len = tp_encode_v3("trapper:md5:auth-pass-1:none:", &engine, buf, &user);
    assert_int_equal(susm_agent_receive(buf, len, &engine, tp_find_user, &lookup, &m, &report), FLEET_OK);
    assert_int_equal(report, SUSM_REPORT_NONE);
    assert_int_equal(m.flags, SUSM_FLAG_AUTH);
    assert_int_equal(m.pdu.type, SPDU_TRAP_V2);
    free(buf);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v1_map_follows_rfc3584),
        cmocka_unit_test(test_v1_link_down_bytes_by_hand),
        cmocka_unit_test(test_v1_enterprise_trap_parses_with_netsnmp),
        cmocka_unit_test(test_v1_ipv6_device_has_zero_agent_addr),
        cmocka_unit_test(test_v1_oversized_is_refused),
        cmocka_unit_test(test_v3_auth_priv_trap_decodes_and_verifies),
        cmocka_unit_test(test_v3_wrong_password_fails_digest),
        cmocka_unit_test(test_v3_auth_no_priv_trap),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
