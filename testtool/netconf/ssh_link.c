/*
 * The SSH transport of a session. libssh runs non-blocking on the
 * session's socket: the worker's epoll says when it is readable, the key
 * exchange is resumed until done, then an ssh_event of this one session
 * handles packets without waiting (ssh_event_dopoll with timeout 0),
 * which calls back for authentication, the channel, the subsystem and
 * data. Output goes into the channel as far as the peer's window allows;
 * the rest waits in the session's queue until a window adjust arrives.
 */
#include "ssh_link.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <libssh/callbacks.h>
#include <libssh/libssh.h>
#include <libssh/server.h>

#include "device.h"
#include "event.h"
#include "host_key_rsa.h"
#include "key_p256.h"
#include "log.h"
#include "session.h"
#include "state_dir.h"
#include "transport.h"

/* Bytes moved into the channel per write call (libssh splits packets itself). */
#define SSH_LINK_WRITE_CHUNK 32768u

struct ssh_link {
    struct session *s;                       /* owner */
    ssh_session ss;                          /* libssh's session */
    ssh_event ev;                            /* packet handling after the key exchange */
    ssh_channel ch;                          /* the one session channel, or NULL */
    int kex_done;                            /* 1 after the key exchange */
    int subsystem_ok;                        /* 1 once the netconf subsystem runs */
    int channel_gone;                        /* 1 when the peer closed the channel (seen in a callback) */
    ssh_channel stale;                       /* a closed channel replaced in a callback, freed after it */
    int closing;                             /* 1 while the link is freed: no new channels */
    struct ssh_server_callbacks_struct scb;  /* authentication and channel opening */
    struct ssh_channel_callbacks_struct ccb; /* the channel's requests and data */
};

/* A refused login is an event (event.h): authenticationFailure and the login-failure line, naming who and
 * from where. */
static void
refused(struct ssh_link *l, const char *user)
{
    char peer[NETADDR_TEXT_BYTES];

    event_login_refused(l->s->dev, EVENT_LOGIN_SSH, user, sess_peer_text(l->s, 0, peer, sizeof peer));
}

static int
on_auth_password(ssh_session ss, const char *user, const char *password, void *userdata)
{
    struct ssh_link *l = userdata;
    const struct fleet_config *cfg = &l->s->dev->group->cfg;

    (void)ss;
    if (cfg->ssh_auth_any || (!strcmp(user, cfg->username) && !strcmp(password, cfg->password))) {
        return SSH_AUTH_SUCCESS;
    }
    l->s->dev->stats.auth_failures++;
    log_debug("device %u session %u: wrong password for \"%s\"", l->s->dev->index, l->s->id, user);
    refused(l, user);
    return SSH_AUTH_DENIED;
}

static int
on_auth_pubkey(ssh_session ss, const char *user, struct ssh_key_struct *pubkey, char signature_state,
               void *userdata)
{
    struct ssh_link *l = userdata;
    const struct device_group *g = l->s->dev->group;

    (void)ss;
    if (signature_state != SSH_PUBLICKEY_STATE_NONE && signature_state != SSH_PUBLICKEY_STATE_VALID) {
        l->s->dev->stats.auth_failures++;
        refused(l, user);
        return SSH_AUTH_DENIED;
    }
    if (g->cfg.ssh_auth_any || !strcmp(user, g->cfg.username)) {
        for (uint32_t i = 0; i < g->authorized_key_count; i++) {
            if (!ssh_key_cmp(pubkey, g->authorized_keys[i], SSH_KEY_CMP_PUBLIC)) {
                /* A probe (no signature yet) is told the key would do; the signed attempt logs in. */
                return SSH_AUTH_SUCCESS;
            }
        }
    }
    if (signature_state == SSH_PUBLICKEY_STATE_VALID) {
        l->s->dev->stats.auth_failures++;
        refused(l, user);
    }
    return SSH_AUTH_DENIED;
}

