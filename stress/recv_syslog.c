/*
 * Parsing a collector's syslog lines; see recv_syslog.h. A cursor walks the
 * line once; every step checks the bytes left, so a cut or binary line
 * ends in "not a syslog line" or a line without sequence, never a read
 * past its end.
 */
#include "recv_syslog.h"

#include <string.h>

/* The SD-IDs and parameters fleetsim writes (testtool/notify/syslog_msg.h). */
#define RS_META_ID "meta"
#define RS_SEQ     "sequenceId"
#define RS_RUN_ID  "fleetsim@32473"
#define RS_RUN     "run"
/* Most digits of a sequence number taken (a 64-bit number has 20). */
#define RS_SEQ_DIGITS_MAX 19

/* A cursor over the line. */
struct rs_cur {
    const char *p;   /* next byte */
    const char *end; /* one past the last byte */
};

static int
rs_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* A header byte: PRINTUSASCII, no space (RFC 5424 section 6). */
static int
rs_is_print(char c)
{
    return c > ' ' && c < 127;
}

/* The token up to the next space (at least one byte); @return its length, 0 when none. */
static size_t
rs_token(struct rs_cur *c, const char **tok)
{
    const char *s = c->p;

    while (c->p < c->end && rs_is_print(*c->p)) {
        c->p++;
    }
    *tok = s;
    return (size_t)(c->p - s);
}

/* One space; @return 0 or -1. */
static int
rs_space(struct rs_cur *c)
{
    if (c->p < c->end && *c->p == ' ') {
        c->p++;
        return 0;
    }
    return -1;
}

/* Decimal digits at the cursor into @p v (at most RS_SEQ_DIGITS_MAX); @return 0 or -1 when none. */
static int
rs_number(struct rs_cur *c, uint64_t *v)
{
    int n = 0;

    *v = 0;
    while (c->p < c->end && rs_is_digit(*c->p) && n < RS_SEQ_DIGITS_MAX) {
        *v = *v * 10 + (uint64_t)(*c->p++ - '0');
        n++;
    }
    return n ? 0 : -1;
}

/* Whether the cursor starts with @p word (not consumed). */
static int
rs_at(const struct rs_cur *c, const char *word)
{
    size_t n = strlen(word);

    return (size_t)(c->end - c->p) >= n && !memcmp(c->p, word, n);
}

/* "<PRI>": 1 to 3 digits in angle brackets; @return 0 (consumed) or -1 (cursor unmoved). */
static int
rs_pri(struct rs_cur *c)
{
    struct rs_cur t = *c;
    int n = 0;

    if (t.p >= t.end || *t.p != '<') {
        return -1;
    }
    t.p++;
    while (t.p < t.end && rs_is_digit(*t.p) && n < 3) {
        t.p++;
        n++;
    }
    if (!n || t.p >= t.end || *t.p != '>') {
        return -1;
    }
    *c = (struct rs_cur){t.p + 1, t.end};
    return 0;
}

/* The host name at the cursor into @p m; @return 0 or -1. */
static int
rs_host(struct rs_cur *c, struct recv_msg *m)
{
    m->source_len = rs_token(c, &m->source);
    return m->source_len && m->source_len <= RECV_HOST_MAX_BYTES ? 0 : -1;
}

/*
 * One SD-PARAM value after its opening quote: its bytes up to the closing quote, escapes kept. @return 0
 * with the cursor after the quote, or -1 when the line ends first.
 */
static int
rs_param_value(struct rs_cur *c, const char **val, size_t *len)
{
    const char *s = c->p;

    while (c->p < c->end && *c->p != '"') {
        c->p += (*c->p == '\\' && c->p + 1 < c->end) ? 2 : 1;
    }
    if (c->p >= c->end) {
        return -1;
    }
    *val = s;
    *len = (size_t)(c->p - s);
    c->p++;
    return 0;
}

/* A sequence number that is the whole of an SD-PARAM value. */
static void
rs_seq_value(const char *val, size_t len, struct recv_msg *m)
{
    struct rs_cur v = {val, val + len};
    uint64_t n;

    if (!rs_number(&v, &n) && v.p == v.end) {
        m->has_seq = 1;
        m->seq = n;
    }
}

/*
 * STRUCTURED-DATA: "-" or one or more "[ID PARAM="VALUE" ...]". The meta sequenceId and fleetsim's run
 * go into @p m. @return 0 with the cursor after it, or -1 when it is malformed (what was found stays).
 */
static int
rs_sd(struct rs_cur *c, struct recv_msg *m)
{
    if (c->p < c->end && *c->p == '-') {
        c->p++;
        return 0;
    }
    if (c->p >= c->end || *c->p != '[') {
        return -1;
    }
    while (c->p < c->end && *c->p == '[') {
        const char *id;
        size_t id_len;
        c->p++;
        /* An SD-ID or PARAM-NAME ends at '=', ' ' or ']' (section 6.3.2). */
        id = c->p;
        while (c->p < c->end && rs_is_print(*c->p) && *c->p != '=' && *c->p != ']' && *c->p != '"') {
            c->p++;
        }
        id_len = (size_t)(c->p - id);
        while (c->p < c->end && *c->p == ' ') {
            const char *name, *val;
            size_t name_len, val_len;
            c->p++;
            name = c->p;
            while (c->p < c->end && rs_is_print(*c->p) && *c->p != '=' && *c->p != ']' && *c->p != '"') {
                c->p++;
            }
            name_len = (size_t)(c->p - name);
            if (!rs_at(c, "=\"")) {
                return -1;
            }
            c->p += 2;
            if (rs_param_value(c, &val, &val_len)) {
                return -1;
            }
            if (id_len == strlen(RS_META_ID) && !memcmp(id, RS_META_ID, id_len) &&
                name_len == strlen(RS_SEQ) && !memcmp(name, RS_SEQ, name_len)) {
                rs_seq_value(val, val_len, m);
            } else if (id_len == strlen(RS_RUN_ID) && !memcmp(id, RS_RUN_ID, id_len) &&
                       name_len == strlen(RS_RUN) && !memcmp(name, RS_RUN, name_len)) {
                m->tag = val;
                m->tag_len = val_len;
                m->tag_escaped = 1;
            }
        }
        if (c->p >= c->end || *c->p != ']' || !id_len) {
            return -1;
        }
        c->p++;
    }
    return 0;
}

