/*
 * The trap catalog reader and builder (see trap_catalog.h). The JSON is
 * read by common/json_read.c; this file checks the shape, names, types and
 * limits, and says which notification and field is wrong. Every template is
 * checked at load by building it with the largest values its placeholders
 * can take, so building at send time cannot fail on a well-read catalog.
 */
#include "trap_catalog.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ber.h"
#include "file_read.h"
#include "json_read.h"

/* The value types of the file, and their BER tags (RFC 2578 section 7.1). */
static const struct {
    const char *name;
    uint8_t tag;
} tc_types[] = {
    {"integer", BER_INTEGER},     {"unsigned", BER_GAUGE32},
    {"gauge", BER_GAUGE32},       {"counter32", BER_COUNTER32},
    {"counter64", BER_COUNTER64}, {"timeticks", BER_TIMETICKS},
    {"string", BER_OCTET_STRING}, {"oid", BER_OID},
    {"ipaddress", BER_IPADDRESS},
};

/* The placeholder at @p p (just after '{'): its length up to '}', or 0 when it is not a known one. */
static size_t
tc_placeholder(const char *p, int in_oid)
{
    static const char *const names[] = {"ifindex}", "num}", "peer}", "if}", "host}"};
    size_t most = in_oid ? 3 : sizeof names / sizeof names[0]; /* an OID takes numbers (an address: 4) */

    for (size_t i = 0; i < most; i++) {
        size_t n = strlen(names[i]);
        if (!strncmp(p, names[i], n)) {
            return n;
        }
    }
    return 0;
}

/* Expand @p tmpl into @p buf (at most @p buf_len - 1 bytes and a NUL). @return 0, -1 when it is too long
 * or names an unknown placeholder. */
static int
tc_expand(const char *tmpl, int in_oid, const struct trap_catalog_vars *vars, char *buf, size_t buf_len)
{
    size_t len = 0;
    char tmp[32];

    for (const char *p = tmpl; *p;) {
        const char *put;
        size_t n;
        if (*p != '{') {
            if (len + 1 >= buf_len) {
                return -1;
            }
            buf[len++] = *p++;
            continue;
        }
        n = tc_placeholder(p + 1, in_oid);
        if (!n) {
            return -1;
        }
        if (!strncmp(p + 1, "ifindex}", 8)) {
            snprintf(tmp, sizeof tmp, "%" PRIu32, vars->ifindex);
            put = tmp;
        } else if (!strncmp(p + 1, "num}", 4)) {
            snprintf(tmp, sizeof tmp, "%u", (unsigned)(1 + (vars->draw >> 16) % 65535));
            put = tmp;
        } else if (!strncmp(p + 1, "if}", 3)) {
            put = vars->ifname ? vars->ifname : "-";
        } else if (!strncmp(p + 1, "host}", 5)) {
            put = vars->host ? vars->host : "-";
        } else {
            snprintf(tmp, sizeof tmp, "192.0.2.%u", (unsigned)(1 + (vars->draw >> 8) % 254));
            put = tmp;
        }
        p += n + 1;
        n = strlen(put);
        if (len + n >= buf_len) {
            return -1;
        }
        memcpy(buf + len, put, n);
        len += n;
    }
    buf[len] = '\0';
    return 0;
}

/* A whole unsigned number in @p s no larger than @p most. */
static int
tc_number(const char *s, uint64_t most, uint64_t *out)
{
    char *end;
    unsigned long long v;

    if (*s < '0' || *s > '9') {
        return -1;
    }
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || *end || v > most) {
        return -1;
    }
    *out = v;
    return 0;
}

/* Build object @p i of @p t into @p out. */
static enum fleet_err
tc_build_object(const struct trap_object_template *o, const struct trap_catalog_vars *vars, size_t i,
                struct trap_catalog_built *out)
{
    char text[TRAP_CATALOG_MAX_TEXT_BYTES + 1];
    struct trap_varbind *vb = &out->varbinds[i];
    uint64_t u;

