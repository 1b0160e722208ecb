/*
 * One SNMP request in, one response out, on a one-device fleet (devfix.h):
 * requests are built with the project's own encoder (spdu.h) and the
 * responses decoded with it. Communities, SET access, malformed input,
 * GETBULK repetitions and the size limit (tooBig), with the counters each
 * case moves.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "devfix.h"
#include "respond.h"
#include "spdu.h"

#define IF_ENTRY 1, 3, 6, 1, 2, 1, 2, 2, 1
#define OUT_CAP  (65536 + 256)

/* A fixture plus the buffers respond() needs. */
struct rfix {
    struct devfix *f;                /* the device */
    struct respond_scratch *scratch; /* as a worker lends it (agent.c) */
    uint8_t req[65536];              /* the request being built */
    size_t req_len;                  /* its length */
    uint8_t out[OUT_CAP];            /* response buffer */
    uint8_t *reply;                  /* where the response starts */
    struct spdu_message m;           /* the decoded response */
};

static int
setup(void **state)
{
    struct rfix *r = calloc(1, sizeof *r);

    assert_non_null(r);
    r->f = devfix_new("minimal");
    assert_non_null(r->scratch = malloc(sizeof *r->scratch));
    *state = r;
    return 0;
}

static int
teardown(void **state)
{
    struct rfix *r = *state;

    free(r->scratch);
    devfix_free(r->f);
    free(r);
    return 0;
}

/* Build a request of @p count varbinds (NULL values unless @p values) into r->req. */
static void
build(struct rfix *r, int version, const char *community, uint8_t type, int32_t request_id, int32_t es,
      int32_t ei, const struct oid *names, const struct spdu_value *values, uint32_t count)
{
    static uint8_t buf[65536];
    struct spdu_encoder e;
    struct spdu_value null = {.tag = BER_NULL};
    uint8_t *msg;
    size_t len;

    spdu_enc_init(&e, buf, sizeof buf, SPDU_HEADROOM(strlen(community)), sizeof buf - 512);
    for (uint32_t i = 0; i < count; i++) {
        assert_int_equal(spdu_enc_binding(&e, &names[i], values ? &values[i] : &null), FLEET_OK);
    }
    spdu_enc_finish_message(&e, version, (const uint8_t *)community, strlen(community), type, request_id, es,
                            ei, &msg, &len);
    assert_true(len <= sizeof r->req);
    memcpy(r->req, msg, len);
    r->req_len = len;
}

/* Send r->req; @return the response's length, decoded into r->m when not 0. */
static size_t
send_req(struct rfix *r)
{
    size_t len =
        respond(&r->f->dev, r->scratch, r->req, r->req_len, NULL, r->out, sizeof r->out, 0, &r->reply);

    if (len) {
        assert_int_equal(spdu_message_decode(r->reply, len, &r->m), FLEET_OK);
        assert_int_equal(r->m.pdu.type, SPDU_RESPONSE);
    }
    return len;
}

/* The response's varbinds, at most @p max, into @p b. @return How many. */
static uint32_t
bindings(struct rfix *r, struct spdu_binding *b, uint32_t max)
{
    struct spdu_binding_iter it;
    uint32_t n = 0;

    spdu_binding_iter_init(&it, &r->m.pdu);
    while (n < max && spdu_binding_next(&it, &b[n]) == FLEET_OK) {
        n++;
    }
    assert_int_equal(n, r->m.pdu.binding_count);
    return n;
}

