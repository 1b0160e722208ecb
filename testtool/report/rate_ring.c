/*
 * The ring of per-second samples; see rate_ring.h. One mutex: the writer
 * holds it for one struct copy a second, a reader for at most 900 copies.
 */
#include "rate_ring.h"

#include <string.h>

void
rate_ring_init(struct rate_ring *r)
{
    memset(r->slots, 0, sizeof r->slots);
    r->last_seq = 0;
    pthread_mutex_init(&r->lock, NULL);
}

void
rate_ring_close(struct rate_ring *r)
{
    pthread_mutex_destroy(&r->lock);
}

uint64_t
rate_ring_push(struct rate_ring *r, const struct rate_sample *s)
{
    uint64_t seq;

    pthread_mutex_lock(&r->lock);
    seq = ++r->last_seq;
    r->slots[(seq - 1) % RATE_RING_CAPACITY] = *s;
    r->slots[(seq - 1) % RATE_RING_CAPACITY].seq = seq;
    pthread_mutex_unlock(&r->lock);
    return seq;
}

uint32_t
rate_ring_since(struct rate_ring *r, uint64_t since_seq, struct rate_sample *out)
{
    uint64_t first, seq;
    uint32_t n = 0;

    pthread_mutex_lock(&r->lock);
    /* The oldest sample held is last_seq - capacity + 1 (or 1 before the ring has wrapped). */
    first = r->last_seq > RATE_RING_CAPACITY ? r->last_seq - RATE_RING_CAPACITY + 1 : 1;
    if (since_seq + 1 > first) {
        first = since_seq + 1;
    }
    for (seq = first; seq <= r->last_seq; seq++) {
        out[n++] = r->slots[(seq - 1) % RATE_RING_CAPACITY];
    }
    pthread_mutex_unlock(&r->lock);
    return n;
}
