/*
 * The live view's Prometheus text and its HTTP server; the counters come
 * from a gathering through the workers (metrics_gather.c).
 *
 * A scrape of a 10,000-device fleet reads each device once (about twenty
 * integers, plus its subscriptions when it streams) on its own worker; the
 * text is formatted afterwards on libmicrohttpd's thread. bench/RESULTS.md
 * has the measured cost.
 */
#include "metrics.h"
#include "fanout.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "action_log.h"
#include "control_api.h"
#include "device.h"
#include "device_ctl.h"
#include "fleet_action.h"
#include "ledger.h"
#include "live.h"
#include "log.h"
#include "sbuf.h"
#include "session.h"
#include "spdu.h"
#include "stream.h"
#include "trap.h"
#include "yp_rows.h"

/* Most simultaneous HTTP connections: a scraper or two and a person with curl. */
#define METRICS_MAX_CONNECTIONS 16
/* An idle HTTP connection is closed after this many seconds. */
#define METRICS_CONNECTION_TIMEOUT_S 10
/* Longest ADDR of --metrics. */
#define METRICS_ADDR_MAX 64

static const char *const snmp_types[METRICS_SNMP_TYPES] = {"get", "getnext", "getbulk", "set"};

/* The HTTP server (NULL members when --metrics is not given). */
struct metrics_server {
    struct MHD_Daemon *daemon; /* libmicrohttpd with its own polling thread */
    struct fleet *fleet;       /* what scrapes gather */
    char *api_token;           /* --api-token-file's token for /api/, or NULL */
    struct live *live;         /* the live page (/) and its data (/live.json), served without the token */
};

/* One gathering; freed by whoever drops the last reference (the caller or a late worker). */
/* ------------------------------------------------------------------ text format */

