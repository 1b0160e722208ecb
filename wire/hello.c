/*
 * The NETCONF <hello> exchange. Our own hello is printed straight into one
 * exactly sized buffer: it is a fixed shape and needs no XML library. The
 * peer's hello is read with libyang's opaque XML parser, which builds nodes for
 * elements no schema describes, so any context will do and no NETCONF schema
 * must be loaded. Only what RFC 6241 section 8.1 defines is looked at; other
 * elements are ignored so that extensions in a client hello do not break the
 * session, while anything that makes the hello unusable (no capabilities, a
 * bad session-id) is refused with a message naming the problem.
 */
#include "hello.h"
#include "xmlguard.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Namespace of <hello> and its children (RFC 6241 section 3.1). */
#define HELLO_NS "urn:ietf:params:xml:ns:netconf:base:1.0"
/* Room for "<session-id>4294967295</session-id>" and its NUL. */
#define HELLO_SID_MAX_BYTES 48
/* How much of a bad peer value is quoted in an error message. */
#define HELLO_ERR_QUOTE_MAX_CHARS 32

static const char hello_head[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?><hello xmlns=\"" HELLO_NS "\"><capabilities>";
static const char hello_cap_open[] = "<capability>";
static const char hello_cap_close[] = "</capability>";
static const char hello_caps_close[] = "</capabilities>";
static const char hello_tail[] = "</hello>";

/* Text length of @p s once XML-escaped, so the output can be allocated once. */
static size_t
hello_escaped_len(const char *s)
{
    size_t n = 0;

    for (; *s; s++) {
        switch (*s) {
        case '&':
            n += sizeof "&amp;" - 1;
            break;
        case '<':
        case '>':
            n += sizeof "&lt;" - 1;
            break;
        case '"':
        case '\'':
            n += sizeof "&quot;" - 1;
            break;
        default:
            n++;
            break;
        }
    }
    return n;
}

/* Copy @p n bytes and return the new write position. */
static char *
hello_put(char *p, const char *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}

/* Write @p s XML-escaped; the caller sized the buffer with hello_escaped_len(). */
static char *
hello_put_escaped(char *p, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':
            p = hello_put(p, "&amp;", sizeof "&amp;" - 1);
            break;
        case '<':
            p = hello_put(p, "&lt;", sizeof "&lt;" - 1);
            break;
        case '>':
            p = hello_put(p, "&gt;", sizeof "&gt;" - 1);
            break;
        case '"':
            p = hello_put(p, "&quot;", sizeof "&quot;" - 1);
            break;
        case '\'':
            p = hello_put(p, "&apos;", sizeof "&apos;" - 1);
            break;
        default:
            *p++ = *s;
            break;
        }
    }
    return p;
}

/* Add to a size total; -1 on overflow, which only absurd inputs can cause. */
static int
hello_size_add(size_t *total, size_t n)
{
    if (n > SIZE_MAX - *total) {
        return -1;
    }
    *total += n;
    return 0;
}

enum fleet_err
hello_build(const char *const *caps, size_t cap_count, uint32_t session_id, char **out, size_t *out_len)
{
    enum fleet_err ret = FLEET_OK;
    char sid[HELLO_SID_MAX_BYTES];
    size_t sid_len = 0;
    size_t total = 0;
    size_t i;
    char *buf = NULL;
    char *p;

    *out = NULL;
    *out_len = 0;
    /* The peer refuses a hello without capabilities (see hello_parse), so never send one. */
    if (!caps || cap_count == 0 || cap_count > HELLO_MAX_CAPS) {
        ret = FLEET_ERR_INVAL;
        goto cleanup;
    }
    if (session_id) {
        sid_len = (size_t)snprintf(sid, sizeof sid, "<session-id>%" PRIu32 "</session-id>", session_id);
    }

    /* Size everything first so the message is one allocation. */
    total = (sizeof hello_head - 1) + (sizeof hello_caps_close - 1) + sid_len + (sizeof hello_tail - 1);
    for (i = 0; i < cap_count; i++) {
        if (!caps[i]) {
            ret = FLEET_ERR_INVAL;
            goto cleanup;
        }
        if (hello_size_add(&total, (sizeof hello_cap_open - 1) + (sizeof hello_cap_close - 1)) ||
            hello_size_add(&total, hello_escaped_len(caps[i])) || total == SIZE_MAX) {
            ret = FLEET_ERR_INVAL;
            goto cleanup;
        }
    }
    buf = malloc(total + 1);
    if (!buf) {
        ret = FLEET_ERR_NOMEM;
        goto cleanup;
    }

    p = hello_put(buf, hello_head, sizeof hello_head - 1);
    for (i = 0; i < cap_count; i++) {
        p = hello_put(p, hello_cap_open, sizeof hello_cap_open - 1);
        p = hello_put_escaped(p, caps[i]);
        p = hello_put(p, hello_cap_close, sizeof hello_cap_close - 1);
    }
    p = hello_put(p, hello_caps_close, sizeof hello_caps_close - 1);
    p = hello_put(p, sid, sid_len);
    p = hello_put(p, hello_tail, sizeof hello_tail - 1);
    *p = '\0';

    *out = buf;
    *out_len = total;
    buf = NULL;

cleanup:
    free(buf);
    return ret;
}

