#!/usr/bin/python3
"""What the YANG-Push modules cost a fleet (issue 31), side by side in one run.

Start-up (fleetsim's own figure) and resident memory of --devices devices, and the server's CPU time
per edit-config creating one interface on a device already holding --prefill interfaces, for:
  baseline     --baseline BINARY, a build without the modules (optional)
  modules      build/fleetsim as it is
  no-deviation build/fleetsim with schemas/ copied to a temporary folder whose
               fleetsim-yang-push-deviations deviates nothing (what the deviation of
               ietf-network-instance's bind-ni-name saves every edit)
Runs alternate, --runs times each; medians are printed."""

import argparse
import os
import random
import shutil
import statistics
import tempfile
import time

import edit_cpu
import fleetlib

DEVIATIONS = "fleetsim-yang-push-deviations.yang"


def schemas_without_deviation(tmp):
    folder = os.path.join(tmp, "schemas")
    shutil.copytree(os.path.join(fleetlib.repo_root(), "schemas"), folder)
    path = os.path.join(folder, DEVIATIONS)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    with open(path, "w", encoding="utf-8") as f:
        f.write(text[:text.index("  deviation ")] + "}\n")
    return folder


def start(binary, args, schema_dir):
    env_before = os.environ.get("FLEETSIM_SCHEMA_DIR")
    if schema_dir:
        os.environ["FLEETSIM_SCHEMA_DIR"] = schema_dir
    try:
        for _ in range(10):  # other processes of a shared machine may hold a port
            port = random.randrange(10000, 30000)
            try:
                proc, line = fleetlib.start_fleet(args + ["--starting-port", str(port)], binary=binary)
                return proc, line, port
            except RuntimeError as e:
                if "in use" not in str(e):
                    raise
        raise RuntimeError("no free ports")
    finally:
        if schema_dir:
            if env_before is None:
                del os.environ["FLEETSIM_SCHEMA_DIR"]
            else:
                os.environ["FLEETSIM_SCHEMA_DIR"] = env_before


def startup(binary, schema_dir, devices):
    proc, line, _ = start(binary, ["--device-count", str(devices)], schema_dir)
    try:
        time.sleep(0.5)
        return fleetlib.startup_seconds(line), fleetlib.rss_kib(proc.pid)
    finally:
        fleetlib.stop_fleet(proc)


def edit_cost(binary, schema_dir, prefill, edits):
    proc, _, port = start(binary, ["--device-count", "1", "--threads", "1"], schema_dir)
    try:
        client = fleetlib.Client("127.0.0.1", port)
        edit_cpu.prefill(client, prefill)
        cpu_us, _ = edit_cpu.timed_edits(client, proc.pid, edits, 64, "e")
        client.close()
        return cpu_us
    finally:
        fleetlib.stop_fleet(proc)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--baseline", help="a fleetsim binary built without the YANG-Push modules")
    p.add_argument("--devices", type=int, default=1000)
    p.add_argument("--prefill", type=int, default=20000)
    p.add_argument("--edits", type=int, default=2000)
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()

    current = os.path.join(fleetlib.repo_root(), "build", "fleetsim")
    with tempfile.TemporaryDirectory(prefix="fleetsim-ypcost-") as tmp:
        variants = [("modules", current, None), ("no-deviation", current, schemas_without_deviation(tmp))]
        if args.baseline:
            variants.insert(0, ("baseline", args.baseline, None))
        results = {name: [] for name, _, _ in variants}
        for _ in range(args.runs):
            for name, binary, schema_dir in variants:
                up_s, rss = startup(binary, schema_dir, args.devices)
                edit_us = edit_cost(binary, schema_dir, args.prefill, args.edits)
                results[name].append((up_s, rss, edit_us))
                print("  %-12s start-up %.3f s  RSS %d KiB  edit %.1f CPU-us" % (name, up_s, rss, edit_us),
                      flush=True)
    print("medians of %d runs: %d devices; edit-config creating one interface on a device holding %d, %d edits"
          % (args.runs, args.devices, args.prefill, args.edits))
    print("| variant | start-up s | RSS KiB | server CPU-us per edit |")
    print("| --- | --- | --- | --- |")
    for name, rows in results.items():
        print("| %s | %.3f | %d | %.1f |" % (name, statistics.median(r[0] for r in rows),
                                            statistics.median(r[1] for r in rows),
                                            statistics.median(r[2] for r in rows)))


if __name__ == "__main__":
    main()
