"""Custom RPC replies (--rpc-config, OpenDaylight testtool's format) against raw clients and ncclient.

One fleet (3 devices) serves data/rpc_custom.xml, the example shipped with the tests, and loads
data/rpc_custom_yang/example-ops.yang (rpcs reboot and ping) with --schemas-dir. Each test uses
devices and requests of its own, since a device's position in a sequence outlives sessions.
Bad files are checked with separate runs that must exit with 2 before anything listens.

Run: /usr/bin/python3 test_rpc_custom.py <path to fleetsim>
"""

import os
import sys
import tempfile
import unittest
import warnings

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402
from test_ncclient import tcp_manager  # noqa: E402

from ncclient.operations import RPCError  # noqa: E402
from ncclient.xml_ import to_ele  # noqa: E402

warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"ncclient(\.|$)")

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
RPC_CONFIG = os.path.join(DATA, "rpc_custom.xml")
YANG_DIR = os.path.join(DATA, "rpc_custom_yang")
OPS_NS = "urn:example:fleetsim:ops"
NCM_NS = "urn:ietf:params:xml:ns:yang:ietf-netconf-monitoring"

REBOOT = ('<reboot xmlns="%s"><delay>300</delay><message>maintenance</message></reboot>' % OPS_NS)
# The configured get-config, written differently: indentation, prefixes, whitespace around leaf text.
CUSTOM_GET = ('<get-config>\n  <source><running/></source>\n  <filter type="subtree">'
              '<i:interfaces xmlns:i="%s"><i:interface><i:name> custom0 </i:name></i:interface>'
              '</i:interfaces></filter>\n</get-config>' % h.IF_NS)


def descriptions(reply):
    """The <description> texts of a get-config reply's interfaces."""
    data = h.assert_data(reply)
    return [d.text for d in data.iter("{%s}description" % h.IF_NS)]


class RpcCustomTests(unittest.TestCase):
    fleet = None

    @classmethod
    def setUpClass(cls):
        cls.fleet = h.Fleet(devices=3, extra=["--rpc-config", RPC_CONFIG, "--schemas-dir", YANG_DIR]).start()

    @classmethod
    def tearDownClass(cls):
        cls.fleet.stop()

    def setUp(self):
        self.clients = []

    def tearDown(self):
        for c in self.clients:
            c.close()

    def session(self, device):
        c = h.RawClient(self.fleet.addr(device)).hello()
        self.clients.append(c)
        return c

    def stats(self, c):
        """(in-rpcs, out-rpc-errors) of the session's device, from ietf-netconf-monitoring."""
        reply = c.rpc('<get><filter type="subtree"><netconf-state xmlns="%s"><statistics/></netconf-state>'
                      '</filter></get>' % NCM_NS, msg_id="stats")
        data = h.assert_data(reply)
        return (int(data.findtext(".//{%s}in-rpcs" % NCM_NS)), int(data.findtext(".//{%s}out-rpc-errors" % NCM_NS)))

    def test_sequence_per_device_last_repeats(self):
        a = self.session(0)
        self.assertEqual(descriptions(a.rpc(CUSTOM_GET)), ["first"])
        self.assertEqual(descriptions(a.rpc(CUSTOM_GET)), ["second"])
        # Another device starts at the beginning of its own sequence.
        b = self.session(1)
        self.assertEqual(descriptions(b.rpc(CUSTOM_GET)), ["first"])
        for _ in range(3):
            self.assertEqual(descriptions(a.rpc(CUSTOM_GET)), ["last"])
        # The position belongs to the device, not to the session.
        a2 = self.session(0)
        self.assertEqual(descriptions(a2.rpc(CUSTOM_GET)), ["last"])
        self.assertEqual(descriptions(b.rpc(CUSTOM_GET)), ["second"])

    def test_reply_repeats_the_rpc_attributes(self):
        c = self.session(2)
        reply = c.rpc(CUSTOM_GET, msg_id="m-77", attrs=' xmlns:x="urn:x" x:tag="t1"')
        root = h.parse(reply)
        self.assertEqual(root.get("message-id"), "m-77", reply)
        self.assertEqual(root.get("{urn:x}tag"), "t1", reply)
        self.assertEqual(len(descriptions(reply)), 1)

    def test_one_leaf_differing_gets_the_built_in_reply(self):
        c = self.session(2)
        # custom1 is not configured: the built-in get-config answers (no such interface: empty data).
        reply = c.rpc(CUSTOM_GET.replace("custom0", "custom1"))
        self.assertEqual(descriptions(reply), [], reply)
        self.assertEqual(h.interface_names(reply), [], reply)
        # An attribute more is another request, too: whatever the built-in path answers, not the custom reply.
        reply = c.rpc(CUSTOM_GET.replace('type="subtree"', 'type="subtree" extra="1"'))
        self.assertEqual(h.parse(reply).tag, "{%s}rpc-reply" % h.NC_NS, reply)
        self.assertNotIn("<description>", reply)

    def test_edit_config_precedence_and_fall_through(self):
        c = self.session(2)
        # The configured edit: refused by the custom reply, so running does not change.
        h.assert_error(c.edit_config(h.iface("locked0")), "access-denied", "application", "custom edit")
        # One leaf differs: the built-in edit-config applies it.
        h.assert_ok(c.edit_config(h.iface("locked1")), "built-in edit")
        names = h.interface_names(c.get_config())
        self.assertIn("locked1", names)
        self.assertNotIn("locked0", names)
        # Still refused after running changed: custom replies do not look at the datastore.
        h.assert_error(c.edit_config(h.iface("locked0")), "access-denied", "application", "custom edit again")

    def test_rpc_error_output_is_an_error_reply(self):
        c = self.session(1)
        in_before, errors_before = self.stats(c)
        h.assert_ok(c.rpc(REBOOT), "first reboot")
        for _ in range(2):
            reply = c.rpc(REBOOT)
            h.assert_error(reply, "in-use", "application", "later reboot")
            self.assertIn("A reboot is already scheduled.", reply)
        in_after, errors_after = self.stats(c)
        # Three reboots and the first stats request were counted; two replies were errors.
        self.assertEqual(in_after - in_before, 4)
        self.assertEqual(errors_after - errors_before, 2)

    def test_ncclient_sees_custom_replies_and_errors(self):
        m = tcp_manager(self.fleet.addr(0))
        try:
            reply = m.dispatch(to_ele(REBOOT))
            self.assertTrue(reply.ok, reply.xml)
            with self.assertRaises(RPCError) as caught:
                m.dispatch(to_ele(REBOOT))
            self.assertEqual(caught.exception.tag, "in-use")
            self.assertEqual(caught.exception.message.strip(), "A reboot is already scheduled.")
        finally:
            m.close_session()

    def test_schema_rpcs_without_custom_reply_are_not_supported(self):
        c = self.session(2)
        # ping is defined by a loaded module, has no built-in handler and no custom reply.
        reply = c.rpc('<ping xmlns="%s"><host>10.0.0.1</host></ping>' % OPS_NS)
        h.assert_error(reply, "operation-not-supported", "protocol", "ping")
        # reboot with other parameters than the configured ones: no custom reply either.
        reply = c.rpc('<reboot xmlns="%s"><delay>5</delay></reboot>' % OPS_NS)
        h.assert_error(reply, "operation-not-supported", "protocol", "other reboot")
        # An operation of no loaded module: unknown-namespace, naming it (RFC 6241 appendix A).
        reply = c.rpc('<frob xmlns="urn:example:nowhere"/>')
        h.assert_error(reply, "unknown-namespace", "protocol", "unknown module")
        root = h.parse(reply)
        self.assertEqual(root.findtext(".//{%s}bad-namespace" % h.NC_NS), "urn:example:nowhere", reply)

    def test_without_message_id_no_custom_reply(self):
        c = self.session(2)
        c.send_msg('<rpc xmlns="%s">%s</rpc>' % (h.NC_NS, CUSTOM_GET))
        h.assert_error(c.recv_msg(), "missing-attribute", "rpc", "no message-id")


