"""A RESTCONF stand-in for a network controller that really mounts what it is given.

It takes OpenDaylight-style registrations (PATCH on
/restconf/data/network-topology:network-topology/topology=topology-netconf),
then mounts every registered node over NETCONF-over-TCP (tcp-only nodes:
connect, read the device's hello, answer with its own, keep the session
open), at most `concurrency` mounts at a time, and serves the topology with
each node's connection-status (connecting, connected, unable-to-connect) on
GET ...?content=nonconfig, as OpenDaylight does. It is what bench scripts
point `fleetsim --controller-ip` and `fleetsim-stress controller-mount` at;
it is not a controller (no schemas, no SSH).

A mounted session is watched: when the device ends it (EOF or a reset, as a
reboot or a down does) or, with `keepalive_s`, leaves a keepalive <get>
unanswered for twice that long, the node goes back to connecting and is
connected again with OpenDaylight's connector's backoff: the first attempt
after `reconnect_delay` seconds (2), each next one after 1.5 times the last
delay, at most `reconnect_max_delay` (30); after `max_attempts` (5) failed
attempts the node is unable-to-connect and the attempts go on at that pace
(the first mount is one attempt, as before: unable-to-connect on failure).

It also takes what OpenDaylight's REST perf client (and `fleetsim-stress
restconf`) sends: a POST or PUT to .../node=<id>/yang-ext:mount/<path>
becomes an edit-config on the device behind that node (a registered node's
host and port, else "<port>-sim-device" is the device at `device_host`:<port>)
over one plain-TCP NETCONF session per device, kept open: the body (JSON
converted for the few modules it knows the namespaces of, or XML as sent)
goes inside the elements <path> names, to the candidate and a commit when
the device has :candidate, else to running. It answers 201 (POST) or 204
(PUT), 400 when the device answered rpc-error. For tests it can answer 500
for a share of the edits (`fail_every`: every n-th; `fail_forward`: after
forwarding the edit to the device, else without), or stop answering
(`close_after`: from the edit after that many on, each connection is closed
with no answer). `edits` records every edit request taken.

Run alone: /usr/bin/python3 bench/fake_controller.py --port 18181
"""

import argparse
import asyncio
import base64
import json
import re
import socket
import threading
import xml.sax.saxutils
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOPOLOGY_PATH = "/restconf/data/network-topology:network-topology/topology=topology-netconf"
HELLO = (b'<hello xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><capabilities><capability>'
         b"urn:ietf:params:netconf:base:1.0</capability></capabilities></hello>]]>]]>")


MOUNT_PATH = re.compile(re.escape(TOPOLOGY_PATH) + r"/node=([^/]+)/yang-ext:mount(/[^?]*)?(\?.*)?$")
# Namespaces of the modules whose JSON the stand-in converts (RFC 7951 names them by module).
NAMESPACES = {
    "ietf-interfaces": "urn:ietf:params:xml:ns:yang:ietf-interfaces",
    "iana-if-type": "urn:ietf:params:xml:ns:yang:iana-if-type",
    "ietf-ip": "urn:ietf:params:xml:ns:yang:ietf-ip",
}
NC_NS = "urn:ietf:params:xml:ns:netconf:base:1.0"
EOM = b"]]>]]>"


def json_to_xml(name, value, parent_ns=None):
    """RFC 7951 JSON member @name: @value as XML elements (a list repeats its element)."""
    module, _, local = name.rpartition(":")
    ns = NAMESPACES.get(module) if module else None
    if module and not ns:
        raise ValueError("unknown module %r" % module)
    if isinstance(value, list):
        return "".join(json_to_xml(name, v, parent_ns) for v in value)
    attrs = ' xmlns="%s"' % ns if ns and ns != parent_ns else ""
    inner_ns = ns or parent_ns
    if isinstance(value, dict):
        inner = "".join(json_to_xml(k, v, inner_ns) for k, v in value.items())
    else:
        text = str(value).lower() if isinstance(value, bool) else str(value)
        prefix = text.split(":", 1)[0] if ":" in text else None
        if prefix in NAMESPACES:  # an identity: its module as a prefix
            attrs += ' xmlns:%s="%s"' % (prefix, NAMESPACES[prefix])
        inner = xml.sax.saxutils.escape(text)
    return "<%s%s>%s</%s>" % (local, attrs, inner, local)


