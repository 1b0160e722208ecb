/*
 * A NETCONF manager accepting call home (RFC 8071) with libnetconf2's
 * client: it listens on 127.0.0.1:PORT (nc_client_ssh_ch_add_bind_listen),
 * accepts N call-home sessions (nc_accept_callhome: the SSH client side,
 * password login, the netconf subsystem and the hello), counts them, and
 * on the first one sends get-config and checks for data. One line per
 * fact on stdout, for test_call_home.py to read:
 *   listening
 *   hostkey T B64    (the host key of each device that called, before its session)
 *   session N        (one per accepted session, N from 1)
 *   get-config ok
 *   accepted N
 * Exit 0 when all N came within the time limit and get-config answered.
 *
 * Usage: ch_client PORT N USERNAME PASSWORD TIMEOUT_S
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Debian builds libnetconf2 with SSH; its headers show the SSH client API only when told. */
#define NC_ENABLED_SSH
#include <libnetconf2/log.h>
#include <libnetconf2/messages_client.h>
#include <libnetconf2/netconf.h>
#include <libnetconf2/session_client.h>
#include <libnetconf2/session_client_ch.h>
#include <libssh/libssh.h>
#include <libyang/libyang.h>

#include "itest_nc.h"

static const char *password;

static char *
give_password(const char *username, const char *hostname, void *priv)
{
    (void)username;
    (void)hostname;
    (void)priv;
    return strdup(password);
}

/* Accepts every device's host key, and tells which it was ("hostkey TYPE BASE64"). */
static int
accept_any_host_key(const char *hostname, ssh_session session, void *priv)
{
    ssh_key key = NULL;
    char *b64 = NULL;

    (void)hostname;
    (void)priv;
    if (ssh_get_server_publickey(session, &key) == SSH_OK &&
        ssh_pki_export_pubkey_base64(key, &b64) == SSH_OK) {
        printf("hostkey %s %s\n", ssh_key_type_to_char(ssh_key_type(key)), b64);
        fflush(stdout);
    }
    ssh_string_free_char(b64);
    ssh_key_free(key);
    return 0; /* the test compares the keys it was told */
}

static double
now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
    struct nc_session **sessions;
    struct ly_ctx *ctx = NULL;
    double deadline;
    int want, got = 0, rc = 1;

    if (argc != 6) {
        fprintf(stderr, "usage: ch_client PORT N USERNAME PASSWORD TIMEOUT_S\n");
        return 2;
    }
    want = atoi(argv[2]);
    password = argv[4];
    deadline = now_s() + atof(argv[5]);
    if (!(sessions = calloc((size_t)want, sizeof *sessions))) {
        return 2;
    }
    nc_client_init();
    nc_verbosity(NC_VERB_ERROR);
    /* One context for every session: the first fetches the schemas, the others find them loaded. */
    if (ly_ctx_new(NULL, 0, &ctx)) {
        fprintf(stderr, "cannot create a YANG context\n");
        goto cleanup;
    }
    nc_client_ssh_ch_set_username(argv[3]);
    nc_client_ssh_ch_set_auth_password_clb(give_password, NULL);
    nc_client_ssh_ch_set_auth_hostkey_check_clb(accept_any_host_key, NULL);
    nc_client_ssh_ch_set_auth_pref(NC_SSH_AUTH_PUBLICKEY, -1);
    nc_client_ssh_ch_set_auth_pref(NC_SSH_AUTH_INTERACTIVE, -1);
    if (nc_client_ssh_ch_add_bind_listen("127.0.0.1", (uint16_t)atoi(argv[1]))) {
        fprintf(stderr, "cannot listen on 127.0.0.1 port %s\n", argv[1]);
        goto cleanup;
    }
    printf("listening\n");
    fflush(stdout);
    while (got < want && now_s() < deadline) {
        struct nc_session *s = NULL;
        int r = nc_accept_callhome(1000, ctx, &s);
        if (r == 1 && s) {
            sessions[got++] = s;
            printf("session %d %.3f\n", got, now_s() - (deadline - atof(argv[5])));
            fflush(stdout);
            if (got == 1) {
                printf(itest_nc_get_config(s) ? "get-config failed\n" : "get-config ok\n");
                fflush(stdout);
            }
        } else if (r < 0) {
            fprintf(stderr, "nc_accept_callhome failed\n");
        }
    }
    printf("accepted %d\n", got);
    fflush(stdout);
    rc = got == want ? 0 : 1;

cleanup:
    for (int i = 0; i < got; i++) {
        nc_session_free(sessions[i], NULL);
    }
    free(sessions);
    nc_client_ssh_ch_del_bind("127.0.0.1", (uint16_t)atoi(argv[1]));
    nc_client_destroy();
    ly_ctx_destroy(ctx);
    return rc;
}
