#!/usr/bin/python3
"""fleetsim-stress record: one server into a recorded device type folder (docs/RECORDED_TYPES.md).

Recorded: a fleetsim crs-x device over TCP and over SSH (each file, every schema byte for byte against
fleetsim's get-schema, running equal, state present, manifest counts, proposed rules), with --snmp
against its agent (and --v3-user, authPriv and authNoPriv, against the v2c walk; a wrong auth
password); yuma123's netconfd in tcp-direct mode (--ncx-connect); and stand-in servers (Python,
plain TCP, base:1.0) that drop the connection mid-record once or every time, answer a get-schema with
rpc-error, or return state that is not XML."""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import unittest
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402
import test_stress as ts  # noqa: E402  (its netconfd fixture)

STRESS = None  # path to fleetsim-stress, from the command line
NC = h.NC_NS
NCM = h.NCM_NS
FILES = ["manifest.json", "hello.xml", "yang-library.xml", "schemas.xml", "running.xml", "state.xml", "rules.json"]


def canon(elem):
    return ET.canonicalize(ET.tostring(elem, encoding="unicode"))


def data_of(reply, ns=NC):
    root = ET.fromstring(reply)
    d = root.find("{%s}data" % ns)
    assert d is not None, "no <data> in %r" % reply[:300]
    return d


