/*
 * For harnesses of readers that take a path: each input is written to one
 * file in a private temporary folder made once per process (removed at
 * exit), and the reader is pointed at it.
 */
#ifndef FLEET_FUZZ_FILE_H
#define FLEET_FUZZ_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Largest input any file harness takes: real files of these kinds are a few KiB. */
#define FZ_FILE_MAX_BYTES (64u * 1024u)

static char fz_dir[64];   /* the private folder, empty until fz_file_write() first ran */
static char fz_path[128]; /* the file inputs are written to (the last name given) */

static inline void
fz_dir_remove(void)
{
    unlink(fz_path);
    rmdir(fz_dir);
}

/**
 * Write @p data to the file @p name of the private folder (one name per harness).
 * @return Its path, valid until the next call. Exits on failure: the harness could test nothing.
 */
static inline const char *
fz_file_write(const char *name, const uint8_t *data, size_t size)
{
    FILE *f;

    if (!fz_dir[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(fz_dir, sizeof fz_dir, "%s/fleetsim-fuzz-XXXXXX", tmp && strlen(tmp) < 32 ? tmp : "/tmp");
        if (!mkdtemp(fz_dir)) {
            perror("fuzz: mkdtemp");
            exit(1);
        }
        atexit(fz_dir_remove);
    }
    snprintf(fz_path, sizeof fz_path, "%s/%s", fz_dir, name);
    if (!(f = fopen(fz_path, "wb")) || fwrite(data, 1, size, f) != size || fclose(f)) {
        perror("fuzz: cannot write the input file");
        exit(1);
    }
    return fz_path;
}

#endif
