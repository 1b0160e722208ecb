/*
 * The error record of an edit (RFC 6241 section 4.3 and appendix A: type,
 * tag, app-tag, path, message, error-info). The edit engine and the
 * validator report failures as these records, and so do the RPC handlers;
 * the model owns the record because an edit fails the same way whoever
 * asked for it. netconf/rpc.c prints a chain as <rpc-error> elements,
 * snmp/mib_set.c maps it to an error-status. One constructor per error-tag
 * keeps the tag, type and error-info right.
 */
#ifndef FLEET_EDIT_ERR_H
#define FLEET_EDIT_ERR_H

#include <stdint.h>

enum edit_err_type {
    EDIT_ERR_TRANSPORT, /* error-type transport */
    EDIT_ERR_RPC,       /* error-type rpc */
    EDIT_ERR_PROTOCOL,  /* error-type protocol */
    EDIT_ERR_APP,       /* error-type application */
};

struct edit_err {
    enum edit_err_type type; /* error-type */
    const char *tag;         /* error-tag, a static RFC 6241 appendix A string */
    char *app_tag;           /* error-app-tag or NULL, owned */
    char *path;              /* error-path (XPath with module-name prefixes) or NULL, owned */
    char *message;           /* error-message or NULL, owned */
    char *info_xml;          /* ready-made XML of the error-info children or NULL, owned */
    struct edit_err *next;   /* further errors of the same reply */
};

/** @brief Free a chain of errors. Accepts NULL. */
void edit_err_free(struct edit_err *err);

/** @brief Append @p err (a chain) to the chain at @p *list. */
void edit_err_append(struct edit_err **list, struct edit_err *err);

/** @return Number of errors in the chain. */
uint32_t edit_err_count(const struct edit_err *err);

/*
 * Constructors. Each returns a new record (NULL only when memory ran out);
 * string arguments are copied and may be NULL. @p fmt is the error-message.
 */
struct edit_err *edit_err_in_use(enum edit_err_type type, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
struct edit_err *edit_err_invalid_value(enum edit_err_type type, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
struct edit_err *edit_err_too_big(enum edit_err_type type, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
struct edit_err *edit_err_missing_attribute(enum edit_err_type type, const char *attr, const char *elem);
struct edit_err *edit_err_bad_attribute(enum edit_err_type type, const char *attr, const char *elem,
                                        const char *fmt, ...) __attribute__((format(printf, 4, 5)));
struct edit_err *edit_err_unknown_attribute(enum edit_err_type type, const char *attr, const char *elem);
struct edit_err *edit_err_missing_element(enum edit_err_type type, const char *elem, const char *path);
struct edit_err *edit_err_bad_element(enum edit_err_type type, const char *elem, const char *path,
                                      const char *fmt, ...) __attribute__((format(printf, 4, 5)));
struct edit_err *edit_err_unknown_element(enum edit_err_type type, const char *elem, const char *path);
struct edit_err *edit_err_unknown_namespace(enum edit_err_type type, const char *elem, const char *ns);
struct edit_err *edit_err_access_denied(enum edit_err_type type, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
struct edit_err *edit_err_lock_denied(uint32_t holder_session_id, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
struct edit_err *edit_err_resource_denied(enum edit_err_type type, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
struct edit_err *edit_err_data_exists(const char *path);
struct edit_err *edit_err_data_missing(const char *path, const char *app_tag, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
struct edit_err *edit_err_operation_not_supported(enum edit_err_type type, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
struct edit_err *edit_err_operation_failed(enum edit_err_type type, const char *app_tag, const char *path,
                                           const char *fmt, ...) __attribute__((format(printf, 4, 5)));
struct edit_err *edit_err_malformed_message(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** @return The RFC name of an error-type ("transport", "rpc", "protocol", "application"). */
const char *edit_err_type_name(enum edit_err_type type);

#endif
