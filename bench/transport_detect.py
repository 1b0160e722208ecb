#!/usr/bin/python3
"""What fleetsim-stress's transport detection costs: mount storms against a fleet over TCP and over SSH,
each once with the transport given (--ssh false / --ssh true) and once detected (no --ssh), side by side
in one run, alternating, --repeat times. Reports the time until all were mounted, time to hello and the
client's CPU per session, and the ratio detected / given of each (medians over the repeats)."""

import argparse
import random
import statistics
import tempfile

import fleetlib


def mount(port, count, concurrency, ssh):
    r = fleetlib.stress_manifest(["mount", "--port", port, "--device-count", count, "--concurrency", concurrency]
                                 + ([] if ssh is None else ["--ssh", ssh]))
    res = r["results"]
    return {"all_s": res["all_done_s"], "hello_p50_ms": res["time_to_hello_us"]["p50"] / 1e3,
            "cpu_us": res["client_cpu_s"] / count * 1e6, "used": r["parameters"]["transport_used"]}


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--devices", type=int, default=1000)
    p.add_argument("--concurrency", type=int, default=200)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    state = tempfile.mkdtemp(prefix="fleetsim-bench-state-")
    print("%-5s %-9s %10s %14s %18s" % ("fleet", "--ssh", "all s", "hello p50 ms", "client CPU-us/sess"))
    for fleet_ssh in ("false", "true"):
        port = random.randrange(10000, 30000)
        proc, _ = fleetlib.start_fleet(["--device-count", str(args.devices), "--starting-port", str(port),
                                        "--snmp", "false", "--ssh", fleet_ssh, "--state-dir", state])
        try:
            rows = {"given": [], "detected": []}
            for _ in range(args.repeat):
                rows["given"].append(mount(port, args.devices, args.concurrency, fleet_ssh))
                rows["detected"].append(mount(port, args.devices, args.concurrency, None))
        finally:
            fleetlib.stop_fleet(proc)
        name = "ssh" if fleet_ssh == "true" else "tcp"
        med = {}
        for kind, runs in rows.items():
            assert all(r["used"] == name for r in runs), runs
            med[kind] = {k: statistics.median(r[k] for r in runs) for k in ("all_s", "hello_p50_ms", "cpu_us")}
            print("%-5s %-9s %10.3f %14.2f %18.1f" % (name, fleet_ssh if kind == "given" else "(none)",
                                                      med[kind]["all_s"], med[kind]["hello_p50_ms"],
                                                      med[kind]["cpu_us"]))
        print("%-5s %-9s %10.2f %14.2f %18.2f" % (name, "ratio", med["detected"]["all_s"] / med["given"]["all_s"],
                                                  med["detected"]["hello_p50_ms"] / med["given"]["hello_p50_ms"],
                                                  med["detected"]["cpu_us"] / med["given"]["cpu_us"]))


if __name__ == "__main__":
    main()
