/*
 * The first-run banner: after the readiness line, for each service of the
 * fleet, where it listens, how to log in and a command to paste (OpenSSH's
 * ssh or nc, fleetsim-stress, net-snmp's snmpwalk with numeric OIDs, the
 * metrics URL). Built from the plan alone; a password of one's own is
 * never written.
 */
#include "banner.h"

#include <stdio.h>
#include <string.h>

#include "log.h"
#include "susm.h"

/* Longest line of the first-run banner. */
#define BANNER_LINE_MAX 640

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
span_text(const struct fleet *fleet, const struct device_group *g, uint32_t first_port, char *out,
          size_t out_len)
{
    const struct fleet_config *cfg = &g->cfg;
    uint32_t n = cfg->device_count;
    char first[NETADDR_TEXT_BYTES];
    char last[NETADDR_TEXT_BYTES];

    netaddr_text(&cfg->ip_fam, fleet->devices[g->first].addr, first, sizeof first);
    netaddr_text(&cfg->ip_fam, fleet->devices[g->first + n - 1].addr, last, sizeof last);
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
banner_netconf(const struct fleet *fleet, const struct device_group *g, const char *dial)
{
    const struct fleet_config *cfg = &g->cfg;
    const struct device *dev0 = &fleet->devices[g->first];
    int default_password = !strcmp(cfg->password, "admin");
    char span[160];
    char user[160];
    char login[BANNER_LINE_MAX];
    char stress[BANNER_LINE_MAX];

    span_text(fleet, g, dev0->port, span, sizeof span);
    shell_word(cfg->username, strlen(cfg->username), user, sizeof user);
    /* The equivalent fleetsim-stress run over every device; its defaults are ours but for --ssh. */
    snprintf(stress, sizeof stress, "fleetsim-stress mount%s%s%s%s --port %u --device-count %u%s%s%s",
             cfg->ssh ? " --ssh true" : "", strcmp(dial, "127.0.0.1") ? " --ip " : "",
             strcmp(dial, "127.0.0.1") ? dial : "", cfg->ip_per_device ? " --ip-per-device" : "",
             (unsigned)dev0->port, (unsigned)cfg->device_count,
             cfg->ssh && !cfg->ssh_auth_any && strcmp(cfg->username, "admin") ? " --username " : "",
             cfg->ssh && !cfg->ssh_auth_any && strcmp(cfg->username, "admin") ? user : "",
             cfg->ssh && !cfg->ssh_auth_any && !default_password ? " --password '<password>'" : "");
    if (cfg->tls) {
        log_info("NETCONF over TLS on %s (a client certificate of the fleet's CA: fleetsim "
                 "--issue-client-cert NAME --out PREFIX):",
                 span);
        log_info("  openssl s_client -connect %s:%u -cert PREFIX.pem -key PREFIX.key -CAfile CA", dial,
                 (unsigned)dev0->port);
        return;
    }
    if (!cfg->ssh) {
        log_info("NETCONF over TCP on %s (no login):", span);
        log_info("  nc %s %u      (or: %s)", dial, (unsigned)dev0->port, stress);
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
    log_info("  ssh -p %u -s %s@%s netconf      (or: %s)", (unsigned)dev0->port,
             cfg->ssh_auth_any ? "admin" : user, dial, stress);
}

/* The banner's SNMP lines: where, the communities and users, and snmpwalk commands of the system group. */
static void
banner_snmp(const struct fleet *fleet, const struct device_group *g, const char *dial)
{
    const struct fleet_config *cfg = &g->cfg;
    char span[160];
    char target[NETADDR_TEXT_BYTES + 8];
    char names[BANNER_LINE_MAX] = "";
    char users[BANNER_LINE_MAX + 32] = "";
    char word[200];
    size_t n = 0;

    if (!cfg->snmp) {
        return;
    }
    span_text(fleet, g, cfg->snmp_starting_port, span, sizeof span);
    /* net-snmp's tools take an IPv6 agent as udp6:[ADDR]:PORT */
    snprintf(target, sizeof target, cfg->ip_fam.v6 ? "udp6:[%s]" : "%s", dial);
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
    log_info("  snmpwalk -v2c -c %s %s:%u 1.3.6.1.2.1.1", word, target, (unsigned)cfg->snmp_starting_port);
    if (cfg->snmp_v3_user_count) {
        const struct respond_v3_user *u = &cfg->snmp_v3_users[0];
        char auth[96] = "";
        char priv[64] = "";

        shell_word((const char *)u->name, u->name_len, word, sizeof word);
        if (u->auth != SUSM_AUTH_NONE) {
            snprintf(auth, sizeof auth, " -a %s -A '<auth password>'",
                     susm_auth_netsnmp_name((enum susm_auth)u->auth));
        }
        if (u->priv != SUSM_PRIV_NONE) {
            snprintf(priv, sizeof priv, " -x AES -X '<priv password>'");
        }
        log_info("  snmpwalk -v3 -l %s -u %s%s%s %s:%u 1.3.6.1.2.1.1",
                 u->priv != SUSM_PRIV_NONE   ? "authPriv"
                 : u->auth != SUSM_AUTH_NONE ? "authNoPriv"
                                             : "noAuthNoPriv",
                 word, auth, priv, target, (unsigned)cfg->snmp_starting_port);
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

void
banner_log(const struct fleet *fleet)
{
    for (uint32_t i = 0; i < fleet->group_count; i++) {
        const struct device_group *g = &fleet->groups[i];
        char dial[NETADDR_TEXT_BYTES];
        uint32_t first = fleet->devices[g->first].addr;

        if (fleet->group_count > 1) {
            log_info("group %s: %u devices of type %s", g->name, (unsigned)g->cfg.device_count,
                     g->type->name);
        }
        /* A fleet on 0.0.0.0 (or ::) is dialled on loopback. */
        netaddr_text(&g->cfg.ip_fam, first, dial, sizeof dial);
        if (!strcmp(dial, "0.0.0.0") || !strcmp(dial, "::")) {
            snprintf(dial, sizeof dial, "%s", g->cfg.ip_fam.v6 ? "::1" : "127.0.0.1");
        }
        banner_netconf(fleet, g, dial);
        banner_snmp(fleet, g, dial);
    }
    banner_metrics(&fleet->cfg);
}
