#!/usr/bin/python3
"""Cost of a --metrics scrape: fleetsim's CPU time (from /proc/PID/stat) over --scrapes scrapes made
one after another with the curl binary, against fleets of --counts devices, without and with
--metrics-per-device. Prints CPU per scrape, wall time per scrape (curl included) and the page size."""

import argparse
import random
import subprocess
import time

import fleetlib


def measure(binary, count, per_device, scrapes):
    # An address per device (as large fleets run: one socket per worker), the metrics on another port.
    port = random.randrange(10000, 32000)
    metrics_port = random.randrange(5000, 9999)
    args = ["--device-count", str(count), "--ip-per-device", "--ip", "127.1.0.1", "--starting-port", str(port),
            "--status-interval", "0",
            "--metrics", "127.0.0.1:%d" % metrics_port]
    if per_device:
        args.append("--metrics-per-device")
    proc, _ = fleetlib.start_fleet(args, binary=binary)
    url = "http://127.0.0.1:%d/metrics" % metrics_port
    try:
        size = len(subprocess.run(["curl", "-sS", "--fail", url], stdout=subprocess.PIPE, check=True).stdout)
        time.sleep(0.5)
        cpu0 = fleetlib.cpu_seconds(proc.pid)
        t0 = time.monotonic()
        for _ in range(scrapes):
            subprocess.run(["curl", "-sS", "--fail", "-o", "/dev/null", url], check=True)
        wall = time.monotonic() - t0
        cpu = fleetlib.cpu_seconds(proc.pid) - cpu0
    finally:
        fleetlib.stop_fleet(proc)
    return cpu / scrapes, wall / scrapes, size


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--counts", default="1000,10000")
    p.add_argument("--scrapes", type=int, default=100)
    p.add_argument("--binary", default=None, help="fleetsim to run (default: build/fleetsim)")
    args = p.parse_args()
    print("%-8s %-12s %16s %16s %12s" % ("devices", "per-device", "CPU ms/scrape", "wall ms/scrape", "page KiB"))
    for count in [int(c) for c in args.counts.split(",")]:
        for per_device in (False, True):
            cpu, wall, size = measure(args.binary, count, per_device, args.scrapes)
            print("%-8d %-12s %16.3f %16.3f %12.1f" % (count, "yes" if per_device else "no", cpu * 1e3, wall * 1e3,
                                                       size / 1024))


if __name__ == "__main__":
    main()
