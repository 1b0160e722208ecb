/*
 * Unit tests of the v1/v2c message and PDU codec (wire/spdu.c), with
 * net-snmp's library as the oracle in both directions: responses we encode
 * must parse with snmp_parse() to the same varbinds, and requests net-snmp
 * builds with snmp_build() (forward and reverse encoding, v1 and v2c) must
 * decode with ours. The robustness tests cut valid messages at every length
 * and flip random bits (fixed seed), each input in a buffer of exactly its
 * size so the sanitizer build sees any read past it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <net-snmp/net-snmp-config.h>

#include <net-snmp/net-snmp-includes.h>

#include "spdu.h"

/* Big enough for every message here except the limit tests, which allocate. */
#define TS_BUF_BYTES 8192
/* Random bit-flip rounds per message; fixed seed so a failure repeats. */
#define TS_FLIP_ROUNDS 20000
#define TS_SEED        424242u
/* Most bytes the budget may hold back beyond the varbind that did not fit (lengths and INTEGERs counted at
 * their largest). */
#define TS_BUDGET_SLACK_BYTES 16

/* Room for the cases of ts_cases(). */
#define TS_MAX_CASES 32

static const uint8_t ts_community[] = "public";
#define TS_COMMUNITY_LEN (sizeof ts_community - 1)

static uint64_t ts_state = TS_SEED;

static uint64_t
ts_rand64(void)
{
    ts_state ^= ts_state << 13;
    ts_state ^= ts_state >> 7;
    ts_state ^= ts_state << 17;
    return ts_state;
}

static void
ts_oid(struct oid *o, const char *text)
{
    assert_int_equal(oid_parse(text, o), FLEET_OK);
}

/* net-snmp's form of @p o. */
static size_t
ts_to_netsnmp_oid(const struct oid *o, oid *out)
{
    uint32_t i;

    for (i = 0; i < o->len; i++) {
        out[i] = o->sub[i];
    }
    return o->len;
}

/* Parse a whole message with net-snmp; NULL when it refuses. Free with snmp_free_pdu(). */
static netsnmp_pdu *
ts_netsnmp_parse(const uint8_t *msg, size_t len)
{
    netsnmp_session sess;
    netsnmp_pdu *pdu;
    u_char *copy = malloc(len);

    assert_non_null(copy);
    memcpy(copy, msg, len);
    snmp_sess_init(&sess);
    pdu = snmp_pdu_create(SNMP_MSG_GET);
    assert_non_null(pdu);
    if (snmp_parse(NULL, &sess, pdu, copy, len) != 0) {
        snmp_free_pdu(pdu);
        pdu = NULL;
    }
    free(copy);
    return pdu;
}

/*
 * Build @p pdu into @p out with net-snmp as a @p version session, forward or
 * reverse (net-snmp's two encoders differ: the forward one pads lengths).
 */
static size_t
ts_netsnmp_build(netsnmp_pdu *pdu, long version, int reverse, uint8_t *out, size_t out_cap)
{
    netsnmp_session sess;
    size_t pkt_len = TS_BUF_BYTES, offset = 0, len;
    u_char *pkt = malloc(pkt_len);

    assert_non_null(pkt);
    snmp_sess_init(&sess);
    sess.version = version;
    sess.community = (u_char *)ts_community;
    sess.community_len = TS_COMMUNITY_LEN;
    pdu->version = version;
    netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_REVERSE_ENCODE, reverse);
    pdu->flags &= ~UCD_MSG_FLAG_FORWARD_ENCODE;
    assert_int_equal(snmp_build(&pkt, &pkt_len, &offset, &sess, pdu), 0);
    if (pdu->flags & UCD_MSG_FLAG_FORWARD_ENCODE) {
        assert_false(reverse);
        len = pkt_len;
        assert_true(len <= out_cap);
        memcpy(out, pkt, len);
    } else {
        assert_true(reverse);
        len = offset;
        assert_true(len <= out_cap);
        memcpy(out, pkt + pkt_len - offset, len);
    }
    free(pkt);
    return len;
}

/* Our decode of @p msg, from a heap copy of exactly @p len bytes. */
static enum fleet_err
ts_decode_exact(const uint8_t *msg, size_t len, int iterate)
{
    uint8_t *copy = malloc(len ? len : 1);
    struct spdu_message m;
    enum fleet_err rc;

    assert_non_null(copy);
    if (len) {
        memcpy(copy, msg, len);
    }
    rc = spdu_message_decode(copy, len, &m);
    if (rc == FLEET_OK && iterate) {
        struct spdu_binding_iter it;
        struct spdu_binding b;
        uint32_t n = 0;
        enum fleet_err it_rc;

        /* What decode accepted, iteration must walk without an error, exactly binding_count times. */
        spdu_binding_iter_init(&it, &m.pdu);
        while ((it_rc = spdu_binding_next(&it, &b)) == FLEET_OK) {
            n++;
            assert_true(b.raw >= copy && b.raw + b.raw_len <= copy + len);
        }
        assert_int_equal(it_rc, FLEET_ERR_NOTFOUND);
        assert_int_equal(n, m.pdu.binding_count);
    }
    free(copy);
    return rc;
}

/* One varbind of every type: what a response may carry. */
struct ts_case {
    const char *name;
    struct spdu_value value;
};

static const uint8_t ts_bin[] = {0x00, 0xff, 0x80, 0x7f, 0x00};
static const uint8_t ts_ip[] = {192, 0, 2, 1};
static uint8_t ts_long_str[300];
static struct oid ts_oid_value;

