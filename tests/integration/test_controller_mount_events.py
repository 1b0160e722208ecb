"""fleetsim-stress controller-mount --events: a fleet's events marked on the curve, each one's recovery measured.

The real fleet (fleetsim --controller-ip) registers its devices with bench/fake_controller.py, which mounts
them over plain TCP and, when a device ends its session, marks the node connecting and reconnects with
backoff (a small first delay here). The test applies actions through the fleet's control API (--metrics:
POST /api/v1/devices/N-M/reboot, .../down) while controller-mount polls the controller's topology, and
reads the fleet's events either from the fleet itself (GET /api/v1/events) or from a small events server in this file that the test fills with what it did, at
the times it did it. A reboot must show loss and heal within bounds; a down without an up never heals
(healed_s null, exit 1); a latency action is a mark only.

Run: /usr/bin/python3 test_controller_mount_events.py <path to fleetsim> <path to fleetsim-stress>
Loopback only; every wait bounded; each test takes about 10 s.
"""

import csv
import hashlib
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "bench"))
import fleetsim_harness as h  # noqa: E402
import fake_controller  # noqa: E402

STRESS = None
DEVICES = 4
TOKEN = "s3cret-token"
SHA = "ab" * 32
REBOOT_FOR_S = 2.0
# fake_controller's backoff here: 0.2 s, then x1.5, at most 1 s: a 2 s reboot is back within ~2.7 s.
BACKOFF = dict(reconnect_delay=0.2, reconnect_factor=1.5, reconnect_max_delay=1.0, max_attempts=100)


class EventsServer:
    """GET /api/v1/events?since=N as the fleet answers it, from the events the test add()s; bearer token."""

    def __init__(self):
        self.events = []
        self.requests = 0
        self.lock = threading.Lock()
        srv = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                with srv.lock:
                    srv.requests += 1
                    path, _, query = self.path.partition("?")
                    if self.headers.get("Authorization") != "Bearer " + TOKEN:
                        return self.answer(401, {"error": "bearer token needed"})
                    if path != "/api/v1/events" or not query.startswith("since="):
                        return self.answer(404, {"error": "no such path"})
                    since = int(query[len("since="):])
                    held = [e for e in srv.events if e["seq"] >= since]
                    nxt = srv.events[-1]["seq"] + 1 if srv.events else 1
                    self.answer(200, {"seed": 42, "scenario": {"file": "examples/x.json", "sha256": SHA, "seed": 7},
                                      "next": max(nxt, since), "dropped": 0, "events": held})

            def answer(self, code, doc):
                body = json.dumps(doc).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.http = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()
        self.url = "http://127.0.0.1:%d" % self.http.server_address[1]

    def add(self, action, node_ids, time_ms, parameters=None):
        with self.lock:
            seq = len(self.events) + 1
            self.events.append({"seq": seq, "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time_ms / 1e3))
                                + ".%03dZ" % (time_ms % 1000), "time_ms": time_ms, "action": action,
                                "origin": "api", "parameters": parameters or {}, "devices": len(node_ids),
                                "failed": 0, "node_ids": list(node_ids)})
            return seq

    def stop(self):
        self.http.shutdown()
        self.http.server_close()


