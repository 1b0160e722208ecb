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
 * @brief Whether the XPath expression @p xpath may hold the operator "mod".
 *
 * libyang 2.1.30 computes "a mod b" as a C integer remainder, so a divisor of
 * 0 (or -1 with the smallest dividend) raises SIGFPE and one filter from a
 * client would end the whole process (found by tests/fuzz/fuzz_filter.c).
 * Callers refuse such expressions. The scan follows XPath 1.0's rule for
 * operator names (3.7: after a token that ends an operand, a name is an
 * operator) and, like libyang's lexer, takes "mod" as the operator even when
 * more name characters follow ("*module" is "*", "mod", "ule"). Where the
 * scan and libyang could disagree it answers 1: a rare odd expression is
 * refused rather than a crash risked.
 *
 * @return 1 when "mod" may be an operator, else 0.
 */
int xmlguard_xpath_mod(const char *xpath);

#endif
