/*
 * The SNMP agents' sockets. Port per device: one UDP socket per device on
 * its worker. Address per device: one socket per worker on the shared port
 * (SO_REUSEPORT, with a classic BPF program that steers each datagram to the
 * socket of the worker owning the address it was sent to), IP_PKTINFO to
 * learn that address and to answer from it. Requests are read and answers
 * sent in batches (recvmmsg, sendmmsg); injected latency holds an answer on
 * a loop timer, never blocking anyone else.
 */
#ifndef FLEET_AGENT_H
#define FLEET_AGENT_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct fleet;
struct worker;

/* Datagrams read (and answers sent) per system call under load. */
#define AGENT_BATCH 32
/* Largest request read; longer datagrams are counted as parse errors. */
#define AGENT_MAX_REQUEST_BYTES 8192
/* Receive queue asked for a worker's shared socket (address per device) and a device's own socket. */
#define AGENT_SHARED_RCVBUF_BYTES (8 * 1024 * 1024)
#define AGENT_DEVICE_RCVBUF_BYTES (256 * 1024)
/* Most injected faults (--snmp-fault) one fleet takes. */
#define AGENT_MAX_FAULTS 8

enum agent_fault_kind {
    AGENT_FAULT_TIMEOUT, /* never answer */
    AGENT_FAULT_DELAY,   /* answer after a fixed delay */
    AGENT_FAULT_ERROR,   /* answer with an error-status */
};

struct agent_fault {
    double share;      /* share of devices affected (0..1) */
    int kind;          /* enum agent_fault_kind */
    uint32_t delay_ms; /* AGENT_FAULT_DELAY: the delay */
    int error_status;  /* AGENT_FAULT_ERROR: the error-status */
};

/* A worker's SNMP state: its shared socket, batch buffers and delayed answers. */
struct agent_worker {
    int fd;                          /* shared-port socket with ip_per_device, else -1 */
    uint8_t *in_bufs;                /* AGENT_BATCH request buffers */
    uint8_t *out_bufs;               /* AGENT_BATCH response buffers */
    size_t out_cap;                  /* size of each response buffer */
    struct respond_scratch *scratch; /* lent to request processing */
    struct agent_delayed *delayed;   /* answers waiting on a timer (list) */
    uint64_t reply_seq;              /* answers computed; drives latency and drop draws */
};

/**
 * @brief Open every device's SNMP socket (or each worker's) and watch it.
 * @param[out] err Names the address and port that failed, and why.
 */
enum fleet_err agent_open_all(struct fleet *fleet, char *err, size_t err_len);

/** @brief Close the sockets and drop answers still waiting. Call after the workers stopped. */
void agent_close_all(struct fleet *fleet);

/**
 * @brief Parse a fault specification "SHARE:timeout", "SHARE:delay:DURATION" or "SHARE:error:STATUS"
 * (STATUS a name such as genErr or a number). @return FLEET_OK or FLEET_ERR_INVAL with @p err set.
 */
enum fleet_err agent_fault_parse(const char *text, struct agent_fault *fault, char *err, size_t err_len);

/**
 * @brief Parse a latency "50ms", "1s", "50-100ms" or "0.05-0.1s" into a range in milliseconds.
 * @return FLEET_OK or FLEET_ERR_INVAL.
 */
enum fleet_err agent_latency_parse(const char *text, uint32_t *min_ms, uint32_t *max_ms);

#endif
