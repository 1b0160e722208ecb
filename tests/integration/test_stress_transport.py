"""fleetsim-stress without --ssh detects each server's transport (issue 13: `fleetsim --device-count 100`
speaks SSH by default and `fleetsim-stress mount` used to fail there with closed-by-server): against
fleetsim's default (SSH) and against fleetsim --ssh false, mount, edit and notify succeed and the summary
and the manifest say which transport ran. An explicit --ssh true|false that does not match fails in one line
naming the option to use. A TCP server that waits for the client's hello is taken for TCP after a grace
second, and the later connections of the run do not wait again.

Run: /usr/bin/python3 test_stress_transport.py <path to fleetsim> <path to fleetsim-stress> [unittest options]
Loopback only, random ports below 32000, every wait bounded.
"""

import os
import re
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_netconf as fake  # noqa: E402
import fleetsim_harness as h  # noqa: E402

STRESS = None  # path to fleetsim-stress, from the command line
RUN_LIMIT_S = 60.0
HELLO_MS = re.compile(r"time to hello ms: p50 ([0-9.]+) p99 ([0-9.]+) max ([0-9.]+)")
FAILED = re.compile(r"^fleetsim-stress: FAILED: .*$", re.M)


def hello_ms(run):
    """(p50, max) of the time to hello, ms, from mount's summary."""
    m = HELLO_MS.search(run.out)
    assert m, run
    return float(m.group(1)), float(m.group(3))


class LateBannerProxy:
    """A loopback TCP proxy to one upstream port. Its FIRST connection plays an SSH server late with its
    version line: silent for `delay_s`, then "SSH-2.0-..." (what the client sent meanwhile is dropped, so
    the outcome does not depend on how the real server treats a bad client banner); later connections are
    passed through at once."""

    def __init__(self, upstream_port, delay_s):
        self.upstream_port = upstream_port
        self.delay_s = delay_s
        self.accepted = 0
        self.stopping = threading.Event()
        self.threads = []
        self.sockets = []  # every accepted and upstream socket, closed by close()
        for _ in range(20):
            self.port = random.randrange(h.PORT_LOW, h.PORT_HIGH)
            self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                self.listener.bind(("127.0.0.1", self.port))
                break
            except OSError:
                self.listener.close()
        self.listener.listen(8)
        self.listener.settimeout(0.05)
        self.spawn(self.accept_loop)

    def spawn(self, fn, *args):
        t = threading.Thread(target=fn, args=args, daemon=True)
        self.threads.append(t)
        t.start()

    def accept_loop(self):
        while not self.stopping.is_set():
            try:
                client, _ = self.listener.accept()
            except socket.timeout:
                continue
            client.settimeout(0.05)
            self.sockets.append(client)
            self.accepted += 1
            if self.accepted == 1:
                self.spawn(self.late_banner, client)
                continue
            server = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=5)
            server.settimeout(0.05)
            self.sockets.append(server)
            self.spawn(self.pump, client, server, 0.0)
            self.spawn(self.pump, server, client, 0.0)

    def late_banner(self, client):
        start = time.monotonic()
        sent = False
        while not self.stopping.is_set() and time.monotonic() - start < 30:
            if not sent and time.monotonic() - start >= self.delay_s:
                client.sendall(b"SSH-2.0-LateServer_1.0\r\n")
                sent = True
            try:
                if client.recv(65536) == b"":
                    break  # the client gave up on this connection
            except socket.timeout:
                pass
            except OSError:
                break

    def pump(self, src, dst, delay_s):
        start = time.monotonic()
        held = b""
        while not self.stopping.is_set() and time.monotonic() - start < 30:
            try:
                data = src.recv(65536)
            except socket.timeout:
                data = None
            except OSError:
                data = b""
            if data:
                held += data
            if held and time.monotonic() - start >= delay_s:
                try:
                    dst.sendall(held)
                except OSError:
                    break
                held = b""
            if data == b"" and (not held or time.monotonic() - start >= delay_s):
                break
        try:
            dst.shutdown(socket.SHUT_WR)  # this direction is done; the other one may still carry bytes
        except OSError:
            pass

    def close(self):
        self.stopping.set()
        for t in self.threads:
            t.join(5)
        for sock in self.sockets:
            sock.close()
        self.listener.close()


