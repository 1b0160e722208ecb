/*
 * Option parsing for fleetsim-stress. Defaults follow OpenDaylight's stress
 * client except the port, which matches fleetsim's first device (its NETCONF
 * port, or its SNMP port for "snmp").
 */
#include "options.h"
#include "ber.h"
#include "textarg.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum {
    OPT_IP = 256,
    OPT_PORT,
    OPT_DEVICE_COUNT,
    OPT_IP_PER_DEVICE,
    OPT_SSH,
    OPT_USERNAME,
    OPT_PASSWORD,
    OPT_SSH_KEY,
    OPT_MSG_TIMEOUT,
    OPT_LEGACY_FRAMING,
    OPT_JSON,
    OPT_PREAMBLE,
    OPT_TCP_HEADER,
    OPT_EXI,
    OPT_DEBUG,
    OPT_EDITS,
    OPT_EDIT_CONTENT,
    OPT_BATCH,
    OPT_CANDIDATE,
    OPT_ASYNC,
    OPT_THREADS,
    OPT_PIPELINE,
    OPT_CONCURRENCY,
    OPT_ON_MOUNT,
    OPT_HOLD,
    OPT_COMMUNITY,
    OPT_V3_USER,
    OPT_OIDS,
    OPT_PROFILE,
    OPT_MAX_REPETITIONS,
    OPT_MAX_VARS,
    OPT_TIMEOUT,
    OPT_RETRIES,
    OPT_ROUNDS,
    OPT_DURATION,
    OPT_STREAM,
    OPT_FILTER_XPATH,
    OPT_FILTER_SUBTREE,
    OPT_START_TIME,
    OPT_STOP_TIME,
    OPT_COUNT,
    OPT_IDLE_TIMEOUT,
    OPT_SEQ_ELEMENT,
    OPT_SENT,
    OPT_RECEIVED,
    OPT_TOLERANCE,
    OPT_URL,
    OPT_INTERVAL,
    OPT_CSV,
    OPT_NODE_SUFFIX,
    OPT_OUT,
    OPT_SNMP,
    OPT_SNMP_PORT,
    OPT_NCX_CONNECT,
    OPT_REPORT,
    OPT_DESTINATION,
    OPT_THROTTLE,
    OPT_SAME_DEVICE,
    OPT_DEVICE_PORT_START,
    OPT_AUTH,
    OPT_CONTENT_TYPE,
    OPT_HELP,
};

