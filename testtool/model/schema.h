/*
 * The fleet's schema set: one libyang context shared read-only by every
 * worker after start-up, the modules every device advertises (hello
 * capabilities, yang-library, netconf-monitoring schemas), and the
 * validation plan that tells the edit engine which modules need whole-module
 * validation after an edit.
 */
#ifndef FLEET_SCHEMA_H
#define FLEET_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include <libyang/libyang.h>

#include "err.h"

/* Debian's libyuma-base: standard IETF modules, and the NMDA revisions. */
#define SCHEMA_YUMA_IETF_DIR "/usr/share/yuma/modules/ietf"
#define SCHEMA_YUMA_NMDA_DIR "/usr/share/yuma/nmda-modules/ietf"
/* RFC 5277's modules (notifications, nc-notifications) as yuma ships them, and yuma-ncx they import. */
#define SCHEMA_YUMA_DERIVED_DIR "/usr/share/yuma/modules/ietf-derived"
#define SCHEMA_YUMA_NCX_DIR     "/usr/share/yuma/modules/netconfcentral"

struct schema_module {
    const struct lys_module *mod;           /* the module in the context (a submodule's: its main module) */
    const struct lysp_submodule *submodule; /* for a submodule entry: the submodule; NULL for a module */
    const char *name;                       /* module or submodule name (libyang's string) */
    const char *revision;                   /* its newest revision, or NULL (libyang's string) */
    int implemented;                        /* 1 when implemented, 0 when only imported */
    int needs_module_validation;            /* 1 when its data holds constraints that span the tree */
    char *yang_xml; /* the source file's text (printed by libyang when it had none), XML-escaped; owned */
    size_t yang_xml_len;     /* its length in bytes */
    uint32_t next_same_name; /* the next entry of its list with this name, in load order; SCHEMA_NONE ends */
    int text_only; /* 1: a recorded device's revision of a module whose other revision the context implements
                      (libyang's own ietf-yang-library 2019-01-04, say): advertised and served from the
                      folder's text only, never implemented; mod is the implemented revision (same namespace)
                    */
    char *yin;     /* for a text_only entry: its text as YIN, printed at load apart from the context, or NULL
                      when it did not parse there; owned */
};

/* No entry (an index's chain end or free slot). */
#define SCHEMA_NONE UINT32_MAX

/* One name of a schema_index. */
struct schema_index_slot {
    const char *name; /* the module or submodule name (libyang's string); NULL: the slot is free */
    uint32_t hash;    /* the name's hash, compared before the name */
    uint32_t first;   /* its first entry in load order (head of the next_same_name chain) */
    uint32_t latest;  /* the entry a lookup without revision gives */
};

/*
 * Entries of a module or submodule list by name: open addressing with linear probing, built once at load,
 * read-only after (every worker looks up through it without locks). get-schema finds its module with one
 * hash and usually one string compare instead of a strcmp per module.
 */
struct schema_index {
    struct schema_index_slot *slots; /* mask + 1 slots, at most half of them used; NULL until built */
    size_t mask;                     /* slot count - 1 (a power of two) */
};

/* How a vendor folder is loaded (--features, --schemas-strict). */
struct schema_options {
    const char *const *features; /* "MODULE:F1,F2" each: only these features of MODULE (none after ':') */
    size_t feature_count;        /* entries in features */
    int strict;                  /* 1: a module of the folder that does not load is an error, not skipped */
};

struct schema_set {
    struct ly_ctx *ctx;                  /* shared, read-only after schema_set_load() */
    struct schema_module *modules;       /* advertised modules, in load order */
    size_t module_count;                 /* entries in modules */
    struct schema_module *submodules;    /* submodules of the modules, for get-schema and netconf-state */
    size_t submodule_count;              /* entries in submodules */
    char **caps;                         /* hello capabilities, owned */
    size_t cap_count;                    /* entries in caps */
    uint32_t content_id;                 /* yang-library content-id / module-set-id */
    int any_module_validation;           /* 1 when at least one module needs whole-module validation */
    struct schema_index module_index;    /* modules by name; built at load */
    struct schema_index submodule_index; /* submodules by name; built at load */
    char *hello_head;      /* our hello up to (without) "</hello>", shared by every session; owned */
    size_t hello_head_len; /* its length */
};

