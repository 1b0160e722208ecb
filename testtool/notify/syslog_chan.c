/*
 * The syslog channel (see syslog_chan.h): fleet-wide setup, per-device
 * pacing, rendering one line per event and handing it to the group's sinks.
 */
#include "syslog_chan.h"

#include <inttypes.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device.h"
#include "device_ctl.h"
#include "devview.h"
#include "dynamics.h"
#include "log.h"
#include "push_rate.h"
#include "sbuf.h"
#include "state_dir.h"
#include "syslog_catalog.h"
#include "syslog_msg.h"
#include "syslog_sink.h"
#include "tls_ca.h"

/* Salts of the device's draws: which catalog line, which interface, the placeholders' bits, the phase. */
#define SC_SALT_LINE  0x5951u
#define SC_SALT_IF    0x5952u
#define SC_SALT_VARS  0x5953u
#define SC_SALT_PHASE 0x5954u
/* Room for a filled template: the longest template plus what placeholders add. */
#define SC_TEXT_BYTES (SYSLOG_CATALOG_MAX_TEXT_BYTES + 1024u)

/* A group's syslog settings, resolved once. */
struct sc_group {
    struct syslog_catalog *catalog; /* its catalog (owned), NULL when the group has no sink */
    enum syslog_format format;      /* --syslog-format */
    uint32_t first_sink;            /* index of its first sink in each worker's sinks */
    uint32_t sink_count;            /* its --syslog-sink count */
};

/* The fleet's syslog state (fleet->syslog). */
struct syslog_fleet {
    struct sc_group *groups;    /* per fleet group */
    uint32_t sinks_per_worker;  /* the sum of the groups' sink counts */
    struct syslog_sink **sinks; /* [worker * sinks_per_worker + first_sink + k]; NULL once settled */
    struct syslog_dev *devs;    /* per device of the process; dev NULL for devices without syslog */
    struct ledger_row *rows;    /* every device's rows, devices in order */
    uint16_t *series;           /* each sink's ledger series, [first_sink + k] (ledger_series_add) */
    SSL_CTX *tls_ctx;           /* TLS sinks' client context, or NULL */
    const char *run_tag;        /* --run-tag, or NULL */
};

static void sc_on_tick(struct loop *loop, struct loop_timer *timer);

/* The built-in catalog of a device type: schemas/syslog/<type>.json when there is one, else generic's. */
static void
sc_builtin_path(const struct device_type *type, char *buf, size_t len)
{
    if (type->name && !strchr(type->name, '/') && strlen(type->name) < 64) {
        snprintf(buf, len, "%s/syslog/%s.json", FLEETSIM_SCHEMA_DIR, type->name);
        if (!access(buf, R_OK)) {
            return;
        }
    }
    snprintf(buf, len, "%s/syslog/generic.json", FLEETSIM_SCHEMA_DIR);
}

/* The TLS sinks' context: the fleet's CA (or --tls-ca) to trust, a client certificate it issued. */
static enum fleet_err
sc_tls_ctx(struct fleet *fleet, SSL_CTX **out, char *err, size_t err_len)
{
    char state[512], prefix[640], cert[660], key[660], ca[600];
    SSL_CTX *ctx = NULL;
    enum fleet_err rc;

    *out = NULL;
    if ((rc = state_dir(&fleet->cfg, state, sizeof state, err, err_len))) {
        return rc;
    }
    snprintf(prefix, sizeof prefix, "%s/syslog-client", state);
    if ((rc = tls_ca_issue_client(&fleet->cfg, "fleetsim-syslog", prefix, ca, sizeof ca, err, err_len))) {
        return rc;
    }
    snprintf(cert, sizeof cert, "%s.pem", prefix);
    snprintf(key, sizeof key, "%s.key", prefix);
    if (!(ctx = SSL_CTX_new(TLS_client_method())) || !SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) ||
        SSL_CTX_use_certificate_chain_file(ctx, cert) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_load_verify_locations(ctx, fleet->cfg.tls_ca ? fleet->cfg.tls_ca : ca, NULL) != 1) {
        snprintf(err, err_len, "cannot set up TLS for syslog (client certificate %s, CA %s)", cert,
                 fleet->cfg.tls_ca ? fleet->cfg.tls_ca : ca);
        SSL_CTX_free(ctx);
        return FLEET_ERR_SYS;
    }
    /* RFC 5425 section 5.1: the collector's certificate must chain to a trusted CA. */
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    *out = ctx;
    return FLEET_OK;
}

