/*
 * Loading the fleet's YANG modules once, listing what every device
 * advertises, and finding which modules hold constraints that span the
 * data tree (those get whole-module validation after an edit; everything
 * else is validated locally, see validate.c).
 */
#include "schema.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hello.h"
#include "log.h"
#include "sbuf.h"
#include "yang_dir.h"

/* ietf-netconf features we implement; each matches a capability in the hello. */
static const char *const netconf_features[] = {
    "writable-running", "candidate", "rollback-on-error", "validate", "xpath", "startup", NULL};
static const char *const all_features[] = {"*", NULL};
static const char *const nmda_features[] = {"with-defaults", NULL};
/* RFC 8639 dynamic subscriptions over NETCONF: XML, replay of the NETCONF stream, subtree and XPath filters.
 * Not "configured": configured subscriptions need a transport that has no RFC yet. */
static const char *const sn_features[] = {"encode-xml", "replay", "subtree", "xpath", NULL};
/* RFC 8641: periodic is always there; on-change is a feature. */
static const char *const yp_features[] = {"on-change", NULL};

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

/* The project's device modules: transport identities for netconf-state, the notifications of the
 * example notification files in notifications/, and the event id every event's notification carries. */
static const char *const project_modules[] = {"fleetsim-netconf-transport", "fleetsim-if-events",
                                              "fleetsim-route-events", "fleetsim-events"};

/* Deviations of the YANG-Push modules, loaded with our copy of them
 * (schemas/fleetsim-yang-push-deviations.yang says why). */
static const char yang_push_deviations[] = "fleetsim-yang-push-deviations";

struct default_module {
    const char *name;            /* module name */
    const char *revision;        /* revision to load, NULL for the one found */
    const char *const *features; /* features to enable */
};

static const struct default_module default_modules[] = {
    {"ietf-netconf", "2011-06-01", netconf_features},
    {"ietf-netconf-with-defaults", "2011-06-01", NULL},
    {"ietf-netconf-monitoring", "2010-10-04", NULL},
    {"iana-if-type", NULL, NULL},
    {"ietf-interfaces", "2018-02-20", all_features},
    {"ietf-system", "2014-08-06", NULL},
    {"ietf-netconf-nmda", "2019-01-07", nmda_features},
    {"notifications", "2008-07-14", NULL},
    {"nc-notifications", "2008-07-14", NULL},
    {"ietf-netconf-notifications", "2012-02-06", NULL},
    /* implemented, not only imported: yang-push's datastore leaf is an identityref to its identities */
    {"ietf-datastores", "2018-02-14", NULL},
    /* YANG-Push; their other imports (ietf-restconf, ietf-yang-patch, ietf-network-instance) are only
     * imported. Found in schemas/ietf/: no Debian package ships them. */
    {"ietf-subscribed-notifications", "2019-09-09", sn_features},
    {"ietf-yang-push", "2019-09-09", yp_features},
};

static void
set_err(char *err, size_t err_len, struct ly_ctx *ctx, const char *what, const char *name)
{
    const char *reason = ctx ? ly_errmsg(ctx) : NULL;

    snprintf(err, err_len, "%s \"%s\"%s%s", what, name, reason ? ": " : "", reason ? reason : "");
}

struct load_state {
    struct ydir dir;         /* the user's folder; zeroed without one */
    unsigned char *skipped;  /* per file of dir: 1 once it is left out */
    size_t skipped_count;    /* files marked in skipped */
    unsigned char *shadowed; /* per file of dir: 1 when left out because the context implements another
                                revision of its module, and served as text */
    const struct schema_options *opts; /* feature pins and strictness, never NULL */
};

/* Imports come from the user's folder first, from memory (libyang's searchdirs after). Submodules are left
 * to the searchdir (the folder is the first one): libyang 2.1.30 crashes in ly_ctx_compile() on submodules
 * handed over by this callback. */
static LY_ERR
import_from_dir(const char *mod_name, const char *mod_rev, const char *submod_name, const char *submod_rev,
                void *user_data, LYS_INFORMAT *format, const char **module_data,
                ly_module_imp_data_free_clb *free_module_data)
{
    struct load_state *st = user_data;
    long i = submod_name ? -1 : ydir_find(&st->dir, mod_name, mod_rev, 0);

    (void)submod_rev;
    if (i < 0 || st->skipped[i]) {
        return LY_ENOTFOUND;
    }
    *format = LYS_IN_YANG;
    *module_data = st->dir.files[i].text;
    *free_module_data = NULL;
    return LY_SUCCESS;
}

