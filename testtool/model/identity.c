/*
 * Identity rules; see identity.h. The rules file is read with the shared
 * JSON reader (common/json_read.h). Substitution is one left-to-right pass:
 * a table of the bytes that may begin a match skips most of the text, and
 * where a match begins the longest one wins. Replacement templates are
 * filled while they are written, so nothing is computed ahead per device.
 */
#include "identity.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "dynamics.h"
#include "json_read.h"

/* Placeholders, in the order of enum placeholder. */
static const char *const placeholders[] = {"{INDEX}", "{ADDR}", "{MAC}", "{SERIAL}"};
#define PLACEHOLDER_COUNT 4

/* Largest rules file read. */
#define IDENTITY_MAX_FILE_BYTES (16u * 1024u * 1024u)

/* Salts of the hashes {MAC} and {SERIAL} are keyed by. */
#define SALT_MAC    0x4d4143u
#define SALT_SERIAL 0x53524c4eu

void
identity_rules_free(struct identity_rules *rules)
{
    if (!rules) {
        return;
    }
    for (uint32_t i = 0; i < rules->count; i++) {
        free(rules->rules[i].name);
        free(rules->rules[i].match);
        free(rules->rules[i].match_xml);
        free(rules->rules[i].replace);
    }
    free(rules->rules);
    free(rules);
}

struct identity_rules *
identity_rules_empty(void)
{
    struct identity_rules *r = calloc(1, sizeof *r);

    if (r) {
        r->first['{'] = 1;
        r->first_xml['{'] = 1;
    }
    return r;
}

/* @p s with &, < and > escaped as libyang prints character data. */
static char *
xml_escaped(const char *s)
{
    struct sbuf b = {0};

    for (; *s; s++) {
        if (*s == '&') {
            sbuf_adds(&b, "&amp;");
        } else if (*s == '<') {
            sbuf_adds(&b, "&lt;");
        } else if (*s == '>') {
            sbuf_adds(&b, "&gt;");
        } else {
            sbuf_add(&b, s, 1);
        }
    }
    if (!b.buf && !b.failed) {
        return strdup("");
    }
    return sbuf_take(&b, NULL);
}

/* {MAC+N}: the device's N-th further MAC (N from 1 to IDENTITY_MAC_MAX_OFFSET), for its interfaces. */
#define PLACEHOLDER_MAC_PLUS PLACEHOLDER_COUNT

/*
 * The placeholder at @p p (index), or -1. "{MAC+N}" is PLACEHOLDER_MAC_PLUS - 1 + N, so every value above
 * PLACEHOLDER_COUNT - 1 names a MAC offset.
 */
static int
placeholder_at(const char *p, size_t n, size_t *len)
{
    if (n > 6 && !memcmp(p, "{MAC+", 5) && p[5] >= '1' && p[5] <= '9') {
        size_t i = 5;
        unsigned off = 0;
        while (i < n && i < 9 && p[i] >= '0' && p[i] <= '9') {
            off = off * 10 + (unsigned)(p[i++] - '0');
        }
        if (i < n && p[i] == '}' && off >= 1 && off <= IDENTITY_MAC_MAX_OFFSET) {
            *len = i + 1;
            return PLACEHOLDER_MAC_PLUS - 1 + (int)off;
        }
    }
    for (int k = 0; k < PLACEHOLDER_COUNT; k++) {
        size_t l = strlen(placeholders[k]);
        if (n >= l && !memcmp(p, placeholders[k], l)) {
            *len = l;
            return k;
        }
    }
    return -1;
}

/* A "{WORD}" in @p s that is not a placeholder: its text into @p bad, and 1. */
static int
unknown_placeholder(const char *s, char *bad, size_t bad_len)
{
    for (const char *p = strchr(s, '{'); p; p = strchr(p + 1, '{')) {
        const char *q = p + 1;
        size_t l;
        while ((*q >= 'A' && *q <= 'Z') || (q >= p + 4 && (*q == '+' || (*q >= '0' && *q <= '9')))) {
            q++;
        }
        if (*q == '}' && q > p + 1 && placeholder_at(p, strlen(p), &l) < 0) {
            snprintf(bad, bad_len, "%.*s", (int)(q - p + 1), p);
            return 1;
        }
    }
    return 0;
}

