/*
 * A folder of YANG files as a vendor ships it: every .yang file read once,
 * told apart as module or submodule by its first keyword, with its name and
 * newest revision, so that the schema loader parses only main modules (the
 * newest revision of each) and serves imports and includes from memory.
 */
#ifndef FLEET_YANG_DIR_H
#define FLEET_YANG_DIR_H

#include <stddef.h>

#include "err.h"

struct ydir_file {
    char *file_name;  /* file name inside the folder ("a@2020-01-01.yang"); owned */
    char *name;       /* module or submodule name from the file's first statement; owned */
    char *revision;   /* newest revision statement in the file, or NULL when it has none; owned */
    int is_submodule; /* 1 when the first keyword is "submodule" */
    int newest;       /* 1 for a module that is the newest revision of its name in the folder */
    char **deps;      /* names of the modules it imports and submodules it includes; owned */
    size_t dep_count; /* entries in deps */
    char *text;       /* the file's bytes, NUL-terminated; owned */
    size_t text_len;  /* bytes in text, without the NUL */
};

struct ydir {
    char *path;              /* the folder; owned */
    struct ydir_file *files; /* every .yang file, sorted by file name */
    size_t file_count;       /* entries in files */
};

/**
 * @brief Read every .yang file of @p path.
 * @param[out] dir Filled on success; release with ydir_free().
 * @param[out] err One line naming the file and the reason on failure.
 * @return FLEET_OK, FLEET_ERR_INVAL (folder or file unreadable, first
 *         statement neither module nor submodule) or FLEET_ERR_NOMEM.
 */
enum fleet_err ydir_scan(struct ydir *dir, const char *path, char *err, size_t err_len);

/** @brief Free the files. Accepts a zeroed dir. */
void ydir_free(struct ydir *dir);

/**
 * @brief A file by name, kind and revision.
 * @param[in] revision Exact revision, or NULL for the newest.
 * @return Index into dir->files, or -1.
 */
long ydir_find(const struct ydir *dir, const char *name, const char *revision, int is_submodule);

/**
 * @brief Whether file @p index imports or includes @p name.
 */
int ydir_depends_on(const struct ydir *dir, size_t index, const char *name);

/**
 * @brief The first keyword, name and newest revision of YANG text.
 * @param[out] name Malloc'd name.
 * @param[out] revision Malloc'd newest revision, or NULL.
 * @return 1 module, 2 submodule, 0 neither (or out of memory).
 */
int ydir_read_head(const char *text, char **name, char **revision);

#endif
