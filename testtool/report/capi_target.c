/*
 * Parsers of the control API's targets and durations; see capi_target.h.
 */
#include "capi_target.h"

#include <string.h>

#include "dynamics.h"

/* Decimal digits at *p into @p out (at most 10 digits, below 2^32); advances *p. @return 0 or -1. */
static int
read_u32(const char **p, uint64_t limit, uint32_t *out)
{
    uint64_t v = 0;
    const char *s = *p;

    if (*s < '0' || *s > '9') {
        return -1;
    }
    for (; *s >= '0' && *s <= '9'; s++) {
        v = v * 10 + (uint64_t)(*s - '0');
        if (v > limit) {
            return -1;
        }
    }
    *p = s;
    *out = (uint32_t)v;
    return 0;
}

int
capi_parse_range(const char *text, uint32_t device_count, uint32_t *first, uint32_t *last)
{
    const char *p = text;
    uint32_t a, b;

    if (read_u32(&p, UINT32_MAX, &a)) {
        return -1;
    }
    b = a;
    if (*p == '-') {
        p++;
        if (read_u32(&p, UINT32_MAX, &b)) {
            return -1;
        }
    }
    if (*p || b < a) {
        return -1;
    }
    if (b >= device_count) {
        return -2;
    }
    *first = a;
    *last = b;
    return 0;
}

int
capi_range_here(const char *text, uint32_t fleet_devices, uint32_t offset, uint32_t count, uint32_t *first,
                uint32_t *last, uint32_t *elsewhere)
{
    uint32_t a, b;
    uint64_t lo, hi;
    int rc = capi_parse_range(text, fleet_devices, &a, &b);

    if (rc) {
        return rc;
    }
    lo = a > offset ? a : offset;
    hi = (uint64_t)b < (uint64_t)offset + count - 1 ? b : (uint64_t)offset + count - 1;
    if (lo > hi) {
        *first = 1;
        *last = 0;
        *elsewhere = b - a + 1;
        return 0;
    }
    *first = (uint32_t)(lo - offset);
    *last = (uint32_t)(hi - offset);
    *elsewhere = (b - a + 1) - (uint32_t)(hi - lo + 1);
    return 0;
}

int
capi_parse_ms_range(const char *text, uint32_t *min_ms, uint32_t *max_ms)
{
    const char *p = text;
    uint32_t a, b, scale;

    if (read_u32(&p, CAPI_MAX_DURATION_MS, &a)) {
        return -1;
    }
    b = a;
    if (*p == '-') {
        p++;
        if (read_u32(&p, CAPI_MAX_DURATION_MS, &b)) {
            return -1;
        }
    }
    if (!strcmp(p, "ms")) {
        scale = 1;
    } else if (!strcmp(p, "s")) {
        scale = 1000;
    } else {
        return -1;
    }
    if (b < a || (uint64_t)b * scale > CAPI_MAX_DURATION_MS) {
        return -1;
    }
    *min_ms = a * scale;
    *max_ms = b * scale;
    return 0;
}

int
capi_share_pick(uint64_t seed, uint32_t index, double share)
{
    /* 53 bits of the device's own hash, as a fraction in [0, 1). */
    double u = (double)(dyn_hash(seed, index, 0x54a7e) >> 11) / 9007199254740992.0;

    return share >= 1.0 || u < share;
}
