/*
 * Which transport a connection runs: plain TCP, SSH, TLS (--tls true, never
 * detected: a TLS server waits for the client's first message), or detected
 * from the server's first bytes (the default without --ssh). An SSH server speaks
 * first with its version line ("SSH-2.0-...", RFC 4253 4.2); a NETCONF
 * server over TCP usually speaks first too, with its <hello>. After the TCP
 * connect this pseudo-transport waits for the socket to become readable and
 * looks at those bytes with recv(MSG_PEEK), leaving them in the socket: libssh
 * reads the version line itself and cannot be handed bytes already read.
 * Then it hands the connection to the TCP or the SSH transport.
 *
 * A server silent for CONN_DETECT_GRACE_MS (a TCP server waiting for the
 * client's hello) is taken for TCP, and the run remembers that: later
 * connections do not wait again. Should such a connection then hear an SSH
 * version line after all (a loaded SSH server late with its banner), it is
 * reconnected once over SSH. With an explicit --ssh the same look finds a
 * mismatch and names the option to use, in one line.
 *
 * conn_transport_set() registers the detection as the transport every
 * connection begins with; its choose() picks TLS, SSH, TCP or itself. TCP
 * chosen without the server having spoken runs wrapped in a banner check
 * (tcp_checked_transport): the first bytes are peeked like the detection's,
 * and an SSH version line there fails the connection or restarts it over
 * SSH before the TCP transport reads them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "conn.h"
#include "conn_internal.h"

/* How long a silent server is given to speak before it is taken for TCP (auto) or SSH is started anyway. */
#define CONN_DETECT_GRACE_MS 1000u
/* Bytes looked at; a version line has at most 255 (RFC 4253 4.2), a quote of them is shorter. */
#define CONN_DETECT_PEEK_BYTES 256
/* Characters of the server's first line quoted in a mismatch message. */
#define CONN_DETECT_QUOTE_CHARS 48

/* What the run learned about its servers; one loop, one thread. */
enum conn_detect_learned {
    DETECT_LEARNED_NOTHING, /* no server was silent, none spoke SSH yet */
    DETECT_LEARNED_SSH,     /* a server spoke SSH: a silent one is slow, not TCP; wait the message timeout */
    DETECT_LEARNED_SILENT,  /* a server was silent for the grace period: do not wait for the next ones */
};

/* Process-wide state: set by conn_transport_set() before any connection, then updated by the loop's thread.
 */
static struct {
    enum conn_transport_mode mode;    /* --ssh true, false, or left out; --tls true */
    enum conn_detect_learned learned; /* auto and SSH: what earlier connections showed */
    uint64_t tcp;                     /* connections handed to plain TCP */
    uint64_t ssh;                     /* connections handed to SSH */
    uint64_t tls;                     /* connections started over TLS */
    char json[256];                   /* conn_transport_json()'s answer */
} detect;

static const struct conn_transport detect_transport;
static const struct conn_transport tcp_checked_transport;

void
conn_transport_set(enum conn_transport_mode mode)
{
    detect.mode = mode;
    detect.learned = DETECT_LEARNED_NOTHING;
    detect.tcp = 0;
    detect.ssh = 0;
    detect.tls = 0;
    conn_transport_first(&detect_transport);
}

const char *
conn_transport_used(void)
{
    if (detect.tls) {
        return "tls"; /* the run's only transport: --tls excludes the others */
    }
    if (detect.tcp && detect.ssh) {
        return "tcp+ssh";
    }
    return detect.ssh ? "ssh" : detect.tcp ? "tcp" : "none";
}

const char *
conn_transport_json(void)
{
    static const char *const modes[] = {"tcp", "ssh", "auto", "tls"};
    int ssh = detect.mode == CONN_TRANSPORT_SSH || (detect.mode == CONN_TRANSPORT_AUTO && detect.ssh);

    int n =
        snprintf(detect.json, sizeof detect.json, "\"ssh\":%s,\"transport\":\"%s\",\"transport_used\":\"%s\"",
                 ssh ? "true" : "false", modes[detect.mode], conn_transport_used());

    if (detect.mode == CONN_TRANSPORT_TLS && n > 0 && (size_t)n < sizeof detect.json) {
        unsigned long full, resumed;
        conn_tls_handshakes(&full, &resumed);
        snprintf(detect.json + n, sizeof detect.json - (size_t)n,
                 ",\"tls_handshakes_full\":%lu,\"tls_handshakes_resumed\":%lu", full, resumed);
    }
    return detect.json;
}

