/*
 * Command-line values: whole numbers in a range and true/false, parsed the
 * same way by fleetsim and fleetsim-stress (no sign, no trailing text).
 */
#ifndef FLEET_TEXTARG_H
#define FLEET_TEXTARG_H

#include <stdint.h>

/** @brief A decimal number in [min, max]. @return 0, or -1 when @p s is not one. */
int textarg_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/** @brief The same for 32 bits. */
int textarg_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out);

/** @brief "true" or "false" (NULL, as for a flag given without value, is true). @return 0 or -1. */
int textarg_bool(const char *s, int *out);

#endif
