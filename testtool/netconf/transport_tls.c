/*
 * NETCONF over TLS: a non-blocking SSL on the session's socket. The
 * handshake runs on readiness; once it and cert-to-name succeed the hello
 * goes out (sess_transport_ready()). Buffers are released while idle
 * (SSL_MODE_RELEASE_BUFFERS) so that a quiet session costs little. With
 * read-ahead one read() takes what the socket holds, several records, instead
 * of two per record (header, then body); what OpenSSL then holds is not seen
 * by epoll, so a read turn goes on while SSL_has_pending().
 *
 * Per handshake OpenSSL 3.0 decodes every certificate it receives through its
 * provider decoders (the dearest step), so each side sends its leaf only: the
 * chain is built once at start, without the root the peer trusts anyway,
 * instead of per handshake (which also sent the CA's certificate). Sessions
 * resume from a server-side cache (stateful TLS 1.3 tickets): a stateless
 * ticket would be encrypted and decoded again, peer certificate included.
 */
#include "transport_tls.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "cert_to_name.h"
#include "device.h"
#include "frame.h"
#include "log.h"
#include "outq.h"
#include "session.h"
#include "tls_ca.h"
#include "tls_device_cert.h"
#include "transport.h"

struct tls_link {
    SSL *ssl;
    uint8_t handshake_done;   /* 1 once the handshake and cert-to-name succeeded */
    uint8_t handshake_writes; /* 1 while the handshake waits for room to write */
    uint8_t read_owed;        /* 1 while bytes wait in OpenSSL's buffer that no socket event will announce */
    char username[CTN_MAX_NAME];
};

/* OpenSSL's reason for the last failure of @p ssl's call that returned @p rc. */
static const char *
tls_reason(SSL *ssl, int rc, char *buf, size_t len)
{
    int e = SSL_get_error(ssl, rc);
    unsigned long q = ERR_get_error();

    if (q) {
        ERR_error_string_n(q, buf, len);
    } else if (e == SSL_ERROR_SYSCALL || e == SSL_ERROR_ZERO_RETURN) {
        snprintf(buf, len, "the peer closed the connection");
    } else {
        snprintf(buf, len, "SSL error %d", e);
    }
    if (SSL_get_verify_result(ssl) != X509_V_OK) {
        size_t n = strlen(buf);
        snprintf(buf + n, len - n, " (client certificate: %s)",
                 X509_verify_cert_error_string(SSL_get_verify_result(ssl)));
    }
    ERR_clear_error();
    return buf;
}

/*
 * A resumed session has no verified chain: the client's certificate from the session, verified again
 * against the CA (expiry included), so that cert-to-name sees what a full handshake shows. The caller
 * frees the chain. NULL when it no longer verifies.
 */
static STACK_OF(X509) * tls_resumed_chain(SSL *ssl)
{
    X509 *peer = SSL_get0_peer_certificate(ssl);
    X509_STORE_CTX *vc = peer ? X509_STORE_CTX_new() : NULL;
    STACK_OF(X509) *chain = NULL;

    if (vc && X509_STORE_CTX_init(vc, SSL_CTX_get_cert_store(SSL_get_SSL_CTX(ssl)), peer, NULL) &&
        X509_STORE_CTX_set_purpose(vc, X509_PURPOSE_SSL_CLIENT) && X509_verify_cert(vc) == 1) {
        chain = X509_STORE_CTX_get1_chain(vc);
    }
    X509_STORE_CTX_free(vc);
    ERR_clear_error();
    return chain;
}

/* Why the handshake of @p ssl failed (before tls_reason() takes OpenSSL's error). */
static enum tls_refused
tls_refusal(SSL *ssl)
{
    long v = SSL_get_verify_result(ssl);

    if (ERR_GET_REASON(ERR_peek_error()) == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE) {
        return TLS_REFUSED_NO_CERT;
    }
    if (v == X509_V_ERR_CERT_HAS_EXPIRED || v == X509_V_ERR_CERT_NOT_YET_VALID) {
        return TLS_REFUSED_EXPIRED;
    }
    return v != X509_V_OK ? TLS_REFUSED_UNTRUSTED : TLS_REFUSED_PROTOCOL;
}