/* Fills @p c, which holds TS_MAX_CASES. */
static size_t
ts_cases(struct ts_case *c)
{
    size_t n = 0;

    memset(c, 0, TS_MAX_CASES * sizeof *c);
    memset(ts_long_str, 'a', sizeof ts_long_str);
    ts_oid(&ts_oid_value, "1.3.6.1.4.1.8072.3.2.10");
#define TS_ADD(nm, tg) (c[n].name = (nm), c[n].value.tag = (tg), &c[n++].value)
    TS_ADD("1.3.6.1.2.1.1.7.0", BER_INTEGER)->v.i = 0;
    TS_ADD("1.3.6.1.2.1.1.7.1", BER_INTEGER)->v.i = -1;
    TS_ADD("1.3.6.1.2.1.1.7.2", BER_INTEGER)->v.i = INT32_MIN;
    TS_ADD("1.3.6.1.2.1.1.7.3", BER_INTEGER)->v.i = INT32_MAX;
    TS_ADD("1.3.6.1.2.1.1.7.4", BER_INTEGER)->v.i = -129;
    TS_ADD("1.3.6.1.2.1.1.1.0", BER_OCTET_STRING)->v.bytes.ptr = (const uint8_t *)"Linux fleetsim";
    c[n - 1].value.v.bytes.len = 14;
    TS_ADD("1.3.6.1.2.1.1.4.0", BER_OCTET_STRING)->v.bytes.ptr = ts_bin;
    c[n - 1].value.v.bytes.len = 0;
    TS_ADD("1.3.6.1.2.1.1.5.0", BER_OCTET_STRING)->v.bytes.ptr = ts_bin;
    c[n - 1].value.v.bytes.len = sizeof ts_bin;
    TS_ADD("1.3.6.1.2.1.1.6.0", BER_OCTET_STRING)->v.bytes.ptr = ts_long_str;
    c[n - 1].value.v.bytes.len = sizeof ts_long_str;
    TS_ADD("1.3.6.1.2.1.1.8.0", BER_NULL);
    TS_ADD("1.3.6.1.2.1.1.2.0", BER_OID)->v.oid = &ts_oid_value;
    TS_ADD("1.3.6.1.2.1.4.20.1.1.192.0.2.1", BER_IPADDRESS)->v.bytes.ptr = ts_ip;
    c[n - 1].value.v.bytes.len = sizeof ts_ip;
    TS_ADD("1.3.6.1.2.1.2.2.1.10.1", BER_COUNTER32)->v.u = UINT32_MAX;
    TS_ADD("1.3.6.1.2.1.2.2.1.10.2", BER_COUNTER32)->v.u = 0;
    TS_ADD("1.3.6.1.2.1.2.2.1.5.1", BER_GAUGE32)->v.u = 0x80000000u;
    TS_ADD("1.3.6.1.2.1.1.3.0", BER_TIMETICKS)->v.u = 123456789;
    TS_ADD("1.3.6.1.2.1.31.1.1.1.6.1", BER_COUNTER64)->v.u = UINT64_MAX;
    TS_ADD("1.3.6.1.2.1.31.1.1.1.6.2", BER_COUNTER64)->v.u = 0;
    TS_ADD("1.3.6.1.2.1.31.1.1.1.6.3", BER_COUNTER64)->v.u = 1ull << 63;
    TS_ADD("1.3.6.1.2.1.31.1.1.1.6.4", BER_COUNTER64)->v.u = 0x7f;
    TS_ADD("1.3.6.1.2.1.99.1.0", BER_NO_SUCH_OBJECT);
    TS_ADD("1.3.6.1.2.1.99.2.0", BER_NO_SUCH_INSTANCE);
    TS_ADD("1.3.6.1.2.1.99.3.0", BER_END_OF_MIB_VIEW);
#undef TS_ADD
    return n;
}

/* net-snmp's type byte for a value tag (they are the same numbers, by RFC). */
static void
ts_assert_netsnmp_var(const netsnmp_variable_list *var, const struct ts_case *c)
{
    struct oid name;
    oid want[OID_MAX_SUBIDS];
    size_t want_len;

    ts_oid(&name, c->name);
    want_len = ts_to_netsnmp_oid(&name, want);
    assert_int_equal(snmp_oid_compare(var->name, var->name_length, want, want_len), 0);
    assert_int_equal(var->type, c->value.tag);
    switch (c->value.tag) {
    case BER_INTEGER:
        assert_int_equal(*var->val.integer, c->value.v.i);
        break;
    case BER_COUNTER32:
    case BER_GAUGE32:
    case BER_TIMETICKS:
        assert_int_equal((unsigned long)*var->val.integer, c->value.v.u);
        break;
    case BER_COUNTER64:
        assert_int_equal(var->val.counter64->high, c->value.v.u >> 32);
        assert_int_equal(var->val.counter64->low, c->value.v.u & 0xffffffffu);
        break;
    case BER_OCTET_STRING:
    case BER_IPADDRESS:
        assert_int_equal(var->val_len, c->value.v.bytes.len);
        if (var->val_len) {
            assert_memory_equal(var->val.string, c->value.v.bytes.ptr, var->val_len);
        }
        break;
    case BER_OID:
        want_len = ts_to_netsnmp_oid(c->value.v.oid, want);
        assert_int_equal(snmp_oid_compare(var->val.objid, var->val_len / sizeof(oid), want, want_len), 0);
        break;
    default:
        assert_int_equal(var->val_len, 0);
        break;
    }
}

/* Check our own decode of one varbind against what was encoded. */
static void
ts_assert_binding(const struct spdu_binding *b, const struct ts_case *c)
{
    struct oid name, value_oid;

    ts_oid(&name, c->name);
    assert_int_equal(oid_cmp(&b->name, &name), 0);
    assert_int_equal(b->value.tag, c->value.tag);
    switch (c->value.tag) {
    case BER_INTEGER:
        assert_true(b->value.v.i == c->value.v.i);
        break;
    case BER_COUNTER32:
    case BER_GAUGE32:
    case BER_TIMETICKS:
    case BER_COUNTER64:
        assert_true(b->value.v.u == c->value.v.u);
        break;
    case BER_OCTET_STRING:
    case BER_IPADDRESS:
        assert_int_equal(b->value.v.bytes.len, c->value.v.bytes.len);
        if (b->value.v.bytes.len) {
            assert_memory_equal(b->value.v.bytes.ptr, c->value.v.bytes.ptr, b->value.v.bytes.len);
        }
        break;
    case BER_OID:
        assert_int_equal(ber_oid_decode(b->value.v.bytes.ptr, b->value.v.bytes.len, &value_oid), FLEET_OK);
        assert_int_equal(oid_cmp(&value_oid, c->value.v.oid), 0);
        break;
    default:
        break;
    }
}

/* Encode the response of every case; returns the message length. */
static size_t
ts_encode_cases(uint8_t *buf, size_t cap, int32_t version, const struct ts_case *c, size_t n, uint8_t **msg)
{
    struct spdu_encoder e;
    struct oid name;
    size_t i, len;

    spdu_enc_init(&e, buf, cap, SPDU_HEADROOM(TS_COMMUNITY_LEN),
                  spdu_bindings_budget(cap, TS_COMMUNITY_LEN, 0x12345678));
    for (i = 0; i < n; i++) {
        ts_oid(&name, c[i].name);
        assert_int_equal(spdu_enc_binding(&e, &name, &c[i].value), FLEET_OK);
    }
    assert_int_equal(e.count, n);
    spdu_enc_finish_message(&e, version, ts_community, TS_COMMUNITY_LEN, SPDU_RESPONSE, 0x12345678, 0, 0, msg,
                            &len);
    return len;
}

static void
test_response_of_every_type_parses_with_netsnmp(void **state)
{
    static const int32_t versions[] = {SPDU_V2C, SPDU_V1};
    struct ts_case c[TS_MAX_CASES];
    size_t n = ts_cases(c), vi;

    (void)state;
    for (vi = 0; vi < 2; vi++) {
        uint8_t buf[TS_BUF_BYTES], *msg;
        size_t len = ts_encode_cases(buf, sizeof buf, versions[vi], c, n, &msg);
        netsnmp_pdu *pdu = ts_netsnmp_parse(msg, len);
        netsnmp_variable_list *var;
        size_t i = 0;

        assert_non_null(pdu);
        assert_int_equal(pdu->version, versions[vi] == SPDU_V2C ? SNMP_VERSION_2c : SNMP_VERSION_1);
        assert_int_equal(pdu->command, SNMP_MSG_RESPONSE);
        assert_int_equal(pdu->reqid, 0x12345678);
        assert_int_equal(pdu->errstat, 0);
        assert_int_equal(pdu->errindex, 0);
        assert_int_equal(pdu->community_len, TS_COMMUNITY_LEN);
        assert_memory_equal(pdu->community, ts_community, TS_COMMUNITY_LEN);
        for (var = pdu->variables; var; var = var->next_variable) {
            assert_true(i < n);
            ts_assert_netsnmp_var(var, &c[i++]);
        }
        assert_int_equal(i, n);
        snmp_free_pdu(pdu);
    }
}

