"""Scripted NETCONF servers for testing clients (fleetsim-stress) where fleetsim cannot misbehave.

FakeServers listens on `count` consecutive ports of 127.0.0.1 or ::1 (device i on port + i), or on one
port of a list of addresses (device i on the i-th), and runs one thread per connection. Each connection
follows a script (the Script fields): which hello to send (or none), how many requests to answer, what
to do afterwards (close politely or go silent), a delay per reply, or "settle" mode, where requests pile
up unanswered until the client has sent nothing more for a while; that shows exactly how many requests
the client keeps in flight.

With ssh=(user, password) each connection is SSH first (paramiko, password login, the "netconf"
subsystem) and the script runs on the subsystem's channel.

Everything a connection received is recorded (preamble bytes, the client hello, every request
with its framing), so tests can assert what the client sent and not only what it reported.
Every socket operation is bounded; close() ends all threads within a bounded time.

With `tls` (a server-side ssl.SSLContext) every connection is NETCONF over TLS (RFC 7589): the
handshake runs in the connection's thread, and a refused one is recorded in Connection.tls_error.
"""

import random
import re
import socket
import threading
import time
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape

import fleetsim_harness as h

EOM = b"]]>]]>"
CHUNK_HEADER = re.compile(rb"\n#([1-9][0-9]{0,9})\n")
CHUNK_END = b"\n##\n"
# A connection thread gives up after this long, whatever its script says.
CONNECTION_LIMIT_S = 60.0
POLL_S = 0.05
NOTIFICATION = ('<notification xmlns="urn:ietf:params:xml:ns:netconf:notification:1.0"><eventTime>'
                '2026-01-01T00:00:00Z</eventTime><ping xmlns="urn:example:fake"/></notification>')


class ProtocolError(Exception):
    """The client sent something a NETCONF server could not parse."""


def server_hello(caps, session_id):
    sid = "" if session_id is None else "<session-id>%d</session-id>" % session_id
    return ('<?xml version="1.0" encoding="UTF-8"?><hello xmlns="%s"><capabilities>%s</capabilities>%s</hello>'
            % (h.NC_NS, "".join("<capability>%s</capability>" % escape(c) for c in caps), sid))


class Script:
    """What each connection of a FakeServers does (all fields optional)."""

    def __init__(self, caps=(h.BASE10, h.BASE11), session_id=4242, send_hello=True, hello_delay_s=0.0,
                 preamble_len=0, answer=None, after="close", reply_delay_s=0.0, settle_s=None, error_tags=None,
                 wrong_id_at=None, notify=False, hello_after_client=False):
        self.caps = list(caps)
        self.session_id = session_id      # None: a hello without session-id
        self.send_hello = send_hello      # False: never send a hello
        self.hello_delay_s = hello_delay_s  # wait this long after accepting before the hello
        self.preamble_len = preamble_len  # bytes the client sends before its hello
        self.answer = answer              # requests answered <ok/>; None: all
        self.after = after                # once `answer` requests are answered: "close" or "silent"
        self.reply_delay_s = reply_delay_s  # sleep before each reply
        self.settle_s = settle_s          # settle mode: answer all pending after this much quiet
        self.error_tags = dict(error_tags or {})  # operation name -> error-tag of an rpc-error reply
        self.wrong_id_at = wrong_id_at    # the reply to this request (1-based) carries message-id 999999
        self.notify = notify              # a <notification> before every reply
        self.hello_after_client = hello_after_client  # True: silent until the client's hello has arrived


class Request:
    def __init__(self, message_id, op, target, text, framing):
        self.message_id = message_id  # the rpc's message-id attribute (string)
        self.op = op                  # local name of the operation element (edit-config, commit, ...)
        self.target = target          # edit-config target datastore, else None
        self.text = text              # the whole rpc
        self.framing = framing        # "eom" or "chunked"

    def __repr__(self):
        return "Request(%s %s %s)" % (self.message_id, self.op, self.target)


class Connection:
    """What one client connection sent, as seen by the server."""

    def __init__(self, device):
        self.device = device
        self.preamble = b""
        self.client_hello = None
        self.client_caps = []
        self.chunked = False
        self.requests = []
        self.max_pending = 0
        self.errors = []          # protocol errors seen (the client framed or wrote garbage)
        self.socket_errors = []   # send/recv failures (the client went away)
        self.accepted_at = None
        self.peer = None          # the client's (host, port, ...) as accept() gave it
        self.hello_sent_at = None
        self.closed_by_client_at = None  # when the client's EOF arrived
        self.done = False         # the connection's thread has ended
        self.tls_error = None     # with tls: why the handshake failed (ssl's text), else None
        self.peer_cert = None     # with tls: the client certificate's subject, when one was sent


