/*
 * Error paths in libyang's form, and libyang's errors mapped to RFC 6241
 * error-tags (RFC 7950 section 15 for the YANG-specific app-tags).
 */
#include "edit_path.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *
edit_child_path(const struct lyd_node *parent, const char *parent_path, const struct lys_module *parent_mod,
                const struct lys_module *mod, const char *name)
{
    char *ppath = parent ? lyd_path(parent, LYD_PATH_STD, NULL, 0) : NULL;
    const char *base = ppath ? ppath : (parent_path ? parent_path : "");
    char *path = NULL;

    if (parent_mod == mod) {
        if (asprintf(&path, "%s/%s", base, name) < 0) {
            path = NULL;
        }
    } else if (asprintf(&path, "%s/%s:%s", base, mod->name, name) < 0) {
        path = NULL;
    }
    free(ppath);
    return path;
}

/*
 * libyang 2.1 puts the location into the error record as text:
 * 'Data location "/path".' (and 'Schema location ...' for schema errors).
 * The data path is the error-path; a schema location is none.
 */
static char *
libyang_error_path(const char *raw)
{
    const char *start;
    const char *end;

    if (!raw) {
        return NULL;
    }
    if (raw[0] == '/') {
        return strdup(raw);
    }
    start = strstr(raw, "Data location \"");
    if (!start) {
        return NULL;
    }
    start += sizeof "Data location \"" - 1;
    end = strchr(start, '"');
    return end ? strndup(start, (size_t)(end - start)) : NULL;
}

/* The last segment's node name of a data path, for bad-element. */
static char *
last_segment_name(const char *path)
{
    const char *seg = path ? strrchr(path, '/') : NULL;
    const char *colon;
    size_t len;

    if (!seg) {
        return NULL;
    }
    seg++;
    len = strcspn(seg, "[");
    colon = memchr(seg, ':', len);
    if (colon) {
        len -= (size_t)(colon + 1 - seg);
        seg = colon + 1;
    }
    return strndup(seg, len);
}

struct edit_err *
edit_error_from_libyang(const struct ly_ctx *ctx)
{
    const struct ly_err_item *e = ly_err_last(ctx);
    const char *msg = e && e->msg ? e->msg : "Validation failed.";
    const char *apptag = e ? e->apptag : NULL;
    char *path = libyang_error_path(e ? e->path : NULL);
    struct edit_err *err;

    if (apptag && (!strcmp(apptag, "instance-required") || !strcmp(apptag, "missing-choice"))) {
        err = edit_err_data_missing(path, apptag, "%s", msg);
    } else if (apptag) {
        err = edit_err_operation_failed(EDIT_ERR_APP, apptag, path, "%s", msg);
    } else if (strstr(msg, "When condition")) {
        /* RFC 7950 section 8.3.1: a node whose "when" is false is an unknown element. */
        char *name = last_segment_name(path);
        err = edit_err_unknown_element(EDIT_ERR_APP, name ? name : "", path);
        if (err) {
            free(err->message);
            err->message = strdup(msg);
        }
        free(name);
    } else if (strstr(msg, "Mandatory")) {
        err = edit_err_data_missing(path, NULL, "%s", msg);
    } else if (strstr(msg, "leafref") || strstr(msg, "instance-identifier") ||
               strstr(msg, "required instance")) {
        err = edit_err_data_missing(path, "instance-required", "%s", msg);
    } else if (strstr(msg, "Duplicate") || strstr(msg, "unique")) {
        err = edit_err_operation_failed(EDIT_ERR_APP, "data-not-unique", path, "%s", msg);
    } else if (strstr(msg, "Must condition") || strstr(msg, "must")) {
        err = edit_err_operation_failed(EDIT_ERR_APP, "must-violation", path, "%s", msg);
    } else {
        err = edit_err_invalid_value(EDIT_ERR_APP, path, "%s", msg);
    }
    free(path);
    return err;
}
