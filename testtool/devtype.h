/*
 * Loading a device type (device.h's struct device_type) from a plan: the
 * profile, schemas, initial configuration, state data and SNMP view that
 * every device of the type shares read-only.
 */
#ifndef FLEET_DEVTYPE_H
#define FLEET_DEVTYPE_H

#include <stddef.h>

#include "device.h"

/**
 * @brief Load the type that @p cfg describes (profile, schemas_dir, features, initial configuration,
 * SNMP recording). On failure @p err names the file and the problem; free the type either way.
 */
enum fleet_err device_type_load(struct device_type *type, const struct fleet_config *cfg, char *err,
                                size_t err_len);

/** @brief Free a type's contents. Accepts a zeroed type and NULL. */
void device_type_free(struct device_type *type);

/**
 * @brief The name of the type @p cfg describes, without loading it: its profile's (a profile file's name
 * without extension), its schemas folder's, or "PROFILE+FOLDER" when both are set and the profile is not
 * the default.
 */
void device_type_label(const struct fleet_config *cfg, char *buf, size_t buf_len);

/** @return 1 when two plans describe the same device type (so their groups can share one). */
int device_type_same(const struct fleet_config *a, const struct fleet_config *b);

#endif
