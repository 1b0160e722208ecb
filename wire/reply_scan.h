/*
 * A fast scan of an <rpc-reply> for what a load client needs: its
 * message-id, whether it says <ok/>, carries <data>, or rpc-errors (and
 * their error-tags). No tree is built: a stress client must spend far less
 * per reply than the server spends per request. Element prefixes are
 * accepted (<nc:rpc-reply>); namespaces are not checked.
 */
#ifndef FLEET_REPLY_SCAN_H
#define FLEET_REPLY_SCAN_H

#include <stddef.h>
#include <stdint.h>

/* Longest error-tag kept (RFC 6241 appendix A tags are at most 23 bytes). */
#define REPLY_TAG_MAX_BYTES 32

enum reply_kind {
    REPLY_RPC_REPLY,    /* an <rpc-reply> */
    REPLY_NOTIFICATION, /* a <notification> */
    REPLY_OTHER,        /* another root element */
    REPLY_MALFORMED,    /* no root element found */
};

struct reply_info {
    enum reply_kind kind;                /* what the message is */
    int has_message_id;                  /* 1 when the root carries a numeric message-id */
    uint64_t message_id;                 /* its value */
    int ok;                              /* 1 when an <ok/> element is present */
    int data;                            /* 1 when a <data> element is present */
    uint32_t error_count;                /* <rpc-error> elements */
    char error_tag[REPLY_TAG_MAX_BYTES]; /* text of the first <error-tag>, "" when none */
};

/**
 * @brief Scan one message.
 * @param[in] xml The message (need not be NUL-terminated).
 * @param[in] len Its length.
 * @param[out] info What was found.
 * @return info->kind.
 */
enum reply_kind reply_scan(const char *xml, size_t len, struct reply_info *info);

#endif
