#!/usr/bin/python3
"""Loading a vendor's YANG folder: fleetsim --schemas-dir FOLDER for each --counts fleet size, and the same
fleet without the folder. Reports the schema summary line's load time, the start-up time fleetsim prints
(exec to the last listen, schemas included) and RSS once every device listens.

Example (OpenConfig's public models, flat; keep the copy out of the repo):
  git clone https://github.com/openconfig/public /tmp/ocpub && mkdir /tmp/openconfig &&
  find /tmp/ocpub/release/models -name '*.yang' -exec cp {} /tmp/openconfig/ \\; &&
  cp /tmp/ocpub/third_party/ietf/*.yang /tmp/openconfig/ && bench/vendor_yang.py /tmp/openconfig
"""

import argparse
import os
import random
import re
import subprocess
import time

import fleetlib


def run(binary, count, folder):
    port = random.randrange(10000, 30000)
    args = [binary, "--device-count", str(count), "--starting-port", str(port), "--snmp", "false",
            "--ssh", "false", "--status-interval", "0"]
    if folder:
        args += ["--schemas-dir", folder]
    proc = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
    summary, ready = "", ""
    deadline = time.time() + 120
    try:
        while time.time() < deadline:
            line = proc.stderr.readline()
            if not line:
                raise RuntimeError("fleetsim exited with %s" % proc.wait())
            if "schemas:" in line and "modules and" in line:
                summary = line.strip()
            if "devices listening on" in line:
                ready = line.strip()
                break
        rss = fleetlib.rss_kib(proc.pid)
    finally:
        fleetlib.stop_fleet(proc)
    load = re.search(r"in ([0-9.]+) s$", summary)
    return (float(load.group(1)) if load else None), fleetlib.startup_seconds(ready), rss / 1024.0, summary


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folder")
    p.add_argument("--counts", default="1,10000")
    p.add_argument("--binary", default=os.path.join(fleetlib.repo_root(), "build", "fleetsim"))
    args = p.parse_args()
    print("%-8s %-10s %10s %12s %9s" % ("devices", "folder", "schemas s", "start-up s", "RSS MiB"))
    summaries = set()
    for count in [int(c) for c in args.counts.split(",")]:
        for folder in (None, args.folder):
            load, startup, rss, summary = run(args.binary, count, folder)
            print("%-8d %-10s %10s %12.3f %9.1f" % (count, "yes" if folder else "no",
                                                    "%.2f" % load if load is not None else "-", startup, rss))
            if summary:
                summaries.add(re.sub(r", in [0-9.]+ s$", "", summary))
    for s in sorted(summaries):
        print(s)


if __name__ == "__main__":
    main()