static void
test_response_of_every_type_round_trips_through_our_decoder(void **state)
{
    uint8_t buf[TS_BUF_BYTES], *msg;
    struct spdu_binding_iter it;
    struct spdu_binding b;
    struct spdu_message m;
    struct ts_case c[TS_MAX_CASES];
    size_t n = ts_cases(c), len, i;

    (void)state;
    len = ts_encode_cases(buf, sizeof buf, SPDU_V2C, c, n, &msg);
    assert_int_equal(spdu_message_decode(msg, len, &m), FLEET_OK);
    assert_int_equal(m.version, SPDU_V2C);
    assert_int_equal(m.community_len, TS_COMMUNITY_LEN);
    assert_memory_equal(m.community, ts_community, TS_COMMUNITY_LEN);
    assert_int_equal(m.pdu.type, SPDU_RESPONSE);
    assert_int_equal(m.pdu.request_id, 0x12345678);
    assert_int_equal(m.pdu.binding_count, n);
    spdu_binding_iter_init(&it, &m.pdu);
    for (i = 0; i < n; i++) {
        assert_int_equal(spdu_binding_next(&it, &b), FLEET_OK);
        ts_assert_binding(&b, &c[i]);
    }
    assert_int_equal(spdu_binding_next(&it, &b), FLEET_ERR_NOTFOUND);
}

static void
test_error_status_and_index_reach_netsnmp(void **state)
{
    uint8_t buf[TS_BUF_BYTES], *msg;
    struct spdu_value null = {.tag = BER_NULL};
    struct spdu_encoder e;
    struct oid name;
    netsnmp_pdu *pdu;
    size_t len;

    (void)state;
    ts_oid(&name, "1.3.6.1.2.1.1.1.0");
    spdu_enc_init(&e, buf, sizeof buf, SPDU_HEADROOM(TS_COMMUNITY_LEN), sizeof buf);
    assert_int_equal(spdu_enc_binding(&e, &name, &null), FLEET_OK);
    assert_int_equal(spdu_enc_binding(&e, &name, &null), FLEET_OK);
    spdu_enc_finish_message(&e, SPDU_V1, ts_community, TS_COMMUNITY_LEN, SPDU_RESPONSE, -7, SPDU_NO_SUCH_NAME,
                            2, &msg, &len);
    pdu = ts_netsnmp_parse(msg, len);
    assert_non_null(pdu);
    assert_int_equal(pdu->reqid, -7);
    assert_int_equal(pdu->errstat, SNMP_ERR_NOSUCHNAME);
    assert_int_equal(pdu->errindex, 2);
    snmp_free_pdu(pdu);
}

static void
test_finished_pdu_parses_with_netsnmp_pdu_parser(void **state)
{
    uint8_t buf[TS_BUF_BYTES], *out;
    struct spdu_encoder e;
    struct ts_case c[TS_MAX_CASES];
    struct oid name;
    netsnmp_pdu *pdu;
    netsnmp_variable_list *var;
    size_t n = ts_cases(c), len, i;

    (void)state;
    spdu_enc_init(&e, buf, sizeof buf, SPDU_HEADROOM(0), sizeof buf);
    for (i = 0; i < n; i++) {
        ts_oid(&name, c[i].name);
        assert_int_equal(spdu_enc_binding(&e, &name, &c[i].value), FLEET_OK);
    }
    spdu_enc_finish_pdu(&e, SPDU_REPORT, INT32_MAX, 0, 0, &out, &len);
    assert_true(out >= buf);
    pdu = snmp_pdu_create(SNMP_MSG_GET);
    pdu->version = SNMP_VERSION_3;
    assert_int_equal(snmp_pdu_parse(pdu, out, &len), 0);
    assert_int_equal(pdu->command, SNMP_MSG_REPORT);
    assert_int_equal(pdu->reqid, INT32_MAX);
    for (i = 0, var = pdu->variables; var; var = var->next_variable) {
        ts_assert_netsnmp_var(var, &c[i++]);
    }
    assert_int_equal(i, n);
    snmp_free_pdu(pdu);
}

/* A request net-snmp builds, decoded by us, in every encoding variant. */
struct ts_request {
    int command;
    long non_repeaters, max_repetitions; /* GETBULK only */
    int with_values;                     /* SET: values of every type, else NULL values */
};

static netsnmp_pdu *
ts_netsnmp_request(const struct ts_request *rq, const struct ts_case *c, size_t n)
{
    netsnmp_pdu *pdu = snmp_pdu_create(rq->command);
    oid name[OID_MAX_SUBIDS];
    struct oid o;
    size_t i;

    assert_non_null(pdu);
    pdu->reqid = 0x0badcafe;
    if (rq->command == SNMP_MSG_GETBULK) {
        pdu->non_repeaters = rq->non_repeaters;
        pdu->max_repetitions = rq->max_repetitions;
    }
    for (i = 0; i < n; i++) {
        const struct spdu_value *v = &c[i].value;
        size_t name_len;

        ts_oid(&o, c[i].name);
        name_len = ts_to_netsnmp_oid(&o, name);
        if (!rq->with_values) {
            assert_non_null(snmp_add_null_var(pdu, name, name_len));
            continue;
        }
        switch (v->tag) {
        case BER_INTEGER: {
            long l = (long)v->v.i;

            assert_non_null(snmp_pdu_add_variable(pdu, name, name_len, v->tag, &l, sizeof l));
            break;
        }
        case BER_COUNTER32:
        case BER_GAUGE32:
        case BER_TIMETICKS: {
            u_long ul = (u_long)v->v.u;

            assert_non_null(snmp_pdu_add_variable(pdu, name, name_len, v->tag, &ul, sizeof ul));
            break;
        }
        case BER_COUNTER64: {
            struct counter64 c64 = {v->v.u >> 32, v->v.u & 0xffffffffu};

            assert_non_null(snmp_pdu_add_variable(pdu, name, name_len, v->tag, &c64, sizeof c64));
            break;
        }
        case BER_OID: {
            oid value[OID_MAX_SUBIDS];
            size_t value_len = ts_to_netsnmp_oid(v->v.oid, value);

            assert_non_null(
                snmp_pdu_add_variable(pdu, name, name_len, v->tag, value, value_len * sizeof(oid)));
            break;
        }
        default:
            assert_non_null(
                snmp_pdu_add_variable(pdu, name, name_len, v->tag, v->v.bytes.ptr, v->v.bytes.len));
            break;
        }
    }
    return pdu;
}

