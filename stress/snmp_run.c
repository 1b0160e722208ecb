/*
 * "fleetsim-stress snmp": poll a fleet's SNMP agents the way a collector
 * (OpenNMS Collectd, Prometheus snmp_exporter) does. A collection of one
 * device walks every root of the plan (a profile's collection, or --oids)
 * with SNMPv2c GETBULKs, one request in flight at a time, up to
 * --max-vars-per-pdu roots per request. Up to --concurrency collections run
 * at once, each in a "slot"; a device is never collected by two slots at
 * once, and goes to the back of the queue after each collection until it
 * has had --rounds of them (or until --duration is over).
 *
 * Descriptors stay few: every SNMPRUN_SLOTS_PER_SOCKET slots share one UDP
 * socket, and a reply finds its slot by the low bits of its request-id
 * (the slot index; the high bits count the slot's requests so that a late
 * reply to an earlier attempt does not match). A reply that matches no
 * in-flight request, or comes from another address than the slot's
 * device, is counted as stray and dropped. Each retry is a new request-id.
 *
 * Memory: a device costs 9 bytes (queue entry, rounds, first failure); a
 * slot costs its struct plus --max-vars-per-pdu window cursors of a full
 * struct oid (516 bytes) each, so 10,000 collections at once with the
 * default window take about 52 MB. Cursors kept BER-encoded in a small
 * inline buffer would cut that tenfold if it ever matters.
 *
 * Measured: collection time T (first send to last response), requests P,
 * response time of every answered request, numeric samples, and how well
 * T = P x R + c describes the collections (snmp_walk.h).
 *
 * With --v3-user the same GETBULKs go out as SNMPv3 messages at the user's
 * level (wire/susm.h). Every device is its own engine: the first collection
 * of a device starts with a discovery request (counted as one of its
 * requests, P), whose Report gives the engine ID, boots and time, kept per
 * device for the rest of the run. The msgID equals the request-id and is
 * matched the same way (a Report to an encrypted request carries request-id
 * 0). A message that fails verification (digest, decryption, level, time
 * window) is counted as malformed and left to the timeout; notInTimeWindow
 * resynchronizes the engine's clock and sends the request once more; any
 * other usmStats Report ends the collection and is counted by name under
 * the error responses. v3 adds 64 bytes a device and 176 a slot.
 */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "loop.h"
#include "profile.h"
#include "run.h"
#include "snmp_walk.h"
#include "spdu.h"
#include "stats.h"
#include "susm.h"

/* In-flight collections that share one UDP socket: 10,000 at once take 40 descriptors. */
#define SNMPRUN_SLOTS_PER_SOCKET 256
/* Datagrams read from one socket per wakeup, so one busy socket cannot starve the timers. */
#define SNMPRUN_READS_PER_EVENT 64
/* Largest UDP payload over IPv4: the receive buffer and the request size limit. */
#define SNMPRUN_DATAGRAM_MAX_BYTES 65507
/* Receive buffer asked of the kernel per socket (it may grant less: net.core.rmem_max). */
#define SNMPRUN_SOCKET_RCVBUF_BYTES (4 << 20)
/* Progress line refresh on a terminal. */
#define SNMPRUN_PROGRESS_INTERVAL_MS 250
/* Failed devices listed in the report, one a line; the manifest lists every one. */
#define SNMPRUN_FAILED_PRINT_MAX 10
/* The fit T = P x R + c needs this many collections to mean anything. */
#define SNMPRUN_FIT_MIN_COLLECTIONS 3
/* Below this R^2 the fit is printed, flagged as poor: the model explains less than half of T's spread. */
#define SNMPRUN_FIT_POOR_R_SQUARED 0.5
/* Collection times reserved up front; more grow the set while running. */
#define SNMPRUN_RESERVE_MAX (1u << 20)
/* Completed collections kept for the fit, at most (24 MiB): past it every other one kept is dropped and
 * only every record_stride-th collection is kept from then on, so a long run fits a systematic sample of
 * its collections in bounded memory (issue 28) instead of one record per collection. */
#define SNMPRUN_RECORDS_MAX (1u << 20)
/* error-status values with a name (RFC 3416: 0..18); anything above is counted as "other". */
#define SNMPRUN_ERROR_STATUS_NAMED 19
/* usmStats counters a Report may name (enum susm_report_kind 1..6), counted under the error responses. */
#define SNMPRUN_USM_REPORTS (SUSM_REPORT_DECRYPTION_ERRORS + 1)

enum snmprun_failure {
    SNMPRUN_OK = 0,            /* completed */
    SNMPRUN_FAIL_TIMEOUT,      /* no response after every retry */
    SNMPRUN_FAIL_ERROR_STATUS, /* a response with a non-zero error-status */
    SNMPRUN_FAIL_PROTOCOL,     /* a response the walk cannot use (OID not increasing, ...) */
    SNMPRUN_FAIL_REQUEST,      /* the next request cannot be encoded (too big) */
    SNMPRUN_FAIL_USM,          /* v3: a usmStats Report (unknown user, wrong digest, ...) */
    SNMPRUN_FAIL_COUNT,
};

static const char *const failure_names[SNMPRUN_FAIL_COUNT] = {"none",     "timeout",         "error-status",
                                                              "protocol", "request-too-big", "usm-report"};

/* The name of a named error-status (below SNMPRUN_ERROR_STATUS_NAMED), "other" beyond. */
static const char *
status_name(uint64_t es)
{
    const char *name = es < SNMPRUN_ERROR_STATUS_NAMED ? spdu_error_status_name((int)es) : NULL;
    return name ? name : "other";
}

struct snmprun;

/* One collection in progress; slots are reused, never freed while the loop runs. */
struct snmprun_slot {
    struct loop_timer timer; /* response timeout; armed while in_flight */
    struct snmprun *run;     /* back pointer */
    struct walk walk;        /* the walk; valid while busy */
    uint32_t index;          /* position in run->slots: the low bits of its request-ids */
    int fd;                  /* socket its requests go out on and replies come in on */
    uint32_t device;         /* device collected; valid while busy */
    int busy;                /* 1 while a collection runs */
    int in_flight;           /* 1 while a request waits for its response */
    int discovering;         /* v3: 1 while the collection's request is the engine discovery */
    int resynced;            /* v3: 1 once the current request was sent again after notInTimeWindow */
    int32_t request_id;      /* request-id (and v3 msgID) of that request; valid while in_flight */
    uint32_t seq;            /* requests this slot has sent, for unique request-ids */
    uint32_t attempt;        /* retries of the current request so far, 0..--retries */
    uint32_t requests;       /* distinct requests of this collection (P) */
    uint32_t retries;        /* retransmissions in this collection */
    monotime_us started_us;  /* first send of this collection */
    monotime_us sent_us;     /* send of the request in flight */
};

/* A completed collection, for percentiles and the fit. */
struct snmprun_record {
    uint32_t t_us;     /* collection time, microseconds */
    uint32_t requests; /* distinct requests (P) */
    uint64_t samples;  /* numeric values collected */
    uint64_t values;   /* all values inside the walked subtrees */
};

