/*
 * A device type: what a kind of device is, loaded once and shared by every
 * device of every group of that type. Its profile, its schemas (built-in,
 * the profile's and a vendor folder's), its initial configuration (the
 * profile's interfaces under the user's file), its state data, yang-library
 * data and SNMP view. Loading is the only time a type is written.
 */
#include "devtype.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devtype_recorded.h"
#include "devview.h"
#include "identity.h"
#include "log.h"
#include "mib.h"
#include "movers.h"
#include "recording.h"
#include "sbuf.h"
#include "smiv2.h"
#include "state_text.h"
#include "std_revisions.h"
#include "xmlscan.h"

static char *
read_file(const char *path, char *err, size_t err_len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long size;

    if (!f) {
        snprintf(err, err_len, "cannot open \"%s\": %s", path, strerror(errno));
        return NULL;
    }
    if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
        snprintf(err, err_len, "cannot read \"%s\": %s", path, strerror(errno));
        goto cleanup;
    }
    buf = malloc((size_t)size + 1);
    if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) {
        snprintf(err, err_len, "cannot read \"%s\"", path);
        free(buf);
        buf = NULL;
        goto cleanup;
    }
    buf[size] = '\0';

cleanup:
    fclose(f);
    return buf;
}

/* The profile's interfaces (and identity) as configuration, merged under the user's initial configuration. */
static enum fleet_err
load_profile_config(struct device_type *type, char *err, size_t err_len)
{
    const struct profile *p = type->profile;
    struct ly_ctx *ctx = type->schemas.ctx;
    struct lyd_node *tree = NULL;
    struct sbuf x = {0};
    char *xml;
    enum fleet_err rc = FLEET_OK;

    sbuf_adds(&x, "<interfaces xmlns=\"urn:ietf:params:xml:ns:yang:ietf-interfaces\" "
                  "xmlns:ianaift=\"urn:ietf:params:xml:ns:yang:iana-if-type\">");
    for (uint32_t i = 0; i < p->if_count; i++) {
        const struct profile_interface *pi = &p->ifs[i];
        sbuf_adds(&x, "<interface><name>");
        sbuf_add_xml(&x, pi->name);
        sbuf_printf(&x, "</name><type>ianaift:%s</type><enabled>%s</enabled>", pi->type,
                    pi->enabled ? "true" : "false");
        if (pi->description) {
            sbuf_adds(&x, "<description>");
            sbuf_add_xml(&x, pi->description);
            sbuf_adds(&x, "</description>");
        }
        sbuf_adds(&x, "</interface>");
    }
    sbuf_adds(&x, "</interfaces>");
    if (p->sys_contact || p->sys_location ||
        (p->hostname_format && !strstr(p->hostname_format, "{DEVICE}"))) {
        sbuf_adds(&x, "<system xmlns=\"urn:ietf:params:xml:ns:yang:ietf-system\">");
        if (p->sys_contact) {
            sbuf_adds(&x, "<contact>");
            sbuf_add_xml(&x, p->sys_contact);
            sbuf_adds(&x, "</contact>");
        }
        if (p->hostname_format && !strstr(p->hostname_format, "{DEVICE}")) {
            sbuf_adds(&x, "<hostname>");
            sbuf_add_xml(&x, p->hostname_format);
            sbuf_adds(&x, "</hostname>");
        }
        if (p->sys_location) {
            sbuf_adds(&x, "<location>");
            sbuf_add_xml(&x, p->sys_location);
            sbuf_adds(&x, "</location>");
        }
        sbuf_adds(&x, "</system>");
    }
    xml = sbuf_take(&x, NULL);
    if (!xml || lyd_parse_data_mem(ctx, xml, LYD_XML, LYD_PARSE_STRICT | LYD_PARSE_NO_STATE,
                                   LYD_VALIDATE_NO_STATE, &tree)) {
        snprintf(err, err_len, "profile \"%s\" does not fit the schemas: %s", p->name,
                 xml ? ly_errmsg(ctx) : "out of memory");
        rc = FLEET_ERR_INVAL;
    } else if (lyd_merge_siblings(&type->template_tree, tree, 0)) {
        snprintf(err, err_len, "cannot merge profile \"%s\" into the initial configuration: %s", p->name,
                 ly_errmsg(ctx));
        rc = FLEET_ERR_INVAL;
    }
    lyd_free_all(tree);
    free(xml);
    return rc;
}

