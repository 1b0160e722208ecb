"""NETCONF call home (--call-home, RFC 8071): devices dial out to a manager on 127.0.0.1 and are the
server on the connection they made. libnetconf2's client (ch_client.c, nc_accept_callhome) accepts 100
devices over SSH and reads their configuration; ncclient's manager.call_home accepts one; a manager that
goes away is dialled again with backoff; --call-home-rate spreads a storm; the devices do not listen.

Run: /usr/bin/python3 test_call_home.py <path to fleetsim> <path to ch_client>. Loopback only, every wait
bounded.
"""

import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import unittest

import paramiko
from ncclient import manager

import fleetsim_harness as h

CH_CLIENT = None


class Listener:
    """A plain TCP manager: accepts every call home, notes when and from where, reads the first bytes."""

    def __init__(self, port):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(4096)
        self.sock.settimeout(0.2)
        self.accepted = []  # (monotonic time, peer address, first bytes)
        self.conns = []
        self.lock = threading.Lock()
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while self.running:
            try:
                c, peer = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            t = time.monotonic()
            c.settimeout(h.scaled(5))
            try:
                first = c.recv(64)
            except OSError:
                first = b""
            with self.lock:
                self.accepted.append((t, peer, first))
                self.conns.append(c)

    def count(self):
        with self.lock:
            return len(self.accepted)

    def wait_for(self, n, limit_s):
        deadline = time.monotonic() + h.scaled(limit_s)
        while self.count() < n and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.count()

    def drop_connections(self):
        with self.lock:
            for c in self.conns:
                c.close()
            self.conns = []

    def close(self):
        self.running = False
        self.thread.join()
        self.sock.close()
        self.drop_connections()


