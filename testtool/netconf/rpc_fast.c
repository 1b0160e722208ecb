/*
 * The <edit-config> fast path; see rpc_fast.h for why. The scanner knows
 * just enough XML for a NETCONF envelope: start, end and empty tags with
 * quoted attributes, namespace declarations, comments and processing
 * instructions between elements. It gives up (returns -1) on anything
 * else rather than guess: the full path is always correct, this one only
 * has to be fast where it applies and identical where it answers.
 */
#include "rpc_fast.h"

#include <string.h>

#include "xmlscan.h"

#define NC_BASE_NS "urn:ietf:params:xml:ns:netconf:base:1.0"

struct xtag {
    int end;            /* 1 for </name> */
    int empty;          /* 1 for <name/> */
    const char *prefix; /* element prefix or NULL */
    size_t prefix_len;  /* its length */
    const char *local;  /* local name */
    size_t local_len;   /* its length */
    const char *attrs;  /* attribute text, after the name */
    size_t attrs_len;   /* its length */
    const char *next;   /* first byte after the tag */
};

struct xattr {
    const char *prefix; /* attribute prefix or NULL */
    size_t prefix_len;  /* its length */
    const char *local;  /* local name */
    size_t local_len;   /* its length */
    const char *value;  /* value as written, without quotes */
    size_t value_len;   /* its length */
};

/* Any attribute (or namespace declaration) on the tag? */
static int has_attrs(const struct xtag *t);

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

/* A tag starting at p ('<'); 0 on success. */
static int
read_tag(const char *p, struct xtag *t)
{
    const char *name;
    char quote = 0;

    memset(t, 0, sizeof *t);
    if (!p || *p != '<' || p[1] == '!' || p[1] == '?') {
        return -1;
    }
    p++;
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
    return t->end && t->attrs_len && strspn(t->attrs, " \t\r\n") < t->attrs_len ? -1 : 0;
}

/* Next attribute of a tag's attribute text; 1 when one was read, 0 at the end, -1 when malformed. */
static int
next_attr(const char **cursor, const char *end, struct xattr *a)
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

static int
eq(const char *s, size_t len, const char *want)
{
    return strlen(want) == len && !memcmp(s, want, len);
}

static int
is_xmlns(const struct xattr *a)
{
    return (!a->prefix && eq(a->local, a->local_len, "xmlns")) ||
           (a->prefix && eq(a->prefix, a->prefix_len, "xmlns"));
}

/*
 * A value this scanner may copy into another tag as written: printable
 * ASCII without '&', '<' or '"'. Anything else (entities, other quotes,
 * bytes libyang would check as UTF-8) goes to the full parser.
 */
static int
plain_value(const char *v, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c < 0x20 || c >= 0x7f || c == '&' || c == '<' || c == '"') {
            return 0;
        }
    }
    return 1;
}

static int attr_repeated(const struct xtag *t, const struct xattr *a);

/* Add the tag's namespace declarations to the scope. */
static int
push_decls(struct rpc_fast_edit *fe, const struct xtag *t)
{
    const char *cursor = t->attrs;
    const char *end = t->attrs + t->attrs_len;
    struct xattr a;
    int r;

    while ((r = next_attr(&cursor, end, &a)) == 1) {
        if (attr_repeated(t, &a)) {
            return -1; /* the same attribute twice is not XML */
        }
        if (!is_xmlns(&a)) {
            continue;
        }
        if (fe->ns_count == RPC_FAST_MAX_NS || !a.value_len || !plain_value(a.value, a.value_len)) {
            return -1;
        }
        fe->ns[fe->ns_count++] = (struct rpc_fast_ns){
            .prefix = a.prefix ? a.local : NULL,
            .prefix_len = a.prefix ? a.local_len : 0,
            .uri = a.value,
            .uri_len = a.value_len,
        };
    }
    return r;
}

static const struct rpc_fast_ns *
resolve(const struct rpc_fast_edit *fe, const char *prefix, size_t prefix_len)
{
    for (size_t i = fe->ns_count; i-- > 0;) {
        const struct rpc_fast_ns *ns = &fe->ns[i];
        if ((!prefix && !ns->prefix) || (prefix && ns->prefix && ns->prefix_len == prefix_len &&
                                         !memcmp(ns->prefix, prefix, prefix_len))) {
            return ns;
        }
    }
    return NULL;
}

