"""One event, every channel (issue 29 item 2), seen by independent collectors: net-snmp's snmptrapd
(the trap, its fleetsimEventId.0 object), a plain UDP socket reading the syslog lines (the eventId SD
parameter of fleetsim@32473) and ncclient subscribed to NETCONF notifications (the fleetsim-events
event-id leaf). For a flap (linkDown, if-state-change, the link-down line), a reboot (coldStart and the
catalog's boot lines), a configuration change (netconf-config-change and the config-commit line, from a
session's edit-config and from the control API's set) and a refused login (authenticationFailure and the
login-failure line, for a wrong SSH password and a wrong SNMP community), every channel carries the same
id, and the next event of the device has another.

Run: /usr/bin/python3 test_events.py <path to fleetsim>. Loopback only, every wait bounded.
"""

import os
import re
import socket
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
from test_control_api import V3_ARGS, V3_USER, api  # noqa: E402

from ncclient import manager  # noqa: E402
from ncclient.transport.errors import AuthenticationError  # noqa: E402

warnings.simplefilter("default")
warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"ncclient(\.|$)")

EV_NS = "urn:fleetsim:events"
IFE_NS = "urn:fleetsim:if-events"
NCN_NS = "urn:ietf:params:xml:ns:yang:ietf-netconf-notifications"
PORT1 = h.profile_interface_names()[1]  # ifIndex 2
# snmptrapd -On writes each notification on one line: "OID = TYPE: value" varbinds separated by tabs.
TRAP_OID = re.compile(r"\.1\.3\.6\.1\.6\.3\.1\.1\.4\.1\.0 = OID: \.?([0-9.]+)")
TRAP_EVENT = re.compile(r"\.1\.3\.6\.1\.4\.1\.32473\.1\.1\.0 = STRING: \"(\d+)\"")
LINK_DOWN, LINK_UP = "1.3.6.1.6.3.1.1.5.3", "1.3.6.1.6.3.1.1.5.4"
COLD_START, AUTH_FAILURE = "1.3.6.1.6.3.1.1.5.1", "1.3.6.1.6.3.1.1.5.5"
SYSLOG_EVENT = re.compile(r'\[fleetsim@32473[^\]]* eventId="(\d+)"\]')
SYSLOG_MSGID = re.compile(r"^<\d+>1 \S+ (\S+) (\S+) \S+ (\S+) ")
SNMP_ENABLE_AUTHEN_TRAPS = "1.3.6.1.2.1.11.30.0"


def event_of(dev):
    """The smallest and largest possible id of device @p dev's events (event.h: (index + 1) * 2^32 + n)."""
    return ((dev + 1) << 32) + 1, ((dev + 2) << 32) - 1


