/*
 * Reading a folder of YANG files once at start-up. Only the head of each file
 * is looked at here (the first keyword and name, and the revision dates);
 * libyang parses the text later, from these bytes, so that get-schema can
 * return exactly what the vendor shipped.
 */
#include "yang_dir.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_read.h"

/* Past whitespace and comments. */
static const char *
skip_space(const char *p)
{
    for (;;) {
        while (isspace((unsigned char)*p)) {
            p++;
        }
        if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n') {
                p++;
            }
        } else if (p[0] == '/' && p[1] == '*') {
            const char *end = strstr(p + 2, "*/");
            p = end ? end + 2 : p + strlen(p);
        } else {
            return p;
        }
    }
}

/* A YANG identifier or a quoted one; returns the end, or NULL when there is none. */
static const char *
read_word(const char *p, const char **start)
{
    char quote = 0;

    if (*p == '"' || *p == '\'') {
        quote = *p++;
    }
    *start = p;
    while (isalnum((unsigned char)*p) || *p == '_' || *p == '-' || *p == '.') {
        p++;
    }
    if (p == *start || (quote && *p != quote)) {
        return NULL;
    }
    return p;
}

static int
is_date(const char *p)
{
    static const char pattern[] = "dddd-dd-dd";

    for (size_t i = 0; i < sizeof pattern - 1; i++) {
        if (pattern[i] == 'd' ? !isdigit((unsigned char)p[i]) : p[i] != '-') {
            return 0;
        }
    }
    return !isalnum((unsigned char)p[10]);
}

/* The newest "revision DATE" statement (a statement starts after space, ';', '{' or '}'). */
static char *
newest_revision(const char *text)
{
    const char *best = NULL;

    for (const char *p = strstr(text, "revision"); p; p = strstr(p + 1, "revision")) {
        const char *q = p + strlen("revision");
        if (p > text && !isspace((unsigned char)p[-1]) && !strchr(";{}", p[-1])) {
            continue;
        }
        if (!isspace((unsigned char)*q)) {
            continue;
        }
        q = skip_space(q);
        if (*q == '"' || *q == '\'') {
            q++;
        }
        if (is_date(q) && (!best || strncmp(q, best, 10) > 0)) {
            best = q;
        }
    }
    return best ? strndup(best, 10) : NULL;
}

/* Every "import NAME" and "include NAME" statement (a statement starts after space, ';', '{' or '}'). */
static enum fleet_err
read_deps(struct ydir_file *f)
{
    static const char *const keywords[] = {"import", "include"};

    for (size_t k = 0; k < 2; k++) {
        size_t klen = strlen(keywords[k]);
        for (const char *p = strstr(f->text, keywords[k]); p; p = strstr(p + 1, keywords[k])) {
            const char *start;
            const char *end;
            char **grown;
            if ((p > f->text && !isspace((unsigned char)p[-1]) && !strchr(";{}", p[-1])) ||
                !isspace((unsigned char)p[klen]) || !(end = read_word(skip_space(p + klen), &start))) {
                continue;
            }
            if (!(grown = realloc(f->deps, (f->dep_count + 1) * sizeof *grown))) {
                return FLEET_ERR_NOMEM;
            }
            f->deps = grown;
            if (!(f->deps[f->dep_count] = strndup(start, (size_t)(end - start)))) {
                return FLEET_ERR_NOMEM;
            }
            f->dep_count++;
        }
    }
    return FLEET_OK;
}

int
ydir_depends_on(const struct ydir *dir, size_t index, const char *name)
{
    const struct ydir_file *f = &dir->files[index];

    for (size_t i = 0; i < f->dep_count; i++) {
        if (!strcmp(f->deps[i], name)) {
            return 1;
        }
    }
    return 0;
}

int
ydir_read_head(const char *text, char **name, char **revision)
{
    const char *p = skip_space(text);
    const char *start;
    const char *end;
    int kind;

    *name = NULL;
    *revision = NULL;
    if (!strncmp(p, "module", 6) && isspace((unsigned char)p[6])) {
        kind = 1;
        p += 6;
    } else if (!strncmp(p, "submodule", 9) && isspace((unsigned char)p[9])) {
        kind = 2;
        p += 9;
    } else {
        return 0;
    }
    end = read_word(skip_space(p), &start);
    if (!end || !(*name = strndup(start, (size_t)(end - start)))) {
        return 0;
    }
    *revision = newest_revision(end);
    return kind;
}

static int
has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s);
    size_t m = strlen(suffix);

    return n > m && !strcmp(s + n - m, suffix);
}

