/*
 * The fleetsim command line: one table of options (name, aliases, kind of
 * value, bounds, default, help, the plan field it fills) drives the defaults,
 * the parse, the error messages, getopt's option array and --help, as Redis's
 * src/config.c does with static_configs[]. Fleet files apply their leaves
 * through the same table (cli_apply_named()). Only options whose value is
 * more than a number, a word or true/false have a parse function of their own.
 */
#include "cli.h"
#include "agent.h"
#include "callhome.h"
#include "log.h"
#include "register.h"
#include "respond.h"
#include "shard.h"
#include "stream.h"
#include "syslog_msg.h"
#include "syslog_sink.h"
#include "textarg.h"
#include "trap.h"

#include <arpa/inet.h>
#include <assert.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The kind of value an option takes: how it is parsed, refused, and shown in --help. */
enum cli_kind {
    CLI_BOOL,    /* true or false (int field) */
    CLI_FLAG,    /* true or false, the value optional: alone it means true (int field) */
    CLI_U32,     /* a whole number in [min, max] (uint32_t field) */
    CLI_U64,     /* a whole number in [min, max] (uint64_t field) */
    CLI_DOUBLE,  /* a decimal number in [dmin, dmax] (double field) */
    CLI_STRING,  /* text, kept as given (const char * field) */
    CLI_CHOICE,  /* one of the words of choices, kept as given (const char * field) */
    CLI_HELP,    /* print --help and exit 0 */
    CLI_VERSION, /* print the version and exit 0 */
};

/* Most other names of one option. */
#define CLI_MAX_ALIASES 2
/* Column at which --help's descriptions start, and the width it keeps to. */
#define CLI_HELP_INDENT 31
#define CLI_HELP_WIDTH  110

/* What a custom parse works on: the plan, the command line's next word, the message buffer. */
struct cli_ctx {
    struct fleet_config *cfg; /* the plan being filled */
    const char *next; /* the command line's word after the value, NULL at the end or in a fleet file */
    int took_next;    /* set by a parse that used next as a second value (--auth USER PASS) */
    int ssh_given;    /* --ssh's value on this command line, -1: not given */
    const char *transport_given; /* --transport's value on this command line, or NULL */
    int call_home_port_default;  /* --call-home named no port: TLS's is 4335 (RFC 8071) */
    char *err;                   /* where a refused value is described */
    size_t err_len;              /* bytes of err */
};

struct cli_opt;
/* A parse of its own, for an option that is more than its kind: checks value and fills c->cfg. */
typedef enum fleet_err (*cli_custom_fn)(const struct cli_opt *o, const char *value, struct cli_ctx *c);

/* One command-line option (and fleet-file leaf). */
struct cli_opt {
    const char *name;                     /* long name without dashes; messages use it */
    const char *aliases[CLI_MAX_ALIASES]; /* other names (OpenDaylight's older ones), unused ones NULL */
    enum cli_kind kind;                   /* the value's kind */
    size_t field;                         /* offsetof the value in struct fleet_config (without custom) */
    uint64_t min, max;                    /* CLI_U32/U64 bounds; max 0: the type's, unnamed in messages */
    double dmin, dmax;                    /* CLI_DOUBLE bounds */
    const char *noun;                     /* "must be NOUN from ...": NULL for "a number" */
    const char *unit;                     /* after the bounds in the message ("seconds"), or NULL */
    const char *choices;                  /* CLI_CHOICE: the words, '|' between them */
    const char *metavar;                  /* --help's name of the value; NULL: from the kind */
    const char *dflt;                     /* default, applied by cli_defaults() and shown, or NULL */
    const char *dflt_shown;               /* default shown but set in code (computed), or NULL */
    const char *help;                     /* --help's description (wrapped to the width) */
    const char *section;                  /* a --help heading printed before this option, or NULL */
    size_t count_field;                   /* repeatable: offsetof its count of values, else 0 */
    size_t count_bytes;                   /* repeatable: sizeof that count, else 0 */
    cli_custom_fn custom;                 /* a parse of its own instead of storing at field, or NULL */
};

#define CFG_FIELD(member) offsetof(struct fleet_config, member)
#define REPEATS(member)                                                                                      \
    .count_field = offsetof(struct fleet_config, member),                                                    \
    .count_bytes = sizeof(((struct fleet_config *)0)->member)

/* ------------------------------------------------------------------ generic values */

/* Refuse value in the option's own words, from its table entry. */
static enum fleet_err
cli_refuse(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    char bounds[96] = "";
    size_t n = 0;

    switch (o->kind) {
    case CLI_BOOL:
    case CLI_FLAG:
        snprintf(c->err, c->err_len, "--%s takes true or false, not \"%s\"", o->name, value);
        break;
    case CLI_U32:
    case CLI_U64:
        if (o->min || o->max) {
            n += (size_t)snprintf(bounds, sizeof bounds, " from %llu", (unsigned long long)o->min);
        }
        if (o->max) {
            snprintf(bounds + n, sizeof bounds - n, " to %llu", (unsigned long long)o->max);
        }
        snprintf(c->err, c->err_len, "--%s must be %s%s%s%s, not \"%s\"", o->name,
                 o->noun ? o->noun : "a number", bounds, o->unit ? " " : "", o->unit ? o->unit : "", value);
        break;
    case CLI_DOUBLE:
        snprintf(c->err, c->err_len, "--%s must be %s from %.15g to %.15g%s%s, not \"%s\"", o->name,
                 o->noun ? o->noun : "a number", o->dmin, o->dmax, o->unit ? " " : "", o->unit ? o->unit : "",
                 value);
        break;
    case CLI_CHOICE: {
        /* "a|b|c" reads "a, b or c" */
        char words[160];
        const char *p = o->choices, *bar;
        size_t w = 0;
        for (; (bar = strchr(p, '|')); p = bar + 1) {
            w += (size_t)snprintf(words + w, sizeof words - w, "%s%.*s", w ? ", " : "", (int)(bar - p), p);
        }
        snprintf(words + w, sizeof words - w, " or %s", p);
        snprintf(c->err, c->err_len, "--%s must be %s, not \"%s\"", o->name, words, value);
        break;
    }
    default:
        snprintf(c->err, c->err_len, "--%s does not take \"%s\"", o->name, value);
        break;
    }
    return FLEET_ERR_INVAL;
}

/* Whether word is one of a '|'-separated list. */
static int
cli_word_in(const char *word, const char *list)
{
    size_t len = strlen(word);
    const char *p = list;

    for (;;) {
        size_t n = strcspn(p, "|");
        if (n == len && !strncmp(p, word, len)) {
            return 1;
        }
        if (!p[n]) {
            return 0;
        }
        p += n + 1;
    }
}

/*
 * Parse value by o's kind and bounds, one function per kind of destination: each writes only its own
 * type, so no store's size depends on the kind (a memcpy sized by the kind, inlined into a caller that
 * passed an int, was a gcc -Warray-bounds error in Release builds, issue 28). A refused value is
 * described in c->err. Custom parses call them for the part that is generic.
 */
static enum fleet_err
cli_parse_bool(const struct cli_opt *o, const char *value, int *dst, struct cli_ctx *c)
{
    assert(o->kind == CLI_BOOL || o->kind == CLI_FLAG);
    return textarg_bool(value, dst) ? cli_refuse(o, value, c) : FLEET_OK;
}

static enum fleet_err
cli_parse_u32(const struct cli_opt *o, const char *value, uint32_t *dst, struct cli_ctx *c)
{
    assert(o->kind == CLI_U32);
    return textarg_u32(value, (uint32_t)o->min, o->max ? (uint32_t)o->max : UINT32_MAX, dst)
               ? cli_refuse(o, value, c)
               : FLEET_OK;
}

static enum fleet_err
cli_parse_u64(const struct cli_opt *o, const char *value, uint64_t *dst, struct cli_ctx *c)
{
    assert(o->kind == CLI_U64);
    return textarg_u64(value, o->min, o->max ? o->max : UINT64_MAX, dst) ? cli_refuse(o, value, c) : FLEET_OK;
}

