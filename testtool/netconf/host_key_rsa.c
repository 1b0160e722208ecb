/*
 * Deterministic RSA host keys (--host-key-type rsa). Each prime starts from
 * a candidate read off the stream HMAC-SHA256(fleet secret, "rsa" index
 * prime-number counter), its two top bits set (so n has exactly the bits
 * asked for) and its low bit set, and steps by 2 (past a sieve of the
 * primes below 4096) until Miller-Rabin with 8 bases takes it and p - 1
 * is prime to e = 65537. The key is
 * built from its parts with EVP_PKEY_fromdata() and handed to libssh as
 * PEM, the way the ECDSA keys are. The cost is the primality tests: tens of
 * milliseconds of CPU for 2048 bits (BN_check_prime()'s 64 rounds took
 * three times as long).
 */
#include "host_key_rsa.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>

#include <libssh/libssh.h>

#define RSA_E 65537u

/* Fill @p out with @p len bytes of the stream for device @p index's prime @p which, draw @p draw. */
static int
stream_fill(const uint8_t secret[32], uint32_t index, uint8_t which, uint32_t draw, uint8_t *out, size_t len)
{
    uint8_t msg[16] = {'r', 's', 'a'}, block[32];
    unsigned int block_len = sizeof block;
    uint32_t counter = 0;

    msg[3] = (uint8_t)(index >> 24), msg[4] = (uint8_t)(index >> 16);
    msg[5] = (uint8_t)(index >> 8), msg[6] = (uint8_t)index;
    msg[7] = which;
    msg[8] = (uint8_t)(draw >> 24), msg[9] = (uint8_t)(draw >> 16);
    msg[10] = (uint8_t)(draw >> 8), msg[11] = (uint8_t)draw;
    for (size_t off = 0; off < len; off += sizeof block, counter++) {
        size_t take = len - off < sizeof block ? len - off : sizeof block;
        msg[12] = (uint8_t)(counter >> 24), msg[13] = (uint8_t)(counter >> 16);
        msg[14] = (uint8_t)(counter >> 8), msg[15] = (uint8_t)counter;
        if (!HMAC(EVP_sha256(), secret, 32, msg, sizeof msg, block, &block_len)) {
            return -1;
        }
        memcpy(out + off, block, take);
    }
    OPENSSL_cleanse(block, sizeof block);
    return 0;
}

/* Primes below this sieve the candidates before a Miller-Rabin test. */
#define SIEVE_LIMIT 4096u
/* Miller-Rabin rounds (bases 2, 3, 5, ...): FIPS 186-4 table C.3 asks 5 for 1024-bit primes of a random
 * search (error below 2^-100); OpenSSL's BN_check_prime() does 64, which is most of its cost. */
#define MR_ROUNDS 8

/* The odd primes below SIEVE_LIMIT into @p out. @return How many. */
static size_t
small_primes(uint16_t *out)
{
    uint8_t composite[SIEVE_LIMIT] = {0};
    size_t n = 0;

    for (uint32_t i = 3; i < SIEVE_LIMIT; i += 2) {
        if (!composite[i]) {
            out[n++] = (uint16_t)i;
            for (uint32_t j = i * i; j < SIEVE_LIMIT; j += 2 * i) {
                composite[j] = 1;
            }
        }
    }
    return n;
}

/* Miller-Rabin of odd @p w > 2^64 with the first MR_ROUNDS primes as bases. @return 1 probably prime,
 * 0 composite, -1 error. */
