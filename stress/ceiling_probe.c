/*
 * ceiling's probes (ceiling_probe.h): a Prometheus instant query over
 * libcurl or a command run by /bin/sh in its own process group, each giving
 * one number or the reason it could not. The HTTP call is shared with the
 * fleet client (ceiling_fleet.c), so both report a refused request alike.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ceiling_probe.h"
#include "http_body.h"
#include "json_read.h"
#include "run.h"

extern char **environ;

/* Longest command error line kept from a probe's standard error. */
#define CEIL_CMD_STDERR_MAX_BYTES 4096
/* How often a command's wait looks at the clock and at Ctrl-C, when it prints nothing. */
#define CEIL_CMD_POLL_MS 50
/* Longest error text quoted from a refused HTTP answer's body that is not JSON. */
#define CEIL_HTTP_BODY_QUOTE_BYTES 200

static double
mono_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A decimal number, whole text: digits, sign, point, exponent; no hex, no nan or inf. */
static int
parse_number(const char *s, size_t len, double *value)
{
    char buf[64], *end;
    double v;

    if (!len || len >= sizeof buf) {
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)s[i]) && !strchr("+-.eE", s[i])) {
            return -1;
        }
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    errno = 0;
    v = strtod(buf, &end);
    if (end != buf + len || errno == ERANGE || !isfinite(v)) {
        return -1;
    }
    *value = v;
    return 0;
}

int
ceil_cmd_output_value(const char *out, size_t len, double *value, char *err, size_t err_len)
{
    size_t a = 0, b = len;

    while (a < b && isspace((unsigned char)out[a])) {
        a++;
    }
    while (b > a && isspace((unsigned char)out[b - 1])) {
        b--;
    }
    if (a == b) {
        snprintf(err, err_len, "the command printed no number");
        return -1;
    }
    if (parse_number(out + a, b - a, value)) {
        snprintf(err, err_len, "the command printed \"%.*s\", not one number", (int)(b - a > 60 ? 60 : b - a),
                 out + a);
        return -1;
    }
    return 0;
}

/* A sample's [time, "value"] pair: the value, refused when it is not a finite number. */
static int
prom_sample_value(const struct jsonr_value *pair, double *value, char *err, size_t err_len)
{
    const struct jsonr_value *v;

    if (!pair || pair->type != JSONR_ARRAY || pair->count != 2 || !(v = pair->child->next) ||
        v->type != JSONR_STRING) {
        snprintf(err, err_len, "a sample is not [time, \"value\"]");
        return -1;
    }
    if (parse_number(v->str, strlen(v->str), value)) {
        snprintf(err, err_len, "the query's value is \"%s\", not a finite number", v->str);
        return -1;
    }
    return 0;
}

int
ceil_prom_answer_value(const char *body, size_t len, double *value, char *err, size_t err_len)
{
    struct jsonr_value *root = NULL;
    const struct jsonr_value *data, *result, *s;
    const char *status, *type;
    char jerr[128];
    double sum = 0, v;
    int rc = -1;

    if (jsonr_parse(body, len, &root, jerr, sizeof jerr)) {
        snprintf(err, err_len, "the answer is not JSON (%s)", jerr);
        goto cleanup;
    }
    status = jsonr_get_str(root, "status");
    if (!status || strcmp(status, "success")) {
        const char *et = jsonr_get_str(root, "errorType"), *e = jsonr_get_str(root, "error");
        snprintf(err, err_len, "Prometheus answered %s: %s%s%s", status ? status : "without a status",
                 et ? et : "", et ? ": " : "", e ? e : "no error text");
        goto cleanup;
    }
    data = jsonr_get(root, "data");
    type = jsonr_get_str(data, "resultType");
    result = jsonr_get(data, "result");
    if (!type || !result) {
        snprintf(err, err_len, "the answer has no data.resultType or data.result");
        goto cleanup;
    }
    if (!strcmp(type, "scalar")) {
        if (prom_sample_value(result, &v, err, err_len)) {
            goto cleanup;
        }
        sum = v;
    } else if (!strcmp(type, "vector")) {
        if (result->type != JSONR_ARRAY) {
            snprintf(err, err_len, "data.result of a vector is not a list");
            goto cleanup;
        }
        if (!result->count) {
            snprintf(err, err_len, "the query matched no series");
            goto cleanup;
        }
        for (s = result->child; s; s = s->next) {
            if (prom_sample_value(jsonr_get(s, "value"), &v, err, err_len)) {
                goto cleanup;
            }
            sum += v;
        }
    } else {
        snprintf(err, err_len, "the query gives a %s; an instant vector or a scalar is needed", type);
        goto cleanup;
    }
    *value = sum;
    rc = 0;
cleanup:
    jsonr_free(root);
    return rc;
}

