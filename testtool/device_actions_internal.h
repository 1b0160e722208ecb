/*
 * The device actions that have a file of their own (device_actions.c
 * dispatches to them). Each runs on the device's worker.
 */
#ifndef FLEET_DEVICE_ACTIONS_INTERNAL_H
#define FLEET_DEVICE_ACTIONS_INTERNAL_H

#include "device_actions.h"

/**
 * @brief The set action (device_set.c): @p p's fragment applied to running as edit-config would, with
 * its validation; subscribers get netconf-config-change when running changed.
 * @return 0, or -1 when the device refused it (locked, not valid for its schemas): nothing changed.
 */
int devact_set(struct device *dev, const struct devact_params *p);

#endif
