/*
 * Command-line parsing: defaults, OpenDaylight-compatible names, and one
 * precise message per bad option (the caller exits with 2).
 */
#include "cli.h"
#include "agent.h"
#include "log.h"
#include "register.h"
#include "respond.h"
#include "stream.h"
#include "textarg.h"
#include "trap.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
    OPT_DEVICE_COUNT = 256,
    OPT_STARTING_PORT,
    OPT_IP,
    OPT_IP_PER_DEVICE,
    OPT_SSH,
    OPT_SCHEMAS_DIR,
    OPT_DEVICE_TYPE,
    OPT_INITIAL_CONFIG,
    OPT_THREADS,
    OPT_LOG_LEVEL,
    OPT_DEBUG,
    OPT_MAX_MESSAGE,
    OPT_HELLO_TIMEOUT,
    OPT_PROFILE,
    OPT_SNMP,
    OPT_SNMP_PORT,
    OPT_SNMP_COMMUNITY,
    OPT_SNMP_WRITE_COMMUNITY,
    OPT_SNMP_MAX_MESSAGE,
    OPT_SNMP_LATENCY,
    OPT_NETCONF_LATENCY,
    OPT_SNMP_DROP_RATE,
    OPT_SNMP_FAULT,
    OPT_SNMP_V3_USER,
    OPT_SNMP_RECORDING,
    OPT_EXPORT_SNMPREC,
    OPT_EXPORT_DEVICE,
    OPT_NOTIFICATION_FILE,
    OPT_NOTIFICATION_RATE,
    OPT_REPLAY_LOG,
    OPT_REPORT,
    OPT_FLAP_RATE,
    OPT_USERNAME,
    OPT_PASSWORD,
    OPT_AUTH,
    OPT_STATE_DIR,
    OPT_HOST_KEY,
    OPT_AUTHORIZED_KEYS,
    OPT_HOST_KEY_PER_DEVICE,
    OPT_TRAP_SINK,
    OPT_TRAP_INFORM,
    OPT_TRAP_COMMUNITY,
    OPT_SEED,
    OPT_CLOCK_FIXED,
    OPT_CONTROLLER_IP,
    OPT_CONTROLLER_PORT,
    OPT_CONTROLLER_USER,
    OPT_CONTROLLER_PASSWORD,
    OPT_CONFIGS_BATCH,
    OPT_CONFIG_ADDRESS,
    OPT_TIME_OUT,
    OPT_EMIT_INVENTORY,
    OPT_INVENTORY_FORMAT,
    OPT_RPC_CONFIG,
    OPT_IDENTITY_RULES,
    OPT_METRICS,
    OPT_METRICS_PER_DEVICE,
    OPT_STATUS_INTERVAL,
    OPT_FEATURES,
    OPT_SCHEMAS_STRICT,
    OPT_FLEET,
    OPT_EXI,
    OPT_MD_SAL,
    OPT_DISTRIBUTION_FOLDER,
    OPT_CONTROLLER_DESTINATION,
    OPT_CONNECTION_TIMEOUT,
    OPT_EDIT_CONTENT,
    OPT_ASYNC_REQUESTS,
    OPT_THREAD_AMOUNT,
    OPT_THROTTLE,
    OPT_PERMIT_NULL_REVISION,
    OPT_DEVICES_PER_PORT,
    OPT_HELP,
    OPT_VERSION,
};

