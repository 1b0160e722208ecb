/*
 * One client NETCONF connection on the stress client's event loop: a
 * non-blocking connect, an optional preamble, the hello exchange (base:1.1
 * chunked framing unless the server or --legacy-framing says base:1.0),
 * queued output written as soon as possible, and complete incoming
 * messages handed to the workload. Every failure is reported once, with
 * its cause.
 */
#ifndef STRESS_CONN_H
#define STRESS_CONN_H

#include <stddef.h>
#include <stdint.h>

#include <libyang/libyang.h>

#include "frame.h"
#include "hello.h"
#include "loop.h"
#include "netaddr.h"
#include "outq.h"
#include "sbuf.h"

enum conn_state {
    CONN_IDLE,       /* not started */
    CONN_CONNECTING, /* connect() in progress */
    CONN_HANDSHAKE,  /* connected; the transport's detection or own set-up (SSH: keys, login, channel) */
    CONN_HELLO,      /* connected, waiting for the server's hello */
    CONN_READY,      /* hello exchanged; requests may flow */
    CONN_CLOSED,     /* closed (by us or on failure); no callbacks any more */
};

/* Why a connection ended before it was closed on purpose. */
enum conn_failure {
    CONN_FAIL_NONE = 0,  /* closed on purpose */
    CONN_FAIL_REFUSED,   /* connection refused */
    CONN_FAIL_TIMEOUT,   /* no progress within the message timeout */
    CONN_FAIL_BAD_HELLO, /* the server's hello was not acceptable */
    CONN_FAIL_CLOSED,    /* the server closed the connection */
    CONN_FAIL_RESET,     /* the connection broke (reset, unreachable, ...) */
    CONN_FAIL_FRAMING,   /* the server broke the framing */
    CONN_FAIL_RESOURCES, /* out of descriptors or memory on our side */
    CONN_FAIL_AUTH,      /* SSH: the server refused our credentials */
    CONN_FAIL_SSH,       /* SSH: key exchange, channel or netconf subsystem failed */
    CONN_FAIL_TRANSPORT, /* --ssh true|false does not match what the server speaks */
    CONN_FAIL_TLS,       /* TLS: the handshake failed (certificates, versions) or a TLS alert arrived */
    CONN_FAIL_COUNT,
};

struct conn;
struct conn_transport;
struct conn_ssh;
struct conn_tls;

struct conn_callbacks {
    void (*ready)(struct conn *c);                                             /* hello exchanged */
    void (*message)(struct conn *c, const char *msg, size_t len);              /* one complete message */
    void (*failed)(struct conn *c, enum conn_failure why, const char *detail); /* ended unexpectedly */
    void (*drained)(
        struct conn *c); /* after the messages of one read: the moment to send more, in one write */
};

struct conn {
    enum conn_state state;           /* lifecycle */
    int fd;                          /* socket, -1 when closed */
    struct loop *loop;               /* the client's loop */
    struct ly_ctx *xml_ctx;          /* for parsing the hello (no schemas needed) */
    const struct conn_callbacks *cb; /* the workload's callbacks */
    void *user;                      /* the workload's per-connection state */
    const struct net_family *fam;    /* the server address's family and IPv6 prefix (not owned) */
    uint32_t addr;                   /* server IPv4, or the low 32 bits of its IPv6 address; host order */
    uint16_t port;                   /* server port */
    int legacy_framing;              /* 1: offer only base:1.0 */
    const char *preamble;            /* bytes sent before the hello, or NULL (not owned) */
    size_t preamble_len;             /* its length */
    struct frame_decoder dec;        /* input framing */
    enum frame_mode out_mode;        /* output framing after the hello */
    struct outq out;                 /* unsent output */
    struct loop_timer timer;         /* message timeout; armed while waiting for the server */
    uint32_t timeout_ms;             /* message timeout */
    struct hello_info server_hello;  /* the server's hello, kept after CONN_READY */
    enum conn_failure early_failure; /* connect() failed at once: reported from the timer */
    int early_errno;                 /* its errno */
    monotime_us started_us;          /* conn_start() */
    monotime_us ready_us;            /* hello exchanged */
    const struct conn_transport *tr; /* TCP, SSH or TLS; chosen by conn_start() */
    struct conn_ssh *ssh;            /* SSH state from CONN_HANDSHAKE until closed; NULL otherwise */
    struct conn_tls *tls;            /* TLS state from CONN_HANDSHAKE until closed; NULL otherwise */
    uint8_t heard;                   /* 1 once the server's first bytes were seen (peeked or read) */
    uint8_t silent;                  /* 1: the transport was chosen without the server having spoken */
    void (*hello_seen)(struct conn *c, const char *msg,
                       size_t len); /* set before conn_start(): the server's hello as received, or NULL */
};

