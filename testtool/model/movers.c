/*
 * State that moves. At load the state tree is walked once, depth first; a
 * term leaf moves when its compiled type is (by pointer) the compiled type
 * of a typedef whose ancestry reaches one of the types below. libyang keeps
 * no typedef names in compiled types, so the map from compiled type to
 * typedef is built from the parsed modules, whose typedefs point at their
 * compiled types. A leaf that restricts such a type in its own type
 * statement gets a compiled type of its own; for it the parsed leaf (the
 * context keeps a pointer to it in each compiled node) names the typedef.
 *
 * Each get then walks its copy of the tree in the same order and sets the
 * few leaves of the table, so the cost is one walk plus one
 * lyd_change_term() per moving leaf.
 */
#include "movers.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "devview.h"
#include "dynamics.h"
#include "log.h"
#include "ydata.h"

/* Deepest typedef chain followed (a loop in broken modules ends here). */
#define MOVERS_MAX_TPDF_DEPTH 32
/* A gauge's wave: a new random point every this many milliseconds, linear in between. */
#define MOVERS_GAUGE_STEP_MS 300000u
/* An event timestamp (last-change, last-clear) lies this far after boot at most. */
#define MOVERS_EVENT_SPREAD_MS 3600000u
/* Most bytes of a recorded interface speed identity we read ("SPEED_100GB"). */
#define MOVERS_SPEED_NAME_MAX 64

/* How a moving leaf's value is written. */
enum mover_form {
    FORM_C32,      /* counter32: wraps at 2^32 */
    FORM_C64,      /* counter64 */
    FORM_G32,      /* gauge32: at most 2^32 - 1 */
    FORM_G64,      /* gauge64 */
    FORM_DATETIME, /* date-and-time text, UTC with milliseconds */
    FORM_TICKS,    /* hundredths of a second since boot (timeticks, timestamp), 32 bits */
    FORM_NS64,     /* nanoseconds since the epoch (openconfig timeticks64) */
};

/* The typedefs that move, by (module, name). */
struct mover_target {
    const char *module;    /* defining module */
    const char *name;      /* typedef name */
    enum movers_kind kind; /* what it is */
    enum mover_form form;  /* how it is written */
};

static const struct mover_target targets[] = {
    {"ietf-yang-types", "counter32", MOVERS_COUNTER, FORM_C32},
    {"ietf-yang-types", "zero-based-counter32", MOVERS_COUNTER, FORM_C32},
    {"ietf-yang-types", "counter64", MOVERS_COUNTER, FORM_C64},
    {"ietf-yang-types", "zero-based-counter64", MOVERS_COUNTER, FORM_C64},
    {"ietf-yang-types", "gauge32", MOVERS_GAUGE, FORM_G32},
    {"ietf-yang-types", "gauge64", MOVERS_GAUGE, FORM_G64},
    {"ietf-yang-types", "date-and-time", MOVERS_TIMESTAMP, FORM_DATETIME},
    {"ietf-yang-types", "timeticks", MOVERS_TIMESTAMP, FORM_TICKS},
    {"ietf-yang-types", "timestamp", MOVERS_TIMESTAMP, FORM_TICKS},
    {"openconfig-yang-types", "counter32", MOVERS_COUNTER, FORM_C32},
    {"openconfig-yang-types", "counter64", MOVERS_COUNTER, FORM_C64},
    {"openconfig-yang-types", "gauge64", MOVERS_GAUGE, FORM_G64},
    {"openconfig-yang-types", "date-and-time", MOVERS_TIMESTAMP, FORM_DATETIME},
    {"openconfig-types", "timeticks64", MOVERS_TIMESTAMP, FORM_NS64},
};
#define TARGET_COUNT (sizeof targets / sizeof targets[0])

/* Leaf names (substrings) under which a time type is an event's timestamp; the first two mean boot. */
static const char *const event_names[] = {"discontinuity", "boot", "last-change", "last-clear", "last-reset"};

/* openconfig-interfaces counters read from the device view, by name. */
enum if_field {
    IFF_NONE = 0,
    IFF_IN_OCTETS,
    IFF_IN_PKTS,
    IFF_IN_UCAST,
    IFF_IN_MCAST,
    IFF_IN_BCAST,
    IFF_IN_DISCARDS,
    IFF_IN_ERRORS,
    IFF_IN_UNKNOWN,
    IFF_OUT_OCTETS,
    IFF_OUT_PKTS,
    IFF_OUT_UCAST,
    IFF_OUT_MCAST,
    IFF_OUT_BCAST,
    IFF_OUT_DISCARDS,
    IFF_OUT_ERRORS,
    IFF_LAST_CHANGE, /* interface state/last-change: devview_last_change_ms() */
    IFF_OPER_STATUS, /* interface state/oper-status: devview_oper() */
};

