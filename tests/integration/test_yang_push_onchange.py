"""YANG-Push on-change subscriptions (RFC 8641) seen by ncclient (issue 31): establish-subscription sent
with dispatch, updates read with take_notification; and by libnetconf2's client (yp_nc2_client.c,
nc_rpc_establishpush_onchange). A sync-on-start push-update comes first; every change
of the device's data reaches the subscriber as a push-change-update whose yang-patch names the changed
node exactly: an edit-config from another session (replace, create, delete), the control API's set, an
SNMP SET (net-snmp's snmpset), a flap (oper-status on operational); a reboot ends the subscription
and a new one syncs to startup; a subscriber that stops reading is suspended, resumed, and then gets
one patch of what it missed. On-change over counters is refused with on-change-unsupported; a
dampening period folds several edits into one update; an excluded create is not sent.

Run: /usr/bin/python3 test_yang_push_onchange.py <path to fleetsim> [<path to yp_nc2_client>]. Loopback only, every wait bounded.
"""

import os
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse
import warnings
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402
from test_control_api import api  # noqa: E402

from ncclient import manager  # noqa: E402
from ncclient.operations.rpc import RPCError  # noqa: E402
from ncclient.xml_ import to_ele  # noqa: E402

warnings.simplefilter("default")
warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"ncclient(\.|$)")

SN_NS = "urn:ietf:params:xml:ns:yang:ietf-subscribed-notifications"
YP_NS = "urn:ietf:params:xml:ns:yang:ietf-yang-push"
DS_NS = "urn:ietf:params:xml:ns:yang:ietf-datastores"
IF_NS = h.IF_NS
PORT0 = h.profile_interface_names()[0]
PORT1 = h.profile_interface_names()[1]
NC2_CLIENT = None  # tests/integration/yp_nc2_client.c, libnetconf2's subscriber: second argument
IF_ALIAS_1 = "1.3.6.1.2.1.31.1.1.1.18.1"  # IF-MIB ifAlias of ifIndex 1: PORT0's description
IFACE_TYPE = '<type xmlns:ianaift="urn:ietf:params:xml:ns:yang:iana-if-type">ianaift:ethernetCsmacd</type>'


def target_of(name, *rest):
    """The RFC 8040 target of interface @p name (key percent-encoded) and the nodes below it."""
    return "/".join(["/ietf-interfaces:interfaces", "interface=" + urllib.parse.quote(name, safe="")] + list(rest))


def establish(m, datastore="running", subtree=None, xpath=None, dampening_cs=0, sync=True, excluded=()):
    """establish-subscription of an on-change subscription; its id (RPCError when refused)."""
    reply = m.dispatch(to_ele(establish_xml(datastore, subtree, xpath, dampening_cs, sync, excluded)))
    sub_id = ET.fromstring(reply.xml).findtext("{%s}id" % SN_NS)
    if sub_id is None:
        raise AssertionError("establish-subscription answered no id:\n%s" % reply.xml)
    return int(sub_id)


def establish_xml(datastore="running", subtree=None, xpath=None, dampening_cs=0, sync=True, excluded=()):
    """The establish-subscription element of an on-change subscription."""
    filt = ""
    if subtree is not None:
        filt = "<yp:datastore-subtree-filter>%s</yp:datastore-subtree-filter>" % subtree
    elif xpath is not None:
        filt = '<yp:datastore-xpath-filter xmlns:if="%s">%s</yp:datastore-xpath-filter>' % (IF_NS, xpath)
    rpc = ('<establish-subscription xmlns="%s" xmlns:yp="%s">'
           '<yp:datastore xmlns:ds="%s">ds:%s</yp:datastore>%s'
           "<yp:on-change><yp:dampening-period>%d</yp:dampening-period><yp:sync-on-start>%s</yp:sync-on-start>"
           "%s</yp:on-change></establish-subscription>"
           % (SN_NS, YP_NS, DS_NS, datastore, filt, dampening_cs, "true" if sync else "false",
              "".join("<yp:excluded-change>%s</yp:excluded-change>" % e for e in excluded)))
    return rpc


def take(m, limit_s, count=1):
    """Up to @p count notifications (ElementTree roots) received within @p limit_s."""
    out = []
    deadline = time.monotonic() + h.scaled(limit_s)
    while len(out) < count and time.monotonic() < deadline:
        n = m.take_notification(block=True, timeout=0.1)
        if n is not None:
            out.append(ET.fromstring(n.notification_xml))
    return out


