/*
 * The fleet: the plan made from the command line (devices, addresses,
 * ports, workers), the shared read-only model (schemas, template tree,
 * yang-library data), and the devices, each owned by one worker loop.
 */
#ifndef FLEET_FLEET_H
#define FLEET_FLEET_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include <libyang/libyang.h>

#include "agent.h"
#include "datastore.h"
#include "devview.h"
#include "err.h"
#include "log.h"
#include "loop.h"
#include "metrics.h"
#include "profile.h"
#include "recording.h"
#include "respond.h"
#include "sbuf.h"
#include "schema.h"
#include "stream.h"
#include "trap.h"

/* Why a connection was closed as soon as it was accepted (the metrics' reason label). */
enum listen_refused {
    LISTEN_REFUSED_NO_FD,     /* the process was out of descriptors */
    LISTEN_REFUSED_NOT_FLEET, /* it dialled an address outside the fleet */
    LISTEN_REFUSED_KINDS
};

/* Descriptors kept free for sessions and internals beyond the listening sockets. */
#define FLEET_FD_RESERVE 256
/* Most entries of a rate plan's send order (the sum of the weights). */
#define FLEET_NOTIF_MIX_MAX 1000000u
/* Most --features options. */
#define FLEET_MAX_FEATURE_PINS 64
/* Default largest NETCONF message accepted from a client. */
#define FLEET_DEFAULT_MAX_MSG_BYTES (64u * 1024u * 1024u)

struct fleet_config {
    uint32_t device_count;             /* devices to simulate, >= 1 */
    uint32_t starting_port;            /* first device's port (all devices' with ip_per_device) */
    uint32_t ip;                       /* first device's IPv4 address, host byte order */
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
    double notification_rate;        /* > 0: notifications per device per second, whatever the file says */
    uint32_t replay_log;             /* notifications each streaming device keeps for replay */
    const char *report_path;         /* JSON report at exit and on SIGUSR1, or NULL */
    double flap_rate;                /* interface flaps per device per second (Poisson), 0: none */
    struct trap_sink trap_sinks[8];  /* where link traps go (--trap-sink) */
    uint32_t trap_sink_count;        /* entries used in trap_sinks */
    int trap_inform;                 /* 1: informs (acknowledged, retried) instead of traps */
    const char *trap_community;      /* community of traps and informs */
    const char *snmp_recording;      /* .snmprec or snmpwalk -On file served, or NULL */
    const char *export_snmprec;      /* write a device's view here and exit, or NULL */
    uint32_t export_device;          /* the device export_snmprec writes */
    const char *controller_ip;       /* register the fleet with this RESTCONF controller, or NULL */
    uint32_t controller_port;        /* its RESTCONF port */
    const char *controller_username; /* its login */
    const char *controller_password;
    uint32_t configs_batch_size;  /* devices per registration request */
    uint32_t register_timeout_s;  /* --time-out: bound on the whole registration, 0: none */
    const char *config_address;   /* address the controller connects to, NULL: the listening one */
    const char *emit_inventory;   /* write the inventory here and exit, or NULL */
    const char *inventory_format; /* odl-json, opennms-requisition, prometheus-sd or csv */
    const char *rpc_config;       /* custom RPC replies (OpenDaylight's format), or NULL */
    const char *metrics_addr;     /* --metrics ADDR:PORT, or NULL */
    int metrics_per_device;       /* 1: per-device series too */
    uint32_t status_interval_s;   /* one-line status on stderr this often, 0: never */
    const char *fleet_file;       /* --fleet FILE: groups of devices, or NULL */
};

/* Counters of ietf-netconf-monitoring's statistics container, per device. */
struct device_stats {
    uint32_t in_bad_hellos;     /* sessions dropped for a bad hello */
    uint32_t in_sessions;       /* sessions started (hello completed) */
    uint32_t dropped_sessions;  /* sessions ended without close-session */
    uint32_t in_rpcs;           /* correct rpc messages received */
    uint32_t in_bad_rpcs;       /* rpc messages that could not be parsed or dispatched */
    uint32_t out_rpc_errors;    /* rpc-reply messages carrying rpc-error */
    uint32_t out_notifications; /* notifications sent */
    uint32_t auth_failures;     /* SSH authentications refused */
};

struct session;
struct worker;
struct rpc_custom;

struct device {
    uint32_t index;                  /* position in the fleet, 0-based */
    uint32_t addr;                   /* listening IPv4 address, host byte order */
    uint16_t port;                   /* listening port */
    int listen_fd;                   /* own listening socket (port per device), -1 with ip_per_device */
    struct worker *worker;           /* the loop that owns this device */
    struct datastore ds;             /* running, candidate, startup; copy-on-write over the template */
    struct session *sessions;        /* open sessions, newest first (intrusive list) */
    struct device_stats stats;       /* monitoring counters */
    int snmp_fd;                     /* own SNMP socket (port per device), -1 otherwise */
    struct respond_stats snmp_stats; /* SNMP agent counters */
    struct devview_state *view; /* interface status changes and config cache; NULL until running is written */
    uint64_t seed;              /* the device's seed (counters, draws) */
    uint64_t boot_ms;           /* when the device booted (fleet clock, ms since the epoch) */
    struct notif_stream *stream;      /* notification stream, NULL until the first subscription */
    struct notif_counts notif_closed; /* counts of the device's subscriptions that ended */
    struct loop_timer flap_timer;     /* the next flap (--flap-rate) */
    uint32_t flap_count;              /* flaps so far: draws the next delay and interface */
    int32_t flap_down_pos;            /* interface a flap holds down, -1: none */
    struct trap_counters *trap_rows;  /* per trap sink, allocated at the first trap */
    struct ssh_bind_struct
        *ssh_bind; /* --host-key-per-device: accepts with this device's key, made on first use */
};

