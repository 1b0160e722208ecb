#!/usr/bin/python3
"""Syslog from a fleet (issue 29): messages per CPU-second, side by side with syslog-ng's loggen, and the
accuracy of the paced rate.

  --throughput  fleetsim (--devices devices at --per-device lines/s each, one worker) and loggen (one
                connection, as fast as it goes) for --seconds each, over UDP into a socket that never reads
                and over TCP into a reader that counts and discards; the same message size (the bench
                catalog's lines, measured, given to loggen's --size). Messages per CPU-second of each
                sender: fleetsim's sent (its /metrics ledger) over its user + system time from /proc across
                the window; loggen's count over its own rusage.
  --accuracy    --acc-devices devices at 1/s each (default 1,000), counted by a UDP reader for
                --acc-seconds (default 20) once every device is running: count against devices x seconds.
With neither, both run. --throughput also runs build/bench_udp_floor at the same size: the kernel's
own CPU per loopback datagram (sendmmsg, nothing else), the floor no UDP generator goes below, and so the
highest ratio to loggen any generator could reach.

loggen is syslog-ng's generator (Debian's syslog-ng-core, which conflicts with rsyslog): it is not
installed but unpacked from `apt-get download syslog-ng-core` with `dpkg-deb -x` into --loggen-root
(default /tmp/fleetsim-loggen; done here when missing). Every process started here is stopped here.
"""

import argparse
import glob
import json
import os
import re
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetlib  # noqa: E402

# One template, so every line is about the same size (the host name and sequence digits vary by a few bytes).
CATALOG = {
    "app-name": "bench",
    "messages": [{"id": "line", "facility": "local7", "severity": "notice", "msgid": "BENCH",
                  "text": "%BENCH-5-LINE : a line of constant text so that the whole message is about two "
                          "hundred bytes long, interface {if}"}],
}


class UdpSink:
    """A bound UDP socket: never read (count=False), or read and counted by a thread (count=True)."""

    def __init__(self, count=False):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.count = 0
        self.bytes = 0
        self.counting = False
        self.stop = False
        if count:
            self.sock.settimeout(0.2)
            threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        while not self.stop:
            try:
                d = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:  # closed
                return
            if self.counting:
                self.count += 1
                self.bytes += len(d)

    def close(self):
        self.stop = True
        self.sock.close()


class TcpSink:
    """A listening socket whose connections are read and thrown away, bytes counted."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.bytes = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._drain, args=(c,), daemon=True).start()

    def _drain(self, c):
        with c:
            while True:
                d = c.recv(1 << 20)
                if not d:
                    return
                self.bytes += len(d)

    def close(self):
        self.sock.close()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def metric(port, state):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
        text = r.read().decode()
    m = re.search(r'fleetsim_push_messages_total\{channel="syslog",state="%s"\} (\d+)' % state, text)
    return int(m.group(1))


def fleet(sink_url, devices, per_device, catalog, threads=1):
    mport = free_port()
    port = free_port()
    proc, _ = fleetlib.start_fleet(
        ["--device-count", str(devices), "--ip", "127.0.0.1", "--ip-per-device", "--starting-port", str(port),
         "--snmp", "false", "--threads", str(threads), "--syslog-sink", sink_url, "--syslog-rate", str(per_device),
         "--syslog-catalog", catalog, "--metrics", "127.0.0.1:%d" % mport,
         "--status-interval", "0"])
    return proc, mport


def fleet_rate(sink_url, devices, per_device, catalog, seconds):
    """(messages per CPU-second, messages per second, dropped) of the fleet over a window of @seconds."""
    proc, mport = fleet(sink_url, devices, per_device, catalog)
    try:
        time.sleep(2)  # every device's phase has started
        s0, d0, c0, t0 = metric(mport, "sent"), metric(mport, "dropped"), fleetlib.cpu_seconds(proc.pid), time.monotonic()
        time.sleep(seconds)
        s1, d1, c1, t1 = metric(mport, "sent"), metric(mport, "dropped"), fleetlib.cpu_seconds(proc.pid), time.monotonic()
    finally:
        fleetlib.stop_fleet(proc)
    return (s1 - s0) / max(c1 - c0, 1e-9), (s1 - s0) / (t1 - t0), d1 - d0


def loggen_path(root):
    binary = os.path.join(root, "usr", "bin", "loggen")
    if not os.path.exists(binary):
        os.makedirs(root, exist_ok=True)
        subprocess.run(["apt-get", "download", "syslog-ng-core"], cwd=root, check=True, capture_output=True)
        deb = sorted(glob.glob(os.path.join(root, "syslog-ng-core_*.deb")))[-1]
        subprocess.run(["dpkg-deb", "-x", deb, root], check=True)
    return binary


def loggen_rate(root, stream, port, size, seconds):
    """(messages per CPU-second, messages per second) of loggen, one connection, unthrottled."""
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(root, "usr", "lib", "syslog-ng"),
               SYSLOGNG_PREFIX=os.path.join(root, "usr"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run = subprocess.run([loggen_path(root), "-i", "-S" if stream else "-D", "-s", str(size), "-r", "100000000",
                          "-I", str(seconds), "127.0.0.1", str(port)], capture_output=True, text=True, env=env,
                         timeout=seconds + 60)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    m = re.search(r"average rate = ([0-9.]+) msg/sec, count=(\d+), time=([0-9.]+)", run.stderr + run.stdout)
    if not m:
        raise RuntimeError("loggen: %s %s" % (run.stdout, run.stderr))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return int(m.group(2)) / max(cpu, 1e-9), float(m.group(1))


def message_size(catalog):
    """Average datagram size of the bench catalog's lines from a small fleet."""
    sink = UdpSink(count=True)
    sink.counting = True
    proc, _ = fleet("udp://127.0.0.1:%d" % sink.port, 100, 20, catalog)
    time.sleep(2)
    fleetlib.stop_fleet(proc)
    sink.close()
    return round(sink.bytes / max(sink.count, 1))


