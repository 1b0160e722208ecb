/*
 * Parsing the fleet's event log answer; see fleet_events.h. The answer is
 * small (the fleet holds at most 256 events), so json_read's tree is fine:
 * each event's node-ids are copied out and the tree freed.
 */
#include "fleet_events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"

enum fev_expect
fev_expect_of(const char *action)
{
    static const char *const loss[] = {"kill-sessions", "down", "reboot"};
    static const char *const up[] = {"up", "grow"};

    for (size_t i = 0; i < sizeof loss / sizeof loss[0]; i++) {
        if (!strcmp(action, loss[i])) {
            return FEV_LOSS;
        }
    }
    for (size_t i = 0; i < sizeof up / sizeof up[0]; i++) {
        if (!strcmp(action, up[i])) {
            return FEV_UP;
        }
    }
    return FEV_MARK;
}

void
fev_event_free(struct fev_event *e)
{
    for (size_t i = 0; i < e->node_count; i++) {
        free(e->node_ids[i]);
    }
    free(e->node_ids);
    e->node_ids = NULL;
    e->node_count = 0;
}

void
fev_answer_free(struct fev_answer *a)
{
    for (size_t i = 0; i < a->event_count; i++) {
        fev_event_free(&a->events[i]);
    }
    free(a->events);
    a->events = NULL;
    a->event_count = 0;
}

static void
copy_text(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src ? src : "");
}

/* One element of "events" into @p e. @return 0 or -1 with @p err set. */
static int
parse_event(const struct jsonr_value *v, struct fev_event *e, char *err, size_t err_len)
{
    const struct jsonr_value *ids;
    const char *action;
    uint64_t time_ms;
    uint64_t n;
    size_t i = 0;

    if (v->type != JSONR_OBJECT) {
        snprintf(err, err_len, "an event is not an object");
        return -1;
    }
    action = jsonr_get_str(v, "action");
    ids = jsonr_get(v, "node_ids");
    if (jsonr_get_u64(v, "seq", &e->seq) || jsonr_get_u64(v, "time_ms", &time_ms) || !action || !ids ||
        ids->type != JSONR_ARRAY || time_ms > INT64_MAX) {
        snprintf(err, err_len, "an event lacks seq, time_ms, action or node_ids");
        return -1;
    }
    e->time_ms = (int64_t)time_ms;
    copy_text(e->time, sizeof e->time, jsonr_get_str(v, "time"));
    copy_text(e->action, sizeof e->action, action);
    copy_text(e->origin, sizeof e->origin, jsonr_get_str(v, "origin"));
    copy_text(e->event, sizeof e->event, jsonr_get_str(v, "event"));
    e->devices = jsonr_get_u64(v, "devices", &n) || n > UINT32_MAX ? (uint32_t)ids->count : (uint32_t)n;
    e->failed = jsonr_get_u64(v, "failed", &n) || n > UINT32_MAX ? 0 : (uint32_t)n;
    e->node_ids = calloc(ids->count ? ids->count : 1, sizeof *e->node_ids);
    if (!e->node_ids) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    for (const struct jsonr_value *id = ids->child; id; id = id->next) {
        if (id->type != JSONR_STRING) {
            snprintf(err, err_len, "event %llu: a node-id is not a string", (unsigned long long)e->seq);
            return -1;
        }
        e->node_ids[i] = strdup(id->str);
        if (!e->node_ids[i]) {
            snprintf(err, err_len, "out of memory");
            return -1;
        }
        e->node_count = ++i;
    }
    return 0;
}

static void
parse_scenario(const struct jsonr_value *sc, struct fev_answer *out)
{
    if (!sc || sc->type != JSONR_OBJECT) {
        return;
    }
    out->have_scenario = 1;
    copy_text(out->scenario_file, sizeof out->scenario_file, jsonr_get_str(sc, "file"));
    copy_text(out->scenario_sha256, sizeof out->scenario_sha256, jsonr_get_str(sc, "sha256"));
    out->have_scenario_seed = !jsonr_get_u64(sc, "seed", &out->scenario_seed);
}

int
fev_parse(const char *body, size_t len, struct fev_answer *out, char *err, size_t err_len)
{
    struct jsonr_value *doc = NULL;
    const struct jsonr_value *events;
    char why[160];
    int rc = -1;

    memset(out, 0, sizeof *out);
    if (jsonr_parse(body, len, &doc, why, sizeof why)) {
        snprintf(err, err_len, "not JSON: %s", why);
        goto cleanup;
    }
    events = jsonr_get(doc, "events");
    if (doc->type != JSONR_OBJECT || jsonr_get_u64(doc, "next", &out->next) || !events ||
        events->type != JSONR_ARRAY) {
        snprintf(err, err_len, "not an events answer (no \"next\" or \"events\")");
        goto cleanup;
    }
    out->have_seed = !jsonr_get_u64(doc, "seed", &out->seed);
    if (jsonr_get_u64(doc, "dropped", &out->dropped)) {
        out->dropped = 0;
    }
    parse_scenario(jsonr_get(doc, "scenario"), out);
    out->events = calloc(events->count ? events->count : 1, sizeof *out->events);
    if (!out->events) {
        snprintf(err, err_len, "out of memory");
        goto cleanup;
    }
    for (const struct jsonr_value *v = events->child; v; v = v->next) {
        out->event_count++; /* counted first, so a half-parsed event is freed too */
        if (parse_event(v, &out->events[out->event_count - 1], err, err_len)) {
            goto cleanup;
        }
    }
    rc = 0;

cleanup:
    jsonr_free(doc);
    return rc;
}
