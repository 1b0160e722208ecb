#!/usr/bin/python3
"""Cost of the live page: fleetsim's CPU time (utime + stime of the whole process, from /proc/PID/stat)
over --loads loads of / (the page, Chart.js inlined) and of /live.json (the data, every sample the
ring holds), made one after another with the curl binary against a --devices fleet (--ip-per-device).
The sampler gathers once a second whatever the loads, so the same fleet's CPU over an idle window as
long as the loads took is measured too and subtracted: "net" is what the loads themselves cost.
--fill-s waits before measuring the JSON, so that the ring holds that many samples (905: full)."""

import argparse
import random
import subprocess
import time

import fleetlib


def loads(url, count):
    """(CPU-free) wall seconds of @count loads of @url, and the size of one."""
    size = len(subprocess.run(["curl", "-sS", "--fail", url], stdout=subprocess.PIPE, check=True).stdout)
    t0 = time.monotonic()
    for _ in range(count):
        subprocess.run(["curl", "-sS", "--fail", "-o", "/dev/null", url], check=True)
    return time.monotonic() - t0, size


def measure(pid, url, count):
    """(gross CPU s per load, net CPU s per load, wall s per load, bytes) of @count loads of @url."""
    cpu0 = fleetlib.cpu_seconds(pid)
    wall, size = loads(url, count)
    cpu = fleetlib.cpu_seconds(pid) - cpu0
    idle0 = fleetlib.cpu_seconds(pid)
    time.sleep(wall)
    idle = fleetlib.cpu_seconds(pid) - idle0
    return cpu / count, max(cpu - idle, 0.0) / count, wall / count, size


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--devices", type=int, default=10000)
    p.add_argument("--loads", type=int, default=500)
    p.add_argument("--fill-s", type=float, default=905, help="seconds to fill the ring before the JSON runs")
    p.add_argument("--binary", default=None, help="fleetsim to run (default: build/fleetsim)")
    args = p.parse_args()
    port = random.randrange(10000, 32000)
    metrics_port = random.randrange(5000, 9999)
    proc, _ = fleetlib.start_fleet(["--device-count", str(args.devices), "--ip-per-device", "--ip", "127.1.0.1",
                                    "--starting-port", str(port), "--status-interval", "0",
                                    "--metrics", "127.0.0.1:%d" % metrics_port], binary=args.binary)
    base = "http://127.0.0.1:%d" % metrics_port
    rows = []
    try:
        time.sleep(2)
        t0 = time.monotonic()
        rows.append(("/ (page)",) + measure(proc.pid, base + "/", args.loads))
        time.sleep(max(0.0, args.fill_s - (time.monotonic() - t0)))
        idle_s, cpu0 = 10.0, fleetlib.cpu_seconds(proc.pid)
        time.sleep(idle_s)
        idle_cpu = fleetlib.cpu_seconds(proc.pid) - cpu0
        rows.append(("/live.json",) + measure(proc.pid, base + "/live.json", args.loads))
        samples = subprocess.run(["curl", "-sS", base + "/live.json"], stdout=subprocess.PIPE,
                                 check=True).stdout.count(b"],[") + 1
    finally:
        fleetlib.stop_fleet(proc)
    print("%d devices, %d loads each; the JSON held %d samples" % (args.devices, args.loads, samples))
    print("%-12s %16s %16s %16s %10s" % ("path", "CPU ms/load", "net CPU ms/load", "wall ms/load", "KiB"))
    for name, gross, net, wall, size in rows:
        print("%-12s %16.3f %16.3f %16.3f %10.1f" % (name, gross * 1e3, net * 1e3, wall * 1e3, size / 1024))
    print("idle fleet with its sampler: %.2f ms of CPU per second (over %.0f s without loads)"
          % (idle_cpu / idle_s * 1e3, idle_s))


if __name__ == "__main__":
    main()
