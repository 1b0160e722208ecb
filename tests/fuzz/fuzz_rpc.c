/*
 * Fuzz harness of RPC dispatch: each input is one NETCONF message (what the
 * framing layer hands over, without framing) processed by rpc_process() on
 * an active session of a real device, so every operation runs against the
 * device's datastores: get and get-config with subtree and XPath filters,
 * edit-config through the fast path and the full path into the device's
 * overlay, lock, unlock, commit, discard-changes, copy-config,
 * delete-config, validate, kill-session, close-session, get-schema,
 * create-subscription and the NMDA operations. The session's transport is one
 * end of a socketpair that is never read or written (replies stay queued);
 * the device is reset after every input.
 *
 * Checked beyond memory safety: whatever the message, the session stays up
 * (or closes gracefully after close-session) and the first thing queued after
 * the hello is one whole end-of-message framed <rpc-reply>.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz_fleet.h"
#include "reply_scan.h"
#include "rpc.h"

/* A base:1.0 client hello: the session then takes messages as they are, end-of-message framed. */
static const char fz_hello[] = "<hello xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\"><capabilities>"
                               "<capability>urn:ietf:params:netconf:base:1.0</capability>"
                               "</capabilities></hello>]]>]]>";

FZ_FLEET_INITIALIZE(NULL)

/* Every message is answered: one <rpc-reply> right after the hello, the session still up. */
/* An RPC's output elements straight under <rpc-reply> (RFC 6241 4.2; establish-subscription's <id>): the
 * start tag is followed by an element, not by its end tag. Attribute values never hold a raw '>' here. */
static int
fz_has_output(const char *reply, const char *end)
{
    const char *gt = memchr(reply, '>', (size_t)(end - reply));

    return gt && gt + 2 < end && gt[-1] != '/' && gt[1] == '<' && gt[2] != '/';
}

static void
fz_check_reply(struct session *s, size_t hello_len)
{
    static const char eom[] = "]]>]]>";
    struct sbuf all = {0};
    const char *out;
    size_t len;
    const char *end;
    struct reply_info info;

    /* The queue may hold several segments (a get-schema text by reference): read them all. */
    while ((len = outq_peek(&s->out, &out)) > 0) {
        sbuf_add(&all, out, len);
        outq_consume(&s->out, len);
    }
    out = all.buf;
    len = all.len;

    if (s->state != SESS_ACTIVE && s->state != SESS_CLOSING) {
        abort(); /* only running out of memory may drop a session here */
    }
    if (len <= hello_len || !(end = memmem(out + hello_len, len - hello_len, eom, sizeof eom - 1)) ||
        reply_scan(out + hello_len, (size_t)(end - out) - hello_len, &info) != REPLY_RPC_REPLY ||
        (!info.ok && !info.data && !info.error_count && !fz_has_output(out + hello_len, end))) {
        fprintf(stderr, "fuzz: not one rpc-reply: %.*s\n", (int)(len - hello_len), out + hello_len);
        abort();
    }
    sbuf_free(&all);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fds[2];
    char *msg;
    struct session *s;
    size_t hello_len;

    if (size > FZ_MAX_INPUT_BYTES || !(msg = malloc(size + 1))) {
        return -1;
    }
    memcpy(msg, data, size);
    msg[size] = '\0';
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds)) {
        abort();
    }
    sess_start(fz_device(), fds[0]);
    s = fz_device()->sessions;
    if (!s || sess_consume(s, fz_hello, sizeof fz_hello - 1) || s->state != SESS_ACTIVE) {
        abort(); /* the harness's own setup failed: nothing would be tested */
    }
    hello_len = outq_pending(&s->out);
    rpc_process(s, msg, size);
    fz_check_reply(s, hello_len);
    fz_device_reset();
    close(fds[1]);
    free(msg);
    return 0;
}
