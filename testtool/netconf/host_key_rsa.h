/*
 * A device's own RSA host key (--host-key-type rsa), derived from the
 * fleet's secret and the device's index: the same key every run with the
 * same state folder, a different one for every device. Two primes are
 * searched for deterministically from an HMAC-SHA256 stream, which costs
 * tens of milliseconds of CPU per key (the other types cost microseconds).
 */
#ifndef FLEET_HOST_KEY_RSA_H
#define FLEET_HOST_KEY_RSA_H

#include <stdint.h>

struct evp_pkey_st;
struct ssh_key_struct;

/** Size of the RSA keys fleetsim derives, in bits. */
#define HOST_KEY_RSA_BITS 2048u

/**
 * @brief Derive device @p index's RSA key of @p bits bits (a multiple of 128, at least 1024) from
 * @p secret. e is 65537.
 * @return A libssh private key the caller frees, or NULL (out of memory, or a bad @p bits).
 */
struct ssh_key_struct *host_key_rsa_derive(const uint8_t secret[32], uint32_t index, unsigned bits);

/**
 * @brief The same key as host_key_rsa_derive() gives, as OpenSSL's key (for checks).
 * @return A key the caller frees with EVP_PKEY_free(), or NULL.
 */
struct evp_pkey_st *host_key_rsa_derive_evp(const uint8_t secret[32], uint32_t index, unsigned bits);

#endif
