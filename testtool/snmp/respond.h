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

struct device;

/* Counters of one device's agent (named as SNMPv2-MIB's snmp group where it has them). */
struct respond_stats {
    uint32_t in_pkts;                /* snmpInPkts: datagrams received */
    uint32_t out_pkts;               /* snmpOutPkts: responses sent */
    uint32_t in_bad_versions;        /* snmpInBadVersions */
    uint32_t in_bad_community_names; /* snmpInBadCommunityNames: unknown community, dropped */
    uint32_t in_bad_community_uses;  /* snmpInBadCommunityUses: SET with the read community, dropped */
    uint32_t in_asn_parse_errs;      /* snmpInASNParseErrs: malformed messages, dropped */
    uint32_t in_get_requests;        /* GET PDUs accepted */
    uint32_t in_get_nexts;           /* GETNEXT PDUs accepted */
    uint32_t in_get_bulks;           /* GETBULK PDUs accepted */
    uint32_t in_set_requests;        /* SET PDUs accepted */
    uint32_t out_too_bigs;           /* responses that were tooBig */
    uint32_t silent_drops;           /* snmpSilentDrops: other PDUs dropped (responses, traps, reports) */
    uint32_t injected_drops;         /* requests left unanswered on purpose (--snmp-drop-rate, faults) */
};

/* Most GETBULK repeaters answered; further ones are answered once, like non-repeaters. */
#define RESPOND_MAX_REPEATERS 128
/* Most varbinds one response carries, whatever the size limit allows. */
#define RESPOND_MAX_BINDINGS 2048

/* The scratch a worker lends to request processing (large: never on a device). */
struct respond_scratch {
    struct ber_oid repeaters[RESPOND_MAX_REPEATERS]; /* GETBULK: where each repeater stands */
};

/**
 * @brief Answer one datagram addressed to @p dev.
 * @param[in] out Buffer for the response; @p out_cap its size (the size limit plus SPDU_HEADROOM).
 * @param[out] reply Where the response starts in @p out.
 * @param[in] forced_error If not 0, answer with this error-status (fault injection) instead.
 * @return Length of the response, or 0 when nothing is to be sent.
 */
size_t respond(struct device *dev, struct respond_scratch *scratch, const uint8_t *req, size_t req_len,
               uint8_t *out, size_t out_cap, int forced_error, uint8_t **reply);

#endif