enum fleet_err
syslog_start_all(struct fleet *fleet, char *err, size_t err_len)
{
    struct syslog_fleet *sf = NULL;
    uint32_t total = 0, rows = 0;
    int any_tls = 0;
    enum fleet_err rc = FLEET_OK;

    for (uint32_t g = 0; g < fleet->group_count; g++) {
        total += fleet->groups[g].cfg.syslog_sink_count;
        for (uint32_t k = 0; k < fleet->groups[g].cfg.syslog_sink_count; k++) {
            any_tls |= fleet->groups[g].cfg.syslog_sinks[k].proto == SYSLOG_PROTO_TLS;
        }
    }
    if (!total) {
        return FLEET_OK;
    }
    if (!(sf = calloc(1, sizeof *sf)) || !(sf->groups = calloc(fleet->group_count, sizeof *sf->groups)) ||
        !(sf->sinks = calloc((size_t)fleet->cfg.threads * total, sizeof *sf->sinks)) ||
        !(sf->devs = calloc(fleet->cfg.device_count, sizeof *sf->devs)) ||
        !(sf->series = calloc(total, sizeof *sf->series))) {
        snprintf(err, err_len, "out of memory for syslog");
        rc = FLEET_ERR_NOMEM;
        goto cleanup;
    }
    fleet->syslog = sf; /* from here on syslog_close_all() frees whatever is made */
    sf->sinks_per_worker = total;
    sf->run_tag = fleet->cfg.run_tag;
    /* Step 1: the groups' catalogs and formats. */
    for (uint32_t g = 0, first = 0; g < fleet->group_count; g++) {
        const struct device_group *grp = &fleet->groups[g];
        struct sc_group *sg = &sf->groups[g];
        char path[700];
        sg->first_sink = first;
        sg->sink_count = grp->cfg.syslog_sink_count;
        first += sg->sink_count;
        if (!sg->sink_count) {
            continue;
        }
        if (syslog_format_parse(grp->cfg.syslog_format ? grp->cfg.syslog_format : "rfc5424", &sg->format)) {
            snprintf(err, err_len, "group %s: unknown syslog format", grp->name);
            rc = FLEET_ERR_INVAL;
            goto cleanup;
        }
        if (grp->cfg.syslog_catalog) {
            snprintf(path, sizeof path, "%s", grp->cfg.syslog_catalog);
        } else {
            sc_builtin_path(grp->type, path, sizeof path);
        }
        if ((rc = syslog_catalog_load(path, &sg->catalog, err, err_len))) {
            goto cleanup;
        }
        rows += grp->cfg.device_count * sg->sink_count;
        /* The sub-windows count per (channel, sink): groups sending to one sink share its series. */
        for (uint32_t k = 0; k < sg->sink_count; k++) {
            char name[NETADDR_TEXT_BYTES + 8];
            sf->series[sg->first_sink + k] = ledger_series_add(
                LEDGER_SYSLOG, syslog_sink_format(&grp->cfg.syslog_sinks[k], name, sizeof name));
        }
    }
    if (!(sf->rows = calloc(rows ? rows : 1, sizeof *sf->rows))) {
        snprintf(err, err_len, "out of memory for syslog");
        rc = FLEET_ERR_NOMEM;
        goto cleanup;
    }
    if (any_tls && (rc = sc_tls_ctx(fleet, &sf->tls_ctx, err, err_len))) {
        goto cleanup;
    }
    /* Step 2: each worker's sinks, one per group and --syslog-sink. */
    for (uint32_t w = 0; w < fleet->cfg.threads; w++) {
        for (uint32_t g = 0; g < fleet->group_count; g++) {
            const struct fleet_config *gc = &fleet->groups[g].cfg;
            for (uint32_t k = 0; k < gc->syslog_sink_count; k++) {
                struct syslog_sink_config sc = {.spec = gc->syslog_sinks[k],
                                                .framing = SYSLOG_FRAME_OCTETS,
                                                .fam = gc->ip_fam,
                                                .tls_ctx = sf->tls_ctx};
                if (gc->syslog_framing) {
                    (void)syslog_framing_parse(gc->syslog_framing, &sc.framing);
                }
                if ((rc = syslog_sink_new(fleet->workers[w].loop, &sc,
                                          &sf->sinks[w * total + sf->groups[g].first_sink + k], err,
                                          err_len))) {
                    goto cleanup;
                }
            }
        }
    }
    /* Step 3: every device of a group with sinks, its phase spread over one period. */
    for (uint32_t i = 0, next_row = 0; i < fleet->cfg.device_count; i++) {
        struct device *dev = &fleet->devices[i];
        const struct sc_group *sg = &sf->groups[dev->group->index];
        struct syslog_dev *sd = &sf->devs[i];
        if (!sg->sink_count) {
            continue;
        }
        sd->dev = dev;
        sd->rows = &sf->rows[next_row];
        next_row += sg->sink_count;
        for (uint32_t k = 0; k < sg->sink_count; k++) {
            sd->rows[k].series = sf->series[sg->first_sink + k];
        }
        loop_timer_init(&sd->timer);
        dev->syslog = sd;
        /* The real clock: the loop's time was read when it was made, before the model loaded. */
        push_rate_start(&sd->arrivals, dev, DEVCTL_RATE_SYSLOG, &dev->group->cfg.syslog_rate, 1,
                        SC_SALT_PHASE, 0, loop_clock_monotonic());
        if (sd->arrivals.next_us != RATE_NEVER) {
            loop_timer_start(dev->worker->loop, &sd->timer, sd->arrivals.next_us, sc_on_tick);
        }
    }
cleanup:
    if (rc && sf && !fleet->syslog) {
        free(sf->groups);
        free(sf->sinks);
        free(sf->devs);
        free(sf->series);
        free(sf);
    }
    return rc;
}

