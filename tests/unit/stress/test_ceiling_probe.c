/*
 * Unit tests of fleetsim-stress ceiling's probes and fleet client
 * (stress/ceiling_probe.c, stress/ceiling_fleet.c), issue 30: probe specs,
 * real Prometheus answers (Debian's prometheus scraping a fleetsim), a real
 * /metrics text and real /api/v1/fleet answers of fleetsim, command output,
 * commands actually run (exit status, timeout, no child left), and the HTTP
 * paths against a one-connection-at-a-time server on loopback.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ceiling_fleet.h"
#include "ceiling_probe.h"

/* fleetsim_push_messages_total{channel="syslog",state="sent"} */
static const char PROM_ONE[] =
    "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{\"__name__\":\""
    "fleetsim_push_messages_total\",\"channel\":\"syslog\",\"instance\":\"127.0.0.1:19464\",\"job\":\"fle"
    "etsim\",\"state\":\"sent\"},\"value\":[1796669786.736,\"121\"]}]}}";

/* fleetsim_push_messages_total{channel="syslog",state=~"sent|in_window|emitted"}: 3 x 157 */
static const char PROM_MANY[] =
    "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{\"__name__\":\""
    "fleetsim_push_messages_total\",\"channel\":\"syslog\",\"instance\":\"127.0.0.1:19464\",\"job\":\"fle"
    "etsim\",\"state\":\"emitted\"},\"value\":[1796669791.977,\"157\"]},{\"metric\":{\"__name__\":\"fleet"
    "sim_push_messages_total\",\"channel\":\"syslog\",\"instance\":\"127.0.0.1:19464\",\"job\":\"fleetsim"
    "\",\"state\":\"in_window\"},\"value\":[1796669791.977,\"157\"]},{\"metric\":{\"__name__\":\"fleetsim"
    "_push_messages_total\",\"channel\":\"syslog\",\"instance\":\"127.0.0.1:19464\",\"job\":\"fleetsim\","
    "\"state\":\"sent\"},\"value\":[1796669791.977,\"157\"]}]}}";

/* scalar(sum(fleetsim_push_messages_total{state="sent"})) */
static const char PROM_SCALAR[] =
    "{\"status\":\"success\",\"data\":{\"resultType\":\"scalar\",\"result\":[1796669787.076,\"127\"]}}";

/* fleetsim_no_such_metric */
static const char PROM_EMPTY[] =
    "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[]}}";

/* sum(rate(x[1m] (HTTP 400) */
static const char PROM_ERROR[] =
    "{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"invalid parameter \\\"query\\\": 1:15: "
    "parse error: unclosed left parenthesis\"}";