static void
family(struct sbuf *out, const char *name, const char *type, const char *help)
{
    sbuf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value per the text format: backslash, double quote and line feed escaped. */
static void
label_value(struct sbuf *out, const char *v)
{
    for (; *v; v++) {
        switch (*v) {
        case '\\':
            sbuf_adds(out, "\\\\");
            break;
        case '"':
            sbuf_adds(out, "\\\"");
            break;
        case '\n':
            sbuf_adds(out, "\\n");
            break;
        default:
            sbuf_add(out, v, 1);
        }
    }
}

/* One sample with at most two labels (a NULL key ends the list). */
static void
sample(struct sbuf *out, const char *name, const char *k1, const char *v1, const char *k2, const char *v2,
       uint64_t value)
{
    sbuf_adds(out, name);
    if (k1) {
        sbuf_printf(out, "{%s=\"", k1);
        label_value(out, v1);
        if (k2) {
            sbuf_printf(out, "\",%s=\"", k2);
            label_value(out, v2);
        }
        sbuf_adds(out, "\"}");
    }
    sbuf_printf(out, " %" PRIu64 "\n", value);
}

/* One sample of fleetsim_push_sink_messages_total: three labels, the sink's name escaped. */
static void
sink_sample(struct sbuf *out, const char *channel, const char *sink, const char *state, uint64_t value)
{
    sbuf_printf(out, "fleetsim_push_sink_messages_total{channel=\"%s\",sink=\"", channel);
    label_value(out, sink);
    sbuf_printf(out, "\",state=\"%s\"} %" PRIu64 "\n", state, value);
}

/* Decimal digits of @p v at the end of @p end (no NUL); @return Where they start. */
static char *
put_u64(char *end, uint64_t v)
{
    do {
        *--end = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return end;
}

/*
 * One per-device sample, built by hand: 10,000 devices make 90,000 of these lines, and printf's format
 * parsing was most of a scrape's cost.
 */
static void
row_line(struct sbuf *out, const char *name, size_t name_len, uint32_t device, uint64_t value)
{
    char num[24], *p;

    sbuf_add(out, name, name_len);
    sbuf_add(out, "{device=\"", 9);
    p = put_u64(num + sizeof num, device);
    sbuf_add(out, p, (size_t)(num + sizeof num - p));
    sbuf_add(out, "\"} ", 3);
    p = put_u64(num + sizeof num, value);
    sbuf_add(out, p, (size_t)(num + sizeof num - p));
    sbuf_add(out, "\n", 1);
}

/* One info line per device: its group and type, to join the per-device series with (group_left). */
static void
format_device_info(const struct fleet *fleet, const struct metrics_snapshot *snap, struct sbuf *out)
{
    family(out, "fleetsim_device_info", "gauge", "Always 1; the device's group and type are labels.");
    for (uint32_t i = 0; i < snap->row_count; i++) {
        const struct device *dev = &fleet->devices[snap->rows[i].index];
        sbuf_printf(out, "fleetsim_device_info{device=\"%" PRIu32 "\",group=\"", dev->index);
        label_value(out, dev->group->name);
        sbuf_adds(out, "\",type=\"");
        label_value(out, dev->type->name);
        sbuf_adds(out, "\"} 1\n");
    }
}

/* The per-device push ledger: each channel the device pushes on (its sinks summed) and state, as
 * fleetsim_push_messages_total; a channel without a row of the device's has no series (no all-zero bulk). */
static void
format_ledger_rows(const struct metrics_snapshot *snap, struct sbuf *out)
{
    static const char name[] = "fleetsim_device_push_messages_total";
    static const char *const states[7] = {
        "emitted", "sent", "in_window", "drain", "send_failures", "dropped", "suppressed_pre_window"};

    family(out, name, "counter",
           "Push messages of the device's ledger by channel and state, its sinks summed (sent = in_window + "
           "drain).");
    for (uint32_t i = 0; i < snap->row_count; i++) {
        for (int ch = 0; ch < LEDGER_CHANNELS; ch++) {
            const struct ledger_row *l = &snap->rows[i].ledger[ch];
            if (!(snap->rows[i].ledger_channels & (1u << ch))) {
                continue;
            }
            const uint64_t v[7] = {
                l->emitted, ledger_sent(l),          l->in_window, l->drain, l->send_failures,
                l->dropped, l->suppressed_pre_window};
            for (int st = 0; st < 7; st++) {
                sbuf_printf(out, "%s{device=\"%" PRIu32 "\",channel=\"%s\",state=\"%s\"} %" PRIu64 "\n", name,
                            snap->rows[i].index, ledger_channel_name((enum ledger_channel)ch), states[st],
                            v[st]);
            }
        }
    }
}

/* The per-device families; the device label is a number, so it needs no escaping. */
static void
format_rows(const struct metrics_snapshot *snap, struct sbuf *out)
{
    static const struct {
        const char *name, *type, *help;
    } fams[] = {
        {"fleetsim_device_sessions", "gauge", "Sessions open now, per device."},
        {"fleetsim_device_sessions_started_total", "counter", "Sessions whose hello completed, per device."},
        {"fleetsim_device_hello_failures_total", "counter",
         "Sessions that failed before their hello completed, per device."},
        {"fleetsim_device_ssh_auth_failures_total", "counter", "SSH authentications refused, per device."},
        {"fleetsim_device_tls_handshake_failures_total", "counter", "TLS handshakes refused, per device."},
        {"fleetsim_device_netconf_rpcs_received_total", "counter",
         "NETCONF rpc messages received, per device."},
        {"fleetsim_device_netconf_rpc_errors_total", "counter",
         "NETCONF rpc-replies carrying rpc-error, per device."},
        {"fleetsim_device_snmp_packets_received_total", "counter", "SNMP datagrams received, per device."},
        {"fleetsim_device_notifications_sent_total", "counter",
         "Notifications queued to subscribers, per device."},
        {"fleetsim_device_notifications_dropped_total", "counter",
         "Notifications dropped for slow subscribers, per device."},
    };

    for (size_t f = 0; f < sizeof fams / sizeof fams[0]; f++) {
        size_t name_len = strlen(fams[f].name);
        family(out, fams[f].name, fams[f].type, fams[f].help);
        for (uint32_t i = 0; i < snap->row_count; i++) {
            const struct metrics_device_row *r = &snap->rows[i];
            uint64_t v = 0;
            switch (f) {
            case 0:
                v = r->sessions_open;
                break;
            case 1:
                v = r->sessions_started;
                break;
            case 2:
                v = r->hello_failures;
                break;
            case 3:
                v = r->ssh_auth_failures;
                break;
            case 4:
                v = r->tls_refused;
                break;
            case 5:
                v = r->rpcs_received;
                break;
            case 6:
                v = r->rpc_errors;
                break;
            case 7:
                v = r->snmp_in_pkts;
                break;
            case 8:
                v = r->notif_sent;
                break;
            default:
                v = r->notif_dropped;
                break;
            }
            row_line(out, fams[f].name, name_len, r->index, v);
        }
    }
    format_ledger_rows(snap, out);
}

void
metrics_format(const struct fleet *fleet, const struct metrics_snapshot *snap, int rows, struct sbuf *out)
{
    static const char *const notif_states[5] = {"emitted", "sent", "send_failures", "dropped", "suppressed"};
    static const char *const trap_states[7] = {"emitted",    "sent",         "send_failures", "dropped",
                                               "suppressed", "acknowledged", "timed_out"};
    static const char *const usm_kinds[7] = {"",
                                             "unsupported_sec_level",
                                             "not_in_time_window",
                                             "unknown_user_name",
                                             "unknown_engine_id",
                                             "wrong_digest",
                                             "decryption_error"};
    static const char *const tls_reasons[TLS_REFUSED_KINDS] = {"no_certificate", "untrusted", "expired",
                                                               "no_name", "protocol"};
    const struct metrics_sums *s = &snap->sums;

    family(out, "fleetsim_info", "gauge", "Always 1; the version is a label.");
    sample(out, "fleetsim_info", "version", FLEETSIM_VERSION, NULL, NULL, 1);
    family(out, "fleetsim_devices", "gauge", "Devices simulated.");
    sample(out, "fleetsim_devices", NULL, NULL, NULL, NULL, fleet->cfg.device_count);
    family(out, "fleetsim_group_devices", "gauge", "Devices of each group of the fleet, with their type.");
    for (uint32_t g = 0; g < fleet->group_count; g++) {
        sample(out, "fleetsim_group_devices", "group", fleet->groups[g].name, "type",
               fleet->groups[g].type->name, fleet->groups[g].cfg.device_count);
    }

    /* NETCONF sessions. */
    family(out, "fleetsim_sessions", "gauge",
           "NETCONF sessions open now (handshake included), by transport.");
    sample(out, "fleetsim_sessions", "transport", "tcp", NULL, NULL,
           s->sessions_open - s->ssh_sessions_open - s->tls_sessions_open);
    sample(out, "fleetsim_sessions", "transport", "ssh", NULL, NULL, s->ssh_sessions_open);
    sample(out, "fleetsim_sessions", "transport", "tls", NULL, NULL, s->tls_sessions_open);
    family(out, "fleetsim_sessions_started_total", "counter", "NETCONF sessions whose hello completed.");
    sample(out, "fleetsim_sessions_started_total", NULL, NULL, NULL, NULL, s->sessions_started);
    family(out, "fleetsim_sessions_dropped_total", "counter",
           "NETCONF sessions that ended without close-session.");
    sample(out, "fleetsim_sessions_dropped_total", NULL, NULL, NULL, NULL, s->sessions_dropped);
    family(
        out, "fleetsim_hello_failures_total", "counter",
        "NETCONF sessions that failed before their hello completed: bad hellos, SSH handshakes, timeouts.");
    sample(out, "fleetsim_hello_failures_total", NULL, NULL, NULL, NULL, s->hello_failures);
    family(out, "fleetsim_ssh_auth_failures_total", "counter", "SSH authentications refused.");
    sample(out, "fleetsim_ssh_auth_failures_total", NULL, NULL, NULL, NULL, s->ssh_auth_failures);
    family(out, "fleetsim_tls_handshake_failures_total", "counter",
           "TLS handshakes refused, by reason: no client certificate, one of another CA, one out of its "
           "validity, one no cert-to-name entry maps, or a protocol failure.");
    for (int k = 0; k < TLS_REFUSED_KINDS; k++) {
        sample(out, "fleetsim_tls_handshake_failures_total", "reason", tls_reasons[k], NULL, NULL,
               s->tls_refused[k]);
    }
    family(out, "fleetsim_connections_refused_total", "counter",
           "Connections closed as soon as they were accepted, by reason: the process was out of file "
           "descriptors, or the address dialled is outside the fleet.");
    sample(out, "fleetsim_connections_refused_total", "reason", "descriptors", NULL, NULL,
           s->connections_refused[LISTEN_REFUSED_NO_FD]);
    sample(out, "fleetsim_connections_refused_total", "reason", "address", NULL, NULL,
           s->connections_refused[LISTEN_REFUSED_NOT_FLEET]);

    /* NETCONF RPCs. */
    family(out, "fleetsim_netconf_rpcs_received_total", "counter",
           "NETCONF rpc messages received, valid or not (netconf-state in-rpcs plus in-bad-rpcs).");
    sample(out, "fleetsim_netconf_rpcs_received_total", NULL, NULL, NULL, NULL, s->rpcs_received);
    family(out, "fleetsim_netconf_rpcs_total", "counter",
           "NETCONF rpc-replies by operation and result (error: the reply carries rpc-error).");
    for (unsigned op = 0; op < METRICS_RPC_OPS; op++) {
        sample(out, "fleetsim_netconf_rpcs_total", "operation", metrics_rpc_op_name(op), "result", "ok",
               s->by_op.rpcs[op][0]);
        sample(out, "fleetsim_netconf_rpcs_total", "operation", metrics_rpc_op_name(op), "result", "error",
               s->by_op.rpcs[op][1]);
    }

    /* SNMP. */
    family(out, "fleetsim_snmp_packets_total", "counter",
           "SNMP datagrams received (in) and responses sent (out).");
    sample(out, "fleetsim_snmp_packets_total", "direction", "in", NULL, NULL, s->snmp_in_pkts);
    sample(out, "fleetsim_snmp_packets_total", "direction", "out", NULL, NULL, s->snmp_out_pkts);
    family(out, "fleetsim_snmp_requests_total", "counter",
           "SNMP requests answered, by PDU type and result (error: a non-zero error-status).");
    for (unsigned t = 0; t < METRICS_SNMP_TYPES; t++) {
        sample(out, "fleetsim_snmp_requests_total", "type", snmp_types[t], "result", "ok",
               s->by_op.snmp[t][0]);
        sample(out, "fleetsim_snmp_requests_total", "type", snmp_types[t], "result", "error",
               s->by_op.snmp[t][1]);
    }
    family(out, "fleetsim_snmp_too_big_total", "counter", "SNMP responses with error-status tooBig.");
    sample(out, "fleetsim_snmp_too_big_total", NULL, NULL, NULL, NULL, s->snmp_too_big);
    family(out, "fleetsim_snmp_dropped_total", "counter", "SNMP datagrams left unanswered, by reason.");
    sample(out, "fleetsim_snmp_dropped_total", "reason", "bad_version", NULL, NULL, s->snmp_bad_versions);
    sample(out, "fleetsim_snmp_dropped_total", "reason", "parse_error", NULL, NULL, s->snmp_parse_errors);
    sample(out, "fleetsim_snmp_dropped_total", "reason", "bad_community", NULL, NULL,
           s->snmp_bad_communities);
    sample(out, "fleetsim_snmp_dropped_total", "reason", "not_a_request", NULL, NULL, s->snmp_silent_drops);
    sample(out, "fleetsim_snmp_dropped_total", "reason", "injected", NULL, NULL, s->snmp_injected_drops);
    family(out, "fleetsim_snmp_usm_reports_total", "counter",
           "SNMPv3 messages refused by USM, by usmStats counter.");
    for (int k = 1; k < 7; k++) {
        sample(out, "fleetsim_snmp_usm_reports_total", "kind", usm_kinds[k], NULL, NULL, s->snmp_usm[k]);
    }
    /* Answered (noAccess), so not under dropped: a poller sees these as errors, not as timeouts. */
    family(out, "fleetsim_snmp_sets_denied_total", "counter",
           "SNMP SETs answered noAccess (v1: noSuchName) without write access, by reason.");
    sample(out, "fleetsim_snmp_sets_denied_total", "reason", "read_community", NULL, NULL, s->snmp_bad_uses);
    sample(out, "fleetsim_snmp_sets_denied_total", "reason", "read_only_user", NULL, NULL,
           s->snmp_denied_v3_sets);
    family(out, "fleetsim_snmp_auth_failures_total", "counter",
           "SNMP authentication and authorization failures: unknown community, SET with the read community, "
           "unknown SNMPv3 user, wrong digest, SET by an SNMPv3 user without write access.");
    sample(out, "fleetsim_snmp_auth_failures_total", NULL, NULL, NULL, NULL,
           s->snmp_bad_communities + s->snmp_bad_uses + s->snmp_denied_v3_sets + s->snmp_usm[3] +
               s->snmp_usm[5]);

    /* Notifications and traps. */
    family(out, "fleetsim_notifications_total", "counter",
           "NETCONF notifications by state, summed over subscribers (as in the --report file).");
    for (int k = 0; k < 5; k++) {
        sample(out, "fleetsim_notifications_total", "state", notif_states[k], NULL, NULL, s->notif[k]);
    }
    family(out, "fleetsim_traps_total", "counter", "SNMP traps and informs by state, over all trap sinks.");
    for (int k = 0; k < 7; k++) {
        sample(out, "fleetsim_traps_total", "state", trap_states[k], NULL, NULL, s->traps[k]);
    }
    family(out, "fleetsim_trap_retries_total", "counter", "Inform retransmissions.");
    sample(out, "fleetsim_trap_retries_total", NULL, NULL, NULL, NULL, s->traps[7]);

    /* YANG-Push subscriptions (yp_rows.h): what the report's per-subscription rows hold, summed. */
    family(out, "fleetsim_yang_push_subscriptions", "gauge",
           "Dynamic subscriptions (RFC 8639) now, by kind.");
    sample(out, "fleetsim_yang_push_subscriptions", "kind", "stream", NULL, NULL,
           s->yang_push[YP_SUM_ACTIVE_STREAM]);
    sample(out, "fleetsim_yang_push_subscriptions", "kind", "periodic", NULL, NULL,
           s->yang_push[YP_SUM_ACTIVE_PERIODIC]);
    sample(out, "fleetsim_yang_push_subscriptions", "kind", "on-change", NULL, NULL,
           s->yang_push[YP_SUM_ACTIVE_ON_CHANGE]);
    family(out, "fleetsim_yang_push_notifications_total", "counter",
           "Notifications queued to dynamic subscriptions by type, ended subscriptions included.");
    sample(out, "fleetsim_yang_push_notifications_total", "type", "push-update", NULL, NULL,
           s->yang_push[YP_SUM_UPDATES]);
    sample(out, "fleetsim_yang_push_notifications_total", "type", "push-change-update", NULL, NULL,
           s->yang_push[YP_SUM_CHANGE_UPDATES]);
    sample(out, "fleetsim_yang_push_notifications_total", "type", "event", NULL, NULL,
           s->yang_push[YP_SUM_EVENTS]);
    family(out, "fleetsim_yang_push_missed_slots_total", "counter",
           "Periodic slots skipped (suspended, or the worker fell a period behind).");
    sample(out, "fleetsim_yang_push_missed_slots_total", NULL, NULL, NULL, NULL,
           s->yang_push[YP_SUM_MISSED_SLOTS]);
    family(out, "fleetsim_yang_push_suspensions_total", "counter",
           "Subscriptions suspended because their session's output backed up (insufficient-resources).");
    sample(out, "fleetsim_yang_push_suspensions_total", NULL, NULL, NULL, NULL,
           s->yang_push[YP_SUM_SUSPENSIONS]);

    /* The push ledger (ledger.h): syslog and traps (whose family above stays for existing dashboards);
     * notifications keep theirs until they move onto it. */
    {
        static const char *const ledger_states[8] = {
            "emitted", "sent", "in_window", "drain", "send_failures", "dropped", "suppressed_pre_window",
            "queued"};
        family(out, "fleetsim_push_messages_total", "counter",
               "Push messages by channel and ledger state, over every device and sink (sent = in_window + "
               "drain; queued is a gauge).");
        for (int k = 0; k < 8; k++) {
            sample(out, "fleetsim_push_messages_total", "channel", "syslog", "state", ledger_states[k],
                   s->syslog[k]);
        }
        for (int k = 0; k < 8; k++) {
            sample(out, "fleetsim_push_messages_total", "channel", "trap", "state", ledger_states[k],
                   s->trap_ledger[k]);
        }
        for (int k = 0; k < 8; k++) {
            sample(out, "fleetsim_push_messages_total", "channel", "netconf", "state", ledger_states[k],
                   s->netconf[k]);
        }
        /* Per sink: the ledger's series (every device sending to it), so a loss can be placed. */
        family(
            out, "fleetsim_push_sink_messages_total", "counter",
            "Push messages by channel, sink and ledger state, over every device (sent = in_window + drain).");
        for (uint32_t k = 1; k <= ledger_book_series(); k++) {
            uint64_t c[LEDGER_STATES];
            enum ledger_channel ch;
            const char *sink = ledger_series_sink((uint16_t)k, &ch);
            ledger_book_counts((uint16_t)k, UINT32_MAX, c);
            for (int st = 0; st < LEDGER_STATES; st++) {
                sink_sample(out, ledger_channel_name(ch), sink, ledger_state_name((enum ledger_state)st),
                            c[st]);
            }
            sink_sample(out, ledger_channel_name(ch), sink, "sent",
                        c[LEDGER_ST_IN_WINDOW] + c[LEDGER_ST_DRAIN]);
        }
        family(out, "fleetsim_syslog_sink_connects_total", "counter",
               "TCP and TLS syslog connections made (the first and every reconnect).");
        sample(out, "fleetsim_syslog_sink_connects_total", NULL, NULL, NULL, NULL, s->syslog_sinks[0]);
        family(out, "fleetsim_syslog_sink_disconnects_total", "counter",
               "TCP and TLS syslog connections lost.");
        sample(out, "fleetsim_syslog_sink_disconnects_total", NULL, NULL, NULL, NULL, s->syslog_sinks[1]);
        family(out, "fleetsim_syslog_sinks_up", "gauge",
               "Syslog sinks connected now (UDP sinks always are), of "
               "fleetsim_syslog_sinks.");
        sample(out, "fleetsim_syslog_sinks_up", NULL, NULL, NULL, NULL, s->syslog_sinks[2]);
        family(out, "fleetsim_syslog_sinks", "gauge",
               "Syslog sinks: one per worker, group and --syslog-sink.");
        sample(out, "fleetsim_syslog_sinks", NULL, NULL, NULL, NULL, s->syslog_sinks[3]);
    }

    /* The control API's actions (one per request, whatever the number of devices). */
    family(out, "fleetsim_actions_total", "counter", "Control API actions carried out, by action.");
    {
        uint64_t totals[DEVACT_KINDS] = {0};
        if (fleet->actions) {
            action_log_totals(fleet->actions, totals);
        }
        for (int k = 0; k < DEVACT_KINDS; k++) {
            sample(out, "fleetsim_actions_total", "action", action_log_kind_name((enum devact_kind)k), NULL,
                   NULL, totals[k]);
        }
        family(out, "fleetsim_scenario_actions_total", "counter",
               "Of those, the ones a --scenario event carried out, by action.");
        if (fleet->actions) {
            action_log_totals_of_scenario(fleet->actions, totals);
        }
        for (int k = 0; k < DEVACT_KINDS; k++) {
            sample(out, "fleetsim_scenario_actions_total", "action",
                   action_log_kind_name((enum devact_kind)k), NULL, NULL, fleet->actions ? totals[k] : 0);
        }
    }
    family(out, "fleetsim_devices_present", "gauge",
           "Devices in the fleet now, by group (a scenario's start and grow and shrink change it).");
    for (uint32_t g = 0; g < fleet->group_count; g++) {
        sample(out, "fleetsim_devices_present", "group", fleet->groups[g].name, NULL, NULL,
               fact_group_present(fleet, g));
    }

    if (rows) {
        format_device_info(fleet, snap, out);
        format_rows(snap, out);
    }
}

/* ------------------------------------------------------------------ HTTP */

static enum MHD_Result
reply(struct MHD_Connection *conn, unsigned status, const char *type, char *body, size_t len)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    enum MHD_Result rc;

    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED) {
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    }
    rc = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result
reply_text(struct MHD_Connection *conn, unsigned status, const char *text)
{
    char *body = strdup(text);
    return body ? reply(conn, status, "text/plain; charset=utf-8", body, strlen(body)) : MHD_NO;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method, const char *version,
           const char *upload_data, size_t *upload_data_size, void **req_cls)
{
    struct metrics_server *srv = cls;
    struct metrics_snapshot snap;
    struct sbuf out = {0};
    char *body;
    size_t len = 0;
    int per_device = srv->fleet->cfg.metrics_per_device;

    (void)version;
    if (!strncmp(url, "/api/", 5)) {
        return capi_handle(srv->fleet, srv->api_token, conn, url, method, upload_data, upload_data_size,
                           req_cls);
    }
    if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD)) {
        *upload_data_size = 0; /* a body, if any, is not read */
        return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
    }
    if (strcmp(url, "/metrics")) {
        int handled = 0;
        enum MHD_Result rc = live_handle(srv->live, conn, url, &handled);
        return handled ? rc
                       : reply_text(conn, MHD_HTTP_NOT_FOUND,
                                    "not found: the metrics are at /metrics, the live page at /, its data at "
                                    "/live.json, the control API under /api/v1/\n");
    }
    if (metrics_gather(srv->fleet, per_device, &snap)) {
        return reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "the workers did not answer in time\n");
    }
    sbuf_reserve(&out, 8192 + (size_t)snap.row_count * 9 * 64);
    metrics_format(srv->fleet, &snap, per_device, &out);
    metrics_snapshot_clear(&snap);
    if (!(body = sbuf_take(&out, &len))) {
        return reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    }
    return reply(conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", body, len);
}

