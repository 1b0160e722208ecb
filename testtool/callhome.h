/*
 * NETCONF call home (RFC 8071): devices of a group with --call-home dial
 * out to the manager instead of listening, and on the connection they
 * made they are the server exactly as on an accepted one (SSH host key,
 * authentication, the netconf subsystem, the hello; over plain TCP the
 * hello at once, a fleetsim extension for tests). A refused or lost
 * connection is dialled again after a backoff with jitter; a token bucket
 * per worker bounds the dial-outs per second (--call-home-rate).
 */
#ifndef FLEET_CALLHOME_H
#define FLEET_CALLHOME_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"

/* The manager's port when --call-home names none (RFC 8071's netconf-ch-ssh; netconf-ch-tls is 4335). */
#define CALLHOME_DEFAULT_PORT 4334
/* RFC 8071's port for NETCONF over TLS. */
#define CALLHOME_DEFAULT_TLS_PORT 4335
/* First retry delay; each further failure doubles it, up to CALLHOME_BACKOFF_MAX_MS. */
#define CALLHOME_BACKOFF_START_MS 1000u
/* Longest retry delay. */
#define CALLHOME_BACKOFF_MAX_MS 60000u
/* Dials one worker starts per pass of its loop when the rate is unbounded (the loop stays responsive). */
#define CALLHOME_DIALS_PER_PASS 256u

/**
 * @brief Parse "A.B.C.D[:PORT]", "IPV6" or "[IPV6]:PORT" (CALLHOME_DEFAULT_PORT without a port).
 * @param[out] addr The manager's address and port. @param[out] port Its port, never 0.
 * @return 0, or -1 with a one-line message in @p err.
 */
int callhome_parse(const char *text, struct net_endpoint *addr, uint32_t *port, char *err, size_t err_len);

/**
 * @brief The retry delay after @p failures failed dials or lost connections in a row (1 or more): a draw
 * from [d/2, d] with d = min(CALLHOME_BACKOFF_MAX_MS, CALLHOME_BACKOFF_START_MS * 2^(failures-1)).
 * @param draw Any 64 bits (a hash of the device's seed and the failure count): the same draw, the same delay.
 */
uint32_t callhome_backoff_ms(uint32_t failures, uint64_t draw);

/**
 * @brief Set up call home for the groups that ask for it (nothing otherwise). Before the workers start.
 */
enum fleet_err callhome_init(struct fleet *fleet, char *err, size_t err_len);

/** @brief Queue every calling device's first dial on its worker (before the worker threads start). */
void callhome_start_all(struct fleet *fleet);

/** @brief A device that was down (control API) is up: if it calls home, it dials now. Its worker's. */
void callhome_device_up(struct device *dev);

/**
 * @brief After the workers stopped: close dials in progress, stop the timers and free the state. Sessions
 * that close afterwards are not dialled again. Accepts a fleet without call home.
 */
void callhome_close_all(struct fleet *fleet);

#endif
