/*
 * The fleet written for its consumers, computed from the plan only: no
 * socket is bound, no schema or profile is loaded, so an inventory can be
 * written while the fleet's ports are taken (by the fleet itself, say).
 *
 * Every format names the same devices the same way. Device i is reached at
 * the consumer address (--generate-config-address, else the listening
 * address; 0.0.0.0 becomes 127.0.0.1 as in OpenDaylight's testtool) on
 * port P+i, or with --ip-per-device at that address + i on port P. Node
 * names are OpenDaylight testtool's "<port>-sim-device", or
 * "<address>-sim-device" with --ip-per-device, where the port is shared, or
 * the device's name "device-N" with --shard-own-ports, where every shard
 * reuses the ports.
 *
 * Each document is built in memory (about 300 bytes a device, 9 MB for
 * 30,000) and written to a temporary file that is renamed over the target,
 * so a reader never sees half a file.
 */
#include "inventory.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "device.h"
#include "devtype.h"
#include "plan.h"
#include "sbuf.h"
#include "ssh_link.h"
#include "trap.h"

/* OpenDaylight testtool's values for what a simulated device does not need: no keepalives, full schemas. */
#define INVENTORY_ODL_KEEPALIVE_DELAY_S 0
#define INVENTORY_ODL_SCHEMALESS        "false"
/* The address a consumer is given when the fleet listens on every address (OpenDaylight's default). */
#define INVENTORY_ANY_ADDRESS_STAND_IN "127.0.0.1"
/* Foreign source of the OpenNMS requisition (OpenNMS names the requisition file after it). */
#define INVENTORY_OPENNMS_FOREIGN_SOURCE "fleetsim"

int
inventory_host_valid(const char *s)
{
    size_t n = strlen(s);

    if (!n || n > INVENTORY_HOST_MAX) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
              c == '-' || c == ':' || c == '_')) {
            return 0;
        }
    }
    return 1;
}

/* First device's address with --ip-per-device: its family and low 32 bits. The plan passed inventory_check().
 */
static uint32_t
ip_per_device_base(const struct fleet_config *cfg, struct net_family *fam)
{
    uint32_t low;

    if (cfg->config_address && !netaddr_parse(cfg->config_address, fam, &low)) {
        return low;
    }
    *fam = cfg->ip_fam;
    return cfg->ip;
}

int
inventory_check(const struct fleet_config *cfg, char *err, size_t err_len)
{
    struct net_family fam;
    uint32_t low;

    if (cfg->config_address && !inventory_host_valid(cfg->config_address)) {
        snprintf(err, err_len, "--generate-config-address must be a host name or an address, not \"%s\"",
                 cfg->config_address);
        return -1;
    }
    if (cfg->ip_per_device) {
        if (cfg->config_address && netaddr_parse(cfg->config_address, &fam, &low)) {
            snprintf(
                err, err_len,
                "--generate-config-address must be an IPv4 address with --ip-per-device (or IPv6; device i "
                "is reached at that address + i), not \"%s\"",
                cfg->config_address);
            return -1;
        }
        low = ip_per_device_base(cfg, &fam);
        if (!netaddr_range_fits(&fam, low, cfg->device_count)) {
            snprintf(err, err_len, "%u devices from that address run past %s", (unsigned)cfg->device_count,
                     fam.v6 ? "its last 32 bits (ffff:ffff)" : "255.255.255.255");
            return -1;
        }
        return 0;
    }
    if ((uint64_t)cfg->starting_port + cfg->device_count - 1 > 65535) {
        snprintf(err, err_len, "%u devices from port %u run past port 65535 (use --ip-per-device)",
                 (unsigned)cfg->device_count, (unsigned)cfg->starting_port);
        return -1;
    }
    if (cfg->snmp && (uint64_t)cfg->snmp_starting_port + cfg->device_count - 1 > 65535) {
        snprintf(err, err_len, "%u SNMP agents from port %u run past port 65535 (see --snmp-starting-port)",
                 (unsigned)cfg->device_count, (unsigned)cfg->snmp_starting_port);
        return -1;
    }
    return 0;
}

/* Nodes per device: --devices-per-port (0 in a plan made without cli_defaults() counts as 1). */
static uint32_t
node_copies(const struct fleet_config *cfg)
{
    return cfg->devices_per_port ? cfg->devices_per_port : 1;
}

