/*
 * The fleet's event log for a run that measures recovery (event_watch.h):
 * the HTTP client, the log of events taken, and their summary and manifest
 * members, the same for controller-mount and mount --events.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event_watch.h"
#include "run.h"
#include "stats.h"

/* The fleet's event log, after the base URL. */
#define EVW_EVENTS_PATH "/api/v1/events?since="
/* A larger events answer is refused: the fleet holds 256 events, each with its node-ids. */
#define EVW_MAX_BYTES (64u * 1024u * 1024u)
/* Longest bearer token read from --events-token-file. */
#define EVW_TOKEN_MAX_BYTES 4096

/* --events-token-file's token, trimmed, into @p out. @return 0 or -1 with a message printed. */
static int
read_token(const char *path, char *out, size_t size)
{
    FILE *f = fopen(path, "r");
    size_t n;

    if (!f) {
        fprintf(stderr, "fleetsim-stress: cannot read --events-token-file \"%s\": %s\n", path,
                strerror(errno));
        return -1;
    }
    n = fread(out, 1, size - 1, f);
    out[n] = '\0';
    if (ferror(f) || (n == size - 1 && fgetc(f) != EOF)) {
        fprintf(stderr, "fleetsim-stress: --events-token-file \"%s\": unreadable or longer than %zu bytes\n",
                path, size - 2);
        fclose(f);
        return -1;
    }
    fclose(f);
    while (n && (out[n - 1] == '\n' || out[n - 1] == '\r' || out[n - 1] == ' ' || out[n - 1] == '\t')) {
        out[--n] = '\0';
    }
    if (!n || strpbrk(out, "\r\n")) {
        fprintf(stderr, "fleetsim-stress: --events-token-file \"%s\" must hold one line, the token\n", path);
        return -1;
    }
    return 0;
}

