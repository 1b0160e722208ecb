/*
 * Unit tests of the fleet file (testtool/fleet_file.c) and of the command
 * line's apply-by-name (testtool/cli.c). examples/fleet.json and
 * examples/fleet.xml are loaded as shipped and must give the same two
 * groups, with relative paths resolved against examples/. Broken fleet
 * files are written to a temporary folder, one defect each, and must be
 * refused with one line naming the file, the line and the problem; the
 * ASan build checks that nothing leaks, also on the refusal paths.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fleet_file.h"

/* Longest folder path a test keeps, and longest path it builds from one. */
#define TF_DIR_BYTES  2048
#define TF_PATH_BYTES 4096
/* Room for a loader message. */
#define TF_ERR_BYTES 1024
/* Most files one test writes. */
#define TF_MAX_FILES 4

/* One test's folders and files. */
struct tf_state {
    char src[TF_DIR_BYTES];                  /* the source tree */
    char tmp[TF_DIR_BYTES];                  /* a fresh folder for the fleet files a test writes */
    char files[TF_MAX_FILES][TF_PATH_BYTES]; /* files written there, to remove */
    uint32_t file_count;                     /* entries used in files */
    char err[TF_ERR_BYTES];                  /* the loader's message */
    struct fleet_config base;                /* the command line the groups start from */
    struct fleet_file ff;                    /* what the loader made */
};

static int
tf_setup(void **state)
{
    struct tf_state *st = calloc(1, sizeof *st);
    const char *src = getenv("FLEETSIM_SOURCE_DIR");
    char schemas[TF_PATH_BYTES];

    assert_non_null(st);
    snprintf(st->src, sizeof st->src, "%s", src ? src : FLEETSIM_SCHEMA_DIR "/..");
    snprintf(schemas, sizeof schemas, "%s/schemas", st->src);
    setenv("FLEETSIM_SCHEMA_DIR", schemas, 1);
    snprintf(st->tmp, sizeof st->tmp, "/tmp/fleetsim-test-fleet-file-XXXXXX");
    assert_non_null(mkdtemp(st->tmp));
    cli_defaults(&st->base);
    *state = st;
    return 0;
}

static int
tf_teardown(void **state)
{
    struct tf_state *st = *state;

    fleet_file_free(&st->ff);
    for (uint32_t i = 0; i < st->file_count; i++) {
        unlink(st->files[i]);
    }
    assert_int_equal(rmdir(st->tmp), 0);
    free(st);
    return 0;
}

/* Write text to NAME in the test's folder; returns its path. */
static const char *
tf_write(struct tf_state *st, const char *name, const char *text)
{
    char *path = st->files[st->file_count];
    FILE *f;

    assert_true(st->file_count < TF_MAX_FILES);
    snprintf(path, TF_PATH_BYTES, "%s/%s", st->tmp, name);
    assert_non_null(f = fopen(path, "w"));
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
    st->file_count++;
    return path;
}

/* Load a file that must be refused with rc; the message must be "PATH" + expected_tail. */
static void
tf_refused(struct tf_state *st, const char *path, enum fleet_err rc, const char *expected_tail)
{
    char expected[TF_PATH_BYTES + TF_ERR_BYTES];

    assert_int_equal(fleet_file_load(path, &st->base, &st->ff, st->err, sizeof st->err), rc);
    snprintf(expected, sizeof expected, "%s%s", path, expected_tail);
    assert_string_equal(st->err, expected);
    assert_null(strchr(st->err, '\n'));
}

/* The groups of examples/fleet.json (and .xml): core of crs-x, edge of the vendor folder. */
static void
tf_check_example(struct tf_state *st, const char *name, uint32_t core_line, uint32_t edge_line)
{
    char path[TF_PATH_BYTES], want[TF_PATH_BYTES];
    const struct fleet_group_spec *core, *edge;

    /* The command line's options reach every group that does not set them. */
    st->base.username = "bob";
    st->base.snmp_community = "c0mm";
    snprintf(path, sizeof path, "%s/examples/%s", st->src, name);
    if (fleet_file_load(path, &st->base, &st->ff, st->err, sizeof st->err)) {
        fail_msg("%s", st->err);
    }
    assert_int_equal(st->ff.group_count, 2);
    core = &st->ff.groups[0];
    edge = &st->ff.groups[1];
    assert_string_equal(core->name, "core");
    assert_string_equal(edge->name, "edge");
    assert_int_equal(core->line, core_line);
    assert_int_equal(edge->line, edge_line);
    assert_int_equal(core->cfg.device_count, 100);
    assert_int_equal(edge->cfg.device_count, 100);
    assert_int_equal(core->cfg.ip, 0x7f000101u);
    assert_int_equal(edge->cfg.ip, 0x7f000201u);
    assert_int_equal(core->cfg.ip_per_device, 1);
    assert_int_equal(edge->cfg.ip_per_device, 1);
    assert_int_equal(core->cfg.starting_port, 17830);
    assert_int_equal(edge->cfg.starting_port, 17830);
    assert_int_equal(core->cfg.snmp_starting_port, 16100);
    assert_int_equal(edge->cfg.snmp_starting_port, 16100);
    assert_int_equal(core->cfg.ssh, 0);
    assert_int_equal(edge->cfg.ssh, 0);
    assert_string_equal(core->cfg.profile, "crs-x"); /* a built-in name: not a path */
    assert_string_equal(edge->cfg.profile, "minimal");
    assert_null(core->cfg.schemas_dir);
    assert_null(core->cfg.initial_config_file);
    snprintf(want, sizeof want, "%s/examples/vendor-yang", st->src);
    assert_string_equal(edge->cfg.schemas_dir, want);
    snprintf(want, sizeof want, "%s/examples/vendor-yang-config.xml", st->src);
    assert_string_equal(edge->cfg.initial_config_file, want);
    assert_string_equal(core->cfg.username, "bob");
    assert_string_equal(edge->cfg.snmp_community, "c0mm");
    assert_null(core->cfg.fleet_file);
    assert_ptr_equal(edge->cfg.schema_opts.features, edge->cfg.feature_pins);
}