/*
 * The profile's state data (config false nodes, such as the tables of MIB-derived modules), shared
 * read-only by every device: NETCONF get shows it and SNMP serves what carries smiv2:oid.
 */
static enum fleet_err
load_profile_state(struct device_type *type, char *err, size_t err_len)
{
    const struct profile *p = type->profile;
    struct ly_ctx *ctx = type->schemas.ctx;
    char *text;
    enum fleet_err rc = FLEET_OK;

    if (!p->state_data_file) {
        return FLEET_OK;
    }
    if (!(text = read_file(p->state_data_file, err, err_len))) {
        return FLEET_ERR_INVAL;
    }
    if (lyd_parse_data_mem(ctx, text, LYD_XML, LYD_PARSE_STRICT, LYD_VALIDATE_PRESENT, &type->state_tree)) {
        snprintf(err, err_len, "profile \"%s\": state data \"%s\" is not valid: %s", p->name,
                 p->state_data_file, ly_errmsg(ctx));
        rc = FLEET_ERR_INVAL;
    }
    free(text);
    return rc;
}

/*
 * Interfaces of the initial configuration that the profile does not list have configuration only: the
 * device's state (oper-status, counters, ifTable rows) is the profile's, by position. Say so once, naming
 * them, rather than let a user look for their state.
 */
static void
warn_stateless_interfaces(const struct device_type *type, const struct lyd_node *user)
{
    struct ly_set *set = NULL;
    struct sbuf names = {0};
    uint32_t count = 0;

    if (!user || lyd_find_xpath(user, "/ietf-interfaces:interfaces/interface/name", &set)) {
        goto cleanup;
    }
    for (uint32_t i = 0; i < set->count; i++) {
        const char *name = lyd_get_value(set->dnodes[i]);
        uint32_t k = 0;
        while (k < type->profile->if_count && strcmp(type->profile->ifs[k].name, name)) {
            k++;
        }
        if (k < type->profile->if_count) {
            continue;
        }
        if (count++ < 8) {
            sbuf_printf(&names, "%s\"%s\"", count > 1 ? ", " : "", name);
        }
    }
    if (count) {
        log_warn("initial configuration: %" PRIu32
                 " interface%s not in profile \"%s\" (%s%s) %s configuration "
                 "only: no oper-status, statistics or ifTable row",
                 count, count > 1 ? "s" : "", type->profile->name, names.buf ? names.buf : "",
                 count > 8 ? ", ..." : "", count > 1 ? "have" : "has");
    }

cleanup:
    sbuf_free(&names);
    ly_set_free(set, NULL);
}

/*
 * A <config> or <data> wrapper without any namespace (as people write it) put in the base namespace, so
 * that libyang reads it; other text is copied unchanged. Returns the text to parse (caller frees), or NULL
 * when out of memory.
 */
static char *
wrapper_in_base_ns(const char *text)
{
    const char *p = xmlscan_skip_misc(text);
    struct xmlscan_scope scope = {.count = 0};
    struct xmlscan_tag t;
    struct sbuf b = {0};

    if (xmlscan_read_tag(p, &t) || t.end || t.prefix || xmlscan_push_decls(&scope, &t) ||
        xmlscan_resolve(&scope, NULL, 0) ||
        !(xmlscan_eq(t.local, t.local_len, "config") || xmlscan_eq(t.local, t.local_len, "data"))) {
        return strdup(text);
    }
    sbuf_add(&b, text, (size_t)(t.attrs - text));
    sbuf_adds(&b, " xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\"");
    sbuf_adds(&b, t.attrs);
    return sbuf_take(&b, NULL);
}