class StandIn:
    """A plain-TCP NETCONF server (base:1.0) on loopback that plays a script; bounded by socket timeouts.

    drop: "once" closes the connection when get-config of running arrives on the first connection,
    "always" on every one. bad_schema: get-schema of that module gets an rpc-error. bad_state: <get>
    returns a <data> that is not well-formed."""

    SCHEMA_GOOD = 'module good {\n  namespace "urn:x:good"; prefix g;\n  description "a < b & c";\n}\n'

    def __init__(self, drop=None, bad_schema=None, bad_state=False):
        self.drop, self.bad_schema, self.bad_state = drop, bad_schema, bad_state
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.sock.settimeout(h.scaled(20))
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def stop(self):
        self.sock.close()
        self.thread.join(h.scaled(10))

    def serve(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            c.settimeout(h.scaled(10))
            try:
                self.session(c, self.connections)
            except OSError:
                pass
            finally:
                c.close()

    def reply(self, c, mid, body):
        c.sendall(('<rpc-reply xmlns="%s" message-id="%s">%s</rpc-reply>]]>]]>' % (NC, mid, body)).encode())

    def session(self, c, n):
        caps = ["urn:ietf:params:netconf:base:1.0", "urn:x:good?module=good&amp;revision=2020-01-01",
                "urn:x:bad?module=bad"]
        c.sendall(('<hello xmlns="%s"><capabilities>%s</capabilities><session-id>%d</session-id></hello>]]>]]>'
                   % (NC, "".join("<capability>%s</capability>" % x for x in caps), n)).encode())
        buf = b""
        while True:
            while b"]]>]]>" not in buf:
                data = c.recv(65536)
                if not data:
                    return
                buf += data
            msg, _, buf = buf.partition(b"]]>]]>")
            text = msg.decode()
            if "<hello" in text:
                continue
            mid = re.search(r'message-id="([^"]*)"', text).group(1)
            err = ('<rpc-error><error-type>application</error-type><error-tag>operation-failed</error-tag>'
                   '<error-severity>error</error-severity><error-message>%s</error-message></rpc-error>')
            if "<get-schema" in text:
                name = re.search(r"<identifier>([^<]*)<", text).group(1)
                if name == self.bad_schema:
                    self.reply(c, mid, err % "no such schema here")
                else:
                    self.reply(c, mid, '<data xmlns="%s">%s</data>' % (NCM, self.SCHEMA_GOOD.replace("&", "&amp;")
                                                                     .replace("<", "&lt;")))
            elif "<get-config" in text:
                if self.drop == "always" or (self.drop == "once" and n == 1):
                    return
                self.reply(c, mid, '<data><top xmlns="urn:x:good"><hostname>box-7</hostname></top></data>')
            elif "<get>" in text and ("yang-library" in text or "netconf-state" in text):
                self.reply(c, mid, err % "not supported")
            elif "<get>" in text or "<get/>" in text:
                if self.bad_state:
                    self.reply(c, mid, '<data><top xmlns="urn:x:good"><counter>1</top></data>')
                else:
                    self.reply(c, mid, '<data><top xmlns="urn:x:good"><counter>1</counter></top></data>')
            else:
                self.reply(c, mid, err % "unknown")


class RecordCase(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="fleetsim-record-")
        self.cleanups = []

    def tearDown(self):
        for f in reversed(self.cleanups):
            f()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def record(self, args, want_rc=0):
        out = os.path.join(self.tmp, "rec-%d" % len(os.listdir(self.tmp)))
        proc = subprocess.run([STRESS, "record", "--out", out] + [str(a) for a in args], capture_output=True,
                              text=True, timeout=h.scaled(60))
        self.assertEqual(proc.returncode, want_rc, "record exited %d; stdout:\n%s\nstderr:\n%s"
                         % (proc.returncode, proc.stdout, proc.stderr))
        with open(os.path.join(out, "manifest.json")) as f:
            manifest = json.load(f)
        return out, manifest, proc

    def read(self, out, name):
        with open(os.path.join(out, name), "rb") as f:
            return f.read()

    def fleet(self, extra=()):
        f = h.Fleet(devices=1, threads=1, extra=list(extra))
        f.start()
        self.cleanups.append(f.stop)
        return f


class FleetsimRecordTests(RecordCase):

    def check_fleetsim_folder(self, f, out, m, transport, port=None):
        """Check the folder against @f, a TCP fleet serving the same device (port: the one recorded)."""
        port = port or f.addr(0)[1]
        for name in FILES + ["candidate.xml", "startup.xml"]:
            self.assertTrue(os.path.getsize(os.path.join(out, name)) > 0, name)
        self.assertEqual(m["source"], {"host": "127.0.0.1", "port": port, "transport": transport,
                                       "username": "admin" if transport == "ssh" else None})
        self.assertTrue(m["complete"])
        self.assertEqual(m["problems"], [])
        self.assertEqual(m["format"], 1)
        self.assertTrue(m["nmda"])
        with h.RawClient(f.addr(0)) as c:
            c.hello()
            caps = c.server_caps()
            hello = ET.fromstring(self.read(out, "hello.xml"))
            self.assertEqual([x.text for x in hello.iter("{%s}capability" % NC)], caps)
            self.assertEqual(m["counts"]["capabilities"], len(caps))
            schemas = data_of(c.rpc('<get><filter type="subtree"><netconf-state xmlns="%s"><schemas/>'
                                    '</netconf-state></filter></get>' % NCM))
            self.assertEqual(canon(ET.fromstring(self.read(out, "schemas.xml"))), canon(schemas))
            listed = {(s.findtext("{%s}identifier" % NCM), s.findtext("{%s}version" % NCM))
                      for s in schemas.iter("{%s}schema" % NCM)}
            files = sorted(os.listdir(os.path.join(out, "yang")))
            self.assertEqual(files, sorted("%s@%s.yang" % (n, v) if v else "%s.yang" % n for n, v in listed))
            for i, (n, v) in enumerate(sorted(listed)):
                rep = c.rpc('<get-schema xmlns="%s"><identifier>%s</identifier><version>%s</version>'
                            '<format>yang</format></get-schema>' % (NCM, n, v), msg_id=str(10 + i))
                self.assertEqual(self.read(out, "yang/%s@%s.yang" % (n, v)), data_of(rep, NCM).text.encode(),
                                 "%s@%s differs from fleetsim's get-schema" % (n, v))
            self.assertEqual(m["counts"]["schemas_fetched"], len(listed))
            self.assertEqual(m["counts"]["modules"] + m["counts"]["submodules"], len(listed))
            running = data_of(c.get_config())
            self.assertEqual(canon(ET.fromstring(self.read(out, "running.xml"))), canon(running))
        self.assertEqual(m["counts"]["running_bytes"], len(self.read(out, "running.xml")))
        state = ET.fromstring(self.read(out, "state.xml"))
        self.assertTrue(list(state.iter("{%s}oper-status" % h.IF_NS)), "state.xml has no interface state")
        self.assertEqual(m["counts"]["state_bytes"], len(self.read(out, "state.xml")))
        rules = json.loads(self.read(out, "rules.json"))["rules"]
        by_name = {r["name"]: r for r in rules}
        self.assertEqual(by_name["hostname"]["match"], "device-0")
        self.assertIn("{INDEX}", by_name["hostname"]["replace"])
        self.assertEqual(by_name["mgmt-address"], {"name": "mgmt-address", "match": "127.0.0.1",
                                                   "replace": "{ADDR}"})
        self.assertTrue(any(r["replace"] == "{MAC}" for r in rules), rules)

    def test_fleetsim_over_tcp(self):
        f = self.fleet()
        port = f.addr(0)[1]
        # crs-x has its host name in sysName only (no ietf-system in its NETCONF data): --snmp finds it.
        out, m, _ = self.record(["--port", port, "--ssh", "false", "--snmp", "public", "--snmp-port", port])
        self.check_fleetsim_folder(f, out, m, "tcp")

    def test_fleetsim_over_ssh(self):
        f = self.fleet(["--ssh", "true", "--state-dir", tempfile.mkdtemp(dir=self.tmp)])
        port = f.addr(0)[1]
        out, m, _ = self.record(["--port", port, "--ssh", "true", "--snmp", "public", "--snmp-port", port])
        ref = self.fleet()  # the same crs-x device over TCP, for the raw client's comparisons
        self.check_fleetsim_folder(ref, out, m, "ssh", port=f.addr(0)[1])

    def test_snmp_walk_of_fleetsim_agent(self):
        f = self.fleet()
        port = f.addr(0)[1]
        out, m, _ = self.record(["--port", port, "--ssh", "false", "--snmp", "public", "--snmp-port", port])
        lines = self.read(out, "snmp.snmprec").decode().splitlines()
        self.assertEqual(m["counts"]["snmp_oids"], len(lines))
        self.assertGreater(len(lines), 20)
        self.assertIn("1.3.6.1.2.1.1.5.0|4|device-0", lines)
        oids = [tuple(int(x) for x in l.split("|")[0].split(".")) for l in lines]
        self.assertEqual(oids, sorted(oids))
        self.assertTrue(all(re.match(r"^[0-9.]+\|[0-9]+x?\|", l) for l in lines), lines[:5])

    def snmprec(self, out):
        """{oid: (tag, value)} of the folder's snmp.snmprec, and the OIDs in file order."""
        lines = self.read(out, "snmp.snmprec").decode().splitlines()
        rows = [l.split("|", 2) for l in lines]
        return {r[0]: (r[1], r[2]) for r in rows}, [r[0] for r in rows]

    def test_snmp_v3_walk_matches_v2c(self):
        users = ["ops:sha:authpass1:aes:privpass1", "adm:sha256:authpass2:none:x"]
        f = self.fleet([a for u in users for a in ("--snmp-v3-user", u)])
        port = f.addr(0)[1]
        base = ["--port", port, "--ssh", "false", "--snmp-port", port]
        out, m, _ = self.record(base + ["--snmp", "public"])
        v2c, v2c_order = self.snmprec(out)
        self.assertGreater(len(v2c), 20)
        for user in users:  # authPriv, then authNoPriv
            out, m, _ = self.record(base + ["--v3-user", user])
            self.assertTrue(m["complete"])
            self.assertEqual(m["problems"], [], user)
            v3, v3_order = self.snmprec(out)
            self.assertEqual(m["counts"]["snmp_oids"], len(v3_order))
            self.assertEqual(v3_order, v2c_order, user)  # the same OIDs, in the same order
            self.assertEqual(v3["1.3.6.1.2.1.1.5.0"], ("4", "device-0"))
            for oid, (tag, value) in v2c.items():
                if oid == "1.3.6.1.2.1.1.1.0" or oid == "1.3.6.1.2.1.1.5.0" or \
                        oid.startswith("1.3.6.1.2.1.2.2.1.2."):  # sysDescr, sysName, ifDescr
                    self.assertEqual(v3[oid], (tag, value), oid)
                self.assertEqual(v3[oid][0], tag, oid)  # every type; counters and uptime may move
            self.assertTrue(any(o.startswith("1.3.6.1.2.1.2.2.1.2.") for o in v3), "no ifDescr")

    def test_snmp_v3_wrong_auth_password_is_a_problem(self):
        f = self.fleet(["--snmp-v3-user", "ops:sha:authpass1:aes:privpass1"])
        port = f.addr(0)[1]
        out, m, _ = self.record(["--port", port, "--ssh", "false", "--snmp-port", port, "--timeout", 500,
                                 "--v3-user", "ops:sha:wrongpass:aes:privpass1"])
        self.assertTrue(m["complete"])  # the SNMP recording is optional
        self.assertEqual([p["what"] for p in m["problems"]], ["snmp"])
        self.assertIn("usmStatsWrongDigests", m["problems"][0]["why"])
        self.assertEqual(m["counts"]["snmp_oids"], 0)
        self.assertFalse(os.path.exists(os.path.join(out, "snmp.snmprec")))

    def test_snmp_agent_silent_is_a_problem(self):
        f = self.fleet()
        port = f.addr(0)[1]
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        self.cleanups.append(s.close)
        out, m, proc = self.record(["--port", port, "--ssh", "false", "--snmp", "public", "--snmp-port",
                                    s.getsockname()[1], "--timeout", 100, "--retries", 1])
        self.assertTrue(m["complete"])  # the SNMP recording is optional
        self.assertEqual([p["what"] for p in m["problems"]], ["snmp"])
        self.assertIn("no response", m["problems"][0]["why"])


class NetconfdRecordTests(RecordCase):

    def test_netconfd_tcp_direct(self):
        binary = ts.find_netconfd()
        if not binary:
            self.skipTest("netconfd (yuma123, Debian package netconfd) is not installed")
        n = ts.Netconfd(tempfile.mkdtemp(dir=self.tmp))
        self.cleanups.append(n.stop)
        n.start(binary)
        out, m, _ = self.record(["--port", n.port, "--ncx-connect", "--username", n.user])
        self.assertTrue(m["complete"], m)
        self.assertEqual(m["problems"], [])
        self.assertFalse(m["nmda"])
        self.assertEqual(m["source"]["transport"], "tcp")
        files = os.listdir(os.path.join(out, "yang"))
        self.assertIn("ietf-interfaces@2014-05-08.yang", files)
        self.assertEqual(m["counts"]["schemas_fetched"], len(files))
        ylib = ET.fromstring(self.read(out, "yang-library.xml"))
        self.assertTrue(list(ylib.iter("{urn:ietf:params:xml:ns:yang:ietf-yang-library}module")))
        text = self.read(out, "yang/ietf-interfaces@2014-05-08.yang").decode()
        self.assertTrue(text.lstrip().startswith("module ietf-interfaces"), text[:100])
        self.assertGreater(m["counts"]["state_bytes"], 0)
        ET.fromstring(self.read(out, "state.xml"))


class StandInTests(RecordCase):

    def standin(self, **kw):
        s = StandIn(**kw)
        self.cleanups.append(s.stop)
        return s

    def test_dropped_once_reconnects_and_completes(self):
        s = self.standin(drop="once")
        out, m, _ = self.record(["--port", s.port, "--ssh", "false"])
        self.assertEqual(s.connections, 2)
        self.assertTrue(m["complete"], m)
        conn = [p for p in m["problems"] if p["what"] == "connection"]
        self.assertEqual(len(conn), 1, m["problems"])
        self.assertIn("connecting again", conn[0]["why"])
        self.assertIn(b"box-7", self.read(out, "running.xml"))
        rules = json.loads(self.read(out, "rules.json"))["rules"]
        self.assertNotIn("hostname", [r["name"] for r in rules])  # not ietf-system's hostname

    def test_dropped_twice_stops_with_manifest(self):
        s = self.standin(drop="always")
        out, m, proc = self.record(["--port", s.port, "--ssh", "false"], want_rc=1)
        self.assertFalse(m["complete"])
        self.assertEqual([p["what"] for p in m["problems"] if p["what"] == "connection"], ["connection"] * 2)
        self.assertIn("record stopped: running: connection closed-by-server", proc.stderr)
        self.assertFalse(os.path.exists(os.path.join(out, "running.xml")))
        self.assertEqual(self.read(out, "yang/good@2020-01-01.yang").decode(), StandIn.SCHEMA_GOOD)

    def test_get_schema_rpc_error_is_listed_and_left_out(self):
        s = self.standin(bad_schema="bad")
        out, m, _ = self.record(["--port", s.port, "--ssh", "false"])
        self.assertTrue(m["complete"])
        gs = [p for p in m["problems"] if p["what"] == "get-schema"]
        self.assertEqual(gs, [{"what": "get-schema", "item": "bad",
                               "why": "rpc-error operation-failed: no such schema here"}])
        self.assertEqual(os.listdir(os.path.join(out, "yang")), ["good@2020-01-01.yang"])
        self.assertEqual(self.read(out, "yang/good@2020-01-01.yang").decode(), StandIn.SCHEMA_GOOD)
        self.assertEqual(m["counts"]["schemas_fetched"], 1)
        self.assertEqual(sorted(p["what"] for p in m["problems"] if p["what"] != "get-schema"),
                         ["schemas", "yang-library"])
        self.assertEqual(self.read(out, "running.xml"),
                         b'<data xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><top xmlns="urn:x:good">'
                         b'<hostname>box-7</hostname></top></data>\n')

    def test_state_not_xml(self):
        s = self.standin(bad_state=True)
        out, m, proc = self.record(["--port", s.port, "--ssh", "false"], want_rc=1)
        self.assertFalse(m["complete"])
        st = [p for p in m["problems"] if p["what"] == "state"]
        self.assertEqual(len(st), 1, m["problems"])
        self.assertIn("not well-formed XML", st[0]["why"])
        self.assertFalse(os.path.exists(os.path.join(out, "state.xml")))
        self.assertIn("not complete", proc.stderr)

    def test_usage(self):
        for args, text in [([], "record needs --out DIR"),
                           (["--out", self.tmp, "--device-count", "2"], "record records one server"),
                           (["--out", self.tmp, "--ncx-connect", "--ssh", "true"], "--ncx-connect is for plain TCP")]:
            proc = subprocess.run([STRESS, "record"] + args, capture_output=True, text=True, timeout=10)
            self.assertEqual(proc.returncode, 2)
            self.assertIn(text, proc.stderr)
        proc = subprocess.run([STRESS, "mount", "--snmp", "public"], capture_output=True, text=True, timeout=10)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("are for record", proc.stderr)


if __name__ == "__main__":
    STRESS = h.take_binaries_arguments()
    unittest.main(verbosity=2, warnings=False)
