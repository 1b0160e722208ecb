/*
 * Custom RPC replies (--rpc-config), OpenDaylight testtool's format; see
 * rpc_custom.h for the matching rules. The file is parsed once with
 * libyang into opaque nodes (a context without modules knows no element,
 * so nothing is validated, only XML). Inputs stay as those trees; outputs
 * are printed once into the text sent on the wire.
 *
 * A request costs, when the table is loaded: a scan of its first two tags
 * for the operation's local name, which turns down every request no input
 * could match (the common case: custom RPCs beside built-in traffic).
 * Requests that pass are hashed from their text (names, namespaces,
 * attributes as a set, children in order, trimmed leaf text; no tree), and
 * turned down when no input has that hash: about 1 us for a get-config.
 * Only an equal hash (or text the scan does not follow) pays the schema-free
 * libyang parse and the structural compare. The scan of the inputs' hashes
 * is linear: 65536 compares at worst, a few microseconds; a hash table
 * keyed by the hash is the way out if files grow that large.
 */
#include "rpc_custom.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sbuf.h"
#include "xmlguard.h"
#include "xmlscan.h"

#define NC_BASE_NS "urn:ietf:params:xml:ns:netconf:base:1.0"
/*
 * libyang wants a namespace on every opaque element and ODL's files give
 * their wrapper elements (rpcs, rpc, input, output) none. The file is parsed
 * inside a wrapper declaring this default namespace, which therefore stands
 * for "no namespace"; no request element can carry it.
 */
#define RC_NO_NS     "urn:fleetsim:rpc-config:no-namespace"
#define RC_WRAP_OPEN "<fleetsim-rpc-config xmlns=\"" RC_NO_NS "\">"
#define RC_WRAP_END  "</fleetsim-rpc-config>"
/* Deepest element nesting of an input; deeper requests are never compared (nothing could match). */
#define RC_MAX_DEPTH 128
/* Device positions for entries with a single output: none is kept. */
#define RC_NO_SLOT UINT32_MAX

struct rc_entry {
    const struct lyd_node *input;      /* the operation element, a node of rpc_custom.tree */
    uint64_t hash;                     /* node_hash() of input */
    struct rpc_custom_output *outputs; /* replies in sequence, >= 1 once loaded */
    uint32_t output_count;             /* entries used in outputs, <= RPC_CUSTOM_MAX_OUTPUTS */
    uint32_t output_cap;               /* entries allocated in outputs */
    uint32_t slot;                     /* index among the per-device positions, RC_NO_SLOT with one output */
};

struct rpc_custom {
    struct ly_ctx *ctx;       /* context of tree and of request parses, not owned */
    struct lyd_node *tree;    /* the parsed file (opaque), owns every input */
    struct rc_entry *entries; /* distinct inputs in file order */
    uint32_t entry_count;     /* entries used */
    uint32_t entry_cap;       /* entries allocated */
    const char **names;       /* distinct local names of the inputs (libyang dictionary strings) */
    uint32_t name_count;      /* entries used in names, <= entry_count */
    uint32_t device_count;    /* devices keeping positions */
    uint32_t slot_count;      /* entries with more than one output */
    uint16_t *positions;      /* [device * slot_count + slot]: next output; each device's worker only */
};

static const struct lyd_node_opaq *
opaq(const struct lyd_node *n)
{
    return (const struct lyd_node_opaq *)n;
}

/* A leaf's text without surrounding whitespace: start and length. */
static const char *
trimmed(const char *s, size_t *len)
{
    s = s ? s : "";
    *len = strlen(s);
    xmlscan_trim(&s, len);
    return s;
}

static uint64_t
fnv(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    }
    /* A separator byte that XML text cannot hold keeps "ab"+"c" apart from "a"+"bc". */
    return (h ^ 0x01) * 0x100000001b3ull;
}

static uint64_t
fnvs(uint64_t h, const char *s)
{
    return fnv(h, s ? s : "", s ? strlen(s) : 0);
}

/* A 64-bit finalizer (splitmix64's): attribute hashes are summed, so each must be well spread. */
static uint64_t
mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* message-id (without a prefix) is the one attribute matching ignores. */
static int
attr_ignored(const struct lyd_attr *a)
{
    return !a->name.prefix && !strcmp(a->name.name, "message-id");
}

