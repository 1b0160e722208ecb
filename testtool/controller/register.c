/*
 * Registration with a RESTCONF controller, as OpenDaylight's testtool does
 * it today: the devices in batches of --generate-configs-batch-size, each
 * batch one RFC 8040 plain PATCH (a merge) of
 * /restconf/data/network-topology:network-topology/topology=topology-netconf
 * carrying the batch's nodes (inventory_odl_topology), with HTTP basic
 * authentication.
 *
 * One thread does it all, in order, so the worker loops never wait for the
 * controller. Two kinds of failure are told apart:
 *
 * - The controller answered (an HTTP status): a 5xx, 408 or 429 may pass and
 *   gets REGISTER_ATTEMPTS attempts with a short growing pause between; any
 *   other answer (a 4xx: the controller refuses the content) is final. Each
 *   failed attempt is logged with the batch, its devices, the status and the
 *   start of the answer.
 * - Nothing answered (connection refused, no route, timeout, connection
 *   closed without an answer): the controller is down or still starting,
 *   which concerns every batch alike, so the same batch is tried again with
 *   an exponential backoff (REGISTER_BACKOFF_FIRST_MS doubling up to
 *   REGISTER_BACKOFF_MAX_MS) for as long as it takes, attempts not counted.
 *   One line says so when it starts, one every REGISTER_UNREACHABLE_REPORT_MS
 *   at most while it lasts, one when the controller answers again.
 *
 * The whole registration is bounded by --time-out (OpenDaylight testtool's
 * deadline on its registration threads, 20 s by default): at the deadline
 * whatever is in flight is abandoned and one line says how many devices were
 * registered and how many not. The end brings one summary line either way.
 *
 * The exchange runs on a curl multi handle so that stopping is immediate:
 * controller_register_stop() sets a flag and wakes the handle's poll
 * (curl_multi_wakeup), whatever the thread waits for (connect, answer,
 * pause). There is one registration per process, so its state is a file
 * static owned by the main thread (start, stop) and the registration thread.
 */
#include "register.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "devtype.h"
#include "inventory.h"
#include "log.h"
#include "loop.h"
#include "sbuf.h"
#include "trap.h"

/* The topology every batch is merged into. */
#define REGISTER_PATH "/restconf/data/network-topology:network-topology/topology=topology-netconf"
/* Bound on establishing the connection (loopback or a LAN: a controller that does not accept is down). */
#define REGISTER_CONNECT_TIMEOUT_MS 5000
/* Bound on one exchange: a controller may take a while to write thousands of nodes. */
#define REGISTER_REQUEST_TIMEOUT_MS 120000
/* After an HTTP answer that may pass, the pause before attempt k + 1 is k times this. */
#define REGISTER_PAUSE_MS 500
/* Most bytes of an answer kept (only its start is logged). */
#define REGISTER_ANSWER_KEEP_BYTES 65536
/* Bytes of the controller's answer quoted in a failure line. */
#define REGISTER_ANSWER_LOG_BYTES 300
/* Longest wait in curl_multi_poll; a stop wakes it at once anyway. */
#define REGISTER_POLL_MS 1000
/* "controller:port" as logged: a host name or address, brackets and a port. */
#define REGISTER_PEER_MAX (INVENTORY_HOST_MAX + 8)
/* Longest reason for no answer ("connection refused"). */
#define REGISTER_REASON_MAX 160

enum reg_outcome {
    REG_DONE,        /* 2xx: the batch is registered */
    REG_RETRY,       /* an HTTP answer that may pass (5xx, 408, 429) */
    REG_FINAL,       /* the controller refused the batch: another attempt would get the same answer */
    REG_UNREACHABLE, /* no HTTP answer at all: refused, no route, timeout, closed */
    REG_STOPPED,     /* controller_register_stop() was called */
    REG_DEADLINE,    /* --time-out passed */
};

