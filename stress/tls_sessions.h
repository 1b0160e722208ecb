/*
 * TLS sessions the stress client remembers for --tls-resume: the last one a
 * server gave, per target (address family, address and port), so that the
 * next connection to the same device resumes instead of a full handshake.
 * One loop, one thread.
 */
#ifndef STRESS_TLS_SESSIONS_H
#define STRESS_TLS_SESSIONS_H

#include <stdint.h>

#include <openssl/ssl.h>

/** @brief The session remembered for the target, or NULL; it stays the store's. */
SSL_SESSION *tls_sessions_get(const void *fam, uint32_t addr, uint16_t port);

/**
 * @brief Remember @p sess for the target in place of the previous one; the store takes the caller's
 * reference.
 * @return 0, or -1 when memory ran out (the reference is released then).
 */
int tls_sessions_put(const void *fam, uint32_t addr, uint16_t port, SSL_SESSION *sess);

/** @brief Forget every session. */
void tls_sessions_free(void);

#endif
