/*
 * --metrics: Prometheus text format over HTTP (libmicrohttpd), gathered
 * from the workers through their inboxes, and --status-interval's one-line
 * status on stderr.
 */
#ifndef FLEET_METRICS_H
#define FLEET_METRICS_H

#include <stddef.h>

struct fleet;

/* Starts the HTTP server when cfg.metrics_addr is set. @return 0, or -1 with a message in @p err. */
int metrics_start(struct fleet *fleet, char *err, size_t err_len);
/* Stops the HTTP server, if any. */
void metrics_stop(struct fleet *fleet);

#endif