class BadFileTests(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="fleetsim-rpc-config-")

    def tearDown(self):
        for name in os.listdir(self.tmp):
            os.unlink(os.path.join(self.tmp, name))
        os.rmdir(self.tmp)

    def assert_refused(self, text, why):
        path = os.path.join(self.tmp, "rpcs.xml")
        if text is not None:
            with open(path, "w") as f:
                f.write(text)
        code, out = h.run_fleetsim(["--ssh", "false", "--device-count", "2", "--starting-port", "20000",
                                    "--rpc-config", path], timeout=h.scaled(30))
        self.assertEqual(code, 2, out)
        self.assertIn(path, out)
        self.assertIn(why, out)
        self.assertNotIn(h.READY_TEXT, out)

    def test_missing_file(self):
        self.assert_refused(None, "No such file")

    def test_not_xml(self):
        self.assert_refused("<rpcs><rpc>\n<input></rpc>", "not well-formed XML")

    def test_no_rpcs(self):
        self.assert_refused('<rpc-replies/>', "the root element is not <rpcs>")

    def test_rpc_without_input(self):
        self.assert_refused('<rpcs><rpc><output><rpc-reply xmlns="%s"><ok/></rpc-reply></output></rpc></rpcs>'
                            % h.NC_NS, "<rpc> number 1 has no <input>")

    def test_rpc_without_output(self):
        self.assert_refused('<rpcs><rpc><input><reboot xmlns="%s"/></input></rpc></rpcs>' % OPS_NS,
                            "<rpc> number 1 has no <output>")

    def test_output_not_an_rpc_reply(self):
        self.assert_refused('<rpcs><rpc><input><reboot xmlns="%s"/></input><output><ok xmlns="%s"/></output>'
                            '</rpc></rpcs>' % (OPS_NS, h.NC_NS), "not an <rpc-reply>")


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2, warnings=False)
