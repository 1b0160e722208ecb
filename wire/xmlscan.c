/*
 * The textual XML scanner; see xmlscan.h for what it reads and where it
 * gives up.
 */
#include "xmlscan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void
xmlscan_trim(const char **s, size_t *len)
{
    while (*len && xmlscan_is_space(**s)) {
        (*s)++;
        (*len)--;
    }
    while (*len && xmlscan_is_space((*s)[*len - 1])) {
        (*len)--;
    }
}

const char *
xmlscan_skip_misc(const char *p)
{
    for (;;) {
        while (xmlscan_is_space(*p)) {
            p++;
        }
        if (!strncmp(p, "<!--", 4)) {
            const char *end = strstr(p + 4, "-->");
            if (!end) {
                return NULL;
            }
            p = end + 3;
        } else if (!strncmp(p, "<?", 2)) {
            const char *end = strstr(p + 2, "?>");
            if (!end) {
                return NULL;
            }
            p = end + 2;
        } else {
            return p;
        }
    }
}

/* ASCII name characters only: other names (legal XML) are left to the full parser. */
static int
is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.' || c == ':';
}

/*
 * The qualified name at @p p, "p:name" or "name" (no empty prefix or local part, one colon at most),
 * bounded by @p end (NULL: by the text's NUL). @return The byte after it, or NULL when malformed.
 */
static const char *
read_qname(const char *p, const char *end, const char **prefix, size_t *prefix_len, const char **local,
           size_t *local_len)
{
    const char *name = p;
    const char *colon = NULL;

    for (; (!end || p < end) && is_name_char(*p); p++) {
        if (*p == ':') {
            if (colon) {
                return NULL;
            }
            colon = p;
        }
    }
    if (p == name || colon == name || colon == p - 1) {
        return NULL;
    }
    *prefix = colon ? name : NULL;
    *prefix_len = colon ? (size_t)(colon - name) : 0;
    *local = colon ? colon + 1 : name;
    *local_len = (size_t)(p - *local);
    return p;
}

int
xmlscan_read_tag(const char *p, struct xmlscan_tag *t)
{
    char quote = 0;

    memset(t, 0, sizeof *t);
    if (!p || *p != '<' || p[1] == '!' || p[1] == '?') {
        return -1;
    }
    t->start = p++;
    if (*p == '/') {
        t->end = 1;
        p++;
    }
    if (!(p = read_qname(p, NULL, &t->prefix, &t->prefix_len, &t->local, &t->local_len)) ||
        (*p && !xmlscan_is_space(*p) && *p != '/' && *p != '>')) {
        return -1; /* no name, or one with a character other names do not have (non-ASCII among them) */
    }
    t->attrs = p;
    for (; *p && (quote || *p != '>'); p++) {
        if (quote) {
            quote = *p == quote ? 0 : quote;
        } else if (*p == '"' || *p == '\'') {
            quote = *p;
        } else if (*p == '<') {
            return -1;
        }
    }
    if (*p != '>') {
        return -1;
    }
    t->empty = p[-1] == '/' && !t->end;
    t->attrs_len = (size_t)(p - t->attrs) - (t->empty ? 1 : 0);
    t->next = p + 1;
    return t->end && xmlscan_has_attrs(t) ? -1 : 0;
}

int
xmlscan_next_tag(const char *p, struct xmlscan_tag *t)
{
    while (p && (p = strchr(p, '<'))) {
        if (p[1] != '!' && p[1] != '?') {
            return xmlscan_read_tag(p, t);
        }
        {
            const char *end = !strncmp(p, "<!--", 4)        ? strstr(p, "-->")
                              : !strncmp(p, "<![CDATA[", 9) ? strstr(p, "]]>")
                              : p[1] == '?'                 ? strstr(p, "?>")
                                                            : NULL;
            p = end ? end + 2 : NULL;
        }
    }
    memset(t, 0, sizeof *t);
    return -1;
}

