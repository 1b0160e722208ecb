/*
 * Scanning YANG-Push messages without parsing them: the root must be a
 * <notification> of RFC 5277's namespace; its eventTime is read, and its
 * first other child names the kind when it is one of RFC 8639's or RFC
 * 8641's notifications in their namespaces. Only that child's <id> and
 * <reason> are read; the datastore contents are never walked (a
 * push-update of a large subtree costs a few tags), except for a memmem()
 * of the editor's sequence mark when on-change latency is measured.
 * Tags go through the shared xmlscan, so prefixes, comments and CDATA are
 * handled as in the server's own fast paths.
 */
#include "push_scan.h"

#include <stdio.h>
#include <string.h>

#include "notif_scan.h"
#include "xmlscan.h"

/* Depth of the scope stack kept: the root, its child, the child's leaves. */
#define PSCAN_DEPTH_MAX 4
/* Tags read under the kind's element while looking for <id> and <reason>, at most: they come first. */
#define PSCAN_CHILD_TAGS_MAX 16

static const char *const kind_names[] = {
    [PSCAN_PUSH_UPDATE] = "push-update",
    [PSCAN_PUSH_CHANGE_UPDATE] = "push-change-update",
    [PSCAN_STARTED] = "subscription-started",
    [PSCAN_MODIFIED] = "subscription-modified",
    [PSCAN_TERMINATED] = "subscription-terminated",
    [PSCAN_SUSPENDED] = "subscription-suspended",
    [PSCAN_RESUMED] = "subscription-resumed",
    [PSCAN_COMPLETED] = "subscription-completed",
    [PSCAN_REPLAY_COMPLETED] = "replay-completed",
    [PSCAN_EVENT] = "event",
};

const char *
pscan_kind_name(enum pscan_kind kind)
{
    return kind < PSCAN_KIND_COUNT ? kind_names[kind] : "other";
}

/* The plain text of a leaf from @p p up to the next '<', trimmed, into @p buf; -1 when it holds a reference
 * or does not fit (then buf is ""). */
static int
leaf_text(const char *p, char *buf, size_t len)
{
    const char *end = strchr(p, '<');
    size_t n;

    buf[0] = '\0';
    if (!end) {
        return -1;
    }
    n = (size_t)(end - p);
    xmlscan_trim(&p, &n);
    if (n >= len || memchr(p, '&', n)) {
        return -1;
    }
    memcpy(buf, p, n);
    buf[n] = '\0';
    return 0;
}

static int
parse_u32(const char *s, uint32_t *out)
{
    uint64_t v = 0;

    if (!*s) {
        return -1;
    }
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || (v = v * 10 + (uint64_t)(*s - '0')) > UINT32_MAX) {
            return -1;
        }
    }
    *out = (uint32_t)v;
    return 0;
}

/* The largest number after PSCAN_SEQ_MARK in [p, end). */
static int
find_seq(const char *p, const char *end, uint64_t *seq)
{
    static const char mark[] = PSCAN_SEQ_MARK;
    int found = 0;

    while (p < end && (p = memmem(p, (size_t)(end - p), mark, sizeof mark - 1))) {
        uint64_t v = 0;
        int digits = 0;
        for (p += sizeof mark - 1; p < end && *p >= '0' && *p <= '9' && digits < 19; p++, digits++) {
            v = v * 10 + (uint64_t)(*p - '0');
        }
        if (digits && (!found || v > *seq)) {
            *seq = v;
            found = 1;
        }
    }
    return found;
}

/* The kind named by the element @p t in @p scope, PSCAN_EVENT for any other. */
static enum pscan_kind
kind_of(const struct xmlscan_scope *scope, const struct xmlscan_tag *t)
{
    for (int k = 0; k < PSCAN_EVENT; k++) {
        const char *ns = k <= PSCAN_PUSH_CHANGE_UPDATE ? PSCAN_YP_NS : PSCAN_SN_NS;
        if (xmlscan_is_elem(scope, t, ns, kind_names[k])) {
            return (enum pscan_kind)k;
        }
    }
    return PSCAN_EVENT;
}

