/*
 * Unit tests of the stress client's pieces that turn input into numbers:
 * edit-content placeholders (stress/template.c), latency percentiles and
 * error-tag counts (stress/stats.c), and the command line (stress/options.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "conn_internal.h"
#include "json_read.h"
#include "options.h"
#include "report.h"
#include "restconf_fill.h"
#include "stats.h"
#include "template.h"

static char *
expand(const char *text, struct template_vars v)
{
    struct template t;
    struct sbuf b = {0};

    assert_int_equal(template_init(&t, strdup(text)), 0);
    template_expand(&t, &v, &b);
    template_free(&t);
    return sbuf_take(&b, NULL);
}

static void
test_placeholders_expand_to_their_values(void **state)
{
    char *out = expand("<a>{INDEX}/{MSG_ID}/{SESSION}/{DEVICE}</a>",
                       (struct template_vars){.index = 42, .msg_id = 7, .session = 3, .device = 9});

    (void)state;
    assert_string_equal(out, "<a>42/7/3/9</a>");
    free(out);
}

static void
test_phys_addr_counts_up_from_aabbccdd0000(void **state)
{
    char *first = expand("{PHYS_ADDR}", (struct template_vars){.index = 0});
    char *later = expand("{PHYS_ADDR}", (struct template_vars){.index = 0x1ff});
    char *carry = expand("{PHYS_ADDR}", (struct template_vars){.index = 0x10000});

    (void)state;
    assert_string_equal(first, "aa:bb:cc:dd:00:00");
    assert_string_equal(later, "aa:bb:cc:dd:01:ff");
    assert_string_equal(carry, "aa:bb:cc:de:00:00");
    free(first);
    free(later);
    free(carry);
}

static void
test_unknown_braces_and_repeats_are_kept_as_text(void **state)
{
    char *out = expand("{NOPE}{INDEX}{INDEX}{", (struct template_vars){.index = 5});

    (void)state;
    assert_string_equal(out, "{NOPE}55{");
    free(out);
}

static void
test_text_without_placeholders_is_copied(void **state)
{
    char *out = expand("<x xmlns=\"urn:x\"/>", (struct template_vars){0});

    (void)state;
    assert_string_equal(out, "<x xmlns=\"urn:x\"/>");
    free(out);
}

static void
test_percentiles_use_nearest_rank(void **state)
{
    struct latency l = {0};

    (void)state;
    for (uint32_t v = 100; v >= 1; v--) {
        assert_int_equal(latency_add(&l, v), 0);
    }
    latency_sort(&l);
    assert_int_equal(latency_percentile(&l, 50), 50);
    assert_int_equal(latency_percentile(&l, 90), 90);
    assert_int_equal(latency_percentile(&l, 99), 99);
    assert_int_equal(latency_percentile(&l, 99.9), 100);
    assert_int_equal(latency_percentile(&l, 100), 100);
    assert_int_equal(latency_percentile(&l, 0.5), 1);
    latency_free(&l);
}

static void
test_percentile_of_empty_set_is_zero_and_merge_keeps_all(void **state)
{
    struct latency a = {0};
    struct latency b = {0};

    (void)state;
    assert_int_equal(latency_percentile(&a, 50), 0);
    latency_add(&a, 5);
    latency_add(&b, 1);
    latency_add(&b, 9);
    assert_int_equal(latency_merge(&a, &b), 0);
    latency_sort(&a);
    assert_int_equal(a.count, 3);
    assert_int_equal(latency_percentile(&a, 100), 9);
    assert_int_equal(latency_percentile(&a, 1), 1);
    latency_free(&a);
    latency_free(&b);
}

static void
test_error_tags_are_counted_per_tag(void **state)
{
    struct tag_counts t = {0};

    (void)state;
    tags_add(&t, "data-exists", 1);
    tags_add(&t, "in-use", 2);
    tags_add(&t, "data-exists", 3);
    tags_add(&t, "", 1);
    assert_int_equal(t.count, 3);
    assert_string_equal(t.items[0].tag, "data-exists");
    assert_int_equal(t.items[0].count, 4);
    assert_int_equal(t.items[1].count, 2);
    assert_string_equal(t.items[2].tag, "(no error-tag)");
    tags_free(&t);
}

static void
test_json_strings_are_escaped(void **state)
{
    struct sbuf b = {0};

    (void)state;
    sbuf_add_json(&b, "a\"b\\c\n\x01");
    assert_string_equal(b.buf, "\"a\\\"b\\\\c\\u000a\\u0001\"");
    sbuf_free(&b);
}

static enum stress_parse
parse(struct stress_options *o, char *err, size_t len, int argc, const char **argv)
{
    return stress_options_parse(argc, (char **)argv, o, err, len);
}

static void
test_edit_defaults_follow_opendaylight(void **state)
{
    const char *argv[] = {"fleetsim-stress", "edit"};
    struct stress_options o;
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, err, sizeof err, 2, argv), STRESS_PARSE_RUN);
    assert_int_equal(o.mode, STRESS_EDIT);
    assert_int_equal(o.port, 17830);
    assert_int_equal(o.ip, 0x7f000001u);
    assert_int_equal(o.edits, 50000);
    assert_int_equal(o.candidate, 1);
    assert_int_equal(o.async, 0);
    assert_int_equal(o.threads, 1);
    assert_int_equal(o.msg_timeout_s, 60);
    assert_int_equal(o.batch_size, 0);
}

static void
test_opendaylight_flags_are_understood(void **state)
{
    const char *argv[] = {"fleetsim-stress",
                          "edit",
                          "--ip",
                          "127.0.0.2",
                          "--port",
                          "2830",
                          "--edits",
                          "1000",
                          "--edit-batch-size",
                          "-1",
                          "--candidate-datastore",
                          "false",
                          "--async-requests",
                          "true",
                          "--thread-amount",
                          "4",
                          "--msg-timeout",
                          "5",
                          "--ssh",
                          "false",
                          "--username",
                          "u",
                          "--password",
                          "p"};
    struct stress_options o;
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, err, sizeof err, sizeof argv / sizeof argv[0], argv), STRESS_PARSE_RUN);
    assert_int_equal(o.ip, 0x7f000002u);
    assert_int_equal(o.port, 2830);
    assert_int_equal(o.edits, 1000);
    assert_int_equal(o.batch_size, 0);
    assert_int_equal(o.candidate, 0);
    assert_int_equal(o.async, 1);
    assert_int_equal(o.threads, 4);
    assert_int_equal(o.msg_timeout_s, 5);
    assert_string_equal(o.username, "u");
}

static void
test_bad_usage_is_refused_with_a_message(void **state)
{
    const char *unknown[] = {"fleetsim-stress", "edit", "--bogus"};
    const char *ssh[] = {"fleetsim-stress", "snmp", "--ssh", "true"};
    const char *threads[] = {"fleetsim-stress", "edit", "--edits", "2", "--thread-amount", "3"};
    const char *ports[] = {"fleetsim-stress", "mount", "--port", "65535", "--device-count", "2"};
    const char *sub[] = {"fleetsim-stress", "frobnicate"};
    struct stress_options o;
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, err, sizeof err, 3, unknown), STRESS_PARSE_ERROR);
    assert_string_equal(err, "unknown option \"--bogus\" (see --help)");
    assert_int_equal(parse(&o, err, sizeof err, 4, ssh), STRESS_PARSE_ERROR);
    assert_non_null(strstr(err, "--ssh is for"));
    assert_int_equal(parse(&o, err, sizeof err, 6, threads), STRESS_PARSE_ERROR);
    assert_string_equal(err, "--thread-amount 3 is more than --edits 2: every session needs an edit");
    assert_int_equal(parse(&o, err, sizeof err, 6, ports), STRESS_PARSE_ERROR);
    assert_string_equal(err, "2 devices from port 65535 need ports past 65535");
    assert_int_equal(parse(&o, err, sizeof err, 2, sub), STRESS_PARSE_ERROR);
    assert_string_equal(err,
                        "unknown subcommand \"frobnicate\": use edit, mount, snmp, notify, reconcile, "
                        "controller-mount, record, restconf, report, merge, ceiling or push (see --help)");
}

/* Issue 30: ceiling's defaults are the method's, its durations take units, and what it needs is asked for. */
static void
test_ceiling_options_default_to_the_method_and_refuse_what_it_cannot_run(void **state)
{
    struct stress_options o;
    char err[512];
    const char *plain[] = {"fleetsim-stress",       "ceiling",     "--fleet",
                           "http://127.0.0.1:9464", "--persisted", "cmd:echo 1"};
    const char *timed[] = {"fleetsim-stress", "ceiling",
                           "--fleet",         "http://127.0.0.1:9464",
                           "--persisted",     "cmd:echo 1",
                           "--window",        "1.5m",
                           "--sample",        "500ms",
                           "--dropped",       "rx=cmd:echo 0",
                           "--sut",           "queue=LinkedList",
                           "--measure",       "all"};
    const char *no_fleet[] = {"fleetsim-stress", "ceiling", "--persisted", "cmd:echo 1"};
    const char *no_persisted[] = {"fleetsim-stress", "ceiling", "--fleet", "http://127.0.0.1:9464"};
    const char *no_ceiling[] = {"fleetsim-stress", "ceiling",    "--fleet",   "http://127.0.0.1:9464",
                                "--persisted",     "cmd:echo 1", "--measure", "loss-isolation"};
    const char *bad_window[] = {"fleetsim-stress", "ceiling",    "--fleet",  "http://127.0.0.1:9464",
                                "--persisted",     "cmd:echo 1", "--window", "15 minutes"};
    const char *short_window[] = {"fleetsim-stress", "ceiling",    "--fleet",  "http://127.0.0.1:9464",
                                  "--persisted",     "cmd:echo 1", "--window", "10s",
                                  "--sample",        "5s"};
    const char *bad_dropped[] = {"fleetsim-stress", "ceiling",    "--fleet",   "http://127.0.0.1:9464",
                                 "--persisted",     "cmd:echo 1", "--dropped", "cmd:echo 0"};
    const char *ordering[] = {"fleetsim-stress", "ceiling",    "--fleet",    "http://127.0.0.1:9464",
                              "--persisted",     "cmd:echo 1", "--ordering", "/tmp/persisted.log",
                              "--run-tag",       "r1"};
    const char *ordering_alone[] = {"fleetsim-stress", "ceiling",    "--fleet",   "http://127.0.0.1:9464",
                                    "--persisted",     "cmd:echo 1", "--ordering"};
    const char *recon_ordering[] = {"fleetsim-stress", "reconcile", "--sent",   "a.json",
                                    "--received",      "b.log",     "--format", "syslog",
                                    "--ordering",      "--json",    "r.json"};
    const char *upside_down[] = {"fleetsim-stress",
                                 "ceiling",
                                 "--fleet",
                                 "http://127.0.0.1:9464",
                                 "--persisted",
                                 "cmd:echo 1",
                                 "--from",
                                 "10",
                                 "--to",
                                 "5"};

    (void)state;
    assert_int_equal(parse(&o, err, sizeof err, 6, plain), STRESS_PARSE_RUN);
    assert_int_equal(o.mode, STRESS_CEILING);
    assert_int_equal(o.measure, CEILING_SUSTAINED);
    assert_true(o.window_s == 900 && o.sample_s == 5 && o.settle_s == 300 && o.burst_s == 60);
    assert_true(o.precision == 0.05 && o.tolerance == 0.005 && o.slope_share == 0.01 && o.drift == 0.05);
    assert_true(o.rate_from == 1 && o.burst_rate == 10); /* 10 x --from */
    assert_int_equal(parse(&o, err, sizeof err, 16, timed), STRESS_PARSE_RUN);
    assert_true(o.window_s == 90 && o.sample_s == 0.5 && o.measure == CEILING_ALL);
    assert_int_equal(o.dropped.count, 1);
    assert_string_equal(o.dropped.paths[0], "rx=cmd:echo 0");
    assert_int_equal(o.sut.count, 1);
    assert_int_equal(parse(&o, err, sizeof err, 4, no_fleet), STRESS_PARSE_ERROR);
    assert_non_null(strstr(err, "--fleet"));
    assert_int_equal(parse(&o, err, sizeof err, 4, no_persisted), STRESS_PARSE_ERROR);
    assert_non_null(strstr(err, "--persisted"));
    assert_int_equal(parse(&o, err, sizeof err, 8, no_ceiling), STRESS_PARSE_ERROR);
    assert_non_null(strstr(err, "--ceiling"));
    assert_int_equal(parse(&o, err, sizeof err, 8, bad_window), STRESS_PARSE_ERROR);
    assert_non_null(strstr(err, "--window takes a duration"));
    assert_int_equal(parse(&o, err, sizeof err, 10, short_window), STRESS_PARSE_ERROR);
    assert_non_null(strstr(err, "three --sample periods"));
    assert_int_equal(parse(&o, err, sizeof err, 8, bad_dropped), STRESS_PARSE_ERROR);
    assert_non_null(strstr(err, "NAME=PROBE"));
    assert_int_equal(parse(&o, err, sizeof err, 10, upside_down), STRESS_PARSE_ERROR);
    assert_non_null(strstr(err, "--to"));
    /* --ordering is a flag of reconcile and takes a file here: both read as their mode says. */
    assert_int_equal(parse(&o, err, sizeof err, 10, ordering), STRESS_PARSE_RUN);
    assert_string_equal(o.ordering_path, "/tmp/persisted.log");
    assert_string_equal(o.recv_run_tag, "r1");
    assert_int_equal(parse(&o, err, sizeof err, 7, ordering_alone), STRESS_PARSE_ERROR);
    assert_string_equal(err, "option --ordering needs a value");
    assert_int_equal(parse(&o, err, sizeof err, 11, recon_ordering), STRESS_PARSE_RUN);
    assert_true(o.recv_ordering && o.json_path && !strcmp(o.json_path, "r.json"));
}

