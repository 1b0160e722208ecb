/*
 * Fuzz harness of the profile reader (common/profile.h): each input is a
 * whole profile file, parsed and validated against fleetsim-profile.yang and
 * then checked for what YANG cannot say (name formats, counts, references).
 */
#include <stdint.h>

#include "err.h"
#include "fuzz.h"
#include "fuzz_file.h"
#include "profile.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct profile *p = NULL;
    char err[512];
    const char *path;

    if (size > FZ_FILE_MAX_BYTES) {
        return -1;
    }
    path = fz_file_write("fuzz-profile.xml", data, size);
    if (!profile_load(path, FLEETSIM_SCHEMA_DIR "/profiles", FLEETSIM_SCHEMA_DIR, &p, err, sizeof err)) {
        profile_free(p);
    }
    return 0;
}