class FakeServers:
    """`count` scripted NETCONF servers on ports port..port+count-1 of `host` (127.0.0.1 or ::1)."""

    def __init__(self, script=None, count=1, tls=None, host="127.0.0.1", ssh=None, hosts=None):
        self.script = script or Script()
        self.count = len(hosts) if hosts else count
        self.tls = tls              # ssl.SSLContext (server side), or None for plain TCP
        self.host = host
        self.hosts = hosts          # an address per device, all on one port (as --ip-per-device); None: host
        self.ssh = ssh              # (user, password): speak SSH with the netconf subsystem; None: TCP
        self.host_key = None        # paramiko key, made once when ssh is set
        self.port = None
        self.listeners = []
        self.connections = []
        self.lock = threading.Lock()
        self.active_setups = 0      # connections accepted whose hello is not yet sent
        self.max_active_setups = 0
        self.stopping = threading.Event()
        self.accept_threads = []    # one per listener
        self.threads = []           # one per connection

    # -- life
    def start(self):
        if self.ssh and not self.host_key:
            import paramiko
            self.host_key = paramiko.ECDSAKey.generate()  # fast, unlike RSA; libssh takes it
        rng = random.Random()
        for _ in range(20):
            port = rng.randrange(h.PORT_LOW, h.PORT_HIGH - self.count)
            socks = []
            try:
                for i in range(self.count):
                    host = self.hosts[i] if self.hosts else self.host
                    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
                    socks.append(s)
                    if self.hosts:
                        # An address of a prefix routed to lo is local without being assigned to it.
                        s.setsockopt(socket.SOL_IP, getattr(socket, "IP_FREEBIND", 15), 1)
                    s.bind((host, port if self.hosts else port + i))
                    s.listen(128)
                    s.settimeout(POLL_S)
            except OSError:
                for s in socks:
                    s.close()
                continue
            self.port = port
            self.listeners = socks
            for i, s in enumerate(socks):
                self.accept_threads.append(threading.Thread(target=self._accept_loop, args=(i, s),
                                                            name="accept-%d" % i, daemon=True))
            for t in self.accept_threads:
                t.start()
            return self
        raise AssertionError("no free range of %d ports for the fake servers" % self.count)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        """Stop every thread (bounded); raises if one hangs or the client broke the protocol."""
        self.stopping.set()
        # Accept loops first: once they have ended, the list of connection threads is complete.
        for t in self.accept_threads:
            t.join(timeout=h.scaled(5))
        for t in list(self.threads):
            t.join(timeout=h.scaled(5))
        for s in self.listeners:
            s.close()
        stuck = [t.name for t in self.accept_threads + self.threads if t.is_alive()]
        if stuck:
            raise AssertionError("fake server threads did not end: %s" % stuck)
        broken = ["device %d: %s" % (c.device, e) for c in self.connections for e in c.errors]
        if broken:
            raise AssertionError("the client broke the protocol:\n" + "\n".join(broken))

    # -- results (call them once the client has exited)
    def finished(self, timeout=5.0):
        """Every connection, after its thread has read the client's last bytes and its close.
        The client may exit before these threads have caught up, so this waits (bounded)."""
        deadline = time.monotonic() + h.scaled(timeout)
        while True:
            with self.lock:
                conns = list(self.connections)
            if all(c.done for c in conns):
                return conns
            if time.monotonic() > deadline:
                raise AssertionError("%d fake server connections still open %.0f s after the client ended"
                                     % (sum(not c.done for c in conns), h.scaled(timeout)))
            time.sleep(0.01)

    def all_requests(self):
        return [r for c in self.finished() for r in c.requests]

    def only_connection(self):
        conns = self.finished()
        if len(conns) != 1:
            raise AssertionError("expected exactly one connection, got %d" % len(conns))
        return conns[0]

    # -- server side
    def _accept_loop(self, device, listener):
        while not self.stopping.is_set():
            try:
                sock, peer = listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            conn = Connection(device)
            conn.accepted_at = time.monotonic()
            conn.peer = peer
            with self.lock:
                self.connections.append(conn)
                self.active_setups += 1
                self.max_active_setups = max(self.max_active_setups, self.active_setups)
            t = threading.Thread(target=self._serve, args=(sock, conn), name="conn-%d" % device, daemon=True)
            self.threads.append(t)  # before start: close() must see every thread that runs
            t.start()

    def _serve(self, sock, conn):
        transport = None
        try:
            if self.tls is not None:
                tls = self._tls_accept(sock, conn)
                if tls is None:
                    return
                sock = tls
            if self.ssh:
                transport, channel = self._ssh_channel(sock)
                if channel is None:
                    conn.errors.append("SSH: no netconf subsystem")
                    self.setup_done()
                    return
                _Session(self, channel, conn).run()
            else:
                _Session(self, sock, conn).run()
        except ProtocolError as e:
            conn.errors.append(str(e))
        except (OSError, EOFError) as e:
            # The client may close while replies are being written; that is its business.
            conn.socket_errors.append(str(e))
        finally:
            if transport:
                transport.close()
            sock.close()
            conn.done = True

    def _ssh_channel(self, sock):
        """Server side of SSH on sock: password login and the netconf subsystem; (transport, channel or None)."""
        import paramiko
        servers = self
        subsystem = threading.Event()

        class Interface(paramiko.ServerInterface):
            def get_allowed_auths(self, username):
                return "password"

            def check_auth_password(self, username, password):
                ok = (username, password) == tuple(servers.ssh)
                return paramiko.AUTH_SUCCESSFUL if ok else paramiko.AUTH_FAILED

            def check_channel_request(self, kind, chanid):
                if kind == "session":
                    return paramiko.OPEN_SUCCEEDED
                return paramiko.OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED

            def check_channel_subsystem_request(self, channel, name):
                if name == "netconf":
                    subsystem.set()
                    return True
                return False

        sock.settimeout(None)  # paramiko runs its own thread on the socket
        transport = paramiko.Transport(sock)
        transport.add_server_key(self.host_key)
        transport.start_server(server=Interface())
        channel = transport.accept(h.scaled(10))
        if channel is None or not subsystem.wait(h.scaled(10)):
            return transport, None
        return transport, channel

    def _tls_accept(self, sock, conn):
        """The TLS handshake, bounded; the TLS socket, or None (closed) when it failed."""
        sock.settimeout(h.scaled(10))
        try:
            tls = self.tls.wrap_socket(sock, server_side=True)
        except (OSError, ValueError) as e:
            conn.tls_error = str(e)
            sock.close()
            self.setup_done()
            return None
        cert = tls.getpeercert()
        if cert:
            conn.peer_cert = dict(x[0] for x in cert.get("subject", ()))
        return tls

    def setup_done(self):
        with self.lock:
            self.active_setups -= 1