/* Issue 13: "-ip" named argv[0] in its error, and "--legacy-framing true" left "true" as a stray argument. */
static void
test_single_dash_words_and_flag_values_are_read(void **state)
{
    const char *dash[] = {"fleetsim-stress", "edit", "-ip", "127.0.0.3", "-edits", "7"};
    const char *flags[] = {"fleetsim-stress", "mount", "--legacy-framing", "true",
                           "--ip-per-device", "false", "--device-count",   "2"};
    const char *alone[] = {"fleetsim-stress", "mount", "--legacy-framing", "--device-count", "2"};
    const char *unknown[] = {"fleetsim-stress", "edit", "-xyz"};
    struct stress_options o;
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, err, sizeof err, 6, dash), STRESS_PARSE_RUN);
    assert_int_equal(o.ip, 0x7f000003u);
    assert_int_equal(o.edits, 7);
    assert_int_equal(parse(&o, err, sizeof err, 8, flags), STRESS_PARSE_RUN);
    assert_int_equal(o.legacy_framing, 1);
    assert_int_equal(o.ip_per_device, 0);
    assert_int_equal(o.device_count, 2);
    assert_int_equal(parse(&o, err, sizeof err, 5, alone), STRESS_PARSE_RUN);
    assert_int_equal(o.legacy_framing, 1);
    assert_int_equal(parse(&o, err, sizeof err, 3, unknown), STRESS_PARSE_ERROR);
    assert_string_equal(err, "unknown option \"-xyz\" (see --help)");
}

