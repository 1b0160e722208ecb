#!/usr/bin/python3
"""fleetsim-stress ceiling (issue 30): what it costs while a cell runs, whether it repeats, and how close
its answer comes to the truth, on the collectors of tests/integration/test_ceiling.py (Debian's rsyslog
slowed by queue.dequeueSlowdown, and standin_collector.py; ceiling_collectors.py starts both).

  cost    one flat cell of --cost-window (default 60s) at the default --sample 5s against rsyslog, with
          its impstats probes (--probes file: read by ceiling itself, the default; cmd: impstats_probe.py;
          shell: tail|grep|sed), its persisted lines by a cmd: wc -l, and a prom: drop
          counter read from a stand-in: the CPU time of fleetsim-stress and its children (/proc/PID/stat
          utime+stime+cutime+cstime, probes are waited-for children) over the cell's wall time, as a share
          of one core. Also the CPU time of one read of each probe kind (getrusage of children, 20 reads).
  truth   per collector, the drain rate measured by this script (a burst, then a least-squares fit of the
          persisted count) against the sustained ceiling found by `ceiling --measure sustained` with
          --window (default 20s; the stand-in --standin-window, default 30s) and --sample 1s: rsyslog at 4000 and 2500 us per message;
  standin the stand-in (3 ms + 6.7 ms per message, 500 ms flush, one worker) against its model.
  repeat  the rsyslog 4000 us search twice on one fleet and collector: both answers, and their gap
          against --precision.

Usage: bench/ceiling_bench.py [--what cost,truth,repeat,standin] [--devices 10] [--window 20s] [--probes file|cmd|shell]
"""

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetlib  # noqa: E402

sys.path.insert(0, os.path.join(fleetlib.repo_root(), "tests", "integration"))
import ceiling_collectors as cc  # noqa: E402
import fleetsim_harness as h  # noqa: E402

STRESS = os.path.join(fleetlib.repo_root(), "build", "fleetsim-stress")
HZ = os.sysconf("SC_CLK_TCK")


class Cleanups:
    """What a unittest.TestCase gives the collectors: addCleanup, run at the end in reverse."""

    def __init__(self):
        self.fns = []

    def addCleanup(self, fn, *args):
        self.fns.append((fn, args))

    def run(self):
        for fn, args in reversed(self.fns):
            try:
                fn(*args)
            except Exception as e:  # a cleanup that fails must not hide the others
                print("cleanup: %s" % e, file=sys.stderr)
        self.fns = []


