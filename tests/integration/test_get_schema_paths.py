"""get-schema's two paths give the same bytes: a plain request is answered on the fast path (scanned
envelope, the module's text queued by reference), the same request with a comment inside <get-schema>
goes through libyang's full parse. With the same message-id the two replies must be byte-identical, for
modules, submodules, with and without version, prefixed envelopes, extra <rpc> attributes, errors
(unknown module or revision: invalid-value from the full path in both cases), over base:1.0 and
base:1.1 framing. Many requests sent at once (as a controller's mount sends them) come back whole and
in order, and every one is counted in netconf-state's in-rpcs.

Folder: tests/integration/data/vendor_yang (submodules, two revisions of one module).

Run: /usr/bin/python3 test_get_schema_paths.py <path to fleetsim>
"""

import os
import sys
import unittest

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402

DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "vendor_yang")
NCM_NS = "urn:ietf:params:xml:ns:yang:ietf-netconf-monitoring"

# (identifier, version or None): modules of the folder, both revisions of one, submodules, built-in ones
# (large texts, queued by reference rather than copied).
REQUESTS = [
    ("vnd-system", "2024-03-01"),
    ("vnd-system", None),
    ("vnd-types", "2024-06-01"),
    ("vnd-types", "2023-01-10"),
    ("vnd-types", None),
    ("vnd-system-ntp", "2024-03-01"),
    ("vnd-system-dns", None),
    ("ietf-netconf", "2011-06-01"),
    ("ietf-interfaces", None),
    ("ietf-netconf-monitoring", ""),
]


def params(identifier, version, fmt="<format>yang</format>"):
    text = "<identifier>%s</identifier>" % identifier
    if version is not None:
        text += "<version>%s</version>" % version
    return text + fmt


def fast(body):
    return '<get-schema xmlns="%s">%s</get-schema>' % (NCM_NS, body)


def full(body):
    # A comment inside <get-schema>: the fast path defers to libyang.
    return '<get-schema xmlns="%s"><!-- full path -->%s</get-schema>' % (NCM_NS, body)


def file_text(name):
    for fname in os.listdir(DIR):
        if fname == name + ".yang" or fname.startswith(name + "@"):
            with open(os.path.join(DIR, fname), encoding="utf-8") as f:
                return f.read()
    return None


class GetSchemaPaths(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fleet = h.Fleet(devices=1, threads=1, extra=["--schemas-dir", DIR])
        cls.fleet.start()

    @classmethod
    def tearDownClass(cls):
        cls.fleet.stop()

    def client(self, caps=(h.BASE10, h.BASE11)):
        c = h.RawClient(self.fleet.addr(0))
        c.hello(caps)
        return c

    def assert_same(self, c, fast_xml, full_xml, attrs="", what=""):
        a = c.rpc(fast_xml, msg_id="42", attrs=attrs)
        b = c.rpc(full_xml, msg_id="42", attrs=attrs)
        self.assertEqual(a, b, "%s: fast and full path differ" % what)
        return a

    def test_modules_and_submodules_are_byte_identical_on_both_paths(self):
        for caps in ((h.BASE10, h.BASE11), (h.BASE10,)):
            with self.client(caps) as c:
                for identifier, version in REQUESTS:
                    what = "%s %r %s" % (identifier, version, "chunked" if c.chunked else "eom")
                    reply = self.assert_same(c, fast(params(identifier, version)), full(params(identifier, version)),
                                             what=what)
                    root = h.parse(reply)
                    data = root.find("{%s}data" % NCM_NS)
                    self.assertIsNotNone(data, "%s: no <data> in the monitoring namespace:\n%s" % (what, reply[:500]))
                    expected = file_text(identifier)
                    if expected is not None and version != "2023-01-10":
                        self.assertEqual(data.text, expected, what)
                    else:
                        self.assertRegex(data.text, r"^(module|submodule) %s \{" % identifier, what)
                    # Without format the answer is the same (yang is the default).
                    self.assertEqual(c.rpc(fast(params(identifier, version, fmt="")), msg_id="42"), reply, what)

    def test_prefixed_envelope_and_extra_attributes_are_byte_identical(self):
        with self.client() as c:
            body = ("<m:identifier>ietf-interfaces</m:identifier><m:version>2018-02-20</m:version>"
                    "<m:format>m:yang</m:format>")
            a = ('<m:get-schema xmlns:m="%s">%s</m:get-schema>' % (NCM_NS, body))
            b = ('<m:get-schema xmlns:m="%s"><!-- x -->%s</m:get-schema>' % (NCM_NS, body))
            reply = self.assert_same(c, a, b, attrs=' xmlns:ex="urn:example:attrs" ex:user="ann" trace="7"',
                                     what="prefixed, extra attributes")
            self.assertIn('ex:user="ann"', reply.split(">", 1)[0])
            self.assertIn('trace="7"', reply.split(">", 1)[0])

    def test_errors_are_the_full_paths_on_both(self):
        with self.client() as c:
            for identifier, version, message in (
                    ("no-such-module", None, 'No schema "no-such-module".'),
                    ("vnd-types", "1999-01-01", 'No schema "vnd-types" revision 1999-01-01.'),
                    ("vnd-broken", None, 'No schema "vnd-broken".')):
                reply = self.assert_same(c, fast(params(identifier, version)), full(params(identifier, version)),
                                         what=identifier)
                h.assert_error(reply, "invalid-value", "application", identifier)
                self.assertEqual(h.parse(reply).find(".//{%s}error-message" % h.NC_NS).text, message, reply)
            # An unsupported format and a missing identifier: the full path's answers.
            reply = c.rpc(fast("<identifier>vnd-system</identifier><format>yin</format>"))
            self.assertIn("<data xmlns=\"%s\">&lt;?xml" % NCM_NS, reply)
            h.assert_error(c.rpc(fast("<version>2024-03-01</version>")), "missing-element", "protocol")

    def test_many_requests_at_once_come_back_whole_and_in_order_and_are_counted(self):
        with self.client() as c:
            before = self.in_rpcs(c)
            count = 0
            batch = b""
            for i in range(20):
                for identifier, version in REQUESTS:
                    count += 1
                    batch += c.frame('<rpc xmlns="%s" message-id="%d">%s</rpc>'
                                     % (h.NC_NS, count, fast(params(identifier, version))))
            c.send_raw(batch)
            replies = [c.recv_msg() for _ in range(count)]
            n = 0
            for i in range(20):
                for identifier, version in REQUESTS:
                    reply = replies[n]
                    n += 1
                    self.assertEqual(h.parse(reply).get("message-id"), str(n))
                    want = c.rpc(full(params(identifier, version)), msg_id=str(n))
                    self.assertEqual(reply, want, "%s %r in the batch" % (identifier, version))
            # The batch, its full-path twins and the first get: all counted.
            self.assertEqual(self.in_rpcs(c), before + 2 * count + 1)

    @staticmethod
    def in_rpcs(c):
        reply = c.rpc('<get><filter type="subtree"><netconf-state xmlns="%s"><statistics/></netconf-state>'
                      '</filter></get>' % NCM_NS)
        return int(h.parse(reply).find(".//{%s}statistics/{%s}in-rpcs" % (NCM_NS, NCM_NS)).text)


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2, warnings=False)
