"""fleetsim-stress on IPv6 (issue 19): every mode with --ip ::1 against peers that speak IPv6.

The peers: fake_netconf's scripted servers on [::1] over TCP, SSH (paramiko) and TLS, net-snmp's snmpd on
udp6:[::1], and small http.server stand-ins on [::1] for a RESTCONF controller (restconf, controller-mount).
Each run checks what the peer saw (the client's address is ::1, the requests arrived, the URL's host is
bracketed), not only what the client reports. reconcile joins a report whose addresses are IPv6 texts
written differently from notify's. Bad --ip text is a usage error (exit 2).

When fleetsim itself listens on ::1 (probed: `fleetsim --ip ::1 --device-count 1` starting), edit, snmp and
record also run against it; until then those tests say why they are skipped.

Loopback only; every run is bounded.

Run: /usr/bin/python3 test_stress_ipv6.py <path to fleetsim> <path to fleetsim-stress> [unittest options]
"""

import http.server
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import unittest
import urllib.parse

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402
import fake_netconf as fake  # noqa: E402
import test_stress_controller as tsc  # noqa: E402
import test_stress_notify as tsn  # noqa: E402
import test_stress_snmp as tss  # noqa: E402
import test_stress_tls as tst  # noqa: E402

STRESS = None
RUN_LIMIT_S = 30.0
SNMP_OIDS = [tss.IF_ENTRY, tss.SYS_UPTIME, tss.SYSTEM]
DEST = "/restconf/data/network-topology:network-topology/topology=topology-netconf/node={DEVICE_PORT}-sim-device" \
       "/yang-ext:mount/ietf-interfaces:interfaces"


def run(argv, limit_s=RUN_LIMIT_S):
    """fleetsim-stress argv (with a --json manifest added) to its end: h.StressRun."""
    fd, path = tempfile.mkstemp(prefix="fleetsim-stress-ipv6-", suffix=".json")
    os.close(fd)
    os.unlink(path)
    try:
        return h.run_stress(STRESS, list(argv) + ["--json", path], path, limit_s)
    finally:
        if os.path.exists(path):
            os.unlink(path)


class Http6(tsc.Controller):
    """http.server on a random port of ::1; answer(method, path, body) -> (status, body bytes or JSON-able).
    Records (method, path, Host header, client address) of every request. Stops as the controller stand-in."""

    def __init__(self, answer):
        self.requests = []
        self.lock = threading.Lock()
        srv = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def handle_any(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                with srv.lock:
                    srv.requests.append((self.command, self.path, self.headers.get("Host"), self.client_address[0]))
                status, out = answer(self.command, self.path, body)
                if not isinstance(out, bytes):
                    out = json.dumps(out).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/yang-data+json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            do_GET = do_POST = do_PUT = do_PATCH = handle_any

        class Server(http.server.ThreadingHTTPServer):
            address_family = socket.AF_INET6
            daemon_threads = True

        for _ in range(20):
            try:
                self.server = Server(("::1", random.randrange(h.PORT_LOW, h.PORT_HIGH)), Handler)
                break
            except OSError:
                continue
        else:
            raise AssertionError("no free port on ::1 for the HTTP stand-in")
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05})
        self.thread.start()


class Ipv6Case(unittest.TestCase):
    maxDiff = None

    def ok(self, r):
        self.assertEqual(r.code, 0, str(r))
        self.assertIsNotNone(r.manifest, str(r))
        return r.manifest

    def assert_edits_arrived(self, srv, n):
        self.assertTrue(srv.finished(), "the fake server's connections did not end")
        edits = [q for c in srv.connections for q in c.requests if q.op == "edit-config"]
        self.assertEqual(len(edits), n, [c.requests for c in srv.connections])
        for c in srv.connections:
            self.assertEqual(c.peer[0], "::1", "the client's address as the server saw it")
            self.assertEqual(c.errors, [])


