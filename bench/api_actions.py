#!/usr/bin/python3
"""How fast the control API's actions take effect on a large fleet: --devices devices (an address per
device, 127.0.x.y, all on one port), then POST down {"mode": "refuse"} on all of them, up, and reboot
{"for": "0s"}. For each, a sample of --sample devices spread over the fleet is probed continuously with
plain TCP connects from the moment the request is sent; a device's time is the end of its first probe
that sees the new state (refused: an RST at or right after connect; up: the server's hello arrives).
Reported: the POST's own answer time, the sample's median / p99 / max, and fleetsim's CPU time (utime +
stime from /proc) over the action. The reboot is run a second time without probes, waiting on
GET /api/v1/fleet, so its CPU time is the reboot's alone (the probes' sessions cost CPU too)."""

import argparse
import errno
import json
import random
import selectors
import socket
import threading
import time
import urllib.request

import fleetlib


def post(base, path, body):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


def get(base, path):
    with urllib.request.urlopen(base + path, timeout=60) as r:
        return json.loads(r.read())


class Prober:
    """Continuous non-blocking connects to each address until it shows the wanted state."""

    def __init__(self, addrs, want, probe_timeout_s=1.0):
        self.addrs = addrs
        self.want = want  # "refused" or "ok"
        self.timeout = probe_timeout_s
        self.sel = selectors.DefaultSelector()
        self.done = {}  # index in addrs -> monotonic time the wanted state was seen
        self.probes = 0
        self.not_before = 0.0  # a wanted outcome counts only from a probe started at or after this
        self.refused_seen = set()  # indices seen refused at least once (a reboot's down phase)

    def _start(self, i):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        self.probes += 1
        started = time.monotonic()
        rc = s.connect_ex(self.addrs[i])
        if rc not in (0, errno.EINPROGRESS):
            s.close()
            self._outcome(i, started, "refused")
            return
        self.sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE, [i, started, False])

    def _outcome(self, i, started, what):
        if what == "refused":
            self.refused_seen.add(i)
        if what == self.want and started >= self.not_before:
            self.done[i] = time.monotonic()
        else:
            self._start(i)

    def _finish(self, s, data, what):
        self.sel.unregister(s)
        s.close()
        self._outcome(data[0], data[1], what)

    def run(self, limit_s):
        for i in range(len(self.addrs)):
            self._start(i)
        deadline = time.monotonic() + limit_s
        while len(self.done) < len(self.addrs) and time.monotonic() < deadline:
            for key, ev in self.sel.select(0.05):
                s, data = key.fileobj, key.data
                if not data[2]:
                    err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                    if err:
                        self._finish(s, data, "refused")
                        continue
                    data[2] = True
                    self.sel.modify(s, selectors.EVENT_READ, data)
                    if not ev & selectors.EVENT_READ:
                        continue
                try:
                    got = s.recv(4)
                except ConnectionResetError:
                    got = b""
                except BlockingIOError:
                    continue
                self._finish(s, data, "ok" if got else "refused")
            now = time.monotonic()
            for key in list(self.sel.get_map().values()):
                if now - key.data[1] > self.timeout:
                    self._finish(key.fileobj, key.data, "timeout")
        for key in list(self.sel.get_map().values()):
            self.sel.unregister(key.fileobj)
            key.fileobj.close()
        self.sel.close()


def pct(sorted_ms, q):
    return sorted_ms[min(len(sorted_ms) - 1, int(q * len(sorted_ms)))]


