#!/usr/bin/python3
"""The cost of per-device host keys by --host-key-type (ed25519, ecdsa, rsa).

1. Derivation: `fleetsim --emit-inventory F --inventory-format odl-callhome` derives every device's key
   (and nothing else that costs); its CPU time (getrusage of the child) and wall time for --devices N,
   less a 1-device run (start-up), give the CPU per key. Run on all processors and pinned to one
   (taskset -c 0), since the inventory derives its keys on every processor.
2. First connection: a fleet of --connect devices; paramiko's key exchange (no login) with each device
   twice. The first makes the device's key (bind_for, on its first use), the second reuses it; the
   difference is the derivation as a client sees it.

Run: /usr/bin/python3 bench/host_keys.py [--devices 200] [--connect 20] [--types ed25519,ecdsa,rsa]
"""

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time

import paramiko

import fleetlib


def emit(binary, state, key_type, devices, prefix=()):
    """(wall s, CPU s) of writing the odl-callhome inventory of @devices devices."""
    inv = os.path.join(state, "inv.json")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    subprocess.run(list(prefix) + [binary, "--device-count", str(devices), "--ssh", "true", "--state-dir", state,
                                   "--host-key-per-device", "--host-key-type", key_type, "--emit-inventory", inv,
                                   "--inventory-format", "odl-callhome", "--log-level", "warn"],
                   check=True, timeout=3600)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def kex_seconds(addr):
    """Seconds from TCP connect to a finished key exchange with paramiko (host key received)."""
    t0 = time.monotonic()
    t = paramiko.Transport(addr)
    try:
        t.start_client(timeout=60)
        t.get_remote_server_key()
        return time.monotonic() - t0
    finally:
        t.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", type=int, default=200)
    ap.add_argument("--connect", type=int, default=20)
    ap.add_argument("--types", default="ed25519,ecdsa,rsa")
    ap.add_argument("--port", type=int, default=24100)
    args = ap.parse_args()
    binary = os.path.join(fleetlib.repo_root(), "build", "fleetsim")
    state = tempfile.mkdtemp(prefix="fleetsim-bench-hk-")
    try:
        print("| type | %d keys wall s (all CPUs) | wall s (1 CPU) | CPU s | CPU ms per key |"
              " first kex ms (median, max) | later kex ms (median) |" % args.devices)
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for key_type in args.types.split(","):
            _, cpu1 = emit(binary, state, key_type, 1)
            wall, cpu = emit(binary, state, key_type, args.devices)
            wall_one, _ = emit(binary, state, key_type, args.devices, prefix=("taskset", "-c", "0"))
            per_key_ms = (cpu - cpu1) / max(1, args.devices - 1) * 1000
            proc, _ = fleetlib.start_fleet(["--device-count", str(args.connect), "--starting-port", str(args.port),
                                            "--ssh", "true", "--snmp", "false", "--state-dir", state,
                                            "--host-key-per-device", "--host-key-type", key_type])
            try:
                first = [kex_seconds(("127.0.0.1", args.port + i)) * 1000 for i in range(args.connect)]
                later = [kex_seconds(("127.0.0.1", args.port + i)) * 1000 for i in range(args.connect)]
            finally:
                fleetlib.stop_fleet(proc)
            print("| %s | %.2f | %.2f | %.2f | %.1f | %.1f, %.1f | %.1f |" % (
                key_type, wall, wall_one, cpu, per_key_ms, statistics.median(first), max(first),
                statistics.median(later)))
    finally:
        shutil.rmtree(state, True)


if __name__ == "__main__":
    main()
