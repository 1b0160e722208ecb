/*
 * The fleet's life: check the plan against the machine (ports, addresses,
 * descriptors), load the shared model, create the worker loops and devices
 * (device i on worker i mod W), open every listener, run, and take it all
 * down again. Everything that can be wrong with the plan is found here,
 * before anything listens.
 */
#include "fleet.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "flap.h"
#include "listen.h"
#include "log.h"
#include "mib.h"
#include "notif_file.h"
#include "rpc_custom.h"
#include "sbuf.h"
#include "session.h"
#include "smiv2.h"
#include "ssh_link.h"
#include "validate.h"
#include "xmlscan.h"

uint32_t
fleet_new_session_id(struct fleet *fleet)
{
    uint32_t id;

    do {
        id = (uint32_t)atomic_fetch_add(&fleet->next_session_id, 1);
    } while (id == 0);
    return id;
}

/* Raise the soft descriptor limit to the hard one and check that the plan fits in it. */
static enum fleet_err
check_descriptors(struct fleet *fleet, char *err, size_t err_len)
{
    const struct fleet_config *cfg = &fleet->cfg;
    struct rlimit rl;
    uint64_t listeners = (cfg->ip_per_device ? cfg->threads : cfg->device_count) * (cfg->snmp ? 2u : 1u);
    /* Per worker: epoll and eventfd; plus stdio and libyang's files. */
    uint64_t fixed = 2ull * cfg->threads + 16;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    getrlimit(RLIMIT_NOFILE, &rl);
    fleet->max_fds = rl.rlim_cur > 1000000 ? 1000000 : (int)rl.rlim_cur;
    if (listeners + fixed + FLEET_FD_RESERVE > (uint64_t)fleet->max_fds) {
        uint64_t fit = (uint64_t)fleet->max_fds > fixed + FLEET_FD_RESERVE
                           ? ((uint64_t)fleet->max_fds - fixed - FLEET_FD_RESERVE) / (cfg->snmp ? 2u : 1u)
                           : 0;
        snprintf(
            err, err_len,
            "%u devices need %llu listening sockets (NETCONF and SNMP) plus %d descriptors kept for "
            "sessions, but this "
            "process may open only %d files (hard limit): at most %llu devices fit with a port each. "
            "Use --ip-per-device (one socket per worker), --snmp false, or raise the hard limit (ulimit -Hn, "
            "LimitNOFILE).",
            (unsigned)cfg->device_count, (unsigned long long)listeners, FLEET_FD_RESERVE, fleet->max_fds,
            cfg->ip_per_device ? 0ull : (unsigned long long)fit);
        return FLEET_ERR_LIMIT;
    }
    return FLEET_OK;
}

static enum fleet_err
check_plan(const struct fleet_config *cfg, char *err, size_t err_len)
{
    if (!cfg->ip_per_device && (uint64_t)cfg->starting_port + cfg->device_count - 1 > 65535) {
        snprintf(err, err_len,
                 "%u devices from port %u need ports up to %llu, past 65535: lower --starting-port or "
                 "--device-count, or use --ip-per-device",
                 (unsigned)cfg->device_count, (unsigned)cfg->starting_port,
                 (unsigned long long)cfg->starting_port + cfg->device_count - 1);
        return FLEET_ERR_INVAL;
    }
    if (cfg->snmp && !cfg->ip_per_device &&
        (uint64_t)cfg->snmp_starting_port + cfg->device_count - 1 > 65535) {
        snprintf(err, err_len,
                 "%u SNMP agents from port %u need ports up to %llu, past 65535: lower --snmp-starting-port, "
                 "or use --ip-per-device",
                 (unsigned)cfg->device_count, (unsigned)cfg->snmp_starting_port,
                 (unsigned long long)cfg->snmp_starting_port + cfg->device_count - 1);
        return FLEET_ERR_INVAL;
    }
    if (cfg->ip_per_device) {
        uint64_t last = (uint64_t)cfg->ip + cfg->device_count - 1;
        if (last > UINT32_MAX || ((cfg->ip >> 24) == 127 && (last >> 24) != 127)) {
            snprintf(err, err_len, "%u addresses from --ip do not fit in %s", (unsigned)cfg->device_count,
                     (cfg->ip >> 24) == 127 ? "127.0.0.0/8" : "IPv4");
            return FLEET_ERR_INVAL;
        }
    }
    return FLEET_OK;
}

