/*
 * Unit tests of controller-mount's topology reader (stress/topo_read.c):
 * both JSON shapes of connection-status, the node-id suffix, the sample of
 * nodes not connected, empty and missing topologies, and documents that are
 * not a topology.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "topo_read.h"

static int
count(const char *doc, const char *suffix, struct topo_counts *tc, char *err, size_t err_len)
{
    return topo_count(doc, strlen(doc), suffix, tc, err, err_len);
}

static void
test_status_leaf_on_the_node_is_read(void **state)
{
    static const char doc[] =
        "{\"network-topology:topology\":[{\"topology-id\":\"topology-netconf\",\"node\":["
        "{\"node-id\":\"17830-sim-device\",\"netconf-node-topology:connection-status\":\"connected\","
        "\"netconf-node-topology:available-capabilities\":{\"available-capability\":[{\"capability\":\"x\"}]}"
        "},"
        "{\"node-id\":\"17831-sim-device\",\"netconf-node-topology:connection-status\":\"connecting\"},"
        "{\"node-id\":\"17832-sim-device\",\"netconf-node-topology:connection-status\":\"unable-to-connect\"}"
        ","
        "{\"node-id\":\"controller-config\",\"netconf-node-topology:connection-status\":\"connecting\"}]}]}";
    struct topo_counts tc;
    char err[200] = "";

    (void)state;
    assert_int_equal(count(doc, "-sim-device", &tc, err, sizeof err), 0);
    assert_int_equal(tc.seen, 3);
    assert_int_equal(tc.by_status[TOPO_CONNECTED], 1);
    assert_int_equal(tc.by_status[TOPO_CONNECTING], 1);
    assert_int_equal(tc.by_status[TOPO_FAILED], 1);
    assert_int_equal(tc.ignored, 1);
    assert_int_equal(tc.unknown, 0);
    assert_int_equal(tc.not_connected_count, 2);
    assert_string_equal(tc.not_connected[0].id, "17831-sim-device");
    assert_int_equal(tc.not_connected[0].status, TOPO_CONNECTING);
    assert_string_equal(tc.not_connected[1].id, "17832-sim-device");
    assert_int_equal(tc.not_connected[1].status, TOPO_FAILED);
    assert_string_equal(topo_status_name(TOPO_FAILED), "unable-to-connect");
}

static void
test_status_inside_netconf_node_is_read(void **state)
{
    static const char doc[] =
        "{\"network-topology:topology\":[{\"topology-id\":\"topology-netconf\",\"node\":["
        "{\"node-id\":\"a-sim-device\",\"netconf-node-topology:netconf-node\":"
        "{\"host\":\"127.0.0.1\",\"port\":17830,\"connection-status\":\"connected\"}},"
        "{\"node-id\":\"b-sim-device\",\"netconf-node-topology:netconf-node\":"
        "{\"connection-status\":\"unable-to-connect\"}}]}]}";
    struct topo_counts tc;
    char err[200] = "";

    (void)state;
    assert_int_equal(count(doc, "-sim-device", &tc, err, sizeof err), 0);
    assert_int_equal(tc.seen, 2);
    assert_int_equal(tc.by_status[TOPO_CONNECTED], 1);
    assert_int_equal(tc.by_status[TOPO_FAILED], 1);
}

static void
test_missing_or_unknown_status_counts_as_connecting(void **state)
{
    static const char doc[] = "{\"network-topology:topology\":[{\"node\":["
                              "{\"node-id\":\"a\"},"
                              "{\"node-id\":\"b\",\"netconf-node-topology:netconf-node\":{\"host\":\"h\"}},"
                              "{\"node-id\":\"c\",\"netconf-node-topology:connection-status\":\"someday\"},"
                              "{\"node-id\":\"d\",\"netconf-node-topology:connection-status\":7},"
                              "{\"netconf-node-topology:connection-status\":\"connected\"}]}]}";
    struct topo_counts tc;
    char err[200] = "";

    (void)state;
    assert_int_equal(count(doc, "", &tc, err, sizeof err), 0);
    assert_int_equal(tc.seen, 4);
    assert_int_equal(tc.by_status[TOPO_CONNECTING], 4);
    assert_int_equal(tc.unknown, 4);
    assert_int_equal(tc.ignored, 1); /* no node-id */
}

static void
test_suffix_must_end_the_node_id(void **state)
{
    static const char doc[] =
        "{\"topology\":{\"node\":["
        "{\"node-id\":\"1-sim-device\",\"netconf-node-topology:connection-status\":\"connected\"},"
        "{\"node-id\":\"sim-device-2\",\"netconf-node-topology:connection-status\":\"connected\"},"
        "{\"node-id\":\"-sim-device\",\"netconf-node-topology:connection-status\":\"connected\"},"
        "{\"node-id\":\"device\",\"netconf-node-topology:connection-status\":\"connected\"}]}}";
    struct topo_counts tc;
    char err[200] = "";

    (void)state;
    assert_int_equal(count(doc, "-sim-device", &tc, err, sizeof err), 0);
    assert_int_equal(tc.seen, 2);
    assert_int_equal(tc.ignored, 2);
    assert_int_equal(count(doc, "", &tc, err, sizeof err), 0);
    assert_int_equal(tc.seen, 4);
}