static void
test_get_right_community(void **state)
{
    struct rfix *r = *state;
    struct oid names[2] = {OID(1, 3, 6, 1, 2, 1, 1, 3, 0), OID(IF_ENTRY, 2, 1)};
    struct spdu_binding b[4];
    const char *if1 = r->f->type.profile->ifs[0].name;

    build(r, SPDU_V2C, "public", SPDU_GET, 4711, 0, 0, names, NULL, 2);
    assert_true(send_req(r) > 0);
    assert_int_equal(r->m.version, SPDU_V2C);
    assert_int_equal(r->m.community_len, 6);
    assert_memory_equal(r->m.community, "public", 6);
    assert_int_equal(r->m.pdu.request_id, 4711);
    assert_int_equal(r->m.pdu.error_status, SPDU_NO_ERROR);
    assert_int_equal(bindings(r, b, 4), 2);
    assert_oid_equal(&b[0].name, &names[0]);
    assert_int_equal(b[0].value.tag, BER_TIMETICKS);
    assert_int_equal(b[0].value.v.u, (DEVFIX_NOW_MS - devview_boot_ms(&r->f->dev)) / 10);
    assert_int_equal(b[1].value.tag, BER_OCTET_STRING);
    assert_int_equal(b[1].value.v.bytes.len, strlen(if1));
    assert_memory_equal(b[1].value.v.bytes.ptr, if1, strlen(if1));
    assert_int_equal(r->f->dev.snmp_stats.in_pkts, 1);
    assert_int_equal(r->f->dev.snmp_stats.out_pkts, 1);
    assert_int_equal(r->f->dev.snmp_stats.in_get_requests, 1);
    /* The write community may read too. */
    build(r, SPDU_V1, "private", SPDU_GET, 2, 0, 0, names, NULL, 1);
    assert_true(send_req(r) > 0);
    assert_int_equal(r->m.version, SPDU_V1);
    assert_int_equal(r->m.pdu.error_status, SPDU_NO_ERROR);
}

static void
test_wrong_community_no_answer(void **state)
{
    struct rfix *r = *state;
    struct oid name = OID(1, 3, 6, 1, 2, 1, 1, 3, 0);

    build(r, SPDU_V2C, "publi", SPDU_GET, 1, 0, 0, &name, NULL, 1);
    assert_int_equal(send_req(r), 0);
    build(r, SPDU_V2C, "publicx", SPDU_GET, 1, 0, 0, &name, NULL, 1);
    assert_int_equal(send_req(r), 0);
    assert_int_equal(r->f->dev.snmp_stats.in_bad_community_names, 2);
    assert_int_equal(r->f->dev.snmp_stats.out_pkts, 0);
    assert_int_equal(r->f->dev.snmp_stats.in_get_requests, 0);
}

static void
test_set_with_read_community_no_access(void **state)
{
    struct rfix *r = *state;
    struct oid name = OID(1, 3, 6, 1, 2, 1, 1, 4, 0); /* sysContact.0 */
    struct spdu_value val = {.tag = BER_OCTET_STRING, .v.bytes = {(const uint8_t *)"noc@x", 5}};
    struct spdu_binding b[2];

    build(r, SPDU_V2C, "public", SPDU_SET, 9, 0, 0, &name, &val, 1);
    assert_true(send_req(r) > 0);
    assert_int_equal(r->m.pdu.error_status, SPDU_NO_ACCESS);
    assert_int_equal(r->m.pdu.error_index, 1);
    assert_int_equal(bindings(r, b, 2), 1);
    assert_int_equal(b[0].value.tag, BER_OCTET_STRING);
    assert_memory_equal(b[0].value.v.bytes.ptr, "noc@x", 5);
    assert_int_equal(r->f->dev.snmp_stats.in_bad_community_uses, 1);
    assert_int_equal(r->f->dev.ds.own[DS_RUNNING], 0); /* nothing written */
    /* SNMPv1 maps noAccess to noSuchName. */
    build(r, SPDU_V1, "public", SPDU_SET, 10, 0, 0, &name, &val, 1);
    assert_true(send_req(r) > 0);
    assert_int_equal(r->m.pdu.error_status, SPDU_NO_SUCH_NAME);
    assert_int_equal(r->f->dev.snmp_stats.in_bad_community_uses, 2);
}