int
xmlscan_next_attr(const char **cursor, const char *end, struct xmlscan_attr *a)
{
    const char *p = *cursor;
    char quote;

    while (p < end && xmlscan_is_space(*p)) {
        p++;
    }
    if (p >= end) {
        *cursor = p;
        return 0;
    }
    if (p == *cursor) {
        return -1; /* XML wants white space before every attribute */
    }
    if (!(p = read_qname(p, end, &a->prefix, &a->prefix_len, &a->local, &a->local_len))) {
        return -1;
    }
    while (p < end && xmlscan_is_space(*p)) {
        p++;
    }
    if (p >= end || *p++ != '=') {
        return -1;
    }
    while (p < end && xmlscan_is_space(*p)) {
        p++;
    }
    if (p >= end || (*p != '"' && *p != '\'')) {
        return -1;
    }
    quote = *p++;
    a->value = p;
    while (p < end && *p != quote) {
        p++;
    }
    if (p >= end) {
        return -1;
    }
    a->value_len = (size_t)(p - a->value);
    *cursor = p + 1;
    return 1;
}

int
xmlscan_has_attrs(const struct xmlscan_tag *t)
{
    for (size_t i = 0; i < t->attrs_len; i++) {
        if (!xmlscan_is_space(t->attrs[i])) {
            return 1;
        }
    }
    return 0;
}

int
xmlscan_eq(const char *s, size_t len, const char *want)
{
    return strlen(want) == len && !memcmp(s, want, len);
}

int
xmlscan_is_xmlns(const struct xmlscan_attr *a)
{
    const char *name = a->prefix ? a->prefix : a->local;
    size_t len = a->prefix ? a->prefix_len : a->local_len;

    return len == 5 && !memcmp(name, "xmlns", 5);
}

int
xmlscan_plain_value(const char *v, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c < 0x20 || c >= 0x7f || c == '&' || c == '<' || c == '"') {
            return 0;
        }
    }
    return 1;
}

/* Same qualified name. */
static int
same_attr_name(const struct xmlscan_attr *a, const struct xmlscan_attr *b)
{
    return b->local_len == a->local_len && !memcmp(b->local, a->local, a->local_len) &&
           b->prefix_len == a->prefix_len && (!a->prefix_len || !memcmp(b->prefix, a->prefix, a->prefix_len));
}

int
xmlscan_attr_repeated(const struct xmlscan_tag *t, const struct xmlscan_attr *a)
{
    const char *cursor = t->attrs;
    const char *end = t->attrs + t->attrs_len;
    struct xmlscan_attr b;

    while (xmlscan_next_attr(&cursor, end, &b) == 1 && b.local != a->local) {
        if (same_attr_name(a, &b)) {
            return 1;
        }
    }
    return 0;
}

int
xmlscan_same_qname(const struct xmlscan_tag *a, const struct xmlscan_tag *b)
{
    return a->local_len == b->local_len && !memcmp(a->local, b->local, a->local_len) &&
           a->prefix_len == b->prefix_len && (!a->prefix_len || !memcmp(a->prefix, b->prefix, a->prefix_len));
}

int
xmlscan_push_decls(struct xmlscan_scope *scope, const struct xmlscan_tag *t)
{
    const char *cursor = t->attrs;
    const char *end = t->attrs + t->attrs_len;
    struct xmlscan_attr seen[8]; /* the first attributes, so most tags are read once */
    size_t seen_count = 0;
    struct xmlscan_attr a;
    int r;

    while ((r = xmlscan_next_attr(&cursor, end, &a)) == 1) {
        int repeated = 0;
        if (seen_count < sizeof seen / sizeof seen[0]) {
            for (size_t i = 0; i < seen_count && !repeated; i++) {
                repeated = same_attr_name(&a, &seen[i]);
            }
            seen[seen_count++] = a;
        } else {
            repeated = xmlscan_attr_repeated(t, &a);
        }
        if (repeated) {
            return -1; /* the same attribute twice is not XML */
        }
        if (!xmlscan_is_xmlns(&a)) {
            continue;
        }
        if (scope->count == XMLSCAN_MAX_NS || !a.value_len || !xmlscan_plain_value(a.value, a.value_len)) {
            return -1;
        }
        scope->ns[scope->count++] = (struct xmlscan_ns){
            .prefix = a.prefix ? a.local : NULL,
            .prefix_len = a.prefix ? a.local_len : 0,
            .uri = a.value,
            .uri_len = a.value_len,
        };
    }
    return r;
}

