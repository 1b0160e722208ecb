/*
 * SNMPv2c trap and inform sender: one UDP socket per worker loop, sends
 * from each device's own address with IP_PKTINFO, or from the device's own
 * agent socket when it has one (a port per device), batches with sendmmsg,
 * and keeps informs in a fixed table until a Response arrives or the
 * retries run out.
 *
 * The path of a notification: trap_send() encodes it into the batch slot's
 * buffer and queues it (an inform also takes a pending slot and keeps its
 * own copy of the message for retransmission); the flush timer, armed for
 * "now", runs at the start of the next loop iteration and hands the whole
 * batch to sendmmsg; the outcome of every message is counted then. An
 * inform's timer retransmits through the same batch. A Response is matched
 * by request-id (which encodes the pending slot, so the lookup is O(1)) and
 * by the sink's address and port.
 *
 * Costs of the simple structure: a notification is encoded once per sink
 * (the request-id differs anyway for informs), and each waiting inform keeps
 * a malloc'd copy of its message. If profiles show either, encode once and
 * patch the request-id, or give each slot a small inline buffer.
 */
#include "trap.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "loop.h"
#include "susm.h"
#include "trap_pdu.h"

/* Largest Response read; a collector echoes our varbinds, so it is about as big as what we sent. */
#define TRAP_RX_BYTES 4096
/* Marks the end of the free list of pending slots. */
#define TRAP_NO_SLOT UINT32_MAX
/* Request-ids are INTEGER (0..2147483647) here: the top bit stays clear. */
#define TRAP_REQUEST_ID_SPAN 0x80000000u

/* What a queued message is, which decides how its outcome is counted. */
enum trap_out_kind {
    TRAP_OUT_TRAP,   /* a trap: the bytes are in the batch buffer */
    TRAP_OUT_INFORM, /* an inform's first copy: the bytes are in its pending slot */
    TRAP_OUT_RETRY,  /* an inform's retransmission: same, and the slot may be gone by flush time */
};

/* The life of a pending slot. */
enum trap_slot_state {
    TRAP_SLOT_FREE,      /* on the free list */
    TRAP_SLOT_QUEUED,    /* first copy waits in the batch; counted nowhere yet */
    TRAP_SLOT_WAITING,   /* first copy sent; counted in sent and pending; timer armed */
    TRAP_SLOT_DISCOVERY, /* v3: waits for its sink's engine ID (RFC 3414 section 4); counted nowhere yet */
};

/* What a v3 inform sender knows of a sink's engine, which is authoritative for informs (RFC 3412 6.4). */
enum trap_peer_state {
    TRAP_PEER_UNKNOWN, /* nothing learned; the next inform starts a discovery */
    TRAP_PEER_PROBING, /* a discovery probe is out; its timer armed */
    TRAP_PEER_KNOWN,   /* engine ID, boots and time learned; user localized */
};

/* A sink's engine as a v3 inform sender discovered it. */
struct trap_peer {
    struct loop_timer timer;                     /* PROBING: resend the probe or give up */
    struct trap_sender *sender;                  /* owner (the timer callback needs it) */
    struct net_endpoint ep;                      /* the sink's address and port */
    uint8_t state;                               /* enum trap_peer_state */
    uint32_t probes_left;                        /* PROBING: probes still allowed after this one */
    int32_t probe_id;                            /* PROBING: msgID and request-id of the probe */
    uint8_t engine_id[SUSM_ENGINE_ID_MAX_BYTES]; /* KNOWN: the sink's snmpEngineID */
    size_t engine_id_len;                        /* KNOWN: bytes in engine_id */
    uint32_t boots;                              /* KNOWN: its snmpEngineBoots as last learned */
    uint32_t time_s;                             /* KNOWN: its snmpEngineTime at learned_us */
    monotime_us learned_us;                      /* KNOWN: when time_s was learned */
    struct susm_user user;                       /* KNOWN: the user localized for engine_id */
};

/* An inform that waits for its Response. */
struct trap_pending {
    struct loop_timer timer;    /* WAITING: fires after timeout_ms to retransmit or give up */
    struct trap_sender *sender; /* owner (the timer callback needs it) */
    struct trap_counters *row;  /* QUEUED, WAITING: the caller's row */
    uint8_t *msg;               /* QUEUED, WAITING: the encoded message (heap, msg_len bytes) */
    size_t msg_len;             /* bytes at msg */
    union netaddr_sa peer;      /* QUEUED, WAITING: the sink */
    uint32_t src_low;           /* QUEUED, WAITING: source address (low 32 bits of cfg.fam), when has_src */
    uint8_t has_src;            /* QUEUED, WAITING: 0: the socket's address */
    int fd;                     /* QUEUED, WAITING: the socket every copy leaves from */
    int32_t request_id;         /* QUEUED, WAITING: the message's request-id; request_id % cap is the slot */
    uint32_t generation;        /* uses of this slot so far; makes the next request-id differ */
    uint32_t retries_left;      /* WAITING: retransmissions still allowed */
    uint32_t next_free;         /* FREE: next free slot, or TRAP_NO_SLOT */
    uint32_t peer_index;        /* v3 informs: the sink's entry in sender->peers; msg holds the PDU only */
    uint8_t state;              /* enum trap_slot_state */
};

/* A message waiting for the next sendmmsg. */
struct trap_out {
    uint8_t kind;       /* enum trap_out_kind */
    uint32_t slot;      /* INFORM, RETRY: the pending slot */
    int32_t request_id; /* INFORM, RETRY: checked at flush, the slot may have been answered and reused */
    struct trap_counters *row; /* TRAP: the caller's row */
    union netaddr_sa peer;     /* TRAP: the sink */
    uint32_t src_low;          /* TRAP: source address (low 32 bits of cfg.fam), when has_src */
    uint8_t has_src;           /* TRAP: 0: the socket's address */
    int fd;                    /* TRAP: the socket it leaves from */
    const uint8_t *data;       /* TRAP: the message, inside the batch buffer */
    size_t len;                /* TRAP: bytes at data */
};

