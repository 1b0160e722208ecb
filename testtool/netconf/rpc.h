/*
 * RPC dispatch: parse one <rpc> with libyang, find its handler in one table
 * keyed by (module, RPC name), and print the <rpc-reply> with the rpc's
 * attributes echoed. Errors that keep the message from being dispatched
 * (not well-formed, no message-id, unknown operation) are answered here.
 */
#ifndef FLEET_RPC_H
#define FLEET_RPC_H

#include <libyang/libyang.h>

#include "edit_err.h"
#include "sbuf.h"
#include "session.h"

/* What a handler sees and fills. */
struct rpc_call {
    struct session *sess;      /* calling session */
    struct device *dev;        /* its device */
    struct fleet *fleet;       /* the fleet (schemas, template) */
    const struct lyd_node *op; /* the parsed operation (its input parameters are children) */
    const char *raw;           /* the whole message text, for namespace prefixes of XPath filters */
    struct sbuf data;          /* reply content; sent inside <data> when has_data */
    int has_data;              /* 1: reply <data>...</data>, 0: reply <ok/> */
    const char *data_ns;       /* namespace of <data> (get-schema's differs), NULL for the base one */
    struct edit_err *errs;     /* when set, the reply is these rpc-errors */
    int close_after_reply;     /* 1: end the session once the reply is sent */
    int after_reply;           /* 1: a subscription starts once the reply is queued */
    int output;                /* 1: data is the RPC's output, printed in the reply without <data> */
    void (*then)(void *arg); /* run once the (successful) reply is queued, or NULL (RFC 8639 subscriptions) */
    void *then_arg;          /* its argument */
};

/* All handlers share this signature; they never fail, they answer. */
typedef void (*rpc_handler)(struct rpc_call *call);

/**
 * @brief Handle one complete message of an active session.
 * @param[in] msg NUL-terminated XML.
 */
void rpc_process(struct session *s, const char *msg, size_t len);

/** @brief Append an error to the call (an out-of-memory error if @p err is NULL). */
void rpc_fail(struct rpc_call *call, struct edit_err *err);

/** @brief Reply with an error when a required parameter is missing; returns the child or NULL. */
const struct lyd_node *rpc_param(struct rpc_call *call, const char *name, int required);

#endif
