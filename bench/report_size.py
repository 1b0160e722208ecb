#!/usr/bin/python3
"""Size and render time of `fleetsim-stress report` for large runs.

Writes synthetic manifests of the real shapes (members and nesting as edit_run.c and notify_run.c
write them): a 10-million-request edit run (170 s at ~59k/s: per-second series of 170 entries, a
latency histogram of fixed buckets, two error-tags) and a 10,000-device notify run (60 one-second
buckets, 10,000 device objects with order counters). Then runs `fleetsim-stress report` on each and
renders the page in headless Chromium (--dump-dom with --virtual-time-budget), printing the page's
size, the report's own time and Chromium's wall time (3 runs, best and worst), and whether every chart
was drawn (data-drawn on each container, data-ready on the body).

Usage: /usr/bin/python3 bench/report_size.py build/fleetsim-stress
"""

import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

CHROMIUM = "/usr/bin/chromium"


def edit_manifest(requests=10_000_000, seconds=170):
    rng = random.Random(1)
    counts = [0] * 100
    per = requests // seconds
    for _ in range(200000):  # the shape of a latency distribution, scaled to the request count
        us = max(1, int(rng.lognormvariate(7.5, 0.6)))
        i = 0
        while 10 ** ((i + 1) / 10) <= us:
            i += 1
        counts[min(i, 99)] += requests // 200000
    while counts and not counts[-1]:
        counts.pop()
    ok = [per - (5 if s % 17 == 0 else 0) for s in range(seconds)]
    err = [5 if s % 17 == 0 else 0 for s in range(seconds)]
    return {"tool": "fleetsim-stress", "version": "0.1.0", "mode": "edit",
            "parameters": {"ip": "127.0.0.1", "port": 17830, "device_count": 1000, "ip_per_device": False,
                           "edits": requests, "edit_content": "(built-in ietf-interfaces entry)",
                           "edit_batch_size": 0, "candidate_datastore": True, "async_requests": True,
                           "thread_amount": 1000, "pipeline": 64, "msg_timeout_s": 60, "legacy_framing": False,
                           "ssh": False, "transport": "tcp", "transport_used": "tcp"},
            "server": {"session_id": 1, "framing": "base:1.1", "capabilities": ["urn:ietf:params:netconf:base:1.1"]},
            "results": {"complete": True, "interrupted": None, "requests_per_second": requests / seconds,
                        "elapsed_s": seconds, "edits_sent": requests, "edits_answered": requests,
                        "edits_ok": requests - sum(err), "edits_rpc_error": sum(err), "commits_sent": 1000,
                        "commits_ok": 1000, "commits_rpc_error": 0,
                        "latency_us": {"p50": 1800, "p90": 3900, "p99": 7000, "p99.9": 9000, "max": 40000},
                        "errors_by_tag": {"in-use": sum(err) // 2, "lock-denied": sum(err) - sum(err) // 2},
                        "client_cpu_s": 60.0, "client_cpu_user_s": 30.0, "client_cpu_us_per_edit": 6.0,
                        "failure": None,
                        "latency_histogram": {"unit": "us", "buckets_per_decade": 10, "first_upper": 1,
                                              "counts": counts}},
            "per_second": {"bucket_s": 1, "ok": ok, "errors": err,
                           "errors_by_tag": {"in-use": [e // 2 for e in err], "lock-denied": [e - e // 2 for e in err]}},
            "scenario": None}


def notify_manifest(devices=10_000, seconds=60):
    rng = random.Random(2)
    devs = []
    for i in range(devices):
        gaps = 1 if rng.random() < 0.01 else 0
        devs.append({"device": i, "address": "127.0.0.1", "port": 17830 + i % 50000,
                     "local": "127.0.0.1:%d" % (30000 + i % 30000), "received": 600 - gaps, "replay_complete": 0,
                     "notification_complete": 0, "first_seq": 1, "last_seq": 600, "gaps": gaps, "missing": gaps,
                     "duplicates": 1 if rng.random() < 0.005 else 0, "reordered": 0, "unnumbered": 0,
                     "first_event_time": "2026-01-01T00:00:00Z", "last_event_time": "2026-01-01T00:01:00Z",
                     "failure": None})
    total = sum(d["received"] for d in devs)
    return {"tool": "fleetsim-stress", "version": "0.1.0", "mode": "notify",
            "parameters": {"ip": "127.0.0.1", "port": 17830, "device_count": devices, "ip_per_device": False,
                           "concurrency": 100, "stream": "NETCONF", "duration_s": seconds, "count": 0,
                           "idle_timeout_s": 0, "seq_element": "seq", "msg_timeout_s": 60,
                           "legacy_framing": False, "ssh": False, "transport": "tcp"},
            "results": {"interrupted": None, "subscribed": devices, "failed": 0, "ended": "duration",
                        "ended_as_asked": True, "run_s": seconds, "setup_s": 2.0, "total_received": total,
                        "first_to_last_s": seconds, "notifications_per_second": total / seconds,
                        "replay_complete": 0, "notification_complete": 0,
                        "received_per_device": {"min": 599, "median": 600, "max": 600},
                        "order": {"checked": True, "gaps": 100, "missing": 100, "duplicates": 50, "reordered": 0,
                                  "unnumbered": 0},
                        "failures": {"connect": 0, "hello": 0}, "client_cpu_s": 10.0},
            "buckets": [total // seconds] * seconds, "devices": devs, "scenario": None}


def render(path, work):
    profile = tempfile.mkdtemp(prefix="chromium-", dir=work)
    started = time.monotonic()
    p = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                        "--disable-component-update", "--disable-sync", "--no-first-run",
                        "--user-data-dir=" + profile, "--virtual-time-budget=5000", "--dump-dom", "file://" + path],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=120)
    wall = time.monotonic() - started
    dom = p.stdout.decode(errors="replace")
    charts = len(re.findall(r'data-chart="', dom))
    drawn = len(re.findall(r'data-drawn="1">', dom))  # the attribute, not the script's comment
    return wall, 'data-ready="1"' in dom, charts, drawn


def main():
    stress = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="report-bench-")
    try:
        # Chromium's own start and exit, for the baseline: an empty page.
        empty = os.path.join(work, "empty.html")
        with open(empty, "w") as f:
            f.write("<!DOCTYPE html><html><body></body></html>")
        base = [render(empty, work)[0] for _ in range(3)]
        print("chromium --dump-dom of an empty page: wall %.2f-%.2f s" % (min(base), max(base)))
        for name, m in (("edit, 10,000,000 requests", edit_manifest()), ("notify, 10,000 devices", notify_manifest())):
            src = os.path.join(work, "run.json")
            with open(src, "w") as f:
                json.dump(m, f)
            out = os.path.join(work, "report.html")
            started = time.monotonic()
            subprocess.run([stress, "report", src, "-o", out], check=True, stdout=subprocess.DEVNULL)
            made = time.monotonic() - started
            walls = []
            for _ in range(3):
                wall, ready, charts, drawn = render(out, work)
                walls.append(wall)
            print("%s: manifest %.3f MB, report %.2f MB written in %.2f s; chromium --dump-dom wall %.2f-%.2f s; "
                  "ready %s, %d chart containers, %d drawn"
                  % (name, os.path.getsize(src) / 1e6, os.path.getsize(out) / 1e6, made, min(walls), max(walls),
                     ready, charts, drawn))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