static int
on_subsystem(ssh_session ss, ssh_channel ch, const char *subsystem, void *userdata)
{
    struct ssh_link *l = userdata;

    (void)ss;
    if (ch != l->ch || strcmp(subsystem, "netconf") || l->subsystem_ok) {
        return -1;
    }
    l->subsystem_ok = 1;
    sess_transport_ready(l->s);
    return 0;
}

static int
on_refused_request(ssh_session ss, ssh_channel ch, void *userdata)
{
    (void)ss;
    (void)ch;
    (void)userdata;
    return -1; /* a shell: this device speaks NETCONF only */
}

static int
on_refused_exec(ssh_session ss, ssh_channel ch, const char *command, void *userdata)
{
    (void)ss;
    (void)ch;
    (void)command;
    (void)userdata;
    return -1;
}

static int
on_refused_pty(ssh_session ss, ssh_channel ch, const char *term, int width, int height, int pxwidth,
               int pxheight, void *userdata)
{
    (void)ss;
    (void)ch;
    (void)term;
    (void)width;
    (void)height;
    (void)pxwidth;
    (void)pxheight;
    (void)userdata;
    return -1;
}

static int
on_data(ssh_session ss, ssh_channel ch, void *data, uint32_t len, int is_stderr, void *userdata)
{
    struct ssh_link *l = userdata;

    (void)ss;
    if (ch == l->ch && !is_stderr && l->subsystem_ok) {
        sess_consume(l->s, data, len);
    }
    return (int)len;
}

static void
on_eof(ssh_session ss, ssh_channel ch, void *userdata)
{
    struct ssh_link *l = userdata;

    (void)ss;
    /* A channel given up earlier (freed, its close still under way) shares these callbacks: only the
     * current one counts. Acted on after libssh returns: nothing is freed inside its own callback. */
    if (ch == l->ch) {
        l->channel_gone = 1;
    }
}

static ssh_channel
on_channel_open(ssh_session ss, void *userdata)
{
    struct ssh_link *l = userdata;

    if (l->closing || (l->ch && !(l->channel_gone && !l->subsystem_ok && !l->stale))) {
        return NULL; /* one channel at a time */
    }
    if (l->ch) {
        /* The previous channel never ran NETCONF and is closed: it goes once libssh returns. */
        l->stale = l->ch;
        l->ch = NULL;
    }
    l->channel_gone = 0;
    if (!(l->ch = ssh_channel_new(ss))) {
        return NULL;
    }
    memset(&l->ccb, 0, sizeof l->ccb);
    l->ccb.userdata = l;
    l->ccb.channel_data_function = on_data;
    l->ccb.channel_eof_function = on_eof;
    l->ccb.channel_close_function = on_eof;
    l->ccb.channel_subsystem_request_function = on_subsystem;
    l->ccb.channel_shell_request_function = on_refused_request;
    l->ccb.channel_exec_request_function = on_refused_exec;
    l->ccb.channel_pty_request_function = on_refused_pty;
    ssh_callbacks_init(&l->ccb);
    ssh_set_channel_callbacks(l->ch, &l->ccb);
    return l->ch;
}

/* Append an SSH wire string (uint32 length, bytes). */
static size_t
put_string(uint8_t *p, const void *data, uint32_t len)
{
    p[0] = (uint8_t)(len >> 24);
    p[1] = (uint8_t)(len >> 16);
    p[2] = (uint8_t)(len >> 8);
    p[3] = (uint8_t)len;
    memcpy(p + 4, data, len);
    return 4 + (size_t)len;
}

/*
 * Device @p index's own ed25519 host key (--host-key-per-device): its seed is HMAC-SHA256(fleet secret,
 * index), so a restart with the same state folder gives every device the key it had. libssh imports keys
 * from the OpenSSH private key format only, so the key is written in that format (unencrypted) in memory.
 */
