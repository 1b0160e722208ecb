/*
 * The fleet file: several kinds of device in one fleet. The file (JSON or
 * XML of schemas/fleetsim-fleet.yang) is validated by libyang in a context of
 * its own; each group then starts from the command line's plan and has its
 * leaves applied through cli_apply_named(), so a value is checked by the same
 * code, and refused with the same words, as on the command line. libyang's
 * data tree keeps no line numbers, so the lines in messages about a group or
 * one of its values come from a small scan of the text (ffl_locate_*), done
 * only when a line is needed.
 */
#include "fleet_file.h"
#include "cli.h"
#include "file_read.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libyang/libyang.h>

/* Largest fleet file read: a fleet of many groups is still a few kilobytes. */
#define FFL_MAX_FILE_BYTES (16u * 1024u * 1024u)
/* Deepest JSON nesting the line scan follows (a valid fleet file nests 5 deep). */
#define FFL_MAX_DEPTH 64
/* Longest message of the command line's checks. */
#define FFL_MSG_BYTES 512

/* A load in progress. */
struct ffl_loader {
    const char *path;      /* the fleet file as given */
    const char *text;      /* its text, NUL-terminated */
    int json;              /* 1: JSON, 0: XML */
    size_t dir_len;        /* length of its folder in path with the '/', 0: no folder (the current one) */
    struct fleet_file *ff; /* what is being filled */
    char *err;             /* the caller's message buffer */
    size_t err_len;        /* its size */
};

/* Leaves that name a file or folder: a relative one is resolved against the fleet file's folder. */
static const char *const ffl_path_leaves[] = {
    "schemas-dir",
    "device-type", /* a recorded folder (docs/RECORDED_TYPES.md) */
    "initial-config-xml-file",
    "snmp-recording",
    "notification-file",
    "rpc-config",
    "syslog-catalog",
    "trap-catalog",
    "authorized-keys",
    NULL,
};

/* Put "PATH[:LINE]: [group "G": ]message" in the error buffer, on one line. */
__attribute__((format(printf, 4, 5))) static void
ffl_fail(struct ffl_loader *ld, uint32_t line, const char *group, const char *fmt, ...)
{
    size_t n;
    va_list ap;

    if (line) {
        n = (size_t)snprintf(ld->err, ld->err_len, "%s:%" PRIu32 ": ", ld->path, line);
    } else {
        n = (size_t)snprintf(ld->err, ld->err_len, "%s: ", ld->path);
    }
    if (group && n < ld->err_len) {
        n += (size_t)snprintf(ld->err + n, ld->err_len - n, "group \"%s\": ", group);
    }
    if (n < ld->err_len) {
        va_start(ap, fmt);
        vsnprintf(ld->err + n, ld->err_len - n, fmt, ap);
        va_end(ap);
    }
    /* libyang quotes the offending text, newlines and all: the message stays one line. */
    for (char *p = ld->err; *p; p++) {
        if ((unsigned char)*p < ' ') {
            *p = ' ';
        }
    }
}

/* Line (1-based) of offset pos of the text. */
static uint32_t
ffl_line_at(const char *text, size_t pos)
{
    uint32_t line = 1;

    for (size_t i = 0; i < pos && text[i]; i++) {
        line += text[i] == '\n';
    }
    return line;
}

/* Whether a JSON member name or XML element name (len bytes at s) is name, with or without a prefix. */
static int
ffl_name_is(const char *s, size_t len, const char *name)
{
    size_t n = strlen(name);

    if (len < n || memcmp(s + len - n, name, n)) {
        return 0;
    }
    return len == n || s[len - n - 1] == ':';
}

/* Offset of the first non-space character from i. */
static size_t
ffl_skip_space(const char *t, size_t i)
{
    while (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r') {
        i++;
    }
    return i;
}

/*
 * Where in a JSON fleet file group number group_idx (0-based, file order) starts or, with leaf, where
 * its member leaf is (with value_idx, the value_idx-th entry of a leaf-list's array). The text is known
 * to be valid JSON: libyang parsed it. Returns the offset, or (size_t)-1.
 */
