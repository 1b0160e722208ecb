/*
 * Registration with a RESTCONF controller, as OpenDaylight's testtool does
 * it today: the devices in batches of --generate-configs-batch-size, each
 * batch one RFC 8040 plain PATCH (a merge) of
 * /restconf/data/network-topology:network-topology/topology=topology-netconf
 * carrying the batch's nodes (inventory_odl_topology), with HTTP basic
 * authentication.
 *
 * One thread does it all, in order, so the worker loops never wait for the
 * controller. A batch gets REGISTER_ATTEMPTS attempts when the failure may
 * pass (connection refused or lost, timeout, 5xx, 408, 429), with a short
 * growing pause between; any other answer (a 4xx: the controller refuses
 * the content) is final. Every failed attempt is logged with the batch, its
 * devices, the status and the start of the controller's answer; the end
 * brings one summary line.
 *
 * The exchange runs on a curl multi handle so that stopping is immediate:
 * controller_register_stop() sets a flag and wakes the handle's poll
 * (curl_multi_wakeup), whatever the thread waits for (connect, answer,
 * pause). There is one registration per process, so its state is a file
 * static owned by the main thread (start, stop) and the registration thread.
 */
#include "register.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "fleet.h"
#include "inventory.h"
#include "log.h"
#include "loop.h"
#include "sbuf.h"

/* The topology every batch is merged into. */
#define REGISTER_PATH "/restconf/data/network-topology:network-topology/topology=topology-netconf"
/* Bound on establishing the connection (loopback or a LAN: a controller that does not accept is down). */
#define REGISTER_CONNECT_TIMEOUT_MS 5000
/* Bound on one exchange: a controller may take a while to write thousands of nodes. */
#define REGISTER_REQUEST_TIMEOUT_MS 120000
/* Pause before attempt k + 1 is k times this. */
#define REGISTER_PAUSE_MS 500
/* Most bytes of an answer kept (only its start is logged). */
#define REGISTER_ANSWER_KEEP_BYTES 65536
/* Bytes of the controller's answer quoted in a failure line. */
#define REGISTER_ANSWER_LOG_BYTES 300
/* Longest wait in curl_multi_poll; a stop wakes it at once anyway. */
#define REGISTER_POLL_MS 1000

enum reg_outcome {
    REG_DONE,    /* 2xx: the batch is registered */
    REG_RETRY,   /* failed in a way that may pass */
    REG_FINAL,   /* the controller refused the batch: another attempt would get the same answer */
    REG_STOPPED, /* controller_register_stop() was called */
};

struct reg_state {
    const struct fleet_config *cfg; /* the plan; valid while started */
    pthread_t thread;               /* the registration thread; valid while started */
    int started;                    /* 1 between a successful start and stop */
    atomic_int stop;                /* set by stop: the thread abandons what it does */
    CURLM *multi;                   /* drives the exchanges; made by start so that stop can wake it */
    char url[INVENTORY_HOST_MAX + sizeof REGISTER_PATH + 16]; /* the topology's URL */
};

static struct reg_state reg;

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

