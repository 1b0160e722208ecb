#!/usr/bin/python3
"""SNMP agents side by side: fleetsim (one crs-x device, one worker),
net-snmp's snmpd (its own tables: the machine's interfaces) and snmpsim
(snmpsimd serving the crs-x device exported as .snmprec: a GETBULK walk of
fleetsim's device converted here), all on 127.0.0.1 and loaded by the same
Python client with prebuilt SNMPv2c requests and W requests in flight.
For each agent and workload: requests/s, varbinds/s, the agent's CPU-us per
varbind and per request (utime+stime from /proc over the measured interval),
and the reply latency seen by the client. Then fleetsim alone at a paced
request rate (open loop, default 20,000 requests/s): latency p50/p99/max."""

import argparse
import gc
import os
import random
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetlib  # noqa: E402
import snmplib  # noqa: E402
from snmplib import GET, GETBULK, request  # noqa: E402

IFX = "1.3.6.1.2.1.31.1.1.1"  # ifXEntry
IFT = "1.3.6.1.2.1.2.2.1"     # ifEntry
HC_IN_OCTETS = IFX + ".6"


def workloads(rows):
    """(name, [prebuilt requests]) for an agent whose ifTable has the ifIndex values `rows`."""
    n = len(rows)
    get10 = [request("public", GET, ["%s.%d" % (HC_IN_OCTETS, rows[(i + j) % n]) for j in range(10)])
             for i in range(0, n, 10)]
    # GETBULK pages as a collector walking columns: each request continues after row r.
    hc_cols = [IFX + ".6", IFX + ".7", IFX + ".10", IFX + ".11"]  # ifHCIn/OutOctets, ifHCIn/OutUcastPkts

    def bulk(cols, mr):
        out = []
        for start in [0] + [rows[k - 1] for k in range(mr, n, mr)]:
            oids = [c if start == 0 else "%s.%d" % (c, start) for c in cols]
            out.append(request("public", GETBULK, oids, 0, mr))
        return out

    return [
        ("GET 10 x ifHCInOctets.i", get10),
        ("GETBULK mr=10, 4 ifXTable HC counters", bulk(hc_cols, 10)),
        ("GETBULK mr=25, ifIn/OutOctets (ifTable)", bulk([IFT + ".10", IFT + ".16"], 25)),
    ]


def if_indexes(port):
    return [v[0][-1] for v in snmplib.walk("127.0.0.1", port, "public", IFT + ".1")
            if v[0][:len(IFT.split(".")) + 1] == snmplib.oid_parse(IFT + ".1")]