class StressTransportTests(unittest.TestCase):
    def fleet(self, ssh, extra=(), devices=3):
        """fleetsim as a newcomer starts it: no --ssh (SSH), or --ssh false."""
        state = tempfile.mkdtemp(prefix="fleetsim-transport-state-")
        self.addCleanup(shutil.rmtree, state, True)
        args = ["--state-dir", state] + ([] if ssh else ["--ssh", "false"]) + list(extra)
        f = h.Fleet(devices=devices, extra=args, default_transport=ssh).start()
        self.addCleanup(f.stop)
        return f

    def stress(self, port, mode, *args):
        work = tempfile.mkdtemp(prefix="fleetsim-transport-")
        self.addCleanup(shutil.rmtree, work, True)
        manifest = os.path.join(work, "run.json")
        argv = [mode, "--ip", "127.0.0.1", "--port", str(port), "--msg-timeout", "20",
                "--json", manifest] + [str(a) for a in args]
        return h.run_stress(STRESS, argv, manifest, RUN_LIMIT_S)

    def assert_transport(self, r, asked, used):
        p = r.manifest["parameters"]
        self.assertEqual((p["transport"], p["transport_used"], p["ssh"]), (asked, used, used == "ssh"), r)
        self.assertIn("transport: %s (%s)\n" % (used, "detected" if asked == "auto" else "as --ssh asked"),
                      r.out, r)

    def assert_one_failure_line(self, r, text):
        lines = FAILED.findall(r.err)
        self.assertEqual(len(lines), 1, r)
        self.assertIn(text, lines[0], r)
        self.assertEqual(r.manifest["results"]["failures"]["wrong-transport"], 3, r)

    def test_mount_without_ssh_detects_fleetsims_default_ssh(self):
        f = self.fleet(ssh=True)
        r = self.stress(f.port, "mount", "--device-count", 3)
        self.assertEqual(r.code, 0, r)
        self.assertIn("mounted: 3 of 3", r.out, r)
        self.assertIn("failures: none", r.out, r)
        self.assert_transport(r, "auto", "ssh")
        # The version line arrives at once: detection never waited for the grace second.
        self.assertLess(hello_ms(r)[1], 900, r)

    def test_mount_without_ssh_detects_plain_tcp(self):
        f = self.fleet(ssh=False)
        r = self.stress(f.port, "mount", "--device-count", 3, "--on-mount", "get-schema")
        self.assertEqual(r.code, 0, r)
        self.assertIn("mounted: 3 of 3", r.out, r)
        self.assert_transport(r, "auto", "tcp")
        self.assertLess(hello_ms(r)[1], 900, r)

    def test_edit_without_ssh_over_both_transports(self):
        for ssh, used in ((True, "ssh"), (False, "tcp")):
            f = self.fleet(ssh=ssh, devices=2)
            r = self.stress(f.port, "edit", "--edits", 200, "--thread-amount", 2, "--device-count", 2,
                            "--candidate-datastore", "false")
            self.assertEqual(r.code, 0, r)
            self.assertIn("200 sent, 200 answered: 200 ok, 0 rpc-error", r.out, r)
            self.assert_transport(r, "auto", used)

    def test_notify_without_ssh_over_both_transports(self):
        routes = os.path.join(h.SOURCE_DIR, "notifications", "routes-1.xml")
        with open(routes) as src:
            text = src.read().replace("<rate-per-device>10</rate-per-device>",
                                      "<rate-per-device>200</rate-per-device>")
        work = tempfile.mkdtemp(prefix="fleetsim-transport-notif-")
        self.addCleanup(shutil.rmtree, work, True)
        nfile = os.path.join(work, "routes.xml")
        with open(nfile, "w") as out:
            out.write(text)
        for ssh, used in ((True, "ssh"), (False, "tcp")):
            f = self.fleet(ssh=ssh, extra=["--notification-file", nfile], devices=2)
            r = self.stress(f.port, "notify", "--device-count", 2, "--count", 20)
            self.assertEqual(r.code, 0, r)
            # --count 20 stops once both devices delivered 20; one read may bring a few more.
            self.assertGreaterEqual(r.manifest["results"]["total_received"], 40, r)
            self.assert_transport(r, "auto", used)

    def test_ssh_false_against_ssh_names_the_option_in_one_line(self):
        f = self.fleet(ssh=True)
        r = self.stress(f.port, "mount", "--device-count", 3, "--ssh", "false")
        self.assertEqual(r.code, 1, r)
        self.assert_one_failure_line(r, ': wrong-transport (the server speaks SSH: "SSH-2.0-')
        self.assertRegex(r.err, r'"SSH-2\.0-[^"\r\n]+"; use --ssh true, or leave --ssh out to detect it\)')
        self.assertEqual(r.manifest["parameters"]["transport"], "tcp", r)
        e = self.stress(f.port, "edit", "--edits", 10, "--ssh", "false")
        self.assertEqual(e.code, 1, e)
        self.assertIn("wrong-transport (the server speaks SSH", e.err, e)

    def test_ssh_true_against_tcp_names_the_option_in_one_line(self):
        f = self.fleet(ssh=False)
        r = self.stress(f.port, "mount", "--device-count", 3, "--ssh", "true")
        self.assertEqual(r.code, 1, r)
        self.assert_one_failure_line(r, ': wrong-transport (the server speaks NETCONF over plain TCP: it sent '
                                        '"<?xml version="1.0"')
        self.assertIn("; use --ssh false, or leave --ssh out to detect it)", r.err, r)
        self.assertEqual(r.manifest["parameters"]["ssh"], True, r)

    def test_silent_tcp_server_is_taken_for_tcp_after_the_grace_once(self):
        with fake.FakeServers(fake.Script(hello_after_client=True), count=3) as servers:
            r = self.stress(servers.port, "mount", "--device-count", 3, "--concurrency", 1)
            self.assertEqual(r.code, 0, r)
            self.assertIn("mounted: 3 of 3", r.out, r)
            self.assert_transport(r, "auto", "tcp")
            p50, worst = hello_ms(r)
            # Device 0 waited the grace second; devices 1 and 2 were started as TCP at once.
            self.assertGreaterEqual(worst, 950, r)
            self.assertLess(p50, 500, r)
            self.assertTrue(servers.finished(timeout=h.scaled(10)), r)
            self.assertEqual(len(servers.connections), 3, r)
            for c in servers.connections:
                self.assertIn("<hello", c.client_hello or "", r)

    def test_ssh_server_late_with_its_version_line_is_reconnected_over_ssh(self):
        f = self.fleet(ssh=True, devices=1)
        proxy = LateBannerProxy(f.port, 1.5)
        self.addCleanup(proxy.close)
        r = self.stress(proxy.port, "mount", "--device-count", 1)
        self.assertEqual(r.code, 0, r)
        self.assertIn("mounted: 1 of 1", r.out, r)
        self.assert_transport(r, "auto", "ssh")
        # Taken for TCP after the grace second, then "SSH-2.0-..." arrived: a second connection, over SSH.
        self.assertEqual(proxy.accepted, 2, r)
        self.assertGreaterEqual(hello_ms(r)[1], 1400, r)

    def test_ssh_true_against_a_silent_tcp_server_times_out_with_a_hint(self):
        with fake.FakeServers(fake.Script(hello_after_client=True), count=1) as servers:
            r = self.stress(servers.port, "mount", "--ssh", "true", "--msg-timeout", 2)
            self.assertEqual(r.code, 1, r)
            self.assertIn("timeout (no answer within 2000 ms (the server had sent no SSH version line within "
                          "1 s: if it speaks NETCONF over plain TCP, use --ssh false))", r.err, r)

    def test_transport_options_that_do_not_fit(self):
        for args, text in ((["edit", "--ssh", "false", "--ssh-key", "/nonexistent"],
                            "--ssh-key is for SSH; it cannot be combined with --ssh false"),
                           (["mount", "--ssh", "true", "--tcp-preamble", "/nonexistent"],
                            "--tcp-preamble is for plain TCP")):
            p = subprocess.run([STRESS] + args, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=h.scaled(10))
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(text, p.stderr)
        # Detection allows --ssh-key: a key that cannot be read is still an error, before connecting.
        p = subprocess.run([STRESS, "mount", "--ssh-key", "/nonexistent"], stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=h.scaled(10))
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("--ssh-key /nonexistent", p.stderr)


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        sys.exit("usage: %s <path to fleetsim> <path to fleetsim-stress> [unittest options]" % sys.argv[0])
    STRESS = sys.argv.pop(1)
    unittest.main(verbosity=2)
