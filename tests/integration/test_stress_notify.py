"""fleetsim-stress notify and reconcile end to end, against a small scripted notifying server.

NotifyServers (below) listens on `count` consecutive ports of 127.0.0.1 (device i on port + i).
Each connection: sends a hello (with or without the RFC 5277 notification capability), reads the
client's hello and its create-subscription, answers <ok/> or an rpc-error, then sends the device's
notifications, each numbered by a <seq> element, written in pieces of random sizes so that the
client's framing layer sees messages split anywhere. Everything the client sent is recorded, and
so is the client's address of each session (notify's manifest must report it as "local").

reconcile is checked on hand-written simulator reports against a real notify manifest.
Every run is bounded; ports are random, below 32000, loopback only.

Run: /usr/bin/python3 test_stress_notify.py <path to fleetsim-stress> [unittest options]
"""

import json
import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402

STRESS = None
RUN_LIMIT_S = 30.0
NOTIF_NS = "urn:ietf:params:xml:ns:netconf:notification:1.0"
NOTIF_CAP = "urn:ietf:params:netconf:capability:notification:1.0"
NETMOD_NOTIF_NS = "urn:ietf:params:xml:ns:netmod:notification"
EOM = b"]]>]]>"
CHUNK_HEADER = re.compile(rb"\n#([1-9][0-9]{0,9})\n")
CONNECTION_LIMIT_S = 40.0
POLL_S = 0.05


def notification(seq, body=None):
    body = body or '<ping xmlns="urn:example:fake"><seq>%d</seq></ping>' % seq
    return ('<notification xmlns="%s"><eventTime>2026-01-01T00:00:%02d.000Z</eventTime>%s</notification>'
            % (NOTIF_NS, seq % 60, body))


def replay_complete():
    return notification(0, '<replayComplete xmlns="%s"/>' % NETMOD_NOTIF_NS)


class Device:
    """What one device does (all optional)."""

    def __init__(self, seqs=(), caps_notification=True, error_tag=None, replay_complete=None, then="stay",
                 in_flight=()):
        self.seqs = list(seqs)                  # sequence numbers of the notifications, in sending order
        self.caps_notification = caps_notification
        self.error_tag = error_tag              # answer create-subscription with this rpc-error
        self.replay_complete = replay_complete  # a replayComplete after this many notifications
        self.then = then                        # "stay": keep the session open; "close": close it
        self.in_flight = list(in_flight)        # sent before the reply to close-session (written before the
                                                # server read the close), then the session ends


class Session:
    def __init__(self, device):
        self.device = device
        self.peer = None          # the client's address, "ip:port"
        self.rpcs = []            # requests received (text)
        self.chunked = False
        self.error = None


class NotifyServers:
    def __init__(self, devices):
        self.devices = devices
        self.count = len(devices)
        self.port = None
        self.listeners = []
        self.sessions = []
        self.threads = []
        self.stopping = threading.Event()
        self.lock = threading.Lock()

    def __enter__(self):
        rng = random.Random()
        for _ in range(20):
            port = rng.randrange(h.PORT_LOW, h.PORT_HIGH - self.count)
            socks = []
            try:
                for i in range(self.count):
                    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                    socks.append(s)
                    s.bind(("127.0.0.1", port + i))
                    s.listen(64)
                    s.settimeout(POLL_S)
            except OSError:
                for s in socks:
                    s.close()
                continue
            self.port = port
            self.listeners = socks
            for i, s in enumerate(socks):
                t = threading.Thread(target=self._accept, args=(i, s), daemon=True)
                self.threads.append(t)
                t.start()
            return self
        raise AssertionError("no free range of %d ports" % self.count)

    def __exit__(self, *exc):
        self.stopping.set()
        for t in list(self.threads):
            t.join(timeout=h.scaled(5))
        for s in self.listeners:
            s.close()
        stuck = [t.name for t in self.threads if t.is_alive()]
        if stuck and exc[0] is None:
            raise AssertionError("server threads did not end: %s" % stuck)
        return False

    def _accept(self, i, listener):
        while not self.stopping.is_set():
            try:
                sock, addr = listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            sess = Session(i)
            sess.peer = "%s:%d" % addr
            with self.lock:
                self.sessions.append(sess)
            t = threading.Thread(target=self._serve, args=(sock, sess), daemon=True)
            with self.lock:
                self.threads.append(t)
            t.start()

    def _serve(self, sock, sess):
        try:
            _Conn(self, sock, sess).run()
        except (OSError, ValueError, ET.ParseError) as e:
            sess.error = str(e)
        finally:
            sock.close()


