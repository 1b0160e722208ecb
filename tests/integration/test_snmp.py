"""The SNMP view of every device, checked with net-snmp's own tools (snmpget, snmpbulkwalk,
snmpwalk, snmpset) and a raw UDP client, against the NETCONF view of the same device.

Run: /usr/bin/python3 test_snmp.py <path to fleetsim>. Every agent is on 127.0.0.0/8, every call
has a time limit.
"""

import os
import re
import socket
import subprocess
import time
import unittest
import urllib.request

import fleetsim_harness as h
from snmp_ber import ber_int, decode, oid_text, tlv, v2c_request, v2c_response

IF_HC_IN_OCTETS = "1.3.6.1.2.1.31.1.1.1.6"
IF_IN_OCTETS = "1.3.6.1.2.1.2.2.1.10"
IF_ADMIN = "1.3.6.1.2.1.2.2.1.7"
IF_OPER = "1.3.6.1.2.1.2.2.1.8"
IF_LAST_CHANGE = "1.3.6.1.2.1.2.2.1.9"
IF_ALIAS = "1.3.6.1.2.1.31.1.1.1.18"
IF_DESCR = "1.3.6.1.2.1.2.2.1.2"
SYS_DESCR = "1.3.6.1.2.1.1.1.0"
SYS_UPTIME = "1.3.6.1.2.1.1.3.0"
SYS_CONTACT = "1.3.6.1.2.1.1.4.0"
SYS_NAME = "1.3.6.1.2.1.1.5.0"
SNMP_TRAP_ADDRESS = "1.3.6.1.6.3.18.1.3.0"
# 2026-01-01T00:00:00Z, for runs with the devices' clock stopped.
FIXED_CLOCK = 1767225600
TOOL_TIMEOUT_S = 10


def tool(args, check=True):
    """Run a net-snmp command; return its stdout (values printed with -On -Oe)."""
    p = subprocess.run(args, capture_output=True, text=True, timeout=h.scaled(TOOL_TIMEOUT_S))
    if check and p.returncode != 0:
        raise AssertionError("%s failed (%d): %s %s" % (" ".join(args), p.returncode, p.stdout, p.stderr))
    return p.stdout + p.stderr


def target(addr):
    return "%s:%d" % addr


def snmp(cmd, addr, oids, community="public", version="2c", extra=(), check=True):
    return tool([cmd, "-v", version, "-c", community, "-On", "-Oe", "-t", "1", "-r", "1"] + list(extra)
                + [target(addr)] + list(oids), check)


def values(output):
    """{oid: (type, value)} from -On output lines."""
    out = {}
    for line in output.splitlines():
        m = re.match(r"^(\.[\d.]+) = (\w[\w-]*): ?(.*)$", line)
        if m:
            out[m.group(1).lstrip(".")] = (m.group(2), m.group(3).strip('"'))
    return out


def response_header(data):
    """(request-id, error-status, error-index, number of varbinds) of a v1/v2c response."""
    rid, status, index, values = v2c_response(data)
    return rid, status, index, len(values)


