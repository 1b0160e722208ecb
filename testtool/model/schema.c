/*
 * Loading the fleet's YANG modules once, listing what every device
 * advertises, and finding which modules hold constraints that span the
 * data tree (those get whole-module validation after an edit; everything
 * else is validated locally, see validate.c).
 */
#include "schema.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hello.h"
#include "sbuf.h"

/* ietf-netconf features we implement; each matches a capability in the hello. */
static const char *const netconf_features[] = {
    "writable-running", "candidate", "rollback-on-error", "validate", "xpath", "startup", NULL};
static const char *const all_features[] = {"*", NULL};
static const char *const nmda_features[] = {"with-defaults", NULL};

/* Protocol capabilities, before the module ones. */
static const char *const protocol_caps[] = {
    "urn:ietf:params:netconf:base:1.0",
    "urn:ietf:params:netconf:base:1.1",
    "urn:ietf:params:netconf:capability:writable-running:1.0",
    "urn:ietf:params:netconf:capability:candidate:1.0",
    "urn:ietf:params:netconf:capability:rollback-on-error:1.0",
    "urn:ietf:params:netconf:capability:validate:1.0",
    "urn:ietf:params:netconf:capability:validate:1.1",
    "urn:ietf:params:netconf:capability:startup:1.0",
    "urn:ietf:params:netconf:capability:xpath:1.0",
    "urn:ietf:params:netconf:capability:notification:1.0",
    "urn:ietf:params:netconf:capability:interleave:1.0",
    ("urn:ietf:params:netconf:capability:with-defaults:1.0?basic-mode=explicit&also-supported=report-all,"
     "report-all-tagged,trim"),
};

/* The project's device modules: transport identities for netconf-state, and the notifications of the
 * example notification files in notifications/. */
static const char *const project_modules[] = {"fleetsim-netconf-transport", "fleetsim-if-events",
                                              "fleetsim-route-events"};

struct default_module {
    const char *name;            /* module name */
    const char *revision;        /* revision to load, NULL for the one found */
    const char *const *features; /* features to enable */
};

static const struct default_module default_modules[] = {
    {"ietf-netconf", "2011-06-01", netconf_features},   {"ietf-netconf-with-defaults", "2011-06-01", NULL},
    {"ietf-netconf-monitoring", "2010-10-04", NULL},    {"iana-if-type", NULL, NULL},
    {"ietf-interfaces", "2018-02-20", all_features},    {"ietf-system", "2014-08-06", NULL},
    {"ietf-netconf-nmda", "2019-01-07", nmda_features}, {"notifications", "2008-07-14", NULL},
    {"nc-notifications", "2008-07-14", NULL},           {"ietf-netconf-notifications", "2012-02-06", NULL},
};

static void
set_err(char *err, size_t err_len, struct ly_ctx *ctx, const char *what, const char *name)
{
    const char *reason = ctx ? ly_errmsg(ctx) : NULL;

    snprintf(err, err_len, "%s \"%s\"%s%s", what, name, reason ? ": " : "", reason ? reason : "");
}

static int
has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s);
    size_t m = strlen(suffix);

    return n >= m && !strcmp(s + n - m, suffix);
}

static int
cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every .yang file of the folder, implemented with all features, in name order for a stable hello. */
static enum fleet_err
load_dir(struct ly_ctx *ctx, const char *dir, char *err, size_t err_len)
{
    enum fleet_err rc = FLEET_OK;
    DIR *d = NULL;
    struct dirent *e;
    char **names = NULL;
    size_t count = 0;
    char path[4096];

    if (ly_ctx_set_searchdir(ctx, dir)) {
        set_err(err, err_len, ctx, "cannot use schemas folder", dir);
        return FLEET_ERR_INVAL;
    }
    d = opendir(dir);
    if (!d) {
        snprintf(err, err_len, "cannot read schemas folder \"%s\": %m", dir);
        return FLEET_ERR_INVAL;
    }
    while ((e = readdir(d))) {
        char **grown;
        if (e->d_name[0] == '.' || !has_suffix(e->d_name, ".yang")) {
            continue;
        }
        grown = realloc(names, (count + 1) * sizeof *names);
        if (!grown || !(grown[count] = strdup(e->d_name))) {
            names = grown ? grown : names;
            rc = FLEET_ERR_NOMEM;
            goto cleanup;
        }
        names = grown;
        count++;
    }
    qsort(names, count, sizeof *names, cmp_names);
    for (size_t i = 0; i < count; i++) {
        struct lys_module *mod = NULL;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (lys_parse_path(ctx, path, LYS_IN_YANG, &mod) && !mod) {
            set_err(err, err_len, ctx, "schema does not compile:", path);
            rc = FLEET_ERR_INVAL;
            goto cleanup;
        }
        if (mod && lys_set_implemented(mod, (const char **)all_features)) {
            set_err(err, err_len, ctx, "schema does not compile:", path);
            rc = FLEET_ERR_INVAL;
            goto cleanup;
        }
    }

cleanup:
    for (size_t i = 0; i < count; i++) {
        free(names[i]);
    }
    free(names);
    closedir(d);
    return rc;
}

