/*
 * The base of the simulator: a device type (what a kind of device is,
 * loaded once and shared read-only), a group (N devices of one type with
 * their addresses and behaviour), a device, the worker loop that owns it,
 * and the fleet that holds them all. Only leaf headers (common/, wire/,
 * model/, the plan) are included here, so that every subsystem can include
 * this file and the dependencies still run one way: subsystems on the
 * base, fleet.c (which wires them) on the subsystems.
 */
#ifndef FLEET_DEVICE_H
#define FLEET_DEVICE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include <libyang/libyang.h>

#include "datastore.h"
#include "dynamics.h"
#include "err.h"
#include "ledger.h"
#include "loop.h"
#include "plan.h"
#include "profile.h"
#include "sbuf.h"
#include "schema.h"

struct session;
struct worker;
struct rpc_custom;
struct rec_table;
struct notif_plan;
struct notif_stream;
struct yp_ended;
struct devview_state;
struct trap_counters;
struct trap_sender;
struct syslog_dev;
struct syslog_fleet;
struct metrics_server;
struct mib_object;
struct identity_rules;
struct state_movers;
struct state_text;
struct wheel;
struct yp_filter;
struct yp_onchange;
struct stdrev_interfaces;
struct ssh_bind_struct;
struct ssl_ctx_st;
struct ctn_list;
struct tls_devcert;
struct tls_devcerts;
struct ssh_key_struct;
struct device_ctl;
struct action_log;
struct callhome;
struct scenario;

/* Most devices of one fleet, over all its groups. */
#define FLEET_MAX_DEVICES 1000000u

/* Most distinct shared ports (NETCONF and SNMP each) of address-per-device groups. */
#define FLEET_MAX_SHARED_PORTS 16

/* Counters of one device's agent (named as SNMPv2-MIB's snmp group where it has them). */
struct respond_stats {
    uint32_t in_pkts;                /* snmpInPkts: datagrams received */
    uint32_t out_pkts;               /* snmpOutPkts: responses sent */
    uint32_t in_bad_versions;        /* snmpInBadVersions */
    uint32_t in_bad_community_names; /* snmpInBadCommunityNames: unknown community, dropped */
    uint32_t in_bad_community_uses;  /* snmpInBadCommunityUses: SET with the read community (noAccess) */
    uint32_t in_asn_parse_errs;      /* snmpInASNParseErrs: malformed messages, dropped */
    uint32_t in_get_requests;        /* GET PDUs accepted */
    uint32_t in_get_nexts;           /* GETNEXT PDUs accepted */
    uint32_t in_get_bulks;           /* GETBULK PDUs accepted */
    uint32_t in_set_requests;        /* SET PDUs accepted */
    uint32_t out_too_bigs;           /* responses that were tooBig */
    uint32_t silent_drops;           /* snmpSilentDrops: other PDUs dropped (responses, traps, reports) */
    uint32_t injected_drops;         /* requests left unanswered on purpose (--snmp-drop-rate, faults) */
    uint32_t in_denied_v3_sets;      /* SNMPv3 SETs by a user without write access (noAccess) */
    uint32_t usm_stats[7];           /* usmStats counters (RFC 3414), indexed by enum susm_report_kind */
};

/*
 * One row of counts (a subscriber, or a device summed over its subscribers). What passed the filter is on
 * the push ledger (channel netconf): sent (in_window or drain) = queued on its connection, send_failures =
 * could not be queued (out of memory), dropped = its queue was full (a slow reader), suppressed_pre_window =
 * the plan's ticks before the run window (never built). The report's "emitted" is what was built and
 * offered: ledger.emitted - ledger.suppressed_pre_window + suppressed.
 */
struct notif_counts {
    struct ledger_row ledger; /* LEDGER_NETCONF: what passed its filter (queued stays 0) */
    uint64_t suppressed;      /* its filter left it out (never offered to the wire, not in the ledger) */
};

