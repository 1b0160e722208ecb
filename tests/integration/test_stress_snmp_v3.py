"""fleetsim-stress snmp --v3-user end to end, against fleetsim's SNMPv3 agents.

One fleet of 10 devices serves three users (authPriv SHA/AES, authNoPriv SHA-256, noAuthNoPriv); every
device is its own engine. The poller must collect with SNMPv3 exactly what it collects with v2c,
discover each engine once however many rounds it runs, keep the passwords out of its output, and end
with exit 1 and the usmStats counter by name when the agent refuses the user (wrong password, unknown
user, a level the user lacks). Every run is bounded; any mismatch prints the client's whole output.

Run: /usr/bin/python3 test_stress_snmp_v3.py <path to fleetsim> [unittest options]; fleetsim-stress is
taken from the same directory.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402

DEVICES = 10
ROUNDS = 2
RUN_LIMIT_S = 30.0
# The minimal profile's collection: numeric values per device.
MINIMAL_SAMPLES = 66
USERS = ["ops:sha:authpass1:aes:privpass1", "adm:sha256:authpass2:none:x", "mon:none:x:none:x"]
# Short waits: every refusal below is a Report, answered at once; only a broken client would wait.
FAST = ["--timeout", 500, "--retries", 1]


class Result:
    def __init__(self, args, code, out, err, manifest):
        self.args, self.code, self.out, self.err, self.manifest = args, code, out, err, manifest

    def __str__(self):
        return "fleetsim-stress %s -> exit %d\nstdout:\n%s\nstderr:\n%s" % (" ".join(self.args), self.code,
                                                                           self.out, self.err)


class StressSnmpV3Tests(unittest.TestCase):
    fleet = None

    @classmethod
    def setUpClass(cls):
        extra = []
        for user in USERS:
            extra += ["--snmp-v3-user", user]
        cls.fleet = h.Fleet(devices=DEVICES, extra=extra).start()

    @classmethod
    def tearDownClass(cls):
        if cls.fleet:
            cls.fleet.stop()

    def run_stress(self, args):
        """fleetsim-stress snmp against the whole fleet, bounded, with its manifest."""
        stress = os.path.join(os.path.dirname(h.BINARY), "fleetsim-stress")
        fd, path = tempfile.mkstemp(prefix="fleetsim-stress-v3-", suffix=".json")
        os.close(fd)
        os.unlink(path)  # the client must create it
        args = ["snmp", "--ip", self.fleet.ip, "--port", self.fleet.port, "--device-count", DEVICES,
                "--json", path] + list(args)
        args = [str(a) for a in args]
        try:
            p = subprocess.run([stress] + args, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=h.scaled(RUN_LIMIT_S), preexec_fn=lambda: h._child_setup(None))
        except subprocess.TimeoutExpired as e:
            raise AssertionError("fleetsim-stress %s did not end within %.0f s; stdout:\n%s\nstderr:\n%s"
                                 % (" ".join(args), h.scaled(RUN_LIMIT_S), e.stdout, e.stderr))
        manifest = None
        if os.path.exists(path):
            with open(path) as f:
                text = f.read()
            os.unlink(path)
            manifest = json.loads(text)
            manifest["text"] = text
        return Result(args, p.returncode, p.stdout, p.stderr, manifest)

    def ok(self, r, collections):
        """Every collection completed; returns the manifest's results."""
        self.assertEqual(r.code, 0, str(r))
        res = r.manifest["results"]
        self.assertEqual((res["completed"], res["failed"]), (collections, 0), str(r))
        self.assertEqual((res["timeouts"], res["retries"], res["malformed"], res["stray"]), (0, 0, 0, 0), str(r))
        self.assertEqual(res["samples_per_collection"]["min"], MINIMAL_SAMPLES, str(r))
        self.assertEqual(res["samples_per_collection"]["max"], MINIMAL_SAMPLES, str(r))
        return res

    def refused(self, r, counter):
        """Every collection failed on the first GETBULK with the usmStats Report @p counter."""
        self.assertEqual(r.code, 1, str(r))
        res = r.manifest["results"]
        self.assertEqual((res["completed"], res["failed"]), (0, DEVICES), str(r))
        self.assertEqual(res["failures"]["usm-report"], DEVICES, str(r))
        self.assertEqual(res["error_responses"][counter], DEVICES, str(r))
        self.assertEqual(res["engines_discovered"], DEVICES, str(r))
        self.assertEqual((res["timeouts"], res["retries"]), (0, 0), str(r))
        self.assertIn("Report %s" % counter, res["first_failure"], str(r))
        self.assertIn("FAILED: %d of %d collections failed" % (DEVICES, DEVICES), r.err, str(r))
        self.assertIn(counter, r.err, str(r))
        self.assertIn("error responses: %s %d" % (counter, DEVICES), r.out, str(r))
        return res

    def test_authpriv_sha_aes_collects_what_v2c_collects_discovering_each_engine_once(self):
        v2c = self.ok(self.run_stress(["--rounds", ROUNDS]), DEVICES * ROUNDS)
        r = self.run_stress(["--rounds", ROUNDS, "--v3-user", USERS[0]])
        v3 = self.ok(r, DEVICES * ROUNDS)
        self.assertEqual(v3["samples"], v2c["samples"], str(r))
        self.assertEqual(v3["samples"], DEVICES * ROUNDS * MINIMAL_SAMPLES, str(r))
        self.assertEqual(v3["values"], v2c["values"], str(r))
        # One discovery per device, the first collection's first request; the GETBULKs are v2c's.
        self.assertEqual(v3["engines_discovered"], DEVICES, str(r))
        self.assertEqual(v3["requests"], v2c["requests"] + DEVICES, str(r))
        self.assertEqual(v3["responses"], v3["requests"], str(r))
        self.assertEqual(v3["time_resyncs"], 0, str(r))
        self.assertEqual(v2c["engines_discovered"], 0)
        p = r.manifest["parameters"]
        self.assertEqual((p["snmp_version"], p["community"]), ("3", None))
        self.assertEqual(p["v3_user"], {"name": "ops", "auth": "sha", "priv": "aes", "level": "authPriv"})
        self.assertEqual(r.manifest["results"]["error_responses"]["usmStatsWrongDigests"], 0)
        self.assertIn("SNMPv3 user ops, authPriv (auth sha, priv aes): %d engines discovered" % DEVICES, r.out)
        for secret in ("authpass1", "privpass1"):
            self.assertNotIn(secret, r.out + r.err + r.manifest["text"], "a password leaked")

    def test_user_written_as_netsnmp_writes_it_collects_and_is_printed_lower_case(self):
        r = self.run_stress(["--v3-user", "ops:SHA:authpass1:AES-128:privpass1"])
        res = self.ok(r, DEVICES)
        self.assertEqual(res["samples"], DEVICES * MINIMAL_SAMPLES, str(r))
        self.assertEqual(r.manifest["parameters"]["v3_user"],
                         {"name": "ops", "auth": "sha", "priv": "aes", "level": "authPriv"})
        self.assertIn("SNMPv3 user ops, authPriv (auth sha, priv aes)", r.out)

    def test_sha256_authnopriv_and_noauthnopriv_users_collect(self):
        for user, level in ((USERS[1], "authNoPriv"), (USERS[2], "noAuthNoPriv")):
            with self.subTest(user=user):
                r = self.run_stress(["--v3-user", user])
                res = self.ok(r, DEVICES)
                self.assertEqual(res["samples"], DEVICES * MINIMAL_SAMPLES, str(r))
                self.assertEqual(res["engines_discovered"], DEVICES, str(r))
                self.assertEqual(r.manifest["parameters"]["v3_user"]["level"], level)

    def test_wrong_auth_password_fails_with_wrong_digests(self):
        r = self.run_stress(FAST + ["--v3-user", "ops:sha:wrongpass1:aes:privpass1"])
        self.refused(r, "usmStatsWrongDigests")
        self.assertIn("authentication password or protocol differs", r.err)

    def test_wrong_auth_protocol_fails_with_wrong_digests(self):
        self.refused(self.run_stress(FAST + ["--v3-user", "adm:sha512:authpass2:none:x"]), "usmStatsWrongDigests")

    def test_wrong_priv_password_fails_with_decryption_errors(self):
        self.refused(self.run_stress(FAST + ["--v3-user", "ops:sha:authpass1:aes:wrongpriv1"]),
                     "usmStatsDecryptionErrors")

    def test_unknown_user_fails_with_unknown_user_names(self):
        r = self.run_stress(FAST + ["--v3-user", "nobody:sha:authpass1:aes:privpass1"])
        self.refused(r, "usmStatsUnknownUserNames")
        self.assertIn("no such user", r.err)

    def test_level_the_user_lacks_fails_with_unsupported_sec_levels(self):
        self.refused(self.run_stress(FAST + ["--v3-user", "adm:sha256:authpass2:aes:privpass2"]),
                     "usmStatsUnsupportedSecLevels")

    def test_v3_against_a_fleet_without_users_times_out_after_its_retries(self):
        """A fleet without --snmp-v3-user drops v3: every collection times out after its retries."""
        with h.Fleet(devices=2) as bare:
            stress = os.path.join(os.path.dirname(h.BINARY), "fleetsim-stress")
            started = time.monotonic()
            p = subprocess.run([stress, "snmp", "--ip", bare.ip, "--port", str(bare.port), "--device-count", "2",
                                "--timeout", "200", "--retries", "1", "--v3-user", USERS[0]],
                               stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=h.scaled(RUN_LIMIT_S))
            self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
            self.assertIn("timeout", p.stderr)
            self.assertLess(time.monotonic() - started, h.scaled(10))


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2)
