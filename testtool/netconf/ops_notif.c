/*
 * RFC 5277 create-subscription: the NETCONF stream, subtree or XPath
 * filters, startTime/stopTime replay from the device's replay log, and
 * one subscription per session. The stream itself is stream.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device.h"
#include "devview.h"
#include "edit_err.h"
#include "ops.h"
#include "session.h"
#include "stream.h"
#include "xmlguard.h"

int64_t
ops_parse_time_ms(const char *text)
{
    struct tm tm = {0};
    int year, mon, day, hour, min, sec, consumed = 0;
    double frac = 0;
    const char *p;
    int64_t ms, offset_min = 0;

    if (sscanf(text, "%4d-%2d-%2dT%2d:%2d:%2d%n", &year, &mon, &day, &hour, &min, &sec, &consumed) != 6) {
        return -1;
    }
    p = text + consumed;
    if (*p == '.') {
        char *end;
        frac = strtod(p, &end);
        p = end;
    }
    if (*p == '+' || *p == '-') {
        int oh, om;
        if (sscanf(p + 1, "%2d:%2d", &oh, &om) != 2) {
            return -1;
        }
        offset_min = (*p == '-' ? -1 : 1) * (oh * 60 + om);
    } else if (*p != 'Z') {
        return -1;
    }
    tm.tm_year = year - 1900;
    tm.tm_mon = mon - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = min;
    tm.tm_sec = sec;
    ms = (int64_t)timegm(&tm) * 1000 + (int64_t)(frac * 1000);
    return ms - offset_min * 60000;
}

void
op_create_subscription(struct rpc_call *call)
{
    struct session *s = call->sess;
    struct fleet *fleet = call->fleet;
    const struct lyd_node *stream = rpc_param(call, "stream", 0);
    const struct lyd_node *filter = rpc_param(call, "filter", 0);
    const struct lyd_node *start = rpc_param(call, "startTime", 0);
    const struct lyd_node *stop = rpc_param(call, "stopTime", 0);
    uint64_t now_ms = devview_now_ms(fleet);
    int64_t start_ms = 0, stop_ms = 0;
    struct notif_sub *sub;

    if (s->sub) {
        /* RFC 5277 2.1.1: a session holds one subscription. */
        rpc_fail(call,
                 edit_err_operation_failed(EDIT_ERR_PROTOCOL, NULL, NULL,
                                           "The session already has a subscription; open another session."));
        return;
    }
    if (s->subs) {
        /* RFC 8640 section 3: one session uses RFC 5277 or RFC 8639 subscriptions, never both. */
        rpc_fail(call, edit_err_operation_failed(EDIT_ERR_PROTOCOL, NULL, NULL,
                                                 "The session holds dynamic subscriptions "
                                                 "(establish-subscription); RFC 8640 forbids "
                                                 "create-subscription on it: open another session."));
        return;
    }
    if (stream && strcmp(lyd_get_value(stream), "NETCONF")) {
        rpc_fail(call, edit_err_invalid_value(EDIT_ERR_PROTOCOL, NULL,
                                              "Stream \"%s\" does not exist; this device has "
                                              "the NETCONF stream.",
                                              lyd_get_value(stream)));
        return;
    }
    if ((start && (start_ms = ops_parse_time_ms(lyd_get_value(start))) < 0) ||
        (stop && (stop_ms = ops_parse_time_ms(lyd_get_value(stop))) < 0)) {
        rpc_fail(call, edit_err_invalid_value(EDIT_ERR_PROTOCOL, NULL,
                                              "startTime or stopTime is not a date-and-time."));
        return;
    }
    if (stop && !start) {
        rpc_fail(call, edit_err_missing_element(EDIT_ERR_PROTOCOL, "startTime", NULL));
        return;
    }
    if (start && (uint64_t)start_ms > now_ms) {
        rpc_fail(call,
                 edit_err_bad_element(EDIT_ERR_PROTOCOL, "startTime", NULL, "startTime is in the future."));
        return;
    }
    if (stop && stop_ms < start_ms) {
        rpc_fail(call, edit_err_bad_element(EDIT_ERR_PROTOCOL, "stopTime", NULL,
                                            "stopTime is earlier than startTime."));
        return;
    }
    if (!(sub = calloc(1, sizeof *sub))) {
        rpc_fail(call, NULL);
        return;
    }
    if (filter) {
        struct lyd_meta *type = lyd_find_meta(filter->meta, NULL, "ietf-netconf:type");
        const struct lyd_node_any *any = (const struct lyd_node_any *)filter;
        if (type && !strcmp(lyd_get_meta_value(type), "xpath")) {
            struct lyd_meta *select = lyd_find_meta(filter->meta, NULL, "ietf-netconf:select");
            if (!select || !(sub->xpath = ops_xpath_to_module_prefixes(call, lyd_get_meta_value(select)))) {
                free(sub);
                rpc_fail(call, edit_err_missing_attribute(EDIT_ERR_PROTOCOL, "select", "filter"));
                return;
            }
            const char *unsafe = xmlguard_xpath_unsafe(sub->xpath);
            if (unsafe) {
                rpc_fail(call, edit_err_invalid_value(EDIT_ERR_PROTOCOL, NULL, OPS_XPATH_REFUSED,
                                                      lyd_get_meta_value(select), unsafe));
                free(sub->xpath);
                free(sub);
                return;
            }
        } else if (any->value_type == LYD_ANYDATA_DATATREE && any->value.tree &&
                   lyd_dup_siblings(any->value.tree, NULL, LYD_DUP_RECURSIVE, &sub->filter)) {
            free(sub);
            rpc_fail(call, NULL);
            return;
        }
    }
    sub->stop_ms = stop ? (uint64_t)stop_ms : 0;
    s->sub = sub;
    s->sub_replay_start_ms = start ? (uint64_t)start_ms : 0;
    s->sub_replay = start != NULL;
    /* The stream starts (or resumes) after the ok is queued: rpc.c calls ops_subscription_after_reply(). */
    call->after_reply = 1;
}

void
ops_subscription_after_reply(struct session *s)
{
    if (!s->sub) {
        return;
    }
    if (s->sub_replay) {
        stream_replay(s, s->sub_replay_start_ms, s->sub->stop_ms);
    }
    stream_subscribed(s);
}