/* A worker's SNMP state: its shared socket, batch buffers and delayed answers. */
struct agent_worker {
    int fds[FLEET_MAX_SHARED_PORTS]; /* shared-port sockets (fleet->snmp_shared_ports), -1 when none */
    uint8_t *in_bufs;                /* AGENT_BATCH request buffers */
    uint8_t *out_bufs;               /* AGENT_BATCH response buffers */
    size_t out_cap;                  /* size of each response buffer */
    struct respond_scratch *scratch; /* lent to request processing */
    struct agent_delayed *delayed;   /* answers waiting on a timer (list) */
    uint64_t reply_seq;              /* answers computed; drives latency and drop draws */
};

/* NETCONF operations counted by name; any other name (and a message that is no valid <rpc>) is "other". */
#define METRICS_RPC_OPS 17
/* SNMP request PDU types counted: get, getnext, getbulk, set. */
#define METRICS_SNMP_TYPES 4
/* How long a scrape or a status line waits for the workers' snapshots. */
#define METRICS_GATHER_TIMEOUT_MS 2000

/* Counters a worker keeps for the devices it owns; written by its thread only, read through its inbox. */
struct metrics_worker {
    uint64_t rpcs[METRICS_RPC_OPS][2];    /* rpc-replies by operation, [0] ok or data, [1] rpc-error */
    uint64_t snmp[METRICS_SNMP_TYPES][2]; /* SNMP responses by request type, [0] noError, [1] an error */
};

/* Configuration-derived values of one device, read from a running tree; valid while gen matches. */
struct devview_cfg {
    uint32_t gen;         /* running_gen of the tree they were read from */
    uint8_t *enabled;     /* per profile interface: 1 admin up (absent entries count as enabled) */
    const char **alias;   /* per profile interface: description, or NULL; points into the tree */
    const char *hostname; /* /system/hostname, or NULL when unset */
    const char *contact;  /* /system/contact, or NULL */
    const char *location; /* /system/location, or NULL */
};

/* A device type's view of an untouched device, and its interface name index. */
struct devview_type {
    struct devview_cfg template_cfg; /* read from the template tree */
    uint32_t *name_slots;            /* open-addressing index: interface name -> position + 1 (0 empty) */
    uint32_t slot_mask;              /* slots - 1 (a power of two) */
};

/* The live SNMP objects of a device type, sorted by OID (mib.c). */
struct mib_view {
    struct mib_object *objects; /* owned, sorted */
    uint32_t count;             /* entries in objects */
};

/*
 * What a kind of device is: its profile, schemas, initial configuration and
 * state, yang-library data and SNMP view. Loaded once per type, read-only
 * once the workers run; any number of groups may share one.
 */
struct device_type {
    char *name;                     /* what the type is called (profile name, or the schemas folder's) */
    struct profile *profile;        /* interfaces, identity, traffic */
    struct dyn_traffic traffic;     /* the profile's traffic, prepared for fast reads */
    struct schema_set schemas;      /* libyang context, advertised modules, hello */
    struct lyd_node *template_tree; /* initial running configuration */
    struct lyd_node *yanglib_tree;  /* ietf-yang-library state */
    struct lyd_node *state_tree;    /* the profile's state data (config false), or NULL */
    struct rec_table *smiv2_table;  /* SNMP instances of state_tree's smiv2:oid nodes, or NULL */
    struct rec_table *recording;    /* recorded OIDs beside the live ones, or NULL */
    struct devview_type view;       /* the view of an untouched device */
    struct mib_view mib;            /* live SNMP objects */
    char *recorded_dir;             /* a recorded type's folder (docs/RECORDED_TYPES.md), or NULL */
    const struct stdrev_interfaces *if_layout; /* where get generates interface state from the profile (the
                                                  implemented ietf-interfaces'), NULL: it generates none */
    struct identity_rules *identity; /* a recorded type's rules.json: what differs per device, or NULL */
    struct state_movers *movers;     /* counters, gauges and timestamps of state_tree that move, or NULL */
    struct state_text *state_text;   /* state_tree's state-only subtrees as text with value slots, or NULL */
    uint8_t authen_traps_disabled;   /* 1: its devices' snmpEnableAuthenTraps is disabled(2); 0: enabled(1) */
};