struct snmprun {
    const struct stress_options *o;        /* parameters */
    struct loop *loop;                     /* the one loop */
    struct profile *profile;               /* loaded profile, or NULL with --oids */
    struct walk_plan plan;                 /* roots every collection walks */
    const struct oid **names;              /* plan.max_vars request OIDs, lent to each send */
    int *fds;                              /* UDP sockets */
    uint32_t fd_count;                     /* entries in fds */
    struct snmprun_slot *slots;            /* min(concurrency, devices) */
    uint32_t slot_count;                   /* entries in slots */
    uint32_t slot_bits;                    /* request-id bits taken by the slot index */
    struct walk_column *cols;              /* slot_count * plan.max_vars window entries */
    uint32_t *free_slots;                  /* stack of idle slot indexes */
    uint32_t free_count;                   /* entries on it */
    uint32_t *queue;                       /* ring of devices waiting for a collection */
    uint32_t queue_head;                   /* first entry */
    uint32_t queue_len;                    /* entries; at most device_count */
    uint32_t *rounds_done;                 /* per device: collections ended (completed or failed) */
    uint8_t *device_failure;               /* per device: enum snmprun_failure of its first failure */
    int starting;                          /* 1 inside start_more(), which must not nest */
    monotime_us start_us;                  /* first send */
    monotime_us end_us;                    /* last collection ended */
    monotime_us deadline_us;               /* --duration: no collection starts after this; else 0 */
    uint8_t *rx;                           /* receive buffer, SNMPRUN_DATAGRAM_MAX_BYTES */
    uint8_t *tx;                           /* encode buffer */
    size_t tx_cap;                         /* its size */
    struct latency coll_time;              /* completed collections' T, us */
    struct latency resp_time;              /* answered requests' response time, us */
    double resp_sum_us;                    /* sum of resp_time, for the mean */
    struct snmprun_record *records;        /* completed collections */
    size_t record_count;                   /* entries used */
    size_t record_cap;                     /* entries allocated, at most SNMPRUN_RECORDS_MAX */
    uint64_t record_stride;                /* every record_stride-th completed collection is kept (>= 1) */
    uint64_t collections;                  /* collections ended */
    uint64_t completed;                    /* of which completed */
    uint64_t failed;                       /* of which failed */
    uint64_t failures[SNMPRUN_FAIL_COUNT]; /* failed collections by cause */
    uint64_t requests;                     /* distinct requests sent */
    uint64_t attempts;                     /* datagrams sent: requests plus retries */
    uint64_t responses;                    /* matching responses received */
    uint64_t request_timeouts;             /* attempts whose timer expired */
    uint64_t retries;                      /* retransmissions */
    uint64_t stray;                        /* replies matching no in-flight request or address */
    uint64_t malformed;                    /* datagrams that do not decode as SNMP */
    uint64_t send_errors;                  /* sendto() failures (left to the timeout) */
    uint64_t error_status[SNMPRUN_ERROR_STATUS_NAMED + 1]; /* responses by error-status; last: others */
    uint64_t samples;                                      /* numeric values of completed collections */
    uint64_t values;                                       /* all values of completed collections */
    uint64_t varbinds;  /* varbinds in the responses of completed collections (what agents encoded) */
    double cpu_start_s; /* client CPU at the start */
    double cpu_end_s;   /* at the end */
    int progress;       /* 1 when stdout is a terminal */
    struct loop_timer progress_timer; /* refreshes the progress line, or prints the next progress line */
    char first_failure[256];          /* for the report */
    /* SNMPv3, with --v3-user */
    int v3;                                    /* 1 with --v3-user: the fields below are used */
    struct walk_v3_user v3_user;               /* the user, its keys derived from the passwords */
    struct walk_v3_engine *engines;            /* per device, its engine once discovered */
    struct susm_user *slot_keys;               /* per slot, keys localized for the device it collects */
    uint8_t *v3_tx;                            /* the whole message, SNMPRUN_DATAGRAM_MAX_BYTES */
    uint64_t salt;                             /* AES salt of the next message; random start, counts */
    uint64_t discoveries;                      /* engines discovered */
    uint64_t time_resyncs;                     /* requests sent again after notInTimeWindow */
    uint64_t usm_reports[SNMPRUN_USM_REPORTS]; /* Reports received (not discovery) by usmStats kind */
    struct persec completed_per_s;             /* collections completed, per second since start_us */
    struct persec failed_per_s;                /* collections failed, per second */
    struct persec timeouts_per_s;              /* attempts whose timer expired, per second */
    struct persec retries_per_s;               /* retransmissions, per second */
};

/* Collections drawn with the fit in the manifest: at most this many, evenly spread over the run. */
#define SNMPRUN_FIT_POINTS_MAX 1000

/* The second of the run @p now is in, from its first send. */
static size_t
run_second(const struct snmprun *run, monotime_us now)
{
    return now > run->start_us ? (size_t)((now - run->start_us) / 1000000u) : 0;
}

static void start_more(struct snmprun *run);

/* Stop the loop once nothing runs and nothing waits. Inside start_more() the queue is being drained,
 * so its caller checks afterwards. */
static void
check_done(struct snmprun *run)
{
    if (!run->starting && run->free_count == run->slot_count && !run->queue_len) {
        if (!run->end_us) {
            run->end_us = loop_clock_monotonic();
            run->cpu_end_s = stats_cpu_seconds();
        }
        loop_stop(run->loop);
    }
}

static void
record_completed(struct snmprun *run, struct snmprun_slot *s, uint32_t t_us)
{
    /* run->completed counts this collection already: the first one is kept, then one per stride. */
    if ((run->completed - 1) % run->record_stride) {
        return;
    }
    if (run->record_count == SNMPRUN_RECORDS_MAX) {
        for (size_t i = 0; i < run->record_count / 2; i++) {
            run->records[i] = run->records[2 * i];
        }
        run->record_count /= 2;
        run->record_stride *= 2;
        if ((run->completed - 1) % run->record_stride) {
            return;
        }
    }
    if (run->record_count == run->record_cap) {
        size_t cap = run->record_cap ? run->record_cap * 2 : 1024;
        struct snmprun_record *grown = realloc(run->records, cap * sizeof *grown);
        if (!grown) {
            return; /* the percentiles and the fit lose this collection; the counts keep it */
        }
        run->records = grown;
        run->record_cap = cap;
    }
    run->records[run->record_count++] =
        (struct snmprun_record){t_us, s->requests, s->walk.samples, s->walk.values};
}

/* The collection in @p s ended; free the slot, requeue the device, start the next ones. */
static void
finish(struct snmprun_slot *s, enum snmprun_failure why, const char *detail)
{
    struct snmprun *run = s->run;
    monotime_us now = loop_clock_monotonic();
    uint64_t t = now - s->started_us;
    uint32_t t_us = t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
    char where[NETADDR_TEXT_BYTES];

    run->collections++;
    /* Out of memory here costs only a point of the per-second curves. */
    (void)persec_add(why == SNMPRUN_OK ? &run->completed_per_s : &run->failed_per_s, run_second(run, now), 1);
    if (why == SNMPRUN_OK) {
        run->completed++;
        run->samples += s->walk.samples;
        run->values += s->walk.values;
        run->varbinds += s->walk.varbinds;
        latency_add(&run->coll_time, t_us);
        record_completed(run, s, t_us);
    } else {
        run->failed++;
        run->failures[why]++;
        if (!run->device_failure[s->device]) {
            run->device_failure[s->device] = (uint8_t)why;
        }
        if (!run->first_failure[0]) {
            run_target_text(run->o, s->device, where, sizeof where);
            snprintf(run->first_failure, sizeof run->first_failure, "device %u (%s): %s", (unsigned)s->device,
                     where, detail);
        }
    }
    run->rounds_done[s->device]++;
    s->busy = 0;
    s->in_flight = 0;
    loop_timer_stop(run->loop, &s->timer);
    run->free_slots[run->free_count++] = s->index;
    if (run->deadline_us ? now < run->deadline_us : run->rounds_done[s->device] < run->o->rounds) {
        run->queue[(run->queue_head + run->queue_len++) % run->o->device_count] = s->device;
    }
    start_more(run);
    check_done(run);
}

static void on_timeout(struct loop *loop, struct loop_timer *timer);

/* Why a request cannot be sent: a GETBULK of the window's OIDs passes the datagram size. */
#define SNMPRUN_TOO_BIG "the next GETBULK does not fit in a datagram"

/* Encode the walk's next GETBULK as a v2c message. @return NULL, or why it cannot be. */
static const char *
encode_v2c(struct snmprun_slot *s, uint8_t **out, size_t *out_len)
{
    struct snmprun *run = s->run;
    const struct stress_options *o = run->o;
    size_t community_len = strlen(o->community);
    uint32_t n = walk_request(&s->walk, run->names);
    struct spdu_value null_value = {.tag = BER_NULL};
    struct spdu_encoder e;

    spdu_enc_init(&e, run->tx, run->tx_cap, SPDU_HEADROOM(community_len),
                  spdu_bindings_budget(SNMPRUN_DATAGRAM_MAX_BYTES, community_len, s->request_id));
    for (uint32_t i = 0; i < n; i++) {
        if (spdu_enc_binding(&e, run->names[i], &null_value) != FLEET_OK) {
            return SNMPRUN_TOO_BIG;
        }
    }
    spdu_enc_finish_message(&e, SPDU_V2C, (const uint8_t *)o->community, community_len, SPDU_GETBULK,
                            s->request_id, 0, (int32_t)o->max_repetitions, out, out_len);
    return NULL;
}

