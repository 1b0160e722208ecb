#!/usr/bin/python3
"""Soak: a fleet under steady mixed load for a long time, its memory and CPU
sampled, and a verdict on whether its memory stays flat after warm-up.

fleetsim runs --devices devices (default 1,000), an address each
(--ip-per-device, 127.9.0.1 up), NETCONF over TCP, every device an SNMP
agent, a notification stream of route updates (notifications/routes-1.xml
without its count, --notif-rate per device per second, endless) and the
metrics endpoint. Around it, until the end:

  - fleetsim-stress notify holds one subscribed session on every device and
    counts what arrives (sequence numbers checked);
  - every --edit-interval seconds fleetsim-stress edit opens --edit-sessions
    sessions on the next slice of devices and sends --edit-count edit-configs
    to running, each rewriting one interface's description (the datastores do
    not grow; each edit also sends netconf-config-change to the subscriber);
  - every --snmp-interval seconds fleetsim-stress snmp walks every device's
    agent once (GETBULK, the minimal profile's collection);
  - every sample, /metrics is scraped (the open session count is recorded).

A device's first write copies its datastores (until then every device
shares the template's), so memory grows until the edit runs have been round
the fleet once: the warm-up lasts at least that long (200 s with the
defaults). Each device also keeps its last --replay-log notifications (16)
in reused buffers that all grow to the largest notification of its stream,
here the netconf-config-change an edit sends, so that part of memory is at
its final size soon after a device's first edit; --replay-log 0 takes it out.

Every --sample seconds fleetsim's VmRSS (/proc/PID/status) and CPU time
(/proc/PID/stat, user + system) go to a CSV. At the end: RSS after the
warm-up (--warmup-minutes or one pass of the edit runs, whichever is longer,
at most half the run) is flat when its
max - min is under --threshold percent of its minimum; the least-squares
slope in KiB per minute is printed too. Exit status 0 when flat, 1 when
not, 2 when a load process failed. Every process started here is stopped
here."""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import fleetlib

FLEET_IP = "127.9.0.1"
NC_PORT = 17830
SNMP_PORT = 16100
ROUTES = os.path.join(fleetlib.repo_root(), "notifications", "routes-1.xml")
EDIT_CONTENT = (
    '<interfaces xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces"><interface><name>soak0</name>'
    '<type xmlns:ianaift="urn:ietf:params:xml:ns:yang:iana-if-type">ianaift:ethernetCsmacd</type>'
    "<description>edit {MSG_ID} of session {SESSION}</description></interface></interfaces>")


def ip_plus(ip, n):
    a = [int(x) for x in ip.split(".")]
    v = ((a[0] << 24) | (a[1] << 16) | (a[2] << 8) | a[3]) + n
    return "%d.%d.%d.%d" % (v >> 24 & 255, v >> 16 & 255, v >> 8 & 255, v & 255)


def notif_file(workdir, rate):
    """routes-1.xml at rate per device per second, without an end."""
    with open(ROUTES) as f:
        text = f.read()
    text = re.sub(r"\s*<count>\d+</count>", "", text)
    text = re.sub(r"<rate-per-device>[^<]*</rate-per-device>", "<rate-per-device>%s</rate-per-device>" % rate,
                  text)
    path = os.path.join(workdir, "soak-notifications.xml")
    with open(path, "w") as f:
        f.write(text)
    return path


def drain(stream, path):
    with open(path, "w") as out:
        for line in stream:
            out.write(line)
            out.flush()


class Loop(threading.Thread):
    """Runs a command every interval seconds until stopped; counts runs and failures."""

    def __init__(self, name, interval, make_cmd, log_path):
        super().__init__(daemon=True)
        self.name, self.interval, self.make_cmd, self.log_path = name, interval, make_cmd, log_path
        self.stop_event = threading.Event()
        self.runs = self.failures = 0
        self.proc = None
        self.last_output = ""

    def run(self):
        with open(self.log_path, "w") as log:
            while not self.stop_event.is_set():
                started = time.time()
                cmd = self.make_cmd(self.runs)
                self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                out, _ = self.proc.communicate()
                rc = self.proc.returncode
                self.last_output = out
                log.write("== run %d at %.0f, exit %d: %s\n%s" % (self.runs, started, rc, " ".join(cmd), out))
                log.flush()
                self.runs += 1
                if rc != 0 and not self.stop_event.is_set():
                    self.failures += 1
                self.stop_event.wait(max(0.0, self.interval - (time.time() - started)))

    def stop(self):
        self.stop_event.set()
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        self.join(timeout=120)


