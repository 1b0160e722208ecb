/*
 * Unit tests of the SNMPv2c trap and inform sender (testtool/notify/trap.c).
 * Messages are checked with net-snmp's library as the oracle (snmp_parse:
 * PDU type, varbind order and values). Inform retries, acknowledgements,
 * give-ups and the table limit run on a fake clock, against a UDP socket on
 * 127.0.0.1 that plays the collector (it answers or stays silent); both
 * counter identities are checked after every step. The last test sends to
 * net-snmp's snmptrapd, started on a random loopback port below 32000 and
 * stopped with SIGTERM at the end. Every wait is bounded (times
 * FLEETSIM_TIMEOUT_MULTIPLIER), and each test ends with no timer armed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <net-snmp/net-snmp-config.h>

#include <net-snmp/net-snmp-includes.h>

#include "loop.h"
#include "spdu.h"
#include "trap.h"

/* Descriptors the test loops index. */
#define TT_MAX_FDS 1024
/* How long the sink waits for a datagram that must come (times the multiplier). */
#define TT_RECV_WAIT_MS 2000
/* How long the sink waits to be sure nothing comes (a datagram on loopback arrives in microseconds). */
#define TT_SILENCE_MS 50
/* Real time the loop may wait for a datagram the test just sent to the sender. */
#define TT_LOOP_IO_WAIT_MS 200
/* Inform timeout and retries of the fake-clock tests (the defaults of --trap-inform-*). */
#define TT_TIMEOUT_MS 1000
#define TT_RETRIES    3
/* Device addresses the tests send from (all of 127.0.0.0/8 is local on Linux). */
#define TT_DEV_A 0x7f000002u /* 127.0.0.2 */
#define TT_DEV_B 0x7f000003u /* 127.0.0.3 */
/* An address no interface has (TEST-NET-1): sending from it must fail. */
#define TT_FOREIGN_ADDR 0xc0000201u /* 192.0.2.1 */
/* A device known by its address only: the sender's socket, no identity objects. */
#define TT_FROM(a) (&(struct trap_origin){.addr = (a), .fd = -1, .name = NULL})
/* Largest datagram the sink reads. */
#define TT_RX_BYTES 4096
/* Traps of the batch test: more than one TRAP_BATCH. */
#define TT_BATCH_TRAPS 100
/* Ports tried for sockets and snmptrapd: random in [TT_PORT_MIN, TT_PORT_MAX). */
#define TT_PORT_MIN 20000
#define TT_PORT_MAX 32000
/* Attempts to find a free port. */
#define TT_PORT_TRIES 20
/* snmptrapd: readiness and exit bounds (times the multiplier), and its output's size cap. */
#define TT_TRAPD_READY_MS 10000
#define TT_TRAPD_EXIT_MS  5000
#define TT_TRAPD_ACK_MS   5000
#define TT_TRAPD_OUT_MAX  (256 * 1024)

static const char tt_linkdown[] = "1.3.6.1.6.3.1.1.5.3";
static const char tt_linkup[] = "1.3.6.1.6.3.1.1.5.4";

/* The fake clock the loop reads. */
static monotime_us tt_now_us;

static monotime_us
tt_fake_clock(void)
{
    return tt_now_us;
}

static int
tt_multiplier(void)
{
    const char *m = getenv("FLEETSIM_TIMEOUT_MULTIPLIER");
    int v = m ? atoi(m) : 1;

    return v > 0 ? v : 1;
}

static uint16_t
tt_random_port(void)
{
    return (uint16_t)(TT_PORT_MIN + (uint32_t)rand() % (TT_PORT_MAX - TT_PORT_MIN));
}

/* Per-test state: a loop on the fake clock and a collector socket on 127.0.0.1. */
struct tt_state {
    struct loop *loop;          /* fresh per test */
    struct trap_sender *sender; /* the sender under test, freed by the teardown */
    int sink_fd;                /* the collector's socket */
    struct trap_sink sink;      /* its address */
    uint8_t rx[TT_RX_BYTES];    /* last datagram the sink read */
    size_t rx_len;              /* its bytes */
    struct sockaddr_in rx_from; /* who sent it */
};

static int
tt_bind_sink(struct trap_sink *sink)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

    assert_true(fd >= 0);
    for (int i = 0; i < TT_PORT_TRIES; i++) {
        uint16_t port = tt_random_port();
        struct sockaddr_in sa = {
            .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
            netaddr_endpoint_set(&sink->ep, (struct sockaddr *)&sa, sizeof sa);
            return fd;
        }
    }
    fail_msg("no free loopback port in [%d, %d)", TT_PORT_MIN, TT_PORT_MAX);
    return -1;
}

static int
tt_setup(void **state)
{
    struct tt_state *st = calloc(1, sizeof *st);

    assert_non_null(st);
    st->loop = loop_new(TT_MAX_FDS);
    assert_non_null(st->loop);
    tt_now_us = 1000000;
    loop_set_clock(st->loop, tt_fake_clock);
    st->sink_fd = tt_bind_sink(&st->sink);
    *state = st;
    return 0;
}

static int
tt_teardown(void **state)
{
    struct tt_state *st = *state;

    trap_sender_free(st->sender);
    assert_int_equal(loop_timer_count(st->loop), 0);
    loop_free(st->loop);
    close(st->sink_fd);
    free(st);
    return 0;
}

static struct trap_sender *
tt_sender(struct tt_state *st, int inform, uint32_t max_pending)
{
    struct trap_sender_config cfg = {
        .inform = inform,
        .timeout_ms = TT_TIMEOUT_MS,
        .retries = TT_RETRIES,
        .max_pending = max_pending,
        .community = "public",
        .request_id_seed = 7,
    };
    char err[256] = "";

    assert_int_equal(trap_sender_new(st->loop, &cfg, &st->sender, err, sizeof err), FLEET_OK);
    assert_non_null(st->sender);
    return st->sender;
}

static void
tt_assert_row(const struct trap_counters *row, uint64_t emitted, uint64_t sent, uint64_t failures,
              uint64_t dropped, uint64_t acked, uint64_t timed_out, uint64_t retries, uint64_t pending)
{
    if (row->ledger.emitted != emitted || ledger_sent(&row->ledger) != sent ||
        row->ledger.send_failures != failures || row->ledger.dropped != dropped ||
        row->acknowledged != acked || row->timed_out != timed_out || row->retries != retries ||
        row->pending != pending) {
        print_error(
            "expected emitted %lu sent %lu failures %lu dropped %lu acked %lu timed_out %lu retries %lu "
            "pending %lu\n",
            (unsigned long)emitted, (unsigned long)sent, (unsigned long)failures, (unsigned long)dropped,
            (unsigned long)acked, (unsigned long)timed_out, (unsigned long)retries, (unsigned long)pending);
        print_error(
            "got      emitted %lu sent %lu failures %lu dropped %lu acked %lu timed_out %lu retries %lu "
            "pending %lu\n",
            (unsigned long)row->ledger.emitted, (unsigned long)ledger_sent(&row->ledger),
            (unsigned long)row->ledger.send_failures, (unsigned long)row->ledger.dropped,
            (unsigned long)row->acknowledged, (unsigned long)row->timed_out, (unsigned long)row->retries,
            (unsigned long)row->pending);
        fail();
    }
    assert_true(trap_counters_consistent(row));
}

/* Run loop iterations until nothing is due (the fake clock stands still), then check the identities. */
static void
tt_spin(struct tt_state *st, const struct trap_counters *row)
{
    for (int i = 0; i < 4; i++) {
        loop_run_once(st->loop, 0);
        if (row) {
            assert_true(trap_counters_consistent(row));
        }
    }
}

