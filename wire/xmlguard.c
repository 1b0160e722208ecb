/*
 * Textual pre-checks of peer XML and XPath; see xmlguard.h for why they exist.
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

/* A byte of an XPath name (NCName, prefix and axis separators included); any non-ASCII byte counts. */
static int
xpath_name_byte(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.' || c == ':' || c >= 0x80;
}

static int
xpath_digit(char c)
{
    return c >= '0' && c <= '9';
}

int
xmlguard_xpath_mod(const char *xpath)
{
    const char *p = xpath;
    int after_operand = 0; /* the last token ends an operand: a name here is an operator */

    while (*p) {
        unsigned char c = (unsigned char)*p;

        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
            p++;
        } else if (c == '\'' || c == '"') {
            const char *end = strchr(p + 1, c);
            if (!end) {
                return 0; /* an unterminated literal: libyang refuses the expression before evaluating it */
            }
            p = end + 1;
            after_operand = 1;
        } else if (xpath_digit((char)c) || (c == '.' && xpath_digit(p[1]))) {
            p += strspn(p, "0123456789");
            if (*p == '.') {
                p++;
                p += strspn(p, "0123456789");
            }
            after_operand = 1;
        } else if (c == '.' || c == ')' || c == ']') {
            p += (c == '.' && p[1] == '.') ? 2 : 1;
            after_operand = 1;
        } else if (c == '*') {
            p++;
            after_operand = !after_operand; /* a name test, or multiplication after an operand */
        } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80) {
            if (after_operand && !strncmp(p, "mod", 3)) {
                return 1;
            }
            if (after_operand && (!strncmp(p, "and", 3) || !strncmp(p, "div", 3) || !strncmp(p, "or", 2))) {
                /* An operator, even with name characters after it, as libyang reads it. */
                p += p[0] == 'o' ? 2 : 3;
                after_operand = 0;
                continue;
            }
            while (xpath_name_byte((unsigned char)*p)) {
                p++;
            }
            if (p[-1] == ':' && *p == '*') {
                p++; /* "prefix:*" is one name test */
            }
            after_operand = 1;
        } else {
            p++; /* '/', '(', '[', '@', ',', '|', '+', '-', '=', '!', '<', '>', '$' ... */
            after_operand = 0;
        }
    }
    return 0;
}
