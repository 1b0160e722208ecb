/*
 * Device profiles: what kind of device every simulated device is (its
 * interfaces, identity, traffic dynamics, CPU and memory, the objects a
 * collector polls) read from a profile file, an XML instance of the
 * fleetsim-profile YANG module, validated by libyang when it loads. Built-in
 * profiles are files in schemas/profiles/ found by name. Shared by the
 * simulator (which serves a profile) and the stress client (which walks its
 * collection). Read-only once loaded.
 */
#ifndef FLEET_PROFILE_H
#define FLEET_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "oid.h"

/* Most interfaces one profile may define (ifIndex stays small and tables stay bounded). */
#define PROFILE_MAX_INTERFACES 65536
/* Most processors and storage entries one profile may define. */
#define PROFILE_MAX_HOST_ENTRIES 1024

struct profile_interface {
    char *name;         /* ietf-interfaces name; ifDescr and ifName */
    char *type;         /* iana-if-type identity without prefix, e.g. "ethernetCsmacd" */
    uint32_t iftype;    /* IANAifType number for ifType (6 for ethernetCsmacd) */
    uint64_t speed_bps; /* nominal speed; ifSpeed (capped at 2^32-1) and ifHighSpeed (Mb/s) */
    uint32_t mtu;       /* ifMtu, bytes */
    char *description;  /* initial description (ifAlias), or NULL */
    uint8_t enabled;    /* initial admin status: 1 up */
    uint8_t link_up;    /* 1 when the link is up while enabled (ifOperStatus up), 0: lowerLayerDown */
};

/* How interface traffic moves; counters are integrals of a rate inside the band. */
struct profile_traffic {
    double util_min;        /* lowest utilisation, share of speed (0..1) */
    double util_max;        /* highest utilisation, share of speed (util_min..1) */
    uint32_t period_s;      /* period of the main (daily-like) wave, seconds, >= 1 */
    double jitter;          /* amplitude of faster waves on top, share of the band (0..1) */
    uint32_t packet_bytes;  /* mean packet size; packets = octets / packet_bytes */
    double multicast_share; /* share of packets that are multicast (0..1) */
    double broadcast_share; /* share of packets that are broadcast (0..1, with multicast <= 1) */
    double error_ppm;       /* errored packets per million packets, each direction */
    double discard_ppm;     /* discarded packets per million packets, each direction */
};

struct profile_processor {
    uint32_t load_min; /* hrProcessorLoad band, percent */
    uint32_t load_max; /* load_min..100 */
};

struct profile_storage {
    char *descr;           /* hrStorageDescr */
    uint32_t type;         /* hrStorageTypes arc: 2 ram, 3 virtualMemory, 4 fixedDisk, 9 flashMemory */
    uint32_t unit_bytes;   /* hrStorageAllocationUnits */
    uint32_t size_units;   /* hrStorageSize */
    uint32_t used_min_pct; /* hrStorageUsed band, percent of size */
    uint32_t used_max_pct; /* used_min_pct..100 */
};

struct profile {
    char *name;                       /* profile name */
    char *path;                       /* file it was read from */
    char *sys_descr;                  /* sysDescr */
    struct oid sys_object_id;         /* sysObjectID */
    char *sys_contact;                /* initial sysContact (ietf-system contact), or NULL */
    char *sys_location;               /* initial sysLocation (ietf-system location), or NULL */
    char *hostname_format;            /* initial sysName/hostname; "{DEVICE}" becomes the device index */
    uint32_t sys_services;            /* sysServices */
    struct profile_interface *ifs;    /* interfaces in ifIndex order (ifIndex = position + 1) */
    uint32_t if_count;                /* entries in ifs */
    struct profile_traffic traffic;   /* traffic dynamics for every interface */
    struct profile_processor *cpus;   /* hrProcessorTable rows */
    uint32_t cpu_count;               /* entries in cpus */
    struct profile_storage *storages; /* hrStorageTable rows */
    uint32_t storage_count;           /* entries in storages */
    struct oid *collection;           /* OIDs (columns or scalars) a collection walks, in order */
    uint32_t collection_count;        /* entries in collection */
    char **schemas;                   /* extra YANG module names to load from the schemas folder */
    uint32_t schema_count;            /* entries in schemas */
    char *initial_config_file;        /* absolute path of extra initial configuration (XML), or NULL */
    char *state_data_file;            /* absolute path of state data (XML, config false nodes), or NULL */
    char *recording_file;             /* absolute path of an SNMP recording to serve, or NULL */
};

/**
 * @brief Load a profile by name (a file NAME.xml in @p profiles_dir) or by path (anything with a '/'
 * or ending in ".xml"), validating it against fleetsim-profile.yang found in @p schemas_dir.
 * @p profiles_dir may be NULL: then it is @p schemas_dir/profiles, where the built-in profiles are.
 * Interface groups are expanded in order; names must be unique and at most PROFILE_MAX_INTERFACES.
 * Files the profile names (initial-config, state-data) resolve against the profile's folder and
 * must be readable. Thread-safe (the load uses a libyang context of its own); libyang's messages
 * are captured, never printed.
 * @param[out] out The profile, owned by the caller (profile_free()).
 * @param[out] err On failure, a message naming the file and what is wrong.
 * @return FLEET_OK, FLEET_ERR_NOTFOUND (no such profile), FLEET_ERR_INVAL (invalid), FLEET_ERR_NOMEM.
 */
enum fleet_err profile_load(const char *name_or_path, const char *profiles_dir, const char *schemas_dir,
                            struct profile **out, char *err, size_t err_len);

/** @brief Free a profile; NULL is fine. */
void profile_free(struct profile *p);

#endif
