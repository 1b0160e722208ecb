/*
 * The fleet file (--fleet FILE): several kinds of device in one fleet. The
 * file, JSON or XML of schemas/fleetsim-fleet.yang, lists groups; each group
 * is the command line with the group's own options applied, checked by the
 * same code as the command line.
 */
#ifndef FLEET_FLEET_FILE_H
#define FLEET_FLEET_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "plan.h"

/* The YANG module a fleet file is an instance of (schemas/fleetsim-fleet.yang). */
#define FLEET_FILE_MODULE "fleetsim-fleet"

/* One group of a fleet file: devices of one kind. */
/* A loaded fleet file. Every string the groups' configs point at is owned by it. */
struct fleet_file {
    char *path;                      /* the file as given */
    struct fleet_group_spec *groups; /* group_count groups, in file order */
    uint32_t group_count;            /* >= 1 once loaded */
    char **strings;                  /* values and resolved paths the groups' cfg fields point at */
    uint32_t string_count;           /* entries used in strings */
    uint32_t string_cap;             /* entries allocated in strings */
};

/**
 * @brief Read and check a fleet file, and make each group's plan.
 *
 * The file is JSON when its name ends in .json or its text starts with '{', else XML. It is validated
 * against fleetsim-fleet.yang in a libyang context of its own (found at $FLEETSIM_SCHEMA_DIR, else the
 * built-in schemas folder); unknown keys are errors. Each group, in file order, starts from a copy of
 * @p base and gets each of its leaves applied with cli_apply_named(); a leaf-list replaces the values
 * @p base has for that repeatable option. Relative file names (schemas-dir, profile when it names a file,
 * initial-config-xml-file, snmp-recording, notification-file, rpc-config, authorized-keys) are resolved
 * against the fleet file's folder. Addresses are not compared here: see fleet_file_check_overlap().
 *
 * @param[in] path The fleet file.
 * @param[in] base The command line's plan; strings it points at must outlive @p out.
 * @param[out] out The groups. Free with fleet_file_free(), also after a failure.
 * @param[out] err On failure, one line naming the file and, when known, the line and the group:
 * "fleet.json:7: group \"edge\": --snmp-latency must be ...".
 * @return FLEET_OK; FLEET_ERR_SYS when the file cannot be read; FLEET_ERR_INVAL when it is not a valid
 * fleet file; FLEET_ERR_NOMEM.
 */
enum fleet_err fleet_file_load(const char *path, const struct fleet_config *base, struct fleet_file *out,
                               char *err, size_t err_len);

/** @brief Free what fleet_file_load() made. Accepts NULL and a zeroed or partly loaded fleet_file. */
void fleet_file_free(struct fleet_file *ff);

/**
 * @brief Refuse two groups that claim one address and port. A group's NETCONF devices hold ip..ip+count-1
 * on starting-port with ip-per-device, else ip on starting-port..starting-port+count-1; its SNMP agents
 * (when snmp is on) likewise on snmp-starting-port. 0.0.0.0 claims every address.
 * @param[in] groups The groups.
 * @param[in] n Entries in @p groups.
 * @param[in] path The fleet file, for the message.
 * @param[out] err On overlap: "fleet.json: groups \"a\" (line 3) and \"b\" (line 9) both claim NETCONF
 * 127.0.1.5:17830".
 * @return FLEET_OK or FLEET_ERR_INVAL.
 */
enum fleet_err fleet_file_check_overlap(const struct fleet_group_spec *groups, uint32_t n, const char *path,
                                        char *err, size_t err_len);

#endif
