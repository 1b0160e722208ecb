/*
 * fleetsim-stress: load for NETCONF servers and SNMP agents. "edit" measures edit-config
 * throughput (OpenDaylight stress-client compatible), "mount" a controller's
 * mount of a fleet, "snmp" an SNMP collector's polling, "notify" a subscriber to a fleet's
 * notifications, and "reconcile" joins what the simulator sent with what notify received. Exit codes: 0
 * complete, 1 the run failed, 2 bad usage.
 */
#include <signal.h>
#include <stdio.h>

#include "options.h"
#include "run.h"

int
main(int argc, char **argv)
{
    struct stress_options opts;
    char err[512];

    switch (stress_options_parse(argc, argv, &opts, err, sizeof err)) {
    case STRESS_PARSE_EXIT:
        return 0;
    case STRESS_PARSE_ERROR:
        fprintf(stderr, "fleetsim-stress: %s\n", err);
        return 2;
    case STRESS_PARSE_RUN:
        break;
    }
    signal(SIGPIPE, SIG_IGN);
    switch (opts.mode) {
    case STRESS_EDIT:
        return edit_run(&opts);
    case STRESS_MOUNT:
        return mount_run(&opts);
    case STRESS_SNMP:
        return snmprun_run(&opts);
    case STRESS_NOTIFY:
        return notify_run(&opts);
    case STRESS_RECONCILE:
        return recon_run(&opts);
    }
    return 2;
}
