/*
 * The textual XML scanner; see xmlscan.h for what it reads and where it
 * gives up.
 */
#include "xmlscan.h"

#include <string.h>

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

static void
split_qname(const char *name, size_t len, const char **prefix, size_t *prefix_len, const char **local,
            size_t *local_len)
{
    const char *colon = memchr(name, ':', len);

    if (colon) {
        *prefix = name;
        *prefix_len = (size_t)(colon - name);
        *local = colon + 1;
        *local_len = len - *prefix_len - 1;
    } else {
        *prefix = NULL;
        *prefix_len = 0;
        *local = name;
        *local_len = len;
    }
}

/* "p:name" or "name": no empty prefix or local part, one colon at most. */
static int
qname_well_formed(const char *prefix, size_t prefix_len, const char *local, size_t local_len)
{
    return local_len && !memchr(local, ':', local_len) && (!prefix || prefix_len);
}

int
xmlscan_read_tag(const char *p, struct xmlscan_tag *t)
{
    const char *name;
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
    name = p;
    while (is_name_char(*p)) {
        p++;
    }
    if (p == name) {
        return -1;
    }
    split_qname(name, (size_t)(p - name), &t->prefix, &t->prefix_len, &t->local, &t->local_len);
    if (!qname_well_formed(t->prefix, t->prefix_len, t->local, t->local_len)) {
        return -1;
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
    const char *name;
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
    name = p;
    while (p < end && is_name_char(*p)) {
        p++;
    }
    if (p == name) {
        return -1;
    }
    split_qname(name, (size_t)(p - name), &a->prefix, &a->prefix_len, &a->local, &a->local_len);
    if (!qname_well_formed(a->prefix, a->prefix_len, a->local, a->local_len)) {
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
    return (!a->prefix && xmlscan_eq(a->local, a->local_len, "xmlns")) ||
           (a->prefix && xmlscan_eq(a->prefix, a->prefix_len, "xmlns"));
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

int
xmlscan_attr_repeated(const struct xmlscan_tag *t, const struct xmlscan_attr *a)
{
    const char *cursor = t->attrs;
    const char *end = t->attrs + t->attrs_len;
    struct xmlscan_attr b;

    while (xmlscan_next_attr(&cursor, end, &b) == 1 && b.local != a->local) {
        if (b.local_len == a->local_len && !memcmp(b.local, a->local, a->local_len) &&
            b.prefix_len == a->prefix_len &&
            (!a->prefix_len || !memcmp(b.prefix, a->prefix, a->prefix_len))) {
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
    struct xmlscan_attr a;
    int r;

    while ((r = xmlscan_next_attr(&cursor, end, &a)) == 1) {
        if (xmlscan_attr_repeated(t, &a)) {
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
 * A value that is not plain, copied leniently: references as written, quotes escaped. -1 for what has
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
                sbuf_printf(out, " xmlns:%.*s=\"%.*s\"", (int)a.prefix_len, a.prefix, (int)ns->uri_len,
                            ns->uri);
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
                /* A plain value needs no escaping, whichever quotes it came in. */
                sbuf_add(out, a.value, a.value_len);
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