/* "scheme://host[:port][/path]" at the start of @p s: its length, or 0 when it is not one. */
static size_t
base_url_len(const char *s)
{
    const char *p;

    if (!strncmp(s, "http://", 7)) {
        p = s + 7;
    } else if (!strncmp(s, "https://", 8)) {
        p = s + 8;
    } else {
        return 0;
    }
    if (*p == '[') {
        const char *close = strchr(p, ']');
        if (!close || close == p + 1) {
            return 0;
        }
        p = close + 1;
    } else {
        const char *h = p;
        while (*p && *p != ':' && *p != '/') {
            p++;
        }
        if (p == h) {
            return 0;
        }
    }
    /* A port is digits followed by the path, the ':' before the query, or nothing (the query left out). */
    if (*p == ':' && isdigit((unsigned char)p[1])) {
        const char *q = p + 1;
        while (isdigit((unsigned char)*q)) {
            q++;
        }
        if (*q == ':' || *q == '/' || !*q) {
            p = q;
        }
    }
    while (*p == '/') {
        while (*p && *p != ':') {
            p++;
        }
    }
    return (size_t)(p - s);
}

int
ceil_probe_parse(const char *name, const char *spec, double timeout_s, struct ceil_probe *p, char *err,
                 size_t err_len)
{
    static const char prom_usage[] =
        "prom probe needs prom:BASE_URL:QUERY, e.g. prom:http://127.0.0.1:9090:sum(rate(x[1m]))";

    memset(p, 0, sizeof *p);
    if (!name || !*name || strlen(name) >= sizeof p->name) {
        snprintf(err, err_len, "a probe's name must have 1 to %zu characters", sizeof p->name - 1);
        return -1;
    }
    if (!(timeout_s > 0)) {
        snprintf(err, err_len, "--%s: a probe's timeout must be above 0 s", name);
        return -1;
    }
    snprintf(p->name, sizeof p->name, "%s", name);
    p->timeout_s = timeout_s;
    if (!strncmp(spec, "prom:", 5)) {
        const char *url = spec + 5;
        size_t n = base_url_len(url), keep = n;
        if (!n || url[n] != ':' || !url[n + 1]) {
            snprintf(err, err_len, "--%s \"%s\": %s", name, spec, prom_usage);
            return -1;
        }
        while (keep && url[keep - 1] == '/') {
            keep--;
        }
        p->kind = CEIL_PROBE_PROM;
        p->base_url = strndup(url, keep);
        p->query = strdup(url + n + 1);
    } else if (!strncmp(spec, "cmd:", 4)) {
        const char *c = spec + 4;
        while (isspace((unsigned char)*c)) {
            c++;
        }
        if (!*c) {
            snprintf(err, err_len, "--%s \"%s\": cmd probe needs cmd:COMMAND, e.g. cmd:cat /run/queue-depth",
                     name, spec);
            return -1;
        }
        p->kind = CEIL_PROBE_CMD;
        p->query = strdup(spec + 4);
    } else if (!strncmp(spec, "file:", 5)) {
        const char *path = spec + 5, *colon = strchr(path, ':');
        if (!colon || colon == path || !colon[1]) {
            snprintf(err, err_len,
                     "--%s \"%s\": file probe needs file:PATH:REGEX, e.g. "
                     "file:/var/log/impstats.json:\"submitted\": ([0-9]+)",
                     name, spec);
            return -1;
        }
        p->kind = CEIL_PROBE_FILE;
        p->path = strndup(path, (size_t)(colon - path));
        p->query = strdup(colon + 1);
        if (p->query && ceil_file_probe_compile(p, p->query, err, err_len)) {
            ceil_probe_free(p);
            return -1;
        }
    } else {
        snprintf(err, err_len,
                 "--%s \"%s\": a probe is prom:BASE_URL:QUERY (a Prometheus instant query), cmd:COMMAND "
                 "(prints one number) or file:PATH:REGEX (the last matching line of a file)",
                 name, spec);
        return -1;
    }
    p->text = strdup(spec);
    if (!p->text || !p->query || (p->kind == CEIL_PROBE_PROM && !p->base_url) ||
        (p->kind == CEIL_PROBE_FILE && !p->path)) {
        ceil_probe_free(p);
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    return 0;
}

void
ceil_probe_free(struct ceil_probe *p)
{
    if (!p) {
        return;
    }
    free(p->text);
    free(p->base_url);
    free(p->query);
    free(p->path);
    ceil_file_probe_free(p);
    p->text = p->base_url = p->query = p->path = NULL;
}

/* Why a refused answer was refused: "HTTP 404: <its error text>". */
static void
http_refusal(long status, const char *body, size_t len, char *err, size_t err_len)
{
    struct jsonr_value *root = NULL;
    char jerr[64];
    const char *e = NULL, *et = NULL;

    if (!jsonr_parse(body, len, &root, jerr, sizeof jerr)) {
        e = jsonr_get_str(root, "error");
        et = jsonr_get_str(root, "errorType");
    }
    if (e) {
        snprintf(err, err_len, "HTTP %ld: %s%s%s", status, et ? et : "", et ? ": " : "", e);
    } else {
        size_t n = len < CEIL_HTTP_BODY_QUOTE_BYTES ? len : CEIL_HTTP_BODY_QUOTE_BYTES;
        while (n && isspace((unsigned char)body[n - 1])) {
            n--;
        }
        snprintf(err, err_len, "HTTP %ld%s%.*s", status, n ? ": " : "", (int)n, body);
    }
    jsonr_free(root);
}

int
ceil_http_call(const char *url, const char *post_body, const char *auth_header, double timeout_s,
               size_t max_bytes, struct sbuf *answer, long *status_out, char *err, size_t err_len)
{
    struct http_body body = {.max = max_bytes};
    struct curl_slist *headers = NULL, *more;
    char curl_err[CURL_ERROR_SIZE] = "";
    long status = 0, ms = (long)(timeout_s * 1000.0);
    CURL *c = curl_easy_init();
    CURLcode cc;
    int rc = -1;

    if (ms < 1) {
        ms = 1;
    }
    headers = curl_slist_append(NULL, "Accept: application/json");
    if (headers && post_body) {
        more = curl_slist_append(headers, "Content-Type: application/json");
        headers = more ? more : (curl_slist_free_all(headers), NULL);
    }
    if (headers && auth_header) {
        more = curl_slist_append(headers, auth_header);
        headers = more ? more : (curl_slist_free_all(headers), NULL);
    }
    if (!c || !headers) {
        snprintf(err, err_len, "cannot set up the HTTP client");
        goto cleanup;
    }
    if (curl_easy_setopt(c, CURLOPT_URL, url) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, http_body_write) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &body) != CURLE_OK ||
        /* A read is cut short by Ctrl-C; a POST (a rate set, the rate put back at the end) runs to its
         * answer: the fleet must not be left at a cell's rate. */
        (!post_body && curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, http_abort_on_signal) != CURLE_OK) ||
        (!post_body && curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L) != CURLE_OK) ||
        curl_easy_setopt(c, CURLOPT_ERRORBUFFER, curl_err) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, ms) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_USERAGENT, "fleetsim-stress/" FLEETSIM_VERSION) != CURLE_OK ||
        (post_body && curl_easy_setopt(c, CURLOPT_POSTFIELDS, post_body) != CURLE_OK)) {
        snprintf(err, err_len, "this libcurl lacks an option the HTTP client needs");
        goto cleanup;
    }
    cc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (run_interrupted() && !post_body) {
        snprintf(err, err_len, "interrupted by %s", run_interrupted_name());
    } else if (body.too_large) {
        snprintf(err, err_len, "%s: the answer is larger than %zu bytes", url, max_bytes);
    } else if (body.buf.failed) {
        snprintf(err, err_len, "out of memory");
    } else if (cc != CURLE_OK) {
        snprintf(err, err_len, "%s: %s", url, curl_err[0] ? curl_err : curl_easy_strerror(cc));
    } else if (status < 200 || status > 299) {
        char why[200];
        http_refusal(status, http_body_text(&body), body.buf.len, why, sizeof why);
        snprintf(err, err_len, "%s: %s", url, why);
    } else {
        rc = 0;
    }
    if (status_out) {
        *status_out = status;
    }
    if (body.buf.buf) {
        /* the answer goes to the caller even when refused: its text may say more */
        sbuf_free(answer);
        *answer = body.buf;
        body.buf = (struct sbuf){0};
    }
