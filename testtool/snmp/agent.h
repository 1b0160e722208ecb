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
#include "plan.h"

struct fleet;
struct worker;

/* Datagrams read (and answers sent) per system call under load. */
#define AGENT_BATCH 32
/* Largest request read; longer datagrams are counted as parse errors. */
#define AGENT_MAX_REQUEST_BYTES 8192
/* Receive queue asked for a worker's shared socket (address per device) and a device's own socket. */
#define AGENT_SHARED_RCVBUF_BYTES (8 * 1024 * 1024)
#define AGENT_DEVICE_RCVBUF_BYTES (256 * 1024)
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
