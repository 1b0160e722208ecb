/*
 * The live page's memory of the last 15 minutes: a fixed ring of per-second
 * samples of the fleet's totals (cumulative counters and gauges), written
 * by the sampler (live.c) once a second and read by the HTTP thread. Its
 * size never changes after rate_ring_init(): RATE_RING_CAPACITY entries of
 * struct rate_sample, about 150 KiB, whatever the fleet's size.
 */
#ifndef FLEET_RATE_RING_H
#define FLEET_RATE_RING_H

#include <pthread.h>
#include <stdint.h>

/* Samples kept: 15 minutes at one a second. */
#define RATE_RING_CAPACITY 900u

/* The fleet's totals at one moment; every counter is cumulative since start (a rate is a difference). */
struct rate_sample {
    uint64_t seq;           /* 1 for the first sample ever pushed, then one more each push */
    uint64_t t_ms;          /* wall-clock time of the sample, ms since the Unix epoch */
    uint64_t sessions_tcp;  /* NETCONF sessions over TCP open now (gauge) */
    uint64_t sessions_ssh;  /* NETCONF sessions over SSH open now (gauge) */
    uint64_t sessions_tls;  /* NETCONF sessions over TLS open now (gauge) */
    uint64_t rpcs;          /* NETCONF rpc messages received */
    uint64_t rpc_errors;    /* rpc-replies carrying rpc-error */
    uint64_t snmp_requests; /* SNMP datagrams received */
    uint64_t notifications; /* NETCONF notifications queued to subscribers */
    uint64_t traps;         /* SNMP traps and informs sent */
    uint64_t auth_failures; /* SSH logins and TLS handshakes refused plus SNMP authentication failures */
    uint64_t session_drops; /* NETCONF sessions ended without close-session */
    uint64_t notif_drops;   /* notifications and traps dropped (slow subscribers, full queues) */
    uint64_t snmp_drops;    /* SNMP datagrams left unanswered */
    uint64_t states[4];     /* devices up, down, rebooting, absent (gauges) */
};

/* The ring; all members guarded by lock. */
struct rate_ring {
    pthread_mutex_t lock;                         /* taken by push and by every read */
    struct rate_sample slots[RATE_RING_CAPACITY]; /* slot (seq - 1) % capacity holds sample seq */
    uint64_t last_seq;                            /* seq of the newest sample, 0 while empty */
};

/** @brief An empty ring. */
void rate_ring_init(struct rate_ring *r);

/** @brief Destroy the lock; the ring holds no other resource. */
void rate_ring_close(struct rate_ring *r);

/**
 * @brief Append @p s (its seq is set here), overwriting the oldest sample once the ring is full.
 * @return The seq given to it.
 */
uint64_t rate_ring_push(struct rate_ring *r, const struct rate_sample *s);

/**
 * @brief Copy the samples newer than @p since_seq, oldest first, into @p out (room for
 * RATE_RING_CAPACITY). Samples that the ring no longer holds are skipped.
 * @return How many were copied.
 */
uint32_t rate_ring_since(struct rate_ring *r, uint64_t since_seq, struct rate_sample *out);

#endif
