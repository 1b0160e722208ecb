/*
 * The control API's actions on one device; see device_actions.h. Every
 * function here runs on the device's worker (the API posts to its inbox),
 * so the device's sessions, sockets and datastores are touched by their
 * own thread only.
 *
 * A flap action takes its interface(s) down and up again with flap.c's
 * one transition (flap_link: device view, if-state-change, linkDown and
 * linkUp), a down and an up of the same length per flap, then leaves them
 * as it found them. A set has its own file (device_set.c).
 *
 * Down, per device, whatever the listening sockets: a device with its own
 * listener (a port per device) refuses by shutting that listener down
 * (the kernel answers SYNs with RST) and blackholes by shrinking its
 * backlog to nothing and filling it with one connection of our own, so the
 * kernel drops further SYNs and clients keep retrying. Behind a shared
 * port (an address per device) the kernel cannot tell devices apart, so
 * the accept path does it: refused connections are reset as soon as they
 * are accepted, blackholed ones are held without a byte until up.
 */
#include "device_actions.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "callhome.h"
#include "device_actions_internal.h"
#include "devview.h"
#include "dynamics.h"
#include "event.h"
#include "flap.h"
#include "listen.h"
#include "log.h"
#include "session.h"
#include "stream.h"
#include "syslog_chan.h"
#include "trap.h"
#include "trap_chan.h"
#include "trap_device.h"

struct device_ctl *
devact_ctl(struct device *dev)
{
    if (!dev->ctl && (dev->ctl = calloc(1, sizeof *dev->ctl))) {
        dev->ctl->plug_fd = -1;
        dev->ctl->dev = dev;
        loop_timer_init(&dev->ctl->reboot_timer);
        loop_timer_init(&dev->ctl->flap_timer);
    }
    return dev->ctl;
}

/* End every session of @p dev, as a dropped connection; @p reset: with an RST. */
static void
end_sessions(struct device *dev, int reset)
{
    struct session *s = dev->sessions, *next;

    for (; s; s = next) {
        next = s->dev_next;
        if (s->state == SESS_DEAD) {
            continue;
        }
        if (reset && s->fd >= 0) {
            devctl_reset_fd(s->fd);
        }
        sess_close(s, 0);
    }
}

static void
freeze_sessions(struct device *dev)
{
    dev->ctl->frozen = 1;
    for (struct session *s = dev->sessions; s; s = s->dev_next) {
        if (s->state < SESS_DEAD && s->fd >= 0) {
            loop_set_events(dev->worker->loop, s->fd, 0);
        }
    }
}

static void
thaw_sessions(struct device *dev)
{
    dev->ctl->frozen = 0;
    for (struct session *s = dev->sessions; s; s = s->dev_next) {
        if (s->state < SESS_DEAD && s->fd >= 0) {
            /* The flush writes what waited and turns reading back on. */
            sess_mark_pending(s);
        }
    }
}

/* Fill the (backlog 0) queue of the device's own listener with one connection of ours. */
static void
plug_listener(struct device *dev)
{
    struct device_ctl *ctl = dev->ctl;
    const struct net_family *fam = &dev->group->cfg.ip_fam;
    struct sockaddr_storage sa, local;
    socklen_t sa_len = netaddr_sockaddr(fam, dev->addr, dev->port, &sa);
    socklen_t len = sizeof local;
    struct net_endpoint e;

    if (fam->v6 ? IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6 *)&sa)->sin6_addr) : !dev->addr) {
        /* listening on the wildcard: the loopback address reaches it */
        sa_len = fam->v6 ? netaddr_sockaddr(&(struct net_family){.v6 = 1}, 1, dev->port, &sa)
                         : netaddr_sockaddr(fam, INADDR_LOOPBACK, dev->port, &sa);
    }
    ctl->plug_fd = socket(netaddr_af(fam), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (ctl->plug_fd < 0) {
        return;
    }
    if (connect(ctl->plug_fd, (struct sockaddr *)&sa, sa_len) < 0 && errno != EINPROGRESS) {
        close(ctl->plug_fd);
        ctl->plug_fd = -1;
        return;
    }
    if (!getsockname(ctl->plug_fd, (struct sockaddr *)&local, &len)) {
        netaddr_endpoint_set(&e, (struct sockaddr *)&local, len);
        ctl->plug_port = netaddr_endpoint_port(&e);
    }
}

/* Take the device's own listener out of service: @p mode refuse (shut down) or blackhole (plugged). */
static void
stop_listener(struct device *dev, int mode)
{
    struct device_ctl *ctl = dev->ctl;

    if (dev->listen_fd < 0) {
        return; /* a shared port: the accept path does it */
    }
    loop_set_events(dev->worker->loop, dev->listen_fd, 0);
    if (mode == DEVACT_REFUSE) {
        /* On Linux a listener shut down for reading stops listening and keeps its port bound. */
        if (!shutdown(dev->listen_fd, SHUT_RD)) {
            ctl->unlistened = 1;
        }
    } else if (!listen(dev->listen_fd, 0)) {
        ctl->throttled = 1;
        plug_listener(dev);
    }
}

