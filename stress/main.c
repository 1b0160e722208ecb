/*
 * fleetsim-stress: load for NETCONF servers and SNMP agents. "edit" measures edit-config
 * throughput (OpenDaylight stress-client compatible), "mount" a controller's
 * mount of a fleet, "snmp" an SNMP collector's polling, "notify" a subscriber to a fleet's
 * notifications, "reconcile" joins what the simulator sent with what notify received, and
 * "controller-mount" watches a RESTCONF controller connect to a fleet, "record" writes one
 * server as a recorded device type folder, "restconf" POSTs edits to a RESTCONF controller's mount
 * points (OpenDaylight's REST perf client), "report" writes one HTML page of their --json manifests, "merge"
 * joins the manifests of runs made at once into one, "ceiling" finds a collector's ingest ceiling by driving
 * a fleet's rates and reading the collector's counters. Exit codes: 0 complete, 1 the run failed, 2 bad
 * usage, 130 and 143 ended by SIGINT and SIGTERM (summary and manifest written as at a normal end).
 */
#include <signal.h>
#include <stdio.h>

#include "conn.h"
#include "merge.h"
#include "options.h"
#include "record.h"
#include "report.h"
#include "run.h"

int
main(int argc, char **argv)
{
    struct stress_options opts;
    char err[512];
    int rc = 2;
    int netconf;

    switch (stress_options_parse(argc, argv, &opts, err, sizeof err)) {
    case STRESS_PARSE_EXIT:
        return 0;
    case STRESS_PARSE_ERROR:
        fprintf(stderr, "fleetsim-stress: %s\n", err);
        return 2;
    case STRESS_PARSE_RUN:
        break;
    }
    if (opts.mode == STRESS_REPORT) {
        return report_run(&opts); /* reads files only: no scenario, no transport */
    }
    if (opts.mode == STRESS_MERGE) {
        return merge_run(&opts);
    }
    stress_options_notes(&opts, stderr);
    if (run_scenario_read(&opts)) {
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    netconf = opts.mode == STRESS_EDIT || opts.mode == STRESS_MOUNT || opts.mode == STRESS_NOTIFY ||
              opts.mode == STRESS_PUSH || opts.mode == STRESS_RECORD;
    /* Without --ssh each connection may turn out to need SSH: its key is loaded up front all the same. */
    if (netconf && opts.ssh != 0 &&
        conn_ssh_setup(opts.username, opts.password, opts.ssh_key, err, sizeof err)) {
        fprintf(stderr, "fleetsim-stress: %s\n", err);
        return 1;
    }
    if (netconf && opts.tls &&
        conn_tls_setup(opts.tls_cert, opts.tls_key, opts.tls_ca, opts.tls_verify_host, opts.tls_resume, err,
                       sizeof err)) {
        fprintf(stderr, "fleetsim-stress: %s\n", err);
        return 1;
    }
    conn_transport_set(opts.tls       ? CONN_TRANSPORT_TLS
                       : opts.ssh < 0 ? CONN_TRANSPORT_AUTO
                       : opts.ssh     ? CONN_TRANSPORT_SSH
                                      : CONN_TRANSPORT_TCP);
    switch (opts.mode) {
    case STRESS_EDIT:
        rc = edit_run(&opts);
        break;
    case STRESS_MOUNT:
        rc = mount_run(&opts);
        break;
    case STRESS_SNMP:
        rc = snmprun_run(&opts);
        break;
    case STRESS_NOTIFY:
        rc = notify_run(&opts);
        break;
    case STRESS_RECONCILE:
        rc = recon_run(&opts);
        break;
    case STRESS_CONTROLLER_MOUNT:
        rc = cmount_run(&opts);
        break;
    case STRESS_RECORD:
        rc = record_run(&opts);
        break;
    case STRESS_RESTCONF:
        rc = restconf_run(&opts);
        break;
    case STRESS_CEILING:
        rc = ceiling_run(&opts);
        break;
    case STRESS_PUSH:
        rc = push_run(&opts);
        break;
    case STRESS_REPORT:
    case STRESS_MERGE:
        break; /* handled above */
    }
    if (netconf && rc == 0) { /* a failed run ends with its reason; the manifest has the transport */
        printf("transport: %s (%s)\n", conn_transport_used(),
               opts.tls       ? "as --tls asked"
               : opts.ssh < 0 ? "detected"
                              : "as --ssh asked");
        if (opts.tls) {
            unsigned long full, resumed;
            conn_tls_handshakes(&full, &resumed);
            printf("TLS handshakes: %lu full, %lu resumed\n", full, resumed);
        }
    }
    conn_ssh_cleanup();
    conn_tls_cleanup();
    return rc;
}