static ssh_key
device_key(const uint8_t secret[32], uint32_t index)
{
    uint8_t seed[32], pub[32], blob[512], priv[256], msg[4];
    unsigned int seed_len = sizeof seed;
    size_t pub_len = sizeof pub, n = 0, m = 0, b64_len;
    EVP_PKEY *pk = NULL;
    ssh_key key = NULL;
    char *pem = NULL;
    uint8_t keypair[64];
    static const char magic[] = "openssh-key-v1";

    msg[0] = (uint8_t)(index >> 24);
    msg[1] = (uint8_t)(index >> 16);
    msg[2] = (uint8_t)(index >> 8);
    msg[3] = (uint8_t)index;
    if (!HMAC(EVP_sha256(), secret, 32, msg, sizeof msg, seed, &seed_len) ||
        !(pk = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, sizeof seed)) ||
        EVP_PKEY_get_raw_public_key(pk, pub, &pub_len) != 1 || pub_len != 32) {
        goto cleanup;
    }
    /* public key blob, then the private section (check ints, key, comment, padding) */
    {
        uint8_t pubblob[64];
        size_t pb = put_string(pubblob, "ssh-ed25519", 11);
        pb += put_string(pubblob + pb, pub, 32);
        memcpy(keypair, seed, 32);
        memcpy(keypair + 32, pub, 32);
        priv[m++] = 0x5e, priv[m++] = 0xed, priv[m++] = 0x5e, priv[m++] = 0xed; /* check1 */
        priv[m++] = 0x5e, priv[m++] = 0xed, priv[m++] = 0x5e, priv[m++] = 0xed; /* check2 = check1 */
        m += put_string(priv + m, "ssh-ed25519", 11);
        m += put_string(priv + m, pub, 32);
        m += put_string(priv + m, keypair, 64);
        m += put_string(priv + m, "", 0);
        for (uint8_t pad = 1; m % 8; pad++) {
            priv[m++] = pad;
        }
        memcpy(blob, magic, sizeof magic); /* with its NUL */
        n = sizeof magic;
        n += put_string(blob + n, "none", 4);
        n += put_string(blob + n, "none", 4);
        n += put_string(blob + n, "", 0);
        blob[n++] = 0, blob[n++] = 0, blob[n++] = 0, blob[n++] = 1; /* one key */
        n += put_string(blob + n, pubblob, (uint32_t)pb);
        n += put_string(blob + n, priv, (uint32_t)m);
    }
    b64_len = 4 * ((n + 2) / 3);
    if (!(pem = malloc(b64_len + 128))) {
        goto cleanup;
    }
    {
        int w = sprintf(pem, "-----BEGIN OPENSSH PRIVATE KEY-----\n");
        w += EVP_EncodeBlock((unsigned char *)pem + w, blob, (int)n);
        sprintf(pem + w, "\n-----END OPENSSH PRIVATE KEY-----\n");
    }
    if (ssh_pki_import_privkey_base64(pem, NULL, NULL, NULL, &key) != SSH_OK) {
        key = NULL;
    }

cleanup:
    OPENSSL_cleanse(seed, sizeof seed);
    OPENSSL_cleanse(keypair, sizeof keypair);
    free(pem);
    EVP_PKEY_free(pk);
    return key;
}

/*
 * Device @p index's own ECDSA P-256 host key (--host-key-type ecdsa), label "ecdsa" (key_p256.h), so a
 * restart gives every device the key it had. It goes to libssh as a SEC1 "EC PRIVATE KEY".
 */
static ssh_key
device_key_ecdsa(const uint8_t secret[32], uint32_t index)
{
    uint8_t der[KEY_P256_SEC1_BYTES];
    char pem[160];
    ssh_key key = NULL;
    int w;

    if (key_p256_sec1(secret, "ecdsa", index, der)) {
        return NULL;
    }
    w = sprintf(pem, "-----BEGIN EC PRIVATE KEY-----\n");
    w += EVP_EncodeBlock((unsigned char *)pem + w, der, (int)sizeof der);
    sprintf(pem + w, "\n-----END EC PRIVATE KEY-----\n");
    if (ssh_pki_import_privkey_base64(pem, NULL, NULL, NULL, &key) != SSH_OK) {
        key = NULL;
    }
    OPENSSL_cleanse(der, sizeof der);
    OPENSSL_cleanse(pem, sizeof pem);
    return key;
}

