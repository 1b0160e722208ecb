/*
 * fleetsim-stress's command line: one table of options (name, alias, kind of
 * value, the modes it is for, bounds, default, help, the struct
 * stress_options field it fills) drives the defaults, the parse, the error
 * messages, getopt's option array and --help, as Redis's src/config.c does
 * with static_configs[] and as testtool/cli.c does for fleetsim. An option
 * whose meaning differs by mode (--port's default, --timeout's unit) has a
 * row per meaning; only values that are more than a number, a word or
 * true/false have a parse function of their own. Defaults follow
 * OpenDaylight's stress client except the port, which matches fleetsim's
 * first device (its NETCONF port, or its SNMP port for "snmp").
 */
#include "options.h"
#include "ber.h"
#include "recon_format.h"
#include "shard.h"
#include "textarg.h"

#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The kind of value an option takes: how it is parsed, refused, and shown in --help. */
enum opt_kind {
    OPT_BOOL,    /* true or false in any case (int field) */
    OPT_FLAG,    /* the same, the value optional: alone it means true (int field) */
    OPT_U32,     /* a whole number in [min, max] (uint32_t field) */
    OPT_U64,     /* a whole number in [min, max] (uint64_t field) */
    OPT_DOUBLE,  /* a decimal number in [dmin, dmax] (double field) */
    OPT_TEXT,    /* text, kept as given; with noun it must not be empty (const char * field) */
    OPT_CHOICE,  /* one of the words of choices: their index is stored (int or enum field) */
    OPT_HELP,    /* print --help and exit 0 */
    OPT_VERSION, /* print the version and exit 0 */
    OPT_NOTE,    /* a --help line only (metavar holds the names): options described in another section */
};

/* Modes an option row is for: a bit per enum stress_mode; 0 is every mode. */
#define MODE(m)    (1u << (m))
#define M_EDIT     MODE(STRESS_EDIT)
#define M_MOUNT    MODE(STRESS_MOUNT)
#define M_SNMP     MODE(STRESS_SNMP)
#define M_NOTIFY   MODE(STRESS_NOTIFY)
#define M_RECON    MODE(STRESS_RECONCILE)
#define M_CTRL     MODE(STRESS_CONTROLLER_MOUNT)
#define M_RECORD   MODE(STRESS_RECORD)
#define M_RESTCONF MODE(STRESS_RESTCONF)
#define M_REPORT   MODE(STRESS_REPORT)
#define M_MERGE    MODE(STRESS_MERGE)
#define M_CEILING  MODE(STRESS_CEILING)
#define M_PUSH     MODE(STRESS_PUSH)

/* Column at which --help's descriptions start, and the width it keeps to. */
#define HELP_INDENT 29
#define HELP_WIDTH  110

/* What a parse works on: the options, the option's name as given, the command line's next word. */
struct opt_ctx {
    struct stress_options *o; /* the options being filled */
    const char *given;        /* the name used ("async" or "async-requests"): messages name it */
    const char *next;         /* the command line's word after the value, NULL at the end */
    int took_next;            /* set by a parse that used next as a second value (--auth USER PASS) */
    char *err;                /* where a refused value is described */
    size_t err_len;           /* bytes of err */
};

struct stress_opt;
/* A parse of its own, for an option that is more than its kind: checks value and fills c->o. */
typedef int (*opt_custom_fn)(const struct stress_opt *t, const char *value, struct opt_ctx *c);

/* One row of the table: an option, or one mode's meaning of it. */
struct stress_opt {
    const char *name;       /* long name without dashes */
    const char *alias;      /* another name (OpenDaylight's), or NULL */
    enum opt_kind kind;     /* the value's kind */
    unsigned modes;         /* MODE() bits this row is for; 0: every mode */
    size_t field;           /* offsetof the value in struct stress_options (without custom) */
    uint64_t min, max;      /* OPT_U32/U64 bounds; max 0: the type's, unnamed in messages */
    int max_unnamed;        /* 1: messages name only the lower bound ("from 1") */
    double dmin, dmax;      /* OPT_DOUBLE bounds */
    const char *noun;       /* "must be NOUN from ...": NULL for "a number"; OPT_TEXT: "needs NOUN" */
    const char *unit;       /* after the bounds in the message ("(0: no limit)"), or NULL */
    const char *choices;    /* OPT_CHOICE: the words, '|' between them */
    const char *metavar;    /* --help's name of the value; NULL: from the kind */
    const char *dflt;       /* default, applied through the parse, or NULL */
    const char *dflt_shown; /* default shown instead of dflt (or set in code), or NULL */
    const char *help;       /* --help's description (wrapped to the width) */
    const char *section;    /* a --help heading printed before this row, or NULL */
    opt_custom_fn custom;   /* a parse of its own instead of storing at field, or NULL */
};

#define FIELD(member) offsetof(struct stress_options, member)

/* Limits of controller-mount's times, seconds. */
#define OPTIONS_INTERVAL_MIN_S    0.01     /* polls at most 100 times a second */
#define OPTIONS_INTERVAL_MAX_S    3600.0   /* and at least once an hour */
#define OPTIONS_RUN_TIMEOUT_MAX_S 604800.0 /* a week */

/* Limits of ceiling's rates (messages per second per device) and times (seconds). */
#define OPTIONS_CEILING_RATE_MIN   0.001
#define OPTIONS_CEILING_RATE_MAX   1000000.0
#define OPTIONS_CEILING_TIME_MIN_S 0.1
#define OPTIONS_CEILING_TIME_MAX_S 86400.0

/* Limits of the snmp options: a GETBULK request and its window of columns stay bounded. */
#define OPTIONS_MAX_REPETITIONS_MAX 10000 /* max-repetitions accepted */
#define OPTIONS_MAX_VARS_MAX        1000  /* columns per request accepted */
#define OPTIONS_OIDS_MAX            10000 /* OIDs in --oids */

/* OPT_CHOICE stores the word's index as an int in enum fields too. */
_Static_assert(sizeof(enum mount_action) == sizeof(int), "--on-mount's field holds an int");

/* ------------------------------------------------------------------ generic values */

/* Refuse value in the option's own words, from its row; @return -1. */
static int
opt_refuse(const struct stress_opt *t, const char *value, struct opt_ctx *c)
{
    char bounds[96] = "";
    size_t n = 0;

    switch (t->kind) {
    case OPT_BOOL:
    case OPT_FLAG:
        snprintf(c->err, c->err_len, "--%s takes true or false, not \"%s\"", c->given, value);
        break;
    case OPT_U32:
    case OPT_U64:
        if (t->min || t->max) {
            n += (size_t)snprintf(bounds, sizeof bounds, " from %llu", (unsigned long long)t->min);
        }
        if (t->max && !t->max_unnamed) {
            snprintf(bounds + n, sizeof bounds - n, " to %llu", (unsigned long long)t->max);
        }
        snprintf(c->err, c->err_len, "--%s must be %s%s%s%s, not \"%s\"", c->given,
                 t->noun ? t->noun : "a number", bounds, t->unit ? " " : "", t->unit ? t->unit : "", value);
        break;
    case OPT_DOUBLE:
        snprintf(c->err, c->err_len, "--%s must be %s from %.15g to %.15g, not \"%s\"", c->given,
                 t->noun ? t->noun : "a number", t->dmin, t->dmax, value);
        break;
    case OPT_TEXT:
        snprintf(c->err, c->err_len, "--%s needs %s", c->given, t->noun);
        break;
    case OPT_CHOICE: {
        /* "a|b|c" reads "a, b or c" */
        char words[160];
        const char *p = t->choices, *bar;
        size_t w = 0;
        for (; (bar = strchr(p, '|')); p = bar + 1) {
            w += (size_t)snprintf(words + w, sizeof words - w, "%s%.*s", w ? ", " : "", (int)(bar - p), p);
        }
        snprintf(words + w, sizeof words - w, " or %s", p);
        snprintf(c->err, c->err_len, "--%s takes %s, not \"%s\"", c->given, words, value);
        break;
    }
    default:
        snprintf(c->err, c->err_len, "--%s does not take \"%s\"", c->given, value);
        break;
    }
    return -1;
}

/* The index of word in a '|'-separated list, or -1. */
static int
opt_word_index(const char *word, const char *list)
{
    size_t len = strlen(word);
    const char *p = list;

    for (int i = 0;; i++) {
        size_t n = strcspn(p, "|");
        if (n == len && !strncmp(p, word, len)) {
            return i;
        }
        if (!p[n]) {
            return -1;
        }
        p += n + 1;
    }
}

/*
 * Parse value by t's kind and bounds, one function per kind of destination: each writes only its own
 * type, so no store's size depends on the kind (a memcpy sized by the kind, inlined into a caller that
 * passed a uint32_t, was a gcc -Warray-bounds error in Release builds, issue 28). A refused value is
 * described in c->err. Custom parses call them for the part that is generic. Each returns 0 or -1.
 */
static int
opt_parse_bool(const struct stress_opt *t, const char *value, int *dst, struct opt_ctx *c)
{
    assert(t->kind == OPT_BOOL || t->kind == OPT_FLAG);
    return textarg_bool(value, dst) ? opt_refuse(t, value, c) : 0;
}

static int
opt_parse_u32(const struct stress_opt *t, const char *value, uint32_t *dst, struct opt_ctx *c)
{
    assert(t->kind == OPT_U32);
    return textarg_u32(value, (uint32_t)t->min, t->max ? (uint32_t)t->max : UINT32_MAX, dst)
               ? opt_refuse(t, value, c)
               : 0;
}

static int
opt_parse_u64(const struct stress_opt *t, const char *value, uint64_t *dst, struct opt_ctx *c)
{
    assert(t->kind == OPT_U64);
    return textarg_u64(value, t->min, t->max ? t->max : UINT64_MAX, dst) ? opt_refuse(t, value, c) : 0;
}

static int
opt_parse_double(const struct stress_opt *t, const char *value, double *dst, struct opt_ctx *c)
{
    char *end;
    double d;

    assert(t->kind == OPT_DOUBLE);
    errno = 0;
    d = strtod(value, &end);
    if (end == value || *end || errno || !(d >= t->dmin && d <= t->dmax)) {
        return opt_refuse(t, value, c);
    }
    *dst = d;
    return 0;
}

/* OPT_CHOICE: the word's index in choices. */
static int
opt_parse_choice(const struct stress_opt *t, const char *value, int *dst, struct opt_ctx *c)
{
    int i;

    assert(t->kind == OPT_CHOICE);
    if ((i = opt_word_index(value, t->choices)) < 0) {
        return opt_refuse(t, value, c);
    }
    *dst = i;
    return 0;
}

/* OPT_TEXT: kept as given, not copied. */
static int
opt_parse_text(const struct stress_opt *t, const char *value, const char **dst, struct opt_ctx *c)
{
    assert(t->kind == OPT_TEXT);
    if (t->noun && !*value) {
        return opt_refuse(t, value, c);
    }
    *dst = value;
    return 0;
}

/*
 * Store value in the options' field of t, through a pointer of the field's type: the table pairs each
 * field with its kind (OPT_BOOL, OPT_FLAG and OPT_CHOICE: int or an enum, OPT_U32: uint32_t, OPT_U64:
 * uint64_t, OPT_DOUBLE: double, OPT_TEXT: const char *).
 */
