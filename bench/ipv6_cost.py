#!/usr/bin/python3
"""What IPv6 costs against IPv4 (issue 19: "within the run-to-run spread"):
two fleets at once, one on 127.0.0.1 and one on ::1 (N devices each, a port per
device, plain TCP), then alternating rounds IPv4, IPv6, IPv4, ... of
fleetsim-stress mount of all N sessions and fleetsim-stress edit on one
session. Prints every round, then the medians of mount time and edits/s per
family and the ratio IPv6/IPv4, with each family's spread (max/min) to judge
the ratio by. Wall times carry the client's and the machine's noise, so the
fleet's own CPU per mounted session and per edit (from /proc) is printed too:
that is what IPv6 could cost in fleetsim."""

import argparse
import random
import statistics

import fleetlib

FAMILIES = (("IPv4", "127.0.0.1"), ("IPv6", "::1"))


def spread(values):
    return max(values) / min(values) if min(values) > 0 else float("inf")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--devices", type=int, default=2000, help="sessions mounted per round (default 2000)")
    p.add_argument("--concurrency", type=int, default=200, help="mount's sessions set up at once")
    p.add_argument("--edits", type=int, default=20000, help="edit-config requests per edit round, one session")
    p.add_argument("--rounds", type=int, default=3, help="rounds per family (default 3)")
    args = p.parse_args()

    fleets = []
    try:
        base = random.randrange(10000, 30000 - 2 * args.devices)
        for i, (name, ip) in enumerate(FAMILIES):
            port = base + i * args.devices
            proc, _ = fleetlib.start_fleet(["--ip", ip, "--device-count", str(args.devices), "--starting-port",
                                            str(port), "--snmp", "false"])
            fleets.append((name, ip, port, proc))
        mount_s = {name: [] for name, _ in FAMILIES}
        edits_per_s = {name: [] for name, _ in FAMILIES}
        mount_cpu_us = {name: [] for name, _ in FAMILIES}
        edit_cpu_us = {name: [] for name, _ in FAMILIES}
        edit_user_us = {name: [] for name, _ in FAMILIES}
        print("%-6s %-5s %12s %12s %10s %16s %14s" % ("round", "fam", "mount s", "sessions/s", "edits/s",
                                                      "fleet us/session", "fleet us/edit"))
        for r in range(args.rounds):
            for name, ip, port, proc in fleets:
                cpu0 = fleetlib.cpu_seconds(proc.pid)
                m = fleetlib.stress_manifest(["mount", "--ip", ip, "--port", port, "--device-count", args.devices,
                                              "--concurrency", args.concurrency, "--ssh", "false"])
                cpu1 = fleetlib.cpu_seconds(proc.pid)
                user1 = fleetlib.cpu_user_system(proc.pid)[0]
                assert m["parameters"]["ip"] == ip, m["parameters"]
                e = fleetlib.stress_manifest(["edit", "--ip", ip, "--port", port, "--edits", args.edits,
                                              "--candidate-datastore", "false", "--ssh", "false"])
                cpu2 = fleetlib.cpu_seconds(proc.pid)
                user2 = fleetlib.cpu_user_system(proc.pid)[0]
                mount_s[name].append(m["results"]["all_done_s"])
                edits_per_s[name].append(e["results"]["requests_per_second"])
                mount_cpu_us[name].append((cpu1 - cpu0) * 1e6 / args.devices)
                edit_cpu_us[name].append((cpu2 - cpu1) * 1e6 / args.edits)
                edit_user_us[name].append((user2 - user1) * 1e6 / args.edits)
                print("%-6d %-5s %12.3f %12.0f %10.0f %16.1f %14.2f" % (
                    r + 1, name, mount_s[name][-1], m["results"]["sessions_per_second"], edits_per_s[name][-1],
                    mount_cpu_us[name][-1], edit_cpu_us[name][-1]))
    finally:
        for _, _, _, proc in fleets:
            fleetlib.stop_fleet(proc)

    print()
    print("%-5s %16s %12s %14s %12s" % ("fam", "mount s median", "max/min", "edits/s median", "max/min"))
    for name, _ in FAMILIES:
        print("%-5s %16.3f %12.3f %14.0f %12.3f" % (name, statistics.median(mount_s[name]), spread(mount_s[name]),
                                                   statistics.median(edits_per_s[name]), spread(edits_per_s[name])))
    print("IPv6/IPv4: mount time %.3f, edits/s %.3f (%d devices, %d edits, %d rounds each)" % (
        statistics.median(mount_s["IPv6"]) / statistics.median(mount_s["IPv4"]),
        statistics.median(edits_per_s["IPv6"]) / statistics.median(edits_per_s["IPv4"]),
        args.devices, args.edits, args.rounds))
    print()
    print("%-5s %22s %12s %20s %12s" % ("fam", "fleet us/session median", "max/min", "fleet us/edit median",
                                        "max/min"))
    for name, _ in FAMILIES:
        print("%-5s %22.1f %12.3f %20.2f %12.3f" % (
            name, statistics.median(mount_cpu_us[name]), spread(mount_cpu_us[name]),
            statistics.median(edit_cpu_us[name]), spread(edit_cpu_us[name])))
    print("IPv6/IPv4 fleet CPU: per mounted session %.3f, per edit %.3f (user time only, fleetsim's own "
          "code: %.3f; the rest is the kernel's TCP path)" % (
              statistics.median(mount_cpu_us["IPv6"]) / statistics.median(mount_cpu_us["IPv4"]),
              statistics.median(edit_cpu_us["IPv6"]) / statistics.median(edit_cpu_us["IPv4"]),
              statistics.median(edit_user_us["IPv6"]) / statistics.median(edit_user_us["IPv4"])))


if __name__ == "__main__":
    main()