/*
 * The initial configuration: bare data, or data wrapped in <config> or
 * <data> (as saved from a get-config reply). Validated like a copy-config.
 */
static enum fleet_err
load_initial_config(struct device_type *type, const struct fleet_config *cfg, char *err, size_t err_len)
{
    struct ly_ctx *ctx = type->schemas.ctx;
    const char *path = cfg->initial_config_file;
    struct lyd_node *opaque = NULL;
    char *text = NULL;
    char *inner = NULL;
    char *wrapped = NULL;
    char *first_error = NULL;
    enum fleet_err rc = FLEET_OK;
    const uint32_t parse = LYD_PARSE_STRICT | LYD_PARSE_NO_STATE;

    if (!path) {
        if (lyd_validate_all(&type->template_tree, ctx, LYD_VALIDATE_NO_STATE, NULL)) {
            snprintf(err, err_len, "the loaded schemas have no valid empty configuration: %s",
                     ly_errmsg(ctx));
            return FLEET_ERR_INVAL;
        }
        return FLEET_OK;
    }
    if (!(text = read_file(path, err, err_len))) {
        return FLEET_ERR_INVAL;
    }
    if (!lyd_parse_data_mem(ctx, text, LYD_XML, parse, LYD_VALIDATE_NO_STATE, &type->template_tree)) {
        goto cleanup;
    }
    first_error = strdup(ly_errmsg(ctx) ? ly_errmsg(ctx) : "invalid data");
    if (!(wrapped = wrapper_in_base_ns(text))) {
        snprintf(err, err_len, "out of memory reading the initial configuration");
        rc = FLEET_ERR_NOMEM;
        goto cleanup;
    }
    if (!lyd_parse_data_mem(ctx, wrapped, LYD_XML, LYD_PARSE_OPAQ | LYD_PARSE_ONLY, 0, &opaque) && opaque &&
        !opaque->schema && !opaque->next &&
        (!strcmp(LYD_NAME(opaque), "config") || !strcmp(LYD_NAME(opaque), "data"))) {
        if (!lyd_child(opaque)) {
            goto cleanup; /* an empty wrapper: an empty configuration */
        }
        /* Empty containers are printed too: without them the text may be empty (nacm alone, say). */
        if (lyd_print_mem(&inner, lyd_child(opaque), LYD_XML,
                          LYD_PRINT_WITHSIBLINGS | LYD_PRINT_KEEPEMPTYCONT) ||
            !inner ||
            lyd_parse_data_mem(ctx, inner, LYD_XML, parse, LYD_VALIDATE_NO_STATE, &type->template_tree)) {
            snprintf(err, err_len, "initial configuration \"%s\" is not valid: %s", path,
                     ly_errmsg(ctx) ? ly_errmsg(ctx) : "cannot read it");
            rc = FLEET_ERR_INVAL;
        }
        goto cleanup;
    }
    snprintf(err, err_len, "initial configuration \"%s\" is not valid: %s", path,
             first_error ? first_error : "");
    rc = FLEET_ERR_INVAL;

cleanup:
    lyd_free_all(opaque);
    free(first_error);
    free(wrapped);
    free(inner);
    free(text);
    return rc;
}

