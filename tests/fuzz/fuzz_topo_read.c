/*
 * Fuzz harness of the controller topology reader (stress/topo_read.h),
 * which fleetsim-stress controller-mount runs on every answer of a
 * RESTCONF controller.
 *
 * Input: byte 0 picks the node-id suffix counted ("", "-7" or "device"),
 * the rest is the answer body (copied to a heap block of exactly its size,
 * no NUL). The counts must add up: the statuses sum to the nodes seen,
 * the unknown ones are among the connecting, the sample of nodes not
 * connected holds the first ones up to its size, each id NUL-terminated
 * and ending in the suffix unless cut. A refused body comes with an error
 * text. The error-document check runs on the same body.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "topo_read.h"

/* Longest input looked at. */
#define FZ_MAX_INPUT_BYTES 65536
/* Room for topo_count's error text. */
#define FZ_ERR_BYTES 256

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const suffixes[] = {"", "-7", "device", ""};
    const char *suffix;
    struct topo_counts c;
    char err[FZ_ERR_BYTES];
    char *body;
    size_t len;
    uint32_t not_connected;
    int rc;

    if (size < 1 || size > FZ_MAX_INPUT_BYTES) {
        return 0;
    }
    suffix = suffixes[data[0] & 3];
    len = size - 1;
    body = malloc(len ? len : 1);
    fz_require(body != NULL, "out of memory");
    memcpy(body, data + 1, len);

    err[0] = '\0';
    rc = topo_count(body, len, suffix, &c, err, sizeof err);
    fz_require(rc == 0 || rc == -1, "return value out of range");
    if (rc) {
        fz_require(err[0] != '\0' && strnlen(err, sizeof err) < sizeof err, "refusal without an error text");
    } else {
        fz_require(c.by_status[TOPO_CONNECTED] + c.by_status[TOPO_CONNECTING] + c.by_status[TOPO_FAILED] ==
                       c.seen,
                   "statuses do not sum to the nodes seen");
        fz_require(c.unknown <= c.by_status[TOPO_CONNECTING], "unknown statuses not counted as connecting");
        not_connected = c.seen - c.by_status[TOPO_CONNECTED];
        fz_require(c.not_connected_count ==
                       (not_connected < TOPO_SAMPLE_NAMES ? not_connected : TOPO_SAMPLE_NAMES),
                   "sample of nodes not connected has the wrong size");
        for (uint32_t i = 0; i < c.not_connected_count; i++) {
            const struct topo_name *n = &c.not_connected[i];
            size_t id_len = strnlen(n->id, sizeof n->id);
            size_t suffix_len = strlen(suffix);

            fz_require(id_len < sizeof n->id, "sampled node-id not NUL-terminated");
            fz_require(n->status == TOPO_CONNECTING || n->status == TOPO_FAILED, "sampled node is connected");
            /* Only an id cut to fit may lose its suffix. */
            fz_require(id_len + 1 == sizeof n->id ||
                           (id_len >= suffix_len && !memcmp(n->id + id_len - suffix_len, suffix, suffix_len)),
                       "sampled node-id lacks the suffix");
            fz_require(strcmp(topo_status_name(n->status), "?") != 0, "status without a name");
        }
    }
    rc = topo_is_data_missing(body, len);
    fz_require(rc == 0 || rc == 1, "data-missing answer out of range");
    free(body);
    return 0;
}
