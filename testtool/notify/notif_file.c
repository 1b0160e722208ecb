/*
 * Loading notification files. The file is read whole (it is small next to
 * what it makes devices send), its root element picks the format, and each
 * notification ends up as a template: its text plus a list of segments, each
 * a stretch of literal text or a placeholder, so a send only appends.
 *
 * The rate format is an instance of schemas/fleetsim-notifications.yang and
 * libyang validates it in a context of its own that lives only during the
 * load (as profiles are loaded). Its anyxml content comes back as opaque
 * nodes, which libyang prints back as the template's text.
 *
 * OpenDaylight's format has no namespace, so libyang cannot parse it; the
 * shared scanner (wire/xmlscan) reads its few elements and takes <content>
 * as CDATA, escaped text, or both mixed. What OpenDaylight itself does with the file (it reads
 * delay as seconds, sends each entry times + 1 times and re-waits delay
 * before every send, and keeps no file order) is not copied: here the order
 * is the file's and times is the exact count, as notif_file.h says. Its
 * defaults are kept: a missing <delay> is 0 and a missing <times> (or 0,
 * which OpenDaylight sends once) is one send.
 *
 * Every template is then expanded once with sample values and parsed as a
 * NETCONF notification against the fleet's context, so a payload the
 * device's modules do not define, or a bad value, stops the load with the
 * file, the notification's position and libyang's reason.
 */
#include "notif_file.h"
#include "xmlscan.h"
#include "ydata.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* The YANG module of the rate format (schemas/fleetsim-notifications.yang). */
#define NOTIF_RATE_MODULE "fleetsim-notifications"
/* Largest notification file read; route benchmarks with 100 prefixes are ~15 KiB. */
#define NOTIF_FILE_MAX_BYTES (64u * 1024 * 1024)
/* Most notifications one file may hold. */
#define NOTIF_MAX_ITEMS 100000u
/* Longest OpenDaylight delay accepted, in seconds (a year): more is a typo, and ms must fit. */
#define NOTIF_ODL_MAX_DELAY_S 31536000u
/* Deepest element nesting the OpenDaylight scanner accepts inside an unknown element it skips. */
#define NOTIF_ODL_MAX_DEPTH 64
/* Sample values that every template is validated with. */
#define NOTIF_SAMPLE_IFNAME "GigabitEthernet0/0/0/0"

/* The placeholders written in files, and what they become. */
struct notif_token {
    const char *text; /* as written in the file */
    size_t len;       /* strlen(text) */
    int placeholder;  /* enum notif_placeholder */
};

static const struct notif_token notif_tokens[] = {
    {"{DEVICE}", 8, NOTIF_PH_DEVICE},   {"{SEQ}", 5, NOTIF_PH_SEQ},       {"{TIME}", 6, NOTIF_PH_TIME},
    {"{IFINDEX}", 9, NOTIF_PH_IFINDEX}, {"{IFNAME}", 8, NOTIF_PH_IFNAME},
};

/* What a load needs for its messages. */
struct notif_loader {
    const char *path; /* the file, named in every message */
    char *err;        /* caller's message buffer */
    size_t err_len;   /* its size */
};

__attribute__((format(printf, 3, 4))) static void
notif_fail(struct notif_loader *ld, const char *label, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (!ld->err || !ld->err_len) {
        return;
    }
    if (label) {
        n = snprintf(ld->err, ld->err_len, "%s: ", label);
    } else {
        n = snprintf(ld->err, ld->err_len, "notification file %s: ", ld->path);
    }
    if (n < 0 || (size_t)n >= ld->err_len) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(ld->err + n, ld->err_len - (size_t)n, fmt, ap);
    va_end(ap);
}

/*
 * libyang's most specific error among those raised since @p mark (the last record before the
 * call; NULL when there was none). The fleet's context is shared with its other users, so
 * earlier records are left alone.
 */
static void
notif_fail_ly(struct notif_loader *ld, const char *label, const struct ly_ctx *ctx,
              const struct ly_err_item *mark, const char *what)
{
    const struct ly_err_item *e = mark ? mark->next : ly_err_first(ctx);

    if (!e) {
        notif_fail(ld, label, "%s", what);
    } else if (e->path) {
        notif_fail(ld, label, "%s: %s (%s)", what, e->msg, e->path);
    } else {
        notif_fail(ld, label, "%s: %s", what, e->msg);
    }
}