struct trap_sender {
    struct loop *loop;             /* the worker loop; the sender is used on its thread only */
    int fd;                        /* the UDP socket of cfg.fam, non-blocking, watched for Responses */
    int fd_other;                  /* cfg.other_family: the other family's, on its wildcard; else -1 */
    uint16_t port;                 /* its local port, host order */
    struct trap_sender_config cfg; /* configuration; cfg.community points at community */
    char community[TRAP_MAX_COMMUNITY_BYTES + 1]; /* the community, NUL-terminated copy */
    size_t community_len;                         /* its bytes */
    struct loop_timer flush_timer;                /* armed for "now" while out_count > 0 */
    struct trap_out out[TRAP_BATCH];              /* queued messages, in send order */
    uint32_t out_count;                           /* entries of out in use */
    uint8_t *bufs;                                /* TRAP_BATCH encode buffers of buf_cap bytes */
    size_t buf_cap;                               /* TRAP_MAX_MSG_BYTES plus header room */
    struct trap_pending *slots;                   /* informs: the pending table; NULL for traps */
    uint32_t slot_cap;                            /* its size, 1..TRAP_MAX_PENDING_LIMIT */
    uint32_t free_head;                           /* first free slot, or TRAP_NO_SLOT when full */
    uint32_t slots_used;                          /* QUEUED plus WAITING slots */
    uint32_t waiting;                             /* WAITING slots */
    uint32_t next_request_id;                     /* traps: the next request-id (31 bits) */
    struct respond_v3_user v3_user;               /* TRAP_VERSION_3: the USM user (cfg.v3_user points here) */
    uint8_t *v3_scratch;                          /* TRAP_VERSION_3: the PDU before susm_encode() wraps it */
    uint64_t salt;                                /* TRAP_VERSION_3: the next AES salt (seeded per worker) */
    struct trap_peer peers[TRAP_MAX_V3_PEERS];    /* v3 informs: the sinks' engines */
    uint32_t peer_count;                          /* v3 informs: entries of peers in use */
    uint8_t rx[TRAP_RX_BYTES];                    /* Response read buffer */
    struct trap_sender_stats stats;               /* sender-wide counts */
};

/* IF-MIB linkDown and linkUp (RFC 2863): snmpTraps.3 and .4. */
static const struct oid trap_linkdown_oid = {.len = 10, .sub = {1, 3, 6, 1, 6, 3, 1, 1, 5, 3}};
static const struct oid trap_linkup_oid = {.len = 10, .sub = {1, 3, 6, 1, 6, 3, 1, 1, 5, 4}};
/* ifEntry (1.3.6.1.2.1.2.2.1) columns ifIndex (1), ifAdminStatus (7), ifOperStatus (8). */
static const uint32_t trap_ifentry_prefix[] = {1, 3, 6, 1, 2, 1, 2, 2, 1};
#define TRAP_IFINDEX_COLUMN       1
#define TRAP_IFADMINSTATUS_COLUMN 7
#define TRAP_IFOPERSTATUS_COLUMN  8

static void trap_on_flush(struct loop *loop, struct loop_timer *timer);
static void trap_on_inform_timeout(struct loop *loop, struct loop_timer *timer);
static void trap_on_probe_timeout(struct loop *loop, struct loop_timer *timer);
static struct trap_out *trap_out_next(struct trap_sender *s);

enum fleet_err
trap_sink_parse(const char *text, struct trap_sink *sink, char *err, size_t err_len)
{
    struct net_endpoint ep;
    char why[160];

    if (netaddr_endpoint_parse(text, TRAP_DEFAULT_PORT, &ep, why, sizeof why)) {
        snprintf(err, err_len,
                 "trap sink \"%s\": %s (names are not resolved; give an address such as 127.0.0.1:162 or "
                 "[::1]:162)",
                 text, why);
        return FLEET_ERR_INVAL;
    }
    sink->ep = ep;
    return FLEET_OK;
}

char *
trap_sink_format(const struct trap_sink *sink, char *buf, size_t buf_len)
{
    return netaddr_endpoint_text(&sink->ep, 1, buf, buf_len);
}

enum fleet_err
trap_version_parse(const char *text, int *version)
{
    if (!strcmp(text, "1")) {
        *version = TRAP_VERSION_1;
    } else if (!strcmp(text, "2c") || !strcmp(text, "2")) {
        *version = TRAP_VERSION_2C;
    } else if (!strcmp(text, "3")) {
        *version = TRAP_VERSION_3;
    } else {
        return FLEET_ERR_INVAL;
    }
    return FLEET_OK;
}

void
trap_note_suppressed(struct trap_counters *row)
{
    ledger_suppress(&row->ledger, 1);
}

int
trap_counters_consistent(const struct trap_counters *row)
{
    uint64_t settled = row->acknowledged + row->timed_out + row->pending;

    /* A trap row never has settled informs; an inform row settles every one it sent. */
    return ledger_consistent(&row->ledger) && row->ledger.queued == 0 &&
           (settled == 0 || settled == ledger_sent(&row->ledger));
}

static void
trap_slot_release(struct trap_sender *s, uint32_t index)
{
    struct trap_pending *p = &s->slots[index];

    if (p->state == TRAP_SLOT_WAITING) {
        loop_timer_stop(s->loop, &p->timer);
        s->waiting--;
    }
    free(p->msg);
    p->msg = NULL;
    p->row = NULL;
    p->state = TRAP_SLOT_FREE;
    p->next_free = s->free_head;
    s->free_head = index;
    s->slots_used--;
}

/* Take a free slot and give it the next request-id of its own sequence; TRAP_NO_SLOT when full. */
static uint32_t
trap_slot_take(struct trap_sender *s)
{
    uint32_t index = s->free_head;
    struct trap_pending *p;
    uint32_t generations = TRAP_REQUEST_ID_SPAN / s->slot_cap;

    if (index == TRAP_NO_SLOT) {
        return TRAP_NO_SLOT;
    }
    p = &s->slots[index];
    s->free_head = p->next_free;
    s->slots_used++;
    p->generation++;
    p->request_id = (int32_t)((p->generation % generations) * s->slot_cap + index);
    p->state = TRAP_SLOT_QUEUED;
    return index;
}

