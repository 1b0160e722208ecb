/*
 * The RPC handlers, one file per module's operations: ops_base.c
 * (ietf-netconf), ops_lock.c (lock, unlock), ops_monitoring.c
 * (ietf-netconf-monitoring and the state data of get).
 */
#ifndef FLEET_OPS_H
#define FLEET_OPS_H

#include "rpc.h"

/* The error message of an XPath filter xmlguard_xpath_unsafe() refuses: the expression, then what it refused.
 */
#define OPS_XPATH_REFUSED                                                                                    \
    "XPath filter \"%s\" refused: %s is not supported by the XPath library of this build"

/* ietf-netconf-monitoring's namespace: get-schema's <data> is in it. */
#define OPS_NCM_NS "urn:ietf:params:xml:ns:yang:ietf-netconf-monitoring"

/**
 * @brief get-schema's lookup: the module @p identifier (in revision @p version; NULL or "": the latest),
 * else the submodule. The full path and the fast one (rpc.c) find through this one function.
 * @return The entry, or NULL (the full path answers invalid-value).
 */
const struct schema_module *ops_schema_lookup(const struct schema_set *set, const char *identifier,
                                              const char *version);

/* edit-config's parameters, however they were read (rpc_fast.c or libyang). */
struct ops_edit_params {
    enum ds_id target;             /* running or candidate */
    int default_op;                /* index into merge, replace, none */
    int test_option;               /* index into test-then-set, set, test-only */
    int error_option;              /* index into stop-on-error, continue-on-error, rollback-on-error */
    const struct lyd_node *config; /* the <config> content, may be NULL */
};

/** @brief Apply an edit-config to the calling device (locks, copy-on-write, edit, candidate state). */
void ops_edit_config_apply(struct rpc_call *call, const struct ops_edit_params *params);

/** @brief Print @p tree into the reply, through a subtree filter (anydata node) or an XPath, or whole. */
void ops_filter_print(struct rpc_call *call, const struct lyd_node *subtree, const char *xpath,
                      const struct lyd_node *tree, uint32_t wd);

/** @brief Running merged with the device's state at one instant (get, and NMDA's operational datastore). */
enum fleet_err ops_operational_view(struct rpc_call *call, struct lyd_node **view);

/** @return The tree datastore @p id of the calling device shows. */
const struct lyd_node *ops_read_ds(struct rpc_call *call, enum ds_id id);

/** @brief The with-defaults parameter as print options; -1 after replying with an error. */
int ops_wd_option(struct rpc_call *call, uint32_t *opts);

void op_get(struct rpc_call *call);
void op_get_data(struct rpc_call *call);
void op_create_subscription(struct rpc_call *call);

/** @return yang:date-and-time @p text as ms since the epoch; -1 when it cannot be read. */
int64_t ops_parse_time_ms(const char *text);

/* RFC 8639 and RFC 8641 operations (ops_push.c). */
void op_establish_subscription(struct rpc_call *call);
void op_modify_subscription(struct rpc_call *call);
void op_delete_subscription(struct rpc_call *call);
void op_kill_subscription(struct rpc_call *call);
void op_resync_subscription(struct rpc_call *call);

/** @brief After create-subscription's ok: replay what was asked, then start (or join) the stream. */
void ops_subscription_after_reply(struct session *s);

/** @brief An XPath filter's prefixes turned into module names (from the message's xmlns). Malloc'd. */
char *ops_xpath_to_module_prefixes(struct rpc_call *call, const char *xpath);
void op_edit_data(struct rpc_call *call);
void op_get_config(struct rpc_call *call);
void op_edit_config(struct rpc_call *call);
void op_copy_config(struct rpc_call *call);
void op_delete_config(struct rpc_call *call);
void op_validate(struct rpc_call *call);
void op_commit(struct rpc_call *call);
void op_discard_changes(struct rpc_call *call);
void op_close_session(struct rpc_call *call);
void op_kill_session(struct rpc_call *call);
void op_lock(struct rpc_call *call);
void op_unlock(struct rpc_call *call);
void op_get_schema(struct rpc_call *call);

/**
 * @brief Build the state data of get: netconf-state (RFC 6022) for the calling device.
 * @param[out] tree New tree; the caller frees it.
 */
enum fleet_err monitoring_state(struct rpc_call *call, struct lyd_node **tree);

/**
 * @brief Build the device's operational state for get: ietf-interfaces (the state leaves of configured
 * interfaces and interfaces-state) and ietf-system's system-state, at one instant.
 * @param[in] running The running tree, to know which interfaces are configured.
 * @param[out] tree New tree (top-level siblings); the caller frees it.
 */
enum fleet_err device_state(struct rpc_call *call, const struct lyd_node *running, struct lyd_node **tree);

/**
 * @brief Answer a get whose subtree filter selects only whole top-level subtrees of the type's state
 * tree from their text with value slots, running's configuration under them joined in (state_text.h):
 * the reply the libyang path gives, without building it. Call with the default with-defaults mode only.
 * @return 1 when the reply's data is written, 0 when the get needs the libyang path.
 */
int ops_state_text_reply(struct rpc_call *call, const struct lyd_node *filter);

/**
 * @brief ops_state_text_reply() for a subtree filter's content @p spec (its top-level siblings), appended
 * to call->data (YANG-Push's push-update uses it without a get request).
 * @return 1 when the data is written, 0 when the selection needs the libyang path (nothing written).
 */
int ops_state_text_print(struct rpc_call *call, const struct lyd_node *spec);

/* ietf-interfaces' namespace. */
#define OPS_IF_NS "urn:ietf:params:xml:ns:yang:ietf-interfaces"

/**
 * @brief One interface's counters without building the operational view: when the subtree filter content
 * @p spec is exactly interfaces (or interfaces-state) / interface[name=X] / statistics, append to
 * call->data the text libyang prints for that selection (the same values, at this instant).
 * YANG-Push's periodic counter subscriptions take it; get keeps the libyang path.
 * @return 1 when written, 0 when the filter has another shape (nothing written).
 */
int ops_if_stats_text(struct rpc_call *call, const struct lyd_node *spec);

#endif