uint32_t
inventory_node_count(const struct fleet_group_spec *groups, uint32_t group_count)
{
    uint32_t nodes = 0;

    for (uint32_t g = 0; g < group_count; g++) {
        nodes += groups[g].cfg.device_count * node_copies(&groups[g].cfg);
    }
    return nodes;
}

uint32_t
inventory_first_node(const struct fleet_group_spec *groups, uint32_t group_count, uint32_t index)
{
    uint32_t node = 0, g = 0;

    for (; g + 1 < group_count && index >= groups[g].cfg.device_count; g++) {
        index -= groups[g].cfg.device_count;
        node += groups[g].cfg.device_count * node_copies(&groups[g].cfg);
    }
    return node + index * node_copies(&groups[g].cfg);
}

/* The device's other nodes (--devices-per-port): "-1", "-2", ... after the first's name. */
static void
add_copy_suffix(struct inventory_device *out, uint32_t copy)
{
    size_t len = strlen(out->node_id);
    if (copy) {
        snprintf(out->node_id + len, sizeof out->node_id - len, "-%u", (unsigned)copy);
    }
}

void
inventory_device_get(const struct fleet_group_spec *groups, uint32_t group_count, uint32_t node,
                     struct inventory_device *out)
{
    uint32_t g = 0, first_node = 0, index, copy;
    const struct fleet_config *cfg;

    while (g + 1 < group_count &&
           node >= first_node + groups[g].cfg.device_count * node_copies(&groups[g].cfg)) {
        first_node += groups[g].cfg.device_count * node_copies(&groups[g].cfg);
        g++;
    }
    cfg = &groups[g].cfg;
    index = (node - first_node) / node_copies(cfg);
    copy = (node - first_node) % node_copies(cfg);
    out->index = groups[g].first_index + index;
    out->node = groups[g].first_node + (node - first_node);
    out->cfg = cfg;
    out->group = groups[g].name ? groups[g].name : "default";
    device_type_label(cfg, out->type, sizeof out->type);
    if (cfg->ip_per_device) {
        struct net_family fam;
        uint32_t low = ip_per_device_base(cfg, &fam);
        /* cfg.ip of a shard's part starts at the part; a consumer address is the whole group's */
        netaddr_text(&fam, low + index + (cfg->config_address ? groups[g].skip : 0), out->host,
                     sizeof out->host);
        out->netconf_port = (uint16_t)cfg->starting_port;
        out->snmp_port = cfg->snmp ? (uint16_t)cfg->snmp_starting_port : 0;
        snprintf(out->node_id, sizeof out->node_id, "%s" INVENTORY_NODE_SUFFIX, out->host);
        add_copy_suffix(out, copy);
        return;
    }
    if (cfg->config_address) {
        snprintf(out->host, sizeof out->host, "%s", cfg->config_address);
    } else if (cfg->ip == 0 && !cfg->ip_fam.v6) {
        snprintf(out->host, sizeof out->host, "%s", INVENTORY_ANY_ADDRESS_STAND_IN);
    } else {
        netaddr_text(&cfg->ip_fam, cfg->ip, out->host, sizeof out->host);
        if (!strcmp(out->host, "::")) {
            snprintf(out->host, sizeof out->host, "::1"); /* the wildcard is reached on loopback */
        }
    }
    out->netconf_port = (uint16_t)(cfg->starting_port + index);
    out->snmp_port = cfg->snmp ? (uint16_t)(cfg->snmp_starting_port + index) : 0;
    if (cfg->shard_own_ports) { /* every part reuses the ports: the device's name tells them apart */
        snprintf(out->node_id, sizeof out->node_id, "device-%u", (unsigned)out->index);
    } else {
        snprintf(out->node_id, sizeof out->node_id, "%u" INVENTORY_NODE_SUFFIX, (unsigned)out->netconf_port);
    }
    add_copy_suffix(out, copy);
}

/* Host and port as a URL authority or Prometheus target: an IPv6 literal goes in brackets. */
static void
add_host_port(struct sbuf *b, const char *host, unsigned port)
{
    if (strchr(host, ':')) {
        sbuf_printf(b, "[%s]:%u", host, port);
    } else {
        sbuf_printf(b, "%s:%u", host, port);
    }
}

