"""What fleetsim tells about NETCONF over TLS: metrics, ietf-netconf-monitoring and inventories.

One `fleetsim --transport tls --metrics` fleet: a session held open by Python's ssl is counted under
fleetsim_sessions{transport="tls"} (not tcp); clients refused for no certificate, another CA's, an
expired one and one that no cert-to-name entry maps are counted by reason in
fleetsim_tls_handshake_failures_total and per device, not as SSH authentication failures nor as bad
hellos in ietf-netconf-monitoring. The metrics are fetched with curl and read with prometheus_client's
parser. --emit-inventory odl-json names the TLS protocol (odl-netconf-device's protocol/name) and csv
says tls.

Run: /usr/bin/python3 test_tls_labels.py <path to fleetsim> [unittest options]
Loopback only, random ports, every wait bounded.
"""

import csv
import hashlib
import io
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import unittest

from prometheus_client.parser import text_string_to_metric_families

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402
import tls_certs  # noqa: E402

WORK = None
CERTS = None
HELLO10 = (b'<hello xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><capabilities>'
           b'<capability>urn:ietf:params:netconf:base:1.0</capability></capabilities></hello>]]>]]>')
STATS = (b'<rpc message-id="1" xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><get><filter type="subtree">'
         b'<netconf-state xmlns="urn:ietf:params:xml:ns:yang:ietf-netconf-monitoring"><statistics/>'
         b'</netconf-state></filter></get></rpc>]]>]]>')


def setUpModule():
    global WORK, CERTS
    WORK = tempfile.mkdtemp(prefix="fleetsim-tls-labels-")
    CERTS = tls_certs.Certs(WORK, os.path.join(WORK, "state"))
    CERTS.clients()
    CERTS.issue("mallory")  # of the fleet's CA, but mapped by no cert-to-name entry


def tearDownModule():
    shutil.rmtree(WORK, True)


def fingerprint(name):
    with open(CERTS.path(name + ".pem")) as f:
        der = ssl.PEM_cert_to_DER_cert(f.read())
    return "04:" + ":".join("%02X" % b for b in hashlib.sha256(der).digest())


def scrape(base):
    """{(name, frozenset of labels): value} of /metrics, fetched with curl."""
    r = subprocess.run(["curl", "-sS", "--max-time", str(h.scaled(10)), base + "/metrics"],
                       capture_output=True, text=True, timeout=h.scaled(20))
    if r.returncode:
        raise AssertionError("curl: " + r.stderr)
    return {(s.name, frozenset(s.labels.items())): s.value
            for fam in text_string_to_metric_families(r.stdout) for s in fam.samples}


def inventory(fmt):
    out = os.path.join(WORK, "inventory." + fmt)
    r = tls_certs.run([h.BINARY, "--transport", "tls", "--device-count", "2", "--state-dir", CERTS.state,
                       "--emit-inventory", out, "--inventory-format", fmt])
    if r.returncode:
        raise AssertionError(r.stderr)
    with open(out) as f:
        return f.read()


class TlsLabelsTest(unittest.TestCase):
    def test_sessions_and_refusals_are_counted_as_tls(self):
        ctn = CERTS.path("ctn")
        with open(ctn, "w") as f:
            f.write("1 %s common-name\n" % fingerprint("alice"))
        fleet, base = h.start_with_metrics(2, ["--transport", "tls", "--state-dir", CERTS.state,
                                               "--tls-cert-to-name", ctn, "--metrics-per-device"],
                                              default_transport=True)
        try:
            host, port = fleet.addr(0)
            for name in (None, "other", "expired", "mallory"):
                self.assertTrue(CERTS.refused(host, port, name), name)
            with CERTS.connect(host, port, "alice") as conn:
                tls_certs.read_msg(conn)
                conn.sendall(HELLO10 + STATS)
                stats = tls_certs.read_msg(conn)
                m = scrape(base)
            for reason in ("no_certificate", "untrusted", "expired", "no_name"):
                self.assertEqual(m[("fleetsim_tls_handshake_failures_total",
                                    frozenset({("reason", reason)}))], 1, reason)
            self.assertEqual(m[("fleetsim_tls_handshake_failures_total", frozenset({("reason", "protocol")}))], 0)
            self.assertEqual(m[("fleetsim_device_tls_handshake_failures_total", frozenset({("device", "0")}))], 4)
            self.assertEqual(m[("fleetsim_device_tls_handshake_failures_total", frozenset({("device", "1")}))], 0)
            self.assertEqual(m[("fleetsim_ssh_auth_failures_total", frozenset())], 0)
            self.assertEqual(m[("fleetsim_hello_failures_total", frozenset())], 0)
            self.assertEqual(m[("fleetsim_sessions", frozenset({("transport", "tls")}))], 1)
            self.assertEqual(m[("fleetsim_sessions", frozenset({("transport", "tcp")}))], 0)
            self.assertEqual(m[("fleetsim_sessions", frozenset({("transport", "ssh")}))], 0)
            # ietf-netconf-monitoring: the refused never said hello; the served one did.
            self.assertIn("<in-bad-hellos>0</in-bad-hellos>", stats)
            self.assertIn("<in-sessions>1</in-sessions>", stats)
            h.wait_for(lambda: scrape(base)[("fleetsim_sessions", frozenset({("transport", "tls")}))] == 0,
                       h.scaled(10), "the closed session no longer counted")
        finally:
            fleet.stop()

    def test_odl_json_names_the_tls_protocol(self):
        nodes = json.loads(inventory("odl-json"))["network-topology:topology"][0]["node"]
        self.assertEqual(len(nodes), 2)
        for node in nodes:
            n = node["netconf-node-topology:netconf-node"]
            self.assertEqual(n["protocol"], {"name": "TLS"})
            self.assertIs(n["tcp-only"], False)

    def test_csv_says_tls(self):
        rows = list(csv.DictReader(io.StringIO(inventory("csv"))))
        self.assertEqual([r["transport"] for r in rows], ["tls", "tls"])


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2)