/* An element of the NETCONF base namespace with this local name? */
static int
is_base(const struct rpc_fast_edit *fe, const struct xtag *t, const char *local)
{
    const struct rpc_fast_ns *ns = resolve(fe, t->prefix, t->prefix_len);

    return eq(t->local, t->local_len, local) && ns && eq(ns->uri, ns->uri_len, NC_BASE_NS);
}

/* <config> may declare namespaces for its content, nothing else: other attributes are the full parser's. */
static int
only_decls(const struct xtag *t)
{
    const char *cursor = t->attrs;
    const char *end = t->attrs + t->attrs_len;
    struct xattr a;
    int r;

    while ((r = next_attr(&cursor, end, &a)) == 1) {
        if (!is_xmlns(&a)) {
            return 0;
        }
    }
    return r == 0;
}

/* Does the tag carry an attribute of the same qualified name before @p a? */
static int
attr_repeated(const struct xtag *t, const struct xattr *a)
{
    const char *cursor = t->attrs;
    const char *end = t->attrs + t->attrs_len;
    struct xattr b;

    while (next_attr(&cursor, end, &b) == 1 && b.local != a->local) {
        if (b.local_len == a->local_len && !memcmp(b.local, a->local, a->local_len) &&
            b.prefix_len == a->prefix_len &&
            (!a->prefix_len || !memcmp(b.prefix, a->prefix, a->prefix_len))) {
            return 1;
        }
    }
    return 0;
}

/* The <rpc> attributes for the reply; prefixed ones bring their namespace. Requires message-id. */
static int
collect_reply_attrs(struct rpc_fast_edit *fe, const struct xtag *t)
{
    const char *cursor = t->attrs;
    const char *end = t->attrs + t->attrs_len;
    struct xattr a;
    int has_id = 0;
    int r;

    const struct rpc_fast_ns *declared[RPC_FAST_MAX_NS];
    size_t declared_count = 0;

    while ((r = next_attr(&cursor, end, &a)) == 1) {
        if (is_xmlns(&a)) {
            continue;
        }
        if (!plain_value(a.value, a.value_len)) {
            return -1;
        }
        if (a.prefix) {
            const struct rpc_fast_ns *ns = resolve(fe, a.prefix, a.prefix_len);
            size_t i;
            if (!ns) {
                return -1;
            }
            /* Each prefix is declared once on the reply: a repeated attribute is not XML. */
            for (i = 0; i < declared_count && declared[i] != ns; i++) {
            }
            if (i == declared_count) {
                declared[declared_count++] = ns;
                sbuf_printf(&fe->reply_attrs, " xmlns:%.*s=\"%.*s\"", (int)a.prefix_len, a.prefix,
                            (int)ns->uri_len, ns->uri);
            }
            sbuf_printf(&fe->reply_attrs, " %.*s:%.*s=\"", (int)a.prefix_len, a.prefix, (int)a.local_len,
                        a.local);
        } else {
            has_id |= eq(a.local, a.local_len, "message-id");
            sbuf_printf(&fe->reply_attrs, " %.*s=\"", (int)a.local_len, a.local);
        }
        /* A plain value needs no escaping, whichever quotes it came in. */
        sbuf_add(&fe->reply_attrs, a.value, a.value_len);
        sbuf_adds(&fe->reply_attrs, "\"");
    }
    return r == 0 && has_id && !fe->reply_attrs.failed ? 0 : -1;
}

static int
has_attrs(const struct xtag *t)
{
    return t->attrs_len && strspn(t->attrs, " \t\r\n") < t->attrs_len;
}

/* Same qualified name (prefix and local name) for an end tag and its start tag? */
static int
same_qname(const struct xtag *a, const struct xtag *b)
{
    return a->local_len == b->local_len && !memcmp(a->local, b->local, a->local_len) &&
           a->prefix_len == b->prefix_len && (!a->prefix_len || !memcmp(a->prefix, b->prefix, a->prefix_len));
}

/* Text of a simple parameter element up to its end tag: its index in @p names, or -1. */
static int
read_enum(const char **p, const struct xtag *open, const char *const *names, int count)
{
    const char *text = open->next;
    const char *close = strchr(text, '<');
    struct xtag end;

    if (open->empty || !close) {
        return -1;
    }
    if (read_tag(close, &end) || !end.end || !same_qname(&end, open)) {
        return -1;
    }
    *p = end.next;
    /* Exact text: an enumeration value with whitespace around it is not the value (libyang agrees). */
    for (int i = 0; i < count; i++) {
        if (eq(text, (size_t)(close - text), names[i])) {
            return i;
        }
    }
    return -1;
}

