"""The control API's set, notification-rate and flap actions, seen by independent clients: ncclient over
SSH (netconf-config-change after a set, get-config, notifications counted over a window, if-state-change
of a flap), net-snmp's snmpget (ifAlias after a set, ifOperStatus during and after a flap) and a plain UDP
socket as the trap sink (linkDown and linkUp). Bad bodies get a 400 with a JSON message and change
nothing; the actions are in the report and counted in the metrics.

Run: /usr/bin/python3 test_control_api_actions.py <path to fleetsim>. Loopback only, every wait bounded.
"""

import json
import os
import re
import signal
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
from test_control_api import api, snmpget  # noqa: E402

from ncclient import manager  # noqa: E402

warnings.simplefilter("default")
warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"ncclient(\.|$)")

NCN_NS = "urn:ietf:params:xml:ns:yang:ietf-netconf-notifications"
IFE_NS = "urn:fleetsim:if-events"
ROUTES_1 = os.path.join(h.SOURCE_DIR, "notifications", "routes-1.xml")
PORT0 = h.profile_interface_names()[0]  # ifIndex 1
PORT1 = h.profile_interface_names()[1]  # ifIndex 2
IF_ALIAS_1 = "1.3.6.1.2.1.31.1.1.1.18.1"
IF_OPER_2 = "1.3.6.1.2.1.2.2.1.8.2"
# The OIDs of IF-MIB linkDown and linkUp as BER encodes them (tag, length, value) in snmpTrapOID.0's varbind.
LINK_DOWN = bytes([0x06, 0x09, 0x2B, 6, 1, 6, 3, 1, 1, 5, 3])
LINK_UP = bytes([0x06, 0x09, 0x2B, 6, 1, 6, 3, 1, 1, 5, 4])


def description_set(name, text):
    return ('<interfaces xmlns="%s"><interface><name>%s</name><description>%s</description></interface>'
            '</interfaces>' % (h.IF_NS, name, text))


def notifications(m, limit_s, want=None):
    """The notification XML texts an ncclient manager receives within @p limit_s (until @p want matches)."""
    out = []
    deadline = time.monotonic() + h.scaled(limit_s)
    while time.monotonic() < deadline:
        n = m.take_notification(block=True, timeout=0.2)
        if n is not None:
            out.append(n.notification_xml)
            if want and want(out):
                break
    return out


def oper_status(port, oid):
    code, text = snmpget(port, oid)
    if code != 0:
        raise AssertionError(text)
    return int(text.strip().rsplit(" ", 1)[1].split("(")[-1].rstrip(")"))