static const char *const if_field_names[] = {
    NULL,
    "in-octets",
    "in-pkts",
    "in-unicast-pkts",
    "in-multicast-pkts",
    "in-broadcast-pkts",
    "in-discards",
    "in-errors",
    "in-unknown-protos",
    "out-octets",
    "out-pkts",
    "out-unicast-pkts",
    "out-multicast-pkts",
    "out-broadcast-pkts",
    "out-discards",
    "out-errors",
    "last-change",
    "oper-status",
};

/* openconfig-interfaces' oper-status names; a mover's recorded value is an index into it. */
static const char *const oc_oper_names[] = {"UP",      "DOWN",        "TESTING",         "UNKNOWN",
                                            "DORMANT", "NOT_PRESENT", "LOWER_LAYER_DOWN"};
#define OC_OPER_UP   0
#define OC_OPER_DOWN 1

/* One moving leaf. */
struct mover {
    uint32_t pos;       /* depth-first position in the state tree (every node counts) */
    uint8_t kind;       /* enum movers_kind */
    uint8_t form;       /* enum mover_form */
    uint8_t rate;       /* enum movers_rate (counters) */
    uint8_t if_field;   /* enum if_field; IFF_NONE: computed from the recorded value */
    int32_t if_pos;     /* interface position for if_field, else -1 */
    uint8_t at_boot;    /* timestamps: 1 exactly at boot (discontinuity-time), 0 an event after it */
    uint64_t recorded;  /* recorded value (counters and gauges) */
    uint64_t path_hash; /* hash of the leaf's data path: leaves of a device differ */
};

struct state_movers {
    struct mover *items;               /* in depth-first order */
    uint32_t count;                    /* entries in items */
    uint64_t rate_milli[MOVERS_RATES]; /* counter rate by class, units per 1000 s */
};

/* A compiled type and what its typedef is. */
struct type_ref {
    const struct lysc_type *type; /* compiled type of a typedef */
    int target;                   /* index into targets */
};

/* ------------------------------------------------------------------ typedef ancestry */

static int
target_index(const char *module, const char *name)
{
    for (size_t i = 0; i < TARGET_COUNT; i++) {
        if (!strcmp(targets[i].module, module) && !strcmp(targets[i].name, name)) {
            return (int)i;
        }
    }
    return -1;
}

/* A top-level typedef of @p mod (or of one of its submodules) named @p name. */
static const struct lysp_tpdf *
find_tpdf(const struct lys_module *mod, const char *name)
{
    const struct lysp_module *pm = mod ? mod->parsed : NULL;
    LY_ARRAY_COUNT_TYPE i, j;

    if (!pm) {
        return NULL;
    }
    LY_ARRAY_FOR(pm->typedefs, i)
    {
        if (!strcmp(pm->typedefs[i].name, name)) {
            return &pm->typedefs[i];
        }
    }
    LY_ARRAY_FOR(pm->includes, j)
    {
        const struct lysp_submodule *sm = pm->includes[j].submodule;
        if (!sm) {
            continue;
        }
        LY_ARRAY_FOR(sm->typedefs, i)
        {
            if (!strcmp(sm->typedefs[i].name, name)) {
                return &sm->typedefs[i];
            }
        }
    }
    return NULL;
}

/* The target that type name @p tname, written in (sub)module @p pmod, derives from; -1 for none. */
static int
resolve_type(const struct lysp_module *pmod, const char *tname, int depth)
{
    const struct lys_module *mod = pmod ? pmod->mod : NULL;
    const char *colon = strchr(tname, ':');
    const char *name = colon ? colon + 1 : tname;
    const struct lysp_tpdf *tpdf;
    int t;

    if (!mod || depth > MOVERS_MAX_TPDF_DEPTH) {
        return -1;
    }
    if (colon) {
        size_t plen = (size_t)(colon - tname);
        LY_ARRAY_COUNT_TYPE i;
        const struct lys_module *found = NULL;
        if (strlen(mod->prefix) == plen && !strncmp(mod->prefix, tname, plen)) {
            found = mod;
        }
        LY_ARRAY_FOR(pmod->imports, i)
        {
            if (!found && strlen(pmod->imports[i].prefix) == plen &&
                !strncmp(pmod->imports[i].prefix, tname, plen)) {
                found = pmod->imports[i].module;
            }
        }
        if (!(mod = found)) {
            return -1;
        }
    }
    if ((t = target_index(mod->name, name)) >= 0) {
        return t;
    }
    if (!(tpdf = find_tpdf(mod, name))) {
        return -1; /* a built-in type, or a typedef scoped inside a grouping */
    }
    return resolve_type(tpdf->type.pmod, tpdf->type.name, depth + 1);
}

static int
type_ref_cmp(const void *a, const void *b)
{
    const struct type_ref *x = a, *y = b;
    return x->type < y->type ? -1 : x->type > y->type;
}

