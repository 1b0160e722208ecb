#!/usr/bin/python3
"""Notification streaming (issue 5): fleetsim streaming route updates
(notifications/routes-1.xml, a <sequence> per device) to fleetsim-stress
notify subscribers, over loopback.

  --ceiling-one   one device, one subscriber, the rate far above what can be
                  delivered, --seconds long (default 10), burst 1 and 64
  --ceiling-fleet 1,000 devices (--ip-per-device), one subscriber each, the
                  same, --seconds after every subscription is up
  --accuracy      achieved / asked rate at 1/s, 100/s and 10,000/s per device
                  (--accuracy-devices each), one fleet and one subscriber per
                  rate, all three at once, --accuracy-seconds long (60;
                  --quick: 10)
  --zero-loss     half of the measured ceilings (one session, and the
                  1,000-device fleet), count-bounded, joined with
                  fleetsim-stress reconcile (tolerance 0): it must exit 0
With none of them, all four run, in that order; --zero-loss then takes half
of the ceilings measured in the same run (otherwise --half-one and
--half-fleet, notifications per second in total).

Server CPU is fleetsim's user + system time from /proc over the client's run,
divided by the notifications fleetsim sent (its --report, SIGUSR1); client
CPU is the client's own (getrusage, from its --json manifest) divided by the
notifications it counted. Every process started here is stopped here."""

import argparse
import datetime
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import fleetlib

ROUTES = os.path.join(fleetlib.repo_root(), "notifications", "routes-1.xml")
STRESS = os.path.join(fleetlib.repo_root(), "build", "fleetsim-stress")
FLEET_IP = "127.5.0.1"


def notif_file(workdir, name, rate_per_device=None, rate_total=None, count=None, burst=None):
    """routes-1.xml with its rate, end and burst replaced."""
    with open(ROUTES) as f:
        text = f.read()
    text = re.sub(r"\s*<count>\d+</count>", "", text)
    head = ("<rate-per-device>%s</rate-per-device>" % rate_per_device if rate_per_device is not None
            else "<rate-total>%s</rate-total>" % rate_total)
    if count:
        head += "\n  <count>%d</count>" % count
    if burst:
        head += "\n  <burst>%d</burst>" % burst
    text = re.sub(r"<rate-per-device>[^<]*</rate-per-device>", head, text)
    path = os.path.join(workdir, name)
    with open(path, "w") as f:
        f.write(text)
    return path


class Fleet:
    """fleetsim with a notification file and a report; stderr is drained so a chatty log never blocks it."""

    def __init__(self, workdir, name, devices, port, nfile, rate=None, ip_per_device=False, extra=()):
        self.report = os.path.join(workdir, name + ".report.json")
        args = ["--device-count", str(devices), "--starting-port", str(port), "--notification-file", nfile,
                "--report", self.report] + list(extra)
        if rate is not None:
            args += ["--notification-rate", str(rate)]
        if ip_per_device:
            args += ["--ip-per-device", "--ip", FLEET_IP]
        self.proc, _ = fleetlib.start_fleet(args)
        self.log = []
        self.drain = threading.Thread(target=self._drain, daemon=True)
        self.drain.start()

    def _drain(self):
        for line in self.proc.stderr:
            self.log.append(line)

    def cpu(self):
        return fleetlib.cpu_seconds(self.proc.pid)

    def snapshot(self, timeout_s=30):
        """Ask for the report (SIGUSR1) and return its device list."""
        if os.path.exists(self.report):
            os.unlink(self.report)
        self.proc.send_signal(signal.SIGUSR1)
        deadline = time.time() + timeout_s
        while not os.path.exists(self.report):
            if time.time() > deadline:
                raise RuntimeError("no report after SIGUSR1: %s" % "".join(self.log[-3:]))
            time.sleep(0.05)
        with open(self.report) as f:
            return json.load(f)["devices"]

    def stop(self):
        if self.proc.poll() is None:
            try:
                fleetlib.stop_fleet(self.proc)
            except Exception:
                self.proc.kill()
                self.proc.wait()
                raise


def totals(devices):
    t = dict(emitted=0, sent=0, send_failures=0, dropped=0, suppressed=0, generated=0, behind=0)
    for d in devices:
        for k in ("emitted", "sent", "send_failures", "dropped", "suppressed"):
            t[k] += d["notifications"][k]
        t["generated"] += d["generated"]
        t["behind"] += d["behind"]
    return t


def notify_cmd(workdir, name, port, devices, ip_per_device=False, extra=()):
    manifest = os.path.join(workdir, name + ".notify.json")
    cmd = [STRESS, "notify", "--port", str(port), "--device-count", str(devices), "--seq-element", "sequence",
           "--json", manifest, "--concurrency", "200"] + list(extra)
    if ip_per_device:
        cmd += ["--ip-per-device", "--ip", FLEET_IP]
    return cmd, manifest


