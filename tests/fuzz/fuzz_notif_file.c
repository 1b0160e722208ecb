/*
 * Fuzz harness of the notification file reader (testtool/notify/notif_file.h),
 * both formats: OpenDaylight's <notifications> list and fleetsim's rate
 * format. Each input is a whole file, loaded and validated against the
 * fleet's schemas; every template of a plan that loads is then expanded with
 * all placeholders filled, as a send would.
 */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_file.h"
#include "fuzz_fleet.h"
#include "notif_file.h"

FZ_FLEET_INITIALIZE(NULL)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct notif_plan *plan = NULL;
    struct sbuf out = {0};
    char err[512];
    const char *path;

    if (size > FZ_FILE_MAX_BYTES) {
        return -1;
    }
    path = fz_file_write("notifications.xml", data, size);
    if (notif_plan_load(path, fz_fleet.types[0]->schemas.ctx, &plan, err, sizeof err)) {
        return 0;
    }
    for (uint32_t i = 0; i < plan->item_count; i++) {
        struct notif_vars v = {
            .device = 7, .seq = i + 1, .time_ms = FZ_CLOCK_MS, .ifindex = 2, .ifname = "eth1"};
        out.len = 0;
        notif_expand(&plan->items[i], &v, &out);
    }
    sbuf_free(&out);
    notif_plan_free(plan);
    return 0;
}