/* How connections choose their transport (--ssh true, false, or left out; --tls true). */
enum conn_transport_mode {
    CONN_TRANSPORT_TCP,  /* plain TCP; an SSH server is reported as CONN_FAIL_TRANSPORT */
    CONN_TRANSPORT_SSH,  /* SSH; a server sending XML first is reported as CONN_FAIL_TRANSPORT */
    CONN_TRANSPORT_AUTO, /* from the server's first bytes, per connection (conn_detect.c) */
    CONN_TRANSPORT_TLS,  /* TLS (RFC 7589); not detected: a TLS server waits for the client to speak */
};

/**
 * @brief Prepare SSH (subsystem "netconf") for the connections that will run it; call once before any
 * conn_start() when conn_transport_set() chooses SSH or detection.
 * The server's host key is not verified: this is a test tool. With @p key_path, public key
 * authentication is tried first and the password only when the key is refused.
 * @param[in] user Login name (not copied; must outlive the connections).
 * @param[in] password Password (not copied).
 * @param[in] key_path Private key file, or NULL.
 * @param[out] err Why it failed.
 * @return 0, or -1 (the key could not be read).
 */
int conn_ssh_setup(const char *user, const char *password, const char *key_path, char *err, size_t err_len);

/** @brief Release what conn_ssh_setup() loaded, after every connection was closed. Harmless without setup. */
void conn_ssh_cleanup(void);

/**
 * @brief Prepare TLS for the connections that will run it; call once before any conn_start() when
 * conn_transport_set() chooses CONN_TRANSPORT_TLS.
 * @param[in] cert_path The client certificate (PEM, maybe followed by its chain), or NULL for none.
 * @param[in] key_path Its private key (PEM, unencrypted), or NULL; given with cert_path.
 * @param[in] ca_path The CA (PEM) the servers' certificates must chain to, or NULL for the system's CAs.
 * @param[in] verify_host 1: the server's certificate must also name the address connected to.
 * @param[in] resume 1: remember each target's session and resume it on the next connection there.
 * @param[out] err Why it failed: the option, the file and OpenSSL's reason.
 * @return 0, or -1 (a file could not be read or the key does not match the certificate).
 */
int conn_tls_setup(const char *cert_path, const char *key_path, const char *ca_path, int verify_host,
                   int resume, char *err, size_t err_len);

/** @brief TLS handshakes completed so far: @p full ones and @p resumed ones (a remembered session). */
void conn_tls_handshakes(unsigned long *full, unsigned long *resumed);

/** @brief Release what conn_tls_setup() made, after every connection was closed. Harmless without setup. */
void conn_tls_cleanup(void);

/**
 * @brief Choose how every later connection picks its transport (default CONN_TRANSPORT_TCP); call once
 * before any conn_start(). CONN_TRANSPORT_AUTO looks at the server's first bytes; a server silent for
 * a second is taken for TCP and later connections no longer wait. A connection with a preamble runs TCP.
 */
void conn_transport_set(enum conn_transport_mode mode);

/** @return What the connections so far were handed to: "ssh", "tcp", "tcp+ssh", "tls" or "none". */
const char *conn_transport_used(void);

/**
 * @return The manifest's transport fields, without braces: "ssh":true|false (SSH was used),
 * "transport":"auto|tcp|ssh|tls" (as asked) and "transport_used" (conn_transport_used()). A static buffer,
 * overwritten by the next call.
 */
const char *conn_transport_json(void);

/**
 * @brief Start connecting to @p addr (in @p fam, which must outlive the connection) and @p port. Progress
 * and failures arrive through @p cb.
 * @return 0, or -1 when the socket could not even be created (nothing is reported then).
 */
int conn_start(struct conn *c, struct loop *loop, struct ly_ctx *xml_ctx, const struct net_family *fam,
               uint32_t addr, uint16_t port, const struct conn_callbacks *cb, void *user);

/**
 * @brief Queue bytes exactly as given (already framed, see conn_frame()) and write what the socket takes.
 * @return 0, or -1 when the connection failed (reported through the callback).
 */
int conn_send(struct conn *c, const char *bytes, size_t len);

/**
 * @brief Append one message, framed for this connection, to @p b (for building requests in advance).
 * Only valid after CONN_READY.
 */
void conn_frame(const struct conn *c, struct sbuf *b, const char *xml, size_t len);

/** @brief (Re)arm the message timeout from now; a connection waiting longer fails with CONN_FAIL_TIMEOUT. */
void conn_expect(struct conn *c);

/** @brief Stop the message timeout (nothing outstanding). */
void conn_idle(struct conn *c);

/** @brief Close on purpose (no callback follows) and release everything, the server's hello too.
 * Accepts closed and never started connections; every connection ends with it. */
void conn_close(struct conn *c);

/** @return A short name of a failure cause ("refused", "timeout", ...). */
const char *conn_failure_name(enum conn_failure why);

#endif
