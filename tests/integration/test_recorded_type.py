"""--device-type DIR: serving a recorded device type folder (docs/RECORDED_TYPES.md).

The folder tests/integration/data/recorded_device was recorded from a fleetsim device with vendor modules
(acme-system with a submodule, acme-types) by bench/make_recorded.py, then made to differ from what fleetsim
would say by itself: its module capabilities are in reverse order, it lists two capabilities fleetsim cannot
honour, its yang-library ids are "acme-recorded-7", and its state holds acme state fleetsim has no source for.

Checks, with ncclient and a raw client over TCP and net-snmp's snmpget: the hello is the recorded one (order
included, less the two), yang-library is the recorded data, get-schema returns every yang/ file byte for
byte, get-config is running.xml, get shows the recorded state, edit-config has its full semantics, 100
devices answer, a fleet file group of the type runs beside a crs-x group, the folder's snmp.snmprec is
served; a recorded module whose revision the context cannot implement (ietf-yang-library 2016-06-21) is
advertised and served as recorded, and what imports it loads (issue 28); bad folders exit 2 naming what is
missing; a state.xml node that does not fit is warned about and
dropped (exit 2 under --schemas-strict).

Run: /usr/bin/python3 test_recorded_type.py <path to fleetsim>
"""

import json
import os
import random
import re
import shutil
import signal
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

from ncclient.operations import RPCError  # noqa: E402
from ncclient.xml_ import to_ele  # noqa: E402

warnings.simplefilter("default")
warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"ncclient(\.|$)")

DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "recorded_device")
YL_NS = "urn:ietf:params:xml:ns:yang:ietf-yang-library"
ACME_NS = "urn:acme:yang:acme-system"
# Debian's libyuma-base: the RFC 7895 revision of ietf-yang-library, which yuma123's netconfd implements.
YUMA_YANGLIB_2016 = "/usr/share/yuma/modules/ietf/ietf-yang-library@2016-06-21.yang"
UNHONOURED = ("urn:ietf:params:netconf:capability:url:1.0?scheme=file", "http://example.com/ns/vendor-actions/1.0")
CFG = '<config xmlns="%s">' % h.NC_NS
ACME_FILTER = '<filter type="subtree"><system xmlns="%s"/><alarms xmlns="%s"/></filter>' % (ACME_NS, ACME_NS)


def read(name):
    with open(os.path.join(DIR, name), encoding="utf-8") as f:
        return f.read()


def slurp(path):
    with open(path, errors="replace") as f:
        return f.read()


def recorded_caps():
    return [c.text for c in ET.fromstring(read("hello.xml")).iter("{%s}capability" % h.NC_NS)]


def canon(el):
    """An element as a comparable value: tag, text, children sorted (list order aside)."""
    return (el.tag, (el.text or "").strip(), tuple(sorted(canon(c) for c in el)))


def data_children(xml_text):
    """The canonical children of the <data> element of a reply or a recorded file."""
    root = ET.fromstring(xml_text)
    data = root if root.tag == "{%s}data" % h.NC_NS else root.find("{%s}data" % h.NC_NS)
    return sorted(canon(c) for c in data)


def acme(m_or_reply):
    root = to_ele(m_or_reply.xml) if hasattr(m_or_reply, "xml") else ET.fromstring(m_or_reply)
    return {el.tag.split("}")[1]: el.text for el in root.iter() if el.tag.startswith("{%s}" % ACME_NS)
            and len(el) == 0}