struct reg_state {
    const struct fleet_config *cfg;        /* the fleet-wide plan; valid while started */
    const struct fleet_group_spec *groups; /* the groups' plans */
    uint32_t group_count;                  /* entries in groups */
    pthread_t thread;                      /* the registration thread; valid while started */
    int started;                           /* 1 between a successful start and stop */
    atomic_int stop;                       /* set by stop: the thread abandons what it does */
    CURLM *multi;                          /* drives the exchanges; made by start so that stop can wake it */
    monotime_us deadline_us;               /* --time-out: when registering ends, 0: never */
    char url[INVENTORY_HOST_MAX + sizeof REGISTER_PATH + 16]; /* the topology's URL */
    char peer[REGISTER_PEER_MAX];                             /* "ADDR:PORT" for log lines */
    const struct fleet *fleet;                                /* the fleet; valid while started */
    pthread_mutex_t queue_lock;                               /* guards queue and queued */
    struct reg_range *queue;                                  /* node runs waiting to be registered */
    uint32_t queued;                                          /* entries in queue */
    uint32_t queue_cap;                                       /* entries allocated */
};

/* Nodes first .. first + count - 1 (inventory numbering) to register. */
struct reg_range {
    uint32_t first; /* first node */
    uint32_t count; /* nodes */
};

/* What the thread has done so far. */
struct reg_progress {
    uint32_t registered;              /* devices in batches the controller accepted */
    uint32_t failed;                  /* batches given up */
    uint32_t tried;                   /* batches started */
    monotime_us down_since_us;        /* when the controller stopped answering, 0 while it answers */
    monotime_us down_logged_us;       /* when the last "unreachable" line was written */
    uint32_t down_attempts;           /* attempts without an answer since down_since_us */
    long backoff_ms;                  /* the next pause while unreachable */
    char reason[REGISTER_REASON_MAX]; /* why the last attempt got no answer */
};

static struct reg_state reg = {.queue_lock = PTHREAD_MUTEX_INITIALIZER};

int
controller_register_check(const struct fleet_config *cfg, char *err, size_t err_len)
{
    if (!cfg->controller_ip) {
        return 0;
    }
    if (!inventory_host_valid(cfg->controller_ip)) {
        snprintf(err, err_len, "--controller-ip must be a host name or an address, not \"%s\"",
                 cfg->controller_ip);
        return -1;
    }
    return inventory_check(cfg, err, err_len);
}

/* libcurl's write callback: keep the start of the answer. */
static size_t
keep_answer(char *data, size_t size, size_t nmemb, void *userdata)
{
    struct sbuf *answer = userdata;
    size_t n = size * nmemb;

    if (answer->len < REGISTER_ANSWER_KEEP_BYTES) {
        size_t room = REGISTER_ANSWER_KEEP_BYTES - answer->len;
        sbuf_add(answer, data, n < room ? n : room);
    }
    return n;
}

/* How long the thread may wait from @p now: at most @p want_ms, never past the deadline. */
static long
wait_budget_ms(monotime_us now, long want_ms)
{
    if (reg.deadline_us) {
        long left = now >= reg.deadline_us ? 0 : (long)((reg.deadline_us - now + 999) / 1000);
        return left < want_ms ? left : want_ms;
    }
    return want_ms;
}

/* REG_STOPPED or REG_DEADLINE when registering must end now, else REG_DONE. */
static enum reg_outcome
must_end(monotime_us now)
{
    if (atomic_load(&reg.stop)) {
        return REG_STOPPED;
    }
    if (reg.deadline_us && now >= reg.deadline_us) {
        return REG_DEADLINE;
    }
    return REG_DONE;
}

/* Wait @p ms unless stopped or past the deadline. @return REG_DONE after the pause, else why it ended. */
static enum reg_outcome
pause_ms(long ms)
{
    monotime_us deadline = loop_clock_monotonic() + (monotime_us)ms * 1000;

    for (;;) {
        monotime_us now = loop_clock_monotonic();
        enum reg_outcome end = must_end(now);
        if (end != REG_DONE || now >= deadline) {
            return end;
        }
        curl_multi_poll(reg.multi, NULL, 0, (int)wait_budget_ms(now, (long)((deadline - now + 999) / 1000)),
                        NULL);
    }
}

/* The answer's start on one line: control characters become spaces. */
static void
answer_excerpt(const struct sbuf *answer, char *out, size_t out_len)
{
    size_t n = answer->len < REGISTER_ANSWER_LOG_BYTES ? answer->len : REGISTER_ANSWER_LOG_BYTES;

    if (n >= out_len) {
        n = out_len - 1;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)answer->buf[i];
        out[i] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
    }
    out[n] = '\0';
}

