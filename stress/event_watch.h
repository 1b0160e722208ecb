/*
 * Watching a fleet's event log, shared by controller-mount and mount
 * --reconnect --events: the HTTP client of GET /api/v1/events?since=N (one
 * libcurl handle, a bounded limit, an optional bearer token), the log of
 * what it brought (the events in an event_recovery.c tracker, the fleet's
 * seed and scenario), and the summary lines and manifest members both
 * modes print the same way. The fetcher and the log are separate so that
 * a fetch can run on a thread of its own while the log stays the caller's.
 */
#ifndef STRESS_EVENT_WATCH_H
#define STRESS_EVENT_WATCH_H

#include <curl/curl.h>
#include <stdint.h>

#include "event_recovery.h"
#include "fleet_events.h"
#include "http_body.h"
#include "sbuf.h"

/* Room for one fetch error's text. */
#define EVW_ERROR_BYTES 256

struct evw_fetcher {
    CURL *curl;                        /* the events handle, NULL before evw_fetcher_init() succeeded */
    struct curl_slist *headers;        /* Accept, and Authorization with a token */
    char *base;                        /* the URL without trailing slashes, malloc'd */
    struct http_body resp;             /* the current answer, bounded */
    char curl_err[CURL_ERROR_SIZE];    /* libcurl's text of the last failure */
    int tty;                           /* 1: messages first clear a progress line on stderr */
    uint64_t next;                     /* since= of the next fetch */
    uint64_t fetches;                  /* fetches made */
    uint64_t errors;                   /* fetches that failed */
    uint64_t dropped;                  /* events the fleet no longer held when asked */
    char first_error[EVW_ERROR_BYTES]; /* text of the first failed fetch, "" when none */
    char prev_error[EVW_ERROR_BYTES];  /* text of the previous fetch's failure, "" when it went well */
};

struct evw_log {
    struct evr_tracker tr;  /* the events taken and their recovery */
    struct fev_answer meta; /* the last answer's seed and scenario (never events) */
    int have_meta;          /* 1 once an answer was taken */
    int tty;                /* 1: an event's live line goes to stderr over the progress line */
};

/**
 * @brief Set up the client of @p url's event log (libcurl's global init done by the caller).
 * @param[out] f The fetcher (zeroed first; close it with evw_fetcher_close() whatever the result).
 * @param[in] url The fleet's HTTP server, "http://host:port".
 * @param[in] token_file A file holding the bearer token, or NULL.
 * @param[in] limit_ms Limit of one fetch, connecting included, ms.
 * @param[in] tty 1 when stderr carries a progress line that a message clears first.
 * @return 0, or -1 with a message printed.
 */
int evw_fetcher_init(struct evw_fetcher *f, const char *url, const char *token_file, long limit_ms, int tty);

/** @brief Free the fetcher's handle and buffers (also after a failed init). */
void evw_fetcher_close(struct evw_fetcher *f);

/**
 * @brief One GET of the events after f->next. A failure is counted, kept as the first error, and told on
 * stderr once per kind; the dropped count and f->next advance with an answer.
 * @param[in] t_s Now on the run's clock, for the messages.
 * @param[out] a The answer (zeroed first; free with fev_answer_free()).
 * @return 1 answered, 0 failed (or cut short by a signal).
 */
int evw_fetch(struct evw_fetcher *f, double t_s, struct fev_answer *a);

/** @brief An empty log whose t_s 0 is the wall clock @p start_wall_ms. */
void evw_log_init(struct evw_log *l, int64_t start_wall_ms, int tty);

/** @brief Free the log's events. */
void evw_log_free(struct evw_log *l);

/**
 * @brief Take an answer: its new events into the tracker (moved, each shown in a live line on stdout)
 * and its seed and scenario. @p a is emptied.
 * @return 0, or -1 when memory ran out.
 */
int evw_take(struct evw_log *l, struct fev_answer *a);

/** @brief The summary's lines: the fetches, the fleet, then each event with its loss and healing. */
void evw_print(const struct evw_log *l, const struct evw_fetcher *f);

/**
 * @brief The manifest's "fleet_seed", "scenario" (the fleet's, else --scenario's or null: the caller
 * adds no other), "events_fetches", "events_errors", "events_dropped", "events_first_error" and "events"
 * members, each followed by a comma.
 */
void evw_manifest(struct sbuf *b, const struct evw_log *l, const struct evw_fetcher *f);

/** @return How many events expecting recovery are not healed (EVR_PENDING), each told on stderr. */
uint32_t evw_report_unhealed(const struct evw_log *l);

#endif
