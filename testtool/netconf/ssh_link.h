/*
 * NETCONF over SSH (RFC 6242) for one session, with libssh's server API,
 * non-blocking, driven by the worker loop: key exchange, authentication
 * (password, or any with --auth any), one session channel, the "netconf"
 * subsystem (a shell, exec or another subsystem is refused). Channel data
 * goes to the session's framing; the session's output queue goes to the
 * channel. The session reaches it only through its transport ops table
 * (transport_ssh, transport.h); this header has the fleet's side: host
 * keys and the workers' ssh_bind.
 */
#ifndef FLEET_SSH_LINK_H
#define FLEET_SSH_LINK_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct fleet;
struct fleet_config;
struct session;
struct ssh_key_struct;

/**
 * @brief Device @p index's own host key (--host-key-per-device), of @p cfg's --host-key-type, derived
 * from @p secret. @return A libssh key the caller frees, or NULL.
 */
struct ssh_key_struct *ssh_link_device_key(const struct fleet_config *cfg, const uint8_t secret[32],
                                           uint32_t index);

/** @return Device @p index's public host key as base64 (the caller frees it), or NULL. */
char *ssh_link_device_pubkey_b64(const struct fleet_config *cfg, const uint8_t secret[32], uint32_t index);

/**
 * @brief The secret devices' own host keys derive from: read from the state folder, created there once.
 * @param[out] secret 32 bytes.
 */
enum fleet_err ssh_link_load_secret(const struct fleet_config *cfg, uint8_t secret[32], char *err,
                                    size_t err_len);

/**
 * @brief Prepare the fleet's SSH server side: each worker's ssh_bind with the host key (from --host-key,
 * or created once in the state folder and reused).
 */
enum fleet_err ssh_link_fleet_init(struct fleet *fleet, char *err, size_t err_len);

/** @brief Free what ssh_link_fleet_init() made. */
void ssh_link_fleet_close(struct fleet *fleet);

#endif
