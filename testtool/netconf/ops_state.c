/*
 * The device's operational state in get: ietf-interfaces where the revision
 * the device implements puts it (std_revisions.h: the NMDA leaves under
 * /interfaces/interface for configured interfaces in 2018-02-20, the
 * interfaces-state list for every interface of the profile in both) and
 * ietf-system's system-state. Values come from the device view at one
 * instant, the same numbers SNMP serves at that instant. A get that selects
 * only a type's own state subtrees is answered from their text instead.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "device.h"
#include "devview.h"
#include "filter.h"
#include "identity.h"
#include "movers.h"
#include "ops.h"
#include "state_text.h"
#include "std_revisions.h"
#include "ydata.h"

static int
term(struct lyd_node *parent, const char *name, const char *value)
{
    return lyd_new_term(parent, NULL, name, value, 0, NULL) ? -1 : 0;
}

static int
term_u64(struct lyd_node *parent, const char *name, uint64_t value)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%" PRIu64, value);
    return term(parent, name, buf);
}

/* The state leaves of one interface, shared by both trees. */
static int
interface_state(struct device *dev, const struct devview_cfg *cfg, uint32_t pos, uint64_t now_ms,
                struct lyd_node *entry)
{
    const struct profile_interface *pi = &dev->type->profile->ifs[pos];
    struct dyn_if_counters c;
    struct lyd_node *stats = NULL;
    char buf[64];
    int bad = 0;

    bad |= term(entry, "admin-status", cfg->enabled[pos] ? "up" : "down");
    bad |= term(entry, "oper-status", devview_oper(dev, pos) == DEVVIEW_OPER_UP ? "up" : "down");
    ydata_datetime(devview_last_change_ms(dev, pos), buf, sizeof buf);
    bad |= term(entry, "last-change", buf);
    bad |= term_u64(entry, "if-index", pos + 1);
    snprintf(buf, sizeof buf, "02:%02x:%02x:%02x:%02x:%02x", (dev->index >> 16) & 255,
             (dev->index >> 8) & 255, dev->index & 255, (pos >> 8) & 255, pos & 255);
    bad |= term(entry, "phys-address", buf);
    bad |= term_u64(entry, "speed", pi->speed_bps);
    if (lyd_new_inner(entry, NULL, "statistics", 0, &stats)) {
        return -1;
    }
    devview_counters(dev, pos, now_ms, &c);
    ydata_datetime(devview_boot_ms(dev), buf, sizeof buf);
    bad |= term(stats, "discontinuity-time", buf);
    bad |= term_u64(stats, "in-octets", c.in_octets);
    bad |= term_u64(stats, "in-unicast-pkts", c.in_ucast);
    bad |= term_u64(stats, "in-broadcast-pkts", c.in_broadcast);
    bad |= term_u64(stats, "in-multicast-pkts", c.in_multicast);
    bad |= term_u64(stats, "in-discards", c.in_discards & 0xffffffffu);
    bad |= term_u64(stats, "in-errors", c.in_errors & 0xffffffffu);
    bad |= term_u64(stats, "in-unknown-protos", c.in_unknown_protos & 0xffffffffu);
    bad |= term_u64(stats, "out-octets", c.out_octets);
    bad |= term_u64(stats, "out-unicast-pkts", c.out_ucast);
    bad |= term_u64(stats, "out-broadcast-pkts", c.out_broadcast);
    bad |= term_u64(stats, "out-multicast-pkts", c.out_multicast);
    bad |= term_u64(stats, "out-discards", c.out_discards & 0xffffffffu);
    bad |= term_u64(stats, "out-errors", c.out_errors & 0xffffffffu);
    return bad;
}

/* True when running has /interfaces/interface[name=@p name]. */
static int
configured(const struct lyd_node *interfaces, const struct device_type *type, uint32_t pos)
{
    const struct lyd_node *n;
    LY_LIST_FOR(lyd_child(interfaces), n)
    {
        const struct lyd_node *key = lyd_child(n);
        if (key && !strcmp(lyd_get_value(key), type->profile->ifs[pos].name)) {
            return 1;
        }
    }
    return 0;
}