static int
opt_store(const struct stress_opt *t, const char *value, struct opt_ctx *c)
{
    void *field = (char *)c->o + t->field;

    switch (t->kind) {
    case OPT_BOOL:
    case OPT_FLAG:
        return opt_parse_bool(t, value, (int *)field, c);
    case OPT_U32:
        return opt_parse_u32(t, value, (uint32_t *)field, c);
    case OPT_U64:
        return opt_parse_u64(t, value, (uint64_t *)field, c);
    case OPT_DOUBLE:
        return opt_parse_double(t, value, (double *)field, c);
    case OPT_CHOICE:
        return opt_parse_choice(t, value, (int *)field, c);
    case OPT_TEXT:
        return opt_parse_text(t, value, (const char **)field, c);
    default:
        return opt_refuse(t, value, c);
    }
}

/* ------------------------------------------------------------------ options of their own */

static int
opt_ip(const struct stress_opt *t, const char *value, struct opt_ctx *c)
{
    (void)t;
    if (netaddr_parse(value, &c->o->ip_fam, &c->o->ip)) {
        snprintf(c->err, c->err_len,
                 "--%s must be an IPv4 or IPv6 address (no brackets, no port), not \"%s\"", c->given, value);
        return -1;
    }
    return 0;
}

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
    struct oid oid;
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
        if (oid_parse(item, &oid) != FLEET_OK || oid.len < 2) {
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

static int
opt_v3_user(const struct stress_opt *t, const char *value, struct opt_ctx *c)
{
    const char *why = parse_v3_user(value, &c->o->v3);

    (void)t;
    if (why) {
        snprintf(c->err, c->err_len, "--%s NAME:AUTH:AUTHKEY:PRIV:PRIVKEY: %s", c->given, why);
        return -1;
    }
    c->o->v3_user = value;
    return 0;
}

static int
opt_oids(const struct stress_opt *t, const char *value, struct opt_ctx *c)
{
    char bad[64];

    (void)t;
    if (check_oids(value, bad, sizeof bad)) {
        snprintf(c->err, c->err_len,
                 "--%s takes dotted OIDs (at most %d) separated by commas; \"%s\" is not one", c->given,
                 OPTIONS_OIDS_MAX, bad);
        return -1;
    }
    c->o->oids = value;
    return 0;
}

static int
opt_seq_element(const struct stress_opt *t, const char *value, struct opt_ctx *c)
{
    (void)t;
    if (!*value || strpbrk(value, "<>/: \t\r\n\"'=")) {
        snprintf(c->err, c->err_len, "--%s takes the local name of an element, not \"%s\"", c->given, value);
        return -1;
    }
    c->o->seq_element = value;
    return 0;
}

static int
opt_shard(const struct stress_opt *t, const char *value, struct opt_ctx *c)
{
    (void)t;
    if (shard_parse(value, &c->o->shard_index, &c->o->shard_count)) {
        snprintf(c->err, c->err_len, "--%s takes I/N, I from 0 to N-1 and N from 1 to %u, not \"%s\"",
                 c->given, (unsigned)SHARD_MAX_PARTS, value);
        return -1;
    }
    return 0;
}

/*
 * --shard I/N: this client's part of the devices (shard.h's split, as fleetsim --shard splits the fleet)
 * and of the totals (edits; restconf's streams). @return 0, or -1 when the part is empty.
 */
static int
take_shard(struct stress_options *o, char *err, size_t err_len)
{
    uint32_t first, count;

    if (!o->shard_count) {
        return 0;
    }
    first = (uint32_t)shard_first(o->device_count, o->shard_index, o->shard_count);
    count = (uint32_t)shard_size(o->device_count, o->shard_index, o->shard_count);
    if (o->mode == STRESS_RESTCONF) {
        /* restconf's devices are its streams' ports, from --device-port-range-start */
        first = (uint32_t)shard_first(o->threads, o->shard_index, o->shard_count);
        count = (uint32_t)shard_size(o->threads, o->shard_index, o->shard_count);
        o->device_port_start += o->same_device ? 0 : first;
        o->threads = count;
    } else if (o->ip_per_device) {
        o->ip += first;
    } else {
        o->port += first;
    }
    if (o->mode != STRESS_RESTCONF) {
        o->device_count = count;
    }
    o->edits = shard_size(o->edits, o->shard_index, o->shard_count);
    if (!count || (o->edits == 0 && (o->mode == STRESS_EDIT || o->mode == STRESS_RESTCONF))) {
        snprintf(err, err_len, "--shard %u/%u: part %u of the %s is empty", (unsigned)o->shard_index,
                 (unsigned)o->shard_count, (unsigned)o->shard_index, !count ? "devices" : "edits");
        return -1;
    }
    return 0;
}

static int
opt_tolerance(const struct stress_opt *t, const char *value, struct opt_ctx *c)
{
    (void)t;
    if (parse_tolerance(value, &c->o->tolerance)) {
        snprintf(c->err, c->err_len,
                 "--%s takes a share of sent like 0.5%% or 0.005 (at most 100%%), not \"%s\"", c->given,
                 value);
        return -1;
    }
    return 0;
}

/* ceiling's durations: "15m", "5s", "500ms", or seconds; bounds from the row. */
static int
opt_duration(const struct stress_opt *t, const char *value, struct opt_ctx *c)
{
    if (textarg_duration_s(value, t->dmin, t->dmax, (double *)(void *)((char *)c->o + t->field))) {
        snprintf(c->err, c->err_len,
                 "--%s takes a duration like 500ms, 5s, 15m or 1h (from %.15gs to %.15gs), not \"%s\"",
                 c->given, t->dmin, t->dmax, value);
        return -1;
    }
    return 0;
}

/* ceiling's --dropped NAME=PROBE and --sut KEY=VALUE: repeatable, a name before '='. */
static int
opt_named_pair(const struct stress_opt *t, const char *value, struct opt_ctx *c)
{
    int dropped = !strcmp(t->name, "dropped");
    struct stress_files *f = dropped ? &c->o->dropped : &c->o->sut;
    unsigned max = dropped ? CEILING_DROPPED_MAX : STRESS_FILES_MAX;
    const char *eq = strchr(value, '=');

    if (!eq || eq == value || !eq[1] || (size_t)(eq - value) > 48) {
        snprintf(c->err, c->err_len, "--%s takes %s, a name of 1 to 48 characters before '=', not \"%s\"",
                 c->given, dropped ? "NAME=PROBE" : "KEY=VALUE", value);
        return -1;
    }
    if (f->count == max) {
        snprintf(c->err, c->err_len, "--%s may be given at most %u times", c->given, max);
        return -1;
    }
    f->paths[f->count++] = value;
    return 0;
}

/* reconcile's files: each of --sent, --received, --report may repeat (a report per shard); the first one
 * also fills the single path the checks read. */
static int
opt_recon_file(const struct stress_opt *t, const char *value, struct opt_ctx *c)
{
    struct stress_options *o = c->o;
    int sent = !strcmp(t->name, "sent"), received = !strcmp(t->name, "received");
    struct stress_files *f = sent ? &o->sent_files : received ? &o->received_files : &o->report_files;

    if (f->count == STRESS_FILES_MAX) {
        snprintf(c->err, c->err_len, "--%s may be given at most %d times", c->given, STRESS_FILES_MAX);
        return -1;
    }
    f->paths[f->count++] = value;
    if (f->count == 1) {
        *(sent ? &o->sent_path : received ? &o->received_path : &o->report_path) = value;
    }
    return 0;
}

/* OpenDaylight's -1 means one batch of everything, as does 0 here. */
static int
opt_edit_batch_size(const struct stress_opt *t, const char *value, struct opt_ctx *c)
{
    if (!strcmp(value, "-1")) {
        c->o->batch_size = 0;
        return 0;
    }
    return opt_parse_u64(t, value, &c->o->batch_size, c);
}

/* restconf's --timeout is minutes for the whole run, as OpenDaylight's REST perf client. */
static int
opt_restconf_timeout(const struct stress_opt *t, const char *value, struct opt_ctx *c)
{
    uint32_t minutes;

    if (opt_parse_u32(t, value, &minutes, c)) {
        return -1;
    }
    c->o->run_timeout_s = minutes * 60.0;
    return 0;
}

/* record's --snmp COMMUNITY: walk the agent too. */
static int
opt_record_snmp(const struct stress_opt *t, const char *value, struct opt_ctx *c)
{
    if (opt_parse_text(t, value, &c->o->community, c)) {
        return -1;
    }
    c->o->snmp_walk = 1;
    return 0;
}

/* --ncx-connect[=SSHPORT]: alone or true sends the message (port attribute --port), false does not. */
static int
opt_ncx_connect(const struct stress_opt *t, const char *value, struct opt_ctx *c)
{
    (void)t;
    c->o->ncx_connect = !value || strcmp(value, "false");
    if (value && strcmp(value, "true") && strcmp(value, "false") &&
        textarg_u32(value, 1, 65535, &c->o->ncx_ssh_port)) {
        snprintf(c->err, c->err_len, "--%s takes the SSH port netconfd allows (1 to 65535), not \"%s\"",
                 c->given, value);
        return -1;
    }
    return 0;
}

static int
opt_destination(const struct stress_opt *t, const char *value, struct opt_ctx *c)
{
    (void)t;
    if (value[0] != '/') {
        snprintf(c->err, c->err_len, "--%s must start with '/', not \"%s\"", c->given, value);
        return -1;
    }
    c->o->destination = value;
    return 0;
}

/* OpenDaylight's --auth takes two words, USER then PASS. */
static int
opt_auth(const struct stress_opt *t, const char *value, struct opt_ctx *c)
{
    (void)t;
    if (!c->next || !strncmp(c->next, "--", 2)) {
        snprintf(c->err, c->err_len, "--%s takes two words: USER PASS", c->given);
        return -1;
    }
    c->o->username = value;
    c->o->password = c->next;
    c->took_next = 1;
    return 0;
}

/* ------------------------------------------------------------------ the table */

/*
 * A row with modes 0 is the option in every mode; a row with modes is that mode's meaning and is preferred
 * there (rows of one name have disjoint modes). A mode without a row of its own takes the first row of the
 * name. Defaults: each field starts from the default of its first row, then the rows of the mode apply
 * theirs.
 */
static const struct stress_opt opts[] = {
    {.name = "ip",
     .kind = OPT_TEXT,
     .custom = opt_ip,
     .metavar = "ADDR",
     .dflt = "127.0.0.1",
     .section = "Common options:",
     .help = "server address, IPv4 or IPv6 without brackets (restconf: the controller's)"},
    {.name = "port",
     .kind = OPT_U32,
     .field = FIELD(port),
     .min = 1,
     .max = 65535,
     .noun = "a port",
     .metavar = "P",
     .dflt = "17830",
     .help = "server port (snmp and restconf: below)"},
    {.name = "device-count",
     .kind = OPT_U32,
     .field = FIELD(device_count),
     .min = 1,
     .max = 1000000,
     .metavar = "D",
     .dflt = "1",
     .help = "servers on ports P..P+D-1"},
    {.name = "ip-per-device",
     .kind = OPT_FLAG,
     .field = FIELD(ip_per_device),
     .help = "servers on addresses ADDR..ADDR+D-1, all on port P"},
    {.name = "shard",
     .kind = OPT_TEXT,
     .modes = M_EDIT | M_MOUNT | M_SNMP | M_NOTIFY | M_RESTCONF | M_PUSH,
     .custom = opt_shard,
     .metavar = "I/N",
     .help = "take part I (0 to N-1) of N of the devices (as fleetsim --shard: floor(I*D/N) to "
             "floor((I+1)*D/N)-1) and of --edits (restconf: of the streams), one client host of N"},
    {.name = "msg-timeout",
     .kind = OPT_U32,
     .field = FIELD(msg_timeout_s),
     .min = 1,
     .max = 86400,
     .noun = "seconds",
     .metavar = "S",
     .dflt = "60",
     .help = "seconds to wait for an answer"},
    {.name = "legacy-framing",
     .kind = OPT_FLAG,
     .field = FIELD(legacy_framing),
     .help = "offer only base:1.0 (end-of-message framing)"},
    {.name = "json",
     .kind = OPT_TEXT,
     .field = FIELD(json_path),
     .metavar = "FILE",
     .help = "write a manifest: parameters, server hello, results"},
    {.name = "scenario",
     .kind = OPT_TEXT,
     .modes = M_EDIT | M_MOUNT | M_SNMP | M_NOTIFY | M_CTRL | M_RESTCONF | M_PUSH,
     .field = FIELD(scenario_path),
     .metavar = "FILE",
     .help = "the fleet's --scenario file: the manifest names it (its SHA-256 and seed), so runs compare"},
    {.name = "tcp-preamble",
     .kind = OPT_TEXT,
     .field = FIELD(preamble_path),
     .metavar = "FILE",
     .help = "bytes to send before the hello (e.g. netconfd's tcp-direct connect message)"},
    {.name = "tcp-header",
     .kind = OPT_TEXT,
     .field = FIELD(tcp_header),
     .metavar = "TEXT",
     .help = "a line sent before the hello on plain TCP (OpenDaylight's thin-client header): TEXT without "
             "its double quotes, trimmed, and a newline"},
    {.name = "exi",
     .kind = OPT_BOOL,
     .field = FIELD(exi),
     .dflt = "false",
     .help = "accepted for OpenDaylight's scripts: no EXI here, true warns and runs plain XML"},
    {.name = "debug",
     .kind = OPT_BOOL,
     .field = FIELD(debug),
     .dflt = "false",
     .help = "accepted for OpenDaylight's scripts: there is no debug log, true says so once; the report and "
             "--json FILE hold the details"},
    {.name = "ssh",
     .kind = OPT_BOOL,
     .field = FIELD(ssh),
     .dflt_shown = "detected per connection", /* -1, set in code */
     .help =
         "NETCONF over SSH or plain TCP for edit, mount, notify and push. Left out, a server sending "
         "\"SSH-2.0-...\" first gets SSH, one sending its hello gets TCP, one silent for 1 s gets TCP and "
         "so do the later ones; given, a server speaking the other fails with wrong-transport; the "
         "server's host key is NOT verified (a test tool)"},
    {.name = "username",
     .kind = OPT_TEXT,
     .field = FIELD(username),
     .metavar = "U",
     .dflt = "admin",
     .help = "SSH user"},
    {.name = "password",
     .kind = OPT_TEXT,
     .field = FIELD(password),
     .metavar = "P",
     .dflt = "admin",
     .help = "SSH password"},
    {.name = "ssh-key",
     .kind = OPT_TEXT,
     .field = FIELD(ssh_key),
     .metavar = "FILE",
     .help = "SSH private key (unencrypted), tried before the password"},
    {.name = "tls",
     .kind = OPT_BOOL,
     .field = FIELD(tls),
     .dflt = "false",
     .help =
         "NETCONF over TLS (RFC 7589) for edit, mount, notify, push and record, with the client certificate "
         "below; excludes --ssh true"},
    {.name = "tls-cert",
     .kind = OPT_TEXT,
     .field = FIELD(tls_cert),
     .metavar = "FILE",
     .help = "TLS client certificate (PEM; fleetsim --issue-client-cert writes one), with --tls-key"},
    {.name = "tls-key",
     .kind = OPT_TEXT,
     .field = FIELD(tls_key),
     .metavar = "FILE",
     .help = "its private key (PEM, unencrypted)"},
    {.name = "tls-ca",
     .kind = OPT_TEXT,
     .field = FIELD(tls_ca),
     .metavar = "FILE",
     .dflt_shown = "the system's CAs",
     .help = "the CA (PEM) the servers' certificates must chain to (fleetsim's STATE_DIR/tls/ca.pem)"},
    {.name = "tls-verify-host",
     .kind = OPT_BOOL,
     .field = FIELD(tls_verify_host),
     .dflt = "false",
     .help = "true: the server's certificate must also name the address connected to (--ip and the "
             "following); NOT checked by default, since a fleet serves many addresses with one certificate"},
    {.name = "tls-resume",
     .kind = OPT_BOOL,
     .field = FIELD(tls_resume),
     .dflt = "false",
     .help = "true: a reconnection to a device resumes the TLS session that device gave last (abbreviated "
             "handshake); the summary counts full and resumed handshakes"},
    {.name = "help", .alias = "h", .kind = OPT_HELP, .help = "this text"},
    {.name = "version", .kind = OPT_VERSION, .help = "fleetsim-stress's version"},

    {.name = "edits",
     .kind = OPT_U64,
     .modes = M_EDIT,
     .field = FIELD(edits),
     .min = 1,
     .max = 1000000000,
     .max_unnamed = 1,
     .metavar = "N",
     .dflt = "50000",
     .section = "edit: edit-config throughput (OpenDaylight stress-client options)",
     .help = "edit-config requests in all"},
    {.name = "edit-content",
     .kind = OPT_TEXT,
     .modes = M_EDIT,
     .field = FIELD(edit_content),
     .metavar = "FILE",
     .dflt_shown = "an ietf-interfaces entry per edit",
     .help = "XML placed inside <config>; placeholders {PHYS_ADDR} {MSG_ID} {INDEX} {SESSION} {DEVICE}"},
    {.name = "edit-batch-size",
     .kind = OPT_U64,
     .modes = M_EDIT,
     .custom = opt_edit_batch_size,
     .metavar = "B",
     .dflt_shown = "all in one batch; -1 too",
     .help = "with candidate: commit after every B edits"},
    {.name = "candidate-datastore",
     .kind = OPT_BOOL,
     .modes = M_EDIT,
     .field = FIELD(candidate),
     .dflt = "true",
     .help = "true: edit candidate and commit; false: edit running"},
    {.name = "async-requests",
     .alias = "async",
     .kind = OPT_BOOL,
     .modes = M_EDIT,
     .field = FIELD(async),
     .dflt = "false",
     .help = "true: pipeline requests"},
    {.name = "thread-amount",
     .kind = OPT_U32,
     .modes = M_EDIT,
     .field = FIELD(threads),
     .min = 1,
     .max = 100000,
     .metavar = "T",
     .dflt = "1",
     .help = "sessions; edits split evenly, the last takes the remainder"},
    {.name = "pipeline",
     .alias = "concurrent-message-limit",
     .kind = OPT_U32,
     .modes = M_EDIT,
     .field = FIELD(pipeline),
     .unit = "(0: no limit)",
     .metavar = "W",
     .dflt = "64",
     .help = "requests in flight per session with async requests (0: 65536)"},

    {.name = "concurrency",
     .kind = OPT_U32,
     .modes = M_MOUNT,
     .field = FIELD(concurrency),
     .min = 1,
     .max = 1000000,
     .max_unnamed = 1,
     .metavar = "C",
     .dflt = "100",
     .section = "mount: emulate a controller mounting a fleet",
     .help = "sessions being set up at once"},
    {.name = "on-mount",
     .kind = OPT_CHOICE,
     .modes = M_MOUNT,
     .field = FIELD(on_mount),
     .choices = "none|get-schema|get-config", /* enum mount_action's order */
     .dflt = "none",
     .help = "what a mount does after the hello"},
    {.name = "hold",
     .kind = OPT_U32,
     .modes = M_MOUNT,
     .field = FIELD(hold_s),
     .max = 86400,
     .noun = "seconds",
     .metavar = "S",
     .dflt = "0",
     .help = "keep every session open S seconds afterwards"},
    {.name = "reconnect",
     .kind = OPT_FLAG,
     .modes = M_MOUNT,
     .field = FIELD(reconnect),
     .help = "as a controller does: a session that fails or is lost is connected again after a backoff "
             "(2 s growing 1.5x to 60 s, with jitter); runs for --hold S after all are mounted (0: until "
             "SIGINT or SIGTERM) and reports losses and the time to reconnect"},
    {.name = "events",
     .kind = OPT_TEXT,
     .modes = M_MOUNT,
     .field = FIELD(events_url),
     .noun = "a URL",
     .metavar = "URL",
     .help = "with --reconnect: the fleet's --metrics server, e.g. http://127.0.0.1:9100; its "
             "/api/v1/events are marked and each one's recovery measured from the sessions"},
    {.name = "events-token-file",
     .kind = OPT_TEXT,
     .modes = M_MOUNT,
     .field = FIELD(events_token_file),
     .noun = "a file",
     .metavar = "FILE",
     .help = "the bearer token for --events (the fleet's --api-token-file)"},
    {.name = "events-interval",
     .kind = OPT_DOUBLE,
     .modes = M_MOUNT,
     .field = FIELD(events_interval_s),
     .dmin = OPTIONS_INTERVAL_MIN_S,
     .dmax = OPTIONS_INTERVAL_MAX_S,
     .noun = "seconds",
     .metavar = "S",
     .dflt = "0.5",
     .help = "with --events: seconds between fetches of the events and polls of the sessions"},

    {.name = "port",
     .kind = OPT_U32,
     .modes = M_SNMP,
     .field = FIELD(port),
     .min = 1,
     .max = 65535,
     .noun = "a port",
     .metavar = "P",
     .dflt = "16100",
     .section = "snmp: poll every device's SNMP agent like a collector (GETBULK walks, SNMPv2c or SNMPv3)",
     .help = "the first agent's UDP port"},
    {.name = "concurrency",
     .kind = OPT_U32,
     .modes = M_SNMP,
     .field = FIELD(concurrency),
     .min = 1,
     .max = 1000000,
     .max_unnamed = 1,
     .metavar = "C",
     .dflt = "100",
     .help = "collections at once"},
    {.name = "community",
     .kind = OPT_TEXT,
     .modes = M_SNMP,
     .field = FIELD(community),
     .metavar = "S",
     .dflt = "public",
     .help = "community"},
    {.name = "v3-user",
     .kind = OPT_TEXT,
     .modes = M_SNMP | M_RECORD,
     .custom = opt_v3_user,
     .metavar = "NAME:AUTH:AUTHKEY:PRIV:PRIVKEY",
     .help = "poll with SNMPv3 (USM) as this user instead of v2c; AUTH none|md5|sha|sha224|sha256|sha384|"
             "sha512, PRIV none|aes, in any case or as net-snmp writes them (SHA-256, AES-128; the security "
             "level follows); each device's engine is discovered once"},
    {.name = "oids",
     .kind = OPT_TEXT,
     .modes = M_SNMP,
     .custom = opt_oids,
     .metavar = "OID,OID,...",
     .help = "dotted OIDs of columns, tables, subtrees or scalars (x.0) to walk"},
    {.name = "profile",
     .kind = OPT_TEXT,
     .modes = M_SNMP,
     .field = FIELD(profile),
     .metavar = "NAME|FILE",
     .dflt_shown = "minimal", /* set after the parse: not with --oids */
     .help = "walk the collection the profile lists (not with --oids)"},
    {.name = "max-repetitions",
     .kind = OPT_U32,
     .modes = M_SNMP | M_RECORD,
     .field = FIELD(max_repetitions),
     .min = 1,
     .max = OPTIONS_MAX_REPETITIONS_MAX,
     .metavar = "M",
     .dflt = "25",
     .help = "GETBULK max-repetitions"},
    {.name = "max-vars-per-pdu",
     .kind = OPT_U32,
     .modes = M_SNMP,
     .field = FIELD(max_vars),
     .min = 1,
     .max = OPTIONS_MAX_VARS_MAX,
     .metavar = "V",
     .dflt = "10",
     .help = "columns walked together in one GETBULK"},
    {.name = "timeout",
     .kind = OPT_U32,
     .modes = M_SNMP | M_RECORD,
     .field = FIELD(timeout_ms),
     .min = 1,
     .max = 3600000,
     .noun = "milliseconds",
     .metavar = "MS",
     .dflt = "1500",
     .help = "wait for a response before retrying, ms"},
    {.name = "retries",
     .kind = OPT_U32,
     .modes = M_SNMP | M_RECORD,
     .field = FIELD(retries),
     .max = 100,
     .metavar = "N",
     .dflt = "2",
     .help = "retransmissions before a collection fails"},
    {.name = "rounds",
     .kind = OPT_U32,
     .modes = M_SNMP,
     .field = FIELD(rounds),
     .min = 1,
     .max = 1000000000,
     .max_unnamed = 1,
     .metavar = "N",
     .dflt = "1",
     .help = "collect every device N times"},
    {.name = "duration",
     .kind = OPT_U32,
     .modes = M_SNMP,
     .field = FIELD(duration_s),
     .min = 1,
     .max = 31536000,
     .max_unnamed = 1,
     .noun = "seconds",
     .metavar = "S",
     .help = "keep collecting for S seconds instead of --rounds"},

    {.name = "concurrency",
     .kind = OPT_U32,
     .modes = M_NOTIFY,
     .field = FIELD(concurrency),
     .min = 1,
     .max = 1000000,
     .max_unnamed = 1,
     .metavar = "C",
     .dflt = "100",
     .section = "notify: subscribe to every device (RFC 5277 create-subscription) and count notifications",
     .help = "subscriptions being set up at once"},
    {.name = "stream",
     .kind = OPT_TEXT,
     .modes = M_NOTIFY,
     .field = FIELD(stream),
     .noun = "a stream name",
     .metavar = "NAME",
     .dflt = "NETCONF",
     .help = "stream to subscribe to"},
    {.name = "filter-xpath",
     .kind = OPT_TEXT,
     .modes = M_NOTIFY,
     .field = FIELD(filter_xpath),
     .metavar = "XPATH",
     .help = "an xpath filter, or"},
    {.name = "filter-subtree",
     .kind = OPT_TEXT,
     .modes = M_NOTIFY,
     .field = FIELD(filter_subtree),
     .metavar = "FILE",
     .help = "a subtree filter: the XML inside <filter type=\"subtree\">"},
    {.name = "start-time",
     .kind = OPT_TEXT,
     .modes = M_NOTIFY,
     .field = FIELD(start_time),
     .metavar = "T",
     .help = "replay from T (RFC 3339)"},
    {.name = "stop-time",
     .kind = OPT_TEXT,
     .modes = M_NOTIFY,
     .field = FIELD(stop_time),
     .metavar = "T",
     .help = "end the subscription at T (RFC 3339)"},
    {.name = "duration",
     .kind = OPT_U32,
     .modes = M_NOTIFY,
     .field = FIELD(duration_s),
     .min = 1,
     .max = 31536000,
     .max_unnamed = 1,
     .noun = "seconds",
     .metavar = "S",
     .help = "stop S seconds after every subscription is up"},
    {.name = "count",
     .kind = OPT_U64,
     .modes = M_NOTIFY,
     .field = FIELD(count),
     .min = 1,
     .metavar = "N",
     .help = "stop when every device delivered N notifications"},
    {.name = "idle-timeout",
     .kind = OPT_U32,
     .modes = M_NOTIFY,
     .field = FIELD(idle_timeout_s),
     .max = 86400,
     .noun = "seconds",
     .metavar = "S",
     .dflt = "5",
     .help = "stop when nothing arrived for S seconds (0: never)"},
    {.name = "seq-element",
     .kind = OPT_TEXT,
     .modes = M_NOTIFY,
     .custom = opt_seq_element,
     .metavar = "NAME",
     .help = "element whose integer text numbers each device's notifications: gaps, duplicates and "
             "reordering are checked"},

    {.name = "concurrency",
     .kind = OPT_U32,
     .modes = M_PUSH,
     .field = FIELD(concurrency),
     .min = 1,
     .max = 1000000,
     .max_unnamed = 1,
     .metavar = "C",
     .dflt = "100",
     .section =
         "push: one YANG-Push subscription per device (RFC 8639, 8640, 8641): updates counted and timed",
     .help = "subscriptions being set up at once"},
    {.name = "datastore",
     .kind = OPT_CHOICE,
     .modes = M_PUSH,
     .field = FIELD(push_datastore),
     .choices = "running|operational", /* enum push_datastore's order */
     .dflt = "operational",
     .help = "the datastore subscribed to"},
    {.name = "period",
     .kind = OPT_DOUBLE,
     .modes = M_PUSH,
     .field = FIELD(period_s),
     .dmin = 0.01,
     .dmax = 42949672.95,
     .noun = "seconds",
     .metavar = "S",
     .help = "periodic: a push-update every S seconds (decimals; a whole number of centiseconds, as the RPC "
             "carries it)"},
    {.name = "anchor-time",
     .kind = OPT_TEXT,
     .modes = M_PUSH,
     .field = FIELD(anchor_time),
     .metavar = "T",
     .dflt_shown = "none: the first update's eventTime is slot 0",
     .help = "periodic: slots are T + k x period (RFC 3339)"},
    {.name = "dampening",
     .kind = OPT_DOUBLE,
     .modes = M_PUSH,
     .field = FIELD(dampening_s),
     .dmin = 0,
     .dmax = 42949672.95,
     .noun = "seconds",
     .metavar = "S",
     .help =
         "on-change instead of --period, with this dampening-period (seconds, centisecond steps; 0: none)"},
    {.name = "sync-on-start",
     .kind = OPT_BOOL,
     .modes = M_PUSH,
     .field = FIELD(sync_on_start),
     .dflt = "true",
     .help = "on-change: a push-update of the whole selection first"},
    {.name = "excluded-change",
     .kind = OPT_TEXT,
     .modes = M_PUSH,
     .field = FIELD(excluded_change),
     .metavar = "TYPE,...",
     .help = "on-change: change types not reported: create, delete, insert, move, replace"},
    {.name = "xpath",
     .kind = OPT_TEXT,
     .modes = M_PUSH,
     .field = FIELD(push_xpath),
     .noun = "an XPath",
     .metavar = "EXPR",
     .help = "the datastore-xpath-filter (with --stream: stream-xpath-filter), or"},
    {.name = "subtree",
     .kind = OPT_TEXT,
     .modes = M_PUSH,
     .field = FIELD(push_subtree),
     .noun = "a file",
     .metavar = "FILE",
     .help = "the datastore-subtree-filter (with --stream: stream-subtree-filter): FILE's XML, the filter's "
             "content"},
    {.name = "stream",
     .kind = OPT_TEXT,
     .modes = M_PUSH,
     .field = FIELD(push_stream),
     .noun = "a stream name",
     .metavar = "NAME",
     .help = "subscribe to this event stream (NETCONF) instead of a datastore: events are counted"},
    {.name = "start-time",
     .kind = OPT_TEXT,
     .modes = M_PUSH,
     .field = FIELD(start_time),
     .metavar = "T",
     .help = "with --stream: replay-start-time (RFC 3339)"},
    {.name = "stop-time",
     .kind = OPT_TEXT,
     .modes = M_PUSH,
     .field = FIELD(stop_time),
     .metavar = "T",
     .help = "the subscription's stop-time (RFC 3339)"},
    {.name = "duration",
     .kind = OPT_U32,
     .modes = M_PUSH,
     .field = FIELD(duration_s),
     .min = 1,
     .max = 31536000,
     .max_unnamed = 1,
     .noun = "seconds",
     .metavar = "S",
     .dflt_shown = "until SIGINT, SIGTERM or the subscriptions end",
     .help = "stop S seconds after every subscription is up"},
    {.name = "change-rate",
     .kind = OPT_DOUBLE,
     .modes = M_PUSH,
     .field = FIELD(change_rate),
     .dmin = 0,
     .dmax = 1000000,
     .noun = "edits per second",
     .metavar = "R",
     .dflt = "0",
     .help = "on-change: R edit-configs per second over the whole fleet (devices in turn, one edit in flight "
             "each), each on a second session of its device, setting --change-interface's description to "
             "\"fleetsim-stress-seq:N\"; the latency from its rpc-reply to the push-change-update that "
             "carries N is measured"},
    {.name = "change-interface",
     .kind = OPT_TEXT,
     .modes = M_PUSH,
     .field = FIELD(change_interface),
     .noun = "an interface name",
     .metavar = "NAME",
     .dflt = "GigabitEthernet0/0/0/0",
     .help = "the ietf-interfaces interface whose description the edits set (the profile's first interface: "
             "crs-x's is MgmtEth0/RP0/CPU0/0)"},
    {.name = "fleet-report",
     .kind = OPT_TEXT,
     .modes = M_PUSH,
     .field = FIELD(fleet_report),
     .noun = "a file or URL",
     .metavar = "FILE|URL",
     .help = "at the end, what the fleet says each subscription sent is compared with what arrived, exactly "
             "(a difference fails the run): its http://HOST:PORT (--metrics server: GET /api/v1/report), or "
             "its --report FILE as it is then"},

    {.name = "sent",
     .kind = OPT_TEXT,
     .modes = M_RECON,
     .custom = opt_recon_file,
     .metavar = "FILE",
     .section = "reconcile: join fleetsim's --report with notify's --json, device by device",
     .help =
         "the simulator's report (with --report: restconf's --json manifest); repeat it for one per shard: "
         "their devices are joined"},
    {.name = "received",
     .kind = OPT_TEXT,
     .modes = M_RECON,
     .custom = opt_recon_file,
     .metavar = "FILE",
     .help = "notify's manifest (repeatable, as --sent)"},
    {.name = "report",
     .kind = OPT_TEXT,
     .modes = M_RECON,
     .custom = opt_recon_file,
     .metavar = "FILE",
     .help = "the simulator's report: edits the controller accepted (restconf's manifest, --sent) against "
             "edit-configs each device received (repeatable, as --sent)"},
    {.name = "tolerance",
     .kind = OPT_TEXT,
     .modes = M_RECON,
     .custom = opt_tolerance,
     .metavar = "T",
     .dflt = "0",
     .help = "allowed |sent - received| as a share of sent: 0.5% or 0.005"},
    {.name = "format",
     .kind = OPT_CHOICE,
     .modes = M_RECON,
     .field = FIELD(recv_format),
     .choices = "json|syslog|snmptrapd|csv",
     .dflt = "json",
     .help = "what --received is: notify's manifest (json); a collector's syslog file, RFC 5424 or "
             "traditional lines (syslog: each device's source is its HOSTNAME); snmptrapd -Lf's log "
             "(snmptrapd: the UDP source address, or sysName.0); channel,source,count rows (csv). The "
             "last three compare the report's push ledger (sent, summed over a device's sinks) source by "
             "source: OK, LOSS, DUP, MISSING, or PHANTOM for a source the report does not list"},
    {.name = "run-tag",
     .kind = OPT_TEXT,
     .modes = M_RECON,
     .field = FIELD(recv_run_tag),
     .noun = "a tag",
     .metavar = "T",
     .help = "with --format syslog or snmptrapd: count only lines carrying the run tag T ([fleetsim@32473 "
             "run=\"T\"] or 3164's run=T; a trap's fleetsimRunTag.0 = T); the others are counted apart"},
    {.name = "ordering",
     .kind = OPT_FLAG,
     .modes = M_RECON,
     .field = FIELD(recv_ordering),
     .help = "with --format syslog: per source, count inversions, adjacent descents of the sequence "
             "numbers ([meta sequenceId] or seq=N) in the file's order; classes stay as they are, but any "
             "inversion makes the exit 1"},
    {.name = "json",
     .kind = OPT_TEXT,
     .modes = M_RECON,
     .field = FIELD(json_path),
     .metavar = "FILE",
     .help = "write a manifest: parameters, counts by class, totals, a row per device line (the first "
             "100000)"},

    {.name = "url",
     .kind = OPT_TEXT,
     .modes = M_CTRL,
     .field = FIELD(url),
     .metavar = "BASE",
     .section =
         "controller-mount: poll a RESTCONF controller's topology-netconf while it connects to a fleet",
     .help = "RESTCONF base, e.g. http://127.0.0.1:8181/restconf (required)"},
    {.name = "device-count",
     .kind = OPT_U32,
     .modes = M_CTRL,
     .field = FIELD(device_count),
     .min = 1,
     .max = 1000000,
     .metavar = "D",
     .help = "nodes expected to connect (required)"},
    {.name = "username",
     .kind = OPT_TEXT,
     .modes = M_CTRL,
     .field = FIELD(username),
     .metavar = "U",
     .dflt = "admin",
     .help = "HTTP basic authentication's user"},
    {.name = "password",
     .kind = OPT_TEXT,
     .modes = M_CTRL,
     .field = FIELD(password),
     .metavar = "P",
     .dflt = "admin",
     .help = "and its password"},
    {.name = "node-suffix",
     .kind = OPT_TEXT,
     .modes = M_CTRL,
     .field = FIELD(node_suffix),
     .metavar = "S",
     .dflt = "-sim-device",
     .help = "count only nodes whose node-id ends in S (\"\": all)"},
    {.name = "interval",
     .kind = OPT_DOUBLE,
     .modes = M_CTRL,
     .field = FIELD(interval_s),
     .dmin = OPTIONS_INTERVAL_MIN_S,
     .dmax = OPTIONS_INTERVAL_MAX_S,
     .noun = "seconds",
     .metavar = "S",
     .dflt = "1",
     .help = "seconds between polls, fractions allowed"},
    {.name = "timeout",
     .kind = OPT_DOUBLE,
     .modes = M_CTRL,
     .field = FIELD(run_timeout_s),
     .dmin = OPTIONS_INTERVAL_MIN_S,
     .dmax = OPTIONS_RUN_TIMEOUT_MAX_S,
     .noun = "seconds",
     .metavar = "S",
     .dflt = "600",
     .help = "fail when not all D are connected after S seconds"},
    {.name = "msg-timeout",
     .kind = OPT_U32,
     .modes = M_CTRL,
     .field = FIELD(msg_timeout_s),
     .min = 1,
     .max = 86400,
     .noun = "seconds",
     .metavar = "S",
     .dflt_shown = "the interval plus 10 s", /* 0, set after the parse */
     .help = "limit of one poll"},
    {.name = "csv",
     .kind = OPT_TEXT,
     .modes = M_CTRL,
     .field = FIELD(csv_path),
     .metavar = "FILE",
     .help = "the curve: t_s,connected,connecting,failed,absent,http_status (and events with --events)"},
    {.name = "json",
     .kind = OPT_TEXT,
     .modes = M_CTRL,
     .field = FIELD(json_path),
     .metavar = "FILE",
     .help = "write a manifest: parameters, the curve, results"},
    {.name = "events",
     .kind = OPT_TEXT,
     .modes = M_CTRL,
     .field = FIELD(events_url),
     .noun = "a URL",
     .metavar = "URL",
     .help = "the fleet's --metrics server, e.g. http://127.0.0.1:9100: its /api/v1/events are marked on the "
             "curve and each one's recovery measured; the run lasts until --timeout"},
    {.name = "events-token-file",
     .kind = OPT_TEXT,
     .modes = M_CTRL,
     .field = FIELD(events_token_file),
     .noun = "a file",
     .metavar = "FILE",
     .help = "the bearer token for --events (the fleet's --api-token-file)"},

    {.name = "out",
     .kind = OPT_TEXT,
     .modes = M_RECORD,
     .field = FIELD(out_dir),
     .noun = "a folder",
     .metavar = "DIR",
     .section = "record: write one NETCONF server as a recorded device type folder (docs/RECORDED_TYPES.md)",
     .help = "the folder to write (created; required)"},
    {.kind = OPT_NOTE,
     .metavar = "--ssh, --tls and their options, --tcp-preamble, --tcp-header, --msg-timeout",
     .help = "as above"},
    {.name = "ncx-connect",
     .kind = OPT_FLAG,
     .modes = M_RECORD,
     .custom = opt_ncx_connect,
     .metavar = "[=SSHPORT]",
     .help = "send yuma123 netconfd's tcp-direct connect message first (user --username, address --ip, port "
             "SSHPORT, default --port)"},
    {.name = "snmp",
     .kind = OPT_TEXT,
     .modes = M_RECORD,
     .custom = opt_record_snmp,
     .noun = "a community",
     .metavar = "COMMUNITY",
     .help = "also walk the device's SNMP agent (v2c) into snmp.snmprec"},
    {.name = "snmp-port",
     .kind = OPT_U32,
     .modes = M_RECORD,
     .field = FIELD(snmp_port),
     .min = 1,
     .max = 65535,
     .noun = "a port",
     .metavar = "P",
     .dflt_shown = "161",
     .help = "the agent's UDP port"},
    {.kind = OPT_NOTE,
     .metavar = "--v3-user NAME:AUTH:AUTHKEY:PRIV:PRIVKEY",
     .help = "walk it with SNMPv3 instead"},
    {.kind = OPT_NOTE,
     .metavar = "--timeout MS, --retries N, --max-repetitions M",
     .help = "of the SNMP walk (as for snmp)"},

    {.name = "port",
     .kind = OPT_U32,
     .modes = M_RESTCONF,
     .field = FIELD(port),
     .min = 1,
     .max = 65535,
     .noun = "a port",
     .metavar = "P",
     .dflt = "8182",
     .section = "restconf: edits POSTed to a RESTCONF controller's mount points (OpenDaylight's REST perf "
                "client)",
     .help = "the controller's port (--ip: its address)"},
    {.name = "destination",
     .kind = OPT_TEXT,
     .modes = M_RESTCONF,
     .custom = opt_destination,
     .metavar = "PATH",
     .dflt = STRESS_RESTCONF_DEFAULT_DESTINATION,
     .dflt_shown = "OpenDaylight's .../node={DEVICE_PORT}-sim-device/yang-ext:mount/...",
     .help = "URL path; its first {DEVICE_PORT} is the stream's device port"},
    {.name = "edits",
     .kind = OPT_U64,
     .modes = M_RESTCONF,
     .field = FIELD(edits),
     .min = 1,
     .max = 1000000000,
     .max_unnamed = 1,
     .metavar = "N",
     .dflt = "50000",
     .help = "requests in all, split among the streams"},
    {.name = "edit-content",
     .kind = OPT_TEXT,
     .modes = M_RESTCONF,
     .field = FIELD(edit_content),
     .metavar = "FILE",
     .dflt_shown = "./edit.txt, else a built-in ietf-interfaces entry",
     .help = "the body; first {PEERID} stream, first {INTLEAF} request number (both only when {PEERID} is "
             "there), first {DEVICE_PORT} port, every {PHYS_ADDR} a MAC"},
    {.name = "content-type",
     .kind = OPT_CHOICE,
     .modes = M_RESTCONF,
     .field = FIELD(content_xml),
     .choices = "json|xml", /* content_xml 0, 1 */
     .dflt = "json",
     .help = "application/json (as OpenDaylight) or application/xml"},
    {.name = "async-requests",
     .alias = "async",
     .kind = OPT_BOOL,
     .modes = M_RESTCONF,
     .field = FIELD(async),
     .dflt = "true",
     .help = "true: up to --throttle in flight; false: one per stream"},
    {.name = "thread-amount",
     .kind = OPT_U32,
     .modes = M_RESTCONF,
     .field = FIELD(threads),
     .min = 1,
     .max = 100000,
     .metavar = "T",
     .dflt = "1",
     .help = "streams, each its own connections"},
    {.name = "throttle",
     .kind = OPT_U32,
     .modes = M_RESTCONF,
     .field = FIELD(throttle),
     .min = 1,
     .max = 1000000,
     .metavar = "N",
     .dflt = "5000",
     .help = "requests in flight in all, N/T per stream"},
    {.name = "same-device",
     .kind = OPT_BOOL,
     .modes = M_RESTCONF,
     .field = FIELD(same_device),
     .dflt = "true",
     .help = "true: every stream edits the first device; false: stream n the device at port START+n"},
    {.name = "device-port-range-start",
     .kind = OPT_U32,
     .modes = M_RESTCONF,
     .field = FIELD(device_port_start),
     .min = 1,
     .max = 65535,
     .noun = "a port",
     .metavar = "START",
     .dflt = "17830",
     .help = "the first device's port"},
    {.name = "auth",
     .kind = OPT_TEXT,
     .modes = M_RESTCONF,
     .custom = opt_auth,
     .metavar = "USER PASS",
     .dflt_shown = "admin admin",
     .help = "HTTP basic authentication, sent with every request"},
    {.name = "timeout",
     .kind = OPT_U32,
     .modes = M_RESTCONF,
     .custom = opt_restconf_timeout,
     .min = 1,
     .max = 10080,
     .noun = "minutes",
     .metavar = "MIN",
     .dflt = "5",
     .help = "give up after MIN minutes"},
    {.name = "json",
     .kind = OPT_TEXT,
     .modes = M_RESTCONF,
     .field = FIELD(json_path),
     .metavar = "FILE",
     .help = "write a manifest: parameters, statuses, devices, per-second counts"},

    {.name = "fleet",
     .kind = OPT_TEXT,
     .modes = M_CEILING,
     .field = FIELD(fleet_url),
     .noun = "a URL",
     .metavar = "URL",
     .section =
         "ceiling: a collector's ingest ceiling, the three-point method, driving a fleet's control API",
     .help = "the fleet's --metrics server, e.g. http://127.0.0.1:9464 (required): its control API sets the "
             "per-device rate, its /metrics gives point 1 (sent)"},
    {.name = "api-token-file",
     .kind = OPT_TEXT,
     .modes = M_CEILING | M_PUSH,
     .field = FIELD(api_token_file),
     .noun = "a file",
     .metavar = "FILE",
     .help = "the bearer token of the fleet's --api-token-file (push: for --fleet-report URL)"},
    {.name = "channel",
     .kind = OPT_CHOICE,
     .modes = M_CEILING,
     .field = FIELD(channel),
     .choices = "syslog|trap|notification",
     .dflt = "syslog",
     .help = "the push channel whose rate is the variable (syslog-rate, trap-rate, notification-rate)"},
    {.name = "group",
     .kind = OPT_TEXT,
     .modes = M_CEILING,
     .field = FIELD(group),
     .noun = "a group name",
     .metavar = "NAME",
     .dflt_shown = "every present device",
     .help = "drive only this group's devices; the rest of the fleet must stay silent on the channel"},
    {.name = "arrived",
     .kind = OPT_TEXT,
     .modes = M_CEILING,
     .field = FIELD(probe_arrived),
     .noun = "a probe",
     .metavar = "PROBE",
     .help =
         "point 2, what arrived at the collector's queue: prom:BASE_URL:QUERY (a Prometheus instant "
         "query, the series summed), cmd:COMMAND (prints one number) or file:PATH:REGEX (the number in the "
         "last line of the file's tail the POSIX extended expression matches: its first group)"},
    {.name = "persisted",
     .kind = OPT_TEXT,
     .modes = M_CEILING,
     .field = FIELD(probe_persisted),
     .noun = "a probe",
     .metavar = "PROBE",
     .help = "point 3, what the collector persisted (required; a probe as --arrived)"},
    {.name = "queue",
     .kind = OPT_TEXT,
     .modes = M_CEILING,
     .field = FIELD(probe_queue),
     .noun = "a probe",
     .metavar = "PROBE",
     .dflt_shown = "arrived - persisted, or sent - persisted",
     .help = "the collector's input queue depth"},
    {.name = "dropped",
     .kind = OPT_TEXT,
     .modes = M_CEILING,
     .custom = opt_named_pair,
     .metavar = "NAME=PROBE",
     .help = "a drop counter of the collector, named (repeatable, up to 16): one that moves makes the cell "
             "lossy"},
    {.name = "service-time",
     .kind = OPT_TEXT,
     .modes = M_CEILING,
     .field = FIELD(probe_service_time),
     .noun = "a probe",
     .metavar = "PROBE",
     .help = "milliseconds per work unit (wall clock), for the identity check"},
    {.name = "batch-size",
     .kind = OPT_TEXT,
     .modes = M_CEILING,
     .field = FIELD(probe_batch_size),
     .noun = "a probe",
     .metavar = "PROBE",
     .help = "messages per work unit, for the identity check"},
    {.name = "workers",
     .kind = OPT_TEXT,
     .modes = M_CEILING,
     .field = FIELD(probe_workers),
     .noun = "a probe",
     .metavar = "PROBE",
     .dflt_shown = "1",
     .help = "concurrent workers, for the identity check"},
    {.name = "measure",
     .kind = OPT_CHOICE,
     .modes = M_CEILING,
     .field = FIELD(measure),
     .choices = "sustained|service-rate|loss-isolation|all",
     .dflt = "sustained",
     .help = "sustained: search the per-device rate for the highest whose queue stays flat for a whole "
             "window; service-rate: burst, stop, fit the drain; loss-isolation: (1) against (3) at half the "
             "ceiling (--ceiling, or found); all: silence check, service rate, search, loss isolation, "
             "baseline again"},
    {.name = "from",
     .kind = OPT_DOUBLE,
     .modes = M_CEILING,
     .field = FIELD(rate_from),
     .dmin = OPTIONS_CEILING_RATE_MIN,
     .dmax = OPTIONS_CEILING_RATE_MAX,
     .noun = "messages per second per device",
     .metavar = "R",
     .dflt = "1",
     .help = "the search's first per-device rate (the baseline cell): doubled while flat, halved while not"},
    {.name = "to",
     .kind = OPT_DOUBLE,
     .modes = M_CEILING,
     .field = FIELD(rate_to),
     .dmin = OPTIONS_CEILING_RATE_MIN,
     .dmax = OPTIONS_CEILING_RATE_MAX,
     .noun = "messages per second per device",
     .metavar = "R",
     .dflt = "100000",
     .help = "the highest per-device rate tried"},
    {.name = "precision",
     .kind = OPT_DOUBLE,
     .modes = M_CEILING,
     .field = FIELD(precision),
     .dmin = 0.001,
     .dmax = 1,
     .noun = "a share",
     .metavar = "P",
     .dflt = "0.05",
     .help = "bisection ends when the flat and the positive level are within P of each other"},
    {.name = "window",
     .kind = OPT_DOUBLE,
     .modes = M_CEILING,
     .custom = opt_duration,
     .field = FIELD(window_s),
     .dmin = 1,
     .dmax = OPTIONS_CEILING_TIME_MAX_S,
     .metavar = "D",
     .dflt = "15m",
     .help = "how long a cell holds its rate; a cell is flat only when its queue held flat this long"},
    {.name = "sample",
     .kind = OPT_DOUBLE,
     .modes = M_CEILING,
     .custom = opt_duration,
     .field = FIELD(sample_s),
     .dmin = OPTIONS_CEILING_TIME_MIN_S,
     .dmax = 3600,
     .metavar = "D",
     .dflt = "5s",
     .help = "between readings of the fleet and every probe"},
    {.name = "burst-rate",
     .kind = OPT_DOUBLE,
     .modes = M_CEILING,
     .field = FIELD(burst_rate),
     .dmin = OPTIONS_CEILING_RATE_MIN,
     .dmax = OPTIONS_CEILING_RATE_MAX,
     .noun = "messages per second per device",
     .metavar = "R",
     .dflt_shown = "10 x --from",
     .help = "service rate: the per-device rate of the burst, far above the capacity"},
    {.name = "burst",
     .kind = OPT_DOUBLE,
     .modes = M_CEILING,
     .custom = opt_duration,
     .field = FIELD(burst_s),
     .dmin = OPTIONS_CEILING_TIME_MIN_S,
     .dmax = OPTIONS_CEILING_TIME_MAX_S,
     .metavar = "D",
     .dflt = "1m",
     .help = "service rate: how long the burst lasts"},
    {.name = "ceiling",
     .kind = OPT_DOUBLE,
     .modes = M_CEILING,
     .field = FIELD(ceiling_rate),
     .dmin = OPTIONS_CEILING_RATE_MIN,
     .dmax = OPTIONS_CEILING_RATE_MAX,
     .noun = "messages per second per device",
     .metavar = "R",
     .help = "loss-isolation: the ceiling found before, per device (required with --measure loss-isolation)"},
    {.name = "settle",
     .kind = OPT_DOUBLE,
     .modes = M_CEILING,
     .custom = opt_duration,
     .field = FIELD(settle_s),
     .dmin = 1,
     .dmax = OPTIONS_CEILING_TIME_MAX_S,
     .metavar = "D",
     .dflt = "5m",
     .help = "after each cell the load stops until the collector drained and its counters stopped; at most "
             "this long"},
    {.name = "tolerance",
     .kind = OPT_TEXT,
     .modes = M_CEILING,
     .custom = opt_tolerance,
     .metavar = "T",
     .dflt = "0.005",
     .help = "loss allowed between two points, as a share of sent: 0.5% or 0.005"},
    {.name = "slope-threshold",
     .kind = OPT_DOUBLE,
     .modes = M_CEILING,
     .field = FIELD(slope_share),
     .dmin = 0.0001,
     .dmax = 1,
     .noun = "a share of the offered rate",
     .metavar = "S",
     .dflt = "0.01",
     .help = "a queue growing faster than this share of the offered rate (and 0.5 messages/s), over the "
             "window and over its second half, is positive"},
    {.name = "drift",
     .kind = OPT_DOUBLE,
     .modes = M_CEILING,
     .field = FIELD(drift),
     .dmin = 0.001,
     .dmax = 1,
     .noun = "a share",
     .metavar = "S",
     .dflt = "0.05",
     .help = "a cell whose observed per-device rate is off its level by more is discarded"},
    {.name = "probe-timeout",
     .kind = OPT_DOUBLE,
     .modes = M_CEILING,
     .custom = opt_duration,
     .field = FIELD(probe_timeout_s),
     .dmin = 0.1,
     .dmax = 600,
     .metavar = "D",
     .dflt = "10s",
     .help = "the limit of one probe read and of one request to the fleet"},
    {.name = "ordering",
     .kind = OPT_TEXT,
     .modes = M_CEILING,
     .field = FIELD(ordering_path),
     .noun = "a file",
     .metavar = "FILE",
     .help = "after the run, the collector's persisted output: each device's sequence numbers are checked "
             "in the file's order; any inversion reports the run as a regression"},
    {.name = "format",
     .kind = OPT_CHOICE,
     .modes = M_CEILING,
     .field = FIELD(recv_format),
     .choices = "json|syslog",
     .dflt = "syslog",
     .help = "what --ordering's file is: syslog lines, RFC 5424 or traditional ([meta sequenceId] or seq=N)"},
    {.name = "run-tag",
     .kind = OPT_TEXT,
     .modes = M_CEILING,
     .field = FIELD(recv_run_tag),
     .noun = "a tag",
     .metavar = "T",
     .help = "with --ordering: look only at lines carrying the fleet's --run-tag T"},
    {.name = "collector-version",
     .kind = OPT_TEXT,
     .modes = M_CEILING,
     .field = FIELD(collector_version),
     .noun = "a version",
     .metavar = "TEXT",
     .help = "the collector's version, a control in the manifest"},
    {.name = "sut",
     .kind = OPT_TEXT,
     .modes = M_CEILING,
     .custom = opt_named_pair,
     .metavar = "KEY=VALUE",
     .help = "describes the system under test in the manifest (repeatable): queue=..., consumers=4, ..."},
    {.name = "json",
     .kind = OPT_TEXT,
     .modes = M_CEILING,
     .field = FIELD(json_path),
     .metavar = "FILE",
     .help = "write the manifest: measured quantity, controls, the three points, loss isolation, ordering, "
             "identity, the answer, every cell with its samples"},

    {.name = "out",
     .alias = "o",
     .kind = OPT_TEXT,
     .modes = M_REPORT,
     .field = FIELD(out_dir),
     .noun = "a file",
     .metavar = "FILE",
     .section = "report: one self-contained HTML page of one or more --json manifests (RUN.json ...)",
     .help = "the HTML file to write (required); several manifests are overlaid and their differing "
             "parameters tabled"},

    {.name = "out",
     .alias = "o",
     .kind = OPT_TEXT,
     .modes = M_MERGE,
     .field = FIELD(json_path),
     .noun = "a file",
     .metavar = "FILE",
     .section = "merge: one manifest of the --json manifests of runs made at once (RUN.json ...), same tool "
                "and mode",
     .help = "the merged manifest to write (required): counts and histograms added, percentiles and rates "
             "recomputed over the common window, per-second counts aligned, differing parameters listed"},
    {.name = "json",
     .kind = OPT_TEXT,
     .modes = M_MERGE,
     .field = FIELD(json_path),
     .noun = "a file",
     .metavar = "FILE",
     .help = "the same as -o"},
};

#define OPT_COUNT (sizeof opts / sizeof opts[0])

static const char usage_head[] =
    "Usage: fleetsim-stress edit|mount|snmp|notify [options]\n"
    "       fleetsim-stress push (--period S | --dampening S) [--xpath EXPR | --subtree FILE] [options]\n"
    "       fleetsim-stress reconcile --sent REPORT --received JSON [--tolerance T] [--json FILE]\n"
    "       fleetsim-stress reconcile --sent RESTCONF_JSON --report REPORT [--tolerance T] [--json FILE]\n"
    "       fleetsim-stress reconcile --sent REPORT --received FILE --format syslog|snmptrapd|csv [--run-tag "
    "T]\n"
    "                                 [--ordering] [--tolerance T] [--json FILE]\n"
    "       fleetsim-stress restconf [--ip ADDR --port P] [options]\n"
    "       fleetsim-stress controller-mount --url BASE --device-count D [options]\n"
    "       fleetsim-stress record --out DIR [--ip ADDR --port P] [options]\n"
    "       fleetsim-stress ceiling --fleet URL --persisted PROBE [--arrived PROBE] [--measure M] [options]\n"
    "       fleetsim-stress report RUN.json [RUN.json ...] -o REPORT.html\n"
    "       fleetsim-stress merge RUN.json [RUN.json ...] -o MERGED.json\n";

/* ------------------------------------------------------------------ lookup, defaults */

/* Whether row t is named name (or has it as alias). */
static int
opt_named(const struct stress_opt *t, const char *name)
{
    return t->kind != OPT_NOTE && (!strcmp(t->name, name) || (t->alias && !strcmp(t->alias, name)));
}

/* The row of name for mode: the mode's own, else the one for every mode, else the first; NULL: unknown. */
static const struct stress_opt *
opt_for(const char *name, enum stress_mode mode)
{
    const struct stress_opt *every = NULL, *first = NULL;

    for (size_t i = 0; i < OPT_COUNT; i++) {
        const struct stress_opt *t = &opts[i];
        if (!opt_named(t, name)) {
            continue;
        }
        if (t->modes & MODE(mode)) {
            return t;
        }
        if (!t->modes && !every) {
            every = t;
        }
        if (!first) {
            first = t;
        }
    }
    return every ? every : first;
}

/* Whether any row of name was given on the command line (given[] is by row). */
static int
opt_given(const unsigned char *given, const char *name)
{
    for (size_t i = 0; i < OPT_COUNT; i++) {
        if (given[i] && opt_named(&opts[i], name)) {
            return 1;
        }
    }
    return 0;
}

/* Apply one row to c->o: the command line and the defaults go through here. */
static int
opt_apply(const struct stress_opt *t, const char *value, struct opt_ctx *c)
{
    if (t->custom) {
        return t->custom(t, value, c);
    }
    return opt_store(t, value, c);
}

/* One row's default through its own parse; a default its own check refuses is a bug of the table. */
static void
opt_default(const struct stress_opt *t, struct opt_ctx *c)
{
    if (!t->dflt) {
        return;
    }
    c->given = t->name;
    if (opt_apply(t, t->dflt, c)) {
        fprintf(stderr, "fleetsim-stress: option table: default of --%s refused: %s\n", t->name, c->err);
        assert(!"a default of the option table is refused by its own check");
    }
}

/* Every field from its first row's default (later rows first, so the first one's stays), then the mode's. */
static void
opt_defaults(struct stress_options *o, enum stress_mode mode)
{
    char err[256];
    struct opt_ctx c = {.o = o, .err = err, .err_len = sizeof err};
    size_t i;

    memset(o, 0, sizeof *o);
    o->mode = mode;
    for (i = OPT_COUNT; i-- > 0;) {
        opt_default(&opts[i], &c);
    }
    for (i = 0; i < OPT_COUNT; i++) {
        if (opts[i].modes & MODE(mode)) {
            opt_default(&opts[i], &c);
        }
    }
    o->ssh = -1; /* detected per connection */
    /* The table's defaults are text; these constants are what the rest of the program knows them by. */
    assert(mode != STRESS_SNMP || o->port == STRESS_SNMP_DEFAULT_PORT);
    assert(mode != STRESS_RESTCONF || o->port == STRESS_RESTCONF_DEFAULT_PORT);
}

/* ------------------------------------------------------------------ --help */

/* One row's lines: its names and value, then its description and default. */
static void
usage_option(FILE *out, const struct stress_opt *t)
{
    static const char *const metavars[] = {
        [OPT_BOOL] = "true|false", [OPT_FLAG] = "[=true|false]", [OPT_U32] = "N",     [OPT_U64] = "N",
        [OPT_DOUBLE] = "R",        [OPT_TEXT] = "TEXT",          [OPT_CHOICE] = NULL,
    };
    char names[200], extra[200];
    const char *metavar = t->metavar;
    struct textarg_help_pos pos = {.fresh = 1, .indent = HELP_INDENT, .width = HELP_WIDTH};
    size_t n = 0;

    if (t->kind == OPT_NOTE) {
        n = (size_t)snprintf(names, sizeof names, "  %s", t->metavar);
    } else {
        n = (size_t)snprintf(names, sizeof names, "  --%s", t->name);
        if (t->alias) {
            n += (size_t)snprintf(names + n, sizeof names - n, ", %s%s", t->alias[1] ? "--" : "-", t->alias);
        }
        if (!metavar && t->kind <= OPT_CHOICE) {
            metavar = t->kind == OPT_CHOICE ? t->choices : metavars[t->kind];
        }
        if (metavar) {
            n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", t->kind == OPT_FLAG ? "" : " ",
                                  metavar);
        }
    }
    pos.col = n < sizeof names ? n : sizeof names - 1;
    /* Names too long for the column: the description follows after two spaces. */
    pos.col = pos.col + 2 > HELP_INDENT ? pos.col + 2 : HELP_INDENT;
    fprintf(out, "%-*s", (int)pos.col, names);
    textarg_help_words(out, t->help, &pos);
    if (t->dflt || t->dflt_shown) {
        snprintf(extra, sizeof extra, "(default %s)", t->dflt_shown ? t->dflt_shown : t->dflt);
        textarg_help_words(out, extra, &pos);
    }
    fputc('\n', out);
}

