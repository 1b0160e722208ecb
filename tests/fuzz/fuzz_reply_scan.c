/*
 * Fuzz harness of the stress client's reply scanner (wire/reply_scan.h),
 * which reads every message a server sends to fleetsim-stress.
 *
 * Input: one whole message as the frame decoder hands it out. It is
 * copied to a heap block of exactly its size without a NUL, since the
 * scanner is given a length and must never read past it. The result must
 * be consistent: a kept error-tag is NUL-terminated and trimmed, and only
 * an rpc-reply reports a message-id, ok, data or errors. Scanning is pure,
 * so a second scan must give the same answer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "reply_scan.h"

/* Longest input looked at. */
#define FZ_MAX_INPUT_BYTES 65536

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct reply_info info, again;
    enum reply_kind kind;
    char *xml;
    size_t tag_len;

    if (size > FZ_MAX_INPUT_BYTES) {
        return 0;
    }
    /* malloc(0) may return NULL; keep one byte so the pointer is valid, but pass the true size. */
    xml = fz_copy_input(data, size);

    kind = reply_scan(xml, size, &info);
    fz_require(kind == info.kind, "return value differs from info.kind");
    fz_require(kind == REPLY_RPC_REPLY || kind == REPLY_NOTIFICATION || kind == REPLY_OTHER ||
                   kind == REPLY_MALFORMED,
               "kind out of range");
    tag_len = fz_require_trimmed(info.error_tag, data, size, "error-tag");
    if (kind != REPLY_RPC_REPLY) {
        fz_require(!info.has_message_id && !info.ok && !info.data && !info.error_count && !tag_len,
                   "a message that is no rpc-reply reports reply content");
    }
    if (!info.has_message_id) {
        fz_require(info.message_id == 0, "message-id value without the attribute");
    }

    reply_scan(xml, size, &again);
    fz_require(!memcmp(&info, &again, sizeof info), "a second scan gives another answer");
    free(xml);
    return 0;
}