/* Move the fake clock on and run what became due. */
static void
tt_advance_ms(struct tt_state *st, uint32_t ms, const struct trap_counters *row)
{
    tt_now_us += (monotime_us)ms * 1000;
    tt_spin(st, row);
}

/* Wait (bounded) for one datagram at the sink; 0 when none came within @p wait_ms. */
static int
tt_sink_recv(struct tt_state *st, int wait_ms)
{
    struct pollfd pfd = {.fd = st->sink_fd, .events = POLLIN};
    socklen_t from_len = sizeof st->rx_from;
    ssize_t n;

    if (poll(&pfd, 1, wait_ms) <= 0) {
        return 0;
    }
    n = recvfrom(st->sink_fd, st->rx, sizeof st->rx, MSG_DONTWAIT, (struct sockaddr *)&st->rx_from,
                 &from_len);
    assert_true(n > 0);
    st->rx_len = (size_t)n;
    return 1;
}

static void
tt_sink_expect(struct tt_state *st)
{
    if (!tt_sink_recv(st, TT_RECV_WAIT_MS * tt_multiplier())) {
        fail_msg("the sink received nothing within %d ms", TT_RECV_WAIT_MS * tt_multiplier());
    }
}

static void
tt_sink_expect_silence(struct tt_state *st)
{
    if (tt_sink_recv(st, TT_SILENCE_MS)) {
        fail_msg("the sink received an unexpected datagram of %zu bytes", st->rx_len);
    }
}

/* Decode what the sink read with our decoder; returns its request-id and checks the PDU type. */
static int32_t
tt_sink_request_id(const struct tt_state *st, uint8_t want_type)
{
    struct spdu_message msg;

    assert_int_equal(spdu_message_decode(st->rx, st->rx_len, &msg), FLEET_OK);
    assert_int_equal(msg.version, SPDU_V2C);
    assert_int_equal(msg.pdu.type, want_type);
    return msg.pdu.request_id;
}

/* Answer what the sink read with a Response echoing its varbinds, from @p fd (the sink's or another). */
static void
tt_sink_answer_from(struct tt_state *st, int fd, int32_t request_id)
{
    struct spdu_message msg;
    struct spdu_binding_iter it;
    struct spdu_binding b;
    struct spdu_encoder e;
    uint8_t buf[TRAP_MAX_MSG_BYTES + SPDU_HEADROOM(16)];
    uint8_t *out;
    size_t out_len;

    assert_int_equal(spdu_message_decode(st->rx, st->rx_len, &msg), FLEET_OK);
    spdu_enc_init(&e, buf, sizeof buf, SPDU_HEADROOM(6), TRAP_MAX_MSG_BYTES);
    spdu_binding_iter_init(&it, &msg.pdu);
    while (spdu_binding_next(&it, &b) == FLEET_OK) {
        assert_int_equal(spdu_enc_raw(&e, b.raw, b.raw_len), FLEET_OK);
    }
    spdu_enc_finish_message(&e, SPDU_V2C, (const uint8_t *)"public", 6, SPDU_RESPONSE, request_id, 0, 0, &out,
                            &out_len);
    assert_int_equal(sendto(fd, out, out_len, 0, (const struct sockaddr *)&st->rx_from, sizeof st->rx_from),
                     (ssize_t)out_len);
}

/* Let the loop read what was just sent to the sender (the fake clock does not move). */
static void
tt_loop_read(struct tt_state *st)
{
    loop_run_once(st->loop, TT_LOOP_IO_WAIT_MS * tt_multiplier());
}

/* Parse what the sink read with net-snmp. Free with snmp_free_pdu(). */
static netsnmp_pdu *
tt_netsnmp_parse(const struct tt_state *st)
{
    netsnmp_session sess;
    netsnmp_pdu *pdu = snmp_pdu_create(SNMP_MSG_GET);
    u_char *copy = malloc(st->rx_len);

    assert_non_null(pdu);
    assert_non_null(copy);
    memcpy(copy, st->rx, st->rx_len);
    snmp_sess_init(&sess);
    if (snmp_parse(NULL, &sess, pdu, copy, st->rx_len) != 0) {
        fail_msg("net-snmp refused the message (%zu bytes)", st->rx_len);
    }
    free(copy);
    return pdu;
}

static void
tt_assert_var_oid_name(const netsnmp_variable_list *var, const char *want)
{
    struct oid o;

    assert_non_null(var);
    assert_int_equal(oid_parse(want, &o), FLEET_OK);
    assert_int_equal(var->name_length, o.len);
    for (uint32_t i = 0; i < o.len; i++) {
        assert_int_equal(var->name[i], o.sub[i]);
    }
}

static void
tt_assert_var_oid_value(const netsnmp_variable_list *var, const char *want)
{
    struct oid o;

    assert_int_equal(var->type, ASN_OBJECT_ID);
    assert_int_equal(oid_parse(want, &o), FLEET_OK);
    assert_int_equal(var->val_len / sizeof(oid), o.len);
    for (uint32_t i = 0; i < o.len; i++) {
        assert_int_equal(var->val.objid[i], o.sub[i]);
    }
}

/* Check a linkUp/linkDown PDU: sysUpTime.0, snmpTrapOID.0, ifIndex.N, ifAdminStatus.N, ifOperStatus.N. */
static void
tt_assert_link_pdu(const netsnmp_pdu *pdu, int command, uint32_t ticks, const char *trap_oid,
                   uint32_t if_index, long admin, long oper)
{
    const netsnmp_variable_list *var = pdu->variables;
    char name[64];

    assert_int_equal(pdu->version, SNMP_VERSION_2c);
    assert_int_equal(pdu->command, command);
    assert_int_equal(pdu->community_len, 6);
    assert_memory_equal(pdu->community, "public", 6);
    tt_assert_var_oid_name(var, "1.3.6.1.2.1.1.3.0");
    assert_int_equal(var->type, ASN_TIMETICKS);
    assert_int_equal((unsigned long)*var->val.integer, ticks);
    var = var->next_variable;
    tt_assert_var_oid_name(var, "1.3.6.1.6.3.1.1.4.1.0");
    tt_assert_var_oid_value(var, trap_oid);
    var = var->next_variable;
    snprintf(name, sizeof name, "1.3.6.1.2.1.2.2.1.1.%u", (unsigned)if_index);
    tt_assert_var_oid_name(var, name);
    assert_int_equal(var->type, ASN_INTEGER);
    assert_int_equal(*var->val.integer, (long)if_index);
    var = var->next_variable;
    snprintf(name, sizeof name, "1.3.6.1.2.1.2.2.1.7.%u", (unsigned)if_index);
    tt_assert_var_oid_name(var, name);
    assert_int_equal(var->type, ASN_INTEGER);
    assert_int_equal(*var->val.integer, admin);
    var = var->next_variable;
    snprintf(name, sizeof name, "1.3.6.1.2.1.2.2.1.8.%u", (unsigned)if_index);
    tt_assert_var_oid_name(var, name);
    assert_int_equal(var->type, ASN_INTEGER);
    assert_int_equal(*var->val.integer, oper);
    assert_null(var->next_variable);
}

/* A device's own agent socket: UDP on 127.0.0.1 and a free random port (a port per device). */
static int
tt_bind_agent(uint16_t *port)
{
    struct trap_sink where;
    int fd = tt_bind_sink(&where);

    *port = netaddr_endpoint_port(&where.ep);
    return fd;
}