class EventTests(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="fleetsim-events-")
        self.trap_port, self.trap_log = h.start_snmptrapd(self, self.work)
        self.syslog = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.syslog.bind(("127.0.0.1", 0))
        self.syslog.settimeout(0.2)
        self.addCleanup(self.syslog.close)
        self.lines = []

    def fleet(self, devices=2, extra=()):
        f, base = h.start_with_metrics(devices, ["--ssh", "true", "--trap-sink", "127.0.0.1:%d" % self.trap_port,
                                                 "--syslog-sink", "udp://127.0.0.1:%d" % self.syslog.getsockname()[1]]
                                       + list(extra), True, 8)
        self.addCleanup(f.stop)
        return f, base

    def ncc(self, f, i, user="admin", password="admin"):
        host, port = f.addr(i)
        m = manager.connect(host=host, port=port, username=user, password=password, hostkey_verify=False,
                            allow_agent=False, look_for_keys=False, timeout=h.scaled(10))
        self.addCleanup(lambda: m.connected and m.close_session())
        return m

    # ------------------------------------------------------------ the three collectors

    def traps(self):
        """[(trap OID, event id or None)] snmptrapd logged so far, in order."""
        with open(self.trap_log, errors="replace") as f:
            text = f.read()
        out = []
        for line in text.splitlines():
            oid = TRAP_OID.search(line)
            if oid:
                ev = TRAP_EVENT.search(line)
                out.append((oid.group(1), int(ev.group(1)) if ev else None))
        return out

    def read_syslog(self):
        """Every syslog line the UDP socket received so far: [(host, app-name, msgid, event id or None)]."""
        while True:
            try:
                data = self.syslog.recv(65536).decode(errors="replace")
            except socket.timeout:
                break
            m = SYSLOG_MSGID.match(data)
            if not m:
                raise AssertionError("not an RFC 5424 line: %r" % data)
            ev = SYSLOG_EVENT.search(data)
            self.lines.append((m.group(1), m.group(2), m.group(3), int(ev.group(1)) if ev else None, data))
        return self.lines

    def wait_traps(self, want, limit_s=5):
        deadline = time.monotonic() + h.scaled(limit_s)
        got = self.traps()
        while time.monotonic() < deadline and not want(got):
            time.sleep(0.05)
            got = self.traps()
        return got

    def wait_lines(self, want, limit_s=5):
        deadline = time.monotonic() + h.scaled(limit_s)
        while time.monotonic() < deadline and not want(self.read_syslog()):
            pass
        return self.lines

    @staticmethod
    def notifications(m, limit_s, want):
        out = []
        deadline = time.monotonic() + h.scaled(limit_s)
        while time.monotonic() < deadline and not want(out):
            n = m.take_notification(block=True, timeout=0.2)
            if n is not None:
                out.append(ET.fromstring(n.notification_xml))
        return out

    def assert_device_event(self, ev, dev):
        lo, hi = event_of(dev)
        self.assertTrue(lo <= ev <= hi, "event id %s is not one of device %d's" % (ev, dev))

    # ------------------------------------------------------------ events

    def test_flap_has_one_id_in_trap_notification_and_syslog_issue_29(self):
        f, base = self.fleet(extra=["--run-tag", "run<29>"])
        m = self.ncc(f, 1)
        m.create_subscription()
        code, r = api(base, "/api/v1/devices/1/flap", "POST", {"interface": PORT1, "for": "300ms"})
        self.assertEqual((code, r["failed"]), (200, 0), r)
        traps = self.wait_traps(lambda g: sum(t[0] in (LINK_DOWN, LINK_UP) for t in g) >= 2)
        links = [t for t in traps if t[0] in (LINK_DOWN, LINK_UP)]
        self.assertEqual([t[0] for t in links], [LINK_DOWN, LINK_UP], traps)
        down_id, up_id = links[0][1], links[1][1]
        self.assertIsNotNone(down_id, "linkDown carries fleetsimEventId.0")
        self.assert_device_event(down_id, 1)
        self.assertEqual(up_id, down_id + 1, "the up is the device's next event")
        lines = [x for x in self.wait_lines(lambda ls: sum(x[2] == "LINK" for x in ls) >= 2) if x[2] == "LINK"]
        self.assertEqual([(x[0], x[3]) for x in lines], [("device-1", down_id), ("device-1", up_id)], lines)
        self.assertIn("link down", lines[0][4])
        notes = self.notifications(m, 5, lambda o: len(o) >= 2)
        got = [(n.findtext(".//{%s}oper-status" % IFE_NS), n.findtext(".//{%s}event-id" % EV_NS)) for n in notes]
        self.assertEqual(got, [("down", str(down_id)), ("up", str(up_id))])
        # --run-tag in every channel: the notification's run-tag leaf, the syslog SD, the trap's object.
        self.assertEqual([n.findtext(".//{%s}run-tag" % EV_NS) for n in notes], ["run<29>"] * 2)
        self.assertIn('run="run<29>"', lines[0][4])
        with open(self.trap_log, errors="replace") as tf:
            self.assertIn('32473.1.2.0 = STRING: "run<29>"', tf.read())

    def test_reboot_has_one_id_in_cold_start_and_every_boot_line_issue_29(self):
        f, base = self.fleet()
        code, r = api(base, "/api/v1/devices/0/reboot", "POST", {"for": "0s"})
        self.assertEqual((code, r["devices"]), (200, 1), r)
        traps = self.wait_traps(lambda g: any(t[0] == COLD_START for t in g))
        cold = [t for t in traps if t[0] == COLD_START]
        self.assertEqual(len(cold), 1, traps)
        self.assert_device_event(cold[0][1], 0)
        # The built-in catalog of the fleet's type (generic.json) has two boot lines: both, with coldStart's id.
        boot = [x for x in self.wait_lines(lambda ls: sum(x[2] == "BOOT" for x in ls) >= 2) if x[2] == "BOOT"]
        self.assertEqual([(x[0], x[3]) for x in boot], [("device-0", cold[0][1])] * 2, boot)
        self.assertEqual([x[1] for x in boot], ["kernel", "systemd"], "in catalog order")

    def test_config_change_has_one_id_in_netconf_config_change_and_syslog_issue_29(self):
        f, base = self.fleet()
        watcher = self.ncc(f, 1)
        watcher.create_subscription()
        editor = self.ncc(f, 1)
        editor.edit_config(target="running",
                           config='<config xmlns="%s">%s</config>' % (h.NC_NS, h.iface("ev-x")))
        # And the control API's set: another event of the same device, with the next id.
        code, r = api(base, "/api/v1/devices/1/set", "POST", {"config": h.iface("ev-y")})
        self.assertEqual((code, r["failed"]), (200, 0), r)
        notes = self.notifications(watcher, 5, lambda o: len(o) >= 2)
        changes = [n for n in notes if n.find(".//{%s}netconf-config-change" % NCN_NS) is not None]
        self.assertEqual(len(changes), 2, [ET.tostring(n) for n in notes])
        ids = [int(n.findtext(".//{%s}netconf-config-change/{%s}event-id" % (NCN_NS, EV_NS))) for n in changes]
        self.assert_device_event(ids[0], 1)
        self.assertEqual(ids[1], ids[0] + 1)
        self.assertIsNotNone(changes[0].find(".//{%s}session-id" % NCN_NS), "the first was the session's")
        self.assertIsNotNone(changes[1].find(".//{%s}server" % NCN_NS), "the second the API's")
        lines = [x for x in self.wait_lines(lambda ls: sum(x[2] == "COMMIT" and x[3] for x in ls) >= 2)
                 if x[2] == "COMMIT" and x[3]]
        self.assertEqual([(x[0], x[3]) for x in lines], [("device-1", ids[0]), ("device-1", ids[1])], lines)
        self.assertIn(" anonymous", lines[0][4], "the session's line names its user as the notification does")
        self.assertEqual(self.traps(), [], "a configuration change sends no trap")

    def test_refused_logins_have_one_id_in_authentication_failure_and_syslog_issue_29(self):
        f, base = self.fleet()
        out = subprocess.run(["snmpget", "-v2c", "-c", "public", "-On", "-t", "1", "-r", "1",
                              "127.0.0.1:%d" % (f.port + 1), SNMP_ENABLE_AUTHEN_TRAPS], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, timeout=h.scaled(10), env=dict(os.environ, MIBS=""))
        self.assertIn("INTEGER: 1", out.stdout.decode(), "snmpEnableAuthenTraps is enabled(1)")
        with self.assertRaises(AuthenticationError):
            self.ncc(f, 1, user="not-admin", password="not-the-password")
        traps = self.wait_traps(lambda g: any(t[0] == AUTH_FAILURE for t in g))
        ssh_id = [t for t in traps if t[0] == AUTH_FAILURE][0][1]
        self.assert_device_event(ssh_id, 1)
        # A wrong community: no answer, one more event (one request, no retry).
        subprocess.run(["snmpget", "-v2c", "-c", "wrong", "-On", "-t", "0.5", "-r", "0",
                        "127.0.0.1:%d" % (f.port + 1), SNMP_ENABLE_AUTHEN_TRAPS], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=h.scaled(10), env=dict(os.environ, MIBS=""))
        traps = self.wait_traps(lambda g: any(t[0] == AUTH_FAILURE and t[1] != ssh_id for t in g))
        auth = [t[1] for t in traps if t[0] == AUTH_FAILURE]
        self.assertEqual(auth[0], ssh_id)
        self.assertGreater(auth[-1], ssh_id)
        self.assert_device_event(auth[-1], 1)
        lines = [x for x in self.wait_lines(lambda ls: sum(x[2] == "AUTH" and x[3] for x in ls) >= len(auth))
                 if x[2] == "AUTH" and x[3]]
        self.assertEqual([(x[0], x[3]) for x in lines], [("device-1", i) for i in auth], lines)
        # The SSH line names who tried and from where; the community's names where it came from (a community
        # is no user: drawn, as a background line's).
        self.assertIn(" not-admin from 127.0.0.1 ", lines[0][4])
        self.assertIn(" from 127.0.0.1 ", lines[-1][4])

    def test_snmp_set_is_a_config_change_and_snmp_enable_authen_traps_is_obeyed_issue_29(self):
        f, base = self.fleet()
        watcher = self.ncc(f, 0)
        watcher.create_subscription()
        agent = "127.0.0.1:%d" % f.port
        # A SET of sysContact changes running: netconf-config-change (by the server) and config-commit, one id.
        self.assertEqual(snmp("snmpset", agent, ["1.3.6.1.2.1.1.4.0", "s", "noc <noc@example.net>"]), 0)
        notes = self.notifications(watcher, 5, lambda o: len(o) >= 1)
        self.assertEqual(len(notes), 1)
        self.assertIsNotNone(notes[0].find(".//{%s}netconf-config-change/{%s}changed-by/{%s}server"
                                           % (NCN_NS, NCN_NS, NCN_NS)), ET.tostring(notes[0]))
        set_id = int(notes[0].findtext(".//{%s}event-id" % EV_NS))
        self.assert_device_event(set_id, 0)
        lines = self.wait_lines(lambda ls: any(x[2] == "COMMIT" and x[3] == set_id for x in ls))
        self.assertEqual([x[3] for x in lines if x[2] == "COMMIT" and x[3]], [set_id])
        # disabled(2): a wrong community still gets its login-failure line, but no authenticationFailure trap.
        self.assertEqual(snmp("snmpset", agent, [SNMP_ENABLE_AUTHEN_TRAPS, "i", "2"]), 0)
        snmp("snmpget", agent, [SNMP_ENABLE_AUTHEN_TRAPS], community="wrong")
        lines = self.wait_lines(lambda ls: any(x[2] == "AUTH" and x[3] for x in ls))
        quiet_id = [x[3] for x in lines if x[2] == "AUTH" and x[3]][0]
        self.assertGreater(quiet_id, set_id)
        # enabled(1) again: the next one sends the trap, with the next id (the quiet one had no trap).
        self.assertEqual(snmp("snmpset", agent, [SNMP_ENABLE_AUTHEN_TRAPS, "i", "1"]), 0)
        snmp("snmpget", agent, [SNMP_ENABLE_AUTHEN_TRAPS], community="wrong")
        traps = self.wait_traps(lambda g: any(t[0] == AUTH_FAILURE for t in g))
        self.assertEqual([t[1] for t in traps if t[0] == AUTH_FAILURE], [quiet_id + 1], traps)
        self.assertEqual(snmp("snmpset", agent, [SNMP_ENABLE_AUTHEN_TRAPS, "i", "3"]), 2, "wrongValue: 1 or 2")
        self.assertEqual(snmp("snmpget", agent, [SNMP_ENABLE_AUTHEN_TRAPS], community="public"), 0)

    def test_snmpv3_wrong_password_and_unknown_user_are_refused_logins_issue_29(self):
        f, base = self.fleet(extra=["--snmp-v3-user", V3_USER])
        agent = "127.0.0.1:%d" % (f.port + 1)
        right = subprocess.run(["snmpget"] + V3_ARGS + ["-On", "-t", "1", "-r", "0", agent, SNMP_ENABLE_AUTHEN_TRAPS],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=h.scaled(10),
                               env=dict(os.environ, MIBS=""))
        self.assertIn("INTEGER: 1", right.stdout.decode(), "the right user is served, no event")
        wrong_key = [a if a != "authpass1" else "not-authpass" for a in V3_ARGS]
        unknown = [a if a != "ops" else "nosuch" for a in V3_ARGS]
        for args in (wrong_key, unknown):
            subprocess.run(["snmpget"] + args + ["-On", "-t", "0.5", "-r", "0", agent, SNMP_ENABLE_AUTHEN_TRAPS],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=h.scaled(10),
                           env=dict(os.environ, MIBS=""))
        # Engine discovery (an unknown engine ID) is not a failure: exactly two events, wrong digest then
        # unknown user, each with its trap and line.
        traps = self.wait_traps(lambda g: sum(t[0] == AUTH_FAILURE for t in g) >= 2)
        auth = [t[1] for t in traps if t[0] == AUTH_FAILURE]
        self.assertEqual(len(auth), 2, traps)
        self.assert_device_event(auth[0], 1)
        self.assertEqual(auth[1], auth[0] + 1)
        lines = [x for x in self.wait_lines(lambda ls: sum(x[2] == "AUTH" and x[3] for x in ls) >= 2)
                 if x[2] == "AUTH" and x[3]]
        self.assertEqual([x[3] for x in lines], auth)
        # Each names the v3 user the request gave and the requester's address.
        self.assertIn(" ops from 127.0.0.1 ", lines[0][4])
        self.assertIn(" nosuch from 127.0.0.1 ", lines[1][4])
        time.sleep(0.3)
        self.assertEqual([t[1] for t in self.traps() if t[0] == AUTH_FAILURE], auth, "nothing more")


def snmp(tool, agent, args, community="private"):
    """Exit code of one net-snmp command (one try, short timeout)."""
    return subprocess.run([tool, "-v2c", "-c", community, "-On", "-t", "0.5", "-r", "0", agent] + args,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=h.scaled(10),
                          env=dict(os.environ, MIBS="")).returncode


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2)