class ActionTests(unittest.TestCase):
    def fleet(self, extra=(), devices=2):
        f, base = h.start_with_metrics(devices, ["--ssh", "true"] + list(extra), True, 8)
        self.addCleanup(f.stop)
        return f, base

    def ncc(self, f, i):
        host, port = f.addr(i)
        m = manager.connect(host=host, port=port, username="admin", password="admin", hostkey_verify=False,
                            allow_agent=False, look_for_keys=False, timeout=h.scaled(10))
        self.addCleanup(lambda: m.connected and m.close_session())
        return m

    # ------------------------------------------------------------ set

    def test_set_is_seen_by_a_subscriber_get_config_and_snmp_and_a_reboot_brings_startup_back(self):
        f, base = self.fleet(devices=2)
        m = self.ncc(f, 1)
        m.create_subscription()
        other = self.ncc(f, 0)
        code, r = api(base, "/api/v1/devices/1/set", "POST", {"config": description_set(PORT0, "capi-set-x")})
        self.assertEqual((code, r["devices"], r["failed"]), (200, 1, 0), r)
        got = notifications(m, 5, lambda out: any("netconf-config-change" in x for x in out))
        change = [x for x in got if "netconf-config-change" in x]
        self.assertEqual(len(change), 1, got)
        root = ET.fromstring(change[0]).find(".//{%s}netconf-config-change" % NCN_NS)
        self.assertIsNotNone(root.find("{%s}changed-by/{%s}server" % (NCN_NS, NCN_NS)), change[0])
        self.assertIsNone(root.find("{%s}changed-by/{%s}session-id" % (NCN_NS, NCN_NS)), "no session made it")
        self.assertEqual(root.findtext("{%s}datastore" % NCN_NS), "running")
        edit = root.find("{%s}edit" % NCN_NS)
        self.assertTrue(edit.findtext("{%s}target" % NCN_NS).endswith(":interfaces"), change[0])
        self.assertEqual(edit.findtext("{%s}operation" % NCN_NS), "merge")
        self.assertIn("capi-set-x", m.get_config(source="running").xml)
        self.assertNotIn("capi-set-x", other.get_config(source="running").xml, "device 0 untouched")
        self.assertNotIn("capi-set-x", m.get_config(source="startup").xml, "startup untouched")
        code, alias = snmpget(f.port + 1, IF_ALIAS_1)
        self.assertEqual(code, 0, alias)
        self.assertIn('"capi-set-x"', alias, "ifAlias follows running")
        # A set that changes nothing tells nobody.
        self.assertEqual(api(base, "/api/v1/devices/1/set", "POST",
                             {"config": description_set(PORT0, "capi-set-x")})[1]["failed"], 0)
        self.assertEqual([x for x in notifications(m, 0.5) if "netconf-config-change" in x], [])
        # Reboot: running is startup again.
        self.assertEqual(api(base, "/api/v1/devices/1/reboot", "POST", {"for": "0s"})[0], 200)
        self.assertTrue(h.wait_for(lambda: api(base, "/api/v1/devices/1")[1]["state"] == "up", 5))
        self.assertNotIn("capi-set-x", self.ncc(f, 1).get_config(source="running").xml)

    def test_set_replace_and_a_remove_attribute_in_the_fragment(self):
        f, base = self.fleet(devices=1)
        m = self.ncc(f, 0)
        api(base, "/api/v1/devices/0/set", "POST", {"config": description_set(PORT0, "to-remove")})
        self.assertIn("to-remove", m.get_config(source="running").xml)
        frag = ('<interfaces xmlns="%s" xmlns:nc="%s"><interface><name>%s</name><description nc:operation='
                '"remove"/></interface></interfaces>' % (h.IF_NS, h.NC_NS, PORT0))
        code, r = api(base, "/api/v1/devices/0/set", "POST", {"config": frag, "operation": "none"})
        self.assertEqual((code, r["failed"]), (200, 0), r)
        self.assertNotIn("to-remove", m.get_config(source="running").xml)

    def test_a_set_a_device_refuses_is_counted_failed_and_changes_nothing(self):
        f, base = self.fleet(devices=2)
        m = self.ncc(f, 0)
        before = m.get_config(source="running").data_xml
        bad = [
            '<interfaces xmlns="%s"><bogus>1</bogus></interfaces>' % h.IF_NS,  # not in the schema
            '<interfaces xmlns="%s"><interface><name>%s</name><enabled>maybe</enabled></interface>'
            '</interfaces>' % (h.IF_NS, PORT0),  # a bad value
            '<interfaces xmlns="%s"><interface><name>new0</name></interface></interfaces>' % h.IF_NS,  # no type
        ]
        for frag in bad:
            code, r = api(base, "/api/v1/devices/0-1/set", "POST", {"config": frag})
            self.assertEqual((code, r["devices"], r["failed"]), (200, 0, 2), (frag, r))
        # Another session's lock on running refuses it on that device only.
        m.lock("running")
        code, r = api(base, "/api/v1/devices/0-1/set", "POST", {"config": description_set(PORT0, "locked")})
        self.assertEqual((code, r["devices"], r["failed"]), (200, 1, 1), r)
        m.unlock("running")
        self.assertEqual(m.get_config(source="running").data_xml, before)

    def test_bad_bodies_get_400_and_change_nothing(self):
        f, base = self.fleet(devices=2)
        m = self.ncc(f, 0)
        before = m.get_config(source="running").data_xml
        cases = [
            ("set", {}),
            ("set", {"config": 5}),
            ("set", {"config": "<interfaces xmlns='%s'><interface>" % h.IF_NS}),  # not closed
            ("set", {"config": "<a xmlns='urn:x'></b>"}),
            ("set", {"config": "<interfaces><interface/></interfaces>"}),  # no namespace
            ("set", {"config": "text only"}),
            ("set", {"config": "<a xmlns='urn:x'/>trailing"}),
            ("set", {"config": "<p:a xmlns:q='urn:x'/>"}),
            ("set", {"config": description_set(PORT0, "x"), "operation": "delete"}),
            ("set", {"config": description_set(PORT0, "x"), "bogus": 1}),
            ("set", {"config": description_set(PORT0, "x"), "share": 2}),
            ("notification-rate", {}),
            ("notification-rate", {"rate": -1}),
            ("notification-rate", {"rate": "sine:5:9:60"}),  # issue 29: a profile whose rate would go below 0
            ("syslog-rate", {"rate": "staged:5"}),
            ("trap-rate", {"rate": True}),
            ("notification-rate", {"rate": 5, "reset": True}),
            ("flap", {"interface": 5}),
            ("flap", {"interface": ""}),
            ("flap", {"for": "soon"}),
            ("flap", {"for": "0s"}),
            ("flap", {"count": 0}),
            ("flap", {"count": 1.5}),
            ("flap", {"count": 1001}),
            ("flap", {"bogus": True}),
        ]
        for action, body in cases:
            code, r = api(base, "/api/v1/devices/0-1/" + action, "POST", body)
            self.assertEqual(code, 400, (action, body, r))
            self.assertTrue(r["error"], r)
        self.assertEqual(m.get_config(source="running").data_xml, before)
        self.assertEqual(oper_status(f.port, IF_OPER_2), 1)
        metrics = subprocess.run(["curl", "-sS", "--max-time", str(h.scaled(10)), base + "/metrics"],
                                 stdout=subprocess.PIPE, timeout=h.scaled(20), check=True).stdout.decode()
        for action in ("set", "notification-rate", "flap"):
            self.assertIn('fleetsim_actions_total{action="%s"} 0' % action, metrics)

    # ------------------------------------------------------------ notification-rate

    def test_notification_rate_changes_what_a_subscriber_receives(self):
        f, base = self.fleet(["--notification-file", ROUTES_1, "--notification-rate", "5"], devices=2)
        m = self.ncc(f, 1)
        m.create_subscription()

        def count(window_s):
            notifications(m, 0.3)  # what was on its way
            return len(notifications(m, window_s / h.multiplier()))

        self.assertEqual(api(base, "/api/v1/devices/1/notification-rate", "POST", {"rate": 0})[1]["failed"], 0)
        paused = count(1.5)
        self.assertEqual(api(base, "/api/v1/devices/1/notification-rate", "POST", {"rate": 50})[0], 200)
        fast = count(1.5)
        self.assertEqual(api(base, "/api/v1/devices/1/notification-rate", "POST", {"rate": None})[0], 200)
        back = count(1.5)
        self.assertEqual(paused, 0, "rate 0 pauses the stream")
        self.assertGreater(fast, 40, "rate 50 for 1.5 s")
        self.assertLess(fast, 110)
        self.assertTrue(3 <= back <= 15, "the group's 5 per second again: %d" % back)
        # A subscriber arriving while a device is paused gets nothing until the rate is set again.
        api(base, "/api/v1/devices/0/notification-rate", "POST", {"rate": 0})
        late = self.ncc(f, 0)
        late.create_subscription()
        self.assertEqual(len(notifications(late, 1)), 0)
        api(base, "/api/v1/devices/0/notification-rate", "POST", {"rate": 20})
        self.assertGreater(len(notifications(late, 1.0)), 5)

    # ------------------------------------------------------------ flap

    def trap_sink(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        s.settimeout(0.2)
        self.addCleanup(s.close)
        return s

    def traps(self, sock, limit_s, want):
        """Datagrams received within @p limit_s, until @p want(list) is true."""
        got = []
        deadline = time.monotonic() + h.scaled(limit_s)
        while time.monotonic() < deadline and not want(got):
            try:
                got.append(sock.recv(65536))
            except socket.timeout:
                pass
        return got

    def test_flap_seen_by_snmpget_a_trap_sink_and_a_subscriber(self):
        sink = self.trap_sink()
        f, base = self.fleet(["--trap-sink", "127.0.0.1:%d" % sink.getsockname()[1]], devices=2)
        m = self.ncc(f, 1)
        m.create_subscription()
        self.assertEqual(oper_status(f.port + 1, IF_OPER_2), 1)
        code, r = api(base, "/api/v1/devices/1/flap", "POST", {"interface": PORT1, "for": "%dms" % (
            2000 * h.multiplier())})
        self.assertEqual((code, r["devices"], r["failed"]), (200, 1, 0), r)
        self.assertEqual(oper_status(f.port + 1, IF_OPER_2), 2, "down during the flap")
        self.assertEqual(oper_status(f.port, IF_OPER_2), 1, "device 0 untouched")
        got = self.traps(sink, 5, lambda g: any(LINK_UP in d for d in g))
        downs = [d for d in got if LINK_DOWN in d]
        ups = [d for d in got if LINK_UP in d]
        self.assertEqual((len(downs), len(ups)), (1, 1), got)
        self.assertLess(got.index(downs[0]), got.index(ups[0]))
        self.assertEqual(oper_status(f.port + 1, IF_OPER_2), 1, "up after")
        events = [x for x in notifications(m, 2, lambda o: sum("if-state-change" in x for x in o) >= 2)
                  if "if-state-change" in x]
        states = [(ET.fromstring(x).findtext(".//{%s}if-name" % IFE_NS),
                   ET.fromstring(x).findtext(".//{%s}oper-status" % IFE_NS)) for x in events]
        self.assertEqual(states, [(PORT1, "down"), (PORT1, "up")])

    def test_flap_count_every_interface_and_unknown_names(self):
        sink = self.trap_sink()
        f, base = self.fleet(["--trap-sink", "127.0.0.1:%d" % sink.getsockname()[1]], devices=2)
        code, r = api(base, "/api/v1/devices/0/flap", "POST", {"interface": PORT0, "for": "200ms", "count": 3})
        self.assertEqual((code, r["failed"]), (200, 0))
        got = self.traps(sink, 5, lambda g: sum(LINK_UP in d for d in g) >= 3)
        self.assertEqual((sum(LINK_DOWN in d for d in got), sum(LINK_UP in d for d in got)), (3, 3))
        # "*": every port whose link is up (the four Ethernet ports, not the loopback).
        api(base, "/api/v1/devices/1/flap", "POST", {"interface": "*", "for": "300ms"})
        got = self.traps(sink, 5, lambda g: sum(LINK_UP in d for d in g) >= 4)
        self.assertEqual((sum(LINK_DOWN in d for d in got), sum(LINK_UP in d for d in got)), (4, 4))
        # Default: one interface drawn.
        api(base, "/api/v1/devices/1/flap", "POST", {"for": "100ms"})
        got = self.traps(sink, 5, lambda g: sum(LINK_UP in d for d in g) >= 1)
        self.assertEqual((sum(LINK_DOWN in d for d in got), sum(LINK_UP in d for d in got)), (1, 1))
        # A name no device has: every device refuses it (the API cannot tell before asking them).
        code, r = api(base, "/api/v1/devices/0-1/flap", "POST", {"interface": "nosuch0"})
        self.assertEqual((code, r["devices"], r["failed"]), (200, 0, 2))
        self.assertEqual(self.traps(sink, 0.5, lambda g: False), [])

    # ------------------------------------------------------------ report and metrics

    def test_the_actions_are_in_the_report_and_counted(self):
        work = tempfile.mkdtemp(prefix="fleetsim-capi-acts-")
        report = os.path.join(work, "report.json")
        f, base = self.fleet(["--report", report], devices=3)
        frag = description_set(PORT0, "r\"q")
        self.assertEqual(api(base, "/api/v1/devices/0-2/set", "POST", {"config": frag})[0], 200)
        self.assertEqual(api(base, "/api/v1/devices/1/set", "POST", {"config": frag, "operation": "replace"})[0],
                         200)
        self.assertEqual(api(base, "/api/v1/devices/1/notification-rate", "POST", {"rate": 2.5})[0], 200)
        self.assertEqual(api(base, "/api/v1/devices/1/notification-rate", "POST", {"rate": None})[0], 200)
        self.assertEqual(api(base, "/api/v1/devices/2/flap", "POST", {"interface": PORT1})[0], 200)
        self.assertEqual(api(base, "/api/v1/devices/2/flap", "POST", {"for": "1s", "count": 2})[0], 200)
        os.kill(f.proc.pid, signal.SIGUSR1)
        self.assertTrue(h.wait_for(lambda: os.path.exists(report), 5), "SIGUSR1 wrote the report")
        with open(report) as r:
            acts = json.load(r)["actions"]
        self.assertEqual([a["action"] for a in acts], ["set", "set", "notification-rate", "notification-rate",
                                                       "flap", "flap"])
        self.assertEqual(acts[0]["parameters"], {"config": frag, "operation": "merge"})
        self.assertEqual((acts[0]["devices"], acts[0]["ranges"]), (3, [[0, 2]]))
        self.assertEqual(acts[1]["parameters"]["operation"], "replace")
        self.assertEqual(acts[2]["parameters"], {"rate": 2.5})
        self.assertEqual(acts[3]["parameters"], {"rate": None})
        self.assertEqual(acts[4]["parameters"], {"interface": PORT1, "for": "2000ms", "count": 1})
        self.assertEqual(acts[5]["parameters"], {"for": "1000ms", "count": 2})
        metrics = subprocess.run(["curl", "-sS", "--max-time", str(h.scaled(10)), base + "/metrics"],
                                 stdout=subprocess.PIPE, timeout=h.scaled(20), check=True).stdout.decode()
        counts = {m.group(1): int(m.group(2))
                  for m in re.finditer(r'^fleetsim_actions_total\{action="([a-z-]+)"\} (\d+)$', metrics, re.M)}
        self.assertEqual((counts["set"], counts["notification-rate"], counts["flap"]), (2, 2, 2))


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2)