/* The features --features pins for @p name ("MODULE:F1,F2"), as a NULL-terminated array in one block. */
static char **
pinned_features(const struct schema_options *opts, const char *name, int *pinned)
{
    size_t len = strlen(name);

    *pinned = 0;
    for (size_t i = 0; i < opts->feature_count; i++) {
        const char *pin = opts->features[i];
        const char *list = pin + len + 1;
        size_t n = 1;
        char **out;
        char *copy;
        if (strncmp(pin, name, len) || pin[len] != ':') {
            continue;
        }
        *pinned = 1;
        for (const char *p = list; *p; p++) {
            n += *p == ',';
        }
        if (!(out = malloc((n + 1) * sizeof *out + strlen(list) + 1))) {
            return NULL;
        }
        copy = (char *)(out + n + 1);
        strcpy(copy, list);
        n = 0;
        for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
            out[n++] = tok;
        }
        out[n] = NULL;
        return out;
    }
    return NULL;
}

/* The user's module that libyang's last error is about: a "/name:" in its path or message, or a quoted
 * "name" / "name@rev". -1 when it names none of them. */
static long
blame_module(const struct load_state *st, const struct ly_ctx *ctx)
{
    for (const struct ly_err_item *e = ly_err_first(ctx); e; e = e->next) {
        const char *texts[2] = {e->path, e->msg};
        if (e->level != LY_LLERR) {
            continue;
        }
        for (int t = 0; t < 2; t++) {
            for (const char *p = texts[t]; p && *p; p++) {
                char name[256];
                size_t n = 0;
                long i;
                if (*p != '/' && *p != '"') {
                    continue;
                }
                while (n < sizeof name - 1 && (isalnum((unsigned char)p[1 + n]) || strchr("_-.", p[1 + n]))) {
                    name[n] = p[1 + n];
                    n++;
                }
                name[n] = '\0';
                if (n && p[1 + n] && strchr(*p == '/' ? ":" : "\"@", p[1 + n]) &&
                    (i = ydir_find(&st->dir, name, NULL, 0)) >= 0 && !st->skipped[i]) {
                    return i;
                }
            }
        }
    }
    return -1;
}

/* libyang's first error message (the cause; later ones say what failed because of it), with the line number
 * when it gives one. */
static void
ly_reason(const struct ly_ctx *ctx, char *buf, size_t len)
{
    const struct ly_err_item *e = ly_err_first(ctx);

    while (e && e->level != LY_LLERR) {
        e = e->next; /* warnings are stored too */
    }
    if (!e) {
        snprintf(buf, len, "unknown libyang error");
    } else if (e->path && !strncmp(e->path, "Line number ", 12)) {
        snprintf(buf, len, "line %d: %s", atoi(e->path + 12), e->msg ? e->msg : "");
    } else {
        snprintf(buf, len, "%s%s%s", e->msg ? e->msg : "", e->path ? " (" : "", e->path ? e->path : "");
        if (e->path) {
            strncat(buf, ")", len - strlen(buf) - 1);
        }
    }
}

/* The context as far as it builds: the user's folder (newest revision of each module, imports
 * implemented), then the defaults it does not provide, the project's and the profile's modules, all
 * compiled once. On a module of the folder that does not parse or compile, *bad names it. */
