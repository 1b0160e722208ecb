#!/usr/bin/python3
"""What a shard costs against an unsharded fleet of its size: start-up time, RSS and server CPU per SNMP
request of `fleetsim --device-count C --shard I/N` next to `fleetsim --device-count C/N`, in alternating
rounds (absolute numbers are noisy on a shared machine; the ratios are the result).

Both run an address per device from --ip (plain TCP NETCONF on one port, SNMP on another); the shard's
devices start at address floor(I*C/N), as the whole fleet's would. The SNMP load is fleetsim-stress snmp
over the first --polled devices of each.

Usage: bench/shard_cost.py [--devices 200000] [--shards 10] [--index 1] [--rounds 3] [--polled 2000]
"""

import argparse
import ipaddress
import statistics
import time

import fleetlib

BASE = "127.60.0.1"
NETCONF_PORT = 24830
SNMP_PORT = 24100


def one(devices, extra, first, polled):
    args = ["--device-count", str(devices), "--ip", BASE, "--ip-per-device", "--ssh", "false",
            "--starting-port", str(NETCONF_PORT), "--snmp-starting-port", str(SNMP_PORT)] + extra
    proc, ready = fleetlib.start_fleet(args, timeout_s=300)
    try:
        time.sleep(1.0)
        rss = fleetlib.rss_kib(proc.pid)
        cpu0 = fleetlib.cpu_seconds(proc.pid)
        m = fleetlib.stress_manifest(["snmp", "--ip", str(ipaddress.ip_address(BASE) + first), "--ip-per-device",
                                      "--port", SNMP_PORT, "--device-count", polled, "--rounds", 3])
        cpu = fleetlib.cpu_seconds(proc.pid) - cpu0
        responses = m["results"].get("responses") or m["results"]["collections"]
    finally:
        fleetlib.stop_fleet(proc)
    return fleetlib.startup_seconds(ready), rss, cpu * 1e6 / responses


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", type=int, default=200000)
    ap.add_argument("--shards", type=int, default=10)
    ap.add_argument("--index", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--polled", type=int, default=2000)
    a = ap.parse_args()
    first = a.devices * a.index // a.shards
    size = a.devices * (a.index + 1) // a.shards - first
    rows = {"shard": [], "plain": []}
    for r in range(a.rounds):
        rows["shard"].append(one(a.devices, ["--shard", "%d/%d" % (a.index, a.shards)], first, a.polled))
        rows["plain"].append(one(size, [], 0, a.polled))
        print("round %d: shard %s, plain %s" % (r + 1, rows["shard"][-1], rows["plain"][-1]), flush=True)
    med = {k: [statistics.median(x[i] for x in v) for i in range(3)] for k, v in rows.items()}
    print("| measure | shard %d/%d of %d | fleet of %d | shard / fleet |" % (a.index, a.shards, a.devices, size))
    print("| --- | --- | --- | --- |")
    for i, (name, unit) in enumerate((("start-up", "s"), ("RSS", "KiB"), ("server CPU per SNMP response", "us"))):
        s, p = med["shard"][i], med["plain"][i]
        print("| %s (median of %d) | %.3f %s | %.3f %s | %.2f |" % (name, a.rounds, s, unit, p, unit, s / p))


if __name__ == "__main__":
    main()
