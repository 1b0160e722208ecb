/*
 * Unit tests of the derived RSA host keys (testtool/netconf/host_key_rsa.h,
 * --host-key-type rsa): the same secret and index give the same key, every
 * index and every secret another; OpenSSL's full key check passes (p and q
 * prime, d and the CRT parts right), n has 2048 bits and e is 65537; libssh
 * imports it as an RSA key whose public half is OpenSSL's; ssh_link's
 * per-device key of type rsa is it. A known answer pins the derivation: a
 * change would give every device of every user a new key, which allow-lists
 * (OpenDaylight's call home) would refuse.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>

#include <libssh/libssh.h>

#include "host_key_rsa.h"
#include "plan.h"
#include "ssh_link.h"

static const uint8_t secret_a[32] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
                                     17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};
static const uint8_t secret_b[32] = {32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17,
                                     16, 15, 14, 13, 12, 11, 10, 9,  8,  7,  6,  5,  4,  3,  2,  1};

/* The base64 public key (SSH wire format) of a derived key; the caller frees it. */
static char *
pub_b64(const uint8_t secret[32], uint32_t index)
{
    ssh_key key = host_key_rsa_derive(secret, index, HOST_KEY_RSA_BITS);
    char *b64 = NULL;

    assert_non_null(key);
    assert_int_equal(ssh_key_type(key), SSH_KEYTYPE_RSA);
    assert_true(ssh_key_is_private(key));
    assert_int_equal(ssh_pki_export_pubkey_base64(key, &b64), SSH_OK);
    ssh_key_free(key);
    return b64;
}

static void
test_same_secret_and_index_same_key(void **state)
{
    char *a = pub_b64(secret_a, 7), *b = pub_b64(secret_a, 7);

    (void)state;
    assert_string_equal(a, b);
    free(a);
    free(b);
}

static void
test_every_index_and_secret_its_own_key(void **state)
{
    char *k[4] = {pub_b64(secret_a, 0), pub_b64(secret_a, 1), pub_b64(secret_a, 1000000),
                  pub_b64(secret_b, 0)};

    (void)state;
    for (int i = 0; i < 4; i++) {
        for (int j = i + 1; j < 4; j++) {
            assert_string_not_equal(k[i], k[j]);
        }
    }
    for (int i = 0; i < 4; i++) {
        free(k[i]);
    }
}

static void
test_valid_2048_bit_key_libssh_and_openssl_agree(void **state)
{
    EVP_PKEY *pk = host_key_rsa_derive_evp(secret_b, 3, HOST_KEY_RSA_BITS);
    EVP_PKEY_CTX *cctx;
    BIGNUM *n = NULL, *e = NULL;
    ssh_key key = host_key_rsa_derive(secret_b, 3, HOST_KEY_RSA_BITS);
    char *b64 = NULL;
    unsigned char nbin[256], b[512];

    (void)state;
    assert_non_null(pk);
    assert_non_null(key);
    assert_int_equal(EVP_PKEY_get_bits(pk), 2048);
    assert_non_null(cctx = EVP_PKEY_CTX_new(pk, NULL));
    assert_int_equal(EVP_PKEY_check(cctx), 1); /* p, q prime; n = pq; d, dP, dQ, qInv consistent */
    EVP_PKEY_CTX_free(cctx);
    assert_int_equal(EVP_PKEY_get_bn_param(pk, OSSL_PKEY_PARAM_RSA_N, &n), 1);
    assert_int_equal(EVP_PKEY_get_bn_param(pk, OSSL_PKEY_PARAM_RSA_E, &e), 1);
    assert_true(BN_is_word(e, 65537));
    assert_int_equal(BN_num_bits(n), 2048);
    /* libssh's public blob: string "ssh-rsa", mpint e (3 bytes), mpint n (0x00 then 256 bytes) */
    assert_int_equal(ssh_pki_export_pubkey_base64(key, &b64), SSH_OK);
    assert_int_equal(strlen(b64), 4 * 93);
    assert_int_equal(EVP_DecodeBlock(b, (const unsigned char *)b64, (int)strlen(b64)),
                     4 + 7 + 4 + 3 + 4 + 257);
    assert_memory_equal(b + 4, "ssh-rsa", 7);
    assert_memory_equal(b + 15, "\x01\x00\x01", 3);
    assert_int_equal(b[22], 0);
    assert_int_equal(BN_bn2binpad(n, nbin, sizeof nbin), 256);
    assert_memory_equal(b + 23, nbin, 256);
    free(b64);
    BN_free(n);
    BN_free(e);
    EVP_PKEY_free(pk);
    ssh_key_free(key);
}

static void
test_device_key_of_type_rsa_is_it(void **state)
{
    struct fleet_config cfg;
    char *via_link, *direct = pub_b64(secret_a, 5);

    (void)state;
    memset(&cfg, 0, sizeof cfg);
    cfg.host_key_type = "rsa";
    assert_non_null(via_link = ssh_link_device_pubkey_b64(&cfg, secret_a, 5));
    assert_string_equal(via_link, direct);
    assert_memory_equal(via_link, "AAAAB3NzaC1yc2E", 15); /* "\0\0\0\7ssh-rsa" */
    free(via_link);
    cfg.host_key_type = "ed25519";
    assert_non_null(via_link = ssh_link_device_pubkey_b64(&cfg, secret_a, 5));
    assert_string_not_equal(via_link, direct);
    free(via_link);
    free(direct);
}

static void
test_known_answer(void **state)
{
    static const uint8_t zero[32] = {0};
    ssh_key key = host_key_rsa_derive(zero, 0, HOST_KEY_RSA_BITS);
    unsigned char *hash = NULL;
    size_t hlen = 0;
    char *hex;

    (void)state;
    assert_non_null(key);
    assert_int_equal(ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &hlen), 0);
    hex = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hlen);
    assert_string_equal(hex, "SHA256:pTdDA3xMvOtghToN/DSU18JaO4QzCbxpAcQAHhXSpZ8");
    ssh_string_free_char(hex);
    ssh_clean_pubkey_hash(&hash);
    ssh_key_free(key);
}

static void
test_bad_sizes_refused(void **state)
{
    (void)state;
    assert_null(host_key_rsa_derive(secret_a, 0, 512));
    assert_null(host_key_rsa_derive(secret_a, 0, 2000));
    assert_null(host_key_rsa_derive(secret_a, 0, 16384));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_secret_and_index_same_key),
        cmocka_unit_test(test_every_index_and_secret_its_own_key),
        cmocka_unit_test(test_valid_2048_bit_key_libssh_and_openssl_agree),
        cmocka_unit_test(test_device_key_of_type_rsa_is_it),
        cmocka_unit_test(test_known_answer),
        cmocka_unit_test(test_bad_sizes_refused),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
