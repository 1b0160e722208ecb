/*
 * A fast scan of one NETCONF <notification> (RFC 5277) for what a
 * subscriber counts: whether the message is a notification at all (root
 * element "notification" in the notification namespace), its eventTime,
 * whether it is one of RFC 5277's replayComplete / notificationComplete
 * markers, and optionally the integer text of the first element with a
 * given local name (a per-device sequence number). No tree is built: ten
 * thousand subscriptions must cost the client far less than the servers.
 * Framing (and reads split anywhere) is the frame decoder's business; this
 * sees whole messages only.
 */
#ifndef STRESS_NOTIF_SCAN_H
#define STRESS_NOTIF_SCAN_H

#include <stddef.h>
#include <stdint.h>

#define NSCAN_NOTIF_NS "urn:ietf:params:xml:ns:netconf:notification:1.0"
/* Longest eventTime kept (RFC 3339 with nanoseconds and an offset is 35 bytes); longer ones are cut. */
#define NSCAN_TIME_MAX_BYTES 40

enum nscan_kind {
    NSCAN_DATA,                  /* an event notification */
    NSCAN_REPLAY_COMPLETE,       /* RFC 5277 replayComplete */
    NSCAN_NOTIFICATION_COMPLETE, /* RFC 5277 notificationComplete: the subscription has ended */
    NSCAN_OTHER,                 /* not a notification (an rpc-reply, another namespace, malformed) */
};

struct nscan_info {
    enum nscan_kind kind;                  /* what the message is */
    char event_time[NSCAN_TIME_MAX_BYTES]; /* eventTime text, trimmed; "" when absent */
    int has_seq;                           /* 1 when the sequence element was found with an integer */
    uint64_t seq;                          /* its value; valid with has_seq */
};

/**
 * @brief Scan one whole message.
 * @param[in] xml The message (need not be NUL-terminated).
 * @param[in] len Its length.
 * @param[in] seq_name Local name of the sequence-number element, or NULL to look for none. The first
 *            element of that name counts; when its text is not an unsigned decimal integer (surrounding
 *            whitespace allowed) has_seq stays 0.
 * @param[out] info What was found.
 * @return info->kind.
 */
enum nscan_kind nscan_scan(const char *xml, size_t len, const char *seq_name, struct nscan_info *info);

#endif