class CallHomeTests(unittest.TestCase):
    def fleet(self, devices, extra, threads=2):
        f = h.Fleet(devices=devices, threads=threads, extra=["--snmp", "false"] + list(extra)).start()
        self.addCleanup(f.stop)
        return f

    def ssh_fleet(self, devices, port, extra=()):
        state = tempfile.mkdtemp(prefix="fleetsim-ch-state-")
        self.addCleanup(shutil.rmtree, state, True)
        return self.fleet(devices, ["--ssh", "true", "--state-dir", state, "--call-home", "127.0.0.1:%d" % port]
                          + list(extra))

    def test_libnetconf2_accepts_100_devices(self):
        port = h.free_port()
        # libnetconf2 listens with a backlog of 5: a burst of 100 SYNs would wait for the kernel's
        # retransmissions (1 s, 3 s, 7 s, ...); --call-home-rate paces the devices to what it takes.
        client = subprocess.Popen([CH_CLIENT, str(port), "100", "admin", "admin", str(h.scaled(40))],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: client.poll() is None and client.kill())
        self.assertEqual(client.stdout.readline().strip(), "listening")
        self.ssh_fleet(100, port, ["--call-home-rate", "50"])
        out, err = client.communicate(timeout=h.scaled(60))
        self.assertEqual(client.returncode, 0, out + err)
        self.assertIn("get-config ok", out)
        self.assertIn("accepted 100", out)
        self.assertEqual(sum(1 for line in out.splitlines() if line.startswith("session ")), 100, out)

    def test_ncclient_call_home_get_config(self):
        port = h.free_port()
        result = {}

        def manage():
            try:
                with manager.call_home(host="127.0.0.1", port=port, username="admin", password="admin",
                                       hostkey_verify=False, look_for_keys=False, allow_agent=False,
                                       timeout=h.scaled(10)) as m:
                    result["config"] = m.get_config(source="running").data_xml
                    result["session_id"] = m.session_id
            except Exception as e:  # reported by the assertion below
                result["error"] = repr(e)

        t = threading.Thread(target=manage, daemon=True)
        t.start()
        time.sleep(0.3)  # call_home() binds and listens before it accepts; the device retries anyway
        self.ssh_fleet(1, port)
        t.join(h.scaled(20))
        self.assertFalse(t.is_alive(), "ncclient's call_home did not return")
        self.assertNotIn("error", result, result.get("error"))
        self.assertIn("<interfaces", result["config"])
        self.assertTrue(int(result["session_id"]) > 0)

    def test_plain_tcp_hello_and_no_netconf_listener(self):
        port = h.free_port()
        lst = Listener(port)
        self.addCleanup(lst.close)
        f = self.fleet(3, ["--call-home", "127.0.0.1:%d" % port])
        self.assertEqual(lst.wait_for(3, 10), 3)
        for _, _, first in lst.accepted:
            self.assertTrue(first.startswith(b"<?xml") or b"<hello" in first, first)
        with self.assertRaises(OSError):
            socket.create_connection(f.addr(0), timeout=2).close()

    def test_ip_per_device_dials_from_own_address(self):
        port = h.free_port()
        lst = Listener(port)
        self.addCleanup(lst.close)
        f = h.Fleet(devices=5, threads=2, ip_per_device=True, ip="127.0.3.1",
                    extra=["--snmp", "false", "--call-home", "127.0.0.1:%d" % port]).start()
        self.addCleanup(f.stop)
        self.assertEqual(lst.wait_for(5, 10), 5)
        self.assertEqual(sorted(peer[0] for _, peer, _ in lst.accepted),
                         ["127.0.3.%d" % i for i in range(1, 6)])

    def test_devices_a_scenario_grows_dial_in_as_they_join_and_absent_ones_never_dial(self):
        port = h.free_port()
        lst = Listener(port)
        self.addCleanup(lst.close)
        fd, path = tempfile.mkstemp(suffix=".json")
        self.addCleanup(os.unlink, path)
        with os.fdopen(fd, "w") as fh:
            json.dump({"fleetsim-scenario:scenario": {
                "start": [{"group": "default", "devices": 2}],
                "event": [{"name": "join", "at": "%dms" % (h.scaled(1.0) * 1000), "grow": {"devices": 2}}]}}, fh)
        f = h.Fleet(devices=6, threads=2, ip_per_device=True, ip="127.0.4.1",
                    extra=["--snmp", "false", "--call-home", "127.0.0.1:%d" % port, "--scenario", path]).start()
        self.addCleanup(f.stop)
        self.assertEqual(lst.wait_for(2, 10), 2)
        time.sleep(h.scaled(0.5))
        self.assertEqual(sorted(peer[0] for _, peer, _ in lst.accepted), ["127.0.4.1", "127.0.4.2"])
        self.assertEqual(lst.wait_for(4, 10), 4)
        time.sleep(h.scaled(1.0))
        # Devices 4 and 5 never joined: they never dialled.
        self.assertEqual(sorted(peer[0] for _, peer, _ in lst.accepted), ["127.0.4.%d" % i for i in range(1, 5)])

    def test_manager_goes_away_devices_dial_again_with_backoff(self):
        port = h.free_port()
        lst = Listener(port)
        self.fleet(20, ["--call-home", "127.0.0.1:%d" % port])
        self.assertEqual(lst.wait_for(20, 10), 20)
        # Connections dropped, listener kept: each device dials again after a jittered 0.5 to 1 s.
        dropped = time.monotonic()
        lst.drop_connections()
        self.assertEqual(lst.wait_for(40, 10), 40)
        again = sorted(t - dropped for t, _, _ in lst.accepted[20:])
        self.assertGreater(again[0], 0.4, again)
        self.assertLess(again[-1], h.scaled(1.5), again)
        self.assertGreater(again[-1] - again[0], 0.1, "no jitter: %s" % again)
        # The manager goes away entirely: dials are refused and back off; a new listener gets them all.
        lst.close()
        time.sleep(3)
        lst2 = Listener(port)
        self.addCleanup(lst2.close)
        self.assertEqual(lst2.wait_for(20, 15), 20)
        self.assertEqual(len({peer for _, peer, _ in lst2.accepted}), 20)

    def test_rate_spreads_a_storm(self):
        port = h.free_port()
        lst = Listener(port)
        self.addCleanup(lst.close)
        self.fleet(100, ["--call-home", "127.0.0.1:%d" % port, "--call-home-rate", "20"])
        self.assertEqual(lst.wait_for(100, 15), 100)
        times = sorted(t for t, _, _ in lst.accepted)
        span = times[-1] - times[0]
        self.assertGreater(span, 4.0, span)
        self.assertLess(span, h.scaled(7.0), span)
        # No second holds more than the rate allows (20, plus one token per worker at the start).
        for i, t in enumerate(times):
            within = sum(1 for u in times[i:] if u - t < 1.0)
            self.assertLessEqual(within, 23, "%d connections within 1 s from %.2f" % (within, t))

    def test_odl_callhome_inventory_lists_the_keys_devices_present(self):
        state = tempfile.mkdtemp(prefix="fleetsim-ch-state-")
        self.addCleanup(shutil.rmtree, state, True)
        inv = os.path.join(state, "allowed.json")
        keys = ["--ssh", "true", "--state-dir", state, "--host-key-per-device", "--host-key-type", "ecdsa"]
        code, out = h.run_fleetsim(["--device-count", "3", "--emit-inventory", inv, "--inventory-format",
                                    "odl-callhome"] + keys, timeout=h.scaled(10))
        self.assertEqual(code, 0, out)
        with open(inv) as f:
            devices = json.load(f)["odl-netconf-callhome-server:netconf-callhome-server"]["allowed-devices"]["device"]
        self.assertEqual([d["unique-id"] for d in devices], ["17830-sim-device", "17831-sim-device",
                                                             "17832-sim-device"])
        self.assertEqual(len({d["ssh-host-key"] for d in devices}), 3)
        # The devices calling home present exactly those keys (paramiko as the manager's SSH client).
        port = h.free_port()
        srv = socket.socket()
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("127.0.0.1", port))
        srv.listen(16)
        srv.settimeout(h.scaled(10))
        self.addCleanup(srv.close)
        self.fleet(3, keys + ["--call-home", "127.0.0.1:%d" % port])
        seen = set()
        for _ in range(3):
            c, _ = srv.accept()
            t = paramiko.Transport(c)
            t.start_client(timeout=h.scaled(10))
            key = t.get_remote_server_key()
            self.assertEqual(key.get_name(), "ecdsa-sha2-nistp256")
            seen.add(key.get_base64())
            t.close()
        self.assertEqual(seen, {d["ssh-host-key"] for d in devices})
        code, out = h.run_fleetsim(["--emit-inventory", inv, "--inventory-format", "odl-callhome"],
                                   timeout=h.scaled(10))
        self.assertEqual(code, 2, out)
        self.assertIn("--host-key-per-device", out)

    def test_bad_call_home_is_one_line_error(self):
        for bad in ("example.com", "127.0.0.1:0", "127.0.0.1:70000", "0.0.0.0", "127.0.0.1:x"):
            p = subprocess.run([h.BINARY, "--call-home", bad], capture_output=True, text=True, timeout=10)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            self.assertIn("--call-home", p.stderr)


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    if len(os.sys.argv) < 2 or not os.access(os.sys.argv[1], os.X_OK):
        os.sys.exit("usage: test_call_home.py <path to fleetsim> <path to ch_client> [unittest options]")
    CH_CLIENT = os.path.abspath(os.sys.argv.pop(1))
    unittest.main(verbosity=2)