/* Wait @p ms unless stopped. @return 0 after the pause, -1 when stopped. */
static int
pause_ms(long ms)
{
    monotime_us deadline = loop_clock_monotonic() + (monotime_us)ms * 1000;

    while (!atomic_load(&reg.stop)) {
        monotime_us now = loop_clock_monotonic();
        if (now >= deadline) {
            return 0;
        }
        curl_multi_poll(reg.multi, NULL, 0, (int)((deadline - now + 999) / 1000), NULL);
    }
    return -1;
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

/*
 * One PATCH of @p body. @p what receives the failure (transport error or HTTP status) and @p answer the
 * controller's answer.
 */
static enum reg_outcome
exchange(CURL *easy, const struct sbuf *body, struct sbuf *answer, char *what, size_t what_len)
{
    char curl_err[CURL_ERROR_SIZE] = "";
    CURLcode result = CURLE_OK;
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
        return REG_RETRY;
    }
    while (running) {
        if (atomic_load(&reg.stop)) {
            curl_multi_remove_handle(reg.multi, easy);
            curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, NULL);
            return REG_STOPPED;
        }
        if (curl_multi_perform(reg.multi, &running) != CURLM_OK) {
            break;
        }
        if (running) {
            curl_multi_poll(reg.multi, NULL, 0, REGISTER_POLL_MS, NULL);
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
        snprintf(what, what_len, "%s%s%s%s", curl_easy_strerror(result), curl_err[0] ? " (" : "", curl_err,
                 curl_err[0] ? ")" : "");
        return REG_RETRY;
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

static void *
reg_run(void *arg)
{
    const struct fleet_config *cfg = reg.cfg;
    uint32_t total = cfg->device_count;
    uint32_t size = cfg->configs_batch_size;
    uint32_t batches = (total + size - 1) / size;
    uint32_t registered = 0;
    uint32_t failed = 0;
    uint32_t tried = 0;
    monotime_us started_us = loop_clock_monotonic();
    struct curl_slist *headers = NULL;
    struct sbuf body = {0};
    struct sbuf answer = {0};
    CURL *easy = NULL;
    int stopped = 0;

    (void)arg;
    headers = curl_slist_append(headers, "Content-Type: application/yang-data+json");
    headers = headers ? curl_slist_append(headers, "Accept: application/yang-data+json") : NULL;
    /* No "Expect: 100-continue" for large batches: one round trip less, and every server copes. */
    headers = headers ? curl_slist_append(headers, "Expect:") : NULL;
    if (!headers || !(easy = curl_easy_init())) {
        log_error("controller: cannot prepare the requests (out of memory)");
        goto cleanup;
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
    log_info("controller: registering %u devices with %s in %u batches of up to %u", (unsigned)total, reg.url,
             (unsigned)batches, (unsigned)size);

    for (uint32_t b = 0; b < batches && !stopped; b++) {
        uint32_t first = b * size;
        uint32_t count = total - first < size ? total - first : size;
        enum reg_outcome outcome = REG_RETRY;
        char what[CURL_ERROR_SIZE + 128];
        char excerpt[REGISTER_ANSWER_LOG_BYTES + 1];

        sbuf_free(&body);
        inventory_odl_topology(cfg, first, count, &body);
        tried++;
        if (body.failed) {
            log_error("controller: batch %u of %u (devices %u-%u): out of memory building the request",
                      (unsigned)b + 1, (unsigned)batches, (unsigned)first, (unsigned)(first + count - 1));
            failed++;
            continue;
        }
        for (int attempt = 1; attempt <= REGISTER_ATTEMPTS; attempt++) {
            sbuf_free(&answer);
            outcome = exchange(easy, &body, &answer, what, sizeof what);
            if (outcome == REG_DONE) {
                log_debug("controller: batch %u of %u (devices %u-%u) registered: %s", (unsigned)b + 1,
                          (unsigned)batches, (unsigned)first, (unsigned)(first + count - 1), what);
                registered += count;
                break;
            }
            if (outcome == REG_STOPPED) {
                stopped = 1;
                break;
            }
            answer_excerpt(&answer, excerpt, sizeof excerpt);
            log_warn(
                "controller: batch %u of %u (devices %u-%u): attempt %d of %d failed: %s; the controller "
                "answered: \"%s\"%s",
                (unsigned)b + 1, (unsigned)batches, (unsigned)first, (unsigned)(first + count - 1), attempt,
                REGISTER_ATTEMPTS, what, excerpt, answer.len > REGISTER_ANSWER_LOG_BYTES ? " (cut)" : "");
            if (outcome == REG_FINAL || attempt == REGISTER_ATTEMPTS) {
                log_error("controller: batch %u of %u (devices %u-%u) not registered: %s", (unsigned)b + 1,
                          (unsigned)batches, (unsigned)first, (unsigned)(first + count - 1),
                          outcome == REG_FINAL ? "the controller refused it (not retried)"
                                               : "no attempt succeeded");
                failed++;
                break;
            }
            if (pause_ms((long)REGISTER_PAUSE_MS * attempt)) {
                stopped = 1;
                break;
            }
        }
    }
    if (stopped) {
        tried--; /* the batch in flight was abandoned, neither registered nor failed */
    }
    log_msg(registered == total ? LOGL_INFO : LOGL_WARN,
            "controller: %sregistered %u of %u devices in %u batches, %u failed, in %.2f s",
            stopped ? "stopped: " : "", (unsigned)registered, (unsigned)total, (unsigned)tried,
            (unsigned)failed, (double)(loop_clock_monotonic() - started_us) / 1e6);

cleanup:
    curl_easy_cleanup(easy);
    curl_slist_free_all(headers);
    sbuf_free(&body);
    sbuf_free(&answer);
    return NULL;
}

int
controller_register_start(struct fleet *fleet)
{
    const struct fleet_config *cfg = &fleet->cfg;
    const char *ip = cfg->controller_ip;
    int v6;

    if (!ip || reg.started) {
        return 0;
    }
    v6 = strchr(ip, ':') != NULL;
    snprintf(reg.url, sizeof reg.url, "http://%s%s%s:%u" REGISTER_PATH, v6 ? "[" : "", ip, v6 ? "]" : "",
             (unsigned)cfg->controller_port);
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        return -1;
    }
    if (!(reg.multi = curl_multi_init())) {
        curl_global_cleanup();
        return -1;
    }
    reg.cfg = cfg;
    atomic_store(&reg.stop, 0);
    if (pthread_create(&reg.thread, NULL, reg_run, NULL)) {
        curl_multi_cleanup(reg.multi);
        reg.multi = NULL;
        curl_global_cleanup();
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
    curl_multi_cleanup(reg.multi);
    reg.multi = NULL;
    curl_global_cleanup();
    reg.started = 0;
}