class ServedRecording(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.fleet = h.Fleet(devices=2, extra=["--device-type", DIR]).start()

    @classmethod
    def tearDownClass(cls):
        cls.fleet.stop()

    def manager(self, device=0):
        m = tcp_manager(self.fleet.addr(device))
        self.addCleanup(m.close_session)
        return m

    def test_hello_is_the_recorded_one_in_order(self):
        with h.RawClient(self.fleet.addr(0)) as c:
            c.hello()
            self.assertEqual(c.server_caps(), [x for x in recorded_caps() if x not in UNHONOURED])
            self.assertIsNotNone(c.session_id)
        self.assertIn("2 recorded capabilities not served (fleetsim cannot honour them): " + " ".join(UNHONOURED),
                      self.fleet.log())
        self.assertEqual(list(self.manager().server_capabilities),
                         [x for x in recorded_caps() if x not in UNHONOURED])

    def test_yang_library_is_the_recorded_one(self):
        reply = self.manager().get('<filter xmlns="%s" type="subtree"><yang-library xmlns="%s"/>'
                                   '<modules-state xmlns="%s"/></filter>' % (h.NC_NS, YL_NS, YL_NS))
        self.assertEqual(data_children(reply.xml), data_children(read("yang-library.xml")))
        self.assertIn("acme-recorded-7", reply.xml)

    def test_get_schema_returns_every_file_byte_for_byte(self):
        m = self.manager()
        files = sorted(os.listdir(os.path.join(DIR, "yang")))
        self.assertIn("acme-system-alarms@2024-02-01.yang", files)  # a submodule
        for name in files:
            ident, rev = name[:-len(".yang")].split("@")
            with open(os.path.join(DIR, "yang", name), encoding="utf-8", newline="") as f:
                text = f.read()
            self.assertEqual(m.get_schema(ident, rev).data, text, name)

    def test_get_config_is_running_xml(self):
        self.assertEqual(data_children(self.manager(0).get_config("running").xml),
                         data_children(read("running.xml")))

    def test_get_shows_the_recorded_state(self):
        got = acme(self.manager().get(ACME_FILTER.replace("<filter ", '<filter xmlns="%s" ' % h.NC_NS, 1)))
        self.assertEqual(got["uptime"], "864000")
        self.assertEqual(got["cpu-load"], "17")
        self.assertEqual(got["serial-number"], "FOC1234X0AB")
        self.assertEqual(got["text"], "NTP server 192.0.2.2 unreachable")
        with h.RawClient(self.fleet.addr(0)) as c:
            c.hello()
            reply = c.rpc("<get>%s</get>" % ACME_FILTER)
            h.assert_data(reply)
            root = ET.fromstring(reply)
            reach = {s.find("{%s}address" % ACME_NS).text: s.find("{%s}reachable" % ACME_NS).text
                     for s in root.iter("{%s}server" % ACME_NS)}
            self.assertEqual(reach, {"192.0.2.1": "true", "192.0.2.2": "false"})
            # The state is not configuration.
            cfg = c.get_config(filt=ACME_FILTER)
            self.assertNotIn("reachable", cfg)
            self.assertNotIn("864000", cfg)
            # fleetsim's own monitoring data is served once, not the recorded copy beside it.
            full = c.rpc("<get/>")
            self.assertEqual(full.count("<netconf-state "), 1)
            self.assertEqual(full.count("<yang-library "), 1)

    def test_edit_config_has_full_semantics(self):
        m = self.manager(1)
        server = (CFG + '<system xmlns="%s"><ntp><server nc:operation="%%s" '
                  'xmlns:nc="urn:ietf:params:xml:ns:netconf:base:1.0"><address>192.0.2.3</address></server>'
                  '</ntp></system></config>' % ACME_NS)
        m.edit_config(target="running", config=server % "create")
        self.assertIn("192.0.2.3", m.get_config("running").xml)
        with self.assertRaises(RPCError) as e:
            m.edit_config(target="running", config=server % "create")
        self.assertEqual(e.exception.tag, "data-exists")
        m.edit_config(target="running", config=server % "delete")
        self.assertNotIn("192.0.2.3", m.get_config("running").xml)
        with self.assertRaises(RPCError) as e:
            m.edit_config(target="running", config=server % "delete")
        self.assertEqual(e.exception.tag, "data-missing")
        with self.assertRaises(RPCError) as e:  # length 1..63
            m.edit_config(target="running", config=CFG + '<system xmlns="%s"><hostname>%s</hostname>'
                          '</system></config>' % (ACME_NS, "x" * 64))
        self.assertEqual(e.exception.tag, "invalid-value")
        with self.assertRaises(RPCError):  # state is not writable
            m.edit_config(target="running", config=CFG + '<system xmlns="%s"><status><cpu-load>5</cpu-load>'
                          '</status></system></config>' % ACME_NS)
        m.edit_config(target="running", config=CFG + '<system xmlns="%s"><hostname>renamed</hostname>'
                      '</system></config>' % ACME_NS)
        self.assertIn("<hostname>renamed</hostname>", m.get_config("running").xml)
        # The other device keeps the recorded configuration.
        self.assertIn("edge-rtr-01", self.manager(0).get_config("running").xml)


class ManyDevices(unittest.TestCase):

    def test_100_devices_each_answer(self):
        with h.Fleet(devices=100, extra=["--device-type", DIR, "--snmp", "false"]) as f:
            caps = [x for x in recorded_caps() if x not in UNHONOURED]
            for i in range(100):
                with h.RawClient(f.addr(i)) as c:
                    c.hello()
                    self.assertEqual(c.server_caps(), caps, "device %d" % i)
                    reply = c.rpc("<get>%s</get>" % ACME_FILTER)
                    self.assertIn("<serial-number>FOC1234X0AB</serial-number>", reply, "device %d" % i)


class FleetFileGroup(unittest.TestCase):

    def test_a_recorded_group_beside_a_crs_x_group(self):
        tmp = tempfile.mkdtemp(prefix="fleetsim-rec-")
        self.addCleanup(shutil.rmtree, tmp, True)
        shutil.copytree(DIR, os.path.join(tmp, "acme-edge"))
        rng = random.Random()
        for _ in range(h.START_ATTEMPTS):
            port = rng.randrange(h.PORT_LOW, h.PORT_HIGH - 10)
            groups = [{"name": "edge", "device-count": 3, "device-type": "acme-edge", "starting-port": port,
                       "snmp-starting-port": port, "ssh": False},
                      {"name": "core", "device-count": 2, "profile": "crs-x", "starting-port": port + 5,
                       "snmp-starting-port": port + 5, "ssh": False}]
            path = os.path.join(tmp, "fleet.json")
            with open(path, "w") as fh:
                json.dump({"fleetsim-fleet:fleet": {"group": groups}}, fh)
            log_path = os.path.join(tmp, "log")
            with open(log_path, "wb") as log:
                proc = subprocess.Popen([h.BINARY, "--fleet", path, "--threads", "2", "--status-interval", "0"],
                                        stdin=subprocess.DEVNULL, stdout=log, stderr=log)
            deadline = time.monotonic() + h.scaled(h.READY_TIMEOUT_S)
            text = ""
            while time.monotonic() < deadline and proc.poll() is None:
                text = slurp(log_path)
                if h.READY_TEXT in text:
                    break
                time.sleep(0.02)
            if proc.poll() is None and h.READY_TEXT in text:
                break
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            if "cannot listen" not in text and "cannot bind" not in text:
                self.fail("fleetsim --fleet did not start:\n" + text)
        else:
            self.fail("no free ports")
        try:
            self.assertRegex(text, r"acme-edge")
            with h.RawClient(("127.0.0.1", port + 2)) as c:
                c.hello()
                self.assertEqual(c.server_caps(), [x for x in recorded_caps() if x not in UNHONOURED])
                self.assertIn("FOC1234X0AB", c.rpc("<get>%s</get>" % ACME_FILTER))
            with h.RawClient(("127.0.0.1", port + 6)) as c:
                c.hello()
                self.assertFalse(any("acme" in x for x in c.server_caps()))
                self.assertIn("<interface>", c.get_config())
        finally:
            proc.send_signal(signal.SIGTERM)
            self.assertEqual(proc.wait(timeout=h.scaled(20)), 0, slurp(log_path))


class BadFolders(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="fleetsim-rec-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.dir = os.path.join(self.tmp, "rec")
        shutil.copytree(DIR, self.dir)

    def refused(self, *extra):
        code, out = h.run_fleetsim(["--ssh", "false", "--starting-port", "29990", "--snmp", "false",
                                    "--device-type", self.dir] + list(extra))
        self.assertEqual(code, 2, out)
        lines = [l for l in out.splitlines() if "error" in l]
        self.assertEqual(len(lines), 1, out)
        return lines[0]

    def test_no_manifest(self):
        os.unlink(os.path.join(self.dir, "manifest.json"))
        line = self.refused()
        self.assertIn(self.dir, line)
        self.assertIn("manifest.json", line)

    def test_no_yang_folder(self):
        shutil.rmtree(os.path.join(self.dir, "yang"))
        line = self.refused()
        self.assertIn(self.dir, line)
        self.assertIn("yang/", line)

    def test_empty_yang_folder(self):
        shutil.rmtree(os.path.join(self.dir, "yang"))
        os.mkdir(os.path.join(self.dir, "yang"))
        self.assertIn("no .yang file", self.refused())

    def test_not_a_folder(self):
        shutil.rmtree(self.dir)
        self.assertIn("not a folder", self.refused())

    def test_with_schemas_dir(self):
        self.assertIn("--schemas-dir", self.refused("--schemas-dir", os.path.join(self.dir, "yang")))

    def bad_state(self):
        with open(os.path.join(self.dir, "state.xml"), encoding="utf-8") as f:
            text = f.read()
        text = text.replace("<cpu-load>17</cpu-load>", "<cpu-load>170</cpu-load>")
        text = text.replace("</data>", '<gadget xmlns="urn:example:unknown"><x>1</x></gadget></data>')
        with open(os.path.join(self.dir, "state.xml"), "w", encoding="utf-8") as f:
            f.write(text)

    def test_state_that_does_not_fit_is_warned_and_dropped(self):
        self.bad_state()
        with h.Fleet(devices=1, extra=["--device-type", self.dir]) as f:
            log = f.log()
            warn = [l for l in log.splitlines() if "state.xml" in l and "do not fit" in l]
            self.assertEqual(len(warn), 1, log)
            self.assertIn("2 nodes", warn[0])
            self.assertIn("cpu-load", warn[0])
            with h.RawClient(f.addr(0)) as c:
                c.hello()
                reply = c.rpc("<get>%s</get>" % ACME_FILTER)
                got = acme(reply)
                self.assertNotIn("cpu-load", got)
                self.assertEqual(got["uptime"], "864000")  # the rest is served
                self.assertNotIn("gadget", c.rpc("<get/>"))

    def test_state_that_does_not_fit_under_strict(self):
        self.bad_state()
        line = self.refused("--schemas-strict")
        self.assertIn("state.xml", line)
        self.assertIn("do not fit", line)

    def test_invalid_yang_library_falls_back(self):
        with open(os.path.join(self.dir, "yang-library.xml"), "w") as f:
            f.write('<data xmlns="%s"><modules-state xmlns="%s"><module-set-id>x</module-set-id>'
                    '<module><name>m</name><revision>bad</revision></module></modules-state></data>'
                    % (h.NC_NS, YL_NS))
        with h.Fleet(devices=1, extra=["--device-type", self.dir]) as f:
            self.assertRegex(f.log(), r"yang-library.xml\" is not valid yang-library data")
            with h.RawClient(f.addr(0)) as c:
                c.hello()
                caps = c.server_caps()
                self.assertFalse(any("acme-recorded-7" in x for x in caps), caps)
                ylcaps = [x for x in caps if "yang-library:1" in x]
                self.assertEqual(len(ylcaps), 2)
                reply = c.rpc('<get><filter type="subtree"><modules-state xmlns="%s"/></filter></get>' % YL_NS)
                msid = re.search(r"<module-set-id>([^<]*)</module-set-id>", reply).group(1)
                self.assertIn("module-set-id=" + msid, " ".join(ylcaps))

    def test_a_module_implemented_in_another_revision_is_advertised_and_served_issue_28(self):
        """A recording of a device with ietf-yang-library 2016-06-21 (as yuma123's netconfd has) and a
        module importing it: fleetsim implements 2019-01-04 inside, yet the copy advertises 2016-06-21,
        serves its text, lists it in netconf-state/schemas, and skips nothing."""
        yang = os.path.join(self.dir, "yang")
        os.remove(os.path.join(yang, "ietf-yang-library@2019-01-04.yang"))
        shutil.copy(YUMA_YANGLIB_2016, yang)
        with open(os.path.join(yang, "acme-yl-user@2024-03-01.yang"), "w") as f:
            f.write('module acme-yl-user {\n  yang-version 1.1;\n  namespace "urn:acme:yang:acme-yl-user";\n'
                    '  prefix ylu;\n  import ietf-yang-library { prefix yanglib; }\n'
                    '  revision 2024-03-01;\n  leaf last-revision { type yanglib:revision-identifier; }\n}\n')
        hello = read("hello.xml").replace(
            "ietf-yang-library?module=ietf-yang-library&amp;revision=2019-01-04",
            "ietf-yang-library?module=ietf-yang-library&amp;revision=2016-06-21")
        self.assertIn("revision=2016-06-21", hello)
        user_cap = "urn:acme:yang:acme-yl-user?module=acme-yl-user&revision=2024-03-01"
        hello = hello.replace("</capabilities>", "<capability>%s</capability></capabilities>"
                              % user_cap.replace("&", "&amp;"))
        with open(os.path.join(self.dir, "hello.xml"), "w") as f:
            f.write(hello)
        recorded = [c.text for c in ET.fromstring(hello).iter("{%s}capability" % h.NC_NS)]
        with open(YUMA_YANGLIB_2016, encoding="utf-8", newline="") as f:
            text = f.read()
        with h.Fleet(devices=1, extra=["--device-type", self.dir]) as f:
            self.assertNotIn("schemas: skipped", f.log())
            self.assertIn(", 0 skipped,", f.log())
            self.assertIn("ietf-yang-library@2016-06-21.yang is advertised and served as text", f.log())
            with tcp_manager(f.addr(0)) as m:
                self.assertEqual(list(m.server_capabilities), [x for x in recorded if x not in UNHONOURED])
                self.assertEqual(m.get_schema("ietf-yang-library", "2016-06-21").data, text)
                self.assertEqual(m.get_schema("ietf-yang-library").data, text)  # the advertised revision
                self.assertIn("revision 2024-03-01", m.get_schema("acme-yl-user", "2024-03-01").data)
                schemas = m.get(filter=("subtree", '<netconf-state xmlns="%s"><schemas/></netconf-state>'
                                        % h.NCM_NS)).data_xml
            self.assertIn("2016-06-21", re.findall(r"<identifier>ietf-yang-library</identifier>\s*"
                                                   r"<version>([^<]*)</version>", schemas))
            with h.RawClient(f.addr(0)) as c:
                c.hello()
                yin = c.rpc('<get-schema xmlns="%s" xmlns:ncm="%s"><identifier>ietf-yang-library</identifier>'
                            '<version>2016-06-21</version><format>ncm:yin</format></get-schema>'
                            % (h.NCM_NS, h.NCM_NS))
            yin = next(ET.fromstring(yin).iter("{%s}data" % h.NCM_NS)).text
            self.assertIn('module name="ietf-yang-library"', yin)
            self.assertIn('revision date="2016-06-21"', yin)
            self.assertNotIn("2019-01-04", yin)

    def test_snmprec_of_the_folder_is_served(self):
        with open(os.path.join(self.dir, "snmp.snmprec"), "w") as f:
            f.write("1.3.6.1.4.1.99999.7.1.0|4|recorded by acme\n")
        with h.Fleet(devices=2, extra=["--device-type", self.dir]) as f:
            host, port = f.addr(1)
            out = subprocess.run(["snmpget", "-v2c", "-c", "public", "-On", "-Oqv", "-t", "2", "-r", "1",
                                  "%s:%d" % (host, port), "1.3.6.1.4.1.99999.7.1.0"], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, timeout=h.scaled(20)).stdout.decode()
            self.assertEqual(out.strip().strip('"'), "recorded by acme")


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main()
