/*
 * Small services the workloads share: where device N is, reading input
 * files, the descriptor limit, SIGINT and SIGTERM, and progress lines.
 *
 * Signals: every mode ends on SIGINT or SIGTERM as at its normal end (the
 * summary of what was measured, the manifest, then exit 128 + the signal).
 * The handler only records the signal and stops the run's event loop
 * (loop_stop() is an atomic store and an eventfd write, both safe in a
 * handler); the mode sees loop_run() return as it does at its end.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "run.h"

#include <inttypes.h>

#include "digest.h"
#include "file_read.h"
#include "json_read.h"
#include "stats.h"

/* The first SIGINT or SIGTERM of the run, 0 before; atomic: helper threads (the events fetch) read it. */
static atomic_int run_signal;
static struct loop *volatile run_sig_loop; /* stopped by it, or NULL */
static struct sigaction run_old_int;       /* SIGINT's action before run_signals_catch() */
static struct sigaction run_old_term;      /* SIGTERM's */
static int run_caught;                     /* 1 between run_signals_catch() and run_signals_release() */

static void
on_signal(int sig)
{
    int saved = errno;
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    struct loop *loop = run_sig_loop;
    int none = 0;

    atomic_compare_exchange_strong(&run_signal, &none, sig);
    /* A second Ctrl-C (or a SIGTERM after it) ends the process at once. */
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGINT, &dfl, NULL);
    sigaction(SIGTERM, &dfl, NULL);
    if (loop) {
        loop_stop(loop);
    }
    errno = saved;
}

void
run_signals_catch(struct loop *loop)
{
    /* SA_RESTART keeps a write to stdout or a socket from failing with EINTR; epoll_wait, poll and
     * nanosleep return early whatever the flag (signal(7)), which is what stops a run that sleeps. */
    struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};

    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    atomic_store(&run_signal, 0);
    run_sig_loop = loop;
    sigaction(SIGINT, &sa, &run_old_int);
    sigaction(SIGTERM, &sa, &run_old_term);
    run_caught = 1;
}

int
run_interrupted(void)
{
    return atomic_load(&run_signal);
}

const char *
run_interrupted_name(void)
{
    switch (atomic_load(&run_signal)) {
    case SIGINT:
        return "SIGINT";
    case SIGTERM:
        return "SIGTERM";
    default:
        return NULL;
    }
}

int
run_signals_release(int rc)
{
    if (run_caught) {
        sigaction(SIGINT, &run_old_int, NULL);
        sigaction(SIGTERM, &run_old_term, NULL);
        run_caught = 0;
    }
    run_sig_loop = NULL;
    int sig = atomic_load(&run_signal);

    return sig ? 128 + sig : rc;
}

int
run_progress_lines(void)
{
    return !isatty(STDERR_FILENO);
}

void
run_sleep_until(monotime_us until_us)
{
    monotime_us now;

    while (!run_interrupted() && (now = loop_clock_monotonic()) < until_us) {
        struct timespec ts = {.tv_sec = (time_t)((until_us - now) / 1000000u),
                              .tv_nsec = (long)((until_us - now) % 1000000u) * 1000};
        nanosleep(&ts, NULL); /* EINTR: check the flag, then sleep the rest */
    }
}

void
run_progress_line(monotime_us origin_us, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "t %.1f s: ", (double)(loop_clock_monotonic() - origin_us) / 1e6);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
}

void
run_target(const struct stress_options *o, uint32_t device, uint32_t *addr, uint16_t *port)
{
    *addr = o->ip_per_device ? o->ip + device : o->ip;
    *port = (uint16_t)(o->ip_per_device ? o->port : o->port + device);
}

char *
run_target_text(const struct stress_options *o, uint32_t device, char *buf, size_t len)
{
    char host[NETADDR_TEXT_BYTES];
    uint32_t addr;
    uint16_t port;

    run_target(o, device, &addr, &port);
    snprintf(buf, len, "%s:%u", netaddr_host(&o->ip_fam, addr, host, sizeof host), (unsigned)port);
    return buf;
}

void
run_conn_prepare(const struct stress_options *o, struct conn *c, uint32_t device, const char *preamble,
                 size_t preamble_len, uint32_t *addr, uint16_t *port)
{
    run_target(o, device, addr, port);
    c->timeout_ms = o->msg_timeout_s * 1000u;
    c->legacy_framing = o->legacy_framing;
    c->preamble = preamble;
    c->preamble_len = preamble_len;
}

char *
run_read_file(const char *path, size_t *len)
{
    char *text;
    enum file_read_failure why = file_read_all(path, 0, &text, len);

    if (why != FILE_READ_OK) {
        fprintf(stderr, "fleetsim-stress: cannot %s \"%s\": %s\n", why == FILE_READ_OPEN ? "open" : "read",
                path, file_read_reason(why, 0));
    }
    return text;
}

