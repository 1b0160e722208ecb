/*
 * The fleet's certificate authority for NETCONF over TLS (RFC 7589): a
 * self-signed CA and a server certificate signed by it, created once in the
 * state folder (tls/) and reused, and client certificates issued on demand
 * (--issue-client-cert). Keys are ECDSA P-256: a handshake costs little CPU.
 */
#ifndef FLEET_TLS_CA_H
#define FLEET_TLS_CA_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct fleet_config;
struct net_family;
struct x509_st;
struct evp_pkey_st;

/* Where the server's certificate, key and trusted CA are. */
struct tls_ca_paths {
    char cert[600]; /* server certificate (PEM, maybe a chain) */
    char key[600];  /* its private key */
    char ca[600];   /* the CA client certificates must chain to */
};

/**
 * @brief The server's files: --tls-cert/--tls-key/--tls-ca as given, else the state folder's (the CA and a
 * server certificate for localhost, 127.0.0.1, ::1 and --ip, created when missing).
 */
enum fleet_err tls_ca_server_paths(const struct fleet_config *cfg, struct tls_ca_paths *out, char *err,
                                   size_t err_len);

/**
 * @brief Write PREFIX.pem and PREFIX.key (0600): a client certificate for @p name (CN, clientAuth, 1 year)
 * signed by the fleet's CA, which is created first when missing.
 * @param[out] ca_path Where the CA's certificate is (for the message).
 */
enum fleet_err tls_ca_issue_client(const struct fleet_config *cfg, const char *name, const char *prefix,
                                   char *ca_path, size_t ca_path_len, char *err, size_t err_len);

/** @brief The fleet's CA certificate and key (the state folder's, created when missing); the caller frees. */
enum fleet_err tls_ca_load(const struct fleet_config *cfg, struct x509_st **ca, struct evp_pkey_st **ca_key,
                           char *err, size_t err_len);

/**
 * @brief A server certificate's subjectAltName for address @p addr of @p fam: the address alone, or when
 * @p shared (other devices listen there too) with localhost, 127.0.0.1 and ::1 as well.
 */
void tls_ca_server_san(const struct net_family *fam, uint32_t addr, int shared, char *buf, size_t len);

/** @return A server certificate (serverAuth, 10 years) for @p key named @p cn and @p san, signed by the CA.
 */
struct x509_st *tls_ca_server_cert(struct evp_pkey_st *key, const char *cn, const char *san,
                                   struct x509_st *ca, struct evp_pkey_st *ca_key);

#endif
