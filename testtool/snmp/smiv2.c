/*
 * The smiv2 view: walk the state data, and for each leaf with smiv2:oid
 * write a .snmprec line (OID|tag|value), then read those lines as a
 * recording, so the agent serves them exactly as it serves recorded data
 * (counters included, which then move). The YANG type name, read from the
 * parsed module because compiled types forget it, picks the SNMP type.
 */
#include "smiv2.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ber.h"
#include "recording.h"

#define SMIV2_MODULE "ietf-yang-smiv2"

static const char *
ext_arg(const struct lysc_node *n, const char *name)
{
    LY_ARRAY_COUNT_TYPE i;

    LY_ARRAY_FOR(n->exts, i)
    {
        const struct lysc_ext_instance *e = &n->exts[i];
        if (e->def && !strcmp(e->def->name, name) && !strcmp(e->def->module->name, SMIV2_MODULE)) {
            return e->argument;
        }
    }
    return NULL;
}

/* The parsed node matching @p node by name path (NULL behind groupings or augments). */
static const struct lysp_node *
parsed_node(const struct lysc_node *node)
{
    const struct lysc_node *chain[64];
    const struct lysp_node *siblings, *p = NULL;
    int depth = 0;

    for (const struct lysc_node *n = node; n && depth < 64; n = n->parent) {
        chain[depth++] = n;
    }
    if (!node->module->parsed) {
        return NULL;
    }
    siblings = node->module->parsed->data;
    for (int i = depth - 1; i >= 0; i--) {
        for (p = siblings; p && strcmp(p->name, chain[i]->name); p = p->next) {
        }
        if (!p) {
            return NULL;
        }
        siblings = lysp_node_child(p);
    }
    return p;
}

/* The type name of a leaf without prefix ("counter32"), or "" when unknown. */
static const char *
type_name(const struct lysc_node *leaf)
{
    const struct lysp_node *p = parsed_node(leaf);
    const char *name, *colon;

    if (!p || p->nodetype != LYS_LEAF) {
        return "";
    }
    name = ((const struct lysp_node_leaf *)p)->type.name;
    colon = strchr(name, ':');
    return colon ? colon + 1 : name;
}

/* SNMP tag for a leaf's type. */
static uint8_t
snmp_tag(const struct lysc_node *leaf)
{
    const char *t = type_name(leaf);
    const struct lysc_type *type = ((const struct lysc_node_leaf *)leaf)->type;

    if (!strcmp(t, "counter32") || !strcmp(t, "zero-based-counter32")) {
        return BER_COUNTER32;
    }
    if (!strcmp(t, "counter64") || !strcmp(t, "zero-based-counter64") || !strcmp(t, "gauge64")) {
        return BER_COUNTER64;
    }
    if (!strcmp(t, "gauge32")) {
        return BER_GAUGE32;
    }
    if (!strcmp(t, "timeticks") || !strcmp(t, "timestamp")) {
        return BER_TIMETICKS;
    }
    if (!strcmp(t, "object-identifier") || !strcmp(t, "object-identifier-128")) {
        return BER_OID;
    }
    if (!strcmp(t, "ipv4-address") || !strcmp(t, "ipv4-address-no-zone")) {
        return BER_IPADDRESS;
    }
    if (!strcmp(t, "opaque")) {
        return BER_OPAQUE;
    }
    switch (type->basetype) {
    case LY_TYPE_INT8:
    case LY_TYPE_INT16:
    case LY_TYPE_INT32:
    case LY_TYPE_UINT8:
    case LY_TYPE_UINT16:
    case LY_TYPE_ENUM:
    case LY_TYPE_BOOL:
        return BER_INTEGER;
    case LY_TYPE_UINT32:
        return BER_GAUGE32; /* Unsigned32 has Gauge32's tag */
    case LY_TYPE_INT64:
    case LY_TYPE_UINT64:
        return BER_COUNTER64;
    default:
        return BER_OCTET_STRING;
    }
}

