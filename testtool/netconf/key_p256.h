/*
 * A device's own NIST P-256 key, derived from the fleet's secret, a label
 * and the device's index: the same key every run with the same state folder,
 * a different one per device and per label (the SSH host key and the TLS
 * server certificate's key never coincide). Costs microseconds.
 */
#ifndef FLEET_KEY_P256_H
#define FLEET_KEY_P256_H

#include <stdint.h>

struct evp_pkey_st;

/* Size of the SEC1 ECPrivateKey key_p256_sec1() writes (the curve named, no public point). */
#define KEY_P256_SEC1_BYTES 51u

/**
 * @brief Device @p index's key for @p label, as SEC1 DER: the private scalar is HMAC-SHA256(@p secret,
 * label, index, counter), the first draw in [1, n-1].
 * @return 0, or -1 when HMAC failed. The caller cleanses @p der after use.
 */
int key_p256_sec1(const uint8_t secret[32], const char *label, uint32_t index,
                  uint8_t der[KEY_P256_SEC1_BYTES]);

/** @return The same key as OpenSSL's (the public point computed), freed with EVP_PKEY_free(); or NULL. */
struct evp_pkey_st *key_p256_derive(const uint8_t secret[32], const char *label, uint32_t index);

#endif