/* The handshake's next step; the hello once it is done. 0: continue, -1: the session was closed. */
static int
tls_handshake(struct session *s)
{
    struct tls_link *l = s->link;
    STACK_OF(X509) * chain, *resumed;
    char why[320];
    int refused;
    int rc = SSL_do_handshake(l->ssl);

    l->handshake_writes = 0;
    if (rc != 1) {
        switch (SSL_get_error(l->ssl, rc)) {
        case SSL_ERROR_WANT_READ:
            return 0;
        case SSL_ERROR_WANT_WRITE:
            l->handshake_writes = 1;
            sess_mark_pending(s);
            return 0;
        default:
            s->dev->stats.tls_refused[tls_refusal(l->ssl)]++;
            log_info("device %u session %u: TLS handshake failed: %s", s->dev->index, s->id,
                     tls_reason(l->ssl, rc, why, sizeof why));
            sess_close(s, 0);
            return -1;
        }
    }
    resumed = SSL_session_reused(l->ssl) ? tls_resumed_chain(l->ssl) : NULL;
    chain = resumed ? resumed : SSL_get0_verified_chain(l->ssl);
    refused = !chain || ctn_map_chain(s->worker->fleet->tls_names, chain, l->username, sizeof l->username);
    sk_X509_pop_free(resumed, X509_free);
    if (refused) {
        log_info("device %u session %u: TLS client refused: no cert-to-name entry maps its certificate",
                 s->dev->index, s->id);
        s->dev->stats.tls_refused[TLS_REFUSED_NO_NAME]++;
        sess_close(s, 0);
        return -1;
    }
    l->handshake_done = 1;
    /* With read-ahead, what the client sent just after its Finished may already be in OpenSSL's buffer.
     * When the handshake ends outside tls_on_io's read loop (in tls_start, when the client was quicker
     * than this thread, or in tls_flush), tls_flush asks for a writable turn and tls_on_io reads it. */
    l->read_owed = (uint8_t)SSL_has_pending(l->ssl);
    s->username = l->username;
    log_debug("device %u session %u: TLS as \"%s\"", s->dev->index, s->id, l->username);
    sess_transport_ready(s);
    return 0;
}

static int
tls_start(struct session *s)
{
    struct tls_link *l = calloc(1, sizeof *l);

    if (!l || !(l->ssl = SSL_new(s->worker->fleet->tls_ctx)) || !SSL_set_fd(l->ssl, s->fd)) {
        if (l) {
            SSL_free(l->ssl);
        }
        free(l);
        return -1;
    }
    SSL_set_accept_state(l->ssl);
    SSL_set_app_data(l->ssl, s); /* the certificate callback finds the device (tls_device_cert.c) */
    s->link = l;
    s->worker->tls_session_count++;
    tls_handshake(s); /* the client spoke first: its ClientHello may be here */
    return 0;
}

static void
tls_on_io(struct session *s, uint32_t events)
{
    struct tls_link *l = s->link;
    char *buf = s->worker->read_buf;
    char why[320];

    if (!(events & LOOP_READ) && !l->handshake_writes && !l->read_owed) {
        return;
    }
    if (!l->handshake_done) {
        if (tls_handshake(s) || !l->handshake_done) {
            return;
        }
    }
    l->read_owed = 0;
    for (int i = 0; s->state < SESS_CLOSING; i++) {
        size_t n = 0;
        int rc = SSL_read_ex(l->ssl, buf, SESSION_READ_BUF_BYTES, &n);
        if (rc == 1) {
            if (sess_consume(s, buf, n)) {
                return;
            }
            /* A bounded turn, unless bytes wait in OpenSSL (read ahead: the socket would not say so). */
            if (i + 1 >= SESSION_MAX_READS_PER_EVENT && !SSL_has_pending(l->ssl)) {
                return;
            }
            continue;
        }
        switch (SSL_get_error(l->ssl, rc)) {
        case SSL_ERROR_WANT_READ:
        case SSL_ERROR_WANT_WRITE:
            ERR_clear_error();
            return;
        case SSL_ERROR_ZERO_RETURN:
            if (frame_decoder_partial(&s->dec)) {
                log_debug("device %u session %u: peer left mid-message", s->dev->index, s->id);
            }
            ERR_clear_error();
            sess_close(s, 1); /* close_notify: the replies asked for still go out */
            return;
        default:
            log_debug("device %u session %u: TLS read failed: %s", s->dev->index, s->id,
                      tls_reason(l->ssl, rc, why, sizeof why));
            sess_close(s, 0);
            return;
        }
    }
}

static int
tls_flush(struct session *s)
{
    struct tls_link *l = s->link;
    const char *data;
    size_t n;

    if (!l->handshake_done) {
        if (l->handshake_writes && (tls_handshake(s) || s->state >= SESS_CLOSING)) {
            return s->state >= SESS_CLOSING ? -1 : 0;
        }
        if (!l->handshake_done) {
            return l->handshake_writes;
        }
    }
    while ((n = outq_peek(&s->out, &data)) > 0) {
        size_t written = 0;
        int rc = SSL_write_ex(l->ssl, data, n, &written);
        if (rc == 1) {
            outq_consume(&s->out, written);
            continue;
        }
        switch (SSL_get_error(l->ssl, rc)) {
        case SSL_ERROR_WANT_WRITE:
        case SSL_ERROR_WANT_READ:
            ERR_clear_error();
            return 1;
        default:
            ERR_clear_error();
            return -1;
        }
    }
    return l->read_owed;
}

static void
tls_close(struct session *s)
{
    struct tls_link *l = s->link;

    if (l && l->handshake_done) {
        SSL_shutdown(l->ssl); /* close_notify, without waiting for the peer's */
        ERR_clear_error();
    }
    close(s->fd);
}

