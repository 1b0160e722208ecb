"""fleetsim-stress mount --reconnect (issue 17): it behaves as a controller's connector. Sessions lost
when the fleet goes away and comes back are connected again after a backoff, and the report counts the
losses and the time from each loss to mounted again; a fleet that is not there yet at the start is
mounted when it appears; without --reconnect the same loss fails the run.

Run: /usr/bin/python3 test_mount_reconnect.py <path to fleetsim> <path to fleetsim-stress>
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
DEVICES = 5


def hold(seconds):
    """--hold's value: @seconds, longer where the build is slower (sanitizers), as the waits are."""
    return str(int(h.scaled(seconds) + 0.999))


class MountReconnect(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="fleetsim-reconnect-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.manifest = os.path.join(self.tmp, "mount.json")

    def mount(self, port, *extra):
        argv = [STRESS, "mount", "--port", str(port), "--device-count", str(DEVICES), "--ssh", "false",
                "--json", self.manifest] + list(extra)
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def finish(self, proc):
        out, err = proc.communicate(timeout=h.scaled(60))
        with open(self.manifest) as f:
            return proc.returncode, out, err, json.load(f)["results"]

    def test_sessions_lost_in_a_reload_are_mounted_again(self):
        fleet = h.Fleet(devices=DEVICES).start()
        self.addCleanup(fleet.stop)
        proc = self.mount(fleet.port, "--reconnect", "--hold", hold(9))
        time.sleep(h.scaled(1.5))  # every device mounted
        fleet.restart(pause_s=1.0)  # every session lost; refused for a second, then back
        code, out, err, r = self.finish(proc)
        self.assertEqual(code, 0, out + err)
        self.assertEqual((r["losses"], r["reconnects"], r["mounted_at_end"]), (DEVICES, DEVICES, DEVICES), out)
        self.assertIn("reconnect: %d lost, %d mounted again, 0 not mounted now" % (DEVICES, DEVICES), out)
        # the first wait is drawn in [1 s, 2 s]; the fleet was away for about a second
        self.assertGreaterEqual(r["time_to_reconnect_us"]["p50"], 1000000, out)
        self.assertLess(r["time_to_reconnect_us"]["max"], h.scaled(8) * 1000000, out)
        self.assertGreaterEqual(r["retries"], DEVICES)

    def test_a_fleet_that_appears_later_is_mounted(self):
        fleet = h.Fleet(devices=DEVICES).start()
        port = fleet.port
        fleet.stop()  # the ports are known and nothing listens on them
        proc = self.mount(port, "--reconnect", "--hold", hold(1))
        time.sleep(h.scaled(1.0))
        fleet._start_once(h.scaled(h.READY_TIMEOUT_S))
        self.addCleanup(fleet.stop)
        code, out, err, r = self.finish(proc)
        self.assertEqual(code, 0, out + err)
        self.assertEqual((r["mounted"], r["losses"]), (DEVICES, 0), out)
        self.assertGreater(r["failures"]["refused"], 0, "the first attempts were refused")

    def test_without_reconnect_a_loss_fails_the_run(self):
        fleet = h.Fleet(devices=DEVICES).start()
        self.addCleanup(fleet.stop)
        proc = self.mount(fleet.port, "--hold", hold(4))
        time.sleep(h.scaled(1.5))
        fleet.restart()
        code, out, err, r = self.finish(proc)
        self.assertEqual(code, 1, out + err)
        self.assertIn("sessions failed", err)
        self.assertFalse(r["reconnect"])

    def test_devices_not_back_at_the_end_fail_the_run(self):
        fleet = h.Fleet(devices=DEVICES).start()
        proc = self.mount(fleet.port, "--reconnect", "--hold", hold(3))
        time.sleep(h.scaled(1.5))
        fleet.stop()  # gone for good
        code, out, err, r = self.finish(proc)
        self.assertEqual(code, 1, out + err)
        self.assertIn("%d of %d devices not mounted at the end" % (DEVICES, DEVICES), err)
        self.assertEqual((r["losses"], r["reconnects"], r["mounted_at_end"]), (DEVICES, 0, 0))


if __name__ == "__main__":
    STRESS = h.take_binaries_arguments()
    unittest.main(verbosity=2, warnings=False)
