/*
 * Event ids and how each channel writes one (see event_id.h).
 */
#include "event_id.h"

#include <inttypes.h>
#include <stdio.h>

#include "ber.h"
#include "device.h"
#include "sbuf.h"
#include "trap_types.h"

/* fleetsimEventId.0: 32473 is RFC 5612's documentation enterprise number (fleetsim has none of its own; the
 * syslog SD-ID fleetsim@32473 uses it too), .1 the project's objects, .1 the event id, .0 its instance. */
const struct oid event_id_oid = {.len = 10, .sub = {1, 3, 6, 1, 4, 1, 32473, 1, 1, 0}};

uint64_t
event_next_id(struct device *dev)
{
    /* After 2^32 - 1 events the count starts again at 1: ids repeat only after that many of one device. */
    if (!++dev->event_count) {
        dev->event_count = 1;
    }
    return ((uint64_t)dev->index + 1) << 32 | dev->event_count;
}

char *
event_id_text(uint64_t id, char *buf, size_t buf_len)
{
    snprintf(buf, buf_len, "%" PRIu64, id);
    return buf;
}

void
event_trap_varbind(const char *id_text, struct trap_varbind *vb)
{
    size_t len = 0;

    while (id_text[len]) {
        len++;
    }
    *vb = (struct trap_varbind){
        .name = &event_id_oid,
        .value = {.tag = BER_OCTET_STRING, .v.bytes = {.ptr = (const uint8_t *)id_text, .len = len}}};
}

void
event_add_leaf(struct sbuf *b, uint64_t id, const char *run_tag)
{
    sbuf_printf(b, "<event-id xmlns=\"" EVENT_YANG_NS "\">%" PRIu64 "</event-id>", id);
    if (run_tag && *run_tag) {
        sbuf_adds(b, "<run-tag xmlns=\"" EVENT_YANG_NS "\">");
        sbuf_add_xml(b, run_tag);
        sbuf_adds(b, "</run-tag>");
    }
}