/* strerror(@p e) starting in lower case, as it reads inside a sentence ("connection refused"). */
static void
errno_text(long e, char *out, size_t out_len)
{
    snprintf(out, out_len, "%s", strerror((int)e));
    if (out[0] >= 'A' && out[0] <= 'Z' && !(out[1] >= 'A' && out[1] <= 'Z')) {
        out[0] = (char)(out[0] - 'A' + 'a');
    }
}

/* Why a transfer that ended with @p result got no HTTP answer, in words (no curl jargon). */
static void
no_answer_reason(CURL *easy, CURLcode result, char *out, size_t out_len)
{
    long os_errno = 0;
    curl_off_t connect_us = 0;

    curl_easy_getinfo(easy, CURLINFO_OS_ERRNO, &os_errno);
    switch (result) {
    case CURLE_COULDNT_CONNECT:
        if (os_errno) {
            errno_text(os_errno, out, out_len);
        } else {
            snprintf(out, out_len, "cannot connect");
        }
        break;
    case CURLE_OPERATION_TIMEDOUT:
        curl_easy_getinfo(easy, CURLINFO_CONNECT_TIME_T, &connect_us);
        if (connect_us > 0) {
            snprintf(out, out_len, "no answer within %d s", REGISTER_REQUEST_TIMEOUT_MS / 1000);
        } else {
            snprintf(out, out_len, "no connection within %d s", REGISTER_CONNECT_TIMEOUT_MS / 1000);
        }
        break;
    case CURLE_COULDNT_RESOLVE_HOST:
        snprintf(out, out_len, "host name not found");
        break;
    case CURLE_GOT_NOTHING:
        snprintf(out, out_len, "connection closed without an answer");
        break;
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR: {
        char text[96];
        errno_text(os_errno ? os_errno : ECONNRESET, text, sizeof text);
        snprintf(out, out_len, "connection lost: %s", text);
        break;
    }
    default:
        snprintf(out, out_len, "%s", curl_easy_strerror(result));
        break;
    }
}

/*
 * One PATCH of @p body. @p what receives the HTTP status, or for REG_UNREACHABLE why nothing answered;
 * @p answer the controller's answer.
 */
static enum reg_outcome
exchange(CURL *easy, const struct sbuf *body, struct sbuf *answer, char *what, size_t what_len)
{
    char curl_err[CURL_ERROR_SIZE] = "";
    CURLcode result = CURLE_OK;
    enum reg_outcome end;
    CURLMsg *msg;
    long status = 0;
    int running = 1;
    int queued;

    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body->buf);
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body->len);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, answer);
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, curl_err);
    if (curl_multi_add_handle(reg.multi, easy) != CURLM_OK) {
        curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, NULL);
        snprintf(what, what_len, "cannot start the request");
        return REG_UNREACHABLE;
    }
    while (running) {
        monotime_us now = loop_clock_monotonic();
        if ((end = must_end(now)) != REG_DONE) {
            curl_multi_remove_handle(reg.multi, easy);
            curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, NULL);
            return end;
        }
        if (curl_multi_perform(reg.multi, &running) != CURLM_OK) {
            break;
        }
        if (running) {
            curl_multi_poll(reg.multi, NULL, 0, (int)wait_budget_ms(now, REGISTER_POLL_MS), NULL);
        }
    }
    while ((msg = curl_multi_info_read(reg.multi, &queued))) {
        if (msg->msg == CURLMSG_DONE && msg->easy_handle == easy) {
            result = msg->data.result;
        }
    }
    curl_multi_remove_handle(reg.multi, easy);
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, NULL);
    if (result != CURLE_OK) {
        no_answer_reason(easy, result, what, what_len);
        log_debug("controller: no answer from %s: %s%s%s%s", reg.url, curl_easy_strerror(result),
                  curl_err[0] ? " (" : "", curl_err, curl_err[0] ? ")" : "");
        return REG_UNREACHABLE;
    }
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    snprintf(what, what_len, "HTTP %ld", status);
    if (status >= 200 && status < 300) {
        return REG_DONE;
    }
    if (status >= 500 || status == 408 || status == 429) {
        return REG_RETRY;
    }
    return REG_FINAL;
}

/* Seconds since @p since_us, for log lines. */
static double
seconds_since(monotime_us since_us)
{
    return (double)(loop_clock_monotonic() - since_us) / 1e6;
}

/*
 * An attempt got no answer because of @p reason: say so when the outage starts and now and then while it
 * lasts, then wait the backoff (doubled for next time). @return REG_DONE to try again, or why to end.
 */