/* Issue 13: without --ssh the transport is detected; the options only record that it was left out. */
static void
test_ssh_left_out_means_detected(void **state)
{
    const char *plain[] = {"fleetsim-stress", "mount"};
    const char *key[] = {"fleetsim-stress", "mount", "--ssh-key", "k"};
    const char *preamble[] = {"fleetsim-stress", "mount", "--tcp-preamble", "p"};
    const char *key_tcp[] = {"fleetsim-stress", "mount", "--ssh", "false", "--ssh-key", "k"};
    struct stress_options o;
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, err, sizeof err, 2, plain), STRESS_PARSE_RUN);
    assert_int_equal(o.ssh, -1);
    assert_int_equal(parse(&o, err, sizeof err, 4, key), STRESS_PARSE_RUN);
    assert_int_equal(o.ssh, -1);
    assert_int_equal(parse(&o, err, sizeof err, 4, preamble), STRESS_PARSE_RUN);
    assert_int_equal(o.ssh, 0); /* the preamble implies TCP */
    assert_int_equal(parse(&o, err, sizeof err, 6, key_tcp), STRESS_PARSE_ERROR);
    assert_string_equal(err, "--ssh-key is for SSH; it cannot be combined with --ssh false");
}

/* Issue 19: --tls true with its files; it excludes SSH and the plain-TCP preambles, and its files need it. */
static void
test_tls_options_exclude_ssh_and_need_tls(void **state)
{
    const char *tls[] = {"fleetsim-stress", "edit",      "--tls", "true",     "--tls-cert",
                         "c.pem",           "--tls-key", "c.key", "--tls-ca", "ca.pem"};
    const char *host[] = {"fleetsim-stress", "mount", "--tls", "true", "--tls-verify-host", "true"};
    const char *with_ssh[] = {"fleetsim-stress", "mount", "--tls", "true", "--ssh", "true"};
    const char *ssh_false[] = {"fleetsim-stress", "notify", "--tls", "true", "--ssh", "false"};
    const char *cert_only[] = {"fleetsim-stress", "edit", "--tls", "true", "--tls-cert", "c.pem"};
    const char *no_tls[] = {"fleetsim-stress", "mount", "--tls-ca", "ca.pem"};
    const char *snmp[] = {"fleetsim-stress", "snmp", "--tls", "true"};
    const char *restconf[] = {"fleetsim-stress", "restconf", "--tls", "true"};
    const char *preamble[] = {"fleetsim-stress", "mount", "--tls", "true", "--tcp-preamble", "p"};
    const char *key[] = {"fleetsim-stress", "mount", "--tls", "true", "--ssh-key", "k"};
    struct stress_options o;
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, err, sizeof err, 2, tls), STRESS_PARSE_RUN); /* the defaults */
    assert_int_equal(o.tls, 0);
    assert_null(o.tls_cert);
    assert_null(o.tls_ca);
    assert_int_equal(o.tls_verify_host, 0);
    assert_int_equal(parse(&o, err, sizeof err, 10, tls), STRESS_PARSE_RUN);
    assert_int_equal(o.tls, 1);
    assert_int_equal(o.ssh, 0); /* no SSH set-up, no detection */
    assert_string_equal(o.tls_cert, "c.pem");
    assert_string_equal(o.tls_key, "c.key");
    assert_string_equal(o.tls_ca, "ca.pem");
    assert_int_equal(parse(&o, err, sizeof err, 6, host), STRESS_PARSE_RUN);
    assert_int_equal(o.tls_verify_host, 1);
    assert_int_equal(parse(&o, err, sizeof err, 6, ssh_false), STRESS_PARSE_RUN);
    assert_int_equal(parse(&o, err, sizeof err, 6, with_ssh), STRESS_PARSE_ERROR);
    assert_string_equal(err, "--tls true and --ssh true exclude each other: NETCONF runs over one of them");
    assert_int_equal(parse(&o, err, sizeof err, 6, cert_only), STRESS_PARSE_ERROR);
    assert_string_equal(err, "--tls-cert and --tls-key go together: the certificate and its key");
    assert_int_equal(parse(&o, err, sizeof err, 4, no_tls), STRESS_PARSE_ERROR);
    assert_string_equal(err, "--tls-ca is for TLS: give --tls true too");
    assert_int_equal(parse(&o, err, sizeof err, 4, snmp), STRESS_PARSE_ERROR);
    assert_string_equal(err, "--tls is for edit, mount, notify and record (NETCONF)");
    assert_int_equal(parse(&o, err, sizeof err, 4, restconf), STRESS_PARSE_ERROR);
    assert_string_equal(err, "--tls and its options are for edit, mount, notify and record (NETCONF)");
    assert_int_equal(parse(&o, err, sizeof err, 6, preamble), STRESS_PARSE_ERROR);
    assert_string_equal(err, "--tcp-preamble is for plain TCP; it cannot be combined with --tls true");
    assert_int_equal(parse(&o, err, sizeof err, 6, key), STRESS_PARSE_ERROR);
    assert_string_equal(err,
                        "--ssh-key is for SSH; it cannot be combined with --tls true (use --tls-cert and "
                        "--tls-key)");
}

