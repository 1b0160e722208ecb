/*
 * The control API under /api/v1/ on the --metrics HTTP server: read the
 * fleet and its devices, act on devices (device_actions.h) through their
 * workers' inboxes. JSON in, JSON out; README.md "Control API" lists it.
 */
#ifndef FLEET_CONTROL_API_H
#define FLEET_CONTROL_API_H

#include <stddef.h>

#include <microhttpd.h>

#include "device.h"

/* Largest request body accepted (413 beyond). */
#define CAPI_MAX_BODY_BYTES (64 * 1024)
/* Index ranges listed in an action's answer; the count is always complete. */
#define CAPI_MAX_RANGES_SHOWN 32

/**
 * @brief Read --api-token-file into a new string (token_file_read(): trailing whitespace dropped).
 * @return The token (free()), or NULL with @p err set: unreadable, empty or too long.
 */
char *capi_read_token(const char *path, char *err, size_t err_len);

/**
 * @brief Serve one request under /api/ (libmicrohttpd's access handler contract).
 * @param token The bearer token requests must carry, or NULL for none.
 * @param req_cls The request's state, made on the first call and freed by capi_request_done().
 */
enum MHD_Result capi_handle(struct fleet *fleet, const char *token, struct MHD_Connection *conn,
                            const char *url, const char *method, const char *upload_data,
                            size_t *upload_data_size, void **req_cls);

/** @brief Free a request's state (libmicrohttpd's completion callback). Accepts NULL. */
void capi_request_done(void *req_cls);

#endif