/* Encode the collection's next v3 message, the discovery or a GETBULK at the user's level, into
 * run->v3_tx; msgID and request-id are both s->request_id. @return NULL, or why it cannot be. */
static const char *
encode_v3(struct snmprun_slot *s, uint8_t **out, size_t *out_len)
{
    struct snmprun *run = s->run;
    uint32_t n;
    struct spdu_value null_value = {.tag = BER_NULL};
    struct spdu_encoder e;
    struct susm_out v3;
    enum fleet_err rc;
    uint8_t *pdu;
    size_t pdu_len;

    *out = run->v3_tx;
    if (s->discovering) {
        return susm_client_discovery(s->request_id, s->request_id, SNMPRUN_DATAGRAM_MAX_BYTES, run->v3_tx,
                                     SNMPRUN_DATAGRAM_MAX_BYTES, out_len)
                   ? "the discovery request cannot be encoded"
                   : NULL;
    }
    walk_v3_request_out(&run->engines[s->device], &run->v3_user, &run->slot_keys[s->index], s->request_id,
                        SNMPRUN_DATAGRAM_MAX_BYTES, run->salt++, loop_clock_monotonic(), &v3);
    n = walk_request(&s->walk, run->names);
    spdu_enc_init(&e, run->tx, run->tx_cap, SPDU_HEADROOM(0),
                  susm_bindings_budget(SNMPRUN_DATAGRAM_MAX_BYTES, &v3, s->request_id));
    for (uint32_t i = 0; i < n; i++) {
        if (spdu_enc_binding(&e, run->names[i], &null_value) != FLEET_OK) {
            return SNMPRUN_TOO_BIG;
        }
    }
    spdu_enc_finish_pdu(&e, SPDU_GETBULK, s->request_id, 0, (int32_t)run->o->max_repetitions, &pdu, &pdu_len);
    rc = susm_encode(&v3, pdu, pdu_len, run->v3_tx, SNMPRUN_DATAGRAM_MAX_BYTES, out_len);
    if (rc == FLEET_ERR_LIMIT) {
        return SNMPRUN_TOO_BIG;
    }
    return rc ? "the request cannot be signed or encrypted (libcrypto failed)" : NULL;
}

/* Encode and send the collection's next request under a new request-id. @return NULL, or why it cannot
 * be encoded (the caller fails the collection). A failed sendto() is left to the timeout. */
static const char *
send_request(struct snmprun_slot *s)
{
    struct snmprun *run = s->run;
    struct sockaddr_storage to;
    socklen_t to_len;
    const char *why;
    uint8_t *out;
    size_t out_len;
    uint32_t addr;
    uint16_t port;

    run_target(run->o, s->device, &addr, &port);
    to_len = netaddr_sockaddr(&run->o->ip_fam, addr, port, &to);
    s->seq++;
    s->request_id = (int32_t)((((uint64_t)s->seq << run->slot_bits) | s->index) & 0x7fffffffu);
    why = run->v3 ? encode_v3(s, &out, &out_len) : encode_v2c(s, &out, &out_len);
    if (why) {
        return why;
    }
    s->sent_us = loop_clock_monotonic();
    s->in_flight = 1;
    run->attempts++;
    if (sendto(s->fd, out, out_len, 0, (const struct sockaddr *)&to, to_len) < 0) {
        run->send_errors++;
    }
    loop_timer_start(run->loop, &s->timer, s->sent_us + (monotime_us)run->o->timeout_ms * 1000u, on_timeout);
    return NULL;
}

/* Send the next distinct request of the collection, or fail it. */
static void
next_request(struct snmprun_slot *s)
{
    const char *why;

    s->requests++;
    s->attempt = 0;
    s->resynced = 0;
    s->run->requests++;
    if ((why = send_request(s))) {
        finish(s, SNMPRUN_FAIL_REQUEST, why);
    }
}

static void
on_timeout(struct loop *loop, struct loop_timer *timer)
{
    struct snmprun_slot *s = (struct snmprun_slot *)((char *)timer - offsetof(struct snmprun_slot, timer));
    struct snmprun *run = s->run;
    const char *why;
    char detail[64];

    (void)loop;
    s->in_flight = 0;
    run->request_timeouts++;
    (void)persec_add(&run->timeouts_per_s, run_second(run, loop_clock_monotonic()), 1);
    if (s->attempt < run->o->retries) {
        s->attempt++;
        s->retries++;
        run->retries++;
        (void)persec_add(&run->retries_per_s, run_second(run, loop_clock_monotonic()), 1);
        if ((why = send_request(s))) {
            finish(s, SNMPRUN_FAIL_REQUEST, why);
        }
        return;
    }
    snprintf(detail, sizeof detail, "timeout: no response after %u retries", (unsigned)run->o->retries);
    finish(s, SNMPRUN_FAIL_TIMEOUT, detail);
}

/* The request in flight of @p s is answered: measure it and stop its timer. */
static void
answered(struct snmprun_slot *s)
{
    struct snmprun *run = s->run;
    uint64_t rt = loop_clock_monotonic() - s->sent_us;

    latency_add(&run->resp_time, rt > UINT32_MAX ? UINT32_MAX : (uint32_t)rt);
    run->resp_sum_us += (double)rt;
    run->responses++;
    s->in_flight = 0;
    loop_timer_stop(run->loop, &s->timer);
}

/* A Response PDU to the GETBULK of @p s: advance the walk, or end the collection. */
static void
use_response(struct snmprun_slot *s, const struct spdu_pdu *pdu)
{
    struct snmprun *run = s->run;
    const char *why = NULL;
    char detail[96];

    if (pdu->error_status != SPDU_NO_ERROR) {
        int32_t es = pdu->error_status;
        run->error_status[es > 0 && es < SNMPRUN_ERROR_STATUS_NAMED ? es : SNMPRUN_ERROR_STATUS_NAMED]++;
        snprintf(detail, sizeof detail, "error-status %s (%d), error-index %d",
                 es > 0 ? status_name((uint64_t)es) : "other", (int)es, (int)pdu->error_index);
        finish(s, SNMPRUN_FAIL_ERROR_STATUS, detail);
        return;
    }
    if (walk_response(&s->walk, pdu, &why) != FLEET_OK) {
        snprintf(detail, sizeof detail, "unusable response: %s", why);
        finish(s, SNMPRUN_FAIL_PROTOCOL, detail);
        return;
    }
    if (walk_finished(&s->walk)) {
        finish(s, SNMPRUN_OK, NULL);
        return;
    }
    next_request(s);
}

/* @return The slot whose request in flight @p id (request-id or msgID) answers from @p from (its device's
 * agent, of either family) on @p fd, or NULL: a stray. */
static struct snmprun_slot *
match_slot(struct snmprun *run, int fd, const struct sockaddr *from, int32_t id)
{
    uint32_t index = (uint32_t)id & ((1u << run->slot_bits) - 1);
    struct snmprun_slot *s = &run->slots[index < run->slot_count ? index : 0];
    uint32_t addr, from_addr;
    uint16_t port, from_port;

    if (id < 0 || index >= run->slot_count || !s->in_flight || s->request_id != id || s->fd != fd ||
        netaddr_from_sockaddr(&run->o->ip_fam, from, &from_addr, &from_port)) {
        return NULL;
    }
    run_target(run->o, s->device, &addr, &port);
    return from_addr == addr && from_port == port ? s : NULL;
}

/* One datagram from @p fd: match it to its slot, then advance or end that collection. */
static void
on_datagram(struct snmprun *run, int fd, const struct sockaddr *from, const uint8_t *buf, size_t len)
{
    struct spdu_message m;
    struct snmprun_slot *s;

    if (spdu_message_decode(buf, len, &m) != FLEET_OK) {
        run->malformed++;
        return;
    }
    if (m.version != SPDU_V2C || m.pdu.type != SPDU_RESPONSE ||
        !(s = match_slot(run, fd, from, m.pdu.request_id))) {
        run->stray++;
        return;
    }
    answered(s);
    use_response(s, &m.pdu);
}

