#!/usr/bin/python3
"""A controller's first mount of a vendor-type fleet: fleetsim --schemas-dir FOLDER with --devices devices
(TCP, port per device), then fleetsim-stress mount --on-mount get-schema, which opens a session to every
device and fetches every module the hello advertises, --concurrency at a time. Reports the time until all
were mounted, the schemas fetched, and the server's and the client's CPU per device; the same fleet
without the folder for comparison. With --beside N, the vendor type again as one group of a fleet file
beside N crs-x devices (another address range on the same port), each group mounted with its schemas.

FOLDER: see bench/vendor_yang.py for how to make a flat copy of OpenConfig's public models (outside the
repository).
"""

import argparse
import json
import os
import random
import tempfile

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


def mount_beside(count, concurrency, folder, beside):
    """The vendor type as one group of a fleet file, beside @beside crs-x devices (a second group, another
    address range on the same port): every vendor device mounted with its schemas, then every crs-x device.
    Returns (vendor results, crs-x results, server CPU of the vendor mount, RSS after both in KiB)."""
    port = random.randrange(10000, 30000)
    common = {"ip-per-device": True, "starting-port": port, "snmp": False, "ssh": False}
    doc = {"fleetsim-fleet:fleet": {"group": [
        dict(common, name="core", **{"device-count": beside, "profile": "crs-x", "ip": "127.0.1.1"}),
        dict(common, name="vendor", **{"device-count": count, "schemas-dir": os.path.abspath(folder),
                                        "ip": "127.0.64.1"})]}}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(doc, f)
        path = f.name
    try:
        proc, _ = fleetlib.start_fleet(["--fleet", path, "--status-interval", "0", "--snmp", "false"])
        try:
            cpu0 = fleetlib.cpu_seconds(proc.pid)
            vendor = fleetlib.stress_manifest(["mount", "--ip", "127.0.64.1", "--ip-per-device", "--port", port,
                                               "--device-count", count, "--ssh", "false", "--concurrency",
                                               concurrency, "--on-mount", "get-schema"], 900)["results"]
            server_cpu = fleetlib.cpu_seconds(proc.pid) - cpu0
            core = fleetlib.stress_manifest(["mount", "--ip", "127.0.1.1", "--ip-per-device", "--port", port,
                                             "--device-count", beside, "--ssh", "false", "--concurrency",
                                             concurrency, "--on-mount", "get-schema"], 900)["results"]
            rss = fleetlib.rss_kib(proc.pid)
        finally:
            fleetlib.stop_fleet(proc)
    finally:
        os.unlink(path)
    return vendor, core, server_cpu, rss


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folder")
    p.add_argument("--devices", type=int, default=1000)
    p.add_argument("--concurrency", type=int, default=100)
    p.add_argument("--beside", type=int, default=0,
                   help="also run the vendor type as a group beside this many crs-x devices (a fleet file)")
    args = p.parse_args()
    print("%-8s %-7s %14s %16s %22s %22s" % ("devices", "folder", "all mounted s", "schemas fetched",
                                             "server CPU ms/device", "client CPU ms/device"))
    for folder in (None, args.folder):
        r, server_cpu = mount(args.devices, args.concurrency, folder)
        print("%-8d %-7s %14.3f %16d %22.3f %22.3f" % (args.devices, "yes" if folder else "no", r["all_done_s"],
                                                      r["schemas_fetched"], server_cpu / args.devices * 1e3,
                                                      r["client_cpu_s"] / args.devices * 1e3))
    if args.beside:
        vendor, core, server_cpu, rss = mount_beside(args.devices, args.concurrency, args.folder, args.beside)
        print("\nfleet file: %d vendor devices beside %d crs-x devices, one process, one port" %
              (args.devices, args.beside))
        print("%-8s %8s %14s %16s %22s" % ("group", "devices", "all mounted s", "schemas fetched",
                                          "server CPU ms/device"))
        print("%-8s %8d %14.3f %16d %22.3f" % ("vendor", args.devices, vendor["all_done_s"],
                                              vendor["schemas_fetched"], server_cpu / args.devices * 1e3))
        print("%-8s %8d %14.3f %16d %22s" % ("crs-x", args.beside, core["all_done_s"], core["schemas_fetched"],
                                            "-"))
        print("RSS after both mounts: %.1f MiB" % (rss / 1024.0))


if __name__ == "__main__":
    main()