cleanup:
    sbuf_free(&body.buf);
    curl_slist_free_all(headers);
    curl_easy_cleanup(c);
    return rc;
}

static int
prom_read(struct ceil_probe *p, double *value)
{
    struct sbuf url = {0}, answer = {0};
    CURL *c = curl_easy_init();
    char *q = c ? curl_easy_escape(c, p->query, 0) : NULL;
    long status = 0;
    int rc = -1;

    if (!q) {
        snprintf(p->last_error, sizeof p->last_error, "cannot set up the HTTP client");
        goto cleanup;
    }
    sbuf_printf(&url, "%s/api/v1/query?query=%s", p->base_url, q);
    if (url.failed) {
        snprintf(p->last_error, sizeof p->last_error, "out of memory");
        goto cleanup;
    }
    rc = ceil_http_call(url.buf, NULL, NULL, p->timeout_s, CEIL_PROBE_ANSWER_MAX_BYTES, &answer, &status,
                        p->last_error, sizeof p->last_error);
    if (!rc) {
        rc = ceil_prom_answer_value(answer.buf ? answer.buf : "", answer.len, value, p->last_error,
                                    sizeof p->last_error);
    }
cleanup:
    curl_free(q);
    curl_easy_cleanup(c);
    sbuf_free(&url);
    sbuf_free(&answer);
    return rc;
}

