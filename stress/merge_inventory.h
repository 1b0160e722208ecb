/*
 * fleetsim-stress merge of inventories: the --emit-inventory files of the
 * shards of one fleet (fleetsim --shard I/N, given in shard order) as the
 * one file the whole fleet's process would write, byte for byte. Every
 * format is a head, the devices' entries and a tail; the shards' heads and
 * tails are the whole fleet's, so the merge keeps the first's and joins
 * the entries between them.
 */
#ifndef STRESS_MERGE_INVENTORY_H
#define STRESS_MERGE_INVENTORY_H

#include <stddef.h>

#include "sbuf.h"

/* One file to merge (a manifest, a report or an inventory). */
struct merge_input {
    const char *file; /* its name, for messages and "merged_from" */
    const char *text; /* its JSON text, not owned */
    size_t len;       /* bytes of text */
};

/** @return The inventory format @p text is written in (fleetsim's --inventory-format), or NULL. */
const char *merge_inventory_format(const char *text, size_t len);

/**
 * @brief Join the inventories @p in[0..n) (one format, shard order) into @p out.
 * @return 0, or -1 with @p err set (formats or heads differ, a file is not an inventory).
 */
int merge_inventories(const struct merge_input *in, size_t n, struct sbuf *out, char *err, size_t err_len);

/** @brief Write @p b to @p path as it is (mode 0600: inventories may hold passwords). @return 0 or -1. */
int merge_inventory_write(const char *path, const struct sbuf *b);

#endif