static enum fleet_err
build_ctx(struct schema_set *set, struct load_state *st, const char *extra_dir, char *const *extra_modules,
          size_t extra_count, long *bad, char *why, size_t why_len, char *err, size_t err_len)
{
    const char *project_dir = getenv("FLEETSIM_SCHEMA_DIR");
    char ietf_dir[4096];

    *bad = -1;
    /* SET_PRIV_PARSED: each compiled node points at its parsed node, so that a leaf restricting a typedef
     * in its own type statement can be traced to the typedef (movers.c). */
    if (ly_ctx_new(NULL, LY_CTX_EXPLICIT_COMPILE | LY_CTX_SET_PRIV_PARSED, &set->ctx)) {
        snprintf(err, err_len, "cannot create the YANG context");
        return FLEET_ERR_NOMEM;
    }
    if (st->dir.path) {
        ly_ctx_set_module_imp_clb(set->ctx, import_from_dir, st);
        ly_ctx_set_searchdir(set->ctx, st->dir.path);
        ly_ctx_set_options(set->ctx, LY_CTX_REF_IMPLEMENTED | LY_CTX_ENABLE_IMP_FEATURES);
    }
    ly_ctx_set_searchdir(set->ctx, SCHEMA_YUMA_NMDA_DIR);
    ly_ctx_set_searchdir(set->ctx, SCHEMA_YUMA_IETF_DIR);
    ly_ctx_set_searchdir(set->ctx, SCHEMA_YUMA_DERIVED_DIR);
    ly_ctx_set_searchdir(set->ctx, SCHEMA_YUMA_NCX_DIR);
    /* The IETF modules no Debian package ships, last: a folder's or yuma's revision comes first. */
    if (snprintf(ietf_dir, sizeof ietf_dir, "%s/ietf", project_dir ? project_dir : FLEETSIM_SCHEMA_DIR) >=
        (int)sizeof ietf_dir) {
        snprintf(err, err_len, "FLEETSIM_SCHEMA_DIR is too long");
        return FLEET_ERR_INVAL;
    }
    ly_ctx_set_searchdir(set->ctx, ietf_dir);
    for (size_t i = 0; i < st->dir.file_count; i++) {
        const struct ydir_file *f = &st->dir.files[i];
        struct ly_in *in = NULL;
        char **pins;
        int pinned;
        LY_ERR lrc;
        if (!f->newest || st->skipped[i]) {
            continue;
        }
        pins = pinned_features(st->opts, f->name, &pinned);
        if (pinned && !pins) {
            return FLEET_ERR_NOMEM;
        }
        if (ly_in_new_memory(f->text, &in)) {
            free(pins);
            return FLEET_ERR_NOMEM;
        }
        lrc = lys_parse(set->ctx, in, LYS_IN_YANG, pinned ? (const char **)pins : (const char **)all_features,
                        NULL);
        ly_in_free(in, 0);
        free(pins);
        if (lrc) {
            ly_reason(set->ctx, why, why_len);
            *bad = (long)i;
            return FLEET_ERR_INVAL;
        }
    }
    ly_ctx_unset_options(set->ctx, LY_CTX_REF_IMPLEMENTED | LY_CTX_ENABLE_IMP_FEATURES);
    for (size_t i = 0; i < sizeof default_modules / sizeof default_modules[0]; i++) {
        const struct default_module *d = &default_modules[i];
        const struct lys_module *have = ly_ctx_get_module_implemented(set->ctx, d->name);
        long mine = have ? ydir_find(&st->dir, d->name, NULL, 0) : -1;
        if (mine >= 0) {
            /* The user's folder provides it: theirs wins, whatever its revision; fleetsim's data follows the
             * revision (std_revisions.c). */
            continue;
        }
        if (have) {
            /* implemented as an import of the folder's: with our features, not all of them */
            if (lys_set_implemented((struct lys_module *)have, (const char **)d->features)) {
                set_err(err, err_len, set->ctx, "cannot set the features of standard module", d->name);
                return FLEET_ERR_INVAL;
            }
            continue;
        }
        if (!ly_ctx_load_module(set->ctx, d->name, d->revision, (const char **)d->features)) {
            set_err(err, err_len, set->ctx,
                    "cannot load standard module (is libyuma-base installed, FLEETSIM_SCHEMA_DIR right?)",
                    d->name);
            return FLEET_ERR_INVAL;
        }
    }
    /* The project's own modules (transport identities for netconf-state). */
    ly_ctx_set_searchdir(set->ctx, project_dir ? project_dir : FLEETSIM_SCHEMA_DIR);
    for (size_t i = 0; i < sizeof project_modules / sizeof project_modules[0]; i++) {
        if (!ly_ctx_load_module(set->ctx, project_modules[i], NULL, NULL)) {
            set_err(err, err_len, set->ctx, "cannot load the project's module (set FLEETSIM_SCHEMA_DIR)",
                    project_modules[i]);
            return FLEET_ERR_INVAL;
        }
    }
    /* ietf-subscribed-notifications makes ietf-network-instance implemented (the deviations' module says
     * why); unless a folder ships it as the vendor deviates it, its leaf in every interface is deviated. */
    if (ydir_find(&st->dir, "ietf-network-instance", NULL, 0) < 0 &&
        !ly_ctx_load_module(set->ctx, yang_push_deviations, NULL, NULL)) {
        set_err(err, err_len, set->ctx, "cannot load the project's module (set FLEETSIM_SCHEMA_DIR)",
                yang_push_deviations);
        return FLEET_ERR_INVAL;
    }
    /* Modules a profile names, found in its folder or any folder above. */
    if (extra_dir) {
        ly_ctx_set_searchdir(set->ctx, extra_dir);
    }
    for (size_t i = 0; i < extra_count; i++) {
        if (!ly_ctx_load_module(set->ctx, extra_modules[i], NULL, NULL)) {
            set_err(err, err_len, set->ctx,
                    "cannot load the profile's module (put it in --schemas-dir or beside the profile)",
                    extra_modules[i]);
            return FLEET_ERR_INVAL;
        }
    }
    if (ly_ctx_compile(set->ctx)) {
        ly_reason(set->ctx, why, why_len);
        if ((*bad = blame_module(st, set->ctx)) < 0) {
            snprintf(err, err_len, "schemas do not compile: %s", why);
        }
        return FLEET_ERR_INVAL;
    }
    ly_ctx_set_module_imp_clb(set->ctx, NULL, NULL);
    return FLEET_OK;
}

