/*
 * NETCONF over TLS for the stress client (RFC 7589), on the same epoll loop
 * as plain TCP and SSH. conn.c makes the TCP connection; this file then puts
 * a non-blocking OpenSSL client on the socket and drives the handshake one
 * step per readiness event: SSL_connect returns "want read" or "want write"
 * until the server's answer has arrived and is simply called again. Once the
 * handshake is done the connection carries NETCONF as over TCP: the hello
 * first (RFC 7589 3.1, either side may send its own at once).
 *
 * One SSL_CTX for the run holds the client certificate, its key and the CA
 * the servers' certificates must chain to; each connection has its own SSL
 * object. The buffers of an idle connection are released
 * (SSL_MODE_RELEASE_BUFFERS): thousands of mounted sessions would otherwise
 * keep ~34 KiB of record buffers each. The server's name or address is not
 * checked unless --tls-verify-host true: a fleet serves many addresses with
 * one certificate.
 *
 * Each side's certificate goes alone: the chain is built once at setup,
 * without the root the server trusts anyway (OpenSSL would otherwise build
 * it per handshake and send the CA's certificate, which the server then
 * decodes, OpenSSL 3.0's dearest step). Read-ahead takes what the socket
 * holds in one read() instead of two per record; what OpenSSL holds then is
 * read on while SSL_has_pending(). With --tls-resume each target's last
 * session (tls_sessions.c) is offered on the next connection there.
 *
 * OpenSSL keeps its errors in a per-thread queue; it is cleared before every
 * call so that a failure names its own cause, with OpenSSL's reason text.
 * With TLS 1.3 a server that refuses the client certificate says so after
 * the client's handshake has finished, in an alert read with the first
 * input: that is reported the same way, as a TLS failure.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "conn.h"
#include "conn_internal.h"
#include "tls_sessions.h"

/* Records read per readiness event (at most 16 KiB each) before yielding to other connections; what is
 * left in the socket wakes the loop again. */
#define CONN_TLS_MAX_READS_PER_EVENT 64

struct conn_tls {
    SSL *ssl;        /* the connection's TLS state; reads and writes c->fd */
    int handshaken;  /* 1 once SSL_connect succeeded */
    int fatal;       /* 1 after a fatal TLS or socket error: no close_notify then (OpenSSL forbids it) */
    int write_waits; /* 1 while the last SSL_write waits for the socket to take more (LOOP_WRITE armed) */
    uint32_t events; /* the events the loop watches for now (LOOP_READ | LOOP_WRITE) */
};

/* Process-wide settings: made once by conn_tls_setup() before any connection, read-only afterwards. */
static struct {
    SSL_CTX *ctx;                /* certificate, key, CA and modes of every connection; NULL before setup */
    int verify_host;             /* 1: the server's certificate must name the address connected to */
    int resume;                  /* 1: offer each target's remembered session */
    unsigned long full, resumed; /* handshakes completed, full and abbreviated */
} settings;

/*
 * OpenSSL's reason for the first error of the queue ("certificate verify failed": the cause, where later
 * entries say which call failed), and the verification's own reason.
 */
static void
error_text(SSL *ssl, char *out, size_t out_len)
{
    unsigned long e = ERR_peek_error();
    const char *reason = e ? ERR_reason_error_string(e) : NULL;
    size_t n;

    n = (size_t)snprintf(out, out_len, "%s", reason ? reason : "TLS error");
    if (n >= out_len) {
        return;
    }
    if (ssl && ERR_GET_LIB(e) == ERR_LIB_SSL && ERR_GET_REASON(e) == SSL_R_CERTIFICATE_VERIFY_FAILED &&
        SSL_get_verify_result(ssl) != X509_V_OK) {
        snprintf(out + n, out_len - n, " (%s)", X509_verify_cert_error_string(SSL_get_verify_result(ssl)));
    } else if (ERR_GET_LIB(e) == ERR_LIB_SSL && (ERR_GET_REASON(e) == SSL_R_WRONG_VERSION_NUMBER ||
                                                 ERR_GET_REASON(e) == SSL_R_PACKET_LENGTH_TOO_LONG)) {
        snprintf(out + n, out_len - n, " (the server does not speak TLS: plain TCP or SSH?)");
    }
}