static enum fleet_err
add_tpdf_refs(const struct lys_module *mod, const struct lysp_tpdf *tpdfs, struct type_ref **refs,
              uint32_t *count, uint32_t *cap)
{
    LY_ARRAY_COUNT_TYPE i;

    LY_ARRAY_FOR(tpdfs, i)
    {
        const struct lysp_tpdf *t = &tpdfs[i];
        int k;
        if (!t->type.compiled) {
            continue; /* never used, so never compiled */
        }
        if ((k = target_index(mod->name, t->name)) < 0 &&
            (k = resolve_type(t->type.pmod, t->type.name, 0)) < 0) {
            continue;
        }
        if (*count == *cap) {
            uint32_t ncap = *cap ? 2 * *cap : 64;
            struct type_ref *n = realloc(*refs, ncap * sizeof *n);
            if (!n) {
                return FLEET_ERR_NOMEM;
            }
            *refs = n;
            *cap = ncap;
        }
        (*refs)[(*count)++] = (struct type_ref){.type = t->type.compiled, .target = k};
    }
    return FLEET_OK;
}

/* Every compiled typedef type of the context that derives from a target, sorted by pointer. */
static enum fleet_err
collect_type_refs(const struct ly_ctx *ctx, struct type_ref **refs, uint32_t *count)
{
    const struct lys_module *mod;
    uint32_t idx = 0, cap = 0;
    enum fleet_err rc = FLEET_OK;

    *refs = NULL;
    *count = 0;
    while (!rc && (mod = ly_ctx_get_module_iter(ctx, &idx))) {
        LY_ARRAY_COUNT_TYPE j;
        if (!mod->parsed) {
            continue;
        }
        rc = add_tpdf_refs(mod, mod->parsed->typedefs, refs, count, &cap);
        LY_ARRAY_FOR(mod->parsed->includes, j)
        {
            const struct lysp_submodule *sm = mod->parsed->includes[j].submodule;
            if (!rc && sm) {
                rc = add_tpdf_refs(mod, sm->typedefs, refs, count, &cap);
            }
        }
    }
    if (*count) {
        qsort(*refs, *count, sizeof **refs, type_ref_cmp);
    }
    return rc;
}

static int
lookup_target(const struct type_ref *refs, uint32_t count, const struct lysc_type *type)
{
    struct type_ref key = {.type = type};
    const struct type_ref *r = count ? bsearch(&key, refs, count, sizeof *refs, type_ref_cmp) : NULL;
    return r ? r->target : -1;
}

/* The target leaf @p sl's type derives from: its compiled type's typedef, or (a type restricted in the leaf's
 * own type statement compiles to a type of its own) the typedef its parsed type statement names. */
static int
leaf_target(const struct type_ref *refs, uint32_t count, const struct lysc_node_leaf *sl)
{
    const struct lysp_node_leaf *pl = sl->priv; /* the parsed leaf (LY_CTX_SET_PRIV_PARSED) */
    int t = lookup_target(refs, count, sl->type);

    if (t < 0 && pl && pl->nodetype == LYS_LEAF && pl->type.name && pl->type.pmod) {
        t = resolve_type(pl->type.pmod, pl->type.name, 0);
    }
    return t;
}

/* ------------------------------------------------------------------ interfaces */

static const struct lyd_node *
child(const struct lyd_node *parent, const char *name)
{
    const struct lyd_node *n;

    LY_LIST_FOR(lyd_child(parent), n)
    {
        if (n->schema && !strcmp(n->schema->name, name)) {
            return n;
        }
    }
    return NULL;
}

static const char *
child_value(const struct lyd_node *parent, const char *name)
{
    const struct lyd_node *n = child(parent, name);
    return n && (n->schema->nodetype & LYD_NODE_TERM) ? lyd_get_value(n) : NULL;
}

/* The part of an identity value after its prefix. */
static const char *
no_prefix(const char *v)
{
    const char *c = v ? strchr(v, ':') : NULL;
    return c ? c + 1 : v;
}

/* IANAifType numbers of the iana-if-type identities recorded interfaces most often have. */
static uint32_t
iftype_number(const char *name)
{
    static const struct {
        const char *name; /* iana-if-type identity */
        uint32_t number;  /* IANAifType */
    } known[] = {{"ethernetCsmacd", 6},
                 {"softwareLoopback", 24},
                 {"propVirtual", 53},
                 {"tunnel", 131},
                 {"l2vlan", 135},
                 {"l3ipvlan", 136},
                 {"ieee8023adLag", 161},
                 {"bridge", 209},
                 {"ppp", 23},
                 {"sonet", 39},
                 {"atm", 37},
                 {"mplsTunnel", 150}};

    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (!strcmp(known[i].name, name)) {
            return known[i].number;
        }
    }
    return 1; /* other */
}

