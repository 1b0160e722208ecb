/*
 * Joining shards' inventories; see merge_inventory.h.
 */
#include "merge_inventory.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* How one inventory format is laid out (testtool/controller/inventory.c writes them). */
struct inv_layout {
    const char *format;   /* --inventory-format's name */
    const char *starts;   /* the file's first bytes */
    const char *head_end; /* the head ends after its first occurrence */
    const char *tail;     /* the file ends with this ("" for none) */
    const char *joiner;   /* between two shards' non-empty entries */
};

static const struct inv_layout inv_layouts[] = {
    {"odl-json", "{\"network-topology:topology\":", "\"node\":[", "\n]}]}\n", ","},
    {"odl-callhome", "{\"odl-netconf-callhome-server:", "\"device\":[", "\n]}}}\n", ","},
    {"prometheus-sd", "[", "[", "\n]\n", ","},
    {"opennms-requisition", "<?xml", "foreign-source=\"fleetsim\">\n", "</model-import>\n", ""},
    {"csv", "index,node_id,", "\r\n", "", ""},
};

static const struct inv_layout *
layout_of(const char *text, size_t len)
{
    for (size_t i = 0; i < sizeof inv_layouts / sizeof inv_layouts[0]; i++) {
        size_t n = strlen(inv_layouts[i].starts);
        if (len >= n && !memcmp(text, inv_layouts[i].starts, n)) {
            return &inv_layouts[i];
        }
    }
    return NULL;
}

const char *
merge_inventory_format(const char *text, size_t len)
{
    const struct inv_layout *l = layout_of(text, len);

    return l ? l->format : NULL;
}

/* The entries of @p in: [*from, *to) of its text. @return 0, or -1 when it is not laid out as @p l. */
static int
entries_of(const struct inv_layout *l, const struct merge_input *in, size_t *from, size_t *to)
{
    const char *head = strstr(in->text, l->head_end);
    size_t tail = strlen(l->tail);

    if (!head || in->len < tail || memcmp(in->text + in->len - tail, l->tail, tail)) {
        return -1;
    }
    *from = (size_t)(head - in->text) + strlen(l->head_end);
    *to = in->len - tail;
    return *from <= *to ? 0 : -1;
}

int
merge_inventories(const struct merge_input *in, size_t n, struct sbuf *out, char *err, size_t err_len)
{
    const struct inv_layout *l = n ? layout_of(in[0].text, in[0].len) : NULL;
    size_t head_len = 0;
    int any = 0;

    if (!l) {
        snprintf(err, err_len, "%s is not an inventory", n ? in[0].file : "(none)");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        size_t from, to;
        if (layout_of(in[i].text, in[i].len) != l || entries_of(l, &in[i], &from, &to)) {
            snprintf(err, err_len, "%s is not a %s inventory as %s is", in[i].file, l->format, in[0].file);
            return -1;
        }
        if (!i) {
            head_len = from;
            sbuf_add(out, in[0].text, head_len);
        } else if (from != head_len || memcmp(in[i].text, in[0].text, head_len)) {
            snprintf(err, err_len, "%s and %s begin differently: not inventories of one fleet", in[i].file,
                     in[0].file);
            return -1;
        }
        if (to > from) {
            sbuf_adds(out, any ? l->joiner : "");
            sbuf_add(out, in[i].text + from, to - from);
            any = 1;
        }
    }
    sbuf_adds(out, l->tail);
    if (out->failed) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    return 0;
}

int
merge_inventory_write(const char *path, const struct sbuf *b)
{
    char tmp[4096];
    int fd;
    ssize_t n = 0;

    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0) {
        return -1;
    }
    if (b->len) {
        n = write(fd, b->buf, b->len);
    }
    if (close(fd) || n != (ssize_t)b->len || rename(tmp, path)) {
        unlink(tmp);
        return -1;
    }
    return 0;
}
