/*
 * NETCONF rpc-error records (RFC 6241 section 4.3 and appendix A). The edit
 * engine, the validator and the RPC handlers all report protocol errors as
 * these records; the reply printer turns them into <rpc-error> elements.
 * One constructor per error-tag keeps the tag, type and error-info right.
 */
#ifndef FLEET_NCERR_H
#define FLEET_NCERR_H

#include <stdint.h>

enum ncerr_type {
    NCERR_TRANSPORT, /* error-type transport */
    NCERR_RPC,       /* error-type rpc */
    NCERR_PROTOCOL,  /* error-type protocol */
    NCERR_APP,       /* error-type application */
};

struct ncerr {
    enum ncerr_type type; /* error-type */
    const char *tag;      /* error-tag, a static RFC 6241 appendix A string */
    char *app_tag;        /* error-app-tag or NULL, owned */
    char *path;           /* error-path (XPath with module-name prefixes) or NULL, owned */
    char *message;        /* error-message or NULL, owned */
    char *info_xml;       /* ready-made XML of the error-info children or NULL, owned */
    struct ncerr *next;   /* further errors of the same reply */
};

/** @brief Free a chain of errors. Accepts NULL. */
void ncerr_free(struct ncerr *err);

/** @brief Append @p err (a chain) to the chain at @p *list. */
void ncerr_append(struct ncerr **list, struct ncerr *err);

/** @return Number of errors in the chain. */
uint32_t ncerr_count(const struct ncerr *err);

/*
 * Constructors. Each returns a new record (NULL only when memory ran out);
 * string arguments are copied and may be NULL. @p fmt is the error-message.
 */
struct ncerr *ncerr_in_use(enum ncerr_type type, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
struct ncerr *ncerr_invalid_value(enum ncerr_type type, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
struct ncerr *ncerr_too_big(enum ncerr_type type, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
struct ncerr *ncerr_missing_attribute(enum ncerr_type type, const char *attr, const char *elem);
struct ncerr *ncerr_bad_attribute(enum ncerr_type type, const char *attr, const char *elem, const char *fmt,
                                  ...) __attribute__((format(printf, 4, 5)));
struct ncerr *ncerr_unknown_attribute(enum ncerr_type type, const char *attr, const char *elem);
struct ncerr *ncerr_missing_element(enum ncerr_type type, const char *elem, const char *path);
struct ncerr *ncerr_bad_element(enum ncerr_type type, const char *elem, const char *path, const char *fmt,
                                ...) __attribute__((format(printf, 4, 5)));
struct ncerr *ncerr_unknown_element(enum ncerr_type type, const char *elem, const char *path);
struct ncerr *ncerr_unknown_namespace(enum ncerr_type type, const char *elem, const char *ns);
struct ncerr *ncerr_access_denied(enum ncerr_type type, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
struct ncerr *ncerr_lock_denied(uint32_t holder_session_id, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
struct ncerr *ncerr_resource_denied(enum ncerr_type type, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
struct ncerr *ncerr_data_exists(const char *path);
struct ncerr *ncerr_data_missing(const char *path, const char *app_tag, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
struct ncerr *ncerr_operation_not_supported(enum ncerr_type type, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
struct ncerr *ncerr_operation_failed(enum ncerr_type type, const char *app_tag, const char *path,
                                     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
struct ncerr *ncerr_malformed_message(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** @return The RFC name of an error-type ("transport", "rpc", "protocol", "application"). */
const char *ncerr_type_name(enum ncerr_type type);

#endif