static void
test_first_bytes_tell_ssh_from_netconf_over_tcp(void **state)
{
    static const char banner[] = "SSH-2.0-libssh_0.10.6\r\n";
    static const char pre[] = "hello there\r\nSSH-2.0-OpenSSH_9.2\r\n";
    static const char hello[] = "<?xml version=\"1.0\"?><hello/>";
    static const char bom[] = "\xef\xbb\xbf\n <hello/>";
    char q[64];

    (void)state;
    assert_int_equal(conn_detect_classify(banner, strlen(banner)), CONN_DETECT_SSH);
    assert_int_equal(conn_detect_classify("SS", 2), CONN_DETECT_SSH); /* the rest is on its way */
    assert_int_equal(conn_detect_classify(pre, strlen(pre)), CONN_DETECT_SSH);
    assert_int_equal(conn_detect_classify(hello, strlen(hello)), CONN_DETECT_XML);
    assert_int_equal(conn_detect_classify(bom, strlen(bom)), CONN_DETECT_XML);
    assert_int_equal(conn_detect_classify("#12\n", 4), CONN_DETECT_UNKNOWN);
    assert_int_equal(conn_detect_classify("SSX-", 4), CONN_DETECT_UNKNOWN);
    assert_int_equal(conn_detect_classify("", 0), CONN_DETECT_UNKNOWN);
    /* The quote is the first line, printable, at most 48 characters and then "...". */
    assert_int_equal(conn_detect_quote(banner, strlen(banner), q, sizeof q), 21);
    assert_string_equal(q, "SSH-2.0-libssh_0.10.6");
    conn_detect_quote("a\001b\tc", 5, q, sizeof q);
    assert_string_equal(q, "a.b.c");
    conn_detect_quote("0123456789012345678901234567890123456789012345678901234567890", 61, q, sizeof q);
    assert_string_equal(q, "012345678901234567890123456789012345678901234567...");
    conn_detect_quote(banner, strlen(banner), q, 5);
    assert_string_equal(q, "SSH-");
}