/* What a usmStats Report that ends a collection says about the setup. */
static const char *
usm_report_hint(enum susm_report_kind kind)
{
    switch (kind) {
    case SUSM_REPORT_UNSUPPORTED_SEC_LEVELS:
        return "the agent's user does not allow this security level";
    case SUSM_REPORT_NOT_IN_TIME_WINDOWS:
        return "the engine's clock is out of the time window even after resynchronizing";
    case SUSM_REPORT_UNKNOWN_USER_NAMES:
        return "the agent has no such user";
    case SUSM_REPORT_UNKNOWN_ENGINE_IDS:
        return "the engine ID changed; the next collection discovers it again";
    case SUSM_REPORT_WRONG_DIGESTS:
        return "the authentication password or protocol differs from the agent's";
    case SUSM_REPORT_DECRYPTION_ERRORS:
        return "the privacy password differs from the agent's";
    case SUSM_REPORT_NONE:
        break;
    }
    return "";
}

/*
 * One SNMPv3 datagram: match it by msgID (keys and request-id are known only then), verify and decrypt
 * it with the keys of its slot, then act on what it means (walk_v3_classify()). Modifies @p buf.
 */
static void
on_datagram_v3(struct snmprun *run, int fd, const struct sockaddr *from, uint8_t *buf, size_t len)
{
    enum susm_report_kind failure, kind;
    enum walk_v3_verdict verdict;
    struct snmprun_slot *s;
    struct susm_msg msg;
    const char *why;
    char detail[192];
    int32_t msg_id;

    if (walk_v3_peek_msg_id(buf, len, &msg_id) != FLEET_OK) {
        run->malformed++;
        return;
    }
    if (!(s = match_slot(run, fd, from, msg_id))) {
        run->stray++;
        return;
    }
    if (susm_client_receive(buf, len, s->discovering ? NULL : &run->slot_keys[s->index], &msg, &failure) !=
        FLEET_OK) {
        run->malformed++;
        return;
    }
    verdict = walk_v3_classify(&run->engines[s->device], s->discovering,
                               s->discovering ? SUSM_FLAG_REPORTABLE : run->v3_user.flags, &msg, failure,
                               loop_clock_monotonic(), &kind, &why);
    if (verdict == WALK_V3_UNVERIFIED) {
        run->malformed++; /* like any datagram we cannot trust: the request waits for its timeout */
        return;
    }
    if (verdict == WALK_V3_RESPONSE && msg.pdu.request_id != s->request_id) {
        run->stray++;
        return;
    }
    answered(s);

    /* Discovered: localize the keys for this engine, then the walk starts. */
    if (verdict == WALK_V3_DISCOVERED) {
        run->discoveries++;
        s->discovering = 0;
        if (walk_v3_localize(&run->v3_user, &run->engines[s->device], &run->slot_keys[s->index]) !=
            FLEET_OK) {
            finish(s, SNMPRUN_FAIL_REQUEST, "the user's keys cannot be localized (libcrypto failed)");
            return;
        }
        next_request(s);
        return;
    }
    if (verdict == WALK_V3_RESPONSE) {
        use_response(s, &msg.pdu);
        return;
    }
    if (verdict == WALK_V3_UNUSABLE) {
        snprintf(detail, sizeof detail, "unusable response: %s", why);
        finish(s, SNMPRUN_FAIL_PROTOCOL, detail);
        return;
    }

    /* A usmStats Report. notInTimeWindow updated the engine's clock: the same request once more. */
    run->usm_reports[kind]++;
    if (verdict == WALK_V3_RESYNC && !s->resynced) {
        s->resynced = 1;
        run->time_resyncs++;
        if ((why = send_request(s))) {
            finish(s, SNMPRUN_FAIL_REQUEST, why);
        }
        return;
    }
    snprintf(detail, sizeof detail, "Report %s: %s", walk_v3_report_name(kind), usm_report_hint(kind));
    finish(s, SNMPRUN_FAIL_USM, detail);
}

static void
on_readable(struct loop *loop, int fd, uint32_t events, void *data)
{
    struct snmprun *run = data;
    struct sockaddr_storage from;
    socklen_t from_len;
    ssize_t got;

    (void)loop;
    (void)events;
    for (int i = 0; i < SNMPRUN_READS_PER_EVENT; i++) {
        from_len = sizeof from;
        got = recvfrom(fd, run->rx, SNMPRUN_DATAGRAM_MAX_BYTES, MSG_DONTWAIT, (struct sockaddr *)&from,
                       &from_len);
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            break; /* EAGAIN, or an ICMP error queued on the socket: nothing to read */
        }
        if (from_len > sizeof from || from.ss_family != netaddr_af(&run->o->ip_fam)) {
            run->stray++;
        } else if (run->v3) {
            on_datagram_v3(run, fd, (const struct sockaddr *)&from, run->rx, (size_t)got);
        } else {
            on_datagram(run, fd, (const struct sockaddr *)&from, run->rx, (size_t)got);
        }
    }
}

/* Give idle slots to waiting devices. Never nests: a collection failing at its first send ends
 * inside this loop, and its finish() returns here instead of recursing once per device. */
static void
start_more(struct snmprun *run)
{
    const struct stress_options *o = run->o;

    if (run->starting) {
        return;
    }
    run->starting = 1;
    if (run->deadline_us && loop_clock_monotonic() >= run->deadline_us) {
        run->queue_len = 0; /* --duration is over: what is running finishes, nothing new starts */
    }
    while (run->free_count && run->queue_len) {
        struct snmprun_slot *s = &run->slots[run->free_slots[--run->free_count]];
        uint32_t device = run->queue[run->queue_head];

        run->queue_head = (run->queue_head + 1) % o->device_count;
        run->queue_len--;
        s->device = device;
        s->busy = 1;
        s->requests = 0;
        s->retries = 0;
        walk_start(&s->walk, &run->plan, run->cols + (size_t)s->index * run->plan.max_vars);
        s->started_us = loop_clock_monotonic();
        /* v3: discover the device's engine first, or localize the keys for the one already known. */
        s->discovering = run->v3 && !run->engines[device].peer.engine_id_len;
        if (run->v3 && !s->discovering &&
            walk_v3_localize(&run->v3_user, &run->engines[device], &run->slot_keys[s->index]) != FLEET_OK) {
            finish(s, SNMPRUN_FAIL_REQUEST, "the user's keys cannot be localized (libcrypto failed)");
            continue;
        }
        next_request(s);
    }
    run->starting = 0;
}

static void
on_progress(struct loop *loop, struct loop_timer *timer)
{
    struct snmprun *run = (struct snmprun *)((char *)timer - offsetof(struct snmprun, progress_timer));
    const struct stress_options *o = run->o;
    double elapsed_s = (double)(loop_clock_monotonic() - run->start_us) / 1e6;
    uint64_t total = (uint64_t)o->device_count * o->rounds;
    int width = 30;
    int filled;

    if (o->duration_s) {
        filled = (int)(elapsed_s / o->duration_s * width);
        total = 0;
    } else {
        filled = total ? (int)((double)run->collections / (double)total * width) : 0;
    }
    filled = filled > width ? width : filled;
    printf("\r[%.*s%*s] %" PRIu64, filled, "##############################", width - filled, "",
           run->collections);
    if (total) {
        printf("/%" PRIu64, total);
    }
    printf(" collections %.0f/s, %" PRIu64 " failed, %.1f s  ",
           elapsed_s > 0 ? run->collections / elapsed_s : 0, run->failed, elapsed_s);
    fflush(stdout);
    loop_timer_start(loop, timer, loop_now_us(loop) + SNMPRUN_PROGRESS_INTERVAL_MS * 1000u, on_progress);
}

/* Without a terminal (stderr): a line every RUN_PROGRESS_LINE_US, for a log. */
static void
on_progress_line(struct loop *loop, struct loop_timer *timer)
{
    struct snmprun *run = (struct snmprun *)((char *)timer - offsetof(struct snmprun, progress_timer));
    double elapsed_s = (double)(loop_clock_monotonic() - run->start_us) / 1e6;

    if (run->o->duration_s) {
        run_progress_line(run->start_us, "%" PRIu64 " collections ended (%" PRIu64 " failed), %.1f/s",
                          run->collections, run->failed, elapsed_s > 0 ? run->collections / elapsed_s : 0.0);
    } else {
        run_progress_line(run->start_us,
                          "%" PRIu64 " of %" PRIu64 " collections ended (%" PRIu64 " failed), %.1f/s",
                          run->collections, (uint64_t)run->o->device_count * run->o->rounds, run->failed,
                          elapsed_s > 0 ? run->collections / elapsed_s : 0.0);
    }
    loop_timer_start(loop, timer, loop_now_us(loop) + RUN_PROGRESS_LINE_US, on_progress_line);
}

