/*
 * Sizes of the per-device and per-session structures, the numbers behind
 * "memory per device" and "memory per idle session".
 */
#include <stdio.h>

#include "datastore.h"
#include "fleet.h"
#include "frame.h"
#include "loop.h"
#include "session.h"
#include "syslog_chan.h"
#include "yp.h"

int
main(void)
{
    printf("struct device         %4zu bytes (one per simulated device)\n", sizeof(struct device));
    printf("  struct datastore    %4zu bytes (inside device)\n", sizeof(struct datastore));
    printf("struct session        %4zu bytes (one per open session, no buffers while idle)\n",
           sizeof(struct session));
    printf("  struct frame_decoder %3zu bytes (inside session)\n", sizeof(struct frame_decoder));
    printf("  struct loop_timer   %4zu bytes (inside session)\n", sizeof(struct loop_timer));
    printf("struct syslog_dev     %4zu bytes (one per device of a group with --syslog-sink)\n",
           sizeof(struct syslog_dev));
    printf("  struct ledger_row   %4zu bytes (one per such device and sink)\n", sizeof(struct ledger_row));
    printf("struct worker         %4zu bytes (one per worker loop, plus its 64 KiB read buffer)\n",
           sizeof(struct worker));
    printf("struct yp_sub         %4zu bytes (one per YANG-Push subscription, calloc'd)\n",
           sizeof(struct yp_sub));
    printf("  struct wheel_entry  %4zu bytes (inside yp_sub)\n", sizeof(struct wheel_entry));
    printf("struct yp_filter      %4zu bytes (one per distinct filter on a worker, plus its tree)\n",
           sizeof(struct yp_filter));
    return 0;
}
