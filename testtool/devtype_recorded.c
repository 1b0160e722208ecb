/*
 * Serving a recorded device type (docs/RECORDED_TYPES.md). The folder is a
 * vendor folder plus what the recorder saw: the plan is pointed at yang/,
 * running.xml and snmp.snmprec, and after the usual load the type gets the
 * config false part of state.xml, the recorded hello capabilities and the
 * recorded yang-library data, so that a client sees the device it was
 * recorded from. What fleetsim cannot honour is left out and said once.
 */
#include "devtype_recorded.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hello.h"
#include "log.h"
#include "sbuf.h"

/* Modules whose state fleetsim computes itself for every device: recorded copies would be stale twins. */
static const char *const computed_modules[] = {"ietf-netconf-monitoring", "ietf-yang-library",
                                               "nc-notifications", NULL};

#define CAP_PREFIX     "urn:ietf:params:netconf:capability:"
#define CAP_WD         CAP_PREFIX "with-defaults:1.0"
#define CAP_YANGLIB_10 CAP_PREFIX "yang-library:1.0"
#define CAP_YANGLIB_11 CAP_PREFIX "yang-library:1.1"

static int
is_dir(const char *path)
{
    struct stat st;
    return !stat(path, &st) && S_ISDIR(st.st_mode);
}

static int
is_file(const char *path)
{
    struct stat st;
    return !stat(path, &st) && S_ISREG(st.st_mode);
}

/* "DIR/NAME" into @p buf; 0, or -1 when it does not fit. */
static int
join(char *buf, size_t len, const char *dir, const char *name)
{
    int n = snprintf(buf, len, "%s/%s", dir, name);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* 1 when @p path is a readable folder holding at least one .yang file; else 0 with @p why set. */
static int
has_yang_files(const char *path, const char **why)
{
    DIR *d = opendir(path);
    const struct dirent *e;
    int found = 0;

    if (!d) {
        *why = strerror(errno);
        return 0;
    }
    while (!found && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        found = n > 5 && !strcmp(e->d_name + n - 5, ".yang");
    }
    closedir(d);
    *why = "no .yang file in it";
    return found;
}

enum fleet_err
devtype_recorded_plan(const struct fleet_config *cfg, struct fleet_config *out,
                      struct devtype_recorded_paths *paths, char *err, size_t err_len)
{
    const char *dir = cfg->device_type_dir;
    char manifest[PATH_MAX];
    const char *why = NULL;

    *out = *cfg;
    out->schema_opts.features = out->feature_pins; /* the copy's own pins */
    if (!is_dir(dir)) {
        snprintf(err, err_len, "recorded device type \"%s\": not a folder", dir);
        return FLEET_ERR_INVAL;
    }
    if (cfg->schemas_dir) {
        snprintf(err, err_len,
                 "recorded device type \"%s\": --schemas-dir cannot be combined with --device-type "
                 "(its schemas are its yang/ folder)",
                 dir);
        return FLEET_ERR_INVAL;
    }
    if (join(manifest, sizeof manifest, dir, "manifest.json") ||
        join(paths->yang, sizeof paths->yang, dir, "yang") ||
        join(paths->running, sizeof paths->running, dir, "running.xml") ||
        join(paths->snmprec, sizeof paths->snmprec, dir, "snmp.snmprec")) {
        snprintf(err, err_len, "recorded device type \"%s\": the folder name is too long", dir);
        return FLEET_ERR_INVAL;
    }
    if (!is_file(manifest)) {
        snprintf(err, err_len, "recorded device type \"%s\": no manifest.json (not a recorded folder?)", dir);
        return FLEET_ERR_INVAL;
    }
    if (!is_dir(paths->yang)) {
        snprintf(err, err_len, "recorded device type \"%s\": no yang/ folder", dir);
        return FLEET_ERR_INVAL;
    }
    if (!has_yang_files(paths->yang, &why)) {
        snprintf(err, err_len, "recorded device type \"%s\": yang/ cannot be used: %s", dir, why);
        return FLEET_ERR_INVAL;
    }
    out->schemas_dir = paths->yang;
    if (!cfg->initial_config_file) {
        if (is_file(paths->running)) {
            out->initial_config_file = paths->running;
        } else {
            log_warn("recorded device type \"%s\": no running.xml, devices start with an empty configuration",
                     dir);
        }
    }
    if (!cfg->snmp_recording && is_file(paths->snmprec)) {
        out->snmp_recording = paths->snmprec;
    }
    return FLEET_OK;
}

/* The whole file, NUL-terminated, or NULL (errno tells). */
static char *
slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    struct sbuf b = {0};
    char buf[65536];
    size_t n;

    if (!f) {
        return NULL;
    }
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        sbuf_add(&b, buf, n);
    }
    if (ferror(f)) {
        fclose(f);
        sbuf_free(&b);
        errno = EIO;
        return NULL;
    }
    fclose(f);
    if (!b.buf) {
        sbuf_adds(&b, "");
    }
    return sbuf_take(&b, NULL);
}