/* Build @p rq with net-snmp in all four variants and check our decode of each. */
static void
ts_check_request(const struct ts_request *rq, uint8_t want_type)
{
    static const long versions[] = {SNMP_VERSION_1, SNMP_VERSION_2c};
    struct ts_case c[TS_MAX_CASES];
    size_t n = ts_cases(c), vi, i;
    int reverse;

    /* v1 cannot carry Counter64 or the v2 exceptions, nor GETBULK. */
    for (vi = 0; vi < 2; vi++) {
        size_t use = n;

        if (versions[vi] == SNMP_VERSION_1 && rq->command == SNMP_MSG_GETBULK) {
            continue;
        }
        if (versions[vi] == SNMP_VERSION_1 && rq->with_values) {
            for (use = 0; use < n && c[use].value.tag != BER_COUNTER64; use++) {
            }
        }
        for (reverse = 0; reverse < 2; reverse++) {
            netsnmp_pdu *pdu = ts_netsnmp_request(rq, c, use);
            uint8_t msg[TS_BUF_BYTES];
            size_t len = ts_netsnmp_build(pdu, versions[vi], reverse, msg, sizeof msg);
            struct spdu_binding_iter it;
            struct spdu_binding b;
            struct spdu_message m;

            snmp_free_pdu(pdu);
            assert_int_equal(spdu_message_decode(msg, len, &m), FLEET_OK);
            assert_int_equal(m.version, versions[vi] == SNMP_VERSION_1 ? SPDU_V1 : SPDU_V2C);
            assert_int_equal(m.community_len, TS_COMMUNITY_LEN);
            assert_memory_equal(m.community, ts_community, TS_COMMUNITY_LEN);
            assert_int_equal(m.pdu.type, want_type);
            assert_int_equal(m.pdu.request_id, 0x0badcafe);
            if (want_type == SPDU_GETBULK) {
                assert_int_equal(m.pdu.error_status, rq->non_repeaters);
                assert_int_equal(m.pdu.error_index, rq->max_repetitions);
            } else {
                assert_int_equal(m.pdu.error_status, 0);
                assert_int_equal(m.pdu.error_index, 0);
            }
            assert_int_equal(m.pdu.binding_count, use);
            spdu_binding_iter_init(&it, &m.pdu);
            for (i = 0; i < use; i++) {
                assert_int_equal(spdu_binding_next(&it, &b), FLEET_OK);
                if (rq->with_values) {
                    ts_assert_binding(&b, &c[i]);
                } else {
                    struct ts_case null_case = c[i];

                    null_case.value.tag = BER_NULL;
                    ts_assert_binding(&b, &null_case);
                }
            }
            assert_int_equal(spdu_binding_next(&it, &b), FLEET_ERR_NOTFOUND);
        }
    }
}

static void
test_get_built_by_netsnmp_decodes(void **state)
{
    struct ts_request rq = {.command = SNMP_MSG_GET};

    (void)state;
    ts_check_request(&rq, SPDU_GET);
}

static void
test_getnext_built_by_netsnmp_decodes(void **state)
{
    struct ts_request rq = {.command = SNMP_MSG_GETNEXT};

    (void)state;
    ts_check_request(&rq, SPDU_GETNEXT);
}

static void
test_getbulk_built_by_netsnmp_decodes_with_repeaters(void **state)
{
    struct ts_request rq = {.command = SNMP_MSG_GETBULK, .non_repeaters = 1, .max_repetitions = 25};
    struct ts_request big = {.command = SNMP_MSG_GETBULK, .non_repeaters = 0, .max_repetitions = INT32_MAX};

    (void)state;
    ts_check_request(&rq, SPDU_GETBULK);
    ts_check_request(&big, SPDU_GETBULK);
}

static void
test_set_built_by_netsnmp_decodes_every_value(void **state)
{
    struct ts_request rq = {.command = SNMP_MSG_SET, .with_values = 1};

    (void)state;
    ts_check_request(&rq, SPDU_SET);
}

/* Valid messages for the robustness tests: our response and net-snmp's requests. */
static size_t
ts_sample_messages(uint8_t msgs[][TS_BUF_BYTES], size_t *lens)
{
    struct ts_request set = {.command = SNMP_MSG_SET, .with_values = 1};
    struct ts_request bulk = {.command = SNMP_MSG_GETBULK, .non_repeaters = 2, .max_repetitions = 10};
    struct ts_case c[TS_MAX_CASES];
    size_t n = ts_cases(c);
    uint8_t buf[TS_BUF_BYTES], *msg;
    netsnmp_pdu *pdu;

    lens[0] = ts_encode_cases(buf, sizeof buf, SPDU_V2C, c, n, &msg);
    memcpy(msgs[0], msg, lens[0]);
    pdu = ts_netsnmp_request(&set, c, n);
    lens[1] = ts_netsnmp_build(pdu, SNMP_VERSION_2c, 0, msgs[1], TS_BUF_BYTES);
    snmp_free_pdu(pdu);
    pdu = ts_netsnmp_request(&bulk, c, 4);
    lens[2] = ts_netsnmp_build(pdu, SNMP_VERSION_2c, 1, msgs[2], TS_BUF_BYTES);
    snmp_free_pdu(pdu);
    return 3;
}

static void
test_truncated_at_every_length_is_refused(void **state)
{
    static uint8_t msgs[3][TS_BUF_BYTES];
    size_t lens[3], n = ts_sample_messages(msgs, lens), i, cut;

    (void)state;
    for (i = 0; i < n; i++) {
        assert_int_equal(ts_decode_exact(msgs[i], lens[i], 1), FLEET_OK);
        for (cut = 0; cut < lens[i]; cut++) {
            if (ts_decode_exact(msgs[i], cut, 1) != FLEET_ERR_PROTO) {
                fail_msg("message %zu cut to %zu of %zu bytes was not refused", i, cut, lens[i]);
            }
        }
    }
}

static void
test_truncated_pdu_is_refused(void **state)
{
    uint8_t buf[TS_BUF_BYTES], *out;
    struct spdu_value v = {.tag = BER_INTEGER, .v.i = 5};
    struct spdu_encoder e;
    struct oid name;
    size_t len, cut;

    (void)state;
    ts_oid(&name, "1.3.6.1.2.1.1.7.0");
    spdu_enc_init(&e, buf, sizeof buf, SPDU_HEADROOM(0), sizeof buf);
    assert_int_equal(spdu_enc_binding(&e, &name, &v), FLEET_OK);
    spdu_enc_finish_pdu(&e, SPDU_GET, 1, 0, 0, &out, &len);
    for (cut = 0; cut <= len; cut++) {
        uint8_t *copy = malloc(cut ? cut : 1);
        struct ber_reader r = {copy, copy + cut};
        struct spdu_pdu pdu;

        memcpy(copy, out, cut);
        assert_int_equal(spdu_pdu_decode(&r, &pdu), cut == len ? FLEET_OK : FLEET_ERR_PROTO);
        free(copy);
    }
}