def mount_config(path, body, content_type):
    """The <config> content of an edit: the body inside the elements the path after yang-ext:mount names."""
    if "json" in content_type:
        doc = json.loads(body)
        if not isinstance(doc, dict):
            raise ValueError("the body is not a JSON object")
        inner_parts = list(doc.items())
    else:
        inner_parts = None
    segments = [seg for seg in (path or "").split("/") if seg]
    opens, closes, ns = "", "", None
    for seg in segments:
        name = seg.split("=", 1)[0]
        module, _, local = name.rpartition(":")
        attrs = ""
        if module:
            ns = NAMESPACES.get(module)
            if not ns:
                raise ValueError("unknown module %r" % module)
            attrs = ' xmlns="%s"' % ns
        opens += "<%s%s>" % (local, attrs)
        closes = "</%s>" % local + closes
    if inner_parts is None:
        inner = body.decode() if isinstance(body, bytes) else body
    else:
        inner = "".join(json_to_xml(k, v, ns) for k, v in inner_parts)
    return opens + inner + closes


class DeviceSession:
    """One NETCONF-over-TCP session to a device, kept open, one request at a time."""

    def __init__(self, host, port, timeout=30):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.buf = b""
        hello = self._read()
        self.candidate = b"urn:ietf:params:netconf:capability:candidate:1.0" in hello
        self.sock.sendall(HELLO)
        self.msg_id = 0

    def _read(self):
        while EOM not in self.buf:
            data = self.sock.recv(65536)
            if not data:
                raise OSError("the device closed the session")
            self.buf += data
        msg, _, self.buf = self.buf.partition(EOM)
        return msg

    def rpc(self, body):
        self.msg_id += 1
        self.sock.sendall(('<rpc message-id="%d" xmlns="%s">%s</rpc>' % (self.msg_id, NC_NS, body)).encode()
                          + EOM)
        return self._read().decode(errors="replace")

    def edit(self, config):
        """edit-config (and commit with :candidate); @return None or the rpc-reply that carried an error."""
        target = "candidate" if self.candidate else "running"
        reply = self.rpc("<edit-config><target><%s/></target><config>%s</config></edit-config>" % (target, config))
        if "<rpc-error" in reply:
            return reply
        if self.candidate:
            reply = self.rpc("<commit/>")
            if "<rpc-error" in reply:
                return reply
        return None

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def node_field(node, name):
    """A node's leaf, flat ("netconf-node-topology:host") or in a netconf-node container."""
    for key, value in node.items():
        if key.split(":")[-1] == name:
            return value
        if isinstance(value, dict) and key.split(":")[-1] == "netconf-node":
            found = node_field(value, name)
            if found is not None:
                return found
    return None


class HttpServer(ThreadingHTTPServer):
    """Python's threading HTTP server with a listen backlog for a load test: its default of 5 pending
    connections resets or delays (SYN retries of 1 s, 3 s ...) most of 100 clients connecting at once."""
    request_queue_size = 1024
    daemon_threads = True


class MountEdits:
    """What a POST or PUT to .../node=<id>/yang-ext:mount/<path> becomes: an edit-config on the device behind
    the node, over one kept-open plain-TCP session per device. @node_address(node_id) gives a registered
    node's (host, port), or None; otherwise "<port>-sim-device" is the device at @device_host:<port>."""

    def __init__(self, auth, node_address, device_host="127.0.0.1", fail_every=0, fail_forward=False,
                 close_after=None):
        self.auth = auth
        self.node_address = node_address
        self.device_host = device_host  # where "<port>-sim-device" nodes that were not registered are
        self.fail_every = fail_every    # answer 500 to every n-th edit (0: never)
        self.fail_forward = fail_forward  # and forward that edit to the device first
        self.close_after = close_after  # from the edit after this many on, close without answering
        self.lock = threading.Lock()
        self.edits = []        # every edit request: {"method", "node", "path", "content_type", "auth", "body"}
        self.answered = {}     # HTTP status -> edits answered with it
        self.sessions = {}     # (host, port) -> [DeviceSession, threading.Lock, (host, port)]

    def _session(self, node_id):
        """The device behind @node_id: [DeviceSession or None, lock, key], or None when unknown."""
        key = self.node_address(node_id)
        if key is None:
            m = re.match(r"^([0-9]+)-sim-device$", node_id)
            if not m:
                return None
            key = (self.device_host, int(m.group(1)))
        with self.lock:
            return self.sessions.setdefault(key, [None, threading.Lock(), key])

    def edit(self, method, node_id, path, content_type, auth, body):
        """One edit request; @return the HTTP status, or None to close the connection unanswered."""
        with self.lock:
            self.edits.append({"method": method, "node": node_id, "path": path, "content_type": content_type,
                               "auth": auth, "body": body.decode(errors="replace")})
            n = len(self.edits)
        if self.close_after is not None and n > self.close_after:
            return None
        if auth != self.auth:
            return self._count(401)
        fail = self.fail_every and n % self.fail_every == 0
        if fail and not self.fail_forward:
            return self._count(500)
        entry = self._session(node_id)
        if entry is None:
            return self._count(404)
        try:
            config = mount_config(path, body, content_type)
        except (ValueError, UnicodeDecodeError):
            return self._count(400)
        with entry[1]:
            try:
                if entry[0] is None:
                    entry[0] = DeviceSession(*entry[2])
                error = entry[0].edit(config)
            except OSError:
                if entry[0]:
                    entry[0].close()
                entry[0] = None
                return self._count(503)
        if fail:
            return self._count(500)
        if error:
            return self._count(400)
        return self._count(201 if method == "POST" else 204)

    def _count(self, code):
        with self.lock:
            self.answered[code] = self.answered.get(code, 0) + 1
        return code

    def reply(self, handler, method):
        """Answer the request @handler (a BaseHTTPRequestHandler with _reply) holds as an edit."""
        body = handler.rfile.read(int(handler.headers.get("Content-Length", 0)))
        m = MOUNT_PATH.match(handler.path)
        if not m:
            return handler._reply(404)
        code = self.edit(method, m.group(1), m.group(2), handler.headers.get("Content-Type", ""),
                         handler.headers.get("Authorization"), body)
        if code is None:  # closing mid-run: no answer, the connection goes
            handler.close_connection = True
            return
        if code in (201, 204):
            return handler._reply(code)
        handler._reply(code, json.dumps({"errors": {"error": [{"error-tag": "operation-failed",
                                                              "error-message": "stand-in %d" % code}]}}
                                        ).encode())

    def close(self):
        for entry in list(self.sessions.values()):
            if entry[0]:
                entry[0].close()


