"""Faults: clients that vanish at every step, a churn of 1,000 clients beside a stress run, an SNMP
flood, a subscriber that stops reading, the descriptor limit and SIGTERM under load. After each fault
the fleet must still answer correctly and its counters (--metrics, --report) must say what happened.

Run: /usr/bin/python3 test_faults.py <path to fleetsim> [unittest options]; fleetsim-stress is taken
from fleetsim's directory. FLEETSIM_CHURN_SECONDS sets the churn's length (default 60 s, as the hardening
issue asks). Loopback only, random ports below 32000, every wait bounded.
"""

import asyncio
import json
import os
import random
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402

from prometheus_client.parser import text_string_to_metric_families  # noqa: E402
from snmp_ber import v2c_request, v2c_response  # noqa: E402

NOTIF_NS = "urn:ietf:params:xml:ns:netconf:notification:1.0"
SUBSCRIBE = '<create-subscription xmlns="%s"/>' % NOTIF_NS
GET_RUNNING = "<get-config><source><running/></source></get-config>"
SYS_NAME = "1.3.6.1.2.1.1.5.0"
CHURN_CLIENTS = 1000
CHURN_SECONDS = float(os.environ.get("FLEETSIM_CHURN_SECONDS", "60"))
METRICS_ATTEMPTS = 8
NOTIF_STATES = ("emitted", "sent", "send_failures", "dropped", "suppressed")


# ---------------------------------------------------------------- helpers

def unbounded_notifications(work):
    """routes-100.xml without its counts: the device streams for as long as it runs."""
    with open(os.path.join(h.SOURCE_DIR, "notifications", "routes-100.xml")) as src:
        text = re.sub(r"<count>\d+</count>", "", src.read())
    path = os.path.join(work, "routes-100-unbounded.xml")
    with open(path, "w") as dst:
        dst.write(text)
    return path


def stress_binary():
    return os.path.join(os.path.dirname(h.BINARY), "fleetsim-stress")


def rss_bytes(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS for pid %d" % pid)


def udp_drops(port):
    """Datagrams the kernel dropped on the UDP socket bound to 127.0.0.1:@port (full receive buffer)."""
    want = "0100007F:%04X" % port
    with open("/proc/net/udp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if fields[1] == want:
                return int(fields[-1])
    raise AssertionError("no UDP socket on 127.0.0.1:%d" % port)


def snmp_get(request_id, oid=SYS_NAME, community=b"public"):
    return v2c_request(0xa0, request_id, [oid], community)


def response_id_and_value(data):
    """(request-id, first value's bytes) of a GetResponse; raises on anything else."""
    rid, _, _, values = v2c_response(data)
    return rid, values[0]


def malformed_datagrams():
    """Datagrams that are not SNMP messages: every prefix of a valid request, broken lengths, noise."""
    good = snmp_get(4242)
    out = [good[:n] for n in range(1, len(good))]
    out += [b"\x30\x84\xff\xff\xff\xff", b"\x30\x00", b"\x30\x81", b"\x02\x01\x01", b"\xff" * 64]
    rng = random.Random(7)
    out += [b"\x30" + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))) for _ in range(20)]
    return out


class Scrape:
    """One /metrics page: values by (name, sorted labels)."""

    def __init__(self, text):
        self.text = text
        self.samples = {}
        for fam in text_string_to_metric_families(text):
            for s in fam.samples:
                self.samples[(s.name, tuple(sorted(s.labels.items())))] = s.value

    def value(self, name, **labels):
        key = (name, tuple(sorted(labels.items())))
        if key not in self.samples:
            raise AssertionError("no sample %s%r in:\n%s" % (name, labels, self.text))
        return int(self.samples[key])


