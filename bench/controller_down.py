#!/usr/bin/python3
"""Registration with a controller that is down: fleetsim --controller-ip pointing at a loopback port where
nothing listens, batch size 1 (OpenDaylight's default), for each --counts fleet size. Reports how long
until the registration gave up (its last line), how many log lines it wrote about the controller, and the
fleet's CPU over that time. The fleet must keep serving: a NETCONF hello is read from its first device at
the end."""

import argparse
import random
import socket
import time

import fleetlib


def closed_port():
    """A loopback port with nothing listening (bound and closed again)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--counts", default="3,5000")
    p.add_argument("--time-out", type=int, default=20, help="fleetsim's --time-out (s); -1: leave it out")
    p.add_argument("--binary", help="another fleetsim (an older build, side by side); default build/fleetsim")
    args = p.parse_args()
    print("%-8s %-10s %14s %16s %14s" % ("devices", "--time-out", "gave up after s", "controller lines",
                                         "fleet CPU s"))
    for count in [int(c) for c in args.counts.split(",")]:
        port = random.randrange(10000, 30000)
        proc, _ = fleetlib.start_fleet(["--device-count", str(count), "--starting-port", str(port), "--snmp",
                                        "false", "--controller-ip", "127.0.0.1", "--controller-port",
                                        str(closed_port()), "--status-interval", "0"]
                                       + (["--time-out", str(args.time_out)] if args.time_out >= 0 else []),
                                       binary=args.binary)
        started = time.monotonic()
        lines = []
        try:
            while True:
                line = proc.stderr.readline()
                if not line:
                    raise RuntimeError("fleetsim ended: %s" % "".join(lines[-3:]))
                if "controller" in line:
                    lines.append(line)
                if "--time-out" in line and "reached" in line or "controller: registered" in line:
                    break
            took = time.monotonic() - started
            cpu = fleetlib.cpu_seconds(proc.pid)
            with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                assert b"<hello" in s.recv(65536), "the fleet stopped serving"
        finally:
            fleetlib.stop_fleet(proc)
        print("%-8d %-10d %14.2f %16d %14.2f" % (count, args.time_out, took, len(lines), cpu))


if __name__ == "__main__":
    main()
