/*
 * Unit tests of cert-to-name (testtool/netconf/cert_to_name.h, --tls-cert-to-name): the file's lines are
 * read and sorted by ID; each malformed line is refused naming its number and its problem; a chain is
 * mapped by the first entry in ID order whose fingerprint is one of its certificates' and whose map type
 * finds a name; no entry, no name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/x509v3.h>

#include "cert_to_name.h"

static enum fleet_err
parse_text(const char *text, struct ctn_list *l, char *err, size_t len)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    enum fleet_err rc;

    assert_non_null(f);
    rc = ctn_parse(f, "ctn", l, err, len);
    fclose(f);
    return rc;
}

static void
refused(const char *text, const char *message)
{
    struct ctn_list l;
    char err[256] = "";

    assert_int_equal(parse_text(text, &l, err, sizeof err), FLEET_ERR_INVAL);
    assert_non_null(strstr(err, message));
    assert_int_equal(l.count, 0);
}

#define FP32                                                                                                 \
    "04:00:01:02:03:04:05:06:07:08:09:0A:0B:0C:0D:0E:0F:10:11:12:13:14:15:16:17:18:19:1A:1B:1C:1D:1E:1F"

static void
test_parse_sorts_by_id(void **state)
{
    struct ctn_list l;
    char err[256];

    (void)state;
    assert_int_equal(parse_text("# comment\n\n7 " FP32 " common-name\n3 " FP32 " specified ops\n"
                                "5 02:00:01:02:03:04:05:06:07:08:09:0a:0b:0c:0d:0e:0f:10:11:12:13 san-any\n",
                                &l, err, sizeof err),
                     FLEET_OK);
    assert_int_equal(l.count, 3);
    assert_int_equal(l.entries[0].id, 3);
    assert_string_equal(l.entries[0].name, "ops");
    assert_int_equal(l.entries[0].map, CTN_SPECIFIED);
    assert_int_equal(l.entries[0].hash, 4);
    assert_int_equal(l.entries[0].fp_len, 32);
    assert_int_equal(l.entries[0].fp[31], 0x1f);
    assert_int_equal(l.entries[1].id, 5);
    assert_int_equal(l.entries[1].hash, 2);
    assert_int_equal(l.entries[1].fp_len, 20);
    assert_int_equal(l.entries[2].map, CTN_COMMON_NAME);
    ctn_free(&l);
}

static void
test_parse_refuses_naming_line_and_problem(void **state)
{
    (void)state;
    refused("1 " FP32 " common-name\nx " FP32 " common-name\n", "ctn:2: the ID must be a whole number");
    refused("1 " FP32 "\n", "ctn:1: expected ID FINGERPRINT MAP-TYPE");
    refused("1 04:00:01 common-name\n", "ctn:1: the fingerprint's length");
    refused("1 09:00 common-name\n", "ctn:1: the fingerprint's first byte");
    refused("1 04-00 common-name\n", "ctn:1: the fingerprint must be hex bytes");
    refused("1 " FP32 " nickname\n", "ctn:1: the map type must be");
    refused("1 " FP32 " specified\n", "ctn:1: map type specified needs a NAME");
    refused("1 " FP32 " common-name bob\n", "ctn:1: only map type specified takes a NAME");
    refused("1 " FP32 " common-name\n1 " FP32 " san-any\n", "ctn:2: the ID is used twice");
}

/* A self-signed certificate named CN=alice with SANs DNS:a.example and IP:10.0.0.1. */
static X509 *
make_cert(void)
{
    EVP_PKEY *k = EVP_EC_gen("P-256");
    X509 *x = X509_new();
    X509V3_CTX ctx;
    X509_EXTENSION *ext;

    assert_non_null(k);
    X509_set_version(x, 2);
    X509_gmtime_adj(X509_getm_notBefore(x), 0);
    X509_gmtime_adj(X509_getm_notAfter(x), 3600);
    X509_set_pubkey(x, k);
    X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC, (const unsigned char *)"alice",
                               -1, -1, 0);
    X509_set_issuer_name(x, X509_get_subject_name(x));
    X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
    ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_subject_alt_name, "DNS:a.example,IP:10.0.0.1");
    assert_non_null(ext);
    X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
    assert_true(X509_sign(x, k, EVP_sha256()) > 0);
    EVP_PKEY_free(k);
    return x;
}

static void
test_map_by_fingerprint_in_id_order(void **state)
{
    X509 *x = make_cert();
    STACK_OF(X509) *chain = sk_X509_new_null();
    unsigned char md[32];
    unsigned int md_len;
    char fp[200], text[1024], name[CTN_MAX_NAME], err[256];
    struct ctn_list l;
    size_t n;

    (void)state;
    sk_X509_push(chain, x);
    X509_digest(x, EVP_sha256(), md, &md_len);
    n = (size_t)snprintf(fp, sizeof fp, "04");
    for (unsigned i = 0; i < md_len; i++) {
        n += (size_t)snprintf(fp + n, sizeof fp - n, ":%02x", md[i]);
    }
    /* Without entries: the common name. */
    assert_int_equal(ctn_map_chain(NULL, chain, name, sizeof name), 0);
    assert_string_equal(name, "alice");
    /* Another fingerprint first, then a match without an email SAN (no name: next entry), then san-any. */
    snprintf(text, sizeof text,
             "1 " FP32 " specified nobody\n2 %s san-rfc822-name\n4 %s san-ip-address\n3 %s san-any\n", fp, fp,
             fp);
    assert_int_equal(parse_text(text, &l, err, sizeof err), FLEET_OK);
    assert_int_equal(ctn_map_chain(&l, chain, name, sizeof name), 0);
    assert_string_equal(name, "a.example");
    ctn_free(&l);
    snprintf(text, sizeof text, "1 %s san-ip-address\n", fp);
    assert_int_equal(parse_text(text, &l, err, sizeof err), FLEET_OK);
    assert_int_equal(ctn_map_chain(&l, chain, name, sizeof name), 0);
    assert_string_equal(name, "10.0.0.1");
    ctn_free(&l);
    /* No entry matches: no name. */
    assert_int_equal(parse_text("1 " FP32 " common-name\n", &l, err, sizeof err), FLEET_OK);
    assert_int_equal(ctn_map_chain(&l, chain, name, sizeof name), -1);
    ctn_free(&l);
    sk_X509_pop_free(chain, X509_free);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_sorts_by_id),
        cmocka_unit_test(test_parse_refuses_naming_line_and_problem),
        cmocka_unit_test(test_map_by_fingerprint_in_id_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
