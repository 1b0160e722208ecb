/*
 * A NETCONF manager over TLS (RFC 7589) with libnetconf2's client, run by
 * test_tls_libnetconf2.py: for each HOST PORT pair it connects
 * (nc_connect_tls, the server's certificate verified against CA), receives
 * the hello and sends get-config. One line per target on stdout:
 *   served HOST PORT get-config ok|failed
 *   refused HOST PORT
 * libnetconf2's own messages go to stderr. Exit 0 when every target was
 * served and answered, 1 otherwise, 2 on bad usage.
 *
 * Usage: tls_client CERT|- KEY|- CA HOST PORT [HOST PORT...]
 *
 * With CERT "-" no client certificate is offered. libnetconf2's
 * nc_connect_tls() will not connect without one, so that case makes the TLS
 * connection itself (the server's certificate verified the same way) and
 * hands it to nc_connect_libssl(): the refusal seen is the server's.
 */
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

/* Debian builds libnetconf2 with TLS; its headers show the TLS client API only when told. */
#define NC_ENABLED_TLS
#include <libnetconf2/log.h>
#include <libnetconf2/netconf.h>
#include <libnetconf2/session_client.h>
#include <libyang/libyang.h>

#include "itest_nc.h"

/* A TCP connection to @p host port @p port, or -1. */
static int
dial(const char *host, const char *port)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res, *ai;
    int fd = -1;

    if (getaddrinfo(host, port, &hints, &res)) {
        return -1;
    }
    for (ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen)) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    return fd;
}

/* A NETCONF session over TLS without a client certificate, or NULL. */
static struct nc_session *
connect_without_cert(SSL_CTX *ctx, const char *host, const char *port)
{
    SSL *ssl = SSL_new(ctx);
    X509_VERIFY_PARAM *param = ssl ? SSL_get0_param(ssl) : NULL;
    int fd = ssl ? dial(host, port) : -1;

    struct timeval limit = {.tv_sec = 10};
    char first;

    /*
     * Under TLS 1.3 the server judges the client's (missing) certificate after SSL_connect() returned,
     * so its verdict is the first record: an alert or the hello. It is awaited here (peeked, for
     * libnetconf2 to read) because libnetconf2 2.0 crashes freeing a session it was handed that the
     * peer closed before the hello.
     */
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit) || !SSL_set_fd(ssl, fd) ||
        !(X509_VERIFY_PARAM_set1_ip_asc(param, host) || X509_VERIFY_PARAM_set1_host(param, host, 0)) ||
        SSL_connect(ssl) != 1 || SSL_peek(ssl, &first, 1) != 1) {
        SSL_free(ssl);
        if (fd >= 0) {
            close(fd);
        }
        return NULL;
    }
    return nc_connect_libssl(ssl, NULL); /* the session owns the SSL now */
}

int
main(int argc, char **argv)
{
    SSL_CTX *bare = NULL;
    int rc = 0;

    if (argc < 6 || (argc - 4) % 2) {
        fprintf(stderr, "usage: tls_client CERT|- KEY|- CA HOST PORT [HOST PORT...]\n");
        return 2;
    }
    nc_client_init();
    nc_verbosity(NC_VERB_ERROR);
    if ((strcmp(argv[1], "-") && nc_client_tls_set_cert_key_paths(argv[1], argv[2])) ||
        nc_client_tls_set_trusted_ca_paths(argv[3], NULL)) {
        fprintf(stderr, "cannot set the certificate paths\n");
        nc_client_destroy();
        return 2;
    }
    if (!strcmp(argv[1], "-") && (!(bare = SSL_CTX_new(TLS_client_method())) ||
                                  SSL_CTX_load_verify_locations(bare, argv[3], NULL) != 1)) {
        fprintf(stderr, "cannot make a TLS context trusting %s\n", argv[3]);
        SSL_CTX_free(bare);
        nc_client_destroy();
        return 2;
    }
    if (bare) {
        SSL_CTX_set_verify(bare, SSL_VERIFY_PEER, NULL);
    }
    for (int i = 4; i + 1 < argc; i += 2) {
        struct nc_session *s = bare ? connect_without_cert(bare, argv[i], argv[i + 1])
                                    : nc_connect_tls(argv[i], (uint16_t)atoi(argv[i + 1]), NULL);
        if (!s) {
            printf("refused %s %s\n", argv[i], argv[i + 1]);
            rc = 1;
        } else {
            int got = !itest_nc_get_config(s);
            printf("served %s %s get-config %s\n", argv[i], argv[i + 1], got ? "ok" : "failed");
            rc |= !got;
            nc_session_free(s, NULL);
        }
        fflush(stdout);
    }
    SSL_CTX_free(bare);
    nc_client_destroy();
    return rc;
}