/* Read <id> and <reason> among the first tags under the kind's element, which starts before @p p. */
static void
read_child_leaves(const char *p, struct pscan_info *info)
{
    struct xmlscan_tag t;
    char text[PSCAN_REASON_MAX_BYTES];
    int depth = 0;

    for (int n = 0; n < PSCAN_CHILD_TAGS_MAX && !xmlscan_next_tag(p, &t); n++, p = t.next) {
        if (t.end) {
            if (depth-- == 0) {
                return; /* the kind's element ended */
            }
            continue;
        }
        if (depth == 0 && !t.empty && xmlscan_eq(t.local, t.local_len, "id") && !info->has_id) {
            if (!leaf_text(t.next, text, sizeof text) && !parse_u32(text, &info->id)) {
                info->has_id = 1;
            }
        } else if (depth == 0 && !t.empty && xmlscan_eq(t.local, t.local_len, "reason") && !info->reason[0]) {
            leaf_text(t.next, info->reason, sizeof info->reason);
        }
        if (!t.empty) {
            depth++;
        }
        if (info->has_id &&
            (info->reason[0] || (info->kind != PSCAN_TERMINATED && info->kind != PSCAN_SUSPENDED &&
                                 info->kind != PSCAN_COMPLETED))) {
            return;
        }
    }
}

enum pscan_kind
pscan_scan(const char *xml, size_t len, int want_seq, struct pscan_info *info)
{
    struct xmlscan_scope scope = {.count = 0};
    struct xmlscan_tag t;
    const char *p;
    size_t root_scope;

    memset(info, 0, sizeof *info);
    info->kind = PSCAN_OTHER;
    p = xmlscan_skip_misc(xml);
    if (!p || *p != '<' || xmlscan_read_tag(p, &t) || t.end || t.empty || xmlscan_push_decls(&scope, &t) ||
        !xmlscan_is_elem(&scope, &t, NSCAN_NOTIF_NS, "notification")) {
        return PSCAN_OTHER;
    }
    root_scope = scope.count;
    /* The root's children: eventTime, then the one that names the notification. */
    for (p = t.next; !xmlscan_next_tag(p, &t); p = t.next) {
        if (t.end) {
            return PSCAN_OTHER; /* a notification without content */
        }
        scope.count = root_scope;
        if (xmlscan_push_decls(&scope, &t)) {
            return PSCAN_OTHER;
        }
        if (xmlscan_is_elem(&scope, &t, NSCAN_NOTIF_NS, "eventTime")) {
            if (!t.empty && !leaf_text(t.next, info->event_time, sizeof info->event_time)) {
                info->has_time = !pscan_time_us(info->event_time, &info->event_us);
            }
            /* Step over its text and end tag. */
            if (!t.empty && (xmlscan_next_tag(t.next, &t) || !t.end)) {
                return PSCAN_OTHER;
            }
            continue;
        }
        info->kind = kind_of(&scope, &t);
        break;
    }
    if (info->kind == PSCAN_OTHER) {
        return PSCAN_OTHER;
    }
    if (info->kind != PSCAN_EVENT && !t.empty) {
        read_child_leaves(t.next, info);
    }
    if (want_seq && (info->kind == PSCAN_PUSH_CHANGE_UPDATE || info->kind == PSCAN_PUSH_UPDATE)) {
        info->has_seq = find_seq(t.next, xml + len, &info->seq);
    }
    return info->kind;
}

