/*
 * P-256 keys from HMAC-SHA256 draws, written as SEC1 DER that OpenSSL and
 * libssh read (both compute the public point from the scalar).
 */
/* key_p256_derive() makes an EC_KEY, deprecated in OpenSSL 3.0 but the one way to a key that skips 3.0's
 * provider decoders and encoders: d2i_PrivateKey() and X509_set_pubkey() of a provider key each build a
 * decoder or encoder chain, about 200 us apiece, which made a device's certificate cost more than a
 * handshake (bench/RESULTS.md, "Per-device TLS certificates"). */
#define OPENSSL_SUPPRESS_DEPRECATED

#include "key_p256.h"

#include <string.h>

#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/obj_mac.h>
#include <openssl/x509.h>

#define KEY_P256_LABEL_MAX 16

/* The private scalar of device @p index's key for @p label: HMAC-SHA256 draws until one is in [1, n-1]. */
static int
draw_scalar(const uint8_t secret[32], const char *label, uint32_t index, uint8_t d[32])
{
    static const uint8_t order[32] = {0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff,
                                      0xff, 0xff, 0xff, 0xff, 0xff, 0xbc, 0xe6, 0xfa, 0xad, 0xa7, 0x17,
                                      0x9e, 0x84, 0xf3, 0xb9, 0xca, 0xc2, 0xfc, 0x63, 0x25, 0x51};
    static const uint8_t zero[32] = {0};
    uint8_t msg[KEY_P256_LABEL_MAX + 5];
    size_t n = strnlen(label, KEY_P256_LABEL_MAX);
    unsigned int d_len = 32;

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
            return 0;
        }
    }
}

int
key_p256_sec1(const uint8_t secret[32], const char *label, uint32_t index, uint8_t der[KEY_P256_SEC1_BYTES])
{
    static const uint8_t curve[] = {0xa0, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07};
    uint8_t d[32];

    if (draw_scalar(secret, label, index, d)) {
        return -1;
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
    uint8_t d[32];
    EC_KEY *ec = NULL;
    EC_POINT *pub = NULL;
    BIGNUM *priv = NULL;
    EVP_PKEY *key = NULL;
    const EC_GROUP *group;

    if (draw_scalar(secret, label, index, d) || !(ec = EC_KEY_new_by_curve_name(NID_X9_62_prime256v1)) ||
        !(priv = BN_bin2bn(d, sizeof d, NULL))) {
        goto done;
    }
    group = EC_KEY_get0_group(ec);
    if (!(pub = EC_POINT_new(group)) || !EC_POINT_mul(group, pub, priv, NULL, NULL, NULL) ||
        !EC_KEY_set_private_key(ec, priv) || !EC_KEY_set_public_key(ec, pub) || !(key = EVP_PKEY_new())) {
        goto done;
    }
    if (EVP_PKEY_assign_EC_KEY(key, ec) != 1) {
        EVP_PKEY_free(key);
        key = NULL;
        goto done;
    }
    ec = NULL; /* the key's now */
done:
    OPENSSL_cleanse(d, sizeof d);
    BN_clear_free(priv);
    EC_POINT_free(pub);
    EC_KEY_free(ec);
    return key;
}
