"""The run window and the push ledger (issue 29 items 5 and 6), seen from a plain UDP socket as the syslog
(and trap) sink, the --report file and /metrics.

--push-window START,END: before START nothing the fleet emits on its own reaches the sink and the ledger
counts it suppressed_pre_window; after END nothing new goes out on its own; what a user asks for (the
control API's flap) goes out anyway and is counted drain outside the window. A fleet with no rate set
and nothing asked of it sends nothing at all for 30 s. Every ledger row (per device and sink, and the
per-sink series with their 10-s sub-windows) keeps sent == in_window + drain and
emitted == in_window + drain + send_failures + dropped + suppressed_pre_window (+ queued).

Run: /usr/bin/python3 test_push_window.py <path to fleetsim>. Loopback only, every wait bounded.
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402
from test_control_api import api  # noqa: E402

RATE = 20  # syslog lines per device per second
DEVICES = 4
NOTIF_NS = "urn:ietf:params:xml:ns:netconf:notification:1.0"
SUBSCRIBE = '<create-subscription xmlns="%s"/>' % NOTIF_NS
ROUTES_1 = os.path.join(h.SOURCE_DIR, "notifications", "routes-1.xml")
LEDGER_FIELDS = ("emitted", "sent", "in_window", "drain", "send_failures", "dropped", "suppressed_pre_window")


class UdpSink:
    """A loopback UDP socket read by a thread of its own: every datagram with its arrival time."""

    def __init__(self):
        import threading
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.got = []  # (monotonic time, payload)
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while self.running:
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            self.got.append((time.monotonic(), data))

    def close(self):
        self.running = False
        self.thread.join(timeout=5)
        self.sock.close()

    def url(self):
        return "udp://127.0.0.1:%d" % self.port


def assert_row(test, row):
    test.assertEqual(row["sent"], row["in_window"] + row["drain"], row)
    test.assertEqual(row["emitted"], row["in_window"] + row["drain"] + row["send_failures"] + row["dropped"]
                     + row["suppressed_pre_window"] + row.get("queued", 0), row)


class PushWindowTests(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="fleetsim-window-")
        self.addCleanup(shutil.rmtree, self.work, True)
        self.report = os.path.join(self.work, "report.json")
        self.sink = UdpSink()
        self.addCleanup(self.sink.close)

    def fleet(self, extra, metrics=False):
        f, base = h.start_with_metrics(DEVICES, ["--report", self.report, "--state-dir",
                                                  os.path.join(self.work, "state")] + list(extra), metrics)
        ready = time.monotonic()  # at most one log poll after the fleet's ready
        self.addCleanup(f.kill)
        return f, base, ready

    def stop_and_report(self, f):
        f.stop()
        with open(self.report) as fh:
            report = json.load(fh)
        rows = [r for d in report["devices"] for r in d.get("syslog_sinks", [])]
        self.assertEqual(len(rows), DEVICES)
        for r in rows:
            assert_row(self, r)
            self.assertEqual(r["queued"], 0, r)
        return report, rows

    def total(self, rows, field):
        return sum(r[field] for r in rows)

    def assert_series_match_rows(self, report, rows):
        """The per-sink series (and the sum of its sub-windows) equals the devices' rows summed."""
        series = [s for s in report["ledger"]["series"] if s["sink"] == self.sink.url()]
        self.assertEqual(len(series), 1, report["ledger"])
        s = series[0]
        for field in LEDGER_FIELDS:
            self.assertEqual(s["total"][field], self.total(rows, field), (field, s["total"]))
            self.assertEqual(sum(slot[field] for slot in s["slots"]), s["total"][field], field)
        for slot in s["slots"]:
            self.assertEqual(slot["t"] % 10, 0)
            self.assertEqual(slot["sent"], slot["in_window"] + slot["drain"], slot)
        return s

    def test_nothing_reaches_the_sink_before_start_issue_29(self):
        f, _, ready = self.fleet(["--syslog-sink", self.sink.url(), "--syslog-rate", str(RATE),
                                  "--push-window", "3,", "--run-tag", "window-29"])
        time.sleep(1.5)
        self.assertEqual(self.sink.got, [], "datagrams before the window's START")
        # The running report already counts what was held back, and nothing sent.
        f.proc.send_signal(signal.SIGUSR1)
        h.wait_for(lambda: os.path.exists(self.report), 10, "the SIGUSR1 report")
        with open(self.report) as fh:
            early = json.load(fh)
        early_rows = [r for d in early["devices"] for r in d["syslog_sinks"]]
        self.assertGreater(sum(r["suppressed_pre_window"] for r in early_rows), 0, early_rows)
        self.assertEqual(sum(r["sent"] for r in early_rows), 0, early_rows)
        h.wait_for(lambda: len(self.sink.got) >= DEVICES * RATE, 10, "lines once the window opened")
        first = self.sink.got[0][0] - ready
        # "ready" is when the harness saw the ready line, a little after the fleet's own.
        self.assertGreaterEqual(first, 2.9, "first line %.3f s after ready, the window starts at 3 s" % first)
        time.sleep(0.5)
        report, rows = self.stop_and_report(f)
        time.sleep(0.2)
        self.assertEqual(report["run_tag"], "window-29")
        self.assertEqual(report["ledger"]["window"], {"start_s": 3.0, "end_s": None})
        self.assertEqual(self.total(rows, "sent"), len(self.sink.got))
        self.assertEqual(self.total(rows, "in_window"), len(self.sink.got))
        self.assertEqual(self.total(rows, "drain"), 0)
        # About 3 s of lines at RATE per device were held back (the pacing is exact; allow the edges).
        self.assertAlmostEqual(self.total(rows, "suppressed_pre_window") / (DEVICES * RATE), 3.0, delta=0.5)
        s = self.assert_series_match_rows(report, rows)
        self.assertEqual(s["slots"][0]["t"], 0)
        self.assertGreater(s["slots"][0]["suppressed_pre_window"], 0)

    def test_after_end_only_the_drain_and_what_a_user_asks_for_issue_29(self):
        f, base, ready = self.fleet(["--syslog-sink", self.sink.url(), "--syslog-rate", str(RATE),
                                     "--push-window", "0,2"], metrics=True)
        h.wait_for(lambda: time.monotonic() - ready > 4, 10)
        late = [t for t, _ in self.sink.got if t - ready > 2.3]
        self.assertEqual(late, [], "lines on the fleet's own after END")
        in_window = len(self.sink.got)
        self.assertGreater(in_window, 0)
        # An explicit flap after END goes out (its link-down and link-up lines), counted as drain.
        code, r = api(base, "/api/v1/devices/0/flap", "POST", {"for": "100ms"})
        self.assertEqual(code, 200, r)
        h.wait_for(lambda: len(self.sink.got) >= in_window + 2, 10, "the flap's lines")
        time.sleep(0.5)
        metrics = subprocess.run(["curl", "-sS", "--max-time", str(h.scaled(10)), base + "/metrics"],
                                 stdout=subprocess.PIPE, timeout=h.scaled(20), check=True).stdout.decode()
        report, rows = self.stop_and_report(f)
        self.assertEqual(self.total(rows, "sent"), len(self.sink.got))
        self.assertEqual(self.total(rows, "drain"), len(self.sink.got) - in_window)
        self.assertEqual(self.total(rows, "in_window"), in_window)
        self.assertEqual(self.total(rows, "suppressed_pre_window"), 0)
        s = self.assert_series_match_rows(report, rows)
        # /metrics: per sink, every state, with sent == in_window + drain.
        got = {}
        for st in LEDGER_FIELDS:
            m = re.search(r'^fleetsim_push_sink_messages_total\{channel="syslog",sink="%s",state="%s"\} (\d+)$'
                          % (re.escape(self.sink.url()), st), metrics, re.M)
            self.assertIsNotNone(m, st)
            got[st] = int(m.group(1))
        self.assertEqual(got["sent"], got["in_window"] + got["drain"])
        self.assertEqual(got["emitted"], got["in_window"] + got["drain"] + got["send_failures"] + got["dropped"]
                         + got["suppressed_pre_window"])
        self.assertEqual(got["sent"], s["total"]["sent"])  # nothing moved between the scrape and the stop

    def test_notification_plan_only_inside_the_window_explicit_events_drain_issue_29(self):
        f, base, ready = self.fleet(["--notification-file", ROUTES_1, "--notification-rate", "20",
                                     "--push-window", "2,4"], metrics=True)
        got = []  # (seconds after ready, message)
        with h.RawClient(f.addr(0)).hello() as c:
            h.assert_ok(c.rpc(SUBSCRIBE), "create-subscription")
            deadline = ready + 5.5
            flapped = False
            while time.monotonic() < deadline:
                if not flapped and time.monotonic() - ready > 4.8:
                    # After END: an explicit flap's if-state-change still goes out (and drains).
                    code, r = api(base, "/api/v1/devices/0/flap", "POST", {"for": "100ms"})
                    self.assertEqual(code, 200, r)
                    flapped = True
                c.sock.settimeout(max(0.01, min(0.2, deadline - time.monotonic())))
                try:
                    msg = c.recv_msg()
                except (AssertionError, OSError):
                    continue
                got.append((time.monotonic() - ready, msg))  # stamped when it arrived
            plan = [t for t, m in got if "if-state-change" not in m]
            events = [t for t, m in got if "if-state-change" in m]
            self.assertTrue(plan, "no notification of the plan at all")
            # "ready" here is when the harness saw the ready line, a little after the fleet's own.
            self.assertGreaterEqual(min(plan), 1.9, "a plan notification %.3f s after ready, START is 2 s" % min(plan))
            self.assertLessEqual(max(plan), 4.3, "a plan notification %.3f s after ready, END is 4 s" % max(plan))
            self.assertAlmostEqual(len(plan) / 20.0, 2.0, delta=0.4)
            self.assertGreaterEqual(len(events), 1, "the flap's if-state-change")
            self.assertTrue(all(t > 4.5 for t in events), events)
            report, _ = self.stop_and_report_notif(f)
        dev = [d for d in report["devices"] if d["device"] == 0][0]
        row = dev["netconf_ledger"]
        assert_row(self, row)
        self.assertEqual(row["in_window"], len(plan), row)
        self.assertEqual(row["drain"], len(events), row)
        # The plan's 2 s before START at 20/s were counted for the subscriber, not built.
        self.assertAlmostEqual(row["suppressed_pre_window"] / 20.0, 2.0, delta=0.5)
        n = dev["notifications"]
        self.assertEqual(n["emitted"], n["sent"] + n["send_failures"] + n["dropped"] + n["suppressed"], n)
        self.assertEqual(row["sent"], len(got), row)
        self.assertEqual(dev["notifications"]["sent"], row["sent"])
        series = [s for s in report["ledger"]["series"] if s["channel"] == "netconf"]
        self.assertEqual(len(series), 1, report["ledger"])
        self.assertEqual(series[0]["total"]["in_window"], len(plan))
        self.assertEqual(series[0]["total"]["drain"], len(events))

    def stop_and_report_notif(self, f):
        f.stop()
        with open(self.report) as fh:
            report = json.load(fh)
        return report, [d["netconf_ledger"] for d in report["devices"]]

    def test_bad_windows_are_refused_with_a_clear_error(self):
        for bad in ("3", "5,5", "6,5", "-1,5", "3,x", ",5"):
            code, out = h.run_fleetsim(["--device-count", "1", "--push-window", bad])
            self.assertEqual(code, 2, (bad, out))
            self.assertIn('--push-window wants START,END or START, (seconds from ready', out, bad)
            self.assertIn('not "%s"' % bad, out)

    def test_silent_fleet_sends_nothing_for_30_s_issue_29(self):
        traps = UdpSink()
        self.addCleanup(traps.close)
        f, base, _ = self.fleet(["--syslog-sink", self.sink.url(), "--trap-sink", "127.0.0.1:%d" % traps.port,
                                 "--metrics-per-device"], metrics=True)
        pattern = re.compile(r'^(fleetsim_(?:push_messages|push_sink_messages|traps|notifications|'
                             r'device_push_messages)_total(?:\{[^}]*\})?) (\d+)$', re.M)

        def counters():
            text = subprocess.run(["curl", "-sS", "--max-time", str(h.scaled(10)), base + "/metrics"],
                                  stdout=subprocess.PIPE, timeout=h.scaled(20), check=True).stdout.decode()
            return dict(pattern.findall(text))

        sub = h.RawClient(f.addr(0)).hello()
        self.addCleanup(sub.close)
        h.assert_ok(sub.rpc(SUBSCRIBE), "create-subscription")  # a subscriber, so notifications could flow
        first = counters()
        self.assertIn('fleetsim_push_messages_total{channel="syslog",state="sent"}', first)
        self.assertIn('fleetsim_push_messages_total{channel="netconf",state="sent"}', first)
        # (a device's trap rows are made with its first trap: a silent device has none, so no trap series)
        for channel in ("syslog", "netconf"):
            self.assertIn('fleetsim_device_push_messages_total{device="0",channel="%s",state="sent"}' % channel,
                          first)
        deadline = time.monotonic() + h.scaled(30)
        while time.monotonic() < deadline:
            time.sleep(min(5, max(0, deadline - time.monotonic())))
            now = counters()
            moved = {k: (first[k], v) for k, v in now.items() if first.get(k) != v}
            self.assertEqual(moved, {}, "counters moved in a fleet asked for nothing")
        self.assertEqual(self.sink.got, [])
        self.assertEqual(traps.got, [])
        sub.sock.settimeout(0.2)
        with self.assertRaises((AssertionError, OSError)):
            sub.recv_msg()  # nothing arrived for the subscriber either
        report, rows = self.stop_and_report(f)
        for field in LEDGER_FIELDS:
            self.assertEqual(self.total(rows, field), 0, field)
        for d in report["devices"]:
            for k, v in d.get("notifications", {}).items():
                if isinstance(v, int):
                    self.assertEqual(v, 0, (d["device"], k))


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2)
