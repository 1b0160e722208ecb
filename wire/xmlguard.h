/*
 * Checks on peer XML and XPath before libyang parses them, for inputs the
 * libyang of Debian 12 (2.1.30) cannot take safely.
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

/**
 * @brief What in the XPath expression @p xpath libyang 2.1.30 cannot evaluate safely, if anything.
 *
 * Two defects and one cost, all found by tests/fuzz/fuzz_filter.c; one filter
 * from any client would hit them:
 * - "a mod b" is computed as a C integer remainder, so a divisor of 0 (or -1
 *   with the smallest dividend) raises SIGFPE and ends the process. The scan
 *   follows XPath 1.0's rule for operator names (3.7: after a token that ends
 *   an operand, a name is an operator) and, like libyang's lexer, takes "mod"
 *   as the operator even when more name characters follow ("*module" is "*",
 *   "mod", "ule").
 * - A comparison whose left side is itself a comparison ("a = b = c", "a > b
 *   > c") leaks memory on every evaluation. Two comparisons at one nesting
 *   level not separated by and, or or a function argument are refused.
 * And one cost: a predicate runs once per candidate node, and a string value
 * of a node near the root is the text of the whole tree beneath it, so a
 * predicate that reaches far makes one filter O(data^2) or worse (the filter
 * harness found comparisons of every node with the root, which held a
 * worker, and every device on it, for 48 s on one crs-x device). Refused: a comparison outside
 * every predicate (its result is a boolean, never the node set a filter
 * needs, and libyang computes it in full first); inside a predicate, a path
 * from the root, the descendant path "//", and the ancestor, descendant,
 * preceding and following axes. What stays allowed (relative paths, ".",
 * "..", siblings, functions) costs at most the node's neighbourhood per
 * node. Evaluating filters off the worker loop with a budget is the way out
 * if users need cross-tree predicates.
 * Where the scan and libyang could disagree it refuses: a rare odd expression
 * is turned away rather than a crash risked.
 *
 * @return NULL when the expression may be given to libyang, else a phrase naming what is refused.
 */
const char *xmlguard_xpath_unsafe(const char *xpath);

#endif