static enum fleet_err
cli_parse_double(const struct cli_opt *o, const char *value, double *dst, struct cli_ctx *c)
{
    char *end;
    double d;

    assert(o->kind == CLI_DOUBLE);
    d = strtod(value, &end);
    if (end == value || *end || !(d >= o->dmin && d <= o->dmax)) {
        return cli_refuse(o, value, c);
    }
    *dst = d;
    return FLEET_OK;
}

/* CLI_STRING and CLI_CHOICE: the text is kept as given, not copied. */
static enum fleet_err
cli_parse_text(const struct cli_opt *o, const char *value, const char **dst, struct cli_ctx *c)
{
    assert(o->kind == CLI_STRING || o->kind == CLI_CHOICE);
    if (o->kind == CLI_CHOICE && !cli_word_in(value, o->choices)) {
        return cli_refuse(o, value, c);
    }
    *dst = value;
    return FLEET_OK;
}

/*
 * Store value in the plan's field of o, through a pointer of the field's type: the table pairs each
 * field with its kind (CLI_BOOL and CLI_FLAG: int, CLI_U32: uint32_t, CLI_U64: uint64_t, CLI_DOUBLE:
 * double, CLI_STRING and CLI_CHOICE: const char *).
 */
static enum fleet_err
cli_store(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    void *field = (char *)c->cfg + o->field;

    switch (o->kind) {
    case CLI_BOOL:
    case CLI_FLAG:
        return cli_parse_bool(o, value, (int *)field, c);
    case CLI_U32:
        return cli_parse_u32(o, value, (uint32_t *)field, c);
    case CLI_U64:
        return cli_parse_u64(o, value, (uint64_t *)field, c);
    case CLI_DOUBLE:
        return cli_parse_double(o, value, (double *)field, c);
    case CLI_STRING:
    case CLI_CHOICE:
        return cli_parse_text(o, value, (const char **)field, c);
    default:
        snprintf(c->err, c->err_len, "--%s only makes sense on the command line", o->name);
        return FLEET_ERR_INVAL;
    }
}

/* ------------------------------------------------------------------ options of their own */

static enum fleet_err
cli_ip(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    if (netaddr_parse(value, &c->cfg->ip_fam, &c->cfg->ip)) {
        snprintf(c->err, c->err_len,
                 "--%s must be an IPv4 or IPv6 address (192.0.2.1, fd5e:f1ee::1), not \"%s\"", o->name,
                 value);
        return FLEET_ERR_INVAL;
    }
    return FLEET_OK;
}

static enum fleet_err
cli_ssh(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    if (cli_parse_bool(o, value, &c->cfg->ssh, c)) {
        return FLEET_ERR_INVAL;
    }
    c->cfg->tls = 0;
    c->ssh_given = c->cfg->ssh;
    return FLEET_OK;
}

static enum fleet_err
cli_transport(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    if (!cli_word_in(value, o->choices)) {
        return cli_refuse(o, value, c);
    }
    c->cfg->ssh = !strcmp(value, "ssh");
    c->cfg->tls = !strcmp(value, "tls");
    c->transport_given = value;
    return FLEET_OK;
}

static enum fleet_err
cli_call_home(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    (void)o;
    /* No port: no colon, or a bare IPv6 address (several, without "]:"). */
    c->call_home_port_default = strstr(value, "]:")                         ? 0
                                : strchr(value, ':') == strrchr(value, ':') ? !strchr(value, ':')
                                                                            : 1;
    return callhome_parse(value, &c->cfg->call_home_addr, &c->cfg->call_home_port, c->err, c->err_len)
               ? FLEET_ERR_INVAL
               : FLEET_OK;
}

static enum fleet_err
cli_auth(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    if (cli_word_in(value, o->choices)) {
        c->cfg->ssh_auth_any = !strcmp(value, "any");
        return FLEET_OK;
    }
    if (c->next && c->next[0] != '-') {
        /* OpenDaylight's older --auth USER PASS: the controller's login */
        c->cfg->controller_username = value;
        c->cfg->controller_password = c->next;
        c->took_next = 1;
        return FLEET_OK;
    }
    snprintf(c->err, c->err_len, "--%s takes password or any, not \"%s\"", o->name, value);
    return FLEET_ERR_INVAL;
}

static enum fleet_err
cli_features(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    const char *colon = strchr(value, ':');
    struct fleet_config *cfg = c->cfg;

    if (!colon || colon == value) {
        snprintf(c->err, c->err_len, "--%s takes MODULE:FEATURE,FEATURE (or MODULE: for none), not \"%s\"",
                 o->name, value);
        return FLEET_ERR_INVAL;
    }
    if (cfg->schema_opts.feature_count == FLEET_MAX_FEATURE_PINS) {
        snprintf(c->err, c->err_len, "at most %d --%s options", FLEET_MAX_FEATURE_PINS, o->name);
        return FLEET_ERR_INVAL;
    }
    cfg->feature_pins[cfg->schema_opts.feature_count++] = value;
    return FLEET_OK;
}

static enum fleet_err
cli_log_level(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    if (log_level_parse(value, &c->cfg->log_level)) {
        snprintf(c->err, c->err_len, "--%s must be error, warn, info or debug, not \"%s\"", o->name, value);
        return FLEET_ERR_INVAL;
    }
    return FLEET_OK;
}

static enum fleet_err
cli_debug(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    int flag;

    if (cli_parse_bool(o, value, &flag, c)) {
        return FLEET_ERR_INVAL;
    }
    if (flag) {
        c->cfg->log_level = LOGL_DEBUG;
    }
    return FLEET_OK;
}

static enum fleet_err
cli_max_message(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    uint32_t bytes;

    if (cli_parse_u32(o, value, &bytes, c)) {
        return FLEET_ERR_INVAL;
    }
    c->cfg->max_msg_bytes = bytes;
    return FLEET_OK;
}

static enum fleet_err
cli_latency(const struct cli_opt *o, const char *value, uint32_t *min_ms, uint32_t *max_ms, struct cli_ctx *c)
{
    if (agent_latency_parse(value, min_ms, max_ms)) {
        snprintf(c->err, c->err_len,
                 "--%s must be a duration or a range such as 50ms, 1s or 50-100ms, not \"%s\"", o->name,
                 value);
        return FLEET_ERR_INVAL;
    }
    return FLEET_OK;
}

static enum fleet_err
cli_snmp_latency(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    return cli_latency(o, value, &c->cfg->snmp_latency_min_ms, &c->cfg->snmp_latency_max_ms, c);
}

static enum fleet_err
cli_netconf_latency(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    return cli_latency(o, value, &c->cfg->netconf_latency_min_ms, &c->cfg->netconf_latency_max_ms, c);
}

static enum fleet_err
cli_snmp_fault(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    struct fleet_config *cfg = c->cfg;

    if (cfg->snmp_fault_count == AGENT_MAX_FAULTS) {
        snprintf(c->err, c->err_len, "at most %d --%s options", AGENT_MAX_FAULTS, o->name);
        return FLEET_ERR_INVAL;
    }
    if (agent_fault_parse(value, &cfg->snmp_faults[cfg->snmp_fault_count], c->err, c->err_len)) {
        return FLEET_ERR_INVAL;
    }
    cfg->snmp_fault_count++;
    return FLEET_OK;
}

static enum fleet_err
cli_snmp_v3_user(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    struct fleet_config *cfg = c->cfg;

    if (cfg->snmp_v3_user_count == RESPOND_MAX_V3_USERS) {
        snprintf(c->err, c->err_len, "at most %d --%s options", RESPOND_MAX_V3_USERS, o->name);
        return FLEET_ERR_INVAL;
    }
    if (respond_v3_user_parse(value, &cfg->snmp_v3_users[cfg->snmp_v3_user_count], c->err, c->err_len)) {
        return FLEET_ERR_INVAL;
    }
    cfg->snmp_v3_user_count++;
    return FLEET_OK;
}