class _Conn:
    def __init__(self, servers, sock, sess):
        self.servers = servers
        self.sock = sock
        self.sess = sess
        self.dev = servers.devices[sess.device]
        self.buf = b""
        self.eof = False
        self.deadline = time.monotonic() + h.scaled(CONNECTION_LIMIT_S)
        sock.settimeout(POLL_S)

    def stopped(self):
        return self.servers.stopping.is_set() or time.monotonic() > self.deadline or self.eof

    def fill(self):
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            return
        except ConnectionResetError:
            data = b""
        if not data:
            self.eof = True
        self.buf += data

    def message(self, chunked):
        while not self.stopped():
            if not chunked and EOM in self.buf:
                msg, _, self.buf = self.buf.partition(EOM)
                return msg
            if chunked:
                m = CHUNK_HEADER.match(self.buf)
                if m and len(self.buf) >= m.end() + int(m.group(1)) + 4:
                    end = m.end() + int(m.group(1))
                    if self.buf[end:end + 4] == b"\n##\n":
                        msg, self.buf = self.buf[m.end():end], self.buf[end + 4:]
                        return msg
            self.fill()
        return None

    def frame(self, xml):
        data = xml.encode()
        return b"\n#%d\n%s\n##\n" % (len(data), data) if self.sess.chunked else data + EOM

    def send_split(self, data):
        """Write in pieces of random sizes (1..200 bytes), so messages arrive split anywhere."""
        rng = random.Random(self.sess.device)
        pos = 0
        while pos < len(data):
            n = rng.randint(1, 200)
            self.sock.sendall(data[pos:pos + n])
            pos += n

    def run(self):
        caps = [h.BASE10, h.BASE11] + ([NOTIF_CAP] if self.dev.caps_notification else [])
        hello = ('<hello xmlns="%s"><capabilities>%s</capabilities><session-id>%d</session-id></hello>'
                 % (h.NC_NS, "".join("<capability>%s</capability>" % c for c in caps), 100 + self.sess.device))
        self.sock.sendall(hello.encode() + EOM)
        msg = self.message(False)
        if msg is None:
            return
        client_caps = [c.text for c in ET.fromstring(msg).iter("{%s}capability" % h.NC_NS)]
        self.sess.chunked = h.BASE11 in client_caps
        while not self.stopped():
            msg = self.message(self.sess.chunked)
            if msg is None:
                return
            self.sess.rpcs.append(msg.decode())
            root = ET.fromstring(msg)
            mid = root.get("message-id")
            if root.find("{%s}close-session" % h.NC_NS) is not None:
                out = [self.frame(notification(s)) for s in self.dev.in_flight]
                out.append(self.frame('<rpc-reply xmlns="%s" message-id="%s"><ok/></rpc-reply>' % (h.NC_NS, mid)))
                self.send_split(b"".join(out))
                return
            if self.dev.error_tag:
                body = ('<rpc-error><error-type>protocol</error-type><error-tag>%s</error-tag>'
                        '<error-severity>error</error-severity></rpc-error>' % self.dev.error_tag)
            else:
                body = "<ok/>"
            out = [self.frame('<rpc-reply xmlns="%s" message-id="%s">%s</rpc-reply>' % (h.NC_NS, mid, body))]
            if not self.dev.error_tag:
                for i, s in enumerate(self.dev.seqs):
                    if i == self.dev.replay_complete:
                        out.append(self.frame(replay_complete()))
                    out.append(self.frame(notification(s)))
            self.send_split(b"".join(out))
            if self.dev.then == "close":
                return
        # Stay: read until the client closes (bounded).


def run_notify(args, timeout=RUN_LIMIT_S):
    fd, path = tempfile.mkstemp(prefix="fleetsim-notify-", suffix=".json")
    os.close(fd)
    os.unlink(path)
    cmd = [STRESS, "notify"] + [str(a) for a in args] + ["--json", path]
    try:
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=h.scaled(timeout))
    except subprocess.TimeoutExpired as e:
        raise AssertionError("%s did not end within %.0f s:\n%s\n%s" % (cmd, h.scaled(timeout), e.stdout, e.stderr))
    manifest = None
    if os.path.exists(path):
        with open(path) as f:
            text = f.read()
        os.unlink(path)
        manifest = json.loads(text)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode(), manifest


