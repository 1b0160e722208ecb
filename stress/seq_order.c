/*
 * The sequence-number order check; see seq_order.h. The window is a
 * multi-word bitmap shifted when the highest number moves up.
 */
#include "seq_order.h"

#include <string.h>

#define SEQORD_WORDS (SEQORD_WINDOW / 64)

/* Move the window up by @p d: bit i becomes bit i + d. */
static void
shift(struct seqord *s, uint64_t d)
{
    uint64_t words;
    unsigned bits;

    if (d >= SEQORD_WINDOW) {
        memset(s->seen, 0, sizeof s->seen);
        return;
    }
    words = d / 64;
    bits = (unsigned)(d % 64);
    for (int i = SEQORD_WORDS - 1; i >= 0; i--) {
        uint64_t v = 0;
        if ((uint64_t)i >= words) {
            int from = i - (int)words;
            v = s->seen[from] << bits;
            if (bits && from > 0) {
                v |= s->seen[from - 1] >> (64 - bits);
            }
        }
        s->seen[i] = v;
    }
}

void
seqord_add(struct seqord *s, uint64_t v)
{
    uint64_t back;

    if (!s->started) {
        memset(s, 0, sizeof *s);
        s->started = 1;
        s->first = s->last = s->max = v;
        s->seen[0] = 1;
        return;
    }
    s->last = v;
    if (v > s->max) {
        if (v > s->max + 1) {
            s->gaps++;
            s->missing += v - s->max - 1;
        }
        shift(s, v - s->max);
        s->seen[0] |= 1;
        s->max = v;
        return;
    }
    back = s->max - v;
    if (back >= SEQORD_WINDOW) {
        s->reordered++; /* too old to tell; see the header */
        return;
    }
    if (s->seen[back / 64] & (1ull << (back % 64))) {
        s->duplicates++;
        return;
    }
    s->seen[back / 64] |= 1ull << (back % 64);
    s->reordered++;
    /* A late number inside a gap is no longer missing; one below the first never was. */
    if (v > s->first && s->missing) {
        s->missing--;
    }
}

int
seqord_problems(const struct seqord *s)
{
    return s->gaps || s->duplicates || s->reordered;
}
