/*
 * What the control API does to a device, carried out on the device's own
 * worker: end its sessions, take it down (refuse or blackhole) and up
 * again, reboot it, override its latency, SNMP drop rate and notification
 * rate, change its running configuration as a local CLI would (set) and flap
 * its interfaces. The state they leave on the device is device_ctl.h's,
 * which the serving paths read.
 */
#ifndef FLEET_DEVICE_ACTIONS_H
#define FLEET_DEVICE_ACTIONS_H

#include <stdint.h>

#include "device.h"
#include "device_ctl.h"
#include "rate_profile.h"

enum devact_kind {
    DEVACT_KILL_SESSIONS, /* every NETCONF session ends */
    DEVACT_DOWN,          /* refuse or blackhole, sessions reset or frozen */
    DEVACT_UP,            /* undo down (and end a reboot early) */
    DEVACT_REBOOT,        /* sessions end, down for a while, running = startup, booted now */
    DEVACT_LATENCY,       /* per-device NETCONF and SNMP reply latency */
    DEVACT_DROP_RATE,     /* per-device share of SNMP requests left unanswered */
    DEVACT_SET,           /* a configuration change made on the device itself (a local CLI's) */
    DEVACT_NOTIF_RATE,    /* per-device notification rate */
    DEVACT_FLAP,          /* interfaces go down and come back */
    DEVACT_GROW,          /* absent devices join the fleet */
    DEVACT_SHRINK,        /* devices leave the fleet (absent until grown again) */
    DEVACT_SYSLOG_RATE,   /* per-device background syslog rate profile */
    DEVACT_TRAP_RATE,     /* per-device trap catalog rate profile */
    DEVACT_KINDS
};

/* Longest interface name a flap action names (bytes, without the NUL). */
#define DEVACT_MAX_IF_NAME 63

/* The default-operation of a set (edit-config's three): index into merge, replace, none. */
enum devact_set_op {
    DEVACT_SET_MERGE = 0,   /* merged into running */
    DEVACT_SET_REPLACE = 1, /* the fragment becomes running (edit-config's default-operation replace) */
    DEVACT_SET_NONE = 2,    /* only the fragment's own nc:operation attributes act */
};

/* One action with its parameters, as the control API parsed them. */
struct devact_params {
    enum devact_kind kind;    /* what to do */
    uint8_t mode;             /* DEVACT_DOWN: enum devact_down_mode (refuse or blackhole) */
    uint8_t freeze;           /* DEVACT_DOWN: 1 freeze existing sessions, 0 reset them */
    uint32_t for_ms;          /* DEVACT_REBOOT, DEVACT_FLAP: how long it (an interface) stays down */
    uint8_t set_nc_latency;   /* DEVACT_LATENCY: 1 when netconf is given */
    uint8_t set_snmp_latency; /* DEVACT_LATENCY: 1 when snmp is given */
    uint32_t nc_min_ms;       /* NETCONF latency range, ms */
    uint32_t nc_max_ms;       /* its upper end (>= nc_min_ms) */
    uint32_t snmp_min_ms;     /* SNMP latency range, ms */
    uint32_t snmp_max_ms;     /* its upper end */
    double snmp_drop_rate;    /* DEVACT_DROP_RATE: 0..1 */
    const char *config;       /* DEVACT_SET: the XML fragment (NUL-terminated), kept for the process's life */
    uint8_t set_op;           /* DEVACT_SET: enum devact_set_op */
    uint8_t rate_reset;       /* DEVACT_*_RATE: 1 back to the group's rate (rate unused) */
    struct rate_profile rate; /* DEVACT_*_RATE: the profile from now on (a zero one pauses) */
    char if_name[DEVACT_MAX_IF_NAME + 1]; /* DEVACT_FLAP: the interface, "" one drawn, "*" every one up */
    uint32_t flap_count;                  /* DEVACT_FLAP: flaps (down then up), >= 1 */
};

/**
 * @brief Carry out @p p on @p dev. Runs on the device's worker.
 * @return 0, or -1 when it could not be done on this device (nothing done): its control state could not
 * be allocated, a set was invalid for its schemas or its running is locked, a flap names an interface
 * it lacks (or it has none up to draw from).
 */
int devact_apply(struct device *dev, const struct devact_params *p);

#endif
