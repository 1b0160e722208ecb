/*
 * The fleet's CA: ECDSA P-256 keys, X.509 v3 certificates made with
 * OpenSSL's API, PEM files in the state folder's tls/ (keys 0600).
 */
#include "tls_ca.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "log.h"
#include "netaddr.h"
#include "plan.h"
#include "state_dir.h"

#define TLS_CA_DAYS     3650
#define TLS_SERVER_DAYS 3650
#define TLS_CLIENT_DAYS 365

/* OpenSSL's reason for the last failure, for messages. */
static const char *
ssl_reason(void)
{
    static _Thread_local char buf[256];
    unsigned long e = ERR_get_error();

    if (!e) {
        return strerror(errno);
    }
    ERR_error_string_n(e, buf, sizeof buf);
    ERR_clear_error();
    return buf;
}

static int
add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509_EXTENSION *ext;
    int rc;

    X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
    if (!(ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value))) {
        return -1;
    }
    rc = X509_add_ext(x, ext, -1) ? 0 : -1;
    X509_EXTENSION_free(ext);
    return rc;
}

/* A certificate for @p key named @p cn, signed by @p ca_key (self-signed when @p ca is NULL). */
static X509 *
make_cert(EVP_PKEY *key, const char *cn, X509 *ca, EVP_PKEY *ca_key, long days, const char *const exts[][2])
{
    X509 *x = X509_new();
    BIGNUM *serial = BN_new();
    int ok =
        x && serial && X509_set_version(x, 2) && BN_rand(serial, 63, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) &&
        BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(x)) && X509_gmtime_adj(X509_getm_notBefore(x), 0) &&
        X509_time_adj_ex(X509_getm_notAfter(x), (int)days, 0, NULL) && X509_set_pubkey(x, key) &&
        X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_UTF8, (const unsigned char *)cn,
                                   -1, -1, 0) &&
        X509_set_issuer_name(x, X509_get_subject_name(ca ? ca : x));

    for (size_t i = 0; ok && exts[i][0]; i++) {
        ok = !add_ext(x, ca ? ca : x, OBJ_txt2nid(exts[i][0]), exts[i][1]);
    }
    ok = ok && X509_sign(x, ca_key, EVP_sha256());
    BN_free(serial);
    if (!ok) {
        X509_free(x);
        return NULL;
    }
    return x;
}

static int
write_key(const char *path, EVP_PKEY *key)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    FILE *f;
    int ok;

    if (fd < 0 || fchmod(fd, 0600) || !(f = fdopen(fd, "w"))) {
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    ok = PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL);
    return fclose(f) || !ok ? -1 : 0;
}

static int
write_cert(const char *path, X509 *x)
{
    FILE *f = fopen(path, "w");
    int ok;

    if (!f) {
        return -1;
    }
    ok = PEM_write_X509(f, x);
    return fclose(f) || !ok ? -1 : 0;
}

/* The certificate (@p key 0) or private key (1) of the PEM file at @p path, or NULL. */
static void *
read_pem(const char *path, int key)
{
    FILE *f = fopen(path, "r");
    void *v;

    if (!f) {
        return NULL;
    }
    v = key ? (void *)PEM_read_PrivateKey(f, NULL, NULL, NULL) : (void *)PEM_read_X509(f, NULL, NULL, NULL);
    fclose(f);
    return v;
}

/* The state folder's tls/, created. */
static enum fleet_err
tls_dir(const struct fleet_config *cfg, char *dir, size_t len, char *err, size_t err_len)
{
    char state[512];
    enum fleet_err rc;

    if ((rc = state_dir(cfg, state, sizeof state, err, err_len))) {
        return rc;
    }
    snprintf(dir, len, "%s/tls", state);
    if (mkdir(dir, 0700) && errno != EEXIST) {
        snprintf(err, err_len, "cannot create %s: %s", dir, strerror(errno));
        return FLEET_ERR_SYS;
    }
    return FLEET_OK;
}