static char *
read_file(const char *path, char *err, size_t err_len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long size;

    if (!f) {
        snprintf(err, err_len, "cannot open \"%s\": %s", path, strerror(errno));
        return NULL;
    }
    if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
        snprintf(err, err_len, "cannot read \"%s\": %s", path, strerror(errno));
        goto cleanup;
    }
    buf = malloc((size_t)size + 1);
    if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) {
        snprintf(err, err_len, "cannot read \"%s\"", path);
        free(buf);
        buf = NULL;
        goto cleanup;
    }
    buf[size] = '\0';

cleanup:
    fclose(f);
    return buf;
}

/* The profile's interfaces (and identity) as configuration, merged under the user's initial configuration. */
static enum fleet_err
load_profile_config(struct fleet *fleet, char *err, size_t err_len)
{
    const struct profile *p = fleet->profile;
    struct ly_ctx *ctx = fleet->schemas.ctx;
    struct lyd_node *tree = NULL;
    struct sbuf x = {0};
    char *xml;
    enum fleet_err rc = FLEET_OK;

    sbuf_adds(&x, "<interfaces xmlns=\"urn:ietf:params:xml:ns:yang:ietf-interfaces\" "
                  "xmlns:ianaift=\"urn:ietf:params:xml:ns:yang:iana-if-type\">");
    for (uint32_t i = 0; i < p->if_count; i++) {
        const struct profile_interface *pi = &p->ifs[i];
        sbuf_adds(&x, "<interface><name>");
        sbuf_add_xml(&x, pi->name);
        sbuf_printf(&x, "</name><type>ianaift:%s</type><enabled>%s</enabled>", pi->type,
                    pi->enabled ? "true" : "false");
        if (pi->description) {
            sbuf_adds(&x, "<description>");
            sbuf_add_xml(&x, pi->description);
            sbuf_adds(&x, "</description>");
        }
        sbuf_adds(&x, "</interface>");
    }
    sbuf_adds(&x, "</interfaces>");
    if (p->sys_contact || p->sys_location ||
        (p->hostname_format && !strstr(p->hostname_format, "{DEVICE}"))) {
        sbuf_adds(&x, "<system xmlns=\"urn:ietf:params:xml:ns:yang:ietf-system\">");
        if (p->sys_contact) {
            sbuf_adds(&x, "<contact>");
            sbuf_add_xml(&x, p->sys_contact);
            sbuf_adds(&x, "</contact>");
        }
        if (p->hostname_format && !strstr(p->hostname_format, "{DEVICE}")) {
            sbuf_adds(&x, "<hostname>");
            sbuf_add_xml(&x, p->hostname_format);
            sbuf_adds(&x, "</hostname>");
        }
        if (p->sys_location) {
            sbuf_adds(&x, "<location>");
            sbuf_add_xml(&x, p->sys_location);
            sbuf_adds(&x, "</location>");
        }
        sbuf_adds(&x, "</system>");
    }
    xml = sbuf_take(&x, NULL);
    if (!xml || lyd_parse_data_mem(ctx, xml, LYD_XML, LYD_PARSE_STRICT | LYD_PARSE_NO_STATE,
                                   LYD_VALIDATE_NO_STATE, &tree)) {
        snprintf(err, err_len, "profile \"%s\" does not fit the schemas: %s", p->name,
                 xml ? ly_errmsg(ctx) : "out of memory");
        rc = FLEET_ERR_INVAL;
    } else if (lyd_merge_siblings(&fleet->template_tree, tree, 0)) {
        snprintf(err, err_len, "cannot merge profile \"%s\" into the initial configuration: %s", p->name,
                 ly_errmsg(ctx));
        rc = FLEET_ERR_INVAL;
    }
    lyd_free_all(tree);
    free(xml);
    return rc;
}

/*
 * The notification file, and for a weighted mix the order of its items: a smooth weighted round robin
 * laid out once, so that every window of the sequence keeps the weights and a send is a table lookup.
 */