/*
 * The data a recorded XML file holds: the children of its <data> wrapper (or the file itself when it has
 * none), parsed in @p ctx with @p parse_opts and @p validate_opts. Returns 0 (an empty wrapper: *tree NULL)
 * or -1 (the message is libyang's).
 */
static int
parse_wrapped(struct ly_ctx *ctx, const char *text, uint32_t parse_opts, uint32_t validate_opts,
              struct lyd_node **tree)
{
    struct lyd_node *outer = NULL;
    char *inner = NULL;
    int rc = -1;

    *tree = NULL;
    if (lyd_parse_data_mem(ctx, text, LYD_XML, LYD_PARSE_OPAQ | LYD_PARSE_ONLY, 0, &outer)) {
        goto cleanup;
    }
    if (!outer || outer->schema || outer->next || strcmp(LYD_NAME(outer), "data")) {
        rc = lyd_parse_data_mem(ctx, text, LYD_XML, parse_opts, validate_opts, tree) ? -1 : 0;
        goto cleanup;
    }
    if (!lyd_child(outer)) {
        rc = 0;
        goto cleanup;
    }
    if (lyd_print_mem(&inner, lyd_child(outer), LYD_XML, LYD_PRINT_WITHSIBLINGS)) {
        goto cleanup;
    }
    rc = lyd_parse_data_mem(ctx, inner, LYD_XML, parse_opts, validate_opts, tree) ? -1 : 0;

cleanup:
    if (rc) {
        lyd_free_all(*tree);
        *tree = NULL;
    }
    lyd_free_all(outer);
    free(inner);
    return rc;
}

/* Nodes of state.xml that do not fit the schemas: how many, and the first one's path. */
struct misfits {
    uint32_t count;  /* nodes dropped */
    char first[512]; /* the first one's path */
};

static void
misfit(struct misfits *m, const struct lyd_node *node)
{
    if (!m->count++ && !lyd_path(node, LYD_PATH_STD, m->first, sizeof m->first)) {
        snprintf(m->first, sizeof m->first, "%s", LYD_NAME(node));
    }
}

/* Drop the opaque (not fitting) nodes below a config false node. */
static void
drop_opaque_below(struct lyd_node *node, struct misfits *m)
{
    struct lyd_node *child, *next;

    LY_LIST_FOR_SAFE(lyd_child_no_keys(node), next, child)
    {
        if (!child->schema) {
            misfit(m, child);
            lyd_free_tree(child);
        } else {
            drop_opaque_below(child, m);
        }
    }
}

/*
 * Whether @p node holds state data: config false itself, or config true with config false nodes below (the
 * config nodes around them, other than list keys, are dropped on the way).
 */
static int
keep_state(struct lyd_node *node, struct misfits *m)
{
    struct lyd_node *child, *next;
    int any = 0;

    if (!node->schema) {
        misfit(m, node);
        return 0;
    }
    if (node->schema->flags & LYS_CONFIG_R) {
        drop_opaque_below(node, m);
        return 1;
    }
    if (!(node->schema->nodetype & (LYS_CONTAINER | LYS_LIST))) {
        return 0;
    }
    LY_LIST_FOR_SAFE(lyd_child_no_keys(node), next, child)
    {
        if (keep_state(child, m)) {
            any = 1;
        } else {
            lyd_free_tree(child);
        }
    }
    return any;
}

static int
computed_module(const struct lyd_node *node)
{
    for (const char *const *p = computed_modules; node->schema && *p; p++) {
        if (!strcmp(node->schema->module->name, *p)) {
            return 1;
        }
    }
    return 0;
}

