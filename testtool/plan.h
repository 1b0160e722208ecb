/*
 * The plan: what the command line (and a fleet file's group) asks of a
 * fleet, as plain values checked by cli.c. Only leaf headers here, so that
 * every layer may read a plan without depending on the ones above it.
 */
#ifndef FLEET_PLAN_H
#define FLEET_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "log.h"
#include "netaddr.h"
#include "push_window.h"
#include "rate_profile.h"
#include "schema.h"

/* Most injected faults (--snmp-fault) one fleet takes. */
#define AGENT_MAX_FAULTS 8

enum agent_fault_kind {
    AGENT_FAULT_TIMEOUT, /* never answer */
    AGENT_FAULT_DELAY,   /* answer after a fixed delay */
    AGENT_FAULT_ERROR,   /* answer with an error-status */
};

struct agent_fault {
    double share;      /* share of devices affected (0..1) */
    int kind;          /* enum agent_fault_kind */
    uint32_t delay_ms; /* AGENT_FAULT_DELAY: the delay */
    int error_status;  /* AGENT_FAULT_ERROR: the error-status */
};

/* Most SNMPv3 users one fleet takes (--snmp-v3-user). */
#define RESPOND_MAX_V3_USERS 8

/* A configured SNMPv3 user: keys from the passwords (Ku), localized per device when a request comes. */
struct respond_v3_user {
    uint8_t name[32];    /* usmUserName */
    size_t name_len;     /* bytes in name */
    int auth;            /* enum susm_auth */
    int priv;            /* enum susm_priv */
    uint8_t auth_ku[64]; /* Ku of the auth password (RFC 3414 A.2) */
    uint8_t priv_ku[64]; /* Ku of the privacy password, with the auth hash */
};

/* Where notifications go: a collector's address (IPv4 or IPv6) and UDP port. */
struct trap_sink {
    struct net_endpoint ep; /* address and port, never port 0 */
};

/* How a syslog sink is reached (--syslog-sink udp://, tcp://, tls://). */
enum syslog_proto {
    SYSLOG_PROTO_UDP, /* RFC 5426: one message per datagram, from the device's own address */
    SYSLOG_PROTO_TCP, /* RFC 6587: a stream of framed messages */
    SYSLOG_PROTO_TLS, /* RFC 5425: the TCP stream inside TLS, octet counting */
};

/* Where syslog goes: a collector's address (IPv4 or IPv6), port and protocol. */
struct syslog_sink_spec {
    struct net_endpoint ep; /* address and port, never port 0 */
    uint8_t proto;          /* enum syslog_proto */
};

/* Most syslog sinks (--syslog-sink) one group takes. */
#define FLEET_MAX_SYSLOG_SINKS 8

/* Descriptors kept free for sessions and internals beyond the listening sockets. */
#define FLEET_FD_RESERVE 256
/* Most entries of a rate plan's send order (the sum of the weights). */
#define FLEET_NOTIF_MIX_MAX 1000000u
/* Most --features options. */
#define FLEET_MAX_FEATURE_PINS 64
/* Default largest NETCONF message accepted from a client. */
#define FLEET_DEFAULT_MAX_MSG_BYTES (64u * 1024u * 1024u)

