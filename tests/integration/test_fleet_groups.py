"""A fleet of two groups from a fleet file (fleetsim --fleet): examples/fleet.json as the repository ships
it (100 crs-x devices and 100 devices of the vendor-style folder examples/vendor-yang, on two loopback
address ranges that share one NETCONF and one SNMP port), moved to free ports.

Checks, with independent peers (ncclient over TCP, net-snmp's snmpget): each address range answers with
its own hello, its own configuration and its own SNMP identity; the readiness line, the metrics, the
report and the inventory name every device's group and type. Bad fleet files (an unknown key, a value the
command line refuses, two groups claiming one address, a schemas folder that is empty or missing) exit 2
with one line naming the file and the line, before anything listens.

Run: /usr/bin/python3 test_fleet_groups.py <path to fleetsim>
"""

import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request
import warnings

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402
from test_controller import Controller  # noqa: E402
from test_ncclient import tcp_manager  # noqa: E402

warnings.simplefilter("default")
warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"ncclient(\.|$)")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "fleet.json")
ACME_NS = "urn:example:acme:router"


def example_groups(port, snmp_port, folder=os.path.join(ROOT, "examples")):
    """examples/fleet.json's groups, on @port and @snmp_port, with its relative paths made absolute."""
    with open(EXAMPLE) as f:
        doc = json.load(f)
    for g in doc["fleetsim-fleet:fleet"]["group"]:
        g["starting-port"] = port
        g["snmp-starting-port"] = snmp_port
        for key in ("schemas-dir", "initial-config-xml-file"):
            if key in g:
                g[key] = os.path.join(folder, g[key])
    return doc


def write_json(folder, name, doc, text=None):
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write(text if text is not None else json.dumps(doc, indent=2) + "\n")
    return path


def run_refused(args, timeout=30):
    """fleetsim with @args, which must exit 2 by itself; returns its output."""
    p = subprocess.run([h.BINARY] + args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=h.scaled(timeout))
    out = p.stdout.decode(errors="replace")
    assert p.returncode == 2, "expected exit 2, got %d:\n%s" % (p.returncode, out)
    return out


def connect_refused(addr):
    try:
        socket.create_connection(addr, timeout=1).close()
    except OSError:
        return True
    return False


def snmp_get(host, port, oid):
    out = subprocess.run(["snmpget", "-v2c", "-c", "public", "-On", "-Oqv", "-t", "2", "-r", "1",
                          "%s:%d" % (host, port), oid], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         timeout=h.scaled(20)).stdout.decode(errors="replace")
    return out.strip()