/*
 * The structural hash of an element; 0 and @p hash set, or -1 when the
 * element cannot be compared (a schema node, nesting past RC_MAX_DEPTH).
 * Equal elements (see nodes_equal()) hash equal.
 */
static int
node_hash(const struct lyd_node *n, uint32_t depth, uint64_t *hash)
{
    const struct lyd_node_opaq *o = opaq(n);
    uint64_t h = 0xcbf29ce484222325ull;
    uint64_t attrs = 0;
    const struct lyd_node *child;

    if (n->schema || depth >= RC_MAX_DEPTH) {
        return -1;
    }
    h = fnvs(h, o->name.module_ns);
    h = fnvs(h, o->name.name);
    /* Attributes are a set: an order-free sum. */
    for (const struct lyd_attr *a = o->attr; a; a = a->next) {
        if (!attr_ignored(a)) {
            uint64_t ah = fnvs(fnvs(fnvs(0x84222325cbf29ce4ull, a->name.module_ns), a->name.name), a->value);
            attrs += mix(ah);
        }
    }
    h = mix(h ^ attrs);
    if (o->child) {
        LY_LIST_FOR(o->child, child)
        {
            uint64_t ch;
            if (node_hash(child, depth + 1, &ch)) {
                return -1;
            }
            h = mix(h + ch);
        }
    } else {
        size_t len;
        const char *text = trimmed(o->value, &len);
        h = mix(fnv(h ^ 0x5a, text, len));
    }
    *hash = h;
    return 0;
}

static int
same_str(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

/* Whether @p b carries an attribute equal to @p a (same namespace, name and value). */
static int
has_attr(const struct lyd_node_opaq *b, const struct lyd_attr *a)
{
    for (const struct lyd_attr *x = b->attr; x; x = x->next) {
        if (!attr_ignored(x) && same_str(x->name.module_ns, a->name.module_ns) &&
            !strcmp(x->name.name, a->name.name) && same_str(x->value, a->value)) {
            return 1;
        }
    }
    return 0;
}

static uint32_t
attr_count(const struct lyd_node_opaq *o)
{
    uint32_t n = 0;

    for (const struct lyd_attr *a = o->attr; a; a = a->next) {
        n += !attr_ignored(a);
    }
    return n;
}

/* Structural equality; both trees have passed node_hash(), so their depth is bounded. */
static int
nodes_equal(const struct lyd_node *a, const struct lyd_node *b)
{
    const struct lyd_node_opaq *oa = opaq(a);
    const struct lyd_node_opaq *ob = opaq(b);
    const struct lyd_node *ca, *cb;

    if (!same_str(oa->name.module_ns, ob->name.module_ns) || strcmp(oa->name.name, ob->name.name)) {
        return 0;
    }
    if (attr_count(oa) != attr_count(ob)) {
        return 0;
    }
    for (const struct lyd_attr *x = oa->attr; x; x = x->next) {
        if (!attr_ignored(x) && !has_attr(ob, x)) {
            return 0;
        }
    }
    if (!oa->child || !ob->child) {
        size_t la, lb;
        const char *ta = trimmed(oa->value, &la);
        const char *tb = trimmed(ob->value, &lb);
        return !oa->child && !ob->child && la == lb && !memcmp(ta, tb, la);
    }
    for (ca = oa->child, cb = ob->child; ca && cb; ca = ca->next, cb = cb->next) {
        if (!nodes_equal(ca, cb)) {
            return 0;
        }
    }
    return !ca && !cb;
}

/*
 * The local name of the root's first child element, read from the text:
 * 0 and its span, or -1 when the text is anything else (then only the full
 * parse can tell). For well-formed XML the name is the one libyang finds.
 */
static int
scan_op_name(const char *msg, const char **name, size_t *len)
{
    struct xmlscan_tag t;

    if (xmlscan_read_tag(xmlscan_skip_misc(msg), &t) || t.end || t.empty ||
        xmlscan_read_tag(xmlscan_skip_misc(t.next), &t) || t.end) {
        return -1;
    }
    *name = t.local;
    *len = t.local_len;
    return 0;
}

static int
name_known(const struct rpc_custom *rc, const char *name, size_t len)
{
    for (uint32_t i = 0; i < rc->name_count; i++) {
        if (!strncmp(rc->names[i], name, len) && !rc->names[i][len]) {
            return 1;
        }
    }
    return 0;
}

/*
 * The text hash: node_hash() computed from the message text with
 * wire/xmlscan, without building a tree, so a request whose hash no input
 * has is turned down for the cost of one scan. It follows only plain XML
 * (no entity or character references, CDATA, comments or processing
 * instructions inside the operation, no mixed content, no carriage returns
 * in leaf text, no tab, CR or LF in attribute values, at most
 * XMLSCAN_MAX_NS declarations in scope) and returns -1 for anything else:
 * then the libyang parse decides. Where it returns a hash, that hash is the
 * one node_hash() gives libyang's tree of the same text, so it never turns
 * a matching request down; an equal hash is still confirmed on the tree.
 */

/* Whether an attribute value holds a reference or white space XML normalizes (left to libyang). */
static int
value_normalized(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '&' || s[i] == '<' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n') {
            return 1;
        }
    }
    return 0;
}

