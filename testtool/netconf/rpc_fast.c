/*
 * The <edit-config> and <get-schema> fast paths; see rpc_fast.h for why. The scanner knows
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
#define NC_MON_NS  "urn:ietf:params:xml:ns:yang:ietf-netconf-monitoring"

/* An element of the NETCONF base namespace with this local name? */
static int
is_base(const struct rpc_fast_edit *fe, const struct xmlscan_tag *t, const char *local)
{
    return xmlscan_is_elem(&fe->scope, t, NC_BASE_NS, local);
}

/* <config> may declare namespaces for its content, nothing else: other attributes are the full parser's. */
static int
only_decls(const struct xmlscan_tag *t)
{
    const char *cursor = t->attrs;
    const char *end = t->attrs + t->attrs_len;
    struct xmlscan_attr a;
    int r;

    while ((r = xmlscan_next_attr(&cursor, end, &a)) == 1) {
        if (!xmlscan_is_xmlns(&a)) {
            return 0;
        }
    }
    return r == 0;
}

/* Text of a simple parameter element up to its end tag: its index in @p names, or -1. */
static int
read_enum(const char **p, const struct xmlscan_tag *open, const char *const *names, int count)
{
    const char *text = open->next;
    const char *close = strchr(text, '<');
    struct xmlscan_tag end;

    if (open->empty || !close) {
        return -1;
    }
    if (xmlscan_read_tag(close, &end) || !end.end || !xmlscan_same_qname(&end, open)) {
        return -1;
    }
    *p = end.next;
    /* Exact text: an enumeration value with whitespace around it is not the value (libyang agrees). */
    for (int i = 0; i < count; i++) {
        if (xmlscan_eq(text, (size_t)(close - text), names[i])) {
            return i;
        }
    }
    return -1;
}

/* <target><running/></target> or <candidate/>. */
static int
read_target(struct rpc_fast_edit *fe, const char **p, const struct xmlscan_tag *open)
{
    struct xmlscan_tag ds;
    struct xmlscan_tag end;
    const char *q;

    if (open->empty || xmlscan_read_tag(xmlscan_skip_misc(open->next), &ds) || ds.end) {
        return -1;
    }
    if (xmlscan_has_attrs(&ds)) {
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
        if (xmlscan_read_tag(q, &end) || !end.end || !xmlscan_same_qname(&end, &ds)) {
            return -1;
        }
        q = end.next;
    }
    if (xmlscan_read_tag(xmlscan_skip_misc(q), &end) || !end.end || !xmlscan_same_qname(&end, open)) {
        return -1;
    }
    *p = end.next;
    return 0;
}

