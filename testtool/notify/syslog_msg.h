/*
 * Syslog messages as bytes: RFC 5424 (the default) and RFC 3164 lines, and
 * their frames on a stream (RFC 6587: octet counting, or a trailing LF).
 * Pure functions over a caller's buffer, so the exact bytes are unit-tested.
 *
 * What identifies a message travels inside it: the device's host name, a
 * per-device sequence number (RFC 5424 section 7.3.1 [meta sequenceId="N"];
 * for 3164 "seq=N" at the start of the text) and, when the run has one, its
 * tag (SD-ID fleetsim@32473: 32473 is the enterprise number RFC 5612
 * reserves for documentation, as fleetsim has none of its own; for 3164
 * "run=TAG" after seq=N). A line that reports an event carries the event's
 * id in the same SD element (eventId="N"; for 3164 "event=N" after run=),
 * the id its trap and NETCONF notification carry too.
 */
#ifndef FLEET_SYSLOG_MSG_H
#define FLEET_SYSLOG_MSG_H

#include <stddef.h>
#include <stdint.h>

/* Largest message rendered: RFC 5424 section 6.1 asks receivers to take 2048 octets (longer text is cut). */
#define SYSLOG_MAX_MSG_BYTES 2048
/* Largest RFC 3164 message (its section 4.1: 1024 bytes or less). */
#define SYSLOG_3164_MAX_BYTES 1024
/* Room an octet-counting frame adds before a message: "2048 ". */
#define SYSLOG_FRAME_HEAD_BYTES 8
/* The SD-ID of the run tag: fleetsim@ and RFC 5612's documentation enterprise number. */
#define SYSLOG_RUN_SD_ID "fleetsim@32473"
/* Longest run tag (--run-tag): an SD-PARAM value, escaped, must leave room for the text. */
#define SYSLOG_MAX_RUN_TAG_BYTES 128
/* RFC 5424 section 7.3.1: sequenceId counts 1..2147483647, then starts at 1 again. */
#define SYSLOG_SEQ_MAX 2147483647u

enum syslog_format {
    SYSLOG_RFC5424, /* <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID SD MSG */
    SYSLOG_RFC3164, /* <PRI>Mmm dd hh:mm:ss HOSTNAME TAG: MSG */
};

enum syslog_framing {
    SYSLOG_FRAME_OCTETS, /* "LEN SP MSG" (RFC 6587 section 3.4.1; RFC 5425 requires it) */
    SYSLOG_FRAME_LF,     /* "MSG LF" (RFC 6587 section 3.4.2, non-transparent) */
};

/* What one message says. Strings are NUL-terminated; NULL or "" is the NILVALUE ("-") where 5424 has one. */
struct syslog_fields {
    uint8_t facility;     /* 0..23 (RFC 5424 table 1: 23 is local7) */
    uint8_t severity;     /* 0..7 (0 emergency .. 7 debug) */
    uint64_t time_ms;     /* when, ms since the epoch, written in UTC */
    const char *hostname; /* the device's host name */
    const char *app_name; /* APP-NAME (3164: the tag) */
    const char *procid;   /* PROCID, or NULL */
    const char *msgid;    /* MSGID, or NULL */
    uint32_t seq;         /* sequenceId, 1..SYSLOG_SEQ_MAX */
    const char *run_tag;  /* the run's tag, or NULL: no run parameter */
    uint64_t event_id;    /* the event the line reports (event.h), 0: a background line, no eventId */
    const char *text;     /* MSG */
    size_t text_len;      /* bytes of text */
};

/** @return The PRI value: facility * 8 + severity (RFC 5424 section 6.2.1). */
static inline unsigned
syslog_pri(unsigned facility, unsigned severity)
{
    return facility * 8u + severity;
}

/** @return The sequence number after @p seq (1 after SYSLOG_SEQ_MAX, 1 after 0). */
static inline uint32_t
syslog_seq_next(uint32_t seq)
{
    return seq >= SYSLOG_SEQ_MAX ? 1u : seq + 1u;
}

/**
 * @brief Render one message into @p buf.
 * Header fields are cut to RFC 5424's lengths (HOSTNAME 255, APP-NAME 48, PROCID 128, MSGID 32) with
 * bytes outside PRINTUSASCII and spaces written as '_'; SD-PARAM values are escaped ('"', '\' and ']'
 * get a backslash, section 6.3.3); the text is cut to fit @p buf_len (3164: SYSLOG_3164_MAX_BYTES), and
 * control characters in it (LF first: it would split a message under LF framing) are written as spaces.
 * @param[in] buf_len At least 256 bytes.
 * @return The message's length (never more than @p buf_len; no NUL is written after it).
 */
size_t syslog_render(enum syslog_format fmt, const struct syslog_fields *f, char *buf, size_t buf_len);

/**
 * @brief Write the frame head of a message of @p msg_len bytes: "LEN " for octet counting, nothing for LF.
 * @param[out] head At least SYSLOG_FRAME_HEAD_BYTES.
 * @return Its length.
 */
size_t syslog_frame_head(enum syslog_framing framing, size_t msg_len, char *head);

/** @return The frame's tail: "\n" for LF framing, "" for octet counting. */
const char *syslog_frame_tail(enum syslog_framing framing);

/** @brief Parse "rfc5424" or "rfc3164". @return 0, or -1 for another word. */
int syslog_format_parse(const char *text, enum syslog_format *out);

/** @brief Parse "octet-counting" or "lf". @return 0, or -1 for another word. */
int syslog_framing_parse(const char *text, enum syslog_framing *out);

#endif
