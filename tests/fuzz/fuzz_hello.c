/*
 * Fuzz harness of the <hello> reader (wire/hello.h), which both the
 * simulator and the stress client run on the first message of a peer.
 *
 * Input: the message as the frame decoder hands it out (NUL-terminated
 * here). A hello that is accepted must have at least one capability, none
 * empty or padded with whitespace, base flags that agree with
 * hello_has_cap(), and must survive hello_build(): the hello we would send
 * with the same capabilities and session-id reads back the same.
 *
 * The libyang context is made once, as the simulator makes its bare
 * context once per fleet; parsing leaves nothing in it (opaque nodes only,
 * freed after each message).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "hello.h"

/* Longest input looked at. */
#define FZ_MAX_INPUT_BYTES 65536
/* Room for hello_parse's error text. */
#define FZ_ERR_BYTES 256

/* The bare context, as testtool/fleet.c makes it; read-only after creation. */
static struct ly_ctx *fz_ctx;

static void
fz_ctx_free(void)
{
    ly_ctx_destroy(fz_ctx);
    fz_ctx = NULL;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_require(ly_ctx_new(NULL, LY_CTX_NO_YANGLIBRARY, &fz_ctx) == LY_SUCCESS,
               "cannot make a libyang context");
    /* libyang's own messages would flood the fuzzer's output; hello_parse reports through err. */
    ly_log_options(0);
    atexit(fz_ctx_free);
    return 0;
}

/* What an accepted hello must look like. */
static void
fz_check_info(const struct hello_info *info)
{
    fz_require(info->cap_count >= 1 && info->cap_count <= HELLO_MAX_CAPS, "capability count out of range");
    for (size_t i = 0; i < info->cap_count; i++) {
        const char *cap = info->caps[i];
        size_t n = strlen(cap);

        fz_require(n > 0, "empty capability kept");
        fz_require(!fz_is_space(cap[0]) && !fz_is_space(cap[n - 1]), "capability not trimmed");
    }
    fz_require(info->base10 == hello_has_cap(info, HELLO_CAP_BASE10), "base10 flag disagrees");
    fz_require(info->base11 == hello_has_cap(info, HELLO_CAP_BASE11), "base11 flag disagrees");
    fz_require(!info->has_session_id || info->session_id != 0, "session-id 0 accepted");
    fz_require(info->has_session_id || info->session_id == 0, "session-id without the element");
}

/* Build our hello from what was read and read it back: it must say the same. */
static void
fz_roundtrip(const struct hello_info *info)
{
    struct hello_info again;
    char err[FZ_ERR_BYTES];
    char *xml = NULL;
    size_t xml_len = 0;

    if (hello_build((const char *const *)info->caps, info->cap_count, info->session_id, &xml, &xml_len)) {
        /* Only absurd sizes are refused, and those never come out of a parse. */
        fz_require(0, "hello_build refused what hello_parse accepted");
    }
    fz_require(strlen(xml) == xml_len, "hello_build length is wrong");
    if (hello_parse(fz_ctx, xml, &again, err, sizeof err)) {
        fprintf(stderr, "fuzz_hello: rebuilt hello refused: %s\n%s\n", err, xml);
        abort();
    }
    fz_require(again.cap_count == info->cap_count, "rebuilt hello has another capability count");
    for (size_t i = 0; i < info->cap_count; i++) {
        if (strcmp(again.caps[i], info->caps[i])) {
            fprintf(stderr, "fuzz_hello: capability %zu changed: \"%s\" became \"%s\"\n", i, info->caps[i],
                    again.caps[i]);
            abort();
        }
    }
    fz_require(again.has_session_id == info->has_session_id && again.session_id == info->session_id,
               "rebuilt hello has another session-id");
    hello_info_free(&again);
    free(xml);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hello_info info;
    char err[FZ_ERR_BYTES];
    char *xml;
    enum fleet_err rc;

    if (size > FZ_MAX_INPUT_BYTES) {
        return 0;
    }
    xml = malloc(size + 1);
    fz_require(xml != NULL, "out of memory");
    memcpy(xml, data, size);
    xml[size] = '\0';

    rc = hello_parse(fz_ctx, xml, &info, err, sizeof err);
    if (rc == FLEET_OK) {
        fz_require(err[0] == '\0', "error text on success");
        fz_check_info(&info);
        fz_roundtrip(&info);
    } else {
        fz_require(rc == FLEET_ERR_INVAL || rc == FLEET_ERR_NOMEM, "unexpected return code");
        fz_require(err[0] != '\0' && strlen(err) < sizeof err, "refusal without an error text");
        fz_require(info.caps == NULL && info.cap_count == 0, "refused hello left capabilities");
    }
    hello_info_free(&info);
    free(xml);
    return 0;
}
