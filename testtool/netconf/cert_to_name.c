/*
 * cert-to-name's file and its match against a verified chain.
 */
#include "cert_to_name.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/x509v3.h>

static const char *const ctn_map_names[] = {
    [CTN_SPECIFIED] = "specified",       [CTN_SAN_RFC822_NAME] = "san-rfc822-name",
    [CTN_SAN_DNS_NAME] = "san-dns-name", [CTN_SAN_IP_ADDRESS] = "san-ip-address",
    [CTN_SAN_ANY] = "san-any",           [CTN_COMMON_NAME] = "common-name",
};

/* The digest of TLS HashAlgorithm @p hash, or NULL. */
static const EVP_MD *
ctn_md(uint8_t hash)
{
    switch (hash) {
    case 1:
        return EVP_md5();
    case 2:
        return EVP_sha1();
    case 3:
        return EVP_sha224();
    case 4:
        return EVP_sha256();
    case 5:
        return EVP_sha384();
    case 6:
        return EVP_sha512();
    default:
        return NULL;
    }
}

/* "04:AB:..." into e->hash and e->fp; a message on error. */
static const char *
parse_fp(const char *text, struct ctn_entry *e)
{
    uint8_t bytes[CTN_MAX_FP_BYTES + 1];
    size_t n = 0;
    const char *p = text;
    const EVP_MD *md;

    for (;;) {
        char *end;
        unsigned long v;
        if (n == sizeof bytes || !isxdigit((unsigned char)p[0]) || !isxdigit((unsigned char)p[1])) {
            return "the fingerprint must be hex bytes separated by colons (04:AB:...)";
        }
        errno = 0;
        v = strtoul(p, &end, 16);
        if (end != p + 2 || errno || v > 255) {
            return "the fingerprint must be hex bytes separated by colons (04:AB:...)";
        }
        bytes[n++] = (uint8_t)v;
        if (!*end) {
            break;
        }
        if (*end != ':') {
            return "the fingerprint must be hex bytes separated by colons (04:AB:...)";
        }
        p = end + 1;
    }
    if (!(md = ctn_md(bytes[0]))) {
        return "the fingerprint's first byte is no hash algorithm (01 md5 ... 04 sha256 ... 06 sha512)";
    }
    if (n - 1 != (size_t)EVP_MD_get_size(md)) {
        return "the fingerprint's length does not fit its hash algorithm";
    }
    e->hash = bytes[0];
    e->fp_len = (uint8_t)(n - 1);
    memcpy(e->fp, bytes + 1, n - 1);
    return NULL;
}