def tree_cpu_s(pid):
    """utime + stime + cutime + cstime of @pid, seconds (children counted once waited for)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / HZ


def read_cost_ms(probe, reads=20):
    """CPU ms of one read of a cmd: @probe, the mean of @reads."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(reads):
        subprocess.run(probe[4:], shell=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / reads * 1000


def start_fleet(cl, work, port, devices):
    fleet, base = h.start_with_metrics(
        devices=devices, ip_per_device=True,
        extra=["--syslog-sink", "udp://127.0.0.1:%d" % port, "--syslog-rate", "0", "--run-tag", "bench-30",
               "--state-dir", os.path.join(work, "state")])
    cl.addCleanup(fleet.kill)
    return base


def drain_truth(base, count_fn, per_device, seconds=3):
    """The drain rate after a burst of @per_device lines/s per device for @seconds."""
    h.api_request(base, "/api/v1/groups/default/syslog-rate", {"rate": per_device})
    time.sleep(seconds)
    h.api_request(base, "/api/v1/groups/default/syslog-rate", {"rate": 0})
    rate = cc.measure_drain_rate(count_fn, 120, 500)
    last = None
    while last != count_fn():  # drained: the next run starts on an empty queue
        last = count_fn()
        time.sleep(2)
    return rate


def ceiling(base, args, work):
    manifest = os.path.join(work, "ceiling-%d.json" % time.monotonic_ns())
    run = h.run_stress(STRESS, ["ceiling", "--fleet", base] + args + ["--json", manifest], manifest, 3600)
    if run.manifest is None:
        raise RuntimeError(str(run))
    return run


def rsyslog_args(rs, shell):
    p = rs.probes(shell)
    return ["--arrived", p["arrived"], "--persisted", p["persisted"], "--queue", p["queue"]]


def search_args(window, from_rate):
    return ["--measure", "sustained", "--from", str(from_rate), "--window", window, "--sample", "1s",
            "--settle", "60s"]


def cell_cost(base, probe_args, window):
    """(CPU-s, wall s) of fleetsim-stress ceiling and its children inside one flat cell of @window."""
    per_device = 10  # well below either collector's ceiling with 10 devices: one flat cell
    argv = [STRESS, "ceiling", "--fleet", base, "--from", str(per_device), "--to", str(per_device),
            "--window", window, "--settle", "30s"] + probe_args
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    try:
        if not h.wait_for(lambda: fleet_sent(base) > 0 or proc.poll() is not None, 120) or proc.poll() is not None:
            log.seek(0)
            raise RuntimeError("no cell: %s\n%s" % (" ".join(argv), log.read().decode(errors="replace")))
        c0, t0 = tree_cpu_s(proc.pid), time.monotonic()
        time.sleep(duration_s(window) - 2)  # inside the cell: start-up and the settle after it are not counted
        c1, t1 = tree_cpu_s(proc.pid), time.monotonic()
        proc.wait(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return c1 - c0, t1 - t0


def bench_cost(work, devices, window, shell):
    """The cost of a cell at the default --sample 5s: rsyslog through cmd: probes (plus a prom: drop
    counter of a stand-in), and the stand-in through prom: probes only."""
    cl = Cleanups()
    try:
        rs = cc.SlowRsyslog(work, "rs-cost", 4000).start(cl)
        si = cc.StandinCollector(work, "si-cost").start(cl)
        base = start_fleet(cl, work, rs.udp_port, devices)
        cpu, wall = cell_cost(base, rsyslog_args(rs, shell) + ["--dropped", "standin=" + si.probe(
            "standin_rcvbuf_drops_total")], window)
        print("cost: rsyslog, 3 probes (%s) + 1 prom:, %d devices at 10/s, sample 5s: %.3f CPU-s over %.1f s"
              " = %.2f %% of a core" % ({"file": "2 file: + wc -l", "cmd": "impstats_probe.py + wc -l",
                                        "shell": "tail|grep|sed + wc -l"}[shell], devices, cpu, wall,
                                        100 * cpu / wall))
        for name, probe in sorted(rs.probes(shell).items()):
            if probe.startswith("cmd:"):  # a file: probe is read inside ceiling: its cost is in the cell's
                print("  one read of %-9s %6.1f CPU-ms  (%s)" % (name, read_cost_ms(probe), probe[:70]))
        cl.run()
        si = cc.StandinCollector(work, "si-cost2").start(cl)
        base = start_fleet(cl, work, si.port, devices)
        si.warm_up(base, lambda: fleet_sent(base))
        cpu, wall = cell_cost(base, [
            "--arrived", si.probe("standin_arrived_total"), "--persisted", si.probe("standin_persisted_total"),
            "--queue", si.probe("standin_queue_messages"), "--service-time", si.probe("standin_service_time_ms"),
            "--batch-size", si.probe("standin_batch_messages"), "--workers", si.probe("standin_workers")], window)
        print("cost: stand-in, 6 prom: probes, %d devices at 10/s, sample 5s: %.3f CPU-s over %.1f s = %.2f %% of"
              " a core" % (devices, cpu, wall, 100 * cpu / wall))
    finally:
        cl.run()


def fleet_sent(base):
    """Point 1 read by the bench: the fleet's syslog `sent` from its /metrics."""
    with urllib.request.urlopen(base + "/metrics", timeout=10) as r:
        text = r.read().decode()
    return sum(int(n) for n in re.findall(r'^fleetsim_push_messages_total\{channel="syslog",state="sent"\} (\d+)',
                                          text, re.M))


def duration_s(text):
    """Seconds of a duration as ceiling takes it (500ms, 5s, 15m, 1h or seconds)."""
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    for u in ("ms", "s", "m", "h"):
        if text.endswith(u) and text[:-len(u)].replace(".", "", 1).isdigit():
            return float(text[:-len(u)]) * units[u]
    return float(text)


def bench_truth(work, devices, window, standin_window, shell, repeat, what):
    rows = []
    for slowdown in (4000, 2500) if "truth" in what or "repeat" in what else ():
        cl = Cleanups()
        try:
            rs = cc.SlowRsyslog(work, "rs-%d" % slowdown, slowdown).start(cl)
            base = start_fleet(cl, work, rs.udp_port, devices)
            truth = drain_truth(base, rs.persisted_lines, 4e6 / slowdown / devices)
            from_rate = max(1, round(truth / devices / 4))
            answers = []
            for _ in range(2 if repeat and slowdown == 4000 else 1):
                run = ceiling(base, search_args(window, from_rate) + rsyslog_args(rs, shell), work)
                answers.append(run.manifest["result"]["rate"])
            rows.append(("rsyslog dequeueSlowdown=%d" % slowdown, truth, answers))
            print("rsyslog dequeueSlowdown=%d: drain %.1f/s, found %s" % (slowdown, truth, answers), flush=True)
        finally:
            cl.run()
    cl = Cleanups()
    try:
        if "standin" not in what:
            print_table(rows)
            return rows
        si = cc.StandinCollector(work, "si-truth").start(cl)
        base = start_fleet(cl, work, si.port, devices)
        si.warm_up(base, lambda: fleet_sent(base))
        run = ceiling(base, search_args(standin_window, 4) + [
            "--arrived", si.probe("standin_arrived_total"), "--persisted", si.probe("standin_persisted_total"),
            "--queue", si.probe("standin_queue_messages"), "--service-time", si.probe("standin_service_time_ms"),
            "--batch-size", si.probe("standin_batch_messages"), "--workers", si.probe("standin_workers")], work)
        # The stand-in's truth at the found level: D sources flushed every 500 ms, one unit each of b lines,
        # 3 + 6.7 b ms per unit on one worker: it keeps up while 2 D (3 + 6.7 b) <= 1000 ms, b = r / 2.
        r = (1000.0 / (2 * devices) - 3.0) / (6.7 * 0.5)
        rows.append(("stand-in 3 ms + 6.7 ms/msg, 500 ms flush (model)", r * devices,
                     [run.manifest["result"]["rate"]]))
        ident = run.manifest["observed"].get("identity")
        if ident:
            print("stand-in identity: predicted %s measured %s reproduces %s" % (
                ident.get("predicted"), ident.get("measured"), ident.get("reproduces")))
    finally:
        cl.run()
    print_table(rows)
    return rows


def print_table(rows):
    """The truth table, as bench/RESULTS.md has it."""
    print("| collector | truth msg/s | found msg/s | found / truth |")
    print("| --- | --- | --- | --- |")
    for name, truth, answers in rows:
        print("| %s | %.1f | %s | %s |" % (name, truth, " / ".join("%.1f" % a if a else "-" for a in answers),
                                          " / ".join("%.3f" % (a / truth) if a else "-" for a in answers)))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--what", default="cost,truth,repeat,standin")
    p.add_argument("--devices", type=int, default=10)
    p.add_argument("--window", default="20s")
    p.add_argument("--cost-window", default="60s")
    # The stand-in's queue holds a flush interval of lines from the first second on; a cell's first third
    # (ceiling cuts a cell short there when the queue grows 4 x the threshold) must be long enough that
    # this step does not read as growth: 30 s at --sample 1s.
    p.add_argument("--standin-window", default="30s")
    p.add_argument("--probes", choices=("file", "cmd", "shell"), default="file")
    a = p.parse_args()
    h.BINARY = os.path.join(fleetlib.repo_root(), "build", "fleetsim")
    what = set(a.what.split(","))
    work = tempfile.mkdtemp(prefix="ceiling-bench-")
    if "cost" in what:
        bench_cost(work, a.devices, a.cost_window, a.probes)
    if what & {"truth", "repeat", "standin"}:
        bench_truth(work, a.devices, a.window, a.standin_window, a.probes, "repeat" in what, what)


if __name__ == "__main__":
    main()
