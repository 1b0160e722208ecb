/*
 * A device's trap origin. The engine's boots and time are those its agent
 * answers with (respond.c): boots counts reboots, time runs from the last
 * boot, so a collector that learned the engine from a GET sees traps in
 * its time window.
 */
#include "trap_device.h"

#include <string.h>

#include "device.h"
#include "devview.h"
#include "mib.h"

void
trap_device_origin(struct device *dev, uint64_t now_ms, struct trap_device_origin *o)
{
    uint64_t boot_ms = devview_boot_ms(dev);

    memset(o, 0, sizeof *o);
    devview_hostname(dev, o->name, sizeof o->name);
    o->engine.id = o->engine_id;
    o->engine.id_len = mib_engine_id(dev, o->engine_id);
    o->engine.boots = 1 + dev->reboots;
    o->engine.time_s = (uint32_t)((now_ms > boot_ms ? now_ms - boot_ms : 0) / 1000);
    o->engine.max_msg_bytes = TRAP_MAX_MSG_BYTES;
    o->from.addr = dev->addr;
    o->from.fd = dev->snmp_fd;
    o->from.name = o->name;
    o->from.run_tag = dev->worker && dev->worker->fleet->cfg.run_tag && *dev->worker->fleet->cfg.run_tag
                          ? dev->worker->fleet->cfg.run_tag
                          : NULL;
    o->from.engine = &o->engine;
}
