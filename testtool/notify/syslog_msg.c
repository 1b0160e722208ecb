/*
 * Rendering of syslog messages (see syslog_msg.h). Everything is written
 * with bounds checked at each step into the caller's buffer: the channel
 * renders one message per device tick, so no allocation and no printf of
 * the whole line (the timestamp is the only formatted part).
 */
#include "syslog_msg.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* RFC 5424 section 6: the longest HOSTNAME, APP-NAME, PROCID and MSGID. */
#define SM_HOSTNAME_MAX 255
#define SM_APP_NAME_MAX 48
#define SM_PROCID_MAX   128
#define SM_MSGID_MAX    32

/* A bounded writer over the caller's buffer: what does not fit is left out, never past cap. */
struct sm_out {
    char *buf;  /* the caller's buffer */
    size_t len; /* bytes written */
    size_t cap; /* its size */
};

static void
sm_put(struct sm_out *o, const char *s, size_t n)
{
    if (n > o->cap - o->len) {
        n = o->cap - o->len;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

static void
sm_puts(struct sm_out *o, const char *s)
{
    sm_put(o, s, strlen(s));
}

static void
sm_putc(struct sm_out *o, char c)
{
    if (o->len < o->cap) {
        o->buf[o->len++] = c;
    }
}

static void
sm_put_u64(struct sm_out *o, uint64_t v)
{
    char digits[20];
    size_t n = 0;

    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n) {
        sm_putc(o, digits[--n]);
    }
}

static void
sm_put_u32(struct sm_out *o, uint32_t v)
{
    sm_put_u64(o, v);
}

/* @p v in exactly @p width digits, zero-padded (the highest are cut: a year past 9999 is not ours to write).
 */
static void
sm_put_digits(struct sm_out *o, unsigned v, unsigned width)
{
    char d[8];

    for (unsigned i = width; i-- > 0; v /= 10) {
        d[i] = (char)('0' + v % 10);
    }
    sm_put(o, d, width);
}

/* A header field: PRINTUSASCII (33..126) only, at most @p most bytes, "-" when empty. */
static void
sm_put_header(struct sm_out *o, const char *s, size_t most)
{
    size_t n = 0;

    for (; s && s[n] && n < most; n++) {
        unsigned char c = (unsigned char)s[n];
        sm_putc(o, c >= 33 && c <= 126 ? (char)c : '_');
    }
    if (!n) {
        sm_putc(o, '-');
    }
}

/* An SD-PARAM value (RFC 5424 section 6.3.3): '"', '\' and ']' escaped with a backslash. */
static void
sm_put_param(struct sm_out *o, const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\' || *s == ']') {
            sm_putc(o, '\\');
        }
        sm_putc(o, *s);
    }
}

/* Free text: control characters (LF above all) as spaces, so a message is one line in any framing. */
static void
sm_put_text(struct sm_out *o, const char *s, size_t n)
{
    for (size_t i = 0; i < n && o->len < o->cap; i++) {
        unsigned char c = (unsigned char)s[i];
        o->buf[o->len++] = c < 32 || c == 127 ? ' ' : (char)c;
    }
}

static void
sm_put_pri(struct sm_out *o, const struct syslog_fields *f)
{
    sm_putc(o, '<');
    sm_put_u32(o, syslog_pri(f->facility % 24u, f->severity % 8u));
    sm_putc(o, '>');
}

/* The broken-down UTC time of @p time_ms. A worker renders many lines per second: the last second's
 * conversion is kept per thread, so gmtime_r runs once a second, not once a line. */
static void
sm_utc(uint64_t time_ms, struct tm *tm)
{
    static _Thread_local time_t last_t = (time_t)-1;
    static _Thread_local struct tm last_tm;
    time_t t = (time_t)(time_ms / 1000);

    if (t != last_t) {
        gmtime_r(&t, &last_tm);
        last_t = t;
    }
    *tm = last_tm;
}

