/*
 * The pure part of "fleetsim-stress push": a fast scan of one YANG-Push
 * message (RFC 8639 subscribed notifications, RFC 8641 push-update and
 * push-change-update) for what a subscriber counts, the reply of
 * establish-subscription (its id), RFC 3339 times into microseconds since
 * the epoch, and the slot arithmetic of a periodic subscription (slots are
 * anchor + k x period; eventTime names the slot): updates, missed and
 * duplicated slots. No tree is built: ten thousand subscriptions must cost
 * the client far less than the servers. Whole messages only (the frame
 * decoder hands them NUL-terminated).
 */
#ifndef STRESS_PUSH_SCAN_H
#define STRESS_PUSH_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "sbuf.h"

#define PSCAN_SN_NS "urn:ietf:params:xml:ns:yang:ietf-subscribed-notifications"
#define PSCAN_YP_NS "urn:ietf:params:xml:ns:yang:ietf-yang-push"
/* The text the on-change editor writes in the watched leaf, followed by the edit's sequence number. */
#define PSCAN_SEQ_MARK "fleetsim-stress-seq:"
/* Longest eventTime kept (RFC 3339 with nanoseconds and an offset is 35 bytes). */
#define PSCAN_TIME_MAX_BYTES 40
/* Longest reason identity kept ("ietf-subscribed-notifications:insufficient-resources" is 52). */
#define PSCAN_REASON_MAX_BYTES 96

enum pscan_kind {
    PSCAN_PUSH_UPDATE,        /* ietf-yang-push:push-update */
    PSCAN_PUSH_CHANGE_UPDATE, /* ietf-yang-push:push-change-update */
    PSCAN_STARTED,            /* subscription-started (configured subscriptions only; counted anyway) */
    PSCAN_MODIFIED,           /* subscription-modified */
    PSCAN_TERMINATED,         /* subscription-terminated: the subscription is gone */
    PSCAN_SUSPENDED,          /* subscription-suspended */
    PSCAN_RESUMED,            /* subscription-resumed */
    PSCAN_COMPLETED,          /* subscription-completed (stop-time reached) */
    PSCAN_REPLAY_COMPLETED,   /* replay-completed */
    PSCAN_EVENT,              /* any other notification: an event of a stream subscription */
    PSCAN_KIND_COUNT,
    PSCAN_OTHER = PSCAN_KIND_COUNT, /* not a notification (an rpc-reply, malformed) */
};

struct pscan_info {
    enum pscan_kind kind;                  /* what the message is */
    char event_time[PSCAN_TIME_MAX_BYTES]; /* eventTime text, trimmed; "" when absent or too long */
    int has_time;                          /* 1 when event_time parsed as RFC 3339 */
    int64_t event_us;                      /* it, microseconds since the epoch; valid with has_time */
    int has_id;                            /* 1 when the kind's <id> was found with a 32-bit integer */
    uint32_t id;                           /* subscription id; valid with has_id */
    char reason[PSCAN_REASON_MAX_BYTES];   /* <reason> text (terminated, suspended), "" when absent */
    int has_seq;                           /* 1 when PSCAN_SEQ_MARK followed by digits was found */
    uint64_t seq;                          /* the largest such number in the message; valid with has_seq */
};

/**
 * @brief Scan one whole message.
 * @param[in] xml The message, NUL-terminated at @p len.
 * @param[in] len Its length.
 * @param[in] want_seq 1: look for PSCAN_SEQ_MARK in push-change-update and push-update (costs a pass over
 *            the message), 0: do not.
 * @param[out] info What was found.
 * @return info->kind.
 */
enum pscan_kind pscan_scan(const char *xml, size_t len, int want_seq, struct pscan_info *info);

/** @return The name of @p kind as the RFCs write it ("push-update"), "other" for PSCAN_OTHER. */
const char *pscan_kind_name(enum pscan_kind kind);

