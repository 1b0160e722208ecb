/*
 * The catalog reader and the template filler (see syslog_catalog.h). The
 * JSON is read by common/json_read.c; this file checks the shape, the
 * names and the limits, and says which message and field is wrong.
 */
#include "syslog_catalog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_read.h"
#include "json_read.h"

/* Facility keywords in the order of their codes (RFC 5424 table 1, as syslog.h names them). */
static const char *const sc_facilities[24] = {"kern",   "user",   "mail",   "daemon", "auth",     "syslog",
                                              "lpr",    "news",   "uucp",   "cron",   "authpriv", "ftp",
                                              "ntp",    "audit",  "alert",  "clock",  "local0",   "local1",
                                              "local2", "local3", "local4", "local5", "local6",   "local7"};
/* Severity keywords (RFC 5424 table 2), long and short forms. */
static const char *const sc_severities[8] = {"emergency", "alert",  "critical",      "error",
                                             "warning",   "notice", "informational", "debug"};
static const char *const sc_severities_short[8] = {"emerg", "alert",  "crit", "err",
                                                   "warn",  "notice", "info", "debug"};

/* Names {user} draws from. */
static const char *const sc_users[8] = {"admin",    "cisco",  "netops",  "root",
                                        "operator", "backup", "monitor", "guest"};

/* A code from a keyword of @p names (@p n of them, optionally @p alt too) or a number below @p n. */
static int
sc_code(const struct jsonr_value *v, const char *const *names, const char *const *alt, unsigned n,
        uint8_t *out)
{
    if (!v) {
        return -1;
    }
    if (v->type == JSONR_NUMBER && v->is_u64 && v->u64 < n) {
        *out = (uint8_t)v->u64;
        return 0;
    }
    for (unsigned i = 0; v->type == JSONR_STRING && i < n; i++) {
        if (!strcmp(v->str, names[i]) || (alt && !strcmp(v->str, alt[i]))) {
            *out = (uint8_t)i;
            return 0;
        }
    }
    return -1;
}

/* The placeholder at @p p (just after '{'): its length up to '}', or 0 when it is not a known one. */
static size_t
sc_placeholder(const char *p)
{
    static const char *const names[] = {"if}", "ifindex}", "host}", "addr}", "peer}", "num}", "user}"};

    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t n = strlen(names[i]);
        if (!strncmp(p, names[i], n)) {
            return n;
        }
    }
    return 0;
}

/* Every '{' starts a known placeholder or "{{", every '}' ends one or is "}}". */
static int
sc_check_text(const char *t, char *err, size_t err_len, uint32_t index)
{
    for (const char *p = t; *p; p++) {
        if (*p == '{') {
            size_t n = p[1] == '{' ? 1 : sc_placeholder(p + 1);
            if (!n) {
                snprintf(err, err_len, "message %u: unknown placeholder at \"%.20s\"", index, p);
                return -1;
            }
            p += n;
        } else if (*p == '}') {
            if (p[1] != '}') {
                snprintf(err, err_len, "message %u: a lone '}' (write }} for a brace)", index);
                return -1;
            }
            p++;
        }
    }
    return 0;
}

static char *
sc_dup_word(const struct jsonr_value *obj, const char *key, size_t most, int required, const char *dflt,
            uint32_t index, int *bad, char *err, size_t err_len)
{
    const struct jsonr_value *v = jsonr_get(obj, key);
    const char *s = dflt;
    char *copy;

    if (v) {
        if (v->type != JSONR_STRING || !*v->str || strlen(v->str) > most || strpbrk(v->str, " \t\r\n")) {
            snprintf(err, err_len, "message %u: \"%s\" must be a word of 1 to %zu characters", index, key,
                     most);
            *bad = 1;
            return NULL;
        }
        s = v->str;
    } else if (required) {
        snprintf(err, err_len, "message %u: \"%s\" is missing", index, key);
        *bad = 1;
        return NULL;
    }
    if (!s) {
        return NULL;
    }
    if (!(copy = strdup(s))) {
        snprintf(err, err_len, "out of memory reading the catalog");
        *bad = 2;
    }
    return copy;
}

