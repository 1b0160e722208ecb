/*
 * Fuzz harness of the syslog catalog reader (testtool/notify/syslog_catalog.h)
 * and of what the channel does with a catalog it accepted.
 *
 * Input: a catalog file (copied to a heap block of exactly its size).
 * A refused file leaves no catalog and says why. An accepted one holds
 * only what the limits allow (facility 0..23, severity 0..7, weights, text
 * length, unique ids), its cumulative weights add up, a draw never lands
 * on a weight-0 line, every template expands inside its buffer, and every
 * expanded line renders as RFC 5424 and 3164 inside SYSLOG_MAX_MSG_BYTES.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "syslog_catalog.h"
#include "syslog_msg.h"

/* Longest input looked at (the reader's own bound is larger: it is unit-tested). */
#define FZ_MAX_INPUT_BYTES 65536
/* Room for an expanded template and its guard. */
#define FZ_TEXT_BYTES 4096
#define FZ_GUARD      0x5a

static void
fz_check_line(const struct syslog_template *t, uint64_t draw)
{
    static char text[FZ_TEXT_BYTES + 1], msg[SYSLOG_MAX_MSG_BYTES + 1];
    struct syslog_vars vars = {
        .host = "h", .addr = "192.0.2.1", .ifname = "Gi0/0/0/0", .ifindex = 1, .draw = draw};
    struct syslog_fields f = {.facility = t->facility,
                              .severity = t->severity,
                              .time_ms = 1700000000123ull,
                              .hostname = "h",
                              .app_name = t->app_name,
                              .msgid = t->msgid,
                              .seq = 1,
                              .run_tag = "r\"]\\",
                              .text = text};
    size_t n;

    text[FZ_TEXT_BYTES] = FZ_GUARD;
    n = syslog_catalog_expand(t, &vars, text, FZ_TEXT_BYTES);
    fz_require(n <= FZ_TEXT_BYTES && text[FZ_TEXT_BYTES] == FZ_GUARD, "expansion past its buffer");
    f.text_len = n;
    for (int fmt = 0; fmt < 2; fmt++) {
        msg[SYSLOG_MAX_MSG_BYTES] = FZ_GUARD;
        n = syslog_render(fmt ? SYSLOG_RFC3164 : SYSLOG_RFC5424, &f, msg, SYSLOG_MAX_MSG_BYTES);
        fz_require(n <= SYSLOG_MAX_MSG_BYTES && msg[SYSLOG_MAX_MSG_BYTES] == FZ_GUARD,
                   "render past its buffer");
        fz_require(!memchr(msg, '\n', n), "a rendered line holds a line feed");
        fz_require(n > 4 && msg[0] == '<', "a rendered line without its PRI");
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct syslog_catalog *cat = NULL;
    char err[256] = "";
    uint64_t sum = 0;
    char *text;

    if (size > FZ_MAX_INPUT_BYTES) {
        return 0;
    }
    text = fz_copy_input(data, size);
    if (syslog_catalog_parse(text, size, &cat, err, sizeof err)) {
        fz_require(cat == NULL, "a refused catalog left a catalog");
        fz_require(err[0] != '\0', "a refusal without a reason");
        free(text);
        return 0;
    }
    fz_require(cat != NULL && cat->count >= 1 && cat->count <= SYSLOG_CATALOG_MAX_MESSAGES, "message count");
    for (uint32_t i = 0; i < cat->count; i++) {
        const struct syslog_template *t = &cat->msgs[i];
        fz_require(t->facility <= 23 && t->severity <= 7, "facility or severity out of range");
        fz_require(t->weight <= SYSLOG_CATALOG_MAX_WEIGHT, "weight out of range");
        fz_require(t->id && t->app_name && t->text, "a template without id, app-name or text");
        fz_require(strlen(t->text) <= SYSLOG_CATALOG_MAX_TEXT_BYTES, "text over the limit");
        fz_require(syslog_catalog_find(cat, t->id) == t, "ids are not unique");
        sum += t->weight;
        fz_require(cat->cumulative[i] == sum, "cumulative weights do not add up");
        fz_check_line(t, i * 0x9e3779b97f4a7c15ull);
    }
    fz_require(sum == cat->total_weight && sum > 0, "total weight");
    for (uint64_t d = 0; d < 64; d++) {
        fz_require(syslog_catalog_pick(cat, d * 0x9e3779b97f4a7c15ull + d)->weight > 0,
                   "drew a weight-0 line");
    }
    syslog_catalog_free(cat);
    free(text);
    return 0;
}
