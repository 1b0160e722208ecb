/*
 * The control API's small parsers, kept apart from HTTP so unit tests can
 * drive them: a device range "N" or "N-M", a duration or a duration range
 * ("5s", "50ms", "10-20ms"), and the seeded draw of a share of devices.
 */
#ifndef FLEET_CAPI_TARGET_H
#define FLEET_CAPI_TARGET_H

#include <stdint.h>

/* Longest duration an action takes (a reboot's "for", a latency): one day. */
#define CAPI_MAX_DURATION_MS 86400000u

/**
 * @brief Parse "N" or "N-M" (decimal device indices) against a fleet of @p device_count devices.
 * @return 0; -1 when it is not a range (or M < N); -2 when it goes past the fleet.
 */
int capi_parse_range(const char *text, uint32_t device_count, uint32_t *first, uint32_t *last);

/**
 * @brief Parse a duration "Nms" or "Ns", or a range "N-Mms" / "N-Ms" (one unit for both ends).
 * @param[out] min_ms The lower end (or the duration).
 * @param[out] max_ms The upper end (equal to @p min_ms for one duration).
 * @return 0, or -1 when it is none of these, M < N, or it exceeds CAPI_MAX_DURATION_MS.
 */
/**
 * @brief Devices @p text (as capi_parse_range() reads it, global indices of a fleet of @p fleet_devices)
 * that this process serves: its slots @p offset .. @p offset + @p count - 1 of the fleet (a shard's).
 * @param[out] first,last The slots of the range served here (@p first > @p last when none is).
 * @param[out] elsewhere Devices of the range other processes (shards) serve.
 * @return As capi_parse_range().
 */
int capi_range_here(const char *text, uint32_t fleet_devices, uint32_t offset, uint32_t count,
                    uint32_t *first, uint32_t *last, uint32_t *elsewhere);

int capi_parse_ms_range(const char *text, uint32_t *min_ms, uint32_t *max_ms);

/**
 * @brief Whether device @p index is in the share @p share (0..1) drawn with @p seed.
 * The same seed picks the same devices, whatever else is picked or in what order.
 * @return 1 when picked.
 */
int capi_share_pick(uint64_t seed, uint32_t index, double share);

#endif