def throughput(args, catalog):
    size = message_size(catalog)
    print("message size: %d bytes (fleetsim's average; loggen --size %d)" % (size, size))
    rows = []
    for proto in ("udp", "tcp"):
        sink = UdpSink() if proto == "udp" else TcpSink()
        f_cpu, f_rate, f_drop = fleet_rate("%s://127.0.0.1:%d" % (proto, sink.port), args.devices, args.per_device,
                                           catalog, args.seconds)
        l_cpu, l_rate = loggen_rate(args.loggen_root, proto == "tcp", sink.port, size, args.seconds)
        sink.close()
        rows.append((proto, f_cpu, f_rate, f_drop, l_cpu, l_rate))
    print("| transport | fleetsim msg/CPU-s | fleetsim msg/s (dropped) | loggen msg/CPU-s | loggen msg/s | ratio |")
    print("|---|---|---|---|---|---|")
    for proto, f_cpu, f_rate, f_drop, l_cpu, l_rate in rows:
        print("| %s | %.0f | %.0f (%d) | %.0f | %.0f | %.2fx |" % (proto, f_cpu, f_rate, f_drop, l_cpu, l_rate,
                                                                 f_cpu / l_cpu))
    floor = os.path.join(args.build, "bench_udp_floor")
    if os.path.exists(floor):
        out = subprocess.run([floor, str(size)], capture_output=True, text=True, check=True).stdout
        print(out.rstrip())
        udp_loggen = [r[4] for r in rows if r[0] == "udp"][0]
        for line in out.splitlines()[1:]:
            us = float(line.split()[-1])
            print("  %s: at most %.0f msg/CPU-s, %.2fx loggen's UDP" % (line.strip().rsplit(" ", 1)[0].strip(),
                                                                       1e6 / us, 1e6 / us / udp_loggen))


def accuracy(args, catalog):
    sink = UdpSink(count=True)
    proc, mport = fleet("udp://127.0.0.1:%d" % sink.port, args.acc_devices, 1, catalog, threads=2)
    try:
        time.sleep(3)  # every device's phase (spread over the first second) has started
        sink.counting = True
        time.sleep(args.acc_seconds)
        sink.counting = False
        dropped = metric(mport, "dropped")
    finally:
        fleetlib.stop_fleet(proc)
        sink.close()
    want = args.acc_devices * args.acc_seconds
    print("accuracy: %d devices at 1/s for %d s: counted %d, want %d (%+.3f %%), dropped %d" %
          (args.acc_devices, args.acc_seconds, sink.count, want, 100.0 * (sink.count - want) / want, dropped))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--throughput", action="store_true")
    p.add_argument("--accuracy", action="store_true")
    p.add_argument("--devices", type=int, default=1000)
    p.add_argument("--per-device", type=float, default=200)
    p.add_argument("--seconds", type=int, default=5)
    p.add_argument("--acc-devices", type=int, default=1000)
    p.add_argument("--acc-seconds", type=int, default=20)
    p.add_argument("--loggen-root", default="/tmp/fleetsim-loggen")
    p.add_argument("--build", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build"))
    args = p.parse_args()
    both = not args.throughput and not args.accuracy
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(CATALOG, f)
        catalog = f.name
    try:
        if args.throughput or both:
            throughput(args, catalog)
        if args.accuracy or both:
            accuracy(args, catalog)
    finally:
        os.unlink(catalog)


if __name__ == "__main__":
    main()
