#!/usr/bin/python3
"""Start-up time and resident memory of N devices of a recorded device type (--device-type DIR), beside
the same folder served as a plain vendor folder (--schemas-dir DIR/yang --initial-config-xml-file
DIR/running.xml), with an address per device (127.1.0.1 + i, NETCONF and SNMP on one port each). The first and last device are asked for a hello and a get
before memory is read, so every figure is of a fleet that answers.

Run: /usr/bin/python3 bench/recorded_scale.py [--count 10000] DIR [DIR...]
"""

import argparse
import os
import random
import time

import fleetlib


def addr(i):
    a = (127 << 24 | 1 << 16 | 1) + i
    return "%d.%d.%d.%d" % (a >> 24, a >> 16 & 255, a >> 8 & 255, a & 255)


def answer(host, port):
    c = fleetlib.Client(host, port)
    try:
        reply = c.call("<get/>")
    finally:
        c.close()
    if b"<data" not in reply:
        raise RuntimeError("device %s: %s" % (host, reply[:300].decode(errors="replace")))
    return c.hello


def measure(count, plan):
    port = random.randrange(10000, 60000)
    args = ["--device-count", str(count), "--starting-port", str(port), "--snmp-starting-port", str(port),
            "--ip-per-device", "--ip", addr(0)]
    t0 = time.time()
    proc, line = fleetlib.start_fleet(args + plan, timeout_s=300)
    wall = time.time() - t0
    try:
        hello = answer(addr(0), port)
        answer(addr(count - 1), port)
        rss = fleetlib.rss_kib(proc.pid)
    finally:
        fleetlib.stop_fleet(proc)
    return fleetlib.startup_seconds(line), wall, rss, hello.count("<capability>")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--count", type=int, default=10000)
    p.add_argument("dirs", nargs="+")
    args = p.parse_args()
    print("| folder | served as | devices | capabilities | start-up s | wall to ready s | RSS MiB | RSS KiB/device |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for d in args.dirs:
        plans = [("recorded type", ["--device-type", d]),
                 ("vendor folder", ["--schemas-dir", os.path.join(d, "yang"), "--initial-config-xml-file",
                                    os.path.join(d, "running.xml")])]
        for label, plan in plans:
            startup, wall, rss, caps = measure(args.count, plan)
            print("| %s | %s | %d | %d | %.3f | %.3f | %.1f | %.2f |" % (os.path.basename(d.rstrip("/")), label,
                                                                        args.count, caps, startup, wall,
                                                                        rss / 1024, rss / args.count))


if __name__ == "__main__":
    main()