static enum fleet_err
load_notifications(struct fleet *fleet, char *err, size_t err_len)
{
    struct notif_plan *p;
    uint64_t total = 0;
    int64_t *current;
    enum fleet_err rc;

    if ((rc = notif_plan_load(fleet->cfg.notification_file, fleet->schemas.ctx, &fleet->notif_plan, err,
                              err_len))) {
        return rc;
    }
    p = fleet->notif_plan;
    if (p->kind != NOTIF_PLAN_RATE) {
        return FLEET_OK;
    }
    for (uint32_t i = 0; i < p->item_count; i++) {
        total += p->items[i].weight;
    }
    if (total > FLEET_NOTIF_MIX_MAX) {
        snprintf(err, err_len, "%s: the weights add up to %llu, more than %u", p->path,
                 (unsigned long long)total, FLEET_NOTIF_MIX_MAX);
        return FLEET_ERR_INVAL;
    }
    fleet->notif_mix = malloc(total * sizeof *fleet->notif_mix);
    current = calloc(p->item_count, sizeof *current);
    if (!fleet->notif_mix || !current) {
        free(current);
        return FLEET_ERR_NOMEM;
    }
    for (uint64_t k = 0; k < total; k++) {
        uint32_t best = 0;
        for (uint32_t i = 0; i < p->item_count; i++) {
            current[i] += p->items[i].weight;
            if (current[i] > current[best]) {
                best = i;
            }
        }
        current[best] -= (int64_t)total;
        fleet->notif_mix[k] = best;
    }
    fleet->notif_mix_len = (uint32_t)total;
    free(current);
    return FLEET_OK;
}

/*
 * The profile's state data (config false nodes, such as the tables of MIB-derived modules), shared
 * read-only by every device: NETCONF get shows it and SNMP serves what carries smiv2:oid.
 */
static enum fleet_err
load_profile_state(struct fleet *fleet, char *err, size_t err_len)
{
    const struct profile *p = fleet->profile;
    struct ly_ctx *ctx = fleet->schemas.ctx;
    char *text;
    enum fleet_err rc = FLEET_OK;

    if (!p->state_data_file) {
        return FLEET_OK;
    }
    if (!(text = read_file(p->state_data_file, err, err_len))) {
        return FLEET_ERR_INVAL;
    }
    if (lyd_parse_data_mem(ctx, text, LYD_XML, LYD_PARSE_STRICT, LYD_VALIDATE_PRESENT, &fleet->state_tree)) {
        snprintf(err, err_len, "profile \"%s\": state data \"%s\" is not valid: %s", p->name,
                 p->state_data_file, ly_errmsg(ctx));
        rc = FLEET_ERR_INVAL;
    }
    free(text);
    return rc;
}

/*
 * Interfaces of the initial configuration that the profile does not list have configuration only: the
 * device's state (oper-status, counters, ifTable rows) is the profile's, by position. Say so once, naming
 * them, rather than let a user look for their state.
 */
static void
warn_stateless_interfaces(const struct fleet *fleet, const struct lyd_node *user)
{
    struct ly_set *set = NULL;
    struct sbuf names = {0};
    uint32_t count = 0;

    if (!user || lyd_find_xpath(user, "/ietf-interfaces:interfaces/interface/name", &set)) {
        goto cleanup;
    }
    for (uint32_t i = 0; i < set->count; i++) {
        const char *name = lyd_get_value(set->dnodes[i]);
        uint32_t k = 0;
        while (k < fleet->profile->if_count && strcmp(fleet->profile->ifs[k].name, name)) {
            k++;
        }
        if (k < fleet->profile->if_count) {
            continue;
        }
        if (count++ < 8) {
            sbuf_printf(&names, "%s\"%s\"", count > 1 ? ", " : "", name);
        }
    }
    if (count) {
        log_warn("initial configuration: %" PRIu32
                 " interface%s not in profile \"%s\" (%s%s) %s configuration "
                 "only: no oper-status, statistics or ifTable row",
                 count, count > 1 ? "s" : "", fleet->profile->name, names.buf ? names.buf : "",
                 count > 8 ? ", ..." : "", count > 1 ? "have" : "has");
    }

cleanup:
    sbuf_free(&names);
    ly_set_free(set, NULL);
}

/*
 * A <config> or <data> wrapper without any namespace (as people write it) put in the base namespace, so
 * that libyang reads it; other text is copied unchanged. Returns the text to parse (caller frees), or NULL
 * when out of memory.
 */
static char *
wrapper_in_base_ns(const char *text)
{
    const char *p = xmlscan_skip_misc(text);
    struct xmlscan_scope scope = {.count = 0};
    struct xmlscan_tag t;
    struct sbuf b = {0};

    if (xmlscan_read_tag(p, &t) || t.end || t.prefix || xmlscan_push_decls(&scope, &t) ||
        xmlscan_resolve(&scope, NULL, 0) ||
        !(xmlscan_eq(t.local, t.local_len, "config") || xmlscan_eq(t.local, t.local_len, "data"))) {
        return strdup(text);
    }
    sbuf_add(&b, text, (size_t)(t.attrs - text));
    sbuf_adds(&b, " xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\"");
    sbuf_adds(&b, t.attrs);
    return sbuf_take(&b, NULL);
}

