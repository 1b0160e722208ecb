/*
 * The file: probe of ceiling: the number in the last line of a file's tail
 * that a regular expression matches. A collector that writes its counters
 * to a file (rsyslog's impstats, a stats log) is read without a process per
 * reading: a cmd: probe costs a fork, an exec and its interpreter's start
 * (tens of CPU-milliseconds for a script), this one a pread of the tail.
 */
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ceiling_probe.h"

int
ceil_file_probe_compile(struct ceil_probe *p, const char *regex, char *err, size_t err_len)
{
    regex_t *re = malloc(sizeof *re);
    int rc;

    if (!re) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    if ((rc = regcomp(re, regex, REG_EXTENDED | REG_NEWLINE))) {
        char why[160];
        regerror(rc, re, why, sizeof why);
        free(re);
        snprintf(err, err_len, "--%s: the file probe's expression \"%s\" is not valid: %s", p->name, regex,
                 why);
        return -1;
    }
    p->regex = re;
    return 0;
}

void
ceil_file_probe_free(struct ceil_probe *p)
{
    if (p->regex) {
        regfree(p->regex);
        free(p->regex);
        p->regex = NULL;
    }
}

int
ceil_file_last_match(char *text, size_t len, const void *regex, double *value, char *err, size_t err_len)
{
    const regex_t *re = regex;
    regmatch_t m[2];
    const char *line = NULL;
    char *last = NULL; /* the text's last line when no line end follows it: copied to get its NUL */
    size_t line_len = 0, at = 0;
    int rc;

    /* Lines end in NULs for regexec; the last line that matches wins (a stats file appends). */
    for (size_t i = 0; i <= len; i++) {
        const char *start = text + at;
        if (i < len && text[i] != '\n' && text[i] != '\0') {
            continue;
        }
        if (i < len) {
            text[i] = '\0';
        } else if (i > at) {
            if (!(last = strndup(text + at, i - at))) {
                snprintf(err, err_len, "out of memory");
                return -1;
            }
            start = last;
        }
        if (i > at && !regexec(re, start, 2, m, 0)) {
            int group = re->re_nsub >= 1 && m[1].rm_so >= 0;
            line = start + (group ? m[1].rm_so : m[0].rm_so);
            line_len = (size_t)(group ? m[1].rm_eo - m[1].rm_so : m[0].rm_eo - m[0].rm_so);
        }
        at = i + 1;
    }
    if (!line) {
        free(last);
        snprintf(err, err_len, "no line matches");
        return -1;
    }
    rc = ceil_cmd_output_value(line, line_len, value, err, err_len);
    free(last);
    return rc;
}

int
ceil_file_probe_read(struct ceil_probe *p, double *value)
{
    int fd = open(p->path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    char *buf = NULL, why[200];
    off_t from;
    ssize_t n = -1;
    int rc = -1;

    if (fd < 0 || fstat(fd, &st)) {
        snprintf(p->last_error, sizeof p->last_error, "%s: %s", p->path, strerror(errno));
        goto out;
    }
    from = st.st_size > (off_t)CEIL_FILE_TAIL_BYTES ? st.st_size - (off_t)CEIL_FILE_TAIL_BYTES : 0;
    if (!(buf = malloc(CEIL_FILE_TAIL_BYTES + 1)) || (n = pread(fd, buf, CEIL_FILE_TAIL_BYTES, from)) < 0) {
        snprintf(p->last_error, sizeof p->last_error, "%s: %s", p->path,
                 buf ? strerror(errno) : "out of memory");
        goto out;
    }
    /* A cut first line (the tail began inside it) is no line: skip to the first line's end. */
    {
        size_t skip = 0;
        if (from > 0) {
            char *nl = memchr(buf, '\n', (size_t)n);
            skip = nl ? (size_t)(nl - buf) + 1 : (size_t)n;
        }
        if (ceil_file_last_match(buf + skip, (size_t)n - skip, p->regex, value, why, sizeof why)) {
            snprintf(p->last_error, sizeof p->last_error, "%s (the last %zd bytes): %s", p->path, n, why);
            goto out;
        }
    }
    rc = 0;
out:
    free(buf);
    if (fd >= 0) {
        close(fd);
    }
    return rc;
}