/* Accept what waited on the plugged listener: our plug is closed, anyone else gets a session. */
static void
drain_plugged(struct device *dev)
{
    for (int i = 0; i < LISTEN_BACKLOG; i++) {
        struct sockaddr_storage peer;
        socklen_t len = sizeof peer;
        struct net_endpoint e;
        int fd = accept4(dev->listen_fd, (struct sockaddr *)&peer, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            return;
        }
        netaddr_endpoint_set(&e, (struct sockaddr *)&peer, len);
        if (netaddr_endpoint_port(&e) == dev->ctl->plug_port) {
            close(fd);
            continue;
        }
        sess_start(dev, fd);
    }
}

static void
restore_listener(struct device *dev)
{
    struct device_ctl *ctl = dev->ctl;

    if (dev->listen_fd >= 0 && (ctl->unlistened || ctl->throttled)) {
        if (listen(dev->listen_fd, LISTEN_BACKLOG) < 0) {
            log_error("device %u: cannot listen again on port %u: %m", dev->index, (unsigned)dev->port);
        }
        if (ctl->throttled) {
            if (ctl->plug_fd >= 0) {
                close(ctl->plug_fd);
                ctl->plug_fd = -1;
            }
            drain_plugged(dev);
        }
        loop_set_events(dev->worker->loop, dev->listen_fd, LOOP_READ);
    }
    ctl->unlistened = 0;
    ctl->throttled = 0;
    /* Connections held silent behind a shared port are served now, as if the network healed. */
    for (uint32_t i = 0; i < ctl->held_count; i++) {
        sess_start(dev, ctl->held[i]);
    }
    ctl->held_count = 0;
}

static void
go_down(struct device *dev, int mode, int freeze)
{
    struct device_ctl *ctl = dev->ctl;

    if (ctl->down) {
        restore_listener(dev); /* from one mode to the other */
    }
    ctl->down = (uint8_t)mode;
    if (freeze) {
        freeze_sessions(dev);
    } else {
        if (ctl->frozen) {
            ctl->frozen = 0;
        }
        end_sessions(dev, 1);
    }
    stop_listener(dev, mode);
}

/* A boot is one event: coldStart (SNMPv2-MIB, 1.3.6.1.6.3.1.1.5.1) to every trap sink, from the device, and
 * the catalog's boot lines, with one id. */
static void
send_cold_start(struct device *dev)
{
    static const struct oid cold_start = {.len = 10, .sub = {1, 3, 6, 1, 6, 3, 1, 1, 5, 1}};
    uint64_t id = event_next_id(dev);

    event_send_trap(dev, &cold_start, NULL, 0, id);
    syslog_chan_event(dev, "boot", -1, id, NULL);
}

static void
come_up(struct device *dev)
{
    struct device_ctl *ctl = dev->ctl;
    int was_rebooting = ctl->rebooting;

    loop_timer_stop(dev->worker->loop, &ctl->reboot_timer);
    restore_listener(dev);
    ctl->down = DEVACT_UP_MODE;
    ctl->rebooting = 0;
    if (ctl->frozen) {
        thaw_sessions(dev);
    }
    if (was_rebooting) {
        send_cold_start(dev);
    }
    callhome_device_up(dev);
}

static void
reboot_done(struct loop *loop, struct loop_timer *timer)
{
    struct device_ctl *ctl = (struct device_ctl *)((char *)timer - offsetof(struct device_ctl, reboot_timer));

    (void)loop;
    come_up(ctl->dev);
}

/* Running becomes startup, the candidate is dropped: what a reload does to the datastores. */
static void
reload_datastores(struct device *dev)
{
    struct datastore *ds = &dev->ds;

    if (ds->own[DS_STARTUP]) {
        struct lyd_node *copy = NULL;
        if (ds->tree[DS_STARTUP] && lyd_dup_siblings(ds->tree[DS_STARTUP], NULL, LYD_DUP_RECURSIVE, &copy)) {
            log_error("device %u: out of memory copying startup into running; running reset to the template",
                      dev->index);
            ds_reset(ds, DS_RUNNING);
        } else {
            ds_replace(ds, DS_RUNNING, copy);
        }
    } else {
        ds_reset(ds, DS_RUNNING);
    }
    ds_reset(ds, DS_CANDIDATE);
    for (int id = 0; id < DS_COUNT; id++) {
        ds->lock[id] = 0;
    }
}

