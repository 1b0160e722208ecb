/*
 * Pacing arithmetic (see pacer.h). 128-bit intermediates: k * burst * 10^9 overflows 64 bits after
 * about 584 years of ticks at burst 1, which a long run at a high rate could approach per device.
 */
#include "pacer.h"

void
pacer_init(struct pacer *p, monotime_us now_us, double rate, uint32_t burst)
{
    uint64_t milli = (uint64_t)(rate * 1000 + 0.5);

    p->origin_us = now_us;
    p->tick = 0;
    p->rate_milli = milli ? milli : 1;
    p->burst = burst ? burst : 1;
}

monotime_us
pacer_due(const struct pacer *p, uint64_t k)
{
    return p->origin_us + (monotime_us)(((unsigned __int128)k * p->burst * 1000000000u) / p->rate_milli);
}

uint64_t
pacer_skip_lag(struct pacer *p, monotime_us now_us, uint64_t max_lag_us)
{
    uint64_t target;

    if (now_us <= pacer_due(p, p->tick) + max_lag_us) {
        return 0;
    }
    /* The last tick due at or before now: floor((now - origin) * rate / (burst * 10^9)). */
    target = (uint64_t)(((unsigned __int128)(now_us - p->origin_us) * p->rate_milli) /
                        ((unsigned __int128)p->burst * 1000000000u));
    if (target <= p->tick) {
        return 0;
    }
    {
        uint64_t skipped = (target - p->tick) * p->burst;
        p->tick = target;
        return skipped;
    }
}

void
pacer_resume(struct pacer *p, monotime_us now_us)
{
    p->origin_us = now_us - (pacer_due(p, p->tick) - p->origin_us);
}