/* Render @p t for @p sd's device and hand it to every sink of its group. */
static void
sc_emit(struct syslog_dev *sd, const struct syslog_template *t, int32_t if_pos, uint64_t event_id,
        const struct syslog_who *who)
{
    struct device *dev = sd->dev;
    struct fleet *fleet = dev->worker->fleet;
    struct syslog_fleet *sf = fleet->syslog;
    const struct sc_group *sg = &sf->groups[dev->group->index];
    const struct profile *p = dev->type->profile;
    char host[256], addr[NETADDR_TEXT_BYTES] = "", text[SC_TEXT_BYTES], msg[SYSLOG_MAX_MSG_BYTES];
    struct syslog_vars vars = {.host = host, .addr = addr};
    struct syslog_fields f;
    size_t len;

    devview_hostname(dev, host, sizeof host);
    if (t->uses_addr) {
        netaddr_text(&dev->group->cfg.ip_fam, dev->addr, addr, sizeof addr);
    }
    sd->seq = syslog_seq_next(sd->seq);
    vars.draw = dyn_hash(dev->seed, SC_SALT_VARS, sd->seq);
    if (who) {
        vars.user = who->user;
        vars.peer = who->peer;
    }
    if (if_pos < 0 && p->if_count) {
        if_pos = (int32_t)(dyn_hash(dev->seed, SC_SALT_IF, sd->seq) % p->if_count);
    }
    if (if_pos >= 0 && (uint32_t)if_pos < p->if_count) {
        vars.ifname = p->ifs[if_pos].name;
        vars.ifindex = (uint32_t)if_pos + 1;
    }
    f = (struct syslog_fields){.facility = t->facility,
                               .severity = t->severity,
                               .time_ms = devview_now_ms(fleet),
                               .hostname = host,
                               .app_name = t->app_name,
                               .msgid = t->msgid,
                               .seq = sd->seq,
                               .run_tag = sf->run_tag,
                               .event_id = event_id,
                               .text = text};
    f.text_len = syslog_catalog_expand(t, &vars, text, sizeof text);
    len = syslog_render(sg->format, &f, msg, sizeof msg);
    for (uint32_t k = 0; k < sg->sink_count; k++) {
        struct syslog_sink *s = sf->sinks[dev->worker->index * sf->sinks_per_worker + sg->first_sink + k];
        if (s) {
            syslog_sink_send(s, dev->addr, msg, len, &sd->rows[k]);
        } else {
            ledger_drop_now(&sd->rows[k], 1); /* settled: the channel is closing */
        }
    }
}

