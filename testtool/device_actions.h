/*
 * What the control API does to a device, carried out on the device's own
 * worker: end its sessions, take it down (refuse or blackhole) and up
 * again, reboot it, and override its latency and SNMP drop rate. The state
 * a device needs for this (struct device_ctl) is allocated at its first
 * action; a device never touched has none and costs one NULL pointer. The
 * accept path, the SNMP agent and the session flush consult it through the
 * inline tests below.
 */
#ifndef FLEET_DEVICE_ACTIONS_H
#define FLEET_DEVICE_ACTIONS_H

#include <stdint.h>

#include "device.h"

/* Most connections a blackholed device behind a shared port holds silent; later ones are closed. */
#define DEVACT_MAX_HELD 64

enum devact_kind {
    DEVACT_KILL_SESSIONS, /* every NETCONF session ends */
    DEVACT_DOWN,          /* refuse or blackhole, sessions reset or frozen */
    DEVACT_UP,            /* undo down (and end a reboot early) */
    DEVACT_REBOOT,        /* sessions end, down for a while, running = startup, booted now */
    DEVACT_LATENCY,       /* per-device NETCONF and SNMP reply latency */
    DEVACT_DROP_RATE,     /* per-device share of SNMP requests left unanswered */
    DEVACT_KINDS
};

enum devact_down_mode {
    DEVACT_UP_MODE = 0,   /* serving */
    DEVACT_REFUSE = 1,    /* connections refused (RST), SNMP unanswered */
    DEVACT_BLACKHOLE = 2, /* connections never complete (or held silent), SNMP unanswered */
};

/* One action with its parameters, as the control API parsed them. */
struct devact_params {
    enum devact_kind kind;    /* what to do */
    uint8_t mode;             /* DEVACT_DOWN: enum devact_down_mode (refuse or blackhole) */
    uint8_t freeze;           /* DEVACT_DOWN: 1 freeze existing sessions, 0 reset them */
    uint32_t for_ms;          /* DEVACT_REBOOT: how long it stays down */
    uint8_t set_nc_latency;   /* DEVACT_LATENCY: 1 when netconf is given */
    uint8_t set_snmp_latency; /* DEVACT_LATENCY: 1 when snmp is given */
    uint32_t nc_min_ms;       /* NETCONF latency range, ms */
    uint32_t nc_max_ms;       /* its upper end (>= nc_min_ms) */
    uint32_t snmp_min_ms;     /* SNMP latency range, ms */
    uint32_t snmp_max_ms;     /* its upper end */
    double snmp_drop_rate;    /* DEVACT_DROP_RATE: 0..1 */
};

/* A device's control state; owned by the device, touched on its worker only. */
struct device_ctl {
    struct device *dev;             /* the device it belongs to */
    uint8_t down;                   /* enum devact_down_mode in force */
    uint8_t frozen;                 /* 1: sessions neither read nor write until up */
    uint8_t rebooting;              /* 1 while a reboot holds the device down */
    uint8_t unlistened;             /* 1: its own listener was shut down (refuse) */
    uint8_t throttled;              /* 1: its own listener's backlog is plugged (blackhole) */
    int plug_fd;                    /* blackhole: our connection filling its own listener's queue, or -1 */
    uint16_t plug_port;             /* local port of plug_fd (to recognise it when accepted) */
    struct loop_timer reboot_timer; /* ends the reboot; armed while rebooting */
    int held[DEVACT_MAX_HELD];      /* blackhole on a shared port: accepted connections held silent */
    uint32_t held_count;            /* entries in held */
    uint8_t has_nc_latency;         /* 1: nc_* override the group's --netconf-latency */
    uint8_t has_snmp_latency;       /* 1: snmp_* override the group's --snmp-latency */
    uint8_t has_drop_rate;          /* 1: drop_rate overrides the group's --snmp-drop-rate */
    uint32_t nc_min_ms;             /* NETCONF latency range, ms; valid with has_nc_latency */
    uint32_t nc_max_ms;             /* its upper end */
    uint32_t snmp_min_ms;           /* SNMP latency range, ms; valid with has_snmp_latency */
    uint32_t snmp_max_ms;           /* its upper end */
    double drop_rate;               /* SNMP drop share; valid with has_drop_rate */
};

/**
 * @brief Carry out @p p on @p dev. Runs on the device's worker.
 * @return 0, or -1 when the device's control state could not be allocated (nothing done).
 */
int devact_apply(struct device *dev, const struct devact_params *p);

/**
 * @brief The accept path's test: a connection @p fd accepted for @p dev while it is down.
 * Refuse: reset at once. Blackhole: held silent (or, for its own plugged listener, the plug itself closed).
 * @return 1 when the connection was taken care of (the caller forgets @p fd), 0: start a session.
 */
int devact_on_accept(struct device *dev, int fd, uint16_t peer_port);

/** @brief Free a device's control state (closes held connections). Accepts a device without one. */
void devact_free(struct device *dev);

/** @return The device's state name: "up", "down" or "rebooting". */
const char *devact_state_name(const struct device *dev);

/** @return 1 when @p dev's SNMP requests go unanswered (down or rebooting). */
static inline int
devact_snmp_silent(const struct device *dev)
{
    return dev->ctl && dev->ctl->down;
}

/** @return 1 when @p dev's sessions are frozen. */
static inline int
devact_frozen(const struct device *dev)
{
    return dev->ctl && dev->ctl->frozen;
}

#endif