void
inventory_odl_topology(const struct fleet_group_spec *groups, uint32_t group_count, uint32_t first,
                       uint32_t count, struct sbuf *out)
{
    struct inventory_device dev;

    /*
     * RFC 8040 JSON for the target resource topology=topology-netconf: the list entry wrapped in its
     * list, module-qualified at the top and where netconf-node-topology augments the node. The node
     * attributes sit in the netconf-node container (netconf-node-topology since 2024-09-11); the
     * credentials choice takes its login-password-unencrypted case.
     */
    sbuf_adds(out, "{\"network-topology:topology\":[{\"topology-id\":\"topology-netconf\",\"node\":[");
    for (uint32_t i = first; i < first + count; i++) {
        const struct fleet_config *cfg;
        inventory_device_get(groups, group_count, i, &dev);
        cfg = dev.cfg;
        sbuf_adds(out, i == first ? "\n{\"node-id\":" : ",\n{\"node-id\":");
        sbuf_add_json(out, dev.node_id);
        sbuf_adds(out, ",\"netconf-node-topology:netconf-node\":{\"host\":");
        sbuf_add_json(out, dev.host);
        sbuf_printf(out,
                    ",\"port\":%u,\"login-password-unencrypted\":{\"username\":", (unsigned)dev.netconf_port);
        sbuf_add_json(out, cfg->username);
        sbuf_adds(out, ",\"password\":");
        sbuf_add_json(out, cfg->password);
        /* odl-netconf-device's connection-parameters: TLS is protocol/name, tcp-only is for plain TCP. */
        sbuf_printf(out, "},\"tcp-only\":%s,%s\"keepalive-delay\":%d,\"schemaless\":%s}}",
                    cfg->ssh || cfg->tls ? "false" : "true",
                    cfg->tls ? "\"protocol\":{\"name\":\"TLS\"}," : "", INVENTORY_ODL_KEEPALIVE_DELAY_S,
                    INVENTORY_ODL_SCHEMALESS);
    }
    sbuf_adds(out, "\n]}]}\n");
}

/* Prometheus file-based service discovery: one target group per SNMP agent, for snmp_exporter. */
static void
write_prometheus_sd(const struct fleet_group_spec *groups, uint32_t group_count, uint32_t total,
                    struct sbuf *out)
{
    struct inventory_device dev;
    uint32_t n = 0;

    sbuf_adds(out, "[");
    for (uint32_t i = 0; i < total; i++) {
        inventory_device_get(groups, group_count, i, &dev);
        if (!dev.cfg->snmp) {
            continue;
        }
        sbuf_adds(out, n++ ? ",\n{\"targets\":[\"" : "\n{\"targets\":[\"");
        add_host_port(out, dev.host, dev.snmp_port);
        sbuf_adds(out, "\"],\"labels\":{\"fleetsim_node\":");
        sbuf_add_json(out, dev.node_id);
        sbuf_adds(out, ",\"fleetsim_group\":");
        sbuf_add_json(out, dev.group);
        sbuf_adds(out, ",\"fleetsim_type\":");
        sbuf_add_json(out, dev.type);
        sbuf_printf(out, ",\"fleetsim_index\":\"%u\",\"fleetsim_netconf\":\"", (unsigned)dev.node);
        add_host_port(out, dev.host, dev.netconf_port);
        sbuf_adds(out, "\"}}");
    }
    sbuf_adds(out, "\n]\n");
}

/*
 * OpenNMS requisition (model-import): a node per device with one IP interface, primary for SNMP, with
 * the ICMP and SNMP services. OpenNMS reaches a node's agent on one SNMP port per address (its SNMP
 * configuration is per address), so nodes are told apart only with --ip-per-device; in a port per
 * device fleet every node shares the address and its ports travel as requisition meta-data.
 */
