/*
 * A syslog catalog: the messages a kind of device sends on its own, each a
 * template with a facility, a severity, a weight (how often it is drawn
 * against the others), an APP-NAME, a MSGID and text with placeholders.
 * The file format (JSON) is in docs/SYSLOG_CATALOG.md; the built-in
 * catalogs are files of that format under schemas/syslog/.
 *
 * Placeholders, filled per message by syslog_catalog_expand():
 *   {if}      an interface of the device, drawn     {ifindex} its ifIndex
 *   {host}    the device's host name                {addr}    its address
 *   {peer}    an address drawn from 192.0.2.0/24 (RFC 5737, documentation)
 *   {num}     a number drawn from 1..65535          {user}    a user name drawn from a short list
 *   {{ and }} a literal brace
 * A template naming anything else is refused when the file is read.
 *
 * The reader is bounded (file size, message count, text length, weights)
 * and fuzzed (tests/fuzz/fuzz_syslog_catalog.c); a catalog is read-only
 * once loaded and shared by every worker.
 */
#ifndef FLEET_SYSLOG_CATALOG_H
#define FLEET_SYSLOG_CATALOG_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* Largest catalog file read. */
#define SYSLOG_CATALOG_MAX_BYTES (1024u * 1024u)
/* Most messages in one catalog. */
#define SYSLOG_CATALOG_MAX_MESSAGES 4096u
/* Longest template text. */
#define SYSLOG_CATALOG_MAX_TEXT_BYTES 1024u
/* Largest weight of one message (the sum of all stays below 2^32 with the message limit). */
#define SYSLOG_CATALOG_MAX_WEIGHT 1000000u

/* One template. */
struct syslog_template {
    char *id;          /* the message's name in the catalog ("link-down"), unique; owned */
    uint8_t facility;  /* 0..23 */
    uint8_t severity;  /* 0..7 */
    uint32_t weight;   /* 1..SYSLOG_CATALOG_MAX_WEIGHT; 0: only sent as an event, never drawn */
    char *app_name;    /* APP-NAME; owned */
    char *msgid;       /* MSGID, or NULL; owned */
    char *text;        /* the template, placeholders checked; owned */
    uint8_t uses_addr; /* 1 when text has {addr}: the caller formats the address only then */
};

struct syslog_catalog {
    struct syslog_template *msgs; /* count templates, in file order */
    uint32_t count;               /* entries of msgs */
    uint64_t *cumulative;         /* cumulative[i]: the sum of the weights of msgs[0..i] */
    uint64_t total_weight;        /* the sum of every weight; > 0 */
};

/* What placeholders are filled with, for one message. */
struct syslog_vars {
    const char *host;   /* {host} */
    const char *addr;   /* {addr} */
    const char *ifname; /* {if}, or NULL when the device has no interface ("-") */
    uint32_t ifindex;   /* {ifindex} */
    uint64_t draw;      /* random bits for {peer}, {num} and {user} */
    const char *user;   /* {user} of an event that has one (who logged in, who committed), NULL: drawn */
    const char *peer;   /* {peer} of an event that has one (where from), NULL: drawn */
};

/**
 * @brief Read a catalog from @p text (JSON, docs/SYSLOG_CATALOG.md).
 * @param[in] text Need not be NUL-terminated; at most SYSLOG_CATALOG_MAX_BYTES.
 * @param[out] out The catalog (syslog_catalog_free()), NULL on error.
 * @param[out] err Why it was refused: the JSON position, or the message's index and field.
 * @return FLEET_OK, FLEET_ERR_INVAL or FLEET_ERR_NOMEM.
 */
enum fleet_err syslog_catalog_parse(const char *text, size_t len, struct syslog_catalog **out, char *err,
                                    size_t err_len);

/** @brief Read the catalog file @p path (as syslog_catalog_parse(); @p err names the file). */
enum fleet_err syslog_catalog_load(const char *path, struct syslog_catalog **out, char *err, size_t err_len);

/** @brief Free a catalog; accepts NULL. */
void syslog_catalog_free(struct syslog_catalog *cat);

/** @return The template whose weight range holds @p draw modulo the total weight. */
const struct syslog_template *syslog_catalog_pick(const struct syslog_catalog *cat, uint64_t draw);

/** @return The template named @p id, or NULL. */
const struct syslog_template *syslog_catalog_find(const struct syslog_catalog *cat, const char *id);

/**
 * @brief Fill @p t's placeholders from @p vars into @p buf.
 * @return The text's length (cut at @p buf_len; no NUL is written).
 */
size_t syslog_catalog_expand(const struct syslog_template *t, const struct syslog_vars *vars, char *buf,
                             size_t buf_len);

#endif
