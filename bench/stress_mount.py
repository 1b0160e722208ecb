#!/usr/bin/python3
"""Mount storms with fleetsim-stress against fleetsim, address per device:
--counts devices, --concurrency sessions set up at once, on-mount none and
get-schema. Reports the time until all were mounted, sessions per second,
time to hello, and client and server CPU per session."""

import argparse
import random

import fleetlib


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--counts", default="1000,10000")
    p.add_argument("--concurrency", type=int, default=200)
    args = p.parse_args()
    print("%-8s %-11s %10s %12s %14s %14s %16s %16s" % ("devices", "on-mount", "all s", "sessions/s", "hello p50 ms",
                                                       "hello p99 ms", "client CPU-us/s", "server CPU-us/s"))
    for count in [int(c) for c in args.counts.split(",")]:
        for action in ("none", "get-schema"):
            port = random.randrange(10000, 32000)
            proc, _ = fleetlib.start_fleet(["--device-count", str(count), "--ip-per-device", "--ip", "127.6.0.1",
                                            "--starting-port", str(port)])
            try:
                cpu0 = fleetlib.cpu_seconds(proc.pid)
                r = fleetlib.stress_manifest(["mount", "--ip", "127.6.0.1", "--ip-per-device", "--port", port,
                                              "--device-count", count, "--concurrency", args.concurrency,
                                              "--on-mount", action])["results"]
                server_cpu = fleetlib.cpu_seconds(proc.pid) - cpu0
            finally:
                fleetlib.stop_fleet(proc)
            print("%-8d %-11s %10.3f %12.0f %14.2f %14.2f %16.1f %16.1f" % (
                count, action, r["all_done_s"], r["sessions_per_second"], r["time_to_hello_us"]["p50"] / 1e3,
                r["time_to_hello_us"]["p99"] / 1e3, r["client_cpu_s"] / count * 1e6, server_cpu / count * 1e6))


if __name__ == "__main__":
    main()
