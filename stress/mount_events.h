/*
 * mount --reconnect --events: the mount run as the controller whose
 * recovery from a fleet's events is measured, with no controller. A small
 * thread fetches the fleet's new events every --events-interval
 * (event_watch.c) and hands them over under a lock; on the loop's thread,
 * every interval, the events handed over are taken and a "poll" of the
 * run's own sessions goes to event_recovery.c: each device's node-id
 * (fleetsim's "<port>-sim-device", or "<address>-sim-device" with
 * --ip-per-device) connected when its session's hello is done.
 */
#ifndef STRESS_MOUNT_EVENTS_H
#define STRESS_MOUNT_EVENTS_H

#include <stdint.h>

#include "options.h"
#include "sbuf.h"

struct mev;

/** @return 1 when device @p device's session is up (hello done); @p user is the caller's. */
typedef int (*mev_up_fn)(void *user, uint32_t device);

/**
 * @brief Set up the fetcher and the node-ids of @p o's devices and start the fetch thread; the run's
 * clock (t_s 0) starts here. libcurl's global init is done by the caller.
 * @return The watcher, or NULL with a message printed.
 */
struct mev *mev_start(const struct stress_options *o);

/**
 * @brief On the loop's thread: take the events the fetch thread brought, then poll the sessions through
 * @p up. @return 0, or -1 when memory ran out.
 */
int mev_poll(struct mev *m, mev_up_fn up, void *user);

/** @brief Stop the fetch thread, take what it brought, poll once more and close the measurement. */
int mev_stop(struct mev *m, mev_up_fn up, void *user);

/** @brief The summary's event lines (event_watch.c's, as controller-mount prints them). */
void mev_print(const struct mev *m);

/** @brief The manifest's "fleet_seed", "scenario", "events..." members, each followed by a comma. */
void mev_manifest(struct sbuf *b, const struct mev *m);

/** @return Events expecting recovery that did not heal, each told on stderr. */
uint32_t mev_unhealed(const struct mev *m);

/** @brief Stop the thread if still running, free everything; NULL is accepted. */
void mev_free(struct mev *m);

#endif