class FakePeersTest(Ipv6Case):
    def test_edit_over_tcp_on_ipv6_loopback(self):
        with fake.FakeServers(host="::1") as srv:
            r = run(["edit", "--ip", "::1", "--port", srv.port, "--edits", 20, "--candidate-datastore", "false",
                     "--ssh", "false"])
            m = self.ok(r)
            self.assert_edits_arrived(srv, 20)
        self.assertEqual(m["parameters"]["ip"], "::1", r)
        self.assertEqual(m["parameters"]["port"], srv.port, r)

    def test_mount_of_several_devices_over_tcp_on_ipv6(self):
        with fake.FakeServers(host="::1", count=3) as srv:
            r = run(["mount", "--ip", "::1", "--port", srv.port, "--device-count", 3, "--ssh", "false"])
            m = self.ok(r)
            self.assertTrue(srv.finished())
            self.assertEqual(sorted(c.device for c in srv.connections), [0, 1, 2])
            self.assertEqual({c.peer[0] for c in srv.connections}, {"::1"})
        self.assertEqual(m["parameters"]["ip"], "::1", r)
        self.assertIn("3", r.out)

    def test_edit_and_mount_over_ssh_on_ipv6(self):
        with fake.FakeServers(host="::1", count=2, ssh=("ops", "s3cret")) as srv:
            r = run(["edit", "--ip", "::1", "--port", srv.port, "--edits", 10, "--candidate-datastore", "false",
                     "--ssh", "true", "--username", "ops", "--password", "s3cret"])
            m = self.ok(r)
            self.assert_edits_arrived(srv, 10)
            self.assertIs(m["parameters"]["ssh"], True, r)
            self.assertEqual(m["parameters"]["ip"], "::1", r)
        with fake.FakeServers(host="::1", count=2, ssh=("ops", "s3cret")) as srv:
            r = run(["mount", "--ip", "::1", "--port", srv.port, "--device-count", 2, "--ssh", "true",
                     "--username", "ops", "--password", "s3cret"])
            self.ok(r)
            self.assertTrue(srv.finished())
            self.assertEqual(sorted(c.device for c in srv.connections), [0, 1])
            self.assertTrue(all(c.client_hello for c in srv.connections), "a hello over each SSH channel")

    def test_notify_reports_its_ipv6_local_address_as_the_server_saw_it(self):
        script = fake.Script(caps=(h.BASE10, h.BASE11, tsn.NOTIF_CAP), notify=True)
        with fake.FakeServers(host="::1", count=2, script=script) as srv:
            r = run(["notify", "--ip", "::1", "--port", srv.port, "--device-count", 2, "--ssh", "false",
                     "--count", 1])
            m = self.ok(r)
            self.assertTrue(srv.finished())
            peers = {c.device: "[%s]:%d" % c.peer[:2] for c in srv.connections}
        self.assertEqual([(d["address"], d["port"]) for d in m["devices"]],
                         [("::1", srv.port), ("::1", srv.port + 1)], r)
        self.assertEqual({d["device"]: d["local"] for d in m["devices"]}, peers, r)

    def test_restconf_url_brackets_an_ipv6_controller(self):
        ctl = Http6(lambda method, path, body: (204, b""))
        try:
            content = os.path.join(tempfile.mkdtemp(prefix="fleetsim-ipv6-rc-"), "edit.json")
            with open(content, "w") as f:
                f.write('{"ietf-interfaces:interface":[{"name":"x-{PEERID}-{INTLEAF}"}]}')
            r = run(["restconf", "--ip", "::1", "--port", ctl.port, "--destination", DEST, "--edits", 6,
                     "--thread-amount", 2, "--same-device", "false", "--device-port-range-start", 17830,
                     "--edit-content", content, "--timeout", 5])
            shutil.rmtree(os.path.dirname(content))
        finally:
            ctl.stop()
        m = self.ok(r)
        self.assertEqual(m["parameters"]["ip"], "::1", r)
        self.assertEqual(len(ctl.requests), 6, ctl.requests)
        for method, path, host, client in ctl.requests:
            self.assertEqual(host, "[::1]:%d" % ctl.port, "the URL's host, bracketed")
            self.assertEqual(client, "::1")
            # {DEVICE_PORT} is replaced, the colons of the host did not disturb it.
            self.assertRegex(urllib.parse.unquote(path), r"/node=1783[01]-sim-device/yang-ext:mount/")

    def test_controller_mount_polls_an_ipv6_controller(self):
        names = ["%d-sim-device" % (17830 + i) for i in range(2)]
        ctl = Http6(lambda method, path, body: (200, tsc.topology([(n, "connected") for n in names], "container")))
        work = tempfile.mkdtemp(prefix="fleetsim-ipv6-cm-")
        try:
            r = run(["controller-mount", "--url", "http://[::1]:%d/restconf" % ctl.port, "--device-count", 2,
                     "--interval", 0.1, "--timeout", 5, "--csv", os.path.join(work, "curve.csv")])
        finally:
            ctl.stop()
            shutil.rmtree(work)
        m = self.ok(r)
        self.assertTrue(m["results"]["all_connected"], r)
        self.assertTrue(ctl.requests)
        self.assertTrue(all(q[2] == "[::1]:%d" % ctl.port and q[3] == "::1" for q in ctl.requests), ctl.requests)

    def test_snmp_walks_an_agent_on_udp6(self):
        for tool in ("snmpd", "snmpbulkwalk", "snmpget"):
            if not shutil.which(tool) and not os.path.exists("/usr/sbin/" + tool):
                raise AssertionError("test_stress_ipv6 needs net-snmp's %s (Debian: snmpd, snmp)" % tool)
        with tss.Snmpd(v6=True) as agent:
            numeric, values = tss.expected_counts(agent.port, SNMP_OIDS, host="::1")
            self.assertGreater(numeric, 5)
            r = run(["snmp", "--ip", "::1", "--port", agent.port, "--oids", ",".join(SNMP_OIDS), "--rounds", 3,
                     "--max-repetitions", 5])
            m = self.ok(r)
            # A device on the IPv6 loopback that nobody serves times out and is named with brackets.
            silent = tss.random_port(host="::1")
            bad = run(["snmp", "--ip", "::1", "--port", silent, "--oids", tss.SYS_UPTIME, "--timeout", 100,
                       "--retries", 0])
        res = m["results"]
        self.assertEqual((res["failed"], res["completed"]), (0, 3), r)
        self.assertEqual(res["samples"], 3 * numeric, r)
        self.assertEqual(res["values"], 3 * values, r)
        self.assertEqual(res["stray"] + res["malformed"] + res["timeouts"], 0, r)
        self.assertEqual(m["parameters"]["ip"], "::1", r)
        self.assertIn("from [::1]:%d" % agent.port, r.out)
        self.assertEqual(bad.code, 1, str(bad))
        self.assertEqual(bad.manifest["results"]["failed_devices"][0]["address"], "[::1]:%d" % silent, str(bad))

    def test_record_reads_netconf_and_snmp_at_an_ipv6_address(self):
        # The fake server answers <ok/> to everything, so the folder lacks modules and data (exit 1); what
        # counts here is that the hello came over [::1] and the SNMP walk over udp6 filled snmp.snmprec.
        out = tempfile.mkdtemp(prefix="fleetsim-ipv6-rec-")
        try:
            with tss.Snmpd(v6=True) as agent, fake.FakeServers(host="::1") as srv:
                p = subprocess.run([STRESS, "record", "--out", os.path.join(out, "rec"), "--ip", "::1", "--port",
                                    str(srv.port), "--ssh", "false", "--snmp", "public", "--snmp-port",
                                    str(agent.port), "--msg-timeout", "5"], stdin=subprocess.DEVNULL,
                                   capture_output=True, text=True, timeout=h.scaled(60))
                self.assertTrue(srv.finished())
                self.assertEqual([c.peer[0] for c in srv.connections], ["::1"])
            with open(os.path.join(out, "rec", "manifest.json")) as f:
                m = json.load(f)
            with open(os.path.join(out, "rec", "snmp.snmprec")) as f:
                snmprec = f.read().splitlines()
            with open(os.path.join(out, "rec", "rules.json")) as f:
                rules = f.read()
        finally:
            shutil.rmtree(out)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertEqual(m["source"]["host"], "::1", m)
        self.assertIn("record: [::1]:%d into" % srv.port, p.stdout)
        self.assertNotIn("snmp", [x["what"] for x in m["problems"]], m["problems"])
        self.assertGreater(m["counts"]["snmp_oids"], 100, m)
        self.assertEqual(m["counts"]["snmp_oids"], len(snmprec))
        self.assertTrue(any(line.startswith("1.3.6.1.2.1.1.3.0|") for line in snmprec), snmprec[:5])
        self.assertIn('"match": "::1"', rules)

    def test_reconcile_joins_ipv6_report_addresses_written_differently(self):
        port = 40100
        received = {"tool": "fleetsim-stress", "mode": "notify", "devices": [
            {"device": 0, "address": "fd00::1", "port": port, "local": "[fd00::1]:50001", "received": 10,
             "duplicates": 0},
            {"device": 1, "address": "127.0.0.1", "port": port, "local": "127.0.0.1:50002", "received": 7,
             "duplicates": 0},
            {"device": 2, "address": "fd00::2", "port": port, "local": "[fd00::2]:50003", "received": 3,
             "duplicates": 0}]}
        report = {"tool": "fleetsim", "devices": [
            tsn.report_device(0, port, 10, [("[fd00::1]:50001", 10)], address="fd00:0:0::0:1"),  # OK
            tsn.report_device(1, port, 7, [("127.0.0.1:50002", 7)]),                               # OK
            tsn.report_device(2, port, 5, [("[fd00::2]:50003", 5)], address="fd00::2"),          # LOSS
            tsn.report_device(3, port, 4, [], address="fd00::3")]}                                # MISSING
        rc, out, err = tsn.run_reconcile(report, received)
        self.assertEqual(rc, 1, out + err)
        self.assertRegex(out, r"(?m)^OK +device 0 \[fd00:0:0::0:1\]:%d local \[fd00::1\]:50001 sent 10 received 10"
                         % port)
        self.assertRegex(out, r"(?m)^OK +device 1 127\.0\.0\.1:%d " % port)
        self.assertRegex(out, r"(?m)^LOSS +device 2 \[fd00::2\]:%d local \[fd00::2\]:50003 sent 5 received 3" % port)
        self.assertRegex(out, r"(?m)^MISSING +device 3 \[fd00::3\]:%d " % port)
        self.assertIn("totals: OK 2, LOSS 1, DUP 0, MISSING 1, PHANTOM 0", out)
        # An address that is neither family is refused, naming what is needed.
        report["devices"][3]["address"] = "fd00::zz"
        rc, out, err = tsn.run_reconcile(report, received)
        self.assertEqual(rc, 2, out + err)
        self.assertIn("\"address\"", err)

    def test_bad_ip_text_is_a_usage_error(self):
        for mode in ("edit", "mount", "snmp", "notify", "restconf"):
            for text in ("[::1]", "::1::2", "1.2.3", "localhost", "fd00::1/64", ""):
                with self.subTest(mode=mode, ip=text):
                    p = subprocess.run([STRESS, mode, "--ip", text], stdin=subprocess.DEVNULL, capture_output=True,
                                       text=True, timeout=h.scaled(10))
                    self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                    self.assertIn("--ip must be an IPv4 or IPv6 address", p.stderr)
                    self.assertIn('"%s"' % text, p.stderr)
        # Addresses per device must stay inside the prefix's low 32 bits.
        p = subprocess.run([STRESS, "mount", "--ip", "fd00::ffff:fffe", "--ip-per-device", "--device-count", "3"],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=h.scaled(10))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("3 addresses from --ip do not fit in its IPv6 prefix", p.stderr)
        # A URL's IPv6 host needs its brackets; without them the last group would be taken for the port.
        for argv in (["controller-mount", "--url", "http://::1:8181/restconf", "--device-count", "1"],
                     ["mount", "--reconnect", "--events", "http://fd00::1:9100"]):
            with self.subTest(argv=argv):
                p = subprocess.run([STRESS] + argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                   timeout=h.scaled(10))
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn("an IPv6 HOST in brackets", p.stderr)