def run_reconcile(sent, received, *extra, manifest=None):
    """reconcile --sent --received; (exit, stdout, stderr). With manifest=[] its --json is appended to it."""
    with tempfile.TemporaryDirectory() as d:
        sp = os.path.join(d, "sent.json")
        rp = os.path.join(d, "received.json")
        jp = os.path.join(d, "reconcile.json")
        with open(sp, "w") as f:
            f.write(sent if isinstance(sent, str) else json.dumps(sent))
        with open(rp, "w") as f:
            f.write(received if isinstance(received, str) else json.dumps(received))
        argv = [STRESS, "reconcile", "--sent", sp, "--received", rp] + list(extra)
        proc = subprocess.run(argv + (["--json", jp] if manifest is not None else []),
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=h.scaled(RUN_LIMIT_S))
        if manifest is not None and os.path.exists(jp):
            with open(jp) as f:
                manifest.append(json.load(f))
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


RECON_LINE = re.compile(r"^(OK|LOSS|DUP|MISSING|PHANTOM) +(?:device (\d+) ([\d.]+):(\d+)|port (\d+)) "
                        r"(?:local \S+ sent (\d+|-) received (\d+) duplicates (\d+)"
                        r"|node \S+ accepted (\d+) edit-config received (\d+))")


def reconcile_lines(out):
    """reconcile's device lines (both joins), as the manifest's rows: class, device, address, port, sent,
    received, duplicates."""
    rows = []
    for line in out.splitlines():
        if line.startswith(("totals", "BROKEN")):
            continue
        m = RECON_LINE.match(line)
        assert m, "not a device line: %r" % line
        g = m.groups()
        num = lambda v: None if v in (None, "-") else int(v)  # noqa: E731
        rows.append({"class": g[0], "device": num(g[1]), "address": g[2], "port": num(g[3] or g[4]),
                     "sent": num(g[5]) if g[8] is None else int(g[8]),
                     "received": int(g[6] if g[6] is not None else g[9]), "duplicates": int(g[7] or 0)})
    return rows


def manifest_rows(manifest):
    """The manifest's device rows with the fields a printed line shows."""
    keys = ("class", "device", "address", "port", "sent", "received", "duplicates")
    return [{k: d[k] for k in keys} for d in manifest["devices"]]


def report_row(sent, emitted=None, dropped=0):
    return {"emitted": sent + dropped if emitted is None else emitted, "sent": sent, "send_failures": 0,
            "dropped": dropped, "suppressed": 0}


def report_device(i, port, sent, peers=(), address="127.0.0.1"):
    row = report_row(sent)
    return {"device": i, "address": address, "port": port, "notifications": row,
            "subscribers": [dict(session=7 + n, peer=p, **report_row(s)) for n, (p, s) in enumerate(peers)],
            "trap_sinks": []}


