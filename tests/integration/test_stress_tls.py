"""fleetsim-stress over TLS (--tls true, RFC 7589; issue 19) against a Python TLS NETCONF server
(fake_netconf.py with an ssl context that requires a client certificate from its CA). Certificates come
from the openssl command line in a temporary folder: a CA, a server and a client certificate, and a
second CA with a server and a client certificate of its own.

Edit, mount and notify with a client certificate answer every request and name "tls" as the transport. Without a
client certificate, with one of another CA, and against a server certificate of another CA, the run
fails with OpenSSL's reason, counted as a "tls" connection failure, with the exit code of any other
connection failure (a refused one). The server's address is checked only with --tls-verify-host true.

Run: /usr/bin/python3 test_stress_tls.py <path to fleetsim> <path to fleetsim-stress> [unittest options]
Loopback only, random ports below 32000, every wait bounded.
"""

import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_netconf as fake  # noqa: E402
import fleetsim_harness as h  # noqa: E402

STRESS = None  # path to fleetsim-stress, from the command line
RUN_LIMIT_S = 60.0
CERTS = None   # the folder of the certificates, made once (setUpModule)
NOTIFICATION_CAP = "urn:ietf:params:netconf:capability:notification:1.0"


def openssl(*args):
    subprocess.run(["openssl"] + list(args), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                   timeout=h.scaled(20))


def make_ca(name):
    key, pem = os.path.join(CERTS, name + ".key"), os.path.join(CERTS, name + ".pem")
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-out", pem, "-days", "2", "-subj", "/CN=" + name)


def make_leaf(name, ca, ext):
    """NAME.pem and NAME.key signed by CA, with the x509v3 extension lines `ext`."""
    key, csr = os.path.join(CERTS, name + ".key"), os.path.join(CERTS, name + ".csr")
    extfile = os.path.join(CERTS, name + ".ext")
    with open(extfile, "w") as f:
        f.write(ext + "\n")
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key,
            "-out", csr, "-subj", "/CN=" + name)
    openssl("x509", "-req", "-in", csr, "-CA", os.path.join(CERTS, ca + ".pem"), "-CAkey",
            os.path.join(CERTS, ca + ".key"), "-CAcreateserial", "-out", os.path.join(CERTS, name + ".pem"),
            "-days", "2", "-extfile", extfile)


def cert(name):
    return os.path.join(CERTS, name + ".pem")


def key(name):
    return os.path.join(CERTS, name + ".key")