static int
cmp_files(const void *a, const void *b)
{
    return strcmp(((const struct ydir_file *)a)->file_name, ((const struct ydir_file *)b)->file_name);
}

/* The whole file, NUL-terminated. */
static enum fleet_err
read_text(const char *path, char **text, size_t *len, char *err, size_t err_len)
{
    enum file_read_failure why = file_read_all(path, 0, text, len);

    if (why == FILE_READ_NOMEM) {
        return FLEET_ERR_NOMEM;
    }
    if (why != FILE_READ_OK) {
        snprintf(err, err_len, "cannot read \"%s\": %s", path, file_read_reason(why, 0));
        return FLEET_ERR_INVAL;
    }
    return FLEET_OK;
}

enum fleet_err
ydir_scan(struct ydir *dir, const char *path, char *err, size_t err_len)
{
    enum fleet_err rc = FLEET_OK;
    DIR *d;
    struct dirent *e;
    char file_path[4096];

    memset(dir, 0, sizeof *dir);
    if (!(d = opendir(path))) {
        snprintf(err, err_len, "cannot read schemas folder \"%s\": %s", path, strerror(errno));
        return FLEET_ERR_INVAL;
    }
    if (!(dir->path = strdup(path))) {
        rc = FLEET_ERR_NOMEM;
        goto cleanup;
    }
    while ((e = readdir(d))) {
        struct ydir_file *grown;
        struct ydir_file *f;
        int kind;
        if (e->d_name[0] == '.' || !has_suffix(e->d_name, ".yang")) {
            continue;
        }
        if (!(grown = realloc(dir->files, (dir->file_count + 1) * sizeof *grown))) {
            rc = FLEET_ERR_NOMEM;
            goto cleanup;
        }
        dir->files = grown;
        f = &dir->files[dir->file_count++];
        memset(f, 0, sizeof *f);
        if (!(f->file_name = strdup(e->d_name))) {
            rc = FLEET_ERR_NOMEM;
            goto cleanup;
        }
        snprintf(file_path, sizeof file_path, "%s/%s", path, e->d_name);
        if ((rc = read_text(file_path, &f->text, &f->text_len, err, err_len))) {
            goto cleanup;
        }
        if (!(kind = ydir_read_head(f->text, &f->name, &f->revision))) {
            snprintf(err, err_len, "\"%s\" does not start with a module or submodule statement", file_path);
            rc = FLEET_ERR_INVAL;
            goto cleanup;
        }
        f->is_submodule = kind == 2;
        if ((rc = read_deps(f))) {
            goto cleanup;
        }
    }
    if (!dir->file_count) {
        /* Most likely a wrong path (the folder above the modules, or a copy that failed): say so now. */
        snprintf(err, err_len,
                 "schemas folder \"%s\" holds no .yang file (modules are NAME.yang or NAME@REVISION.yang, in "
                 "the folder itself)",
                 path);
        rc = FLEET_ERR_INVAL;
        goto cleanup;
    }
    qsort(dir->files, dir->file_count, sizeof *dir->files, cmp_files);
    /* The newest revision of each module name (ties: the first file name). */
    for (size_t i = 0; i < dir->file_count; i++) {
        struct ydir_file *f = &dir->files[i];
        long best = ydir_find(dir, f->name, NULL, f->is_submodule);
        f->newest = !f->is_submodule && best == (long)i;
    }

cleanup:
    closedir(d);
    if (rc) {
        ydir_free(dir);
    }
    return rc;
}

void
ydir_free(struct ydir *dir)
{
    for (size_t i = 0; i < dir->file_count; i++) {
        free(dir->files[i].file_name);
        free(dir->files[i].name);
        free(dir->files[i].revision);
        free(dir->files[i].text);
        for (size_t j = 0; j < dir->files[i].dep_count; j++) {
            free(dir->files[i].deps[j]);
        }
        free(dir->files[i].deps);
    }
    free(dir->files);
    free(dir->path);
    memset(dir, 0, sizeof *dir);
}

long
ydir_find(const struct ydir *dir, const char *name, const char *revision, int is_submodule)
{
    long best = -1;

    for (size_t i = 0; i < dir->file_count; i++) {
        const struct ydir_file *f = &dir->files[i];
        if (f->is_submodule != is_submodule || !f->name || strcmp(f->name, name)) {
            continue;
        }
        if (revision) {
            if (f->revision && !strcmp(f->revision, revision)) {
                return (long)i;
            }
            continue;
        }
        if (best < 0 || (f->revision && (!dir->files[best].revision ||
                                         strcmp(f->revision, dir->files[best].revision) > 0))) {
            best = (long)i;
        }
    }
    return best;
}