class TlsIpv6Test(Ipv6Case):
    """NETCONF over TLS to [::1]; --tls-verify-host matches ::1 against the certificate's IP SANs."""

    @classmethod
    def setUpClass(cls):
        tst.setUpModule()  # its CA, client and server (IP:127.0.0.2) certificates
        tst.make_leaf("server6", "ca", "subjectAltName=IP:::1\nextendedKeyUsage=serverAuth")

    @classmethod
    def tearDownClass(cls):
        tst.tearDownModule()

    def edit(self, server, *extra):
        with fake.FakeServers(host="::1", tls=tst.server_context(server=server)) as srv:
            r = run(["edit", "--ip", "::1", "--port", srv.port, "--edits", 10, "--candidate-datastore", "false",
                     "--tls", "true", "--tls-cert", tst.cert("client"), "--tls-key", tst.key("client"),
                     "--tls-ca", tst.cert("ca")] + list(extra))
            srv.finished()
        return r, srv

    def test_edit_over_tls_verifies_the_ipv6_address_when_asked(self):
        r, srv = self.edit("server6", "--tls-verify-host", "true")
        self.ok(r)
        self.assert_edits_arrived(srv, 10)
        r, _ = self.edit("server", "--tls-verify-host", "true")  # names 127.0.0.2, not ::1
        self.assertNotEqual(r.code, 0, str(r))
        self.assertIn("IP address mismatch", r.out + r.err, str(r))
        r, srv = self.edit("server")  # the address is not checked unless asked
        self.ok(r)
        self.assert_edits_arrived(srv, 10)