/* One element of "rules" into @p rule; @p n is its 1-based position (named in errors). */
static enum fleet_err
rule_read(const struct jsonr_value *v, uint32_t n, const char *what, struct identity_rule *rule, char *err,
          size_t err_len)
{
    const char *name = v->type == JSONR_OBJECT ? jsonr_get_str(v, "name") : NULL;
    const char *match, *replace;
    char label[96], bad[64];

    snprintf(label, sizeof label, "rule %u%s%.40s%s", (unsigned)n, name ? " (" : "", name ? name : "",
             name ? ")" : "");
    if (v->type != JSONR_OBJECT) {
        snprintf(err, err_len, "%s: %s: must be an object with \"match\" and \"replace\"", what, label);
        return FLEET_ERR_INVAL;
    }
    for (const struct jsonr_value *m = v->child; m; m = m->next) {
        if (strcmp(m->key, "name") && strcmp(m->key, "match") && strcmp(m->key, "replace")) {
            snprintf(err, err_len, "%s: %s: unknown member \"%.40s\" (a rule has name, match, replace)", what,
                     label, m->key);
            return FLEET_ERR_INVAL;
        }
        if (m->type != JSONR_STRING) {
            snprintf(err, err_len, "%s: %s: \"%s\" must be a string", what, label, m->key);
            return FLEET_ERR_INVAL;
        }
    }
    match = jsonr_get_str(v, "match");
    replace = jsonr_get_str(v, "replace");
    if (!match || !*match) {
        snprintf(err, err_len, "%s: %s: \"match\" must be a non-empty string", what, label);
        return FLEET_ERR_INVAL;
    }
    if (!replace) {
        snprintf(err, err_len, "%s: %s: \"replace\" is missing", what, label);
        return FLEET_ERR_INVAL;
    }
    if (unknown_placeholder(replace, bad, sizeof bad)) {
        snprintf(err, err_len,
                 "%s: %s: unknown placeholder %s in \"replace\" (known: {INDEX} {ADDR} {MAC} {SERIAL})", what,
                 label, bad);
        return FLEET_ERR_INVAL;
    }
    rule->name = strdup(name ? name : "");
    rule->match = strdup(match);
    rule->match_len = strlen(match);
    rule->match_xml = xml_escaped(match);
    rule->match_xml_len = rule->match_xml ? strlen(rule->match_xml) : 0;
    rule->replace = strdup(replace);
    if (!rule->name || !rule->match || !rule->match_xml || !rule->replace) {
        return FLEET_ERR_NOMEM;
    }
    return FLEET_OK;
}

enum fleet_err
identity_rules_parse(const char *text, size_t len, const char *what, struct identity_rules **out, char *err,
                     size_t err_len)
{
    struct jsonr_value *doc = NULL;
    const struct jsonr_value *list;
    struct identity_rules *r = NULL;
    char jerr[200];
    enum fleet_err rc = FLEET_ERR_INVAL;
    uint32_t n = 0;

    *out = NULL;
    if (jsonr_parse(text, len, &doc, jerr, sizeof jerr)) {
        snprintf(err, err_len, "%s: %s", what, jerr);
        goto cleanup;
    }
    list = jsonr_get(doc, "rules");
    if (doc->type != JSONR_OBJECT || !list || list->type != JSONR_ARRAY) {
        snprintf(err, err_len, "%s: must be an object with a \"rules\" array", what);
        goto cleanup;
    }
    if (list->count > IDENTITY_MAX_RULES) {
        snprintf(err, err_len, "%s: %zu rules, at most %d", what, list->count, IDENTITY_MAX_RULES);
        goto cleanup;
    }
    if (!(r = identity_rules_empty()) ||
        !(r->rules = calloc(list->count ? list->count : 1, sizeof *r->rules))) {
        rc = FLEET_ERR_NOMEM;
        goto cleanup;
    }
    for (const struct jsonr_value *v = list->child; v; v = v->next) {
        struct identity_rule *rule = &r->rules[r->count];
        n++;
        rc = rule_read(v, n, what, rule, err, err_len);
        r->count++; /* a partly read rule is freed with the others */
        if (rc) {
            goto cleanup;
        }
        for (uint32_t k = 0; k + 1 < r->count; k++) {
            if (!strcmp(r->rules[k].match, rule->match)) {
                snprintf(err, err_len, "%s: rule %u: \"match\" \"%.60s\" is rule %u's already", what,
                         (unsigned)n, rule->match, (unsigned)(k + 1));
                rc = FLEET_ERR_INVAL;
                goto cleanup;
            }
        }
        r->first[(unsigned char)rule->match[0]] = 1;
        r->first_xml[(unsigned char)rule->match_xml[0]] = 1;
    }
    *out = r;
    r = NULL;
    rc = FLEET_OK;

cleanup:
    identity_rules_free(r);
    jsonr_free(doc);
    return rc;
}

