#!/usr/bin/python3
"""edit-config throughput with fleetsim-stress against fleetsim (and, with
--netconfd, against yuma123's netconfd with the same client and content):
sync on one session, pipelined on one session (W=64), 4 sessions, candidate
with batches of 100. For each run: the rate, the client's CPU per edit
(from its manifest) and the server's CPU per edit (from /proc)."""

import argparse
import getpass
import json
import os
import random
import subprocess
import tempfile
import time

import fleetlib

SCENARIOS = [
    ("sync, 1 session, running", ["--candidate-datastore", "false"]),
    ("pipelined W=64, 1 session, running", ["--candidate-datastore", "false", "--async-requests", "true",
                                            "--pipeline", "64"]),
    ("sync, 4 sessions, running", ["--candidate-datastore", "false", "--thread-amount", "4"]),
    ("pipelined W=64, 4 sessions, running", ["--candidate-datastore", "false", "--async-requests", "true",
                                             "--pipeline", "64", "--thread-amount", "4"]),
    ("candidate, batches of 100, sync", ["--candidate-datastore", "true", "--edit-batch-size", "100"]),
    ("candidate, batches of 100, pipelined W=64", ["--candidate-datastore", "true", "--edit-batch-size", "100",
                                                   "--async-requests", "true", "--pipeline", "64"]),
]

NETCONFD_PREAMBLE = ('<ncx-connect xmlns="http://netconfcentral.org/ns/yuma-ncx" version="1" user="%s" '
                     'address="127.0.0.1" magic="x56o8937ab17eg922z34rwhobskdbyswfehkpsqq3i55a0an960ccw24a4ek864aOpal1t2p" '
                     'transport="ssh" port="830" />\n]]>]]>')
# netconfd's tcp-direct mode takes the connect message its ssh subsystem would send; "ssh" transport
# connections must name a port netconfd serves over ssh (830 by default), not the tcp-direct port.


def stress_binary():
    return os.path.join(fleetlib.repo_root(), "build", "fleetsim-stress")


def run_stress(args, server_pid, edits, prefix=()):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        manifest = f.name
    cpu0 = fleetlib.cpu_seconds(server_pid)
    proc = subprocess.run(list(prefix) + [stress_binary(), "edit", "--edits", str(edits), "--json", manifest] + args,
                          capture_output=True, text=True, timeout=600)
    server_cpu = fleetlib.cpu_seconds(server_pid) - cpu0
    if proc.returncode != 0:
        raise RuntimeError("fleetsim-stress failed: %s %s" % (proc.stdout, proc.stderr))
    with open(manifest) as f:
        result = json.load(f)["results"]
    os.unlink(manifest)
    return result, server_cpu


def report(name, server, r, server_cpu, edits):
    """One line: rate, server and client CPU per edit, the client's share, and its user-space part."""
    server_us = server_cpu / edits * 1e6
    client_us = r["client_cpu_us_per_edit"]
    user_us = r["client_cpu_user_s"] / edits * 1e6
    print("%-44s %-9s %10.0f %13.1f %13.2f %8.1f%% %11.2f" % (name, server, r["requests_per_second"], server_us,
                                                            client_us, 100 * client_us / server_us, user_us))


def start_netconfd(port, workdir, target):
    proc = subprocess.Popen(["netconfd", "--no-startup", "--target=%s" % target, "--tcp-direct-address=127.0.0.1",
                             "--tcp-direct-port=%d" % port, "--module=ietf-interfaces", "--module=iana-if-type",
                             "--superuser=%s" % getpass.getuser(), "--ncxserver-sockname=%s/ncxserver.sock" % workdir,
                             "--log-level=error"], cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            import socket
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("netconfd did not start")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--edits", type=int, default=20000)
    p.add_argument("--netconfd", action="store_true", help="also run against netconfd (fewer edits: --netconfd-edits)")
    p.add_argument("--netconfd-edits", type=int, default=500)
    p.add_argument("--same-cpu", action="store_true",
                   help="run the one-session scenarios with fleetsim (one worker) and the client on CPU 0, "
                        "so no request or reply has to wake a halted vCPU")
    args = p.parse_args()

    port = random.randrange(10000, 31000)
    print("%-44s %-9s %10s %13s %13s %9s %11s" % ("scenario", "server", "edits/s", "server CPU-us", "client CPU-us",
                                                "client %", "client user"))
    # A fresh device per scenario, so each starts from an empty datastore.
    proc, _ = fleetlib.start_fleet(["--device-count", str(len(SCENARIOS) * 4), "--starting-port", str(port)])
    try:
        for i, (name, extra) in enumerate(SCENARIOS):
            r, server_cpu = run_stress(extra + ["--port", str(port + 4 * i), "--device-count", "4"], proc.pid,
                                       args.edits)
            report(name, "fleetsim", r, server_cpu, args.edits)
    finally:
        fleetlib.stop_fleet(proc)

    if args.same_cpu:
        pin = ["taskset", "-c", "0"]
        one_session = [(n, e) for n, e in SCENARIOS if "--thread-amount" not in e]
        proc, _ = fleetlib.start_fleet(["--device-count", str(len(one_session)), "--starting-port", str(port),
                                        "--threads", "1"], prefix=pin)
        try:
            for i, (name, extra) in enumerate(one_session):
                r, server_cpu = run_stress(extra + ["--port", str(port + i)], proc.pid, args.edits, prefix=pin)
                report(name + " [same CPU]", "fleetsim", r, server_cpu, args.edits)
        finally:
            fleetlib.stop_fleet(proc)

    if not args.netconfd:
        return
    for i, (name, extra) in enumerate(SCENARIOS):
        workdir = tempfile.mkdtemp()
        nport = port + 100 + i
        target = "running" if "false" in extra[extra.index("--candidate-datastore") + 1:][:1] else "candidate"
        ncd = start_netconfd(nport, workdir, target)
        try:
            with open(os.path.join(workdir, "preamble"), "w") as f:
                f.write(NETCONFD_PREAMBLE % getpass.getuser())
            try:
                r, server_cpu = run_stress(extra + ["--port", str(nport), "--tcp-preamble",
                                                    os.path.join(workdir, "preamble")], ncd.pid, args.netconfd_edits)
                report(name, "netconfd", r, server_cpu, args.netconfd_edits)
            except RuntimeError as e:
                print("%-44s %-9s run failed: %s" % (name, "netconfd", str(e).strip().splitlines()[-1][:120]))
        finally:
            ncd.terminate()
            ncd.wait(timeout=30)


if __name__ == "__main__":
    main()