enum fleet_err
device_state(struct rpc_call *call, const struct lyd_node *running, struct lyd_node **tree)
{
    struct device *dev = call->dev;
    struct fleet *fleet = call->fleet;
    const struct device_type *type = call->dev->type;
    struct ly_ctx *ctx = type->schemas.ctx;
    const struct profile *p = type->profile;
    const struct lys_module *ifmod = ly_ctx_get_module_implemented(ctx, "ietf-interfaces");
    const struct stdrev_interfaces *layout = type->if_layout;
    const struct lys_module *sysmod = ly_ctx_get_module_implemented(ctx, "ietf-system");
    const struct devview_cfg *cfg = devview_cfg(dev);
    const struct lyd_node *run_ifs = NULL, *n;
    struct lyd_node *ifs = NULL, *ifs_state = NULL, *sys = NULL, *node = NULL;
    uint64_t now_ms = devview_now_ms(fleet);
    char buf[64];
    int bad = 0;

    *tree = NULL;
    if (!cfg || !ifmod || !sysmod) {
        return cfg ? FLEET_OK : FLEET_ERR_NOMEM;
    }
    LY_LIST_FOR(running, n)
    {
        if (n->schema && n->schema->module == ifmod && !strcmp(n->schema->name, "interfaces")) {
            run_ifs = n;
        }
    }
    bad |= lyd_new_inner(NULL, ifmod, "interfaces", 0, &ifs) != LY_SUCCESS;
    /* Without a layout (ietf-interfaces of another shape) a recorded type serves its recorded state. */
    bad |= layout && layout->state_list && lyd_new_inner(NULL, ifmod, "interfaces-state", 0, &ifs_state);
    for (uint32_t pos = 0; !bad && layout && pos < p->if_count; pos++) {
        const struct profile_interface *pi = &p->ifs[pos];
        if (layout->config_state && run_ifs && configured(run_ifs, type, pos)) {
            bad |= lyd_new_list(ifs, NULL, "interface", 0, &node, pi->name) != LY_SUCCESS;
            bad |= !bad && interface_state(dev, cfg, pos, now_ms, node);
        }
        if (!layout->state_list) {
            continue;
        }
        bad |= lyd_new_list(ifs_state, NULL, "interface", 0, &node, pi->name) != LY_SUCCESS;
        if (!bad) {
            snprintf(buf, sizeof buf, "iana-if-type:%s", pi->type);
            bad |= term(node, "type", buf);
            bad |= interface_state(dev, cfg, pos, now_ms, node);
        }
    }
    bad |= lyd_new_inner(NULL, sysmod, "system-state", 0, &sys) != LY_SUCCESS;
    if (!bad) {
        struct lyd_node *platform = NULL, *clock = NULL;
        bad |= lyd_new_inner(sys, NULL, "platform", 0, &platform) != LY_SUCCESS;
        bad |= lyd_new_inner(sys, NULL, "clock", 0, &clock) != LY_SUCCESS;
        if (!bad) {
            bad |= term(platform, "os-name", "fleetsim");
            bad |= term(platform, "os-release", FLEETSIM_VERSION);
            bad |= term(platform, "os-version", p->name);
            bad |= term(platform, "machine", p->sys_descr ? p->sys_descr : p->name);
            ydata_datetime(now_ms, buf, sizeof buf);
            bad |= term(clock, "current-datetime", buf);
            ydata_datetime(devview_boot_ms(dev), buf, sizeof buf);
            bad |= term(clock, "boot-datetime", buf);
        }
    }
    if (bad) {
        lyd_free_all(ifs);
        lyd_free_all(ifs_state);
        lyd_free_all(sys);
        return FLEET_ERR_NOMEM;
    }
    if (ifs_state) {
        lyd_insert_sibling(ifs, ifs_state, NULL);
    }
    lyd_insert_sibling(ifs, sys, NULL);
    {
        /* RFC 5277 netconf/streams: the one stream a device has. */
        const struct lys_module *ncn = ly_ctx_get_module_implemented(ctx, "nc-notifications");
        struct lyd_node *nc = NULL, *streams = NULL, *one = NULL;
        if (ncn && !lyd_new_inner(NULL, ncn, "netconf", 0, &nc) &&
            !lyd_new_inner(nc, NULL, "streams", 0, &streams) &&
            !lyd_new_list(streams, NULL, "stream", 0, &one, "NETCONF")) {
            bad |= term(one, "description", "The device's notifications (RFC 5277 NETCONF stream)");
            bad |= term(one, "replaySupport", fleet->cfg.replay_log ? "true" : "false");
            if (fleet->cfg.replay_log) {
                ydata_datetime(fleet->start_ms, buf, sizeof buf);
                bad |= term(one, "replayLogCreationTime", buf);
            }
            lyd_insert_sibling(ifs, nc, NULL);
        } else {
            lyd_free_all(nc);
        }
    }
    if (type->state_tree) {
        /* The type's own state data (MIB-derived modules, a recorded state.xml); its counters move. */
        struct lyd_node *more = NULL;
        if (lyd_dup_siblings(type->state_tree, NULL, LYD_DUP_RECURSIVE, &more)) {
            lyd_free_all(ifs);
            return FLEET_ERR_NOMEM;
        }
        movers_apply(type->movers, dev, more, now_ms);
        lyd_insert_sibling(ifs, more, NULL);
    }
    /* Top-level siblings are kept in module order: the first is not necessarily ifs. */
    *tree = lyd_first_sibling(ifs);
    return FLEET_OK;
}

