/*
 * Parsing command-line values; see textarg.h.
 */
#include "textarg.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int
textarg_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    char *end = NULL;
    unsigned long long v;

    errno = 0;
    if (!s || !*s || *s == '-') {
        return -1;
    }
    v = strtoull(s, &end, 10);
    if (errno || *end || v < min || v > max) {
        return -1;
    }
    *out = v;
    return 0;
}

int
textarg_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
    uint64_t v;

    if (textarg_u64(s, min, max, &v)) {
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

int
textarg_duration_s(const char *s, double min_s, double max_s, double *out)
{
    static const struct {
        const char *unit;
        double seconds;
    } units[] = {{"", 1}, {"ms", 0.001}, {"s", 1}, {"m", 60}, {"h", 3600}};
    char *end = NULL;
    double v;

    if (!s || !*s || *s == '-' || *s == '+' || *s == ' ') {
        return -1;
    }
    errno = 0;
    v = strtod(s, &end);
    if (errno || end == s || !(v >= 0)) {
        return -1;
    }
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (!strcmp(end, units[i].unit)) {
            v *= units[i].seconds;
            if (!(v >= min_s && v <= max_s)) {
                return -1;
            }
            *out = v;
            return 0;
        }
    }
    return -1;
}

int
textarg_bool(const char *s, int *out)
{
    if (!s || !strcasecmp(s, "true")) {
        *out = 1;
    } else if (!strcasecmp(s, "false")) {
        *out = 0;
    } else {
        return -1;
    }
    return 0;
}

const char *
textarg_flag_value(const char *optarg, int argc, char **argv, int *optind)
{
    int ignored;

    if (optarg) {
        return optarg;
    }
    if (*optind < argc && !textarg_bool(argv[*optind], &ignored)) {
        return argv[(*optind)++];
    }
    return NULL;
}

void
textarg_help_words(FILE *out, const char *text, struct textarg_help_pos *pos)
{
    const char *p = text + strspn(text, " ");

    while (*p) {
        size_t n = strcspn(p, " ");
        if (!pos->fresh && pos->col + 1 + n > pos->width) {
            fprintf(out, "\n%*s", (int)pos->indent, "");
            pos->col = pos->indent;
            pos->fresh = 1;
        }
        if (!pos->fresh) {
            fputc(' ', out);
            pos->col++;
        }
        fprintf(out, "%.*s", (int)n, p);
        pos->col += n;
        pos->fresh = 0;
        p += n;
        p += strspn(p, " ");
    }
}