static void
reboot(struct device *dev, uint32_t for_ms)
{
    struct device_ctl *ctl = dev->ctl;

    if (ctl->down) {
        restore_listener(dev);
    }
    ctl->frozen = 0;
    end_sessions(dev, 1);
    ctl->down = DEVACT_REFUSE;
    ctl->rebooting = 1;
    stop_listener(dev, DEVACT_REFUSE);
    reload_datastores(dev);
    dev->boot_ms = devview_now_ms(dev->worker->fleet);
    dev->reboots++;
    loop_timer_start(dev->worker->loop, &ctl->reboot_timer,
                     loop_now_us(dev->worker->loop) + (monotime_us)for_ms * 1000u, reboot_done);
}

static void flap_finish(struct device *dev);

/* A channel's rate profile changed: its schedule starts again from now (and lets go of the old profile). */
static void
rate_changed(struct device *dev, enum devctl_rate r)
{
    switch (r) {
    case DEVCTL_RATE_NOTIF:
        stream_rate_changed(dev);
        break;
    case DEVCTL_RATE_SYSLOG:
        syslog_chan_rate_changed(dev);
        break;
    case DEVCTL_RATE_TRAP:
        trap_chan_rate_changed(dev);
        break;
    case DEVCTL_RATES:
        break;
    }
}

/* A device leaving the fleet forgets its rate overrides: it rejoins at its group's rates. */
static void
drop_rates(struct device *dev)
{
    for (int r = 0; r < DEVCTL_RATES; r++) {
        struct rate_profile *old = dev->ctl->rate[r];
        if (old) {
            dev->ctl->rate[r] = NULL;
            rate_changed(dev, (enum devctl_rate)r);
            free(old);
        }
    }
}

/* notification-rate, syslog-rate, trap-rate: the profile in force from now on, or back to the group's. */
static int
set_rate(struct device *dev, const struct devact_params *p)
{
    enum devctl_rate r = p->kind == DEVACT_NOTIF_RATE    ? DEVCTL_RATE_NOTIF
                         : p->kind == DEVACT_SYSLOG_RATE ? DEVCTL_RATE_SYSLOG
                                                         : DEVCTL_RATE_TRAP;
    struct rate_profile *old = dev->ctl->rate[r], *fresh = NULL;

    if (!p->rate_reset) {
        if (!(fresh = malloc(sizeof *fresh))) {
            return -1;
        }
        *fresh = p->rate;
    }
    dev->ctl->rate[r] = fresh;
    rate_changed(dev, r); /* the schedule lets go of old before it is freed */
    free(old);
    return 0;
}

/* The device leaves the fleet: its sessions reset, it refuses, and what it held is forgotten. */
static void
leave(struct device *dev)
{
    struct device_ctl *ctl = dev->ctl;

    if (ctl->absent) {
        return;
    }
    loop_timer_stop(dev->worker->loop, &ctl->reboot_timer);
    if (ctl->down) {
        restore_listener(dev);
    }
    ctl->frozen = 0;
    end_sessions(dev, 1);
    ctl->down = DEVACT_REFUSE;
    ctl->rebooting = 0;
    ctl->absent = 1;
    ctl->has_nc_latency = ctl->has_snmp_latency = ctl->has_drop_rate = 0;
    drop_rates(dev);
    flap_finish(dev); /* an interface a flap action holds down is up again when the device rejoins */
    stop_listener(dev, DEVACT_REFUSE);
    for (int id = 0; id < DS_COUNT; id++) {
        ds_reset(&dev->ds, id);
        dev->ds.lock[id] = 0;
    }
}

/* The device joins the fleet as a new one: configured as its type is, booted now (coldStart). */
static void
join(struct device *dev)
{
    struct device_ctl *ctl = dev->ctl;

    if (!ctl->absent) {
        return;
    }
    ctl->absent = 0;
    ctl->rebooting = 1; /* comes up as from a boot: coldStart */
    dev->boot_ms = devview_now_ms(dev->worker->fleet);
    come_up(dev);
}

/* ------------------------------------------------------------------ flap */

/* Whether interface @p pos can be flapped: its link up now and a real port (as --flap-rate picks). */
static int
flappable(const struct device *dev, uint32_t pos)
{
    return devview_link_up(dev, pos) && dev->type->profile->ifs[pos].speed_bps;
}

static void flap_due(struct loop *loop, struct loop_timer *timer);

/* The next transition of the flap action: its interface(s) down, or back up; then the next one armed. */
static void
flap_step(struct device *dev)
{
    struct device_ctl *ctl = dev->ctl;
    uint64_t now_ms = devview_now_ms(dev->worker->fleet);
    int down = !ctl->flap_is_down;

    if (ctl->flap_pos >= 0) {
        flap_link(dev, (uint32_t)ctl->flap_pos, !down, now_ms);
    } else {
        for (uint32_t pos = 0; pos < dev->type->profile->if_count; pos++) {
            if (down ? flappable(dev, pos) : ctl->flap_all[pos]) {
                ctl->flap_all[pos] = (uint8_t)(down && !flap_link(dev, pos, 0, now_ms));
                if (!down) {
                    flap_link(dev, pos, 1, now_ms);
                }
            }
        }
    }
    ctl->flap_is_down = (uint8_t)down;
    if (--ctl->flap_left) {
        loop_timer_start(dev->worker->loop, &ctl->flap_timer,
                         loop_now_us(dev->worker->loop) + (monotime_us)ctl->flap_for_ms * 1000u, flap_due);
    }
}

