/*
 * Syslog sinks: where a worker's devices send their lines. Each transport
 * is a file behind one small ops table (syslog_sink_internal.h), as the
 * NETCONF transports are: UDP (syslog_sink_udp.c) batches datagrams with
 * sendmmsg from each device's own address; TCP and TLS
 * (syslog_sink_stream.c) keep one connection per worker and sink, with a
 * bounded queue, reconnect with backoff, and the RFC 6587 frames.
 *
 * Every message handed to a sink is counted on the caller's ledger row
 * (ledger.h) now (emitted, queued) and gets exactly one outcome later:
 * sent when the kernel took its last byte, send_failures when the kernel
 * refused it or its connection broke while it was being written (or the
 * sink was closed before it could go), dropped when the queue was full.
 * Rows must stay valid until syslog_sink_free() returns.
 */
#ifndef FLEET_SYSLOG_SINK_H
#define FLEET_SYSLOG_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "ledger.h"
#include "netaddr.h"
#include "plan.h"
#include "syslog_msg.h"

struct loop;
struct syslog_sink;
struct ssl_ctx_st;

/* The syslog ports when a sink names none: 514 for UDP (RFC 5426) and TCP (custom), 6514 for TLS (RFC 5425).
 */
#define SYSLOG_DEFAULT_PORT     514
#define SYSLOG_DEFAULT_TLS_PORT 6514
/* Messages a TCP or TLS sink holds while its collector is slow or away; more are dropped (counted). */
#define SYSLOG_STREAM_QUEUE_MSGS 16384u
/* Reconnect backoff of a TCP or TLS sink: the first wait, doubled after each failure up to the most. */
#define SYSLOG_BACKOFF_MIN_MS 100u
#define SYSLOG_BACKOFF_MAX_MS 5000u

/* How a sink behaves; fixed for its life. */
struct syslog_sink_config {
    struct syslog_sink_spec spec; /* where to */
    enum syslog_framing framing;  /* TCP: octet counting or LF (TLS: always octet counting) */
    struct net_family fam;        /* the devices' family: the UDP source address is theirs when it matches */
    struct ssl_ctx_st *tls_ctx;   /* TLS: the client context (CA, client certificate), borrowed; else NULL */
    uint32_t queue_msgs;          /* TCP, TLS: most messages waiting; 0: SYSLOG_STREAM_QUEUE_MSGS */
};

/* A sink's own counts, beside the per-device ledger rows. */
struct syslog_sink_stats {
    uint64_t connects;         /* TCP, TLS: connections (and handshakes) completed */
    uint64_t connect_failures; /* TCP, TLS: attempts that failed (refused, reset, handshake refused) */
    uint64_t disconnects;      /* TCP, TLS: established connections lost */
    uint64_t batches;          /* UDP: sendmmsg calls; TCP, TLS: writes */
    uint32_t queued;           /* gauge: messages waiting */
    int up;                    /* TCP, TLS: 1 while connected (UDP: always 1) */
};

/**
 * @brief Parse "udp://HOST:PORT", "tcp://HOST:PORT" or "tls://HOST:PORT" (HOST an IPv4 address or an IPv6
 * address in brackets; the port may be left out: 514, TLS 6514).
 * @param[out] err Why the text was refused, naming it.
 * @return FLEET_OK or FLEET_ERR_INVAL.
 */
enum fleet_err syslog_sink_parse(const char *text, struct syslog_sink_spec *out, char *err, size_t err_len);

/** @brief Print @p spec as "udp://192.0.2.1:514" or "tcp://[::1]:514" into @p buf. @return @p buf. */
char *syslog_sink_format(const struct syslog_sink_spec *spec, char *buf, size_t buf_len);

/**
 * @brief Create a sink on @p loop (TCP, TLS: it starts connecting at once).
 * @param[in] cfg Copied.
 * @param[out] out The sink, NULL on failure.
 * @return FLEET_OK, FLEET_ERR_SYS (a socket could not be made) or FLEET_ERR_NOMEM. Call on the loop's thread
 * or before it runs; the sink is used only there.
 */
enum fleet_err syslog_sink_new(struct loop *loop, const struct syslog_sink_config *cfg,
                               struct syslog_sink **out, char *err, size_t err_len);

/**
 * @brief Hand one rendered message (without its frame) to the sink; it goes out with the next batch.
 * @param[in] src_low The device's address (low 32 bits of cfg.fam): the UDP source.
 * @param[in,out] row Counted now (emitted, queued or dropped) and at the outcome.
 */
void syslog_sink_send(struct syslog_sink *s, uint32_t src_low, const char *msg, size_t len,
                      struct ledger_row *row);

/** @brief Write what waits now, as far as the socket takes it (the sink does it itself next iteration). */
void syslog_sink_flush(struct syslog_sink *s);

/**
 * @brief Flush what the socket takes, count every message still waiting as a send failure, close, free.
 * Accepts NULL.
 */
void syslog_sink_free(struct syslog_sink *s);

/** @return The sink's own counts. */
const struct syslog_sink_stats *syslog_sink_stats(const struct syslog_sink *s);

/** @return The sink's spec. */
const struct syslog_sink_spec *syslog_sink_spec_of(const struct syslog_sink *s);

#endif
