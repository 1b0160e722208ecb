/*
 * Textual pre-checks of peer XML; see xmlguard.h for why they exist.
 */
#include "xmlguard.h"

#include <string.h>

int
xmlguard_empty_namespace(const char *xml)
{
    const char *p = xml;
    int found = 0;

    while (!found && (p = strstr(p, "xmlns"))) {
        p += sizeof "xmlns" - 1;
        if (*p == ':') {
            /* Skip the prefix; anything up to whitespace or '=' will do for this check. */
            p += strcspn(p, " \t\r\n=<>");
        }
        p += strspn(p, " \t\r\n");
        if (*p != '=') {
            continue;
        }
        p++;
        p += strspn(p, " \t\r\n");
        found = (p[0] == '"' || p[0] == '\'') && p[1] == p[0];
    }
    return found;
}
