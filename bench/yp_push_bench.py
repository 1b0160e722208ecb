#!/usr/bin/python3
"""YANG-Push periodic (issue 31), measured with fleetsim-stress push.

1. Cost: the fleet's CPU time (/proc/PID/stat, one worker thread) per periodic push-update of a
   one-interface counter subtree of crs-x, against its CPU time per <get> with the same filter on the same
   devices, polled by pipelined sessions: the ratio push/get (target <= 1.2) and push-updates per second per
   core (1 / CPU per update; target >= 50,000).
2. Timeliness: DEVICES devices at 1 s periods (--slots-devices, default 10,000): the p99 of arrival minus
   slot (target under 5 ms), missed and duplicated periods, from fleetsim-stress push's manifest.

The client and the fleet share the machine; the CPU per unit is the fleet's alone. Both parts start their
own fleet on loopback.
"""

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import json
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetlib  # noqa: E402

CRS_X_FIRST_IF = "MgmtEth0/RP0/CPU0/0"


def xpath_of(interface):
    return "/ietf-interfaces:interfaces/interface[name='%s']/statistics" % interface


def subtree_of(interface):
    return ('<interfaces xmlns="%s"><interface><name>%s</name><statistics/></interface></interfaces>'
            % (fleetlib.IF_NS, interface))


def get_body(interface, kind):
    if kind == "subtree":
        return '<get><filter type="subtree">%s</filter></get>' % subtree_of(interface)
    return ('<get><filter type="xpath" xmlns:if="%s" select="/if:interfaces/if:interface[if:name=\'%s\']'
            '/if:statistics"/></get>' % (fleetlib.IF_NS, interface))


def filter_args(interface, kind, work):
    """push's options for the same filter as get_body()."""
    if kind == "xpath":
        return ["--xpath", xpath_of(interface)]
    path = os.path.join(work, "filter.xml")
    with open(path, "w") as f:
        f.write(subtree_of(interface))
    return ["--subtree", path]


def run_push(port, devices, period_s, duration_s, filt, fleet_pid=None, extra=()):
    """fleetsim-stress push's manifest and the fleet's CPU seconds over the run (setup included)."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        path = f.name
    cmd = [os.path.join(fleetlib.repo_root(), "build", "fleetsim-stress"), "push", "--port", str(port),
           "--device-count", str(devices), "--ssh", "false", "--period", str(period_s), "--duration",
           str(duration_s), "--concurrency", "500", "--json", path] + list(filt) + list(extra)
    cpu0 = fleetlib.cpu_seconds(fleet_pid) if fleet_pid else 0.0
    t0 = time.monotonic()
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=duration_s + 600)
    cpu = fleetlib.cpu_seconds(fleet_pid) - cpu0 if fleet_pid else 0.0
    elapsed = time.monotonic() - t0
    try:
        with open(path) as f:
            manifest = json.load(f)
    finally:
        os.unlink(path)
    if run.returncode not in (0, 1):
        raise RuntimeError("fleetsim-stress push exited with %d:\n%s%s" % (run.returncode, run.stdout, run.stderr))
    return manifest, cpu, elapsed, " ".join(cmd[1:])


def idle_rate(pid, seconds=5.0):
    """The fleet's CPU seconds per second with no client (its own timers: counters, SNMP, metrics)."""
    cpu0, t0 = fleetlib.cpu_seconds(pid), time.monotonic()
    time.sleep(seconds)
    return (fleetlib.cpu_seconds(pid) - cpu0) / (time.monotonic() - t0)


