/*
 * One line of a collector's syslog file, as reconcile reads it: who sent it
 * (the HOSTNAME field), the device's sequence number and the run tag, when
 * the line carries them. Two forms are read, told apart line by line:
 *
 *   RFC 5424, as rsyslog's RSYSLOG_SyslogProtocol23Format and syslog-ng's
 *     flags(syslog-protocol) write it: "<PRI>1 TIMESTAMP HOSTNAME APP PROCID
 *     MSGID SD MSG", optionally after an octet count ("LEN "). The sequence
 *     is [meta sequenceId="N"], the tag [fleetsim@32473 run="T"].
 *   The traditional form both write by default: "Mmm dd hh:mm:ss HOST TAG
 *     MSG" or with an RFC 3339 time stamp first, optionally after "<PRI>".
 *
 * In either form, a line without those SD elements may carry fleetsim's
 * RFC 3164 text instead: "seq=N" first in MSG and "run=T" after it. A 5424
 * message written in the traditional form has lost its SD (rsyslog's %msg%
 * leaves it out): it is counted, but has neither sequence nor tag.
 *
 * The parser never writes to the line and never reads past its length; a
 * NUL inside is a byte like any other.
 */
#ifndef STRESS_RECV_SYSLOG_H
#define STRESS_RECV_SYSLOG_H

#include <stddef.h>
#include <stdint.h>

/* Longest HOSTNAME accepted (RFC 5424 section 6.2.4: 255 PRINTUSASCII). */
#define RECV_HOST_MAX_BYTES 255

/* What one line says; pointers are into the line. */
struct recv_msg {
    const char *source; /* the sender's host name (or address), never NULL on success */
    size_t source_len;  /* bytes of source, 1..RECV_HOST_MAX_BYTES */
    int has_seq;        /* 1: seq holds the device's sequence number */
    uint64_t seq;       /* the sequence number, when has_seq */
    const char *tag;    /* the run tag as written, or NULL: the line has none */
    size_t tag_len;     /* bytes of tag */
    int tag_escaped;    /* 1: tag is an SD-PARAM value ('"', '\' and ']' after a backslash) */
};

/**
 * @brief Parse one line (without its LF) of a collector's syslog file.
 * @param[in] line The line; it need not be NUL-terminated.
 * @param[in] len Bytes of @p line.
 * @param[out] m What it says (zeroed first).
 * @return 0, or -1 when the line is neither form (@p m then holds nothing).
 */
int recv_syslog_parse(const char *line, size_t len, struct recv_msg *m);

/**
 * @brief Whether a parsed line carries the run tag @p tag. fleetsim writes a tag's bytes outside
 * PRINTUSASCII as '_' in the 3164 text, so such a byte of @p tag matches '_' there.
 * @return 1 when @p m's tag equals @p tag, 0 otherwise (a line without a tag included).
 */
int recv_tag_equal(const struct recv_msg *m, const char *tag);

#endif
