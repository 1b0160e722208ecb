#!/usr/bin/python3
"""Traps from a fleet (issue 29 item 3): traps per CPU-second in SNMPv1, v2c and v3 (authPriv, SHA-256 and
AES-128), side by side in one run.

Each version: --devices devices (--ip-per-device, one worker, no agents) at --per-device traps/s each
from a one-trap catalog (IF-MIB linkDown with ifIndex, ifAdminStatus, ifOperStatus and ifName), into a
UDP socket that is bound and never read, for --seconds once every device's phase has started. Traps
per CPU-second: the fleet's sent (its /metrics trap ledger) over its user + system time from /proc
across the window. The size of one message of each version is measured by a second socket that reads
a single trap first. Every process started here is stopped here.
"""

import argparse
import json
import os
import re
import socket
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetlib  # noqa: E402

CATALOG = {"traps": [{"id": "link-down", "oid": "1.3.6.1.6.3.1.1.5.3", "objects": [
    {"oid": "1.3.6.1.2.1.2.2.1.1.{ifindex}", "type": "integer", "value": "{ifindex}"},
    {"oid": "1.3.6.1.2.1.2.2.1.7.{ifindex}", "type": "integer", "value": 1},
    {"oid": "1.3.6.1.2.1.2.2.1.8.{ifindex}", "type": "integer", "value": 2},
    {"oid": "1.3.6.1.2.1.31.1.1.1.1.{ifindex}", "type": "string", "value": "{if}"}]}]}
VERSIONS = [("1", []), ("2c", []),
            ("3 authPriv", ["--trap-v3-user", "bench:sha256:bench-auth-pass:aes:bench-priv-pass"])]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def metric(port, state):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
        text = r.read().decode()
    m = re.search(r'fleetsim_push_messages_total\{channel="trap",state="%s"\} (\d+)' % state, text)
    return int(m.group(1))


def message_size(version, extra, catalog):
    """Bytes of one trap of @version (a fleet of one device at 5/s, one datagram read)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        s.settimeout(5)
        proc, _ = fleetlib.start_fleet(
            ["--device-count", "1", "--ip", "127.0.0.1", "--starting-port", str(free_port()), "--snmp", "false",
             "--trap-sink", "127.0.0.1:%d" % s.getsockname()[1], "--trap-version", version.split()[0],
             "--trap-rate", "5", "--trap-catalog", catalog, "--status-interval", "0"] + extra)
        try:
            return len(s.recv(65535))
        finally:
            fleetlib.stop_fleet(proc)


def fleet_rate(version, extra, args, catalog):
    """(traps per CPU-second, traps per second, dropped + send_failures) of one version's window."""
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sink.bind(("127.0.0.1", 0))
    mport = free_port()
    proc, _ = fleetlib.start_fleet(
        ["--device-count", str(args.devices), "--ip", "127.0.0.1", "--ip-per-device", "--starting-port",
         str(free_port()), "--snmp", "false", "--threads", "1", "--trap-sink", "127.0.0.1:%d" % sink.getsockname()[1],
         "--trap-version", version.split()[0], "--trap-rate", str(args.per_device), "--trap-catalog", catalog,
         "--metrics", "127.0.0.1:%d" % mport, "--status-interval", "0"] + extra)
    try:
        time.sleep(2)  # every device's phase has started
        lost0 = metric(mport, "dropped") + metric(mport, "send_failures")
        s0, c0, t0 = metric(mport, "sent"), fleetlib.cpu_seconds(proc.pid), time.monotonic()
        time.sleep(args.seconds)
        s1, c1, t1 = metric(mport, "sent"), fleetlib.cpu_seconds(proc.pid), time.monotonic()
        lost1 = metric(mport, "dropped") + metric(mport, "send_failures")
    finally:
        fleetlib.stop_fleet(proc)
        sink.close()
    return (s1 - s0) / max(c1 - c0, 1e-9), (s1 - s0) / (t1 - t0), lost1 - lost0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--devices", type=int, default=1000)
    p.add_argument("--per-device", type=float, default=100)
    p.add_argument("--seconds", type=int, default=5)
    args = p.parse_args()
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(CATALOG, f)
        catalog = f.name
    try:
        rows = []
        for version, extra in VERSIONS:
            size = message_size(version, extra, catalog)
            rows.append((version, size) + fleet_rate(version, extra, args, catalog))
    finally:
        os.unlink(catalog)
    base = rows[1][2]
    print("| version | bytes | traps/CPU-s | traps/s (lost) | vs v2c |")
    print("|---|---|---|---|---|")
    for version, size, per_cpu, per_s, lost in rows:
        print("| %s | %d | %.0f | %.0f (%d) | %.2fx |" % (version, size, per_cpu, per_s, lost, per_cpu / base))


if __name__ == "__main__":
    main()