/* Leave out every module that imports @p name, or includes a submodule that does, all the way up (the
 * folder is a searchdir, so libyang would still find a skipped module for them). */
static void
skip_importers(struct load_state *st, const char *name)
{
    for (size_t i = 0; i < st->dir.file_count; i++) {
        struct ydir_file *f = &st->dir.files[i];
        if (st->skipped[i] || !ydir_depends_on(&st->dir, i, name)) {
            continue;
        }
        st->skipped[i] = 1; /* a submodule too, so that the cascade ends */
        if (f->newest) {
            log_warn("schemas: skipped %s/%s: it imports \"%s\", which was skipped", st->dir.path,
                     f->file_name, name);
            st->skipped_count++;
        }
        skip_importers(st, f->name);
    }
}

/* Whether folder module @p i failed only because @p ctx already implements another revision of it. */
static int
shadowed_by_context(const struct load_state *st, const struct ly_ctx *ctx, long i)
{
    const struct ydir_file *f = &st->dir.files[i];
    const struct lys_module *have = f->is_submodule ? NULL : ly_ctx_get_module_implemented(ctx, f->name);

    if (!have) {
        return 0;
    }
    if (!have->revision || !f->revision) {
        return have->revision != f->revision;
    }
    return strcmp(have->revision, f->revision) != 0;
}

/* Build until every module left compiles: each round leaves out the folder's module libyang names (and,
 * next round, whatever imports it, which then no longer parses). */
