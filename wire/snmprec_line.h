/*
 * snmpsim's `.snmprec` format, one line per variable: `OID|TAG|VALUE`.
 * Printable OCTET STRINGs as text, other strings as `4x|hex`, IpAddress
 * dotted, numbers in decimal. Written by fleetsim's recording export and
 * by fleetsim-stress record; read by testtool/snmp/recording.c.
 */
#ifndef FLEET_SNMPREC_LINE_H
#define FLEET_SNMPREC_LINE_H

#include <stdio.h>

#include "ber.h"
#include "err.h"
#include "spdu.h"

/**
 * @brief Print one variable as a `.snmprec` line: `OID|TAG|VALUE`, strings that are not printable
 * ASCII as `4x|hex`. @return FLEET_OK, or FLEET_ERR_INVAL for a type `.snmprec` cannot hold (a `5|` line
 * is printed for it).
 */
enum fleet_err snmprec_print_line(FILE *out, const struct oid *name, const struct spdu_value *value);

#endif
