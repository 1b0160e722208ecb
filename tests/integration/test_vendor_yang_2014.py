"""A vendor folder that ships the pre-NMDA ietf-interfaces 2014-05-08 (issue 28, item 4): Debian's
libyuma-base copy of it and of iana-if-type, copied at test time beside two small vendor modules that
import it (tests/integration/data/vendor_yang_2014), with the crs-x profile on top.

The device implements and advertises 2014-05-08 (hello, yang-library), get-schema returns the file's text,
the profile's interfaces are configured under /interfaces and their state (oper-status, speed,
phys-address, if-index, counters) is under /interfaces-state, where the counters move; edit-config under
/interfaces, XPath filters and net-snmp's IF-MIB view agree with it. yuma123's yangcli and ncclient are
the clients. A device recorded from it with fleetsim-stress record serves the same.

Run: /usr/bin/python3 test_vendor_yang_2014.py <path to fleetsim> <path to fleetsim-stress>
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
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402
from test_ncclient import tcp_manager  # noqa: E402

warnings.simplefilter("default")
warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"ncclient(\.|$)")

YUMA = "/usr/share/yuma/modules/ietf"
SHIPPED = ("ietf-interfaces@2014-05-08.yang", "iana-if-type@2014-05-08.yang")
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "vendor_yang_2014")
VENDOR = {"vnd-if-ext": "2021-04-01", "vnd-if-types": "2021-04-01"}
STRESS = None
IF = "HundredGigE0/0/0/0"  # crs-x's ninth interface: ifIndex 9
IF_INDEX = 9
EDITED = "HundredGigE0/0/0/1"  # ifIndex 10
NS = {"if": h.IF_NS}
IF_HC_IN_OCTETS = "1.3.6.1.2.1.31.1.1.1.6"
IF_OPER = "1.3.6.1.2.1.2.2.1.8"
IF_ALIAS = "1.3.6.1.2.1.31.1.1.1.18"
IF_NAME = "1.3.6.1.2.1.31.1.1.1.1"
FIXED_CLOCK = 1767225600  # 2026-01-01T00:00:00Z


def make_folder(tmp):
    """The vendor folder as shipped: Debian's 2014 files and the test's vendor modules."""
    folder = os.path.join(tmp, "yang")
    os.mkdir(folder)
    for name in SHIPPED:
        shutil.copy(os.path.join(YUMA, name), folder)
    for name in os.listdir(DATA):
        shutil.copy(os.path.join(DATA, name), folder)
    return folder


def module_revisions(m):
    """{module: revision} of the hello's module capabilities."""
    out = {}
    for cap in m.server_capabilities:
        if "?module=" in cap:
            q = dict(kv.split("=", 1) for kv in cap.split("?", 1)[1].split("&"))
            out[q["module"]] = q.get("revision")
    return out


def state_filter(name):
    return ("subtree", '<interfaces-state xmlns="%s"><interface><name>%s</name></interface></interfaces-state>'
            % (h.IF_NS, name))


def leaves(data_xml, name):
    """{leaf: text} of interface @name under /interfaces-state of a <data> reply."""
    root = ET.fromstring(data_xml.encode())
    for e in root.iterfind(".//if:interfaces-state/if:interface", NS):
        if e.findtext("if:name", namespaces=NS) == name:
            return {el.tag.split("}")[1]: el.text for el in e.iter() if el.text and el.text.strip()}
    raise AssertionError("no interfaces-state entry %s in %s" % (name, data_xml[:500]))


def snmp(cmd, addr, *oids):
    p = subprocess.run([cmd, "-v2c", "-c", "public", "-On", "-Oe", "-t", "2", "-r", "1", "%s:%d" % addr]
                       + list(oids), capture_output=True, text=True, timeout=h.scaled(20))
    assert p.returncode == 0, p.stdout + p.stderr
    out = {}
    for line in p.stdout.splitlines():
        m = re.match(r"^\.([\d.]+) = (\w[\w-]*): ?(.*)$", line)
        if m:
            out[m.group(1)] = m.group(3).strip('"')
    return out


