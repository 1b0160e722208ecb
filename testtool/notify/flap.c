/*
 * Flap events. The time to a device's next event is exponential with mean
 * 1/R, drawn from (device seed, event number), so a run repeats; the
 * interface is drawn the same way among those whose link the profile has
 * up, and an interface a flap took down is the one the next flap brings up.
 */
#include "flap.h"
#include "device_ctl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "devview.h"
#include "event.h"
#include "notif_file.h"
#include "stream.h"
#include "syslog_chan.h"
#include "trap.h"
#include "trap_chan.h"
#include "trap_device.h"

static void on_flap(struct loop *loop, struct loop_timer *timer);

static void
arm(struct device *dev, monotime_us from_us)
{
    double rate = dev->group->cfg.flap_rate;
    double u = (double)(dyn_hash(dev->seed, 0xf1a9, dev->flap_count) >> 11) * 0x1.0p-53;
    double delay_s = -log1p(-u) / rate;

    if (delay_s > 1e6) {
        delay_s = 1e6;
    }
    loop_timer_start(dev->worker->loop, &dev->flap_timer, from_us + (monotime_us)(delay_s * 1e6), on_flap);
}

/* The interface this event changes: the one a flap holds down, else a drawn one whose link is up. */
static int32_t
pick(struct device *dev)
{
    const struct profile *p = dev->type->profile;

    if (dev->flap_down_pos >= 0) {
        return dev->flap_down_pos;
    }
    for (uint32_t tries = 0; tries < p->if_count; tries++) {
        uint32_t pos = (uint32_t)((dyn_hash(dev->seed, 0xf1ac, dev->flap_count) + tries) % p->if_count);
        if (p->ifs[pos].link_up && p->ifs[pos].speed_bps) {
            return (int32_t)pos;
        }
    }
    return -1;
}

static void
notify_subscribers(struct device *dev, uint32_t pos, int admin_up, int oper_up, uint64_t now_ms,
                   uint64_t event_id)
{
    const struct profile_interface *pi = &dev->type->profile->ifs[pos];
    struct sbuf b = {0};
    char time_text[40];

    notif_format_time(now_ms, time_text, sizeof time_text);
    sbuf_printf(
        &b,
        "<notification xmlns=\"urn:ietf:params:xml:ns:netconf:notification:1.0\"><eventTime>%s</eventTime>"
        "<if-state-change xmlns=\"urn:fleetsim:if-events\"><if-name>",
        time_text);
    sbuf_add_xml(&b, pi->name);
    sbuf_printf(
        &b, "</if-name><if-index>%u</if-index><admin-status>%s</admin-status><oper-status>%s</oper-status>",
        (unsigned)pos + 1, admin_up ? "up" : "down", oper_up ? "up" : "down");
    event_add_leaf(&b, event_id, dev->worker->fleet->cfg.run_tag);
    sbuf_adds(&b, "</if-state-change></notification>");
    if (!b.failed) {
        stream_emit(dev, b.buf, b.len, now_ms);
    }
    sbuf_free(&b);
}

int
flap_link(struct device *dev, uint32_t pos, int up, uint64_t now_ms)
{
    struct fleet *fleet = dev->worker->fleet;
    const struct devview_cfg *cfg;
    struct trap_device_origin origin;
    char id_text[EVENT_ID_TEXT_BYTES];
    struct trap_varbind id_vb;
    int admin_up, oper_up;
    uint64_t event_id;

    if (devview_set_link(dev, pos, up, now_ms) || !(cfg = devview_cfg(dev))) {
        return -1;
    }
    admin_up = cfg->enabled[pos];
    oper_up = devview_oper(dev, pos) == DEVVIEW_OPER_UP;
    /* One id for the transition, in all three channels' messages. */
    event_id = event_next_id(dev);
    event_trap_varbind(event_id_text(event_id, id_text, sizeof id_text), &id_vb);
    if (stream_has_subscribers(dev)) {
        notify_subscribers(dev, pos, admin_up, oper_up, now_ms, event_id);
    }
    /* From the device's agent socket when it has one (a port per device: the source port names it), else
     * from its address; and named inside (snmpTrapAddress.0, sysName.0) either way. */
    trap_device_origin(dev, now_ms, &origin);
    for (uint32_t k = 0; k < fleet->cfg.trap_sink_count && dev->worker->traps; k++) {
        if (!trap_chan_rows(dev)) {
            break;
        }
        trap_send_link_more(dev->worker->traps, &origin.from, &fleet->cfg.trap_sinks[k],
                            (uint32_t)(((now_ms - dev->boot_ms) / 10) & 0xffffffffu), oper_up, pos + 1,
                            admin_up ? TRAP_IF_STATUS_UP : TRAP_IF_STATUS_DOWN,
                            oper_up ? TRAP_IF_STATUS_UP : TRAP_IF_STATUS_DOWN, &id_vb, 1, &dev->trap_rows[k]);
    }
    /* The same event as a syslog line, when the device's catalog names one. */
    syslog_chan_event(dev, oper_up ? "link-up" : "link-down", (int32_t)pos, event_id, NULL);
    return 0;
}

