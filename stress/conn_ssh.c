/*
 * NETCONF over SSH for the stress client (RFC 6242), on the same epoll loop
 * as plain TCP. conn.c makes the TCP connection; this file then gives the
 * socket to a libssh client session in non-blocking mode and walks its
 * set-up one step per readiness event: key exchange (ssh_connect), login
 * (public key, then password), a session channel and the "netconf"
 * subsystem. Every libssh call there returns SSH_AGAIN (or
 * SSH_AUTH_AGAIN) until its answer has arrived, and is simply called again.
 *
 * No libssh callbacks are registered: input is pulled with
 * ssh_channel_poll / ssh_channel_read_nonblocking after libssh returns, so
 * the workload may close the connection while handling a message without
 * freeing anything libssh is still using. Output goes into the channel as
 * far as the server's window allows; the rest waits in the connection's
 * queue until a window adjust arrives with the next input.
 *
 * Before this file's set-up starts, conn_detect.c may have peeked at the
 * server's version line, leaving it in the socket for libssh to read.
 *
 * The server's host key is not verified (a test tool against simulated
 * devices). Each connection has its own libssh session (~tens of KiB);
 * thousands of them in one process cost memory, not threads.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <netinet/in.h>

#include <libssh/libssh.h>

#include "conn.h"
#include "conn_internal.h"

/* Bytes moved into the channel per write call (libssh splits packets itself). */
#define CONN_SSH_WRITE_CHUNK 32768u
/*
 * Times per readiness event libssh reads the socket (each read is one buffer of libssh's, a few KiB)
 * before yielding to other connections. What a read leaves in the channel is always consumed, so the
 * level-triggered loop wakes this connection again for whatever is still in the socket.
 */
#define CONN_SSH_MAX_PUMPS_PER_EVENT 64

/* The steps of the set-up, in order; each is retried until libssh says it is done. */
enum conn_ssh_step {
    CONN_SSH_KEX,           /* ssh_connect: version exchange and key exchange */
    CONN_SSH_AUTH_KEY,      /* ssh_userauth_publickey with --ssh-key */
    CONN_SSH_AUTH_PASSWORD, /* ssh_userauth_password */
    CONN_SSH_CHANNEL_OPEN,  /* ssh_channel_open_session */
    CONN_SSH_SUBSYSTEM,     /* ssh_channel_request_subsystem "netconf" */
    CONN_SSH_RUNNING,       /* the channel carries NETCONF */
};

struct conn_ssh {
    ssh_session ss;          /* libssh's session; owns the socket from conn_ssh open on */
    ssh_channel ch;          /* the NETCONF channel; NULL before CONN_SSH_CHANNEL_OPEN */
    enum conn_ssh_step step; /* where the set-up is */
    uint32_t events;         /* the events the loop watches for now (LOOP_READ | LOOP_WRITE) */
};

/* Process-wide settings: set once by conn_ssh_setup() before any connection, read-only afterwards. */
static struct {
    int enabled;          /* 1: conn_ssh_setup() ran (conn_detect.c decides which connections use SSH) */
    const char *user;     /* login name (not owned) */
    const char *password; /* password (not owned) */
    ssh_key key;          /* --ssh-key, or NULL; shared by all sessions of the one loop thread */
} settings;

int
conn_ssh_setup(const char *user, const char *password, const char *key_path, char *err, size_t err_len)
{
    ssh_init();
    settings.user = user;
    settings.password = password;
    if (key_path && ssh_pki_import_privkey_file(key_path, NULL, NULL, NULL, &settings.key) != SSH_OK) {
        snprintf(err, err_len, "--ssh-key %s: not a private key libssh reads (or unreadable, or encrypted)",
                 key_path);
        settings.key = NULL;
        return -1;
    }
    settings.enabled = 1;
    return 0;
}

void
conn_ssh_cleanup(void)
{
    if (!settings.enabled) {
        return;
    }
    ssh_key_free(settings.key);
    settings.key = NULL;
    settings.enabled = 0;
    ssh_finalize();
}

