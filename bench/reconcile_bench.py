#!/usr/bin/python3
"""reconcile on a collector's syslog file (issue 29 item 7): lines per second and CPU time per line.

Writes a file of --lines syslog lines (default 1,000,000) from --devices devices (default 10,000), in the
form rsyslog writes (RSYSLOG_SyslogProtocol23Format, ~150 bytes a line; --form traditional: RFC 3164 text
as RSYSLOG_TraditionalFileFormat writes it), devices interleaved and each device's sequence in order,
and a fleetsim report whose ledger says the same; then runs `fleetsim-stress reconcile --format syslog
--ordering --run-tag bench` on them --runs times (default 3) and prints wall time, user + system CPU time
(the child's rusage), lines per second and CPU microseconds per line, and checks that every device is OK.

Usage: bench/reconcile_bench.py [--stress build/fleetsim-stress] [--lines N] [--devices D] [--form F]
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time


def write_inputs(work, lines, devices, form):
    per = [lines // devices + (1 if i < lines % devices else 0) for i in range(devices)]
    report = {"run_tag": "bench", "devices": []}
    for i in range(devices):
        report["devices"].append({
            "device": i, "address": "10.%d.%d.%d" % (i >> 16 & 255, i >> 8 & 255, i & 255), "port": 830,
            "hostname": "crs-x-%d" % i,
            "syslog_sinks": [{"sink": "tcp://127.0.0.1:514", "channel": "syslog", "emitted": per[i],
                              "sent": per[i], "in_window": per[i], "drain": 0, "send_failures": 0,
                              "dropped": 0, "suppressed_pre_window": 0, "queued": 0}]})
    report_path = os.path.join(work, "report.json")
    with open(report_path, "w") as f:
        json.dump(report, f)
    path = os.path.join(work, "received.log")
    seq = [0] * devices
    with open(path, "w") as f:
        chunk = []
        for n in range(lines):
            i = n % devices
            seq[i] += 1
            if form == "5424":
                chunk.append('<187>1 2026-12-07T15:40:%02d.%03d+00:00 crs-x-%d ifmgr - LINK [meta sequenceId="%d"]'
                             '[fleetsim@32473 run="bench"] %%PKT_INFRA-LINK-3-UPDOWN : Interface '
                             'GigabitEthernet0/0/0/%d, changed state to Down\n'
                             % (n // 1000 % 60, n % 1000, i, seq[i], n % 8))
            else:
                chunk.append('Dec  7 15:40:%02d crs-x-%d ifmgr: seq=%d run=bench %%PKT_INFRA-LINK-3-UPDOWN : '
                             'Interface GigabitEthernet0/0/0/%d, changed state to Down\n'
                             % (n // 1000 % 60, i, seq[i], n % 8))
            if len(chunk) == 10000:
                f.write("".join(chunk))
                chunk = []
        f.write("".join(chunk))
    return report_path, path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stress", default=os.path.join(os.path.dirname(__file__), "..", "build", "fleetsim-stress"))
    ap.add_argument("--lines", type=int, default=1000000)
    ap.add_argument("--devices", type=int, default=10000)
    ap.add_argument("--form", choices=("5424", "traditional"), default="5424")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="fleetsim-recon-bench-") as work:
        report, received = write_inputs(work, a.lines, a.devices, a.form)
        size = os.path.getsize(received)
        print("%d lines (%d devices, %s form, %.1f MB)" % (a.lines, a.devices, a.form, size / 1e6))
        for run in range(a.runs):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.monotonic()
            p = subprocess.run([a.stress, "reconcile", "--sent", report, "--received", received, "--format",
                                "syslog", "--ordering", "--run-tag", "bench"], capture_output=True, text=True)
            wall = time.monotonic() - t0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            totals = p.stdout.strip().splitlines()[-1]
            if p.returncode != 0 or ("OK %d," % a.devices) not in totals:
                sys.exit("reconcile did not say OK for every device (exit %d): %s %s"
                         % (p.returncode, totals, p.stderr))
            print("run %d: wall %.3f s, cpu %.3f s: %.0f lines/s, %.3f CPU-us/line"
                  % (run + 1, wall, cpu, a.lines / wall, cpu / a.lines * 1e6))


if __name__ == "__main__":
    main()
