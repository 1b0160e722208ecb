/*
 * Fuzz harness of the RFC 6242 frame decoder (wire/frame.h), the first code
 * that sees a NETCONF peer's bytes on both sides.
 *
 * Input: byte 0 chooses the start framing (bit 0: chunked), whether the
 * decoder switches to chunked after the first message as a session does
 * after the hello (bit 1), and whether messages are taken or dropped
 * (bit 2); byte 1 the message size limit (small, so the limit is hit
 * often); byte 2 seeds the cutting of the rest into reads. The rest is the
 * byte stream.
 *
 * The stream is decoded twice, in one read and in reads cut where the
 * seed says, each read copied to a heap block of exactly its size so that
 * reading past it trips ASan. Both must give the same messages and the
 * same end (error text or partial state): a peer may cut its writes
 * anywhere. Every message must respect the limit and its framing, and
 * must decode back to itself once framed again by frame_header() and
 * frame_trailer().
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "fuzz.h"

/* Longest input looked at; longer ones add nothing but time. */
#define FZ_MAX_INPUT_BYTES 65536
/* Control bytes in front of the stream. */
#define FZ_HEADER_BYTES 3
/* Longest read the cut feed makes. */
#define FZ_MAX_READ_BYTES 64

/* Everything one feed produced, in order. */
struct fz_feed {
    char *msgs;           /* the messages, each as its length (size_t), its bytes and its NUL */
    size_t msgs_len;      /* bytes used in msgs */
    size_t msgs_cap;      /* bytes allocated */
    size_t count;         /* messages */
    int error;            /* 1 when the decoder reported FRAME_ERROR */
    const char *why;      /* its error text */
    int partial;          /* frame_decoder_partial() at the end */
    enum frame_mode mode; /* framing at the end */
};

static uint32_t
fz_next(uint32_t *state)
{
    /* xorshift32; never reaches 0 from a non-zero state. */
    *state ^= *state << 13;
    *state ^= *state >> 17;
    *state ^= *state << 5;
    return *state;
}

/* Record one message (copies it). */
static void
fz_keep(struct fz_feed *f, const char *msg, size_t len)
{
    size_t need = sizeof len + len + 1;

    if (f->msgs_len + need > f->msgs_cap) {
        size_t cap = (f->msgs_len + need) * 2;
        char *p = realloc(f->msgs, cap);

        fz_require(p != NULL, "out of memory");
        f->msgs = p;
        f->msgs_cap = cap;
    }
    memcpy(f->msgs + f->msgs_len, &len, sizeof len);
    memcpy(f->msgs + f->msgs_len + sizeof len, msg, len + 1);
    f->msgs_len += need;
    f->count++;
}

/* A message must be non-empty, within the limit, NUL-terminated and free of its own end marker. */
static void
fz_check_message(const char *msg, size_t len, size_t max, enum frame_mode mode)
{
    fz_require(msg != NULL && len > 0, "empty message handed out");
    fz_require(len <= max, "message longer than the limit");
    fz_require(msg[len] == '\0', "message not NUL-terminated");
    if (mode == FRAME_EOM) {
        fz_require(memmem(msg, len, "]]>]]>", 6) == NULL, "EOM message contains the marker");
        fz_require(msg[0] != ' ' && msg[0] != '\t' && msg[0] != '\r' && msg[0] != '\n',
                   "EOM message starts with the whitespace between messages");
    }
}

/*
 * Feed @p len bytes as a session does, in reads of @p step bytes (0: seeded random 1..FZ_MAX_READ_BYTES),
 * each read in its own exactly sized heap block.
 */