static void
fail_ssh(struct conn *c, enum conn_failure why, const char *what)
{
    char detail[256];

    /* Formatted before the failure tears the session down: the message lives in it. */
    snprintf(detail, sizeof detail, "%s: %s", what, c->ssh ? ssh_get_error(c->ssh->ss) : "(no session)");
    conn_fail(c, why, detail);
}

/* Watch the socket for reading, and for writing while libssh holds unsent bytes. */
static void
update_events(struct conn *c)
{
    uint32_t want = LOOP_READ;

    if (ssh_get_poll_flags(c->ssh->ss) & SSH_WRITE_PENDING) {
        want |= LOOP_WRITE;
    }
    if (want != c->ssh->events) {
        loop_set_events(c->loop, c->fd, want);
        c->ssh->events = want;
    }
}

/* Move queued output into the channel within the server's window. Returns -1 when the connection failed. */
static int
push(struct conn *c)
{
    struct conn_ssh *l = c->ssh;
    const char *data;
    size_t n;

    while ((n = outq_peek(&c->out, &data)) > 0) {
        uint32_t room = ssh_channel_window_size(l->ch);
        int written;
        if (!room) {
            break; /* the window adjust arrives as input; push() runs again after reading */
        }
        if (n > room) {
            n = room;
        }
        if (n > CONN_SSH_WRITE_CHUNK) {
            n = CONN_SSH_WRITE_CHUNK;
        }
        /* Within the window libssh sends without waiting; what the socket refuses stays in its buffer. */
        written = ssh_channel_write(l->ch, data, (uint32_t)n);
        if (written == SSH_ERROR) {
            fail_ssh(c, CONN_FAIL_RESET, "SSH write");
            return -1;
        }
        if (written <= 0) {
            break;
        }
        outq_consume(&c->out, (size_t)written);
    }
    update_events(c);
    return 0;
}

static int
ssh_send(struct conn *c, const char *bytes, size_t len)
{
    if (outq_add(&c->out, bytes, len)) {
        conn_fail(c, CONN_FAIL_RESOURCES, "out of memory queueing a request");
        return -1;
    }
    if (!c->ssh || c->ssh->step != CONN_SSH_RUNNING) {
        return 0; /* written once the channel runs */
    }
    return push(c);
}

/* One attempt at each remaining set-up step. Returns 1 when the channel runs, 0 to wait, -1 failed. */
static int
advance(struct conn *c)
{
    struct conn_ssh *l = c->ssh;
    char what[160];
    int rc;

    for (;;) {
        switch (l->step) {
        case CONN_SSH_KEX:
            rc = ssh_connect(l->ss);
            if (rc == SSH_AGAIN) {
                return 0;
            }
            if (rc != SSH_OK) {
                fail_ssh(c, CONN_FAIL_SSH, "SSH key exchange");
                return -1;
            }
            /* The host key is deliberately not checked (see --help). */
            l->step = settings.key ? CONN_SSH_AUTH_KEY : CONN_SSH_AUTH_PASSWORD;
            break;
        case CONN_SSH_AUTH_KEY:
            rc = ssh_userauth_publickey(l->ss, NULL, settings.key);
            if (rc == SSH_AUTH_AGAIN) {
                return 0;
            }
            if (rc == SSH_AUTH_ERROR) {
                fail_ssh(c, CONN_FAIL_SSH, "SSH public key authentication");
                return -1;
            }
            l->step = rc == SSH_AUTH_SUCCESS ? CONN_SSH_CHANNEL_OPEN : CONN_SSH_AUTH_PASSWORD;
            break;
        case CONN_SSH_AUTH_PASSWORD:
            rc = ssh_userauth_password(l->ss, NULL, settings.password);
            if (rc == SSH_AUTH_AGAIN) {
                return 0;
            }
            if (rc == SSH_AUTH_ERROR) {
                fail_ssh(c, CONN_FAIL_SSH, "SSH password authentication");
                return -1;
            }
            if (rc != SSH_AUTH_SUCCESS) {
                snprintf(what, sizeof what, "SSH authentication as \"%s\" refused (%s)", settings.user,
                         settings.key ? "public key and password" : "password");
                conn_fail(c, CONN_FAIL_AUTH, what);
                return -1;
            }
            l->step = CONN_SSH_CHANNEL_OPEN;
            break;
        case CONN_SSH_CHANNEL_OPEN:
            if (!l->ch && !(l->ch = ssh_channel_new(l->ss))) {
                conn_fail(c, CONN_FAIL_RESOURCES, "out of memory for an SSH channel");
                return -1;
            }
            rc = ssh_channel_open_session(l->ch);
            if (rc == SSH_AGAIN) {
                return 0;
            }
            if (rc != SSH_OK) {
                fail_ssh(c, CONN_FAIL_SSH, "SSH session channel");
                return -1;
            }
            l->step = CONN_SSH_SUBSYSTEM;
            break;
        case CONN_SSH_SUBSYSTEM:
            rc = ssh_channel_request_subsystem(l->ch, "netconf");
            if (rc == SSH_AGAIN) {
                return 0;
            }
            if (rc != SSH_OK) {
                fail_ssh(c, CONN_FAIL_SSH, "SSH netconf subsystem refused");
                return -1;
            }
            l->step = CONN_SSH_RUNNING;
            return 1;
        case CONN_SSH_RUNNING:
            return 1;
        }
    }
}