def cost(args):
    port = random.randrange(10000, 32000 - args.devices)
    proc, _ = fleetlib.start_fleet(["--device-count", str(args.devices), "--threads", "1", "--profile", args.profile,
                                    "--starting-port", str(port)])
    try:
        # Polling: pipelined gets over a few sessions, every device in turn.
        clients = [fleetlib.Client("127.0.0.1", port + i) for i in range(min(args.devices, 8))]
        body = get_body(args.interface, args.filter)
        reply = clients[0].call(body)
        if b"in-octets" not in reply:
            raise RuntimeError("the get's filter selects no counter: %s" % reply[:400])
        idle = idle_rate(proc.pid)
        cpu0, t0 = fleetlib.cpu_seconds(proc.pid), time.monotonic()
        for c in clients:
            c.pipeline(lambda i: body, args.gets // len(clients), 32, b"<data")
        gets = args.gets // len(clients) * len(clients)
        cpu_get = (fleetlib.cpu_seconds(proc.pid) - cpu0 - idle * (time.monotonic() - t0)) / gets
        for c in clients:
            c.close()
        # Pushing: every device, period --period, for --duration.
        manifest, cpu, elapsed, cmd = run_push(port, args.devices, args.period, args.duration,
                                               filter_args(args.interface, args.filter, tempfile.mkdtemp()), proc.pid)
        res = manifest["results"]
        updates = res["received"]["push-update"]
        cpu_update = (cpu - idle * elapsed) / updates
        print("cost: fleetsim --profile %s --threads 1 --device-count %d; %s" % (args.profile, args.devices, cmd))
        print("  fleet idle: %.1f ms CPU per second (subtracted from both)" % (idle * 1e3))
        print("  get (%s filter, %d gets, 8 sessions, 32 in flight): %.2f us CPU per get"
              % (args.filter, gets, cpu_get * 1e6))
        print("  push-update (%d updates, period %s s, setup included): %.2f us CPU per update"
              % (updates, args.period, cpu_update * 1e6))
        print("  ratio push/get: %.3f (target <= 1.2); push-updates per second per core: %.0f (target >= 50,000)"
              % (cpu_update / cpu_get, 1.0 / cpu_update))
        print("  missed %d, duplicated %d; update bytes p50 %s" % (res["periods"]["missed"],
                                                                 res["periods"]["duplicated"],
                                                                 res["update_bytes"]["p50"]))
    finally:
        fleetlib.stop_fleet(proc)


def slots(args):
    port = random.randrange(10000, 32000 - args.slots_devices)
    metrics = "127.0.0.1:%d" % random.randrange(32000 - args.slots_devices + 1, 32700)
    proc, _ = fleetlib.start_fleet(["--device-count", str(args.slots_devices), "--threads", str(args.threads),
                                    "--profile", args.profile, "--snmp", "false", "--metrics", metrics,
                                    "--starting-port", str(port)],
                                   timeout_s=600)  # no agents: 10,000 ports each side fit 20,000 descriptors
    try:
        manifest, cpu, _, cmd = run_push(port, args.slots_devices, 1, args.slots_duration,
                                         filter_args(args.interface, args.filter, tempfile.mkdtemp()), proc.pid,
                                         ["--fleet-report", "http://" + metrics])
        res = manifest["results"]
        late = res["latency_us"]["arrival_after_slot"]
        recon = res["reconciliation"] or {}
        print("slots: fleetsim --profile %s --threads %d --snmp false --device-count %d; %s"
              % (args.profile, args.threads, args.slots_devices, cmd))
        print("  subscribed %d, failed %d %s" % (res["subscribed"], res["failed"],
                                               {k: v for k, v in res["failures"].items() if v}))
        print("  set-up %.1f s, run %.1f s; %d updates; missed %d, duplicated %d; arrival after slot p50 %.3f ms "
              "p99 %.3f ms max %.3f ms (target p99 < 5 ms); eventTime off its slot max %s us; fleet CPU %.1f s"
              % (res["setup_s"], res["run_s"], res["received"]["push-update"], res["periods"]["missed"],
                 res["periods"]["duplicated"], late["p50"] / 1e3, late["p99"] / 1e3, late["max"] / 1e3,
                 res["latency_us"]["slot_offset"]["max"], cpu))
        print("  fleet's report: %s subscriptions match exactly, %s differ, %s missing; fleet's missed slots %s"
              % (recon.get("matched"), recon.get("differ"), recon.get("missing"),
                 (recon.get("sent") or {}).get("missed_slots")))
    finally:
        fleetlib.stop_fleet(proc)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--what", choices=("cost", "slots", "all"), default="all")
    p.add_argument("--devices", type=int, default=1000, help="cost: devices subscribed")
    p.add_argument("--period", default="0.1", help="cost: period in seconds")
    p.add_argument("--duration", type=int, default=20, help="cost: seconds of pushing")
    p.add_argument("--gets", type=int, default=20000, help="cost: gets polled")
    p.add_argument("--slots-devices", type=int, default=10000)
    p.add_argument("--slots-duration", type=int, default=60)
    p.add_argument("--threads", type=int, default=2, help="slots: the fleet's worker threads")
    p.add_argument("--profile", default="crs-x", help="the fleet's profile")
    p.add_argument("--filter", choices=("subtree", "xpath"), default="subtree",
                   help="the one-interface statistics as a subtree or an XPath filter (the same for get and push)")
    p.add_argument("--interface", default=None, help="the interface of the filter (default: the profile's first)")
    args = p.parse_args()
    if not args.interface:
        args.interface = CRS_X_FIRST_IF if args.profile == "crs-x" else "GigabitEthernet0/0/0/0"
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # 10,000 sessions on each side
    if args.what in ("cost", "all"):
        cost(args)
    if args.what in ("slots", "all"):
        slots(args)


if __name__ == "__main__":
    main()
