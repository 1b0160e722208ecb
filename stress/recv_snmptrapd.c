/*
 * Reading snmptrapd's log; see recv_snmptrapd.h. Only the line's bytes are
 * read (no NUL is needed); a line that is not recognised is 0, never an
 * error: the log holds snmptrapd's own lines too.
 */
#include "recv_snmptrapd.h"

#include <string.h>

/* Longest sysName.0 value taken (RFC 1213: DisplayString, at most 255). */
#define RT_SYSNAME_MAX_BYTES 255

static int
rt_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* "YYYY-MM-DD hh:mm:ss " at the start (the default formats' %.4y-%.2m-%.2l %.2h:%.2j:%.2k). */
static int
rt_stamp(const char *s, size_t len)
{
    static const char shape[] = "0000-00-00 00:00:00 ";

    if (len < sizeof shape - 1) {
        return 0;
    }
    for (size_t i = 0; i < sizeof shape - 1; i++) {
        if (shape[i] == '0' ? !rt_digit(s[i]) : s[i] != shape[i]) {
            return 0;
        }
    }
    return 1;
}

static int
rt_addr_char(char c)
{
    return rt_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == '.' || c == ':';
}

int
recv_trapd_header(const char *line, size_t len, const char **addr, size_t *addr_len)
{
    static const char *const marks[] = {"[UDP: [", "[UDP/IPv6: [", "UDP: [", "UDP/IPv6: ["};
    const char *s = NULL;
    size_t n = 0;

    if (!rt_stamp(line, len)) {
        return 0;
    }
    for (size_t i = 0; i < sizeof marks / sizeof marks[0] && !s; i++) {
        const char *hit = memmem(line, len, marks[i], strlen(marks[i]));
        if (hit) {
            s = hit + strlen(marks[i]);
        }
    }
    if (!s) {
        return 0;
    }
    while (s + n < line + len && rt_addr_char(s[n]) && n <= RECV_TRAPD_ADDR_MAX_BYTES) {
        n++;
    }
    if (!n || n > RECV_TRAPD_ADDR_MAX_BYTES || s + n >= line + len || s[n] != ']') {
        return 0;
    }
    *addr = s;
    *addr_len = n;
    return 1;
}

/* The first of @p marks (each "... = STRING: ") found in @p line: its value, quoted or up to a tab. */
static int
rt_string_value(const char *line, size_t len, const char *const *marks, size_t mark_count, const char **value,
                size_t *value_len)
{
    for (size_t i = 0; i < mark_count; i++) {
        const char *hit = memmem(line, len, marks[i], strlen(marks[i]));
        const char *s, *end = line + len;
        size_t n = 0;
        if (!hit) {
            continue;
        }
        s = hit + strlen(marks[i]);
        /* The value ends at the tab before the next varbind, or the line's end. */
        if (s < end && *s == '"') {
            s++;
            while (s + n < end && s[n] != '"') {
                n++;
            }
        } else {
            while (s + n < end && s[n] != '\t') {
                n++;
            }
        }
        if (n && n <= RT_SYSNAME_MAX_BYTES) {
            *value = s;
            *value_len = n;
            return 1;
        }
    }
    return 0;
}

int
recv_trapd_sysname(const char *line, size_t len, const char **name, size_t *name_len)
{
    /* As snmptrapd prints it with the MIBs, with -On, and without MIBs (net-snmp's "iso" for 1). */
    static const char *const marks[] = {
        "sysName.0 = STRING: ", ".1.3.6.1.2.1.1.5.0 = STRING: ", "iso.3.6.1.2.1.1.5.0 = STRING: "};

    return rt_string_value(line, len, marks, sizeof marks / sizeof marks[0], name, name_len);
}

int
recv_trapd_run_tag(const char *line, size_t len, const char **tag, size_t *tag_len)
{
    /* The enterprise arc printed as ".1.3.6.1.4.1", "iso.3.6.1.4.1" or "SNMPv2-SMI::enterprises". */
    static const char *const marks[] = {".32473.1.2.0 = STRING: "};

    return rt_string_value(line, len, marks, 1, tag, tag_len);
}
