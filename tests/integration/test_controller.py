"""Registration with a RESTCONF controller (--controller-ip) and the inventory writer (--emit-inventory).

A small HTTP server in a thread of this test stands in for OpenDaylight's RESTCONF: it records every
request (method, path, headers, JSON body) and answers from a script (500 then 204, a permanent 400,
no answer at all). Checked: the PATCH target, Content-Type, basic authentication, every node's fields
against the fleet's plan, batching (each device exactly once), retries after a 5xx (bounded), a 400 reported with the server's
answer and never retried while the fleet keeps serving, an empty answer said to be empty, and a prompt
exit on SIGTERM in the middle of an exchange. A controller that is down (connection refused) is said
to be unreachable once, retried with an exponential backoff (counted in the debug log) and the whole
registration ends at --time-out with one line while the fleet serves; one that comes up late gets
every device and a "reachable again" line; one that never answers is abandoned at --time-out.

Each inventory format is read by a real parser of its kind (json, xml.etree with the structure of
OpenNMS's model-import schema, csv) and checked field by field, for a port-per-device fleet and an
address-per-device fleet; --emit-inventory opens no socket (it works while the fleet's ports are
taken) and refuses plans it cannot write with exit code 2.

Run: /usr/bin/python3 test_controller.py <path to fleetsim>
"""

import base64
import csv
import http.server
import ipaddress
import json
import os
import random
import re
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402

TOPOLOGY_PATH = "/restconf/data/network-topology:network-topology/topology=topology-netconf"
NETCONF_NODE = "netconf-node-topology:netconf-node"
ONMS_NS = "{http://xmlns.opennms.org/xsd/config/model-import}"


# ---------------------------------------------------------------- the stand-in controller

class Controller:
    """An HTTP server on 127.0.0.1 recording requests and answering from a script.

    script: a list of (status, body) answers used in order, one per request; afterwards `default`.
    A status of None means: never answer (hold the request until the server stops)."""

    def __init__(self, script=(), default=(204, ""), port=None):
        self.script = list(script)
        self.default = default
        self.requests = []
        self.lock = threading.Lock()
        self.arrived = threading.Condition(self.lock)
        self.release = threading.Event()
        ctl = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def handle_any(self):
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length) if length else b""
                with ctl.lock:
                    ctl.requests.append({"method": self.command, "path": self.path,
                                         "headers": dict(self.headers.items()), "body": body})
                    answer = ctl.script.pop(0) if ctl.script else ctl.default
                    ctl.arrived.notify_all()
                status, text = answer
                if status is None:
                    ctl.release.wait(h.scaled(30))
                    return
                data = text.encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/yang-data+json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_PATCH = do_POST = do_PUT = do_GET = handle_any

        rng = random.Random()
        for _ in range(1 if port else 20):
            self.port = port or rng.randrange(h.PORT_LOW, h.PORT_HIGH)
            try:
                self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
                break
            except OSError:
                continue
        else:
            raise AssertionError("no free port for the stand-in controller")
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def args(self, *extra):
        return ["--controller-ip", "127.0.0.1", "--controller-port", str(self.port)] + list(extra)

    def wait_requests(self, n, timeout):
        deadline = time.monotonic() + h.scaled(timeout)
        with self.lock:
            while len(self.requests) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError("the controller got %d requests, want %d" % (len(self.requests), n))
                self.arrived.wait(left)
            return list(self.requests)

    def close(self):
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def wait_log(fleet, pattern, timeout=10):
    """Wait until fleetsim's log matches pattern; return the match."""
    deadline = time.monotonic() + h.scaled(timeout)
    while True:
        m = re.search(pattern, fleet.log())
        if m:
            return m
        if time.monotonic() > deadline:
            raise AssertionError("no %r in fleetsim's log within %.0f s; log:\n%s" % (pattern, h.scaled(timeout),
                                                                                    fleet.log()))
        time.sleep(0.02)


def assert_serves(testcase, fleet, device=0):
    """Device answers a NETCONF hello."""
    with h.RawClient(fleet.addr(device)) as c:
        c.hello()
        testcase.assertTrue(c.session_id)


UNREACHABLE_LINE = ("controller 127.0.0.1:%d unreachable (connection refused); retrying with backoff up to 30 s, "
                    "the fleet keeps serving")


# ---------------------------------------------------------------- what a node must say

def expected_nodes(devices, host_of, port_of, name_of, username, password, tcp_only):
    return {name_of(i): {"host": host_of(i), "port": port_of(i),
                         "login-password-unencrypted": {"username": username, "password": password},
                         "tcp-only": tcp_only, "keepalive-delay": 0, "schemaless": False}
            for i in range(devices)}