struct worker {
    uint32_t index;                 /* 0-based */
    struct fleet *fleet;            /* back pointer */
    struct loop *loop;              /* this worker's loop */
    pthread_t thread;               /* thread running the loop; valid when started */
    int started;                    /* 1 once the thread runs */
    int listen_fd;                  /* shared-port socket with ip_per_device, else -1 */
    struct loop_timer accept_pause; /* re-enables accepting after running out of descriptors */
    int spare_fd;                   /* held back: freed to accept and refuse a connection at the limit */
    uint64_t refused[LISTEN_REFUSED_KINDS]; /* connections closed at once, by enum listen_refused */
    monotime_us refused_logged_us;          /* when the last out-of-descriptors refusal was logged */
    struct session *pending;                /* sessions with output to flush before sleeping */
    struct session *closing;                /* sessions to free at the loop's safe point */
    char *read_buf;                         /* read buffer lent to whichever session is reading */
    uint32_t session_count;                 /* open sessions on this worker */
    struct agent_worker snmp;               /* SNMP socket (address per device), buffers, delayed answers */
    struct sbuf notif_buf;                  /* builds one notification at a time */
    monotime_us stream_pass_us;             /* loop time of the pass stream_pass_sent counts */
    uint32_t stream_pass_sent;              /* notifications generated by this worker in that pass */
    struct trap_sender *traps;              /* traps and informs of this worker's devices, or NULL */
    struct ssh_bind_struct *ssh_bind;       /* SSH: accepts connections with the fleet's host keys, or NULL */
    struct metrics_worker metrics; /* live-view counters of this worker's devices (its thread writes) */
};

struct fleet {
    struct fleet_config cfg;                 /* the plan */
    struct schema_set schemas;               /* shared read-only model */
    struct lyd_node *template_tree;          /* initial running configuration, shared read-only */
    struct lyd_node *yanglib_tree;           /* ietf-yang-library state, shared read-only */
    struct ly_ctx *bare_ctx;                 /* context without modules: schema-free parses of peer XML */
    struct device *devices;                  /* cfg.device_count devices */
    struct worker *workers;                  /* cfg.threads workers */
    atomic_uint_fast32_t next_session_id;    /* session-ids are unique across the process */
    time_t start_time;                       /* netconf-start-time */
    int max_fds;                             /* RLIMIT_NOFILE after raising it */
    int null_fd;                             /* /dev/null: the workers' spare descriptors are copies */
    struct profile *profile;                 /* what every device is, read-only */
    struct dyn_traffic traffic;              /* the profile's traffic, prepared for fast reads */
    struct ssh_key_struct **authorized_keys; /* SSH: keys that may log in (--authorized-keys) */
    uint32_t authorized_key_count;           /* entries in authorized_keys */
    uint8_t ssh_secret[32];                  /* --host-key-per-device: what devices' keys derive from */
    struct notif_plan *notif_plan;           /* the notification file, or NULL */
    uint32_t *notif_mix;           /* rate plan: item of each send, by sequence number modulo notif_mix_len */
    uint32_t notif_mix_len;        /* entries in notif_mix */
    atomic_int streams_paused;     /* 1 while SIGUSR2 holds every stream (toggled by the main thread) */
    struct lyd_node *state_tree;   /* the profile's state data (config false), shared read-only */
    struct rec_table *smiv2_table; /* SNMP instances of state_tree's smiv2:oid nodes, or NULL */
    struct devview_fleet view;     /* the profile's view of an untouched device */
    uint64_t start_ms;             /* fleet clock when it started (ms since the epoch) */
    uint64_t clock_base_ms;        /* wall clock at clock_base_us */
    monotime_us clock_base_us;     /* monotonic clock when the fleet started */
    struct rec_table *recording;   /* recorded OIDs beside the live ones, read-only; NULL if none */
    struct rpc_custom *rpc_custom; /* --rpc-config replies and each device's positions in them, or NULL */
    struct metrics_server *metrics; /* --metrics HTTP server, or NULL */
};

/**
 * @brief Check the plan, load schemas and initial configuration, open every listening socket.
 * Nothing runs yet. On failure @p err names the problem; the process should exit with 2.
 */
enum fleet_err fleet_init(struct fleet *fleet, const struct fleet_config *cfg, char *err, size_t err_len);

/** @brief Start the worker threads. */
enum fleet_err fleet_start(struct fleet *fleet);

/** @brief Stop the worker threads (sessions and counts stay for a last report). Safe to call twice. */
void fleet_stop(struct fleet *fleet);

/** @brief Stop the workers, close every session and free everything. Accepts a fleet that never started. */
void fleet_close(struct fleet *fleet);

/** @return A new process-wide session-id (never 0). */
uint32_t fleet_new_session_id(struct fleet *fleet);

#endif
