"""NETCONF over TLS (RFC 7589) in fleetsim with libnetconf2's client as the peer (tls_client.c).

One `fleetsim --transport tls` fleet serves four clients in turn: one with a certificate issued by
`fleetsim --issue-client-cert` (hello and get-config answered), one without a certificate, one with a
certificate of another CA and one with an expired certificate of the fleet's CA (both made with the
openssl command line). Only the first is served, the refusals are the server's (its log names why), and
a good client is served after each refusal. Then 1,000 devices with an address each in fd5e:f1ee::/64:
libnetconf2 is served by devices spread over the range with its certificate and refused without.

Run: /usr/bin/python3 test_tls_libnetconf2.py <path to fleetsim> <path to tls_client> [unittest options]
Loopback only (127.0.0.1, fd5e:f1ee::/64 local on lo), random ports, every wait bounded.
"""

import ipaddress
import os
import shutil
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
    CERTS.issue("alice")
    CERTS.other_ca_client("other")
    CERTS.expired_client("expired")


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


class LibnetconfTlsTest(unittest.TestCase):
    def assert_served(self, name, targets):
        code, lines, err = client(name, targets)
        self.assertEqual(lines, ["served %s %d get-config ok" % t for t in targets], err)
        self.assertEqual(code, 0, err)

    def assert_refused(self, name, targets):
        code, lines, err = client(name, targets)
        self.assertEqual(lines, ["refused %s %d" % t for t in targets], err)
        self.assertEqual(code, 1, err)

    def test_only_a_client_of_the_fleet_ca_is_served_and_refusals_do_not_stop_the_fleet(self):
        with h.Fleet(devices=2, default_transport=True,
                     extra=["--transport", "tls", "--state-dir", CERTS.state]) as fleet:
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
        with h.Fleet(devices=1000, ip=first, ip_per_device=True, default_transport=True,
                     extra=["--transport", "tls", "--state-dir", CERTS.state]) as fleet:
            spread = [fleet.addr(i) for i in (0, 0x1ff, 999)]
            self.assertEqual([t[0] for t in spread], [first, "fd5e:f1ee::200", "fd5e:f1ee::3e8"])
            self.assertEqual(spread[2][0], str(ipaddress.ip_address(first) + 999))
            self.assert_served("alice", spread)
            self.assert_refused(None, spread)
            self.assert_served("alice", spread[:1])


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    CLIENT = sys.argv.pop(1)
    unittest.main(verbosity=2)
