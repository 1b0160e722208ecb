"""A controller mount-scale run in one command, as a user would do it.

A stand-in controller (bench/fake_controller.py: takes RESTCONF
registrations and really mounts each node over NETCONF/TCP) listens on
loopback; fleetsim starts N devices with --controller-ip pointed at it and
registers them in batches; fleetsim-stress controller-mount polls the
controller's topology until every device is connected. Reported: the
registration time (fleetsim's log), the time until all are connected and
the curve (controller-mount's manifest), and fleetsim's CPU per mounted
device. Both processes and the stand-in share this machine's cores.

Usage: /usr/bin/python3 bench/controller_scale.py --devices 5000
"""

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time

import fake_controller
import fleetlib

STRESS = os.path.join(fleetlib.repo_root(), "build", "fleetsim-stress")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--devices", type=int, default=5000)
    ap.add_argument("--batch", type=int, default=1000, help="--generate-configs-batch-size")
    ap.add_argument("--concurrency", type=int, default=200, help="the stand-in's concurrent mounts")
    ap.add_argument("--timeout", type=int, default=300)
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="fleetsim-controller-scale-")
    http_port = random.randrange(21000, 21900)
    controller = fake_controller.Controller(http_port, concurrency=args.concurrency)
    fleet_port = random.randrange(22000, 30000 - args.devices) if args.devices < 8000 else 17830
    proc, _ = fleetlib.start_fleet(["--device-count", str(args.devices), "--ip-per-device", "--ip", "127.8.0.1",
                                    "--starting-port", str(fleet_port), "--snmp", "false",
                                    "--controller-ip", "127.0.0.1", "--controller-port", str(http_port),
                                    "--generate-configs-batch-size", str(args.batch),
                                    "--status-interval", "0"])
    log = []
    drain = threading.Thread(target=lambda: [log.append(line) for line in proc.stderr], daemon=True)
    drain.start()
    cpu0 = fleetlib.cpu_seconds(proc.pid)
    manifest = os.path.join(work, "mount.json")
    csv_path = os.path.join(work, "mount.csv")
    cmd = [STRESS, "controller-mount", "--url", "http://127.0.0.1:%d/restconf" % http_port,
           "--device-count", str(args.devices), "--interval", "0.5", "--timeout", str(args.timeout),
           "--json", manifest, "--csv", csv_path]
    started = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout + 60)
    wall = time.monotonic() - started
    cpu = fleetlib.cpu_seconds(proc.pid) - cpu0
    fleetlib.stop_fleet(proc)
    controller.stop()
    drain.join(5)
    if p.returncode != 0:
        sys.exit("controller-mount exited with %d:\n%s%s" % (p.returncode, p.stdout, p.stderr))
    with open(manifest) as f:
        results = json.load(f)["results"]
    registered = [line.strip() for line in log if re.search(r"regist", line)]
    print("command: %s" % " ".join(sys.argv))
    print("devices %d, batch %d, stand-in concurrency %d" % (args.devices, args.batch, args.concurrency))
    print("fleetsim registration: %s" % (registered[-1] if registered else "(no summary line)"))
    print("controller-mount: exit %d, all connected after %s s (run %.1f s), polls %s" % (
        p.returncode, results.get("time_to_all_connected_s"), wall, results.get("polls")))
    print("fleetsim CPU over the run: %.2f s, %.0f us per mounted device" % (cpu, cpu * 1e6 / args.devices))
    print(p.stdout)


if __name__ == "__main__":
    main()
