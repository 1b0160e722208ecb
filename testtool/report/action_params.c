/*
 * An action's parameters; see action_params.h. A set's XML fragment is
 * checked here for well-formedness only (no schema: the parser serves the
 * API and scenario files alike, before any device); each device's schemas
 * judge it on its worker. The fragment's text is kept in a process-wide
 * store, deduplicated and bounded, so a devact_params stays a plain value
 * that the API and a scenario copy freely.
 */
#include "action_params.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "action_log.h"
#include "capi_target.h"
#include "xmlguard.h"
#include "xmlscan.h"

/* Deepest element nesting a set's fragment may have. */
#define CONFIG_MAX_DEPTH 64

/* One kept fragment. */
struct kept_text {
    struct kept_text *next; /* the one kept before */
    size_t len;             /* bytes of text, without the NUL */
    char text[];            /* the fragment, NUL-terminated */
};

static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kept_text *kept; /* newest first, under kept_lock */
static size_t kept_bytes;      /* their text bytes, under kept_lock */

/* @p text kept for the process's life (the same text is kept once); NULL when the store is full. */
static const char *
keep_text(const char *text)
{
    size_t len = strlen(text);
    const char *found = NULL;
    struct kept_text *k;

    pthread_mutex_lock(&kept_lock);
    for (k = kept; k && !found; k = k->next) {
        if (k->len == len && !memcmp(k->text, text, len)) {
            found = k->text;
        }
    }
    if (!found && kept_bytes + len <= ACTION_PARAMS_MAX_KEPT_BYTES && (k = malloc(sizeof *k + len + 1))) {
        k->next = kept;
        k->len = len;
        memcpy(k->text, text, len + 1);
        kept = k;
        kept_bytes += len;
        found = k->text;
    }
    pthread_mutex_unlock(&kept_lock);
    return found;
}

void
action_params_free_kept(void)
{
    pthread_mutex_lock(&kept_lock);
    while (kept) {
        struct kept_text *next = kept->next;
        free(kept);
        kept = next;
    }
    kept_bytes = 0;
    pthread_mutex_unlock(&kept_lock);
}

/* Only white space from @p p up to @p end (or the NUL when @p end is NULL)? */
static int
blank_until(const char *p, const char *end)
{
    for (; end ? p < end : *p; p++) {
        if (!xmlscan_is_space(*p)) {
            return 0;
        }
    }
    return 1;
}

const char *
action_params_check_xml(const char *xml)
{
    struct xmlscan_scope scope = {.count = 0};
    struct xmlscan_tag open[CONFIG_MAX_DEPTH], t;
    size_t scope_at[CONFIG_MAX_DEPTH];
    uint32_t depth = 0, roots = 0;
    const char *p = xml, *lt;

    if (xmlguard_empty_namespace(xml)) {
        return "an empty namespace (xmlns=\"\") is refused";
    }
    for (;;) {
        /* Between top-level elements: white space, comments and instructions only. */
        if (!depth) {
            if (!(p = xmlscan_skip_misc(p))) {
                return "a comment or processing instruction is not closed";
            }
            if (!*p) {
                break;
            }
            if (*p != '<') {
                return "text outside an element";
            }
        }
        if (xmlscan_next_tag(p, &t)) {
            return depth ? "an element is not closed (or a tag is not XML this parser reads)"
                         : "a tag is not well-formed";
        }
        lt = t.start;
        if (!depth && !blank_until(p, lt)) {
            return "text outside an element";
        }
        if (t.end) {
            if (!depth || !xmlscan_same_qname(&t, &open[depth - 1])) {
                return "an end tag does not match its start tag";
            }
            scope.count = scope_at[--depth];
        } else {
            size_t before = scope.count;
            if (xmlscan_push_decls(&scope, &t)) {
                return "an attribute is repeated, or a namespace declaration is empty or too many";
            }
            if (!xmlscan_resolve(&scope, t.prefix, t.prefix_len)) {
                return t.prefix ? "an element's prefix is not declared"
                                : "a top-level element has no namespace (xmlns=\"...\")";
            }
            roots += !depth;
            if (t.empty) {
                scope.count = before;
            } else if (depth == CONFIG_MAX_DEPTH) {
                return "elements are nested too deep";
            } else {
                scope_at[depth] = before;
                open[depth++] = t;
            }
        }
        p = t.next;
    }
    return roots ? NULL : "no element";
}