    if (tc_expand(o->oid, 1, vars, text, sizeof text) || oid_parse(text, &out->names[i])) {
        return FLEET_ERR_INVAL;
    }
    vb->name = &out->names[i];
    vb->value.tag = o->type;
    if (tc_expand(o->value, 0, vars, out->text[i], sizeof out->text[i])) {
        return FLEET_ERR_INVAL;
    }
    switch (o->type) {
    case BER_INTEGER:
        if (out->text[i][0] == '-' ? tc_number(out->text[i] + 1, 2147483648u, &u)
                                   : tc_number(out->text[i], INT32_MAX, &u)) {
            return FLEET_ERR_INVAL;
        }
        vb->value.v.i = out->text[i][0] == '-' ? -(int64_t)u : (int64_t)u;
        break;
    case BER_GAUGE32:
    case BER_COUNTER32:
    case BER_TIMETICKS:
    case BER_COUNTER64:
        if (tc_number(out->text[i], o->type == BER_COUNTER64 ? UINT64_MAX : UINT32_MAX, &u)) {
            return FLEET_ERR_INVAL;
        }
        vb->value.v.u = u;
        break;
    case BER_OID:
        if (oid_parse(out->text[i], &out->oid_values[i])) {
            return FLEET_ERR_INVAL;
        }
        vb->value.v.oid = &out->oid_values[i];
        break;
    case BER_IPADDRESS: {
        unsigned a, b, c, d;
        char extra;
        if (sscanf(out->text[i], "%u.%u.%u.%u%c", &a, &b, &c, &d, &extra) != 4 || a > 255 || b > 255 ||
            c > 255 || d > 255) {
            return FLEET_ERR_INVAL;
        }
        out->addr[i][0] = (uint8_t)a;
        out->addr[i][1] = (uint8_t)b;
        out->addr[i][2] = (uint8_t)c;
        out->addr[i][3] = (uint8_t)d;
        vb->value.v.bytes.ptr = out->addr[i];
        vb->value.v.bytes.len = 4;
        break;
    }
    default: /* BER_OCTET_STRING */
        vb->value.v.bytes.ptr = (const uint8_t *)out->text[i];
        vb->value.v.bytes.len = strlen(out->text[i]);
        break;
    }
    return FLEET_OK;
}

enum fleet_err
trap_catalog_build(const struct trap_template *t, const struct trap_catalog_vars *vars,
                   struct trap_catalog_built *out)
{
    out->varbind_count = 0;
    for (uint32_t i = 0; i < t->object_count; i++) {
        if (tc_build_object(&t->objects[i], vars, i, out)) {
            return FLEET_ERR_INVAL;
        }
        out->varbind_count = i + 1;
    }
    return FLEET_OK;
}

/* Object @p k of notification @p index from @p m. */
static enum fleet_err
tc_object(const struct jsonr_value *m, uint32_t index, uint32_t k, struct trap_object_template *o, char *err,
          size_t err_len)
{
    const char *oid = jsonr_get_str(m, "oid"), *type = jsonr_get_str(m, "type");
    const struct jsonr_value *value = jsonr_get(m, "value");
    char num[32];
    const char *value_text;

    if (m->type != JSONR_OBJECT || !oid || !type || !value || m->count != 3) {
        snprintf(err, err_len,
                 "trap %u object %u: an object with \"oid\", \"type\" and \"value\" and nothing else", index,
                 k);
        return FLEET_ERR_INVAL;
    }
    o->type = 0;
    for (size_t i = 0; i < sizeof tc_types / sizeof tc_types[0]; i++) {
        if (!strcmp(type, tc_types[i].name)) {
            o->type = tc_types[i].tag;
        }
    }
    if (!o->type) {
        snprintf(
            err, err_len,
            "trap %u object %u: \"type\" must be integer, unsigned, gauge, counter32, counter64, timeticks, "
            "string, oid or ipaddress",
            index, k);
        return FLEET_ERR_INVAL;
    }
    if (value->type == JSONR_NUMBER && value->is_u64) {
        snprintf(num, sizeof num, "%" PRIu64, value->u64);
        value_text = num;
    } else if (value->type == JSONR_NUMBER && value->num < 0 && value->num >= INT32_MIN &&
               value->num == (double)(int64_t)value->num) {
        snprintf(num, sizeof num, "%" PRId64, (int64_t)value->num);
        value_text = num;
    } else if (value->type == JSONR_STRING) {
        value_text = value->str;
    } else {
        snprintf(err, err_len, "trap %u object %u: \"value\" must be a string or an integer", index, k);
        return FLEET_ERR_INVAL;
    }
    if (strlen(oid) > TRAP_CATALOG_MAX_TEXT_BYTES || strlen(value_text) > TRAP_CATALOG_MAX_TEXT_BYTES) {
        snprintf(err, err_len, "trap %u object %u: \"oid\" and \"value\" take at most %u bytes", index, k,
                 TRAP_CATALOG_MAX_TEXT_BYTES);
        return FLEET_ERR_INVAL;
    }
    o->oid = strdup(oid);
    o->value = strdup(value_text);
    if (!o->oid || !o->value) {
        snprintf(err, err_len, "out of memory reading the catalog");
        return FLEET_ERR_NOMEM;
    }
    return FLEET_OK;
}