static int
miller_rabin(const BIGNUM *w, const uint16_t *primes, BN_CTX *ctx)
{
    BIGNUM *w1, *d, *a, *x;
    int s = 1, rc = -1;

    BN_CTX_start(ctx);
    w1 = BN_CTX_get(ctx), d = BN_CTX_get(ctx), a = BN_CTX_get(ctx), x = BN_CTX_get(ctx);
    if (!x || !BN_sub(w1, w, BN_value_one())) {
        goto cleanup;
    }
    while (!BN_is_bit_set(w1, s)) {
        s++;
    }
    if (!BN_rshift(d, w1, s)) {
        goto cleanup;
    }
    for (int round = 0; round < MR_ROUNDS; round++) {
        int j;
        if (!BN_set_word(a, round ? primes[round - 1] : 2) || !BN_mod_exp(x, a, d, w, ctx)) {
            goto cleanup;
        }
        if (BN_is_one(x) || !BN_cmp(x, w1)) {
            continue;
        }
        for (j = 1; j < s; j++) {
            if (!BN_mod_sqr(x, x, w, ctx)) {
                goto cleanup;
            }
            if (!BN_cmp(x, w1)) {
                break;
            }
            if (BN_is_one(x)) {
                j = s;
            }
        }
        if (j >= s) {
            rc = 0;
            goto cleanup;
        }
    }
    rc = 1;

cleanup:
    BN_CTX_end(ctx);
    return rc;
}

/* Set @p p to a prime of @p bits bits (the top two set), p - 1 prime to e, not equal to @p other. */
static int
find_prime(BIGNUM *p, const BIGNUM *other, const uint8_t secret[32], uint32_t index, uint8_t which,
           unsigned bits, BN_CTX *ctx)
{
    uint16_t primes[SIEVE_LIMIT / 2], rem[SIEVE_LIMIT / 2];
    size_t np = small_primes(primes), len = bits / 8;
    uint8_t buf[512];
    int rc = -1;

    for (uint32_t draw = 0;; draw++) {
        BN_ULONG rem_e;
        if (stream_fill(secret, index, which, draw, buf, len) || !BN_bin2bn(buf, (int)len, p) ||
            !BN_set_bit(p, (int)bits - 1) || !BN_set_bit(p, (int)bits - 2) || !BN_set_bit(p, 0) ||
            (rem_e = BN_mod_word(p, RSA_E)) == (BN_ULONG)-1) {
            goto cleanup;
        }
        for (size_t i = 0; i < np; i++) {
            BN_ULONG r = BN_mod_word(p, primes[i]);
            if (r == (BN_ULONG)-1) {
                goto cleanup;
            }
            rem[i] = (uint16_t)r;
        }
        /* candidates p + delta, delta even; past 2^16 steps (or the top bit), a fresh draw */
        for (uint32_t delta = 0; delta < 65536u; delta += 2) {
            size_t i = 0;
            while (i < np && (rem[i] + delta) % primes[i]) {
                i++;
            }
            if (i < np || (rem_e + delta) % RSA_E == 1) {
                continue;
            }
            if (!BN_add_word(p, delta)) {
                goto cleanup;
            }
            if (BN_num_bits(p) != (int)bits) {
                break;
            }
            int prime = (other && !BN_cmp(p, other)) ? 0 : miller_rabin(p, primes, ctx);
            if (prime < 0 || !BN_sub_word(p, delta)) {
                goto cleanup;
            }
            if (prime) {
                rc = BN_add_word(p, delta) ? 0 : -1;
                goto cleanup;
            }
        }
    }

cleanup:
    OPENSSL_cleanse(buf, sizeof buf);
    return rc;
}