static size_t
ffl_locate_json(const char *t, uint32_t group_idx, const char *leaf, uint32_t value_idx)
{
    char kind[FFL_MAX_DEPTH];          /* '{' or '[' at each depth, 1-based */
    int is_group_array[FFL_MAX_DEPTH]; /* that container is the value of member "group" */
    const char *key = NULL;            /* last member name read, and its length */
    size_t key_len = 0;
    int depth = 0;
    int64_t group = -1;  /* groups started so far - 1 */
    int in_target = 0;   /* inside the group asked for (depth >= 4) */
    int in_values = 0;   /* inside the asked leaf-list's array */
    uint32_t values = 0; /* its entries seen */
    size_t leaf_at = (size_t)-1;

    for (size_t i = 0; t[i]; i++) {
        char c = t[i];

        if (c == '{' || c == '[') {
            if (++depth >= FFL_MAX_DEPTH) {
                break;
            }
            kind[depth] = c;
            is_group_array[depth] = c == '[' && depth == 3 && key && ffl_name_is(key, key_len, "group");
            key = NULL;
            if (c == '{' && depth == 4 && is_group_array[3]) {
                group++;
                in_target = group == (int64_t)group_idx;
                if (in_target && !leaf) {
                    return i;
                }
            }
        } else if (c == '}' || c == ']') {
            if (depth == 5 && in_values) {
                return leaf_at;
            }
            if (depth == 4 && in_target) {
                return leaf_at;
            }
            depth--;
        } else if (c == '"') {
            size_t start = i++;
            size_t after;

            while (t[i] && t[i] != '"') {
                i += t[i] == '\\' && t[i + 1] ? 2 : 1;
            }
            if (!t[i]) {
                break;
            }
            after = ffl_skip_space(t, i + 1);
            if (depth > 0 && kind[depth] == '{' && t[after] == ':') {
                key = t + start + 1;
                key_len = i - start - 1;
                if (depth == 4 && in_target && leaf && ffl_name_is(key, key_len, leaf)) {
                    leaf_at = start;
                    if (t[ffl_skip_space(t, after + 1)] != '[') {
                        return leaf_at;
                    }
                    in_values = 1;
                }
            } else if (depth == 5 && in_values) {
                if (values++ == value_idx) {
                    return start;
                }
            }
        }
    }
    return leaf_at;
}

/* The offset just past the first occurrence of end from i, or of the text's end. */
static size_t
ffl_skip_past(const char *t, size_t i, const char *end)
{
    const char *p = strstr(t + i, end);

    return p ? (size_t)(p - t) + strlen(end) : strlen(t);
}

/* The same as ffl_locate_json() for an XML fleet file: group elements at depth 2, leaves at depth 3. */
static size_t
ffl_locate_xml(const char *t, uint32_t group_idx, const char *leaf, uint32_t value_idx)
{
    int depth = 0;
    int64_t group = -1;
    int in_target = 0;
    uint32_t values = 0;
    size_t i = 0;

    while (t[i]) {
        size_t start = i, name_start, name_len;
        char quote = 0;

        if (t[i] != '<') {
            i++;
            continue;
        }
        if (!strncmp(t + i, "<?", 2)) {
            i = ffl_skip_past(t, i, "?>");
            continue;
        }
        if (!strncmp(t + i, "<!--", 4)) {
            i = ffl_skip_past(t, i, "-->");
            continue;
        }
        if (!strncmp(t + i, "<![CDATA[", 9)) {
            i = ffl_skip_past(t, i, "]]>");
            continue;
        }
        if (t[i + 1] == '!') {
            i = ffl_skip_past(t, i, ">");
            continue;
        }
        if (t[i + 1] == '/') {
            if (depth == 2 && in_target) {
                return (size_t)-1;
            }
            depth--;
            i = ffl_skip_past(t, i, ">");
            continue;
        }
        name_start = ++i;
        while (t[i] && !strchr(" \t\r\n/>", t[i])) {
            i++;
        }
        name_len = i - name_start;
        /* To the tag's end; a '>' inside an attribute's quotes does not end it. */
        while (t[i] && (quote || t[i] != '>')) {
            if (quote && t[i] == quote) {
                quote = 0;
            } else if (!quote && (t[i] == '"' || t[i] == '\'')) {
                quote = t[i];
            }
            i++;
        }
        depth++;
        if (depth == 2 && ffl_name_is(t + name_start, name_len, "group")) {
            group++;
            in_target = group == (int64_t)group_idx;
            if (in_target && !leaf) {
                return start;
            }
        } else if (depth == 3 && in_target && leaf && ffl_name_is(t + name_start, name_len, leaf)) {
            if (values++ == value_idx) {
                return start;
            }
        }
        if (t[i] == '>' && t[i - 1] == '/') {
            depth--;
        }
        if (t[i]) {
            i++;
        }
    }
    return (size_t)-1;
}

