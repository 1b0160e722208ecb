/*
 * --rpc-config: custom RPC replies in OpenDaylight testtool's format
 *
 *   <rpcs>
 *     <rpc>
 *       <input>  the operation element a request must carry  </input>
 *       <output> a whole <rpc-reply> </output>  (one or more)
 *     </rpc>
 *   </rpcs>
 *
 * A request whose operation element equals an <input> structurally
 * (namespace and local name, attributes other than message-id, children in
 * order, leaf text with surrounding whitespace ignored; prefixes do not
 * matter) gets that rpc's outputs in sequence, per device, the last one
 * repeating. Rpcs with equal inputs are one rpc whose outputs follow each
 * other in file order. Custom replies take precedence over every built-in
 * operation; an output carrying <rpc-error> is an error reply.
 *
 * The table is read-only after loading, except each device's positions in
 * the sequences, which only that device's worker thread touches.
 */
#ifndef FLEET_RPC_CUSTOM_H
#define FLEET_RPC_CUSTOM_H

#include <stddef.h>
#include <stdint.h>

#include <libyang/libyang.h>

#include "err.h"

/* Largest --rpc-config file read. */
#define RPC_CUSTOM_MAX_FILE_BYTES (64u * 1024u * 1024u)
/* Most distinct inputs (rpcs after merging equal inputs). */
#define RPC_CUSTOM_MAX_RPCS 65536u
/* Most outputs of one rpc: a device's position in them is 16 bits wide. */
#define RPC_CUSTOM_MAX_OUTPUTS 65535u

struct rpc_custom;

/* One configured reply, ready to send inside <rpc-reply>. */
struct rpc_custom_output {
    char *xml;      /* content of the configured <rpc-reply> (its children), namespaces declared */
    size_t xml_len; /* its length in bytes */
    int is_error;   /* 1 when it carries <rpc-error>: counted as an error reply */
};

/**
 * @brief Read and check an --rpc-config file.
 *
 * May only be called before the workers start. Every problem (not XML, no
 * <rpcs>, an rpc without <input> or <output>, an output that is not an
 * <rpc-reply>, a limit) refuses the whole file.
 *
 * @param[in] path The file.
 * @param[in] ctx A context without modules (struct fleet's bare_ctx): every
 *            element parses opaque. It must outlive the table; requests are
 *            parsed in it too (from any worker thread).
 * @param[in] device_count Devices that keep positions in the sequences.
 * @param[out] rc The table; free with rpc_custom_free().
 * @param[out] err Why the file was refused, naming it.
 * @param[in] err_len Size of @p err.
 * @return FLEET_OK, FLEET_ERR_INVAL (a bad file), FLEET_ERR_LIMIT or FLEET_ERR_NOMEM.
 */
enum fleet_err rpc_custom_load(const char *path, struct ly_ctx *ctx, uint32_t device_count,
                               struct rpc_custom **rc, char *err, size_t err_len);

/** @brief Free the table. Accepts NULL. Call before destroying its context. */
void rpc_custom_free(struct rpc_custom *rc);

/** @return Distinct inputs in the table (rpcs with equal inputs count once). */
uint32_t rpc_custom_count(const struct rpc_custom *rc);

/**
 * @brief Find the rpc a request matches.
 *
 * A request whose operation's local name no input has is turned down by a
 * scan of the text, without parsing. Others are parsed schema-free and
 * compared. Only a well-formed <rpc> in the NETCONF base namespace with a
 * message-id and exactly one operation element can match; everything else is
 * left to the built-in path, which answers it.
 *
 * @param[in] rc The table.
 * @param[in] msg The whole message, NUL-terminated.
 * @param[out] envelope On a match, the request's <rpc> (opaque) whose
 *             attributes the reply repeats; the caller frees it with lyd_free_all().
 * @param[out] entry On a match, the rpc matched (for rpc_custom_next()).
 * @return 0 on a match, -1 otherwise (then @p envelope is NULL).
 */
int rpc_custom_match(const struct rpc_custom *rc, const char *msg, struct lyd_node **envelope,
                     uint32_t *entry);

/**
 * @brief The reply a device gives to its next request matching @p entry, and advance its position.
 *
 * Call only from the device's worker thread: the position is not locked.
 *
 * @param[in] rc The table.
 * @param[in] device The device's index (< the loaded device_count).
 * @param[in] entry From rpc_custom_match().
 * @return The output, owned by the table.
 */
const struct rpc_custom_output *rpc_custom_next(struct rpc_custom *rc, uint32_t device, uint32_t entry);

#endif
