/*
 * Which transport a device's sessions run on: its group's --transport says, for
 * an accepted connection as for one the device dialled (call home, which
 * is a property of the device, not of the transport).
 */
#include "transport.h"

#include "device.h"

const struct transport_ops *
transport_for(const struct device *dev)
{
    return dev->group->cfg.tls ? &transport_tls : dev->group->cfg.ssh ? &transport_ssh : &transport_tcp;
}