class SnmpTests(unittest.TestCase):
    def fleet(self, **kw):
        f = h.Fleet(**kw).start()
        self.addCleanup(f.stop)
        return f

    def agent(self, f, i):
        host, port = f.addr(i)
        return host, (port if f.ip_per_device else f.port + i)

    # ------------------------------------------------------------ reads

    def test_bulkwalk_counters_move_between_walks_and_loopback_stays(self):
        f = self.fleet(devices=2)
        a = self.agent(f, 1)
        first = values(snmp("snmpbulkwalk", a, [IF_HC_IN_OCTETS]))
        time.sleep(1.2)
        second = values(snmp("snmpbulkwalk", a, [IF_HC_IN_OCTETS]))
        names = values(snmp("snmpbulkwalk", a, [IF_DESCR]))
        self.assertEqual(len(first), len(h.PROFILE_INTERFACES), first)
        for oid, (typ, v) in first.items():
            self.assertEqual(typ, "Counter64", oid)
            name = names[IF_DESCR + "." + oid.rsplit(".", 1)[1]][1]
            if name.startswith("Loopback"):
                self.assertEqual(int(second[oid][1]), int(v), "a loopback of speed 0 carries nothing")
            else:
                self.assertGreater(int(second[oid][1]), int(v), "%s (%s) did not move in 1.2 s" % (oid, name))

    def test_devices_differ(self):
        f = self.fleet(devices=2, extra=["--clock-fixed", str(FIXED_CLOCK)])
        one = values(snmp("snmpget", self.agent(f, 0), [IF_HC_IN_OCTETS + ".1", SYS_UPTIME, SYS_NAME]))
        two = values(snmp("snmpget", self.agent(f, 1), [IF_HC_IN_OCTETS + ".1", SYS_UPTIME, SYS_NAME]))
        for oid in one:
            self.assertNotEqual(one[oid], two[oid], oid)
        self.assertEqual(one[SYS_NAME][1], "device-0")
        self.assertEqual(two[SYS_NAME][1], "device-1")

    def test_v1_walk_leaves_out_counter64(self):
        f = self.fleet(devices=1)
        out = values(snmp("snmpwalk", self.agent(f, 0), ["1.3.6.1.2.1.31.1.1.1"], version="1"))
        types = {t for t, _ in out.values()}
        self.assertNotIn("Counter64", types)
        self.assertIn("Counter32", types)
        self.assertTrue(any(o.startswith("1.3.6.1.2.1.31.1.1.1.1.") for o in out), "ifName is there")

    def test_v1_get_of_a_missing_object_is_nosuchname(self):
        f = self.fleet(devices=1)
        out = snmp("snmpget", self.agent(f, 0), ["1.3.6.1.2.1.1.99.0"], version="1", check=False)
        self.assertIn("noSuchName", out)

    def test_v2c_get_missing_instance_and_object(self):
        f = self.fleet(devices=1)
        out = snmp("snmpget", self.agent(f, 0), [IF_DESCR + ".999", "1.3.6.1.2.1.1.99.0"])
        self.assertIn("No Such Instance", out)
        self.assertIn("No Such Object", out)

    def test_crs_x_collection_yields_1738_samples(self):
        f = self.fleet(devices=1, extra=["--profile", "crs-x"])
        objects = ["1.3.6.1.2.1.1.3.0"] + ["1.3.6.1.2.1.31.1.1.1.%d" % c for c in range(6, 14)] + \
                  ["1.3.6.1.2.1.2.2.1.%d" % c for c in (13, 14, 19, 20)] + \
                  ["1.3.6.1.2.1.25.3.3.1.2", "1.3.6.1.2.1.25.2.3.1.5", "1.3.6.1.2.1.25.2.3.1.6"]
        numeric = 0
        for o in objects:
            cmd = "snmpget" if o.endswith(".3.0") else "snmpbulkwalk"
            for typ, _ in values(snmp(cmd, self.agent(f, 0), [o], extra=["-Cr25"] if cmd != "snmpget" else [])).values():
                numeric += typ in ("INTEGER", "Counter32", "Gauge32", "Timeticks", "Counter64")
        self.assertEqual(numeric, 1738)

    # ------------------------------------------------------------ one model, two views

    def netconf_get(self, f, i, filt):
        with h.RawClient(f.addr(i)).hello() as c:
            reply = c.rpc('<get><filter type="subtree">%s</filter></get>' % filt)
        return h.assert_data(reply, "get")

    def test_netconf_get_and_snmp_get_agree_with_the_clock_stopped(self):
        f = self.fleet(devices=3, extra=["--clock-fixed", str(FIXED_CLOCK)])
        filt = ('<interfaces-state xmlns="%s"><interface><name>GigabitEthernet0/0/0/1</name></interface>'
                '</interfaces-state>' % h.IF_NS)
        data = self.netconf_get(f, 2, filt)
        stats = {el.tag.split("}")[1]: el.text for el in data.iter() if el.text and el.tag.startswith("{%s}" % h.IF_NS)}
        got = values(snmp("snmpget", self.agent(f, 2), [IF_HC_IN_OCTETS + ".2", IF_IN_OCTETS + ".2",
                                                        "1.3.6.1.2.1.31.1.1.1.10.2", "1.3.6.1.2.1.2.2.1.14.2"]))
        self.assertEqual(int(got[IF_HC_IN_OCTETS + ".2"][1]), int(stats["in-octets"]))
        self.assertEqual(int(got[IF_IN_OCTETS + ".2"][1]), int(stats["in-octets"]) & 0xffffffff,
                         "ifInOctets is the low 32 bits of the 64-bit counter")
        self.assertEqual(int(got["1.3.6.1.2.1.31.1.1.1.10.2"][1]), int(stats["out-octets"]))
        self.assertEqual(int(got["1.3.6.1.2.1.2.2.1.14.2"][1]), int(stats["in-errors"]))
        self.assertEqual(stats["oper-status"], "up")
        self.assertEqual(stats["if-index"], "2")

    NMDA = ('<get-data xmlns="urn:ietf:params:xml:ns:yang:ietf-netconf-nmda" '
            'xmlns:ds="urn:ietf:params:xml:ns:yang:ietf-datastores"><datastore>ds:%s</datastore>%s</get-data>')

    @staticmethod
    def nmda_data(reply):
        import xml.etree.ElementTree as ET
        data = ET.fromstring(reply).find("{urn:ietf:params:xml:ns:yang:ietf-netconf-nmda}data")
        if data is None:
            raise AssertionError("expected NMDA <data>, got:\n%s" % reply)
        return data

    def test_nmda_operational_view_agrees_with_snmp_and_edit_data_reaches_it(self):
        f = self.fleet(devices=2, extra=["--clock-fixed", str(FIXED_CLOCK)])
        one = '<interfaces xmlns="%s"><interface><name>GigabitEthernet0/0/0/2</name></interface></interfaces>' % h.IF_NS
        with h.RawClient(f.addr(1)).hello() as c:
            data = self.nmda_data(c.rpc(self.NMDA % ("operational", "<subtree-filter>%s</subtree-filter>" % one)))
            self.assertEqual(data.findtext(".//{%s}oper-status" % h.IF_NS), "up")
            octets = int(data.findtext(".//{%s}in-octets" % h.IF_NS))
            self.assertEqual(data.findtext(".//{%s}description" % h.IF_NS), "port 2", "configuration is there too")
            state_only = self.nmda_data(c.rpc(self.NMDA % ("operational", "<subtree-filter>%s</subtree-filter>"
                                                          "<config-filter>false</config-filter>" % one)))
            self.assertIsNone(state_only.find(".//{%s}description" % h.IF_NS), "config-filter false drops config")
            self.assertIsNotNone(state_only.find(".//{%s}in-octets" % h.IF_NS))
            running = self.nmda_data(c.rpc(self.NMDA % ("running", "<subtree-filter>%s</subtree-filter>" % one)))
            self.assertIsNone(running.find(".//{%s}oper-status" % h.IF_NS), "running holds no state")
            h.assert_ok(c.rpc('<edit-data xmlns="urn:ietf:params:xml:ns:yang:ietf-netconf-nmda" '
                              'xmlns:ds="urn:ietf:params:xml:ns:yang:ietf-datastores"><datastore>ds:running'
                              '</datastore><config><interfaces xmlns="%s"><interface><name>GigabitEthernet0/0/0/2'
                              '</name><enabled>false</enabled></interface></interfaces></config></edit-data>'
                              % h.IF_NS), "edit-data")
            after = self.nmda_data(c.rpc(self.NMDA % ("operational", "<subtree-filter>%s</subtree-filter>" % one)))
            self.assertEqual(after.findtext(".//{%s}oper-status" % h.IF_NS), "down")
        got = values(snmp("snmpget", self.agent(f, 1), [IF_HC_IN_OCTETS + ".3", IF_ADMIN + ".3"]))
        self.assertEqual(int(got[IF_HC_IN_OCTETS + ".3"][1]), octets)
        self.assertEqual(got[IF_ADMIN + ".3"][1], "2")

    def test_snmp_set_admin_down_shows_in_netconf_and_oper_follows(self):
        f = self.fleet(devices=2)
        a = self.agent(f, 1)
        snmp("snmpset", a, [IF_ADMIN + ".3", "i", "2"], community="private")
        with h.RawClient(f.addr(1)).hello() as c:
            data = h.assert_data(c.get_config(), "get-config")
        entry = [e for e in data.iter("{%s}interface" % h.IF_NS)
                 if e.findtext("{%s}name" % h.IF_NS) == "GigabitEthernet0/0/0/2"][0]
        self.assertEqual(entry.findtext("{%s}enabled" % h.IF_NS), "false")
        state = self.netconf_get(f, 1, '<interfaces-state xmlns="%s"><interface><name>GigabitEthernet0/0/0/2'
                                       '</name></interface></interfaces-state>' % h.IF_NS)
        self.assertEqual(state.findtext(".//{%s}oper-status" % h.IF_NS), "down")
        self.assertEqual(state.findtext(".//{%s}admin-status" % h.IF_NS), "down")
        got = values(snmp("snmpget", a, [IF_ADMIN + ".3", IF_OPER + ".3", IF_LAST_CHANGE + ".3", IF_OPER + ".2"]))
        self.assertEqual(got[IF_ADMIN + ".3"][1], "2")
        self.assertEqual(got[IF_OPER + ".3"][1], "2")
        self.assertEqual(got[IF_OPER + ".2"][1], "1", "the other interfaces stay up")
        self.assertGreater(int(re.search(r"\((\d+)\)", got[IF_LAST_CHANGE + ".3"][1]).group(1)), 0)
        # the counters of a down interface stand still
        before = values(snmp("snmpget", a, [IF_HC_IN_OCTETS + ".3"]))[IF_HC_IN_OCTETS + ".3"][1]
        time.sleep(0.3)
        after = values(snmp("snmpget", a, [IF_HC_IN_OCTETS + ".3"]))[IF_HC_IN_OCTETS + ".3"][1]
        self.assertEqual(before, after)
        # the other device is untouched
        other = values(snmp("snmpget", self.agent(f, 0), [IF_ADMIN + ".3"]))
        self.assertEqual(other[IF_ADMIN + ".3"][1], "1")

    def test_netconf_edit_shows_over_snmp_at_once(self):
        f = self.fleet(devices=1)
        with h.RawClient(f.addr(0)).hello() as c:
            h.assert_ok(c.edit_config(
                '<interfaces xmlns="%s"><interface><name>GigabitEthernet0/0/0/0</name>'
                '<description>uplink to core</description><enabled>false</enabled></interface></interfaces>'
                '<system xmlns="urn:ietf:params:xml:ns:yang:ietf-system"><contact>noc@example.org</contact>'
                '<hostname>edge-7</hostname></system>' % h.IF_NS), "edit-config")
        got = values(snmp("snmpget", self.agent(f, 0), [IF_ALIAS + ".1", IF_ADMIN + ".1", IF_OPER + ".1",
                                                         SYS_CONTACT, SYS_NAME]))
        self.assertEqual(got[IF_ALIAS + ".1"][1], "uplink to core")
        self.assertEqual(got[IF_ADMIN + ".1"][1], "2")
        self.assertEqual(got[IF_OPER + ".1"][1], "2")
        self.assertEqual(got[SYS_CONTACT][1], "noc@example.org")
        self.assertEqual(got[SYS_NAME][1], "edge-7")

    def test_snmp_set_of_system_leaves_lands_in_running(self):
        f = self.fleet(devices=1)
        snmp("snmpset", self.agent(f, 0), [SYS_NAME, "s", "core-1", SYS_CONTACT, "s", "ops <ops@x>",
                                           IF_ALIAS + ".2", "s", "to peer"], community="private")
        with h.RawClient(f.addr(0)).hello() as c:
            reply = c.get_config()
        self.assertIn("<hostname>core-1</hostname>", reply)
        self.assertIn("<contact>ops &lt;ops@x&gt;</contact>", reply)
        self.assertIn("<description>to peer</description>", reply)

    def test_set_is_atomic_and_reports_the_failing_varbind(self):
        f = self.fleet(devices=1)
        a = self.agent(f, 0)
        before = values(snmp("snmpget", a, [SYS_CONTACT]))[SYS_CONTACT][1]
        out = snmp("snmpset", a, [SYS_CONTACT, "s", "changed", IF_ADMIN + ".1", "i", "7"], community="private",
                   check=False)
        self.assertIn("wrongValue", out)
        self.assertIn("Failed object: .1.3.6.1.2.1.2.2.1.7.1", out)
        self.assertEqual(values(snmp("snmpget", a, [SYS_CONTACT]))[SYS_CONTACT][1], before, "nothing was set")
        out = snmp("snmpset", a, [SYS_DESCR, "s", "x"], community="private", check=False)
        self.assertIn("notWritable", out)
        out = snmp("snmpset", a, [IF_ALIAS + ".1", "i", "3"], community="private", check=False)
        self.assertIn("wrongType", out)

    def test_set_is_refused_while_netconf_holds_the_lock(self):
        f = self.fleet(devices=1)
        with h.RawClient(f.addr(0)).hello() as c:
            h.assert_ok(c.rpc("<lock><target><running/></target></lock>"), "lock")
            out = snmp("snmpset", self.agent(f, 0), [SYS_CONTACT, "s", "x"], community="private", check=False)
            self.assertIn("resourceUnavailable", out)

    # ------------------------------------------------------------ MIB-derived modules

    def smiv2_profile(self, extra_leaves=""):
        """A profile (minimal's, plus a MIB-derived module and its state data) in a temporary folder."""
        import shutil
        import tempfile
        d = tempfile.mkdtemp(prefix="fleetsim-smiv2-")
        self.addCleanup(shutil.rmtree, d)
        data = os.path.join(h.SOURCE_DIR, "tests", "integration", "data", "smiv2")
        for name in os.listdir(data):
            shutil.copy(os.path.join(data, name), d)
        with open(os.path.join(h.SOURCE_DIR, "schemas", "profiles", "minimal.xml")) as f:
            text = f.read()
        text = text.replace("<name>minimal</name>", "<name>smiv2-test</name>")
        text = text.replace("</profile>", "<schema>FLEETSIM-TEST-MIB</schema><state-data>state.xml</state-data>"
                                          "%s</profile>" % extra_leaves)
        path = os.path.join(d, "test-profile.xml")
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_a_mib_derived_module_is_served_over_snmp_with_no_code(self):
        f = self.fleet(devices=2, extra=["--profile", self.smiv2_profile()])
        a = self.agent(f, 1)
        walk = snmp("snmpbulkwalk", a, ["1.3.6.1.4.1.99991"])
        got = values(walk)
        base = "1.3.6.1.4.1.99991.1."
        self.assertEqual(got[base + "1.1.0"], ("STRING", "bench rack 7"))
        self.assertEqual(got[base + "1.3.0"], ("INTEGER", "2"), "an enumeration is its value")
        self.assertEqual(got[base + "2.1.2.1"], ("STRING", "first"))
        self.assertEqual(got[base + "2.1.3.2"], ("Gauge32", "20"))
        self.assertEqual(got[base + "3.1.2.2.97.98"], ("INTEGER", "-5"), "a string index is length + bytes")
        self.assertNotIn(base + "2.1.1.1", got, "not-accessible index columns are not served")
        oids = [l.split(" ")[0] for l in walk.splitlines() if l.startswith(".")]
        self.assertEqual(oids, sorted(oids, key=lambda o: [int(x) for x in o.strip(".").split(".")]),
                         "rows come in OID order, not file order")
        first = int(got[base + "1.2.0"][1])
        self.assertGreaterEqual(first, 1000)
        time.sleep(0.3)
        second = int(values(snmp("snmpget", a, [base + "1.2.0"]))[base + "1.2.0"][1])
        self.assertGreater(second, first, "a Counter32 of the state data moves")
        # the live objects are still there, and NETCONF shows the same state data
        self.assertIn("fleetsim simulated router", snmp("snmpget", a, [SYS_DESCR]))
        data = self.netconf_get(f, 1, '<fleetsimTestMIB xmlns="urn:ietf:params:xml:ns:yang:smiv2:FLEETSIM-TEST-MIB"/>')
        labels = [e.text for e in data.iter("{urn:ietf:params:xml:ns:yang:smiv2:FLEETSIM-TEST-MIB}testLabel")]
        self.assertEqual(sorted(labels), ["first", "second"])

    def test_a_profile_naming_a_missing_module_is_refused(self):
        path = self.smiv2_profile("<schema>NO-SUCH-MIB</schema>")
        code, out = h.run_fleetsim(["--profile", path, "--starting-port", "20000"])
        self.assertEqual(code, 2, out)
        self.assertIn("NO-SUCH-MIB", out)

    # ------------------------------------------------------------ SNMPv3

    V3_USERS = ["--snmp-v3-user", "ops:sha:authpass1:aes:privpass1", "--snmp-v3-user", "adm:sha256:authpass2:none:x",
                "--snmp-v3-user", "mon:none:x:none:x"]

    def v3(self, cmd, addr, oids, user, level, auth=(), priv=(), check=True):
        args = [cmd, "-v", "3", "-u", user, "-l", level, "-On", "-Oe", "-t", "1", "-r", "0"]
        if auth:
            args += ["-a", auth[0], "-A", auth[1]]
        if priv:
            args += ["-x", priv[0], "-X", priv[1]]
        return tool(args + [target(addr)] + list(oids), check)

    def test_v3_authpriv_sha_aes_and_sha256_walks_match_v2c(self):
        f = self.fleet(devices=2, extra=self.V3_USERS + ["--clock-fixed", str(FIXED_CLOCK)])
        a = self.agent(f, 1)
        v2 = values(snmp("snmpbulkwalk", a, [IF_HC_IN_OCTETS]))
        priv = values(self.v3("snmpbulkwalk", a, [IF_HC_IN_OCTETS], "ops", "authPriv", ("SHA", "authpass1"),
                              ("AES", "privpass1")))
        sha256 = values(self.v3("snmpbulkwalk", a, [IF_HC_IN_OCTETS], "adm", "authNoPriv", ("SHA-256", "authpass2")))
        noauth = values(self.v3("snmpget", a, [SYS_NAME], "mon", "noAuthNoPriv"))
        self.assertEqual(priv, v2)
        self.assertEqual(sha256, v2)
        self.assertEqual(noauth[SYS_NAME][1], "device-1")

    def test_v3_wrong_password_unknown_user_and_wrong_level_are_refused(self):
        f = self.fleet(devices=1, extra=self.V3_USERS)
        a = self.agent(f, 0)
        out = self.v3("snmpget", a, [SYS_NAME], "ops", "authPriv", ("SHA", "wrongpass1"), ("AES", "privpass1"),
                      check=False)
        self.assertIn("Authentication failure", out)
        out = self.v3("snmpget", a, [SYS_NAME], "nobody", "noAuthNoPriv", check=False)
        self.assertIn("Unknown user name", out)
        out = self.v3("snmpget", a, [SYS_NAME], "mon", "authNoPriv", ("SHA", "whatever12"), check=False)
        self.assertIn("Unsupported security level", out)
        usm = values(snmp("snmpget", a, ["1.3.6.1.6.3.15.1.1.%d.0" % i for i in (1, 3, 5)]))
        self.assertEqual(usm["1.3.6.1.6.3.15.1.1.1.0"][1], "1", "usmStatsUnsupportedSecLevels")
        self.assertEqual(usm["1.3.6.1.6.3.15.1.1.3.0"][1], "1", "usmStatsUnknownUserNames")
        self.assertEqual(usm["1.3.6.1.6.3.15.1.1.5.0"][1], "1", "usmStatsWrongDigests")
        self.assertIn("device-0", self.v3("snmpget", a, [SYS_NAME], "mon", "noAuthNoPriv"))

    def test_v3_set_needs_authentication(self):
        f, base = h.start_with_metrics(1, self.V3_USERS)
        self.addCleanup(f.stop)
        a = self.agent(f, 0)
        self.v3("snmpset", a, [SYS_NAME, "s", "v3-set"], "ops", "authPriv", ("SHA", "authpass1"), ("AES", "privpass1"))
        self.assertEqual(values(snmp("snmpget", a, [SYS_NAME]))[SYS_NAME][1], "v3-set")
        # A user without write access is answered as net-snmp's snmpd answers its read-only users.
        out = self.v3("snmpset", a, [SYS_NAME, "s", "anon", SYS_CONTACT, "s", "anon"], "mon", "noAuthNoPriv",
                      check=False)
        self.assertIn("Error in packet.\nReason: noAccess\nFailed object: .%s\n" % SYS_NAME, out)
        self.assertEqual(values(snmp("snmpget", a, [SYS_NAME]))[SYS_NAME][1], "v3-set")
        # Counted as denied (answered), and as an authorization failure; not as dropped.
        with urllib.request.urlopen(base + "/metrics", timeout=h.scaled(5)) as r:
            text = r.read().decode()
        self.assertIn('fleetsim_snmp_sets_denied_total{reason="read_only_user"} 1\n', text)
        self.assertIn('fleetsim_snmp_sets_denied_total{reason="read_community"} 0\n', text)
        self.assertIn("fleetsim_snmp_auth_failures_total 1\n", text)

    def test_v3_users_written_as_netsnmp_writes_them_answer_netsnmp(self):
        """--snmp-v3-user takes the protocol names as snmpget -a/-x take them, in any case."""
        f = self.fleet(devices=1, extra=["--snmp-v3-user", "ops:SHA-256:authpass1:AES:privpass1",
                                         "--snmp-v3-user", "s5:Sha-512:authpass3:AES-128:privpass3",
                                         "--snmp-v3-user", "rd:MD5:authpass2:NONE:x"])
        a = self.agent(f, 0)
        for user, level, auth, priv in (("ops", "authPriv", ("SHA-256", "authpass1"), ("AES", "privpass1")),
                                        ("s5", "authPriv", ("SHA-512", "authpass3"), ("AES", "privpass3")),
                                        ("rd", "authNoPriv", ("MD5", "authpass2"), ())):
            with self.subTest(user=user):
                got = values(self.v3("snmpget", a, [SYS_NAME], user, level, auth, priv))
                self.assertEqual(got[SYS_NAME][1], "device-0")
        # SHA-256 was taken as SHA-256: the same password under SHA-1 is a wrong digest.
        out = self.v3("snmpget", a, [SYS_NAME], "ops", "authPriv", ("SHA", "authpass1"), ("AES", "privpass1"),
                      check=False)
        self.assertIn("Authentication failure", out)

    def test_v3_is_refused_without_users(self):
        f = self.fleet(devices=1)
        out = self.v3("snmpget", self.agent(f, 0), [SYS_NAME], "mon", "noAuthNoPriv", check=False)
        self.assertIn("Timeout", out)

    # ------------------------------------------------------------ bad input

    def test_wrong_community_gets_no_answer_and_read_community_cannot_set(self):
        f = self.fleet(devices=1)
        a = self.agent(f, 0)
        out = snmp("snmpget", a, [SYS_DESCR], community="nope", extra=["-r", "0"], check=False)
        self.assertIn("Timeout", out)
        contact = values(snmp("snmpget", a, [SYS_CONTACT]))[SYS_CONTACT]
        # As net-snmp's snmpd answers a SET with its rocommunity (measured with snmpd 5.9.3): v2c noAccess,
        # v1 noSuchName, each on the first varbind.
        out = snmp("snmpset", a, [SYS_CONTACT, "s", "x", SYS_NAME, "s", "y"], community="public",
                   extra=["-r", "0"], check=False)
        self.assertIn("Error in packet.\nReason: noAccess\nFailed object: .%s\n" % SYS_CONTACT, out)
        out = snmp("snmpset", a, [SYS_CONTACT, "s", "x"], community="public", version="1", extra=["-r", "0"],
                   check=False)
        self.assertIn("Error in packet.\nReason: (noSuchName) There is no such variable name in this MIB.\n"
                      "Failed object: .%s\n" % SYS_CONTACT, out)
        self.assertIn("fleetsim simulated router", snmp("snmpget", a, [SYS_DESCR]))
        self.assertEqual(values(snmp("snmpget", a, [SYS_CONTACT, SYS_NAME])),
                         {SYS_CONTACT: contact, SYS_NAME: ("STRING", "device-0")}, "nothing was written")
        counters = values(snmp("snmpget", a, ["1.3.6.1.2.1.11.4.0", "1.3.6.1.2.1.11.5.0"]))
        self.assertEqual(counters["1.3.6.1.2.1.11.4.0"], ("Counter32", "1"), "snmpInBadCommunityNames")
        self.assertEqual(counters["1.3.6.1.2.1.11.5.0"], ("Counter32", "2"), "snmpInBadCommunityUses")

    def test_garbage_and_truncated_datagrams_are_dropped_and_the_agent_keeps_serving(self):
        f = self.fleet(devices=1)
        a = self.agent(f, 0)
        good = v2c_request(0xa0, 77, [SYS_DESCR])
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(h.scaled(2))
            for n in range(len(good)):
                s.sendto(good[:n], a)
            s.sendto(b"\x30\x84\xff\xff\xff\xff", a)
            s.sendto(os.urandom(300), a)
            s.sendto(good, a)
            data, _ = s.recvfrom(65535)
        self.assertEqual(response_header(data)[0], 77, "only the whole request is answered")
        parse_errs = int(values(snmp("snmpget", a, ["1.3.6.1.2.1.11.6.0"]))["1.3.6.1.2.1.11.6.0"][1])
        self.assertGreaterEqual(parse_errs, len(good), "every bad datagram is counted as snmpInASNParseErrs")

    # ------------------------------------------------------------ sizes

    def test_getbulk_is_cut_to_the_message_size_and_get_answers_toobig(self):
        f = self.fleet(devices=1, extra=["--profile", "crs-x", "--snmp-max-message-size", "484"])
        a = self.agent(f, 0)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(h.scaled(2))
            s.sendto(v2c_request(0xa5, 5, [IF_DESCR], a=0, b=200), a)
            data, _ = s.recvfrom(65535)
            rid, status, _, count = response_header(data)
            self.assertEqual((rid, status), (5, 0))
            self.assertLessEqual(len(data), 484)
            self.assertGreater(count, 5)
            self.assertLess(count, 144)
            s.sendto(v2c_request(0xa0, 6, [SYS_DESCR] * 40), a)
            data, _ = s.recvfrom(65535)
            rid, status, index, count = response_header(data)
            self.assertEqual((rid, status, index, count), (6, 1, 0, 0), "tooBig, no varbinds (RFC 3416 4.2.1)")

    # ------------------------------------------------------------ addressing, latency and faults

    def test_ip_per_device_agents_answer_from_their_own_address(self):
        f = self.fleet(devices=5, ip_per_device=True)
        # SO_BINDTODEVICE before bind keeps the workers' sockets in one SO_REUSEPORT group (set after bind,
        # the kernel took them out of it and refused the steering program with EINVAL).
        self.assertNotIn("cannot steer", f.log())
        for i in range(5):
            host, _ = f.addr(i)
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.settimeout(h.scaled(2))
                s.sendto(v2c_request(0xa0, 100 + i, [SYS_NAME]), (host, f.port))
                data, src = s.recvfrom(65535)
            self.assertEqual(src, (host, f.port), "answered from the address asked")
            self.assertEqual(response_header(data)[0], 100 + i)
            self.assertIn(b"device-%d" % i, data)

    # ------------------------------------------------------------ traps

    def notifications(self, sink, devices, answer=False, seconds=20):
        """{device index: [(source, request-id, {oid: value bytes})]} until every device sent one (bounded);
        with @answer each inform gets a Response sent back to its source."""
        seen = {}
        deadline = time.monotonic() + h.scaled(seconds)
        while len(seen) < devices and time.monotonic() < deadline:
            try:
                data, src = sink.recvfrom(65535)
            except socket.timeout:
                continue
            _version, _community, (tag, pdu) = decode(data)[0][1]
            rid = pdu[0][1]
            binds = {oid_text(vb[1][0][1]): vb[1][1][1] for vb in pdu[3][1]}
            name = binds[SYS_NAME].decode()
            seen.setdefault(int(name.split("-")[1]), []).append((src, rid, binds))
            if answer and tag == 0xa6:
                body = tlv(0x02, rid) + ber_int(0) + ber_int(0) + tlv(0x30, b"")
                sink.sendto(tlv(0x30, ber_int(1) + tlv(0x04, b"public") + tlv(0xa2, body)), src)
        self.assertEqual(sorted(seen), list(range(devices)), "every device sent a notification")
        return seen

    def trap_sink(self):
        sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.addCleanup(sink.close)
        sink.bind(("127.0.0.1", 0))
        sink.settimeout(0.2)
        return sink

    def test_traps_name_their_device_by_source_and_objects_in_both_addressing_modes(self):
        for ip_per_device in (False, True):
            sink = self.trap_sink()
            f = self.fleet(devices=3, ip_per_device=ip_per_device,
                           extra=["--flap-rate", "5", "--trap-sink", "127.0.0.1:%d" % sink.getsockname()[1]])
            for i, sent in self.notifications(sink, 3).items():
                host, port = self.agent(f, i)
                for src, _, binds in sent:
                    # A port per device: from the device's agent socket; an address per device: from its
                    # address. Either way snmpTrapAddress.0 and sysName.0 close the varbind list.
                    if ip_per_device:
                        self.assertEqual(src[0], host)
                    else:
                        self.assertEqual(src, (host, port), "sent from device %d's agent port" % i)
                    self.assertEqual(binds[SNMP_TRAP_ADDRESS], socket.inet_aton(host))
                    self.assertEqual(list(binds)[-2:], [SNMP_TRAP_ADDRESS, SYS_NAME])
            self.assertIn("device-0", snmp("snmpget", self.agent(f, 0), [SYS_NAME]))
            f.stop()

    def test_informs_from_agent_ports_are_acknowledged_through_the_agent(self):
        sink = self.trap_sink()
        f = self.fleet(devices=2, extra=["--flap-rate", "2", "--trap-inform", "true",
                                         "--trap-sink", "127.0.0.1:%d" % sink.getsockname()[1]])
        self.notifications(sink, 2, answer=True)
        # The Responses reached the agents' sockets and were passed to the sender: no inform is sent again
        # (the retransmission timeout is 1 s), while new ones keep coming with new request-ids. Request-ids
        # are per worker, so an inform is known by its source and request-id.
        later = []
        deadline = time.monotonic() + h.scaled(3)
        while time.monotonic() < deadline:
            try:
                data, src = sink.recvfrom(65535)
            except socket.timeout:
                continue
            rid = decode(data)[0][1][2][1][0][1]
            later.append((src, rid))
            body = tlv(0x02, rid) + ber_int(0) + ber_int(0) + tlv(0x30, b"")
            sink.sendto(tlv(0x30, ber_int(1) + tlv(0x04, b"public") + tlv(0xa2, body)), src)
        self.assertTrue(later, "informs keep coming")
        self.assertEqual(len(later), len(set(later)), "an acknowledged inform was sent again: %r" % later)
        self.assertIn("device-1", snmp("snmpget", self.agent(f, 1), [SYS_NAME]))

    def timed_gets(self, f, devices, rounds=1, timeout=5.0):
        """Send a GET to every device at once; return {device: [seconds to answer or None]}."""
        out = {d: [] for d in devices}
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            for r in range(rounds):
                sent = {}
                for d in devices:
                    rid = 1000 * r + d
                    s.sendto(v2c_request(0xa0, rid, [SYS_UPTIME]), self.agent(f, d))
                    sent[rid] = (d, time.monotonic())
                deadline = time.monotonic() + h.scaled(timeout)
                while sent and time.monotonic() < deadline:
                    s.settimeout(max(0.01, deadline - time.monotonic()))
                    try:
                        data, _ = s.recvfrom(65535)
                    except socket.timeout:
                        break
                    rid = response_header(data)[0]
                    d, t0 = sent.pop(rid)
                    out[d].append(time.monotonic() - t0)
                for d, _ in sent.values():
                    out[d].append(None)
        return out

    def test_latency_is_inside_the_range_asked(self):
        f = self.fleet(devices=4, extra=["--snmp-latency", "50-100ms"])
        times = self.timed_gets(f, range(4), rounds=5)
        flat = [t for ts in times.values() for t in ts]
        self.assertNotIn(None, flat)
        self.assertGreaterEqual(min(flat), 0.050)
        self.assertLess(max(flat), 0.100 + h.scaled(0.05))
        self.assertGreater(max(flat) - min(flat), 0.005, "drawn per answer, not one fixed delay")

    def test_a_slow_or_silent_device_never_delays_the_others(self):
        f = self.fleet(devices=16, extra=["--snmp-fault", "0.25:delay:2s", "--snmp-fault", "0.25:timeout"])
        times = self.timed_gets(f, range(16), timeout=4)
        slow = [d for d, ts in times.items() if ts[0] is not None and ts[0] >= 2.0]
        silent = [d for d, ts in times.items() if ts[0] is None]
        fast = [d for d, ts in times.items() if ts[0] is not None and ts[0] < 2.0]
        self.assertTrue(slow and silent and fast, times)
        self.assertLess(max(times[d][0] for d in fast), h.scaled(0.5), times)


    def test_netconf_latency_delays_replies_and_keeps_their_order(self):
        f = self.fleet(devices=1, extra=["--netconf-latency", "50-100ms"])
        with h.RawClient(f.addr(0)).hello() as c:
            t0 = time.monotonic()
            for i in range(1, 9):
                c.send_msg('<rpc xmlns="%s" message-id="%d"><get-config><source><running/></source>'
                           '</get-config></rpc>' % (h.NC_NS, i))
            ids = [re.search(r'message-id="(\d+)"', c.recv_msg()).group(1) for _ in range(8)]
            elapsed = time.monotonic() - t0
            self.assertEqual(ids, [str(i) for i in range(1, 9)], "replies in request order")
            self.assertGreaterEqual(elapsed, 0.050)
            self.assertLess(elapsed, 8 * 0.100 + h.scaled(0.5))
            c.send_msg('<rpc xmlns="%s" message-id="9"><close-session/></rpc>' % h.NC_NS)
            self.assertIn("<ok/>", c.recv_msg(), "close-session is answered before the session closes")
            c.expect_closed()

    # ------------------------------------------------------------ the poller against the fleet

    def test_stress_snmp_collects_the_fleet_within_the_injected_latency(self):
        import json
        import tempfile
        stress = os.path.join(os.path.dirname(h.BINARY), "fleetsim-stress")
        f = self.fleet(devices=20, ip_per_device=True, extra=["--snmp-latency", "50-100ms"])
        with tempfile.NamedTemporaryFile(suffix=".json") as manifest:
            p = subprocess.run([stress, "snmp", "--ip", f.ip, "--port", str(f.port), "--ip-per-device",
                                "--device-count", "20", "--concurrency", "20", "--rounds", "2",
                                "--json", manifest.name], capture_output=True, text=True, timeout=h.scaled(30))
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            r = json.load(open(manifest.name))["results"]
        self.assertEqual((r["completed"], r["failed"], r["timeouts"]), (40, 0, 0), p.stdout)
        self.assertEqual(r["samples_per_collection"]["min"], 66, "the minimal profile's collection")
        self.assertEqual(r["samples_per_collection"]["max"], 66)
        rt = r["response_time_ms"]
        self.assertGreaterEqual(rt["p50"], 50.0, p.stdout)
        self.assertLess(rt["p99"], 100.0 + h.scaled(50), p.stdout)

if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2)
