/*
 * Whole-file reads; see file_read.h.
 */
#include "file_read.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The errno of the last failure, for file_read_reason(). */
static _Thread_local int file_read_errno;

enum file_read_failure
file_read_all(const char *path, size_t max_bytes, char **text, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t used = 0, cap = 0;
    enum file_read_failure why = FILE_READ_OK;

    *text = NULL;
    if (!f) {
        file_read_errno = errno;
        return FILE_READ_OPEN;
    }
    for (;;) {
        if (used == cap) {
            size_t next = cap ? cap * 2 : 64 * 1024;
            char *grown;

            if (max_bytes && next > max_bytes + 1) {
                next = max_bytes + 1; /* one byte more tells "too large" from "exactly the limit" */
            }
            if (next <= cap) {
                why = FILE_READ_TOO_LARGE;
                break;
            }
            if (!(grown = realloc(buf, next + 1))) {
                why = FILE_READ_NOMEM;
                break;
            }
            buf = grown;
            cap = next;
        }
        size_t got = fread(buf + used, 1, cap - used, f);

        used += got;
        if (got == 0) {
            if (ferror(f)) {
                file_read_errno = errno;
                why = FILE_READ_IO;
            }
            break;
        }
    }
    if (why == FILE_READ_OK && max_bytes && used > max_bytes) {
        why = FILE_READ_TOO_LARGE;
    }
    fclose(f);
    if (why != FILE_READ_OK) {
        free(buf);
        return why;
    }
    if (!buf && !(buf = malloc(1))) {
        return FILE_READ_NOMEM;
    }
    buf[used] = '\0';
    *text = buf;
    if (len) {
        *len = used;
    }
    return FILE_READ_OK;
}

const char *
file_read_reason(enum file_read_failure why, size_t max_bytes)
{
    static _Thread_local char text[64];

    switch (why) {
    case FILE_READ_OK:
        return "no error";
    case FILE_READ_OPEN:
    case FILE_READ_IO:
        return strerror(file_read_errno);
    case FILE_READ_TOO_LARGE:
        snprintf(text, sizeof text, "larger than %zu bytes", max_bytes);
        return text;
    case FILE_READ_NOMEM:
        break;
    }
    return "out of memory";
}
