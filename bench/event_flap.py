#!/usr/bin/python3
"""A flap on a whole fleet at once, on every channel (issue 29 item 2): --devices devices (an address per
device, 127.0.x.y, one port, plain TCP), every device subscribed to NETCONF notifications by this script
(one session each), one trap sink and one UDP syslog sink, both sockets of this script. Then one
POST /api/v1/devices/0-(N-1)/flap {"interface": IF, "for": --hold} takes IF down on every device and,
--hold later, up again. Each transition is one event per device: a linkDown (linkUp) trap, an
if-state-change notification and a link-down (link-up) syslog line, all with the event's id.

Reported per wave and channel: messages received, and the time from the POST (the down wave) or from the
POST plus --hold (the up wave) to the last one; a receiver that got fewer than N says so. Then the fleet's
own counts from /metrics: traps sent/failed/dropped, notifications sent/dropped, the syslog ledger. The
event ids are checked: a device's trap, notification and syslog line of one transition carry the same id.

The receivers run in this one process (one selectors loop: UDP sockets with 4 MiB buffers, the NETCONF
sessions), so what is measured is the fleet's output as a Python reader sees it: an upper bound.
"""

import argparse
import json
import random
import re
import selectors
import socket
import threading
import time
import urllib.request

import fleetlib

EOM = b"]]>]]>"
HELLO = (b'<?xml version="1.0" encoding="UTF-8"?><hello xmlns="urn:ietf:params:xml:ns:netconf:base:1.0">'
         b"<capabilities><capability>urn:ietf:params:netconf:base:1.0</capability></capabilities></hello>" + EOM)
SUBSCRIBE = (b'<rpc message-id="1" xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><create-subscription '
             b'xmlns="urn:ietf:params:xml:ns:netconf:notification:1.0"/></rpc>' + EOM)
# BER of the OIDs (tag, length, contents): fleetsimEventId.0 = 1.3.6.1.4.1.32473.1.1.0, linkDown, linkUp.
TRAP_EVENT_OID = bytes([0x06, 0x0B, 0x2B, 6, 1, 4, 1, 0x81, 0xFD, 0x59, 1, 1, 0])
LINK_DOWN = bytes([0x06, 0x09, 0x2B, 6, 1, 6, 3, 1, 1, 5, 3])
LINK_UP = bytes([0x06, 0x09, 0x2B, 6, 1, 6, 3, 1, 1, 5, 4])
SYSLOG_EVENT = re.compile(rb'eventId="(\d+)"')
NOTE_EVENT = re.compile(rb"<event-id[^>]*>(\d+)</event-id>")
NOTE_OPER = re.compile(rb"<oper-status>(\w+)</oper-status>")
SO_RCVBUFFORCE = 33  # Linux, socket(7)


def udp_rcvbuf_errors():
    """The kernel's UDP RcvbufErrors (/proc/net/snmp): datagrams a full receive buffer dropped, any socket."""
    with open("/proc/net/snmp") as f:
        rows = [line.split() for line in f if line.startswith("Udp:")]
    return int(rows[1][rows[0].index("RcvbufErrors")])


def post(base, path, body):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


def metrics(base, names):
    with urllib.request.urlopen(base + "/metrics", timeout=60) as r:
        text = r.read().decode()
    return [line for line in text.splitlines() if any(line.startswith(n) for n in names)]


def trap_event(data):
    """(down 1 / up 0, event id) of one trap datagram: the snmpTrapOID value and fleetsimEventId.0's string."""
    down = LINK_DOWN in data
    at = data.find(TRAP_EVENT_OID)
    if at < 0 or (not down and LINK_UP not in data):
        return None
    v = at + len(TRAP_EVENT_OID)
    if data[v] != 0x04:  # an OCTET STRING: the id in decimal
        return None
    return (1 if down else 0), int(data[v + 2:v + 2 + data[v + 1]])