/* The control API's request state (the metrics' requests keep none). */
static void
on_completed(void *cls, struct MHD_Connection *conn, void **req_cls, enum MHD_RequestTerminationCode code)
{
    (void)cls;
    (void)conn;
    (void)code;
    capi_request_done(*req_cls);
    *req_cls = NULL;
}

/* "PORT", ":PORT" (both on 127.0.0.1), "ADDR:PORT" or "[IPV6]:PORT" into @p ep; @return 0 or -1. */
static int
parse_addr(const char *text, struct net_endpoint *ep)
{
    char full[METRICS_ADDR_MAX + 16], why[160];

    if (text[0] == ':' || !strchr(text, ':')) {
        if (strlen(text) > 6) {
            return -1;
        }
        snprintf(full, sizeof full, "127.0.0.1%s%s", text[0] == ':' ? "" : ":", text);
        text = full;
    }
    return netaddr_endpoint_parse(text, 0, ep, why, sizeof why);
}

int
metrics_start(struct fleet *fleet, char *err, size_t err_len)
{
    const char *text = fleet->cfg.metrics_addr;
    struct metrics_server *srv = NULL;
    struct net_endpoint sa;
    char shown[NETADDR_TEXT_BYTES], host[NETADDR_TEXT_BYTES];
    int fd = -1, one = 1;

    if (!text) {
        return 0;
    }
    if (parse_addr(text, &sa)) {
        snprintf(err, err_len,
                 "--metrics \"%s\": expected PORT, :PORT or ADDR:PORT (an IPv6 ADDR in brackets: "
                 "[::1]:9464), with PORT from 1 to 65535",
                 text);
        return -1;
    }
    netaddr_endpoint_text(&sa, 0, shown, sizeof shown);
    snprintf(host, sizeof host, sa.sa.ss_family == AF_INET6 ? "[%s]" : "%s", shown);
    /* Our own socket, so that a port in use is reported as such (libmicrohttpd only says it failed). */
    if ((fd = socket(sa.sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
        (sa.sa.ss_family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one)) ||
        bind(fd, (struct sockaddr *)&sa.sa, sa.len) || listen(fd, 64)) {
        snprintf(err, err_len, "--metrics %s: cannot serve on %s port %u: %s", text, shown,
                 (unsigned)netaddr_endpoint_port(&sa), strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    if (!(srv = calloc(1, sizeof *srv))) {
        close(fd);
        snprintf(err, err_len, "--metrics: out of memory");
        return -1;
    }
    srv->fleet = fleet;
    if (fleet->cfg.api_token_file &&
        !(srv->api_token = capi_read_token(fleet->cfg.api_token_file, err, err_len))) {
        free(srv);
        close(fd);
        return -1;
    }
    if (!(srv->live = live_start(fleet))) {
        free(srv->api_token);
        free(srv);
        close(fd);
        snprintf(err, err_len, "--metrics: cannot start the live view's sampler (out of memory or threads)");
        return -1;
    }
    /* epoll, not select: with thousands of device sockets this descriptor is far above FD_SETSIZE. */
    srv->daemon = MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD, 0, NULL, NULL, on_request, srv,
                                   MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_LIMIT,
                                   (unsigned)METRICS_MAX_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT,
                                   (unsigned)METRICS_CONNECTION_TIMEOUT_S, MHD_OPTION_NOTIFY_COMPLETED,
                                   on_completed, NULL, MHD_OPTION_END);
    if (!srv->daemon) {
        live_free(srv->live);
        free(srv->api_token);
        free(srv); /* the socket stays open: whether libmicrohttpd closed it on failure is not documented */
        snprintf(err, err_len, "--metrics %s: cannot start the HTTP server", text);
        return -1;
    }
    fleet->metrics = srv;
    log_info("metrics at http://%s:%u/metrics%s, live page at /, control API at /api/v1/%s", host,
             (unsigned)netaddr_endpoint_port(&sa),
             fleet->cfg.metrics_per_device ? " (with per-device series)" : "",
             srv->api_token ? " (bearer token)" : "");
    return 0;
}

void
metrics_stop(struct fleet *fleet)
{
    struct metrics_server *srv = fleet->metrics;

    if (!srv) {
        return;
    }
    /* Before the workers stop: a scrape in progress still gets its snapshots. MHD closes the socket. */
    MHD_stop_daemon(srv->daemon);
    live_free(srv->live); /* after the HTTP thread: it queues the page's response */
    free(srv->api_token);
    free(srv);
    fleet->metrics = NULL;
}
