/*
 * --export-snmprec: one device's whole SNMP view (live objects and
 * recorded ones) written as an snmpsim .snmprec recording.
 */
#ifndef FLEET_SNMPREC_EXPORT_H
#define FLEET_SNMPREC_EXPORT_H

#include <stdint.h>
#include <stdio.h>

#include "err.h"

struct device;

/**
 * @brief Walk device @p dev's whole view (live and recorded) at @p now_ms with GETNEXT from 0.0 and
 * print it as `.snmprec`. Call from the thread that owns the device (or before the workers start).
 * @return FLEET_OK; FLEET_ERR_NOMEM when the view cannot be built; FLEET_ERR_SYS when writing fails.
 */
enum fleet_err snmprec_export(struct device *dev, uint64_t now_ms, FILE *out);

#endif
