/*
 * Running fleetsim for the C integration tests (see itest_server.h). The
 * server's stderr goes to a file rather than a pipe: a pipe nobody drains
 * would stall a chatty server once the pipe buffer fills, while a file can
 * be polled for the readiness line and printed whole when a test fails
 * (after which it is deleted: the test output keeps it).
 */
#include "itest_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Arguments fleetsim gets besides the caller's: binary, 2 options with values, NULL. */
#define ITEST_FIXED_ARGS 10
/* At most this many extra arguments. */
#define ITEST_MAX_EXTRA_ARGS 32

int
itest_timeout_ms(int base_ms)
{
    const char *m = getenv("FLEETSIM_TIMEOUT_MULTIPLIER");
    double mult = m ? strtod(m, NULL) : 1.0;

    if (mult < 1.0) {
        mult = 1.0;
    }
    return (int)(base_ms * mult);
}

static int64_t
now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* The whole log file as a NUL-terminated string (empty when unreadable); the caller frees it. */
static char *
read_log(const struct itest_server *srv)
{
    FILE *f = fopen(srv->log_path, "rb");
    char *text = NULL;
    size_t len = 0;
    size_t cap = 0;
    char chunk[4096];
    size_t n;

    if (f) {
        while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
            if (len + n + 1 > cap) {
                char *grown;
                cap = (len + n + 1) * 2;
                grown = realloc(text, cap);
                if (!grown) {
                    break;
                }
                text = grown;
            }
            memcpy(text + len, chunk, n);
            len += n;
        }
        fclose(f);
    }
    if (!text) {
        return strdup("");
    }
    text[len] = '\0';
    return text;
}

void
itest_server_print_log(const struct itest_server *srv)
{
    char *text = read_log(srv);

    fprintf(stderr, "----- fleetsim log (%s) -----\n%s----- end of log -----\n", srv->log_path,
            text ? text : "");
    free(text);
}

static void
exec_server(const char *binary, const char *const *argv, int log_fd, pid_t parent)
{
    /* Die with the test: a test killed by its time limit must not leave the server behind. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) {
        _exit(127);
    }
    signal(SIGPIPE, SIG_DFL);
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    close(log_fd);
    execv(binary, (char *const *)argv);
    fprintf(stderr, "cannot run %s: %s\n", binary, strerror(errno));
    _exit(127);
}

enum attempt_result {
    ATTEMPT_READY,  /* the readiness line arrived */
    ATTEMPT_RETRY,  /* the ports were taken: try another range */
    ATTEMPT_FAILED, /* anything else */
};