static void
test_example_json_loads_two_groups(void **state)
{
    tf_check_example(*state, "fleet.json", 4, 14);
}

static void
test_example_xml_loads_the_same_groups(void **state)
{
    tf_check_example(*state, "fleet.xml", 4, 14);
}

static void
test_leaf_list_replaces_command_line_values(void **state)
{
    struct tf_state *st = *state;
    char *argv[] = {"fleetsim",     "--features",  "a:x",          "--features",   "b:y",
                    "--snmp-fault", "0.5:timeout", "--snmp-fault", "0.1:delay:2s", NULL};
    const char *path =
        tf_write(st, "fleet.json",
                 "{\"fleetsim-fleet:fleet\": {\"group\": [\n"
                 "  {\"name\": \"one\", \"device-count\": 1, \"features\": [\"c:z\"],\n"
                 "   \"snmp-fault\": [\"0.25:error:genErr\", \"0.5:timeout\", \"0.1:timeout\"]},\n"
                 "  {\"name\": \"two\", \"device-count\": 1, \"starting-port\": 20000, \"snmp\": false}\n"
                 "]}}\n");
    const struct fleet_config *one, *two;

    assert_int_equal(cli_parse(9, argv, &st->base, st->err, sizeof st->err), CLI_RUN);
    if (fleet_file_load(path, &st->base, &st->ff, st->err, sizeof st->err)) {
        fail_msg("%s", st->err);
    }
    one = &st->ff.groups[0].cfg;
    two = &st->ff.groups[1].cfg;
    assert_int_equal(one->schema_opts.feature_count, 1);
    assert_ptr_equal(one->schema_opts.features, one->feature_pins);
    assert_string_equal(one->schema_opts.features[0], "c:z");
    /* The file's order, not the command line's values. */
    assert_int_equal(one->snmp_fault_count, 3);
    assert_true(one->snmp_faults[0].share == 0.25);
    assert_int_equal(one->snmp_faults[0].kind, AGENT_FAULT_ERROR);
    assert_true(one->snmp_faults[1].share == 0.5);
    assert_int_equal(one->snmp_faults[1].kind, AGENT_FAULT_TIMEOUT);
    assert_true(one->snmp_faults[2].share == 0.1);
    /* A group without the leaf-list keeps the command line's values. */
    assert_int_equal(two->schema_opts.feature_count, 2);
    assert_ptr_equal(two->schema_opts.features, two->feature_pins);
    assert_string_equal(two->schema_opts.features[1], "b:y");
    assert_int_equal(two->snmp_fault_count, 2);
    assert_int_equal(two->snmp_faults[1].delay_ms, 2000);
    assert_int_equal(two->starting_port, 20000);
}

