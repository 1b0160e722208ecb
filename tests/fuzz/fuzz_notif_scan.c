/*
 * Fuzz harness of what fleetsim-stress notify does with every message a
 * subscription delivers: the notification scanner (stress/notif_scan.h)
 * and the per-device order check of the sequence numbers it finds
 * (stress/seq_order.h).
 *
 * Input: byte 0 chooses the mode and the sequence element's name.
 *   bit 7 clear: the rest is a stream of messages separated by "]]>]]>". Each
 *     is scanned (copied to a heap block of exactly its size, no NUL) with
 *     the name chosen by bits 0-1; the numbers found feed one order check,
 *     as one device's subscription does.
 *   bit 7 set: bytes 1-8 are a first number (big-endian), the rest pairs of
 *     bytes, each a signed step from the highest number so far; the numbers
 *     go to the order check and to a plain model of it that remembers every
 *     number, and both must count the same gaps, missing numbers,
 *     duplicates and reorderings.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "notif_scan.h"
#include "seq_order.h"

/* Longest input looked at. */
#define FZ_MAX_INPUT_BYTES 65536
/* Most numbers one model run takes (its lookups are linear). */
#define FZ_MAX_NUMBERS 2048

static void
fz_scan_one(const uint8_t *msg, size_t len, const char *seq_name, struct seqord *order)
{
    struct nscan_info info, again;
    enum nscan_kind kind;
    char *copy = malloc(len ? len : 1);
    size_t t;

    fz_require(copy != NULL, "out of memory");
    memcpy(copy, msg, len);
    kind = nscan_scan(copy, len, seq_name, &info);
    fz_require(kind == info.kind, "return value differs from info.kind");
    fz_require(kind == NSCAN_DATA || kind == NSCAN_REPLAY_COMPLETE || kind == NSCAN_NOTIFICATION_COMPLETE ||
                   kind == NSCAN_OTHER,
               "kind out of range");
    t = fz_require_trimmed(info.event_time, msg, len, "eventTime");
    if (kind == NSCAN_OTHER) {
        fz_require(!t && !info.has_seq, "a message that is no notification reports content");
    }
    if (!seq_name || !*seq_name) {
        fz_require(!info.has_seq, "a sequence number found without a name to look for");
    }
    if (!info.has_seq) {
        fz_require(info.seq == 0, "sequence value without has_seq");
    } else {
        seqord_add(order, info.seq);
    }
    nscan_scan(copy, len, seq_name, &again);
    fz_require(!memcmp(&info, &again, sizeof info), "a second scan gives another answer");
    free(copy);
}

static void
fz_messages(const uint8_t *data, size_t size, const char *seq_name)
{
    struct seqord order;
    size_t off = 0;

    memset(&order, 0, sizeof order);
    while (off <= size) {
        const uint8_t *end = memmem(data + off, size - off, "]]>]]>", 6);
        size_t len = end ? (size_t)(end - (data + off)) : size - off;

        fz_scan_one(data + off, len, seq_name, &order);
        if (!end) {
            break;
        }
        off += len + 6;
    }
    fz_require(order.started || !order.gaps, "counts without a number");
}

/* The model: every number remembered; the rules of seq_order.h applied to the exact set. */
struct fz_model {
    uint64_t seen[FZ_MAX_NUMBERS]; /* numbers arrived, in arrival order */
    size_t count;                  /* entries in seen */
    uint64_t first, max, gaps, missing, duplicates, reordered;
};

static int
fz_model_seen(const struct fz_model *m, uint64_t v)
{
    for (size_t i = 0; i < m->count; i++) {
        if (m->seen[i] == v) {
            return 1;
        }
    }
    return 0;
}

static void
fz_model_add(struct fz_model *m, uint64_t v)
{
    if (!m->count) {
        m->first = m->max = v;
    } else if (v > m->max) {
        if (v > m->max + 1) {
            m->gaps++;
            m->missing += v - m->max - 1;
        }
        m->max = v;
    } else if (m->max - v >= SEQORD_WINDOW) {
        m->reordered++;
    } else if (fz_model_seen(m, v)) {
        m->duplicates++;
        return; /* seen already: nothing new to remember */
    } else {
        m->reordered++;
        if (v > m->first && m->missing) {
            m->missing--;
        }
    }
    m->seen[m->count++] = v;
}

static void
fz_numbers(const uint8_t *data, size_t size)
{
    struct fz_model *m = calloc(1, sizeof *m);
    struct seqord s;
    uint64_t v = 0;
    size_t i;

    fz_require(m != NULL, "out of memory");
    memset(&s, 0, sizeof s);
    if (size < 8) {
        free(m);
        return;
    }
    for (i = 0; i < 8; i++) {
        v = (v << 8) | data[i];
    }
    seqord_add(&s, v);
    fz_model_add(m, v);
    for (i = 8; i + 1 < size && m->count < FZ_MAX_NUMBERS; i += 2) {
        int16_t step = (int16_t)(uint16_t)((data[i] << 8) | data[i + 1]);
        uint64_t base = m->max;

        /* Steps saturate at both ends of the range instead of wrapping. */
        if (step < 0) {
            v = base >= (uint64_t)(-(int32_t)step) ? base - (uint64_t)(-(int32_t)step) : 0;
        } else {
            v = base <= UINT64_MAX - (uint64_t)step ? base + (uint64_t)step : UINT64_MAX;
        }
        seqord_add(&s, v);
        fz_model_add(m, v);
        fz_require(s.last == v && s.max == m->max && s.first == m->first, "first, last or max wrong");
        fz_require(s.gaps == m->gaps, "gap count wrong");
        fz_require(s.missing == m->missing, "missing count wrong");
        fz_require(s.duplicates == m->duplicates, "duplicate count wrong");
        fz_require(s.reordered == m->reordered, "reordered count wrong");
        fz_require(seqord_problems(&s) == (m->gaps || m->duplicates || m->reordered), "problems flag wrong");
    }
    free(m);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = {"seq", "sequence-number", "", NULL};

    if (size < 1 || size > FZ_MAX_INPUT_BYTES) {
        return 0;
    }
    if (data[0] & 0x80) {
        fz_numbers(data + 1, size - 1);
    } else {
        fz_messages(data + 1, size - 1, names[data[0] & 3]);
    }
    return 0;
}