/* The fleet's CA from @p dir (ca.pem, ca.key), created there when missing. */
static enum fleet_err
load_ca(const char *dir, X509 **ca, EVP_PKEY **ca_key, char *err, size_t err_len)
{
    static const char *const exts[][2] = {{"basicConstraints", "critical,CA:TRUE"},
                                          {"keyUsage", "critical,keyCertSign,cRLSign"},
                                          {"subjectKeyIdentifier", "hash"},
                                          {NULL, NULL}};
    char cert[600], key[600];

    snprintf(cert, sizeof cert, "%s/ca.pem", dir);
    snprintf(key, sizeof key, "%s/ca.key", dir);
    if (!access(cert, F_OK) || !access(key, F_OK)) {
        if (!(*ca = read_pem(cert, 0)) || !(*ca_key = read_pem(key, 1))) {
            snprintf(err, err_len, "cannot read the fleet's CA %s and %s: %s", cert, key, ssl_reason());
            X509_free(*ca);
            *ca = NULL;
            return FLEET_ERR_INVAL;
        }
        return FLEET_OK;
    }
    if (!(*ca_key = EVP_EC_gen("P-256")) ||
        !(*ca = make_cert(*ca_key, "fleetsim CA", NULL, *ca_key, TLS_CA_DAYS, exts)) ||
        write_key(key, *ca_key) || write_cert(cert, *ca)) {
        snprintf(err, err_len, "cannot create the fleet's CA in %s: %s", dir, ssl_reason());
        return FLEET_ERR_SYS;
    }
    log_info("created the fleet's TLS CA %s", cert);
    return FLEET_OK;
}

/* Write @p x and its key @p k to @p cert and @p key; frees neither. */
static enum fleet_err
write_pair(X509 *x, EVP_PKEY *k, const char *cert, const char *key, char *err, size_t err_len)
{
    if (!x || write_key(key, k) || write_cert(cert, x)) {
        snprintf(err, err_len, "cannot write %s and %s: %s", cert, key, ssl_reason());
        return FLEET_ERR_SYS;
    }
    return FLEET_OK;
}

/* A key and certificate signed by the CA, written to @p cert and @p key. */
static enum fleet_err
issue(X509 *ca, EVP_PKEY *ca_key, const char *cn, long days, const char *const exts[][2], const char *cert,
      const char *key, char *err, size_t err_len)
{
    EVP_PKEY *k = EVP_EC_gen("P-256");
    X509 *x = k ? make_cert(k, cn, ca, ca_key, days, exts) : NULL;
    enum fleet_err rc = write_pair(x, k, cert, key, err, err_len);

    X509_free(x);
    EVP_PKEY_free(k);
    return rc;
}

void
tls_ca_server_san(const struct net_family *fam, uint32_t addr, int shared, char *buf, size_t len)
{
    char ip[NETADDR_TEXT_BYTES];
    int listed;

    netaddr_text(fam, addr, ip, sizeof ip);
    listed = !strcmp(ip, "127.0.0.1") || !strcmp(ip, "::1");
    if (!shared) {
        snprintf(buf, len, "IP:%s", ip);
    } else {
        snprintf(buf, len, "DNS:localhost,IP:127.0.0.1,IP:::1%s%s", listed ? "" : ",IP:", listed ? "" : ip);
    }
}

struct x509_st *
tls_ca_server_cert(struct evp_pkey_st *key, const char *cn, const char *san, struct x509_st *ca,
                   struct evp_pkey_st *ca_key)
{
    const char *exts[][2] = {
        {"basicConstraints", "critical,CA:FALSE"},  {"keyUsage", "critical,digitalSignature"},
        {"extendedKeyUsage", "serverAuth"},         {"subjectAltName", san},
        {"authorityKeyIdentifier", "keyid:always"}, {NULL, NULL}};

    return make_cert(key, cn, ca, ca_key, TLS_SERVER_DAYS, exts);
}

enum fleet_err
tls_ca_load(const struct fleet_config *cfg, struct x509_st **ca, struct evp_pkey_st **ca_key, char *err,
            size_t err_len)
{
    char dir[560];
    enum fleet_err rc;

    *ca = NULL;
    *ca_key = NULL;
    if ((rc = tls_dir(cfg, dir, sizeof dir, err, err_len))) {
        return rc;
    }
    return load_ca(dir, ca, ca_key, err, err_len);
}