static enum reg_outcome
unreachable_backoff(struct reg_progress *p, const char *reason)
{
    monotime_us now = loop_clock_monotonic();
    uint32_t total = inventory_node_count(reg.groups, reg.group_count); /* every group's nodes */
    enum reg_outcome end;

    p->down_attempts++;
    snprintf(p->reason, sizeof p->reason, "%s", reason);
    if (!p->down_since_us) {
        p->down_since_us = now;
        p->down_logged_us = now;
        p->backoff_ms = REGISTER_BACKOFF_FIRST_MS;
        log_warn("controller %s unreachable (%s); retrying with backoff up to %d s, the fleet keeps serving",
                 reg.peer, reason, REGISTER_BACKOFF_MAX_MS / 1000);
    } else if (now - p->down_logged_us >= (monotime_us)REGISTER_UNREACHABLE_REPORT_MS * 1000) {
        p->down_logged_us = now;
        log_warn("controller %s still unreachable (%s) after %.0f s and %u attempts; %u of %u devices "
                 "registered, next attempt in %.1f s",
                 reg.peer, reason, seconds_since(p->down_since_us), (unsigned)p->down_attempts,
                 (unsigned)p->registered, (unsigned)total, (double)wait_budget_ms(now, p->backoff_ms) / 1000);
    }
    end = pause_ms(p->backoff_ms);
    p->backoff_ms = p->backoff_ms * 2 > REGISTER_BACKOFF_MAX_MS ? REGISTER_BACKOFF_MAX_MS : p->backoff_ms * 2;
    return end;
}

/* An HTTP answer came: if the controller had been unreachable, say it is back. */
static void
answered(struct reg_progress *p)
{
    if (p->down_since_us) {
        log_info("controller %s reachable again after %.1f s (%u attempts without an answer); registering "
                 "goes on",
                 reg.peer, seconds_since(p->down_since_us), (unsigned)p->down_attempts);
        p->down_since_us = 0;
        p->down_attempts = 0;
    }
}

/*
 * Register devices @p first .. @p first + @p count - 1, batch @p b of @p batches, whose document is @p body.
 * @return REG_DONE when the batch is settled (registered or given up), else why registering ends.
 */
static enum reg_outcome
register_batch(CURL *easy, struct reg_progress *p, uint32_t b, uint32_t batches, uint32_t first,
               uint32_t count, const struct sbuf *body, struct sbuf *answer)
{
    char what[REGISTER_REASON_MAX];
    char excerpt[REGISTER_ANSWER_LOG_BYTES + 1];
    enum reg_outcome outcome;
    int attempt = 1;

    for (;;) {
        sbuf_free(answer);
        outcome = exchange(easy, body, answer, what, sizeof what);
        if (outcome == REG_STOPPED || outcome == REG_DEADLINE) {
            return outcome;
        }
        if (outcome == REG_UNREACHABLE) {
            if ((outcome = unreachable_backoff(p, what)) != REG_DONE) {
                return outcome;
            }
            continue; /* the same batch again; an outage uses up none of its attempts */
        }
        answered(p);
        if (outcome == REG_DONE) {
            log_debug("controller: batch %u of %u (devices %u-%u) registered: %s", (unsigned)b + 1,
                      (unsigned)batches, (unsigned)first, (unsigned)(first + count - 1), what);
            p->registered += count;
            return REG_DONE;
        }
        if (answer->len) {
            answer_excerpt(answer, excerpt, sizeof excerpt);
            log_warn("controller: batch %u of %u (devices %u-%u): attempt %d of %d failed: %s; the "
                     "controller answered: \"%s\"%s",
                     (unsigned)b + 1, (unsigned)batches, (unsigned)first, (unsigned)(first + count - 1),
                     attempt, REGISTER_ATTEMPTS, what, excerpt,
                     answer->len > REGISTER_ANSWER_LOG_BYTES ? " (cut)" : "");
        } else {
            log_warn("controller: batch %u of %u (devices %u-%u): attempt %d of %d failed: %s with an empty "
                     "answer",
                     (unsigned)b + 1, (unsigned)batches, (unsigned)first, (unsigned)(first + count - 1),
                     attempt, REGISTER_ATTEMPTS, what);
        }
        if (outcome == REG_FINAL || attempt == REGISTER_ATTEMPTS) {
            log_error("controller: batch %u of %u (devices %u-%u) not registered: %s", (unsigned)b + 1,
                      (unsigned)batches, (unsigned)first, (unsigned)(first + count - 1),
                      outcome == REG_FINAL ? "the controller refused it (not retried)"
                                           : "no attempt succeeded");
            p->failed++;
            return REG_DONE;
        }
        if ((outcome = pause_ms((long)REGISTER_PAUSE_MS * attempt)) != REG_DONE) {
            return outcome;
        }
        attempt++;
    }
}

