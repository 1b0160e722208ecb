/*
 * The reconciliation of push with the fleet's report: read the report (a file, or GET /api/v1/report of
 * the fleet's HTTP server), find each device by address and port, and within it the subscription by id.
 * The report's per-subscription rows are looked for as "yang_push": {"subscriptions": [...]} under each
 * device, or "subscriptions": [...] directly; each row has "id", "updates", "change_updates", "events" and
 * "missed_slots".
 */
#include "push_recon.h"

#include <curl/curl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "file_read.h"
#include "http_body.h"
#include "json_read.h"
#include "token_file.h"

/* Largest report read: a million devices' rows. */
#define PUSH_RECON_MAX_BYTES (1024u * 1024u * 1024u)
/* Subscriptions that differ printed one per line; the counts hold them all. */
#define PUSH_RECON_PRINT_MAX 40
/* Limit of the GET of the fleet's report, seconds. */
#define PUSH_RECON_HTTP_TIMEOUT_S 60L

/* The report's text from a file or from the fleet's URL; -1 with a message on stderr. */
static int
report_text(const char *source, const char *token_path, char **text, size_t *len)
{
    struct curl_slist *headers = NULL;
    char *token = NULL;
    char terr[256];
    struct http_body body = {.max = PUSH_RECON_MAX_BYTES};
    char url[1024];
    CURL *curl;
    CURLcode res;
    long status = 0;
    enum file_read_failure why;

    if (strncmp(source, "http://", 7) && strncmp(source, "https://", 8)) {
        why = file_read_all(source, PUSH_RECON_MAX_BYTES, text, len);
        if (why != FILE_READ_OK) {
            fprintf(stderr, "fleetsim-stress: --fleet-report %s: %s\n", source,
                    file_read_reason(why, PUSH_RECON_MAX_BYTES));
            return -1;
        }
        return 0;
    }
    snprintf(url, sizeof url, "%.*s/api/v1/report", (int)strcspn(source + 8, "/") + 8, source);
    if (token_path) {
        char auth[1100];
        if (!(token = token_file_read(token_path, "--api-token-file", terr, sizeof terr))) {
            fprintf(stderr, "fleetsim-stress: %s\n", terr);
            return -1;
        }
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
        headers = curl_slist_append(NULL, auth);
        free(token);
    }
    if (!(curl = curl_easy_init())) {
        curl_slist_free_all(headers);
        fprintf(stderr, "fleetsim-stress: --fleet-report: libcurl cannot start\n");
        return -1;
    }
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, http_body_write);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, PUSH_RECON_HTTP_TIMEOUT_S);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    if (headers) {
        curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    }
    res = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(curl);
    curl_slist_free_all(headers);
    if (res != CURLE_OK || status != 200 || body.buf.failed) {
        fprintf(stderr, "fleetsim-stress: --fleet-report: GET %s: %s (HTTP %ld)\n", url,
                res != CURLE_OK ? curl_easy_strerror(res) : "not 200", status);
        sbuf_free(&body.buf);
        return -1;
    }
    *text = sbuf_take(&body.buf, len);
    return *text ? 0 : -1;
}

/* The per-subscription rows of a report device, or NULL. */
static const struct jsonr_value *
device_subscriptions(const struct jsonr_value *d)
{
    const struct jsonr_value *yp = jsonr_get(d, "yang_push");
    const struct jsonr_value *subs = NULL;

    if (yp && yp->type == JSONR_OBJECT) {
        subs = jsonr_get(yp, "subscriptions");
    } else if (yp && yp->type == JSONR_ARRAY) {
        subs = yp;
    }
    if (!subs) {
        subs = jsonr_get(d, "subscriptions");
    }
    return subs && subs->type == JSONR_ARRAY ? subs : NULL;
}

/* The report device at @p addr:@p port, or NULL. */
static const struct jsonr_value *
find_device(const struct jsonr_value *devs, const struct net_family *fam, uint32_t addr, uint16_t port)
{
    for (const struct jsonr_value *d = devs->child; d; d = d->next) {
        const char *text = jsonr_get_str(d, "address");
        struct net_family f;
        uint32_t low;
        uint64_t p;
        if (text && !netaddr_parse(text, &f, &low) && low == addr && f.v6 == fam->v6 &&
            !jsonr_get_u64(d, "port", &p) && p == port) {
            return d;
        }
    }
    return NULL;
}

int
push_recon_equal(const struct push_recon_row *got, uint64_t updates, uint64_t change_updates, uint64_t events)
{
    return got->updates == updates && got->change_updates == change_updates && got->events == events;
}