static const struct option options[] = {
    {"device-count", required_argument, NULL, OPT_DEVICE_COUNT},
    {"devices-count", required_argument, NULL, OPT_DEVICE_COUNT},
    {"starting-port", required_argument, NULL, OPT_STARTING_PORT},
    {"ip", required_argument, NULL, OPT_IP},
    {"ip-per-device", optional_argument, NULL, OPT_IP_PER_DEVICE},
    {"ssh", required_argument, NULL, OPT_SSH},
    {"schemas-dir", required_argument, NULL, OPT_SCHEMAS_DIR},
    {"device-type", required_argument, NULL, OPT_DEVICE_TYPE},
    {"schemas-strict", no_argument, NULL, OPT_SCHEMAS_STRICT},
    {"features", required_argument, NULL, OPT_FEATURES},
    {"initial-config-xml-file", required_argument, NULL, OPT_INITIAL_CONFIG},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"thread-pool-size", required_argument, NULL, OPT_THREADS},
    {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
    {"debug", required_argument, NULL, OPT_DEBUG},
    {"max-message-size", required_argument, NULL, OPT_MAX_MESSAGE},
    {"hello-timeout", required_argument, NULL, OPT_HELLO_TIMEOUT},
    {"profile", required_argument, NULL, OPT_PROFILE},
    {"snmp", required_argument, NULL, OPT_SNMP},
    {"snmp-starting-port", required_argument, NULL, OPT_SNMP_PORT},
    {"snmp-community", required_argument, NULL, OPT_SNMP_COMMUNITY},
    {"snmp-write-community", required_argument, NULL, OPT_SNMP_WRITE_COMMUNITY},
    {"snmp-max-message-size", required_argument, NULL, OPT_SNMP_MAX_MESSAGE},
    {"snmp-latency", required_argument, NULL, OPT_SNMP_LATENCY},
    {"netconf-latency", required_argument, NULL, OPT_NETCONF_LATENCY},
    {"snmp-drop-rate", required_argument, NULL, OPT_SNMP_DROP_RATE},
    {"snmp-fault", required_argument, NULL, OPT_SNMP_FAULT},
    {"snmp-v3-user", required_argument, NULL, OPT_SNMP_V3_USER},
    {"snmp-recording", required_argument, NULL, OPT_SNMP_RECORDING},
    {"export-snmprec", required_argument, NULL, OPT_EXPORT_SNMPREC},
    {"export-device", required_argument, NULL, OPT_EXPORT_DEVICE},
    {"notification-file", required_argument, NULL, OPT_NOTIFICATION_FILE},
    {"notification-rate", required_argument, NULL, OPT_NOTIFICATION_RATE},
    {"replay-log", required_argument, NULL, OPT_REPLAY_LOG},
    {"report", required_argument, NULL, OPT_REPORT},
    {"flap-rate", required_argument, NULL, OPT_FLAP_RATE},
    {"username", required_argument, NULL, OPT_USERNAME},
    {"password", required_argument, NULL, OPT_PASSWORD},
    {"auth", required_argument, NULL, OPT_AUTH},
    {"state-dir", required_argument, NULL, OPT_STATE_DIR},
    {"host-key", required_argument, NULL, OPT_HOST_KEY},
    {"authorized-keys", required_argument, NULL, OPT_AUTHORIZED_KEYS},
    {"host-key-per-device", optional_argument, NULL, OPT_HOST_KEY_PER_DEVICE},
    {"trap-sink", required_argument, NULL, OPT_TRAP_SINK},
    {"trap-inform", required_argument, NULL, OPT_TRAP_INFORM},
    {"trap-community", required_argument, NULL, OPT_TRAP_COMMUNITY},
    {"seed", required_argument, NULL, OPT_SEED},
    {"clock-fixed", required_argument, NULL, OPT_CLOCK_FIXED},
    {"controller-ip", required_argument, NULL, OPT_CONTROLLER_IP},
    {"controller-port", required_argument, NULL, OPT_CONTROLLER_PORT},
    {"controller-auth-username", required_argument, NULL, OPT_CONTROLLER_USER},
    {"authUsername", required_argument, NULL, OPT_CONTROLLER_USER},
    {"controller-auth-password", required_argument, NULL, OPT_CONTROLLER_PASSWORD},
    {"authPassword", required_argument, NULL, OPT_CONTROLLER_PASSWORD},
    {"controller-destination", required_argument, NULL, OPT_CONTROLLER_DESTINATION},
    {"generate-configs-batch-size", required_argument, NULL, OPT_CONFIGS_BATCH},
    {"generate-config-address", required_argument, NULL, OPT_CONFIG_ADDRESS},
    {"time-out", required_argument, NULL, OPT_TIME_OUT},
    {"timeout", required_argument, NULL, OPT_TIME_OUT},
    {"generate-config-connection-timeout", required_argument, NULL, OPT_CONNECTION_TIMEOUT},
    {"exi", required_argument, NULL, OPT_EXI},
    {"md-sal", required_argument, NULL, OPT_MD_SAL},
    {"distribution-folder", required_argument, NULL, OPT_DISTRIBUTION_FOLDER},
    {"edit-content", required_argument, NULL, OPT_EDIT_CONTENT},
    {"async-requests", required_argument, NULL, OPT_ASYNC_REQUESTS},
    {"thread-amount", required_argument, NULL, OPT_THREAD_AMOUNT},
    {"throttle", required_argument, NULL, OPT_THROTTLE},
    {"permit-null-revision", required_argument, NULL, OPT_PERMIT_NULL_REVISION},
    {"devices-per-port", required_argument, NULL, OPT_DEVICES_PER_PORT},
    {"emit-inventory", required_argument, NULL, OPT_EMIT_INVENTORY},
    {"inventory-format", required_argument, NULL, OPT_INVENTORY_FORMAT},
    {"rpc-config", required_argument, NULL, OPT_RPC_CONFIG},
    {"identity-rules", required_argument, NULL, OPT_IDENTITY_RULES},
    {"metrics", required_argument, NULL, OPT_METRICS},
    {"metrics-per-device", optional_argument, NULL, OPT_METRICS_PER_DEVICE},
    {"status-interval", required_argument, NULL, OPT_STATUS_INTERVAL},
    {"fleet", required_argument, NULL, OPT_FLEET},
    {"help", no_argument, NULL, OPT_HELP},
    {"h", no_argument, NULL, OPT_HELP},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

static const char usage[] =
    "Usage: fleetsim [options]\n"
    "Simulate a fleet of network devices in one process: each a NETCONF server and an SNMP agent.\n"
    "\n"
    "  --device-count N             devices to simulate (default 1)\n"
    "  --starting-port P            first device's port; device i listens on P+i (default 17830)\n"
    "  --ip ADDR                    listening IPv4 address (default 127.0.0.1)\n"
    "  --ip-per-device[=true|false] device i listens on ADDR+i, all on port P\n"
    "  --ssh true|false             NETCONF over SSH (the netconf subsystem) or plain TCP (default true)\n"
    "  --username U, --password P   SSH login (default admin/admin)\n"
    "  --auth password|any          any: accept every user and password (default password)\n"
    "  --host-key FILE              SSH host key; default: ed25519 and RSA keys created once in the\n"
    "                               state folder and reused\n"
    "  --host-key-per-device        every device its own ed25519 host key, derived from a secret kept in\n"
    "                               the state folder (a restart keeps them)\n"
    "  --authorized-keys FILE       SSH public keys (OpenSSH authorized_keys) that log in as --username\n"
    "  --state-dir DIR              state folder (default $XDG_STATE_HOME/fleetsim or "
    "~/.local/state/fleetsim)\n"
    "  --schemas-dir DIR            load and advertise the YANG modules in DIR (a vendor's folder as\n"
    "                               shipped: submodules, revisions, deviations; bad modules skipped)\n"
    "  --schemas-strict             a module of --schemas-dir that does not load is an error (exit 2)\n"
    "  --device-type DIR            serve a recorded device (fleetsim-stress record's folder, see\n"
    "                               docs/RECORDED_TYPES.md): its hello, schemas, configuration and state\n"
    "  --features MODULE:F1,F2      only these features of MODULE (default: all); repeatable\n"
    "  --initial-config-xml-file F  running configuration every device starts with\n"
    "  --identity-rules FILE        rules.json: text of the type's data each device replaces with its\n"
    "                               own ({INDEX} {ADDR} {MAC} {SERIAL}); see docs/RECORDED_TYPES.md\n"
    "  --threads N                  worker loops (default: number of cores)\n"
    "  --log-level LEVEL            error, warn, info (default) or debug\n"
    "  --debug true|false           same as --log-level debug\n"
    "  --max-message-size BYTES     largest accepted client message (default 67108864)\n"
    "  --hello-timeout S            close a session whose hello (over SSH: handshake, login and hello)\n"
    "                               has not arrived within S seconds (default 60)\n"
    "  --profile NAME|FILE          device profile: minimal (default), crs-x, or a profile file\n"
    "  --snmp true|false            every device is also an SNMP agent (default true)\n"
    "  --snmp-starting-port P       device i's agent on UDP port P+i; with --ip-per-device all on P\n"
    "                               (default 16100)\n"
    "  --snmp-community C           read community (default public)\n"
    "  --snmp-write-community C     write community, also reads (default private)\n"
    "  --snmp-max-message-size B    largest response in bytes (default 1472)\n"
    "  --snmp-latency T[-T]         delay every answer, e.g. 50ms or 50-100ms (uniform per answer)\n"
    "  --netconf-latency T[-T]      delay every NETCONF reply the same way (replies keep their order)\n"
    "  --snmp-drop-rate R           leave a share R of requests unanswered (0..1)\n"
    "  --snmp-fault SHARE:KIND      a share of devices misbehaves: SHARE:timeout, SHARE:delay:5s,\n"
    "                               SHARE:error:genErr (repeatable)\n"
    "  --snmp-recording FILE        serve a recorded walk (.snmprec or snmpwalk -On output) for every\n"
    "                               OID the simulator does not compute itself\n"
    "  --export-snmprec FILE        write a device's SNMP view to FILE as .snmprec and exit\n"
    "  --export-device N            the device --export-snmprec writes (default 0)\n"
    "  --snmp-v3-user N:A:K:P:K     SNMPv3 user: name, auth (none, md5, sha, sha224, sha256, sha384,\n"
    "                               sha512) and password, priv (none, aes) and password (repeatable);\n"
    "                               names in any case, also as net-snmp writes them (SHA-256, AES)\n"
    "  --notification-file F        what devices stream once subscribed: OpenDaylight's format or ours\n"
    "                               (schemas/fleetsim-notifications.yang)\n"
    "  --notification-rate R        pace any notification file at R per device per second\n"
    "  --replay-log N               notifications a streaming device keeps for replay (default 16)\n"
    "  --report FILE                JSON counts per device and subscriber, at exit and on SIGUSR1\n"
    "  --flap-rate R                interface flaps per device per second (Poisson): oper status in both\n"
    "                               views, if-state-change to subscribers, linkDown/linkUp to trap sinks\n"
    "  --trap-sink HOST:PORT        where traps go (repeatable, numeric IPv4)\n"
    "  --trap-inform true|false     send informs (acknowledged, retried) instead of traps\n"
    "  --trap-community C           community of traps and informs (default public)\n"
    "  --seed N                     fleet seed: devices' counters, uptimes and draws (default 1)\n"
    "  --clock-fixed SECONDS        freeze the devices' clock at this Unix time (for tests)\n"
    "  --controller-ip ADDR         register every device with this RESTCONF controller once listening\n"
    "  --controller-port P          its RESTCONF port (default 8181)\n"
    "  --controller-auth-username U, --controller-auth-password P  its login (default admin/admin)\n"
    "  --generate-configs-batch-size N  devices per registration request (default 1, as OpenDaylight's)\n"
    "  --generate-config-address A  the address the controller is told to connect to (default: --ip;\n"
    "                               127.0.0.1 for 0.0.0.0); with --ip-per-device device i gets A+i\n"
    "  --time-out S                 bound on the whole registration, seconds; an unreachable controller\n"
    "                               is retried with backoff until then (default 20, as OpenDaylight's;\n"
    "                               0: no bound)\n"
    "  --emit-inventory FILE        write the fleet's inventory to FILE and exit (no network call)\n"
    "  --inventory-format F         odl-json (default), opennms-requisition, prometheus-sd or csv\n"
    "  --rpc-config FILE            custom RPC replies (OpenDaylight's <rpcs> format)\n"
    "  --metrics ADDR:PORT          serve Prometheus metrics over HTTP (ADDR defaults to 127.0.0.1)\n"
    "  --metrics-per-device[=true|false]  add per-device series (one per device and counter)\n"
    "  --status-interval S          a one-line status on stderr every S seconds, 0: none (default 10)\n"
    "  --fleet FILE                 several kinds of device: a JSON or XML file of groups, each its own\n"
    "                               count, addresses and device options (see README)\n"
    "OpenDaylight testtool's options, accepted as its scripts write them:\n"
    "  --exi true|false             fleetsim speaks no EXI: true warns, nothing is advertised\n"
    "  --md-sal true|false          fleetsim's datastore is always a real, validating one\n"
    "  --controller-destination IP:PORT  the older form of --controller-ip and --controller-port\n"
    "  --auth USER PASS             the older form of --controller-auth-username/-password\n"
    "  --authUsername U, --authPassword P  the same, as one release named them\n"
    "  --generate-config-connection-timeout MS  the hello timeout (as --hello-timeout, in ms)\n"
    "  --timeout S                  the older name of --time-out\n"
    "  --devices-per-port N         register and list N nodes per device (<port>-sim-device, then\n"
    "                               <port>-sim-device-1 ...): N mounts of one device, as OpenDaylight's\n"
    "  --distribution-folder DIR, --edit-content FILE, --async-requests B, --thread-amount N,\n"
    "  --throttle N, --permit-null-revision B  accepted; each says at start what fleetsim does instead\n"
    "  --help, --version\n"
    "Signals: SIGUSR1 writes the --report file, SIGUSR2 pauses or resumes every notification stream,\n"
    "SIGINT and SIGTERM stop (after writing the report).\n";

void
cli_defaults(struct fleet_config *cfg)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);

    memset(cfg, 0, sizeof *cfg);
    cfg->device_count = 1;
    cfg->starting_port = 17830;
    cfg->ip = 0x7f000001u;
    cfg->threads = cores > 0 ? (uint32_t)cores : 1;
    cfg->log_level = LOGL_INFO;
    cfg->max_msg_bytes = FLEET_DEFAULT_MAX_MSG_BYTES;
    cfg->hello_timeout_s = 60;
    cfg->controller_port = 8181;
    cfg->controller_username = "admin";
    cfg->controller_password = "admin";
    cfg->configs_batch_size = 1; /* OpenDaylight testtool's default */
    cfg->devices_per_port = 1;
    cfg->register_timeout_s = REGISTER_DEFAULT_TIMEOUT_S;
    cfg->inventory_format = "odl-json";
    cfg->status_interval_s = 10;
    cfg->profile = "minimal";
    cfg->snmp = 1;
    cfg->snmp_starting_port = 16100;
    cfg->snmp_community = "public";
    cfg->snmp_write_community = "private";
    cfg->snmp_max_msg_bytes = 1472;
    cfg->seed = 1;
    cfg->replay_log = STREAM_DEFAULT_REPLAY_ENTRIES;
    cfg->trap_community = "public";
    cfg->ssh = 1; /* as OpenDaylight's testtool: devices speak NETCONF over SSH unless --ssh false */
    cfg->username = "admin";
    cfg->password = "admin";
    cli_config_fix_pointers(cfg);
}

