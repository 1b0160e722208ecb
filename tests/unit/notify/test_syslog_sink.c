/*
 * The syslog sinks on a real loop and loopback sockets (issue 29): UDP
 * datagrams from the device's own address, TCP frames byte for byte (octet
 * counting and LF), a bounded queue whose overflow is counted as dropped,
 * what is left at close counted as send failures, and a collector that
 * closes the connection reconnected to after the backoff, the next lines
 * on the new connection. Every ledger row adds up at every step.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ledger.h"
#include "loop.h"
#include "syslog_sink.h"

/* Descriptors the test loop indexes. */
#define TS_MAX_FDS 1024
/* Longest a test waits for something to happen on loopback (real time). */
#define TS_WAIT_MS 3000

struct ts_state {
    struct loop *loop;
    int listen_fd; /* TCP listener or UDP receiver on 127.0.0.1, port in port */
    uint16_t port;
};

static int
ts_setup(void **state)
{
    struct ts_state *st = calloc(1, sizeof *st);

    assert_non_null(st);
    st->loop = loop_new(TS_MAX_FDS);
    assert_non_null(st->loop);
    st->listen_fd = -1;
    *state = st;
    return 0;
}

static int
ts_teardown(void **state)
{
    struct ts_state *st = *state;

    if (st->listen_fd >= 0) {
        close(st->listen_fd);
    }
    loop_free(st->loop);
    free(st);
    return 0;
}

/* A socket of @p type bound to 127.0.0.1 on a port the kernel picks (TCP: listening). */
static void
ts_bind(struct ts_state *st, int type)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;

    st->listen_fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
    assert_true(st->listen_fd >= 0);
    assert_int_equal(bind(st->listen_fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(st->listen_fd, (struct sockaddr *)&a, &len), 0);
    st->port = ntohs(a.sin_port);
    if (type == SOCK_STREAM) {
        assert_int_equal(listen(st->listen_fd, 8), 0);
    }
}

static struct syslog_sink *
ts_sink(struct ts_state *st, const char *scheme, enum syslog_framing framing, uint32_t queue_msgs)
{
    struct syslog_sink_config cfg = {.framing = framing, .queue_msgs = queue_msgs};
    struct syslog_sink *s = NULL;
    char url[64], err[256];

    snprintf(url, sizeof url, "%s://127.0.0.1:%u", scheme, (unsigned)st->port);
    assert_int_equal(syslog_sink_parse(url, &cfg.spec, err, sizeof err), 0);
    assert_int_equal(netaddr_parse("127.0.0.1", &cfg.fam, &(uint32_t){0}), 0);
    assert_int_equal(syslog_sink_new(st->loop, &cfg, &s, err, sizeof err), 0);
    return s;
}

/* Run the loop until @p fd is readable (or the wait ends). @return 1 when readable. */
static int
ts_run_until_readable(struct ts_state *st, int fd)
{
    for (int waited = 0; waited < TS_WAIT_MS; waited += 10) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        loop_run_once(st->loop, 10);
        if (poll(&p, 1, 0) == 1) {
            return 1;
        }
    }
    return 0;
}

/* Run the loop and accept the sink's connection. */
static int
ts_accept(struct ts_state *st)
{
    int fd;

    assert_true(ts_run_until_readable(st, st->listen_fd));
    fd = accept(st->listen_fd, NULL, NULL);
    assert_true(fd >= 0);
    return fd;
}

/* Read exactly @p want bytes from @p fd, running the loop meanwhile, and compare. */
static void
ts_expect_bytes(struct ts_state *st, int fd, const char *want, size_t want_len)
{
    char got[4096];
    size_t n = 0;

    assert_true(want_len <= sizeof got);
    while (n < want_len) {
        ssize_t r;
        assert_true(ts_run_until_readable(st, fd));
        r = recv(fd, got + n, sizeof got - n, MSG_DONTWAIT);
        assert_true(r > 0);
        n += (size_t)r;
    }
    assert_int_equal(n, want_len);
    assert_memory_equal(got, want, want_len);
}

