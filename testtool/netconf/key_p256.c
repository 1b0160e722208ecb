/*
 * P-256 keys from HMAC-SHA256 draws, written as SEC1 DER that OpenSSL and
 * libssh read (both compute the public point from the scalar).
 */
#include "key_p256.h"

#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/x509.h>

#define KEY_P256_LABEL_MAX 16

int
key_p256_sec1(const uint8_t secret[32], const char *label, uint32_t index, uint8_t der[KEY_P256_SEC1_BYTES])
{
    static const uint8_t order[32] = {0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff,
                                      0xff, 0xff, 0xff, 0xff, 0xff, 0xbc, 0xe6, 0xfa, 0xad, 0xa7, 0x17,
                                      0x9e, 0x84, 0xf3, 0xb9, 0xca, 0xc2, 0xfc, 0x63, 0x25, 0x51};
    static const uint8_t zero[32] = {0};
    static const uint8_t curve[] = {0xa0, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07};
    uint8_t msg[KEY_P256_LABEL_MAX + 5], d[32];
    size_t n = strnlen(label, KEY_P256_LABEL_MAX);
    unsigned int d_len = sizeof d;

    memcpy(msg, label, n);
    msg[n] = (uint8_t)(index >> 24);
    msg[n + 1] = (uint8_t)(index >> 16);
    msg[n + 2] = (uint8_t)(index >> 8);
    msg[n + 3] = (uint8_t)index;
    for (msg[n + 4] = 0;; msg[n + 4]++) {
        if (!HMAC(EVP_sha256(), secret, 32, msg, n + 5, d, &d_len)) {
            return -1;
        }
        if (memcmp(d, order, 32) < 0 && memcmp(d, zero, 32)) {
            break;
        }
    }
    der[0] = 0x30, der[1] = 49;            /* SEQUENCE */
    der[2] = 0x02, der[3] = 1, der[4] = 1; /* version 1 */
    der[5] = 0x04, der[6] = 32;            /* privateKey OCTET STRING */
    memcpy(der + 7, d, 32);
    memcpy(der + 39, curve, sizeof curve); /* [0] prime256v1 */
    OPENSSL_cleanse(d, sizeof d);
    return 0;
}

struct evp_pkey_st *
key_p256_derive(const uint8_t secret[32], const char *label, uint32_t index)
{
    uint8_t der[KEY_P256_SEC1_BYTES];
    const unsigned char *p = der;
    EVP_PKEY *key = NULL;

    if (!key_p256_sec1(secret, label, index, der)) {
        key = d2i_PrivateKey(EVP_PKEY_EC, NULL, &p, (long)sizeof der);
    }
    OPENSSL_cleanse(der, sizeof der);
    return key;
}