def topology_nodes(testcase, doc):
    """The nodes of one topology-netconf document, checked for shape; {node-id: netconf-node}."""
    testcase.assertEqual(list(doc.keys()), ["network-topology:topology"], doc)
    topologies = doc["network-topology:topology"]
    testcase.assertEqual(len(topologies), 1)
    topo = topologies[0]
    testcase.assertEqual(set(topo.keys()), {"topology-id", "node"})
    testcase.assertEqual(topo["topology-id"], "topology-netconf")
    nodes = {}
    for node in topo["node"]:
        testcase.assertEqual(set(node.keys()), {"node-id", NETCONF_NODE}, node)
        testcase.assertNotIn(node["node-id"], nodes, "node sent twice in one document")
        nodes[node["node-id"]] = node[NETCONF_NODE]
    return nodes


# ---------------------------------------------------------------- registration

class RegistrationTests(unittest.TestCase):

    def setUp(self):
        self.fleets = []
        self.controllers = []
        self.tmp = tempfile.mkdtemp(prefix="fleetsim-ctl-")

    def tearDown(self):
        for f in self.fleets:
            f.kill()
        for c in self.controllers:
            c.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def controller(self, *args, **kw):
        c = Controller(*args, **kw)
        self.controllers.append(c)
        return c

    def fleet(self, devices, extra, **kw):
        f = h.Fleet(devices=devices, extra=extra, **kw)
        self.fleets.append(f)
        return f.start()

    def test_batches_carry_every_device_once_with_its_fields(self):
        ctl = self.controller()
        f = self.fleet(10, ctl.args("--generate-configs-batch-size", "4", "--controller-auth-username", "ops",
                                    "--controller-auth-password", "s3:cret", "--username", "bob",
                                    "--password", 'p"w'))
        reqs = ctl.wait_requests(3, 10)
        wait_log(f, r"controller: registered 10 of 10 devices in 3 batches, 0 failed")
        self.assertEqual(len(ctl.requests), 3)
        auth = "Basic " + base64.b64encode(b"ops:s3:cret").decode()
        seen = {}
        sizes = []
        for r in reqs:
            self.assertEqual(r["method"], "PATCH")
            self.assertEqual(r["path"], TOPOLOGY_PATH)
            self.assertEqual(r["headers"].get("Content-Type"), "application/yang-data+json")
            self.assertEqual(r["headers"].get("Authorization"), auth)
            nodes = topology_nodes(self, json.loads(r["body"]))
            sizes.append(len(nodes))
            for name, node in nodes.items():
                self.assertNotIn(name, seen, "device registered twice")
                seen[name] = node
        self.assertEqual(sizes, [4, 4, 2])
        want = expected_nodes(10, lambda i: "127.0.0.1", lambda i: f.port + i,
                              lambda i: "%d-sim-device" % (f.port + i), "bob", 'p"w', True)
        self.assertEqual(seen, want)
        # Batches go in device order.
        first = [min(topology_nodes(self, json.loads(r["body"])).values(), key=lambda n: n["port"])["port"]
                 for r in reqs]
        self.assertEqual(first, [f.port, f.port + 4, f.port + 8])
        assert_serves(self, f, 9)
        f.stop()

    def test_register_only_registers_each_shard_at_its_address_and_exits(self):
        # A registration job of a 4-shard fleet: each shard's devices at that shard's host, nothing served
        # (the fleet's ports are taken meanwhile), the whole fleet registered once with its own node-ids.
        ctl = self.controller()
        port = h.free_port()
        taken = socket.socket()
        taken.bind(("127.0.0.1", port))
        taken.listen()
        self.addCleanup(taken.close)
        for i in range(4):
            code, text = h.run_fleetsim(["--device-count", "10", "--starting-port", str(port), "--ssh", "false",
                                         "--shard", "%d/4" % i, "--generate-config-address", "127.0.0.%d" % (i + 1),
                                         "--generate-configs-batch-size", "2", "--register-only"] + ctl.args())
            self.assertEqual(code, 0, text)
            self.assertRegex(text, r"controller: registered (2|3) of (2|3) devices")
        seen = {}
        for r in ctl.requests:
            self.assertEqual((r["method"], r["path"]), ("PATCH", TOPOLOGY_PATH))
            for name, node in topology_nodes(self, json.loads(r["body"])).items():
                self.assertNotIn(name, seen, "device registered twice")
                seen[name] = node
        self.assertEqual(sorted(seen), sorted("%d-sim-device" % (port + i) for i in range(10)))
        for i in range(10):
            shard = max(k for k in range(4) if k * 10 // 4 <= i)  # shard k starts at floor(k * C / N)
            node = seen["%d-sim-device" % (port + i)]
            self.assertEqual((node["host"], node["port"]), ("127.0.0.%d" % (shard + 1), port + i), i)
        # A controller that refuses: exit 1, said; no --controller-ip: exit 2.
        refusing = self.controller(default=(400, '{"errors":"no"}'))
        code, text = h.run_fleetsim(["--device-count", "2", "--starting-port", str(port), "--register-only"]
                                    + refusing.args())
        self.assertEqual(code, 1, text)
        self.assertRegex(text, r"registered 0 of 2 devices")
        code, text = h.run_fleetsim(["--device-count", "2", "--register-only"])
        self.assertEqual(code, 2, text)
        self.assertIn("--register-only needs --controller-ip", text)

    def test_the_registration_job_registers_a_sharded_fleet_once(self):
        # deploy/container/register-inventory.sh, the Kubernetes Job's script, run here as the Job would run
        # it: 3 shards of 10 devices, each device at its pod's stable name, joined into one inventory.
        ctl = self.controller()
        work = tempfile.mkdtemp(prefix="fleetsim-job-")
        self.addCleanup(shutil.rmtree, work, True)
        deploy = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "deploy", "container")
        env = dict(os.environ, FLEETSIM_BIN=h.BINARY,
                   FLEETSIM_STRESS_BIN=os.path.join(os.path.dirname(h.BINARY), "fleetsim-stress"),
                   FLEETSIM_LIB=deploy, FLEETSIM_SHARDS="3", POD_NAMESPACE="lab", FLEETSIM_INVENTORY_DIR=work,
                   FLEETSIM_CONTROLLER="http://127.0.0.1:%d" % ctl.port, FLEETSIM_BATCH_SIZE="2")
        port = h.free_port()

        def run_job():
            return subprocess.run(["sh", os.path.join(deploy, "register-inventory.sh"), "--device-count", "10",
                                   "--starting-port", str(port), "--ssh", "false"], env=env, capture_output=True,
                                  text=True, timeout=h.scaled(60))
        job = run_job()
        self.assertEqual(job.returncode, 0, job.stdout + job.stderr)
        self.assertIn("10 devices of 3 shards registered", job.stdout)
        host_of = {}
        for r in ctl.requests:
            for name, node in topology_nodes(self, json.loads(r["body"])).items():
                self.assertNotIn(name, host_of, "device registered twice")
                host_of[name] = node["host"]
        starts = [k * 10 // 3 for k in range(3)]  # shard k's first device
        want = {"%d-sim-device" % (port + i): "fleetsim-%d.fleetsim.lab.svc.cluster.local"
                % max(k for k in range(3) if starts[k] <= i) for i in range(10)}
        self.assertEqual(host_of, want)
        with open(os.path.join(work, "fleet.json")) as fh:
            merged = topology_nodes(self, json.load(fh))
        self.assertEqual({k: v["host"] for k, v in merged.items()}, want, "the joined inventory")
        # A controller that refuses every batch fails the job.
        refusing = self.controller(default=(400, "no"))
        env["FLEETSIM_CONTROLLER"] = "http://127.0.0.1:%d" % refusing.port
        job = run_job()
        self.assertNotEqual(job.returncode, 0, job.stdout + job.stderr)
        self.assertIn("3 shards not wholly registered", job.stdout)

    def test_default_batch_is_one_device_per_request_as_opendaylight(self):
        ctl = self.controller()
        f = self.fleet(3, ctl.args())
        reqs = ctl.wait_requests(3, 10)
        wait_log(f, r"controller: registered 3 of 3 devices in 3 batches, 0 failed")
        self.assertEqual([len(topology_nodes(self, json.loads(r["body"]))) for r in reqs], [1, 1, 1])
        self.assertEqual(reqs[0]["headers"].get("Authorization"), "Basic " + base64.b64encode(b"admin:admin").decode())
        f.stop()

    def test_opendaylight_older_forms_register_the_same(self):
        """--controller-destination IP:PORT with --auth USER PASS (OpenDaylight's older testtool), and
        --authUsername/--authPassword (one release's names), reach the controller as the new forms do."""
        for form in (["--auth", "ops", "s3cret"], ["--authUsername", "ops", "--authPassword", "s3cret"]):
            ctl = self.controller()
            f = self.fleet(2, ["--controller-destination", "127.0.0.1:%d" % ctl.port, "--exi", "false",
                               "--md-sal", "false", "--thread-amount", "2", "--throttle", "100"] + form)
            reqs = ctl.wait_requests(2, 10)
            wait_log(f, r"controller: registered 2 of 2 devices in 2 batches, 0 failed")
            self.assertEqual(reqs[0]["headers"].get("Authorization"),
                             "Basic " + base64.b64encode(b"ops:s3cret").decode(), form)
            self.assertIn("--thread-amount 2: fleetsim registers devices from one event loop", f.log())
            f.stop()

    def test_devices_per_port_registers_n_nodes_of_each_device(self):
        """--devices-per-port N (OpenDaylight's testtool): N nodes per device, "<port>-sim-device" then
        "<port>-sim-device-1" ..., all at the device's address and port: N mounts of one device."""
        ctl = self.controller()
        f = self.fleet(2, ctl.args("--devices-per-port", "3", "--generate-configs-batch-size", "4"))
        reqs = ctl.wait_requests(2, 10)
        wait_log(f, r"controller: registered 6 of 6 devices in 2 batches, 0 failed")
        self.assertIn("--devices-per-port 3: each of the 2 devices is 3 nodes", f.log())
        nodes = {}
        for r in reqs:
            nodes.update(topology_nodes(self, json.loads(r["body"])))
        want = {}
        for i in range(2):
            for copy in range(3):
                want["%d-sim-device%s" % (f.port + i, "-%d" % copy if copy else "")] = f.port + i
        self.assertEqual({name: node["port"] for name, node in nodes.items()}, want)
        assert_serves(self, f, 1)
        f.stop()

    def test_ssh_fleet_registers_with_tcp_only_false(self):
        ctl = self.controller()
        f = self.fleet(2, ctl.args("--generate-configs-batch-size", "10", "--ssh", "true", "--state-dir", self.tmp))
        reqs = ctl.wait_requests(1, 10)
        nodes = topology_nodes(self, json.loads(reqs[0]["body"]))
        self.assertEqual(nodes, expected_nodes(2, lambda i: "127.0.0.1", lambda i: f.port + i,
                                               lambda i: "%d-sim-device" % (f.port + i), "admin", "admin", False))
        f.stop()

    def test_generate_config_address_is_the_host_sent(self):
        ctl = self.controller()
        f = self.fleet(2, ctl.args("--generate-configs-batch-size", "2", "--generate-config-address", "192.0.2.7"))
        nodes = topology_nodes(self, json.loads(ctl.wait_requests(1, 10)[0]["body"]))
        self.assertEqual({n["host"] for n in nodes.values()}, {"192.0.2.7"})
        self.assertEqual(sorted(n["port"] for n in nodes.values()), [f.port, f.port + 1])
        f.stop()

    def test_retry_after_500_then_success(self):
        ctl = self.controller(script=[(500, '{"errors":"controller warming up"}')])
        f = self.fleet(3, ctl.args("--generate-configs-batch-size", "3"))
        reqs = ctl.wait_requests(2, 10)
        wait_log(f, r"controller: registered 3 of 3 devices in 1 batches, 0 failed")
        self.assertEqual(len(ctl.requests), 2)
        self.assertEqual(reqs[0]["body"], reqs[1]["body"])
        log = f.log()
        self.assertRegex(log, r"batch 1 of 1 \(devices 0-2\): attempt 1 of 3 failed: HTTP 500; "
                              r"the controller answered: \"\{\"errors\":\"controller warming up\"\}\"")
        self.assertNotIn("attempt 2 of 3 failed", log)
        f.stop()

    def test_permanent_400_is_reported_not_retried_and_the_fleet_serves(self):
        refusal = json.dumps({"errors": {"error": [{"error-type": "protocol", "error-tag": "malformed-message",
                                                    "error-message": "unknown node netconf-node"}]}})
        ctl = self.controller(script=[(204, ""), (400, refusal)])
        f = self.fleet(6, ctl.args("--generate-configs-batch-size", "2"))
        ctl.wait_requests(3, 10)
        wait_log(f, r"controller: registered 4 of 6 devices in 3 batches, 1 failed")
        time.sleep(h.scaled(0.3))
        self.assertEqual(len(ctl.requests), 3, "the refused batch was sent again")
        log = f.log()
        self.assertIn("batch 2 of 3 (devices 2-3): attempt 1 of 3 failed: HTTP 400; the controller answered: \"%s\""
                      % refusal, log)
        self.assertIn("batch 2 of 3 (devices 2-3) not registered: the controller refused it (not retried)", log)
        assert_serves(self, f, 2)
        f.stop()

    def test_long_answer_is_cut_in_the_log(self):
        ctl = self.controller(script=[(403, "x" * 1000 + "END")])
        f = self.fleet(1, ctl.args())
        wait_log(f, r"registered 0 of 1 devices in 1 batches, 1 failed")
        m = re.search(r"HTTP 403; the controller answered: \"(x*)\" \(cut\)", f.log())
        self.assertTrue(m, f.log())
        self.assertEqual(len(m.group(1)), 300)
        f.stop()

    def test_controller_down_backs_off_and_time_out_ends_registration(self):
        # Before: 3 attempts per batch, each logged with `the controller answered: ""`, 4.5 s for 3
        # devices and about 2 hours for 5,000. Now the outage is one line, the same batch is retried with
        # a backoff of 0.5 s, 1 s, 2 s... (attempts at 0, 0.5 and 1.5 s), and --time-out 3 ends it all.
        port = h.free_port()
        f = self.fleet(3, ["--controller-ip", "127.0.0.1", "--controller-port", str(port),
                           "--generate-configs-batch-size", "1", "--time-out", "3", "--log-level", "debug"])
        started = time.monotonic()
        m = wait_log(f, r"controller: --time-out 3 s reached: registered 0 of 3 devices, 3 not registered "
                        r"\(controller 127\.0\.0\.1:%d unreachable for [0-9.]+ s: connection refused\); "
                        r"the fleet keeps serving" % port, timeout=10)
        took = time.monotonic() - started
        self.assertGreater(took, 2.5, "the deadline is 3 s after registering starts")
        self.assertLess(took, h.scaled(4.5), "registration should end at --time-out 3")
        log = f.log()
        self.assertEqual(log.count(UNREACHABLE_LINE % port), 1, log)
        self.assertEqual(log.count("unreachable"), 2, "the outage line and the deadline line only:\n" + log)
        self.assertEqual(log.count("controller: no answer from"), 3, "attempts at 0, 0.5 and 1.5 s:\n" + log)
        self.assertNotIn('answered: ""', log)
        self.assertNotIn("attempt 1 of 3", log)
        self.assertNotIn("still unreachable", log)
        self.assertNotIn("controller: registered", log)
        self.assertEqual(log.count(m.group(0)), 1)
        # Registering is over: nothing more is tried, and the fleet serves.
        time.sleep(h.scaled(0.7))
        self.assertEqual(f.log().count("controller: no answer from"), 3)
        assert_serves(self, f, 2)
        f.stop()

    def test_controller_coming_up_late_gets_every_device(self):
        port = h.free_port()
        f = self.fleet(3, ["--controller-ip", "127.0.0.1", "--controller-port", str(port),
                           "--generate-configs-batch-size", "1"])
        wait_log(f, re.escape(UNREACHABLE_LINE % port))
        time.sleep(2)
        ctl = self.controller(port=port)
        reqs = ctl.wait_requests(3, 15)
        wait_log(f, r"controller: registered 3 of 3 devices in 3 batches, 0 failed")
        log = f.log()
        self.assertEqual(log.count(UNREACHABLE_LINE % port), 1, log)
        self.assertRegex(log, r"controller 127\.0\.0\.1:%d reachable again after [0-9.]+ s \([0-9]+ attempts "
                              r"without an answer\); registering goes on" % port)
        self.assertNotIn("not registered", log)
        self.assertNotIn('answered: ""', log)
        names = [n for r in reqs for n in topology_nodes(self, json.loads(r["body"]))]
        self.assertEqual(names, ["%d-sim-device" % (f.port + i) for i in range(3)])
        assert_serves(self, f, 0)
        f.stop()

    def test_unanswered_request_is_abandoned_at_time_out(self):
        ctl = self.controller(script=[(None, "")])
        f = self.fleet(2, ctl.args("--time-out", "2"))
        started = time.monotonic()
        wait_log(f, r"controller: --time-out 2 s reached: registered 0 of 2 devices, 2 not registered; "
                    r"the fleet keeps serving", timeout=8)
        self.assertLess(time.monotonic() - started, h.scaled(3.5))
        self.assertEqual(len(ctl.requests), 1)
        assert_serves(self, f, 1)
        f.stop()

    def test_empty_answer_is_said_to_be_empty(self):
        ctl = self.controller(script=[(503, "")])
        f = self.fleet(1, ctl.args())
        wait_log(f, r"controller: registered 1 of 1 devices in 1 batches, 0 failed")
        log = f.log()
        self.assertIn("batch 1 of 1 (devices 0-0): attempt 1 of 3 failed: HTTP 503 with an empty answer", log)
        self.assertNotIn('answered: ""', log)
        f.stop()

    def test_sigterm_during_an_unanswered_request_exits_promptly(self):
        ctl = self.controller(script=[(None, "")])
        f = self.fleet(2, ctl.args())
        ctl.wait_requests(1, 10)
        time.sleep(0.2)
        started = time.monotonic()
        f.stop()  # SIGTERM; raises unless the exit code is 0
        took = time.monotonic() - started
        self.assertLess(took, h.scaled(2.0), "fleetsim took %.2f s to exit" % took)

    def test_sigterm_during_a_retry_pause_exits_promptly(self):
        port = h.free_port()
        f = self.fleet(1, ["--controller-ip", "127.0.0.1", "--controller-port", str(port)])
        wait_log(f, re.escape(UNREACHABLE_LINE % port))
        started = time.monotonic()
        f.stop()
        self.assertLess(time.monotonic() - started, h.scaled(2.0))

    def test_address_per_device_nodes_are_named_by_address(self):
        ctl = self.controller()
        f = self.fleet(4, ctl.args("--generate-configs-batch-size", "3"), ip_per_device=True, ip="127.0.9.1")
        reqs = ctl.wait_requests(2, 10)
        wait_log(f, r"registered 4 of 4 devices in 2 batches, 0 failed")
        nodes = {}
        for r in reqs:
            nodes.update(topology_nodes(self, json.loads(r["body"])))
        want = expected_nodes(4, lambda i: "127.0.9.%d" % (1 + i), lambda i: f.port,
                              lambda i: "127.0.9.%d-sim-device" % (1 + i), "admin", "admin", True)
        self.assertEqual(nodes, want)
        f.stop()

    def test_bad_registration_options_exit_2_before_listening(self):
        for args, needle in [
                (["--controller-ip", "bad host"], "--controller-ip must be a host name"),
                (["--controller-ip", "127.0.0.1", "--ip-per-device", "--generate-config-address", "ctl.example"],
                 "must be an IPv4 address with --ip-per-device"),
                (["--controller-ip", "127.0.0.1", "--generate-config-address", "a/b"],
                 "--generate-config-address must be a host name"),
                (["--controller-ip", "127.0.0.1", "--generate-configs-batch-size", "0"],
                 "--generate-configs-batch-size must be"),
                (["--controller-ip", "127.0.0.1", "--controller-port", "70000"], "--controller-port must be"),
                (["--controller-ip", "127.0.0.1", "--time-out", "-1"], "--time-out must be"),
                (["--controller-ip", "127.0.0.1", "--time-out", "soon"], "--time-out must be")]:
            code, out = h.run_fleetsim(args + ["--ssh", "false"])
            self.assertEqual(code, 2, out)
            self.assertIn(needle, out)
            self.assertNotIn(h.READY_TEXT, out)


# ---------------------------------------------------------------- inventory

LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


class InventoryTests(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="fleetsim-inv-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def emit(self, fmt, args, name=None):
        path = os.path.join(self.tmp, name or ("inventory." + fmt))
        code, out = h.run_fleetsim(["--emit-inventory", path, "--inventory-format", fmt] + args)
        self.assertEqual(code, 0, out)
        self.assertIn("wrote the inventory of", out)
        base = os.path.basename(path)
        self.assertIn(base, os.listdir(self.tmp))
        self.assertEqual([n for n in os.listdir(self.tmp) if n.startswith(base + ".")], [],
                         "temporary files left behind")
        with open(path, newline="") as fh:
            return fh.read(), path

    def refused(self, args, needle):
        code, out = h.run_fleetsim(args)
        self.assertEqual(code, 2, out)
        self.assertIn(needle, out)
        return out

    # Two fleets: a port per device, and an address per device.
    PORT_FLEET = ["--device-count", "5", "--starting-port", "21000", "--snmp-starting-port", "22000",
                  "--username", "nc,user", "--password", "pw\"1", "--snmp-community", "comm"]
    ADDR_FLEET = ["--device-count", "300", "--ip", "127.3.0.250", "--ip-per-device", "--starting-port", "2830",
                  "--snmp-starting-port", "1161", "--ssh", "false"]

    def port_fleet_device(self, i):
        return {"host": "127.0.0.1", "netconf_port": 21000 + i, "snmp_port": 22000 + i,
                "name": "%d-sim-device" % (21000 + i)}

    def addr_fleet_device(self, i):
        host = str(ipaddress.IPv4Address("127.3.0.250") + i)
        return {"host": host, "netconf_port": 2830, "snmp_port": 1161, "name": host + "-sim-device"}

    def test_odl_json_is_the_registration_document(self):
        text, path = self.emit("odl-json", self.PORT_FLEET)
        nodes = topology_nodes(self, json.loads(text))
        want = expected_nodes(5, lambda i: "127.0.0.1", lambda i: 21000 + i, lambda i: "%d-sim-device" % (21000 + i),
                              "nc,user", 'pw"1', False)  # fleetsim's default transport is SSH
        self.assertEqual(nodes, want)
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode) & 0o077, 0, "holds a password: owner only")
        text, _ = self.emit("odl-json", self.ADDR_FLEET)
        nodes = topology_nodes(self, json.loads(text))
        want = expected_nodes(300, lambda i: self.addr_fleet_device(i)["host"], lambda i: 2830,
                              lambda i: self.addr_fleet_device(i)["name"], "admin", "admin", True)
        self.assertEqual(nodes, want)
        self.assertIn("127.3.1.169-sim-device", nodes)  # crosses a byte boundary

    def check_requisition(self, text, devices, device_of):
        root = ET.fromstring(text)
        # model-import: foreign-source attribute, node children only.
        self.assertEqual(root.tag, ONMS_NS + "model-import")
        self.assertEqual(root.get("foreign-source"), "fleetsim")
        self.assertTrue(set(root.attrib) <= {"foreign-source", "date-stamp", "last-import"})
        nodes = list(root)
        self.assertEqual(len(nodes), devices)
        order = {"interface": 0, "category": 1, "asset": 2, "meta-data": 3}
        labels = set()
        for i, node in enumerate(nodes):
            d = device_of(i)
            self.assertEqual(node.tag, ONMS_NS + "node")
            self.assertEqual(node.get("foreign-id"), d["name"])
            self.assertEqual(node.get("node-label"), d["name"])
            self.assertNotRegex(node.get("foreign-id"), r"[/\\?&*'\"]")
            labels.add(node.get("foreign-id"))
            kinds = [c.tag[len(ONMS_NS):] for c in node]
            self.assertTrue(all(k in order for k in kinds), kinds)
            self.assertEqual([order[k] for k in kinds], sorted(order[k] for k in kinds), "schema's sequence order")
            ifaces = node.findall(ONMS_NS + "interface")
            self.assertEqual(len(ifaces), 1)
            iface = ifaces[0]
            self.assertEqual(iface.get("ip-addr"), d["host"])
            ipaddress.ip_address(iface.get("ip-addr"))
            self.assertEqual(iface.get("snmp-primary"), "P")
            self.assertIn(iface.get("status"), ("1", None))
            self.assertEqual([s.get("service-name") for s in iface.findall(ONMS_NS + "monitored-service")],
                             ["ICMP", "SNMP"])
            self.assertEqual([c.tag for c in iface], [ONMS_NS + "monitored-service"] * 2)
            meta = {(m.get("context"), m.get("key")): m.get("value") for m in node.findall(ONMS_NS + "meta-data")}
            self.assertEqual(meta, {("requisition", "fleetsim-index"): str(i),
                                    ("requisition", "fleetsim-group"): "default",
                                    ("requisition", "fleetsim-type"): "minimal",
                                    ("requisition", "snmp-port"): str(d["snmp_port"]),
                                    ("requisition", "netconf-port"): str(d["netconf_port"])})
            self.assertEqual([c.get("name") for c in node.findall(ONMS_NS + "category")], ["fleetsim"])
        self.assertEqual(len(labels), devices, "foreign-ids must be unique")

    def test_opennms_requisition_lists_nodes_with_their_snmp_interface(self):
        text, _ = self.emit("opennms-requisition", self.PORT_FLEET)
        self.check_requisition(text, 5, self.port_fleet_device)
        text, _ = self.emit("opennms-requisition", self.ADDR_FLEET)
        self.check_requisition(text, 300, self.addr_fleet_device)

    def check_file_sd(self, text, devices, device_of):
        groups = json.loads(text)
        self.assertIsInstance(groups, list)
        self.assertEqual(len(groups), devices)
        for i, g in enumerate(groups):
            d = device_of(i)
            self.assertEqual(set(g.keys()), {"targets", "labels"})
            self.assertEqual(g["targets"], ["%s:%d" % (d["host"], d["snmp_port"])])
            for name, value in g["labels"].items():
                self.assertRegex(name, LABEL_NAME)
                self.assertFalse(name.startswith("__"), "reserved label " + name)
                self.assertIsInstance(value, str)
            self.assertEqual(g["labels"], {"fleetsim_node": d["name"], "fleetsim_index": str(i),
                                           "fleetsim_group": "default", "fleetsim_type": "minimal",
                                           "fleetsim_netconf": "%s:%d" % (d["host"], d["netconf_port"])})

    def test_prometheus_file_sd_targets_are_the_snmp_agents(self):
        text, path = self.emit("prometheus-sd", self.PORT_FLEET)
        self.check_file_sd(text, 5, self.port_fleet_device)
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode) & 0o044, 0o044 & ~self.umask(),
                         "Prometheus reads it: as readable as any new file")
        text, _ = self.emit("prometheus-sd", self.ADDR_FLEET)
        self.check_file_sd(text, 300, self.addr_fleet_device)

    @staticmethod
    def umask():
        mask = os.umask(0)
        os.umask(mask)
        return mask

    def test_devices_per_port_lists_n_nodes_per_device_in_every_format(self):
        for fmt, count in (("odl-json", lambda t: t.count('"node-id"')), ("csv", lambda t: t.count("-sim-device")),
                           ("prometheus-sd", lambda t: t.count('"targets"'))):
            path = os.path.join(self.tmp, "inv-" + fmt)
            code, text = h.run_fleetsim(["--device-count", "3", "--devices-per-port", "2", "--emit-inventory", path,
                                         "--inventory-format", fmt])
            self.assertEqual(code, 0, text)
            self.assertIn("wrote the inventory of 3 devices as 6 nodes", text)
            with open(path) as fh:
                doc = fh.read()
            self.assertEqual(count(doc), 6, fmt)
            if fmt != "prometheus-sd":  # its targets are SNMP agents, labelled by node
                self.assertIn("17831-sim-device-1", doc, fmt)
        code, text = h.run_fleetsim(["--devices-per-port", "0", "--emit-inventory", path])
        self.assertEqual(code, 2)
        self.assertIn("--devices-per-port must be a number from 1 to 1000", text)

    def test_csv_has_a_row_per_device(self):
        text, _ = self.emit("csv", self.PORT_FLEET)
        rows = list(csv.DictReader(text.splitlines()))
        self.assertEqual(len(rows), 5)
        for i, row in enumerate(rows):
            d = self.port_fleet_device(i)
            self.assertEqual(row, {"index": str(i), "node_id": d["name"], "netconf_host": d["host"],
                                   "netconf_port": str(d["netconf_port"]), "transport": "ssh",
                                   "username": "nc,user", "password": 'pw"1', "snmp_host": d["host"],
                                   "snmp_port": str(d["snmp_port"]), "snmp_community": "comm",
                                   "group": "default", "type": "minimal"})
        text, _ = self.emit("csv", self.ADDR_FLEET + ["--snmp", "false"])
        rows = list(csv.DictReader(text.splitlines()))
        self.assertEqual(len(rows), 300)
        d = self.addr_fleet_device(299)
        self.assertEqual(rows[299], {"index": "299", "node_id": d["name"], "netconf_host": d["host"],
                                     "netconf_port": "2830", "transport": "tcp", "username": "admin",
                                     "password": "admin", "snmp_host": "", "snmp_port": "",
                                     "snmp_community": "", "group": "default", "type": "minimal"})

    def test_generate_config_address_moves_every_format(self):
        text, _ = self.emit("prometheus-sd", ["--device-count", "3", "--ip-per-device", "--ip", "127.0.0.1",
                                              "--generate-config-address", "10.0.0.254"])
        self.assertEqual([g["targets"][0] for g in json.loads(text)],
                         ["10.0.0.254:16100", "10.0.0.255:16100", "10.0.1.0:16100"])
        text, _ = self.emit("csv", ["--generate-config-address", "sim.example.net", "--device-count", "2"])
        self.assertEqual([r["netconf_host"] for r in csv.DictReader(text.splitlines())], ["sim.example.net"] * 2)
        text, _ = self.emit("odl-json", ["--ip", "0.0.0.0"])
        self.assertEqual([n["host"] for n in topology_nodes(self, json.loads(text)).values()], ["127.0.0.1"])

    def test_inventory_opens_no_socket_while_the_ports_are_taken(self):
        tcp = socket.socket()
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            tcp.bind(("127.0.0.1", 0))
            tcp.listen(1)
            port = tcp.getsockname()[1]
            udp.bind(("127.0.0.1", port))
            for fmt in ("odl-json", "opennms-requisition", "prometheus-sd", "csv"):
                args = ["--device-count", "1", "--starting-port", str(port), "--snmp-starting-port", str(port)]
                self.emit(fmt, args, name="taken." + fmt)
                os.unlink(os.path.join(self.tmp, "taken." + fmt))
            # The same plan really is refused by a fleet that has to listen.
            code, out = h.run_fleetsim(["--device-count", "1", "--starting-port", str(port), "--ssh", "false"])
            self.assertEqual(code, 2, out)
        finally:
            tcp.close()
            udp.close()

    def test_inventory_replaces_an_existing_file_whole(self):
        path = os.path.join(self.tmp, "inventory.csv")
        with open(path, "w") as fh:
            fh.write("old content that is longer than the new one\n" * 1000)
        text, _ = self.emit("csv", ["--device-count", "1"])
        self.assertTrue(text.startswith("index,node_id,"), text[:100])
        self.assertNotIn("old content", text)

    def test_bad_inventory_plans_exit_2(self):
        out_file = os.path.join(self.tmp, "x")
        base = ["--emit-inventory", out_file]
        self.refused(base + ["--inventory-format", "prometheus-sd", "--snmp", "false"], "--snmp false")
        self.refused(base + ["--inventory-format", "opennms-requisition", "--snmp", "false"], "--snmp false")
        self.refused(base + ["--inventory-format", "opennms-requisition", "--generate-config-address", "sim.example"],
                     "needs an IP address")
        self.refused(base + ["--inventory-format", "yaml"], "--inventory-format must be")
        self.refused(base + ["--device-count", "10", "--starting-port", "65530"], "run past port 65535")
        self.refused(base + ["--device-count", "10", "--snmp-starting-port", "65530"], "run past port 65535")
        self.refused(base + ["--device-count", "10", "--ip-per-device", "--ip", "255.255.255.250"],
                     "run past 255.255.255.255")
        self.refused(base + ["--ip-per-device", "--generate-config-address", "sim.example"],
                     "must be an IPv4 address with --ip-per-device")
        self.assertEqual(os.listdir(self.tmp), [])
        self.refused(["--emit-inventory", os.path.join(self.tmp, "no", "such", "dir"), "--inventory-format", "csv"],
                     "cannot create a file beside it")
        self.assertEqual(os.listdir(self.tmp), [])


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2)
