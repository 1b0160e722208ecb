/*
 * "fleetsim-stress restconf": OpenDaylight's REST perf client. --edits
 * requests are split into --thread-amount streams as there (each its
 * share, the last one the remainder); each stream POSTs its bodies to its
 * URL (the device at --device-port-range-start, or at that port plus the
 * stream's number with --same-device false) with up to --throttle /
 * --thread-amount requests in flight (one without async requests).
 *
 * Event-driven in one thread: each stream's slots are split into pools of
 * RC_SLOTS_PER_POOL, each one libcurl multi handle (its own connection
 * cache, so the stream's own persistent HTTP/1.1 connections) driven
 * through curl_multi_socket_action() from the project's epoll loop; each
 * in-flight slot is one easy handle, reused for the stream's
 * next request as soon as the previous one completes. Bodies are filled
 * per request into the slot's buffer (restconf_fill.h). A status of 200,
 * 201 or 204 is accepted; any other is counted by code with the first
 * bytes of its body. A transfer that fails (connection refused or closed,
 * no answer) ends the run, as does --timeout (minutes); SIGINT and SIGTERM
 * end it with the report of what was measured (run_util.c).
 */
#include <curl/curl.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "restconf_fill.h"
#include "run.h"
#include "stats.h"

/*
 * The Authorization header of HTTP basic authentication, built once for every request: libcurl would
 * otherwise encode the credentials again for each one.
 */
static struct curl_slist *
append_basic_auth(struct curl_slist *headers, const char *user, const char *pass)
{
    struct sbuf plain = {0}, line = {0};
    struct curl_slist *out = NULL;
    unsigned char *b64;

    if (!headers) {
        return NULL;
    }
    sbuf_printf(&plain, "%s:%s", user, pass);
    if (plain.failed || !(b64 = malloc(4 * (plain.len / 3 + 1) + 1))) {
        sbuf_free(&plain);
        curl_slist_free_all(headers);
        return NULL;
    }
    EVP_EncodeBlock(b64, (const unsigned char *)plain.buf, (int)plain.len);
    sbuf_printf(&line, "Authorization: Basic %s", (const char *)b64);
    if (line.failed || !(out = curl_slist_append(headers, line.buf))) {
        curl_slist_free_all(headers);
    }
    free(b64);
    sbuf_free(&plain);
    sbuf_free(&line);
    return out;
}

/* Progress line refresh on a terminal. */
#define RC_PROGRESS_INTERVAL_MS 250
/* Of an answer's body, what the report keeps (the first body of each status). */
#define RC_BODY_KEEP_BYTES 200
/* Slots per libcurl multi handle: a multi looks for a free connection by walking its pool, so thousands
 * of connections in one multi cost ~200 us per request where pools of this size cost ~20. */
#define RC_SLOTS_PER_POOL 16
/* Distinct HTTP statuses kept apart; more are rare enough to share the last row. */
#define RC_STATUS_MAX 32
/* Used when --edit-content is not given and ./edit.txt does not exist: one ietf-interfaces entry. */
#define RC_DEFAULT_EDIT_FILE "edit.txt"

static const char default_json[] =
    "{\"ietf-interfaces:interface\":[{\"name\":\"rc-{PEERID}-{INTLEAF}\",\"type\":\"iana-if-type:"
    "ethernetCsmacd\",\"description\":\"{PHYS_ADDR}\"}]}";
static const char default_xml[] =
    "<interface xmlns=\"urn:ietf:params:xml:ns:yang:ietf-interfaces\"><name>rc-{PEERID}-{INTLEAF}</name>"
    "<type xmlns:ianaift=\"urn:ietf:params:xml:ns:yang:iana-if-type\">ianaift:ethernetCsmacd</type>"
    "<description>{PHYS_ADDR}</description></interface>";

struct rc_run;
struct rc_stream;

/* A share of a stream's slots with their own multi handle, so their own connections. */
struct rc_pool {
    struct rc_stream *stream; /* owner */
    CURLM *multi;             /* its transfers and connection cache */
    struct loop_timer timer;  /* libcurl's timeout */
};

/* One request in flight: an easy handle reused for the stream's next request. */
struct rc_slot {
    CURL *easy;                          /* the handle; in the stream's multi while busy */
    struct rc_stream *stream;            /* owner */
    struct rc_pool *pool;                /* the multi it runs in */
    uint64_t request;                    /* the request's number in its stream; valid while busy */
    monotime_us sent_at_us;              /* when it was handed to libcurl; valid while busy */
    struct sbuf body;                    /* the request's body, kept until it completes */
    char answer[RC_BODY_KEEP_BYTES + 1]; /* first bytes of the answer's body, NUL-terminated */
    size_t answer_len;                   /* bytes in answer */
    char curl_err[CURL_ERROR_SIZE];      /* libcurl's text of a failed transfer */
    int busy;                            /* 1 while in the multi */
};

