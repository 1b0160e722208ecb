/*
 * Report writing. Devices belong to their workers, so a report of a running
 * fleet asks each worker, through its inbox, to print its own devices into
 * a buffer; the main thread waits for all of them and writes the file.
 * After the workers stopped, the main thread prints them itself.
 */
#include "report.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "action_log.h"
#include "device.h"
#include "devview.h"
#include "ledger.h"
#include "sbuf.h"
#include "scenario.h"
#include "session.h"
#include "stream.h"
#include "syslog_chan.h"
#include "trap.h"
#include "yp_rows.h"

struct report_job {
    struct fleet *fleet; /* the fleet */
    struct sbuf *parts;  /* one buffer per worker */
    atomic_uint done;    /* workers finished */
};

/* A subscriber's row as the report always showed it: emitted is what was built and offered to it (what
 * the run window held back is in netconf_ledger), so emitted = sent + send_failures + dropped + suppressed.
 */
static void
counts_json(struct sbuf *b, const struct notif_counts *c)
{
    sbuf_printf(b,
                "\"emitted\":%" PRIu64 ",\"sent\":%" PRIu64 ",\"send_failures\":%" PRIu64
                ",\"dropped\":%" PRIu64 ",\"suppressed\":%" PRIu64,
                c->ledger.emitted - c->ledger.suppressed_pre_window + c->suppressed, ledger_sent(&c->ledger),
                c->ledger.send_failures, c->ledger.dropped, c->suppressed);
}

/* Print every device of worker @p w, with zero counts where nothing happened (a reader sees the whole fleet).
 */
static void
worker_devices(struct fleet *fleet, const struct worker *w, struct sbuf *b)
{
    for (uint32_t i = w->index; i < fleet->cfg.device_count; i += fleet->cfg.threads) {
        const struct device *dev = &fleet->devices[i];
        struct notif_counts total;
        int first = 1;
        stream_device_counts(dev, &total);
        sbuf_printf(b, "%s{\"device\":%" PRIu32 ",\"group\":", b->len ? "," : "", dev->index);
        sbuf_add_json(b, dev->group->name);
        sbuf_adds(b, ",\"type\":");
        sbuf_add_json(b, dev->type->name);
        char addr[NETADDR_TEXT_BYTES];
        sbuf_printf(b, ",\"address\":\"%s\",\"port\":%u",
                    netaddr_text(&dev->group->cfg.ip_fam, dev->addr, addr, sizeof addr), (unsigned)dev->port);
        {
            /* The name the device gives itself (syslog HOSTNAME, sysName): a collector's source. */
            char host[256];
            devview_hostname(&fleet->devices[i], host, sizeof host);
            sbuf_adds(b, ",\"hostname\":");
            sbuf_add_json(b, host);
        }
        sbuf_adds(b, ",\"notifications\":{");
        counts_json(b, &total);
        sbuf_printf(b,
                    "},\"generated\":%" PRIu64 ",\"behind\":%" PRIu64 ",\"ssh_auth_failures\":%" PRIu32
                    ",\"edits\":{\"edit_config\":%" PRIu32 ",\"edit_config_errors\":%" PRIu32
                    ",\"commit\":%" PRIu32 ",\"commit_errors\":%" PRIu32 "},\"subscribers\":[",
                    dev->stream ? dev->stream->generated : 0, dev->stream ? dev->stream->behind : 0,
                    dev->stats.auth_failures, dev->edits.edit_configs, dev->edits.edit_config_errors,
                    dev->edits.commits, dev->edits.commit_errors);
        for (const struct session *s = dev->sessions; s; s = s->dev_next) {
            if (!s->sub) {
                continue;
            }
            char peer[NETADDR_TEXT_BYTES];
            sbuf_printf(b, "%s{\"session\":%" PRIu32 ",\"peer\":\"%s\",", first ? "" : ",", s->id,
                        sess_peer_text(s, 1, peer, sizeof peer));
            counts_json(b, &s->sub->counts);
            sbuf_adds(b, "}");
            first = 0;
        }
        for (uint32_t e = 0; dev->stream && e < dev->stream->ended_count; e++) {
            const struct notif_ended *row = &dev->stream->ended[e];
            char peer[NETADDR_TEXT_BYTES];
            struct net_endpoint e;
            netaddr_endpoint_set(&e, (const struct sockaddr *)&row->peer, sizeof row->peer);
            sbuf_printf(b, "%s{\"session\":%" PRIu32 ",\"peer\":\"%s\",\"ended\":true,", first ? "" : ",",
                        row->session, netaddr_endpoint_text(&e, 1, peer, sizeof peer));
            counts_json(b, &row->counts);
            sbuf_adds(b, "}");
            first = 0;
        }
        /* The subscribers' ledger (channel netconf), summed over the device's subscriptions. */
        sbuf_printf(b, "],\"netconf_ledger\":{\"sink\":\"subscribers\",\"channel\":\"%s\",",
                    ledger_channel_name(LEDGER_NETCONF));
        ledger_json(b, &total.ledger);
        sbuf_adds(b, "},");
        yp_rows_json(dev, b);
        sbuf_adds(b, ",\"trap_sinks\":[");
        for (uint32_t k = 0; dev->trap_rows && k < fleet->cfg.trap_sink_count; k++) {
            const struct trap_counters *t = &dev->trap_rows[k];
            char sink[NETADDR_TEXT_BYTES];
            trap_sink_format(&fleet->cfg.trap_sinks[k], sink, sizeof sink);
            /* The ledger's names (ledger.h), then what only informs have. */
            sbuf_printf(b, "%s{\"sink\":\"%s\",", k ? "," : "", sink);
            ledger_json(b, &t->ledger);
            sbuf_printf(b,
                        ",\"acknowledged\":%" PRIu64 ",\"timed_out\":%" PRIu64 ",\"retries\":%" PRIu64
                        ",\"pending\":%" PRIu64 "}",
                        t->acknowledged, t->timed_out, t->retries, t->pending);
        }
        sbuf_adds(b, "]");
        syslog_chan_report(dev, b);
        sbuf_adds(b, "}");
    }
}