/* OpenDaylight's filling: first {PEERID}/{INTLEAF} (only with {PEERID}), first {DEVICE_PORT}, every
 * {PHYS_ADDR} its own MAC. */
static void
test_restconf_fill_as_opendaylight(void **state)
{
    struct rfill f;
    struct rfill_vars v = {
        .stream = 3, .request = 41, .device_port = 17833, .mac_first = RFILL_PHYS_ADDR_BASE + 255};
    struct sbuf b = {0};
    char *url;
    struct net_family fam;
    uint32_t ip;
    char node[64];

    (void)state;
    assert_int_equal(
        rfill_init(&f,
                   strdup("a{PEERID}b{INTLEAF}{PEERID}{DEVICE_PORT}{DEVICE_PORT}{PHYS_ADDR}-{PHYS_ADDR}")),
        0);
    assert_int_equal(f.phys_addr_count, 2);
    rfill_expand(&f, &v, &b);
    sbuf_adds(&b, "");
    assert_string_equal(b.buf, "a3b41{PEERID}17833{DEVICE_PORT}aa:bb:cc:dd:00:ff-aa:bb:cc:dd:01:00");
    rfill_free(&f);
    b.len = 0;
    assert_int_equal(rfill_init(&f, strdup("{INTLEAF} alone")), 0);
    rfill_expand(&f, &v, &b);
    sbuf_adds(&b, "");
    assert_string_equal(b.buf, "{INTLEAF} alone");
    rfill_free(&f);
    sbuf_free(&b);
    assert_int_equal(netaddr_parse("127.0.0.1", &fam, &ip), 0);
    url = rfill_url(&fam, ip, 8182, "/x/node={DEVICE_PORT}-sim-device/yang-ext:mount/{DEVICE_PORT}", 17830);
    assert_string_equal(url, "http://127.0.0.1:8182/x/node=17830-sim-device/yang-ext:mount/{DEVICE_PORT}");
    rfill_node(url, node, sizeof node);
    assert_string_equal(node, "17830-sim-device");
    free(url);
    /* An IPv6 controller is bracketed (RFC 3986); the placeholders are untouched by the host's colons. */
    assert_int_equal(netaddr_parse("fd00::1", &fam, &ip), 0);
    url = rfill_url(&fam, ip, 8182, "/x/node={DEVICE_PORT}-sim-device/yang-ext:mount/{DEVICE_PORT}", 17830);
    assert_string_equal(url, "http://[fd00::1]:8182/x/node=17830-sim-device/yang-ext:mount/{DEVICE_PORT}");
    rfill_node(url, node, sizeof node);
    assert_string_equal(node, "17830-sim-device");
    free(url);
}