struct rc_stream {
    struct rc_run *run;     /* back pointer */
    uint32_t index;         /* stream number ({PEERID}) */
    struct rc_pool *pools;  /* pool_count pools of RC_SLOTS_PER_POOL slots (the last one the rest) */
    uint32_t pool_count;    /* entries in pools */
    char *url;              /* its URL, malloc'd */
    CURLU *url_parsed;      /* url parsed once: libcurl then only copies it per transfer */
    uint32_t device_port;   /* the device it edits */
    uint64_t first;         /* global number of its first request */
    uint64_t count;         /* its requests */
    uint64_t next;          /* requests handed to libcurl */
    uint64_t answered;      /* requests with an HTTP answer */
    uint64_t accepted;      /* of those, 200, 201 or 204 */
    struct rc_slot *slots;  /* slot_count slots */
    uint32_t slot_count;    /* requests in flight at most */
    struct latency latency; /* per answered request */
};

struct rc_status {
    long code;                         /* HTTP status */
    uint64_t count;                    /* answers with it */
    char body[RC_BODY_KEEP_BYTES + 1]; /* the first one's body (first bytes, control characters as spaces) */
};

struct rc_run {
    const struct stress_options *o;           /* parameters */
    struct loop *loop;                        /* the one loop */
    struct rfill fill;                        /* the body's content */
    const char *content_name;                 /* where it came from, for the report */
    struct curl_slist *headers;               /* Content-Type, Accept, no Expect */
    struct rc_stream *streams;                /* o->threads streams */
    uint32_t per_stream;                      /* requests in flight per stream */
    uint32_t streams_done;                    /* streams with every request answered */
    struct rc_status statuses[RC_STATUS_MAX]; /* by first sight */
    size_t status_count;                      /* entries used */
    uint64_t *per_second;                     /* answers completed in second i of the run */
    size_t per_second_len;                    /* seconds covered */
    size_t per_second_cap;                    /* entries allocated */
    struct persec ok_per_s;                   /* answers 200, 201 or 204, per second of the run */
    struct persec errors_per_s;               /* answers of any other status, per second */
    struct persec_names status_per_s;         /* those by HTTP status, per second */
    int failed;                               /* 1 once anything failed */
    char failure[512];                        /* the first failure */
    monotime_us start_us;                     /* clock start */
    monotime_us end_us;                       /* the last answer, or the stop */
    double cpu_start_s;                       /* client CPU at clock start */
    double cpu_end_s;                         /* at the end */
    double user_start_s;                      /* of cpu_start_s, the user time */
    double user_end_s;                        /* of cpu_end_s, the user time */
    struct loop_timer deadline;               /* --timeout */
    int progress;                             /* 1 when stderr is a terminal */
    int progress_lines;                       /* 1 when not: a line every RUN_PROGRESS_LINE_US */
    struct loop_timer progress_timer;         /* refreshes the progress line */
    uint64_t progress_last;                   /* answered at the last refresh */
    monotime_us progress_last_us;             /* when */
};

static void rc_fail(struct rc_run *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
rc_fail(struct rc_run *run, const char *fmt, ...)
{
    va_list ap;

    if (!run->failed) {
        va_start(ap, fmt);
        vsnprintf(run->failure, sizeof run->failure, fmt, ap);
        va_end(ap);
    }
    run->failed = 1;
    loop_stop(run->loop);
}

static uint64_t
total_answered(const struct rc_run *run)
{
    uint64_t n = 0;

    for (uint32_t i = 0; i < run->o->threads; i++) {
        n += run->streams[i].answered;
    }
    return n;
}

static void
mark_end(struct rc_run *run)
{
    double sys_s;

    run->end_us = loop_clock_monotonic();
    stats_cpu_split(&run->user_end_s, &sys_s);
    run->cpu_end_s = run->user_end_s + sys_s;
}

static size_t
keep_answer(char *data, size_t size, size_t n, void *user)
{
    struct rc_slot *slot = user;
    size_t len = size * n;
    size_t room = RC_BODY_KEEP_BYTES - slot->answer_len;
    size_t take = len < room ? len : room;

    memcpy(slot->answer + slot->answer_len, data, take);
    slot->answer_len += take;
    return len;
}

/* Hand request slot->stream->next to libcurl on @p slot. @return 0 or -1 (the run failed). */
static int
send_next(struct rc_slot *slot)
{
    struct rc_stream *s = slot->stream;
    struct rc_run *run = s->run;
    uint64_t global = s->first + s->next;
    struct rfill_vars v = {.stream = s->index,
                           .request = s->next,
                           .device_port = s->device_port,
                           .mac_first = RFILL_PHYS_ADDR_BASE + global * run->fill.phys_addr_count};
    CURLMcode mc;

    slot->body.len = 0;
    rfill_expand(&run->fill, &v, &slot->body);
    if (slot->body.failed) {
        rc_fail(run, "out of memory filling a request body");
        return -1;
    }
    slot->request = s->next++;
    slot->answer_len = 0;
    slot->curl_err[0] = '\0';
    curl_easy_setopt(slot->easy, CURLOPT_POSTFIELDS, slot->body.buf);
    curl_easy_setopt(slot->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)slot->body.len);
    slot->sent_at_us = loop_clock_monotonic();
    if ((mc = curl_multi_add_handle(slot->pool->multi, slot->easy)) != CURLM_OK) {
        rc_fail(run, "stream %u: libcurl refused a transfer: %s", (unsigned)s->index,
                curl_multi_strerror(mc));
        return -1;
    }
    slot->busy = 1;
    return 0;
}