/* Check that @p t builds with the largest and the smallest values of its placeholders. */
static enum fleet_err
tc_check_builds(const struct trap_template *t, uint32_t index, char *err, size_t err_len)
{
    static const char longest_if[] = "TenGigabitEthernet0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0";
    struct trap_catalog_vars big = {
        .host = longest_if, .ifname = longest_if, .ifindex = 2147483647u, .draw = UINT64_MAX};
    struct trap_catalog_vars small = {.host = "h", .ifname = NULL, .ifindex = 1, .draw = 0};
    struct trap_catalog_built *b = malloc(sizeof *b);
    enum fleet_err rc = FLEET_OK;

    if (!b) {
        snprintf(err, err_len, "out of memory reading the catalog");
        return FLEET_ERR_NOMEM;
    }
    for (uint32_t k = 0; k < t->object_count; k++) {
        if (tc_build_object(&t->objects[k], &big, k, b) || tc_build_object(&t->objects[k], &small, k, b)) {
            snprintf(
                err, err_len,
                "trap %u object %u: \"%.60s\" = \"%.60s\" does not build (an OID of numbers, dots, "
                "{ifindex}, "
                "{num} and {peer}; a value its type holds; placeholders {ifindex} {num} {if} {host} {peer})",
                index, k, t->objects[k].oid, t->objects[k].value);
            rc = FLEET_ERR_INVAL;
            break;
        }
    }
    free(b);
    return rc;
}

/* Fill @p t from the JSON object @p m (notification @p index). */
static enum fleet_err
tc_template(const struct jsonr_value *m, uint32_t index, struct trap_template *t, char *err, size_t err_len)
{
    const char *id = jsonr_get_str(m, "id"), *oid = jsonr_get_str(m, "oid");
    const struct jsonr_value *objects = jsonr_get(m, "objects");
    uint64_t weight = 1;
    enum fleet_err rc;
    uint32_t k = 0;

    if (m->type != JSONR_OBJECT) {
        snprintf(err, err_len, "trap %u is not an object", index);
        return FLEET_ERR_INVAL;
    }
    for (const struct jsonr_value *c = m->child; c; c = c->next) {
        if (strcmp(c->key, "id") && strcmp(c->key, "oid") && strcmp(c->key, "weight") &&
            strcmp(c->key, "objects")) {
            snprintf(err, err_len, "trap %u: unknown member \"%.40s\"", index, c->key);
            return FLEET_ERR_INVAL;
        }
    }
    if (!id || !*id || strlen(id) > 64 || strpbrk(id, " \t\r\n")) {
        snprintf(err, err_len, "trap %u: \"id\" must be a word of 1 to 64 characters", index);
        return FLEET_ERR_INVAL;
    }
    if (!oid || oid_parse(oid, &t->trap_oid) || t->trap_oid.len < 3) {
        snprintf(err, err_len, "trap %u: \"oid\" must be the notification's OID (1.3.6.1.6.3.1.1.5.3)",
                 index);
        return FLEET_ERR_INVAL;
    }
    if (jsonr_get(m, "weight") && (jsonr_get_u64(m, "weight", &weight) || weight > TRAP_CATALOG_MAX_WEIGHT)) {
        snprintf(err, err_len, "trap %u: \"weight\" must be 0..%u", index, TRAP_CATALOG_MAX_WEIGHT);
        return FLEET_ERR_INVAL;
    }
    t->weight = (uint32_t)weight;
    if (objects && (objects->type != JSONR_ARRAY || objects->count > TRAP_CATALOG_MAX_OBJECTS)) {
        snprintf(err, err_len, "trap %u: \"objects\" must be an array of at most %u objects", index,
                 TRAP_CATALOG_MAX_OBJECTS);
        return FLEET_ERR_INVAL;
    }
    if (!(t->id = strdup(id)) ||
        (objects && objects->count && !(t->objects = calloc(objects->count, sizeof *t->objects)))) {
        snprintf(err, err_len, "out of memory reading the catalog");
        return FLEET_ERR_NOMEM;
    }
    for (const struct jsonr_value *o = objects ? objects->child : NULL; o; o = o->next, k++) {
        t->object_count = k + 1; /* freed with the catalog whatever happens next */
        if ((rc = tc_object(o, index, k, &t->objects[k], err, err_len))) {
            return rc;
        }
    }
    return tc_check_builds(t, index, err, err_len);
}