/*
 * The initial configuration: bare data, or data wrapped in <config> or
 * <data> (as saved from a get-config reply). Validated like a copy-config.
 */
static enum fleet_err
load_initial_config(struct fleet *fleet, char *err, size_t err_len)
{
    struct ly_ctx *ctx = fleet->schemas.ctx;
    const char *path = fleet->cfg.initial_config_file;
    struct lyd_node *opaque = NULL;
    char *text = NULL;
    char *inner = NULL;
    char *wrapped = NULL;
    char *first_error = NULL;
    enum fleet_err rc = FLEET_OK;
    const uint32_t parse = LYD_PARSE_STRICT | LYD_PARSE_NO_STATE;

    if (!path) {
        if (lyd_validate_all(&fleet->template_tree, ctx, LYD_VALIDATE_NO_STATE, NULL)) {
            snprintf(err, err_len, "the loaded schemas have no valid empty configuration: %s",
                     ly_errmsg(ctx));
            return FLEET_ERR_INVAL;
        }
        return FLEET_OK;
    }
    if (!(text = read_file(path, err, err_len))) {
        return FLEET_ERR_INVAL;
    }
    if (!lyd_parse_data_mem(ctx, text, LYD_XML, parse, LYD_VALIDATE_NO_STATE, &fleet->template_tree)) {
        goto cleanup;
    }
    first_error = strdup(ly_errmsg(ctx) ? ly_errmsg(ctx) : "invalid data");
    if (!(wrapped = wrapper_in_base_ns(text))) {
        snprintf(err, err_len, "out of memory reading the initial configuration");
        rc = FLEET_ERR_NOMEM;
        goto cleanup;
    }
    if (!lyd_parse_data_mem(ctx, wrapped, LYD_XML, LYD_PARSE_OPAQ | LYD_PARSE_ONLY, 0, &opaque) && opaque &&
        !opaque->schema && !opaque->next &&
        (!strcmp(LYD_NAME(opaque), "config") || !strcmp(LYD_NAME(opaque), "data"))) {
        if (!lyd_child(opaque)) {
            goto cleanup; /* an empty wrapper: an empty configuration */
        }
        if (lyd_print_mem(&inner, lyd_child(opaque), LYD_XML, LYD_PRINT_WITHSIBLINGS) ||
            lyd_parse_data_mem(ctx, inner, LYD_XML, parse, LYD_VALIDATE_NO_STATE, &fleet->template_tree)) {
            snprintf(err, err_len, "initial configuration \"%s\" is not valid: %s", path,
                     ly_errmsg(ctx) ? ly_errmsg(ctx) : "cannot read it");
            rc = FLEET_ERR_INVAL;
        }
        goto cleanup;
    }
    snprintf(err, err_len, "initial configuration \"%s\" is not valid: %s", path,
             first_error ? first_error : "");
    rc = FLEET_ERR_INVAL;

cleanup:
    lyd_free_all(opaque);
    free(first_error);
    free(wrapped);
    free(inner);
    free(text);
    return rc;
}