static void
test_restconf_defaults_and_auth_follow_opendaylight(void **state)
{
    struct stress_options o;
    char err[256];
    char *def[] = {"fleetsim-stress", "restconf", NULL};
    char *auth[] = {"fleetsim-stress", "restconf", "--auth",          "u", "p",
                    "--timeout",       "2",        "--thread-amount", "2", NULL};

    (void)state;
    assert_int_equal(stress_options_parse(2, def, &o, err, sizeof err), STRESS_PARSE_RUN);
    assert_int_equal(o.port, 8182);
    assert_int_equal(o.edits, 50000);
    assert_int_equal(o.async, 1);
    assert_int_equal(o.throttle, 5000);
    assert_int_equal(o.same_device, 1);
    assert_int_equal(o.device_port_start, 17830);
    assert_true(o.run_timeout_s == 300.0);
    assert_string_equal(o.username, "admin");
    assert_string_equal(o.destination, STRESS_RESTCONF_DEFAULT_DESTINATION);
    assert_int_equal(stress_options_parse(9, auth, &o, err, sizeof err), STRESS_PARSE_RUN);
    assert_string_equal(o.username, "u");
    assert_string_equal(o.password, "p");
    assert_true(o.run_timeout_s == 120.0);
    assert_int_equal(o.threads, 2);
}

