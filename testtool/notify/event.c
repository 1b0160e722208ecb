/*
 * Event ids and the channels' shares of an event (see event.h). The
 * channels themselves stay where they are (trap.c, stream.c, syslog_chan.c);
 * this file numbers events and adds the id to what each channel sends.
 */
#include "event.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "device.h"
#include "device_ctl.h"
#include "devview.h"
#include "log.h"
#include "notif_file.h"
#include "sbuf.h"
#include "stream.h"
#include "syslog_chan.h"
#include "trap.h"
#include "trap_chan.h"
#include "trap_device.h"

/* fleetsimEventId.0: 32473 is RFC 5612's documentation enterprise number (fleetsim has none of its own; the
 * syslog SD-ID fleetsim@32473 uses it too), .1 the project's objects, .1 the event id, .0 its instance. */
const struct oid event_id_oid = {.len = 10, .sub = {1, 3, 6, 1, 4, 1, 32473, 1, 1, 0}};
/* authenticationFailure (SNMPv2-MIB, RFC 3418). */
static const struct oid event_auth_failure_oid = {.len = 10, .sub = {1, 3, 6, 1, 6, 3, 1, 1, 5, 5}};

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
event_add_leaf(struct sbuf *b, uint64_t id)
{
    sbuf_printf(b, "<event-id xmlns=\"" EVENT_YANG_NS "\">%" PRIu64 "</event-id>", id);
}

void
event_send_trap(struct device *dev, const struct oid *trap_oid, const struct trap_varbind *varbinds,
                size_t varbind_count, uint64_t id)
{
    struct fleet *fleet = dev->worker->fleet;
    uint64_t now_ms = devview_now_ms(fleet);
    char id_text[EVENT_ID_TEXT_BYTES];
    struct trap_device_origin origin; /* address, agent socket, sysName and engine (v3) */
    /* The caller's objects, then the id: a notification's own objects come first (RFC 3416 4.2.6). */
    struct trap_varbind vb[8];

    if (!dev->worker->traps || !fleet->cfg.trap_sink_count || varbind_count >= sizeof vb / sizeof vb[0]) {
        return;
    }
    if (!trap_chan_rows(dev)) {
        return;
    }
    for (size_t i = 0; i < varbind_count; i++) {
        vb[i] = varbinds[i];
    }
    event_trap_varbind(event_id_text(id, id_text, sizeof id_text), &vb[varbind_count]);
    trap_device_origin(dev, now_ms, &origin);
    for (uint32_t k = 0; k < fleet->cfg.trap_sink_count; k++) {
        trap_send(dev->worker->traps, &origin.from, &fleet->cfg.trap_sinks[k],
                  (uint32_t)(((now_ms - dev->boot_ms) / 10) & 0xffffffffu), trap_oid, vb, varbind_count + 1,
                  &dev->trap_rows[k]);
    }
}

int
event_authen_traps_enabled(const struct device *dev)
{
    if (dev->ctl && dev->ctl->authen_traps) {
        return dev->ctl->authen_traps == 1; /* an SNMP SET's */
    }
    return !dev->type->authen_traps_disabled;
}

uint64_t
event_config_changed(struct device *dev, uint64_t now_ms)
{
    uint64_t id = event_next_id(dev);

    if (!dev->worker) {
        return id;
    }
    if (stream_has_subscribers(dev)) {
        struct sbuf b = {0};
        char time_text[40];
        notif_format_time(now_ms, time_text, sizeof time_text);
        sbuf_printf(&b,
                    "<notification xmlns=\"urn:ietf:params:xml:ns:netconf:notification:1.0\"><eventTime>%s"
                    "</eventTime><netconf-config-change "
                    "xmlns=\"urn:ietf:params:xml:ns:yang:ietf-netconf-notifications\"><changed-by><server/>"
                    "</changed-by><datastore>running</datastore>",
                    time_text);
        event_add_leaf(&b, id);
        sbuf_adds(&b, "</netconf-config-change></notification>");
        if (!b.failed) {
            stream_emit(dev, b.buf, b.len, now_ms);
        }
        sbuf_free(&b);
    }
    syslog_chan_event(dev, "config-commit", -1, id, NULL);
    return id;
}

uint64_t
event_login_refused(struct device *dev, enum event_login what, const char *user, const char *peer)
{
    struct syslog_who who = {.user = user, .peer = peer};
    uint64_t id = event_next_id(dev);

    if (!dev->worker) { /* a device outside a running fleet (a test's) has no channels */
        return id;
    }
    log_debug("device %u: %s login refused (event %" PRIu64 ")", dev->index,
              what == EVENT_LOGIN_SSH ? "SSH" : "SNMP", id);
    if (event_authen_traps_enabled(dev)) {
        event_send_trap(dev, &event_auth_failure_oid, NULL, 0, id);
    }
    syslog_chan_event(dev, "login-failure", -1, id, &who);
    return id;
}