/**
 * @brief The <id> of establish-subscription's rpc-reply (RFC 8639 section 2.4.2).
 * @param[in] xml The rpc-reply, NUL-terminated.
 * @param[out] id The subscription id.
 * @return 0, or -1 when the reply holds no integer <id> in the subscribed-notifications namespace.
 */
int pscan_reply_id(const char *xml, uint32_t *id);

/**
 * @brief An RFC 3339 date-time ("2026-12-07T22:20:20.123456Z", "...+01:00") as microseconds since the
 * epoch; digits past microseconds are cut.
 * @return 0, or -1 when @p text is not one.
 */
int pscan_time_us(const char *text, int64_t *us);

/** @brief Write @p us (microseconds since the epoch) as RFC 3339 UTC with microseconds into @p buf. */
void pscan_time_text(int64_t us, char *buf, size_t len);

/**
 * @brief The namespace declarations an XPath filter with module names as prefixes needs in XML (RFC 8639's
 * filters are yang:xpath1.0, whose prefixes are XML prefixes): ` xmlns:ietf-interfaces="urn:ietf:params:xml:
 * ns:yang:ietf-interfaces"` for each prefix once. Only ietf-* and iana-* modules have namespaces derived from
 * their names (RFC 6020 section 14's IANA registrations); quoted literals and the axis "::" are skipped.
 * @param[out] out Appended to.
 * @param[out] bad The first prefix whose namespace is not known, "" when none.
 * @return 0, or -1 when a prefix is not known (bad names it).
 */
int pscan_xpath_ns_decls(const char *xpath, struct sbuf *out, char *bad, size_t bad_len);

/* Slots of one periodic subscription, as the updates' eventTimes name them. */
struct pslots {
    int64_t anchor_us;   /* slot 0, us since the epoch; valid with anchored */
    uint64_t period_us;  /* the period, > 0 */
    int anchored;        /* 1 once anchor_us is known (given, or the first update's eventTime) */
    int started;         /* 1 once an update was counted */
    uint64_t first_k;    /* the first slot seen; valid with started */
    uint64_t last_k;     /* the highest slot seen; valid with started */
    uint64_t seen_bits;  /* bit i: slot last_k - i was seen (a window of 64 slots for late ones) */
    uint64_t updates;    /* updates counted */
    uint64_t missed;     /* slots between first_k and last_k (and up to the end) without an update */
    uint64_t duplicates; /* updates for a slot already seen */
    uint64_t late;       /* updates of a slot counted missed before (out of order: missed was taken back) */
    uint64_t early;      /* updates named before the anchor (not counted in any slot) */
};

enum pslot_verdict {
    PSLOT_NEXT,      /* the slot after the last one seen (or the first) */
    PSLOT_GAP,       /* a later slot: the ones between were missed */
    PSLOT_DUPLICATE, /* a slot already seen */
    PSLOT_LATE,      /* an earlier slot not seen yet (it had been counted missed) */
    PSLOT_EARLY,     /* before the anchor */
};

/** @brief Start slot tracking of @p period_us (> 0) from @p anchor_us, or from the first update when
 * @p anchored is 0. */
void pslots_init(struct pslots *s, uint64_t period_us, int anchored, int64_t anchor_us);

/**
 * @brief Count one update whose eventTime is @p event_us.
 * @param[out] k Its slot (the nearest one).
 * @param[out] offset_us eventTime minus the slot's time (0 when eventTime is the slot).
 * @return What the update was to the slots seen.
 */
enum pslot_verdict pslots_add(struct pslots *s, int64_t event_us, uint64_t *k, int64_t *offset_us);

/**
 * @brief The run ended at @p end_us: slots after the last one seen whose time is at least @p grace_us before
 * @p end_us are counted missed.
 * @return How many were added to missed.
 */
uint64_t pslots_finish(struct pslots *s, int64_t end_us, uint64_t grace_us);

/** @return The time of slot @p k (us since the epoch); s must be anchored. */
int64_t pslots_slot_us(const struct pslots *s, uint64_t k);

#endif
