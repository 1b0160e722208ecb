/*
 * A NETCONF session on one device: the connection, framing, the hello
 * exchange, and the output queue. Messages are handed to rpc.c. A session
 * holds a heap buffer only while it has a partial message or unsent output.
 */
#ifndef FLEET_SESSION_H
#define FLEET_SESSION_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "device.h"
#include "frame.h"
#include "loop.h"
#include "outq.h"

struct transport_ops;
struct yp_sub;

/* Largest message before the hello is done (a hello with thousands of capabilities fits). */
#define SESSION_HELLO_MAX_BYTES (1024 * 1024)
/* Bytes read per read(2) into the worker's buffer. */
#define SESSION_READ_BUF_BYTES (64 * 1024)
/* Reads per readiness event, so one busy peer cannot starve the others. */
#define SESSION_MAX_READS_PER_EVENT 4
/* Above this much unsent output the session stops reading until the peer catches up. */
#define SESSION_OUTPUT_HIGH_WATER_BYTES (8u * 1024u * 1024u)

enum sess_state {
    SESS_HELLO,   /* our hello sent, waiting for the client's */
    SESS_ACTIVE,  /* hello exchanged, RPCs flow */
    SESS_CLOSING, /* finishing output, then closed; no more input */
    SESS_DEAD,    /* closed, waiting to be freed at the loop's safe point */
};

struct session {
    int fd;                        /* connection, -1 once closed */
    uint32_t id;                   /* session-id */
    enum sess_state state;         /* lifecycle */
    struct device *dev;            /* the device this session talks to */
    struct worker *worker;         /* the device's worker */
    struct frame_decoder dec;      /* input framing */
    enum frame_mode out_mode;      /* output framing (EOM until both sides said base:1.1) */
    struct outq out;               /* unsent output; holds memory only while something waits */
    struct session *dev_next;      /* device's session list */
    struct session *dev_prev;      /* device's session list */
    struct session *pending_next;  /* worker's flush list; valid while in_pending */
    struct session *closing_next;  /* worker's free list; valid when SESS_DEAD */
    struct loop_timer hello_timer; /* hello deadline; armed in SESS_HELLO */
    time_t login_time;             /* when the connection was accepted */
    uint32_t in_rpcs;              /* per-session monitoring counters */
    uint32_t in_bad_rpcs;
    uint32_t out_rpc_errors;
    uint32_t out_notifications;
    struct sess_delayed *delayed_head;     /* replies held by injected latency, oldest first */
    struct sess_delayed *delayed_tail;     /* newest held reply; valid when delayed_head */
    struct loop_timer delay_timer;         /* fires when the oldest held reply is due */
    struct notif_sub *sub;                 /* the session's subscription (RFC 5277), or NULL */
    struct yp_sub *subs;                   /* its dynamic subscriptions (RFC 8639), newest first, or NULL */
    const struct transport_ops *transport; /* what carries the bytes: TCP or SSH (transport.h) */
    void *link;                            /* the transport's own state (SSH: struct ssh_link), or NULL */
    const char *username;                  /* NETCONF username the transport found (TLS), or NULL */
    uint64_t sub_replay_start_ms;          /* startTime of a replay subscription */
    uint8_t sub_replay;                    /* 1 when the subscription asked for a replay */
    uint32_t replies_delayed;              /* replies given a latency draw; drives the next draw */
    uint8_t in_pending;                    /* 1 while on the worker's flush list */
    uint8_t read_paused;                   /* 1 while reading is off for back-pressure */
    uint8_t terminated;                    /* 1 when ended by close-session (not a drop) */
    uint8_t close_when_sent;               /* 1: close gracefully once every held reply went out */
    void (*on_closed)(struct session *s);  /* called once when it closes (call home redials), or NULL */
};

/**
 * @brief Start a session on an accepted connection of @p dev, or on one it dialled (call home), on its
 * worker's thread. Sends our hello (over SSH, once the netconf subsystem runs).
 * @return The session, or NULL when it could not start (the descriptor is then closed).
 */
struct session *sess_start(struct device *dev, int fd);

/**
 * @brief The client's address ("192.0.2.7", "fd5e::7"; with_port: "[fd5e::7]:50123") into @p buf, asked
 * of the socket (the session keeps no copy). @return @p buf; "(none)" once the connection is gone.
 */
char *sess_peer_text(const struct session *s, int with_port, char *buf, size_t len);

/** @brief The transport is ready for NETCONF (SSH: the netconf subsystem runs): send our hello. */
void sess_transport_ready(struct session *s);

/** @brief Bytes arrived from the transport: frame them and process complete messages. @return -1 if closed.
 */
int sess_consume(struct session *s, const char *buf, size_t len);

/** @brief Put the session on its worker's list of sessions to flush before sleeping. */
void sess_mark_pending(struct session *s);

/**
 * @brief Queue one message (XML without framing) for sending; framing is added here.
 * The copy is taken, @p xml stays the caller's.
 */
void sess_send(struct session *s, const char *xml, size_t len);

/**
 * @brief Queue one message (without framing) made of @p head, @p body and @p tail; framing is added here.
 * @p head and @p tail are copied; @p body is queued by reference (outq_add_ref()): it must stay unchanged
 * and alive until every session is freed (the schema set's get-schema texts are).
 */
void sess_send_shared(struct session *s, const char *head, size_t head_len, const char *body, size_t body_len,
                      const char *tail, size_t tail_len);

/**
 * @brief Queue a reply after @p delay_ms (injected latency). Replies keep their order: one is never
 * sent before an earlier one, whatever their delays.
 */
void sess_send_delayed(struct session *s, const char *xml, size_t len, uint32_t delay_ms);

/** @brief Close gracefully once every held reply was sent (close-session, kill-session of self). */
void sess_close_after_replies(struct session *s);

/**
 * @brief End the session: after queued output is flushed (graceful) or at once.
 * Releases its locks. May be called from any callback; freeing waits for the safe point.
 * @param[in] graceful 1 to flush output first.
 */
void sess_close(struct session *s, int graceful);

/** @brief Worker's before-sleep hook: flush pending output and free dead sessions. */
void sess_worker_before_sleep(struct loop *loop, void *data);

/** @brief Close every session of the worker at once (shutdown). */
void sess_close_all(struct worker *w);

/** @return The session of @p dev with @p id, or NULL. */
struct session *sess_find(struct device *dev, uint32_t id);

#endif