static void
write_opennms(const struct fleet_group_spec *groups, uint32_t group_count, uint32_t total, struct sbuf *out)
{
    struct inventory_device dev;

    sbuf_adds(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                   "<model-import xmlns=\"http://xmlns.opennms.org/xsd/config/model-import\" "
                   "foreign-source=\"" INVENTORY_OPENNMS_FOREIGN_SOURCE "\">\n");
    for (uint32_t i = 0; i < total; i++) {
        inventory_device_get(groups, group_count, i, &dev);
        if (!dev.cfg->snmp) {
            continue;
        }
        sbuf_adds(out, "  <node foreign-id=\"");
        sbuf_add_xml(out, dev.node_id);
        sbuf_adds(out, "\" node-label=\"");
        sbuf_add_xml(out, dev.node_id);
        sbuf_adds(out, "\">\n    <interface ip-addr=\"");
        sbuf_add_xml(out, dev.host);
        sbuf_adds(out, "\" status=\"1\" snmp-primary=\"P\">\n"
                       "      <monitored-service service-name=\"ICMP\"/>\n"
                       "      <monitored-service service-name=\"SNMP\"/>\n"
                       "    </interface>\n"
                       "    <category name=\"fleetsim\"/>\n");
        sbuf_adds(out, "    <meta-data context=\"requisition\" key=\"fleetsim-group\" value=\"");
        sbuf_add_xml(out, dev.group);
        sbuf_adds(out, "\"/>\n    <meta-data context=\"requisition\" key=\"fleetsim-type\" value=\"");
        sbuf_add_xml(out, dev.type);
        sbuf_printf(out,
                    "\"/>\n"
                    "    <meta-data context=\"requisition\" key=\"fleetsim-index\" value=\"%u\"/>\n"
                    "    <meta-data context=\"requisition\" key=\"snmp-port\" value=\"%u\"/>\n"
                    "    <meta-data context=\"requisition\" key=\"netconf-port\" value=\"%u\"/>\n"
                    "  </node>\n",
                    (unsigned)dev.node, (unsigned)dev.snmp_port, (unsigned)dev.netconf_port);
    }
    sbuf_adds(out, "</model-import>\n");
}

/* A CSV field (RFC 4180): quoted, with quotes doubled, when it holds a comma, quote or line break. */
static void
add_csv_field(struct sbuf *b, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        sbuf_adds(b, s);
        return;
    }
    sbuf_add(b, "\"", 1);
    for (; *s; s++) {
        sbuf_add(b, s, 1);
        if (*s == '"') {
            sbuf_add(b, "\"", 1);
        }
    }
    sbuf_add(b, "\"", 1);
}

/* CSV, a row per node (per device unless --devices-per-port); the SNMP columns are empty with --snmp false.
 * The password is the fleet's. */
static void
write_csv(const struct fleet_group_spec *groups, uint32_t group_count, uint32_t total, struct sbuf *out)
{
    struct inventory_device dev;

    sbuf_adds(out, "index,node_id,netconf_host,netconf_port,transport,username,password,snmp_host,snmp_port,"
                   "snmp_community,group,type\r\n");
    for (uint32_t i = 0; i < total; i++) {
        const struct fleet_config *cfg;
        inventory_device_get(groups, group_count, i, &dev);
        cfg = dev.cfg;
        sbuf_printf(out, "%u,", (unsigned)dev.index); /* the device's: a report's rows join on it */
        add_csv_field(out, dev.node_id);
        sbuf_adds(out, ",");
        add_csv_field(out, dev.host);
        sbuf_printf(out, ",%u,%s,", (unsigned)dev.netconf_port, cfg->tls ? "tls" : cfg->ssh ? "ssh" : "tcp");
        add_csv_field(out, cfg->username);
        sbuf_adds(out, ",");
        add_csv_field(out, cfg->password);
        sbuf_adds(out, ",");
        if (cfg->snmp) {
            add_csv_field(out, dev.host);
            sbuf_printf(out, ",%u,", (unsigned)dev.snmp_port);
            add_csv_field(out, cfg->snmp_community);
        } else {
            sbuf_adds(out, ",,");
        }
        sbuf_adds(out, ",");
        add_csv_field(out, dev.group);
        sbuf_adds(out, ",");
        add_csv_field(out, dev.type);
        sbuf_adds(out, "\r\n");
    }
}

