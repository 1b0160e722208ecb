/*
 * Who a device's notifications are from, in the form the trap sender
 * takes: its address and agent socket, its host name, and (SNMPv3) its
 * own engine, authoritative for its traps (RFC 3412 section 6.4), with
 * the engine ID, boots and time its agent answers with. One place builds
 * it, so a flap, a reboot's coldStart and a catalog trap name the device
 * the same way.
 */
#ifndef FLEET_TRAP_DEVICE_H
#define FLEET_TRAP_DEVICE_H

#include <stdint.h>

#include "susm.h"
#include "trap.h"

struct device;

/* Longest host name a device names itself with in its notifications (sysName.0). */
#define TRAP_DEVICE_NAME_BYTES 256

/* A device's origin with the storage its pointers point into; valid while the device does not change. */
struct trap_device_origin {
    struct trap_origin from;                     /* what trap_send() takes; points into this struct */
    char name[TRAP_DEVICE_NAME_BYTES];           /* sysName.0 */
    uint8_t engine_id[SUSM_ENGINE_ID_MAX_BYTES]; /* snmpEngineID (mib_engine_id()) */
    struct susm_engine engine;                   /* id = engine_id, boots and time as its agent says */
};

/**
 * @brief Fill @p o for @p dev at @p now_ms (the fleet's clock, devview_now_ms()).
 * @param[out] o Filled; o->from is ready for trap_send() and stays valid as long as @p o.
 */
void trap_device_origin(struct device *dev, uint64_t now_ms, struct trap_device_origin *o);

#endif
