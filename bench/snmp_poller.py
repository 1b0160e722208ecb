#!/usr/bin/python3
"""Agents under a poller that keeps them busy: fleetsim-stress snmp (C, one event loop) walks the same
columns with GETBULK, many collections in flight, against fleetsim and against net-snmp's snmpd. Each
simulated "device" is a loopback address; snmpd listens on all of them, so it gets as many collections
at once as fleetsim. Reported: server CPU-us per varbind the agent encoded (the poller counts every
varbind of every response, those past a column's end included), per collected value and per request.
Runs are interleaved and repeated; the row is the median."""

import argparse
import json
import os
import random
import statistics
import subprocess
import tempfile

import fleetlib
import snmplib

COLUMNS = ["1.3.6.1.2.1.31.1.1.1.6", "1.3.6.1.2.1.31.1.1.1.7", "1.3.6.1.2.1.31.1.1.1.10",
           "1.3.6.1.2.1.31.1.1.1.11", "1.3.6.1.2.1.2.2.1.13", "1.3.6.1.2.1.2.2.1.14", "1.3.6.1.2.1.2.2.1.19",
           "1.3.6.1.2.1.2.2.1.20"]
FIRST = "127.3.0.1"


def addr(i):
    a = [int(x) for x in FIRST.split(".")]
    n = (a[0] << 24 | a[1] << 16 | a[2] << 8 | a[3]) + i
    return "%d.%d.%d.%d" % (n >> 24, (n >> 16) & 255, (n >> 8) & 255, n & 255)


def start_snmpd(port, devices, work):
    conf = os.path.join(work, "snmpd.conf")
    with open(conf, "w") as f:
        f.write("rocommunity public 127.0.0.0/8\n")
    endpoints = ",".join("udp:%s:%d" % (addr(i), port) for i in range(devices))
    env = dict(os.environ, SNMP_PERSISTENT_DIR=os.path.join(work, "persist"), MIBS="")
    proc = subprocess.Popen(["snmpd", "-f", "-Lo", "-C", "-c", conf, endpoints], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=work)
    snmplib.wait_agent(addr(devices - 1), port, "public", 20)
    return proc


def poll(port, devices, args, pid):
    with tempfile.NamedTemporaryFile(suffix=".json") as manifest:
        cpu0 = fleetlib.cpu_seconds(pid)
        p = subprocess.run([os.path.join(fleetlib.repo_root(), "build", "fleetsim-stress"), "snmp", "--ip", FIRST,
                            "--ip-per-device", "--port", str(port), "--device-count", str(devices), "--concurrency",
                            str(devices), "--oids", ",".join(COLUMNS), "--max-repetitions", str(args.max_repetitions),
                            "--max-vars-per-pdu", "10", "--duration", str(int(args.seconds)), "--json", manifest.name],
                           capture_output=True, text=True, timeout=120)
        cpu = fleetlib.cpu_seconds(pid) - cpu0
        if p.returncode != 0:
            raise RuntimeError("fleetsim-stress failed: %s %s" % (p.stdout[-500:], p.stderr[-500:]))
        r = json.load(open(manifest.name))["results"]
    return {"cpu_s": cpu, "varbinds": r["varbinds_received"], "values": r["values"], "requests": r["responses"],
            "rps": r["responses"] / r["elapsed_s"], "client_us": r["client_cpu_us_per_request"]}


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--devices", type=int, default=50, help="addresses, and collections in flight")
    p.add_argument("--seconds", type=int, default=4)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--max-repetitions", type=int, default=25)
    p.add_argument("--max-message-size", type=int, default=1472,
                   help="fleetsim's response size limit (snmpd answers a v2c GETBULK with up to its own limit)")
    args = p.parse_args()

    port = random.randrange(20000, 30000)
    work = tempfile.mkdtemp(prefix="snmp-poller-")
    agents = []
    try:
        fleet, _ = fleetlib.start_fleet(["--device-count", str(args.devices), "--ip-per-device", "--ip", FIRST,
                                         "--starting-port", str(port), "--snmp-starting-port", str(port),
                                         "--profile", "crs-x", "--threads", "1", "--snmp-max-message-size",
                                         str(args.max_message_size)])
        agents.append(("fleetsim (crs-x, 144 interfaces)", fleet))
        agents.append(("snmpd (this machine, %d interfaces)" % len(os.listdir("/sys/class/net")),
                       start_snmpd(port + 1, args.devices, work)))
        results = {name: [] for name, _ in agents}
        for _ in range(args.reps):
            for i, (name, proc) in enumerate(agents):
                results[name].append(poll(port + i, args.devices, args, proc.pid))
        print("%d collections in flight over %d addresses, GETBULK max-repetitions %d over %d columns, %.0f s, "
              "median of %d" % (args.devices, args.devices, args.max_repetitions, len(COLUMNS), args.seconds,
                                 args.reps))
        print()
        print("| agent | requests/s | varbinds/request | server CPU-us/varbind (all runs) | server CPU-us/value "
              "| server CPU-us/request | client CPU-us/request |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        per_vb = {}
        for name, runs in results.items():
            vbs = [r["cpu_s"] * 1e6 / r["varbinds"] for r in runs]
            med = sorted(runs, key=lambda r: r["cpu_s"] * 1e6 / r["varbinds"])[len(runs) // 2]
            per_vb[name] = statistics.median(vbs)
            print("| %s | %s | %.1f | %.3f (%s) | %.3f | %.1f | %.1f |" % (
                name, format(int(med["rps"]), ","), med["varbinds"] / med["requests"], per_vb[name],
                ", ".join("%.3f" % v for v in vbs), med["cpu_s"] * 1e6 / med["values"],
                med["cpu_s"] * 1e6 / med["requests"], med["client_us"]))
        names = list(per_vb)
        print()
        print("snmpd / fleetsim server CPU per varbind: %.1fx" % (per_vb[names[1]] / per_vb[names[0]]))
    finally:
        for _, proc in agents:
            snmplib.kill_proc(proc)


if __name__ == "__main__":
    main()
