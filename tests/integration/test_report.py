"""fleetsim-stress report: real manifests of every mode, one HTML page, rendered in headless Chromium.

Short real runs write the manifests: edit, mount and snmp against a fleet; notify against scripted
notification servers (test_stress_notify.py's, with a gap and a duplicate); restconf through
bench/fake_controller.py; controller-mount against fake_controller with a fleet registering to it and
a scenario whose event is marked; reconcile of a hand-written simulator report against the notify
manifest (and of 1,200 devices, more than the page draws). `fleetsim-stress report` turns them into pages that Chromium renders
(--dump-dom, --screenshot): each section's chart holds the manifest's points (the page writes
data-points on each chart's container after Chart.js drew), the screenshot is not one colour, the
console has no error, a diff of two edit runs names exactly the parameter changed (and flags two), and
bad manifests exit 2 with no file. FLEETSIM_WRITE_SCREENSHOTS=1 writes docs/images/report-edit.png.

Run: /usr/bin/python3 test_report.py <path to fleetsim> <path to fleetsim-stress>
"""

import collections
import html.parser
import json
import os
import random
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import zlib

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "bench"))
import fleetsim_harness as h  # noqa: E402
import fake_controller  # noqa: E402
from test_stress_notify import Device, NotifyServers, report_device  # noqa: E402

STRESS = None
CHROMIUM = "/usr/bin/chromium"
RUN_LIMIT_S = 60.0
DEST = ("/restconf/data/network-topology:network-topology/topology=topology-netconf/node={DEVICE_PORT}-sim-device"
        "/yang-ext:mount/ietf-interfaces:interfaces")
CONTENT = '{"ietf-interfaces:interface":[{"name":"rc-{PEERID}-{INTLEAF}","type":"iana-if-type:ethernetCsmacd"}]}'
BACKOFF = dict(reconnect_delay=0.2, reconnect_factor=1.5, reconnect_max_delay=1.0, max_attempts=100)


class Charts(html.parser.HTMLParser):
    """The dumped DOM's chart containers (data-chart -> attributes), diff tables and flags."""

    def __init__(self):
        super().__init__()
        self.charts = {}
        self.diffs = {}   # mode -> the parameters its diff table names
        self.flags = []   # classes of the flag paragraphs
        self.notes = {}   # data-chart -> the text of its note paragraph
        self.ready = False
        self._chart = None  # the chart container being read
        self._in_note = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "p" and self._chart and "note" in (a.get("class") or "").split():
            self._in_note = True
        if "data-chart" in a:
            self.charts[a["data-chart"]] = a
            self._chart = a["data-chart"]
        if tag == "table" and "diff" in (a.get("class") or "").split():
            self.diffs[a["data-mode"]] = a.get("data-differ", "").split()
        if "flag" in (a.get("class") or "").split():
            self.flags.append(a)
        if tag == "body" and a.get("data-ready") == "1":
            self.ready = True

    def handle_endtag(self, tag):
        if tag == "p":
            self._in_note = False
        elif tag == "div":
            self._chart = None

    def handle_data(self, data):
        if self._in_note:
            self.notes[self._chart] = self.notes.get(self._chart, "") + data


