/*
 * A get-config round trip with libnetconf2's client API.
 */
#include "itest_nc.h"

#include <stdint.h>

#include <libnetconf2/messages_client.h>
#include <libnetconf2/netconf.h>
#include <libnetconf2/session_client.h>
#include <libyang/libyang.h>

int
itest_nc_get_config(struct nc_session *s)
{
    struct nc_rpc *rpc = nc_rpc_getconfig(NC_DATASTORE_RUNNING, NULL, NC_WD_UNKNOWN, NC_PARAMTYPE_CONST);
    struct lyd_node *envp = NULL, *op = NULL;
    uint64_t msgid;
    int rc = -1;

    if (!rpc || nc_send_rpc(s, rpc, 5000, &msgid) != NC_MSG_RPC) {
        goto cleanup;
    }
    if (nc_recv_reply(s, rpc, msgid, 10000, &envp, &op) == NC_MSG_REPLY && op) {
        rc = 0;
    }

cleanup:
    lyd_free_tree(envp);
    lyd_free_tree(op);
    nc_rpc_free(rpc);
    return rc;
}
