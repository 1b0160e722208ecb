/*
 * NETCONF message framing (RFC 6242): end-of-message "]]>]]>" (base:1.0)
 * and chunked framing (base:1.1). The decoder is incremental: bytes arrive
 * in arbitrary pieces and a message is handed out only once complete. It is
 * shared by the simulator and the stress client.
 */
#ifndef FLEET_FRAME_H
#define FLEET_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* Largest message either side accepts by default (bytes of XML, framing excluded). */
#define FRAME_DEFAULT_MAX_MSG_BYTES (64u * 1024u * 1024u)
/* RFC 6242 section 4.2: a chunk-size has at most 10 digits and is at most 4294967295. */
#define FRAME_MAX_CHUNK_DIGITS 10
/* Room a frame header or trailer may take in an output buffer. */
#define FRAME_HEADER_MAX_BYTES 16

enum frame_mode {
    FRAME_EOM,     /* base:1.0, message ends with "]]>]]>" */
    FRAME_CHUNKED, /* base:1.1, "\n#<len>\n" chunks closed by "\n##\n" */
};

enum frame_status {
    FRAME_NEED_MORE, /* all input consumed, no complete message yet */
    FRAME_MESSAGE,   /* a message is complete: frame_decoder_message() */
    FRAME_ERROR,     /* framing broken: frame_decoder_error() says how; the session must close */
};

/* Decoder state; embedded in its session. Owns a heap buffer only while a message is partial. */
struct frame_decoder {
    enum frame_mode mode; /* current framing; switches after the hello exchange */
    size_t max_msg_bytes; /* limit on one message; exceeding it is FRAME_ERROR */
    char *msg;            /* assembled message, NUL-terminated; NULL when empty */
    size_t msg_len;       /* bytes in msg (without the NUL) */
    size_t msg_cap;       /* allocated size of msg */
    int state;            /* internal parser state (chunk header, data, ...) */
    uint64_t chunk_left;  /* chunked: data bytes still expected in the current chunk */
    uint32_t digits;      /* chunked: digits read of the current chunk-size */
    uint32_t eom_matched; /* EOM: how many bytes of "]]>]]>" are matched at msg's end */
    int complete;         /* 1 while a complete message waits to be taken */
    const char *error;    /* static description of the last framing error, or NULL */
};

/**
 * @brief Prepare a decoder in EOM mode.
 * @param[in] d Decoder to initialise.
 * @param[in] max_msg_bytes Largest accepted message, 0 for FRAME_DEFAULT_MAX_MSG_BYTES.
 */
void frame_decoder_init(struct frame_decoder *d, size_t max_msg_bytes);

/** @brief Release the decoder's buffer. Safe on a zeroed or already closed decoder. */
void frame_decoder_close(struct frame_decoder *d);

/** @brief Switch framing; only between messages (after the hello). */
void frame_decoder_set_mode(struct frame_decoder *d, enum frame_mode mode);

/**
 * @brief Feed bytes. Stops right after the first complete message so that
 * the caller can act on it (a hello switches framing) before feeding the rest.
 * @param[in] d Decoder.
 * @param[in] buf Input bytes.
 * @param[in] len Number of bytes in @p buf.
 * @param[out] consumed How many bytes of @p buf were used; feed the rest again.
 * @return FRAME_MESSAGE when a message is complete, FRAME_NEED_MORE, or FRAME_ERROR.
 */
enum frame_status frame_decode(struct frame_decoder *d, const char *buf, size_t len, size_t *consumed);

/**
 * @brief The complete message, NUL-terminated, valid until frame_decoder_next().
 * @param[out] len Its length in bytes.
 */
const char *frame_decoder_message(const struct frame_decoder *d, size_t *len);

/**
 * @brief Take ownership of the complete message buffer (malloc'd, NUL-terminated);
 * the decoder starts the next message empty. The caller frees it.
 */
char *frame_decoder_take(struct frame_decoder *d, size_t *len);

/** @brief Drop the complete message and get ready for the next. Keeps no buffer. */
void frame_decoder_next(struct frame_decoder *d);

/** @brief Static text naming the last framing error. */
const char *frame_decoder_error(const struct frame_decoder *d);

/** @return 1 when the decoder holds part of a message (bytes of an unfinished frame). */
int frame_decoder_partial(const struct frame_decoder *d);

/**
 * @brief Write the bytes that go before a message of @p len bytes.
 * @param[in] mode Framing.
 * @param[in] len Payload size.
 * @param[out] out At least FRAME_HEADER_MAX_BYTES.
 * @return Bytes written (0 for EOM, which has no header).
 */
size_t frame_header(enum frame_mode mode, size_t len, char *out);

/**
 * @brief Write the bytes that close a message.
 * @param[out] out At least FRAME_HEADER_MAX_BYTES.
 * @return Bytes written ("]]>]]>" or "\n##\n").
 */
size_t frame_trailer(enum frame_mode mode, char *out);

#endif
