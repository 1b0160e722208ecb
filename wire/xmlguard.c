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

/* Nesting of parentheses and brackets the scan follows; deeper expressions are refused. */
#define XPATH_GUARD_MAX_DEPTH 64

/* Axes that reach beyond a node's own subtree and siblings: inside a predicate, each visits O(data) nodes
 * for every node the predicate is tried on. */
static int
xpath_far_axis(const char *name)
{
    static const char *const far[] = {"ancestor::",           "ancestor-or-self::", "descendant::",
                                      "descendant-or-self::", "preceding::",        "following::"};

    for (size_t i = 0; i < sizeof far / sizeof far[0]; i++) {
        if (!strncmp(name, far[i], strlen(far[i]))) {
            return 1;
        }
    }
    return 0;
}

const char *
xmlguard_xpath_unsafe(const char *xpath)
{
    const char *p = xpath;
    int after_operand = 0; /* the last token ends an operand: a name is an operator */
    unsigned comparisons[XPATH_GUARD_MAX_DEPTH + 1]; /* comparisons chained at each depth, since and/or/',' */
    char opened[XPATH_GUARD_MAX_DEPTH + 1];          /* '(' or '[' that opened each depth */
    unsigned depth = 0;
    unsigned predicates = 0; /* '[' among the open groups: > 0 inside a predicate */

    comparisons[0] = 0;
    while (*p) {
        unsigned char c = (unsigned char)*p;

        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
            p++;
        } else if (c == '\'' || c == '"') {
            const char *end = strchr(p + 1, c);
            if (!end) {
                return NULL; /* an unterminated literal: libyang refuses the expression before evaluating it
                              */
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
        } else if (c == '.') {
            p += p[1] == '.' ? 2 : 1;
            after_operand = 1;
        } else if (c == '(' || c == '[') {
            if (depth == XPATH_GUARD_MAX_DEPTH) {
                return "nesting deeper than 64";
            }
            comparisons[++depth] = 0;
            opened[depth] = (char)c;
            predicates += c == '[';
            p++;
            after_operand = 0;
        } else if (c == ')' || c == ']') {
            if (depth > 0) {
                predicates -= opened[depth] == '[';
                depth--;
            }
            p++;
            after_operand = 1;
        } else if (c == '*') {
            p++;
            after_operand = !after_operand; /* a name test, or multiplication after an operand */
        } else if (c == '=' || c == '<' || c == '>' || (c == '!' && p[1] == '=')) {
            /* A filter selects nodes; a comparison outside every predicate makes its result a boolean,
             * which libyang computes in full before the filter is refused (comparing every node with the root
             * compares it with the whole tree's string value: tens of seconds on one device). */
            if (!predicates) {
                return "a comparison outside a predicate (a filter's result must be a node set)";
            }
            /* libyang 2.1.30 leaks memory on a comparison whose left side is itself a comparison. */
            if (++comparisons[depth] > 1) {
                return "a comparison of a comparison (such as a = b = c)";
            }
            p += (p[1] == '=') ? 2 : 1;
            after_operand = 0;
        } else if (c == '/') {
            /* Inside a predicate, which runs once per candidate node, a path from the root or down every
             * descendant costs O(data) per node: O(data^2) per filter, tens of seconds on one crs-x device
             * with every other device of its worker waiting. */
            if (predicates && p[1] == '/') {
                return "the descendant path // inside a predicate";
            }
            if (predicates && !after_operand) {
                return "a path from the root inside a predicate";
            }
            p += p[1] == '/' ? 2 : 1;
            after_operand = 0;
        } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80) {
            if (after_operand && !strncmp(p, "mod", 3)) {
                return "the operator mod";
            }
            if (after_operand && (!strncmp(p, "and", 3) || !strncmp(p, "div", 3) || !strncmp(p, "or", 2))) {
                /* An operator, even with name characters after it, as libyang reads it. */
                comparisons[depth] = p[0] == 'd' ? comparisons[depth] : 0;
                p += p[0] == 'o' ? 2 : 3;
                after_operand = 0;
                continue;
            }
            if (predicates && xpath_far_axis(p)) {
                return "an ancestor, descendant, preceding or following axis inside a predicate";
            }
            while (xpath_name_byte((unsigned char)*p)) {
                p++;
            }
            if (p[-1] == ':' && *p == '*') {
                p++; /* "prefix:*" is one name test */
            }
            after_operand = 1;
        } else {
            if (c == ',') {
                comparisons[depth] = 0; /* the next argument of a function */
            }
            p++; /* '@', '|', '+', '-', '$' ... */
            after_operand = 0;
        }
    }
    return NULL;
}