def scrape_sessions(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            page = r.read().decode()
    except OSError:
        return -1
    return sum(int(float(m.group(1))) for m in re.finditer(r"^fleetsim_sessions\{[^}]*\} (\S+)$", page, re.M))


def fit_slope(points):
    """Least-squares slope of (x, y) points."""
    n = len(points)
    mx = sum(p[0] for p in points) / n
    my = sum(p[1] for p in points) / n
    sxx = sum((p[0] - mx) ** 2 for p in points)
    return sum((p[0] - mx) * (p[1] - my) for p in points) / sxx if sxx else 0.0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=30)
    p.add_argument("--sample", type=float, default=10, help="seconds between samples")
    p.add_argument("--devices", type=int, default=1000)
    p.add_argument("--threads", type=int, default=2, help="fleetsim worker loops")
    p.add_argument("--notif-rate", default="1", help="notifications per device per second")
    p.add_argument("--edit-interval", type=float, default=10)
    p.add_argument("--edit-sessions", type=int, default=50, help="sessions (and devices) of one edit run")
    p.add_argument("--edit-count", type=int, default=500, help="edit-configs per edit run, over all its sessions")
    p.add_argument("--snmp-interval", type=float, default=15)
    p.add_argument("--warmup-minutes", type=float, default=5, help="at most half the run")
    p.add_argument("--threshold", type=float, default=5, help="percent of RSS growth allowed after warm-up")
    p.add_argument("--csv", default="soak.csv")
    p.add_argument("--workdir", help="logs and the report (default: a fresh temporary folder)")
    p.add_argument("--build", default=os.path.join(fleetlib.repo_root(), "build"))
    p.add_argument("--ip", default=FLEET_IP, help="first device's address")
    p.add_argument("--port", type=int, default=NC_PORT, help="NETCONF port of every device")
    p.add_argument("--snmp-port", type=int, default=SNMP_PORT, help="SNMP port of every device")
    p.add_argument("--metrics-port", type=int, default=29464)
    p.add_argument("--replay-log", type=int, help="fleetsim's --replay-log (notifications kept per device)")
    a = p.parse_args()

    workdir = a.workdir or tempfile.mkdtemp(prefix="fleetsim-soak-")
    os.makedirs(workdir, exist_ok=True)
    stress = os.path.join(a.build, "fleetsim-stress")
    metrics_port = a.metrics_port
    seconds = a.minutes * 60
    edit_content = os.path.join(workdir, "edit-content.xml")
    with open(edit_content, "w") as f:
        f.write(EDIT_CONTENT)

    fleet_args = ["--device-count", str(a.devices), "--ip", a.ip, "--ip-per-device", "--starting-port",
                  str(a.port), "--snmp-starting-port", str(a.snmp_port), "--ssh", "false", "--threads",
                  str(a.threads), "--notification-file", notif_file(workdir, a.notif_rate), "--report",
                  os.path.join(workdir, "report.json"), "--metrics", "127.0.0.1:%d" % metrics_port,
                  "--status-interval", "60"] + (["--replay-log", str(a.replay_log)] if a.replay_log is not None else [])
    print("workdir %s\nfleetsim %s" % (workdir, " ".join(fleet_args)), flush=True)
    fleet, ready = fleetlib.start_fleet(fleet_args, binary=os.path.join(a.build, "fleetsim"), timeout_s=120)
    threading.Thread(target=drain, args=(fleet.stderr, os.path.join(workdir, "fleetsim.log")), daemon=True).start()
    print(ready, flush=True)
    t0 = time.time()
    common = ["--ip", a.ip, "--ip-per-device"]
    notify = subprocess.Popen(
        [stress, "notify"] + common + ["--port", str(a.port), "--device-count", str(a.devices), "--concurrency",
                                       "50", "--duration", str(int(seconds)), "--idle-timeout", "0",
                                       "--seq-element", "sequence", "--json", os.path.join(workdir, "notify.json")],
        stdout=open(os.path.join(workdir, "notify.log"), "w"), stderr=subprocess.STDOUT)
    slices = max(1, a.devices // a.edit_sessions)
    edit = Loop("edit", a.edit_interval, lambda i: [
        stress, "edit", "--ip", ip_plus(a.ip, (i % slices) * a.edit_sessions), "--ip-per-device", "--port",
        str(a.port), "--device-count", str(a.edit_sessions), "--thread-amount", str(a.edit_sessions), "--edits",
        str(a.edit_count), "--edit-content", edit_content, "--candidate-datastore", "false", "--msg-timeout", "60"
    ], os.path.join(workdir, "edit.log"))
    snmp = Loop("snmp", a.snmp_interval, lambda i: [
        stress, "snmp"] + common + ["--port", str(a.snmp_port), "--device-count", str(a.devices), "--concurrency", "50",
                                    "--rounds", "1"], os.path.join(workdir, "snmp.log"))
    edit.start()
    snmp.start()

    samples = []  # (t_s, rss_kib, cpu_s, cpu_percent, sessions)
    failed = ""
    with open(a.csv, "w") as out:
        out.write("t_s,rss_kib,cpu_s,cpu_percent,sessions\n")
        prev_t, prev_cpu = t0, fleetlib.cpu_seconds(fleet.pid)
        next_at = t0
        while True:
            now = time.time()
            if fleet.poll() is not None:
                failed = "fleetsim exited with %d" % fleet.returncode
                break
            if notify.poll() is not None and now - t0 < seconds - 5:
                failed = "fleetsim-stress notify exited early with %d" % notify.returncode
                break
            rss, cpu = fleetlib.rss_kib(fleet.pid), fleetlib.cpu_seconds(fleet.pid)
            pct = 100.0 * (cpu - prev_cpu) / (now - prev_t) if now > prev_t else 0.0
            prev_t, prev_cpu = now, cpu
            row = (round(now - t0, 1), rss, round(cpu, 2), round(pct, 1),
                   scrape_sessions("http://127.0.0.1:%d/metrics" % metrics_port))
            samples.append(row)
            out.write("%s,%d,%s,%s,%d\n" % row)
            out.flush()
            if now - t0 >= seconds:
                break
            next_at += a.sample
            time.sleep(max(0.0, min(next_at, t0 + seconds) - time.time()))

    edit.stop()
    snmp.stop()
    if notify.poll() is None:
        try:
            notify.wait(timeout=60)
        except subprocess.TimeoutExpired:
            notify.send_signal(signal.SIGINT)
            notify.wait(timeout=60)
    if fleet.poll() is None:
        fleet.send_signal(signal.SIGUSR1)
        time.sleep(1)
        fleetlib.stop_fleet(fleet)

    notified = {}
    try:
        with open(os.path.join(workdir, "notify.json")) as f:
            notified = json.load(f).get("results", {})
    except (OSError, ValueError):
        pass
    print("load: %d devices, notifications %s/device/s, %d notify subscribers; edit runs %d (%d failed), "
          "snmp walks of the fleet %d (%d failed)" % (a.devices, a.notif_rate, a.devices, edit.runs, edit.failures,
                                                       snmp.runs, snmp.failures))
    if notified:
        print("notify results: %s" % json.dumps(notified, sort_keys=True)[:600])
    if failed or edit.failures or snmp.failures or notify.returncode not in (0, None):
        print("FAILED: %s (notify exit %s); logs in %s" % (failed or "a load process failed", notify.returncode,
                                                          workdir))
        return 2

    # A device's first write copies its datastores (until then it shares the template's), so the
    # warm-up lasts at least one pass of the edit runs over the fleet.
    warm = min(max(a.warmup_minutes * 60, slices * a.edit_interval), seconds / 2)
    after = [s for s in samples if s[0] >= warm]
    if len(after) < 2:
        print("too few samples after the warm-up")
        return 2
    rss = [s[1] for s in after]
    growth = 100.0 * (max(rss) - min(rss)) / min(rss)
    slope = fit_slope([(s[0] / 60, s[1]) for s in after])
    span_min = (after[-1][0] - after[0][0]) / 60
    cpu_avg = 100.0 * (samples[-1][2] - samples[0][2]) / (samples[-1][0] - samples[0][0])
    print("samples: %d over %.1f min; RSS at start %d KiB, after warm-up (%.1f min) min %d max %d last %d KiB" %
          (len(samples), samples[-1][0] / 60, samples[0][1], warm / 60, min(rss), max(rss), rss[-1]))
    print("RSS growth after warm-up %.2f %% (threshold %.1f %%), slope %.1f KiB/min over %.1f min" %
          (growth, a.threshold, slope, span_min))
    print("CPU: fleetsim %.1f %% of a core on average, peak sample %.1f %%" %
          (cpu_avg, max(s[3] for s in samples[1:]) if len(samples) > 1 else 0.0))
    flat = growth < a.threshold
    print("verdict: %s" % ("FLAT" if flat else "NOT FLAT"))
    return 0 if flat else 1


if __name__ == "__main__":
    sys.exit(main())