/* An openconfig port-speed identity ("SPEED_10GB", "SPEED_2500MB") in bits per second; 0 if unknown. */
static uint64_t
oc_speed_bps(const char *v)
{
    const char *s = no_prefix(v);
    char *end = NULL;
    uint64_t n;

    if (!s || strncmp(s, "SPEED_", 6)) {
        return 0;
    }
    n = strtoull(s + 6, &end, 10);
    if (!strcmp(end, "MB")) {
        return n * 1000000ull;
    }
    if (!strcmp(end, "GB")) {
        return n * 1000000000ull;
    }
    if (!strcmp(end, "TB")) {
        return n * 1000000000000ull;
    }
    return 0;
}

static int
is_ietf_if(const struct lyd_node *n)
{
    return n->schema && !strcmp(n->schema->module->name, "ietf-interfaces");
}

/* A top-level "interfaces" container of another module whose entries have state/counters. */
static int
is_oc_interfaces(const struct lyd_node *n)
{
    const struct lyd_node *e;

    if (!n->schema || is_ietf_if(n) || strcmp(n->schema->name, "interfaces")) {
        return 0;
    }
    LY_LIST_FOR(lyd_child(n), e)
    {
        if (e->schema && !strcmp(e->schema->name, "interface") && child(child(e, "state"), "counters")) {
            return 1;
        }
    }
    return 0;
}

/* Fill @p pi from one recorded interface entry (@p oc: openconfig layout). */
static enum fleet_err
fill_interface(const struct lyd_node *e, int oc, struct profile_interface *pi)
{
    const struct lyd_node *st = oc ? child(e, "state") : e;
    const char *name = child_value(e, "name");
    const char *type = child_value(st, "type");
    const char *oper = child_value(st, "oper-status");
    const char *admin = child_value(st, "admin-status");
    const char *speed = child_value(st, "speed");
    const char *mtu = child_value(st, "mtu");
    const char *descr = child_value(st, "description");
    const char *iana = "ethernetCsmacd";

    if (oc) {
        const char *ps = child_value(child(child(e, "ethernet"), "state"), "negotiated-port-speed");
        uint64_t bps = oc_speed_bps(ps);
        if (!bps) {
            bps = oc_speed_bps(child_value(child(child(e, "ethernet"), "state"), "port-speed"));
        }
        pi->speed_bps = bps;
    } else if (speed) {
        pi->speed_bps = strtoull(speed, NULL, 10);
    }
    if (type && (!strchr(type, ':') || !strncmp(type, "iana-if-type:", 13))) {
        iana = no_prefix(type);
    } else if (type) {
        iana = "other";
    }
    pi->name = strdup(name ? name : "");
    pi->type = strdup(iana);
    pi->description = descr ? strdup(descr) : NULL;
    pi->iftype = iftype_number(iana);
    pi->mtu = mtu ? (uint32_t)strtoul(mtu, NULL, 10) : 1500;
    pi->enabled = !admin || !strcasecmp(admin, "up");
    pi->link_up = !oper || !strcasecmp(oper, "up");
    return pi->name && pi->type && (!descr || pi->description) ? FLEET_OK : FLEET_ERR_NOMEM;
}

/* The list entries named "interface" under @p top, or under each of @p top's children. */
static uint32_t
count_entries(const struct lyd_node *top)
{
    const struct lyd_node *e;
    uint32_t n = 0;

    LY_LIST_FOR(lyd_child(top), e)
    {
        n += e->schema && e->schema->nodetype == LYS_LIST && !strcmp(e->schema->name, "interface");
    }
    return n;
}

enum fleet_err
movers_adopt_interfaces(struct device_type *type, char *err, size_t err_len)
{
    struct profile *p = type->profile;
    struct lyd_node *n, *src = NULL, *next;
    struct profile_interface *ifs = NULL;
    uint32_t count, k = 0;
    int oc = 0;
    enum fleet_err rc = FLEET_OK;

    (void)err;
    (void)err_len;
    /* ietf-interfaces first (what ops_state.c serves), else an openconfig layout. */
    LY_LIST_FOR(type->state_tree, n)
    {
        if (is_ietf_if(n) && type->if_layout && count_entries(n) &&
            (!src || !strcmp(n->schema->name, "interfaces-state"))) {
            src = n;
        }
    }
    LY_LIST_FOR(src ? NULL : type->state_tree, n)
    {
        if (!src && is_oc_interfaces(n)) {
            src = n;
            oc = 1;
        }
    }
    if (!src || !(count = count_entries(src)) || count > PROFILE_MAX_INTERFACES) {
        return FLEET_OK;
    }
    if (!(ifs = calloc(count, sizeof *ifs))) {
        return FLEET_ERR_NOMEM;
    }
    LY_LIST_FOR(lyd_child(src), n)
    {
        if (!rc && n->schema && n->schema->nodetype == LYS_LIST && !strcmp(n->schema->name, "interface")) {
            rc = fill_interface(n, oc, &ifs[k++]);
        }
    }
    if (rc) {
        goto cleanup;
    }
    for (uint32_t i = 0; i < p->if_count; i++) {
        free(p->ifs[i].name);
        free(p->ifs[i].type);
        free(p->ifs[i].description);
    }
    free(p->ifs);
    p->ifs = ifs;
    p->if_count = count;
    ifs = NULL;
    log_info("type %s: %" PRIu32 " interfaces from its %s state data are its interfaces (IF-MIB too)",
             type->name ? type->name : p->name, count, oc ? "openconfig-interfaces" : "ietf-interfaces");
    if (!oc) {
        /* get generates ietf-interfaces state from these interfaces; the recorded nodes would clash. */
        for (n = type->state_tree; n; n = next) {
            next = n->next;
            if (is_ietf_if(n)) {
                if (n == type->state_tree) {
                    type->state_tree = next;
                }
                lyd_free_tree(n);
            }
        }
        type->state_tree = type->state_tree ? lyd_first_sibling(type->state_tree) : NULL;
    }

cleanup:
    if (ifs) {
        for (uint32_t i = 0; i < k; i++) {
            free(ifs[i].name);
            free(ifs[i].type);
            free(ifs[i].description);
        }
        free(ifs);
    }
    return rc;
}