static int
type_spans_tree(const struct lysc_type *type)
{
    if (type->basetype == LY_TYPE_LEAFREF) {
        return 1;
    }
    if (type->basetype == LY_TYPE_INST) {
        return ((const struct lysc_type_instanceid *)type)->require_instance;
    }
    if (type->basetype == LY_TYPE_UNION) {
        const struct lysc_type_union *u = (const struct lysc_type_union *)type;
        LY_ARRAY_COUNT_TYPE i;
        LY_ARRAY_FOR(u->types, i)
        {
            if (type_spans_tree(u->types[i])) {
                return 1;
            }
        }
    }
    return 0;
}

/* A constraint whose truth depends on nodes outside the edited subtree. */
static int
node_spans_tree(const struct lysc_node *node)
{
    if (lysc_node_when(node) || lysc_node_musts(node)) {
        return 1;
    }
    if (node->nodetype & (LYS_LEAF | LYS_LEAFLIST)) {
        return type_spans_tree(((const struct lysc_node_leaf *)node)->type);
    }
    if (node->nodetype == LYS_LIST) {
        return ((const struct lysc_node_list *)node)->uniques != NULL;
    }
    return 0;
}

static const struct lysc_node *
top_ancestor(const struct lysc_node *node)
{
    while (node->parent) {
        node = node->parent;
    }
    return node;
}

struct span_scan {
    struct schema_set *set; /* where the flags go */
};

static LY_ERR
scan_node(struct lysc_node *node, void *data, ly_bool *dfs_continue)
{
    struct span_scan *scan = data;

    if (node->nodetype & (LYS_RPC | LYS_ACTION | LYS_NOTIF) || !(node->flags & LYS_CONFIG_W)) {
        *dfs_continue = 1; /* operations and state never live in a datastore */
        return LY_SUCCESS;
    }
    if (node_spans_tree(node)) {
        const struct lys_module *owner = top_ancestor(node)->module;
        for (size_t i = 0; i < scan->set->module_count; i++) {
            if (scan->set->modules[i].mod == owner) {
                scan->set->modules[i].needs_module_validation = 1;
                scan->set->any_module_validation = 1;
            }
        }
    }
    return LY_SUCCESS;
}

static enum fleet_err
add_cap(struct schema_set *set, char *cap)
{
    char **grown;

    if (!cap) {
        return FLEET_ERR_NOMEM;
    }
    grown = realloc(set->caps, (set->cap_count + 1) * sizeof *grown);
    if (!grown) {
        free(cap);
        return FLEET_ERR_NOMEM;
    }
    set->caps = grown;
    set->caps[set->cap_count++] = cap;
    return FLEET_OK;
}

/* "<ns>?module=<name>&revision=<rev>&features=a,b&deviations=m,n" (RFC 6020 section 5.6.4). */
static char *
module_cap(const struct lys_module *mod)
{
    struct sbuf b = {0};
    uint32_t idx = 0;
    int first = 1;

    sbuf_printf(&b, "%s?module=%s", mod->ns, mod->name);
    if (mod->revision) {
        sbuf_printf(&b, "&revision=%s", mod->revision);
    }
    if (mod->implemented) {
        const struct lysp_feature *f = NULL;
        while ((f = lysp_feature_next(f, mod->parsed, &idx))) {
            if (f->flags & LYS_FENABLED) {
                sbuf_printf(&b, "%s%s", first ? "&features=" : ",", f->name);
                first = 0;
            }
        }
        first = 1;
        LY_ARRAY_COUNT_TYPE u;
        LY_ARRAY_FOR(mod->deviated_by, u)
        {
            sbuf_printf(&b, "%s%s", first ? "&deviations=" : ",", mod->deviated_by[u]->name);
            first = 0;
        }
    }
    return sbuf_take(&b, NULL);
}