/* The --help text: every row of the table, in its order, under its section headings. */
static void
usage(FILE *out)
{
    fputs(usage_head, out);
    for (size_t i = 0; i < OPT_COUNT; i++) {
        if (opts[i].section) {
            fprintf(out, "\n%s\n", opts[i].section);
        }
        usage_option(out, &opts[i]);
    }
}

/* ------------------------------------------------------------------ argv */

/* 1 unless @p url is http:// or https:// with a usable host: an IPv6 host needs its brackets (RFC
 * 3986 3.2.2), or libcurl takes the address's last group for the port. */
static int
url_unusable(const char *url)
{
    const char *host, *colon;
    size_t len;

    if (!url || (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))) {
        return 1;
    }
    host = strstr(url, "://") + 3;
    len = strcspn(host, "/?#");
    for (const char *at = memchr(host, '@', len); at; at = memchr(host, '@', len)) { /* skip user:password@ */
        len -= (size_t)(at + 1 - host);
        host = at + 1;
    }
    colon = host[0] == '[' ? NULL : memchr(host, ':', len);
    return colon && memchr(colon + 1, ':', len - (size_t)(colon + 1 - host)) != NULL;
}

#define BAD(...)                                                                                             \
    do {                                                                                                     \
        snprintf(err, err_len, __VA_ARGS__);                                                                 \
        return STRESS_PARSE_ERROR;                                                                           \
    } while (0)

