/*
 * One event, every channel (issue 29 item 2). Something that happens to a
 * device (a flap, a reboot, a configuration change, a refused login) is
 * reported on each channel the device pushes on: an SNMP trap, a NETCONF
 * notification to its subscribers, a syslog line to its group's sinks. The
 * event gets one id, written in every channel's message, so a collector's
 * correlation can be checked: the trap's fleetsimEventId.0 varbind, the
 * notification's event-id leaf (module fleetsim-events), the syslog line's
 * eventId SD parameter (3164: event=N).
 *
 * The id is (the device's fleet index + 1) * 2^32 + the device's own event
 * count (1, 2, ...): unique across the fleet and across shards without any
 * shared counter, and the same event of the same device gets the same id
 * in another run of the same plan. 0 is never an id ("no event").
 */
#ifndef FLEET_EVENT_H
#define FLEET_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "oid.h"

struct device;
struct sbuf;
struct trap_varbind;

/* Room for an id in decimal and its NUL (2^64 - 1 has 20 digits). */
#define EVENT_ID_TEXT_BYTES 21
/* The XML namespace of the event-id leaf (schemas/fleetsim-events.yang). */
#define EVENT_YANG_NS "urn:fleetsim:events"

/* What a refused login tried (the syslog line's and the log's wording). */
enum event_login {
    EVENT_LOGIN_SSH,  /* an SSH password or key the device refused */
    EVENT_LOGIN_SNMP, /* an SNMP request with an unknown community, v3 user or a wrong digest */
};

/** @brief The OID of fleetsimEventId.0 (1.3.6.1.4.1.32473.1.1.0: see docs/ARCHITECTURE.md). */
extern const struct oid event_id_oid;

/**
 * @brief Take @p dev's next event id. Runs on the device's worker.
 * @return The id, never 0.
 */
uint64_t event_next_id(struct device *dev);

/**
 * @brief The varbind fleetsimEventId.0 = @p id_text (an OCTET STRING: the id in decimal, as the other
 * channels write it; a string, so a v1 trap can carry it too).
 * @param[in] id_text The id's text (event_id_text()); must outlive the varbind.
 */
void event_trap_varbind(const char *id_text, struct trap_varbind *vb);

/** @brief Write @p id in decimal into @p buf (at least EVENT_ID_TEXT_BYTES). @return @p buf. */
char *event_id_text(uint64_t id, char *buf, size_t buf_len);

/** @brief Append the notification leaf <event-id xmlns="urn:fleetsim:events">ID</event-id> to @p b. */
void event_add_leaf(struct sbuf *b, uint64_t id);

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