static void
test_values_reach_their_options(void **state)
{
    struct tf_state *st = *state;
    const char *path = tf_write(st, "fleet.xml",
                                "<fleet xmlns=\"urn:fleetsim:fleet\">\n"
                                "  <group>\n"
                                "    <name>g</name>\n"
                                "    <device-count>7</device-count>\n"
                                "    <snmp-drop-rate>0.25</snmp-drop-rate>\n"
                                "    <snmp-latency>50-100ms</snmp-latency>\n"
                                "    <netconf-latency>1s</netconf-latency>\n"
                                "    <auth>any</auth>\n"
                                "    <schemas-strict>true</schemas-strict>\n"
                                "    <host-key-per-device>true</host-key-per-device>\n"
                                "    <snmp>false</snmp>\n"
                                "    <snmp-max-message-size>484</snmp-max-message-size>\n"
                                "    <notification-rate>2.5</notification-rate>\n"
                                "    <flap-rate>0.001</flap-rate>\n"
                                "    <syslog-rate>staged:5@10s,0.5@2m</syslog-rate>\n"
                                "    <push-arrivals>poisson</push-arrivals>\n"
                                "    <profile>profiles/mine.xml</profile>\n"
                                "    <rpc-config>/abs/rpcs.xml</rpc-config>\n"
                                "    <snmp-recording>rec/dev.snmprec</snmp-recording>\n"
                                "    <notification-file>n.xml</notification-file>\n"
                                "    <authorized-keys>keys</authorized-keys>\n"
                                "    <snmp-v3-user>u1:sha:authpass1:aes:privpass1</snmp-v3-user>\n"
                                "  </group>\n"
                                "</fleet>\n");
    const struct fleet_config *c;
    char want[TF_PATH_BYTES];

    if (fleet_file_load(path, &st->base, &st->ff, st->err, sizeof st->err)) {
        fail_msg("%s", st->err);
    }
    assert_int_equal(st->ff.group_count, 1);
    assert_int_equal(st->ff.groups[0].line, 2);
    c = &st->ff.groups[0].cfg;
    assert_int_equal(c->device_count, 7);
    assert_true(c->snmp_drop_rate == 0.25);
    assert_int_equal(c->snmp_latency_min_ms, 50);
    assert_int_equal(c->snmp_latency_max_ms, 100);
    assert_int_equal(c->netconf_latency_max_ms, 1000);
    assert_int_equal(c->ssh_auth_any, 1);
    assert_int_equal(c->schema_opts.strict, 1);
    assert_int_equal(c->host_key_per_device, 1);
    assert_int_equal(c->snmp, 0);
    assert_int_equal(c->snmp_max_msg_bytes, 484);
    assert_true(c->notification_rate.shape == RATE_CONSTANT && c->notification_rate.r0 == 2.5);
    assert_true(c->flap_rate == 0.001);
    /* issue 29: a group's rate profile and arrivals. */
    assert_int_equal(c->syslog_rate.shape, RATE_STAGED);
    assert_int_equal(c->syslog_rate.stage_count, 2);
    assert_int_equal(c->syslog_rate.stage_start_us[1], 10000000);
    assert_string_equal(c->push_arrivals, "poisson");
    assert_int_equal(c->snmp_v3_user_count, 1);
    snprintf(want, sizeof want, "%s/profiles/mine.xml", st->tmp);
    assert_string_equal(c->profile, want);
    assert_string_equal(c->rpc_config, "/abs/rpcs.xml"); /* absolute: as written */
    snprintf(want, sizeof want, "%s/rec/dev.snmprec", st->tmp);
    assert_string_equal(c->snmp_recording, want);
    snprintf(want, sizeof want, "%s/n.xml", st->tmp);
    assert_string_equal(c->notification_file, want);
    snprintf(want, sizeof want, "%s/keys", st->tmp);
    assert_string_equal(c->authorized_keys, want);
}

static void
test_value_the_cli_refuses_names_file_line_option(void **state)
{
    struct tf_state *st = *state;
    const char *path = tf_write(st, "fleet.json",
                                "{\"fleetsim-fleet:fleet\": {\"group\": [\n"
                                "  {\"name\": \"core\", \"device-count\": 2},\n"
                                "  {\"name\": \"edge\", \"device-count\": 2,\n"
                                "   \"starting-port\": 18000,\n"
                                "   \"snmp-latency\": \"50\"}\n"
                                "]}}\n");

    tf_refused(
        st, path, FLEET_ERR_INVAL,
        ":5: group \"edge\": --snmp-latency must be a duration or a range such as 50ms, 1s or 50-100ms, "
        "not \"50\"");
}

static void
test_type_error_names_line_and_leaf(void **state)
{
    struct tf_state *st = *state;
    const char *path = tf_write(st, "fleet.json",
                                "{\"fleetsim-fleet:fleet\": {\"group\": [\n"
                                "  {\"name\": \"core\", \"device-count\": 2,\n"
                                "   \"snmp-drop-rate\": 0.5}\n"
                                "]}}\n");
    const char *port = tf_write(st, "port.xml",
                                "<fleet xmlns=\"urn:fleetsim:fleet\">\n"
                                "  <group><name>g</name><device-count>2</device-count>\n"
                                "    <starting-port>70000</starting-port>\n"
                                "  </group>\n"
                                "</fleet>\n");

    tf_refused(
        st, path, FLEET_ERR_INVAL,
        ":3: group \"core\": snmp-drop-rate: Invalid non-string-encoded decimal64 value \"0.5\". (RFC 7951 "
        "writes a decimal as a JSON string: \"0.5\")");
    fleet_file_free(&st->ff);
    assert_int_equal(fleet_file_load(port, &st->base, &st->ff, st->err, sizeof st->err), FLEET_ERR_INVAL);
    assert_non_null(strstr(st->err, "port.xml:3: group \"g\": starting-port: "));
}

