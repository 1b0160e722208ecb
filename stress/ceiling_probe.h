/*
 * The collector's counters as ceiling reads them: a probe is a Prometheus
 * instant query ("prom:BASE_URL:QUERY", the values of every series of the
 * answer summed) or a shell command that prints one number ("cmd:COMMAND").
 * Each read gives one number or a clear reason why not; a probe that fails
 * is reported, never read as 0.
 */
#ifndef STRESS_CEILING_PROBE_H
#define STRESS_CEILING_PROBE_H

#include <stddef.h>

#include "sbuf.h"

/* Longest answer of a probe kept (a Prometheus answer, a command's output). */
#define CEIL_PROBE_ANSWER_MAX_BYTES (1u << 20)

enum ceil_probe_kind {
    CEIL_PROBE_PROM, /* Prometheus HTTP API instant query */
    CEIL_PROBE_CMD,  /* a command run by /bin/sh -c, its standard output one number */
    CEIL_PROBE_FILE, /* the last line of a file's tail matching a regular expression (ceiling_probe_file.c) */
};

/* How much of a file:'s end is looked at: a collector's stats file grows without bound, its last
 * report is at its end. */
#define CEIL_FILE_TAIL_BYTES (256u * 1024u)

/* One probe, parsed from its text. */
struct ceil_probe {
    char name[64];             /* what it measures ("arrived", "persisted", a drop counter's name) */
    enum ceil_probe_kind kind; /* prom or cmd */
    char *text;                /* the spec as given (malloc'd) */
    char *base_url;            /* prom: "http://host:port[/path]" without a trailing '/' (malloc'd) */
    char *query;      /* prom: the PromQL text; cmd: the command; file: the regular expression (malloc'd) */
    char *path;       /* file: the file read (malloc'd) */
    void *regex;      /* file: the compiled expression (a regex_t, malloc'd) */
    double timeout_s; /* a read gives up after this long */
    unsigned reads, failures; /* reads asked and those that gave no number */
    char last_error[256];     /* why the last failed read failed */
};

/**
 * @brief Parse @p spec ("prom:BASE_URL:QUERY", "cmd:COMMAND" or "file:PATH:REGEX") into @p p, named @p name.
 * BASE_URL is http[s]://host[:port][/path] (host may be [v6]); the query starts after the ':' that ends it,
 * so a path holds no ':'. After the host, ':' and digits up to a ':', a '/' or the end are a port (so
 * "prom:http://h:9090" is refused as a query left out); other text after ':' is the query.
 * @return 0, or -1 with @p err saying what is wrong.
 */
int ceil_probe_parse(const char *name, const char *spec, double timeout_s, struct ceil_probe *p, char *err,
                     size_t err_len);

/** @brief Free what ceil_probe_parse() allocated (the struct itself is the caller's). */
void ceil_probe_free(struct ceil_probe *p);

/**
 * @brief Read the probe once.
 * @return 0 with the number in @p value, or -1 with p->last_error set (the server or command failed, the
 * answer is not one number, the query matched no series, the timeout passed, the run was interrupted).
 */
int ceil_probe_read(struct ceil_probe *p, double *value);

/**
 * @brief The number in a Prometheus /api/v1/query answer: a scalar's value, or the sum of a vector's
 * values. Pure: unit-tested on real answers.
 * @return 0, or -1 with @p err (status not success, an error answer, an empty vector, a matrix, a value
 * that is not a number, malformed JSON).
 */
int ceil_prom_answer_value(const char *body, size_t len, double *value, char *err, size_t err_len);

/**
 * @brief The number a command printed: leading and trailing white space allowed, one number (integer,
 * decimal or exponent form), nothing else. Pure.
 * @return 0, or -1 with @p err.
 */
int ceil_cmd_output_value(const char *out, size_t len, double *value, char *err, size_t err_len);

/**
 * @brief One synchronous HTTP request (GET, or POST of @p post_body as JSON), what the probes and the fleet
 * client share: bounded answer, @p timeout_s for the whole transfer, Ctrl-C cuts it short.
 * @param[in] url The whole URL.
 * @param[in] post_body NULL for a GET, else the JSON body of a POST.
 * @param[in] auth_header "Authorization: Bearer ..." or NULL.
 * @param[in] timeout_s Limit of the whole request.
 * @param[in] max_bytes Larger answers are refused.
 * @param[in,out] answer Replaced by the answer's body when one came (even a refused one); the caller frees
 * it.
 * @param[out] status The HTTP status (0 when none came), or NULL.
 * @param[out] err Why it failed: unreachable, timeout, too large, interrupted, or a status outside 2xx as
 * "URL: HTTP 404: <the body's \"error\" text>".
 * @param[in] err_len Size of @p err.
 * @return 0 on a 2xx answer, else -1.
 */
int ceil_http_call(const char *url, const char *post_body, const char *auth_header, double timeout_s,
                   size_t max_bytes, struct sbuf *answer, long *status, char *err, size_t err_len);

/**
 * @brief Compile a file: probe's POSIX extended regular expression @p regex into p->regex.
 * @return 0, or -1 with @p err (the expression is not valid, or out of memory).
 */
int ceil_file_probe_compile(struct ceil_probe *p, const char *regex, char *err, size_t err_len);

/** @brief Free p->regex (NULL: nothing). */
void ceil_file_probe_free(struct ceil_probe *p);

/**
 * @brief The number of the last line of @p text (@p len bytes, no NUL needed; modified: line ends become
 * NULs) that
 * @p regex matches: its first parenthesised group, or the whole match without groups, read as
 * ceil_cmd_output_value() reads a command's output. Pure: unit-tested on rsyslog's impstats lines.
 * @return 0, or -1 with @p err (no line matches, the match is not one number).
 */
int ceil_file_last_match(char *text, size_t len, const void *regex, double *value, char *err, size_t err_len);

/**
 * @brief Read a file: probe once: the last CEIL_FILE_TAIL_BYTES of p->path, then ceil_file_last_match().
 * No process, no copy of the whole file: a read costs microseconds.
 * @return 0, or -1 with p->last_error.
 */
int ceil_file_probe_read(struct ceil_probe *p, double *value);

#endif
