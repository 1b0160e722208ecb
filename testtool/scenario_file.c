/*
 * Loading a scenario file; see scenario.h. libyang validates the file
 * against schemas/fleetsim-scenario.yang in a context of its own (as the
 * fleet file is), so the structure, the types, the patterns and the
 * defaults' places are the module's. The values are then read from the
 * same text with the project's JSON reader, and each action's object goes
 * through the control API's own parameter checks (fact_parse_body), so a
 * scenario is refused with the API's words. What needs the fleet (groups,
 * ranges) is checked here, before anything runs.
 */
#include "scenario.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libyang/libyang.h>

#include "capi_target.h"
#include "digest.h"
#include "file_read.h"
#include "json_read.h"

/* The YANG JSON names of the module's top container and of its members. */
#define SCENARIO_TOP SCENARIO_MODULE ":scenario"

/* Read @p path whole (at most SCENARIO_MAX_FILE_BYTES). @return The text (free()), or NULL with @p err. */
static char *
read_file(const char *path, size_t *len, char *err, size_t err_len)
{
    char *text;
    enum file_read_failure why = file_read_all(path, SCENARIO_MAX_FILE_BYTES, &text, len);

    if (why != FILE_READ_OK) {
        snprintf(err, err_len, "--scenario %s: %s", path,
                 why == FILE_READ_TOO_LARGE ? "larger than 4 MiB: not a scenario" : file_read_reason(why, 0));
    }
    return text;
}

/* libyang's view of the file. @return 0 when it is a valid instance, else -1 with @p err. */
static int
validate(const char *path, const char *text, char *err, size_t err_len)
{
    const char *schema_dir = getenv("FLEETSIM_SCHEMA_DIR");
    uint32_t log_opts = ly_log_options(LY_LOSTORE);
    struct ly_ctx *ctx = NULL;
    struct lyd_node *tree = NULL;
    int rc = -1;

    if (!schema_dir) {
        schema_dir = FLEETSIM_SCHEMA_DIR;
    }
    if (ly_ctx_new(schema_dir, LY_CTX_NO_YANGLIBRARY | LY_CTX_DISABLE_SEARCHDIR_CWD, &ctx) ||
        !ly_ctx_load_module(ctx, SCENARIO_MODULE, NULL, NULL)) {
        snprintf(err, err_len,
                 "--scenario %s: cannot load " SCENARIO_MODULE ".yang from %s (set "
                 "FLEETSIM_SCHEMA_DIR)",
                 path, schema_dir);
        goto cleanup;
    }
    if (lyd_parse_data_mem(ctx, text, LYD_JSON, LYD_PARSE_STRICT, LYD_VALIDATE_PRESENT, &tree)) {
        const struct ly_err_item *e = ly_err_last(ctx);
        snprintf(err, err_len, "--scenario %s: not a scenario of " SCENARIO_MODULE ".yang: %s%s%s%s", path,
                 e && e->msg ? e->msg : "libyang gives no reason", e && e->path ? " (at " : "",
                 e && e->path ? e->path : "", e && e->path ? ")" : "");
        goto cleanup;
    }
    if (!tree) {
        snprintf(err, err_len, "--scenario %s: empty: expected {\"" SCENARIO_TOP "\": {\"event\": [...]}}",
                 path);
        goto cleanup;
    }
    rc = 0;

cleanup:
    lyd_free_all(tree);
    ly_ctx_destroy(ctx);
    ly_log_options(log_opts);
    return rc;
}

/* A duration of the module ("500ms", "30s", "5m", "1h"), validated by libyang already. */
static uint64_t
duration_ms(const char *text)
{
    char *end;
    uint64_t n = strtoull(text, &end, 10);

    if (!strcmp(end, "ms")) {
        return n;
    }
    if (!strcmp(end, "s")) {
        return n * 1000;
    }
    return !strcmp(end, "m") ? n * 60000 : n * 3600000;
}

static int
group_index(const struct fleet *fleet, const char *name)
{
    for (uint32_t g = 0; g < fleet->group_count; g++) {
        if (!strcmp(fleet->groups[g].name, name)) {
            return (int)g;
        }
    }
    return -1;
}

/* Names of the fleet's groups for a message: "edge, core". */
static void
group_names(const struct fleet *fleet, char *out, size_t len)
{
    size_t used = 0;

    out[0] = '\0';
    for (uint32_t g = 0; g < fleet->group_count && used + 1 < len; g++) {
        int w = snprintf(out + used, len - used, "%s%s", g ? ", " : "", fleet->groups[g].name);
        used += w > 0 ? (size_t)w : 0;
    }
}