enum fleet_err
trap_catalog_parse(const char *text, size_t len, struct trap_catalog **out, char *err, size_t err_len)
{
    struct jsonr_value *doc = NULL;
    struct trap_catalog *cat = NULL;
    const struct jsonr_value *traps;
    enum fleet_err rc = FLEET_OK;
    uint32_t i = 0;

    *out = NULL;
    if (len > TRAP_CATALOG_MAX_BYTES) {
        snprintf(err, err_len, "larger than %u bytes", TRAP_CATALOG_MAX_BYTES);
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    if (jsonr_parse(text, len, &doc, err, err_len)) {
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    traps = jsonr_get(doc, "traps");
    if (doc->type != JSONR_OBJECT || !traps || traps->type != JSONR_ARRAY || !traps->count) {
        snprintf(err, err_len, "a trap catalog is an object with a non-empty \"traps\" array");
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    if (traps->count > TRAP_CATALOG_MAX_TRAPS) {
        snprintf(err, err_len, "more than %u traps", TRAP_CATALOG_MAX_TRAPS);
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    if (!(cat = calloc(1, sizeof *cat)) || !(cat->traps = calloc(traps->count, sizeof *cat->traps))) {
        snprintf(err, err_len, "out of memory reading the catalog");
        rc = FLEET_ERR_NOMEM;
        goto cleanup;
    }
    for (const struct jsonr_value *m = traps->child; m; m = m->next, i++) {
        cat->count = i + 1;
        if ((rc = tc_template(m, i, &cat->traps[i], err, err_len))) {
            goto cleanup;
        }
        for (uint32_t k = 0; k < i; k++) {
            if (!strcmp(cat->traps[k].id, cat->traps[i].id)) {
                snprintf(err, err_len, "trap %u: id \"%s\" is trap %u's too", i, cat->traps[i].id, k);
                rc = FLEET_ERR_INVAL;
                goto cleanup;
            }
        }
        cat->total_weight += cat->traps[i].weight;
    }
    if (!cat->total_weight) {
        snprintf(err, err_len, "every trap has weight 0: nothing to draw");
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    *out = cat;
    cat = NULL;
cleanup:
    trap_catalog_free(cat);
    jsonr_free(doc);
    return rc;
}

enum fleet_err
trap_catalog_load(const char *path, struct trap_catalog **out, char *err, size_t err_len)
{
    char *text = NULL;
    size_t len = 0;
    char why[256];
    enum file_read_failure f = file_read_all(path, TRAP_CATALOG_MAX_BYTES, &text, &len);
    enum fleet_err rc;

    *out = NULL;
    if (f != FILE_READ_OK) {
        snprintf(err, err_len, "trap catalog %s: %s", path, file_read_reason(f, TRAP_CATALOG_MAX_BYTES));
        return FLEET_ERR_INVAL;
    }
    rc = trap_catalog_parse(text, len, out, why, sizeof why);
    if (rc) {
        snprintf(err, err_len, "trap catalog %s: %s", path, why);
    }
    free(text);
    return rc;
}

void
trap_catalog_free(struct trap_catalog *cat)
{
    if (!cat) {
        return;
    }
    for (uint32_t i = 0; cat->traps && i < cat->count; i++) {
        for (uint32_t k = 0; cat->traps[i].objects && k < cat->traps[i].object_count; k++) {
            free(cat->traps[i].objects[k].oid);
            free(cat->traps[i].objects[k].value);
        }
        free(cat->traps[i].objects);
        free(cat->traps[i].id);
    }
    free(cat->traps);
    free(cat);
}

const struct trap_template *
trap_catalog_pick(const struct trap_catalog *cat, uint64_t draw)
{
    uint64_t x = draw % cat->total_weight;

    /* A linear walk: catalogs hold tens of traps (a cumulative table as syslog's if one grows large). */
    for (uint32_t i = 0; i < cat->count; i++) {
        if (x < cat->traps[i].weight) {
            return &cat->traps[i];
        }
        x -= cat->traps[i].weight;
    }
    return &cat->traps[cat->count - 1];
}

const struct trap_template *
trap_catalog_find(const struct trap_catalog *cat, const char *id)
{
    for (uint32_t i = 0; cat && i < cat->count; i++) {
        if (!strcmp(cat->traps[i].id, id)) {
            return &cat->traps[i];
        }
    }
    return NULL;
}