char *
ssh_link_device_pubkey_b64(const struct fleet_config *cfg, const uint8_t secret[32], uint32_t index)
{
    ssh_key key = ssh_link_device_key(cfg, secret, index);
    char *b64 = NULL;

    if (key && ssh_pki_export_pubkey_base64(key, &b64) != SSH_OK) {
        b64 = NULL;
    }
    ssh_key_free(key);
    return b64;
}

ssh_key
ssh_link_device_key(const struct fleet_config *cfg, const uint8_t secret[32], uint32_t index)
{
    if (cfg->host_key_type && !strcmp(cfg->host_key_type, "ecdsa")) {
        return device_key_ecdsa(secret, index);
    }
    if (cfg->host_key_type && !strcmp(cfg->host_key_type, "rsa")) {
        return host_key_rsa_derive(secret, index, HOST_KEY_RSA_BITS);
    }
    return device_key(secret, index);
}

/* The bind a connection of @p s is accepted with: its device's own (made on first use), or the worker's. */
static ssh_bind
bind_for(struct session *s)
{
    struct fleet *fleet = s->dev->worker->fleet;
    ssh_key key;

    if (!s->dev->group->cfg.host_key_per_device) {
        return s->worker->ssh_bind;
    }
    if (s->dev->ssh_bind) {
        return s->dev->ssh_bind;
    }
    if (!(key = ssh_link_device_key(&s->dev->group->cfg, fleet->ssh_secret, s->dev->index))) {
        return NULL;
    }
    if (!(s->dev->ssh_bind = ssh_bind_new()) ||
        ssh_bind_options_set(s->dev->ssh_bind, SSH_BIND_OPTIONS_IMPORT_KEY, key) != SSH_OK) {
        /* the bind owns the key once imported; until then it is ours */
        if (s->dev->ssh_bind) {
            ssh_bind_free(s->dev->ssh_bind);
            s->dev->ssh_bind = NULL;
        }
        ssh_key_free(key);
        return NULL;
    }
    return s->dev->ssh_bind;
}

/* SSH on an accepted connection. NULL when libssh refuses (the socket is then still ours to close). */
static struct ssh_link *
link_new(struct session *s, int fd)
{
    struct ssh_link *l = calloc(1, sizeof *l);

    if (!l || !(l->ss = ssh_new())) {
        free(l);
        return NULL;
    }
    l->s = s;
    l->scb.userdata = l;
    l->scb.auth_password_function = on_auth_password;
    l->scb.auth_pubkey_function = on_auth_pubkey;
    l->scb.channel_open_request_session_function = on_channel_open;
    ssh_callbacks_init(&l->scb);
    ssh_set_server_callbacks(l->ss, &l->scb);
    ssh_bind b = bind_for(s);
    if (!b || ssh_bind_accept_fd(b, l->ss, fd) != SSH_OK) {
        log_warn("device %u: SSH accept failed: %s", s->dev->index, b ? ssh_get_error(b) : "no host key");
        ssh_free(l->ss);
        free(l);
        return NULL;
    }
    ssh_set_blocking(l->ss, 0);
    return l;
}

/* 1 when the connection is over: a disconnect message, an end of file or a broken socket. libssh closes
 * the socket itself on the last two without clearing ssh_is_connected(), so both are asked. */
static int
link_lost(struct ssh_link *l)
{
    return !ssh_is_connected(l->ss) || ssh_get_fd(l->ss) == SSH_INVALID_SOCKET ||
           (ssh_get_status(l->ss) & (SSH_CLOSED | SSH_CLOSED_ERROR));
}

/* Forgets a channel, then frees it: freeing sends its close, and libssh may handle incoming packets
 * (a new channel, this one's close) meanwhile, calling back into this link. */
static void
drop_channel(ssh_channel *slot)
{
    ssh_channel ch = *slot;

    *slot = NULL;
    if (ch) {
        ssh_channel_free(ch);
    }
}

/* The transport's free (at the loop's safe point): the link, its channels and libssh's session, which
 * closes the socket. */
