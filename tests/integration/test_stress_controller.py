"""fleetsim-stress controller-mount against a small HTTP server standing in for a RESTCONF controller.

Controller (below) is an http.server in a thread on a random port of 127.0.0.1. It answers GET requests
with a scripted topology-netconf that changes with the time since its first request: nodes appear,
connect, one is unable to connect for a while; a script may also answer chosen requests with an HTTP
error or a body that is not JSON. Every request is recorded (method, path, query, Accept,
Authorization) and checked against what OpenDaylight's RESTCONF expects. Both JSON shapes OpenDaylight
has used are served: connection-status as a leaf of the node (releases before netconf-node-topology
2024-09-11) and inside the node's netconf-node container (later ones).

Every run is bounded (intervals of 0.1-0.2 s, timeouts of a second or two); loopback only.

Run: /usr/bin/python3 test_stress_controller.py <path to fleetsim-stress> [unittest options]
"""

import base64
import csv
import http.server
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402

STRESS = None
TOPOLOGY_PATH = "/restconf/data/network-topology:network-topology/topology=topology-netconf"
CSV_HEADER = ["t_s", "connected", "connecting", "failed", "absent", "http_status"]
DATA_MISSING = {"ietf-restconf:errors": {"error": [{
    "error-type": "protocol", "error-tag": "data-missing",
    "error-message": "Request could not be completed because the relevant data model content does not exist"}]}}


def topology(nodes, shape):
    """A topology-netconf answer; nodes: [(node-id, status or None)]; shape "leaf" or "container"."""
    out = []
    for node_id, status in nodes:
        node = {"node-id": node_id}
        fields = {"host": "127.0.0.1", "port": 17830}
        if status is not None:
            fields["connection-status"] = status
        if shape == "leaf":
            for k, v in fields.items():
                node["netconf-node-topology:" + k] = v
        else:
            node["netconf-node-topology:netconf-node"] = fields
        out.append(node)
    topo = {"topology-id": "topology-netconf"}
    if out:
        topo["node"] = out
    return {"network-topology:topology": [topo]}


class Controller:
    """script(index, elapsed_s) -> (status, body bytes or a JSON-able object)."""

    def __init__(self, script, credentials=("admin", "admin")):
        self.script = script
        self.credentials = credentials
        self.requests = []      # (index, elapsed_s, method, path, query, accept, authorization, answered status)
        self.first = None       # monotonic time of the first request
        self.lock = threading.Lock()
        ctl = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self, method):
                now = time.monotonic()
                with ctl.lock:
                    if ctl.first is None:
                        ctl.first = now
                    index = len(ctl.requests)
                    elapsed = now - ctl.first
                    url = urllib.parse.urlsplit(self.path)
                    auth = self.headers.get("Authorization")
                    record = [index, elapsed, method, url.path, url.query, self.headers.get("Accept"), auth, 0]
                    ctl.requests.append(record)
                expected = "Basic " + base64.b64encode(("%s:%s" % ctl.credentials).encode()).decode()
                if auth != expected:
                    status, body = 401, b""
                else:
                    status, body = ctl.script(index, elapsed)
                if not isinstance(body, bytes):
                    body = json.dumps(body).encode()
                record[7] = status
                self.send_response(status)
                if status == 401:
                    self.send_header("WWW-Authenticate", 'Basic realm="test"')
                self.send_header("Content-Type", "application/yang-data+json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                self.answer("GET")

            def do_POST(self):
                self.answer("POST")

        for _ in range(20):
            port = random.randrange(h.PORT_LOW, h.PORT_HIGH)
            try:
                self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
                break
            except OSError:
                continue
        else:
            raise RuntimeError("no free port for the controller")
        self.server.daemon_threads = True
        self.port = port
        self.url = "http://127.0.0.1:%d/restconf" % port
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05})
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


def child_env():
    env = dict(os.environ)
    for k in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        env.pop(k, None)
    return env


class ControllerMountTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.controllers = []

    def tearDown(self):
        for c in self.controllers:
            c.stop()
        self.tmp.cleanup()

    def controller(self, script, **kw):
        c = Controller(script, **kw)
        self.controllers.append(c)
        return c

    def run_stress(self, args, limit_s):
        csv_path = os.path.join(self.tmp.name, "curve.csv")
        json_path = os.path.join(self.tmp.name, "run.json")
        for p in (csv_path, json_path):
            if os.path.exists(p):
                os.unlink(p)
        cmd = [STRESS, "controller-mount", "--csv", csv_path, "--json", json_path] + args
        t0 = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=h.scaled(limit_s), env=child_env())
        self.wall_s = time.monotonic() - t0
        with open(csv_path) as f:
            rows = list(csv.reader(f))
        with open(json_path) as f:
            manifest = json.load(f)
        return p.returncode, p.stdout, p.stderr, rows, manifest

    def check_requests(self, ctl, credentials=("admin", "admin")):
        auth = "Basic " + base64.b64encode(("%s:%s" % credentials).encode()).decode()
        self.assertTrue(ctl.requests)
        for r in ctl.requests:
            _, _, method, path, query, accept, authorization, _ = r
            self.assertEqual(method, "GET", r)
            self.assertEqual(path, TOPOLOGY_PATH, r)
            self.assertEqual(query, "content=nonconfig", r)
            self.assertEqual(accept, "application/yang-data+json", r)
            self.assertEqual(authorization, auth, r)

    def connecting_fleet(self, shape):
        """4 expected nodes and a controller's own node: nothing (404, then 409 data-missing), an empty
        topology, nodes appearing and connecting, one unable to connect, all connected from 1.05 s;
        request 5 is answered 500 and request 7 with a body that is not JSON. Each phase ends between
        two polls of a 0.1 s grid, so every phase is seen by at least one good poll."""
        names = ["%d-sim-device" % (17830 + i) for i in range(4)]

        def script(index, t):
            if index == 5:
                return 500, b'{"errors": "internal"}'
            if index == 7:
                return 200, b'{"network-topology:topology": [ {"node": [ garbage'
            if t < 0.15:
                return 404, DATA_MISSING
            if t < 0.25:
                return 409, DATA_MISSING
            if t < 0.45:
                return 200, topology([], shape)
            if t < 0.65:
                return 200, topology([(names[0], "connecting"), (names[1], None), ("controller-config", "connected")],
                                     shape)
            if t < 1.05:
                return 200, topology([(names[0], "connected"), (names[1], "connected"), (names[2], "connecting"),
                                      (names[3], "unable-to-connect"), ("controller-config", "connected")], shape)
            return 200, topology([(n, "connected") for n in names] + [("controller-config", "connected")], shape)
        return script

    def check_connecting_fleet(self, shape):
        ctl = self.controller(self.connecting_fleet(shape), credentials=("ops", "s3cret:x"))
        rc, out, err, rows, m = self.run_stress(
            ["--url", ctl.url + "/", "--device-count", "4", "--interval", "0.1", "--timeout", "5",
             "--username", "ops", "--password", "s3cret:x"], 20)
        self.assertEqual(rc, 0, out + err)
        self.check_requests(ctl, ("ops", "s3cret:x"))
        polls = len(ctl.requests)

        # The time until all connected: the poll at 1.1 s, the first after 1.05 s (the client's clock starts a
        # little before the server's first request; a poll is timed when it is sent).
        reached = m["results"]["time_to_all_connected_s"]
        self.assertGreaterEqual(reached, 1.0, out)
        self.assertLessEqual(reached, 1.15 + h.scaled(0.1), out)
        self.assertIn("all 4 connected after %.3f s" % reached, out)
        self.assertTrue(m["results"]["all_connected"])
        # It stopped at once: the last request was the first all-connected answer.
        self.assertGreaterEqual(ctl.requests[-1][1], 1.05)
        self.assertLess(ctl.requests[-2][1], 1.05)

        # The CSV: a row per poll; errors have no counts.
        self.assertEqual(rows[0], CSV_HEADER)
        self.assertEqual(len(rows) - 1, polls)
        by_index = {i: rows[1 + i] for i in range(polls)}
        self.assertEqual(by_index[5][1:], ["", "", "", "", "500"])
        self.assertEqual(by_index[7][1:], ["", "", "", "", "200"])
        ts = [float(r[0]) for r in rows[1:]]
        self.assertEqual(ts, sorted(ts))
        for i, r in by_index.items():
            if i in (5, 7):
                continue
            t_server = ctl.requests[i][1]
            counts = [int(x) for x in r[1:5]]
            status = int(r[5])
            self.assertEqual(status, ctl.requests[i][7], r)
            if t_server < 0.45:
                self.assertEqual(counts, [0, 0, 0, 4], (r, t_server))
            elif t_server < 0.65:
                # a node without a status yet counts as connecting; the controller's own node is ignored
                self.assertEqual(counts, [0, 2, 0, 2], (r, t_server))
            elif t_server < 1.05:
                self.assertEqual(counts, [2, 1, 1, 0], (r, t_server))
            else:
                self.assertEqual(counts, [4, 0, 0, 0], (r, t_server))
        # 404 and 409 data-missing are an empty topology, not errors.
        self.assertIn("404", [r[5] for r in rows[1:]])
        self.assertIn("409", [r[5] for r in rows[1:]])

        # The manifest: parameters, results and the same curve.
        p = m["parameters"]
        self.assertEqual((m["tool"], m["mode"]), ("fleetsim-stress", "controller-mount"))
        self.assertEqual(p["url"], ctl.url + "/")
        self.assertEqual(p["topology_url"], ctl.url + "/data/network-topology:network-topology/"
                         "topology=topology-netconf?content=nonconfig")
        self.assertEqual((p["device_count"], p["node_suffix"], p["interval_s"], p["timeout_s"], p["username"]),
                         (4, "-sim-device", 0.1, 5.0, "ops"))
        self.assertNotIn("s3cret", json.dumps(m))
        r = m["results"]
        self.assertEqual((r["polls"], r["errors"], r["errors_http_status"], r["errors_bad_answer"],
                          r["errors_transport"]), (polls, 2, 1, 1, 0))
        self.assertIn("HTTP 500", r["first_error"])
        self.assertEqual(r["last"], {"connected": 4, "connecting": 0, "failed": 0, "absent": 0, "listed": 4,
                                     "ignored": 1, "unknown_status": 0})
        self.assertEqual((r["max"]["connected"], r["max"]["connecting"], r["max"]["failed"], r["max"]["listed"],
                          r["max"]["unknown_status"]), (4, 2, 1, 4, 1))
        self.assertEqual(r["not_connected"], [])
        self.assertGreater(r["first_listed_s"], 0.4)
        self.assertLess(r["first_listed_s"], r["first_connected_s"])
        self.assertEqual(len(m["curve"]), polls)
        for point, row in zip(m["curve"], rows[1:]):
            self.assertAlmostEqual(point["t_s"], float(row[0]), places=2)
            self.assertEqual(point["http_status"], int(row[5]))
            if row[1]:
                self.assertEqual([point[k] for k in ("connected", "connecting", "failed", "absent")],
                                 [int(x) for x in row[1:5]])
                self.assertEqual(point["result"], "ok")
        self.assertEqual((m["curve"][5]["result"], m["curve"][5]["connected"]), ("http_status", None))
        self.assertEqual(m["curve"][7]["result"], "bad_answer")

        # Without a terminal: a line per change of the counts, and each failure once on stderr.
        lines = [line for line in out.splitlines() if line.startswith("t ")]
        self.assertEqual(len(lines), 6, out)  # 404, 409, 0 nodes (same counts, other status), 2, 4, 4 connected
        self.assertRegex(lines[-1], r"^t [0-9.]+ s: connected 4 connecting 0 failed 0 absent 0 \(HTTP 200\)$")
        self.assertIn("HTTP 500", err)
        self.assertIn("bad answer (HTTP 200): not JSON: line 1 column", err)
        self.assertIn("polls %d, errors 2 (transport 0, HTTP status 1, bad answer 1)" % polls, out)

    def test_fleet_connecting_status_leaf_on_the_node(self):
        self.check_connecting_fleet("leaf")

    def test_fleet_connecting_status_inside_netconf_node(self):
        self.check_connecting_fleet("container")

    def test_node_stuck_connecting_fails_after_timeout_naming_it(self):
        def script(index, t):
            return 200, topology([("17830-sim-device", "connected"), ("17831-sim-device", "connecting"),
                                  ("17832-sim-device", "unable-to-connect"), ("openflow:1", "connecting")],
                                 "container")
        ctl = self.controller(script)
        rc, out, err, rows, m = self.run_stress(
            ["--url", ctl.url, "--device-count", "4", "--interval", "0.2", "--timeout", "1"], 20)
        self.assertEqual(rc, 1, out + err)
        self.check_requests(ctl)
        # Polls at 0, 0.2, ..., 1.0 and no later: the run ends at --timeout.
        self.assertGreaterEqual(m["results"]["elapsed_s"], 1.0)
        self.assertLess(m["results"]["elapsed_s"], 1.0 + h.scaled(0.3))
        self.assertLess(self.wall_s, 1.0 + h.scaled(1.0))
        self.assertEqual(len(ctl.requests), 6)
        self.assertEqual(len(rows) - 1, 6)
        self.assertAlmostEqual(float(rows[-1][0]), 1.0, delta=h.scaled(0.05))
        self.assertEqual(rows[-1][1:], ["1", "1", "1", "1", "200"])
        self.assertIsNone(m["results"]["time_to_all_connected_s"])
        self.assertFalse(m["results"]["all_connected"])
        self.assertEqual(m["results"]["not_connected"],
                         [{"node_id": "17831-sim-device", "status": "connecting"},
                          {"node_id": "17832-sim-device", "status": "unable-to-connect"}])
        self.assertIn("FAILED: 1 of 4 connected after", err)
        self.assertIn("(connecting 1, failed 1, absent 1); not connected: 17831-sim-device (connecting), "
                      "17832-sim-device (unable-to-connect)", err)
        self.assertNotIn("openflow", err + out)
        self.assertIn("NOT all 4 connected", out)
        # Nothing changed: one line, not one per poll.
        self.assertEqual(len([line for line in out.splitlines() if line.startswith("t ")]), 1, out)

    def test_node_suffix_selects_which_nodes_count(self):
        nodes = [("17830-sim-device", "connected"), ("sim-device-17831", "connected"), ("r1", "connected")]
        ctl = self.controller(lambda i, t: (200, topology(nodes, "leaf")))
        # Default suffix: only one of the three counts, so 2 expected never connect.
        rc, out, err, rows, m = self.run_stress(
            ["--url", ctl.url, "--device-count", "2", "--interval", "0.1", "--timeout", "0.3"], 20)
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(rows[-1][1:], ["1", "0", "0", "1", "200"])
        self.assertEqual(m["results"]["last"]["ignored"], 2)
        # Another suffix, and every node.
        rc, out, err, rows, m = self.run_stress(
            ["--url", ctl.url, "--device-count", "1", "--interval", "0.1", "--timeout", "0.3",
             "--node-suffix", "-17831"], 20)
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(m["results"]["time_to_all_connected_s"], m["curve"][0]["t_s"])
        rc, out, err, rows, m = self.run_stress(
            ["--url", ctl.url, "--device-count", "3", "--interval", "0.1", "--timeout", "0.3",
             "--node-suffix", ""], 20)
        self.assertEqual(rc, 0, out + err)
        self.assertEqual((len(rows), rows[1][1:]), (2, ["3", "0", "0", "0", "200"]))
        self.assertEqual(m["results"]["last"]["ignored"], 0)

    def test_wrong_credentials_are_counted_and_polling_goes_on(self):
        ctl = self.controller(lambda i, t: (200, topology([("17830-sim-device", "connected")], "leaf")),
                              credentials=("admin", "right"))
        rc, out, err, rows, m = self.run_stress(
            ["--url", ctl.url, "--device-count", "1", "--interval", "0.1", "--timeout", "0.5",
             "--password", "wrong"], 20)
        self.assertEqual(rc, 1, out + err)
        polls = len(ctl.requests)
        self.assertGreaterEqual(polls, 5)
        self.assertEqual(m["results"]["errors_http_status"], polls)
        self.assertEqual([r[5] for r in rows[1:]], ["401"] * polls)
        self.assertEqual(err.count("HTTP 401"), 1, err)  # once, not every poll
        self.assertIn("the controller never answered with a topology", err)
        self.assertIsNone(m["results"]["last"])

    def test_controller_down_is_counted_as_transport_errors(self):
        ctl = self.controller(lambda i, t: (200, topology([], "leaf")))
        url = ctl.url
        ctl.stop()
        self.controllers.remove(ctl)
        rc, out, err, rows, m = self.run_stress(
            ["--url", url, "--device-count", "1", "--interval", "0.1", "--timeout", "0.3"], 20)
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(m["results"]["errors_transport"], m["results"]["polls"])
        self.assertGreaterEqual(m["results"]["polls"], 3)
        self.assertEqual({r[5] for r in rows[1:]}, {"0"})
        self.assertIn("Couldn't connect", err)

    def test_sigterm_stops_and_reports(self):
        ctl = self.controller(lambda i, t: (200, topology([("17830-sim-device", "connecting")], "leaf")))
        csv_path = os.path.join(self.tmp.name, "curve.csv")
        json_path = os.path.join(self.tmp.name, "run.json")
        p = subprocess.Popen([STRESS, "controller-mount", "--url", ctl.url, "--device-count", "1", "--interval",
                              "0.1", "--timeout", "60", "--csv", csv_path, "--json", json_path],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env())
        deadline = time.monotonic() + h.scaled(5)
        while len(ctl.requests) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=h.scaled(5))
        self.assertEqual(p.returncode, 143, out + err)  # 128 + SIGTERM, as every mode (run_util.c)
        with open(json_path) as f:
            m = json.load(f)
        self.assertEqual(m["results"]["interrupted"], "SIGTERM")
        self.assertEqual(m["results"]["not_connected"], [{"node_id": "17830-sim-device", "status": "connecting"}])
        self.assertIn("interrupted", out)
        self.assertIn("FAILED: interrupted by SIGTERM: 0 of 1 connected", err)

    def test_usage_errors_exit_2(self):
        cases = [
            ([], "needs --url"),
            (["--url", "ftp://x/restconf", "--device-count", "1"], "needs --url"),
            (["--url", "http://127.0.0.1:1/restconf"], "needs --device-count"),
            (["--url", "http://127.0.0.1:1/restconf", "--device-count", "0"], "--device-count must be"),
            (["--url", "http://127.0.0.1:1/restconf", "--device-count", "1", "--interval", "0"],
             "--interval must be seconds"),
            (["--url", "http://127.0.0.1:1/restconf", "--device-count", "1", "--interval", "1s"],
             "--interval must be seconds"),
            (["--url", "http://127.0.0.1:1/restconf", "--device-count", "1", "--timeout", "-1"],
             "--timeout must be seconds"),
            (["--url", "http://127.0.0.1:1/restconf", "--device-count", "1", "--ssh", "true"],
             "--ssh is for edit, mount and notify"),
            (["--url", "http://127.0.0.1:1/restconf", "--device-count", "1", "--bogus"], "unknown option"),
        ]
        for args, text in cases:
            p = subprocess.run([STRESS, "controller-mount"] + args, capture_output=True, text=True,
                               timeout=h.scaled(10), env=child_env())
            self.assertEqual(p.returncode, 2, (args, p.stdout, p.stderr))
            self.assertIn(text, p.stderr, args)
        p = subprocess.run([STRESS, "controller-mount", "--url", "http://127.0.0.1:1/restconf", "--device-count",
                            "1", "--csv", os.path.join(self.tmp.name, "no", "such", "dir.csv")],
                           capture_output=True, text=True, timeout=h.scaled(10), env=child_env())
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("cannot write", p.stderr)


if __name__ == "__main__":
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        sys.exit("usage: %s <path to fleetsim-stress> [unittest options]" % sys.argv[0])
    STRESS = sys.argv.pop(1)
    unittest.main()