static void
test_bad_leaf_list_value_names_its_line(void **state)
{
    struct tf_state *st = *state;
    const char *path = tf_write(st, "fleet.xml",
                                "<fleet xmlns=\"urn:fleetsim:fleet\">\n"
                                "  <group><name>g</name><device-count>2</device-count>\n"
                                "    <snmp-fault>0.5:timeout</snmp-fault>\n"
                                "    <snmp-fault>0.1:bogus</snmp-fault>\n"
                                "  </group>\n"
                                "</fleet>\n");

    assert_int_equal(fleet_file_load(path, &st->base, &st->ff, st->err, sizeof st->err), FLEET_ERR_INVAL);
    assert_non_null(strstr(st->err, ":4: group \"g\": --snmp-fault \"0.1:bogus\""));
}

static void
test_unknown_key_names_file_and_line(void **state)
{
    struct tf_state *st = *state;
    const char *path = tf_write(st, "fleet.json",
                                "{\"fleetsim-fleet:fleet\": {\"group\": [\n"
                                "  {\"name\": \"a\", \"device-count\": 2,\n"
                                "   \"bogus\": 1}\n"
                                "]}}\n");
    const char *path2 = tf_write(st, "threads.json",
                                 "{\"fleetsim-fleet:fleet\": {\"group\": [\n"
                                 "  {\"name\": \"a\",\n"
                                 "   \"device-count\": 2,\n"
                                 "   \"threads\": 4}\n"
                                 "]}}\n");

    tf_refused(st, path, FLEET_ERR_INVAL,
               ":3: group \"a\": Node \"bogus\" not found as a child of \"group\" node.");
    fleet_file_free(&st->ff);
    /* A fleet-wide option in a group is pointed back to the command line. */
    tf_refused(st, path2, FLEET_ERR_INVAL,
               ":4: group \"a\": Node \"threads\" not found as a child of \"group\" node. (an option of the "
               "whole fleet: give it on the command line)");
}

static void
test_not_json_or_xml_refused(void **state)
{
    struct tf_state *st = *state;
    const char *path = tf_write(st, "fleet.txt", "devices: 100\nport: 17830\n");
    const char *path2 =
        tf_write(st, "broken.json", "{\"fleetsim-fleet:fleet\": {\"group\": [\n  {\"name\": \n");

    assert_int_equal(fleet_file_load(path, &st->base, &st->ff, st->err, sizeof st->err), FLEET_ERR_INVAL);
    assert_int_equal(strncmp(st->err, path, strlen(path)), 0);
    assert_int_equal(strncmp(st->err + strlen(path), ":1: ", 4), 0);
    assert_null(strchr(st->err, '\n'));
    fleet_file_free(&st->ff);
    assert_int_equal(fleet_file_load(path2, &st->base, &st->ff, st->err, sizeof st->err), FLEET_ERR_INVAL);
    assert_int_equal(strncmp(st->err, path2, strlen(path2)), 0);
    assert_int_equal(st->err[strlen(path2)], ':');
}

static void
test_missing_file_refused(void **state)
{
    struct tf_state *st = *state;
    char path[TF_PATH_BYTES];

    snprintf(path, sizeof path, "%s/none.json", st->tmp);
    tf_refused(st, path, FLEET_ERR_SYS, ": cannot open it: No such file or directory");
}

static void
test_empty_group_list_refused(void **state)
{
    struct tf_state *st = *state;
    const char *json = tf_write(st, "fleet.json", "{\"fleetsim-fleet:fleet\": {\"group\": []}}\n");
    const char *xml = tf_write(st, "fleet.xml", "<fleet xmlns=\"urn:fleetsim:fleet\"/>\n");
    const char *empty = tf_write(st, "empty.json", "  \n");

    tf_refused(st, json, FLEET_ERR_INVAL, ": no group: a fleet needs at least one");
    fleet_file_free(&st->ff);
    tf_refused(st, xml, FLEET_ERR_INVAL, ": no group: a fleet needs at least one");
    fleet_file_free(&st->ff);
    tf_refused(st, empty, FLEET_ERR_INVAL, ": empty: a fleet file holds the fleet of fleetsim-fleet.yang");
}

static void
test_group_without_count_or_twice_named_refused(void **state)
{
    struct tf_state *st = *state;
    const char *nocount = tf_write(st, "nocount.json",
                                   "{\"fleetsim-fleet:fleet\": {\"group\": [\n"
                                   "  {\"name\": \"a\", \"device-count\": 1},\n"
                                   "  {\"name\": \"b\"}\n"
                                   "]}}\n");
    const char *twice = tf_write(st, "twice.xml",
                                 "<fleet xmlns=\"urn:fleetsim:fleet\">\n"
                                 "  <group><name>a</name><device-count>2</device-count></group>\n"
                                 "  <group><name>a</name><device-count>2</device-count></group>\n"
                                 "</fleet>\n");

    tf_refused(st, nocount, FLEET_ERR_INVAL, ":3: group \"b\": device-count is mandatory");
    fleet_file_free(&st->ff);
    tf_refused(st, twice, FLEET_ERR_INVAL, ":3: group \"a\": Duplicate instance of \"group\".");
}

