/*
 * Per-device server certificates. Making one costs a scalar
 * multiplication (the derived key's public point), an ECDSA signature
 * by the CA and the X.509 encoding: a fraction of the handshake's own
 * cost, paid once per device. A kept certificate and key take about
 * 2 KiB.
 */
#include "tls_device_cert.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "device.h"
#include "devview.h"
#include "key_p256.h"
#include "log.h"
#include "session.h"
#include "ssh_link.h"
#include "tls_ca.h"

/* The label of the devices' TLS keys among those derived from the fleet's secret. */
#define TLS_DEVCERT_KEY_LABEL "tls-server"

struct tls_devcert {
    X509 *cert;
    EVP_PKEY *key;
};

struct tls_devcerts {
    X509 *ca;
    EVP_PKEY *ca_key;
    uint8_t secret[32];
};

/* Whether @p cfg's devices present their own certificate. */
static int
own_cert(const struct fleet_config *cfg)
{
    return cfg->tls && (cfg->tls_cert_per_device || (cfg->ip_per_device && !cfg->tls_cert));
}

static void
devcert_free(struct tls_devcert *c)
{
    if (c) {
        X509_free(c->cert);
        EVP_PKEY_free(c->key);
        free(c);
    }
}

/* Device @p dev's certificate and key, made now. */
static struct tls_devcert *
devcert_new(const struct tls_devcerts *dc, struct device *dev)
{
    const struct fleet_config *cfg = &dev->group->cfg;
    struct tls_devcert *c = calloc(1, sizeof *c);
    char name[256], san[200];

    if (!c) {
        return NULL;
    }
    devview_hostname(dev, name, sizeof name);
    tls_ca_server_san(&cfg->ip_fam, dev->addr, !cfg->ip_per_device, san, sizeof san);
    if (!(c->key = key_p256_derive(dc->secret, TLS_DEVCERT_KEY_LABEL, dev->index)) ||
        !(c->cert = tls_ca_server_cert(c->key, name, san, dc->ca, dc->ca_key))) {
        log_info("device %u: cannot make its TLS certificate: %s", dev->index,
                 ERR_reason_error_string(ERR_get_error()));
        ERR_clear_error();
        devcert_free(c);
        return NULL;
    }
    log_debug("device %u: TLS certificate for \"%s\" (%s)", dev->index, name, san);
    return c;
}

/* The SSL_CTX's certificate callback: the session's device's certificate. 1: go on, 0: fail. */
static int
select_cert(SSL *ssl, void *arg)
{
    const struct tls_devcerts *dc = arg;
    struct session *s = SSL_get_app_data(ssl);
    struct device *dev = s ? s->dev : NULL;

    if (!dev || !own_cert(&dev->group->cfg)) {
        return 1; /* the fleet's certificate */
    }
    if (!dev->tls_cert && !(dev->tls_cert = devcert_new(dc, dev))) {
        return 0;
    }
    return SSL_use_certificate(ssl, dev->tls_cert->cert) == 1 &&
           SSL_use_PrivateKey(ssl, dev->tls_cert->key) == 1;
}

enum fleet_err
tls_devcert_init(struct fleet *fleet, char *err, size_t err_len)
{
    struct tls_devcerts *dc;
    enum fleet_err rc;
    int any = 0;

    for (uint32_t i = 0; i < fleet->group_count; i++) {
        any |= own_cert(&fleet->groups[i].cfg);
    }
    if (!any) {
        return FLEET_OK;
    }
    if (!(dc = calloc(1, sizeof *dc))) {
        return FLEET_ERR_NOMEM;
    }
    fleet->tls_devcerts = dc;
    if ((rc = tls_ca_load(&fleet->cfg, &dc->ca, &dc->ca_key, err, err_len)) ||
        (rc = ssh_link_load_secret(&fleet->cfg, dc->secret, err, err_len))) {
        return rc;
    }
    SSL_CTX_set_cert_cb(fleet->tls_ctx, select_cert, dc);
    log_info("NETCONF over TLS: every device presents its own certificate, made on its first handshake");
    return FLEET_OK;
}

void
tls_devcert_close(struct fleet *fleet)
{
    struct tls_devcerts *dc = fleet->tls_devcerts;

    for (uint32_t i = 0; fleet->devices && i < fleet->cfg.device_count; i++) {
        devcert_free(fleet->devices[i].tls_cert);
        fleet->devices[i].tls_cert = NULL;
    }
    if (dc) {
        X509_free(dc->ca);
        EVP_PKEY_free(dc->ca_key);
        OPENSSL_cleanse(dc->secret, sizeof dc->secret);
        free(dc);
        fleet->tls_devcerts = NULL;
    }
}
