/*
 * Placeholder expansion for edit content; see template.h.
 */
#include "template.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libyang/libyang.h>

#include "xmlguard.h"

static const struct {
    const char *name;
    enum template_kind kind;
} placeholders[] = {
    {"{PHYS_ADDR}", TPL_PHYS_ADDR}, {"{MSG_ID}", TPL_MSG_ID}, {"{INDEX}", TPL_INDEX},
    {"{SESSION}", TPL_SESSION},     {"{DEVICE}", TPL_DEVICE},
};

static int
add_part(struct template *t, struct template_part part)
{
    struct template_part *grown = realloc(t->parts, (t->part_count + 1) * sizeof *grown);

    if (!grown) {
        return -1;
    }
    t->parts = grown;
    t->parts[t->part_count++] = part;
    return 0;
}

int
template_init(struct template *t, char *text)
{
    const char *p = text;
    const char *run = text;

    memset(t, 0, sizeof *t);
    t->text = text;
    while ((p = strchr(p, '{'))) {
        size_t i;
        for (i = 0; i < sizeof placeholders / sizeof placeholders[0]; i++) {
            if (!strncmp(p, placeholders[i].name, strlen(placeholders[i].name))) {
                break;
            }
        }
        if (i == sizeof placeholders / sizeof placeholders[0]) {
            p++;
            continue;
        }
        if ((p > run && add_part(t, (struct template_part){TPL_TEXT, run, (size_t)(p - run)})) ||
            add_part(t, (struct template_part){placeholders[i].kind, NULL, 0})) {
            template_free(t);
            return -1;
        }
        p += strlen(placeholders[i].name);
        run = p;
    }
    if (*run && add_part(t, (struct template_part){TPL_TEXT, run, strlen(run)})) {
        template_free(t);
        return -1;
    }
    return 0;
}

void
template_free(struct template *t)
{
    free(t->text);
    free(t->parts);
    memset(t, 0, sizeof *t);
}

void
template_expand(const struct template *t, const struct template_vars *v, struct sbuf *b)
{
    for (size_t i = 0; i < t->part_count; i++) {
        const struct template_part *part = &t->parts[i];
        uint64_t mac;
        switch (part->kind) {
        case TPL_TEXT:
            sbuf_add(b, part->text, part->len);
            break;
        case TPL_PHYS_ADDR:
            mac = (TEMPLATE_PHYS_ADDR_BASE + v->index) & 0xffffffffffffull;
            sbuf_printf(b, "%02x:%02x:%02x:%02x:%02x:%02x", (unsigned)(mac >> 40) & 255,
                        (unsigned)(mac >> 32) & 255, (unsigned)(mac >> 24) & 255, (unsigned)(mac >> 16) & 255,
                        (unsigned)(mac >> 8) & 255, (unsigned)mac & 255);
            break;
        case TPL_MSG_ID:
            sbuf_printf(b, "%" PRIu64, v->msg_id);
            break;
        case TPL_INDEX:
            sbuf_printf(b, "%" PRIu64, v->index);
            break;
        case TPL_SESSION:
            sbuf_printf(b, "%" PRIu32, v->session);
            break;
        case TPL_DEVICE:
            sbuf_printf(b, "%" PRIu32, v->device);
            break;
        }
    }
}

int
template_check(const struct template *t, struct ly_ctx *ctx, char *err, size_t len)
{
    struct template_vars v = {.index = 0, .msg_id = 1, .session = 0, .device = 0};
    struct sbuf b = {0};
    struct lyd_node *tree = NULL;
    uint32_t old_log;
    unsigned line = 0;
    int rc = -1;

    /* On the first line, so that libyang's line numbers are the template's. */
    sbuf_adds(&b, "<config xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\">");
    template_expand(t, &v, &b);
    sbuf_adds(&b, "</config>");
    if (b.failed) {
        snprintf(err, len, "out of memory");
        goto cleanup;
    }
    if (xmlguard_empty_namespace(b.buf)) {
        /* libyang 2.1 cannot parse xmlns="" safely (xmlguard.h); such content is left to the server. */
        rc = 0;
        goto cleanup;
    }
    old_log = ly_log_options(LY_LOSTORE_LAST);
    if (lyd_parse_data_mem(ctx, b.buf, LYD_XML, LYD_PARSE_OPAQ | LYD_PARSE_ONLY, 0, &tree) == LY_SUCCESS) {
        rc = 0;
    } else {
        const struct ly_err_item *e = ly_err_last(ctx);
        if (e && e->path) {
            sscanf(e->path, "Line number %u", &line);
        }
        if (line) {
            snprintf(err, len, "line %u: %s", line, e && e->msg ? e->msg : "not well-formed");
        } else {
            snprintf(err, len, "%s", e && e->msg ? e->msg : "not well-formed");
        }
        ly_err_clean(ctx, NULL);
    }
    ly_log_options(old_log);
    lyd_free_all(tree);

cleanup:
    sbuf_free(&b);
    return rc;
}
