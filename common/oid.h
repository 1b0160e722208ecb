/*
 * An OBJECT IDENTIFIER as a value: its sub-identifiers, their order and
 * their dotted text ("1.3.6.1.2.1.1.1.0"). Profiles, recordings and the
 * SNMP code all hold OIDs; only the SNMP codec (wire/ber.h) encodes them.
 */
#ifndef FLEET_OID_H
#define FLEET_OID_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* RFC 2578 section 3.5: an OBJECT IDENTIFIER has at most 128 sub-identifiers. */
#define OID_MAX_SUBIDS 128

struct oid {
    uint32_t len;                 /* sub-identifiers used, 0..OID_MAX_SUBIDS */
    uint32_t sub[OID_MAX_SUBIDS]; /* sub-identifiers, first two not combined */
};

/** @return <0, 0, >0 as @p a sorts before, equal to, after @p b (lexicographic, shorter first on a tie). */
int oid_cmp(const struct oid *a, const struct oid *b);

/**
 * @brief Parse dotted text ("1.3.6.1.2.1.1.1.0", a leading dot allowed) into @p oid. Only OIDs BER can
 * carry unchanged are accepted: at least two arcs, the first 0..2, the second below 40 under 0 and 1.
 * @return FLEET_OK, or FLEET_ERR_INVAL (then @p oid is unspecified).
 */
enum fleet_err oid_parse(const char *text, struct oid *oid);

/** @brief Print @p oid as dotted text into @p buf (truncated, always NUL-terminated); @return @p buf. */
char *oid_format(const struct oid *oid, char *buf, size_t buf_len);

#endif