/* Read one datagram that must come to @p fd (bounded); returns its length, @p from its sender. */
static size_t
tt_recv_on(int fd, uint8_t *buf, size_t cap, struct sockaddr_in *from)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    socklen_t from_len = sizeof *from;
    ssize_t n;

    if (poll(&pfd, 1, TT_RECV_WAIT_MS * tt_multiplier()) <= 0) {
        fail_msg("nothing arrived within %d ms", TT_RECV_WAIT_MS * tt_multiplier());
    }
    n = recvfrom(fd, buf, cap, MSG_DONTWAIT, (struct sockaddr *)from, &from_len);
    assert_true(n > 0);
    return (size_t)n;
}

/* The two objects a named origin appends, after @p var: snmpTrapAddress.0 = @p addr, sysName.0 = @p name. */
static void
tt_assert_identity(const netsnmp_variable_list *var, uint32_t addr, const char *name)
{
    uint8_t want[4] = {(uint8_t)(addr >> 24), (uint8_t)(addr >> 16), (uint8_t)(addr >> 8), (uint8_t)addr};

    tt_assert_var_oid_name(var, "1.3.6.1.6.3.18.1.3.0");
    assert_int_equal(var->type, ASN_IPADDRESS);
    assert_int_equal(var->val_len, 4);
    assert_memory_equal(var->val.string, want, 4);
    var = var->next_variable;
    tt_assert_var_oid_name(var, "1.3.6.1.2.1.1.5.0");
    assert_int_equal(var->type, ASN_OCTET_STR);
    assert_int_equal(var->val_len, strlen(name));
    assert_memory_equal(var->val.string, name, strlen(name));
    assert_null(var->next_variable);
}

/* The varbind after the five of a link notification (sysUpTime, snmpTrapOID, ifIndex, admin, oper). */
static const netsnmp_variable_list *
tt_after_link(const netsnmp_pdu *pdu)
{
    const netsnmp_variable_list *var = pdu->variables;

    for (int i = 0; i < 5; i++) {
        assert_non_null(var);
        var = var->next_variable;
    }
    return var;
}

/* ---- trap_sink_parse ---- */

static void
test_sink_parse_accepts_address_and_port(void **state)
{
    struct trap_sink sink;
    char err[256] = "", text[32];

    (void)state;
    assert_int_equal(trap_sink_parse("127.0.0.1:16200", &sink, err, sizeof err), FLEET_OK);
    assert_int_equal(netaddr_endpoint_port(&sink.ep), 16200);
    assert_string_equal(trap_sink_format(&sink, text, sizeof text), "127.0.0.1:16200");
    assert_int_equal(trap_sink_parse("10.1.2.3", &sink, err, sizeof err), FLEET_OK);
    assert_string_equal(trap_sink_format(&sink, text, sizeof text), "10.1.2.3:162");
    assert_int_equal(trap_sink_parse("[::1]:16200", &sink, err, sizeof err), FLEET_OK);
    assert_string_equal(trap_sink_format(&sink, text, sizeof text), "[::1]:16200");
    assert_int_equal(trap_sink_parse("fd5e:f1ee::9", &sink, err, sizeof err), FLEET_OK);
    assert_string_equal(trap_sink_format(&sink, text, sizeof text), "[fd5e:f1ee::9]:162");
}

static void
test_sink_parse_refuses_names_and_bad_ports(void **state)
{
    struct trap_sink sink = {0};
    char err[256] = "";

    (void)state;
    assert_int_equal(trap_sink_parse("collector.example:162", &sink, err, sizeof err), FLEET_ERR_INVAL);
    assert_string_equal(
        err, "trap sink \"collector.example:162\": \"collector.example\" is not an IPv4 or IPv6 "
             "address (names are not resolved; give an address such as 127.0.0.1:162 or [::1]:162)");
    assert_int_equal(trap_sink_parse("localhost", &sink, err, sizeof err), FLEET_ERR_INVAL);
    assert_non_null(strstr(err, "is not an IPv4 or IPv6 address"));
    assert_int_equal(trap_sink_parse("127.0.0.1:0", &sink, err, sizeof err), FLEET_ERR_INVAL);
    assert_non_null(strstr(err, "is not a port (1-65535)"));
    assert_int_equal(trap_sink_parse("127.0.0.1:65536", &sink, err, sizeof err), FLEET_ERR_INVAL);
    assert_int_equal(trap_sink_parse("127.0.0.1:", &sink, err, sizeof err), FLEET_ERR_INVAL);
    assert_int_equal(trap_sink_parse("127.0.0.1:-5", &sink, err, sizeof err), FLEET_ERR_INVAL);
    assert_int_equal(trap_sink_parse("127.0.0.1:16x", &sink, err, sizeof err), FLEET_ERR_INVAL);
    assert_int_equal(trap_sink_parse("127.0.0.1: 162", &sink, err, sizeof err), FLEET_ERR_INVAL);
    assert_int_equal(trap_sink_parse("127.0.0.1:+162", &sink, err, sizeof err), FLEET_ERR_INVAL);
    assert_int_equal(trap_sink_parse(":162", &sink, err, sizeof err), FLEET_ERR_INVAL);
    assert_int_equal(trap_sink_parse("[::1:162", &sink, err, sizeof err), FLEET_ERR_INVAL);
    assert_int_equal(trap_sink_parse("fd5e::zz", &sink, err, sizeof err), FLEET_ERR_INVAL);
    assert_int_equal(netaddr_endpoint_port(&sink.ep), 0); /* untouched on failure */
}

/* ---- traps ---- */

static void
test_link_down_trap_parses_with_netsnmp_from_device_address(void **state)
{
    struct tt_state *st = *state;
    struct trap_sender *s = tt_sender(st, 0, 0);
    struct trap_counters row = {0};
    netsnmp_pdu *pdu;

    assert_int_equal(trap_send_link(s, TT_FROM(TT_DEV_A), &st->sink, 123456, 0, 7, TRAP_IF_STATUS_UP,
                                    TRAP_IF_STATUS_DOWN, &row),
                     FLEET_OK);
    /* Queued, not yet counted: the batch goes out at the next iteration. */
    assert_int_equal(trap_sender_queued(s), 1);
    tt_assert_row(&row, 0, 0, 0, 0, 0, 0, 0, 0);
    tt_spin(st, &row);
    assert_int_equal(trap_sender_queued(s), 0);
    tt_assert_row(&row, 1, 1, 0, 0, 0, 0, 0, 0);
    tt_sink_expect(st);
    assert_int_equal(ntohl(st->rx_from.sin_addr.s_addr), TT_DEV_A);
    assert_int_equal(ntohs(st->rx_from.sin_port), trap_sender_port(s));
    pdu = tt_netsnmp_parse(st);
    tt_assert_link_pdu(pdu, SNMP_MSG_TRAP2, 123456, tt_linkdown, 7, 1, 2);
    snmp_free_pdu(pdu);
    /* A trap is fire and forget: nothing waits. */
    assert_int_equal(loop_timer_count(st->loop), 0);
}

