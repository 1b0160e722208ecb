/*
 * The smallest pieces of a textual XML scan, shared by the scanners that
 * read a request before (or instead of) libyang: the edit-config fast path
 * and the custom-reply matcher.
 */
#ifndef FLEET_XMLSCAN_H
#define FLEET_XMLSCAN_H

/* XML whitespace (the S production): space, tab, carriage return, line feed. */
static inline int
xmlscan_is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/*
 * Skips whitespace, comments and processing instructions (the XML
 * declaration among them) before or between tags.
 * @return The first other character, or NULL when a comment or instruction is not closed.
 */
const char *xmlscan_skip_misc(const char *p);

#endif