static void
test_random_bit_flips_never_crash(void **state)
{
    static uint8_t msgs[3][TS_BUF_BYTES];
    size_t lens[3], n = ts_sample_messages(msgs, lens), round;
    size_t accepted = 0;

    (void)state;
    for (round = 0; round < TS_FLIP_ROUNDS; round++) {
        size_t which = round % n, flips = 1 + ts_rand64() % 4, k;
        uint8_t work[TS_BUF_BYTES];

        memcpy(work, msgs[which], lens[which]);
        for (k = 0; k < flips; k++) {
            /* Aim at the first 64 bytes half of the time: that is where the headers are. */
            size_t span = (ts_rand64() & 1) && lens[which] > 64 ? 64 : lens[which];
            size_t at = ts_rand64() % span;

            work[at] ^= (uint8_t)(1u << (ts_rand64() % 8));
        }
        if (ts_decode_exact(work, lens[which], 1) == FLEET_OK) {
            accepted++;
        }
    }
    /* Some flips land in string contents and stay valid; most break a header. */
    assert_true(accepted > 0 && accepted < TS_FLIP_ROUNDS);
}

static void
test_random_bytes_never_crash(void **state)
{
    size_t round;

    (void)state;
    for (round = 0; round < TS_FLIP_ROUNDS; round++) {
        uint8_t work[64];
        size_t len = ts_rand64() % sizeof work, i;

        for (i = 0; i < len; i++) {
            work[i] = (uint8_t)ts_rand64();
        }
        /* A plausible start makes the decoder go deeper than the first byte. */
        if (len > 2) {
            work[0] = 0x30;
            work[1] = (uint8_t)(len - 2);
        }
        ts_decode_exact(work, len, 1);
    }
}

/* A v2c GET whose variable-bindings hold @p vb: for varbind-level malformations. */
static size_t
ts_wrap_bindings(const uint8_t *vb, size_t vb_len, uint8_t *out)
{
    uint8_t pdu[TS_BUF_BYTES], *p;
    size_t pdu_len, len;

    p = ber_put_int(pdu, BER_INTEGER, 1);
    p = ber_put_int(p, BER_INTEGER, 0);
    p = ber_put_int(p, BER_INTEGER, 0);
    p = ber_put_bytes(p, BER_SEQUENCE, vb, vb_len);
    pdu_len = (size_t)(p - pdu);
    len = 3 + 2 + TS_COMMUNITY_LEN + 1 + ber_length_size(pdu_len) + pdu_len;
    p = ber_put_header(out, BER_SEQUENCE, len);
    p = ber_put_int(p, BER_INTEGER, SPDU_V2C);
    p = ber_put_bytes(p, BER_OCTET_STRING, ts_community, TS_COMMUNITY_LEN);
    p = ber_put_bytes(p, SPDU_GET, pdu, pdu_len);
    return (size_t)(p - out);
}

static void
test_malformed_varbinds_are_refused(void **state)
{
    static const struct {
        const char *why;
        uint8_t vb[24];
        size_t len;
    } cases[] = {
        {"valid control", {0x30, 0x06, 0x06, 0x02, 0x2b, 0x06, 0x05, 0x00}, 8},
        {"extra element", {0x30, 0x08, 0x06, 0x02, 0x2b, 0x06, 0x05, 0x00, 0x05, 0x00}, 10},
        {"value missing", {0x30, 0x04, 0x06, 0x02, 0x2b, 0x06}, 6},
        {"name not an OID", {0x30, 0x06, 0x04, 0x02, 0x2b, 0x06, 0x05, 0x00}, 8},
        {"varbind not a SEQUENCE", {0x31, 0x06, 0x06, 0x02, 0x2b, 0x06, 0x05, 0x00}, 8},
        {"unknown value tag", {0x30, 0x06, 0x06, 0x02, 0x2b, 0x06, 0x45, 0x00}, 8},
        {"NULL with contents", {0x30, 0x07, 0x06, 0x02, 0x2b, 0x06, 0x05, 0x01, 0x00}, 9},
        {"noSuchObject with contents", {0x30, 0x07, 0x06, 0x02, 0x2b, 0x06, 0x80, 0x01, 0x00}, 9},
        {"IpAddress of 5 bytes", {0x30, 0x0b, 0x06, 0x02, 0x2b, 0x06, 0x40, 0x05, 1, 2, 3, 4, 5}, 13},
        {"Counter32 above 2^32-1", {0x30, 0x0b, 0x06, 0x02, 0x2b, 0x06, 0x41, 0x05, 1, 0, 0, 0, 0}, 13},
        {"negative Gauge32", {0x30, 0x07, 0x06, 0x02, 0x2b, 0x06, 0x42, 0x01, 0xff}, 9},
        {"empty INTEGER", {0x30, 0x06, 0x06, 0x02, 0x2b, 0x06, 0x02, 0x00}, 8},
        {"padded OID value", {0x30, 0x09, 0x06, 0x02, 0x2b, 0x06, 0x06, 0x03, 0x2b, 0x80, 0x01}, 11},
        {"empty name", {0x30, 0x04, 0x06, 0x00, 0x05, 0x00}, 6},
        {"varbind length past list", {0x30, 0x07, 0x06, 0x02, 0x2b, 0x06, 0x05, 0x00}, 8},
        {"value length past varbind", {0x30, 0x06, 0x06, 0x02, 0x2b, 0x06, 0x04, 0x01, 0x41}, 9},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t msg[TS_BUF_BYTES];
        size_t len = ts_wrap_bindings(cases[i].vb, cases[i].len, msg);
        enum fleet_err want = i == 0 ? FLEET_OK : FLEET_ERR_PROTO;
        enum fleet_err got = ts_decode_exact(msg, len, 1);

        if (got != want) {
            fail_msg("%s: got %d, want %d", cases[i].why, got, want);
        }
    }
}

