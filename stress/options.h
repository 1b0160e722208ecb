/*
 * fleetsim-stress command lines: "edit" keeps OpenDaylight's stress-client
 * option names; "mount" emulates a controller mounting a fleet; "snmp"
 * polls a fleet's SNMP agents like a collector.
 */
#ifndef STRESS_OPTIONS_H
#define STRESS_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "netaddr.h"
#include "susm.h"

/* reconcile's --sent, --received and --report may each be given this many times (one file per shard). */
#define STRESS_FILES_MAX 256

/* The files of one repeatable option. */
struct stress_files {
    const char *paths[STRESS_FILES_MAX]; /* as given, in order */
    uint32_t count;                      /* entries used */
};

enum stress_mode {
    STRESS_EDIT,             /* edit-config throughput */
    STRESS_MOUNT,            /* mount storm */
    STRESS_SNMP,             /* SNMP collection (GETBULK walks) */
    STRESS_NOTIFY,           /* subscribe to every device and count notifications */
    STRESS_RECONCILE,        /* join the simulator's report with notify's manifest */
    STRESS_CONTROLLER_MOUNT, /* poll a controller's topology while it connects to a fleet */
    STRESS_RECORD,           /* write one server as a recorded device type folder */
    STRESS_RESTCONF,         /* RESTCONF edits through a controller (OpenDaylight's REST perf client) */
    STRESS_REPORT,           /* one HTML report of one or more manifests */
    STRESS_MERGE,            /* one manifest of several runs' manifests */
    STRESS_CEILING,          /* a collector's ingest ceiling: the three-point method against a fleet */
    STRESS_PUSH,             /* YANG-Push: one dynamic subscription per device, updates counted and timed */
};

/* push's --datastore (enum order = the choice words' order). */
enum push_datastore {
    PUSH_DS_RUNNING,     /* ietf-datastores:running */
    PUSH_DS_OPERATIONAL, /* ietf-datastores:operational */
};

/* What "ceiling" measures (--measure). */
enum ceiling_measure {
    CEILING_SUSTAINED,      /* the sustained ceiling: a search of per-device rates, slope over a window */
    CEILING_SERVICE_RATE,   /* the service rate: a burst, then the drain */
    CEILING_LOSS_ISOLATION, /* (1) against (3) at half the ceiling */
    CEILING_ALL,            /* silence, service rate, search, loss isolation, baseline again */
};

/* Drop counters of "ceiling" (--dropped NAME=PROBE), at most this many. */
#define CEILING_DROPPED_MAX 16

/* Default first agent port of "snmp" (fleetsim's first device); NETCONF's is 17830. */
#define STRESS_SNMP_DEFAULT_PORT 16100
/* Default controller port of "restconf" (OpenDaylight's REST perf client). */
#define STRESS_RESTCONF_DEFAULT_PORT 8182
/* Default --destination of "restconf", OpenDaylight's: {DEVICE_PORT} is the device's port. */
#define STRESS_RESTCONF_DEFAULT_DESTINATION                                                                  \
    "/restconf/data/network-topology:network-topology/topology=topology-netconf/node="                       \
    "{DEVICE_PORT}-sim-device/yang-ext:mount/cisco-vpp:vpp/bridge-domains=bridge-domain/a"

enum mount_action {
    MOUNT_NONE,       /* hello only */
    MOUNT_GET_SCHEMA, /* fetch every advertised module */
    MOUNT_GET_CONFIG, /* read the running configuration */
};

/* --v3-user NAME:AUTH:AUTHKEY:PRIV:PRIVKEY, split; the pointers point into the option's text (argv). */
struct stress_v3_user {
    const char *name;          /* usmUserName, name_len bytes, not NUL-terminated */
    size_t name_len;           /* 1..SUSM_USER_NAME_MAX_BYTES */
    enum susm_auth auth;       /* authentication protocol */
    const char *auth_name;     /* its lower-case name (susm_auth_name(): "sha256" for SHA-256), static */
    const char *auth_password; /* AUTHKEY, auth_password_len bytes; unused with SUSM_AUTH_NONE */
    size_t auth_password_len;  /* >= 8 unless auth is SUSM_AUTH_NONE */
    enum susm_priv priv;       /* privacy protocol; SUSM_PRIV_AES128 needs auth */
    const char *priv_password; /* PRIVKEY, NUL-terminated (the last field); unused with SUSM_PRIV_NONE */
    size_t priv_password_len;  /* >= 8 unless priv is SUSM_PRIV_NONE */
};

