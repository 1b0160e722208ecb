/*
 * Scanning notifications without parsing them: walk the tags of one
 * message, check the root's name and namespace, and look only at the local
 * names a subscriber counts. Comments, CDATA sections and processing
 * instructions are skipped, so markup inside them is never mistaken for an
 * element. The scan stops as soon as it knows everything asked for.
 */
#include "notif_scan.h"

#include <string.h>

static int
is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static const char *
find(const char *p, const char *end, const char *needle)
{
    size_t n = strlen(needle);

    for (; p + n <= end; p++) {
        if (*p == needle[0] && !memcmp(p, needle, n)) {
            return p;
        }
    }
    return NULL;
}

static int
name_is(const char *name, size_t len, const char *want)
{
    return strlen(want) == len && !memcmp(name, want, len);
}

/* The '>' closing the tag that starts at p ('<'), skipping quoted attribute values; NULL when unterminated.
 */
static const char *
tag_end(const char *p, const char *end)
{
    for (p++; p < end; p++) {
        if (*p == '"' || *p == '\'') {
            const char *q = memchr(p + 1, *p, (size_t)(end - p - 1));
            if (!q) {
                return NULL;
            }
            p = q;
        } else if (*p == '>') {
            return p;
        }
    }
    return NULL;
}

/* Name of the tag starting after '<' at p: its prefix (may be empty) and its local name. */
static const char *
tag_name(const char *p, const char *end, const char **prefix, size_t *prefix_len, const char **local,
         size_t *local_len)
{
    const char *start = p;

    *prefix = start;
    *prefix_len = 0;
    *local = start;
    while (p < end && *p != '>' && *p != '/' && !is_space(*p)) {
        if (*p == ':') {
            *prefix_len = (size_t)(p - start);
            *local = p + 1;
        }
        p++;
    }
    *local_len = (size_t)(p - *local);
    return p;
}

/* 1 when the attributes [p, close) declare the namespace of @p prefix (empty: the default one) as @p ns. */
static int
declares_ns(const char *p, const char *close, const char *prefix, size_t prefix_len, const char *ns)
{
    while (p < close) {
        const char *name;
        size_t name_len;
        char quote;
        const char *value;
        const char *value_end;

        while (p < close && is_space(*p)) {
            p++;
        }
        name = p;
        while (p < close && *p != '=' && !is_space(*p) && *p != '/') {
            p++;
        }
        name_len = (size_t)(p - name);
        while (p < close && is_space(*p)) {
            p++;
        }
        if (p >= close || *p != '=') {
            if (p < close) {
                p++;
            }
            continue;
        }
        p++;
        while (p < close && is_space(*p)) {
            p++;
        }
        if (p >= close || (*p != '"' && *p != '\'')) {
            return 0;
        }
        quote = *p++;
        value = p;
        value_end = memchr(p, quote, (size_t)(close - p));
        if (!value_end) {
            return 0;
        }
        p = value_end + 1;
        if (prefix_len ? (name_len == 6 + prefix_len && !memcmp(name, "xmlns:", 6) &&
                          !memcmp(name + 6, prefix, prefix_len))
                       : name_is(name, name_len, "xmlns")) {
            return name_is(value, (size_t)(value_end - value), ns);
        }
    }
    return 0;
}

/* Text from p up to the next '<', without surrounding whitespace. */
static void
text_at(const char *p, const char *end, const char **text, size_t *len)
{
    const char *stop = memchr(p, '<', (size_t)(end - p));

    if (!stop) {
        stop = end;
    }
    while (p < stop && is_space(*p)) {
        p++;
    }
    while (stop > p && is_space(stop[-1])) {
        stop--;
    }
    *text = p;
    *len = (size_t)(stop - p);
}

static void
read_seq(const char *p, const char *end, struct nscan_info *info)
{
    const char *text;
    size_t len;
    uint64_t v = 0;

    text_at(p, end, &text, &len);
    /* At most 19 digits: every such number fits in 64 bits. */
    if (!len || len > 19) {
        return;
    }
    for (size_t i = 0; i < len; i++) {
        if (text[i] < '0' || text[i] > '9') {
            return;
        }
        v = v * 10 + (uint64_t)(text[i] - '0');
    }
    info->seq = v;
    info->has_seq = 1;
}

enum nscan_kind
nscan_scan(const char *xml, size_t len, const char *seq_name, struct nscan_info *info)
{
    const char *p = xml;
    const char *end = xml + len;
    int depth = 0;      /* open elements, the root included */
    int root_seen = 0;  /* the root start tag was read and accepted */
    int event_seen = 0; /* the first child other than eventTime was read */
    int seq_done = !seq_name || !*seq_name;

    memset(info, 0, sizeof *info);
    info->kind = NSCAN_OTHER;
    while (p < end && (p = memchr(p, '<', (size_t)(end - p)))) {
        const char *close;
        const char *prefix;
        const char *local;
        size_t prefix_len;
        size_t local_len;
        const char *after_name;

        if (end - p < 2) {
            break;
        }
        if (p[1] == '?') {
            p = find(p, end, "?>");
            p = p ? p + 2 : end;
            continue;
        }
        if (end - p >= 4 && !memcmp(p, "<!--", 4)) {
            p = find(p + 4, end, "-->");
            p = p ? p + 3 : end;
            continue;
        }
        if (end - p >= 9 && !memcmp(p, "<![CDATA[", 9)) {
            p = find(p + 9, end, "]]>");
            p = p ? p + 3 : end;
            continue;
        }
        close = tag_end(p, end);
        if (!close) {
            break;
        }
        if (p[1] == '!') {
            p = close + 1;
            continue;
        }
        if (p[1] == '/') {
            if (--depth <= 0) {
                break; /* the root closed */
            }
            p = close + 1;
            continue;
        }
        after_name = tag_name(p + 1, close, &prefix, &prefix_len, &local, &local_len);
        if (!root_seen) {
            if (!name_is(local, local_len, "notification") ||
                !declares_ns(after_name, close, prefix, prefix_len, NSCAN_NOTIF_NS)) {
                return info->kind; /* not a notification: an rpc-reply, or another namespace */
            }
            root_seen = 1;
            info->kind = NSCAN_DATA;
        } else {
            if (depth == 1 && !event_seen) {
                if (name_is(local, local_len, "eventTime")) {
                    const char *text;
                    size_t text_len;
                    text_at(close + 1, end, &text, &text_len);
                    if (text_len >= sizeof info->event_time) {
                        text_len = sizeof info->event_time - 1;
                    }
                    memcpy(info->event_time, text, text_len);
                    info->event_time[text_len] = '\0';
                } else {
                    /* RFC 5277's markers are told by local name; their namespace is not checked. */
                    event_seen = 1;
                    if (name_is(local, local_len, "replayComplete")) {
                        info->kind = NSCAN_REPLAY_COMPLETE;
                    } else if (name_is(local, local_len, "notificationComplete")) {
                        info->kind = NSCAN_NOTIFICATION_COMPLETE;
                    }
                }
            }
            if (!seq_done && name_is(local, local_len, seq_name)) {
                seq_done = 1;
                if (close[-1] != '/') {
                    read_seq(close + 1, end, info);
                }
            }
            if (event_seen && seq_done) {
                break;
            }
        }
        if (close[-1] != '/') {
            depth++;
        } else if (depth == 0) {
            break; /* <notification/>: nothing inside */
        }
        p = close + 1;
    }
    return info->kind;
}