/*
 * N devices of one type, with the addresses, credentials and behaviour of
 * their plan. Devices first .. first + cfg.device_count - 1 of the process; with
 * --shard the part of a whole group this process serves (shard_plan.h).
 */
struct device_group {
    char *name;                    /* the group's name ("default" without a fleet file) */
    uint32_t index;                /* position in the fleet's groups */
    uint32_t first;                /* position of its first device in this process's devices */
    uint32_t skip;                 /* a shard's part of the group: the whole group's devices before it */
    uint32_t whole_count;          /* devices of the whole group (over every shard) */
    uint32_t start_present;        /* its first devices present at start (a scenario's start; else all) */
    uint32_t present;              /* its first devices present now (grow, shrink); fleet_action.c's */
    struct fleet_config cfg;       /* its plan (cfg.device_count devices) */
    struct device_type *type;      /* what its devices are */
    struct notif_plan *notif_plan; /* the notification file, or NULL */
    uint32_t *notif_mix;           /* rate plan: item of each send, by sequence number modulo */
    uint32_t notif_mix_len;        /* entries in notif_mix */
    struct rpc_custom *rpc_custom; /* --rpc-config replies, positions by index in the group; or NULL */
    struct ssh_key_struct **authorized_keys; /* SSH: keys that may log in (--authorized-keys) */
    uint32_t authorized_key_count;           /* entries in authorized_keys */
};

/* Why a connection was closed as soon as it was accepted (the metrics' reason label). */
enum listen_refused {
    LISTEN_REFUSED_NO_FD,     /* the process was out of descriptors */
    LISTEN_REFUSED_NOT_FLEET, /* it dialled an address outside the fleet */
    LISTEN_REFUSED_KINDS
};

/* Why a TLS handshake was refused (the metrics' reason label). */
enum tls_refused {
    TLS_REFUSED_NO_CERT,   /* the client sent no certificate */
    TLS_REFUSED_UNTRUSTED, /* its certificate does not chain to the CA */
    TLS_REFUSED_EXPIRED,   /* its certificate is out of its validity */
    TLS_REFUSED_NO_NAME,   /* no cert-to-name entry maps it */
    TLS_REFUSED_PROTOCOL,  /* anything else: versions, ciphers, the peer left */
    TLS_REFUSED_KINDS
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
    /* TLS handshakes refused, by enum tls_refused: no session began, so no bad hello either */
    uint32_t tls_refused[TLS_REFUSED_KINDS];
};

/* Configuration requests a device received, for the report (fleetsim --report) and reconcile. */
struct device_edit_counts {
    uint32_t edit_configs;       /* edit-config requests dispatched, answered ok or rpc-error */
    uint32_t edit_config_errors; /* of those, answered with rpc-error */
    uint32_t commits;            /* commit requests dispatched */
    uint32_t commit_errors;      /* of those, answered with rpc-error */
};

