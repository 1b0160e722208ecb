/*
 * End-to-end fuzz harness: the bytes a client sends over one whole session
 * (hello, the switch to chunked framing, RPCs, close-session) go through
 * the session layer of a real device exactly as read(2) would hand them
 * over, and the queued replies are then written out as before the loop
 * sleeps. The transport is a socketpair whose other end is drained and
 * closed; no listening socket, no thread and no timer ever runs.
 *
 * Input: the first byte sets how the rest is cut into reads (0: one read,
 * n: reads of n bytes), so framing is tried at every boundary; the rest is
 * the client's byte stream.
 *
 * Checked beyond memory safety: everything the device writes decodes as the
 * client would decode it (end-of-message framing for the hello, then the
 * framing the hellos agreed on), the first message is the device's <hello>,
 * and every later one is an <rpc-reply> or a <notification>.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "frame.h"
#include "fuzz_fleet.h"
#include "reply_scan.h"

/* The client's view of what the device wrote. */
struct fz_client {
    struct frame_decoder dec; /* the device's output, decoded */
    uint32_t messages;        /* messages decoded so far */
    int chunked;              /* 1 once the session switched to chunked framing */
};

/* With a notification file, create-subscription and replays have something to stream. */
FZ_FLEET_INITIALIZE(FLEETSIM_SCHEMA_DIR "/../notifications/odl-interface-events.xml")

/* Read whatever the device wrote (so the next flush finds room) and check it is what a client expects. */
static void
fz_drain(int fd, struct fz_client *c)
{
    char buf[16384];
    ssize_t n;

    while ((n = read(fd, buf, sizeof buf)) > 0) {
        const char *p = buf;
        size_t left = (size_t)n;
        while (left) {
            size_t used = 0;
            enum frame_status st = frame_decode(&c->dec, p, left, &used);
            const char *msg;
            size_t len;
            struct reply_info info;
            p += used;
            left -= used;
            if (st == FRAME_ERROR) {
                fprintf(stderr, "fuzz: the device's output does not decode: %s\n",
                        frame_decoder_error(&c->dec));
                abort();
            }
            if (st == FRAME_NEED_MORE) {
                break;
            }
            msg = frame_decoder_message(&c->dec, &len);
            reply_scan(msg, len, &info);
            if (c->messages++ == 0 ? !memmem(msg, len < 64 ? len : 64, "<hello", 6)
                                   : info.kind != REPLY_RPC_REPLY && info.kind != REPLY_NOTIFICATION) {
                fprintf(stderr, "fuzz: unexpected message %u from the device: %.*s\n", c->messages, (int)len,
                        msg);
                abort();
            }
            frame_decoder_next(&c->dec);
            if (c->messages == 1 && c->chunked) {
                frame_decoder_set_mode(&c->dec, FRAME_CHUNKED);
            }
        }
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fds[2];
    size_t step;
    struct session *s;
    struct worker *w = fz_device()->worker;
    struct fz_client c = {.messages = 0};

    if (size < 1 || size > FZ_MAX_INPUT_BYTES) {
        return -1;
    }
    step = data[0] ? data[0] : size;
    data++;
    size--;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds)) {
        abort();
    }
    sess_start(fz_device(), fds[0]);
    if (!(s = fz_device()->sessions)) {
        abort();
    }
    frame_decoder_init(&c.dec, SIZE_MAX);
    while (size) {
        size_t n = size < step ? size : step;
        /* A closed session is freed only at the safe point below, so s stays valid until then. */
        if (s->state >= SESS_CLOSING || sess_consume(s, (const char *)data, n)) {
            break;
        }
        data += n;
        size -= n;
        /* The device's hello went out in end-of-message framing; all after it in what was agreed. */
        c.chunked = s->out_mode == FRAME_CHUNKED;
        sess_worker_before_sleep(w->loop, w);
        fz_drain(fds[1], &c);
        /* The safe point may have freed it: a session that ended is no longer the device's. */
        if (!(s = fz_device()->sessions)) {
            break;
        }
    }
    /* What is still queued goes out as before the loop sleeps; a graceful close (close-session) ends there.
     */
    if (s) {
        c.chunked = s->out_mode == FRAME_CHUNKED;
    }
    sess_worker_before_sleep(w->loop, w);
    fz_drain(fds[1], &c);
    fz_device_reset();
    close(fds[1]);
    frame_decoder_close(&c.dec);
    return 0;
}