static void
test_message_level_malformations_are_refused(void **state)
{
    /* SEQUENCE { version, community "public", GET { 1, 0, 0, {} } } with one field changed each. */
    static const uint8_t good[] = {0x30, 0x18, 0x02, 0x01, 0x01, 0x04, 0x06, 'p',  'u',
                                   'b',  'l',  'i',  'c',  0xa0, 0x0b, 0x02, 0x01, 0x01,
                                   0x02, 0x01, 0x00, 0x02, 0x01, 0x00, 0x30, 0x00};
    uint8_t m[sizeof good + 8];
    struct spdu_message msg;

    (void)state;
    assert_int_equal(ts_decode_exact(good, sizeof good, 1), FLEET_OK);

    memcpy(m, good, sizeof good);
    m[sizeof good] = 0x00;
    assert_int_equal(ts_decode_exact(m, sizeof good + 1, 1), FLEET_ERR_PROTO); /* trailing byte */

    memcpy(m, good, sizeof good);
    m[4] = 3;
    assert_int_equal(spdu_message_decode(m, sizeof good, &msg), FLEET_ERR_NOTFOUND); /* v3: for susm */
    m[4] = 2;
    assert_int_equal(ts_decode_exact(m, sizeof good, 1), FLEET_ERR_PROTO); /* no such version */
    m[4] = 0xff;
    assert_int_equal(ts_decode_exact(m, sizeof good, 1), FLEET_ERR_PROTO);

    memcpy(m, good, sizeof good);
    m[13] = SPDU_TRAP_V1;
    assert_int_equal(ts_decode_exact(m, sizeof good, 1), FLEET_ERR_PROTO);
    m[13] = 0xa9;
    assert_int_equal(ts_decode_exact(m, sizeof good, 1), FLEET_ERR_PROTO);
    m[13] = SPDU_REPORT;
    assert_int_equal(ts_decode_exact(m, sizeof good, 1), FLEET_OK);

    memcpy(m, good, sizeof good);
    m[24] = 0x31; /* variable-bindings not a SEQUENCE */
    assert_int_equal(ts_decode_exact(m, sizeof good, 1), FLEET_ERR_PROTO);

    memcpy(m, good, sizeof good);
    m[5] = 0x02; /* community not an OCTET STRING */
    assert_int_equal(ts_decode_exact(m, sizeof good, 1), FLEET_ERR_PROTO);

    memcpy(m, good, sizeof good);
    m[1] = 0x80; /* indefinite length */
    assert_int_equal(ts_decode_exact(m, sizeof good, 1), FLEET_ERR_PROTO);
}

static void
test_request_id_beyond_int32_is_refused(void **state)
{
    /* request-id 2^31 needs 5 content bytes: valid BER, not a valid SNMP request-id. */
    static const uint8_t msg[] = {0x30, 0x1c, 0x02, 0x01, 0x01, 0x04, 0x06, 'p',  'u',  'b',
                                  'l',  'i',  'c',  0xa0, 0x0f, 0x02, 0x05, 0x00, 0x80, 0x00,
                                  0x00, 0x00, 0x02, 0x01, 0x00, 0x02, 0x01, 0x00, 0x30, 0x00};
    uint8_t ok[sizeof msg];

    (void)state;
    assert_int_equal(ts_decode_exact(msg, sizeof msg, 1), FLEET_ERR_PROTO);
    /* The same with 0x7fffffff in five bytes (non-minimal but in range) is accepted. */
    memcpy(ok, msg, sizeof msg);
    ok[18] = 0x7f;
    ok[19] = ok[20] = ok[21] = 0xff;
    assert_int_equal(ts_decode_exact(ok, sizeof ok, 1), FLEET_OK);
}

/* A message with @p count NULL varbinds, encoded by us into a heap buffer. */
static uint8_t *
ts_many_bindings(uint32_t count, size_t *len, uint8_t **buf)
{
    size_t cap = 64 + (size_t)count * 32;
    struct spdu_value null = {.tag = BER_NULL};
    struct spdu_encoder e;
    struct oid name;
    uint8_t *msg;
    uint32_t i;

    *buf = malloc(cap);
    assert_non_null(*buf);
    ts_oid(&name, "1.3.6.1.2.1.2.2.1.10.1");
    spdu_enc_init(&e, *buf, cap, SPDU_HEADROOM(TS_COMMUNITY_LEN), cap);
    for (i = 0; i < count; i++) {
        assert_int_equal(spdu_enc_binding(&e, &name, &null), FLEET_OK);
    }
    spdu_enc_finish_message(&e, SPDU_V2C, ts_community, TS_COMMUNITY_LEN, SPDU_GET, 99, 0, 0, &msg, len);
    return msg;
}

static void
test_binding_count_limit(void **state)
{
    struct spdu_message m;
    uint8_t *buf, *msg;
    size_t len;

    (void)state;
    msg = ts_many_bindings(SPDU_MAX_BINDINGS_DECODED, &len, &buf);
    assert_int_equal(spdu_message_decode(msg, len, &m), FLEET_OK);
    assert_int_equal(m.pdu.binding_count, SPDU_MAX_BINDINGS_DECODED);
    free(buf);

    msg = ts_many_bindings(SPDU_MAX_BINDINGS_DECODED + 1, &len, &buf);
    assert_int_equal(spdu_message_decode(msg, len, &m), FLEET_ERR_LIMIT);
    /* The header is known, so the agent can still answer tooBig / genErr to this request-id. */
    assert_int_equal(m.pdu.request_id, 99);
    free(buf);
}

/*
 * Fill an encoder sized by spdu_bindings_budget() until FLEET_ERR_LIMIT and
 * check the finished message against @p max_msg_bytes; net-snmp must parse it.
 */
static void
ts_fill_to_limit(size_t max_msg_bytes, const uint8_t *community, size_t community_len, int32_t request_id,
                 int use_raw)
{
    size_t cap = max_msg_bytes + SPDU_HEADROOM(community_len) + 64;
    uint8_t *buf = malloc(cap), *msg, raw[512];
    size_t budget = spdu_bindings_budget(max_msg_bytes, community_len, request_id);
    size_t len, refused = 0, raw_len = 0;
    struct spdu_encoder e;
    enum fleet_err rc;
    netsnmp_pdu *pdu;

    assert_non_null(buf);
    assert_true(budget > 0);
    spdu_enc_init(&e, buf, cap, SPDU_HEADROOM(community_len), budget);
    do {
        struct spdu_value v;
        struct oid name;
        size_t before = e.pos;
        uint32_t j;

        /* Varbinds of assorted sizes (16..~330 bytes), like a GETBULK over mixed columns. */
        name.len = 8 + (uint32_t)(ts_rand64() % 8);
        name.sub[0] = 1;
        name.sub[1] = 3;
        for (j = 2; j < name.len; j++) {
            name.sub[j] = (uint32_t)(ts_rand64() % 300);
        }
        if (ts_rand64() % 4 == 0) {
            v.tag = BER_OCTET_STRING;
            v.v.bytes.ptr = ts_long_str;
            v.v.bytes.len = ts_rand64() % sizeof ts_long_str;
        } else {
            v.tag = BER_COUNTER64;
            v.v.u = ts_rand64();
        }
        if (use_raw && raw_len && ts_rand64() % 2) {
            rc = spdu_enc_raw(&e, raw, raw_len);
            refused = raw_len;
        } else {
            size_t name_len = ber_oid_size(&name);
            size_t value_len = v.tag == BER_OCTET_STRING ? v.v.bytes.len : ber_uint_size(v.v.u);
            size_t seq =
                1 + ber_length_size(name_len) + name_len + 1 + ber_length_size(value_len) + value_len;

            refused = 1 + ber_length_size(seq) + seq;
            rc = spdu_enc_binding(&e, &name, &v);
            if (rc == FLEET_OK) {
                assert_int_equal(e.pos - before, refused);
                if (refused <= sizeof raw) {
                    memcpy(raw, buf + before, refused);
                    raw_len = refused;
                }
            }
        }
        if (rc == FLEET_ERR_LIMIT) {
            assert_int_equal(e.pos, before);
        }
    } while (rc == FLEET_OK);
    assert_int_equal(rc, FLEET_ERR_LIMIT);
    assert_true(e.pos - e.headroom <= budget);
    spdu_enc_finish_message(&e, SPDU_V2C, community, community_len, SPDU_RESPONSE, request_id, SPDU_GEN_ERR,
                            INT32_MAX, &msg, &len);
    if (len > max_msg_bytes) {
        fail_msg("max %zu community %zu: message of %zu bytes", max_msg_bytes, community_len, len);
    }
    /* The varbind that was refused must really not have fitted, give or take the header's slack. */
    if (len + refused + TS_BUDGET_SLACK_BYTES <= max_msg_bytes) {
        fail_msg("max %zu community %zu: message of %zu bytes leaves too much unused", max_msg_bytes,
                 community_len, len);
    }
    pdu = ts_netsnmp_parse(msg, len);
    assert_non_null(pdu);
    assert_int_equal(pdu->reqid, request_id);
    {
        netsnmp_variable_list *var;
        uint32_t count = 0;

        for (var = pdu->variables; var; var = var->next_variable) {
            count++;
        }
        assert_int_equal(count, e.count);
    }
    snmp_free_pdu(pdu);
    free(buf);
}

