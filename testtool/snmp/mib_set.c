/*
 * SET: every varbind is checked first (object, type, length, value), then
 * all of them become one edit of running, applied with rollback, so the SET
 * is atomic across its varbinds (RFC 3416 4.2.5). The edit goes through the
 * same engine as NETCONF's edit-config, so NETCONF sees the change at once
 * and SNMP sees NETCONF's; a change of running is an event (event.h).
 * snmpEnableAuthenTraps is the device's own state, not configuration: it is
 * written once the edit went through, so the SET stays atomic.
 */
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "device_ctl.h"
#include "devview.h"
#include "edit.h"
#include "edit_err.h"
#include "event.h"
#include "identity.h"
#include "lock.h"
#include "mib_set.h"
#include "sbuf.h"

/* DisplayString (RFC 2579) and ifAlias (RFC 2863) length limits. */
#define SET_DISPLAY_STRING_MAX 255
#define SET_IF_ALIAS_MAX       64

/* Object ids, as mib_values.c numbers them, of the writable objects. */
struct set_item {
    const struct mib_object *obj;   /* the object written */
    uint32_t row;                   /* its row (0 for scalars) */
    const struct spdu_value *value; /* the new value (points into the request) */
};

static int
display_string_ok(const struct spdu_value *v, size_t max)
{
    if (v->v.bytes.len > max) {
        return 0;
    }
    for (size_t i = 0; i < v->v.bytes.len; i++) {
        uint8_t c = v->v.bytes.ptr[i];
        if (c < 0x20 && c != '\r' && c != '\n' && c != '\t') {
            return 0; /* libyang's string type would refuse control characters anyway */
        }
        if (c >= 0x80) {
            return 0; /* DisplayString is NVT ASCII */
        }
    }
    return 1;
}

/* Check one varbind. @return 0 or an error-status (v2 numbering). */
static int
check_item(struct mib_req *rq, const struct spdu_binding *b, struct set_item *item)
{
    uint32_t row;
    int is_object;
    const struct mib_object *o = mib_find(rq, &b->name, &row, &is_object);

    if (!o) {
        return is_object ? SPDU_NO_CREATION : SPDU_NO_CREATION;
    }
    if (!o->writable) {
        return SPDU_NOT_WRITABLE;
    }
    if (b->value.tag != o->tag) {
        return SPDU_WRONG_TYPE;
    }
    if (o->tag == BER_OCTET_STRING) {
        size_t max = strcmp(mib_object_name(o), "ifAlias") ? SET_DISPLAY_STRING_MAX : SET_IF_ALIAS_MAX;
        if (b->value.v.bytes.len > max) {
            return SPDU_WRONG_LENGTH;
        }
        if (!display_string_ok(&b->value, max)) {
            return SPDU_WRONG_VALUE;
        }
    } else if (o->tag == BER_INTEGER) {
        /* ifAdminStatus: up(1) or down(2), testing(3) not supported here; snmpEnableAuthenTraps: enabled(1)
         * or disabled(2). */
        if (b->value.v.i != 1 && b->value.v.i != 2) {
            return SPDU_WRONG_VALUE;
        }
    }
    item->obj = o;
    item->row = row;
    item->value = &b->value;
    return 0;
}

static void
add_bytes_xml(struct sbuf *x, const struct spdu_value *v)
{
    char buf[SET_DISPLAY_STRING_MAX + 1];
    memcpy(buf, v->v.bytes.ptr, v->v.bytes.len);
    buf[v->v.bytes.len] = '\0';
    sbuf_add_xml(x, buf);
}

