#!/usr/bin/python3
"""Server CPU time per edit-config that creates one list entry, on an empty
datastore and on one already holding --prefill entries; and the time of a
get-config of --get-entries entries. Requests are pipelined (--window in
flight) on one TCP session; the server's CPU time comes from /proc."""

import argparse
import random
import time

import fleetlib


def prefill(client, count, batch=2000):
    for start in range(0, count, batch):
        names = "".join(fleetlib.interface_xml("pre%d" % i) for i in range(start, min(count, start + batch)))
        reply = client.call(fleetlib.edit_body(names))
        if b"<ok/>" not in reply:
            raise RuntimeError(reply[:500])


def timed_edits(client, pid, count, window, tag):
    cpu0 = fleetlib.cpu_seconds(pid)
    wall0 = time.time()
    client.pipeline(lambda i: fleetlib.edit_body(fleetlib.interface_xml("%s%d" % (tag, i))), count, window,
                    b"<ok/>")
    return (fleetlib.cpu_seconds(pid) - cpu0) / count * 1e6, count / (time.time() - wall0)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--edits", type=int, default=10000)
    p.add_argument("--prefill", type=int, default=100000)
    p.add_argument("--get-entries", type=int, default=10000)
    p.add_argument("--window", type=int, default=64)
    p.add_argument("--port", type=int, default=random.randrange(10000, 32000))
    args = p.parse_args()

    proc, _ = fleetlib.start_fleet(["--device-count", "3", "--threads", "1", "--starting-port", str(args.port)])
    try:
        empty = fleetlib.Client("127.0.0.1", args.port)
        cpu_empty, rate_empty = timed_edits(empty, proc.pid, args.edits, args.window, "a")
        full = fleetlib.Client("127.0.0.1", args.port + 1)
        prefill(full, args.prefill)
        cpu_full, rate_full = timed_edits(full, proc.pid, args.edits, args.window, "b")
        print("edit-config creating one entry, %d edits, window %d, one TCP session:" % (args.edits, args.window))
        print("  empty datastore:         %7.1f server CPU-us per edit  (%.0f edits/s wall)" % (cpu_empty, rate_empty))
        print("  holding %6d entries:   %7.1f server CPU-us per edit  (%.0f edits/s wall)"
              % (args.prefill, cpu_full, rate_full))
        print("  ratio full/empty:        %7.2f" % (cpu_full / cpu_empty))

        getter = fleetlib.Client("127.0.0.1", args.port + 2)
        prefill(getter, args.get_entries)
        body = "<get-config><source><running/></source></get-config>"
        cpu0 = fleetlib.cpu_seconds(proc.pid)
        t0 = time.time()
        runs = 5
        for _ in range(runs):
            reply = getter.call(body)
        wall = (time.time() - t0) / runs
        cpu = (fleetlib.cpu_seconds(proc.pid) - cpu0) / runs
        entries = reply.count(b"<interface>")
        print("get-config of %d entries: %.1f ms wall per call (client included), %.1f ms server CPU, %d bytes"
              % (entries, wall * 1e3, cpu * 1e3, len(reply)))
        for c in (empty, full, getter):
            c.close()
    finally:
        fleetlib.stop_fleet(proc)


if __name__ == "__main__":
    main()