class NotifyCase(unittest.TestCase):
    maxDiff = None

    def explain(self, rc, out, err, manifest):
        return "exit %s\n--- stdout\n%s--- stderr\n%s--- manifest\n%s" % (
            rc, out, err, json.dumps(manifest, indent=1) if manifest else "(none)")

    def rate_line(self, out):
        m = re.search(r"^Notifications per second: ([0-9.]+)$", out, re.M)
        self.assertIsNotNone(m, out)
        return float(m.group(1))

    def test_gap_and_duplicate_are_counted_per_device_and_fail_the_run(self):
        n = 50
        devices = [Device(range(1, n + 1)),
                   Device([s for s in range(1, n + 1) if s != 20]),          # skips 20
                   Device(list(range(1, 31)) + [30] + list(range(31, n + 1))),  # 30 twice
                   Device(range(1, n + 1))]
        with NotifyServers(devices) as srv:
            rc, out, err, m = run_notify(["--port", srv.port, "--device-count", 4, "--seq-element", "seq",
                                          "--idle-timeout", 1])
            why = self.explain(rc, out, err, m)
            self.assertEqual(rc, 1, why)
            self.rate_line(out)
            peers = {s.device: s.peer for s in srv.sessions}
        devs = m["devices"]
        self.assertEqual([d["received"] for d in devs], [50, 49, 51, 50], why)
        self.assertEqual([d["gaps"] for d in devs], [0, 1, 0, 0], why)
        self.assertEqual([d["missing"] for d in devs], [0, 1, 0, 0], why)
        self.assertEqual([d["duplicates"] for d in devs], [0, 0, 1, 0], why)
        self.assertEqual([d["reordered"] for d in devs], [0, 0, 0, 0], why)
        self.assertEqual([(d["first_seq"], d["last_seq"]) for d in devs], [(1, 50)] * 4, why)
        self.assertEqual([d["failure"] for d in devs], [None] * 4, why)
        for d in devs:
            self.assertEqual(d["address"], "127.0.0.1")
            self.assertEqual(d["port"], srv.port + d["device"])
            self.assertEqual(d["local"], peers[d["device"]], why)
        r = m["results"]
        self.assertEqual(r["total_received"], 200, why)
        self.assertEqual(sum(m["buckets"]), 200, why)
        self.assertEqual((r["subscribed"], r["failed"], r["ended"]), (4, 0, "idle"), why)
        self.assertEqual(r["order"], {"checked": True, "gaps": 1, "missing": 1, "duplicates": 1, "reordered": 0,
                                      "unnumbered": 0}, why)
        self.assertEqual(r["received_per_device"], {"min": 49, "median": 50, "max": 51}, why)
        self.assertIn("gaps 1 (missing 1), duplicates 1, reordered 0", out)
        self.assertIn("per device min 49 median 50 max 51", out)
        self.assertEqual(m["parameters"]["seq_element"], "seq")
        self.assertEqual(m["parameters"]["stream"], "NETCONF")

    def test_count_reached_on_every_device_exits_0(self):
        for legacy in (False, True):
            devices = [Device(range(1, 41), replay_complete=10) for _ in range(3)]
            with NotifyServers(devices) as srv:
                args = ["--port", srv.port, "--device-count", 3, "--count", 40, "--seq-element", "seq",
                        "--concurrency", 2]
                if legacy:
                    args.append("--legacy-framing")
                started = time.monotonic()
                rc, out, err, m = run_notify(args)
                why = self.explain(rc, out, err, m)
                self.assertEqual(rc, 0, why)
                self.assertLess(time.monotonic() - started, h.scaled(5), why)  # not the idle timeout
                self.assertEqual(all(s.chunked != legacy for s in srv.sessions), True)
            self.assertEqual(m["results"]["ended"], "count", why)
            self.assertEqual(m["results"]["total_received"], 120, why)
            self.assertEqual(m["results"]["replay_complete"], 3, why)
            self.assertGreater(self.rate_line(out), 0, why)
            self.assertIn("ended: count after", out)

    def test_create_subscription_carries_stream_filter_and_times(self):
        with NotifyServers([Device(range(1, 4))]) as srv:
            rc, out, err, m = run_notify(["--port", srv.port, "--stream", "fleet&co", "--filter-xpath",
                                          "/if:interfaces[x=\"1\"]", "--start-time", "2026-01-01T00:00:00Z",
                                          "--stop-time", "2026-01-02T00:00:00Z", "--idle-timeout", 1])
            why = self.explain(rc, out, err, m)
            rpcs = [r for s in srv.sessions for r in s.rpcs]
        # The subscription, then the close-session that ends the run.
        self.assertEqual(len(rpcs), 2, why)
        self.assertIn("<close-session/>", rpcs[1], why)
        root = ET.fromstring(rpcs[0])
        cs = root.find("{%s}create-subscription" % NOTIF_NS)
        self.assertIsNotNone(cs, rpcs[0])
        self.assertEqual(cs.findtext("{%s}stream" % NOTIF_NS), "fleet&co")
        self.assertEqual(cs.find("{%s}filter" % NOTIF_NS).get("type"), "xpath")
        self.assertEqual(cs.find("{%s}filter" % NOTIF_NS).get("select"), "/if:interfaces[x=\"1\"]")
        self.assertEqual(cs.findtext("{%s}startTime" % NOTIF_NS), "2026-01-01T00:00:00Z")
        self.assertEqual(cs.findtext("{%s}stopTime" % NOTIF_NS), "2026-01-02T00:00:00Z")
        # With --stop-time the run should end by notificationComplete; idle is not the asked-for end.
        self.assertEqual(rc, 1, why)
        self.assertEqual(m["results"]["ended"], "idle", why)

    def test_notifications_before_the_close_session_reply_are_counted(self):
        # The run ends at --count 3 with close-session; the server had written 4 and 5 before it read the
        # close, so its report counts them as sent: notify must read them too, or reconcile says LOSS.
        with NotifyServers([Device(range(1, 4), in_flight=[4, 5])]) as srv:
            rc, out, err, m = run_notify(["--port", srv.port, "--count", 3, "--seq-element", "seq"])
            rpcs = [r for s in srv.sessions for r in s.rpcs]
        why = self.explain(rc, out, err, m)
        self.assertEqual(rc, 0, why)
        self.assertEqual(m["results"]["ended"], "count", why)
        self.assertIn("<close-session/>", rpcs[-1], why)
        dev = m["devices"][0]
        self.assertEqual((dev["received"], dev["last_seq"], dev["gaps"]), (5, 5, 0), why)

    def test_subtree_filter_is_sent_inside_the_filter_element(self):
        with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False) as f:
            f.write('<ping xmlns="urn:example:fake"/>')
        try:
            with NotifyServers([Device(range(1, 3))]) as srv:
                rc, out, err, m = run_notify(["--port", srv.port, "--filter-subtree", f.name, "--idle-timeout", 1])
                rpcs = [r for s in srv.sessions for r in s.rpcs]
        finally:
            os.unlink(f.name)
        self.assertEqual(rc, 0, self.explain(rc, out, err, m))
        flt = ET.fromstring(rpcs[0]).find("{%s}create-subscription/{%s}filter" % (NOTIF_NS, NOTIF_NS))
        self.assertEqual(flt.get("type"), "subtree")
        self.assertIsNotNone(flt.find("{urn:example:fake}ping"))

    def test_missing_capability_and_refused_subscription_fail_their_devices(self):
        devices = [Device(range(1, 6)), Device(range(1, 6), caps_notification=False),
                   Device(range(1, 6), error_tag="operation-not-supported")]
        with NotifyServers(devices) as srv:
            rc, out, err, m = run_notify(["--port", srv.port, "--device-count", 3, "--idle-timeout", 1])
        why = self.explain(rc, out, err, m)
        self.assertEqual(rc, 1, why)
        fails = [d["failure"] for d in m["devices"]]
        self.assertIsNone(fails[0], why)
        self.assertIn(NOTIF_CAP, fails[1], why)
        self.assertIn("operation-not-supported", fails[2], why)
        self.assertEqual([d["received"] for d in m["devices"]], [5, 0, 0], why)
        self.assertEqual((m["results"]["subscribed"], m["results"]["failed"]), (1, 2), why)
        self.assertIn("no-notification-capability 1", out)
        self.assertIn("subscription-refused 1", out)

    def test_connection_lost_and_refused_fail_their_devices(self):
        devices = [Device(range(1, 6)), Device(range(1, 6), then="close")]
        with NotifyServers(devices) as srv:
            rc, out, err, m = run_notify(["--port", srv.port, "--device-count", 3, "--idle-timeout", 1])
        why = self.explain(rc, out, err, m)
        self.assertEqual(rc, 1, why)
        fails = [d["failure"] for d in m["devices"]]
        self.assertIsNone(fails[0], why)
        self.assertTrue(fails[1].startswith("closed-by-server"), why)
        self.assertTrue(fails[2].startswith("refused"), why)
        self.assertEqual(m["devices"][1]["received"], 5, why)

    def test_usage_errors_exit_2(self):
        for args in (["--count", 1, "--duration", 1], ["--filter-xpath", "/a", "--filter-subtree", "f"],
                     ["--seq-element", "a:b"], ["--idle-timeout", "x"]):
            proc = subprocess.run([STRESS, "notify"] + [str(a) for a in args], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, timeout=h.scaled(10))
            self.assertEqual(proc.returncode, 2, (args, proc.stderr))
        for args in (["--sent", "x"], ["--received", "x"], ["--sent", "x", "--received", "y", "--tolerance", "5x"]):
            proc = subprocess.run([STRESS, "reconcile"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  timeout=h.scaled(10))
            self.assertEqual(proc.returncode, 2, (args, proc.stderr))

    # ------------------------------------------------------------ reconcile

    def notify_manifest(self):
        """A real manifest: 5 devices with 10, 10, 10 (one duplicated: 11), 0 and 10 notifications."""
        devices = [Device(range(1, 11)), Device(range(1, 11)),
                   Device(list(range(1, 6)) + [5] + list(range(6, 11))), Device(()), Device(range(1, 11))]
        with NotifyServers(devices) as srv:
            rc, out, err, m = run_notify(["--port", srv.port, "--device-count", 5, "--seq-element", "seq",
                                          "--idle-timeout", 1])
        self.assertEqual(rc, 1, self.explain(rc, out, err, m))  # the duplicate
        return m

    def lines(self, out):
        return {int(re.search(r"device (\d+) ", l).group(1)): l.split()[0]
                for l in out.splitlines() if not l.startswith(("totals", "BROKEN"))}

    def test_reconcile_classifies_every_device(self):
        m = self.notify_manifest()
        port = m["parameters"]["port"]
        local = [d["local"] for d in m["devices"]]
        report = {"tool": "fleetsim", "version": "0.1.0", "devices": [
            report_device(0, port, 10, [(local[0], 10), ("127.0.0.1:1", 4)]),  # OK (another subscriber too)
            report_device(1, port + 1, 12, [(local[1], 12)]),                  # LOSS
            report_device(2, port + 2, 10, [(local[2], 10)]),                  # DUP (a duplicate)
            report_device(3, port + 3, 10, [(local[3], 10)]),                  # MISSING: received 0
            report_device(4, port + 4, 10, [("127.0.0.1:2", 10)]),             # PHANTOM: unknown subscriber
            report_device(5, port + 5, 3, [("127.0.0.1:3", 3)]),               # MISSING: not in the manifest
        ]}
        rc, out, err = run_reconcile(report, m)
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(self.lines(out), {0: "OK", 1: "LOSS", 2: "DUP", 3: "MISSING", 4: "PHANTOM", 5: "MISSING"},
                         out)
        self.assertIn("totals: OK 1, LOSS 1, DUP 1, MISSING 2, PHANTOM 1; broken report rows 0", out)
        self.assertRegex(out, r"LOSS +device 1 127\.0\.0\.1:%d local %s sent 12 received 10" % (port + 1, local[1]))
        # --json: the same lines (printed as before), one row each, and the totals.
        got = []
        rc2, out2, err2 = run_reconcile(report, m, "--tolerance", "0", manifest=got)
        self.assertEqual((rc2, out2, err2), (rc, out, err))
        r = got[0]
        self.assertEqual((r["tool"], r["mode"], r["parameters"]["join"], r["parameters"]["tolerance"]),
                         ("fleetsim-stress", "reconcile", "notify", 0))
        self.assertTrue(r["parameters"]["report"].endswith("sent.json"), r["parameters"])
        self.assertTrue(r["parameters"]["received"].endswith("received.json"), r["parameters"])
        self.assertEqual(manifest_rows(r), reconcile_lines(out))
        self.assertEqual(len(r["devices"]), 6)
        self.assertEqual(r["results"]["counts"], {"OK": 1, "LOSS": 1, "DUP": 1, "MISSING": 2, "PHANTOM": 1})
        self.assertEqual((r["results"]["broken_report_rows"], r["results"]["exit"], r["results"]["devices"],
                          r["results"]["devices_truncated"]), (0, 1, 6, False))
        self.assertEqual(r["results"]["sent"], sum(d["sent"] for d in r["devices"]))
        self.assertEqual(r["results"]["received"], sum(d["received"] for d in r["devices"]))
        self.assertEqual(r["devices"][5]["note"], "not in the received manifest")
        self.assertIsNone(r["scenario"])

    def test_reconcile_all_ok_within_tolerance_exits_0(self):
        m = self.notify_manifest()
        m["devices"][2]["duplicates"] = 0
        m["devices"][2]["received"] = 10
        port = m["parameters"]["port"]
        local = [d["local"] for d in m["devices"]]
        sent = [10, 10, 10, 0, 10]
        report = {"devices": [report_device(i, port + i, sent[i], [(local[i], sent[i])]) for i in range(5)]}
        rc, out, err = run_reconcile(report, m)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("totals: OK 5, LOSS 0, DUP 0, MISSING 0, PHANTOM 0", out)
        # 995 of 1000 is 0.5 % short: LOSS without a tolerance, OK with 0.5 %; 994 is beyond it.
        report["devices"][0]["notifications"] = report_row(1000)
        report["devices"][0]["subscribers"][0].update(report_row(1000))
        m["devices"][0]["received"] = 995
        rc, out, err = run_reconcile(report, m)
        self.assertEqual((rc, self.lines(out)[0]), (1, "LOSS"), out + err)
        rc, out, err = run_reconcile(report, m, "--tolerance", "0.5%")
        self.assertEqual((rc, self.lines(out)[0]), (0, "OK"), out + err)
        m["devices"][0]["received"] = 1005
        rc, out, err = run_reconcile(report, m, "--tolerance", "0.005")
        self.assertEqual((rc, self.lines(out)[0]), (0, "OK"), out + err)
        m["devices"][0]["received"] = 1006
        rc, out, err = run_reconcile(report, m, "--tolerance", "0.5%")
        self.assertEqual((rc, self.lines(out)[0]), (1, "DUP"), out + err)
        m["devices"][0]["received"] = 994
        rc, out, err = run_reconcile(report, m, "--tolerance", "0.5%")
        self.assertEqual((rc, self.lines(out)[0]), (1, "LOSS"), out + err)

    def test_reconcile_reports_a_device_the_report_does_not_list_and_broken_rows(self):
        m = self.notify_manifest()
        port = m["parameters"]["port"]
        local = [d["local"] for d in m["devices"]]
        report = {"devices": [report_device(i, port + i, 10, [(local[i], 10)]) for i in range(3)]}
        report["devices"][0]["notifications"]["emitted"] = 11  # breaks emitted = sent + ...
        got = []
        rc, out, err = run_reconcile(report, m, manifest=got)
        self.assertEqual(rc, 1, out + err)
        # notify's devices the report does not list: rows with no sent; the broken row is counted.
        self.assertEqual(manifest_rows(got[0]), reconcile_lines(out))
        self.assertEqual([d["sent"] for d in got[0]["devices"]], [10, 10, 10, None, None])
        self.assertEqual(got[0]["results"]["broken_report_rows"], 1)
        kinds = self.lines(out)
        self.assertEqual(kinds[3], "PHANTOM", out)
        self.assertEqual(kinds[4], "PHANTOM", out)
        self.assertRegex(out, r"BROKEN +device 0 127\.0\.0\.1:%d: emitted 11 != sent 10" % port)
        self.assertIn("broken report rows 1", out)

    def test_reconcile_manifest_keeps_the_first_100000_rows_and_says_so(self):
        n = 100003
        devices = [{"device": i, "address": "10.%d.%d.%d" % (i >> 16, (i >> 8) & 255, i & 255), "port": 830,
                    "notifications": report_row(0)} for i in range(n)]
        got = []
        rc, out, err = run_reconcile({"devices": devices}, {"devices": []}, manifest=got)
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(out.splitlines()), n + 1)  # every line is printed all the same
        r = got[0]["results"]
        self.assertEqual((r["devices"], r["devices_kept"], r["devices_truncated"]), (n, 100000, True))
        self.assertEqual(r["counts"]["OK"], n)
        self.assertEqual(len(got[0]["devices"]), 100000)
        self.assertEqual(got[0]["devices"][-1]["device"], 99999)

    def test_reconcile_unreadable_input_exits_2(self):
        m = {"devices": []}
        for bad in ('{"devices": [', '{"devices": [1,]}', '{"nodevices": []}', "[]"):
            got = []
            rc, out, err = run_reconcile(bad, m, manifest=got)
            self.assertEqual(rc, 2, (bad, out, err))
            self.assertEqual(got, [])  # nothing joined: no manifest
        rc, out, err = run_reconcile('{"devices": [', m)
        self.assertIn("line 1 column 14", err)


if __name__ == "__main__":
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        sys.exit("usage: %s <path to fleetsim-stress> [unittest options]" % sys.argv[0])
    STRESS = sys.argv.pop(1)
    unittest.main()