def setUpModule():
    global CERTS
    CERTS = tempfile.mkdtemp(prefix="fleetsim-stress-tls-certs-")
    make_ca("ca")
    make_ca("other-ca")
    # The server certificate names 127.0.0.2, not the 127.0.0.1 the client connects to: only
    # --tls-verify-host true looks at that.
    make_leaf("server", "ca", "subjectAltName=IP:127.0.0.2\nextendedKeyUsage=serverAuth")
    make_leaf("client", "ca", "extendedKeyUsage=clientAuth")
    make_leaf("other-server", "other-ca", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth")
    make_leaf("other-client", "other-ca", "extendedKeyUsage=clientAuth")


def tearDownModule():
    shutil.rmtree(CERTS, True)


def server_context(server="server", ca="ca"):
    """A TLS server that requires a client certificate issued by `ca`."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert(server), key(server))
    ctx.load_verify_locations(cert(ca))
    ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx


class StressTlsTests(unittest.TestCase):
    def servers(self, count=1, script=None, tls=True, **ctx):
        s = fake.FakeServers(script or fake.Script(), count=count,
                             tls=server_context(**ctx) if tls else None).start()
        self.addCleanup(s.close)
        return s

    def stress(self, port, mode, *args, client="client", ca="ca"):
        work = tempfile.mkdtemp(prefix="fleetsim-stress-tls-")
        self.addCleanup(shutil.rmtree, work, True)
        manifest = os.path.join(work, "run.json")
        argv = [mode, "--ip", "127.0.0.1", "--port", port, "--msg-timeout", "20", "--json", manifest, "--tls",
                "true"]
        if client:
            argv += ["--tls-cert", cert(client), "--tls-key", key(client)]
        if ca:
            argv += ["--tls-ca", cert(ca)]
        return h.run_stress(STRESS, argv + [str(a) for a in args], manifest, RUN_LIMIT_S)

    def refused_code(self, mode, *args):
        """The exit code of the same run against a port nobody listens on."""
        r = self.stress(h.free_port(), mode, *args)
        self.assertIn("refused", r.out + r.err, r)
        return r.code

    def test_edit_over_tls_with_a_client_certificate_answers_every_edit(self):
        s = self.servers()
        r = self.stress(s.port, "edit", "--edits", 300, "--thread-amount", 1, "--async-requests", "true",
                        "--candidate-datastore", "false")
        self.assertEqual(r.code, 0, r)
        self.assertIn("300 sent, 300 answered: 300 ok, 0 rpc-error", r.out, r)
        self.assertIn("transport: tls (as --tls asked)", r.out, r)
        self.assertEqual(r.manifest["parameters"]["transport"], "tls", r)
        self.assertEqual(r.manifest["parameters"]["transport_used"], "tls", r)
        self.assertIs(r.manifest["parameters"]["ssh"], False, r)
        conn = s.only_connection()
        self.assertEqual(conn.peer_cert, {"commonName": "client"}, r)
        self.assertEqual([q.op for q in conn.requests], ["edit-config"] * 300, r)
        self.assertTrue(conn.chunked, r)  # base:1.1 framing inside TLS

    def test_mount_over_tls_mounts_every_device(self):
        s = self.servers(count=3)
        r = self.stress(s.port, "mount", "--device-count", 3, "--on-mount", "get-config")
        self.assertEqual(r.code, 0, r)
        self.assertIn("failures: none", r.out, r)
        self.assertEqual(r.manifest["parameters"]["transport_used"], "tls", r)
        self.assertEqual(sum(r.manifest["results"]["failures"].values()), 0, r)
        conns = s.finished()
        self.assertEqual(sorted(c.device for c in conns), [0, 1, 2], r)
        self.assertTrue(all(c.peer_cert == {"commonName": "client"} for c in conns), r)
        self.assertEqual([q.op for c in conns for q in c.requests], ["get-config"] * 3, r)

    def test_notify_over_tls_counts_the_notifications(self):
        # The fake server sends a notification before each reply.
        s = self.servers(script=fake.Script(caps=(h.BASE10, h.BASE11, NOTIFICATION_CAP), notify=True))
        r = self.stress(s.port, "notify", "--idle-timeout", 1)
        self.assertEqual(r.code, 0, r)
        self.assertIn("failures: none", r.out, r)
        ops = [q.op for q in s.only_connection().requests]
        self.assertEqual(ops[0], "create-subscription", r)
        self.assertIn("received: %d in" % len(ops), r.out, r)  # one notification came with each reply

    def assert_tls_failure(self, r, reason, code):
        self.assertEqual(r.code, code, r)
        self.assertIn(reason, r.out + r.err, r)

    def test_without_a_client_certificate_the_run_fails_as_a_connection_failure(self):
        s = self.servers(count=2)
        r = self.stress(s.port, "mount", "--device-count", 2, client=None)
        self.assert_tls_failure(r, "certificate required", self.refused_code("mount", "--device-count", 2))
        self.assertEqual(r.manifest["results"]["failures"]["tls"], 2, r)
        self.assertTrue(all(c.tls_error and "certificate" in c.tls_error for c in s.finished()), r)
        e = self.stress(s.port, "edit", "--edits", 10, client=None)
        self.assert_tls_failure(e, "tls (TLS read: tlsv13 alert certificate required)",
                                self.refused_code("edit", "--edits", 10))

    def test_a_client_certificate_of_another_ca_is_refused_by_the_server(self):
        s = self.servers()
        r = self.stress(s.port, "mount", client="other-client")
        self.assert_tls_failure(r, "unknown ca", self.refused_code("mount"))
        self.assertEqual(r.manifest["results"]["failures"]["tls"], 1, r)
        self.assertIn("certificate verify failed", s.only_connection().tls_error, r)

    def test_a_server_certificate_of_another_ca_fails_verification(self):
        s = self.servers(server="other-server")
        r = self.stress(s.port, "mount")
        self.assert_tls_failure(r, "TLS handshake: certificate verify failed (unable to get local issuer "
                                   "certificate)", self.refused_code("mount"))
        self.assertEqual(r.manifest["results"]["failures"]["tls"], 1, r)
        e = self.stress(s.port, "edit", "--edits", 10)
        self.assert_tls_failure(e, "certificate verify failed", self.refused_code("edit", "--edits", 10))

    def test_the_servers_address_is_checked_only_when_asked(self):
        s = self.servers(count=1)
        r = self.stress(s.port, "mount")  # the certificate names 127.0.0.2
        self.assertEqual(r.code, 0, r)
        r = self.stress(s.port, "mount", "--tls-verify-host", "true")
        self.assert_tls_failure(r, "certificate verify failed (IP address mismatch)", self.refused_code("mount"))

    def test_a_plain_tcp_server_is_named(self):
        s = self.servers(tls=False)
        r = self.stress(s.port, "mount")
        self.assert_tls_failure(r, "does not speak TLS", self.refused_code("mount"))

    def test_unreadable_certificate_files_are_named_before_connecting(self):
        r = self.stress(h.free_port(), "mount", client=None, ca="missing")
        self.assertEqual(r.code, 1, r)
        self.assertIn("--tls-ca " + cert("missing"), r.err, r)


if __name__ == "__main__":
    STRESS = h.take_binaries_arguments()
    unittest.main()