static void
test_link_up_trap_and_custom_varbinds(void **state)
{
    struct tt_state *st = *state;
    struct trap_sender *s = tt_sender(st, 0, 0);
    struct trap_counters row = {0};
    struct oid trap_oid, name;
    struct trap_varbind vb;
    netsnmp_pdu *pdu;
    const netsnmp_variable_list *var;
    static const char text[] = "eth0 flapped";

    assert_int_equal(trap_send_link(s, TT_FROM(TT_DEV_B), &st->sink, 0, 1, 2147483647u, 1, 1, &row),
                     FLEET_OK);
    tt_spin(st, &row);
    tt_sink_expect(st);
    assert_int_equal(ntohl(st->rx_from.sin_addr.s_addr), TT_DEV_B);
    pdu = tt_netsnmp_parse(st);
    tt_assert_link_pdu(pdu, SNMP_MSG_TRAP2, 0, tt_linkup, 2147483647u, 1, 1);
    snmp_free_pdu(pdu);

    /* Any notification: the objects follow the two fixed varbinds, in the caller's order. */
    assert_int_equal(oid_parse("1.3.6.1.4.1.99999.0.1", &trap_oid), FLEET_OK);
    assert_int_equal(oid_parse("1.3.6.1.2.1.2.2.1.2.3", &name), FLEET_OK);
    vb = (struct trap_varbind){
        .name = &name,
        .value = {.tag = BER_OCTET_STRING, .v.bytes = {(const uint8_t *)text, sizeof text - 1}}};
    assert_int_equal(trap_send(s, TT_FROM(0), &st->sink, 42, &trap_oid, &vb, 1, &row), FLEET_OK);
    tt_spin(st, &row);
    tt_sink_expect(st);
    /* Source 0: the socket's own choice, which for a loopback sink is 127.0.0.1. */
    assert_int_equal(ntohl(st->rx_from.sin_addr.s_addr), INADDR_LOOPBACK);
    pdu = tt_netsnmp_parse(st);
    var = pdu->variables->next_variable;
    tt_assert_var_oid_value(var, "1.3.6.1.4.1.99999.0.1");
    var = var->next_variable;
    tt_assert_var_oid_name(var, "1.3.6.1.2.1.2.2.1.2.3");
    assert_int_equal(var->type, ASN_OCTET_STR);
    assert_int_equal(var->val_len, sizeof text - 1);
    assert_memory_equal(var->val.string, text, sizeof text - 1);
    assert_null(var->next_variable);
    snmp_free_pdu(pdu);
    tt_assert_row(&row, 2, 2, 0, 0, 0, 0, 0, 0);
}

static void
test_traps_of_one_iteration_go_out_in_batches(void **state)
{
    struct tt_state *st = *state;
    struct trap_sender *s = tt_sender(st, 0, 0);
    struct trap_counters row = {0};
    int32_t seen[TT_BATCH_TRAPS];

    for (uint32_t i = 0; i < TT_BATCH_TRAPS; i++) {
        assert_int_equal(trap_send_link(s, TT_FROM(TT_DEV_A), &st->sink, i, 0, i + 1, 1, 2, &row), FLEET_OK);
        assert_true(trap_counters_consistent(&row));
    }
    /* The first TRAP_BATCH went out when the batch filled; the rest wait for the iteration. */
    assert_int_equal(trap_sender_queued(s), TT_BATCH_TRAPS - TRAP_BATCH);
    tt_assert_row(&row, TRAP_BATCH, TRAP_BATCH, 0, 0, 0, 0, 0, 0);
    tt_spin(st, &row);
    tt_assert_row(&row, TT_BATCH_TRAPS, TT_BATCH_TRAPS, 0, 0, 0, 0, 0, 0);
    assert_int_equal(trap_sender_stats(s)->batches, 2);
    for (int i = 0; i < TT_BATCH_TRAPS; i++) {
        tt_sink_expect(st);
        seen[i] = tt_sink_request_id(st, SPDU_TRAP_V2);
        if (i) {
            assert_int_equal(seen[i], seen[i - 1] + 1); /* in order, distinct request-ids */
        }
    }
    tt_sink_expect_silence(st);
}

static void
test_send_from_foreign_address_counts_failure(void **state)
{
    struct tt_state *st = *state;
    struct trap_sender *s = tt_sender(st, 0, 0);
    struct trap_counters bad = {0}, good = {0};

    /* A refused message in the middle of a batch fails alone. */
    assert_int_equal(trap_send_link(s, TT_FROM(TT_DEV_A), &st->sink, 1, 0, 1, 1, 2, &good), FLEET_OK);
    assert_int_equal(trap_send_link(s, TT_FROM(TT_FOREIGN_ADDR), &st->sink, 1, 0, 1, 1, 2, &bad), FLEET_OK);
    assert_int_equal(trap_send_link(s, TT_FROM(TT_DEV_A), &st->sink, 1, 1, 1, 1, 1, &good), FLEET_OK);
    trap_sender_flush(s);
    tt_assert_row(&bad, 1, 0, 1, 0, 0, 0, 0, 0);
    tt_assert_row(&good, 2, 2, 0, 0, 0, 0, 0, 0);
    tt_sink_expect(st);
    tt_sink_expect(st);
    tt_sink_expect_silence(st);
}

static void
test_oversized_notification_is_dropped(void **state)
{
    struct tt_state *st = *state;
    struct trap_sender *s = tt_sender(st, 0, 0);
    struct trap_counters row = {0};
    static uint8_t big[TRAP_MAX_MSG_BYTES];
    struct oid trap_oid, name;
    struct trap_varbind vb = {.name = &name,
                              .value = {.tag = BER_OCTET_STRING, .v.bytes = {big, sizeof big}}};

    assert_int_equal(oid_parse("1.3.6.1.4.1.99999.0.2", &trap_oid), FLEET_OK);
    assert_int_equal(oid_parse("1.3.6.1.4.1.99999.1.0", &name), FLEET_OK);
    assert_int_equal(trap_send(s, TT_FROM(TT_DEV_A), &st->sink, 1, &trap_oid, &vb, 1, &row), FLEET_ERR_LIMIT);
    tt_assert_row(&row, 1, 0, 0, 1, 0, 0, 0, 0);
    assert_int_equal(trap_sender_queued(s), 0);
    /* Nothing queued, so the flush timer was put back. */
    assert_int_equal(loop_timer_count(st->loop), 0);
    /* A bad value is the caller's bug: refused and counted nowhere. */
    vb.value = (struct spdu_value){.tag = BER_TIMETICKS, .v.u = (uint64_t)UINT32_MAX + 1};
    assert_int_equal(trap_send(s, TT_FROM(TT_DEV_A), &st->sink, 1, &trap_oid, &vb, 1, &row), FLEET_ERR_INVAL);
    tt_assert_row(&row, 1, 0, 0, 1, 0, 0, 0, 0);
    tt_spin(st, &row);
    tt_sink_expect_silence(st);
}

static void
test_suppressed_counts_emitted(void **state)
{
    struct trap_counters row = {0};

    (void)state;
    trap_note_suppressed(&row);
    assert_int_equal(row.ledger.emitted, 1);
    assert_int_equal(row.ledger.suppressed_pre_window, 1);
    assert_true(trap_counters_consistent(&row));
    row.ledger.in_window = 1; /* a broken row is reported */
    assert_false(trap_counters_consistent(&row));
}

/* ---- informs ---- */