enum fleet_err
identity_rules_load(const char *path, struct identity_rules **out, char *err, size_t err_len)
{
    FILE *f = fopen(path, "rb");
    struct sbuf text = {0};
    char chunk[8192];
    size_t got;
    enum fleet_err rc;

    *out = NULL;
    if (!f) {
        snprintf(err, err_len, "%s: cannot open: %s", path, strerror(errno));
        return FLEET_ERR_SYS;
    }
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0 && text.len <= IDENTITY_MAX_FILE_BYTES) {
        sbuf_add(&text, chunk, got);
    }
    if (ferror(f)) {
        snprintf(err, err_len, "%s: cannot read: %s", path, strerror(errno));
        rc = FLEET_ERR_SYS;
    } else if (text.len > IDENTITY_MAX_FILE_BYTES) {
        snprintf(err, err_len, "%s: larger than %u bytes", path, IDENTITY_MAX_FILE_BYTES);
        rc = FLEET_ERR_INVAL;
    } else if (text.failed) {
        rc = FLEET_ERR_NOMEM;
    } else {
        rc = identity_rules_parse(text.buf ? text.buf : "", text.len, path, out, err, err_len);
    }
    fclose(f);
    sbuf_free(&text);
    return rc;
}

/* A bijection of 40-bit numbers keyed by @p seed and @p salt: distinct inputs give distinct outputs. */
static uint64_t
mix40(uint64_t x, uint64_t seed, uint64_t salt)
{
    const uint64_t mask = (1ull << 40) - 1;

    for (uint64_t round = 0; round < 3; round++) {
        uint64_t k = dyn_hash(seed, salt, round);
        x = (x + k) & mask;
        x = (x * ((k >> 24) | 1)) & mask; /* an odd factor is invertible modulo 2^40 */
        x ^= x >> 19;                     /* so is a right shift folded in */
    }
    return x;
}

/* MAC number @p n (0: the device's base) of device @p index, as text: distinct for every (index, n). */
static void
mac_text(uint64_t seed, uint32_t index, unsigned n, char *out, size_t out_len)
{
    uint64_t mac = mix40(((uint64_t)index << 8) | n, seed, SALT_MAC);

    snprintf(out, out_len, "02:%02x:%02x:%02x:%02x:%02x", (unsigned)(mac >> 32 & 0xff),
             (unsigned)(mac >> 24 & 0xff), (unsigned)(mac >> 16 & 0xff), (unsigned)(mac >> 8 & 0xff),
             (unsigned)(mac & 0xff));
}

void
identity_values_of(uint64_t seed, uint32_t index, uint32_t addr, struct identity_values *out)
{
    uint64_t serial = mix40(index, seed, SALT_SERIAL);

    snprintf(out->index, sizeof out->index, "%u", (unsigned)index);
    snprintf(out->addr, sizeof out->addr, "%u.%u.%u.%u", (unsigned)(addr >> 24),
             (unsigned)(addr >> 16 & 0xff), (unsigned)(addr >> 8 & 0xff), (unsigned)(addr & 0xff));
    mac_text(seed, index, 0, out->mac, sizeof out->mac);
    out->seed = seed;
    out->index_n = index;
    snprintf(out->serial, sizeof out->serial, "FS%010llX", (unsigned long long)serial);
}