/* Write @p len bytes to @p path through a temporary file renamed over it. @return 0 or -1 (err set). */
static int
write_atomically(const char *path, const char *data, size_t len, mode_t mode, char *err, size_t err_len)
{
    char *tmp = NULL;
    size_t done = 0;
    mode_t mask;
    int fd = -1;
    int rc = -1;

    /* The file gets the mode fopen() would give it, or less: umask() can only be read by setting it. */
    mask = umask(077);
    umask(mask);
    if (!(tmp = malloc(strlen(path) + sizeof ".XXXXXX"))) {
        snprintf(err, err_len, "%s: out of memory", path);
        goto cleanup;
    }
    sprintf(tmp, "%s.XXXXXX", path);
    if ((fd = mkstemp(tmp)) < 0) {
        snprintf(err, err_len, "%s: cannot create a file beside it: %s", path, strerror(errno));
        free(tmp);
        tmp = NULL;
        goto cleanup;
    }
    if (fchmod(fd, mode & ~mask) < 0) {
        snprintf(err, err_len, "%s: %s", tmp, strerror(errno));
        goto cleanup;
    }
    while (done < len) {
        ssize_t n = write(fd, data + done, len - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            snprintf(err, err_len, "%s: cannot write: %s", path, n < 0 ? strerror(errno) : "no progress");
            goto cleanup;
        }
        done += (size_t)n;
    }
    if (fsync(fd) < 0 || close(fd) < 0) {
        fd = -1;
        snprintf(err, err_len, "%s: cannot write: %s", path, strerror(errno));
        goto cleanup;
    }
    fd = -1;
    if (rename(tmp, path) < 0) {
        snprintf(err, err_len, "%s: cannot rename the written file into place: %s", path, strerror(errno));
        goto cleanup;
    }
    rc = 0;

cleanup:
    if (fd >= 0) {
        close(fd);
    }
    if (tmp && rc) {
        unlink(tmp);
    }
    free(tmp);
    return rc;
}

/* Most threads deriving the host keys of an inventory (an RSA key costs tens of ms of CPU). */
#define INVENTORY_KEY_THREADS_MAX 16u

/* One thread's share of an inventory's host keys: nodes start, start + step, ... */
struct key_share {
    const struct fleet_group_spec *groups; /* the fleet's groups */
    uint32_t group_count;                  /* how many */
    uint32_t total;                        /* nodes in the inventory */
    uint32_t start;                        /* this share's first node */
    uint32_t step;                         /* nodes between two of this share's */
    const uint8_t *secret;                 /* the fleet's 32-byte device key secret */
    char **b64;                            /* out: each node's base64 public key (NULL where it failed) */
};

static void *
derive_share(void *arg)
{
    struct key_share *k = arg;

    for (uint32_t n = k->start; n < k->total; n += k->step) {
        struct inventory_device d;
        inventory_device_get(k->groups, k->group_count, n, &d);
        if (!(k->b64[n] = ssh_link_device_pubkey_b64(d.cfg, k->secret, d.index))) {
            break;
        }
    }
    return NULL;
}

/* Every node's host key into @p b64, on as many threads as there are processors (for RSA's sake). */
static void
derive_keys(const struct fleet_group_spec *groups, uint32_t group_count, uint32_t total,
            const uint8_t secret[32], char **b64)
{
    struct key_share share[INVENTORY_KEY_THREADS_MAX];
    pthread_t tid[INVENTORY_KEY_THREADS_MAX];
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t threads = cpus < 1                                 ? 1
                       : cpus > (long)INVENTORY_KEY_THREADS_MAX ? INVENTORY_KEY_THREADS_MAX
                                                                : (uint32_t)cpus;
    uint32_t started = 1;

    threads = threads > total ? (total ? total : 1) : threads;
    for (uint32_t t = 0; t < threads; t++) {
        share[t] = (struct key_share){groups, group_count, total, t, threads, secret, b64};
    }
    /* share 0 runs here; a thread that does not start leaves its nodes to the check after */
    for (uint32_t t = 1; t < threads; t++, started++) {
        if (pthread_create(&tid[t], NULL, derive_share, &share[t])) {
            break;
        }
    }
    derive_share(&share[0]);
    for (uint32_t t = 1; t < started; t++) {
        pthread_join(tid[t], NULL);
    }
    for (uint32_t n = 0; n < total; n++) {
        if (!b64[n]) {
            struct inventory_device d;
            inventory_device_get(groups, group_count, n, &d);
            b64[n] = ssh_link_device_pubkey_b64(d.cfg, secret, d.index);
        }
    }
}

/*
 * OpenDaylight's odl-netconf-callhome-server allowed-devices: each node's unique-id (its node-id) and
 * the base64 public key of its device's own host key, which a call-home manager checks the device by.
 */
static int
write_odl_callhome(const struct fleet_group_spec *groups, uint32_t group_count, uint32_t total,
                   struct sbuf *doc, char *err, size_t err_len)
{
    uint8_t secret[32];
    char **b64 = NULL;
    int rc = -1;

