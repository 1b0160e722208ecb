"""The live view: --metrics (Prometheus text format over HTTP), --metrics-per-device and the status
line of --status-interval. Known NETCONF, SNMP and SSH activity is made with independent clients
(a raw NETCONF client, ncclient over SSH, paramiko, net-snmp's snmpget/snmpgetnext), the metrics
are fetched with the curl binary and read with prometheus_client's text parser, and the values
are asserted exactly.

Run: /usr/bin/python3 test_metrics.py <path to fleetsim>. Loopback only, every wait bounded.
"""

import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import warnings

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402

import paramiko  # noqa: E402
from ncclient import manager  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

NOTIF_NS = "urn:ietf:params:xml:ns:netconf:notification:1.0"
ROUTES_1 = os.path.join(h.SOURCE_DIR, "notifications", "routes-1.xml")
# ncclient 0.6.13 calls threading APIs that Python 3.11 deprecates; that is not ours to fix.
warnings.simplefilter("default")
warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"ncclient(\.|$)")

SYS_NAME = "1.3.6.1.2.1.1.5.0"
CONTENT_TYPE = "text/plain; version=0.0.4"
ATTEMPTS = 8


def free_port():
    """A random port below the ephemeral range (the caller retries when it turns out to be taken)."""
    return random.randrange(h.PORT_LOW, h.PORT_HIGH)


