"""The YANG-Push modules on every device (issue 31), seen by ncclient.

Before issue 31, establish-subscription answered unknown-namespace: the device knew no
ietf-subscribed-notifications. Now every device type carries the RFCs' modules from schemas/ietf/:
the hello advertises ietf-subscribed-notifications with exactly the features fleetsim serves
(encode-xml, replay, subtree, xpath; never configured) and ietf-yang-push with on-change, the
yang-library lists them (both /modules-state and /yang-library) with their imports, get-schema
(fast path and full path) returns each file's text byte for byte, and an establish-subscription
(stream or datastore) parses. Checked on a built-in device, on a vendor folder with the pre-NMDA
ietf-interfaces 2014-05-08 (ietf-subscribed-notifications imports ietf-interfaces without revision),
and on a recorded device type (its hello stays the recorded one).

Run: /usr/bin/python3 test_yang_push_modules.py <path to fleetsim>
"""

import os
import shutil
import sys
import tempfile
import unittest
import warnings
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402
from test_ncclient import tcp_manager  # noqa: E402

from ncclient.operations import RPCError  # noqa: E402
from ncclient.xml_ import to_ele  # noqa: E402

warnings.simplefilter("default")
warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"ncclient(\.|$)")

SN_NS = "urn:ietf:params:xml:ns:yang:ietf-subscribed-notifications"
YP_NS = "urn:ietf:params:xml:ns:yang:ietf-yang-push"
DS_NS = "urn:ietf:params:xml:ns:yang:ietf-datastores"
YL_NS = "urn:ietf:params:xml:ns:yang:ietf-yang-library"
IETF_DIR = os.path.join(h.SOURCE_DIR, "schemas", "ietf")
RECORDED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "recorded_device")
YUMA = "/usr/share/yuma/modules/ietf"

# (module, revision, features advertised or None when only imported)
MODULES = [
    ("ietf-subscribed-notifications", "2019-09-09", ["encode-xml", "replay", "subtree", "xpath"]),
    ("ietf-yang-push", "2019-09-09", ["on-change"]),
    ("ietf-yang-patch", "2017-02-22", None),
    ("ietf-restconf", "2017-01-26", None),
    ("ietf-network-instance", "2019-01-21", []),
]

ESTABLISH = [
    # the NETCONF stream, with an XPath filter and a replay start
    '<establish-subscription xmlns="%s"><stream>NETCONF</stream>'
    '<stream-xpath-filter>/*</stream-xpath-filter>'
    '<replay-start-time>2026-01-01T00:00:00Z</replay-start-time></establish-subscription>' % SN_NS,
    # periodic, on operational, a subtree filter
    '<establish-subscription xmlns="%s" xmlns:yp="%s" xmlns:ds="%s"><yp:datastore>ds:operational</yp:datastore>'
    '<yp:datastore-subtree-filter><interfaces xmlns="%s"/></yp:datastore-subtree-filter>'
    '<yp:periodic><yp:period>500</yp:period></yp:periodic></establish-subscription>'
    % (SN_NS, YP_NS, DS_NS, h.IF_NS),
    # on-change on running
    '<establish-subscription xmlns="%s" xmlns:yp="%s" xmlns:ds="%s"><yp:datastore>ds:running</yp:datastore>'
    '<yp:on-change><yp:dampening-period>0</yp:dampening-period></yp:on-change></establish-subscription>'
    % (SN_NS, YP_NS, DS_NS),
]


def file_text(name, revision):
    with open(os.path.join(IETF_DIR, "%s@%s.yang" % (name, revision)), encoding="utf-8") as f:
        return f.read()


def module_cap(caps, name):
    """(revision, features list, deviations list) of @name's module capability, or None."""
    for cap in caps:
        ns, _, query = cap.partition("?")
        params = dict(p.split("=", 1) for p in query.split("&") if "=" in p)
        if params.get("module") == name:
            features = params["features"].split(",") if "features" in params else []
            return params.get("revision"), features, params.get("deviations", "")
    return None