/* 1 when the sender sends v3 informs: the receiver's engine is authoritative and must be discovered. */
static int
trap_v3_informs(const struct trap_sender *s)
{
    return s->slots && s->cfg.version == TRAP_VERSION_3;
}

/* The entry of sink @p ep in s->peers, added when new; TRAP_NO_SLOT when the table is full. */
static uint32_t
trap_peer_of(struct trap_sender *s, const struct net_endpoint *ep)
{
    struct trap_peer *peer;

    for (uint32_t i = 0; i < s->peer_count; i++) {
        if (netaddr_endpoint_equal(&s->peers[i].ep, ep)) {
            return i;
        }
    }
    if (s->peer_count == TRAP_MAX_V3_PEERS) {
        return TRAP_NO_SLOT;
    }
    peer = &s->peers[s->peer_count];
    memset(peer, 0, sizeof *peer);
    loop_timer_init(&peer->timer);
    peer->sender = s;
    peer->ep = *ep;
    return s->peer_count++;
}

/* The sink's engine as it stands now: its time moved on by what passed since it was learned. */
static void
trap_peer_engine(const struct trap_sender *s, const struct trap_peer *peer, struct susm_engine *engine)
{
    monotime_us now = loop_now_us(s->loop);
    uint64_t passed_s = now > peer->learned_us ? (uint64_t)(now - peer->learned_us) / 1000000u : 0;
    uint64_t t = peer->time_s + passed_s;

    engine->id = peer->engine_id;
    engine->id_len = peer->engine_id_len;
    engine->boots = peer->boots;
    engine->time_s = (uint32_t)(t > SUSM_MAX_ENGINE_BOOTS ? SUSM_MAX_ENGINE_BOOTS : t);
    engine->max_msg_bytes = TRAP_MAX_MSG_BYTES;
}

/* Build a v3 inform's message for its sink's engine into @p buf. */
static enum fleet_err
trap_wrap_inform(struct trap_sender *s, const struct trap_pending *p, uint8_t *buf, size_t *len)
{
    const struct trap_peer *peer = &s->peers[p->peer_index];
    struct susm_engine engine;

    trap_peer_engine(s, peer, &engine);
    return trap_pdu_wrap_v3(p->msg, p->msg_len, &peer->user, &engine, SPDU_INFORM, p->request_id, s->salt++,
                            TRAP_MAX_MSG_BYTES, buf, s->buf_cap, len);
}

/* Send a discovery probe (RFC 3414 section 4: an empty noAuthNoPriv request with an empty engine ID) to
 * the sink from the sender's own socket, where its Report comes back. A refused probe is retried by the
 * timer like a lost one. */
static void
trap_peer_probe_send(struct trap_sender *s, struct trap_peer *peer)
{
    uint8_t buf[SUSM_REPORT_MAX_BYTES];
    size_t len;
    int fd = peer->ep.sa.ss_family == netaddr_af(&s->cfg.fam) ? s->fd : s->fd_other;

    peer->probe_id = (int32_t)s->next_request_id;
    s->next_request_id = (s->next_request_id + 1) % TRAP_REQUEST_ID_SPAN;
    if (!susm_client_discovery(peer->probe_id, peer->probe_id, TRAP_MAX_MSG_BYTES, buf, sizeof buf, &len)) {
        (void)sendto(fd, buf, len, MSG_DONTWAIT, (const struct sockaddr *)&peer->ep.sa,
                     netaddr_sa_len((const struct sockaddr *)&peer->ep.sa));
    }
    loop_timer_start(s->loop, &peer->timer, loop_now_us(s->loop) + (monotime_us)s->cfg.timeout_ms * 1000,
                     trap_on_probe_timeout);
}

static void
trap_peer_probe_start(struct trap_sender *s, struct trap_peer *peer)
{
    peer->state = TRAP_PEER_PROBING;
    peer->probes_left = s->cfg.retries;
    trap_peer_probe_send(s, peer);
}

/* No Report after every probe: the informs waiting for this sink never reach the wire. */
static void
trap_on_probe_timeout(struct loop *loop, struct loop_timer *timer)
{
    struct trap_peer *peer = (struct trap_peer *)((char *)timer - offsetof(struct trap_peer, timer));
    struct trap_sender *s = peer->sender;
    uint32_t index = (uint32_t)(peer - s->peers);

    (void)loop;
    if (peer->probes_left) {
        peer->probes_left--;
        trap_peer_probe_send(s, peer);
        return;
    }
    s->stats.discovery_timeouts++;
    peer->state = TRAP_PEER_UNKNOWN;
    for (uint32_t i = 0; i < s->slot_cap; i++) {
        struct trap_pending *p = &s->slots[i];
        if (p->state == TRAP_SLOT_DISCOVERY && p->peer_index == index) {
            ledger_emit_failed(&p->row->ledger);
            trap_slot_release(s, i);
        }
    }
}

/* The sink's engine is known: localize the user for it and queue every inform that waited. The scan of
 * the table happens once per sink and discovery (a few per run). */
static void
trap_peer_learned(struct trap_sender *s, struct trap_peer *peer, const struct susm_msg *report)
{
    uint32_t index = (uint32_t)(peer - s->peers);

    if (trap_pdu_localize(&s->v3_user, report->engine_id, report->engine_id_len, &peer->user)) {
        return; /* libcrypto failed: the probe timer retries, then gives the informs up */
    }
    memcpy(peer->engine_id, report->engine_id, report->engine_id_len);
    peer->engine_id_len = report->engine_id_len;
    peer->boots = report->engine_boots;
    peer->time_s = report->engine_time;
    peer->learned_us = loop_now_us(s->loop);
    peer->state = TRAP_PEER_KNOWN;
    loop_timer_stop(s->loop, &peer->timer);
    s->stats.discoveries++;
    for (uint32_t i = 0; i < s->slot_cap; i++) {
        struct trap_pending *p = &s->slots[i];
        struct trap_out *o;
        if (p->state != TRAP_SLOT_DISCOVERY || p->peer_index != index) {
            continue;
        }
        o = trap_out_next(s);
        memset(o, 0, sizeof *o);
        o->kind = TRAP_OUT_INFORM;
        o->slot = i;
        o->request_id = p->request_id;
        p->state = TRAP_SLOT_QUEUED;
        s->out_count++;
    }
}