enum fleet_err
tls_ca_server_paths(const struct fleet_config *cfg, struct tls_ca_paths *out, char *err, size_t err_len)
{
    char dir[560], ip[NETADDR_TEXT_BYTES], san[200];
    X509 *ca = NULL, *have;
    EVP_PKEY *ca_key = NULL;
    enum fleet_err rc;

    if (!cfg->tls_cert != !cfg->tls_key) {
        snprintf(err, err_len, "--tls-cert and --tls-key go together");
        return FLEET_ERR_INVAL;
    }
    if (cfg->tls_cert && cfg->tls_ca) {
        snprintf(out->cert, sizeof out->cert, "%s", cfg->tls_cert);
        snprintf(out->key, sizeof out->key, "%s", cfg->tls_key);
        snprintf(out->ca, sizeof out->ca, "%s", cfg->tls_ca);
        return FLEET_OK;
    }
    if ((rc = tls_dir(cfg, dir, sizeof dir, err, err_len))) {
        return rc;
    }
    snprintf(out->ca, sizeof out->ca, "%s", cfg->tls_ca ? cfg->tls_ca : "");
    if (!cfg->tls_ca) {
        snprintf(out->ca, sizeof out->ca, "%s/ca.pem", dir);
    }
    if (cfg->tls_cert) {
        snprintf(out->cert, sizeof out->cert, "%s", cfg->tls_cert);
        snprintf(out->key, sizeof out->key, "%s", cfg->tls_key);
    } else {
        snprintf(out->cert, sizeof out->cert, "%s/server.pem", dir);
        snprintf(out->key, sizeof out->key, "%s/server.key", dir);
    }
    netaddr_text(&cfg->ip_fam, cfg->ip, ip, sizeof ip);
    /* Reused while it names --ip; a start on another address gets a new one. */
    have = cfg->tls_cert ? NULL : read_pem(out->cert, 0);
    if (!cfg->tls_cert && !(have && !access(out->key, R_OK) && X509_check_ip_asc(have, ip, 0) == 1)) {
        EVP_PKEY *k = NULL;
        X509 *x = NULL;

        tls_ca_server_san(&cfg->ip_fam, cfg->ip, 1, san, sizeof san);
        if (!(rc = load_ca(dir, &ca, &ca_key, err, err_len))) {
            x = (k = EVP_EC_gen("P-256")) ? tls_ca_server_cert(k, "fleetsim", san, ca, ca_key) : NULL;
            if (!(rc = write_pair(x, k, out->cert, out->key, err, err_len))) {
                log_info("created the TLS server certificate %s", out->cert);
            }
        }
        X509_free(x);
        EVP_PKEY_free(k);
    } else if (!cfg->tls_ca) {
        rc = load_ca(dir, &ca, &ca_key, err, err_len); /* the CA is created when only it is missing */
    }
    X509_free(have);
    X509_free(ca);
    EVP_PKEY_free(ca_key);
    return rc;
}

enum fleet_err
tls_ca_issue_client(const struct fleet_config *cfg, const char *name, const char *prefix, char *ca_path,
                    size_t ca_path_len, char *err, size_t err_len)
{
    static const char *const exts[][2] = {{"basicConstraints", "critical,CA:FALSE"},
                                          {"keyUsage", "critical,digitalSignature"},
                                          {"extendedKeyUsage", "clientAuth"},
                                          {"authorityKeyIdentifier", "keyid:always"},
                                          {NULL, NULL}};
    char dir[560], cert[600], key[600];
    X509 *ca = NULL;
    EVP_PKEY *ca_key = NULL;
    enum fleet_err rc;

    if (!*name) {
        snprintf(err, err_len, "--issue-client-cert needs a name");
        return FLEET_ERR_INVAL;
    }
    if ((rc = tls_dir(cfg, dir, sizeof dir, err, err_len)) ||
        (rc = load_ca(dir, &ca, &ca_key, err, err_len))) {
        return rc;
    }
    snprintf(cert, sizeof cert, "%s.pem", prefix);
    snprintf(key, sizeof key, "%s.key", prefix);
    snprintf(ca_path, ca_path_len, "%s/ca.pem", dir);
    rc = issue(ca, ca_key, name, TLS_CLIENT_DAYS, exts, cert, key, err, err_len);
    X509_free(ca);
    EVP_PKEY_free(ca_key);
    return rc;
}
