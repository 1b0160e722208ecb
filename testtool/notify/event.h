/*
 * One event, every channel (issue 29 item 2). Something that happens to a
 * device (a flap, a reboot, a configuration change, a refused login) is
 * reported on each channel the device pushes on: an SNMP trap, a NETCONF
 * notification to its subscribers, a syslog line to its group's sinks, each
 * with the event's id (event_id.h). This module sends an event's share on
 * the channels that have no other home for it (config change, refused
 * login, coldStart); it sits above the channels, and nothing below it
 * includes it (the NETCONF session layer numbers its events with
 * event_id.h alone).
 */
#ifndef FLEET_EVENT_H
#define FLEET_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "event_id.h"
#include "oid.h"

struct device;
struct sbuf;
struct trap_varbind;

/* What a refused login tried (the syslog line's and the log's wording). */
enum event_login {
    EVENT_LOGIN_SSH,  /* an SSH password or key the device refused */
    EVENT_LOGIN_SNMP, /* an SNMP request with an unknown community, v3 user or a wrong digest */
};

/**
 * @brief Send a notification of @p dev to every trap sink (no sink: nothing): @p trap_oid with @p varbinds,
 * then fleetsimEventId.0 = @p id. Runs on the device's worker.
 */
void event_send_trap(struct device *dev, const struct oid *trap_oid, const struct trap_varbind *varbinds,
                     size_t varbind_count, uint64_t id);

/**
 * @brief A login @p dev refused: a new event, authenticationFailure (SNMPv2-MIB) to every trap sink when
 * the device's snmpEnableAuthenTraps is enabled(1), and the catalog's "login-failure" line naming @p user
 * from @p peer (NULL: drawn, as for a background line). Runs on the device's worker.
 * @return The event's id.
 */
uint64_t event_login_refused(struct device *dev, enum event_login what, const char *user, const char *peer);

/**
 * @return 1 when @p dev's snmpEnableAuthenTraps.0 is enabled(1), 0 when disabled(2): what an SNMP SET
 * made it, else its type's default.
 */
int event_authen_traps_enabled(const struct device *dev);

/**
 * @brief Running of @p dev changed outside NETCONF and the control API (an SNMP SET): a new event,
 * netconf-config-change (changed by the server) to its subscribers and the catalog's config-commit line.
 * Runs on the device's worker. (A session's edit and the API's set build their own notification, with
 * the session or the edits in it, and the same id and line.)
 * @return The event's id.
 */
uint64_t event_config_changed(struct device *dev, uint64_t now_ms);

#endif