def finish_notify(proc, manifest, timeout_s, allow_gaps=False):
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise RuntimeError("fleetsim-stress notify did not end in %d s" % timeout_s)
    m = re.search(r"Notifications per second: ([0-9.]+)", out)
    # At a ceiling the server may drop what a subscriber's full queue cannot take (counted in its report
    # as dropped): the client then sees gaps, which is expected there and only there.
    gaps_only = allow_gaps and proc.returncode == 1 and "FAILED: order problems" in err and "failures: none" in out
    if (proc.returncode != 0 and not gaps_only) or not m:
        raise RuntimeError("fleetsim-stress notify exited %d: %s %s" % (proc.returncode, out[-500:], err[-500:]))
    with open(manifest) as f:
        man = json.load(f)
    man["printed_rate"] = float(m.group(1))
    return man


def run_notify(cmd, manifest, timeout_s, allow_gaps=False):
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return finish_notify(proc, manifest, timeout_s, allow_gaps)


def all_up_rate(man):
    """Mean of the client's 1 s buckets once every subscription was up (the first and the last, partial,
    bucket left out). The buckets start at the first notification, a few ms after the client started."""
    r = man["results"]
    b = man["buckets"]
    first = int(r["setup_s"]) + 1
    full = b[first:-1]
    return sum(full) / len(full) if full else None


def fmt(x, digits=0):
    if x is None:
        return "-"
    return ("{:,.%df}" % digits).format(x)


def table(header, rows):
    print("| " + " | ".join(header) + " |")
    print("| " + " | ".join("---" for _ in header) + " |")
    for r in rows:
        print("| " + " | ".join(str(c) for c in r) + " |")
    print()
    sys.stdout.flush()


def ceiling_run(workdir, name, port, devices, seconds, nfile, rate=None, ip_per_device=False):
    fleet = Fleet(workdir, name, devices, port, nfile, rate=rate, ip_per_device=ip_per_device)
    try:
        cmd, manifest = notify_cmd(workdir, name, port, devices, ip_per_device, ["--duration", str(seconds)])
        cpu0 = fleet.cpu()
        man = run_notify(cmd, manifest, timeout_s=seconds + 300, allow_gaps=True)
        server_cpu = fleet.cpu() - cpu0
        time.sleep(0.3)
        t = totals(fleet.snapshot())
    finally:
        fleet.stop()
    r = man["results"]
    return dict(man=man, t=t, server_cpu=server_cpu, received=r["total_received"],
                delivered=man["printed_rate"], all_up=all_up_rate(man) if devices > 1 else None,
                server_us=server_cpu / t["sent"] * 1e6 if t["sent"] else None,
                client_us=r["client_cpu_s"] / r["total_received"] * 1e6 if r["total_received"] else None,
                client_user_us=r["client_user_s"] / r["total_received"] * 1e6 if r["total_received"] else None)


def ceiling_one(workdir, port, seconds):
    """One device, one subscriber. Asked: 1,000,000/s (the most --notification-rate takes) and 100,000,000/s
    (a file's <rate-total>, one device): burst 1 and 64."""
    scenarios = [
        ("1,000,000/s (--notification-rate), burst 1", dict(rate=1000000), dict(rate_total=1000000)),
        ("1,000,000/s (--notification-rate), burst 64", dict(rate=1000000), dict(rate_total=1000000, burst=64)),
        ("100,000,000/s (rate-total), burst 1", {}, dict(rate_total=100000000)),
        ("100,000,000/s (rate-total), burst 64", {}, dict(rate_total=100000000, burst=64)),
    ]
    rows, best = [], 0
    for i, (label, fleet_kw, file_kw) in enumerate(scenarios):
        nfile = notif_file(workdir, "one%d.xml" % i, **file_kw)
        r = ceiling_run(workdir, "one%d" % i, port + i, 1, seconds, nfile, rate=fleet_kw.get("rate"))
        t, res = r["t"], r["man"]["results"]
        best = max(best, r["delivered"])
        rows.append([label, fmt(r["delivered"]), fmt(r["received"]), fmt(t["generated"]), fmt(t["sent"]),
                     fmt(t["sent"] - r["received"]), fmt(t["dropped"]), fmt(t["behind"]),
                     "%d/%d/%d" % (res["order"]["gaps"], res["order"]["duplicates"], res["order"]["reordered"]),
                     fmt(r["server_us"], 2), fmt(r["client_us"], 2), fmt(r["client_user_us"], 2)])
    print("### One session: %d s, one device, one subscriber\n" % seconds)
    table(["asked", "delivered/s (client)", "received", "generated", "sent", "sent - received (in flight at "
           "close)", "dropped", "behind", "gaps/dup/reord", "server CPU-us/sent", "client CPU-us/received",
           "client user us"], rows)
    return best