/*
 * A start tag: its declarations pushed onto @p scope, the element's name and attributes hashed
 * as node_hash() does (before the children) into @p hash. @p has_message_id is set to 1 when an
 * unprefixed message-id (which matching ignores) is present.
 */
static int
hash_start_tag(struct xmlscan_scope *scope, const struct xmlscan_tag *t, uint64_t *hash, int *has_message_id)
{
    const char *cursor = t->attrs;
    const char *end = t->attrs + t->attrs_len;
    const struct xmlscan_ns *ns;
    struct xmlscan_attr a;
    uint64_t attrs = 0;
    uint64_t h = 0xcbf29ce484222325ull;
    int r = 0;

    if (t->end || (t->attrs_len && xmlscan_push_decls(scope, t))) {
        return -1;
    }
    ns = xmlscan_resolve(scope, t->prefix, t->prefix_len);
    if (t->prefix && !ns) {
        return -1;
    }
    /* Attributes are a set: an order-free sum. */
    while (cursor < end && (r = xmlscan_next_attr(&cursor, end, &a)) == 1) {
        const struct xmlscan_ns *ans = NULL;
        if (xmlscan_is_xmlns(&a)) {
            continue;
        }
        if (value_normalized(a.value, a.value_len)) {
            return -1; /* references and the white space XML normalizes: libyang decides */
        }
        if (!a.prefix && xmlscan_eq(a.local, a.local_len, "message-id")) {
            *has_message_id = 1;
            continue;
        }
        if (a.prefix && !(ans = xmlscan_resolve(scope, a.prefix, a.prefix_len))) {
            return -1;
        }
        attrs += mix(fnv(fnv(fnv(0x84222325cbf29ce4ull, ans ? ans->uri : "", ans ? ans->uri_len : 0), a.local,
                             a.local_len),
                         a.value, a.value_len));
    }
    if (r < 0) {
        return -1;
    }
    h = fnv(h, ns ? ns->uri : "", ns ? ns->uri_len : 0);
    h = fnv(h, t->local, t->local_len);
    *hash = mix(h ^ attrs);
    return 0;
}

