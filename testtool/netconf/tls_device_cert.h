/*
 * Every device its own TLS server certificate (--tls-cert-per-device, and
 * with --ip-per-device, where one certificate cannot name every address):
 * CN the device's host name, subjectAltName its address, signed by the
 * fleet's CA. A device's certificate is made on its first handshake (the
 * SSL_CTX's certificate callback, on the device's worker) and kept in
 * memory; its P-256 key derives from the fleet's secret (key_p256.h), so
 * a restart gives the device the same key.
 */
#ifndef FLEET_TLS_DEVICE_CERT_H
#define FLEET_TLS_DEVICE_CERT_H

#include <stddef.h>

#include "err.h"

struct fleet;

/** @brief When any device presents its own certificate: the CA and secret, the callback on fleet->tls_ctx. */
enum fleet_err tls_devcert_init(struct fleet *fleet, char *err, size_t err_len);

/** @brief Free the devices' certificates and what tls_devcert_init() loaded. */
void tls_devcert_close(struct fleet *fleet);

#endif