/* A file was refused (after a failed setup call): err says "what path: reason". */
static int
setup_failed(const char *what, const char *path, char *err, size_t err_len)
{
    char reason[160];
    FILE *f = path ? fopen(path, "r") : NULL;

    /* OpenSSL names an unreadable file "system lib": the system's own words say more. */
    if (path && !f) {
        snprintf(reason, sizeof reason, "%s", strerror(errno));
    } else {
        error_text(NULL, reason, sizeof reason);
    }
    if (f) {
        fclose(f);
    }
    snprintf(err, err_len, "%s %s: %s", what, path ? path : "(the system's CAs)", reason);
    SSL_CTX_free(settings.ctx);
    settings.ctx = NULL;
    return -1;
}

/* A session (a TLS 1.3 ticket) arrived: remembered for the connection's target. 1: the store keeps it. */
static int
remember_session(SSL *ssl, SSL_SESSION *sess)
{
    const struct conn *c = SSL_get_app_data(ssl);

    tls_sessions_put(c->fam, c->addr, c->port, sess);
    return 1;
}

int
conn_tls_setup(const char *cert_path, const char *key_path, const char *ca_path, int verify_host, int resume,
               char *err, size_t err_len)
{
    ERR_clear_error();
    settings.ctx = SSL_CTX_new(TLS_client_method());
    if (!settings.ctx) {
        snprintf(err, err_len, "out of memory for TLS");
        return -1;
    }
    settings.verify_host = verify_host;
    settings.resume = resume;
    settings.full = settings.resumed = 0;
    /* RFC 7589 3.1: TLS 1.2 or later. */
    SSL_CTX_set_min_proto_version(settings.ctx, TLS1_2_VERSION);
    /* Partial writes: the queue keeps the rest. Moving buffer: a retry may come from a grown queue. */
    SSL_CTX_set_mode(settings.ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                                       SSL_MODE_RELEASE_BUFFERS | SSL_MODE_NO_AUTO_CHAIN);
    SSL_CTX_set_read_ahead(settings.ctx, 1);
    if (resume) {
        SSL_CTX_set_session_cache_mode(settings.ctx,
                                       SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
        SSL_CTX_sess_set_new_cb(settings.ctx, remember_session);
    }
    /* A server that closes without close_notify has closed the session, as over TCP; not a TLS error. */
    SSL_CTX_set_options(settings.ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
    SSL_CTX_set_verify(settings.ctx, SSL_VERIFY_PEER, NULL);
    if (cert_path && SSL_CTX_use_certificate_chain_file(settings.ctx, cert_path) != 1) {
        return setup_failed("--tls-cert", cert_path, err, err_len);
    }
    if (key_path && SSL_CTX_use_PrivateKey_file(settings.ctx, key_path, SSL_FILETYPE_PEM) != 1) {
        return setup_failed("--tls-key", key_path, err, err_len);
    }
    if (cert_path && key_path && SSL_CTX_check_private_key(settings.ctx) != 1) {
        snprintf(err, err_len, "--tls-key %s is not the key of --tls-cert %s", key_path, cert_path);
        SSL_CTX_free(settings.ctx);
        settings.ctx = NULL;
        return -1;
    }
    if (ca_path ? SSL_CTX_load_verify_file(settings.ctx, ca_path) != 1
                : SSL_CTX_set_default_verify_paths(settings.ctx) != 1) {
        return setup_failed("--tls-ca", ca_path, err, err_len);
    }
    if (cert_path) {
        /* The chain once, without the root (SSL_MODE_NO_AUTO_CHAIN: not per handshake). */
        SSL_CTX_build_cert_chain(settings.ctx,
                                 SSL_BUILD_CHAIN_FLAG_NO_ROOT | SSL_BUILD_CHAIN_FLAG_IGNORE_ERROR);
        ERR_clear_error();
    }
    return 0;
}

void
conn_tls_cleanup(void)
{
    tls_sessions_free();
    SSL_CTX_free(settings.ctx);
    settings.ctx = NULL;
}

void
conn_tls_handshakes(unsigned long *full, unsigned long *resumed)
{
    *full = settings.full;
    *resumed = settings.resumed;
}

/* Watch the socket for reading, and for writing while OpenSSL or the queue waits for room. */
static void
set_events(struct conn *c, uint32_t want)
{
    if (want != c->tls->events) {
        loop_set_events(c->loop, c->fd, want);
        c->tls->events = want;
    }
}

/*
 * A call on c->tls->ssl returned rc <= 0: 0 when it only has to wait (events set), -1 when the connection
 * was failed. @p what names the step in the message.
 */
static int
tls_wait_or_fail(struct conn *c, int rc, const char *what)
{
    struct conn_tls *t = c->tls;
    int e = SSL_get_error(t->ssl, rc);
    char reason[256];
    char detail[320];

    switch (e) {
    case SSL_ERROR_WANT_READ:
        /* Input must arrive first; a write still waiting for room keeps LOOP_WRITE. */
        set_events(c, t->write_waits ? LOOP_READ | LOOP_WRITE : LOOP_READ);
        return 0;
    case SSL_ERROR_WANT_WRITE:
        set_events(c, LOOP_READ | LOOP_WRITE);
        return 0;
    case SSL_ERROR_ZERO_RETURN:
        if (!t->handshaken) {
            snprintf(detail, sizeof detail, "%s: the server closed the connection", what);
            conn_fail(c, CONN_FAIL_TLS, detail);
            return -1;
        }
        conn_fail(c, CONN_FAIL_CLOSED,
                  frame_decoder_partial(&c->dec) ? "server closed the TLS session mid-message"
                                                 : "server closed the TLS session");
        return -1;
    case SSL_ERROR_SYSCALL:
        t->fatal = 1;
        if (errno && ERR_peek_last_error() == 0) {
            snprintf(detail, sizeof detail, "%s: %s", what, strerror(errno));
            conn_fail(c, CONN_FAIL_RESET, detail);
        } else if (!t->handshaken) {
            snprintf(detail, sizeof detail, "%s: the server closed the connection", what);
            conn_fail(c, CONN_FAIL_TLS, detail);
        } else {
            conn_fail(c, CONN_FAIL_CLOSED,
                      frame_decoder_partial(&c->dec) ? "server closed the connection mid-message"
                                                     : "server closed the connection");
        }
        return -1;
    default:
        t->fatal = 1;
        error_text(t->ssl, reason, sizeof reason);
        snprintf(detail, sizeof detail, "%s: %s", what, reason);
        conn_fail(c, CONN_FAIL_TLS, detail);
        return -1;
    }
}

/*
 * A write found the connection reset: a server that refused the handshake (TLS 1.3 judges the client
 * certificate after the client is done) sent an alert before it closed, and the alert may still wait
 * in the socket. @return 1 when it was read and the connection failed with its reason, else 0.
 */
static int
fail_with_alert(struct conn *c)
{
    struct conn_tls *t = c->tls;
    size_t cap;
    char *buf = conn_read_buffer(&cap);
    char reason[256];
    char detail[320];
    int n;

    ERR_clear_error();
    n = SSL_read(t->ssl, buf, cap > INT_MAX ? INT_MAX : (int)cap);
    if (n > 0 || SSL_get_error(t->ssl, n) != SSL_ERROR_SSL) {
        return 0;
    }
    t->fatal = 1;
    error_text(t->ssl, reason, sizeof reason);
    snprintf(detail, sizeof detail, "TLS read: %s", reason);
    conn_fail(c, CONN_FAIL_TLS, detail);
    return 1;
}

/* Write what is queued as far as the socket takes it. Returns -1 when the connection failed. */
static int
push(struct conn *c)
{
    struct conn_tls *t = c->tls;
    const char *data;
    size_t n;

    while ((n = outq_peek(&c->out, &data)) > 0) {
        int rc;
        ERR_clear_error();
        errno = 0;
        rc = SSL_write(t->ssl, data, n > INT_MAX ? INT_MAX : (int)n);
        if (rc <= 0) {
            int e = SSL_get_error(t->ssl, rc);
            int saved = errno;
            t->write_waits = e == SSL_ERROR_WANT_WRITE;
            if (e == SSL_ERROR_SYSCALL && fail_with_alert(c)) {
                return -1;
            }
            errno = saved;
            return tls_wait_or_fail(c, rc, "TLS write");
        }
        outq_consume(&c->out, (size_t)rc);
    }
    t->write_waits = 0;
    set_events(c, LOOP_READ);
    return 0;
}

static int
tls_send(struct conn *c, const char *bytes, size_t len)
{
    if (outq_add(&c->out, bytes, len)) {
        conn_fail(c, CONN_FAIL_RESOURCES, "out of memory queueing a request");
        return -1;
    }
    if (!c->tls || !c->tls->handshaken) {
        return 0; /* written once the handshake is done */
    }
    return push(c);
}

/* One attempt at the handshake. Returns 1 when done (the hello was sent), 0 to wait, -1 failed. */
static int
handshake(struct conn *c)
{
    struct conn_tls *t = c->tls;
    int rc;

    ERR_clear_error();
    errno = 0;
    rc = SSL_connect(t->ssl);
    if (rc <= 0) {
        return tls_wait_or_fail(c, rc, "TLS handshake") ? -1 : 0;
    }
    t->handshaken = 1;
    if (SSL_session_reused(t->ssl)) {
        settings.resumed++;
    } else {
        settings.full++;
    }
    conn_stream_up(c);
    if (c->state == CONN_CLOSED || c->tls != t) {
        return -1;
    }
    return push(c) ? -1 : 1;
}

static int
tls_open(struct conn *c)
{
    struct conn_tls *t = calloc(1, sizeof *t);
    char host[NETADDR_TEXT_BYTES];

    if (!t || !(t->ssl = SSL_new(settings.ctx))) {
        free(t);
        conn_fail(c, CONN_FAIL_RESOURCES, "out of memory for a TLS session");
        return -1;
    }
    c->tls = t;
    c->state = CONN_HANDSHAKE;
    t->events = LOOP_WRITE; /* what conn_start() watched for */
    if (SSL_set_fd(t->ssl, c->fd) != 1) {
        conn_fail(c, CONN_FAIL_RESOURCES, "TLS: cannot use the socket");
        return -1;
    }
    if (settings.verify_host) {
        /* The bare address of either family: OpenSSL matches it against the certificate's IP SANs. */
        netaddr_text(c->fam, c->addr, host, sizeof host);
        if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(t->ssl), host) != 1) {
            conn_fail(c, CONN_FAIL_RESOURCES, "TLS: cannot set the address to verify");
            return -1;
        }
    }
    SSL_set_app_data(t->ssl, c);
    if (settings.resume) {
        SSL_SESSION *sess = tls_sessions_get(c->fam, c->addr, c->port);
        if (sess && SSL_set_session(t->ssl, sess) != 1) {
            ERR_clear_error(); /* a full handshake then */
        }
    }
    SSL_set_connect_state(t->ssl);
    return handshake(c) < 0 ? -1 : 0;
}