struct device {
    uint32_t index;                   /* position in the whole fleet, 0-based (over every shard) */
    const struct device_type *type;   /* what the device is */
    const struct device_group *group; /* its group: addresses, credentials, behaviour */
    uint32_t addr;                    /* listening IPv4 address, host byte order */
    uint16_t port;                    /* listening port */
    int listen_fd;                    /* own listening socket (port per device), -1 with ip_per_device */
    struct worker *worker;            /* the loop that owns this device */
    struct datastore ds;              /* running, candidate, startup; copy-on-write over the template */
    struct session *sessions;         /* open sessions, newest first (intrusive list) */
    struct device_stats stats;        /* monitoring counters */
    struct device_edit_counts edits;  /* edit-config and commit received (the report) */
    int snmp_fd;                      /* own SNMP socket (port per device), -1 otherwise */
    struct respond_stats snmp_stats;  /* SNMP agent counters */
    struct devview_state *view; /* interface status changes and config cache; NULL until running is written */
    uint64_t seed;              /* the device's seed (counters, draws) */
    uint64_t boot_ms;           /* when the device booted (fleet clock, ms since the epoch) */
    struct notif_stream *stream;     /* notification stream, NULL until the first subscription */
    struct yp_ended *yp_ended;       /* report rows of its ended dynamic subscriptions (yp_rows.h), or NULL */
    struct loop_timer flap_timer;    /* the next flap (--flap-rate) */
    uint32_t flap_count;             /* flaps so far: draws the next delay and interface */
    int32_t flap_down_pos;           /* interface a flap holds down, -1: none */
    struct trap_counters *trap_rows; /* per trap sink, allocated at the first trap */
    struct syslog_dev *syslog;       /* its syslog state (syslog_chan.h), NULL: its group sends none */
    struct ssh_bind_struct
        *ssh_bind; /* --host-key-per-device: accepts with this device's key, made on first use */
    struct tls_devcert *tls_cert; /* --tls-cert-per-device: its certificate and key, made on first use */
    struct device_ctl *ctl; /* control API state (down, reboot, overrides), NULL until its first action */
    uint32_t reboots;       /* reboots through the control API: engineBoots is 1 + reboots */
    uint32_t event_count; /* events so far (event.h): the low half of its last event id, 0 before the first */
    struct yp_onchange *yp_onchange; /* its on-change YANG-Push subscriptions (yp_onchange.c), NULL: none */
};

struct worker {
    uint32_t index;                         /* 0-based */
    struct fleet *fleet;                    /* back pointer */
    struct loop *loop;                      /* this worker's loop */
    pthread_t thread;                       /* thread running the loop; valid when started */
    int started;                            /* 1 once the thread runs */
    int listen_fds[FLEET_MAX_SHARED_PORTS]; /* shared-port sockets (fleet->shared_ports), -1 when none */
    struct loop_timer accept_pause;         /* re-enables accepting after running out of descriptors */
    int spare_fd; /* held back: freed to accept and refuse a connection at the limit */
    uint64_t refused[LISTEN_REFUSED_KINDS]; /* connections closed at once, by enum listen_refused */
    monotime_us refused_logged_us;          /* when the last out-of-descriptors refusal was logged */
    struct session *pending;                /* sessions with output to flush before sleeping */
    struct session *closing;                /* sessions to free at the loop's safe point */
    char *read_buf;                         /* read buffer lent to whichever session is reading */
    uint32_t session_count;                 /* open sessions on this worker */
    uint32_t ssh_session_count;             /* those of them over SSH */
    uint32_t tls_session_count;             /* those of them over TLS */
    struct agent_worker snmp;               /* SNMP socket (address per device), buffers, delayed answers */
    struct sbuf notif_buf;                  /* builds one notification at a time */
    monotime_us stream_pass_us;             /* loop time of the pass stream_pass_sent counts */
    uint32_t stream_pass_sent;              /* notifications generated by this worker in that pass */
    struct trap_sender *traps;              /* traps and informs of this worker's devices, or NULL */
    struct ssh_bind_struct *ssh_bind;       /* SSH: accepts connections with the fleet's host keys, or NULL */
    struct metrics_worker metrics; /* live-view counters of this worker's devices (its thread writes) */
    struct wheel *wheel;           /* timing wheel of the YANG-Push subscriptions (common/wheel.h) */
    uint32_t yp_next_id;           /* last subscription id given on this worker (ids are unique on it) */
    struct yp_filter *yp_filters;  /* YANG-Push filters shared by this worker's subscriptions */
    uint64_t yp_late_ms[65];       /* periodic push-updates sent, by ms after their slot (last: 64 or more) */
};

