/*
 * The split of one count into contiguous parts; see shard.h.
 */
#include "shard.h"

#include "textarg.h"

#include <string.h>

uint64_t
shard_first(uint64_t total, uint32_t index, uint32_t parts)
{
    /* total stays below 2^32 and index below parts, so the product fits in 64 bits. */
    return total * index / parts;
}

uint64_t
shard_size(uint64_t total, uint32_t index, uint32_t parts)
{
    return shard_first(total, index + 1, parts) - shard_first(total, index, parts);
}

int
shard_parse(const char *text, uint32_t *index, uint32_t *parts)
{
    char head[16];
    const char *slash = text ? strchr(text, '/') : NULL;
    size_t n = slash ? (size_t)(slash - text) : 0;

    if (!slash || !n || n >= sizeof head) {
        return -1;
    }
    memcpy(head, text, n);
    head[n] = '\0';
    if (textarg_u32(slash + 1, 1, SHARD_MAX_PARTS, parts) || textarg_u32(head, 0, *parts - 1, index)) {
        return -1;
    }
    return 0;
}
