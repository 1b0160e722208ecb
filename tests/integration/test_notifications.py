"""Notifications (RFC 5277): subscriptions, pacing, order, filters, replay, slow readers and the
report, with a raw client, ncclient and the report file.

Run: /usr/bin/python3 test_notifications.py <path to fleetsim>. Loopback only, every wait bounded.
"""

import json
import os
import re
import signal
import socket
import tempfile
import time
import unittest

import fleetsim_harness as h

NOTIF_NS = "urn:ietf:params:xml:ns:netconf:notification:1.0"
SUBSCRIBE = '<create-subscription xmlns="%s">%%s</create-subscription>' % NOTIF_NS
ROUTES_1 = os.path.join(h.SOURCE_DIR, "notifications", "routes-1.xml")
ODL_IFS = os.path.join(h.SOURCE_DIR, "notifications", "odl-interface-events.xml")


def seq_of(msg):
    m = re.search(r"<sequence>(\d+)</sequence>", msg)
    return int(m.group(1)) if m else None


class NotificationTests(unittest.TestCase):
    def fleet(self, extra, devices=2):
        self.report = tempfile.NamedTemporaryFile(suffix=".json", delete=False).name
        self.addCleanup(lambda: os.path.exists(self.report) and os.unlink(self.report))
        f = h.Fleet(devices=devices, extra=list(extra) + ["--report", self.report]).start()
        self.addCleanup(f.stop)
        return f

    def read_report(self, f):
        os.kill(f.proc.pid, signal.SIGUSR1)
        deadline = time.monotonic() + h.scaled(5)
        while time.monotonic() < deadline:
            try:
                with open(self.report) as r:
                    return json.load(r)
            except (OSError, ValueError):
                time.sleep(0.05)
        self.fail("no report after SIGUSR1")

    def collect(self, c, seconds):
        """Notifications received for @seconds (after the ok)."""
        out = []
        saved = c.timeout
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            c.timeout = max(0.01, deadline - time.monotonic())
            try:
                out.append(c.recv_msg())
            except AssertionError:  # nothing more within the time left
                break
        c.timeout = saved
        return out

    def assert_identity(self, row, what):
        # Trap sink rows are ledger rows (issue 29): suppressed_pre_window where notifications say suppressed.
        suppressed = row["suppressed"] if "suppressed" in row else row["suppressed_pre_window"] + row["queued"]
        self.assertEqual(row["emitted"], row["sent"] + row["send_failures"] + row["dropped"] + suppressed,
                         "%s breaks emitted = sent + send_failures + dropped + suppressed: %s" % (what, row))

    def test_capabilities_and_the_netconf_stream(self):
        f = self.fleet([])
        with h.RawClient(f.addr(0)).hello() as c:
            caps = c.server_caps()
            self.assertIn("urn:ietf:params:netconf:capability:notification:1.0", caps)
            self.assertIn("urn:ietf:params:netconf:capability:interleave:1.0", caps)
            reply = c.rpc('<get><filter type="subtree"><netconf xmlns="urn:ietf:params:xml:ns:netmod:notification"/>'
                          '</filter></get>')
            self.assertIn("<name>NETCONF</name>", reply)
            self.assertIn("<replaySupport>true</replaySupport>", reply)

    def test_rate_is_kept_and_every_notification_comes_in_order(self):
        f = self.fleet(["--notification-file", ROUTES_1, "--notification-rate", "200"])
        with h.RawClient(f.addr(1)).hello() as c:
            h.assert_ok(c.rpc(SUBSCRIBE % ""), "create-subscription")
            got = self.collect(c, 2.0)
        seqs = [seq_of(m) for m in got]
        self.assertNotIn(None, seqs)
        self.assertEqual(seqs, list(range(1, len(seqs) + 1)), "per-device sequence without gaps or reordering")
        self.assertGreater(len(got), 2.0 * 200 * 0.9)
        self.assertLess(len(got), 2.0 * 200 * 1.1 + 5)
        stamps = re.findall(r"<eventTime>([^<]+)</eventTime>", got[-1])
        self.assertTrue(stamps and re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", stamps[0]), got[-1])

    def test_a_second_subscription_on_one_session_is_refused(self):
        f = self.fleet(["--notification-file", ROUTES_1, "--notification-rate", "1"])
        with h.RawClient(f.addr(0)).hello() as c:
            h.assert_ok(c.rpc(SUBSCRIBE % ""), "first")
            reply = c.rpc(SUBSCRIBE % "", msg_id="2")
            while "rpc-reply" not in reply:
                reply = c.recv_msg()
            h.assert_error(reply, "operation-failed")

    def test_bad_subscriptions_are_refused(self):
        f = self.fleet(["--notification-file", ROUTES_1, "--notification-rate", "1"])
        with h.RawClient(f.addr(0)).hello() as c:
            h.assert_error(c.rpc(SUBSCRIBE % "<stream>OTHER</stream>"), "invalid-value")
            h.assert_error(c.rpc(SUBSCRIBE % "<stopTime>2026-01-01T00:00:00Z</stopTime>"), "missing-element")
            h.assert_error(c.rpc(SUBSCRIBE % "<startTime>2099-01-01T00:00:00Z</startTime>"), "bad-element")

    def test_xpath_filter_suppresses_and_the_report_adds_up(self):
        f = self.fleet(["--notification-file", os.path.join(h.SOURCE_DIR, "notifications", "interface-events-rate.xml"),
                        "--notification-rate", "100"])
        flt = ('<filter type="xpath" xmlns:ife="urn:fleetsim:if-events" '
               'select="/ife:if-state-change[ife:oper-status=\'down\']"/>')
        with h.RawClient(f.addr(0)).hello() as c:
            h.assert_ok(c.rpc(SUBSCRIBE % flt), "create-subscription")
            got = self.collect(c, 1.0)
            report = self.read_report(f)
        self.assertTrue(got and all("<oper-status>down</oper-status>" in m for m in got), got[:2])
        dev = [d for d in report["devices"] if d["device"] == 0][0]
        sub = dev["subscribers"][0]
        self.assert_identity(sub, "subscriber")
        self.assert_identity(dev["notifications"], "device")
        self.assertGreater(sub["suppressed"], 0)
        self.assertGreaterEqual(sub["sent"], len(got))

    def test_replay_from_the_log_then_replay_complete(self):
        f = self.fleet(["--notification-file", ROUTES_1, "--notification-rate", "20", "--replay-log", "8"])
        with h.RawClient(f.addr(0)).hello() as first:
            h.assert_ok(first.rpc(SUBSCRIBE % ""), "first subscription")
            self.collect(first, 1.0)
            with h.RawClient(f.addr(0)).hello() as second:
                h.assert_ok(second.rpc(SUBSCRIBE % "<startTime>2000-01-01T00:00:00Z</startTime>"), "replay")
                msgs = []
                while not any("replayComplete" in m for m in msgs):
                    msgs.append(second.recv_msg())
                replayed = [seq_of(m) for m in msgs if seq_of(m)]
                self.assertEqual(len(replayed), 8, "the log keeps 8")
                self.assertEqual(replayed, list(range(replayed[0], replayed[0] + 8)))
                live = seq_of(second.recv_msg())
                self.assertGreater(live, replayed[-1], "then the live stream")
            with h.RawClient(f.addr(0)).hello() as third:
                h.assert_ok(third.rpc(SUBSCRIBE % ("<startTime>2000-01-01T00:00:00Z</startTime>"
                                                   "<stopTime>2000-01-02T00:00:00Z</stopTime>")), "bounded replay")
                names = []
                while "notificationComplete" not in "".join(names):
                    names.append(third.recv_msg())
                self.assertTrue(any("replayComplete" in n for n in names))

    def test_odl_file_keeps_order_and_sends_exactly_times(self):
        f = self.fleet(["--notification-file", ODL_IFS, "--notification-rate", "50"])
        import xml.etree.ElementTree as ET
        entries = ET.parse(ODL_IFS).getroot().findall("notification")
        want = sum(int(e.findtext("times")) for e in entries)
        with h.RawClient(f.addr(0)).hello() as c:
            h.assert_ok(c.rpc(SUBSCRIBE % ""), "create-subscription")
            got = self.collect(c, want / 50.0 + 1.0)
        self.assertEqual(len(got), want, "exactly the sum of times, then silence")
        self.assertTrue(all("<eventTime>XXXX" not in m for m in got), "eventTime filled in")

    def test_a_reader_that_stops_reading_has_its_drops_counted(self):
        with open(os.path.join(h.SOURCE_DIR, "notifications", "routes-100.xml")) as src:
            unbounded = re.sub(r"<count>\d+</count>", "", src.read())
        path = os.path.join(tempfile.mkdtemp(prefix="fleetsim-notif-"), "routes-100-unbounded.xml")
        with open(path, "w") as dst:
            dst.write(unbounded)
        f = self.fleet(["--notification-file", path, "--notification-rate", "20000"])
        slow = socket.create_connection(f.addr(0), timeout=5)
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        slow.sendall((h.client_hello(caps=(h.BASE10,)) + "]]>]]>").encode())
        slow.sendall(('<rpc xmlns="urn:ietf:params:xml:ns:netconf:base:1.0" message-id="1">%s</rpc>]]>]]>'
                      % (SUBSCRIBE % "")).encode())
        time.sleep(3.0)  # never read
        with h.RawClient(f.addr(0)).hello() as other:
            h.assert_data(other.get_config(), "the device keeps serving")
            report = self.read_report(f)
        slow.close()
        sub = [d for d in report["devices"] if d["device"] == 0][0]["subscribers"][0]
        self.assert_identity(sub, "slow subscriber")
        self.assertGreater(sub["dropped"], 0, sub)

    def test_flaps_reach_snmptrapd_subscribers_and_the_snmp_view(self):
        import subprocess
        work = tempfile.mkdtemp(prefix="fleetsim-traps-")
        port, trap_log_path = h.start_snmptrapd(self, work)
        f = self.fleet(["--flap-rate", "1", "--trap-sink", "127.0.0.1:%d" % port, "--trap-inform", "true"],
                       devices=4)
        with h.RawClient(f.addr(0)).hello() as c:
            h.assert_ok(c.rpc(SUBSCRIBE % ""), "create-subscription")
            c.timeout = h.scaled(10)
            event = c.recv_msg()
            self.assertIn("<if-state-change", event)
            index = int(re.search(r"<if-index>(\d+)</if-index>", event).group(1))
            oper = re.search(r"<oper-status>(\w+)</oper-status>", event).group(1)
            snmp_oper = subprocess.run(["snmpget", "-v2c", "-c", "public", "-On", "-Oqv", "-t", "1",
                                        "127.0.0.1:%d" % f.port, "1.3.6.1.2.1.2.2.1.8.%d" % index],
                                       capture_output=True, text=True, timeout=10).stdout.strip()
            later = self.collect(c, 0.05)
            if not any("<if-index>%d</if-index>" % index in m for m in later):
                self.assertEqual(snmp_oper, "1" if oper == "up" else "2", "ifOperStatus follows the flap")
        time.sleep(2.0)
        report = self.read_report(f)
        with open(trap_log_path) as o:
            trap_log = o.read()
        self.assertRegex(trap_log, r"\.1\.3\.6\.1\.6\.3\.1\.1\.5\.[34]")
        rows = [t for d in report["devices"] for t in d["trap_sinks"]]
        self.assertTrue(rows)
        for t in rows:
            self.assert_identity(t, "trap sink row")
        self.assertGreater(sum(t["acknowledged"] for t in rows), 0, "snmptrapd acknowledges the informs")

    def test_stress_notify_against_fleetsim_reconciles(self):
        import subprocess
        stress = os.path.join(os.path.dirname(h.BINARY), "fleetsim-stress")
        f = self.fleet(["--notification-file", ROUTES_1, "--notification-rate", "400"], devices=5)
        received = tempfile.NamedTemporaryFile(suffix=".json", delete=False).name
        self.addCleanup(os.unlink, received)
        p = subprocess.run([stress, "notify", "--port", str(f.port), "--device-count", "5", "--count", "1000",
                            "--seq-element", "sequence", "--json", received], capture_output=True, text=True,
                           timeout=h.scaled(60))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertRegex(p.stdout, r"Notifications per second: [\d.]+")
        self.read_report(f)
        r = subprocess.run([stress, "reconcile", "--sent", self.report, "--received", received],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(len(re.findall(r"^OK\s", r.stdout, re.M)), 5, r.stdout)
        # A report that claims more than arrived is caught.
        with open(self.report) as src:
            doctored = json.load(src)
        for d in doctored["devices"]:
            for sub in d["subscribers"]:
                if d["device"] == 2:
                    sub["sent"] += 7
                    sub["emitted"] += 7
        with open(self.report, "w") as dst:
            json.dump(doctored, dst)
        r = subprocess.run([stress, "reconcile", "--sent", self.report, "--received", received],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("LOSS", r.stdout)

    def test_report_without_a_stream_lists_every_device_with_zero_counts(self):
        import subprocess
        f = self.fleet([], devices=3)
        report = self.read_report(f)
        devices = sorted(report["devices"], key=lambda d: d["device"])
        self.assertEqual([d["device"] for d in devices], [0, 1, 2], report)
        for i, d in enumerate(devices):
            self.assertEqual((d["address"], d["port"]), ("127.0.0.1", f.port + i), d)
            self.assertEqual(d["notifications"], {"emitted": 0, "sent": 0, "send_failures": 0, "dropped": 0,
                                                  "suppressed": 0}, d)
            self.assertEqual((d["generated"], d["behind"], d["subscribers"], d["trap_sinks"]), (0, 0, [], []), d)
        # fleetsim-stress reconcile reads it: nothing sent, nothing received, every device OK.
        stress = os.path.join(os.path.dirname(h.BINARY), "fleetsim-stress")
        received = tempfile.NamedTemporaryFile(suffix=".json", delete=False, mode="w")
        self.addCleanup(os.unlink, received.name)
        received.write('{"devices":[]}')
        received.close()
        r = subprocess.run([stress, "reconcile", "--sent", self.report, "--received", received.name],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(len(re.findall(r"^OK\s", r.stdout, re.M)), 3, r.stdout)

    def test_an_edit_sends_netconf_config_change(self):
        f = self.fleet([])
        with h.RawClient(f.addr(0)).hello() as listener, h.RawClient(f.addr(0)).hello() as editor:
            h.assert_ok(listener.rpc(SUBSCRIBE % ""), "create-subscription")
            h.assert_ok(editor.edit_config(h.iface("cc-1")), "edit-config")
            event = listener.recv_msg()
            self.assertIn("<netconf-config-change", event)
            self.assertIn("<datastore>running</datastore>", event)

    def test_sigusr2_pauses_and_resumes_every_stream_without_a_burst(self):
        f = self.fleet(["--notification-file", ROUTES_1, "--notification-rate", "100"])
        with h.RawClient(f.addr(0)).hello() as c:
            h.assert_ok(c.rpc(SUBSCRIBE % ""), "create-subscription")
            running = self.collect(c, 0.5)
            os.kill(f.proc.pid, signal.SIGUSR2)
            self.collect(c, 0.3)  # what was already on its way
            paused = self.collect(c, 1.0)
            os.kill(f.proc.pid, signal.SIGUSR2)
            resumed = self.collect(c, 1.0)
        self.assertGreater(len(running), 20)
        self.assertEqual(paused, [], "nothing while paused")
        self.assertGreater(len(resumed), 70)
        self.assertLess(len(resumed), 130, "no burst making up for the pause")
        seqs = [seq_of(m) for m in running + resumed]
        self.assertEqual(seqs, sorted(seqs))

    def test_ncclient_receives_notifications(self):
        import test_ncclient as ncc
        f = self.fleet(["--notification-file", ROUTES_1, "--notification-rate", "50"])
        m = ncc.tcp_manager(f.addr(0))
        try:
            m.create_subscription()
            seqs = []
            deadline = time.monotonic() + h.scaled(5)
            while len(seqs) < 10 and time.monotonic() < deadline:
                n = m.take_notification(block=True, timeout=1)
                if n is not None:
                    seqs.append(seq_of(n.notification_xml))
            self.assertEqual(seqs, list(range(1, 11)))
        finally:
            m.close_session()


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2)
