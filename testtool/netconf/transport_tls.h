/*
 * NETCONF over TLS (RFC 7589): the session's socket under OpenSSL, with
 * client certificates required and verified against the fleet's CA, the
 * username from cert-to-name. The session reaches it only through its ops
 * table (transport_tls, transport.h); this header has the fleet's side: the
 * one SSL_CTX every worker shares.
 */
#ifndef FLEET_TRANSPORT_TLS_H
#define FLEET_TRANSPORT_TLS_H

#include <stddef.h>

#include "err.h"

struct fleet;

/** @brief When a group speaks TLS: the certificates (tls_ca.h), cert-to-name, the shared SSL_CTX. */
enum fleet_err tls_fleet_init(struct fleet *fleet, char *err, size_t err_len);

/** @brief Free what tls_fleet_init() made. */
void tls_fleet_close(struct fleet *fleet);

#endif