def curl(url, method=None):
    """(status code, headers dict with lower-case names, body) of one request made by the curl binary."""
    args = ["curl", "-sS", "-i", "--max-time", str(h.scaled(10))]
    if method == "HEAD":
        args.append("-I")
    elif method:
        args += ["-X", method]
    out = subprocess.run(args + [url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=h.scaled(20))
    if out.returncode != 0:
        raise AssertionError("curl %s failed: %s" % (url, out.stderr.decode(errors="replace")))
    head, _, body = out.stdout.decode().partition("\r\n\r\n")
    lines = head.split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, body


class Scrape:
    """One parsed /metrics page: families by name, samples by (name, sorted labels)."""

    def __init__(self, text):
        self.text = text
        self.families = {}
        self.samples = {}
        for fam in text_string_to_metric_families(text):
            self.families[fam.name] = fam
            for s in fam.samples:
                key = (s.name, tuple(sorted(s.labels.items())))
                if key in self.samples:
                    raise AssertionError("sample %r appears twice" % (key,))
                self.samples[key] = s.value

    def value(self, name, **labels):
        key = (name, tuple(sorted(labels.items())))
        if key not in self.samples:
            raise AssertionError("no sample %s%r in:\n%s" % (name, labels, self.text))
        return self.samples[key]

    def by_device(self, name):
        """{device index: value} of a per-device family."""
        out = {}
        for (n, labels), v in self.samples.items():
            if n == name:
                d = dict(labels)
                out[int(d["device"])] = v
        return out


def snmp(tool, port, community="public", oid=SYS_NAME):
    """Run net-snmp's @tool once (no retries) against 127.0.0.1:@port; returns its exit code."""
    return subprocess.run([tool, "-v2c", "-c", community, "-t", "0.5", "-r", "0", "127.0.0.1:%d" % port, oid],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          timeout=h.scaled(10)).returncode


class MetricsTests(unittest.TestCase):
    def fleet(self, extra=(), devices=3, metrics=True):
        """A running fleet with --metrics on a free port; returns (fleet, base URL)."""
        f, base = h.start_with_metrics(devices, extra, metrics, ATTEMPTS)
        self.addCleanup(f.stop)
        return f, base

    def scrape(self, base):
        status, headers, body = curl(base + "/metrics")
        self.assertEqual(status, 200, body)
        self.assertTrue(headers.get("content-type", "").startswith(CONTENT_TYPE), headers)
        return Scrape(body)

    def scrape_until(self, base, ready, what):
        """Scrape until @ready(scrape) holds (counters of datagrams and closed sessions land a moment
        after the client is done), bounded; returns the last scrape."""
        deadline = time.monotonic() + h.scaled(5)
        while True:
            m = self.scrape(base)
            if ready(m) or time.monotonic() > deadline:
                return m
            time.sleep(0.05)

    # ------------------------------------------------------------ the counters

    def test_counts_known_netconf_and_snmp_activity_exactly(self):
        f, base = self.fleet(devices=3)
        m = self.scrape(base)
        self.assertEqual(m.value("fleetsim_devices"), 3)
        self.assertEqual(m.value("fleetsim_netconf_rpcs_total", operation="get-config", result="ok"), 0)

        # NETCONF over TCP: device 0 keeps a session with 3 get-config, 2 good edits, 1 refused edit
        # (create of what exists) and 1 unknown operation; device 1 keeps a session that only said hello.
        a = h.RawClient(f.addr(0)).hello()
        self.addCleanup(a.close)
        for i in range(3):
            h.assert_data(a.get_config(), "get-config %d" % i)
        h.assert_ok(a.edit_config(h.iface("m1", op="create")), "create m1")
        h.assert_ok(a.edit_config(h.iface("m2")), "merge m2")
        h.assert_error(a.edit_config(h.iface("m1", op="create")), "data-exists", what="create m1 again")
        h.assert_error(a.rpc("<no-such-operation/>"), "operation-not-supported", what="unknown operation")
        b = h.RawClient(f.addr(1)).hello()
        self.addCleanup(b.close)

        # SNMP on device 2: 4 GETs, 1 GETNEXT, 1 GET with an unknown community (never answered).
        port2 = f.addr(2)[1]
        for _ in range(4):
            self.assertEqual(snmp("snmpget", port2), 0)
        self.assertEqual(snmp("snmpgetnext", port2), 0)
        self.assertNotEqual(snmp("snmpget", port2, community="wrong"), 0)

        m = self.scrape_until(base, lambda s: s.value("fleetsim_snmp_dropped_total", reason="bad_community") >= 1,
                              "the refused community")
        self.assertEqual(m.value("fleetsim_netconf_rpcs_total", operation="get-config", result="ok"), 3)
        self.assertEqual(m.value("fleetsim_netconf_rpcs_total", operation="get-config", result="error"), 0)
        self.assertEqual(m.value("fleetsim_netconf_rpcs_total", operation="edit-config", result="ok"), 2)
        self.assertEqual(m.value("fleetsim_netconf_rpcs_total", operation="edit-config", result="error"), 1)
        self.assertEqual(m.value("fleetsim_netconf_rpcs_total", operation="other", result="error"), 1)
        self.assertEqual(m.value("fleetsim_netconf_rpcs_total", operation="get", result="ok"), 0)
        self.assertEqual(m.value("fleetsim_netconf_rpcs_received_total"), 7)
        self.assertEqual(m.value("fleetsim_sessions", transport="tcp"), 2)
        self.assertEqual(m.value("fleetsim_sessions", transport="ssh"), 0)
        self.assertEqual(m.value("fleetsim_sessions_started_total"), 2)
        self.assertEqual(m.value("fleetsim_snmp_requests_total", type="get", result="ok"), 4)
        self.assertEqual(m.value("fleetsim_snmp_requests_total", type="get", result="error"), 0)
        self.assertEqual(m.value("fleetsim_snmp_requests_total", type="getnext", result="ok"), 1)
        self.assertEqual(m.value("fleetsim_snmp_requests_total", type="getbulk", result="ok"), 0)
        self.assertEqual(m.value("fleetsim_snmp_packets_total", direction="in"), 6)
        self.assertEqual(m.value("fleetsim_snmp_packets_total", direction="out"), 5)
        self.assertEqual(m.value("fleetsim_snmp_dropped_total", reason="bad_community"), 1)
        self.assertEqual(m.value("fleetsim_snmp_auth_failures_total"), 1)
        self.assertEqual(m.value("fleetsim_ssh_auth_failures_total"), 0)
        self.assertEqual(m.value("fleetsim_hello_failures_total"), 0)
        # Per-device series only with --metrics-per-device.
        self.assertFalse([n for n in m.families if n.startswith("fleetsim_device_")], m.text)

        # Closing both sessions: none open, one dropped (device 1 never sent close-session).
        h.assert_ok(a.rpc("<close-session/>"), "close-session")
        a.close()
        b.close()
        m = self.scrape_until(base, lambda s: s.value("fleetsim_sessions", transport="tcp") == 0, "sessions closed")
        self.assertEqual(m.value("fleetsim_sessions", transport="tcp"), 0)
        self.assertEqual(m.value("fleetsim_netconf_rpcs_total", operation="close-session", result="ok"), 1)
        self.assertEqual(m.value("fleetsim_sessions_dropped_total"), 1)

    def test_every_family_has_help_and_type_and_follows_the_naming_rules(self):
        _, base = self.fleet(extra=["--metrics-per-device"], devices=2)
        m = self.scrape(base)
        self.assertGreater(len(m.families), 20)
        for name, fam in m.families.items():
            self.assertTrue(name.startswith("fleetsim_"), name)
            self.assertIn(fam.type, ("counter", "gauge"), name)
            self.assertRegex(m.text, r"(?m)^# HELP %s \S" % re.escape(
                name + ("_total" if fam.type == "counter" else "")))
            self.assertRegex(m.text, r"(?m)^# TYPE %s %s$" % (re.escape(
                name + ("_total" if fam.type == "counter" else "")), fam.type))
            for s in fam.samples:
                if fam.type == "counter":
                    self.assertTrue(s.name.endswith("_total"), s.name)
                self.assertGreaterEqual(s.value, 0, s)
        self.assertEqual(m.value("fleetsim_info", version=m.families["fleetsim_info"].samples[0].labels["version"]), 1)

    def test_per_device_series_are_consistent_with_the_totals(self):
        f, base = self.fleet(extra=["--metrics-per-device"], devices=4)
        with h.RawClient(f.addr(1)).hello() as c:
            for _ in range(5):
                h.assert_data(c.get_config())
            h.assert_error(c.rpc("<no-such-operation/>"), "operation-not-supported")
            with h.RawClient(f.addr(3)).hello() as d:
                h.assert_data(d.get_config())
                for _ in range(2):
                    self.assertEqual(snmp("snmpget", f.addr(3)[1]), 0)
                self.assertEqual(snmp("snmpget", f.addr(0)[1]), 0)
                m = self.scrape(base)
        rpcs = m.by_device("fleetsim_device_netconf_rpcs_received_total")
        self.assertEqual(rpcs, {0: 0, 1: 6, 2: 0, 3: 1})
        self.assertEqual(sum(rpcs.values()), m.value("fleetsim_netconf_rpcs_received_total"))
        errors = m.by_device("fleetsim_device_netconf_rpc_errors_total")
        self.assertEqual(errors, {0: 0, 1: 1, 2: 0, 3: 0})
        self.assertEqual(sum(errors.values()), sum(
            v for (n, labels), v in m.samples.items()
            if n == "fleetsim_netconf_rpcs_total" and ("result", "error") in labels))
        sessions = m.by_device("fleetsim_device_sessions")
        self.assertEqual(sessions, {0: 0, 1: 1, 2: 0, 3: 1})
        self.assertEqual(sum(sessions.values()), m.value("fleetsim_sessions", transport="tcp"))
        started = m.by_device("fleetsim_device_sessions_started_total")
        self.assertEqual(sum(started.values()), m.value("fleetsim_sessions_started_total"))
        snmp_in = m.by_device("fleetsim_device_snmp_packets_received_total")
        self.assertEqual(snmp_in, {0: 1, 1: 0, 2: 0, 3: 2})
        self.assertEqual(sum(snmp_in.values()), m.value("fleetsim_snmp_packets_total", direction="in"))
        for fam in ("fleetsim_device_hello_failures_total", "fleetsim_device_ssh_auth_failures_total",
                    "fleetsim_device_notifications_sent_total", "fleetsim_device_notifications_dropped_total"):
            self.assertEqual(sorted(m.by_device(fam)), [0, 1, 2, 3], fam)

    def test_notifications_are_counted_by_state(self):
        f, base = self.fleet(extra=["--notification-file", ROUTES_1, "--notification-rate", "50",
                                    "--metrics-per-device"], devices=2)
        with h.RawClient(f.addr(1)).hello() as c:
            h.assert_ok(c.rpc('<create-subscription xmlns="%s"/>' % NOTIF_NS), "create-subscription")
            got = 0
            while got < 5:
                if "<notification" in c.recv_msg():
                    got += 1
            m = self.scrape(base)
        state = {k: m.value("fleetsim_notifications_total", state=k)
                 for k in ("emitted", "sent", "send_failures", "dropped", "suppressed")}
        self.assertGreaterEqual(state["sent"], 5)
        self.assertEqual(state["dropped"], 0)
        self.assertEqual(state["emitted"], state["sent"] + state["send_failures"] + state["dropped"]
                         + state["suppressed"], state)
        self.assertEqual(m.by_device("fleetsim_device_notifications_sent_total"), {0: 0, 1: state["sent"]})
        self.assertEqual(m.value("fleetsim_netconf_rpcs_total", operation="create-subscription", result="ok"), 1)

    def test_ssh_sessions_and_a_wrong_password_are_counted(self):
        state = tempfile.mkdtemp(prefix="fleetsim-metrics-state-")
        self.addCleanup(shutil.rmtree, state, True)
        f, base = self.fleet(extra=["--ssh", "true", "--state-dir", state], devices=2)
        t = paramiko.Transport(f.addr(1))
        try:
            with self.assertRaises(paramiko.AuthenticationException):
                t.connect(username="admin", password="not-the-password")
        finally:
            t.close()
        host, port = f.addr(0)
        mgr = manager.connect(host=host, port=port, username="admin", password="admin", hostkey_verify=False,
                              look_for_keys=False, allow_agent=False, timeout=h.scaled(10))
        try:
            mgr.get_config(source="running")
            mgr.get_config(source="running")
            m = self.scrape_until(base, lambda s: s.value("fleetsim_sessions", transport="ssh") == 1,
                                  "the refused connection closed")
        finally:
            mgr.close_session()
        self.assertEqual(m.value("fleetsim_ssh_auth_failures_total"), 1)
        self.assertEqual(m.value("fleetsim_sessions", transport="ssh"), 1)
        self.assertEqual(m.value("fleetsim_sessions", transport="tcp"), 0)
        self.assertEqual(m.value("fleetsim_sessions_started_total"), 1)
        self.assertEqual(m.value("fleetsim_netconf_rpcs_total", operation="get-config", result="ok"), 2)

    # ------------------------------------------------------------ HTTP

    def test_only_get_and_head_of_slash_metrics_are_served(self):
        _, base = self.fleet(devices=1)
        # "/" is the live page and "/live.json" its data (test_live_page.py); nothing else is served.
        for path in ("/index.html", "/live", "/metric", "/metrics/", "/metrics/x", "/favicon.ico"):
            status, _, _ = curl(base + path)
            self.assertEqual(status, 404, path)
        status, headers, _ = curl(base + "/metrics", method="POST")
        self.assertEqual(status, 405)
        self.assertEqual(headers.get("allow"), "GET, HEAD")
        status, headers, body = curl(base + "/metrics", method="HEAD")
        self.assertEqual(status, 200)
        self.assertTrue(headers.get("content-type", "").startswith(CONTENT_TYPE), headers)
        self.assertEqual(body, "")

    def test_port_alone_means_loopback(self):
        for _ in range(ATTEMPTS):
            port = free_port()
            try:
                f = h.Fleet(devices=1, extra=["--metrics", str(port)]).start()
            except h.FleetError as e:
                if "in use" in str(e):
                    continue
                raise
            self.addCleanup(f.stop)
            self.assertIn("metrics at http://127.0.0.1:%d/metrics" % port, f.log())
            self.assertEqual(self.scrape("http://127.0.0.1:%d" % port).value("fleetsim_devices"), 1)
            return
        self.fail("no free port")

    # ------------------------------------------------------------ refusals

    def run_refused(self, metrics):
        """fleetsim with --metrics @metrics must exit 2; returns its output."""
        for _ in range(ATTEMPTS):
            port = free_port()
            code, text = h.run_fleetsim(["--device-count", "1", "--starting-port", str(port), "--ssh", "false",
                                         "--snmp-starting-port", str(port), "--metrics", metrics])
            if "cannot listen" in text or "cannot bind SNMP" in text:
                continue  # the device's own port was taken
            self.assertEqual(code, 2, text)
            self.assertNotIn(h.READY_TEXT, text)
            return text
        self.fail("no free device port")

    def test_bad_metrics_addresses_exit_2_with_a_message(self):
        for bad in ("abc", "127.0.0.1:", ":", "127.0.0.1:0", "127.0.0.1:65536", "300.1.1.1:9100", "localhost:9100",
                    "127.0.0.1:91a", "::1:9100", "127.0.0.1:123456"):
            text = self.run_refused(bad)
            self.assertIn('--metrics "%s": expected PORT, :PORT or ADDR:PORT' % bad, text)

    def test_a_metrics_port_in_use_exits_2_with_a_message(self):
        with socket.socket() as taken:
            taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            for _ in range(ATTEMPTS):
                try:
                    taken.bind(("127.0.0.1", free_port()))
                    break
                except OSError:
                    continue
            taken.listen(1)
            port = taken.getsockname()[1]
            text = self.run_refused(":%d" % port)
            self.assertIn("--metrics :%d: cannot serve on 127.0.0.1 port %d: Address already in use" % (port, port),
                          text)

    # ------------------------------------------------------------ status line

    def test_status_lines_come_every_interval_and_count_rpcs(self):
        f, _ = self.fleet(extra=["--status-interval", "1"], devices=2, metrics=False)
        with h.RawClient(f.addr(0)).hello() as c:
            for _ in range(3):
                h.assert_data(c.get_config())
            deadline = time.monotonic() + h.scaled(5)
            while time.monotonic() < deadline and "rpcs 3 (" not in f.log():
                time.sleep(0.1)
        lines = [line for line in f.log().splitlines() if "status: " in line]
        self.assertGreaterEqual(len(lines), 1, f.log())
        self.assertRegex(lines[-1], r"status: 2 devices, [01] sessions \(tcp\), rpcs 3 \([0-9.]+/s, 0 errors\), "
                                    r"snmp 0 \(0\.0/s\), notifications sent 0 dropped 0, auth failures ssh 0 snmp 0")
        time.sleep(h.scaled(1) + 1.2)
        self.assertGreater(len([x for x in f.log().splitlines() if "status: " in x]), len(lines))

    def test_status_interval_0_prints_no_status(self):
        # 0 means never, not "as often as possible": a zero timeout would fill the log at once.
        f, _ = self.fleet(extra=["--status-interval", "0"], devices=1, metrics=False)
        time.sleep(2.5)
        self.assertNotIn("status: ", f.log())


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2)
