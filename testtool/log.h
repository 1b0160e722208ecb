/*
 * Logging to stderr with a process-wide level. Thread-safe: each line is
 * formatted into a local buffer and written with one write(2).
 */
#ifndef FLEET_LOG_H
#define FLEET_LOG_H

enum log_level {
    LOGL_ERROR = 0, /* something failed */
    LOGL_WARN,      /* something odd, service continues */
    LOGL_INFO,      /* lifecycle: start-up, listening, shutdown */
    LOGL_DEBUG,     /* per session and per message detail */
};

/** @brief Set the lowest level printed (default LOGL_INFO). */
void log_set_level(enum log_level level);

/** @return The current level. */
enum log_level log_get_level(void);

/**
 * @brief Parse "error", "warn"/"warning", "info" or "debug" (case-insensitive).
 * @return 0 on success, -1 when @p name is none of these.
 */
int log_level_parse(const char *name, enum log_level *level);

/** @brief Print one line "fleetsim[level]: message" when @p level is enabled. */
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOGL_ERROR, __VA_ARGS__)
#define log_warn(...)  log_msg(LOGL_WARN, __VA_ARGS__)
#define log_info(...)  log_msg(LOGL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOGL_DEBUG, __VA_ARGS__)

#endif