/* The repetition of event @p ev from its JSON object. */
static void
read_when(const struct jsonr_value *obj, struct scenario_event *ev)
{
    const struct jsonr_value *rep;
    const char *s;

    ev->until_ms = UINT64_MAX;
    if ((s = jsonr_get_str(obj, "at"))) {
        ev->when = SCENARIO_AT;
        ev->at_ms = duration_ms(s);
        return;
    }
    if ((rep = jsonr_get(obj, "every"))) {
        ev->when = SCENARIO_EVERY;
        ev->period_ms = duration_ms(jsonr_get_str(rep, "period"));
    } else {
        rep = jsonr_get(obj, "poisson");
        ev->when = SCENARIO_POISSON;
        ev->period_ms = duration_ms(jsonr_get_str(rep, "mean-interval"));
    }
    if ((s = jsonr_get_str(rep, "from"))) {
        ev->from_ms = duration_ms(s);
    }
    if ((s = jsonr_get_str(rep, "until"))) {
        ev->until_ms = duration_ms(s);
    }
    if (jsonr_get(rep, "count")) {
        uint64_t c = 0;
        jsonr_get_u64(rep, "count", &c);
        ev->max_count = (uint32_t)c;
    }
}

/* Event @p obj into @p ev, checked against @p fleet. @return 0, or -1 with @p err. */
static int
read_event(const char *path, struct fleet *fleet, const struct jsonr_value *obj, struct scenario_event *ev,
           char *err, size_t err_len)
{
    const struct jsonr_value *m, *action = NULL;
    const char *s, *problem;
    char msg[300], names[256];
    int kind = -1;
    uint32_t first, last;

    if (!(ev->name = strdup(jsonr_get_str(obj, "name")))) {
        snprintf(err, err_len, "--scenario %s: out of memory", path);
        return -1;
    }
    read_when(obj, ev);
    for (m = obj->child; m && kind < 0; m = m->next) {
        if (m->type == JSONR_OBJECT && strcmp(m->key, "every") && strcmp(m->key, "poisson")) {
            kind = fact_kind_of(m->key);
            action = m;
        }
    }
    if (kind < 0) {
        snprintf(err, err_len, "--scenario %s: event \"%s\" has no action", path, ev->name);
        return -1;
    }
    if ((problem = fact_parse_body(fleet, (enum devact_kind)kind, action, &ev->rq, msg, sizeof msg))) {
        snprintf(err, err_len, "--scenario %s: event \"%s\": %s", path, ev->name, problem);
        return -1;
    }
    ev->rq.origin_event = ev->name;
    ev->rq.target_kind = FACT_FLEET;
    if ((s = jsonr_get_str(obj, "share"))) {
        ev->rq.share = strtod(s, NULL);
        if (kind == DEVACT_GROW || kind == DEVACT_SHRINK) {
            snprintf(err, err_len,
                     "--scenario %s: event \"%s\": grow and shrink take devices (a count), not share", path,
                     ev->name);
            return -1;
        }
    }
    if ((s = jsonr_get_str(obj, "group"))) {
        if (group_index(fleet, s) < 0) {
            group_names(fleet, names, sizeof names);
            snprintf(err, err_len, "--scenario %s: event \"%s\": no group \"%s\" in the fleet (groups: %s)",
                     path, ev->name, s, names);
            return -1;
        }
        ev->rq.target_kind = FACT_GROUP;
    } else if ((s = jsonr_get_str(obj, "devices"))) {
        if (capi_parse_range(s, fleet->cfg.fleet_devices, &first, &last)) {
            snprintf(err, err_len,
                     "--scenario %s: event \"%s\": devices %s: not within the fleet's %" PRIu32
                     " devices (0 to %" PRIu32 "), or M < N",
                     path, ev->name, s, fleet->cfg.fleet_devices, fleet->cfg.fleet_devices - 1);
            return -1;
        }
        if (kind == DEVACT_GROW || kind == DEVACT_SHRINK) {
            snprintf(err, err_len,
                     "--scenario %s: event \"%s\": grow and shrink take a group or the fleet, "
                     "not devices",
                     path, ev->name);
            return -1;
        }
        ev->rq.target_kind = FACT_DEVICES;
    }
    if (s && !(ev->target = strdup(s))) {
        snprintf(err, err_len, "--scenario %s: out of memory", path);
        return -1;
    }
    ev->rq.target = ev->target;
    if ((s = jsonr_get_str(obj, "revert-after"))) {
        if (kind != DEVACT_DOWN) {
            snprintf(err, err_len,
                     "--scenario %s: event \"%s\": revert-after is for down only (a reboot "
                     "has its own \"for\")",
                     path, ev->name);
            return -1;
        }
        ev->revert_after_ms = duration_ms(s);
    }
    return 0;
}

