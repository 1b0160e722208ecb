/*
 * Loading a device profile. The file is an XML instance of
 * fleetsim-profile.yang; libyang parses and validates it (strictly: an
 * unknown element is an error) in a small context of its own that lives only
 * during the load, so the simulator's device context never carries the
 * profile module. What YANG cannot say is checked here after validation:
 * sub-identifiers that overflow 32 bits, groups that expand past
 * PROFILE_MAX_INTERFACES, interface names made twice, IANAifType numbers
 * that are neither given nor known, and referenced files that do not exist.
 * Every message names the file, then what is wrong.
 */
#include "profile.h"
#include "ydata.h"

#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libyang/libyang.h>

#include "sbuf.h"

/* The YANG module a profile file instantiates (schemas/fleetsim-profile.yang). */
#define PROFILE_MODULE "fleetsim-profile"
/* ifName and ifDescr are DisplayStrings: an expanded interface name may not be longer. */
#define PROFILE_MAX_NAME_BYTES 255
/* Longest path we build or accept for a profile or a file it references. */
#define PROFILE_MAX_PATH_BYTES 4096
/* Placeholder of the interface number in name-format and description-format. */
#define PROFILE_PH_NUMBER "{N}"

/* IANAifType numbers (IANAifType-MIB) of the types a profile may name without if-type-number. */
struct profile_iftype {
    const char *name; /* iana-if-type identity name */
    uint32_t number;  /* IANAifType value */
};

static const struct profile_iftype profile_iftypes[] = {
    {"other", 1},        {"ethernetCsmacd", 6},    {"propPointToPointSerial", 22},
    {"ppp", 23},         {"softwareLoopback", 24}, {"atm", 37},
    {"sonet", 39},       {"propVirtual", 53},      {"ieee80211", 71},
    {"tunnel", 131},     {"l2vlan", 135},          {"l3ipvlan", 136},
    {"mplsTunnel", 150}, {"ieee8023adLag", 161},   {"bridge", 209},
};

/* fleetsim-profile storage type enum -> hrStorageTypes arc (HOST-RESOURCES-TYPES). */
struct profile_storage_type {
    const char *name; /* enum name in fleetsim-profile.yang */
    uint32_t arc;     /* last arc under hrStorageTypes (1.3.6.1.2.1.25.2.1) */
};

static const struct profile_storage_type profile_storage_types[] = {
    {"ram", 2},
    {"virtual-memory", 3},
    {"fixed-disk", 4},
    {"flash", 9},
};

/* One expanded interface while names are checked for duplicates. */
struct profile_name_ref {
    const char *name;  /* expanded name (owned by the profile) */
    const char *group; /* name-format of the group that made it (owned by the data tree) */
};

/* What a load needs for its messages. */
struct profile_loader {
    const char *path; /* the profile file, named first in every message */
    char *err;        /* caller's message buffer */
    size_t err_len;   /* its size */
};

__attribute__((format(printf, 2, 3))) static void
profile_fail(struct profile_loader *ld, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (!ld->err || !ld->err_len) {
        return;
    }
    n = snprintf(ld->err, ld->err_len, "profile %s: ", ld->path);
    if (n < 0 || (size_t)n >= ld->err_len) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(ld->err + n, ld->err_len - (size_t)n, fmt, ap);
    va_end(ap);
}

/* libyang's first error record: the most specific one (later records are often "invalid data"). */
static void
profile_fail_ly(struct profile_loader *ld, const struct ly_ctx *ctx, const char *what)
{
    const struct ly_err_item *e = ly_err_first(ctx);

    if (!e) {
        profile_fail(ld, "%s", what);
    } else if (e->path) {
        profile_fail(ld, "%s: %s (%s)", what, e->msg, e->path);
    } else {
        profile_fail(ld, "%s: %s", what, e->msg);
    }
}

static int
profile_has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s);
    size_t m = strlen(suffix);

    return n >= m && !strcmp(s + n - m, suffix);
}

/* decimal64 leaves, as doubles (their canonical text is always "digits.digits"). */
static double
profile_dec(const struct lyd_node *parent, const char *name)
{
    const char *v = ydata_str(parent, name);

    return v ? strtod(v, NULL) : 0.0;
}