const struct xmlscan_ns *
xmlscan_resolve(const struct xmlscan_scope *scope, const char *prefix, size_t prefix_len)
{
    for (size_t i = scope->count; i-- > 0;) {
        const struct xmlscan_ns *ns = &scope->ns[i];
        if ((!prefix && !ns->prefix) || (prefix && ns->prefix && ns->prefix_len == prefix_len &&
                                         !memcmp(ns->prefix, prefix, prefix_len))) {
            return ns;
        }
    }
    return NULL;
}

int
xmlscan_is_elem(const struct xmlscan_scope *scope, const struct xmlscan_tag *t, const char *uri,
                const char *local)
{
    const struct xmlscan_ns *ns = xmlscan_resolve(scope, t->prefix, t->prefix_len);

    return xmlscan_eq(t->local, t->local_len, local) && ns && xmlscan_eq(ns->uri, ns->uri_len, uri);
}

/*
 * A plain value (xmlscan_plain_value()) written into an attribute: '>' as &gt; (XML allows it raw, but a
 * reply must never carry the base:1.0 end-of-message marker "]]>]]>", issue 28).
 */
static void
print_plain_value(struct sbuf *out, const char *v, size_t len)
{
    const char *run = v;

    for (size_t i = 0; i < len; i++) {
        if (v[i] == '>') {
            sbuf_add(out, run, (size_t)(v + i - run));
            sbuf_adds(out, "&gt;");
            run = v + i + 1;
        }
    }
    sbuf_add(out, run, (size_t)(v + len - run));
}

/*
 * A value that is not plain, copied leniently: references as written, quotes and '>' escaped. -1 for what has
 * no place in an attribute value (a '<', control or non-ASCII bytes): the attribute is then left out.
 */
static int
print_lenient_value(struct sbuf *out, const char *v, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c == '<' || c >= 0x7f || (c < 0x20 && c != '\t' && c != '\r' && c != '\n')) {
            return -1;
        }
    }
    for (size_t i = 0; i < len; i++) {
        if (v[i] == '"') {
            sbuf_adds(out, "&quot;");
        } else if (v[i] == '>') {
            sbuf_adds(out, "&gt;");
        } else if (v[i] == '&') {
            size_t j = i + 1;
            while (j < len && (is_name_char(v[j]) || v[j] == '#') && v[j] != ':') {
                j++;
            }
            sbuf_adds(out, j < len && v[j] == ';' && j > i + 1 ? "&" : "&amp;");
        } else {
            sbuf_add(out, v + i, 1);
        }
    }
    return 0;
}

int
xmlscan_print_attrs(const struct xmlscan_scope *scope, const struct xmlscan_tag *t, int strict,
                    struct sbuf *out, int *has_message_id)
{
    const char *cursor = t->attrs;
    const char *end = t->attrs + t->attrs_len;
    const struct xmlscan_ns *declared[XMLSCAN_MAX_NS];
    size_t declared_count = 0;
    struct xmlscan_attr a;
    int r;

