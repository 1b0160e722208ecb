/*
 * An action's parameters; see action_params.h.
 */
#include "action_params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "action_log.h"
#include "capi_target.h"

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
    const char *const *allowed[DEVACT_KINDS] = {none, down, none, reboot, latency, drop,
                                                none, none, none, sized,  sized};
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
    default:
        break;
    }
    return NULL;
}