def start_fleet_file(cls, make_doc, make_args, retry):
    """Start fleetsim --fleet on free ports for a test class: make_doc(port) is the fleet file,
    make_args(port) the further arguments; a start whose log matches @retry (a port taken) is tried again
    on other ports. Sets cls.port, cls.path, cls.log_path and cls.proc."""
    rng = random.Random()
    for _ in range(h.START_ATTEMPTS):
        cls.port = rng.randrange(h.PORT_LOW, h.PORT_HIGH)
        cls.path = write_json(cls.tmp, "fleet.json", make_doc(cls.port))
        cls.log_path = os.path.join(cls.tmp, "fleetsim.log")
        with open(cls.log_path, "wb") as log:
            cls.proc = subprocess.Popen([h.BINARY, "--fleet", cls.path] + make_args(cls.port),
                                        stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        deadline = time.monotonic() + h.scaled(h.READY_TIMEOUT_S)
        while time.monotonic() < deadline and cls.proc.poll() is None and h.READY_TEXT not in cls.log():
            time.sleep(0.02)
        if cls.proc.poll() is None and h.READY_TEXT in cls.log():
            return
        if cls.proc.poll() is None:
            cls.proc.kill()
        cls.proc.wait()
        if not re.search(retry, cls.log()):
            raise AssertionError("fleetsim --fleet did not start:\n" + cls.log())
    raise AssertionError("no free ports in %d attempts" % h.START_ATTEMPTS)


class TwoGroups(unittest.TestCase):
    """examples/fleet.json, started once."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="fleetsim-groups-")
        cls.report = os.path.join(cls.tmp, "report.json")
        rng = random.Random()

        def args(port):
            cls.metrics_port = rng.randrange(h.PORT_LOW, h.PORT_HIGH)
            return ["--threads", "2", "--status-interval", "0", "--report", cls.report, "--metrics",
                    "127.0.0.1:%d" % cls.metrics_port, "--metrics-per-device"]

        start_fleet_file(cls, lambda port: example_groups(port, port), args, r"cannot listen|cannot bind|metrics")

    @classmethod
    def tearDownClass(cls):
        if cls.proc.poll() is None:
            cls.proc.send_signal(signal.SIGTERM)
            try:
                code = cls.proc.wait(timeout=h.scaled(20))
            except subprocess.TimeoutExpired:
                cls.proc.kill()
                code = cls.proc.wait()
            assert code == 0, "fleetsim exited %s:\n%s" % (code, cls.log())
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def log(cls):
        with open(cls.log_path, errors="replace") as f:
            return f.read()

    def test_readiness_line_names_each_group_and_type(self):
        line = next(l for l in self.log().splitlines() if h.READY_TEXT in l)
        self.assertIn("200 devices listening on 127.0.1.1-127.0.1.100 port %d (core: 100 crs-x" % self.port, line)
        self.assertIn("127.0.2.1-127.0.2.100 port %d (edge: 100 vendor-yang" % self.port, line)

    def test_each_range_answers_with_its_own_hello_and_data(self):
        with tcp_manager(("127.0.1.7", self.port)) as core, tcp_manager(("127.0.2.7", self.port)) as edge:
            core_caps = list(core.server_capabilities)
            edge_caps = list(edge.server_capabilities)
            self.assertFalse([c for c in core_caps if "acme" in c], "a crs-x device advertises acme modules")
            for module in ("acme-router", "acme-types", "acme-router-deviations"):
                self.assertTrue([c for c in edge_caps if "module=%s&" % module in c or c.endswith(module)],
                                "%s missing from the edge hello: %s" % (module, edge_caps))
            core_cfg = core.get_config("running").data_xml
            edge_cfg = edge.get_config("running").data_xml
            self.assertIn("Bundle-Ether", core_cfg)  # crs-x's interfaces
            self.assertNotIn(ACME_NS, core_cfg)
            self.assertIn(ACME_NS, edge_cfg)
            self.assertIn("<local-as>64512</local-as>", edge_cfg)
            self.assertNotIn("Bundle-Ether", edge_cfg)

    def test_an_edit_stays_on_its_device(self):
        edit = ('<config xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><router xmlns="%s">'
                '<hostname>edge-7-edited</hostname></router></config>' % ACME_NS)
        with tcp_manager(("127.0.2.8", self.port)) as dev:
            dev.edit_config(target="running", config=edit)
            self.assertIn("edge-7-edited", dev.get_config("running").data_xml)
        with tcp_manager(("127.0.2.9", self.port)) as other:
            self.assertNotIn("edge-7-edited", other.get_config("running").data_xml)

    def test_each_range_has_its_own_snmp_agent(self):
        self.assertIn("Cisco IOS XR", snmp_get("127.0.1.3", self.port, "1.3.6.1.2.1.1.1.0"))
        self.assertIn("crs-x-2", snmp_get("127.0.1.3", self.port, "1.3.6.1.2.1.1.5.0"))
        edge = snmp_get("127.0.2.3", self.port, "1.3.6.1.2.1.1.1.0")
        self.assertNotIn("Cisco", edge)
        self.assertIn("minimal profile", edge)
        # the edge group's devices follow the core's in the fleet: 127.0.2.3 is device 102
        self.assertEqual(snmp_get("127.0.2.3", self.port, "1.3.6.1.2.1.2.1.0"),
                         snmp_get("127.0.2.4", self.port, "1.3.6.1.2.1.2.1.0"))

    def test_an_address_outside_both_ranges_is_refused(self):
        with self.assertRaises(OSError):
            with socket.create_connection(("127.0.3.1", self.port), timeout=2) as s:
                s.settimeout(2)
                if not s.recv(1):
                    raise OSError("closed")

    def test_metrics_name_groups_and_types(self):
        text = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % self.metrics_port,
                                      timeout=h.scaled(10)).read().decode()
        self.assertIn('fleetsim_group_devices{group="core",type="crs-x"} 100', text)
        self.assertIn('fleetsim_group_devices{group="edge",type="vendor-yang"} 100', text)
        self.assertIn('fleetsim_device_info{device="0",group="core",type="crs-x"} 1', text)
        self.assertIn('fleetsim_device_info{device="150",group="edge",type="vendor-yang"} 1', text)

    def test_report_names_groups_and_types(self):
        self.proc.send_signal(signal.SIGUSR1)
        deadline = time.monotonic() + h.scaled(10)
        while time.monotonic() < deadline and "report written" not in self.log():
            time.sleep(0.05)
        with open(self.report) as f:
            rows = {d["device"]: d for d in json.load(f)["devices"]}
        self.assertEqual((rows[99]["group"], rows[99]["type"]), ("core", "crs-x"))
        self.assertEqual((rows[100]["group"], rows[100]["type"]), ("edge", "vendor-yang"))
        self.assertEqual(rows[100]["address"], "127.0.2.1")

    def test_inventory_names_groups_and_types(self):
        out = os.path.join(self.tmp, "inventory.csv")
        p = subprocess.run([h.BINARY, "--fleet", self.path, "--emit-inventory", out, "--inventory-format", "csv"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=h.scaled(30))
        self.assertEqual(p.returncode, 0, p.stdout.decode())
        with open(out) as f:
            lines = f.read().splitlines()
        self.assertTrue(lines[0].endswith(",group,type"), lines[0])
        self.assertEqual(len(lines), 201)
        self.assertTrue(lines[1].startswith("0,127.0.1.1-sim-device,127.0.1.1,%d,tcp," % self.port), lines[1])
        self.assertTrue(lines[1].endswith(",core,crs-x"), lines[1])
        self.assertTrue(lines[101].startswith("100,127.0.2.1-sim-device,127.0.2.1,"), lines[101])
        self.assertTrue(lines[101].endswith(",edge,vendor-yang"), lines[101])


class GroupsThatDiffer(unittest.TestCase):
    """Two groups of one type (crs-x, loaded once) that differ in everything a group sets: one speaks SSH
    with its own login, SNMP community and 150 ms injected SNMP latency; the other plain TCP, another
    community, no latency. Each range must behave as its own group says."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="fleetsim-groups-differ-")
        cls.controller = Controller()

        def doc(port):
            return {"fleetsim-fleet:fleet": {"group": [
                {"name": "secure", "device-count": 3, "profile": "crs-x", "ip": "127.0.11.1",
                 "ip-per-device": True, "starting-port": port, "snmp-starting-port": port, "ssh": True,
                 "username": "ops", "password": "s3cret", "snmp-community": "alpha",
                 "snmp-latency": "150ms"},
                {"name": "plain", "device-count": 3, "profile": "crs-x", "ip": "127.0.12.1",
                 "ip-per-device": True, "starting-port": port, "snmp-starting-port": port, "ssh": False,
                 "snmp-community": "beta"}]}}

        start_fleet_file(cls, doc, lambda port: ["--threads", "2", "--status-interval", "0", "--state-dir",
                                                 os.path.join(cls.tmp, "state"), "--generate-configs-batch-size",
                                                 "4"] + cls.controller.args(), r"cannot listen|cannot bind")

    @classmethod
    def tearDownClass(cls):
        TwoGroups.tearDownClass.__func__(cls)
        cls.controller.close()

    @classmethod
    def log(cls):
        with open(cls.log_path, errors="replace") as f:
            return f.read()

    def test_one_type_is_loaded_once_for_both_groups(self):
        line = next(l for l in self.log().splitlines() if h.READY_TEXT in l)
        self.assertIn("(secure: 3 crs-x, NETCONF over SSH)", line)
        self.assertIn("(plain: 3 crs-x, NETCONF over TCP)", line)

    def test_each_group_has_its_transport_and_login(self):
        from ncclient import manager
        m = manager.connect(host="127.0.11.2", port=self.port, username="ops", password="s3cret",
                            hostkey_verify=False, look_for_keys=False, allow_agent=False, timeout=h.scaled(10))
        try:
            self.assertIn("Bundle-Ether", m.get_config("running").data_xml)
        finally:
            m.close_session()
        with self.assertRaises(Exception):  # the other group's default login is not this group's
            manager.connect(host="127.0.11.2", port=self.port, username="admin", password="admin",
                            hostkey_verify=False, look_for_keys=False, allow_agent=False, timeout=h.scaled(10))
        with tcp_manager(("127.0.12.2", self.port)) as plain:  # no SSH at all on the other range
            self.assertIn("Bundle-Ether", plain.get_config("running").data_xml)

    def test_registration_sends_each_group_with_its_own_login_and_transport(self):
        requests = self.controller.wait_requests(2, 20)  # 6 devices in batches of 4
        nodes = {}
        for r in requests:
            self.assertEqual(r["method"], "PATCH")
            for node in json.loads(r["body"])["network-topology:topology"][0]["node"]:
                nodes[node["node-id"]] = node["netconf-node-topology:netconf-node"]
        self.assertEqual(sorted(nodes), ["127.0.11.%d-sim-device" % i for i in (1, 2, 3)] +
                         ["127.0.12.%d-sim-device" % i for i in (1, 2, 3)])
        secure, plain = nodes["127.0.11.2-sim-device"], nodes["127.0.12.2-sim-device"]
        self.assertEqual((secure["host"], secure["port"], secure["tcp-only"]), ("127.0.11.2", self.port, False))
        self.assertEqual(secure["login-password-unencrypted"], {"username": "ops", "password": "s3cret"})
        self.assertEqual((plain["host"], plain["tcp-only"]), ("127.0.12.2", True))
        self.assertEqual(plain["login-password-unencrypted"], {"username": "admin", "password": "admin"})
        deadline = time.monotonic() + h.scaled(10)
        while time.monotonic() < deadline and "registered 6 of 6" not in self.log():
            time.sleep(0.05)
        self.assertIn("controller: group secure: devices 0-2, type crs-x", self.log())
        self.assertIn("controller: group plain: devices 3-5, type crs-x", self.log())

    def test_each_group_has_its_community_and_latency(self):
        def timed(host, community):
            start = time.monotonic()
            out = subprocess.run(["snmpget", "-v2c", "-c", community, "-On", "-Oqv", "-t", "1", "-r", "0",
                                  "%s:%d" % (host, self.port), "1.3.6.1.2.1.1.5.0"], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, timeout=h.scaled(10)).stdout.decode().strip()
            return out, time.monotonic() - start

        out, slow = timed("127.0.11.3", "alpha")
        self.assertEqual(out, '"crs-x-2"')
        self.assertGreaterEqual(slow, 0.15)
        out, fast = timed("127.0.12.3", "beta")
        self.assertEqual(out, '"crs-x-5"')  # device 5 of the fleet: the plain group follows the secure one
        self.assertLess(fast, 0.15)
        out, _ = timed("127.0.12.3", "alpha")  # the secure group's community is not the plain group's
        self.assertIn("Timeout", out)


class BadFleetFiles(unittest.TestCase):
    """Each exits 2 with one line naming the file and the line; nothing listens."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="fleetsim-badfleet-")
        self.port = random.randrange(h.PORT_LOW, h.PORT_HIGH)
        self.doc = example_groups(self.port, self.port)
        self.groups = self.doc["fleetsim-fleet:fleet"]["group"]

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def refused(self, doc, expect_line=True):
        path = write_json(self.tmp, "fleet.json", doc)
        out = run_refused(["--fleet", path, "--status-interval", "0"])
        if expect_line:
            self.assertRegex(out, re.escape(path) + r"(:\d+: |: .*\(line \d+\))", out)
        self.assertTrue(connect_refused(("127.0.1.1", self.port)), "something listens after a refusal")
        self.assertTrue(connect_refused(("127.0.2.1", self.port)), "something listens after a refusal")
        return out

    def line_of(self, path, text):
        with open(path) as f:
            for n, line in enumerate(f, 1):
                if text in line:
                    return n
        raise AssertionError("%s not in %s" % (text, path))

    def test_unknown_key(self):
        self.groups[1]["no-such-option"] = 5
        out = self.refused(self.doc)
        path = os.path.join(self.tmp, "fleet.json")
        self.assertIn("no-such-option", out)
        self.assertIn("%s:%d:" % (path, self.line_of(path, "no-such-option")), out)

    def test_value_the_command_line_refuses(self):
        self.groups[1]["snmp-latency"] = "fast"
        out = self.refused(self.doc)
        self.assertIn('group "edge"', out)
        self.assertIn("snmp-latency", out)

    def test_not_json_at_all(self):
        path = write_json(self.tmp, "fleet.json", None, text='{"fleetsim-fleet:fleet": {"group": [\n{"name": ')
        out = run_refused(["--fleet", path])
        self.assertIn(path, out)

    def test_two_groups_claiming_one_address(self):
        self.groups[1]["ip"] = "127.0.1.50"  # inside core's 127.0.1.1-127.0.1.100
        out = self.refused(self.doc)
        self.assertIn('"core"', out)
        self.assertIn('"edge"', out)
        self.assertIn("127.0.1.50", out)

    def test_empty_schemas_folder(self):
        empty = os.path.join(self.tmp, "empty-yang")
        os.mkdir(empty)
        self.groups[1]["schemas-dir"] = empty
        out = self.refused(self.doc)
        path = os.path.join(self.tmp, "fleet.json")
        self.assertRegex(out, re.escape(path) + r':\d+: group "edge": ')
        self.assertIn("holds no .yang file", out)
        self.assertIn(empty, out)

    def test_missing_schemas_folder(self):
        self.groups[1]["schemas-dir"] = os.path.join(self.tmp, "no-such-folder")
        out = self.refused(self.doc)
        self.assertIn('group "edge"', out)
        self.assertIn("cannot read schemas folder", out)

    def test_schemas_folder_that_is_a_file(self):
        f = os.path.join(self.tmp, "a.yang")
        with open(f, "w") as fh:
            fh.write("module a { prefix a; }\n")
        self.groups[1]["schemas-dir"] = f
        out = self.refused(self.doc)
        self.assertIn("cannot read schemas folder", out)
        self.assertIn("Not a directory", out)


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2)