/* The channel runs: send the hello and whatever was queued meanwhile. */
static void
running(struct conn *c)
{
    struct conn_ssh *l = c->ssh;

    conn_stream_up(c);
    if (c->state != CONN_CLOSED && c->ssh == l) {
        push(c);
    }
}

static int
ssh_open(struct conn *c)
{
    struct conn_ssh *l = calloc(1, sizeof *l);
    char host[NETADDR_TEXT_BYTES];
    unsigned int port = c->port;
    bool no = false;
    int rc;

    if (!l || !(l->ss = ssh_new())) {
        free(l);
        conn_fail(c, CONN_FAIL_RESOURCES, "out of memory for an SSH session");
        return -1;
    }
    c->ssh = l;
    c->state = CONN_HANDSHAKE;
    l->events = LOOP_WRITE; /* what conn_start() watched for (the detection's LOOP_READ is set again below) */
    netaddr_text(c->fam, c->addr, host, sizeof host); /* bare, as libssh takes an IPv6 host */
    /*
     * No ~/.ssh/config and no known_hosts: the run must not depend on the user's files, and reading
     * them again for every one of thousands of sessions would cost more than the key exchange.
     */
    if (ssh_options_set(l->ss, SSH_OPTIONS_PROCESS_CONFIG, &no) != SSH_OK ||
        ssh_options_set(l->ss, SSH_OPTIONS_KNOWNHOSTS, "/dev/null") != SSH_OK ||
        ssh_options_set(l->ss, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null") != SSH_OK ||
        ssh_options_set(l->ss, SSH_OPTIONS_HOST, host) != SSH_OK ||
        ssh_options_set(l->ss, SSH_OPTIONS_PORT, &port) != SSH_OK ||
        ssh_options_set(l->ss, SSH_OPTIONS_USER, settings.user) != SSH_OK ||
        ssh_options_set(l->ss, SSH_OPTIONS_FD, &c->fd) != SSH_OK) {
        fail_ssh(c, CONN_FAIL_RESOURCES, "SSH options");
        return -1;
    }
    ssh_set_blocking(l->ss, 0);
    rc = advance(c);
    if (rc < 0) {
        return -1;
    }
    update_events(c);
    if (rc > 0) {
        running(c);
    }
    return c->state == CONN_CLOSED ? -1 : 0;
}

/* Consume what the channel holds and what the socket brings, a bounded number of socket reads. */
static void
read_channel(struct conn *c)
{
    struct conn_ssh *l = c->ssh;
    size_t cap;
    char *buf = conn_read_buffer(&cap);

    for (int i = 0; i < CONN_SSH_MAX_PUMPS_PER_EVENT; i++) {
        /* Reads the socket once when the channel holds nothing, then says how much it holds. */
        int avail = ssh_channel_poll(l->ch, 0);
        if (avail == SSH_EOF) {
            conn_fail(c, CONN_FAIL_CLOSED,
                      frame_decoder_partial(&c->dec) ? "server closed the SSH channel mid-message"
                                                     : "server closed the SSH channel");
            return;
        }
        if (avail == SSH_ERROR) {
            fail_ssh(c, ssh_is_connected(l->ss) ? CONN_FAIL_RESET : CONN_FAIL_CLOSED, "SSH read");
            return;
        }
        if (avail == 0) {
            return;
        }
        while (avail > 0) {
            uint32_t want = (size_t)avail < cap ? (uint32_t)avail : (uint32_t)cap;
            int n = ssh_channel_read_nonblocking(l->ch, buf, want, 0);
            if (n == SSH_ERROR) {
                fail_ssh(c, CONN_FAIL_RESET, "SSH read");
                return;
            }
            if (n <= 0) {
                break;
            }
            avail -= n;
            conn_input(c, buf, (size_t)n);
            if (c->state == CONN_CLOSED || c->ssh != l) {
                return; /* the workload closed (or restarted) the connection */
            }
        }
        if (c->state == CONN_READY && c->cb->drained) {
            c->cb->drained(c);
            if (c->state == CONN_CLOSED || c->ssh != l) {
                return;
            }
        }
    }
}

static void
ssh_io(struct conn *c, uint32_t events)
{
    struct conn_ssh *l = c->ssh;

    if (l->step != CONN_SSH_RUNNING) {
        int rc = advance(c);
        if (rc < 0) {
            return;
        }
        update_events(c);
        if (rc == 0) {
            return;
        }
        running(c);
        if (c->state == CONN_CLOSED || c->ssh != l) {
            return;
        }
    }
    /* Unsent bytes in libssh's buffer go out first (this may also read input into the channel). */
    if ((events & LOOP_WRITE) && ssh_blocking_flush(l->ss, 0) == SSH_ERROR) {
        fail_ssh(c, CONN_FAIL_RESET, "SSH write");
        return;
    }
    read_channel(c);
    if (c->state == CONN_CLOSED || c->ssh != l) {
        return;
    }
    push(c); /* the input may have opened the window */
}

static void
ssh_close(struct conn *c)
{
    struct conn_ssh *l = c->ssh;

    if (!l) {
        return;
    }
    c->ssh = NULL;
    /*
     * No SSH_MSG_DISCONNECT (ssh_disconnect): the closed socket says the same. A libssh server closes
     * its socket as soon as that message arrives, before its own code has unwatched it, and fleetsim's
     * SSH link did not survive that (its next accepted socket reused the number). ssh_free frees the
     * channel and, in the libssh versions we know, closes the socket it was given.
     */
    ssh_free(l->ss);
    free(l);
    /* One thread: the descriptor cannot have been reused between the close and this check. */
    if (c->fd >= 0 && fcntl(c->fd, F_GETFD) < 0) {
        c->fd = -1;
    }
}

/* Only a connection handed over for silence (conn_detect.c) has a hint: the server may not speak SSH. */
static const char *
ssh_timeout_hint(const struct conn *c)
{
    if (c->heard || !c->silent) {
        return "";
    }
    return " (the server had sent no SSH version line within 1 s: if it speaks NETCONF over plain TCP, use "
           "--ssh false)";
}

const struct conn_transport conn_ssh_transport = {
    .open = ssh_open,
    .io = ssh_io,
    .send = ssh_send,
    .close = ssh_close,
    .choose = NULL,
    .timeout_hint = ssh_timeout_hint,
};