static void
flap_due(struct loop *loop, struct loop_timer *timer)
{
    struct device_ctl *ctl = (struct device_ctl *)((char *)timer - offsetof(struct device_ctl, flap_timer));

    (void)loop;
    flap_step(ctl->dev);
}

/* An earlier flap action still going: what it holds down comes back now, and it ends. */
static void
flap_finish(struct device *dev)
{
    struct device_ctl *ctl = dev->ctl;

    loop_timer_stop(dev->worker->loop, &ctl->flap_timer);
    if (ctl->flap_left && ctl->flap_is_down) {
        ctl->flap_left = 1;
        flap_step(dev);
    }
    ctl->flap_left = 0;
    ctl->flap_is_down = 0;
    free(ctl->flap_all);
    ctl->flap_all = NULL;
}

/* @return 0 when the flap started, -1 when @p dev has no such interface or none up to flap. */
static int
flap_start(struct device *dev, const struct devact_params *p)
{
    struct device_ctl *ctl = dev->ctl;
    const struct profile *prof = dev->type->profile;
    int32_t pos = -1;

    flap_finish(dev);
    if (!strcmp(p->if_name, "*")) {
        uint32_t up = 0;
        for (uint32_t i = 0; i < prof->if_count; i++) {
            up += flappable(dev, i) ? 1u : 0u;
        }
        if (!up || !(ctl->flap_all = calloc(prof->if_count, 1))) {
            return -1;
        }
    } else if (p->if_name[0]) {
        if ((pos = devview_if_pos(dev->type, p->if_name)) < 0 || !flappable(dev, (uint32_t)pos)) {
            return -1;
        }
    } else {
        /* One drawn from the device's seed among those up, as --flap-rate draws. */
        for (uint32_t tries = 0; tries < prof->if_count && pos < 0; tries++) {
            uint32_t i = (uint32_t)((dyn_hash(dev->seed, 0xf1ae, ctl->flap_draws) + tries) % prof->if_count);
            if (flappable(dev, i)) {
                pos = (int32_t)i;
            }
        }
        ctl->flap_draws++;
        if (pos < 0) {
            return -1;
        }
    }
    ctl->flap_pos = pos;
    ctl->flap_for_ms = p->for_ms;
    ctl->flap_left = 2 * p->flap_count;
    ctl->flap_is_down = 0;
    flap_step(dev);
    return 0;
}

int
devact_apply(struct device *dev, const struct devact_params *p)
{
    struct device_ctl *ctl = devact_ctl(dev);

    if (!ctl) {
        return -1;
    }
    if (ctl->absent && p->kind != DEVACT_GROW && p->kind != DEVACT_SHRINK) {
        return 0; /* not in the fleet: fleet_action.c leaves absent devices out of every other action */
    }
    switch (p->kind) {
    case DEVACT_KILL_SESSIONS:
        end_sessions(dev, 0);
        break;
    case DEVACT_DOWN:
        go_down(dev, p->mode, p->freeze);
        break;
    case DEVACT_UP:
        come_up(dev);
        break;
    case DEVACT_REBOOT:
        reboot(dev, p->for_ms);
        break;
    case DEVACT_LATENCY:
        if (p->set_nc_latency) {
            ctl->has_nc_latency = 1;
            ctl->nc_min_ms = p->nc_min_ms;
            ctl->nc_max_ms = p->nc_max_ms;
        }
        if (p->set_snmp_latency) {
            ctl->has_snmp_latency = 1;
            ctl->snmp_min_ms = p->snmp_min_ms;
            ctl->snmp_max_ms = p->snmp_max_ms;
        }
        break;
    case DEVACT_DROP_RATE:
        ctl->has_drop_rate = 1;
        ctl->drop_rate = p->snmp_drop_rate;
        break;
    case DEVACT_GROW:
        join(dev);
        break;
    case DEVACT_SHRINK:
        leave(dev);
        break;
    case DEVACT_SET:
        return devact_set(dev, p);
    case DEVACT_NOTIF_RATE:
    case DEVACT_SYSLOG_RATE:
    case DEVACT_TRAP_RATE:
        return set_rate(dev, p);
    case DEVACT_FLAP:
        return flap_start(dev, p);
    case DEVACT_KINDS:
        return -1;
    }
    return 0;
}