/* Summary numbers of the completed collections. */
struct snmprun_summary {
    double elapsed_s;            /* first send to last collection ended */
    double p_mean, p_min, p_max; /* requests per collection */
    double s_mean, s_min, s_max; /* samples per collection */
    double v_mean;               /* values per collection */
    double r_mean_us;            /* mean response time */
    double samples_per_s;        /* samples of completed collections per second */
    double cpu_s;                /* client CPU time */
    struct walk_fit fit;         /* T = P x R + c */
};

static int
summarize(struct snmprun *run, struct snmprun_summary *sum)
{
    double *t = NULL;
    uint32_t *p = NULL;
    size_t n = run->record_count;

    memset(sum, 0, sizeof *sum);
    sum->elapsed_s = (double)(run->end_us - run->start_us) / 1e6;
    sum->cpu_s = run->cpu_end_s - run->cpu_start_s;
    sum->r_mean_us = run->responses ? run->resp_sum_us / (double)run->responses : 0.0;
    sum->samples_per_s = sum->elapsed_s > 0 ? (double)run->samples / sum->elapsed_s : 0.0;
    latency_sort(&run->coll_time);
    latency_sort(&run->resp_time);
    if (!n) {
        return 0;
    }
    t = malloc(n * sizeof *t);
    p = malloc(n * sizeof *p);
    if (!t || !p) {
        free(t);
        free(p);
        return -1;
    }
    sum->p_min = sum->s_min = 1e300;
    for (size_t i = 0; i < n; i++) {
        const struct snmprun_record *r = &run->records[i];
        t[i] = r->t_us;
        p[i] = r->requests;
        sum->p_mean += r->requests;
        sum->s_mean += (double)r->samples;
        sum->v_mean += (double)r->values;
        sum->p_min = r->requests < sum->p_min ? r->requests : sum->p_min;
        sum->p_max = r->requests > sum->p_max ? r->requests : sum->p_max;
        sum->s_min = (double)r->samples < sum->s_min ? (double)r->samples : sum->s_min;
        sum->s_max = (double)r->samples > sum->s_max ? (double)r->samples : sum->s_max;
    }
    sum->p_mean /= (double)n;
    sum->s_mean /= (double)n;
    sum->v_mean /= (double)n;
    walk_fit_compute(t, p, n, sum->r_mean_us, &sum->fit);
    free(t);
    free(p);
    return 0;
}

/* Why the fit means nothing, or NULL when it was fitted. */
static const char *
fit_not_fitted(const struct snmprun_summary *sum, char *buf, size_t len)
{
    const struct walk_fit *f = &sum->fit;

    if (!f->n) {
        snprintf(buf, len, "no collection completed");
    } else if (f->n < SNMPRUN_FIT_MIN_COLLECTIONS) {
        snprintf(buf, len, "%zu collection%s completed, at least %d needed", f->n, f->n == 1 ? "" : "s",
                 SNMPRUN_FIT_MIN_COLLECTIONS);
    } else if (sum->p_min == sum->p_max) {
        /* With one P the model reduces to the mean of T: R^2 is 0 by construction, the error is T's spread.
         */
        snprintf(buf, len, "every collection took the same number of requests, %.0f", sum->p_min);
    } else {
        return NULL;
    }
    return buf;
}

/* A fit that was made explains little of T. */
static int
fit_poor(const struct walk_fit *f)
{
    return f->r_squared_valid && f->r_squared < SNMPRUN_FIT_POOR_R_SQUARED;
}

static void
report(struct snmprun *run, const struct snmprun_summary *sum)
{
    char ip_text[NETADDR_TEXT_BYTES];
    const struct stress_options *o = run->o;
    const struct walk_fit *f = &sum->fit;
    uint32_t listed = 0;
    uint32_t failed_devices = 0;
    int any = 0;
    char where[NETADDR_TEXT_BYTES];
    char pct[3][24];
    char why[128];

    printf("fleetsim-stress snmp: %u devices from %s, concurrency %u, %u OIDs (%s%s), "
           "max-repetitions %u, max-vars-per-pdu %u, timeout %u ms, retries %u, ",
           (unsigned)o->device_count, run_target_text(o, 0, ip_text, sizeof ip_text),
           (unsigned)o->concurrency, (unsigned)run->plan.count, o->oids ? "--oids" : "profile ",
           o->oids ? "" : o->profile, (unsigned)o->max_repetitions, (unsigned)o->max_vars,
           (unsigned)o->timeout_ms, (unsigned)o->retries);
    if (o->duration_s) {
        printf("duration %u s\n", (unsigned)o->duration_s);
    } else {
        printf("rounds %u\n", (unsigned)o->rounds);
    }
    if (run->v3) {
        printf("SNMPv3 user %.*s, %s (auth %s, priv %s): %" PRIu64 " engines discovered, %" PRIu64
               " requests resent after notInTimeWindow\n",
               (int)o->v3.name_len, o->v3.name, walk_v3_level_name(run->v3_user.flags), o->v3.auth_name,
               susm_priv_name(o->v3.priv), run->discoveries, run->time_resyncs);
    }
    if (run_interrupted()) {
        printf("interrupted by %s after %.3f s: collections in progress are not counted\n",
               run_interrupted_name(), sum->elapsed_s);
    }
    printf("collections: %" PRIu64 " completed, %" PRIu64 " failed in %.3f s (%.1f/s)\n", run->completed,
           run->failed, sum->elapsed_s, sum->elapsed_s > 0 ? run->collections / sum->elapsed_s : 0.0);
    printf("collection time ms: p50 %s p99 %s max %s\n",
           latency_text(&run->coll_time, 50, 1e3, 3, pct[0], 24),
           latency_text(&run->coll_time, 99, 1e3, 3, pct[1], 24),
           latency_text(&run->coll_time, 100, 1e3, 3, pct[2], 24));
    if (run->record_count) {
        printf("requests per collection: mean %.2f min %.0f max %.0f\n", sum->p_mean, sum->p_min, sum->p_max);
    } else {
        printf("requests per collection: n/a (no collection completed)\n");
    }
    printf("response time ms: p50 %s p99 %s mean ", latency_text(&run->resp_time, 50, 1e3, 3, pct[0], 24),
           latency_text(&run->resp_time, 99, 1e3, 3, pct[1], 24));
    if (run->responses) {
        printf("%.3f\n", sum->r_mean_us / 1e3);
    } else {
        printf("n/a\n");
    }
    if (run->record_count) {
        printf("samples per collection: mean %.1f min %.0f max %.0f (values %.1f); samples %" PRIu64
               ", %.1f samples/s\n",
               sum->s_mean, sum->s_min, sum->s_max, sum->v_mean, run->samples, sum->samples_per_s);
    } else {
        printf("samples per collection: n/a (no collection completed)\n");
    }
    printf("requests: %" PRIu64 " sent, %" PRIu64 " retries, %" PRIu64 " timed out, %" PRIu64
           " stray replies, %" PRIu64 " malformed, %" PRIu64 " send errors\n",
           run->attempts, run->retries, run->request_timeouts, run->stray, run->malformed, run->send_errors);
    printf("error responses:");
    for (int i = 1; i <= SNMPRUN_ERROR_STATUS_NAMED; i++) {
        if (run->error_status[i]) {
            printf(" %s %" PRIu64, status_name(i), run->error_status[i]);
            any = 1;
        }
    }
    for (int i = 1; i < SNMPRUN_USM_REPORTS; i++) {
        if (run->usm_reports[i]) {
            printf(" %s %" PRIu64, walk_v3_report_name((enum susm_report_kind)i), run->usm_reports[i]);
            any = 1;
        }
    }
    printf("%s\n", any ? "" : " none");
    printf("failed collections:");
    any = 0;
    for (int i = 1; i < SNMPRUN_FAIL_COUNT; i++) {
        if (run->failures[i]) {
            printf(" %s %" PRIu64, failure_names[i], run->failures[i]);
            any = 1;
        }
    }
    printf("%s\n", any ? "" : " none");
    if (fit_not_fitted(sum, why, sizeof why)) {
        printf("fit T = P x R + c over %zu collections: not fitted (%s)\n", f->n, why);
    } else {
        printf("fit T = P x R + c over %zu collections: R %.3f ms, c %.3f ms, ", f->n, f->r_us / 1e3,
               f->c_us / 1e3);
        if (f->r_squared_valid) {
            printf("R^2 %.4f, ", f->r_squared);
        } else {
            printf("R^2 n/a (every collection took the same time), ");
        }
        printf("mean relative error %.2f %%", f->mean_rel_error * 100);
        if (f->line_valid) {
            printf("; free line T = %.3f (P x R) + %.3f ms", f->slope, f->intercept_us / 1e3);
        }
        if (fit_poor(f)) {
            printf("; poor fit (R^2 below %.1f)", SNMPRUN_FIT_POOR_R_SQUARED);
        }
        printf("\n");
    }
    printf("client CPU: %.3f s, %.1f us per request sent\n", sum->cpu_s,
           run->attempts ? sum->cpu_s * 1e6 / (double)run->attempts : 0.0);
    for (uint32_t d = 0; d < o->device_count; d++) {
        if (!run->device_failure[d]) {
            continue;
        }
        failed_devices++;
        if (listed == SNMPRUN_FAILED_PRINT_MAX) {
            continue;
        }
        run_target_text(o, d, where, sizeof where);
        printf("%s  device %u (%s) %s\n", listed ? "" : "failed devices:\n", (unsigned)d, where,
               failure_names[run->device_failure[d]]);
        listed++;
    }
    if (failed_devices > listed) {
        printf("  ... and %u more%s\n", (unsigned)(failed_devices - listed),
               o->json_path ? " (every one in --json)" : "");
    }
}