/* Fill @p t from the JSON object @p m (message @p index). @return FLEET_OK or why not, in err. */
static enum fleet_err
sc_template(const struct jsonr_value *m, const char *app_dflt, uint32_t index, struct syslog_template *t,
            char *err, size_t err_len)
{
    const struct jsonr_value *text = jsonr_get(m, "text");
    uint64_t weight = 1;
    int bad = 0;

    if (m->type != JSONR_OBJECT) {
        snprintf(err, err_len, "message %u is not an object", index);
        return FLEET_ERR_INVAL;
    }
    for (const struct jsonr_value *c = m->child; c; c = c->next) {
        static const char *const known[] = {"id",       "facility", "severity", "weight",
                                            "app-name", "msgid",    "text"};
        int ok = 0;
        for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
            ok |= !strcmp(c->key, known[i]);
        }
        if (!ok) {
            snprintf(err, err_len, "message %u: unknown member \"%.40s\"", index, c->key);
            return FLEET_ERR_INVAL;
        }
    }
    if (sc_code(jsonr_get(m, "facility"), sc_facilities, NULL, 24, &t->facility)) {
        snprintf(err, err_len, "message %u: \"facility\" must be 0..23 or a name (local7, daemon, ...)",
                 index);
        return FLEET_ERR_INVAL;
    }
    if (sc_code(jsonr_get(m, "severity"), sc_severities, sc_severities_short, 8, &t->severity)) {
        snprintf(err, err_len, "message %u: \"severity\" must be 0..7 or a name (error, warning, ...)",
                 index);
        return FLEET_ERR_INVAL;
    }
    if (jsonr_get(m, "weight") &&
        (jsonr_get_u64(m, "weight", &weight) || weight > SYSLOG_CATALOG_MAX_WEIGHT)) {
        snprintf(err, err_len, "message %u: \"weight\" must be 0..%u", index, SYSLOG_CATALOG_MAX_WEIGHT);
        return FLEET_ERR_INVAL;
    }
    t->weight = (uint32_t)weight;
    if (!text || text->type != JSONR_STRING || strlen(text->str) > SYSLOG_CATALOG_MAX_TEXT_BYTES) {
        snprintf(err, err_len, "message %u: \"text\" must be a string of at most %u bytes", index,
                 SYSLOG_CATALOG_MAX_TEXT_BYTES);
        return FLEET_ERR_INVAL;
    }
    if (sc_check_text(text->str, err, err_len, index)) {
        return FLEET_ERR_INVAL;
    }
    t->id = sc_dup_word(m, "id", 64, 1, NULL, index, &bad, err, err_len);
    if (!bad) {
        t->app_name = sc_dup_word(m, "app-name", 48, !app_dflt, app_dflt, index, &bad, err, err_len);
    }
    if (!bad) {
        t->msgid = sc_dup_word(m, "msgid", 32, 0, NULL, index, &bad, err, err_len);
    }
    t->uses_addr = strstr(text->str, "{addr}") != NULL;
    if (!bad && !(t->text = strdup(text->str))) {
        snprintf(err, err_len, "out of memory reading the catalog");
        bad = 2;
    }
    return bad == 2 ? FLEET_ERR_NOMEM : bad ? FLEET_ERR_INVAL : FLEET_OK;
}

