#!/usr/bin/python3
"""NETCONF over SSH against TCP, one fleet each, the same client (fleetsim-stress):
  - mount storms: --counts devices (address per device), hello only: sessions (handshakes) per second,
    client and server CPU per session;
  - held sessions: after the mount, the sessions stay open for --hold seconds: the server's CPU while
    they idle (share of one core) and its RSS per session;
  - edit throughput on one session, sync and pipelined, SSH against TCP.
Each row is one run; the machine has 2 cores shared by client and server."""

import argparse
import random
import shutil
import tempfile

import fleetlib

FIRST = "127.7.0.1"
SSH_CLIENT = ["--ssh", "true", "--username", "admin", "--password", "admin"]


def start(count, port, ssh, state):
    args = ["--device-count", str(count), "--ip-per-device", "--ip", FIRST, "--starting-port", str(port),
            "--snmp", "false"]
    if ssh:
        args += ["--ssh", "true", "--state-dir", state]
    proc, _ = fleetlib.start_fleet(args)
    return proc


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--counts", default="1000,10000")
    p.add_argument("--concurrency", type=int, default=200)
    p.add_argument("--hold", type=int, default=12, help="seconds the mounted sessions stay open")
    p.add_argument("--edits", type=int, default=20000)
    args = p.parse_args()
    state = tempfile.mkdtemp(prefix="fleetsim-ssh-bench-")
    try:
        print("| transport | devices | all mounted s | sessions/s | client CPU-us/session | server CPU-us/session "
              "| server CPU idle (share of a core) | server RSS KiB/session |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for count in [int(c) for c in args.counts.split(",")]:
            for ssh in (False, True):
                port = random.randrange(10000, 32000)
                proc = start(count, port, ssh, state)
                try:
                    base_rss = fleetlib.rss_kib(proc.pid)
                    r, server_cpu, idle, rss = fleetlib.stress_mount_held(
                        FIRST, port, count, SSH_CLIENT if ssh else [], args.concurrency, args.hold, proc)
                finally:
                    fleetlib.stop_fleet(proc)
                secs = count / r["sessions_per_second"]
                print("| %s | %d | %.2f | %.0f | %.1f | %.1f | %s | %s |" % (
                    "SSH" if ssh else "TCP", count, secs, r["sessions_per_second"],
                    r["client_cpu_s"] / count * 1e6, server_cpu / count * 1e6,
                    "%.2f %%" % (idle * 100) if idle is not None else "-",
                    "%.1f" % ((rss - base_rss) / count) if rss else "-"))
        print()
        print("| transport | edits/s sync, 1 session | edits/s pipelined W=64, 1 session |")
        print("| --- | --- | --- |")
        for ssh in (False, True):
            port = random.randrange(10000, 32000)
            proc = start(2, port, ssh, state)
            try:
                client = SSH_CLIENT if ssh else []
                sync = fleetlib.stress_edit_rate(FIRST, port, client, [], args.edits)
                piped = fleetlib.stress_edit_rate(FIRST, port, client, ["--async-requests", "true", "--pipeline",
                                                                        "64"], args.edits)
            finally:
                fleetlib.stop_fleet(proc)
            print("| %s | %.0f | %.0f |" % ("SSH" if ssh else "TCP", sync, piped))
    finally:
        shutil.rmtree(state, True)


if __name__ == "__main__":
    main()