static enum fleet_err
cli_trap_sink(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    struct fleet_config *cfg = c->cfg;
    const size_t most = sizeof cfg->trap_sinks / sizeof cfg->trap_sinks[0];

    if (cfg->trap_sink_count == most) {
        snprintf(c->err, c->err_len, "at most %zu --%s options", most, o->name);
        return FLEET_ERR_INVAL;
    }
    if (trap_sink_parse(value, &cfg->trap_sinks[cfg->trap_sink_count], c->err, c->err_len)) {
        return FLEET_ERR_INVAL;
    }
    cfg->trap_sink_count++;
    return FLEET_OK;
}

static enum fleet_err
cli_trap_version(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    if (trap_version_parse(value, &c->cfg->trap_version)) {
        snprintf(c->err, c->err_len, "--%s must be 1, 2c or 3, not \"%s\"", o->name, value);
        return FLEET_ERR_INVAL;
    }
    return FLEET_OK;
}

static enum fleet_err
cli_trap_v3_user(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    if (respond_v3_user_parse(value, &c->cfg->trap_v3_user, c->err, c->err_len)) {
        /* The parser names the agent's option; name the one given. */
        char why[512];
        const char *rest = strchr(c->err, ' ');
        snprintf(why, sizeof why, "--%s%s", o->name, rest ? rest : "");
        snprintf(c->err, c->err_len, "%s", why);
        return FLEET_ERR_INVAL;
    }
    c->cfg->trap_v3_user_set = 1;
    return FLEET_OK;
}

static enum fleet_err
cli_syslog_sink(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    struct fleet_config *cfg = c->cfg;

    if (cfg->syslog_sink_count == FLEET_MAX_SYSLOG_SINKS) {
        snprintf(c->err, c->err_len, "at most %d --%s options", FLEET_MAX_SYSLOG_SINKS, o->name);
        return FLEET_ERR_INVAL;
    }
    if (syslog_sink_parse(value, &cfg->syslog_sinks[cfg->syslog_sink_count], c->err, c->err_len)) {
        return FLEET_ERR_INVAL;
    }
    cfg->syslog_sink_count++;
    return FLEET_OK;
}

/* A rate profile (rate_profile.h) into the option's struct rate_profile; the table's dmin above 0 refuses
 * one that never sends (an override that would silence the stream is the control API's pause). */
static enum fleet_err
cli_rate_profile(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    struct rate_profile *p = (struct rate_profile *)((char *)c->cfg + o->field);
    char why[200];

    if (rate_profile_parse(value, p, why, sizeof why)) {
        snprintf(c->err, c->err_len, "--%s: %s", o->name, why);
        return FLEET_ERR_INVAL;
    }
    if (o->dmin > 0 && rate_profile_is_zero(p)) {
        snprintf(c->err, c->err_len, "--%s must be above 0 somewhere, not \"%s\"", o->name, value);
        rate_profile_constant(p, 0);
        return FLEET_ERR_INVAL;
    }
    return FLEET_OK;
}

static enum fleet_err
cli_run_tag(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    if (!*value || strlen(value) > SYSLOG_MAX_RUN_TAG_BYTES || strpbrk(value, " \t\r\n")) {
        snprintf(c->err, c->err_len, "--%s must be 1 to %d characters without spaces, not \"%s\"", o->name,
                 SYSLOG_MAX_RUN_TAG_BYTES, value);
        return FLEET_ERR_INVAL;
    }
    c->cfg->run_tag = value;
    return FLEET_OK;
}

static enum fleet_err
cli_push_window(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    if (pushwin_parse(value, &c->cfg->push_window)) {
        snprintf(
            c->err, c->err_len,
            "--%s wants START,END or START, (seconds from ready, 0 to %.0f, END after START), not \"%s\"",
            o->name, PUSHWIN_MAX_OFFSET_S, value);
        return FLEET_ERR_INVAL;
    }
    return FLEET_OK;
}

static enum fleet_err
cli_clock_fixed(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    uint64_t s;

    if (cli_parse_u64(o, value, &s, c)) {
        return FLEET_ERR_INVAL;
    }
    c->cfg->clock_fixed_ms = s * 1000;
    return FLEET_OK;
}

static enum fleet_err
cli_connection_timeout(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    uint32_t ms;

    if (cli_parse_u32(o, value, &ms, c)) {
        return FLEET_ERR_INVAL;
    }
    c->cfg->hello_timeout_s = (ms + 999) / 1000;
    return FLEET_OK;
}

static enum fleet_err
cli_controller_destination(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    static char ip[INET6_ADDRSTRLEN];
    const char *colon = strrchr(value, ':');
    /* "[IPV6]:PORT": the host is what the brackets hold */
    int bracket = value[0] == '[' && colon && colon > value && colon[-1] == ']';
    const char *host = value + bracket;
    size_t host_len = colon ? (size_t)(colon - host) - (size_t)bracket : 0;

    if (!colon || host_len == 0 || host_len >= sizeof ip || (!bracket && memchr(host, ':', host_len)) ||
        textarg_u32(colon + 1, 1, 65535, &c->cfg->controller_port)) {
        snprintf(c->err, c->err_len, "--%s must be IP:PORT or [IPV6]:PORT, not \"%s\"", o->name, value);
        return FLEET_ERR_INVAL;
    }
    memcpy(ip, host, host_len);
    ip[host_len] = '\0';
    c->cfg->controller_ip = ip;
    return FLEET_OK;
}

/* OpenDaylight's options fleetsim has nothing to do for: checked, then one line saying so. */
static enum fleet_err
cli_note_exi(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    int flag;

    if (cli_parse_bool(o, value, &flag, c)) {
        return FLEET_ERR_INVAL;
    }
    if (flag) {
        log_warn("--exi true: fleetsim speaks no EXI; devices advertise no EXI capability, so clients "
                 "stay with XML (start-exi is answered with operation-not-supported)");
    }
    return FLEET_OK;
}

static enum fleet_err
cli_note_md_sal(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    int flag;

    if (cli_parse_bool(o, value, &flag, c)) {
        return FLEET_ERR_INVAL;
    }
    if (flag) {
        log_info("--md-sal true: fleetsim's datastore is always a real one (edits validated against the "
                 "schemas, kept per device); nothing to switch");
    }
    return FLEET_OK;
}

static enum fleet_err
cli_note_async_requests(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    int flag;

    if (cli_parse_bool(o, value, &flag, c)) {
        return FLEET_ERR_INVAL;
    }
    log_info("--async-requests: fleetsim registers devices from one event loop, every batch request in "
             "flight at once");
    return FLEET_OK;
}

static enum fleet_err
cli_note_null_revision(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    int flag;

    if (cli_parse_bool(o, value, &flag, c)) {
        return FLEET_ERR_INVAL;
    }
    if (!flag) {
        log_info("--permit-null-revision false: fleetsim loads modules without a revision all the same");
    }
    return FLEET_OK;
}

static enum fleet_err
cli_note_distribution(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    (void)o;
    (void)c;
    log_info("--distribution-folder %s: OpenDaylight's scale-util starts a controller from it; fleetsim "
             "starts none (point --controller-ip at a running one)",
             value);
    return FLEET_OK;
}

static enum fleet_err
cli_note_edit_content(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    (void)o;
    (void)c;
    log_info("--edit-content %s: fleetsim registers each device with the controller's topology in its own "
             "payload (see --inventory-format odl-json); the file is not read",
             value);
    return FLEET_OK;
}

static enum fleet_err
cli_note_one_loop(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    uint32_t n;

    if (cli_parse_u32(o, value, &n, c)) {
        return FLEET_ERR_INVAL;
    }
    log_info("--%s %u: fleetsim registers devices from one event loop; use --generate-configs-batch-size "
             "for devices per request",
             o->name, (unsigned)n);
    return FLEET_OK;
}

/* --shard I/N: part I of N of the fleet (shard.h's split). */
static enum fleet_err
parse_shard(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    if (shard_parse(value, &c->cfg->shard_index, &c->cfg->shard_count)) {
        snprintf(c->err, c->err_len, "--%s takes I/N, I from 0 to N-1 and N from 1 to %u, not \"%s\"",
                 o->name, (unsigned)SHARD_MAX_PARTS, value);
        return FLEET_ERR_INVAL;
    }
    return FLEET_OK;
}

