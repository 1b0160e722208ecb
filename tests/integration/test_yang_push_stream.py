"""Stream subscriptions (RFC 8639 over NETCONF, RFC 8640; issue 31): establish-subscription to the NETCONF
stream with ncclient (dispatch, take_notification), filters, replay then replay-completed, stop-time then
subscription-completed, two subscriptions on one session, and the report's per-subscription rows, which
must equal what the client counted.

Run: /usr/bin/python3 test_yang_push_stream.py <path to fleetsim>. Loopback only, every wait bounded.
"""

import calendar
import json
import os
import re
import signal
import tempfile
import time
import unittest
import urllib.request

from ncclient import manager
from ncclient.operations.rpc import RPCError
from ncclient.xml_ import to_ele

import fleetsim_harness as h

SN_NS = "urn:ietf:params:xml:ns:yang:ietf-subscribed-notifications"
IF_EVENTS = os.path.join(h.SOURCE_DIR, "notifications", "interface-events-rate.xml")
ROUTES_1 = os.path.join(h.SOURCE_DIR, "notifications", "routes-1.xml")
DOWN_ONLY = "/ife:if-state-change[ife:oper-status='down']"
UP_ONLY = "/ife:if-state-change[ife:oper-status='up']"


def establish(inner):
    return to_ele('<establish-subscription xmlns="%s"><stream>NETCONF</stream>%s</establish-subscription>'
                  % (SN_NS, inner))


def xpath_filter(expr):
    return ('<stream-xpath-filter xmlns:ife="urn:fleetsim:if-events">%s</stream-xpath-filter>'
            % expr.replace("'", "&apos;"))


def sub_id(reply):
    m = re.search(r"<(?:\w+:)?id[^>]*>(\d+)</(?:\w+:)?id>", reply.xml)
    if not m:
        raise AssertionError("no id in the reply: %s" % reply.xml)
    return int(m.group(1))