static uint32_t
fnv1a(uint32_t h, const char *s)
{
    for (; s && *s; s++) {
        h = (h ^ (uint8_t)*s) * 16777619u;
    }
    return h;
}

enum fleet_err
schema_set_load(struct schema_set *set, const char *schemas_dir, char *err, size_t err_len)
{
    return schema_set_load_with(set, schemas_dir, NULL, NULL, 0, err, err_len);
}

enum fleet_err
schema_set_load_with(struct schema_set *set, const char *schemas_dir, const char *extra_dir,
                     char *const *extra_modules, size_t extra_count, char *err, size_t err_len)
{
    enum fleet_err rc = FLEET_OK;
    const struct lys_module *mod;
    uint32_t idx = 0;
    uint32_t hash = 2166136261u;
    char *cap = NULL;
    struct span_scan scan = {.set = set};
    const char *project_dir;

    memset(set, 0, sizeof *set);
    /* LY_CTX_SET_PRIV_PARSED is not needed; parsed modules stay for get-schema printing. */
    if (ly_ctx_new(NULL, 0, &set->ctx)) {
        snprintf(err, err_len, "cannot create the YANG context");
        return FLEET_ERR_NOMEM;
    }
    ly_ctx_set_searchdir(set->ctx, SCHEMA_YUMA_NMDA_DIR);
    ly_ctx_set_searchdir(set->ctx, SCHEMA_YUMA_IETF_DIR);
    ly_ctx_set_searchdir(set->ctx, SCHEMA_YUMA_DERIVED_DIR);
    ly_ctx_set_searchdir(set->ctx, SCHEMA_YUMA_NCX_DIR);
    for (size_t i = 0; i < sizeof default_modules / sizeof default_modules[0]; i++) {
        const struct default_module *d = &default_modules[i];
        if (!ly_ctx_load_module(set->ctx, d->name, d->revision, (const char **)d->features)) {
            set_err(err, err_len, set->ctx, "cannot load standard module (is libyuma-base installed?)",
                    d->name);
            rc = FLEET_ERR_INVAL;
            goto cleanup;
        }
    }
    /* The project's own modules (transport identities for netconf-state). */
    project_dir = getenv("FLEETSIM_SCHEMA_DIR");
    ly_ctx_set_searchdir(set->ctx, project_dir ? project_dir : FLEETSIM_SCHEMA_DIR);
    for (size_t i = 0; i < sizeof project_modules / sizeof project_modules[0]; i++) {
        if (!ly_ctx_load_module(set->ctx, project_modules[i], NULL, NULL)) {
            set_err(err, err_len, set->ctx, "cannot load the project's module (set FLEETSIM_SCHEMA_DIR)",
                    project_modules[i]);
            rc = FLEET_ERR_INVAL;
            goto cleanup;
        }
    }
    if (schemas_dir && (rc = load_dir(set->ctx, schemas_dir, err, err_len))) {
        goto cleanup;
    }
    /* Modules a profile names, found in its folder or any folder above. */
    if (extra_dir) {
        ly_ctx_set_searchdir(set->ctx, extra_dir);
    }
    for (size_t i = 0; i < extra_count; i++) {
        if (!ly_ctx_load_module(set->ctx, extra_modules[i], NULL, NULL)) {
            set_err(err, err_len, set->ctx,
                    "cannot load the profile's module (put it in --schemas-dir or "
                    "beside the profile)",
                    extra_modules[i]);
            rc = FLEET_ERR_INVAL;
            goto cleanup;
        }
    }

    /* Advertise every module but libyang's own "yang" (its extensions are libyang's, not the device's). */
    while ((mod = ly_ctx_get_module_iter(set->ctx, &idx))) {
        struct schema_module *grown;
        if (!strcmp(mod->name, "yang")) {
            continue;
        }
        grown = realloc(set->modules, (set->module_count + 1) * sizeof *grown);
        if (!grown) {
            rc = FLEET_ERR_NOMEM;
            goto cleanup;
        }
        set->modules = grown;
        set->modules[set->module_count++] =
            (struct schema_module){.mod = mod, .implemented = mod->implemented};
        hash = fnv1a(fnv1a(hash, mod->name), mod->revision);
    }
    set->content_id = hash;

    for (size_t i = 0; i < sizeof protocol_caps / sizeof protocol_caps[0]; i++) {
        if ((rc = add_cap(set, strdup(protocol_caps[i])))) {
            goto cleanup;
        }
    }
    if (asprintf(&cap,
                 "urn:ietf:params:netconf:capability:yang-library:1.0?revision=2019-01-04&module-set-id=%u",
                 (unsigned)hash) < 0 ||
        (rc = add_cap(set, cap))) {
        rc = FLEET_ERR_NOMEM;
        goto cleanup;
    }
    if (asprintf(&cap,
                 "urn:ietf:params:netconf:capability:yang-library:1.1?revision=2019-01-04&content-id=%u",
                 (unsigned)hash) < 0 ||
        (rc = add_cap(set, cap))) {
        rc = FLEET_ERR_NOMEM;
        goto cleanup;
    }
    for (size_t i = 0; i < set->module_count; i++) {
        if ((rc = add_cap(set, module_cap(set->modules[i].mod)))) {
            goto cleanup;
        }
        /* Printed and escaped once here: a mount storm asks every device for every module. */
        {
            char *text = NULL;
            struct sbuf b = {0};
            if (lys_print_mem(&text, set->modules[i].mod, LYS_OUT_YANG, 0)) {
                rc = FLEET_ERR_NOMEM;
                goto cleanup;
            }
            sbuf_add_xml(&b, text);
            free(text);
            if (!(set->modules[i].yang_xml = sbuf_take(&b, NULL))) {
                rc = FLEET_ERR_NOMEM;
                goto cleanup;
            }
        }
        if (set->modules[i].implemented) {
            lysc_module_dfs_full(set->modules[i].mod, scan_node, &scan);
        }
    }

    /* Every session's hello is this text plus its session-id. */
    if (!rc) {
        char *xml = NULL;
        size_t len = 0;
        const char *tail = "</hello>";
        if (hello_build((const char *const *)set->caps, set->cap_count, 0, &xml, &len) ||
            len < strlen(tail) || strcmp(xml + len - strlen(tail), tail)) {
            free(xml);
            rc = FLEET_ERR_NOMEM;
            goto cleanup;
        }
        set->hello_head = xml;
        set->hello_head_len = len - strlen(tail);
        xml[set->hello_head_len] = '\0';
    }

cleanup:
    if (rc) {
        schema_set_free(set);
    }
    return rc;
}

