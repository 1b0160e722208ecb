"""fleetsim-stress push against the real fleetsim (issue 31): YANG-Push periodic and on-change subscriptions.

- periodic: 10 devices, period 0.5 s, 5 s: every device's updates land on their slots (eventTime is the slot),
  none missed or duplicated, and with --fleet-report the counts reconcile exactly with the fleet's report
  (GET /api/v1/report: its per-subscription rows, kept after close-session);
- on-change: the client's own edits (a second session per device) each come back as a push-change-update
  carrying the edit's number, the latency from the edit's rpc-reply is reported, and the change updates
  reconcile with the fleet's report;
- an on-change subscription over counters is refused with on-change-unsupported, named in the failure;
- SIGINT keeps the run: summary and manifest are written, the exit code is 130.

Every run is bounded; the fleet listens on loopback, on random ports below 32768.

Run: /usr/bin/python3 test_stress_push.py <path to fleetsim> <path to fleetsim-stress>
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402

STRESS = None
RUN_LIMIT_S = 40.0
FIRST_IF = "GigabitEthernet0/0/0/0"  # the minimal profile's first interface
IF_XPATH = "/ietf-interfaces:interfaces/interface[name='%s']" % FIRST_IF


class StressPushTest(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="fleetsim-stress-push-")
        self.manifest = os.path.join(self.work, "push.json")

    def fleet(self, devices):
        fleet, base = h.start_with_metrics(devices=devices, threads=2)
        self.addCleanup(fleet.kill)
        return fleet, base

    def run_push(self, fleet, devices, args, limit_s=RUN_LIMIT_S):
        argv = ["push", "--port", fleet.port, "--device-count", devices, "--ssh", "false", "--json",
                self.manifest] + list(args)
        run = h.run_stress(STRESS, argv, self.manifest, limit_s)
        self.assertIsNotNone(run.manifest, str(run))
        return run

    def test_periodic_updates_hold_their_slots_and_reconcile_with_the_fleet(self):
        fleet, base = self.fleet(10)
        run = self.run_push(fleet, 10, ["--period", "0.5", "--duration", "5", "--xpath", IF_XPATH, "--fleet-report",
                                        base])
        self.assertEqual(run.code, 0, str(run))
        res = run.manifest["results"]
        self.assertEqual(run.manifest["mode"], "push")
        self.assertEqual(run.manifest["parameters"]["period_cs"], 50)
        self.assertEqual(res["subscribed"], 10, str(run))
        self.assertEqual(res["periods"]["missed"], 0, str(run))
        self.assertEqual(res["periods"]["duplicated"], 0, str(run))
        # eventTime is the slot: no offset at all.
        self.assertEqual(res["latency_us"]["slot_offset"]["max"], 0, str(run))
        for d in run.manifest["devices"]:
            # 5 s after all are up at 2 per second, plus the drain: 9 to 13 updates each.
            self.assertGreaterEqual(d["updates"], 9, d)
            self.assertLessEqual(d["updates"], 13, d)
            self.assertEqual(d["change_updates"], 0, d)
            self.assertIsNotNone(d["id"], d)
        self.assertEqual(res["received"]["push-update"], sum(d["updates"] for d in run.manifest["devices"]))
        self.assertIn("periods: missed 0", run.out)
        recon = res["reconciliation"]
        self.assertEqual((recon["matched"], recon["differ"], recon["missing"]), (10, 0, 0), str(run))
        self.assertEqual(recon["sent"]["updates"], res["received"]["push-update"], str(run))
        self.assertIn("10 subscriptions match exactly", run.out)

    def test_on_change_matches_every_edit_to_its_push_change_update(self):
        fleet, base = self.fleet(3)
        run = self.run_push(fleet, 3, ["--datastore", "running", "--dampening", "0", "--xpath",
                                       IF_XPATH + "/description", "--change-rate", "20", "--change-interface",
                                       FIRST_IF, "--duration", "4", "--fleet-report", base])
        self.assertEqual(run.code, 0, str(run))
        res = run.manifest["results"]
        edits = res["edits"]
        self.assertGreaterEqual(edits["sent"], 40, str(run))  # 20/s for 4 s, one in flight per device
        self.assertEqual(edits["refused"], 0, str(run))
        self.assertEqual(edits["unmatched"], 0, str(run))
        self.assertEqual(edits["matched"] + edits["in_flight"], edits["sent"], str(run))
        lat = res["latency_us"]["edit_reply_to_change_update"]
        self.assertEqual(lat["count"], edits["matched"], str(run))
        self.assertLess(lat["p50"], 1000000, str(run))
        # sync-on-start: one push-update each, then a change update per matched edit at least.
        self.assertEqual(res["received"]["push-update"], 3, str(run))
        self.assertGreaterEqual(res["received"]["push-change-update"], edits["matched"], str(run))
        self.assertIn("edit reply to push-change-update (ms, %d)" % edits["matched"], run.out)
        # Every change update the fleet says it sent arrived, and no other.
        recon = res["reconciliation"]
        self.assertEqual((recon["matched"], recon["differ"], recon["missing"]), (3, 0, 0), str(run))
        self.assertEqual(recon["sent"]["change_updates"], res["received"]["push-change-update"], str(run))

    def test_on_change_over_counters_is_refused_with_on_change_unsupported(self):
        fleet, _ = self.fleet(1)
        run = self.run_push(fleet, 1, ["--dampening", "0", "--xpath", IF_XPATH + "/statistics", "--duration", "1"])
        self.assertEqual(run.code, 1, str(run))
        self.assertEqual(run.manifest["results"]["failures"]["subscription-refused"], 1, str(run))
        self.assertIn("on-change-unsupported", run.manifest["devices"][0]["failure"], str(run))

    def test_sigint_keeps_the_run(self):
        fleet, _ = self.fleet(2)
        argv = [STRESS, "push", "--port", str(fleet.port), "--device-count", "2", "--ssh", "false", "--period",
                "0.2", "--json", self.manifest]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            time.sleep(h.scaled(2.0))
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=h.scaled(15))
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        self.assertEqual(proc.returncode, 130, (out, err))
        with open(self.manifest) as f:
            m = json.load(f)
        self.assertEqual(m["results"]["interrupted"], "SIGINT")
        self.assertGreater(m["results"]["received"]["push-update"], 0, m)
        self.assertIn(b"ended: interrupted by SIGINT", out)


if __name__ == "__main__":
    STRESS = h.take_binaries_arguments()
    unittest.main()