/* An address per device: each trap from its device's address (IP_PKTINFO) and the sender's port, named. */
static void
test_named_traps_from_device_addresses_carry_address_and_sysname(void **state)
{
    struct tt_state *st = *state;
    struct trap_sender *s = tt_sender(st, 0, 0);
    struct trap_counters row_a = {0}, row_b = {0};
    const struct trap_origin a = {.addr = TT_DEV_A, .fd = -1, .name = "core-a"};
    const struct trap_origin b = {.addr = TT_DEV_B, .fd = -1, .name = "device-b"};
    netsnmp_pdu *pdu;

    assert_int_equal(trap_send_link(s, &a, &st->sink, 10, 0, 4, 1, 2, &row_a), FLEET_OK);
    assert_int_equal(trap_send_link(s, &b, &st->sink, 20, 1, 5, 1, 1, &row_b), FLEET_OK);
    tt_spin(st, NULL);
    tt_assert_row(&row_a, 1, 1, 0, 0, 0, 0, 0, 0);
    tt_assert_row(&row_b, 1, 1, 0, 0, 0, 0, 0, 0);
    tt_sink_expect(st);
    assert_int_equal(ntohl(st->rx_from.sin_addr.s_addr), TT_DEV_A);
    assert_int_equal(ntohs(st->rx_from.sin_port), trap_sender_port(s));
    pdu = tt_netsnmp_parse(st);
    tt_assert_identity(tt_after_link(pdu), TT_DEV_A, "core-a");
    snmp_free_pdu(pdu);
    tt_sink_expect(st);
    assert_int_equal(ntohl(st->rx_from.sin_addr.s_addr), TT_DEV_B);
    assert_int_equal(ntohs(st->rx_from.sin_port), trap_sender_port(s));
    pdu = tt_netsnmp_parse(st);
    tt_assert_identity(tt_after_link(pdu), TT_DEV_B, "device-b");
    snmp_free_pdu(pdu);
}

/* A port per device: every device on 127.0.0.1; each trap leaves from its device's agent socket. */
static void
test_named_traps_from_agent_sockets_leave_from_each_agent_port(void **state)
{
    struct tt_state *st = *state;
    struct trap_sender *s = tt_sender(st, 0, 0);
    struct trap_counters rows[3];
    uint16_t ports[2];
    int fds[2];
    const char *names[2] = {"device-0", "device-1"};
    netsnmp_pdu *pdu;

    fds[0] = tt_bind_agent(&ports[0]);
    fds[1] = tt_bind_agent(&ports[1]);
    memset(rows, 0, sizeof rows);
    for (int i = 0; i < 3; i++) {
        const struct trap_origin from = {.addr = INADDR_LOOPBACK, .fd = fds[i % 2], .name = names[i % 2]};
        assert_int_equal(trap_send_link(s, &from, &st->sink, 100, 0, (uint32_t)i + 1, 1, 2, &rows[i]),
                         FLEET_OK);
    }
    tt_spin(st, NULL);
    for (int i = 0; i < 3; i++) {
        tt_assert_row(&rows[i], 1, 1, 0, 0, 0, 0, 0, 0);
    }
    /* One sendmmsg per run of messages from the same socket: 0, 1, 0. */
    assert_int_equal(trap_sender_stats(s)->batches, 3);
    for (int i = 0; i < 3; i++) {
        const netsnmp_variable_list *var;
        tt_sink_expect(st);
        assert_int_equal(ntohl(st->rx_from.sin_addr.s_addr), INADDR_LOOPBACK);
        assert_int_equal(ntohs(st->rx_from.sin_port), ports[i % 2]);
        pdu = tt_netsnmp_parse(st);
        var = pdu->variables->next_variable->next_variable;
        assert_int_equal(*var->val.integer, i + 1); /* ifIndex: the send order */
        tt_assert_identity(tt_after_link(pdu), INADDR_LOOPBACK, names[i % 2]);
        snmp_free_pdu(pdu);
    }
    close(fds[0]);
    close(fds[1]);
}

/* An inform from an agent socket: its retransmission leaves from there too, and the Response that comes
 * back to the agent socket settles it once the agent hands it over. */
static void
test_inform_from_agent_socket_is_settled_by_take_response(void **state)
{
    struct tt_state *st = *state;
    struct trap_sender *s = tt_sender(st, 1, 0);
    struct trap_counters row = {0};
    uint16_t port;
    int fd = tt_bind_agent(&port);
    const struct trap_origin from = {.addr = INADDR_LOOPBACK, .fd = fd, .name = "device-7"};
    uint8_t buf[TT_RX_BYTES];
    struct sockaddr_in peer;
    size_t n;
    int32_t rid;

    assert_int_equal(trap_send_link(s, &from, &st->sink, 1, 0, 1, 1, 2, &row), FLEET_OK);
    tt_spin(st, &row);
    tt_sink_expect(st);
    assert_int_equal(ntohs(st->rx_from.sin_port), port);
    rid = tt_sink_request_id(st, SPDU_INFORM);
    tt_advance_ms(st, TT_TIMEOUT_MS, &row);
    tt_sink_expect(st);
    assert_int_equal(ntohs(st->rx_from.sin_port), port);
    assert_int_equal(tt_sink_request_id(st, SPDU_INFORM), rid);
    tt_assert_row(&row, 1, 1, 0, 0, 0, 0, 1, 1);
    /* The collector answers the source: the agent socket, not the sender's. */
    tt_sink_answer_from(st, st->sink_fd, rid);
    n = tt_recv_on(fd, buf, sizeof buf, &peer);
    /* A request is the agent's, not the sender's. */
    {
        uint8_t get[] = {0x30, 0x1a, 0x02, 0x01, 0x01, 0x04, 0x06, 'p',  'u',  'b',  'l',  'i',  'c',  0xa0,
                         0x0d, 0x02, 0x01, 0x01, 0x02, 0x01, 0x00, 0x02, 0x01, 0x00, 0x30, 0x02, 0x30, 0x00};
        get[1] = (uint8_t)(sizeof get - 2);
        assert_int_equal(trap_sender_take_response(s, get, sizeof get, (struct sockaddr *)&peer), 0);
    }
    assert_int_equal(trap_sender_take_response(s, buf, n, (struct sockaddr *)&peer), 1);
    tt_assert_row(&row, 1, 1, 0, 0, 1, 0, 1, 0);
    assert_int_equal(trap_sender_stats(s)->responses, 1);
    assert_int_equal(trap_sender_pending(s), 0);
    close(fd);
}

static void
test_inform_acknowledged_on_first_copy(void **state)
{
    struct tt_state *st = *state;
    struct trap_sender *s = tt_sender(st, 1, 0);
    struct trap_counters row = {0};
    netsnmp_pdu *pdu;
    int32_t rid;

    assert_int_equal(trap_send_link(s, TT_FROM(TT_DEV_A), &st->sink, 500, 0, 3, 1, 2, &row), FLEET_OK);
    tt_assert_row(&row, 0, 0, 0, 0, 0, 0, 0, 0);
    tt_spin(st, &row);
    tt_assert_row(&row, 1, 1, 0, 0, 0, 0, 0, 1);
    assert_int_equal(trap_sender_pending(s), 1);
    tt_sink_expect(st);
    assert_int_equal(ntohl(st->rx_from.sin_addr.s_addr), TT_DEV_A);
    pdu = tt_netsnmp_parse(st);
    tt_assert_link_pdu(pdu, SNMP_MSG_INFORM, 500, tt_linkdown, 3, 1, 2);
    snmp_free_pdu(pdu);
    rid = tt_sink_request_id(st, SPDU_INFORM);
    tt_sink_answer_from(st, st->sink_fd, rid);
    tt_loop_read(st);
    tt_assert_row(&row, 1, 1, 0, 0, 1, 0, 0, 0);
    assert_int_equal(trap_sender_pending(s), 0);
    assert_int_equal(loop_timer_count(st->loop), 0);
    /* Long after: no retransmission. */
    tt_advance_ms(st, 10 * TT_TIMEOUT_MS, &row);
    tt_sink_expect_silence(st);
    tt_assert_row(&row, 1, 1, 0, 0, 1, 0, 0, 0);
}

