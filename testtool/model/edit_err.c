/*
 * An edit's error records: one constructor per RFC 6241 appendix A
 * error-tag, so each error carries the tag, type, severity and error-info
 * the RFC lists, whoever asked for the edit (a NETCONF session, an SNMP SET,
 * the control API). Rendering them is the asker's: rpc.c prints rpc-error,
 * mib_set.c maps them to an SNMP error-status.
 */
#include "edit_err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbuf.h"

static char *
vformat(const char *fmt, va_list ap)
{
    char *s = NULL;

    if (!fmt || vasprintf(&s, fmt, ap) < 0) {
        return NULL;
    }
    return s;
}

static char *
dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static struct edit_err *
new_err(enum edit_err_type type, const char *tag, const char *path, char *message)
{
    struct edit_err *e = calloc(1, sizeof *e);

    if (!e) {
        free(message);
        return NULL;
    }
    e->type = type;
    e->tag = tag;
    e->path = dup_or_null(path);
    e->message = message;
    return e;
}

/* error-info children built from (element, value) pairs; values are escaped. */
static char *
info_xml(const char *elem1, const char *val1, const char *elem2, const char *val2)
{
    struct sbuf b = {0};

    if (elem1 && val1) {
        sbuf_printf(&b, "<%s>", elem1);
        sbuf_add_xml(&b, val1);
        sbuf_printf(&b, "</%s>", elem1);
    }
    if (elem2 && val2) {
        sbuf_printf(&b, "<%s>", elem2);
        sbuf_add_xml(&b, val2);
        sbuf_printf(&b, "</%s>", elem2);
    }
    return b.len ? sbuf_take(&b, NULL) : (sbuf_free(&b), NULL);
}

void
edit_err_free(struct edit_err *err)
{
    while (err) {
        struct edit_err *next = err->next;
        free(err->app_tag);
        free(err->path);
        free(err->message);
        free(err->info_xml);
        free(err);
        err = next;
    }
}

void
edit_err_append(struct edit_err **list, struct edit_err *err)
{
    while (*list) {
        list = &(*list)->next;
    }
    *list = err;
}

uint32_t
edit_err_count(const struct edit_err *err)
{
    uint32_t n = 0;

    for (; err; err = err->next) {
        n++;
    }
    return n;
}

const char *
edit_err_type_name(enum edit_err_type type)
{
    static const char *const names[] = {"transport", "rpc", "protocol", "application"};

    return names[type];
}

#define FORMAT_MESSAGE(msg, fmt)                                                                             \
    do {                                                                                                     \
        va_list ap_;                                                                                         \
        va_start(ap_, fmt);                                                                                  \
        msg = vformat(fmt, ap_);                                                                             \
        va_end(ap_);                                                                                         \
    } while (0)

struct edit_err *
edit_err_in_use(enum edit_err_type type, const char *fmt, ...)
{
    char *msg;

    FORMAT_MESSAGE(msg, fmt);
    return new_err(type, "in-use", NULL, msg);
}

struct edit_err *
edit_err_invalid_value(enum edit_err_type type, const char *path, const char *fmt, ...)
{
    char *msg;

    FORMAT_MESSAGE(msg, fmt);
    return new_err(type, "invalid-value", path, msg);
}

struct edit_err *
edit_err_too_big(enum edit_err_type type, const char *fmt, ...)
{
    char *msg;

    FORMAT_MESSAGE(msg, fmt);
    return new_err(type, "too-big", NULL, msg);
}

static struct edit_err *
attr_err(enum edit_err_type type, const char *tag, const char *attr, const char *elem, char *msg)
{
    struct edit_err *e = new_err(type, tag, NULL, msg);

    if (e) {
        e->info_xml = info_xml("bad-attribute", attr, "bad-element", elem);
    }
    return e;
}

struct edit_err *
edit_err_missing_attribute(enum edit_err_type type, const char *attr, const char *elem)
{
    char *msg = NULL;

    if (asprintf(&msg, "Missing attribute \"%s\" of element \"%s\".", attr, elem) < 0) {
        msg = NULL;
    }
    return attr_err(type, "missing-attribute", attr, elem, msg);
}

struct edit_err *
edit_err_bad_attribute(enum edit_err_type type, const char *attr, const char *elem, const char *fmt, ...)
{
    char *msg;

    FORMAT_MESSAGE(msg, fmt);
    return attr_err(type, "bad-attribute", attr, elem, msg);
}

