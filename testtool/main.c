/*
 * fleetsim: parse the command line, build the fleet, report readiness on
 * stderr, and run until SIGINT or SIGTERM. Exit codes: 0 after a signal,
 * 2 for anything wrong with the plan (found before anything listens),
 * 1 for a failure at run time.
 */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "banner.h"
#include "cli.h"
#include "devview.h"
#include "fleet.h"
#include "fleet_action.h"
#include "fleet_file.h"
#include "inventory.h"
#include "log.h"
#include "metrics.h"
#include "register.h"
#include "report.h"
#include "sbuf.h"
#include "scenario.h"
#include "shard_plan.h"
#include "snmprec_export.h"
#include "status.h"
#include "tls_ca.h"

/*
 * The readiness line (tests and scripts wait for "devices listening on"), then the first-run banner: for
 * each service of the fleet where it is, how to log in and a command to paste.
 */
/* Devices of all @p count groups. */
static uint64_t
fleet_spec_devices(const struct fleet_group_spec *specs, uint32_t count)
{
    uint64_t n = 0;

    for (uint32_t i = 0; i < count; i++) {
        n += specs[i].cfg.device_count;
    }
    return n;
}

/* Where group @p g listens, as the readiness line says it. */
static void
group_span(const struct fleet *fleet, const struct device_group *g, struct sbuf *b)
{
    const struct device *first = &fleet->devices[g->first];
    const struct device *last = &fleet->devices[g->first + g->cfg.device_count - 1];

    char a[NETADDR_TEXT_BYTES], z[NETADDR_TEXT_BYTES];

    netaddr_text(&g->cfg.ip_fam, first->addr, a, sizeof a);
    netaddr_text(&g->cfg.ip_fam, last->addr, z, sizeof z);
    if (g->cfg.ip_per_device) {
        sbuf_printf(b, "%s-%s port %u", a, z, (unsigned)g->cfg.starting_port);
    } else {
        sbuf_printf(b, "%s ports %u-%u", a, (unsigned)first->port, (unsigned)last->port);
    }
}

/*
 * The readiness line (tests and scripts wait for "devices listening on"), then the first-run banner: for
 * each service of the fleet where it is, how to log in and a command to paste. A fleet of groups says
 * where each group is, with its type.
 */
static void
report_ready(const struct fleet *fleet, monotime_us started_us)
{
    double took_s = (double)(loop_clock_monotonic() - started_us) / 1e6;
    struct sbuf b = {0};

    /* One group: "on SPAN (NETCONF over T, W workers)"; several: "on SPAN (NAME: N TYPE, NETCONF over T);
     * SPAN (...) (W workers)". Either way the line starts "N devices listening on", which scripts wait for.
     */
    for (uint32_t i = 0; i < fleet->group_count; i++) {
        const struct device_group *g = &fleet->groups[i];
        sbuf_adds(&b, i ? "; " : "");
        group_span(fleet, g, &b);
        if (fleet->group_count > 1) {
            sbuf_printf(&b, " (%s: %u %s, NETCONF over %s)", g->name, (unsigned)g->cfg.device_count,
                        g->type->name,
                        g->cfg.tls   ? "TLS"
                        : g->cfg.ssh ? "SSH"
                                     : "TCP");
        } else {
            sbuf_printf(&b, " (NETCONF over %s,", g->cfg.tls ? "TLS" : g->cfg.ssh ? "SSH" : "TCP");
        }
    }
    log_info("%u devices listening on %s%s%u workers), start-up took %.3f s; stop with Ctrl-C",
             (unsigned)fleet->cfg.device_count, b.buf ? b.buf : "", fleet->group_count > 1 ? " (" : " ",
             (unsigned)fleet->cfg.threads, took_s);
    sbuf_free(&b);
    banner_log(fleet);
}