static void
test_udp_lines_leave_from_the_devices_address(void **state)
{
    struct ts_state *st = *state;
    struct ledger_row rows[2] = {{0}};
    struct syslog_sink *s;
    uint32_t dev5 = 0x7f000005u, dev9 = 0x7f000009u; /* 127.0.0.5 and 127.0.0.9 */

    ts_bind(st, SOCK_DGRAM);
    s = ts_sink(st, "udp", SYSLOG_FRAME_OCTETS, 0);
    for (int i = 0; i < 100; i++) {
        char msg[32];
        int n = snprintf(msg, sizeof msg, "line %d", i);
        syslog_sink_send(s, i % 2 ? dev9 : dev5, msg, (size_t)n, &rows[i % 2]);
    }
    /* Handed over: emitted and queued, no outcome until the batch goes out. */
    assert_int_equal(rows[0].emitted, 50);
    assert_true(ledger_consistent(&rows[0]) && ledger_consistent(&rows[1]));
    loop_run_once(st->loop, 0);
    for (int i = 0; i < 100; i++) {
        struct sockaddr_in from;
        socklen_t from_len = sizeof from;
        char buf[64], want[32];
        ssize_t n;
        assert_true(ts_run_until_readable(st, st->listen_fd));
        n = recvfrom(st->listen_fd, buf, sizeof buf, MSG_DONTWAIT, (struct sockaddr *)&from, &from_len);
        snprintf(want, sizeof want, "line %d", i);
        assert_int_equal(n, strlen(want));
        assert_memory_equal(buf, want, (size_t)n);
        assert_int_equal(ntohl(from.sin_addr.s_addr), i % 2 ? dev9 : dev5);
    }
    assert_int_equal(ledger_sent(&rows[0]), 50);
    assert_int_equal(ledger_sent(&rows[1]), 50);
    assert_int_equal(rows[0].queued + rows[1].queued, 0);
    syslog_sink_free(s);
    assert_int_equal(loop_timer_count(st->loop), 0);
}

static void
test_tcp_frames_are_exact(void **state)
{
    struct ts_state *st = *state;
    struct ledger_row row = {0};
    struct syslog_sink *s;
    int fd;

    ts_bind(st, SOCK_STREAM);
    s = ts_sink(st, "tcp", SYSLOG_FRAME_OCTETS, 0);
    fd = ts_accept(st);
    syslog_sink_send(s, 0, "<13>1 - - - - - - a", 19, &row);
    syslog_sink_send(s, 0, "bc", 2, &row);
    ts_expect_bytes(st, fd, "19 <13>1 - - - - - - a2 bc", 26);
    assert_int_equal(ledger_sent(&row), 2);
    assert_true(ledger_consistent(&row));
    assert_int_equal(syslog_sink_stats(s)->connects, 1);
    syslog_sink_free(s);
    close(fd);
}

static void
test_tcp_lf_framing(void **state)
{
    struct ts_state *st = *state;
    struct ledger_row row = {0};
    struct syslog_sink *s;
    int fd;

    ts_bind(st, SOCK_STREAM);
    s = ts_sink(st, "tcp", SYSLOG_FRAME_LF, 0);
    fd = ts_accept(st);
    syslog_sink_send(s, 0, "one", 3, &row);
    syslog_sink_send(s, 0, "two", 3, &row);
    ts_expect_bytes(st, fd, "one\ntwo\n", 8);
    assert_int_equal(ledger_sent(&row), 2);
    syslog_sink_free(s);
    close(fd);
}