static void
test_overlapping_ip_ranges_refused(void **state)
{
    struct tf_state *st = *state;
    const char *path = tf_write(st, "fleet.json",
                                "{\"fleetsim-fleet:fleet\": {\"group\": [\n"
                                "  {\"name\": \"a\", \"device-count\": 20, \"ip-per-device\": true,\n"
                                "   \"ip\": \"127.0.0.1\"},\n"
                                "  {\"name\": \"b\", \"device-count\": 5, \"ip-per-device\": true,\n"
                                "   \"ip\": \"127.0.0.10\", \"snmp-starting-port\": 26100}\n"
                                "]}}\n");

    tf_refused(st, path, FLEET_ERR_INVAL,
               ": groups \"a\" (line 2) and \"b\" (line 4) both claim NETCONF (TCP) 127.0.0.10:17830");
}

static void
test_overlapping_ports_refused(void **state)
{
    struct tf_state *st = *state;
    const char *netconf = tf_write(st, "netconf.json",
                                   "{\"fleetsim-fleet:fleet\": {\"group\": [\n"
                                   "  {\"name\": \"a\", \"device-count\": 10, \"snmp\": false},\n"
                                   "  {\"name\": \"b\", \"device-count\": 10, \"starting-port\": 17835,\n"
                                   "   \"snmp\": false}\n"
                                   "]}}\n");
    /* NETCONF apart, SNMP on one port: one address each for all devices (ip-per-device). */
    const char *snmp = tf_write(st, "snmp.json",
                                "{\"fleetsim-fleet:fleet\": {\"group\": [\n"
                                "  {\"name\": \"a\", \"device-count\": 3, \"ip-per-device\": true},\n"
                                "  {\"name\": \"b\", \"device-count\": 3, \"ip-per-device\": true,\n"
                                "   \"ip\": \"127.0.0.3\", \"starting-port\": 18830}\n"
                                "]}}\n");

    tf_refused(st, netconf, FLEET_ERR_INVAL,
               ": groups \"a\" (line 2) and \"b\" (line 3) both claim NETCONF (TCP) 127.0.0.1:17835");
    fleet_file_free(&st->ff);
    tf_refused(st, snmp, FLEET_ERR_INVAL,
               ": groups \"a\" (line 2) and \"b\" (line 3) both claim SNMP (UDP) 127.0.0.3:16100");
}

static void
test_one_port_disjoint_ranges_accepted(void **state)
{
    struct tf_state *st = *state;
    const char *path = tf_write(st, "fleet.json",
                                "{\"fleetsim-fleet:fleet\": {\"group\": [\n"
                                "  {\"name\": \"a\", \"device-count\": 9, \"ip-per-device\": true,\n"
                                "   \"ip\": \"127.0.0.1\"},\n"
                                "  {\"name\": \"b\", \"device-count\": 5, \"ip-per-device\": true,\n"
                                "   \"ip\": \"127.0.0.10\"},\n"
                                "  {\"name\": \"c\", \"device-count\": 4, \"ip\": \"127.0.0.20\"}\n"
                                "]}}\n");

    if (fleet_file_load(path, &st->base, &st->ff, st->err, sizeof st->err)) {
        fail_msg("%s", st->err);
    }
    assert_int_equal(st->ff.group_count, 3);
    assert_string_equal(st->ff.groups[2].name, "c");
    assert_int_equal(st->ff.groups[2].line, 6);
}

static void
test_overlap_any_address_and_unknown_lines(void **state)
{
    struct tf_state *st = *state;
    struct fleet_group_spec g[2] = {{.name = "wild"}, {.name = "lo"}};

    (void)st;
    cli_defaults(&g[0].cfg);
    cli_defaults(&g[1].cfg);
    g[0].cfg.ip = 0; /* 0.0.0.0: every address */
    g[0].cfg.snmp = 0;
    g[1].cfg.ip = 0x7f000105u;
    g[1].cfg.starting_port = 17830;
    assert_int_equal(fleet_file_check_overlap(g, 2, "f.json", st->err, sizeof st->err), FLEET_ERR_INVAL);
    assert_string_equal(st->err,
                        "f.json: groups \"wild\" and \"lo\" both claim NETCONF (TCP) 127.0.1.5:17830");
    g[1].cfg.starting_port = 17831;
    assert_int_equal(fleet_file_check_overlap(g, 2, "f.json", st->err, sizeof st->err), FLEET_OK);
}