/* @return NULL when every member of @p body is one of the NULL-ended @p allowed (share and seed always are).
 */
static const char *
unknown_member(const struct jsonr_value *body, const char *const *allowed)
{
    for (const struct jsonr_value *m = body->child; m; m = m->next) {
        int ok = !strcmp(m->key, "share") || !strcmp(m->key, "seed");
        for (const char *const *a = allowed; !ok && *a; a++) {
            ok = !strcmp(m->key, *a);
        }
        if (!ok) {
            return m->key;
        }
    }
    return NULL;
}

/* A rate action's "rate": a number, a rate profile's text (rate_profile.h), or null (the group's again). */
static const char *
rate_param(const struct jsonr_value *body, struct devact_params *p, char *err, size_t err_len)
{
    const struct jsonr_value *v = jsonr_get(body, "rate");
    const char *name = action_log_kind_name(p->kind);
    char why[200];

    if (!v || !(v->type == JSONR_NULL || v->type == JSONR_NUMBER || v->type == JSONR_STRING) ||
        (v->type == JSONR_NUMBER && !(v->num >= 0 && v->num <= ACTION_PARAMS_MAX_NOTIF_RATE))) {
        snprintf(err, err_len,
                 "%s needs rate: a number from 0 to 1000000 per second, a rate profile such as "
                 "\"linear:1:10:60\", \"sine:10:5:60\" or \"staged:5@30,0@30\", or null (the group's)",
                 name);
        return err;
    }
    if (v->type == JSONR_NULL) {
        p->rate_reset = 1;
    } else if (v->type == JSONR_NUMBER) {
        rate_profile_constant(&p->rate, v->num);
    } else if (rate_profile_parse(v->str, &p->rate, why, sizeof why)) {
        snprintf(err, err_len, "%s: %s", name, why);
        return err;
    }
    return NULL;
}

