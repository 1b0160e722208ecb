/*
 * A device's notification stream: paced by a loop timer following the rate
 * profile in force (rate_profile.h: --notification-rate, the control API's
 * notification-rate, else the file's own rate; arrival k computed from k,
 * never "now + period", so nothing drifts), fanned out to the device's subscribed
 * sessions in order, kept in a bounded replay log, and counted per
 * subscriber so that emitted = sent + send_failures + dropped + suppressed
 * always holds. A device starts streaming at its first subscription and
 * pauses when its last subscriber leaves.
 *
 * Besides the sessions' RFC 5277 subscriptions, a stream feeds taps: other
 * subscribers (RFC 8639 stream subscriptions, testtool/push/yp_stream.c)
 * that receive every event in the same order and count into one ledger row
 * of the device. The stream depends on no tap's code: a tap is a function
 * and its owner.
 */
#ifndef FLEET_STREAM_H
#define FLEET_STREAM_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include <libyang/libyang.h>

#include "device.h"
#include "err.h"
#include "loop.h"
#include "rate_profile.h"

struct device;
struct session;

/* Most bytes a subscriber may have waiting; a notification that would pass it is dropped and counted. */
#define STREAM_SUBSCRIBER_QUEUE_MAX_BYTES (8u * 1024u * 1024u)
/* Most notifications one tick sends for one device when it is behind (the rest wait for the next tick). */
#define STREAM_MAX_BURST 4096u
/* Most notifications one worker generates in one loop pass, over all its devices. */
#define STREAM_WORKER_PASS_BUDGET 16384u
/* How far behind a device may fall before the ticks it missed are given up (and counted as behind). */
#define STREAM_MAX_LAG_US 1000000u
/* While the streams are paused (SIGUSR2), each stream looks again this often. */
#define STREAM_PAUSE_POLL_US 100000u
/* Default size of a device's replay log (notifications), --replay-log: small, since every streaming device
 * keeps one (30,000 devices times 16 notifications of 500 bytes is 240 MB). */
#define STREAM_DEFAULT_REPLAY_ENTRIES 16u

/* Ended subscriptions a device keeps a row for in the report (later ones are summed into the device's). */
#define STREAM_ENDED_ROWS 16u

/* The report row of a subscription that ended. */
struct notif_ended {
    uint32_t session;           /* its session-id */
    struct sockaddr_in6 peer;   /* client address and port (an IPv4 one as a sockaddr_in at its start) */
    struct notif_counts counts; /* its counts when it ended */
};

/* A session's subscription (RFC 5277 create-subscription). */
struct notif_sub {
    struct lyd_node *filter;    /* subtree filter spec, owned, or NULL */
    char *xpath;                /* XPath filter with module prefixes, owned, or NULL */
    uint64_t stop_ms;           /* stopTime (fleet clock), 0: none */
    struct notif_counts counts; /* this subscriber's row */
    uint8_t done;               /* 1 after notificationComplete: nothing more is sent */
};

/* One event being offered to the subscribers; its parsed tree is made on the first demand and shared. */
struct stream_event {
    const char *xml;           /* the whole <notification> element */
    size_t len;                /* bytes of xml */
    uint64_t event_ms;         /* its eventTime (fleet clock) */
    const struct device *dev;  /* whose schemas parse it */
    struct lyd_node *tree;     /* the notification's content, once parsed; NULL before or when unparsable */
    struct lyd_node *envelope; /* the parse's envelope, freed with tree */
    uint8_t parsed;            /* 1 once a parse was tried */
};

/* A tap's handler: @p owner is what stream_tap_add() was given. It may end its own tap (stream_tap_remove)
 * but no other. */
typedef void (*stream_tap_fn)(void *owner, struct stream_event *ev);

/* A subscriber that is not a session's RFC 5277 subscription. */
struct stream_tap {
    stream_tap_fn offer; /* called for each event; NULL once removed during an offering */
    void *owner;         /* its argument */
};