def change_update(m, limit_s=5):
    """The next push-change-update's edits [(operation, target, value element or None)] and its id."""
    for root in take(m, limit_s):
        pcu = root.find("{%s}push-change-update" % YP_NS)
        if pcu is None:
            raise AssertionError("expected a push-change-update, got:\n%s" % ET.tostring(root).decode())
        edits = []
        for e in pcu.iter("{%s}edit" % YP_NS):
            value = e.find("{%s}value" % YP_NS)
            edits.append((e.findtext("{%s}operation" % YP_NS), e.findtext("{%s}target" % YP_NS),
                          value[0] if value is not None and len(value) else None))
        return edits, int(pcu.findtext("{%s}id" % YP_NS))
    raise AssertionError("no push-change-update within %s s" % limit_s)


class OnChangeTests(unittest.TestCase):
    def fleet(self, devices=1):
        f, base = h.start_with_metrics(devices, ["--ssh", "true"], True, 8)
        self.addCleanup(f.stop)
        return f, base

    def ncc(self, f, i=0):
        host, port = f.addr(i)
        m = manager.connect(host=host, port=port, username="admin", password="admin", hostkey_verify=False,
                            allow_agent=False, look_for_keys=False, timeout=h.scaled(10))
        self.addCleanup(lambda: m.connected and m.close_session())
        return m

    def edit(self, m, entry, op=None):
        """edit-config of one interface: @p entry is (name, XML inside it)."""
        m.edit_config(target="running", config='<config xmlns="%s">%s</config>' % (h.NC_NS, h.iface(*entry, op=op)))

    def test_sync_on_start_then_edits_from_another_session_are_exact_edits(self):
        f, _ = self.fleet()
        m, other = self.ncc(f), self.ncc(f)
        self.edit(other, (PORT0, "<description>first</description>"))
        sub_id = establish(m, subtree='<interfaces xmlns="%s"/>' % IF_NS)
        got = take(m, 5)
        self.assertEqual(len(got), 1, "a push-update first (sync-on-start)")
        pu = got[0].find("{%s}push-update" % YP_NS)
        self.assertIsNotNone(pu, ET.tostring(got[0]).decode())
        self.assertEqual(int(pu.findtext("{%s}id" % YP_NS)), sub_id)
        names = [n.text for n in pu.iter("{%s}name" % IF_NS)]
        self.assertIn(PORT0, names)
        self.assertIn("first", [d.text for d in pu.iter("{%s}description" % IF_NS)])

        # A leaf changed by another session: one replace, target exact, the new value.
        self.edit(other, (PORT0, "<description>second</description>"))
        edits, got_id = change_update(m)
        self.assertEqual(got_id, sub_id)
        self.assertEqual([(op, t) for op, t, _ in edits], [("replace", target_of(PORT0, "description"))])
        self.assertEqual(edits[0][2].tag, "{%s}description" % IF_NS)
        self.assertEqual(edits[0][2].text, "second")

        # A new list entry: one create with the whole entry; its removal: one delete without value.
        self.edit(other, ("yp-new 1", IFACE_TYPE + "<description>n</description>"))
        edits, _ = change_update(m)
        self.assertEqual([(op, t) for op, t, _ in edits], [("create", target_of("yp-new 1"))])
        entry = edits[0][2]
        self.assertEqual((entry.tag, entry.findtext("{%s}name" % IF_NS), entry.findtext("{%s}description" % IF_NS)),
                         ("{%s}interface" % IF_NS, "yp-new 1", "n"))
        self.edit(other, ("yp-new 1", ""), op="delete")
        edits, _ = change_update(m)
        self.assertEqual(edits, [("delete", target_of("yp-new 1"), None)])
        # An edit that changes nothing selected sends nothing.
        self.edit(other, (PORT0, "<description>second</description>"))
        self.assertEqual(take(m, 1), [])

    def test_control_api_set_and_a_flap_reach_the_subscribers(self):
        f, base = self.fleet()
        m, oper = self.ncc(f), self.ncc(f)
        establish(m, subtree='<interfaces xmlns="%s"/>' % IF_NS, sync=False)
        establish(oper, datastore="operational", xpath="/if:interfaces/if:interface/if:oper-status", sync=False)
        code, r = api(base, "/api/v1/devices/0/set", "POST",
                      {"config": '<interfaces xmlns="%s"><interface><name>%s</name><description>by-set'
                                 '</description></interface></interfaces>' % (IF_NS, PORT0)})
        self.assertEqual((code, r["failed"]), (200, 0), r)
        edits, _ = change_update(m)
        self.assertEqual(len(edits), 1, edits)
        self.assertIn(edits[0][0], ("create", "replace"))
        self.assertEqual(edits[0][1], target_of(PORT0, "description"))
        self.assertEqual(edits[0][2].text, "by-set")
        self.assertEqual(take(oper, 1), [], "a description is not in the oper-status selection")

        code, r = api(base, "/api/v1/devices/0/flap", "POST", {"interface": PORT1, "for": "500ms"})
        self.assertEqual(code, 200, r)
        for want in ("down", "up"):
            edits, _ = change_update(oper)
            self.assertEqual([(op, t) for op, t, _ in edits], [("replace", target_of(PORT1, "oper-status"))])
            self.assertEqual(edits[0][2].text, want)
        self.assertEqual(take(m, 0.5), [], "running did not change")

    def test_an_snmp_set_reaches_the_subscriber(self):
        f, _ = self.fleet()
        m = self.ncc(f)
        establish(m, subtree='<interfaces xmlns="%s"/>' % IF_NS, sync=False)
        out = subprocess.run(["snmpset", "-v2c", "-c", "private", "-On", "-t", "1", "-r", "0",
                              "127.0.0.1:%d" % f.port, IF_ALIAS_1, "s", "by-snmp"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, timeout=h.scaled(10), env=dict(os.environ, MIBS=""))
        self.assertEqual(out.returncode, 0, out.stdout)
        edits, _ = change_update(m)
        self.assertEqual(len(edits), 1, edits)
        self.assertIn(edits[0][0], ("create", "replace"))
        self.assertEqual((edits[0][1], edits[0][2].text), (target_of(PORT0, "description"), "by-snmp"))

    def test_a_reboot_ends_the_subscription_and_a_new_one_syncs_to_startup(self):
        f, base = self.fleet()
        m, other = self.ncc(f), self.ncc(f)
        establish(m, subtree='<interfaces xmlns="%s"/>' % IF_NS, sync=False)
        self.edit(other, (PORT0, "<description>before-reboot</description>"))
        self.assertEqual(change_update(m)[0][0][2].text, "before-reboot")
        code, r = api(base, "/api/v1/devices/0/reboot", "POST", {"for": "0s"})
        self.assertEqual(code, 200, r)
        h.wait_for(lambda: not m.connected, 5, "the subscriber's session to end with the reboot")

        def connect():
            try:
                return self.ncc(f)
            except Exception:  # noqa: BLE001 - refused while it boots
                return None

        again = h.wait_for(connect, 10, "the device to accept sessions after the reboot")
        establish(again, subtree='<interfaces xmlns="%s"/>' % IF_NS)
        got = take(again, 5)
        self.assertEqual(len(got), 1)
        pu = got[0].find("{%s}push-update" % YP_NS)
        self.assertIsNotNone(pu, ET.tostring(got[0]).decode())
        self.assertIn(PORT0, [n.text for n in pu.iter("{%s}name" % IF_NS)])
        self.assertNotIn("before-reboot", [d.text for d in pu.iter("{%s}description" % IF_NS)],
                         "running is startup again")

    def test_a_slow_subscriber_is_suspended_then_resumed_with_what_it_missed(self):
        with h.Fleet(devices=1, threads=1) as f:
            sub = h.RawClient(f.addr(0)).hello()
            editor = h.RawClient(f.addr(0)).hello()
            self.addCleanup(sub.close)
            self.addCleanup(editor.close)
            sub.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
            reply = sub.rpc(establish_xml(subtree='<interfaces xmlns="%s"/>' % IF_NS, sync=False))
            self.assertIn("<id", reply)
            # 300 updates of ~60 KB while the subscriber reads nothing: far above the 1 MiB a session's
            # output may hold plus what the kernel buffers.
            filler, last = "x" * 60000, 299
            for i in range(last + 1):
                h.assert_ok(editor.edit_config(h.iface(PORT0, "<description>%s%d</description>" % (filler, i))))
            kinds, after_resume = [], None
            deadline = time.monotonic() + h.scaled(30)
            sub.sock.settimeout(h.scaled(5))
            while after_resume is None and time.monotonic() < deadline:
                root = ET.fromstring(sub.recv_msg())
                kind = root[1].tag.rsplit("}", 1)[-1] if len(root) > 1 else root.tag
                kinds.append(kind)
                if kind == "subscription-suspended":
                    self.assertIn("insufficient-resources", ET.tostring(root).decode())
                if kind == "push-change-update" and "subscription-resumed" in kinds:
                    after_resume = root
            self.assertIn("subscription-suspended", kinds)
            self.assertIn("subscription-resumed", kinds)
            self.assertLess(kinds.index("subscription-suspended"), kinds.index("subscription-resumed"))
            self.assertLess(kinds.count("push-change-update"), last + 1, "updates were held back")
            self.assertIsNotNone(after_resume, "an update after the resumption")
            values = [v.text for v in after_resume.iter("{%s}description" % IF_NS)]
            self.assertEqual(values, [filler + str(last)], "one patch with the last value")

    def test_libnetconf2_on_change_subscriber_sees_sync_then_each_edit(self):
        if not NC2_CLIENT:
            self.skipTest("run with the yp_nc2_client path as the second argument")
        f, _ = self.fleet()
        other = self.ncc(f)
        host, port = f.addr(0)
        err = tempfile.TemporaryFile(mode="w+")
        self.addCleanup(err.close)
        proc = subprocess.Popen([NC2_CLIENT, "--host", host, "--port", str(port), "--datastore",
                                 "ietf-datastores:running", "--on-change", "--xpath", "/ietf-interfaces:interfaces",
                                 "--count", "3", "--duration", str(h.scaled(15))],
                                stdout=subprocess.PIPE, stderr=err, text=True)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        lines = []
        while not lines or not lines[-1].startswith(("established", "rpc-error", "done")):
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line.strip())
        self.assertTrue(lines and lines[-1].startswith("established"), lines)
        for text in ("nc2-a", "nc2-b"):
            self.edit(other, (PORT0, "<description>%s</description>" % text))
        lines += proc.stdout.read().splitlines()  # until it exits: three notifications, or its duration
        proc.wait(timeout=h.scaled(20))
        err.seek(0)
        self.assertEqual(proc.returncode, 0, (lines, err.read()))
        sub_id = [ln.split()[1] for ln in lines if ln.startswith("established ")][0]
        notes = [ln.split()[1:3] for ln in lines if ln.startswith("notification ")]
        self.assertEqual(notes, [["ietf-yang-push:push-update", "id=" + sub_id],
                                 ["ietf-yang-push:push-change-update", "id=" + sub_id],
                                 ["ietf-yang-push:push-change-update", "id=" + sub_id]], lines)

    def test_on_change_over_counters_is_refused_by_name(self):
        f, _ = self.fleet()
        m = self.ncc(f)
        # The message names the first moving leaf: a counter of the statistics, or (everything selected)
        # whichever module's comes first, e.g. ietf-netconf-monitoring's in-rpcs.
        for kw, named in (({"xpath": "/if:interfaces/if:interface/if:statistics"}, "/interface/statistics/"),
                          ({"subtree": '<interfaces xmlns="%s"><interface><statistics/></interface></interfaces>'
                                       % IF_NS}, "/interface/statistics/"),
                          ({}, " /")):
            with self.assertRaises(RPCError) as ctx:
                establish(m, datastore="operational", **kw)
            self.assertEqual(ctx.exception.app_tag, "ietf-yang-push:on-change-unsupported", ctx.exception.xml)
            self.assertIn(named, ctx.exception.message or "")
        # The same subtree on running (configuration: nothing moves), and oper-status alone, are fine.
        establish(m, datastore="running", xpath="/if:interfaces", sync=False)
        establish(m, datastore="operational", xpath="/if:interfaces/if:interface/if:oper-status", sync=False)

    def test_dampening_folds_edits_into_one_update(self):
        f, _ = self.fleet()
        m, other = self.ncc(f), self.ncc(f)
        establish(m, subtree='<interfaces xmlns="%s"/>' % IF_NS, dampening_cs=100, sync=False)
        self.edit(other, (PORT0, "<description>d1</description>"))
        edits, _ = change_update(m)
        self.assertEqual(edits[0][2].text, "d1", "the first change goes out at once")
        t_first = time.monotonic()
        for text in ("d2", "d3", "d4"):
            self.edit(other, (PORT0, "<description>%s</description>" % text))
        self.assertLess(time.monotonic() - t_first, 0.8, "the edits fell inside the period")
        edits, _ = change_update(m, 3)
        waited = time.monotonic() - t_first
        self.assertEqual([(op, t, v.text) for op, t, v in edits], [("replace", target_of(PORT0, "description"), "d4")])
        self.assertGreater(waited, 0.9, "held until the 1 s period ended")
        self.assertEqual(take(m, 1.5), [], "one update for the three edits")

    def test_excluded_create_is_not_sent(self):
        f, _ = self.fleet()
        m, other = self.ncc(f), self.ncc(f)
        establish(m, subtree='<interfaces xmlns="%s"/>' % IF_NS, sync=False, excluded=("create",))
        self.edit(other, ("yp-x", IFACE_TYPE))
        self.assertEqual(take(m, 1), [], "the create is excluded")
        self.edit(other, ("yp-x", "<enabled>false</enabled>"))
        self.assertEqual(take(m, 1), [], "a leaf set for the first time is a create too")
        self.edit(other, ("yp-x", "<enabled>true</enabled>"))
        edits, _ = change_update(m)
        self.assertEqual([(op, t) for op, t, _ in edits], [("replace", target_of("yp-x", "enabled"))])
        self.edit(other, ("yp-x", ""), op="delete")
        edits, _ = change_update(m)
        self.assertEqual(edits, [("delete", target_of("yp-x"), None)])


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    if len(sys.argv) > 1 and os.access(sys.argv[1], os.X_OK) and not sys.argv[1].startswith("-"):
        NC2_CLIENT = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