class Checks:
    """What a device with ietf-interfaces 2014-05-08 serves, run against self.fleet (device 0)."""

    def manager(self, i=0):
        return tcp_manager(self.fleet.addr(i))

    def test_hello_and_yang_library_name_the_2014_revision(self):
        with self.manager() as m:
            revs = module_revisions(m)
            self.assertEqual(revs["ietf-interfaces"], "2014-05-08")
            self.assertEqual(revs["iana-if-type"], "2014-05-08")
            for name, rev in VENDOR.items():
                self.assertEqual(revs.get(name), rev)
            yl = m.get(("subtree", '<modules-state xmlns="urn:ietf:params:xml:ns:yang:ietf-yang-library"/>'))
            self.assertRegex(yl.data_xml, r"<name>ietf-interfaces</name>\s*<revision>2014-05-08</revision>")
            self.assertNotIn("2018-02-20", yl.data_xml)

    def test_get_schema_returns_the_shipped_text(self):
        with self.manager() as m, open(os.path.join(YUMA, SHIPPED[0]), encoding="utf-8") as f:
            self.assertEqual(m.get_schema("ietf-interfaces", version="2014-05-08").data, f.read())

    def test_state_is_under_interfaces_state_and_counters_move(self):
        with self.manager() as m:
            first = leaves(m.get(state_filter(IF)).data_xml, IF)
            time.sleep(1.1)
            later = leaves(m.get(state_filter(IF)).data_xml, IF)
            conf = m.get(("subtree", '<interfaces xmlns="%s"><interface><name>%s</name></interface></interfaces>'
                          % (h.IF_NS, IF))).data_xml
        for leaf in ("oper-status", "speed", "phys-address", "if-index", "in-octets", "out-errors"):
            self.assertIn(leaf, first)
        self.assertEqual(first["if-index"], str(IF_INDEX))
        self.assertEqual(first["speed"], "100000000000")
        self.assertGreater(int(later["in-octets"]), int(first["in-octets"]), "in-octets did not move in 1.1 s")
        self.assertIn("<enabled>true</enabled>", conf)
        for leaf in ("oper-status", "statistics", "if-index"):
            self.assertNotIn(leaf, conf, "2014-05-08 has no state under /interfaces")

    def test_xpath_filter(self):
        with self.manager() as m:
            reply = m.get(("xpath", ({"if": h.IF_NS},
                                     "/if:interfaces-state/if:interface[if:name='Loopback0']/if:oper-status")))
        self.assertRegex(reply.data_xml, r"<oper-status>up</oper-status>")
        self.assertNotIn("in-octets", reply.data_xml)


    def test_nmda_operational_datastore_has_the_2014_state(self):
        with h.RawClient(self.fleet.addr(0)).hello() as c:
            reply = c.rpc('<get-data xmlns="urn:ietf:params:xml:ns:yang:ietf-netconf-nmda" '
                          'xmlns:ds="urn:ietf:params:xml:ns:yang:ietf-datastores"><datastore>ds:operational'
                          '</datastore><subtree-filter><interfaces-state xmlns="%s"><interface><name>%s</name>'
                          '</interface></interfaces-state></subtree-filter></get-data>' % (h.IF_NS, IF))
        self.assertFalse(h.errors(reply), reply)
        self.assertRegex(reply, r"<if-index>%d</if-index>" % IF_INDEX)
        self.assertRegex(reply, r"<in-octets>\d+</in-octets>")