void
cli_config_fix_pointers(struct fleet_config *cfg)
{
    cfg->schema_opts.features = cfg->feature_pins;
}

/* The table entry of a long option, by name (exactly, no abbreviation) or NULL. */
static const struct option *
cli_option_named(const char *name)
{
    const struct option *o;

    for (o = options; o->name; o++) {
        if (!strcmp(o->name, name)) {
            return o;
        }
    }
    return NULL;
}

/* The table entry of an option code (aliases share their code and kind of value). */
static const struct option *
cli_option_coded(int code)
{
    const struct option *o;

    for (o = options; o->name; o++) {
        if (o->val == code) {
            return o;
        }
    }
    return NULL;
}

/*
 * Apply one option to cfg: the command line and fleet files go through here, so both check a value
 * the same way and say the same thing about a bad one. value is kept (not copied) by the options that
 * take text; NULL is a flag given without value.
 */
static enum fleet_err
cli_apply(int code, const char *value, struct fleet_config *cfg, char *err, size_t err_len)
{
    struct in_addr addr;
    uint32_t v;
    int flag;

    switch (code) {
    case OPT_DEVICE_COUNT:
        if (textarg_u32(value, 1, 1000000, &cfg->device_count)) {
            snprintf(err, err_len, "--device-count must be a number from 1 to 1000000, not \"%s\"", value);
            return FLEET_ERR_INVAL;
        }
        break;
    case OPT_STARTING_PORT:
        if (textarg_u32(value, 1, 65535, &cfg->starting_port)) {
            snprintf(err, err_len, "--starting-port must be a port from 1 to 65535, not \"%s\"", value);
            return FLEET_ERR_INVAL;
        }
        break;
    case OPT_IP:
        if (inet_pton(AF_INET, value, &addr) != 1) {
            snprintf(err, err_len, "--ip must be an IPv4 address, not \"%s\"", value);
            return FLEET_ERR_INVAL;
        }
        cfg->ip = ntohl(addr.s_addr);
        break;
    case OPT_IP_PER_DEVICE:
        if (textarg_bool(value, &cfg->ip_per_device)) {
            snprintf(err, err_len, "--ip-per-device takes true or false, not \"%s\"", value);
            return FLEET_ERR_INVAL;
        }
        break;
    case OPT_SSH:
        if (textarg_bool(value, &cfg->ssh)) {
            snprintf(err, err_len, "--ssh takes true or false, not \"%s\"", value);
            return FLEET_ERR_INVAL;
        }
        break;
    case OPT_SCHEMAS_DIR:
        cfg->schemas_dir = value;
        break;
    case OPT_DEVICE_TYPE:
        cfg->device_type_dir = value;
        break;
    case OPT_SCHEMAS_STRICT:
        /* A flag on the command line (value NULL: true); a fleet file may write true or false. */
        if (textarg_bool(value, &cfg->schema_opts.strict)) {
            snprintf(err, err_len, "--schemas-strict takes true or false, not \"%s\"", value);
            return FLEET_ERR_INVAL;
        }
        break;
    case OPT_FEATURES: {
        const char *colon = strchr(value, ':');
        if (!colon || colon == value) {
            snprintf(err, err_len,
                     "--features takes MODULE:FEATURE,FEATURE (or MODULE: for none), not \"%s\"", value);
            return FLEET_ERR_INVAL;
        }
        if (cfg->schema_opts.feature_count == FLEET_MAX_FEATURE_PINS) {
            snprintf(err, err_len, "at most %d --features options", FLEET_MAX_FEATURE_PINS);
            return FLEET_ERR_INVAL;
        }
        cfg->feature_pins[cfg->schema_opts.feature_count++] = value;
        break;
    }
    case OPT_INITIAL_CONFIG:
        cfg->initial_config_file = value;
        break;
    case OPT_THREADS:
        if (textarg_u32(value, 1, 1024, &cfg->threads)) {
            snprintf(err, err_len, "--threads must be a number from 1 to 1024, not \"%s\"", value);
            return FLEET_ERR_INVAL;
        }
        break;
    case OPT_LOG_LEVEL:
        if (log_level_parse(value, &cfg->log_level)) {
            snprintf(err, err_len, "--log-level must be error, warn, info or debug, not \"%s\"", value);
            return FLEET_ERR_INVAL;
        }
        break;
    case OPT_DEBUG:
        if (textarg_bool(value, &flag)) {
            snprintf(err, err_len, "--debug takes true or false, not \"%s\"", value);
            return FLEET_ERR_INVAL;
        }
        if (flag) {
            cfg->log_level = LOGL_DEBUG;
        }
        break;
    case OPT_MAX_MESSAGE:
        if (textarg_u32(value, 4096, UINT32_MAX, &v)) {
            snprintf(err, err_len, "--max-message-size must be a number of bytes from 4096, not \"%s\"",
                     value);
            return FLEET_ERR_INVAL;
        }
        cfg->max_msg_bytes = v;
        break;
    case OPT_HELLO_TIMEOUT:
        if (textarg_u32(value, 1, 86400, &cfg->hello_timeout_s)) {
            snprintf(err, err_len, "--hello-timeout must be from 1 to 86400 seconds, not \"%s\"", value);
            return FLEET_ERR_INVAL;
        }
        break;
    case OPT_PROFILE:
        cfg->profile = value;
        break;
    case OPT_SNMP:
        if (textarg_bool(value, &cfg->snmp)) {
            snprintf(err, err_len, "--snmp takes true or false, not \"%s\"", value);
            return FLEET_ERR_INVAL;
        }
        break;
    case OPT_SNMP_PORT:
        if (textarg_u32(value, 1, 65535, &cfg->snmp_starting_port)) {
            snprintf(err, err_len, "--snmp-starting-port must be a port from 1 to 65535, not \"%s\"", value);
            return FLEET_ERR_INVAL;
        }
        break;
    case OPT_SNMP_COMMUNITY:
        cfg->snmp_community = value;
        break;
    case OPT_SNMP_WRITE_COMMUNITY:
        cfg->snmp_write_community = value;
        break;
    case OPT_SNMP_MAX_MESSAGE:
        /* RFC 3417: every agent takes at least 484 bytes; a UDP datagram carries at most 65507. */
        if (textarg_u32(value, 484, 65507, &cfg->snmp_max_msg_bytes)) {
            snprintf(err, err_len, "--snmp-max-message-size must be from 484 to 65507 bytes, not \"%s\"",
                     value);
            return FLEET_ERR_INVAL;
        }
        break;
    case OPT_SNMP_LATENCY:
        if (agent_latency_parse(value, &cfg->snmp_latency_min_ms, &cfg->snmp_latency_max_ms)) {
            snprintf(err, err_len,
                     "--snmp-latency must be a duration or a range such as 50ms, 1s or 50-100ms, not \"%s\"",
                     value);
            return FLEET_ERR_INVAL;
        }
        break;
    case OPT_NETCONF_LATENCY:
        if (agent_latency_parse(value, &cfg->netconf_latency_min_ms, &cfg->netconf_latency_max_ms)) {
            snprintf(err, err_len,
                     "--netconf-latency must be a duration or a range such as 50ms, 1s or 50-100ms, not "
                     "\"%s\"",
                     value);
            return FLEET_ERR_INVAL;
        }
        break;
    case OPT_SNMP_DROP_RATE: {
        char *end;
        cfg->snmp_drop_rate = strtod(value, &end);
        if (end == value || *end || !(cfg->snmp_drop_rate >= 0 && cfg->snmp_drop_rate <= 1)) {
            snprintf(err, err_len, "--snmp-drop-rate must be a share from 0 to 1, not \"%s\"", value);
            return FLEET_ERR_INVAL;
        }
        break;
    }
    case OPT_SNMP_FAULT:
        if (cfg->snmp_fault_count == AGENT_MAX_FAULTS) {
            snprintf(err, err_len, "at most %d --snmp-fault options", AGENT_MAX_FAULTS);
            return FLEET_ERR_INVAL;
        }
        if (agent_fault_parse(value, &cfg->snmp_faults[cfg->snmp_fault_count], err, err_len)) {
            return FLEET_ERR_INVAL;
        }
        cfg->snmp_fault_count++;
        break;
    case OPT_SNMP_RECORDING:
        cfg->snmp_recording = value;
        break;
    case OPT_EXPORT_SNMPREC:
        cfg->export_snmprec = value;
        break;
    case OPT_EXPORT_DEVICE:
        if (textarg_u32(value, 0, 999999, &cfg->export_device)) {
            snprintf(err, err_len, "--export-device must be a device index, not \"%s\"", value);
            return FLEET_ERR_INVAL;
        }
        break;
    case OPT_SNMP_V3_USER:
        if (cfg->snmp_v3_user_count == RESPOND_MAX_V3_USERS) {
            snprintf(err, err_len, "at most %d --snmp-v3-user options", RESPOND_MAX_V3_USERS);
            return FLEET_ERR_INVAL;
        }
        if (respond_v3_user_parse(value, &cfg->snmp_v3_users[cfg->snmp_v3_user_count], err, err_len)) {
            return FLEET_ERR_INVAL;
        }
        cfg->snmp_v3_user_count++;
        break;
    case OPT_NOTIFICATION_FILE:
        cfg->notification_file = value;
        break;
    case OPT_NOTIFICATION_RATE: {
        char *end;
        cfg->notification_rate = strtod(value, &end);
        if (end == value || *end || !(cfg->notification_rate >= 0.01 && cfg->notification_rate <= 1e6)) {
            snprintf(err, err_len, "--notification-rate must be from 0.01 to 1000000 per second, not \"%s\"",
                     value);
            return FLEET_ERR_INVAL;
        }
        break;
    }
    case OPT_REPLAY_LOG:
        if (textarg_u32(value, 0, 100000, &cfg->replay_log)) {
            snprintf(err, err_len,
                     "--replay-log must be a number of notifications from 0 to 100000, not \"%s\"", value);
            return FLEET_ERR_INVAL;
        }
        break;
    case OPT_REPORT:
        cfg->report_path = value;
        break;
    case OPT_CONTROLLER_IP:
        cfg->controller_ip = value;
        break;
    case OPT_CONTROLLER_PORT:
        if (textarg_u32(value, 1, 65535, &cfg->controller_port)) {
            snprintf(err, err_len, "--controller-port must be a port from 1 to 65535, not \"%s\"", value);
            return FLEET_ERR_INVAL;
        }
        break;
    case OPT_CONTROLLER_USER:
        cfg->controller_username = value;
        break;
    case OPT_CONTROLLER_PASSWORD:
        cfg->controller_password = value;
        break;
    case OPT_CONFIGS_BATCH:
        if (textarg_u32(value, 1, 1000000, &cfg->configs_batch_size)) {
            snprintf(err, err_len, "--generate-configs-batch-size must be from 1 to 1000000, not \"%s\"",
                     value);
            return FLEET_ERR_INVAL;
        }
        break;
    case OPT_CONFIG_ADDRESS:
        cfg->config_address = value;
        break;
    case OPT_TIME_OUT:
        if (textarg_u32(value, 0, 604800, &cfg->register_timeout_s)) {
            snprintf(err, err_len, "--time-out must be from 0 (no bound) to 604800 seconds, not \"%s\"",
                     value);
            return FLEET_ERR_INVAL;
        }
        break;
    case OPT_EMIT_INVENTORY:
        cfg->emit_inventory = value;
        break;
    case OPT_INVENTORY_FORMAT:
        if (strcmp(value, "odl-json") && strcmp(value, "opennms-requisition") &&
            strcmp(value, "prometheus-sd") && strcmp(value, "csv")) {
            snprintf(err, err_len,
                     "--inventory-format must be odl-json, opennms-requisition, prometheus-sd or csv, not "
                     "\"%s\"",
                     value);
            return FLEET_ERR_INVAL;
        }
        cfg->inventory_format = value;
        break;
    case OPT_RPC_CONFIG:
        cfg->rpc_config = value;
        break;
    case OPT_IDENTITY_RULES:
        cfg->identity_rules_file = value;
        break;
    case OPT_METRICS:
        cfg->metrics_addr = value; /* checked when the server starts: ADDR:PORT or PORT */
        break;
    case OPT_METRICS_PER_DEVICE:
        if (textarg_bool(value, &cfg->metrics_per_device)) {
            snprintf(err, err_len, "--metrics-per-device takes true or false, not \"%s\"", value);
            return FLEET_ERR_INVAL;
        }
        break;
    case OPT_STATUS_INTERVAL:
        if (textarg_u32(value, 0, 86400, &cfg->status_interval_s)) {
            snprintf(err, err_len, "--status-interval must be from 0 to 86400 seconds, not \"%s\"", value);
            return FLEET_ERR_INVAL;
        }
        break;
    case OPT_USERNAME:
        cfg->username = value;
        break;
    case OPT_PASSWORD:
        cfg->password = value;
        break;
    case OPT_EXI:
        if (textarg_bool(value, &flag)) {
            snprintf(err, err_len, "--exi takes true or false, not \"%s\"", value);
            return FLEET_ERR_INVAL;
        }
        if (flag) {
            log_warn("--exi true: fleetsim speaks no EXI; devices advertise no EXI capability, so clients "
                     "stay with XML (start-exi is answered with operation-not-supported)");
        }
        break;
    case OPT_MD_SAL:
    case OPT_ASYNC_REQUESTS:
    case OPT_PERMIT_NULL_REVISION:
        if (textarg_bool(value, &flag)) {
            snprintf(err, err_len, "--%s takes true or false, not \"%s\"", cli_option_coded(code)->name,
                     value);
            return FLEET_ERR_INVAL;
        }
        if (code == OPT_MD_SAL && flag) {
            log_info("--md-sal true: fleetsim's datastore is always a real one (edits validated against the "
                     "schemas, kept per device); nothing to switch");
        } else if (code == OPT_ASYNC_REQUESTS) {
            log_info("--async-requests: fleetsim registers devices from one event loop, every batch "
                     "request in flight at once");
        } else if (code == OPT_PERMIT_NULL_REVISION && !flag) {
            log_info("--permit-null-revision false: fleetsim loads modules without a revision all the same");
        }
        break;
    case OPT_DISTRIBUTION_FOLDER:
        log_info("--distribution-folder %s: OpenDaylight's scale-util starts a controller from it; fleetsim "
                 "starts none (point --controller-ip at a running one)",
                 value);
        break;
    case OPT_EDIT_CONTENT:
        log_info("--edit-content %s: fleetsim registers each device with the controller's topology in its "
                 "own payload (see --inventory-format odl-json); the file is not read",
                 value);
        break;
    case OPT_THREAD_AMOUNT:
    case OPT_THROTTLE:
        if (textarg_u32(value, 1, 1000000, &v)) {
            snprintf(err, err_len, "--%s must be a number from 1 to 1000000, not \"%s\"",
                     cli_option_coded(code)->name, value);
            return FLEET_ERR_INVAL;
        }
        log_info("--%s %u: fleetsim registers devices from one event loop; use "
                 "--generate-configs-batch-size for devices per request",
                 cli_option_coded(code)->name, (unsigned)v);
        break;
    case OPT_DEVICES_PER_PORT:
        if (textarg_u32(value, 1, 1000, &cfg->devices_per_port)) {
            snprintf(err, err_len, "--devices-per-port must be from 1 to 1000, not \"%s\"", value);
            return FLEET_ERR_INVAL;
        }
        break;
    case OPT_CONNECTION_TIMEOUT:
        if (textarg_u32(value, 1, 86400000, &v)) {
            snprintf(err, err_len,
                     "--generate-config-connection-timeout must be from 1 to 86400000 ms, not \"%s\"", value);
            return FLEET_ERR_INVAL;
        }
        cfg->hello_timeout_s = (v + 999) / 1000;
        break;
    case OPT_CONTROLLER_DESTINATION: {
        static char ip[INET6_ADDRSTRLEN];
        const char *colon = strrchr(value, ':');
        if (!colon || colon == value || (size_t)(colon - value) >= sizeof ip ||
            textarg_u32(colon + 1, 1, 65535, &cfg->controller_port)) {
            snprintf(err, err_len, "--controller-destination must be IP:PORT, not \"%s\"", value);
            return FLEET_ERR_INVAL;
        }
        memcpy(ip, value, (size_t)(colon - value));
        ip[colon - value] = '\0';
        cfg->controller_ip = ip;
        break;
    }
    case OPT_AUTH:
        if (strcmp(value, "any") && strcmp(value, "password")) {
            snprintf(err, err_len, "--auth takes password or any, not \"%s\"", value);
            return FLEET_ERR_INVAL;
        }
        cfg->ssh_auth_any = !strcmp(value, "any");
        break;
    case OPT_STATE_DIR:
        cfg->state_dir = value;
        break;
    case OPT_HOST_KEY:
        cfg->host_key = value;
        break;
    case OPT_AUTHORIZED_KEYS:
        cfg->authorized_keys = value;
        break;
    case OPT_HOST_KEY_PER_DEVICE:
        if (textarg_bool(value, &cfg->host_key_per_device)) {
            snprintf(err, err_len, "--host-key-per-device takes true or false, not \"%s\"", value);
            return FLEET_ERR_INVAL;
        }
        break;
    case OPT_FLAP_RATE: {
        char *end;
        cfg->flap_rate = strtod(value, &end);
        if (end == value || *end || !(cfg->flap_rate >= 0 && cfg->flap_rate <= 1e5)) {
            snprintf(err, err_len, "--flap-rate must be from 0 to 100000 per device per second, not \"%s\"",
                     value);
            return FLEET_ERR_INVAL;
        }
        break;
    }
    case OPT_TRAP_SINK:
        if (cfg->trap_sink_count == 8) {
            snprintf(err, err_len, "at most 8 --trap-sink options");
            return FLEET_ERR_INVAL;
        }
        if (trap_sink_parse(value, &cfg->trap_sinks[cfg->trap_sink_count], err, err_len)) {
            return FLEET_ERR_INVAL;
        }
        cfg->trap_sink_count++;
        break;
    case OPT_TRAP_INFORM:
        if (textarg_bool(value, &cfg->trap_inform)) {
            snprintf(err, err_len, "--trap-inform takes true or false, not \"%s\"", value);
            return FLEET_ERR_INVAL;
        }
        break;
    case OPT_TRAP_COMMUNITY:
        cfg->trap_community = value;
        break;
    case OPT_SEED:
        if (textarg_u64(value, 0, UINT64_MAX, &cfg->seed)) {
            snprintf(err, err_len, "--seed must be a number, not \"%s\"", value);
            return FLEET_ERR_INVAL;
        }
        break;
    case OPT_CLOCK_FIXED: {
        uint64_t s;
        if (textarg_u64(value, 1, 1ull << 40, &s)) {
            snprintf(err, err_len, "--clock-fixed must be a Unix time in seconds, not \"%s\"", value);
            return FLEET_ERR_INVAL;
        }
        cfg->clock_fixed_ms = s * 1000;
        break;
    }
    case OPT_FLEET:
        cfg->fleet_file = value;
        break;
    default:
        snprintf(err, err_len, "option code %d cannot be applied", code);
        return FLEET_ERR_INVAL;
    }
    return FLEET_OK;
}