/* fleetsim_push_messages_total{channel="syslog",state="sent"}[5s] */
static const char PROM_MATRIX[] =
    "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":{\"__name__\":\""
    "fleetsim_push_messages_total\",\"channel\":\"syslog\",\"instance\":\"127.0.0.1:19464\",\"job\":\"fle"
    "etsim\",\"state\":\"sent\"},\"values\":[[1796669782.711,\"103\"],[1796669783.724,\"109\"],[179666978"
    "4.711,\"115\"],[1796669785.711,\"121\"],[1796669786.727,\"127\"]]}]}}";

/* 0/0 */
static const char PROM_NAN[] =
    "{\"status\":\"success\",\"data\":{\"resultType\":\"scalar\",\"result\":[1796669787.87,\"NaN\"]}}";

/* vector(1)/0 */
static const char PROM_INF[] =
    "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{},\"value\":[17"
    "96669792.540,\"+Inf\"]}]}}";

/* /metrics of fleetsim --syslog-sink udp://127.0.0.1:19514 --syslog-rate 2 (the push families) */
static const char METRICS_SYSLOG[] =
    "fleetsim_traps_total{state=\"acknowledged\"} 0\n"
    "fleetsim_traps_total{state=\"timed_out\"} 0\n"
    "# HELP fleetsim_trap_retries_total Inform retransmissions.\n"
    "# TYPE fleetsim_trap_retries_total counter\n"
    "fleetsim_trap_retries_total 0\n"
    "# HELP fleetsim_push_messages_total Push messages by channel and ledger state, over every device and"
    " sink (sent = in_window + drain; queued is a gauge).\n"
    "# TYPE fleetsim_push_messages_total counter\n"
    "fleetsim_push_messages_total{channel=\"syslog\",state=\"emitted\"} 87\n"
    "fleetsim_push_messages_total{channel=\"syslog\",state=\"sent\"} 87\n"
    "fleetsim_push_messages_total{channel=\"syslog\",state=\"in_window\"} 87\n"
    "fleetsim_push_messages_total{channel=\"syslog\",state=\"drain\"} 0\n"
    "fleetsim_push_messages_total{channel=\"syslog\",state=\"send_failures\"} 0\n"
    "fleetsim_push_messages_total{channel=\"syslog\",state=\"dropped\"} 0\n"
    "fleetsim_push_messages_total{channel=\"syslog\",state=\"suppressed_pre_window\"} 0\n"
    "fleetsim_push_messages_total{channel=\"syslog\",state=\"queued\"} 0\n"
    "fleetsim_push_messages_total{channel=\"trap\",state=\"emitted\"} 0\n"
    "fleetsim_push_messages_total{channel=\"trap\",state=\"sent\"} 0\n"
    "fleetsim_push_messages_total{channel=\"trap\",state=\"in_window\"} 0\n"
    "fleetsim_push_messages_total{channel=\"trap\",state=\"drain\"} 0\n"
    "fleetsim_push_messages_total{channel=\"trap\",state=\"send_failures\"} 0\n"
    "fleetsim_push_messages_total{channel=\"trap\",state=\"dropped\"} 0\n"
    "fleetsim_push_messages_total{channel=\"trap\",state=\"suppressed_pre_window\"} 0\n"
    "fleetsim_push_messages_total{channel=\"trap\",state=\"queued\"} 0\n"
    "fleetsim_push_messages_total{channel=\"netconf\",state=\"emitted\"} 0\n"
    "fleetsim_push_messages_total{channel=\"netconf\",state=\"sent\"} 0\n"
    "fleetsim_push_messages_total{channel=\"netconf\",state=\"in_window\"} 0\n"
    "fleetsim_push_messages_total{channel=\"netconf\",state=\"drain\"} 0\n"
    "fleetsim_push_messages_total{channel=\"netconf\",state=\"send_failures\"} 0\n"
    "fleetsim_push_messages_total{channel=\"netconf\",state=\"dropped\"} 0\n"
    "fleetsim_push_messages_total{channel=\"netconf\",state=\"suppressed_pre_window\"} 0\n"
    "fleetsim_push_messages_total{channel=\"netconf\",state=\"queued\"} 0\n"
    "# HELP fleetsim_push_sink_messages_total Push messages by channel, sink and ledger state, over every"
    " device (sent = in_window + drain).\n"
    "# TYPE fleetsim_push_sink_messages_total counter\n"
    "fleetsim_push_sink_messages_total{channel=\"syslog\",sink=\"udp://127.0.0.1:19514\",state=\"emitted"
    "\"} 87\n"
    "fleetsim_push_sink_messages_total{channel=\"syslog\",sink=\"udp://127.0.0.1:19514\",state=\"in_windo"
    "w\"} 87\n"
    "fleetsim_push_sink_messages_total{channel=\"syslog\",sink=\"udp://127.0.0.1:19514\",state=\"drain\"}"
    " 0\n"
    "fleetsim_push_sink_messages_total{channel=\"syslog\",sink=\"udp://127.0.0.1:19514\",state=\"send_fai"
    "lures\"} 0\n"
    "fleetsim_push_sink_messages_total{channel=\"syslog\",sink=\"udp://127.0.0.1:19514\",state=\"dropped"
    "\"} 0\n"
    "fleetsim_push_sink_messages_total{channel=\"syslog\",sink=\"udp://127.0.0.1:19514\",state=\"suppress"
    "ed_pre_window\"} 0\n"
    "fleetsim_push_sink_messages_total{channel=\"syslog\",sink=\"udp://127.0.0.1:19514\",state=\"sent\"} "
    "87\n"
    "fleetsim_push_sink_messages_total{channel=\"netconf\",sink=\"subscribers\",state=\"emitted\"} 0\n"
    "fleetsim_push_sink_messages_total{channel=\"netconf\",sink=\"subscribers\",state=\"in_window\"} 0\n"
    "fleetsim_push_sink_messages_total{channel=\"netconf\",sink=\"subscribers\",state=\"drain\"} 0\n"
    "fleetsim_push_sink_messages_total{channel=\"netconf\",sink=\"subscribers\",state=\"send_failures\"} "
    "0\n"
    "fleetsim_push_sink_messages_total{channel=\"netconf\",sink=\"subscribers\",state=\"dropped\"} 0\n"
    "fleetsim_push_sink_messages_total{channel=\"netconf\",sink=\"subscribers\",state=\"suppressed_pre_wi"
    "ndow\"} 0\n";

/* /api/v1/fleet of fleetsim --device-count 3 --syslog-sink udp://127.0.0.1:19514 --syslog-rate 2 */
static const char FLEET_ONE_GROUP[] =
    "{\"version\":\"0.1.0\",\"devices\":3,\"present\":3,\"first_device\":0,\"fleet_devices\":3,\"groups\""
    ":[{\"name\":\"default\",\"type\":\"minimal\",\"first\":0,\"last\":2,\"count\":3,\"present\":3,\"addr"
    "ess_first\":\"127.0.0.1\",\"address_last\":\"127.0.0.1\",\"netconf_port_first\":21830,\"netconf_port"
    "_last\":21832,\"push\":{\"syslog\":{\"sinks\":[\"udp://127.0.0.1:19514\"],\"format\":\"rfc5424\",\"f"
    "raming\":\"octet-counting\",\"rate\":\"2\"},\"trap\":null,\"notification\":null}}],\"states\":{\"up"
    "\":3,\"down\":0,\"rebooting\":0,\"absent\":0},\"sessions_open\":0,\"seed\":1,\"scenario\":null}\n";

/* /api/v1/fleet of a fleet file of groups core (2) and edge (3), syslog over TCP, traps, notifications */
static const char FLEET_TWO_GROUPS[] =
    "{\"version\":\"0.1.0\",\"devices\":5,\"present\":5,\"first_device\":0,\"fleet_devices\":5,\"groups\""
    ":[{\"name\":\"core\",\"type\":\"minimal\",\"first\":0,\"last\":1,\"count\":2,\"present\":2,\"address"
    "_first\":\"127.0.0.1\",\"address_last\":\"127.0.0.1\",\"netconf_port_first\":21840,\"netconf_port_la"
    "st\":21841,\"push\":{\"syslog\":{\"sinks\":[\"tcp://127.0.0.1:19601\"],\"format\":\"rfc3164\",\"fram"
    "ing\":\"octet-counting\",\"rate\":\"1\"},\"trap\":{\"sinks\":[\"udp://127.0.0.1:19162\"],\"version\""
    ":\"v2c\",\"inform\":false,\"rate\":\"0.5\"},\"notification\":{\"file\":\"/work/wt/cprobe/notificatio"
    "ns/routes-1.xml\",\"rate\":\"2\"}}},{\"name\":\"edge\",\"type\":\"minimal\",\"first\":2,\"last\":4,"
    "\"count\":3,\"present\":3,\"address_first\":\"127.0.0.1\",\"address_last\":\"127.0.0.1\",\"netconf_p"
    "ort_first\":21850,\"netconf_port_last\":21852,\"push\":{\"syslog\":{\"sinks\":[\"tcp://127.0.0.1:196"
    "01\"],\"format\":\"rfc3164\",\"framing\":\"octet-counting\",\"rate\":\"1\"},\"trap\":{\"sinks\":[\"u"
    "dp://127.0.0.1:19162\"],\"version\":\"v2c\",\"inform\":false,\"rate\":\"0.5\"},\"notification\":{\"f"
    "ile\":\"/work/wt/cprobe/notifications/routes-1.xml\",\"rate\":\"2\"}}}],\"states\":{\"up\":5,\"down"
    "\":0,\"rebooting\":0,\"absent\":0},\"sessions_open\":0,\"seed\":1,\"scenario\":null}\n";

static double
now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Parse @p spec, expecting success. */
static void
parse_ok(const char *spec, const char *base, const char *query)
{
    struct ceil_probe p;
    char err[256] = "";

    if (ceil_probe_parse("arrived", spec, 2, &p, err, sizeof err)) {
        fail_msg("%s: %s", spec, err);
    }
    if (base) {
        assert_int_equal(p.kind, CEIL_PROBE_PROM);
        assert_string_equal(p.base_url, base);
    } else {
        assert_int_equal(p.kind, CEIL_PROBE_CMD);
        assert_null(p.base_url);
    }
    assert_string_equal(p.query, query);
    assert_string_equal(p.text, spec);
    assert_string_equal(p.name, "arrived");
    ceil_probe_free(&p);
}

static void
parse_refused(const char *spec, const char *want)
{
    struct ceil_probe p;
    char err[256] = "";

    assert_int_equal(ceil_probe_parse("queue", spec, 2, &p, err, sizeof err), -1);
    assert_string_equal(err, want);
    assert_null(p.text);
}

static void
test_probe_specs_parsed(void **state)
{
    (void)state;
    parse_ok("prom:http://127.0.0.1:9090:sum(rate(x[1m]))", "http://127.0.0.1:9090", "sum(rate(x[1m]))");
    parse_ok("prom:https://[::1]:9090/prom/:up", "https://[::1]:9090/prom", "up");
    parse_ok("prom:http://prom.example/api-root:up{job=\"a:b\"}", "http://prom.example/api-root",
             "up{job=\"a:b\"}");
    /* no port: what follows the host's ':' is the query, even when it starts with a digit */
    parse_ok("prom:http://prom:rate(x[5m])", "http://prom", "rate(x[5m])");
    parse_ok("prom:http://prom:1+1", "http://prom", "1+1");
    parse_ok("prom:http://[fd00::2]:up", "http://[fd00::2]", "up");
    parse_ok("cmd:cat /run/depth | wc -l", NULL, "cat /run/depth | wc -l");
}

static void
test_bad_probe_specs_refused_with_the_form(void **state)
{
    static const char usage[] =
        "prom probe needs prom:BASE_URL:QUERY, e.g. prom:http://127.0.0.1:9090:sum(rate(x[1m]))";
    char want[512];

    (void)state;
    snprintf(want, sizeof want, "--queue \"prom:http://127.0.0.1:9090\": %s", usage);
    parse_refused("prom:http://127.0.0.1:9090", want);
    snprintf(want, sizeof want, "--queue \"prom:http://127.0.0.1:9090:\": %s", usage);
    parse_refused("prom:http://127.0.0.1:9090:", want);
    snprintf(want, sizeof want, "--queue \"prom:ftp://h:up\": %s", usage);
    parse_refused("prom:ftp://h:up", want);
    snprintf(want, sizeof want, "--queue \"prom:http://:up\": %s", usage);
    parse_refused("prom:http://:up", want);
    snprintf(want, sizeof want, "--queue \"prom:http://[::1:up\": %s", usage);
    parse_refused("prom:http://[::1:up", want);
    parse_refused("cmd:  ", "--queue \"cmd:  \": cmd probe needs cmd:COMMAND, e.g. cmd:cat /run/queue-depth");
    parse_refused("snmp:1.3.6",
                  "--queue \"snmp:1.3.6\": a probe is prom:BASE_URL:QUERY (a Prometheus instant "
                  "query), cmd:COMMAND (prints one number) or file:PATH:REGEX (the last matching line of a "
                  "file)");
}

static void
prom_value(const char *body, double want)
{
    char err[256] = "";
    double v = -1;

    if (ceil_prom_answer_value(body, strlen(body), &v, err, sizeof err)) {
        fail_msg("%s", err);
    }
    assert_true(v == want);
}

static void
prom_refused(const char *body, const char *want)
{
    char err[256] = "";
    double v = -1;

    assert_int_equal(ceil_prom_answer_value(body, strlen(body), &v, err, sizeof err), -1);
    assert_string_equal(err, want);
    assert_true(v == -1);
}

static void
test_prom_answers_read_as_one_number(void **state)
{
    (void)state;
    prom_value(PROM_ONE, 121);
    prom_value(PROM_MANY, 3 * 157);
    prom_value(PROM_SCALAR, 127);
    prom_refused(PROM_EMPTY, "the query matched no series");
    prom_refused(PROM_ERROR, "Prometheus answered error: bad_data: invalid parameter \"query\": 1:15: parse "
                             "error: unclosed left parenthesis");
    prom_refused(PROM_MATRIX, "the query gives a matrix; an instant vector or a scalar is needed");
    prom_refused(PROM_NAN, "the query's value is \"NaN\", not a finite number");
    prom_refused(PROM_INF, "the query's value is \"+Inf\", not a finite number");
    prom_refused("{\"status\":\"success\"",
                 "the answer is not JSON (line 1 column 20: unexpected end: missing '}')");
}

static void
cmd_value(const char *out, double want)
{
    char err[256] = "";
    double v = -1;

    if (ceil_cmd_output_value(out, strlen(out), &v, err, sizeof err)) {
        fail_msg("\"%s\": %s", out, err);
    }
    assert_true(v == want);
}

static void
cmd_refused(const char *out, const char *want)
{
    char err[256] = "";
    double v = -1;

    assert_int_equal(ceil_cmd_output_value(out, strlen(out), &v, err, sizeof err), -1);
    assert_string_equal(err, want);
}

static void
test_command_output_is_one_number(void **state)
{
    (void)state;
    cmd_value("42\n", 42);
    cmd_value("  \t1.5e3 \n", 1500);
    cmd_value("-3", -3);
    cmd_value("0.25", 0.25);
    cmd_refused("", "the command printed no number");
    cmd_refused(" \n", "the command printed no number");
    cmd_refused("12 13\n", "the command printed \"12 13\", not one number");
    cmd_refused("abc", "the command printed \"abc\", not one number");
    cmd_refused("nan", "the command printed \"nan\", not one number");
    cmd_refused("inf\n", "the command printed \"inf\", not one number");
    cmd_refused("0x10", "the command printed \"0x10\", not one number");
    cmd_refused("1e999", "the command printed \"1e999\", not one number");
}

static void
test_metrics_sent_of_each_channel(void **state)
{
    static const char reordered[] = "# TYPE fleetsim_push_messages_total counter\n"
                                    "fleetsim_push_messages_total{state=\"sent\",channel=\"trap\"} 12\n"
                                    "fleetsim_push_messages_total{channel=\"trap\",state=\"sent_x\"} 99\n";
    static const char family_only[] = "# HELP fleetsim_push_messages_total Push messages.\n"
                                      "# TYPE fleetsim_push_messages_total counter\n";
    static const char other_family[] = "# TYPE fleetsim_push_sink_messages_total counter\n"
                                       "fleetsim_push_sink_messages_total{channel=\"syslog\",sink=\"udp://"
                                       "127.0.0.1:19514\",state=\"sent\"} 87\n";
    double v = -1;

    (void)state;
    assert_int_equal(ceil_metrics_sent(METRICS_SYSLOG, strlen(METRICS_SYSLOG), "syslog", &v), 0);
    assert_true(v == 87);
    assert_int_equal(ceil_metrics_sent(METRICS_SYSLOG, strlen(METRICS_SYSLOG), "trap", &v), 0);
    assert_true(v == 0);
    assert_int_equal(ceil_metrics_sent(METRICS_SYSLOG, strlen(METRICS_SYSLOG), "netconf", &v), 0);
    assert_true(v == 0);
    assert_int_equal(ceil_metrics_sent(reordered, strlen(reordered), "trap", &v), 0);
    assert_true(v == 12);
    /* the family without the channel's series: nothing sent yet */
    v = -1;
    assert_int_equal(ceil_metrics_sent(family_only, strlen(family_only), "syslog", &v), 0);
    assert_true(v == 0);
    /* neither the family nor the series: not a fleetsim with the push ledger */
    assert_int_equal(ceil_metrics_sent(other_family, strlen(other_family), "syslog", &v), -1);
    assert_int_equal(ceil_metrics_sent("", 0, "syslog", &v), -1);
}

static void
info_ok(const char *body, const char *group, enum ceil_channel ch, struct ceil_fleet_info *info)
{
    char err[256] = "";

    if (ceil_fleet_info_parse(body, strlen(body), group, ch, info, err, sizeof err)) {
        fail_msg("%s", err);
    }
}

static void
test_fleet_info_of_the_fleet_and_of_a_group(void **state)
{
    struct ceil_fleet_info i;
    char err[256] = "";

    (void)state;
    info_ok(FLEET_ONE_GROUP, NULL, CEIL_CHANNEL_SYSLOG, &i);
    assert_int_equal(i.devices, 3);
    assert_int_equal(i.first, 0);
    assert_int_equal(i.last, 2);
    assert_string_equal(i.version, "0.1.0");
    assert_string_equal(i.format, "rfc5424");
    assert_string_equal(i.transport, "udp");
    assert_string_equal(i.group_type, "");
    info_ok(FLEET_ONE_GROUP, "default", CEIL_CHANNEL_TRAP, &i);
    assert_string_equal(i.format, "");
    assert_string_equal(i.transport, "");
    assert_string_equal(i.group_type, "minimal");

    info_ok(FLEET_TWO_GROUPS, "edge", CEIL_CHANNEL_SYSLOG, &i);
    assert_int_equal(i.devices, 3);
    assert_int_equal(i.first, 2);
    assert_int_equal(i.last, 4);
    assert_string_equal(i.format, "rfc3164");
    assert_string_equal(i.transport, "tcp");
    info_ok(FLEET_TWO_GROUPS, "core", CEIL_CHANNEL_TRAP, &i);
    assert_int_equal(i.devices, 2);
    assert_int_equal(i.first, 0);
    assert_int_equal(i.last, 1);
    assert_string_equal(i.format, "v2c");
    assert_string_equal(i.transport, "udp");
    info_ok(FLEET_TWO_GROUPS, NULL, CEIL_CHANNEL_NOTIFICATION, &i);
    assert_int_equal(i.devices, 5);
    assert_int_equal(i.last, 4);
    assert_string_equal(i.transport, "netconf");

    assert_int_equal(ceil_fleet_info_parse(FLEET_TWO_GROUPS, strlen(FLEET_TWO_GROUPS), "nope",
                                           CEIL_CHANNEL_SYSLOG, &i, err, sizeof err),
                     -1);
    assert_string_equal(err, "the fleet has no group \"nope\"");
    assert_int_equal(
        ceil_fleet_info_parse("{\"groups\":[]}", 13, NULL, CEIL_CHANNEL_SYSLOG, &i, err, sizeof err), -1);
    assert_string_equal(err, "/api/v1/fleet: no \"groups\", \"present\" or \"fleet_devices\"");
}

/* 1 when this process has no child left, running or unreaped. */
static int
no_child_left(void)
{
    return waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD;
}

static void
test_command_probes_run(void **state)
{
    struct ceil_probe p;
    char err[256] = "";
    double v = -1, t0;

    (void)state;
    assert_int_equal(ceil_probe_parse("persisted", "cmd:echo 42", 2, &p, err, sizeof err), 0);
    assert_int_equal(ceil_probe_read(&p, &v), 0);
    assert_true(v == 42);
    ceil_probe_free(&p);

    assert_int_equal(
        ceil_probe_parse("persisted", "cmd:echo 7; echo boom >&2; exit 3", 2, &p, err, sizeof err), 0);
    assert_int_equal(ceil_probe_read(&p, &v), -1);
    assert_string_equal(p.last_error, "the command exited with status 3: boom");
    assert_int_equal(p.failures, 1);
    ceil_probe_free(&p);

    assert_int_equal(ceil_probe_parse("persisted", "cmd:echo twelve", 2, &p, err, sizeof err), 0);
    assert_int_equal(ceil_probe_read(&p, &v), -1);
    assert_string_equal(p.last_error, "the command printed \"twelve\", not one number");
    ceil_probe_free(&p);

    /* the shell and the sleep it started are both ended at the timeout */
    assert_int_equal(ceil_probe_parse("persisted", "cmd:sleep 5; echo 1", 0.3, &p, err, sizeof err), 0);
    t0 = now_s();
    assert_int_equal(ceil_probe_read(&p, &v), -1);
    assert_true(now_s() - t0 < 1.0);
    assert_string_equal(p.last_error, "the command took longer than 0.3 s and was killed");
    assert_true(no_child_left());
    ceil_probe_free(&p);
}

/* A loopback HTTP server answering its connections one after the other with canned answers. */
struct canned {
    int status;       /* HTTP status */
    const char *body; /* the answer */
};

struct server {
    int fd;                   /* listening socket */
    uint16_t port;            /* its port */
    const struct canned *ans; /* answers, in order */
    int count;                /* entries in ans */
    char requests[8][2048];   /* what each connection sent (head and body) */
};

static void *
serve(void *arg)
{
    struct server *s = arg;

    for (int i = 0; i < s->count; i++) {
        int c = accept(s->fd, NULL, NULL);
        size_t got = 0;
        char head[256];
        if (c < 0) {
            return NULL;
        }
        /* read until the head is complete and the body (Content-Length) is in */
        for (;;) {
            ssize_t n = read(c, s->requests[i] + got, sizeof s->requests[i] - 1 - got);
            char *end, *cl;
            if (n <= 0) {
                break;
            }
            got += (size_t)n;
            s->requests[i][got] = '\0';
            if (!(end = strstr(s->requests[i], "\r\n\r\n"))) {
                continue;
            }
            cl = strstr(s->requests[i], "Content-Length: ");
            if (!cl || (size_t)(end + 4 - s->requests[i]) + strtoul(cl + 16, NULL, 10) <= got) {
                break;
            }
        }
        snprintf(head, sizeof head,
                 "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\nConnection: "
                 "close\r\n\r\n",
                 s->ans[i].status, strlen(s->ans[i].body));
        /* no cmocka assert off the test's thread: a short write shows as the client's failure */
        if (write(c, head, strlen(head)) > 0 && write(c, s->ans[i].body, strlen(s->ans[i].body)) < 0) {
            perror("test server write");
        }
        close(c);
    }
    return NULL;
}

/* Listen on 127.0.0.1 on a port drawn below 32768 (another when it is taken). */
static void
server_start(struct server *s, const struct canned *ans, int count, pthread_t *t)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};

    memset(s, 0, sizeof *s);
    s->ans = ans;
    s->count = count;
    srand((unsigned)getpid() ^ (unsigned)time(NULL));
    for (int tries = 0; tries < 50; tries++) {
        s->port = (uint16_t)(20000 + rand() % 12000);
        a.sin_port = htons(s->port);
        s->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(s->fd >= 0);
        if (!bind(s->fd, (struct sockaddr *)&a, sizeof a) && !listen(s->fd, 8)) {
            assert_int_equal(pthread_create(t, NULL, serve, s), 0);
            return;
        }
        close(s->fd);
    }
    fail_msg("no free loopback port");
}