class FolderDevice(Checks, unittest.TestCase):
    """fleetsim --schemas-dir FOLDER --profile crs-x, 2 devices, over ncclient and net-snmp."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="fleetsim-yang2014-")
        cls.folder = make_folder(cls.tmp)
        cls.fleet = h.Fleet(devices=2, extra=["--schemas-dir", cls.folder, "--profile", "crs-x"]).start()

    @classmethod
    def tearDownClass(cls):
        cls.fleet.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_folder_loads_without_a_warning(self):
        log = self.fleet.log()
        self.assertIn("4 modules and 0 submodules", log)
        self.assertIn("0 skipped", log)
        self.assertNotIn("[warn", log)

    def test_edit_config_under_interfaces_reaches_state_and_snmp(self):
        edit = ('<config xmlns="%s"><interfaces xmlns="%s"><interface><name>%s</name><description>edited-2014</description>'
                '<enabled>false</enabled><mtu xmlns="urn:example:vnd-if-ext">1500</mtu></interface></interfaces>'
                '</config>' % (h.NC_NS, h.IF_NS, EDITED))
        with self.manager(1) as m:
            self.assertTrue(m.edit_config(target="running", config=edit).ok)
            state = leaves(m.get(state_filter(EDITED)).data_xml, EDITED)
            running = m.get_config("running").data_xml
        self.assertEqual(state["oper-status"], "down")
        self.assertEqual(state["admin-status"], "down")
        self.assertRegex(running, r"<mtu xmlns=\"urn:example:vnd-if-ext\">1500</mtu>")
        got = snmp("snmpget", self.fleet.addr(1), "%s.10" % IF_OPER, "%s.10" % IF_ALIAS)
        self.assertEqual(got["%s.10" % IF_OPER], "2", "ifOperStatus down")
        self.assertEqual(got["%s.10" % IF_ALIAS], "edited-2014")

    def test_edit_of_a_state_leaf_under_interfaces_is_refused(self):
        edit = ('<config xmlns="%s"><interfaces xmlns="%s"><interface><name>%s</name><oper-status>up</oper-status>'
                '</interface></interfaces></config>' % (h.NC_NS, h.IF_NS, EDITED))
        with h.RawClient(self.fleet.addr(0)).hello() as c:
            reply = c.rpc('<edit-config><target><running/></target>%s</edit-config>' % edit)
        self.assertTrue(h.errors(reply), reply)

    def test_yangcli_reads_the_counters_and_edits(self):
        yangcli = shutil.which("yangcli")
        if not yangcli:
            self.skipTest("yangcli is not installed (scripts/setup.sh installs it)")
        tmp = tempfile.mkdtemp(prefix="fleetsim-yangcli-", dir=self.tmp)
        fleet = h.Fleet(devices=1, extra=["--ssh", "true", "--state-dir", os.path.join(tmp, "state"),
                                          "--schemas-dir", self.folder, "--profile", "crs-x"]).start()
        try:
            script = os.path.join(tmp, "run.script")
            with open(script, "w") as f:
                f.write("merge /if:interfaces/interface[name='%s']/description value=set-by-yangcli\n"
                        "commit\n"
                        "sget-config /if:interfaces/interface[name='%s'] source=running\n"
                        "sget /if:interfaces-state/interface[name='%s']\n" % (EDITED, EDITED, IF))
            host, port = fleet.addr(0)
            p = subprocess.run([yangcli, "--server=%s" % host, "--ncport=%d" % port, "--user=admin",
                                "--password=admin", "--batch-mode", "--run-script=%s" % script],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               env=dict(os.environ, HOME=tmp), timeout=h.scaled(60))
            out = p.stdout.decode(errors="replace")
            self.assertIn("NETCONF session established", out, out)
            self.assertIn("ietf-interfaces@2014-05-08", out, out)
            self.assertNotRegex(out, r"<get-schema> for module .* failed", out)
            self.assertEqual(out.count("RPC OK Reply"), 2, out)
            self.assertRegex(out, r"in-octets \d+", out)
            self.assertRegex(out, r"description set-by-yangcli", out)
        finally:
            fleet.stop()


class SnmpAgrees(unittest.TestCase):
    """With the devices' clock stopped, net-snmp's IF-MIB values are the ones under /interfaces-state."""

    def test_snmp_and_netconf_agree(self):
        with tempfile.TemporaryDirectory() as tmp:
            fleet = h.Fleet(devices=1, extra=["--schemas-dir", make_folder(tmp), "--profile", "crs-x",
                                              "--clock-fixed", str(FIXED_CLOCK)]).start()
            try:
                with tcp_manager(fleet.addr(0)) as m:
                    state = leaves(m.get(state_filter(IF)).data_xml, IF)
                    every = m.get(("subtree", '<interfaces-state xmlns="%s"/>' % h.IF_NS)).data_xml
                got = snmp("snmpget", fleet.addr(0), "%s.%d" % (IF_HC_IN_OCTETS, IF_INDEX),
                           "%s.%d" % (IF_OPER, IF_INDEX))
                names = snmp("snmpwalk", fleet.addr(0), IF_NAME)
            finally:
                fleet.stop()
        self.assertEqual(int(got["%s.%d" % (IF_HC_IN_OCTETS, IF_INDEX)]), int(state["in-octets"]))
        self.assertEqual(got["%s.%d" % (IF_OPER, IF_INDEX)], "1")
        listed = re.findall(r"<interface><name>([^<]+)</name>", every)
        self.assertEqual(len(listed), 144)
        self.assertEqual(sorted(names.values()), sorted(listed))


class FolderWithOlderYangLibrary(unittest.TestCase):
    """The folder also ships ietf-yang-library 2016-06-21 (as older vendor folders do), a module the
    context implements in libyang's revision 2019-01-04: the device still advertises the folder's revision
    and serves its text by get-schema, and nothing of the folder is skipped."""

    def test_the_folders_yang_library_revision_is_advertised_and_served(self):
        shipped = os.path.join(YUMA, "ietf-yang-library@2016-06-21.yang")
        with tempfile.TemporaryDirectory() as tmp:
            folder = make_folder(tmp)
            shutil.copy(shipped, folder)
            fleet = h.Fleet(devices=1, extra=["--schemas-dir", folder, "--profile", "crs-x"]).start()
            try:
                with tcp_manager(fleet.addr(0)) as m, open(shipped, encoding="utf-8") as f:
                    caps = [c for c in m.server_capabilities if "module=ietf-yang-library" in c]
                    text = m.get_schema("ietf-yang-library", version="2016-06-21").data
                    self.assertEqual(text, f.read())
                    revs = module_revisions(m)
                log = fleet.log()
            finally:
                fleet.stop()
        self.assertTrue(any("revision=2016-06-21" in c for c in caps), caps)
        self.assertEqual(revs["ietf-interfaces"], "2014-05-08")
        self.assertIn("0 skipped", log)
        self.assertIn("ietf-yang-library@2016-06-21.yang is advertised and served as text", log)


class RecordedDevice(Checks, unittest.TestCase):
    """fleetsim-stress record of such a device (NETCONF over TCP and its SNMP agent), then fleetsim
    --device-type on the recording: the copy serves the same as its source."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="fleetsim-yang2014-rec-")
        source = h.Fleet(devices=1, extra=["--schemas-dir", make_folder(cls.tmp), "--profile", "crs-x"]).start()
        try:
            host, port = source.addr(0)
            cls.recording = os.path.join(cls.tmp, "recorded")
            p = subprocess.run([STRESS, "record", "--out", cls.recording, "--ip", host, "--port", str(port),
                                "--ssh", "false", "--snmp", "public", "--snmp-port", str(port)],
                               capture_output=True, text=True, timeout=h.scaled(120))
        finally:
            source.stop()
        assert p.returncode == 0, "record exited %d:\n%s\n%s" % (p.returncode, p.stdout, p.stderr)
        with open(os.path.join(cls.recording, "manifest.json")) as f:
            cls.manifest = json.load(f)
        cls.fleet = h.Fleet(devices=2, extra=["--device-type", cls.recording]).start()

    @classmethod
    def tearDownClass(cls):
        cls.fleet.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_the_recording_is_complete(self):
        self.assertTrue(self.manifest["complete"], self.manifest)
        self.assertEqual(self.manifest["problems"], [])

    def test_snmp_walk_of_the_copy_lists_its_interfaces(self):
        names = snmp("snmpwalk", self.fleet.addr(0), IF_NAME)
        self.assertEqual(names.get("%s.%d" % (IF_NAME, IF_INDEX)), IF)
        got = snmp("snmpget", self.fleet.addr(0), "%s.%d" % (IF_HC_IN_OCTETS, IF_INDEX))
        self.assertGreater(int(got["%s.%d" % (IF_HC_IN_OCTETS, IF_INDEX)]), 0)


if __name__ == "__main__":
    STRESS = h.take_binaries_arguments()
    unittest.main(verbosity=2, warnings=False)