int
cli_option_known(const char *name)
{
    return cli_option_named(name) != NULL;
}

enum fleet_err
cli_apply_named(const char *name, const char *value, struct fleet_config *cfg, char *err, size_t err_len)
{
    const struct option *o = cli_option_named(name);

    if (!o) {
        snprintf(err, err_len, "unknown option \"--%s\" (see --help)", name);
        return FLEET_ERR_NOTFOUND;
    }
    if (o->val == OPT_HELP || o->val == OPT_VERSION) {
        snprintf(err, err_len, "--%s only makes sense on the command line", name);
        return FLEET_ERR_INVAL;
    }
    if (!value && o->has_arg == required_argument) {
        snprintf(err, err_len, "option --%s needs a value", name);
        return FLEET_ERR_INVAL;
    }
    return cli_apply(o->val, value, cfg, err, err_len);
}

enum fleet_err
cli_clear_named(const char *name, struct fleet_config *cfg)
{
    const struct option *o = cli_option_named(name);

    if (!o) {
        return FLEET_ERR_NOTFOUND;
    }
    switch (o->val) {
    case OPT_FEATURES:
        cfg->schema_opts.feature_count = 0;
        break;
    case OPT_SNMP_FAULT:
        cfg->snmp_fault_count = 0;
        break;
    case OPT_SNMP_V3_USER:
        cfg->snmp_v3_user_count = 0;
        break;
    case OPT_TRAP_SINK:
        cfg->trap_sink_count = 0;
        break;
    default:
        return FLEET_ERR_INVAL;
    }
    return FLEET_OK;
}