static void
sc_on_tick(struct loop *loop, struct loop_timer *timer)
{
    struct syslog_dev *sd = (struct syslog_dev *)((char *)timer - offsetof(struct syslog_dev, timer));
    struct device *dev = sd->dev;
    const struct sc_group *sg = &dev->worker->fleet->syslog->groups[dev->group->index];
    monotime_us now = loop_now_us(loop);
    uint64_t skipped = rate_arrivals_skip_lag(&sd->arrivals, now, SYSLOG_MAX_LAG_US);
    enum pushwin_phase phase = pushwin_phase_now();

    /* After the window's END the device emits nothing more on its own; its sinks drain what is queued. */
    if (phase == PUSHWIN_AFTER) {
        return;
    }
    /* Lines a stalled loop could not send in time are given up, and counted: never silently lost. */
    for (uint32_t k = 0; skipped && k < sg->sink_count; k++) {
        if (phase == PUSHWIN_BEFORE) {
            ledger_suppress(&sd->rows[k], skipped);
        } else {
            ledger_drop_now(&sd->rows[k], skipped);
        }
    }
    for (uint32_t n = 0; n < SYSLOG_MAX_PER_TICK && sd->arrivals.next_us <= now; n++) {
        /* A device down or absent says nothing; its schedule goes on, so it resumes without a burst. */
        if (!devact_snmp_silent(dev) && phase == PUSHWIN_BEFORE) {
            /* Before START: counted as what would have gone out, never built. */
            for (uint32_t k = 0; k < sg->sink_count; k++) {
                ledger_suppress(&sd->rows[k], 1);
            }
        } else if (!devact_snmp_silent(dev)) {
            sc_emit(sd,
                    syslog_catalog_pick(sg->catalog, dyn_hash(dev->seed, SC_SALT_LINE, sd->arrivals.count)),
                    -1, 0, NULL);
        }
        rate_arrivals_take(&sd->arrivals);
    }
    /* A profile at 0 from here on schedules nothing: no timer, no wakeups until a rate action. */
    if (sd->arrivals.next_us != RATE_NEVER) {
        loop_timer_start(loop, timer, sd->arrivals.next_us, sc_on_tick);
    }
}

void
syslog_chan_rate_changed(struct device *dev)
{
    struct syslog_dev *sd = dev->syslog;
    struct loop *loop = dev->worker->loop;

    if (!sd) {
        return;
    }
    loop_timer_stop(loop, &sd->timer);
    push_rate_start(&sd->arrivals, dev, DEVCTL_RATE_SYSLOG, &dev->group->cfg.syslog_rate, 1, SC_SALT_PHASE, 0,
                    loop_now_us(loop));
    if (sd->arrivals.next_us != RATE_NEVER) {
        loop_timer_start(loop, &sd->timer, sd->arrivals.next_us, sc_on_tick);
    }
}

