/*
 * Subscriptions to the NETCONF event stream (RFC 8639): placeholder until yp_stream.c is written; every
 * stream subscription is refused.
 */
#include "yp.h"

struct edit_err *
yp_stream_check(struct yp_sub *sub)
{
    (void)sub;
    return edit_err_operation_failed(EDIT_ERR_APP, "ietf-subscribed-notifications:stream-unavailable", NULL,
                                     "Stream subscriptions are not available yet.");
}

void
yp_stream_start(struct yp_sub *sub)
{
    (void)sub;
}

void
yp_stream_stop(struct yp_sub *sub)
{
    (void)sub;
}
