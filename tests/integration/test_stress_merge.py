"""fleetsim-stress merge and reconcile of several files: a load split over several client processes (as
over several hosts) and a fleet split over several simulators, joined back into one result.

Three `fleetsim-stress edit` processes run at once against different devices of one fleet, and their
manifests merge: edits_sent is the sum, the merged histogram holds every answered edit, the window covers
every run, the differing --port is listed, and `fleetsim-stress report` renders the merged file. Two
mount processes merge as a second mode; an edit and a mount manifest do not merge (exit 2, the file
named). Two fleetsim processes, each with its own devices and --report, stream notifications to two
notify processes; reconcile of both reports and both notify manifests gives one line per device of both.

Run: /usr/bin/python3 test_stress_merge.py <path to fleetsim> <path to fleetsim-stress>
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402

STRESS = None
RUN_LIMIT_S = 60.0
NOTIFICATIONS = os.path.join(h.SOURCE_DIR, "notifications", "routes-10.xml")


class StressMergeTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="fleetsim-merge-test-")
        self.fleets = []

    def tearDown(self):
        for f in self.fleets:
            f.kill()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def fleet(self, devices, extra=()):
        f = h.Fleet(devices=devices, extra=list(extra))
        self.fleets.append(f)
        return f.start()

    def at_once(self, argvs):
        """Run several fleetsim-stress processes at the same time; [(code, stdout, stderr)]."""
        procs = [subprocess.Popen([STRESS] + [str(a) for a in argv], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE) for argv in argvs]
        out = []
        for p, argv in zip(procs, argvs):
            try:
                o, e = p.communicate(timeout=h.scaled(RUN_LIMIT_S))
            except subprocess.TimeoutExpired:
                for q in procs:
                    q.kill()
                self.fail("fleetsim-stress %s did not end in time" % " ".join(map(str, argv)))
            out.append((p.returncode, o.decode(errors="replace"), e.decode(errors="replace")))
        return out

    def stress(self, argv, code=0):
        p = subprocess.run([STRESS] + [str(a) for a in argv], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=h.scaled(RUN_LIMIT_S))
        out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
        self.assertEqual(p.returncode, code, "fleetsim-stress %s\n--- stdout\n%s--- stderr\n%s"
                         % (" ".join(map(str, argv)), out, err))
        return out, err

    def load(self, name):
        with open(self.path(name)) as f:
            return json.load(f)

    def assert_window_covers(self, merged, runs):
        for r in runs:
            self.assertLessEqual(merged["started_unix_s"], r["started_unix_s"])
            self.assertGreaterEqual(merged["ended_unix_s"], r["ended_unix_s"])
        self.assertAlmostEqual(merged["started_unix_s"], min(r["started_unix_s"] for r in runs), places=5)
        self.assertAlmostEqual(merged["ended_unix_s"], max(r["ended_unix_s"] for r in runs), places=5)

    def test_three_edit_runs_at_once_merge_exactly(self):
        f = self.fleet(6)
        edits = [300, 400, 500]
        runs = self.at_once([["edit", "--port", f.port + 2 * k, "--device-count", 2, "--thread-amount", 2,
                              "--edits", n, "--json", self.path("e%d.json" % k)] for k, n in enumerate(edits)])
        for code, out, err in runs:
            self.assertEqual(code, 0, out + err)
        out, err = self.stress(["merge", self.path("e0.json"), self.path("e1.json"), self.path("e2.json"),
                                "-o", self.path("merged.json")])
        inputs = [self.load("e%d.json" % k) for k in range(3)]
        m = self.load("merged.json")
        r = m["results"]
        self.assertEqual(m["mode"], "edit")
        self.assertEqual(r["edits_sent"], sum(edits))
        self.assertEqual(r["edits_sent"], sum(i["results"]["edits_sent"] for i in inputs))
        self.assertEqual(r["edits_answered"], sum(i["results"]["edits_answered"] for i in inputs))
        self.assertEqual(sum(r["latency_histogram"]["counts"]), r["edits_answered"])
        self.assertEqual(r["latency_us"]["max"], max(i["results"]["latency_us"]["max"] for i in inputs))
        self.assertTrue(r["complete"])
        self.assert_window_covers(m, inputs)
        self.assertAlmostEqual(r["elapsed_s"], m["ended_unix_s"] - m["started_unix_s"], places=5)
        # elapsed_s is written to the microsecond: over a window of some 10 ms that is 1e-4 of the rate.
        rate = r["edits_answered"] / r["elapsed_s"]
        self.assertAlmostEqual(r["requests_per_second"], rate, delta=max(0.01, rate * 1e-3))
        self.assertEqual(sum(m["per_second"]["ok"]), sum(sum(i["per_second"]["ok"]) for i in inputs))
        self.assertEqual(m["parameters"]["port"], [f.port, f.port + 2, f.port + 4])
        self.assertEqual(m["parameters"]["edits"], edits)
        self.assertEqual(m["parameters"]["device_count"], 2)
        self.assertEqual([e["file"] for e in m["merged_from"]], [self.path("e%d.json" % k) for k in range(3)])
        self.assertEqual([e["edits_sent"] for e in m["merged_from"]], edits)
        self.assertTrue(all(re.fullmatch("[0-9a-f]{64}", e["sha256"]) for e in m["merged_from"]))
        # A line per input and one for the total.
        self.assertEqual(len(re.findall(r"^.*e[0-2]\.json: edit, started .*, edits_sent \d+$", out, re.M)), 3, out)
        self.assertRegex(out, r"(?m)^merged 3 runs: edit, started .*, edits_sent %d$" % sum(edits))
        # The merged manifest reads as one run's: report renders it, and --json names the output too.
        self.stress(["report", self.path("merged.json"), "-o", self.path("x.html")])
        self.assertGreater(os.path.getsize(self.path("x.html")), 1000)
        self.stress(["merge", self.path("e0.json"), self.path("e1.json"), "--json", self.path("two.json")])
        self.assertEqual(self.load("two.json")["results"]["edits_sent"], edits[0] + edits[1])

    def test_two_mount_runs_merge_and_modes_do_not_mix(self):
        f = self.fleet(4)
        runs = self.at_once([["mount", "--port", f.port + 2 * k, "--device-count", 2,
                              "--json", self.path("m%d.json" % k)] for k in range(2)])
        for code, out, err in runs:
            self.assertEqual(code, 0, out + err)
        self.stress(["merge", self.path("m0.json"), self.path("m1.json"), "-o", self.path("mm.json")])
        inputs = [self.load("m%d.json" % k) for k in range(2)]
        m = self.load("mm.json")
        self.assertEqual(m["results"]["mounted"], 4)
        self.assertEqual(sum(m["results"]["time_to_hello_histogram"]["counts"]), 4)
        self.assertEqual(sum(m["per_second"]["mounted"]), 4)
        self.assertEqual(m["results"]["time_to_hello_us"]["max"],
                         max(i["results"]["time_to_hello_us"]["max"] for i in inputs))
        self.assert_window_covers(m, inputs)
        self.stress(["report", self.path("mm.json"), "-o", self.path("m.html")])
        # An edit manifest does not merge with mount's.
        self.stress(["edit", "--port", f.port, "--edits", 10, "--json", self.path("e.json")])
        out, err = self.stress(["merge", self.path("m0.json"), self.path("e.json"), "-o", self.path("no.json")],
                               code=2)
        self.assertIn("%s is a manifest of fleetsim-stress edit, but %s is of fleetsim-stress mount"
                      % (self.path("e.json"), self.path("m0.json")), err)
        self.assertFalse(os.path.exists(self.path("no.json")))

    def test_reconcile_joins_two_simulators_reports(self):
        fleets = [self.fleet(2, ["--notification-file", NOTIFICATIONS, "--notification-rate", "100",
                                 "--report", self.path("r%d.json" % k)]) for k in range(2)]
        runs = self.at_once([["notify", "--port", f.port, "--device-count", 2, "--duration", 2,
                              "--json", self.path("n%d.json" % k)] for k, f in enumerate(fleets)])
        for code, out, err in runs:
            self.assertEqual(code, 0, out + err)
        for f in fleets:
            f.stop()
        # The notify manifests merge too: their devices joined, their counts added.
        self.stress(["merge", self.path("n0.json"), self.path("n1.json"), "-o", self.path("nm.json")])
        nm = self.load("nm.json")
        self.assertEqual(len(nm["devices"]), 4)
        self.assertEqual(nm["results"]["total_received"],
                         sum(self.load("n%d.json" % k)["results"]["total_received"] for k in range(2)))
        self.assertGreater(nm["results"]["total_received"], 0)
        for received in (["--received", self.path("n0.json"), "--received", self.path("n1.json")],
                         ["--received", self.path("nm.json")]):
            out, err = self.stress(["reconcile", "--sent", self.path("r0.json"), "--sent", self.path("r1.json")]
                                   + received)
            lines = [l for l in out.splitlines() if l.startswith("OK ")]
            self.assertEqual(len(lines), 4, out)
            for f in fleets:
                for i in range(2):
                    self.assertEqual(len([l for l in lines if " 127.0.0.1:%d " % (f.port + i) in l]), 1, out)
            self.assertRegex(out, r"totals: OK 4, LOSS 0, DUP 0, MISSING 0, PHANTOM 0")
        # The same report twice is one device each; a device with other counts in two reports is refused.
        out, err = self.stress(["reconcile", "--sent", self.path("r0.json"), "--sent", self.path("r0.json"),
                                "--received", self.path("n0.json")])
        self.assertRegex(out, r"totals: OK 2,")
        r1 = self.load("r1.json")
        r0 = self.load("r0.json")
        r1["devices"][0]["address"], r1["devices"][0]["port"] = r0["devices"][0]["address"], r0["devices"][0]["port"]
        with open(self.path("clash.json"), "w") as fh:
            json.dump(r1, fh)
        out, err = self.stress(["reconcile", "--sent", self.path("r0.json"), "--sent", self.path("clash.json"),
                                "--received", self.path("n0.json")], code=2)
        self.assertIn("is in two files with different counts", err)


if __name__ == "__main__":
    STRESS = h.take_binaries_arguments()
    unittest.main(verbosity=2)
