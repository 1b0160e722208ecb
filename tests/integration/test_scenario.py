"""Scenarios (fleetsim --scenario FILE) and the control API's grow and shrink, seen from outside: plain TCP
connects (a device absent, present, gone again; down and its revert-after), net-snmp's snmpget (an absent
agent is silent), the control API's GET /api/v1/events (the devices each event touched, by node-id), the
--report file (the scenario's SHA-256 and seed, every event with its origin), /metrics, and a stand-in
controller that records what fleetsim registers as the fleet grows. A scenario run twice with one seed
touches the same devices; another seed touches others. Bad scenario files are refused before anything
listens, naming the file and what is wrong.

Run: /usr/bin/python3 test_scenario.py <path to fleetsim> <path to fleetsim-stress>. Loopback only, every wait bounded.
"""

import hashlib
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
from test_control_api import api, connect_outcome, snmpget  # noqa: E402
from test_controller import Controller  # noqa: E402


STRESS = None


def ms(seconds):
    """A scenario duration for @seconds of test time, scaled for sanitizer builds."""
    return "%dms" % int(h.scaled(seconds) * 1000)


def scenario_file(events, seed=None, start=None):
    doc = {"event": events}
    if seed is not None:
        doc["seed"] = str(seed)
    if start is not None:
        doc["start"] = start
    fd, path = tempfile.mkstemp(prefix="fleetsim-scenario-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump({"fleetsim-scenario:scenario": doc}, f)
    return path


def events(base, since=0):
    code, doc = api(base, "/api/v1/events?since=%d" % since)
    assert code == 200, doc
    return doc


class ScenarioTests(unittest.TestCase):
    def setUp(self):
        self.paths = []

    def tearDown(self):
        for p in self.paths:
            os.unlink(p)

    def file(self, *args, **kw):
        path = scenario_file(*args, **kw)
        self.paths.append(path)
        return path

    def test_bad_scenarios_are_refused_naming_the_file_and_the_problem(self):
        bad = {
            "not JSON": "{\"fleetsim-scenario:scenario\": {",
            "unknown member": json.dumps({"fleetsim-scenario:scenario": {"event": [
                {"name": "a", "at": "1s", "reboot": {"fro": "1s"}}]}}),
            "bad duration": json.dumps({"fleetsim-scenario:scenario": {"event": [
                {"name": "a", "at": "soon", "reboot": {}}]}}),
            "no action": json.dumps({"fleetsim-scenario:scenario": {"event": [{"name": "a", "at": "1s"}]}}),
            "no when": json.dumps({"fleetsim-scenario:scenario": {"event": [{"name": "a", "reboot": {}}]}}),
        }
        for what, text in bad.items():
            fd, path = tempfile.mkstemp(suffix=".json")
            self.paths.append(path)
            with os.fdopen(fd, "w") as f:
                f.write(text)
            code, out = h.run_fleetsim(["--device-count", "2", "--scenario", path, "--ssh", "false"])
            self.assertEqual(code, 2, what + ": " + out)
            self.assertIn("--scenario " + path, out, what)
            self.assertNotIn("listening on", out, what)
        checks = [
            ([{"name": "a", "at": "1s", "group": "edge", "reboot": {}}], None, 'no group "edge"'),
            ([{"name": "a", "at": "1s", "devices": "0-9", "reboot": {}}], None, "devices 0-9: not within"),
            ([{"name": "a", "at": "1s", "revert-after": "1s", "reboot": {}}], None, "revert-after is for down"),
            ([{"name": "a", "at": "1s", "devices": "0", "grow": {}}], None, "grow and shrink take a group"),
            ([], [{"group": "default", "devices": 5}], "has 2 devices, not 5"),
        ]
        for events_, start, want in checks:
            path = self.file(events_, start=start)
            code, out = h.run_fleetsim(["--device-count", "2", "--scenario", path, "--ssh", "false"])
            self.assertEqual(code, 2, out)
            self.assertIn(want, out)

    def test_grow_and_shrink_through_the_api_and_a_scenario(self):
        path = self.file([{"name": "first-step", "at": ms(0.3), "grow": {"devices": 2}}],
                         start=[{"group": "default", "devices": 1}])
        fleet, base = h.start_with_metrics(devices=8, extra=["--scenario", path])
        try:
            # At start only device 0 is in the fleet: the others refuse, their agents are silent.
            self.assertEqual(connect_outcome(fleet.addr(0)), "ok")
            self.assertEqual(connect_outcome(fleet.addr(1)), "refused")
            self.assertNotEqual(snmpget(fleet.port + 1)[0], 0)
            self.assertEqual(snmpget(fleet.port)[0], 0)
            h.wait_for(lambda: api(base, "/api/v1/fleet")[1]["present"] == 3, 10, what="the scenario's grow")
            for i in (0, 1, 2):
                self.assertEqual(connect_outcome(fleet.addr(i)), "ok", i)
            self.assertEqual(connect_outcome(fleet.addr(3)), "refused")
            # The API grows the group at its next indices and shrinks it from its last.
            code, doc = api(base, "/api/v1/groups/default/grow", "POST", {"devices": 3})
            self.assertEqual((code, doc["devices"], doc["ranges"]), (200, 3, [[3, 5]]))
            self.assertEqual(connect_outcome(fleet.addr(5)), "ok")
            rc, text = snmpget(fleet.port + 5)
            self.assertEqual(rc, 0, text)
            code, doc = api(base, "/api/v1/groups/default/shrink", "POST", {"devices": 2})
            self.assertEqual((code, doc["ranges"]), (200, [[4, 5]]))
            self.assertEqual(connect_outcome(fleet.addr(4)), "refused")
            self.assertEqual(connect_outcome(fleet.addr(3)), "ok")
            code, doc = api(base, "/api/v1/groups/default/grow", "POST", {})  # all that can join
            self.assertEqual((code, doc["ranges"]), (200, [[4, 7]]))
            code, doc = api(base, "/api/v1/groups/default/grow", "POST", {"devices": 1})
            self.assertEqual((code, doc["devices"]), (200, 0))  # nothing left to join
            code, fl = api(base, "/api/v1/fleet")
            self.assertEqual((fl["present"], fl["states"]["absent"], fl["groups"][0]["present"]), (8, 0, 8))
            # Refused: a device range, a share, a count that is no count; nothing changes.
            for target, body, want in (("devices/0-1/grow", {}, "takes a group"),
                                       ("groups/default/shrink", {"share": 0.5}, "not share"),
                                       ("groups/default/shrink", {"devices": -1}, "whole number")):
                code, doc = api(base, "/api/v1/" + target, "POST", body)
                self.assertEqual(code, 400, doc)
                self.assertIn(want, doc["error"])
            self.assertEqual(api(base, "/api/v1/fleet")[1]["present"], 8)
            metrics = subprocess.run(["curl", "-sS", base + "/metrics"], stdout=subprocess.PIPE,
                                     timeout=h.scaled(10)).stdout.decode()
            self.assertIn('fleetsim_devices_present{group="default"} 8', metrics)
            self.assertIn('fleetsim_scenario_actions_total{action="grow"} 1', metrics)
            self.assertIn('fleetsim_actions_total{action="grow"} 4', metrics)
            # Every action is an event, the scenario's named, with its devices' node-ids.
            doc = events(base)
            self.assertEqual([e["action"] for e in doc["events"]], ["grow", "grow", "shrink", "grow", "grow"])
            first = doc["events"][0]
            self.assertEqual((first["origin"], first["event"]), ("scenario", "first-step"))
            self.assertEqual(first["node_ids"], ["%d-sim-device" % (fleet.port + i) for i in (1, 2)])
            self.assertEqual(doc["events"][1]["origin"], "api")
            self.assertNotIn("event", doc["events"][1])
            later = events(base, since=doc["next"] - 1)
            self.assertEqual([e["seq"] for e in later["events"]], [doc["next"] - 1])
            self.assertEqual(api(base, "/api/v1/events?since=x")[0], 400)
        finally:
            fleet.stop()

    def reboot_run(self, path, devices=40):
        """The node-ids the scenario's first event touched, and the fleet's report."""
        fd, report = tempfile.mkstemp(suffix=".json")
        os.close(fd)
        self.paths.append(report)
        fleet, base = h.start_with_metrics(devices=devices, extra=["--scenario", path, "--report", report])
        try:
            doc = h.wait_for(lambda: events(base)["events"] or None, 10, what="the scenario's reboot")
            touched = [n.split("-", 1)[0] for n in doc[0]["node_ids"]]
            offsets = sorted(int(p) - fleet.port for p in touched)
        finally:
            fleet.stop()
        with open(report) as f:
            return offsets, json.load(f)

    def test_one_seed_hits_the_same_devices_and_the_report_names_the_scenario(self):
        events_ = [{"name": "reboot-half", "at": ms(0.2), "share": "0.5", "reboot": {"for": "1s"}}]
        path = self.file(events_, seed=11)
        a, report = self.reboot_run(path)
        b, _ = self.reboot_run(path)
        c, _ = self.reboot_run(self.file(events_, seed=12))
        self.assertEqual(a, b)
        self.assertNotEqual(a, c)
        self.assertTrue(8 <= len(a) <= 32, a)  # about half of 40
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        self.assertEqual(report["scenario"], {"file": path, "sha256": digest, "seed": 11, "events": 1})
        self.assertIn("seed", report)
        reboots = [x for x in report["actions"] if x["action"] == "reboot"]
        self.assertEqual(len(reboots), 1)
        self.assertEqual((reboots[0]["origin"], reboots[0]["event"], reboots[0]["devices"]),
                         ("scenario", "reboot-half", len(a)))

    def test_a_down_with_revert_after_comes_back_and_repeats(self):
        path = self.file([{"name": "outage", "every": {"period": ms(1.5), "from": ms(0.3), "count": 2},
                           "devices": "1", "revert-after": ms(0.6), "down": {"mode": "refuse"}}])
        fleet, base = h.start_with_metrics(devices=3, extra=["--scenario", path])
        try:
            h.wait_for(lambda: connect_outcome(fleet.addr(1), 0.5) == "refused", 5, what="the outage")
            self.assertEqual(connect_outcome(fleet.addr(0)), "ok")
            h.wait_for(lambda: connect_outcome(fleet.addr(1), 0.5) == "ok", 5, what="the revert")
            doc = h.wait_for(lambda: (lambda d: d if len(d["events"]) == 4 else None)(events(base)), 10,
                             what="both outages and reverts")
            self.assertEqual([e["action"] for e in doc["events"]], ["down", "up", "down", "up"])
            self.assertTrue(all(e.get("event") == "outage" for e in doc["events"]))
            gap = doc["events"][1]["time_ms"] - doc["events"][0]["time_ms"]
            self.assertGreaterEqual(gap, h.scaled(0.6) * 1000 - 20)
            time.sleep(h.scaled(0.5))
            self.assertEqual(len(events(base)["events"]), 4)  # count 2: no third outage
        finally:
            fleet.stop()

    def test_devices_that_join_are_registered_with_the_controller(self):
        ctl = Controller()
        try:
            path = self.file([{"name": "step", "every": {"period": ms(0.4), "from": ms(0.3), "count": 2},
                               "grow": {"devices": 2}}], start=[{"group": "default", "devices": 0}])
            fleet, base = h.start_with_metrics(devices=6, extra=ctl.args("--scenario", path))
            try:
                reqs = ctl.wait_requests(4, 10)  # one batch per device: --generate-configs-batch-size 1
                nodes = [n["node-id"] for r in reqs
                         for n in json.loads(r["body"])["network-topology:topology"][0]["node"]]
                self.assertEqual(nodes, ["%d-sim-device" % (fleet.port + i) for i in range(4)])
                time.sleep(h.scaled(0.3))
                self.assertEqual(len(ctl.requests), 4)  # nothing for the devices that never joined
                self.assertEqual(fleet.log().count("registering 2 devices that joined the fleet"), 2)
            finally:
                fleet.stop()
        finally:
            ctl.close()

    def test_every_action_of_the_api_can_be_a_scenario_event(self):
        sysconf = '<system xmlns="urn:ietf:params:xml:ns:yang:ietf-system"><hostname>from-the-cli</hostname></system>'
        path = self.file([
            {"name": "cli", "at": ms(0.2), "devices": "0-1", "set": {"config": sysconf}},
            {"name": "quiet", "at": ms(0.3), "notification-rate": {"rate": 0}},
            {"name": "flap", "at": ms(0.4), "flap": {"for": "100ms"}},
            {"name": "slow", "at": ms(0.5), "latency": {"netconf": "1ms"}},
            {"name": "lossy", "at": ms(0.6), "drop-rate": {"snmp": "0.5"}},
            {"name": "kick", "at": ms(0.7), "kill-sessions": {}},
            {"name": "bye", "at": ms(0.8), "shrink": {"devices": 1}},
            {"name": "back", "at": ms(0.9), "grow": {}}])
        fleet, base = h.start_with_metrics(devices=2, extra=["--scenario", path])
        try:
            doc = h.wait_for(lambda: (lambda d: d if len(d["events"]) == 8 else None)(events(base)), 10, what="every event")
            self.assertEqual([(e["event"], e["action"]) for e in doc["events"]],
                             [("cli", "set"), ("quiet", "notification-rate"), ("flap", "flap"), ("slow", "latency"),
                              ("lossy", "drop-rate"), ("kick", "kill-sessions"), ("bye", "shrink"),
                              ("back", "grow")])
            self.assertEqual(doc["events"][0]["devices"], 2)
            self.assertEqual(doc["events"][4]["parameters"]["snmp"], 0.5)
            # Device 0 kept the change made on it; device 1 left and joined again as a new device.
            with h.RawClient(fleet.addr(0)) as c:
                c.hello()
                self.assertIn("from-the-cli", c.get_config())
            with h.RawClient(fleet.addr(1)) as c:
                c.hello()
                self.assertNotIn("from-the-cli", c.get_config())
        finally:
            fleet.stop()

    def test_stress_manifests_name_the_scenario(self):
        path = self.file([{"name": "later", "at": "1h", "reboot": {}}], seed=99)
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        fleet, _ = h.start_with_metrics(devices=2, extra=["--scenario", path])
        try:
            for mode, extra in (("edit", ["--edits", "20"]), ("mount", ["--device-count", "2"]),
                                ("snmp", ["--device-count", "2", "--port", str(fleet.port)])):
                fd, manifest = tempfile.mkstemp(suffix=".json")
                os.close(fd)
                self.paths.append(manifest)
                port = [] if mode == "snmp" else ["--port", str(fleet.port)]  # the agents share the numbers
                out = subprocess.run([STRESS, mode, "--ip", "127.0.0.1"] + port + extra +
                                     ["--scenario", path, "--json", manifest], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, timeout=h.scaled(60))
                self.assertEqual(out.returncode, 0, out.stdout.decode())
                with open(manifest) as f:
                    doc = json.load(f)
                self.assertEqual(doc["scenario"], {"file": path, "sha256": digest, "seed": 99}, mode)
            out = subprocess.run([STRESS, "edit", "--port", str(fleet.port), "--scenario", path + ".missing"],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=h.scaled(30))
            self.assertEqual(out.returncode, 2)
            self.assertIn(path + ".missing", out.stdout.decode())
        finally:
            fleet.stop()


if __name__ == "__main__":
    STRESS = h.take_binaries_arguments()  # sets h.BINARY too
    unittest.main(verbosity=2)