static void
test_set_with_write_community(void **state)
{
    struct rfix *r = *state;
    struct oid name = OID(1, 3, 6, 1, 2, 1, 1, 4, 0); /* sysContact.0 */
    struct spdu_value val = {.tag = BER_OCTET_STRING, .v.bytes = {(const uint8_t *)"noc@x", 5}};
    struct spdu_binding b[2];

    build(r, SPDU_V2C, "private", SPDU_SET, 11, 0, 0, &name, &val, 1);
    assert_true(send_req(r) > 0);
    assert_int_equal(r->m.pdu.error_status, SPDU_NO_ERROR);
    assert_int_equal(r->f->dev.snmp_stats.in_set_requests, 1);
    assert_int_equal(r->f->dev.snmp_stats.in_bad_community_uses, 0);
    build(r, SPDU_V2C, "public", SPDU_GET, 12, 0, 0, &name, NULL, 1);
    assert_true(send_req(r) > 0);
    assert_int_equal(bindings(r, b, 2), 1);
    assert_int_equal(b[0].value.tag, BER_OCTET_STRING);
    assert_int_equal(b[0].value.v.bytes.len, 5);
    assert_memory_equal(b[0].value.v.bytes.ptr, "noc@x", 5);
}

static void
test_malformed_counts_parse_error(void **state)
{
    struct rfix *r = *state;
    struct oid name = OID(1, 3, 6, 1, 2, 1, 1, 3, 0);
    static const uint8_t garbage[] = {0x30, 0x82, 0xff, 0xff, 0x02, 0x01};
    uint8_t copy[sizeof garbage];

    build(r, SPDU_V2C, "public", SPDU_GET, 1, 0, 0, &name, NULL, 1);
    r->req_len -= 5; /* truncated */
    assert_int_equal(send_req(r), 0);
    assert_int_equal(r->f->dev.snmp_stats.in_asn_parse_errs, 1);
    memcpy(copy, garbage, sizeof copy);
    assert_int_equal(
        respond(&r->f->dev, r->scratch, copy, sizeof copy, NULL, r->out, sizeof r->out, 0, &r->reply), 0);
    assert_int_equal(r->f->dev.snmp_stats.in_asn_parse_errs, 2);
    assert_int_equal(r->f->dev.snmp_stats.in_pkts, 2);
    assert_int_equal(r->f->dev.snmp_stats.out_pkts, 0);
}

static void
test_getbulk_max_repetitions(void **state)
{
    struct rfix *r = *state;
    uint32_t n = r->f->type.profile->if_count;
    struct oid names[2] = {OID(1, 3, 6, 1, 2, 1, 1, 3), OID(IF_ENTRY, 2)};
    struct spdu_binding b[32];
    struct oid want;

    /* One non-repeater, ifDescr repeated 3 times. */
    build(r, SPDU_V2C, "public", SPDU_GETBULK, 5, 1, 3, names, NULL, 2);
    assert_true(send_req(r) > 0);
    assert_int_equal(r->m.pdu.error_status, SPDU_NO_ERROR);
    assert_int_equal(bindings(r, b, 32), 1 + 3);
    want = OID(1, 3, 6, 1, 2, 1, 1, 3, 0);
    assert_oid_equal(&b[0].name, &want);
    for (uint32_t i = 1; i <= 3; i++) {
        want = OID(IF_ENTRY, 2, i);
        assert_oid_equal(&b[i].name, &want);
    }
    /* More repetitions than rows: the walk goes on into the next column. */
    build(r, SPDU_V2C, "public", SPDU_GETBULK, 6, 1, (int32_t)n + 2, names, NULL, 2);
    assert_true(send_req(r) > 0);
    assert_int_equal(bindings(r, b, 32), 1 + n + 2);
    want = OID(IF_ENTRY, 2, n);
    assert_oid_equal(&b[n].name, &want);
    want = OID(IF_ENTRY, 3, 1);
    assert_oid_equal(&b[n + 1].name, &want);
    want = OID(IF_ENTRY, 3, 2);
    assert_oid_equal(&b[n + 2].name, &want);
    /* max-repetitions 0: only the non-repeater. */
    build(r, SPDU_V2C, "public", SPDU_GETBULK, 7, 1, 0, names, NULL, 2);
    assert_true(send_req(r) > 0);
    assert_int_equal(bindings(r, b, 32), 1);
    assert_int_equal(r->f->dev.snmp_stats.in_get_bulks, 3);
    /* SNMPv1 has no GETBULK: dropped. */
    build(r, SPDU_V1, "public", SPDU_GETBULK, 8, 1, 3, names, NULL, 2);
    assert_int_equal(send_req(r), 0);
    assert_int_equal(r->f->dev.snmp_stats.silent_drops, 1);
}

