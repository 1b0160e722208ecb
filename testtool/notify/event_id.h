/*
 * Event ids (issue 29 item 2, one event on every channel). Something that happens to a
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
#ifndef FLEET_EVENT_ID_H
#define FLEET_EVENT_ID_H

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

/**
 * @brief Append the notification leaves <event-id xmlns="urn:fleetsim:events">ID</event-id> and, when
 * @p run_tag is set (--run-tag; NULL or "": none), <run-tag>, XML-escaped, to @p b.
 */
void event_add_leaf(struct sbuf *b, uint64_t id, const char *run_tag);

#endif
