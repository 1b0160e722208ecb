"""Identity rules (--identity-rules, a recorded folder's rules.json): every device of one type shows its own
host name, address, MAC and serial where the type's data holds the recorded device's, in get-config, get,
after edits, in SNMP sysName and in a recorded string OID; the hello is the same for all.

Run: /usr/bin/python3 test_identity_rules.py <path to fleetsim>. Every device is on 127.0.0.0/8, every call has
a time limit, ports are random.
"""

import json
import os
import re
import tempfile
import unittest

import fleetsim_harness as h
from test_snmp import snmp, values

SYS_NS = "urn:ietf:params:xml:ns:yang:ietf-system"
IANA_NS = "urn:ietf:params:xml:ns:yang:iana-if-type"
DEVICES = 50
FIRST_IP = "127.0.61.1"
SYS_NAME = "1.3.6.1.2.1.1.5.0"
REC_OID = "1.3.6.1.4.1.99999.7.1.0"
EDITED = 17  # the device test_an_edit_keeps_the_identity edits (the tests share one fleet)

RULES = {"rules": [
    {"name": "hostname", "match": "edge-rtr-01", "replace": "edge-rtr-{INDEX}"},
    {"name": "mgmt-address", "match": "192.0.2.17", "replace": "{ADDR}"},
    {"name": "base-mac", "match": "00:1b:21:3a:4f:10", "replace": "{MAC}"},
    {"name": "serial", "match": "FOC1234X0AB", "replace": "{SERIAL}"},
]}

CONFIG = """<system xmlns="%s"><hostname>edge-rtr-01</hostname>
<contact>noc of edge-rtr-01 at 192.0.2.17</contact>
<location>chassis 00:1b:21:3a:4f:10 serial FOC1234X0AB</location></system>
<interfaces xmlns="%s" xmlns:ianaift="%s"><interface><name>lo-edge-rtr-01</name>
<type>ianaift:softwareLoopback</type><description>loopback of edge-rtr-01</description></interface></interfaces>
""" % (SYS_NS, h.IF_NS, IANA_NS)

SNMPREC = "%s|4|chassis FOC1234X0AB at 192.0.2.17 slot {INDEX}\n" % REC_OID

MAC_RE = r"02(?::[0-9a-f]{2}){5}"
SERIAL_RE = r"FS[0-9A-F]{10}"


def leaf(reply, name):
    m = re.search(r"<%s>([^<]*)</%s>" % (name, name), reply)
    return m.group(1) if m else None


def identity_of(reply):
    """(hostname, contact address, MAC, serial) as a get-config or get reply shows them."""
    contact = leaf(reply, "contact") or ""
    found = re.search(r"<location>(chassis [^<]*)</location>", reply)  # not netconf-state's schema locations
    location = found.group(1) if found else ""
    m = re.fullmatch(r"chassis (%s) serial (%s)" % (MAC_RE, SERIAL_RE), location)
    addr = re.fullmatch(r"noc of edge-rtr-\d+ at ([\d.]+)", contact)
    return (leaf(reply, "hostname"), addr.group(1) if addr else contact, m.group(1) if m else location,
            m.group(2) if m else location)


class IdentityTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.rules = cls.write("rules.json", json.dumps(RULES))
        cls.config = cls.write("config.xml", CONFIG)
        cls.rec = cls.write("dev.snmprec", SNMPREC)
        cls.fleet = h.Fleet(devices=DEVICES, ip_per_device=True, ip=FIRST_IP,
                            extra=["--identity-rules", cls.rules, "--initial-config-xml-file", cls.config,
                                   "--snmp-recording", cls.rec, "--seed", "7"]).start()

    @classmethod
    def tearDownClass(cls):
        cls.fleet.stop()
        cls.dir.cleanup()

    @classmethod
    def write(cls, name, text):
        path = os.path.join(cls.dir.name, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def client(self, i):
        c = h.RawClient(self.fleet.addr(i)).hello()
        self.addCleanup(c.close)
        return c

    def test_every_device_its_own_identity_in_get_config_and_get(self):
        seen = []
        for i in range(DEVICES):
            reply = self.client(i).get_config()
            host, addr, mac, serial = identity_of(reply)
            self.assertEqual(host, "edge-rtr-%d" % i, reply)
            self.assertEqual(addr, self.fleet.addr(i)[0], reply)
            self.assertRegex(mac, "^%s$" % MAC_RE, reply)
            self.assertRegex(serial, "^%s$" % SERIAL_RE, reply)
            if i != EDITED:
                self.assertIn("<name>lo-edge-rtr-%d</name>" % i, reply)
                self.assertIn("<description>loopback of edge-rtr-%d</description>" % i, reply)
            for recorded in ("edge-rtr-01<", "192.0.2.17", "00:1b:21:3a:4f:10", "FOC1234X0AB"):
                self.assertNotIn(recorded, reply)
            seen.append((host, addr, mac, serial))
        for k, what in enumerate(("hostnames", "addresses", "MACs", "serials")):
            column = [s[k] for s in seen]
            self.assertEqual(len(set(column)), DEVICES, "%s shared: %s" % (what, column))
        # get (configuration and state) shows the same values as get-config, device by device.
        for i in (3, 41):
            c = self.client(i)
            reply = c.rpc("<get/>")
            self.assertEqual(identity_of(reply), seen[i], reply)
            self.assertIn("<name>lo-edge-rtr-%d</name>" % i, reply)
            for ds in ("running", "operational"):
                reply = c.rpc('<get-data xmlns="urn:ietf:params:xml:ns:yang:ietf-netconf-nmda" '
                              'xmlns:ds="urn:ietf:params:xml:ns:yang:ietf-datastores"><datastore>ds:%s'
                              '</datastore></get-data>' % ds)
                self.assertEqual(identity_of(reply), seen[i], reply)
            # A filter selecting by the device's value finds it; by the recorded value, nothing.
            mine = c.get_config(filt='<filter type="subtree"><system xmlns="%s"><hostname>edge-rtr-%d'
                                     '</hostname></system></filter>' % (SYS_NS, i))
            self.assertEqual(leaf(mine, "hostname"), "edge-rtr-%d" % i, mine)
            recorded = c.get_config(filt='<filter type="subtree"><system xmlns="%s"><hostname>edge-rtr-01'
                                         '</hostname></system></filter>' % SYS_NS)
            self.assertIsNone(leaf(recorded, "hostname"), recorded)
        # Deterministic: a second read gives the same values.
        self.assertEqual(identity_of(self.client(3).get_config()), seen[3])

    def test_an_edit_keeps_the_identity(self):
        i = EDITED
        c = self.client(i)
        before = identity_of(c.get_config())
        reply = c.edit_config('<system xmlns="%s"><contact>noc of edge-rtr-%d at %s</contact></system>'
                              % (SYS_NS, i, self.fleet.addr(i)[0]))
        self.assertIn("<ok/>", reply)
        after = c.get_config()
        self.assertEqual(identity_of(after), before, after)
        self.assertIn("<name>lo-edge-rtr-%d</name>" % i, after)
        # The device's own copy holds its values: the list entry is found by its rewritten key.
        reply = c.edit_config('<interfaces xmlns="%s" xmlns:nc="%s"><interface nc:operation="delete">'
                              '<name>lo-edge-rtr-%d</name></interface></interfaces>' % (h.IF_NS, h.NC_NS, i))
        self.assertIn("<ok/>", reply, reply)
        after = c.get_config()
        self.assertNotIn("lo-edge-rtr", after)
        self.assertEqual(identity_of(after), before, after)
        self.assertEqual(identity_of(c.rpc("<get/>")), before)
        # Through the candidate and a commit, too.
        self.assertIn("<ok/>", c.edit_config('<system xmlns="%s"><location>chassis %s serial %s</location>'
                                             '</system>' % (SYS_NS, before[2], before[3]), target="candidate"))
        self.assertIn("<ok/>", c.rpc("<commit/>"))
        self.assertEqual(identity_of(c.get_config()), before)
        # Another device is untouched by all this.
        self.assertEqual(identity_of(self.client(i + 1).get_config())[0], "edge-rtr-%d" % (i + 1))

    def test_snmp_sysname_and_recorded_strings_per_device(self):
        names, recorded = set(), set()
        for i in (0, 1, 2, 33, 49):
            addr = self.fleet.addr(i)
            got = values(snmp("snmpget", addr, [SYS_NAME, REC_OID]))
            self.assertEqual(got[SYS_NAME], ("STRING", "edge-rtr-%d" % i), got)
            serial = identity_of(self.client(i).get_config())[3]
            self.assertEqual(got[REC_OID], ("STRING", "chassis %s at %s slot %d" % (serial, addr[0], i)), got)
            names.add(got[SYS_NAME][1])
            recorded.add(got[REC_OID][1])
        self.assertEqual(len(names), 5)
        self.assertEqual(len(recorded), 5)

    def test_the_hello_is_the_same_for_every_device(self):
        hellos = []
        for i in (0, 9):
            c = h.RawClient(self.fleet.addr(i))
            self.addCleanup(c.close)
            hellos.append(re.sub(r"<session-id>\d+</session-id>", "", c.read_hello()))
        self.assertEqual(hellos[0], hellos[1])
        self.assertNotIn("edge-rtr", hellos[0])


class BadRulesTests(unittest.TestCase):
    def test_bad_rules_file_is_refused_in_one_line(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "rules.json")
            with open(path, "w") as f:
                f.write('{"rules": [{"match": "a", "replace": "{IDX}"}]}')
            code, log = h.run_fleetsim(["--identity-rules", path, "--device-count", "1", "--starting-port",
                                        "20000", "--ssh", "false"])
            self.assertEqual(code, 2, log)
            self.assertRegex(log, r"rules\.json: rule 1: unknown placeholder \{IDX\}")
            code, log = h.run_fleetsim(["--identity-rules", os.path.join(d, "missing.json"), "--device-count",
                                        "1", "--starting-port", "20000", "--ssh", "false"])
            self.assertEqual(code, 2, log)
            self.assertIn("missing.json: cannot open", log)


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2)
