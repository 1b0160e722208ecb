#!/usr/bin/python3
"""Start-up time (as fleetsim reports it, from exec to every device
listening) and resident memory before any session opens, for fleets of
--counts devices, with a port per device and with an address per device."""

import argparse
import random
import time

import fleetlib


def measure(count, ip_per_device, port):
    args = ["--device-count", str(count), "--starting-port", str(port)]
    if ip_per_device:
        args += ["--ip-per-device", "--ip", "127.1.0.1"]
    t0 = time.time()
    proc, line = fleetlib.start_fleet(args)
    wall = time.time() - t0
    try:
        time.sleep(0.5)
        rss = fleetlib.rss_kib(proc.pid)
    finally:
        fleetlib.stop_fleet(proc)
    return fleetlib.startup_seconds(line), wall, rss


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--counts", default="1000,10000")
    args = p.parse_args()
    print("%-8s %-18s %12s %14s %10s %16s" % ("devices", "mode", "start-up s", "wall to ready", "RSS MiB",
                                             "RSS KiB/device"))
    for count in [int(c) for c in args.counts.split(",")]:
        for ip_mode in (False, True):
            port = random.randrange(10000, 32000 - count) if not ip_mode else random.randrange(10000, 32000)
            startup, wall, rss = measure(count, ip_mode, port)
            print("%-8d %-18s %12.3f %14.3f %10.1f %16.2f" % (count, "address per device" if ip_mode else
                                                               "port per device", startup, wall, rss / 1024,
                                                               rss / count))


if __name__ == "__main__":
    main()
