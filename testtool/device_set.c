/*
 * The control API's set: a configuration change made on the device itself,
 * as its own CLI would make it. No session makes it, so no session's lock
 * is taken (another session's lock on running refuses it, as it refuses SNMP
 * SETs), the change goes through edit-config's machinery (edit.h: undo log,
 * validation, rollback), and subscribers are told with RFC 6470's
 * netconf-config-change, changed by the server, and syslog sinks with the
 * config-commit line, one event (event.h). Startup is not touched, so
 * a reboot brings back what was saved.
 */
#include "device_actions_internal.h"

#include <stdio.h>
#include <string.h>

#include <libyang/libyang.h>

#include "devview.h"
#include "edit.h"
#include "edit_err.h"
#include "event.h"
#include "identity.h"
#include "lock.h"
#include "log.h"
#include "notif_file.h"
#include "sbuf.h"
#include "stream.h"
#include "syslog_chan.h"

#define NC_NOTIF_NS         "urn:ietf:params:xml:ns:netconf:notification:1.0"
#define NC_NOTIFICATIONS_NS "urn:ietf:params:xml:ns:yang:ietf-netconf-notifications"

/* One <edit> per top-level node of the fragment: its path and the operation it had. */
static void
print_edits(struct sbuf *b, const struct lyd_node *config, uint8_t set_op)
{
    static const char *const op_names[] = {"merge", "replace", NULL};

    for (const struct lyd_node *n = config; n; n = n->next) {
        const char *ns, *name = LYD_NAME(n), *op = set_op < 2 ? op_names[set_op] : NULL;
        if (n->schema) {
            struct lyd_meta *m = lyd_find_meta(n->meta, NULL, "ietf-netconf:operation");
            ns = n->schema->module->ns;
            if (m) {
                op = lyd_get_meta_value(m);
            }
        } else {
            ns = ((const struct lyd_node_opaq *)n)->name.module_ns;
        }
        if (!ns || !name) {
            continue;
        }
        sbuf_adds(b, "<edit><target xmlns:t=\"");
        sbuf_add_xml(b, ns);
        sbuf_adds(b, "\">/t:");
        sbuf_add_xml(b, name);
        sbuf_adds(b, "</target>");
        if (op && strcmp(op, "none")) {
            sbuf_printf(b, "<operation>%s</operation>", op);
        }
        sbuf_adds(b, "</edit>");
    }
}

static void
notify_config_change(struct device *dev, const struct lyd_node *config, uint8_t set_op, uint64_t now_ms,
                     uint64_t event_id)
{
    struct sbuf b = {0};
    char time_text[40];

    notif_format_time(now_ms, time_text, sizeof time_text);
    sbuf_printf(&b,
                "<notification xmlns=\"" NC_NOTIF_NS "\"><eventTime>%s</eventTime>"
                "<netconf-config-change xmlns=\"" NC_NOTIFICATIONS_NS "\"><changed-by><server/></changed-by>"
                "<datastore>running</datastore>",
                time_text);
    print_edits(&b, config, set_op);
    event_add_leaf(&b, event_id, dev->worker->fleet->cfg.run_tag);
    sbuf_adds(&b, "</netconf-config-change></notification>");
    if (!b.failed) {
        stream_emit(dev, b.buf, b.len, now_ms);
    }
    sbuf_free(&b);
}

int
devact_set(struct device *dev, const struct devact_params *p)
{
    static const enum edit_op default_ops[] = {EDIT_OP_MERGE, EDIT_OP_REPLACE, EDIT_OP_NONE};
    const struct schema_set *schemas = &dev->type->schemas;
    struct lyd_node *config = NULL, **tree;
    struct edit_err *errs = NULL, *busy;
    int changed = 0, rc = -1;

    if (!p->config || p->set_op > DEVACT_SET_NONE) {
        goto cleanup;
    }
    if ((busy = lock_check_write(&dev->ds, DS_RUNNING, 0))) {
        log_debug("device %u: set refused: %s", dev->index,
                  busy->message ? busy->message : "running is locked");
        edit_err_free(busy);
        goto cleanup;
    }
    if (lyd_parse_data_mem(schemas->ctx, p->config, LYD_XML,
                           LYD_PARSE_ONLY | LYD_PARSE_STRICT | LYD_PARSE_NO_STATE, 0, &config)) {
        const char *why = ly_errmsg(schemas->ctx);
        log_debug("device %u: set refused: %s", dev->index, why ? why : "not configuration of its schemas");
        goto cleanup;
    }
    {
        struct edit_request req = {.config = config,
                                   .default_op = default_ops[p->set_op],
                                   .test_option = EDIT_TEST_THEN_SET,
                                   .error_option = EDIT_ROLLBACK_ON_ERROR};
        if (identity_ds_own(dev, DS_RUNNING, &tree) || edit_apply(schemas, tree, &req, &errs, &changed) ||
            errs) {
            log_debug("device %u: set refused: %s", dev->index,
                      errs && errs->message ? errs->message : "out of memory");
            goto cleanup;
        }
    }
    rc = 0;
    if (changed) {
        uint64_t now_ms = devview_now_ms(dev->worker->fleet);
        uint64_t event_id = event_next_id(dev); /* one change, one event: notification and syslog line */
        devview_running_changed(dev, now_ms);
        if (stream_has_subscribers(dev)) {
            notify_config_change(dev, config, p->set_op, now_ms, event_id);
        }
        syslog_chan_event(dev, "config-commit", -1, event_id, NULL);
    }

cleanup:
    edit_err_free(errs);
    lyd_free_all(config);
    return rc;
}