class ControllerMountEventsTests(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="cm-events-")
        self.controller = fake_controller.Controller(0, **BACKOFF)
        self.addCleanup(self.controller.stop)
        port = self.controller.http.server_address[1]
        self.fleet, self.base = h.start_with_metrics(
            DEVICES, ["--controller-ip", "127.0.0.1", "--controller-port", str(port)], True, 8)
        self.addCleanup(self.fleet.stop)
        self.assertTrue(h.wait_for(lambda: self.controller.counts()["connected"] == DEVICES, 10),
                        "the fake controller mounted the fleet: %r" % self.controller.counts())
        self.ctl_url = "http://127.0.0.1:%d/restconf" % port

    def node(self, i):
        return "%d-sim-device" % (self.fleet.port + i)

    def start_stress(self, events_url, token=False, timeout_s=9.0):
        self.json_path = os.path.join(self.tmp, "run.json")
        self.csv_path = os.path.join(self.tmp, "curve.csv")
        args = [STRESS, "controller-mount", "--url", self.ctl_url, "--device-count", str(DEVICES),
                "--interval", "0.2", "--timeout", str(h.scaled(timeout_s)), "--events", events_url,
                "--json", self.json_path, "--csv", self.csv_path]
        if token:
            token_path = os.path.join(self.tmp, "token")
            with open(token_path, "w") as f:
                f.write(TOKEN + "\n")
            args += ["--events-token-file", token_path]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.addCleanup(lambda: self.proc.poll() is None and self.proc.kill())
        time.sleep(h.scaled(1.0))  # a few polls with all connected before anything happens
        self.assertIsNone(self.proc.poll(), "with --events the run lasts until --timeout")

    def finish_stress(self):
        out, err = self.proc.communicate(timeout=h.scaled(30))
        self.out = out.decode() + err.decode()
        with open(self.json_path) as f:
            manifest = json.load(f)
        with open(self.csv_path) as f:
            rows = list(csv.reader(f))
        return self.proc.returncode, manifest, rows

    def check_reboot(self, ev, manifest):
        self.assertEqual(ev["action"], "reboot")
        self.assertEqual(ev["expect"], "loss")
        self.assertEqual(ev["state"], "healed", self.out)
        self.assertGreater(ev["lost"], 0, self.out)
        self.assertLessEqual(ev["lost"], 2)
        # Back after the reboot's 2 s plus a backoff step (<= 1 s) plus a poll interval or so.
        self.assertGreaterEqual(ev["healed_s"], REBOOT_FOR_S - 0.3, self.out)
        self.assertLessEqual(ev["healed_s"], REBOOT_FOR_S + h.scaled(3.0), self.out)
        self.assertGreater(ev["t_s"], 0.5)
        self.assertLess(ev["t_s"], manifest["results"]["elapsed_s"])

    # -- the fleet's own endpoint
    def test_fleet_endpoint_reboot_heals_and_down_does_not(self):
        code, _ = h.api_request(self.base, "/api/v1/events?since=0")
        self.assertEqual(code, 200)
        self.start_stress(self.base)
        self.assertEqual(h.api_request(self.base, "/api/v1/devices/0-1/reboot", {"for": "2s"})[0], 200)
        self.assertEqual(h.api_request(self.base, "/api/v1/devices/3/down", {})[0], 200)
        code, manifest, rows = self.finish_stress()
        self.assertEqual(code, 1, self.out)  # device 3 never came back
        events = {e["action"]: e for e in manifest["events"]}
        self.check_reboot(events["reboot"], manifest)
        self.assertEqual(events["reboot"]["devices"], 2)
        self.assertEqual(events["down"]["state"], "not-healed", self.out)
        self.assertIsNone(events["down"]["healed_s"])
        self.assertEqual(events["down"]["lost"], 1)
        self.assertIn("event %d reboot 2 devices (api)" % events["reboot"]["seq"], self.out)

    # -- a stand-in for the endpoint, filled with what the test did
    def test_reboot_heals_and_latency_is_a_mark(self):
        ev = EventsServer()
        self.addCleanup(ev.stop)
        self.start_stress(ev.url, token=True)
        t_ms = int(time.time() * 1000)
        self.assertEqual(h.api_request(self.base, "/api/v1/devices/0-1/reboot", {"for": "2s"})[0], 200)
        reboot_seq = ev.add("reboot", [self.node(0), self.node(1)], t_ms, {"for": "2000ms"})
        t_ms = int(time.time() * 1000)
        self.assertEqual(h.api_request(self.base, "/api/v1/devices/2/latency", {"netconf": "5ms"})[0], 200)
        mark_seq = ev.add("latency", [self.node(2)], t_ms, {"netconf": "5ms"})
        code, manifest, rows = self.finish_stress()
        self.assertEqual(code, 0, self.out)
        self.assertGreater(self.controller.losses, 0, "fake_controller saw the sessions end")
        self.assertGreater(self.controller.reconnects, 0, "and connected them again")
        self.assertEqual(manifest["fleet_seed"], 42)
        self.assertEqual(manifest["scenario"], {"file": "examples/x.json", "sha256": SHA, "seed": 7})
        self.assertEqual(manifest["events_errors"], 0)
        self.assertEqual(manifest["parameters"]["events_url"], ev.url)
        by_seq = {e["seq"]: e for e in manifest["events"]}
        self.assertEqual(sorted(by_seq), [reboot_seq, mark_seq])
        self.check_reboot(by_seq[reboot_seq], manifest)
        mark = by_seq[mark_seq]
        self.assertEqual((mark["state"], mark["lost"], mark["healed_s"], mark["expect"]), ("mark", None, None, "mark"))
        # The CSV: an events column naming each event once, in the row of the poll right after its fetch.
        self.assertEqual(rows[0], ["t_s", "connected", "connecting", "failed", "absent", "http_status", "events"])
        marked = [seq for row in rows[1:] for seq in row[6].split()]
        self.assertEqual(marked, [str(reboot_seq), str(mark_seq)])
        row = next(r for r in rows[1:] if str(reboot_seq) in r[6].split())
        self.assertGreaterEqual(float(row[0]), by_seq[reboot_seq]["t_s"])
        # Some row between the reboot and its healing shows fewer than all connected.
        during = [r for r in rows[1:] if by_seq[reboot_seq]["t_s"] < float(r[0]) < by_seq[reboot_seq]["t_s"]
                  + by_seq[reboot_seq]["healed_s"] and r[1]]
        self.assertTrue(any(int(r[1]) < DEVICES for r in during), rows)
        self.assertIn("event %d reboot 2 devices (api)" % reboot_seq, self.out)
        self.assertRegex(self.out, r"event %d reboot at [0-9.]+ s \(api\), 2 devices: lost 2, all connected "
                         r"again after [0-9.]+ s" % reboot_seq)

    def test_down_without_up_never_heals(self):
        ev = EventsServer()
        self.addCleanup(ev.stop)
        self.start_stress(ev.url, token=True, timeout_s=6.0)
        t_ms = int(time.time() * 1000)
        self.assertEqual(h.api_request(self.base, "/api/v1/devices/3/down", {})[0], 200)
        seq = ev.add("down", [self.node(3)], t_ms, {"mode": "refuse"})
        code, manifest, rows = self.finish_stress()
        self.assertEqual(code, 1, self.out)
        (down,) = manifest["events"]
        self.assertEqual((down["seq"], down["state"], down["lost"], down["healed_s"]), (seq, "not-healed", 1, None))
        self.assertIn("FAILED: event %d down (1 nodes)" % seq, self.out)
        self.assertEqual(manifest["results"]["last"]["connected"], DEVICES - 1)

    def test_events_endpoint_failures_are_counted_and_polling_goes_on(self):
        ev = EventsServer()
        self.addCleanup(ev.stop)
        self.start_stress(ev.url, token=False, timeout_s=2.0)  # no token: every fetch answered 401
        code, manifest, rows = self.finish_stress()
        self.assertEqual(code, 0, self.out)  # all connected, no event to heal
        self.assertGreater(manifest["events_errors"], 3)
        self.assertEqual(manifest["events_errors"], manifest["events_fetches"])
        self.assertIn("HTTP 401", manifest["events_first_error"])
        self.assertEqual(self.out.count("events fetch at"), 1, "a failure kind told once: " + self.out)
        self.assertGreater(manifest["results"]["polls"], 5)