static void
on_flap(struct loop *loop, struct loop_timer *timer)
{
    struct device *dev = (struct device *)((char *)timer - offsetof(struct device, flap_timer));
    int32_t pos;
    enum pushwin_phase phase = pushwin_phase_now();

    /* --flap-rate is the fleet acting on its own: outside the run window no flap happens. Before START
     * its syslog line counts as suppressed (traps and notifications keep their own counts). */
    if (phase != PUSHWIN_INSIDE) {
        if (phase == PUSHWIN_BEFORE && !devact_snmp_silent(dev)) {
            syslog_chan_suppress(dev);
        }
        arm(dev, loop_now_us(loop));
        return;
    }
    pos = pick(dev);
    dev->flap_count++;
    if (pos >= 0 && !devact_snmp_silent(dev)) { /* a device down or absent has no links to flap */
        int up = dev->flap_down_pos == pos;     /* bring back what a flap took down */
        if (!flap_link(dev, (uint32_t)pos, up, devview_now_ms(dev->worker->fleet))) {
            dev->flap_down_pos = up ? -1 : pos;
        }
    }
    arm(dev, loop_now_us(loop));
}

enum fleet_err
flap_start_all(struct fleet *fleet, char *err, size_t err_len)
{
    const struct fleet_config *cfg = &fleet->cfg;
    int other_family = 0;

    for (uint32_t k = 0; k < cfg->trap_sink_count; k++) {
        other_family |= cfg->trap_sinks[k].ep.sa.ss_family != netaddr_af(&cfg->ip_fam);
    }
    for (uint32_t i = 0; cfg->trap_sink_count && i < cfg->threads; i++) {
        struct trap_sender_config tc = {.inform = cfg->trap_inform,
                                        .timeout_ms = TRAP_DEFAULT_INFORM_TIMEOUT_MS,
                                        .retries = TRAP_DEFAULT_INFORM_RETRIES,
                                        .max_pending = TRAP_DEFAULT_MAX_PENDING,
                                        .community = cfg->trap_community,
                                        .fam = cfg->ip_fam,
                                        .bind_addr = 0,
                                        .other_family = other_family,
                                        .request_id_seed = 0x5eed0000u + i,
                                        .version = cfg->trap_version,
                                        .v3_user = cfg->trap_v3_user_set ? &cfg->trap_v3_user : NULL};
        if (trap_sender_new(fleet->workers[i].loop, &tc, &fleet->workers[i].traps, err, err_len)) {
            return FLEET_ERR_SYS;
        }
    }
    for (uint32_t i = 0; i < cfg->device_count; i++) {
        struct device *dev = &fleet->devices[i];
        if (dev->group->cfg.flap_rate > 0) {
            arm(dev, loop_now_us(dev->worker->loop));
        }
    }
    return FLEET_OK;
}

void
flap_close_all(struct fleet *fleet)
{
    for (uint32_t i = 0; fleet->devices && i < fleet->cfg.device_count; i++) {
        struct device *dev = &fleet->devices[i];
        if (dev->worker && dev->worker->loop) {
            loop_timer_stop(dev->worker->loop, &dev->flap_timer);
        }
    }
    for (uint32_t i = 0; fleet->workers && i < fleet->cfg.threads; i++) {
        trap_sender_free(fleet->workers[i].traps);
        fleet->workers[i].traps = NULL;
    }
    for (uint32_t i = 0; fleet->devices && i < fleet->cfg.device_count; i++) {
        free(fleet->devices[i].trap_rows);
        fleet->devices[i].trap_rows = NULL;
    }
}
