/*
 * Dynamic subscriptions (RFC 8639 subscribed notifications over NETCONF, RFC 8640; YANG-Push, RFC 8641).
 * A subscription belongs to one session and ends with it. It is a small record: a periodic one sits on
 * its worker's timer wheel (common/wheel.h), an on-change one waits for its device's data to change
 * (yp_data_changed()), a stream one is fed by the device's notification stream (stream.c). No thread, no
 * timer of its own.
 *
 * Files: yp_sub.c (the records, their lifecycle, sending, suspend and resume, the subscription-* state
 * notifications), yp_periodic.c (push-update on the wheel), yp_onchange.c and yp_patch.c (push-change-update
 * with a yang-patch), yp_stream.c (subscriptions to the NETCONF event stream), netconf/ops_push.c (the RPCs).
 */
#ifndef FLEET_YP_H
#define FLEET_YP_H

#include <stddef.h>
#include <stdint.h>

#include <libyang/libyang.h>

#include "device.h"
#include "edit_err.h"
#include "sbuf.h"
#include "wheel.h"

struct session;
struct rpc_call;

/* Namespaces of the two modules, for the notifications this subsystem writes. */
#define YP_SN_NS "urn:ietf:params:xml:ns:yang:ietf-subscribed-notifications"
#define YP_YP_NS "urn:ietf:params:xml:ns:yang:ietf-yang-push"

/* What a subscription is to. */
enum yp_target {
    YP_TARGET_STREAM = 0,  /* the NETCONF event stream (RFC 8639) */
    YP_TARGET_RUNNING,     /* ietf-datastores:running (RFC 8641) */
    YP_TARGET_OPERATIONAL, /* ietf-datastores:operational (RFC 8641) */
};

/* How a datastore subscription pushes; a stream subscription is YP_UPDATE_EVENTS. */
enum yp_update {
    YP_UPDATE_EVENTS = 0, /* event notifications of the stream */
    YP_UPDATE_PERIODIC,   /* push-update every period from anchor-time */
    YP_UPDATE_ON_CHANGE,  /* push-change-update after each change (dampened) */
};

enum yp_state {
    YP_STATE_ACTIVE = 0, /* pushing */
    YP_STATE_SUSPENDED,  /* the session's output backed up (insufficient-resources): nothing is queued */
};

/* excluded-change bits (RFC 8641 change-type), for on-change. */
#define YP_CHANGE_CREATE  0x01u
#define YP_CHANGE_DELETE  0x02u
#define YP_CHANGE_INSERT  0x04u
#define YP_CHANGE_MOVE    0x08u
#define YP_CHANGE_REPLACE 0x10u

/* A selection filter, shared: subscriptions with the same filter text on one worker hold one copy. */
struct yp_filter {
    struct lyd_node *subtree; /* subtree filter content (top-level siblings), or NULL */
    char *xpath; /* XPath with module names as prefixes (ops_xpath_to_module_prefixes()), or NULL */
    const struct ly_ctx *ctx; /* context the subtree's nodes belong to (sharing is per context) */
    uint64_t hash;            /* of the filter's text, to share it */
    uint32_t refs;            /* subscriptions holding it */
    struct yp_filter *next;   /* the worker's list of shared filters */
};

/* What one subscription sent, for the report and the client's reconciliation. */
struct yp_counts {
    uint64_t updates;        /* push-update notifications queued (periodic, sync-on-start, resync) */
    uint64_t change_updates; /* push-change-update notifications queued */
    uint64_t events;         /* stream subscriptions: event notifications queued */
    uint64_t missed_slots;   /* periodic slots skipped (suspended, or the worker fell a period behind) */
    uint64_t suppressed;     /* stream subscriptions: events its filter left out */
    uint32_t suspensions;    /* times it was suspended for insufficient-resources */
};

/* On-change state; yp_onchange.c owns it. */
struct yp_onchange;

