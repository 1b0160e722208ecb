#!/usr/bin/python3
"""Do periodic YANG-Push updates hold their slots at fleet scale (issue 31)? --devices devices, one
session and one periodic subscription each (the one-interface counter subtree of --profile, period
--period-cs, all anchored at the same instant so every slot is a burst of --devices updates), read by one
selector loop for --seconds. Prints, per update, the lateness of its arrival after its eventTime (the
slot: server lateness plus the client's own reading, so an upper bound of the server's) and the server's own
lateness (logged by each worker at exit), whether each
eventTime is exactly anchor + k x period, the updates received against the slots due, and the server's
CPU and RSS.

Run: /usr/bin/python3 bench/push_slots.py [--devices 10000] [--period-cs 100] [--seconds 30]
"""

import argparse
import ipaddress
import calendar
import os
import re
import resource
import selectors
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetlib  # noqa: E402

IF_NS = "urn:ietf:params:xml:ns:yang:ietf-interfaces"
SN = "urn:ietf:params:xml:ns:yang:ietf-subscribed-notifications"
YP = "urn:ietf:params:xml:ns:yang:ietf-yang-push"
DS = "urn:ietf:params:xml:ns:yang:ietf-datastores"
EVENT = re.compile(rb"<eventTime>(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.(\d{3})Z</eventTime><push-update")


def iso_ms(ms):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + ".%03dZ" % (ms % 1000)


def pct(sorted_values, p):
    return sorted_values[min(len(sorted_values) - 1, int(p / 100.0 * len(sorted_values)))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="crs-x")
    ap.add_argument("--devices", type=int, default=10000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--period-cs", type=int, default=100)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--port", type=int, default=12000)
    ap.add_argument("--anchor", choices=("spread", "common"), default="spread",
                    help="spread: each subscription anchored at its establish instant (no anchor-time); common: "
                         "all at one anchor-time, every slot a burst of --devices updates")
    args = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    # An address per device: one listening socket per worker, so 10,000 devices and their sessions fit.
    first = ipaddress.ip_address("127.1.0.1")
    proc, _ = fleetlib.start_fleet(["--device-count", str(args.devices), "--starting-port", str(args.port),
                                    "--ip", str(first), "--ip-per-device", "--snmp", "false",
                                    "--threads", str(args.threads), "--profile", args.profile])
    try:
        c0 = fleetlib.Client(str(first), args.port)
        name = re.search(rb"<name>([^<]+)</name>", c0.call(
            '<get><filter type="subtree"><interfaces xmlns="%s"><interface><name/></interface></interfaces>'
            '</filter></get>' % IF_NS)).group(1).decode()
        c0.sock.close()
        period_ms = args.period_cs * 10
        # Anchored in the past: slots are anchor + k x period for every k, whenever each one was made.
        anchor = (int(time.time()) - 60) * 1000
        body = ('<establish-subscription xmlns="%s" xmlns:ds="%s"><datastore xmlns="%s">ds:operational'
                '</datastore><datastore-subtree-filter xmlns="%s"><interfaces xmlns="%s"><interface><name>%s'
                '</name><statistics/></interface></interfaces></datastore-subtree-filter><periodic xmlns="%s">'
                '<period>%d</period>%s</periodic></establish-subscription>'
                % (SN, DS, YP, YP, IF_NS, name, YP, args.period_cs,
                   "<anchor-time>%s</anchor-time>" % iso_ms(anchor) if args.anchor == "common" else ""))
        sel = selectors.DefaultSelector()
        clients = []
        t_setup = time.monotonic()
        for d in range(args.devices):
            c = fleetlib.Client(str(first + d), args.port)
            c.send(body)
            clients.append(c)
        for c in clients:
            reply = c.recv()
            while reply.startswith(b"<notification"):
                reply = c.recv()
            if b"<id " not in reply:
                raise RuntimeError(reply[:300])
            c.sock.setblocking(False)
            c.phase = None  # eventTime modulo the period, from the first update
            sel.register(c.sock, selectors.EVENT_READ, c)
        setup_s = time.monotonic() - t_setup
        cpu0, rss0 = fleetlib.cpu_seconds(proc.pid), fleetlib.rss_kib(proc.pid)
        late, off_slot, received = [], 0, 0
        start_ms = time.time() * 1000
        end = time.monotonic() + args.seconds
        while time.monotonic() < end:
            for key, _ in sel.select(timeout=0.2):
                try:
                    data = key.fileobj.recv(1 << 16)
                except BlockingIOError:
                    continue
                now_ms = time.time() * 1000
                c = key.data
                buf = c.buf + data
                for m in EVENT.finditer(buf):
                    ev = calendar.timegm(time.strptime(m.group(1).decode(), "%Y-%m-%dT%H:%M:%S")) * 1000 + int(
                        m.group(2))
                    if ev >= start_ms:
                        late.append(now_ms - ev)
                        received += 1
                    if c.phase is None:
                        c.phase = ev % period_ms
                    elif ev % period_ms != c.phase or (args.anchor == "common" and (ev - anchor) % period_ms):
                        off_slot += 1
                c.buf = buf[-200:]
        stop_ms = time.time() * 1000
        cpu1, rss1 = fleetlib.cpu_seconds(proc.pid), fleetlib.rss_kib(proc.pid)
        slots = (stop_ms - start_ms) / period_ms  # each subscription's slots in the window, whatever its phase
        late.sort()
        print("%d devices, one subscription each, period %d cs, anchors %s, %s, %d worker(s), %.0f s (set-up %.1f s)"
              % (args.devices, args.period_cs, args.anchor, args.profile, args.threads, args.seconds, setup_s))
        print("  updates received %d of about %.0f due (%.1f slots x %d)" % (received, slots * args.devices, slots,
                                                                              args.devices))
        print("  eventTime off its slot: %d" % off_slot)
        if late:
            print("  arrival after eventTime ms: p50 %.1f  p99 %.1f  max %.1f" % (pct(late, 50), pct(late, 99),
                                                                                   late[-1]))
        print("  server CPU %.2f s = %.1f %% of a core; RSS %.1f MiB (%.1f before the run)"
              % (cpu1 - cpu0, 100 * (cpu1 - cpu0) / args.seconds, rss1 / 1024, rss0 / 1024))
    finally:
        fleetlib.stop_fleet(proc)
    # The server's own lateness per worker, logged at exit (without the client's reading).
    for line in proc.stderr.read().splitlines():
        if "periodic push-updates" in line:
            print("  server: " + line.split("]: ", 1)[-1].strip())


if __name__ == "__main__":
    main()