/* The element of start tag @p t: its hash, and the byte after its end tag in @p next. */
static int
hash_element(struct xmlscan_scope *scope, const struct xmlscan_tag *t, uint32_t depth, uint64_t *hash,
             const char **next)
{
    size_t ns_mark = scope->count;
    struct xmlscan_tag c;
    const char *p, *text;
    uint64_t h = 0;
    int has_child = 0, has_text = 0, message_id = 0;
    int ret = -1;

    if (depth >= RC_MAX_DEPTH || hash_start_tag(scope, t, &h, &message_id)) {
        goto cleanup;
    }
    if (t->empty) {
        h = mix(fnv(h ^ 0x5a, "", 0));
        *next = t->next;
        ret = 0;
        goto cleanup;
    }
    for (p = text = t->next;;) {
        const char *lt = strchr(p, '<');
        if (!lt) {
            goto cleanup;
        }
        for (const char *x = p; x < lt; x++) {
            has_text |= !xmlscan_is_space(*x);
        }
        if (lt[1] == '!' || lt[1] == '?' || xmlscan_read_tag(lt, &c)) {
            goto cleanup; /* comments, CDATA, instructions, what xmlscan does not follow: libyang decides */
        }
        if (!c.end) {
            uint64_t ch;
            if (has_text || hash_element(scope, &c, depth + 1, &ch, &p)) {
                goto cleanup;
            }
            has_child = 1;
            h = mix(h + ch);
            continue;
        }
        if (!xmlscan_same_qname(&c, t)) {
            goto cleanup;
        }
        if (has_child) {
            if (has_text) {
                goto cleanup;
            }
        } else {
            size_t len = (size_t)(lt - text);
            xmlscan_trim(&text, &len);
            if (memchr(text, '&', len) || memchr(text, '\r', len)) {
                goto cleanup;
            }
            h = mix(fnv(h ^ 0x5a, text, len));
        }
        *next = c.next;
        ret = 0;
        break;
    }

cleanup:
    scope->count = ns_mark;
    *hash = h;
    return ret;
}

/* The text hash of the operation of an <rpc> (base namespace, message-id, one operation); -1: not sure. */
static int
text_hash(const char *msg, uint64_t *hash)
{
    struct xmlscan_scope scope = {.count = 0};
    struct xmlscan_tag root, op, end;
    const char *p;
    uint64_t root_hash;
    int message_id = 0;

    if (xmlscan_read_tag(xmlscan_skip_misc(msg), &root) || root.empty ||
        hash_start_tag(&scope, &root, &root_hash, &message_id) || !message_id ||
        !xmlscan_is_elem(&scope, &root, NC_BASE_NS, "rpc")) {
        return -1;
    }
    if (xmlscan_read_tag(xmlscan_skip_misc(root.next), &op) || op.end ||
        hash_element(&scope, &op, 0, hash, &p)) {
        return -1;
    }
    if (xmlscan_read_tag(xmlscan_skip_misc(p), &end) || !end.end || !xmlscan_same_qname(&end, &root)) {
        return -1;
    }
    p = xmlscan_skip_misc(end.next);
    return p && !*p ? 0 : -1;
}

static int
hash_known(const struct rpc_custom *rc, uint64_t hash)
{
    for (uint32_t i = 0; i < rc->entry_count; i++) {
        if (rc->entries[i].hash == hash) {
            return 1;
        }
    }
    return 0;
}

static int
has_message_id(const struct lyd_node_opaq *o)
{
    for (const struct lyd_attr *a = o->attr; a; a = a->next) {
        if (attr_ignored(a)) {
            return 1;
        }
    }
    return 0;
}

int
rpc_custom_match(const struct rpc_custom *rc, const char *msg, struct lyd_node **envelope, uint32_t *entry)
{
    struct lyd_node *tree = NULL;
    const struct lyd_node_opaq *root;
    const struct lyd_node *op;
    const char *name;
    size_t name_len;
    uint64_t h;
    int ret = -1;

    *envelope = NULL;
    if (!scan_op_name(msg, &name, &name_len) && !name_known(rc, name, name_len)) {
        goto cleanup;
    }
    if (!text_hash(msg, &h) && !hash_known(rc, h)) {
        goto cleanup;
    }
    if (lyd_parse_data_mem(rc->ctx, msg, LYD_XML, LYD_PARSE_OPAQ | LYD_PARSE_ONLY, 0, &tree) || !tree) {
        goto cleanup;
    }
    /* Only a proper <rpc> (base namespace, message-id, one operation) gets a custom reply. */
    root = opaq(tree);
    if (tree->schema || tree->next || strcmp(root->name.name, "rpc") ||
        !same_str(root->name.module_ns, NC_BASE_NS) || !has_message_id(root)) {
        goto cleanup;
    }
    op = root->child;
    if (!op || op->next || node_hash(op, 0, &h)) {
        goto cleanup;
    }
    for (uint32_t i = 0; i < rc->entry_count; i++) {
        if (rc->entries[i].hash == h && nodes_equal(rc->entries[i].input, op)) {
            *entry = i;
            *envelope = tree;
            tree = NULL;
            ret = 0;
            break;
        }
    }

cleanup:
    lyd_free_all(tree);
    return ret;
}

