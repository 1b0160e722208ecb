/*
 * RFC 6242 framing. The decoder is a byte-driven state machine that keeps
 * everything it needs between reads in struct frame_decoder, so a message
 * may arrive in any number of pieces and earlier input is never rescanned:
 * EOM mode tracks how much of "]]>]]>" it has matched so far (a KMP-style
 * automaton, so overlapping near-misses such as "]]]>]]>" are not lost), and
 * chunked mode tracks the header field it is in and how many data bytes the
 * current chunk still owes. The message buffer is allocated on the first
 * payload byte and handed back (freed or taken) once the message is out, so an
 * idle session costs no heap memory.
 */
#include "frame.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* First allocation for a message: most RPCs fit, and it is held only while a message is out or partial. */
#define FRAME_MIN_BUF_BYTES 256
/* RFC 6242 section 4.2: the largest chunk-size. */
#define FRAME_MAX_CHUNK_SIZE 4294967295u

/* base:1.0 end-of-message marker. */
static const char frame_eom[] = "]]>]]>";
#define FRAME_EOM_LEN (sizeof frame_eom - 1)

/*
 * For each count of matched marker bytes, the longest proper prefix of the
 * marker that is also a suffix of what was matched. On a mismatch the matcher
 * falls back to it instead of to 0, so "]]]>]]>" still ends a message.
 */
static const uint8_t frame_eom_fallback[FRAME_EOM_LEN] = {0, 1, 0, 1, 2, 3};

/* Values of frame_decoder.state. */
enum frame_state {
    FS_EOM = 0,   /* EOM: collecting message bytes */
    FS_CH_LF,     /* chunked: expecting the LF that opens a chunk or end-of-chunks */
    FS_CH_HASH,   /* chunked: LF seen, expecting '#' */
    FS_CH_FIRST,  /* chunked: "\n#" seen, expecting a digit 1-9 or the second '#' */
    FS_CH_ZERO,   /* chunked: chunk-size began with '0', which is never valid */
    FS_CH_DIGITS, /* chunked: inside chunk-size; LF ends it */
    FS_CH_DATA,   /* chunked: chunk_left data bytes still to copy */
    FS_CH_END_LF, /* chunked: "\n##" seen, expecting the final LF */
    FS_ERROR,     /* framing broken; sticky until frame_decoder_init() */
};

/* Where each mode starts a message, so partial() can tell "between messages". */
static int
frame_start_state(enum frame_mode mode)
{
    return mode == FRAME_CHUNKED ? FS_CH_LF : FS_EOM;
}

/* Record a framing error; every later decode call reports it again. */
static enum frame_status
frame_fail(struct frame_decoder *d, const char *why)
{
    d->state = FS_ERROR;
    d->error = why;
    return FRAME_ERROR;
}

/* Drop the message buffer and rewind to a message start in the current mode. */
static void
frame_reset(struct frame_decoder *d)
{
    free(d->msg);
    d->msg = NULL;
    d->msg_len = 0;
    d->msg_cap = 0;
    d->complete = 0;
    d->chunk_left = 0;
    d->digits = 0;
    d->eom_matched = 0;
    if (d->state != FS_ERROR) {
        d->state = frame_start_state(d->mode);
    }
}

/*
 * Make room for @p extra more bytes plus the NUL. Capacity doubles so a large
 * message costs O(log n) reallocations, but never beyond what the size limit
 * can use (limit + a partly matched EOM marker + NUL), so a peer announcing a
 * huge chunk cannot make us over-allocate. Returns 0 or -1 on ENOMEM.
 */
static int
frame_reserve(struct frame_decoder *d, size_t extra)
{
    size_t need = d->msg_len + extra + 1;
    size_t ceiling = SIZE_MAX;
    size_t cap;
    char *p;

    if (need <= d->msg_cap) {
        return 0;
    }
    if (d->max_msg_bytes <= SIZE_MAX - FRAME_EOM_LEN - 1) {
        ceiling = d->max_msg_bytes + FRAME_EOM_LEN + 1;
    }
    cap = d->msg_cap ? d->msg_cap : FRAME_MIN_BUF_BYTES;
    while (cap < need && cap <= SIZE_MAX / 2) {
        cap *= 2;
    }
    if (cap > ceiling) {
        cap = ceiling;
    }
    if (cap < need) {
        cap = need;
    }
    p = realloc(d->msg, cap);
    if (!p) {
        return -1;
    }
    d->msg = p;
    d->msg_cap = cap;
    return 0;
}

/* Append payload bytes; the caller has already checked the size limit. */
static int
frame_append(struct frame_decoder *d, const char *src, size_t n)
{
    if (frame_reserve(d, n)) {
        return -1;
    }
    memcpy(d->msg + d->msg_len, src, n);
    d->msg_len += n;
    return 0;
}

/* Whitespace an XML document may carry before its first element. */
static int
frame_is_xml_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Mark the assembled message ready; the buffer holds at least one byte (see callers). */
static enum frame_status
frame_complete(struct frame_decoder *d)
{
    d->msg[d->msg_len] = '\0';
    d->complete = 1;
    d->state = frame_start_state(d->mode);
    return FRAME_MESSAGE;
}