/* Fixed log buckets: bucket i holds [10^(i/10), 10^((i+1)/10)), whole microseconds; 0 in bucket 0. */
static void
test_histogram_buckets_are_fixed_tenths_of_a_decade(void **state)
{
    struct latency l = {0};
    struct sbuf b = {0};
    (void)state;
    assert_int_equal(stats_hist_bucket(0), 0);
    assert_int_equal(stats_hist_bucket(1), 0);
    assert_int_equal(stats_hist_bucket(2), 3); /* 10^0.3 = 1.995 <= 2 < 10^0.4 */
    assert_int_equal(stats_hist_bucket(9), 9); /* 10^0.9 = 7.94 <= 9 < 10 */
    assert_int_equal(stats_hist_bucket(10), 10);
    assert_int_equal(stats_hist_bucket(99), 19);
    assert_int_equal(stats_hist_bucket(100), 20);
    assert_int_equal(stats_hist_bucket(1000000), 60);
    assert_int_equal(stats_hist_bucket(999999), 59);
    assert_int_equal(stats_hist_bucket(UINT32_MAX), 96);
    latency_add(&l, 1);
    latency_add(&l, 10);
    latency_add(&l, 12);
    latency_histogram_json(&b, "h", &l);
    assert_string_equal(b.buf,
                        "\"h\":{\"unit\":\"us\",\"buckets_per_decade\":10,\"first_upper\":1,\"counts\":"
                        "[1,0,0,0,0,0,0,0,0,0,2]}");
    latency_free(&l);
    sbuf_free(&b);
}

/* Per-second series pad to the length asked; named series keep their names in order of first sight. */
static void
test_per_second_series(void **state)
{
    struct persec p = {0};
    struct persec_names t = {0};
    struct sbuf b = {0};
    (void)state;
    assert_int_equal(persec_add(&p, 2, 5), 0);
    assert_int_equal(persec_add(&p, 0, 1), 0);
    assert_int_equal(persec_add(&p, 200, 1), 0);
    assert_int_equal(p.len, 201);
    persec_json(&b, &p, 4);
    assert_string_equal(b.buf, "[1,0,5,0]");
    b.len = 0;
    assert_int_equal(persec_names_add(&t, "in-use", 1, 2), 0);
    assert_int_equal(persec_names_add(&t, "", 0, 1), 0);
    assert_int_equal(persec_names_add(&t, "in-use", 1, 1), 0);
    persec_names_json(&b, &t, 2);
    assert_string_equal(b.buf, "{\"in-use\":[0,3],\"(no error-tag)\":[1,0]}");
    persec_free(&p);
    persec_names_free(&t);
    sbuf_free(&b);
}

static int
check_manifest(const char *text, char *why, size_t len)
{
    struct jsonr_value *m = NULL;
    char err[128];
    int rc;
    assert_int_equal(jsonr_parse(text, strlen(text), &m, err, sizeof err), 0);
    rc = report_check(m, why, len);
    jsonr_free(m);
    return rc;
}

/* The report reads fleetsim-stress manifests of its own MAJOR.MINOR and of a known mode only. */
static void
test_report_checks_tool_version_and_mode(void **state)
{
    char why[256];
    char text[256];
    (void)state;
    snprintf(text, sizeof text,
             "{\"tool\":\"fleetsim-stress\",\"version\":\"%s\",\"mode\":\"edit\",\"parameters\":{},"
             "\"results\":{}}",
             FLEETSIM_VERSION);
    assert_int_equal(check_manifest(text, why, sizeof why), 0);
    assert_int_equal(
        check_manifest("{\"tool\":\"k6\",\"version\":\"0.1.0\",\"mode\":\"edit\"}", why, sizeof why), -1);
    assert_non_null(strstr(why, "not a fleetsim-stress manifest"));
    assert_int_equal(check_manifest("{\"tool\":\"fleetsim-stress\",\"version\":\"9.0.0\",\"mode\":\"edit\","
                                    "\"parameters\":{},\"results\":{}}",
                                    why, sizeof why),
                     -1);
    assert_non_null(strstr(why, "version \"9.0.0\" is unknown"));
    snprintf(text, sizeof text,
             "{\"tool\":\"fleetsim-stress\",\"version\":\"%s\",\"mode\":\"record\",\"parameters\":{},"
             "\"results\":{}}",
             FLEETSIM_VERSION);
    assert_int_equal(check_manifest(text, why, sizeof why), -1);
    assert_non_null(strstr(why, "has no report"));
}