struct fleet_config {
    uint32_t device_count;             /* devices to simulate, >= 1 (the whole fleet's with --shard) */
    uint32_t shard_index;              /* --shard I/N: I; this process serves part I of N */
    uint32_t shard_count;              /* --shard I/N: N; 0: no --shard */
    uint32_t device_offset;            /* global index of this process's first device (--device-offset) */
    int device_offset_given;           /* 1: --device-offset was given */
    uint32_t fleet_devices;            /* devices of the whole fleet over every shard (shard_plan.h) */
    int shard_own_ports;               /* 1: a part's devices on ports from starting_port, named device-N */
    uint32_t starting_port;            /* first device's port (all devices' with ip_per_device) */
    uint32_t ip;                       /* first device's address: its low 32 bits, host byte order */
    struct net_family ip_fam;          /* the family of ip and, for IPv6, the 96 bits above (the fleet's) */
    int ip_per_device;                 /* 1: device i on ip+i, one shared port */
    int ssh;                           /* 1 when NETCONF over SSH was asked for */
    const char *username;              /* SSH: the user clients log in as */
    const char *password;              /* SSH: its password */
    int ssh_auth_any;                  /* SSH: any user and password are accepted (--auth any) */
    const char *state_dir;             /* where host keys are kept, or NULL for the default */
    const char *host_key;              /* SSH host key file to use, or NULL to create/reuse one */
    const char *authorized_keys;       /* SSH: OpenSSH authorized_keys file of keys that log in as username */
    int host_key_per_device;           /* SSH: every device has a host key of its own (derived, kept) */
    uint32_t threads;                  /* worker loops */
    const char *schemas_dir;           /* extra YANG modules, or NULL */
    struct schema_options schema_opts; /* --features pins (into feature_pins) and --schemas-strict */
    const char *feature_pins[FLEET_MAX_FEATURE_PINS]; /* --features values, "MODULE:F1,F2" */
    const char *initial_config_file;  /* running configuration every device starts with, or NULL */
    const char *device_type_dir;      /* --device-type DIR: a recorded device type, or NULL */
    const char *identity_rules_file;  /* --identity-rules FILE: the type's identity rules, or NULL */
    enum log_level log_level;         /* stderr verbosity */
    size_t max_msg_bytes;             /* largest accepted client message */
    uint32_t hello_timeout_s;         /* a session without a hello by then is closed */
    const char *profile;              /* profile name or file */
    uint64_t seed;                    /* fleet seed: counters, uptimes, fault and latency draws */
    uint64_t clock_fixed_ms;          /* 0: real time; else the devices' clock stands at this instant */
    int snmp;                         /* 1: every device is an SNMP agent */
    uint32_t snmp_starting_port;      /* device i's agent on this port + i (all on it with ip_per_device) */
    const char *snmp_community;       /* read community */
    const char *snmp_write_community; /* write community (reads too) */
    uint32_t snmp_max_msg_bytes;      /* largest response */
    uint32_t snmp_latency_min_ms;     /* injected latency range; max 0 = none */
    uint32_t snmp_latency_max_ms;
    uint32_t netconf_latency_min_ms; /* injected NETCONF reply latency range; max 0 = none */
    uint32_t netconf_latency_max_ms;
    double snmp_drop_rate;                                      /* share of requests left unanswered */
    struct agent_fault snmp_faults[AGENT_MAX_FAULTS];           /* misbehaving shares of the fleet */
    uint32_t snmp_fault_count;                                  /* entries used in snmp_faults */
    struct respond_v3_user snmp_v3_users[RESPOND_MAX_V3_USERS]; /* SNMPv3 users */
    uint32_t snmp_v3_user_count;                                /* entries used in snmp_v3_users */
    const char *notification_file;                              /* what devices stream, or NULL */
    struct rate_profile
        notification_rate;   /* not all 0: notifications per device per second, whatever the file says */
    uint32_t replay_log;     /* notifications each streaming device keeps for replay */
    const char *report_path; /* JSON report at exit and on SIGUSR1, or NULL */
    double flap_rate;        /* interface flaps per device per second (Poisson), 0: none */
    struct trap_sink trap_sinks[8];      /* where link traps go (--trap-sink) */
    uint32_t trap_sink_count;            /* entries used in trap_sinks */
    int trap_inform;                     /* 1: informs (acknowledged, retried) instead of traps */
    const char *trap_community;          /* community of traps and informs */
    int trap_version;                    /* --trap-version: enum trap_version (0: 2c) */
    struct respond_v3_user trap_v3_user; /* --trap-v3-user: the USM user of v3 notifications */
    int trap_v3_user_set;                /* 1 once --trap-v3-user was given */
    struct rate_profile trap_rate; /* background traps per device per second from the catalog, 0: none */
    const char *trap_catalog;      /* --trap-catalog FILE, or NULL: the device kind's built-in one */
    struct syslog_sink_spec syslog_sinks[FLEET_MAX_SYSLOG_SINKS]; /* where syslog goes (--syslog-sink) */
    uint32_t syslog_sink_count;                                   /* entries used in syslog_sinks */
    const char *syslog_format;                                    /* --syslog-format: rfc5424 or rfc3164 */
    const char *syslog_framing;      /* --syslog-framing: octet-counting or lf (TCP; TLS always counts) */
    struct rate_profile syslog_rate; /* background syslog messages per device per second, 0: none */
    const char *push_arrivals;      /* --push-arrivals: paced or poisson (every push stream's rate profile) */
    const char *syslog_catalog;     /* --syslog-catalog FILE, or NULL: the device kind's built-in one */
    const char *run_tag;            /* --run-tag: in every push message and the report, or NULL */
    struct push_window push_window; /* --push-window: the run window (process-wide; set 0: none) */
    const char *snmp_recording;     /* .snmprec or snmpwalk -On file served, or NULL */
    const char *export_snmprec;     /* write a device's view here and exit, or NULL */
    uint32_t export_device;         /* the device export_snmprec writes */
    const char *controller_ip;      /* register the fleet with this RESTCONF controller, or NULL */
    uint32_t controller_port;       /* its RESTCONF port */
    const char *controller_username; /* its login */
    const char *controller_password;
    uint32_t configs_batch_size; /* devices per registration request */
    uint32_t devices_per_port; /* --devices-per-port: nodes registered and listed per device (mounts of it) */
    uint32_t register_timeout_s;        /* --time-out: bound on the whole registration, 0: none */
    const char *config_address;         /* address the controller connects to, NULL: the listening one */
    const char *emit_inventory;         /* write the inventory here and exit, or NULL */
    int register_only;                  /* register every device with controller_ip and exit */
    const char *inventory_format;       /* odl-json, opennms-requisition, prometheus-sd or csv */
    const char *rpc_config;             /* custom RPC replies (OpenDaylight's format), or NULL */
    const char *metrics_addr;           /* --metrics ADDR:PORT, or NULL */
    int metrics_per_device;             /* 1: per-device series too */
    const char *api_token_file;         /* --api-token-file: the control API's bearer token, or NULL: none */
    uint32_t status_interval_s;         /* one-line status on stderr this often, 0: never */
    const char *fleet_file;             /* --fleet FILE: groups of devices, or NULL */
    const char *scenario_file;          /* --scenario FILE: a timeline of actions, or NULL */
    struct net_endpoint call_home_addr; /* --call-home: the manager's address and port; valid with a port */
    uint32_t call_home_port;       /* the manager's call-home port; 0: devices listen instead of dialling */
    double call_home_rate;         /* --call-home-rate: dial-outs per second across the fleet, 0: unbounded */
    const char *host_key_type;     /* --host-key-type: ed25519, ecdsa or rsa, the per-device keys' type */
    int tls;                       /* 1: NETCONF over TLS (--transport tls; ssh is 0 then) */
    const char *tls_cert;          /* --tls-cert: server certificate, or NULL: the state folder's */
    const char *tls_key;           /* --tls-key: its key */
    const char *tls_ca;            /* --tls-ca: CA of client certificates, or NULL: the fleet's */
    int tls_cert_per_device;       /* --tls-cert-per-device: every device its own server certificate */
    const char *tls_cert_to_name;  /* --tls-cert-to-name: cert-to-name file, or NULL: the common name */
    const char *issue_client_cert; /* --issue-client-cert NAME: write a client certificate and exit */
    const char *issue_out;         /* --out PREFIX: where it goes */
};

/* One group of a fleet: its name and its plan (the command line with the group's settings applied). */
struct fleet_group_spec {
    char *name;              /* the group's name */
    struct fleet_config cfg; /* its plan; cfg.device_count devices (a shard's part: addresses shifted) */
    uint32_t line;           /* where the fleet file defines it, 0 when unknown or from the command line */
    uint32_t skip;           /* a shard's part: devices of the whole group before it (shard.h) */
    uint32_t whole_count;    /* devices of the whole group; 0: cfg.device_count (not cut) */
    uint32_t first_index;    /* global index of its first device */
    uint32_t first_node;     /* global number of its first inventory node (--devices-per-port) */
};

#endif
