/*
 * Reading a whole file as text, for the files both programs take (YANG
 * modules, fleet files, scenarios, edit templates, Chart.js): one reader,
 * bounded, so a wrong path given for a small file cannot swallow memory.
 */
#ifndef FLEET_FILE_READ_H
#define FLEET_FILE_READ_H

#include <stddef.h>

/* Why file_read_all() failed. */
enum file_read_failure {
    FILE_READ_OK,
    FILE_READ_OPEN,      /* it cannot be opened (errno) */
    FILE_READ_IO,        /* reading it failed (errno) */
    FILE_READ_TOO_LARGE, /* it holds more than the limit */
    FILE_READ_NOMEM,     /* no memory for it */
};

/**
 * @brief The whole of @p path, NUL-terminated, if it holds at most @p max_bytes (0: no limit).
 * @param[out] text The text (free()), NULL on failure.
 * @param[out] len Its length without the NUL; may be NULL.
 * @return FILE_READ_OK or why not; file_read_reason() words it.
 */
enum file_read_failure file_read_all(const char *path, size_t max_bytes, char **text, size_t *len);

/** @return What went wrong, for a message: strerror() of the failing call, or "larger than N bytes". Static
 * text, valid until the next call. */
const char *file_read_reason(enum file_read_failure why, size_t max_bytes);

#endif
