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

#include "action_log.h"
#include "agent.h"
#include "callhome.h"
#include "device_actions.h"
#include "devtype.h"
#include "devview.h"
#include "flap.h"
#include "listen.h"
#include "log.h"
#include "notif_file.h"
#include "recording.h"
#include "rpc_custom.h"
#include "sbuf.h"
#include "scenario.h"
#include "session.h"
#include "ssh_link.h"
#include "stream.h"
#include "syslog_chan.h"
#include "transport_tls.h"
#include "trap.h"
#include "trap_chan.h"
#include "wheel.h"
#include "yp.h"
#include "yp_rows.h"

/* Raise the soft descriptor limit to the hard one and check that the plan fits in it. */
static enum fleet_err
check_descriptors(struct fleet *fleet, const struct fleet_group_spec *groups, uint32_t group_count, char *err,
                  size_t err_len)
{
    const struct fleet_config *cfg = &fleet->cfg;
    struct rlimit rl;
    uint64_t listeners = 0, per_device = 0;
    /* Per worker: epoll and eventfd; plus stdio and libyang's files. */
    uint64_t fixed = 2ull * cfg->threads + 16;

    for (uint32_t g = 0; g < group_count; g++) {
        const struct fleet_config *gc = &groups[g].cfg;
        uint64_t each = gc->snmp ? 2u : 1u;
        listeners += gc->ip_per_device ? (uint64_t)cfg->threads * each : (uint64_t)gc->device_count * each;
        per_device += gc->ip_per_device ? 0 : each;
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    getrlimit(RLIMIT_NOFILE, &rl);
    fleet->max_fds = rl.rlim_cur > 1000000 ? 1000000 : (int)rl.rlim_cur;
    if (listeners + fixed + FLEET_FD_RESERVE > (uint64_t)fleet->max_fds) {
        uint64_t fit = per_device && (uint64_t)fleet->max_fds > fixed + FLEET_FD_RESERVE
                           ? ((uint64_t)fleet->max_fds - fixed - FLEET_FD_RESERVE) / per_device
                           : 0;
        snprintf(
            err, err_len,
            "%u devices need %llu listening sockets (NETCONF and SNMP) plus %d descriptors kept for "
            "sessions, but this "
            "process may open only %d files (hard limit): at most %llu devices fit with a port each. "
            "Use --ip-per-device (one socket per worker), --snmp false, or raise the hard limit (ulimit -Hn, "
            "LimitNOFILE).",
            (unsigned)cfg->device_count, (unsigned long long)listeners, FLEET_FD_RESERVE, fleet->max_fds,
            (unsigned long long)fit);
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
    if (cfg->ip_per_device && cfg->ip_fam.v6 &&
        !netaddr_range_fits(&cfg->ip_fam, cfg->ip, cfg->device_count)) {
        char text[NETADDR_TEXT_BYTES];
        snprintf(err, err_len,
                 "%u addresses from --ip %s cross the last 32 bits of the address (a fleet's IPv6 addresses "
                 "share their first 96 bits): start lower",
                 (unsigned)cfg->device_count, netaddr_text(&cfg->ip_fam, cfg->ip, text, sizeof text));
        return FLEET_ERR_INVAL;
    }
    if (cfg->ip_per_device && !cfg->ip_fam.v6) {
        uint64_t last = (uint64_t)cfg->ip + cfg->device_count - 1;
        if (last > UINT32_MAX || ((cfg->ip >> 24) == 127 && (last >> 24) != 127)) {
            snprintf(err, err_len, "%u addresses from --ip do not fit in %s", (unsigned)cfg->device_count,
                     (cfg->ip >> 24) == 127 ? "127.0.0.0/8" : "IPv4");
            return FLEET_ERR_INVAL;
        }
    }
    return FLEET_OK;
}

/*
 * The notification file, and for a weighted mix the order of its items: a smooth weighted round robin
 * laid out once, so that every window of the sequence keeps the weights and a send is a table lookup.
 */
static enum fleet_err
load_notifications(struct device_group *g, char *err, size_t err_len)
{
    struct notif_plan *p;
    uint64_t total = 0;
    int64_t *current;
    enum fleet_err rc;

    if ((rc =
             notif_plan_load(g->cfg.notification_file, g->type->schemas.ctx, &g->notif_plan, err, err_len))) {
        return rc;
    }
    p = g->notif_plan;
    if (p->kind != NOTIF_PLAN_RATE) {
        return FLEET_OK;
    }
    /* Without --notification-rate the file's own rate is the group's profile: one way to pace for streams. */
    if (rate_profile_is_zero(&g->cfg.notification_rate)) {
        rate_profile_constant(&g->cfg.notification_rate,
                              p->rate_per_device > 0 ? p->rate_per_device : p->rate_total / g->whole_count);
    }
    for (uint32_t i = 0; i < p->item_count; i++) {
        total += p->items[i].weight;
    }
    if (total > FLEET_NOTIF_MIX_MAX) {
        snprintf(err, err_len, "%s: the weights add up to %llu, more than %u", p->path,
                 (unsigned long long)total, FLEET_NOTIF_MIX_MAX);
        return FLEET_ERR_INVAL;
    }
    g->notif_mix = malloc(total * sizeof *g->notif_mix);
    current = calloc(p->item_count, sizeof *current);
    if (!g->notif_mix || !current) {
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
        g->notif_mix[k] = best;
    }
    g->notif_mix_len = (uint32_t)total;
    free(current);
    return FLEET_OK;
}

/* Add @p port to @p ports (a set) unless it is there. @return 0, or -1 when the set is full. */
static int
add_shared_port(uint16_t *ports, uint32_t *count, uint32_t port)
{
    for (uint32_t i = 0; i < *count; i++) {
        if (ports[i] == port) {
            return 0;
        }
    }
    if (*count == FLEET_MAX_SHARED_PORTS) {
        return -1;
    }
    ports[(*count)++] = (uint16_t)port;
    return 0;
}

/* The groups from their plans: devices in order, a type for each (shared where two plans agree). */
static enum fleet_err
make_groups(struct fleet *fleet, const struct fleet_group_spec *specs, uint32_t count, char *err,
            size_t err_len)
{
    uint32_t first = 0;
    enum fleet_err rc;

    fleet->groups = calloc(count, sizeof *fleet->groups);
    fleet->types = calloc(count, sizeof *fleet->types);
    if (!fleet->groups || !fleet->types) {
        return FLEET_ERR_NOMEM;
    }
    fleet->group_count = count;
    for (uint32_t i = 0; i < count; i++) {
        struct device_group *g = &fleet->groups[i];
        char msg[1024];
        g->index = i;
        g->first = first;
        g->cfg = specs[i].cfg;
        g->skip = specs[i].skip;
        g->whole_count = specs[i].whole_count ? specs[i].whole_count : specs[i].cfg.device_count;
        g->start_present = g->cfg.device_count;
        g->present = g->start_present;
        if (specs[i].cfg.schema_opts.features == specs[i].cfg.feature_pins) {
            g->cfg.schema_opts.features = g->cfg.feature_pins;
        }
        first += g->cfg.device_count;
        if (!(g->name = strdup(specs[i].name ? specs[i].name : "default"))) {
            return FLEET_ERR_NOMEM;
        }
        if ((rc = check_plan(&g->cfg, msg, sizeof msg))) {
            goto group_error;
        }
        if (i && memcmp(&g->cfg.ip_fam, &fleet->groups[0].cfg.ip_fam, sizeof g->cfg.ip_fam)) {
            char here[NETADDR_TEXT_BYTES], there[NETADDR_TEXT_BYTES];
            snprintf(msg, sizeof msg,
                     "its address %s and group \"%s\"'s %s differ in %s: all addresses of a fleet share one "
                     "family and, for IPv6, their first 96 bits",
                     netaddr_text(&g->cfg.ip_fam, g->cfg.ip, here, sizeof here), fleet->groups[0].name,
                     netaddr_text(&fleet->groups[0].cfg.ip_fam, fleet->groups[0].cfg.ip, there, sizeof there),
                     g->cfg.ip_fam.v6 == fleet->groups[0].cfg.ip_fam.v6 ? "their first 96 bits" : "family");
            rc = FLEET_ERR_INVAL;
            goto group_error;
        }
        if (g->cfg.ip_per_device && !g->cfg.call_home_port &&
            add_shared_port(fleet->shared_ports, &fleet->shared_port_count, g->cfg.starting_port)) {
            snprintf(msg, sizeof msg, "more than %d ports shared by address-per-device groups",
                     FLEET_MAX_SHARED_PORTS);
            rc = FLEET_ERR_INVAL;
            goto group_error;
        }
        for (uint32_t k = 0; k < i && !g->type; k++) {
            if (device_type_same(&fleet->groups[k].cfg, &g->cfg)) {
                g->type = fleet->groups[k].type;
            }
        }
        if (!g->type) {
            if (!(g->type = calloc(1, sizeof *g->type))) {
                return FLEET_ERR_NOMEM;
            }
            fleet->types[fleet->type_count++] = g->type;
            if ((rc = device_type_load(g->type, &g->cfg, msg, sizeof msg))) {
                goto group_error;
            }
        }
        if (g->cfg.notification_file && (rc = load_notifications(g, msg, sizeof msg))) {
            goto group_error;
        }
        continue;
    group_error:
        if (fleet->cfg.fleet_file && specs[i].line) {
            snprintf(err, err_len, "%s:%u: group \"%s\": %s", fleet->cfg.fleet_file, (unsigned)specs[i].line,
                     g->name, msg);
        } else if (count > 1) {
            snprintf(err, err_len, "group \"%s\": %s", g->name, msg);
        } else {
            snprintf(err, err_len, "%s", msg);
        }
        return rc;
    }
    return FLEET_OK;
}

enum fleet_err
fleet_init(struct fleet *fleet, const struct fleet_config *cfg, const struct fleet_group_spec *groups,
           uint32_t group_count, char *err, size_t err_len)
{
    uint64_t total = 0;
    enum fleet_err rc;

    memset(fleet, 0, sizeof *fleet);
    if (!groups) {
        fleet->default_spec = (struct fleet_group_spec){.name = "default", .cfg = *cfg};
        groups = &fleet->default_spec;
        group_count = 1;
    }
    fleet->specs = groups;
    fleet->cfg = *cfg;
    for (uint32_t i = 0; i < group_count; i++) {
        total += groups[i].cfg.device_count;
    }
    if (!group_count || total > FLEET_MAX_DEVICES) {
        snprintf(err, err_len, "the fleet's groups hold %llu devices: from 1 to %u are possible",
                 (unsigned long long)total, (unsigned)FLEET_MAX_DEVICES);
        return FLEET_ERR_INVAL;
    }
    fleet->cfg.device_count = (uint32_t)total;
    fleet->null_fd = -1;
    if (!(fleet->actions = malloc(sizeof *fleet->actions))) {
        snprintf(err, err_len, "out of memory");
        return FLEET_ERR_NOMEM;
    }
    action_log_init(fleet->actions);
    atomic_init(&fleet->next_session_id, 1);
    fleet->start_time = time(NULL);
    {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        fleet->clock_base_ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
        fleet->clock_base_us = loop_clock_monotonic();
        fleet->start_ms = devview_now_ms(fleet);
    }
    if ((rc = check_descriptors(fleet, groups, group_count, err, err_len))) {
        return rc;
    }
    ly_log_options(LY_LOSTORE_LAST);
    if ((rc = make_groups(fleet, groups, group_count, err, err_len))) {
        return rc;
    }
    fleet->cfg.ip_fam = fleet->groups[0].cfg.ip_fam; /* one for the fleet (make_groups checked) */
    if (ly_ctx_new(NULL, LY_CTX_NO_YANGLIBRARY, &fleet->bare_ctx)) {
        snprintf(err, err_len, "cannot create a YANG context");
        return FLEET_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < fleet->group_count; i++) {
        struct device_group *g = &fleet->groups[i];
        if (g->cfg.rpc_config && (rc = rpc_custom_load(g->cfg.rpc_config, fleet->bare_ctx, g->whole_count,
                                                       &g->rpc_custom, err, err_len))) {
            return rc;
        }
    }

    fleet->workers = calloc(cfg->threads, sizeof *fleet->workers);
    fleet->devices = calloc(fleet->cfg.device_count, sizeof *fleet->devices);
    if (!fleet->workers || !fleet->devices) {
        snprintf(err, err_len, "out of memory for %u devices", (unsigned)fleet->cfg.device_count);
        return FLEET_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < cfg->threads; i++) {
        struct worker *w = &fleet->workers[i];
        w->index = i;
        w->fleet = fleet;
        for (uint32_t k = 0; k < FLEET_MAX_SHARED_PORTS; k++) {
            w->listen_fds[k] = -1;
            w->snmp.fds[k] = -1;
        }
        w->spare_fd = -1;
        loop_timer_init(&w->accept_pause);
        w->loop = loop_new(fleet->max_fds);
        w->read_buf = malloc(SESSION_READ_BUF_BYTES);
        w->wheel = w->loop ? wheel_new(w->loop, yp_wheel_due, w) : NULL;
        if (!w->loop || !w->read_buf || !w->wheel) {
            snprintf(err, err_len, "cannot create worker %u: %s", (unsigned)i, strerror(errno));
            return FLEET_ERR_SYS;
        }
        loop_set_before_sleep(w->loop, sess_worker_before_sleep, w);
    }
    for (uint32_t gi = 0; gi < fleet->group_count; gi++) {
        const struct device_group *g = &fleet->groups[gi];
        for (uint32_t k = 0; k < g->cfg.device_count; k++) {
            struct device *dev = &fleet->devices[g->first + k];
            dev->index = cfg->device_offset + g->first + k; /* identity derives from the global index */
            dev->group = g;
            dev->type = g->type;
            dev->listen_fd = -1;
            dev->snmp_fd = -1;
            dev->worker = &fleet->workers[(g->first + k) % cfg->threads]; /* workers walk slots */
            dev->addr = g->cfg.ip_per_device ? g->cfg.ip + k : g->cfg.ip;
            dev->port = (uint16_t)(g->cfg.ip_per_device ? g->cfg.starting_port : g->cfg.starting_port + k);
            devview_device_init(dev, fleet);
            loop_timer_init(&dev->flap_timer);
            dev->flap_down_pos = -1;
        }
    }
    if ((rc = ssh_link_fleet_init(fleet, err, err_len)) || (rc = tls_fleet_init(fleet, err, err_len)) ||
        (rc = listen_open_all(fleet, err, err_len)) || (rc = callhome_init(fleet, err, err_len))) {
        return rc;
    }
    return agent_open_all(fleet, err, err_len);
}

static void *
worker_main(void *arg)
{
    struct worker *w = arg;

    ledger_bind_thread(w->index);
    loop_run(w->loop);
    return NULL;
}

enum fleet_err
fleet_start(struct fleet *fleet)
{
    char err[256];

    /* Before any channel arms a timer: they ask the window whether to emit. */
    pushwin_configure(fleet->cfg.push_window.set ? &fleet->cfg.push_window : NULL);
    if (flap_start_all(fleet, err, sizeof err)) {
        log_error("%s", err);
        return FLEET_ERR_SYS;
    }
    if (syslog_start_all(fleet, err, sizeof err)) {
        log_error("%s", err);
        return FLEET_ERR_SYS;
    }
    if (trap_chan_start_all(fleet, err, sizeof err)) {
        log_error("%s", err);
        return FLEET_ERR_SYS;
    }
    /* The sub-windows are sized once every series is known (the channels registered theirs above). */
    stream_ledger_init();
    if (ledger_book_start(fleet->cfg.threads)) {
        log_warn("out of memory for the ledger's sub-windows: per-device totals only");
    }
    callhome_start_all(fleet);
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
    /* The threads are gone: what the syslog sinks and the trap senders still hold gets its outcome before a
     * report is written (a trap batch flushed later, at close, reached the wire uncounted). */
    syslog_settle_all(fleet);
    for (uint32_t i = 0; fleet->workers && i < fleet->cfg.threads; i++) {
        if (fleet->workers[i].traps) {
            trap_sender_flush(fleet->workers[i].traps);
        }
    }
}

void
fleet_close(struct fleet *fleet)
{
    scenario_free(fleet->scenario); /* its thread acts through the workers: stopped before them */
    fleet->scenario = NULL;
    fleet_stop(fleet);
    callhome_close_all(fleet); /* before the sessions close: they are not dialled again */
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
    tls_fleet_close(fleet);
    /* Traps first: queued ones and inform retransmissions may leave from the agents' sockets. */
    trap_chan_close_all(fleet);
    flap_close_all(fleet);
    syslog_close_all(fleet);
    ledger_book_free();
    agent_close_all(fleet);
    for (uint32_t i = 0; fleet->devices && i < fleet->cfg.device_count; i++) {
        struct device *dev = &fleet->devices[i];
        stream_free(dev->stream, dev->worker ? dev->worker->loop : NULL);
        yp_rows_free(dev->yp_ended);
        devact_free(dev);
        ds_close(&fleet->devices[i].ds);
        devview_state_free(fleet->devices[i].view);
    }
    for (uint32_t i = 0; fleet->workers && i < fleet->cfg.threads; i++) {
        yp_worker_close(&fleet->workers[i]);
        wheel_free(fleet->workers[i].wheel);
        loop_free(fleet->workers[i].loop);
        sbuf_free(&fleet->workers[i].notif_buf);
        free(fleet->workers[i].read_buf);
    }
    free(fleet->workers);
    free(fleet->devices);
    for (uint32_t i = 0; fleet->groups && i < fleet->group_count; i++) {
        struct device_group *g = &fleet->groups[i];
        notif_plan_free(g->notif_plan);
        free(g->notif_mix);
        rpc_custom_free(g->rpc_custom); /* before its context */
        free(g->name);
    }
    free(fleet->groups);
    for (uint32_t i = 0; fleet->types && i < fleet->type_count; i++) {
        device_type_free(fleet->types[i]);
        free(fleet->types[i]);
    }
    free(fleet->types);
    ly_ctx_destroy(fleet->bare_ctx);
    if (fleet->actions) {
        action_log_free(fleet->actions);
        free(fleet->actions);
    }
    memset(fleet, 0, sizeof *fleet);
}