enum fleet_err
fleet_init(struct fleet *fleet, const struct fleet_config *cfg, char *err, size_t err_len)
{
    enum fleet_err rc;

    memset(fleet, 0, sizeof *fleet);
    fleet->cfg = *cfg;
    fleet->null_fd = -1;
    atomic_init(&fleet->next_session_id, 1);
    fleet->start_time = time(NULL);
    {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        fleet->clock_base_ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
        fleet->clock_base_us = loop_clock_monotonic();
        fleet->start_ms = devview_now_ms(fleet);
    }
    if ((rc = check_plan(cfg, err, err_len)) || (rc = check_descriptors(fleet, err, err_len))) {
        return rc;
    }
    ly_log_options(LY_LOSTORE_LAST);
    if ((rc = profile_load(cfg->profile, FLEETSIM_SCHEMA_DIR "/profiles", FLEETSIM_SCHEMA_DIR,
                           &fleet->profile, err, err_len))) {
        return rc;
    }
    dyn_traffic_prepare(&fleet->profile->traffic, &fleet->traffic);
    {
        /* A profile's own modules are looked up beside it too. */
        char *profile_dir = strdup(fleet->profile->path ? fleet->profile->path : ".");
        char *slash = profile_dir ? strrchr(profile_dir, '/') : NULL;
        if (slash) {
            *slash = '\0';
        }
        rc = profile_dir ? schema_set_load_with(&fleet->schemas, cfg->schemas_dir, &cfg->schema_opts,
                                                slash ? profile_dir : ".", fleet->profile->schemas,
                                                fleet->profile->schema_count, err, err_len)
                         : FLEET_ERR_NOMEM;
        free(profile_dir);
    }
    if (rc || (rc = load_initial_config(fleet, err, err_len)) ||
        (rc = load_profile_state(fleet, err, err_len))) {
        return rc;
    }
    if (cfg->notification_file && (rc = load_notifications(fleet, err, err_len))) {
        return rc;
    }
    /* The user's initial configuration wins over the profile's where both set a node. */
    {
        struct lyd_node *user = fleet->template_tree;
        fleet->template_tree = NULL;
        rc = load_profile_config(fleet, err, err_len);
        if (!rc && user && lyd_merge_siblings(&fleet->template_tree, user, 0)) {
            snprintf(err, err_len, "cannot merge the initial configuration: %s",
                     ly_errmsg(fleet->schemas.ctx));
            rc = FLEET_ERR_INVAL;
        }
        if (!rc) {
            warn_stateless_interfaces(fleet, user);
        }
        lyd_free_all(user);
        if (rc || (rc = devview_fleet_init(fleet))) {
            return rc;
        }
    }
    if (ly_ctx_get_yanglib_data(fleet->schemas.ctx, &fleet->yanglib_tree, "%u",
                                (unsigned)fleet->schemas.content_id)) {
        snprintf(err, err_len, "cannot build yang-library data: %s", ly_errmsg(fleet->schemas.ctx));
        return FLEET_ERR_INVAL;
    }

    if (ly_ctx_new(NULL, LY_CTX_NO_YANGLIBRARY, &fleet->bare_ctx)) {
        snprintf(err, err_len, "cannot create a YANG context");
        return FLEET_ERR_NOMEM;
    }
    if (cfg->rpc_config && (rc = rpc_custom_load(cfg->rpc_config, fleet->bare_ctx, cfg->device_count,
                                                 &fleet->rpc_custom, err, err_len))) {
        return rc;
    }

    fleet->workers = calloc(cfg->threads, sizeof *fleet->workers);
    fleet->devices = calloc(cfg->device_count, sizeof *fleet->devices);
    if (!fleet->workers || !fleet->devices) {
        snprintf(err, err_len, "out of memory for %u devices", (unsigned)cfg->device_count);
        return FLEET_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < cfg->device_count; i++) {
        fleet->devices[i].listen_fd = -1;
        fleet->devices[i].snmp_fd = -1;
    }
    for (uint32_t i = 0; i < cfg->threads; i++) {
        struct worker *w = &fleet->workers[i];
        w->index = i;
        w->fleet = fleet;
        w->listen_fd = -1;
        w->spare_fd = -1;
        w->snmp.fd = -1;
        loop_timer_init(&w->accept_pause);
        w->loop = loop_new(fleet->max_fds);
        w->read_buf = malloc(SESSION_READ_BUF_BYTES);
        if (!w->loop || !w->read_buf) {
            snprintf(err, err_len, "cannot create worker %u: %s", (unsigned)i, strerror(errno));
            return FLEET_ERR_SYS;
        }
        loop_set_before_sleep(w->loop, sess_worker_before_sleep, w);
    }
    for (uint32_t i = 0; i < cfg->device_count; i++) {
        struct device *dev = &fleet->devices[i];
        dev->index = i;
        dev->worker = &fleet->workers[i % cfg->threads];
        dev->addr = cfg->ip_per_device ? cfg->ip + i : cfg->ip;
        dev->port = (uint16_t)(cfg->ip_per_device ? cfg->starting_port : cfg->starting_port + i);
        devview_device_init(dev, fleet);
        loop_timer_init(&dev->flap_timer);
        dev->flap_down_pos = -1;
    }
    if (cfg->ssh && (rc = ssh_link_fleet_init(fleet, err, err_len))) {
        return rc;
    }
    mib_init();
    if (fleet->state_tree) {
        uint32_t shadowed;
        if ((rc = smiv2_build(fleet->state_tree, &fleet->smiv2_table, err, err_len))) {
            return rc;
        }
        if (fleet->smiv2_table) {
            shadowed = mib_attach_recording(fleet->smiv2_table);
            log_info("profile %s: serving %u instances of MIB-derived modules (%u left to the live objects)",
                     fleet->profile->name, (unsigned)fleet->smiv2_table->count, (unsigned)shadowed);
        }
    }
    if (cfg->snmp_recording || fleet->profile->recording_file) {
        const char *path = cfg->snmp_recording ? cfg->snmp_recording : fleet->profile->recording_file;
        uint32_t dropped;
        if ((rc = rec_load(path, &fleet->recording, err, err_len))) {
            return rc;
        }
        /* The live objects own their columns, so the device stays consistent with NETCONF. */
        dropped =
            mib_attach_recording(fleet->recording) + mib_attach_below(fleet->recording, fleet->smiv2_table);
        log_info("%s: serving %u recorded OIDs (%u more left to the live objects)", path,
                 (unsigned)fleet->recording->count, (unsigned)dropped);
    }
    if ((rc = listen_open_all(fleet, err, err_len))) {
        return rc;
    }
    return cfg->snmp ? agent_open_all(fleet, err, err_len) : FLEET_OK;
}