/* Two intervals of rsyslog 8.2302's impstats (format="json", resetCounters="off"), as it writes them. */
static const char impstats_lines[] =
    "2026-12-07T19:40:01.000000+00:00 h rsyslogd-pstats: { \"name\": \"imudp(127.0.0.1\\/10514\\/IPv4)\", "
    "\"origin\": \"imudp\", \"submitted\": 1200, \"disallowed\": 0 }\n"
    "2026-12-07T19:40:01.000000+00:00 h rsyslogd-pstats: { \"name\": \"persist queue\", \"origin\": "
    "\"core.queue\", \"size\": 37, \"enqueued\": 1200, \"full\": 0, \"maxqsize\": 40 }\n"
    "{ \"name\": \"imudp(127.0.0.1\\/10514\\/IPv4)\", \"origin\": \"imudp\", \"submitted\": 1450 }\n"
    "{ \"name\": \"persist queue\", \"origin\": \"core.queue\", \"size\": 12, \"enqueued\": 1450 }\n";

/* Issue 30: a file: probe reads the last matching line's number, in the process (no command per read). */
static void
test_file_probe_reads_the_last_matching_line(void **state)
{
    struct ceil_probe p;
    char err[300], path[] = "/tmp/test_ceiling_probe_XXXXXX", *text;
    double v = -1;
    FILE *f;
    int fd;

    (void)state;
    assert_int_equal(
        ceil_probe_parse("arrived",
                         "file:/nonexistent:\"name\": \"imudp\\(127\\.0\\.0\\.1\\\\/10514\\\\/IPv4\\)\""
                         ".*\"submitted\": ([0-9]+)",
                         1, &p, err, sizeof err),
        0);
    assert_int_equal(p.kind, CEIL_PROBE_FILE);
    assert_string_equal(p.path, "/nonexistent");
    text = strdup(impstats_lines);
    assert_int_equal(ceil_file_last_match(text, strlen(text), p.regex, &v, err, sizeof err), 0);
    assert_true(v == 1450); /* the later interval's, not the first */
    free(text);
    assert_int_equal(ceil_probe_read(&p, &v), -1); /* the file is not there: an error, never a 0 */
    assert_non_null(strstr(p.last_error, "/nonexistent"));
    ceil_probe_free(&p);

    /* Over a real file whose tail starts inside a line, and a queue depth that is the whole match. */
    assert_true((fd = mkstemp(path)) >= 0);
    assert_non_null(f = fdopen(fd, "w"));
    for (unsigned i = 0; i < 4000; i++) { /* past CEIL_FILE_TAIL_BYTES: only the tail is read */
        fprintf(f, "{ \"name\": \"persist queue\", \"origin\": \"core.queue\", \"size\": %u }\n", i);
    }
    fclose(f);
    snprintf(err, sizeof err, "file:%s:\"name\": \"persist queue\".*\"size\": ([0-9]+)", path);
    text = strdup(err);
    assert_int_equal(ceil_probe_parse("queue", text, 1, &p, err, sizeof err), 0);
    assert_int_equal(ceil_probe_read(&p, &v), 0);
    assert_true(v == 3999);
    ceil_probe_free(&p);
    free(text);
    snprintf(err, sizeof err, "file:%s:\"name\": \"other queue\".*\"size\": ([0-9]+)", path);
    text = strdup(err);
    assert_int_equal(ceil_probe_parse("queue", text, 1, &p, err, sizeof err), 0);
    assert_int_equal(ceil_probe_read(&p, &v), -1);
    assert_non_null(strstr(p.last_error, "no line matches"));
    ceil_probe_free(&p);
    free(text);
    unlink(path);

    /* Refused at the start: no path, no expression, an expression that does not compile. */
    assert_int_equal(ceil_probe_parse("queue", "file:/x", 1, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "file:PATH:REGEX"));
    assert_int_equal(ceil_probe_parse("queue", "file:/x:size (", 1, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "is not valid"));
}