/* "name":{"p50":..,"p99":..,"max":.. in milliseconds, null when nothing was measured; the caller closes it.
 */
static void
json_percentiles_ms(struct sbuf *b, const char *name, const struct latency *l)
{
    sbuf_printf(b, "\"%s\":{\"p50\":", name);
    latency_json(b, l, 50, 1e3, 3);
    sbuf_adds(b, ",\"p99\":");
    latency_json(b, l, 99, 1e3, 3);
    sbuf_adds(b, ",\"max\":");
    latency_json(b, l, 100, 1e3, 3);
}

static int
write_manifest(struct snmprun *run, const struct snmprun_summary *sum)
{
    char ip_text[NETADDR_TEXT_BYTES];
    const struct stress_options *o = run->o;
    const struct walk_fit *f = &sum->fit;
    struct sbuf b = {0};
    uint32_t failed_devices = 0;
    char text[OID_MAX_SUBIDS * 11];
    int rc;

    sbuf_adds(&b, "{\"tool\":\"fleetsim-stress\",\"version\":");
    sbuf_add_json(&b, FLEETSIM_VERSION);
    sbuf_printf(&b,
                ",\"mode\":\"snmp\",\"parameters\":{\"ip\":\"%s\",\"port\":%u,\"device_count\":%u,"
                "\"ip_per_device\":%s,\"snmp_version\":\"%s\",\"community\":",
                netaddr_text(&o->ip_fam, o->ip, ip_text, sizeof ip_text), (unsigned)o->port,
                (unsigned)o->device_count, o->ip_per_device ? "true" : "false", run->v3 ? "3" : "2c");
    json_string_or_null(&b, run->v3 ? NULL : o->community);
    sbuf_adds(&b, ",\"v3_user\":");
    if (run->v3) {
        /* The passwords stay out of the manifest. */
        snprintf(text, sizeof text, "%.*s", (int)o->v3.name_len, o->v3.name);
        sbuf_adds(&b, "{\"name\":");
        sbuf_add_json(&b, text);
        sbuf_printf(&b, ",\"auth\":\"%s\",\"priv\":\"%s\",\"level\":\"%s\"}", o->v3.auth_name,
                    susm_priv_name(o->v3.priv), walk_v3_level_name(run->v3_user.flags));
    } else {
        sbuf_adds(&b, "null");
    }
    sbuf_adds(&b, ",\"profile\":");
    json_string_or_null(&b, o->oids ? NULL : o->profile);
    sbuf_adds(&b, ",\"profile_path\":");
    json_string_or_null(&b, run->profile ? run->profile->path : NULL);
    sbuf_adds(&b, ",\"oids\":[");
    for (uint32_t i = 0; i < run->plan.count; i++) {
        sbuf_adds(&b, i ? "," : "");
        sbuf_add_json(&b, oid_format(&run->plan.roots[i], text, sizeof text));
    }
    sbuf_printf(&b,
                "],\"concurrency\":%u,\"max_repetitions\":%u,\"max_vars_per_pdu\":%u,\"timeout_ms\":%u,"
                "\"retries\":%u,\"rounds\":%u,\"duration_s\":%u},",
                (unsigned)o->concurrency, (unsigned)o->max_repetitions, (unsigned)o->max_vars,
                (unsigned)o->timeout_ms, (unsigned)o->retries, o->duration_s ? 0u : (unsigned)o->rounds,
                (unsigned)o->duration_s);
    sbuf_adds(&b, "\"results\":{\"interrupted\":");
    json_string_or_null(&b, run_interrupted_name());
    sbuf_printf(&b,
                ",\"collections\":%" PRIu64 ",\"completed\":%" PRIu64 ",\"failed\":%" PRIu64
                ",\"elapsed_s\":%.6f,\"collections_per_second\":%.3f,",
                run->collections, run->completed, run->failed, sum->elapsed_s,
                sum->elapsed_s > 0 ? run->collections / sum->elapsed_s : 0.0);
    json_percentiles_ms(&b, "collection_time_ms", &run->coll_time);
    if (run->record_count) {
        sbuf_printf(&b, "},\"requests_per_collection\":{\"mean\":%.3f,\"min\":%.0f,\"max\":%.0f},",
                    sum->p_mean, sum->p_min, sum->p_max);
    } else {
        sbuf_adds(&b, "},\"requests_per_collection\":{\"mean\":null,\"min\":null,\"max\":null},");
    }
    json_percentiles_ms(&b, "response_time_ms", &run->resp_time);
    if (run->responses) {
        sbuf_printf(&b, ",\"mean\":%.3f},", sum->r_mean_us / 1e3);
    } else {
        sbuf_adds(&b, ",\"mean\":null},");
    }
    if (run->record_count) {
        sbuf_printf(&b, "\"samples_per_collection\":{\"mean\":%.3f,\"min\":%.0f,\"max\":%.0f},", sum->s_mean,
                    sum->s_min, sum->s_max);
    } else {
        sbuf_adds(&b, "\"samples_per_collection\":{\"mean\":null,\"min\":null,\"max\":null},");
    }
    sbuf_printf(&b,
                "\"samples\":%" PRIu64 ",\"values_per_collection\":%.3f,\"values\":%" PRIu64
                ",\"varbinds_received\":%" PRIu64 ",\"samples_per_second\":%.3f,",
                run->samples, sum->v_mean, run->values, run->varbinds, sum->samples_per_s);
    sbuf_printf(&b,
                "\"requests\":%" PRIu64 ",\"requests_sent\":%" PRIu64 ",\"responses\":%" PRIu64
                ",\"timeouts\":%" PRIu64 ",\"request_timeouts\":%" PRIu64 ",\"retries\":%" PRIu64
                ",\"stray\":%" PRIu64 ",\"malformed\":%" PRIu64 ",\"send_errors\":%" PRIu64
                ",\"engines_discovered\":%" PRIu64 ",\"time_resyncs\":%" PRIu64 ",\"error_responses\":{",
                run->requests, run->attempts, run->responses, run->failures[SNMPRUN_FAIL_TIMEOUT],
                run->request_timeouts, run->retries, run->stray, run->malformed, run->send_errors,
                run->discoveries, run->time_resyncs);
    for (int i = 1; i <= SNMPRUN_ERROR_STATUS_NAMED; i++) {
        sbuf_printf(&b, "%s\"%s\":%" PRIu64, i > 1 ? "," : "", status_name(i), run->error_status[i]);
    }
    for (int i = 1; i < SNMPRUN_USM_REPORTS; i++) {
        sbuf_printf(&b, ",\"%s\":%" PRIu64, walk_v3_report_name((enum susm_report_kind)i),
                    run->usm_reports[i]);
    }
    sbuf_adds(&b, "},\"failures\":{");
    for (int i = 1; i < SNMPRUN_FAIL_COUNT; i++) {
        sbuf_printf(&b, "%s\"%s\":%" PRIu64, i > 1 ? "," : "", failure_names[i], run->failures[i]);
    }
    sbuf_printf(&b,
                "},\"fit\":{\"model\":\"T = P x R + c\",\"collections\":%zu,\"r_ms\":%.6f,\"c_ms\":%.6f,"
                "\"r_squared\":",
                f->n, f->r_us / 1e3, f->c_us / 1e3);
    if (f->r_squared_valid) {
        sbuf_printf(&b, "%.6f", f->r_squared);
    } else {
        sbuf_adds(&b, "null");
    }
    sbuf_printf(&b, ",\"mean_relative_error\":%.6f,\"line\":", f->mean_rel_error);
    if (f->line_valid) {
        sbuf_printf(&b, "{\"slope\":%.6f,\"intercept_ms\":%.6f,\"r_squared\":%.6f}", f->slope,
                    f->intercept_us / 1e3, f->line_r_squared);
    } else {
        sbuf_adds(&b, "null");
    }
    {
        char why[128];
        const char *not_fitted = fit_not_fitted(sum, why, sizeof why);
        sbuf_printf(&b, ",\"fitted\":%s,\"not_fitted\":", not_fitted ? "false" : "true");
        json_string_or_null(&b, not_fitted);
        sbuf_printf(&b, ",\"poor_fit\":%s", !not_fitted && fit_poor(f) ? "true" : "false");
    }
    sbuf_printf(&b, "},\"client_cpu_s\":%.6f,\"client_cpu_us_per_request\":%.3f,\"failed_devices\":[",
                sum->cpu_s, run->attempts ? sum->cpu_s * 1e6 / (double)run->attempts : 0.0);
    for (uint32_t d = 0; d < o->device_count; d++) {
        if (!run->device_failure[d]) {
            continue;
        }
        run_target_text(o, d, text, sizeof text);
        sbuf_printf(&b, "%s{\"device\":%u,\"address\":\"%s\",\"failure\":\"%s\"}", failed_devices ? "," : "",
                    (unsigned)d, text, failure_names[run->device_failure[d]]);
        failed_devices++;
    }
    sbuf_printf(&b, "],\"failed_device_count\":%u,\"first_failure\":", (unsigned)failed_devices);
    json_string_or_null(&b, run->first_failure);
    sbuf_adds(&b, ",");
    latency_histogram_json(&b, "collection_time_histogram", &run->coll_time);
    sbuf_adds(&b, ",");
    latency_histogram_json(&b, "response_time_histogram", &run->resp_time);
    {
        /* (P, T) of completed collections for the fit's plot: every k-th, at most SNMPRUN_FIT_POINTS_MAX. */
        size_t step = (run->record_count + SNMPRUN_FIT_POINTS_MAX - 1) / SNMPRUN_FIT_POINTS_MAX;
        size_t secs = run->completed_per_s.len;
        const struct persec *series[] = {&run->failed_per_s, &run->timeouts_per_s, &run->retries_per_s};
        sbuf_adds(&b, ",\"fit_points\":{\"requests\":[");
        step = step ? step : 1;
        for (size_t i = 0, n = 0; i < run->record_count; i += step) {
            sbuf_printf(&b, "%s%u", n++ ? "," : "", (unsigned)run->records[i].requests);
        }
        sbuf_adds(&b, "],\"t_ms\":[");
        for (size_t i = 0, n = 0; i < run->record_count; i += step) {
            sbuf_printf(&b, "%s%.3f", n++ ? "," : "", run->records[i].t_us / 1e3);
        }
        for (size_t i = 0; i < 3; i++) {
            secs = series[i]->len > secs ? series[i]->len : secs;
        }
        sbuf_adds(&b, "]}},\"per_second\":{\"bucket_s\":1,\"completed\":");
        persec_json(&b, &run->completed_per_s, secs);
        sbuf_adds(&b, ",\"failed\":");
        persec_json(&b, &run->failed_per_s, secs);
        sbuf_adds(&b, ",\"timeouts\":");
        persec_json(&b, &run->timeouts_per_s, secs);
        sbuf_adds(&b, ",\"retries\":");
        persec_json(&b, &run->retries_per_s, secs);
        sbuf_adds(&b, "}");
    }
    sbuf_adds(&b, "}");
    run_manifest_scenario(&b);
    rc = b.failed ? -1 : run_manifest_write(o->json_path, &b, run->start_us, run->end_us);
    sbuf_free(&b);
    return rc;
}

