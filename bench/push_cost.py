#!/usr/bin/python3
"""What a periodic YANG-Push update costs the server (issue 31), side by side with a <get> of the same
filter on the same device: server CPU-us per push-update against CPU-us per get, and push-updates per
CPU-second (the issue's bar: at most 1.2x a get, at least 50,000 a second per core for a one-interface
counter subtree of crs-x). One worker (--threads 1), so CPU-seconds are one core's. The gets are
pipelined on one session; the subscriptions (--subs of them, spread over --devices devices, one session
each) run at --period-cs for --seconds, and a reader thread per session drains and counts them.

Run: /usr/bin/python3 bench/push_cost.py [--profile crs-x] [--subs 2000] [--period-cs 100]
"""

import argparse
import os
import re
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetlib  # noqa: E402

IF_NS = "urn:ietf:params:xml:ns:yang:ietf-interfaces"
SN = "urn:ietf:params:xml:ns:yang:ietf-subscribed-notifications"
YP = "urn:ietf:params:xml:ns:yang:ietf-yang-push"
DS = "urn:ietf:params:xml:ns:yang:ietf-datastores"
FILTERS = {
    # One interface's counters (the unit), and the whole interfaces tree (get's text path).
    "one-interface": '<interfaces xmlns="%s"><interface><name>%%s</name><statistics/></interface></interfaces>'
                     % IF_NS,
    "interfaces": '<interfaces xmlns="%s"/>' % IF_NS,
}


def first_interface(client):
    reply = client.call('<get><filter type="subtree"><interfaces xmlns="%s"><interface><name/></interface>'
                        '</interfaces></filter></get>' % IF_NS).decode()
    return re.search(r"<name>([^<]+)</name>", reply).group(1)


def get_cost(proc, client, filt, count):
    body = '<get><filter type="subtree">%s</filter></get>' % filt
    client.pipeline(lambda i: body, 50, 16, b"<data")  # warm
    before = fleetlib.cpu_seconds(proc.pid)
    client.pipeline(lambda i: body, count, 16, b"<data")
    return (fleetlib.cpu_seconds(proc.pid) - before) / count


class Drain(threading.Thread):
    """Reads a session's bytes and counts push-update notifications (the tag split across reads is kept)."""

    def __init__(self, sock):
        super().__init__(daemon=True)
        self.sock = sock
        self.count = 0
        self.bytes = 0
        self.stop = False

    def run(self):
        tail = b""
        self.sock.settimeout(0.5)
        while not self.stop:
            try:
                data = self.sock.recv(1 << 20)
            except socket.timeout:
                continue
            except OSError:
                return
            if not data:
                return
            self.bytes += len(data)
            chunk = tail + data
            self.count += chunk.count(b"<push-update ")
            tail = chunk[-16:] if b"<push-update " not in chunk[-16:] else b""


def push_cost(proc, port, devices, subs, filt, period_cs, seconds):
    clients, drains = [], []
    body = ('<establish-subscription xmlns="%s" xmlns:ds="%s"><datastore xmlns="%s">ds:operational</datastore>'
            '<datastore-subtree-filter xmlns="%s">%s</datastore-subtree-filter><periodic xmlns="%s"><period>%d'
            '</period></periodic></establish-subscription>' % (SN, DS, YP, YP, filt, YP, period_cs))
    per_device = [subs // devices + (1 if i < subs % devices else 0) for i in range(devices)]
    for d in range(devices):
        c = fleetlib.Client("127.0.0.1", port + d)
        for _ in range(per_device[d]):
            c.send(body)
            reply = c.recv()
            while reply.startswith(b"<notification"):  # earlier subscriptions' updates
                reply = c.recv()
            if b"<id " not in reply:
                raise RuntimeError(reply[:400])
        clients.append(c)
    # The replies are read; from now on only notifications come: hand the sockets to the drains.
    for c in clients:
        d = Drain(c.sock)
        d.start()
        drains.append(d)
    time.sleep(2 * period_cs / 100.0)  # let the first slots pass
    n0, cpu0, t0 = sum(d.count for d in drains), fleetlib.cpu_seconds(proc.pid), time.monotonic()
    time.sleep(seconds)
    n1, cpu1, t1 = sum(d.count for d in drains), fleetlib.cpu_seconds(proc.pid), time.monotonic()
    expected = subs * (t1 - t0) * 100.0 / period_cs
    for d in drains:
        d.stop = True
    for c in clients:
        c.sock.close()
    return (cpu1 - cpu0) / max(1, n1 - n0), (n1 - n0) / (t1 - t0), expected / (t1 - t0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="crs-x")
    ap.add_argument("--devices", type=int, default=20)
    ap.add_argument("--subs", type=int, default=2000)
    ap.add_argument("--period-cs", type=int, default=100)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--gets", type=int, default=3000)
    ap.add_argument("--filter", choices=sorted(FILTERS), default="one-interface")
    ap.add_argument("--port", type=int, default=24300)
    args = ap.parse_args()
    proc, _ = fleetlib.start_fleet(["--device-count", str(args.devices), "--starting-port", str(args.port),
                                    "--threads", "1", "--profile", args.profile])
    try:
        c = fleetlib.Client("127.0.0.1", args.port)
        filt = FILTERS[args.filter]
        if "%s" in filt:
            filt = filt % first_interface(c)
        get_s = get_cost(proc, c, filt, args.gets)
        c.sock.close()
        push_s, rate, want = push_cost(proc, args.port, args.devices, args.subs, filt, args.period_cs, args.seconds)
        print("profile %s, filter %s, %d subscriptions at %d cs on %d devices, one worker"
              % (args.profile, args.filter, args.subs, args.period_cs, args.devices))
        print("  get:          %8.1f server CPU-us each" % (get_s * 1e6))
        print("  push-update:  %8.1f server CPU-us each  (%.0f a CPU-second)" % (push_s * 1e6, 1 / push_s))
        print("  ratio push/get: %.2f" % (push_s / get_s))
        print("  updates received %.0f/s of %.0f/s due" % (rate, want))
    finally:
        fleetlib.stop_fleet(proc)


if __name__ == "__main__":
    main()
