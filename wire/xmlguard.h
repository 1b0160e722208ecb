/*
 * Checks on peer XML before libyang parses it, for inputs the libyang of
 * Debian 12 (2.1.30) cannot take safely.
 */
#ifndef FLEET_XMLGUARD_H
#define FLEET_XMLGUARD_H

/**
 * @brief Whether @p xml declares a namespace with an empty value (xmlns="" or xmlns:p='').
 *
 * libyang before 2.2.8 (CESNET/libyang#2181) stores an opaque node without a
 * namespace for such an element and dereferences that NULL as soon as a
 * same-named sibling follows: one message would crash the whole process.
 * Callers refuse these messages before libyang sees them. The scan is textual
 * and may also catch the sequence inside text content. Remove once the
 * minimum libyang version carries the fix.
 *
 * @return 1 when such a declaration is present, else 0.
 */
int xmlguard_empty_namespace(const char *xml);

#endif
