/*
 * Fuzz harness of the trap catalog reader (testtool/notify/trap_catalog.h)
 * and of what the channel does with a catalog it accepted.
 *
 * Input: a catalog file (copied to a heap block of exactly its size).
 * A refused file leaves no catalog and says why. An accepted one holds
 * only what the limits allow (weights, object count, unique ids), a draw
 * never lands on a weight-0 trap, and every template builds with drawn
 * values and encodes as a v1 and a v2c message inside TRAP_MAX_MSG_BYTES
 * (or is refused by the size check, never written past it).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "trap_catalog.h"
#include "trap_pdu.h"

/* Longest input looked at (the reader's own bound is larger: it is unit-tested). */
#define FZ_MAX_INPUT_BYTES 65536
/* Encode buffer: the largest message behind the largest v1 headroom. */
#define FZ_BUF_BYTES (TRAP_MAX_MSG_BYTES + SPDU_TRAP_V1_HEADROOM(6))

static void
fz_check_trap(const struct trap_template *t, uint64_t draw)
{
    static uint8_t buf[FZ_BUF_BYTES];
    static struct trap_catalog_built built;
    struct trap_origin from = {.addr = 0x0a000001u, .fd = -1, .name = "h"};
    struct trap_catalog_vars vars = {
        .host = "h", .ifname = "Gi0/0/0/0", .ifindex = 1 + (uint32_t)(draw % 64), .draw = draw};
    struct trap_pdu_in in = {.from = &from, .sysuptime_ticks = 1, .trap_oid = &t->trap_oid};
    uint8_t *msg;
    size_t len;
    enum fleet_err rc;

    fz_require(trap_catalog_build(t, &vars, &built) == FLEET_OK, "an accepted template does not build");
    fz_require(built.varbind_count == t->object_count, "built a different number of objects");
    in.varbinds = built.varbinds;
    in.varbind_count = built.varbind_count;
    rc = trap_pdu_encode_v2c(&in, (const uint8_t *)"public", 6, SPDU_TRAP_V2, 1, TRAP_MAX_MSG_BYTES, buf,
                             sizeof buf, &msg, &len);
    fz_require(rc == FLEET_ERR_LIMIT || (rc == FLEET_OK && len <= TRAP_MAX_MSG_BYTES), "v2c encoding");
    rc = trap_pdu_encode_v1(&in, (const uint8_t *)"public", 6, TRAP_MAX_MSG_BYTES, buf, sizeof buf, &msg,
                            &len);
    fz_require(rc == FLEET_ERR_LIMIT || (rc == FLEET_OK && len <= TRAP_MAX_MSG_BYTES), "v1 encoding");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct trap_catalog *cat = NULL;
    char err[256] = "";
    uint64_t sum = 0;
    char *text;

    if (size > FZ_MAX_INPUT_BYTES) {
        return 0;
    }
    text = fz_copy_input(data, size);
    if (trap_catalog_parse(text, size, &cat, err, sizeof err)) {
        fz_require(cat == NULL, "a refused catalog left a catalog");
        fz_require(err[0] != '\0', "a refusal without a reason");
        free(text);
        return 0;
    }
    fz_require(cat != NULL && cat->count >= 1 && cat->count <= TRAP_CATALOG_MAX_TRAPS, "trap count");
    for (uint32_t i = 0; i < cat->count; i++) {
        const struct trap_template *t = &cat->traps[i];
        fz_require(t->weight <= TRAP_CATALOG_MAX_WEIGHT, "weight out of range");
        fz_require(t->object_count <= TRAP_CATALOG_MAX_OBJECTS, "too many objects");
        fz_require(trap_catalog_find(cat, t->id) == t, "ids are not unique");
        sum += t->weight;
        fz_check_trap(t, i * 0x9e3779b97f4a7c15ull);
        fz_check_trap(t, ~(i * 0x9e3779b97f4a7c15ull));
    }
    fz_require(sum == cat->total_weight && sum > 0, "total weight");
    for (uint64_t d = 0; d < 64; d++) {
        fz_require(trap_catalog_pick(cat, d * 0x9e3779b97f4a7c15ull + d)->weight > 0, "drew a weight-0 trap");
    }
    trap_catalog_free(cat);
    free(text);
    return 0;
}
