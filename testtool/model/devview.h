/*
 * What a device is right now, as both protocols see it: its interfaces'
 * admin and oper status, last change, description and counters, and its
 * system identity. Configuration comes from the device's running datastore
 * (so a NETCONF edit and an SNMP SET land in one place); what moves comes
 * from dynamics.h at the instant asked. A device keeps state of its own only
 * once an interface changes status; until then it reads the profile.
 */
#ifndef FLEET_DEVVIEW_H
#define FLEET_DEVVIEW_H

#include <stdint.h>

#include "device.h"
#include "dynamics.h"
#include "err.h"

struct fleet;
struct device;
struct device_type;

/* ifOperStatus / ietf-interfaces oper-status values (IF-MIB numbering). */
enum devview_oper {
    DEVVIEW_OPER_UP = 1,
    DEVVIEW_OPER_DOWN = 2,
};

/* A change of an interface's oper status, kept per device once one happens. */
struct devview_if_change {
    uint64_t changed_ms; /* when the oper status last changed (fleet clock, ms since the epoch) */
    uint64_t traffic_ms; /* traffic time the interface had carried at that moment */
    uint8_t up;          /* oper status since then: 1 up */
};

/* A device's own view state; NULL in struct device until its running tree is first written. */
struct devview_state {
    struct devview_cfg cfg;            /* cache of the device's running tree (valid when cfg_valid) */
    int cfg_valid;                     /* 1 once cfg was read from the device's own tree */
    struct devview_if_change *changes; /* per profile interface, NULL until one changes status */
    uint8_t *link_down; /* per profile interface: 1 while a flap holds its link down; NULL: none */
    int dirty;          /* 1 when running was written since cfg was last read */
    uint64_t dirty_ms;  /* when the first of those writes happened; valid when dirty */
};

/**
 * @brief Build a type's view of an untouched device from its profile and template tree. Call once the
 * template and the profile are loaded.
 */
enum fleet_err devview_type_init(struct device_type *type);

/** @brief Free what devview_type_init() built. */
void devview_type_close(struct device_type *type);

/** @brief Free a device's view state; NULL is fine. */
void devview_state_free(struct devview_state *st);

/** @brief Set a device's seed and boot time (from the fleet's seed and start). */
void devview_device_init(struct device *dev, const struct fleet *fleet);

/** @return The fleet clock: wall-clock milliseconds that never go back (or the fixed clock). */
uint64_t devview_now_ms(const struct fleet *fleet);

/** @return When device @p dev booted (ms since the epoch); devices differ, all before the fleet started. */
uint64_t devview_boot_ms(const struct device *dev);

/** @return The position of the profile interface named @p name, or -1. */
int32_t devview_if_pos(const struct device_type *type, const char *name);

/**
 * @brief The device's configuration-derived values, refreshed when running changed.
 * @return NULL only when memory runs out.
 */
const struct devview_cfg *devview_cfg(struct device *dev);

/**
 * @brief Record that running may have changed at @p now_ms. Call after every write to running; the
 * next devview_cfg() finds the interfaces whose status changed and dates the change to the first
 * such write since the previous read (ifLastChange, counters stop or resume).
 */
void devview_running_changed(struct device *dev, uint64_t now_ms);

/**
 * @brief Take interface @p pos's link down (@p up 0) or back up at @p now_ms (a flap): its oper status
 * follows when it is enabled.
 * @return 0, or -1 when memory ran out (nothing changed).
 */
int devview_set_link(struct device *dev, uint32_t pos, int up, uint64_t now_ms);

/** @return 1 while interface @p pos's link is up (the profile's, unless a flap took it down). */
int devview_link_up(const struct device *dev, uint32_t pos);

/** @return Oper status of profile interface @p pos. */
enum devview_oper devview_oper(const struct device *dev, uint32_t pos);

/** @return When interface @p pos last changed oper status (ms since the epoch; boot if never). */
uint64_t devview_last_change_ms(const struct device *dev, uint32_t pos);

/** @brief Counters of interface @p pos at @p now_ms. */
void devview_counters(const struct device *dev, uint32_t pos, uint64_t now_ms, struct dyn_if_counters *out);

/** @return One direction's octet counter (@p out 0 in, 1 out) of interface @p pos at @p now_ms; @p seed
 * is devview_seed(dev), passed in because a request computes it once. dyn_prep_derive() gives the rest. */
uint64_t devview_octets(const struct device *dev, uint64_t seed, uint32_t pos, uint64_t now_ms, int out);

/** @return The device's seed. */
uint64_t devview_seed(const struct device *dev);

/** @brief The device's host name: running's, else the profile's format with {DEVICE} filled in. */
void devview_hostname(struct device *dev, char *buf, size_t buf_len);

#endif