static int
profile_bool(const struct lyd_node *parent, const char *name)
{
    const char *v = ydata_str(parent, name);

    return v && !strcmp(v, "true");
}

/* strdup of an optional leaf; 0 when absent or copied, -1 when out of memory. */
static int
profile_dup(const struct lyd_node *parent, const char *name, char **out)
{
    const char *v = ydata_str(parent, name);

    *out = NULL;
    if (!v) {
        return 0;
    }
    *out = strdup(v);
    return *out ? 0 : -1;
}

/* @p fmt with every "{N}" replaced by @p number; NULL when out of memory. */
static char *
profile_expand(const char *fmt, uint32_t number)
{
    struct sbuf b = {0};
    const char *s = fmt;
    const char *ph;

    sbuf_reserve(&b, strlen(fmt) + 16); /* also makes an empty result a "" rather than NULL */
    while ((ph = strstr(s, PROFILE_PH_NUMBER))) {
        sbuf_add(&b, s, (size_t)(ph - s));
        sbuf_printf(&b, "%" PRIu32, number);
        s = ph + strlen(PROFILE_PH_NUMBER);
    }
    sbuf_adds(&b, s);
    return sbuf_take(&b, NULL);
}

static int
profile_name_cmp(const void *a, const void *b)
{
    return strcmp(((const struct profile_name_ref *)a)->name, ((const struct profile_name_ref *)b)->name);
}

/*
 * Find where the profile file is. A bare name means NAME.xml in the profiles folder; a missing one
 * is reported with the profiles that do exist there.
 */
static enum fleet_err
profile_resolve(const char *name_or_path, const char *profiles_dir, const char *schemas_dir, char **path_out,
                struct profile_loader *ld)
{
    enum fleet_err rc = FLEET_OK;
    char built[PROFILE_MAX_PATH_BYTES];
    char dir_buf[PROFILE_MAX_PATH_BYTES];
    const char *path = name_or_path;
    struct sbuf known = {0};
    DIR *d = NULL;
    struct dirent *e;
    struct stat st;

