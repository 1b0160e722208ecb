/*
 * Identity rules: what must differ between the devices of one type (its
 * host name, address, MAC addresses, serial numbers), as in a recorded
 * folder's rules.json (docs/RECORDED_TYPES.md). A rule replaces every
 * occurrence of an exact text in the type's values with a template whose
 * placeholders ({INDEX}, {ADDR}, {MAC}, {SERIAL}) are filled per device;
 * placeholders written directly into the data are filled as well.
 *
 * Nothing is kept per device: shared data is rewritten as it is printed
 * (one pass over the text with all rules), and a device's own copy of a
 * datastore is rewritten once, when it is made.
 */
#ifndef FLEET_IDENTITY_H
#define FLEET_IDENTITY_H

#include <stddef.h>
#include <stdint.h>

#include <libyang/libyang.h>

#include "datastore.h"
#include "err.h"
#include "sbuf.h"

struct device;

/* Most rules one file holds. */
#define IDENTITY_MAX_RULES 1024

/* One rule of rules.json. */
struct identity_rule {
    char *name;           /* what it is ("hostname"), "" when the file gives none */
    char *match;          /* the exact text replaced, never empty */
    size_t match_len;     /* bytes of match */
    char *match_xml;      /* match as it appears in printed XML character data (&, <, > escaped) */
    size_t match_xml_len; /* bytes of match_xml */
    char *replace;        /* the replacement template, placeholders unfilled */
};

/* A type's rules, read-only once loaded; shared by every device of the type. */
struct identity_rules {
    struct identity_rule *rules; /* in file order (the first wins between equally long matches) */
    uint32_t count;              /* entries in rules */
    uint8_t first[256];          /* 1: a byte that may begin a match in plain text */
    uint8_t first_xml[256];      /* 1: a byte that may begin a match in XML character data */
};

/* One device's placeholder values, computed on demand (nothing is stored per device). */
struct identity_values {
    char index[12];   /* {INDEX}: the fleet index, decimal */
    char addr[16];    /* {ADDR}: the listening IPv4 address, dotted */
    char mac[18];     /* {MAC}: 02:xx:xx:xx:xx:xx, lower case */
    char serial[13];  /* {SERIAL}: FS and 10 upper-case hexadecimal digits */
    uint64_t seed;    /* the fleet seed, for {MAC+N} */
    uint32_t index_n; /* the fleet index, for {MAC+N} */
};

/* Largest N of {MAC+N}: a device's further MACs (its interfaces'), each distinct in the fleet. */
#define IDENTITY_MAC_MAX_OFFSET 255

/**
 * @brief Read a rules file ({"rules": [{"name", "match", "replace"}, ...]}).
 * @param[out] out The rules, owned by the caller (identity_rules_free()).
 * @param[out] err On error, one line naming the file and the place ("rules.json: rule 2 (serial): ...").
 * @return FLEET_OK; FLEET_ERR_SYS when it cannot be read; FLEET_ERR_INVAL when it is not such a file;
 * FLEET_ERR_NOMEM.
 */
enum fleet_err identity_rules_load(const char *path, struct identity_rules **out, char *err, size_t err_len);

/**
 * @brief Parse rules from text (identity_rules_load() without the file).
 * @param[in] what Named in error messages (the file's path).
 */
enum fleet_err identity_rules_parse(const char *text, size_t len, const char *what,
                                    struct identity_rules **out, char *err, size_t err_len);

/** @brief Rules without any rule: only placeholders written in the data are filled. NULL when out of memory.
 */
struct identity_rules *identity_rules_empty(void);

/** @brief Free rules; accepts NULL. */
void identity_rules_free(struct identity_rules *rules);

/**
 * @brief The placeholder values of device @p index at @p addr in a fleet of seed @p seed.
 * {MAC} and {SERIAL} are bijections of the index keyed by the seed: deterministic, and distinct for
 * any two devices of one fleet.
 */
void identity_values_of(uint64_t seed, uint32_t index, uint32_t addr, struct identity_values *out);

/** @brief The placeholder values of @p dev (its fleet index, address and its group's seed). */
void identity_values(const struct device *dev, struct identity_values *out);

/**
 * @brief Append @p in to @p out with every rule's match and every placeholder replaced; leftmost
 * match first, the longest one where several begin at one place; replaced text is not scanned again.
 * @param[in] rules The rules, or NULL for placeholders only.
 * @param[out] out Where the text goes; NULL only counts.
 * @return Replacements made.
 */
size_t identity_apply_text(const struct identity_rules *rules, const struct identity_values *vals,
                           const char *in, size_t len, struct sbuf *out);

/**
 * @brief identity_apply_text() for printed XML: only character data is rewritten (names, attributes
 * and namespaces are not), matches and replacements in their escaped form.
 */
size_t identity_apply_xml(const struct identity_rules *rules, const struct identity_values *vals,
                          const char *in, size_t len, struct sbuf *out);

/**
 * @brief Rewrite the values of every leaf and leaf-list node of @p tree (all siblings, recursively) that
 * hold a match or a placeholder (lyd_change_term()).
 * @param[out] refused Nodes whose rewritten value their type does not accept (left as they were); may be
 * NULL.
 * @return Nodes changed, or -1 when memory ran out.
 */
int identity_apply_tree(const struct identity_rules *rules, const struct identity_values *vals,
                        struct lyd_node *tree, uint32_t *refused);

/**
 * @brief Rewrite the part of a reply printed from shared data: @p buf from @p from on, as XML, with
 * @p dev's identity. Nothing happens when its type has no rules.
 */
void identity_rewrite_reply(const struct device *dev, struct sbuf *buf, size_t from);

/**
 * @brief A string value served from shared data (an SNMP recording's, a host name) with @p dev's
 * identity, into @p buf (at most @p cap bytes, not NUL-terminated).
 * @return Its length, or (size_t)-1 when nothing changes (the caller keeps the original).
 */
size_t identity_rewrite_value(const struct device *dev, const char *in, size_t len, char *buf, size_t cap);

/**
 * @brief ds_own() for a device: when the copy is made from the type's template, it gets the device's
 * identity, so edits and later reads see the device's values.
 */
enum fleet_err identity_ds_own(struct device *dev, enum ds_id id, struct lyd_node ***tree);

/** @brief After copying @p src into @p copy (copy-config): the copy of the template gets the identity. */
void identity_fix_copy(const struct device *dev, const struct lyd_node *src, struct lyd_node *copy);

#endif