size_t
syslog_render(enum syslog_format fmt, const struct syslog_fields *f, char *buf, size_t buf_len)
{
    struct sm_out o = {buf, 0, buf_len};
    char stamp[40];
    struct tm tm;

    sm_utc(f->time_ms, &tm);
    sm_put_pri(&o, f);
    if (fmt == SYSLOG_RFC3164) {
        /* "Mmm dd hh:mm:ss", the day padded with a space (RFC 3164 section 4.1.2). */
        static const char months[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                           "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
        if (o.cap > SYSLOG_3164_MAX_BYTES) {
            o.cap = SYSLOG_3164_MAX_BYTES;
        }
        snprintf(stamp, sizeof stamp, "%s %2d %02d:%02d:%02d ", months[tm.tm_mon % 12], tm.tm_mday,
                 tm.tm_hour, tm.tm_min, tm.tm_sec);
        sm_puts(&o, stamp);
        sm_put_header(&o, f->hostname, SM_HOSTNAME_MAX);
        sm_putc(&o, ' ');
        /* The TAG is at most 32 alphanumeric characters (section 4.1.3); ours are header-safe words. */
        sm_put_header(&o, f->app_name, 32);
        sm_puts(&o, ": seq=");
        sm_put_u32(&o, f->seq);
        if (f->run_tag && *f->run_tag) {
            sm_puts(&o, " run=");
            sm_put_header(&o, f->run_tag, SYSLOG_MAX_RUN_TAG_BYTES);
        }
        if (f->event_id) {
            sm_puts(&o, " event=");
            sm_put_u64(&o, f->event_id);
        }
        sm_putc(&o, ' ');
        sm_put_text(&o, f->text, f->text_len);
        return o.len;
    }
    /* "1 YYYY-MM-DDThh:mm:ss.mmmZ " (RFC 5424 section 6.2.3, UTC). */
    sm_puts(&o, "1 ");
    sm_put_digits(&o, (unsigned)(tm.tm_year + 1900), 4);
    sm_putc(&o, '-');
    sm_put_digits(&o, (unsigned)tm.tm_mon + 1, 2);
    sm_putc(&o, '-');
    sm_put_digits(&o, (unsigned)tm.tm_mday, 2);
    sm_putc(&o, 'T');
    sm_put_digits(&o, (unsigned)tm.tm_hour, 2);
    sm_putc(&o, ':');
    sm_put_digits(&o, (unsigned)tm.tm_min, 2);
    sm_putc(&o, ':');
    sm_put_digits(&o, (unsigned)tm.tm_sec, 2);
    sm_putc(&o, '.');
    sm_put_digits(&o, (unsigned)(f->time_ms % 1000), 3);
    sm_puts(&o, "Z ");
    sm_put_header(&o, f->hostname, SM_HOSTNAME_MAX);
    sm_putc(&o, ' ');
    sm_put_header(&o, f->app_name, SM_APP_NAME_MAX);
    sm_putc(&o, ' ');
    sm_put_header(&o, f->procid, SM_PROCID_MAX);
    sm_putc(&o, ' ');
    sm_put_header(&o, f->msgid, SM_MSGID_MAX);
    sm_puts(&o, " [meta sequenceId=\"");
    sm_put_u32(&o, f->seq);
    sm_puts(&o, "\"]");
    /* One fleetsim@32473 element holds the run's tag and the event's id (RFC 5424 section 6.3.2: an
     * SD-ID appears once per message). */
    if ((f->run_tag && *f->run_tag) || f->event_id) {
        sm_puts(&o, "[" SYSLOG_RUN_SD_ID);
        if (f->run_tag && *f->run_tag) {
            sm_puts(&o, " run=\"");
            sm_put_param(&o, f->run_tag);
            sm_putc(&o, '"');
        }
        if (f->event_id) {
            sm_puts(&o, " eventId=\"");
            sm_put_u64(&o, f->event_id);
            sm_putc(&o, '"');
        }
        sm_putc(&o, ']');
    }
    if (f->text_len) {
        sm_putc(&o, ' ');
        sm_put_text(&o, f->text, f->text_len);
    }
    return o.len;
}

size_t
syslog_frame_head(enum syslog_framing framing, size_t msg_len, char *head)
{
    if (framing == SYSLOG_FRAME_LF) {
        return 0;
    }
    return (size_t)snprintf(head, SYSLOG_FRAME_HEAD_BYTES, "%u ", (unsigned)msg_len);
}

const char *
syslog_frame_tail(enum syslog_framing framing)
{
    return framing == SYSLOG_FRAME_LF ? "\n" : "";
}

int
syslog_format_parse(const char *text, enum syslog_format *out)
{
    if (!strcmp(text, "rfc5424")) {
        *out = SYSLOG_RFC5424;
    } else if (!strcmp(text, "rfc3164")) {
        *out = SYSLOG_RFC3164;
    } else {
        return -1;
    }
    return 0;
}

int
syslog_framing_parse(const char *text, enum syslog_framing *out)
{
    if (!strcmp(text, "octet-counting")) {
        *out = SYSLOG_FRAME_OCTETS;
    } else if (!strcmp(text, "lf")) {
        *out = SYSLOG_FRAME_LF;
    } else {
        return -1;
    }
    return 0;
}