/**
 * @brief Build the context: the default set (ietf-netconf with its features,
 * ietf-netconf-with-defaults, ietf-netconf-monitoring, ietf-yang-library,
 * ietf-interfaces, iana-if-type, ietf-datastores, and YANG-Push's
 * ietf-subscribed-notifications and ietf-yang-push from FLEETSIM_SCHEMA_DIR/ietf
 * with fleetsim-yang-push-deviations) plus every .yang file in @p schemas_dir.
 * @param[out] set Filled on success; release with schema_set_free().
 * @param[in] schemas_dir Extra modules, or NULL.
 * @param[out] err Message naming the module and libyang's reason on failure.
 * @param[in] err_len Size of @p err.
 * @return FLEET_OK, FLEET_ERR_INVAL (a module does not compile, a folder
 *         cannot be read) or FLEET_ERR_NOMEM.
 */
enum fleet_err schema_set_load(struct schema_set *set, const char *schemas_dir, char *err, size_t err_len);

/**
 * @brief schema_set_load() with @p opts, then also the modules @p extra_modules (a profile's), looked up in
 * @p extra_dir as well as the usual folders.
 *
 * The folder is loaded as a vendor ships it: submodules only through their modules, the newest revision of
 * each module implemented (older ones serve imports naming them), imports implemented, every feature on
 * unless pinned, the folder's modules before (and instead of) the default ones. A module that does not
 * parse or compile is left out with whatever imports it, one warning line each, unless opts->strict.
 * Prints one summary line (modules, submodules, skipped, seconds).
 *
 * A module of the folder (a vendor's or a recorded device's) that cannot be implemented
 * because the context implements another revision of it (libyang's own ietf-yang-library) is not skipped:
 * it gets a text_only entry, advertised with its revision and served by get-schema from the folder's text,
 * and a lookup without revision finds it first; what imports it is loaded against the implemented revision.
 */
enum fleet_err schema_set_load_with(struct schema_set *set, const char *schemas_dir,
                                    const struct schema_options *opts, const char *extra_dir,
                                    char *const *extra_modules, size_t extra_count, char *err,
                                    size_t err_len);

/**
 * @brief Advertise @p caps (in this order) instead of the capabilities the load computed: the hello and
 * netconf-state/capabilities list them. Used for a recorded device type, whose hello is the recorded one.
 * @param[in] caps Malloc'd capability URIs in a malloc'd array; the set owns both on success.
 * @return FLEET_OK, or FLEET_ERR_NOMEM (the set is unchanged and the caller still owns @p caps).
 */
enum fleet_err schema_set_replace_caps(struct schema_set *set, char **caps, size_t cap_count);

/** @brief Free the set and its context. Accepts a zeroed set. */
void schema_set_free(struct schema_set *set);

/**
 * @brief Find an advertised module by name and optional revision (NULL or "" = latest: a text_only entry
 * (the device's own revision), else the newest revision, or the first entry of the name in load order when
 * one has none). A hash lookup once the set is loaded;
 * safe from any thread then.
 * @return The entry or NULL.
 */
const struct schema_module *schema_find(const struct schema_set *set, const char *name, const char *revision);

/**
 * @brief Find a submodule by name and optional revision (NULL or "" = latest).
 * @return The entry or NULL.
 */
const struct schema_module *schema_find_submodule(const struct schema_set *set, const char *name,
                                                  const char *revision);

/**
 * @brief The module's (or submodule's) text for get-schema, printed by libyang (a text_only entry's: the
 * YIN printed at load; its YANG is schema_module_yang_xml()).
 * @param[in] format LYS_OUT_YANG or LYS_OUT_YIN.
 * @return FLEET_OK, FLEET_ERR_NOMEM, or FLEET_ERR_INVAL for a text_only entry asked for YANG, or for YIN
 *         when its text did not parse apart from the context.
 * @param[out] text Malloc'd text; the caller frees it.
 */
enum fleet_err schema_module_text(const struct schema_module *m, LYS_OUTFORMAT format, char **text);

/**
 * @brief The module as YANG, XML-escaped for a get-schema reply, printed at load; read-only and shared by
 * every session and worker until schema_set_free() (sessions may queue it by reference).
 * @param[out] len Its length in bytes (may be NULL).
 */
const char *schema_module_yang_xml(const struct schema_module *m, size_t *len);

/**
 * @brief Whether data of @p module must be revalidated as a whole after an
 * edit: when its config nodes carry must, when, leafref, instance-identifier,
 * unique, or are the target of such references from other modules.
 */
int schema_module_needs_validation(const struct schema_set *set, const struct lys_module *module);

#endif