/* The roots to walk: --oids, or the profile's collection. @return 0, or -1 with a message printed. */
static int
load_plan(struct snmprun *run)
{
    const struct stress_options *o = run->o;
    struct oid *oids = NULL;
    uint32_t count = 0;
    char err[512];
    int rc = -1;

    if (o->oids) {
        const char *p = o->oids;
        char item[1024];
        for (const char *q = p; *q; q++) {
            count += *q == ',';
        }
        count++;
        if (!(oids = calloc(count, sizeof *oids))) {
            goto nomem;
        }
        for (uint32_t i = 0; i < count; i++) {
            size_t len = strcspn(p, ",");
            snprintf(item, sizeof item, "%.*s", (int)len, p);
            /* options.c checked every item already */
            if (oid_parse(item, &oids[i]) != FLEET_OK) {
                fprintf(stderr, "fleetsim-stress: --oids: \"%s\" is not a dotted OID\n", item);
                goto cleanup;
            }
            p += len + 1;
        }
        if (walk_plan_init(&run->plan, oids, count, run->o->max_vars) != FLEET_OK) {
            goto nomem;
        }
    } else {
        if (profile_load(o->profile, FLEETSIM_SCHEMA_DIR "/profiles", FLEETSIM_SCHEMA_DIR, &run->profile, err,
                         sizeof err) != FLEET_OK) {
            fprintf(stderr, "fleetsim-stress: cannot load profile \"%s\": %s\n", o->profile, err);
            goto cleanup;
        }
        if (!run->profile->collection_count) {
            fprintf(stderr, "fleetsim-stress: profile \"%s\" (%s) lists no collection OIDs; use --oids\n",
                    o->profile, run->profile->path);
            goto cleanup;
        }
        if (walk_plan_init(&run->plan, run->profile->collection, run->profile->collection_count,
                           run->o->max_vars) != FLEET_OK) {
            fprintf(stderr, "fleetsim-stress: profile \"%s\": a collection OID is too short\n", o->profile);
            goto cleanup;
        }
    }
    rc = 0;
    goto cleanup;
nomem:
    fprintf(stderr, "fleetsim-stress: out of memory for the walk plan\n");
cleanup:
    free(oids);
    return rc;
}

/* v3: the user's keys (the slow part, before the clock starts), engines, per-slot keys, the message
 * buffer and the first salt. @return 0, or -1 with a message printed. */
static int
setup_v3(struct snmprun *run)
{
    const struct stress_options *o = run->o;
    const struct stress_v3_user *u = &o->v3;

    run->v3 = 1;
    run->engines = calloc(o->device_count, sizeof *run->engines);
    run->slot_keys = calloc(run->slot_count, sizeof *run->slot_keys);
    run->v3_tx = malloc(SNMPRUN_DATAGRAM_MAX_BYTES);
    if (!run->engines || !run->slot_keys || !run->v3_tx) {
        fprintf(stderr, "fleetsim-stress: out of memory for the SNMPv3 engines of %u devices\n",
                (unsigned)o->device_count);
        return -1;
    }
    if (walk_v3_user_init(&run->v3_user, u->name, u->name_len, u->auth, u->auth_password,
                          u->auth_password_len, u->priv, u->priv_password,
                          u->priv_password_len) != FLEET_OK) {
        fprintf(stderr, "fleetsim-stress: --v3-user: cannot derive the keys of user %.*s\n", (int)u->name_len,
                u->name);
        return -1;
    }
    /* RFC 3826 section 3.1.2.1: the salt is a counter; a random start keeps two runs from repeating one
     * under the same key, engine boots and time. */
    if (getrandom(&run->salt, sizeof run->salt, 0) != (ssize_t)sizeof run->salt) {
        run->salt = loop_clock_monotonic() ^ ((uint64_t)getpid() << 32);
    }
    return 0;
}

