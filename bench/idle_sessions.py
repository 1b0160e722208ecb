#!/usr/bin/python3
"""CPU cost of open idle sessions: --sessions sessions (one per device),
hello done, then the server's CPU time over --seconds while nothing happens,
as a share of one core."""

import argparse
import random
import time

import fleetlib


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--sessions", type=int, default=1000)
    p.add_argument("--seconds", type=float, default=60)
    args = p.parse_args()
    port = random.randrange(10000, 32000 - args.sessions)
    proc, _ = fleetlib.start_fleet(["--device-count", str(args.sessions), "--starting-port", str(port)])
    clients = []
    try:
        for i in range(args.sessions):
            clients.append(fleetlib.Client("127.0.0.1", port + i))
        # One request per session proves every hello completed before the quiet period.
        for c in clients:
            c.send("<get-config><source><running/></source></get-config>")
        for c in clients:
            c.recv()
        time.sleep(2)
        rss = fleetlib.rss_kib(proc.pid)
        cpu0 = fleetlib.cpu_seconds(proc.pid)
        t0 = time.time()
        time.sleep(args.seconds)
        cpu = fleetlib.cpu_seconds(proc.pid) - cpu0
        wall = time.time() - t0
        print("%d idle sessions over %.0f s: %.3f CPU-s = %.3f %% of one core; RSS %.1f MiB"
              % (args.sessions, wall, cpu, 100 * cpu / wall, rss / 1024))
    finally:
        for c in clients:
            c.sock.close()
        fleetlib.stop_fleet(proc)


if __name__ == "__main__":
    main()