int
push_recon_run(struct push_recon *r, const char *source, const char *token_path, const struct net_family *fam,
               const struct push_recon_row *rows, uint32_t count, FILE *out)
{
    struct jsonr_value *root = NULL;
    const struct jsonr_value *devs;
    char *text = NULL;
    char err[256];
    size_t len = 0;
    uint64_t printed = 0;
    int rc = -1;

    memset(r, 0, sizeof *r);
    if (report_text(source, token_path, &text, &len)) {
        goto cleanup;
    }
    if (jsonr_parse(text, len, &root, err, sizeof err)) {
        fprintf(stderr, "fleetsim-stress: --fleet-report %s: %s\n", source, err);
        goto cleanup;
    }
    devs = jsonr_get(root, "devices");
    if (!devs || devs->type != JSONR_ARRAY) {
        fprintf(stderr, "fleetsim-stress: --fleet-report %s: no \"devices\" array\n", source);
        goto cleanup;
    }
    for (uint32_t i = 0; i < count; i++) {
        const struct push_recon_row *g = &rows[i];
        const struct jsonr_value *d = find_device(devs, fam, g->addr, g->port);
        const struct jsonr_value *subs = d ? device_subscriptions(d) : NULL;
        int found = 0;
        for (const struct jsonr_value *s = subs ? subs->child : NULL; s; s = s->next) {
            uint64_t id = UINT64_MAX, upd = 0, chg = 0, ev = 0, missed = 0;
            jsonr_get_u64(s, "id", &id);
            jsonr_get_u64(s, "updates", &upd);
            jsonr_get_u64(s, "change_updates", &chg);
            jsonr_get_u64(s, "events", &ev);
            jsonr_get_u64(s, "missed_slots", &missed);
            if (!g->subscribed || id != g->id) {
                r->unknown++; /* another client's, or one that failed before its id was known */
                continue;
            }
            found = 1;
            r->sent_updates += upd;
            r->sent_changes += chg;
            r->sent_events += ev;
            r->fleet_missed += missed;
            r->received_updates += g->updates;
            r->received_changes += g->change_updates;
            r->received_events += g->events;
            if (push_recon_equal(g, upd, chg, ev)) {
                r->matched++;
                continue;
            }
            r->mismatched++;
            if (printed++ < PUSH_RECON_PRINT_MAX) {
                fprintf(out,
                        "DIFFERS device %u subscription %u: sent updates %" PRIu64 " change_updates %" PRIu64
                        " events %" PRIu64 " (missed slots %" PRIu64 "), received %" PRIu64 " %" PRIu64
                        " %" PRIu64 " (missed %" PRIu64 ")\n",
                        (unsigned)g->device, (unsigned)g->id, upd, chg, ev, missed, g->updates,
                        g->change_updates, g->events, g->missed);
            }
        }
        if (g->subscribed && !found) {
            r->missing++;
            if (printed++ < PUSH_RECON_PRINT_MAX) {
                fprintf(out, "MISSING device %u subscription %u: %s\n", (unsigned)g->device, (unsigned)g->id,
                        d ? "the report's device does not list it" : "the report does not list the device");
            }
        }
    }
    fprintf(out,
            "reconciliation with the fleet: %" PRIu64 " subscriptions match exactly, %" PRIu64
            " differ, %" PRIu64 " missing from the report, %" PRIu64 " others in it; sent %" PRIu64
            "/%" PRIu64 "/%" PRIu64 " received %" PRIu64 "/%" PRIu64 "/%" PRIu64
            " (updates/change updates/events), fleet's missed slots "
            "%" PRIu64 "\n",
            r->matched, r->mismatched, r->missing, r->unknown, r->sent_updates, r->sent_changes,
            r->sent_events, r->received_updates, r->received_changes, r->received_events, r->fleet_missed);
    rc = r->mismatched || r->missing || !r->matched ? 1 : 0;

cleanup:
    jsonr_free(root);
    free(text);
    return rc;
}

void
push_recon_json(struct sbuf *b, const struct push_recon *r)
{
    sbuf_printf(b,
                "{\"matched\":%" PRIu64 ",\"differ\":%" PRIu64 ",\"missing\":%" PRIu64 ",\"others\":%" PRIu64
                ",\"sent\":{\"updates\":%" PRIu64 ",\"change_updates\":%" PRIu64 ",\"events\":%" PRIu64
                ",\"missed_slots\":%" PRIu64 "},\"received\":{\"updates\":%" PRIu64
                ",\"change_updates\":%" PRIu64 ",\"events\":%" PRIu64 "}}",
                r->matched, r->mismatched, r->missing, r->unknown, r->sent_updates, r->sent_changes,
                r->sent_events, r->fleet_missed, r->received_updates, r->received_changes,
                r->received_events);
}