static void
test_a_full_queue_drops_and_close_counts_the_rest(void **state)
{
    struct ts_state *st = *state;
    struct ledger_row row = {0};
    struct syslog_sink *s;

    /* Nobody listens there: the connection is refused, and lines wait for the next attempt. */
    ts_bind(st, SOCK_STREAM);
    close(st->listen_fd);
    st->listen_fd = -1;
    s = ts_sink(st, "tcp", SYSLOG_FRAME_OCTETS, 4);
    for (int i = 0; i < 10; i++) {
        syslog_sink_send(s, 0, "x", 1, &row);
        assert_true(ledger_consistent(&row));
    }
    loop_run_once(st->loop, 20);
    assert_int_equal(row.emitted, 10);
    assert_int_equal(row.queued, 4);
    assert_int_equal(row.dropped, 6);
    assert_int_equal(syslog_sink_stats(s)->up, 0);
    syslog_sink_free(s);
    /* What never went out is a send failure: the row closes with nothing queued. */
    assert_int_equal(row.queued, 0);
    assert_int_equal(row.send_failures, 4);
    assert_int_equal(ledger_sent(&row), 0);
    assert_true(ledger_consistent(&row));
    assert_int_equal(loop_timer_count(st->loop), 0);
}

static void
test_a_collector_that_goes_away_is_reconnected(void **state)
{
    struct ts_state *st = *state;
    struct ledger_row row = {0};
    struct syslog_sink *s;
    int fd;

    ts_bind(st, SOCK_STREAM);
    s = ts_sink(st, "tcp", SYSLOG_FRAME_OCTETS, 0);
    fd = ts_accept(st);
    syslog_sink_send(s, 0, "first", 5, &row);
    ts_expect_bytes(st, fd, "5 first", 7);
    close(fd); /* the collector restarts */
    for (int waited = 0; syslog_sink_stats(s)->up && waited < TS_WAIT_MS; waited += 10) {
        loop_run_once(st->loop, 10);
    }
    assert_int_equal(syslog_sink_stats(s)->up, 0);
    assert_int_equal(syslog_sink_stats(s)->disconnects, 1);
    /* Lines while it is away wait, and go out on the next connection, after the backoff. */
    syslog_sink_send(s, 0, "second", 6, &row);
    assert_int_equal(row.queued, 1);
    fd = ts_accept(st);
    ts_expect_bytes(st, fd, "6 second", 8);
    assert_int_equal(syslog_sink_stats(s)->connects, 2);
    assert_int_equal(ledger_sent(&row), 2);
    assert_int_equal(row.queued, 0);
    assert_true(ledger_consistent(&row));
    syslog_sink_free(s);
    close(fd);
}

static void
test_sink_urls(void **state)
{
    struct syslog_sink_spec spec;
    char err[256], text[80];

    (void)state;
    assert_int_equal(syslog_sink_parse("udp://192.0.2.1", &spec, err, sizeof err), 0);
    assert_string_equal(syslog_sink_format(&spec, text, sizeof text), "udp://192.0.2.1:514");
    assert_int_equal(syslog_sink_parse("tls://[2001:db8::1]", &spec, err, sizeof err), 0);
    assert_string_equal(syslog_sink_format(&spec, text, sizeof text), "tls://[2001:db8::1]:6514");
    assert_int_equal(syslog_sink_parse("tcp://127.0.0.1:10514", &spec, err, sizeof err), 0);
    assert_int_equal(spec.proto, SYSLOG_PROTO_TCP);
    assert_int_not_equal(syslog_sink_parse("127.0.0.1:514", &spec, err, sizeof err), 0);
    assert_non_null(strstr(err, "udp://HOST:PORT"));
    assert_int_not_equal(syslog_sink_parse("http://127.0.0.1:514", &spec, err, sizeof err), 0);
    assert_int_not_equal(syslog_sink_parse("udp://collector.example:514", &spec, err, sizeof err), 0);
    assert_int_not_equal(syslog_sink_parse("tcp://127.0.0.1:0", &spec, err, sizeof err), 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_udp_lines_leave_from_the_devices_address, ts_setup, ts_teardown),
        cmocka_unit_test_setup_teardown(test_tcp_frames_are_exact, ts_setup, ts_teardown),
        cmocka_unit_test_setup_teardown(test_tcp_lf_framing, ts_setup, ts_teardown),
        cmocka_unit_test_setup_teardown(test_a_full_queue_drops_and_close_counts_the_rest, ts_setup,
                                        ts_teardown),
        cmocka_unit_test_setup_teardown(test_a_collector_that_goes_away_is_reconnected, ts_setup,
                                        ts_teardown),
        cmocka_unit_test(test_sink_urls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