static void
link_free(struct session *s)
{
    struct ssh_link *l = s->link;

    if (!l) {
        return;
    }
    s->link = NULL;
    if (l->ev) {
        ssh_event_remove_session(l->ev, l->ss);
        ssh_event_free(l->ev);
    }
    /* libssh may handle packets while it frees a channel (its close is flushed): callbacks must find
     * nothing of this link to act on by then. */
    l->closing = 1;
    drop_channel(&l->ch);
    drop_channel(&l->stale);
    ssh_disconnect(l->ss); /* closes the socket */
    ssh_free(l->ss);
    free(l);
}

/* The transport's on_io: run the key exchange, then libssh's packet handling (both ways: reading the
 * socket is libssh's, so @p events does not matter). */
static void
link_on_io(struct session *s, uint32_t events)
{
    struct ssh_link *l = s->link;

    (void)events;
    if (!l->kex_done) {
        int rc = ssh_handle_key_exchange(l->ss);
        if (rc == SSH_AGAIN) {
            return;
        }
        if (rc != SSH_OK) {
            log_debug("device %u session %u: key exchange failed: %s", s->dev->index, s->id,
                      ssh_get_error(l->ss));
            s->dev->stats.in_bad_hellos++;
            sess_close(s, 0);
            return;
        }
        l->kex_done = 1;
        ssh_set_auth_methods(l->ss,
                             SSH_AUTH_METHOD_PASSWORD |
                                 (s->dev->group->authorized_key_count ? SSH_AUTH_METHOD_PUBLICKEY : 0));
        if (!(l->ev = ssh_event_new()) || ssh_event_add_session(l->ev, l->ss) != SSH_OK) {
            sess_close(s, 0);
            return;
        }
    }
    ssh_event_dopoll(l->ev, 0);
    if (link_lost(l)) {
        /* The peer disconnected (or the connection broke): libssh may already have closed the socket, so
         * the loop must forget it now, before another connection can get the same descriptor number. */
        sess_close(s, 0);
        return;
    }
    drop_channel(&l->stale);
    if (l->channel_gone) {
        l->channel_gone = 0;
        if (l->subsystem_ok) {
            sess_close(s, 1); /* the NETCONF channel ended: so does the session, after its replies */
            return;
        }
        /* A channel that never ran NETCONF (a refused shell or subsystem): the client may open another. */
        drop_channel(&l->ch);
    }
    if (link_lost(l)) {
        sess_close(s, 0); /* freeing a channel flushes its close, which may meet the end of the connection */
        return;
    }
    if (outq_pending(&s->out)) {
        sess_mark_pending(s); /* a window adjust may have made room */
    }
}

/* The transport's flush: the session's queued output into the channel as far as the peer's window allows,
 * then libssh's buffer to the socket without waiting. */
static int
link_flush(struct session *s)
{
    struct ssh_link *l = s->link;
    const char *data;
    size_t n;
    int rc;

    while (l->ch && (n = outq_peek(&s->out, &data)) > 0) {
        uint32_t room = ssh_channel_window_size(l->ch);
        int written;
        if (!room) {
            break; /* the peer's window is full: its adjust arrives as a packet */
        }
        if (n > room) {
            n = room;
        }
        if (n > SSH_LINK_WRITE_CHUNK) {
            n = SSH_LINK_WRITE_CHUNK;
        }
        written = ssh_channel_write(l->ch, data, (uint32_t)n);
        if (written == SSH_ERROR) {
            return -1;
        }
        if (written <= 0) {
            break;
        }
        outq_consume(&s->out, (size_t)written);
    }
    rc = ssh_blocking_flush(l->ss, 0);
    if (rc == SSH_ERROR || link_lost(l)) {
        return -1;
    }
    return outq_pending(&s->out) || rc == SSH_AGAIN ? 1 : 0;
}

/* The transport's start: SSH on the accepted (or dialled) socket; the hello waits for the netconf
 * subsystem (sess_transport_ready()). */
static int
link_start(struct session *s)
{
    s->worker->ssh_session_count++;
    if (!(s->link = link_new(s, s->fd))) {
        return -1;
    }
    /* Greet first, as SSH servers do: some clients wait for the server's version line. */
    link_on_io(s, LOOP_READ);
    return 0;
}

