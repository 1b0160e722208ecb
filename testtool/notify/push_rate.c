/*
 * Which rate profile a device's push channel follows, and its schedule's
 * start (see push_rate.h).
 */
#include "push_rate.h"

#include "dynamics.h"

const struct rate_profile *
push_rate_profile(const struct device *dev, enum devctl_rate r, const struct rate_profile *group_profile)
{
    return dev->ctl && dev->ctl->rate[r] ? dev->ctl->rate[r] : group_profile;
}

void
push_rate_start(struct rate_arrivals *a, const struct device *dev, enum devctl_rate r,
                const struct rate_profile *group_profile, uint32_t unit, uint64_t salt, int first_at_origin,
                monotime_us now_us)
{
    enum rate_arrival_kind kind = RATE_ARRIVALS_PACED;

    /* The option table checked the word. */
    if (dev->group->cfg.push_arrivals) {
        (void)rate_arrivals_kind_parse(dev->group->cfg.push_arrivals, &kind);
    }
    rate_arrivals_init(a, push_rate_profile(dev, r, group_profile), kind, unit, dyn_hash(dev->seed, salt, r),
                       first_at_origin ? 1.0 : rate_phase_spread(dev->index, salt + (uint64_t)r), now_us);
}
