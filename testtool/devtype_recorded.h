/*
 * A recorded device type (docs/RECORDED_TYPES.md): the folder fleetsim-stress
 * record writes, served as a device type. devtype.c loads it like a vendor
 * folder (yang/ as the schemas, running.xml as the initial configuration,
 * snmp.snmprec as the recording); this file checks the folder, points the
 * plan at its files, and adds what a vendor folder does not have: the
 * recorded state data, hello and yang-library.
 */
#ifndef FLEET_DEVTYPE_RECORDED_H
#define FLEET_DEVTYPE_RECORDED_H

#include <limits.h>
#include <stddef.h>

#include "device.h"

/* The file names a recorded plan points at; they live as long as the load. */
struct devtype_recorded_paths {
    char yang[PATH_MAX];    /* DIR/yang: the schemas folder */
    char running[PATH_MAX]; /* DIR/running.xml: the initial configuration */
    char snmprec[PATH_MAX]; /* DIR/snmp.snmprec: the SNMP recording */
};

/**
 * @brief Check the folder @p cfg->device_type_dir and make @p out a copy of @p cfg that loads it as a vendor
 * folder: schemas_dir its yang/, initial_config_file its running.xml (unless the plan names one),
 * snmp_recording its snmp.snmprec when present (unless the plan names one).
 * @param[out] paths Holds the file names @p out points at; keep it while @p out is used.
 * @param[out] err One line naming the folder and what is missing or wrong.
 * @return FLEET_OK, or FLEET_ERR_INVAL (no manifest.json, no readable yang/ with .yang files, the plan also
 *         names --schemas-dir).
 */
enum fleet_err devtype_recorded_plan(const struct fleet_config *cfg, struct fleet_config *out,
                                     struct devtype_recorded_paths *paths, char *err, size_t err_len);

/**
 * @brief The config false part of the recording's state.xml, merged into type->state_tree, and
 * type->recorded_dir. Called while the type loads, after its schemas and profile state and before its
 * interfaces and moving state are derived from the state tree.
 * @param[out] err One line naming the file and the problem (nodes that do not fit the schemas under
 *             --schemas-strict; out of memory).
 */
enum fleet_err devtype_recorded_state(struct device_type *type, const struct fleet_config *cfg, char *err,
                                      size_t err_len);

/**
 * @brief Add to a type loaded from devtype_recorded_plan()'s plan what the recording says beyond a vendor
 * folder: the recorded hello capabilities (in order, less those fleetsim cannot honour, plus base:1.1 and
 * with-defaults when missing) and the recorded yang-library data when it is valid (else the generated one
 * stays, with a warning). Call after the type's yang-library data is built, before its SNMP view.
 * @param[out] err One line naming the problem (out of memory).
 */
enum fleet_err devtype_recorded_finish(struct device_type *type, const struct fleet_config *cfg, char *err,
                                       size_t err_len);

#endif
