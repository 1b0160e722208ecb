/*
 * One SNMP request in, one response out (or none): community check, the
 * operations (GET, GETNEXT, GETBULK, SET) over the device's MIB view, the
 * size limit and the v1 mappings. No sockets here, so tests and fuzzers can
 * drive it directly.
 */
#ifndef FLEET_RESPOND_H
#define FLEET_RESPOND_H

#include <stddef.h>
#include <stdint.h>

#include "ber.h"
#include "device.h"
#include "netaddr.h"

struct device;

/* Most GETBULK repeaters answered; further ones are answered once, like non-repeaters. */
#define RESPOND_MAX_REPEATERS 128
/* Most varbinds one response carries, whatever the size limit allows. */
#define RESPOND_MAX_BINDINGS 2048

/* The scratch a worker lends to request processing (large: never on a device). */
struct respond_scratch {
    struct oid repeaters[RESPOND_MAX_REPEATERS]; /* GETBULK: where each repeater stands */
    uint32_t hints[RESPOND_MAX_REPEATERS];       /* GETBULK: the object each repeater walks in */
    uint8_t v3_pdu[65536 + 64];                  /* SNMPv3: the response PDU before USM wraps it */
};

/**
 * @brief Parse "NAME:AUTH:AUTHPASS:PRIV:PRIVPASS" (AUTH and PRIV as susm_auth_parse() and
 * susm_priv_parse() take them: sha256, SHA-256, AES, ...) and derive the keys (a few milliseconds).
 * @return FLEET_OK or FLEET_ERR_INVAL with @p err set.
 */
enum fleet_err respond_v3_user_parse(const char *text, struct respond_v3_user *user, char *err,
                                     size_t err_len);

/**
 * @brief Answer one datagram addressed to @p dev. An SNMPv3 datagram is decrypted in place.
 * @param[in] out Buffer for the response; @p out_cap its size (the size limit plus SPDU_HEADROOM).
 * @param[out] reply Where the response starts in @p out.
 * @param[in] peer The requester's address (a refused login names it: event.h), or NULL.
 * @param[in] forced_error If not 0, answer with this error-status (fault injection) instead.
 * @return Length of the response, or 0 when nothing is to be sent.
 */
size_t respond(struct device *dev, struct respond_scratch *scratch, uint8_t *req, size_t req_len,
               const union netaddr_sa *peer, uint8_t *out, size_t out_cap, int forced_error, uint8_t **reply);

#endif
