/*
 * The fleet as ceiling drives it, through its --metrics server: the control
 * API sets the channel's per-device rate of a group or of every present
 * device, /metrics gives point 1 (the push ledger's sent), /api/v1/fleet
 * the device count and the controls (version, a group's push settings).
 */
#ifndef STRESS_CEILING_FLEET_H
#define STRESS_CEILING_FLEET_H

#include <stddef.h>
#include <stdint.h>

enum ceil_channel {
    CEIL_CHANNEL_SYSLOG,       /* syslog-rate, ledger channel "syslog" */
    CEIL_CHANNEL_TRAP,         /* trap-rate, channel "trap" */
    CEIL_CHANNEL_NOTIFICATION, /* notification-rate, channel "netconf" */
};

/** @return "syslog", "trap" or "notification" (as --channel takes them). */
const char *ceil_channel_name(enum ceil_channel c);

/* What the fleet said about itself. */
struct ceil_fleet_info {
    uint32_t devices;     /* present devices the rate is set on (the group's, or the fleet's) */
    uint32_t first, last; /* their index range (a group's first and last; 0 and fleet_devices - 1) */
    char version[64];     /* fleetsim's version ("" when the fleet does not say) */
    char format[32];      /* the channel's format ("rfc5424", "v2c", ...) or "" */
    char transport[32];   /* the channel's transport ("udp", "tcp", "tls", "netconf") or "" */
    char group_type[64];  /* the group's device type, "" for the whole fleet */
};

/* A fleet under the run's control. */
struct ceil_fleet {
    char *base_url; /* "http://host:port" of its --metrics server, no trailing '/' (malloc'd) */
    char *token;    /* bearer token read from --api-token-file, or NULL (malloc'd) */
    enum ceil_channel channel;
    char *group; /* group name, or NULL for every present device (malloc'd) */
    struct ceil_fleet_info info;
    double timeout_s;     /* one request's limit */
    char last_error[256]; /* why the last call failed */
};

/**
 * @brief Connect to nothing yet: keep the URL, read the token file, and learn the fleet (GET /api/v1/fleet).
 * @return 0, or -1 with @p err (unreachable, 401, unknown group, no present device, unreadable token).
 */
int ceil_fleet_open(struct ceil_fleet *f, const char *base_url, const char *token_file, const char *group,
                    enum ceil_channel channel, double timeout_s, char *err, size_t err_len);

/** @brief Free what ceil_fleet_open() allocated. */
void ceil_fleet_close(struct ceil_fleet *f);

/**
 * @brief Set the per-device rate of the channel on the run's devices (POST .../syslog-rate {"rate": R}); a
 * negative @p per_device_rate puts back the group's own rate ({"rate": null}).
 * @return 0, or -1 with f->last_error (refused, devices failed, unreachable).
 */
int ceil_fleet_set_rate(struct ceil_fleet *f, double per_device_rate);

/**
 * @brief Point 1: the fleet's sent counter of the channel,
 * fleetsim_push_messages_total{channel,state="sent"}.
 * @return 0, or -1 with f->last_error.
 */
int ceil_fleet_sent(struct ceil_fleet *f, double *sent);

/**
 * @brief The sent counter of @p ledger_channel ("syslog", "trap", "netconf") in a /metrics text. Pure.
 * @return 0, or -1 when the series is not there.
 */
int ceil_metrics_sent(const char *text, size_t len, const char *ledger_channel, double *sent);

/**
 * @brief Fill @p info from a GET /api/v1/fleet answer for @p group (NULL: the whole fleet) and @p channel.
 * Pure. @return 0, or -1 with @p err (malformed, no such group, no present device).
 */
int ceil_fleet_info_parse(const char *body, size_t len, const char *group, enum ceil_channel channel,
                          struct ceil_fleet_info *info, char *err, size_t err_len);

/**
 * @brief The fleet's control report (GET /api/v1/report) into @p out (malloc'd, NUL-terminated): what the
 * ordering check joins the collector's file with.
 * @return 0, or -1 with f->last_error.
 */
int ceil_fleet_report(struct ceil_fleet *f, char **out, size_t *len);

#endif