static void *
worker_main(void *arg)
{
    struct worker *w = arg;

    loop_run(w->loop);
    return NULL;
}

enum fleet_err
fleet_start(struct fleet *fleet)
{
    char err[256];

    if (flap_start_all(fleet, err, sizeof err)) {
        log_error("%s", err);
        return FLEET_ERR_SYS;
    }
    for (uint32_t i = 0; i < fleet->cfg.threads; i++) {
        struct worker *w = &fleet->workers[i];
        if (pthread_create(&w->thread, NULL, worker_main, w)) {
            return FLEET_ERR_SYS;
        }
        w->started = 1;
    }
    return FLEET_OK;
}

void
fleet_stop(struct fleet *fleet)
{
    for (uint32_t i = 0; fleet->workers && i < fleet->cfg.threads; i++) {
        if (fleet->workers[i].started) {
            loop_stop(fleet->workers[i].loop);
        }
    }
    for (uint32_t i = 0; fleet->workers && i < fleet->cfg.threads; i++) {
        struct worker *w = &fleet->workers[i];
        if (w->started) {
            pthread_join(w->thread, NULL);
            w->started = 0;
        }
    }
}

void
fleet_close(struct fleet *fleet)
{
    fleet_stop(fleet);
    for (uint32_t i = 0; fleet->workers && i < fleet->cfg.threads; i++) {
        struct worker *w = &fleet->workers[i];
        /* Threads are gone: the main thread may now touch every worker's state. */
        if (w->loop) {
            /* Connections handed over to this worker but not yet adopted become sessions, then close. */
            loop_run_posted(w->loop);
            sess_close_all(w);
            loop_timer_stop(w->loop, &w->accept_pause);
        }
    }
    listen_close_all(fleet);
    ssh_link_fleet_close(fleet);
    /* Traps first: queued ones and inform retransmissions may leave from the agents' sockets. */
    flap_close_all(fleet);
    agent_close_all(fleet);
    for (uint32_t i = 0; fleet->devices && i < fleet->cfg.device_count; i++) {
        struct device *dev = &fleet->devices[i];
        stream_free(dev->stream, dev->worker ? dev->worker->loop : NULL);
        ds_close(&fleet->devices[i].ds);
        devview_state_free(fleet->devices[i].view);
    }
    for (uint32_t i = 0; fleet->workers && i < fleet->cfg.threads; i++) {
        loop_free(fleet->workers[i].loop);
        sbuf_free(&fleet->workers[i].notif_buf);
        free(fleet->workers[i].read_buf);
    }
    free(fleet->workers);
    free(fleet->devices);
    devview_fleet_close(fleet);
    notif_plan_free(fleet->notif_plan);
    free(fleet->notif_mix);
    profile_free(fleet->profile);
    rec_free(fleet->recording);
    lyd_free_all(fleet->state_tree);
    rec_free(fleet->smiv2_table);
    lyd_free_all(fleet->template_tree);
    lyd_free_all(fleet->yanglib_tree);
    schema_set_free(&fleet->schemas);
    rpc_custom_free(fleet->rpc_custom); /* before its context */
    ly_ctx_destroy(fleet->bare_ctx);
    memset(fleet, 0, sizeof *fleet);
}