/* The action's parameters from @p body; @return NULL, or what is wrong (into @p err). */
const char *
action_params_parse(enum devact_kind kind, const struct jsonr_value *body, struct devact_params *p, char *err,
                    size_t err_len)
{
    static const char *const none[] = {NULL};
    static const char *const down[] = {"mode", "sessions", NULL};
    static const char *const reboot[] = {"for", NULL};
    static const char *const latency[] = {"netconf", "snmp", NULL};
    static const char *const drop[] = {"snmp", NULL};
    static const char *const sized[] = {"devices", NULL};
    static const char *const set[] = {"config", "operation", NULL};
    static const char *const rate[] = {"rate", NULL};
    static const char *const flap[] = {"interface", "for", "count", NULL};
    const char *const *allowed[DEVACT_KINDS] = {none, down, none,  reboot, latency, drop, set,
                                                rate, flap, sized, sized,  rate,    rate};
    const char *bad = unknown_member(body, allowed[kind]), *s;
    const struct jsonr_value *v;
    uint32_t lo, hi;
    char *end = NULL;

    memset(p, 0, sizeof *p);
    p->kind = kind;
    if (bad) {
        snprintf(err, err_len, "%s takes no member \"%s\"", action_log_kind_name(kind), bad);
        return err;
    }
    switch (kind) {
    case DEVACT_DOWN:
        p->mode = DEVACT_REFUSE;
        if ((v = jsonr_get(body, "mode"))) {
            s = v->type == JSONR_STRING ? v->str : "";
            if (!strcmp(s, "refuse")) {
                p->mode = DEVACT_REFUSE;
            } else if (!strcmp(s, "blackhole")) {
                p->mode = DEVACT_BLACKHOLE;
            } else {
                return "mode must be \"refuse\" or \"blackhole\"";
            }
        }
        if ((v = jsonr_get(body, "sessions"))) {
            s = v->type == JSONR_STRING ? v->str : "";
            if (!strcmp(s, "freeze")) {
                p->freeze = 1;
            } else if (strcmp(s, "reset")) {
                return "sessions must be \"reset\" or \"freeze\"";
            }
        }
        break;
    case DEVACT_REBOOT:
        p->for_ms = 5000;
        if ((v = jsonr_get(body, "for")) &&
            (v->type != JSONR_STRING || capi_parse_ms_range(v->str, &lo, &hi) || lo != hi)) {
            return "for must be a duration such as \"5s\" or \"500ms\" (at most a day)";
        }
        if (v) {
            p->for_ms = lo;
        }
        break;
    case DEVACT_LATENCY:
        if ((v = jsonr_get(body, "netconf"))) {
            if (v->type != JSONR_STRING || capi_parse_ms_range(v->str, &p->nc_min_ms, &p->nc_max_ms)) {
                return "netconf must be a latency such as \"50ms\" or \"10-20ms\"";
            }
            p->set_nc_latency = 1;
        }
        if ((v = jsonr_get(body, "snmp"))) {
            if (v->type != JSONR_STRING || capi_parse_ms_range(v->str, &p->snmp_min_ms, &p->snmp_max_ms)) {
                return "snmp must be a latency such as \"50ms\" or \"10-20ms\"";
            }
            p->set_snmp_latency = 1;
        }
        if (!p->set_nc_latency && !p->set_snmp_latency) {
            return "latency needs netconf or snmp (or both)";
        }
        break;
    case DEVACT_DROP_RATE:
        /* A number, or RFC 7951's decimal64 string (a scenario file's "0.05"). */
        if (!(v = jsonr_get(body, "snmp")) ||
            !(v->type == JSONR_NUMBER || (v->type == JSONR_STRING && *v->str)) ||
            ((p->snmp_drop_rate = v->type == JSONR_NUMBER ? v->num : strtod(v->str, &end)), 0) ||
            (v->type == JSONR_STRING && *end) || !(p->snmp_drop_rate >= 0 && p->snmp_drop_rate <= 1)) {
            return "drop-rate needs snmp, a number from 0 to 1";
        }
        break;
    case DEVACT_SET:
        if (!(v = jsonr_get(body, "config")) || v->type != JSONR_STRING) {
            return "set needs config, an XML fragment of running configuration";
        }
        if ((s = action_params_check_xml(v->str))) {
            snprintf(err, err_len, "config is not well-formed XML: %s", s);
            return err;
        }
        if (!(p->config = keep_text(v->str))) {
            return "set: the configurations of earlier actions fill the store (ACTION_PARAMS_MAX_KEPT_BYTES)";
        }
        if ((v = jsonr_get(body, "operation"))) {
            static const char *const ops[] = {"merge", "replace", "none"};
            int found = -1;
            for (int i = 0; i < 3 && v->type == JSONR_STRING; i++) {
                if (!strcmp(v->str, ops[i])) {
                    found = i;
                }
            }
            if (found < 0) {
                return "operation must be \"merge\", \"replace\" or \"none\"";
            }
            p->set_op = (uint8_t)found;
        }
        break;
    case DEVACT_NOTIF_RATE:
    case DEVACT_SYSLOG_RATE:
    case DEVACT_TRAP_RATE:
        return rate_param(body, p, err, err_len);
    case DEVACT_FLAP:
        p->for_ms = 2000;
        p->flap_count = 1;
        if ((v = jsonr_get(body, "interface")) &&
            (v->type != JSONR_STRING || !v->str[0] || strlen(v->str) > DEVACT_MAX_IF_NAME)) {
            return "interface must be an interface name (at most 63 bytes) or \"*\"";
        }
        if (v) {
            memcpy(p->if_name, v->str, strlen(v->str) + 1);
        }
        if ((v = jsonr_get(body, "for")) &&
            (v->type != JSONR_STRING || capi_parse_ms_range(v->str, &lo, &hi) || lo != hi || !lo)) {
            return "for must be a duration such as \"5s\" or \"500ms\" (above 0, at most a day)";
        }
        if (v) {
            p->for_ms = lo;
        }
        if ((v = jsonr_get(body, "count"))) {
            uint64_t n = 0;
            if (jsonr_get_u64(body, "count", &n) || !n || n > ACTION_PARAMS_MAX_FLAPS) {
                return "count must be an integer from 1 to 1000";
            }
            p->flap_count = (uint32_t)n;
        }
        break;
    default:
        break;
    }
    return NULL;
}