/* push (issue 31): periodic or on-change, centiseconds, one filter; the values as the RPC carries them. */
static void
test_push_options_give_centiseconds_and_refuse_mixtures(void **state)
{
    const char *periodic[] = {"fleetsim-stress",     "push", "--period", "0.25", "--anchor-time",
                              "2026-12-07T22:00:00Z"};
    const char *on_change[] = {"fleetsim-stress",   "push",           "--dampening",   "0.5",
                               "--excluded-change", "create,replace", "--change-rate", "10",
                               "--datastore",       "running"};
    const char *both[] = {"fleetsim-stress", "push", "--period", "1", "--dampening", "0"};
    const char *neither[] = {"fleetsim-stress", "push"};
    const char *fraction[] = {"fleetsim-stress", "push", "--period", "0.123"};
    const char *filters[] = {"fleetsim-stress", "push", "--period", "1", "--xpath", "/a", "--subtree", "f"};
    const char *rate[] = {"fleetsim-stress", "push", "--period", "1", "--change-rate", "5"};
    const char *change[] = {"fleetsim-stress",   "push",        "--dampening", "0",
                            "--excluded-change", "create,moved"};
    struct stress_options o;
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, err, sizeof err, 6, periodic), STRESS_PARSE_RUN);
    assert_int_equal(o.mode, STRESS_PUSH);
    assert_int_equal(o.period_cs, 25);
    assert_int_equal(o.on_change, 0);
    assert_int_equal(o.push_datastore, PUSH_DS_OPERATIONAL);
    assert_string_equal(o.anchor_time, "2026-12-07T22:00:00Z");
    assert_int_equal(parse(&o, err, sizeof err, 10, on_change), STRESS_PARSE_RUN);
    assert_int_equal(o.on_change, 1);
    assert_int_equal(o.dampening_cs, 50);
    assert_int_equal(o.period_cs, 0);
    assert_int_equal(o.sync_on_start, 1);
    assert_int_equal(o.push_datastore, PUSH_DS_RUNNING);
    assert_string_equal(o.change_interface, "GigabitEthernet0/0/0/0");
    assert_int_equal(parse(&o, err, sizeof err, 6, both), STRESS_PARSE_ERROR);
    assert_string_equal(err, "push needs --period S (periodic) or --dampening S (on-change), one of them");
    assert_int_equal(parse(&o, err, sizeof err, 2, neither), STRESS_PARSE_ERROR);
    assert_string_equal(err, "push needs --period S (periodic) or --dampening S (on-change), one of them");
    assert_int_equal(parse(&o, err, sizeof err, 4, fraction), STRESS_PARSE_ERROR);
    assert_string_equal(err, "--period 0.123 is not a whole number of centiseconds");
    assert_int_equal(parse(&o, err, sizeof err, 8, filters), STRESS_PARSE_ERROR);
    assert_string_equal(err, "--xpath and --subtree exclude each other: a subscription has one filter");
    assert_int_equal(parse(&o, err, sizeof err, 6, rate), STRESS_PARSE_ERROR);
    assert_string_equal(err, "--sync-on-start, --excluded-change and --change-rate are for on-change "
                             "subscriptions (--dampening S)");
    assert_int_equal(parse(&o, err, sizeof err, 6, change), STRESS_PARSE_ERROR);
    assert_string_equal(err, "--excluded-change: \"moved\" is none of create, delete, insert, move, replace");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_histogram_buckets_are_fixed_tenths_of_a_decade),
        cmocka_unit_test(test_per_second_series),
        cmocka_unit_test(test_report_checks_tool_version_and_mode),
        cmocka_unit_test(test_placeholders_expand_to_their_values),
        cmocka_unit_test(test_phys_addr_counts_up_from_aabbccdd0000),
        cmocka_unit_test(test_unknown_braces_and_repeats_are_kept_as_text),
        cmocka_unit_test(test_text_without_placeholders_is_copied),
        cmocka_unit_test(test_percentiles_use_nearest_rank),
        cmocka_unit_test(test_percentile_of_empty_set_is_zero_and_merge_keeps_all),
        cmocka_unit_test(test_error_tags_are_counted_per_tag),
        cmocka_unit_test(test_json_strings_are_escaped),
        cmocka_unit_test(test_edit_defaults_follow_opendaylight),
        cmocka_unit_test(test_opendaylight_flags_are_understood),
        cmocka_unit_test(test_bad_usage_is_refused_with_a_message),
        cmocka_unit_test(test_push_options_give_centiseconds_and_refuse_mixtures),
        cmocka_unit_test(test_ceiling_options_default_to_the_method_and_refuse_what_it_cannot_run),
        cmocka_unit_test(test_single_dash_words_and_flag_values_are_read),
        cmocka_unit_test(test_ssh_left_out_means_detected),
        cmocka_unit_test(test_tls_options_exclude_ssh_and_need_tls),
        cmocka_unit_test(test_first_bytes_tell_ssh_from_netconf_over_tcp),
        cmocka_unit_test(test_restconf_fill_as_opendaylight),
        cmocka_unit_test(test_restconf_defaults_and_auth_follow_opendaylight),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