static const struct option options[] = {
    {"ip", required_argument, NULL, OPT_IP},
    {"port", required_argument, NULL, OPT_PORT},
    {"device-count", required_argument, NULL, OPT_DEVICE_COUNT},
    {"ip-per-device", optional_argument, NULL, OPT_IP_PER_DEVICE},
    {"ssh", required_argument, NULL, OPT_SSH},
    {"username", required_argument, NULL, OPT_USERNAME},
    {"password", required_argument, NULL, OPT_PASSWORD},
    {"ssh-key", required_argument, NULL, OPT_SSH_KEY},
    {"msg-timeout", required_argument, NULL, OPT_MSG_TIMEOUT},
    {"legacy-framing", optional_argument, NULL, OPT_LEGACY_FRAMING},
    {"json", required_argument, NULL, OPT_JSON},
    {"tcp-preamble", required_argument, NULL, OPT_PREAMBLE},
    {"tcp-header", required_argument, NULL, OPT_TCP_HEADER},
    {"exi", required_argument, NULL, OPT_EXI},
    {"debug", required_argument, NULL, OPT_DEBUG},
    {"edits", required_argument, NULL, OPT_EDITS},
    {"edit-content", required_argument, NULL, OPT_EDIT_CONTENT},
    {"edit-batch-size", required_argument, NULL, OPT_BATCH},
    {"candidate-datastore", required_argument, NULL, OPT_CANDIDATE},
    {"async-requests", required_argument, NULL, OPT_ASYNC},
    {"async", required_argument, NULL, OPT_ASYNC}, /* what OpenDaylight's parser takes as an abbreviation */
    {"thread-amount", required_argument, NULL, OPT_THREADS},
    {"pipeline", required_argument, NULL, OPT_PIPELINE},
    {"concurrent-message-limit", required_argument, NULL, OPT_PIPELINE}, /* OpenDaylight's name */
    {"concurrency", required_argument, NULL, OPT_CONCURRENCY},
    {"on-mount", required_argument, NULL, OPT_ON_MOUNT},
    {"hold", required_argument, NULL, OPT_HOLD},
    {"community", required_argument, NULL, OPT_COMMUNITY},
    {"v3-user", required_argument, NULL, OPT_V3_USER},
    {"oids", required_argument, NULL, OPT_OIDS},
    {"profile", required_argument, NULL, OPT_PROFILE},
    {"max-repetitions", required_argument, NULL, OPT_MAX_REPETITIONS},
    {"max-vars-per-pdu", required_argument, NULL, OPT_MAX_VARS},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"retries", required_argument, NULL, OPT_RETRIES},
    {"rounds", required_argument, NULL, OPT_ROUNDS},
    {"duration", required_argument, NULL, OPT_DURATION},
    {"stream", required_argument, NULL, OPT_STREAM},
    {"filter-xpath", required_argument, NULL, OPT_FILTER_XPATH},
    {"filter-subtree", required_argument, NULL, OPT_FILTER_SUBTREE},
    {"start-time", required_argument, NULL, OPT_START_TIME},
    {"stop-time", required_argument, NULL, OPT_STOP_TIME},
    {"count", required_argument, NULL, OPT_COUNT},
    {"idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT},
    {"seq-element", required_argument, NULL, OPT_SEQ_ELEMENT},
    {"sent", required_argument, NULL, OPT_SENT},
    {"received", required_argument, NULL, OPT_RECEIVED},
    {"tolerance", required_argument, NULL, OPT_TOLERANCE},
    {"url", required_argument, NULL, OPT_URL},
    {"interval", required_argument, NULL, OPT_INTERVAL},
    {"csv", required_argument, NULL, OPT_CSV},
    {"node-suffix", required_argument, NULL, OPT_NODE_SUFFIX},
    {"out", required_argument, NULL, OPT_OUT},
    {"snmp", required_argument, NULL, OPT_SNMP},
    {"snmp-port", required_argument, NULL, OPT_SNMP_PORT},
    {"ncx-connect", optional_argument, NULL, OPT_NCX_CONNECT},
    {"report", required_argument, NULL, OPT_REPORT},
    {"destination", required_argument, NULL, OPT_DESTINATION},
    {"throttle", required_argument, NULL, OPT_THROTTLE},
    {"same-device", required_argument, NULL, OPT_SAME_DEVICE},
    {"device-port-range-start", required_argument, NULL, OPT_DEVICE_PORT_START},
    {"auth", required_argument, NULL, OPT_AUTH}, /* two words: USER PASS */
    {"content-type", required_argument, NULL, OPT_CONTENT_TYPE},
    {"help", no_argument, NULL, OPT_HELP},
    {"h", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

static const char usage[] =
    "Usage: fleetsim-stress edit|mount|snmp|notify [options]\n"
    "       fleetsim-stress reconcile --sent REPORT --received JSON [--tolerance T]\n"
    "       fleetsim-stress reconcile --sent RESTCONF_JSON --report REPORT [--tolerance T]\n"
    "       fleetsim-stress restconf [--ip ADDR --port P] [options]\n"
    "       fleetsim-stress controller-mount --url BASE --device-count D [options]\n"
    "       fleetsim-stress record --out DIR [--ip ADDR --port P] [options]\n"
    "\n"
    "Common options:\n"
    "  --ip ADDR                  server address (default 127.0.0.1)\n"
    "  --port P                   server port (default 17830; snmp: agent port, default 16100)\n"
    "  --device-count D           servers on ports P..P+D-1 (default 1)\n"
    "  --ip-per-device            servers on addresses ADDR..ADDR+D-1, all on port P\n"
    "  --msg-timeout S            seconds to wait for an answer (default 60)\n"
    "  --legacy-framing           offer only base:1.0 (end-of-message framing)\n"
    "  --json FILE                write a manifest: parameters, server hello, results\n"
    "  --tcp-preamble FILE        bytes to send before the hello (e.g. netconfd's tcp-direct connect "
    "message)\n"
    "  --tcp-header TEXT          a line sent before the hello on plain TCP (OpenDaylight's thin-client\n"
    "                             header): TEXT without its double quotes, trimmed, and a newline\n"
    "  --exi true|false           accepted for OpenDaylight's scripts: no EXI here, true warns and runs\n"
    "                             plain XML (default false)\n"
    "  --debug true|false         accepted for OpenDaylight's scripts: there is no debug log, true says\n"
    "                             so once; the report and --json FILE hold the details (default false)\n"
    "  --ssh true|false           NETCONF over SSH or plain TCP for edit, mount and notify (default:\n"
    "                             detected per connection: a server sending \"SSH-2.0-...\" first gets\n"
    "                             SSH, one sending its hello gets TCP, one silent for 1 s gets TCP and so\n"
    "                             do the later ones); given, a server speaking the other fails with\n"
    "                             wrong-transport; the server's host key is NOT verified (a test tool)\n"
    "  --username U, --password P credentials for SSH (default admin/admin)\n"
    "  --ssh-key FILE             SSH private key (unencrypted), tried before the password\n"
    "\n"
    "edit: edit-config throughput (OpenDaylight stress-client options)\n"
    "  --edits N                  edit-config requests in all (default 50000)\n"
    "  --edit-content FILE        XML placed inside <config>; placeholders {PHYS_ADDR} {MSG_ID} {INDEX}\n"
    "                             {SESSION} {DEVICE} (default: an ietf-interfaces entry per edit)\n"
    "  --edit-batch-size B        with candidate: commit after every B edits (default: all in one batch)\n"
    "  --candidate-datastore B    true: edit candidate and commit; false: edit running (default true)\n"
    "  --async-requests B, --async B  true: pipeline requests (default false)\n"
    "  --thread-amount T          sessions; edits split evenly, the last takes the remainder (default 1)\n"
    "  --pipeline W, --concurrent-message-limit W  requests in flight per session with async requests\n"
    "                             (default 64, 0: all)\n"
    "\n"
    "mount: emulate a controller mounting a fleet\n"
    "  --concurrency C            sessions being set up at once (default 100)\n"
    "  --on-mount none|get-schema|get-config  what a mount does after the hello (default none)\n"
    "  --hold S                   keep every session open S seconds afterwards (default 0)\n"
    "\n"
    "snmp: poll every device's SNMP agent like a collector (GETBULK walks, SNMPv2c or SNMPv3)\n"
    "  --concurrency C            collections at once (default 100)\n"
    "  --community S              community (default public)\n"
    "  --v3-user NAME:AUTH:AUTHKEY:PRIV:PRIVKEY  poll with SNMPv3 (USM) as this user instead of v2c;\n"
    "                             AUTH none|md5|sha|sha224|sha256|sha384|sha512, PRIV none|aes, in\n"
    "                             any case or as net-snmp writes them (SHA-256, AES-128; the\n"
    "                             security level follows); each device's engine is discovered once\n"
    "  --oids OID,OID,...         dotted OIDs of columns, tables, subtrees or scalars (x.0) to walk\n"
    "  --profile NAME|FILE        walk the collection the profile lists (default minimal; not with --oids)\n"
    "  --max-repetitions M        GETBULK max-repetitions (default 25)\n"
    "  --max-vars-per-pdu V       columns walked together in one GETBULK (default 10)\n"
    "  --timeout MS               wait for a response before retrying, ms (default 1500)\n"
    "  --retries N                retransmissions before a collection fails (default 2)\n"
    "  --rounds N                 collect every device N times (default 1)\n"
    "  --duration S               keep collecting for S seconds instead of --rounds\n"
    "\n"
    "notify: subscribe to every device (RFC 5277 create-subscription) and count notifications\n"
    "  --concurrency C            subscriptions being set up at once (default 100)\n"
    "  --stream NAME              stream to subscribe to (default NETCONF)\n"
    "  --filter-xpath XPATH       an xpath filter, or\n"
    "  --filter-subtree FILE      a subtree filter: the XML inside <filter type=\"subtree\">\n"
    "  --start-time T, --stop-time T  replay from T / end the subscription at T (RFC 3339)\n"
    "  --duration S               stop S seconds after every subscription is up\n"
    "  --count N                  stop when every device delivered N notifications\n"
    "  --idle-timeout S           stop when nothing arrived for S seconds (default 5, 0: never)\n"
    "  --seq-element NAME         element whose integer text numbers each device's notifications:\n"
    "                             gaps, duplicates and reordering are checked\n"
    "\n"
    "reconcile: join fleetsim's --report with notify's --json, device by device\n"
    "  --sent FILE                the simulator's report (with --report: restconf's --json manifest)\n"
    "  --received FILE            notify's manifest\n"
    "  --report FILE              the simulator's report: edits the controller accepted (restconf's\n"
    "                             manifest, --sent) against edit-configs each device received\n"
    "  --tolerance T              allowed |sent - received| as a share of sent: 0.5% or 0.005 (default 0)\n"
    "\n"
    "controller-mount: poll a RESTCONF controller's topology-netconf while it connects to a fleet\n"
    "  --url BASE                 RESTCONF base, e.g. http://127.0.0.1:8181/restconf (required)\n"
    "  --device-count D           nodes expected to connect (required)\n"
    "  --username U, --password P HTTP basic authentication (default admin/admin)\n"
    "  --node-suffix S            count only nodes whose node-id ends in S (default -sim-device; \"\": all)\n"
    "  --interval S               seconds between polls, fractions allowed (default 1)\n"
    "  --timeout S                fail when not all D are connected after S seconds (default 600)\n"
    "  --msg-timeout S            limit of one poll (default: the interval plus 10 s)\n"
    "  --csv FILE                 the curve: t_s,connected,connecting,failed,absent,http_status\n"
    "  --json FILE                write a manifest: parameters, the curve, results\n"
    "\n"
    "record: write one NETCONF server as a recorded device type folder (docs/RECORDED_TYPES.md)\n"
    "  --out DIR                  the folder to write (created; required)\n"
    "  --ssh, --username, --password, --ssh-key, --tcp-preamble, --msg-timeout  as above\n"
    "  --ncx-connect[=SSHPORT]    send yuma123 netconfd's tcp-direct connect message first (user\n"
    "                             --username, address --ip, port SSHPORT, default --port)\n"
    "  --snmp COMMUNITY           also walk the device's SNMP agent (v2c) into snmp.snmprec\n"
    "  --v3-user NAME:AUTH:AUTHKEY:PRIV:PRIVKEY  walk it with SNMPv3 instead\n"
    "  --snmp-port P              the agent's UDP port (default 161)\n"
    "  --timeout MS, --retries N, --max-repetitions M  of the SNMP walk (as for snmp)\n"
    "\n"
    "restconf: edits POSTed to a RESTCONF controller's mount points (OpenDaylight's REST perf client)\n"
    "  --ip ADDR, --port P        the controller (default 127.0.0.1, 8182)\n"
    "  --destination PATH         URL path; its first {DEVICE_PORT} is the stream's device port (default\n"
    "                             OpenDaylight's .../node={DEVICE_PORT}-sim-device/yang-ext:mount/...)\n"
    "  --edits N                  requests in all, split among the streams (default 50000)\n"
    "  --edit-content FILE        the body (default ./edit.txt, else a built-in ietf-interfaces entry);\n"
    "                             first {PEERID} stream, first {INTLEAF} request number (both only when\n"
    "                             {PEERID} is there), first {DEVICE_PORT} port, every {PHYS_ADDR} a MAC\n"
    "  --content-type json|xml    application/json (default, as OpenDaylight) or application/xml\n"
    "  --async-requests B         true: up to --throttle in flight; false: one per stream (default true)\n"
    "  --thread-amount T          streams, each its own connections (default 1)\n"
    "  --throttle N               requests in flight in all, N/T per stream (default 5000)\n"
    "  --same-device B            true: every stream edits the first device; false: stream n the device\n"
    "                             at port START+n (default true)\n"
    "  --device-port-range-start START  the first device's port (default 17830)\n"
    "  --auth USER PASS           HTTP basic authentication, sent with every request (default admin admin)\n"
    "  --timeout MIN              give up after MIN minutes (default 5)\n"
    "  --json FILE                write a manifest: parameters, statuses, devices, per-second counts\n";

/* Limits of controller-mount's times, seconds. */
#define OPTIONS_INTERVAL_MIN_S    0.01     /* polls at most 100 times a second */
#define OPTIONS_INTERVAL_MAX_S    3600.0   /* and at least once an hour */
#define OPTIONS_RUN_TIMEOUT_MAX_S 604800.0 /* a week */

/* Limits of the snmp options: a GETBULK request and its window of columns stay bounded. */
#define OPTIONS_MAX_REPETITIONS_MAX 10000 /* max-repetitions accepted */
#define OPTIONS_MAX_VARS_MAX        1000  /* columns per request accepted */
#define OPTIONS_OIDS_MAX            10000 /* OIDs in --oids */

#define BAD(...)                                                                                             \
    do {                                                                                                     \
        snprintf(err, err_len, __VA_ARGS__);                                                                 \
        return STRESS_PARSE_ERROR;                                                                           \
    } while (0)

/* NAME:AUTH:AUTHKEY:PRIV:PRIVKEY into @p u (pointing into @p text); @return NULL when well-formed, else what
 * is wrong. The last field takes the rest of the text, so only PRIVKEY may hold a colon. */
static const char *
parse_v3_user(const char *text, struct stress_v3_user *u)
{
    const char *field[5];
    size_t len[5];
    const char *p = text;

    memset(u, 0, sizeof *u);
    for (int i = 0; i < 5; i++) {
        field[i] = p;
        len[i] = i < 4 ? strcspn(p, ":") : strlen(p);
        if (i < 4 && p[len[i]] != ':') {
            return "it needs five fields NAME:AUTH:AUTHKEY:PRIV:PRIVKEY";
        }
        p += len[i] + 1;
    }
    if (!len[0]) {
        return "the user NAME is empty";
    }
    if (len[0] > SUSM_USER_NAME_MAX_BYTES) {
        return "the user NAME has more than 32 characters (RFC 3414)";
    }
    /* The names fleetsim's --snmp-v3-user takes too, net-snmp's spellings among them. */
    if (susm_auth_parse(field[1], len[1], &u->auth)) {
        return "AUTH must be " SUSM_AUTH_NAMES " (in any case)";
    }
    if (susm_priv_parse(field[3], len[3], &u->priv)) {
        return "PRIV must be " SUSM_PRIV_NAMES " (in any case)";
    }
    u->name = field[0];
    u->name_len = len[0];
    u->auth_name = susm_auth_name(u->auth);
    u->auth_password = field[2];
    u->auth_password_len = len[2];
    u->priv_password = field[4];
    u->priv_password_len = len[4];
    if (u->auth != SUSM_AUTH_NONE && u->auth_password_len < 8) {
        return "AUTHKEY must have at least 8 characters (RFC 3414)";
    }
    if (u->priv != SUSM_PRIV_NONE && u->priv_password_len < 8) {
        return "PRIVKEY must have at least 8 characters (RFC 3414)";
    }
    if (u->auth == SUSM_AUTH_NONE && u->priv != SUSM_PRIV_NONE) {
        return "privacy (PRIV aes) needs authentication (an AUTH other than none)";
    }
    return NULL;
}

/* Comma-separated dotted OIDs; @return 0 when every one parses, else -1 with the offending item in @p bad. */
static int
check_oids(const char *text, char *bad, size_t bad_len)
{
    struct ber_oid oid;
    char item[1024];
    const char *p = text;
    uint32_t n = 0;

    do {
        size_t len = strcspn(p, ",");
        snprintf(bad, bad_len, "%.*s", (int)len, p);
        if (len >= sizeof item || ++n > OPTIONS_OIDS_MAX) {
            return -1;
        }
        memcpy(item, p, len);
        item[len] = '\0';
        if (ber_oid_parse(item, &oid) != FLEET_OK || oid.len < 2) {
            return -1;
        }
        p += len;
    } while (*p++ == ',');
    return 0;
}

/* "0.5%" (a percentage) or "0.005" (a share) into a share from 0 to 1; @return 0 or -1. */
static int
parse_tolerance(const char *text, double *out)
{
    char *end = NULL;
    double v;

    errno = 0;
    v = strtod(text, &end);
    if (end == text || errno || !(v >= 0)) {
        return -1;
    }
    if (*end == '%' && !end[1]) {
        v /= 100.0;
    } else if (*end) {
        return -1;
    }
    if (v > 1.0) {
        return -1;
    }
    *out = v;
    return 0;
}

/* Seconds, fractions allowed ("0.2", "1.5"), within [min, max]; @return 0 or -1. */
static int
parse_seconds(const char *text, double min, double max, double *out)
{
    char *end = NULL;
    double v;

    errno = 0;
    v = strtod(text, &end);
    if (end == text || *end || errno || !(v >= min && v <= max)) {
        return -1;
    }
    *out = v;
    return 0;
}

enum stress_parse
stress_options_parse(int argc, char **argv, struct stress_options *o, char *err, size_t err_len)
{
    struct in_addr addr;
    const char *why;
    char bad[64];
    int port_given = 0;
    int rounds_given = 0;
    int count_given = 0;
    int msg_timeout_given = 0;
    int longindex = 0;
    const char *name; /* the option as given, for messages: "async" or "async-requests" */
    int opt;

    memset(o, 0, sizeof *o);
    o->ip = 0x7f000001u;
    o->port = 17830;
    o->device_count = 1;
    o->ssh = -1;
    o->msg_timeout_s = 60;
    o->username = "admin";
    o->password = "admin";
    o->edits = 50000;
    o->candidate = 1;
    o->threads = 1;
    o->pipeline = 64;
    o->concurrency = 100;
    o->community = "public";
    o->max_repetitions = 25;
    o->max_vars = 10;
    o->timeout_ms = 1500;
    o->retries = 2;
    o->rounds = 1;
    o->stream = "NETCONF";
    o->idle_timeout_s = 5;
    o->node_suffix = "-sim-device";
    o->interval_s = 1.0;
    o->run_timeout_s = 600.0;
    o->destination = STRESS_RESTCONF_DEFAULT_DESTINATION;
    o->throttle = 5000;
    o->same_device = 1;
    o->device_port_start = 17830;

    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(usage, argc < 2 ? stderr : stdout);
        if (argc < 2) {
            BAD("a subcommand is needed: edit, mount, snmp, notify, reconcile, controller-mount, record or "
                "restconf");
        }
        return STRESS_PARSE_EXIT;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("fleetsim-stress %s\n", FLEETSIM_VERSION);
        return STRESS_PARSE_EXIT;
    }
    if (!strcmp(argv[1], "edit")) {
        o->mode = STRESS_EDIT;
    } else if (!strcmp(argv[1], "mount")) {
        o->mode = STRESS_MOUNT;
    } else if (!strcmp(argv[1], "snmp")) {
        o->mode = STRESS_SNMP;
    } else if (!strcmp(argv[1], "notify")) {
        o->mode = STRESS_NOTIFY;
    } else if (!strcmp(argv[1], "reconcile")) {
        o->mode = STRESS_RECONCILE;
    } else if (!strcmp(argv[1], "controller-mount")) {
        o->mode = STRESS_CONTROLLER_MOUNT;
    } else if (!strcmp(argv[1], "record")) {
        o->mode = STRESS_RECORD;
    } else if (!strcmp(argv[1], "restconf")) {
        o->mode = STRESS_RESTCONF;
        o->async = 1;             /* OpenDaylight's REST perf client: async requests by default */
        o->run_timeout_s = 300.0; /* and 5 minutes */
    } else {
        BAD("unknown subcommand \"%s\": use edit, mount, snmp, notify, reconcile, controller-mount, record "
            "or "
            "restconf "
            "(see "
            "--help)",
            argv[1]);
    }

    opterr = 0;
    optind = 2;
    /* getopt_long_only: "-ip" is read as "--ip", and an unknown word is reported whole. */
    while ((opt = getopt_long_only(argc, argv, ":", options, &longindex)) != -1) {
        name = options[longindex].name;
        switch (opt) {
        case OPT_IP:
            if (inet_pton(AF_INET, optarg, &addr) != 1) {
                BAD("--ip must be an IPv4 address, not \"%s\"", optarg);
            }
            o->ip = ntohl(addr.s_addr);
            break;
        case OPT_PORT:
            if (textarg_u32(optarg, 1, 65535, &o->port)) {
                BAD("--port must be a port from 1 to 65535, not \"%s\"", optarg);
            }
            port_given = 1;
            break;
        case OPT_DEVICE_COUNT:
            if (textarg_u32(optarg, 1, 1000000, &o->device_count)) {
                BAD("--device-count must be a number from 1 to 1000000, not \"%s\"", optarg);
            }
            count_given = 1;
            break;
        case OPT_IP_PER_DEVICE:
            optarg = (char *)textarg_flag_value(optarg, argc, argv, &optind);
            if (textarg_bool(optarg, &o->ip_per_device)) {
                BAD("--ip-per-device takes true or false, not \"%s\"", optarg);
            }
            break;
        case OPT_SSH:
            if (textarg_bool(optarg, &o->ssh)) {
                BAD("--ssh takes true or false, not \"%s\"", optarg);
            }
            break;
        case OPT_USERNAME:
            o->username = optarg;
            break;
        case OPT_PASSWORD:
            o->password = optarg;
            break;
        case OPT_SSH_KEY:
            o->ssh_key = optarg;
            break;
        case OPT_MSG_TIMEOUT:
            if (textarg_u32(optarg, 1, 86400, &o->msg_timeout_s)) {
                BAD("--msg-timeout must be seconds from 1 to 86400, not \"%s\"", optarg);
            }
            msg_timeout_given = 1;
            break;
        case OPT_LEGACY_FRAMING:
            optarg = (char *)textarg_flag_value(optarg, argc, argv, &optind);
            if (textarg_bool(optarg, &o->legacy_framing)) {
                BAD("--legacy-framing takes true or false, not \"%s\"", optarg);
            }
            break;
        case OPT_JSON:
            o->json_path = optarg;
            break;
        case OPT_PREAMBLE:
            o->preamble_path = optarg;
            break;
        case OPT_TCP_HEADER:
            o->tcp_header = optarg;
            break;
        case OPT_EXI:
            if (textarg_bool(optarg, &o->exi)) {
                BAD("--exi takes true or false, not \"%s\"", optarg);
            }
            break;
        case OPT_DEBUG:
            if (textarg_bool(optarg, &o->debug)) {
                BAD("--debug takes true or false, not \"%s\"", optarg);
            }
            break;
        case OPT_EDITS:
            if (textarg_u64(optarg, 1, 1000000000ull, &o->edits)) {
                BAD("--edits must be a number from 1, not \"%s\"", optarg);
            }
            break;
        case OPT_EDIT_CONTENT:
            o->edit_content = optarg;
            break;
        case OPT_BATCH:
            /* OpenDaylight's -1 means one batch of everything, as does 0 here. */
            if (!strcmp(optarg, "-1")) {
                o->batch_size = 0;
            } else if (textarg_u64(optarg, 0, UINT64_MAX, &o->batch_size)) {
                BAD("--edit-batch-size must be a number, not \"%s\"", optarg);
            }
            break;
        case OPT_CANDIDATE:
            if (textarg_bool(optarg, &o->candidate)) {
                BAD("--candidate-datastore takes true or false, not \"%s\"", optarg);
            }
            break;
        case OPT_ASYNC:
            if (textarg_bool(optarg, &o->async)) {
                BAD("--%s takes true or false, not \"%s\"", name, optarg);
            }
            break;
        case OPT_THREADS:
            if (textarg_u32(optarg, 1, 100000, &o->threads)) {
                BAD("--thread-amount must be a number from 1 to 100000, not \"%s\"", optarg);
            }
            break;
        case OPT_PIPELINE:
            if (textarg_u32(optarg, 0, UINT32_MAX, &o->pipeline)) {
                BAD("--%s must be a number (0: no limit), not \"%s\"", name, optarg);
            }
            break;
        case OPT_CONCURRENCY:
            if (textarg_u32(optarg, 1, 1000000, &o->concurrency)) {
                BAD("--concurrency must be a number from 1, not \"%s\"", optarg);
            }
            break;
        case OPT_ON_MOUNT:
            if (!strcmp(optarg, "none")) {
                o->on_mount = MOUNT_NONE;
            } else if (!strcmp(optarg, "get-schema")) {
                o->on_mount = MOUNT_GET_SCHEMA;
            } else if (!strcmp(optarg, "get-config")) {
                o->on_mount = MOUNT_GET_CONFIG;
            } else {
                BAD("--on-mount takes none, get-schema or get-config, not \"%s\"", optarg);
            }
            break;
        case OPT_HOLD:
            if (textarg_u32(optarg, 0, 86400, &o->hold_s)) {
                BAD("--hold must be seconds from 0 to 86400, not \"%s\"", optarg);
            }
            break;
        case OPT_COMMUNITY:
            o->community = optarg;
            break;
        case OPT_V3_USER:
            if ((why = parse_v3_user(optarg, &o->v3))) {
                BAD("--v3-user NAME:AUTH:AUTHKEY:PRIV:PRIVKEY: %s", why);
            }
            o->v3_user = optarg;
            break;
        case OPT_OIDS:
            if (check_oids(optarg, bad, sizeof bad)) {
                BAD("--oids takes dotted OIDs (at most %d) separated by commas; \"%s\" is not one",
                    OPTIONS_OIDS_MAX, bad);
            }
            o->oids = optarg;
            break;
        case OPT_PROFILE:
            o->profile = optarg;
            break;
        case OPT_MAX_REPETITIONS:
            if (textarg_u32(optarg, 1, OPTIONS_MAX_REPETITIONS_MAX, &o->max_repetitions)) {
                BAD("--max-repetitions must be a number from 1 to %d, not \"%s\"",
                    OPTIONS_MAX_REPETITIONS_MAX, optarg);
            }
            break;
        case OPT_MAX_VARS:
            if (textarg_u32(optarg, 1, OPTIONS_MAX_VARS_MAX, &o->max_vars)) {
                BAD("--max-vars-per-pdu must be a number from 1 to %d, not \"%s\"", OPTIONS_MAX_VARS_MAX,
                    optarg);
            }
            break;
        case OPT_TIMEOUT:
            /* controller-mount waits seconds for a fleet; snmp waits milliseconds for a response; restconf
             * minutes for the whole run, as OpenDaylight's REST perf client. */
            if (o->mode == STRESS_RESTCONF) {
                uint32_t minutes;
                if (textarg_u32(optarg, 1, 10080, &minutes)) {
                    BAD("--timeout must be minutes from 1 to 10080, not \"%s\"", optarg);
                }
                o->run_timeout_s = minutes * 60.0;
                break;
            }
            if (o->mode == STRESS_CONTROLLER_MOUNT) {
                if (parse_seconds(optarg, OPTIONS_INTERVAL_MIN_S, OPTIONS_RUN_TIMEOUT_MAX_S,
                                  &o->run_timeout_s)) {
                    BAD("--timeout must be seconds from %g to %g, not \"%s\"", OPTIONS_INTERVAL_MIN_S,
                        OPTIONS_RUN_TIMEOUT_MAX_S, optarg);
                }
                break;
            }
            if (textarg_u32(optarg, 1, 3600000, &o->timeout_ms)) {
                BAD("--timeout must be milliseconds from 1 to 3600000, not \"%s\"", optarg);
            }
            break;
        case OPT_RETRIES:
            if (textarg_u32(optarg, 0, 100, &o->retries)) {
                BAD("--retries must be a number from 0 to 100, not \"%s\"", optarg);
            }
            break;
        case OPT_ROUNDS:
            if (textarg_u32(optarg, 1, 1000000000, &o->rounds)) {
                BAD("--rounds must be a number from 1, not \"%s\"", optarg);
            }
            rounds_given = 1;
            break;
        case OPT_DURATION:
            if (textarg_u32(optarg, 1, 31536000, &o->duration_s)) {
                BAD("--duration must be seconds from 1, not \"%s\"", optarg);
            }
            break;
        case OPT_STREAM:
            if (!*optarg) {
                BAD("--stream needs a stream name");
            }
            o->stream = optarg;
            break;
        case OPT_FILTER_XPATH:
            o->filter_xpath = optarg;
            break;
        case OPT_FILTER_SUBTREE:
            o->filter_subtree = optarg;
            break;
        case OPT_START_TIME:
            o->start_time = optarg;
            break;
        case OPT_STOP_TIME:
            o->stop_time = optarg;
            break;
        case OPT_COUNT:
            if (textarg_u64(optarg, 1, UINT64_MAX, &o->count)) {
                BAD("--count must be a number from 1, not \"%s\"", optarg);
            }
            break;
        case OPT_IDLE_TIMEOUT:
            if (textarg_u32(optarg, 0, 86400, &o->idle_timeout_s)) {
                BAD("--idle-timeout must be seconds from 0 to 86400, not \"%s\"", optarg);
            }
            break;
        case OPT_SEQ_ELEMENT:
            if (!*optarg || strpbrk(optarg, "<>/: \t\r\n\"'=")) {
                BAD("--seq-element takes the local name of an element, not \"%s\"", optarg);
            }
            o->seq_element = optarg;
            break;
        case OPT_SENT:
            o->sent_path = optarg;
            break;
        case OPT_RECEIVED:
            o->received_path = optarg;
            break;
        case OPT_TOLERANCE:
            if (parse_tolerance(optarg, &o->tolerance)) {
                BAD("--tolerance takes a share of sent like 0.5%% or 0.005 (at most 100%%), not \"%s\"",
                    optarg);
            }
            break;
        case OPT_URL:
            o->url = optarg;
            break;
        case OPT_INTERVAL:
            if (parse_seconds(optarg, OPTIONS_INTERVAL_MIN_S, OPTIONS_INTERVAL_MAX_S, &o->interval_s)) {
                BAD("--interval must be seconds from %g to %g, not \"%s\"", OPTIONS_INTERVAL_MIN_S,
                    OPTIONS_INTERVAL_MAX_S, optarg);
            }
            break;
        case OPT_CSV:
            o->csv_path = optarg;
            break;
        case OPT_NODE_SUFFIX:
            o->node_suffix = optarg;
            break;
        case OPT_OUT:
            if (!*optarg) {
                BAD("--out needs a folder");
            }
            o->out_dir = optarg;
            break;
        case OPT_SNMP:
            if (!*optarg) {
                BAD("--snmp needs a community");
            }
            o->community = optarg;
            o->snmp_walk = 1;
            break;
        case OPT_SNMP_PORT:
            if (textarg_u32(optarg, 1, 65535, &o->snmp_port)) {
                BAD("--snmp-port must be a port from 1 to 65535, not \"%s\"", optarg);
            }
            break;
        case OPT_NCX_CONNECT:
            optarg = (char *)textarg_flag_value(optarg, argc, argv, &optind);
            o->ncx_connect = !optarg || strcmp(optarg, "false");
            if (optarg && strcmp(optarg, "true") && strcmp(optarg, "false") &&
                textarg_u32(optarg, 1, 65535, &o->ncx_ssh_port)) {
                BAD("--ncx-connect takes the SSH port netconfd allows (1 to 65535), not \"%s\"", optarg);
            }
            break;
        case OPT_REPORT:
            o->report_path = optarg;
            break;
        case OPT_DESTINATION:
            if (optarg[0] != '/') {
                BAD("--destination must start with '/', not \"%s\"", optarg);
            }
            o->destination = optarg;
            break;
        case OPT_THROTTLE:
            if (textarg_u32(optarg, 1, 1000000, &o->throttle)) {
                BAD("--throttle must be a number from 1 to 1000000, not \"%s\"", optarg);
            }
            break;
        case OPT_SAME_DEVICE:
            if (textarg_bool(optarg, &o->same_device)) {
                BAD("--same-device takes true or false, not \"%s\"", optarg);
            }
            break;
        case OPT_DEVICE_PORT_START:
            if (textarg_u32(optarg, 1, 65535, &o->device_port_start)) {
                BAD("--device-port-range-start must be a port from 1 to 65535, not \"%s\"", optarg);
            }
            break;
        case OPT_AUTH:
            /* OpenDaylight's --auth takes two words, USER then PASS. */
            if (optind >= argc || !strncmp(argv[optind], "--", 2)) {
                BAD("--auth takes two words: USER PASS");
            }
            o->username = optarg;
            o->password = argv[optind++];
            break;
        case OPT_CONTENT_TYPE:
            if (!strcmp(optarg, "json")) {
                o->content_xml = 0;
            } else if (!strcmp(optarg, "xml")) {
                o->content_xml = 1;
            } else {
                BAD("--content-type takes json or xml, not \"%s\"", optarg);
            }
            break;
        case OPT_HELP:
            fputs(usage, stdout);
            return STRESS_PARSE_EXIT;
        case ':':
            BAD("option %s needs a value", argv[optind - 1]);
        default:
            BAD("unknown option \"%s\" (see --help)", argv[optind - 1]);
        }
    }
    if (optind < argc) {
        BAD("unexpected argument \"%s\" (see --help)", argv[optind]);
    }
    if (o->mode == STRESS_SNMP && !port_given) {
        o->port = STRESS_SNMP_DEFAULT_PORT;
    }
    if (o->mode == STRESS_RESTCONF) {
        if (!port_given) {
            o->port = STRESS_RESTCONF_DEFAULT_PORT;
        }
        if (o->threads > o->edits) {
            BAD("--thread-amount %u is more than --edits %llu: every stream needs a request",
                (unsigned)o->threads, (unsigned long long)o->edits);
        }
        if (!o->same_device && (uint64_t)o->device_port_start + o->threads - 1 > 65535) {
            BAD("--same-device false: %u streams from port %u need device ports past 65535",
                (unsigned)o->threads, (unsigned)o->device_port_start);
        }
        if (o->ssh > 0) {
            BAD("--ssh is for edit, mount and notify (NETCONF)");
        }
        return STRESS_PARSE_RUN; /* the NETCONF addressing checks below do not apply */
    }
    if (o->mode != STRESS_RECONCILE && o->report_path) {
        BAD("--report is for reconcile (with restconf's manifest as --sent)");
    }
    if (o->mode == STRESS_SNMP) {
        if (rounds_given && o->duration_s) {
            BAD("--rounds and --duration exclude each other");
        }
        if (o->oids && o->profile) {
            BAD("--oids and --profile exclude each other: --oids walks those OIDs instead of a profile's");
        }
        if (!o->oids && !o->profile) {
            o->profile = "minimal";
        }
    }
    if (o->mode == STRESS_NOTIFY) {
        if (o->filter_xpath && o->filter_subtree) {
            BAD("--filter-xpath and --filter-subtree exclude each other");
        }
        if (o->duration_s && o->count) {
            BAD("--duration and --count exclude each other");
        }
    }
    if (o->mode == STRESS_CONTROLLER_MOUNT) {
        if (!o->url || (strncmp(o->url, "http://", 7) && strncmp(o->url, "https://", 8))) {
            BAD("controller-mount needs --url http://HOST:PORT/restconf (or https://)");
        }
        if (!count_given) {
            BAD("controller-mount needs --device-count D, the nodes expected to connect");
        }
        if (o->ssh > 0) {
            BAD("--ssh is for edit, mount and notify (NETCONF)");
        }
        if (!msg_timeout_given) {
            o->msg_timeout_s = 0; /* the interval plus a margin */
        }
        return STRESS_PARSE_RUN; /* the NETCONF addressing checks below do not apply */
    }
    if (o->mode == STRESS_RECORD) {
        if (!o->out_dir) {
            BAD("record needs --out DIR, the folder to write");
        }
        if (o->device_count != 1 || o->ip_per_device) {
            BAD("record records one server: --device-count and --ip-per-device do not apply");
        }
        if (o->ncx_connect && (o->preamble_path || o->tcp_header)) {
            BAD("--ncx-connect and --%s exclude each other: both are the bytes sent first",
                o->preamble_path ? "tcp-preamble" : "tcp-header");
        }
        if (o->ncx_connect && o->ssh > 0) {
            BAD("--ncx-connect is for plain TCP; it cannot be combined with --ssh true");
        }
        if (o->ncx_connect && o->ssh < 0) {
            o->ssh = 0;
        }
        if (o->v3_user) {
            o->snmp_walk = 1;
        }
    } else if (o->out_dir || o->snmp_walk || o->snmp_port || o->ncx_connect) {
        BAD("--out, --snmp, --snmp-port and --ncx-connect are for record");
    }
    if (o->mode == STRESS_RECONCILE && o->report_path && o->received_path) {
        BAD("reconcile takes --received (notify's manifest) or --report (the simulator's report, with "
            "restconf's manifest as --sent), not both");
    }
    if (o->mode == STRESS_RECONCILE && (!o->sent_path || (!o->received_path && !o->report_path))) {
        BAD("reconcile needs --sent REPORT and --received JSON, or --sent RESTCONF_JSON and --report REPORT");
    }
    if (o->ssh > 0 && (o->mode == STRESS_SNMP || o->mode == STRESS_RECONCILE)) {
        BAD("--ssh is for edit, mount and notify (NETCONF)");
    }
    if (o->preamble_path && o->tcp_header) {
        BAD("--tcp-preamble and --tcp-header exclude each other: both are the bytes sent first");
    }
    if (o->ssh > 0 && (o->preamble_path || o->tcp_header)) {
        BAD("--%s is for plain TCP; it cannot be combined with --ssh true",
            o->preamble_path ? "tcp-preamble" : "tcp-header");
    }
    if (o->ssh_key && !o->ssh) {
        BAD("--ssh-key is for SSH; it cannot be combined with --ssh false");
    }
    if (o->ssh_key && (o->preamble_path || o->tcp_header)) {
        BAD("--ssh-key is for SSH and --%s for plain TCP; give one of them",
            o->preamble_path ? "tcp-preamble" : "tcp-header");
    }
    if (o->ssh < 0 && (o->preamble_path || o->tcp_header)) {
        o->ssh = 0; /* the preamble implies TCP (netconfd's tcp-direct answers only after it) */
    }
    if (o->mode == STRESS_EDIT && o->threads > o->edits) {
        BAD("--thread-amount %u is more than --edits %llu: every session needs an edit", (unsigned)o->threads,
            (unsigned long long)o->edits);
    }
    if (o->ip_per_device && (uint64_t)o->ip + o->device_count - 1 > UINT32_MAX) {
        BAD("%u addresses from --ip do not fit in IPv4", (unsigned)o->device_count);
    }
    if (!o->ip_per_device && (uint64_t)o->port + o->device_count - 1 > 65535) {
        BAD("%u devices from port %u need ports past 65535", (unsigned)o->device_count, (unsigned)o->port);
    }
    return STRESS_PARSE_RUN;
}

void
stress_options_notes(const struct stress_options *o, FILE *out)
{
    if (o->exi) {
        fputs("fleetsim-stress: warning: --exi true: fleetsim-stress speaks no EXI; it uses plain XML\n",
              out);
    }
    if (o->debug) {
        fputs("fleetsim-stress: --debug true: there is no debug log; the report and --json FILE hold the "
              "details\n",
              out);
    }
}
