/*
 * A bearer token kept in a file (--api-token-file, the stress client's token
 * options): the simulator checks requests against it, the stress client
 * sends it. One reader so both take the same files.
 */
#ifndef FLEET_TOKEN_FILE_H
#define FLEET_TOKEN_FILE_H

#include <stddef.h>

/* Longest bearer token a token file may hold. */
#define TOKEN_FILE_MAX_BYTES 4096

/**
 * @brief Read the token in @p path: its one line, trailing white space and newline trimmed.
 * @param[in] path The file.
 * @param[in] option The option that named it, for the message ("--api-token-file").
 * @param[out] err Why not: unreadable, empty, more than one word or line, longer than TOKEN_FILE_MAX_BYTES.
 * @param[in] err_len Size of @p err.
 * @return The token (malloc'd, the caller frees it), or NULL.
 */
char *token_file_read(const char *path, const char *option, char *err, size_t err_len);

#endif
