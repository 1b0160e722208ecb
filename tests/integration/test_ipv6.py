"""IPv6 everywhere in the simulator (issue 19): a fleet on ::1 served to ncclient, OpenSSH, snmpget over
udp6 and snmptrapd on udp6; 1,000 devices with an IPv6 address each (fd5e:f1ee::/64 made local on lo),
a sample of which answers as itself on TCP and SNMP; the registration body and an inventory with the
devices' IPv6 addresses; bad addresses and mixed families refused with exit 2.

Loopback only: ::1, and fd5e:f1ee::/64 routed to lo (`ip -6 route add local fd5e:f1ee::/64 dev lo`,
added here when root and missing; without it the per-device part is skipped, saying why). Never fd00::/64:
on some hosts it is a real network.
"""
import http.server
import ipaddress
import json
import os
import random
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.request

from ncclient import manager

import fleetsim_harness as h

PREFIX = "fd5e:f1ee::"
SYSNAME = "1.3.6.1.2.1.1.5.0"
HELLO = ('<hello xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><capabilities><capability>'
         'urn:ietf:params:netconf:base:1.0</capability></capabilities></hello>]]>]]>')
CLOSE = '<rpc xmlns="urn:ietf:params:xml:ns:netconf:base:1.0" message-id="1"><close-session/></rpc>]]>]]>'


def prefix_local():
    """Whether fd5e:f1ee::/64 is local on this host; adds the route when root. Returns a reason or None."""
    def routed():
        out = subprocess.run(["ip", "-6", "route", "show", "table", "local"], capture_output=True, text=True)
        return "fd5e:f1ee::/64" in out.stdout
    if routed():
        return None
    if os.geteuid() == 0:
        subprocess.run(["ip", "-6", "route", "add", "local", "fd5e:f1ee::/64", "dev", "lo"], check=False)
        if routed():
            return None
    return "fd5e:f1ee::/64 is not local (as root: ip -6 route add local fd5e:f1ee::/64 dev lo)"


def snmpget(host, port, oid=SYSNAME):
    p = subprocess.run(["snmpget", "-v2c", "-c", "public", "-On", "-Oqv", "-t", "2", "-r", "1",
                        "udp6:[%s]:%d" % (host, port), oid], capture_output=True, text=True,
                       timeout=h.scaled(20), env=dict(os.environ, MIBS=""))
    return p.returncode, (p.stdout + p.stderr).strip()