/* Line of a group (leaf NULL) or of one of its values in the file, 0 when it cannot be found. */
static uint32_t
ffl_locate(const struct ffl_loader *ld, uint32_t group_idx, const char *leaf, uint32_t value_idx)
{
    size_t at = ld->json ? ffl_locate_json(ld->text, group_idx, leaf, value_idx)
                         : ffl_locate_xml(ld->text, group_idx, leaf, value_idx);

    return at == (size_t)-1 ? 0 : ffl_line_at(ld->text, at);
}

/* The line libyang's error record names ("..., line number 7." or "Line number 1."), or 0. */
static uint32_t
ffl_ly_line(const struct ly_err_item *e)
{
    const char *where[2] = {e->path, e->msg};

    for (int k = 0; k < 2; k++) {
        const char *p = where[k] ? strcasestr(where[k], "line number ") : NULL;
        if (p) {
            return (uint32_t)strtoul(p + strlen("line number "), NULL, 10);
        }
    }
    return 0;
}

/* Index of the last group named name (a duplicate is the later one), or -1. */
static int64_t
ffl_group_named(const struct lyd_node *fleet, const char *name)
{
    const struct lyd_node *g;
    int64_t i = 0, found = -1;

    LY_LIST_FOR(fleet ? lyd_child(fleet) : NULL, g)
    {
        const char *key = lyd_get_value(lyd_child(g));
        if (key && !strcmp(key, name)) {
            found = i;
        }
        i++;
    }
    return found;
}

/*
 * Report libyang's last error: its line (a validation error has none: then the line of the group its
 * data path names, found in fleet when not NULL), the group, its message, and a hint.
 */
static void
ffl_fail_ly(struct ffl_loader *ld, const struct ly_ctx *ctx, const struct lyd_node *fleet)
{
    int64_t idx;
    uint32_t line;
    const struct ly_err_item *e = ly_err_last(ctx);
    char group[128] = "";
    char leaf[128] = "";
    char node[128] = "";
    const char *hint = "";
    const char *p;

    if (!e || !e->msg) {
        ffl_fail(ld, 0, NULL, "not a fleet file (libyang gives no reason)");
        return;
    }
    if (e->path && (p = strstr(e->path, "group[name='"))) {
        p += strlen("group[name='");
        snprintf(group, sizeof group, "%.*s", (int)strcspn(p, "'"), p);
        /* A bad value's path goes on to its leaf: name it, as the command line names its option. */
        if ((p = strstr(p, "']/"))) {
            p += 3;
            snprintf(leaf, sizeof leaf, "%.*s: ", (int)strcspn(p, "\"["), p);
        }
    }
    if (sscanf(e->msg, "Node \"%127[^\"]\" not found as a child of \"group\" node.", node) == 1 &&
        cli_option_known(node)) {
        hint = " (an option of the whole fleet: give it on the command line)";
    } else if (strstr(e->msg, "non-string-encoded decimal64")) {
        hint = " (RFC 7951 writes a decimal as a JSON string: \"0.5\")";
    } else if (strstr(e->msg, "must be namespace-qualified")) {
        hint = " (the fleet is \"" FLEET_FILE_MODULE ":fleet\")";
    }
    line = ffl_ly_line(e);
    if (!line && group[0] && (idx = ffl_group_named(fleet, group)) >= 0) {
        line = ffl_locate(ld, (uint32_t)idx, NULL, 0);
    }
    ffl_fail(ld, line, group[0] ? group : NULL, "%s%s%s", leaf, e->msg, hint);
}

