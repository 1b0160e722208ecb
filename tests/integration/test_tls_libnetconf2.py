"""NETCONF over TLS (RFC 7589) in fleetsim with libnetconf2's client as the peer (tls_client.c).

One `fleetsim --transport tls` fleet serves four clients in turn: one with a certificate issued by
`fleetsim --issue-client-cert` (hello and get-config answered), one without a certificate, one with a
certificate of another CA and one with an expired certificate of the fleet's CA (both made with the
openssl command line). Only the first is served, the refusals are the server's (its log names why), and
a good client is served after each refusal. Then 1,000 devices with an address each in fd5e:f1ee::/64:
libnetconf2 is served by devices spread over the range with its certificate and refused without: each
device presents a certificate naming its own address, which libnetconf2 checks. With --tls-cert-per-device
two devices sharing an address present different certificates of the fleet's CA, named after each device
(Python's ssl and openssl verify check them), kept while running and with the same key after a restart.

Run: /usr/bin/python3 test_tls_libnetconf2.py <path to fleetsim> <path to tls_client> [unittest options]
Loopback only (127.0.0.1, fd5e:f1ee::/64 local on lo), random ports, every wait bounded.
"""

import ipaddress
import os
import shutil
import ssl
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402
import tls_certs  # noqa: E402
from test_ipv6 import prefix_local  # noqa: E402

CLIENT = None
WORK = None
CERTS = None


def setUpModule():
    global WORK, CERTS
    WORK = tempfile.mkdtemp(prefix="fleetsim-tls-nc2-")
    CERTS = tls_certs.Certs(WORK, os.path.join(WORK, "state"))
    CERTS.clients()


def tearDownModule():
    shutil.rmtree(WORK, True)


def client(name, targets):
    """tls_client with @name's certificate (None: none) against [(host, port)]; its lines and stderr."""
    cert = [CERTS.path(name + ".pem"), CERTS.path(name + ".key")] if name else ["-", "-"]
    args = [CLIENT] + cert + [CERTS.fleet_ca()]
    for host, port in targets:
        args += [host, str(port)]
    r = tls_certs.run(args, 30)
    return r.returncode, r.stdout.splitlines(), r.stderr


def peer_cert(host, port):
    """The server certificate of @host:@port, verified against the fleet's CA for that address: (dict, DER)."""
    with CERTS.connect(host, port, "alice") as conn:
        return conn.getpeercert(), conn.getpeercert(binary_form=True)


def common_name(cert):
    return [v for rdn in cert["subject"] for k, v in rdn if k == "commonName"]


def pem_file(der):
    """@der written as PEM to a file of the work folder; its path."""
    pem = CERTS.path("peer.pem")
    with open(pem, "w") as f:
        f.write(ssl.DER_cert_to_PEM_cert(der))
    return pem


def verifies(der):
    """Whether openssl verify accepts @der against the fleet's CA as a TLS server."""
    pem = pem_file(der)
    r = tls_certs.run(["openssl", "verify", "-purpose", "sslserver", "-CAfile", CERTS.fleet_ca(), pem])
    return r.returncode == 0


def tls_fleet(devices, extra=(), **kw):
    return h.Fleet(devices=devices, default_transport=True,
                   extra=["--transport", "tls", "--state-dir", CERTS.state] + list(extra), **kw)


class ClientCase(unittest.TestCase):
    """Assertions on tls_client's outcome."""

    def assert_served(self, name, targets):
        code, lines, err = client(name, targets)
        self.assertEqual(lines, ["served %s %d get-config ok" % t for t in targets], err)
        self.assertEqual(code, 0, err)

    def assert_refused(self, name, targets):
        code, lines, err = client(name, targets)
        self.assertEqual(lines, ["refused %s %d" % t for t in targets], err)
        self.assertEqual(code, 1, err)