def ceiling_fleet(workdir, port, seconds, devices):
    """devices devices with an address each, one subscriber each, each asked 1,000,000/s."""
    nfile = notif_file(workdir, "fleet.xml", rate_total=1000000)
    r = ceiling_run(workdir, "fleet", port, devices, seconds, nfile, rate=1000000, ip_per_device=True)
    t, res = r["t"], r["man"]["results"]
    print("### %d sessions: %d devices (--ip-per-device), one subscriber each, 1,000,000/s asked per device, "
          "%d s after every subscription is up\n" % (devices, devices, seconds))
    pd = res["received_per_device"]
    table(["subscribed in s", "run s", "delivered/s first to last (client)", "delivered/s once all up (1 s "
           "buckets)", "received", "per device min/median/max", "generated", "sent", "dropped", "behind",
           "gaps/dup/reord", "server CPU s", "server CPU-us/sent", "client CPU-us/received"],
          [[fmt(res["setup_s"], 2), fmt(res["run_s"], 1), fmt(r["delivered"]), fmt(r["all_up"]),
            fmt(r["received"]), "%s/%s/%s" % (fmt(pd["min"]), fmt(pd["median"]), fmt(pd["max"])),
            fmt(t["generated"]), fmt(t["sent"]), fmt(t["dropped"]), fmt(t["behind"]),
            "%d/%d/%d" % (res["order"]["gaps"], res["order"]["duplicates"], res["order"]["reordered"]),
            fmt(r["server_cpu"], 2), fmt(r["server_us"], 2), fmt(r["client_us"], 2)]])
    print("1 s buckets (client): %s\n" % " ".join(str(b) for b in r["man"]["buckets"]))
    return r["all_up"] or r["delivered"]


def parse_time(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)


def accuracy(workdir, port, seconds, devices, rates=(1, 100, 10000)):
    """One fleet and one subscriber per rate, all at once, each device counted to rate * seconds."""
    fleets, runs = [], []
    try:
        for i, rate in enumerate(rates):
            count = int(rate * seconds)
            nfile = notif_file(workdir, "acc%d.xml" % i, rate_per_device=rate, count=count)
            p = port + 100 * i
            fleets.append(Fleet(workdir, "acc%d" % i, devices, p, nfile, extra=["--threads", "1"]))
            cmd, manifest = notify_cmd(workdir, "acc%d" % i, p, devices, extra=["--count", str(count)])
            runs.append((rate, count, fleets[-1], subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                                                   stderr=subprocess.PIPE, text=True), manifest,
                         fleets[-1].cpu()))
        rows = []
        for rate, count, fleet, proc, manifest, cpu0 in runs:
            man = finish_notify(proc, manifest, timeout_s=seconds * 2 + 120)
            server_cpu = fleet.cpu() - cpu0
            t = totals(fleet.snapshot())
            res = man["results"]
            # Server side: each device's first to last eventTime (ms), count - 1 intervals.
            ratios = []
            for d in man["devices"]:
                span = (parse_time(d["last_event_time"]) - parse_time(d["first_event_time"])).total_seconds()
                ratios.append((d["received"] - 1) / span / rate)
            # Client side: arrival of the first to the last notification of the whole run.
            client_ratio = (res["total_received"] - devices) / res["first_to_last_s"] / devices / rate
            rows.append([fmt(rate), devices, fmt(count), fmt(res["total_received"]), fmt(t["generated"]),
                         fmt(t["sent"]), fmt(t["dropped"]), fmt(t["behind"]),
                         "%d/%d/%d" % (res["order"]["gaps"], res["order"]["duplicates"], res["order"]["reordered"]),
                         fmt(res["first_to_last_s"], 3), "%.5f" % client_ratio,
                         "%.5f / %.5f" % (min(ratios), max(ratios)),
                         "%.2f %%" % (100 * max(abs(x - 1) for x in ratios + [client_ratio])),
                         fmt(server_cpu / t["sent"] * 1e6 if t["sent"] else None, 1)])
    finally:
        for f in fleets:
            f.stop()
        for r in runs:
            if r[3].poll() is None:
                r[3].kill()
                r[3].wait()
    print("### Rate accuracy: %d s per rate, %d devices each, the three rates at once (three fleets, "
          "--threads 1 each)\n" % (seconds, devices))
    table(["asked/s per device", "devices", "count per device", "received", "generated", "sent", "dropped",
           "behind", "gaps/dup/reord", "client first to last s", "achieved/asked (client arrivals)",
           "achieved/asked per device (eventTime) min / max", "worst error", "server CPU-us/sent"], rows)