static struct rc_status *
status_row(struct rc_run *run, long code)
{
    for (size_t i = 0; i < run->status_count; i++) {
        if (run->statuses[i].code == code) {
            return &run->statuses[i];
        }
    }
    if (run->status_count == RC_STATUS_MAX) {
        return &run->statuses[RC_STATUS_MAX - 1];
    }
    run->statuses[run->status_count].code = code;
    return &run->statuses[run->status_count++];
}

static void
count_second(struct rc_run *run, monotime_us now)
{
    size_t sec = (size_t)((now - run->start_us) / 1000000u);

    if (sec >= run->per_second_cap) {
        size_t cap = run->per_second_cap ? run->per_second_cap * 2 : 64;
        uint64_t *p;
        while (cap <= sec) {
            cap *= 2;
        }
        if (!(p = realloc(run->per_second, cap * sizeof *p))) {
            return; /* the buckets lose this answer; every other count keeps it */
        }
        memset(p + run->per_second_cap, 0, (cap - run->per_second_cap) * sizeof *p);
        run->per_second = p;
        run->per_second_cap = cap;
    }
    run->per_second[sec]++;
    if (sec + 1 > run->per_second_len) {
        run->per_second_len = sec + 1;
    }
}

/* A transfer of stream @p s finished. */
static void
on_done(struct rc_slot *slot, CURLcode result)
{
    struct rc_stream *s = slot->stream;
    struct rc_run *run = s->run;
    monotime_us now = loop_clock_monotonic();
    long code = 0;
    uint64_t us;

    curl_multi_remove_handle(slot->pool->multi, slot->easy);
    slot->busy = 0;
    if (result != CURLE_OK) {
        rc_fail(run,
                "stream %u: request %" PRIu64 " to %s: %s (%s); %" PRIu64 " of %" PRIu64
                " requests of the stream answered",
                (unsigned)s->index, slot->request, s->url,
                slot->curl_err[0] ? slot->curl_err : curl_easy_strerror(result), curl_easy_strerror(result),
                s->answered, s->count);
        return;
    }
    curl_easy_getinfo(slot->easy, CURLINFO_RESPONSE_CODE, &code);
    s->answered++;
    us = now - slot->sent_at_us;
    latency_add(&s->latency, us > UINT32_MAX ? UINT32_MAX : (uint32_t)us);
    count_second(run, now);
    {
        struct rc_status *row = status_row(run, code);
        if (!row->count++) {
            for (size_t i = 0; i < slot->answer_len; i++) {
                row->body[i] = (unsigned char)slot->answer[i] < 0x20 ? ' ' : slot->answer[i];
            }
            row->body[slot->answer_len] = '\0';
        }
    }
    {
        size_t sec = now > run->start_us ? (size_t)((now - run->start_us) / 1000000u) : 0;
        int ok = code == 200 || code == 201 || code == 204;
        char status[24];
        snprintf(status, sizeof status, "%ld", code);
        if (ok) {
            s->accepted++;
        }
        if (persec_add(ok ? &run->ok_per_s : &run->errors_per_s, sec, 1) ||
            (!ok && persec_names_add(&run->status_per_s, status, sec, 1))) {
            rc_fail(run, "out of memory");
            return;
        }
    }
    if (s->next < s->count) {
        send_next(slot);
    } else if (s->answered == s->count) {
        if (++run->streams_done == run->o->threads) {
            mark_end(run);
            loop_stop(run->loop);
        }
    }
}

/* Every finished transfer libcurl reports for @p p. */
static void
drain(struct rc_pool *p)
{
    CURLMsg *m;
    int left;

    while (!p->stream->run->failed && (m = curl_multi_info_read(p->multi, &left))) {
        struct rc_slot *slot = NULL;
        if (m->msg != CURLMSG_DONE) {
            continue;
        }
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&slot);
        on_done(slot, m->data.result);
    }
}

static void
on_io(struct loop *loop, int fd, uint32_t events, void *data)
{
    struct rc_pool *p = data;
    int running;

    (void)loop;
    curl_multi_socket_action(
        p->multi, fd,
        (events & LOOP_READ ? CURL_CSELECT_IN : 0) | (events & LOOP_WRITE ? CURL_CSELECT_OUT : 0), &running);
    drain(p);
}