static void
test_prom_probe_over_http(void **state)
{
    static const struct canned ans[] = {{200, PROM_MANY}, {400, PROM_ERROR}};
    struct server s;
    struct ceil_probe p;
    pthread_t t;
    char spec[128], err[256] = "", want[512];
    double v = -1;

    (void)state;
    server_start(&s, ans, 2, &t);
    snprintf(spec, sizeof spec, "prom:http://127.0.0.1:%u/:sum(rate(x[1m]))", s.port);
    assert_int_equal(ceil_probe_parse("arrived", spec, 2, &p, err, sizeof err), 0);
    assert_int_equal(ceil_probe_read(&p, &v), 0);
    assert_true(v == 3 * 157);
    assert_non_null(
        strstr(s.requests[0], "GET /api/v1/query?query=sum%28rate%28x%5B1m%5D%29%29 HTTP/1.1\r\n"));
    assert_int_equal(ceil_probe_read(&p, &v), -1);
    snprintf(want, sizeof want,
             "http://127.0.0.1:%u/api/v1/query?query=sum%%28rate%%28x%%5B1m%%5D%%29%%29: HTTP 400: bad_data: "
             "invalid parameter \"query\": 1:15: parse error: unclosed left parenthesis",
             s.port);
    assert_string_equal(p.last_error, want);
    assert_int_equal(p.reads, 2);
    assert_int_equal(p.failures, 1);
    pthread_join(t, NULL);
    close(s.fd);
    ceil_probe_free(&p);
}