class LibnetconfTlsTest(ClientCase):
    def test_only_a_client_of_the_fleet_ca_is_served_and_refusals_do_not_stop_the_fleet(self):
        with tls_fleet(2) as fleet:
            good = [fleet.addr(0), fleet.addr(1)]
            self.assert_served("alice", good)
            for name, why in ((None, "peer did not return a certificate"),
                              ("other", "unable to get local issuer certificate"),
                              ("expired", "certificate has expired")):
                self.assert_refused(name, [fleet.addr(0)])
                h.wait_for(lambda: why in fleet.log(), h.scaled(10), "the server's refusal: " + why)
                self.assert_served("alice", good)
            self.assertEqual(fleet.log().count("TLS handshake failed"), 3, fleet.log())

    def test_a_thousand_devices_with_an_ipv6_address_each(self):
        reason = prefix_local()
        if reason:
            self.skipTest(reason)
        first = "fd5e:f1ee::1"
        with tls_fleet(1000, ip=first, ip_per_device=True) as fleet:
            spread = [fleet.addr(i) for i in (0, 0x1ff, 999)]
            self.assertEqual([t[0] for t in spread], [first, "fd5e:f1ee::200", "fd5e:f1ee::3e8"])
            self.assertEqual(spread[2][0], str(ipaddress.ip_address(first) + 999))
            self.assert_served("alice", spread)
            self.assert_refused(None, spread)
            self.assert_served("alice", spread[:1])
            # One certificate cannot name 1,000 addresses: each device names its own (and no other).
            cert, _ = peer_cert(*spread[1])
            self.assertEqual(common_name(cert), ["device-511"])
            self.assertEqual(cert["subjectAltName"], (("IP Address", "FD5E:F1EE:0:0:0:0:0:200"),))


class DeviceCertTest(ClientCase):
    def test_each_device_presents_its_own_certificate_of_the_fleet_ca(self):
        with tls_fleet(2, ["--tls-cert-per-device"]) as fleet:
            (c0, der0), (c1, der1) = peer_cert(*fleet.addr(0)), peer_cert(*fleet.addr(1))
            self.assertEqual((common_name(c0), common_name(c1)), (["device-0"], ["device-1"]))
            self.assertEqual(c0["subjectAltName"], c1["subjectAltName"])  # the shared address and loopback
            self.assertIn(("IP Address", "127.0.0.1"), c0["subjectAltName"])
            self.assertIn(("DNS", "localhost"), c0["subjectAltName"])
            self.assertNotEqual(der0, der1)
            self.assertTrue(verifies(der0) and verifies(der1))
            self.assertEqual(peer_cert(*fleet.addr(0))[1], der0)  # kept, not made again
            self.assert_served("alice", [fleet.addr(0), fleet.addr(1)])
            key0 = public_key(der0)
        with tls_fleet(2, ["--tls-cert-per-device"]) as fleet:
            self.assertEqual(public_key(peer_cert(*fleet.addr(0))[1]), key0)  # derived: a restart keeps it
            self.assertNotEqual(public_key(peer_cert(*fleet.addr(1))[1]), key0)

    def test_the_fleet_certificate_without_the_option(self):
        with tls_fleet(2) as fleet:
            (c0, der0), (_, der1) = peer_cert(*fleet.addr(0)), peer_cert(*fleet.addr(1))
            self.assertEqual((common_name(c0), der0), (["fleetsim"], der1))

    def test_contradicting_tls_cert_exits_2(self):
        r = tls_certs.run([h.BINARY, "--transport", "tls", "--tls-cert-per-device", "--tls-cert",
                           CERTS.path("alice.pem"), "--tls-key", CERTS.path("alice.key")])
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--tls-cert-per-device contradicts --tls-cert", r.stderr)


def public_key(der):
    return tls_certs.openssl("x509", "-in", pem_file(der), "-noout", "-pubkey")


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    CLIENT = sys.argv.pop(1)
    unittest.main(verbosity=2)