static void
test_filled_to_budget_stays_within_max_msg_bytes(void **state)
{
    static const size_t maxes[] = {484, 1472, 1500, 8192, 65507, 70000};
    static const int32_t ids[] = {0, -1, 127, INT32_MAX, INT32_MIN};
    uint8_t long_community[200]; /* net-snmp takes at most 256 */
    size_t i, j;

    (void)state;
    memset(long_community, 'c', sizeof long_community);
    memset(ts_long_str, 'a', sizeof ts_long_str);
    for (i = 0; i < sizeof maxes / sizeof maxes[0]; i++) {
        for (j = 0; j < sizeof ids / sizeof ids[0]; j++) {
            ts_fill_to_limit(maxes[i], ts_community, TS_COMMUNITY_LEN, ids[j], (int)(j % 2));
            ts_fill_to_limit(maxes[i], (const uint8_t *)"", 0, ids[j], 0);
            if (maxes[i] > 1000) {
                ts_fill_to_limit(maxes[i], long_community, sizeof long_community, ids[j], 1);
            }
        }
    }
}

/* Bytes of a varbind named 1.3 plus @p extra_subids ones, holding an OCTET STRING of @p len. */
static size_t
ts_string_binding_size(uint32_t extra_subids, size_t len)
{
    size_t name_len = 1 + extra_subids;
    size_t seq = 1 + ber_length_size(name_len) + name_len + 1 + ber_length_size(len) + len;

    return 1 + ber_length_size(seq) + seq;
}

/*
 * Fill the budget to its last byte (random varbinds, then one string sized to
 * close the gap) and finish with the widest error-status and error-index:
 * the message must still fit, and reach max_msg_bytes exactly when every
 * length field takes the size the budget assumed for it.
 */
static void
ts_fill_exact(size_t max_msg_bytes, size_t community_len, int32_t request_id)
{
    size_t cap = max_msg_bytes + SPDU_HEADROOM(community_len);
    size_t budget = spdu_bindings_budget(max_msg_bytes, community_len, request_id);
    uint8_t *buf = malloc(cap), *msg, *community = calloc(1, community_len + 1);
    uint8_t *contents = calloc(1, max_msg_bytes);
    struct spdu_value v = {.tag = BER_OCTET_STRING};
    struct spdu_encoder e;
    struct oid name;
    size_t len, left, slen = 0;
    uint32_t extra = 0;
    netsnmp_pdu *pdu;
    int found = 0;

    assert_non_null(buf);
    assert_non_null(community);
    assert_non_null(contents);
    v.v.bytes.ptr = contents;
    spdu_enc_init(&e, buf, cap, SPDU_HEADROOM(community_len), budget);
    ts_oid(&name, "1.3.6.1.2.1.2.2.1.2.1");
    v.v.bytes.len = 100;
    while (spdu_enc_binding(&e, &name, &v) == FLEET_OK) {
    }
    left = budget - (e.pos - e.headroom);
    for (extra = 0; extra < 8 && !found; extra++) {
        for (slen = left; slen + 1 > 0 && !found; slen--) {
            found = ts_string_binding_size(extra, slen) == left;
            if (found || slen == 0) {
                break;
            }
        }
        if (found) {
            break;
        }
    }
    assert_true(found);
    name.len = 2 + extra;
    memset(name.sub + 2, 0, extra * sizeof name.sub[0]);
    v.v.bytes.len = slen;
    assert_int_equal(spdu_enc_binding(&e, &name, &v), FLEET_OK);
    assert_int_equal(e.pos - e.headroom, budget);
    spdu_enc_finish_message(&e, SPDU_V2C, community, community_len, SPDU_GETBULK, request_id, INT32_MIN,
                            INT32_MAX, &msg, &len);
    if (len > max_msg_bytes) {
        fail_msg("max %zu: message of %zu bytes", max_msg_bytes, len);
    }
    if (ber_length_size(budget) == ber_length_size(max_msg_bytes) && len != max_msg_bytes) {
        fail_msg("max %zu: message of %zu bytes, the budget held bytes back", max_msg_bytes, len);
    }
    pdu = ts_netsnmp_parse(msg, len);
    assert_non_null(pdu);
    assert_int_equal(pdu->max_repetitions, INT32_MAX);
    snmp_free_pdu(pdu);
    free(contents);
    free(community);
    free(buf);
}

static void
test_budget_filled_exactly_gives_max_msg_bytes(void **state)
{
    static const size_t maxes[] = {120, 127, 128, 255, 256, 484, 1472, 65507, 65535, 65536, 70000};
    static const int32_t ids[] = {0, INT32_MIN, 300};
    size_t i, j;

    (void)state;
    for (i = 0; i < sizeof maxes / sizeof maxes[0]; i++) {
        for (j = 0; j < sizeof ids / sizeof ids[0]; j++) {
            ts_fill_exact(maxes[i], TS_COMMUNITY_LEN, ids[j]);
            ts_fill_exact(maxes[i], 0, ids[j]);
        }
    }
}

static void
test_budget_is_zero_when_header_cannot_fit(void **state)
{
    (void)state;
    assert_int_equal(spdu_bindings_budget(0, 0, 0), 0);
    assert_int_equal(spdu_bindings_budget(20, 0, 0), 0);
    assert_int_equal(spdu_bindings_budget(300, 300, 0), 0);
    assert_true(spdu_bindings_budget(484, 6, 0) > 400);
    /* Huge limits are clamped to SNMP's msgMaxSize range instead of overflowing the length fields. */
    assert_true(spdu_bindings_budget(SIZE_MAX, 6, 0) < 2147483647u);
}