static void
test_fleet_client_over_http(void **state)
{
    static const struct canned ans[] = {
        {200, FLEET_TWO_GROUPS},
        {200, "{\"action\":\"syslog-rate\",\"seq\":0,\"devices\":3,\"failed\":0,\"elsewhere\":0,\"ranges\":[["
              "2,4]],"
              "\"ranges_truncated\":false}"},
        {200, "{\"action\":\"syslog-rate\",\"seq\":1,\"devices\":3,\"failed\":1,\"elsewhere\":0,\"ranges\":[["
              "2,4]],"
              "\"ranges_truncated\":false}"},
        {404, "{\"error\":\"no group \\\"edge\\\"\"}"},
        {200, METRICS_SYSLOG},
        {200, FLEET_ONE_GROUP},
        {200, "{\"action\":\"syslog-rate\",\"seq\":0,\"devices\":3,\"failed\":0}"},
        {200, "{\"action\":\"syslog-rate\",\"seq\":1,\"devices\":0,\"failed\":0}"},
    };
    char token_path[] = "/tmp/fleetsim-ceil-token-XXXXXX", url[64], err[256] = "", want[256];
    struct server s;
    struct ceil_fleet f;
    pthread_t t;
    double sent = -1;
    int fd = mkstemp(token_path);

    (void)state;
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "s3cret \n", 8), 8);
    close(fd);
    server_start(&s, ans, 8, &t);
    snprintf(url, sizeof url, "http://127.0.0.1:%u/", s.port);
    if (ceil_fleet_open(&f, url, token_path, "edge", CEIL_CHANNEL_SYSLOG, 2, err, sizeof err)) {
        fail_msg("%s", err);
    }
    assert_non_null(strstr(s.requests[0], "GET /api/v1/fleet HTTP/1.1\r\n"));
    assert_non_null(strstr(s.requests[0], "\r\nAuthorization: Bearer s3cret\r\n"));
    assert_int_equal(f.info.devices, 3);
    assert_int_equal(ceil_fleet_set_rate(&f, 2.5), 0);
    assert_non_null(strstr(s.requests[1], "POST /api/v1/groups/edge/syslog-rate HTTP/1.1\r\n"));
    assert_non_null(strstr(s.requests[1], "\r\n\r\n{\"rate\": 2.5}"));
    assert_int_equal(ceil_fleet_set_rate(&f, -1), -1);
    assert_non_null(strstr(s.requests[2], "\r\n\r\n{\"rate\": null}"));
    assert_string_equal(f.last_error, "/api/v1/groups/edge/syslog-rate: 1 devices did not take the rate");
    assert_int_equal(ceil_fleet_set_rate(&f, 1), -1);
    snprintf(want, sizeof want,
             "http://127.0.0.1:%u/api/v1/groups/edge/syslog-rate: HTTP 404: no group \"edge\"", s.port);
    assert_string_equal(f.last_error, want);
    assert_int_equal(ceil_fleet_sent(&f, &sent), 0);
    assert_true(sent == 87);
    assert_non_null(strstr(s.requests[4], "GET /metrics HTTP/1.1\r\n"));
    ceil_fleet_close(&f);

    /* the whole fleet: its devices' range, without a token */
    assert_int_equal(ceil_fleet_open(&f, url, NULL, NULL, CEIL_CHANNEL_SYSLOG, 2, err, sizeof err), 0);
    assert_null(strstr(s.requests[5], "Authorization"));
    assert_int_equal(ceil_fleet_set_rate(&f, 4), 0);
    assert_non_null(strstr(s.requests[6], "POST /api/v1/devices/0-2/syslog-rate HTTP/1.1\r\n"));
    /* every device absent: the rate is set nowhere */
    assert_int_equal(ceil_fleet_set_rate(&f, 4), -1);
    assert_string_equal(f.last_error,
                        "/api/v1/devices/0-2/syslog-rate: no device took the rate (all absent?)");
    ceil_fleet_close(&f);
    pthread_join(t, NULL);
    close(s.fd);

    /* nobody listening any more */
    assert_int_equal(ceil_fleet_open(&f, url, NULL, NULL, CEIL_CHANNEL_SYSLOG, 2, err, sizeof err), -1);
    assert_non_null(strstr(err, "/api/v1/fleet: "));
    unlink(token_path);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_probe_specs_parsed),
        cmocka_unit_test(test_bad_probe_specs_refused_with_the_form),
        cmocka_unit_test(test_prom_answers_read_as_one_number),
        cmocka_unit_test(test_command_output_is_one_number),
        cmocka_unit_test(test_metrics_sent_of_each_channel),
        cmocka_unit_test(test_fleet_info_of_the_fleet_and_of_a_group),
        cmocka_unit_test(test_command_probes_run),
        cmocka_unit_test(test_file_probe_reads_the_last_matching_line),
        cmocka_unit_test(test_prom_probe_over_http),
        cmocka_unit_test(test_fleet_client_over_http),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
