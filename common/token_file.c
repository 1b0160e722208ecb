/*
 * A bearer token's file; see token_file.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "token_file.h"

char *
token_file_read(const char *path, const char *option, char *err, size_t err_len)
{
    FILE *f = fopen(path, "r");
    char buf[TOKEN_FILE_MAX_BYTES + 2];
    size_t n;

    if (!f) {
        snprintf(err, err_len, "%s %s: %s", option, path, strerror(errno));
        return NULL;
    }
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ' || buf[n - 1] == '\t')) {
        buf[--n] = '\0';
    }
    if (n > TOKEN_FILE_MAX_BYTES || !n || strpbrk(buf, " \t\r\n")) {
        snprintf(err, err_len, "%s %s: expected one token of 1 to %d characters without spaces", option, path,
                 TOKEN_FILE_MAX_BYTES);
        return NULL;
    }
    return strdup(buf);
}