/* A device's stream state; allocated at its first subscription. */
struct notif_stream {
    struct loop_timer timer; /* the next tick */
    struct device *dev;      /* owner */
    monotime_us start_us;    /* when the stream started (first subscription); a duration counts from it */
    struct rate_arrivals arrivals; /* rate plans, --notification-rate and notification-rate: the next send */
    uint64_t seq;                  /* last sequence number sent ({SEQ}) */
    uint32_t item;                 /* OpenDaylight plan: current entry */
    uint64_t item_left;            /* OpenDaylight plan: sends left of the current entry */
    monotime_us item_due_us;       /* OpenDaylight plan: when the current entry starts */
    uint64_t generated;            /* notifications generated */
    uint64_t behind;               /* notifications given up because the loop fell behind */
    uint8_t running;               /* 1 while the timer is armed */
    uint8_t finished;              /* 1 when the plan has nothing more to send */
    uint8_t held;                  /* 1 after a tick found the streams paused: the origin moves on resume */
    char **log;                    /* replay log: the last notifications sent, ring of log_cap */
    uint64_t *log_ms;              /* their event times */
    uint32_t *log_size;            /* bytes allocated for each slot's text (reused from send to send) */
    uint32_t log_slot_bytes; /* what every slot grows to: the largest text logged so far, with its NUL */
    uint32_t log_cap, log_head, log_count;
    struct notif_counts closed;                  /* counts of the device's subscriptions that ended, summed */
    struct notif_ended ended[STREAM_ENDED_ROWS]; /* rows of ended subscriptions, oldest first */
    uint32_t ended_count;                        /* entries used in ended */
    uint64_t log_since_ms;   /* the replay log holds every event since this instant (fleet clock) */
    struct stream_tap *taps; /* taps in the order they joined, tap_count used of tap_cap */
    uint32_t tap_count, tap_cap;
    uint8_t offering;               /* 1 while an event is offered to the taps: removals only mark */
    struct notif_counts tap_counts; /* what the taps did with the events, summed over them (ledger row) */
};

/* Called for each logged event a replay selects, oldest first. */
typedef void (*stream_log_fn)(void *arg, const char *xml, size_t len, uint64_t event_ms);

/**
 * @brief Register the subscribers' series of the ledger's sub-windows (channel netconf, sink
 * "subscribers"). Call once before ledger_book_start().
 */
void stream_ledger_init(void);

/** @brief A session asked for a subscription: start the device's stream if it is not running. */
void stream_subscribed(struct session *s);

/**
 * @brief The device's notification rate changed (the control API's notification-rate, device_ctl.h):
 * pace from now at the rate in force, stop while it is 0, start again when it is not.
 */
void stream_rate_changed(struct device *dev);

/** @brief A subscribed session ends: free its subscription (its counts move to the device's). */
void stream_unsubscribed(struct session *s);

/**
 * @brief Send a notification (a whole <notification> element) to the device's subscribers now, outside
 * any plan (netconf-config-change, link events). Counted like the rest.
 */
void stream_emit(struct device *dev, const char *xml, size_t len, uint64_t event_ms);

/**
 * @brief Replay the log to a new subscriber, from @p start_ms (and until @p stop_ms if not 0), then
 * replayComplete (RFC 5277 2.1.1). Called right after the subscription's ok is queued.
 */
void stream_replay(struct session *s, uint64_t start_ms, uint64_t stop_ms);

/**
 * @brief Call @p fn for each logged event of @p dev with @p start_ms <= eventTime (< @p stop_ms unless 0),
 * oldest first. Nothing when the device has no stream yet.
 */
void stream_log_each(const struct device *dev, uint64_t start_ms, uint64_t stop_ms, stream_log_fn fn,
                     void *arg);

/**
 * @return The instant from which the replay log of @p dev holds every event: a replay asked from earlier
 * starts there (RFC 8639 replay-start-time-revision). @p now_ms when the device has no stream yet or no log.
 */
uint64_t stream_log_since_ms(const struct device *dev, uint64_t now_ms);

/**
 * @brief Add a tap to the device's stream (creating and starting the stream as a subscription does): it
 * gets every event sent from now on, after the sessions' RFC 5277 subscribers.
 * @return FLEET_OK, or FLEET_ERR_NOMEM (nothing was added).
 */
enum fleet_err stream_tap_add(struct device *dev, stream_tap_fn offer, void *owner);

/** @brief Remove @p owner's tap; harmless when it has none. The stream pauses when nothing is left. */
void stream_tap_remove(struct device *dev, void *owner);

/**
 * @brief The ledger row the taps of @p dev count into (LEDGER_NETCONF, series "subscribers"): the caller
 * counts each event it queues or refuses there, and its filter's suppressions. NULL when the device has no
 * stream (no tap either).
 */
struct notif_counts *stream_tap_counts(struct device *dev);

/**
 * @return 1 when @p ev passes a filter: a subtree filter @p subtree (top-level siblings) or an XPath
 * @p xpath (module-name prefixes); both NULL: everything passes. Parses the event once, for all.
 */
int stream_event_passes(struct stream_event *ev, const struct lyd_node *subtree, const char *xpath);

/** @return 1 when a session of @p dev holds a live subscription, or a tap is on its stream. */
int stream_has_subscribers(const struct device *dev);

/** @brief Free a device's stream; NULL is fine. */
void stream_free(struct notif_stream *st, struct loop *loop);

/** @brief The counts of a device: its subscribers' rows summed, those of ended subscriptions included. */
void stream_device_counts(const struct device *dev, struct notif_counts *out);

#endif