/* ------------------------------------------------------------------ the table */

static uint64_t
path_hash(const struct lyd_node *n)
{
    char *path = lyd_path(n, LYD_PATH_STD, NULL, 0);
    uint64_t h = UINT64_C(0xcbf29ce484222325);

    for (const char *c = path ? path : ""; *c; c++) {
        h = (h ^ (uint8_t)*c) * UINT64_C(0x100000001b3);
    }
    free(path);
    return h;
}

static enum movers_rate
rate_class(const char *name)
{
    if (strstr(name, "octets") || strstr(name, "bytes")) {
        return MOVERS_RATE_OCTETS;
    }
    if (strstr(name, "pkts") || strstr(name, "packets")) {
        return MOVERS_RATE_PACKETS;
    }
    if (strstr(name, "error") || strstr(name, "discard") || strstr(name, "drop")) {
        return MOVERS_RATE_ERRORS;
    }
    return MOVERS_RATE_PACKETS;
}

static int
event_name(const char *name, int *at_boot)
{
    for (size_t i = 0; i < sizeof event_names / sizeof event_names[0]; i++) {
        if (strstr(name, event_names[i])) {
            *at_boot = i < 2;
            return 1;
        }
    }
    return 0;
}

/* An openconfig interface counter (or state/last-change): the field, and the interface's position. */
static enum if_field
oc_field(const struct device_type *type, const struct lyd_node *leaf, int32_t *if_pos)
{
    const struct lyd_node *up = lyd_parent(leaf), *entry = NULL, *top;
    const char *name = leaf->schema->name;
    /* the leaves of interface/state itself; the others are of interface/state/counters */
    int state_leaf = !strcmp(name, "last-change") || !strcmp(name, "oper-status");
    size_t f;

    if (!up || !up->schema) {
        return IFF_NONE;
    }
    if (state_leaf && !strcmp(up->schema->name, "state")) {
        entry = lyd_parent(up);
    } else if (!strcmp(up->schema->name, "counters") && lyd_parent(up) &&
               !strcmp(lyd_parent(up)->schema->name, "state")) {
        entry = lyd_parent(lyd_parent(up));
    }
    top = entry ? lyd_parent(entry) : NULL;
    if (!top || lyd_parent(top) || !is_oc_interfaces(top) || strcmp(entry->schema->name, "interface")) {
        return IFF_NONE;
    }
    for (f = 1; f < sizeof if_field_names / sizeof if_field_names[0]; f++) {
        if (!strcmp(if_field_names[f], name)) {
            break;
        }
    }
    if (f == sizeof if_field_names / sizeof if_field_names[0] ||
        (f == IFF_LAST_CHANGE || f == IFF_OPER_STATUS) != state_leaf) {
        return IFF_NONE;
    }
    if ((*if_pos = devview_if_pos(type, child_value(entry, "name") ? child_value(entry, "name") : "")) < 0) {
        return IFF_NONE;
    }
    return (enum if_field)f;
}

/* The index of openconfig oper-status name @p v in oc_oper_names. @return 1, or 0 for another value. */
static int
oc_oper_index(const char *v, uint64_t *index)
{
    for (size_t i = 0; i < sizeof oc_oper_names / sizeof oc_oper_names[0]; i++) {
        if (!strcmp(oc_oper_names[i], v)) {
            *index = i;
            return 1;
        }
    }
    return 0;
}