class Receivers:
    def __init__(self):
        self.sel = selectors.DefaultSelector()
        self.trap = self._udp()
        self.syslog = self._udp()
        self.got = {"trap": [], "netconf": [], "syslog": []}  # (monotonic time, down 1 / up 0, event id)
        self.sessions = {}  # socket -> [state, buffer]
        self.subscribed = 0

    def _udp(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:  # past rmem_max when allowed (CAP_NET_ADMIN): a 10,000-trap burst is ~20 MiB of loopback skbs
            s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 64 << 20)
        except OSError:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 20)
        s.bind(("127.0.0.1", 0))
        s.setblocking(False)
        self.sel.register(s, selectors.EVENT_READ, "udp")
        return s

    def connect(self, addr):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.connect_ex(addr)
        self.sessions[s] = ["hello", b""]
        self.sel.register(s, selectors.EVENT_READ, "nc")

    def _udp_read(self, s, now):
        while True:
            try:
                data = s.recv(65536)
            except BlockingIOError:
                return
            if s is self.trap:
                ev = trap_event(data)
                if ev:
                    self.got["trap"].append((now, ev[0], ev[1]))
            else:
                m = SYSLOG_EVENT.search(data)
                if m:
                    self.got["syslog"].append((now, 1 if b"link down" in data else 0, int(m.group(1))))

    def _nc_read(self, s, now):
        st = self.sessions[s]
        try:
            data = s.recv(1 << 16)
        except (BlockingIOError, ConnectionError):
            return
        if not data:
            self.sel.unregister(s)
            s.close()
            return
        st[1] += data
        while EOM in st[1]:
            msg, _, st[1] = st[1].partition(EOM)
            if st[0] == "hello":
                s.sendall(HELLO + SUBSCRIBE)
                st[0] = "reply"
            elif st[0] == "reply":
                if b"<ok/>" not in msg:
                    raise RuntimeError("create-subscription refused: %r" % msg[:300])
                st[0] = "sub"
                self.subscribed += 1
            else:
                ev, oper = NOTE_EVENT.search(msg), NOTE_OPER.search(msg)
                if ev and oper:
                    self.got["netconf"].append((now, 1 if oper.group(1) == b"down" else 0, int(ev.group(1))))

    def poll(self, timeout=0.05):
        for key, _ in self.sel.select(timeout):
            now = time.monotonic()
            if key.data == "udp":
                self._udp_read(key.fileobj, now)
            else:
                self._nc_read(key.fileobj, now)

    def run_until(self, done, limit_s):
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline and not done():
            self.poll()


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--devices", type=int, default=10000)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--ip", default="127.0.100.1")
    p.add_argument("--hold", type=float, default=5.0, help="seconds between the down and the up")
    p.add_argument("--concurrency", type=int, default=500, help="NETCONF sessions being set up at once")
    args = p.parse_args()
    n = args.devices

    rx = Receivers()
    port = random.randrange(20000, 30000)
    mport = random.randrange(30000, 32000)
    base = "http://127.0.0.1:%d" % mport
    fleet_args = ["--device-count", str(n), "--ip-per-device", "--ip", args.ip, "--starting-port", str(port),
                  "--snmp-starting-port", str(port), "--threads", str(args.threads), "--metrics",
                  "127.0.0.1:%d" % mport, "--trap-sink", "127.0.0.1:%d" % rx.trap.getsockname()[1],
                  "--syslog-sink", "udp://127.0.0.1:%d" % rx.syslog.getsockname()[1]]
    proc, line = fleetlib.start_fleet(fleet_args, timeout_s=120)
    try:
        print("fleetsim %s" % " ".join(fleet_args))
        print(line)
        first = int.from_bytes(socket.inet_aton(args.ip), "big")
        addrs = [(socket.inet_ntoa((first + i).to_bytes(4, "big")), port) for i in range(n)]
        t_sub = time.monotonic()
        for i in range(n):
            while len(rx.sessions) - rx.subscribed >= args.concurrency:
                rx.poll()
            rx.connect(addrs[i])
        rx.run_until(lambda: rx.subscribed == n, 120)
        print("%d of %d devices subscribed in %.1f s" % (rx.subscribed, n, time.monotonic() - t_sub))
        cpu0 = fleetlib.cpu_seconds(proc.pid)
        rcvbuf0 = udp_rcvbuf_errors()
        answer = {}

        def send():  # in a thread: the receivers keep reading while the POST is answered
            answer["body"] = post(base, "/api/v1/devices/0-%d/flap" % (n - 1), {"for": "%dms" % int(args.hold * 1000)})
            answer["t"] = time.monotonic()

        t0 = time.monotonic()
        th = threading.Thread(target=send)
        th.start()
        want = 2 * n
        rx.run_until(lambda: all(len(v) >= want for v in rx.got.values()), args.hold + 30)
        rx.run_until(lambda: False, 1.0)  # anything late or doubled
        th.join()
        cpu = fleetlib.cpu_seconds(proc.pid) - cpu0
        if answer["body"].get("devices") != n or answer["body"].get("failed"):
            raise RuntimeError("flap answered %s" % answer["body"])
        print("POST answered in %.1f ms; UDP receive-buffer drops on this host meanwhile: %d"
              % ((answer["t"] - t0) * 1000, udp_rcvbuf_errors() - rcvbuf0))
        print("%-8s %-5s %8s %12s %12s" % ("channel", "wave", "received", "first ms", "last ms"))
        ok = True
        for ch in ("trap", "netconf", "syslog"):
            for wave, start in ((1, t0), (0, t0 + args.hold)):
                ts = [t for t, d, _ in rx.got[ch] if d == wave]
                ok &= len(ts) == n and ts and max(ts) - start < 1.0
                print("%-8s %-5s %8d %12.1f %12.1f" % (ch, "down" if wave else "up", len(ts),
                                                       (min(ts) - start) * 1000 if ts else -1,
                                                       (max(ts) - start) * 1000 if ts else -1))
        # One id per transition: the three channels' sets of (wave, id) are the same.
        ids = {ch: {(d, e) for _, d, e in rx.got[ch]} for ch in rx.got}
        same = ids["trap"] == ids["netconf"] == ids["syslog"] and len(ids["trap"]) == 2 * n
        print("event ids: %d distinct per channel, identical across channels: %s" % (len(ids["trap"]), same))
        print("fleet CPU over the flap (both waves): %.3f s (%.1f us per device-transition)"
              % (cpu, cpu / (2 * n) * 1e6))
        for m in metrics(base, ("fleetsim_traps_total", "fleetsim_notifications_total",
                                "fleetsim_push_messages_total")):
            print("  " + m)
        print("RESULT: %s" % ("all three channels within 1 s per wave, none lost" if ok and same else "FAILED"))
    finally:
        fleetlib.stop_fleet(proc)


if __name__ == "__main__":
    main()
