/*
 * Counting replies as they go out: each worker's per-operation and per-PDU
 * counters (struct metrics_worker in device.h), written by its own thread
 * only. The protocol code counts here; metrics.c reads the sums.
 */
#ifndef FLEET_METRICS_COUNT_H
#define FLEET_METRICS_COUNT_H

#include "device.h"

/**
 * @brief Index of NETCONF operation @p name among the counted ones.
 * @param[in] name Operation name, or NULL for a message that named none.
 * @return 0 to METRICS_RPC_OPS - 1, the last meaning "other".
 */
unsigned metrics_rpc_op(const char *name);

/** @return The label of counted operation @p op (< METRICS_RPC_OPS); the last is "other". */
const char *metrics_rpc_op_name(unsigned op);

/**
 * @brief Count one rpc-reply of @p w's device. Call on the worker's thread.
 * @param[in] name Operation name, or NULL when the message named none.
 * @param[in] error 1 when the reply carries rpc-error.
 */
void metrics_count_rpc(struct worker *w, const char *name, int error);

/**
 * @brief Count one SNMP response of @p w's device. Call on the worker's thread.
 * @param[in] pdu_type The request's PDU type (SPDU_GET, ...); other types are not counted.
 * @param[in] error_status The response's error-status (0: noError).
 */
void metrics_count_snmp(struct worker *w, int pdu_type, int error_status);

#endif