static enum fleet_err
load_all(struct schema_set *set, struct load_state *st, const char *extra_dir, char *const *extra_modules,
         size_t extra_count, char *err, size_t err_len)
{
    enum fleet_err rc;
    char why[1024];
    long bad;

    for (;;) {
        /* Keep every message of this round: the first one is the cause, the last one only what failed. */
        uint32_t log_opts = ly_log_options(LY_LOSTORE);
        rc = build_ctx(set, st, extra_dir, extra_modules, extra_count, &bad, why, sizeof why, err, err_len);
        if (set->ctx) {
            ly_err_clean(set->ctx, NULL);
        }
        ly_log_options(log_opts);
        if (!rc || bad < 0) {
            return rc;
        }
        if (shadowed_by_context(st, set->ctx, bad)) {
            /* Not a failure of the device's: its revision is advertised and served as text. What imports it
             * loads against the implemented revision, so nothing else is left out. */
            ly_ctx_destroy(set->ctx);
            set->ctx = NULL;
            st->skipped[bad] = 1;
            st->shadowed[bad] = 1;
            continue;
        }
        ly_ctx_destroy(set->ctx);
        set->ctx = NULL;
        if (st->opts->strict) {
            snprintf(err, err_len, "schema \"%s/%s\" does not load (--schemas-strict): %s", st->dir.path,
                     st->dir.files[bad].file_name, why);
            return FLEET_ERR_INVAL;
        }
        log_warn("schemas: skipped %s/%s: %s", st->dir.path, st->dir.files[bad].file_name, why);
        st->skipped[bad] = 1;
        st->skipped_count++;
        skip_importers(st, st->dir.files[bad].name);
    }
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

/* A text_only entry's capability: its own revision, and no features (they are the implemented one's). */
static char *
text_only_cap(const struct schema_module *m)
{
    char *cap = NULL;

    if (asprintf(&cap, "%s?module=%s%s%s", m->mod->ns, m->name, m->revision ? "&revision=" : "",
                 m->revision ? m->revision : "") < 0) {
        return NULL;
    }
    return cap;
}

static uint32_t
fnv1a(uint32_t h, const char *s)
{
    for (; s && *s; s++) {
        h = (h ^ (uint8_t)*s) * 16777619u;
    }
    return h;
}

/* The text get-schema returns: the folder's file, else the file libyang read, else libyang's print. */
static char *
source_text(const struct load_state *st, const char *name, const char *revision, int is_submodule,
            const char *filepath, const struct lys_module *mod, const struct lysp_submodule *sub, size_t *len)
{
    long i = st->dir.path ? ydir_find(&st->dir, name, revision, is_submodule) : -1;
    char *text = NULL;
    struct sbuf b = {0};

    if (i >= 0 && (revision || !st->dir.files[i].revision)) {
        sbuf_add_xml(&b, st->dir.files[i].text);
        return sbuf_take(&b, len);
    }
    if (filepath) {
        FILE *f = fopen(filepath, "rb");
        if (f) {
            char buf[8192];
            size_t n;
            struct sbuf raw = {0};
            while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
                sbuf_add(&raw, buf, n);
            }
            fclose(f);
            text = sbuf_take(&raw, NULL);
        }
    }
    if (!text) {
        struct ly_out *out = NULL;
        if (ly_out_new_memory(&text, 0, &out)) {
            return NULL;
        }
        if (sub ? lys_print_submodule(out, sub, LYS_OUT_YANG, 0, 0)
                : lys_print_module(out, mod, LYS_OUT_YANG, 0, 0)) {
            ly_out_free(out, NULL, 1);
            return NULL;
        }
        ly_out_free(out, NULL, 0);
    }
    if (!text) {
        return NULL;
    }
    sbuf_add_xml(&b, text);
    free(text);
    return sbuf_take(&b, len);
}

/* Every session's hello is the text this prints plus its session-id. */
static enum fleet_err
build_hello_head(struct schema_set *set)
{
    char *xml = NULL;
    size_t len = 0;
    const char *tail = "</hello>";

    if (hello_build((const char *const *)set->caps, set->cap_count, 0, &xml, &len) || len < strlen(tail) ||
        strcmp(xml + len - strlen(tail), tail)) {
        free(xml);
        return FLEET_ERR_NOMEM;
    }
    free(set->hello_head);
    set->hello_head = xml;
    set->hello_head_len = len - strlen(tail);
    xml[set->hello_head_len] = '\0';
    return FLEET_OK;
}

enum fleet_err
schema_set_replace_caps(struct schema_set *set, char **caps, size_t cap_count)
{
    char **old = set->caps;
    size_t old_count = set->cap_count;
    char *old_head = set->hello_head;
    size_t old_head_len = set->hello_head_len;

    set->caps = caps;
    set->cap_count = cap_count;
    set->hello_head = NULL;
    if (build_hello_head(set)) {
        set->caps = old;
        set->cap_count = old_count;
        set->hello_head = old_head;
        set->hello_head_len = old_head_len;
        return FLEET_ERR_NOMEM;
    }
    for (size_t i = 0; i < old_count; i++) {
        free(old[i]);
    }
    free(old);
    free(old_head);
    return FLEET_OK;
}

/* Whether @p m is newer than @p latest by find_in()'s rule (an entry without revision is never replaced; a
 * text_only entry, the device's own revision, wins over the context's). */
