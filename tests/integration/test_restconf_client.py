"""fleetsim-stress restconf end to end: through bench/fake_controller.py's stand-in into fleetsim devices.

The stand-in turns each POST to .../node=<port>-sim-device/yang-ext:mount/... into an edit-config on the
fleetsim device at that port (one NETCONF session per device) and records every request, so the tests
check what was sent (placeholders filled as OpenDaylight's REST perf client fills them, basic auth,
content type), what the run reports (statuses by code, the manifest), and that `reconcile --sent
MANIFEST --report REPORT` agrees with the fleet's own per-device edit-config counts. Loopback only,
random ports, every run bounded.

Run: /usr/bin/python3 test_restconf_client.py <fleetsim> <fleetsim-stress> [unittest options]
"""

import base64
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import fleetsim_harness as h  # noqa: E402
import fake_controller  # noqa: E402
from test_stress_notify import manifest_rows, reconcile_lines  # noqa: E402

STRESS = None
RUN_LIMIT_S = 60.0
DEST = ("/restconf/data/network-topology:network-topology/topology=topology-netconf/node={DEVICE_PORT}-sim-device"
        "/yang-ext:mount/ietf-interfaces:interfaces")
CONTENT = ('{"ietf-interfaces:interface":[{"name":"rc-{PEERID}-{INTLEAF}","type":"iana-if-type:ethernetCsmacd",'
           '"description":"{PHYS_ADDR} {PHYS_ADDR} port {DEVICE_PORT} {PEERID}"}]}')
CONTENT_XML = ('<interface xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces"><name>x-{PEERID}-{INTLEAF}</name>'
               '<type xmlns:ianaift="urn:ietf:params:xml:ns:yang:iana-if-type">ianaift:ethernetCsmacd</type>'
               '</interface>')


def mac(n):
    return ":".join("%02x" % b for b in (0xAABBCCDD0000 + n).to_bytes(6, "big"))


