/*
 * Per-device order check of sequence numbers: every number should be one
 * more than the one before. A jump forward is a gap (the numbers skipped
 * are missing); a number at or below the highest seen is a duplicate when
 * it was seen already, else reordered (a late arrival, no longer missing).
 * What was seen is remembered for the last SEQORD_WINDOW numbers below the
 * highest only: a fixed 32 bytes per device instead of a set that grows.
 * The cost: a number older than the window cannot be told apart; it
 * counts as reordered and the missing count keeps it (a larger window is
 * the way out).
 */
#ifndef STRESS_SEQ_ORDER_H
#define STRESS_SEQ_ORDER_H

#include <stdint.h>

/* Numbers below the highest whose arrival is remembered (a multiple of 64). */
#define SEQORD_WINDOW 256

struct seqord {
    int started;                       /* 1 once a number arrived; the rest is valid then */
    uint64_t first;                    /* first number received */
    uint64_t last;                     /* last number received (in arrival order) */
    uint64_t max;                      /* highest number received */
    uint64_t gaps;                     /* jumps forward by more than one */
    uint64_t missing;                  /* numbers skipped by those jumps and not arrived since */
    uint64_t duplicates;               /* numbers received again */
    uint64_t reordered;                /* numbers that arrived after a higher one */
    uint64_t seen[SEQORD_WINDOW / 64]; /* bit i of the whole: max - i arrived */
};

/** @brief Account one sequence number @p v (@p s starts zeroed). */
void seqord_add(struct seqord *s, uint64_t v);

/** @return 1 when any gap, duplicate or reordering was seen. */
int seqord_problems(const struct seqord *s);

#endif