/* Drop the records raised since @p mark, so repeated loads do not grow the context's error list. */
static void
notif_ly_forget(const struct ly_ctx *ctx, const struct ly_err_item *mark)
{
    struct ly_err_item *first = mark ? mark->next : ly_err_first(ctx);

    /* libyang keeps error records beside even a const context; erasing ours changes no schema. */
    if (first) {
        ly_err_clean((struct ly_ctx *)ctx, first);
    }
}

/* The whole file, NUL-terminated. */
static enum fleet_err
notif_read_file(const char *path, struct notif_loader *ld, char **text, size_t *len)
{
    enum fleet_err rc = FLEET_OK;
    FILE *f = NULL;
    struct stat st;
    char *buf = NULL;

    *text = NULL;
    if (!(f = fopen(path, "rb"))) {
        notif_fail(ld, NULL, "cannot open: %s", strerror(errno));
        rc = errno == ENOENT ? FLEET_ERR_NOTFOUND : FLEET_ERR_INVAL;
        goto cleanup;
    }
    if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
        notif_fail(ld, NULL, "not a regular file");
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    if ((uint64_t)st.st_size > NOTIF_FILE_MAX_BYTES) {
        notif_fail(ld, NULL, "%lld bytes, more than the limit of %u (NOTIF_FILE_MAX_BYTES)",
                   (long long)st.st_size, NOTIF_FILE_MAX_BYTES);
        rc = FLEET_ERR_LIMIT;
        goto cleanup;
    }
    if (!(buf = malloc((size_t)st.st_size + 1))) {
        rc = FLEET_ERR_NOMEM;
        goto cleanup;
    }
    if (fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
        notif_fail(ld, NULL, "cannot read: %s", ferror(f) ? strerror(errno) : "file shrank");
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    buf[st.st_size] = '\0';
    *len = (size_t)st.st_size;
    *text = buf;
    buf = NULL;

cleanup:
    if (f) {
        fclose(f);
    }
    free(buf);
    return rc;
}

/* ---------------------------------------------------------------- templates */

/* Byte range of the text of the <eventTime> that must be the root element's first child. */
static int
notif_find_event_time(const char *text, uint32_t *start, uint32_t *end)
{
    struct xmlscan_tag t;
    const char *p = text;

    /* The root's start tag, then <eventTime> or <prefix:eventTime>, attributes allowed. */
    while (xmlscan_is_space(*p)) {
        p++;
    }
    if (xmlscan_read_tag(p, &t) || t.end || t.empty) {
        return -1;
    }
    for (p = t.next; xmlscan_is_space(*p); p++) {
    }
    if (xmlscan_read_tag(p, &t) || t.end || t.empty || !xmlscan_eq(t.local, t.local_len, "eventTime")) {
        return -1;
    }
    *start = (uint32_t)(t.next - text);
    if (!(p = strchr(t.next, '<'))) {
        return -1;
    }
    *end = (uint32_t)(p - text);
    return 0;
}

/* Set the segment @p i (when @p segs is not NULL yet, only count) and return i + 1. */
static uint32_t
notif_put_seg(struct notif_segment *segs, uint32_t i, int placeholder, uint32_t off, uint32_t len)
{
    if (segs) {
        segs[i] = (struct notif_segment){.placeholder = placeholder, .off = off, .len = len};
    }
    return i + 1;
}

/*
 * Split t->text into segments; with @p segs NULL only count them. One pass over the text per
 * template at load, so sends never search.
 */
static uint32_t
notif_split(struct notif_template *t, uint32_t et_start, uint32_t et_end, struct notif_segment *segs)
{
    uint32_t len = (uint32_t)strlen(t->text);
    uint32_t lit = 0; /* start of the pending literal */
    uint32_t n = 0;
    uint32_t i = 0;
    int et_done = 0; /* once only: an empty <eventTime></eventTime> ends where it starts */

    while (i < len) {
        const struct notif_token *tok = NULL;
        if (i == et_start && !et_done) {
            if (i > lit) {
                n = notif_put_seg(segs, n, NOTIF_PH_LITERAL, lit, i - lit);
            }
            n = notif_put_seg(segs, n, NOTIF_PH_EVENT_TIME, 0, 0);
            i = lit = et_end;
            et_done = 1;
            continue;
        }
        if (t->text[i] == '{') {
            for (size_t k = 0; k < sizeof notif_tokens / sizeof notif_tokens[0]; k++) {
                if (!strncmp(t->text + i, notif_tokens[k].text, notif_tokens[k].len)) {
                    tok = &notif_tokens[k];
                    break;
                }
            }
        }
        if (!tok) {
            i++;
            continue;
        }
        if (i > lit) {
            n = notif_put_seg(segs, n, NOTIF_PH_LITERAL, lit, i - lit);
        }
        n = notif_put_seg(segs, n, tok->placeholder, 0, 0);
        t->has_seq |= tok->placeholder == NOTIF_PH_SEQ;
        i = lit = i + (uint32_t)tok->len;
    }
    if (len > lit) {
        n = notif_put_seg(segs, n, NOTIF_PH_LITERAL, lit, len - lit);
    }
    return n;
}

/*
 * Whether the payload (the first child of <notification> after <eventTime>) is in a namespace no loaded
 * module implements; its namespace in @p uri then. 0 too when the scan cannot follow the text.
 */
static int
notif_payload_ns_unknown(const struct ly_ctx *ctx, const char *text, char *uri, size_t uri_size)
{
    struct xmlscan_scope scope = {.count = 0};
    struct xmlscan_tag t;
    const struct xmlscan_ns *ns;
    const char *p;

    if (xmlscan_read_tag(xmlscan_skip_misc(text), &t) || t.end || t.empty || xmlscan_push_decls(&scope, &t)) {
        return 0;
    }
    for (p = t.next;;) {
        if (xmlscan_next_tag(p, &t) || t.end) {
            return 0;
        }
        if (!xmlscan_eq(t.local, t.local_len, "eventTime")) {
            break;
        }
        if (!t.empty && (xmlscan_next_tag(t.next, &t) || !t.end)) {
            return 0;
        }
        p = t.next;
    }
    if (xmlscan_push_decls(&scope, &t) || !(ns = xmlscan_resolve(&scope, t.prefix, t.prefix_len)) ||
        ns->uri_len >= uri_size) {
        return 0;
    }
    memcpy(uri, ns->uri, ns->uri_len);
    uri[ns->uri_len] = '\0';
    return !ly_ctx_get_module_implemented_ns(ctx, uri);
}

/* Validate one expanded template as a NETCONF notification of the fleet's modules. */
static enum fleet_err
notif_validate(const struct notif_template *t, const struct ly_ctx *ctx, struct notif_loader *ld)
{
    enum fleet_err rc = FLEET_OK;
    struct notif_vars v = {.device = 0, .seq = 1, .ifindex = 1, .ifname = NOTIF_SAMPLE_IFNAME};
    struct sbuf text = {0};
    struct ly_in *in = NULL;
    struct lyd_node *env = NULL;
    struct lyd_node *op = NULL;
    const struct ly_err_item *mark = ly_err_last(ctx);
    struct timespec now;
    LY_ERR lyrc;

    clock_gettime(CLOCK_REALTIME, &now);
    v.time_ms = (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000;
    notif_expand(t, &v, &text);
    if (text.failed || ly_in_new_memory(text.buf, &in)) {
        rc = FLEET_ERR_NOMEM;
        goto cleanup;
    }
    lyrc = lyd_parse_op(ctx, NULL, in, LYD_XML, LYD_TYPE_NOTIF_NETCONF, &env, &op);
    if (lyrc == LY_EMEM) {
        rc = FLEET_ERR_NOMEM;
    } else if (lyrc == LY_ENOT) {
        notif_fail(ld, t->label,
                   "not a NETCONF notification (the content must be one <notification "
                   "xmlns=\"urn:ietf:params:xml:ns:netconf:notification:1.0\"> element)");
        rc = FLEET_ERR_INVAL;
    } else if (lyrc) {
        char uri[256];
        notif_fail_ly(ld, t->label, ctx, mark, "not a valid notification of the loaded schemas");
        if (ld->err && ld->err_len > 1 && notif_payload_ns_unknown(ctx, text.buf, uri, sizeof uri)) {
            size_t used = strlen(ld->err);
            snprintf(ld->err + used, ld->err_len - used,
                     "; no loaded module has namespace \"%s\" (add the module that defines it with "
                     "--schemas-dir DIR)",
                     uri);
        }
        rc = FLEET_ERR_INVAL;
    } else if (!op) {
        notif_fail(ld, t->label, "no payload after <eventTime>");
        rc = FLEET_ERR_INVAL;
    } else if ((lyrc = lyd_validate_op(op, NULL, LYD_TYPE_NOTIF_YANG, NULL))) {
        /* lyd_parse_op() checks each value; this checks the rest (mandatory, min-elements, must). */
        notif_fail_ly(ld, t->label, ctx, mark, "not a valid notification of the loaded schemas");
        rc = lyrc == LY_EMEM ? FLEET_ERR_NOMEM : FLEET_ERR_INVAL;
    }

cleanup:
    notif_ly_forget(ctx, mark);
    lyd_free_all(env);
    lyd_free_all(op);
    ly_in_free(in, 0);
    sbuf_free(&text);
    return rc;
}

/* Make a template of @p text (owned from now on, also on failure): check, split, validate. */
static enum fleet_err
notif_template_init(struct notif_template *t, char *text, const struct ly_ctx *ctx, struct notif_loader *ld)
{
    size_t len = strlen(text);
    uint32_t et_start, et_end;

    t->text = text;
    if (len > UINT32_MAX) {
        notif_fail(ld, t->label, "content longer than 4 GiB");
        return FLEET_ERR_LIMIT;
    }
    if (notif_find_event_time(text, &et_start, &et_end)) {
        notif_fail(ld, t->label, "the <notification> element's first child must be <eventTime>");
        return FLEET_ERR_INVAL;
    }
    t->seg_count = notif_split(t, et_start, et_end, NULL);
    if (!(t->segs = calloc(t->seg_count, sizeof *t->segs))) {
        return FLEET_ERR_NOMEM;
    }
    notif_split(t, et_start, et_end, t->segs);
    return notif_validate(t, ctx, ld);
}

static enum fleet_err
notif_plan_alloc(struct notif_plan *plan, uint32_t count, struct notif_loader *ld)
{
    if (count > NOTIF_MAX_ITEMS) {
        notif_fail(ld, NULL, "%" PRIu32 " notifications, more than the limit of %u (NOTIF_MAX_ITEMS)", count,
                   NOTIF_MAX_ITEMS);
        return FLEET_ERR_LIMIT;
    }
    if (!(plan->items = calloc(count, sizeof *plan->items))) {
        return FLEET_ERR_NOMEM;
    }
    return FLEET_OK;
}

/* "notification POS [("NAME")] of FILE" into t->label. */
static enum fleet_err
notif_label(struct notif_template *t, uint32_t pos, const char *name, const char *path)
{
    struct sbuf b = {0};

    sbuf_printf(&b, "notification %" PRIu32, pos);
    if (name) {
        sbuf_printf(&b, " (\"%s\")", name);
    }
    sbuf_printf(&b, " of %s", path);
    t->label = sbuf_take(&b, NULL);
    return t->label ? FLEET_OK : FLEET_ERR_NOMEM;
}

/* ---------------------------------------------------------------- rate format */

/* A validated decimal64 with 3 fraction digits ("12.5" canonically) as thousandths, exactly. */
static uint64_t
notif_milli(const struct lyd_node *parent, const char *name)
{
    const char *v = ydata_str(parent, name);
    char *dot = NULL;
    uint64_t whole, frac = 0;
    int digits = 0;

    if (!v) {
        return 0;
    }
    whole = strtoull(v, &dot, 10);
    if (*dot == '.') {
        for (const char *d = dot + 1; *d >= '0' && *d <= '9' && digits < 3; d++, digits++) {
            frac = frac * 10 + (uint64_t)(*d - '0');
        }
    }
    for (; digits < 3; digits++) {
        frac *= 10;
    }
    return whole * 1000 + frac;
}

/* The <notification> element held by an anyxml content, printed back as text. */
static enum fleet_err
notif_content_text(const struct lyd_node *content, const char *label, struct notif_loader *ld, char **text)
{
    const struct lyd_node_any *any = (const struct lyd_node_any *)content;
    const struct lyd_node *root = NULL;
    const struct lyd_node *n;
    uint32_t elements = 0;

    *text = NULL;
    if (any->value_type == LYD_ANYDATA_DATATREE) {
        LY_LIST_FOR(any->value.tree, n)
        {
            elements++;
            root = n;
        }
    }
    if (elements != 1 || root->schema) {
        notif_fail(ld, label, "content must hold exactly one <notification> element");
        return FLEET_ERR_INVAL;
    }
    if (lyd_print_mem(text, root, LYD_XML, LYD_PRINT_SHRINK)) {
        return FLEET_ERR_NOMEM;
    }
    return FLEET_OK;
}

/* A rate file's tree (validated) into the plan. */
static enum fleet_err
notif_fill_rate(struct notif_plan *plan, const struct lyd_node *top, const struct ly_ctx *fleet_ctx,
                struct notif_loader *ld)
{
    enum fleet_err rc;
    const struct lyd_node *c;
    const char *v;
    uint32_t count = 0;

    plan->kind = NOTIF_PLAN_RATE;
    if ((v = ydata_str(top, "rate-per-device"))) {
        plan->rate_per_device = strtod(v, NULL);
    }
    if ((v = ydata_str(top, "rate-total"))) {
        plan->rate_total = strtod(v, NULL);
    }
    plan->duration_ms = notif_milli(top, "duration");
    plan->count = ydata_u64(top, "count");
    plan->burst = (uint32_t)ydata_u64(top, "burst");

    LY_LIST_FOR(lyd_child(top), c)
    {
        count += c->schema && !strcmp(c->schema->name, "notification");
    }
    if ((rc = notif_plan_alloc(plan, count, ld))) {
        return rc;
    }
    LY_LIST_FOR(lyd_child(top), c)
    {
        struct notif_template *t;
        char *text = NULL;
        if (!c->schema || strcmp(c->schema->name, "notification")) {
            continue;
        }
        t = &plan->items[plan->item_count++];
        t->weight = (uint32_t)ydata_u64(c, "weight");
        t->times = 0;
        if ((rc = notif_label(t, plan->item_count, ydata_str(c, "name"), plan->path)) ||
            (rc = notif_content_text(ydata_child(c, "content"), t->label, ld, &text)) ||
            (rc = notif_template_init(t, text, fleet_ctx, ld))) {
            return rc;
        }
    }
    return FLEET_OK;
}

/* Parse and validate the rate file in a context holding only its module. */
static enum fleet_err
notif_load_rate(struct notif_plan *plan, const char *text, const struct ly_ctx *fleet_ctx,
                struct notif_loader *ld)
{
    enum fleet_err rc = FLEET_OK;
    const char *schema_dir = getenv("FLEETSIM_SCHEMA_DIR");
    struct ly_ctx *ctx = NULL;
    struct lyd_node *tree = NULL;
    const struct lyd_node *top;
    const struct lys_module *mod;
    LY_ERR lyrc;

    if (!schema_dir) {
        schema_dir = FLEETSIM_SCHEMA_DIR;
    }
    if (ly_ctx_new(schema_dir, LY_CTX_NO_YANGLIBRARY | LY_CTX_DISABLE_SEARCHDIR_CWD, &ctx)) {
        notif_fail(ld, NULL, "cannot use schemas folder %s", schema_dir);
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    if (!(mod = ly_ctx_load_module(ctx, NOTIF_RATE_MODULE, NULL, NULL))) {
        notif_fail_ly(ld, NULL, ctx, NULL, "cannot load " NOTIF_RATE_MODULE ".yang from the schemas folder");
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    lyrc = lyd_parse_data_mem(ctx, text, LYD_XML, LYD_PARSE_STRICT, LYD_VALIDATE_PRESENT, &tree);
    if (lyrc == LY_EMEM) {
        rc = FLEET_ERR_NOMEM;
        goto cleanup;
    } else if (lyrc) {
        notif_fail_ly(ld, NULL, ctx, NULL, "invalid");
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    LY_LIST_FOR(tree, top)
    {
        if (top->schema && top->schema->module == mod && !strcmp(top->schema->name, "notification-stream")) {
            break;
        }
    }
    if (!top) {
        notif_fail(ld, NULL, "no <notification-stream xmlns=\"urn:fleetsim:notifications\"> element");
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    rc = notif_fill_rate(plan, top, fleet_ctx, ld);

cleanup:
    lyd_free_all(tree);
    ly_ctx_destroy(ctx);
    return rc;
}

/* ---------------------------------------------------------------- OpenDaylight format */

/* Skip white space, comments and processing instructions; -1 when one is not closed. */
static int
notif_scan_misc(const char **p)
{
    const char *q = xmlscan_skip_misc(*p);

    if (!q) {
        return -1;
    }
    *p = q;
    return 0;
}

/*
 * A start tag at @p *p: its local name (prefix dropped) into @p name, attributes skipped, @p *p moved
 * past it. @p empty is set for <x/>. -1 when @p *p is not at a start tag xmlscan reads.
 */
static int
notif_scan_open(const char **p, char *name, size_t name_len, int *empty)
{
    struct xmlscan_tag t;

    if (xmlscan_read_tag(*p, &t) || t.end || t.local_len >= name_len) {
        return -1;
    }
    memcpy(name, t.local, t.local_len);
    name[t.local_len] = '\0';
    *empty = t.empty;
    *p = t.next;
    return 0;
}

/*
 * The text of a text-only element up to its end tag </@p name>, which is consumed (see
 * xmlscan_read_text()).
 */
static int
notif_scan_text(const char **p, const char *name, struct sbuf *out, const char **why)
{
    struct xmlscan_tag t;
    const char *stop;

    if (xmlscan_read_text(*p, out, &stop, why)) {
        return -1;
    }
    /* The end tag: </name> or </prefix:name>. */
    if (xmlscan_read_tag(stop, &t)) {
        *why = "malformed end tag";
        return -1;
    }
    if (!xmlscan_eq(t.local, t.local_len, name)) {
        *why = "mismatched end tag";
        return -1;
    }
    *p = t.next;
    return 0;
}

/* Consume </@p name> after optional white space and comments. */
static int
notif_scan_close(const char **p, const char *name)
{
    struct sbuf junk = {0};
    const char *why;
    int r;

    if (notif_scan_misc(p)) {
        return -1;
    }
    r = notif_scan_text(p, name, &junk, &why);
    r = r || junk.len; /* only white space and comments may stand before the end tag */
    sbuf_free(&junk);
    return r ? -1 : 0;
}

/* An OpenDaylight number: digits only, no sign, no overflow. */
static int
notif_odl_number(const char *text, uint64_t *out)
{
    const char *p = text;
    uint64_t v = 0;

    while (xmlscan_is_space(*p)) {
        p++;
    }
    if (*p < '0' || *p > '9') {
        return -1;
    }
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (UINT64_MAX - 9) / 10) {
            return -1;
        }
        v = v * 10 + (uint64_t)(*p - '0');
    }
    while (xmlscan_is_space(*p)) {
        p++;
    }
    if (*p) {
        return -1;
    }
    *out = v;
    return 0;
}

/* The content text without the blank lines and indentation around the element, or an XML declaration. */
static char *
notif_odl_trim(char *text)
{
    const char *s = text;
    size_t n;

    while (xmlscan_is_space(*s)) {
        s++;
    }
    if (!strncmp(s, "<?xml", 5) && (s = strstr(s, "?>"))) {
        s += 2;
    } else if (!s) {
        s = text + strlen(text);
    }
    n = strlen(s);
    xmlscan_trim(&s, &n);
    memmove(text, s, n);
    text[n] = '\0';
    return text;
}

/* One <notification> entry (its start tag read): delay, times, content. */
static enum fleet_err
notif_odl_entry(struct notif_plan *plan, const char **s, const struct ly_ctx *fleet_ctx,
                struct notif_loader *ld)
{
    enum fleet_err rc = FLEET_OK;
    struct notif_template *t = &plan->items[plan->item_count++];
    struct sbuf val = {0};
    char *content = NULL;
    char name[32];
    int empty;
    const char *why = NULL;
    uint64_t num;

    t->weight = 1;
    /* OpenDaylight's defaults: no <delay> is 0 s, no <times> is one send (it reads both as 0). */
    t->delay_ms = 0;
    t->times = 1;
    if ((rc = notif_label(t, plan->item_count, NULL, plan->path))) {
        goto cleanup;
    }
    for (;;) {
        if (notif_scan_misc(s)) {
            notif_fail(ld, t->label, "unterminated comment");
            rc = FLEET_ERR_INVAL;
            goto cleanup;
        }
        if (!strncmp(*s, "</", 2)) {
            break;
        }
        if (notif_scan_open(s, name, sizeof name, &empty)) {
            notif_fail(ld, t->label, "malformed XML: expected <delay>, <times> or <content>");
            rc = FLEET_ERR_INVAL;
            goto cleanup;
        }
        sbuf_free(&val);
        if (!empty && notif_scan_text(s, name, &val, &why)) {
            notif_fail(ld, t->label, "<%s>: %s", name, why);
            rc = FLEET_ERR_INVAL;
            goto cleanup;
        }
        if (val.failed) {
            rc = FLEET_ERR_NOMEM;
            goto cleanup;
        }
        if (!strcmp(name, "delay")) {
            if (notif_odl_number(val.buf ? val.buf : "", &num) || num > NOTIF_ODL_MAX_DELAY_S) {
                notif_fail(ld, t->label, "<delay> \"%s\": not a whole number of seconds from 0 to %u",
                           val.buf ? val.buf : "", NOTIF_ODL_MAX_DELAY_S);
                rc = FLEET_ERR_INVAL;
                goto cleanup;
            }
            t->delay_ms = num * 1000;
        } else if (!strcmp(name, "times")) {
            if (notif_odl_number(val.buf ? val.buf : "", &num)) {
                notif_fail(ld, t->label, "<times> \"%s\": not a whole number of sends",
                           val.buf ? val.buf : "");
                rc = FLEET_ERR_INVAL;
                goto cleanup;
            }
            /* 0 is what OpenDaylight sends once (it sends times + 1); N >= 1 is our exact count. */
            t->times = num ? num : 1;
        } else if (!strcmp(name, "content")) {
            free(content);
            content = sbuf_take(&val, NULL);
            if (!content) {
                content = strdup("");
            }
            if (!content) {
                rc = FLEET_ERR_NOMEM;
                goto cleanup;
            }
        } else {
            notif_fail(ld, t->label, "unknown element <%s> (expected <delay>, <times> or <content>)", name);
            rc = FLEET_ERR_INVAL;
            goto cleanup;
        }
    }
    if (notif_scan_close(s, "notification")) {
        notif_fail(ld, t->label, "malformed XML: expected </notification>");
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    if (!content || !*notif_odl_trim(content)) {
        notif_fail(ld, t->label, "no <content>: give the <notification> message to send");
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    rc = notif_template_init(t, content, fleet_ctx, ld);
    content = NULL;

cleanup:
    free(content);
    sbuf_free(&val);
    return rc;
}

/* Count the <notification> start tags, an upper bound of the entries (CDATA may hold more). */
static uint32_t
notif_odl_count(const char *text)
{
    uint32_t n = 0;

    for (const char *p = text; (p = strstr(p, "<notification")) && n < UINT32_MAX; p++) {
        n++;
    }
    return n;
}

static enum fleet_err
notif_load_odl(struct notif_plan *plan, const char *text, const struct ly_ctx *fleet_ctx,
               struct notif_loader *ld)
{
    enum fleet_err rc;
    const char *s = text;
    char name[32];
    int empty;

    plan->kind = NOTIF_PLAN_ODL;
    plan->burst = 1;
    if ((rc = notif_plan_alloc(plan, notif_odl_count(text), ld))) {
        return rc;
    }
    /* The caller saw the root: <notifications>. */
    if (notif_scan_misc(&s) || notif_scan_open(&s, name, sizeof name, &empty)) {
        notif_fail(ld, NULL, "malformed XML before the root element");
        return FLEET_ERR_INVAL;
    }
    while (!empty) {
        if (notif_scan_misc(&s)) {
            notif_fail(ld, NULL, "unterminated comment");
            return FLEET_ERR_INVAL;
        }
        if (!strncmp(s, "</", 2)) {
            break;
        }
        if (notif_scan_open(&s, name, sizeof name, &empty) || strcmp(name, "notification")) {
            notif_fail(ld, NULL,
                       "after notification %" PRIu32 ": expected <notification> or </notifications>",
                       plan->item_count);
            return FLEET_ERR_INVAL;
        }
        if (empty) {
            notif_fail(ld, NULL, "notification %" PRIu32 " is empty", plan->item_count + 1);
            return FLEET_ERR_INVAL;
        }
        if ((rc = notif_odl_entry(plan, &s, fleet_ctx, ld))) {
            return rc;
        }
    }
    if (!empty && notif_scan_close(&s, "notifications")) {
        notif_fail(ld, NULL, "malformed XML: expected </notifications>");
        return FLEET_ERR_INVAL;
    }
    if (notif_scan_misc(&s) || *s) {
        notif_fail(ld, NULL, "text after </notifications>");
        return FLEET_ERR_INVAL;
    }
    if (!plan->item_count) {
        notif_fail(ld, NULL, "no <notification> in <notifications>");
        return FLEET_ERR_INVAL;
    }
    return FLEET_OK;
}

/* ---------------------------------------------------------------- API */

enum fleet_err
notif_plan_load(const char *path, const struct ly_ctx *ctx, struct notif_plan **plan, char *err,
                size_t err_len)
{
    enum fleet_err rc = FLEET_OK;
    struct notif_loader ld = {.path = path, .err = err, .err_len = err_len};
    struct notif_plan *p = NULL;
    const char *s;
    char *text = NULL;
    size_t len = 0;
    char root[32];
    int empty;
    uint32_t log_opts = LY_LOSTORE;

    *plan = NULL;
    if (err && err_len) {
        err[0] = '\0';
    }
    /* libyang's errors are stored, not printed, and reported once through err (per thread). */
    ly_temp_log_options(&log_opts);
    if ((rc = notif_read_file(path, &ld, &text, &len))) {
        goto cleanup;
    }
    /* XML never holds a NUL; refusing it here lets every scan below treat the text as one C string. */
    if (memchr(text, '\0', len)) {
        notif_fail(&ld, NULL, "a NUL byte at offset %zu: not an XML file",
                   (size_t)((const char *)memchr(text, '\0', len) - text));
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    if (!(p = calloc(1, sizeof *p)) || !(p->path = strdup(path))) {
        rc = FLEET_ERR_NOMEM;
        goto cleanup;
    }

    /* The root element picks the format. */
    s = text;
    if (notif_scan_misc(&s) || notif_scan_open(&s, root, sizeof root, &empty)) {
        notif_fail(&ld, NULL, "not XML, or no root element");
        rc = FLEET_ERR_INVAL;
    } else if (!strcmp(root, "notifications")) {
        rc = notif_load_odl(p, text, ctx, &ld);
    } else if (!strcmp(root, "notification-stream")) {
        rc = notif_load_rate(p, text, ctx, &ld);
    } else {
        notif_fail(&ld, NULL,
                   "root element <%s> is neither <notifications> (OpenDaylight) nor <notification-stream "
                   "xmlns=\"urn:fleetsim:notifications\">",
                   root);
        rc = FLEET_ERR_INVAL;
    }
    if (rc) {
        goto cleanup;
    }
    *plan = p;
    p = NULL;

cleanup:
    if (rc == FLEET_ERR_NOMEM) {
        notif_fail(&ld, NULL, "out of memory");
    }
    ly_temp_log_options(NULL);
    notif_plan_free(p);
    free(text);
    return rc;
}

void
notif_plan_free(struct notif_plan *plan)
{
    if (!plan) {
        return;
    }
    for (uint32_t i = 0; i < plan->item_count; i++) {
        free(plan->items[i].label);
        free(plan->items[i].text);
        free(plan->items[i].segs);
    }
    free(plan->items);
    free(plan->path);
    free(plan);
}

void
notif_format_time(uint64_t time_ms, char *buf, size_t buf_len)
{
    /* A busy stream sends thousands of notifications in one millisecond: format each millisecond once
     * per thread (profiled: formatting was 43 % of a worker at the ceiling). */
    static _Thread_local uint64_t cached_ms = UINT64_MAX;
    static _Thread_local char cached[80]; /* room for any int the format may print */
    time_t secs = (time_t)(time_ms / 1000);
    struct tm tm;

    if (time_ms != cached_ms) {
        if (!gmtime_r(&secs, &tm)) {
            snprintf(cached, sizeof cached, "1970-01-01T00:00:00.000Z");
        } else {
            snprintf(cached, sizeof cached, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (unsigned)(time_ms % 1000));
        }
        cached_ms = time_ms;
    }
    if (buf_len) {
        size_t n = strlen(cached);
        n = n < buf_len ? n : buf_len - 1;
        memcpy(buf, cached, n);
        buf[n] = '\0';
    }
}

void
notif_expand(const struct notif_template *t, const struct notif_vars *v, struct sbuf *out)
{
    char time_buf[40];
    int have_time = 0;

    for (uint32_t i = 0; i < t->seg_count; i++) {
        const struct notif_segment *sg = &t->segs[i];
        switch (sg->placeholder) {
        case NOTIF_PH_LITERAL:
            sbuf_add(out, t->text + sg->off, sg->len);
            break;
        case NOTIF_PH_DEVICE:
            sbuf_printf(out, "%" PRIu32, v->device);
            break;
        case NOTIF_PH_SEQ:
            sbuf_printf(out, "%" PRIu64, v->seq);
            break;
        case NOTIF_PH_TIME:
        case NOTIF_PH_EVENT_TIME:
            /* Formatted once per send, however often it appears. */
            if (!have_time) {
                notif_format_time(v->time_ms, time_buf, sizeof time_buf);
                have_time = 1;
            }
            sbuf_adds(out, time_buf);
            break;
        case NOTIF_PH_IFINDEX:
            sbuf_printf(out, "%" PRIu32, v->ifindex);
            break;
        case NOTIF_PH_IFNAME:
            sbuf_add_xml(out, v->ifname ? v->ifname : "");
            break;
        }
    }
}
