#!/usr/bin/python3
"""Growing a fleet while it serves: does a step of grow stall the sessions already open?

A fleet of --devices (default 100,000) devices, an address each (127.1.x.y, one port), starts with only
device 0 present (a scenario's "start") and grows by --step (5,000) every --period seconds (2 s: the
issue's ramp steps every 60 s; what matters is the stall of one step, not the gap between steps) until
it is whole. Meanwhile one client runs a synchronous edit-config loop on device 0 (merge one interface's
description, wait for the reply, again). Reported: the loop's latency (median, p99, max) before the
growth and while it runs, the worst latency within 1 s after each step, how long each step took in the
fleet (the events' times), fleetsim's CPU time per device that joined, and its RSS before and after.

Run: /usr/bin/python3 bench/growth.py [--devices N] [--step N] [--period S]"""

import argparse
import json
import os
import random
import tempfile
import threading
import time
import urllib.request

import fleetlib


def get(base, path):
    with urllib.request.urlopen(base + path, timeout=60) as r:
        return json.loads(r.read())


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p / 100.0 * len(values)))] if values else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--devices", type=int, default=100000)
    ap.add_argument("--step", type=int, default=5000)
    ap.add_argument("--period", type=float, default=2.0)
    ap.add_argument("--baseline", type=float, default=4.0, help="seconds of edits before the first step")
    args = ap.parse_args()

    steps = (args.devices - 1 + args.step - 1) // args.step
    scenario = {"fleetsim-scenario:scenario": {
        "start": [{"group": "default", "devices": 1}],
        "event": [{"name": "grow", "every": {"period": "%dms" % int(args.period * 1000),
                                             "from": "%dms" % int(args.baseline * 1000), "count": steps},
                   "grow": {"devices": args.step}}]}}
    fd, path = tempfile.mkstemp(suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(scenario, f)
    port = random.randrange(20000, 30000)
    mport = port + 1
    proc, _ = fleetlib.start_fleet(["--device-count", str(args.devices), "--ip", "127.1.0.1", "--ip-per-device",
                                    "--starting-port", str(port), "--ssh", "false", "--snmp", "false",
                                    "--threads", "2", "--status-interval", "0",
                                    "--metrics", "127.0.0.1:%d" % mport, "--scenario", path])
    base = "http://127.0.0.1:%d" % mport
    try:
        cpu0, rss0 = fleetlib.cpu_seconds(proc.pid), fleetlib.rss_kib(proc.pid)
        client = fleetlib.Client("127.1.0.1", port)
        samples = []  # (monotonic end, latency s)
        stop = threading.Event()
        t_start = time.monotonic()
        wall_start_ms = time.time() * 1000.0

        i = 0
        total_s = args.baseline + steps * args.period + 1.5
        while time.monotonic() - t_start < total_s:
            body = fleetlib.edit_body(
                fleetlib.interface_xml("eth0").replace("</name>", "</name><description>edit %d</description>" % i, 1))
            t0 = time.monotonic()
            reply = client.call(body)
            t1 = time.monotonic()
            if b"<ok/>" not in reply:
                raise RuntimeError(reply[:300])
            samples.append((t1 - t_start, t1 - t0))
            i += 1
        stop.set()
        client.close()
        fleet = get(base, "/api/v1/fleet")
        evs = get(base, "/api/v1/events?since=0")["events"]
        cpu1, rss1 = fleetlib.cpu_seconds(proc.pid), fleetlib.rss_kib(proc.pid)
    finally:
        fleetlib.stop_fleet(proc)
        os.unlink(path)

    grows = [e for e in evs if e["action"] == "grow"]
    # event times are wall clock; the loop's are since t_start (taken within a ms of wall_start_ms)
    step_t = [(e["time_ms"] - wall_start_ms) / 1000.0 for e in grows]
    before = [lat for t, lat in samples if t < args.baseline - 0.2]
    during = [lat for t, lat in samples if step_t and step_t[0] - 0.5 <= t <= step_t[-1] + 1.0]
    worst_after = [max([lat for t, lat in samples if s - 0.05 <= t <= s + 1.0] or [0.0]) for s in step_t]
    joined = sum(e["devices"] for e in grows)
    print("fleet: %d devices, %d present at the end (%d grow steps of %d, every %.1f s)"
          % (args.devices, fleet["present"], len(grows), args.step, args.period))
    print("sync edit loop on device 0: %d edits" % len(samples))
    print("  before growth: median %.2f ms, p99 %.2f ms, max %.2f ms (%d edits)"
          % (percentile(before, 50) * 1e3, percentile(before, 99) * 1e3, max(before) * 1e3, len(before)))
    print("  during growth: median %.2f ms, p99 %.2f ms, max %.2f ms (%d edits)"
          % (percentile(during, 50) * 1e3, percentile(during, 99) * 1e3, max(during) * 1e3, len(during)))
    print("  worst edit within 1 s of a step: median %.2f ms, max %.2f ms"
          % (percentile(worst_after, 50) * 1e3, max(worst_after) * 1e3))
    print("fleetsim CPU: %.2f s over the run (%.1f us per device that joined, edits included); RSS %d -> %d MiB"
          % (cpu1 - cpu0, (cpu1 - cpu0) / max(joined, 1) * 1e6, rss0 // 1024, rss1 // 1024))


if __name__ == "__main__":
    main()