const struct rpc_custom_output *
rpc_custom_next(struct rpc_custom *rc, uint32_t device, uint32_t entry)
{
    struct rc_entry *e = &rc->entries[entry];
    uint16_t *pos;

    if (e->slot == RC_NO_SLOT) {
        return &e->outputs[0];
    }
    pos = &rc->positions[(size_t)device * rc->slot_count + e->slot];
    if ((uint32_t)*pos + 1 < e->output_count) {
        return &e->outputs[(*pos)++];
    }
    return &e->outputs[*pos];
}

uint32_t
rpc_custom_count(const struct rpc_custom *rc)
{
    return rc ? rc->entry_count : 0;
}

void
rpc_custom_free(struct rpc_custom *rc)
{
    if (!rc) {
        return;
    }
    for (uint32_t i = 0; i < rc->entry_count; i++) {
        for (uint32_t j = 0; j < rc->entries[i].output_count; j++) {
            free(rc->entries[i].outputs[j].xml);
        }
        free(rc->entries[i].outputs);
    }
    free(rc->entries);
    free(rc->names);
    free(rc->positions);
    lyd_free_all(rc->tree);
    free(rc);
}

/* ---- loading ---- */

static int
is_named(const struct lyd_node *n, const char *name)
{
    return !n->schema && !strcmp(opaq(n)->name.name, name);
}

static uint32_t
child_count(const struct lyd_node *n)
{
    uint32_t count = 0;
    const struct lyd_node *c;

    LY_LIST_FOR(opaq(n)->child, c)
    {
        count++;
    }
    return count;
}

static char *
read_text(const char *path, char *err, size_t err_len, enum fleet_err *rc)
{
    FILE *f = fopen(path, "rb");
    struct sbuf b = {0};
    char chunk[16384];
    size_t got;
    char *text = NULL;

    *rc = FLEET_ERR_INVAL;
    if (!f) {
        snprintf(err, err_len, "--rpc-config \"%s\": %s", path, strerror(errno));
        return NULL;
    }
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (memchr(chunk, '\0', got)) {
            snprintf(err, err_len, "--rpc-config \"%s\": not XML (holds a NUL byte)", path);
            goto cleanup;
        }
        if (b.len + got > RPC_CUSTOM_MAX_FILE_BYTES) {
            *rc = FLEET_ERR_LIMIT;
            snprintf(err, err_len, "--rpc-config \"%s\": larger than %u bytes", path,
                     (unsigned)RPC_CUSTOM_MAX_FILE_BYTES);
            goto cleanup;
        }
        sbuf_add(&b, chunk, got);
    }
    if (ferror(f)) {
        snprintf(err, err_len, "--rpc-config \"%s\": %s", path, strerror(errno));
        goto cleanup;
    }
    sbuf_add(&b, "", 0); /* an empty file still gets a (NUL-terminated) string */
    if (!(text = sbuf_take(&b, NULL))) {
        *rc = FLEET_ERR_NOMEM;
        snprintf(err, err_len, "--rpc-config \"%s\": out of memory", path);
    }

cleanup:
    sbuf_free(&b);
    fclose(f);
    return text;
}

/* The file inside the wrapper element, after its byte order mark and XML declaration if any. */
static char *
wrap_text(const char *text)
{
    struct sbuf b = {0};
    const char *body = text;

    if (!strncmp(body, "\xef\xbb\xbf", 3)) {
        body += 3;
    }
    if (!strncmp(body, "<?xml", 5) && (xmlscan_is_space(body[5]) || body[5] == '?')) {
        const char *end = strstr(body, "?>");
        if (end) {
            sbuf_add(&b, body, (size_t)(end + 2 - body));
            body = end + 2;
        }
    }
    /* No newline is added: libyang's line numbers stay the file's. */
    sbuf_adds(&b, RC_WRAP_OPEN);
    sbuf_adds(&b, body);
    sbuf_adds(&b, RC_WRAP_END);
    return sbuf_take(&b, NULL);
}

