"""Per-device host keys of each --host-key-type, RSA above all (OpenDaylight's call-home allow-list takes
ssh-rsa, ssh-dss and ecdsa-sha2-nistp256 only): paramiko and OpenSSH's ssh-keyscan see, for every
device, the key the odl-callhome inventory lists for it; a second run with the same state folder gives
the same keys; libnetconf2's call-home manager (ch_client.c) accepts devices with RSA keys and is shown
exactly the listed keys.

Run: /usr/bin/python3 test_host_key_types.py <path to fleetsim> <path to ch_client>. Loopback only,
every wait bounded.
"""

import base64
import hashlib
import hmac
import json
import os
import struct
import shutil
import subprocess
import tempfile
import unittest

import paramiko

import fleetsim_harness as h

CH_CLIENT = None
WIRE_NAME = {"ed25519": "ssh-ed25519", "ecdsa": "ecdsa-sha2-nistp256", "rsa": "ssh-rsa"}


def derive_rsa_n(secret, index, bits=2048):
    """n of device @index's RSA key, re-derived here from the search docs/ARCHITECTURE.md describes
    (Python's own integers: an oracle independent of OpenSSL's)."""
    small = [p for p in range(3, 4096) if all(p % q for q in range(3, int(p ** 0.5) + 1, 2))]

    def probable_prime(w):
        d, s = w - 1, 0
        while d % 2 == 0:
            d, s = d // 2, s + 1
        for a in [2] + small[:7]:
            x = pow(a, d, w)
            if x in (1, w - 1):
                continue
            for _ in range(s - 1):
                x = x * x % w
                if x == w - 1:
                    break
            else:
                return False
        return True

    def prime(which, other):
        half = bits // 2
        for draw in range(1 << 20):
            stream = b"".join(hmac.new(secret, b"rsa" + struct.pack(">IBII", index, which, draw, c),
                                       hashlib.sha256).digest() for c in range((half // 8 + 31) // 32))
            p = int.from_bytes(stream[:half // 8], "big") | (3 << (half - 2)) | 1
            for delta in range(0, 65536, 2):
                c = p + delta
                if c.bit_length() != half:
                    break
                if any(c % q == 0 for q in small) or c % 65537 == 1 or c == other:
                    continue
                if probable_prime(c):
                    return c
        raise AssertionError("no prime")

    p = prime(1, None)
    return p * prime(2, p)


def ssh_rsa_n(b64):
    """n of an ssh-rsa public key in base64 (SSH wire format: string name, mpint e, mpint n)."""
    blob, parts = base64.b64decode(b64), []
    while blob:
        (n,) = struct.unpack(">I", blob[:4])
        parts.append(blob[4:4 + n])
        blob = blob[4 + n:]
    assert parts[0] == b"ssh-rsa" and int.from_bytes(parts[1], "big") == 65537, parts[:2]
    return int.from_bytes(parts[2], "big")


class HostKeyTypeTests(unittest.TestCase):
    def state_dir(self):
        state = tempfile.mkdtemp(prefix="fleetsim-hkt-state-")
        self.addCleanup(shutil.rmtree, state, True)
        return state

    def key_args(self, state, key_type):
        return ["--ssh", "true", "--state-dir", state, "--host-key-per-device", "--host-key-type", key_type]

    def inventory(self, state, key_type, devices, port):
        """The odl-callhome inventory's (unique-id, ssh-host-key) of a fleet starting at @port."""
        inv = os.path.join(state, "allowed-%s.json" % key_type)
        code, out = h.run_fleetsim(["--device-count", str(devices), "--starting-port", str(port),
                                    "--emit-inventory", inv, "--inventory-format", "odl-callhome"]
                                   + self.key_args(state, key_type), timeout=h.scaled(30))
        self.assertEqual(code, 0, out)
        with open(inv) as f:
            doc = json.load(f)["odl-netconf-callhome-server:netconf-callhome-server"]["allowed-devices"]["device"]
        return [(d["unique-id"], d["ssh-host-key"]) for d in doc]

    def fleet(self, state, key_type, devices, extra=()):
        f = h.Fleet(devices=devices, extra=["--snmp", "false"] + self.key_args(state, key_type) + list(extra))
        f.start()
        self.addCleanup(f.stop)
        return f

    @staticmethod
    def paramiko_key(addr, algorithms=None):
        """(name, base64) of the host key a device presents to paramiko, before any login."""
        t = paramiko.Transport(addr)
        try:
            if algorithms:
                t.get_security_options().key_types = algorithms
            t.start_client(timeout=h.scaled(10))
            key = t.get_remote_server_key()
            return key.get_name(), key.get_base64()
        finally:
            t.close()

    def test_rsa_keys_per_device_match_the_inventory_and_survive_a_restart(self):
        state = self.state_dir()
        f = self.fleet(state, "rsa", 3)
        seen = [self.paramiko_key(f.addr(i), ("rsa-sha2-256",)) for i in range(3)]
        self.assertEqual([name for name, _ in seen], ["ssh-rsa"] * 3)
        keys = [b64 for _, b64 in seen]
        self.assertEqual(len(set(keys)), 3, "every device its own key")
        listed = self.inventory(state, "rsa", 3, f.addr(0)[1])
        self.assertEqual([uid for uid, _ in listed], ["%d-sim-device" % (f.addr(0)[1] + i) for i in range(3)])
        self.assertEqual([b64 for _, b64 in listed], keys, "the inventory lists what the devices present")
        # A client that insists on SHA-512 signatures gets the same key.
        self.assertEqual(self.paramiko_key(f.addr(1), ("rsa-sha2-512",)), ("ssh-rsa", keys[1]))
        # The device still serves NETCONF after the RSA key exchange.
        t = paramiko.Transport(f.addr(2))
        self.addCleanup(t.close)
        t.get_security_options().key_types = ("rsa-sha2-256",)
        t.connect(username="admin", password="admin")
        ch = t.open_session()
        ch.invoke_subsystem("netconf")
        ch.settimeout(h.scaled(5))
        data = b""
        while b"]]>]]>" not in data:
            chunk = ch.recv(65536)
            self.assertTrue(chunk, "channel closed before the hello")
            data += chunk
        self.assertIn(b"<hello", data)
        f.stop()
        # Same state folder (same secret): the same keys; a new folder: new ones.
        g = self.fleet(state, "rsa", 3)
        self.assertEqual([self.paramiko_key(g.addr(i))[1] for i in range(3)], keys, "a restart keeps them")
        other = self.inventory(self.state_dir(), "rsa", 3, 17830)
        self.assertFalse(set(keys) & {b64 for _, b64 in other}, "another secret, other keys")

    def test_openssh_keyscan_sees_the_listed_rsa_key(self):
        state = self.state_dir()
        f = self.fleet(state, "rsa", 2)
        listed = self.inventory(state, "rsa", 2, f.addr(0)[1])
        for i in range(2):
            host, port = f.addr(i)
            p = subprocess.run(["ssh-keyscan", "-T", str(int(h.scaled(10))), "-t", "rsa", "-p", str(port), host],
                               capture_output=True, text=True, timeout=h.scaled(20))
            lines = [line.split() for line in p.stdout.splitlines() if line and not line.startswith("#")]
            self.assertEqual(len(lines), 1, p.stdout + p.stderr)
            self.assertEqual(lines[0][1:], ["ssh-rsa", listed[i][1]])
        # OpenSSH's own client, offered RSA (SHA-256) only, trusts the listed key and logs in far enough
        # to be refused by password (BatchMode): the host key check passed.
        known = os.path.join(state, "known_hosts")
        host, port = f.addr(1)
        with open(known, "w") as kh:
            kh.write("[%s]:%d ssh-rsa %s\n" % (host, port, listed[1][1]))
        p = subprocess.run(["ssh", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes", "-o",
                            "UserKnownHostsFile=" + known, "-o", "GlobalKnownHostsFile=/dev/null", "-o",
                            "HostKeyAlgorithms=rsa-sha2-256", "-o", "ConnectTimeout=%d" % int(h.scaled(10)),
                            "-F", "/dev/null", "-p", str(port), "admin@" + host, "-s", "netconf"],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=h.scaled(20))
        self.assertIn("Permission denied", p.stderr)
        self.assertNotIn("REMOTE HOST IDENTIFICATION HAS CHANGED", p.stderr)
        self.assertNotIn("Host key verification failed", p.stderr)

    def test_each_type_is_what_it_says(self):
        for key_type in ("ed25519", "ecdsa", "rsa"):
            with self.subTest(key_type=key_type):
                state = self.state_dir()
                f = self.fleet(state, key_type, 2)
                listed = self.inventory(state, key_type, 2, f.addr(0)[1])
                for i in range(2):
                    self.assertEqual(self.paramiko_key(f.addr(i)), (WIRE_NAME[key_type], listed[i][1]))
                f.stop()

    def test_libnetconf2_call_home_with_rsa_keys(self):
        state = self.state_dir()
        port = h.free_port()
        client = subprocess.Popen([CH_CLIENT, str(port), "4", "admin", "admin", str(h.scaled(30))],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: client.poll() is None and client.kill())
        self.assertEqual(client.stdout.readline().strip(), "listening")
        listed = self.inventory(state, "rsa", 4, 17830)
        self.fleet(state, "rsa", 4, ["--call-home", "127.0.0.1:%d" % port, "--call-home-rate", "20"])
        out, err = client.communicate(timeout=h.scaled(40))
        self.assertEqual(client.returncode, 0, out + err)
        self.assertIn("accepted 4", out)
        self.assertIn("get-config ok", out)
        seen = [line.split()[1:] for line in out.splitlines() if line.startswith("hostkey ")]
        self.assertEqual(len(seen), 4, out)
        self.assertEqual({t for t, _ in seen}, {"ssh-rsa"})
        self.assertEqual({b64 for _, b64 in seen}, {b64 for _, b64 in listed})

    def test_rsa_key_is_the_documented_derivation(self):
        state = self.state_dir()
        listed = self.inventory(state, "rsa", 2, 17830)
        with open(os.path.join(state, "ssh_device_key_secret"), "rb") as f:
            secret = f.read()
        self.assertEqual(len(secret), 32)
        for i in range(2):
            n = ssh_rsa_n(listed[i][1])
            self.assertEqual(n.bit_length(), 2048)
            self.assertEqual(n, derive_rsa_n(secret, i), "device %d" % i)

    def test_bad_type_is_one_line_error(self):
        p = subprocess.run([h.BINARY, "--host-key-type", "dsa"], capture_output=True, text=True, timeout=10)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn("ed25519, ecdsa or rsa", p.stderr)


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    if len(os.sys.argv) < 2 or not os.access(os.sys.argv[1], os.X_OK):
        os.sys.exit("usage: test_host_key_types.py <path to fleetsim> <path to ch_client> [unittest options]")
    CH_CLIENT = os.path.abspath(os.sys.argv.pop(1))
    unittest.main(verbosity=2)
