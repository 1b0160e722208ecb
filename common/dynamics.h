/*
 * Values that move: interface counters and gauges as pure functions of
 * (device seed, object, time). Nothing is stored or ticked; a read computes
 * the value for its instant, so two reads at the same instant (a NETCONF get
 * and an SNMP get) agree and no value is ever stale. Counters are integrals
 * of a rate kept inside the profile's utilisation band, so they only grow.
 */
#ifndef FLEET_DYNAMICS_H
#define FLEET_DYNAMICS_H

#include <stdint.h>

#include "profile.h"

/* One interface's counters at an instant (the 64-bit HC values; Counter32 columns take the low 32 bits). */
struct dyn_if_counters {
    uint64_t in_octets;
    uint64_t in_ucast;
    uint64_t in_multicast;
    uint64_t in_broadcast;
    uint64_t in_discards;
    uint64_t in_errors;
    uint64_t in_unknown_protos;
    uint64_t out_octets;
    uint64_t out_ucast;
    uint64_t out_multicast;
    uint64_t out_broadcast;
    uint64_t out_discards;
    uint64_t out_errors;
};

/* One direction of an interface's counters. */
struct dyn_direction_counters {
    uint64_t octets;
    uint64_t ucast;
    uint64_t multicast;
    uint64_t broadcast;
    uint64_t discards;
    uint64_t errors;
    uint64_t unknown_protos; /* inbound only; 0 for the outbound direction */
};

/**
 * @brief One direction (@p out 0: inbound, 1: outbound) of dyn_if_counters(), the same numbers at
 * half the cost, for readers that need only one.
 */
void dyn_if_direction(const struct profile_traffic *tr, uint64_t seed, uint32_t if_pos, uint64_t speed_bps,
                      uint64_t traffic_ms, int out, struct dyn_direction_counters *d);

/* A profile's traffic with everything that does not depend on the device, interface or time worked out
 * once (dyn_traffic_prepare()); what the fast readers below take. */
struct dyn_traffic {
    int moving;            /* 0: counters stay at their base (no band) */
    int waves;             /* 1 when the band leaves room for waves */
    uint64_t mid_ppb;      /* mid-band utilisation, parts per billion */
    uint64_t p1_ms;        /* main period */
    double amp[2];         /* wave amplitudes, share of speed: main and jitter */
    uint32_t packet_bytes; /* >= 1 */
    uint64_t q_mcast, q_bcast, q_ucast, q_errors, q_discards, q_unknown; /* shares in steps of 2^-40 */
};

/** @brief Work out @p tr's constants once. */
void dyn_traffic_prepare(const struct profile_traffic *tr, struct dyn_traffic *dt);

/** @return One direction's octet counter (the same as dyn_if_direction()'s), from prepared traffic. */
uint64_t dyn_prep_octets(const struct dyn_traffic *dt, uint64_t seed, uint32_t if_pos, uint64_t speed_bps,
                         uint64_t traffic_ms, int out);

/** @brief The packet, error and discard counters that follow from an octet counter. */
void dyn_prep_derive(const struct dyn_traffic *dt, uint64_t octets, int out,
                     struct dyn_direction_counters *d);

/** @return The seed of device @p index in a fleet seeded with @p fleet_seed (well mixed, never 0). */
uint64_t dyn_device_seed(uint64_t fleet_seed, uint32_t index);

/**
 * @brief An interface's counters after @p traffic_ms of passing traffic.
 * @param[in] seed Device seed.
 * @param[in] if_pos Interface position in the profile (ifIndex - 1); interfaces of a device differ.
 * @param[in] speed_bps Interface speed; the rate stays inside tr's band of it.
 * @param[in] traffic_ms Milliseconds the interface has carried traffic (time up, not wall time).
 * Monotonic in traffic_ms for every field (until a field wraps at 2^64, over ten years at 400 Gb/s);
 * starts from a seed-dependent base below 2^40, not 0. Packets are octets / packet_bytes; unicast,
 * multicast and broadcast are each floor(packets * share), so they may sum to up to 2 less than
 * packets; errors and discards are floor(packets * ppm / 10^6); in_unknown_protos runs at a quarter
 * of the error rate. Costs about 0.3 us: compute it once per interface per request.
 */
void dyn_if_counters(const struct profile_traffic *tr, uint64_t seed, uint32_t if_pos, uint64_t speed_bps,
                     uint64_t traffic_ms, struct dyn_if_counters *out);

/**
 * @brief A gauge inside [@p min, @p max] at time @p t_ms: a slow wave of period @p period_s plus
 * bounded jitter, different per (seed, object).
 */
uint32_t dyn_gauge(uint64_t seed, uint32_t object, uint32_t min, uint32_t max, uint32_t period_s,
                   uint64_t t_ms);

/** @return A uniform 64-bit value from (seed, a, b); stable across runs and machines. */
uint64_t dyn_hash(uint64_t seed, uint64_t a, uint64_t b);

#endif