static int
newer(const struct schema_module *m, const struct schema_module *latest)
{
    if (m->text_only != latest->text_only) {
        return m->text_only;
    }
    return m->revision && latest->revision && strcmp(m->revision, latest->revision) > 0;
}

/* The slot of @p name: its own, or the free one where it would go. */
static struct schema_index_slot *
index_slot(const struct schema_index *ix, const char *name, uint32_t hash)
{
    size_t i = hash & ix->mask;

    while (ix->slots[i].name && (ix->slots[i].hash != hash || strcmp(ix->slots[i].name, name))) {
        i = (i + 1) & ix->mask;
    }
    return &ix->slots[i];
}

/* The index of a list, once its entries no longer move; chains the entries of one name. */
static enum fleet_err
index_build(struct schema_index *ix, struct schema_module *list, size_t count)
{
    size_t slots = 8;

    if (count >= SCHEMA_NONE / 2) {
        return FLEET_ERR_NOMEM;
    }
    while (slots < 2 * count) {
        slots *= 2;
    }
    if (!(ix->slots = calloc(slots, sizeof *ix->slots))) {
        return FLEET_ERR_NOMEM;
    }
    ix->mask = slots - 1;
    for (size_t i = 0; i < count; i++) {
        uint32_t hash = fnv1a(2166136261u, list[i].name);
        struct schema_index_slot *slot = index_slot(ix, list[i].name, hash);
        list[i].next_same_name = SCHEMA_NONE;
        if (!slot->name) {
            *slot = (struct schema_index_slot){
                .name = list[i].name, .hash = hash, .first = (uint32_t)i, .latest = (uint32_t)i};
            continue;
        }
        uint32_t last = slot->first;
        while (list[last].next_same_name != SCHEMA_NONE) {
            last = list[last].next_same_name;
        }
        list[last].next_same_name = (uint32_t)i;
        if (newer(&list[i], &list[slot->latest])) {
            slot->latest = (uint32_t)i;
        }
    }
    return FLEET_OK;
}

/* The folder's text of @p name@@p revision as YIN, parsed in a context of its own (the fleet's implements
 * another revision of it) with the folder's modules for its imports; NULL when it does not parse there. */
static char *
yin_apart(const struct load_state *st, const char *name, const char *revision)
{
    long i = ydir_find(&st->dir, name, revision, 0);
    struct ly_ctx *ctx = NULL;
    struct lys_module *mod = NULL;
    char *yin = NULL;
    uint32_t log_opts = ly_log_options(0); /* a text that does not parse here is still served as YANG */

    if (i >= 0 && !ly_ctx_new(st->dir.path, LY_CTX_NO_YANGLIBRARY, &ctx)) {
        ly_ctx_set_searchdir(ctx, SCHEMA_YUMA_IETF_DIR);
        if (!lys_parse_mem(ctx, st->dir.files[i].text, LYS_IN_YANG, &mod) && mod) {
            lys_print_mem(&yin, mod, LYS_OUT_YIN, 0);
        }
    }
    ly_ctx_destroy(ctx);
    ly_log_options(log_opts);
    return yin;
}

/* Entries for the folder's modules shadowed by the context's revision (see struct load_state). */
static enum fleet_err
add_text_only(struct schema_set *set, const struct load_state *st)
{
    for (size_t i = 0; i < st->dir.file_count; i++) {
        const struct ydir_file *f = &st->dir.files[i];
        const struct lys_module *have;
        struct schema_module *grown;
        const char *name = NULL, *revision = NULL;
        if (!st->shadowed || !st->shadowed[i] || !(have = ly_ctx_get_module_implemented(set->ctx, f->name))) {
            continue;
        }
        if (lydict_insert(set->ctx, f->name, 0, &name) ||
            (f->revision && lydict_insert(set->ctx, f->revision, 0, &revision))) {
            return FLEET_ERR_NOMEM;
        }
        if (!(grown = realloc(set->modules, (set->module_count + 1) * sizeof *grown))) {
            return FLEET_ERR_NOMEM;
        }
        set->modules = grown;
        set->modules[set->module_count++] =
            (struct schema_module){.mod = have, .name = name, .revision = revision, .text_only = 1};
        log_info("schemas: %s/%s is advertised and served as text: its module is implemented in revision %s "
                 "(fleetsim's own), which answers for it",
                 st->dir.path, f->file_name, have->revision ? have->revision : "(none)");
    }
    return FLEET_OK;
}

