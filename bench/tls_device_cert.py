#!/usr/bin/python3
"""What per-device TLS server certificates cost (--tls-cert-per-device, implied by --ip-per-device):
one fleet of --devices devices (an address each, 127.9.x.x) mounted twice by fleetsim-stress (hello only).
The first mount makes every device's certificate (key derived from the fleet's secret, signed by the CA);
the second finds them kept. The server's CPU per session of each, and fleetsim's RSS after each, give the
certificate's CPU and memory cost. For reference, a fleet presenting one certificate (--tls-cert, the
state folder's) is mounted the same way. Loopback only; the machine's 2 cores run client and server.

Run: bench/tls_device_cert.py [--devices 2000] [--rounds 3]"""

import argparse
import os
import random
import shutil
import statistics
import subprocess
import tempfile

import fleetlib

FIRST = "127.9.0.1"
FLEETSIM = os.path.join(fleetlib.repo_root(), "build", "fleetsim")


def mount(proc, port, count, client):
    _, cpu, _, _ = fleetlib.stress_mount_held(FIRST, port, count, client, 100, 0, proc)  # raises on failure
    return cpu / count * 1e6, fleetlib.rss_kib(proc.pid)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--devices", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    state = tempfile.mkdtemp(prefix="fleetsim-tls-devcert-")
    rows = {"first": [], "kept": [], "shared": [], "kib": []}
    try:
        prefix = os.path.join(state, "bench-client")
        subprocess.run([FLEETSIM, "--issue-client-cert", "bench", "--out", prefix, "--state-dir", state],
                       check=True, capture_output=True, timeout=60)
        client = ["--tls", "true", "--tls-cert", prefix + ".pem", "--tls-key", prefix + ".key", "--tls-ca",
                  os.path.join(state, "tls", "ca.pem")]
        base = ["--device-count", str(args.devices), "--ip-per-device", "--ip", FIRST, "--snmp", "false",
                "--transport", "tls", "--state-dir", state]
        for _ in range(args.rounds):
            port = random.randrange(10000, 32000)
            proc, _ = fleetlib.start_fleet(base + ["--starting-port", str(port)], timeout_s=120)
            try:
                rss0 = fleetlib.rss_kib(proc.pid)
                first, rss1 = mount(proc, port, args.devices, client)
                kept, _ = mount(proc, port, args.devices, client)
            finally:
                fleetlib.stop_fleet(proc)
            rows["first"].append(first)
            rows["kept"].append(kept)
            rows["kib"].append((rss1 - rss0) / args.devices)
            port = random.randrange(10000, 32000)
            proc, _ = fleetlib.start_fleet(base + ["--starting-port", str(port), "--tls-cert",
                                                   os.path.join(state, "tls", "server.pem"), "--tls-key",
                                                   os.path.join(state, "tls", "server.key")], timeout_s=120)
            try:
                rows["shared"].append(mount(proc, port, args.devices, client)[0])
            finally:
                fleetlib.stop_fleet(proc)
    finally:
        shutil.rmtree(state, True)
    med = {k: statistics.median(v) for k, v in rows.items()}
    print("| mount | server CPU-us/session, median of %d | vs one shared certificate |" % args.rounds)
    print("| --- | --- | --- |")
    for k, what in (("shared", "one certificate (--tls-cert)"), ("first", "own certificates, made"),
                    ("kept", "own certificates, kept")):
        print("| %s | %.0f | %.2f |" % (what, med[k], med[k] / med["shared"]))
    print()
    print("certificate made: %.0f us of server CPU (first - kept), RSS growth of the first mount %.1f KiB "
          "per device (session buffers released, certificate and key kept)" % (med["first"] - med["kept"],
                                                                                 med["kib"]))


if __name__ == "__main__":
    main()