/* Units per 1000 s of each rate class, from the profile's traffic: a gigabit port in mid band. */
static void
class_rates(const struct profile_traffic *tr, uint64_t rate_milli[MOVERS_RATES])
{
    double octets = (tr->util_min + tr->util_max) / 2 * 1e9 / 8;
    double packets = octets / (tr->packet_bytes ? tr->packet_bytes : 1);
    double errors = packets * (tr->error_ppm + tr->discard_ppm) / 1e6;

    if (octets < 1000) {
        octets = 1000; /* a band of 0 still moves, slowly */
    }
    if (packets < 10) {
        packets = 10;
    }
    if (errors < 0.1) {
        errors = 0.1; /* one error in ten seconds, so errors are seen to count */
    }
    rate_milli[MOVERS_RATE_OCTETS] = (uint64_t)(octets * 1000);
    rate_milli[MOVERS_RATE_PACKETS] = (uint64_t)(packets * 1000);
    rate_milli[MOVERS_RATE_ERRORS] = (uint64_t)(errors * 1000);
}

static enum fleet_err
add_mover(struct state_movers *m, uint32_t *cap, const struct mover *mv)
{
    if (m->count == *cap) {
        uint32_t ncap = *cap ? 2 * *cap : 64;
        struct mover *n = realloc(m->items, ncap * sizeof *n);
        if (!n) {
            return FLEET_ERR_NOMEM;
        }
        m->items = n;
        *cap = ncap;
    }
    m->items[m->count++] = *mv;
    return FLEET_OK;
}

enum fleet_err
movers_build(const struct device_type *type, struct state_movers **out)
{
    struct state_movers *m = NULL;
    struct type_ref *refs = NULL;
    const struct lyd_node *top, *n;
    uint32_t ref_count = 0, cap = 0, pos = 0;
    enum fleet_err rc;

    *out = NULL;
    if (!type->state_tree) {
        return FLEET_OK;
    }
    if ((rc = collect_type_refs(type->schemas.ctx, &refs, &ref_count))) {
        goto cleanup;
    }
    if (!(m = calloc(1, sizeof *m))) {
        rc = FLEET_ERR_NOMEM;
        goto cleanup;
    }
    class_rates(&type->profile->traffic, m->rate_milli);
    LY_LIST_FOR(type->state_tree, top)
    {
        LYD_TREE_DFS_BEGIN(top, n)
        {
            if (!rc && n->schema && n->schema->nodetype == LYS_LEAF && !(n->schema->flags & LYS_KEY)) {
                const struct lysc_node_leaf *sl = (const struct lysc_node_leaf *)n->schema;
                int t = leaf_target(refs, ref_count, sl);
                int32_t if_pos = -1;
                enum if_field f = oc_field(type, n, &if_pos);
                int at_boot = 0;
                struct mover mv = {.pos = pos, .if_pos = -1};
                if (t >= 0 && (targets[t].kind != MOVERS_TIMESTAMP || event_name(sl->name, &at_boot))) {
                    mv.kind = (uint8_t)targets[t].kind;
                    mv.form = (uint8_t)targets[t].form;
                    mv.rate = (uint8_t)rate_class(sl->name);
                    mv.recorded = strtoull(lyd_get_value(n), NULL, 10);
                    mv.path_hash = path_hash(n);
                    if (f != IFF_NONE && (f == IFF_LAST_CHANGE) == (mv.kind == MOVERS_TIMESTAMP)) {
                        mv.if_field = (uint8_t)f;
                        mv.if_pos = if_pos;
                    }
                    mv.at_boot = (uint8_t)at_boot;
                    rc = add_mover(m, &cap, &mv);
                } else if (f == IFF_OPER_STATUS && oc_oper_index(lyd_get_value(n), &mv.recorded)) {
                    /* the link state SNMP's ifOperStatus shows, so both views agree through flaps */
                    mv.kind = MOVERS_STATUS;
                    mv.if_field = (uint8_t)f;
                    mv.if_pos = if_pos;
                    rc = add_mover(m, &cap, &mv);
                }
            }
            pos++;
            LYD_TREE_DFS_END(top, n);
        }
    }
    if (!rc && !m->count) {
        movers_free(m);
        m = NULL;
    }
    if (!rc && m) {
        log_info("type %s: %" PRIu32 " counters, gauges and timestamps of its state data move", type->name,
                 m->count);
    }

cleanup:
    free(refs);
    if (rc) {
        movers_free(m);
        m = NULL;
    }
    *out = m;
    return rc;
}

/* ------------------------------------------------------------------ values */

