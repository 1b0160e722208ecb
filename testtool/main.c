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
#include <string.h>

#include "cli.h"
#include "fleet.h"
#include "inventory.h"
#include "log.h"
#include "metrics.h"
#include "recording.h"
#include "register.h"
#include "report.h"
#include "status.h"
#include "susm.h"

/* Longest line of the first-run banner. */
#define BANNER_LINE_MAX 640

/* @p a (IPv4, host byte order) in dotted decimal. */
static void
addr_text(uint32_t a, char *out, size_t out_len)
{
    snprintf(out, out_len, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}

/* @p s as one word of a POSIX shell command: as it is when it is plain, else in single quotes. */
static void
shell_word(const char *s, size_t len, char *out, size_t out_len)
{
    size_t n = 0;
    int plain = len > 0;

    for (size_t i = 0; i < len && plain; i++) {
        unsigned char c = (unsigned char)s[i];
        plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                strchr("@%+=:,./_-", c);
    }
    if (plain) {
        snprintf(out, out_len, "%.*s", (int)len, s);
        return;
    }
    /* 'it'\''s': every quote closes the quoting, adds an escaped quote and opens it again. */
    for (size_t i = 0; i <= len && n + 6 < out_len; i++) {
        if (i == 0) {
            out[n++] = '\'';
        }
        if (i == len) {
            out[n++] = '\'';
        } else if (s[i] == '\'') {
            memcpy(out + n, "'\\''", 4);
            n += 4;
        } else {
            out[n++] = s[i];
        }
    }
    out[n] = '\0';
}

/*
 * Where a service of the fleet is, as the banner says it: "ADDR ports P-Q" for a port per device,
 * "ADDR-ADDR port P" for an address per device (one device: "ADDR port P").
 */
static void
span_text(const struct fleet *fleet, uint32_t first_port, char *out, size_t out_len)
{
    const struct fleet_config *cfg = &fleet->cfg;
    uint32_t n = cfg->device_count;
    char first[16];
    char last[16];

    addr_text(fleet->devices[0].addr, first, sizeof first);
    addr_text(fleet->devices[n - 1].addr, last, sizeof last);
    if (n == 1) {
        snprintf(out, out_len, "%s port %u", first, (unsigned)first_port);
    } else if (cfg->ip_per_device) {
        snprintf(out, out_len, "%s-%s port %u", first, last, (unsigned)first_port);
    } else {
        snprintf(out, out_len, "%s ports %u-%u", first, (unsigned)first_port, (unsigned)(first_port + n - 1));
    }
}

/* The banner's NETCONF lines: where, the login, and a command to paste (OpenSSH's ssh, or nc for TCP). */
static void
banner_netconf(const struct fleet *fleet, const char *dial)
{
    const struct fleet_config *cfg = &fleet->cfg;
    int default_password = !strcmp(cfg->password, "admin");
    char span[96];
    char user[160];
    char login[BANNER_LINE_MAX];
    char stress[BANNER_LINE_MAX];

    span_text(fleet, fleet->devices[0].port, span, sizeof span);
    shell_word(cfg->username, strlen(cfg->username), user, sizeof user);
    /* The equivalent fleetsim-stress run over every device; its defaults are ours but for --ssh. */
    snprintf(stress, sizeof stress, "fleetsim-stress mount%s%s%s%s --port %u --device-count %u%s%s%s",
             cfg->ssh ? " --ssh true" : "", strcmp(dial, "127.0.0.1") ? " --ip " : "",
             strcmp(dial, "127.0.0.1") ? dial : "", cfg->ip_per_device ? " --ip-per-device" : "",
             (unsigned)fleet->devices[0].port, (unsigned)cfg->device_count,
             cfg->ssh && !cfg->ssh_auth_any && strcmp(cfg->username, "admin") ? " --username " : "",
             cfg->ssh && !cfg->ssh_auth_any && strcmp(cfg->username, "admin") ? user : "",
             cfg->ssh && !cfg->ssh_auth_any && !default_password ? " --password '<password>'" : "");
    if (!cfg->ssh) {
        log_info("NETCONF over TCP on %s (no login):", span);
        log_info("  nc %s %u      (or: %s)", dial, (unsigned)fleet->devices[0].port, stress);
        return;
    }
    if (cfg->ssh_auth_any) {
        snprintf(login, sizeof login, "any user and password: --auth any");
    } else {
        /* A password of one's own is not written to the log; the default one is no secret. */
        snprintf(login, sizeof login, "login %s%s%s%s%s", cfg->username,
                 default_password ? "/admin" : ", the --password given",
                 cfg->authorized_keys ? ", or a key of " : "",
                 cfg->authorized_keys ? cfg->authorized_keys : "", "");
    }
    log_info("NETCONF over SSH on %s (%s):", span, login);
    log_info("  ssh -p %u -s %s@%s netconf      (or: %s)", (unsigned)fleet->devices[0].port,
             cfg->ssh_auth_any ? "admin" : user, dial, stress);
}

/* net-snmp's name of an authentication protocol (snmpwalk -a). */
static const char *
netsnmp_auth_name(int auth)
{
    switch (auth) {
    case SUSM_AUTH_MD5:
        return "MD5";
    case SUSM_AUTH_SHA1:
        return "SHA";
    case SUSM_AUTH_SHA224:
        return "SHA-224";
    case SUSM_AUTH_SHA256:
        return "SHA-256";
    case SUSM_AUTH_SHA384:
        return "SHA-384";
    case SUSM_AUTH_SHA512:
        return "SHA-512";
    default:
        return "";
    }
}

/* The banner's SNMP lines: where, the communities and users, and snmpwalk commands of the system group. */
static void
banner_snmp(const struct fleet *fleet, const char *dial)
{
    const struct fleet_config *cfg = &fleet->cfg;
    char span[96];
    char names[BANNER_LINE_MAX] = "";
    char users[BANNER_LINE_MAX + 32] = "";
    char word[200];
    size_t n = 0;

    if (!cfg->snmp) {
        return;
    }
    span_text(fleet, cfg->snmp_starting_port, span, sizeof span);
    for (uint32_t i = 0; i < cfg->snmp_v3_user_count && n < sizeof names; i++) {
        const struct respond_v3_user *u = &cfg->snmp_v3_users[i];
        n += (size_t)snprintf(names + n, sizeof names - n, "%s%.*s", i ? ", " : "", (int)u->name_len,
                              (const char *)u->name);
    }
    if (cfg->snmp_v3_user_count) {
        snprintf(users, sizeof users, " and v3 (user%s %s)", cfg->snmp_v3_user_count > 1 ? "s" : "", names);
    }
    log_info("SNMP v2c%s on UDP %s, community %s (write: %s):", users, span, cfg->snmp_community,
             cfg->snmp_write_community);
    shell_word(cfg->snmp_community, strlen(cfg->snmp_community), word, sizeof word);
    log_info("  snmpwalk -v2c -c %s %s:%u 1.3.6.1.2.1.1", word, dial, (unsigned)cfg->snmp_starting_port);
    if (cfg->snmp_v3_user_count) {
        const struct respond_v3_user *u = &cfg->snmp_v3_users[0];
        char auth[96] = "";
        char priv[64] = "";

        shell_word((const char *)u->name, u->name_len, word, sizeof word);
        if (u->auth != SUSM_AUTH_NONE) {
            snprintf(auth, sizeof auth, " -a %s -A '<auth password>'", netsnmp_auth_name(u->auth));
        }
        if (u->priv != SUSM_PRIV_NONE) {
            snprintf(priv, sizeof priv, " -x AES -X '<priv password>'");
        }
        log_info("  snmpwalk -v3 -l %s -u %s%s%s %s:%u 1.3.6.1.2.1.1",
                 u->priv != SUSM_PRIV_NONE   ? "authPriv"
                 : u->auth != SUSM_AUTH_NONE ? "authNoPriv"
                                             : "noAuthNoPriv",
                 word, auth, priv, dial, (unsigned)cfg->snmp_starting_port);
    }
}

/* The banner's metrics line, from --metrics as metrics_start() read it ("PORT", ":PORT", "ADDR:PORT"). */
static void
banner_metrics(const struct fleet_config *cfg)
{
    const char *m = cfg->metrics_addr;
    const char *colon;

    if (!m) {
        return;
    }
    colon = strrchr(m, ':');
    if (!colon) {
        log_info("metrics: http://127.0.0.1:%s/metrics", m);
    } else if (colon == m || !strncmp(m, "0.0.0.0:", 8)) {
        log_info("metrics: http://127.0.0.1%s/metrics", colon);
    } else {
        log_info("metrics: http://%s/metrics", m);
    }
}

/*
 * The readiness line (tests and scripts wait for "devices listening on"), then the first-run banner: for
 * each service of the fleet where it is, how to log in and a command to paste.
 */
static void
report_ready(const struct fleet *fleet, monotime_us started_us)
{
    const struct fleet_config *cfg = &fleet->cfg;
    double took_s = (double)(loop_clock_monotonic() - started_us) / 1e6;
    const struct device *first = &fleet->devices[0];
    const struct device *last = &fleet->devices[cfg->device_count - 1];
    const char *transport = cfg->ssh ? "SSH" : "TCP";
    char dial[16];

    if (cfg->ip_per_device) {
        log_info("%u devices listening on %u.%u.%u.%u-%u.%u.%u.%u port %u (NETCONF over %s, %u workers), "
                 "start-up took %.3f s; stop with Ctrl-C",
                 (unsigned)cfg->device_count, first->addr >> 24, (first->addr >> 16) & 255,
                 (first->addr >> 8) & 255, first->addr & 255, last->addr >> 24, (last->addr >> 16) & 255,
                 (last->addr >> 8) & 255, last->addr & 255, (unsigned)cfg->starting_port, transport,
                 (unsigned)cfg->threads, took_s);
    } else {
        log_info("%u devices listening on %u.%u.%u.%u ports %u-%u (NETCONF over %s, %u workers), "
                 "start-up took %.3f s; stop with Ctrl-C",
                 (unsigned)cfg->device_count, first->addr >> 24, (first->addr >> 16) & 255,
                 (first->addr >> 8) & 255, first->addr & 255, (unsigned)first->port, (unsigned)last->port,
                 transport, (unsigned)cfg->threads, took_s);
    }
    /* A fleet on 0.0.0.0 is dialled on loopback. */
    addr_text(first->addr ? first->addr : 0x7f000001u, dial, sizeof dial);
    banner_netconf(fleet, dial);
    banner_snmp(fleet, dial);
    banner_metrics(cfg);
}

/* --export-snmprec: one device's view, written before any worker runs. @return The exit code. */
static int
export_snmprec(struct fleet *fleet, const char *path, uint32_t device)
{
    FILE *out;
    enum fleet_err rc;

    if (device >= fleet->cfg.device_count) {
        log_error("--export-device %u: the fleet has devices 0 to %u", (unsigned)device,
                  (unsigned)fleet->cfg.device_count - 1);
        return 2;
    }
    if (!(out = fopen(path, "w"))) {
        log_error("%s: %s", path, strerror(errno));
        return 1;
    }
    rc = rec_export(&fleet->devices[device], devview_now_ms(fleet), out);
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

    if (cfg.emit_inventory) {
        if (inventory_emit(&cfg, err, sizeof err)) {
            log_error("%s", err);
            return 2;
        }
        log_info("wrote the inventory of %u devices to %s (%s)", (unsigned)cfg.device_count,
                 cfg.emit_inventory, cfg.inventory_format);
        return 0;
    }
    if (controller_register_check(&cfg, err, sizeof err)) {
        log_error("%s", err);
        return 2;
    }
    if (fleet_init(&fleet, &cfg, err, sizeof err)) {
        log_error("%s", err);
        fleet_close(&fleet);
        return 2;
    }
    if (cfg.export_snmprec) {
        int rc = export_snmprec(&fleet, cfg.export_snmprec, cfg.export_device);
        fleet_close(&fleet);
        return rc;
    }
    if (fleet_start(&fleet)) {
        log_error("cannot start the worker threads");
        fleet_close(&fleet);
        return 1;
    }
    if (metrics_start(&fleet, err, sizeof err)) {
        log_error("%s", err);
        fleet_stop(&fleet);
        fleet_close(&fleet);
        return 2;
    }
    report_ready(&fleet, started_us);
    if (controller_register_start(&fleet)) {
        log_error("cannot start registering with the controller");
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
    controller_register_stop(&fleet);
    metrics_stop(&fleet);
    fleet_stop(&fleet);
    if (cfg.report_path && report_write(&fleet, cfg.report_path, 0)) {
        log_error("%s: cannot write the report", cfg.report_path);
        fleet_close(&fleet);
        return 1;
    }
    fleet_close(&fleet);
    return 0;
}