/* The subcommands, in enum stress_mode's order. */
static const char *const mode_names[] = {
    "edit",   "mount",    "snmp",   "notify", "reconcile", "controller-mount",
    "record", "restconf", "report", "merge",  "ceiling",   "push"};

/* getopt's array, made from the table: each name and alias once, val = 256 + its first row's index. */
static void
opt_longopts(struct option *longopts)
{
    size_t i, k, n = 0;

    for (i = 0; i < OPT_COUNT; i++) {
        const struct stress_opt *t = &opts[i];
        const char *names[2] = {t->name, t->alias};
        int has_arg = t->kind == OPT_HELP || t->kind == OPT_VERSION ? no_argument
                      : t->kind == OPT_FLAG                         ? optional_argument
                                                                    : required_argument;
        if (t->kind == OPT_NOTE) {
            continue;
        }
        for (k = 0; k < 2 && names[k]; k++) {
            size_t j;
            for (j = 0; j < n && strcmp(longopts[j].name, names[k]); j++) {
            }
            if (j < n) {
                /* Rows of one name take their value alike, but for a flag of one mode that is a valued
                 * option of another (reconcile's --ordering, ceiling's --ordering FILE): getopt then
                 * takes the value as optional, and the parse reads the next word for the valued row. */
                assert(longopts[j].has_arg == has_arg || longopts[j].has_arg == optional_argument ||
                       has_arg == optional_argument);
                if (has_arg == optional_argument) {
                    longopts[j].has_arg = optional_argument;
                }
                continue;
            }
            longopts[n++] = (struct option){names[k], has_arg, NULL, 256 + (int)i};
        }
    }
    longopts[n] = (struct option){NULL, 0, NULL, 0};
}

