/*
 * What the harnesses over the simulator share: one fleet of one device, made
 * once per process the way fleetsim makes it (schemas, profile, template,
 * worker loop), with nothing listening on a fixed port and no thread running,
 * and the reset that puts the device back as it booted after every input, so
 * that no input sees what an earlier one left and nothing accumulates.
 * The loop never runs: timers a message starts (streams, hello deadline) are
 * stopped by the reset, never fired.
 */
#ifndef FLEET_FUZZ_FLEET_H
#define FLEET_FUZZ_FLEET_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devview.h"
#include "fleet.h"
#include "fuzz.h"
#include "respond.h"
#include "session.h"
#include "stream.h"

/* Largest input any harness takes: the inputs are messages and files, and bigger ones only slow the search.
 */
#define FZ_MAX_INPUT_BYTES (64u * 1024u)

/* The device clock stands still, so replies (uptimes, counters, times) depend on the input only. */
#define FZ_CLOCK_MS 1700000000000ull

static struct fleet fz_fleet; /* the fleet; valid once fz_fleet_open() returned */

/* Frees the fleet at exit, so leak checks see only what inputs leaked. */
static inline void
fz_fleet_close(void)
{
    fleet_close(&fz_fleet);
}

/**
 * Make the fleet: one device, profile "minimal", NETCONF over plain TCP on an
 * ephemeral loopback port (never accepted from), the SNMP agent's
 * communities and one SNMPv3 user of each security level, and @p notif_file
 * (or none). Exits the process on failure: a harness without its fleet
 * would test nothing.
 */
static inline void
fz_fleet_open(const char *notif_file)
{
    struct fleet_config cfg = {0};
    char err[512];
    static const char *const users[] = {"noauth:none::none:", "authonly:sha:authpass123:none:",
                                        "authpriv:sha256:authpass123:aes:privpass123"};

    log_set_level(LOGL_ERROR);
    cfg.device_count = 1;
    cfg.starting_port = 0;
    cfg.ip = 0x7f000001u;
    cfg.threads = 1;
    cfg.log_level = LOGL_ERROR;
    cfg.max_msg_bytes = 4u * FZ_MAX_INPUT_BYTES;
    cfg.hello_timeout_s = 60;
    cfg.profile = "minimal";
    cfg.seed = 1;
    cfg.clock_fixed_ms = FZ_CLOCK_MS;
    cfg.snmp_community = "public";
    cfg.snmp_write_community = "private";
    cfg.snmp_max_msg_bytes = 1472;
    cfg.replay_log = 16;
    cfg.trap_community = "public";
    cfg.notification_file = notif_file;
    for (size_t i = 0; i < sizeof users / sizeof users[0]; i++) {
        if (respond_v3_user_parse(users[i], &cfg.snmp_v3_users[i], err, sizeof err)) {
            fprintf(stderr, "fuzz: v3 user %s: %s\n", users[i], err);
            exit(1);
        }
        cfg.snmp_v3_user_count++;
    }
    if (fleet_init(&fz_fleet, &cfg, NULL, 0, err, sizeof err)) {
        fprintf(stderr, "fuzz: cannot make the fleet: %s\n", err);
        exit(1);
    }
    atexit(fz_fleet_close);
}

/* The LLVMFuzzerInitialize of a harness that needs only the fleet (made with @p notif_file). */
#define FZ_FLEET_INITIALIZE(notif_file)                                                                      \
    int LLVMFuzzerInitialize(int *argc, char ***argv)                                                        \
    {                                                                                                        \
        (void)argc;                                                                                          \
        (void)argv;                                                                                          \
        fz_fleet_open(notif_file);                                                                           \
        return 0;                                                                                            \
    }

/** The fleet's only device. */
static inline struct device *
fz_device(void)
{
    return &fz_fleet.devices[0];
}

/* Put the device back as it booted: sessions closed and freed, datastores, view, stream and counters reset.
 */
static inline void
fz_device_reset(void)
{
    struct device *dev = fz_device();
    struct worker *w = dev->worker;

    sess_close_all(w);
    stream_free(dev->stream, w->loop);
    dev->stream = NULL;
    ds_close(&dev->ds);
    devview_state_free(dev->view);
    dev->view = NULL;
    memset(&dev->stats, 0, sizeof dev->stats);
    memset(&dev->snmp_stats, 0, sizeof dev->snmp_stats);
    atomic_store(&fz_fleet.next_session_id, 1);
}

#endif
