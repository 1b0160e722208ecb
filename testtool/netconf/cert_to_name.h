/*
 * cert-to-name (RFC 7407, as RFC 7589 uses it): which NETCONF username a TLS
 * client's certificate maps to. A file of lines "ID FINGERPRINT MAP-TYPE
 * [NAME]" (--tls-cert-to-name); entries are tried in ID order, one matches
 * when its fingerprint is the client's certificate's or one of its chain's,
 * and maps when the map type finds a name. No file: the common name.
 */
#ifndef FLEET_CERT_TO_NAME_H
#define FLEET_CERT_TO_NAME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <openssl/x509.h>

#include "err.h"

enum ctn_map {
    CTN_SPECIFIED,
    CTN_SAN_RFC822_NAME,
    CTN_SAN_DNS_NAME,
    CTN_SAN_IP_ADDRESS,
    CTN_SAN_ANY,
    CTN_COMMON_NAME,
};

/* Longest fingerprint (SHA-512) and mapped name. */
#define CTN_MAX_FP_BYTES 64
#define CTN_MAX_NAME     256

struct ctn_entry {
    uint32_t id;  /* order of trial */
    uint8_t hash; /* TLS HashAlgorithm: 1 md5, 2 sha1, 3 sha224, 4 sha256, 5 sha384, 6 sha512 */
    uint8_t fp[CTN_MAX_FP_BYTES]; /* the digest */
    uint8_t fp_len;               /* its bytes */
    enum ctn_map map;             /* how the name is found */
    char name[CTN_MAX_NAME];      /* CTN_SPECIFIED: the name */
};

struct ctn_list {
    struct ctn_entry *entries; /* in ID order */
    size_t count;
};

/** @brief Read @p f (named @p what in messages) into @p out, sorted by ID. On error @p err names line and
 * problem. */
enum fleet_err ctn_parse(FILE *f, const char *what, struct ctn_list *out, char *err, size_t err_len);

/** @brief ctn_parse() of the file at @p path. */
enum fleet_err ctn_load(const char *path, struct ctn_list *out, char *err, size_t err_len);

void ctn_free(struct ctn_list *l);

/**
 * @brief The username of the client whose verified chain is @p chain (the client's certificate first).
 * @param[in] l The entries, or NULL / none for the common name.
 * @return 0 with @p name set, -1 when no entry maps.
 */
int ctn_map_chain(const struct ctn_list *l, STACK_OF(X509) * chain, char *name, size_t len);

#endif