/*
 * EOM mode. While nothing of the marker is matched, memchr jumps to the next
 * ']' and the bytes before it are copied in one go; only bytes that may be
 * part of the marker go through the automaton one at a time. Matched marker
 * bytes are stored in msg as well (eom_matched says how many are at its end),
 * so a mismatch needs no flushing: they simply turn out to be payload.
 */
static enum frame_status
frame_decode_eom(struct frame_decoder *d, const char *buf, size_t len, size_t *pos)
{
    size_t i = *pos;
    enum frame_status st = FRAME_NEED_MORE;

    while (i < len) {
        if (d->eom_matched == 0) {
            const char *br;
            size_t run;

            /* Whitespace before a message is dropped, so nothing is buffered between messages. */
            if (d->msg_len == 0 && frame_is_xml_space(buf[i])) {
                i++;
                continue;
            }
            br = memchr(buf + i, ']', len - i);
            run = br ? (size_t)(br - (buf + i)) : len - i;
            if (run) {
                if (run > d->max_msg_bytes - d->msg_len) {
                    st = frame_fail(d, "message exceeds the size limit");
                    goto cleanup;
                }
                if (frame_append(d, buf + i, run)) {
                    st = frame_fail(d, "out of memory");
                    goto cleanup;
                }
                i += run;
                continue;
            }
        }

        /* buf[i] may extend, break or complete the marker. */
        while (d->eom_matched && frame_eom[d->eom_matched] != buf[i]) {
            d->eom_matched = frame_eom_fallback[d->eom_matched - 1];
        }
        if (frame_eom[d->eom_matched] == buf[i]) {
            d->eom_matched++;
        }
        if (frame_append(d, buf + i, 1)) {
            st = frame_fail(d, "out of memory");
            goto cleanup;
        }
        i++;
        if (d->msg_len - d->eom_matched > d->max_msg_bytes) {
            st = frame_fail(d, "message exceeds the size limit");
            goto cleanup;
        }
        if (d->eom_matched == FRAME_EOM_LEN) {
            d->msg_len -= FRAME_EOM_LEN;
            d->eom_matched = 0;
            if (d->msg_len == 0) {
                /* A bare marker carries no message; report nothing and hold nothing. */
                frame_reset(d);
                continue;
            }
            st = frame_complete(d);
            goto cleanup;
        }
    }

cleanup:
    *pos = i;
    return st;
}

/*
 * Chunked mode: header bytes are validated one at a time, chunk data is
 * copied in bulk. A "]]>]]>" in the data is just data here.
 */
static enum frame_status
frame_decode_chunked(struct frame_decoder *d, const char *buf, size_t len, size_t *pos)
{
    size_t i = *pos;
    enum frame_status st = FRAME_NEED_MORE;

    while (i < len) {
        char c = buf[i];

        switch (d->state) {
        case FS_CH_LF:
            if (c != '\n') {
                st = frame_fail(d, "chunk header does not start with LF");
                goto cleanup;
            }
            d->state = FS_CH_HASH;
            i++;
            break;
        case FS_CH_HASH:
            if (c != '#') {
                st = frame_fail(d, "chunk header lacks '#' after LF");
                goto cleanup;
            }
            d->state = FS_CH_FIRST;
            i++;
            break;
        case FS_CH_FIRST:
            if (c == '#') {
                /* RFC 6242: a chunked message is one or more chunks, then end-of-chunks. */
                if (d->msg_len == 0) {
                    st = frame_fail(d, "end-of-chunks before any chunk");
                    goto cleanup;
                }
                d->state = FS_CH_END_LF;
            } else if (c == '0') {
                /* Wait for the next byte to say whether this is a zero size or a leading zero. */
                d->state = FS_CH_ZERO;
            } else if (c >= '1' && c <= '9') {
                d->chunk_left = (uint64_t)(c - '0');
                d->digits = 1;
                d->state = FS_CH_DIGITS;
            } else if (c == '\n') {
                st = frame_fail(d, "chunk-size is missing");
                goto cleanup;
            } else {
                st = frame_fail(d, "chunk-size has a non-digit character");
                goto cleanup;
            }
            i++;
            break;
        case FS_CH_ZERO:
            if (c == '\n') {
                st = frame_fail(d, "chunk-size is zero");
            } else if (c >= '0' && c <= '9') {
                st = frame_fail(d, "chunk-size has a leading zero");
            } else {
                st = frame_fail(d, "chunk-size has a non-digit character");
            }
            goto cleanup;
        case FS_CH_DIGITS:
            if (c == '\n') {
                /* Refuse an oversized message at its header, before buffering its data. */
                if (d->chunk_left > (uint64_t)(d->max_msg_bytes - d->msg_len)) {
                    st = frame_fail(d, "message exceeds the size limit");
                    goto cleanup;
                }
                d->digits = 0;
                d->state = FS_CH_DATA;
            } else if (c >= '0' && c <= '9') {
                if (d->digits == FRAME_MAX_CHUNK_DIGITS) {
                    st = frame_fail(d, "chunk-size has more than 10 digits");
                    goto cleanup;
                }
                d->chunk_left = d->chunk_left * 10 + (uint64_t)(c - '0');
                d->digits++;
                if (d->chunk_left > FRAME_MAX_CHUNK_SIZE) {
                    st = frame_fail(d, "chunk-size exceeds 4294967295");
                    goto cleanup;
                }
            } else {
                st = frame_fail(d, "chunk-size has a non-digit character");
                goto cleanup;
            }
            i++;
            break;
        case FS_CH_DATA: {
            size_t n = len - i;

            if ((uint64_t)n > d->chunk_left) {
                n = (size_t)d->chunk_left;
            }
            if (frame_append(d, buf + i, n)) {
                st = frame_fail(d, "out of memory");
                goto cleanup;
            }
            d->chunk_left -= n;
            i += n;
            if (d->chunk_left == 0) {
                d->state = FS_CH_LF;
            }
            break;
        }
        case FS_CH_END_LF:
            if (c != '\n') {
                st = frame_fail(d, "end-of-chunks lacks the final LF");
                goto cleanup;
            }
            i++;
            st = frame_complete(d);
            goto cleanup;
        default:
            assert(!"chunked decoder in a non-chunked state");
            st = frame_fail(d, "internal decoder state error");
            goto cleanup;
        }
    }

cleanup:
    *pos = i;
    return st;
}