/* One dynamic subscription. */
struct yp_sub {
    struct yp_sub *next;      /* the session's subscriptions, newest first */
    struct session *sess;     /* the session that established it; it dies with it */
    uint32_t id;              /* subscription id, unique on the device's worker (so on the device) */
    uint8_t target;           /* enum yp_target */
    uint8_t update;           /* enum yp_update */
    uint8_t state;            /* enum yp_state */
    uint8_t excluded;         /* on-change: YP_CHANGE_* bits not reported */
    uint8_t sync_on_start;    /* on-change: push-update first */
    uint8_t replay;           /* stream: replay-start-time was given */
    struct yp_filter *filter; /* selection, shared; NULL: everything */
    uint64_t stop_ms;         /* stop-time (fleet clock, ms since the epoch), 0: none */
    uint64_t anchor_ms;       /* periodic: anchor-time (fleet clock), the slots are anchor + k x period */
    uint32_t period_cs;       /* periodic: period in centiseconds (RFC 8641) */
    uint32_t dampening_cs;    /* on-change: dampening-period in centiseconds */
    uint64_t next_slot;       /* periodic: k of the next slot */
    uint64_t replay_start_ms; /* stream: replay-start-time (fleet clock), valid when replay */
    uint64_t replay_from_ms;  /* stream: set by yp_stream_check when the log starts later than asked: the
                               * actual start, the reply's replay-start-time-revision; 0: none */
    struct wheel_entry tick;  /* periodic: the next slot; on-change: the dampening period's end */
    struct yp_onchange *oc;   /* on-change: snapshot and pending changes; NULL otherwise */
    struct yp_counts counts;  /* what it sent */
};

/**
 * @brief Queue one notification (a whole <notification> element, no framing) for the subscription's
 * session. When the session's output is above its high water mark the subscription is suspended instead
 * (subscription-suspended, insufficient-resources; counted) and resumed once the output drained.
 * @return 0 when queued, -1 when not (suspended, or the session is closing).
 */
int yp_send(struct yp_sub *sub, const char *xml, size_t len);

/**
 * @brief The subscription's selection of its datastore at this instant: the filtered running tree, or
 * the filtered operational view (running merged with the device's state, as get shows it).
 * @param[out] tree New tree (top-level siblings, NULL when nothing is selected); the caller frees it.
 */
enum fleet_err yp_view(struct yp_sub *sub, struct lyd_node **tree);

/** @brief Find a subscription of @p dev by id (any session of the device), or NULL. */
struct yp_sub *yp_find(struct device *dev, uint32_t id);

/** @brief End a subscription: subscription-terminated with @p reason (an identity, "module:name") unless
 * NULL, then free it. */
void yp_end(struct yp_sub *sub, const char *reason);

/** @brief The session ends: free its subscriptions without any notification. */
void yp_session_closed(struct session *s);

/* ---- records (yp_sub.c), for ops_push.c and the worker ---- */

/* Above this much unsent output on its session a subscription is suspended (insufficient-resources):
 * a slow reader holds at most this much of our memory per session, plus one update. */
#define YP_SUSPEND_BYTES (1024u * 1024u)
/* A suspended subscription resumes once its session's unsent output fell below this. */
#define YP_RESUME_BYTES (256u * 1024u)

/**
 * @brief A new subscription record of session @p s with a fresh id (unique on the worker), not yet on the
 * session's list (yp_sub_link()) nor scheduled. @return NULL when out of memory.
 */
struct yp_sub *yp_sub_new(struct session *s);

/** @brief Put @p sub on its session's list: from now on it is found, and it ends with the session. */
void yp_sub_link(struct yp_sub *sub);

/** @brief Free a record that was never linked (establish-subscription refused it). Accepts NULL. */
void yp_sub_free(struct yp_sub *sub);

/**
 * @brief Give @p sub its selection: a subtree filter (top-level siblings, copied) or an XPath with module
 * names as prefixes (copied), or neither (everything). The worker shares equal filters.
 * @return FLEET_OK or FLEET_ERR_NOMEM (the old filter is then kept).
 */
enum fleet_err yp_sub_set_filter(struct yp_sub *sub, const struct lyd_node *subtree, const char *xpath);

/**
 * @brief Queue one of the subscription state notifications (subscription-modified, -completed,
 * -suspended, -resumed, -terminated) with @p body after <id> (e.g. "<reason ...>...</reason>", or NULL).
 * It bypasses suspension: the subscriber must learn of the state change.
 */
void yp_send_state(struct yp_sub *sub, const char *what, const char *body, uint64_t event_ms);