/* --device-offset K: the number, and that it was given (--shard excludes it). */
static enum fleet_err
parse_device_offset(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    enum fleet_err rc = cli_parse_u32(o, value, &c->cfg->device_offset, c);

    c->cfg->device_offset_given = !rc;
    return rc;
}

/* ------------------------------------------------------------------ the table */

#define ODL_SECTION "OpenDaylight testtool's options, accepted as its scripts write them:"

static const struct cli_opt cli_opts[] = {
    {.name = "device-count",
     .aliases = {"devices-count"},
     .kind = CLI_U32,
     .field = CFG_FIELD(device_count),
     .min = 1,
     .max = 1000000,
     .metavar = "N",
     .dflt = "1",
     .help = "devices to simulate (with --shard: of the whole fleet)"},
    {.name = "shard",
     .kind = CLI_STRING,
     .metavar = "I/N",
     .custom = parse_shard,
     .help = "serve part I (0 to N-1) of N of one fleet: devices floor(I*C/N) to floor((I+1)*C/N)-1 of the "
             "C of --device-count (or of --fleet's groups), with their whole-fleet names, addresses and "
             "identity"},
    {.name = "shard-own-ports",
     .kind = CLI_FLAG,
     .field = CFG_FIELD(shard_own_ports),
     .help = "each part's devices on ports from --starting-port (and --snmp-starting-port) of its own host "
             "or pod, not on the whole fleet's ports, and the node-id is the device's name, device-N: a "
             "fleet of more devices than one host has ports, a port per device"},
    {.name = "device-offset",
     .kind = CLI_U32,
     .max = 999999,
     .metavar = "K",
     .custom = parse_device_offset,
     .help = "serve --device-count devices from the fleet's device K on (an uneven split; not with --shard)"},
    {.name = "starting-port",
     .kind = CLI_U32,
     .field = CFG_FIELD(starting_port),
     .min = 1,
     .max = 65535,
     .noun = "a port",
     .metavar = "P",
     .dflt = "17830",
     .help = "first device's port; device i listens on P+i"},
    {.name = "ip",
     .kind = CLI_STRING,
     .custom = cli_ip,
     .metavar = "ADDR",
     .dflt = "127.0.0.1",
     .help = "listening IPv4 or IPv6 address (::1; with --ip-per-device all of a fleet in one /96)"},
    {.name = "ip-per-device",
     .kind = CLI_FLAG,
     .field = CFG_FIELD(ip_per_device),
     .help = "device i listens on ADDR+i, all on port P"},
    {.name = "ssh",
     .kind = CLI_BOOL,
     .custom = cli_ssh,
     .dflt = "true",
     .help = "NETCONF over SSH (the netconf subsystem) or plain TCP (--transport ssh or tcp)"},
    {.name = "transport",
     .kind = CLI_CHOICE,
     .choices = "tcp|ssh|tls",
     .custom = cli_transport,
     .dflt_shown = "ssh",
     .help = "NETCONF over plain TCP, SSH (RFC 6242) or TLS (RFC 7589, client certificates required); "
             "contradicting --ssh is an error"},
    {.name = "tls-cert",
     .kind = CLI_STRING,
     .field = CFG_FIELD(tls_cert),
     .metavar = "FILE",
     .dflt_shown = "tls/server.pem of the state folder, signed by its tls/ca.pem, created once",
     .help = "TLS server certificate (PEM, may hold its chain)"},
    {.name = "tls-key",
     .kind = CLI_STRING,
     .field = CFG_FIELD(tls_key),
     .metavar = "FILE",
     .help = "private key of --tls-cert"},
    {.name = "tls-ca",
     .kind = CLI_STRING,
     .field = CFG_FIELD(tls_ca),
     .metavar = "FILE",
     .dflt_shown = "tls/ca.pem of the state folder",
     .help = "CA certificates that TLS clients' certificates must chain to"},
    {.name = "tls-cert-per-device",
     .kind = CLI_FLAG,
     .field = CFG_FIELD(tls_cert_per_device),
     .help = "every device presents its own server certificate (CN its host name, subjectAltName its "
             "address), signed by the fleet's CA and made on its first handshake; implied by --ip-per-device "
             "without --tls-cert; contradicts --tls-cert"},
    {.name = "tls-cert-to-name",
     .kind = CLI_STRING,
     .field = CFG_FIELD(tls_cert_to_name),
     .metavar = "FILE",
     .help = "cert-to-name (RFC 7407): lines ID FINGERPRINT MAP-TYPE [NAME] (04:hex... for sha256; "
             "specified, san-rfc822-name, san-dns-name, san-ip-address, san-any, common-name), tried in ID "
             "order; no match refuses the session (default: the common name is the username)"},
    {.name = "issue-client-cert",
     .kind = CLI_STRING,
     .field = CFG_FIELD(issue_client_cert),
     .metavar = "NAME",
     .help = "write a TLS client certificate for NAME (CN, 1 year) and its key, signed by the fleet's CA "
             "(created when missing), to --out PREFIX.pem and PREFIX.key, and exit"},
    {.name = "out",
     .kind = CLI_STRING,
     .field = CFG_FIELD(issue_out),
     .metavar = "PREFIX",
     .help = "where --issue-client-cert writes"},
    {.name = "username",
     .kind = CLI_STRING,
     .field = CFG_FIELD(username),
     .metavar = "U",
     .dflt = "admin",
     .help = "SSH login's user"},
    {.name = "password",
     .kind = CLI_STRING,
     .field = CFG_FIELD(password),
     .metavar = "P",
     .dflt = "admin",
     .help = "SSH login's password"},
    {.name = "auth",
     .kind = CLI_CHOICE,
     .choices = "password|any",
     .custom = cli_auth,
     .dflt = "password",
     .help = "any: accept every user and password (OpenDaylight's older --auth USER PASS, two words, is the "
             "controller's login)"},
    {.name = "host-key",
     .kind = CLI_STRING,
     .field = CFG_FIELD(host_key),
     .metavar = "FILE",
     .dflt_shown = "ed25519 and RSA keys created once in the state folder and reused",
     .help = "SSH host key"},
    {.name = "host-key-per-device",
     .kind = CLI_FLAG,
     .field = CFG_FIELD(host_key_per_device),
     .help = "every device its own host key (--host-key-type), derived from a secret kept in the state "
             "folder (a restart keeps them)"},
    {.name = "host-key-type",
     .kind = CLI_CHOICE,
     .field = CFG_FIELD(host_key_type),
     .choices = "ed25519|ecdsa|rsa",
     .metavar = "T",
     .dflt = "ed25519",
     .help =
         "type of the --host-key-per-device keys: ed25519, ecdsa (NIST P-256) or rsa (2048 bits), "
         "for allow-lists that take no ed25519 (OpenDaylight's call home: ecdsa or rsa); an rsa key costs "
         "tens of ms of CPU to derive, on the device's first connection (or per device in "
         "--emit-inventory)"},
    {.name = "call-home",
     .kind = CLI_STRING,
     .custom = cli_call_home,
     .metavar = "HOST[:PORT]",
     .help =
         "NETCONF call home (RFC 8071): devices dial out to the manager at HOST (numeric IPv4 or IPv6, "
         "[IPV6]:PORT with a port; port 4334 by "
         "default, 4335 with --transport tls) from their own address instead of listening, and are the SSH "
         "(or TLS) server on that connection; "
         "a lost or refused connection is dialled again after 1 s, 2 s, ... up to 60 s (with jitter). "
         "--ssh false: plain TCP, the hello at once (a fleetsim extension for tests)"},
    {.name = "call-home-rate",
     .kind = CLI_DOUBLE,
     .field = CFG_FIELD(call_home_rate),
     .dmin = 0,
     .dmax = 1e6,
     .unit = "per second",
     .metavar = "R",
     .help = "most call-home dials per second across the fleet (a token bucket per worker), 0: no bound"},
    {.name = "authorized-keys",
     .kind = CLI_STRING,
     .field = CFG_FIELD(authorized_keys),
     .metavar = "FILE",
     .help = "SSH public keys (OpenSSH authorized_keys) that log in as --username"},
    {.name = "state-dir",
     .kind = CLI_STRING,
     .field = CFG_FIELD(state_dir),
     .metavar = "DIR",
     .dflt_shown = "$XDG_STATE_HOME/fleetsim or ~/.local/state/fleetsim",
     .help = "state folder"},
    {.name = "schemas-dir",
     .kind = CLI_STRING,
     .field = CFG_FIELD(schemas_dir),
     .metavar = "DIR",
     .help = "load and advertise the YANG modules in DIR (a vendor's folder as shipped: submodules, "
             "revisions, deviations; bad modules skipped)"},
    {.name = "schemas-strict",
     .kind = CLI_FLAG,
     .field = CFG_FIELD(schema_opts.strict),
     .help = "a module of --schemas-dir that does not load is an error (exit 2)"},
    {.name = "device-type",
     .kind = CLI_STRING,
     .field = CFG_FIELD(device_type_dir),
     .metavar = "DIR",
     .help = "serve a recorded device (fleetsim-stress record's folder, see docs/RECORDED_TYPES.md): its "
             "hello, schemas, configuration and state"},
    {.name = "features",
     .kind = CLI_STRING,
     .custom = cli_features,
     REPEATS(schema_opts.feature_count),
     .metavar = "MODULE:F1,F2",
     .dflt_shown = "all",
     .help = "only these features of MODULE (MODULE: for none)"},
    {.name = "initial-config-xml-file",
     .kind = CLI_STRING,
     .field = CFG_FIELD(initial_config_file),
     .metavar = "F",
     .help = "running configuration every device starts with"},
    {.name = "identity-rules",
     .kind = CLI_STRING,
     .field = CFG_FIELD(identity_rules_file),
     .metavar = "FILE",
     .help = "rules.json: text of the type's data each device replaces with its own ({INDEX} {ADDR} {MAC} "
             "{SERIAL}); see docs/RECORDED_TYPES.md"},
    {.name = "threads",
     .aliases = {"thread-pool-size"},
     .kind = CLI_U32,
     .field = CFG_FIELD(threads),
     .min = 1,
     .max = 1024,
     .metavar = "N",
     .dflt_shown = "number of cores",
     .help = "worker loops"},
    {.name = "log-level",
     .kind = CLI_STRING,
     .custom = cli_log_level,
     .metavar = "LEVEL",
     .dflt = "info",
     .help = "error, warn, info or debug"},
    {.name = "debug", .kind = CLI_BOOL, .custom = cli_debug, .help = "true: the same as --log-level debug"},
    {.name = "max-message-size",
     .kind = CLI_U32,
     .custom = cli_max_message,
     .min = 4096,
     .noun = "a number of bytes",
     .metavar = "BYTES",
     .dflt = "67108864",
     .help = "largest accepted client message"},
    {.name = "hello-timeout",
     .kind = CLI_U32,
     .field = CFG_FIELD(hello_timeout_s),
     .min = 1,
     .max = 86400,
     .unit = "seconds",
     .metavar = "S",
     .dflt = "60",
     .help = "close a session whose hello (over SSH: handshake, login and hello) has not arrived within S "
             "seconds"},
    {.name = "profile",
     .kind = CLI_STRING,
     .field = CFG_FIELD(profile),
     .metavar = "NAME|FILE",
     .dflt = "minimal",
     .help = "device profile: minimal, crs-x, or a profile file"},
    {.name = "snmp",
     .kind = CLI_BOOL,
     .field = CFG_FIELD(snmp),
     .dflt = "true",
     .help = "every device is also an SNMP agent"},
    {.name = "snmp-starting-port",
     .kind = CLI_U32,
     .field = CFG_FIELD(snmp_starting_port),
     .min = 1,
     .max = 65535,
     .noun = "a port",
     .metavar = "P",
     .dflt = "16100",
     .help = "device i's agent on UDP port P+i; with --ip-per-device all on P"},
    {.name = "snmp-community",
     .kind = CLI_STRING,
     .field = CFG_FIELD(snmp_community),
     .metavar = "C",
     .dflt = "public",
     .help = "read community"},
    {.name = "snmp-write-community",
     .kind = CLI_STRING,
     .field = CFG_FIELD(snmp_write_community),
     .metavar = "C",
     .dflt = "private",
     .help = "write community, also reads"},
    /* RFC 3417: every agent takes at least 484 bytes; a UDP datagram carries at most 65507. */
    {.name = "snmp-max-message-size",
     .kind = CLI_U32,
     .field = CFG_FIELD(snmp_max_msg_bytes),
     .min = 484,
     .max = 65507,
     .unit = "bytes",
     .metavar = "B",
     .dflt = "1472",
     .help = "largest response in bytes"},
    {.name = "snmp-latency",
     .kind = CLI_STRING,
     .custom = cli_snmp_latency,
     .metavar = "T[-T]",
     .help = "delay every answer, e.g. 50ms or 50-100ms (uniform per answer)"},
    {.name = "netconf-latency",
     .kind = CLI_STRING,
     .custom = cli_netconf_latency,
     .metavar = "T[-T]",
     .help = "delay every NETCONF reply the same way (replies keep their order)"},
    {.name = "snmp-drop-rate",
     .kind = CLI_DOUBLE,
     .field = CFG_FIELD(snmp_drop_rate),
     .dmin = 0,
     .dmax = 1,
     .noun = "a share",
     .metavar = "R",
     .help = "leave a share R of requests unanswered (0..1)"},
    {.name = "snmp-fault",
     .kind = CLI_STRING,
     .custom = cli_snmp_fault,
     REPEATS(snmp_fault_count),
     .metavar = "SHARE:KIND",
     .help = "a share of devices misbehaves: SHARE:timeout, SHARE:delay:5s, SHARE:error:genErr"},
    {.name = "snmp-recording",
     .kind = CLI_STRING,
     .field = CFG_FIELD(snmp_recording),
     .metavar = "FILE",
     .help = "serve a recorded walk (.snmprec or snmpwalk -On output) for every OID the simulator does not "
             "compute itself"},
    {.name = "export-snmprec",
     .kind = CLI_STRING,
     .field = CFG_FIELD(export_snmprec),
     .metavar = "FILE",
     .help = "write a device's SNMP view to FILE as .snmprec and exit"},
    {.name = "export-device",
     .kind = CLI_U32,
     .field = CFG_FIELD(export_device),
     .max = 999999,
     .noun = "a device index",
     .metavar = "N",
     .dflt = "0",
     .help = "the device --export-snmprec writes"},
    {.name = "snmp-v3-user",
     .kind = CLI_STRING,
     .custom = cli_snmp_v3_user,
     REPEATS(snmp_v3_user_count),
     .metavar = "N:A:K:P:K",
     .help = "SNMPv3 user: name, auth (none, md5, sha, sha224, sha256, sha384, sha512) and password, priv "
             "(none, aes) and password; names in any case, also as net-snmp writes them (SHA-256, AES)"},
    {.name = "notification-file",
     .kind = CLI_STRING,
     .field = CFG_FIELD(notification_file),
     .metavar = "F",
     .help = "what devices stream once subscribed: OpenDaylight's format or ours "
             "(schemas/fleetsim-notifications.yang)"},
    {.name = "notification-rate",
     .kind = CLI_STRING,
     .custom = cli_rate_profile,
     .field = CFG_FIELD(notification_rate),
     .dmin = 1, /* refuses a profile that never sends */
     .metavar = "PROFILE",
     .help = "pace any notification file at a rate profile per device: R, linear:FROM:TO:OVER, "
             "sine:MEAN:AMPLITUDE:PERIOD or staged:R1@D1,R2@D2,... (per second; durations in seconds or with "
             "s, m, h; after the last stage its rate holds)"},
    {.name = "replay-log",
     .kind = CLI_U32,
     .field = CFG_FIELD(replay_log),
     .max = 100000,
     .noun = "a number of notifications",
     .metavar = "N",
     .dflt = "16",
     .help = "notifications a streaming device keeps for replay"},
    {.name = "report",
     .kind = CLI_STRING,
     .field = CFG_FIELD(report_path),
     .metavar = "FILE",
     .help = "JSON counts per device and subscriber, at exit and on SIGUSR1"},
    {.name = "flap-rate",
     .kind = CLI_DOUBLE,
     .field = CFG_FIELD(flap_rate),
     .dmin = 0,
     .dmax = 1e5,
     .unit = "per device per second",
     .metavar = "R",
     .help = "interface flaps per device per second (Poisson): oper status in both views, if-state-change "
             "to subscribers, linkDown/linkUp to trap sinks"},
    {.name = "trap-sink",
     .kind = CLI_STRING,
     .custom = cli_trap_sink,
     REPEATS(trap_sink_count),
     .metavar = "HOST:PORT",
     .help = "where traps go (numeric IPv4)"},
    {.name = "trap-inform",
     .kind = CLI_BOOL,
     .field = CFG_FIELD(trap_inform),
     .help = "send informs (acknowledged, retried) instead of traps"},
    {.name = "trap-community",
     .kind = CLI_STRING,
     .field = CFG_FIELD(trap_community),
     .metavar = "C",
     .dflt = "public",
     .help = "community of traps and informs"},
    {.name = "trap-version",
     .kind = CLI_STRING,
     .custom = cli_trap_version,
     .metavar = "1|2c|3",
     .dflt_shown = "2c",
     .help = "SNMP version of traps and informs: 1 (Trap-PDU, no informs), 2c, or 3 (USM, --trap-v3-user)"},
    {.name = "trap-v3-user",
     .kind = CLI_STRING,
     .custom = cli_trap_v3_user,
     .metavar = "NAME:AUTH:AUTHPASS:PRIV:PRIVPASS",
     .help = "USM user of v3 traps (keys localized for each device's engine) and informs (the receiver's)"},
    {.name = "trap-rate",
     .kind = CLI_STRING,
     .custom = cli_rate_profile,
     .field = CFG_FIELD(trap_rate),
     .metavar = "PROFILE",
     .help = "background traps per device per second, drawn from the trap catalog: a rate profile as "
             "--syslog-rate takes; 0: none"},
    {.name = "trap-catalog",
     .kind = CLI_STRING,
     .field = CFG_FIELD(trap_catalog),
     .metavar = "FILE",
     .help = "JSON trap catalog (docs/TRAP_CATALOG.md); default: the device kind's under schemas/traps/"},
    {.name = "syslog-sink",
     .kind = CLI_STRING,
     .custom = cli_syslog_sink,
     REPEATS(syslog_sink_count),
     .metavar = "URL",
     .help = "where every device's syslog goes: udp://HOST:PORT, tcp://HOST:PORT or tls://HOST:PORT (IPv6 in "
             "brackets; ports 514, TLS 6514 when left out)"},
    {.name = "syslog-format",
     .kind = CLI_CHOICE,
     .field = CFG_FIELD(syslog_format),
     .choices = "rfc5424|rfc3164",
     .dflt = "rfc5424",
     .help = "syslog message format"},
    {.name = "syslog-framing",
     .kind = CLI_CHOICE,
     .field = CFG_FIELD(syslog_framing),
     .choices = "octet-counting|lf",
     .dflt = "octet-counting",
     .help = "framing of syslog over TCP (RFC 6587); TLS always counts octets (RFC 5425)"},
    {.name = "syslog-rate",
     .kind = CLI_STRING,
     .custom = cli_rate_profile,
     .field = CFG_FIELD(syslog_rate),
     .metavar = "PROFILE",
     .help = "background syslog lines per device per second, drawn from the catalog: R, linear:FROM:TO:OVER, "
             "sine:MEAN:AMPLITUDE:PERIOD or staged:R1@D1,R2@D2,... (after the last stage its rate holds); "
             "0: none"},
    {.name = "push-arrivals",
     .kind = CLI_CHOICE,
     .field = CFG_FIELD(push_arrivals),
     .choices = "paced|poisson",
     .dflt = "paced",
     .help = "arrivals of every push stream's rate profile: paced (the k-th when the rate's integral reaches "
             "k, devices' phases spread) or poisson (non-homogeneous, each device its own stream of --seed)"},
    {.name = "syslog-catalog",
     .kind = CLI_STRING,
     .field = CFG_FIELD(syslog_catalog),
     .metavar = "FILE",
     .help =
         "syslog lines devices draw from (docs/SYSLOG_CATALOG.md); default: the device kind's built-in one"},
    {.name = "run-tag",
     .kind = CLI_STRING,
     .custom = cli_run_tag,
     .metavar = "TEXT",
     .help =
         "tag written into every syslog line, every trap (fleetsimRunTag.0) and the report, to pick the run "
         "out on a shared collector"},
    {.name = "push-window",
     .kind = CLI_STRING,
     .custom = cli_push_window,
     .metavar = "START,END",
     .help =
         "the run window, seconds from ready (END empty: open): what the fleet pushes on its own goes out "
         "only inside it; before START it is counted suppressed_pre_window, after END the queues drain"},
    {.name = "seed",
     .kind = CLI_U64,
     .field = CFG_FIELD(seed),
     .metavar = "N",
     .dflt = "1",
     .help = "fleet seed: devices' counters, uptimes and draws"},
    {.name = "clock-fixed",
     .kind = CLI_U64,
     .custom = cli_clock_fixed,
     .min = 1,
     .max = 1ull << 40,
     .noun = "a Unix time in seconds",
     .metavar = "SECONDS",
     .help = "freeze the devices' clock at this Unix time (for tests)"},
    {.name = "controller-ip",
     .kind = CLI_STRING,
     .field = CFG_FIELD(controller_ip),
     .metavar = "ADDR",
     .help = "register every device with this RESTCONF controller once listening"},
    {.name = "controller-port",
     .kind = CLI_U32,
     .field = CFG_FIELD(controller_port),
     .min = 1,
     .max = 65535,
     .noun = "a port",
     .metavar = "P",
     .dflt = "8181",
     .help = "its RESTCONF port"},
    {.name = "controller-auth-username",
     .aliases = {"authUsername"},
     .kind = CLI_STRING,
     .field = CFG_FIELD(controller_username),
     .metavar = "U",
     .dflt = "admin",
     .help = "its login's user"},
    {.name = "controller-auth-password",
     .aliases = {"authPassword"},
     .kind = CLI_STRING,
     .field = CFG_FIELD(controller_password),
     .metavar = "P",
     .dflt = "admin",
     .help = "its login's password"},
    {.name = "generate-configs-batch-size",
     .kind = CLI_U32,
     .field = CFG_FIELD(configs_batch_size),
     .min = 1,
     .max = 1000000,
     .metavar = "N",
     .dflt = "1",
     .help = "devices per registration request (1 is OpenDaylight's)"},
    {.name = "generate-config-address",
     .kind = CLI_STRING,
     .field = CFG_FIELD(config_address),
     .metavar = "A",
     .dflt_shown = "--ip; 127.0.0.1 for 0.0.0.0",
     .help = "the address the controller is told to connect to; with --ip-per-device device i gets A+i"},
    {.name = "time-out",
     .aliases = {"timeout"},
     .kind = CLI_U32,
     .field = CFG_FIELD(register_timeout_s),
     .max = 604800,
     .unit = "seconds",
     .metavar = "S",
     .dflt = "20",
     .help = "bound on the whole registration, seconds; an unreachable controller is retried with backoff "
             "until then (0: no bound; 20 is OpenDaylight's)"},
    {.name = "register-only",
     .kind = CLI_FLAG,
     .field = CFG_FIELD(register_only),
     .help = "register every device with --controller-ip in batches and exit, serving nothing (exit 1 "
             "unless all were registered): a job's registration of a sharded fleet"},
    {.name = "emit-inventory",
     .kind = CLI_STRING,
     .field = CFG_FIELD(emit_inventory),
     .metavar = "FILE",
     .help = "write the fleet's inventory to FILE and exit (no network call)"},
    {.name = "inventory-format",
     .kind = CLI_CHOICE,
     .field = CFG_FIELD(inventory_format),
     .choices = "odl-json|opennms-requisition|prometheus-sd|csv|odl-callhome",
     .metavar = "F",
     .dflt = "odl-json",
     .help = "odl-json, opennms-requisition, prometheus-sd, csv or odl-callhome (OpenDaylight's call-home "
             "allowed-devices with each device's own host key)"},
    {.name = "rpc-config",
     .kind = CLI_STRING,
     .field = CFG_FIELD(rpc_config),
     .metavar = "FILE",
     .help = "custom RPC replies (OpenDaylight's <rpcs> format)"},
    {.name = "metrics",
     .kind = CLI_STRING,
     .field = CFG_FIELD(metrics_addr),
     .metavar = "ADDR:PORT",
     .help = "serve Prometheus metrics over HTTP (ADDR defaults to 127.0.0.1)"},
    {.name = "metrics-per-device",
     .kind = CLI_FLAG,
     .field = CFG_FIELD(metrics_per_device),
     .help = "add per-device series (one per device and counter)"},
    {.name = "api-token-file",
     .kind = CLI_STRING,
     .field = CFG_FIELD(api_token_file),
     .metavar = "FILE",
     .help = "the control API (/api/v1/ on the --metrics server) requires this file's bearer token"},
    {.name = "status-interval",
     .kind = CLI_U32,
     .field = CFG_FIELD(status_interval_s),
     .max = 86400,
     .unit = "seconds",
     .metavar = "S",
     .dflt = "10",
     .help = "a one-line status on stderr every S seconds, 0: none"},
    {.name = "fleet",
     .kind = CLI_STRING,
     .field = CFG_FIELD(fleet_file),
     .metavar = "FILE",
     .help = "several kinds of device: a JSON or XML file of groups, each its own count, addresses and "
             "device options (see README)"},
    {.name = "scenario",
     .kind = CLI_STRING,
     .field = CFG_FIELD(scenario_file),
     .metavar = "FILE",
     .help = "a timeline of actions on the running fleet (reboots, outages, growth; JSON of "
             "schemas/fleetsim-scenario.yang, see README)"},
    {.name = "help", .aliases = {"h"}, .kind = CLI_HELP, .help = "this text"},
    {.name = "version", .kind = CLI_VERSION, .help = "fleetsim's version"},

    {.name = "exi",
     .kind = CLI_BOOL,
     .custom = cli_note_exi,
     .section = ODL_SECTION,
     .help = "fleetsim speaks no EXI: true warns, nothing is advertised"},
    {.name = "md-sal",
     .kind = CLI_BOOL,
     .custom = cli_note_md_sal,
     .help = "fleetsim's datastore is always a real, validating one"},
    {.name = "controller-destination",
     .kind = CLI_STRING,
     .custom = cli_controller_destination,
     .metavar = "IP:PORT",
     .help = "the older form of --controller-ip and --controller-port"},
    {.name = "generate-config-connection-timeout",
     .kind = CLI_U32,
     .custom = cli_connection_timeout,
     .min = 1,
     .max = 86400000,
     .unit = "ms",
     .metavar = "MS",
     .help = "the hello timeout (as --hello-timeout, in ms)"},
    {.name = "devices-per-port",
     .kind = CLI_U32,
     .field = CFG_FIELD(devices_per_port),
     .min = 1,
     .max = 1000,
     .metavar = "N",
     .dflt = "1",
     .help = "register and list N nodes per device (<port>-sim-device, then <port>-sim-device-1 ...): N "
             "mounts of one device, as OpenDaylight's"},
    {.name = "distribution-folder",
     .kind = CLI_STRING,
     .custom = cli_note_distribution,
     .metavar = "DIR",
     .help = "accepted; says at start that fleetsim starts no controller"},
    {.name = "edit-content",
     .kind = CLI_STRING,
     .custom = cli_note_edit_content,
     .metavar = "FILE",
     .help = "accepted; fleetsim registers devices in its own payload"},
    {.name = "async-requests",
     .kind = CLI_BOOL,
     .custom = cli_note_async_requests,
     .help = "accepted; registration runs from one event loop"},
    {.name = "thread-amount",
     .kind = CLI_U32,
     .custom = cli_note_one_loop,
     .min = 1,
     .max = 1000000,
     .metavar = "N",
     .help = "accepted; registration runs from one event loop"},
    {.name = "throttle",
     .kind = CLI_U32,
     .custom = cli_note_one_loop,
     .min = 1,
     .max = 1000000,
     .metavar = "N",
     .help = "accepted; registration runs from one event loop"},
    {.name = "permit-null-revision",
     .kind = CLI_BOOL,
     .custom = cli_note_null_revision,
     .help = "accepted; modules without a revision always load"},
};