/* The key of primes @p p and @p q as an OpenSSL key. */
static EVP_PKEY *
key_from_primes(const BIGNUM *p, const BIGNUM *q, BN_CTX *ctx)
{
    BIGNUM *n = BN_new(), *e = BN_new(), *d = BN_secure_new(), *p1 = BN_secure_new(), *q1 = BN_secure_new();
    BIGNUM *g = BN_new(), *lcm = BN_secure_new(), *dp = BN_secure_new(), *dq = BN_secure_new();
    BIGNUM *qi = BN_secure_new();
    OSSL_PARAM_BLD *bld = NULL;
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *pctx = NULL;
    EVP_PKEY *pk = NULL;

    if (!n || !e || !d || !p1 || !q1 || !g || !lcm || !dp || !dq || !qi || !BN_set_word(e, RSA_E) ||
        !BN_mul(n, p, q, ctx) || !BN_sub(p1, p, BN_value_one()) || !BN_sub(q1, q, BN_value_one()) ||
        !BN_gcd(g, p1, q1, ctx) || !BN_mul(lcm, p1, q1, ctx) || !BN_div(lcm, NULL, lcm, g, ctx) ||
        !BN_mod_inverse(d, e, lcm, ctx) || !BN_mod(dp, d, p1, ctx) || !BN_mod(dq, d, q1, ctx) ||
        !BN_mod_inverse(qi, q, p, ctx)) {
        goto cleanup;
    }
    if (!(bld = OSSL_PARAM_BLD_new()) || !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n) ||
        !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e) ||
        !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_D, d) ||
        !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_FACTOR1, p) ||
        !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_FACTOR2, q) ||
        !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_EXPONENT1, dp) ||
        !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_EXPONENT2, dq) ||
        !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_COEFFICIENT1, qi) ||
        !(params = OSSL_PARAM_BLD_to_param(bld)) || !(pctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL)) ||
        EVP_PKEY_fromdata_init(pctx) != 1 || EVP_PKEY_fromdata(pctx, &pk, EVP_PKEY_KEYPAIR, params) != 1) {
        EVP_PKEY_free(pk);
        pk = NULL;
    }

cleanup:
    EVP_PKEY_CTX_free(pctx);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    BN_free(n);
    BN_free(e);
    BN_free(g);
    BN_clear_free(d);
    BN_clear_free(p1);
    BN_clear_free(q1);
    BN_clear_free(lcm);
    BN_clear_free(dp);
    BN_clear_free(dq);
    BN_clear_free(qi);
    return pk;
}

/* @p pk as a libssh key, through its PKCS#8 PEM in memory. */
static ssh_key
to_libssh(EVP_PKEY *pk)
{
    BIO *bio = BIO_new(BIO_s_mem());
    ssh_key key = NULL;
    char *data, *pem = NULL;
    long len;

    if (!bio || PEM_write_bio_PrivateKey(bio, pk, NULL, NULL, 0, NULL, NULL) != 1 ||
        (len = BIO_get_mem_data(bio, &data)) <= 0 || !(pem = malloc((size_t)len + 1))) {
        goto cleanup;
    }
    memcpy(pem, data, (size_t)len);
    pem[len] = '\0';
    if (ssh_pki_import_privkey_base64(pem, NULL, NULL, NULL, &key) != SSH_OK) {
        key = NULL;
    }
    OPENSSL_cleanse(pem, (size_t)len);

cleanup:
    free(pem);
    if (bio) {
        /* the memory BIO's buffer held the private key too */
        BUF_MEM *mem = NULL;
        BIO_get_mem_ptr(bio, &mem);
        if (mem && mem->data) {
            OPENSSL_cleanse(mem->data, mem->max);
        }
        BIO_free(bio);
    }
    return key;
}

EVP_PKEY *
host_key_rsa_derive_evp(const uint8_t secret[32], uint32_t index, unsigned bits)
{
    BN_CTX *ctx = BN_CTX_secure_new();
    BIGNUM *p = BN_secure_new(), *q = BN_secure_new();
    EVP_PKEY *pk = NULL;

    if (bits >= 1024 && bits <= 8192 && !(bits % 128) && ctx && p && q &&
        !find_prime(p, NULL, secret, index, 1, bits / 2, ctx) &&
        !find_prime(q, p, secret, index, 2, bits / 2, ctx)) {
        pk = key_from_primes(p, q, ctx);
    }
    BN_clear_free(p);
    BN_clear_free(q);
    BN_CTX_free(ctx);
    return pk;
}

ssh_key
host_key_rsa_derive(const uint8_t secret[32], uint32_t index, unsigned bits)
{
    EVP_PKEY *pk = host_key_rsa_derive_evp(secret, index, bits);
    ssh_key key = pk ? to_libssh(pk) : NULL;

    EVP_PKEY_free(pk);
    return key;
}