static void
snapshot(struct loop *loop, void *arg)
{
    struct report_job *job = arg;
    struct worker *w = NULL;

    for (uint32_t i = 0; i < job->fleet->cfg.threads; i++) {
        if (job->fleet->workers[i].loop == loop) {
            w = &job->fleet->workers[i];
        }
    }
    if (w) {
        worker_devices(job->fleet, w, &job->parts[w->index]);
    }
    atomic_fetch_add(&job->done, 1);
}

enum fleet_err
report_json(struct fleet *fleet, int running, struct sbuf *out)
{
    struct report_job *job = calloc(1, sizeof *job);
    uint32_t threads = fleet->cfg.threads;
    int first = 1;

    if (!job || !(job->parts = calloc(threads, sizeof *job->parts))) {
        free(job);
        return FLEET_ERR_NOMEM;
    }
    job->fleet = fleet;
    atomic_init(&job->done, 0);
    for (uint32_t i = 0; i < threads; i++) {
        if (!running || loop_post(fleet->workers[i].loop, snapshot, job)) {
            worker_devices(fleet, &fleet->workers[i], &job->parts[i]);
            atomic_fetch_add(&job->done, 1);
        }
    }
    for (int waited = 0; atomic_load(&job->done) < threads; waited += 10) {
        if (waited >= REPORT_SNAPSHOT_TIMEOUT_MS) {
            /* A worker does not answer: write nothing half-known. The job stays allocated (a worker may
             * still write into it), a bounded leak on a path that means the process is in trouble. */
            return FLEET_ERR_SYS;
        }
        usleep(10000);
    }
    sbuf_printf(out, "{\"tool\":\"fleetsim\",\"version\":\"%s\",\"generated_at\":%lld,\"devices\":[",
                FLEETSIM_VERSION, (long long)time(NULL));
    for (uint32_t i = 0; i < threads; i++) {
        if (job->parts[i].len) {
            if (!first) {
                sbuf_adds(out, ",");
            }
            sbuf_add(out, job->parts[i].buf, job->parts[i].len);
            first = 0;
        }
        sbuf_free(&job->parts[i]);
    }
    sbuf_adds(out, "]");
    if (fleet->cfg.run_tag) {
        sbuf_adds(out, ",\"run_tag\":");
        sbuf_add_json(out, fleet->cfg.run_tag);
    }
    sbuf_adds(out, ",");
    ledger_book_json(out);
    sbuf_adds(out, ",");
    scenario_json(fleet->scenario, fleet->cfg.seed, out);
    if (fleet->actions) {
        sbuf_adds(out, ",");
        action_log_json(fleet->actions, out);
    }
    sbuf_adds(out, "}\n");
    free(job->parts);
    free(job);
    return out->failed ? FLEET_ERR_NOMEM : FLEET_OK;
}

enum fleet_err
report_write(struct fleet *fleet, const char *path, int running)
{
    struct sbuf out = {0};
    char *tmp = NULL;
    FILE *f = NULL;
    enum fleet_err rc = report_json(fleet, running, &out);

    if (rc) {
        sbuf_free(&out);
        return rc;
    }
    if (asprintf(&tmp, "%s.tmp", path) < 0) {
        sbuf_free(&out);
        return FLEET_ERR_NOMEM;
    }
    /* Written beside the target and renamed over it: a reader sees the old report or the new one. */
    if (!(f = fopen(tmp, "w"))) {
        rc = FLEET_ERR_SYS;
    } else {
        int bad = fwrite(out.buf, 1, out.len, f) != out.len;
        bad |= fclose(f) != 0; /* closed whatever fwrite did */
        if (bad || rename(tmp, path)) {
            unlink(tmp);
            rc = FLEET_ERR_SYS;
        }
    }
    free(tmp);
    sbuf_free(&out);
    return rc;
}