/** @brief A suspended subscription whose session drained below YP_RESUME_BYTES resumes
 * (subscription-resumed). @return 1 when it is active (again), 0 when it stays suspended. */
int yp_try_resume(struct yp_sub *sub, uint64_t now_ms);

/** @brief The worker's wheel callback (wheel_new()): a periodic slot or an on-change dampening period. */
void yp_wheel_due(struct wheel *w, struct wheel_entry *e, void *data);

/** @brief Free the worker's shared filters (shutdown, after every session closed); log the lateness of its
 * periodic updates (at info level) when it sent any. */
void yp_worker_close(struct worker *w);

/* ---- periodic (yp_periodic.c) ---- */

/* The smallest period accepted (centiseconds): below it, period-unsupported. 10 cs = 100 ms keeps a
 * subscriber from asking a device for more than ten full updates a second. */
#define YP_PERIOD_MIN_CS 10u

/**
 * @brief The index of the first slot (anchor + k x period) at or after @p now_ms. Slots before the anchor
 * count too (RFC 8641: the anchor may be in the past or the future): k may be negative then.
 */
int64_t yp_slot_at_or_after(uint64_t anchor_ms, uint64_t period_ms, uint64_t now_ms);

/** @brief Schedule the first slot of a periodic subscription (after the reply was queued, or modified). */
void yp_periodic_start(struct yp_sub *sub);

/** @brief A slot came (its wheel entry fired): push-update with the slot as eventTime, schedule the next. */
void yp_periodic_due(struct yp_sub *sub);

/**
 * @brief Append the push-update notification of @p sub at @p event_ms to @p out: the selection printed as
 * get prints it (the text path when the filter allows, as get).
 * @return FLEET_OK, or an error (the content is then not to be sent).
 */
enum fleet_err yp_print_update(struct yp_sub *sub, uint64_t event_ms, struct sbuf *out);

/* ---- on-change (yp_onchange.c) ---- */

/**
 * @brief Before establish-subscription (or modify-subscription) answers: check that an on-change
 * selection has no node that changes every instant (counters, gauges, clocks: on-change-unsupported unless
 * the filter leaves them out) and that excluded-change can be honoured (cant-exclude otherwise).
 * @return NULL, or the error to answer with (the subscription is then not created).
 */
struct edit_err *yp_onchange_check(struct yp_sub *sub);

/** @brief After the ok is queued: take the first snapshot and push it when sync-on-start. */
void yp_onchange_start(struct yp_sub *sub);

/** @brief Free the on-change state of @p sub (its wheel entry is stopped by the caller). */
void yp_onchange_stop(struct yp_sub *sub);

/** @brief resync-subscription of an on-change subscription: a push-update of the whole selection now. */
void yp_onchange_resync(struct yp_sub *sub);

/** @brief The dampening period of @p sub ended (its wheel entry fired): push what changed meanwhile. */
void yp_onchange_due(struct yp_sub *sub);

/**
 * @brief The device's data changed (running written by any session, the control API's set, an SNMP SET,
 * an interface's oper-status, a reboot): every on-change subscription of the device looks for its changes.
 * O(1) when the device has none.
 */
void yp_data_changed(struct device *dev);

/* ---- stream subscriptions (yp_stream.c) ---- */

/**
 * @brief Before establish-subscription answers: check a stream subscription (the stream exists, the
 * replay-start-time can be served, the filter is valid).
 * @return NULL, or the error to answer with.
 */
struct edit_err *yp_stream_check(struct yp_sub *sub);

/** @brief After the reply is queued: replay from replay_start_ms when asked (then replay-completed), then
 * join the device's stream. */
void yp_stream_start(struct yp_sub *sub);

/** @brief The stop-time of a stream subscription came (its wheel entry fired): subscription-completed, and
 * it ends (freed). */
void yp_stream_due(struct yp_sub *sub);

/**
 * @brief Before establish-subscription answers: the stream asked for exists (every device has NETCONF;
 * events such as netconf-config-change and if-state-change are on it).
 * @return NULL, or the error to answer with (stream-unavailable).
 */
struct edit_err *yp_stream_name_check(const char *stream);

/** @brief Leave the device's stream (called once when the subscription ends, however it ends). */
void yp_stream_stop(struct yp_sub *sub);

#endif