/* One start with one port range: spawn, then watch the log and the process. */
static enum attempt_result
start_once(struct itest_server *srv, const char *binary, const char *const *extra_args)
{
    const char *argv[ITEST_FIXED_ARGS + ITEST_MAX_EXTRA_ARGS];
    char count_text[16];
    char port_text[16];
    size_t argc = 0;
    int64_t deadline;
    int log_fd;
    pid_t parent = getpid();

    snprintf(count_text, sizeof count_text, "%u", (unsigned)srv->device_count);
    snprintf(port_text, sizeof port_text, "%u", (unsigned)srv->base_port);
    argv[argc++] = binary;
    argv[argc++] = "--device-count";
    argv[argc++] = count_text;
    argv[argc++] = "--starting-port";
    argv[argc++] = port_text;
    /* The SNMP agents take the UDP ports of the same numbers. */
    argv[argc++] = "--snmp-starting-port";
    argv[argc++] = port_text;
    /* Plain TCP unless the extra arguments (read later, so they win) ask for SSH. */
    argv[argc++] = "--ssh";
    argv[argc++] = "false";
    for (size_t i = 0; extra_args && extra_args[i] && i < ITEST_MAX_EXTRA_ARGS; i++) {
        argv[argc++] = extra_args[i];
    }
    argv[argc] = NULL;

    snprintf(srv->log_path, sizeof srv->log_path, "/tmp/fleetsim-itest-XXXXXX");
    log_fd = mkstemp(srv->log_path);
    if (log_fd < 0) {
        fprintf(stderr, "cannot create a log file: %s\n", strerror(errno));
        return ATTEMPT_FAILED;
    }
    srv->pid = fork();
    if (srv->pid < 0) {
        fprintf(stderr, "fork: %s\n", strerror(errno));
        close(log_fd);
        srv->pid = 0;
        return ATTEMPT_FAILED;
    }
    if (srv->pid == 0) {
        exec_server(binary, argv, log_fd, parent);
    }
    close(log_fd);

    deadline = now_ms() + itest_timeout_ms(ITEST_READY_TIMEOUT_MS);
    for (;;) {
        char *log = read_log(srv);
        int ready = log && strstr(log, ITEST_READY_TEXT) != NULL;
        int taken = log && (strstr(log, "cannot listen") || strstr(log, "cannot bind SNMP"));
        int status = 0;
        pid_t done = waitpid(srv->pid, &status, WNOHANG);

        free(log);
        if (ready && done == 0) {
            return ATTEMPT_READY;
        }
        if (done == srv->pid) {
            srv->pid = 0;
            if (WIFEXITED(status) && WEXITSTATUS(status) == 2 && taken) {
                fprintf(stderr, "ports from %u are taken, trying another range\n", (unsigned)srv->base_port);
                unlink(srv->log_path);
                return ATTEMPT_RETRY;
            }
            fprintf(stderr, "fleetsim exited before it was ready (%s %d)\n",
                    WIFEXITED(status) ? "exit code" : "signal",
                    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
            itest_server_print_log(srv);
            unlink(srv->log_path);
            return ATTEMPT_FAILED;
        }
        if (now_ms() > deadline) {
            fprintf(stderr, "fleetsim did not report \"%s\" within %d ms\n", ITEST_READY_TEXT,
                    itest_timeout_ms(ITEST_READY_TIMEOUT_MS));
            itest_server_print_log(srv);
            unlink(srv->log_path);
            kill(srv->pid, SIGKILL);
            waitpid(srv->pid, NULL, 0);
            srv->pid = 0;
            return ATTEMPT_FAILED;
        }
        sleep_ms(10);
    }
}

int
itest_server_start(struct itest_server *srv, const char *binary, uint32_t device_count,
                   const char *const *extra_args)
{
    unsigned seed = (unsigned)getpid() ^ (unsigned)now_ms();

    memset(srv, 0, sizeof *srv);
    srv->device_count = device_count;
    if (device_count >= ITEST_PORT_HIGH - ITEST_PORT_LOW) {
        fprintf(stderr, "%u devices do not fit in the test port range\n", (unsigned)device_count);
        return -1;
    }
    for (int attempt = 0; attempt < ITEST_START_ATTEMPTS; attempt++) {
        uint32_t span = ITEST_PORT_HIGH - ITEST_PORT_LOW - device_count;
        srv->base_port = (uint16_t)(ITEST_PORT_LOW + rand_r(&seed) % span);
        switch (start_once(srv, binary, extra_args)) {
        case ATTEMPT_READY:
            return 0;
        case ATTEMPT_RETRY:
            continue;
        case ATTEMPT_FAILED:
            return -1;
        }
    }
    fprintf(stderr, "no free port range found in %d attempts\n", ITEST_START_ATTEMPTS);
    return -1;
}

int
itest_server_stop(struct itest_server *srv)
{
    int64_t deadline;
    int status = 0;
    pid_t done = 0;

    if (!srv->pid) {
        return 0;
    }
    kill(srv->pid, SIGTERM);
    deadline = now_ms() + itest_timeout_ms(ITEST_STOP_TIMEOUT_MS);
    while ((done = waitpid(srv->pid, &status, WNOHANG)) == 0 && now_ms() < deadline) {
        sleep_ms(10);
    }
    if (done != srv->pid) {
        fprintf(stderr, "fleetsim did not exit within %d ms of SIGTERM; killing it\n",
                itest_timeout_ms(ITEST_STOP_TIMEOUT_MS));
        itest_server_print_log(srv);
        unlink(srv->log_path);
        kill(srv->pid, SIGKILL);
        waitpid(srv->pid, NULL, 0);
        srv->pid = 0;
        return -1;
    }
    srv->pid = 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "fleetsim did not exit cleanly after SIGTERM (%s %d)\n",
                WIFEXITED(status) ? "exit code" : "signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        itest_server_print_log(srv);
        unlink(srv->log_path);
        return -1;
    }
    unlink(srv->log_path);
    return 0;
}

int
itest_connect(uint16_t port, int timeout_ms)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
    struct pollfd pfd;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    int err = 0;
    socklen_t len = sizeof err;

    if (fd < 0) {
        return -1;
    }
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        if (errno != EINPROGRESS) {
            goto fail;
        }
        pfd = (struct pollfd){.fd = fd, .events = POLLOUT};
        if (poll(&pfd, 1, timeout_ms) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err) {
            errno = err ? err : ETIMEDOUT;
            goto fail;
        }
    }
    /* Blocking from here on, but never forever. */
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;

fail:
    fprintf(stderr, "cannot connect to 127.0.0.1 port %u: %s\n", (unsigned)port, strerror(errno));
    close(fd);
    return -1;
}