struct fleet {
    struct fleet_config cfg;              /* fleet-wide plan; device_count sums the groups' */
    struct device_group *groups;          /* group_count groups, devices in order */
    const struct fleet_group_spec *specs; /* their plans as given (inventories are written from them) */
    struct fleet_group_spec default_spec; /* the one group's plan without a fleet file */
    uint32_t group_count;                 /* entries in groups */
    struct device_type **types;           /* type_count distinct types (groups may share one) */
    uint32_t type_count;                  /* entries in types */
    uint16_t shared_ports[FLEET_MAX_SHARED_PORTS];      /* NETCONF ports of address-per-device groups */
    uint32_t shared_port_count;                         /* entries in shared_ports */
    uint16_t snmp_shared_ports[FLEET_MAX_SHARED_PORTS]; /* SNMP ports of address-per-device groups */
    uint32_t snmp_shared_port_count;                    /* entries in snmp_shared_ports */
    struct ly_ctx *bare_ctx; /* context without modules: schema-free parses of peer XML */
    struct device *devices;  /* cfg.device_count devices, global indices from cfg.device_offset */
    struct worker *workers;  /* cfg.threads workers */
    atomic_uint_fast32_t next_session_id; /* session-ids are unique across the process */
    time_t start_time;                    /* netconf-start-time */
    int max_fds;                          /* RLIMIT_NOFILE after raising it */
    int null_fd;                          /* /dev/null: the workers' spare descriptors are copies */
    int ssh_started;                      /* 1 once libssh was initialised (some group speaks SSH) */
    uint8_t ssh_secret[32];               /* --host-key-per-device: what devices' keys derive from */
    struct ssl_ctx_st *tls_ctx;           /* TLS: the context every worker's sessions share, or NULL */
    struct ctn_list *tls_names;           /* TLS: --tls-cert-to-name's entries, or NULL (common name) */
    struct tls_devcerts *tls_devcerts;    /* TLS: what devices' own certificates are made with, or NULL */
    atomic_int streams_paused;      /* 1 while SIGUSR2 holds every stream (toggled by the main thread) */
    uint64_t start_ms;              /* fleet clock when it started (ms since the epoch) */
    uint64_t clock_base_ms;         /* wall clock at clock_base_us */
    monotime_us clock_base_us;      /* monotonic clock when the fleet started */
    struct metrics_server *metrics; /* --metrics HTTP server, or NULL */
    struct action_log *actions;     /* the control API's actions, for the report and metrics; or NULL */
    struct callhome *call_home;     /* --call-home: dial-out state (callhome.c), or NULL */
    struct scenario *scenario;      /* --scenario: the timeline (scenario.h), or NULL */
    struct syslog_fleet *syslog;    /* the syslog channel (syslog_chan.c), NULL: no group has a sink */
    struct trap_chan *trap_chan;    /* background traps (trap_chan.c), NULL: no group has a --trap-rate */
};

/** @return Where @p dev is in its process's devices (its global index less the shard's offset). */
static inline uint32_t
device_slot(const struct device *dev)
{
    return (uint32_t)(dev - dev->worker->fleet->devices);
}

/** @return @p dev's position in its whole group (rpc-config replies, rates over the group). */
static inline uint32_t
device_group_pos(const struct device *dev)
{
    return device_slot(dev) - dev->group->first + dev->group->skip;
}

/** @return The device of global index @p index, or NULL when another process (shard) serves it. */
static inline struct device *
fleet_device_at(const struct fleet *fleet, uint32_t index)
{
    uint32_t slot = index - fleet->cfg.device_offset;

    return index >= fleet->cfg.device_offset && slot < fleet->cfg.device_count ? &fleet->devices[slot] : NULL;
}

/** @return A new process-wide session-id (never 0). */
static inline uint32_t
fleet_new_session_id(struct fleet *fleet)
{
    uint32_t id;

    do {
        id = (uint32_t)atomic_fetch_add(&fleet->next_session_id, 1);
    } while (id == 0);
    return id;
}

#endif
