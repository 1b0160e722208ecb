/*
 * A file's identity for reports and manifests: its SHA-256 in hex, as
 * sha256sum prints it, so a run names exactly the scenario it ran.
 */
#ifndef FLEET_DIGEST_H
#define FLEET_DIGEST_H

#include <stddef.h>

/* Room for a SHA-256 in hex and its NUL. */
#define DIGEST_SHA256_HEX_BYTES 65

/** @brief SHA-256 of @p len bytes of @p data as 64 lower-case hex digits into @p out (empty on failure). */
void digest_sha256_hex(const void *data, size_t len, char out[DIGEST_SHA256_HEX_BYTES]);

#endif