static void
test_too_big(void **state)
{
    struct rfix *r = *state;
    struct oid names[40];
    size_t len;

    for (uint32_t i = 0; i < 40; i++) {
        names[i] = OID(1, 3, 6, 1, 2, 1, 1, 1, 0); /* sysDescr.0, 40 times */
    }
    r->f->group.cfg.snmp_max_msg_bytes = 484;
    build(r, SPDU_V2C, "public", SPDU_GET, 13, 0, 0, names, NULL, 40);
    assert_true((len = send_req(r)) > 0);
    assert_true(len <= 484);
    assert_int_equal(r->m.pdu.error_status, SPDU_TOO_BIG);
    assert_int_equal(r->m.pdu.binding_count, 0);
    assert_int_equal(r->f->dev.snmp_stats.out_too_bigs, 1);
    /* The same request fits a larger limit. */
    r->f->group.cfg.snmp_max_msg_bytes = 8192;
    assert_true((len = send_req(r)) > 484);
    assert_int_equal(r->m.pdu.error_status, SPDU_NO_ERROR);
    assert_int_equal(r->m.pdu.binding_count, 40);
    assert_int_equal(r->f->dev.snmp_stats.out_too_bigs, 1);
    /* GETBULK is cut at the limit instead. */
    r->f->group.cfg.snmp_max_msg_bytes = 484;
    names[0] = OID(IF_ENTRY);
    build(r, SPDU_V2C, "public", SPDU_GETBULK, 14, 0, 100, names, NULL, 1);
    assert_true((len = send_req(r)) > 0);
    assert_true(len <= 484);
    assert_int_equal(r->m.pdu.error_status, SPDU_NO_ERROR);
    assert_true(r->m.pdu.binding_count > 1 && r->m.pdu.binding_count < 100);
}

static void
test_v1_get_missing_is_no_such_name(void **state)
{
    struct rfix *r = *state;
    struct oid names[2] = {OID(1, 3, 6, 1, 2, 1, 1, 3, 0), OID(1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 6, 1)};
    struct spdu_binding b[2];

    build(r, SPDU_V1, "public", SPDU_GET, 15, 0, 0, names, NULL, 2);
    assert_true(send_req(r) > 0);
    assert_int_equal(r->m.pdu.error_status, SPDU_NO_SUCH_NAME);
    assert_int_equal(r->m.pdu.error_index, 2);
    assert_int_equal(bindings(r, b, 2), 2);
    assert_int_equal(b[1].value.tag, BER_NULL); /* echoed */
    /* v2c gets the Counter64 itself. */
    build(r, SPDU_V2C, "public", SPDU_GET, 16, 0, 0, names, NULL, 2);
    assert_true(send_req(r) > 0);
    assert_int_equal(r->m.pdu.error_status, SPDU_NO_ERROR);
    assert_int_equal(bindings(r, b, 2), 2);
    assert_int_equal(b[1].value.tag, BER_COUNTER64);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int
main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_get_right_community),
        T(test_wrong_community_no_answer),
        T(test_set_with_read_community_no_access),
        T(test_set_with_write_community),
        T(test_malformed_counts_parse_error),
        T(test_getbulk_max_repetitions),
        T(test_too_big),
        T(test_v1_get_missing_is_no_such_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