class Checks:
    """What every device type must show; the subclasses start the fleet."""

    fleet = None

    def setUp(self):
        self.managers = []

    def tearDown(self):
        for m in self.managers:
            if m.connected:
                m.close_session()

    def connect(self):
        m = tcp_manager(self.fleet.addr(0))
        self.managers.append(m)
        return m

    def test_establish_subscription_is_not_unknown_namespace(self):
        m = self.connect()
        for body in ESTABLISH:
            try:
                m.dispatch(to_ele(body))
            except RPCError as e:
                # Until the server handles it: operation-not-supported. Never the old unknown-namespace.
                self.assertNotEqual(e.tag, "unknown-namespace", e.xml)
                self.assertNotIn("Unknown namespace", e.xml)
                self.assertNotIn("unknown-element", e.tag, e.xml)

    def test_get_schema_serves_the_files(self):
        m = self.connect()
        for name, revision, _ in MODULES:
            want = file_text(name, revision)
            for version in (revision, None):
                self.assertEqual(m.get_schema(name, version=version).data, want, (name, version))
            # The full path (a comment inside <get-schema> defers the fast path to libyang's parse).
            reply = m.dispatch(to_ele('<get-schema xmlns="%s"><!-- full path --><identifier>%s</identifier>'
                                      '<version>%s</version><format>yang</format></get-schema>'
                                      % (h.NCM_NS, name, revision)))
            data = to_ele(reply.xml).find("{%s}data" % h.NCM_NS)
            self.assertIsNotNone(data, reply.xml[:300])
            self.assertEqual(data.text, want, name)

    def test_yang_library_lists_them(self):
        m = self.connect()
        y = "{%s}" % YL_NS
        root = ET.Element("both")
        for top in ("modules-state", "yang-library"):
            reply = m.get(filter=("subtree", '<%s xmlns="%s"/>' % (top, YL_NS)))
            root.append(ET.fromstring(reply.xml))
        state = {e.findtext(y + "name"): e for e in root.iter(y + "module") if e.find(y + "conformance-type") is not None}
        sets = list(root.iter(y + "module-set"))
        self.assertTrue(sets, reply.xml[:300])
        implemented = {e.findtext(y + "name"): e for s in sets for e in s.findall(y + "module")}
        imported = {e.findtext(y + "name"): e for s in sets for e in s.findall(y + "import-only-module")}
        for name, revision, features in MODULES:
            self.assertTrue(name in state, "modules-state lacks %s" % name)
            self.assertEqual(state[name].findtext(y + "revision"), revision)
            if features is None:
                self.assertEqual(state[name].findtext(y + "conformance-type"), "import", name)
                self.assertTrue(name in imported, "yang-library: %s not import-only" % name)
                self.assertEqual(imported[name].findtext(y + "revision"), revision)
                continue
            self.assertEqual(state[name].findtext(y + "conformance-type"), "implement", name)
            self.assertTrue(name in implemented, "yang-library: %s not implemented" % name)
            self.assertEqual(implemented[name].findtext(y + "revision"), revision)
            for entry in (state[name], implemented[name]):
                self.assertEqual(sorted(f.text for f in entry.findall(y + "feature")), sorted(features), name)
        self.assertTrue("ietf-datastores" in implemented, "yang-library: ietf-datastores not implemented")


class BuiltIn(Checks, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fleet = h.Fleet(devices=1, threads=1).start()

    @classmethod
    def tearDownClass(cls):
        cls.fleet.stop()

    def test_hello_advertises_them(self):
        caps = list(self.connect().server_capabilities)
        for name, revision, features in MODULES:
            got = module_cap(caps, name)
            self.assertIsNotNone(got, "%s not in the hello" % name)
            self.assertEqual(got[0], revision, name)
            self.assertEqual(got[1], features or [], name)
        sn = [c for c in caps if "module=ietf-subscribed-notifications&" in c]
        self.assertEqual(sn, [SN_NS + "?module=ietf-subscribed-notifications&revision=2019-09-09"
                                      "&features=encode-xml,replay,subtree,xpath"])
        self.assertEqual([c for c in caps if "module=ietf-yang-push&" in c],
                         [YP_NS + "?module=ietf-yang-push&revision=2019-09-09&features=on-change"])
        # ietf-network-instance is implemented (libyang: a leafref of sn points into it); its leaf in
        # every interface is deviated away, and the hello says so.
        self.assertEqual(module_cap(caps, "ietf-network-instance")[2], "fleetsim-yang-push-deviations")
        self.assertIsNotNone(module_cap(caps, "fleetsim-yang-push-deviations"))


class PreNmdaFolder(Checks, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="fleetsim-yp-")
        for name in ("ietf-interfaces@2014-05-08.yang", "iana-if-type@2014-05-08.yang"):
            shutil.copy(os.path.join(YUMA, name), cls.tmp)
        cls.fleet = h.Fleet(devices=1, threads=1, extra=["--schemas-dir", cls.tmp]).start()

    @classmethod
    def tearDownClass(cls):
        cls.fleet.stop()
        shutil.rmtree(cls.tmp)

    def test_hello_keeps_the_folder_revision(self):
        caps = list(self.connect().server_capabilities)
        self.assertEqual(module_cap(caps, "ietf-interfaces")[0], "2014-05-08")
        self.assertEqual(module_cap(caps, "ietf-yang-push")[1], ["on-change"])


class RecordedType(Checks, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fleet = h.Fleet(devices=1, threads=1, extra=["--device-type", RECORDED]).start()

    @classmethod
    def tearDownClass(cls):
        cls.fleet.stop()

    # The recorded yang-library is served as recorded (docs/RECORDED_TYPES.md), without these modules.
    test_yang_library_lists_them = None


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2, warnings=False)