    while ((r = xmlscan_next_attr(&cursor, end, &a)) == 1) {
        const struct xmlscan_ns *ns = NULL;
        int plain = xmlscan_plain_value(a.value, a.value_len);
        if (xmlscan_is_xmlns(&a)) {
            continue;
        }
        if (a.prefix && !(ns = xmlscan_resolve(scope, a.prefix, a.prefix_len)) && strict) {
            return -1;
        }
        if (!plain && strict) {
            return -1;
        }
        if ((a.prefix && !ns) || xmlscan_attr_repeated(t, &a)) {
            continue; /* lenient: an attribute a well-formed tag could not carry */
        }
        if (ns) {
            size_t i;
            /* Each prefix is declared once on the new tag: a repeated xmlns:p is not XML. */
            for (i = 0; i < declared_count && declared[i] != ns; i++) {
            }
            if (i == declared_count) {
                declared[declared_count++] = ns;
                sbuf_printf(out, " xmlns:%.*s=\"", (int)a.prefix_len, a.prefix);
                print_plain_value(out, ns->uri, ns->uri_len);
                sbuf_adds(out, "\"");
            }
        }
        {
            size_t mark = out->len;
            if (a.prefix) {
                sbuf_printf(out, " %.*s:%.*s=\"", (int)a.prefix_len, a.prefix, (int)a.local_len, a.local);
            } else {
                sbuf_printf(out, " %.*s=\"", (int)a.local_len, a.local);
            }
            if (plain) {
                /* A plain value needs no escaping but '>', whichever quotes it came in. */
                print_plain_value(out, a.value, a.value_len);
            } else if (print_lenient_value(out, a.value, a.value_len)) {
                if (!out->failed) {
                    out->len = mark;
                    out->buf[mark] = '\0';
                }
                continue;
            }
            sbuf_adds(out, "\"");
        }
        if (has_message_id && !a.prefix && xmlscan_eq(a.local, a.local_len, "message-id")) {
            *has_message_id = 1;
        }
    }
    return r == 0 && !out->failed ? 0 : -1;
}

const char *
xmlscan_read_ref(const char *p, struct sbuf *out)
{
    static const struct {
        const char *name; /* the reference after its '&', with its ';' */
        char c;           /* the character it stands for */
    } named[] = {{"lt;", '<'}, {"gt;", '>'}, {"amp;", '&'}, {"quot;", '"'}, {"apos;", '\''}};
    unsigned long cp;
    char *stop;
    char utf8[4];
    size_t n;

    if (*p++ != '&') {
        return NULL;
    }
    for (size_t k = 0; k < sizeof named / sizeof named[0]; k++) {
        size_t len = strlen(named[k].name);
        if (!strncmp(p, named[k].name, len)) {
            sbuf_add(out, &named[k].c, 1);
            return p + len;
        }
    }
    if (*p != '#' || !strchr(p, ';')) {
        return NULL;
    }
    errno = 0;
    cp = p[1] == 'x' ? strtoul(p + 2, &stop, 16) : strtoul(p + 1, &stop, 10);
    if (errno || *stop != ';' || stop == p + 1 || !cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        return NULL;
    }
    /* UTF-8 by hand: no locale involved. */
    if (cp < 0x80) {
        utf8[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        utf8[0] = (char)(0xC0 | (cp >> 6));
        utf8[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        utf8[0] = (char)(0xE0 | (cp >> 12));
        utf8[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        utf8[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        utf8[0] = (char)(0xF0 | (cp >> 18));
        utf8[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        utf8[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        utf8[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    sbuf_add(out, utf8, n);
    return stop + 1;
}

int
xmlscan_read_text(const char *p, struct sbuf *out, const char **stop, const char **why)
{
    sbuf_reserve(out, 64); /* an empty text is "" rather than NULL */
    while (*p) {
        if (!strncmp(p, "<![CDATA[", 9)) {
            const char *end = strstr(p + 9, "]]>");
            if (!end) {
                *why = "unterminated CDATA section";
                return -1;
            }
            sbuf_add(out, p + 9, (size_t)(end - (p + 9)));
            p = end + 3;
        } else if (!strncmp(p, "<!--", 4)) {
            const char *end = strstr(p + 4, "-->");
            if (!end) {
                *why = "unterminated comment";
                return -1;
            }
            p = end + 3;
        } else if (p[0] == '<' && p[1] == '/') {
            *stop = p;
            return 0;
        } else if (*p == '<') {
            *why = "an element where text was expected (put XML content in CDATA or escape its '<')";
            return -1;
        } else if (*p == '&') {
            if (!(p = xmlscan_read_ref(p, out))) {
                *why = "unknown or malformed entity reference";
                return -1;
            }
        } else {
            /* A run of plain characters at once. */
            size_t n = strcspn(p, "<&");
            sbuf_add(out, p, n);
            p += n;
        }
    }
    *why = "no end tag";
    return -1;
}
