#!/usr/bin/python3
"""YANG-Push on-change latency (issue 31): from an edit-config's rpc-reply, as its editor reads it, to the
push-change-update that edit causes, as a subscriber on another session of the same device reads it, at
dampening-period 0. One editor, one subscriber (on-change on running, subtree filter /interfaces), one
edit at a time (the next once the previous one's update arrived), both sessions read by this process so
one clock times both. Also the server's CPU time per edit with and without the subscriber.

Negative latencies are possible: the server queues the update while it handles the edit, and both go
out in one flush; whichever socket this process reads first is seen first."""

import argparse
import queue
import random
import threading
import time

import fleetlib

SN_NS = "urn:ietf:params:xml:ns:yang:ietf-subscribed-notifications"
YP_NS = "urn:ietf:params:xml:ns:yang:ietf-yang-push"


def establish_on_change():
    return ('<establish-subscription xmlns="%s" xmlns:yp="%s">'
            '<yp:datastore xmlns:ds="urn:ietf:params:xml:ns:yang:ietf-datastores">ds:running</yp:datastore>'
            '<yp:datastore-subtree-filter><interfaces xmlns="%s"/></yp:datastore-subtree-filter>'
            '<yp:on-change><yp:dampening-period>0</yp:dampening-period></yp:on-change>'
            '</establish-subscription>' % (SN_NS, YP_NS, fleetlib.IF_NS))


def description_edit(i):
    return fleetlib.edit_body("<interface><name>bench0</name><description>d%d</description></interface>" % i)


def percentile(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100.0 * (len(s) - 1))))]


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--edits", type=int, default=5000)
    p.add_argument("--port", type=int, default=random.randrange(10000, 32000))
    args = p.parse_args()

    proc, _ = fleetlib.start_fleet(["--device-count", "2", "--threads", "1", "--starting-port", str(args.port)])
    try:
        # Device 1 without a subscriber: the CPU time of the same edits, for the ratio.
        plain = fleetlib.Client("127.0.0.1", args.port + 1)
        plain.call(fleetlib.edit_body(fleetlib.interface_xml("bench0")))
        cpu0 = fleetlib.cpu_seconds(proc.pid)
        for i in range(args.edits):
            plain.call(description_edit(i))
        cpu_plain = (fleetlib.cpu_seconds(proc.pid) - cpu0) / args.edits * 1e6

        editor = fleetlib.Client("127.0.0.1", args.port)
        editor.call(fleetlib.edit_body(fleetlib.interface_xml("bench0")))
        sub = fleetlib.Client("127.0.0.1", args.port)
        reply = sub.call(establish_on_change())
        if b"<id" not in reply:
            raise RuntimeError(reply[:500])
        arrivals = queue.Queue()

        def read_updates():
            while True:
                try:
                    msg = sub.recv()
                except (RuntimeError, OSError):
                    return
                if b"push-change-update" in msg:
                    arrivals.put((time.perf_counter(), msg))

        threading.Thread(target=read_updates, daemon=True).start()
        lat_ms = []
        cpu0 = fleetlib.cpu_seconds(proc.pid)
        for i in range(args.edits):
            reply = editor.call(description_edit(i))
            t_reply = time.perf_counter()
            if b"<ok/>" not in reply:
                raise RuntimeError(reply[:500])
            t_push, msg = arrivals.get(timeout=10)
            if b">d%d<" % i not in msg:
                raise RuntimeError("update %d does not carry its edit: %r" % (i, msg[:500]))
            lat_ms.append((t_push - t_reply) * 1e3)
        cpu_sub = (fleetlib.cpu_seconds(proc.pid) - cpu0) / args.edits * 1e6
        print("on-change at dampening 0, %d edits of one leaf, one editor and one subscriber (TCP, loopback):"
              % args.edits)
        print("  rpc-reply -> push-change-update: p50 %.3f ms  p99 %.3f ms  max %.3f ms"
              % (percentile(lat_ms, 50), percentile(lat_ms, 99), max(lat_ms)))
        print("  server CPU per edit: %.1f us without a subscriber, %.1f us with one (ratio %.2f)"
              % (cpu_plain, cpu_sub, cpu_sub / cpu_plain))
    finally:
        fleetlib.stop_fleet(proc)


if __name__ == "__main__":
    main()