#define CLI_OPT_COUNT (sizeof cli_opts / sizeof cli_opts[0])

static const char usage_head[] =
    "Usage: fleetsim [options]\n"
    "Simulate a fleet of network devices in one process: each a NETCONF server and an SNMP agent.\n"
    "\n";
static const char usage_tail[] =
    "Signals: SIGUSR1 writes the --report file, SIGUSR2 pauses or resumes every notification stream,\n"
    "SIGINT and SIGTERM stop (after writing the report).\n";

/* ------------------------------------------------------------------ lookup, apply, defaults */

/* The table entry named name or one of its aliases (exactly, no abbreviation), or NULL. */
static const struct cli_opt *
cli_opt_named(const char *name)
{
    size_t i, a;

    for (i = 0; i < CLI_OPT_COUNT; i++) {
        if (!strcmp(cli_opts[i].name, name)) {
            return &cli_opts[i];
        }
        for (a = 0; a < CLI_MAX_ALIASES && cli_opts[i].aliases[a]; a++) {
            if (!strcmp(cli_opts[i].aliases[a], name)) {
                return &cli_opts[i];
            }
        }
    }
    return NULL;
}

/* Whether the option's value may be left out (a flag alone means true). */
static int
cli_value_optional(const struct cli_opt *o)
{
    return o->kind == CLI_FLAG;
}

