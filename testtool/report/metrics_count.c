/*
 * Operation names to counter slots: a linear scan of 16 short names.
 */
#include "metrics_count.h"

#include <string.h>

#include "spdu.h"

/* Counted NETCONF operations, in label order; the last entry stands for every other name. */
static const char *const rpc_ops[METRICS_RPC_OPS] = {
    "get",           "get-config", "edit-config",   "copy-config",
    "delete-config", "validate",   "commit",        "discard-changes",
    "lock",          "unlock",     "close-session", "kill-session",
    "get-schema",    "get-data",   "edit-data",     "create-subscription",
    "other",
};

unsigned
metrics_rpc_op(const char *name)
{
    /* A linear scan of 16 short names: nothing beside the parse of the message it counts. */
    for (unsigned i = 0; name && i < METRICS_RPC_OPS - 1; i++) {
        if (!strcmp(name, rpc_ops[i])) {
            return i;
        }
    }
    return METRICS_RPC_OPS - 1;
}

void
metrics_count_rpc(struct worker *w, const char *name, int error)
{
    w->metrics.rpcs[metrics_rpc_op(name)][error ? 1 : 0]++;
}

void
metrics_count_snmp(struct worker *w, int pdu_type, int error_status)
{
    unsigned t;

    switch (pdu_type) {
    case SPDU_GET:
        t = 0;
        break;
    case SPDU_GETNEXT:
        t = 1;
        break;
    case SPDU_GETBULK:
        t = 2;
        break;
    case SPDU_SET:
        t = 3;
        break;
    default:
        return;
    }
    w->metrics.snmp[t][error_status ? 1 : 0]++;
}

const char *
metrics_rpc_op_name(unsigned op)
{
    return rpc_ops[op < METRICS_RPC_OPS ? op : METRICS_RPC_OPS - 1];
}
