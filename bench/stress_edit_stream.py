#!/usr/bin/python3
"""fleetsim-stress edit, one binary against another (issue 28: requests built a window ahead of the sender
instead of all before the clock). Side by side against one fleetsim: 20,000 and 100,000 edits, sync and
pipelined (W=64), each on a fresh device, the two binaries alternating (A B B A ...) over --rounds rounds;
prints each binary's median rate and client CPU per edit and the ratio new/old. With --huge, the new
binary's peak RSS over --huge-s seconds of a --edits 100000000 run (sync and pipelined, default content),
and how it ends on SIGINT.

Run: bench/stress_edit_stream.py --old /work/main/build/fleetsim-stress [--rounds 5] [--huge]"""

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import tempfile
import time

import fleetlib

SCENARIOS = [
    ("sync, 20,000", 20000, ["--candidate-datastore", "false"]),
    ("pipelined W=64, 20,000", 20000, ["--candidate-datastore", "false", "--async-requests", "true",
                                       "--pipeline", "64"]),
    ("sync, 100,000", 100000, ["--candidate-datastore", "false"]),
    ("pipelined W=64, 100,000", 100000, ["--candidate-datastore", "false", "--async-requests", "true",
                                         "--pipeline", "64"]),
]


def run_edit(binary, port, edits, extra):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        manifest = f.name
    proc = subprocess.run([binary, "edit", "--port", str(port), "--edits", str(edits), "--json", manifest] + extra,
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError("%s failed: %s %s" % (binary, proc.stdout, proc.stderr))
    with open(manifest) as f:
        res = json.load(f)["results"]
    os.unlink(manifest)
    return res["requests_per_second"], res["client_cpu_us_per_edit"]


def huge(binary, port, extra, seconds):
    """Peak RSS (KiB) of a 100,000,000-edit run over @seconds, then SIGINT: (peak, exit code, answered, s to end)."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        manifest = f.name
    proc = subprocess.Popen([binary, "edit", "--port", str(port), "--edits", "100000000", "--json", manifest] + extra,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    end = time.time() + seconds
    while time.time() < end and proc.poll() is None:
        peak = max(peak, fleetlib.rss_kib(proc.pid))
        time.sleep(0.1)
    t0 = time.time()
    proc.send_signal(signal.SIGINT)
    code = proc.wait(timeout=30)
    took = time.time() - t0
    with open(manifest) as f:
        answered = json.load(f)["results"]["edits_answered"]
    os.unlink(manifest)
    return peak, code, answered, took


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--old", required=True, help="the fleetsim-stress to compare with")
    p.add_argument("--new", default=os.path.join(fleetlib.repo_root(), "build", "fleetsim-stress"))
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--huge", action="store_true")
    p.add_argument("--huge-s", type=float, default=10)
    args = p.parse_args()

    port = random.randrange(10000, 30000)
    devices = args.rounds * len(SCENARIOS) * 2 + 2
    proc, _ = fleetlib.start_fleet(["--device-count", str(devices), "--starting-port", str(port)])
    try:
        rates = {(s[0], b): [] for s in SCENARIOS for b in ("old", "new")}
        cpus = {(s[0], b): [] for s in SCENARIOS for b in ("old", "new")}
        device = 0
        for r in range(args.rounds):
            for name, edits, extra in SCENARIOS:
                order = ("old", "new") if r % 2 == 0 else ("new", "old")
                for which in order:
                    rate, cpu = run_edit(args.old if which == "old" else args.new, port + device, edits, extra)
                    device += 1
                    rates[(name, which)].append(rate)
                    cpus[(name, which)].append(cpu)
        print("%-26s %12s %12s %7s %15s %15s   (medians of %d rounds)" % (
            "scenario", "old edits/s", "new edits/s", "ratio", "old client us", "new client us", args.rounds))
        for name, _, _ in SCENARIOS:
            old, new = statistics.median(rates[(name, "old")]), statistics.median(rates[(name, "new")])
            print("%-26s %12.0f %12.0f %7.3f %15.2f %15.2f" % (
                name, old, new, new / old, statistics.median(cpus[(name, "old")]),
                statistics.median(cpus[(name, "new")])))
            print("  ratios per round: %s" % " ".join(
                "%.3f" % (n / o) for o, n in zip(rates[(name, "old")], rates[(name, "new")])))
        if args.huge:
            for i, (name, extra) in enumerate([("sync", ["--candidate-datastore", "false"]),
                                               ("pipelined W=64", ["--candidate-datastore", "false",
                                                                   "--async-requests", "true"])]):
                peak, code, answered, took = huge(args.new, port + device + i, extra, args.huge_s)
                print("--edits 100000000, %s: peak RSS %.1f MiB over %.0f s; SIGINT: exit %d after %.2f s, "
                      "%d edits answered" % (name, peak / 1024, args.huge_s, code, took, answered))
    finally:
        fleetlib.stop_fleet(proc)


if __name__ == "__main__":
    main()
