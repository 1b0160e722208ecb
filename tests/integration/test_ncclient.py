"""fleetsim against ncclient, a second independent NETCONF client.

ncclient only speaks NETCONF over SSH, so the tests plug a TCP socket in where its SSHSession
expects a paramiko channel (SocketChannel) and transport (SocketTransport), then call the
session's own greeting (_post_connect). Everything else is ncclient's: the hello, both framings,
building the RPCs, parsing replies and raising RPCError. The adapter uses no more of paramiko's
interface than SSHSession.run() and SSHSession.close() in ncclient 0.6.13 touch: fileno (for the
selector), recv, send, send_ready, close, plus is_active/close on the transport.

Run: /usr/bin/python3 test_ncclient.py <path to fleetsim>
"""

import os
import select
import socket
import sys
import threading
import unittest
import warnings

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402

from ncclient import manager  # noqa: E402
from ncclient.devices.default import DefaultDeviceHandler  # noqa: E402
from ncclient.operations import RPCError  # noqa: E402
from ncclient.transport.session import NetconfBase  # noqa: E402
from ncclient.transport.ssh import SSHSession  # noqa: E402
from ncclient.xml_ import to_ele  # noqa: E402

# ncclient 0.6.13 calls threading APIs that Python 3.11 deprecates; that is not ours to fix.
warnings.simplefilter("default")
warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"ncclient(\.|$)")


class SocketChannel:
    """What SSHSession.run() uses of a paramiko Channel, over a TCP socket. Keeps a copy of what
    arrived (first RECORD_BYTES) so that tests can check the framing the server used."""

    RECORD_BYTES = 1 << 20

    def __init__(self, sock):
        self._sock = sock
        self._lock = threading.Lock()
        self.closed = False
        self.received = bytearray()

    def fileno(self):
        return self._sock.fileno()

    def get_id(self):
        return self._sock.fileno()

    def get_name(self):
        return "tcp-%s:%d" % self._sock.getpeername()

    def recv(self, nbytes):
        try:
            data = self._sock.recv(nbytes)
        except OSError:
            return b""
        if len(self.received) < self.RECORD_BYTES:
            self.received += data
        return data

    def recv_ready(self):
        return bool(select.select([self._sock], [], [], 0)[0])

    def send_ready(self):
        return not self.closed

    def send(self, data):
        try:
            return self._sock.send(data)
        except OSError:
            return 0

    def shutdown(self):
        """Wake the session thread: its recv() returns b"" and the run loop ends."""
        with self._lock:
            if not self.closed:
                try:
                    self._sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self):
        with self._lock:
            if not self.closed:
                self.closed = True
                self._sock.close()


class SocketTransport:
    """What SSHSession.close() uses of a paramiko Transport."""

    def __init__(self, channel):
        self._channel = channel
        self._active = True

    def is_active(self):
        return self._active

    def close(self):
        # Only shut the socket down here: the session thread still selects on it, and
        # SSHSession.close() closes the channel after that thread has ended.
        self._active = False
        self._channel.shutdown()


class Base10OnlyHandler(DefaultDeviceHandler):
    """ncclient's default device, offering only base:1.0 in its hello: end-of-message framing."""
    _BASE_CAPABILITIES = [c for c in DefaultDeviceHandler._BASE_CAPABILITIES if c != h.BASE11]


def tcp_manager(addr, handler_cls=DefaultDeviceHandler):
    """A manager.Manager whose session runs over TCP to @addr."""
    handler = handler_cls({})
    session = SSHSession(handler)
    sock = socket.create_connection(addr, timeout=h.scaled(h.IO_TIMEOUT_S))
    sock.settimeout(None)  # the session thread selects before each recv
    channel = SocketChannel(sock)
    session._channel = channel
    session._channel_id = channel.get_id()
    session._channel_name = channel.get_name()
    session._transport = SocketTransport(channel)
    session._connected = True
    session._post_connect()
    session.parser = handler.get_xml_parser(session)
    return manager.Manager(session, handler, timeout=h.scaled(10))


