"""Record a device, serve it back as a recorded type, and compare: fleetsim-stress record against a
fleetsim crs-x device over SSH (with its SNMP agent), then fleetsim --device-type on the folder with 100
devices. To ncclient the copies must look like the original (hello, yang-library, every schema, the
configuration), their counters must move, and each copy must be a device of its own (name, address,
MAC, serial); net-snmp sees the recorded system group with each device's own sysName. The same for
yuma123's netconfd recorded in tcp-direct mode: the served copy advertises netconfd's modules and holds
its configuration.

Run: /usr/bin/python3 test_record_roundtrip.py <path to fleetsim> <path to fleetsim-stress>
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import warnings

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402
import test_stress as ts  # noqa: E402  (its netconfd fixture)
from test_ncclient import tcp_manager  # noqa: E402

from ncclient import manager  # noqa: E402

warnings.simplefilter("default")
warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"ncclient(\.|$)")

STRESS = None
YL_FILTER = ("subtree", '<yang-library xmlns="urn:ietf:params:xml:ns:yang:ietf-yang-library"/>')
IF_FILTER = ("subtree", '<interfaces xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces"><interface>'
                        '<name>%s</name></interface></interfaces>')


def record(out, args):
    p = subprocess.run([STRESS, "record", "--out", out] + [str(a) for a in args], capture_output=True, text=True,
                       timeout=h.scaled(120))
    assert p.returncode == 0, "record exited %d:\n%s\n%s" % (p.returncode, p.stdout, p.stderr)
    with open(os.path.join(out, "manifest.json")) as f:
        return json.load(f)


def snmp_get(host, port, *oids):
    out = subprocess.run(["snmpget", "-v2c", "-c", "public", "-On", "-Oqv", "-t", "2", "-r", "1",
                          "%s:%d" % (host, port)] + list(oids), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         timeout=h.scaled(20)).stdout.decode(errors="replace")
    return out.strip().splitlines()


def module_caps(m):
    return sorted(c for c in m.server_capabilities if "?module=" in c)


class RecordedCrsX(unittest.TestCase):
    """A crs-x device recorded over SSH and served back, 100 copies on 127.0.21.1-100."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="fleetsim-roundtrip-")
        cls.source = h.Fleet(devices=1, threads=1, extra=["--profile", "crs-x", "--ssh", "true", "--state-dir",
                                                          os.path.join(cls.tmp, "state")]).start()
        host, port = cls.source.addr(0)
        cls.folder = os.path.join(cls.tmp, "crs-x-recorded")
        cls.manifest = record(cls.folder, ["--ip", host, "--port", port, "--ssh", "true", "--snmp", "public",
                                           "--snmp-port", port])
        cls.copies = h.Fleet(devices=100, threads=2, ip="127.0.21.1", ip_per_device=True,
                             extra=["--device-type", cls.folder]).start()

    @classmethod
    def tearDownClass(cls):
        cls.copies.stop()
        cls.source.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def original(self):
        host, port = self.source.addr(0)
        return manager.connect(host=host, port=port, username="admin", password="admin", hostkey_verify=False,
                               look_for_keys=False, allow_agent=False, timeout=h.scaled(10))

    def test_the_recording_is_complete(self):
        self.assertTrue(self.manifest["complete"], self.manifest)
        self.assertEqual(self.manifest["problems"], [])
        self.assertGreater(self.manifest["counts"]["snmp_oids"], 1000)

    def test_a_copy_looks_like_the_original(self):
        orig = self.original()
        try:
            with tcp_manager(self.copies.addr(0)) as copy:
                self.assertEqual(list(copy.server_capabilities), list(orig.server_capabilities))
                self.assertEqual(copy.get(filter=YL_FILTER).data_xml, orig.get(filter=YL_FILTER).data_xml)
                for cap in module_caps(orig):
                    q = dict(kv.split("=", 1) for kv in cap.split("?", 1)[1].split("&"))
                    name, rev = q["module"], q.get("revision")
                    self.assertEqual(copy.get_schema(name, version=rev).data, orig.get_schema(name, version=rev).data,
                                     "get-schema %s@%s" % (name, rev))
                self.assertEqual(copy.get_config("running").data_xml, orig.get_config("running").data_xml)
        finally:
            orig.close_session()

    def test_counters_move_on_every_copy(self):
        with tcp_manager(self.copies.addr(3)) as a, tcp_manager(self.copies.addr(4)) as b:
            first = a.get(filter=(IF_FILTER[0], IF_FILTER[1] % "HundredGigE0/0/0/0")).data_xml
            other = b.get(filter=(IF_FILTER[0], IF_FILTER[1] % "HundredGigE0/0/0/0")).data_xml
            time.sleep(1.1)
            later = a.get(filter=(IF_FILTER[0], IF_FILTER[1] % "HundredGigE0/0/0/0")).data_xml
        octets = [int(re.search(r"<in-octets>(\d+)</in-octets>", x).group(1)) for x in (first, later, other)]
        self.assertGreater(octets[1], octets[0], "in-octets did not move in 1.1 s")
        self.assertNotEqual(octets[0], octets[2], "two copies have the same counters")

    def test_each_copy_is_a_device_of_its_own(self):
        names, macs = set(), set()
        for i in range(0, 100, 9):
            host, port = self.copies.addr(i)
            descr, name, mac = snmp_get(host, port, "1.3.6.1.2.1.1.1.0", "1.3.6.1.2.1.1.5.0", "1.3.6.1.2.1.2.2.1.6.1")
            self.assertIn("Cisco IOS XR", descr)  # the recorded system group
            self.assertEqual(name, '"crs-x-%d"' % i)  # the recorded sysName, made the device's own
            names.add(name)
            macs.add(mac)
        self.assertEqual(len(names), 12)
        self.assertEqual(len(macs), 12)

    def test_the_copies_mount_as_100_devices(self):
        seen = set()
        for i in range(100):
            with tcp_manager(self.copies.addr(i)) as m:
                self.assertTrue(m.get_config("running").ok)
                seen.add(m.session_id)
        self.assertEqual(len(seen), 100)


