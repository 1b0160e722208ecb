/*
 * Fuzz harness of the fleet file reader (testtool/fleet_file.h): each input
 * is a whole fleet file, JSON when it starts with '{' and XML otherwise,
 * parsed and validated against fleetsim-fleet.yang; each group's leaves are
 * then applied as command-line options, the lines of groups and values found
 * by a scan of the text, and the groups compared for overlapping addresses.
 * Checks: a refusal gives a one-line message naming the file; a load gives
 * at least one group, each with a name and a plan whose features pointer is
 * its own.
 */
#include <stdint.h>
#include <string.h>

#include "cli.h"
#include "err.h"
#include "fleet_file.h"
#include "fuzz.h"
#include "fuzz_file.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct fleet_config base;
    static int base_ready;
    struct fleet_file ff;
    char err[512];
    const char *path;

    if (size > FZ_FILE_MAX_BYTES) {
        return -1;
    }
    if (!base_ready) {
        cli_defaults(&base);
        base_ready = 1;
    }
    path = fz_file_write("fuzz-fleet.xml", data, size);
    if (fleet_file_load(path, &base, &ff, err, sizeof err)) {
        fz_require(!strncmp(err, path, strlen(path)) && !strchr(err, '\n'),
                   "a refusal names the file, on one line");
    } else {
        fz_require(ff.group_count >= 1, "a loaded fleet has a group");
        for (uint32_t i = 0; i < ff.group_count; i++) {
            fz_require(ff.groups[i].name && ff.groups[i].name[0], "every group has a name");
            fz_require(ff.groups[i].cfg.schema_opts.features == ff.groups[i].cfg.feature_pins,
                       "a group's features point into its own plan");
        }
    }
    fleet_file_free(&ff);
    return 0;
}