/* Top-level state subtrees one get may pick for the text path; a filter naming more takes libyang's. */
#define STATE_TEXT_PICKS 64

int
ops_state_text_reply(struct rpc_call *call, const struct lyd_node *filter)
{
    const struct lyd_node_any *any = (const struct lyd_node_any *)filter;
    const struct lyd_meta *kind;

    if (!filter || any->value_type != LYD_ANYDATA_DATATREE || !any->value.tree) {
        return 0;
    }
    kind = lyd_find_meta(filter->meta, NULL, "ietf-netconf:type");
    if (kind && strcmp(lyd_get_meta_value(kind), "subtree")) {
        return 0;
    }
    return ops_state_text_print(call, any->value.tree);
}

int
ops_state_text_print(struct rpc_call *call, const struct lyd_node *spec)
{
    const struct state_text *st = call->dev->type->state_text;
    const struct lyd_node *f, *n, *running = ops_read_ds(call, DS_RUNNING);
    const struct lyd_node *config[STATE_TEXT_PICKS] = {0};
    uint8_t picked[STATE_TEXT_PICKS] = {0};
    uint32_t count = state_text_count(st);
    uint64_t now_ms;
    size_t from;

    if (!count || !spec) {
        return 0;
    }
    LY_LIST_FOR(spec, f)
    {
        const char *ns, *name;
        int i;
        if (!filter_is_selection(f, &ns, &name) || (i = state_text_find(st, ns, name)) < 0 ||
            i >= STATE_TEXT_PICKS) {
            return 0;
        }
        picked[i] = 1;
    }
    /* Configuration under a picked node (openconfig's interfaces/interface/config) is joined in. */
    LY_LIST_FOR(running, n)
    {
        int i = n->schema && !(n->flags & LYD_DEFAULT) ? state_text_find_schema(st, n->schema) : -1;
        if (i >= 0 && i < STATE_TEXT_PICKS && picked[i]) {
            if (call->dev->type->identity && running != call->dev->type->template_tree) {
                return 0; /* identity rules rewrite shared data only, not what the device's edits wrote */
            }
            config[i] = n;
        }
    }
    call->has_data = 1;
    from = call->data.len;
    now_ms = devview_now_ms(call->fleet);
    for (uint32_t i = 0; i < count && i < STATE_TEXT_PICKS; i++) {
        if (picked[i] && state_text_print(st, i, config[i], call->dev, now_ms, &call->data)) {
            call->data.failed = 1;
        }
    }
    identity_rewrite_reply(call->dev, &call->data, from);
    return 1;
}

/* Name, namespace and text of a filter node, schema-bound or opaque. */
static const char *
flt_node_name(const struct lyd_node *n)
{
    return n->schema ? n->schema->name : ((const struct lyd_node_opaq *)n)->name.name;
}

static const char *
flt_node_ns(const struct lyd_node *n)
{
    const struct lyd_node_opaq *o = (const struct lyd_node_opaq *)n;
    return n->schema ? n->schema->module->ns : (o->format == LY_VALUE_XML ? o->name.module_ns : NULL);
}

static const char *
flt_node_text(const struct lyd_node *n)
{
    const char *t = n->schema ? ((n->schema->nodetype & LYD_NODE_TERM) ? lyd_get_value(n) : NULL)
                              : ((const struct lyd_node_opaq *)n)->value;
    return t ? t : "";
}

