/*
 * A hashed timing wheel of 1 ms slots for records that must fire at exact times by the thousand (periodic
 * YANG-Push subscriptions, dampening periods): each record embeds a wheel_entry (24 bytes) and costs no
 * timer of its own; the wheel drives one loop timer armed at its earliest non-empty slot. Adding and
 * removing are O(1); an entry due beyond one turn of the wheel waits in its slot for its turn.
 */
#ifndef FLEET_WHEEL_H
#define FLEET_WHEEL_H

#include <stdint.h>

#include "loop.h"

struct wheel;

/* Embedded in the record that is scheduled. */
struct wheel_entry {
    struct wheel_entry *next; /* slot list; NULL with prev when not scheduled */
    struct wheel_entry *prev; /* slot list */
    monotime_us due_us;       /* when it fires (loop clock); valid while scheduled */
};

/* Called on the loop's thread for each entry that is due; the entry is no longer scheduled. */
typedef void (*wheel_cb)(struct wheel *w, struct wheel_entry *e, void *data);

/** @brief A wheel on @p loop that calls @p cb(@p data) for due entries. @return NULL when out of memory. */
struct wheel *wheel_new(struct loop *loop, wheel_cb cb, void *data);

/** @brief Free a wheel (its entries are the owners'; they must be removed first). Accepts NULL. */
void wheel_free(struct wheel *w);

/** @brief Schedule @p e at @p due_us (reschedules it if scheduled). A time already past fires at the next
 * loop iteration. */
void wheel_add(struct wheel *w, struct wheel_entry *e, monotime_us due_us);

/** @brief Unschedule @p e; harmless when not scheduled. */
void wheel_remove(struct wheel *w, struct wheel_entry *e);

/** @return 1 when @p e is scheduled. */
int wheel_scheduled(const struct wheel_entry *e);

/** @return Entries scheduled (tests assert nothing is left). */
uint64_t wheel_count(const struct wheel *w);

#endif
