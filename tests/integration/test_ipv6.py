"""fleetsim on IPv6 (issue 19), checked with independent peers: ncclient over SSH to ::1, net-snmp's
snmpget over udp6, and 1,000 devices with an address each in fd5e:f1ee::/64 (made local on lo), each
answering as itself over TCP and SNMP. Plans that cannot be served exit 2 with a message.

The prefix is fd5e:f1ee::/64, never fd00::/64 (a real network on some hosts). The test adds
`ip -6 route add local fd5e:f1ee::/64 dev lo` when root and missing, and skips that part otherwise.

Run: /usr/bin/python3 test_ipv6.py <path to fleetsim>
"""

import os
import re
import socket
import subprocess
import sys
import tempfile
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402

PREFIX = "fd5e:f1ee::/64"
SYS_NAME = "1.3.6.1.2.1.1.5.0"


def has_ipv6_loopback():
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


def prefix_local():
    """True when fd5e:f1ee::/64 is delivered locally, adding the route when root and it is missing."""
    def routed():
        out = subprocess.run(["ip", "-6", "route", "show", "table", "local", PREFIX], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True).stdout
        return "fd5e:f1ee::/64" in out
    try:
        if routed():
            return True
        if os.geteuid() == 0:
            subprocess.run(["ip", "-6", "route", "add", "local", PREFIX, "dev", "lo"], check=False,
                           stderr=subprocess.DEVNULL)
        return routed()
    except OSError:
        return False


def snmpget(host, port, oid=SYS_NAME):
    out = subprocess.run(["snmpget", "-v2c", "-c", "public", "-Oqv", "-t", "1", "-r", "2",
                          "udp6:[%s]:%d" % (host, port), oid], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, timeout=h.scaled(20))
    return out.stdout.strip().strip('"')


@unittest.skipUnless(has_ipv6_loopback(), "no IPv6 loopback (::1) on this host")
class Ipv6Tests(unittest.TestCase):
    def test_ncclient_over_ssh_to_loopback(self):
        from ncclient import manager

        with h.Fleet(devices=2, ip="::1", extra=["--ssh", "true"]) as f:
            host, port = f.addr(1)
            with manager.connect(host=host, port=port, username="admin", password="admin", hostkey_verify=False,
                                 allow_agent=False, look_for_keys=False, timeout=h.scaled(20)) as m:
                cfg = m.get_config(source="running").data_xml
                self.assertIn("<data", cfg)
                m.edit_config(target="running", config=(
                    '<config xmlns="urn:ietf:params:xml:ns:netconf:base:1.0">'
                    '<system xmlns="urn:ietf:params:xml:ns:yang:ietf-system"><hostname>v6-edit</hostname>'
                    "</system></config>"))
                self.assertIn("v6-edit", m.get_config(source="running").data_xml)
            # The session's source-host is the IPv6 client, not 0.0.0.0.
            with manager.connect(host=host, port=port, username="admin", password="admin", hostkey_verify=False,
                                 allow_agent=False, look_for_keys=False, timeout=h.scaled(20)) as m:
                state = m.get(filter=("subtree", '<netconf-state xmlns="urn:ietf:params:xml:ns:yang:'
                                                 'ietf-netconf-monitoring"><sessions/></netconf-state>')).data_xml
                self.assertIn("::1", state)
                self.assertNotIn("0.0.0.0", state)

    def test_snmpget_udp6_loopback(self):
        with h.Fleet(devices=3, ip="::1") as f:
            host, port = f.addr(2)
            self.assertEqual(snmpget(host, port), "device-2")

    def test_thousand_devices_in_a_prefix(self):
        if not prefix_local():
            self.skipTest("%s is not local on lo and cannot be made so (not root): run "
                          "`ip -6 route add local %s dev lo`" % (PREFIX, PREFIX))
        n = 1000
        inv = None
        with h.Fleet(devices=n, ip="fd5e:f1ee::1", ip_per_device=True) as f:
            sample = (0, 1, 511, n - 1)
            # Each device of the sample gets an interface named after it; each must hold its own only.
            for i in sample:
                with h.RawClient(f.addr(i)) as c:
                    c.hello()
                    self.assertIn("<ok/>", c.edit_config(h.iface("v6-dev-%d" % i)))
            for i in sample:
                host, port = f.addr(i)
                with h.RawClient((host, port)) as c:
                    c.hello()
                    names = set(re.findall(r"<name>(v6-dev-\d+)</name>", c.get_config()))
                    self.assertEqual(names, {"v6-dev-%d" % i}, "device %d at %s" % (i, host))
                self.assertEqual(snmpget(host, port), "device-%d" % i, "device %d at %s" % (i, host))
            # One past the last address is no device.
            outside, port = f.addr(n)
            self.assertNotEqual(snmpget(outside, port), "device-%d" % n)
            inv_path = f.log_path + ".csv"
            code, text = h.run_fleetsim(["--ip", "fd5e:f1ee::1", "--ip-per-device", "--device-count", str(n),
                                         "--starting-port", str(port), "--emit-inventory", inv_path,
                                         "--inventory-format", "csv"])
            if code == 0:
                with open(inv_path) as fh:
                    inv = fh.read()
                os.unlink(inv_path)
        self.assertIsNotNone(inv, "--emit-inventory failed")
        self.assertIn(",fd5e:f1ee::3e8,", inv.splitlines()[-1])
        with tempfile.TemporaryDirectory() as tmp:
            sd = os.path.join(tmp, "sd.json")
            code, text = h.run_fleetsim(["--ip", "fd5e:f1ee::1", "--ip-per-device", "--device-count", "2",
                                         "--emit-inventory", sd, "--inventory-format", "prometheus-sd"])
            self.assertEqual(code, 0, text)
            with open(sd) as fh:
                self.assertIn("[fd5e:f1ee::2]:", fh.read())

    def test_bad_addresses_exit_2(self):
        code, text = h.run_fleetsim(["--ip", "fd5e::zz", "--device-count", "1"])
        self.assertEqual(code, 2, text)
        self.assertIn("IPv4 or IPv6", text)
        # A range may not leave its /96 (the 96 bits kept once for the fleet).
        code, text = h.run_fleetsim(["--ip", "fd5e:f1ee::ffff:fffe", "--ip-per-device", "--device-count", "4",
                                     "--ssh", "false"])
        self.assertEqual(code, 2, text)
        self.assertTrue(re.search(r"32-bit boundary", text), text)


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    warnings.simplefilter("ignore")
    unittest.main(verbosity=2, warnings=False)