/* --export-snmprec: one device's view, written before any worker runs. @return The exit code. */
static int
export_snmprec(struct fleet *fleet, const char *path, uint32_t device)
{
    struct device *dev = fleet_device_at(fleet, device);
    FILE *out;
    enum fleet_err rc;

    if (!dev) {
        log_error("--export-device %u: this process serves devices %u to %u", (unsigned)device,
                  (unsigned)fleet->cfg.device_offset,
                  (unsigned)(fleet->cfg.device_offset + fleet->cfg.device_count - 1));
        return 2;
    }
    if (!(out = fopen(path, "w"))) {
        log_error("%s: %s", path, strerror(errno));
        return 1;
    }
    rc = snmprec_export(dev, devview_now_ms(fleet), out);
    if (fclose(out) || rc) {
        log_error("%s: cannot write the export", path);
        return 1;
    }
    log_info("wrote device %u's SNMP view to %s", (unsigned)device, path);
    return 0;
}

int
main(int argc, char **argv)
{
    monotime_us started_us = loop_clock_monotonic();
    struct fleet_config cfg;
    struct fleet_file groups = {0};
    struct fleet_group_spec one;
    const struct fleet_group_spec *specs = &one;
    struct fleet_group_spec *part = NULL; /* this process's part of the fleet's groups (shard_plan.h) */
    uint32_t spec_count = 1;
    struct fleet fleet;
    char err[1024] = "";
    sigset_t signals;
    struct status_clock status;
    int sig = 0;

    switch (cli_parse(argc, argv, &cfg, err, sizeof err)) {
    case CLI_EXIT_OK:
        return 0;
    case CLI_ERROR:
        fprintf(stderr, "fleetsim: %s\n", err);
        return 2;
    case CLI_RUN:
        break;
    }
    log_set_level(cfg.log_level);
    if (cfg.issue_client_cert) {
        char ca[600];
        if (tls_ca_issue_client(&cfg, cfg.issue_client_cert, cfg.issue_out, ca, sizeof ca, err, sizeof err)) {
            fprintf(stderr, "fleetsim: %s\n", err);
            return 2;
        }
        printf("wrote %s.pem and %s.key (client certificate for \"%s\"), signed by the CA %s\n",
               cfg.issue_out, cfg.issue_out, cfg.issue_client_cert, ca);
        return 0;
    }
    /*
     * Each request allocates and frees many small libyang nodes; with glibc's
     * defaults a worker's arena grows and shrinks with mprotect around every
     * burst (8 % of a pipelined edit's CPU in perf). Keep the pages.
     */
    mallopt(M_TOP_PAD, 16 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);

    /* Workers inherit this mask: only the main thread takes the signals, with sigwait. */
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGUSR1);
    sigaddset(&signals, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &signals, NULL);
    signal(SIGPIPE, SIG_IGN);

    one = (struct fleet_group_spec){.name = "default", .cfg = cfg};
    if (cfg.fleet_file) {
        if (fleet_file_load(cfg.fleet_file, &cfg, &groups, err, sizeof err)) {
            log_error("%s", err);
            free(part);
            fleet_file_free(&groups);
            return 2;
        }
        specs = groups.groups;
        spec_count = groups.group_count;
    }
    if (shard_plan_slice(&cfg, specs, spec_count, &part, &spec_count, err, sizeof err)) {
        log_error("%s", err);
        free(part);
        fleet_file_free(&groups);
        return 2;
    }
    specs = part;
    if (cfg.emit_inventory) {
        int rc = inventory_emit(&cfg, specs, spec_count, err, sizeof err);
        if (rc) {
            log_error("%s", err);
        } else {
            uint32_t devices = fleet_spec_devices(specs, spec_count);
            uint32_t nodes = inventory_node_count(specs, spec_count);
            char of_nodes[48] = "";
            if (nodes != devices) {
                snprintf(of_nodes, sizeof of_nodes, " as %u nodes", (unsigned)nodes);
            }
            log_info("wrote the inventory of %u devices%s to %s (%s)", (unsigned)devices, of_nodes,
                     cfg.emit_inventory, cfg.inventory_format);
        }
        free(part);
        fleet_file_free(&groups);
        return rc ? 2 : 0;
    }
    for (uint32_t i = 0; i < spec_count; i++) {
        if (controller_register_check(&specs[i].cfg, err, sizeof err)) {
            log_error("%s", err);
            free(part);
            fleet_file_free(&groups);
            return 2;
        }
    }
    if (cfg.register_only) {
        int rc = !cfg.controller_ip ? 2 : controller_register_once(&cfg, specs, spec_count) ? 1 : 0;
        if (!cfg.controller_ip) {
            log_error("--register-only needs --controller-ip");
        }
        free(part);
        fleet_file_free(&groups);
        return rc;
    }
    if (fleet_init(&fleet, &cfg, specs, spec_count, err, sizeof err)) {
        log_error("%s", err);
        fleet_close(&fleet);
        free(part);
        fleet_file_free(&groups);
        return 2;
    }
    if (cfg.export_snmprec) {
        int rc = export_snmprec(&fleet, cfg.export_snmprec, cfg.export_device);
        fleet_close(&fleet);
        free(part);
        fleet_file_free(&groups);
        return rc;
    }
    if (cfg.scenario_file && !(fleet.scenario = scenario_load(cfg.scenario_file, &fleet, err, sizeof err))) {
        log_error("%s", err);
        fleet_close(&fleet);
        free(part);
        fleet_file_free(&groups);
        return 2;
    }
    if (fleet_start(&fleet)) {
        log_error("cannot start the worker threads");
        fleet_close(&fleet);
        free(part);
        fleet_file_free(&groups);
        return 1;
    }
    if (fact_apply_start(&fleet)) {
        log_error("cannot keep the devices a scenario starts without out of the fleet");
        fleet_stop(&fleet);
        fleet_close(&fleet);
        free(part);
        fleet_file_free(&groups);
        return 1;
    }
    if (metrics_start(&fleet, err, sizeof err)) {
        log_error("%s", err);
        fleet_stop(&fleet);
        fleet_close(&fleet);
        free(part);
        fleet_file_free(&groups);
        return 2;
    }
    pushwin_mark_ready(pushwin_now_us()); /* --push-window's offsets count from here */
    report_ready(&fleet, started_us);
    if (controller_register_start(&fleet)) {
        log_error("cannot start registering with the controller");
    }
    if (scenario_start(fleet.scenario, &fleet)) {
        log_error("cannot start the scenario");
    }
    status_init(&status, &fleet);
    for (;;) {
        sig = status_wait_signal(&status, &fleet, &signals);
        if (sig == SIGUSR2) {
            int paused = !atomic_load(&fleet.streams_paused);
            atomic_store(&fleet.streams_paused, paused);
            log_info("SIGUSR2: notification streams %s", paused ? "paused" : "resumed");
            continue;
        }
        if (sig != SIGUSR1) {
            break;
        }
        if (!cfg.report_path) {
            log_warn("SIGUSR1: no --report file to write");
        } else if (report_write(&fleet, cfg.report_path, 1)) {
            log_error("%s: cannot write the report", cfg.report_path);
        } else {
            log_info("report written to %s", cfg.report_path);
        }
    }
    log_info("signal %d: closing sessions and exiting", sig);
    scenario_stop(fleet.scenario);
    controller_register_stop(&fleet);
    metrics_stop(&fleet);
    fleet_stop(&fleet);
    if (cfg.report_path && report_write(&fleet, cfg.report_path, 0)) {
        log_error("%s: cannot write the report", cfg.report_path);
        fleet_close(&fleet);
        free(part);
        fleet_file_free(&groups);
        return 1;
    }
    fleet_close(&fleet);
    free(part);
    fleet_file_free(&groups);
    return 0;
}