/* fleetsim's 3164 text in MSG: "seq=N", then optionally " run=T"; anything else leaves @p m as it is. */
static void
rs_text_marks(struct rs_cur c, struct recv_msg *m)
{
    uint64_t n;

    while (c.p < c.end && *c.p == ' ') {
        c.p++;
    }
    if (!rs_at(&c, "seq=")) {
        return;
    }
    c.p += 4;
    if (rs_number(&c, &n) || (c.p < c.end && *c.p != ' ')) {
        return;
    }
    m->has_seq = 1;
    m->seq = n;
    if (!m->tag && rs_at(&c, " run=")) {
        c.p += 5;
        m->tag_len = rs_token(&c, &m->tag);
        m->tag_escaped = 0;
    }
}

/* "<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID SD [MSG]", the cursor after "<PRI>". */
static int
rs_5424(struct rs_cur *c, struct recv_msg *m)
{
    const char *tok;

    if (!rs_at(c, "1 ")) {
        return -1;
    }
    c->p += 2;
    if (!rs_token(c, &tok) || rs_space(c) || rs_host(c, m) || rs_space(c)) {
        return -1;
    }
    /* APP-NAME, PROCID, MSGID */
    for (int i = 0; i < 3; i++) {
        if (!rs_token(c, &tok) || rs_space(c)) {
            return -1;
        }
    }
    if (!rs_sd(c, m) && !m->has_seq) {
        rs_text_marks(*c, m);
    }
    return 0;
}

/* "Mmm dd hh:mm:ss " (the day padded with a space) or an RFC 3339 stamp and a space; @return 0 or -1. */
static int
rs_trad_stamp(struct rs_cur *c)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    const char *tok;

    if (c->end - c->p >= 16 && c->p[3] == ' ' && c->p[6] == ' ' && c->p[9] == ':' && c->p[12] == ':' &&
        c->p[15] == ' ') {
        for (int i = 0; i < 12; i++) {
            if (!memcmp(c->p, months + 3 * i, 3)) {
                c->p += 16;
                return 0;
            }
        }
        return -1;
    }
    /* "2026-12-07T15:40:00.123456+00:00": four digits and a dash, then a token. */
    if (c->end - c->p >= 5 && rs_is_digit(c->p[0]) && rs_is_digit(c->p[1]) && rs_is_digit(c->p[2]) &&
        rs_is_digit(c->p[3]) && c->p[4] == '-') {
        return rs_token(c, &tok) && !rs_space(c) ? 0 : -1;
    }
    return -1;
}

/* "TIMESTAMP HOST TAG MSG", the cursor after an optional "<PRI>". */
static int
rs_traditional(struct rs_cur *c, struct recv_msg *m)
{
    const char *tok;

    if (rs_trad_stamp(c) || rs_host(c, m)) {
        return -1;
    }
    /* The TAG ("app:", "app[pid]:") and MSG after it; a line may end after the host. */
    if (!rs_space(c) && rs_token(c, &tok)) {
        rs_text_marks(*c, m);
    }
    return 0;
}

int
recv_syslog_parse(const char *line, size_t len, struct recv_msg *m)
{
    struct rs_cur c = {line, line + len};
    struct rs_cur octets;
    uint64_t ignored;
    int rc;

    memset(m, 0, sizeof *m);
    /* syslog-ng may keep the octet count of RFC 6587 in front: "LEN <PRI>1 ...". */
    octets = c;
    if (!rs_number(&octets, &ignored) && !rs_space(&octets) && octets.p < octets.end && *octets.p == '<') {
        c = octets;
    }
    if (!rs_pri(&c)) {
        struct rs_cur after_pri = c;
        rc = rs_5424(&c, m);
        if (rc) {
            memset(m, 0, sizeof *m);
            c = after_pri;
            rc = rs_traditional(&c, m);
        }
    } else {
        rc = rs_traditional(&c, m);
    }
    if (rc) {
        memset(m, 0, sizeof *m);
    }
    return rc;
}

int
recv_tag_equal(const struct recv_msg *m, const char *tag)
{
    const char *p = m->tag;
    const char *end = m->tag ? m->tag + m->tag_len : NULL;

    if (!p) {
        return 0;
    }
    for (; *tag; tag++) {
        char want = *tag;
        if (p >= end) {
            return 0;
        }
        if (m->tag_escaped && *p == '\\' && p + 1 < end) {
            p++; /* an escaped '"', '\' or ']' (RFC 5424 section 6.3.3) */
        } else if (!m->tag_escaped && !rs_is_print(want)) {
            want = '_'; /* 3164 header text: fleetsim writes such bytes as '_' */
        }
        if (*p++ != want) {
            return 0;
        }
    }
    return p == end;
}
