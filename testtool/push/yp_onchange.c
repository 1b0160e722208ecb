/*
 * On-change subscriptions (RFC 8641): placeholder until yp_onchange.c is written; every on-change
 * subscription is refused.
 */
#include "yp.h"

struct edit_err *
yp_onchange_check(struct yp_sub *sub)
{
    (void)sub;
    return edit_err_operation_failed(EDIT_ERR_APP, "ietf-yang-push:on-change-unsupported", NULL,
                                     "On-change subscriptions are not available yet.");
}

void
yp_onchange_start(struct yp_sub *sub)
{
    (void)sub;
}

void
yp_onchange_stop(struct yp_sub *sub)
{
    (void)sub;
}

void
yp_onchange_resync(struct yp_sub *sub)
{
    (void)sub;
}

void
yp_onchange_due(struct yp_sub *sub)
{
    (void)sub;
}

void
yp_data_changed(struct device *dev)
{
    (void)dev;
}