static void
test_encoder_refuses_past_buffer_and_writes_nothing(void **state)
{
    uint8_t buf[SPDU_HEADROOM(TS_COMMUNITY_LEN) + 40];
    struct spdu_value v = {.tag = BER_OCTET_STRING, .v.bytes = {ts_long_str, 30}};
    struct spdu_encoder e;
    struct oid name;

    (void)state;
    ts_oid(&name, "1.3.6.1.2.1.1.1.0");
    /* A generous budget: the buffer is the tighter limit here. */
    spdu_enc_init(&e, buf, sizeof buf, SPDU_HEADROOM(TS_COMMUNITY_LEN), 10000);
    assert_int_equal(spdu_enc_binding(&e, &name, &v), FLEET_ERR_LIMIT);
    assert_int_equal(e.pos, e.headroom);
    assert_int_equal(e.count, 0);
    v.v.bytes.len = 10;
    assert_int_equal(spdu_enc_binding(&e, &name, &v), FLEET_OK);
    assert_int_equal(spdu_enc_binding(&e, &name, &v), FLEET_ERR_LIMIT);
    assert_int_equal(e.count, 1);
    assert_int_equal(spdu_enc_raw(&e, buf, 40), FLEET_ERR_LIMIT);
    assert_int_equal(e.count, 1);
}

static void
test_encoder_refuses_invalid_values(void **state)
{
    uint8_t buf[256];
    struct spdu_value ip3 = {.tag = BER_IPADDRESS, .v.bytes = {ts_ip, 3}};
    struct spdu_value c32 = {.tag = BER_COUNTER32, .v.u = 1ull << 32};
    struct spdu_value bad = {.tag = 0x47};
    struct spdu_encoder e;
    struct oid name;

    (void)state;
    ts_oid(&name, "1.3.6.1.2.1.1.1.0");
    spdu_enc_init(&e, buf, sizeof buf, SPDU_HEADROOM(0), sizeof buf);
    assert_int_equal(spdu_enc_binding(&e, &name, &ip3), FLEET_ERR_INVAL);
    assert_int_equal(spdu_enc_binding(&e, &name, &c32), FLEET_ERR_INVAL);
    assert_int_equal(spdu_enc_binding(&e, &name, &bad), FLEET_ERR_INVAL);
    assert_int_equal(e.pos, e.headroom);
}

static void
test_reset_drops_written_bindings(void **state)
{
    uint8_t buf[512], *msg;
    struct spdu_value v = {.tag = BER_INTEGER, .v.i = 1};
    struct spdu_encoder e;
    struct spdu_message m;
    struct oid name;
    size_t len;

    (void)state;
    ts_oid(&name, "1.3.6.1.2.1.1.7.0");
    spdu_enc_init(&e, buf, sizeof buf, SPDU_HEADROOM(TS_COMMUNITY_LEN), 400);
    assert_int_equal(spdu_enc_binding(&e, &name, &v), FLEET_OK);
    assert_int_equal(spdu_enc_binding(&e, &name, &v), FLEET_OK);
    spdu_enc_reset(&e);
    spdu_enc_finish_message(&e, SPDU_V2C, ts_community, TS_COMMUNITY_LEN, SPDU_RESPONSE, 5, SPDU_TOO_BIG, 0,
                            &msg, &len);
    assert_int_equal(spdu_message_decode(msg, len, &m), FLEET_OK);
    assert_int_equal(m.pdu.binding_count, 0);
    assert_int_equal(m.pdu.error_status, SPDU_TOO_BIG);
}

static void
test_raw_echo_of_request_bindings_parses_with_netsnmp(void **state)
{
    struct ts_request rq = {.command = SNMP_MSG_SET, .with_values = 1};
    uint8_t req[TS_BUF_BYTES], buf[TS_BUF_BYTES], *msg;
    struct ts_case c[TS_MAX_CASES];
    size_t n = ts_cases(c), len, i = 0;
    netsnmp_pdu *pdu = ts_netsnmp_request(&rq, c, n);
    struct spdu_binding_iter it;
    struct spdu_encoder e;
    struct spdu_binding b;
    struct spdu_message m;
    netsnmp_variable_list *var;

    (void)state;
    len = ts_netsnmp_build(pdu, SNMP_VERSION_2c, 0, req, sizeof req);
    snmp_free_pdu(pdu);
    assert_int_equal(spdu_message_decode(req, len, &m), FLEET_OK);
    spdu_enc_init(&e, buf, sizeof buf, SPDU_HEADROOM(TS_COMMUNITY_LEN), sizeof buf);
    spdu_binding_iter_init(&it, &m.pdu);
    while (spdu_binding_next(&it, &b) == FLEET_OK) {
        assert_int_equal(spdu_enc_raw(&e, b.raw, b.raw_len), FLEET_OK);
    }
    spdu_enc_finish_message(&e, SPDU_V2C, ts_community, TS_COMMUNITY_LEN, SPDU_RESPONSE, m.pdu.request_id, 0,
                            0, &msg, &len);
    pdu = ts_netsnmp_parse(msg, len);
    assert_non_null(pdu);
    for (var = pdu->variables; var; var = var->next_variable) {
        ts_assert_netsnmp_var(var, &c[i++]);
    }
    assert_int_equal(i, n);
    snmp_free_pdu(pdu);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_response_of_every_type_parses_with_netsnmp),
        cmocka_unit_test(test_response_of_every_type_round_trips_through_our_decoder),
        cmocka_unit_test(test_error_status_and_index_reach_netsnmp),
        cmocka_unit_test(test_finished_pdu_parses_with_netsnmp_pdu_parser),
        cmocka_unit_test(test_get_built_by_netsnmp_decodes),
        cmocka_unit_test(test_getnext_built_by_netsnmp_decodes),
        cmocka_unit_test(test_getbulk_built_by_netsnmp_decodes_with_repeaters),
        cmocka_unit_test(test_set_built_by_netsnmp_decodes_every_value),
        cmocka_unit_test(test_truncated_at_every_length_is_refused),
        cmocka_unit_test(test_truncated_pdu_is_refused),
        cmocka_unit_test(test_random_bit_flips_never_crash),
        cmocka_unit_test(test_random_bytes_never_crash),
        cmocka_unit_test(test_malformed_varbinds_are_refused),
        cmocka_unit_test(test_message_level_malformations_are_refused),
        cmocka_unit_test(test_request_id_beyond_int32_is_refused),
        cmocka_unit_test(test_binding_count_limit),
        cmocka_unit_test(test_filled_to_budget_stays_within_max_msg_bytes),
        cmocka_unit_test(test_budget_filled_exactly_gives_max_msg_bytes),
        cmocka_unit_test(test_budget_is_zero_when_header_cannot_fit),
        cmocka_unit_test(test_encoder_refuses_past_buffer_and_writes_nothing),
        cmocka_unit_test(test_encoder_refuses_invalid_values),
        cmocka_unit_test(test_reset_drops_written_bindings),
        cmocka_unit_test(test_raw_echo_of_request_bindings_parses_with_netsnmp),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