void
frame_decoder_init(struct frame_decoder *d, size_t max_msg_bytes)
{
    memset(d, 0, sizeof *d);
    d->mode = FRAME_EOM;
    d->max_msg_bytes = max_msg_bytes ? max_msg_bytes : FRAME_DEFAULT_MAX_MSG_BYTES;
    d->state = FS_EOM;
}

void
frame_decoder_close(struct frame_decoder *d)
{
    if (!d) {
        return;
    }
    free(d->msg);
    d->msg = NULL;
    d->msg_len = 0;
    d->msg_cap = 0;
    d->complete = 0;
}

void
frame_decoder_set_mode(struct frame_decoder *d, enum frame_mode mode)
{
    /* Switching inside a frame would reinterpret its bytes; the session must not ask for that. */
    assert(!frame_decoder_partial(d));
    d->mode = mode;
    if (d->state != FS_ERROR) {
        d->state = frame_start_state(mode);
    }
    d->chunk_left = 0;
    d->digits = 0;
    d->eom_matched = 0;
}

enum frame_status
frame_decode(struct frame_decoder *d, const char *buf, size_t len, size_t *consumed)
{
    size_t pos = 0;
    enum frame_status st;

    /* The previous message must be taken or dropped first; its buffer is reused for the next. */
    assert(!d->complete);
    if (d->state == FS_ERROR) {
        st = FRAME_ERROR;
    } else if (d->mode == FRAME_CHUNKED) {
        st = frame_decode_chunked(d, buf, len, &pos);
    } else {
        st = frame_decode_eom(d, buf, len, &pos);
    }
    *consumed = pos;
    return st;
}

const char *
frame_decoder_message(const struct frame_decoder *d, size_t *len)
{
    if (!d->complete) {
        *len = 0;
        return NULL;
    }
    *len = d->msg_len;
    return d->msg;
}

char *
frame_decoder_take(struct frame_decoder *d, size_t *len)
{
    char *msg = NULL;

    *len = 0;
    if (!d->complete) {
        goto cleanup;
    }
    msg = d->msg;
    *len = d->msg_len;
    d->msg = NULL;
    frame_reset(d);

cleanup:
    return msg;
}

void
frame_decoder_next(struct frame_decoder *d)
{
    frame_reset(d);
}

const char *
frame_decoder_error(const struct frame_decoder *d)
{
    return d->error;
}

int
frame_decoder_partial(const struct frame_decoder *d)
{
    if (d->complete || d->state == FS_ERROR) {
        return 0;
    }
    return d->msg_len > 0 || d->state != frame_start_state(d->mode);
}

size_t
frame_header(enum frame_mode mode, size_t len, char *out)
{
    int n;

    if (mode == FRAME_EOM) {
        out[0] = '\0';
        return 0;
    }
    /*
     * A chunk carries 1..4294967295 bytes; larger messages must be split by the
     * caller. Anything else would put a header on the wire that the peer must
     * reject, so it is a bug here and aborts even in builds without assert().
     */
    if (len == 0 || (uint64_t)len > FRAME_MAX_CHUNK_SIZE) {
        abort();
    }
    n = snprintf(out, FRAME_HEADER_MAX_BYTES, "\n#%zu\n", len);
    return (size_t)n;
}

size_t
frame_trailer(enum frame_mode mode, char *out)
{
    static const char end_of_chunks[] = "\n##\n";

    if (mode == FRAME_EOM) {
        memcpy(out, frame_eom, sizeof frame_eom);
        return FRAME_EOM_LEN;
    }
    memcpy(out, end_of_chunks, sizeof end_of_chunks);
    return sizeof end_of_chunks - 1;
}
