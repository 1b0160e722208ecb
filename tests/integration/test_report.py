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

import html.parser
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
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


if __name__ == "__main__":
    STRESS = h.take_binaries_arguments()
    if not os.access(CHROMIUM, os.X_OK):
        sys.exit("test_report needs headless Chromium at %s (apt-get install chromium)" % CHROMIUM)
    unittest.main(verbosity=2)