int
pscan_reply_id(const char *xml, uint32_t *id)
{
    struct xmlscan_scope scope = {.count = 0};
    struct xmlscan_tag t;
    char text[16];
    const char *p = xmlscan_skip_misc(xml);
    size_t saved[PSCAN_DEPTH_MAX];
    int depth = 0;

    if (!p || *p != '<') {
        return -1;
    }
    /* The reply's children: <id> of RFC 8639 (with replay-start-time-revision maybe); nothing deeper. */
    for (; !xmlscan_next_tag(p, &t); p = t.next) {
        if (t.end) {
            if (--depth < 0) {
                return -1;
            }
            scope.count = saved[depth];
            continue;
        }
        if (depth >= PSCAN_DEPTH_MAX) {
            return -1;
        }
        saved[depth] = scope.count;
        if (xmlscan_push_decls(&scope, &t)) {
            return -1;
        }
        if (depth == 1 && xmlscan_is_elem(&scope, &t, PSCAN_SN_NS, "id") && !t.empty) {
            return leaf_text(t.next, text, sizeof text) || parse_u32(text, id) ? -1 : 0;
        }
        if (t.empty) {
            scope.count = saved[depth];
        } else {
            depth++;
        }
    }
    return -1;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
static int64_t
days_from_civil(int64_t y, unsigned m, unsigned d)
{
    int64_t era;
    unsigned yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = (unsigned)(y - era * 400);
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* @p n digits at @p s as a number; -1 when one is not a digit. */
static int
digits(const char *s, int n)
{
    int v = 0;

    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return -1;
        }
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

int
pscan_time_us(const char *s, int64_t *us)
{
    int y, mo, d, h, mi, sec;
    int64_t frac = 0, offset_s = 0;
    const char *p;

    y = digits(s, 4);
    if (y < 0 || s[4] != '-' || (mo = digits(s + 5, 2)) < 1 || mo > 12 || s[7] != '-' ||
        (d = digits(s + 8, 2)) < 1 || d > 31 || (s[10] != 'T' && s[10] != 't') ||
        (h = digits(s + 11, 2)) < 0 || h > 23 || s[13] != ':' || (mi = digits(s + 14, 2)) < 0 || mi > 59 ||
        s[16] != ':' || (sec = digits(s + 17, 2)) < 0 || sec > 60) {
        return -1;
    }
    p = s + 19;
    if (*p == '.') {
        int n = 0;
        for (p++; *p >= '0' && *p <= '9'; p++, n++) {
            if (n < 6) {
                frac = frac * 10 + (*p - '0');
            }
        }
        if (!n) {
            return -1;
        }
        for (; n < 6; n++) {
            frac *= 10;
        }
    }
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int oh = digits(p + 1, 2), om = p[3] == ':' ? digits(p + 4, 2) : -1;
        if (oh < 0 || oh > 23 || om < 0 || om > 59) {
            return -1;
        }
        offset_s = (*p == '+' ? 1 : -1) * (int64_t)(oh * 3600 + om * 60);
        p += 6;
    } else {
        return -1;
    }
    if (*p) {
        return -1;
    }
    *us = ((days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + sec) - offset_s) *
              1000000 +
          frac;
    return 0;
}

void
pscan_time_text(int64_t us, char *buf, size_t len)
{
    int64_t secs = us >= 0 ? us / 1000000 : -((-us + 999999) / 1000000);
    int64_t micro = us - secs * 1000000;
    int64_t days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
    int64_t rem = secs - days * 86400;
    /* civil_from_days */
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t y = (int64_t)yoe + era * 400;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    unsigned d = doy - (153 * mp + 2) / 5 + 1;
    unsigned m = mp < 10 ? mp + 3 : mp - 9;

    y += m <= 2;
    snprintf(buf, len, "%04lld-%02u-%02uT%02d:%02d:%02d.%06lldZ", (long long)y, m, d, (int)(rem / 3600),
             (int)(rem / 60 % 60), (int)(rem % 60), (long long)micro);
}

static int
name_char(char c, int first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           (!first && ((c >= '0' && c <= '9') || c == '-' || c == '.'));
}

int
pscan_xpath_ns_decls(const char *xpath, struct sbuf *out, char *bad, size_t bad_len)
{
    const char *p = xpath;
    size_t start = out->len;

    bad[0] = '\0';
    while (*p) {
        const char *name = p;
        size_t n;
        char decl[256];
        if (*p == '\'' || *p == '"') {
            const char *q = strchr(p + 1, *p);
            p = q ? q + 1 : p + strlen(p);
            continue;
        }
        if (!name_char(*p, 1) || (p > xpath && name_char(p[-1], 0))) {
            p++;
            continue;
        }
        while (name_char(*p, 0)) {
            p++;
        }
        n = (size_t)(p - name);
        if (*p != ':' || p[1] == ':') {
            continue;
        }
        if (n >= 200 || (strncmp(name, "ietf-", 5) && strncmp(name, "iana-", 5))) {
            snprintf(bad, bad_len, "%.*s", (int)n, name);
            return -1;
        }
        snprintf(decl, sizeof decl, " xmlns:%.*s=\"urn:ietf:params:xml:ns:yang:%.*s\"", (int)n, name, (int)n,
                 name);
        if (!out->buf || !memmem(out->buf + start, out->len - start, decl, strlen(decl))) {
            sbuf_adds(out, decl);
        }
        p++;
    }
    return 0;
}

void
pslots_init(struct pslots *s, uint64_t period_us, int anchored, int64_t anchor_us)
{
    memset(s, 0, sizeof *s);
    s->period_us = period_us ? period_us : 1;
    s->anchored = anchored;
    s->anchor_us = anchor_us;
}

int64_t
pslots_slot_us(const struct pslots *s, uint64_t k)
{
    return s->anchor_us + (int64_t)(k * s->period_us);
}

enum pslot_verdict
pslots_add(struct pslots *s, int64_t event_us, uint64_t *k, int64_t *offset_us)
{
    int64_t half = (int64_t)(s->period_us / 2);
    uint64_t slot;

    if (!s->anchored) {
        s->anchor_us = event_us; /* without anchor-time the server's first update is slot 0 */
        s->anchored = 1;
    }
    if (event_us < s->anchor_us - half) {
        s->early++;
        *k = 0;
        *offset_us = event_us - s->anchor_us;
        return PSLOT_EARLY;
    }
    slot = (uint64_t)(event_us - s->anchor_us + half) / s->period_us; /* the nearest slot */
    *k = slot;
    *offset_us = event_us - pslots_slot_us(s, slot);
    s->updates++;
    if (!s->started) {
        s->started = 1;
        s->first_k = s->last_k = slot;
        s->seen_bits = 1;
        return PSLOT_NEXT;
    }
    if (slot > s->last_k) {
        uint64_t gap = slot - s->last_k - 1;
        s->missed += gap;
        s->seen_bits = gap + 1 >= 64 ? 1 : (s->seen_bits << (gap + 1)) | 1;
        s->last_k = slot;
        return gap ? PSLOT_GAP : PSLOT_NEXT;
    }
    /* An earlier slot: seen already (duplicate), or one counted missed (late). */
    if (s->last_k - slot < 64 && !(s->seen_bits & (1ull << (s->last_k - slot)))) {
        s->seen_bits |= 1ull << (s->last_k - slot);
        if (slot < s->first_k) {
            s->first_k = slot; /* before the first: it was never counted missed */
        } else {
            s->missed--;
        }
        s->late++;
        return PSLOT_LATE;
    }
    s->duplicates++;
    return PSLOT_DUPLICATE;
}

uint64_t
pslots_finish(struct pslots *s, int64_t end_us, uint64_t grace_us)
{
    int64_t due_us = end_us - (int64_t)grace_us;
    uint64_t due_k, added;

    if (!s->started || due_us < pslots_slot_us(s, s->last_k + 1)) {
        return 0;
    }
    due_k = (uint64_t)(due_us - s->anchor_us) / s->period_us; /* the last slot whose time has come */
    added = due_k - s->last_k;
    s->missed += added;
    /* As if the window moved on to the due slot unseen: a late update of one of them is still told. */
    s->seen_bits = added >= 64 ? 0 : s->seen_bits << added;
    s->last_k = due_k;
    return added;
}