/* Keep a copy of s in the fleet file's storage. Returns it, or NULL when out of memory. */
static char *
ffl_own(struct fleet_file *ff, const char *s, size_t len)
{
    char *copy;

    if (ff->string_count == ff->string_cap) {
        uint32_t cap = ff->string_cap ? ff->string_cap * 2 : 32;
        char **grown = realloc(ff->strings, cap * sizeof *grown);
        if (!grown) {
            return NULL;
        }
        ff->strings = grown;
        ff->string_cap = cap;
    }
    if (!(copy = malloc(len + 1))) {
        return NULL;
    }
    memcpy(copy, s, len);
    copy[len] = '\0';
    ff->strings[ff->string_count++] = copy;
    return copy;
}

/* Whether a leaf's value is a file name to resolve against the fleet file's folder. */
static int
ffl_is_path(const char *leaf, const char *value)
{
    size_t n = strlen(value);

    if (value[0] == '/') {
        return 0; /* absolute already */
    }
    /* As profile_load() tells them apart: a file name holds a '/' or ends in .xml; else a built-in name. */
    if (!strcmp(leaf, "profile")) {
        return strchr(value, '/') || (n > 4 && !strcmp(value + n - 4, ".xml"));
    }
    for (const char *const *p = ffl_path_leaves; *p; p++) {
        if (!strcmp(leaf, *p)) {
            return 1;
        }
    }
    return 0;
}

/* The value a leaf gives its option, owned by the fleet file: a relative file name gets the file's folder. */
static char *
ffl_value(struct ffl_loader *ld, const char *leaf, const char *value)
{
    size_t vlen = strlen(value);
    char *joined, *owned;

    if (!ld->dir_len || !ffl_is_path(leaf, value)) {
        return ffl_own(ld->ff, value, vlen);
    }
    if (!(joined = malloc(ld->dir_len + vlen + 1))) {
        return NULL;
    }
    memcpy(joined, ld->path, ld->dir_len);
    memcpy(joined + ld->dir_len, value, vlen + 1);
    owned = ffl_own(ld->ff, joined, ld->dir_len + vlen);
    free(joined);
    return owned;
}

/* Make group number idx's plan: the command line, then each of the group's leaves as its option. */
static enum fleet_err
ffl_group(struct ffl_loader *ld, uint32_t idx, const struct lyd_node *node, const struct fleet_config *base)
{
    struct fleet_group_spec *g = &ld->ff->groups[idx];
    const struct lyd_node *child;
    const struct lysc_node *prev_schema = NULL;
    uint32_t value_idx = 0;
    char msg[FFL_MSG_BYTES];

    g->cfg = *base;
    cli_config_fix_pointers(&g->cfg);
    g->cfg.fleet_file = NULL;
    g->line = ffl_locate(ld, idx, NULL, 0);
    if (!(g->name =
              ffl_own(ld->ff, lyd_get_value(lyd_child(node)), strlen(lyd_get_value(lyd_child(node)))))) {
        return FLEET_ERR_NOMEM;
    }
    /* Children come in schema order, a leaf-list's values in file order (ordered-by user). */
    LY_LIST_FOR(lyd_child(node), child)
    {
        const char *leaf = child->schema->name;
        char *value;
        enum fleet_err rc;

        value_idx = child->schema == prev_schema ? value_idx + 1 : 0;
        prev_schema = child->schema;
        if (!strcmp(leaf, "name")) {
            continue;
        }
        if (child->schema->nodetype == LYS_LEAFLIST && value_idx == 0 && cli_clear_named(leaf, &g->cfg)) {
            ffl_fail(ld, ffl_locate(ld, idx, leaf, 0), g->name, "leaf-list %s is not a repeatable option",
                     leaf);
            return FLEET_ERR_INVAL;
        }
        if (!(value = ffl_value(ld, leaf, lyd_get_value(child)))) {
            return FLEET_ERR_NOMEM;
        }
        if ((rc = cli_apply_named(leaf, value, &g->cfg, msg, sizeof msg))) {
            ffl_fail(ld, ffl_locate(ld, idx, leaf, value_idx), g->name, "%s", msg);
            return rc == FLEET_ERR_NOMEM ? rc : FLEET_ERR_INVAL;
        }
    }
    return FLEET_OK;
}

