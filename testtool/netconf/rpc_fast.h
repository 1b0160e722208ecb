/*
 * Fast paths for the RPCs a load test sends by the hundred thousand:
 * <edit-config>, and <get-schema> (a controller's mount fetches every
 * module of every device).
 *
 * edit-config: libyang's lyd_parse_op() builds the envelope, the
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

/* Longest identifier or version the get-schema fast path takes; longer ones take the full path. */
#define RPC_FAST_SCHEMA_NAME_MAX 256

/*
 * get-schema: libyang's parse of the whole <rpc> cost more than the rest
 * of the answer. Here the envelope and the three parameters are scanned;
 * the message is eligible only when it holds nothing but them: no
 * comments, processing instructions, entities or CDATA inside <rpc>, no
 * attributes but namespace declarations on <get-schema> and its
 * parameters, each parameter once, plain text without whitespace at
 * either end, and a format, when given, of exactly
 * yang in the monitoring namespace (written "yang" under that default
 * namespace, or "p:yang" with p bound to it). yin and the rest take the
 * full path.
 */
struct rpc_fast_get_schema {
    struct sbuf reply_attrs;                   /* the <rpc> attributes to repeat on <rpc-reply>, ready */
    char identifier[RPC_FAST_SCHEMA_NAME_MAX]; /* the identifier's text, NUL-terminated */
    char version[RPC_FAST_SCHEMA_NAME_MAX];    /* the version's text; "" when absent or empty (latest) */
    struct xmlscan_scope scope;                /* declarations in scope while scanning */
};

/**
 * @brief Recognise an <rpc> holding a plain <get-schema> of format yang and read its parameters.
 * @param[in] msg The message (NUL-terminated).
 * @param[out] gs Filled when eligible; release with rpc_fast_get_schema_free() in every case.
 * @return 0 when eligible, -1 when the message must take the full path.
 */
int rpc_fast_get_schema_scan(const char *msg, struct rpc_fast_get_schema *gs);

/** @brief Free what the scan built. */
void rpc_fast_get_schema_free(struct rpc_fast_get_schema *gs);

#endif