static int
flt_node_is(const struct lyd_node *n, const char *name)
{
    const char *ns = flt_node_ns(n);
    return !strcmp(flt_node_name(n), name) && ns && !strcmp(ns, OPS_IF_NS);
}

int
ops_if_stats_text(struct rpc_call *call, const struct lyd_node *spec)
{
    struct device *dev = call->dev;
    const struct device_type *type = dev->type;
    const struct stdrev_interfaces *layout = type->if_layout;
    const struct lyd_node *entry, *c, *name = NULL, *stats = NULL, *n;
    const char *top;
    struct dyn_if_counters k;
    int32_t pos;
    uint64_t now_ms;
    char buf[64];

    /* The shape: interfaces(-state)/interface[name=X]/statistics, nothing else, no identity rules. */
    if (!spec || spec->next || type->identity || !layout || !(entry = lyd_child(spec)) || entry->next ||
        !flt_node_is(entry, "interface")) {
        return 0;
    }
    if (flt_node_is(spec, "interfaces") && layout->config_state) {
        top = "interfaces";
    } else if (flt_node_is(spec, "interfaces-state") && layout->state_list) {
        top = "interfaces-state";
    } else {
        return 0;
    }
    LY_LIST_FOR(lyd_child(entry), c)
    {
        if (flt_node_is(c, "name") && !name && !lyd_child(c) && flt_node_text(c)[0]) {
            name = c;
        } else if (flt_node_is(c, "statistics") && !stats && !lyd_child(c) && !flt_node_text(c)[0]) {
            stats = c;
        } else {
            return 0;
        }
    }
    if (!name || !stats || (pos = devview_if_pos(type, flt_node_text(name))) < 0) {
        return 0;
    }
    if (!strcmp(top, "interfaces")) {
        /* /interfaces shows an interface's state only when running configures it. */
        const struct lyd_node *run_ifs = NULL;
        LY_LIST_FOR(ops_read_ds(call, DS_RUNNING), n)
        {
            if (n->schema && !strcmp(n->schema->name, "interfaces") &&
                !strcmp(n->schema->module->ns, OPS_IF_NS)) {
                run_ifs = n;
            }
        }
        if (!run_ifs || !configured(run_ifs, type, (uint32_t)pos)) {
            return 0;
        }
    }
    /* The text libyang prints for the filtered view, values as interface_state() sets them. */
    now_ms = devview_now_ms(call->fleet);
    devview_counters(dev, (uint32_t)pos, now_ms, &k);
    call->has_data = 1;
    sbuf_printf(&call->data, "<%s xmlns=\"" OPS_IF_NS "\"><interface><name>", top);
    sbuf_add_xml(&call->data, type->profile->ifs[pos].name);
    ydata_datetime(devview_boot_ms(dev), buf, sizeof buf - 6);
    if (buf[0] && buf[strlen(buf) - 1] == 'Z') {
        strcpy(buf + strlen(buf) - 1, "+00:00"); /* libyang's canonical form of UTC, as get prints it */
    }
    sbuf_printf(
        &call->data,
        "</name><statistics><discontinuity-time>%s</discontinuity-time><in-octets>%" PRIu64
        "</in-octets><in-unicast-pkts>%" PRIu64 "</in-unicast-pkts><in-broadcast-pkts>%" PRIu64
        "</in-broadcast-pkts><in-multicast-pkts>%" PRIu64 "</in-multicast-pkts><in-discards>%" PRIu64
        "</in-discards><in-errors>%" PRIu64 "</in-errors><in-unknown-protos>%" PRIu64
        "</in-unknown-protos><out-octets>%" PRIu64 "</out-octets><out-unicast-pkts>%" PRIu64
        "</out-unicast-pkts><out-broadcast-pkts>%" PRIu64 "</out-broadcast-pkts><out-multicast-pkts>%" PRIu64
        "</out-multicast-pkts><out-discards>%" PRIu64 "</out-discards><out-errors>%" PRIu64
        "</out-errors></statistics></interface></%s>",
        buf, k.in_octets, k.in_ucast, k.in_broadcast, k.in_multicast, k.in_discards & 0xffffffffu,
        k.in_errors & 0xffffffffu, k.in_unknown_protos & 0xffffffffu, k.out_octets, k.out_ucast,
        k.out_broadcast, k.out_multicast, k.out_discards & 0xffffffffu, k.out_errors & 0xffffffffu, top);
    return 1;
}