/* @p v times @p ppm / 10^6, saturating at 2^64 - 1. */
static uint64_t
mul_ppm(uint64_t v, uint64_t ppm)
{
    uint64_t hi = v / 1000000u, lo = v % 1000000u;
    if (hi && ppm > UINT64_MAX / hi) {
        return UINT64_MAX;
    }
    uint64_t a = hi * ppm, b = lo * ppm / 1000000u;
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t
counter_value(const struct state_movers *m, const struct mover *mv, uint64_t seed, uint64_t boot_ms,
              uint64_t now_ms)
{
    uint64_t elapsed_ms = now_ms > boot_ms ? now_ms - boot_ms : 0;
    uint64_t scale_ppm = 500000 + dyn_hash(seed, mv->path_hash, 1) % 1000001;  /* 0.5 .. 1.5 */
    uint64_t factor_ppm = 500000 + dyn_hash(seed, mv->path_hash, 2) % 1000001; /* 0.5 .. 1.5 */
    uint64_t rate = mul_ppm(m->rate_milli[mv->rate], factor_ppm);              /* per 1000 s */
    uint64_t s = elapsed_ms / 1000, r = elapsed_ms % 1000;
    /* Split in seconds and milliseconds so that the product stays in 64 bits; still monotone. */
    uint64_t v = mul_ppm(mv->recorded, scale_ppm) + rate * s / 1000 + rate * r / 1000000;

    return mv->form == FORM_C32 ? v & 0xffffffffu : v;
}

/* A point of the gauge's wave in [-10^6, 10^6]. */
static int64_t
gauge_point(uint64_t seed, uint64_t path, uint64_t k)
{
    return (int64_t)(dyn_hash(seed, path, k + 3) % 2000001) - 1000000;
}

static uint64_t
gauge_value(const struct mover *mv, uint64_t seed, uint64_t now_ms)
{
    uint64_t k = now_ms / MOVERS_GAUGE_STEP_MS, into = now_ms % MOVERS_GAUGE_STEP_MS;
    int64_t a = gauge_point(seed, mv->path_hash, k), b = gauge_point(seed, mv->path_hash, k + 1);
    int64_t w = a + (b - a) * (int64_t)into / (int64_t)MOVERS_GAUGE_STEP_MS;
    uint64_t tenth = mv->recorded / 10;
    uint64_t lo = mv->recorded - tenth;
    uint64_t hi = mv->recorded > UINT64_MAX - tenth ? UINT64_MAX : mv->recorded + tenth;
    uint64_t max = mv->form == FORM_G32 ? 0xffffffffu : UINT64_MAX;
    double delta = (double)tenth * (double)w / 1e6;
    uint64_t v;

    if (delta < 0) {
        uint64_t d = (uint64_t)-delta;
        v = d > mv->recorded - lo ? lo : mv->recorded - d;
    } else {
        uint64_t d = (uint64_t)delta;
        v = d > hi - mv->recorded ? hi : mv->recorded + d;
    }
    return v > max ? max : v;
}

static void
format_time(const struct mover *mv, uint64_t at_ms, uint64_t boot_ms, char *buf, size_t len)
{
    if (mv->form == FORM_DATETIME) {
        ydata_datetime(at_ms, buf, len);
    } else if (mv->form == FORM_NS64) {
        snprintf(buf, len, "%" PRIu64, at_ms * 1000000u);
    } else {
        snprintf(buf, len, "%" PRIu64, ((at_ms - boot_ms) / 10) & 0xffffffffu);
    }
}

static uint64_t
if_value(enum if_field f, const struct dyn_if_counters *c)
{
    switch (f) {
    case IFF_IN_OCTETS:
        return c->in_octets;
    case IFF_IN_PKTS:
        return c->in_ucast + c->in_multicast + c->in_broadcast;
    case IFF_IN_UCAST:
        return c->in_ucast;
    case IFF_IN_MCAST:
        return c->in_multicast;
    case IFF_IN_BCAST:
        return c->in_broadcast;
    case IFF_IN_DISCARDS:
        return c->in_discards;
    case IFF_IN_ERRORS:
        return c->in_errors;
    case IFF_IN_UNKNOWN:
        return c->in_unknown_protos;
    case IFF_OUT_OCTETS:
        return c->out_octets;
    case IFF_OUT_PKTS:
        return c->out_ucast + c->out_multicast + c->out_broadcast;
    case IFF_OUT_UCAST:
        return c->out_ucast;
    case IFF_OUT_MCAST:
        return c->out_multicast;
    case IFF_OUT_BCAST:
        return c->out_broadcast;
    case IFF_OUT_DISCARDS:
        return c->out_discards;
    case IFF_OUT_ERRORS:
        return c->out_errors;
    default:
        return 0;
    }
}

/* The text of moving leaf @p mv for the device at @p now_ms; @p cur caches one interface's counters. */
static void
mover_text(const struct state_movers *m, const struct mover *mv, const struct device *dev, uint64_t now_ms,
           struct movers_cursor *cur, char *buf, size_t len)
{
    uint64_t seed = devview_seed(dev), boot = devview_boot_ms(dev), v;

    if (mv->if_field == IFF_LAST_CHANGE) {
        format_time(mv, devview_last_change_ms(dev, (uint32_t)mv->if_pos), boot, buf, len);
        return;
    }
    if (mv->if_field == IFF_OPER_STATUS) {
        /* up is UP; down keeps a recorded reason (LOWER_LAYER_DOWN, DORMANT ...) and is DOWN otherwise */
        uint64_t down = mv->recorded == OC_OPER_UP ? OC_OPER_DOWN : mv->recorded;
        snprintf(
            buf, len, "%s",
            oc_oper_names[devview_oper(dev, (uint32_t)mv->if_pos) == DEVVIEW_OPER_UP ? OC_OPER_UP : down]);
        return;
    }
    if (mv->if_field != IFF_NONE) {
        if (cur->if_pos != mv->if_pos) {
            devview_counters(dev, (uint32_t)mv->if_pos, now_ms, &cur->counters);
            cur->if_pos = mv->if_pos;
        }
        v = if_value((enum if_field)mv->if_field, &cur->counters);
        snprintf(buf, len, "%" PRIu64, mv->form == FORM_C32 ? v & 0xffffffffu : v);
        return;
    }
    switch ((enum movers_kind)mv->kind) {
    case MOVERS_COUNTER:
        v = counter_value(m, mv, seed, boot, now_ms);
        break;
    case MOVERS_GAUGE:
        v = gauge_value(mv, seed, now_ms);
        break;
    default: {
        uint64_t at = boot;
        if (!mv->at_boot) {
            at = boot + dyn_hash(seed, mv->path_hash, 7) % MOVERS_EVENT_SPREAD_MS;
            at = at > now_ms && now_ms >= boot ? now_ms : at;
        }
        format_time(mv, at, boot, buf, len);
        return;
    }
    }
    snprintf(buf, len, "%" PRIu64, v);
}

void
movers_cursor_init(struct movers_cursor *cur)
{
    cur->if_pos = -1;
}

void
movers_text(const struct state_movers *m, uint32_t i, const struct device *dev, uint64_t now_ms,
            struct movers_cursor *cur, char *buf, size_t len)
{
    mover_text(m, &m->items[i], dev, now_ms, cur, buf, len);
}

void
movers_apply(const struct state_movers *m, const struct device *dev, struct lyd_node *tree, uint64_t now_ms)
{
    struct lyd_node *top, *n;
    struct movers_cursor cur;
    uint32_t pos = 0, k = 0;
    char buf[MOVERS_TEXT_MAX];

    if (!m) {
        return;
    }
    movers_cursor_init(&cur);
    LY_LIST_FOR(tree, top)
    {
        LYD_TREE_DFS_BEGIN(top, n)
        {
            if (k == m->count) {
                return; /* the rest of the tree does not move */
            }
            if (m->items[k].pos == pos) {
                mover_text(m, &m->items[k], dev, now_ms, &cur, buf, sizeof buf);
                /* A value outside a derived type's range keeps the recorded one. */
                (void)lyd_change_term(n, buf);
                k++;
            }
            pos++;
            LYD_TREE_DFS_END(top, n);
        }
    }
}

uint32_t
movers_count(const struct state_movers *m)
{
    return m ? m->count : 0;
}

void
movers_get(const struct state_movers *m, uint32_t i, struct movers_info *info)
{
    const struct mover *mv = &m->items[i];

    info->pos = mv->pos;
    info->kind = (enum movers_kind)mv->kind;
    info->rate = mv->kind == MOVERS_COUNTER ? (enum movers_rate)mv->rate : MOVERS_RATE_PACKETS;
    info->wide = mv->form != FORM_C32 && mv->form != FORM_G32 && mv->form != FORM_TICKS;
    info->if_pos = mv->if_field != IFF_NONE ? mv->if_pos : -1;
    info->recorded = mv->recorded;
}

void
movers_free(struct state_movers *m)
{
    if (!m) {
        return;
    }
    free(m->items);
    free(m);
}

/* Names of clocks among date-and-time leaves (ietf-system's current-datetime). */
static const char *const clock_names[] = {"current-datetime", "current-time", "clock"};

int
movers_schema_moves(const struct lysc_node *node)
{
    const struct lysp_type *ptype = NULL;
    int t;

    if (!node || !(node->flags & LYS_CONFIG_R)) {
        return 0;
    }
    /* The parsed node (LY_CTX_SET_PRIV_PARSED) names the type as written: its typedef chain is followed. */
    if (node->nodetype == LYS_LEAF && node->priv) {
        ptype = &((const struct lysp_node_leaf *)node->priv)->type;
    } else if (node->nodetype == LYS_LEAFLIST && node->priv) {
        ptype = &((const struct lysp_node_leaflist *)node->priv)->type;
    }
    if (!ptype || !ptype->name || !ptype->pmod || (t = resolve_type(ptype->pmod, ptype->name, 0)) < 0) {
        return 0;
    }
    if (targets[t].kind != MOVERS_TIMESTAMP) {
        return 1; /* counters and gauges */
    }
    if (targets[t].form == FORM_TICKS) {
        int at_boot;
        /* timeticks and timestamp run with uptime, unless they date an event (ifLastChange-like). */
        return !event_name(node->name, &at_boot);
    }
    for (size_t i = 0; i < sizeof clock_names / sizeof clock_names[0]; i++) {
        if (strstr(node->name, clock_names[i])) {
            return 1;
        }
    }
    return 0;
}