/* <target><running/></target> or <candidate/>. */
static int
read_target(struct rpc_fast_edit *fe, const char **p, const struct xtag *open)
{
    struct xtag ds;
    struct xtag end;
    const char *q;

    if (open->empty || read_tag(xmlscan_skip_misc(open->next), &ds) || ds.end) {
        return -1;
    }
    if (has_attrs(&ds)) {
        return -1; /* a namespace of its own, or attributes: the full parser judges those */
    }
    if (is_base(fe, &ds, "running")) {
        fe->target = DS_RUNNING;
    } else if (is_base(fe, &ds, "candidate")) {
        fe->target = DS_CANDIDATE;
    } else {
        return -1;
    }
    q = ds.next;
    if (!ds.empty) {
        if (read_tag(q, &end) || !end.end || !same_qname(&end, &ds)) {
            return -1;
        }
        q = end.next;
    }
    if (read_tag(xmlscan_skip_misc(q), &end) || !end.end || !same_qname(&end, open)) {
        return -1;
    }
    *p = end.next;
    return 0;
}

/* Does a tag's attribute text declare this prefix (NULL: the default namespace)? */
static int
tag_declares(const struct xtag *t, const struct rpc_fast_ns *ns)
{
    const char *cursor = t->attrs;
    const char *end = t->attrs + t->attrs_len;
    struct xattr a;

    while (next_attr(&cursor, end, &a) == 1) {
        if (!ns->prefix && !a.prefix && eq(a.local, a.local_len, "xmlns")) {
            return 1;
        }
        if (ns->prefix && a.prefix && eq(a.prefix, a.prefix_len, "xmlns") && a.local_len == ns->prefix_len &&
            !memcmp(a.local, ns->prefix, ns->prefix_len)) {
            return 1;
        }
    }
    return 0;
}

/*
 * Copy the <config> content, giving each top-level element the namespace
 * declarations it inherited from <rpc>, <edit-config> and <config>, so that
 * libyang can parse it on its own exactly as it would have inside the rpc.
 * One pass: it also finds the end of <config>, returned in @p close.
 */
static int
copy_config(struct rpc_fast_edit *fe, const char *content, const char **close)
{
    const char *p = content;
    const char *run = content;
    int depth = 0;

    while ((p = strchr(p, '<'))) {
        struct xtag t;
        if (p[1] == '!' || p[1] == '?') {
            const char *end = !strncmp(p, "<!--", 4)        ? strstr(p, "-->")
                              : !strncmp(p, "<![CDATA[", 9) ? strstr(p, "]]>")
                              : p[1] == '?'                 ? strstr(p, "?>")
                                                            : NULL;
            if (!end) {
                return -1;
            }
            p = end + 2;
            continue;
        }
        if (read_tag(p, &t)) {
            return -1;
        }
        if (t.end && depth-- == 0) {
            sbuf_add(&fe->config, run, (size_t)(p - run));
            *close = p;
            return fe->config.failed ? -1 : 0;
        }
        if (!t.end && depth == 0) {
            /* Inject after the element name. */
            sbuf_add(&fe->config, run, (size_t)(t.attrs - run));
            for (size_t i = 0; i < fe->ns_count; i++) {
                const struct rpc_fast_ns *ns = &fe->ns[i];
                if (resolve(fe, ns->prefix, ns->prefix_len) != ns || tag_declares(&t, ns)) {
                    continue; /* shadowed by a later declaration, or redeclared here */
                }
                if (ns->prefix) {
                    sbuf_printf(&fe->config, " xmlns:%.*s=\"%.*s\"", (int)ns->prefix_len, ns->prefix,
                                (int)ns->uri_len, ns->uri);
                } else {
                    sbuf_printf(&fe->config, " xmlns=\"%.*s\"", (int)ns->uri_len, ns->uri);
                }
            }
            run = t.attrs;
        }
        if (!t.end) {
            depth += !t.empty;
        }
        p = t.next;
    }
    return -1;
}