/* The start list: each listed group's start_present. @return 0, or -1 with @p err. */
static int
read_start(const char *path, struct fleet *fleet, const struct jsonr_value *list, char *err, size_t err_len)
{
    char names[256];

    for (const struct jsonr_value *e = list ? list->child : NULL; e; e = e->next) {
        const char *name = jsonr_get_str(e, "group");
        uint64_t n = 0;
        int g = group_index(fleet, name);
        jsonr_get_u64(e, "devices", &n);
        if (g < 0) {
            group_names(fleet, names, sizeof names);
            snprintf(err, err_len, "--scenario %s: start: no group \"%s\" in the fleet (groups: %s)", path,
                     name, names);
            return -1;
        }
        if (n > fleet->groups[g].cfg.device_count) {
            snprintf(err, err_len,
                     "--scenario %s: start: group \"%s\" has %" PRIu32 " devices, not %" PRIu64
                     " (--device-count is the most it grows to)",
                     path, name, fleet->groups[g].cfg.device_count, n);
            return -1;
        }
        fleet->groups[g].start_present = (uint32_t)n;
    }
    return 0;
}

struct scenario *
scenario_load(const char *path, struct fleet *fleet, char *err, size_t err_len)
{
    struct scenario *sc = calloc(1, sizeof *sc);
    struct jsonr_value *doc = NULL;
    const struct jsonr_value *top, *events, *e;
    char msg[256];
    size_t len = 0;
    char *text = NULL;
    uint32_t i = 0;
    int ok = 0;

    if (!sc) {
        snprintf(err, err_len, "--scenario %s: out of memory", path);
        return NULL;
    }
    pthread_mutex_init(&sc->lock, NULL);
    {
        pthread_condattr_t attr; /* the runner waits on the monotonic clock */
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&sc->cond, &attr);
        pthread_condattr_destroy(&attr);
    }
    if (!(sc->path = strdup(path))) {
        snprintf(err, err_len, "--scenario %s: out of memory", path);
        goto cleanup;
    }
    if (!(text = read_file(path, &len, err, err_len)) || validate(path, text, err, err_len)) {
        goto cleanup;
    }
    digest_sha256_hex(text, len, sc->sha256);
    if (jsonr_parse(text, len, &doc, msg, sizeof msg) || !(top = jsonr_get(doc, SCENARIO_TOP))) {
        snprintf(err, err_len, "--scenario %s: %s", path, doc ? "no " SCENARIO_TOP " in it" : msg);
        goto cleanup;
    }
    sc->seed = fleet->cfg.seed;
    if (jsonr_get(top, "seed")) {
        const char *s = jsonr_get_str(top, "seed");
        sc->seed = s ? strtoull(s, NULL, 10) : sc->seed;
        if (!s) {
            jsonr_get_u64(top, "seed", &sc->seed);
        }
    }
    if (read_start(path, fleet, jsonr_get(top, "start"), err, err_len)) {
        goto cleanup;
    }
    events = jsonr_get(top, "event");
    if (events && events->count && !(sc->events = calloc(events->count, sizeof *sc->events))) {
        snprintf(err, err_len, "--scenario %s: out of memory", path);
        goto cleanup;
    }
    for (e = events ? events->child : NULL; e; e = e->next) {
        sc->event_count = i + 1;
        if (read_event(path, fleet, e, &sc->events[i++], err, err_len)) {
            goto cleanup;
        }
    }
    ok = 1;

cleanup:
    jsonr_free(doc);
    free(text);
    if (!ok) {
        scenario_free(sc);
        return NULL;
    }
    return sc;
}

void
scenario_free(struct scenario *sc)
{
    if (!sc) {
        return;
    }
    scenario_stop(sc);
    for (uint32_t i = 0; i < sc->event_count; i++) {
        free(sc->events[i].name);
        free(sc->events[i].target);
    }
    for (uint32_t i = 0; i < sc->pending_count; i++) {
        free(sc->pending[i].idx);
    }
    free(sc->pending);
    free(sc->events);
    free(sc->path);
    pthread_mutex_destroy(&sc->lock);
    pthread_cond_destroy(&sc->cond);
    free(sc);
}

void
scenario_json(const struct scenario *sc, uint64_t fleet_seed, struct sbuf *out)
{
    sbuf_printf(out, "\"seed\":%" PRIu64 ",\"scenario\":", fleet_seed);
    if (!sc) {
        sbuf_adds(out, "null");
        return;
    }
    sbuf_adds(out, "{\"file\":");
    sbuf_add_json(out, sc->path);
    sbuf_printf(out, ",\"sha256\":\"%s\",\"seed\":%" PRIu64 ",\"events\":%" PRIu32 "}", sc->sha256, sc->seed,
                sc->event_count);
}
