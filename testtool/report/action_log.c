/*
 * The control API's action record; see action_log.h. Each action is
 * rendered to its JSON object once, when it is recorded, so a report only
 * copies bytes under the lock.
 */
#include "action_log.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const kind_names[DEVACT_KINDS] = {
    "kill-sessions",     "down", "up",   "reboot", "latency",     "drop-rate", "set",
    "notification-rate", "flap", "grow", "shrink", "syslog-rate", "trap-rate"};

const char *
action_log_kind_name(enum devact_kind kind)
{
    return (unsigned)kind < DEVACT_KINDS ? kind_names[kind] : "unknown";
}

void
action_log_init(struct action_log *log)
{
    memset(log, 0, sizeof *log);
    pthread_mutex_init(&log->lock, NULL);
}

void
action_log_free(struct action_log *log)
{
    for (uint32_t i = 0; i < ACTION_LOG_RECENT; i++) {
        free(log->recent[i].json);
        free(log->recent[i].idx);
    }
    sbuf_free(&log->entries);
    pthread_mutex_destroy(&log->lock);
    memset(log, 0, sizeof *log);
}

/* A latency range as the API takes it: "50ms" or "10-20ms". */
static void
ms_range(struct sbuf *b, const char *sep, const char *key, uint32_t lo, uint32_t hi)
{
    if (lo == hi) {
        sbuf_printf(b, "%s\"%s\":\"%" PRIu32 "ms\"", sep, key, lo);
    } else {
        sbuf_printf(b, "%s\"%s\":\"%" PRIu32 "-%" PRIu32 "ms\"", sep, key, lo, hi);
    }
}

/* The parameters in force (defaults filled in), as a JSON object. */
static void
params_json(struct sbuf *b, const struct devact_params *p, double share, uint64_t seed)
{
    const char *sep = "";

    sbuf_adds(b, "{");
    switch (p->kind) {
    case DEVACT_DOWN:
        sbuf_printf(b, "\"mode\":\"%s\",\"sessions\":\"%s\"",
                    p->mode == DEVACT_BLACKHOLE ? "blackhole" : "refuse", p->freeze ? "freeze" : "reset");
        sep = ",";
        break;
    case DEVACT_REBOOT:
        sbuf_printf(b, "\"for\":\"%" PRIu32 "ms\"", p->for_ms);
        sep = ",";
        break;
    case DEVACT_LATENCY:
        if (p->set_nc_latency) {
            ms_range(b, sep, "netconf", p->nc_min_ms, p->nc_max_ms);
            sep = ",";
        }
        if (p->set_snmp_latency) {
            ms_range(b, sep, "snmp", p->snmp_min_ms, p->snmp_max_ms);
            sep = ",";
        }
        break;
    case DEVACT_DROP_RATE:
        sbuf_printf(b, "\"snmp\":%.17g", p->snmp_drop_rate);
        sep = ",";
        break;
    case DEVACT_SET: {
        static const char *const ops[] = {"merge", "replace", "none"};
        sbuf_adds(b, "\"config\":");
        sbuf_add_json(b, p->config ? p->config : "");
        sbuf_printf(b, ",\"operation\":\"%s\"", ops[p->set_op < 3 ? p->set_op : 0]);
        sep = ",";
        break;
    }
    case DEVACT_NOTIF_RATE:
    case DEVACT_SYSLOG_RATE:
    case DEVACT_TRAP_RATE:
        if (p->rate_reset) {
            sbuf_adds(b, "\"rate\":null");
        } else if (p->rate.shape == RATE_CONSTANT) {
            sbuf_printf(b, "\"rate\":%.17g", p->rate.r0);
        } else {
            sbuf_adds(b, "\"rate\":");
            sbuf_add_json(b, p->rate.text);
        }
        sep = ",";
        break;
    case DEVACT_FLAP:
        if (p->if_name[0]) {
            sbuf_adds(b, "\"interface\":");
            sbuf_add_json(b, p->if_name);
            sbuf_adds(b, ",");
        }
        sbuf_printf(b, "\"for\":\"%" PRIu32 "ms\",\"count\":%" PRIu32, p->for_ms, p->flap_count);
        sep = ",";
        break;
    default:
        break;
    }
    if (share < 1.0) {
        sbuf_printf(b, "%s\"share\":%.17g,\"seed\":%" PRIu64, sep, share, seed);
    }
    sbuf_adds(b, "}");
}

void
action_log_ranges(struct sbuf *b, const uint32_t *idx, uint32_t count, uint32_t base, uint32_t most)
{
    uint32_t shown = 0, k = 0;

    while (k < count && shown < most) {
        uint32_t a = idx[k];
        while (k + 1 < count && idx[k + 1] == idx[k] + 1) {
            k++;
        }
        sbuf_printf(b, "%s[%" PRIu32 ",%" PRIu32 "]", shown ? "," : "", a + base, idx[k] + base);
        shown++;
        k++;
    }
    sbuf_printf(b, "],\"ranges_truncated\":%s", k < count ? "true" : "false");
}

