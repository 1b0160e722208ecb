/*
 * Fuzz harness of the SNMP agent: each input is one datagram answered by
 * respond() for a real device (SNMPv1, v2c with the read and write
 * communities, SNMPv3 with USM users at all three security levels; the
 * device's engine time is fixed, so captured authenticated requests stay in
 * the time window). GET, GETNEXT, GETBULK and SET run over the device's MIB
 * view; a SET may change its running configuration, so the device is reset
 * after every input. Inputs are the UDP payload, no longer than the agent
 * reads.
 *
 * Checked beyond memory safety: a response never exceeds the agent's size
 * limit, and a response to a v1 or v2c request decodes as a Response PDU of
 * the same version, community and request-id.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "fuzz_fleet.h"
#include "respond.h"
#include "spdu.h"

static struct respond_scratch *fz_scratch; /* lent to respond(), as a worker lends its own */

static void
fz_scratch_free(void)
{
    free(fz_scratch);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_fleet_open(NULL);
    if (!(fz_scratch = malloc(sizeof *fz_scratch))) {
        exit(1);
    }
    atexit(fz_scratch_free);
    return 0;
}

/* What a manager would check of the response to @p data. */
static void
fz_check_response(const uint8_t *data, size_t size, const uint8_t *reply, size_t reply_len)
{
    struct spdu_message q;
    struct spdu_message r;

    if (reply_len > fz_fleet.cfg.snmp_max_msg_bytes) {
        fprintf(stderr, "fuzz: a %zu-byte response passes the %u-byte limit\n", reply_len,
                (unsigned)fz_fleet.cfg.snmp_max_msg_bytes);
        abort();
    }
    if (spdu_message_decode(data, size, &q) != FLEET_OK) {
        return; /* SNMPv3: its answer is checked by the wire harness's client side */
    }
    if (spdu_message_decode(reply, reply_len, &r) != FLEET_OK || r.pdu.type != SPDU_RESPONSE ||
        r.version != q.version || r.pdu.request_id != q.pdu.request_id ||
        r.community_len != q.community_len || memcmp(r.community, q.community, q.community_len)) {
        fprintf(stderr, "fuzz: the response does not answer the request\n");
        abort();
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t out_cap = fz_fleet.cfg.snmp_max_msg_bytes + SPDU_HEADROOM(255);
    uint8_t *req;
    uint8_t *out;
    uint8_t *reply = NULL;
    size_t reply_len;

    if (size > AGENT_MAX_REQUEST_BYTES) {
        return -1;
    }
    /* Exact-size copies, so any read past the datagram or the response buffer is caught. */
    req = fz_copy_input(data, size);
    out = malloc(out_cap);
    fz_require(out != NULL, "out of memory");
    reply_len = respond(fz_device(), fz_scratch, req, size, NULL, out, out_cap, 0, &reply);
    if (reply_len) {
        fz_check_response(data, size, reply, reply_len);
    }
    fz_device_reset();
    free(out);
    free(req);
    return 0;
}