class FaultTests(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="fleetsim-faults-")
        self.addCleanup(shutil.rmtree, self.work, True)

    def fleet(self, devices=2, extra=(), metrics=True, **kw):
        """A running fleet (with --metrics on a free port unless told otherwise); sets self.base."""
        f, self.base = h.start_with_metrics(devices, extra, metrics, METRICS_ATTEMPTS, **kw)
        self.addCleanup(f.stop)
        return f

    def scrape(self):
        with urllib.request.urlopen(self.base + "/metrics", timeout=h.scaled(10)) as r:
            return Scrape(r.read().decode())

    def scrape_until(self, ready):
        """Counters of closed sessions land a moment after the client is gone: scrape until @ready."""
        deadline = time.monotonic() + h.scaled(5)
        while True:
            m = self.scrape()
            if ready(m) or time.monotonic() > deadline:
                return m
            time.sleep(0.05)

    def assert_counts(self, want, what):
        """Wait (bounded) until the session counters equal @want, then check them exactly."""
        def counts(m):
            return {"open": m.value("fleetsim_sessions", transport="tcp"),
                    "started": m.value("fleetsim_sessions_started_total"),
                    "dropped": m.value("fleetsim_sessions_dropped_total"),
                    "bad_hellos": m.value("fleetsim_hello_failures_total")}
        m = self.scrape_until(lambda m: counts(m) == want)
        self.assertEqual(counts(m), want, what)
        return m

    def assert_notification_identity(self, m, what):
        n = {k: m.value("fleetsim_notifications_total", state=k) for k in NOTIF_STATES}
        self.assertEqual(n["emitted"], n["sent"] + n["send_failures"] + n["dropped"] + n["suppressed"],
                         "%s: emitted = sent + send_failures + dropped + suppressed does not hold: %s" % (what, n))
        return n

    # ------------------------------------------------------------ a client that vanishes at every step

    def test_a_client_that_vanishes_at_every_step_is_counted_and_the_device_keeps_answering(self):
        f = self.fleet(devices=2, extra=["--notification-file", unbounded_notifications(self.work),
                                          "--notification-rate", "5000"])
        bystander = h.RawClient(f.addr(0)).hello()
        self.addCleanup(bystander.close)
        want = {"open": 1, "started": 1, "dropped": 0, "bad_hellos": 0}
        self.assert_counts(want, "the bystander alone")

        def step(name, act, **delta):
            c = h.RawClient(f.addr(0))
            try:
                act(c)
            finally:
                c.close()
            for k, v in delta.items():
                want[k] += v
            self.assert_counts(want, "after: " + name)
            h.assert_data(bystander.rpc(GET_RUNNING, msg_id=name.replace(" ", "-")), "bystander after " + name)

        def rst(c):
            c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

        def hello(c, caps=(h.BASE10, h.BASE11)):
            c.hello(caps)
            h.assert_data(c.rpc(GET_RUNNING), "get-config of the session that is about to vanish")

        step("connect and leave", lambda c: None)
        step("leave during the server's hello", lambda c: c.sock.recv(10))
        step("leave during the client's hello",
             lambda c: (c.read_hello(), c.send_raw(h.client_hello()[:60])))
        step("reset during the client's hello",
             lambda c: (c.read_hello(), c.send_raw(h.client_hello()[:90]), rst(c)))
        step("a hello that is not XML", lambda c: (c.read_hello(), c.send_raw("<hello><capab]]>]]>"),
                                                   self.assertTrue(c.expect_closed(h.scaled(3)))),
             bad_hellos=1)
        step("leave inside a chunk header", lambda c: (hello(c), c.send_raw("\n#12")), started=1, dropped=1)
        step("reset inside a chunk", lambda c: (hello(c), c.send_raw("\n#300\n<rpc xmlns="), rst(c)),
             started=1, dropped=1)
        step("leave inside an end-of-message RPC",
             lambda c: (hello(c, (h.BASE10,)), c.send_raw('<rpc xmlns="%s" message-id="7"><get-con' % h.NC_NS)),
             started=1, dropped=1)
        step("leave with replies unread",
             lambda c: (hello(c), [c.send_msg('<rpc xmlns="%s" message-id="%d"><get/></rpc>' % (h.NC_NS, i))
                                   for i in range(50)]), started=1, dropped=1)

        def burst(c):
            hello(c)
            h.assert_ok(c.rpc(SUBSCRIBE), "create-subscription")
            for _ in range(20):
                self.assertIn("<notification", c.recv_msg())
            rst(c)
        before = self.assert_notification_identity(self.scrape(), "before the burst")
        step("reset during a notification burst", burst, started=1, dropped=1)
        after = self.assert_notification_identity(self.scrape(), "after the burst")
        self.assertGreaterEqual(after["sent"] - before["sent"], 20, (before, after))

        def polite(c):
            hello(c)
            h.assert_ok(c.rpc("<close-session/>", msg_id="bye"), "close-session")
            self.assertTrue(c.expect_closed(h.scaled(3)))
        step("close-session", polite, started=1)
        # The other device saw none of it.
        with h.RawClient(f.addr(1)).hello() as other:
            h.assert_data(other.get_config(), "device 1")

    # ------------------------------------------------------------ churn beside a stress run

    def test_1000_clients_churning_sessions_while_a_stress_run_edits_another_device(self):
        # Devices 0 and 2 share worker 0 (device i runs on worker i mod 2): the churn and the stress run
        # compete for one event loop.
        f = self.fleet(devices=3, threads=2, extra=["--metrics-per-device"])
        start = self.scrape()
        stop = threading.Event()
        runs = []

        def stress_loop():
            n = 0
            while not stop.is_set():
                n += 1
                manifest = os.path.join(self.work, "stress-%d.json" % n)
                host, port = f.addr(2)
                args = [stress_binary(), "edit", "--ip", host, "--port", str(port), "--edits", "300",
                        "--candidate-datastore", "false", "--async-requests", "true", "--pipeline", "16",
                        "--msg-timeout", "30", "--json", manifest]
                try:
                    proc = subprocess.run(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, timeout=h.scaled(60),
                                          preexec_fn=lambda: h._child_setup(None))
                    with open(manifest) as m:
                        runs.append((proc.returncode, json.load(m)["results"], proc.stderr.decode()))
                except (subprocess.TimeoutExpired, OSError, ValueError) as e:
                    runs.append((None, None, repr(e)))

        tally = {"sessions": 0, "early": 0, "errors": []}

        async def client(i, deadline):
            host, port = f.addr(0)
            k = 0
            while time.monotonic() < deadline:
                k += 1
                full = (i + k) % 3 != 0  # one in three leaves before its hello is complete
                try:
                    r, w = await asyncio.wait_for(asyncio.open_connection(host, port), h.scaled(10))
                except (OSError, asyncio.TimeoutError) as e:
                    tally["errors"].append("connect: %r" % e)
                    continue
                try:
                    data = await asyncio.wait_for(r.readuntil(b"]]>]]>"), h.scaled(20))
                    if b"<session-id>" not in data:
                        raise AssertionError("no session-id in %r" % data[:200])
                    if not full:
                        w.write(h.client_hello().encode()[:50])
                        await w.drain()
                        tally["early"] += 1
                    else:
                        body = '<rpc xmlns="%s" message-id="%d">%s</rpc>' % (h.NC_NS, k, GET_RUNNING)
                        w.write((h.client_hello((h.BASE10,)) + "]]>]]>" + body + "]]>]]>").encode())
                        await w.drain()
                        reply = await asyncio.wait_for(r.readuntil(b"]]>]]>"), h.scaled(20))
                        if b"<data" not in reply or b'message-id="%d"' % k not in reply:
                            raise AssertionError("bad reply %r" % reply[:200])
                        tally["sessions"] += 1
                    if k % 2:
                        w.transport.abort()  # a reset
                    else:
                        w.close()
                except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, AssertionError) as e:
                    tally["errors"].append(repr(e))
                    w.transport.abort()

        async def churn():
            deadline = time.monotonic() + CHURN_SECONDS
            await asyncio.gather(*(client(i, deadline) for i in range(CHURN_CLIENTS)))

        t = threading.Thread(target=stress_loop)
        t.start()
        started = time.monotonic()
        try:
            asyncio.run(churn())
        finally:
            stop.set()
            t.join(h.scaled(120))
        elapsed = time.monotonic() - started
        self.assertFalse(t.is_alive(), "the stress loop did not end")
        self.assertEqual(tally["errors"][:5], [], "the churning clients met errors (%d in all)" % len(tally["errors"]))
        print("churn: %d clients, %.1f s, %d sessions with an RPC, %d left mid-hello, %d stress runs"
              % (CHURN_CLIENTS, elapsed, tally["sessions"], tally["early"], len(runs)), file=sys.stderr)
        self.assertGreater(tally["sessions"], CHURN_CLIENTS)
        self.assertGreater(len(runs), 0)
        edits = 0
        for code, r, err in runs:
            self.assertEqual(code, 0, "a stress run failed: %s %s" % (r, err))
            got = {k: r[k] for k in ("complete", "edits_sent", "edits_answered", "edits_ok", "edits_rpc_error",
                                     "errors_by_tag", "failure")}
            self.assertEqual(got, {"complete": True, "edits_sent": 300, "edits_answered": 300, "edits_ok": 300,
                                   "edits_rpc_error": 0, "errors_by_tag": {}, "failure": None})
            edits += r["edits_sent"]
        # The fleet's own counts agree with both sides exactly.
        m = self.assert_counts({"open": 0,
                                "started": start.value("fleetsim_sessions_started_total") + tally["sessions"]
                                + len(runs),
                                # fleetsim-stress edit ends its session by closing the connection.
                                "dropped": start.value("fleetsim_sessions_dropped_total") + tally["sessions"]
                                + len(runs),
                                "bad_hellos": 0}, "after the churn")
        self.assertEqual(m.value("fleetsim_device_netconf_rpcs_received_total", device="2")
                         - start.value("fleetsim_device_netconf_rpcs_received_total", device="2"), edits,
                         "device 2 received exactly the stress runs' edits")
        self.assertEqual(m.value("fleetsim_device_netconf_rpcs_received_total", device="0")
                         - start.value("fleetsim_device_netconf_rpcs_received_total", device="0"), tally["sessions"])
        self.assertEqual(m.value("fleetsim_device_netconf_rpc_errors_total", device="2"), 0)
        with h.RawClient(f.addr(0)).hello() as c:
            h.assert_data(c.get_config(), "device 0 after the churn")

    # ------------------------------------------------------------ SNMP flood

    def test_snmp_flood_of_malformed_and_valid_packets_answers_the_valid_and_counts_the_rest(self):
        devices = 4
        f = self.fleet(devices=devices)
        agents = [f.addr(i) for i in range(devices)]
        start = self.scrape()
        drops0 = [udp_drops(a[1]) for a in agents]
        bad = malformed_datagrams()
        stop = threading.Event()
        sent = {"bad": 0}

        def flood():
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                i = 0
                while not stop.is_set():
                    for a in agents:
                        s.sendto(bad[i % len(bad)], a)
                    i += 1
                sent["bad"] = i * len(agents)

        t = threading.Thread(target=flood)
        t.start()
        valid = answered = 0
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.settimeout(0.5)
                deadline = time.monotonic() + 3.0
                rid = 1000
                while time.monotonic() < deadline:
                    for i, a in enumerate(agents):
                        rid += 1
                        for _attempt in range(5):  # a full receive buffer may lose a datagram: ask again
                            s.sendto(snmp_get(rid), a)
                            valid += 1
                            try:
                                while True:
                                    data, _ = s.recvfrom(65535)
                                    got, value = response_id_and_value(data)
                                    if got == rid:
                                        break
                                self.assertEqual(value, b"device-%d" % i)
                                answered += 1
                                time.sleep(0.001)  # a poller's pace: the flood keeps most of the client's time
                                break
                            except socket.timeout:
                                continue
                        else:
                            self.fail("agent %d never answered request %d during the flood" % (i, rid))
        finally:
            stop.set()
            t.join()
        kernel_drops = sum(udp_drops(a[1]) for a in agents) - sum(drops0)

        def received(m):
            return m.value("fleetsim_snmp_packets_total", direction="in") - start.value(
                "fleetsim_snmp_packets_total", direction="in")
        # Every datagram is either dropped by the kernel (a full buffer) or received and accounted for.
        m = self.scrape_until(lambda m: received(m) + kernel_drops >= sent["bad"] + valid)
        print("snmp flood: %d malformed and %d valid datagrams in 3 s to %d agents, %d answered, %d dropped by "
              "the kernel" % (sent["bad"], valid, devices, answered, kernel_drops), file=sys.stderr)
        self.assertEqual(received(m) + kernel_drops, sent["bad"] + valid)

        def delta(name, **labels):
            return m.value(name, **labels) - start.value(name, **labels)
        gets = delta("fleetsim_snmp_requests_total", type="get", result="ok")
        self.assertGreaterEqual(gets, answered)
        self.assertEqual(delta("fleetsim_snmp_requests_total", type="get", result="error"), 0)
        self.assertEqual(delta("fleetsim_snmp_dropped_total", reason="parse_error"), received(m) - gets,
                         "every malformed datagram received is counted as a parse error")
        for reason in ("bad_version", "bad_community", "not_a_request", "injected"):
            self.assertEqual(delta("fleetsim_snmp_dropped_total", reason=reason), 0, reason)
        self.assertGreater(sent["bad"], 10 * valid, "the flood should outnumber the valid requests")
        # And afterwards every agent answers at once.
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(h.scaled(2))
            for i, a in enumerate(agents):
                s.sendto(snmp_get(9000 + i), a)
                self.assertEqual(response_id_and_value(s.recvfrom(65535)[0]), (9000 + i, b"device-%d" % i))

    # ------------------------------------------------------------ a subscriber that stops reading

    def test_a_subscriber_that_stops_reading_costs_bounded_memory_and_its_drops_are_counted(self):
        f = self.fleet(devices=1, extra=["--notification-file", unbounded_notifications(self.work),
                                          "--notification-rate", "20000"])
        base_rss = rss_bytes(f.proc.pid)
        slow = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.addCleanup(slow.close)
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        slow.settimeout(h.scaled(5))
        slow.connect(f.addr(0))
        slow.sendall((h.client_hello(caps=(h.BASE10,)) + "]]>]]>").encode())
        slow.sendall(('<rpc xmlns="%s" message-id="1">%s</rpc>]]>]]>' % (h.NC_NS, SUBSCRIBE)).encode())
        rss = []
        drops = []
        deadline = time.monotonic() + 8.0
        while time.monotonic() < deadline:  # never read
            time.sleep(0.5)
            rss.append(rss_bytes(f.proc.pid))
            drops.append(self.scrape().value("fleetsim_notifications_total", state="dropped"))
        print("slow subscriber: RSS %.1f MiB at start, then %s MiB while 8 s unread; drops %s"
              % (base_rss / 2**20, [round(r / 2**20, 1) for r in rss], drops), file=sys.stderr)
        # One subscriber's queue is bounded (STREAM_SUBSCRIBER_QUEUE_MAX_BYTES, 8 MiB): once it is full
        # (well within 4 s at this rate) memory stays flat, where an unbounded queue would keep growing
        # by megabytes a second.
        slack = 2 if h.multiplier() > 1 else 1  # a sanitizer build adds its shadow memory and bookkeeping
        late = rss[len(rss) // 2:]
        self.assertLess(max(late) - late[0], slack * 2 * 2**20, "memory kept growing: %s" % rss)
        self.assertLess(max(rss) - base_rss, slack * 24 * 2**20, "memory grew by more than a full queue and slack")
        self.assertGreater(drops[-1], 0)
        self.assertGreater(drops[-1], drops[len(drops) // 2], "drops keep being counted while it does not read")
        m = self.scrape()
        n = self.assert_notification_identity(m, "with a stalled subscriber")
        self.assertGreater(n["emitted"], 6 * 20000 * 0.5, n)
        # The device answers another session at once.
        with h.RawClient(f.addr(0)).hello() as c:
            t0 = time.monotonic()
            h.assert_data(c.get_config(), "another session while the subscriber is stalled")
            self.assertLess(time.monotonic() - t0, h.scaled(1.0))
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        slow.close()
        m = self.scrape_until(lambda m: m.value("fleetsim_sessions", transport="tcp") == 0)
        self.assertEqual(m.value("fleetsim_sessions", transport="tcp"), 0)
        self.assertEqual(m.value("fleetsim_sessions_dropped_total"), 2, "the subscriber and the reader")
        self.assert_notification_identity(m, "after the subscriber left")

    # ------------------------------------------------------------ the descriptor limit

    def test_at_the_descriptor_limit_new_sessions_are_refused_with_a_log_line_and_existing_ones_keep_working(self):
        nofile = 400
        f = self.fleet(devices=2, nofile=nofile)
        established = h.RawClient(f.addr(1)).hello()
        self.addCleanup(established.close)
        h.assert_data(established.rpc(GET_RUNNING), "a session before the limit")
        held = []
        self.addCleanup(lambda: [c.close() for c in held])
        refused = None
        for _ in range(nofile):
            c = h.RawClient(f.addr(0), timeout=h.scaled(5.0))
            try:
                c.read_hello()
            except h.ConnectionClosed:  # closed before any hello: refused, the server is out of descriptors
                refused = c
                break
            held.append(c)
        self.assertIsNotNone(refused, "%d sessions under a limit of %d descriptors?" % (len(held), nofile))
        refused.close()
        print("descriptor limit %d: %d sessions open when a new one was refused" % (nofile, len(held)),
              file=sys.stderr)
        self.assertGreater(len(held), nofile // 2, "most descriptors go to sessions")
        # The refusal closes the connection first and logs after: the line may come a moment after the close.
        line = "out of file descriptors (limit %d); connection from 127.0.0.1 refused" % nofile
        h.wait_for(lambda: line in f.log(), 5, "the refusal's log line")
        # Sessions that were open keep working: one in use, and connections that only now send their hello.
        h.assert_data(established.rpc(GET_RUNNING, msg_id="2"), "the established session at the limit")
        for c in (held[0], held[len(held) // 2], held[-1]):
            c.send_raw(h.client_hello((h.BASE10,)) + "]]>]]>")
            h.assert_data(c.rpc(GET_RUNNING), "a session opened before the limit was reached")
        # More connections, to both devices (both workers), are refused at once, each counted; not one waits
        # and not one slips in (the refusal takes the reserve descriptor back before anyone else can).
        for i in range(20):
            c = h.RawClient(f.addr(i % 2), timeout=h.scaled(5.0))
            self.assertRaises(h.ConnectionClosed, c.read_hello)  # an AssertionError: it waited
            c.close()
        log = f.log()
        lines = log.count("out of file descriptors")
        self.assertGreaterEqual(lines, 1)
        self.assertLessEqual(lines, 2 * 10, "at most a line a second per worker")
        self.assertNotIn("new connections wait", log, "the spare descriptor was there: nothing had to wait")
        # Descriptors freed: new sessions are served again, and the counters say what happened.
        for c in held[-10:]:
            c.close()
        del held[-10:]
        deadline = time.monotonic() + h.scaled(5)
        while True:
            try:
                m = self.scrape()
                break
            except OSError:  # the metrics server may still be short of a descriptor
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        self.assertEqual(m.value("fleetsim_connections_refused_total", reason="descriptors"), 21)
        self.assertEqual(m.value("fleetsim_connections_refused_total", reason="address"), 0)
        for i in (0, 1):
            with h.RawClient(f.addr(i)).hello() as c:
                h.assert_data(c.rpc(GET_RUNNING), "a new session on device %d after the limit" % i)

    # ------------------------------------------------------------ SIGTERM under load

    def test_sigterm_under_load_exits_0_and_the_report_is_whole(self):
        report = os.path.join(self.work, "report.json")
        devices = 4
        f = self.fleet(devices=devices, metrics=False,
                       extra=["--report", report, "--notification-file", unbounded_notifications(self.work),
                              "--notification-rate", "2000"])
        host, port = f.addr(0)
        stress_err = open(os.path.join(self.work, "stress.err"), "w+")
        self.addCleanup(stress_err.close)
        # Far more edits than the few seconds of load take (fleetsim-stress keeps state per edit, so not
        # millions).
        stress = subprocess.Popen([stress_binary(), "edit", "--ip", host, "--port", str(port), "--edits", "300000",
                                   "--candidate-datastore", "false", "--async-requests", "true", "--pipeline",
                                   "64", "--msg-timeout", "30"],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stress_err,
                                  preexec_fn=lambda: h._child_setup(None))
        self.addCleanup(lambda: (stress.kill(), stress.wait()))
        subscribers = []
        for i in (1, 2):
            c = h.RawClient(f.addr(i)).hello()
            self.addCleanup(c.close)
            h.assert_ok(c.rpc(SUBSCRIBE), "create-subscription")
            subscribers.append(c)
        stop = threading.Event()
        bad = malformed_datagrams()
        agents = [f.addr(i) for i in range(devices)]
        reads = {"whole": 0, "broken": []}

        def flood():
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                i = 0
                while not stop.is_set():
                    s.sendto(bad[i % len(bad)] if i % 4 else snmp_get(i), agents[i % devices])
                    i += 1

        def drain(c):
            c.sock.settimeout(0.2)
            while not stop.is_set():
                try:
                    if not c.sock.recv(65536):
                        return
                except socket.timeout:
                    continue
                except OSError:
                    return

        def reader():
            # Reports written on SIGUSR1 while the load runs: every read is a whole JSON document.
            while not stop.is_set():
                try:
                    with open(report) as r:
                        text = r.read()
                except OSError:
                    continue
                try:
                    json.loads(text)
                    reads["whole"] += 1
                except ValueError:
                    reads["broken"].append(text[-200:])

        threads = [threading.Thread(target=flood), threading.Thread(target=reader)]
        threads += [threading.Thread(target=drain, args=(c,)) for c in subscribers]
        for t in threads:
            t.start()
        try:
            time.sleep(1.0)
            for _ in range(10):
                os.kill(f.proc.pid, signal.SIGUSR1)
                time.sleep(0.1)
            self.assertIsNone(stress.poll(), "the stress run should still be going")
            time.sleep(0.3)
            with open(report) as r:
                last_usr1 = {s["session"]: s["sent"] for d in json.load(r)["devices"] for s in d["subscribers"]}
            proc, f.proc = f.proc, None
            t0 = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            try:
                code = proc.wait(timeout=h.scaled(10))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                self.fail("no exit within %.0f s of SIGTERM under load; log:\n%s" % (h.scaled(10), f.log()[-3000:]))
            took = time.monotonic() - t0
        finally:
            stop.set()
            for t in threads:
                t.join(h.scaled(10))
        log = f.log()
        os.unlink(f.log_path)
        print("SIGTERM under load: exit %d after %.3f s; %d whole reads of the report while it was rewritten"
              % (code, took, reads["whole"]), file=sys.stderr)
        self.assertEqual(code, 0, log[-3000:])
        self.assertEqual(reads["broken"], [], "a reader saw a half-written report")
        self.assertGreater(reads["whole"], 0)
        self.assertEqual([n for n in os.listdir(self.work) if n.endswith(".tmp")], [], "a temporary file was left")
        with open(report) as r:
            data = json.load(r)
        # The report lists every device of the fleet; the two with subscribers sent, the others nothing.
        self.assertEqual(sorted(d["device"] for d in data["devices"]), [0, 1, 2, 3], data)
        quiet = [d for d in data["devices"] if not d.get("subscribers")]
        self.assertEqual(sorted(d["device"] for d in quiet), [0, 3], data)
        self.assertTrue(all(d["notifications"]["emitted"] == 0 for d in quiet), data)
        subs = [s for d in data["devices"] for s in d.get("subscribers", [])]
        self.assertEqual(len(subs), 2, data)
        self.assertEqual(sorted(s["session"] for s in subs), sorted(last_usr1), data)
        for s in subs:
            # Written at exit, not left over from SIGUSR1: the streams kept sending in between.
            self.assertGreater(s["sent"], last_usr1[s["session"]], (s, last_usr1))
            self.assertEqual(s["emitted"], s["sent"] + s["send_failures"] + s["dropped"] + s["suppressed"], s)
        # The stress client sees its session end (a close, or a reset when its pipelined requests were still
        # unread), not a hang.
        self.assertEqual(stress.wait(h.scaled(10)), 1)
        stress_err.seek(0)
        self.assertRegex(stress_err.read(), r"FAILED: session 0 \(device 0\): (closed-by-server|reset) ")


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2)