class ScenarioEndToEndTests(unittest.TestCase):
    """A fleet run by a scenario (it grows, then half of it reboots), registered with the fake controller:
    controller-mount --events marks both events and measures how long the controller took to heal."""

    def test_a_scenario_is_marked_and_each_event_heals(self):
        tmp = tempfile.mkdtemp(prefix="cm-scenario-")
        scenario = {"fleetsim-scenario:scenario": {"seed": "3", "start": [{"group": "default", "devices": 2}],
                    "event": [
                        {"name": "join", "at": "%dms" % (h.scaled(1.5) * 1000), "grow": {"devices": 4}},
                        {"name": "reboot-half", "at": "%dms" % (h.scaled(4.0) * 1000), "share": "0.5",
                         "reboot": {"for": "1500ms"}}]}}
        path = os.path.join(tmp, "scenario.json")
        with open(path, "w") as f:
            json.dump(scenario, f)
        controller = fake_controller.Controller(0, **BACKOFF)
        self.addCleanup(controller.stop)
        port = controller.http.server_address[1]
        fleet, base = h.start_with_metrics(6, ["--controller-ip", "127.0.0.1", "--controller-port", str(port),
                                               "--scenario", path], True, 8)
        self.addCleanup(fleet.stop)
        json_path = os.path.join(tmp, "run.json")
        proc = subprocess.Popen([STRESS, "controller-mount", "--url", "http://127.0.0.1:%d/restconf" % port,
                                 "--device-count", "6", "--interval", "0.2", "--timeout", str(h.scaled(10.0)),
                                 "--events", base, "--json", json_path],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        out = proc.communicate(timeout=h.scaled(40))[0].decode()
        with open(json_path) as f:
            manifest = json.load(f)
        self.assertEqual(proc.returncode, 0, out)
        events = {e["event"]: e for e in manifest["events"]}
        self.assertEqual(set(events), {"join", "reboot-half"}, out)
        join, reboot = events["join"], events["reboot-half"]
        self.assertEqual((join["action"], join["origin"], join["devices"], join["state"]),
                         ("grow", "scenario", 4, "healed"), out)
        self.assertLess(join["healed_s"], h.scaled(3.0), out)
        self.assertEqual((reboot["action"], reboot["state"]), ("reboot", "healed"), out)
        self.assertGreater(reboot["lost"], 0, out)
        self.assertGreaterEqual(reboot["healed_s"], 1.5 - 0.3, out)
        self.assertLess(join["t_s"], reboot["t_s"])
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        self.assertEqual((manifest["scenario"]["sha256"], manifest["scenario"]["seed"]), (digest, 3))
        self.assertIn("(scenario join)", out)


if __name__ == "__main__":
    STRESS = h.take_binaries_arguments()
    unittest.main(verbosity=2)