def config(*interfaces):
    return '<config xmlns="%s">%s</config>' % (h.NC_NS, "".join(interfaces))


def names_in(reply):
    """Interface names in a get/get-config reply."""
    root = to_ele(reply.xml)
    return [n.text for n in root.iter("{%s}name" % h.IF_NS)]


class ManagerTestCase(unittest.TestCase):
    fleet = None

    def setUp(self):
        self.managers = []

    def tearDown(self):
        for m in self.managers:
            if m.connected:
                m.close_session()

    def connect(self, device=0, handler_cls=DefaultDeviceHandler):
        m = tcp_manager(self.fleet.addr(device), handler_cls)
        self.managers.append(m)
        return m


class NcclientTests(ManagerTestCase):

    @classmethod
    def setUpClass(cls):
        cls.fleet = h.Fleet(devices=4).start()

    @classmethod
    def tearDownClass(cls):
        cls.fleet.stop()

    def test_capabilities(self):
        m = self.connect()
        caps = m.server_capabilities
        for short in (":base:1.0", ":base:1.1", ":writable-running", ":candidate", ":rollback-on-error",
                      ":validate", ":startup", ":xpath", ":with-defaults"):
            self.assertIn(short, caps, "capability %s missing from %s" % (short, list(caps)))
        modules = {}
        for uri in caps:
            if "module=" in uri:
                params = dict(p.split("=", 1) for p in uri.split("?", 1)[1].split("&"))
                modules[params["module"]] = params.get("revision")
        for name, rev in (("ietf-interfaces", "2018-02-20"), ("ietf-netconf", "2011-06-01"),
                          ("ietf-netconf-monitoring", "2010-10-04"), ("ietf-yang-library", "2019-01-04"),
                          ("fleetsim-netconf-transport", None), ("iana-if-type", None)):
            self.assertIn(name, modules, "no module capability for %s" % name)
            self.assertRegex(modules[name] or "", r"^\d{4}-\d{2}-\d{2}$", "module %s has no revision" % name)
            if rev:
                self.assertEqual(modules[name], rev)
        self.assertEqual(m._session._base, NetconfBase.BASE_11)
        self.assertGreater(int(m.session_id), 0)

    def test_edit_and_get_config_across_devices(self):
        ms = [self.connect(i) for i in range(4)]
        for i, m in enumerate(ms):
            m.edit_config(target="running", config=config(h.iface("ncc-dev%d" % i)))
        for i, m in enumerate(ms):
            names = names_in(m.get_config(source="running"))
            self.assertIn("ncc-dev%d" % i, names)
            others = [n for n in names if n.startswith("ncc-dev") and n != "ncc-dev%d" % i]
            self.assertEqual(others, [], "device %d sees other devices' interfaces" % i)
        # Replace one leaf, delete, and see it through a fresh session.
        ms[0].edit_config(target="running", config=config(h.iface("ncc-dev0", h.IFTYPE_ETH +
                                                                     "<description>d0</description>")))
        fresh = self.connect(0)
        self.assertIn("<description>d0</description>", fresh.get_config(source="running").xml)
        ms[0].edit_config(target="running", config=config(h.iface("ncc-dev0", "", op="delete")))
        self.assertNotIn("ncc-dev0", names_in(fresh.get_config(source="running")))

    def test_errors_raise_rpc_error_with_exact_tag(self):
        m = self.connect(1)
        m.edit_config(target="running", config=config(h.iface("ncc-exists")))
        with self.assertRaises(RPCError) as cm:
            m.edit_config(target="running", config=config(h.iface("ncc-exists", op="create")))
        self.assertEqual((cm.exception.type, cm.exception.tag), ("application", "data-exists"), cm.exception.xml)
        with self.assertRaises(RPCError) as cm:
            m.edit_config(target="running", config=config(h.iface("ncc-exists", "<enabled>maybe</enabled>")))
        self.assertEqual(cm.exception.tag, "invalid-value", cm.exception.xml)
        # test-only, then the data is still absent.
        m.edit_config(target="running", config=config(h.iface("ncc-test-only")), test_option="test-only")
        self.assertNotIn("ncc-test-only", names_in(m.get_config(source="running")))

    def test_config_without_namespace_is_an_rpc_error_and_the_session_lives(self):
        # ncclient passes a <config> without namespace through as written, inside its prefixed
        # <nc:edit-config>. The reply must keep the message-id, or ncclient drops the session.
        m = self.connect(3)
        with self.assertRaises(RPCError) as cm:
            m.edit_config(target="running", config="<config>%s</config>" % h.iface("ncc-unqualified"))
        self.assertEqual((cm.exception.type, cm.exception.tag), ("protocol", "unknown-element"), cm.exception.xml)
        self.assertIn("<config> must be in the base namespace %s" % h.NC_NS, cm.exception.message)
        self.assertTrue(m.connected)
        self.assertNotIn("ncc-unqualified", names_in(m.get()))
        m.edit_config(target="running", config=config(h.iface("ncc-qualified")))
        self.assertIn("ncc-qualified", names_in(m.get_config(source="running")))

    def test_candidate_lock_commit_discard(self):
        m = self.connect(2)
        other = self.connect(2)
        with m.locked("candidate"):
            m.edit_config(target="candidate", config=config(h.iface("ncc-cand")))
            self.assertIn("ncc-cand", names_in(m.get_config(source="candidate")))
            self.assertNotIn("ncc-cand", names_in(m.get_config(source="running")))
            with self.assertRaises(RPCError) as cm:
                other.lock("candidate")
            self.assertEqual(cm.exception.tag, "lock-denied", cm.exception.xml)
            m.commit()
        self.assertIn("ncc-cand", names_in(other.get_config(source="running")))
        other.edit_config(target="candidate", config=config(h.iface("ncc-discard")))
        other.discard_changes()
        self.assertNotIn("ncc-discard", names_in(other.get_config(source="candidate")))

    def test_xpath_filter_with_prefixes(self):
        m = self.connect(3)
        m.edit_config(target="running", config=config(h.iface("ncc-xa"), h.iface("ncc-xb")))
        reply = m.get_config(source="running",
                             filter=("xpath", ({"if": h.IF_NS}, "/if:interfaces/if:interface[if:name='ncc-xb']")))
        self.assertEqual(names_in(reply), ["ncc-xb"], reply.xml)
        # The same on get, which must not add state data the xpath did not select.
        reply = m.get(filter=("xpath", ({"x": h.IF_NS}, "/x:interfaces/x:interface[x:name='ncc-xa']/x:name")))
        self.assertEqual(names_in(reply), ["ncc-xa"], reply.xml)
        self.assertNotIn("netconf-state", reply.xml)

    def test_subtree_filter_on_get_lists_our_session(self):
        m = self.connect(3)
        reply = m.get(filter=("subtree", '<netconf-state xmlns="%s"><sessions/></netconf-state>' % h.NCM_NS))
        self.assertIn("<session-id>%s</session-id>" % m.session_id, reply.xml)

    def test_dispatch_get_schema_and_unknown_operation(self):
        m = self.connect(0)
        reply = m.dispatch(to_ele('<get-schema xmlns="%s"><identifier>ietf-interfaces</identifier>'
                                  '<version>2018-02-20</version></get-schema>' % h.NCM_NS))
        data = to_ele(reply.xml).find("{%s}data" % h.NCM_NS)
        self.assertIsNotNone(data, reply.xml)
        self.assertTrue(data.text.startswith("module ietf-interfaces"), data.text[:100])
        self.assertTrue(m.get_schema("ietf-netconf").data.startswith("module ietf-netconf"))
        with self.assertRaises(RPCError) as cm:
            m.dispatch(to_ele('<frobnicate xmlns="%s"/>' % h.NC_NS))
        self.assertEqual(cm.exception.tag, "operation-not-supported", cm.exception.xml)

    def test_base10_end_of_message_framing(self):
        m = self.connect(1, Base10OnlyHandler)
        self.assertNotIn(h.BASE11, m.client_capabilities)
        self.assertEqual(m._session._base, NetconfBase.BASE_10)
        m.edit_config(target="running", config=config(h.iface("ncc-eom")))
        self.assertIn("ncc-eom", names_in(m.get_config(source="running")))
        received = bytes(m._session._channel.received)
        hello_end = received.index(b"]]>]]>") + 6
        after_hello = received[hello_end:]
        self.assertIn(b"]]>]]>", after_hello, "replies are not end-of-message framed")
        self.assertNotIn(b"\n##\n", after_hello, "chunked framing in a base:1.0 session")
        # And a base:1.1 session really is chunked.
        m11 = self.connect(1)
        m11.get_config(source="running")
        self.assertIn(b"\n##\n", bytes(m11._session._channel.received))

    def test_close_session_ends_the_connection(self):
        m = self.connect(2)
        channel = m._session._channel
        m.close_session()
        self.assertFalse(m.connected)
        self.assertTrue(channel.closed)