/* 1 when any TLS option was given. */
static int
opt_tls_given(const struct stress_options *o)
{
    return o->tls || o->tls_cert || o->tls_key || o->tls_ca || o->tls_verify_host || o->tls_resume;
}

/* A count of seconds as whole centiseconds (RFC 8641's period and dampening-period); -1 when it is not. */
static int64_t
centiseconds(double s)
{
    double cs = s * 100.0;
    int64_t whole = (int64_t)(cs + 0.5);

    return cs - (double)whole > 1e-6 || (double)whole - cs > 1e-6 || whole > UINT32_MAX ? -1 : whole;
}

/* push's checks after the parse: periodic or on-change, one filter, the change types. */
static int
take_push(struct stress_options *o, const unsigned char *given, char *err, size_t err_len)
{
    static const char *const types[] = {"create", "delete", "insert", "move", "replace"};
    int64_t cs;

    o->on_change = opt_given(given, "dampening");
    if (o->push_stream) {
        if (opt_given(given, "period") || o->on_change || o->excluded_change || o->change_rate) {
            snprintf(err, err_len,
                     "--stream subscribes to events: --period, --dampening, --excluded-change "
                     "and --change-rate are for datastore subscriptions");
            return -1;
        }
    } else if (opt_given(given, "period") == o->on_change) {
        snprintf(err, err_len, "push needs --period S (periodic) or --dampening S (on-change), one of them");
        return -1;
    } else if (o->start_time) {
        snprintf(err, err_len, "--start-time (replay-start-time) is for --stream subscriptions");
        return -1;
    }
    if (o->push_xpath && o->push_subtree) {
        snprintf(err, err_len, "--xpath and --subtree exclude each other: a subscription has one filter");
        return -1;
    }
    if (opt_given(given, "period")) {
        if ((cs = centiseconds(o->period_s)) < 1) {
            snprintf(err, err_len, "--period %.15g is not a whole number of centiseconds", o->period_s);
            return -1;
        }
        o->period_cs = (uint32_t)cs;
    }
    if (o->on_change) {
        if ((cs = centiseconds(o->dampening_s)) < 0) {
            snprintf(err, err_len, "--dampening %.15g is not a whole number of centiseconds", o->dampening_s);
            return -1;
        }
        o->dampening_cs = (uint32_t)cs;
    } else if (opt_given(given, "sync-on-start") || o->excluded_change || o->change_rate) {
        snprintf(err, err_len,
                 "--sync-on-start, --excluded-change and --change-rate are for on-change "
                 "subscriptions (--dampening S)");
        return -1;
    }
    if (o->anchor_time && !opt_given(given, "period")) {
        snprintf(err, err_len, "--anchor-time is for periodic subscriptions (--period S)");
        return -1;
    }
    for (const char *p = o->excluded_change; p && *p;) {
        size_t n = strcspn(p, ","), i;
        for (i = 0;
             i < sizeof types / sizeof types[0] && !(strlen(types[i]) == n && !strncmp(p, types[i], n));
             i++) {
        }
        if (i == sizeof types / sizeof types[0]) {
            snprintf(err, err_len,
                     "--excluded-change: \"%.*s\" is none of create, delete, insert, move, replace", (int)n,
                     p);
            return -1;
        }
        p += n + (p[n] == ',');
    }
    return 0;
}

