/*
 * Fuzz harness of what ceiling reads from the outside (issue 30): a
 * Prometheus /api/v1/query answer, a probe command's output, the fleet's
 * /metrics text and its /api/v1/fleet answer (stress/ceiling_probe.h,
 * stress/ceiling_fleet.h).
 *
 * Input: byte 0 chooses the reader (0-3, or with bit 7 the file: probe's
 * line matcher over an impstats-like expression) and, for the fleet's
 * answer, a group name asked ("default", none, or one that is not there); the rest,
 * copied to a heap block of exactly its size (no NUL), is the answer. An
 * accepted answer gives a finite number (the sent counter: not negative),
 * or device counts whose range lies inside the fleet; a refused one says
 * why. A second read gives the same answer.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ceiling_fleet.h"
#include "ceiling_probe.h"
#include "fuzz.h"

/* Longest input looked at. */
#define FZ_MAX_INPUT_BYTES 262144

static void
fz_number(int (*read)(const char *, size_t, double *, char *, size_t), const char *text, size_t len)
{
    char err[256] = "", err2[256] = "";
    double v = 0, again = 0;
    int rc = read(text, len, &v, err, sizeof err);

    fz_require(rc == 0 || rc == -1, "a reader returned neither 0 nor -1");
    fz_require(rc != 0 || isfinite(v), "an accepted answer that is not a finite number");
    fz_require(rc == 0 || err[0], "a refused answer without a reason");
    fz_require(read(text, len, &again, err2, sizeof err2) == rc && (rc || v == again),
               "a second read gives another answer");
}

static void
fz_metrics(const char *text, size_t len)
{
    static const char *const channels[] = {"syslog", "trap", "netconf"};

    for (size_t i = 0; i < sizeof channels / sizeof channels[0]; i++) {
        double v = -1;
        if (!ceil_metrics_sent(text, len, channels[i], &v)) {
            fz_require(isfinite(v) && v >= 0, "a sent counter that is not a count");
        }
    }
}

static void
fz_fleet(const char *text, size_t len, uint8_t how)
{
    static const char *const groups[] = {NULL, "default", "no-such-group"};
    struct ceil_fleet_info info;
    char err[256] = "";
    const char *group = groups[how % 3];
    int rc;

    memset(&info, 0xa5, sizeof info);
    rc = ceil_fleet_info_parse(text, len, group, (enum ceil_channel)((how / 3) % 3), &info, err, sizeof err);
    fz_require(rc == 0 || rc == -1, "the fleet's answer: neither 0 nor -1");
    if (rc) {
        fz_require(err[0] != '\0', "a refused fleet answer without a reason");
        return;
    }
    fz_require(info.devices >= 1 && info.first <= info.last, "an accepted fleet without devices");
    fz_require(memchr(info.version, 0, sizeof info.version) && memchr(info.format, 0, sizeof info.format) &&
                   memchr(info.transport, 0, sizeof info.transport) &&
                   memchr(info.group_type, 0, sizeof info.group_type),
               "a text field without its NUL");
}

/* The file: probe's matcher: the text is changed (line ends become NULs) but never read past. */
static void
fz_file(char *text, size_t len)
{
    static struct ceil_probe p;
    static int ready;
    char err[300];
    double v;

    if (!ready) {
        fz_require(!ceil_probe_parse("queue", "file:/x:\"name\": \"[a-z ]+queue\".*\"size\": ([0-9.e+-]+)", 1,
                                     &p, err, sizeof err),
                   "the harness's expression");
        ready = 1;
    }
    if (!ceil_file_last_match(text, len, p.regex, &v, err, sizeof err)) {
        fz_require(isfinite(v), "a matched value that is not a finite number");
    } else {
        fz_require(err[0] != '\0', "a refused file without a reason");
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text;
    uint8_t how;

    if (size < 1 || size > FZ_MAX_INPUT_BYTES) {
        return 0;
    }
    how = data[0];
    text = fz_copy_input(data + 1, size - 1);
    if (how & 0x80) {
        fz_file(text, size - 1);
        free(text);
        return 0;
    }
    switch (how & 3) {
    case 0:
        fz_number(ceil_prom_answer_value, text, size - 1);
        break;
    case 1:
        fz_number(ceil_cmd_output_value, text, size - 1);
        break;
    case 2:
        fz_metrics(text, size - 1);
        break;
    default:
        fz_fleet(text, size - 1, (uint8_t)(how >> 2));
        break;
    }
    free(text);
    return 0;
}
