/*
 * Parsing "channel,source,count" rows; see recv_csv.h.
 */
#include "recv_csv.h"

#include <string.h>

/*
 * The field at *p into @p out (NUL-terminated, at most @p cap - 1 bytes); *p moves past the field and its
 * comma. @return 0, or -1 with @p why set.
 */
static int
rc_field(const char **p, const char *end, char *out, size_t cap, int last, const char **why)
{
    size_t n = 0;
    const char *s = *p;

    if (s < end && *s == '"') {
        for (s++;; s++) {
            if (s >= end) {
                *why = "a quoted field is not closed";
                return -1;
            }
            if (*s == '"') {
                if (s + 1 < end && s[1] == '"') {
                    s++;
                } else {
                    s++;
                    break;
                }
            }
            if (n + 1 >= cap) {
                *why = "a field is too long";
                return -1;
            }
            out[n++] = *s;
        }
    } else {
        while (s < end && *s != ',') {
            if (*s == '"' || *s == '\0') {
                *why = "a quote or NUL inside an unquoted field";
                return -1;
            }
            if (n + 1 >= cap) {
                *why = "a field is too long";
                return -1;
            }
            out[n++] = *s++;
        }
    }
    out[n] = '\0';
    if (last ? s != end : (s >= end || *s != ',')) {
        *why = last ? "more than three fields" : "fewer than three fields (channel,source,count)";
        return -1;
    }
    *p = last ? s : s + 1;
    return 0;
}

int
recv_csv_parse(const char *line, size_t len, struct recv_csv_row *row, const char **why)
{
    const char *p = line, *end = line + len;
    char count[24];
    uint64_t v = 0;

    if (len && line[len - 1] == '\r') {
        end--;
    }
    if (p == end || *p == '#') {
        return 1;
    }
    if (rc_field(&p, end, row->channel, sizeof row->channel, 0, why) ||
        rc_field(&p, end, row->source, sizeof row->source, 0, why) ||
        rc_field(&p, end, count, sizeof count, 1, why)) {
        return -1;
    }
    if (!strcmp(row->channel, "channel")) {
        return 1; /* the header row */
    }
    if (!row->source[0]) {
        *why = "the source is empty";
        return -1;
    }
    if (!count[0]) {
        *why = "the count is empty";
        return -1;
    }
    for (const char *c = count; *c; c++) {
        if (*c < '0' || *c > '9' || v > (UINT64_MAX - 9) / 10) {
            *why = "the count is not a whole number";
            return -1;
        }
        v = v * 10 + (uint64_t)(*c - '0');
    }
    row->count = v;
    return 0;
}