static void
test_cli_apply_named_checks_as_the_command_line(void **state)
{
    struct tf_state *st = *state;
    struct fleet_config *c = &st->base;

    assert_int_equal(cli_apply_named("device-count", "5", c, st->err, sizeof st->err), FLEET_OK);
    assert_int_equal(c->device_count, 5);
    assert_int_equal(cli_apply_named("devices-count", "6", c, st->err, sizeof st->err), FLEET_OK);
    assert_int_equal(c->device_count, 6);
    assert_int_equal(cli_apply_named("device-count", "0", c, st->err, sizeof st->err), FLEET_ERR_INVAL);
    assert_string_equal(st->err, "--device-count must be a number from 1 to 1000000, not \"0\"");
    assert_int_equal(cli_apply_named("ip", "10.1.2.3", c, st->err, sizeof st->err), FLEET_OK);
    assert_int_equal(c->ip, 0x0a010203u);
    assert_int_equal(cli_apply_named("ip", "10.1.2", c, st->err, sizeof st->err), FLEET_ERR_INVAL);
    assert_string_equal(st->err,
                        "--ip must be an IPv4 or IPv6 address (192.0.2.1, fd5e:f1ee::1), not \"10.1.2\"");
    assert_int_equal(cli_apply_named("ip", "fd5e:f1ee::7", c, st->err, sizeof st->err), FLEET_OK);
    assert_int_equal(c->ip, 7);
    assert_int_equal(c->ip_fam.v6, 1);
    /* A flag without value is true, as on the command line; a fleet file writes true or false. */
    assert_int_equal(cli_apply_named("ip-per-device", NULL, c, st->err, sizeof st->err), FLEET_OK);
    assert_int_equal(c->ip_per_device, 1);
    assert_int_equal(cli_apply_named("ip-per-device", "false", c, st->err, sizeof st->err), FLEET_OK);
    assert_int_equal(c->ip_per_device, 0);
    assert_int_equal(cli_apply_named("schemas-strict", NULL, c, st->err, sizeof st->err), FLEET_OK);
    assert_int_equal(c->schema_opts.strict, 1);
    assert_int_equal(cli_apply_named("schemas-strict", "false", c, st->err, sizeof st->err), FLEET_OK);
    assert_int_equal(c->schema_opts.strict, 0);
    assert_int_equal(cli_apply_named("snmp-latency", "50-100ms", c, st->err, sizeof st->err), FLEET_OK);
    assert_int_equal(c->snmp_latency_min_ms, 50);
    assert_int_equal(c->snmp_latency_max_ms, 100);
    assert_int_equal(cli_apply_named("ssh", NULL, c, st->err, sizeof st->err), FLEET_ERR_INVAL);
    assert_string_equal(st->err, "option --ssh needs a value");
    assert_int_equal(cli_apply_named("nope", "1", c, st->err, sizeof st->err), FLEET_ERR_NOTFOUND);
    assert_string_equal(st->err, "unknown option \"--nope\" (see --help)");
    assert_int_equal(cli_apply_named("help", NULL, c, st->err, sizeof st->err), FLEET_ERR_INVAL);
    /* Repeatable: values add up, cli_clear_named() drops them. */
    assert_int_equal(cli_apply_named("features", "m:a", c, st->err, sizeof st->err), FLEET_OK);
    assert_int_equal(cli_apply_named("features", "n:", c, st->err, sizeof st->err), FLEET_OK);
    assert_int_equal(c->schema_opts.feature_count, 2);
    assert_string_equal(c->schema_opts.features[1], "n:");
    assert_int_equal(cli_apply_named("features", "nocolon", c, st->err, sizeof st->err), FLEET_ERR_INVAL);
    assert_string_equal(st->err,
                        "--features takes MODULE:FEATURE,FEATURE (or MODULE: for none), not \"nocolon\"");
    assert_int_equal(cli_clear_named("features", c), FLEET_OK);
    assert_int_equal(c->schema_opts.feature_count, 0);
    assert_int_equal(cli_clear_named("ssh", c), FLEET_ERR_INVAL);
    assert_int_equal(cli_clear_named("nope", c), FLEET_ERR_NOTFOUND);
    assert_int_equal(cli_option_known("threads"), 1);
    assert_int_equal(cli_option_known("thread"), 0);
}

static void
test_cli_parse_keeps_flags_and_fleet(void **state)
{
    struct tf_state *st = *state;
    char *argv[] = {"fleetsim",         "--ip-per-device",           "false",
                    "--schemas-strict", "--host-key-per-device",     "--fleet",
                    "groups.json",      "--metrics-per-device=true", NULL};
    char *bad[] = {"fleetsim", "--snmp-latency", "x", NULL};
    struct fleet_config copy;

    assert_int_equal(cli_parse(8, argv, &st->base, st->err, sizeof st->err), CLI_RUN);
    assert_int_equal(st->base.ip_per_device, 0);
    assert_int_equal(st->base.schema_opts.strict, 1);
    assert_int_equal(st->base.host_key_per_device, 1);
    assert_int_equal(st->base.metrics_per_device, 1);
    assert_string_equal(st->base.fleet_file, "groups.json");
    copy = st->base;
    cli_config_fix_pointers(&copy);
    assert_ptr_equal(copy.schema_opts.features, copy.feature_pins);
    assert_int_equal(cli_parse(3, bad, &st->base, st->err, sizeof st->err), CLI_ERROR);
    assert_string_equal(
        st->err, "--snmp-latency must be a duration or a range such as 50ms, 1s or 50-100ms, not \"x\"");
}