class IpPerDeviceTests(ManagerTestCase):
    """50 devices on 127.0.1.1-127.0.1.50, all on one port."""

    FIRST = "127.0.1.1"
    LAST = "127.0.1.50"

    @classmethod
    def setUpClass(cls):
        cls.fleet = h.Fleet(devices=50, ip_per_device=True, ip=cls.FIRST).start()

    @classmethod
    def tearDownClass(cls):
        cls.fleet.stop()

    def test_first_and_last_address_are_different_devices(self):
        self.assertEqual(self.fleet.addr(0), (self.FIRST, self.fleet.port))
        self.assertEqual(self.fleet.addr(49), (self.LAST, self.fleet.port))
        first = self.connect(0)
        last = self.connect(49)
        first.edit_config(target="running", config=config(h.iface("ipd-first")))
        self.assertIn("ipd-first", names_in(first.get_config(source="running")))
        self.assertNotIn("ipd-first", names_in(last.get_config(source="running")))
        last.edit_config(target="running", config=config(h.iface("ipd-last")))
        self.assertNotIn("ipd-last", names_in(first.get_config(source="running")))
        # A second session to the first address meets the first device again.
        again = self.connect(0)
        self.assertIn("ipd-first", names_in(again.get_config(source="running")))

    def test_every_address_is_served(self):
        # Connections reach whichever worker's socket the kernel picks and are handed to the
        # device's worker: connect to every address, in bursts, several times over, so that both
        # paths are taken many times and hand-overs overlap.
        for rnd in range(4):
            clients = []
            try:
                for i in range(self.fleet.devices):
                    clients.append(h.RawClient(self.fleet.addr(i)))
                for i, c in enumerate(clients):
                    c.hello()
                    h.assert_data(c.get_config(), "device %d (%s), round %d" % (i, self.fleet.addr(i)[0], rnd))
            finally:
                for c in clients:
                    c.close()

    def test_address_outside_the_fleet_gets_no_hello(self):
        outside = ("127.0.1.51", self.fleet.port)
        try:
            c = h.RawClient(outside, timeout=h.scaled(2))
        except OSError:
            return  # refused outright: fine
        with c:
            try:
                c.read_hello()
            except (h.ConnectionClosed, OSError):
                return
            self.fail("127.0.1.51 is outside the fleet but answered with a hello:\n%s" % c.server_hello)


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    # warnings=False: keep the filters above instead of unittest's own.
    unittest.main(verbosity=2, warnings=False)