void
identity_values(const struct device *dev, struct identity_values *out)
{
    identity_values_of(dev->group->cfg.seed, dev->index, dev->addr, out);
}

/* Placeholder @p k's value; a MAC offset's is built in @p buf. */
static const char *
value_of(const struct identity_values *vals, int k, char buf[18])
{
    if (k >= PLACEHOLDER_MAC_PLUS) {
        mac_text(vals->seed, vals->index_n, (unsigned)(k - PLACEHOLDER_MAC_PLUS + 1), buf, 18);
        return buf;
    }
    switch (k) {
    case 0:
        return vals->index;
    case 1:
        return vals->addr;
    case 2:
        return vals->mac;
    default:
        return vals->serial;
    }
}

/* Write template @p t with its placeholders filled; literal text escaped when @p xml. */
static void
emit_template(const char *t, const struct identity_values *vals, int xml, struct sbuf *out)
{
    const char *lit = t;

    for (const char *p = t; *p;) {
        size_t l;
        int k = *p == '{' ? placeholder_at(p, strlen(p), &l) : -1;
        int esc = xml && (*p == '&' || *p == '<' || *p == '>');
        if (k < 0 && !esc) {
            p++;
            continue;
        }
        sbuf_add(out, lit, (size_t)(p - lit));
        if (k >= 0) {
            char buf[18];
            sbuf_adds(out, value_of(vals, k, buf));
            p += l;
        } else {
            sbuf_adds(out, *p == '&' ? "&amp;" : *p == '<' ? "&lt;" : "&gt;");
            p++;
        }
        lit = p;
    }
    sbuf_adds(out, lit);
}

/*
 * The longest match beginning at @p p: its length (0: none), and in @p which the rule's index or,
 * for a placeholder written in the data, -1 - the placeholder's.
 */
static size_t
match_at(const struct identity_rules *rules, const char *p, size_t n, int xml, int *which)
{
    size_t best = 0;

    if (*p == '{') {
        int k = placeholder_at(p, n, &best);
        if (k >= 0) {
            *which = -1 - k;
        } else {
            best = 0;
        }
    }
    for (uint32_t i = 0; rules && i < rules->count; i++) {
        const struct identity_rule *r = &rules->rules[i];
        const char *m = xml ? r->match_xml : r->match;
        size_t l = xml ? r->match_xml_len : r->match_len;
        if (l > best && l <= n && *m == *p && !memcmp(m, p, l)) {
            best = l;
            *which = (int)i;
        }
    }
    return best;
}

static size_t
apply(const struct identity_rules *rules, const struct identity_values *vals, const char *in, size_t len,
      int xml, struct sbuf *out)
{
    static const uint8_t only_brace[256] = {['{'] = 1};
    const uint8_t *first = !rules ? only_brace : xml ? rules->first_xml : rules->first;
    size_t i = 0, copied = 0, count = 0;
    char quote = 0;
    int in_tag = 0;

    while (i < len) {
        unsigned char c = (unsigned char)in[i];
        size_t m;
        int which = 0;
        if (xml && (in_tag || c == '<')) {
            /* Markup: element names, attributes and namespaces are not values. */
            if (quote) {
                quote = c == (unsigned char)quote ? 0 : quote;
            } else if (c == '"' || c == '\'') {
                quote = (char)c;
            } else if (c == '<') {
                in_tag = 1;
            } else if (c == '>') {
                in_tag = 0;
            }
            i++;
            continue;
        }
        if (!first[c] || !(m = match_at(rules, in + i, len - i, xml, &which))) {
            i++;
            continue;
        }
        if (out) {
            sbuf_add(out, in + copied, i - copied);
            if (which < 0) {
                char buf[18];
                sbuf_adds(out, value_of(vals, -1 - which, buf));
            } else {
                emit_template(rules->rules[which].replace, vals, xml, out);
            }
        }
        count++;
        i += m;
        copied = i;
    }
    if (out) {
        sbuf_add(out, in + copied, len - copied);
    }
    return count;
}