def row(agent, wl, r, window, all_us_vb):
    lat = r["lat_ns"]
    us_vb = r["server_cpu_s"] / r["varbinds"] * 1e6 if r["varbinds"] else float("nan")
    us_req = r["server_cpu_s"] / r["requests"] * 1e6 if r["requests"] else float("nan")
    print("| %s | %s | %d | %s | %s | %.1f | %.2f (%s) | %.1f | %.1f %% | %.3f | %.3f | %s |" % (
        agent, wl, window, "{:,.0f}".format(r["requests"] / r["seconds"]),
        "{:,.0f}".format(r["varbinds"] / r["seconds"]), r["varbinds"] / max(1, r["requests"]), us_vb,
        ", ".join("%.2f" % u for u in all_us_vb), us_req,
        100 * r["server_cpu_s"] / r["seconds"], snmplib.pct(lat, 50) / 1e6, snmplib.pct(lat, 99) / 1e6,
        "%d lost, %d exc, %d err" % (r["lost"], r["exceptions"], r["errors"])), flush=True)
    return us_vb


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--seconds", type=float, default=2.0, help="measured seconds per agent and workload")
    p.add_argument("--window", type=int, default=8, help="requests in flight")
    p.add_argument("--reps", type=int, default=3, help="interleaved repetitions; the median is reported")
    p.add_argument("--paced-rate", type=int, default=20000, help="requests/s of the paced fleetsim runs")
    p.add_argument("--paced-seconds", type=float, default=3.0)
    p.add_argument("--paced-runs", type=int, default=3)
    p.add_argument("--no-snmpsim", action="store_true")
    args = p.parse_args()

    base = random.randrange(20000, 30000)
    fs_port, snmpd_port, sim_port = base, base + 1, base + 2
    work = tempfile.mkdtemp(prefix="snmp-agents-")
    os.chmod(work, 0o755)  # snmpsimd runs as nobody when started as root
    procs = []
    results = {}
    try:
        fleet, _ = fleetlib.start_fleet(["--device-count", "1", "--starting-port", str(base + 3),
                                         "--snmp-starting-port", str(fs_port), "--profile", "crs-x",
                                         "--threads", "1"])
        procs.append(fleet)
        snmplib.wait_agent("127.0.0.1", fs_port, "public")
        walked = snmplib.walk("127.0.0.1", fs_port, "public")
        records = [line for line in (snmplib.snmprec_line(*v) for v in walked) if line]
        print("crs-x device walked: %d varbinds, %d snmprec records" % (len(walked), len(records)))
        agents = [("fleetsim", fleet, fs_port)]
        sd = snmplib.start_snmpd(snmpd_port, work)
        procs.append(sd)
        agents.append(("snmpd", sd, snmpd_port))
        if not args.no_snmpsim:
            sim = snmplib.start_snmpsim(sim_port, os.path.join(work, "snmpsim"), records)
            procs.append(sim)
            agents.append(("snmpsim", sim, sim_port))
            sim2 = snmplib.start_snmpsim(sim_port + 1, os.path.join(work, "snmpsim-v2c"), records, ["--v2c-arch"])
            procs.append(sim2)
            agents.append(("snmpsim --v2c-arch", sim2, sim_port + 1))
            check = snmplib.walk("127.0.0.1", sim_port, "public")
            print("snmpsim serves the export: %d varbinds, %d differ from fleetsim's walk" % (
                len(check), sum(a != b for a, b in zip(check, walked)) + abs(len(check) - len(walked))))

        print()
        print("| agent | workload | W | requests/s | varbinds/s | varbinds/request | server CPU-us/varbind (all runs) "
              "| server CPU-us/request | server CPU | p50 ms | p99 ms | notes |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        # Interleaved repetitions: agent after agent, so drifting background load on the shared machine hits
        # every agent alike; each row is the repetition with the median CPU per varbind.
        runs = {}
        tables = {name: workloads(if_indexes(port)) for name, _, port in agents}
        for rep in range(args.reps):
            for w in range(len(tables["fleetsim"])):
                for name, proc, port in agents:
                    wl, templates = tables[name][w]
                    gc.disable()
                    try:
                        r = snmplib.closed_loop("127.0.0.1", port, templates, args.window, args.seconds,
                                                pid=proc.pid)
                    finally:
                        gc.enable()
                    runs.setdefault((name, wl), []).append(r)
        for name, _, port in agents:
            for wl, _ in tables[name]:
                rs = sorted(runs[(name, wl)], key=lambda r: r["server_cpu_s"] / max(1, r["varbinds"]))
                label = name + (" (%d interfaces)" % len(if_indexes(port)) if name == "snmpd" else "")
                results[(name, wl)] = row(label, wl, rs[len(rs) // 2], args.window,
                                          [r["server_cpu_s"] / max(1, r["varbinds"]) * 1e6 for r in rs])

        print()
        print("| workload | snmpd / fleetsim CPU per varbind | snmpsim / fleetsim | snmpsim --v2c-arch / fleetsim |")
        print("| --- | --- | --- | --- |")
        for wl, _ in workloads([1]):
            f = results[("fleetsim", wl)]
            print("| %s | %.1fx | %s | %s |" % (
                wl, results[("snmpd", wl)] / f,
                "%.0fx" % (results[("snmpsim", wl)] / f) if ("snmpsim", wl) in results else "-",
                "%.0fx" % (results[("snmpsim --v2c-arch", wl)] / f) if ("snmpsim --v2c-arch", wl) in results
                else "-"))

        for _name, proc, _port in agents[1:]:
            snmplib.kill_proc(proc)

        print()
        print("fleetsim alone, paced (open loop) at %d requests/s, %d runs of %.0f s per workload, no injected "
              "latency; latency from send() to the kernel's receive timestamp of the reply:" % (
                  args.paced_rate, args.paced_runs, args.paced_seconds))
        print()
        print("| workload | run | sent/s | answered | server CPU | server CPU-us/request | p50 ms | p99 ms | p99.9 ms "
              "| max ms | sender late p99 ms | sent on time | p99 ms of those |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        rows = if_indexes(fs_port)
        for wl, templates in workloads(rows)[:2]:
            for run in range(args.paced_runs):
                cpu0 = fleetlib.cpu_seconds(fleet.pid)
                gc.disable()
                try:
                    r = snmplib.paced("127.0.0.1", fs_port, templates, args.paced_rate, args.paced_seconds)
                finally:
                    gc.enable()
                cpu = fleetlib.cpu_seconds(fleet.pid) - cpu0
                lat, ontime = r["lat_ns"], r["lat_ontime_ns"]
                print("| %s | %d | %s | %d / %d | %.1f %% | %.1f | %.3f | %.3f | %.3f | %.3f | %.3f | %.1f %% | %.3f |"
                      % (wl, run + 1, "{:,.0f}".format(r["sent"] / r["seconds"]), r["requests"], r["sent"],
                         100 * cpu / (r["seconds"] + 0.3), cpu / max(1, r["answered_all"]) * 1e6,
                         snmplib.pct(lat, 50) / 1e6, snmplib.pct(lat, 99) / 1e6, snmplib.pct(lat, 99.9) / 1e6,
                         lat[-1] / 1e6 if lat else float("nan"), snmplib.pct(r["late_ns"], 99) / 1e6,
                         100 * len(ontime) / max(1, len(lat)), snmplib.pct(ontime, 99) / 1e6), flush=True)
        fleetlib.stop_fleet(fleet)
    finally:
        for proc in procs:
            snmplib.kill_proc(proc)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