static void
on_curl_timer(struct loop *loop, struct loop_timer *timer)
{
    struct rc_pool *p = (struct rc_pool *)((char *)timer - offsetof(struct rc_pool, timer));
    int running;

    (void)loop;
    curl_multi_socket_action(p->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    drain(p);
}

/* A kept connection between transfers said something (the server closed it): libcurl will see that
 * when it next checks the connection; until then, stop watching it. */
static void
on_idle(struct loop *loop, int fd, uint32_t events, void *data)
{
    (void)events;
    (void)data;
    loop_unwatch(loop, fd);
}

/* CURLOPT_CLOSESOCKETFUNCTION: the watch a closed connection may still have (on_idle) goes with it. */
static int
on_curl_close(void *user, curl_socket_t fd)
{
    struct rc_run *run = user;

    loop_unwatch(run->loop, fd);
    return close(fd);
}

/* CURLMOPT_SOCKETFUNCTION: watch what libcurl asks for. */
static int
on_curl_socket(CURL *easy, curl_socket_t fd, int what, void *user, void *socketp)
{
    struct rc_pool *p = user;
    struct rc_stream *s = p->stream;

    (void)easy;
    (void)socketp;
    if (what == CURL_POLL_REMOVE) {
        /* Between two transfers of a kept connection libcurl drops its watch and asks again at once:
         * the watch stays (on_idle) so that neither costs an epoll_ctl. */
        uint32_t events;
        if (loop_watching(s->run->loop, fd, &events)) {
            loop_watch(s->run->loop, fd, events, on_idle, p);
        }
        return 0;
    }
    if (loop_watch(s->run->loop, fd,
                   (what & CURL_POLL_IN ? LOOP_READ : 0) | (what & CURL_POLL_OUT ? LOOP_WRITE : 0), on_io,
                   p)) {
        rc_fail(s->run, "stream %u: cannot watch socket %d (descriptor limit?)", (unsigned)s->index, (int)fd);
        return -1;
    }
    return 0;
}

/* CURLMOPT_TIMERFUNCTION: libcurl's next timeout, -1 for none. */
static int
on_curl_timeout(CURLM *multi, long timeout_ms, void *user)
{
    struct rc_pool *p = user;
    struct loop *loop = p->stream->run->loop;

    (void)multi;
    if (timeout_ms < 0) {
        loop_timer_stop(loop, &p->timer);
    } else {
        loop_timer_start(loop, &p->timer, loop_clock_monotonic() + (monotime_us)timeout_ms * 1000u,
                         on_curl_timer);
    }
    return 0;
}

static void
on_deadline(struct loop *loop, struct loop_timer *timer)
{
    struct rc_run *run = (struct rc_run *)((char *)timer - offsetof(struct rc_run, deadline));

    (void)loop;
    rc_fail(run, "--timeout %.0f min passed with %" PRIu64 " of %" PRIu64 " requests answered",
            run->o->run_timeout_s / 60.0, total_answered(run), run->o->edits);
}

static void
on_progress(struct loop *loop, struct loop_timer *timer)
{
    struct rc_run *run = (struct rc_run *)((char *)timer - offsetof(struct rc_run, progress_timer));
    monotime_us now = loop_clock_monotonic();
    uint64_t answered = total_answered(run);
    uint64_t total = run->o->edits;
    double dt = (double)(now - run->progress_last_us) / 1e6;
    double rate = dt > 0 ? (double)(answered - run->progress_last) / dt : 0;

    if (run->progress) {
        int width = 30;
        int filled = total ? (int)((double)answered / (double)total * width) : 0;
        fprintf(stderr, "\r[%.*s%*s] %" PRIu64 "/%" PRIu64 " %.0f/s ETA %.1f s  ", filled,
                "##############################", width - filled, "", answered, total, rate,
                rate > 0 ? (double)(total - answered) / rate : 0.0);
    } else {
        run_progress_line(run->start_us, "%" PRIu64 " of %" PRIu64 " requests answered (%.1f/s)", answered,
                          total, rate);
    }
    run->progress_last = answered;
    run->progress_last_us = now;
    loop_timer_start(loop, timer,
                     loop_now_us(loop) +
                         (run->progress ? RC_PROGRESS_INTERVAL_MS * 1000u : RUN_PROGRESS_LINE_US),
                     on_progress);
}

/* The content: --edit-content, else ./edit.txt as OpenDaylight reads, else the built-in entry. */
static char *
load_content(struct rc_run *run)
{
    const struct stress_options *o = run->o;

    if (o->edit_content) {
        run->content_name = o->edit_content;
        return run_read_file(o->edit_content, NULL);
    }
    if (!access(RC_DEFAULT_EDIT_FILE, R_OK)) {
        run->content_name = RC_DEFAULT_EDIT_FILE;
        return run_read_file(RC_DEFAULT_EDIT_FILE, NULL);
    }
    run->content_name = "(built-in ietf-interfaces entry)";
    fprintf(stderr,
            "fleetsim-stress: no --edit-content and no ./%s: sending a built-in ietf-interfaces entry\n",
            RC_DEFAULT_EDIT_FILE);
    return strdup(o->content_xml ? default_xml : default_json);
}

static int
setup_stream(struct rc_run *run, struct rc_stream *s, uint32_t i)
{
    const struct stress_options *o = run->o;
    uint64_t per = o->edits / o->threads;

    s->run = run;
    s->index = i;
    s->first = per * i;
    s->count = i + 1 == o->threads ? o->edits - per * i : per;
    s->device_port = o->same_device ? o->device_port_start : o->device_port_start + i;
    s->url = rfill_url(&o->ip_fam, o->ip, o->port, o->destination, s->device_port);
    s->slot_count = s->count < run->per_stream ? (uint32_t)s->count : run->per_stream;
    s->slots = calloc(s->slot_count, sizeof *s->slots);
    s->pool_count = (s->slot_count + RC_SLOTS_PER_POOL - 1) / RC_SLOTS_PER_POOL;
    s->pools = calloc(s->pool_count, sizeof *s->pools);
    if (!s->url || !s->slots || !s->pools || latency_reserve(&s->latency, s->count)) {
        return -1;
    }
    if (!(s->url_parsed = curl_url()) || curl_url_set(s->url_parsed, CURLUPART_URL, s->url, 0) != CURLUE_OK) {
        return -1;
    }
    for (uint32_t k = 0; k < s->pool_count; k++) {
        struct rc_pool *p = &s->pools[k];
        p->stream = s;
        loop_timer_init(&p->timer);
        if (!(p->multi = curl_multi_init())) {
            return -1;
        }
        curl_multi_setopt(p->multi, CURLMOPT_SOCKETFUNCTION, on_curl_socket);
        curl_multi_setopt(p->multi, CURLMOPT_SOCKETDATA, p);
        curl_multi_setopt(p->multi, CURLMOPT_TIMERFUNCTION, on_curl_timeout);
        curl_multi_setopt(p->multi, CURLMOPT_TIMERDATA, p);
    }
    for (uint32_t k = 0; k < s->slot_count; k++) {
        struct rc_slot *slot = &s->slots[k];
        slot->stream = s;
        slot->pool = &s->pools[k / RC_SLOTS_PER_POOL];
        if (!(slot->easy = curl_easy_init())) {
            return -1;
        }
        curl_easy_setopt(slot->easy, CURLOPT_CURLU, s->url_parsed);
        curl_easy_setopt(slot->easy, CURLOPT_POST, 1L);
        curl_easy_setopt(slot->easy, CURLOPT_HTTPHEADER, run->headers);
        /* No proxy from the environment (a load test goes straight to the controller): libcurl then does
         * not look the variables up again for every request. */
        curl_easy_setopt(slot->easy, CURLOPT_PROXY, "");
        curl_easy_setopt(slot->easy, CURLOPT_WRITEFUNCTION, keep_answer);
        curl_easy_setopt(slot->easy, CURLOPT_WRITEDATA, slot);
        curl_easy_setopt(slot->easy, CURLOPT_ERRORBUFFER, slot->curl_err);
        curl_easy_setopt(slot->easy, CURLOPT_PRIVATE, slot);
        curl_easy_setopt(slot->easy, CURLOPT_CLOSESOCKETFUNCTION, on_curl_close);
        curl_easy_setopt(slot->easy, CURLOPT_CLOSESOCKETDATA, run);
        curl_easy_setopt(slot->easy, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(slot->easy, CURLOPT_TCP_NODELAY, 1L);
        curl_easy_setopt(slot->easy, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    }
    return 0;
}

static int
setup(struct rc_run *run, const struct stress_options *o)
{
    char *text;

    run->o = o;
    loop_timer_init(&run->deadline);
    loop_timer_init(&run->progress_timer);
    if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
        fprintf(stderr, "fleetsim-stress: cannot set up libcurl\n");
        return -1;
    }
    run->loop = loop_new(run_raise_fd_limit());
    if (!run->loop) {
        fprintf(stderr, "fleetsim-stress: cannot set up the event loop\n");
        return -1;
    }
    if (!(text = load_content(run)) || rfill_init(&run->fill, text)) {
        return -1;
    }
    run->headers = curl_slist_append(NULL, o->content_xml ? "Content-Type: application/xml"
                                                          : "Content-Type: application/json");
    run->headers = curl_slist_append(run->headers, "Accept: application/xml"); /* as OpenDaylight's client */
    run->headers = curl_slist_append(run->headers, "Expect:"); /* no 100-continue round trip */
    run->headers = append_basic_auth(run->headers, o->username, o->password);
    run->per_stream = o->async ? o->throttle / o->threads : 1;
    if (!run->per_stream) {
        run->per_stream = 1; /* OpenDaylight's semaphore of 0 would never let one out */
    }
    run->streams = calloc(o->threads, sizeof *run->streams);
    if (!run->headers || !run->streams) {
        fprintf(stderr, "fleetsim-stress: out of memory for %u streams\n", (unsigned)o->threads);
        return -1;
    }
    for (uint32_t i = 0; i < o->threads; i++) {
        if (setup_stream(run, &run->streams[i], i)) {
            fprintf(stderr, "fleetsim-stress: cannot set up stream %u (memory or libcurl)\n", (unsigned)i);
            return -1;
        }
    }
    return 0;
}

static void
teardown(struct rc_run *run)
{
    for (uint32_t i = 0; run->streams && i < run->o->threads; i++) {
        struct rc_stream *s = &run->streams[i];
        for (uint32_t k = 0; s->slots && k < s->slot_count; k++) {
            if (s->slots[k].busy) {
                curl_multi_remove_handle(s->slots[k].pool->multi, s->slots[k].easy);
            }
        }
        for (uint32_t k = 0; s->pools && k < s->pool_count; k++) {
            if (s->pools[k].multi) {
                curl_multi_cleanup(s->pools[k].multi); /* closes its connections, removing their watches */
            }
            if (run->loop) {
                loop_timer_stop(run->loop, &s->pools[k].timer);
            }
        }
        for (uint32_t k = 0; s->slots && k < s->slot_count; k++) {
            curl_easy_cleanup(s->slots[k].easy);
            sbuf_free(&s->slots[k].body);
        }
        free(s->pools);
        free(s->slots);
        curl_url_cleanup(s->url_parsed);
        free(s->url);
        latency_free(&s->latency);
    }
    free(run->streams);
    free(run->per_second);
    persec_free(&run->ok_per_s);
    persec_free(&run->errors_per_s);
    persec_names_free(&run->status_per_s);
    curl_slist_free_all(run->headers);
    rfill_free(&run->fill);
    if (run->loop) {
        loop_timer_stop(run->loop, &run->deadline);
        loop_timer_stop(run->loop, &run->progress_timer);
    }
    loop_free(run->loop);
    curl_global_cleanup();
}

static uint64_t
total_sent(const struct rc_run *run)
{
    uint64_t n = 0;

    for (uint32_t i = 0; i < run->o->threads; i++) {
        n += run->streams[i].next;
    }
    return n;
}

static uint64_t
total_accepted(const struct rc_run *run)
{
    uint64_t n = 0;

    for (uint32_t i = 0; i < run->o->threads; i++) {
        n += run->streams[i].accepted;
    }
    return n;
}

static int
complete(const struct rc_run *run)
{
    return !run->failed && !run_interrupted() && run->streams_done == run->o->threads;
}

static void
print_report(struct rc_run *run, const struct latency *all)
{
    const struct stress_options *o = run->o;
    double elapsed_s = (double)(run->end_us - run->start_us) / 1e6;
    double cpu_s = run->cpu_end_s - run->cpu_start_s;
    uint64_t answered = total_answered(run);
    uint64_t accepted = total_accepted(run);
    char pct[5][24];

    /* OpenDaylight's lines (its execution time is a Guava Stopwatch's text; here always seconds): the rate
     * only when every stream completed, as there. */
    printf("FINISHED. Execution time: %.6f s\n", elapsed_s);
    if (complete(run)) {
        printf("Requests per second: %.3f\n", elapsed_s > 0 ? (double)o->edits / elapsed_s : 0.0);
    }
    printf("fleetsim-stress restconf: %" PRIu64
           " requests over %u stream(s) to %u device(s), %s, %u in flight "
           "per stream, %s\n",
           o->edits, (unsigned)o->threads, (unsigned)(o->same_device ? 1 : o->threads),
           o->async ? "async" : "sync", (unsigned)run->per_stream,
           o->content_xml ? "application/xml" : "application/json");
    printf("requests: %" PRIu64 " sent, %" PRIu64 " answered: %" PRIu64 " accepted (200/201/204), %" PRIu64
           " other status\n",
           total_sent(run), answered, accepted, answered - accepted);
    if (run->status_count) {
        printf("statuses:");
        for (size_t i = 0; i < run->status_count; i++) {
            printf(" %ld %" PRIu64, run->statuses[i].code, run->statuses[i].count);
        }
        printf("\n");
        for (size_t i = 0; i < run->status_count; i++) {
            long c = run->statuses[i].code;
            if (c != 200 && c != 201 && c != 204) {
                printf("status %ld, first body: %s\n", c, run->statuses[i].body);
            }
        }
    }
    printf("latency us: p50 %s p90 %s p99 %s p99.9 %s max %s\n",
           latency_text(all, 50, 1, 0, pct[0], sizeof pct[0]),
           latency_text(all, 90, 1, 0, pct[1], sizeof pct[1]),
           latency_text(all, 99, 1, 0, pct[2], sizeof pct[2]),
           latency_text(all, 99.9, 1, 0, pct[3], sizeof pct[3]),
           latency_text(all, 100, 1, 0, pct[4], sizeof pct[4]));
    printf("client CPU: %.3f s (user %.3f, system %.3f), %.2f us per request\n", cpu_s,
           run->user_end_s - run->user_start_s, cpu_s - (run->user_end_s - run->user_start_s),
           answered ? cpu_s * 1e6 / (double)answered : 0.0);
}

/* One device's row: the streams that edit the device at @p port, summed. */
static void
device_json(struct sbuf *b, const struct rc_run *run, uint32_t from, uint32_t to)
{
    const struct rc_stream *s0 = &run->streams[from];
    uint64_t v[4] = {0};
    char node[128];

    for (uint32_t i = from; i < to; i++) {
        v[0] += run->streams[i].next;
        v[1] += run->streams[i].answered;
        v[2] += run->streams[i].accepted;
        v[3] += run->streams[i].count;
    }
    rfill_node(s0->url, node, sizeof node);
    sbuf_printf(b, "{\"port\":%u,\"node\":", (unsigned)s0->device_port);
    json_string_or_null(b, node);
    sbuf_adds(b, ",\"url\":");
    sbuf_add_json(b, s0->url);
    sbuf_printf(b,
                ",\"requests\":%" PRIu64 ",\"sent\":%" PRIu64 ",\"answered\":%" PRIu64
                ",\"accepted\":%" PRIu64 ",\"other_status\":%" PRIu64 "}",
                v[3], v[0], v[1], v[2], v[1] - v[2]);
}

static int
write_manifest(struct rc_run *run, const struct latency *all)
{
    char ip_text[NETADDR_TEXT_BYTES];
    const struct stress_options *o = run->o;
    double elapsed_s = (double)(run->end_us - run->start_us) / 1e6;
    uint64_t answered = total_answered(run);
    double done = complete(run) ? (double)o->edits : (double)answered;
    struct sbuf b = {0};
    int rc;

    sbuf_adds(&b, "{\"tool\":\"fleetsim-stress\",\"version\":");
    sbuf_add_json(&b, FLEETSIM_VERSION);
    sbuf_printf(&b, ",\"mode\":\"restconf\",\"parameters\":{\"ip\":\"%s\",\"port\":%u,\"destination\":",
                netaddr_text(&o->ip_fam, o->ip, ip_text, sizeof ip_text), (unsigned)o->port);
    sbuf_add_json(&b, o->destination);
    sbuf_printf(&b, ",\"edits\":%" PRIu64 ",\"edit_content\":", o->edits);
    sbuf_add_json(&b, run->content_name);
    sbuf_printf(
        &b,
        ",\"content_type\":\"%s\",\"async_requests\":%s,\"thread_amount\":%u,\"throttle\":%u,"
        "\"in_flight_per_stream\":%u,\"same_device\":%s,\"device_port_range_start\":%u,\"auth_user\":",
        o->content_xml ? "application/xml" : "application/json", o->async ? "true" : "false",
        (unsigned)o->threads, (unsigned)o->throttle, (unsigned)run->per_stream,
        o->same_device ? "true" : "false", (unsigned)o->device_port_start);
    sbuf_add_json(&b, o->username);
    sbuf_printf(&b, ",\"timeout_min\":%.0f},\"results\":{\"complete\":%s,\"interrupted\":",
                o->run_timeout_s / 60.0, complete(run) ? "true" : "false");
    json_string_or_null(&b, run_interrupted_name());
    sbuf_adds(&b, ",\"failure\":");
    json_string_or_null(&b, run->failed ? run->failure : NULL);
    sbuf_printf(&b,
                ",\"elapsed_s\":%.6f,\"requests_per_second\":%.3f,\"requests_sent\":%" PRIu64
                ",\"requests_answered\":%" PRIu64 ",\"accepted\":%" PRIu64 ",\"other_status\":%" PRIu64
                ",\"statuses\":{",
                elapsed_s, elapsed_s > 0 ? done / elapsed_s : 0.0, total_sent(run), answered,
                total_accepted(run), answered - total_accepted(run));
    for (size_t i = 0; i < run->status_count; i++) {
        sbuf_printf(&b, "%s\"%ld\":%" PRIu64, i ? "," : "", run->statuses[i].code, run->statuses[i].count);
    }
    sbuf_adds(&b, "},\"errors\":[");
    for (size_t i = 0, n = 0; i < run->status_count; i++) {
        long c = run->statuses[i].code;
        if (c == 200 || c == 201 || c == 204) {
            continue;
        }
        sbuf_printf(&b, "%s{\"status\":%ld,\"count\":%" PRIu64 ",\"first_body\":", n++ ? "," : "", c,
                    run->statuses[i].count);
        sbuf_add_json(&b, run->statuses[i].body);
        sbuf_adds(&b, "}");
    }
    sbuf_adds(&b, "],\"latency_us\":{");
    {
        static const double pcts[] = {50, 90, 99, 99.9, 100};
        static const char *const names[] = {"p50", "p90", "p99", "p99.9", "max"};
        for (size_t i = 0; i < 5; i++) {
            sbuf_printf(&b, "%s\"%s\":", i ? "," : "", names[i]);
            latency_json(&b, all, pcts[i], 1, 0);
        }
    }
    sbuf_printf(&b, "},\"client_cpu_s\":%.6f,\"client_cpu_user_s\":%.6f,\"client_cpu_us_per_request\":%.3f",
                run->cpu_end_s - run->cpu_start_s, run->user_end_s - run->user_start_s,
                answered ? (run->cpu_end_s - run->cpu_start_s) * 1e6 / (double)answered : 0.0);
    sbuf_adds(&b, ",\"per_second\":[");
    for (size_t i = 0; i < run->per_second_len; i++) {
        sbuf_printf(&b, "%s%" PRIu64, i ? "," : "", run->per_second[i]);
    }
    sbuf_adds(&b, "],");
    latency_histogram_json(&b, "latency_histogram", all);
    /* "errors_by_tag": for RESTCONF, the HTTP status of each answer that was not 200, 201 or 204. */
    sbuf_adds(&b, "},");
    persec_requests_json(&b, &run->ok_per_s, &run->errors_per_s, &run->status_per_s);
    sbuf_adds(&b, "},\"devices\":[");
    /* Every stream edits the first device, or each its own (--same-device false). */
    if (o->same_device) {
        device_json(&b, run, 0, o->threads);
    } else {
        for (uint32_t i = 0; i < o->threads; i++) {
            if (i) {
                sbuf_adds(&b, ",");
            }
            device_json(&b, run, i, i + 1);
        }
    }
    sbuf_adds(&b, "]}\n");
    run_manifest_scenario(&b);
    rc = b.failed ? -1 : run_manifest_write(o->json_path, &b, run->start_us, run->end_us);
    sbuf_free(&b);
    return rc;
}

int
restconf_run(const struct stress_options *o)
{
    struct rc_run run = {0};
    struct latency all = {0};
    int rc = 2;

    if (setup(&run, o)) {
        goto cleanup;
    }
    /* OpenDaylight's opening lines. */
    if (o->async && o->threads > 1) {
        printf("Throttling per thread: %u\n", (unsigned)run.per_stream);
    }
    printf("thread amount: %u\n", (unsigned)o->threads);
    printf("requestsPerThread: %" PRIu64 "\n", o->edits / o->threads);
    printf("leftoverRequests: %" PRIu64 "\n", o->edits % o->threads);
    printf("Starting performance test\n");
    fflush(stdout);
    run_signals_catch(run.loop);
    {
        double sys_s;
        stats_cpu_split(&run.user_start_s, &sys_s);
        run.cpu_start_s = run.user_start_s + sys_s;
    }
    run.start_us = run.progress_last_us = loop_clock_monotonic();
    loop_timer_start(run.loop, &run.deadline, run.start_us + (monotime_us)(o->run_timeout_s * 1e6),
                     on_deadline);
    for (uint32_t i = 0; i < o->threads && !run.failed; i++) {
        struct rc_stream *s = &run.streams[i];
        for (uint32_t k = 0; k < s->slot_count && !run.failed; k++) {
            send_next(&s->slots[k]);
        }
    }
    run.progress = isatty(STDERR_FILENO);
    run.progress_lines = !run.progress && run_progress_lines();
    if (run.progress || run.progress_lines) {
        loop_timer_start(run.loop, &run.progress_timer,
                         loop_now_us(run.loop) +
                             (run.progress ? RC_PROGRESS_INTERVAL_MS * 1000u : RUN_PROGRESS_LINE_US),
                         on_progress);
    }
    if (!run.failed) {
        loop_run(run.loop);
    }
    if (run.progress) {
        fprintf(stderr, "\r%*s\r", 79, "");
    }
    if (!run.end_us) {
        mark_end(&run);
    }
    for (uint32_t i = 0; i < o->threads; i++) {
        latency_merge(&all, &run.streams[i].latency);
    }
    latency_sort(&all);
    print_report(&run, &all);
    fflush(stdout); /* the report before any FAILED line on stderr */
    rc = 0;
    if (o->json_path && write_manifest(&run, &all)) {
        fprintf(stderr, "fleetsim-stress: FAILED: cannot write %s: %m\n", o->json_path);
        rc = 1;
    }
    if (run.failed) {
        fprintf(stderr, "fleetsim-stress: FAILED: %s\n", run.failure);
        rc = 1;
    }
    if (run_interrupted()) {
        fprintf(stderr, "fleetsim-stress: interrupted by %s: %" PRIu64 " of %" PRIu64 " requests answered\n",
                run_interrupted_name(), total_answered(&run), o->edits);
    }

cleanup:
    rc = run_signals_release(rc);
    latency_free(&all);
    teardown(&run);
    return rc;
}
