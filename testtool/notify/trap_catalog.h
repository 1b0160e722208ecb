/*
 * A trap catalog: the notifications a kind of device sends on its own at
 * --trap-rate, each with its snmpTrapOID, a weight (how often it is drawn
 * against the others) and its objects: an OID template and a typed value
 * template. The file format (JSON) is in docs/TRAP_CATALOG.md; the built-in
 * catalogs are files of that format under schemas/traps/. It mirrors the
 * syslog catalog (syslog_catalog.h): same weights, same kind of
 * placeholders, same bounded reader.
 *
 * Placeholders, filled per notification by trap_catalog_build():
 *   {ifindex} the ifIndex of an interface of the device, drawn (OIDs and values)
 *   {num}     a number drawn from 1..65535 (OIDs and values)
 *   {if}      that interface's name          {host} the device's host name
 *   {peer}    an address drawn from 192.0.2.0/24 (RFC 5737): ipaddress values, and OIDs indexed by an
 *             address (bgpPeerTable)
 * A template naming anything else, a value its type cannot hold, or an OID
 * that does not parse is refused when the file is read.
 */
#ifndef FLEET_TRAP_CATALOG_H
#define FLEET_TRAP_CATALOG_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "oid.h"
#include "trap.h"

/* Largest catalog file read. */
#define TRAP_CATALOG_MAX_BYTES (1024u * 1024u)
/* Most notifications in one catalog. */
#define TRAP_CATALOG_MAX_TRAPS 1024u
/* Most objects of one notification (beyond sysUpTime.0 and snmpTrapOID.0). */
#define TRAP_CATALOG_MAX_OBJECTS 16u
/* Longest OID or value template, and longest expanded value. */
#define TRAP_CATALOG_MAX_TEXT_BYTES 255u
/* Largest weight of one notification (the sum stays far below 2^64). */
#define TRAP_CATALOG_MAX_WEIGHT 1000000u

/* One object of a notification. */
struct trap_object_template {
    char *oid;    /* OID template (digits, dots, {ifindex}, {num}, {peer}); owned */
    uint8_t type; /* enum ber_tag of the value */
    char *value;  /* value template; owned */
};

/* One notification. */
struct trap_template {
    char *id;                             /* its name in the catalog ("link-down"), unique; owned */
    struct oid trap_oid;                  /* snmpTrapOID.0 */
    uint32_t weight;                      /* 1..TRAP_CATALOG_MAX_WEIGHT; 0: never drawn (events only) */
    struct trap_object_template *objects; /* object_count entries; owned */
    uint32_t object_count;                /* 0..TRAP_CATALOG_MAX_OBJECTS */
};

struct trap_catalog {
    struct trap_template *traps; /* count templates, in file order */
    uint32_t count;              /* entries of traps */
    uint64_t total_weight;       /* the sum of every weight; > 0 */
};

/* What placeholders are filled with, for one notification. */
struct trap_catalog_vars {
    const char *host;   /* {host} */
    const char *ifname; /* {if}, or NULL when the device has no interface ("-") */
    uint32_t ifindex;   /* {ifindex}; 1 when the device has no interface */
    uint64_t draw;      /* random bits for {num} and {peer} */
};

/* A notification built from a template: what trap_send() takes, and the storage it points into. */
struct trap_catalog_built {
    struct trap_varbind varbinds[TRAP_CATALOG_MAX_OBJECTS];               /* the objects, in order */
    size_t varbind_count;                                                 /* entries used */
    struct oid names[TRAP_CATALOG_MAX_OBJECTS];                           /* the objects' OIDs */
    struct oid oid_values[TRAP_CATALOG_MAX_OBJECTS];                      /* values of type oid */
    char text[TRAP_CATALOG_MAX_OBJECTS][TRAP_CATALOG_MAX_TEXT_BYTES + 1]; /* string values */
    uint8_t addr[TRAP_CATALOG_MAX_OBJECTS][4];                            /* ipaddress values */
};

/**
 * @brief Read a catalog from @p text (JSON, docs/TRAP_CATALOG.md).
 * @param[in] text Need not be NUL-terminated; at most TRAP_CATALOG_MAX_BYTES.
 * @param[out] out The catalog (trap_catalog_free()), NULL on error.
 * @param[out] err Why it was refused: the JSON position, or the notification's index and field.
 * @return FLEET_OK, FLEET_ERR_INVAL or FLEET_ERR_NOMEM.
 */
enum fleet_err trap_catalog_parse(const char *text, size_t len, struct trap_catalog **out, char *err,
                                  size_t err_len);

/** @brief Read the catalog file @p path (as trap_catalog_parse(); @p err names the file). */
enum fleet_err trap_catalog_load(const char *path, struct trap_catalog **out, char *err, size_t err_len);

/** @brief Free a catalog; accepts NULL. */
void trap_catalog_free(struct trap_catalog *cat);

/** @return The template whose weight range holds @p draw modulo the total weight. */
const struct trap_template *trap_catalog_pick(const struct trap_catalog *cat, uint64_t draw);

/** @return The template named @p id, or NULL. */
const struct trap_template *trap_catalog_find(const struct trap_catalog *cat, const char *id);

/**
 * @brief Fill @p t's placeholders from @p vars into @p out, ready for trap_send().
 * @return FLEET_OK; FLEET_ERR_INVAL when an expanded OID or number does not parse (a {num} that makes an
 * OID arc too long cannot happen: templates were checked with the largest values).
 */
enum fleet_err trap_catalog_build(const struct trap_template *t, const struct trap_catalog_vars *vars,
                                  struct trap_catalog_built *out);

#endif