int
syslog_chan_event(struct device *dev, const char *id, int32_t if_pos, uint64_t event_id,
                  const struct syslog_who *who)
{
    struct syslog_fleet *sf = dev->worker->fleet->syslog;
    const struct syslog_catalog *cat;
    size_t id_len = strlen(id);
    int sent = 0;

    if (!dev->syslog || !sf) {
        return 0;
    }
    /* An event may have several lines (a boot writes a few): "ID" and "ID.anything", in catalog order. The
     * scan is O(catalog) per event; catalogs are small (SYSLOG_CATALOG_MAX_MESSAGES). */
    cat = sf->groups[dev->group->index].catalog;
    for (uint32_t i = 0; cat && i < cat->count; i++) {
        const struct syslog_template *t = &cat->msgs[i];
        if (!strncmp(t->id, id, id_len) && (!t->id[id_len] || t->id[id_len] == '.')) {
            sc_emit(dev->syslog, t, if_pos, event_id, who);
            sent++;
        }
    }
    return sent;
}

void
syslog_chan_suppress(struct device *dev)
{
    for (uint32_t k = 0; dev->syslog && k < dev->group->cfg.syslog_sink_count; k++) {
        ledger_suppress(&dev->syslog->rows[k], 1);
    }
}

void
syslog_settle_all(struct fleet *fleet)
{
    struct syslog_fleet *sf = fleet->syslog;

    if (!sf) {
        return;
    }
    for (uint32_t i = 0; sf->devs && i < fleet->cfg.device_count; i++) {
        if (sf->devs[i].dev) {
            loop_timer_stop(fleet->devices[i].worker->loop, &sf->devs[i].timer);
        }
    }
    for (uint32_t i = 0; sf->sinks && i < fleet->cfg.threads * sf->sinks_per_worker; i++) {
        syslog_sink_free(sf->sinks[i]);
        sf->sinks[i] = NULL;
    }
}

void
syslog_close_all(struct fleet *fleet)
{
    struct syslog_fleet *sf = fleet->syslog;

    if (!sf) {
        return;
    }
    syslog_settle_all(fleet);
    for (uint32_t i = 0; fleet->devices && i < fleet->cfg.device_count; i++) {
        fleet->devices[i].syslog = NULL;
    }
    for (uint32_t g = 0; sf->groups && g < fleet->group_count; g++) {
        syslog_catalog_free(sf->groups[g].catalog);
    }
    SSL_CTX_free(sf->tls_ctx);
    free(sf->groups);
    free(sf->sinks);
    free(sf->devs);
    free(sf->series);
    free(sf->rows);
    free(sf);
    fleet->syslog = NULL;
}

void
syslog_chan_report(const struct device *dev, struct sbuf *b)
{
    const struct syslog_dev *sd = dev->syslog;

    if (!sd) {
        return;
    }
    sbuf_printf(b, ",\"syslog_sequence\":%" PRIu32 ",\"syslog_sinks\":[", sd->seq);
    for (uint32_t k = 0; k < dev->group->cfg.syslog_sink_count; k++) {
        char sink[NETADDR_TEXT_BYTES + 8];
        sbuf_printf(b, "%s{\"sink\":\"%s\",\"channel\":\"%s\",", k ? "," : "",
                    syslog_sink_format(&dev->group->cfg.syslog_sinks[k], sink, sizeof sink),
                    ledger_channel_name(LEDGER_SYSLOG));
        ledger_json(b, &sd->rows[k]);
        sbuf_adds(b, "}");
    }
    sbuf_adds(b, "]");
}

void
syslog_chan_sum(const struct device *dev, struct ledger_row *sum)
{
    for (uint32_t k = 0; dev->syslog && k < dev->group->cfg.syslog_sink_count; k++) {
        ledger_add(sum, &dev->syslog->rows[k]);
    }
}

void
syslog_chan_sink_stats(const struct fleet *fleet, uint32_t w, uint64_t *connects, uint64_t *disconnects,
                       uint32_t *up, uint32_t *sinks)
{
    const struct syslog_fleet *sf = fleet->syslog;

    for (uint32_t k = 0; sf && k < sf->sinks_per_worker; k++) {
        const struct syslog_sink *s = sf->sinks[w * sf->sinks_per_worker + k];
        if (s) {
            const struct syslog_sink_stats *st = syslog_sink_stats(s);
            *connects += st->connects;
            *disconnects += st->disconnects;
            *up += (uint32_t)st->up;
            (*sinks)++;
        }
    }
}