/* Sockets, slots and queues. @return 0, or -1 with a message printed. */
static int
setup(struct snmprun *run, int fd_limit)
{
    const struct stress_options *o = run->o;
    size_t expected = o->duration_s ? 1024 : (size_t)o->device_count * o->rounds; /* collections */
    int rcvbuf = SNMPRUN_SOCKET_RCVBUF_BYTES;

    run->slot_count = o->concurrency < o->device_count ? o->concurrency : o->device_count;
    while ((1u << run->slot_bits) < run->slot_count) {
        run->slot_bits++;
    }
    run->fd_count = (run->slot_count + SNMPRUN_SLOTS_PER_SOCKET - 1) / SNMPRUN_SLOTS_PER_SOCKET;
    if (run->fd_count + 16 > (uint32_t)fd_limit) {
        fprintf(stderr, "fleetsim-stress: %u sockets need more descriptors than the limit of %d\n",
                (unsigned)run->fd_count, fd_limit);
        return -1;
    }
    run->tx_cap = SNMPRUN_DATAGRAM_MAX_BYTES + SPDU_HEADROOM(strlen(o->community));
    run->loop = loop_new(fd_limit);
    run->fds = malloc(run->fd_count * sizeof *run->fds);
    run->slots = calloc(run->slot_count, sizeof *run->slots);
    run->cols = calloc((size_t)run->slot_count * run->plan.max_vars, sizeof *run->cols);
    run->names = calloc(run->plan.max_vars, sizeof *run->names);
    run->free_slots = calloc(run->slot_count, sizeof *run->free_slots);
    run->queue = calloc(o->device_count, sizeof *run->queue);
    run->rounds_done = calloc(o->device_count, sizeof *run->rounds_done);
    run->device_failure = calloc(o->device_count, sizeof *run->device_failure);
    run->record_stride = 1;
    run->rx = malloc(SNMPRUN_DATAGRAM_MAX_BYTES);
    run->tx = malloc(run->tx_cap);
    if (!run->loop || !run->fds || !run->slots || !run->cols || !run->names || !run->free_slots ||
        !run->queue || !run->rounds_done || !run->device_failure || !run->rx || !run->tx ||
        latency_reserve(&run->coll_time, expected < SNMPRUN_RESERVE_MAX ? expected : SNMPRUN_RESERVE_MAX) ||
        latency_reserve(&run->resp_time, 4096)) {
        fprintf(stderr, "fleetsim-stress: out of memory for %u collections at once\n",
                (unsigned)run->slot_count);
        return -1;
    }
    for (uint32_t i = 0; i < run->fd_count; i++) {
        run->fds[i] = -1;
    }
    if (o->v3_user && setup_v3(run)) {
        return -1;
    }
    for (uint32_t i = 0; i < run->fd_count; i++) {
        run->fds[i] = socket(netaddr_af(&o->ip_fam), SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (run->fds[i] < 0) {
            fprintf(stderr, "fleetsim-stress: cannot create a UDP socket: %s\n", strerror(errno));
            return -1;
        }
        /* Best effort: a burst of replies to 256 collections must not overflow the default buffer. */
        setsockopt(run->fds[i], SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
        if (loop_watch(run->loop, run->fds[i], LOOP_READ, on_readable, run) != FLEET_OK) {
            fprintf(stderr, "fleetsim-stress: cannot watch a UDP socket\n");
            return -1;
        }
    }
    for (uint32_t i = 0; i < run->slot_count; i++) {
        struct snmprun_slot *s = &run->slots[i];
        s->run = run;
        s->index = i;
        s->fd = run->fds[i / SNMPRUN_SLOTS_PER_SOCKET];
        loop_timer_init(&s->timer);
        /* Popped from the end: slot 0 first. */
        run->free_slots[run->slot_count - 1 - i] = i;
    }
    run->free_count = run->slot_count;
    for (uint32_t d = 0; d < o->device_count; d++) {
        run->queue[d] = d;
    }
    run->queue_len = o->device_count;
    return 0;
}

static void
teardown(struct snmprun *run)
{
    for (uint32_t i = 0; run->slots && i < run->slot_count; i++) {
        if (run->loop) {
            loop_timer_stop(run->loop, &run->slots[i].timer);
        }
    }
    if (run->loop) {
        loop_timer_stop(run->loop, &run->progress_timer);
    }
    for (uint32_t i = 0; run->fds && i < run->fd_count; i++) {
        if (run->fds[i] >= 0) {
            loop_unwatch(run->loop, run->fds[i]);
            close(run->fds[i]);
        }
    }
    loop_free(run->loop);
    free(run->fds);
    free(run->slots);
    free(run->cols);
    free(run->names);
    free(run->free_slots);
    free(run->queue);
    free(run->rounds_done);
    free(run->device_failure);
    free(run->rx);
    free(run->tx);
    free(run->engines);
    free(run->slot_keys);
    free(run->v3_tx);
    free(run->records);
    persec_free(&run->completed_per_s);
    persec_free(&run->failed_per_s);
    persec_free(&run->timeouts_per_s);
    persec_free(&run->retries_per_s);
    latency_free(&run->coll_time);
    latency_free(&run->resp_time);
    walk_plan_close(&run->plan);
    profile_free(run->profile);
}

int
snmprun_run(const struct stress_options *o)
{
    struct snmprun run = {0};
    struct snmprun_summary sum;
    int fd_limit = run_raise_fd_limit();
    int rc = 2;

    run.o = o;
    loop_timer_init(&run.progress_timer);
    if (load_plan(&run) || setup(&run, fd_limit)) {
        goto cleanup;
    }
    run_signals_catch(run.loop);
    run.progress = isatty(STDOUT_FILENO);
    run.cpu_start_s = stats_cpu_seconds();
    run.start_us = loop_clock_monotonic();
    if (o->duration_s) {
        run.deadline_us = run.start_us + (monotime_us)o->duration_s * 1000000u;
    }
    if (run.progress) {
        loop_timer_start(run.loop, &run.progress_timer, loop_now_us(run.loop), on_progress);
    } else if (run_progress_lines()) {
        loop_timer_start(run.loop, &run.progress_timer, loop_now_us(run.loop) + RUN_PROGRESS_LINE_US,
                         on_progress_line);
    }
    start_more(&run);
    check_done(&run);
    loop_run(run.loop);
    if (run.progress) {
        printf("\r%*s\r", 79, "");
        fflush(stdout);
    }
    if (!run.end_us) {
        run.end_us = loop_clock_monotonic();
        run.cpu_end_s = stats_cpu_seconds();
    }
    if (summarize(&run, &sum)) {
        fprintf(stderr, "fleetsim-stress: out of memory for the report\n");
        goto cleanup;
    }
    report(&run, &sum);
    fflush(stdout);
    rc = 0;
    if (o->json_path && write_manifest(&run, &sum)) {
        /* The manifest is part of the result: a run that cannot record it did not complete. */
        fprintf(stderr, "fleetsim-stress: FAILED: cannot write %s: %s\n", o->json_path, strerror(errno));
        rc = 1;
    }
    if (run.failed) {
        fprintf(stderr, "fleetsim-stress: FAILED: %" PRIu64 " of %" PRIu64 " collections failed; first: %s\n",
                run.failed, run.collections, run.first_failure);
        rc = 1;
    }
    if (run_interrupted()) {
        fprintf(stderr,
                "fleetsim-stress: interrupted by %s: %" PRIu64 " collections completed, %" PRIu64 " failed\n",
                run_interrupted_name(), run.completed, run.failed);
    }

cleanup:
    rc = run_signals_release(rc);
    teardown(&run);
    return rc;
}