enum cli_result
cli_parse(int argc, char **argv, struct fleet_config *cfg, char *err, size_t err_len)
{
    const struct option *o;
    const char *value;
    int opt;

    cli_defaults(cfg);
    opterr = 0;
    optind = 1;
    /* getopt_long_only: "-ip" is read as "--ip", as users of single-dash tools type it, and an unknown
     * word is reported whole (getopt_long would split "-ip" into the short options i and p). */
    while ((opt = getopt_long_only(argc, argv, ":", options, NULL)) != -1) {
        switch (opt) {
        case OPT_HELP:
            fputs(usage, stdout);
            return CLI_EXIT_OK;
        case OPT_VERSION:
            printf("fleetsim %s\n", FLEETSIM_VERSION);
            return CLI_EXIT_OK;
        case ':':
            snprintf(err, err_len, "option %s needs a value", argv[optind - 1]);
            return CLI_ERROR;
        case '?':
            snprintf(err, err_len, "unknown option \"%s\" (see --help)", argv[optind - 1]);
            return CLI_ERROR;
        default:
            value = optarg;
            if ((o = cli_option_coded(opt)) && o->has_arg == optional_argument) {
                value = textarg_flag_value(optarg, argc, argv, &optind);
            }
            if (opt == OPT_AUTH && strcmp(value, "any") && strcmp(value, "password") && optind < argc &&
                argv[optind][0] != '-') {
                /* OpenDaylight's older --auth USER PASS: the controller's login */
                cfg->controller_username = value;
                cfg->controller_password = argv[optind++];
                break;
            }
            if (cli_apply(opt, value, cfg, err, err_len)) {
                return CLI_ERROR;
            }
            break;
        }
    }
    if (optind < argc) {
        snprintf(err, err_len, "unexpected argument \"%s\" (see --help)", argv[optind]);
        return CLI_ERROR;
    }
    return CLI_RUN;
}