def png_is_one_colour(path):
    """True when the PNG's decoded scanlines use a handful of byte values (one colour, any filter)."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    raw = zlib.decompress(idat)
    return len(set(raw)) < 16


# ---------------------------------------------------------------- ceiling manifests (issue 30)
# A fixture following the ceiling manifest's contract, until a real ceiling run writes one: 10 devices
# against a collector that serves 130 messages/s, flushing every 10 s (a sawtooth queue).

CEIL_DEVICES = 10
CEIL_SERVICE = 130.0
CEIL_WINDOW = 60.0
CEIL_SAMPLE = 2.0


def least_squares(points):
    """(slope, intercept) of y over x."""
    n = len(points)
    mx = sum(p[0] for p in points) / n
    my = sum(p[1] for p in points) / n
    sxx = sum((p[0] - mx) ** 2 for p in points)
    slope = sum((p[0] - mx) * (p[1] - my) for p in points) / sxx
    return slope, my - slope * mx


def ceiling_cell(index, phase, per_device, base, verdict=None, window=CEIL_WINDOW, sample=CEIL_SAMPLE):
    """A cell offered per_device x CEIL_DEVICES messages/s; counters start at base (absolute, as read)."""
    offered = per_device * CEIL_DEVICES
    growth = max(0.0, offered - CEIL_SERVICE)  # what the collector cannot drain piles up
    samples, t = [], 0.0
    while t <= window + 1e-9:
        queue = int(growth * t + (t % 10.0) * offered * 0.05)  # sawtooth: a batch flushed every 10 s
        sent = base + int(offered * t)
        samples.append({"t": round(t, 3), "sent": sent, "arrived": sent, "persisted": sent - queue,
                        "queue": queue, "dropped": 0})
        t += sample
    settle, last = [], samples[-1]
    depth, t = last["queue"], last["t"]
    while depth > 0:
        t += sample
        depth = max(0, int(depth - CEIL_SERVICE * sample))
        settle.append({"t": round(t, 3), "sent": last["sent"], "arrived": last["arrived"],
                       "persisted": last["arrived"] - depth, "queue": depth, "dropped": 0})
    slope, intercept = least_squares([(s["t"], s["queue"]) for s in samples])
    half = samples[len(samples) // 2:]
    slope_half, _ = least_squares([(s["t"], s["queue"]) for s in half])
    threshold = max(0.01 * offered, 0.5)
    if verdict is None:
        verdict = "positive" if slope > threshold and slope_half > threshold else "flat"
    end = settle[-1] if settle else last
    return {"index": index, "phase": phase, "per_device_rate": per_device, "offered_rate": offered,
            "devices": CEIL_DEVICES, "verdict": verdict,
            "why": "queue slope %+.2f/s %s %.2f/s" % (slope, "above" if verdict == "positive" else "within",
                                                     threshold),
            "threshold": threshold, "slope": slope, "intercept": intercept, "slope_last_half": slope_half,
            "observed_per_device_rate": per_device * 0.998, "persisted_rate": min(offered, CEIL_SERVICE),
            "peak_depth": max(s["queue"] for s in samples), "sent": end["sent"] - base,
            "arrived": end["arrived"] - base, "persisted": end["persisted"] - base, "dropped": {"overrun": 0},
            "loss_in": 0.0, "loss_inside": 0.0, "window_s": window, "elapsed_s": last["t"], "cut_short": False,
            "started": "2026-12-07T19:00:10.000Z", "samples": samples, "settle": settle}


def ceiling_manifest(version, quantity="sustained_ceiling"):
    """A run of --measure all: service rate, baseline, the search, loss isolation, baseline again."""
    plan = [("service-rate", 40.0, None), ("baseline", 4.0, None), ("search", 8.0, None), ("search", 16.0, None),
            ("search", 12.0, None), ("search", 14.0, None), ("search", 13.0, "discarded"),
            ("loss-isolation", 6.0, None), ("baseline-again", 4.0, None)]
    cells, base = [], 1000
    for i, (phase, rate, verdict) in enumerate(plan):
        window = 10.0 if phase == "service-rate" else CEIL_WINDOW
        c = ceiling_cell(i, phase, rate, base, verdict, window)
        if verdict == "discarded":
            c["observed_per_device_rate"] = 11.6
            c["why"] = "observed 11.6/s per device, 10.8% off the level (drift 5%)"
        cells.append(c)
        base += c["sent"]
    search = [c["verdict"] for c in cells if c["phase"] in ("baseline", "search")]
    assert search == ["flat", "flat", "positive", "flat", "positive", "discarded"], search
    li = cells[7]
    sent = sum(c["sent"] for c in cells)
    persisted = sum(c["persisted"] for c in cells)
    m = {
        "tool": "fleetsim-stress", "mode": "ceiling", "version": version,
        "started": "2026-12-07T19:00:00.000Z", "ended": "2026-12-07T19:10:00.000Z", "elapsed_s": 600.0,
        "interrupted": False, "signal": None, "measure": "all", "measured_quantity": quantity,
        "sut": {"collector_version": "stand-in 1", "queue": "per source"},
        "controls": {"generator": "fleetsim", "generator_version": version, "devices": CEIL_DEVICES, "group": None,
                     "channel": "syslog", "format": "rfc5424", "transport": "udp", "collector_version": "stand-in 1",
                     "first_device": 0, "last_device": CEIL_DEVICES - 1},
        "rules": {"window_s": CEIL_WINDOW, "sample_s": CEIL_SAMPLE, "precision": 0.05, "slope_share": 0.01,
                  "slope_floor": 0.5, "drift": 0.05, "tolerance": 0.005, "identity_tolerance": 0.15,
                  "early_factor": 4, "early_min_share": 0.33, "settle_s": 30, "from": 4, "to": 100000,
                  "burst_rate": 40, "burst_s": 10,
                  "slope_test": "positive when the least-squares slope of the queue depth over the whole window "
                                "and over its second half both exceed max(slope_share x offered, slope_floor) "
                                "messages/s"},
        "probes": {"arrived": "cmd:cat arrived", "persisted": "cmd:cat persisted", "queue": "cmd:cat queue",
                   "dropped": {"overrun": "cmd:cat overrun"}, "service_time": "cmd:cat st",
                   "batch_size": "cmd:cat batch", "workers": "cmd:cat workers"},
        "silence": {"checked": True, "seconds": 10.0, "sent_before": 1000, "sent_after": 1000, "silent": True},
        "reconciliation": {
            "sent": sent, "arrived": sent, "persisted": persisted, "drop_counters": {"overrun": 0},
            "loss_isolation_run": {"per_device_rate": 6.0, "rate": 60.0, "sent": li["sent"], "arrived": li["arrived"],
                                   "persisted": li["persisted"], "share": 0.0, "within_tolerance": True,
                                   "queue_slope": "flat"}},
        "observed": {
            "service_time_ms": {"statistic_used": "mean", "count": 12, "p50": 60.0, "mean": 61.5, "min": 45.0,
                                "max": 90.0},
            "messages_per_work_unit": 8.0, "concurrent_workers": 1, "queue_slope": "flat",
            "ordering_preserved": True,
            "ordering": {"file": "persisted.log", "sources": CEIL_DEVICES, "lines": persisted, "inversions": 0,
                         "run_tag": "r1"},
            "identity": {"predicted": 130.1, "measured": 130.0, "error": 0.0008, "reproduces": True,
                         "against": "service_rate"}},
        "service_rate": {"rate": CEIL_SERVICE, "per_device_burst_rate": 40, "burst_s": 10,
                         "peak_depth": cells[0]["peak_depth"], "drain_s": 21.0, "points": 10, "cell": 0, "why": None},
        "result": {"quantity": "sustained_ceiling", "rate": 120.0, "per_device_rate": 12.0, "devices": CEIL_DEVICES,
                   "valid": True, "why": "the highest level whose queue held flat for its whole window",
                   "regression": False, "answer_cell": 4},
        "cells": cells,
        "discarded": [{"index": 6, "per_device_rate": 13.0, "why": cells[6]["why"]}],
    }
    if quantity == "service_rate":
        m["measure"] = "service-rate"
        m["cells"] = cells[:1]
        m["result"] = {"quantity": "service_rate", "rate": CEIL_SERVICE, "per_device_rate": CEIL_SERVICE / 10,
                       "devices": CEIL_DEVICES, "valid": True, "why": "the drain of a burst at 40/s per device",
                       "regression": False, "answer_cell": None}
        m["observed"]["queue_slope"] = "positive"
        m["reconciliation"]["loss_isolation_run"] = None
        m["discarded"] = []
    return m


class SlowCollector:
    """A stand-in syslog collector on a loopback UDP port: every datagram arrives in a queue that one
    worker persists to a file at SERVICE messages/s; the counts are files a cmd: probe cats."""

    SERVICE = 100.0

    def __init__(self, work):
        self.work = work
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        for _ in range(20):
            try:
                self.sock.bind(("127.0.0.1", random.randrange(h.PORT_LOW, h.PORT_HIGH)))
                break
            except OSError:
                continue
        self.port = self.sock.getsockname()[1]
        self.sock.settimeout(0.1)
        self.queue = collections.deque()
        self.counts = {"arrived": 0, "persisted": 0}
        self.stopping = threading.Event()
        self.log = open(os.path.join(work, "persisted.log"), "w")
        self.publish()
        self.threads = [threading.Thread(target=f, daemon=True) for f in (self.receive, self.persist)]
        for t in self.threads:
            t.start()

    def probe(self, name):
        return "cmd:cat " + os.path.join(self.work, name)

    def publish(self):
        for k, v in self.counts.items():
            tmp = os.path.join(self.work, k + ".tmp")
            with open(tmp, "w") as f:
                f.write("%d\n" % v)
            os.replace(tmp, os.path.join(self.work, k))

    def receive(self):
        while not self.stopping.is_set():
            try:
                self.queue.append(self.sock.recv(65535))
            except socket.timeout:
                continue
            self.counts["arrived"] += 1

    def persist(self):
        credit, last = 0.0, time.monotonic()
        while not self.stopping.wait(0.02):
            now = time.monotonic()
            credit, last = min(credit + (now - last) * self.SERVICE, self.SERVICE), now
            while credit >= 1 and self.queue:
                self.log.write(self.queue.popleft().decode(errors="replace").rstrip("\n") + "\n")
                self.counts["persisted"] += 1
                credit -= 1
            self.log.flush()
            self.publish()

    def stop(self):
        self.stopping.set()
        for t in self.threads:
            t.join()
        self.sock.close()
        self.log.close()


class CeilingPage(html.parser.HTMLParser):
    """A ceiling page's verdicts: p.answer, flags by data-flag, checks by data-check, cell rows by data-cell."""

    def __init__(self):
        super().__init__()
        self.answers = []   # (attributes, text) of each p.answer
        self.flags = {}     # data-flag -> text
        self.checks = {}    # data-check -> [(data-ok, text)], a run after another
        self.cells = []     # (data-cell, data-verdict, data-answer) of each cells-table row
        self.text = ""      # all the body's text
        self._p = None      # the p being read: (kind, attributes, text list)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr" and "data-cell" in a:
            self.cells.append((a["data-cell"], a["data-verdict"], a.get("data-answer")))
        if tag == "p" and ("answer" in (a.get("class") or "").split() or "data-flag" in a or "data-check" in a):
            self._p = (a, [])

    def handle_endtag(self, tag):
        if tag == "p" and self._p:
            a, text = self._p
            text = "".join(text)
            if "data-flag" in a:
                self.flags[a["data-flag"]] = text
            elif "data-check" in a:
                self.checks.setdefault(a["data-check"], []).append((a.get("data-ok"), text))
            else:
                self.answers.append((a, text))
            self._p = None

    def handle_data(self, data):
        self.text += data
        if self._p:
            self._p[1].append(data)


class ReportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="fleetsim-report-")
        cls.m = {}
        try:
            cls.make_netconf_snmp_manifests()
            cls.make_notify_manifest()
            cls.make_reconcile_manifests()
            cls.make_restconf_manifest()
            cls.make_controller_mount_manifest()
            cls.make_ceiling_manifest()
        except BaseException:
            shutil.rmtree(cls.work, ignore_errors=True)
            raise

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    @classmethod
    def run_mode(cls, name, argv):
        path = os.path.join(cls.work, name + ".json")
        r = h.run_stress(STRESS, argv + ["--json", path], path, RUN_LIMIT_S)
        assert r.manifest is not None, str(r)
        cls.m[name] = (path, r.manifest)
        return r

    @classmethod
    def make_netconf_snmp_manifests(cls):
        with h.Fleet(devices=4, threads=1) as fleet:
            base = ["--port", fleet.port, "--device-count", 4]
            for name, edits, threads in (("edit1", 3000, 2), ("edit2", 4000, 2), ("edit3", 4000, 4)):
                r = cls.run_mode(name, ["edit"] + base + ["--edits", edits, "--thread-amount", threads,
                                                          "--async-requests", "true"])
                assert r.code == 0, str(r)
            r = cls.run_mode("mount", ["mount"] + base)
            assert r.code == 0, str(r)
            r = cls.run_mode("snmp", ["snmp"] + base + ["--rounds", 3])
            assert r.code == 0, str(r)

    @classmethod
    def make_notify_manifest(cls):
        n = 40
        devices = [Device(range(1, n + 1)), Device([s for s in range(1, n + 1) if s != 20]),
                   Device(list(range(1, 31)) + [30] + list(range(31, n + 1))), Device(range(1, n + 1))]
        with NotifyServers(devices) as srv:
            cls.run_mode("notify", ["notify", "--port", srv.port, "--device-count", 4, "--seq-element", "seq",
                                    "--idle-timeout", 1])

    @classmethod
    def run_reconcile(cls, name, report, received):
        sent = os.path.join(cls.work, name + "-report.json")
        with open(sent, "w") as f:
            json.dump(report, f)
        path = os.path.join(cls.work, name + ".json")
        p = subprocess.run([STRESS, "reconcile", "--sent", sent, "--received", received, "--json", path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=h.scaled(30))
        assert p.returncode == 1, p.stderr.decode()  # not all OK
        with open(path) as f:
            cls.m[name] = (path, json.load(f))

    @classmethod
    def make_reconcile_manifests(cls):
        received, notify = cls.m["notify"]
        port = notify["parameters"]["port"]
        local = [d["local"] for d in notify["devices"]]
        # OK, LOSS (device 1 missed one), DUP (device 2 had a duplicate), OK, MISSING (not in the manifest).
        cls.run_reconcile("recon", {"devices": [report_device(i, port + i, 40, [(local[i], 40)]) for i in range(4)]
                                    + [report_device(4, port + 4, 7, [("127.0.0.1:9", 7)])]}, received)
        # 1,200 devices notify never saw, device i sent i: MISSING but device 0; notify's 4 are PHANTOM.
        # Their ports start above the harness's range (h.PORT_HIGH), where notify's servers never are.
        base = h.PORT_HIGH + 1000
        cls.run_reconcile("recon-big", {"devices": [report_device(i, base + i, i) for i in range(1200)]},
                          received)

    @classmethod
    def make_restconf_manifest(cls):
        content = os.path.join(cls.work, "edit.json")
        with open(content, "w") as f:
            f.write(CONTENT)
        controller = fake_controller.Controller(0)
        try:
            with h.Fleet(devices=2, threads=1) as fleet:
                r = cls.run_mode("restconf", [
                    "restconf", "--port", controller.http.server_address[1], "--destination", DEST,
                    "--edits", 60, "--thread-amount", 2, "--same-device", "false",
                    "--device-port-range-start", fleet.port, "--throttle", 4, "--edit-content", content,
                    "--timeout", 1])
                assert r.code == 0, str(r)
        finally:
            controller.stop()

    @classmethod
    def make_controller_mount_manifest(cls):
        scenario = {"fleetsim-scenario:scenario": {"seed": "5", "start": [{"group": "default", "devices": 2}],
                    "event": [{"name": "join", "at": "%dms" % (h.scaled(1.0) * 1000), "grow": {"devices": 2}}]}}
        path = os.path.join(cls.work, "scenario.json")
        with open(path, "w") as f:
            json.dump(scenario, f)
        controller = fake_controller.Controller(0, **BACKOFF)
        try:
            port = controller.http.server_address[1]
            fleet, base = h.start_with_metrics(4, ["--controller-ip", "127.0.0.1", "--controller-port", str(port),
                                                   "--scenario", path], True, 8)
            try:
                r = cls.run_mode("cm", ["controller-mount", "--url", "http://127.0.0.1:%d/restconf" % port,
                                        "--device-count", 4, "--interval", 0.2, "--timeout", h.scaled(4.0),
                                        "--events", base])
                assert r.code == 0, str(r)
            finally:
                fleet.stop()
        finally:
            controller.stop()

    @classmethod
    def make_ceiling_manifest(cls):
        """A short real `ceiling --measure all` of 2 devices' syslog against SlowCollector (windows of seconds)."""
        work = tempfile.mkdtemp(prefix="collector-", dir=cls.work)
        collector = SlowCollector(work)
        try:
            fleet, base = h.start_with_metrics(2, ["--syslog-sink", "udp://127.0.0.1:%d" % collector.port])
            try:
                r = cls.run_mode("ceil-real", [
                    "ceiling", "--fleet", base, "--arrived", collector.probe("arrived"),
                    "--persisted", collector.probe("persisted"), "--measure", "all", "--from", 10,
                    "--window", "2s", "--sample", "0.25s", "--settle", "3s", "--burst", "2s", "--burst-rate", 150,
                    "--precision", 0.3])
                assert r.code in (0, 1), str(r)
            finally:
                fleet.stop()
        finally:
            collector.stop()

    # ------------------------------------------------------------ helpers

    def report(self, names, out="r.html"):
        out = os.path.join(self.work, out)
        p = subprocess.run([STRESS, "report"] + [self.m[n][0] for n in names] + ["-o", out],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=h.scaled(30))
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        with open(out) as f:
            text = f.read()
        self.assertNotIn("http://", text.split("<script>")[0])  # the head links nothing
        return out

    def chromium(self, args):
        profile = tempfile.mkdtemp(prefix="chromium-", dir=self.work)
        p = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                            "--disable-background-networking", "--disable-component-update", "--disable-sync",
                            "--no-first-run", "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0",
                            "--virtual-time-budget=5000"] + args,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=h.scaled(90))
        err = p.stderr.decode(errors="replace")
        self.assertEqual(p.returncode, 0, err)
        for bad in ("Uncaught", "ERROR:CONSOLE"):
            self.assertNotIn(bad, err)
        return p.stdout.decode(errors="replace")

    def render(self, path):
        parser = Charts()
        parser.feed(self.chromium(["--dump-dom", "file://" + path]))
        self.assertTrue(parser.ready, "the page's script did not finish")
        return parser

    def points(self, page, name):
        c = page.charts[name]
        self.assertEqual(c.get("data-drawn"), "1", (name, c))
        return int(c["data-points"])

    # ------------------------------------------------------------ tests

    def test_edit_page_has_its_charts_and_a_screenshot(self):
        path = self.report(["edit1"])
        m = self.m["edit1"][1]
        page = self.render(path)
        counts = m["results"]["latency_histogram"]["counts"]
        self.assertEqual(m["results"]["latency_histogram"]["buckets_per_decade"], 10)
        self.assertEqual(sum(counts), m["results"]["edits_answered"])
        self.assertEqual(self.points(page, "edit-latency"), len(counts))
        self.assertEqual(self.points(page, "edit-latency-cdf"), len(counts))
        ps = m["per_second"]
        self.assertEqual(sum(ps["ok"]), m["results"]["edits_ok"] + m["results"]["commits_ok"])
        self.assertEqual(self.points(page, "edit-rate"), len(ps["ok"]) + len(ps["errors"]))
        self.assertIn("edit-errors", page.charts)
        shot = os.path.join(self.work, "edit.png")
        self.chromium(["--screenshot=" + shot, "--window-size=1280,1600", "file://" + path])
        self.assertFalse(png_is_one_colour(shot), "the screenshot is one colour")
        if os.environ.get("FLEETSIM_WRITE_SCREENSHOTS") == "1":
            dest = os.path.join(h.SOURCE_DIR, "docs", "images", "report-edit.png")
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(shot, dest)

    def test_every_mode_in_one_page(self):
        path = self.report(["edit1", "mount", "snmp", "notify", "restconf", "cm", "recon"])
        page = self.render(path)
        snmp = self.m["snmp"][1]
        self.assertEqual(self.points(page, "snmp-collection"),
                         len(snmp["results"]["collection_time_histogram"]["counts"]))
        self.assertEqual(sum(snmp["results"]["collection_time_histogram"]["counts"]), snmp["results"]["completed"])
        self.assertEqual(self.points(page, "snmp-response"), len(snmp["results"]["response_time_histogram"]["counts"]))
        self.assertEqual(self.points(page, "snmp-fit"), len(snmp["results"]["fit_points"]["requests"]))
        self.assertEqual(self.points(page, "snmp-timeouts"), 3 * len(snmp["per_second"]["timeouts"]))
        notify = self.m["notify"][1]
        self.assertEqual(self.points(page, "notify-rate"), len(notify["buckets"]))
        self.assertGreater(len(notify["buckets"]), 0)
        self.assertEqual(self.points(page, "notify-devices"), len(notify["devices"]))
        bad = [d for d in notify["devices"] if d["gaps"] or d["missing"] or d["duplicates"] or d["reordered"]]
        self.assertEqual(len(bad), 2, notify["devices"])
        self.assertEqual(self.points(page, "notify-order"), 4 * len(bad))
        mount = self.m["mount"][1]
        self.assertEqual(self.points(page, "mount-hello"), len(mount["results"]["time_to_hello_histogram"]["counts"]))
        self.assertEqual(sum(mount["results"]["time_to_hello_histogram"]["counts"]), mount["results"]["mounted"])
        self.assertEqual(self.points(page, "mount-sessions"), len(mount["per_second"]["mounted"]))
        self.assertEqual(sum(mount["per_second"]["mounted"]) - sum(mount["per_second"]["lost"]),
                         mount["results"]["mounted_at_end"])
        self.assertEqual(self.points(page, "mount-failures"), len(mount["results"]["failures"]))
        rc = self.m["restconf"][1]
        self.assertEqual(self.points(page, "restconf-latency"), len(rc["results"]["latency_histogram"]["counts"]))
        self.assertEqual(sum(rc["results"]["latency_histogram"]["counts"]), rc["results"]["requests_answered"])
        self.assertEqual(self.points(page, "restconf-rate"), 2 * len(rc["per_second"]["ok"]))
        cm = self.m["cm"][1]
        self.assertEqual(self.points(page, "controller-mount-curve"), 3 * len(cm["curve"]))
        self.assertGreaterEqual(len(cm["events"]), 1)
        self.assertEqual(int(page.charts["controller-mount-curve"]["data-marks"]), len(cm["events"]))
        recon = self.m["recon"][1]
        self.assertEqual(self.points(page, "reconcile-classes"), len(recon["results"]["counts"]))
        self.assertEqual(self.points(page, "reconcile-devices"), 2 * len(recon["devices"]))
        # Several modes: flagged as not comparable.
        self.assertTrue(any(f.get("id") == "diff-flag" for f in page.flags), page.flags)

    def test_reconcile_draws_classes_and_devices(self):
        m = self.m["recon"][1]
        self.assertEqual(m["results"]["counts"], {"OK": 2, "LOSS": 1, "DUP": 1, "MISSING": 1, "PHANTOM": 0})
        path = self.report(["recon", "recon-big"])
        page = self.render(path)
        # The page's data: the big run's rows sorted by loss (sent - received), worst first.
        with open(path) as f:
            text = f.read()
        start = text.index(">", text.index('id="fleetsim-runs"')) + 1
        runs = json.loads(text[start:text.index("</script>", start)])
        drawn = runs[1]["recon_devices"]
        losses = [(d["sent"] or 0) - d["received"] for d in drawn]
        self.assertEqual((len(drawn), drawn[0]["device"], losses), (1000, 1199, sorted(losses, reverse=True)))
        # Devices by class: a bar per class and run.
        self.assertEqual(self.points(page, "reconcile-classes"), 2 * len(m["results"]["counts"]))
        self.assertEqual(page.charts["reconcile-classes"]["data-datasets"], "2")
        # Per device, sent and received: a bar each per row of the manifest.
        self.assertEqual(self.points(page, "reconcile-devices"), 2 * len(m["devices"]))
        self.assertEqual(page.charts["reconcile-devices"]["data-cut"], "0")
        # 1,200 rows: the 1,000 worst losses are drawn, and the page says so.
        big = self.m["recon-big"][1]
        self.assertEqual(len(big["devices"]), 1204)  # and notify's 4, PHANTOM
        c = page.charts["reconcile-devices-1"]
        self.assertEqual(self.points(page, "reconcile-devices-1"), 2 * 1000)
        self.assertEqual((c["data-devices"], c["data-cut"]), ("1204", "1"))
        self.assertEqual(page.notes["reconcile-devices-1"], "the 1000 worst of 1204 devices drawn")

    def test_two_runs_differing_in_one_parameter_name_it(self):
        page = self.render(self.report(["edit1", "edit2"]))
        self.assertEqual(page.diffs["edit"], ["parameters.edits"])
        self.assertFalse(page.flags, page.flags)
        # Overlaid: one dataset per run.
        self.assertEqual(page.charts["edit-latency"]["data-datasets"], "2")
        self.assertEqual(self.points(page, "edit-latency"),
                         sum(len(self.m[n][1]["results"]["latency_histogram"]["counts"]) for n in ("edit1", "edit2")))

    def test_two_runs_differing_in_two_parameters_are_flagged(self):
        page = self.render(self.report(["edit1", "edit3"]))
        self.assertEqual(sorted(page.diffs["edit"]), ["parameters.edits", "parameters.thread_amount"])
        self.assertEqual([f.get("data-mode") for f in page.flags], ["edit"])

    def test_bad_manifests_exit_2_and_write_nothing(self):
        with open(self.m["edit1"][0]) as f:
            text = f.read()
        good = json.loads(text)
        cases = {"truncated.json": text[:len(text) // 2],
                 "version.json": json.dumps(dict(good, version="9.0.0")),
                 "other.json": json.dumps(dict(good, tool="some-other-tool"))}
        for name, body in cases.items():
            with self.subTest(name=name):
                path = os.path.join(self.work, name)
                with open(path, "w") as f:
                    f.write(body)
                out = os.path.join(self.work, "bad.html")
                p = subprocess.run([STRESS, "report", self.m["edit1"][0], path, "-o", out],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=h.scaled(30))
                err = p.stderr.decode()
                self.assertEqual(p.returncode, 2, err)
                self.assertEqual(len(err.strip().splitlines()), 1, err)
                self.assertIn(path, err)
                self.assertFalse(os.path.exists(out))
                self.assertEqual([n for n in os.listdir(self.work) if n.startswith("bad.html")], [])


    # ------------------------------------------------------------ ceiling (issue 30)

    def ceiling(self, name, m):
        """Write manifest m as NAME.json, known to report() by name."""
        path = os.path.join(self.work, name + ".json")
        with open(path, "w") as f:
            json.dump(m, f)
        self.m[name] = (path, m)
        return m

    def render_ceiling(self, names):
        path = self.report(names, out="ceiling.html")
        dom = self.chromium(["--dump-dom", "file://" + path])
        charts, page = Charts(), CeilingPage()
        charts.feed(dom)
        page.feed(dom)
        self.assertTrue(charts.ready, "the page's script did not finish")
        return charts, page

    def test_ceiling_page_draws_the_search(self):
        m = self.ceiling("ceil", ceiling_manifest(self.m["edit1"][1]["version"]))
        charts, page = self.render_ceiling(["ceil"])
        # The headline: the quantity labelled, the answer, valid.
        self.assertEqual(len(page.answers), 1, page.answers)
        a, text = page.answers[0]
        self.assertEqual((a["data-quantity"], a["data-rate"], a["data-valid"]), ("sustained_ceiling", "120", "1"))
        self.assertIn("Sustained ceiling: 120/s for the fleet (12/s per device x 10 devices)", text)
        self.assertEqual(page.flags, {})
        # The cells table: every cell in run order with its verdict; the answer is cell 4 (12/s per device).
        self.assertEqual([(c, v) for c, v, _ in page.cells], [(str(c["index"]), c["verdict"]) for c in m["cells"]])
        self.assertEqual([c for c, _, ans in page.cells if ans == "1"], ["4"])
        self.assertIn(m["discarded"][0]["why"], page.text)
        # A queue chart per cell: its samples and settle samples drawn, the fitted line beside them.
        for c in m["cells"]:
            name = "ceiling-queue-%d" % c["index"]
            self.assertEqual(self.points(charts, name), len(c["samples"]) + len(c["settle"]), name)
            box = charts.charts[name]
            self.assertEqual(box["data-verdict"], c["verdict"], name)
            # The fitted line drawn: intercept + slope x t from the window's first sample to its last.
            ends = json.loads(box["data-fit"])
            t0, t1 = c["samples"][0]["t"], c["samples"][-1]["t"]
            self.assertEqual([p["x"] for p in ends], [t0, t1], name)
            for p, t in zip(ends, (t0, t1)):
                self.assertAlmostEqual(p["y"], c["intercept"] + c["slope"] * t, places=6)
            self.assertEqual(box["data-answer"], "1" if c["index"] == 4 else "0", name)
            self.assertAlmostEqual(float(box["data-slope"]), c["slope"], places=2)
        # Offered, arrived, persisted per cell, the answer marked.
        rates = charts.charts["ceiling-rates"]
        self.assertEqual(self.points(charts, "ceiling-rates"), 3 * len(m["cells"]))
        self.assertEqual((rates["data-answer-cell"], rates["data-answer-rate"]), ("4", "120"))
        self.assertEqual(rates["data-mark-points"], str(len(m["cells"])))  # the line at the answer
        # The checks, each with its verdict.
        self.assertEqual(page.checks["loss-isolation"][0][0], "1")
        self.assertIn("Passed", page.checks["loss-isolation"][0][1])
        self.assertEqual(page.checks["silence"][0][0], "1")
        self.assertEqual(page.checks["ordering"][0][0], "1")
        self.assertIn("0 inversions", page.checks["ordering"][0][1])
        self.assertEqual(page.checks["identity"][0][0], "1")
        self.assertIn("predicted 130.1/s against measured 130/s", page.checks["identity"][0][1])
        self.assertIn("Service rate 130/s", page.checks["service-rate"][0][1])
        # The drain from the burst's peak down to 0 at the service rate.
        sr = m["cells"][0]
        peak = max(sr["samples"] + sr["settle"], key=lambda s: s["queue"])
        drain = json.loads(charts.charts["ceiling-drain"]["data-fit"])
        self.assertEqual(drain[0], {"x": peak["t"], "y": peak["queue"]})
        self.assertAlmostEqual(drain[1]["x"], peak["t"] + peak["queue"] / CEIL_SERVICE, places=6)
        self.assertEqual(drain[1]["y"], 0)
        self.assertEqual(self.points(charts, "ceiling-drain"), len(m["cells"][0]["samples"]) +
                         len(m["cells"][0]["settle"]))

    def test_ceiling_page_of_a_real_run(self):
        m = self.m["ceil-real"][1]
        self.assertEqual((m["mode"], m["measured_quantity"]), ("ceiling", "sustained_ceiling"))
        charts, page = self.render_ceiling(["ceil-real"])
        a, text = page.answers[0]
        self.assertEqual(a["data-quantity"], "sustained_ceiling")
        self.assertTrue(text.startswith("Sustained ceiling: "), text)
        self.assertEqual(a["data-rate"], "n/a" if m["result"]["rate"] is None else
                         "%g" % round(m["result"]["rate"], 3))
        self.assertEqual([(c, v) for c, v, _ in page.cells], [(str(c["index"]), c["verdict"]) for c in m["cells"]])
        phases = [c["phase"] for c in m["cells"]]
        self.assertEqual((phases[0], phases[1], phases[-1]), ("service-rate", "baseline", "baseline-again"))
        for c in m["cells"]:
            name = "ceiling-queue-%d" % c["index"]
            if not c["samples"] and not c["settle"]:
                self.assertEqual(charts.charts[name]["data-points"], "0", name)  # said, not drawn
                continue
            self.assertEqual(self.points(charts, name), len(c["samples"]) + len(c["settle"]), name)
            if c["slope"] is not None and c["intercept"] is not None:
                ends = json.loads(charts.charts[name]["data-fit"])
                self.assertAlmostEqual(ends[-1]["y"], c["intercept"] + c["slope"] * c["samples"][-1]["t"], places=6)
        answer = m["result"].get("answer_cell")
        self.assertEqual(charts.charts["ceiling-rates"]["data-answer-cell"], "" if answer is None else str(answer))
        self.assertEqual(page.checks["ordering"][0], ("", "not checked (no --ordering)"))
        self.assertIn("ceiling-drain", charts.charts)

    def test_ceiling_verdicts_interrupted_service_rate_regression(self):
        version = self.m["edit1"][1]["version"]
        m = ceiling_manifest(version)
        m.update(interrupted=True, signal="SIGINT", cells=m["cells"][:4])
        m["result"].update(valid=False, why="interrupted before the search finished")
        self.ceiling("ceil-int", m)
        m = ceiling_manifest(version)
        m["observed"].update(ordering_preserved=False)
        m["observed"]["ordering"]["inversions"] = 3
        m["result"]["regression"] = True
        m["silence"].update(sent_after=1200, silent=False)
        del m["result"]["answer_cell"]  # a manifest that does not name it: the page finds the answer's cell
        self.ceiling("ceil-reg", m)
        self.ceiling("ceil-sr", ceiling_manifest(version, "service_rate"))
        charts, page = self.render_ceiling(["ceil-int", "ceil-reg", "ceil-sr", "edit1"])
        self.assertEqual([a["data-quantity"] for a, _ in page.answers],
                         ["sustained_ceiling", "sustained_ceiling", "service_rate"])
        self.assertTrue(page.answers[2][1].startswith("Service rate: 130/s for the fleet"), page.answers[2])
        self.assertIn("Interrupted by SIGINT", page.flags["interrupted"])
        self.assertIn("interrupted before the search finished", page.flags["invalid"])
        self.assertIn("3 inversions", page.flags["regression"])
        # Each run's sections, one after another: the charts of the second and third are numbered.
        self.assertEqual(self.points(charts, "ceiling-queue-3"), len(m["cells"][3]["samples"]) +
                         len(m["cells"][3]["settle"]))
        self.assertIn("ceiling-1-queue-8", charts.charts)
        self.assertEqual(charts.charts["ceiling-1-rates"]["data-answer-cell"], "4")
        self.assertEqual([ok for ok, _ in page.checks["silence"]], ["1", "0", "1"])
        self.assertIn("Not silent: sent moved from 1000 to 1200", page.checks["silence"][1][1])
        self.assertEqual([ok for ok, _ in page.checks["ordering"]], ["1", "0", "1"])
        self.assertIn("ceiling-2-drain", charts.charts)
        self.assertNotIn("ceiling-2-queue-1", charts.charts)
        # Mixed with another mode: that mode's charts are drawn as before.
        self.assertEqual(self.points(charts, "edit-latency"),
                         len(self.m["edit1"][1]["results"]["latency_histogram"]["counts"]))

    def test_ceiling_cells_and_samples_are_capped(self):
        m = ceiling_manifest(self.m["edit1"][1]["version"])
        long_cell = ceiling_cell(0, "search", 4.0, 0, window=10000.0, sample=2.0)  # 5001 samples
        m["cells"] = [long_cell] + [dict(m["cells"][1], index=i) for i in range(1, 250)]
        self.ceiling("ceil-big", m)
        path = self.report(["ceil-big"], out="ceil-big.html")
        with open(path) as f:
            text = f.read()
        start = text.index(">", text.index('id="fleetsim-runs"')) + 1
        run = json.loads(text[start:text.index("</script>", start)])[0]
        self.assertEqual((run["cells_total"], len(run["cells"])), (250, 200))
        kept = run["cells"][0]["samples"]
        self.assertEqual((len(kept), run["cells"][0]["samples_total"]), (2000, 5001))
        # Evenly thinned: the first and last kept, steps of 2.5 samples (5 s) apart.
        self.assertEqual((kept[0]["t"], kept[-1]["t"]), (0.0, long_cell["samples"][-1]["t"]))
        steps = {round(b["t"] - a["t"], 3) for a, b in zip(kept, kept[1:])}
        self.assertLessEqual(steps, {4.0, 6.0}, steps)

    def test_ceiling_manifest_with_malformed_cells_is_refused(self):
        good = ceiling_manifest(self.m["edit1"][1]["version"])
        cases = {"cells-string.json": (dict(good, cells="three"), '"cells" is not an array'),
                 "cells-absent.json": ({k: v for k, v in good.items() if k != "cells"}, '"cells" is absent'),
                 "cells-number.json": (dict(good, cells=[good["cells"][0], 7]), "cell 1 (of \"cells\") is not an object"),
                 "samples.json": (dict(good, cells=[dict(good["cells"][0], samples=[1, 2])]),
                                  'cell 0 has a "samples" element that is not an object'),
                 "no-result.json": ({k: v for k, v in good.items() if k != "result"}, '"result" object')}
        for name, (body, why) in cases.items():
            with self.subTest(name=name):
                path = os.path.join(self.work, name)
                with open(path, "w") as f:
                    json.dump(body, f)
                out = os.path.join(self.work, "bad-ceiling.html")
                p = subprocess.run([STRESS, "report", path, "-o", out],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=h.scaled(30))
                err = p.stderr.decode()
                self.assertEqual(p.returncode, 2, err)
                self.assertEqual(len(err.strip().splitlines()), 1, err)
                self.assertIn(path + ": a ceiling manifest ", err)
                self.assertIn(why, err)
                self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    STRESS = h.take_binaries_arguments()
    if not os.access(CHROMIUM, os.X_OK):
        sys.exit("test_report needs headless Chromium at %s (apt-get install chromium)" % CHROMIUM)
    unittest.main(verbosity=2)