/* The value bytes of a string-like leaf (binary decoded). */
static const uint8_t *
term_bytes(const struct lyd_node_term *t, size_t *len)
{
    if (t->value.realtype->basetype == LY_TYPE_BINARY) {
        const struct lyd_value_binary *bin = NULL;
        LYD_VALUE_GET(&t->value, bin);
        *len = bin ? bin->size : 0;
        return bin ? bin->data : (const uint8_t *)"";
    }
    *len = strlen(lyd_get_value(&t->node));
    return (const uint8_t *)lyd_get_value(&t->node);
}

static int
put_hex(FILE *out, const uint8_t *p, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (fprintf(out, "%02x", p[i]) < 0) {
            return -1;
        }
    }
    return 0;
}

/* Append one key's index arcs (RFC 2578 7.7) to @p oid. */
static enum fleet_err
add_index(struct oid *oid, const struct lyd_node_term *key, int implied)
{
    LY_DATA_TYPE base = key->value.realtype->basetype;
    const char *text = lyd_get_value(&key->node);

    if (snmp_tag(key->schema) == BER_OID) {
        struct oid v;
        if (oid_parse(text, &v) || oid->len + v.len + 1 > OID_MAX_SUBIDS) {
            return FLEET_ERR_INVAL;
        }
        if (!implied) {
            oid->sub[oid->len++] = v.len;
        }
        memcpy(oid->sub + oid->len, v.sub, v.len * sizeof *v.sub);
        oid->len += v.len;
        return FLEET_OK;
    }
    if (snmp_tag(key->schema) == BER_IPADDRESS) {
        unsigned a, b, c, d;
        if (sscanf(text, "%u.%u.%u.%u", &a, &b, &c, &d) != 4 || oid->len + 4 > OID_MAX_SUBIDS) {
            return FLEET_ERR_INVAL;
        }
        oid->sub[oid->len++] = a;
        oid->sub[oid->len++] = b;
        oid->sub[oid->len++] = c;
        oid->sub[oid->len++] = d;
        return FLEET_OK;
    }
    switch (base) {
    case LY_TYPE_INT8:
    case LY_TYPE_INT16:
    case LY_TYPE_INT32:
    case LY_TYPE_INT64:
    case LY_TYPE_UINT8:
    case LY_TYPE_UINT16:
    case LY_TYPE_UINT32:
    case LY_TYPE_UINT64: {
        long long v = strtoll(text, NULL, 10);
        if (v < 0 || v > 0xffffffffLL || oid->len + 1 > OID_MAX_SUBIDS) {
            return FLEET_ERR_INVAL; /* an index sub-identifier is 0..2^32-1 */
        }
        oid->sub[oid->len++] = (uint32_t)v;
        return FLEET_OK;
    }
    case LY_TYPE_ENUM:
        if (oid->len + 1 > OID_MAX_SUBIDS || key->value.enum_item->value < 0) {
            return FLEET_ERR_INVAL;
        }
        oid->sub[oid->len++] = (uint32_t)key->value.enum_item->value;
        return FLEET_OK;
    default: {
        size_t len;
        const uint8_t *bytes = term_bytes(key, &len);
        if (oid->len + len + 1 > OID_MAX_SUBIDS) {
            return FLEET_ERR_INVAL;
        }
        if (!implied) {
            oid->sub[oid->len++] = (uint32_t)len;
        }
        for (size_t i = 0; i < len; i++) {
            oid->sub[oid->len++] = bytes[i];
        }
        return FLEET_OK;
    }
    }
}