/* Read the whole file, NUL-terminated. */
static enum fleet_err
ffl_read(struct ffl_loader *ld, char **text_out)
{
    size_t len = 0;
    enum file_read_failure why = file_read_all(ld->path, FFL_MAX_FILE_BYTES, text_out, &len);

    switch (why) {
    case FILE_READ_OK:
        break;
    case FILE_READ_NOMEM:
        return FLEET_ERR_NOMEM;
    case FILE_READ_TOO_LARGE:
        ffl_fail(ld, 0, NULL, "larger than %u bytes: not a fleet file", (unsigned)FFL_MAX_FILE_BYTES);
        return FLEET_ERR_INVAL;
    default:
        ffl_fail(ld, 0, NULL, "cannot %s it: %s", why == FILE_READ_OPEN ? "open" : "read",
                 file_read_reason(why, 0));
        return FLEET_ERR_SYS;
    }
    if (memchr(*text_out, '\0', len)) {
        ffl_fail(ld, 0, NULL, "not a text file: a fleet file is JSON or XML");
        free(*text_out);
        *text_out = NULL;
        return FLEET_ERR_INVAL;
    }
    return FLEET_OK;
}

/* The groups of a parsed fleet: at least one, each with its device-count (checked here for the line). */
static enum fleet_err
ffl_check_groups(struct ffl_loader *ld, const struct lyd_node *fleet, uint32_t *count)
{
    const struct lyd_node *g;
    uint32_t n = 0;

    LY_LIST_FOR(lyd_child(fleet), g)
    {
        const struct lyd_node *c;
        int has_count = 0;

        LY_LIST_FOR(lyd_child(g), c)
        {
            has_count |= !strcmp(c->schema->name, "device-count");
        }
        if (!has_count) {
            ffl_fail(ld, ffl_locate(ld, n, NULL, 0), lyd_get_value(lyd_child(g)),
                     "device-count is mandatory");
            return FLEET_ERR_INVAL;
        }
        n++;
    }
    if (!n) {
        ffl_fail(ld, 0, NULL, "no group: a fleet needs at least one");
        return FLEET_ERR_INVAL;
    }
    *count = n;
    return FLEET_OK;
}

/* The fleet container among the parsed top-level nodes, or NULL. */
static const struct lyd_node *
ffl_fleet_node(const struct lyd_node *tree)
{
    const struct lyd_node *top;

    LY_LIST_FOR(tree, top)
    {
        if (top->schema && !strcmp(top->schema->name, "fleet") &&
            !strcmp(top->schema->module->name, FLEET_FILE_MODULE)) {
            return top;
        }
    }
    return NULL;
}