enum conn_detect_kind
conn_detect_classify(const char *buf, size_t len)
{
    size_t i = 0;

    if (!len) {
        return CONN_DETECT_UNKNOWN;
    }
    /* A prefix of "SSH-" is taken for it: the rest of the line is on its way. */
    if (!strncmp(buf, "SSH-", len < 4 ? len : 4)) {
        return CONN_DETECT_SSH;
    }
    for (size_t j = 0; j + 5 <= len; j++) {
        if (buf[j] == '\n' && !strncmp(buf + j + 1, "SSH-", 4)) {
            return CONN_DETECT_SSH; /* RFC 4253 4.2: a server may send other lines before its version */
        }
    }
    if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3)) {
        i = 3; /* a UTF-8 byte order mark before the XML */
    }
    while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n')) {
        i++;
    }
    return i < len && buf[i] == '<' ? CONN_DETECT_XML : CONN_DETECT_UNKNOWN;
}

size_t
conn_detect_quote(const char *buf, size_t len, char *out, size_t out_len)
{
    size_t n = 0;

    for (size_t i = 0; i < len && buf[i] != '\r' && buf[i] != '\n' && n < CONN_DETECT_QUOTE_CHARS; i++) {
        unsigned char ch = (unsigned char)buf[i];
        if (n + 1 >= out_len) {
            break;
        }
        out[n++] = ch >= 0x20 && ch < 0x7f ? (char)ch : '.';
    }
    if (n + 4 < out_len && n == CONN_DETECT_QUOTE_CHARS) {
        memcpy(out + n, "...", 3);
        n += 3;
    }
    if (out_len) {
        out[n] = '\0';
    }
    return n;
}

/* The transport is known: re-arm the message timeout for its set-up and start it. */
static void
hand_over(struct conn *c, const struct conn_transport *tr)
{
    c->tr = tr;
    if (tr == &conn_ssh_transport) {
        detect.ssh++;
    } else {
        detect.tcp++;
    }
    conn_expect(c);
    tr->open(c);
}

/* The detection's choose(): the transport a connection begins with. Resets c->heard and c->silent. */
static const struct conn_transport *
detect_choose(struct conn *c)
{
    c->heard = 0;
    c->silent = 0;
    if (detect.mode == CONN_TRANSPORT_TLS) {
        detect.tls++;
        return &conn_tls_transport;
    }
    if (detect.mode == CONN_TRANSPORT_TCP || c->preamble ||
        (detect.mode == CONN_TRANSPORT_AUTO && detect.learned == DETECT_LEARNED_SILENT)) {
        /* --tcp-preamble implies TCP (netconfd's tcp-direct speaks only after it). */
        c->silent = detect.mode == CONN_TRANSPORT_AUTO && !c->preamble;
        detect.tcp++;
        return &tcp_checked_transport;
    }
    if (detect.mode == CONN_TRANSPORT_SSH && detect.learned == DETECT_LEARNED_SILENT) {
        c->silent = 1;
        detect.ssh++;
        return &conn_ssh_transport;
    }
    return &detect_transport;
}

static void
mismatch(struct conn *c, const char *buf, size_t len, enum conn_detect_kind kind)
{
    char quote[CONN_DETECT_QUOTE_CHARS + 8];
    char detail[256];

    conn_detect_quote(buf, len, quote, sizeof quote);
    if (kind == CONN_DETECT_SSH && c->preamble) {
        snprintf(detail, sizeof detail,
                 "the server speaks SSH: \"%s\"; --tcp-preamble is for plain TCP: leave it out, and --ssh "
                 "too to detect the transport",
                 quote);
    } else if (kind == CONN_DETECT_SSH) {
        snprintf(detail, sizeof detail,
                 "the server speaks SSH: \"%s\"; use --ssh true, or leave --ssh out to detect it", quote);
    } else {
        snprintf(detail, sizeof detail,
                 "the server speaks NETCONF over plain TCP: it sent \"%s\"; use --ssh false, or leave --ssh "
                 "out to detect it",
                 quote);
    }
    conn_fail(c, CONN_FAIL_TRANSPORT, detail);
}

/*
 * The first bytes over TCP, peeked (the TCP transport reads them after): an SSH version line fails the
 * connection (CONN_FAIL_TRANSPORT), or restarts it over SSH when TCP was only assumed because the server
 * was silent. Returns 1 when the connection was failed or restarted.
 */