def zero_loss(workdir, port, name, devices, total_rate, seconds, ip_per_device):
    total_rate = float("%.2f" % total_rate)
    per_device = total_rate / devices
    count = int(per_device * seconds)
    fname = name.replace(" ", "_")
    nfile = notif_file(workdir, fname + ".xml", rate_total=total_rate, count=count)
    fleet = Fleet(workdir, fname, devices, port, nfile, ip_per_device=ip_per_device)
    try:
        cmd, manifest = notify_cmd(workdir, fname, port, devices, ip_per_device, ["--count", str(count)])
        cpu0 = fleet.cpu()
        man = run_notify(cmd, manifest, timeout_s=seconds * 3 + 300)
        server_cpu = fleet.cpu() - cpu0
        devs = fleet.snapshot()
    finally:
        fleet.stop()
    # Reconciled against the report fleetsim writes at exit (the streams had ended: the same counts).
    rec = subprocess.run([STRESS, "reconcile", "--sent", fleet.report, "--received", manifest],
                         capture_output=True, text=True, timeout=120)
    summary = [l for l in rec.stdout.splitlines() if l.startswith("totals")] or rec.stdout.splitlines()[-1:]
    t = totals(devs)
    res = man["results"]
    return [name, devices, fmt(per_device, 2), fmt(per_device * devices), fmt(count), fmt(res["setup_s"], 2),
            fmt(res["first_to_last_s"], 2), fmt(man["printed_rate"]), fmt(res["total_received"]), fmt(t["sent"]),
            fmt(t["dropped"]), fmt(t["behind"]),
            "%d/%d/%d" % (res["order"]["gaps"], res["order"]["duplicates"], res["order"]["reordered"]),
            fmt(server_cpu / t["sent"] * 1e6 if t["sent"] else None, 2),
            fmt(res["client_cpu_s"] / res["total_received"] * 1e6 if res["total_received"] else None, 2),
            "%d (%s)" % (rec.returncode, summary[0].strip() if summary else rec.stderr.strip()[-100:])]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ceiling-one", action="store_true")
    p.add_argument("--ceiling-fleet", action="store_true")
    p.add_argument("--accuracy", action="store_true")
    p.add_argument("--zero-loss", action="store_true")
    p.add_argument("--seconds", type=int, default=10, help="length of a ceiling run (default 10)")
    p.add_argument("--fleet-devices", type=int, default=1000)
    p.add_argument("--accuracy-seconds", type=int, default=60)
    p.add_argument("--accuracy-devices", type=int, default=4)
    p.add_argument("--quick", action="store_true", help="rate accuracy over 10 s instead of 60")
    p.add_argument("--zero-loss-seconds", type=int, default=10)
    p.add_argument("--half-one", type=float, help="zero-loss rate of one session (default: half the ceiling "
                   "measured in this run, else 500,000)")
    p.add_argument("--half-fleet", type=float, help="zero-loss total rate of the fleet (default: half the "
                   "ceiling measured in this run, else 500,000)")
    args = p.parse_args()
    if args.quick:
        args.accuracy_seconds = 10

    workdir = tempfile.mkdtemp(prefix="notify_bench.")
    try:
        run(args, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def run(args, workdir):
    everything = not (args.ceiling_one or args.ceiling_fleet or args.accuracy or args.zero_loss)
    port = random.randrange(10000, 30000)
    one = fleet = None
    print("fleetsim notify bench, %s, %d CPUs, load average %s\n" % (
        time.strftime("%Y-%m-%d %H:%M:%S"), os.cpu_count(), " ".join(open("/proc/loadavg").read().split()[:3])))
    if everything or args.ceiling_one:
        one = ceiling_one(workdir, port, args.seconds)
    if everything or args.ceiling_fleet:
        fleet = ceiling_fleet(workdir, port + 10, args.seconds, args.fleet_devices)
    if everything or args.accuracy:
        accuracy(workdir, port + 20, args.accuracy_seconds, args.accuracy_devices)
    if everything or args.zero_loss:
        half_one = args.half_one or (one / 2 if one else 500000)
        half_fleet = args.half_fleet or (fleet / 2 if fleet else 500000)
        rows = [zero_loss(workdir, port + 400, "one session", 1, half_one, args.zero_loss_seconds, False),
                zero_loss(workdir, port + 401, "fleet", args.fleet_devices, half_fleet, args.zero_loss_seconds,
                          True)]
        print("### Zero loss at half the ceiling, count-bounded (%d s at the asked rate), reconciled with "
              "tolerance 0\n" % args.zero_loss_seconds)
        table(["run", "devices", "asked/s per device", "asked/s total", "count per device", "subscribed in s",
               "first to last s", "delivered/s (client)", "received", "sent", "dropped", "behind",
               "gaps/dup/reord", "server CPU-us/sent", "client CPU-us/received", "reconcile exit"], rows)
    print("load average at the end: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))


if __name__ == "__main__":
    main()