/* Every module's and submodule's get-schema text, escaped once here: a mount storm asks every device for
 * every module. */
static enum fleet_err
keep_sources(struct schema_set *set, const struct load_state *st)
{
    for (size_t i = 0; i < set->module_count; i++) {
        struct schema_module *m = &set->modules[i];
        LY_ARRAY_COUNT_TYPE u;
        if (!(m->yang_xml = source_text(st, m->name, m->revision, 0, m->mod->filepath, m->mod, NULL,
                                        &m->yang_xml_len))) {
            return FLEET_ERR_NOMEM;
        }
        if (m->text_only) {
            m->yin = yin_apart(st, m->name, m->revision);
            continue; /* mod's includes are the implemented revision's */
        }
        if (!m->mod->parsed) {
            continue;
        }
        LY_ARRAY_FOR(m->mod->parsed->includes, u)
        {
            const struct lysp_submodule *sub = m->mod->parsed->includes[u].submodule;
            struct schema_module *grown;
            struct schema_module *e;
            if (!sub) {
                continue;
            }
            grown = realloc(set->submodules, (set->submodule_count + 1) * sizeof *grown);
            if (!grown) {
                return FLEET_ERR_NOMEM;
            }
            set->submodules = grown;
            e = &set->submodules[set->submodule_count++];
            *e = (struct schema_module){.mod = m->mod,
                                        .submodule = sub,
                                        .name = sub->name,
                                        .revision = sub->revs ? sub->revs[0].date : NULL,
                                        .implemented = m->implemented};
            if (!(e->yang_xml = source_text(st, e->name, e->revision, 1, sub->filepath, m->mod, sub,
                                            &e->yang_xml_len))) {
                return FLEET_ERR_NOMEM;
            }
        }
    }
    return FLEET_OK;
}

enum fleet_err
schema_set_load(struct schema_set *set, const char *schemas_dir, char *err, size_t err_len)
{
    static const struct schema_options none = {0};

    return schema_set_load_with(set, schemas_dir, &none, NULL, NULL, 0, err, err_len);
}