    for (uint32_t g = 0; g < group_count; g++) {
        if (!groups[g].cfg.ssh || !groups[g].cfg.host_key_per_device) {
            snprintf(err, err_len,
                     "--inventory-format odl-callhome lists each device's own host key: it needs --ssh true "
                     "and --host-key-per-device");
            return -1;
        }
    }
    if (ssh_link_load_secret(&groups[0].cfg, secret, err, err_len)) {
        return -1;
    }
    if (!(b64 = calloc(total ? total : 1, sizeof *b64))) {
        snprintf(err, err_len, "out of memory for %u host keys", (unsigned)total);
        goto cleanup;
    }
    derive_keys(groups, group_count, total, secret, b64);
    sbuf_printf(doc, "{\"odl-netconf-callhome-server:netconf-callhome-server\":{\"allowed-devices\":{"
                     "\"device\":[");
    for (uint32_t n = 0; n < total; n++) {
        struct inventory_device d;
        inventory_device_get(groups, group_count, n, &d);
        if (!b64[n]) {
            snprintf(err, err_len, "cannot derive the host key of device %u", (unsigned)d.index);
            goto cleanup;
        }
        sbuf_printf(doc, "%s\n{\"unique-id\":\"%s\",\"ssh-host-key\":\"%s\"}", n ? "," : "", d.node_id,
                    b64[n]);
    }
    sbuf_printf(doc, "\n]}}}\n");
    rc = 0;

cleanup:
    for (uint32_t n = 0; b64 && n < total; n++) {
        free(b64[n]);
    }
    free(b64);
    OPENSSL_cleanse(secret, sizeof secret);
    return rc;
}

int
inventory_emit(const struct fleet_config *cfg, const struct fleet_group_spec *groups, uint32_t group_count,
               char *err, size_t err_len)
{
    const char *format = cfg->inventory_format;
    struct sbuf doc = {0};
    struct inventory_device first;
    struct in_addr a4;
    struct in6_addr a6;
    mode_t mode = 0644;
    uint32_t total = 0;
    int rc = -1, snmp = 0;

    for (uint32_t g = 0; g < group_count; g++) {
        if (inventory_check(&groups[g].cfg, err, err_len)) {
            goto cleanup;
        }
        snmp |= groups[g].cfg.snmp;
    }
    total = inventory_node_count(groups, group_count);
    inventory_device_get(groups, group_count, 0, &first);
    if (!snmp && (!strcmp(format, "prometheus-sd") || !strcmp(format, "opennms-requisition"))) {
        snprintf(err, err_len,
                 "--inventory-format %s lists SNMP agents, but the fleet runs with --snmp false", format);
        goto cleanup;
    }
    if (!strcmp(format, "odl-json")) {
        inventory_odl_topology(groups, group_count, 0, total, &doc);
        mode = 0600; /* holds the devices' password */
    } else if (!strcmp(format, "prometheus-sd")) {
        write_prometheus_sd(groups, group_count, total, &doc);
    } else if (!strcmp(format, "opennms-requisition")) {
        if (inet_pton(AF_INET, first.host, &a4) != 1 && inet_pton(AF_INET6, first.host, &a6) != 1) {
            snprintf(err, err_len,
                     "--inventory-format opennms-requisition needs an IP address for the interfaces, not the "
                     "name \"%s\" (see --generate-config-address)",
                     first.host);
            goto cleanup;
        }
        write_opennms(groups, group_count, total, &doc);
    } else if (!strcmp(format, "odl-callhome")) {
        if (write_odl_callhome(groups, group_count, total, &doc, err, err_len)) {
            goto cleanup;
        }
    } else if (!strcmp(format, "csv")) {
        write_csv(groups, group_count, total, &doc);
        mode = 0600; /* holds the devices' password */
    } else {
        snprintf(err, err_len, "unknown inventory format \"%s\"", format);
        goto cleanup;
    }
    if (doc.failed) {
        snprintf(err, err_len, "%s: out of memory building the inventory", cfg->emit_inventory);
        goto cleanup;
    }
    rc = write_atomically(cfg->emit_inventory, doc.buf, doc.len, mode, err, err_len);

cleanup:
    sbuf_free(&doc);
    return rc;
}
