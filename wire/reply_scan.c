/*
 * Scanning replies without parsing them: walk the tags, look only at the
 * local names a load client needs. Text inside CDATA sections and comments
 * is skipped so that a "<ok/>" in data is not mistaken for the element.
 */
#include "reply_scan.h"

#include <string.h>

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

/* Local name of the tag starting after '<' at p: sets name and its length. */
static void
tag_name(const char *p, const char *end, const char **name, size_t *len)
{
    const char *local = p;

    while (p < end && *p != '>' && *p != '/' && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n') {
        if (*p == ':') {
            local = p + 1;
        }
        p++;
    }
    *name = local;
    *len = (size_t)(p - local);
}

static int
name_is(const char *name, size_t len, const char *want)
{
    return strlen(want) == len && !memcmp(name, want, len);
}

/* The message-id attribute of the root tag [p, tag_end). */
static void
scan_message_id(const char *p, const char *tag_end, struct reply_info *info)
{
    while ((p = find(p, tag_end, "message-id"))) {
        const char *before = p - 1;
        p += sizeof "message-id" - 1;
        /* Must be a whole attribute name, optionally prefixed. */
        if (*before != ' ' && *before != ':' && *before != '\t' && *before != '\n' && *before != '\r') {
            continue;
        }
        while (p < tag_end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) {
            p++;
        }
        if (p >= tag_end || *p != '=') {
            continue;
        }
        p++;
        while (p < tag_end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) {
            p++;
        }
        if (p >= tag_end || (*p != '"' && *p != '\'')) {
            return;
        }
        p++;
        if (p >= tag_end || *p < '0' || *p > '9') {
            return;
        }
        info->message_id = 0;
        while (p < tag_end && *p >= '0' && *p <= '9') {
            info->message_id = info->message_id * 10 + (uint64_t)(*p - '0');
            p++;
        }
        info->has_message_id = 1;
        return;
    }
}

static void
copy_tag_text(const char *p, const char *end, struct reply_info *info)
{
    const char *close = memchr(p, '<', (size_t)(end - p));
    size_t n;

    if (!close) {
        return;
    }
    while (p < close && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) {
        p++;
    }
    while (close > p && (close[-1] == ' ' || close[-1] == '\t' || close[-1] == '\n' || close[-1] == '\r')) {
        close--;
    }
    n = (size_t)(close - p);
    if (n >= REPLY_TAG_MAX_BYTES) {
        n = REPLY_TAG_MAX_BYTES - 1;
    }
    memcpy(info->error_tag, p, n);
    info->error_tag[n] = '\0';
}

enum reply_kind
reply_scan(const char *xml, size_t len, struct reply_info *info)
{
    const char *p = xml;
    const char *end = xml + len;
    const char *name;
    size_t name_len;
    int root_seen = 0;

    memset(info, 0, sizeof *info);
    info->kind = REPLY_MALFORMED;
    while (p < end && (p = memchr(p, '<', (size_t)(end - p)))) {
        const char *tag_end;
        p++;
        if (p >= end) {
            break;
        }
        if (*p == '?') {
            p = find(p, end, "?>");
            if (!p) {
                break;
            }
            continue;
        }
        if (*p == '!') {
            /* Length first: the message is not NUL-terminated. */
            int comment = end - p >= 3 && !memcmp(p, "!--", 3);
            const char *close = comment ? find(p, end, "-->") : find(p, end, "]]>");
            if (!close) {
                break;
            }
            p = close;
            continue;
        }
        if (*p == '/') {
            continue;
        }
        tag_end = memchr(p, '>', (size_t)(end - p));
        if (!tag_end) {
            break;
        }
        tag_name(p, tag_end, &name, &name_len);
        if (!root_seen) {
            root_seen = 1;
            if (name_is(name, name_len, "rpc-reply")) {
                info->kind = REPLY_RPC_REPLY;
                scan_message_id(name + name_len, tag_end, info);
            } else if (name_is(name, name_len, "notification")) {
                info->kind = REPLY_NOTIFICATION;
                return info->kind;
            } else {
                info->kind = REPLY_OTHER;
                return info->kind;
            }
        } else if (name_is(name, name_len, "ok")) {
            info->ok = 1;
        } else if (name_is(name, name_len, "data")) {
            info->data = 1;
        } else if (name_is(name, name_len, "rpc-error")) {
            info->error_count++;
        } else if (name_is(name, name_len, "error-tag") && !info->error_tag[0] && tag_end[-1] != '/') {
            copy_tag_text(tag_end + 1, end, info);
        }
        p = tag_end + 1;
    }
    return info->kind;
}
