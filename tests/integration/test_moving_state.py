"""State that moves (issue 15): the counters of a type's state data grow between gets, differ per device,
repeat exactly under --clock-fixed, and the interfaces of the state data are the device's IF-MIB
interfaces with the same counters at the same instant. Profiles and modules are in
tests/integration/data/moving_state/ (a vendor module with derived typedefs, and a hand-made module with
openconfig-interfaces' layout and type names).

Run: /usr/bin/python3 test_moving_state.py <path to fleetsim>
"""

import os
import subprocess
import sys
import time
import unittest
import warnings
import xml.etree.ElementTree as ET

import lxml.etree

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402
from test_ncclient import tcp_manager  # noqa: E402

warnings.simplefilter("default")
warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"ncclient(\.|$)")

DATA = os.path.join(h.SOURCE_DIR, "tests", "integration", "data", "moving_state")
VENDOR_NS = "urn:fleetsim:test:moving"
OCIF_NS = "urn:fleetsim:test:oc-if"
TEXT_NS = "urn:fleetsim:test:text"
IF_NS = "urn:ietf:params:xml:ns:yang:ietf-interfaces"
VENDOR_FILTER = ("subtree", '<vendor-stats xmlns="%s"/>' % VENDOR_NS)
OCIF_FILTER = ("subtree", '<interfaces xmlns="%s"/>' % OCIF_NS)
IF_HC_IN_OCTETS = "1.3.6.1.2.1.31.1.1.1.6"
IF_DESCR = "1.3.6.1.2.1.2.2.1.2"
IF_OPER_STATUS = "1.3.6.1.2.1.2.2.1.8"
IF_HIGH_SPEED = "1.3.6.1.2.1.31.1.1.1.15"
CLOCK = "1735689600"  # 2025-01-01T00:00:00Z


def snmpget(addr, oid):
    """The value of @oid at the agent (host, port), as text."""
    out = subprocess.run(["snmpget", "-v2c", "-c", "public", "-Oqv", "-r", "2", "-t", "2",
                          "%s:%d" % addr, oid], capture_output=True, text=True, timeout=h.scaled(20))
    if out.returncode:
        raise AssertionError("snmpget %s: %s" % (oid, out.stderr))
    return out.stdout.strip().strip('"')


def leaf(data_xml, path):
    """Text of the element at @path ('{ns}a/{ns}b', from the data root), or None."""
    e = ET.fromstring(data_xml).find(path)
    return None if e is None else e.text


def vendor_leaf(data_xml, port, name):
    root = ET.fromstring(data_xml)
    for p in root.iter("{%s}port" % VENDOR_NS):
        if p.find("{%s}name" % VENDOR_NS).text == port:
            e = p.find("{%s}%s" % (VENDOR_NS, name))
            return None if e is None else e.text
    return None


def oc_counter(data_xml, ifname, name):
    root = ET.fromstring(data_xml)
    for i in root.iter("{%s}interface" % OCIF_NS):
        if i.find("{%s}name" % OCIF_NS).text == ifname:
            return i.find("{%s}state/{%s}counters/{%s}%s" % (OCIF_NS, OCIF_NS, OCIF_NS, name)).text
    return None