/* What run_scenario_read() found: --scenario's identity, for the manifests. */
static struct {
    char *file;                           /* the path as given, NULL without --scenario */
    char sha256[DIGEST_SHA256_HEX_BYTES]; /* its SHA-256 */
    int have_seed;                        /* 1: it names a seed */
    uint64_t seed;                        /* that seed */
} run_scenario;

int
run_scenario_read(const struct stress_options *o)
{
    struct jsonr_value *doc = NULL;
    const struct jsonr_value *top, *seed;
    char err[256];
    size_t len = 0;
    char *text;

    if (!o->scenario_path) {
        return 0;
    }
    if (!(text = run_read_file(o->scenario_path, &len))) {
        return -1;
    }
    if (jsonr_parse(text, len, &doc, err, sizeof err) ||
        !(top = jsonr_get(doc, "fleetsim-scenario:scenario"))) {
        fprintf(stderr, "fleetsim-stress: --scenario %s: %s\n", o->scenario_path,
                doc ? "no \"fleetsim-scenario:scenario\" in it" : err);
        jsonr_free(doc);
        free(text);
        return -1;
    }
    digest_sha256_hex(text, len, run_scenario.sha256);
    /* RFC 7951 writes a uint64 as a string; a number is taken too */
    if ((seed = jsonr_get(top, "seed"))) {
        char *end = NULL;
        if (seed->type == JSONR_STRING) {
            run_scenario.seed = strtoull(seed->str, &end, 10);
            run_scenario.have_seed = *seed->str && !*end;
        } else {
            run_scenario.have_seed = !jsonr_get_u64(top, "seed", &run_scenario.seed);
        }
    }
    run_scenario.file = (char *)o->scenario_path;
    jsonr_free(doc);
    free(text);
    return 0;
}

void
run_manifest_scenario(struct sbuf *b)
{
    while (b->len && b->buf[b->len - 1] != '}') {
        b->len--; /* a trailing newline */
    }
    if (!b->len || b->failed) {
        return;
    }
    b->buf[--b->len] = '\0';
    sbuf_adds(b, ",");
    run_manifest_scenario_member(b);
    sbuf_adds(b, "}");
}

void
run_manifest_scenario_member(struct sbuf *b)
{
    sbuf_adds(b, "\"scenario\":");
    if (!run_scenario.file) {
        sbuf_adds(b, "null");
        return;
    }
    sbuf_adds(b, "{\"file\":");
    sbuf_add_json(b, run_scenario.file);
    sbuf_printf(b, ",\"sha256\":\"%s\",\"seed\":", run_scenario.sha256);
    if (run_scenario.have_seed) {
        sbuf_printf(b, "%" PRIu64 "}", run_scenario.seed);
    } else {
        sbuf_adds(b, "null}");
    }
}

int
run_manifest_write(const char *path, struct sbuf *b, monotime_us start_us, monotime_us end_us)
{
    struct timespec wall;
    monotime_us now_us = loop_clock_monotonic();
    double wall_s;

    /* Both instants are placed on the wall clock from one reading of each clock, so that
     * ended - started is elapsed_s exactly whatever the clock did meanwhile (a step, a slew). */
    clock_gettime(CLOCK_REALTIME, &wall);
    wall_s = (double)wall.tv_sec + (double)wall.tv_nsec / 1e9;
    while (b->len && b->buf[b->len - 1] != '}') {
        b->len--; /* a trailing newline */
    }
    if (b->len && !b->failed) {
        b->buf[--b->len] = '\0';
        sbuf_printf(b, ",\"started_unix_s\":%.6f,\"ended_unix_s\":%.6f}",
                    wall_s - (double)(now_us - start_us) / 1e6, wall_s - (double)(now_us - end_us) / 1e6);
    }
    return b->failed ? -1 : json_write_file(path, b);
}

int
run_preamble(const struct stress_options *o, char **out, size_t *len)
{
    const char *text = o->tcp_header;
    size_t n = 0;
    char *buf;

    *out = NULL;
    *len = 0;
    if (o->preamble_path) {
        return (*out = run_read_file(o->preamble_path, len)) ? 0 : -1;
    }
    if (!text) {
        return 0;
    }
    if (!(buf = malloc(strlen(text) + 2))) {
        fprintf(stderr, "fleetsim-stress: out of memory for --tcp-header\n");
        return -1;
    }
    for (const char *p = text; *p; p++) {
        if (*p != '"') {
            buf[n++] = *p;
        }
    }
    /* Java's String.trim(): every character up to the space, at both ends. */
    while (n && (unsigned char)buf[n - 1] <= ' ') {
        n--;
    }
    {
        size_t lead = 0;
        while (lead < n && (unsigned char)buf[lead] <= ' ') {
            lead++;
        }
        memmove(buf, buf + lead, n - lead);
        n -= lead;
    }
    buf[n++] = '\n';
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}

int
run_raise_fd_limit(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    getrlimit(RLIMIT_NOFILE, &rl);
    return rl.rlim_cur > 1000000 ? 1000000 : (int)rl.rlim_cur;
}
