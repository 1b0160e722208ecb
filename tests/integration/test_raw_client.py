"""fleetsim against a raw socket client: the messages polite NETCONF libraries never send.

One fleet (2 devices, --max-message-size 8192) serves the suite. Each test checks the exact
rpc-error (error-type and error-tag) or that exactly the offending session was closed while
another session of the same device keeps working.

Run: /usr/bin/python3 test_raw_client.py <path to fleetsim>
"""

import os
import socket
import struct
import sys
import unittest

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402

MAX_MESSAGE = 8192
GET_RUNNING = "<get-config><source><running/></source></get-config>"


class RawClientTests(unittest.TestCase):
    fleet = None

    @classmethod
    def setUpClass(cls):
        cls.fleet = h.Fleet(devices=2, extra=["--max-message-size", str(MAX_MESSAGE)]).start()

    @classmethod
    def tearDownClass(cls):
        # A server that crashed or hung during the suite fails here.
        cls.fleet.stop()

    def setUp(self):
        self.clients = []

    def tearDown(self):
        for c in self.clients:
            c.close()

    def session(self, device=0, caps=(h.BASE10, h.BASE11)):
        c = h.RawClient(self.fleet.addr(device)).hello(caps)
        self.clients.append(c)
        return c

    def connect(self, device=0):
        c = h.RawClient(self.fleet.addr(device))
        self.clients.append(c)
        return c

    def assert_works(self, c, what):
        """The session still answers an ordinary RPC."""
        h.assert_data(c.rpc(GET_RUNNING, msg_id="works"), what)

    def assert_closed(self, c, what):
        if not c.expect_closed(h.scaled(3)):
            self.fail("%s: the server kept the session open (received so far: %r)" % (what, c.buf[:500]))

    # ------------------------------------------------------------ malformed input

    def test_malformed_xml_is_malformed_message_and_session_survives(self):
        c = self.session()
        self.assertTrue(c.chunked)
        for i, bad in enumerate(["<rpc xmlns='%s' message-id='1'><get-config>" % h.NC_NS,
                                 "this is not xml",
                                 "<rpc xmlns='%s' message-id='2'><a></b></rpc>" % h.NC_NS]):
            with self.subTest(message=bad):
                c.send_msg(bad)
                reply = c.recv_msg()
                h.assert_error(reply, "malformed-message", "rpc", "not well-formed XML #%d" % i)
                self.assert_works(c, "session after malformed XML #%d" % i)

    def test_malformed_rpcs_keep_message_id_and_attributes(self):
        # RFC 6241 4.2: whenever the <rpc> start tag can be read, the reply repeats its attributes,
        # even when the rest of the message is not XML libyang can read (ncclient drops a session
        # whose reply has no message-id).
        attrs = ' xmlns:ex="urn:example:attr" ex:tag="a&amp;b" foo="bar"'
        cases = [
            ("unclosed element", "<rpc xmlns='%s' message-id='m1'%s><get-config>" % (h.NC_NS, attrs)),
            ("mismatched end tag", "<rpc xmlns='%s' message-id='m1'%s><a></b></rpc>" % (h.NC_NS, attrs)),
            ("prefixed rpc, unqualified element",
             "<nc:rpc xmlns:nc='%s' message-id='m1'%s><nc:get><filter/></nc:get></nc:rpc>" % (h.NC_NS, attrs)),
            ("undeclared prefix", "<rpc xmlns='%s' message-id='m1'%s><get><x:y/></get></rpc>" % (h.NC_NS, attrs)),
            ("empty namespace", "<rpc xmlns='%s' message-id='m1'%s><get xmlns=''/></rpc>" % (h.NC_NS, attrs)),
        ]
        c = self.session()
        for name, msg in cases:
            with self.subTest(case=name):
                c.send_msg(msg)
                reply = c.recv_msg()
                root = h.parse(reply)
                self.assertEqual(root.get("message-id"), "m1", "%s: message-id lost:\n%s" % (name, reply))
                self.assertEqual(root.get("{urn:example:attr}tag"), "a&b", reply)
                self.assertEqual(root.get("foo"), "bar", reply)
                self.assertTrue(h.errors(reply), reply)
        self.assert_works(c, "session after the malformed rpcs")

    def test_unqualified_config_is_named_and_not_carried_out(self):
        # ncclient's edit_config passes a <config> without namespace through as written.
        c = self.session()
        c.send_msg('<nc:rpc xmlns:nc="%s" message-id="u7"><nc:edit-config><nc:target><nc:running/></nc:target>'
                   '<config>%s</config></nc:edit-config></nc:rpc>' % (h.NC_NS, h.iface("unqualified")))
        reply = c.recv_msg()
        self.assertEqual(h.parse(reply).get("message-id"), "u7", reply)
        h.assert_error(reply, "unknown-element", "protocol", "<config> without namespace")
        root = h.parse(reply)
        self.assertEqual(root.findtext(".//{%s}bad-element" % h.NC_NS), "config", reply)
        self.assertIn("<config> must be in the base namespace %s" % h.NC_NS,
                      root.findtext(".//{%s}error-message" % h.NC_NS), reply)
        self.assertNotIn("unqualified", h.interface_names(c.get_config()), "the edit was carried out")
        # An operation without namespace is named with its parent.
        c.send_msg('<nc:rpc xmlns:nc="%s" message-id="u8"><get/></nc:rpc>' % h.NC_NS)
        reply = c.recv_msg()
        self.assertEqual(h.parse(reply).get("message-id"), "u8", reply)
        self.assertIn("<get> (in <rpc>) has no XML namespace",
                      h.parse(reply).findtext(".//{%s}error-message" % h.NC_NS), reply)

    def test_base10_session_never_gets_malformed_message(self):
        # RFC 6241 appendix A: malformed-message is new in base:1.1 and MUST NOT be sent to
        # base:1.0 clients. Whatever else the server does (another error or closing), not that.
        c = self.session(caps=(h.BASE10,))
        self.assertFalse(c.chunked)
        c.send_msg("<rpc xmlns='%s' message-id='1'><get-config>" % h.NC_NS)
        try:
            reply = c.recv_msg()
        except h.ConnectionClosed:
            return
        tags = [tag for _, tag in h.errors(reply)]
        self.assertNotIn("malformed-message", tags,
                         "a base:1.0 session received malformed-message:\n%s" % reply)

    def test_rpc_without_message_id_is_missing_attribute(self):
        c = self.session()
        # An edit, so that we can also see it was not carried out.
        c.send_msg('<rpc xmlns="%s"><edit-config><target><running/></target><config>%s</config></edit-config></rpc>'
                   % (h.NC_NS, h.iface("no-msgid")))
        reply = c.recv_msg()
        h.assert_error(reply, "missing-attribute", "rpc", "rpc without message-id")
        info = h.parse(reply).find(".//{%s}error-info" % h.NC_NS)
        self.assertIsNotNone(info, reply)
        self.assertEqual(info.findtext("{%s}bad-attribute" % h.NC_NS), "message-id", reply)
        self.assertEqual(info.findtext("{%s}bad-element" % h.NC_NS), "rpc", reply)
        self.assertNotIn("no-msgid", h.interface_names(c.get_config()),
                         "an rpc without message-id was carried out")

    def test_schema_errors_in_a_well_formed_rpc_keep_message_id_and_exact_tag(self):
        # The XML is fine and carries a message-id, so the reply must echo it (RFC 6241 4.2) and
        # name the problem; malformed-message is only for what cannot be parsed at all.
        cases = [
            ("unknown parameter", "<get-config><source><running/></source><bogus/></get-config>",
             "unknown-element"),
            ("unknown datastore", "<lock><target><nosuch/></target></lock>", "unknown-element"),
            ("bad enumeration", "<edit-config><target><running/></target>"
                                "<default-operation>frob</default-operation><config/></edit-config>",
             "invalid-value"),
            ("bad number", "<kill-session><session-id>abc</session-id></kill-session>", "invalid-value"),
            ("bad XPath", '<get-config><source><running/></source>'
                          '<filter type="xpath" select="/nonsense["/></get-config>', "invalid-value"),
            ("missing parameter", "<get-config/>", "missing-element"),
        ]
        c = self.session()
        for name, body, tag in cases:
            with self.subTest(case=name):
                reply = c.rpc(body, msg_id="m77")
                self.assertEqual(h.parse(reply).get("message-id"), "m77",
                                 "%s: the reply lost the message-id:\n%s" % (name, reply))
                h.assert_error(reply, tag, None, name)
                self.assertIn(h.errors(reply)[0][0], ("protocol", "application"), reply)
        self.assert_works(c, "session after the schema errors")

    def test_unknown_base_operation_is_operation_not_supported(self):
        c = self.session()
        h.assert_error(c.rpc("<frobnicate/>"), "operation-not-supported", "protocol",
                       "unknown operation in the base namespace")
        self.assert_works(c, "session after an unknown operation")

    def test_reply_echoes_every_rpc_attribute(self):
        c = self.session()
        reply = c.rpc(GET_RUNNING, msg_id="m-42",
                      attrs=' foo="bar" xmlns:ex="urn:example:attr" ex:tag="a&amp;b" empty=""')
        root = h.parse(reply)
        want = {"message-id": "m-42", "foo": "bar", "{urn:example:attr}tag": "a&b", "empty": ""}
        for name, value in want.items():
            self.assertEqual(root.get(name), value, "attribute %s not echoed as %r:\n%s" % (name, value, reply))

    def test_second_hello_is_malformed_message_and_framing_stays(self):
        c = self.session()
        self.assertTrue(c.chunked)
        # A hello after the session started is not an rpc. RFC 6241 leaves open whether the session
        # survives it; if it does, the hello (base:1.0 only) must not have switched the framing.
        c.send_msg(h.client_hello([h.BASE10]))
        h.assert_error(c.recv_msg(), "malformed-message", "rpc", "second client hello")
        try:
            c.send_msg('<rpc xmlns="%s" message-id="after">%s</rpc>' % (h.NC_NS, GET_RUNNING))
            reply = c.recv_msg()
        except (h.ConnectionClosed, BrokenPipeError, ConnectionResetError):
            return
        h.assert_data(reply, "chunked session after a second hello")

    def test_pipelined_rpcs_are_answered_in_order(self):
        c = self.session()
        batch = b"".join(c.frame('<rpc xmlns="%s" message-id="%s">%s</rpc>' % (h.NC_NS, mid, GET_RUNNING))
                         for mid in ("p1", "p2", "p3"))
        c.send_raw(batch)
        self.assertEqual([h.parse(c.recv_msg()).get("message-id") for _ in range(3)], ["p1", "p2", "p3"])

    # ------------------------------------------------------------ framing

    def test_eom_marker_inside_chunked_data_is_data(self):
        c = self.session()
        # "]]>]]>" in an attribute and a comment, split across two chunks: payload, not a delimiter.
        xml = ('<rpc xmlns="%s" message-id="eom" note="]]>]]>"><!-- ]]>]]> -->%s</rpc>'
               % (h.NC_NS, GET_RUNNING)).encode()
        cut = xml.index(b"]]>]]>") + 3
        c.send_raw(b"\n#%d\n%s\n#%d\n%s\n##\n" % (cut, xml[:cut], len(xml) - cut, xml[cut:]))
        reply = c.recv_msg()
        root = h.assert_data(reply, "rpc with ]]>]]> inside chunks")
        self.assertIsNotNone(root)
        self.assertEqual(h.parse(reply).get("note"), "]]>]]>", reply)
        self.assert_works(c, "session after ]]>]]> inside chunks")

    def test_bad_chunk_header_closes_only_that_session(self):
        bystander = self.session()
        for bad in [b"\n#abc\n", b"\n#0\n", b"\n#01\n<", b"\n#4294967296\n", b"#5\n<rpc>", b"\n##\n"]:
            with self.subTest(header=bad):
                c = self.session()
                c.send_raw(bad)
                self.assert_closed(c, "chunk header %r" % bad)
                self.assert_works(bystander, "other session after chunk header %r" % bad)
        self.assert_works(self.session(), "new session after bad chunk headers")

    def test_message_over_max_size_closes_only_that_session(self):
        bystander = self.session()
        cases = {
            "one chunk announcing too much": (h.BASE11, b"\n#%d\n<rpc" % (MAX_MESSAGE + 100)),
            "small chunks adding up": (h.BASE11, b"".join(b"\n#1000\n" + b"x" * 1000 for _ in range(9))),
            "end-of-message framing": (h.BASE10, b"<rpc>" + b"x" * (MAX_MESSAGE + 100)),
        }
        for name, (base, data) in cases.items():
            with self.subTest(case=name):
                c = self.session(caps=(base,))
                c.send_raw(data)
                self.assert_closed(c, name)
                self.assert_works(bystander, "other session after %s" % name)
        # Just under the limit is fine.
        c = self.session()
        padding = "x" * (MAX_MESSAGE - 400)
        h.assert_data(c.rpc("%s<!--%s-->" % (GET_RUNNING, padding)), "message just under the size limit")

    def test_disconnects_mid_hello_and_mid_message_do_not_hurt_the_server(self):
        # Connect and leave without a word.
        self.connect().close()
        # Half a hello.
        c = self.connect()
        c.read_hello()
        c.send_raw('<hello xmlns="%s"><capabilities><capab' % h.NC_NS)
        c.close()
        # Half a chunk, then a reset instead of a FIN.
        c = self.session()
        c.send_raw("\n#200\n<rpc xmlns=")
        c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        c.close()
        # Half an end-of-message message.
        c = self.session(caps=(h.BASE10,))
        c.send_raw('<rpc xmlns="%s" message-id="1"><get-con' % h.NC_NS)
        c.close()
        # Leaving with a reply still unread.
        c = self.session()
        c.send_msg('<rpc xmlns="%s" message-id="1">%s</rpc>' % (h.NC_NS, GET_RUNNING))
        c.close()
        for device in (0, 1):
            self.assert_works(self.session(device), "device %d after the disconnects" % device)

    # ------------------------------------------------------------ hello

    def test_client_hello_with_session_id_is_refused(self):
        # RFC 6241 section 8.1: a client hello carrying a session-id ends the session.
        c = self.connect()
        c.read_hello()
        c.send_raw(h.client_hello().replace("</capabilities>", "</capabilities><session-id>4</session-id>")
                   + "]]>]]>")
        self.assert_closed(c, "client hello with a session-id")

    def test_client_hello_without_base_capability_is_refused(self):
        c = self.connect()
        c.read_hello()
        c.send_raw(h.client_hello(["urn:example:not-netconf"]) + "]]>]]>")
        self.assert_closed(c, "client hello without a base capability")

    def test_server_hello_has_session_id_and_both_bases(self):
        c = self.connect()
        c.read_hello()
        self.assertGreater(c.session_id or 0, 0, c.server_hello)
        self.assertIn(h.BASE10, c.server_caps())
        self.assertIn(h.BASE11, c.server_caps())


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2)