class RecordedNetconfd(unittest.TestCase):
    """yuma123's netconfd recorded in tcp-direct mode, then served as 3 devices."""

    def test_netconfd_served_back(self):
        binary = ts.find_netconfd()
        if not binary:
            self.skipTest("netconfd (yuma123, Debian package netconfd) is not installed")
        tmp = tempfile.mkdtemp(prefix="fleetsim-roundtrip-netconfd-")
        self.addCleanup(shutil.rmtree, tmp, True)
        n = ts.Netconfd(tempfile.mkdtemp(dir=tmp))
        self.addCleanup(n.stop)
        n.start(binary)
        folder = os.path.join(tmp, "netconfd-recorded")
        m = record(folder, ["--port", n.port, "--ncx-connect", "--username", n.user])
        self.assertTrue(m["complete"], m)
        recorded_modules = set(re.findall(r"\?module=([^&]+)", open(os.path.join(folder, "hello.xml")).read()))
        copies = h.Fleet(devices=3, threads=1, extra=["--device-type", folder]).start()
        self.addCleanup(copies.stop)
        with tcp_manager(copies.addr(1)) as c:
            served = set(re.findall(r"\?module=([^&]+)", " ".join(c.server_capabilities)))
            self.assertIn("ietf-interfaces", served)
            # what netconfd advertised and fleetsim could load is advertised again
            self.assertGreaterEqual(len(served & recorded_modules), len(recorded_modules) * 0.8,
                                    "served %s of recorded %s" % (sorted(served), sorted(recorded_modules)))
            self.assertTrue(c.get_config("running").ok)


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        sys.exit("usage: %s <path to fleetsim> <path to fleetsim-stress> [unittest options]" % sys.argv[0])
    STRESS = sys.argv.pop(1)
    unittest.main(verbosity=2)
