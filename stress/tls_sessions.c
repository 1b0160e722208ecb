/*
 * An open-addressing table (linear probing, at most half full) from target to
 * its remembered TLS session. Entries are never removed one by one: a newer
 * session replaces the older in place.
 */
#include "tls_sessions.h"

#include <stdlib.h>

struct tls_entry {
    const void *fam; /* NULL: free slot */
    uint32_t addr;
    uint16_t port;
    SSL_SESSION *sess;
};

static struct {
    struct tls_entry *slots;
    size_t cap; /* a power of two, or 0 */
    size_t used;
} store;

static size_t
slot_of(const struct tls_entry *slots, size_t cap, const void *fam, uint32_t addr, uint16_t port)
{
    uint64_t h = ((uint64_t)addr << 16 | port) ^ (uint64_t)(uintptr_t)fam;
    size_t i;

    h *= 0x9e3779b97f4a7c15ull;
    for (i = (size_t)(h >> 32) & (cap - 1); slots[i].fam; i = (i + 1) & (cap - 1)) {
        if (slots[i].fam == fam && slots[i].addr == addr && slots[i].port == port) {
            break;
        }
    }
    return i;
}

static int
grow(void)
{
    size_t cap = store.cap ? store.cap * 2 : 256;
    struct tls_entry *slots = calloc(cap, sizeof *slots);

    if (!slots) {
        return -1;
    }
    for (size_t i = 0; i < store.cap; i++) {
        const struct tls_entry *e = &store.slots[i];
        if (e->fam) {
            slots[slot_of(slots, cap, e->fam, e->addr, e->port)] = *e;
        }
    }
    free(store.slots);
    store.slots = slots;
    store.cap = cap;
    return 0;
}

SSL_SESSION *
tls_sessions_get(const void *fam, uint32_t addr, uint16_t port)
{
    return store.cap ? store.slots[slot_of(store.slots, store.cap, fam, addr, port)].sess : NULL;
}

int
tls_sessions_put(const void *fam, uint32_t addr, uint16_t port, SSL_SESSION *sess)
{
    struct tls_entry *e;

    if ((store.used + 1) * 2 > store.cap && grow()) {
        SSL_SESSION_free(sess);
        return -1;
    }
    e = &store.slots[slot_of(store.slots, store.cap, fam, addr, port)];
    if (e->fam) {
        SSL_SESSION_free(e->sess);
    } else {
        store.used++;
    }
    *e = (struct tls_entry){.fam = fam, .addr = addr, .port = port, .sess = sess};
    return 0;
}

void
tls_sessions_free(void)
{
    for (size_t i = 0; i < store.cap; i++) {
        SSL_SESSION_free(store.slots[i].sess);
    }
    free(store.slots);
    store.slots = NULL;
    store.cap = store.used = 0;
}