enum fleet_err
schema_set_load_with(struct schema_set *set, const char *schemas_dir, const struct schema_options *opts,
                     const char *extra_dir, char *const *extra_modules, size_t extra_count, char *err,
                     size_t err_len)
{
    enum fleet_err rc = FLEET_OK;
    const struct lys_module *mod;
    uint32_t idx = 0;
    uint32_t hash = 2166136261u;
    char *cap = NULL;
    struct span_scan scan = {.set = set};
    struct load_state st = {.opts = opts};
    struct timespec t0, t1;

    memset(set, 0, sizeof *set);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (schemas_dir) {
        if ((rc = ydir_scan(&st.dir, schemas_dir, err, err_len))) {
            return rc;
        }
        if (!(st.skipped = calloc(st.dir.file_count + 1, 1)) ||
            !(st.shadowed = calloc(st.dir.file_count + 1, 1))) {
            rc = FLEET_ERR_NOMEM;
            goto cleanup;
        }
    }
    if ((rc = load_all(set, &st, extra_dir, extra_modules, extra_count, err, err_len))) {
        goto cleanup;
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
        set->modules[set->module_count++] = (struct schema_module){
            .mod = mod, .name = mod->name, .revision = mod->revision, .implemented = mod->implemented};
        hash = fnv1a(fnv1a(hash, mod->name), mod->revision);
    }
    set->content_id = hash;
    if ((rc = add_text_only(set, &st)) || (rc = keep_sources(set, &st)) ||
        (rc = index_build(&set->module_index, set->modules, set->module_count)) ||
        (rc = index_build(&set->submodule_index, set->submodules, set->submodule_count))) {
        goto cleanup;
    }
    if (schemas_dir) {
        size_t modules = 0, submodules = 0;
        for (size_t i = 0; i < st.dir.file_count; i++) {
            const struct ydir_file *f = &st.dir.files[i];
            if ((!st.skipped[i] || st.shadowed[i]) &&
                (f->is_submodule ? schema_find_submodule(set, f->name, f->revision)
                                 : schema_find(set, f->name, f->revision))) {
                f->is_submodule ? submodules++ : modules++;
            }
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        log_info("schemas: %zu modules and %zu submodules from %s, %zu skipped, in %.2f s", modules,
                 submodules, schemas_dir, st.skipped_count,
                 (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    }

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
        if ((rc = add_cap(set, set->modules[i].text_only ? text_only_cap(&set->modules[i])
                                                         : module_cap(set->modules[i].mod)))) {
            goto cleanup;
        }
        if (set->modules[i].implemented) {
            lysc_module_dfs_full(set->modules[i].mod, scan_node, &scan);
        }
    }

    rc = build_hello_head(set);

cleanup:
    if (set->ctx) {
        ly_ctx_set_module_imp_clb(set->ctx, NULL, NULL); /* st is gone after this */
    }
    ydir_free(&st.dir);
    free(st.skipped);
    free(st.shadowed);
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
        free(set->modules[i].yin);
    }
    free(set->modules);
    for (size_t i = 0; i < set->submodule_count; i++) {
        free(set->submodules[i].yang_xml);
    }
    free(set->submodules);
    free(set->module_index.slots);
    free(set->submodule_index.slots);
    free(set->hello_head);
    ly_ctx_destroy(set->ctx);
    memset(set, 0, sizeof *set);
}

static const struct schema_module *
find_in(const struct schema_module *list, size_t count, const char *name, const char *revision)
{
    const struct schema_module *latest = NULL;

    for (size_t i = 0; i < count; i++) {
        const struct schema_module *m = &list[i];
        if (strcmp(m->name, name)) {
            continue;
        }
        if (revision && *revision) {
            if (m->revision && !strcmp(m->revision, revision)) {
                return m;
            }
            continue;
        }
        if (!latest || newer(m, latest)) {
            latest = m;
        }
    }
    return latest;
}

/* find_in() through the index: the same answers. */
static const struct schema_module *
find_indexed(const struct schema_index *ix, const struct schema_module *list, size_t count, const char *name,
             const char *revision)
{
    const struct schema_index_slot *slot;

    if (!ix->slots) {
        return find_in(list, count, name, revision); /* during load, before the index exists */
    }
    slot = index_slot(ix, name, fnv1a(2166136261u, name));
    if (!slot->name) {
        return NULL;
    }
    if (!revision || !*revision) {
        return &list[slot->latest];
    }
    for (uint32_t i = slot->first; i != SCHEMA_NONE; i = list[i].next_same_name) {
        if (list[i].revision && !strcmp(list[i].revision, revision)) {
            return &list[i];
        }
    }
    return NULL;
}

const struct schema_module *
schema_find(const struct schema_set *set, const char *name, const char *revision)
{
    return find_indexed(&set->module_index, set->modules, set->module_count, name, revision);
}

const struct schema_module *
schema_find_submodule(const struct schema_set *set, const char *name, const char *revision)
{
    return find_indexed(&set->submodule_index, set->submodules, set->submodule_count, name, revision);
}

const char *
schema_module_yang_xml(const struct schema_module *m, size_t *len)
{
    if (len) {
        *len = m->yang_xml_len;
    }
    return m->yang_xml;
}

enum fleet_err
schema_module_text(const struct schema_module *m, LYS_OUTFORMAT format, char **text)
{
    struct ly_out *out = NULL;
    LY_ERR lrc;

    *text = NULL;
    if (m->text_only) {
        if (format != LYS_OUT_YIN || !m->yin) {
            return FLEET_ERR_INVAL;
        }
        return (*text = strdup(m->yin)) ? FLEET_OK : FLEET_ERR_NOMEM;
    }
    if (!m->submodule) {
        return lys_print_mem(text, m->mod, format, 0) ? FLEET_ERR_NOMEM : FLEET_OK;
    }
    if (ly_out_new_memory(text, 0, &out)) {
        return FLEET_ERR_NOMEM;
    }
    lrc = lys_print_submodule(out, m->submodule, format, 0, 0);
    ly_out_free(out, NULL, 0);
    if (lrc) {
        free(*text);
        *text = NULL;
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