struct edit_err *
edit_err_unknown_attribute(enum edit_err_type type, const char *attr, const char *elem)
{
    char *msg = NULL;

    if (asprintf(&msg, "Unknown attribute \"%s\" of element \"%s\".", attr, elem) < 0) {
        msg = NULL;
    }
    return attr_err(type, "unknown-attribute", attr, elem, msg);
}

static struct edit_err *
elem_err(enum edit_err_type type, const char *tag, const char *elem, const char *path, char *msg)
{
    struct edit_err *e = new_err(type, tag, path, msg);

    if (e) {
        e->info_xml = info_xml("bad-element", elem, NULL, NULL);
    }
    return e;
}

struct edit_err *
edit_err_missing_element(enum edit_err_type type, const char *elem, const char *path)
{
    char *msg = NULL;

    if (asprintf(&msg, "Missing element \"%s\".", elem) < 0) {
        msg = NULL;
    }
    return elem_err(type, "missing-element", elem, path, msg);
}

struct edit_err *
edit_err_bad_element(enum edit_err_type type, const char *elem, const char *path, const char *fmt, ...)
{
    char *msg;

    FORMAT_MESSAGE(msg, fmt);
    return elem_err(type, "bad-element", elem, path, msg);
}

struct edit_err *
edit_err_unknown_element(enum edit_err_type type, const char *elem, const char *path)
{
    char *msg = NULL;

    if (asprintf(&msg, "Unknown element \"%s\".", elem) < 0) {
        msg = NULL;
    }
    return elem_err(type, "unknown-element", elem, path, msg);
}

struct edit_err *
edit_err_unknown_namespace(enum edit_err_type type, const char *elem, const char *ns)
{
    char *msg = NULL;
    struct edit_err *e;

    if (asprintf(&msg, "Unknown namespace \"%s\" of element \"%s\".", ns ? ns : "", elem) < 0) {
        msg = NULL;
    }
    e = new_err(type, "unknown-namespace", NULL, msg);
    if (e) {
        e->info_xml = info_xml("bad-element", elem, "bad-namespace", ns ? ns : "");
    }
    return e;
}

struct edit_err *
edit_err_access_denied(enum edit_err_type type, const char *fmt, ...)
{
    char *msg;

    FORMAT_MESSAGE(msg, fmt);
    return new_err(type, "access-denied", NULL, msg);
}

struct edit_err *
edit_err_lock_denied(uint32_t holder_session_id, const char *fmt, ...)
{
    char *msg;
    char id[16];
    struct edit_err *e;

    FORMAT_MESSAGE(msg, fmt);
    e = new_err(EDIT_ERR_PROTOCOL, "lock-denied", NULL, msg);
    if (e) {
        snprintf(id, sizeof id, "%u", (unsigned)holder_session_id);
        e->info_xml = info_xml("session-id", id, NULL, NULL);
    }
    return e;
}

struct edit_err *
edit_err_resource_denied(enum edit_err_type type, const char *fmt, ...)
{
    char *msg;

    FORMAT_MESSAGE(msg, fmt);
    return new_err(type, "resource-denied", NULL, msg);
}

struct edit_err *
edit_err_data_exists(const char *path)
{
    char *msg = NULL;

    if (asprintf(&msg, "Data \"%s\" already exists.", path ? path : "") < 0) {
        msg = NULL;
    }
    return new_err(EDIT_ERR_APP, "data-exists", path, msg);
}

struct edit_err *
edit_err_data_missing(const char *path, const char *app_tag, const char *fmt, ...)
{
    char *msg;
    struct edit_err *e;

    FORMAT_MESSAGE(msg, fmt);
    e = new_err(EDIT_ERR_APP, "data-missing", path, msg);
    if (e && app_tag) {
        e->app_tag = strdup(app_tag);
    }
    return e;
}

struct edit_err *
edit_err_operation_not_supported(enum edit_err_type type, const char *fmt, ...)
{
    char *msg;

    FORMAT_MESSAGE(msg, fmt);
    return new_err(type, "operation-not-supported", NULL, msg);
}

struct edit_err *
edit_err_operation_failed(enum edit_err_type type, const char *app_tag, const char *path, const char *fmt,
                          ...)
{
    char *msg;
    struct edit_err *e;

    FORMAT_MESSAGE(msg, fmt);
    e = new_err(type, "operation-failed", path, msg);
    if (e && app_tag) {
        e->app_tag = strdup(app_tag);
    }
    return e;
}

struct edit_err *
edit_err_malformed_message(const char *fmt, ...)
{
    char *msg;

    FORMAT_MESSAGE(msg, fmt);
    return new_err(EDIT_ERR_RPC, "malformed-message", NULL, msg);
}