/* Queue nodes @p first .. @p first + @p count - 1. @return 0, or -1 when out of memory. */
static int
enqueue_nodes(uint32_t first, uint32_t count)
{
    int rc = 0;

    pthread_mutex_lock(&reg.queue_lock);
    if (reg.queued == reg.queue_cap) {
        uint32_t cap = reg.queue_cap ? reg.queue_cap * 2 : 16;
        struct reg_range *q = realloc(reg.queue, cap * sizeof *q);
        if (!q) {
            rc = -1;
        } else {
            reg.queue = q;
            reg.queue_cap = cap;
        }
    }
    if (!rc) {
        reg.queue[reg.queued++] = (struct reg_range){first, count};
    }
    pthread_mutex_unlock(&reg.queue_lock);
    return rc;
}

/* Take every queued run. @return Their count (*out malloc'd), 0 when none. */
static uint32_t
take_queue(struct reg_range **out)
{
    uint32_t n;

    pthread_mutex_lock(&reg.queue_lock);
    n = reg.queued;
    *out = reg.queue;
    reg.queue = NULL;
    reg.queued = reg.queue_cap = 0;
    pthread_mutex_unlock(&reg.queue_lock);
    return n;
}

/* The log lines before a registration: what, where, in how many batches. */
static void
log_plan(const struct fleet_config *cfg, uint32_t total, uint32_t batches, int joined)
{
    char limit[48] = "";

    if (cfg->register_timeout_s) {
        snprintf(limit, sizeof limit, " within --time-out %u s", (unsigned)cfg->register_timeout_s);
    }
    log_info("controller: registering %u %s with %s in %u batches of up to %u%s", (unsigned)total,
             joined ? "devices that joined the fleet" : "devices", reg.url, (unsigned)batches,
             (unsigned)cfg->configs_batch_size, limit);
    if (joined) {
        return;
    }
    if (cfg->devices_per_port > 1) {
        log_info("controller: --devices-per-port %u: each of the %u devices is %u nodes (%u mounts of it)",
                 (unsigned)cfg->devices_per_port, (unsigned)cfg->device_count,
                 (unsigned)cfg->devices_per_port, (unsigned)cfg->devices_per_port);
    }
    /* ODL's node has no place for them: the log says which devices (and so which node-ids) are which. */
    for (uint32_t g = 0, first = 0; reg.group_count > 1 && g < reg.group_count; g++) {
        char type[128];
        uint32_t n = reg.groups[g].cfg.device_count;
        device_type_label(&reg.groups[g].cfg, type, sizeof type);
        log_info("controller: group %s: devices %u-%u, type %s", reg.groups[g].name, (unsigned)first,
                 (unsigned)(first + n - 1), type);
        first += n;
    }
}

/*
 * Register the runs @p runs[0..n) in batches of --generate-configs-batch-size, within --time-out from now.
 * @p joined: devices that joined a running fleet (grow), else the fleet's start. Logs the outcome.
 * @return REG_STOPPED when stopped, else REG_DONE.
 */