/* Read what is ready on @p fd into @p b (at most @p max bytes kept). @return 1 at end of file, else 0. */
static int
drain_fd(int fd, struct sbuf *b, size_t max, int *too_long)
{
    char chunk[4096];
    ssize_t n = read(fd, chunk, sizeof chunk);

    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
        return 1;
    }
    if (n > 0) {
        if (b->len + (size_t)n > max) {
            *too_long = 1;
            return 1;
        }
        sbuf_add(b, chunk, (size_t)n);
    }
    return 0;
}

static int
cmd_read(struct ceil_probe *p, double *value)
{
    int out[2] = {-1, -1}, errp[2] = {-1, -1}, status = 0, out_done = 0, err_done = 0, too_long = 0;
    int timed_out = 0, spawned = 0, rc = -1, serr;
    struct sbuf o = {0}, e = {0};
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    char *argv[] = {"sh", "-c", p->query, NULL};
    double deadline = mono_s() + p->timeout_s;
    pid_t pid = -1;

    if (pipe2(out, O_CLOEXEC) || pipe2(errp, O_CLOEXEC)) {
        snprintf(p->last_error, sizeof p->last_error, "pipe: %s", strerror(errno));
        goto cleanup;
    }
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&attr);
    /* its own process group, so a timeout ends the shell and whatever it started */
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, errp[1], STDERR_FILENO);
    serr = posix_spawn(&pid, "/bin/sh", &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (serr) {
        snprintf(p->last_error, sizeof p->last_error, "cannot run /bin/sh: %s", strerror(serr));
        goto cleanup;
    }
    spawned = 1;
    close(out[1]);
    close(errp[1]);
    out[1] = errp[1] = -1;
    /* Both pipes until they close (the command and anything it left running are done) or the deadline. */
    while (!out_done || !err_done) {
        struct pollfd pf[2] = {{.fd = out_done ? -1 : out[0], .events = POLLIN},
                               {.fd = err_done ? -1 : errp[0], .events = POLLIN}};
        double left = deadline - mono_s();
        int wait_ms = left <= 0 ? 0 : (int)(left * 1000.0) + 1;
        if (left <= 0 || run_interrupted()) {
            timed_out = left <= 0;
            break;
        }
        if (poll(pf, 2, wait_ms < CEIL_CMD_POLL_MS ? wait_ms : CEIL_CMD_POLL_MS) < 0 && errno != EINTR) {
            break;
        }
        if (pf[0].revents && drain_fd(out[0], &o, CEIL_PROBE_ANSWER_MAX_BYTES, &too_long)) {
            out_done = 1;
        }
        if (pf[1].revents && drain_fd(errp[0], &e, CEIL_CMD_STDERR_MAX_BYTES, &(int){0})) {
            err_done = 1;
        }
        if (too_long) {
            break;
        }
    }
    if (!out_done || !err_done) {
        kill(-pid, SIGKILL);
    }
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    spawned = 0;
    if (run_interrupted()) {
        snprintf(p->last_error, sizeof p->last_error, "interrupted by %s", run_interrupted_name());
    } else if (timed_out) {
        snprintf(p->last_error, sizeof p->last_error, "the command took longer than %.3g s and was killed",
                 p->timeout_s);
    } else if (too_long) {
        snprintf(p->last_error, sizeof p->last_error, "the command printed more than %u bytes",
                 CEIL_PROBE_ANSWER_MAX_BYTES);
    } else if (o.failed || e.failed) {
        snprintf(p->last_error, sizeof p->last_error, "out of memory");
    } else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
        const char *line = e.buf ? e.buf : "";
        size_t n = strcspn(line, "\n");
        if (WIFEXITED(status)) {
            snprintf(p->last_error, sizeof p->last_error, "the command exited with status %d%s%.*s",
                     WEXITSTATUS(status), n ? ": " : "", (int)n, line);
        } else {
            snprintf(p->last_error, sizeof p->last_error, "the command was killed by signal %d%s%.*s",
                     WTERMSIG(status), n ? ": " : "", (int)n, line);
        }
    } else {
        rc = ceil_cmd_output_value(o.buf ? o.buf : "", o.len, value, p->last_error, sizeof p->last_error);
    }
cleanup:
    if (spawned) {
        kill(-pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    for (int i = 0; i < 2; i++) {
        if (out[i] >= 0) {
            close(out[i]);
        }
        if (errp[i] >= 0) {
            close(errp[i]);
        }
    }
    sbuf_free(&o);
    sbuf_free(&e);
    return rc;
}

int
ceil_probe_read(struct ceil_probe *p, double *value)
{
    int rc;

    p->reads++;
    p->last_error[0] = '\0';
    rc = p->kind == CEIL_PROBE_PROM   ? prom_read(p, value)
         : p->kind == CEIL_PROBE_FILE ? ceil_file_probe_read(p, value)
                                      : cmd_read(p, value);
    if (rc) {
        p->failures++;
    }
    return rc;
}