static void
test_inform_retransmits_then_gives_up(void **state)
{
    struct tt_state *st = *state;
    struct trap_sender *s = tt_sender(st, 1, 0);
    struct trap_counters row = {0};
    int32_t rid;

    assert_int_equal(trap_send_link(s, TT_FROM(TT_DEV_B), &st->sink, 1, 1, 9, 1, 1, &row), FLEET_OK);
    tt_spin(st, &row);
    tt_sink_expect(st);
    rid = tt_sink_request_id(st, SPDU_INFORM);
    for (uint64_t r = 1; r <= TT_RETRIES; r++) {
        /* Just before the timeout: nothing. */
        tt_advance_ms(st, TT_TIMEOUT_MS - 1, &row);
        tt_sink_expect_silence(st);
        tt_assert_row(&row, 1, 1, 0, 0, 0, 0, r - 1, 1);
        /* At the timeout: the same message again, same request-id, same source. */
        tt_advance_ms(st, 1, &row);
        tt_sink_expect(st);
        assert_int_equal(tt_sink_request_id(st, SPDU_INFORM), rid);
        assert_int_equal(ntohl(st->rx_from.sin_addr.s_addr), TT_DEV_B);
        tt_assert_row(&row, 1, 1, 0, 0, 0, 0, r, 1);
    }
    /* One more timeout after the last retry: given up, nothing sent. */
    tt_advance_ms(st, TT_TIMEOUT_MS, &row);
    tt_sink_expect_silence(st);
    tt_assert_row(&row, 1, 1, 0, 0, 0, 1, TT_RETRIES, 0);
    assert_int_equal(trap_sender_pending(s), 0);
    assert_int_equal(loop_timer_count(st->loop), 0);
    /* A Response after the give-up settles nothing. */
    tt_sink_answer_from(st, st->sink_fd, rid);
    tt_loop_read(st);
    assert_int_equal(trap_sender_stats(s)->responses_unmatched, 1);
    tt_assert_row(&row, 1, 1, 0, 0, 0, 1, TT_RETRIES, 0);
}

static void
test_inform_acknowledged_after_retry_once(void **state)
{
    struct tt_state *st = *state;
    struct trap_sender *s = tt_sender(st, 1, 0);
    struct trap_counters row = {0};
    int32_t rid;

    assert_int_equal(trap_send_link(s, TT_FROM(TT_DEV_A), &st->sink, 1, 0, 4, 1, 2, &row), FLEET_OK);
    tt_spin(st, &row);
    tt_sink_expect(st);
    rid = tt_sink_request_id(st, SPDU_INFORM);
    tt_advance_ms(st, TT_TIMEOUT_MS, &row);
    tt_sink_expect(st);
    tt_assert_row(&row, 1, 1, 0, 0, 0, 0, 1, 1);
    /* Both copies answered: the first Response settles it, the duplicate is unmatched. */
    tt_sink_answer_from(st, st->sink_fd, rid);
    tt_sink_answer_from(st, st->sink_fd, rid);
    tt_loop_read(st);
    tt_assert_row(&row, 1, 1, 0, 0, 1, 0, 1, 0);
    assert_int_equal(trap_sender_stats(s)->responses_unmatched, 1);
    assert_int_equal(loop_timer_count(st->loop), 0);
}

static void
test_inform_response_from_other_source_or_id_is_unmatched(void **state)
{
    struct tt_state *st = *state;
    struct trap_sender *s = tt_sender(st, 1, 0);
    struct trap_counters row = {0};
    struct trap_sink other_sink;
    int other = tt_bind_sink(&other_sink);
    int32_t rid;

    assert_int_equal(trap_send_link(s, TT_FROM(TT_DEV_A), &st->sink, 1, 0, 4, 1, 2, &row), FLEET_OK);
    tt_spin(st, &row);
    tt_sink_expect(st);
    rid = tt_sink_request_id(st, SPDU_INFORM);
    tt_sink_answer_from(st, other, rid);           /* right id, wrong port */
    tt_sink_answer_from(st, st->sink_fd, rid + 1); /* right source, wrong id */
    tt_loop_read(st);
    tt_loop_read(st);
    assert_int_equal(trap_sender_stats(s)->responses_unmatched, 2);
    tt_assert_row(&row, 1, 1, 0, 0, 0, 0, 0, 1);
    /* A datagram that is not a Response is malformed. */
    assert_int_equal(
        sendto(st->sink_fd, "junk", 4, 0, (const struct sockaddr *)&st->rx_from, sizeof st->rx_from), 4);
    tt_loop_read(st);
    assert_int_equal(trap_sender_stats(s)->responses_malformed, 1);
    tt_sink_answer_from(st, st->sink_fd, rid);
    tt_loop_read(st);
    tt_assert_row(&row, 1, 1, 0, 0, 1, 0, 0, 0);
    close(other);
}

static void
test_inform_table_full_drops_and_counts(void **state)
{
    struct tt_state *st = *state;
    struct trap_sender *s = tt_sender(st, 1, 2);
    struct trap_counters a = {0}, b = {0};
    int32_t rid[2];

    assert_int_equal(trap_send_link(s, TT_FROM(TT_DEV_A), &st->sink, 1, 0, 1, 1, 2, &a), FLEET_OK);
    assert_int_equal(trap_send_link(s, TT_FROM(TT_DEV_B), &st->sink, 1, 0, 1, 1, 2, &b), FLEET_OK);
    /* Full (queued informs hold their slots too): dropped and counted at once. */
    assert_int_equal(trap_send_link(s, TT_FROM(TT_DEV_B), &st->sink, 1, 0, 2, 1, 2, &b), FLEET_ERR_LIMIT);
    tt_assert_row(&b, 1, 0, 0, 1, 0, 0, 0, 0);
    tt_spin(st, &b);
    tt_assert_row(&a, 1, 1, 0, 0, 0, 0, 0, 1);
    tt_assert_row(&b, 2, 1, 0, 1, 0, 0, 0, 1);
    assert_int_equal(trap_send_link(s, TT_FROM(TT_DEV_A), &st->sink, 1, 0, 3, 1, 2, &a), FLEET_ERR_LIMIT);
    tt_assert_row(&a, 2, 1, 0, 1, 0, 0, 0, 1);
    /* An answer frees a slot: the next inform goes. */
    for (int i = 0; i < 2; i++) {
        tt_sink_expect(st);
        rid[i] = tt_sink_request_id(st, SPDU_INFORM);
        if (ntohl(st->rx_from.sin_addr.s_addr) == TT_DEV_A) {
            tt_sink_answer_from(st, st->sink_fd, rid[i]);
        }
    }
    assert_int_not_equal(rid[0], rid[1]);
    tt_loop_read(st);
    tt_assert_row(&a, 2, 1, 0, 1, 1, 0, 0, 0);
    assert_int_equal(trap_send_link(s, TT_FROM(TT_DEV_A), &st->sink, 1, 0, 4, 1, 2, &a), FLEET_OK);
    tt_spin(st, &a);
    tt_assert_row(&a, 3, 2, 0, 1, 1, 0, 0, 1);
    tt_sink_expect(st);
    /* The reused slot has a new request-id. */
    assert_int_not_equal(tt_sink_request_id(st, SPDU_INFORM), rid[0]);
    assert_int_not_equal(tt_sink_request_id(st, SPDU_INFORM), rid[1]);
    /* Freeing the sender gives up what still waits. */
    trap_sender_free(st->sender);
    st->sender = NULL;
    tt_assert_row(&a, 3, 2, 0, 1, 1, 1, 0, 0);
    tt_assert_row(&b, 2, 1, 0, 1, 0, 1, 0, 0);
}