static enum reg_outcome
register_runs(CURL *easy, const struct reg_range *runs, uint32_t n, int joined, uint32_t *not_registered)
{
    const struct fleet_config *cfg = reg.cfg;
    uint32_t size = cfg->configs_batch_size, total = 0, batches = 0, b = 0;
    struct reg_progress p = {0};
    monotime_us started_us = loop_clock_monotonic();
    struct sbuf body = {0};
    struct sbuf answer = {0};
    enum reg_outcome end = REG_DONE;

    for (uint32_t r = 0; r < n; r++) {
        total += runs[r].count;
        batches += (runs[r].count + size - 1) / size;
    }
    reg.deadline_us =
        cfg->register_timeout_s ? started_us + (monotime_us)cfg->register_timeout_s * 1000000 : 0;
    log_plan(cfg, total, batches, joined);
    for (uint32_t r = 0; r < n && end == REG_DONE; r++) {
        for (uint32_t done = 0; done < runs[r].count && end == REG_DONE; done += size, b++) {
            uint32_t first = runs[r].first + done;
            uint32_t count = runs[r].count - done < size ? runs[r].count - done : size;

            sbuf_free(&body);
            inventory_odl_topology(reg.groups, reg.group_count, first, count, &body);
            p.tried++;
            if (body.failed) {
                log_error("controller: batch %u of %u (devices %u-%u): out of memory building the request",
                          (unsigned)b + 1, (unsigned)batches, (unsigned)first, (unsigned)(first + count - 1));
                p.failed++;
                continue;
            }
            end = register_batch(easy, &p, b, batches, first, count, &body, &answer);
        }
    }
    if (end != REG_DONE) {
        p.tried--; /* the batch in flight was abandoned, neither registered nor failed */
    }
    if (end == REG_DEADLINE) {
        char why[REGISTER_PEER_MAX + REGISTER_REASON_MAX + 48] = "";
        if (p.down_since_us) {
            snprintf(why, sizeof why, " (controller %s unreachable for %.1f s: %s)", reg.peer,
                     seconds_since(p.down_since_us), p.reason);
        }
        log_warn("controller: --time-out %u s reached: registered %u of %u devices, %u not registered%s; the "
                 "fleet keeps serving",
                 (unsigned)cfg->register_timeout_s, (unsigned)p.registered, (unsigned)total,
                 (unsigned)(total - p.registered), why);
    } else {
        log_msg(p.registered == total ? LOGL_INFO : LOGL_WARN,
                "controller: %sregistered %u of %u devices in %u batches, %u failed, in %.2f s",
                end == REG_STOPPED ? "stopped: " : "", (unsigned)p.registered, (unsigned)total,
                (unsigned)p.tried, (unsigned)p.failed, seconds_since(started_us));
    }
    sbuf_free(&body);
    sbuf_free(&answer);
    *not_registered = total - p.registered;
    return end == REG_STOPPED ? REG_STOPPED : REG_DONE;
}

/* The one handle every batch goes through, and its headers (freed by the caller, with the handle). */
static CURL *
reg_easy(const struct fleet_config *cfg, struct curl_slist **headers_out)
{
    struct curl_slist *headers = NULL;
    CURL *easy;

    headers = curl_slist_append(headers, "Content-Type: application/yang-data+json");
    headers = headers ? curl_slist_append(headers, "Accept: application/yang-data+json") : NULL;
    /* No "Expect: 100-continue" for large batches: one round trip less, and every server copes. */
    headers = headers ? curl_slist_append(headers, "Expect:") : NULL;
    *headers_out = headers;
    if (!headers || !(easy = curl_easy_init())) {
        log_error("controller: cannot prepare the requests (out of memory)");
        return NULL;
    }
    curl_easy_setopt(easy, CURLOPT_URL, reg.url);
    curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, "PATCH");
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(easy, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
    curl_easy_setopt(easy, CURLOPT_USERNAME, cfg->controller_username);
    curl_easy_setopt(easy, CURLOPT_PASSWORD, cfg->controller_password);
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, (long)REGISTER_CONNECT_TIMEOUT_MS);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, (long)REGISTER_REQUEST_TIMEOUT_MS);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, keep_answer);
    return easy;
}

static void *
reg_run(void *arg)
{
    struct curl_slist *headers = NULL;
    CURL *easy = NULL;
    int joined = 0;
    uint32_t missed;

    (void)arg;
    if (!(easy = reg_easy(reg.cfg, &headers))) {
        goto cleanup;
    }

    /* The fleet's start first, then whatever joins it (grow), until stopped. */
    while (!atomic_load(&reg.stop)) {
        struct reg_range *runs = NULL;
        uint32_t n = take_queue(&runs);
        enum reg_outcome end = REG_DONE;
        if (n) {
            end = register_runs(easy, runs, n, joined, &missed);
        } else {
            reg.deadline_us = 0;
            curl_multi_poll(reg.multi, NULL, 0, REGISTER_POLL_MS, NULL); /* woken by a queue or a stop */
        }
        if (n || !joined) {
            joined = 1; /* an empty start (a fleet that grows from nothing) is no registration */
        }
        free(runs);
        if (end == REG_STOPPED) {
            break;
        }
    }

cleanup:
    curl_easy_cleanup(easy);
    curl_slist_free_all(headers);
    return NULL;
}