/* The option table's defaults (applied through the parser) and its generic messages. */
static void
test_cli_table_defaults_and_generic_messages(void **state)
{
    struct tf_state *st = *state;
    struct fleet_config d, *c = &st->base;
    char *auth2[] = {"fleetsim", "--auth", "ctl", "s3cret", "--auth", "any", NULL};

    cli_defaults(&d);
    assert_int_equal(d.device_count, 1);
    assert_int_equal(d.starting_port, 17830);
    assert_int_equal(d.ip, 0x7f000001u);
    assert_int_equal(d.ssh, 1);
    assert_int_equal(d.snmp, 1);
    assert_int_equal(d.ssh_auth_any, 0);
    assert_int_equal(d.snmp_starting_port, 16100);
    assert_int_equal(d.snmp_max_msg_bytes, 1472);
    assert_int_equal(d.max_msg_bytes, FLEET_DEFAULT_MAX_MSG_BYTES);
    assert_int_equal(d.hello_timeout_s, 60);
    assert_int_equal(d.register_timeout_s, 20);
    assert_int_equal(d.replay_log, 16);
    assert_int_equal(d.status_interval_s, 10);
    assert_int_equal(d.log_level, LOGL_INFO);
    assert_int_equal(d.seed, 1);
    assert_int_equal(d.devices_per_port, 1);
    assert_int_equal(d.configs_batch_size, 1);
    assert_int_equal(d.controller_port, 8181);
    assert_true(d.threads >= 1);
    assert_string_equal(d.inventory_format, "odl-json");
    assert_string_equal(d.profile, "minimal");
    assert_string_equal(d.snmp_community, "public");
    assert_string_equal(d.snmp_write_community, "private");
    assert_string_equal(d.trap_community, "public");
    assert_string_equal(d.username, "admin");
    assert_string_equal(d.controller_password, "admin");
    assert_null(d.controller_ip);
    assert_ptr_equal(d.schema_opts.features, d.feature_pins);

    assert_int_equal(cli_apply_named("hello-timeout", "0", c, st->err, sizeof st->err), FLEET_ERR_INVAL);
    assert_string_equal(st->err, "--hello-timeout must be a number from 1 to 86400 seconds, not \"0\"");
    assert_int_equal(cli_apply_named("starting-port", "70000", c, st->err, sizeof st->err), FLEET_ERR_INVAL);
    assert_string_equal(st->err, "--starting-port must be a port from 1 to 65535, not \"70000\"");
    assert_int_equal(cli_apply_named("max-message-size", "10", c, st->err, sizeof st->err), FLEET_ERR_INVAL);
    assert_string_equal(st->err, "--max-message-size must be a number of bytes from 4096, not \"10\"");
    assert_int_equal(cli_apply_named("seed", "-1", c, st->err, sizeof st->err), FLEET_ERR_INVAL);
    assert_string_equal(st->err, "--seed must be a number, not \"-1\"");
    assert_int_equal(cli_apply_named("snmp-drop-rate", "1.5", c, st->err, sizeof st->err), FLEET_ERR_INVAL);
    assert_string_equal(st->err, "--snmp-drop-rate must be a share from 0 to 1, not \"1.5\"");
    assert_int_equal(cli_apply_named("notification-rate", "0", c, st->err, sizeof st->err), FLEET_ERR_INVAL);
    assert_string_equal(st->err, "--notification-rate must be above 0 somewhere, not \"0\"");
    assert_int_equal(cli_apply_named("notification-rate", "sine:5:9:60", c, st->err, sizeof st->err),
                     FLEET_ERR_INVAL);
    assert_string_equal(
        st->err,
        "--notification-rate: sine profile: AMPLITUDE 9 is above MEAN 5 (the rate would go below 0)");
    assert_int_equal(cli_apply_named("syslog-rate", "staged:5@10,x@5", c, st->err, sizeof st->err),
                     FLEET_ERR_INVAL);
    assert_string_equal(st->err,
                        "--syslog-rate: staged profile: stage 2 rate \"x\" must be a number from 0 to "
                        "1000000 per second");
    assert_int_equal(cli_apply_named("syslog-rate", "linear:0:20:1m", c, st->err, sizeof st->err), FLEET_OK);
    assert_int_equal(c->syslog_rate.shape, RATE_LINEAR);
    assert_int_equal(cli_apply_named("push-arrivals", "bursty", c, st->err, sizeof st->err), FLEET_ERR_INVAL);
    assert_string_equal(st->err, "--push-arrivals must be paced or poisson, not \"bursty\"");
    assert_int_equal(cli_apply_named("snmp-drop-rate", "0.25", c, st->err, sizeof st->err), FLEET_OK);
    assert_true(c->snmp_drop_rate == 0.25);
    assert_int_equal(cli_apply_named("trap-inform", "yes", c, st->err, sizeof st->err), FLEET_ERR_INVAL);
    assert_string_equal(st->err, "--trap-inform takes true or false, not \"yes\"");
    assert_int_equal(cli_apply_named("inventory-format", "yaml", c, st->err, sizeof st->err),
                     FLEET_ERR_INVAL);
    assert_string_equal(st->err, "--inventory-format must be odl-json, opennms-requisition, prometheus-sd, "
                                 "csv or odl-callhome, not \"yaml\"");
    assert_int_equal(cli_apply_named("inventory-format", "csv", c, st->err, sizeof st->err), FLEET_OK);
    assert_string_equal(c->inventory_format, "csv");
    /* An alias reaches its option's field, and messages name the option by its own name. */
    assert_int_equal(cli_apply_named("thread-pool-size", "3", c, st->err, sizeof st->err), FLEET_OK);
    assert_int_equal(c->threads, 3);
    assert_int_equal(cli_apply_named("timeout", "x", c, st->err, sizeof st->err), FLEET_ERR_INVAL);
    assert_string_equal(st->err, "--time-out must be a number from 0 to 604800 seconds, not \"x\"");
    assert_int_equal(
        cli_apply_named("generate-config-connection-timeout", "1500", c, st->err, sizeof st->err), FLEET_OK);
    assert_int_equal(c->hello_timeout_s, 2);
    /* --auth: one word is the SSH setting, two are OpenDaylight's controller login; a file has one word. */
    assert_int_equal(cli_apply_named("auth", "ctl", c, st->err, sizeof st->err), FLEET_ERR_INVAL);
    assert_string_equal(st->err, "--auth takes password or any, not \"ctl\"");
    assert_int_equal(cli_parse(6, auth2, c, st->err, sizeof st->err), CLI_RUN);
    assert_string_equal(c->controller_username, "ctl");
    assert_string_equal(c->controller_password, "s3cret");
    assert_int_equal(c->ssh_auth_any, 1);
    assert_int_equal(cli_clear_named("snmp-fault", c), FLEET_OK);
    assert_int_equal(cli_clear_named("trap-sink", c), FLEET_OK);
    assert_int_equal(cli_clear_named("snmp-v3-user", c), FLEET_OK);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_example_json_loads_two_groups, tf_setup, tf_teardown),
        cmocka_unit_test_setup_teardown(test_example_xml_loads_the_same_groups, tf_setup, tf_teardown),
        cmocka_unit_test_setup_teardown(test_leaf_list_replaces_command_line_values, tf_setup, tf_teardown),
        cmocka_unit_test_setup_teardown(test_values_reach_their_options, tf_setup, tf_teardown),
        cmocka_unit_test_setup_teardown(test_value_the_cli_refuses_names_file_line_option, tf_setup,
                                        tf_teardown),
        cmocka_unit_test_setup_teardown(test_type_error_names_line_and_leaf, tf_setup, tf_teardown),
        cmocka_unit_test_setup_teardown(test_bad_leaf_list_value_names_its_line, tf_setup, tf_teardown),
        cmocka_unit_test_setup_teardown(test_unknown_key_names_file_and_line, tf_setup, tf_teardown),
        cmocka_unit_test_setup_teardown(test_not_json_or_xml_refused, tf_setup, tf_teardown),
        cmocka_unit_test_setup_teardown(test_missing_file_refused, tf_setup, tf_teardown),
        cmocka_unit_test_setup_teardown(test_empty_group_list_refused, tf_setup, tf_teardown),
        cmocka_unit_test_setup_teardown(test_group_without_count_or_twice_named_refused, tf_setup,
                                        tf_teardown),
        cmocka_unit_test_setup_teardown(test_overlapping_ip_ranges_refused, tf_setup, tf_teardown),
        cmocka_unit_test_setup_teardown(test_overlapping_ports_refused, tf_setup, tf_teardown),
        cmocka_unit_test_setup_teardown(test_one_port_disjoint_ranges_accepted, tf_setup, tf_teardown),
        cmocka_unit_test_setup_teardown(test_overlap_any_address_and_unknown_lines, tf_setup, tf_teardown),
        cmocka_unit_test_setup_teardown(test_cli_apply_named_checks_as_the_command_line, tf_setup,
                                        tf_teardown),
        cmocka_unit_test_setup_teardown(test_cli_parse_keeps_flags_and_fleet, tf_setup, tf_teardown),
        cmocka_unit_test_setup_teardown(test_cli_table_defaults_and_generic_messages, tf_setup, tf_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