static int
by_id(const void *a, const void *b)
{
    const struct ctn_entry *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

enum fleet_err
ctn_parse(FILE *f, const char *what, struct ctn_list *out, char *err, size_t err_len)
{
    char line[1024];
    unsigned lineno = 0;

    *out = (struct ctn_list){0};
    while (fgets(line, sizeof line, f)) {
        char *save = NULL, *id, *fp, *map, *name, *end;
        const char *problem = NULL;
        struct ctn_entry e = {0}, *grown;
        unsigned long v;
        size_t m;

        lineno++;
        if (!(id = strtok_r(line, " \t\r\n", &save)) || id[0] == '#') {
            continue;
        }
        fp = strtok_r(NULL, " \t\r\n", &save);
        map = strtok_r(NULL, " \t\r\n", &save);
        name = strtok_r(NULL, " \t\r\n", &save);
        errno = 0;
        v = strtoul(id, &end, 10);
        if (*end || errno || v > UINT32_MAX || id[0] == '-') {
            problem = "the ID must be a whole number";
        } else if (!fp || !map) {
            problem = "expected ID FINGERPRINT MAP-TYPE [NAME]";
        } else {
            e.id = (uint32_t)v;
            problem = parse_fp(fp, &e);
        }
        for (m = 0; !problem && m < sizeof ctn_map_names / sizeof ctn_map_names[0]; m++) {
            if (!strcmp(map, ctn_map_names[m])) {
                break;
            }
        }
        if (!problem && m == sizeof ctn_map_names / sizeof ctn_map_names[0]) {
            problem =
                "the map type must be specified, san-rfc822-name, san-dns-name, san-ip-address, san-any "
                "or common-name";
        }
        e.map = (enum ctn_map)m;
        if (!problem && e.map == CTN_SPECIFIED && !name) {
            problem = "map type specified needs a NAME";
        } else if (!problem && e.map != CTN_SPECIFIED && name) {
            problem = "only map type specified takes a NAME";
        } else if (!problem && name && strlen(name) >= sizeof e.name) {
            problem = "the NAME is too long";
        } else if (!problem && strtok_r(NULL, " \t\r\n", &save)) {
            problem = "unexpected words after the entry";
        }
        for (size_t i = 0; !problem && i < out->count; i++) {
            if (out->entries[i].id == e.id) {
                problem = "the ID is used twice";
            }
        }
        if (problem) {
            snprintf(err, err_len, "%s:%u: %s", what, lineno, problem);
            ctn_free(out);
            return FLEET_ERR_INVAL;
        }
        if (name) {
            snprintf(e.name, sizeof e.name, "%s", name);
        }
        if (!(grown = realloc(out->entries, (out->count + 1) * sizeof *grown))) {
            ctn_free(out);
            return FLEET_ERR_NOMEM;
        }
        out->entries = grown;
        out->entries[out->count++] = e;
    }
    if (out->count) {
        qsort(out->entries, out->count, sizeof *out->entries, by_id);
    }
    return FLEET_OK;
}

enum fleet_err
ctn_load(const char *path, struct ctn_list *out, char *err, size_t err_len)
{
    FILE *f = fopen(path, "r");
    enum fleet_err rc;

    if (!f) {
        snprintf(err, err_len, "--tls-cert-to-name %s: %s", path, strerror(errno));
        return FLEET_ERR_INVAL;
    }
    rc = ctn_parse(f, path, out, err, err_len);
    fclose(f);
    return rc;
}

void
ctn_free(struct ctn_list *l)
{
    free(l->entries);
    *l = (struct ctn_list){0};
}

static int
common_name(X509 *x, char *name, size_t len)
{
    int n = X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName, name, (int)len);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

/* The first subjectAltName of @p x of @p type (GEN_EMAIL, GEN_DNS, GEN_IPADD; -1: any of them). */
static int
san_name(X509 *x, int type, char *name, size_t len)
{
    GENERAL_NAMES *names = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
    int rc = -1;

    for (int i = 0; rc && i < sk_GENERAL_NAME_num(names); i++) {
        const GENERAL_NAME *g = sk_GENERAL_NAME_value(names, i);
        if (type >= 0 ? g->type != type
                      : g->type != GEN_EMAIL && g->type != GEN_DNS && g->type != GEN_IPADD) {
            continue;
        }
        if (g->type == GEN_IPADD) {
            int l = ASN1_STRING_length(g->d.iPAddress);
            const unsigned char *d = ASN1_STRING_get0_data(g->d.iPAddress);
            rc = (l == 4 || l == 16) && inet_ntop(l == 4 ? AF_INET : AF_INET6, d, name, (socklen_t)len) ? 0
                                                                                                        : -1;
        } else {
            const ASN1_IA5STRING *s = g->type == GEN_EMAIL ? g->d.rfc822Name : g->d.dNSName;
            int l = ASN1_STRING_length(s);
            if (l > 0 && (size_t)l < len) {
                memcpy(name, ASN1_STRING_get0_data(s), (size_t)l);
                name[l] = '\0';
                rc = 0;
            }
        }
    }
    GENERAL_NAMES_free(names);
    return rc;
}

static int
map_name(const struct ctn_entry *e, X509 *client, char *name, size_t len)
{
    switch (e->map) {
    case CTN_SPECIFIED:
        snprintf(name, len, "%s", e->name);
        return 0;
    case CTN_SAN_RFC822_NAME:
        return san_name(client, GEN_EMAIL, name, len);
    case CTN_SAN_DNS_NAME:
        return san_name(client, GEN_DNS, name, len);
    case CTN_SAN_IP_ADDRESS:
        return san_name(client, GEN_IPADD, name, len);
    case CTN_SAN_ANY:
        return san_name(client, -1, name, len);
    case CTN_COMMON_NAME:
        return common_name(client, name, len);
    }
    return -1;
}

int
ctn_map_chain(const struct ctn_list *l, STACK_OF(X509) * chain, char *name, size_t len)
{
    X509 *client = sk_X509_value(chain, 0);

    if (!client) {
        return -1;
    }
    if (!l || !l->count) {
        return common_name(client, name, len);
    }
    for (size_t i = 0; i < l->count; i++) {
        const struct ctn_entry *e = &l->entries[i];
        for (int c = 0; c < sk_X509_num(chain); c++) {
            unsigned char md[EVP_MAX_MD_SIZE];
            unsigned int md_len = 0;
            if (X509_digest(sk_X509_value(chain, c), ctn_md(e->hash), md, &md_len) && md_len == e->fp_len &&
                !memcmp(md, e->fp, md_len)) {
                if (!map_name(e, client, name, len)) {
                    return 0;
                }
                break; /* this entry matches but finds no name: the next entry is tried */
            }
        }
    }
    return -1;
}
