"""fleetsim-stress mount --reconnect --events URL: the recovery loop measured without a controller. The mount
run fetches the fleet's events (GET /api/v1/events) and polls its own sessions (node-id "<port>-sim-device",
connected when the hello is done); each event's loss and healing land in the summary and the manifest as
controller-mount writes them. A reboot through the control API heals and touches only its devices; a
scenario's event is marked with its origin and name; a down without an up fails the run.

Run: /usr/bin/python3 test_mount_events.py <path to fleetsim> <path to fleetsim-stress>
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402

STRESS = None
DEVICES = 4


def hold(seconds):
    """--hold's value: @seconds, longer where the build is slower (sanitizers)."""
    return str(int(h.scaled(seconds) + 0.999))


class MountEvents(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="fleetsim-mount-events-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.manifest = os.path.join(self.tmp, "mount.json")

    def mount(self, fleet, base, hold_s, *extra):
        argv = [STRESS, "mount", "--port", str(fleet.port), "--device-count", str(DEVICES), "--ssh", "false",
                "--reconnect", "--hold", hold(hold_s), "--events", base, "--events-interval", "0.2",
                "--json", self.manifest] + list(extra)
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        return proc

    def finish(self, proc):
        out, err = proc.communicate(timeout=h.scaled(60))
        with open(self.manifest) as f:
            return proc.returncode, out, err, json.load(f)

    def test_a_reboot_loses_its_devices_and_heals(self):
        fleet, base = h.start_with_metrics(DEVICES)
        self.addCleanup(fleet.stop)
        proc = self.mount(fleet, base, 9)
        time.sleep(h.scaled(1.5))  # every device mounted
        self.assertEqual(h.api_request(base, "/api/v1/devices/0-1/reboot", {"for": "2s"})[0], 200)
        code, out, err, m = self.finish(proc)
        self.assertEqual(code, 0, out + err)
        self.assertEqual(len(m["events"]), 1, out)
        ev = m["events"][0]
        self.assertEqual((ev["action"], ev["origin"], ev["devices"], ev["expect"], ev["state"]),
                         ("reboot", "api", 2, "loss", "healed"), out)
        self.assertEqual(ev["lost"], 2, out)  # devices 2 and 3 stayed connected
        # back after 2 s; mount's backoff (first wait in [1 s, 2 s], then up to 3 s) adds at most ~3 s
        self.assertGreaterEqual(ev["healed_s"], 2.0 - 0.3, out)
        self.assertLess(ev["healed_s"], h.scaled(5.5), out)
        self.assertEqual(m["results"]["losses"], 2, out)  # only the rebooted sessions were lost
        self.assertEqual(m["events_errors"], 0, out)
        self.assertGreater(m["events_fetches"], 5, out)
        self.assertIsInstance(m["fleet_seed"], int)
        self.assertIsNone(m["scenario"])
        self.assertRegex(out, r"event %d reboot at [0-9.]+ s \(api\)" % ev["seq"])
        self.assertIn("(api), 2 devices: lost 2, all connected again after", out)

    def test_a_scenario_event_is_marked_with_its_name_and_heals(self):
        path = os.path.join(self.tmp, "scenario.json")
        with open(path, "w") as f:
            json.dump({"fleetsim-scenario:scenario": {"seed": "3", "event": [
                {"name": "reboot-half", "at": "%dms" % (h.scaled(1.5) * 1000), "share": "0.5",
                 "reboot": {"for": "1500ms"}}]}}, f)
        fleet, base = h.start_with_metrics(DEVICES, ["--scenario", path])
        self.addCleanup(fleet.stop)
        proc = self.mount(fleet, base, 9)
        code, out, err, m = self.finish(proc)
        self.assertEqual(code, 0, out + err)
        self.assertEqual(len(m["events"]), 1, out)
        ev = m["events"][0]
        self.assertEqual((ev["action"], ev["origin"], ev["event"], ev["state"]),
                         ("reboot", "scenario", "reboot-half", "healed"), out)
        self.assertGreater(ev["devices"], 0, out)  # a share of 0.5 is drawn per device (the seed's draw)
        self.assertLess(ev["devices"], DEVICES, out)
        self.assertEqual((ev["lost"], m["results"]["losses"]), (ev["devices"], ev["devices"]), out)
        self.assertGreaterEqual(ev["healed_s"], 1.5 - 0.3, out)
        self.assertEqual(m["scenario"]["seed"], 3, out)  # the fleet's, once (json.load keeps the last)
        self.assertEqual(open(self.manifest).read().count('"scenario":'), 1)
        self.assertIn("(scenario reboot-half)", out)

    def test_a_down_without_up_never_heals_and_fails_the_run(self):
        fleet, base = h.start_with_metrics(DEVICES)
        self.addCleanup(fleet.stop)
        proc = self.mount(fleet, base, 5)
        time.sleep(h.scaled(1.5))
        self.assertEqual(h.api_request(base, "/api/v1/devices/3/down", {})[0], 200)
        code, out, err, m = self.finish(proc)
        self.assertEqual(code, 1, out + err)
        ev = m["events"][0]
        self.assertEqual((ev["action"], ev["devices"], ev["lost"], ev["state"], ev["healed_s"]),
                         ("down", 1, 1, "not-healed", None), out)
        self.assertIn("NOT all connected again by the end", out)
        self.assertRegex(err, r"FAILED: event [0-9]+ down \(1 nodes\) at [0-9.]+ s: 1 lost")

    def test_events_without_reconnect_is_refused(self):
        proc = subprocess.run([STRESS, "mount", "--events", "http://127.0.0.1:9", "--ssh", "false"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=h.scaled(10))
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("--events goes with --reconnect", proc.stderr)


if __name__ == "__main__":
    STRESS = h.take_binaries_arguments()
    unittest.main(verbosity=2, warnings=False)