/* snprintf into the caller's optional error buffer. */
__attribute__((format(printf, 3, 4))) static void
hello_err(char *err, size_t err_len, const char *fmt, ...)
{
    va_list ap;

    if (!err || !err_len) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
}

/* Name and namespace of a node whether or not a schema knew it, so a wrong root can be named. */
static void
hello_node_name(const struct lyd_node *node, const char **name, const char **ns)
{
    const struct lyd_node_opaq *opaq = (const struct lyd_node_opaq *)node;

    if (node->schema) {
        *name = node->schema->name;
        *ns = node->schema->module->ns;
    } else {
        *name = opaq->name.name;
        *ns = opaq->format == LY_VALUE_XML ? opaq->name.module_ns : NULL;
    }
    if (!*ns) {
        *ns = "";
    }
}

/* 1 when @p node is the opaque element @p name of the NETCONF base namespace. */
static int
hello_is_base_elem(const struct lyd_node *node, const char *name)
{
    const char *n;
    const char *ns;

    if (node->schema) {
        return 0;
    }
    hello_node_name(node, &n, &ns);
    return !strcmp(n, name) && !strcmp(ns, HELLO_NS);
}

/* Text of an opaque element without surrounding XML whitespace (the peer may pretty-print). */
static const char *
hello_trimmed(const struct lyd_node *node, size_t *len)
{
    const char *s = ((const struct lyd_node_opaq *)node)->value;
    size_t n;

    if (!s) {
        s = "";
    }
    s += strspn(s, " \t\r\n");
    n = strlen(s);
    while (n && strchr(" \t\r\n", s[n - 1])) {
        n--;
    }
    *len = n;
    return s;
}

/*
 * Decimal 1..4294967295. Leading zeros are accepted because XML Schema's
 * unsignedInt, the type RFC 6241 gives session-id, allows them.
 */
static int
hello_parse_session_id(const char *s, size_t len, uint32_t *id)
{
    uint64_t v = 0;
    size_t i;

    if (len == 0) {
        return -1;
    }
    for (i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return -1;
        }
        v = v * 10 + (uint64_t)(s[i] - '0');
        if (v > UINT32_MAX) {
            return -1;
        }
    }
    if (v == 0) {
        return -1;
    }
    *id = (uint32_t)v;
    return 0;
}