class RestconfTest(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="fleetsim-restconf-")
        self.report = os.path.join(self.work, "fleet.json")
        self.manifest = os.path.join(self.work, "restconf.json")
        self.content = os.path.join(self.work, "edit.json")
        with open(self.content, "w") as f:
            f.write(CONTENT)
        self.fleet = None
        self.controller = None

    def tearDown(self):
        if self.controller:
            self.controller.stop()
        if self.fleet:
            self.fleet.kill()

    def start(self, devices=2, **controller_kw):
        self.fleet = h.Fleet(devices=devices, threads=1, extra=["--report", self.report]).start()
        self.controller = fake_controller.Controller(0, **controller_kw)
        self.ctrl_port = self.controller.http.server_address[1]

    def run_restconf(self, *extra, edits=40, threads=2):
        argv = ["restconf", "--port", self.ctrl_port, "--destination", DEST, "--edits", edits,
                "--thread-amount", threads, "--same-device", "false", "--device-port-range-start",
                self.fleet.port, "--throttle", 4, "--edit-content", self.content, "--json", self.manifest,
                "--timeout", 1] + list(extra)
        return h.run_stress(STRESS, argv, self.manifest, RUN_LIMIT_S)

    def reconcile(self):
        """Stop the fleet (it writes its report at exit), then reconcile; (exit code, stdout, stderr). Its
        --json manifest is kept in self.recon, and its rows checked against the lines printed."""
        self.controller.stop()
        self.controller = None
        self.fleet.stop()
        self.fleet = None
        path = os.path.join(self.work, "reconcile.json")
        p = subprocess.run([STRESS, "reconcile", "--sent", self.manifest, "--report", self.report, "--json", path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=h.scaled(30))
        out = p.stdout.decode()
        with open(path) as f:
            self.recon = json.load(f)
        self.assertEqual(manifest_rows(self.recon), reconcile_lines(out))
        self.assertEqual(self.recon["parameters"], {"join": "restconf", "report": self.report, "sent": self.manifest,
                                                    "tolerance": 0})
        self.assertEqual(self.recon["results"]["exit"], p.returncode)
        return p.returncode, out, p.stderr.decode()

    def test_edits_reach_their_devices_and_reconcile_ok(self):
        self.start()
        run = self.run_restconf()
        self.assertEqual(run.code, 0, run)
        self.assertRegex(run.out, r"(?m)^FINISHED\. Execution time: [0-9.]+ s$")
        self.assertRegex(run.out, r"(?m)^Requests per second: [0-9.]+$")
        for line in ("thread amount: 2", "requestsPerThread: 20", "leftoverRequests: 0",
                     "Throttling per thread: 2", "Starting performance test"):
            self.assertIn(line, run.out)
        r = run.manifest["results"]
        self.assertTrue(r["complete"], run)
        self.assertEqual((r["accepted"], r["statuses"]), (40, {"201": 40}), run)
        self.assertEqual(sum(r["per_second"]), 40)
        self.assertIsNotNone(r["latency_us"]["p50"])
        devs = {d["port"]: d for d in run.manifest["devices"]}
        self.assertEqual(sorted(devs), [self.fleet.port, self.fleet.port + 1])
        for port, d in devs.items():
            self.assertEqual((d["accepted"], d["node"]), (20, "%d-sim-device" % port))
        # Placeholders as OpenDaylight fills them: the first {PEERID} the stream, {INTLEAF} the request in
        # it, the first {DEVICE_PORT} the stream's port (later ones stay), every {PHYS_ADDR} its own MAC.
        edits = self.controller.edits
        self.assertEqual(len(edits), 40)
        names, macs = set(), []
        for e in edits:
            self.assertEqual(e["method"], "POST")
            self.assertEqual(e["content_type"], "application/json")
            body = json.loads(e["body"])["ietf-interfaces:interface"][0]
            m = re.match(r"^rc-([01])-([0-9]+)$", body["name"])
            self.assertTrue(m, body)
            stream = int(m.group(1))
            self.assertEqual(e["node"], "%d-sim-device" % (self.fleet.port + stream))
            a, b, rest = body["description"].split(" ", 2)
            self.assertEqual(rest, "port %d {PEERID}" % (self.fleet.port + stream))
            names.add(body["name"])
            macs += [a, b]
        self.assertEqual(names, {"rc-%d-%d" % (s, i) for s in (0, 1) for i in range(20)})
        self.assertEqual(sorted(macs), sorted(mac(n) for n in range(80)))
        rc, out, err = self.reconcile()
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(len(re.findall(r"(?m)^OK +device .* accepted 20 edit-config received 20", out)), 2, out)
        self.assertIn("totals: OK 2, LOSS 0, DUP 0, MISSING 0; accepted 40, edit-config received 40", out)
        r = self.recon["results"]
        self.assertEqual((r["counts"]["OK"], r["sent"], r["received"], len(self.recon["devices"])), (2, 40, 40, 2))
        self.assertEqual(sorted(d["port"] for d in self.recon["devices"]), sorted(devs))

    def test_500_before_the_device_is_counted_and_reconciles_ok(self):
        self.start(fail_every=4)
        run = self.run_restconf(edits=20, threads=1, )
        self.assertEqual(run.code, 0, run)  # every request was answered: statuses are counted, not fatal
        r = run.manifest["results"]
        self.assertEqual(r["statuses"], {"201": 15, "500": 5}, run)
        self.assertEqual(r["errors"][0]["status"], 500)
        self.assertIn("stand-in 500", r["errors"][0]["first_body"])
        self.assertIn("status 500, first body: ", run.out)
        rc, out, err = self.reconcile()  # the 500s never reached the device: what it received was accepted
        self.assertEqual(rc, 0, out + err)
        self.assertRegex(out, r"(?m)^OK +device .* accepted 15 edit-config received 15")

    def test_500_after_the_device_applied_it_is_a_mismatch(self):
        self.start(fail_every=4, fail_forward=True)
        run = self.run_restconf(edits=20, threads=1)
        self.assertEqual(run.manifest["results"]["statuses"], {"201": 15, "500": 5}, run)
        rc, out, err = self.reconcile()
        self.assertEqual(rc, 1, out + err)
        self.assertRegex(out, r"(?m)^DUP +device .* accepted 15 edit-config received 20")
        self.assertEqual([(d["class"], d["sent"], d["received"]) for d in self.recon["devices"]], [("DUP", 15, 20)])

    def test_controller_closing_mid_run_ends_the_run_with_its_manifest(self):
        self.start(close_after=10)
        run = self.run_restconf(edits=50, threads=1)
        self.assertEqual(run.code, 1, run)
        self.assertIn("fleetsim-stress: FAILED: stream 0: request", run.err)
        self.assertNotIn("Requests per second", run.out)
        r = run.manifest["results"]
        self.assertFalse(r["complete"])
        self.assertTrue(r["failure"])
        # the stand-in answers the first 10; the run ends at the first connection closed, while up to 4
        # (--throttle) of those 10 may still be on their way back
        self.assertTrue(10 - 4 <= r["accepted"] <= 10, r["accepted"])
        self.assertLess(r["requests_answered"], 50)
        self.assertEqual(sum(r["per_second"]), r["requests_answered"])

    def test_auth_two_words_and_xml_content(self):
        self.start(username="alice", password="s3cret")
        with open(self.content, "w") as f:
            f.write(CONTENT_XML)
        run = self.run_restconf("--auth", "alice", "s3cret", "--content-type", "xml", edits=6)
        self.assertEqual(run.code, 0, run)
        self.assertEqual(run.manifest["results"]["statuses"], {"201": 6}, run)
        want = "Basic " + base64.b64encode(b"alice:s3cret").decode()
        self.assertEqual({e["auth"] for e in self.controller.edits}, {want})
        self.assertEqual({e["content_type"] for e in self.controller.edits}, {"application/xml"})
        run = self.run_restconf(edits=2, threads=1)  # admin admin by default: refused, counted
        self.assertEqual(run.manifest["results"]["statuses"], {"401": 2}, run)

    def test_bad_options_exit_2(self):
        for argv, text in ((["--auth"], "needs a value"), (["--auth", "u"], "--auth takes two words"),
                           (["--auth", "u", "--edits", "3"], "--auth takes two words"),
                           (["--timeout", "0"], "--timeout must be minutes"),
                           (["--destination", "restconf/x"], "must start with '/'"),
                           (["--content-type", "yaml"], "json or xml"),
                           (["--edits", "2", "--thread-amount", "3"], "every stream needs a request"),
                           (["--same-device", "maybe"], "true or false"),
                           (["--throttle", "0"], "--throttle must be")):
            p = subprocess.run([STRESS, "restconf"] + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=h.scaled(10))
            self.assertEqual(p.returncode, 2, (argv, p.stderr))
            self.assertIn(text, p.stderr.decode(), argv)
            self.assertEqual(len(p.stderr.decode().strip().splitlines()), 1, (argv, p.stderr))


if __name__ == "__main__":
    STRESS = h.take_binaries_arguments()
    unittest.main(verbosity=2, warnings=False)