static int
tcp_heard(struct conn *c)
{
    char buf[CONN_DETECT_PEEK_BYTES];
    ssize_t n = recv(c->fd, buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT);
    size_t len;

    if (n <= 0) {
        return 0; /* nothing yet, the server closed, or an error: the TCP transport's read reports it */
    }
    len = (size_t)n;
    c->heard = 1;
    if (conn_detect_classify(buf, len) != CONN_DETECT_SSH) {
        return 0;
    }
    if (c->silent) {
        /* Taken for TCP only because it was silent: it is a slow SSH server. Once, over SSH this time. */
        detect.learned = DETECT_LEARNED_SSH;
        detect.tcp--;
        detect.ssh++;
        conn_restart(c, &conn_ssh_transport);
        return 1;
    }
    mismatch(c, buf, len, CONN_DETECT_SSH);
    return 1;
}

static void
on_grace(struct loop *loop, struct loop_timer *timer)
{
    struct conn *c = (struct conn *)((char *)timer - offsetof(struct conn, timer));

    (void)loop;
    c->silent = 1;
    detect.learned = DETECT_LEARNED_SILENT;
    hand_over(c, detect.mode == CONN_TRANSPORT_SSH ? &conn_ssh_transport : &tcp_checked_transport);
}

static int
detect_open(struct conn *c)
{
    uint32_t grace_ms = c->timeout_ms < CONN_DETECT_GRACE_MS ? c->timeout_ms : CONN_DETECT_GRACE_MS;

    c->state = CONN_HANDSHAKE;
    loop_set_events(c->loop, c->fd, LOOP_READ);
    /* Once a server spoke SSH, a silent one is a slow one: the message timeout (armed) bounds the wait. */
    if (detect.mode == CONN_TRANSPORT_SSH || detect.learned != DETECT_LEARNED_SSH) {
        loop_timer_start(c->loop, &c->timer, loop_clock_monotonic() + (monotime_us)grace_ms * 1000u,
                         on_grace);
    }
    return 0;
}

static void
detect_io(struct conn *c, uint32_t events)
{
    char buf[CONN_DETECT_PEEK_BYTES];
    enum conn_detect_kind kind;
    ssize_t n;

    if (!(events & LOOP_READ)) {
        return;
    }
    n = recv(c->fd, buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0) {
        if (errno != EAGAIN && errno != EINTR) {
            char detail[128];
            snprintf(detail, sizeof detail, "recv: %s", strerror(errno));
            conn_fail(c, CONN_FAIL_RESET, detail);
        }
        return;
    }
    if (n == 0) {
        conn_fail(c, CONN_FAIL_CLOSED, "server closed the connection before sending anything");
        return;
    }
    c->heard = 1;
    kind = conn_detect_classify(buf, (size_t)n);
    if (detect.mode == CONN_TRANSPORT_SSH) {
        /* Anything but XML may be lines before the version (RFC 4253 4.2): libssh judges those. */
        if (kind == CONN_DETECT_XML) {
            mismatch(c, buf, (size_t)n, kind);
            return;
        }
        hand_over(c, &conn_ssh_transport);
        return;
    }
    if (kind == CONN_DETECT_SSH) {
        detect.learned = DETECT_LEARNED_SSH;
        hand_over(c, &conn_ssh_transport);
        return;
    }
    hand_over(c, &conn_tcp_transport); /* its hello, or bytes the hello parser will name */
}

static int
detect_send(struct conn *c, const char *bytes, size_t len)
{
    /* Nothing is sent before the transport is known; whatever comes is written by it. */
    if (outq_add(&c->out, bytes, len)) {
        conn_fail(c, CONN_FAIL_RESOURCES, "out of memory queueing a request");
        return -1;
    }
    return 0;
}

static const char *
detect_timeout_hint(const struct conn *c)
{
    return c->heard ? "" : " (the server sent nothing: neither an SSH version line nor a NETCONF hello)";
}

static const struct conn_transport detect_transport = {
    .open = detect_open,
    .io = detect_io,
    .send = detect_send,
    .close = NULL,
    .choose = detect_choose,
    .timeout_hint = detect_timeout_hint,
};

/* TCP with the banner check in front of its first read; the TCP transport does all the rest. */
static int
tcp_checked_open(struct conn *c)
{
    return conn_tcp_transport.open(c);
}

static void
tcp_checked_io(struct conn *c, uint32_t events)
{
    if ((events & LOOP_READ) && !c->heard && tcp_heard(c)) {
        return; /* an SSH server: failed, or connecting again over SSH */
    }
    conn_tcp_transport.io(c, events);
}

static int
tcp_checked_send(struct conn *c, const char *bytes, size_t len)
{
    return conn_tcp_transport.send(c, bytes, len);
}

static const struct conn_transport tcp_checked_transport = {
    .open = tcp_checked_open,
    .io = tcp_checked_io,
    .send = tcp_checked_send,
    .close = NULL,
    .choose = NULL,
    .timeout_hint = NULL,
};
