#!/usr/bin/python3
"""CPU cost of fleetsim-stress ceiling's reads (issue 30): starts a fleetsim with --metrics and a syslog
sink on loopback, and Debian's prometheus scraping it when installed, then runs build/bench_ceiling_probe_cost
over the fleet's sent counter, a prom probe and a cmd probe. The numbers are the reading side's CPU (the
tool and the commands it runs), not the fleet's or Prometheus's.

    /usr/bin/python3 bench/ceiling_probe_cost.py [READS] [SAMPLE_S]
"""

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

import fleetlib


def wait_ready(url, timeout_s=30):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError("%s not ready in %d s" % (url, timeout_s))


def wait_series(prom, query, timeout_s=30):
    """Until the first scrape is in: the query has a series."""
    url = prom + "/api/v1/query?" + urllib.parse.urlencode({"query": query})
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        with urllib.request.urlopen(url, timeout=2) as r:
            if json.load(r)["data"]["result"]:
                return
        time.sleep(0.5)
    raise RuntimeError("no series for %s in %d s" % (query, timeout_s))


def main():
    reads = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    sample_s = float(sys.argv[2]) if len(sys.argv) > 2 else 5.0
    base = random.randrange(20000, 30000, 10)
    metrics = "127.0.0.1:%d" % base
    fleet, _ = fleetlib.start_fleet(["--device-count", "100", "--starting-port", str(base + 1000),
                                     "--metrics", metrics, "--syslog-sink", "udp://127.0.0.1:%d" % (base + 1),
                                     "--syslog-rate", "1"])
    work = tempfile.mkdtemp(prefix="fleetsim-ceil-cost-")
    prom = None
    try:
        probes = ["cmd:echo 42"]
        if shutil.which("prometheus"):
            with open(os.path.join(work, "prom.yml"), "w") as f:
                f.write("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: fleet\n"
                        "    static_configs:\n      - targets: ['%s']\n" % metrics)
            prom = subprocess.Popen(["prometheus", "--config.file=" + os.path.join(work, "prom.yml"),
                                     "--web.listen-address=127.0.0.1:%d" % (base + 2),
                                     "--storage.tsdb.path=" + os.path.join(work, "tsdb")],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_ready("http://127.0.0.1:%d/-/ready" % (base + 2))
            query = 'sum(fleetsim_push_messages_total{state="sent"})'
            wait_series("http://127.0.0.1:%d" % (base + 2), query)
            probes.insert(0, "prom:http://127.0.0.1:%d:%s" % (base + 2, query))
        helper = os.path.join(fleetlib.repo_root(), "build", "bench_ceiling_probe_cost")
        subprocess.run([helper, "http://" + metrics, str(reads), str(sample_s)] + probes, check=True)
    finally:
        if prom:
            prom.terminate()
            prom.wait()
        fleetlib.stop_fleet(fleet)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