static void
test_sample_of_not_connected_is_bounded_and_ids_are_cut(void **state)
{
    char doc[16384];
    char long_id[300];
    size_t n = 0;
    struct topo_counts tc;
    char err[200] = "";

    (void)state;
    memset(long_id, 'x', sizeof long_id - 1);
    long_id[sizeof long_id - 1] = '\0';
    n += (size_t)snprintf(doc + n, sizeof doc - n, "{\"network-topology:topology\":[{\"node\":[");
    n += (size_t)snprintf(doc + n, sizeof doc - n,
                          "{\"node-id\":\"%s\",\"netconf-node-topology:connection-status\":\"connecting\"}",
                          long_id);
    for (int i = 0; i < 30; i++) {
        n += (size_t)snprintf(doc + n, sizeof doc - n,
                              ",{\"node-id\":\"n%d\",\"netconf-node-topology:connection-status\":\"%s\"}", i,
                              i % 3 ? "connecting" : "connected");
    }
    snprintf(doc + n, sizeof doc - n, "]}]}");
    assert_int_equal(count(doc, "", &tc, err, sizeof err), 0);
    assert_int_equal(tc.seen, 31);
    assert_int_equal(tc.by_status[TOPO_CONNECTED], 10);
    assert_int_equal(tc.by_status[TOPO_CONNECTING], 21);
    assert_int_equal(tc.not_connected_count, TOPO_SAMPLE_NAMES);
    assert_int_equal(strlen(tc.not_connected[0].id), TOPO_NODE_ID_MAX_BYTES - 1);
    assert_string_equal(tc.not_connected[1].id, "n1");
    assert_string_equal(tc.not_connected[2].id, "n2");
    assert_string_equal(tc.not_connected[3].id, "n4");
}

static void
test_empty_topologies_are_zero_nodes(void **state)
{
    static const char *const docs[] = {
        "{}",
        "{\"network-topology:topology\":[{\"topology-id\":\"topology-netconf\"}]}",
        "{\"network-topology:topology\":[{\"topology-id\":\"topology-netconf\",\"node\":[]}]}",
        "{\"network-topology:topology\":[]}",
    };
    struct topo_counts tc;
    char err[200] = "";

    (void)state;
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        assert_int_equal(count(docs[i], "-sim-device", &tc, err, sizeof err), 0);
        assert_int_equal(tc.seen, 0);
        assert_int_equal(tc.ignored, 0);
    }
}

static void
test_documents_that_are_not_a_topology_are_refused(void **state)
{
    static const struct {
        const char *doc;
        const char *err;
    } cases[] = {
        {"{\"network-topology:topology\":[{\"node\":[",
         "not JSON: line 1 column 40: unexpected end: expected a value"},
        {"", "not JSON: line 1 column 1: unexpected end: expected a value"},
        {"[]", "not a JSON object"},
        {"{\"ietf-restconf:errors\":{}}", "no \"network-topology:topology\" member"},
        {"{\"network-topology:topology\":7}",
         "\"network-topology:topology\" is neither a list nor an object"},
        {"{\"network-topology:topology\":[7]}", "a topology is not an object"},
        {"{\"network-topology:topology\":[{\"node\":{}}]}", "\"node\" is not an array"},
        {"{\"network-topology:topology\":[{\"node\":[\"a\"]}]}", "a node is not an object"},
    };
    struct topo_counts tc;
    char err[200];

    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        err[0] = '\0';
        assert_int_equal(count(cases[i].doc, "", &tc, err, sizeof err), -1);
        assert_string_equal(err, cases[i].err);
    }
}

static void
test_data_missing_error_is_recognised(void **state)
{
    static const char odl[] =
        "{\"errors\":{\"error\":[{\"error-type\":\"protocol\",\"error-tag\":\"data-missing\","
        "\"error-message\":\"Request could not be completed\"}]}}";
    static const char rfc[] = "{\"ietf-restconf:errors\":{\"error\":{\"error-tag\":\"data-missing\"}}}";
    static const char other[] = "{\"ietf-restconf:errors\":{\"error\":[{\"error-tag\":\"in-use\"}]}}";

    (void)state;
    assert_int_equal(topo_is_data_missing(odl, strlen(odl)), 1);
    assert_int_equal(topo_is_data_missing(rfc, strlen(rfc)), 1);
    assert_int_equal(topo_is_data_missing(other, strlen(other)), 0);
    assert_int_equal(topo_is_data_missing("not json", 8), 0);
    assert_int_equal(topo_is_data_missing("", 0), 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_leaf_on_the_node_is_read),
        cmocka_unit_test(test_status_inside_netconf_node_is_read),
        cmocka_unit_test(test_missing_or_unknown_status_counts_as_connecting),
        cmocka_unit_test(test_suffix_must_end_the_node_id),
        cmocka_unit_test(test_sample_of_not_connected_is_bounded_and_ids_are_cut),
        cmocka_unit_test(test_empty_topologies_are_zero_nodes),
        cmocka_unit_test(test_documents_that_are_not_a_topology_are_refused),
        cmocka_unit_test(test_data_missing_error_is_recognised),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
