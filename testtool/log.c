/*
 * Logging: one formatted line per call, one write(2) per line so lines from
 * different worker threads never interleave.
 */
#include "log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <strings.h>
#include <unistd.h>

/* Longest log line; longer messages are cut. */
#define LOG_LINE_MAX_BYTES 2048

static _Atomic int current_level = LOGL_INFO;

static const char *const level_names[] = {"error", "warn", "info", "debug"};

void
log_set_level(enum log_level level)
{
    atomic_store(&current_level, (int)level);
}

enum log_level
log_get_level(void)
{
    return (enum log_level)atomic_load(&current_level);
}

int
log_level_parse(const char *name, enum log_level *level)
{
    if (!strcasecmp(name, "warning")) {
        *level = LOGL_WARN;
        return 0;
    }
    for (int i = LOGL_ERROR; i <= LOGL_DEBUG; i++) {
        if (!strcasecmp(name, level_names[i])) {
            *level = (enum log_level)i;
            return 0;
        }
    }
    return -1;
}

void
log_msg(enum log_level level, const char *fmt, ...)
{
    char line[LOG_LINE_MAX_BYTES];
    va_list ap;
    int n;
    int len;

    if ((int)level > atomic_load(&current_level)) {
        return;
    }
    n = snprintf(line, sizeof line, "fleetsim[%s]: ", level_names[level]);
    va_start(ap, fmt);
    len = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (len < 0) {
        return;
    }
    len += n;
    if (len > (int)sizeof line - 2) {
        len = (int)sizeof line - 2;
    }
    line[len++] = '\n';
    /* stderr is unbuffered in spirit: one write keeps lines whole across threads. */
    if (write(STDERR_FILENO, line, (size_t)len) < 0) {
        /* nowhere left to report a failing stderr */
    }
}
