/*
 * Fuzz harness of the --rpc-config reader and matcher
 * (testtool/netconf/rpc_custom.h). An input is a file and a request
 * separated by the first NUL byte (no NUL: all file, no request). The file
 * is loaded for two devices; when it loads, the request is matched against
 * it as the dispatcher would, and a match is answered twice for each device
 * so the positions wrap.
 *
 * Checked beyond memory safety: a match has an envelope, and every output
 * is as long as its text says (it is sent by length).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libyang/libyang.h>

#include "fuzz.h"
#include "fuzz_file.h"
#include "rpc_custom.h"

static struct ly_ctx *fz_ctx; /* without modules, as the fleet's bare_ctx */

static void
fz_ctx_free(void)
{
    ly_ctx_destroy(fz_ctx);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    ly_log_options(LY_LOSTORE_LAST);
    if (ly_ctx_new(NULL, LY_CTX_NO_YANGLIBRARY, &fz_ctx)) {
        exit(1);
    }
    atexit(fz_ctx_free);
    return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, '\0', size);
    size_t file_len = nul ? (size_t)(nul - data) : size;
    struct rpc_custom *rc = NULL;
    struct lyd_node *env = NULL;
    char *req = NULL;
    uint32_t entry;
    char err[512];

    if (size > FZ_FILE_MAX_BYTES) {
        return -1;
    }
    if (rpc_custom_load(fz_file_write("rpc-config.xml", data, file_len), fz_ctx, 2, &rc, err, sizeof err)) {
        return 0;
    }
    if (nul && (req = malloc(size - file_len))) {
        memcpy(req, nul + 1, size - file_len - 1);
        req[size - file_len - 1] = '\0';
        if (!rpc_custom_match(rc, req, &env, &entry)) {
            for (uint32_t i = 0; i < 4; i++) {
                const struct rpc_custom_output *o = rpc_custom_next(rc, i & 1, entry);
                if (!o || !env || !o->xml || strlen(o->xml) != o->xml_len) {
                    abort();
                }
            }
        }
    }
    lyd_free_all(env);
    free(req);
    rpc_custom_free(rc);
    return 0;
}