class Controller:
    def __init__(self, port, username="admin", password="admin", concurrency=200, host="127.0.0.1",
                 device_host="127.0.0.1", fail_every=0, fail_forward=False, close_after=None,
                 reconnect_delay=2.0, reconnect_factor=1.5, reconnect_max_delay=30.0, max_attempts=5,
                 keepalive_s=None):
        self.reconnect_delay = reconnect_delay          # seconds before the first reconnect attempt
        self.reconnect_factor = reconnect_factor        # each next delay is the last times this
        self.reconnect_max_delay = reconnect_max_delay  # and at most this
        self.max_attempts = max_attempts                # failed attempts before unable-to-connect
        self.keepalive_s = keepalive_s                  # a <get> this often on each session, None: none
        self.losses = 0        # sessions lost (and reconnected or being reconnected)
        self.reconnects = 0    # sessions connected again
        self.auth = "Basic " + base64.b64encode(("%s:%s" % (username, password)).encode()).decode()
        self.concurrency = concurrency
        self.lock = threading.Lock()
        self.nodes = {}        # node-id -> {"host", "port", "status"}
        self.patches = 0       # registration requests taken
        self.first_patch = None
        self.all_connected_at = None
        self.writers = []      # open sessions, kept until stop()
        self.mount = MountEdits(self.auth, self._registered_address, device_host, fail_every, fail_forward,
                                close_after)
        self.edits = self.mount.edits        # every edit request taken
        self.answered = self.mount.answered  # HTTP status -> edits answered with it
        self.loop = asyncio.new_event_loop()
        self.queue = None
        self.loop_thread = threading.Thread(target=self._run_loop, daemon=True)
        self.loop_thread.start()
        controller = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _reply(self, code, body=b"", ctype="application/yang-data+json"):
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except OSError:  # the client went away (a run that ended)
                    self.close_connection = True

            def do_PATCH(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.headers.get("Authorization") != controller.auth:
                    return self._reply(401, b'{"errors":{"error":[{"error-tag":"access-denied"}]}}')
                if self.path != TOPOLOGY_PATH:
                    return self._reply(404)
                try:
                    doc = json.loads(body)
                    nodes = doc["network-topology:topology"][0]["node"]
                except (ValueError, KeyError, IndexError, TypeError):
                    return self._reply(400, b'{"errors":{"error":[{"error-tag":"malformed-message"}]}}')
                controller.register(nodes)
                self._reply(200)

            def do_POST(self):
                controller.mount.reply(self, "POST")

            def do_PUT(self):
                controller.mount.reply(self, "PUT")

            def do_GET(self):
                if self.headers.get("Authorization") != controller.auth:
                    return self._reply(401)
                if self.path.split("?")[0] != TOPOLOGY_PATH:
                    return self._reply(404)
                self._reply(200, json.dumps(controller.topology()).encode())

        self.http = HttpServer((host, port), Handler)
        self.http_thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.http_thread.start()

    def _registered_address(self, node_id):
        with self.lock:
            node = self.nodes.get(node_id)
            return (node["host"], node["port"]) if node else None

    def _run_loop(self):
        asyncio.set_event_loop(self.loop)
        self.queue = asyncio.Queue()
        for _ in range(self.concurrency):
            self.loop.create_task(self._mounter())
        self.loop.run_forever()

    def register(self, nodes):
        with self.lock:
            self.patches += 1
            self.first_patch = self.first_patch or time.monotonic()
            for n in nodes:
                node_id = n["node-id"]
                if node_id in self.nodes:
                    continue
                self.nodes[node_id] = {"host": node_field(n, "host"), "port": int(node_field(n, "port")),
                                       "status": "connecting"}
                self.loop.call_soon_threadsafe(self.queue.put_nowait, node_id)

    async def _connect(self, node):
        """One mount attempt: (reader, writer) of a session past the hello, or None."""
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(node["host"], node["port"]), 30)
        except (OSError, asyncio.TimeoutError):
            return None
        try:
            await asyncio.wait_for(reader.readuntil(EOM), 30)
            writer.write(HELLO)
            await writer.drain()
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            writer.close()
            return None
        return reader, writer

    def _set_status(self, node, status):
        with self.lock:
            node["status"] = status
            if all(n["status"] == "connected" for n in self.nodes.values()):
                self.all_connected_at = time.monotonic()

    async def _mounter(self):
        while True:
            node_id = await self.queue.get()
            node = self.nodes[node_id]
            session = await self._connect(node)
            self._set_status(node, "connected" if session else "unable-to-connect")
            if session:
                self.loop.create_task(self._watch(node, *session))

    async def _watch(self, node, reader, writer):
        """Keep a mounted node's session: on its loss, back to connecting and reconnect with backoff."""
        while True:
            self.writers.append(writer)
            await self._until_lost(reader, writer)
            writer.close()
            if writer in self.writers:
                self.writers.remove(writer)
            with self.lock:
                self.losses += 1
            self._set_status(node, "connecting")
            delay, failed = self.reconnect_delay, 0
            while True:
                await asyncio.sleep(delay)
                session = await self._connect(node)
                if session:
                    break
                failed += 1
                if failed >= self.max_attempts:
                    self._set_status(node, "unable-to-connect")
                delay = min(delay * self.reconnect_factor, self.reconnect_max_delay)
            reader, writer = session
            with self.lock:
                self.reconnects += 1
            self._set_status(node, "connected")

    async def _until_lost(self, reader, writer):
        """Return when the session ends: EOF or an error on read, or (keepalive_s) a keepalive unanswered."""
        msg_id = 0
        while True:
            try:
                if self.keepalive_s:
                    msg_id += 1
                    writer.write(('<rpc message-id="ka-%d" xmlns="%s"><get><filter type="subtree">'
                                  '<netconf-state xmlns="urn:ietf:params:xml:ns:yang:ietf-netconf-monitoring">'
                                  '<sessions/></netconf-state></filter></get></rpc>' % (msg_id, NC_NS)).encode()
                                 + EOM)
                    await writer.drain()
                    await asyncio.wait_for(reader.readuntil(EOM), 2 * self.keepalive_s)
                    await asyncio.sleep(self.keepalive_s)
                else:
                    if not await reader.read(65536):
                        return
            except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
                return

    def topology(self):
        with self.lock:
            nodes = [{"node-id": k, "netconf-node-topology:netconf-node": {
                "host": v["host"], "port": v["port"], "connection-status": v["status"]}}
                for k, v in self.nodes.items()]
        return {"network-topology:topology": [{"topology-id": "topology-netconf", "node": nodes}]}

    def counts(self):
        with self.lock:
            out = {"connected": 0, "connecting": 0, "unable-to-connect": 0}
            for n in self.nodes.values():
                out[n["status"]] += 1
            return out

    def stop(self):
        self.http.shutdown()
        self.http.server_close()
        self.mount.close()

        def close_all():
            for w in self.writers:
                w.close()
            for task in asyncio.all_tasks(self.loop):
                task.cancel()
            self.loop.call_soon(self.loop.stop)  # after the cancelled tasks have run their last step
        self.loop.call_soon_threadsafe(close_all)
        self.loop_thread.join(10)
        self.loop.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=18181)
    ap.add_argument("--concurrency", type=int, default=200)
    args = ap.parse_args()
    c = Controller(args.port, concurrency=args.concurrency)
    print("fake controller on 127.0.0.1:%d%s" % (args.port, TOPOLOGY_PATH), flush=True)
    try:
        while True:
            time.sleep(5)
            print(c.counts(), flush=True)
    except KeyboardInterrupt:
        c.stop()


if __name__ == "__main__":
    main()