# A prefix of the tests' own, routed to lo (issue 19's `ip -6 route add local PREFIX/64 dev lo`).
LOCAL_PREFIX = "fd00:f1ee:5757:1::"


class LocalPrefix:
    """LOCAL_PREFIX/64 made local on lo for the test's time when root and not already there; else why not."""

    def __init__(self):
        self.added = False
        self.why = None

    def __enter__(self):
        net = LOCAL_PREFIX + "/64"
        ip = shutil.which("ip") or "/usr/sbin/ip"
        shown = subprocess.run([ip, "-6", "route", "show", "table", "local", net], capture_output=True, text=True)
        if shown.returncode != 0:
            self.why = "no ip(8): %s" % shown.stderr.strip()
        elif not shown.stdout.strip():
            if os.geteuid() != 0:
                self.why = "%s is not local and only root can make it so" % net
            else:
                add = subprocess.run([ip, "-6", "route", "add", "local", net, "dev", "lo"], capture_output=True,
                                     text=True)
                self.added = add.returncode == 0
                self.why = None if self.added else "ip -6 route add local %s dev lo: %s" % (net, add.stderr.strip())
        return self

    def __exit__(self, *exc):
        if self.added:
            subprocess.run([shutil.which("ip") or "/usr/sbin/ip", "-6", "route", "del", "local",
                            LOCAL_PREFIX + "/64", "dev", "lo"], capture_output=True)