/* The edit that carries @p items, as XML for the running datastore. */
static char *
edit_xml(struct mib_req *rq, const struct set_item *items, uint32_t count)
{
    const struct profile *p = rq->dev->type->profile;
    struct sbuf x = {0};
    int system_open = 0;

    for (uint32_t i = 0; i < count; i++) {
        const char *name = mib_object_name(items[i].obj);
        const char *leaf = !strcmp(name, "sysContact")    ? "contact"
                           : !strcmp(name, "sysName")     ? "hostname"
                           : !strcmp(name, "sysLocation") ? "location"
                                                          : NULL;
        if (!leaf) {
            continue;
        }
        if (!system_open) {
            sbuf_adds(&x, "<system xmlns=\"urn:ietf:params:xml:ns:yang:ietf-system\">");
            system_open = 1;
        }
        sbuf_printf(&x, "<%s>", leaf);
        add_bytes_xml(&x, items[i].value);
        sbuf_printf(&x, "</%s>", leaf);
    }
    if (system_open) {
        sbuf_adds(&x, "</system>");
    }
    sbuf_adds(&x, "<interfaces xmlns=\"urn:ietf:params:xml:ns:yang:ietf-interfaces\" "
                  "xmlns:ianaift=\"urn:ietf:params:xml:ns:yang:iana-if-type\">");
    for (uint32_t i = 0; i < count; i++) {
        const char *name = mib_object_name(items[i].obj);
        const struct profile_interface *pi;
        if (items[i].obj->table != MIB_IF_TABLE) {
            continue;
        }
        pi = &p->ifs[items[i].row - 1];
        /* The type goes along so that a SET on an interface deleted over NETCONF recreates it validly. */
        sbuf_adds(&x, "<interface><name>");
        sbuf_add_xml(&x, pi->name);
        sbuf_printf(&x, "</name><type>ianaift:%s</type>", pi->type);
        if (!strcmp(name, "ifAdminStatus")) {
            sbuf_printf(&x, "<enabled>%s</enabled>", items[i].value->v.i == 1 ? "true" : "false");
        } else {
            sbuf_adds(&x, "<description>");
            add_bytes_xml(&x, items[i].value);
            sbuf_adds(&x, "</description>");
        }
        sbuf_adds(&x, "</interface>");
    }
    sbuf_adds(&x, "</interfaces>");
    return sbuf_take(&x, NULL);
}

int
mib_set(struct mib_req *rq, const struct spdu_pdu *pdu, uint32_t *error_index)
{
    const struct device_type *type = rq->dev->type;
    struct device *dev = rq->dev;
    struct ly_ctx *ctx = type->schemas.ctx;
    struct set_item items[MIB_SET_MAX_BINDINGS];
    struct spdu_binding bindings[MIB_SET_MAX_BINDINGS];
    struct spdu_binding_iter it;
    struct lyd_node *config = NULL, **tree;
    struct edit_err *errs = NULL, *busy;
    char *xml = NULL;
    uint32_t count = 0;
    int status = SPDU_NO_ERROR, changed = 0;

    *error_index = 0;
    if (pdu->binding_count > MIB_SET_MAX_BINDINGS) {
        return SPDU_TOO_BIG;
    }
    /* Test: every varbind, before anything changes. */
    spdu_binding_iter_init(&it, pdu);
    while (spdu_binding_next(&it, &bindings[count]) == FLEET_OK) {
        if ((status = check_item(rq, &bindings[count], &items[count]))) {
            *error_index = count + 1;
            return status;
        }
        count++;
    }
    if (!count) {
        return SPDU_NO_ERROR;
    }
    /* The state snmpEnableAuthenTraps goes into, made now so that nothing can fail after the edit. */
    for (uint32_t i = 0; i < count; i++) {
        if (!strcmp(mib_object_name(items[i].obj), "snmpEnableAuthenTraps") && !devact_ctl(dev)) {
            *error_index = i + 1;
            return SPDU_RESOURCE_UNAVAILABLE;
        }
    }
    /* A NETCONF session's lock on running keeps SNMP out too. */
    if ((busy = lock_check_write(&dev->ds, DS_RUNNING, 0))) {
        edit_err_free(busy);
        *error_index = 1;
        return SPDU_RESOURCE_UNAVAILABLE;
    }
    /* Commit: one edit of running, rolled back as a whole if any part fails. */
    xml = edit_xml(rq, items, count);
    if (!xml || lyd_parse_data_mem(ctx, xml, LYD_XML, LYD_PARSE_ONLY | LYD_PARSE_STRICT | LYD_PARSE_NO_STATE,
                                   0, &config)) {
        status = SPDU_COMMIT_FAILED;
        *error_index = 1;
        goto cleanup;
    }
    {
        struct edit_request req = {.config = config,
                                   .default_op = EDIT_OP_MERGE,
                                   .test_option = EDIT_TEST_THEN_SET,
                                   .error_option = EDIT_ROLLBACK_ON_ERROR};
        if (identity_ds_own(dev, DS_RUNNING, &tree) ||
            edit_apply(&type->schemas, tree, &req, &errs, &changed) || errs) {
            status = SPDU_COMMIT_FAILED;
            *error_index = 1;
            goto cleanup;
        }
    }
    for (uint32_t i = 0; i < count; i++) {
        if (!strcmp(mib_object_name(items[i].obj), "snmpEnableAuthenTraps")) {
            dev->ctl->authen_traps = (uint8_t)items[i].value->v.i;
        }
    }
    devview_running_changed(dev, rq->now_ms);
    if (changed) {
        event_config_changed(dev, rq->now_ms);
    }
    rq->cfg = devview_cfg(dev);
    if (!rq->cfg) {
        status = SPDU_GEN_ERR;
    }

cleanup:
    edit_err_free(errs);
    lyd_free_all(config);
    free(xml);
    return status;
}