/* An element of an output without a namespace would print in the wrapper's: refused. */
static const struct lyd_node *
find_no_ns(const struct lyd_node *n)
{
    const struct lyd_node *c, *found;

    if (same_str(opaq(n)->name.module_ns, RC_NO_NS)) {
        return n;
    }
    LY_LIST_FOR(opaq(n)->child, c)
    {
        if ((found = find_no_ns(c))) {
            return found;
        }
    }
    return NULL;
}

static enum fleet_err
add_output(struct rc_entry *e, const struct lyd_node *reply, const char *path, uint32_t rpc_no,
           uint32_t out_no, char *err, size_t err_len)
{
    struct rpc_custom_output out = {0};
    const struct lyd_node *c;
    const struct lyd_node *bad;

    if (!same_str(opaq(reply)->name.module_ns, NC_BASE_NS) || strcmp(opaq(reply)->name.name, "rpc-reply")) {
        snprintf(err, err_len,
                 "--rpc-config \"%s\": <rpc> number %u: <output> number %u holds <%s>, not an <rpc-reply> in "
                 "the namespace " NC_BASE_NS,
                 path, (unsigned)rpc_no, (unsigned)out_no, opaq(reply)->name.name);
        return FLEET_ERR_INVAL;
    }
    if ((bad = find_no_ns(reply))) {
        snprintf(err, err_len,
                 "--rpc-config \"%s\": <rpc> number %u: <output> number %u: <%s> has no namespace", path,
                 (unsigned)rpc_no, (unsigned)out_no, opaq(bad)->name.name);
        return FLEET_ERR_INVAL;
    }
    if (e->output_count >= RPC_CUSTOM_MAX_OUTPUTS) {
        snprintf(err, err_len, "--rpc-config \"%s\": <rpc> number %u: more than %u outputs for one input",
                 path, (unsigned)rpc_no, (unsigned)RPC_CUSTOM_MAX_OUTPUTS);
        return FLEET_ERR_LIMIT;
    }
    LY_LIST_FOR(opaq(reply)->child, c)
    {
        out.is_error |= is_named(c, "rpc-error") && same_str(opaq(c)->name.module_ns, NC_BASE_NS);
    }
    /* The children are sent inside our own <rpc-reply>, which carries the request's attributes instead. */
    if (opaq(reply)->child) {
        if (lyd_print_mem(&out.xml, opaq(reply)->child, LYD_XML, LYD_PRINT_WITHSIBLINGS | LYD_PRINT_SHRINK)) {
            goto nomem;
        }
    } else if (!(out.xml = strdup(""))) {
        goto nomem;
    }
    out.xml_len = strlen(out.xml);
    if (e->output_count == e->output_cap) {
        uint32_t cap = e->output_cap ? e->output_cap * 2 : 2;
        struct rpc_custom_output *grown = realloc(e->outputs, cap * sizeof *grown);
        if (!grown) {
            goto nomem;
        }
        e->outputs = grown;
        e->output_cap = cap;
    }
    e->outputs[e->output_count++] = out;
    return FLEET_OK;

nomem:
    free(out.xml);
    snprintf(err, err_len, "--rpc-config \"%s\": out of memory", path);
    return FLEET_ERR_NOMEM;
}

/* The entry of an input equal to @p input, a new one if none; NULL when out of memory or past the limit. */
static struct rc_entry *
entry_for(struct rpc_custom *rc, const struct lyd_node *input, uint64_t hash)
{
    struct rc_entry *e;

    for (uint32_t i = 0; i < rc->entry_count; i++) {
        if (rc->entries[i].hash == hash && nodes_equal(rc->entries[i].input, input)) {
            return &rc->entries[i];
        }
    }
    if (rc->entry_count >= RPC_CUSTOM_MAX_RPCS) {
        return NULL;
    }
    if (rc->entry_count == rc->entry_cap) {
        uint32_t cap = rc->entry_cap ? rc->entry_cap * 2 : 8;
        struct rc_entry *grown = realloc(rc->entries, cap * sizeof *grown);
        if (!grown) {
            return NULL;
        }
        rc->entries = grown;
        rc->entry_cap = cap;
    }
    e = &rc->entries[rc->entry_count++];
    memset(e, 0, sizeof *e);
    e->input = input;
    e->hash = hash;
    e->slot = RC_NO_SLOT;
    return e;
}