static void
trap_fill_msghdr(const struct trap_sender *s, struct msghdr *mh, struct iovec *iov, void *ctl,
                 const union netaddr_sa *peer, const uint32_t *src_low, const uint8_t *data, size_t len)
{
    iov->iov_base = (void *)data;
    iov->iov_len = len;
    memset(mh, 0, sizeof *mh);
    mh->msg_name = (void *)peer;
    mh->msg_namelen = netaddr_sa_len(&peer->sa);
    mh->msg_iov = iov;
    mh->msg_iovlen = 1;
    if (src_low) {
        netaddr_msg_source(mh, ctl, &s->cfg.fam, *src_low);
    }
}

/* Count the outcome of queued entry @p o. */
static void
trap_account(struct trap_sender *s, const struct trap_out *o, int ok)
{
    struct trap_pending *p;

    switch (o->kind) {
    case TRAP_OUT_TRAP:
        /* Through the ledger's calls: the run window splits in_window from drain, and each sink's series
         * counts in its sub-window (the per-sink metrics and the report's series). */
        if (ok) {
            ledger_emit_sent(&o->row->ledger);
        } else {
            ledger_emit_failed(&o->row->ledger);
        }
        break;
    case TRAP_OUT_INFORM:
        p = &s->slots[o->slot];
        if (!ok) {
            /* Not retried: a refusal here is local (full send buffer, no route, foreign source). */
            ledger_emit_failed(&p->row->ledger);
            trap_slot_release(s, o->slot);
            break;
        }
        ledger_emit_sent(&p->row->ledger);
        p->row->pending++;
        p->state = TRAP_SLOT_WAITING;
        p->retries_left = s->cfg.retries;
        s->waiting++;
        loop_timer_start(s->loop, &p->timer, loop_now_us(s->loop) + (monotime_us)s->cfg.timeout_ms * 1000,
                         trap_on_inform_timeout);
        break;
    case TRAP_OUT_RETRY:
        p = &s->slots[o->slot];
        if (ok) {
            p->row->retries++;
        } else {
            s->stats.retry_send_failures++;
        }
        break;
    default:
        abort();
    }
}

/* A retransmission whose inform was answered (or given up) meanwhile is skipped. */
static int
trap_out_live(const struct trap_sender *s, const struct trap_out *o)
{
    const struct trap_pending *p;

    if (o->kind == TRAP_OUT_TRAP) {
        return 1;
    }
    p = &s->slots[o->slot];
    return p->state != TRAP_SLOT_FREE && p->request_id == o->request_id;
}

void
trap_sender_flush(struct trap_sender *s)
{
    struct mmsghdr msgs[TRAP_BATCH];
    struct iovec iov[TRAP_BATCH];
    union {
        char buf[NETADDR_PKTINFO_BYTES];
        struct cmsghdr align;
    } ctl[TRAP_BATCH];
    uint32_t which[TRAP_BATCH];     /* entry of s->out behind each message */
    uint32_t unwrapped[TRAP_BATCH]; /* entries of s->out whose v3 message could not be built */
    uint32_t unwrapped_count = 0;
    int fds[TRAP_BATCH]; /* the socket each message leaves from */
    int ok[TRAP_BATCH];
    uint32_t n = 0, count = s->out_count;

    loop_timer_stop(s->loop, &s->flush_timer);
    /* Step 1: one message per live entry, the bytes where the entry's kind keeps them. */
    for (uint32_t i = 0; i < count; i++) {
        const struct trap_out *o = &s->out[i];
        const struct trap_pending *p;
        if (!trap_out_live(s, o)) {
            continue;
        }
        if (o->kind == TRAP_OUT_TRAP) {
            trap_fill_msghdr(s, &msgs[n].msg_hdr, &iov[n], ctl[n].buf, &o->peer,
                             o->has_src ? &o->src_low : NULL, o->data, o->len);
            fds[n] = o->fd;
        } else {
            const uint8_t *data;
            size_t len;
            p = &s->slots[o->slot];
            data = p->msg;
            len = p->msg_len;
            if (trap_v3_informs(s)) {
                /* Wrapped now, in the entry's own batch buffer: each copy carries the sink's engine time. */
                uint8_t *buf = s->bufs + (size_t)i * s->buf_cap;
                if (trap_wrap_inform(s, p, buf, &len)) {
                    unwrapped[unwrapped_count++] = i;
                    continue;
                }
                data = buf;
            }
            trap_fill_msghdr(s, &msgs[n].msg_hdr, &iov[n], ctl[n].buf, &p->peer,
                             p->has_src ? &p->src_low : NULL, data, len);
            fds[n] = p->fd;
        }
        msgs[n].msg_len = 0;
        which[n] = i;
        ok[n] = 0;
        n++;
    }
    /* Step 2: send, one sendmmsg per run of messages from the same socket. After a refusal sendmmsg
     * stops; that message fails alone and the rest go on. */
    for (uint32_t i = 0; i < n;) {
        uint32_t run = 1;
        int r;
        while (i + run < n && fds[i + run] == fds[i]) {
            run++;
        }
        r = sendmmsg(fds[i], msgs + i, run, MSG_DONTWAIT);
        if (r > 0) {
            for (int k = 0; k < r; k++) {
                ok[i + (uint32_t)k] = 1;
            }
            i += (uint32_t)r;
            s->stats.batches++;
        } else if (r < 0 && errno == EINTR) {
            continue;
        } else {
            i++;
        }
    }
    /* Step 3: count. The batch is empty before the outcomes, which may arm timers but queue nothing. */
    s->out_count = 0;
    for (uint32_t i = 0; i < n; i++) {
        trap_account(s, &s->out[which[i]], ok[i]);
    }
    for (uint32_t i = 0; i < unwrapped_count; i++) {
        trap_account(s, &s->out[unwrapped[i]], 0);
    }
}