class MovingState(unittest.TestCase):

    def fleet(self, kind="oc", devices=2, fixed=True):
        extra = ["--profile", os.path.join(DATA, "profile-%s.xml" % kind)]
        if fixed:
            extra += ["--clock-fixed", CLOCK]
        f = h.Fleet(devices=devices, extra=extra).start()
        self.addCleanup(f.stop)
        return f

    def get(self, f, i, filt):
        m = tcp_manager(f.addr(i))
        try:
            return m.get(filter=filt).data_xml
        finally:
            m.close_session()

    def test_counters_grow_between_gets(self):
        f = self.fleet(fixed=False, devices=1)
        first = self.get(f, 0, VENDOR_FILTER)
        time.sleep(1.2)
        second = self.get(f, 0, VENDOR_FILTER)
        for name in ("rx-octets", "rx-pkts"):
            a, b = int(vendor_leaf(first, "p0", name)), int(vendor_leaf(second, "p0", name))
            self.assertGreater(b, a, "%s did not grow in 1.2 s" % name)
        self.assertEqual(vendor_leaf(second, "p0", "in-octets"), "777", "a uint64 named like a counter stays")
        self.assertEqual(vendor_leaf(second, "p0", "note"), "kept")
        self.assertGreaterEqual(int(vendor_leaf(second, "p0", "rx-octets")), 2500000000,
                                "never below half the recorded 5000000000")

    def test_clock_fixed_repeats_exactly_and_devices_differ(self):
        f = self.fleet()
        a = self.get(f, 0, VENDOR_FILTER)
        b = self.get(f, 0, VENDOR_FILTER)
        self.assertEqual(a, b)
        self.assertEqual(self.get(f, 0, OCIF_FILTER), self.get(f, 0, OCIF_FILTER))
        other = self.get(f, 1, VENDOR_FILTER)
        self.assertNotEqual(vendor_leaf(a, "p0", "rx-octets"), vendor_leaf(other, "p0", "rx-octets"))
        self.assertNotEqual(vendor_leaf(a, "p0", "temperature"), None)
        self.assertTrue(45 <= int(vendor_leaf(other, "p0", "temperature")) <= 55)

    def test_snmp_if_hc_in_octets_equals_openconfig_in_octets(self):
        f = self.fleet()
        for i in (0, 1):
            oc = self.get(f, i, OCIF_FILTER)
            for pos, name in enumerate(("eth-1/1", "eth-1/2", "eth-1/3")):
                self.assertEqual(snmpget(f.addr(i), "%s.%d" % (IF_DESCR, pos + 1)), name)
                self.assertEqual(snmpget(f.addr(i), "%s.%d" % (IF_HC_IN_OCTETS, pos + 1)),
                                 oc_counter(oc, name, "in-octets"), "device %d %s" % (i, name))
        for pos, name in enumerate(("eth-1/1", "eth-1/2", "eth-1/3")):
            oper = [i.find("{%s}state/{%s}oper-status" % (OCIF_NS, OCIF_NS)).text
                    for i in ET.fromstring(self.get(f, 0, OCIF_FILTER)).iter("{%s}interface" % OCIF_NS)
                    if i.find("{%s}name" % OCIF_NS).text == name][0]
            self.assertEqual(snmpget(f.addr(0), "%s.%d" % (IF_OPER_STATUS, pos + 1)), {"UP": "1", "DOWN": "2"}[oper],
                             name)
        self.assertEqual(snmpget(f.addr(0), IF_HIGH_SPEED + ".1"), "10000", "the recorded SPEED_10GB")
        self.assertEqual(snmpget(f.addr(0), IF_HIGH_SPEED + ".2"), "1000")

    def test_ietf_interfaces_state_is_the_snmp_interfaces(self):
        f = self.fleet(kind="ietf", devices=1)
        data = self.get(f, 0, ("subtree", '<interfaces-state xmlns="%s"/>' % IF_NS))
        root = ET.fromstring(data)
        names = [e.text for e in root.iter("{%s}name" % IF_NS)]
        self.assertEqual(names, ["ge-0/0/0", "ge-0/0/1"])
        for pos, name in enumerate(names):
            entry = [e for e in root.iter("{%s}interface" % IF_NS) if e.find("{%s}name" % IF_NS).text == name][0]
            octets = entry.find("{%s}statistics/{%s}in-octets" % (IF_NS, IF_NS)).text
            self.assertNotEqual(octets, "123", "generated, not the recorded value")
            self.assertEqual(snmpget(f.addr(0), "%s.%d" % (IF_HC_IN_OCTETS, pos + 1)), octets)
        self.assertEqual(snmpget(f.addr(0), IF_HIGH_SPEED + ".2"), "10000")
        vendor = self.get(f, 0, VENDOR_FILTER)
        self.assertIsNotNone(vendor_leaf(vendor, "p1", "rx-octets"))

    def test_text_path_agrees_with_libyang_path_and_joins_running(self):
        """A get of whole state subtrees is answered from their printed text (state_text.c); the same get
        with with-defaults report-all takes libyang's copy, merge and print. Both give the same data,
        running's configuration under the same nodes joined in after an edit-config."""
        f = self.fleet(kind="text", devices=1)
        m = tcp_manager(f.addr(0))
        self.addCleanup(m.close_session)
        m.edit_config(target="running", config=(
            '<config xmlns="urn:ietf:params:xml:ns:netconf:base:1.0">'
            '<ports xmlns="%s"><site>lab</site>'
            '<port><name>a</name><config><descr>configured a</descr></config></port>'
            '<port><name>c</name><config><descr>only in running</descr></config></port></ports>'
            '<interfaces xmlns="%s"><interface><name>eth-1/2</name></interface></interfaces></config>'
            % (TEXT_NS, OCIF_NS)))

        def canonical(data_xml):
            root = ET.fromstring(data_xml)
            # defaults only report-all shows: config/mtu, and so config when it holds nothing else
            for tag in ("mtu", "config"):
                for parent in list(root.iter()):
                    for child in list(parent):
                        if child.tag == "{%s}%s" % (TEXT_NS, tag) and (tag == "mtu" or not len(child)):
                            parent.remove(child)
            return ET.tostring(root)

        ports = '<ports xmlns="%s"/>' % TEXT_NS
        for filt in (ports, OCIF_FILTER[1], VENDOR_FILTER[1], ports + OCIF_FILTER[1]):
            # a <filter> element: ncclient reads a text filter as one element
            spec = lxml.etree.fromstring('<filter xmlns="urn:ietf:params:xml:ns:netconf:base:1.0" '
                                         'type="subtree">%s</filter>' % filt)
            fast = m.get(filter=spec).data_xml
            slow = m.get(filter=spec, with_defaults="report-all").data_xml
            self.assertEqual(canonical(fast), canonical(slow), filt)
        data = m.get(filter=("subtree", ports)).data_xml
        root = ET.fromstring(data)
        port = {p.find("{%s}name" % TEXT_NS).text: p for p in root.iter("{%s}port" % TEXT_NS)}
        self.assertEqual(sorted(port), ["a", "b", "c", "d"])
        self.assertEqual(port["a"].find("{%s}config/{%s}descr" % (TEXT_NS, TEXT_NS)).text, "configured a")
        self.assertEqual(port["a"].find("{%s}state/{%s}descr" % (TEXT_NS, TEXT_NS)).text, "port a")
        self.assertIsNone(port["c"].find("{%s}state" % TEXT_NS))
        self.assertEqual(root.find("{%s}ports/{%s}site" % (TEXT_NS, TEXT_NS)).text, "lab")


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2, warnings=False)