/* One <rpc> of the file: its input and outputs, checked. */
static enum fleet_err
load_rpc(struct rpc_custom *rc, const struct lyd_node *rpc, const char *path, uint32_t rpc_no, char *err,
         size_t err_len)
{
    const struct lyd_node *input = NULL, *op, *c;
    struct rc_entry *e;
    uint32_t out_no = 0;
    uint64_t hash;
    enum fleet_err ret;

    LY_LIST_FOR(opaq(rpc)->child, c)
    {
        if (is_named(c, "input")) {
            if (input) {
                snprintf(err, err_len, "--rpc-config \"%s\": <rpc> number %u has more than one <input>", path,
                         (unsigned)rpc_no);
                return FLEET_ERR_INVAL;
            }
            input = c;
        } else if (is_named(c, "output")) {
            out_no++;
        } else {
            /* OpenDaylight's reader skips unknown elements too. */
            log_warn("--rpc-config \"%s\": <rpc> number %u: <%s> ignored", path, (unsigned)rpc_no,
                     opaq(c)->name.name);
        }
    }
    if (!input || !out_no) {
        snprintf(err, err_len, "--rpc-config \"%s\": <rpc> number %u has no <%s>", path, (unsigned)rpc_no,
                 input ? "output" : "input");
        return FLEET_ERR_INVAL;
    }
    if (child_count(input) != 1) {
        snprintf(err, err_len, "--rpc-config \"%s\": <rpc> number %u: <input> must hold one element, not %u",
                 path, (unsigned)rpc_no, (unsigned)child_count(input));
        return FLEET_ERR_INVAL;
    }
    op = opaq(input)->child;
    if (node_hash(op, 0, &hash)) {
        snprintf(err, err_len, "--rpc-config \"%s\": <rpc> number %u: <input> nests deeper than %u elements",
                 path, (unsigned)rpc_no, (unsigned)RC_MAX_DEPTH);
        return FLEET_ERR_LIMIT;
    }
    if (same_str(opaq(op)->name.module_ns, RC_NO_NS)) {
        log_warn("--rpc-config \"%s\": <rpc> number %u: <%s> has no namespace, no request can match it", path,
                 (unsigned)rpc_no, opaq(op)->name.name);
    }
    if (!(e = entry_for(rc, op, hash))) {
        if (rc->entry_count >= RPC_CUSTOM_MAX_RPCS) {
            snprintf(err, err_len, "--rpc-config \"%s\": more than %u distinct inputs", path,
                     (unsigned)RPC_CUSTOM_MAX_RPCS);
            return FLEET_ERR_LIMIT;
        }
        snprintf(err, err_len, "--rpc-config \"%s\": out of memory", path);
        return FLEET_ERR_NOMEM;
    }
    out_no = 0;
    LY_LIST_FOR(opaq(rpc)->child, c)
    {
        if (!is_named(c, "output")) {
            continue;
        }
        out_no++;
        if (child_count(c) != 1) {
            snprintf(err, err_len,
                     "--rpc-config \"%s\": <rpc> number %u: <output> number %u must hold one "
                     "<rpc-reply>, not %u elements",
                     path, (unsigned)rpc_no, (unsigned)out_no, (unsigned)child_count(c));
            return FLEET_ERR_INVAL;
        }
        if ((ret = add_output(e, opaq(c)->child, path, rpc_no, out_no, err, err_len))) {
            return ret;
        }
    }
    return FLEET_OK;
}

/* Distinct local names of the inputs, the cheap first test of every request. */
static enum fleet_err
collect_names(struct rpc_custom *rc)
{
    if (!(rc->names = calloc(rc->entry_count, sizeof *rc->names))) {
        return FLEET_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < rc->entry_count; i++) {
        const char *name = opaq(rc->entries[i].input)->name.name;
        uint32_t j = 0;
        while (j < rc->name_count && strcmp(rc->names[j], name)) {
            j++;
        }
        if (j == rc->name_count) {
            rc->names[rc->name_count++] = name;
        }
    }
    return FLEET_OK;
}