static void
trap_on_flush(struct loop *loop, struct loop_timer *timer)
{
    struct trap_sender *s = (struct trap_sender *)((char *)timer - offsetof(struct trap_sender, flush_timer));

    (void)loop;
    trap_sender_flush(s);
}

/* Make room for one more entry and make sure the batch goes out next iteration. */
static struct trap_out *
trap_out_next(struct trap_sender *s)
{
    if (s->out_count == TRAP_BATCH) {
        trap_sender_flush(s);
    }
    if (!loop_timer_armed(&s->flush_timer)) {
        loop_timer_start(s->loop, &s->flush_timer, loop_now_us(s->loop), trap_on_flush);
    }
    return &s->out[s->out_count];
}

static void
trap_on_inform_timeout(struct loop *loop, struct loop_timer *timer)
{
    struct trap_pending *p = (struct trap_pending *)((char *)timer - offsetof(struct trap_pending, timer));
    struct trap_sender *s = p->sender;
    uint32_t index = (uint32_t)(p - s->slots);
    struct trap_out *o;

    if (!p->retries_left) {
        p->row->pending--;
        p->row->timed_out++;
        trap_slot_release(s, index);
        return;
    }
    p->retries_left--;
    /* Same bytes, same request-id (RFC 3416 section 4.2.7 lets the receiver match either copy). */
    o = trap_out_next(s);
    memset(o, 0, sizeof *o);
    o->kind = TRAP_OUT_RETRY;
    o->slot = index;
    o->request_id = p->request_id;
    s->out_count++;
    loop_timer_start(loop, &p->timer, loop_now_us(loop) + (monotime_us)s->cfg.timeout_ms * 1000,
                     trap_on_inform_timeout);
}

/* Settle the inform a well-formed Response with @p request_id answers, if it answers one. */
static void
trap_settle(struct trap_sender *s, int32_t request_id, const struct sockaddr *from)
{
    struct trap_pending *p;
    struct net_endpoint sink, sender;
    uint32_t index;

    if (!s->slots) {
        s->stats.responses_unmatched++;
        return;
    }
    index = (uint32_t)request_id % s->slot_cap;
    p = &s->slots[index];
    netaddr_endpoint_set(&sink, &p->peer.sa, netaddr_sa_len(&p->peer.sa));
    netaddr_endpoint_set(&sender, from, netaddr_sa_len(from));
    if (p->state != TRAP_SLOT_WAITING || p->request_id != request_id ||
        !netaddr_endpoint_equal(&sink, &sender)) {
        s->stats.responses_unmatched++;
        return;
    }
    p->row->pending--;
    p->row->acknowledged++;
    trap_slot_release(s, index);
}

/* The entry of s->peers that is the endpoint @p from, or NULL. */
static struct trap_peer *
trap_peer_at(struct trap_sender *s, const struct sockaddr *from)
{
    struct net_endpoint ep;

    netaddr_endpoint_set(&ep, from, netaddr_sa_len(from));
    for (uint32_t i = 0; i < s->peer_count; i++) {
        if (netaddr_endpoint_equal(&s->peers[i].ep, &ep)) {
            return &s->peers[i];
        }
    }
    return NULL;
}

/* A v3 datagram from sink @p peer (decrypted in place): a discovery Report teaches its engine, an
 * authenticated notInTimeWindow Report its clock (the retransmissions then carry it), and an
 * authenticated Response settles an inform. */
static void
trap_receive_v3(struct trap_sender *s, struct trap_peer *peer, uint8_t *buf, size_t len,
                const struct sockaddr *from)
{
    struct susm_msg msg;
    enum susm_report_kind failure, kind;

    if (susm_client_receive(buf, len, peer->state == TRAP_PEER_KNOWN ? &peer->user : NULL, &msg, &failure)) {
        s->stats.responses_malformed++;
        return;
    }
    kind = msg.pdu.type == SPDU_REPORT ? susm_report_kind_of(&msg.pdu, NULL) : SUSM_REPORT_NONE;
    if (kind == SUSM_REPORT_UNKNOWN_ENGINE_IDS && peer->state == TRAP_PEER_PROBING &&
        msg.pdu.request_id == peer->probe_id && msg.engine_id_len >= 5) {
        trap_peer_learned(s, peer, &msg);
        return;
    }
    if (failure != SUSM_REPORT_NONE) {
        s->stats.responses_unauthentic++;
        return;
    }
    if (kind == SUSM_REPORT_NOT_IN_TIME_WINDOWS && msg.authenticated && peer->state == TRAP_PEER_KNOWN) {
        peer->boots = msg.engine_boots;
        peer->time_s = msg.engine_time;
        peer->learned_us = loop_now_us(s->loop);
        return;
    }
    if (msg.pdu.type != SPDU_RESPONSE || msg.pdu.request_id < 0 ||
        (peer->user.auth != SUSM_AUTH_NONE && !msg.authenticated)) {
        s->stats.responses_unmatched++;
        return;
    }
    trap_settle(s, msg.pdu.request_id, from);
}

/* Read Responses (bounded per event) and settle the informs they answer. */
static void
trap_on_readable(struct loop *loop, int fd, uint32_t events, void *data)
{
    struct trap_sender *s = data;

    (void)loop;
    (void)events;
    for (int i = 0; i < TRAP_MAX_READS_PER_EVENT; i++) {
        union netaddr_sa from;
        socklen_t from_len = sizeof from;
        struct spdu_message msg;
        ssize_t n =
            recvfrom(fd, s->rx, sizeof s->rx, MSG_DONTWAIT | MSG_TRUNC, (struct sockaddr *)&from, &from_len);
        if (n < 0) {
            break; /* EAGAIN: drained; anything else is a stale ICMP error with nothing to settle */
        }
        s->stats.responses++;
        if (trap_v3_informs(s) && (size_t)n <= sizeof s->rx) {
            struct trap_peer *peer = trap_peer_at(s, &from.sa);
            if (peer) {
                trap_receive_v3(s, peer, s->rx, (size_t)n, &from.sa);
            } else {
                s->stats.responses_unmatched++;
            }
            continue;
        }
        if ((size_t)n > sizeof s->rx || spdu_message_decode(s->rx, (size_t)n, &msg) ||
            msg.version != SPDU_V2C || msg.pdu.type != SPDU_RESPONSE || msg.pdu.request_id < 0) {
            s->stats.responses_malformed++;
            continue;
        }
        trap_settle(s, msg.pdu.request_id, &from.sa);
    }
}