def event_ms(xml):
    """eventTime of a notification, ms since the epoch (the fleet writes UTC with milliseconds)."""
    m = re.search(r"<eventTime>(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.(\d{3})Z</eventTime>", xml)
    if not m:
        raise AssertionError("no eventTime: %s" % xml[:300])
    return calendar.timegm(time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S")) * 1000 + int(m.group(2))


def ms_text(ms):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + ".%03dZ" % (ms % 1000)


def seq_of(xml):
    m = re.search(r"<sequence>(\d+)</sequence>", xml)
    return int(m.group(1)) if m else None


def is_state(xml, name):
    return ("<%s " % name) in xml or ("<%s>" % name) in xml


class StreamSubscriptionTests(unittest.TestCase):
    def fleet(self, extra, devices=1, ssh=True):
        self.report = os.path.join(tempfile.mkdtemp(), "report.json")
        f = h.Fleet(devices=devices, extra=["--ssh", "true" if ssh else "false", "--report", self.report]
                    + list(extra)).start()
        self.addCleanup(f.stop)
        return f

    def ncc(self, f, i=0):
        host, port = f.addr(i)
        m = manager.connect(host=host, port=port, username="admin", password="admin", hostkey_verify=False,
                            allow_agent=False, look_for_keys=False, timeout=h.scaled(10))
        self.addCleanup(lambda: m.connected and m.close_session())
        return m

    def read_report(self, f):
        if os.path.exists(self.report):
            os.unlink(self.report)
        os.kill(f.proc.pid, signal.SIGUSR1)
        deadline = time.monotonic() + h.scaled(5)
        while time.monotonic() < deadline:
            try:
                with open(self.report) as r:
                    return json.load(r)
            except (OSError, ValueError):
                time.sleep(0.05)
        self.fail("no report after SIGUSR1")

    @staticmethod
    def take(m, seconds, until=None):
        """Notifications (their XML) for @seconds, or until @until(xml) is true for one (included)."""
        out = []
        deadline = time.monotonic() + h.scaled(seconds)
        while time.monotonic() < deadline:
            n = m.take_notification(block=True, timeout=0.1)
            if n is None:
                continue
            out.append(n.notification_xml)
            if until and until(out[-1]):
                break
        return out

    @staticmethod
    def drain(m):
        """What is already queued: a reply arrives after every notification sent before it."""
        out = []
        while True:
            n = m.take_notification(block=False)
            if n is None:
                return out
            out.append(n.notification_xml)

    def device_row(self, report, dev=0):
        return [d for d in report["devices"] if d["device"] == dev][0]

    def sub_row(self, report, sid, dev=0):
        rows = [r for r in self.device_row(report, dev)["subscriptions"] if r["id"] == sid]
        self.assertEqual(len(rows), 1, "one row for subscription %d: %s" % (sid, rows))
        return rows[0]

    def assert_identity(self, row, what):
        self.assertEqual(row["emitted"], row["sent"] + row["send_failures"] + row["dropped"] + row["suppressed"],
                         "%s breaks emitted = sent + send_failures + dropped + suppressed: %s" % (what, row))

    def test_xpath_filter_passes_only_its_events_and_the_row_equals_what_arrived(self):
        f = self.fleet(["--notification-file", IF_EVENTS, "--notification-rate", "100"])
        m = self.ncc(f)
        sid = sub_id(m.dispatch(establish(xpath_filter(DOWN_ONLY))))
        got = self.take(m, 1.5)
        live = self.read_report(f)
        row = self.sub_row(live, sid)
        self.assertEqual((row["kind"], row["target"], row.get("ended")), ("stream", "NETCONF", None), row)
        m.dispatch(to_ele('<delete-subscription xmlns="%s"><id>%d</id></delete-subscription>' % (SN_NS, sid)))
        got += self.drain(m)
        self.assertGreater(len(got), 50, "about 100 a second, half of them down")
        self.assertTrue(all("<oper-status>down</oper-status>" in x for x in got),
                        [x for x in got if "<oper-status>down" not in x][:1])
        report = self.read_report(f)
        row = self.sub_row(report, sid)
        self.assertTrue(row["ended"], row)
        self.assertEqual(row["events"], len(got), "the row counts what was queued, the client what arrived")
        self.assertGreater(row["suppressed"], 0, "the up events were left out")
        self.assertEqual(row["updates"] + row["change_updates"] + row["missed_slots"] + row["suspensions"], 0)
        dev = self.device_row(report)
        self.assert_identity(dev["notifications"], "device")
        self.assertEqual(dev["netconf_ledger"]["sent"], len(got), "the ledger counts the stream subscriber")
        # The stream pauses when its last subscriber left: nothing more is generated.
        time.sleep(0.5)
        self.assertEqual(self.device_row(self.read_report(f))["generated"], dev["generated"])

    def test_two_stream_subscriptions_on_one_session_both_get_their_events(self):
        f = self.fleet(["--notification-file", IF_EVENTS, "--notification-rate", "100"])
        m = self.ncc(f)
        down = sub_id(m.dispatch(establish(xpath_filter(DOWN_ONLY))))
        up = sub_id(m.dispatch(establish(xpath_filter(UP_ONLY))))
        self.assertNotEqual(down, up)
        got = self.take(m, 1.5)
        for sid in (down, up):
            m.dispatch(to_ele('<delete-subscription xmlns="%s"><id>%d</id></delete-subscription>' % (SN_NS, sid)))
        got += self.drain(m)
        downs = sum("<oper-status>down</oper-status>" in x for x in got)
        ups = sum("<oper-status>up</oper-status>" in x for x in got)
        self.assertEqual(downs + ups, len(got))
        self.assertGreater(downs, 20)
        self.assertGreater(ups, 20)
        report = self.read_report(f)
        self.assertEqual(self.sub_row(report, down)["events"], downs)
        self.assertEqual(self.sub_row(report, up)["events"], ups)
        self.assert_identity(self.device_row(report)["notifications"], "device")

    def test_replay_sends_the_log_then_replay_completed_then_the_live_stream(self):
        f = self.fleet(["--notification-file", ROUTES_1, "--notification-rate", "20", "--replay-log", "8"])
        first = self.ncc(f)
        sub_id(first.dispatch(establish("")))  # starts the device's stream
        self.take(first, 1.0)
        m = self.ncc(f)
        sid = sub_id(m.dispatch(establish("<replay-start-time>2000-01-01T00:00:00Z</replay-start-time>")))
        msgs = self.take(m, 5, until=lambda x: is_state(x, "replay-completed"))
        self.assertTrue(msgs and is_state(msgs[-1], "replay-completed"), msgs[-1:])
        self.assertIn("<id>%d</id>" % sid, msgs[-1])
        replayed = [seq_of(x) for x in msgs[:-1]]
        self.assertEqual(len(replayed), 8, "the log keeps 8")
        self.assertEqual(replayed, list(range(replayed[0], replayed[0] + 8)))
        live = self.take(m, 5, until=lambda x: seq_of(x) is not None)
        self.assertEqual(seq_of(live[-1]), replayed[-1] + 1, "the live stream goes on where the log ended")
        m.dispatch(to_ele('<delete-subscription xmlns="%s"><id>%d</id></delete-subscription>' % (SN_NS, sid)))
        events = len(replayed) + len(live) + len(self.drain(m))
        self.assertEqual(self.sub_row(self.read_report(f), sid)["events"], events, "replayed and live events")

    def test_an_rfc5277_and_a_stream_subscriber_get_the_same_events_in_order(self):
        f = self.fleet(["--notification-file", ROUTES_1, "--notification-rate", "50"], ssh=False)
        with h.RawClient(f.addr(0)).hello() as old, h.RawClient(f.addr(0)).hello() as new:
            h.assert_ok(old.rpc('<create-subscription xmlns="urn:ietf:params:xml:ns:netconf:notification:1.0"/>'),
                        "create-subscription")
            reply = new.rpc('<establish-subscription xmlns="%s"><stream>NETCONF</stream></establish-subscription>'
                            % SN_NS)
            self.assertRegex(reply, r"<id[^>]*>\d+</id>")
            seqs_new = [seq_of(new.recv_msg()) for _ in range(20)]
            seqs_old = []
            while not seqs_old or seqs_old[-1] < seqs_new[-1]:
                seqs_old.append(seq_of(old.recv_msg()))
        self.assertEqual(seqs_new, list(range(seqs_new[0], seqs_new[0] + 20)), "in order, none lost")
        self.assertEqual(seqs_old[-20:], seqs_new, "one stream, both kinds of subscriber")

    def test_stop_time_ends_with_subscription_completed(self):
        f = self.fleet(["--notification-file", ROUTES_1, "--notification-rate", "50"])
        m = self.ncc(f)
        probe = sub_id(m.dispatch(establish("")))
        now = event_ms(self.take(m, 5, until=lambda x: True)[-1])
        m.dispatch(to_ele('<delete-subscription xmlns="%s"><id>%d</id></delete-subscription>' % (SN_NS, probe)))
        self.drain(m)
        stop = now + 1000
        sid = sub_id(m.dispatch(establish("<stop-time>%s</stop-time>" % ms_text(stop))))
        msgs = self.take(m, 5, until=lambda x: is_state(x, "subscription-completed"))
        self.assertTrue(msgs and is_state(msgs[-1], "subscription-completed"), msgs[-1:])
        self.assertIn("<id>%d</id>" % sid, msgs[-1])
        events = msgs[:-1]
        self.assertGreater(len(events), 20, "about a second at 50 a second")
        self.assertTrue(all(event_ms(x) < stop for x in events), "nothing at or after stop-time")
        self.assertGreaterEqual(event_ms(msgs[-1]), stop)
        self.assertEqual(self.take(m, 0.5), [], "nothing after subscription-completed")
        row = self.sub_row(self.read_report(f), sid)
        self.assertTrue(row["ended"], row)
        self.assertEqual(row["events"], len(events))

    def test_replay_and_stop_time_that_cannot_be_served_are_refused(self):
        f = self.fleet(["--notification-file", ROUTES_1, "--notification-rate", "10"])
        m = self.ncc(f)
        future = int(time.time() * 1000) + 3600 * 1000
        cases = [
            ("<replay-start-time>%s</replay-start-time>" % ms_text(future), "replay-start-time is in the future"),
            ("<replay-start-time>%s</replay-start-time><stop-time>%s</stop-time>"
             % (ms_text(future + 60000), ms_text(future)), "stop-time is earlier than replay-start-time"),
        ]
        for inner, message in cases:
            with self.assertRaises(RPCError) as ctx:
                m.dispatch(establish(inner))
            self.assertEqual(ctx.exception.tag, "invalid-value", inner)
            self.assertIn(message, ctx.exception.message or "", inner)
        self.assertEqual(self.device_row(self.read_report(f))["subscriptions"], [], "nothing was established")

    def test_a_slow_reader_is_suspended_resumed_and_still_reconciles(self):
        with open(os.path.join(h.SOURCE_DIR, "notifications", "routes-100.xml")) as src:
            unbounded = re.sub(r"<count>\d+</count>", "", src.read())
        path = os.path.join(tempfile.mkdtemp(prefix="fleetsim-yps-"), "routes-100-unbounded.xml")
        with open(path, "w") as dst:
            dst.write(unbounded)
        f = self.fleet(["--notification-file", path, "--notification-rate", "2000"], ssh=False)
        with h.RawClient(f.addr(0)).hello(caps=(h.BASE10,)) as c:
            reply = c.rpc('<establish-subscription xmlns="%s"><stream>NETCONF</stream></establish-subscription>'
                          % SN_NS)
            sid = int(re.search(r"<id[^>]*>(\d+)</id>", reply).group(1))
            time.sleep(h.scaled(2))  # not reading: about 23 MB a second are due
            kinds, events = [], 0
            deadline = time.monotonic() + h.scaled(20)
            while "subscription-resumed" not in kinds and time.monotonic() < deadline:
                msg = c.recv_msg()
                if "<route-update" in msg:
                    events += 1
                else:
                    kinds.append(re.search(r"<eventTime>[^<]*</eventTime><([\w-]+)", msg).group(1))
                    self.assertIn("<id>%d</id>" % sid, msg)
            self.assertEqual(kinds[:2], ["subscription-suspended", "subscription-resumed"], kinds)
            # Delete it; every event sent before the reply arrives before it.
            c.send_msg('<rpc xmlns="%s" message-id="2"><delete-subscription xmlns="%s"><id>%d</id>'
                       "</delete-subscription></rpc>" % (h.NC_NS, SN_NS, sid))
            while True:
                msg = c.recv_msg()
                if "<rpc-reply" in msg:
                    h.assert_ok(msg, "delete-subscription")
                    break
                events += "<route-update" in msg
            report = self.read_report(f)
        row = self.sub_row(report, sid)
        self.assertGreaterEqual(row["suspensions"], 1, row)
        self.assertEqual(row["events"], events, "what was queued arrived, suspension or not")
        dev = self.device_row(report)
        self.assertGreater(dev["netconf_ledger"]["dropped"], 0, "events while suspended are dropped")
        self.assert_identity(dev["notifications"], "device")

    def test_metrics_count_the_subscriptions_and_what_they_sent(self):
        f, base = h.start_with_metrics(1, ["--ssh", "true", "--notification-file", IF_EVENTS,
                                           "--notification-rate", "100"])
        self.addCleanup(f.stop)

        def scrape():
            with urllib.request.urlopen(base + "/metrics", timeout=h.scaled(5)) as r:
                text = r.read().decode()
            return {(m.group(1), m.group(2) or ""): int(float(m.group(3))) for m in re.finditer(
                r'(?m)^(fleetsim_yang_push_\w+)(?:\{\w+="([^"]*)"\})? (\S+)$', text)}

        m = self.ncc(f)
        sid = sub_id(m.dispatch(establish(xpath_filter(DOWN_ONLY))))
        got = self.take(m, 1.0)
        live = scrape()
        self.assertEqual(live[("fleetsim_yang_push_subscriptions", "stream")], 1, live)
        self.assertEqual(live[("fleetsim_yang_push_subscriptions", "periodic")], 0, live)
        self.assertGreaterEqual(live[("fleetsim_yang_push_notifications_total", "event")], len(got))
        m.dispatch(to_ele('<delete-subscription xmlns="%s"><id>%d</id></delete-subscription>' % (SN_NS, sid)))
        got += self.drain(m)
        ended = scrape()
        self.assertEqual(ended[("fleetsim_yang_push_subscriptions", "stream")], 0, ended)
        self.assertEqual(ended[("fleetsim_yang_push_notifications_total", "event")], len(got),
                         "an ended subscription's events stay counted")
        self.assertEqual(ended[("fleetsim_yang_push_suspensions_total", "")], 0)


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main()