class Recorder:
    """An HTTP stand-in for a RESTCONF controller on [::1]: records bodies, answers 204."""

    def __init__(self):
        rec = self
        self.bodies = []
        self.lock = threading.Lock()

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_PATCH(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with rec.lock:
                    rec.bodies.append(json.loads(body))
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_POST = do_PUT = do_PATCH

        class Server(http.server.ThreadingHTTPServer):
            address_family = socket.AF_INET6

        self.server = Server(("::1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def hosts(self):
        with self.lock:
            return [n["netconf-node-topology:netconf-node"]["host"]
                    for b in self.bodies for t in b["network-topology:topology"] for n in t["node"]]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class TestIPv6(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="fleetsim-ipv6-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def fleet(self, **kw):
        f = h.Fleet(**kw)
        self.addCleanup(f.kill)
        return f.start()

    def test_ncclient_and_snmpget_on_loopback(self):
        f = self.fleet(devices=2, ip="::1", extra=["--ssh", "true", "--state-dir", self.tmp])
        host, port = f.addr(1)
        m = manager.connect(host=host, port=port, username="admin", password="admin", hostkey_verify=False,
                            look_for_keys=False, allow_agent=False, timeout=h.scaled(10))
        self.addCleanup(m.close_session)
        config = '<config xmlns="%s">%s</config>' % (h.NC_NS, h.iface("v6-x"))
        m.edit_config(target="running", config=config)
        self.assertIn("v6-x", m.get_config(source="running").xml)
        state = m.get(filter=("subtree", '<netconf-state xmlns="urn:ietf:params:xml:ns:yang:'
                                         'ietf-netconf-monitoring"><sessions/></netconf-state>')).xml
        self.assertIn("<source-host>::1</source-host>", state, "the peer shows as its IPv6 text")
        self.assertEqual(snmpget("::1", f.port + 1), (0, '"device-1"'))
        self.assertIn("::1 ports %d-%d" % (f.port, f.port + 1), f.log())

    def test_metrics_and_control_api_on_ipv6(self):
        for _ in range(8):
            mport = random.randrange(20000, 32000)
            f = h.Fleet(devices=2, ip="::1", extra=["--metrics", "[::1]:%d" % mport])
            try:
                f.start()
                break
            except h.FleetError as e:
                if "cannot serve" not in str(e):
                    raise
        self.addCleanup(f.kill)
        self.assertIn("metrics at http://[::1]:%d/metrics" % mport, f.log())
        with urllib.request.urlopen("http://[::1]:%d/api/v1/devices/1" % mport, timeout=h.scaled(10)) as r:
            dev = json.load(r)
        self.assertEqual(dev["address"], "::1")
        with urllib.request.urlopen("http://[::1]:%d/api/v1/fleet" % mport, timeout=h.scaled(10)) as r:
            fleet = json.load(r)
        self.assertEqual(fleet["groups"][0]["address_first"], "::1")

    def test_call_home_to_an_ipv6_manager(self):
        mgr = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        self.addCleanup(mgr.close)
        mgr.bind(("::1", 0))
        mgr.listen(4)
        mgr.settimeout(h.scaled(10))
        f = self.fleet(devices=1, ip="::1", extra=["--call-home", "[::1]:%d" % mgr.getsockname()[1]])
        conn, peer = mgr.accept()
        self.addCleanup(conn.close)
        self.assertEqual(peer[0], "::1", "dialled from the device's address")
        conn.settimeout(h.scaled(10))
        self.assertIn(b"<hello", conn.recv(4096))
        self.assertTrue(f.proc.poll() is None)

    def test_openssh_subsystem_over_ipv6(self):
        f = self.fleet(devices=1, ip="::1", extra=["--ssh", "true", "--state-dir", self.tmp])
        askpass = os.path.join(self.tmp, "askpass.sh")
        with open(askpass, "w") as a:
            a.write("#!/bin/sh\necho admin\n")
        os.chmod(askpass, 0o700)
        env = dict(os.environ, SSH_ASKPASS=askpass, SSH_ASKPASS_REQUIRE="force", DISPLAY=":0")
        p = subprocess.run(["ssh", "-6", "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                            "-o", "PreferredAuthentications=password", "-o", "PubkeyAuthentication=no",
                            "-o", "LogLevel=ERROR", "-p", str(f.port), "admin@::1", "-s", "netconf"],
                           input=HELLO + CLOSE, capture_output=True, text=True, timeout=h.scaled(20), env=env,
                           start_new_session=True)
        self.assertIn("<hello", p.stdout, p.stderr)
        self.assertIn("<ok/>", p.stdout, p.stderr)

    def test_snmptrapd_on_udp6_receives_a_trap(self):
        tport, out_path = h.start_snmptrapd(self, self.tmp, "::1")
        # A flap a device a second brings linkDown/linkUp traps from the device's own address.
        f = self.fleet(devices=2, ip="::1", extra=["--trap-sink", "[::1]:%d" % tport, "--flap-rate", "5"])

        def seen():
            with open(out_path) as r:
                return r.read()
        deadline = time.monotonic() + h.scaled(10)
        while time.monotonic() < deadline and "1.3.6.1.6.3.1.1.5." not in seen():
            time.sleep(0.1)
        text = seen()
        self.assertRegex(text, r"1\.3\.6\.1\.6\.3\.1\.1\.5\.[34]", "a linkDown or linkUp reached snmptrapd")
        self.assertIn("::1", text, "sent from the IPv6 address")
        self.assertRegex(text, r'"device-[01]"', "the device names itself (sysName.0)")
        f.stop()

    def test_a_thousand_devices_each_with_its_own_ipv6_address(self):
        why = prefix_local()
        if why:
            self.skipTest(why)
        ctl = Recorder()
        self.addCleanup(ctl.close)
        n = 1000
        f = self.fleet(devices=n, ip=PREFIX + "1", ip_per_device=True,
                       extra=["--controller-ip", "::1", "--controller-port", str(ctl.port),
                              "--generate-configs-batch-size", "250"])
        sample = [0, 1, 255, 256, 499, 998, n - 1]
        for i in sample:
            host, port = f.addr(i)
            self.assertEqual(host, str(ipaddress.ip_address(PREFIX + "1") + i))
            with h.RawClient((host, port), timeout=h.scaled(10)) as c:
                c.hello()
                reply = c.get_config()
                h.assert_data(reply, "device %d over TCP at %s" % (i, host))
            self.assertEqual(snmpget(host, f.port), (0, '"device-%d"' % i), "device %d at %s" % (i, host))
        # an address just past the range belongs to no device: nothing answers
        past = str(ipaddress.ip_address(PREFIX + "1") + n)
        self.assertNotEqual(snmpget(past, f.port)[0], 0)
        deadline = time.monotonic() + h.scaled(20)
        while time.monotonic() < deadline and len(ctl.hosts()) < n:
            time.sleep(0.1)
        hosts = ctl.hosts()
        self.assertEqual(sorted(hosts), sorted(str(ipaddress.ip_address(PREFIX + "1") + i) for i in range(n)))
        path = os.path.join(self.tmp, "sd.json")
        code, text = h.run_fleetsim(["--ip", PREFIX + "1", "--ip-per-device", "--device-count", "3",
                                     "--starting-port", "830", "--emit-inventory", path,
                                     "--inventory-format", "prometheus-sd"])
        self.assertEqual(code, 0, text)
        with open(path) as sd:
            targets = [t for entry in json.load(sd) for t in entry["targets"]]
        self.assertIn("[fd5e:f1ee::3]:", " ".join(targets))
        for t in targets:
            self.assertRegex(t, r"^\[fd5e:f1ee::[1-3]\]:\d+$")

    def test_bad_addresses_and_mixed_families_are_refused(self):
        code, text = h.run_fleetsim(["--ip", "fd5e::zz", "--device-count", "1"])
        self.assertEqual(code, 2, text)
        self.assertIn('--ip must be an IPv4 or IPv6 address (192.0.2.1, fd5e:f1ee::1), not "fd5e::zz"', text)
        code, text = h.run_fleetsim(["--ip", "fd5e:f1ee::ffff:fff0", "--ip-per-device", "--device-count", "100",
                                     "--ssh", "false"])
        self.assertEqual(code, 2, text)
        self.assertIn("cross the last 32 bits", text)
        port = random.randrange(20000, 30000)
        doc = {"fleetsim-fleet:fleet": {"group": [
            {"name": "four", "device-count": 2, "ip": "127.0.0.1", "starting-port": port, "ssh": False},
            {"name": "six", "device-count": 2, "ip": "::1", "starting-port": port + 10, "ssh": False}]}}
        path = os.path.join(self.tmp, "fleet.json")
        with open(path, "w") as w:
            json.dump(doc, w)
        code, text = h.run_fleetsim(["--fleet", path, "--snmp", "false"])
        self.assertEqual(code, 2, text)
        self.assertRegex(text, r'group "six".*differ in family: all addresses of a fleet share one family')


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2)