static void
tls_free(struct session *s)
{
    struct tls_link *l = s->link;

    if (l) {
        SSL_free(l->ssl);
        free(l);
        s->worker->tls_session_count--;
        s->link = NULL;
        s->username = NULL;
    }
}

const struct transport_ops transport_tls = {
    .start = tls_start,
    .on_io = tls_on_io,
    .flush = tls_flush,
    .close = tls_close,
    .free = tls_free,
    .reads_to_write = 0,
    .monitoring_identity = "ietf-netconf-monitoring:netconf-tls",
};

/* The session cache's bound: the fleet's TLS devices (at least 64). */
static long
tls_cache_size(const struct fleet *fleet)
{
    long n = 0;

    for (uint32_t i = 0; i < fleet->group_count; i++) {
        n += fleet->groups[i].cfg.tls ? (long)fleet->groups[i].cfg.device_count : 0;
    }
    return n < 64 ? 64 : n;
}

enum fleet_err
tls_fleet_init(struct fleet *fleet, char *err, size_t err_len)
{
    struct tls_ca_paths paths;
    const struct fleet_config *cfg = &fleet->cfg;
    STACK_OF(X509_NAME) * cas;
    SSL_CTX *ctx;
    enum fleet_err rc;
    int any_tls = 0;

    for (uint32_t i = 0; i < fleet->group_count; i++) {
        any_tls |= fleet->groups[i].cfg.tls;
    }
    if (!any_tls) {
        return FLEET_OK;
    }
    if (cfg->tls_cert_to_name) {
        if (!(fleet->tls_names = calloc(1, sizeof *fleet->tls_names))) {
            return FLEET_ERR_NOMEM;
        }
        if ((rc = ctn_load(cfg->tls_cert_to_name, fleet->tls_names, err, err_len))) {
            return rc;
        }
    }
    if ((rc = tls_ca_server_paths(cfg, &paths, err, err_len))) {
        return rc;
    }
    if (!(ctx = SSL_CTX_new(TLS_server_method()))) {
        snprintf(err, err_len, "cannot make the TLS context: out of memory");
        return FLEET_ERR_NOMEM;
    }
    fleet->tls_ctx = ctx;
    if (SSL_CTX_use_certificate_chain_file(ctx, paths.cert) != 1) {
        snprintf(err, err_len, "--tls-cert %s: cannot load the certificate: %s", paths.cert,
                 ERR_reason_error_string(ERR_get_error()));
        ERR_clear_error();
        return FLEET_ERR_INVAL;
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, paths.key, SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(ctx) != 1) {
        snprintf(err, err_len, "--tls-key %s: cannot load the key for %s: %s", paths.key, paths.cert,
                 ERR_reason_error_string(ERR_get_error()));
        ERR_clear_error();
        return FLEET_ERR_INVAL;
    }
    if (SSL_CTX_load_verify_locations(ctx, paths.ca, NULL) != 1 ||
        !(cas = SSL_load_client_CA_file(paths.ca))) {
        snprintf(err, err_len, "--tls-ca %s: cannot load the CA: %s", paths.ca,
                 ERR_reason_error_string(ERR_get_error()));
        ERR_clear_error();
        return FLEET_ERR_INVAL;
    }
    SSL_CTX_set_client_CA_list(ctx, cas);
    /* The chain once, without the root; SSL_MODE_NO_AUTO_CHAIN below keeps handshakes from building it. */
    SSL_CTX_build_cert_chain(ctx, SSL_BUILD_CHAIN_FLAG_NO_ROOT | SSL_BUILD_CHAIN_FLAG_IGNORE_ERROR);
    ERR_clear_error();
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ENABLE_PARTIAL_WRITE |
                              SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_NO_AUTO_CHAIN);
    SSL_CTX_set_read_ahead(ctx, 1);
    /* SSL_OP_NO_TICKET: TLS 1.3 tickets name a cached session instead of carrying it encrypted. */
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_TICKET);
    /* One remembered session per device is enough for clients that reconnect; entries expire. */
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
    SSL_CTX_sess_set_cache_size(ctx, tls_cache_size(fleet));
    SSL_CTX_set_session_id_context(ctx, (const unsigned char *)"fleetsim", 8); /* resumption needs one */
    SSL_CTX_set_num_tickets(ctx, 1);
    log_info("NETCONF over TLS: certificate %s, clients of %s", paths.cert, paths.ca);
    return tls_devcert_init(fleet, err, err_len);
}

void
tls_fleet_close(struct fleet *fleet)
{
    tls_devcert_close(fleet);
    SSL_CTX_free(fleet->tls_ctx);
    fleet->tls_ctx = NULL;
    if (fleet->tls_names) {
        ctn_free(fleet->tls_names);
        free(fleet->tls_names);
        fleet->tls_names = NULL;
    }
}