enum fleet_err
syslog_catalog_parse(const char *text, size_t len, struct syslog_catalog **out, char *err, size_t err_len)
{
    struct jsonr_value *doc = NULL;
    struct syslog_catalog *cat = NULL;
    const struct jsonr_value *msgs, *app;
    const char *app_dflt = NULL;
    enum fleet_err rc = FLEET_OK;
    uint32_t i = 0;

    *out = NULL;
    if (len > SYSLOG_CATALOG_MAX_BYTES) {
        snprintf(err, err_len, "larger than %u bytes", SYSLOG_CATALOG_MAX_BYTES);
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    if (jsonr_parse(text, len, &doc, err, err_len)) {
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    msgs = jsonr_get(doc, "messages");
    if (doc->type != JSONR_OBJECT || !msgs || msgs->type != JSONR_ARRAY || !msgs->count) {
        snprintf(err, err_len, "a catalog is an object with a non-empty \"messages\" array");
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    if (msgs->count > SYSLOG_CATALOG_MAX_MESSAGES) {
        snprintf(err, err_len, "more than %u messages", SYSLOG_CATALOG_MAX_MESSAGES);
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    if ((app = jsonr_get(doc, "app-name"))) {
        if (app->type != JSONR_STRING || !*app->str || strlen(app->str) > 48 ||
            strpbrk(app->str, " \t\r\n")) {
            snprintf(err, err_len, "\"app-name\" must be a word of 1 to 48 characters");
            rc = FLEET_ERR_INVAL;
            goto cleanup;
        }
        app_dflt = app->str;
    }
    if (!(cat = calloc(1, sizeof *cat)) || !(cat->msgs = calloc(msgs->count, sizeof *cat->msgs)) ||
        !(cat->cumulative = calloc(msgs->count, sizeof *cat->cumulative))) {
        snprintf(err, err_len, "out of memory reading the catalog");
        rc = FLEET_ERR_NOMEM;
        goto cleanup;
    }
    for (const struct jsonr_value *m = msgs->child; m; m = m->next, i++) {
        cat->count = i + 1; /* freed with the catalog whatever happens next */
        if ((rc = sc_template(m, app_dflt, i, &cat->msgs[i], err, err_len))) {
            goto cleanup;
        }
        for (uint32_t k = 0; k < i; k++) {
            if (!strcmp(cat->msgs[k].id, cat->msgs[i].id)) {
                snprintf(err, err_len, "message %u: id \"%s\" is message %u's too", i, cat->msgs[i].id, k);
                rc = FLEET_ERR_INVAL;
                goto cleanup;
            }
        }
        cat->total_weight += cat->msgs[i].weight;
        cat->cumulative[i] = cat->total_weight;
    }
    if (!cat->total_weight) {
        snprintf(err, err_len, "every message has weight 0: nothing to draw");
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    *out = cat;
    cat = NULL;
cleanup:
    syslog_catalog_free(cat);
    jsonr_free(doc);
    return rc;
}

enum fleet_err
syslog_catalog_load(const char *path, struct syslog_catalog **out, char *err, size_t err_len)
{
    char *text = NULL;
    size_t len = 0;
    char why[256];
    enum file_read_failure f = file_read_all(path, SYSLOG_CATALOG_MAX_BYTES, &text, &len);
    enum fleet_err rc;

    *out = NULL;
    if (f != FILE_READ_OK) {
        snprintf(err, err_len, "syslog catalog %s: %s", path, file_read_reason(f, SYSLOG_CATALOG_MAX_BYTES));
        return FLEET_ERR_INVAL;
    }
    rc = syslog_catalog_parse(text, len, out, why, sizeof why);
    if (rc) {
        snprintf(err, err_len, "syslog catalog %s: %s", path, why);
    }
    free(text);
    return rc;
}

void
syslog_catalog_free(struct syslog_catalog *cat)
{
    if (!cat) {
        return;
    }
    for (uint32_t i = 0; cat->msgs && i < cat->count; i++) {
        free(cat->msgs[i].id);
        free(cat->msgs[i].app_name);
        free(cat->msgs[i].msgid);
        free(cat->msgs[i].text);
    }
    free(cat->msgs);
    free(cat->cumulative);
    free(cat);
}

const struct syslog_template *
syslog_catalog_pick(const struct syslog_catalog *cat, uint64_t draw)
{
    uint64_t x = draw % cat->total_weight;
    uint32_t lo = 0, hi = cat->count - 1;

    /* The first message whose cumulative weight is above x (weight-0 messages are never it). */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (cat->cumulative[mid] > x) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return &cat->msgs[lo];
}

const struct syslog_template *
syslog_catalog_find(const struct syslog_catalog *cat, const char *id)
{
    for (uint32_t i = 0; cat && i < cat->count; i++) {
        if (!strcmp(cat->msgs[i].id, id)) {
            return &cat->msgs[i];
        }
    }
    return NULL;
}

size_t
syslog_catalog_expand(const struct syslog_template *t, const struct syslog_vars *vars, char *buf,
                      size_t buf_len)
{
    size_t len = 0;
    char tmp[32];

    for (const char *p = t->text; *p && len < buf_len;) {
        const char *put = NULL;
        size_t n;
        if (*p == '{' && p[1] == '{') {
            put = "{";
            p += 2;
        } else if (*p == '}' && p[1] == '}') {
            put = "}";
            p += 2;
        } else if (*p == '{' && (n = sc_placeholder(p + 1))) {
            const char *name = p + 1;
            p += n + 1;
            if (!strncmp(name, "if}", 3)) {
                put = vars->ifname ? vars->ifname : "-";
            } else if (!strncmp(name, "ifindex}", 8)) {
                snprintf(tmp, sizeof tmp, "%u", (unsigned)vars->ifindex);
                put = tmp;
            } else if (!strncmp(name, "host}", 5)) {
                put = vars->host ? vars->host : "-";
            } else if (!strncmp(name, "addr}", 5)) {
                put = vars->addr ? vars->addr : "-";
            } else if (!strncmp(name, "peer}", 5) && vars->peer) {
                put = vars->peer;
            } else if (!strncmp(name, "peer}", 5)) {
                snprintf(tmp, sizeof tmp, "192.0.2.%u", (unsigned)(1 + (vars->draw >> 8) % 254));
                put = tmp;
            } else if (!strncmp(name, "num}", 4)) {
                snprintf(tmp, sizeof tmp, "%u", (unsigned)(1 + (vars->draw >> 16) % 65535));
                put = tmp;
            } else {
                put = vars->user ? vars->user : sc_users[(vars->draw >> 32) % 8];
            }
        } else {
            buf[len++] = *p++;
            continue;
        }
        n = strlen(put);
        if (n > buf_len - len) {
            n = buf_len - len;
        }
        memcpy(buf + len, put, n);
        len += n;
    }
    return len;
}
