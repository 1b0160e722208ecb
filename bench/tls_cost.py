#!/usr/bin/python3
"""NETCONF over TLS against SSH and TCP (issue 19), one fleet per transport, the same client
(fleetsim-stress), loopback only:
  - mount of --devices devices (an address each, 127.9.x.x, hello only): time until all are mounted, and
    the server's CPU per session, which over TLS and SSH is mostly the handshake;
  - the sessions held --hold seconds: fleetsim's RSS per session (RSS while held minus RSS before the
    mount, divided by the devices);
  - edit-config per second on one session, sync and pipelined (W=64), over each transport.
The fleet runs `fleetsim --transport tls|ssh|tcp`; over TLS the client uses a certificate from
`fleetsim --issue-client-cert` and the fleet's CA (STATE/tls/ca.pem). Each row is one run; the machine
has 2 cores shared by client and server.

Run: bench/tls_cost.py [--devices 10000] [--transports tls,ssh,tcp] [--hold 8] [--edits 20000]"""

import argparse
import os
import random
import shutil
import subprocess
import tempfile

import fleetlib

FIRST = "127.9.0.1"
FLEETSIM = os.path.join(fleetlib.repo_root(), "build", "fleetsim")


def client_args(transport, state):
    """fleetsim-stress's options for @transport against a fleet whose state folder is @state."""
    if transport == "tls":
        prefix = os.path.join(state, "bench-client")
        if not os.path.exists(prefix + ".pem"):
            subprocess.run([FLEETSIM, "--issue-client-cert", "bench", "--out", prefix, "--state-dir", state],
                           check=True, capture_output=True, timeout=60)
        return ["--tls", "true", "--tls-cert", prefix + ".pem", "--tls-key", prefix + ".key", "--tls-ca",
                os.path.join(state, "tls", "ca.pem")]
    if transport == "ssh":
        return ["--ssh", "true", "--username", "admin", "--password", "admin"]
    return ["--ssh", "false"]


def start(count, port, transport, state):
    proc, _ = fleetlib.start_fleet(["--device-count", str(count), "--ip-per-device", "--ip", FIRST,
                                    "--starting-port", str(port), "--snmp", "false", "--transport", transport,
                                    "--state-dir", state], timeout_s=120)
    return proc


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--devices", type=int, default=10000)
    p.add_argument("--transports", default="tls,ssh,tcp")
    p.add_argument("--concurrency", type=int, default=200)
    p.add_argument("--hold", type=int, default=8, help="seconds the mounted sessions stay open (6 or more)")
    p.add_argument("--edits", type=int, default=20000)
    args = p.parse_args()
    transports = args.transports.split(",")
    state = tempfile.mkdtemp(prefix="fleetsim-tls-cost-")
    mounts, edits = [], []
    try:
        for transport in transports:
            port = random.randrange(10000, 32000)
            proc = start(args.devices, port, transport, state)
            try:
                client = client_args(transport, state)  # after the start: the fleet has made its CA
                base_rss = fleetlib.rss_kib(proc.pid)
                r, server_cpu, _, rss = fleetlib.stress_mount_held(FIRST, port, args.devices, client,
                                                                   args.concurrency, args.hold, proc)
                mounts.append((transport, args.devices / r["sessions_per_second"], r["sessions_per_second"],
                               server_cpu / args.devices * 1e6, r["client_cpu_s"] / args.devices * 1e6,
                               (rss - base_rss) / args.devices if rss else None))
            finally:
                fleetlib.stop_fleet(proc)
            port = random.randrange(10000, 32000)
            proc = start(2, port, transport, state)
            try:
                sync = fleetlib.stress_edit_rate(FIRST, port, client, [], args.edits)
                piped = fleetlib.stress_edit_rate(FIRST, port, client, ["--async-requests", "true", "--pipeline",
                                                                        "64"], args.edits)
                edits.append((transport, sync, piped))
            finally:
                fleetlib.stop_fleet(proc)
    finally:
        shutil.rmtree(state, True)
    print("| transport | devices | all mounted s | sessions/s | server CPU-us/session (handshake) "
          "| client CPU-us/session | fleetsim RSS KiB/session |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for t, secs, rate, server_us, client_us, rss in mounts:
        print("| %s | %d | %.2f | %.0f | %.1f | %.1f | %s |" % (t.upper(), args.devices, secs, rate, server_us,
                                                             client_us, "%.1f" % rss if rss else "-"))
    print()
    tcp = dict((t, (s, pp)) for t, s, pp in edits).get("tcp")
    print("| transport | edits/s sync, 1 session | edits/s pipelined W=64, 1 session | pipelined vs TCP |")
    print("| --- | --- | --- | --- |")
    for t, sync, piped in edits:
        print("| %s | %.0f | %.0f | %s |" % (t.upper(), sync, piped, "%.0f %%" % (piped / tcp[1] * 100)
                                              if tcp else "-"))


if __name__ == "__main__":
    main()