/* Two strings equal, NULL equal to NULL only. */
static int
same_text(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

int
device_type_same(const struct fleet_config *a, const struct fleet_config *b)
{
    if (!same_text(a->profile, b->profile) || !same_text(a->schemas_dir, b->schemas_dir) ||
        !same_text(a->device_type_dir, b->device_type_dir) ||
        !same_text(a->identity_rules_file, b->identity_rules_file) ||
        !same_text(a->initial_config_file, b->initial_config_file) ||
        !same_text(a->snmp_recording, b->snmp_recording) || a->schema_opts.strict != b->schema_opts.strict ||
        a->schema_opts.feature_count != b->schema_opts.feature_count) {
        return 0;
    }
    for (size_t i = 0; i < a->schema_opts.feature_count; i++) {
        if (!same_text(a->schema_opts.features[i], b->schema_opts.features[i])) {
            return 0;
        }
    }
    return 1;
}

/* The last component of @p path without trailing slashes and, when @p strip_ext, without its extension. */
static void
base_name(const char *path, int strip_ext, const char **start, size_t *len)
{
    size_t n = strlen(path);
    const char *b, *dot;

    while (n > 1 && path[n - 1] == '/') {
        n--;
    }
    b = path + n;
    while (b > path && b[-1] != '/') {
        b--;
    }
    *start = b;
    *len = (size_t)(path + n - b);
    if (strip_ext && (dot = memchr(b, '.', *len)) && dot > b) {
        *len = (size_t)(dot - b);
    }
}

void
device_type_label(const struct fleet_config *cfg, char *buf, size_t buf_len)
{
    const char *p = cfg->profile ? cfg->profile : "minimal", *s = NULL;
    size_t plen, slen = 0;
    int profile_file = strchr(p, '/') || strstr(p, ".json") || strstr(p, ".xml");

    base_name(p, profile_file, &p, &plen);
    if (cfg->device_type_dir) {
        base_name(cfg->device_type_dir, 0, &s, &slen); /* a recorded type is named after its folder */
    } else if (cfg->schemas_dir) {
        base_name(cfg->schemas_dir, 0, &s, &slen);
    }
    if (!s) {
        snprintf(buf, buf_len, "%.*s", (int)plen, p);
    } else if (plen == 7 && !strncmp(p, "minimal", 7)) {
        snprintf(buf, buf_len, "%.*s", (int)slen, s);
    } else {
        snprintf(buf, buf_len, "%.*s+%.*s", (int)plen, p, (int)slen, s);
    }
}

/* The text of recorded string OID 1.3.6.1.2.1.1.@p leaf.0 (a malloc'd copy), or NULL. */
static char *
recorded_system_string(const struct rec_table *rec, uint32_t leaf)
{
    struct oid oid = {.len = 9, .sub = {1, 3, 6, 1, 2, 1, 1, leaf, 0}};
    uint32_t i = rec_find(rec, &oid);
    const struct rec_entry *e;

    if (i >= rec->count || (e = &rec->entries[i])->tag != BER_OCTET_STRING) {
        return NULL;
    }
    return strndup((const char *)rec->bytes + e->v.ref.off, e->v.ref.len);
}

/*
 * A recorded type's SNMP system group (sysDescr, sysObjectID, sysContact, sysName, sysLocation) is the
 * recorded device's: it becomes the profile's, read before the live objects take those OIDs over (the
 * recorded sysName is then the host name, rewritten per device by the identity rules).
 */
static void
adopt_recorded_system(struct device_type *type)
{
    static const uint32_t leaves[] = {1, 4, 5, 6};
    char **fields[] = {&type->profile->sys_descr, &type->profile->sys_contact,
                       &type->profile->hostname_format, &type->profile->sys_location};
    struct oid oid = {.len = 9, .sub = {1, 3, 6, 1, 2, 1, 1, 2, 0}};
    uint32_t i = rec_find(type->recording, &oid);

    for (size_t k = 0; k < sizeof leaves / sizeof leaves[0]; k++) {
        char *v = recorded_system_string(type->recording, leaves[k]);
        if (v) {
            free(*fields[k]);
            *fields[k] = v;
        }
    }
    if (i < type->recording->count && type->recording->entries[i].tag == BER_OID &&
        type->recording->entries[i].v.ref.len <= OID_MAX_SUBIDS) {
        const struct rec_entry *e = &type->recording->entries[i];
        type->profile->sys_object_id.len = e->v.ref.len;
        memcpy(type->profile->sys_object_id.sub, type->recording->arcs + e->v.ref.off,
               e->v.ref.len * sizeof *type->recording->arcs);
    }
}

/* The profile's state data as SNMP instances, and the recording beside the live objects. */
static enum fleet_err
load_snmp_view(struct device_type *type, const struct fleet_config *cfg, char *err, size_t err_len)
{
    enum fleet_err rc;

    if ((rc = mib_view_init(&type->mib))) {
        return rc;
    }
    if (type->state_tree) {
        if ((rc = smiv2_build(type->state_tree, &type->smiv2_table, err, err_len))) {
            return rc;
        }
        if (type->smiv2_table) {
            uint32_t shadowed = mib_attach_recording(&type->mib, type->smiv2_table);
            log_info("profile %s: serving %u instances of MIB-derived modules (%u left to the live objects)",
                     type->profile->name, (unsigned)type->smiv2_table->count, (unsigned)shadowed);
        }
    }
    if (cfg->snmp_recording || type->profile->recording_file) {
        const char *path = cfg->snmp_recording ? cfg->snmp_recording : type->profile->recording_file;
        uint32_t dropped;
        if ((rc = rec_load(path, &type->recording, err, err_len))) {
            return rc;
        }
        if (type->recorded_dir) {
            adopt_recorded_system(type);
        }
        /* The live objects own their columns, so the device stays consistent with NETCONF. */
        dropped = mib_attach_recording(&type->mib, type->recording) +
                  mib_attach_below(type->recording, type->smiv2_table);
        log_info("%s: serving %u recorded OIDs (%u more left to the live objects)", path,
                 (unsigned)type->recording->count, (unsigned)dropped);
    }
    return FLEET_OK;
}

static enum fleet_err device_type_load_plan(struct device_type *type, const struct fleet_config *cfg,
                                            char *err, size_t err_len);

/*
 * Identity rules: --identity-rules FILE, else a recorded folder's rules.json (placeholders written in its
 * data are filled even without the file).
 */
static enum fleet_err
load_identity(struct device_type *type, const struct fleet_config *cfg, char *err, size_t err_len)
{
    enum fleet_err rc = FLEET_OK;

    if (cfg->identity_rules_file) {
        rc = identity_rules_load(cfg->identity_rules_file, &type->identity, err, err_len);
    } else if (cfg->device_type_dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/rules.json", cfg->device_type_dir);
        if (access(path, F_OK) == 0) {
            rc = identity_rules_load(path, &type->identity, err, err_len);
        } else if (!(type->identity = identity_rules_empty())) {
            rc = FLEET_ERR_NOMEM;
        }
    }
    if (!rc && type->identity && type->identity->count) {
        log_info("type %s: %u identity rules (each device its own values)", type->name,
                 (unsigned)type->identity->count);
    }
    return rc;
}

enum fleet_err
device_type_load(struct device_type *type, const struct fleet_config *cfg, char *err, size_t err_len)
{
    struct fleet_config recorded;
    struct devtype_recorded_paths *paths = NULL;
    enum fleet_err rc;

    memset(type, 0, sizeof *type);
    if (cfg->device_type_dir) {
        /* A recorded folder loads as a vendor folder (yang/, running.xml, snmp.snmprec), then adds its own.
         */
        if (!(paths = malloc(sizeof *paths))) {
            return FLEET_ERR_NOMEM;
        }
        rc = devtype_recorded_plan(cfg, &recorded, paths, err, err_len);
        if (!rc) {
            rc = device_type_load_plan(type, &recorded, err, err_len);
        }
        if (!rc) {
            rc = devtype_recorded_finish(type, &recorded, err, err_len);
        }
        if (!rc) {
            rc = load_snmp_view(type, &recorded, err, err_len);
        }
        free(paths);
        return rc ? rc : load_identity(type, cfg, err, err_len);
    }
    if ((rc = device_type_load_plan(type, cfg, err, err_len)) ||
        (rc = load_snmp_view(type, cfg, err, err_len))) {
        return rc;
    }
    return load_identity(type, cfg, err, err_len);
}

/* Everything of a type but its SNMP view (which needs the state data a recorded type adds). */
static enum fleet_err
device_type_load_plan(struct device_type *type, const struct fleet_config *cfg, char *err, size_t err_len)
{
    enum fleet_err rc;

    if ((rc = profile_load(cfg->profile, FLEETSIM_SCHEMA_DIR "/profiles", FLEETSIM_SCHEMA_DIR, &type->profile,
                           err, err_len))) {
        return rc;
    }
    dyn_traffic_prepare(&type->profile->traffic, &type->traffic);
    {
        char name[128];
        device_type_label(cfg, name, sizeof name);
        if (!(type->name = strdup(name))) {
            return FLEET_ERR_NOMEM;
        }
    }
    {
        /* A profile's own modules are looked up beside it too. */
        char *profile_dir = strdup(type->profile->path ? type->profile->path : ".");
        char *slash = profile_dir ? strrchr(profile_dir, '/') : NULL;
        if (slash) {
            *slash = '\0';
        }
        rc = profile_dir ? schema_set_load_with(&type->schemas, cfg->schemas_dir, &cfg->schema_opts,
                                                slash ? profile_dir : ".", type->profile->schemas,
                                                type->profile->schema_count, err, err_len)
                         : FLEET_ERR_NOMEM;
        free(profile_dir);
    }
    if (!rc) {
        /* The implemented revisions decide where generated data lands (std_revisions.c). */
        type->if_layout = stdrev_interfaces_of(type->schemas.ctx);
        stdrev_note_revisions(type->schemas.ctx, type->name);
    }
    if (rc || (rc = load_initial_config(type, cfg, err, err_len)) ||
        (rc = load_profile_state(type, err, err_len)) ||
        (cfg->device_type_dir && (rc = devtype_recorded_state(type, cfg, err, err_len))) ||
        (type->state_tree && (rc = movers_adopt_interfaces(type, err, err_len)))) {
        return rc;
    }
    /* The user's initial configuration wins over the profile's where both set a node. */
    {
        struct lyd_node *user = type->template_tree;
        type->template_tree = NULL;
        /* A recorded type's configuration is the recorded one only: get-config returns running.xml. */
        rc = cfg->device_type_dir ? FLEET_OK : load_profile_config(type, err, err_len);
        if (!rc && user && lyd_merge_siblings(&type->template_tree, user, 0)) {
            snprintf(err, err_len, "cannot merge the initial configuration: %s",
                     ly_errmsg(type->schemas.ctx));
            rc = FLEET_ERR_INVAL;
        }
        if (!rc && !cfg->device_type_dir) {
            warn_stateless_interfaces(type, user);
        }
        lyd_free_all(user);
        if (rc || (rc = devview_type_init(type)) || (rc = movers_build(type, &type->movers)) ||
            (rc = state_text_build(type, &type->state_text))) {
            return rc;
        }
    }
    if (ly_ctx_get_yanglib_data(type->schemas.ctx, &type->yanglib_tree, "%u",
                                (unsigned)type->schemas.content_id)) {
        snprintf(err, err_len, "cannot build yang-library data: %s", ly_errmsg(type->schemas.ctx));
        return FLEET_ERR_INVAL;
    }
    return FLEET_OK;
}

void
device_type_free(struct device_type *type)
{
    if (!type) {
        return;
    }
    devview_type_close(type);
    state_text_free(type->state_text);
    movers_free(type->movers);
    mib_view_free(&type->mib);
    profile_free(type->profile);
    rec_free(type->recording);
    identity_rules_free(type->identity);
    rec_free(type->smiv2_table);
    lyd_free_all(type->state_tree);
    lyd_free_all(type->template_tree);
    lyd_free_all(type->yanglib_tree);
    schema_set_free(&type->schemas);
    free(type->name);
    free(type->recorded_dir);
    memset(type, 0, sizeof *type);
}
