/*
 * "fleetsim-stress record": read one NETCONF server (and optionally its SNMP
 * agent) into a recorded device type folder, the format of
 * docs/RECORDED_TYPES.md, which fleetsim --device-type serves.
 */
#ifndef STRESS_RECORD_H
#define STRESS_RECORD_H

#include "options.h"

/* Folder files, named as docs/RECORDED_TYPES.md names them. */
#define RECORD_MANIFEST "manifest.json"
#define RECORD_SNMPREC  "snmp.snmprec"

/**
 * @brief Record the server at --ip/--port into --out (record.c).
 * @return 0 when the folder is complete (servable; problems that do not prevent it are listed in the
 * manifest and on stderr), 1 when it is not or the record stopped (the manifest of what was got is still
 * written), 2 when the folder cannot be created, 130 or 143 when interrupted.
 */
int record_run(const struct stress_options *opts);

#endif