/*
 * Apply one option to c->cfg: the command line, fleet files and the defaults go through here, so each
 * value is checked the same way and a bad one is described the same way. value is kept (not copied) by
 * the options that take text; NULL is a flag given without value.
 */
static enum fleet_err
cli_apply(const struct cli_opt *o, const char *value, struct cli_ctx *c)
{
    if (o->custom) {
        return o->custom(o, value, c);
    }
    return cli_store(o, value, c);
}

void
cli_defaults(struct fleet_config *cfg)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    char err[256];
    struct cli_ctx c = {.cfg = cfg, .err = err, .err_len = sizeof err};
    size_t i;

    memset(cfg, 0, sizeof *cfg);
    cli_config_fix_pointers(cfg);
    for (i = 0; i < CLI_OPT_COUNT; i++) {
        if (cli_opts[i].dflt && cli_apply(&cli_opts[i], cli_opts[i].dflt, &c)) {
            log_error("option table: default of --%s refused: %s", cli_opts[i].name, err);
            assert(!"a default of the option table is refused by its own check");
        }
    }
    cfg->threads = cores > 0 ? (uint32_t)cores : 1;
    /* The table's defaults are text; these constants are what the rest of the program knows them by. */
    assert(cfg->max_msg_bytes == FLEET_DEFAULT_MAX_MSG_BYTES);
    assert(cfg->register_timeout_s == REGISTER_DEFAULT_TIMEOUT_S);
    assert(cfg->replay_log == STREAM_DEFAULT_REPLAY_ENTRIES);
}