/* Consume what the socket brings, a bounded number of records. */
static void
read_records(struct conn *c)
{
    struct conn_tls *t = c->tls;
    size_t cap;
    char *buf = conn_read_buffer(&cap);
    int want = cap > INT_MAX ? INT_MAX : (int)cap;

    /* Past the bound only while OpenSSL holds read-ahead bytes: the socket would not wake the loop for them.
     */
    for (int i = 0; i < CONN_TLS_MAX_READS_PER_EVENT || SSL_has_pending(t->ssl); i++) {
        int n;
        ERR_clear_error();
        errno = 0;
        n = SSL_read(t->ssl, buf, want);
        if (n <= 0) {
            tls_wait_or_fail(c, n, "TLS read");
            return;
        }
        conn_input(c, buf, (size_t)n);
        if (c->state == CONN_CLOSED || c->tls != t) {
            return; /* the workload closed (or restarted) the connection */
        }
        if (c->state == CONN_READY && c->cb->drained) {
            c->cb->drained(c);
            if (c->state == CONN_CLOSED || c->tls != t) {
                return;
            }
        }
    }
}

static void
tls_io(struct conn *c, uint32_t events)
{
    struct conn_tls *t = c->tls;

    (void)events;
    if (!t->handshaken) {
        if (handshake(c) <= 0) {
            return;
        }
    }
    /* OpenSSL may need to write to read or to read to write: both are tried on either readiness. */
    if (outq_pending(&c->out) && push(c)) {
        return;
    }
    read_records(c);
}

static void
tls_close(struct conn *c)
{
    struct conn_tls *t = c->tls;

    if (!t) {
        return;
    }
    c->tls = NULL;
    if (t->handshaken && !t->fatal) {
        /* One close_notify attempt, not waiting for the server's: the socket closes right after. */
        ERR_clear_error();
        SSL_shutdown(t->ssl);
    }
    SSL_free(t->ssl); /* the socket stays open: SSL_set_fd gives it no ownership */
    ERR_clear_error();
    free(t);
}

static const char *
tls_timeout_hint(const struct conn *c)
{
    (void)c;
    return " (in the TLS handshake: does the server speak TLS on this port?)";
}

const struct conn_transport conn_tls_transport = {
    .open = tls_open,
    .io = tls_io,
    .send = tls_send,
    .close = tls_close,
    .choose = NULL,
    .timeout_hint = tls_timeout_hint,
};