class _Session:
    def __init__(self, servers, sock, conn):
        self.servers = servers
        self.script = servers.script
        self.sock = sock
        self.conn = conn
        self.buf = b""
        self.eof = False
        self.deadline = time.monotonic() + h.scaled(CONNECTION_LIMIT_S)
        self.answered = 0
        self.pending = []
        sock.settimeout(POLL_S)

    def stopped(self):
        return self.servers.stopping.is_set() or time.monotonic() > self.deadline

    def fill(self):
        """Read what is there (bounded wait); returns False on timeout. Sets eof."""
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            return False
        except ConnectionResetError:
            data = b""
        if not data:
            self.eof = True
            if self.conn.closed_by_client_at is None:
                self.conn.closed_by_client_at = time.monotonic()
            return False
        self.buf += data
        return True

    def next_message(self, chunked):
        """A whole message from the buffer, or None."""
        if not chunked:
            if EOM not in self.buf:
                return None
            msg, _, self.buf = self.buf.partition(EOM)
            return msg
        pos = 0
        parts = []
        while True:
            if len(self.buf) - pos < 4:
                return None
            if self.buf.startswith(CHUNK_END, pos):
                self.buf = self.buf[pos + len(CHUNK_END):]
                if not parts:
                    raise ProtocolError("chunked message with no chunk")
                return b"".join(parts)
            m = CHUNK_HEADER.match(self.buf, pos)
            if not m:
                head = self.buf[pos:pos + 14]
                # "\n#" + up to 10 digits + "\n" is 13 bytes: anything else is not a chunk header.
                if head[:2] != b"\n#" or len(head) == 14:
                    raise ProtocolError("bad chunk header: %r" % self.buf[pos:pos + 40])
                return None
            size = int(m.group(1))
            if len(self.buf) < m.end() + size:
                return None
            parts.append(self.buf[m.end():m.end() + size])
            pos = m.end() + size

    def frame(self, xml):
        data = xml.encode()
        if self.conn.chunked:
            return b"\n#%d\n%s\n##\n" % (len(data), data)
        return data + EOM

    def send(self, *xmls):
        """All messages in one write, so that the client reads them together."""
        self.sock.sendall(b"".join(self.frame(x) for x in xmls))

    def run(self):
        s = self.script
        # The client's preamble comes first, byte for byte.
        while len(self.buf) < s.preamble_len and not self.stopped() and not self.eof:
            self.fill()
        self.conn.preamble, self.buf = self.buf[:s.preamble_len], self.buf[s.preamble_len:]
        if s.hello_delay_s:
            end = time.monotonic() + s.hello_delay_s
            while time.monotonic() < end and not self.stopped():
                time.sleep(min(POLL_S, max(0.0, end - time.monotonic())))
        if not s.send_hello:
            self.servers.setup_done()
            self.drain()
            return
        self.servers.setup_done()
        if not s.hello_after_client:
            self.send(server_hello(s.caps, s.session_id))
            self.conn.hello_sent_at = time.monotonic()
        # The client's hello is always end-of-message framed.
        msg = None
        while msg is None and not self.stopped() and not self.eof:
            msg = self.next_message(False)
            if msg is None:
                self.fill()
        if msg is None:
            return
        if s.hello_after_client:
            self.send(server_hello(s.caps, s.session_id))
            self.conn.hello_sent_at = time.monotonic()
        self.conn.client_hello = msg.decode(errors="replace")
        try:
            root = ET.fromstring(msg)
        except ET.ParseError as e:
            raise ProtocolError("client hello is not XML (%s): %r" % (e, msg[:200]))
        self.conn.client_caps = [c.text for c in root.iter("{%s}capability" % h.NC_NS)]
        self.conn.chunked = h.BASE11 in s.caps and h.BASE11 in self.conn.client_caps
        self.serve_requests()

    def serve_requests(self):
        s = self.script
        quiet_since = time.monotonic()
        while not self.stopped():
            msg = self.next_message(self.conn.chunked)
            if msg is not None:
                self.take(msg)
                quiet_since = time.monotonic()
                if s.settle_s is None:
                    self.answer_pending()
                if s.answer is not None and self.answered >= s.answer:
                    break
                continue
            if self.eof:
                return
            if self.fill():
                quiet_since = time.monotonic()
            elif s.settle_s is not None and self.pending and time.monotonic() - quiet_since >= s.settle_s:
                self.answer_pending()
                if s.answer is not None and self.answered >= s.answer:
                    break
        if self.stopped():
            return
        if s.after == "close":
            if self.servers.tls is not None:
                return  # ssl's shutdown() would drop TLS and leave raw records to drain: just close
            # FIN, not RST: read on until the client closes, so its unread requests never reset it.
            self.sock.shutdown(socket.SHUT_WR)
        self.drain()

    def take(self, msg):
        text = msg.decode(errors="replace")
        try:
            root = ET.fromstring(msg)
        except ET.ParseError as e:
            raise ProtocolError("request is not XML (%s): %r" % (e, msg[:200]))
        if root.tag != "{%s}rpc" % h.NC_NS or len(root) != 1:
            raise ProtocolError("not an rpc with one operation: %r" % msg[:200])
        op = root[0]
        target = None
        if op.tag == "{%s}edit-config" % h.NC_NS:
            t = op.find("{%s}target" % h.NC_NS)
            target = t[0].tag.split("}")[1] if t is not None and len(t) else None
        self.conn.requests.append(Request(root.get("message-id"), op.tag.split("}")[1], target, text,
                                          "chunked" if self.conn.chunked else "eom"))
        self.pending.append((root.get("message-id"), op.tag.split("}")[1]))
        self.conn.max_pending = max(self.conn.max_pending, len(self.pending))

    def answer_pending(self):
        s = self.script
        out = []
        while self.pending and (s.answer is None or self.answered < s.answer):
            mid, op = self.pending.pop(0)
            self.answered += 1
            if self.answered == s.wrong_id_at:
                mid = "999999"
            if op in s.error_tags:
                body = ('<rpc-error><error-type>application</error-type><error-tag>%s</error-tag>'
                        '<error-severity>error</error-severity></rpc-error>' % s.error_tags[op])
            else:
                body = "<ok/>"
            reply = [NOTIFICATION] if s.notify else []
            reply.append('<rpc-reply xmlns="%s" message-id="%s">%s</rpc-reply>' % (h.NC_NS, mid, body))
            if s.reply_delay_s:
                time.sleep(s.reply_delay_s)
                self.send(*reply)
            else:
                out += reply
        if out:
            self.send(*out)

    def drain(self):
        """Read until the client closes (bounded), recording requests without answering them."""
        while not self.stopped() and not self.eof:
            if self.conn.client_hello is None:
                self.fill()
                self.buf = b""
                continue
            msg = self.next_message(self.conn.chunked)
            if msg is not None:
                self.take(msg)
            else:
                self.fill()