class AddressPerDeviceTest(Ipv6Case):
    def test_mount_and_edit_step_through_ipv6_addresses_of_a_local_prefix(self):
        with LocalPrefix() as prefix:
            if prefix.why:
                self.skipTest(prefix.why)
            # The low 32 bits step across a 16-bit boundary: ...:ffff, 1:0, 1:1.
            hosts = [LOCAL_PREFIX + "ffff", LOCAL_PREFIX + "1:0", LOCAL_PREFIX + "1:1"]
            with fake.FakeServers(hosts=hosts) as srv:
                r = run(["mount", "--ip", hosts[0], "--ip-per-device", "--port", srv.port, "--device-count", 3,
                         "--ssh", "false"])
                m = self.ok(r)
                self.assertTrue(srv.finished())
                self.assertEqual(sorted(c.device for c in srv.connections), [0, 1, 2])
            self.assertEqual((m["parameters"]["ip"], m["parameters"]["ip_per_device"]),
                             ("fd00:f1ee:5757:1::ffff", True), r)
            with fake.FakeServers(hosts=hosts) as srv:
                r = run(["edit", "--ip", hosts[0], "--ip-per-device", "--port", srv.port, "--device-count", 3,
                         "--thread-amount", 3, "--edits", 30, "--candidate-datastore", "false", "--ssh", "false"])
                self.ok(r)
                self.assertTrue(srv.finished())
                per_device = {}
                for c in srv.connections:
                    per_device[c.device] = per_device.get(c.device, 0) + sum(q.op == "edit-config" for q in c.requests)
                self.assertEqual(per_device, {0: 10, 1: 10, 2: 10})


