/*
 * Fuzz harness of the rate profile reader (testtool/notify/rate_profile.h)
 * and of the schedules made from a profile it accepted.
 *
 * Input: the text of --syslog-rate (or a rate action's "rate"), cut at
 * FZ_MAX_INPUT_BYTES and NUL-terminated. A refused text leaves the output
 * untouched and says why. An accepted one has rates in bounds, an integral
 * that never decreases, an inverse that is exact (the first microsecond
 * where the integral reaches a mass), and paced and Poisson schedules
 * whose arrivals never go back in time.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "rate_profile.h"

/* Longest input looked at: a profile is at most RATE_PROFILE_MAX_TEXT characters. */
#define FZ_MAX_INPUT_BYTES 512
/* Arrivals of each schedule followed. */
#define FZ_ARRIVALS 200

static void
fz_check_inverse(const struct rate_profile *p, double m)
{
    uint64_t t = rate_profile_time_of(p, m);

    if (t == RATE_NEVER) {
        return;
    }
    fz_require(rate_profile_integral(p, t) >= m, "time_of() before the integral reaches the mass");
    fz_require(t == 0 || rate_profile_integral(p, t - 1) < m, "time_of() not the first such microsecond");
}

static void
fz_check_schedule(const struct rate_profile *p, enum rate_arrival_kind kind, double phase)
{
    struct rate_arrivals a;
    monotime_us last = 1000;

    rate_arrivals_init(&a, p, kind, 1, 42, phase, 1000);
    for (int k = 0; k < FZ_ARRIVALS && a.next_us != RATE_NEVER; k++) {
        fz_require(a.next_us >= last, "an arrival before the one before it");
        last = a.next_us;
        rate_arrivals_take(&a);
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint64_t probes_us[] = {0,        1,        999,           1000000,
                                         59999999, 60000000, 3600000000ull, 86400000000ull};
    char text[FZ_MAX_INPUT_BYTES + 1], err[256] = "";
    struct rate_profile p, untouched;
    double prev = 0;

    if (size > FZ_MAX_INPUT_BYTES) {
        size = FZ_MAX_INPUT_BYTES;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    memset(&p, 0xa5, sizeof p);
    untouched = p;
    if (rate_profile_parse(text, &p, err, sizeof err)) {
        fz_require(!memcmp(&p, &untouched, sizeof p), "a refused profile changed its output");
        fz_require(err[0] != '\0', "a refusal without a reason");
        return 0;
    }
    fz_require(strlen(p.text) <= RATE_PROFILE_MAX_TEXT && !strcmp(p.text, text),
               "the text kept is not the input");
    fz_require(p.shape != RATE_STAGED || (p.stage_count >= 1 && p.stage_count <= RATE_PROFILE_MAX_STAGES),
               "stage count out of range");
    for (size_t i = 0; i < sizeof probes_us / sizeof probes_us[0]; i++) {
        double r = rate_profile_rate(&p, probes_us[i]), v = rate_profile_integral(&p, probes_us[i]);
        fz_require(r >= 0 && r <= RATE_PROFILE_MAX_RATE * 2 && isfinite(r), "a rate out of bounds");
        fz_require(isfinite(v) && v >= prev, "the integral went down");
        prev = v;
        fz_check_inverse(&p, v);
        fz_check_inverse(&p, v + 0.5);
    }
    fz_check_inverse(&p, 1);
    fz_check_schedule(&p, RATE_ARRIVALS_PACED, 0);
    fz_check_schedule(&p, RATE_ARRIVALS_PACED, 0.37);
    fz_check_schedule(&p, RATE_ARRIVALS_POISSON, 0);
    return 0;
}
