"""NETCONF over SSH (--ssh true): ncclient, paramiko and OpenSSH's client against the fleet, with
passwords right and wrong, --auth any, host keys kept across restarts, refused subsystems and shells,
and a stalled handshake that blocks nobody.

Run: /usr/bin/python3 test_ssh.py <path to fleetsim>. Loopback only, every wait bounded.
"""

import os
import shutil
import socket
import subprocess
import tempfile
import time
import unittest

import paramiko
from ncclient import manager
from ncclient.transport.errors import AuthenticationError

import fleetsim_harness as h

NC_CONFIG = ('<config xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><interfaces xmlns="%s" '
             'xmlns:ianaift="%s"><interface><name>%%s</name><type>ianaift:ethernetCsmacd</type></interface>'
             '</interfaces></config>' % (h.IF_NS, h.IANA_NS))


class SshTests(unittest.TestCase):
    def fleet(self, extra=(), devices=2, state=None):
        state = state or tempfile.mkdtemp(prefix="fleetsim-ssh-state-")
        self.addCleanup(shutil.rmtree, state, True)
        f = h.Fleet(devices=devices, extra=["--ssh", "true", "--state-dir", state] + list(extra)).start()
        self.addCleanup(f.stop)
        return f

    def connect(self, f, i=0, username="admin", password="admin"):
        host, port = f.addr(i)
        m = manager.connect(host=host, port=port, username=username, password=password, hostkey_verify=False,
                            look_for_keys=False, allow_agent=False, timeout=h.scaled(10))
        self.addCleanup(lambda: m.connected and m.close_session())
        return m

    def test_ncclient_edits_and_reads_over_ssh(self):
        f = self.fleet()
        m = self.connect(f, 1)
        self.assertIn("urn:ietf:params:netconf:base:1.1", list(m.server_capabilities))
        m.edit_config(target="running", config=NC_CONFIG % "over-ssh")
        reply = m.get_config(source="running").xml
        self.assertIn("<name>over-ssh</name>", reply)
        # The other device over plain NETCONF framing is independent.
        other = self.connect(f, 0)
        self.assertNotIn("over-ssh", other.get_config(source="running").xml)

    def test_ssh_is_the_default_transport(self):
        state = tempfile.mkdtemp(prefix="fleetsim-ssh-state-")
        self.addCleanup(shutil.rmtree, state, True)
        f = h.Fleet(devices=1, extra=["--state-dir", state], default_transport=True).start()
        self.addCleanup(f.stop)
        with socket.create_connection(f.addr(0), timeout=h.scaled(10)) as s:
            self.assertTrue(s.recv(64).startswith(b"SSH-2.0-"), "without --ssh a device should greet in SSH")
        self.assertIn("<data", self.connect(f, 0).get_config(source="running").xml)

    def test_wrong_password_is_refused_and_others_still_get_in(self):
        f = self.fleet()
        with self.assertRaises(AuthenticationError):
            self.connect(f, 0, password="not-this")
        with self.assertRaises(AuthenticationError):
            self.connect(f, 0, username="root", password="admin")
        self.assertIn("<data", self.connect(f, 0).get_config(source="running").xml)
        # Every refusal is counted in the report (SIGUSR1 writes it).
        import json
        import signal
        report = os.path.join(tempfile.mkdtemp(prefix="fleetsim-ssh-report-"), "report.json")
        self.addCleanup(shutil.rmtree, os.path.dirname(report), True)
        g = self.fleet(["--report", report])
        with self.assertRaises(AuthenticationError):
            self.connect(g, 1, password="nope")
        os.kill(g.proc.pid, signal.SIGUSR1)
        deadline = time.monotonic() + h.scaled(5)
        while not os.path.exists(report) and time.monotonic() < deadline:
            time.sleep(0.05)
        with open(report) as r:
            rows = {d["device"]: d for d in json.load(r)["devices"]}
        self.assertGreaterEqual(rows[1]["ssh_auth_failures"], 1)

    def test_custom_credentials_and_auth_any(self):
        f = self.fleet(["--username", "ops", "--password", "s3cret!"])
        self.connect(f, 0, username="ops", password="s3cret!")
        with self.assertRaises(AuthenticationError):
            self.connect(f, 0)
        g = self.fleet(["--auth", "any"])
        self.connect(g, 0, username="whoever", password="whatever")

    def host_key(self, f):
        t = paramiko.Transport(f.addr(0))
        try:
            t.connect(username="admin", password="admin")
            return t.get_remote_server_key().get_base64()
        finally:
            t.close()

    def test_host_key_is_created_once_and_kept(self):
        state = tempfile.mkdtemp(prefix="fleetsim-ssh-state-")
        self.addCleanup(shutil.rmtree, state, True)
        f = h.Fleet(devices=2, extra=["--ssh", "true", "--state-dir", state]).start()
        first = self.host_key(f)
        f.stop()
        self.assertTrue(os.path.exists(os.path.join(state, "ssh_host_ed25519_key")))
        self.assertEqual(oct(os.stat(os.path.join(state, "ssh_host_ed25519_key")).st_mode & 0o777), "0o600")
        g = h.Fleet(devices=2, extra=["--ssh", "true", "--state-dir", state]).start()
        self.addCleanup(g.stop)
        self.assertEqual(self.host_key(g), first, "a restart keeps the fleet's host key")

    def test_host_key_per_device_differs_by_device_and_survives_a_restart(self):
        state = tempfile.mkdtemp(prefix="fleetsim-ssh-state-")
        self.addCleanup(shutil.rmtree, state, True)
        args = ["--ssh", "true", "--state-dir", state, "--host-key-per-device"]
        f = h.Fleet(devices=3, extra=args).start()
        keys = [self.host_key_of(f, i) for i in range(3)]
        f.stop()
        self.assertEqual(len(set(keys)), 3, "every device its own key")
        g = h.Fleet(devices=3, extra=args).start()
        self.addCleanup(g.stop)
        self.assertEqual([self.host_key_of(g, i) for i in range(3)], keys, "a restart keeps them")
        self.assertIn("<data", self.connect(g, 2).get_config(source="running").xml)

    def test_ed25519_host_key_by_default_and_rsa_for_older_clients(self):
        f = self.fleet()
        t = paramiko.Transport(f.addr(0))
        self.addCleanup(t.close)
        t.connect(username="admin", password="admin")
        self.assertEqual(t.get_remote_server_key().get_name(), "ssh-ed25519")
        old = paramiko.Transport(f.addr(0), disabled_algorithms={"keys": ["ssh-ed25519"]})
        self.addCleanup(old.close)
        old.connect(username="admin", password="admin")
        self.assertEqual(old.get_remote_server_key().get_name(), "ssh-rsa")
        self.assertIn(b"<hello", self.netconf_hello(old))

    @staticmethod
    def netconf_hello(transport):
        """Opens the netconf subsystem on a logged-in paramiko transport; returns the server's hello."""
        ch = transport.open_session()
        ch.invoke_subsystem("netconf")
        ch.settimeout(h.scaled(5))
        data = b""
        while b"]]>]]>" not in data:
            data += ch.recv(65536)
        return data

    def host_key_of(self, f, i):
        t = paramiko.Transport(f.addr(i))
        try:
            t.connect(username="admin", password="admin")
            return t.get_remote_server_key().get_base64()
        finally:
            t.close()

    def test_other_subsystems_shells_and_commands_are_refused(self):
        f = self.fleet()

        def transport():
            t = paramiko.Transport(f.addr(0))
            self.addCleanup(t.close)
            t.connect(username="admin", password="admin")
            return t

        for attempt in (lambda ch: ch.invoke_subsystem("sftp"), lambda ch: ch.invoke_shell(),
                        lambda ch: ch.exec_command("id")):
            ch = transport().open_session()
            with self.assertRaises(paramiko.SSHException):
                attempt(ch)
        # After a refused request the same connection may still open the netconf subsystem.
        t = transport()
        refused = t.open_session()
        with self.assertRaises(paramiko.SSHException):
            refused.invoke_shell()
        refused.close()
        # paramiko wakes the caller before its transport thread has sent the refused channel's close, so
        # a new channel could reach the server first, while the old one is open (one channel at a time):
        # wait for the server's own close of it, which paramiko answers by dropping the channel.
        deadline = time.monotonic() + h.scaled(5)
        while any(c is refused for c in t._channels.values()) and time.monotonic() < deadline:
            time.sleep(0.01)
        self.assertIn(b"<hello", self.netconf_hello(t))

    def test_clients_that_disconnect_politely_leave_nothing_behind(self):
        f = self.fleet(["--threads", "1"])
        for _ in range(20):
            t = paramiko.Transport(f.addr(0))
            t.connect(username="admin", password="admin")
            t.open_session().invoke_subsystem("netconf")
            t.close()  # SSH_MSG_DISCONNECT: the server's socket may close inside libssh
        self.assertIn("<data", self.connect(f, 0).get_config(source="running").xml)
        self.assertIn("<data", self.connect(f, 1).get_config(source="running").xml)

    def test_clients_that_vanish_at_every_step_leave_no_session_behind(self):
        f = self.fleet(["--threads", "1"])
        addr = f.addr(0)

        def raw(data):
            s = socket.create_connection(addr, timeout=h.scaled(5))
            if data:
                s.sendall(data)
            s.close()

        def logged_in(password="admin"):
            t = paramiko.Transport(addr)
            try:
                t.connect(username="admin", password=password)
            except paramiko.AuthenticationException:
                pass
            return t

        def abrupt(t):
            t.sock.shutdown(socket.SHUT_RDWR)  # no SSH_MSG_DISCONNECT: the connection just ends
            t.close()

        def mid_hello():
            t = logged_in()
            ch = t.open_session()
            ch.invoke_subsystem("netconf")
            ch.sendall(b'<hello xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><capabil')
            abrupt(t)

        def mid_chunk():
            t = logged_in()
            ch = t.open_session()
            ch.invoke_subsystem("netconf")
            ch.sendall(b'<hello xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><capabilities><capability>'
                       b'urn:ietf:params:netconf:base:1.1</capability></capabilities></hello>]]>]]>'
                       b'\n#500\n<rpc message-id="1" xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><get')
            abrupt(t)

        steps = {
            "before the banner": lambda: raw(b""),
            "after the banner": lambda: raw(b"SSH-2.0-vanishing\r\n"),
            "mid key exchange": lambda: raw(b"SSH-2.0-vanishing\r\n\x00\x00\x01\x0c\x0a\x14" + b"\x00" * 40),
            "after a wrong password": lambda: logged_in("not-this").close(),
            "after login, before a channel": lambda: abrupt(logged_in()),
            "with a channel, before the subsystem": lambda: abrupt(logged_in().open_session().get_transport()),
            "mid hello": mid_hello,
            "mid chunk": mid_chunk,
        }
        for _ in range(5):
            for name, step in steps.items():
                with self.subTest(step=name):
                    step()
        # The device answers, and the only session it still lists is the one asking.
        m = self.connect(f, 0)
        deadline = time.monotonic() + h.scaled(5)
        while True:
            state = m.get(filter=("subtree", '<netconf-state xmlns="urn:ietf:params:xml:ns:yang:'
                                             'ietf-netconf-monitoring"><sessions/></netconf-state>')).xml
            if state.count("<session-id>") == 1 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        self.assertEqual(state.count("<session-id>"), 1, state)

    def test_a_stalled_handshake_blocks_no_one(self):
        f = self.fleet()
        stalled = [socket.create_connection(f.addr(0)) for _ in range(5)]  # never say a word
        half = socket.create_connection(f.addr(0))
        half.sendall(b"SSH-2.0-stalled\r\n")  # starts, then stops mid key exchange
        try:
            started = time.monotonic()
            m = self.connect(f, 0)
            self.assertIn("<data", m.get_config(source="running").xml)
            self.assertLess(time.monotonic() - started, h.scaled(3))
        finally:
            for s in stalled + [half]:
                s.close()

    def test_stalled_handshakes_and_unused_channels_are_timed_out(self):
        f = self.fleet(["--hello-timeout", "1"])
        silent = socket.create_connection(f.addr(0))  # never says a word
        half = socket.create_connection(f.addr(0))
        half.sendall(b"SSH-2.0-stalled\r\n")  # starts, then stops mid key exchange
        idle = paramiko.Transport(f.addr(1))
        self.addCleanup(idle.close)
        idle.connect(username="admin", password="admin")
        ch = idle.open_session()  # a channel that never asks for the netconf subsystem
        with self.assertRaises(paramiko.ChannelException):
            idle.open_session()  # one channel at a time
        deadline = time.monotonic() + h.scaled(10)
        for s in (silent, half):
            s.settimeout(h.scaled(10))
            try:
                while s.recv(4096):
                    pass
            except ConnectionResetError:
                pass
            s.close()
        while idle.is_active() and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertFalse(idle.is_active(), "an SSH connection whose channel never ran NETCONF should be closed")
        self.assertLess(time.monotonic() - (deadline - h.scaled(10)), h.scaled(5))
        ch.close()
        self.assertIn("<data", self.connect(f, 0).get_config(source="running").xml)

    def keypair(self, name):
        work = tempfile.mkdtemp(prefix="fleetsim-keys-")
        self.addCleanup(shutil.rmtree, work, True)
        path = os.path.join(work, name)
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", path], check=True,
                       timeout=h.scaled(20))
        return path

    def test_public_keys_in_authorized_keys_log_in_and_others_do_not(self):
        good = self.keypair("good")
        bad = self.keypair("bad")
        authorized = os.path.join(os.path.dirname(good), "authorized_keys")
        with open(authorized, "w") as a, open(good + ".pub") as pub:
            a.write("# the test's key\n" + pub.read())
        f = self.fleet(["--authorized-keys", authorized])
        host, port = f.addr(0)
        m = manager.connect(host=host, port=port, username="admin", key_filename=good, hostkey_verify=False,
                            look_for_keys=False, allow_agent=False, timeout=h.scaled(10))
        self.assertIn("<data", m.get_config(source="running").xml)
        m.close_session()
        with self.assertRaises(AuthenticationError):
            manager.connect(host=host, port=port, username="admin", key_filename=bad, hostkey_verify=False,
                            look_for_keys=False, allow_agent=False, timeout=h.scaled(10))
        p = subprocess.run(["ssh", "-i", good, "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
                            "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                            "-o", "LogLevel=ERROR", "-p", str(port), "admin@" + host, "-s", "netconf"],
                           input='<hello xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><capabilities><capability>'
                                 'urn:ietf:params:netconf:base:1.0</capability></capabilities></hello>]]>]]>'
                                 '<rpc xmlns="urn:ietf:params:xml:ns:netconf:base:1.0" message-id="1">'
                                 '<close-session/></rpc>]]>]]>',
                           capture_output=True, text=True, timeout=h.scaled(20), start_new_session=True)
        self.assertIn("<ok/>", p.stdout, p.stderr)

    def test_openssh_client_reaches_the_netconf_subsystem(self):
        f = self.fleet()
        host, port = f.addr(0)
        work = tempfile.mkdtemp(prefix="fleetsim-askpass-")
        self.addCleanup(shutil.rmtree, work, True)
        askpass = os.path.join(work, "askpass.sh")
        with open(askpass, "w") as a:
            a.write("#!/bin/sh\necho admin\n")
        os.chmod(askpass, 0o700)
        env = dict(os.environ, SSH_ASKPASS=askpass, SSH_ASKPASS_REQUIRE="force", DISPLAY=":0")
        hello = ('<hello xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><capabilities><capability>'
                 'urn:ietf:params:netconf:base:1.0</capability></capabilities></hello>]]>]]>'
                 '<rpc xmlns="urn:ietf:params:xml:ns:netconf:base:1.0" message-id="1"><close-session/></rpc>]]>]]>')
        p = subprocess.run(["ssh", "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                            "-o", "PreferredAuthentications=password", "-o", "PubkeyAuthentication=no",
                            "-o", "LogLevel=ERROR", "-p", str(port), "admin@" + host, "-s", "netconf"],
                           input=hello, capture_output=True, text=True, timeout=h.scaled(20), env=env,
                           start_new_session=True)
        self.assertIn("<hello", p.stdout, p.stderr)
        self.assertIn("<ok/>", p.stdout, p.stderr)


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2)