def fleetsim_on_ipv6():
    """A fleet of one device on ::1, or (None, why not)."""
    try:
        return h.Fleet(devices=1, threads=1, ip="::1").start(), None
    except (AssertionError, OSError) as e:
        return None, str(e).strip().splitlines()[-1] if str(e).strip() else repr(e)


class FleetsimIpv6Test(Ipv6Case):
    """Against fleetsim on ::1, once the simulator listens there."""

    @classmethod
    def setUpClass(cls):
        cls.fleet, cls.why = fleetsim_on_ipv6()

    @classmethod
    def tearDownClass(cls):
        if cls.fleet:
            cls.fleet.stop()

    def setUp(self):
        if not self.fleet:
            self.skipTest("fleetsim does not listen on ::1 yet: %s" % self.why)

    def test_edit_against_fleetsim(self):
        r = run(["edit", "--ip", "::1", "--port", self.fleet.port, "--edits", 50, "--candidate-datastore", "false",
                 "--ssh", "false"])
        m = self.ok(r)
        self.assertEqual(m["parameters"]["ip"], "::1", r)
        self.assertEqual(m["results"]["edits_ok"], 50, r)

    def test_snmp_against_fleetsim(self):
        r = run(["snmp", "--ip", "::1", "--port", self.fleet.port, "--oids", ",".join(SNMP_OIDS), "--rounds", 2])
        m = self.ok(r)
        self.assertEqual((m["results"]["failed"], m["results"]["completed"]), (0, 2), r)
        self.assertGreater(m["results"]["samples"], 0, r)

    def test_record_against_fleetsim(self):
        out = tempfile.mkdtemp(prefix="fleetsim-ipv6-rec-")
        try:
            p = subprocess.run([STRESS, "record", "--out", os.path.join(out, "rec"), "--ip", "::1", "--port",
                                str(self.fleet.port), "--ssh", "false", "--snmp", "public", "--snmp-port",
                                str(self.fleet.port)], capture_output=True, text=True, timeout=h.scaled(60))
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            with open(os.path.join(out, "rec", "manifest.json")) as f:
                m = json.load(f)
        finally:
            shutil.rmtree(out)
        self.assertEqual(m["source"]["host"], "::1")
        self.assertTrue(m["complete"], m)
        self.assertGreater(m["counts"]["snmp_oids"], 20, m)
        self.assertIn("record: [::1]:%d into" % self.fleet.port, p.stdout)


if __name__ == "__main__":
    STRESS = h.take_binaries_arguments()
    tsn.STRESS = STRESS
    tss.STRESS = STRESS
    tst.STRESS = STRESS
    unittest.main(verbosity=2)
