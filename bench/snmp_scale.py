#!/usr/bin/python3
"""SNMP at fleet scale: start-up time and resident memory of fleets of
crs-x devices (an address per device, so the descriptors fit), with a GET
to the first and the last device's agent; then one collection of every
device of a fleet with injected reply latency by fleetsim-stress snmp
(GETBULK walks of the profile's collection), with the server's CPU, its RSS
afterwards, and the kernel's UDP receive-buffer drops during the run."""

import argparse
import ipaddress
import json
import os
import random
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetlib  # noqa: E402
import snmplib  # noqa: E402

BASE_IP = "127.1.0.1"


def udp_rcvbuf_errors():
    with open("/proc/net/snmp") as f:
        lines = [line.split() for line in f if line.startswith("Udp:")]
    return int(lines[1][lines[0].index("RcvbufErrors")])


def fleet_args(count, port, sport, extra=()):
    return ["--device-count", str(count), "--starting-port", str(port), "--snmp-starting-port", str(sport),
            "--profile", "crs-x", "--ip-per-device", "--ip", BASE_IP] + list(extra)


def sysname(ip, port):
    a = snmplib.Agent(ip, port)
    try:
        msg, off = snmplib.request("public", snmplib.GET, ["1.3.6.1.2.1.1.5.0"])
        _, err, vbs = snmplib.parse_full(a.call(msg, off, timeout=1.0))
        return vbs[0][2].decode() if not err and vbs[0][1] == 0x04 else "error %d" % err
    finally:
        a.close()


def startup(counts, port, sport):
    print("| devices | start-up s (fleetsim) | wall to ready s | RSS MiB | RSS KiB/device | descriptors "
          "| first agent's sysName | last agent's sysName |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for count in counts:
        t0 = time.time()
        proc, line = fleetlib.start_fleet(fleet_args(count, port, sport))
        wall = time.time() - t0
        try:
            time.sleep(0.5)
            rss = fleetlib.rss_kib(proc.pid)
            fds = len(os.listdir("/proc/%d/fd" % proc.pid))
            last = str(ipaddress.ip_address(BASE_IP) + count - 1)
            first_name, last_name = sysname(BASE_IP, sport), sysname(last, sport)
        finally:
            fleetlib.stop_fleet(proc)
        print("| %d | %.3f | %.3f | %.1f | %.2f | %d | %s | %s |" % (
            count, fleetlib.startup_seconds(line), wall, rss / 1024, rss / count, fds, first_name, last_name),
            flush=True)


def collection(count, port, sport, latency, concurrency, timeout_s):
    proc, _ = fleetlib.start_fleet(fleet_args(count, port, sport, ["--snmp-latency", latency]))
    manifest = tempfile.NamedTemporaryFile(suffix=".json", delete=False).name
    cmd = [os.path.join(fleetlib.repo_root(), "build", "fleetsim-stress"), "snmp", "--ip", BASE_IP, "--ip-per-device",
           "--port", str(sport), "--device-count", str(count), "--profile", "crs-x", "--concurrency",
           str(concurrency), "--rounds", "1", "--json", manifest]
    try:
        rss0 = fleetlib.rss_kib(proc.pid)
        drops0 = udp_rcvbuf_errors()
        cpu0 = fleetlib.cpu_seconds(proc.pid)
        t0 = time.time()
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
        wall = time.time() - t0
        cpu = fleetlib.cpu_seconds(proc.pid) - cpu0
        drops = udp_rcvbuf_errors() - drops0
        rss1 = fleetlib.rss_kib(proc.pid)
    finally:
        fleetlib.stop_fleet(proc)
    print("command: fleetsim %s\n         fleetsim-stress %s (exit %d)" % (
        " ".join(fleet_args(count, port, sport, ["--snmp-latency", latency])), " ".join(cmd[1:-2]),
        run.returncode))
    try:
        with open(manifest) as f:
            r = json.load(f)["results"]
    except (OSError, ValueError):
        print("no manifest; fleetsim-stress said:\n" + run.stdout + run.stderr)
        return
    finally:
        if os.path.exists(manifest):
            os.unlink(manifest)
    ct = r["collection_time_ms"]
    print()
    print("| devices | latency | concurrency | completed | failed | all collected s | collection p50 ms "
          "| collection p99 ms | response p50 ms | response p99 ms | fitted R ms | c ms | requests/collection "
          "| samples/collection | samples/s | retries | UDP receive-buffer drops | server CPU s "
          "| server CPU-us/request | client CPU-us/request | RSS MiB before / after |")
    print("| --- |" * 1 + " --- |" * 20)
    print("| %d | %s | %d | %d | %d | %.2f | %.0f | %.0f | %.1f | %.1f | %.1f | %.1f | %.1f | %.0f | %s | %d | %d "
          "| %.2f | %.1f | %.1f | %.1f / %.1f |" % (
              count, latency, concurrency, r["completed"], r["failed"], r["elapsed_s"], ct["p50"], ct["p99"],
              r["response_time_ms"]["p50"], r["response_time_ms"]["p99"], r["fit"]["r_ms"], r["fit"]["c_ms"],
              r["requests_per_collection"]["mean"], r["samples_per_collection"]["mean"],
              "{:,.0f}".format(r["samples_per_second"]), r["retries"], drops, cpu,
              cpu / max(1, r["requests_sent"]) * 1e6, r["client_cpu_us_per_request"], rss0 / 1024, rss1 / 1024))
    print("(wall time of the client run: %.2f s)" % wall)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--counts", default="10000,30000")
    p.add_argument("--collect-devices", type=int, default=10000)
    p.add_argument("--latency", default="50-100ms")
    p.add_argument("--concurrency", default="1000,2000", help="one collection run per value")
    p.add_argument("--collect-timeout", type=int, default=120)
    args = p.parse_args()
    port = random.randrange(20000, 30000)
    startup([int(c) for c in args.counts.split(",")], port, port + 1)
    if args.collect_devices:
        for c in [int(x) for x in args.concurrency.split(",")]:
            print()
            collection(args.collect_devices, port, port + 1, args.latency, c, args.collect_timeout)


if __name__ == "__main__":
    main()
