"""fleetsim-stress over SSH (--ssh true) against fleetsim --ssh true: edits that land (read back with
ncclient over SSH), mounts with get-schema, notifications counted in order, a wrong password that fails the run with its reason, and
public-key login with --ssh-key.

Run: /usr/bin/python3 test_stress_ssh.py <path to fleetsim> <path to fleetsim-stress> [unittest options]
Loopback only, random ports below 32000, every wait bounded.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402
from ncclient import manager  # noqa: E402

STRESS = None  # path to fleetsim-stress, from the command line
RUN_LIMIT_S = 60.0
STRESS_NAME = re.compile(r"<name>(stress-\d+-\d+)</name>")


class StressSshTests(unittest.TestCase):
    def fleet(self, extra=(), devices=4):
        state = tempfile.mkdtemp(prefix="fleetsim-stress-ssh-state-")
        self.addCleanup(shutil.rmtree, state, True)
        f = h.Fleet(devices=devices, extra=["--ssh", "true", "--state-dir", state] + list(extra)).start()
        self.addCleanup(f.stop)
        return f

    def stress(self, f, mode, *args):
        work = tempfile.mkdtemp(prefix="fleetsim-stress-ssh-")
        self.addCleanup(shutil.rmtree, work, True)
        manifest = os.path.join(work, "run.json")
        host, port = f.addr(0)
        argv = [mode, "--ip", host, "--port", str(port), "--ssh", "true", "--msg-timeout", "20",
                "--json", manifest] + [str(a) for a in args]
        return h.run_stress(STRESS, argv, manifest, RUN_LIMIT_S)

    def running_names(self, f, i, username="admin", password="admin"):
        host, port = f.addr(i)
        with manager.connect(host=host, port=port, username=username, password=password, hostkey_verify=False,
                             look_for_keys=False, allow_agent=False, timeout=h.scaled(10)) as m:
            return sorted(STRESS_NAME.findall(m.get_config(source="running").xml))

    def test_edit_over_ssh_lands_on_each_sessions_device(self):
        f = self.fleet()
        r = self.stress(f, "edit", "--username", "admin", "--password", "admin", "--edits", 2000,
                        "--thread-amount", 2, "--device-count", 2, "--candidate-datastore", "false")
        self.assertEqual(r.code, 0, r)
        self.assertIn("2000 sent, 2000 answered: 2000 ok, 0 rpc-error", r.out, r)
        self.assertIs(r.manifest["parameters"]["ssh"], True, r)
        # Session s talks to device s and sends edits s*1000 .. s*1000+999 (stress-{SESSION}-{INDEX}).
        for d in range(2):
            want = sorted("stress-%d-%d" % (d, i) for i in range(d * 1000, d * 1000 + 1000))
            self.assertEqual(self.running_names(f, d), want, "device %d\n%s" % (d, r))
        for d in range(2, 4):
            self.assertEqual(self.running_names(f, d), [], "device %d was not in the run\n%s" % (d, r))

    def test_mount_over_ssh_fetches_schemas_from_every_device(self):
        f = self.fleet()
        r = self.stress(f, "mount", "--device-count", 4, "--on-mount", "get-schema")
        self.assertEqual(r.code, 0, r)
        self.assertIn("mounted: 4 of 4", r.out, r)
        self.assertIn("failures: none", r.out, r)
        self.assertIs(r.manifest["parameters"]["ssh"], True, r)
        # Mounting again works: the sessions of the first run were closed cleanly on both sides.
        again = self.stress(f, "mount", "--device-count", 4, "--on-mount", "get-schema")
        self.assertEqual(again.code, 0, again)

    def test_notify_over_ssh_receives_every_notification_in_order(self):
        routes = os.path.join(h.SOURCE_DIR, "notifications", "routes-1.xml")
        with open(routes) as src:
            text = src.read().replace("<rate-per-device>10</rate-per-device>", "<rate-per-device>200</rate-per-device>")
        text = text.replace("<count>1000</count>", "<count>300</count>")
        work = tempfile.mkdtemp(prefix="fleetsim-stress-ssh-notif-")
        self.addCleanup(shutil.rmtree, work, True)
        nfile = os.path.join(work, "routes.xml")
        with open(nfile, "w") as out:
            out.write(text)
        f = self.fleet(["--notification-file", nfile], devices=3)
        r = self.stress(f, "notify", "--device-count", 3, "--count", 300, "--seq-element", "sequence")
        self.assertEqual(r.code, 0, r)
        results = r.manifest["results"]
        self.assertEqual(results["total_received"], 900, r)
        self.assertEqual((results["order"]["gaps"], results["order"]["duplicates"], results["order"]["reordered"]),
                         (0, 0, 0), r)
        self.assertIs(r.manifest["parameters"]["ssh"], True, r)

    def test_wrong_password_fails_the_run_with_the_reason(self):
        f = self.fleet()
        r = self.stress(f, "edit", "--username", "admin", "--password", "not-this", "--edits", 10)
        self.assertEqual(r.code, 1, r)
        self.assertIn('auth (SSH authentication as "admin" refused (password))', r.err, r)
        self.assertEqual(self.running_names(f, 0), [], r)
        m = self.stress(f, "mount", "--password", "not-this", "--device-count", 2)
        self.assertEqual(m.code, 1, m)
        self.assertIn("failures: auth 2", m.out, m)

    def test_ssh_key_logs_in_without_the_password(self):
        work = tempfile.mkdtemp(prefix="fleetsim-stress-keys-")
        self.addCleanup(shutil.rmtree, work, True)
        key = os.path.join(work, "id")
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key], check=True,
                       timeout=h.scaled(20))
        authorized = os.path.join(work, "authorized_keys")
        shutil.copy(key + ".pub", authorized)
        f = self.fleet(["--authorized-keys", authorized])
        r = self.stress(f, "edit", "--ssh-key", key, "--password", "not-this", "--edits", 20)
        self.assertEqual(r.code, 0, r)
        self.assertEqual(len(self.running_names(f, 0)), 20, r)

    def test_ssh_options_that_do_not_fit_are_usage_errors(self):
        for args, text in ((["snmp", "--ssh", "true"], "--ssh is for edit, mount and notify"),
                           (["edit", "--ssh", "false", "--ssh-key", "/nonexistent"],
                            "--ssh-key is for SSH; it cannot be combined with --ssh false")):
            p = subprocess.run([STRESS] + args, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=h.scaled(10))
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(text, p.stderr)
        p = subprocess.run([STRESS, "edit", "--ssh", "true", "--ssh-key", "/nonexistent"],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=h.scaled(10))
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("--ssh-key /nonexistent", p.stderr)


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        sys.exit("usage: %s <path to fleetsim> <path to fleetsim-stress> [unittest options]" % sys.argv[0])
    STRESS = sys.argv.pop(1)
    unittest.main(verbosity=2)
