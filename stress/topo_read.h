/*
 * The controller's view of a fleet: OpenDaylight's topology-netconf as a
 * RESTCONF server answers it in JSON, reduced to counts of nodes by
 * connection status. Both shapes OpenDaylight has used are read: the status
 * as a leaf of the node ("netconf-node-topology:connection-status", releases
 * before the 2024-09-11 revision of netconf-node-topology) and inside the
 * node's "netconf-node-topology:netconf-node" container (later releases).
 */
#ifndef STRESS_TOPO_READ_H
#define STRESS_TOPO_READ_H

#include <stddef.h>
#include <stdint.h>

/* Nodes not connected whose ids a poll keeps for the report; the others are only counted. */
#define TOPO_SAMPLE_NAMES 10
/* Longest node-id kept for the report (longer ones are cut). */
#define TOPO_NODE_ID_MAX_BYTES 128

enum topo_status {
    TOPO_CONNECTED,  /* "connected" */
    TOPO_CONNECTING, /* "connecting", or no or an unknown connection-status yet */
    TOPO_FAILED,     /* "unable-to-connect" */
    TOPO_STATUS_COUNT,
};

struct topo_name {
    char id[TOPO_NODE_ID_MAX_BYTES]; /* node-id, NUL-terminated, cut to fit */
    enum topo_status status;         /* TOPO_CONNECTING or TOPO_FAILED */
};

struct topo_counts {
    uint32_t seen;                                     /* nodes whose id ends in the suffix */
    uint32_t by_status[TOPO_STATUS_COUNT];             /* those nodes by status; they sum to seen */
    uint32_t unknown;                                  /* of the connecting: no or an unknown status */
    uint32_t ignored;                                  /* nodes without the suffix or without a node-id */
    struct topo_name not_connected[TOPO_SAMPLE_NAMES]; /* the first not connected, in document order */
    uint32_t not_connected_count;                      /* entries used in not_connected */
};

/**
 * @brief Count the nodes of a topology document by connection status.
 *
 * The document is what GET .../network-topology:network-topology/topology=topology-netconf answers:
 * an object whose "network-topology:topology" (or "topology") member is the list of topologies (an
 * array, or one object); every topology's "node" array is read. An empty object, or a topology without
 * nodes, is zero nodes.
 * @param[in] body The answer (need not be NUL-terminated).
 * @param[in] len Its length.
 * @param[in] suffix Only nodes whose node-id ends in it count ("" counts every node).
 * @param[out] out The counts (zeroed first).
 * @param[out] err On error, what is wrong with the document.
 * @param[in] err_len Size of @p err.
 * @return 0, or -1 when the body is not JSON or not a topology.
 */
int topo_count(const char *body, size_t len, const char *suffix, struct topo_counts *out, char *err,
               size_t err_len);

/**
 * @brief Called by topo_count_each() for every node whose node-id ends in the suffix.
 * @param[in] user As given to topo_count_each().
 * @param[in] id The node-id (valid during the call only).
 * @param[in] status Its connection status.
 */
typedef void (*topo_node_fn)(void *user, const char *id, enum topo_status status);

/**
 * @brief topo_count(), and @p each called for every counted node in document order (NULL: none, which is
 * topo_count()). The counts are the same either way; @p each sees the nodes of a document that turns out
 * to be malformed further on too (the caller discards what it gathered when -1 is returned).
 */
int topo_count_each(const char *body, size_t len, const char *suffix, struct topo_counts *out,
                    topo_node_fn each, void *user, char *err, size_t err_len);

/**
 * @brief Whether an error answer says the data does not exist (RFC 8040 error-tag "data-missing"),
 * as OpenDaylight answers (with 409) for a topology not created yet.
 * @return 1 when the body is an ietf-restconf errors document with that tag, else 0.
 */
int topo_is_data_missing(const char *body, size_t len);

/** @return The YANG name of @p status: "connected", "connecting" or "unable-to-connect". */
const char *topo_status_name(enum topo_status status);

#endif