def measure(pid, base, count, addrs, action, body, want, limit_s):
    """POST the action on every device while probing addrs; return a dict of times (ms) and CPU (s)."""
    prober = Prober(addrs, want)
    if action == "reboot":
        # The device is up before the reboot too: only probes started once every worker has rebooted its
        # devices (the POST answers then) count, so the time is an upper bound of "listening again".
        prober.not_before = float("inf")
    answer = {}
    cpu0 = fleetlib.cpu_seconds(pid)
    t0 = time.monotonic()

    def send():
        answer["body"] = post(base, "/api/v1/devices/0-%d/%s" % (count - 1, action), body)
        answer["t"] = time.monotonic()
        prober.not_before = answer["t"]

    th = threading.Thread(target=send)
    th.start()
    prober.run(limit_s)
    th.join()
    cpu1 = fleetlib.cpu_seconds(pid)
    if answer["body"]["devices"] != count or answer["body"]["failed"]:
        raise RuntimeError("%s answered %s" % (action, answer["body"]))
    ms = sorted((t - t0) * 1000 for t in prober.done.values())
    return {"action": action, "answer_ms": (answer["t"] - t0) * 1000, "seen": len(ms), "sample": len(addrs),
            "median_ms": pct(ms, 0.5) if ms else None, "p99_ms": pct(ms, 0.99) if ms else None,
            "max_ms": ms[-1] if ms else None, "cpu_s": cpu1 - cpu0, "probes": prober.probes,
            "refused_seen": len(prober.refused_seen)}


def reboot_cpu_alone(pid, base, count, limit_s):
    cpu0 = fleetlib.cpu_seconds(pid)
    t0 = time.monotonic()
    post(base, "/api/v1/devices/0-%d/reboot" % (count - 1), {"for": "0s"})
    t_answer = time.monotonic()
    deadline = t0 + limit_s
    while time.monotonic() < deadline:
        states = get(base, "/api/v1/fleet")["states"]
        if states["up"] == count:
            break
        time.sleep(0.01)
    t_up = time.monotonic()
    time.sleep(0.5)  # coldStart traps and timers settle
    return (t_answer - t0) * 1000, (t_up - t0) * 1000, fleetlib.cpu_seconds(pid) - cpu0


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--devices", type=int, default=10000)
    p.add_argument("--sample", type=int, default=500)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--ip", default="127.0.100.1")
    p.add_argument("--limit", type=float, default=30.0, help="seconds to wait for each action")
    args = p.parse_args()

    port = random.randrange(20000, 30000)
    mport = random.randrange(30000, 32000)
    base = "http://127.0.0.1:%d" % mport
    fleet_args = ["--device-count", str(args.devices), "--ip-per-device", "--ip", args.ip, "--starting-port",
                  str(port), "--snmp-starting-port", str(port), "--threads", str(args.threads), "--metrics",
                  "127.0.0.1:%d" % mport]
    proc, line = fleetlib.start_fleet(fleet_args, timeout_s=120)
    try:
        print("fleetsim %s" % " ".join(fleet_args))
        print(line)
        n = args.devices
        s = min(args.sample, n)
        idx = sorted({round(k * (n - 1) / max(1, s - 1)) for k in range(s)})
        a0 = socket.inet_aton(args.ip)
        base_ip = int.from_bytes(a0, "big")
        addrs = [(socket.inet_ntoa((base_ip + i).to_bytes(4, "big")), port) for i in idx]
        dev = get(base, "/api/v1/devices/%d" % idx[-1])
        print("device %d: %s" % (idx[-1], {k: dev.get(k) for k in ("address", "netconf_port", "state")}))
        rows = [measure(proc.pid, base, n, addrs, "down", {"mode": "refuse"}, "refused", args.limit),
                measure(proc.pid, base, n, addrs, "up", {}, "ok", args.limit),
                measure(proc.pid, base, n, addrs, "reboot", {"for": "0s"}, "ok", args.limit)]
        print("%-7s %10s %8s %10s %10s %10s %8s %8s %8s" % ("action", "answer ms", "seen", "median ms",
                                                             "p99 ms", "max ms", "CPU s", "probes", "refused"))
        for r in rows:
            print("%-7s %10.1f %4d/%-3d %10.1f %10.1f %10.1f %8.3f %8d %8d" % (
                r["action"], r["answer_ms"], r["seen"], r["sample"], r["median_ms"] or -1, r["p99_ms"] or -1,
                r["max_ms"] or -1, r["cpu_s"], r["probes"], r["refused_seen"]))
        answer, up, cpu = reboot_cpu_alone(proc.pid, base, n, args.limit)
        print("reboot without probes: answer %.1f ms, all %d up (GET /api/v1/fleet) %.1f ms, CPU %.3f s "
              "(%.1f us/device)" % (answer, n, up, cpu, cpu / n * 1e6))
    finally:
        fleetlib.stop_fleet(proc)


if __name__ == "__main__":
    main()