enum stress_parse
stress_options_parse(int argc, char **argv, struct stress_options *o, char *err, size_t err_len)
{
    static struct option longopts[OPT_COUNT * 2 + 1];
    unsigned char given[OPT_COUNT] = {0};
    struct opt_ctx c = {.o = o, .err = err, .err_len = err_len};
    const struct stress_opt *t;
    const char *value;
    enum stress_mode mode;
    int longindex = 0;
    int opt;

    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        if (argc < 2) {
            BAD("a subcommand is needed: edit, mount, snmp, notify, reconcile, controller-mount, record, "
                "restconf, report, merge, ceiling or push");
        }
        return STRESS_PARSE_EXIT;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("fleetsim-stress %s\n", FLEETSIM_VERSION);
        return STRESS_PARSE_EXIT;
    }
    for (mode = 0; mode < sizeof mode_names / sizeof mode_names[0] && strcmp(argv[1], mode_names[mode]);
         mode++) {
    }
    if (mode == sizeof mode_names / sizeof mode_names[0]) {
        BAD("unknown subcommand \"%s\": use edit, mount, snmp, notify, reconcile, controller-mount, record, "
            "restconf, report, merge, ceiling or push (see --help)",
            argv[1]);
    }
    opt_defaults(o, mode);
    opt_longopts(longopts);

    opterr = 0;
    optind = 2;
    /* getopt_long_only: "-ip" is read as "--ip", and an unknown word is reported whole. */
    while ((opt = getopt_long_only(argc, argv, ":", longopts, &longindex)) != -1) {
        if (opt == ':') {
            BAD("option %s needs a value", argv[optind - 1]);
        }
        if (opt < 256 || (size_t)(opt - 256) >= OPT_COUNT) {
            BAD("unknown option \"%s\" (see --help)", argv[optind - 1]);
        }
        c.given = longopts[longindex].name;
        t = opt_for(c.given, mode);
        if (t->kind == OPT_HELP) {
            usage(stdout);
            return STRESS_PARSE_EXIT;
        }
        if (t->kind == OPT_VERSION) {
            printf("fleetsim-stress %s\n", FLEETSIM_VERSION);
            return STRESS_PARSE_EXIT;
        }
        value = t->kind == OPT_FLAG ? textarg_flag_value(optarg, argc, argv, &optind) : optarg;
        if (t->kind != OPT_FLAG && !value && longopts[longindex].has_arg == optional_argument) {
            if (optind >= argc) {
                BAD("option --%s needs a value", c.given);
            }
            value = argv[optind++]; /* the valued row of a name another mode has as a flag */
        }
        c.next = optind < argc ? argv[optind] : NULL;
        c.took_next = 0;
        if (opt_apply(t, value, &c)) {
            return STRESS_PARSE_ERROR;
        }
        if (c.took_next) {
            optind++;
        }
        given[t - opts] = 1;
    }
    if (o->mode == STRESS_REPORT || o->mode == STRESS_MERGE) {
        /* getopt permuted the manifests' names behind the options. */
        const char *name = mode_names[o->mode];
        if (optind >= argc) {
            BAD("%s needs one or more manifests: fleetsim-stress %s RUN.json [RUN.json ...] -o FILE", name,
                name);
        }
        if (!(o->mode == STRESS_REPORT ? o->out_dir : o->json_path)) {
            BAD("%s", o->mode == STRESS_REPORT
                          ? "report needs -o FILE (--out), the HTML file to write"
                          : "merge needs -o FILE (--out or --json), the merged manifest to "
                            "write");
        }
        o->report_inputs = argv + optind;
        o->report_count = argc - optind;
        return STRESS_PARSE_RUN;
    }
    if (optind < argc) {
        BAD("unexpected argument \"%s\" (see --help)", argv[optind]);
    }
    if (take_shard(o, err, err_len)) {
        return STRESS_PARSE_ERROR;
    }
    if (o->mode == STRESS_CEILING) {
        if (!o->fleet_url || (strncmp(o->fleet_url, "http://", 7) && strncmp(o->fleet_url, "https://", 8))) {
            BAD("ceiling needs --fleet http://HOST:PORT, the fleet's --metrics server");
        }
        if (!o->probe_persisted) {
            BAD("ceiling needs --persisted PROBE, point 3 (prom:BASE_URL:QUERY or cmd:COMMAND)");
        }
        if (o->measure == CEILING_LOSS_ISOLATION && !o->ceiling_rate) {
            BAD("--measure loss-isolation needs --ceiling R, the per-device ceiling found before (or use "
                "--measure all)");
        }
        if (o->rate_to < o->rate_from) {
            BAD("--to (%.15g) is below --from (%.15g)", o->rate_to, o->rate_from);
        }
        if (o->window_s / o->sample_s > 100000 || o->settle_s / o->sample_s > 100000 ||
            o->burst_s / o->sample_s > 100000) {
            BAD("--window, --burst and --settle may each hold at most 100000 --sample periods");
        }
        if (o->sample_s * 3 > o->window_s) {
            BAD("--window (%.15gs) must hold at least three --sample periods (%.15gs)", o->window_s,
                o->sample_s);
        }
        if (o->recv_format != RECON_FMT_SYSLOG) {
            BAD("ceiling's --ordering reads syslog files only: --format syslog");
        }
        if (o->recv_run_tag && !o->ordering_path) {
            BAD("--run-tag goes with --ordering FILE");
        }
        if (!o->burst_rate) {
            o->burst_rate = 10 * o->rate_from;
        }
        return STRESS_PARSE_RUN; /* the NETCONF addressing checks below do not apply */
    }
    if (o->mode == STRESS_RESTCONF) {
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
        if (opt_tls_given(o)) {
            BAD("--tls and its options are for edit, mount, notify and record (NETCONF)");
        }
        return STRESS_PARSE_RUN; /* the NETCONF addressing checks below do not apply */
    }
    if (o->mode != STRESS_RECONCILE && o->report_path) {
        BAD("--report is for reconcile (with restconf's manifest as --sent)");
    }
    if (o->mode == STRESS_SNMP) {
        if (opt_given(given, "rounds") && o->duration_s) {
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
    if (o->mode == STRESS_PUSH && take_push(o, given, err, err_len)) {
        return STRESS_PARSE_ERROR;
    }
    if (o->mode == STRESS_CONTROLLER_MOUNT) {
        if (url_unusable(o->url)) {
            BAD("controller-mount needs --url http://HOST:PORT/restconf (or https://), an IPv6 HOST in "
                "brackets");
        }
        if (!opt_given(given, "device-count")) {
            BAD("controller-mount needs --device-count D, the nodes expected to connect");
        }
        if (o->ssh > 0) {
            BAD("--ssh is for edit, mount and notify (NETCONF)");
        }
        if (opt_tls_given(o)) {
            BAD("--tls and its options are for edit, mount, notify and record (NETCONF)");
        }
        if (o->events_url && url_unusable(o->events_url)) {
            BAD("--events needs the fleet's URL, http://HOST:PORT (or https://), an IPv6 HOST in brackets");
        }
        if (o->events_token_file && !o->events_url) {
            BAD("--events-token-file goes with --events");
        }
        if (!opt_given(given, "msg-timeout")) {
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
    if (o->mode == STRESS_RECONCILE && o->recv_format && o->report_path) {
        BAD("--format %s reads a collector's file: give it as --received, the fleet's report as --sent",
            o->recv_format == RECON_FMT_SYSLOG      ? "syslog"
            : o->recv_format == RECON_FMT_SNMPTRAPD ? "snmptrapd"
                                                    : "csv");
    }
    if (o->mode == STRESS_RECONCILE && o->recv_format != RECON_FMT_SYSLOG && o->recv_ordering) {
        BAD("--ordering reads a syslog file's sequence numbers: it goes with --format syslog");
    }
    if (o->mode == STRESS_RECONCILE && o->recv_format != RECON_FMT_SYSLOG &&
        o->recv_format != RECON_FMT_SNMPTRAPD && o->recv_run_tag) {
        BAD("--run-tag reads a syslog file's or snmptrapd's log: it goes with --format syslog or snmptrapd");
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
    if (o->mode == STRESS_MOUNT) {
        if (o->events_url && !o->reconnect) {
            BAD("--events goes with --reconnect: recovery is measured from a mount that reconnects");
        }
        if (o->events_url && url_unusable(o->events_url)) {
            BAD("--events needs the fleet's URL, http://HOST:PORT (or https://), an IPv6 HOST in brackets");
        }
        if (o->events_token_file && !o->events_url) {
            BAD("--events-token-file goes with --events");
        }
        if (opt_given(given, "events-interval") && !o->events_url) {
            BAD("--events-interval goes with --events");
        }
    }
    if (o->preamble_path && o->tcp_header) {
        BAD("--tcp-preamble and --tcp-header exclude each other: both are the bytes sent first");
    }
    if (o->ssh > 0 && (o->preamble_path || o->tcp_header)) {
        BAD("--%s is for plain TCP; it cannot be combined with --ssh true",
            o->preamble_path ? "tcp-preamble" : "tcp-header");
    }
    if (o->tls) {
        if (o->mode != STRESS_EDIT && o->mode != STRESS_MOUNT && o->mode != STRESS_NOTIFY &&
            o->mode != STRESS_RECORD && o->mode != STRESS_PUSH) {
            BAD("--tls is for edit, mount, notify and record (NETCONF)");
        }
        if (o->ssh > 0) {
            BAD("--tls true and --ssh true exclude each other: NETCONF runs over one of them");
        }
        if (o->ssh_key) {
            BAD("--ssh-key is for SSH; it cannot be combined with --tls true (use --tls-cert and --tls-key)");
        }
        if (o->preamble_path || o->tcp_header || o->ncx_connect) {
            BAD("--%s is for plain TCP; it cannot be combined with --tls true",
                o->preamble_path ? "tcp-preamble"
                : o->tcp_header  ? "tcp-header"
                                 : "ncx-connect");
        }
        if (!o->tls_cert != !o->tls_key) {
            BAD("--tls-cert and --tls-key go together: the certificate and its key");
        }
        o->ssh = 0; /* no SSH set-up, no detection */
    } else if (o->tls_cert || o->tls_key || o->tls_ca || o->tls_verify_host || o->tls_resume) {
        BAD("--%s is for TLS: give --tls true too", o->tls_cert          ? "tls-cert"
                                                    : o->tls_key         ? "tls-key"
                                                    : o->tls_ca          ? "tls-ca"
                                                    : o->tls_verify_host ? "tls-verify-host"
                                                                         : "tls-resume");
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
    if (o->ip_per_device && !netaddr_range_fits(&o->ip_fam, o->ip, o->device_count)) {
        BAD("%u addresses from --ip do not fit in %s", (unsigned)o->device_count,
            o->ip_fam.v6 ? "its IPv6 prefix (the low 32 bits of the address would overflow)" : "IPv4");
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
