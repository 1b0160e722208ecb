/*
 * Sink specs and the dispatch to a transport's ops (see syslog_sink.h).
 */
#include "syslog_sink.h"
#include "syslog_sink_internal.h"

#include <stdio.h>
#include <string.h>

static const struct syslog_sink_ops *const ss_transports[] = {
    [SYSLOG_PROTO_UDP] = &syslog_sink_udp_ops,
    [SYSLOG_PROTO_TCP] = &syslog_sink_tcp_ops,
    [SYSLOG_PROTO_TLS] = &syslog_sink_tls_ops,
};

enum fleet_err
syslog_sink_parse(const char *text, struct syslog_sink_spec *out, char *err, size_t err_len)
{
    const char *sep = strstr(text, "://");
    char why[160];

    memset(out, 0, sizeof *out);
    for (unsigned p = 0; sep && p < sizeof ss_transports / sizeof ss_transports[0]; p++) {
        const char *scheme = ss_transports[p]->scheme;
        if ((size_t)(sep - text) == strlen(scheme) && !strncmp(text, scheme, strlen(scheme))) {
            out->proto = (uint8_t)p;
            if (netaddr_endpoint_parse(sep + 3,
                                       p == SYSLOG_PROTO_TLS ? SYSLOG_DEFAULT_TLS_PORT : SYSLOG_DEFAULT_PORT,
                                       &out->ep, why, sizeof why)) {
                snprintf(err, err_len, "syslog sink \"%s\": %s", text, why);
                return FLEET_ERR_INVAL;
            }
            return FLEET_OK;
        }
    }
    snprintf(err, err_len, "syslog sink \"%s\" must be udp://HOST:PORT, tcp://HOST:PORT or tls://HOST:PORT",
             text);
    return FLEET_ERR_INVAL;
}

char *
syslog_sink_format(const struct syslog_sink_spec *spec, char *buf, size_t buf_len)
{
    char ep[NETADDR_TEXT_BYTES];

    snprintf(buf, buf_len, "%s://%s", ss_transports[spec->proto % 3]->scheme,
             netaddr_endpoint_text(&spec->ep, 1, ep, sizeof ep));
    return buf;
}

enum fleet_err
syslog_sink_new(struct loop *loop, const struct syslog_sink_config *cfg, struct syslog_sink **out, char *err,
                size_t err_len)
{
    *out = NULL;
    if (cfg->spec.proto >= sizeof ss_transports / sizeof ss_transports[0]) {
        snprintf(err, err_len, "unknown syslog transport %u", (unsigned)cfg->spec.proto);
        return FLEET_ERR_INVAL;
    }
    return ss_transports[cfg->spec.proto]->open(loop, cfg, out, err, err_len);
}

void
syslog_sink_send(struct syslog_sink *s, uint32_t src_low, const char *msg, size_t len, struct ledger_row *row)
{
    s->ops->send(s, src_low, msg, len, row);
}

void
syslog_sink_flush(struct syslog_sink *s)
{
    s->ops->flush(s);
}

void
syslog_sink_free(struct syslog_sink *s)
{
    if (s) {
        s->ops->close(s);
    }
}

const struct syslog_sink_stats *
syslog_sink_stats(const struct syslog_sink *s)
{
    return &s->stats;
}

const struct syslog_sink_spec *
syslog_sink_spec_of(const struct syslog_sink *s)
{
    return &s->cfg.spec;
}
