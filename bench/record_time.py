#!/usr/bin/python3
"""Time and client CPU of fleetsim-stress record against one fleetsim device of a schemas folder.

Usage: bench/record_time.py [SCHEMAS_DIR (default /tmp/openconfig)] [RUNS (default 5)]
Starts `fleetsim --schemas-dir DIR` with one device (plain TCP), records it RUNS times into temporary
folders and prints wall time, client CPU and what was recorded, the median of the runs."""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetlib  # noqa: E402


def main():
    schemas = sys.argv[1] if len(sys.argv) > 1 else "/tmp/openconfig"
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    stress = os.path.join(fleetlib.repo_root(), "build", "fleetsim-stress")
    port = 24830
    proc, _ = fleetlib.start_fleet(["--device-count", "1", "--starting-port", str(port), "--ssh", "false",
                                 "--snmp-starting-port", str(port), "--schemas-dir", schemas])
    walls, cpus, last = [], [], None
    try:
        for _ in range(runs):
            out = tempfile.mkdtemp(prefix="record-bench-")
            try:
                r = subprocess.run([stress, "record", "--port", str(port), "--ssh", "false", "--out", out],
                                   capture_output=True, text=True, timeout=600)
                if r.returncode:
                    raise SystemExit("record failed: %s %s" % (r.stdout, r.stderr))
                with open(os.path.join(out, "manifest.json")) as f:
                    last = json.load(f)
                walls.append(last["duration_s"])
                cpus.append(float(re.search(r"client CPU: ([0-9.]+) s", r.stdout).group(1)))
            finally:
                shutil.rmtree(out, ignore_errors=True)
    finally:
        fleetlib.stop_fleet(proc)
    c = last["counts"]
    print("schemas folder %s: %d files" % (schemas, len([n for n in os.listdir(schemas) if n.endswith(".yang")])))
    print("recorded: %d capabilities, %d modules + %d submodules fetched, running %d bytes, state %d bytes, "
          "%d problems" % (c["capabilities"], c["modules"], c["submodules"], c["running_bytes"],
                           c["state_bytes"], len(last["problems"])))
    print("record time s: median %.3f (min %.3f, max %.3f) over %d runs" % (statistics.median(walls), min(walls),
                                                                           max(walls), runs))
    print("client CPU s: median %.3f (min %.3f, max %.3f)" % (statistics.median(cpus), min(cpus), max(cpus)))


if __name__ == "__main__":
    main()
