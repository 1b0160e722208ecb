"""Client CPU per request: `fleetsim-stress restconf` against `curl --parallel`, same requests, same server.

The server is bench_http_sink (bench/http_sink.c, built with the project): one C thread answering every
request at once with 204, so the client is what runs out of CPU. Both clients POST the same N bodies
(ietf-interfaces entries, the JSON fleetsim-stress fills) to the same URL with basic auth and
Content-Type application/json, keeping --parallel-max / --throttle P requests in flight on persistent
HTTP/1.1 connections. curl reads a config file of N URL/data pairs separated by `next` (without
`next` curl joins every data option into one body). CPU is the client process's own utime + stime
from /proc/PID/stat, read when it exits (wait4's rusage, which is the same counters). Then the rate one
fleetsim-stress process sustains (its "Requests per second" line) at --throttle 64 and 5000.

Run: /usr/bin/python3 bench/restconf_cost.py build [--requests 50000] [--parallel 64]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

PATH = ("/restconf/data/network-topology:network-topology/topology=topology-netconf/node=17830-sim-device"
        "/yang-ext:mount/ietf-interfaces:interfaces")


def body(i):
    return ('{"ietf-interfaces:interface":[{"name":"rc-0-%d","type":"iana-if-type:ethernetCsmacd",'
            '"description":"%s"}]}' % (i, ":".join("%02x" % b for b in (0xAABBCCDD0000 + i).to_bytes(6, "big"))))


def run_measured(argv):
    """Run @argv to its end; (CPU seconds of that process alone, wall seconds, stdout)."""
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = proc.stdout.read()
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.monotonic() - started
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("%s failed (%d)" % (argv[0], os.waitstatus_to_exitcode(status)))
    return ru.ru_utime + ru.ru_stime, wall, out.decode(errors="replace")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--requests", type=int, default=50000)
    ap.add_argument("--parallel", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=5, help="runs of each client, alternating; medians printed")
    args = ap.parse_args()
    stress = os.path.join(args.build, "fleetsim-stress")
    sink = subprocess.Popen([os.path.join(args.build, "bench_http_sink"), "0"], stdout=subprocess.PIPE)
    port = int(sink.stdout.readline().split()[1])
    work = tempfile.mkdtemp(prefix="restconf-cost-")
    try:
        content = os.path.join(work, "edit.json")
        with open(content, "w") as f:
            f.write('{"ietf-interfaces:interface":[{"name":"rc-{PEERID}-{INTLEAF}","type":'
                    '"iana-if-type:ethernetCsmacd","description":"{PHYS_ADDR}"}]}')
        cfg = os.path.join(work, "curl.cfg")
        with open(cfg, "w") as f:
            for i in range(args.requests):
                if i:
                    f.write("next\n")
                f.write('url = "http://127.0.0.1:%d%s"\ndata = "%s"\noutput = "/dev/null"\n'
                        'header = "Content-Type: application/json"\nheader = "Accept: application/xml"\n'
                        'user = "admin:admin"\n' % (port, PATH, body(i).replace('"', '\\"')))
        n = args.requests
        p = args.parallel
        ours_cmd = [stress, "restconf", "--port", str(port), "--destination", PATH.replace("17830", "{DEVICE_PORT}"),
                    "--edits", str(n), "--throttle", str(p), "--edit-content", content]
        curl_cmd = ["curl", "-s", "--parallel", "--parallel-immediate", "--parallel-max", str(p), "-K", cfg]
        ours, curl, ratios = [], [], []
        for _ in range(args.rounds):
            # alternating, so that a change in the machine's load falls on both clients alike
            ours_cpu, ours_wall, _ = run_measured(ours_cmd)
            curl_cpu, curl_wall, _ = run_measured(curl_cmd)
            ours.append((ours_cpu, ours_wall))
            curl.append((curl_cpu, curl_wall))
            ratios.append(ours_cpu / curl_cpu)
        med = statistics.median
        print("requests %d, in flight %d, server bench_http_sink (C, answers 204 at once), median of %d rounds"
              % (n, p, args.rounds))
        print("  %-18s %8.2f us CPU/request  %9.0f requests/s" % ("fleetsim-stress", med(c for c, _ in ours) * 1e6 / n,
                                                                   n / med(w for _, w in ours)))
        print("  %-18s %8.2f us CPU/request  %9.0f requests/s" % ("curl --parallel", med(c for c, _ in curl) * 1e6 / n,
                                                                   n / med(w for _, w in curl)))
        print("  fleetsim-stress / curl CPU per request: %.2f (rounds: %s)"
              % (med(ratios), ", ".join("%.2f" % r for r in ratios)))
        for throttle in (64, 5000):
            cmd = ours_cmd[:]
            cmd[cmd.index("--throttle") + 1] = str(throttle)
            cmd[cmd.index("--edits") + 1] = str(max(n, 200000))
            _, _, out = run_measured(cmd)
            rate = re.search(r"Requests per second: ([0-9.]+)", out).group(1)
            cpu = re.search(r"([0-9.]+) us per request", out).group(1)
            print("  one fleetsim-stress process, --throttle %5d: %s requests/s, %s us CPU/request"
                  % (throttle, rate, cpu))
    finally:
        sink.terminate()
        sink.wait(10)


if __name__ == "__main__":
    main()