void
cli_config_fix_pointers(struct fleet_config *cfg)
{
    cfg->schema_opts.features = cfg->feature_pins;
}

int
cli_option_known(const char *name)
{
    return cli_opt_named(name) != NULL;
}

enum fleet_err
cli_apply_named(const char *name, const char *value, struct fleet_config *cfg, char *err, size_t err_len)
{
    const struct cli_opt *o = cli_opt_named(name);
    struct cli_ctx c = {.cfg = cfg, .err = err, .err_len = err_len};

    if (!o) {
        snprintf(err, err_len, "unknown option \"--%s\" (see --help)", name);
        return FLEET_ERR_NOTFOUND;
    }
    if (o->kind == CLI_HELP || o->kind == CLI_VERSION) {
        snprintf(err, err_len, "--%s only makes sense on the command line", name);
        return FLEET_ERR_INVAL;
    }
    if (!value && !cli_value_optional(o)) {
        snprintf(err, err_len, "option --%s needs a value", name);
        return FLEET_ERR_INVAL;
    }
    return cli_apply(o, value, &c);
}

enum fleet_err
cli_clear_named(const char *name, struct fleet_config *cfg)
{
    const struct cli_opt *o = cli_opt_named(name);

    if (!o) {
        return FLEET_ERR_NOTFOUND;
    }
    if (!o->count_bytes) {
        return FLEET_ERR_INVAL;
    }
    memset((char *)cfg + o->count_field, 0, o->count_bytes);
    return FLEET_OK;
}