/* The instance OID of a leaf: its column + the entry's index, or its OID + .0 for a scalar. */
static enum fleet_err
instance_oid(const struct lyd_node *leaf, const char *column, struct oid *oid)
{
    const struct lyd_node *entry = lyd_parent(leaf);
    const char *implied;

    if (oid_parse(column, oid)) {
        return FLEET_ERR_INVAL;
    }
    if (!entry || entry->schema->nodetype != LYS_LIST) {
        if (oid->len + 1 > OID_MAX_SUBIDS) {
            return FLEET_ERR_INVAL;
        }
        oid->sub[oid->len++] = 0;
        return FLEET_OK;
    }
    implied = ext_arg(entry->schema, "implied");
    for (const struct lyd_node *k = lyd_child(entry); k && k->schema && lysc_is_key(k->schema); k = k->next) {
        if (add_index(oid, (const struct lyd_node_term *)k, implied && !strcmp(implied, k->schema->name))) {
            return FLEET_ERR_INVAL;
        }
    }
    return FLEET_OK;
}

static enum fleet_err
write_leaf(FILE *out, const struct lyd_node *leaf, const char *column)
{
    const struct lyd_node_term *t = (const struct lyd_node_term *)leaf;
    uint8_t tag = snmp_tag(leaf->schema);
    struct oid oid;
    char name[OID_MAX_SUBIDS * 11 + 1];
    const char *v = lyd_get_value(leaf);

    if (instance_oid(leaf, column, &oid)) {
        return FLEET_ERR_INVAL;
    }
    oid_format(&oid, name, sizeof name);
    fprintf(out, "%s|", name[0] == '.' ? name + 1 : name);
    switch (tag) {
    case BER_INTEGER:
        if (t->value.realtype->basetype == LY_TYPE_ENUM) {
            fprintf(out, "2|%" PRId32 "\n", t->value.enum_item->value);
        } else if (t->value.realtype->basetype == LY_TYPE_BOOL) {
            fprintf(out, "2|%d\n", t->value.boolean ? 1 : 2); /* TruthValue */
        } else {
            fprintf(out, "2|%s\n", v);
        }
        return FLEET_OK;
    case BER_OCTET_STRING:
    case BER_OPAQUE: {
        size_t len;
        const uint8_t *bytes = term_bytes(t, &len);
        fprintf(out, "%ux|", (unsigned)tag);
        put_hex(out, bytes, len);
        fputc('\n', out);
        return FLEET_OK;
    }
    default:
        fprintf(out, "%u|%s\n", (unsigned)tag, v);
        return FLEET_OK;
    }
}

enum fleet_err
smiv2_build(const struct lyd_node *state, struct rec_table **table, char *err, size_t err_len)
{
    const struct lyd_node *top, *n;
    char *text = NULL;
    size_t text_len = 0;
    FILE *out = open_memstream(&text, &text_len);
    FILE *in = NULL;
    enum fleet_err rc = FLEET_OK;
    size_t lines = 0;

    *table = NULL;
    if (!out) {
        return FLEET_ERR_NOMEM;
    }
    LY_LIST_FOR(state, top)
    {
        LYD_TREE_DFS_BEGIN(top, n)
        {
            const char *column =
                n->schema && n->schema->nodetype == LYS_LEAF ? ext_arg(n->schema, "oid") : NULL;
            const char *access = column ? ext_arg(n->schema, "max-access") : NULL;
            if (column && !(access && (!strcmp(access, "not-accessible") ||
                                       !strcmp(access, "accessible-for-notify")))) {
                if (write_leaf(out, n, column)) {
                    char *path = lyd_path(n, LYD_PATH_STD, NULL, 0);
                    snprintf(err, err_len, "cannot serve %s over SNMP: its OID or index does not fit SMI",
                             path ? path : n->schema->name);
                    free(path);
                    rc = FLEET_ERR_INVAL;
                    break;
                }
                lines++;
            }
            LYD_TREE_DFS_END(top, n);
        }
        if (rc) {
            break;
        }
    }
    if (fclose(out)) {
        rc = rc ? rc : FLEET_ERR_NOMEM;
    }
    if (!rc && lines) {
        if (!(in = fmemopen(text, text_len, "r"))) {
            rc = FLEET_ERR_NOMEM;
        } else {
            rc = rec_read(in, "the profile's state data", table, err, err_len);
            fclose(in);
        }
    }
    free(text);
    return rc;
}