static void
fz_run(const char *buf, size_t len, enum frame_mode start, int switch_after_first, int take, size_t max,
       uint32_t seed, int cut, struct fz_feed *f)
{
    struct frame_decoder d;
    size_t off = 0;

    memset(f, 0, sizeof *f);
    frame_decoder_init(&d, max);
    frame_decoder_set_mode(&d, start);
    while (off < len && !f->error) {
        size_t piece = len - off;
        char *read_buf;
        size_t done = 0;

        if (cut) {
            size_t want = 1 + fz_next(&seed) % FZ_MAX_READ_BYTES;
            piece = piece < want ? piece : want;
        }
        read_buf = malloc(piece);
        fz_require(read_buf != NULL, "out of memory");
        memcpy(read_buf, buf + off, piece);
        while (done < piece) {
            size_t used = 0;
            enum frame_status st = frame_decode(&d, read_buf + done, piece - done, &used);

            fz_require(used <= piece - done, "consumed more than given");
            done += used;
            if (st == FRAME_ERROR) {
                f->error = 1;
                f->why = frame_decoder_error(&d);
                fz_require(f->why != NULL, "error without a text");
                fz_require(!frame_decoder_partial(&d), "partial after an error");
                break;
            }
            if (st == FRAME_NEED_MORE) {
                fz_require(done == piece, "NEED_MORE left input unconsumed");
                break;
            }
            /* A message. */
            {
                size_t msg_len = 0;
                const char *msg = frame_decoder_message(&d, &msg_len);

                fz_check_message(msg, msg_len, d.max_msg_bytes, d.mode);
                fz_keep(f, msg, msg_len);
                if (take) {
                    size_t taken_len = 0;
                    char *taken = frame_decoder_take(&d, &taken_len);

                    fz_require(taken != NULL && taken_len == msg_len, "take differs from message");
                    free(taken);
                } else {
                    frame_decoder_next(&d);
                }
                fz_require(!frame_decoder_partial(&d), "partial right after a message");
                if (f->count == 1 && switch_after_first) {
                    frame_decoder_set_mode(&d, FRAME_CHUNKED);
                }
            }
        }
        free(read_buf);
        off += piece;
    }
    f->partial = frame_decoder_partial(&d);
    f->mode = d.mode;
    frame_decoder_close(&d);
}

/* Frame @p msg again as a sender would and decode it alone: it must come back unchanged. */
static void
fz_roundtrip(const char *msg, size_t len, enum frame_mode mode, size_t max)
{
    char head[FRAME_HEADER_MAX_BYTES], tail[FRAME_HEADER_MAX_BYTES];
    size_t head_len = frame_header(mode, len, head);
    size_t tail_len = frame_trailer(mode, tail);
    size_t total = head_len + len + tail_len;
    char *wire = malloc(total);
    struct frame_decoder d;
    enum frame_status st;
    size_t used = 0, got_len = 0;
    const char *got;

    fz_require(wire != NULL, "out of memory");
    memcpy(wire, head, head_len);
    memcpy(wire + head_len, msg, len);
    memcpy(wire + head_len + len, tail, tail_len);
    frame_decoder_init(&d, max);
    frame_decoder_set_mode(&d, mode);
    st = frame_decode(&d, wire, total, &used);
    fz_require(st == FRAME_MESSAGE && used == total, "framed message does not decode in one piece");
    got = frame_decoder_message(&d, &got_len);
    fz_require(got_len == len && !memcmp(got, msg, len), "framed message decodes to other bytes");
    frame_decoder_close(&d);
    free(wire);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz_feed whole, cut;
    enum frame_mode start;
    int switch_after_first, take;
    size_t max, off;
    uint32_t seed;

    if (size < FZ_HEADER_BYTES || size > FZ_MAX_INPUT_BYTES) {
        return 0;
    }
    start = (data[0] & 1) ? FRAME_CHUNKED : FRAME_EOM;
    switch_after_first = (data[0] & 2) != 0;
    take = (data[0] & 4) != 0;
    /* 1..128 bytes, or up to 8 KiB in steps of 64 */
    max = (data[1] & 0x80) ? (size_t)(data[1] & 0x7f) * 64 + 1 : (size_t)(data[1] & 0x7f) + 1;
    seed = 0x9e3779b9u ^ data[2];

    fz_run((const char *)data + FZ_HEADER_BYTES, size - FZ_HEADER_BYTES, start, switch_after_first, take, max,
           seed, 0, &whole);
    fz_run((const char *)data + FZ_HEADER_BYTES, size - FZ_HEADER_BYTES, start, switch_after_first, take, max,
           seed, 1, &cut);

    fz_require(whole.count == cut.count, "cutting the reads changed the number of messages");
    fz_require(whole.msgs_len == cut.msgs_len &&
                   (!whole.msgs_len || !memcmp(whole.msgs, cut.msgs, whole.msgs_len)),
               "cutting the reads changed a message");
    fz_require(whole.error == cut.error && whole.why == cut.why, "cutting the reads changed the error");
    fz_require(whole.partial == cut.partial && whole.mode == cut.mode,
               "cutting the reads changed the end state");

    /* Each message, framed again in the mode it arrived in, decodes to itself. */
    off = 0;
    for (size_t i = 0; i < whole.count; i++) {
        enum frame_mode mode = (i == 0 || !switch_after_first) ? start : FRAME_CHUNKED;
        size_t len;

        memcpy(&len, whole.msgs + off, sizeof len);
        fz_roundtrip(whole.msgs + off + sizeof len, len, mode, max);
        off += sizeof len + len + 1;
    }
    free(whole.msgs);
    free(cut.msgs);
    return 0;
}