void
schema_set_free(struct schema_set *set)
{
    for (size_t i = 0; i < set->cap_count; i++) {
        free(set->caps[i]);
    }
    free(set->caps);
    for (size_t i = 0; i < set->module_count; i++) {
        free(set->modules[i].yang_xml);
    }
    free(set->modules);
    free(set->hello_head);
    ly_ctx_destroy(set->ctx);
    memset(set, 0, sizeof *set);
}

const struct schema_module *
schema_find(const struct schema_set *set, const char *name, const char *revision)
{
    const struct schema_module *latest = NULL;

    for (size_t i = 0; i < set->module_count; i++) {
        const struct lys_module *mod = set->modules[i].mod;
        if (strcmp(mod->name, name)) {
            continue;
        }
        if (revision && *revision) {
            if (mod->revision && !strcmp(mod->revision, revision)) {
                return &set->modules[i];
            }
            continue;
        }
        if (!latest ||
            (mod->revision && latest->mod->revision && strcmp(mod->revision, latest->mod->revision) > 0)) {
            latest = &set->modules[i];
        }
    }
    return latest;
}

const char *
schema_module_yang_xml(const struct schema_module *m)
{
    return m->yang_xml;
}

enum fleet_err
schema_module_text(const struct schema_module *m, LYS_OUTFORMAT format, char **text)
{
    *text = NULL;

    if (lys_print_mem(text, m->mod, format, 0)) {
        return FLEET_ERR_NOMEM;
    }
    return FLEET_OK;
}

int
schema_module_needs_validation(const struct schema_set *set, const struct lys_module *module)
{
    for (size_t i = 0; i < set->module_count; i++) {
        if (set->modules[i].mod == module) {
            return set->modules[i].needs_module_validation;
        }
    }
    return 0;
}