uint64_t
action_log_add(struct action_log *log, const struct devact_params *params, double share, uint64_t seed,
               const uint32_t *idx, uint32_t count, uint32_t base, uint32_t failed, uint64_t wall_ms,
               const char *event)
{
    struct sbuf e = {0};
    struct action_recent *slot;
    uint32_t *idx_copy = malloc((count ? count : 1) * sizeof *idx_copy);
    uint64_t seq;
    time_t secs = (time_t)(wall_ms / 1000);
    struct tm tm;
    char when[40];

    pthread_mutex_lock(&log->lock);
    seq = log->next_seq++;
    pthread_mutex_unlock(&log->lock);
    gmtime_r(&secs, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    sbuf_printf(&e,
                "{\"seq\":%" PRIu64 ",\"time\":\"%s.%03uZ\",\"time_ms\":%" PRIu64
                ",\"action\":\"%s\",\"origin\":",
                seq, when, (unsigned)(wall_ms % 1000), wall_ms, action_log_kind_name(params->kind));
    if (event) {
        sbuf_adds(&e, "\"scenario\",\"event\":");
        sbuf_add_json(&e, event);
    } else {
        sbuf_adds(&e, "\"api\"");
    }
    sbuf_adds(&e, ",\"parameters\":");
    params_json(&e, params, share, seed);
    sbuf_printf(&e, ",\"devices\":%" PRIu32 ",\"failed\":%" PRIu32 ",\"ranges\":[", count - failed, failed);
    action_log_ranges(&e, idx, count, base, ACTION_LOG_MAX_RANGES);
    sbuf_adds(&e, "}");

    pthread_mutex_lock(&log->lock);
    slot = &log->recent[seq % ACTION_LOG_RECENT];
    free(slot->json);
    free(slot->idx);
    slot->seq = seq;
    slot->wall_ms = wall_ms;
    slot->json = !e.failed && idx_copy ? strdup(e.buf) : NULL;
    slot->idx = slot->json ? idx_copy : NULL;
    slot->count = slot->json ? count : 0;
    if (slot->idx) {
        memcpy(slot->idx, idx, count * sizeof *idx);
    } else {
        free(idx_copy);
    }
    log->totals[params->kind]++;
    log->scenario_totals[params->kind] += event != NULL;
    if (e.failed || log->entry_count >= ACTION_LOG_MAX_ENTRIES) {
        log->dropped++;
    } else {
        size_t before = log->entries.len;
        if (log->entry_count) {
            sbuf_adds(&log->entries, ",");
        }
        sbuf_add(&log->entries, e.buf, e.len);
        if (log->entries.failed) {
            /* Out of memory: keep what was there, count this one as dropped. */
            log->entries.failed = 0;
            log->entries.len = before;
            if (log->entries.buf) {
                log->entries.buf[before] = '\0';
            }
            log->dropped++;
        } else {
            log->entry_count++;
        }
    }
    pthread_mutex_unlock(&log->lock);
    sbuf_free(&e);
    return seq;
}

void
action_log_each_recent(struct action_log *log, uint64_t since, action_recent_fn fn, void *user,
                       uint64_t *next, uint64_t *missed)
{
    uint64_t oldest;

    pthread_mutex_lock(&log->lock);
    oldest = log->next_seq > ACTION_LOG_RECENT ? log->next_seq - ACTION_LOG_RECENT : 0;
    *missed = since < oldest ? oldest - since : 0;
    *next = log->next_seq;
    for (uint64_t seq = since < oldest ? oldest : since; seq < log->next_seq; seq++) {
        const struct action_recent *r = &log->recent[seq % ACTION_LOG_RECENT];
        if (r->json && r->seq == seq) {
            fn(r, user);
        } else {
            (*missed)++; /* kept without its devices (out of memory) */
        }
    }
    pthread_mutex_unlock(&log->lock);
}

void
action_log_json(struct action_log *log, struct sbuf *out)
{
    pthread_mutex_lock(&log->lock);
    sbuf_adds(out, "\"actions\":[");
    if (log->entry_count) {
        sbuf_add(out, log->entries.buf, log->entries.len);
    }
    sbuf_printf(out, "],\"actions_dropped\":%" PRIu64, log->dropped);
    pthread_mutex_unlock(&log->lock);
}

void
action_log_totals(struct action_log *log, uint64_t totals[DEVACT_KINDS])
{
    pthread_mutex_lock(&log->lock);
    memcpy(totals, log->totals, sizeof log->totals);
    pthread_mutex_unlock(&log->lock);
}

void
action_log_totals_of_scenario(struct action_log *log, uint64_t totals[DEVACT_KINDS])
{
    pthread_mutex_lock(&log->lock);
    memcpy(totals, log->scenario_totals, sizeof log->scenario_totals);
    pthread_mutex_unlock(&log->lock);
}
