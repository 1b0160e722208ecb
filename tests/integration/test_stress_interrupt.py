"""fleetsim-stress cut short, and runs where nothing succeeded: what is left for the user.

Against one fleetsim (plain TCP, a NETCONF reply latency so edits are slow, a notification file so
subscriptions deliver), each mode is started under subprocess, given SIGINT or SIGTERM after about 2 s,
and must end as at its normal end: the summary of what was measured on stdout, the --json manifest with
"interrupted" naming the signal and results that are not zero, and exit 130 (SIGINT) or 143 (SIGTERM).
Also: runs whose output is a pipe print a progress line every 10 s; a malformed --edit-content is refused
with exit 2 before anything connects; percentiles of nothing print n/a (null in JSON); snmp lists at most
10 failed devices and says why a fit is not meaningful.

Run: /usr/bin/python3 test_stress_interrupt.py <path to fleetsim> <path to fleetsim-stress> [unittest options]
"""

import json
import os
import random
import re
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

STRESS = None  # path to fleetsim-stress, from the command line
DEVICES = 4
NOTIFICATIONS = os.path.join(h.SOURCE_DIR, "notifications", "routes-10.xml")
EDITS = 20000  # at 20 ms a reply, minutes of work: still running when the signal comes


class Run:
    """One fleetsim-stress run started in the background, with its manifest path."""

    def __init__(self, args, tmp):
        fd, self.json_path = tempfile.mkstemp(prefix="stress-", suffix=".json", dir=tmp)
        os.close(fd)
        os.unlink(self.json_path)  # the client must create it
        self.args = [STRESS] + [str(a) for a in args] + ["--json", self.json_path]
        self.proc = subprocess.Popen(self.args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, preexec_fn=lambda: h._child_setup(None))
        self.started = time.monotonic()
        self.code = self.out = self.err = self.manifest = None
        self.wall_s = None

    def stop(self, sig):
        """Send @sig, wait (bounded) and collect what the run left."""
        self.proc.send_signal(sig)
        return self.wait()

    def wait(self, limit_s=15):
        try:
            self.out, self.err = self.proc.communicate(timeout=h.scaled(limit_s))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.out, self.err = self.proc.communicate()
            raise AssertionError("%s did not end in time; stdout:\n%s\nstderr:\n%s"
                                 % (" ".join(self.args), self.out, self.err))
        self.wall_s = time.monotonic() - self.started
        self.code = self.proc.returncode
        if os.path.exists(self.json_path):
            with open(self.json_path) as f:
                self.manifest = json.load(f)
        return self

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()

    def __str__(self):
        return "%s\nexit %s after %.1f s\nstdout:\n%s\nstderr:\n%s" % (" ".join(self.args), self.code,
                                                                       self.wall_s or 0, self.out, self.err)


def free_udp_ports(n):
    """n consecutive loopback UDP ports nobody listens on (bound and released)."""
    for _ in range(20):
        base = random.randrange(h.PORT_LOW, h.PORT_HIGH - n)
        socks = []
        try:
            for i in range(n):
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                socks.append(s)
                s.bind(("127.0.0.1", base + i))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise AssertionError("no free UDP port range")


class StressInterruptTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fleet = h.Fleet(devices=DEVICES, threads=2,
                            extra=["--netconf-latency", "20ms", "--notification-file", NOTIFICATIONS]).start()

    @classmethod
    def tearDownClass(cls):
        cls.fleet.stop()  # raises unless fleetsim exits 0 on SIGTERM

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="stress-interrupt-")
        self.runs = []

    def tearDown(self):
        for r in self.runs:
            r.kill()
        for name in os.listdir(self.tmp):
            os.unlink(os.path.join(self.tmp, name))
        os.rmdir(self.tmp)

    def start(self, mode, args):
        r = Run([mode, "--ip", "127.0.0.1", "--port", self.fleet.port] + list(args), self.tmp)
        self.runs.append(r)
        return r

    def start_each(self):
        """The four modes, each long-running against the fleet: {mode: Run}."""
        return {
            "edit": self.start("edit", ["--edits", EDITS, "--candidate-datastore", "false"]),
            "mount": self.start("mount", ["--device-count", DEVICES, "--hold", 30]),
            "snmp": self.start("snmp", ["--device-count", DEVICES, "--duration", 30, "--concurrency", 2]),
            "notify": self.start("notify", ["--device-count", DEVICES, "--duration", 30]),
        }

    def assert_interrupted(self, r, sig, code):
        name = "SIGINT" if sig == signal.SIGINT else "SIGTERM"
        self.assertEqual(r.code, code, str(r))
        self.assertLess(r.wall_s, h.scaled(12), "a 30 s run should end at the signal\n%s" % r)
        self.assertIsNotNone(r.manifest, "no manifest\n%s" % r)
        self.assertEqual(r.manifest["results"]["interrupted"], name, str(r))
        self.assertIn("fleetsim-stress: interrupted by %s" % name, r.err, str(r))
        self.assertNotIn("Traceback", r.err)
        return r.manifest["results"]

    # ------------------------------------------------------------------ each mode, cut short

    def test_edit_on_sigint_reports_what_was_answered(self):
        r = self.start("edit", ["--edits", EDITS, "--candidate-datastore", "false"])
        time.sleep(h.scaled(2))
        res = self.assert_interrupted(r.stop(signal.SIGINT), signal.SIGINT, 130)
        self.assertFalse(res["complete"], str(r))
        self.assertGreater(res["edits_answered"], 10, str(r))
        self.assertLess(res["edits_answered"], EDITS, str(r))
        self.assertEqual(res["edits_ok"], res["edits_answered"], str(r))
        self.assertGreaterEqual(res["latency_us"]["p50"], 20000, "replies are delayed 20 ms\n%s" % r)
        self.assertAlmostEqual(res["requests_per_second"], res["edits_answered"] / res["elapsed_s"], delta=0.01)
        m = re.search(r"^interrupted by SIGINT: (\d+) of %d edits answered" % EDITS, r.out, re.M)
        self.assertIsNotNone(m, str(r))
        self.assertEqual(int(m.group(1)), res["edits_answered"])
        self.assertRegex(r.out, r"(?m)^latency us: p50 \d+ p90 \d+ p99 \d+ p99\.9 \d+ max \d+$")
        # OpenDaylight's line is a complete run's rate: a script must not take a partial one for it.
        self.assertNotIn("Requests per second", r.out)

    def test_edit_on_sigterm_exits_143(self):
        r = self.start("edit", ["--edits", EDITS, "--thread-amount", 2, "--device-count", 2])
        time.sleep(h.scaled(2))
        res = self.assert_interrupted(r.stop(signal.SIGTERM), signal.SIGTERM, 143)
        self.assertGreater(res["edits_answered"], 10, str(r))

    def test_mount_on_sigterm_during_hold(self):
        r = self.start("mount", ["--device-count", DEVICES, "--hold", 30])
        time.sleep(h.scaled(2))
        res = self.assert_interrupted(r.stop(signal.SIGTERM), signal.SIGTERM, 143)
        self.assertEqual((res["mounted"], res["failed"]), (DEVICES, 0), str(r))
        self.assertIsInstance(res["time_to_mounted_us"]["p50"], int)
        self.assertIn("mounted: %d of %d" % (DEVICES, DEVICES), r.out)
        self.assertRegex(r.out, r"(?m)^interrupted by SIGTERM after [\d.]+ s, holding$")

    def test_snmp_on_sigint_during_duration(self):
        r = self.start("snmp", ["--device-count", DEVICES, "--duration", 30, "--concurrency", 2])
        time.sleep(h.scaled(2))
        res = self.assert_interrupted(r.stop(signal.SIGINT), signal.SIGINT, 130)
        self.assertGreater(res["completed"], 10, str(r))
        self.assertEqual(res["failed"], 0, str(r))
        self.assertGreater(res["collection_time_ms"]["p50"], 0)
        self.assertRegex(r.out, r"(?m)^collections: %d completed, 0 failed" % res["completed"])
        # Every collection of one profile takes the same requests: the fit explains nothing and says so.
        self.assertRegex(r.out, r"(?m)^fit T = P x R \+ c over \d+ collections: not fitted \(every collection "
                                r"took the same number of requests, \d+\)$")
        self.assertNotIn("R^2", r.out)
        self.assertEqual((res["fit"]["fitted"], res["fit"]["poor_fit"]), (False, False))
        self.assertIn("same number of requests", res["fit"]["not_fitted"])

    def test_notify_on_sigint_during_duration(self):
        r = self.start("notify", ["--device-count", DEVICES, "--duration", 30])
        time.sleep(h.scaled(2))
        res = self.assert_interrupted(r.stop(signal.SIGINT), signal.SIGINT, 130)
        self.assertEqual(res["subscribed"], DEVICES, str(r))
        self.assertGreater(res["total_received"], 0, str(r))
        self.assertEqual(res["ended"], "interrupted")
        self.assertRegex(r.out, r"(?m)^ended: interrupted by SIGINT after [\d.]+ s$")
        self.assertIn("received: %d in" % res["total_received"], r.out)
        self.assertNotIn("not as asked", r.err)  # a signal is not a failure of the run

    # ------------------------------------------------------------------ progress lines in a pipe

    def test_piped_runs_print_a_progress_line_every_10_s(self):
        runs = self.start_each()
        time.sleep(11.5)
        for mode, r in runs.items():
            r.stop(signal.SIGINT)
        patterns = {
            "edit": r"\d+ of %d requests answered \(\d+\.\d/s\)" % EDITS,
            "mount": r"%d of %d mounted, 0 failed, holding" % (DEVICES, DEVICES),
            "snmp": r"\d+ collections ended \(0 failed\), \d+\.\d/s",
            "notify": r"%d of %d subscribed, 0 failed, \d+ notifications received \(\d+\.\d/s\)" % (DEVICES,
                                                                                                    DEVICES),
        }
        for mode, r in runs.items():
            with self.subTest(mode=mode):
                self.assert_interrupted(r, signal.SIGINT, 130)
                lines = re.findall(r"(?m)^t (\d+\.\d) s: (.*)$", r.err)
                self.assertTrue(lines, "no progress line\n%s" % r)
                t, text = lines[0]
                self.assertTrue(9.9 <= float(t) <= 10.6, "first line at 10 s\n%s" % r)
                self.assertRegex(text, "^%s$" % patterns[mode], str(r))
                self.assertNotIn("\r", r.err, "no terminal: no refreshed line")

    # ------------------------------------------------------------------ before the run and empty runs

    def test_malformed_edit_content_exits_2_before_connecting(self):
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.setblocking(False)
        path = os.path.join(self.tmp, "bad.xml")
        with open(path, "w") as f:
            f.write('<interfaces xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces">\n<interface>\n'
                    '<name>x-{INDEX}</name>\n</interfacs>\n</interfaces>\n')
        r = Run(["edit", "--port", listener.getsockname()[1], "--edit-content", path], self.tmp)
        self.runs.append(r)
        r.wait()
        self.assertEqual(r.code, 2, str(r))
        self.assertRegex(r.err, r'^fleetsim-stress: --edit-content "%s" is not well-formed XML: line 4: .*'
                                r'interfacs.*\n$' % re.escape(path))
        self.assertIsNone(r.manifest, "no run, no manifest")
        with self.assertRaises(BlockingIOError):
            listener.accept()  # nothing connected
        listener.close()

    def test_mount_of_nothing_prints_na_percentiles(self):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()  # nothing listens there now: the connection is refused
        r = Run(["mount", "--port", port, "--device-count", 1, "--msg-timeout", 2], self.tmp)
        self.runs.append(r)
        r.wait()
        self.assertEqual(r.code, 1, str(r))
        res = r.manifest["results"]
        self.assertEqual(res["mounted"], 0, str(r))
        self.assertEqual(res["time_to_mounted_us"], {"p50": None, "p99": None, "max": None}, str(r))
        self.assertIn("time to hello ms: p50 n/a p99 n/a max n/a", r.out)
        self.assertIsNone(res["interrupted"])

    def test_snmp_of_silent_devices_lists_ten_and_prints_na(self):
        port = free_udp_ports(15)
        r = Run(["snmp", "--port", port, "--device-count", 15, "--timeout", 100, "--retries", 0], self.tmp)
        self.runs.append(r)
        r.wait()
        self.assertEqual(r.code, 1, str(r))
        res = r.manifest["results"]
        self.assertEqual((res["completed"], res["failed"]), (0, 15), str(r))
        self.assertEqual(res["collection_time_ms"], {"p50": None, "p99": None, "max": None})
        self.assertIsNone(res["response_time_ms"]["mean"])
        self.assertEqual(len(res["failed_devices"]), 15, "the manifest keeps every failed device")
        self.assertIn("collection time ms: p50 n/a p99 n/a max n/a", r.out)
        self.assertIn("fit T = P x R + c over 0 collections: not fitted (no collection completed)", r.out)
        listed = re.findall(r"(?m)^  device (\d+) \(127\.0\.0\.1:(\d+)\) timeout$", r.out)
        self.assertEqual([int(d) for d, _ in listed], list(range(10)), str(r))
        self.assertIn("failed devices:\n  device 0 ", r.out)
        self.assertRegex(r.out, r"(?m)^  \.\.\. and 5 more \(every one in --json\)$")


if __name__ == "__main__":
    if len(sys.argv) < 3 or not all(os.access(p, os.X_OK) for p in sys.argv[1:3]):
        sys.exit("usage: %s <path to fleetsim> <path to fleetsim-stress> [unittest options]" % sys.argv[0])
    h.BINARY = sys.argv.pop(1)
    STRESS = sys.argv.pop(1)
    unittest.main()