    *path_out = NULL;
    ld->path = name_or_path;
    if (!strchr(name_or_path, '/') && !profile_has_suffix(name_or_path, ".xml")) {
        if (!profiles_dir) {
            snprintf(dir_buf, sizeof dir_buf, "%s/profiles", schemas_dir);
            profiles_dir = dir_buf;
        }
        if ((size_t)snprintf(built, sizeof built, "%s/%s.xml", profiles_dir, name_or_path) >= sizeof built) {
            profile_fail(ld, "path too long");
            rc = FLEET_ERR_INVAL;
            goto cleanup;
        }
        path = built;
        if (stat(path, &st)) {
            /* Say which profiles exist, so a typo is easy to fix. */
            if ((d = opendir(profiles_dir))) {
                while ((e = readdir(d))) {
                    size_t n = strlen(e->d_name);
                    if (e->d_name[0] != '.' && profile_has_suffix(e->d_name, ".xml")) {
                        sbuf_printf(&known, "%s%.*s", known.len ? ", " : "", (int)(n - 4), e->d_name);
                    }
                }
            }
            profile_fail(ld, "no such profile (no file %s; profiles there: %s)", path,
                         known.len && !known.failed ? known.buf : "none");
            rc = FLEET_ERR_NOTFOUND;
            goto cleanup;
        }
    } else if (stat(path, &st)) {
        profile_fail(ld, "cannot read the file: %m");
        rc = FLEET_ERR_NOTFOUND;
        goto cleanup;
    }
    if (!S_ISREG(st.st_mode)) {
        profile_fail(ld, "not a regular file");
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    /* Absolute, so files the profile references resolve the same whatever the working folder. */
    if (!(*path_out = realpath(path, NULL))) {
        profile_fail(ld, "cannot resolve path: %m");
        rc = FLEET_ERR_NOTFOUND;
        goto cleanup;
    }
    ld->path = *path_out;

cleanup:
    if (d) {
        closedir(d);
    }
    sbuf_free(&known);
    return rc;
}

/* A file named by the profile, relative to the profile's folder unless absolute; it must be readable. */
static enum fleet_err
profile_ref_file(const struct lyd_node *top, const char *leaf, struct profile_loader *ld, char **out)
{
    const char *v = ydata_str(top, leaf);
    const char *slash = strrchr(ld->path, '/');
    char buf[PROFILE_MAX_PATH_BYTES];
    int n;

    *out = NULL;
    if (!v) {
        return FLEET_OK;
    }
    if (v[0] == '/') {
        n = snprintf(buf, sizeof buf, "%s", v);
    } else {
        n = snprintf(buf, sizeof buf, "%.*s/%s", (int)(slash - ld->path), ld->path, v);
    }
    if (n < 0 || (size_t)n >= sizeof buf) {
        profile_fail(ld, "%s \"%s\": path too long", leaf, v);
        return FLEET_ERR_INVAL;
    }
    if (access(buf, R_OK)) {
        profile_fail(ld, "%s \"%s\": cannot read %s: %m", leaf, v, buf);
        return FLEET_ERR_INVAL;
    }
    *out = strdup(buf);
    return *out ? FLEET_OK : FLEET_ERR_NOMEM;
}

static enum fleet_err
profile_fill_identity(struct profile *p, const struct lyd_node *top, struct profile_loader *ld)
{
    const struct lyd_node *id = ydata_child(top, "identity");
    const char *oid = ydata_str(id, "sys-object-id");

    if (oid_parse(oid, &p->sys_object_id)) {
        profile_fail(ld, "identity/sys-object-id \"%s\": not encodable (a sub-identifier above 4294967295)",
                     oid);
        return FLEET_ERR_INVAL;
    }
    if (profile_dup(id, "sys-descr", &p->sys_descr) || profile_dup(id, "sys-contact", &p->sys_contact) ||
        profile_dup(id, "sys-location", &p->sys_location) ||
        profile_dup(id, "hostname-format", &p->hostname_format)) {
        return FLEET_ERR_NOMEM;
    }
    p->sys_services = (uint32_t)ydata_u64(id, "sys-services");
    return FLEET_OK;
}

/* The IANAifType number of a group: given, or known for its type. */
static enum fleet_err
profile_group_iftype(const struct lyd_node *g, struct profile_loader *ld, uint32_t *number)
{
    const char *type = ydata_str(g, "type");

    if (ydata_child(g, "if-type-number")) {
        *number = (uint32_t)ydata_u64(g, "if-type-number");
        return FLEET_OK;
    }
    for (size_t i = 0; i < sizeof profile_iftypes / sizeof profile_iftypes[0]; i++) {
        if (!strcmp(profile_iftypes[i].name, type)) {
            *number = profile_iftypes[i].number;
            return FLEET_OK;
        }
    }
    profile_fail(ld,
                 "interface-group \"%s\": type \"%s\" has no known IANAifType number; give if-type-number",
                 ydata_str(g, "name-format"), type);
    return FLEET_ERR_INVAL;
}

/* Names must be unique: sort (name, group) pairs and compare neighbours, O(n log n). */
static enum fleet_err
profile_check_names(const struct profile *p, struct profile_name_ref *refs, struct profile_loader *ld)
{
    qsort(refs, p->if_count, sizeof *refs, profile_name_cmp);
    for (uint32_t i = 1; i < p->if_count; i++) {
        if (!strcmp(refs[i - 1].name, refs[i].name) && refs[i - 1].group == refs[i].group) {
            profile_fail(ld,
                         "duplicate interface name \"%s\" (interface-group \"%s\" makes it more than once: "
                         "does its name-format lack {N}?)",
                         refs[i].name, refs[i].group);
            return FLEET_ERR_INVAL;
        }
        if (!strcmp(refs[i - 1].name, refs[i].name)) {
            profile_fail(ld, "duplicate interface name \"%s\" (made by interface-group \"%s\" and \"%s\")",
                         refs[i].name, refs[i - 1].group, refs[i].group);
            return FLEET_ERR_INVAL;
        }
    }
    return FLEET_OK;
}

/* Expand every interface group, in order, into p->ifs. */
static enum fleet_err
profile_fill_interfaces(struct profile *p, const struct lyd_node *top, struct profile_loader *ld)
{
    enum fleet_err rc = FLEET_OK;
    struct profile_name_ref *refs = NULL;
    const struct lyd_node *g;
    uint64_t total = 0;
    uint32_t pos = 0;

    /* Count first, so the limit is checked before anything big is allocated. */
    LY_LIST_FOR(lyd_child(top), g)
    {
        uint64_t first, count;
        if (strcmp(g->schema->name, "interface-group")) {
            continue;
        }
        first = ydata_u64(g, "first");
        count = ydata_u64(g, "count");
        if (first + count - 1 > UINT32_MAX) {
            profile_fail(ld, "interface-group \"%s\": first + count - 1 exceeds 4294967295",
                         ydata_str(g, "name-format"));
            rc = FLEET_ERR_INVAL;
            goto cleanup;
        }
        total += count;
    }
    if (total > PROFILE_MAX_INTERFACES) {
        profile_fail(ld, "%" PRIu64 " interfaces, more than the limit of %u (PROFILE_MAX_INTERFACES)", total,
                     (unsigned)PROFILE_MAX_INTERFACES);
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    p->ifs = calloc(total ? total : 1, sizeof *p->ifs);
    refs = calloc(total ? total : 1, sizeof *refs);
    if (!p->ifs || !refs) {
        rc = FLEET_ERR_NOMEM;
        goto cleanup;
    }

    LY_LIST_FOR(lyd_child(top), g)
    {
        const char *name_fmt, *descr_fmt;
        uint32_t first, count, iftype;
        if (strcmp(g->schema->name, "interface-group")) {
            continue;
        }
        if ((rc = profile_group_iftype(g, ld, &iftype))) {
            goto cleanup;
        }
        name_fmt = ydata_str(g, "name-format");
        descr_fmt = ydata_str(g, "description-format");
        first = (uint32_t)ydata_u64(g, "first");
        count = (uint32_t)ydata_u64(g, "count");
        for (uint32_t k = 0; k < count; k++, pos++) {
            struct profile_interface *ifc = &p->ifs[pos];
            p->if_count = pos + 1; /* so profile_free() sees what this one holds */
            ifc->name = profile_expand(name_fmt, first + k);
            ifc->type = strdup(ydata_str(g, "type"));
            ifc->description = descr_fmt ? profile_expand(descr_fmt, first + k) : NULL;
            if (!ifc->name || !ifc->type || (descr_fmt && !ifc->description)) {
                rc = FLEET_ERR_NOMEM;
                goto cleanup;
            }
            if (strlen(ifc->name) > PROFILE_MAX_NAME_BYTES) {
                profile_fail(ld, "interface-group \"%s\": name \"%.40s...\" is longer than %d bytes",
                             name_fmt, ifc->name, PROFILE_MAX_NAME_BYTES);
                rc = FLEET_ERR_INVAL;
                goto cleanup;
            }
            ifc->iftype = iftype;
            ifc->speed_bps = ydata_u64(g, "speed");
            ifc->mtu = (uint32_t)ydata_u64(g, "mtu");
            ifc->enabled = (uint8_t)profile_bool(g, "enabled");
            ifc->link_up = (uint8_t)profile_bool(g, "link-up");
            refs[pos].name = ifc->name;
            refs[pos].group = name_fmt;
        }
    }
    rc = profile_check_names(p, refs, ld);

cleanup:
    free(refs);
    return rc;
}

static void
profile_fill_traffic(struct profile *p, const struct lyd_node *top)
{
    const struct lyd_node *t = ydata_child(top, "traffic");
    struct profile_traffic *tr = &p->traffic;

    /* Percent in the file, shares of 1 in memory. */
    tr->util_min = profile_dec(t, "util-min") / 100.0;
    tr->util_max = profile_dec(t, "util-max") / 100.0;
    tr->period_s = (uint32_t)ydata_u64(t, "period");
    tr->jitter = profile_dec(t, "jitter") / 100.0;
    tr->packet_bytes = (uint32_t)ydata_u64(t, "packet-bytes");
    tr->multicast_share = profile_dec(t, "multicast-share") / 100.0;
    tr->broadcast_share = profile_dec(t, "broadcast-share") / 100.0;
    tr->error_ppm = profile_dec(t, "error-ppm");
    tr->discard_ppm = profile_dec(t, "discard-ppm");
}

static enum fleet_err
profile_fill_host(struct profile *p, const struct lyd_node *top)
{
    const struct lyd_node *cpu = ydata_child(top, "processors");
    const struct lyd_node *c;
    uint32_t n = 0;

    p->cpu_count = (uint32_t)ydata_u64(cpu, "count");
    if (p->cpu_count && !(p->cpus = calloc(p->cpu_count, sizeof *p->cpus))) {
        return FLEET_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < p->cpu_count; i++) {
        p->cpus[i].load_min = (uint32_t)ydata_u64(cpu, "load-min");
        p->cpus[i].load_max = (uint32_t)ydata_u64(cpu, "load-max");
    }

    LY_LIST_FOR(lyd_child(top), c)
    {
        n += !strcmp(c->schema->name, "storage");
    }
    if (n && !(p->storages = calloc(n, sizeof *p->storages))) {
        return FLEET_ERR_NOMEM;
    }
    LY_LIST_FOR(lyd_child(top), c)
    {
        struct profile_storage *s;
        const char *type;
        if (strcmp(c->schema->name, "storage")) {
            continue;
        }
        s = &p->storages[p->storage_count++];
        if (profile_dup(c, "descr", &s->descr)) {
            return FLEET_ERR_NOMEM;
        }
        type = ydata_str(c, "type");
        for (size_t i = 0; i < sizeof profile_storage_types / sizeof profile_storage_types[0]; i++) {
            if (!strcmp(profile_storage_types[i].name, type)) {
                s->type = profile_storage_types[i].arc;
            }
        }
        s->unit_bytes = (uint32_t)ydata_u64(c, "allocation-unit");
        s->size_units = (uint32_t)ydata_u64(c, "size");
        s->used_min_pct = (uint32_t)ydata_u64(c, "used-min");
        s->used_max_pct = (uint32_t)ydata_u64(c, "used-max");
    }
    return FLEET_OK;
}

static enum fleet_err
profile_fill_lists(struct profile *p, const struct lyd_node *top, struct profile_loader *ld)
{
    const struct lyd_node *coll = ydata_child(top, "collection");
    const struct lyd_node *c;
    uint32_t n = 0;

    LY_LIST_FOR(lyd_child(coll), c)
    {
        n++;
    }
    if (n && !(p->collection = calloc(n, sizeof *p->collection))) {
        return FLEET_ERR_NOMEM;
    }
    LY_LIST_FOR(lyd_child(coll), c)
    {
        if (oid_parse(lyd_get_value(c), &p->collection[p->collection_count])) {
            profile_fail(ld, "collection/object \"%s\": not encodable (a sub-identifier above 4294967295)",
                         lyd_get_value(c));
            return FLEET_ERR_INVAL;
        }
        p->collection_count++;
    }

    n = 0;
    LY_LIST_FOR(lyd_child(top), c)
    {
        n += !strcmp(c->schema->name, "schema");
    }
    if (n && !(p->schemas = calloc(n, sizeof *p->schemas))) {
        return FLEET_ERR_NOMEM;
    }
    LY_LIST_FOR(lyd_child(top), c)
    {
        if (!strcmp(c->schema->name, "schema")) {
            if (!(p->schemas[p->schema_count] = strdup(lyd_get_value(c)))) {
                return FLEET_ERR_NOMEM;
            }
            p->schema_count++;
        }
    }
    return FLEET_OK;
}

enum fleet_err
profile_load(const char *name_or_path, const char *profiles_dir, const char *schemas_dir,
             struct profile **out, char *err, size_t err_len)
{
    enum fleet_err rc = FLEET_OK;
    struct profile_loader ld = {.path = name_or_path, .err = err, .err_len = err_len};
    struct ly_ctx *ctx = NULL;
    struct lyd_node *tree = NULL;
    const struct lyd_node *top = NULL;
    const struct lys_module *mod;
    struct profile *p = NULL;
    char *path = NULL;
    uint32_t log_opts = LY_LOSTORE;
    LY_ERR lyrc;

    *out = NULL;
    if (err && err_len) {
        err[0] = '\0';
    }
    if ((rc = profile_resolve(name_or_path, profiles_dir, schemas_dir, &path, &ld))) {
        goto cleanup;
    }

    /*
     * Parse and validate. libyang's errors are stored, not printed, and reported once through err;
     * the temporary options are per thread (a caller's own temporary options are reset after).
     */
    ly_temp_log_options(&log_opts);
    if (ly_ctx_new(schemas_dir, LY_CTX_NO_YANGLIBRARY | LY_CTX_DISABLE_SEARCHDIR_CWD, &ctx)) {
        profile_fail(&ld, "cannot use schemas folder %s", schemas_dir);
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    if (!(mod = ly_ctx_load_module(ctx, PROFILE_MODULE, NULL, NULL))) {
        profile_fail_ly(&ld, ctx, "cannot load " PROFILE_MODULE ".yang from the schemas folder");
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    lyrc = lyd_parse_data_path(ctx, path, LYD_XML, LYD_PARSE_STRICT, LYD_VALIDATE_PRESENT, &tree);
    if (lyrc == LY_EMEM) {
        rc = FLEET_ERR_NOMEM;
        goto cleanup;
    } else if (lyrc) {
        profile_fail_ly(&ld, ctx, "invalid");
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    LY_LIST_FOR(tree, top)
    {
        if (top->schema && top->schema->module == mod && !strcmp(top->schema->name, "profile")) {
            break;
        }
    }
    if (!top) {
        profile_fail(&ld, "no <profile xmlns=\"urn:fleetsim:profile\"> element");
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }

    /* Fill the profile from the validated tree, checking what YANG cannot. */
    if (!(p = calloc(1, sizeof *p))) {
        rc = FLEET_ERR_NOMEM;
        goto cleanup;
    }
    p->path = path;
    path = NULL;
    if (profile_dup(top, "name", &p->name)) {
        rc = FLEET_ERR_NOMEM;
        goto cleanup;
    }
    if ((rc = profile_fill_identity(p, top, &ld)) || (rc = profile_fill_interfaces(p, top, &ld))) {
        goto cleanup;
    }
    profile_fill_traffic(p, top);
    if ((rc = profile_fill_host(p, top)) || (rc = profile_fill_lists(p, top, &ld)) ||
        (rc = profile_ref_file(top, "initial-config", &ld, &p->initial_config_file)) ||
        (rc = profile_ref_file(top, "state-data", &ld, &p->state_data_file)) ||
        (rc = profile_ref_file(top, "recording", &ld, &p->recording_file))) {
        goto cleanup;
    }
    *out = p;
    p = NULL;

cleanup:
    if (rc == FLEET_ERR_NOMEM) {
        profile_fail(&ld, "out of memory");
    }
    ly_temp_log_options(NULL);
    lyd_free_all(tree);
    ly_ctx_destroy(ctx);
    profile_free(p);
    free(path);
    return rc;
}

void
profile_free(struct profile *p)
{
    if (!p) {
        return;
    }
    for (uint32_t i = 0; i < p->if_count; i++) {
        free(p->ifs[i].name);
        free(p->ifs[i].type);
        free(p->ifs[i].description);
    }
    for (uint32_t i = 0; i < p->storage_count; i++) {
        free(p->storages[i].descr);
    }
    for (uint32_t i = 0; i < p->schema_count; i++) {
        free(p->schemas[i]);
    }
    free(p->name);
    free(p->path);
    free(p->sys_descr);
    free(p->sys_contact);
    free(p->sys_location);
    free(p->hostname_format);
    free(p->ifs);
    free(p->cpus);
    free(p->storages);
    free(p->collection);
    free(p->schemas);
    free(p->initial_config_file);
    free(p->state_data_file);
    free(p->recording_file);
    free(p);
}