int
evw_fetcher_init(struct evw_fetcher *f, const char *url, const char *token_file, long limit_ms, int tty)
{
    size_t base_len = strlen(url);
    char token[EVW_TOKEN_MAX_BYTES + 2];
    char header[EVW_TOKEN_MAX_BYTES + 32];
    struct curl_slist *more;

    memset(f, 0, sizeof *f);
    f->tty = tty;
    f->resp.max = EVW_MAX_BYTES;
    while (base_len && url[base_len - 1] == '/') {
        base_len--;
    }
    f->base = strndup(url, base_len);
    f->headers = curl_slist_append(NULL, "Accept: application/json");
    f->curl = curl_easy_init();
    if (!f->base || !f->headers || !f->curl) {
        fprintf(stderr, "fleetsim-stress: cannot set up the HTTP client for --events\n");
        return -1;
    }
    if (token_file) {
        if (read_token(token_file, token, sizeof token)) {
            return -1;
        }
        snprintf(header, sizeof header, "Authorization: Bearer %s", token);
        more = curl_slist_append(f->headers, header);
        memset(token, 0, sizeof token);
        memset(header, 0, sizeof header);
        if (!more) {
            return -1;
        }
        f->headers = more;
    }
    if (curl_easy_setopt(f->curl, CURLOPT_HTTPHEADER, f->headers) != CURLE_OK ||
        curl_easy_setopt(f->curl, CURLOPT_WRITEFUNCTION, http_body_write) != CURLE_OK ||
        curl_easy_setopt(f->curl, CURLOPT_WRITEDATA, &f->resp) != CURLE_OK ||
        curl_easy_setopt(f->curl, CURLOPT_XFERINFOFUNCTION, http_abort_on_signal) != CURLE_OK ||
        curl_easy_setopt(f->curl, CURLOPT_NOPROGRESS, 0L) != CURLE_OK ||
        curl_easy_setopt(f->curl, CURLOPT_ERRORBUFFER, f->curl_err) != CURLE_OK ||
        curl_easy_setopt(f->curl, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
        curl_easy_setopt(f->curl, CURLOPT_CONNECTTIMEOUT_MS, limit_ms) != CURLE_OK ||
        curl_easy_setopt(f->curl, CURLOPT_TIMEOUT_MS, limit_ms) != CURLE_OK ||
        curl_easy_setopt(f->curl, CURLOPT_USERAGENT, "fleetsim-stress/" FLEETSIM_VERSION) != CURLE_OK) {
        fprintf(stderr, "fleetsim-stress: this libcurl lacks an option --events needs\n");
        return -1;
    }
    return 0;
}

void
evw_fetcher_close(struct evw_fetcher *f)
{
    curl_easy_cleanup(f->curl);
    curl_slist_free_all(f->headers);
    free(f->base);
    sbuf_free(&f->resp.buf);
    f->curl = NULL;
    f->headers = NULL;
    f->base = NULL;
}

int
evw_fetch(struct evw_fetcher *f, double t_s, struct fev_answer *a)
{
    char url[4096];
    char err[EVW_ERROR_BYTES] = "";
    long status = 0;
    CURLcode cc;

    memset(a, 0, sizeof *a);
    http_body_reset(&f->resp);
    f->curl_err[0] = '\0';
    snprintf(url, sizeof url, "%s" EVW_EVENTS_PATH "%" PRIu64, f->base, f->next);
    curl_easy_setopt(f->curl, CURLOPT_URL, url);
    f->fetches++;
    cc = curl_easy_perform(f->curl);
    curl_easy_getinfo(f->curl, CURLINFO_RESPONSE_CODE, &status);
    if (run_interrupted()) {
        return 0;
    }
    if (f->resp.too_large) {
        snprintf(err, sizeof err, "answer larger than %u bytes", EVW_MAX_BYTES);
    } else if (cc != CURLE_OK) {
        snprintf(err, sizeof err, "%s", f->curl_err[0] ? f->curl_err : curl_easy_strerror(cc));
    } else if (status != 200) {
        snprintf(err, sizeof err, "HTTP %ld", status);
    } else {
        char why[200];
        if (fev_parse(http_body_text(&f->resp), f->resp.buf.len, a, why, sizeof why)) {
            snprintf(err, sizeof err, "bad answer (HTTP 200): %s", why);
            fev_answer_free(a);
        }
    }
    if (err[0]) {
        f->errors++;
        if (!f->first_error[0]) {
            snprintf(f->first_error, sizeof f->first_error, "at %.3f s: %.200s", t_s, err);
        }
        if (strcmp(err, f->prev_error)) {
            fprintf(stderr, "%sfleetsim-stress: events fetch at %.3f s: %s\n", f->tty ? "\r\033[K" : "", t_s,
                    err);
        }
        snprintf(f->prev_error, sizeof f->prev_error, "%s", err);
        return 0;
    }
    f->prev_error[0] = '\0';
    if (a->dropped) {
        f->dropped += a->dropped;
        fprintf(stderr,
                "%sfleetsim-stress: the fleet no longer held %" PRIu64 " events after seq %" PRIu64 "\n",
                f->tty ? "\r\033[K" : "", a->dropped, f->next);
    }
    f->next = a->next > f->next ? a->next : f->next;
    return 1;
}

void
evw_log_init(struct evw_log *l, int64_t start_wall_ms, int tty)
{
    memset(l, 0, sizeof *l);
    evr_init(&l->tr, start_wall_ms);
    l->tty = tty;
}

void
evw_log_free(struct evw_log *l)
{
    evr_free(&l->tr);
    fev_answer_free(&l->meta);
}

/* The live mark of one event, on stdout (stderr over the progress line on a terminal). */
static void
show_event(const struct evw_log *l, const struct evr_event *e)
{
    FILE *f = l->tty ? stderr : stdout;

    fprintf(f, "%st %.3f s: event %" PRIu64 " %s %" PRIu32 " devices", l->tty ? "\r\033[K" : "", e->t_s,
            e->ev.seq, e->ev.action, e->ev.devices);
    if (e->ev.failed) {
        fprintf(f, " (%" PRIu32 " failed)", e->ev.failed);
    }
    if (!strcmp(e->ev.origin, "scenario")) {
        fprintf(f, " (scenario %s)\n", e->ev.event[0] ? e->ev.event : "?");
    } else {
        fprintf(f, " (%s)\n", e->ev.origin[0] ? e->ev.origin : "api");
    }
    fflush(f);
}

int
evw_take(struct evw_log *l, struct fev_answer *a)
{
    int rc = 0;

    for (size_t i = 0; i < a->event_count; i++) {
        int added = evr_add(&l->tr, &a->events[i]);
        if (added < 0) {
            rc = -1;
            break;
        }
        if (added) {
            show_event(l, &l->tr.events[l->tr.event_count - 1]);
        }
    }
    fev_answer_free(a);
    if (!rc) {
        l->meta = *a; /* seed and scenario; its events are gone */
        l->have_meta = 1;
    }
    return rc;
}

void
evw_print(const struct evw_log *l, const struct evw_fetcher *f)
{
    const struct fev_answer *m = &l->meta;

    printf("events %zu (fetches %" PRIu64 ", errors %" PRIu64 ", dropped by the fleet %" PRIu64 ")%s%s\n",
           l->tr.event_count, f->fetches, f->errors, f->dropped, f->first_error[0] ? "; first " : "",
           f->first_error);
    if (l->have_meta && m->have_seed) {
        printf("fleet seed %" PRIu64, m->seed);
        if (m->have_scenario) {
            printf(", scenario %s sha256 %s", m->scenario_file, m->scenario_sha256);
            if (m->have_scenario_seed) {
                printf(" seed %" PRIu64, m->scenario_seed);
            }
        }
        printf("\n");
    }
    for (size_t i = 0; i < l->tr.event_count; i++) {
        const struct evr_event *e = &l->tr.events[i];
        printf("event %" PRIu64 " %s at %.3f s (%s%s%s), %" PRIu32 " devices: ", e->ev.seq, e->ev.action,
               e->t_s, e->ev.origin[0] ? e->ev.origin : "api", e->ev.event[0] ? " " : "", e->ev.event,
               e->ev.devices);
        switch (e->state) {
        case EVR_MARK:
            printf("mark (no loss expected)\n");
            break;
        case EVR_HEALED:
            printf("lost %" PRIu32 ", all connected again after %.3f s\n", e->lost, e->healed_s);
            break;
        case EVR_NO_LOSS_SEEN:
            printf("no loss seen in %" PRIu64 " polls\n", e->polls);
            break;
        case EVR_PENDING:
            printf("lost %" PRIu32 ", NOT all connected again by the end\n", e->lost);
            break;
        }
    }
}

void
evw_manifest(struct sbuf *b, const struct evw_log *l, const struct evw_fetcher *f)
{
    const struct fev_answer *m = &l->meta;

    sbuf_adds(b, "\"fleet_seed\":");
    if (l->have_meta && m->have_seed) {
        sbuf_printf(b, "%" PRIu64, m->seed);
    } else {
        sbuf_adds(b, "null");
    }
    if (l->have_meta && m->have_scenario) {
        sbuf_adds(b, ",\"scenario\":{\"file\":");
        sbuf_add_json(b, m->scenario_file);
        sbuf_adds(b, ",\"sha256\":");
        sbuf_add_json(b, m->scenario_sha256);
        sbuf_adds(b, ",\"seed\":");
        if (m->have_scenario_seed) {
            sbuf_printf(b, "%" PRIu64 "}", m->scenario_seed);
        } else {
            sbuf_adds(b, "null}");
        }
    } else {
        sbuf_adds(b, ","); /* the fleet named none: --scenario's, or null */
        run_manifest_scenario_member(b);
    }
    sbuf_printf(b,
                ",\"events_fetches\":%" PRIu64 ",\"events_errors\":%" PRIu64 ",\"events_dropped\":%" PRIu64
                ",\"events_first_error\":",
                f->fetches, f->errors, f->dropped);
    json_string_or_null(b, f->first_error);
    sbuf_adds(b, ",\"events\":[");
    for (size_t i = 0; i < l->tr.event_count; i++) {
        const struct evr_event *e = &l->tr.events[i];
        sbuf_printf(b, "%s{\"seq\":%" PRIu64 ",\"t_s\":%.6f,\"time\":", i ? "," : "", e->ev.seq, e->t_s);
        sbuf_add_json(b, e->ev.time);
        sbuf_printf(b, ",\"time_ms\":%" PRId64 ",\"action\":", e->ev.time_ms);
        sbuf_add_json(b, e->ev.action);
        sbuf_adds(b, ",\"origin\":");
        sbuf_add_json(b, e->ev.origin);
        sbuf_adds(b, ",\"event\":");
        json_string_or_null(b, e->ev.event);
        sbuf_printf(b, ",\"devices\":%" PRIu32 ",\"failed\":%" PRIu32 ",\"expect\":\"%s\",\"lost\":",
                    e->ev.devices, e->ev.failed,
                    e->expect == FEV_LOSS ? "loss"
                    : e->expect == FEV_UP ? "up"
                                          : "mark");
        if (e->state == EVR_MARK) {
            sbuf_adds(b, "null");
        } else {
            sbuf_printf(b, "%" PRIu32, e->lost);
        }
        sbuf_adds(b, ",\"healed_s\":");
        if (e->state == EVR_HEALED) {
            sbuf_printf(b, "%.6f", e->healed_s);
        } else {
            sbuf_adds(b, "null");
        }
        sbuf_printf(b, ",\"state\":\"%s\"}", evr_state_name(e->state, 1));
    }
    sbuf_adds(b, "],");
}

uint32_t
evw_report_unhealed(const struct evw_log *l)
{
    uint32_t n = 0;

    for (size_t i = 0; i < l->tr.event_count; i++) {
        const struct evr_event *e = &l->tr.events[i];
        if (e->state == EVR_PENDING) {
            fprintf(stderr,
                    "fleetsim-stress: FAILED: event %" PRIu64 " %s (%zu nodes) at %.3f s: %" PRIu32
                    " lost, not all connected again by the end\n",
                    e->ev.seq, e->ev.action, e->ev.node_count, e->t_s, e->lost);
            n++;
        }
    }
    return n;
}