static int
read_config(struct rpc_fast_edit *fe, const char **p, const struct xtag *open)
{
    const char *close;
    struct xtag end;

    fe->has_config = 1;
    if (open->empty) {
        *p = open->next;
        return 0;
    }
    if (copy_config(fe, open->next, &close) || read_tag(close, &end) || !same_qname(&end, open)) {
        return -1;
    }
    *p = end.next;
    return 0;
}

int
rpc_fast_edit_scan(const char *msg, struct rpc_fast_edit *fe)
{
    static const char *const default_ops[] = {"merge", "replace", "none"};
    static const char *const test_options[] = {"test-then-set", "set", "test-only"};
    static const char *const error_options[] = {"stop-on-error", "continue-on-error", "rollback-on-error"};
    struct xtag rpc;
    struct xtag op;
    struct xtag t;
    const char *p;
    int has_target = 0;
    int seen_default = 0;
    int seen_test = 0;
    int seen_error = 0;
    size_t outer_ns;

    memset(fe, 0, sizeof *fe);
    /* <rpc message-id=...> */
    p = xmlscan_skip_misc(msg);
    if (read_tag(p, &rpc) || rpc.end || rpc.empty || push_decls(fe, &rpc) || !is_base(fe, &rpc, "rpc") ||
        collect_reply_attrs(fe, &rpc)) {
        return -1;
    }
    /* <edit-config> */
    p = xmlscan_skip_misc(rpc.next);
    if (read_tag(p, &op) || op.end || op.empty || push_decls(fe, &op) || !is_base(fe, &op, "edit-config")) {
        return -1;
    }
    /* Its parameters, in any order. */
    for (p = op.next;;) {
        p = xmlscan_skip_misc(p);
        if (read_tag(p, &t)) {
            return -1;
        }
        if (t.end) {
            if (!same_qname(&t, &op)) {
                return -1;
            }
            p = t.next;
            break;
        }
        /*
         * A parameter's own declarations apply to its own name: take them in
         * before deciding what it is, and drop them after it.
         */
        outer_ns = fe->ns_count;
        if (push_decls(fe, &t)) {
            return -1;
        }
        if (has_attrs(&t) && !(is_base(fe, &t, "config") && only_decls(&t))) {
            return -1; /* attributes or declarations on another parameter: leave it to the full parser */
        }
        if (is_base(fe, &t, "target") && !has_target) {
            has_target = 1;
            if (read_target(fe, &p, &t)) {
                return -1;
            }
        } else if (is_base(fe, &t, "default-operation") && !seen_default++) {
            if ((fe->default_op = read_enum(&p, &t, default_ops, 3)) < 0) {
                return -1;
            }
        } else if (is_base(fe, &t, "test-option") && !seen_test++) {
            if ((fe->test_option = read_enum(&p, &t, test_options, 3)) < 0) {
                return -1;
            }
        } else if (is_base(fe, &t, "error-option") && !seen_error++) {
            if ((fe->error_option = read_enum(&p, &t, error_options, 3)) < 0) {
                return -1;
            }
        } else if (is_base(fe, &t, "config") && !fe->has_config) {
            if (read_config(fe, &p, &t)) {
                return -1;
            }
        } else {
            return -1;
        }
        fe->ns_count = outer_ns;
    }
    /* </rpc> and nothing after it. */
    p = xmlscan_skip_misc(p);
    if (read_tag(p, &t) || !t.end || !same_qname(&t, &rpc)) {
        return -1;
    }
    p = xmlscan_skip_misc(t.next);
    return p && !*p && has_target && fe->has_config ? 0 : -1;
}

int
rpc_fast_edit_config(const struct rpc_fast_edit *fe, const struct ly_ctx *ctx, struct lyd_node **tree)
{
    *tree = NULL;
    if (!fe->config.len) {
        return 0;
    }
    if (lyd_parse_data_mem((struct ly_ctx *)ctx, fe->config.buf, LYD_XML,
                           LYD_PARSE_ONLY | LYD_PARSE_STRICT | LYD_PARSE_NO_STATE, 0, tree)) {
        lyd_free_all(*tree);
        *tree = NULL;
        return -1;
    }
    return 0;
}

void
rpc_fast_edit_free(struct rpc_fast_edit *fe)
{
    sbuf_free(&fe->reply_attrs);
    sbuf_free(&fe->config);
}