/* Does a tag's attribute text declare this prefix (NULL: the default namespace)? */
static int
tag_declares(const struct xmlscan_tag *t, const struct xmlscan_ns *ns)
{
    const char *cursor = t->attrs;
    const char *end = t->attrs + t->attrs_len;
    struct xmlscan_attr a;

    while (xmlscan_next_attr(&cursor, end, &a) == 1) {
        if (!ns->prefix && !a.prefix && xmlscan_eq(a.local, a.local_len, "xmlns")) {
            return 1;
        }
        if (ns->prefix && a.prefix && xmlscan_eq(a.prefix, a.prefix_len, "xmlns") &&
            a.local_len == ns->prefix_len && !memcmp(a.local, ns->prefix, ns->prefix_len)) {
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

    struct xmlscan_tag t;

    while (!xmlscan_next_tag(p, &t)) {
        p = t.start;
        if (t.end && depth-- == 0) {
            sbuf_add(&fe->config, run, (size_t)(p - run));
            *close = p;
            return fe->config.failed ? -1 : 0;
        }
        if (!t.end && depth == 0) {
            /* Inject after the element name. */
            sbuf_add(&fe->config, run, (size_t)(t.attrs - run));
            for (size_t i = 0; i < fe->scope.count; i++) {
                const struct xmlscan_ns *ns = &fe->scope.ns[i];
                if (xmlscan_resolve(&fe->scope, ns->prefix, ns->prefix_len) != ns || tag_declares(&t, ns)) {
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
read_config(struct rpc_fast_edit *fe, const char **p, const struct xmlscan_tag *open)
{
    const char *close;
    struct xmlscan_tag end;

    fe->has_config = 1;
    if (open->empty) {
        *p = open->next;
        return 0;
    }
    if (copy_config(fe, open->next, &close) || xmlscan_read_tag(close, &end) ||
        !xmlscan_same_qname(&end, open)) {
        return -1;
    }
    *p = end.next;
    return 0;
}

/* Whitespace only: inside a get-schema, a comment or instruction is the full path's. */
static const char *
skip_space(const char *p)
{
    while (xmlscan_is_space(*p)) {
        p++;
    }
    return p;
}

/*
 * The next parameter of operation @p op at *@p p, after what @p skip passes over: 1 with its start tag in
 * @p t, 0 at the operation's end tag (*@p p then past it), -1 for anything else.
 */
static int
next_param(const char **p, const struct xmlscan_tag *op, const char *(*skip)(const char *),
           struct xmlscan_tag *t)
{
    const char *q = skip(*p);

    if (xmlscan_read_tag(q, t)) {
        return -1;
    }
    if (t->end) {
        if (!xmlscan_same_qname(t, op)) {
            return -1;
        }
        *p = t->next;
        return 0;
    }
    return 1;
}

/* @return 0 when what is left at @p p is </rpc> (of @p rpc), after what @p skip passes over, and nothing
 * more. */
static int
rpc_end(const char *p, const struct xmlscan_tag *rpc, const char *(*skip)(const char *))
{
    struct xmlscan_tag t;

    p = skip(p);
    if (xmlscan_read_tag(p, &t) || !t.end || !xmlscan_same_qname(&t, rpc)) {
        return -1;
    }
    p = xmlscan_skip_misc(t.next);
    return p && !*p ? 0 : -1;
}

int
rpc_fast_edit_scan(const char *msg, struct rpc_fast_edit *fe)
{
    static const char *const default_ops[] = {"merge", "replace", "none"};
    static const char *const test_options[] = {"test-then-set", "set", "test-only"};
    static const char *const error_options[] = {"stop-on-error", "continue-on-error", "rollback-on-error"};
    struct xmlscan_tag rpc;
    struct xmlscan_tag op;
    struct xmlscan_tag t;
    const char *p;
    int has_target = 0;
    int seen_default = 0;
    int seen_test = 0;
    int seen_error = 0;
    size_t outer_ns;
    int has_id = 0;

    memset(fe, 0, sizeof *fe);
    /* <rpc message-id=...> */
    p = xmlscan_skip_misc(msg);
    if (xmlscan_read_tag(p, &rpc) || rpc.end || rpc.empty || xmlscan_push_decls(&fe->scope, &rpc) ||
        !is_base(fe, &rpc, "rpc") || xmlscan_print_attrs(&fe->scope, &rpc, 1, &fe->reply_attrs, &has_id) ||
        !has_id) {
        return -1;
    }
    /* <edit-config> */
    p = xmlscan_skip_misc(rpc.next);
    if (xmlscan_read_tag(p, &op) || op.end || op.empty || xmlscan_push_decls(&fe->scope, &op) ||
        !is_base(fe, &op, "edit-config")) {
        return -1;
    }
    /* Its parameters, in any order. */
    for (p = op.next;;) {
        int more = next_param(&p, &op, xmlscan_skip_misc, &t);
        if (more < 0) {
            return -1;
        }
        if (!more) {
            break;
        }
        /*
         * A parameter's own declarations apply to its own name: take them in
         * before deciding what it is, and drop them after it.
         */
        outer_ns = fe->scope.count;
        if (xmlscan_push_decls(&fe->scope, &t)) {
            return -1;
        }
        if (xmlscan_has_attrs(&t) && !(is_base(fe, &t, "config") && only_decls(&t))) {
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
        fe->scope.count = outer_ns;
    }
    /* </rpc> and nothing after it. */
    return !rpc_end(p, &rpc, xmlscan_skip_misc) && has_target && fe->has_config ? 0 : -1;
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

/*
 * A parameter's plain text up to its end tag, copied into @p out (NUL-terminated). No references, CDATA,
 * comments, or whitespace at either end.
 */
static int
read_plain(const char **p, const struct xmlscan_tag *open, char *out, size_t out_size)
{
    const char *text = open->next;
    const char *close;
    struct xmlscan_tag end;
    size_t len;

    if (open->empty) {
        *out = '\0';
        *p = open->next;
        return 0;
    }
    close = strchr(text, '<');
    if (!close || (len = (size_t)(close - text)) >= out_size || memchr(text, '&', len)) {
        return -1;
    }
    if (len && (xmlscan_is_space(text[0]) || xmlscan_is_space(text[len - 1]))) {
        return -1; /* never a module name or revision; the full path says so */
    }
    if (xmlscan_read_tag(close, &end) || !end.end || !xmlscan_same_qname(&end, open)) {
        return -1;
    }
    memcpy(out, text, len);
    out[len] = '\0';
    *p = end.next;
    return 0;
}

/* The format's text names the identity yang of ietf-netconf-monitoring, as libyang would resolve it? */
static int
format_is_yang(const struct xmlscan_scope *scope, const char *text)
{
    const char *colon = strchr(text, ':');
    const struct xmlscan_ns *ns;

    if (colon) {
        ns = xmlscan_resolve(scope, text, (size_t)(colon - text));
        text = colon + 1;
    } else {
        ns = xmlscan_resolve(scope, NULL, 0);
    }
    return ns && xmlscan_eq(ns->uri, ns->uri_len, NC_MON_NS) && !strcmp(text, "yang");
}

int
rpc_fast_get_schema_scan(const char *msg, struct rpc_fast_get_schema *gs)
{
    struct xmlscan_tag rpc;
    struct xmlscan_tag op;
    struct xmlscan_tag t;
    const char *p;
    int seen_id = 0;
    int seen_version = 0;
    int seen_format = 0;
    int has_id = 0;
    size_t outer_ns;
    char format[16];

    memset(gs, 0, sizeof *gs);
    /* <rpc message-id=...>: an XML declaration may come before it, as with edit-config. */
    p = xmlscan_skip_misc(msg);
    if (xmlscan_read_tag(p, &rpc) || rpc.end || rpc.empty || xmlscan_push_decls(&gs->scope, &rpc) ||
        !xmlscan_is_elem(&gs->scope, &rpc, NC_BASE_NS, "rpc") ||
        xmlscan_print_attrs(&gs->scope, &rpc, 1, &gs->reply_attrs, &has_id) || !has_id) {
        return -1;
    }
    /* <get-schema>, declarations only. */
    p = skip_space(rpc.next);
    if (xmlscan_read_tag(p, &op) || op.end || op.empty || !only_decls(&op) ||
        xmlscan_push_decls(&gs->scope, &op) || !xmlscan_is_elem(&gs->scope, &op, NC_MON_NS, "get-schema")) {
        return -1;
    }
    /* Its parameters, each once, in any order. */
    for (p = op.next;;) {
        int more = next_param(&p, &op, skip_space, &t);
        if (more < 0) {
            return -1;
        }
        if (!more) {
            break;
        }
        outer_ns = gs->scope.count;
        if (!only_decls(&t) || xmlscan_push_decls(&gs->scope, &t)) {
            return -1;
        }
        if (xmlscan_is_elem(&gs->scope, &t, NC_MON_NS, "identifier") && !seen_id++) {
            if (read_plain(&p, &t, gs->identifier, sizeof gs->identifier) || !*gs->identifier) {
                return -1;
            }
        } else if (xmlscan_is_elem(&gs->scope, &t, NC_MON_NS, "version") && !seen_version++) {
            if (read_plain(&p, &t, gs->version, sizeof gs->version)) {
                return -1;
            }
        } else if (xmlscan_is_elem(&gs->scope, &t, NC_MON_NS, "format") && !seen_format++) {
            /* The value's prefix resolves in the format element's own scope. */
            if (read_plain(&p, &t, format, sizeof format) || !format_is_yang(&gs->scope, format)) {
                return -1;
            }
        } else {
            return -1;
        }
        gs->scope.count = outer_ns;
    }
    /* </rpc> and nothing after it. */
    return !rpc_end(p, &rpc, skip_space) && seen_id ? 0 : -1;
}

void
rpc_fast_get_schema_free(struct rpc_fast_get_schema *gs)
{
    sbuf_free(&gs->reply_attrs);
}