/* The transport's close. libssh owns the socket once the link exists: it is closed with the link at the safe
 * point (this may run inside one of libssh's callbacks). */
static void
link_close(struct session *s)
{
    if (!s->link) {
        close(s->fd); /* SSH never started on it */
    }
    s->worker->ssh_session_count--;
}

const struct transport_ops transport_ssh = {
    .start = link_start,
    .on_io = link_on_io,
    .flush = link_flush,
    .close = link_close,
    .free = link_free,
    .reads_to_write = 1,
    .monitoring_identity = "ietf-netconf-monitoring:netconf-ssh",
};

/* The key at @p path, created (type @p type, @p bits) on first use and kept for later runs. */
static enum fleet_err
ensure_key(const char *path, enum ssh_keytypes_e type, int bits, char *err, size_t err_len)
{
    ssh_key key = NULL;

    if (!access(path, R_OK)) {
        return FLEET_OK;
    }
    if (ssh_pki_generate(type, bits, &key) != SSH_OK ||
        ssh_pki_export_privkey_file(key, NULL, NULL, NULL, path) != SSH_OK) {
        snprintf(err, err_len, "cannot create the SSH host key %s: %s", path, strerror(errno));
        ssh_key_free(key);
        return FLEET_ERR_SYS;
    }
    chmod(path, 0600);
    ssh_key_free(key);
    log_info("created SSH host key %s", path);
    return FLEET_OK;
}

/* OpenSSH authorized_keys: "[options] type base64 [comment]" per line; options are not supported. */
static enum fleet_err
load_authorized_keys(struct device_group *g, const char *path, char *err, size_t err_len)
{
    FILE *f = fopen(path, "r");
    char line[16384];
    unsigned lineno = 0;

    if (!f) {
        snprintf(err, err_len, "--authorized-keys %s: %s", path, strerror(errno));
        return FLEET_ERR_INVAL;
    }
    while (fgets(line, sizeof line, f)) {
        char *type, *b64, *save = NULL;
        ssh_key key = NULL, *grown;
        lineno++;
        if (!(type = strtok_r(line, " \t\r\n", &save)) || type[0] == '#') {
            continue;
        }
        if (!(b64 = strtok_r(NULL, " \t\r\n", &save)) ||
            ssh_key_type_from_name(type) == SSH_KEYTYPE_UNKNOWN ||
            ssh_pki_import_pubkey_base64(b64, ssh_key_type_from_name(type), &key) != SSH_OK) {
            snprintf(err, err_len,
                     "--authorized-keys %s:%u: not a public key this server reads (\"type base64\")", path,
                     lineno);
            fclose(f);
            return FLEET_ERR_INVAL;
        }
        if (!(grown = realloc(g->authorized_keys, (g->authorized_key_count + 1) * sizeof *grown))) {
            ssh_key_free(key);
            fclose(f);
            return FLEET_ERR_NOMEM;
        }
        g->authorized_keys = grown;
        g->authorized_keys[g->authorized_key_count++] = key;
    }
    fclose(f);
    return FLEET_OK;
}

/* The secret every device's own host key derives from: 32 random bytes, created once in the state folder. */
enum fleet_err
ssh_link_load_secret(const struct fleet_config *cfg, uint8_t secret[32], char *err, size_t err_len)
{
    char dir[512], path[600];
    enum fleet_err rc;
    FILE *f;

    if ((rc = state_dir(cfg, dir, sizeof dir, err, err_len))) {
        return rc;
    }
    snprintf(path, sizeof path, "%s/ssh_device_key_secret", dir);
    if ((f = fopen(path, "rb"))) {
        size_t got = fread(secret, 1, 32, f);
        fclose(f);
        if (got == 32) {
            return FLEET_OK;
        }
    }
    if (RAND_bytes(secret, 32) != 1 || !(f = fopen(path, "wb")) || fwrite(secret, 1, 32, f) != 32 ||
        fclose(f)) {
        snprintf(err, err_len, "cannot create %s: %s", path, strerror(errno));
        return FLEET_ERR_SYS;
    }
    chmod(path, 0600);
    return FLEET_OK;
}

