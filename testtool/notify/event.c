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

/* authenticationFailure (SNMPv2-MIB, RFC 3418). */
static const struct oid event_auth_failure_oid = {.len = 10, .sub = {1, 3, 6, 1, 6, 3, 1, 1, 5, 5}};

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
        event_add_leaf(&b, id, dev->worker->fleet->cfg.run_tag);
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
