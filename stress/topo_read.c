/*
 * Reading a topology-netconf answer; see topo_read.h. The whole document
 * is parsed into json_read's tree and then walked. Its cost: memory in
 * proportion to the document, which for OpenDaylight includes every node's
 * available-capabilities (a few KiB per node, so tens of MiB for tens of
 * thousands of nodes), all freed after each poll. The way out, if a fleet
 * ever makes that too much, is a streaming scan that keeps only node-id and
 * connection-status.
 */
#include "topo_read.h"

#include <stdio.h>
#include <string.h>

#include "json_read.h"

/* Members as OpenDaylight names them in JSON (RFC 7951: module-qualified where the module changes). */
#define TOPO_LIST_MEMBER       "network-topology:topology"
#define TOPO_LIST_MEMBER_SHORT "topology"
#define TOPO_STATUS_LEAF       "netconf-node-topology:connection-status"
#define TOPO_NODE_CONTAINER    "netconf-node-topology:netconf-node"

const char *
topo_status_name(enum topo_status status)
{
    static const char *const names[TOPO_STATUS_COUNT] = {"connected", "connecting", "unable-to-connect"};

    return status < TOPO_STATUS_COUNT ? names[status] : "?";
}

static int
ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s);
    size_t m = strlen(suffix);

    return n >= m && !memcmp(s + n - m, suffix, m);
}

/* The node's status text: the leaf on the node (older releases), else inside netconf-node (newer). */
static const char *
node_status(const struct jsonr_value *node)
{
    const char *s = jsonr_get_str(node, TOPO_STATUS_LEAF);

    if (!s) {
        s = jsonr_get_str(jsonr_get(node, TOPO_NODE_CONTAINER), "connection-status");
    }
    return s;
}

/* What a walk passes down: the suffix, the counts, and the per-node callback (or NULL). */
struct topo_walk {
    const char *suffix;      /* only node-ids ending in it count */
    struct topo_counts *out; /* the counts */
    topo_node_fn each;       /* called for every counted node, or NULL */
    void *user;              /* its argument */
};

static void
count_node(const struct jsonr_value *node, const struct topo_walk *w)
{
    const char *suffix = w->suffix;
    struct topo_counts *out = w->out;
    const char *id = jsonr_get_str(node, "node-id");
    const char *text;
    enum topo_status st;

    if (!id || !ends_with(id, suffix)) {
        out->ignored++;
        return;
    }
    text = node_status(node);
    if (text && !strcmp(text, "connected")) {
        st = TOPO_CONNECTED;
    } else if (text && !strcmp(text, "unable-to-connect")) {
        st = TOPO_FAILED;
    } else {
        st = TOPO_CONNECTING;
        if (!text || strcmp(text, "connecting")) {
            out->unknown++;
        }
    }
    out->seen++;
    out->by_status[st]++;
    if (w->each) {
        w->each(w->user, id, st);
    }
    if (st != TOPO_CONNECTED && out->not_connected_count < TOPO_SAMPLE_NAMES) {
        struct topo_name *n = &out->not_connected[out->not_connected_count++];
        snprintf(n->id, sizeof n->id, "%s", id);
        n->status = st;
    }
}

static int
count_topology(const struct jsonr_value *topo, const struct topo_walk *w, char *err, size_t err_len)
{
    const struct jsonr_value *nodes;

    if (topo->type != JSONR_OBJECT) {
        snprintf(err, err_len, "a topology is not an object");
        return -1;
    }
    nodes = jsonr_get(topo, "node");
    if (!nodes) {
        return 0;
    }
    if (nodes->type != JSONR_ARRAY) {
        snprintf(err, err_len, "\"node\" is not an array");
        return -1;
    }
    for (const struct jsonr_value *n = nodes->child; n; n = n->next) {
        if (n->type != JSONR_OBJECT) {
            snprintf(err, err_len, "a node is not an object");
            return -1;
        }
        count_node(n, w);
    }
    return 0;
}

int
topo_count(const char *body, size_t len, const char *suffix, struct topo_counts *out, char *err,
           size_t err_len)
{
    return topo_count_each(body, len, suffix, out, NULL, NULL, err, err_len);
}

int
topo_count_each(const char *body, size_t len, const char *suffix, struct topo_counts *out, topo_node_fn each,
                void *user, char *err, size_t err_len)
{
    const struct topo_walk w = {.suffix = suffix, .out = out, .each = each, .user = user};
    struct jsonr_value *doc = NULL;
    const struct jsonr_value *list;
    char why[160];
    int rc = -1;

    memset(out, 0, sizeof *out);
    if (jsonr_parse(body, len, &doc, why, sizeof why)) {
        snprintf(err, err_len, "not JSON: %s", why);
        goto cleanup;
    }
    if (doc->type != JSONR_OBJECT) {
        snprintf(err, err_len, "not a JSON object");
        goto cleanup;
    }
    list = jsonr_get(doc, TOPO_LIST_MEMBER);
    if (!list) {
        list = jsonr_get(doc, TOPO_LIST_MEMBER_SHORT);
    }
    if (!list) {
        if (doc->count) {
            snprintf(err, err_len, "no \"" TOPO_LIST_MEMBER "\" member");
            goto cleanup;
        }
        rc = 0; /* {}: nothing there yet */
        goto cleanup;
    }
    if (list->type == JSONR_OBJECT) {
        rc = count_topology(list, &w, err, err_len);
        goto cleanup;
    }
    if (list->type != JSONR_ARRAY) {
        snprintf(err, err_len, "\"" TOPO_LIST_MEMBER "\" is neither a list nor an object");
        goto cleanup;
    }
    for (const struct jsonr_value *t = list->child; t; t = t->next) {
        if (count_topology(t, &w, err, err_len)) {
            goto cleanup;
        }
    }
    rc = 0;

cleanup:
    jsonr_free(doc);
    return rc;
}

int
topo_is_data_missing(const char *body, size_t len)
{
    struct jsonr_value *doc = NULL;
    const struct jsonr_value *errors;
    const struct jsonr_value *list;
    char why[160];
    int found = 0;

    if (jsonr_parse(body, len, &doc, why, sizeof why)) {
        return 0;
    }
    errors = jsonr_get(doc, "ietf-restconf:errors");
    if (!errors) {
        errors = jsonr_get(doc, "errors");
    }
    list = jsonr_get(errors, "error");
    if (list && list->type == JSONR_OBJECT) {
        const char *tag = jsonr_get_str(list, "error-tag");
        found = tag && !strcmp(tag, "data-missing");
    } else if (list && list->type == JSONR_ARRAY) {
        for (const struct jsonr_value *e = list->child; e && !found; e = e->next) {
            const char *tag = jsonr_get_str(e, "error-tag");
            found = tag && !strcmp(tag, "data-missing");
        }
    }
    jsonr_free(doc);
    return found;
}
