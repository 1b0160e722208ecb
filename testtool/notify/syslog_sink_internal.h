/*
 * The syslog sinks' ops table, after Redis's src/connection.h: one entry
 * per transport, implemented in its own file; syslog_sink.c picks the entry
 * by the spec's protocol and calls nothing else of a transport.
 */
#ifndef FLEET_SYSLOG_SINK_INTERNAL_H
#define FLEET_SYSLOG_SINK_INTERNAL_H

#include "syslog_sink.h"

struct syslog_sink_ops {
    const char *scheme; /* "udp", "tcp", "tls" */
    /* Make the transport's sink (its struct begins with struct syslog_sink), set up its base. */
    enum fleet_err (*open)(struct loop *loop, const struct syslog_sink_config *cfg, struct syslog_sink **out,
                           char *err, size_t err_len);
    void (*send)(struct syslog_sink *s, uint32_t src_low, const char *msg, size_t len,
                 struct ledger_row *row);
    void (*flush)(struct syslog_sink *s);
    void (*close)(struct syslog_sink *s); /* as syslog_sink_free(), s not NULL */
};

/* What every transport's sink begins with. */
struct syslog_sink {
    const struct syslog_sink_ops *ops; /* its transport */
    struct loop *loop;                 /* the worker loop it runs on */
    struct syslog_sink_config cfg;     /* copied at creation */
    struct syslog_sink_stats stats;    /* its own counts */
};

extern const struct syslog_sink_ops syslog_sink_udp_ops;
extern const struct syslog_sink_ops syslog_sink_tcp_ops;
extern const struct syslog_sink_ops syslog_sink_tls_ops;

#endif
