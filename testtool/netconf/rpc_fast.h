/*
 * A fast path for the one RPC a load test sends by the hundred thousand:
 * <edit-config>. libyang's lyd_parse_op() builds the envelope, the
 * operation and its parameters as trees and parses the <config> content in
 * its slower opaque mode (measured: 11.7 us for a one-entry edit, of which
 * the <config> content alone, parsed strictly, is 4.6 us). Here the
 * envelope and the parameters are read by a small scanner, and only the
 * <config> content goes to libyang, strictly. Anything unusual (another
 * operation, a :url, unexpected elements, entities or text) is not
 * eligible, and neither is content libyang refuses strictly: those take
 * the full path, which also produces the precise errors.
 */
#ifndef FLEET_RPC_FAST_H
#define FLEET_RPC_FAST_H

#include <stddef.h>

#include <libyang/libyang.h>

#include "datastore.h"
#include "sbuf.h"
#include "xmlscan.h"

struct rpc_fast_edit {
    struct sbuf reply_attrs;    /* the <rpc> attributes to repeat on <rpc-reply>, ready to print */
    enum ds_id target;          /* running or candidate */
    int default_op;             /* index into merge, replace, none */
    int test_option;            /* index into test-then-set, set, test-only */
    int error_option;           /* index into stop-on-error, continue-on-error, rollback-on-error */
    struct sbuf config;         /* <config> content with the inherited namespace declarations added */
    int has_config;             /* 1 when a <config> element was present */
    struct xmlscan_scope scope; /* declarations in scope at <config> (pointers into the message) */
};

/**
 * @brief Recognise an <rpc> holding a plain <edit-config> and take it apart.
 * @param[in] msg The message (NUL-terminated).
 * @param[out] fe Filled when eligible; release with rpc_fast_edit_free() in every case.
 * @return 0 when eligible, -1 when the message must take the full path.
 */
int rpc_fast_edit_scan(const char *msg, struct rpc_fast_edit *fe);

/**
 * @brief Parse the <config> content strictly with libyang.
 * @param[out] tree The content (may be NULL for an empty <config>); the caller frees it.
 * @return 0, or -1 when libyang refuses it (then take the full path for the precise error).
 */
int rpc_fast_edit_config(const struct rpc_fast_edit *fe, const struct ly_ctx *ctx, struct lyd_node **tree);

/** @brief Free what the scan built. */
void rpc_fast_edit_free(struct rpc_fast_edit *fe);

#endif
