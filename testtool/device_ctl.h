/*
 * A device's control state: what the control API's actions (device_actions.h)
 * leave on a device and what the serving paths ask of it: the accept path
 * (refused or held connections), the session flush (frozen), the SNMP
 * agent (silent) and the reply latency. Allocated at a device's first
 * action; a device never touched has none and costs one NULL pointer. A
 * header of its own so that the serving paths read it without depending on
 * the actions, which depend on them.
 */
#ifndef FLEET_DEVICE_CTL_H
#define FLEET_DEVICE_CTL_H

#include <stdint.h>

#include "device.h"
#include "loop.h"

/* Most connections a blackholed device behind a shared port holds silent; later ones are closed. */
#define DEVACT_MAX_HELD 64

/* The push channels whose rate profile the control API overrides per device. */
enum devctl_rate {
    DEVCTL_RATE_NOTIF = 0, /* notification-rate: the notification file's pace */
    DEVCTL_RATE_SYSLOG,    /* syslog-rate: background syslog lines */
    DEVCTL_RATE_TRAP,      /* trap-rate: the trap catalog's pace */
    DEVCTL_RATES
};

struct rate_profile;

enum devact_down_mode {
    DEVACT_UP_MODE = 0,   /* serving */
    DEVACT_REFUSE = 1,    /* connections refused (RST), SNMP unanswered */
    DEVACT_BLACKHOLE = 2, /* connections never complete (or held silent), SNMP unanswered */
};

/* A device's control state; owned by the device, touched on its worker only. */
struct device_ctl {
    struct device *dev; /* the device it belongs to */
    uint8_t down;       /* enum devact_down_mode in force */
    uint8_t frozen;     /* 1: sessions neither read nor write until up */
    uint8_t rebooting;  /* 1 while a reboot holds the device down */
    uint8_t absent;     /* 1: not in the fleet (shrunk, or not grown yet); down is DEVACT_REFUSE */
    uint8_t unlistened; /* 1: its own listener was shut down (refuse) */
    uint8_t throttled;  /* 1: its own listener's backlog is plugged (blackhole) */
    int plug_fd;        /* blackhole: our connection filling its own listener's queue, or -1 */
    uint16_t plug_port; /* local port of plug_fd (to recognise it when accepted) */
    struct loop_timer reboot_timer; /* ends the reboot; armed while rebooting */
    int *held;                /* blackhole on a shared port: connections held silent (DEVACT_MAX_HELD) */
    uint32_t held_count;      /* entries in held */
    uint8_t has_nc_latency;   /* 1: nc_* override the group's --netconf-latency */
    uint8_t has_snmp_latency; /* 1: snmp_* override the group's --snmp-latency */
    uint8_t has_drop_rate;    /* 1: drop_rate overrides the group's --snmp-drop-rate */
    uint32_t nc_min_ms;       /* NETCONF latency range, ms; valid with has_nc_latency */
    uint32_t nc_max_ms;       /* its upper end */
    uint32_t snmp_min_ms;     /* SNMP latency range, ms; valid with has_snmp_latency */
    uint32_t snmp_max_ms;     /* its upper end */
    double drop_rate;         /* SNMP drop share; valid with has_drop_rate */
    struct rate_profile *rate[DEVCTL_RATES]; /* per push channel: the rate profile in force (owned; a zero
                                              * one pauses), NULL: the group's */
    struct loop_timer flap_timer;            /* the next transition of a flap action; armed while flap_left */
    uint32_t flap_left;   /* transitions still to come (down, up, down, ...); 0: no flap action */
    uint32_t flap_for_ms; /* how long each down (and each up between) lasts, ms */
    int32_t flap_pos;     /* the interface flapped, -1: every one that was up (flap_all) */
    uint8_t flap_is_down; /* 1 while the flap action holds its interface(s) down */
    uint8_t *flap_all;    /* flap_pos -1: 1 for each profile interface it took down, owned */
    uint32_t flap_draws;  /* flap actions that drew their interface: draws the next one */
    uint8_t authen_traps; /* snmpEnableAuthenTraps an SNMP SET gave: 1 enabled, 2 disabled; 0: the type's */
};

/**
 * @brief The device's control state, made on first use (zeroed, plug_fd -1, timers initialised).
 * Runs on the device's worker. @return It, or NULL when memory ran out.
 */
struct device_ctl *devact_ctl(struct device *dev);

/** @brief Close @p fd with an RST instead of a FIN (set SO_LINGER 0; the caller closes). */
void devctl_reset_fd(int fd);

/**
 * @brief The accept path's test: a connection @p fd accepted for @p dev while it is down.
 * Refuse: reset at once. Blackhole: held silent (or, for its own plugged listener, the plug itself closed).
 * @return 1 when the connection was taken care of (the caller forgets @p fd), 0: start a session.
 */
int devact_on_accept(struct device *dev, int fd, uint16_t peer_port);

/** @brief Free a device's control state (closes held connections). Accepts a device without one. */
void devact_free(struct device *dev);

/** @return The device's state name: "up", "down", "rebooting" or "absent". */
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