enum fleet_err
rpc_custom_load(const char *path, struct ly_ctx *ctx, uint32_t device_count, struct rpc_custom **out,
                char *err, size_t err_len)
{
    struct rpc_custom *rc = NULL;
    char *text = NULL, *wrapped = NULL;
    const struct lyd_node *rpcs = NULL, *c;
    uint32_t rpc_no = 0;
    enum fleet_err ret = FLEET_ERR_NOMEM;

    *out = NULL;
    if (!(text = read_text(path, err, err_len, &ret))) {
        goto cleanup;
    }
    ret = FLEET_ERR_INVAL;
    if (xmlguard_empty_namespace(text)) {
        snprintf(err, err_len,
                 "--rpc-config \"%s\": empty namespace declarations (xmlns=\"\") are not supported", path);
        goto cleanup;
    }
    if (!(rc = calloc(1, sizeof *rc)) || !(wrapped = wrap_text(text))) {
        ret = FLEET_ERR_NOMEM;
        snprintf(err, err_len, "--rpc-config \"%s\": out of memory", path);
        goto cleanup;
    }
    rc->ctx = ctx;
    rc->device_count = device_count;
    if (lyd_parse_data_mem(ctx, wrapped, LYD_XML, LYD_PARSE_OPAQ | LYD_PARSE_ONLY, 0, &rc->tree) ||
        !rc->tree) {
        const struct ly_err_item *e = ly_err_last(ctx);
        snprintf(err, err_len, "--rpc-config \"%s\": not well-formed XML: %s%s%s", path,
                 e && e->msg ? e->msg : "empty", e && e->path ? " " : "", e && e->path ? e->path : "");
        goto cleanup;
    }
    /* The wrapper holds the file's root element, which must be <rpcs>. */
    if (!opaq(rc->tree)->child) {
        snprintf(err, err_len, "--rpc-config \"%s\": not well-formed XML: no root element", path);
        goto cleanup;
    }
    if (child_count(rc->tree) != 1 || !is_named(opaq(rc->tree)->child, "rpcs")) {
        snprintf(err, err_len, "--rpc-config \"%s\": the root element is not <rpcs>", path);
        goto cleanup;
    }
    rpcs = opaq(rc->tree)->child;
    LY_LIST_FOR(opaq(rpcs)->child, c)
    {
        if (!is_named(c, "rpc")) {
            log_warn("--rpc-config \"%s\": <%s> in <rpcs> ignored", path, opaq(c)->name.name);
            continue;
        }
        if ((ret = load_rpc(rc, c, path, ++rpc_no, err, err_len))) {
            goto cleanup;
        }
    }
    if (!rc->entry_count) {
        ret = FLEET_ERR_INVAL;
        snprintf(err, err_len, "--rpc-config \"%s\": <rpcs> holds no <rpc>", path);
        goto cleanup;
    }
    if ((ret = collect_names(rc))) {
        snprintf(err, err_len, "--rpc-config \"%s\": out of memory", path);
        goto cleanup;
    }
    /* Positions only for sequences: a single output needs none. */
    for (uint32_t i = 0; i < rc->entry_count; i++) {
        if (rc->entries[i].output_count > 1) {
            rc->entries[i].slot = rc->slot_count++;
        }
    }
    if (rc->slot_count && device_count &&
        !(rc->positions = calloc((size_t)device_count * rc->slot_count, sizeof *rc->positions))) {
        ret = FLEET_ERR_NOMEM;
        snprintf(err, err_len,
                 "--rpc-config \"%s\": out of memory for the positions of %u devices in %u sequences", path,
                 (unsigned)device_count, (unsigned)rc->slot_count);
        goto cleanup;
    }
    *out = rc;
    rc = NULL;
    ret = FLEET_OK;

cleanup:
    rpc_custom_free(rc);
    free(wrapped);
    free(text);
    return ret;
}