/* ------------------------------------------------------------------ --help */

/* One option's lines: its names and value, then its description, repeatability and default. */
static void
usage_option(FILE *out, const struct cli_opt *o)
{
    static const char *const metavars[] = {
        [CLI_BOOL] = "true|false", [CLI_FLAG] = "[=true|false]", [CLI_U32] = "N",     [CLI_U64] = "N",
        [CLI_DOUBLE] = "R",        [CLI_STRING] = "TEXT",        [CLI_CHOICE] = NULL,
    };
    char names[160], extra[160];
    const char *metavar = o->metavar;
    struct textarg_help_pos pos = {.fresh = 1, .indent = CLI_HELP_INDENT, .width = CLI_HELP_WIDTH};
    size_t n, a;

    n = (size_t)snprintf(names, sizeof names, "  --%s", o->name);
    for (a = 0; a < CLI_MAX_ALIASES && o->aliases[a] && n < sizeof names; a++) {
        n += (size_t)snprintf(names + n, sizeof names - n, ", %s%s", o->aliases[a][1] ? "--" : "-",
                              o->aliases[a]);
    }
    if (!metavar && o->kind <= CLI_CHOICE) {
        metavar = o->kind == CLI_CHOICE ? o->choices : metavars[o->kind];
    }
    if (metavar && n < sizeof names) {
        n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", o->kind == CLI_FLAG ? "" : " ", metavar);
    }
    pos.col = n < sizeof names ? n : sizeof names - 1;
    /* Names too long for the column: the description follows after two spaces. */
    pos.col = pos.col + 2 > CLI_HELP_INDENT ? pos.col + 2 : CLI_HELP_INDENT;
    fprintf(out, "%-*s", (int)pos.col, names);
    textarg_help_words(out, o->help, &pos);
    if (o->count_bytes) {
        textarg_help_words(out, "(repeatable)", &pos);
    }
    if (o->dflt || o->dflt_shown) {
        snprintf(extra, sizeof extra, "(default %s)", o->dflt ? o->dflt : o->dflt_shown);
        textarg_help_words(out, extra, &pos);
    }
    fputc('\n', out);
}

/* The --help text: every option of the table, in its order, under its section headings. */
static void
cli_usage(FILE *out)
{
    size_t i;

    fputs(usage_head, out);
    for (i = 0; i < CLI_OPT_COUNT; i++) {
        if (cli_opts[i].section) {
            fprintf(out, "%s\n", cli_opts[i].section);
        }
        usage_option(out, &cli_opts[i]);
    }
    fputs(usage_tail, out);
}

/* ------------------------------------------------------------------ argv */

enum cli_result
cli_parse(int argc, char **argv, struct fleet_config *cfg, char *err, size_t err_len)
{
    /* getopt's array, made from the table: each name and alias, val = 256 + the entry's index. */
    static struct option longopts[CLI_OPT_COUNT * (1 + CLI_MAX_ALIASES) + 1];
    struct cli_ctx c = {.cfg = cfg, .err = err, .err_len = err_len, .ssh_given = -1};
    const struct cli_opt *o;
    const char *value;
    size_t i, a, n = 0;
    int opt;

    for (i = 0; i < CLI_OPT_COUNT; i++) {
        o = &cli_opts[i];
        int has_arg = o->kind == CLI_HELP || o->kind == CLI_VERSION ? no_argument
                      : cli_value_optional(o)                       ? optional_argument
                                                                    : required_argument;
        longopts[n++] = (struct option){o->name, has_arg, NULL, 256 + (int)i};
        for (a = 0; a < CLI_MAX_ALIASES && o->aliases[a]; a++) {
            longopts[n++] = (struct option){o->aliases[a], has_arg, NULL, 256 + (int)i};
        }
    }
    longopts[n] = (struct option){NULL, 0, NULL, 0};

    cli_defaults(cfg);
    opterr = 0;
    optind = 1;
    /* getopt_long_only: "-ip" is read as "--ip", as users of single-dash tools type it, and an unknown
     * word is reported whole (getopt_long would split "-ip" into the short options i and p). */
    while ((opt = getopt_long_only(argc, argv, ":", longopts, NULL)) != -1) {
        if (opt == ':') {
            snprintf(err, err_len, "option %s needs a value", argv[optind - 1]);
            return CLI_ERROR;
        }
        if (opt < 256 || (size_t)(opt - 256) >= CLI_OPT_COUNT) {
            snprintf(err, err_len, "unknown option \"%s\" (see --help)", argv[optind - 1]);
            return CLI_ERROR;
        }
        o = &cli_opts[opt - 256];
        if (o->kind == CLI_HELP) {
            cli_usage(stdout);
            return CLI_EXIT_OK;
        }
        if (o->kind == CLI_VERSION) {
            printf("fleetsim %s\n", FLEETSIM_VERSION);
            return CLI_EXIT_OK;
        }
        value = cli_value_optional(o) ? textarg_flag_value(optarg, argc, argv, &optind) : optarg;
        c.next = optind < argc ? argv[optind] : NULL;
        c.took_next = 0;
        if (cli_apply(o, value, &c)) {
            return CLI_ERROR;
        }
        if (c.took_next) {
            optind++;
        }
    }
    if (optind < argc) {
        snprintf(err, err_len, "unexpected argument \"%s\" (see --help)", argv[optind]);
        return CLI_ERROR;
    }
    if (c.transport_given && c.ssh_given >= 0 && c.ssh_given != !strcmp(c.transport_given, "ssh")) {
        snprintf(err, err_len, "--ssh %s contradicts --transport %s", c.ssh_given ? "true" : "false",
                 c.transport_given);
        return CLI_ERROR;
    }
    cfg->ssh = !cfg->tls && cfg->ssh;
    if (cfg->tls && c.call_home_port_default && cfg->call_home_port == CALLHOME_DEFAULT_PORT) {
        cfg->call_home_port = CALLHOME_DEFAULT_TLS_PORT;
        netaddr_endpoint_set_port(&cfg->call_home_addr, CALLHOME_DEFAULT_TLS_PORT);
    }
    if (cfg->shard_count && cfg->device_offset_given) {
        snprintf(err, err_len, "--shard and --device-offset both say which devices to serve: give one");
        return CLI_ERROR;
    }
    if (cfg->tls_cert_per_device && cfg->tls_cert) {
        snprintf(err, err_len,
                 "--tls-cert-per-device contradicts --tls-cert (devices' certificates are signed "
                 "by the fleet's CA)");
        return CLI_ERROR;
    }
    if (!cfg->issue_client_cert != !cfg->issue_out) {
        snprintf(err, err_len, "--issue-client-cert NAME and --out PREFIX go together");
        return CLI_ERROR;
    }
    return CLI_RUN;
}
