/*
 * Edit content with placeholders. A template is split once into literal
 * runs and placeholders, so that expanding it for every edit is a few
 * copies, done before the clock starts.
 */
#ifndef STRESS_TEMPLATE_H
#define STRESS_TEMPLATE_H

#include <stddef.h>
#include <stdint.h>

#include "sbuf.h"

/* The MAC address {PHYS_ADDR} starts from (aa:bb:cc:dd:00:00) and increases per edit. */
#define TEMPLATE_PHYS_ADDR_BASE 0xaabbccdd0000ull

enum template_kind {
    TPL_TEXT,      /* literal bytes */
    TPL_PHYS_ADDR, /* {PHYS_ADDR} */
    TPL_MSG_ID,    /* {MSG_ID} */
    TPL_INDEX,     /* {INDEX} */
    TPL_SESSION,   /* {SESSION} */
    TPL_DEVICE,    /* {DEVICE} */
};

struct template_part {
    enum template_kind kind; /* what to emit */
    const char *text;        /* TPL_TEXT: start of the run inside the template's text */
    size_t len;              /* TPL_TEXT: its length */
};

struct template
{
    char *text;                  /* the whole content, owned */
    struct template_part *parts; /* in order */
    size_t part_count;           /* entries in parts */
};

struct template_vars {
    uint64_t index;   /* the edit's global number, from 0 */
    uint64_t msg_id;  /* the request's message-id */
    uint32_t session; /* session number, from 0 */
    uint32_t device;  /* device number, from 0 */
};

/**
 * @brief Take @p text (ownership passes) and split it into parts.
 * @return 0, or -1 when memory ran out (text is freed).
 */
int template_init(struct template *t, char *text);

/** @brief Free the template. Accepts a zeroed one. */
void template_free(struct template *t);

/** @brief Append the expansion for @p v to @p b. */
void template_expand(const struct template *t, const struct template_vars *v, struct sbuf *b);

struct ly_ctx;

/**
 * @brief Whether the edits will be well-formed XML: expand once with sample values (edit 0 of session 0
 * to device 0, message-id 1), wrap in <config> and parse that with libyang as opaque data (no schema).
 * Placeholders hold no line break, so a line named is a line of the template's text.
 * @param[in] ctx A context (no schema needed).
 * @param[out] err On failure, "line N: what libyang found".
 * @return 0 when well-formed, -1 when not (or out of memory).
 */
int template_check(const struct template *t, struct ly_ctx *ctx, char *err, size_t len);

#endif