enum fleet_err
hello_parse(struct ly_ctx *ctx, const char *xml, struct hello_info *info, char *err, size_t err_len)
{
    enum fleet_err ret = FLEET_OK;
    struct lyd_node *tree = NULL;
    const struct lyd_node *caps_node = NULL;
    const struct lyd_node *sid_node = NULL;
    const struct lyd_node *child;
    const char *name;
    const char *ns;
    const char *text;
    size_t text_len;
    size_t count = 0;
    uint32_t log_opts = LY_LOSTORE_LAST;
    LY_ERR lyrc;

    memset(info, 0, sizeof *info);
    if (err && err_len) {
        err[0] = '\0';
    }

    /* Input libyang 2.1 would crash on; see xmlguard.h. */
    if (xmlguard_empty_namespace(xml)) {
        hello_err(err, err_len, "hello declares an empty XML namespace");
        ret = FLEET_ERR_INVAL;
        goto cleanup;
    }

    /*
     * Store libyang's error for ly_errmsg() instead of printing it: a peer's
     * broken hello is reported through err once, by the session. The temporary
     * options are per thread, so other loops keep their logging; the cost is
     * that a caller's own temporary options are reset to the global ones.
     */
    ly_temp_log_options(&log_opts);
    lyrc = lyd_parse_data_mem(ctx, xml, LYD_XML, LYD_PARSE_OPAQ | LYD_PARSE_ONLY, 0, &tree);
    ly_temp_log_options(NULL);
    if (lyrc == LY_EMEM) {
        hello_err(err, err_len, "out of memory");
        ret = FLEET_ERR_NOMEM;
        goto cleanup;
    } else if (lyrc) {
        hello_err(err, err_len, "cannot parse hello XML: %s", ly_errmsg(ctx));
        ret = FLEET_ERR_INVAL;
        goto cleanup;
    }

    /* Root: exactly one <hello> in the base namespace. */
    if (!tree) {
        hello_err(err, err_len, "hello message has no XML element");
        ret = FLEET_ERR_INVAL;
        goto cleanup;
    }
    if (tree->next) {
        hello_err(err, err_len, "hello message has more than one top-level element");
        ret = FLEET_ERR_INVAL;
        goto cleanup;
    }
    hello_node_name(tree, &name, &ns);
    if (strcmp(name, "hello")) {
        hello_err(err, err_len, "root element is <%s>, not <hello>", name);
        ret = FLEET_ERR_INVAL;
        goto cleanup;
    }
    if (tree->schema || strcmp(ns, HELLO_NS)) {
        hello_err(err, err_len, "<hello> is in namespace \"%s\", not " HELLO_NS, ns);
        ret = FLEET_ERR_INVAL;
        goto cleanup;
    }

    /* Children: one <capabilities>, at most one <session-id>; anything else is ignored. */
    for (child = lyd_child(tree); child; child = child->next) {
        if (hello_is_base_elem(child, "capabilities")) {
            if (caps_node) {
                hello_err(err, err_len, "hello has more than one <capabilities>");
                ret = FLEET_ERR_INVAL;
                goto cleanup;
            }
            caps_node = child;
        } else if (hello_is_base_elem(child, "session-id")) {
            if (sid_node) {
                hello_err(err, err_len, "hello has more than one <session-id>");
                ret = FLEET_ERR_INVAL;
                goto cleanup;
            }
            sid_node = child;
        }
    }
    if (!caps_node) {
        hello_err(err, err_len, "hello has no <capabilities>");
        ret = FLEET_ERR_INVAL;
        goto cleanup;
    }

    /* Count first, so the limit is checked before anything is copied and the array is allocated once. */
    for (child = lyd_child(caps_node); child; child = child->next) {
        if (hello_is_base_elem(child, "capability")) {
            count++;
        }
    }
    if (count == 0) {
        hello_err(err, err_len, "hello lists no <capability>");
        ret = FLEET_ERR_INVAL;
        goto cleanup;
    }
    if (count > HELLO_MAX_CAPS) {
        hello_err(err, err_len, "hello lists more than %d capabilities", HELLO_MAX_CAPS);
        ret = FLEET_ERR_INVAL;
        goto cleanup;
    }
    info->caps = calloc(count, sizeof *info->caps);
    if (!info->caps) {
        hello_err(err, err_len, "out of memory");
        ret = FLEET_ERR_NOMEM;
        goto cleanup;
    }
    for (child = lyd_child(caps_node); child; child = child->next) {
        char *cap;

        if (!hello_is_base_elem(child, "capability")) {
            continue;
        }
        text = hello_trimmed(child, &text_len);
        if (!text_len) {
            hello_err(err, err_len, "hello has an empty <capability>");
            ret = FLEET_ERR_INVAL;
            goto cleanup;
        }
        cap = malloc(text_len + 1);
        if (!cap) {
            hello_err(err, err_len, "out of memory");
            ret = FLEET_ERR_NOMEM;
            goto cleanup;
        }
        memcpy(cap, text, text_len);
        cap[text_len] = '\0';
        info->caps[info->cap_count++] = cap;
    }

    if (sid_node) {
        text = hello_trimmed(sid_node, &text_len);
        if (hello_parse_session_id(text, text_len, &info->session_id)) {
            hello_err(err, err_len, "session-id \"%.*s\" is not a number in 1..4294967295",
                      text_len > HELLO_ERR_QUOTE_MAX_CHARS ? HELLO_ERR_QUOTE_MAX_CHARS : (int)text_len, text);
            ret = FLEET_ERR_INVAL;
            goto cleanup;
        }
        info->has_session_id = 1;
    }
    info->base10 = hello_has_cap(info, HELLO_CAP_BASE10);
    info->base11 = hello_has_cap(info, HELLO_CAP_BASE11);

cleanup:
    lyd_free_all(tree);
    if (ret) {
        hello_info_free(info);
    }
    return ret;
}

void
hello_info_free(struct hello_info *info)
{
    size_t i;

    if (!info) {
        return;
    }
    for (i = 0; i < info->cap_count; i++) {
        free(info->caps[i]);
    }
    free(info->caps);
    memset(info, 0, sizeof *info);
}

int
hello_has_cap(const struct hello_info *info, const char *uri)
{
    size_t uri_len;
    size_t i;
    int found = 0;

    if (!info || !uri) {
        goto cleanup;
    }
    uri_len = strlen(uri);
    for (i = 0; i < info->cap_count && !found; i++) {
        const char *cap = info->caps[i];

        /* "...:1.0?module=x&revision=y" offers "...:1.0"; an exact match (query and all) counts too. */
        found = !strcmp(cap, uri) || (strcspn(cap, "?") == uri_len && !strncmp(cap, uri, uri_len));
    }

cleanup:
    return found;
}