int
controller_register_devices(const struct fleet *fleet, uint32_t first, uint32_t count)
{
    uint32_t node, last_node, copies;

    if (!reg.started || !count) {
        return 0;
    }
    node = inventory_first_node(fleet->specs, fleet->group_count, first);
    copies = fleet->devices[first + count - 1].group->cfg.devices_per_port;
    last_node =
        inventory_first_node(fleet->specs, fleet->group_count, first + count - 1) + (copies ? copies : 1);
    if (enqueue_nodes(node, last_node - node)) {
        log_error("controller: out of memory: devices %u-%u not registered", (unsigned)first,
                  (unsigned)(first + count - 1));
        return -1;
    }
    curl_multi_wakeup(reg.multi);
    return 0;
}

/* The controller's URL and libcurl, for the groups @p groups of @p cfg. */
static int
reg_setup(const struct fleet_config *cfg, const struct fleet_group_spec *groups, uint32_t group_count)
{
    const char *ip = cfg->controller_ip;
    int v6 = strchr(ip, ':') != NULL;

    snprintf(reg.url, sizeof reg.url, "http://%s%s%s:%u" REGISTER_PATH, v6 ? "[" : "", ip, v6 ? "]" : "",
             (unsigned)cfg->controller_port);
    snprintf(reg.peer, sizeof reg.peer, "%s%s%s:%u", v6 ? "[" : "", ip, v6 ? "]" : "",
             (unsigned)cfg->controller_port);
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        return -1;
    }
    if (!(reg.multi = curl_multi_init())) {
        curl_global_cleanup();
        return -1;
    }
    reg.cfg = cfg;
    reg.groups = groups;
    reg.group_count = group_count;
    atomic_store(&reg.stop, 0);
    return 0;
}

/* What reg_setup() and the queue hold, released. */
static void
reg_teardown(void)
{
    curl_multi_cleanup(reg.multi);
    reg.multi = NULL;
    curl_global_cleanup();
    free(reg.queue);
    reg.queue = NULL;
    reg.queued = reg.queue_cap = 0;
}

int
controller_register_once(const struct fleet_config *cfg, const struct fleet_group_spec *groups,
                         uint32_t group_count)
{
    struct curl_slist *headers = NULL;
    struct reg_range *runs = NULL;
    CURL *easy = NULL;
    uint32_t n, missed = 1;

    if (reg_setup(cfg, groups, group_count)) {
        log_error("controller: cannot start libcurl");
        return -1;
    }
    if (!enqueue_nodes(0, inventory_node_count(groups, group_count)) && (easy = reg_easy(cfg, &headers))) {
        n = take_queue(&runs);
        register_runs(easy, runs, n, 0, &missed);
    }
    free(runs);
    curl_easy_cleanup(easy);
    curl_slist_free_all(headers);
    reg_teardown();
    return missed ? -1 : 0;
}

int
controller_register_start(struct fleet *fleet)
{
    if (!fleet->cfg.controller_ip || reg.started) {
        return 0;
    }
    if (reg_setup(&fleet->cfg, fleet->specs, fleet->group_count)) {
        return -1;
    }
    reg.fleet = fleet;
    /* The devices present at start, each group's first (all of them without a scenario that grows). */
    for (uint32_t g = 0; g < fleet->group_count; g++) {
        const struct device_group *grp = &fleet->groups[g];
        uint32_t copies = grp->cfg.devices_per_port ? grp->cfg.devices_per_port : 1;
        if (grp->start_present &&
            enqueue_nodes(inventory_first_node(fleet->specs, fleet->group_count, grp->first),
                          grp->start_present * copies)) {
            reg_teardown();
            return -1;
        }
    }
    if (pthread_create(&reg.thread, NULL, reg_run, NULL)) {
        reg_teardown();
        return -1;
    }
    reg.started = 1;
    return 0;
}

void
controller_register_stop(struct fleet *fleet)
{
    (void)fleet;
    if (!reg.started) {
        return;
    }
    atomic_store(&reg.stop, 1);
    curl_multi_wakeup(reg.multi);
    pthread_join(reg.thread, NULL);
    reg_teardown();
    reg.started = 0;
}