enum fleet_err
ssh_link_fleet_init(struct fleet *fleet, char *err, size_t err_len)
{
    const struct fleet_config *cfg = &fleet->cfg;
    char dir[512], ed[600], rsa[600];
    int any_ssh = 0, any_own_key = 0;
    enum fleet_err rc;

    for (uint32_t i = 0; i < fleet->group_count; i++) {
        struct device_group *g = &fleet->groups[i];
        any_ssh |= g->cfg.ssh;
        any_own_key |= g->cfg.ssh && g->cfg.host_key_per_device;
    }
    if (!any_ssh) {
        return FLEET_OK;
    }
    ssh_init();
    fleet->ssh_started = 1;
    for (uint32_t i = 0; i < fleet->group_count; i++) {
        struct device_group *g = &fleet->groups[i];
        if (g->cfg.ssh && g->cfg.authorized_keys &&
            (rc = load_authorized_keys(g, g->cfg.authorized_keys, err, err_len))) {
            return rc;
        }
    }
    if (cfg->host_key) {
        snprintf(ed, sizeof ed, "%s", cfg->host_key);
        rsa[0] = '\0';
    } else {
        if ((rc = state_dir(cfg, dir, sizeof dir, err, err_len))) {
            return rc;
        }
        snprintf(ed, sizeof ed, "%s/ssh_host_ed25519_key", dir);
        snprintf(rsa, sizeof rsa, "%s/ssh_host_rsa_key", dir);
        if ((rc = ensure_key(ed, SSH_KEYTYPE_ED25519, 0, err, err_len)) ||
            (rc = ensure_key(rsa, SSH_KEYTYPE_RSA, 3072, err, err_len))) {
            return rc;
        }
    }
    if (any_own_key && (rc = ssh_link_load_secret(cfg, fleet->ssh_secret, err, err_len))) {
        return rc;
    }
    for (uint32_t i = 0; i < cfg->threads; i++) {
        /* One bind per worker: accepting copies the keys from it, and binds are not shared across threads. */
        ssh_bind b = ssh_bind_new();
        if (!b || ssh_bind_options_set(b, SSH_BIND_OPTIONS_HOSTKEY, ed) != SSH_OK ||
            (rsa[0] && ssh_bind_options_set(b, SSH_BIND_OPTIONS_HOSTKEY, rsa) != SSH_OK)) {
            snprintf(err, err_len, "cannot load the SSH host key %s: %s", ed,
                     b ? ssh_get_error(b) : "out of memory");
            if (b) {
                ssh_bind_free(b);
            }
            return FLEET_ERR_INVAL;
        }
        fleet->workers[i].ssh_bind = b;
    }
    return FLEET_OK;
}

void
ssh_link_fleet_close(struct fleet *fleet)
{
    for (uint32_t i = 0; fleet->workers && i < fleet->cfg.threads; i++) {
        if (fleet->workers[i].ssh_bind) {
            ssh_bind_free(fleet->workers[i].ssh_bind);
            fleet->workers[i].ssh_bind = NULL;
        }
    }
    for (uint32_t i = 0; fleet->devices && i < fleet->cfg.device_count; i++) {
        if (fleet->devices[i].ssh_bind) {
            ssh_bind_free(fleet->devices[i].ssh_bind);
            fleet->devices[i].ssh_bind = NULL;
        }
    }
    for (uint32_t g = 0; fleet->groups && g < fleet->group_count; g++) {
        struct device_group *grp = &fleet->groups[g];
        for (uint32_t i = 0; i < grp->authorized_key_count; i++) {
            ssh_key_free(grp->authorized_keys[i]);
        }
        free(grp->authorized_keys);
        grp->authorized_keys = NULL;
        grp->authorized_key_count = 0;
    }
    if (fleet->ssh_started) {
        ssh_finalize();
        fleet->ssh_started = 0;
    }
}