size_t
identity_apply_text(const struct identity_rules *rules, const struct identity_values *vals, const char *in,
                    size_t len, struct sbuf *out)
{
    return apply(rules, vals, in, len, 0, out);
}

size_t
identity_apply_xml(const struct identity_rules *rules, const struct identity_values *vals, const char *in,
                   size_t len, struct sbuf *out)
{
    return apply(rules, vals, in, len, 1, out);
}

int
identity_apply_tree(const struct identity_rules *rules, const struct identity_values *vals,
                    struct lyd_node *tree, uint32_t *refused)
{
    struct lyd_node *top, *n;
    int changed = 0;

    if (refused) {
        *refused = 0;
    }
    LY_LIST_FOR(tree, top)
    {
        LYD_TREE_DFS_BEGIN(top, n)
        {
            const char *v = n->schema && (n->schema->nodetype & LYD_NODE_TERM) ? lyd_get_value(n) : NULL;
            size_t len = v ? strlen(v) : 0;
            if (v && apply(rules, vals, v, len, 0, NULL)) {
                struct sbuf s = {0};
                apply(rules, vals, v, len, 0, &s);
                if (s.failed) {
                    sbuf_free(&s);
                    return -1;
                }
                if (lyd_change_term(n, s.buf ? s.buf : "") == LY_SUCCESS) {
                    changed++;
                } else if (refused) {
                    (*refused)++;
                }
                sbuf_free(&s);
            }
            LYD_TREE_DFS_END(top, n);
        }
    }
    return changed;
}

void
identity_rewrite_reply(const struct device *dev, struct sbuf *buf, size_t from)
{
    const struct identity_rules *rules = dev->type->identity;
    struct identity_values vals;
    struct sbuf out = {0};

    if (!rules || buf->failed || buf->len <= from) {
        return;
    }
    identity_values(dev, &vals);
    /* Build the whole buffer anew and swap: one pass and one copy, whatever matched. */
    sbuf_reserve(&out, buf->len + buf->len / 8 + 64);
    sbuf_add(&out, buf->buf, from);
    if (apply(rules, &vals, buf->buf + from, buf->len - from, 1, &out) && !out.failed) {
        sbuf_free(buf);
        *buf = out;
        return;
    }
    sbuf_free(&out);
}

size_t
identity_rewrite_value(const struct device *dev, const char *in, size_t len, char *buf, size_t cap)
{
    const struct identity_rules *rules = dev->type->identity;
    struct identity_values vals;
    struct sbuf out = {0};
    size_t n = (size_t)-1;

    if (!rules || !apply(rules, NULL, in, len, 0, NULL)) {
        return (size_t)-1;
    }
    identity_values(dev, &vals);
    apply(rules, &vals, in, len, 0, &out);
    if (!out.failed) {
        n = out.len < cap ? out.len : cap;
        memcpy(buf, out.buf ? out.buf : "", n);
    }
    sbuf_free(&out);
    return n;
}

enum fleet_err
identity_ds_own(struct device *dev, enum ds_id id, struct lyd_node ***tree)
{
    const struct lyd_node *tmpl = dev->type->template_tree;
    int from_template =
        dev->type->identity && !dev->ds.own[id] && tmpl && ds_read(&dev->ds, tmpl, id) == tmpl;
    enum fleet_err rc = ds_own(&dev->ds, tmpl, id, tree);

    if (!rc && from_template) {
        struct identity_values vals;
        identity_values(dev, &vals);
        if (identity_apply_tree(dev->type->identity, &vals, **tree, NULL) < 0) {
            rc = FLEET_ERR_NOMEM;
        }
    }
    return rc;
}

void
identity_fix_copy(const struct device *dev, const struct lyd_node *src, struct lyd_node *copy)
{
    if (dev->type->identity && src && src == dev->type->template_tree) {
        struct identity_values vals;
        identity_values(dev, &vals);
        identity_apply_tree(dev->type->identity, &vals, copy, NULL);
    }
}