enum fleet_err
fleet_file_load(const char *path, const struct fleet_config *base, struct fleet_file *out, char *err,
                size_t err_len)
{
    enum fleet_err rc = FLEET_OK;
    struct ffl_loader ld = {.path = path, .ff = out, .err = err, .err_len = err_len};
    const char *schema_dir = getenv("FLEETSIM_SCHEMA_DIR");
    const char *slash = strrchr(path, '/');
    uint32_t log_opts = ly_log_options(LY_LOSTORE);
    struct ly_ctx *ctx = NULL;
    struct lyd_node *tree = NULL;
    const struct lyd_node *fleet = NULL, *g;
    char *text = NULL;
    size_t plen = strlen(path), first;
    uint32_t count = 0, i = 0;
    LY_ERR lyrc;

    memset(out, 0, sizeof *out);
    if (!schema_dir) {
        schema_dir = FLEETSIM_SCHEMA_DIR;
    }
    ld.dir_len = slash ? (size_t)(slash - path) + 1 : 0;
    if (!(out->path = strdup(path))) {
        rc = FLEET_ERR_NOMEM;
        goto cleanup;
    }
    if ((rc = ffl_read(&ld, &text))) {
        goto cleanup;
    }
    ld.text = text;
    first = ffl_skip_space(text, 0);
    if (!text[first]) {
        ffl_fail(&ld, 0, NULL, "empty: a fleet file holds the fleet of " FLEET_FILE_MODULE ".yang");
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    ld.json = (plen > 5 && !strcmp(path + plen - 5, ".json")) || text[first] == '{';

    /* Validate in a context of its own: the fleet file is no part of any device's model. */
    if (ly_ctx_new(schema_dir, LY_CTX_NO_YANGLIBRARY | LY_CTX_DISABLE_SEARCHDIR_CWD, &ctx)) {
        ffl_fail(&ld, 0, NULL, "cannot use schemas folder %s", schema_dir);
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    if (!ly_ctx_load_module(ctx, FLEET_FILE_MODULE, NULL, NULL)) {
        ffl_fail(&ld, 0, NULL, "cannot load " FLEET_FILE_MODULE ".yang from %s (set FLEETSIM_SCHEMA_DIR)",
                 schema_dir);
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    /* Parse only, then check the groups (to name the line of one without device-count), then validate. */
    lyrc = lyd_parse_data_mem(ctx, text, ld.json ? LYD_JSON : LYD_XML, LYD_PARSE_STRICT | LYD_PARSE_ONLY, 0,
                              &tree);
    if (lyrc == LY_EMEM) {
        rc = FLEET_ERR_NOMEM;
        goto cleanup;
    } else if (lyrc) {
        ffl_fail_ly(&ld, ctx, NULL);
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    if (!(fleet = ffl_fleet_node(tree))) {
        ffl_fail(&ld, 0, NULL, "no fleet in it (%s)",
                 ld.json ? "{\"" FLEET_FILE_MODULE ":fleet\": {\"group\": [...]}}"
                         : "<fleet xmlns=\"urn:fleetsim:fleet\"><group>...</group></fleet>");
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    if ((rc = ffl_check_groups(&ld, fleet, &count))) {
        goto cleanup;
    }
    if (lyd_validate_all(&tree, NULL, LYD_VALIDATE_PRESENT, NULL)) {
        ffl_fail_ly(&ld, ctx, fleet);
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    fleet = ffl_fleet_node(tree); /* validation may have rearranged the top level */

    /* Each group: the command line, then its leaves. */
    if (!(out->groups = calloc(count, sizeof *out->groups))) {
        rc = FLEET_ERR_NOMEM;
        goto cleanup;
    }
    LY_LIST_FOR(lyd_child(fleet), g)
    {
        if ((rc = ffl_group(&ld, i, g, base))) {
            goto cleanup;
        }
        out->group_count = ++i;
    }
    rc = fleet_file_check_overlap(out->groups, out->group_count, path, err, err_len);

cleanup:
    lyd_free_all(tree);
    ly_ctx_destroy(ctx);
    ly_log_options(log_opts);
    free(text);
    return rc;
}

void
fleet_file_free(struct fleet_file *ff)
{
    if (!ff) {
        return;
    }
    for (uint32_t i = 0; i < ff->string_count; i++) {
        free(ff->strings[i]);
    }
    free(ff->strings);
    free(ff->groups);
    free(ff->path);
    memset(ff, 0, sizeof *ff);
}

/* The addresses and ports a group's devices claim on one protocol: a rectangle, bounds included. */
struct ffl_span {
    uint64_t ip_lo, ip_hi;     /* addresses, host byte order */
    uint64_t port_lo, port_hi; /* ports */
};

static struct ffl_span
ffl_span_of(const struct fleet_config *c, uint32_t port)
{
    uint64_t n = c->device_count ? c->device_count : 1;
    struct ffl_span s = {c->ip, c->ip, port, port};

    if (c->ip_per_device) {
        s.ip_hi = (uint64_t)c->ip + n - 1;
    } else {
        s.port_hi = (uint64_t)port + n - 1;
    }
    if (c->ip == 0 &&
        !memcmp(c->ip_fam.prefix, (uint8_t[sizeof c->ip_fam.prefix]){0}, sizeof c->ip_fam.prefix)) {
        /* 0.0.0.0 (or ::) listens on every address of the host. */
        s.ip_lo = 0;
        s.ip_hi = UINT32_MAX;
    }
    return s;
}

/* Whether two spans share an address and port; the first shared one goes to ip and port. */
static int
ffl_spans_meet(struct ffl_span a, struct ffl_span b, uint32_t *ip, uint32_t *port)
{
    uint64_t ip_lo = a.ip_lo > b.ip_lo ? a.ip_lo : b.ip_lo;
    uint64_t ip_hi = a.ip_hi < b.ip_hi ? a.ip_hi : b.ip_hi;
    uint64_t port_lo = a.port_lo > b.port_lo ? a.port_lo : b.port_lo;
    uint64_t port_hi = a.port_hi < b.port_hi ? a.port_hi : b.port_hi;

    if (ip_lo > ip_hi || port_lo > port_hi) {
        return 0;
    }
    *ip = (uint32_t)ip_lo;
    *port = (uint32_t)port_lo;
    return 1;
}

/* " (line N)" for a group whose line is known, else "". */
static const char *
ffl_line_note(uint32_t line, char *buf, size_t len)
{
    if (!line) {
        return "";
    }
    snprintf(buf, len, " (line %" PRIu32 ")", line);
    return buf;
}

enum fleet_err
fleet_file_check_overlap(const struct fleet_group_spec *groups, uint32_t n, const char *path, char *err,
                         size_t err_len)
{
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t j = i + 1; j < n; j++) {
            const struct fleet_config *a = &groups[i].cfg, *b = &groups[j].cfg;
            const char *proto = NULL;
            uint32_t ip = 0, port = 0;
            char text[NETADDR_TEXT_BYTES] = "?";
            char la[32], lb[32];

            if (memcmp(&a->ip_fam, &b->ip_fam, sizeof a->ip_fam)) {
                continue; /* apart; a fleet of mixed families is refused when it starts (fleet_init) */
            }
            if (ffl_spans_meet(ffl_span_of(a, a->starting_port), ffl_span_of(b, b->starting_port), &ip,
                               &port)) {
                proto = "NETCONF (TCP)";
            } else if (a->snmp && b->snmp &&
                       ffl_spans_meet(ffl_span_of(a, a->snmp_starting_port),
                                      ffl_span_of(b, b->snmp_starting_port), &ip, &port)) {
                proto = "SNMP (UDP)";
            }
            if (!proto) {
                continue;
            }
            netaddr_host(&a->ip_fam, ip, text, sizeof text);
            snprintf(err, err_len, "%s: groups \"%s\"%s and \"%s\"%s both claim %s %s:%" PRIu32, path,
                     groups[i].name, ffl_line_note(groups[i].line, la, sizeof la), groups[j].name,
                     ffl_line_note(groups[j].line, lb, sizeof lb), proto, text, port);
            return FLEET_ERR_INVAL;
        }
    }
    return FLEET_OK;
}