enum fleet_err
devtype_recorded_state(struct device_type *type, const struct fleet_config *cfg, char *err, size_t err_len)
{
    struct ly_ctx *ctx = type->schemas.ctx;
    struct lyd_node *tree = NULL, *node, *next;
    struct misfits m = {0};
    char path[PATH_MAX];
    char *text = NULL;
    enum fleet_err rc = FLEET_OK;

    if (!(type->recorded_dir = strdup(cfg->device_type_dir))) {
        return FLEET_ERR_NOMEM;
    }
    if (join(path, sizeof path, type->recorded_dir, "state.xml") || !is_file(path)) {
        return FLEET_OK; /* a recording without state: the devices have fleetsim's own only */
    }
    if (!(text = slurp(path))) {
        snprintf(err, err_len, "cannot read \"%s\": %s", path, strerror(errno));
        return FLEET_ERR_INVAL;
    }
    /* Parsed, not validated: what does not fit becomes opaque and is dropped below, one warning for all. */
    if (parse_wrapped(ctx, text, LYD_PARSE_ONLY | LYD_PARSE_OPAQ, 0, &tree)) {
        snprintf(err, err_len, "\"%s\" is not XML data: %s", path, ly_errmsg(ctx) ? ly_errmsg(ctx) : "?");
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    LY_LIST_FOR_SAFE(tree, next, node)
    {
        if (computed_module(node) || !keep_state(node, &m)) {
            if (node == tree) {
                tree = next;
            }
            lyd_free_tree(node);
        }
    }
    if (m.count && cfg->schema_opts.strict) {
        snprintf(err, err_len, "\"%s\": %u node%s do not fit the schemas (first: %s)", path,
                 (unsigned)m.count, m.count > 1 ? "s" : "", m.first);
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    if (m.count) {
        log_warn("\"%s\": %u node%s do not fit the schemas and are not served (first: %s)", path,
                 (unsigned)m.count, m.count > 1 ? "s" : "", m.first);
    }
    if (tree && lyd_merge_siblings(&type->state_tree, tree, LYD_MERGE_DESTRUCT)) {
        snprintf(err, err_len, "cannot merge \"%s\" into the state data: %s", path, ly_errmsg(ctx));
        rc = FLEET_ERR_INVAL;
    }
    tree = NULL;

cleanup:
    lyd_free_all(tree);
    free(text);
    return rc;
}

/* The length of @p cap's URI before any '?'. */
static size_t
cap_base_len(const char *cap)
{
    const char *q = strchr(cap, '?');
    return q ? (size_t)(q - cap) : strlen(cap);
}

/* The value of query parameter @p key ("module", "revision") of a capability, copied into @p buf, or NULL. */
static const char *
cap_param(const char *cap, const char *key, char *buf, size_t len)
{
    const char *p = strchr(cap, '?');
    size_t klen = strlen(key);

    while (p) {
        p++;
        if (!strncmp(p, key, klen) && p[klen] == '=') {
            const char *v = p + klen + 1;
            size_t n = strcspn(v, "&");
            snprintf(buf, len, "%.*s", (int)n, v);
            return buf;
        }
        p = strchr(p, '&');
    }
    return NULL;
}

/* fleetsim's own capability with the same URI as @p cap (up to '?'), or NULL. */
static const char *
own_cap(const struct schema_set *set, const char *cap)
{
    size_t n = cap_base_len(cap);

    for (size_t i = 0; i < set->cap_count; i++) {
        if (cap_base_len(set->caps[i]) == n && !strncmp(set->caps[i], cap, n)) {
            return set->caps[i];
        }
    }
    return NULL;
}

/* The modes of a with-defaults capability, its basic-mode first, then its also-supported ones sorted and
 * ','-separated, into @p buf: two capabilities that say the same modes in another order compare equal. */
static void
wd_modes(const char *cap, char *buf, size_t len)
{
    char basic[64] = "", also[256] = "";
    const char *modes[8];
    size_t n = 0, used;

    cap_param(cap, "basic-mode", basic, sizeof basic);
    cap_param(cap, "also-supported", also, sizeof also);
    for (char *tok = strtok(also, ","); tok && n < sizeof modes / sizeof modes[0]; tok = strtok(NULL, ",")) {
        size_t at = n++;
        while (at && strcmp(modes[at - 1], tok) > 0) {
            modes[at] = modes[at - 1];
            at--;
        }
        modes[at] = tok;
    }
    used = (size_t)snprintf(buf, len, "%s;", basic);
    for (size_t i = 0; i < n && used < len; i++) {
        used += (size_t)snprintf(buf + used, len - used, "%s,", modes[i]);
    }
}

/* Whether with-defaults capabilities @p a and @p b say the same modes. */
static int
wd_same(const char *a, const char *b)
{
    char ma[512], mb[512];

    wd_modes(a, ma, sizeof ma);
    wd_modes(b, mb, sizeof mb);
    return !strcmp(ma, mb);
}

/*
 * What to advertise for recorded capability @p cap: itself, fleetsim's own version of it (with-defaults
 * when the recorded one says other modes than fleetsim's; yang-library when the recorded data is not
 * served), or NULL when fleetsim cannot honour it (a protocol capability it lacks, a module its context
 * does not hold, another URI). A module the context implements in another revision is honoured through
 * its text_only entry (schema.h): advertised and served by get-schema as recorded.
 */
static const char *
honoured(const struct schema_set *set, const char *cap, int recorded_yanglib)
{
    char name[256], rev[64];
    const char *own = own_cap(set, cap);

    if (!strcmp(cap, HELLO_CAP_BASE10) || !strcmp(cap, HELLO_CAP_BASE11)) {
        return cap;
    }
    if (!strncmp(cap, CAP_PREFIX, strlen(CAP_PREFIX))) {
        if (!own) {
            return NULL;
        }
        if (!strncmp(cap, CAP_WD, strlen(CAP_WD))) {
            return wd_same(cap, own) ? cap : own; /* the device's own spelling of fleetsim's modes */
        }
        if ((!recorded_yanglib && (!strncmp(cap, CAP_YANGLIB_10, strlen(CAP_YANGLIB_10)) ||
                                   !strncmp(cap, CAP_YANGLIB_11, strlen(CAP_YANGLIB_11))))) {
            return own;
        }
        return cap;
    }
    if (cap_param(cap, "module", name, sizeof name)) {
        return schema_find(set, name, cap_param(cap, "revision", rev, sizeof rev)) ? cap : NULL;
    }
    return NULL;
}

static int
push(char ***list, size_t *count, const char *cap)
{
    char **grown = realloc(*list, (*count + 1) * sizeof *grown);
    if (!grown) {
        return -1;
    }
    *list = grown;
    if (!(grown[*count] = strdup(cap))) {
        return -1;
    }
    (*count)++;
    return 0;
}

static int
listed(char *const *list, size_t count, const char *uri)
{
    size_t n = strlen(uri);
    for (size_t i = 0; i < count; i++) {
        if (!strncmp(list[i], uri, n) && (list[i][n] == '\0' || list[i][n] == '?')) {
            return 1;
        }
    }
    return 0;
}

/* The hello: the recorded capabilities in order, less what cannot be honoured, plus base:1.1 and
 * with-defaults. */
static enum fleet_err
load_hello(struct device_type *type, int recorded_yanglib, char *err, size_t err_len)
{
    struct schema_set *set = &type->schemas;
    struct hello_info info = {0};
    struct sbuf dropped = {0};
    char path[PATH_MAX], msg[256];
    char **caps = NULL;
    size_t count = 0, ndropped = 0;
    char *text = NULL;
    enum fleet_err rc = FLEET_OK;

    if (join(path, sizeof path, type->recorded_dir, "hello.xml") || !(text = slurp(path))) {
        log_warn("recorded device type \"%s\": no readable hello.xml, devices send fleetsim's own hello",
                 type->recorded_dir);
        return FLEET_OK;
    }
    if (hello_parse(set->ctx, text, &info, msg, sizeof msg)) {
        snprintf(err, err_len, "\"%s\" is not a hello: %s", path, msg);
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    for (size_t i = 0; i < info.cap_count; i++) {
        const char *cap = honoured(set, info.caps[i], recorded_yanglib);
        if (!cap) {
            sbuf_printf(&dropped, "%s%s", ndropped++ ? " " : "", info.caps[i]);
            continue;
        }
        if (!listed(caps, count, cap) && push(&caps, &count, cap)) {
            rc = FLEET_ERR_NOMEM;
            goto cleanup;
        }
        /* base:1.1 right after base:1.0 when the recording lacks it: fleetsim speaks both framings. */
        if (!strcmp(cap, HELLO_CAP_BASE10) && !hello_has_cap(&info, HELLO_CAP_BASE11) &&
            push(&caps, &count, HELLO_CAP_BASE11)) {
            rc = FLEET_ERR_NOMEM;
            goto cleanup;
        }
    }
    if (!listed(caps, count, HELLO_CAP_BASE11) && push(&caps, &count, HELLO_CAP_BASE11)) {
        rc = FLEET_ERR_NOMEM;
        goto cleanup;
    }
    if (!listed(caps, count, CAP_WD) && own_cap(set, CAP_WD) && push(&caps, &count, own_cap(set, CAP_WD))) {
        rc = FLEET_ERR_NOMEM;
        goto cleanup;
    }
    if (ndropped) {
        log_info("recorded device type \"%s\": %zu recorded capabilit%s not served (fleetsim cannot honour "
                 "them): %s",
                 type->recorded_dir, ndropped, ndropped > 1 ? "ies" : "y", dropped.buf);
    }
    if ((rc = schema_set_replace_caps(set, caps, count))) {
        goto cleanup;
    }
    caps = NULL;
    count = 0;

cleanup:
    for (size_t i = 0; i < count; i++) {
        free(caps[i]);
    }
    free(caps);
    if (rc == FLEET_ERR_NOMEM) {
        snprintf(err, err_len, "out of memory reading \"%s\"", path);
    }
    sbuf_free(&dropped);
    hello_info_free(&info);
    free(text);
    return rc;
}

/* The recorded yang-library data in place of the generated one when it is valid. Returns 1 when it is used.
 */
static int
load_yanglib(struct device_type *type)
{
    struct ly_ctx *ctx = type->schemas.ctx;
    struct lyd_node *tree = NULL;
    char path[PATH_MAX];
    char *text = NULL;
    int used = 0;

    if (join(path, sizeof path, type->recorded_dir, "yang-library.xml") || !(text = slurp(path))) {
        log_warn("recorded device type \"%s\": no readable yang-library.xml, serving fleetsim's own",
                 type->recorded_dir);
        return 0;
    }
    /* Parsed strictly (every node and value fits), validated below only in RFC 8525's form: RFC 7895's
     * (modules-state alone, as yuma123's netconfd serves it) cannot pass revision 2019-01-04's validation,
     * whose yang-library container has a mandatory content-id the recording does not hold. */
    if (parse_wrapped(ctx, text, LYD_PARSE_STRICT | LYD_PARSE_ONLY, 0, &tree) || !tree) {
        log_warn("\"%s\" is not valid yang-library data (%s): serving fleetsim's own", path,
                 ly_errmsg(ctx) ? ly_errmsg(ctx) : "no data");
    } else {
        const struct lyd_node *n;
        int rfc8525 = 0;
        LY_LIST_FOR(tree, n)
        {
            if (strcmp(n->schema->module->name, "ietf-yang-library")) {
                log_warn("\"%s\" holds %s data beside the yang-library: serving fleetsim's own", path,
                         n->schema->module->name);
                goto cleanup;
            }
            rfc8525 |= !strcmp(LYD_NAME(n), "yang-library");
        }
        if (rfc8525 && lyd_validate_all(&tree, NULL, LYD_VALIDATE_PRESENT, NULL)) {
            log_warn("\"%s\" is not valid yang-library data (%s): serving fleetsim's own", path,
                     ly_errmsg(ctx) ? ly_errmsg(ctx) : "?");
            goto cleanup;
        }
        lyd_free_all(type->yanglib_tree);
        type->yanglib_tree = tree;
        tree = NULL;
        used = 1;
    }

cleanup:
    lyd_free_all(tree);
    free(text);
    return used;
}

enum fleet_err
devtype_recorded_finish(struct device_type *type, const struct fleet_config *cfg, char *err, size_t err_len)
{
    (void)cfg;
    return load_hello(type, load_yanglib(type), err, err_len);
}
