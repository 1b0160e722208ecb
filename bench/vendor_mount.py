#!/usr/bin/python3
"""A controller's first mount of a vendor-type fleet: fleetsim --schemas-dir FOLDER with --devices devices
(TCP, port per device), then fleetsim-stress mount --on-mount get-schema, which opens a session to every
device and fetches every module the hello advertises, --concurrency at a time. Reports the time until all
were mounted, the schemas fetched, and the server's and the client's CPU per device; the same fleet
without the folder for comparison.

FOLDER: see bench/vendor_yang.py for how to make a flat copy of OpenConfig's public models (outside the
repository).
"""

import argparse
import random

import fleetlib


def mount(count, concurrency, folder):
    port = random.randrange(10000, 30000)
    args = ["--device-count", str(count), "--starting-port", str(port), "--snmp", "false", "--status-interval",
            "0"] + (["--schemas-dir", folder] if folder else [])
    proc, _ = fleetlib.start_fleet(args)
    try:
        cpu0 = fleetlib.cpu_seconds(proc.pid)
        r = fleetlib.stress_manifest(["mount", "--port", port, "--device-count", count, "--ssh", "false",
                                      "--concurrency", concurrency, "--on-mount", "get-schema"], 900)["results"]
        server_cpu = fleetlib.cpu_seconds(proc.pid) - cpu0
    finally:
        fleetlib.stop_fleet(proc)
    return r, server_cpu


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folder")
    p.add_argument("--devices", type=int, default=1000)
    p.add_argument("--concurrency", type=int, default=100)
    args = p.parse_args()
    print("%-8s %-7s %14s %16s %22s %22s" % ("devices", "folder", "all mounted s", "schemas fetched",
                                             "server CPU ms/device", "client CPU ms/device"))
    for folder in (None, args.folder):
        r, server_cpu = mount(args.devices, args.concurrency, folder)
        print("%-8d %-7s %14.3f %16d %22.3f %22.3f" % (args.devices, "yes" if folder else "no", r["all_done_s"],
                                                      r["schemas_fetched"], server_cpu / args.devices * 1e3,
                                                      r["client_cpu_s"] / args.devices * 1e3))


if __name__ == "__main__":
    main()