static void
test_inform_first_copy_refused_is_not_retried(void **state)
{
    struct tt_state *st = *state;
    struct trap_sender *s = tt_sender(st, 1, 1);
    struct trap_counters row = {0};

    assert_int_equal(trap_send_link(s, TT_FROM(TT_FOREIGN_ADDR), &st->sink, 1, 0, 1, 1, 2, &row), FLEET_OK);
    tt_spin(st, &row);
    tt_assert_row(&row, 1, 0, 1, 0, 0, 0, 0, 0);
    assert_int_equal(trap_sender_pending(s), 0);
    assert_int_equal(loop_timer_count(st->loop), 0);
    /* Its slot is free again (the table holds one). */
    assert_int_equal(trap_send_link(s, TT_FROM(TT_DEV_A), &st->sink, 1, 0, 1, 1, 2, &row), FLEET_OK);
    tt_spin(st, &row);
    tt_assert_row(&row, 2, 1, 1, 0, 0, 0, 0, 1);
    for (int i = 0; i <= TT_RETRIES; i++) {
        tt_advance_ms(st, TT_TIMEOUT_MS, &row);
    }
    tt_assert_row(&row, 2, 1, 1, 0, 0, 1, TT_RETRIES, 0);
}

static void
test_free_sends_queued_and_settles_rows(void **state)
{
    struct tt_state *st = *state;
    struct trap_sender *s = tt_sender(st, 1, 0);
    struct trap_counters row = {0};

    assert_int_equal(trap_send_link(s, TT_FROM(TT_DEV_A), &st->sink, 1, 0, 1, 1, 2, &row), FLEET_OK);
    trap_sender_free(s);
    st->sender = NULL;
    tt_assert_row(&row, 1, 1, 0, 0, 0, 1, 0, 0);
    tt_sink_expect(st);
    assert_int_equal(loop_timer_count(st->loop), 0);
}

static void
test_sender_new_refuses_bad_configuration(void **state)
{
    struct tt_state *st = *state;
    struct trap_sender_config cfg = {.inform = 1, .timeout_ms = 0, .retries = 1};
    struct trap_sender *s = (struct trap_sender *)1;
    char err[256] = "", community[TRAP_MAX_COMMUNITY_BYTES + 2];

    assert_int_equal(trap_sender_new(st->loop, &cfg, &s, err, sizeof err), FLEET_ERR_INVAL);
    assert_null(s);
    assert_string_equal(err,
                        "the inform timeout must be above 0 ms and the pending table at most 65536 informs");
    memset(community, 'c', sizeof community - 1);
    community[sizeof community - 1] = '\0';
    cfg = (struct trap_sender_config){.community = community};
    assert_int_equal(trap_sender_new(st->loop, &cfg, &s, err, sizeof err), FLEET_ERR_INVAL);
    assert_string_equal(err, "the trap community is longer than 255 bytes");
    trap_sender_free(NULL);
}

/* ---- against net-snmp's snmptrapd ---- */

/* A running snmptrapd and its files. */
struct tt_trapd {
    pid_t pid;         /* the process, 0 once reaped */
    uint16_t port;     /* its UDP port on 127.0.0.1 */
    char dir[64];      /* temporary directory with the files below */
    char conf[128];    /* its configuration */
    char pidfile[128]; /* its pid file */
    char out[128];     /* its stdout (the log, -Lo) */
    char errlog[128];  /* its stderr */
};

static const char *
tt_find_trapd(void)
{
    static const char *const paths[] = {"/usr/sbin/snmptrapd", "/usr/local/sbin/snmptrapd",
                                        "/usr/bin/snmptrapd"};

    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        if (access(paths[i], X_OK) == 0) {
            return paths[i];
        }
    }
    return NULL;
}

/* 1 when /proc/net/udp lists a socket bound to 127.0.0.1:@p port. */
static int
tt_udp_bound(uint16_t port)
{
    char line[512], want[32];
    FILE *f = fopen("/proc/net/udp", "r");
    int found = 0;

    assert_non_null(f);
    snprintf(want, sizeof want, "0100007F:%04X ", (unsigned)port);
    while (!found && fgets(line, sizeof line, f)) {
        found = strstr(line, want) != NULL;
    }
    fclose(f);
    return found;
}

static void
tt_sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* Wait at most @p wait_ms for the process to end; 1 with its status, 0 if it still runs. */
static int
tt_wait_exit(pid_t pid, int wait_ms, int *status)
{
    for (int waited = 0; waited <= wait_ms; waited += 10) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid) {
            return 1;
        }
        assert_int_equal(r, 0);
        tt_sleep_ms(10);
    }
    return 0;
}

/* Start snmptrapd on a free random port; returns 0 when it could not bind (try another port). */
static int
tt_trapd_start(struct tt_trapd *d, const char *path)
{
    char listen[64], port_text[16];
    int status;

    d->port = tt_random_port();
    if (tt_udp_bound(d->port)) {
        return 0;
    }
    snprintf(listen, sizeof listen, "udp:127.0.0.1:%u", (unsigned)d->port);
    snprintf(port_text, sizeof port_text, "%u", (unsigned)d->port);
    d->pid = fork();
    assert_true(d->pid >= 0);
    if (d->pid == 0) {
        int out = open(d->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        int err = open(d->errlog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) {
            _exit(126);
        }
        /* No MIB modules: the output uses numeric OIDs, and missing modules would only add warnings. */
        setenv("MIBS", "", 1);
        /* -C: only our configuration; -On: numeric OIDs, so no MIB files matter; -n: no name lookups. */
        execl(path, path, "-f", "-Lo", "-C", "-c", d->conf, "-p", d->pidfile, "-On", "-n", listen,
              (char *)NULL);
        _exit(127);
    }
    for (int waited = 0; waited <= TT_TRAPD_READY_MS * tt_multiplier(); waited += 10) {
        if (tt_udp_bound(d->port)) {
            return 1;
        }
        if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
            d->pid = 0; /* it exited: most likely the port was taken meanwhile */
            return 0;
        }
        tt_sleep_ms(10);
    }
    fail_msg("snmptrapd did not listen on 127.0.0.1:%u within %d ms", (unsigned)d->port,
             TT_TRAPD_READY_MS * tt_multiplier());
    return 0;
}

/* SIGTERM, bounded wait, SIGKILL as a last resort; returns 1 when it ended on SIGTERM. */
static int
tt_trapd_stop(struct tt_trapd *d)
{
    int status = 0, clean;

    if (!d->pid) {
        return 1;
    }
    kill(d->pid, SIGTERM);
    clean = tt_wait_exit(d->pid, TT_TRAPD_EXIT_MS * tt_multiplier(), &status);
    if (!clean) {
        kill(d->pid, SIGKILL);
        waitpid(d->pid, &status, 0);
    }
    d->pid = 0;
    return clean && ((WIFEXITED(status) && WEXITSTATUS(status) == 0) ||
                     (WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM));
}

static char *
tt_read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf = calloc(1, TT_TRAPD_OUT_MAX + 1);
    size_t n;

    assert_non_null(buf);
    if (!f) {
        return buf;
    }
    n = fread(buf, 1, TT_TRAPD_OUT_MAX, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static size_t
tt_count(const char *hay, const char *needle)
{
    size_t n = 0;

    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) {
        n++;
    }
    return n;
}