struct stress_options {
    enum stress_mode mode;     /* subcommand */
    uint32_t ip;               /* first server address: IPv4, or the low 32 bits of IPv6; host order */
    struct net_family ip_fam;  /* --ip's family (and IPv6 prefix): every server address is in it */
    uint32_t port;             /* first server port */
    uint32_t device_count;     /* servers: port..port+D-1, or ip..ip+D-1 with ip_per_device */
    int ip_per_device;         /* 1: vary the address, not the port */
    uint32_t shard_index;      /* --shard I/N: I; this client takes part I of the targets and totals */
    uint32_t shard_count;      /* --shard I/N: N; 0: no --shard */
    int ssh;                   /* --ssh: 1 SSH, 0 plain TCP, -1 left out: detected per connection */
    const char *username;      /* SSH user (and the user of a preamble) */
    const char *password;      /* SSH password */
    const char *ssh_key;       /* SSH private key file, or NULL */
    int tls;                   /* --tls true: NETCONF over TLS (RFC 7589); ssh is 0 then */
    const char *tls_cert;      /* TLS client certificate file (PEM), or NULL */
    const char *tls_key;       /* its private key file (PEM), or NULL; given with tls_cert */
    const char *tls_ca;        /* CA file the servers' certificates must chain to, or NULL: the system's */
    int tls_verify_host;       /* 1: the server's certificate must name the address connected to */
    int tls_resume;            /* 1: reconnections resume the device's last TLS session */
    uint32_t msg_timeout_s;    /* seconds to wait for any answer */
    int legacy_framing;        /* offer only base:1.0 */
    const char *json_path;     /* manifest, or NULL */
    const char *scenario_path; /* --scenario: the fleet's scenario file, named in the manifest, or NULL */
    const char *preamble_path; /* bytes to send before the hello, or NULL */
    const char *tcp_header;    /* --tcp-header TEXT as given (sent trimmed, unquoted, plus "\n"), or NULL */
    int exi;                   /* --exi true: asked for EXI; warned, plain XML is used */
    int debug;                 /* --debug true: asked for a debug log; noted, there is none */
    /* edit */
    uint64_t edits;           /* edit-config requests in all */
    const char *edit_content; /* file with the XML inside <config>, NULL for the built-in one */
    uint64_t batch_size;      /* with candidate: a commit after this many edits (0: all in one batch) */
    int candidate;            /* edit the candidate and commit, else edit running */
    int async;                /* pipeline requests */
    uint32_t threads;         /* sessions */
    uint32_t pipeline;        /* requests in flight per session in async mode, 0 = all */
    /* mount */
    uint32_t concurrency;       /* sessions being set up at once */
    enum mount_action on_mount; /* what a mount does after the hello */
    uint32_t hold_s;            /* seconds to keep all sessions open afterwards */
    int reconnect;              /* mount: a lost or failed session is connected again, with backoff */
    double events_interval_s;   /* mount --events: between fetches of the fleet's events and polls, seconds */
    /* snmp (concurrency above: collections at once) */
    const char *community;    /* v2c community */
    const char *v3_user;      /* NAME:AUTH:AUTHKEY:PRIV:PRIVKEY as given, or NULL for v2c */
    struct stress_v3_user v3; /* v3_user split; valid when v3_user is set */
    const char *oids;         /* --oids text: comma-separated dotted OIDs (checked), or NULL */
    const char *profile;      /* profile name or file whose collection is walked when oids is NULL */
    uint32_t max_repetitions; /* GETBULK max-repetitions */
    uint32_t max_vars;        /* columns walked together in one GETBULK */
    uint32_t timeout_ms;      /* wait for a response before a retry, milliseconds */
    uint32_t retries;         /* retransmissions of a request before the collection fails */
    uint32_t rounds;          /* collections of every device (when duration_s is 0) */
    uint32_t duration_s;      /* keep collecting this long instead of rounds; 0: use rounds */
    /* notify (concurrency above: subscriptions being set up at once; duration_s: run this long once all
     * subscriptions are up, 0: no limit) */
    const char *stream;         /* create-subscription <stream> */
    const char *filter_xpath;   /* <filter type="xpath" select=...>, or NULL */
    const char *filter_subtree; /* file whose XML goes inside <filter type="subtree">, or NULL */
    const char *start_time;     /* <startTime> (RFC 5277 replay), or NULL */
    const char *stop_time;      /* <stopTime>, or NULL */
    uint64_t count;             /* stop when every device delivered this many; 0: no such limit */
    uint32_t idle_timeout_s;    /* stop when nothing arrived this long; 0: never */
    const char *seq_element;    /* local name of the per-device sequence number element, or NULL */
    /* push (concurrency, duration_s, stop_time; start_time: replay-start-time of a --stream subscription) */
    int push_datastore;          /* --datastore: enum push_datastore */
    double period_s;             /* --period: seconds, a whole number of centiseconds; 0: on-change */
    uint32_t period_cs;          /* the same in centiseconds, as the RPC carries it; 0: on-change */
    const char *anchor_time;     /* --anchor-time (RFC 3339), or NULL: the server's first update is slot 0 */
    int on_change;               /* 1: --dampening given: an on-change subscription */
    double dampening_s;          /* --dampening: seconds, a whole number of centiseconds */
    uint32_t dampening_cs;       /* the same in centiseconds */
    int sync_on_start;           /* --sync-on-start: on-change begins with a push-update */
    const char *excluded_change; /* --excluded-change: comma-separated change types, or NULL */
    const char *push_xpath;      /* --xpath: datastore-xpath-filter (or stream-xpath-filter), or NULL */
    const char *push_subtree;    /* --subtree: file of the datastore-subtree-filter's content, or NULL */
    const char *push_stream;     /* --stream NAME: a subscription to that event stream instead, or NULL */
    double change_rate; /* --change-rate: edits per second over the whole run (all devices), 0: none */
    const char *change_interface; /* --change-interface: the interface whose description the editor sets */
    const char *fleet_report;     /* --fleet-report: the fleet's --report file to reconcile with, or NULL */
    /* reconcile */
    const char *sent_path;          /* the simulator's --report file (the first --sent) */
    const char *received_path;      /* notify's --json file (NULL with report_path; the first --received) */
    const char *report_path;        /* --report: the simulator's report, sent_path then restconf's manifest */
    struct stress_files sent_files; /* every --sent, in order: their devices are joined */
    struct stress_files received_files; /* every --received */
    struct stress_files report_files;   /* every --report */
    double tolerance;                   /* allowed |sent - received| as a share of sent (0.005 for 0.5%) */
    int recv_format;          /* --format: enum recon_format (recon_push.h), 0: notify's JSON manifest */
    const char *recv_run_tag; /* --run-tag: keep only the collector's lines of this run, or NULL */
    int recv_ordering;        /* --ordering: count sequence inversions per source */
    /* controller-mount (device_count: nodes expected; username, password: HTTP basic auth; msg_timeout_s:
     * limit of one poll, 0 for the interval plus a margin) */
    const char *url;               /* RESTCONF base, "http://host:port/restconf" */
    const char *node_suffix;       /* only nodes whose node-id ends in it count ("": all) */
    const char *csv_path;          /* the curve as CSV, or NULL */
    double interval_s;             /* between polls, seconds */
    double run_timeout_s;          /* give up when not all are connected after this long, seconds */
    const char *events_url;        /* --events: the fleet's HTTP server, "http://host:port", or NULL */
    const char *events_token_file; /* --events-token-file: its bearer token's file, or NULL */
    /* record (community, v3_user, timeout_ms, retries, max_repetitions: of its SNMP walk) */
    const char *out_dir;   /* the folder written */
    int snmp_walk;         /* 1: --snmp or --v3-user given: walk the agent into snmp.snmprec */
    uint32_t snmp_port;    /* the agent's UDP port, 0 for 161 */
    int ncx_connect;       /* 1: send netconfd's tcp-direct <ncx-connect> message first */
    uint32_t ncx_ssh_port; /* its port attribute, 0 for --port */
    /* restconf (ip, port: the controller; edits, edit_content, async, threads: as OpenDaylight's; username,
     * password: --auth; run_timeout_s: --timeout given in minutes; json_path) */
    const char *destination;    /* path after host:port, "/" first; {DEVICE_PORT} filled once per stream */
    uint32_t throttle;          /* requests in flight in all, split evenly among the streams */
    int same_device;            /* 1: every stream edits the first port's device; 0: stream n port+n */
    uint32_t device_port_start; /* --device-port-range-start: the first device's port */
    int content_xml;            /* 1: --content-type xml (application/xml), 0: application/json */
    /* ceiling (tolerance: loss isolation's; json_path; recv_format, recv_run_tag: of --ordering's file) */
    const char *fleet_url;          /* --fleet: the fleet's --metrics server, "http://host:port" */
    const char *api_token_file;     /* --api-token-file: its bearer token's file, or NULL */
    int channel;                    /* --channel: enum ceil_channel (ceiling_fleet.h) */
    const char *group;              /* --group: the group driven, or NULL for every present device */
    const char *probe_arrived;      /* --arrived: point 2's probe, or NULL */
    const char *probe_persisted;    /* --persisted: point 3's probe (required) */
    const char *probe_queue;        /* --queue: the depth's probe, or NULL */
    struct stress_files dropped;    /* --dropped NAME=PROBE, in order (count <= CEILING_DROPPED_MAX) */
    const char *probe_service_time; /* --service-time: milliseconds per work unit, or NULL */
    const char *probe_batch_size;   /* --batch-size: messages per work unit, or NULL */
    const char *probe_workers;      /* --workers: concurrent workers, or NULL */
    int measure;                    /* --measure: enum ceiling_measure */
    double rate_from;               /* --from: the search's first per-device rate */
    double rate_to;                 /* --to: the highest per-device rate tried */
    double precision;               /* --precision: the search's end, as a share */
    double window_s;                /* --window: a cell's length, seconds */
    double sample_s;                /* --sample: between readings, seconds */
    double burst_rate;              /* --burst-rate: service rate's per-device burst, 0: 10 x --from */
    double burst_s;                 /* --burst: its length, seconds */
    double ceiling_rate;            /* --ceiling: loss isolation's known ceiling (per device), 0: none */
    double settle_s;                /* --settle: longest wait for the collector to drain between cells */
    double slope_share;             /* --slope-threshold: a slope above this share of offered is positive */
    double drift;                   /* --drift: a cell's observed per-device rate may be off its level by */
    double probe_timeout_s;         /* --probe-timeout: one probe read's limit, seconds */
    const char *ordering_path;      /* --ordering FILE: the collector's persisted output, or NULL */
    const char *collector_version;  /* --collector-version: a control in the manifest, or NULL */
    struct stress_files sut;        /* --sut KEY=VALUE: the system under test, described */
    /* report (out_dir: --out FILE, the HTML written); merge (json_path: -o or --json, the manifest written)
     */
    char **report_inputs; /* the manifests, argv's words after the options */
    int report_count;     /* how many */
};

enum stress_parse {
    STRESS_PARSE_RUN = 0, /* options valid */
    STRESS_PARSE_EXIT,    /* --help or --version printed */
    STRESS_PARSE_ERROR,   /* bad usage; message in err */
};

/** @brief Parse argv (argv[1] is the subcommand) into @p opts. */
enum stress_parse stress_options_parse(int argc, char **argv, struct stress_options *opts, char *err,
                                       size_t err_len);

/**
 * @brief Print one line for each OpenDaylight option that was accepted but does something else here
 * (--exi true, --debug true) on @p out.
 */
void stress_options_notes(const struct stress_options *o, FILE *out);

#endif
