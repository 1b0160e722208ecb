/*
 * Notification files: what devices stream. Two formats, told apart by the
 * root element: OpenDaylight testtool's (<notifications><notification>
 * <delay/><times/><content/></notification>...) and ours (<notification-stream
 * xmlns="urn:fleetsim:notifications">, an instance of
 * schemas/fleetsim-notifications.yang: a rate per device or in total, a
 * duration or a count, bursts, a weighted mix). Every notification's content
 * is validated against the fleet's schemas when the file loads, and split
 * into literal text and placeholders ({DEVICE}, {SEQ}, {TIME}, {IFINDEX},
 * {IFNAME}, and OpenDaylight's eventTime XXXX) so that a send is a copy.
 */
#ifndef FLEET_NOTIF_FILE_H
#define FLEET_NOTIF_FILE_H

#include <stddef.h>
#include <stdint.h>

#include <libyang/libyang.h>

#include "err.h"
#include "sbuf.h"

/* What a placeholder becomes at send time. */
enum notif_placeholder {
    NOTIF_PH_LITERAL = -1, /* not a placeholder: the segment's text as is */
    NOTIF_PH_DEVICE = 0,   /* {DEVICE}: the device's index */
    NOTIF_PH_SEQ,          /* {SEQ}: the device's sequence number of this send, from 1 */
    NOTIF_PH_TIME,         /* {TIME}: the send's time, yang:date-and-time with milliseconds */
    NOTIF_PH_IFINDEX,      /* {IFINDEX}: an interface of the device (1..interfaces, by sequence) */
    NOTIF_PH_IFNAME,       /* {IFNAME}: that interface's name */
    NOTIF_PH_EVENT_TIME,   /* the content of <eventTime> (OpenDaylight's XXXX): the send's time */
};

struct notif_segment {
    int placeholder; /* enum notif_placeholder */
    uint32_t off;    /* literal: offset of its text in the template's text */
    uint32_t len;    /* literal: length */
};

/* One notification of a file, ready to expand. */
struct notif_template {
    char *label;                /* for messages: "notification 3 of FILE" */
    char *text;                 /* the <notification> element, owned; literals point into it */
    struct notif_segment *segs; /* in order */
    uint32_t seg_count;         /* entries in segs */
    int has_seq;                /* 1 when {SEQ} appears */
    uint32_t weight;            /* rate format: share in the mix (>= 1); OpenDaylight: 1 */
    uint64_t delay_ms;          /* OpenDaylight: wait before this entry's first send */
    uint64_t times; /* OpenDaylight: exact number of sends of this entry (>= 1; 1 for none or 0) */
};

enum notif_plan_kind {
    NOTIF_PLAN_ODL,  /* entries in file order, each `times` times after `delay` */
    NOTIF_PLAN_RATE, /* a weighted mix at a rate */
};

struct notif_plan {
    int kind;                     /* enum notif_plan_kind */
    char *path;                   /* the file */
    struct notif_template *items; /* in file order */
    uint32_t item_count;          /* entries in items, >= 1 */
    double rate_per_device;       /* rate format: notifications per device per second; 0 when total is set */
    double rate_total;    /* rate format: notifications per second across the fleet; 0 when per device */
    uint64_t duration_ms; /* rate format: stop after this long (0: no limit) */
    uint64_t count;       /* rate format: stop after this many per device (0: no limit) */
    uint32_t burst;       /* rate format: notifications sent back to back per tick (>= 1) */
};

/* The values of one send. */
struct notif_vars {
    uint32_t device;    /* device index */
    uint64_t seq;       /* per-device sequence number, from 1 */
    uint64_t time_ms;   /* send time, ms since the epoch */
    uint32_t ifindex;   /* for {IFINDEX} */
    const char *ifname; /* for {IFNAME} */
};

/**
 * @brief Load and validate a notification file.
 * @param[in] ctx The fleet's schemas: every content must be a valid notification of them.
 * @param[out] err Names the file, the notification (its position) and what is wrong.
 * @return FLEET_OK, FLEET_ERR_INVAL, FLEET_ERR_NOTFOUND (no such file) or FLEET_ERR_NOMEM.
 */
enum fleet_err notif_plan_load(const char *path, const struct ly_ctx *ctx, struct notif_plan **plan,
                               char *err, size_t err_len);

/** @brief Free a plan; NULL is fine. */
void notif_plan_free(struct notif_plan *plan);

/** @brief Append the <notification> element of @p t with @p v filled in to @p out. */
void notif_expand(const struct notif_template *t, const struct notif_vars *v, struct sbuf *out);

/** @brief Format @p time_ms as yang:date-and-time in UTC with milliseconds into @p buf (>= 32 bytes). */
void notif_format_time(uint64_t time_ms, char *buf, size_t buf_len);

#endif