int
trap_sender_take_response(struct trap_sender *s, const uint8_t *data, size_t len, const struct sockaddr *from)
{
    struct spdu_message msg;

    if (trap_v3_informs(s)) {
        /* Anything from a sink's own endpoint answers us (a manager polling the agent uses another port). */
        struct trap_peer *peer = trap_peer_at(s, from);
        if (!peer || len > sizeof s->rx) {
            return 0;
        }
        s->stats.responses++;
        memcpy(s->rx, data, len); /* decrypted in place; the agent's buffer stays as it came */
        trap_receive_v3(s, peer, s->rx, len, from);
        return 1;
    }
    /* Only informs are answered; without them every datagram is the agent's. */
    if (!s->slots || spdu_message_decode(data, len, &msg) || msg.version != SPDU_V2C ||
        msg.pdu.type != SPDU_RESPONSE || msg.pdu.request_id < 0) {
        return 0;
    }
    s->stats.responses++;
    trap_settle(s, msg.pdu.request_id, from);
    return 1;
}

/* The socket of @p fam at @p low into @p *fd; @p port (may be NULL) gets its local port. */
static enum fleet_err
trap_open_socket(struct trap_sender *s, const struct net_family *fam, uint32_t low, int *fd, uint16_t *port,
                 char *err, size_t err_len)
{
    struct sockaddr_storage sa;
    socklen_t sa_len = netaddr_sockaddr(fam, low, 0, &sa);
    struct net_endpoint local;
    int bytes = TRAP_SNDBUF_BYTES;
    enum fleet_err rc = FLEET_OK;

    *fd = socket(netaddr_af(fam), SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (*fd < 0) {
        snprintf(err, err_len, "cannot create the trap socket: %m");
        rc = FLEET_ERR_SYS;
        goto cleanup;
    }
    /* Best effort: the kernel caps it at net.core.wmem_max, and a smaller buffer only means more failures. */
    (void)setsockopt(*fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
    netaddr_socket_prepare(*fd, fam, low);
    if (bind(*fd, (struct sockaddr *)&sa, sa_len) < 0 ||
        getsockname(*fd, (struct sockaddr *)&sa, &(socklen_t){sizeof sa}) < 0) {
        snprintf(err, err_len, "cannot bind the trap socket: %m");
        rc = FLEET_ERR_SYS;
        goto cleanup;
    }
    netaddr_endpoint_set(&local, (struct sockaddr *)&sa, sa_len);
    if (port) {
        *port = netaddr_endpoint_port(&local);
    }
    if (loop_watch(s->loop, *fd, LOOP_READ, trap_on_readable, s)) {
        snprintf(err, err_len, "cannot watch the trap socket: %m");
        rc = FLEET_ERR_SYS;
        goto cleanup;
    }
cleanup:
    return rc;
}

enum fleet_err
trap_sender_new(struct loop *loop, const struct trap_sender_config *cfg, struct trap_sender **out, char *err,
                size_t err_len)
{
    struct trap_sender *s = NULL;
    const char *community = cfg->community ? cfg->community : "public";
    size_t community_len = strlen(community);
    enum fleet_err rc = FLEET_OK;

    *out = NULL;
    if (community_len > TRAP_MAX_COMMUNITY_BYTES) {
        snprintf(err, err_len, "the trap community is longer than %d bytes", TRAP_MAX_COMMUNITY_BYTES);
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    if (cfg->inform && (cfg->timeout_ms == 0 || cfg->max_pending > TRAP_MAX_PENDING_LIMIT)) {
        snprintf(err, err_len,
                 "the inform timeout must be above 0 ms and the pending table at most %d informs",
                 TRAP_MAX_PENDING_LIMIT);
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    if (cfg->version == TRAP_VERSION_1 && cfg->inform) {
        snprintf(err, err_len, "SNMPv1 has no informs: --trap-version 1 cannot go with --trap-inform");
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    if (cfg->version == TRAP_VERSION_3 && !cfg->v3_user) {
        snprintf(err, err_len, "--trap-version 3 needs a USM user: give --trap-v3-user");
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    if (cfg->version < TRAP_VERSION_2C || cfg->version > TRAP_VERSION_3) {
        snprintf(err, err_len, "unknown trap version %d", cfg->version);
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    s = calloc(1, sizeof *s);
    if (!s) {
        goto nomem;
    }
    s->loop = loop;
    s->fd = -1;
    s->fd_other = -1;
    s->cfg = *cfg;
    memcpy(s->community, community, community_len + 1);
    s->community_len = community_len;
    s->cfg.community = s->community;
    s->next_request_id = cfg->request_id_seed % TRAP_REQUEST_ID_SPAN;
    loop_timer_init(&s->flush_timer);
    /* v1's headroom holds the largest enterprise OID too; v3 writes from the buffer's start. */
    s->buf_cap = TRAP_MAX_MSG_BYTES + SPDU_TRAP_V1_HEADROOM(TRAP_MAX_COMMUNITY_BYTES);
    s->bufs = malloc((size_t)TRAP_BATCH * s->buf_cap);
    if (!s->bufs) {
        goto nomem;
    }
    if (cfg->version == TRAP_VERSION_3) {
        s->v3_user = *cfg->v3_user;
        s->cfg.v3_user = &s->v3_user;
        s->salt = (uint64_t)cfg->request_id_seed << 32;
        s->v3_scratch = malloc(TRAP_MAX_MSG_BYTES + TRAP_PDU_V3_HEADROOM);
        if (!s->v3_scratch) {
            goto nomem;
        }
    }
    s->free_head = TRAP_NO_SLOT;
    if (cfg->inform) {
        s->slot_cap = cfg->max_pending ? cfg->max_pending : TRAP_DEFAULT_MAX_PENDING;
        s->slots = calloc(s->slot_cap, sizeof *s->slots);
        if (!s->slots) {
            goto nomem;
        }
        /* Free list in index order; the seed staggers the generations so workers' request-ids differ. */
        for (uint32_t i = s->slot_cap; i-- > 0;) {
            struct trap_pending *p = &s->slots[i];
            loop_timer_init(&p->timer);
            p->sender = s;
            p->generation = cfg->request_id_seed;
            p->next_free = s->free_head;
            s->free_head = i;
        }
    }
    {
        const struct net_family any = {.v6 = cfg->fam.v6};
        rc = trap_open_socket(s, cfg->bind_addr ? &cfg->fam : &any, cfg->bind_addr, &s->fd, &s->port, err,
                              err_len);
    }
    if (!rc && cfg->other_family) {
        const struct net_family other = {.v6 = !cfg->fam.v6};
        rc = trap_open_socket(s, &other, 0, &s->fd_other, NULL, err, err_len);
    }
    if (rc) {
        goto cleanup;
    }
    *out = s;
    s = NULL;
    goto cleanup;
nomem:
    snprintf(err, err_len, "out of memory for the trap sender");
    rc = FLEET_ERR_NOMEM;
cleanup:
    trap_sender_free(s);
    return rc;
}

void
trap_sender_free(struct trap_sender *s)
{
    if (!s) {
        return;
    }
    if (s->fd >= 0) {
        trap_sender_flush(s);
    }
    for (uint32_t i = 0; s->slots && i < s->slot_cap; i++) {
        struct trap_pending *p = &s->slots[i];
        if (p->state == TRAP_SLOT_WAITING) {
            p->row->pending--;
            p->row->timed_out++;
        } else if (p->state == TRAP_SLOT_DISCOVERY) {
            /* Its sink's engine never became known: it never reached the wire. */
            ledger_emit_failed(&p->row->ledger);
        }
        if (p->state != TRAP_SLOT_FREE) {
            trap_slot_release(s, i);
        }
    }
    for (uint32_t i = 0; i < s->peer_count; i++) {
        loop_timer_stop(s->loop, &s->peers[i].timer);
    }
    loop_timer_stop(s->loop, &s->flush_timer);
    if (s->fd >= 0) {
        loop_unwatch(s->loop, s->fd);
        close(s->fd);
    }
    if (s->fd_other >= 0) {
        loop_unwatch(s->loop, s->fd_other);
        close(s->fd_other);
    }
    free(s->slots);
    free(s->v3_scratch);
    free(s->bufs);
    free(s);
}

/* Encode into the next batch buffer in the sender's version; FLEET_ERR_LIMIT when the message would pass
 * TRAP_MAX_MSG_BYTES. */
static enum fleet_err
trap_encode(struct trap_sender *s, uint8_t *buf, int32_t request_id, const struct trap_pdu_in *in,
            uint8_t **msg, size_t *msg_len)
{
    const struct trap_origin *from = in->from;
    uint8_t type = s->slots ? SPDU_INFORM : SPDU_TRAP_V2;

    switch (s->cfg.version) {
    case TRAP_VERSION_1:
        return trap_pdu_encode_v1(in, (const uint8_t *)s->community, s->community_len, TRAP_MAX_MSG_BYTES,
                                  buf, s->buf_cap, msg, msg_len);
    case TRAP_VERSION_3:
        if (!from->engine) {
            return FLEET_ERR_INVAL; /* the caller's bug: a v3 trap needs the device's engine */
        }
        return trap_pdu_encode_v3(in, &s->v3_user, from->engine, type, request_id, s->salt++,
                                  TRAP_MAX_MSG_BYTES, s->v3_scratch,
                                  TRAP_MAX_MSG_BYTES + TRAP_PDU_V3_HEADROOM, buf, s->buf_cap, msg, msg_len);
    default:
        return trap_pdu_encode_v2c(in, (const uint8_t *)s->community, s->community_len, type, request_id,
                                   TRAP_MAX_MSG_BYTES, buf, s->buf_cap, msg, msg_len);
    }
}

enum fleet_err
trap_send(struct trap_sender *s, const struct trap_origin *from, const struct trap_sink *sink,
          uint32_t sysuptime_ticks, const struct oid *trap_oid, const struct trap_varbind *varbinds,
          size_t varbind_count, struct trap_counters *row)
{
    union netaddr_sa peer;
    struct trap_out *o = trap_out_next(s);
    uint8_t *buf = s->bufs + (size_t)s->out_count * s->buf_cap;
    uint8_t *msg;
    size_t msg_len;
    uint32_t slot = TRAP_NO_SLOT;
    /* A device's own socket is bound to its address: no IP_PKTINFO then. A sink of the other family is
     * sent to from that family's wildcard. */
    int same = sink->ep.sa.ss_family == netaddr_af(&s->cfg.fam);
    int fd = !same ? s->fd_other : from->fd >= 0 ? from->fd : s->fd;
    struct sockaddr_storage src;
    uint8_t has_src = 0;

    memset(&peer, 0, sizeof peer);
    memcpy(&peer, &sink->ep.sa, netaddr_sa_len((const struct sockaddr *)&sink->ep.sa));
    if (same && from->fd < 0) {
        netaddr_sockaddr(&s->cfg.fam, from->addr, 0, &src);
        has_src = src.ss_family == AF_INET6
                      ? !IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6 *)&src)->sin6_addr)
                      : ((struct sockaddr_in *)&src)->sin_addr.s_addr != 0;
    }
    int32_t request_id;
    uint32_t peer_index = TRAP_NO_SLOT;
    enum fleet_err rc;
    const struct trap_pdu_in in = {.from = from,
                                   .v6 = s->cfg.fam.v6,
                                   .sysuptime_ticks = sysuptime_ticks,
                                   .trap_oid = trap_oid,
                                   .varbinds = varbinds,
                                   .varbind_count = varbind_count};

    /* Step 1: a request-id; an inform needs a pending slot, and a full table drops it. */
    if (s->slots) {
        slot = trap_slot_take(s);
        if (slot == TRAP_NO_SLOT) {
            ledger_drop_now(&row->ledger, 1);
            rc = FLEET_ERR_LIMIT;
            goto cleanup;
        }
        request_id = s->slots[slot].request_id;
    } else {
        request_id = (int32_t)s->next_request_id;
        s->next_request_id = (s->next_request_id + 1) % TRAP_REQUEST_ID_SPAN;
    }
    /* Step 2: encode into the batch buffer this entry owns; a v3 inform's PDU alone, wrapped for its
     * sink's engine at each transmission. */
    if (trap_v3_informs(s)) {
        peer_index = trap_peer_of(s, &sink->ep);
        rc = peer_index == TRAP_NO_SLOT
                 ? FLEET_ERR_LIMIT
                 : trap_pdu_encode_v3_pdu(&in, &s->v3_user, SPDU_INFORM, request_id, TRAP_MAX_MSG_BYTES, buf,
                                          s->buf_cap, &msg, &msg_len);
    } else {
        rc = trap_encode(s, buf, request_id, &in, &msg, &msg_len);
    }
    if (rc == FLEET_ERR_LIMIT) {
        ledger_drop_now(&row->ledger, 1);
    }
    if (rc) {
        goto cleanup;
    }
    /* Step 3: queue; an inform keeps its own copy for retransmissions. */
    memset(o, 0, sizeof *o);
    if (slot != TRAP_NO_SLOT) {
        struct trap_pending *p = &s->slots[slot];
        p->msg = malloc(msg_len);
        if (!p->msg) {
            /* Like a full table: nothing reached the kernel. */
            ledger_drop_now(&row->ledger, 1);
            rc = FLEET_ERR_LIMIT;
            goto cleanup;
        }
        memcpy(p->msg, msg, msg_len);
        p->msg_len = msg_len;
        p->row = row;
        p->peer = peer;
        p->src_low = from->addr;
        p->has_src = has_src;
        p->fd = fd;
        p->peer_index = peer_index;
        slot = TRAP_NO_SLOT;
        if (peer_index != TRAP_NO_SLOT && s->peers[peer_index].state != TRAP_PEER_KNOWN) {
            /* Its sink's engine is not known yet: it waits for the discovery, in no batch. */
            p->state = TRAP_SLOT_DISCOVERY;
            if (s->peers[peer_index].state == TRAP_PEER_UNKNOWN) {
                trap_peer_probe_start(s, &s->peers[peer_index]);
            }
            goto cleanup;
        }
        o->kind = TRAP_OUT_INFORM;
        o->slot = (uint32_t)(p - s->slots);
        o->request_id = request_id;
    } else {
        o->kind = TRAP_OUT_TRAP;
        o->row = row;
        o->peer = peer;
        o->src_low = from->addr;
        o->has_src = has_src;
        o->fd = fd;
        o->data = msg;
        o->len = msg_len;
    }
    s->out_count++;
cleanup:
    if (slot != TRAP_NO_SLOT) {
        trap_slot_release(s, slot);
    }
    if (!s->out_count) {
        loop_timer_stop(s->loop, &s->flush_timer);
    }
    return rc;
}

/* Write ifEntry.column.if_index into @p oid. */
static void
trap_ifentry_oid(struct oid *oid, uint32_t column, uint32_t if_index)
{
    size_t n = sizeof trap_ifentry_prefix / sizeof trap_ifentry_prefix[0];

    memcpy(oid->sub, trap_ifentry_prefix, sizeof trap_ifentry_prefix);
    oid->sub[n] = column;
    oid->sub[n + 1] = if_index;
    oid->len = (uint32_t)n + 2;
}

enum fleet_err
trap_send_link(struct trap_sender *s, const struct trap_origin *from, const struct trap_sink *sink,
               uint32_t sysuptime_ticks, int up, uint32_t if_index, int32_t admin_status, int32_t oper_status,
               struct trap_counters *row)
{
    return trap_send_link_more(s, from, sink, sysuptime_ticks, up, if_index, admin_status, oper_status, NULL,
                               0, row);
}

/* Objects trap_send_link_more() appends at most. */
#define TRAP_LINK_MORE_MAX 4

enum fleet_err
trap_send_link_more(struct trap_sender *s, const struct trap_origin *from, const struct trap_sink *sink,
                    uint32_t sysuptime_ticks, int up, uint32_t if_index, int32_t admin_status,
                    int32_t oper_status, const struct trap_varbind *more, size_t more_count,
                    struct trap_counters *row)
{
    struct oid names[3];
    struct trap_varbind vb[3 + TRAP_LINK_MORE_MAX];

    if (more_count > TRAP_LINK_MORE_MAX) {
        return FLEET_ERR_INVAL;
    }
    for (size_t i = 0; i < more_count; i++) {
        vb[3 + i] = more[i];
    }

    trap_ifentry_oid(&names[0], TRAP_IFINDEX_COLUMN, if_index);
    trap_ifentry_oid(&names[1], TRAP_IFADMINSTATUS_COLUMN, if_index);
    trap_ifentry_oid(&names[2], TRAP_IFOPERSTATUS_COLUMN, if_index);
    vb[0] = (struct trap_varbind){.name = &names[0], .value = {.tag = BER_INTEGER, .v.i = if_index}};
    vb[1] = (struct trap_varbind){.name = &names[1], .value = {.tag = BER_INTEGER, .v.i = admin_status}};
    vb[2] = (struct trap_varbind){.name = &names[2], .value = {.tag = BER_INTEGER, .v.i = oper_status}};
    return trap_send(s, from, sink, sysuptime_ticks, up ? &trap_linkup_oid : &trap_linkdown_oid, vb,
                     3 + more_count, row);
}

size_t
trap_sender_queued(const struct trap_sender *s)
{
    return s->out_count;
}

size_t
trap_sender_pending(const struct trap_sender *s)
{
    return s->waiting;
}

const struct trap_sender_stats *
trap_sender_stats(const struct trap_sender *s)
{
    return &s->stats;
}

uint16_t
trap_sender_port(const struct trap_sender *s)
{
    return s->port;
}