static void
test_snmptrapd_logs_link_traps_and_acknowledges_informs(void **state)
{
    struct tt_state *st = *state;
    const char *path = tt_find_trapd();
    struct tt_trapd d = {0};
    struct trap_sender_config cfg = {
        .inform = 0, .timeout_ms = TRAP_DEFAULT_INFORM_TIMEOUT_MS, .retries = TRAP_DEFAULT_INFORM_RETRIES};
    struct trap_sender *traps = NULL, *informs = NULL;
    struct trap_counters trap_row = {0}, inform_row = {0};
    struct trap_sink sink;
    char err[256] = "", *out = NULL, *errs = NULL, from_agent[64];
    FILE *f;
    int started = 0, clean;
    uint16_t agent_port;
    int agent_fd = tt_bind_agent(&agent_port);
    /* Traps as with a port per device (from the agent's socket), informs as with an address per device. */
    const struct trap_origin trap_from = {.addr = INADDR_LOOPBACK, .fd = agent_fd, .name = "device-0"};
    const struct trap_origin inform_from = {.addr = TT_DEV_B, .fd = -1, .name = "device-1"};
    monotime_us deadline;

    if (!path) {
        fail_msg("snmptrapd is not installed (Debian package snmptrapd; scripts/setup.sh installs it)");
    }
    /* This test runs on the real clock: snmptrapd answers in real time. */
    loop_set_clock(st->loop, NULL);
    snprintf(d.dir, sizeof d.dir, "/tmp/fleet-trapd-XXXXXX");
    assert_non_null(mkdtemp(d.dir));
    snprintf(d.conf, sizeof d.conf, "%s/snmptrapd.conf", d.dir);
    snprintf(d.pidfile, sizeof d.pidfile, "%s/snmptrapd.pid", d.dir);
    snprintf(d.out, sizeof d.out, "%s/out.log", d.dir);
    snprintf(d.errlog, sizeof d.errlog, "%s/err.log", d.dir);
    f = fopen(d.conf, "w");
    assert_non_null(f);
    fprintf(f, "authCommunity log,execute,net public\ndisableAuthorization yes\n");
    fclose(f);
    for (int i = 0; i < TT_PORT_TRIES && !started; i++) {
        started = tt_trapd_start(&d, path);
    }
    assert_true(started);
    netaddr_sockaddr(&(struct net_family){0}, INADDR_LOOPBACK, d.port, &sink.ep.sa);
    sink.ep.len = sizeof(struct sockaddr_in);

    assert_int_equal(trap_sender_new(st->loop, &cfg, &traps, err, sizeof err), FLEET_OK);
    cfg.inform = 1;
    cfg.request_id_seed = 1000;
    assert_int_equal(trap_sender_new(st->loop, &cfg, &informs, err, sizeof err), FLEET_OK);
    /* Traps first, then informs on the same path: once the informs are answered, the traps were read. */
    assert_int_equal(trap_send_link(traps, &trap_from, &sink, 100, 0, 5, 1, 2, &trap_row), FLEET_OK);
    assert_int_equal(trap_send_link(traps, &trap_from, &sink, 200, 1, 5, 1, 1, &trap_row), FLEET_OK);
    assert_int_equal(trap_send_link(informs, &inform_from, &sink, 300, 0, 6, 1, 2, &inform_row), FLEET_OK);
    assert_int_equal(trap_send_link(informs, &inform_from, &sink, 400, 1, 6, 1, 1, &inform_row), FLEET_OK);
    deadline = loop_clock_monotonic() + (monotime_us)TT_TRAPD_ACK_MS * 1000 * (monotime_us)tt_multiplier();
    while (inform_row.acknowledged + inform_row.timed_out < 2 && loop_clock_monotonic() < deadline) {
        loop_run_once(st->loop, 50);
        assert_true(trap_counters_consistent(&trap_row));
        assert_true(trap_counters_consistent(&inform_row));
    }
    clean = tt_trapd_stop(&d);
    snprintf(from_agent, sizeof from_agent, "[127.0.0.1]:%u->", (unsigned)agent_port);
    out = tt_read_file(d.out);
    errs = tt_read_file(d.errlog);
    if (inform_row.acknowledged != 2 || !clean) {
        fprintf(stderr, "snmptrapd stdout:\n%s\nstderr:\n%s\n", out, errs);
    }
    tt_assert_row(&trap_row, 2, 2, 0, 0, 0, 0, 0, 0);
    tt_assert_row(&inform_row, 2, 2, 0, 0, 2, 0, 0, 0);
    assert_true(clean);
    /* Each notification once, from its device's address, with its numeric trap OID. */
    if (tt_count(out, ".1.3.6.1.6.3.1.1.5.3") != 2 || tt_count(out, ".1.3.6.1.6.3.1.1.5.4") != 2 ||
        !strstr(out, from_agent) || !strstr(out, "[127.0.0.3]") ||
        tt_count(out, ".1.3.6.1.6.3.18.1.3.0 = IpAddress: 127.0.0.1") != 2 ||
        tt_count(out, ".1.3.6.1.2.1.1.5.0 = STRING: \"device-0\"") != 2 ||
        tt_count(out, ".1.3.6.1.6.3.18.1.3.0 = IpAddress: 127.0.0.3") != 2 ||
        tt_count(out, ".1.3.6.1.2.1.1.5.0 = STRING: \"device-1\"") != 2 ||
        !strstr(out, ".1.3.6.1.2.1.2.2.1.1.5 = INTEGER: 5") ||
        !strstr(out, ".1.3.6.1.2.1.2.2.1.8.6 = INTEGER: 2")) {
        fprintf(stderr, "snmptrapd stdout:\n%s\nstderr:\n%s\n", out, errs);
        fail_msg("snmptrapd did not log the four notifications as expected");
    }
    trap_sender_free(traps);
    trap_sender_free(informs);
    close(agent_fd);
    free(out);
    free(errs);
    unlink(d.conf);
    unlink(d.pidfile);
    unlink(d.out);
    unlink(d.errlog);
    rmdir(d.dir);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sink_parse_accepts_address_and_port),
        cmocka_unit_test(test_sink_parse_refuses_names_and_bad_ports),
        cmocka_unit_test(test_suppressed_counts_emitted),
        cmocka_unit_test_setup_teardown(test_link_down_trap_parses_with_netsnmp_from_device_address, tt_setup,
                                        tt_teardown),
        cmocka_unit_test_setup_teardown(test_link_up_trap_and_custom_varbinds, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_traps_of_one_iteration_go_out_in_batches, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_send_from_foreign_address_counts_failure, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_oversized_notification_is_dropped, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_named_traps_from_device_addresses_carry_address_and_sysname,
                                        tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_named_traps_from_agent_sockets_leave_from_each_agent_port,
                                        tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_inform_from_agent_socket_is_settled_by_take_response, tt_setup,
                                        tt_teardown),
        cmocka_unit_test_setup_teardown(test_inform_acknowledged_on_first_copy, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_inform_retransmits_then_gives_up, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_inform_acknowledged_after_retry_once, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_inform_response_from_other_source_or_id_is_unmatched, tt_setup,
                                        tt_teardown),
        cmocka_unit_test_setup_teardown(test_inform_table_full_drops_and_counts, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_inform_first_copy_refused_is_not_retried, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_free_sends_queued_and_settles_rows, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_sender_new_refuses_bad_configuration, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_snmptrapd_logs_link_traps_and_acknowledges_informs, tt_setup,
                                        tt_teardown),
    };

    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    return cmocka_run_group_tests(tests, NULL, NULL);
}
